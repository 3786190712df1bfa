//! Generated functions (gradients, vmaps, jit'd functions, jacobians, JVPs)
//! called inside other annotated functions, as JAX's `grad(loss)(w, x)`
//! inside a jit'd step: inlined as IR, so that the caller's own transforms
//! go through them. Each is checked against calling the same functions from
//! the host, and second derivatives against `#[hessian]` and central
//! differences.

use ndarray::{array, Array1, Array2, ArrayView1, ArrayView2};
use oxla::{grad, jit, vmap};

#[oxla::transforms(
    grad(loss_grad, wrt = w),
    value_and_grad(loss_vg, wrt = w),
    hessian(loss_hess, wrt = w),
    jvp(loss_jvp, wrt = w)
)]
fn loss(w: ArrayView1<f64>, x: ArrayView2<f64>, y: ArrayView1<f64>) -> f64 {
    let p = x.dot(&w).tanh();
    sum((p - y) * (p - y)) / 2.0
}

/// One gradient step, calling the generated gradient.
#[jit]
fn update(w: ArrayView1<f64>, x: ArrayView2<f64>, y: ArrayView1<f64>) -> Array1<f64> {
    w - 0.5 * loss_grad(w, x, y)
}

/// `loss` after one step: its gradient through the step is
/// (I − ½H)·∇loss(w₁), a Hessian-vector product.
#[grad(stepped_grad, wrt = w)]
fn stepped(w: ArrayView1<f64>, x: ArrayView2<f64>, y: ArrayView1<f64>) -> f64 {
    let w1 = update(w, x, y);
    loss(w1.view(), x, y)
}

/// A training run: a loop of `update` calls, one compiled program.
#[jit]
fn train(w: ArrayView1<f64>, x: ArrayView2<f64>, y: ArrayView1<f64>, steps: usize) -> Array1<f64> {
    let mut w = w.to_owned();
    for _ in 0..steps {
        w = update(w.view(), x, y);
    }
    w
}

/// The value and the gradient, bound by a tuple, and a JVP.
#[jit]
fn report(
    w: ArrayView1<f64>,
    x: ArrayView2<f64>,
    y: ArrayView1<f64>,
    t: ArrayView1<f64>,
) -> (f64, f64, f64) {
    let (v, g) = loss_vg(w, x, y);
    let (v2, dv) = loss_jvp(w, x, y, t);
    (v + v2, sum(g * t), dv)
}

/// Per-example updates: a vmap over a function that calls a gradient.
#[vmap(updates, in_axes = (0, None, None))]
fn update_one(w: ArrayView1<f64>, x: ArrayView2<f64>, y: ArrayView1<f64>) -> Array1<f64> {
    let g = loss_grad(w, x, y);
    w - 0.5 * g
}

mod kernels {
    use ndarray::{Array1, ArrayView1, ArrayView2};

    /// One row of a Gaussian kernel matrix, batched over rows (`gram`).
    #[oxla::vmap(gram, in_axes = (0, None))]
    pub fn gram_row(a: ArrayView1<f64>, b: ArrayView2<f64>) -> Array1<f64> {
        let d = &b - &a;
        (-(&d * &d).sum_axis(ndarray::Axis(1))).exp()
    }

    /// The Jacobian of a vector field.
    #[oxla::jacfwd(field_jac)]
    pub fn field(x: ArrayView1<f64>) -> Array1<f64> {
        x.sin() * x.sum()
    }

    /// A jit'd function and a Hessian of this module.
    #[oxla::jit]
    pub fn softplus_sum(x: ArrayView1<f64>) -> f64 {
        (1.0 + x.exp()).ln().sum()
    }

    #[oxla::hessian(bowl_hess)]
    pub fn bowl(x: ArrayView1<f64>) -> f64 {
        (&x * &x * &x).sum() + x.sum() * x.sum()
    }
}

/// A jit'd function and a Hessian of another module, called.
#[jit]
fn newton_like(x: ArrayView1<f64>) -> (f64, Array1<f64>) {
    let h = kernels::bowl_hess(x);
    (kernels::softplus_sum(x), h.dot(&x))
}

/// A kernel prediction calling a vmap of another module.
#[jit]
fn predict(a: ArrayView2<f64>, b: ArrayView2<f64>, alpha: ArrayView1<f64>) -> Array1<f64> {
    kernels::gram(a, b).dot(&alpha)
}

/// A Newton-like step through a called Jacobian.
#[grad(jstep_grad)]
fn jstep(x: ArrayView1<f64>, v: ArrayView1<f64>) -> f64 {
    let j = kernels::field_jac(x);
    sum(j.dot(&v).tanh())
}

/// A gradient and a vmap of another crate, called here.
#[jit]
fn foreign(x: ArrayView1<f32>, rows: ArrayView2<f32>) -> (Array1<f32>, Array2<f32>) {
    let g = oxla_layers_test::transformed::energy_grad(x);
    (g, oxla_layers_test::transformed::rows_scaled(rows, 3.0))
}

/// Scalar functions: the derivative of a called derivative.
#[grad(dwave)]
fn wave(x: f64) -> f64 {
    x * x.sin() + (0.5 * x).exp()
}

#[grad(d2wave)]
fn dwave_again(x: f64) -> f64 {
    dwave(x)
}

fn data() -> (Array1<f64>, Array2<f64>, Array1<f64>) {
    let w = array![0.3, -0.2, 0.1];
    let x = array![
        [0.5, -1.0, 2.0],
        [1.5, 0.25, -0.5],
        [-0.75, 1.0, 0.3],
        [0.2, 0.4, 0.6]
    ];
    let y = array![0.1, -0.4, 0.8, 0.0];
    (w, x, y)
}

fn assert_close(a: &Array1<f64>, b: &Array1<f64>, tol: f64) {
    assert_eq!(a.len(), b.len());
    for (p, q) in a.iter().zip(b.iter()) {
        assert!((p - q).abs() <= tol * (1.0 + q.abs()), "{a} vs {b}");
    }
}

/// `update` from the host, with the gradient called from the host.
fn host_update(w: &Array1<f64>, x: &Array2<f64>, y: &Array1<f64>) -> Array1<f64> {
    w - &(loss_grad(w.view(), x.view(), y.view()) * 0.5)
}

#[test]
fn a_jit_step_calling_a_gradient_matches_host_calls() {
    let (w, x, y) = data();
    assert_close(
        &update(w.view(), x.view(), y.view()),
        &host_update(&w, &x, &y),
        1e-15,
    );
}

#[test]
fn grad_through_a_called_gradient_is_a_hessian_vector_product() {
    let (w, x, y) = data();
    let w1 = update(w.view(), x.view(), y.view());
    let g1 = loss_grad(w1.view(), x.view(), y.view());
    let h = loss_hess(w.view(), x.view(), y.view());
    let expect = &g1 - &(h.dot(&g1) * 0.5);
    assert_close(&stepped_grad(w.view(), x.view(), y.view()), &expect, 1e-12);
}

#[test]
fn a_training_loop_of_calls_is_one_program_with_the_host_loop_values() {
    let (w, x, y) = data();
    let mut host = w.clone();
    for _ in 0..25 {
        host = host_update(&host, &x, &y);
    }
    assert_close(&train(w.view(), x.view(), y.view(), 25), &host, 1e-14);
    assert_close(&train(w.view(), x.view(), y.view(), 0), &w, 0.0);
}

#[test]
fn value_and_grad_and_jvp_calls_bind_tuples() {
    let (w, x, y) = data();
    let t = array![1.0, -0.5, 0.25];
    let (s, gt, dv) = report(w.view(), x.view(), y.view(), t.view());
    let (v, g) = loss_vg(w.view(), x.view(), y.view());
    assert!((s - 2.0 * v).abs() < 1e-15);
    assert!((gt - g.dot(&t)).abs() < 1e-15);
    assert!((dv - g.dot(&t)).abs() < 1e-14, "{dv} vs {}", g.dot(&t));
}

#[test]
fn a_vmap_of_a_function_calling_a_gradient_matches_each_row() {
    let (_, x, y) = data();
    let ws = array![[0.3, -0.2, 0.1], [0.0, 0.5, -1.0], [1.0, 1.0, 1.0]];
    let got = updates(ws.view(), x.view(), y.view());
    for (i, w) in ws.rows().into_iter().enumerate() {
        assert_close(
            &got.row(i).to_owned(),
            &host_update(&w.to_owned(), &x, &y),
            1e-15,
        );
    }
}

#[test]
fn a_vmap_of_another_module_called_in_a_product() {
    let a = array![[0.0, 1.0], [0.5, -0.5], [1.0, 2.0]];
    let b = array![[0.1, 0.2], [-1.0, 0.3]];
    let alpha = array![0.7, -1.3];
    let expect = kernels::gram(a.view(), b.view()).dot(&alpha);
    assert_close(&predict(a.view(), b.view(), alpha.view()), &expect, 1e-15);
}

#[test]
fn grad_through_a_called_jacobian_matches_central_differences() {
    let x = array![0.3, -1.1, 0.7];
    let v = array![1.0, 0.5, -2.0];
    let g = jstep_grad(x.view(), v.view());
    let h = 1e-6;
    for k in 0..3 {
        let mut xp = x.clone();
        let mut xm = x.clone();
        xp[k] += h;
        xm[k] -= h;
        let fd = (jstep(xp.view(), v.view()) - jstep(xm.view(), v.view())) / (2.0 * h);
        assert!((g.0[k] - fd).abs() < 1e-7, "{k}: {} vs {fd}", g.0[k]);
    }
}

#[test]
fn calls_of_another_crates_gradient_and_vmap() {
    let x = array![0.5f32, -1.0, 2.0];
    let rows = array![[1.0f32, 2.0], [-0.5, 0.25]];
    let (g, r) = foreign(x.view(), rows.view());
    assert_eq!(g, oxla_layers_test::transformed::energy_grad(x.view()));
    assert_eq!(r, rows.mapv(|v| v * 3.0));
}

#[test]
fn the_derivative_of_a_called_derivative_is_the_second_derivative() {
    for &x in &[-1.5, 0.2, 2.0] {
        let h = 1e-5;
        let fd = (dwave(x + h) - dwave(x - h)) / (2.0 * h);
        assert!((d2wave(x) - fd).abs() < 1e-8, "{} vs {fd}", d2wave(x));
        // By hand: d²/dx² (x sin x + e^{x/2}) = 2 cos x − x sin x + e^{x/2}/4.
        let exact = 2.0 * x.cos() - x * x.sin() + (0.5 * x).exp() / 4.0;
        assert!((d2wave(x) - exact).abs() < 1e-13);
    }
}

#[test]
fn functions_defined_in_a_function_body_call_each_other() {
    #[grad(dcube)]
    fn cube(x: f64) -> f64 {
        x * x * x
    }
    #[jit]
    fn twice_slope(x: f64) -> f64 {
        2.0 * dcube(x)
    }
    assert_eq!(twice_slope(1.5), 2.0 * 3.0 * 1.5 * 1.5);
}

/// An annotated function named like a macro its module uses (`s!`): it
/// defines no callable macro, which would shadow the import.
mod named_like_a_macro {
    use oxla::ndarray::{s, ArrayView1};

    #[oxla::jit]
    pub fn s(x: ArrayView1<f64>) -> f64 {
        x.slice(s![1..]).sum()
    }

    pub fn tail(x: ArrayView1<f64>) -> f64 {
        x.slice(s![1..]).sum()
    }
}

#[test]
fn a_function_named_like_a_macro_leaves_the_macro_alone() {
    let x = array![1.0, 2.0, 4.0];
    assert_eq!(named_like_a_macro::s(x.view()), 6.0);
    assert_eq!(named_like_a_macro::tail(x.view()), 6.0);
}

/// Parameter structs through calls: a gradient with respect to a struct,
/// called inside a jit'd step that returns the updated struct, and a
/// gradient through that step.
#[derive(oxla::Tree, Clone, Debug, PartialEq)]
struct Affine {
    w: Array1<f64>,
    b: f64,
}

#[oxla::transforms(grad(affine_grad, wrt = p), value_and_grad(affine_vg, wrt = p))]
fn affine_loss(p: &Affine, x: ArrayView2<f64>, y: ArrayView1<f64>) -> f64 {
    let r = x.dot(&p.w) + p.b - y;
    (&r * &r).mean()
}

#[jit]
fn affine_step(p: &Affine, x: ArrayView2<f64>, y: ArrayView1<f64>) -> Affine {
    let g = affine_grad(p, x, y);
    Affine {
        w: &p.w - 0.1 * &g.w,
        b: p.b - 0.1 * g.b,
    }
}

#[jit]
fn affine_report(p: &Affine, x: ArrayView2<f64>, y: ArrayView1<f64>) -> (f64, f64) {
    let (l, g) = affine_vg(p, x, y);
    (l, g.b + sum(g.w))
}

#[grad(stepped_affine_grad, wrt = p)]
fn stepped_affine(p: &Affine, x: ArrayView2<f64>, y: ArrayView1<f64>) -> f64 {
    let q = affine_step(p, x, y);
    affine_loss(&q, x, y)
}

#[test]
fn struct_gradients_called_inside_annotated_functions() {
    let (_, x, y) = data();
    let p = Affine {
        w: array![0.3, -0.2, 0.1],
        b: 0.05,
    };
    let g = affine_grad(&p, x.view(), y.view());
    let host = Affine {
        w: &p.w - &(&g.w * 0.1),
        b: p.b - 0.1 * g.b,
    };
    let got = affine_step(&p, x.view(), y.view());
    assert_close(&got.w, &host.w, 1e-15);
    assert!((got.b - host.b).abs() < 1e-15);
    let (l, sb) = affine_report(&p, x.view(), y.view());
    assert_eq!(l, affine_loss(&p, x.view(), y.view()));
    assert!((sb - (g.b + g.w.sum())).abs() < 1e-15);
    // The gradient through the step, against central differences.
    let d = stepped_affine_grad(&p, x.view(), y.view());
    let h = 1e-6;
    let at = |q: &Affine| stepped_affine(q, x.view(), y.view());
    for k in 0..3 {
        let (mut a, mut b) = (p.clone(), p.clone());
        a.w[k] += h;
        b.w[k] -= h;
        let fd = (at(&a) - at(&b)) / (2.0 * h);
        assert!((d.w[k] - fd).abs() < 1e-8, "w{k}: {} vs {fd}", d.w[k]);
    }
    let (mut a, mut b) = (p.clone(), p.clone());
    a.b += h;
    b.b -= h;
    let fd = (at(&a) - at(&b)) / (2.0 * h);
    assert!((d.b - fd).abs() < 1e-8, "b: {} vs {fd}", d.b);
}

/// Constants read by called functions of the caller's module: the path
/// means the same constant at the call.
const DECAY: f64 = 0.25;

#[oxla::func]
fn decayed(x: f64) -> f64 {
    x * (1.0 - DECAY)
}

#[grad(shrink_grad)]
fn shrink(w: ArrayView1<f64>) -> f64 {
    DECAY * (&w * &w).sum()
}

#[jit]
fn shrink_step(w: ArrayView1<f64>, lr: f64) -> Array1<f64> {
    (w - lr * shrink_grad(w)) * decayed(1.0)
}

#[test]
fn called_functions_read_constants_of_the_callers_module() {
    let w = array![1.0, -2.0, 0.5];
    let want = w.mapv(|v| (v - 0.1 * 2.0 * DECAY * v) * (1.0 - DECAY));
    assert_close(&shrink_step(w.view(), 0.1), &want, 1e-15);
}

#[test]
fn a_jit_function_and_a_hessian_of_another_module_called() {
    let x = array![0.5, -1.0, 2.0];
    let (s, hx) = newton_like(x.view());
    assert_eq!(s, kernels::softplus_sum(x.view()));
    // H = diag(6x) + 2·11ᵀ for Σx³ + (Σx)².
    let total: f64 = x.sum();
    for i in 0..3 {
        let want = 6.0 * x[i] * x[i] + 2.0 * total;
        assert!((hx[i] - want).abs() < 1e-13, "{i}: {} vs {want}", hx[i]);
    }
}
