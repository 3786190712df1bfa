//! Unit tests of the slicing vocabulary: the shapes `s![..]`, concatenate
//! and stack lower to (derived sizes on run-time axes, constants on static
//! ones) and their errors.

use crate::tests::{lower, lower_errors as errors};
use oxla_core::Function;
use quote::quote;

fn out_shape(f: &Function, i: usize) -> String {
    f.shape(f.outs[i]).to_string()
}

#[test]
fn two_slices_of_one_axis_have_one_derived_length() {
    let f = lower(quote! {
        fn d(x: &[f64]) -> Vec<f64> { x.slice(s![1..]) - x.slice(s![..-1]) }
    });
    assert_eq!(out_shape(&f, 0), "[(n_x:0:e-1:1)]");
}

#[test]
fn static_axes_give_constant_shapes() {
    let f = lower(quote! {
        fn w(x: [[f64; 7]; 4]) -> (Array1<f64>, Array2<f64>, Array3<f64>, Array1<f64>) {
            (
                x.slice(s![-1, 1..;2]),
                x.slice(s![..=1, -3..]),
                x.slice(s![NewAxis, 1..3, ..;3]),
                x.slice(s![2, ..]),
            )
        }
    });
    let shapes: Vec<String> = (0..4).map(|i| out_shape(&f, i)).collect();
    assert_eq!(shapes, ["[3]", "[2,3]", "[1,2,3]", "[7]"]);
}

#[test]
fn concatenations_sum_their_lengths_and_stack_adds_an_axis() {
    let f = lower(quote! {
        fn c(a: &[f64], b: &[f64]) -> (Vec<f64>, Array2<f64>) {
            (concatenate(Axis(0), &[a.view(), b.view(), a.view()]), stack![Axis(1), a, b])
        }
    });
    // `stack` unified `n_b` with `n_a`, after the concatenation was built.
    assert_eq!(out_shape(&f, 0), "[(n_a+n_a+n_a)]");
    assert_eq!(out_shape(&f, 1), "[n_a,2]");
}

#[test]
fn bad_slices_are_spanned_errors_naming_what_is_supported() {
    let e = errors(quote! {
        fn e(x: [f64; 3], y: &[f64]) -> f64 {
            x.slice(s![1..5]).sum() + y.slice(s![-2..1]).sum() + y.slice(s![x]).sum()
        }
    });
    assert_eq!(e.len(), 3, "{e:?}");
    assert!(
        e[0].contains("out of range for an axis of size 3"),
        "{}",
        e[0]
    );
    assert!(
        e[1].contains("counted from the end to one counted from the start"),
        "{}",
        e[1]
    );
    assert!(
        e[2].contains("an integer literal or an integer scalar known at run time"),
        "{}",
        e[2]
    );
}

/// Issue 20: an integer index on an axis of run-time size left a derived
/// length `(m_1:1:2:1)` that the reshape dropping the axis refused ("cannot
/// reshape f64[m_0,(m_1:1:2:1)] to [m_0]"). The axis is summed away (one
/// term), and its derived length stays in the program, so the call checks
/// the index against the argument.
#[test]
fn an_index_on_a_run_time_axis_removes_it() {
    let f = lower(quote! {
        fn p(m: ArrayView2<f64>) -> (Array1<f64>, Array1<f64>, Array1<f64>, Array2<f64>) {
            (m.slice(s![.., 1]), m.slice(s![0, ..]), m.slice(s![1, 2..]), m.slice(s![NewAxis, -1, ..]))
        }
    });
    let shapes: Vec<String> = (0..4).map(|i| out_shape(&f, i)).collect();
    assert_eq!(shapes, ["[m_0]", "[m_1]", "[(m_1:0:e-2:1)]", "[1,m_1]"]);
    let text = oxla_core::text::print(&f);
    assert!(text.contains("(m_1:1:2:1)"), "{text}");
    assert!(text.contains("(m_0:1:2:1)"), "{text}");
}

/// Issue 20: after an error in the receiver, `x.slice(s![..])` was also
/// reported as an unknown method and `s!` as an unsupported macro.
#[test]
fn a_slice_of_a_bad_receiver_reports_the_receiver_only() {
    let e = errors(quote! {
        fn e(m: ArrayView2<f64>) -> f64 {
            (m + nowhere).slice(s![.., 1]).sum() + m.foo().slice_axis(Axis(0), Slice::from(1..)).sum()
        }
    });
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(
        e.iter()
            .all(|m| !m.contains("`slice") && !m.contains("macro")),
        "{e:?}"
    );
}
