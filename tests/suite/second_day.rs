//! The second day of a JAX user (issue 23): the reshape family, the names a
//! jax.numpy or ndarray user types, array literals, const arrays and loops
//! over arrays. Each construct is a weighted sum `sum(f(x) * w)` of its
//! result, whose value and gradient are compared with JAX's
//! (`tests/reference/second_day_jax.py`, its output `second_day_jax.txt`
//! read here), and the gradient also with central differences. The inputs
//! and weights are the script's closed forms.

use ndarray::{Array, ArrayD, ArrayView1, ArrayView2, ArrayView3, Axis, Dimension};
use oxla::value_and_grad;

/// JAX's values: `name` → its array.
fn jax(name: &str) -> ArrayD<f64> {
    let text = include_str!("../reference/second_day_jax.txt");
    crate::reference::reference_array(text, "second_day_jax.txt", name)
}

/// An array whose element at flat index `q` is `f(q)`, as the script's `grid`.
fn grid<D: Dimension>(shape: D, f: impl Fn(f64) -> f64) -> Array<f64, D> {
    let n = shape.size();
    Array::from_shape_vec(shape, (0..n).map(|q| f(q as f64)).collect()).unwrap()
}

fn input<D: Dimension>(shape: D) -> Array<f64, D> {
    grid(shape, |q| (0.7 * q + 0.3).sin())
}
fn x1() -> ndarray::Array1<f64> {
    input(ndarray::Ix1(4))
}
fn x2() -> ndarray::Array2<f64> {
    input(ndarray::Ix2(3, 4))
}
fn x3() -> ndarray::Array3<f64> {
    input(ndarray::Ix3(2, 3, 4))
}
fn x9() -> ndarray::Array1<f64> {
    input(ndarray::Ix1(9))
}
fn x12() -> ndarray::Array1<f64> {
    input(ndarray::Ix1(12))
}

/// The weights of case `name`, shaped as JAX's result `f(x)`.
fn weights<D: Dimension>(name: &str) -> Array<f64, D> {
    let shape = jax(&format!("{name}.out")).raw_dim();
    grid(shape, |q| (0.3 * q).cos())
        .into_dimensionality()
        .unwrap()
}

/// The value and gradient of `f` at `x` against JAX's, and the gradient
/// against central differences of `f` (oxla's own value function).
#[track_caller]
fn check<D: Dimension>(
    name: &str,
    x: Array<f64, D>,
    f: impl Fn(&Array<f64, D>) -> f64,
    vg: impl Fn(&Array<f64, D>) -> (f64, Array<f64, D>),
) {
    let close = |g: f64, e: f64, tol: f64| (g - e).abs() <= tol * e.abs().max(1.0);
    let (value, grad) = vg(&x);
    let want = jax(&format!("{name}.value")).into_iter().next().unwrap();
    assert!(
        close(value, want, 1e-12),
        "{name}: value {value:e}, JAX {want:e}"
    );
    assert!(
        close(f(&x), want, 1e-12),
        "{name}: f {}, JAX {want:e}",
        f(&x)
    );
    let want = jax(&format!("{name}.grad"));
    assert_eq!(grad.shape(), want.shape(), "{name}: gradient shape");
    let h = 1e-6;
    for (k, (g, e)) in grad.iter().zip(want.iter()).enumerate() {
        assert!(
            close(*g, *e, 1e-12),
            "{name}: gradient {k}: oxla {g:e}, JAX {e:e}"
        );
        let (mut up, mut down) = (x.clone(), x.clone());
        up.as_slice_mut().unwrap()[k] += h;
        down.as_slice_mut().unwrap()[k] -= h;
        let fd = (f(&up) - f(&down)) / (2.0 * h);
        assert!(
            close(*g, fd, 1e-6),
            "{name}: gradient {k}: oxla {g:e}, central difference {fd:e}"
        );
    }
}

#[value_and_grad(reshape_vg, wrt = x)]
fn t_reshape(x: ArrayView1<f64>, w: ArrayView2<f64>) -> f64 {
    sum(x.reshape((3, 4)).reshape((2, 6)) * w)
}

#[value_and_grad(reshape_infer_vg, wrt = x)]
fn t_reshape_infer(x: ArrayView1<f64>, w: ArrayView2<f64>) -> f64 {
    sum(x.reshape((3, 4)).into_shape_with_order((-1, 2)).unwrap() * w)
}

#[value_and_grad(flatten_vg, wrt = x)]
fn t_flatten(x: ArrayView1<f64>, w: ArrayView1<f64>) -> f64 {
    sum(x.into_shape_with_order((3, 4)).unwrap().flatten() * w)
}

#[value_and_grad(insert_axis_vg, wrt = x)]
fn t_insert_axis(x: ArrayView2<f64>, w: ArrayView3<f64>) -> f64 {
    sum(x.insert_axis(Axis(1)) * w)
}

#[value_and_grad(expand_dims_vg, wrt = x)]
fn t_expand_dims(x: ArrayView2<f64>, w: ArrayView3<f64>) -> f64 {
    sum(expand_dims(x, Axis(0)) * w)
}

#[value_and_grad(expand_dims_neg_vg, wrt = x)]
fn t_expand_dims_neg(x: ArrayView2<f64>, w: ArrayView3<f64>) -> f64 {
    sum(expand_dims(x, -1) * w)
}

#[value_and_grad(squeeze_vg, wrt = x)]
fn t_squeeze(x: ArrayView1<f64>, w: ArrayView2<f64>) -> f64 {
    sum(squeeze(x.into_shape_with_order((3, 1, 4, 1)).unwrap()) * w)
}

#[value_and_grad(squeeze_axis_vg, wrt = x)]
fn t_squeeze_axis(x: ArrayView1<f64>, w: ArrayView2<f64>) -> f64 {
    sum(x.into_shape_with_order((3, 1, 4)).unwrap().squeeze(Axis(1)) * w)
}

#[value_and_grad(swapaxes_vg, wrt = x)]
fn t_swapaxes(x: ArrayView3<f64>, w: ArrayView3<f64>) -> f64 {
    sum(swapaxes(x, 0, 2) * w)
}

#[value_and_grad(moveaxis_vg, wrt = x)]
fn t_moveaxis(x: ArrayView3<f64>, w: ArrayView3<f64>) -> f64 {
    sum(moveaxis(x, 0, -1) * w)
}

#[value_and_grad(broadcast_to_vg, wrt = x)]
fn t_broadcast_to(x: ArrayView2<f64>, w: ArrayView3<f64>) -> f64 {
    sum(broadcast_to(x, (2, 3, 4)) * w)
}

#[value_and_grad(broadcast_to_row_vg, wrt = x)]
fn t_broadcast_to_row(x: ArrayView1<f64>, w: ArrayView2<f64>) -> f64 {
    sum(x.broadcast((3, 4)).unwrap() * w)
}

#[value_and_grad(tile_vg, wrt = x)]
fn t_tile(x: ArrayView2<f64>, w: ArrayView2<f64>) -> f64 {
    sum(tile(x, (2, 3)) * w)
}

#[value_and_grad(tile_static_vg, wrt = x)]
fn t_tile_static(x: ArrayView1<f64>, w: ArrayView3<f64>) -> f64 {
    sum(tile(x.reshape((3, 4)), (2, 1, 3)) * w)
}

#[value_and_grad(tile_1d_vg, wrt = x)]
fn t_tile_1d(x: ArrayView1<f64>, w: ArrayView1<f64>) -> f64 {
    sum(tile(x, 3) * w)
}

#[value_and_grad(repeat_axis_vg, wrt = x)]
fn t_repeat_axis(x: ArrayView2<f64>, w: ArrayView2<f64>) -> f64 {
    sum(repeat(x, 2, Axis(1)) * w)
}

#[value_and_grad(repeat_static_vg, wrt = x)]
fn t_repeat_static(x: ArrayView1<f64>, w: ArrayView2<f64>) -> f64 {
    sum(repeat(x.reshape((3, 4)), 2, Axis(1)) * w)
}

#[value_and_grad(repeat_axis0_vg, wrt = x)]
fn t_repeat_axis0(x: ArrayView2<f64>, w: ArrayView2<f64>) -> f64 {
    sum(repeat(x, 3, Axis(0)) * w)
}

#[value_and_grad(repeat_flat_vg, wrt = x)]
fn t_repeat_flat(x: ArrayView1<f64>, w: ArrayView1<f64>) -> f64 {
    sum(repeat(x.reshape((3, 4)), 2) * w)
}

#[value_and_grad(var_vg, wrt = x)]
fn t_var(x: ArrayView2<f64>) -> f64 {
    x.var(0.0)
}

#[value_and_grad(std_axis_vg, wrt = x)]
fn t_std_axis(x: ArrayView2<f64>, w: ArrayView1<f64>) -> f64 {
    sum(x.std_axis(Axis(1), 1.0) * w)
}

#[value_and_grad(sum_axis_neg_vg, wrt = x)]
fn t_sum_axis_neg(x: ArrayView2<f64>, w: ArrayView1<f64>) -> f64 {
    sum(x.sum_axis(Axis(-1)) * w)
}

#[value_and_grad(row_vg, wrt = x)]
fn t_row(x: ArrayView2<f64>, w: ArrayView1<f64>) -> f64 {
    sum(x.row(1) * w)
}

#[value_and_grad(column_vg, wrt = x)]
fn t_column(x: ArrayView2<f64>, w: ArrayView1<f64>) -> f64 {
    sum(x.column(2) * w)
}

#[value_and_grad(clip_vg, wrt = x)]
fn t_clip(x: ArrayView2<f64>, w: ArrayView2<f64>) -> f64 {
    sum(clip(x, -0.5, 0.5) * w)
}

#[value_and_grad(logaddexp_vg, wrt = x)]
fn t_logaddexp(x: ArrayView2<f64>, w: ArrayView2<f64>) -> f64 {
    sum(logaddexp(x, 0.5 * x) * w)
}

#[value_and_grad(outer_vg, wrt = x)]
fn t_outer(x: ArrayView1<f64>, w: ArrayView2<f64>) -> f64 {
    sum(outer(x, x) * w)
}

#[value_and_grad(norm_vg, wrt = x)]
fn t_norm(x: ArrayView1<f64>) -> f64 {
    norm(x)
}

#[value_and_grad(norm_fro_vg, wrt = x)]
fn t_norm_fro(x: ArrayView2<f64>) -> f64 {
    norm(x)
}

#[value_and_grad(norm_axis_vg, wrt = x)]
fn t_norm_axis(x: ArrayView2<f64>, w: ArrayView1<f64>) -> f64 {
    sum(norm(x, Axis(1)) * w)
}

#[value_and_grad(diag_vg, wrt = x)]
fn t_diag(x: ArrayView1<f64>, w: ArrayView1<f64>) -> f64 {
    sum(x.reshape((3, 3)).diag() * w)
}

#[value_and_grad(diag_rect_vg, wrt = x)]
fn t_diag_rect(x: ArrayView1<f64>, w: ArrayView1<f64>) -> f64 {
    sum(diag(x.reshape((3, 4))) * w)
}

#[value_and_grad(diag_build_vg, wrt = x)]
fn t_diag_build(x: ArrayView1<f64>, w: ArrayView2<f64>) -> f64 {
    sum(diag(x) * w)
}

#[value_and_grad(einsum_matmul_vg, wrt = x)]
fn t_einsum_matmul(x: ArrayView2<f64>, w: ArrayView2<f64>) -> f64 {
    sum(einsum("ij,kj->ik", x, x) * w)
}

#[value_and_grad(einsum_trace_free_vg, wrt = x)]
fn t_einsum_trace_free(x: ArrayView2<f64>, w: ArrayView1<f64>) -> f64 {
    sum(einsum("ij,ij->i", x, x) * w)
}

#[value_and_grad(einsum_batch_vg, wrt = x)]
fn t_einsum_batch(x: ArrayView3<f64>, w: ArrayView3<f64>) -> f64 {
    sum(einsum("bij,bkj->bik", x, x) * w)
}

#[value_and_grad(einsum_outer_vg, wrt = x)]
fn t_einsum_outer(x: ArrayView1<f64>, w: ArrayView2<f64>) -> f64 {
    sum(einsum("i,j->ij", x, x) * w)
}

#[value_and_grad(einsum_transpose_vg, wrt = x)]
fn t_einsum_transpose(x: ArrayView2<f64>, w: ArrayView2<f64>) -> f64 {
    sum(einsum("ij->ji", x) * w)
}

#[test]
fn each_construct_gives_jaxs_value_and_gradient() {
    let w = weights::<ndarray::Ix2>("reshape");
    check(
        "reshape",
        x12(),
        |x| t_reshape(x.view(), w.view()),
        |x| reshape_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix2>("reshape_infer");
    check(
        "reshape_infer",
        x12(),
        |x| t_reshape_infer(x.view(), w.view()),
        |x| reshape_infer_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix1>("flatten");
    check(
        "flatten",
        x12(),
        |x| t_flatten(x.view(), w.view()),
        |x| flatten_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix3>("insert_axis");
    check(
        "insert_axis",
        x2(),
        |x| t_insert_axis(x.view(), w.view()),
        |x| insert_axis_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix3>("expand_dims");
    check(
        "expand_dims",
        x2(),
        |x| t_expand_dims(x.view(), w.view()),
        |x| expand_dims_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix3>("expand_dims_neg");
    check(
        "expand_dims_neg",
        x2(),
        |x| t_expand_dims_neg(x.view(), w.view()),
        |x| expand_dims_neg_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix2>("squeeze");
    check(
        "squeeze",
        x12(),
        |x| t_squeeze(x.view(), w.view()),
        |x| squeeze_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix2>("squeeze_axis");
    check(
        "squeeze_axis",
        x12(),
        |x| t_squeeze_axis(x.view(), w.view()),
        |x| squeeze_axis_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix3>("swapaxes");
    check(
        "swapaxes",
        x3(),
        |x| t_swapaxes(x.view(), w.view()),
        |x| swapaxes_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix3>("moveaxis");
    check(
        "moveaxis",
        x3(),
        |x| t_moveaxis(x.view(), w.view()),
        |x| moveaxis_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix3>("broadcast_to");
    check(
        "broadcast_to",
        x2(),
        |x| t_broadcast_to(x.view(), w.view()),
        |x| broadcast_to_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix2>("broadcast_to_row");
    check(
        "broadcast_to_row",
        x1(),
        |x| t_broadcast_to_row(x.view(), w.view()),
        |x| broadcast_to_row_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix2>("tile");
    check(
        "tile",
        x2(),
        |x| t_tile(x.view(), w.view()),
        |x| tile_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix3>("tile_static");
    check(
        "tile_static",
        x12(),
        |x| t_tile_static(x.view(), w.view()),
        |x| tile_static_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix1>("tile_1d");
    check(
        "tile_1d",
        x1(),
        |x| t_tile_1d(x.view(), w.view()),
        |x| tile_1d_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix2>("repeat_axis");
    check(
        "repeat_axis",
        x2(),
        |x| t_repeat_axis(x.view(), w.view()),
        |x| repeat_axis_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix2>("repeat_static");
    check(
        "repeat_static",
        x12(),
        |x| t_repeat_static(x.view(), w.view()),
        |x| repeat_static_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix2>("repeat_axis0");
    check(
        "repeat_axis0",
        x2(),
        |x| t_repeat_axis0(x.view(), w.view()),
        |x| repeat_axis0_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix1>("repeat_flat");
    check(
        "repeat_flat",
        x12(),
        |x| t_repeat_flat(x.view(), w.view()),
        |x| repeat_flat_vg(x.view(), w.view()),
    );
    check("var", x2(), |x| t_var(x.view()), |x| var_vg(x.view()));
    let w = weights::<ndarray::Ix1>("std_axis");
    check(
        "std_axis",
        x2(),
        |x| t_std_axis(x.view(), w.view()),
        |x| std_axis_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix1>("sum_axis_neg");
    check(
        "sum_axis_neg",
        x2(),
        |x| t_sum_axis_neg(x.view(), w.view()),
        |x| sum_axis_neg_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix1>("row");
    check(
        "row",
        x2(),
        |x| t_row(x.view(), w.view()),
        |x| row_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix1>("column");
    check(
        "column",
        x2(),
        |x| t_column(x.view(), w.view()),
        |x| column_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix2>("clip");
    check(
        "clip",
        x2(),
        |x| t_clip(x.view(), w.view()),
        |x| clip_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix2>("logaddexp");
    check(
        "logaddexp",
        x2(),
        |x| t_logaddexp(x.view(), w.view()),
        |x| logaddexp_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix2>("outer");
    check(
        "outer",
        x1(),
        |x| t_outer(x.view(), w.view()),
        |x| outer_vg(x.view(), w.view()),
    );
    check("norm", x1(), |x| t_norm(x.view()), |x| norm_vg(x.view()));
    check(
        "norm_fro",
        x2(),
        |x| t_norm_fro(x.view()),
        |x| norm_fro_vg(x.view()),
    );
    let w = weights::<ndarray::Ix1>("norm_axis");
    check(
        "norm_axis",
        x2(),
        |x| t_norm_axis(x.view(), w.view()),
        |x| norm_axis_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix1>("diag");
    check(
        "diag",
        x9(),
        |x| t_diag(x.view(), w.view()),
        |x| diag_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix1>("diag_rect");
    check(
        "diag_rect",
        x12(),
        |x| t_diag_rect(x.view(), w.view()),
        |x| diag_rect_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix2>("diag_build");
    check(
        "diag_build",
        x1(),
        |x| t_diag_build(x.view(), w.view()),
        |x| diag_build_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix2>("einsum_matmul");
    check(
        "einsum_matmul",
        x2(),
        |x| t_einsum_matmul(x.view(), w.view()),
        |x| einsum_matmul_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix1>("einsum_trace_free");
    check(
        "einsum_trace_free",
        x2(),
        |x| t_einsum_trace_free(x.view(), w.view()),
        |x| einsum_trace_free_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix3>("einsum_batch");
    check(
        "einsum_batch",
        x3(),
        |x| t_einsum_batch(x.view(), w.view()),
        |x| einsum_batch_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix2>("einsum_outer");
    check(
        "einsum_outer",
        x1(),
        |x| t_einsum_outer(x.view(), w.view()),
        |x| einsum_outer_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix2>("einsum_transpose");
    check(
        "einsum_transpose",
        x2(),
        |x| t_einsum_transpose(x.view(), w.view()),
        |x| einsum_transpose_vg(x.view(), w.view()),
    );
}

// ---- array literals, const arrays and loops over arrays

#[value_and_grad(literal_vg, wrt = x)]
fn t_literal(x: ArrayView1<f64>, w: ArrayView1<f64>) -> f64 {
    let c = [1.0, -2.0, 0.5];
    sum((x * c[0] + x * x * c[1] + c[2]) * w)
}

#[value_and_grad(for_literal_vg, wrt = x)]
fn t_for_literal(x: ArrayView1<f64>, w: ArrayView1<f64>) -> f64 {
    let c = [1.0, -2.0, 0.5];
    let mut acc = x * 0.0;
    for ci in c {
        acc = acc + ci * (ci * x).sin();
    }
    sum(acc * w)
}

#[value_and_grad(for_iter_vg, wrt = x)]
fn t_for_iter(x: ArrayView1<f64>) -> f64 {
    let mut s = 0.0;
    for v in x.iter() {
        s += v.tanh() * v;
    }
    s
}

#[value_and_grad(rows_loop_vg, wrt = x)]
fn t_rows_loop(x: ArrayView2<f64>, w: ArrayView1<f64>) -> f64 {
    let mut acc = zeros(4);
    for (i, r) in x.rows().enumerate() {
        acc = acc + r.sin() * (i as f64 + 1.0);
    }
    sum(acc * w)
}

#[test]
fn literals_and_loops_over_arrays_give_jaxs_value_and_gradient() {
    let w = weights::<ndarray::Ix1>("literal");
    check(
        "literal",
        x1(),
        |x| t_literal(x.view(), w.view()),
        |x| literal_vg(x.view(), w.view()),
    );
    let w = weights::<ndarray::Ix1>("for_literal");
    check(
        "for_literal",
        x1(),
        |x| t_for_literal(x.view(), w.view()),
        |x| for_literal_vg(x.view(), w.view()),
    );
    check(
        "for_iter",
        x1(),
        |x| t_for_iter(x.view()),
        |x| for_iter_vg(x.view()),
    );
    let w = weights::<ndarray::Ix1>("rows_loop");
    check(
        "rows_loop",
        x2(),
        |x| t_rows_loop(x.view(), w.view()),
        |x| rows_loop_vg(x.view(), w.view()),
    );
}

// ---- integer casts, division and remainder

#[oxla::jit]
fn int_div(a: ArrayView1<i32>, b: ArrayView1<i32>) -> ndarray::Array1<i32> {
    a / b
}

#[oxla::jit]
fn int_rem(a: ArrayView1<i32>, b: ArrayView1<i32>) -> ndarray::Array1<i32> {
    a % b
}

#[oxla::jit]
fn widen(a: ArrayView1<i32>, k: i32) -> ndarray::Array1<i64> {
    (a * 2).mapv(|v| v as i64) + (k as i64)
}

#[test]
fn integer_division_and_remainder_truncate_as_rust_and_lax_div() {
    let a = ndarray::arr1(&[-7, 7, -7, 7, 6]);
    let b = ndarray::arr1(&[2, 2, -2, -2, 4]);
    let want = |n: &str| jax(n).mapv(|v| v as i32).into_dimensionality().unwrap();
    let div: ndarray::Array1<i32> = want("int_div_trunc");
    let rem: ndarray::Array1<i32> = want("int_rem_trunc");
    assert_eq!(int_div(a.view(), b.view()), div);
    assert_eq!(int_rem(a.view(), b.view()), rem);
    assert_eq!(&a / &b, div, "Rust's `/` is lax.div");
    assert_eq!(widen(a.view(), 3), a.mapv(|v| 2 * v as i64 + 3));
}

#[oxla::jit]
fn narrow(a: ArrayView1<i64>) -> ndarray::Array1<i32> {
    a.mapv(|v| v as i32)
}

#[test]
fn narrowing_casts_wrap_as_rusts_as() {
    let a = ndarray::arr1(&[-3_i64, 7, (1 << 31) + 5, -(1 << 31) - 2, (1 << 40) + 9]);
    assert_eq!(narrow(a.view()), a.mapv(|v| v as i32));
}

// ---- batching: the new layout compositions under `vmap`, against a loop

#[oxla::vmap(layouts_batched, in_axes = 0)]
fn layouts(x: ArrayView2<f64>) -> f64 {
    let t = tile(x, (2, 1));
    let r = repeat(x, 3, Axis(1));
    let e = einsum("ij,kj->ik", x, x);
    sum(t * t) + sum(r.sin()) + norm(e) + sum(moveaxis(broadcast_to(x, (2, 3, 4)), 0, -1))
}

#[test]
fn layouts_batch_as_a_loop_over_examples() {
    let xs = input(ndarray::Ix3(5, 3, 4));
    let batched = layouts_batched(xs.view());
    for (b, x) in xs.outer_iter().enumerate() {
        let one = layouts(x);
        assert!(
            (batched[b] - one).abs() <= 1e-12 * one.abs().max(1.0),
            "{b}: {} vs {one}",
            batched[b]
        );
    }
}
