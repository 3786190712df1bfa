//! Every supported row of the jax.numpy / lax name table
//! (`docs/JAX_NUMPY.md`), compiled and compared with JAX: each row's sample
//! is an `#[oxla::func]` evaluated on the reference script's inputs against
//! `tests/reference/jax_numpy_jax.txt`; where the row is differentiable, the
//! `#[grad]` of the sum of its result against `jax.grad` and against central
//! differences. Transforms and collectives are their attribute on a small
//! function.
//!
//! Generated from `macros/lower/src/lower/vocab/jax_names.rs` by
//! `OXLA_BLESS=1 cargo test -p oxla-lower jax_table`: edit the rows there.

use oxla::ndarray::{
    s, Array1, Array2, Array3, ArrayBase, ArrayD, ArrayView1, Axis, Data, Dimension, NewAxis, Slice,
};

fn jax(name: &str) -> ArrayD<f64> {
    let text = include_str!("../reference/jax_numpy_jax.txt");
    crate::reference::reference_array(text, "jax_numpy_jax.txt", name)
}

/// The reference script's inputs: fixed-size arrays (the samples'
/// parameters), the same as ndarray arrays (the transforms'), and scalars.
struct Inputs {
    x: [f64; 6],
    y: [f64; 6],
    m: [[f64; 4]; 3],
    a: [[f64; 3]; 3],
    n: [[f64; 2]; 4],
    v: [f64; 4],
    xa: Array1<f64>,
    ya: Array1<f64>,
    ma: Array2<f64>,
    aa: Array2<f64>,
    na: Array2<f64>,
    va: Array1<f64>,
    idx: Array1<i64>,
    i: usize,
    k: i64,
    w: f64,
}

fn vector<const N: usize>(name: &str) -> [f64; N] {
    let v = jax(name);
    std::array::from_fn(|q| v.as_slice().unwrap()[q])
}

fn matrix<const R: usize, const C: usize>(name: &str) -> [[f64; C]; R] {
    let v = jax(name);
    std::array::from_fn(|r| std::array::from_fn(|c| v[[r, c]]))
}

fn number(name: &str) -> f64 {
    jax(name).iter().next().copied().unwrap()
}

fn inputs() -> Inputs {
    let array = |n: &str| jax(n).into_dimensionality().unwrap();
    let table = |n: &str| jax(n).into_dimensionality().unwrap();
    Inputs {
        x: vector("input.x"),
        y: vector("input.y"),
        m: matrix("input.m"),
        a: matrix("input.a"),
        n: matrix("input.n"),
        v: vector("input.v"),
        xa: array("input.x"),
        ya: array("input.y"),
        ma: table("input.m"),
        aa: table("input.a"),
        na: table("input.n"),
        va: array("input.v"),
        idx: jax("input.idx").iter().map(|&e| e as i64).collect(),
        i: number("input.i") as usize,
        k: number("input.k") as i64,
        w: number("input.w"),
    }
}

/// A result as the reference file holds it: its elements, row-major, as
/// `f64` (integers and booleans converted as the script converts them).
trait Flat {
    fn flat(&self) -> Vec<f64>;
}

impl Flat for f64 {
    fn flat(&self) -> Vec<f64> {
        vec![*self]
    }
}

impl Flat for i64 {
    fn flat(&self) -> Vec<f64> {
        vec![*self as f64]
    }
}

impl Flat for i32 {
    fn flat(&self) -> Vec<f64> {
        vec![*self as f64]
    }
}

impl Flat for bool {
    fn flat(&self) -> Vec<f64> {
        vec![if *self { 1.0 } else { 0.0 }]
    }
}

impl<T: Flat, const N: usize> Flat for [T; N] {
    fn flat(&self) -> Vec<f64> {
        self.iter().flat_map(Flat::flat).collect()
    }
}

impl<T: Flat> Flat for Vec<T> {
    fn flat(&self) -> Vec<f64> {
        self.iter().flat_map(Flat::flat).collect()
    }
}

impl<S: Data, D: Dimension> Flat for ArrayBase<S, D>
where
    S::Elem: Flat,
{
    fn flat(&self) -> Vec<f64> {
        self.iter().flat_map(Flat::flat).collect()
    }
}

impl<A: Flat, B: Flat> Flat for (A, B) {
    fn flat(&self) -> Vec<f64> {
        let mut v = self.0.flat();
        v.extend(self.1.flat());
        v
    }
}

/// An input that central differences perturb, one element at a time.
trait Perturb: Clone {
    fn count(&self) -> usize;
    fn bump(&mut self, q: usize, h: f64);
}

impl<const N: usize> Perturb for [f64; N] {
    fn count(&self) -> usize {
        N
    }
    fn bump(&mut self, q: usize, h: f64) {
        self[q] += h;
    }
}

impl<const R: usize, const C: usize> Perturb for [[f64; C]; R] {
    fn count(&self) -> usize {
        R * C
    }
    fn bump(&mut self, q: usize, h: f64) {
        self[q / C][q % C] += h;
    }
}

/// Central differences of `f` at `x`.
fn central<X: Perturb>(f: impl Fn(&X) -> f64, x: &X) -> Vec<f64> {
    let h = 1e-6;
    (0..x.count())
        .map(|q| {
            let (mut p, mut m) = (x.clone(), x.clone());
            p.bump(q, h);
            m.bump(q, -h);
            (f(&p) - f(&m)) / (2.0 * h)
        })
        .collect()
}

/// The mismatches of one family's rows, reported together.
#[derive(Default)]
struct Checks {
    failures: Vec<String>,
    compared: usize,
}

impl Checks {
    fn close(&mut self, what: &str, got: &[f64], want: &[f64], rtol: f64) {
        self.compared += 1;
        if got.len() != want.len() {
            self.failures
                .push(format!("{what}: {} elements, expected {}", got.len(), want.len()));
            return;
        }
        for (q, (g, w)) in got.iter().zip(want).enumerate() {
            let same = (g.is_nan() && w.is_nan()) || (g - w).abs() <= rtol * (1.0 + w.abs());
            if !same {
                self.failures.push(format!("{what}[{q}]: oxla {g:e}, expected {w:e}"));
                return;
            }
        }
    }

    /// The value of row `key` (`jax`, its JAX name) against JAX's.
    fn value(&mut self, key: &str, jax_name: &str, got: Vec<f64>) {
        let want = jax(key);
        self.close(&format!("{jax_name} value"), &got, want.as_slice().unwrap(), 1e-10);
    }

    /// The gradient of the sum of row `key` against `jax.grad`'s and
    /// against central differences `fd` where given.
    fn grad(&mut self, key: &str, got: Vec<f64>, fd: Option<Vec<f64>>) {
        let want = jax(&format!("{key}.grad"));
        self.close(&format!("{key} grad"), &got, want.as_slice().unwrap(), 1e-9);
        if let Some(fd) = fd {
            self.close(&format!("{key} grad vs central differences"), &got, &fd, 1e-5);
        }
    }

    fn finish(self) {
        assert!(self.compared > 0, "nothing compared");
        assert!(self.failures.is_empty(), "{}", self.failures.join("\n"));
    }
}

// ---- Elementwise math and comparisons --------------------------------------

// jnp.sin
#[oxla::func]
fn jnp_sin(x: &[f64; 6]) -> Array1<f64> {
    x.sin()
}

#[oxla::grad(jnp_sin_grad, wrt = x)]
fn jnp_sin_sum(x: &[f64; 6]) -> f64 {
    jnp_sin(x).sum()
}

// jnp.cos
#[oxla::func]
fn jnp_cos(x: &[f64; 6]) -> Array1<f64> {
    x.cos()
}

#[oxla::grad(jnp_cos_grad, wrt = x)]
fn jnp_cos_sum(x: &[f64; 6]) -> f64 {
    jnp_cos(x).sum()
}

// jnp.tan
#[oxla::func]
fn jnp_tan(x: &[f64; 6]) -> Array1<f64> {
    x.sin() / x.cos()
}

#[oxla::grad(jnp_tan_grad, wrt = x)]
fn jnp_tan_sum(x: &[f64; 6]) -> f64 {
    jnp_tan(x).sum()
}

// jnp.tanh
#[oxla::func]
fn jnp_tanh(m: &[[f64; 4]; 3]) -> Array2<f64> {
    m.tanh()
}

#[oxla::grad(jnp_tanh_grad, wrt = m)]
fn jnp_tanh_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_tanh(m).sum()
}

// jnp.sinh
#[oxla::func]
fn jnp_sinh(m: &[[f64; 4]; 3]) -> Array2<f64> {
    (m.exp() - (-m).exp()) * 0.5
}

#[oxla::grad(jnp_sinh_grad, wrt = m)]
fn jnp_sinh_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_sinh(m).sum()
}

// jnp.cosh
#[oxla::func]
fn jnp_cosh(m: &[[f64; 4]; 3]) -> Array2<f64> {
    (m.exp() + (-m).exp()) * 0.5
}

#[oxla::grad(jnp_cosh_grad, wrt = m)]
fn jnp_cosh_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_cosh(m).sum()
}

// jnp.exp
#[oxla::func]
fn jnp_exp(m: &[[f64; 4]; 3]) -> Array2<f64> {
    m.exp()
}

#[oxla::grad(jnp_exp_grad, wrt = m)]
fn jnp_exp_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_exp(m).sum()
}

// jnp.exp2
#[oxla::func]
fn jnp_exp2(x: &[f64; 6]) -> Array1<f64> {
    (x * std::f64::consts::LN_2).exp()
}

#[oxla::grad(jnp_exp2_grad, wrt = x)]
fn jnp_exp2_sum(x: &[f64; 6]) -> f64 {
    jnp_exp2(x).sum()
}

// jnp.expm1
#[oxla::func]
fn jnp_expm1(m: &[[f64; 4]; 3]) -> Array2<f64> {
    expm1(m) + m.exp_m1()
}

#[oxla::grad(jnp_expm1_grad, wrt = m)]
fn jnp_expm1_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_expm1(m).sum()
}

// jnp.log
#[oxla::func]
fn jnp_log(x: &[f64; 6]) -> Array1<f64> {
    x.ln()
}

#[oxla::grad(jnp_log_grad, wrt = x)]
fn jnp_log_sum(x: &[f64; 6]) -> f64 {
    jnp_log(x).sum()
}

// jnp.log2
#[oxla::func]
fn jnp_log2(x: &[f64; 6]) -> Array1<f64> {
    x.ln() / std::f64::consts::LN_2
}

#[oxla::grad(jnp_log2_grad, wrt = x)]
fn jnp_log2_sum(x: &[f64; 6]) -> f64 {
    jnp_log2(x).sum()
}

// jnp.log10
#[oxla::func]
fn jnp_log10(x: &[f64; 6]) -> Array1<f64> {
    x.ln() / std::f64::consts::LN_10
}

#[oxla::grad(jnp_log10_grad, wrt = x)]
fn jnp_log10_sum(x: &[f64; 6]) -> f64 {
    jnp_log10(x).sum()
}

// jnp.log1p
#[oxla::func]
fn jnp_log1p(m: &[[f64; 4]; 3]) -> Array2<f64> {
    log1p(m) + m.ln_1p()
}

#[oxla::grad(jnp_log1p_grad, wrt = m)]
fn jnp_log1p_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_log1p(m).sum()
}

// jnp.sqrt
#[oxla::func]
fn jnp_sqrt(x: &[f64; 6]) -> Array1<f64> {
    x.sqrt()
}

#[oxla::grad(jnp_sqrt_grad, wrt = x)]
fn jnp_sqrt_sum(x: &[f64; 6]) -> f64 {
    jnp_sqrt(x).sum()
}

// jnp.square
#[oxla::func]
fn jnp_square(m: &[[f64; 4]; 3]) -> Array2<f64> {
    m.square()
}

#[oxla::grad(jnp_square_grad, wrt = m)]
fn jnp_square_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_square(m).sum()
}

// jnp.reciprocal
#[oxla::func]
fn jnp_reciprocal(x: &[f64; 6]) -> Array1<f64> {
    x.recip()
}

#[oxla::grad(jnp_reciprocal_grad, wrt = x)]
fn jnp_reciprocal_sum(x: &[f64; 6]) -> f64 {
    jnp_reciprocal(x).sum()
}

// jnp.abs
#[oxla::func]
fn jnp_abs(m: &[[f64; 4]; 3]) -> Array2<f64> {
    m.abs()
}

#[oxla::grad(jnp_abs_grad, wrt = m)]
fn jnp_abs_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_abs(m).sum()
}

// jnp.absolute
#[oxla::func]
fn jnp_absolute(m: &[[f64; 4]; 3]) -> Array2<f64> {
    m.abs() * 2.0
}

#[oxla::grad(jnp_absolute_grad, wrt = m)]
fn jnp_absolute_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_absolute(m).sum()
}

// jnp.negative
#[oxla::func]
fn jnp_negative(m: &[[f64; 4]; 3]) -> Array2<f64> {
    -m
}

#[oxla::grad(jnp_negative_grad, wrt = m)]
fn jnp_negative_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_negative(m).sum()
}

// jnp.add
#[oxla::func]
fn jnp_add(m: &[[f64; 4]; 3], v: &[f64; 4]) -> Array2<f64> {
    &m + &v
}

#[oxla::grad(jnp_add_grad, wrt = m)]
fn jnp_add_sum(m: &[[f64; 4]; 3], v: &[f64; 4]) -> f64 {
    jnp_add(m, v).sum()
}

// jnp.subtract
#[oxla::func]
fn jnp_subtract(x: &[f64; 6], y: &[f64; 6]) -> Array1<f64> {
    &x - &y
}

#[oxla::grad(jnp_subtract_grad, wrt = x)]
fn jnp_subtract_sum(x: &[f64; 6], y: &[f64; 6]) -> f64 {
    jnp_subtract(x, y).sum()
}

// jnp.multiply
#[oxla::func]
fn jnp_multiply(x: &[f64; 6], y: &[f64; 6]) -> Array1<f64> {
    &x * &y
}

#[oxla::grad(jnp_multiply_grad, wrt = x)]
fn jnp_multiply_sum(x: &[f64; 6], y: &[f64; 6]) -> f64 {
    jnp_multiply(x, y).sum()
}

// jnp.divide
#[oxla::func]
fn jnp_divide(x: &[f64; 6], y: &[f64; 6]) -> Array1<f64> {
    &x / &y
}

#[oxla::grad(jnp_divide_grad, wrt = x)]
fn jnp_divide_sum(x: &[f64; 6], y: &[f64; 6]) -> f64 {
    jnp_divide(x, y).sum()
}

// jnp.true_divide
#[oxla::func]
fn jnp_true_divide(y: &[f64; 6], x: &[f64; 6]) -> Array1<f64> {
    &y / &x
}

#[oxla::grad(jnp_true_divide_grad, wrt = y)]
fn jnp_true_divide_sum(y: &[f64; 6], x: &[f64; 6]) -> f64 {
    jnp_true_divide(y, x).sum()
}

// jnp.power
#[oxla::func]
fn jnp_power(x: &[f64; 6], y: &[f64; 6]) -> Array1<f64> {
    power(x, y) + powf(x, y) + x.powf(&y)
}

#[oxla::grad(jnp_power_grad, wrt = x)]
fn jnp_power_sum(x: &[f64; 6], y: &[f64; 6]) -> f64 {
    jnp_power(x, y).sum()
}

// lax.integer_pow
#[oxla::func]
fn lax_integer_pow(m: &[[f64; 4]; 3]) -> Array2<f64> {
    m.powi(3)
}

#[oxla::grad(lax_integer_pow_grad, wrt = m)]
fn lax_integer_pow_sum(m: &[[f64; 4]; 3]) -> f64 {
    lax_integer_pow(m).sum()
}

// jnp.maximum
#[oxla::func]
fn jnp_maximum(x: &[f64; 6], y: &[f64; 6]) -> Array1<f64> {
    x.max(&y)
}

#[oxla::grad(jnp_maximum_grad, wrt = x)]
fn jnp_maximum_sum(x: &[f64; 6], y: &[f64; 6]) -> f64 {
    jnp_maximum(x, y).sum()
}

// jnp.minimum
#[oxla::func]
fn jnp_minimum(x: &[f64; 6], y: &[f64; 6]) -> Array1<f64> {
    x.min(&y)
}

#[oxla::grad(jnp_minimum_grad, wrt = x)]
fn jnp_minimum_sum(x: &[f64; 6], y: &[f64; 6]) -> f64 {
    jnp_minimum(x, y).sum()
}

// jnp.clip
#[oxla::func]
fn jnp_clip(m: &[[f64; 4]; 3]) -> Array2<f64> {
    clip(m, -0.5, 0.5) + m.clamp(-0.5, 0.5)
}

#[oxla::grad(jnp_clip_grad, wrt = m)]
fn jnp_clip_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_clip(m).sum()
}

// jnp.sign
#[oxla::func]
fn jnp_sign(m: &[[f64; 4]; 3]) -> Array2<f64> {
    sign(m) + m.signum()
}

#[oxla::grad(jnp_sign_grad, wrt = m)]
fn jnp_sign_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_sign(m).sum()
}

// jnp.floor
#[oxla::func]
fn jnp_floor(m: &[[f64; 4]; 3]) -> Array2<f64> {
    (m * 3.0).floor()
}

#[oxla::grad(jnp_floor_grad, wrt = m)]
fn jnp_floor_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_floor(m).sum()
}

// jnp.ceil
#[oxla::func]
fn jnp_ceil(m: &[[f64; 4]; 3]) -> Array2<f64> {
    (m * 3.0).ceil()
}

#[oxla::grad(jnp_ceil_grad, wrt = m)]
fn jnp_ceil_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_ceil(m).sum()
}

// jnp.round
#[oxla::func]
fn jnp_round(m: &[[f64; 4]; 3]) -> Array2<f64> {
    (m * 3.0).round_ties_even() + (m * 3.0).round()
}

#[oxla::grad(jnp_round_grad, wrt = m)]
fn jnp_round_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_round(m).sum()
}

// jnp.trunc
#[oxla::func]
fn jnp_trunc(m: &[[f64; 4]; 3]) -> Array2<f64> {
    (m * 3.0).trunc()
}

#[oxla::grad(jnp_trunc_grad, wrt = m)]
fn jnp_trunc_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_trunc(m).sum()
}

// jnp.fmod
#[oxla::func]
fn jnp_fmod(y: &[f64; 6], x: &[f64; 6]) -> Array1<f64> {
    &y % &x
}

#[oxla::grad(jnp_fmod_grad, wrt = y)]
fn jnp_fmod_sum(y: &[f64; 6], x: &[f64; 6]) -> f64 {
    jnp_fmod(y, x).sum()
}

// jnp.remainder
#[oxla::func]
fn jnp_remainder(y: &[f64; 6], x: &[f64; 6]) -> Array1<f64> {
    y.rem_euclid(&x)
}

#[oxla::grad(jnp_remainder_grad, wrt = y)]
fn jnp_remainder_sum(y: &[f64; 6], x: &[f64; 6]) -> f64 {
    jnp_remainder(y, x).sum()
}

// jnp.floor_divide
#[oxla::func]
fn jnp_floor_divide(y: &[f64; 6], x: &[f64; 6]) -> Array1<f64> {
    (&y / &x).floor()
}

#[oxla::grad(jnp_floor_divide_grad, wrt = y)]
fn jnp_floor_divide_sum(y: &[f64; 6], x: &[f64; 6]) -> f64 {
    jnp_floor_divide(y, x).sum()
}

// jnp.logaddexp
#[oxla::func]
fn jnp_logaddexp(m: &[[f64; 4]; 3], v: &[f64; 4]) -> Array2<f64> {
    logaddexp(m, v)
}

#[oxla::grad(jnp_logaddexp_grad, wrt = m)]
fn jnp_logaddexp_sum(m: &[[f64; 4]; 3], v: &[f64; 4]) -> f64 {
    jnp_logaddexp(m, v).sum()
}

// jnp.hypot
#[oxla::func]
fn jnp_hypot(x: &[f64; 6], y: &[f64; 6]) -> Array1<f64> {
    (x.square() + y.square()).sqrt()
}

#[oxla::grad(jnp_hypot_grad, wrt = x)]
fn jnp_hypot_sum(x: &[f64; 6], y: &[f64; 6]) -> f64 {
    jnp_hypot(x, y).sum()
}

// jnp.deg2rad
#[oxla::func]
fn jnp_deg2rad(x: &[f64; 6]) -> Array1<f64> {
    &x * (std::f64::consts::PI / 180.0)
}

#[oxla::grad(jnp_deg2rad_grad, wrt = x)]
fn jnp_deg2rad_sum(x: &[f64; 6]) -> f64 {
    jnp_deg2rad(x).sum()
}

// lax.erf
#[oxla::func]
fn lax_erf(m: &[[f64; 4]; 3]) -> Array2<f64> {
    erf(m)
}

#[oxla::grad(lax_erf_grad, wrt = m)]
fn lax_erf_sum(m: &[[f64; 4]; 3]) -> f64 {
    lax_erf(m).sum()
}

// lax.erf_inv
#[oxla::func]
fn lax_erf_inv(x: &[f64; 6]) -> Array1<f64> {
    erf_inv(x)
}

#[oxla::grad(lax_erf_inv_grad, wrt = x)]
fn lax_erf_inv_sum(x: &[f64; 6]) -> f64 {
    lax_erf_inv(x).sum()
}

// lax.rsqrt
#[oxla::func]
fn lax_rsqrt(x: &[f64; 6]) -> Array1<f64> {
    x.sqrt().recip()
}

#[oxla::grad(lax_rsqrt_grad, wrt = x)]
fn lax_rsqrt_sum(x: &[f64; 6]) -> f64 {
    lax_rsqrt(x).sum()
}

// jnp.isnan
#[oxla::func]
fn jnp_isnan(m: &[[f64; 4]; 3]) -> Array2<bool> {
    m.ln() != m.ln()
}

// jnp.greater
#[oxla::func]
fn jnp_greater(x: &[f64; 6], y: &[f64; 6]) -> Array1<bool> {
    x > y
}

// jnp.greater_equal
#[oxla::func]
fn jnp_greater_equal(x: &[f64; 6], y: &[f64; 6]) -> Array1<bool> {
    x >= y
}

// jnp.less
#[oxla::func]
fn jnp_less(x: &[f64; 6], y: &[f64; 6]) -> Array1<bool> {
    x < y
}

// jnp.less_equal
#[oxla::func]
fn jnp_less_equal(x: &[f64; 6], y: &[f64; 6]) -> Array1<bool> {
    x <= y
}

// jnp.equal
#[oxla::func]
fn jnp_equal(x: &[f64; 6], y: &[f64; 6]) -> Array1<bool> {
    (x * 4.0).floor() == (y * 4.0).floor()
}

// jnp.not_equal
#[oxla::func]
fn jnp_not_equal(x: &[f64; 6], y: &[f64; 6]) -> Array1<bool> {
    x != y
}

#[test]
fn elementwise_rows_match_jax() {
    let i = inputs();
    let mut c = Checks::default();
    c.value("jnp_sin", "jnp.sin", jnp_sin(&i.x).flat());
    c.grad("jnp_sin", jnp_sin_grad(&i.x).flat(), Some(central(|p| jnp_sin_sum(p), &i.x)));
    c.value("jnp_cos", "jnp.cos", jnp_cos(&i.x).flat());
    c.grad("jnp_cos", jnp_cos_grad(&i.x).flat(), Some(central(|p| jnp_cos_sum(p), &i.x)));
    c.value("jnp_tan", "jnp.tan", jnp_tan(&i.x).flat());
    c.grad("jnp_tan", jnp_tan_grad(&i.x).flat(), Some(central(|p| jnp_tan_sum(p), &i.x)));
    c.value("jnp_tanh", "jnp.tanh", jnp_tanh(&i.m).flat());
    c.grad("jnp_tanh", jnp_tanh_grad(&i.m).flat(), Some(central(|p| jnp_tanh_sum(p), &i.m)));
    c.value("jnp_sinh", "jnp.sinh", jnp_sinh(&i.m).flat());
    c.grad("jnp_sinh", jnp_sinh_grad(&i.m).flat(), Some(central(|p| jnp_sinh_sum(p), &i.m)));
    c.value("jnp_cosh", "jnp.cosh", jnp_cosh(&i.m).flat());
    c.grad("jnp_cosh", jnp_cosh_grad(&i.m).flat(), Some(central(|p| jnp_cosh_sum(p), &i.m)));
    c.value("jnp_exp", "jnp.exp", jnp_exp(&i.m).flat());
    c.grad("jnp_exp", jnp_exp_grad(&i.m).flat(), Some(central(|p| jnp_exp_sum(p), &i.m)));
    c.value("jnp_exp2", "jnp.exp2", jnp_exp2(&i.x).flat());
    c.grad("jnp_exp2", jnp_exp2_grad(&i.x).flat(), Some(central(|p| jnp_exp2_sum(p), &i.x)));
    c.value("jnp_expm1", "jnp.expm1", jnp_expm1(&i.m).flat());
    c.grad("jnp_expm1", jnp_expm1_grad(&i.m).flat(), Some(central(|p| jnp_expm1_sum(p), &i.m)));
    c.value("jnp_log", "jnp.log", jnp_log(&i.x).flat());
    c.grad("jnp_log", jnp_log_grad(&i.x).flat(), Some(central(|p| jnp_log_sum(p), &i.x)));
    c.value("jnp_log2", "jnp.log2", jnp_log2(&i.x).flat());
    c.grad("jnp_log2", jnp_log2_grad(&i.x).flat(), Some(central(|p| jnp_log2_sum(p), &i.x)));
    c.value("jnp_log10", "jnp.log10", jnp_log10(&i.x).flat());
    c.grad("jnp_log10", jnp_log10_grad(&i.x).flat(), Some(central(|p| jnp_log10_sum(p), &i.x)));
    c.value("jnp_log1p", "jnp.log1p", jnp_log1p(&i.m).flat());
    c.grad("jnp_log1p", jnp_log1p_grad(&i.m).flat(), Some(central(|p| jnp_log1p_sum(p), &i.m)));
    c.value("jnp_sqrt", "jnp.sqrt", jnp_sqrt(&i.x).flat());
    c.grad("jnp_sqrt", jnp_sqrt_grad(&i.x).flat(), Some(central(|p| jnp_sqrt_sum(p), &i.x)));
    c.value("jnp_square", "jnp.square", jnp_square(&i.m).flat());
    c.grad("jnp_square", jnp_square_grad(&i.m).flat(), Some(central(|p| jnp_square_sum(p), &i.m)));
    c.value("jnp_reciprocal", "jnp.reciprocal", jnp_reciprocal(&i.x).flat());
    c.grad("jnp_reciprocal", jnp_reciprocal_grad(&i.x).flat(), Some(central(|p| jnp_reciprocal_sum(p), &i.x)));
    c.value("jnp_abs", "jnp.abs", jnp_abs(&i.m).flat());
    c.grad("jnp_abs", jnp_abs_grad(&i.m).flat(), Some(central(|p| jnp_abs_sum(p), &i.m)));
    c.value("jnp_absolute", "jnp.absolute", jnp_absolute(&i.m).flat());
    c.grad("jnp_absolute", jnp_absolute_grad(&i.m).flat(), Some(central(|p| jnp_absolute_sum(p), &i.m)));
    c.value("jnp_negative", "jnp.negative", jnp_negative(&i.m).flat());
    c.grad("jnp_negative", jnp_negative_grad(&i.m).flat(), Some(central(|p| jnp_negative_sum(p), &i.m)));
    c.value("jnp_add", "jnp.add", jnp_add(&i.m, &i.v).flat());
    c.grad("jnp_add", jnp_add_grad(&i.m, &i.v).flat(), Some(central(|p| jnp_add_sum(p, &i.v), &i.m)));
    c.value("jnp_subtract", "jnp.subtract", jnp_subtract(&i.x, &i.y).flat());
    c.grad("jnp_subtract", jnp_subtract_grad(&i.x, &i.y).flat(), Some(central(|p| jnp_subtract_sum(p, &i.y), &i.x)));
    c.value("jnp_multiply", "jnp.multiply", jnp_multiply(&i.x, &i.y).flat());
    c.grad("jnp_multiply", jnp_multiply_grad(&i.x, &i.y).flat(), Some(central(|p| jnp_multiply_sum(p, &i.y), &i.x)));
    c.value("jnp_divide", "jnp.divide", jnp_divide(&i.x, &i.y).flat());
    c.grad("jnp_divide", jnp_divide_grad(&i.x, &i.y).flat(), Some(central(|p| jnp_divide_sum(p, &i.y), &i.x)));
    c.value("jnp_true_divide", "jnp.true_divide", jnp_true_divide(&i.y, &i.x).flat());
    c.grad("jnp_true_divide", jnp_true_divide_grad(&i.y, &i.x).flat(), Some(central(|p| jnp_true_divide_sum(p, &i.x), &i.y)));
    c.value("jnp_power", "jnp.power", jnp_power(&i.x, &i.y).flat());
    c.grad("jnp_power", jnp_power_grad(&i.x, &i.y).flat(), Some(central(|p| jnp_power_sum(p, &i.y), &i.x)));
    c.value("lax_integer_pow", "lax.integer_pow", lax_integer_pow(&i.m).flat());
    c.grad("lax_integer_pow", lax_integer_pow_grad(&i.m).flat(), Some(central(|p| lax_integer_pow_sum(p), &i.m)));
    c.value("jnp_maximum", "jnp.maximum", jnp_maximum(&i.x, &i.y).flat());
    c.grad("jnp_maximum", jnp_maximum_grad(&i.x, &i.y).flat(), Some(central(|p| jnp_maximum_sum(p, &i.y), &i.x)));
    c.value("jnp_minimum", "jnp.minimum", jnp_minimum(&i.x, &i.y).flat());
    c.grad("jnp_minimum", jnp_minimum_grad(&i.x, &i.y).flat(), Some(central(|p| jnp_minimum_sum(p, &i.y), &i.x)));
    c.value("jnp_clip", "jnp.clip", jnp_clip(&i.m).flat());
    c.grad("jnp_clip", jnp_clip_grad(&i.m).flat(), Some(central(|p| jnp_clip_sum(p), &i.m)));
    c.value("jnp_sign", "jnp.sign", jnp_sign(&i.m).flat());
    c.grad("jnp_sign", jnp_sign_grad(&i.m).flat(), Some(central(|p| jnp_sign_sum(p), &i.m)));
    c.value("jnp_floor", "jnp.floor", jnp_floor(&i.m).flat());
    c.grad("jnp_floor", jnp_floor_grad(&i.m).flat(), Some(central(|p| jnp_floor_sum(p), &i.m)));
    c.value("jnp_ceil", "jnp.ceil", jnp_ceil(&i.m).flat());
    c.grad("jnp_ceil", jnp_ceil_grad(&i.m).flat(), Some(central(|p| jnp_ceil_sum(p), &i.m)));
    c.value("jnp_round", "jnp.round", jnp_round(&i.m).flat());
    c.grad("jnp_round", jnp_round_grad(&i.m).flat(), Some(central(|p| jnp_round_sum(p), &i.m)));
    c.value("jnp_trunc", "jnp.trunc", jnp_trunc(&i.m).flat());
    c.grad("jnp_trunc", jnp_trunc_grad(&i.m).flat(), Some(central(|p| jnp_trunc_sum(p), &i.m)));
    c.value("jnp_fmod", "jnp.fmod", jnp_fmod(&i.y, &i.x).flat());
    c.grad("jnp_fmod", jnp_fmod_grad(&i.y, &i.x).flat(), Some(central(|p| jnp_fmod_sum(p, &i.x), &i.y)));
    c.value("jnp_remainder", "jnp.remainder", jnp_remainder(&i.y, &i.x).flat());
    c.grad("jnp_remainder", jnp_remainder_grad(&i.y, &i.x).flat(), Some(central(|p| jnp_remainder_sum(p, &i.x), &i.y)));
    c.value("jnp_floor_divide", "jnp.floor_divide", jnp_floor_divide(&i.y, &i.x).flat());
    c.grad("jnp_floor_divide", jnp_floor_divide_grad(&i.y, &i.x).flat(), Some(central(|p| jnp_floor_divide_sum(p, &i.x), &i.y)));
    c.value("jnp_logaddexp", "jnp.logaddexp", jnp_logaddexp(&i.m, &i.v).flat());
    c.grad("jnp_logaddexp", jnp_logaddexp_grad(&i.m, &i.v).flat(), Some(central(|p| jnp_logaddexp_sum(p, &i.v), &i.m)));
    c.value("jnp_hypot", "jnp.hypot", jnp_hypot(&i.x, &i.y).flat());
    c.grad("jnp_hypot", jnp_hypot_grad(&i.x, &i.y).flat(), Some(central(|p| jnp_hypot_sum(p, &i.y), &i.x)));
    c.value("jnp_deg2rad", "jnp.deg2rad", jnp_deg2rad(&i.x).flat());
    c.grad("jnp_deg2rad", jnp_deg2rad_grad(&i.x).flat(), Some(central(|p| jnp_deg2rad_sum(p), &i.x)));
    c.value("lax_erf", "lax.erf", lax_erf(&i.m).flat());
    c.grad("lax_erf", lax_erf_grad(&i.m).flat(), Some(central(|p| lax_erf_sum(p), &i.m)));
    c.value("lax_erf_inv", "lax.erf_inv", lax_erf_inv(&i.x).flat());
    c.grad("lax_erf_inv", lax_erf_inv_grad(&i.x).flat(), Some(central(|p| lax_erf_inv_sum(p), &i.x)));
    c.value("lax_rsqrt", "lax.rsqrt", lax_rsqrt(&i.x).flat());
    c.grad("lax_rsqrt", lax_rsqrt_grad(&i.x).flat(), Some(central(|p| lax_rsqrt_sum(p), &i.x)));
    c.value("jnp_isnan", "jnp.isnan", jnp_isnan(&i.m).flat());
    c.value("jnp_greater", "jnp.greater", jnp_greater(&i.x, &i.y).flat());
    c.value("jnp_greater_equal", "jnp.greater_equal", jnp_greater_equal(&i.x, &i.y).flat());
    c.value("jnp_less", "jnp.less", jnp_less(&i.x, &i.y).flat());
    c.value("jnp_less_equal", "jnp.less_equal", jnp_less_equal(&i.x, &i.y).flat());
    c.value("jnp_equal", "jnp.equal", jnp_equal(&i.x, &i.y).flat());
    c.value("jnp_not_equal", "jnp.not_equal", jnp_not_equal(&i.x, &i.y).flat());
    c.finish();
}

// ---- jax.nn ----------------------------------------------------------------

// jax.nn.relu
#[oxla::func]
fn jax_nn_relu(m: &[[f64; 4]; 3]) -> Array2<f64> {
    relu(m)
}

#[oxla::grad(jax_nn_relu_grad, wrt = m)]
fn jax_nn_relu_sum(m: &[[f64; 4]; 3]) -> f64 {
    jax_nn_relu(m).sum()
}

// jax.nn.sigmoid
#[oxla::func]
fn jax_nn_sigmoid(m: &[[f64; 4]; 3]) -> Array2<f64> {
    sigmoid(m)
}

#[oxla::grad(jax_nn_sigmoid_grad, wrt = m)]
fn jax_nn_sigmoid_sum(m: &[[f64; 4]; 3]) -> f64 {
    jax_nn_sigmoid(m).sum()
}

// jax.nn.softplus
#[oxla::func]
fn jax_nn_softplus(m: &[[f64; 4]; 3]) -> Array2<f64> {
    softplus(m)
}

#[oxla::grad(jax_nn_softplus_grad, wrt = m)]
fn jax_nn_softplus_sum(m: &[[f64; 4]; 3]) -> f64 {
    jax_nn_softplus(m).sum()
}

// jax.nn.log_sigmoid
#[oxla::func]
fn jax_nn_log_sigmoid(m: &[[f64; 4]; 3]) -> Array2<f64> {
    -softplus(-&m)
}

#[oxla::grad(jax_nn_log_sigmoid_grad, wrt = m)]
fn jax_nn_log_sigmoid_sum(m: &[[f64; 4]; 3]) -> f64 {
    jax_nn_log_sigmoid(m).sum()
}

// jax.nn.silu
#[oxla::func]
fn jax_nn_silu(m: &[[f64; 4]; 3]) -> Array2<f64> {
    &m * sigmoid(m)
}

#[oxla::grad(jax_nn_silu_grad, wrt = m)]
fn jax_nn_silu_sum(m: &[[f64; 4]; 3]) -> f64 {
    jax_nn_silu(m).sum()
}

// jax.nn.gelu
#[oxla::func]
fn jax_nn_gelu(m: &[[f64; 4]; 3]) -> Array2<f64> {
    &m * 0.5 * (erf(&m * std::f64::consts::FRAC_1_SQRT_2) + 1.0)
}

#[oxla::grad(jax_nn_gelu_grad, wrt = m)]
fn jax_nn_gelu_sum(m: &[[f64; 4]; 3]) -> f64 {
    jax_nn_gelu(m).sum()
}

// jax.nn.elu
#[oxla::func]
fn jax_nn_elu(m: &[[f64; 4]; 3]) -> Array2<f64> {
    where_(m > 0.0, m, expm1(m))
}

#[oxla::grad(jax_nn_elu_grad, wrt = m)]
fn jax_nn_elu_sum(m: &[[f64; 4]; 3]) -> f64 {
    jax_nn_elu(m).sum()
}

// jax.nn.leaky_relu
#[oxla::func]
fn jax_nn_leaky_relu(m: &[[f64; 4]; 3]) -> Array2<f64> {
    where_(m >= 0.0, m, &m * 0.01)
}

#[oxla::grad(jax_nn_leaky_relu_grad, wrt = m)]
fn jax_nn_leaky_relu_sum(m: &[[f64; 4]; 3]) -> f64 {
    jax_nn_leaky_relu(m).sum()
}

// jax.nn.relu6
#[oxla::func]
fn jax_nn_relu6(m: &[[f64; 4]; 3]) -> Array2<f64> {
    (&m * 8.0).clamp(0.0, 6.0)
}

#[oxla::grad(jax_nn_relu6_grad, wrt = m)]
fn jax_nn_relu6_sum(m: &[[f64; 4]; 3]) -> f64 {
    jax_nn_relu6(m).sum()
}

// jax.nn.softmax
#[oxla::func]
fn jax_nn_softmax(m: &[[f64; 4]; 3]) -> Array2<f64> {
    softmax(m, Axis(1))
}

#[oxla::grad(jax_nn_softmax_grad, wrt = m)]
fn jax_nn_softmax_sum(m: &[[f64; 4]; 3]) -> f64 {
    jax_nn_softmax(m).sum()
}

// jax.nn.log_softmax
#[oxla::func]
fn jax_nn_log_softmax(m: &[[f64; 4]; 3]) -> Array2<f64> {
    log_softmax(m, Axis(0))
}

#[oxla::grad(jax_nn_log_softmax_grad, wrt = m)]
fn jax_nn_log_softmax_sum(m: &[[f64; 4]; 3]) -> f64 {
    jax_nn_log_softmax(m).sum()
}

// jax.nn.logsumexp
#[oxla::func]
fn jax_nn_logsumexp(m: &[[f64; 4]; 3]) -> Array1<f64> {
    logsumexp(m, Axis(1))
}

#[oxla::grad(jax_nn_logsumexp_grad, wrt = m)]
fn jax_nn_logsumexp_sum(m: &[[f64; 4]; 3]) -> f64 {
    jax_nn_logsumexp(m).sum()
}

// jax.scipy.special.logsumexp
#[oxla::func]
fn jax_scipy_special_logsumexp(m: &[[f64; 4]; 3]) -> f64 {
    logsumexp(m)
}

#[oxla::grad(jax_scipy_special_logsumexp_grad, wrt = m)]
fn jax_scipy_special_logsumexp_sum(m: &[[f64; 4]; 3]) -> f64 {
    jax_scipy_special_logsumexp(m)
}

// jax.nn.one_hot
#[oxla::func]
fn jax_nn_one_hot(idx: ArrayView1<i64>) -> Array2<f64> {
    take(eye(4), &idx, Axis(0))
}

// jax.nn.standardize
#[oxla::func]
fn jax_nn_standardize(x: &[f64; 6]) -> Array1<f64> {
    (&x - x.mean()) / (x.var(0.0) + 1e-5).sqrt()
}

#[oxla::grad(jax_nn_standardize_grad, wrt = x)]
fn jax_nn_standardize_sum(x: &[f64; 6]) -> f64 {
    jax_nn_standardize(x).sum()
}

#[test]
fn nn_rows_match_jax() {
    let i = inputs();
    let mut c = Checks::default();
    c.value("jax_nn_relu", "jax.nn.relu", jax_nn_relu(&i.m).flat());
    c.grad("jax_nn_relu", jax_nn_relu_grad(&i.m).flat(), Some(central(|p| jax_nn_relu_sum(p), &i.m)));
    c.value("jax_nn_sigmoid", "jax.nn.sigmoid", jax_nn_sigmoid(&i.m).flat());
    c.grad("jax_nn_sigmoid", jax_nn_sigmoid_grad(&i.m).flat(), Some(central(|p| jax_nn_sigmoid_sum(p), &i.m)));
    c.value("jax_nn_softplus", "jax.nn.softplus", jax_nn_softplus(&i.m).flat());
    c.grad("jax_nn_softplus", jax_nn_softplus_grad(&i.m).flat(), Some(central(|p| jax_nn_softplus_sum(p), &i.m)));
    c.value("jax_nn_log_sigmoid", "jax.nn.log_sigmoid", jax_nn_log_sigmoid(&i.m).flat());
    c.grad("jax_nn_log_sigmoid", jax_nn_log_sigmoid_grad(&i.m).flat(), Some(central(|p| jax_nn_log_sigmoid_sum(p), &i.m)));
    c.value("jax_nn_silu", "jax.nn.silu", jax_nn_silu(&i.m).flat());
    c.grad("jax_nn_silu", jax_nn_silu_grad(&i.m).flat(), Some(central(|p| jax_nn_silu_sum(p), &i.m)));
    c.value("jax_nn_gelu", "jax.nn.gelu", jax_nn_gelu(&i.m).flat());
    c.grad("jax_nn_gelu", jax_nn_gelu_grad(&i.m).flat(), Some(central(|p| jax_nn_gelu_sum(p), &i.m)));
    c.value("jax_nn_elu", "jax.nn.elu", jax_nn_elu(&i.m).flat());
    c.grad("jax_nn_elu", jax_nn_elu_grad(&i.m).flat(), Some(central(|p| jax_nn_elu_sum(p), &i.m)));
    c.value("jax_nn_leaky_relu", "jax.nn.leaky_relu", jax_nn_leaky_relu(&i.m).flat());
    c.grad("jax_nn_leaky_relu", jax_nn_leaky_relu_grad(&i.m).flat(), Some(central(|p| jax_nn_leaky_relu_sum(p), &i.m)));
    c.value("jax_nn_relu6", "jax.nn.relu6", jax_nn_relu6(&i.m).flat());
    c.grad("jax_nn_relu6", jax_nn_relu6_grad(&i.m).flat(), Some(central(|p| jax_nn_relu6_sum(p), &i.m)));
    c.value("jax_nn_softmax", "jax.nn.softmax", jax_nn_softmax(&i.m).flat());
    c.grad("jax_nn_softmax", jax_nn_softmax_grad(&i.m).flat(), Some(central(|p| jax_nn_softmax_sum(p), &i.m)));
    c.value("jax_nn_log_softmax", "jax.nn.log_softmax", jax_nn_log_softmax(&i.m).flat());
    c.grad("jax_nn_log_softmax", jax_nn_log_softmax_grad(&i.m).flat(), Some(central(|p| jax_nn_log_softmax_sum(p), &i.m)));
    c.value("jax_nn_logsumexp", "jax.nn.logsumexp", jax_nn_logsumexp(&i.m).flat());
    c.grad("jax_nn_logsumexp", jax_nn_logsumexp_grad(&i.m).flat(), Some(central(|p| jax_nn_logsumexp_sum(p), &i.m)));
    c.value("jax_scipy_special_logsumexp", "jax.scipy.special.logsumexp", jax_scipy_special_logsumexp(&i.m).flat());
    c.grad("jax_scipy_special_logsumexp", jax_scipy_special_logsumexp_grad(&i.m).flat(), Some(central(|p| jax_scipy_special_logsumexp_sum(p), &i.m)));
    c.value("jax_nn_one_hot", "jax.nn.one_hot", jax_nn_one_hot(i.idx.view()).flat());
    c.value("jax_nn_standardize", "jax.nn.standardize", jax_nn_standardize(&i.x).flat());
    c.grad("jax_nn_standardize", jax_nn_standardize_grad(&i.x).flat(), Some(central(|p| jax_nn_standardize_sum(p), &i.x)));
    c.finish();
}

// ---- Reductions ------------------------------------------------------------

// jnp.sum
#[oxla::func]
fn jnp_sum(m: &[[f64; 4]; 3]) -> f64 {
    m.sum() + sum(m) + m.sum_axis(Axis(0)).sum()
}

#[oxla::grad(jnp_sum_grad, wrt = m)]
fn jnp_sum_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_sum(m)
}

// jnp.mean
#[oxla::func]
fn jnp_mean(m: &[[f64; 4]; 3]) -> Array1<f64> {
    m.mean_axis(Axis(1)) + m.mean() + mean(m)
}

#[oxla::grad(jnp_mean_grad, wrt = m)]
fn jnp_mean_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_mean(m).sum()
}

// jnp.average
#[oxla::func]
fn jnp_average(x: &[f64; 6]) -> f64 {
    mean(x)
}

#[oxla::grad(jnp_average_grad, wrt = x)]
fn jnp_average_sum(x: &[f64; 6]) -> f64 {
    jnp_average(x)
}

// jnp.max
#[oxla::func]
fn jnp_max(m: &[[f64; 4]; 3]) -> Array1<f64> {
    m.max_axis(Axis(0)) + max(m) + m.max()
}

#[oxla::grad(jnp_max_grad, wrt = m)]
fn jnp_max_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_max(m).sum()
}

// jnp.min
#[oxla::func]
fn jnp_min(m: &[[f64; 4]; 3]) -> Array1<f64> {
    m.min_axis(Axis(1)) + min(m) + m.min()
}

#[oxla::grad(jnp_min_grad, wrt = m)]
fn jnp_min_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_min(m).sum()
}

// jnp.amax
#[oxla::func]
fn jnp_amax(x: &[f64; 6]) -> f64 {
    max(x)
}

#[oxla::grad(jnp_amax_grad, wrt = x)]
fn jnp_amax_sum(x: &[f64; 6]) -> f64 {
    jnp_amax(x)
}

// jnp.amin
#[oxla::func]
fn jnp_amin(x: &[f64; 6]) -> f64 {
    min(x)
}

#[oxla::grad(jnp_amin_grad, wrt = x)]
fn jnp_amin_sum(x: &[f64; 6]) -> f64 {
    jnp_amin(x)
}

// jnp.prod
#[oxla::func]
fn jnp_prod(m: &[[f64; 4]; 3]) -> Array1<f64> {
    m.product_axis(Axis(0)) + m.prod_axis(Axis(0)) + prod(m, Axis(0)) + m.product() + prod(m)
}

#[oxla::grad(jnp_prod_grad, wrt = m)]
fn jnp_prod_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_prod(m).sum()
}

// jnp.cumsum
#[oxla::func]
fn jnp_cumsum(m: &[[f64; 4]; 3]) -> Array2<f64> {
    cumsum(m, Axis(1)) + m.cumsum(Axis(1))
}

#[oxla::grad(jnp_cumsum_grad, wrt = m)]
fn jnp_cumsum_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_cumsum(m).sum()
}

// jnp.cumprod
#[oxla::func]
fn jnp_cumprod(m: &[[f64; 4]; 3]) -> Array2<f64> {
    cumprod(m, Axis(0)) + m.cumprod(Axis(0))
}

#[oxla::grad(jnp_cumprod_grad, wrt = m)]
fn jnp_cumprod_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_cumprod(m).sum()
}

// jnp.var
#[oxla::func]
fn jnp_var(m: &[[f64; 4]; 3]) -> Array1<f64> {
    m.var_axis(Axis(1), 1.0) + m.var(0.0)
}

#[oxla::grad(jnp_var_grad, wrt = m)]
fn jnp_var_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_var(m).sum()
}

// jnp.std
#[oxla::func]
fn jnp_std(m: &[[f64; 4]; 3]) -> Array1<f64> {
    m.std_axis(Axis(0), 0.0) + m.std(1.0)
}

#[oxla::grad(jnp_std_grad, wrt = m)]
fn jnp_std_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_std(m).sum()
}

// jnp.ptp
#[oxla::func]
fn jnp_ptp(x: &[f64; 6]) -> f64 {
    max(x) - min(x)
}

#[oxla::grad(jnp_ptp_grad, wrt = x)]
fn jnp_ptp_sum(x: &[f64; 6]) -> f64 {
    jnp_ptp(x)
}

// jnp.median
#[oxla::func]
fn jnp_median(x: &[f64; 6]) -> f64 {
    sort(x).slice(s![2..4]).mean()
}

#[oxla::grad(jnp_median_grad, wrt = x)]
fn jnp_median_sum(x: &[f64; 6]) -> f64 {
    jnp_median(x)
}

// jnp.argmax
#[oxla::func]
fn jnp_argmax(m: &[[f64; 4]; 3]) -> Array1<i64> {
    argmax(m, Axis(1))
}

// jnp.argmin
#[oxla::func]
fn jnp_argmin(m: &[[f64; 4]; 3]) -> i64 {
    argmin(m)
}

#[test]
fn reductions_rows_match_jax() {
    let i = inputs();
    let mut c = Checks::default();
    c.value("jnp_sum", "jnp.sum", jnp_sum(&i.m).flat());
    c.grad("jnp_sum", jnp_sum_grad(&i.m).flat(), Some(central(|p| jnp_sum_sum(p), &i.m)));
    c.value("jnp_mean", "jnp.mean", jnp_mean(&i.m).flat());
    c.grad("jnp_mean", jnp_mean_grad(&i.m).flat(), Some(central(|p| jnp_mean_sum(p), &i.m)));
    c.value("jnp_average", "jnp.average", jnp_average(&i.x).flat());
    c.grad("jnp_average", jnp_average_grad(&i.x).flat(), Some(central(|p| jnp_average_sum(p), &i.x)));
    c.value("jnp_max", "jnp.max", jnp_max(&i.m).flat());
    c.grad("jnp_max", jnp_max_grad(&i.m).flat(), Some(central(|p| jnp_max_sum(p), &i.m)));
    c.value("jnp_min", "jnp.min", jnp_min(&i.m).flat());
    c.grad("jnp_min", jnp_min_grad(&i.m).flat(), Some(central(|p| jnp_min_sum(p), &i.m)));
    c.value("jnp_amax", "jnp.amax", jnp_amax(&i.x).flat());
    c.grad("jnp_amax", jnp_amax_grad(&i.x).flat(), Some(central(|p| jnp_amax_sum(p), &i.x)));
    c.value("jnp_amin", "jnp.amin", jnp_amin(&i.x).flat());
    c.grad("jnp_amin", jnp_amin_grad(&i.x).flat(), Some(central(|p| jnp_amin_sum(p), &i.x)));
    c.value("jnp_prod", "jnp.prod", jnp_prod(&i.m).flat());
    c.grad("jnp_prod", jnp_prod_grad(&i.m).flat(), Some(central(|p| jnp_prod_sum(p), &i.m)));
    c.value("jnp_cumsum", "jnp.cumsum", jnp_cumsum(&i.m).flat());
    c.grad("jnp_cumsum", jnp_cumsum_grad(&i.m).flat(), Some(central(|p| jnp_cumsum_sum(p), &i.m)));
    c.value("jnp_cumprod", "jnp.cumprod", jnp_cumprod(&i.m).flat());
    c.grad("jnp_cumprod", jnp_cumprod_grad(&i.m).flat(), Some(central(|p| jnp_cumprod_sum(p), &i.m)));
    c.value("jnp_var", "jnp.var", jnp_var(&i.m).flat());
    c.grad("jnp_var", jnp_var_grad(&i.m).flat(), Some(central(|p| jnp_var_sum(p), &i.m)));
    c.value("jnp_std", "jnp.std", jnp_std(&i.m).flat());
    c.grad("jnp_std", jnp_std_grad(&i.m).flat(), Some(central(|p| jnp_std_sum(p), &i.m)));
    c.value("jnp_ptp", "jnp.ptp", jnp_ptp(&i.x).flat());
    c.grad("jnp_ptp", jnp_ptp_grad(&i.x).flat(), Some(central(|p| jnp_ptp_sum(p), &i.x)));
    c.value("jnp_median", "jnp.median", jnp_median(&i.x).flat());
    c.grad("jnp_median", jnp_median_grad(&i.x).flat(), Some(central(|p| jnp_median_sum(p), &i.x)));
    c.value("jnp_argmax", "jnp.argmax", jnp_argmax(&i.m).flat());
    c.value("jnp_argmin", "jnp.argmin", jnp_argmin(&i.m).flat());
    c.finish();
}

// ---- Sorting and selecting -------------------------------------------------

// jnp.sort
#[oxla::func]
fn jnp_sort(m: &[[f64; 4]; 3]) -> Array2<f64> {
    sort(m, Axis(0))
}

#[oxla::grad(jnp_sort_grad, wrt = m)]
fn jnp_sort_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_sort(m).sum()
}

// jnp.argsort
#[oxla::func]
fn jnp_argsort(m: &[[f64; 4]; 3]) -> Array2<i64> {
    argsort(m)
}

// lax.sort
#[oxla::func]
fn lax_sort(x: &[f64; 6]) -> Array1<f64> {
    sort(&x * -1.0)
}

#[oxla::grad(lax_sort_grad, wrt = x)]
fn lax_sort_sum(x: &[f64; 6]) -> f64 {
    lax_sort(x).sum()
}

// lax.top_k
#[oxla::func]
fn lax_top_k(m: &[[f64; 4]; 3]) -> (Array2<f64>, Array2<i64>) {
    let (values, indices) = top_k(m, 2);
        (values, indices)
}

#[test]
fn sorting_rows_match_jax() {
    let i = inputs();
    let mut c = Checks::default();
    c.value("jnp_sort", "jnp.sort", jnp_sort(&i.m).flat());
    c.grad("jnp_sort", jnp_sort_grad(&i.m).flat(), Some(central(|p| jnp_sort_sum(p), &i.m)));
    c.value("jnp_argsort", "jnp.argsort", jnp_argsort(&i.m).flat());
    c.value("lax_sort", "lax.sort", lax_sort(&i.x).flat());
    c.grad("lax_sort", lax_sort_grad(&i.x).flat(), Some(central(|p| lax_sort_sum(p), &i.x)));
    c.value("lax_top_k", "lax.top_k", lax_top_k(&i.m).flat());
    c.finish();
}

// ---- Shape and layout ------------------------------------------------------

// jnp.reshape
#[oxla::func]
fn jnp_reshape(m: &[[f64; 4]; 3]) -> Array2<f64> {
    m.into_shape_with_order((4, 3)).unwrap() + m.to_shape((4, 3)).unwrap() + m.reshape((4, 3))
}

#[oxla::grad(jnp_reshape_grad, wrt = m)]
fn jnp_reshape_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_reshape(m).sum()
}

// jnp.ravel
#[oxla::func]
fn jnp_ravel(m: &[[f64; 4]; 3]) -> Array1<f64> {
    m.flatten() + m.ravel()
}

#[oxla::grad(jnp_ravel_grad, wrt = m)]
fn jnp_ravel_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_ravel(m).sum()
}

// jnp.transpose
#[oxla::func]
fn jnp_transpose(m: &[[f64; 4]; 3]) -> Array2<f64> {
    m.t().to_owned() + m.reversed_axes() + m.permuted_axes([1, 0])
}

#[oxla::grad(jnp_transpose_grad, wrt = m)]
fn jnp_transpose_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_transpose(m).sum()
}

// jnp.swapaxes
#[oxla::func]
fn jnp_swapaxes(m: &[[f64; 4]; 3]) -> Array2<f64> {
    swapaxes(m, 0, 1) + m.swapaxes(0, 1)
}

#[oxla::grad(jnp_swapaxes_grad, wrt = m)]
fn jnp_swapaxes_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_swapaxes(m).sum()
}

// jnp.moveaxis
#[oxla::func]
fn jnp_moveaxis(m: &[[f64; 4]; 3]) -> Array2<f64> {
    moveaxis(m, 0, 1)
}

#[oxla::grad(jnp_moveaxis_grad, wrt = m)]
fn jnp_moveaxis_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_moveaxis(m).sum()
}

// jnp.expand_dims
#[oxla::func]
fn jnp_expand_dims(x: &[f64; 6]) -> Array2<f64> {
    expand_dims(x, Axis(0)) + x.insert_axis(Axis(0))
}

#[oxla::grad(jnp_expand_dims_grad, wrt = x)]
fn jnp_expand_dims_sum(x: &[f64; 6]) -> f64 {
    jnp_expand_dims(x).sum()
}

// jnp.squeeze
#[oxla::func]
fn jnp_squeeze(x: &[f64; 6]) -> Array1<f64> {
    squeeze(expand_dims(x, Axis(1))) + expand_dims(x, Axis(0)).squeeze() + expand_dims(x, Axis(0)).remove_axis(Axis(0))
}

#[oxla::grad(jnp_squeeze_grad, wrt = x)]
fn jnp_squeeze_sum(x: &[f64; 6]) -> f64 {
    jnp_squeeze(x).sum()
}

// jnp.broadcast_to
#[oxla::func]
fn jnp_broadcast_to(x: &[f64; 6]) -> Array2<f64> {
    broadcast_to(x, (3, 6)) + x.broadcast((3, 6)).unwrap()
}

#[oxla::grad(jnp_broadcast_to_grad, wrt = x)]
fn jnp_broadcast_to_sum(x: &[f64; 6]) -> f64 {
    jnp_broadcast_to(x).sum()
}

// jnp.tile
#[oxla::func]
fn jnp_tile(m: &[[f64; 4]; 3]) -> Array2<f64> {
    tile(m, (2, 1))
}

#[oxla::grad(jnp_tile_grad, wrt = m)]
fn jnp_tile_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_tile(m).sum()
}

// jnp.repeat
#[oxla::func]
fn jnp_repeat(m: &[[f64; 4]; 3]) -> Array2<f64> {
    repeat(m, 2, Axis(1))
}

#[oxla::grad(jnp_repeat_grad, wrt = m)]
fn jnp_repeat_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_repeat(m).sum()
}

// jnp.concatenate
#[oxla::func]
fn jnp_concatenate(x: &[f64; 6], y: &[f64; 6]) -> Array1<f64> {
    concatenate(Axis(0), &[x.view(), y.view()])
}

#[oxla::grad(jnp_concatenate_grad, wrt = x)]
fn jnp_concatenate_sum(x: &[f64; 6], y: &[f64; 6]) -> f64 {
    jnp_concatenate(x, y).sum()
}

// jnp.hstack
#[oxla::func]
fn jnp_hstack(x: &[f64; 6], y: &[f64; 6]) -> Array1<f64> {
    concatenate![Axis(0), x, y]
}

#[oxla::grad(jnp_hstack_grad, wrt = x)]
fn jnp_hstack_sum(x: &[f64; 6], y: &[f64; 6]) -> f64 {
    jnp_hstack(x, y).sum()
}

// jnp.vstack
#[oxla::func]
fn jnp_vstack(x: &[f64; 6], y: &[f64; 6]) -> Array2<f64> {
    stack![Axis(0), x, y]
}

#[oxla::grad(jnp_vstack_grad, wrt = x)]
fn jnp_vstack_sum(x: &[f64; 6], y: &[f64; 6]) -> f64 {
    jnp_vstack(x, y).sum()
}

// jnp.stack
#[oxla::func]
fn jnp_stack(x: &[f64; 6], y: &[f64; 6]) -> Array2<f64> {
    stack(Axis(1), &[x.view(), y.view()])
}

#[oxla::grad(jnp_stack_grad, wrt = x)]
fn jnp_stack_sum(x: &[f64; 6], y: &[f64; 6]) -> f64 {
    jnp_stack(x, y).sum()
}

// jnp.roll
#[oxla::func]
fn jnp_roll(m: &[[f64; 4]; 3]) -> Array2<f64> {
    roll(m, 3, Axis(1))
}

#[oxla::grad(jnp_roll_grad, wrt = m)]
fn jnp_roll_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_roll(m).sum()
}

// jnp.asarray
#[oxla::func]
fn jnp_asarray(m: &[[f64; 4]; 3]) -> Array2<f64> {
    m.view().to_owned() + m.clone()
}

#[oxla::grad(jnp_asarray_grad, wrt = m)]
fn jnp_asarray_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_asarray(m).sum()
}

// jnp.copy
#[oxla::func]
fn jnp_copy(m: &[[f64; 4]; 3]) -> Array2<f64> {
    m.to_owned() + m.into_owned()
}

#[oxla::grad(jnp_copy_grad, wrt = m)]
fn jnp_copy_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_copy(m).sum()
}

// jnp.shape
#[oxla::func]
fn jnp_shape(m: &[[f64; 4]; 3]) -> i64 {
    m.len_of(Axis(1)) * 1000 + m.shape()[0] * 100 + m.nrows() * 10 + m.ncols()
}

// len
#[oxla::func]
fn py_len(x: &[f64; 6]) -> i64 {
    x.len()
}

// jnp.size
#[oxla::func]
fn jnp_size(m: &[[f64; 4]; 3]) -> i64 {
    m.nrows() * m.ncols()
}

#[test]
fn shape_rows_match_jax() {
    let i = inputs();
    let mut c = Checks::default();
    c.value("jnp_reshape", "jnp.reshape", jnp_reshape(&i.m).flat());
    c.grad("jnp_reshape", jnp_reshape_grad(&i.m).flat(), Some(central(|p| jnp_reshape_sum(p), &i.m)));
    c.value("jnp_ravel", "jnp.ravel", jnp_ravel(&i.m).flat());
    c.grad("jnp_ravel", jnp_ravel_grad(&i.m).flat(), Some(central(|p| jnp_ravel_sum(p), &i.m)));
    c.value("jnp_transpose", "jnp.transpose", jnp_transpose(&i.m).flat());
    c.grad("jnp_transpose", jnp_transpose_grad(&i.m).flat(), Some(central(|p| jnp_transpose_sum(p), &i.m)));
    c.value("jnp_swapaxes", "jnp.swapaxes", jnp_swapaxes(&i.m).flat());
    c.grad("jnp_swapaxes", jnp_swapaxes_grad(&i.m).flat(), Some(central(|p| jnp_swapaxes_sum(p), &i.m)));
    c.value("jnp_moveaxis", "jnp.moveaxis", jnp_moveaxis(&i.m).flat());
    c.grad("jnp_moveaxis", jnp_moveaxis_grad(&i.m).flat(), Some(central(|p| jnp_moveaxis_sum(p), &i.m)));
    c.value("jnp_expand_dims", "jnp.expand_dims", jnp_expand_dims(&i.x).flat());
    c.grad("jnp_expand_dims", jnp_expand_dims_grad(&i.x).flat(), Some(central(|p| jnp_expand_dims_sum(p), &i.x)));
    c.value("jnp_squeeze", "jnp.squeeze", jnp_squeeze(&i.x).flat());
    c.grad("jnp_squeeze", jnp_squeeze_grad(&i.x).flat(), Some(central(|p| jnp_squeeze_sum(p), &i.x)));
    c.value("jnp_broadcast_to", "jnp.broadcast_to", jnp_broadcast_to(&i.x).flat());
    c.grad("jnp_broadcast_to", jnp_broadcast_to_grad(&i.x).flat(), Some(central(|p| jnp_broadcast_to_sum(p), &i.x)));
    c.value("jnp_tile", "jnp.tile", jnp_tile(&i.m).flat());
    c.grad("jnp_tile", jnp_tile_grad(&i.m).flat(), Some(central(|p| jnp_tile_sum(p), &i.m)));
    c.value("jnp_repeat", "jnp.repeat", jnp_repeat(&i.m).flat());
    c.grad("jnp_repeat", jnp_repeat_grad(&i.m).flat(), Some(central(|p| jnp_repeat_sum(p), &i.m)));
    c.value("jnp_concatenate", "jnp.concatenate", jnp_concatenate(&i.x, &i.y).flat());
    c.grad("jnp_concatenate", jnp_concatenate_grad(&i.x, &i.y).flat(), Some(central(|p| jnp_concatenate_sum(p, &i.y), &i.x)));
    c.value("jnp_hstack", "jnp.hstack", jnp_hstack(&i.x, &i.y).flat());
    c.grad("jnp_hstack", jnp_hstack_grad(&i.x, &i.y).flat(), Some(central(|p| jnp_hstack_sum(p, &i.y), &i.x)));
    c.value("jnp_vstack", "jnp.vstack", jnp_vstack(&i.x, &i.y).flat());
    c.grad("jnp_vstack", jnp_vstack_grad(&i.x, &i.y).flat(), Some(central(|p| jnp_vstack_sum(p, &i.y), &i.x)));
    c.value("jnp_stack", "jnp.stack", jnp_stack(&i.x, &i.y).flat());
    c.grad("jnp_stack", jnp_stack_grad(&i.x, &i.y).flat(), Some(central(|p| jnp_stack_sum(p, &i.y), &i.x)));
    c.value("jnp_roll", "jnp.roll", jnp_roll(&i.m).flat());
    c.grad("jnp_roll", jnp_roll_grad(&i.m).flat(), Some(central(|p| jnp_roll_sum(p), &i.m)));
    c.value("jnp_asarray", "jnp.asarray", jnp_asarray(&i.m).flat());
    c.grad("jnp_asarray", jnp_asarray_grad(&i.m).flat(), Some(central(|p| jnp_asarray_sum(p), &i.m)));
    c.value("jnp_copy", "jnp.copy", jnp_copy(&i.m).flat());
    c.grad("jnp_copy", jnp_copy_grad(&i.m).flat(), Some(central(|p| jnp_copy_sum(p), &i.m)));
    c.value("jnp_shape", "jnp.shape", jnp_shape(&i.m).flat());
    c.value("py_len", "len", py_len(&i.x).flat());
    c.value("jnp_size", "jnp.size", jnp_size(&i.m).flat());
    c.finish();
}

// ---- Indexing, slicing and updates -----------------------------------------

// x[i]
#[oxla::func]
fn py_x_i(x: &[f64; 6], i: usize) -> f64 {
    x[i] * 2.0
}

#[oxla::grad(py_x_i_grad, wrt = x)]
fn py_x_i_sum(x: &[f64; 6], i: usize) -> f64 {
    py_x_i(x, i)
}

// x[i, j]
#[oxla::func]
fn py_x_i_j(m: &[[f64; 4]; 3], i: usize) -> f64 {
    m[[i, 1]] * 2.0
}

#[oxla::grad(py_x_i_j_grad, wrt = m)]
fn py_x_i_j_sum(m: &[[f64; 4]; 3], i: usize) -> f64 {
    py_x_i_j(m, i)
}

// x[i, :]
#[oxla::func]
fn py_x_i_s(m: &[[f64; 4]; 3], i: usize) -> Array1<f64> {
    m.row(i).to_owned() + m.column(i).slice(s![..1])
}

#[oxla::grad(py_x_i_s_grad, wrt = m)]
fn py_x_i_s_sum(m: &[[f64; 4]; 3], i: usize) -> f64 {
    py_x_i_s(m, i).sum()
}

// x[a:b:c]
#[oxla::func]
fn py_x_asbsc(m: &[[f64; 4]; 3]) -> Array2<f64> {
    m.slice(s![1.., ..;2]).to_owned() + m.slice_axis(Axis(0), Slice::from(0..2)).slice(s![.., 1..3])
}

#[oxla::grad(py_x_asbsc_grad, wrt = m)]
fn py_x_asbsc_sum(m: &[[f64; 4]; 3]) -> f64 {
    py_x_asbsc(m).sum()
}

// x[None]
#[oxla::func]
fn py_x_none(x: &[f64; 6]) -> Array2<f64> {
    x.slice(s![NewAxis, ..]).to_owned()
}

#[oxla::grad(py_x_none_grad, wrt = x)]
fn py_x_none_sum(x: &[f64; 6]) -> f64 {
    py_x_none(x).sum()
}

// x[idx]
#[oxla::func]
fn py_x_idx(m: &[[f64; 4]; 3], idx: ArrayView1<i64>) -> Array2<f64> {
    m.select(Axis(1), &idx)
}

#[oxla::grad(py_x_idx_grad, wrt = m)]
fn py_x_idx_sum(m: &[[f64; 4]; 3], idx: ArrayView1<i64>) -> f64 {
    py_x_idx(m, idx).sum()
}

// jnp.take
#[oxla::func]
fn jnp_take(x: &[f64; 6], idx: ArrayView1<i64>) -> Array1<f64> {
    take(x, &idx, Axis(0))
}

#[oxla::grad(jnp_take_grad, wrt = x)]
fn jnp_take_sum(x: &[f64; 6], idx: ArrayView1<i64>) -> f64 {
    jnp_take(x, idx).sum()
}

// jnp.take_along_axis
#[oxla::func]
fn jnp_take_along_axis(m: &[[f64; 4]; 3], idx: ArrayView1<i64>) -> Array1<f64> {
    take_along_axis(m, &idx, Axis(1))
}

#[oxla::grad(jnp_take_along_axis_grad, wrt = m)]
fn jnp_take_along_axis_sum(m: &[[f64; 4]; 3], idx: ArrayView1<i64>) -> f64 {
    jnp_take_along_axis(m, idx).sum()
}

// x.at[i].set
#[oxla::func]
fn py_x_at_i_set(x: &[f64; 6], i: usize) -> Array1<f64> {
    let mut z = x.to_owned();
        z[i] = z[0] * 3.0;
        z
}

#[oxla::grad(py_x_at_i_set_grad, wrt = x)]
fn py_x_at_i_set_sum(x: &[f64; 6], i: usize) -> f64 {
    py_x_at_i_set(x, i).sum()
}

// x.at[i].add
#[oxla::func]
fn py_x_at_i_add(x: &[f64; 6], i: usize) -> Array1<f64> {
    let mut z = x.to_owned();
        z[i] += z[1].sin();
        z
}

#[oxla::grad(py_x_at_i_add_grad, wrt = x)]
fn py_x_at_i_add_sum(x: &[f64; 6], i: usize) -> f64 {
    py_x_at_i_add(x, i).sum()
}

// x.at[i].multiply
#[oxla::func]
fn py_x_at_i_multiply(x: &[f64; 6], i: usize) -> Array1<f64> {
    let mut z = x.to_owned();
        z[i] *= z[4];
        z
}

#[oxla::grad(py_x_at_i_multiply_grad, wrt = x)]
fn py_x_at_i_multiply_sum(x: &[f64; 6], i: usize) -> f64 {
    py_x_at_i_multiply(x, i).sum()
}

// x.at[a:b].set
#[oxla::func]
fn py_x_at_asb_set(x: &[f64; 6], y: &[f64; 6]) -> Array1<f64> {
    let mut z = x.to_owned();
        z.slice_mut(s![1..4]).assign(&(&y.slice(s![..3]) * 2.0));
        z
}

#[oxla::grad(py_x_at_asb_set_grad, wrt = x)]
fn py_x_at_asb_set_sum(x: &[f64; 6], y: &[f64; 6]) -> f64 {
    py_x_at_asb_set(x, y).sum()
}

// lax.dynamic_slice
#[oxla::func]
fn lax_dynamic_slice(x: &[f64; 6], k: i64) -> Array1<f64> {
    x.slice(s![k..k + 3]).to_owned()
}

#[oxla::grad(lax_dynamic_slice_grad, wrt = x)]
fn lax_dynamic_slice_sum(x: &[f64; 6], k: i64) -> f64 {
    lax_dynamic_slice(x, k).sum()
}

// lax.dynamic_update_slice
#[oxla::func]
fn lax_dynamic_update_slice(x: &[f64; 6], y: &[f64; 6], k: i64) -> Array1<f64> {
    let mut z = x.to_owned();
        z.slice_mut(s![k..k + 3]).assign(&y.slice(s![..3]));
        z
}

#[oxla::grad(lax_dynamic_update_slice_grad, wrt = x)]
fn lax_dynamic_update_slice_sum(x: &[f64; 6], y: &[f64; 6], k: i64) -> f64 {
    lax_dynamic_update_slice(x, y, k).sum()
}

#[test]
fn indexing_rows_match_jax() {
    let i = inputs();
    let mut c = Checks::default();
    c.value("py_x_i", "x[i]", py_x_i(&i.x, i.i).flat());
    c.grad("py_x_i", py_x_i_grad(&i.x, i.i).flat(), Some(central(|p| py_x_i_sum(p, i.i), &i.x)));
    c.value("py_x_i_j", "x[i, j]", py_x_i_j(&i.m, i.i).flat());
    c.grad("py_x_i_j", py_x_i_j_grad(&i.m, i.i).flat(), Some(central(|p| py_x_i_j_sum(p, i.i), &i.m)));
    c.value("py_x_i_s", "x[i, :]", py_x_i_s(&i.m, i.i).flat());
    c.grad("py_x_i_s", py_x_i_s_grad(&i.m, i.i).flat(), Some(central(|p| py_x_i_s_sum(p, i.i), &i.m)));
    c.value("py_x_asbsc", "x[a:b:c]", py_x_asbsc(&i.m).flat());
    c.grad("py_x_asbsc", py_x_asbsc_grad(&i.m).flat(), Some(central(|p| py_x_asbsc_sum(p), &i.m)));
    c.value("py_x_none", "x[None]", py_x_none(&i.x).flat());
    c.grad("py_x_none", py_x_none_grad(&i.x).flat(), Some(central(|p| py_x_none_sum(p), &i.x)));
    c.value("py_x_idx", "x[idx]", py_x_idx(&i.m, i.idx.view()).flat());
    c.grad("py_x_idx", py_x_idx_grad(&i.m, i.idx.view()).flat(), Some(central(|p| py_x_idx_sum(p, i.idx.view()), &i.m)));
    c.value("jnp_take", "jnp.take", jnp_take(&i.x, i.idx.view()).flat());
    c.grad("jnp_take", jnp_take_grad(&i.x, i.idx.view()).flat(), Some(central(|p| jnp_take_sum(p, i.idx.view()), &i.x)));
    c.value("jnp_take_along_axis", "jnp.take_along_axis", jnp_take_along_axis(&i.m, i.idx.view()).flat());
    c.grad("jnp_take_along_axis", jnp_take_along_axis_grad(&i.m, i.idx.view()).flat(), Some(central(|p| jnp_take_along_axis_sum(p, i.idx.view()), &i.m)));
    c.value("py_x_at_i_set", "x.at[i].set", py_x_at_i_set(&i.x, i.i).flat());
    c.grad("py_x_at_i_set", py_x_at_i_set_grad(&i.x, i.i).flat(), Some(central(|p| py_x_at_i_set_sum(p, i.i), &i.x)));
    c.value("py_x_at_i_add", "x.at[i].add", py_x_at_i_add(&i.x, i.i).flat());
    c.grad("py_x_at_i_add", py_x_at_i_add_grad(&i.x, i.i).flat(), Some(central(|p| py_x_at_i_add_sum(p, i.i), &i.x)));
    c.value("py_x_at_i_multiply", "x.at[i].multiply", py_x_at_i_multiply(&i.x, i.i).flat());
    c.grad("py_x_at_i_multiply", py_x_at_i_multiply_grad(&i.x, i.i).flat(), Some(central(|p| py_x_at_i_multiply_sum(p, i.i), &i.x)));
    c.value("py_x_at_asb_set", "x.at[a:b].set", py_x_at_asb_set(&i.x, &i.y).flat());
    c.grad("py_x_at_asb_set", py_x_at_asb_set_grad(&i.x, &i.y).flat(), Some(central(|p| py_x_at_asb_set_sum(p, &i.y), &i.x)));
    c.value("lax_dynamic_slice", "lax.dynamic_slice", lax_dynamic_slice(&i.x, i.k).flat());
    c.grad("lax_dynamic_slice", lax_dynamic_slice_grad(&i.x, i.k).flat(), Some(central(|p| lax_dynamic_slice_sum(p, i.k), &i.x)));
    c.value("lax_dynamic_update_slice", "lax.dynamic_update_slice", lax_dynamic_update_slice(&i.x, &i.y, i.k).flat());
    c.grad("lax_dynamic_update_slice", lax_dynamic_update_slice_grad(&i.x, &i.y, i.k).flat(), Some(central(|p| lax_dynamic_update_slice_sum(p, &i.y, i.k), &i.x)));
    c.finish();
}

// ---- Constructors ----------------------------------------------------------

// jnp.zeros
#[oxla::func]
fn jnp_zeros(m: &[[f64; 4]; 3]) -> Array2<f64> {
    &m + zeros((3, 4))
}

#[oxla::grad(jnp_zeros_grad, wrt = m)]
fn jnp_zeros_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_zeros(m).sum()
}

// jnp.ones
#[oxla::func]
fn jnp_ones(m: &[[f64; 4]; 3]) -> Array2<f64> {
    &m * ones(m.raw_dim())
}

#[oxla::grad(jnp_ones_grad, wrt = m)]
fn jnp_ones_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_ones(m).sum()
}

// jnp.full
#[oxla::func]
fn jnp_full(x: &[f64; 6]) -> Array2<f64> {
    full((2, 3), x[1])
}

#[oxla::grad(jnp_full_grad, wrt = x)]
fn jnp_full_sum(x: &[f64; 6]) -> f64 {
    jnp_full(x).sum()
}

// jnp.zeros_like
#[oxla::func]
fn jnp_zeros_like(x: &[f64; 6]) -> Array1<f64> {
    zeros_like(x) + &x
}

#[oxla::grad(jnp_zeros_like_grad, wrt = x)]
fn jnp_zeros_like_sum(x: &[f64; 6]) -> f64 {
    jnp_zeros_like(x).sum()
}

// jnp.ones_like
#[oxla::func]
fn jnp_ones_like(x: &[f64; 6]) -> Array1<f64> {
    ones_like(x) * &x
}

#[oxla::grad(jnp_ones_like_grad, wrt = x)]
fn jnp_ones_like_sum(x: &[f64; 6]) -> f64 {
    jnp_ones_like(x).sum()
}

// jnp.full_like
#[oxla::func]
fn jnp_full_like(x: &[f64; 6]) -> Array1<f64> {
    full_like(x, x[2])
}

#[oxla::grad(jnp_full_like_grad, wrt = x)]
fn jnp_full_like_sum(x: &[f64; 6]) -> f64 {
    jnp_full_like(x).sum()
}

// jnp.arange
#[oxla::func]
fn jnp_arange(x: &[f64; 6]) -> Array1<f64> {
    arange(6) * &x
}

#[oxla::grad(jnp_arange_grad, wrt = x)]
fn jnp_arange_sum(x: &[f64; 6]) -> f64 {
    jnp_arange(x).sum()
}

// jnp.linspace
#[oxla::func]
fn jnp_linspace(x: &[f64; 6]) -> Array1<f64> {
    arange(6) * 0.2 + &x
}

#[oxla::grad(jnp_linspace_grad, wrt = x)]
fn jnp_linspace_sum(x: &[f64; 6]) -> f64 {
    jnp_linspace(x).sum()
}

// jnp.eye
#[oxla::func]
fn jnp_eye(a: &[[f64; 3]; 3]) -> Array2<f64> {
    eye(3) * &a
}

#[oxla::grad(jnp_eye_grad, wrt = a)]
fn jnp_eye_sum(a: &[[f64; 3]; 3]) -> f64 {
    jnp_eye(a).sum()
}

// jnp.identity
#[oxla::func]
fn jnp_identity(a: &[[f64; 3]; 3]) -> Array2<f64> {
    eye(3) + &a
}

#[oxla::grad(jnp_identity_grad, wrt = a)]
fn jnp_identity_sum(a: &[[f64; 3]; 3]) -> f64 {
    jnp_identity(a).sum()
}

// jnp.where
#[oxla::func]
fn jnp_where(x: &[f64; 6], y: &[f64; 6]) -> Array1<f64> {
    where_(x < y, &x * 2.0, &y) + select(x > y, &x, &y)
}

#[oxla::grad(jnp_where_grad, wrt = x)]
fn jnp_where_sum(x: &[f64; 6], y: &[f64; 6]) -> f64 {
    jnp_where(x, y).sum()
}

// jnp.meshgrid
#[oxla::func]
fn jnp_meshgrid(x: &[f64; 6], v: &[f64; 4]) -> Array2<f64> {
    let (xx, yy) = meshgrid(&x, &v);
        &xx * &yy + &xx
}

#[oxla::grad(jnp_meshgrid_grad, wrt = x)]
fn jnp_meshgrid_sum(x: &[f64; 6], v: &[f64; 4]) -> f64 {
    jnp_meshgrid(x, v).sum()
}

#[test]
fn constructors_rows_match_jax() {
    let i = inputs();
    let mut c = Checks::default();
    c.value("jnp_zeros", "jnp.zeros", jnp_zeros(&i.m).flat());
    c.grad("jnp_zeros", jnp_zeros_grad(&i.m).flat(), Some(central(|p| jnp_zeros_sum(p), &i.m)));
    c.value("jnp_ones", "jnp.ones", jnp_ones(&i.m).flat());
    c.grad("jnp_ones", jnp_ones_grad(&i.m).flat(), Some(central(|p| jnp_ones_sum(p), &i.m)));
    c.value("jnp_full", "jnp.full", jnp_full(&i.x).flat());
    c.grad("jnp_full", jnp_full_grad(&i.x).flat(), Some(central(|p| jnp_full_sum(p), &i.x)));
    c.value("jnp_zeros_like", "jnp.zeros_like", jnp_zeros_like(&i.x).flat());
    c.grad("jnp_zeros_like", jnp_zeros_like_grad(&i.x).flat(), Some(central(|p| jnp_zeros_like_sum(p), &i.x)));
    c.value("jnp_ones_like", "jnp.ones_like", jnp_ones_like(&i.x).flat());
    c.grad("jnp_ones_like", jnp_ones_like_grad(&i.x).flat(), Some(central(|p| jnp_ones_like_sum(p), &i.x)));
    c.value("jnp_full_like", "jnp.full_like", jnp_full_like(&i.x).flat());
    c.grad("jnp_full_like", jnp_full_like_grad(&i.x).flat(), Some(central(|p| jnp_full_like_sum(p), &i.x)));
    c.value("jnp_arange", "jnp.arange", jnp_arange(&i.x).flat());
    c.grad("jnp_arange", jnp_arange_grad(&i.x).flat(), Some(central(|p| jnp_arange_sum(p), &i.x)));
    c.value("jnp_linspace", "jnp.linspace", jnp_linspace(&i.x).flat());
    c.grad("jnp_linspace", jnp_linspace_grad(&i.x).flat(), Some(central(|p| jnp_linspace_sum(p), &i.x)));
    c.value("jnp_eye", "jnp.eye", jnp_eye(&i.a).flat());
    c.grad("jnp_eye", jnp_eye_grad(&i.a).flat(), Some(central(|p| jnp_eye_sum(p), &i.a)));
    c.value("jnp_identity", "jnp.identity", jnp_identity(&i.a).flat());
    c.grad("jnp_identity", jnp_identity_grad(&i.a).flat(), Some(central(|p| jnp_identity_sum(p), &i.a)));
    c.value("jnp_where", "jnp.where", jnp_where(&i.x, &i.y).flat());
    c.grad("jnp_where", jnp_where_grad(&i.x, &i.y).flat(), Some(central(|p| jnp_where_sum(p, &i.y), &i.x)));
    c.value("jnp_meshgrid", "jnp.meshgrid", jnp_meshgrid(&i.x, &i.v).flat());
    c.grad("jnp_meshgrid", jnp_meshgrid_grad(&i.x, &i.v).flat(), Some(central(|p| jnp_meshgrid_sum(p, &i.v), &i.x)));
    c.finish();
}

// ---- Linear algebra --------------------------------------------------------

// jnp.dot
#[oxla::func]
fn jnp_dot(m: &[[f64; 4]; 3], v: &[f64; 4]) -> Array1<f64> {
    m.dot(&v) + dot(m, v)
}

#[oxla::grad(jnp_dot_grad, wrt = m)]
fn jnp_dot_sum(m: &[[f64; 4]; 3], v: &[f64; 4]) -> f64 {
    jnp_dot(m, v).sum()
}

// jnp.matmul
#[oxla::func]
fn jnp_matmul(m: &[[f64; 4]; 3], n: &[[f64; 2]; 4]) -> Array2<f64> {
    matmul(m, n)
}

#[oxla::grad(jnp_matmul_grad, wrt = m)]
fn jnp_matmul_sum(m: &[[f64; 4]; 3], n: &[[f64; 2]; 4]) -> f64 {
    jnp_matmul(m, n).sum()
}

// a @ b
#[oxla::func]
fn py_a_matmul_b(m: &[[f64; 4]; 3], n: &[[f64; 2]; 4]) -> Array2<f64> {
    m.dot(&n)
}

#[oxla::grad(py_a_matmul_b_grad, wrt = m)]
fn py_a_matmul_b_sum(m: &[[f64; 4]; 3], n: &[[f64; 2]; 4]) -> f64 {
    py_a_matmul_b(m, n).sum()
}

// jnp.vdot
#[oxla::func]
fn jnp_vdot(x: &[f64; 6], y: &[f64; 6]) -> f64 {
    dot(x, y)
}

#[oxla::grad(jnp_vdot_grad, wrt = x)]
fn jnp_vdot_sum(x: &[f64; 6], y: &[f64; 6]) -> f64 {
    jnp_vdot(x, y)
}

// jnp.inner
#[oxla::func]
fn jnp_inner(y: &[f64; 6], x: &[f64; 6]) -> f64 {
    dot(y, x)
}

#[oxla::grad(jnp_inner_grad, wrt = y)]
fn jnp_inner_sum(y: &[f64; 6], x: &[f64; 6]) -> f64 {
    jnp_inner(y, x)
}

// jnp.outer
#[oxla::func]
fn jnp_outer(x: &[f64; 6], v: &[f64; 4]) -> Array2<f64> {
    outer(x, v)
}

#[oxla::grad(jnp_outer_grad, wrt = x)]
fn jnp_outer_sum(x: &[f64; 6], v: &[f64; 4]) -> f64 {
    jnp_outer(x, v).sum()
}

// jnp.einsum
#[oxla::func]
fn jnp_einsum(m: &[[f64; 4]; 3], n: &[[f64; 2]; 4]) -> Array2<f64> {
    einsum("ij,jk->ki", m, n)
}

#[oxla::grad(jnp_einsum_grad, wrt = m)]
fn jnp_einsum_sum(m: &[[f64; 4]; 3], n: &[[f64; 2]; 4]) -> f64 {
    jnp_einsum(m, n).sum()
}

// jnp.tensordot
#[oxla::func]
fn jnp_tensordot(m: &[[f64; 4]; 3], a: &[[f64; 3]; 3]) -> Array2<f64> {
    einsum("ij,ik->jk", m, a)
}

#[oxla::grad(jnp_tensordot_grad, wrt = m)]
fn jnp_tensordot_sum(m: &[[f64; 4]; 3], a: &[[f64; 3]; 3]) -> f64 {
    jnp_tensordot(m, a).sum()
}

// lax.dot_general
#[oxla::func]
fn lax_dot_general(m: &[[f64; 4]; 3], n: &[[f64; 2]; 4]) -> Array2<f64> {
    einsum("ij,jk->ik", m, n)
}

#[oxla::grad(lax_dot_general_grad, wrt = m)]
fn lax_dot_general_sum(m: &[[f64; 4]; 3], n: &[[f64; 2]; 4]) -> f64 {
    lax_dot_general(m, n).sum()
}

// jnp.linalg.norm
#[oxla::func]
fn jnp_linalg_norm(m: &[[f64; 4]; 3]) -> Array1<f64> {
    norm(m, Axis(1)) + norm(m)
}

#[oxla::grad(jnp_linalg_norm_grad, wrt = m)]
fn jnp_linalg_norm_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_linalg_norm(m).sum()
}

// jnp.diag
#[oxla::func]
fn jnp_diag(x: &[f64; 6]) -> Array2<f64> {
    diag(x)
}

#[oxla::grad(jnp_diag_grad, wrt = x)]
fn jnp_diag_sum(x: &[f64; 6]) -> f64 {
    jnp_diag(x).sum()
}

// jnp.diagonal
#[oxla::func]
fn jnp_diagonal(m: &[[f64; 4]; 3]) -> Array1<f64> {
    m.diag().to_owned() + diag(m)
}

#[oxla::grad(jnp_diagonal_grad, wrt = m)]
fn jnp_diagonal_sum(m: &[[f64; 4]; 3]) -> f64 {
    jnp_diagonal(m).sum()
}

// jnp.trace
#[oxla::func]
fn jnp_trace(a: &[[f64; 3]; 3]) -> f64 {
    a.diag().sum()
}

#[oxla::grad(jnp_trace_grad, wrt = a)]
fn jnp_trace_sum(a: &[[f64; 3]; 3]) -> f64 {
    jnp_trace(a)
}

// jnp.linalg.cholesky
#[oxla::func]
fn jnp_linalg_cholesky(a: &[[f64; 3]; 3]) -> Array2<f64> {
    cholesky(a.dot(&a.t()))
}

#[oxla::grad(jnp_linalg_cholesky_grad, wrt = a)]
fn jnp_linalg_cholesky_sum(a: &[[f64; 3]; 3]) -> f64 {
    jnp_linalg_cholesky(a).sum()
}

// jnp.linalg.solve
#[oxla::func]
fn jnp_linalg_solve(a: &[[f64; 3]; 3], m: &[[f64; 4]; 3]) -> Array2<f64> {
    solve(a, m)
}

#[oxla::grad(jnp_linalg_solve_grad, wrt = a)]
fn jnp_linalg_solve_sum(a: &[[f64; 3]; 3], m: &[[f64; 4]; 3]) -> f64 {
    jnp_linalg_solve(a, m).sum()
}

// jnp.linalg.inv
#[oxla::func]
fn jnp_linalg_inv(a: &[[f64; 3]; 3]) -> Array2<f64> {
    inv(a)
}

#[oxla::grad(jnp_linalg_inv_grad, wrt = a)]
fn jnp_linalg_inv_sum(a: &[[f64; 3]; 3]) -> f64 {
    jnp_linalg_inv(a).sum()
}

// jnp.linalg.det
#[oxla::func]
fn jnp_linalg_det(a: &[[f64; 3]; 3]) -> f64 {
    det(a)
}

#[oxla::grad(jnp_linalg_det_grad, wrt = a)]
fn jnp_linalg_det_sum(a: &[[f64; 3]; 3]) -> f64 {
    jnp_linalg_det(a)
}

// jnp.linalg.slogdet
#[oxla::func]
fn jnp_linalg_slogdet(a: &[[f64; 3]; 3]) -> f64 {
    let (sign, logabsdet) = slogdet(a);
        sign * logabsdet
}

#[oxla::grad(jnp_linalg_slogdet_grad, wrt = a)]
fn jnp_linalg_slogdet_sum(a: &[[f64; 3]; 3]) -> f64 {
    jnp_linalg_slogdet(a)
}

// jax.scipy.linalg.solve_triangular
#[oxla::func]
fn jax_scipy_linalg_solve_triangular(a: &[[f64; 3]; 3], m: &[[f64; 4]; 3]) -> Array2<f64> {
    solve_triangular(a, m, true)
}

#[oxla::grad(jax_scipy_linalg_solve_triangular_grad, wrt = a)]
fn jax_scipy_linalg_solve_triangular_sum(a: &[[f64; 3]; 3], m: &[[f64; 4]; 3]) -> f64 {
    jax_scipy_linalg_solve_triangular(a, m).sum()
}

// jax.scipy.linalg.cho_solve
#[oxla::func]
fn jax_scipy_linalg_cho_solve(a: &[[f64; 3]; 3], m: &[[f64; 4]; 3]) -> Array2<f64> {
    cho_solve(cholesky(a.dot(&a.t())), m)
}

#[oxla::grad(jax_scipy_linalg_cho_solve_grad, wrt = a)]
fn jax_scipy_linalg_cho_solve_sum(a: &[[f64; 3]; 3], m: &[[f64; 4]; 3]) -> f64 {
    jax_scipy_linalg_cho_solve(a, m).sum()
}

// lax.linalg.triangular_solve
#[oxla::func]
fn lax_linalg_triangular_solve(a: &[[f64; 3]; 3], m: &[[f64; 4]; 3]) -> Array2<f64> {
    triangular_solve(a, m, true, false, true, false)
}

#[oxla::grad(lax_linalg_triangular_solve_grad, wrt = a)]
fn lax_linalg_triangular_solve_sum(a: &[[f64; 3]; 3], m: &[[f64; 4]; 3]) -> f64 {
    lax_linalg_triangular_solve(a, m).sum()
}

#[test]
fn linalg_rows_match_jax() {
    let i = inputs();
    let mut c = Checks::default();
    c.value("jnp_dot", "jnp.dot", jnp_dot(&i.m, &i.v).flat());
    c.grad("jnp_dot", jnp_dot_grad(&i.m, &i.v).flat(), Some(central(|p| jnp_dot_sum(p, &i.v), &i.m)));
    c.value("jnp_matmul", "jnp.matmul", jnp_matmul(&i.m, &i.n).flat());
    c.grad("jnp_matmul", jnp_matmul_grad(&i.m, &i.n).flat(), Some(central(|p| jnp_matmul_sum(p, &i.n), &i.m)));
    c.value("py_a_matmul_b", "a @ b", py_a_matmul_b(&i.m, &i.n).flat());
    c.grad("py_a_matmul_b", py_a_matmul_b_grad(&i.m, &i.n).flat(), Some(central(|p| py_a_matmul_b_sum(p, &i.n), &i.m)));
    c.value("jnp_vdot", "jnp.vdot", jnp_vdot(&i.x, &i.y).flat());
    c.grad("jnp_vdot", jnp_vdot_grad(&i.x, &i.y).flat(), Some(central(|p| jnp_vdot_sum(p, &i.y), &i.x)));
    c.value("jnp_inner", "jnp.inner", jnp_inner(&i.y, &i.x).flat());
    c.grad("jnp_inner", jnp_inner_grad(&i.y, &i.x).flat(), Some(central(|p| jnp_inner_sum(p, &i.x), &i.y)));
    c.value("jnp_outer", "jnp.outer", jnp_outer(&i.x, &i.v).flat());
    c.grad("jnp_outer", jnp_outer_grad(&i.x, &i.v).flat(), Some(central(|p| jnp_outer_sum(p, &i.v), &i.x)));
    c.value("jnp_einsum", "jnp.einsum", jnp_einsum(&i.m, &i.n).flat());
    c.grad("jnp_einsum", jnp_einsum_grad(&i.m, &i.n).flat(), Some(central(|p| jnp_einsum_sum(p, &i.n), &i.m)));
    c.value("jnp_tensordot", "jnp.tensordot", jnp_tensordot(&i.m, &i.a).flat());
    c.grad("jnp_tensordot", jnp_tensordot_grad(&i.m, &i.a).flat(), Some(central(|p| jnp_tensordot_sum(p, &i.a), &i.m)));
    c.value("lax_dot_general", "lax.dot_general", lax_dot_general(&i.m, &i.n).flat());
    c.grad("lax_dot_general", lax_dot_general_grad(&i.m, &i.n).flat(), Some(central(|p| lax_dot_general_sum(p, &i.n), &i.m)));
    c.value("jnp_linalg_norm", "jnp.linalg.norm", jnp_linalg_norm(&i.m).flat());
    c.grad("jnp_linalg_norm", jnp_linalg_norm_grad(&i.m).flat(), Some(central(|p| jnp_linalg_norm_sum(p), &i.m)));
    c.value("jnp_diag", "jnp.diag", jnp_diag(&i.x).flat());
    c.grad("jnp_diag", jnp_diag_grad(&i.x).flat(), Some(central(|p| jnp_diag_sum(p), &i.x)));
    c.value("jnp_diagonal", "jnp.diagonal", jnp_diagonal(&i.m).flat());
    c.grad("jnp_diagonal", jnp_diagonal_grad(&i.m).flat(), Some(central(|p| jnp_diagonal_sum(p), &i.m)));
    c.value("jnp_trace", "jnp.trace", jnp_trace(&i.a).flat());
    c.grad("jnp_trace", jnp_trace_grad(&i.a).flat(), Some(central(|p| jnp_trace_sum(p), &i.a)));
    c.value("jnp_linalg_cholesky", "jnp.linalg.cholesky", jnp_linalg_cholesky(&i.a).flat());
    c.grad("jnp_linalg_cholesky", jnp_linalg_cholesky_grad(&i.a).flat(), Some(central(|p| jnp_linalg_cholesky_sum(p), &i.a)));
    c.value("jnp_linalg_solve", "jnp.linalg.solve", jnp_linalg_solve(&i.a, &i.m).flat());
    c.grad("jnp_linalg_solve", jnp_linalg_solve_grad(&i.a, &i.m).flat(), Some(central(|p| jnp_linalg_solve_sum(p, &i.m), &i.a)));
    c.value("jnp_linalg_inv", "jnp.linalg.inv", jnp_linalg_inv(&i.a).flat());
    c.grad("jnp_linalg_inv", jnp_linalg_inv_grad(&i.a).flat(), Some(central(|p| jnp_linalg_inv_sum(p), &i.a)));
    c.value("jnp_linalg_det", "jnp.linalg.det", jnp_linalg_det(&i.a).flat());
    c.grad("jnp_linalg_det", jnp_linalg_det_grad(&i.a).flat(), Some(central(|p| jnp_linalg_det_sum(p), &i.a)));
    c.value("jnp_linalg_slogdet", "jnp.linalg.slogdet", jnp_linalg_slogdet(&i.a).flat());
    c.grad("jnp_linalg_slogdet", jnp_linalg_slogdet_grad(&i.a).flat(), Some(central(|p| jnp_linalg_slogdet_sum(p), &i.a)));
    c.value("jax_scipy_linalg_solve_triangular", "jax.scipy.linalg.solve_triangular", jax_scipy_linalg_solve_triangular(&i.a, &i.m).flat());
    c.grad("jax_scipy_linalg_solve_triangular", jax_scipy_linalg_solve_triangular_grad(&i.a, &i.m).flat(), Some(central(|p| jax_scipy_linalg_solve_triangular_sum(p, &i.m), &i.a)));
    c.value("jax_scipy_linalg_cho_solve", "jax.scipy.linalg.cho_solve", jax_scipy_linalg_cho_solve(&i.a, &i.m).flat());
    c.grad("jax_scipy_linalg_cho_solve", jax_scipy_linalg_cho_solve_grad(&i.a, &i.m).flat(), Some(central(|p| jax_scipy_linalg_cho_solve_sum(p, &i.m), &i.a)));
    c.value("lax_linalg_triangular_solve", "lax.linalg.triangular_solve", lax_linalg_triangular_solve(&i.a, &i.m).flat());
    c.grad("lax_linalg_triangular_solve", lax_linalg_triangular_solve_grad(&i.a, &i.m).flat(), Some(central(|p| lax_linalg_triangular_solve_sum(p, &i.m), &i.a)));
    c.finish();
}

// ---- Control flow ----------------------------------------------------------

// lax.fori_loop
#[oxla::func]
fn lax_fori_loop(x: &[f64; 6]) -> f64 {
    let mut c = 0.0;
        for t in 0..4 {
            c = c + x[t] * x[t + 1];
        }
        c
}

#[oxla::grad(lax_fori_loop_grad, wrt = x)]
fn lax_fori_loop_sum(x: &[f64; 6]) -> f64 {
    lax_fori_loop(x)
}

// lax.while_loop
#[oxla::func]
fn lax_while_loop(x: &[f64; 6], w: f64) -> Array1<f64> {
    let mut r = w;
        let mut c = x.to_owned();
        while r < 2.0 {
            c = c.sin() * 1.1 + &x;
            r = r + 0.5;
        }
        c
}

// lax.scan
#[oxla::func]
fn lax_scan(x: &[f64; 6]) -> Array1<f64> {
    let mut h = 0.0;
        let mut hs = zeros(x.len());
        for t in 0..x.len() {
            h = (h + x[t]).tanh();
            hs[t] = h;
        }
        hs
}

#[oxla::grad(lax_scan_grad, wrt = x)]
fn lax_scan_sum(x: &[f64; 6]) -> f64 {
    lax_scan(x).sum()
}

// lax.cond
#[oxla::func]
fn lax_cond(x: &[f64; 6], w: f64) -> Array1<f64> {
    if w < 1.0 { x.sin() } else { x.cos() }
}

#[oxla::grad(lax_cond_grad, wrt = x)]
fn lax_cond_sum(x: &[f64; 6], w: f64) -> f64 {
    lax_cond(x, w).sum()
}

// lax.switch
#[oxla::func]
fn lax_switch(x: &[f64; 6], i: usize) -> Array1<f64> {
    match i {
            0 => x.sin(),
            1 => x.cos(),
            _ => x.exp(),
        }
}

#[oxla::grad(lax_switch_grad, wrt = x)]
fn lax_switch_sum(x: &[f64; 6], i: usize) -> f64 {
    lax_switch(x, i).sum()
}

// lax.select
#[oxla::func]
fn lax_select(x: &[f64; 6], y: &[f64; 6]) -> Array1<f64> {
    select(x < y, &x, &y)
}

#[oxla::grad(lax_select_grad, wrt = x)]
fn lax_select_sum(x: &[f64; 6], y: &[f64; 6]) -> f64 {
    lax_select(x, y).sum()
}

// jax.checkpoint
#[oxla::func]
fn jax_checkpoint(x: &[f64; 6]) -> f64 {
    let mut c = 0.0;
        for t in oxla::checkpoint(0..5) {
            c = (c + x[t]).sin();
        }
        c
}

#[oxla::grad(jax_checkpoint_grad, wrt = x)]
fn jax_checkpoint_sum(x: &[f64; 6]) -> f64 {
    jax_checkpoint(x)
}

// jax.custom_jvp
#[oxla::func]
#[oxla::custom_jvp(jvp = jax_custom_jvp_rule)]
fn jax_custom_jvp_f(x: f64) -> f64 {
    (1.0 + x.exp()).ln()
}

/// Twice the true derivative, so agreeing with JAX shows the rule is used.
#[oxla::func]
fn jax_custom_jvp_rule(x: f64, t: f64) -> (f64, f64) {
    let e = x.exp();
    ((1.0 + e).ln(), 2.0 * (1.0 - 1.0 / (1.0 + e)) * t)
}

#[oxla::grad(jax_custom_jvp)]
fn jax_custom_jvp_base(x: f64) -> f64 {
    jax_custom_jvp_f(x) * x
}

// jax.custom_vjp
#[oxla::func]
#[oxla::custom_vjp(fwd = jax_custom_vjp_fwd, bwd = jax_custom_vjp_bwd)]
fn jax_custom_vjp_f(x: f64) -> f64 {
    x.sin()
}

#[oxla::func]
fn jax_custom_vjp_fwd(x: f64) -> (f64, f64) {
    (x.sin(), x.cos())
}

/// The true cotangent, clipped into [-0.1, 0.1].
#[oxla::func]
fn jax_custom_vjp_bwd(c: f64, g: f64) -> f64 {
    clip(c * g, -0.1, 0.1)
}

#[oxla::grad(jax_custom_vjp)]
fn jax_custom_vjp_base(x: f64) -> f64 {
    jax_custom_vjp_f(x) * 3.0
}

#[test]
fn control_rows_match_jax() {
    let i = inputs();
    let mut c = Checks::default();
    c.value("lax_fori_loop", "lax.fori_loop", lax_fori_loop(&i.x).flat());
    c.grad("lax_fori_loop", lax_fori_loop_grad(&i.x).flat(), Some(central(|p| lax_fori_loop_sum(p), &i.x)));
    c.value("lax_while_loop", "lax.while_loop", lax_while_loop(&i.x, i.w).flat());
    c.value("lax_scan", "lax.scan", lax_scan(&i.x).flat());
    c.grad("lax_scan", lax_scan_grad(&i.x).flat(), Some(central(|p| lax_scan_sum(p), &i.x)));
    c.value("lax_cond", "lax.cond", lax_cond(&i.x, i.w).flat());
    c.grad("lax_cond", lax_cond_grad(&i.x, i.w).flat(), Some(central(|p| lax_cond_sum(p, i.w), &i.x)));
    c.value("lax_switch", "lax.switch", lax_switch(&i.x, i.i).flat());
    c.grad("lax_switch", lax_switch_grad(&i.x, i.i).flat(), Some(central(|p| lax_switch_sum(p, i.i), &i.x)));
    c.value("lax_select", "lax.select", lax_select(&i.x, &i.y).flat());
    c.grad("lax_select", lax_select_grad(&i.x, &i.y).flat(), Some(central(|p| lax_select_sum(p, &i.y), &i.x)));
    c.value("jax_checkpoint", "jax.checkpoint", jax_checkpoint(&i.x).flat());
    c.grad("jax_checkpoint", jax_checkpoint_grad(&i.x).flat(), Some(central(|p| jax_checkpoint_sum(p), &i.x)));
    c.value("jax_custom_jvp", "jax.custom_jvp", jax_custom_jvp(1.5).flat());
    c.value("jax_custom_vjp", "jax.custom_vjp", jax_custom_vjp(0.5).flat());
    c.finish();
}

// ---- Other lax primitives --------------------------------------------------

// lax.stop_gradient
#[oxla::func]
fn lax_stop_gradient(x: &[f64; 6]) -> Array1<f64> {
    stop_gradient(x) * &x
}

#[oxla::grad(lax_stop_gradient_grad, wrt = x)]
fn lax_stop_gradient_sum(x: &[f64; 6]) -> f64 {
    lax_stop_gradient(x).sum()
}

// lax.logistic
#[oxla::func]
fn lax_logistic(x: &[f64; 6]) -> Array1<f64> {
    sigmoid(x)
}

#[oxla::grad(lax_logistic_grad, wrt = x)]
fn lax_logistic_sum(x: &[f64; 6]) -> f64 {
    lax_logistic(x).sum()
}

// lax.clamp
#[oxla::func]
fn lax_clamp(m: &[[f64; 4]; 3]) -> Array2<f64> {
    m.clamp(-0.3, 0.3)
}

#[oxla::grad(lax_clamp_grad, wrt = m)]
fn lax_clamp_sum(m: &[[f64; 4]; 3]) -> f64 {
    lax_clamp(m).sum()
}

// lax.pow
#[oxla::func]
fn lax_pow(x: &[f64; 6], y: &[f64; 6]) -> Array1<f64> {
    x.powf(&y)
}

#[oxla::grad(lax_pow_grad, wrt = x)]
fn lax_pow_sum(x: &[f64; 6], y: &[f64; 6]) -> f64 {
    lax_pow(x, y).sum()
}

// lax.broadcast_in_dim
#[oxla::func]
fn lax_broadcast_in_dim(x: &[f64; 6]) -> Array2<f64> {
    broadcast_to(x.insert_axis(Axis(1)), (6, 2))
}

#[oxla::grad(lax_broadcast_in_dim_grad, wrt = x)]
fn lax_broadcast_in_dim_sum(x: &[f64; 6]) -> f64 {
    lax_broadcast_in_dim(x).sum()
}

// lax.reshape
#[oxla::func]
fn lax_reshape(m: &[[f64; 4]; 3]) -> Array2<f64> {
    m.into_shape_with_order((2, 6)).unwrap()
}

#[oxla::grad(lax_reshape_grad, wrt = m)]
fn lax_reshape_sum(m: &[[f64; 4]; 3]) -> f64 {
    lax_reshape(m).sum()
}

// lax.transpose
#[oxla::func]
fn lax_transpose(m: &[[f64; 4]; 3]) -> Array2<f64> {
    m.permuted_axes([1, 0])
}

#[oxla::grad(lax_transpose_grad, wrt = m)]
fn lax_transpose_sum(m: &[[f64; 4]; 3]) -> f64 {
    lax_transpose(m).sum()
}

// lax.squeeze
#[oxla::func]
fn lax_squeeze(x: &[f64; 6]) -> Array1<f64> {
    squeeze(expand_dims(x, Axis(0)), Axis(0))
}

#[oxla::grad(lax_squeeze_grad, wrt = x)]
fn lax_squeeze_sum(x: &[f64; 6]) -> f64 {
    lax_squeeze(x).sum()
}

// lax.expand_dims
#[oxla::func]
fn lax_expand_dims(x: &[f64; 6]) -> Array2<f64> {
    expand_dims(x, Axis(1))
}

#[oxla::grad(lax_expand_dims_grad, wrt = x)]
fn lax_expand_dims_sum(x: &[f64; 6]) -> f64 {
    lax_expand_dims(x).sum()
}

// lax.iota
#[oxla::func]
fn lax_iota(x: &[f64; 6]) -> Array1<f64> {
    arange(x.len())
}

// lax.full
#[oxla::func]
fn lax_full(x: &[f64; 6]) -> Array1<f64> {
    full(4, x[3])
}

#[oxla::grad(lax_full_grad, wrt = x)]
fn lax_full_sum(x: &[f64; 6]) -> f64 {
    lax_full(x).sum()
}

// lax.slice
#[oxla::func]
fn lax_slice(x: &[f64; 6]) -> Array1<f64> {
    x.slice(s![1..5;2]).to_owned()
}

#[oxla::grad(lax_slice_grad, wrt = x)]
fn lax_slice_sum(x: &[f64; 6]) -> f64 {
    lax_slice(x).sum()
}

// lax.concatenate
#[oxla::func]
fn lax_concatenate(m: &[[f64; 4]; 3]) -> Array2<f64> {
    concatenate(Axis(1), &[m.view(), m.view()])
}

#[oxla::grad(lax_concatenate_grad, wrt = m)]
fn lax_concatenate_sum(m: &[[f64; 4]; 3]) -> f64 {
    lax_concatenate(m).sum()
}

// lax.cumsum
#[oxla::func]
fn lax_cumsum(x: &[f64; 6]) -> Array1<f64> {
    cumsum(x, Axis(0))
}

#[oxla::grad(lax_cumsum_grad, wrt = x)]
fn lax_cumsum_sum(x: &[f64; 6]) -> f64 {
    lax_cumsum(x).sum()
}

// lax.div
#[oxla::func]
fn lax_div(idx: ArrayView1<i64>) -> Array1<i64> {
    &idx / 2
}

// lax.rem
#[oxla::func]
fn lax_rem(idx: ArrayView1<i64>) -> Array1<i64> {
    &idx % 2
}

// lax.convert_element_type
#[oxla::func]
fn lax_convert_element_type(x: &[f64; 6]) -> Array1<i32> {
    (&x * 10.0).mapv(|v| v as i32)
}

// jnp.astype
#[oxla::func]
fn jnp_astype(x: &[f64; 6]) -> Array1<i64> {
    (&x * 10.0).mapv(|v| v as i64)
}

// lax.reduce_window
#[oxla::func]
fn lax_reduce_window(x: &[f64; 6]) -> Array3<f64> {
    reduce_window_max(x.reshape((1, 1, 6)), [1, 1, 2], [1, 1, 2], "VALID")
            + reduce_window_sum(x.reshape((1, 1, 6)), [1, 1, 2], [1, 1, 2], "VALID")
}

#[oxla::grad(lax_reduce_window_grad, wrt = x)]
fn lax_reduce_window_sum(x: &[f64; 6]) -> f64 {
    lax_reduce_window(x).sum()
}

// lax.conv_general_dilated
#[oxla::func]
fn lax_conv_general_dilated(x: &[f64; 6]) -> Array3<f64> {
    conv_general_dilated(x.reshape((1, 2, 3)), [[[0.5, -1.0], [0.25, 2.0]]], [1], [(1, 1)], [1], [2])
}

#[oxla::grad(lax_conv_general_dilated_grad, wrt = x)]
fn lax_conv_general_dilated_sum(x: &[f64; 6]) -> f64 {
    lax_conv_general_dilated(x).sum()
}

// lax.conv
#[oxla::func]
fn lax_conv(x: &[f64; 6]) -> Array3<f64> {
    conv(x.reshape((1, 1, 6)), [[[1.0, -2.0, 0.5]]], [1], "VALID")
}

#[oxla::grad(lax_conv_grad, wrt = x)]
fn lax_conv_sum(x: &[f64; 6]) -> f64 {
    lax_conv(x).sum()
}

// flax.linen.max_pool
#[oxla::func]
fn flax_linen_max_pool(x: &[f64; 6]) -> Array3<f64> {
    max_pool(x.reshape((1, 1, 6)), [2], [2], "VALID")
}

#[oxla::grad(flax_linen_max_pool_grad, wrt = x)]
fn flax_linen_max_pool_sum(x: &[f64; 6]) -> f64 {
    flax_linen_max_pool(x).sum()
}

// flax.linen.avg_pool
#[oxla::func]
fn flax_linen_avg_pool(x: &[f64; 6]) -> Array3<f64> {
    avg_pool(x.reshape((1, 1, 6)), [3], [1], "VALID")
}

#[oxla::grad(flax_linen_avg_pool_grad, wrt = x)]
fn flax_linen_avg_pool_sum(x: &[f64; 6]) -> f64 {
    flax_linen_avg_pool(x).sum()
}

#[test]
fn lax_rows_match_jax() {
    let i = inputs();
    let mut c = Checks::default();
    c.value("lax_stop_gradient", "lax.stop_gradient", lax_stop_gradient(&i.x).flat());
    c.grad("lax_stop_gradient", lax_stop_gradient_grad(&i.x).flat(), None);
    c.value("lax_logistic", "lax.logistic", lax_logistic(&i.x).flat());
    c.grad("lax_logistic", lax_logistic_grad(&i.x).flat(), Some(central(|p| lax_logistic_sum(p), &i.x)));
    c.value("lax_clamp", "lax.clamp", lax_clamp(&i.m).flat());
    c.grad("lax_clamp", lax_clamp_grad(&i.m).flat(), Some(central(|p| lax_clamp_sum(p), &i.m)));
    c.value("lax_pow", "lax.pow", lax_pow(&i.x, &i.y).flat());
    c.grad("lax_pow", lax_pow_grad(&i.x, &i.y).flat(), Some(central(|p| lax_pow_sum(p, &i.y), &i.x)));
    c.value("lax_broadcast_in_dim", "lax.broadcast_in_dim", lax_broadcast_in_dim(&i.x).flat());
    c.grad("lax_broadcast_in_dim", lax_broadcast_in_dim_grad(&i.x).flat(), Some(central(|p| lax_broadcast_in_dim_sum(p), &i.x)));
    c.value("lax_reshape", "lax.reshape", lax_reshape(&i.m).flat());
    c.grad("lax_reshape", lax_reshape_grad(&i.m).flat(), Some(central(|p| lax_reshape_sum(p), &i.m)));
    c.value("lax_transpose", "lax.transpose", lax_transpose(&i.m).flat());
    c.grad("lax_transpose", lax_transpose_grad(&i.m).flat(), Some(central(|p| lax_transpose_sum(p), &i.m)));
    c.value("lax_squeeze", "lax.squeeze", lax_squeeze(&i.x).flat());
    c.grad("lax_squeeze", lax_squeeze_grad(&i.x).flat(), Some(central(|p| lax_squeeze_sum(p), &i.x)));
    c.value("lax_expand_dims", "lax.expand_dims", lax_expand_dims(&i.x).flat());
    c.grad("lax_expand_dims", lax_expand_dims_grad(&i.x).flat(), Some(central(|p| lax_expand_dims_sum(p), &i.x)));
    c.value("lax_iota", "lax.iota", lax_iota(&i.x).flat());
    c.value("lax_full", "lax.full", lax_full(&i.x).flat());
    c.grad("lax_full", lax_full_grad(&i.x).flat(), Some(central(|p| lax_full_sum(p), &i.x)));
    c.value("lax_slice", "lax.slice", lax_slice(&i.x).flat());
    c.grad("lax_slice", lax_slice_grad(&i.x).flat(), Some(central(|p| lax_slice_sum(p), &i.x)));
    c.value("lax_concatenate", "lax.concatenate", lax_concatenate(&i.m).flat());
    c.grad("lax_concatenate", lax_concatenate_grad(&i.m).flat(), Some(central(|p| lax_concatenate_sum(p), &i.m)));
    c.value("lax_cumsum", "lax.cumsum", lax_cumsum(&i.x).flat());
    c.grad("lax_cumsum", lax_cumsum_grad(&i.x).flat(), Some(central(|p| lax_cumsum_sum(p), &i.x)));
    c.value("lax_div", "lax.div", lax_div(i.idx.view()).flat());
    c.value("lax_rem", "lax.rem", lax_rem(i.idx.view()).flat());
    c.value("lax_convert_element_type", "lax.convert_element_type", lax_convert_element_type(&i.x).flat());
    c.value("jnp_astype", "jnp.astype", jnp_astype(&i.x).flat());
    c.value("lax_reduce_window", "lax.reduce_window", lax_reduce_window(&i.x).flat());
    c.grad("lax_reduce_window", lax_reduce_window_grad(&i.x).flat(), Some(central(|p| lax_reduce_window_sum(p), &i.x)));
    c.value("lax_conv_general_dilated", "lax.conv_general_dilated", lax_conv_general_dilated(&i.x).flat());
    c.grad("lax_conv_general_dilated", lax_conv_general_dilated_grad(&i.x).flat(), Some(central(|p| lax_conv_general_dilated_sum(p), &i.x)));
    c.value("lax_conv", "lax.conv", lax_conv(&i.x).flat());
    c.grad("lax_conv", lax_conv_grad(&i.x).flat(), Some(central(|p| lax_conv_sum(p), &i.x)));
    c.value("flax_linen_max_pool", "flax.linen.max_pool", flax_linen_max_pool(&i.x).flat());
    c.grad("flax_linen_max_pool", flax_linen_max_pool_grad(&i.x).flat(), Some(central(|p| flax_linen_max_pool_sum(p), &i.x)));
    c.value("flax_linen_avg_pool", "flax.linen.avg_pool", flax_linen_avg_pool(&i.x).flat());
    c.grad("flax_linen_avg_pool", flax_linen_avg_pool_grad(&i.x).flat(), Some(central(|p| flax_linen_avg_pool_sum(p), &i.x)));
    c.finish();
}

// ---- Collectives (inside `pmap` or a named `vmap`) -------------------------

// lax.psum
#[oxla::vmap(lax_psum, axis_name = j)]
fn lax_psum_base(r: f64) -> f64 {
    psum(r, j) * r
}

// lax.pmean
#[oxla::pmap(lax_pmean, axis_name = j)]
fn lax_pmean_base(r: f64) -> f64 {
    pmean(r, j) - r
}

// lax.pmax
#[oxla::vmap(lax_pmax, axis_name = j)]
fn lax_pmax_base(r: f64) -> f64 {
    pmax(r, j)
}

// lax.pmin
#[oxla::vmap(lax_pmin, axis_name = j)]
fn lax_pmin_base(r: f64) -> f64 {
    pmin(r, j)
}

// lax.all_gather
#[oxla::vmap(lax_all_gather, axis_name = j)]
fn lax_all_gather_base(r: f64) -> Array1<f64> {
    all_gather(r, j)
}

// lax.psum_scatter
#[oxla::vmap(lax_psum_scatter, axis_name = j)]
fn lax_psum_scatter_base(r: ArrayView1<f64>) -> f64 {
    psum_scatter(r, j)
}

// lax.ppermute
#[oxla::vmap(lax_ppermute, axis_name = j)]
fn lax_ppermute_base(r: f64) -> f64 {
    ppermute(r, j, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0)])
}

// lax.all_to_all
#[oxla::vmap(lax_all_to_all, axis_name = j)]
fn lax_all_to_all_base(r: ArrayView1<f64>) -> Array1<f64> {
    all_to_all(r, j, 0, 0)
}

// lax.axis_index
#[oxla::vmap(lax_axis_index, axis_name = j)]
fn lax_axis_index_base(r: f64) -> f64 {
    r + axis_index(j) as f64
}

// lax.axis_size
#[oxla::pmap(lax_axis_size, axis_name = j)]
fn lax_axis_size_base(r: f64) -> f64 {
    r * axis_size(j) as f64
}

#[test]
fn collectives_rows_match_jax() {
    oxla::set_cpu_device_count(4);
    let i = inputs();
    let mut c = Checks::default();
    c.value("lax_psum", "lax.psum", lax_psum(&i.x).flat());
    c.value("lax_pmean", "lax.pmean", lax_pmean(&i.v).flat());
    c.value("lax_pmax", "lax.pmax", lax_pmax(&i.x).flat());
    c.value("lax_pmin", "lax.pmin", lax_pmin(&i.x).flat());
    c.value("lax_all_gather", "lax.all_gather", lax_all_gather(&i.x).flat());
    c.value("lax_psum_scatter", "lax.psum_scatter", lax_psum_scatter(i.aa.view()).flat());
    c.value("lax_ppermute", "lax.ppermute", lax_ppermute(&i.x).flat());
    c.value("lax_all_to_all", "lax.all_to_all", lax_all_to_all(i.aa.view()).flat());
    c.value("lax_axis_index", "lax.axis_index", lax_axis_index(&i.x).flat());
    c.value("lax_axis_size", "lax.axis_size", lax_axis_size(&i.v).flat());
    c.finish();
}

// ---- Transforms ------------------------------------------------------------

// jax.jit
#[oxla::jit(jax_jit)]
fn jax_jit_base(x: ArrayView1<f64>) -> Array1<f64> {
    x.sin() * 2.0
}

// jax.grad
#[oxla::grad(jax_grad, wrt = x)]
fn jax_grad_base(x: ArrayView1<f64>, y: ArrayView1<f64>) -> f64 {
    (x.sin() * y).sum()
}

// jax.value_and_grad
#[oxla::value_and_grad(jax_value_and_grad, wrt = x)]
fn jax_value_and_grad_base(x: ArrayView1<f64>) -> f64 {
    (x.exp() * x).sum()
}

// jax.jvp
#[oxla::jvp(jax_jvp, wrt = x)]
fn jax_jvp_base(x: ArrayView1<f64>) -> Array1<f64> {
    x.sin() * x.sum()
}

// jax.vjp
#[oxla::vjp(jax_vjp, wrt = x)]
fn jax_vjp_base(x: ArrayView1<f64>) -> Array1<f64> {
    x.sin() * x.sum()
}

// jax.vmap
#[oxla::vmap(jax_vmap, in_axes = (0, None))]
fn jax_vmap_base(r: ArrayView1<f64>, v: ArrayView1<f64>) -> f64 {
    (r.sin() * v).sum()
}

// jax.pmap
#[oxla::pmap(jax_pmap, axis_name = i)]
fn jax_pmap_base(r: ArrayView1<f64>) -> f64 {
    psum(r.sum(), i) * r.sum()
}

// jax.jacfwd
#[oxla::jacfwd(jax_jacfwd, wrt = x)]
fn jax_jacfwd_base(x: ArrayView1<f64>) -> Array1<f64> {
    x.sin() * x.sum()
}

// jax.jacrev
#[oxla::jacrev(jax_jacrev, wrt = x)]
fn jax_jacrev_base(x: ArrayView1<f64>) -> Array1<f64> {
    x.exp() * x.sum()
}

// jax.hessian
#[oxla::hessian(jax_hessian, wrt = x)]
fn jax_hessian_base(x: ArrayView1<f64>) -> f64 {
    (x.sin() * x).sum() * x.sum()
}

#[test]
fn transforms_rows_match_jax() {
    oxla::set_cpu_device_count(4);
    let i = inputs();
    let mut c = Checks::default();
    c.value("jax_jit", "jax.jit", jax_jit(&i.x).flat());
    c.value("jax_grad", "jax.grad", jax_grad(i.xa.view(), i.ya.view()).flat());
    c.value("jax_value_and_grad", "jax.value_and_grad", jax_value_and_grad(&i.x).flat());
    c.value("jax_jvp", "jax.jvp", jax_jvp(i.xa.view(), i.ya.view()).flat());
    c.value("jax_vjp", "jax.vjp", jax_vjp(i.xa.view(), i.ya.view()).flat());
    c.value("jax_vmap", "jax.vmap", jax_vmap(i.ma.view(), i.va.view()).flat());
    c.value("jax_pmap", "jax.pmap", jax_pmap(i.na.view()).flat());
    c.value("jax_jacfwd", "jax.jacfwd", jax_jacfwd(&i.x).flat());
    c.value("jax_jacrev", "jax.jacrev", jax_jacrev(&i.x).flat());
    c.value("jax_hessian", "jax.hessian", jax_hessian(&i.x).flat());
    c.finish();
}
