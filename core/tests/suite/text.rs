//! The text form: print → parse → print round trips for every catalog
//! function and every transform's output; `verify` accepts them all; parse
//! rejects malformed text.

use crate::common;

use common::*;
use oxla_core::text::{parse, print};
use oxla_core::transforms::{grad, jvp, simplify, value_and_grad, vjp, vmap};
use oxla_core::*;

/// Every catalog function (symbolic and fixed shapes) and its transforms.
fn all_functions() -> Vec<Function> {
    let mut fs = Vec::new();
    for n in [Dim::sym("n"), Dim::Const(4)] {
        for c in catalog(&n) {
            let f = c.f;
            let np = f.params.len();
            let wrt: Vec<usize> = (0..np).collect();
            let g = weighted_sum(&f);
            fs.push(jvp(&f));
            fs.push(vjp(&f));
            fs.push(simplify(&f));
            fs.push(vmap(&f, &vec![Some(0); np]).unwrap());
            fs.push(grad(&g, &wrt).unwrap());
            fs.push(value_and_grad(&g, &wrt).unwrap());
            fs.push(vmap(&grad(&g, &wrt).unwrap(), &vec![Some(0); g.params.len()]).unwrap());
            fs.push(g);
            fs.push(f);
        }
    }
    fs
}

#[test]
fn round_trip_every_function() {
    let fs = all_functions();
    assert!(fs.len() > 500);
    for f in &fs {
        let t = print(f);
        let back = parse(&t).unwrap_or_else(|e| panic!("parse of `{}`: {e}\n{t}", f.name));
        assert_eq!(print(&back), t, "text of `{}` changes", f.name);
        assert_eq!(&back, f, "`{}` parses to a different function\n{t}", f.name);
    }
}

#[test]
fn verify_accepts_every_transform_output() {
    for f in all_functions() {
        verify::verify(&f).unwrap_or_else(|e| panic!("`{}`: {e}\n{}", f.name, print(&f)));
    }
}

#[test]
fn literals_round_trip() {
    for v in [
        0.1,
        -0.0,
        1.0 / 3.0,
        1e-300,
        5e-324,
        f64::MAX,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -2.5e17,
        f64::NAN,
    ] {
        let f = build("lit", &[("x", Shape::scalar())], |f, p| {
            let l = f.literal(v, F);
            vec![f.mul(p[0], l)]
        });
        let t = print(&f);
        let back = parse(&t).unwrap_or_else(|e| panic!("literal {v:?}: {e}\n{t}"));
        assert_eq!(print(&back), t);
        let Op::Literal { value, dtype } = &back.eqns[0].op else {
            panic!("{t}")
        };
        assert_eq!(*dtype, F);
        assert_eq!(value.to_bits(), v.to_bits(), "literal {v:?}");
    }
}

/// The example of the text module's documentation, evaluated against a
/// plain f32 loop.
#[test]
fn golden_example() {
    let src = "fn f(x %0: f32[n], y %1: f32[]) {
  %2: f32[n] = broadcast[] %1
  %3: f32[n] = mul %0 %2
  %4: f32[] = reduce_sum[0] %3
  return %4
}
";
    let f = parse(src).unwrap();
    assert_eq!(print(&f), src);
    assert_eq!(f.param_names, vec!["x", "y"]);
    let xs = [1.5f32, -0.25, 3.0, 0.1];
    let y = 0.3f32;
    let mut want = 0f32;
    for x in xs {
        want += x * y;
    }
    let xs64: Vec<f64> = xs.iter().map(|v| *v as f64).collect();
    let out = eval(
        &f,
        &[
            Tensor::vector(DType::F32, &xs64),
            Tensor::scalar(DType::F32, y as f64),
        ],
    );
    assert_eq!(out[0].data, vec![want as f64]);
}

#[test]
fn parse_renumbers_values_densely() {
    let src = "fn g(a %7: f64[3]) {
  %12: f64[3] = sin %7
  %3: f64[3] = mul %12 %7
  return %3, %12
}";
    let f = parse(src).unwrap();
    let want = build("g", &[("a", Shape(vec![Dim::Const(3)]))], |f, p| {
        let s = f.unary(ops::elementwise::UnaryOp::Sin, p[0]);
        vec![f.mul(s, p[0]), s]
    });
    assert_eq!(f, want);
}

#[test]
fn parse_rejects_malformed_text() {
    let head = "fn f(x %0: f64[n], s %1: f64[]) {\n";
    let body = |lines: &str| format!("{head}{lines}\n  return %0\n}}\n");
    let cases: Vec<(&str, String)> = vec![
        ("empty", String::new()),
        ("no fn", "func f(x %0: f64[n]) {\n  return %0\n}".into()),
        ("no parens", "fn f {\n  return\n}".into()),
        ("bad dtype", "fn f(x %0: f65[n]) {\n  return %0\n}".into()),
        (
            "type without brackets",
            "fn f(x %0: f64) {\n  return %0\n}".into(),
        ),
        (
            "param without value",
            "fn f(x: f64[n]) {\n  return\n}".into(),
        ),
        ("unknown op", body("  %2: f64[n] = frobnicate %0")),
        ("unknown value", body("  %2: f64[n] = sin %9")),
        ("wrong result type", body("  %2: f64[] = sin %0")),
        ("wrong dtype", body("  %2: f32[n] = sin %0")),
        ("too few operands", body("  %2: f64[n] = add %0")),
        ("too many operands", body("  %2: f64[n] = neg %0 %0")),
        ("operand shapes differ", body("  %2: f64[n] = add %0 %1")),
        ("bad powi", body("  %2: f64[n] = powi[x] %0")),
        ("unclosed bracket", body("  %2: f64[n] = powi[2 %0")),
        ("bad literal", body("  %2: f64[] = literal[one]")),
        ("bad broadcast dims", body("  %2: f64[n] = broadcast[1] %1")),
        ("bad reduce axes", body("  %2: f64[] = reduce_sum[1] %0")),
        ("dot of scalars", body("  %2: f64[] = dot %1 %1")),
        (
            "select without bool",
            body("  %2: f64[n] = select %0 %0 %0"),
        ),
        ("no `=`", body("  %2: f64[n] sin %0")),
        ("no type", body("  %2 = sin %0")),
        (
            "argument on an op without one",
            body("  %2: f64[n] = sin[3] %0"),
        ),
        (
            "negative dimension",
            "fn f(x %0: f64[-1]) {\n  return %0\n}".into(),
        ),
        (
            "space in a dimension",
            "fn f(x %0: f64[n m]) {\n  return %0\n}".into(),
        ),
        (
            "value defined twice",
            body("  %2: f64[n] = sin %0\n  %2: f64[n] = cos %0"),
        ),
        (
            "param value twice",
            "fn f(x %0: f64[n], y %0: f64[n]) {\n  return %0\n}".into(),
        ),
        ("missing `}`", format!("{head}  return %0\n")),
        (
            "text after `}`",
            format!("{head}  return %0\n}}\ngarbage\n"),
        ),
        (
            "unknown return value",
            format!("{head}  %2: f64[n] = sin %0\n  return %5\n}}\n"),
        ),
    ];
    for (what, src) in cases {
        assert!(parse(&src).is_err(), "{what}: parsed\n{src}");
    }
}

#[test]
fn verify_rejects_broken_functions() {
    let good = fused_sum(&Dim::sym("n"));
    verify::verify(&good).unwrap();

    let mut f = good.clone();
    f.eqns.swap(0, 1); // a use before its definition
    assert!(verify::verify(&f).is_err());

    let mut f = good.clone();
    let t = f.eqns[2].out().index();
    f.types[t] = Type::new(DType::F32, Shape::vector(Dim::sym("n"))); // wrong type
    assert!(verify::verify(&f).is_err());

    let mut f = good.clone();
    let e = f.eqns[3].clone();
    f.eqns.push(e); // defined twice
    assert!(verify::verify(&f).is_err());

    let mut f = good.clone();
    let p = f.params[0];
    f.params.push(p);
    f.param_names.push("again".into()); // a param twice
    assert!(verify::verify(&f).is_err());

    let mut f = good.clone();
    f.param_names.pop(); // a name missing
    assert!(verify::verify(&f).is_err());

    let mut f = good.clone();
    let v = f.fresh(Type::scalar(F));
    f.outs.push(v); // an output never defined
    assert!(verify::verify(&f).is_err());
}
