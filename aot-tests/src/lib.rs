//! Array functions covering every op family, compiled ahead of time by this
//! crate's `build.rs`. The tests in `tests/` call them, check that they ran on
//! the build script's kernels (at both ISA levels) and compare each result with
//! the reference interpreter on the same IR. Add a function here for every op
//! added to oxla.

use oxla::ndarray::Axis;
use oxla::{grad, jit, jvp, vjp, vmap};

/// Every unary op, in f32 (the vector loop and the scalar tail).
#[jit]
pub fn unary_f32(x: &[f32]) -> Vec<f32> {
    -x.exp() + x.ln() + x.sin() * x.cos() + x.tanh() + x.sqrt() + x.powi(3) - x.powi(-2)
        + x.exp_m1()
        + erf(x)
}

/// The math functions one by one, in f32, so that each is checked in ulp
/// against its documented bound (README "Numerics").
#[jit]
pub fn unary_each_f32(
    x: &[f32],
) -> (
    Vec<f32>,
    Vec<f32>,
    Vec<f32>,
    Vec<f32>,
    Vec<f32>,
    Vec<f32>,
    Vec<f32>,
    Vec<f32>,
) {
    (
        x.exp(),
        x.ln(),
        x.sin(),
        x.cos(),
        x.tanh(),
        x.sqrt(),
        x.exp_m1(),
        erf(x),
    )
}

/// Every unary op, in f64.
#[jit]
pub fn unary_f64(x: &[f64]) -> Vec<f64> {
    -x.exp() + x.ln() + x.sin() * x.cos() + x.tanh() + x.sqrt() + x.powi(3) - x.powi(-2)
        + x.exp_m1()
        + erf(x)
}

/// Rounding and sign, in f64: one output each, so each can be checked bit
/// for bit.
#[jit]
#[allow(clippy::type_complexity)]
pub fn rounding_f64(
    x: &[f64],
) -> (
    Vec<f64>,
    Vec<f64>,
    Vec<f64>,
    Vec<f64>,
    Vec<f64>,
    Vec<f64>,
    Vec<f64>,
) {
    (
        x.floor(),
        x.ceil(),
        x.trunc(),
        x.round(),
        x.round_ties_even(),
        x.signum(),
        sign(x),
    )
}

/// Rounding and sign, in f32.
#[jit]
#[allow(clippy::type_complexity)]
pub fn rounding_f32(
    x: &[f32],
) -> (
    Vec<f32>,
    Vec<f32>,
    Vec<f32>,
    Vec<f32>,
    Vec<f32>,
    Vec<f32>,
    Vec<f32>,
) {
    (
        x.floor(),
        x.ceil(),
        x.trunc(),
        x.round(),
        x.round_ties_even(),
        x.signum(),
        sign(x),
    )
}

/// Constructors (sizes from an argument and literal ones) and `where_`.
#[jit]
pub fn constructors_f64(x: &[f64], y: &[f64]) -> Vec<f64> {
    where_(x > y, x, y * 2.0) + arange(x.len()) * full(x.len(), 0.5) + ones(x.len())
        - zeros(x.len())
        + eye(4).sum()
}

/// sin and cos alone, for arguments of any size (huge ones take the slow
/// path of the range reduction).
#[jit]
pub fn trig_f32(x: &[f32]) -> (Vec<f32>, Vec<f32>) {
    (x.sin(), x.cos())
}

/// sin and cos in f64.
#[jit]
pub fn trig_f64(x: &[f64]) -> (Vec<f64>, Vec<f64>) {
    (x.sin(), x.cos())
}

/// Every binary op, a broadcast scalar, comparisons and a select.
#[jit]
pub fn binary_f64(x: &[f64], y: &[f64], s: f64) -> Vec<f64> {
    let a = (x + y) * s - x / y;
    let b = x.max(y) - x.min(y * s);
    if x > y {
        a
    } else {
        b
    }
}

/// The same in f32.
#[jit]
pub fn binary_f32(x: &[f32], y: &[f32], s: f32) -> Vec<f32> {
    let a = (x + y) * s - x / y;
    let b = x.max(y) - x.min(y * s);
    if x <= y {
        a
    } else {
        b
    }
}

/// Whole-array reductions: a fused sum and a dot product.
#[jit]
pub fn reductions_f32(x: &[f32], y: &[f32]) -> (f32, f32) {
    (sum(x * y + 1.0), dot(x, y))
}

/// The same in f64.
#[jit]
pub fn reductions_f64(x: &[f64], y: &[f64]) -> (f64, f64) {
    (sum(x * y + 1.0), dot(x, y))
}

/// Slices (a bound from the end, a step) and concatenations: loads at an
/// offset and stores into regions of the output.
#[jit]
pub fn slicing_f64(x: &[f64], y: &[f64]) -> (Vec<f64>, Vec<f64>, f64) {
    (
        x.slice(s![1..]) - x.slice(s![..-1]),
        concatenate![Axis(0), x.slice(s![..;2]), y.exp()],
        sum(concatenate![Axis(0), x, y] * 2.0),
    )
}

/// Its gradient: pads (a zero fill, then a strided region) and the slices
/// of a concatenation's cotangent.
#[jit]
#[grad(slicing_loss_grad, wrt = (x, y))]
pub fn slicing_loss(x: &[f64], y: &[f64]) -> f64 {
    let d = x.slice(s![1..;2]) - x.slice(s![..-1;2]);
    sum(d * d) + sum(concatenate![Axis(0), x, y].sin())
}

/// A gather (an indexed load fused into the elementwise chain) and its
/// gradient: a zero fill and a scatter-add, repeated indices accumulating.
#[jit]
#[grad(gather_loss_grad, wrt = x)]
pub fn gather_loss(x: &[f64], ids: &[i64]) -> f64 {
    let g = take(x, &ids, Axis(0));
    sum(g * g.sin())
}

/// Cumulative sums and products and a product, in f32: scan kernels and a
/// product reduction.
#[jit]
pub fn scans_f32(x: &[f32]) -> (Vec<f32>, Vec<f32>, f32) {
    (cumsum(x, Axis(0)), x.cumprod(Axis(0)), prod(x))
}

/// Their gradient in f64: scans in both directions (a transposed scan runs
/// the other way) and the exclusive products of `prod`'s derivative.
#[jit]
#[grad(scans_loss_grad)]
pub fn scans_loss(x: &[f64]) -> f64 {
    sum(x.cumsum(Axis(0)) * cumprod(x, Axis(0))) + x.product()
}

/// A gradient of an array function with respect to two arguments.
#[jit]
#[grad(loss_grad, wrt = (w, b))]
pub fn loss(w: &[f64], b: f64, x: &[f64]) -> f64 {
    sum((w * x + b).tanh().powi(2))
}

/// Forward mode of an array-valued function.
#[jvp(model_jvp)]
pub fn model(x: &[f64], y: &[f64]) -> Vec<f64> {
    (x * y).sin() + y.exp()
}

/// Reverse mode of the same function.
#[vjp(model_vjp)]
pub fn model_reverse(x: &[f64], y: &[f64]) -> Vec<f64> {
    (x * y).sin() + y.exp()
}

/// Per-example gradients: vmap of grad (row reductions).
#[vmap(per_example_grads, in_axes = (None, 0, 0))]
#[grad(example_grad, wrt = w)]
pub fn example_loss(w: &[f64], x: &[f64], y: f64) -> f64 {
    (1.0 + (-y * dot(w, x)).exp()).ln()
}

/// Casts both ways, an integer scalar parameter and bool, integer results:
/// a float → integer conversion is a store's conversion, and its result,
/// read again, a widening load.
#[jit]
pub fn casts_f32(x: &[f32], labels: &[i32], n: usize) -> (Vec<i32>, Vec<f32>, Vec<bool>) {
    let q = (x * 10.0).mapv(|v| v as i32);
    let back = q.mapv(|v| v as f32) + labels.mapv(|v| v as f32) * (n as f32);
    (q, back, x > 0.0)
}

/// `powf` with an array exponent, a negative base to an integer power, and
/// numpy's `power` of a scalar base.
#[jit]
pub fn pow_f64(x: &[f64], y: &[f64]) -> Vec<f64> {
    x.powf(y) + (-x).powf(3.0) + power(2.0, y)
}

/// The same in f32.
#[jit]
pub fn pow_f32(x: &[f32], y: &[f32]) -> Vec<f32> {
    x.powf(y) + (-x).powf(3.0) + power(2.0, y)
}

/// A helper (`#[oxla::func]`): inlined into `helper_loss` below, and an
/// array function of its own; the build script compiles both.
#[oxla::func]
pub fn log_cosh(x: &[f64]) -> Vec<f64> {
    (x.exp() + (-x).exp()).ln() - 2f64.ln()
}

/// A function calling a helper, and its gradient, both on the build
/// script's kernels.
#[grad(helper_loss_grad)]
pub fn helper_loss(x: &[f64], y: &[f64]) -> f64 {
    sum(log_cosh(x - y))
}

/// Rust's float remainder (C's `fmod`), composed of exact steps: the
/// build script's kernels must keep its products from FMA contraction.
#[jit]
pub fn fmod_f64(x: &[f64], y: &[f64]) -> Vec<f64> {
    x % y
}

/// A gradient step calling the generated `helper_loss_grad`: the build
/// script inlines the called gradient's IR as the macro does.
#[jit]
pub fn helper_step(x: &[f64], y: &[f64]) -> Vec<f64> {
    let (gx, _) = helper_loss_grad(x, y);
    x - 0.25 * gx
}

/// A parameter struct (`#[derive(oxla::Tree)]`): the build script flattens
/// functions taking it as the macro does, so they run on its kernels.
#[derive(oxla::Tree, Clone, Debug, PartialEq)]
pub struct Affine {
    pub w: oxla::ndarray::Array2<f64>,
    pub b: oxla::ndarray::Array1<f64>,
}

/// A helper taking the struct.
#[oxla::func]
pub fn affine(p: &Affine, x: oxla::ndarray::ArrayView2<f64>) -> oxla::ndarray::Array2<f64> {
    x.dot(&p.w) + &p.b
}

/// A loss of the struct, and its gradient with respect to the struct.
#[oxla::value_and_grad(affine_loss_vg, wrt = p)]
pub fn affine_loss(p: &Affine, x: oxla::ndarray::ArrayView2<f64>) -> f64 {
    sum(affine(p, x).tanh().powi(2))
}

/// A crate constant, read by `controlled` at each call.
pub const DECAY: f64 = 0.75;

/// Control flow and a constant on the build script's kernels: `let mut`,
/// `+=` with a `match` on the length, an early `return` inside an `if`.
#[grad(controlled_grad, wrt = x)]
pub fn controlled(x: &[f64], k: i64) -> f64 {
    let mut s = sum(x * x) * DECAY;
    if k < 0 {
        return s;
    }
    s += match x.len() {
        0..=4 => 1.0,
        _ => mean(x),
    };
    s
}

/// An `if` on a scalar in an array function (a cond: only the taken
/// branch's kernels run; `ln(s)` is NaN on the side not taken for
/// `s <= 0`), and its gradient: both branches are programs of the build
/// script's kernels.
#[grad(gated_grad, wrt = (x, s))]
pub fn gated(x: &[f64], s: f64) -> f64 {
    let y = if s > 0.0 { x * s.ln() } else { x * x };
    sum(y.sin())
}

/// A `for` loop carrying an array and a scalar, and its gradient through
/// the reverse sweep (checkpointed): the loop's body, and the backward body,
/// are programs of the build script's kernels.
#[grad(looped_grad, wrt = x)]
pub fn looped(x: &[f64], n: usize) -> f64 {
    let mut y = x * 0.0;
    let mut s = 0.0;
    for i in oxla::checkpoint_every(3, 0..n) {
        y = y * 0.5 + (x * (i as f64 + 1.0)).sin();
        s += sum(&y * &y);
    }
    s
}

/// Generic over its float type: the build script compiles the kernels of
/// both instances (f32 and f64), and of both instances of its gradient.
#[grad(generic_loss_grad)]
pub fn generic_loss<T: oxla::Float>(w: &[T], x: &[T]) -> T {
    let r = (w * x).tanh() - T::from(0.5);
    sum(r * r) / 2.0
}
