//! The structural rules slicing adds to programs: several launches may write
//! one buffer only by storing into regions of it before anything reads it,
//! and a program with offset loads checks every launch's extents at each
//! call, so even a malformed slice read from text cannot read outside a
//! buffer.

use oxla_core::exec::InterpLauncher;
use oxla_core::kernel::fusion::fuse;
use oxla_core::ops::slicing::concatenate;
use oxla_core::*;

fn concat_then_sum() -> Function {
    let mut f = Function::new("concat_then_sum");
    let v = Type::new(DType::F64, Shape::vector(Dim::sym("n")));
    let a = f.add_param("a", v.clone());
    let b = f.add_param("b", v);
    let c = concatenate(&mut f, &[a, b], 0);
    let s = f.reduce_sum(c, vec![0]);
    f.outs = vec![c, s];
    f
}

#[test]
fn region_writes_are_allowed_only_before_a_read() {
    let p = fuse(&concat_then_sum()).unwrap();
    p.check_schedule().unwrap();
    // Launches: the two parts of the concatenation, then the sum reading it.
    assert_eq!(p.launches.len(), 3);
    let region = |l: usize| p.kernels[p.launches[l].kernel].region().is_some();
    assert!(region(0) && region(1) && !region(2));
    // A part written again after the sum read the buffer: rejected.
    let mut late = p.clone();
    late.launches.push(late.launches[1].clone());
    let e = late.check_schedule().unwrap_err();
    assert!(e.contains("written elsewhere"), "{e}");
    // A whole-buffer (non-region) kernel writing a buffer twice: rejected.
    let mut twice = p.clone();
    twice.launches.push(twice.launches[2].clone());
    assert!(twice.check_schedule().is_err());
}

#[test]
fn a_malformed_slice_is_an_error_not_a_read_past_the_buffer() {
    // The stated result [n] from start 2 reads two elements past `x`; the
    // shape rule cannot tell for a symbolic `n`.
    let src = "fn bad(x %0: f64[n]) {\n  %1: f64[n] = slice[2;1] %0\n  return %1\n}\n";
    let f = text::parse(src).unwrap();
    let p = fuse(&f).unwrap();
    p.check_schedule().unwrap();
    let x = Buffer::from_f64(DType::F64, &[1.0, 2.0, 3.0]);
    let e = p.run(&InterpLauncher(&p.kernels), &[x]).unwrap_err();
    assert!(e.contains("needs 5 elements"), "{e}");
}
