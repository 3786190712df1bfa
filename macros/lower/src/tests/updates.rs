//! Writes into `let mut` arrays: their IR (selects, no new op; a loop that
//! writes `hs[t] = h` stays one loop op carrying `hs`), values with the
//! reference op rules against the same writes in plain Rust, and errors.

use crate::tests::{dump, eval};
use crate::tests::{lower, lower_errors as errors};
use oxla_core::Op;
use quote::quote;

#[test]
fn a_loop_writing_its_states_is_one_loop_op_carrying_them() {
    let f = lower(quote! {
        fn f(x: &[f64]) -> f64 {
            let mut h = 0.0;
            let mut hs = zeros(x.len());
            for t in 0..x.len() {
                h = (h + x[t]).tanh();
                hs[t] = h;
            }
            hs.sum()
        }
    });
    let loops: Vec<&oxla_core::Eqn> = f
        .eqns
        .iter()
        .filter(|e| matches!(e.op, Op::Loop(_)))
        .collect();
    assert_eq!(loops.len(), 1, "{}", dump(&f));
    // Two carries (h, hs); the write is a select in the body.
    assert_eq!(loops[0].outs.len(), 2, "{}", dump(&f));
    let Op::Loop(l) = &loops[0].op else {
        unreachable!()
    };
    assert!(
        l.body.eqns.iter().any(|e| matches!(e.op, Op::Select)),
        "{}",
        dump(&l.body)
    );
    let x = [0.3, -1.2, 0.8, 2.0];
    let mut h: f64 = 0.0;
    let mut want = 0.0;
    for v in x {
        h = (h + v).tanh();
        want += h;
    }
    let got = eval(&f, &[x.to_vec()])[0][0];
    assert!((got - want).abs() <= 1e-14, "{got} vs {want}");
}

#[test]
fn element_and_slice_writes_match_plain_rust() {
    let f = lower(quote! {
        fn f(x: [f64; 5], i: usize) -> Array1<f64> {
            let mut y = x;
            y[i] = 7.0;
            y[[0]] += 1.0;
            y[1] *= -2.0;
            y.slice_mut(s![2..4]).assign(&(x.slice(s![..2]) * 10.0));
            y
        }
    });
    let x = vec![0.5, 1.5, 2.5, 3.5, 4.5];
    let got = eval(&f, &[x.clone(), vec![4.0]]);
    let mut want = x.clone();
    want[4] = 7.0;
    want[0] += 1.0;
    want[1] *= -2.0;
    want[2] = x[0] * 10.0;
    want[3] = x[1] * 10.0;
    assert_eq!(got[0], want);
}

#[test]
fn unsupported_writes_are_one_spanned_error_each() {
    let m = errors(quote! {
        fn f(x: &[f64], i: usize) -> f64 {
            let y = x.to_owned();
            y[i] = 1.0;
            y.sum()
        }
    });
    assert_eq!(m.len(), 1, "{m:#?}");
    assert!(m[0].contains("declare it `let mut y`"), "{m:#?}");
    let m = errors(quote! {
        fn f(x: &[f64], i: usize) -> f64 {
            let mut y = x.to_owned();
            y[[i, i]] = 1.0;
            y.sum()
        }
    });
    assert_eq!(m.len(), 1, "{m:#?}");
    assert!(
        m[0].contains("2 indices for `y`, an array of rank 1"),
        "{m:#?}"
    );
    let m = errors(quote! {
        fn f(x: &[f64], idx: &[i64]) -> f64 {
            let mut y = x.to_owned();
            y[idx] = 1.0;
            y.sum()
        }
    });
    assert_eq!(m.len(), 1, "{m:#?}");
    assert!(
        m[0].contains("writing at an array of indices is not supported"),
        "{m:#?}"
    );
}
