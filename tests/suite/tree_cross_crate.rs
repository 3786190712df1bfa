//! Parameter structs defined in another crate (`oxla-layers-test`), named
//! by a `use` and by a full path, with a helper of that crate taking one.

use oxla::ndarray::{Array1, Array2, ArrayView2};
use oxla::Tree;
use oxla_layers_test::params::{dense, Dense};

#[oxla::value_and_grad(net_vg, wrt = net)]
fn net_loss(net: &oxla_layers_test::params::TwoLayers, x: ArrayView2<f32>) -> f32 {
    let h = dense(&net.hidden, x);
    sum(oxla_layers_test::params::dense(&net.out, h))
}

#[oxla::grad(dense_grad, wrt = l)]
fn dense_sum(l: &Dense, x: ArrayView2<f32>) -> f32 {
    sum(dense(l, x))
}

fn two_layers() -> oxla_layers_test::params::TwoLayers {
    let v = |n: usize, k: f32| (n as f32 * k).sin() * 0.5;
    oxla_layers_test::params::TwoLayers {
        hidden: Dense {
            w: Array2::from_shape_fn((3, 4), |(i, j)| v(i * 4 + j, 0.9)),
            b: Array1::from_shape_fn(4, |i| v(i, 1.7)),
        },
        out: Dense {
            w: Array2::from_shape_fn((4, 2), |(i, j)| v(i * 2 + j, 2.3)),
            b: Array1::from_shape_fn(2, |i| v(i, 0.4)),
        },
    }
}

/// The struct with its `k`-th element moved by `h`.
fn nudged<T: Tree<Elem = f32>>(t: &T, k: usize, h: f32) -> T {
    let mut out = t.clone();
    let mut i = 0;
    out.for_each_leaf_mut(&mut |mut l| {
        for v in l.iter_mut() {
            if i == k {
                *v += h;
            }
            i += 1;
        }
    });
    out
}

#[test]
fn grad_wrt_a_struct_of_another_crate_matches_central_differences() {
    let net = two_layers();
    let x = Array2::from_shape_fn((5, 3), |(i, j)| (i as f32 - 2.0) * 0.3 + j as f32 * 0.1);
    let (l, g) = net_vg(&net, x.view());
    assert_eq!(l, net_loss(&net, x.view()));
    assert_eq!(g.num_leaves(), 4);
    let h = 1e-2f32;
    for (k, gk) in g.flatten().iter().enumerate() {
        let up = net_loss(&nudged(&net, k, h), x.view()) as f64;
        let down = net_loss(&nudged(&net, k, -h), x.view()) as f64;
        let fd = (up - down) / (2.0 * h as f64);
        assert!(
            (*gk as f64 - fd).abs() < 2e-3 * (1.0 + fd.abs()),
            "element {k}: {gk} vs {fd}"
        );
    }
    // A helper of the other crate, taking its struct, differentiated.
    let gl: Dense = dense_grad(&net.hidden, x.view());
    for (k, gk) in gl.flatten().iter().enumerate() {
        let up = dense_sum(&nudged(&net.hidden, k, h), x.view()) as f64;
        let down = dense_sum(&nudged(&net.hidden, k, -h), x.view()) as f64;
        let fd = (up - down) / (2.0 * h as f64);
        assert!(
            (*gk as f64 - fd).abs() < 2e-3 * (1.0 + fd.abs()),
            "element {k}: {gk} vs {fd}"
        );
    }
}
