//! The function boundary: `as` casts in bodies (against Rust's own `as` on
//! the same values, NaN, infinities and out-of-range included), integer and
//! bool scalar parameters, bool and integer results, on the straight-line
//! scalar path and on the kernels.

use oxla::ndarray::{array, Array1, Array2, ArrayView1, ArrayView2};
use oxla::{grad, jit, value_and_grad};

/// Values that probe every rule of a float → integer `as`: truncation
/// toward zero, saturation at both ends, NaN → 0, ±inf, ±0.
fn probes_f32() -> Vec<f32> {
    vec![
        0.0,
        -0.0,
        0.4,
        -0.4,
        0.5,
        1.5,
        -1.5,
        2.9999,
        -2.9999,
        123456.78,
        -123456.78,
        2147483520.0,
        2147483648.0,
        -2147483648.0,
        -2147483904.0,
        3.0e9,
        -3.0e9,
        9.3e18,
        -9.3e18,
        1.0e30,
        -1.0e30,
        f32::MAX,
        f32::MIN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::MIN_POSITIVE,
        1.0e-40,
    ]
}

// ---- scalars: straight-line Rust ----

#[jit]
fn to_i32(x: f32) -> i32 {
    x as i32
}

#[jit]
fn to_i64_scaled(x: f64) -> i64 {
    (x * 10.0) as i64
}

#[jit]
fn index_scale(x: f32, n: usize, k: i32, m: u32, j: i64) -> f32 {
    x * (n as f32) + (k as f32) - (m as f32) / (j as f32)
}

#[jit]
fn is_less(a: f64, b: f64) -> bool {
    a < b
}

#[jit]
fn pick_by_flag(flag: bool, a: f32, b: f32) -> f32 {
    if flag {
        a
    } else {
        b
    }
}

#[jit]
fn flag_as_float(flag: bool) -> f64 {
    flag as i32 as f64
}

#[jit]
fn round_trip(x: f32) -> f32 {
    ((x * 10.0) as i32) as f32 / 10.0
}

#[grad(d_scaled_by_count)]
fn scaled_by_count(x: f64, n: usize) -> f64 {
    x * x * (n as f64)
}

#[test]
fn scalar_casts_are_rusts_as() {
    for x in probes_f32() {
        assert_eq!(to_i32(x), x as i32, "{x} as i32");
        let y = x as f64;
        assert_eq!(to_i64_scaled(y), (y * 10.0) as i64, "{y} * 10 as i64");
        let want = ((x * 10.0) as i32) as f32 / 10.0;
        assert_eq!(round_trip(x).to_bits(), want.to_bits(), "round trip {x}");
    }
}

#[test]
fn integer_and_bool_scalar_parameters() {
    let got = index_scale(1.5, 7, -3, 4, 8);
    assert_eq!(got, 1.5 * 7.0 + -3.0 - 4.0 / 8.0);
    assert!(is_less(1.0, 2.0));
    assert!(!is_less(2.0, 1.0));
    assert!(!is_less(f64::NAN, 1.0));
    assert_eq!(pick_by_flag(true, 1.0, 2.0), 1.0);
    assert_eq!(pick_by_flag(false, 1.0, 2.0), 2.0);
    assert_eq!(flag_as_float(true), 1.0);
    assert_eq!(flag_as_float(false), 0.0);
}

/// An integer parameter first: the generated function's float type is
/// still the float parameters'.
#[grad(d_int_first)]
fn int_first(_n: i32, x: f32) -> f32 {
    x * x
}

#[grad(d_labels_first)]
fn labels_first(labels: &[i64], x: &[f64]) -> f64 {
    (x * labels.mapv(|v| v as f64)).sum()
}

#[test]
fn integer_parameters_are_not_differentiated() {
    assert_eq!(d_int_first(7, 1.5), 3.0);
    assert_eq!(d_labels_first(&[2, -3], &[0.5, 0.25]), vec![2.0, -3.0]);
    // The default `wrt` skips `n`: the gradient is d/dx only.
    let g: f64 = d_scaled_by_count(3.0, 5);
    assert_eq!(g, 2.0 * 3.0 * 5.0);
}

// ---- arrays: kernels ----

#[jit]
fn cast_labels(labels: ArrayView1<i32>) -> Array1<f32> {
    labels.mapv(|v| v as f32)
}

#[jit]
fn quantize(x: ArrayView1<f32>) -> Array1<i32> {
    (x * 10.0).mapv(|v| v as i32)
}

#[jit]
fn quantize64(x: &[f64]) -> Vec<i64> {
    x.mapv(|v| v as i64)
}

#[jit]
fn quantize_round_trip(x: ArrayView1<f32>) -> Array1<f32> {
    let q = (x * 10.0).mapv(|v: f32| v as i32);
    q.mapv(|v| v as f32) / 10.0
}

#[jit]
fn positive(x: ArrayView2<f64>) -> Array2<bool> {
    x > 0.0
}

#[jit]
fn less_than(a: ArrayView1<f32>, b: ArrayView1<f32>) -> (Array1<bool>, f32) {
    (a < b, (a - b).sum())
}

#[jit]
fn mask_count(mask: ArrayView1<bool>) -> f32 {
    mask.mapv(|b| b as i32).mapv(|v| v as f32).sum()
}

#[jit]
fn mask_to_int(x: ArrayView1<f32>) -> Array1<i64> {
    let m = x >= 1.0;
    m.mapv(|b| b as i64)
}

#[jit]
fn scale_by_count(x: ArrayView1<f32>, n: usize, k: i32) -> Array1<f32> {
    x * (n as f32) + (k as f32)
}

#[value_and_grad(cast_loss_and_grad, wrt = w)]
fn cast_loss(w: ArrayView1<f64>, x: ArrayView1<f64>, labels: ArrayView1<i64>, n: usize) -> f64 {
    let err = w * x - labels.mapv(|v| v as f64);
    (err * err).sum() / (n as f64)
}

#[test]
fn array_casts_are_rusts_as() {
    let labels = array![0i32, -5, 7, i32::MAX, i32::MIN];
    let want: Vec<f32> = labels.iter().map(|v| *v as f32).collect();
    assert_eq!(cast_labels(labels.view()).to_vec(), want);

    let x = Array1::from(probes_f32());
    let q = quantize(x.view());
    for (got, x) in q.iter().zip(&x) {
        assert_eq!(*got, (x * 10.0) as i32, "({x} * 10) as i32");
    }
    let r = quantize_round_trip(x.view());
    for (got, x) in r.iter().zip(&x) {
        let want = ((x * 10.0) as i32) as f32 / 10.0;
        assert_eq!(got.to_bits(), want.to_bits(), "round trip of {x}");
    }
    let x64: Vec<f64> = probes_f32()
        .into_iter()
        .map(f64::from)
        .chain([9.3e18, 9.3e20, -9.3e20, 4503599627370497.0])
        .collect();
    let q64 = quantize64(&x64);
    for (got, x) in q64.iter().zip(&x64) {
        assert_eq!(*got, *x as i64, "{x} as i64");
    }
}

#[test]
fn bool_results_and_parameters() {
    let x = array![[1.0, -2.0, 0.0], [f64::NAN, 3.0, -0.0]];
    let got = positive(x.view());
    assert_eq!(got, x.mapv(|v| v > 0.0));
    let (a, b) = (array![1.0f32, 2.0, 3.0], array![2.0f32, 2.0, f32::NAN]);
    let (lt, s) = less_than(a.view(), b.view());
    assert_eq!(lt.to_vec(), vec![true, false, false]);
    assert!(s.is_nan());
    let mask = array![true, false, true, true];
    assert_eq!(mask_count(mask.view()), 3.0);
    assert_eq!(
        mask_to_int(array![0.5f32, 1.0, 2.0].view()).to_vec(),
        vec![0i64, 1, 1]
    );
}

#[test]
fn integer_scalars_in_kernels() {
    let x = array![1.0f32, 2.0, -3.0];
    assert_eq!(
        scale_by_count(x.view(), 4, -1).to_vec(),
        vec![3.0, 7.0, -13.0]
    );
    let (w, xs) = (array![0.5, -1.0, 2.0], array![1.0, 2.0, 3.0]);
    let labels = array![1i64, -2, 5];
    let (l, g) = cast_loss_and_grad(&w, &xs, &labels, 3);
    let err: Vec<f64> = (0..3).map(|i| w[i] * xs[i] - labels[i] as f64).collect();
    let want: f64 = err.iter().map(|e| e * e).sum::<f64>() / 3.0;
    assert!((l - want).abs() < 1e-15, "{l} vs {want}");
    for i in 0..3 {
        let gi = 2.0 * err[i] * xs[i] / 3.0;
        assert!((g[i] - gi).abs() < 1e-15, "gradient {i}: {} vs {gi}", g[i]);
    }
}

#[test]
#[should_panic(expected = "argument `n` = 18446744073709551615 is above i64::MAX")]
fn a_usize_above_i64_max_panics() {
    let x = array![1.0f32];
    scale_by_count(x.view(), usize::MAX, 0);
}

// ---- results into the caller's buffers ----

#[value_and_grad(regression_and_grad, wrt = (w, b))]
fn regression(w: ArrayView1<f32>, b: f32, x: ArrayView2<f32>, y: ArrayView1<f32>) -> f32 {
    let err = x.dot(&w) + b - y;
    (err * err).mean()
}

#[jit]
fn two_of_one(x: ArrayView1<f64>) -> (Array1<f64>, f64, Array1<f64>) {
    let y = x * 2.0;
    (y, y.sum(), y)
}

#[jit]
fn passthrough(x: &[f64], s: f64) -> (Vec<f64>, f64) {
    (x, s * 2.0)
}

#[jit]
fn layer(x: ArrayView2<f64>, w: ArrayView2<f64>) -> Array2<f64> {
    x.dot(&w).tanh()
}

fn regression_data(n: usize, d: usize) -> (Array1<f32>, Array2<f32>, Array1<f32>) {
    let w = Array1::from_shape_fn(d, |i| 0.1 * i as f32 - 0.3);
    let x = Array2::from_shape_fn((n, d), |(i, j)| ((i * 7 + j * 3) % 11) as f32 / 11.0 - 0.5);
    let y = Array1::from_shape_fn(n, |i| (i % 5) as f32 - 2.0);
    (w, x, y)
}

#[test]
fn into_equals_the_allocating_form() {
    let (w, x, y) = regression_data(37, 5);
    let (l, gw, gb) = regression_and_grad(&w, 0.25, &x, &y);
    let mut gw_into = Array1::from_elem(5, f32::NAN);
    let (l2, gb2) = regression_and_grad_into(&w, 0.25, &x, &y, &mut gw_into);
    assert_eq!((l.to_bits(), gb.to_bits()), (l2.to_bits(), gb2.to_bits()));
    assert_eq!(gw, gw_into);
    // A view of a larger array, in standard layout, is written in place.
    let mut big = Array2::from_elem((3, 5), -1.0f32);
    regression_and_grad_into(&w, 0.25, &x, &y, big.row_mut(1));
    assert_eq!(big.row(1), gw);
    assert_eq!(big.row(0).to_vec(), vec![-1.0; 5]);

    // The original function's sibling, with a Vec result (a `&mut [T]`
    // destination) and an i64 one.
    let xs = vec![1.5, -2.7, f64::NAN, 1e300];
    let mut q = vec![7i64; 4];
    quantize64_into(&xs, &mut q);
    assert_eq!(q, quantize64(&xs));
    let mut q = Array1::zeros(3);
    quantize_into(array![0.26f32, -0.11, 9.99].view(), &mut q);
    assert_eq!(q.to_vec(), vec![2, -1, 99]);
    // bool results.
    let m = array![[1.0, -2.0], [0.0, 3.0]];
    let mut pos = Array2::from_elem((2, 2), false);
    positive_into(m.view(), &mut pos);
    assert_eq!(pos, positive(m.view()));
}

#[test]
fn into_handles_shared_and_passed_through_results() {
    let x = array![1.0, 2.0, -3.0];
    let (a, s, b) = two_of_one(x.view());
    let (mut a2, mut b2) = (Array1::zeros(3), Array1::zeros(3));
    let s2 = two_of_one_into(x.view(), &mut a2, &mut b2);
    assert_eq!((a, s, b), (a2, s2, b2));
    let mut out = vec![0.0; 3];
    let d = passthrough_into(&[4.0, 5.0, 6.0], 1.5, &mut out);
    assert_eq!((out, d), (vec![4.0, 5.0, 6.0], 3.0));
}

#[test]
fn a_destination_in_another_layout_is_written_through_a_temporary() {
    let x = Array2::from_shape_fn((4, 3), |(i, j)| (i as f64 - j as f64) * 0.3);
    let w = Array2::from_shape_fn((3, 5), |(i, j)| (i * j) as f64 * 0.1 - 0.2);
    let want = layer(x.view(), w.view());
    // A transposed destination: the (4, 5) result lands in a (5, 4) array.
    let mut t = Array2::from_elem((5, 4), f64::NAN);
    layer_into(x.view(), w.view(), t.view_mut().reversed_axes());
    assert_eq!(t.t(), want);
    // Every other column of a wider array.
    let mut wide = Array2::from_elem((4, 10), f64::NAN);
    layer_into(
        x.view(),
        w.view(),
        wide.slice_mut(oxla::ndarray::s![.., ..;2]),
    );
    assert_eq!(wide.slice(oxla::ndarray::s![.., ..;2]), want);
    assert!(wide
        .slice(oxla::ndarray::s![.., 1..;2])
        .iter()
        .all(|v| v.is_nan()));
}

#[test]
#[should_panic(expected = "destination `out` of `layer`: result 0 has shape [4, 5]")]
fn a_destination_of_the_wrong_shape_panics_naming_it() {
    let x = Array2::<f64>::zeros((4, 3));
    let w = Array2::<f64>::zeros((3, 5));
    let mut out = Array2::zeros((5, 4));
    layer_into(x.view(), w.view(), &mut out);
}

#[test]
#[should_panic(expected = "destination `out` of `quantize64`: result 0 has shape [4]")]
fn a_short_slice_destination_panics_naming_it() {
    let mut out = vec![0i64; 3];
    quantize64_into(&[1.0, 2.0, 3.0, 4.0], &mut out);
}

#[oxla::jvp(scaled_and_signs_jvp)]
fn scaled_and_signs(x: &[f64], n: usize) -> (Vec<f64>, Vec<bool>) {
    (x * (n as f64), x > 0.0)
}

#[test]
fn jvp_through_integer_and_bool_boundaries() {
    let x = [1.0, -2.0, 0.5];
    let out = scaled_and_signs_jvp(&x, 3, &[1.0, 0.0, 2.0]);
    assert_eq!(out.0, vec![3.0, -6.0, 1.5]);
    assert_eq!(out.1, vec![true, false, true]);
    assert_eq!(out.2, vec![3.0, 0.0, 6.0]);
}
