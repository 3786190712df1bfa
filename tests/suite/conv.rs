//! Convolution and pooling against JAX (`tests/reference/conv_jax.py`, its
//! output read here): `conv_general_dilated` in 1, 2 and 3 spatial
//! dimensions with strides, padding ("SAME", "VALID", explicit), lhs and
//! rhs dilation, feature groups and NHWC; the gradient of `sum(y²)` with
//! respect to both operands (JAX's, and central differences); `vmap` over
//! the input; max, sum and average pooling with their gradients on inputs
//! with ties (the whole cotangent to the first maximum, as JAX).

use oxla::ndarray::{
    Array3, Array4, Array5, ArrayD, ArrayView3, ArrayView4, ArrayView5, Dimension,
};
use oxla::{grad, jit, vmap};

/// JAX's values: `name` → its array.
fn jax(name: &str) -> ArrayD<f64> {
    let text = include_str!("../reference/conv_jax.txt");
    crate::reference::reference_array(text, "conv_jax.txt", name)
}

fn jax_n<D: Dimension>(name: &str) -> oxla::ndarray::Array<f64, D> {
    jax(name).into_dimensionality().unwrap()
}

#[track_caller]
fn close(what: &str, got: &[f64], want: &ArrayD<f64>, tol: f64) {
    let want = want.as_slice().unwrap();
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * w.abs().max(1.0),
            "{what}[{i}]: {g} vs JAX {w}"
        );
    }
}

// ---- 2-D, NCHW: strides, explicit padding, window dilation --------------

#[jit]
fn c2d(x: ArrayView4<f64>, w: ArrayView4<f64>) -> Array4<f64> {
    conv_general_dilated(x, w, [2, 1], [(1, 2), (2, 0)], [1, 1], [2, 1])
}

#[grad(c2d_loss_grad, wrt = (x, w))]
fn c2d_loss(x: ArrayView4<f64>, w: ArrayView4<f64>) -> f64 {
    let y = conv_general_dilated(x, w, [2, 1], [(1, 2), (2, 0)], [1, 1], [2, 1]);
    (y.clone() * y).sum()
}

#[test]
fn conv_2d_strided_padded_dilated_is_jaxs() {
    let (x, w) = (
        jax_n::<oxla::ndarray::Ix4>("c2d_x"),
        jax_n::<oxla::ndarray::Ix4>("c2d_w"),
    );
    let y = c2d(x.view(), w.view());
    close("c2d_y", y.as_slice().unwrap(), &jax("c2d_y"), 1e-13);
    let (gx, gw) = c2d_loss_grad(x.view(), w.view());
    close("c2d_gx", gx.as_slice().unwrap(), &jax("c2d_gx"), 1e-13);
    close("c2d_gw", gw.as_slice().unwrap(), &jax("c2d_gw"), 1e-13);
    // Central differences at a few coordinates of each operand.
    let h = 1e-6;
    for idx in [[0, 0, 1, 2], [1, 2, 6, 5], [0, 1, 3, 0]] {
        let (mut p, mut m) = (x.clone(), x.clone());
        p[idx] += h;
        m[idx] -= h;
        let fd = (c2d_loss(p.view(), w.view()) - c2d_loss(m.view(), w.view())) / (2.0 * h);
        assert!(
            (fd - gx[idx]).abs() <= 1e-6 * gx[idx].abs().max(1.0),
            "x{idx:?}: {fd} vs {}",
            gx[idx]
        );
    }
    for idx in [[0, 0, 0, 0], [3, 2, 2, 1], [1, 1, 1, 0]] {
        let (mut p, mut m) = (w.clone(), w.clone());
        p[idx] += h;
        m[idx] -= h;
        let fd = (c2d_loss(x.view(), p.view()) - c2d_loss(x.view(), m.view())) / (2.0 * h);
        assert!(
            (fd - gw[idx]).abs() <= 1e-6 * gw[idx].abs().max(1.0),
            "w{idx:?}: {fd} vs {}",
            gw[idx]
        );
    }
}

// ---- "SAME" with strides (sizes known only at the call) ------------------

#[grad(same_loss_grad, wrt = (x, w))]
fn same_loss(x: ArrayView4<f64>, w: ArrayView4<f64>) -> f64 {
    let y = conv(x, w, [2, 2], Padding::Same);
    (y.clone() * y).sum()
}

#[jit]
fn same(x: ArrayView4<f64>, w: ArrayView4<f64>) -> Array4<f64> {
    conv(x, w, [2, 2], "SAME")
}

#[test]
fn conv_same_padding_is_jaxs() {
    let (x, w) = (
        jax_n::<oxla::ndarray::Ix4>("same_x"),
        jax_n::<oxla::ndarray::Ix4>("same_w"),
    );
    close(
        "same_y",
        same(x.view(), w.view()).as_slice().unwrap(),
        &jax("same_y"),
        1e-13,
    );
    let (gx, gw) = same_loss_grad(x.view(), w.view());
    close("same_gx", gx.as_slice().unwrap(), &jax("same_gx"), 1e-13);
    close("same_gw", gw.as_slice().unwrap(), &jax("same_gw"), 1e-13);
}

// ---- NHWC / HWIO ---------------------------------------------------------

#[jit]
fn nhwc(x: ArrayView4<f64>, w: ArrayView4<f64>) -> Array4<f64> {
    conv_general_dilated(
        x,
        w,
        [1, 1],
        Padding::Valid,
        [1, 1],
        [1, 2],
        ("NHWC", "HWIO", "NHWC"),
    )
}

#[grad(nhwc_loss_grad, wrt = (x, w))]
fn nhwc_loss(x: ArrayView4<f64>, w: ArrayView4<f64>) -> f64 {
    let y = conv_general_dilated(x, w, 1, "VALID", 1, [1, 2], ("NHWC", "HWIO", "NHWC"));
    (y.clone() * y).sum()
}

#[test]
fn conv_nhwc_is_jaxs() {
    let (x, w) = (
        jax_n::<oxla::ndarray::Ix4>("nhwc_x"),
        jax_n::<oxla::ndarray::Ix4>("nhwc_w"),
    );
    close(
        "nhwc_y",
        nhwc(x.view(), w.view()).as_slice().unwrap(),
        &jax("nhwc_y"),
        1e-13,
    );
    let (gx, gw) = nhwc_loss_grad(x.view(), w.view());
    close("nhwc_gx", gx.as_slice().unwrap(), &jax("nhwc_gx"), 1e-13);
    close("nhwc_gw", gw.as_slice().unwrap(), &jax("nhwc_gw"), 1e-13);
}

// ---- feature groups (the core API: with groups the feature sizes must be
// known when the function is built, which ndarray views do not give) ------

#[test]
fn conv_feature_groups_is_jaxs() {
    use oxla::oxla_core::ops::conv::{conv_general_dilated, ConvDims, Padding};
    use oxla::oxla_core::transforms::grad;
    use oxla::oxla_core::{interp, DType, Dim, Function, Shape, Tensor, Type};
    let ty = |d: &[usize]| {
        Type::new(
            DType::F64,
            Shape(d.iter().map(|n| Dim::Const(*n as u64)).collect()),
        )
    };
    let tensor = |name: &str| {
        let a = jax(name);
        Tensor::new(DType::F64, a.shape().to_vec(), a.iter().copied().collect())
    };
    let (x, w) = (tensor("groups_x"), tensor("groups_w"));
    let build = |square: bool| {
        let mut f = Function::new("groups");
        let xv = f.add_param("x", ty(&x.shape));
        let wv = f.add_param("w", ty(&w.shape));
        let pad = Padding::Explicit(vec![(1, 1), (1, 1)]);
        let y = conv_general_dilated(
            &mut f,
            xv,
            wv,
            &[1, 2],
            &pad,
            &[1, 1],
            &[1, 1],
            &ConvDims::nchw(2),
            2,
        )
        .unwrap();
        f.outs = vec![if square {
            let yy = f.mul(y, y);
            f.reduce_sum(yy, vec![0, 1, 2, 3])
        } else {
            y
        }];
        f
    };
    let y = interp::eval(&build(false), &[x.clone(), w.clone()]).unwrap();
    close("groups_y", &y[0].data, &jax("groups_y"), 1e-13);
    let g = grad(&build(true), &[0, 1]).unwrap();
    let gs = interp::eval(&g, &[x, w]).unwrap();
    close("groups_gx", &gs[0].data, &jax("groups_gx"), 1e-13);
    close("groups_gw", &gs[1].data, &jax("groups_gw"), 1e-13);
}

// ---- 1-D, 3-D, lhs dilation ----------------------------------------------

#[grad(c1d_grad, wrt = (x, w))]
fn c1d_loss(x: ArrayView3<f64>, w: ArrayView3<f64>) -> f64 {
    let y = conv(x, w, [3], [(1, 1)]);
    (y.clone() * y).sum()
}

#[jit]
fn c1d(x: ArrayView3<f64>, w: ArrayView3<f64>) -> Array3<f64> {
    conv(x, w, 3, [(1, 1)])
}

#[grad(c3d_grad, wrt = (x, w))]
fn c3d_loss(x: ArrayView5<f64>, w: ArrayView5<f64>) -> f64 {
    let y = conv(x, w, [1, 1, 2], Padding::Same);
    (y.clone() * y).sum()
}

#[jit]
fn c3d(x: ArrayView5<f64>, w: ArrayView5<f64>) -> Array5<f64> {
    conv(x, w, [1, 1, 2], Padding::Same)
}

#[grad(lhsdil_grad, wrt = (x, w))]
fn lhsdil_loss(x: ArrayView4<f64>, w: ArrayView4<f64>) -> f64 {
    let y = conv_general_dilated(x, w, [1, 2], [(0, 1), (0, 1)], [2, 1], [1, 1]);
    (y.clone() * y).sum()
}

#[jit]
fn lhsdil(x: ArrayView4<f64>, w: ArrayView4<f64>) -> Array4<f64> {
    conv_general_dilated(x, w, [1, 2], [(0, 1), (0, 1)], [2, 1], [1, 1])
}

#[test]
fn conv_1d_3d_and_lhs_dilation_are_jaxs() {
    let (x, w) = (
        jax_n::<oxla::ndarray::Ix3>("c1d_x"),
        jax_n::<oxla::ndarray::Ix3>("c1d_w"),
    );
    close(
        "c1d_y",
        c1d(x.view(), w.view()).as_slice().unwrap(),
        &jax("c1d_y"),
        1e-13,
    );
    let (gx, gw) = c1d_grad(x.view(), w.view());
    close("c1d_gx", gx.as_slice().unwrap(), &jax("c1d_gx"), 1e-13);
    close("c1d_gw", gw.as_slice().unwrap(), &jax("c1d_gw"), 1e-13);

    let (x, w) = (
        jax_n::<oxla::ndarray::Ix5>("c3d_x"),
        jax_n::<oxla::ndarray::Ix5>("c3d_w"),
    );
    close(
        "c3d_y",
        c3d(x.view(), w.view()).as_slice().unwrap(),
        &jax("c3d_y"),
        1e-13,
    );
    let (gx, gw) = c3d_grad(x.view(), w.view());
    close("c3d_gx", gx.as_slice().unwrap(), &jax("c3d_gx"), 1e-13);
    close("c3d_gw", gw.as_slice().unwrap(), &jax("c3d_gw"), 1e-13);

    let (x, w) = (
        jax_n::<oxla::ndarray::Ix4>("lhsdil_x"),
        jax_n::<oxla::ndarray::Ix4>("lhsdil_w"),
    );
    close(
        "lhsdil_y",
        lhsdil(x.view(), w.view()).as_slice().unwrap(),
        &jax("lhsdil_y"),
        1e-13,
    );
    let (gx, gw) = lhsdil_grad(x.view(), w.view());
    close(
        "lhsdil_gx",
        gx.as_slice().unwrap(),
        &jax("lhsdil_gx"),
        1e-13,
    );
    close(
        "lhsdil_gw",
        gw.as_slice().unwrap(),
        &jax("lhsdil_gw"),
        1e-13,
    );
}

// ---- vmap over the input -------------------------------------------------

#[vmap(conv_each, in_axes = (0, None))]
fn conv_one(x: ArrayView4<f64>, w: ArrayView4<f64>) -> Array4<f64> {
    conv(x, w, [1, 2], [(1, 0), (0, 1)])
}

#[test]
fn vmap_of_conv_is_jaxs() {
    let (x, w) = (
        jax_n::<oxla::ndarray::Ix5>("vmap_x"),
        jax_n::<oxla::ndarray::Ix4>("vmap_w"),
    );
    let y = conv_each(x.view(), w.view());
    close("vmap_y", y.as_slice().unwrap(), &jax("vmap_y"), 1e-13);
}

// ---- pooling -------------------------------------------------------------

#[jit]
fn pools(x: ArrayView4<f64>) -> (Array4<f64>, Array4<f64>, Array4<f64>, Array4<f64>) {
    (
        max_pool(x, [2, 2], [2, 2], Padding::Valid),
        reduce_window_sum(x, [1, 1, 3, 3], [1, 1, 2, 1], "SAME"),
        avg_pool(x, [3, 3], [2, 1], Padding::Same),
        max_pool(x, [3, 3], [2, 2], Padding::Same),
    )
}

#[grad(max_pool_grad, wrt = x)]
fn max_pool_loss(x: ArrayView4<f64>, c: ArrayView4<f64>) -> f64 {
    (max_pool(x, [2, 2], [2, 2], Padding::Valid) * c).sum()
}

#[grad(max_pool_same_grad, wrt = x)]
fn max_pool_same_loss(x: ArrayView4<f64>, c: ArrayView4<f64>) -> f64 {
    (reduce_window_max(x, [1, 1, 3, 3], [1, 1, 2, 2], Padding::Same) * c).sum()
}

#[grad(sum_pool_grad, wrt = x)]
fn sum_pool_loss(x: ArrayView4<f64>) -> f64 {
    let y = reduce_window_sum(x, [1, 1, 3, 3], [1, 1, 2, 1], Padding::Same);
    (y.clone() * y).sum()
}

#[grad(avg_pool_grad, wrt = x)]
fn avg_pool_loss(x: ArrayView4<f64>) -> f64 {
    let y = avg_pool(x, [3, 3], [2, 1], Padding::Same);
    (y.clone() * y).sum()
}

#[test]
fn pooling_and_its_gradients_are_jaxs_with_ties() {
    let x = jax_n::<oxla::ndarray::Ix4>("pool_x");
    let (mx, sm, av, ms) = pools(x.view());
    close(
        "max_pool_y",
        mx.as_slice().unwrap(),
        &jax("max_pool_y"),
        0.0,
    );
    close(
        "sum_pool_y",
        sm.as_slice().unwrap(),
        &jax("sum_pool_y"),
        0.0,
    );
    close(
        "avg_pool_y",
        av.as_slice().unwrap(),
        &jax("avg_pool_y"),
        1e-15,
    );
    close(
        "max_pool_same_y",
        ms.as_slice().unwrap(),
        &jax("max_pool_same_y"),
        0.0,
    );
    let c = jax_n::<oxla::ndarray::Ix4>("pool_c");
    let g = max_pool_grad(x.view(), c.view());
    close("max_pool_g", g.as_slice().unwrap(), &jax("max_pool_g"), 0.0);
    let c2 = jax_n::<oxla::ndarray::Ix4>("max_pool_same_c");
    let g = max_pool_same_grad(x.view(), c2.view());
    close(
        "max_pool_same_g",
        g.as_slice().unwrap(),
        &jax("max_pool_same_g"),
        0.0,
    );
    let g = sum_pool_grad(x.view());
    close(
        "sum_pool_g",
        g.as_slice().unwrap(),
        &jax("sum_pool_g"),
        1e-15,
    );
    let g = avg_pool_grad(x.view());
    close(
        "avg_pool_g",
        g.as_slice().unwrap(),
        &jax("avg_pool_g"),
        1e-14,
    );
}
