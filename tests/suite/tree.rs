//! Parameter structs (`#[derive(oxla::Tree)]`): taken, returned and
//! differentiated with respect to, as a whole; checked against the same
//! functions written with one parameter per array and against central
//! differences.

use oxla::ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};
use oxla::Tree;

#[derive(oxla::Tree, Clone, Debug, PartialEq)]
struct Mlp {
    w1: Array2<f64>,
    b1: Array1<f64>,
    w2: Array2<f64>,
    b2: Array1<f64>,
}

#[oxla::func]
fn layer(w: &Array2<f64>, b: &Array1<f64>, x: ArrayView2<f64>) -> Array2<f64> {
    (x.dot(w) + b).tanh()
}

#[oxla::transforms(
    value_and_grad(loss_vg, wrt = p),
    grad(loss_grad),
    jvp(loss_jvp, wrt = p),
    vjp(loss_vjp, wrt = p)
)]
fn loss(p: &Mlp, x: ArrayView2<f64>, y: ArrayView1<f64>) -> f64 {
    let h = layer(&p.w1, &p.b1, x);
    let out = h.dot(&p.w2) + &p.b2;
    let r = out.sum_axis(Axis(1)) - y;
    (&r * &r).mean()
}

/// `loss` with one parameter per array.
#[oxla::value_and_grad(loss_flat_vg, wrt = (w1, b1, w2, b2))]
fn loss_flat(
    w1: &Array2<f64>,
    b1: &Array1<f64>,
    w2: &Array2<f64>,
    b2: &Array1<f64>,
    x: ArrayView2<f64>,
    y: ArrayView1<f64>,
) -> f64 {
    let h = layer(w1, b1, x);
    let out = h.dot(w2) + b2;
    let r = out.sum_axis(Axis(1)) - y;
    (&r * &r).mean()
}

/// A struct result: one SGD step.
#[oxla::jit]
fn sgd(p: &Mlp, g: &Mlp, lr: f64) -> Mlp {
    Mlp {
        w1: &p.w1 - &g.w1 * lr,
        b2: &p.b2 - &g.b2 * lr,
        b1: &p.b1 - &g.b1 * lr,
        w2: &p.w2 - &g.w2 * lr,
    }
}

fn uniform(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed;
    move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 33) as f64 / (1u64 << 31) as f64) - 0.5
    }
}

fn mlp(seed: u64) -> Mlp {
    let mut next = uniform(seed);
    Mlp {
        w1: Array2::from_shape_fn((3, 4), |_| next()),
        b1: Array1::from_shape_fn(4, |_| next()),
        w2: Array2::from_shape_fn((4, 2), |_| next()),
        b2: Array1::from_shape_fn(2, |_| next()),
    }
}

fn data() -> (Array2<f64>, Array1<f64>) {
    let x = Array2::from_shape_fn((5, 3), |(i, j)| (i as f64 - 2.0) * 0.3 + j as f64 * 0.1);
    let y = Array1::from_shape_fn(5, |i| (i as f64 * 0.7).sin());
    (x, y)
}

/// `t` with its `k`-th element (over every leaf, in order) moved by `h`.
fn nudged<T: Tree<Elem = f64>>(t: &T, k: usize, h: f64) -> T {
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

/// Every element of `grad` against central differences of `f` at `at`.
fn check_against_central_differences<T: Tree<Elem = f64>>(f: impl Fn(&T) -> f64, at: &T, grad: &T) {
    let g = grad.flatten();
    assert_eq!(g.len(), at.num_elements());
    let h = 1e-6;
    for (k, gk) in g.iter().enumerate() {
        let fd = (f(&nudged(at, k, h)) - f(&nudged(at, k, -h))) / (2.0 * h);
        assert!(
            (gk - fd).abs() < 1e-7 * (1.0 + fd.abs()),
            "element {k}: {gk} vs {fd}"
        );
    }
}

#[test]
fn value_and_grad_of_a_struct_matches_central_differences_leaf_by_leaf() {
    let p = mlp(1);
    let (x, y) = data();
    let (l, g): (f64, Mlp) = loss_vg(&p, x.view(), y.view());
    assert_eq!(l, loss(&p, x.view(), y.view()));
    // The default `wrt` is every float parameter: the struct, x and y.
    let (g2, _, _) = loss_grad(&p, x.view(), y.view());
    assert_eq!(g, g2);
    check_against_central_differences(|q: &Mlp| loss(q, x.view(), y.view()), &p, &g);
    assert_eq!(g.num_leaves(), 4);
    assert_eq!(Mlp::leaf_names(), ["w1", "b1", "w2", "b2"]);
}

#[test]
fn a_struct_parameter_is_its_arrays() {
    let p = mlp(2);
    let (x, y) = data();
    let (l, g) = loss_vg(&p, x.view(), y.view());
    let (lf, g1, g2, g3, g4) = loss_flat_vg(&p.w1, &p.b1, &p.w2, &p.b2, x.view(), y.view());
    assert_eq!(l, lf);
    assert_eq!(
        g,
        Mlp {
            w1: g1,
            b1: g2,
            w2: g3,
            b2: g4
        }
    );
    assert_eq!(
        LOSS_VG_IR
            .replace("p__", "")
            .lines()
            .skip(1)
            .collect::<Vec<_>>(),
        LOSS_FLAT_VG_IR.lines().skip(1).collect::<Vec<_>>(),
        "the same IR but for the parameters' names"
    );
}

#[test]
fn jvp_and_vjp_take_and_give_structs() {
    let p = mlp(3);
    let t = mlp(4);
    let (x, y) = data();
    let (l, g) = loss_vg(&p, x.view(), y.view());
    let (l2, dl) = loss_jvp(&p, x.view(), y.view(), &t);
    assert_eq!(l, l2);
    assert!((dl - g.dot(&t)).abs() < 1e-12 * (1.0 + dl.abs()), "{dl}");
    let (l3, ct): (f64, Mlp) = loss_vjp(&p, x.view(), y.view(), 2.0);
    assert_eq!(l, l3);
    let twice = g.map(|v| 2.0 * v);
    for (a, b) in ct.flatten().iter().zip(twice.flatten()) {
        assert!((a - b).abs() < 1e-12 * (1.0 + b.abs()), "{a} vs {b}");
    }
}

#[test]
fn a_struct_result_is_built_from_its_fields() {
    let p = mlp(5);
    let g = mlp(6);
    let stepped = sgd(&p, &g, 0.1);
    let mut by_axpy = p.clone();
    by_axpy.axpy(-0.1, &g);
    // The kernel may round `p - g·lr` once (a fused multiply-add).
    for (a, b) in stepped.flatten().iter().zip(by_axpy.flatten()) {
        assert!((a - b).abs() <= 1e-15 * (1.0 + b.abs()), "{a} vs {b}");
    }
}

#[test]
fn training_steps_decrease_the_loss_as_the_flat_version_does() {
    let (x, y) = data();
    let lr = 0.2;
    let mut p = mlp(7);
    let (mut w1, mut b1, mut w2, mut b2) = (p.w1.clone(), p.b1.clone(), p.w2.clone(), p.b2.clone());
    let mut losses = Vec::new();
    for _ in 0..20 {
        let (l, g) = loss_vg(&p, x.view(), y.view());
        p.axpy(-lr, &g);
        let (lf, g1, g2, g3, g4) = loss_flat_vg(&w1, &b1, &w2, &b2, x.view(), y.view());
        w1.scaled_add(-lr, &g1);
        b1.scaled_add(-lr, &g2);
        w2.scaled_add(-lr, &g3);
        b2.scaled_add(-lr, &g4);
        assert_eq!(l.to_bits(), lf.to_bits());
        losses.push(l);
    }
    assert_eq!(p, Mlp { w1, b1, w2, b2 });
    assert!(losses[19] < 0.96 * losses[0], "{losses:?}");
    assert!(losses.windows(2).all(|w| w[1] < w[0]), "{losses:?}");
}

// Nested structs, and a helper taking a struct.

#[derive(oxla::Tree, Clone, Debug, PartialEq)]
struct Dense {
    w: Array2<f64>,
    b: Array1<f64>,
}

#[derive(oxla::Tree, Clone, Debug, PartialEq)]
struct Net {
    first: Dense,
    second: Dense,
    temperature: f64,
}

#[oxla::func]
fn dense(l: &Dense, x: ArrayView2<f64>) -> Array2<f64> {
    (x.dot(&l.w) + &l.b).tanh()
}

#[oxla::value_and_grad(net_vg, wrt = net)]
fn net_loss(net: &Net, x: ArrayView2<f64>) -> f64 {
    let h = dense(&net.first, x);
    let o = dense(&net.second, h);
    (o * net.temperature).exp().sum().ln()
}

fn net(seed: u64) -> Net {
    let mut next = uniform(seed);
    Net {
        first: Dense {
            w: Array2::from_shape_fn((3, 4), |_| next()),
            b: Array1::from_shape_fn(4, |_| next()),
        },
        second: Dense {
            w: Array2::from_shape_fn((4, 2), |_| next()),
            b: Array1::from_shape_fn(2, |_| next()),
        },
        temperature: 0.7,
    }
}

#[test]
fn nested_structs_and_a_helper_taking_a_struct() {
    let n = net(8);
    let (x, _) = data();
    let (l, g): (f64, Net) = net_vg(&n, x.view());
    assert_eq!(l, net_loss(&n, x.view()));
    check_against_central_differences(|q: &Net| net_loss(q, x.view()), &n, &g);
    assert_eq!(
        Net::leaf_names(),
        ["first.w", "first.b", "second.w", "second.b", "temperature"]
    );
    // The helper is an ordinary function too.
    let h = dense(&n.first, x.view());
    let by_hand = (x.dot(&n.first.w) + &n.first.b).mapv(f64::tanh);
    for (a, b) in h.iter().zip(&by_hand) {
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }
}

#[test]
fn tree_helpers() {
    let a = net(9);
    let b = net(10);
    assert_eq!(a.num_leaves(), 5);
    assert_eq!(a.num_elements(), 12 + 4 + 8 + 2 + 1);
    let flat_a = a.flatten();
    let flat_b = b.flatten();
    assert_eq!(flat_a.len(), a.num_elements());
    assert_eq!(flat_a[flat_a.len() - 1], 0.7);
    let dot: f64 = flat_a.iter().zip(&flat_b).map(|(x, y)| x * y).sum();
    assert!((a.dot(&b) - dot).abs() < 1e-12);
    let norm = flat_a.iter().map(|x| x * x).sum::<f64>().sqrt();
    assert!((a.norm2() - norm).abs() < 1e-12);
    let z = a.zeros_like();
    assert!(z.flatten().iter().all(|&v| v == 0.0));
    let s = a.zip_map(&b, |x, y| x - 2.0 * y);
    let want: Vec<f64> = flat_a
        .iter()
        .zip(&flat_b)
        .map(|(x, y)| x - 2.0 * y)
        .collect();
    assert_eq!(s.flatten(), want);
    let mut c = a.clone();
    c.scale(3.0);
    assert_eq!(
        c.flatten(),
        flat_a.iter().map(|x| 3.0 * x).collect::<Vec<_>>()
    );
    let mut d = a.clone();
    d.axpy(0.5, &b);
    let want: Vec<f64> = flat_a
        .iter()
        .zip(&flat_b)
        .map(|(x, y)| x + 0.5 * y)
        .collect();
    assert_eq!(d.flatten(), want);
}

// A struct in another module, named by paths; scalar leaves only (the
// functions are straight-line Rust); two structs in, a tuple with a struct
// out.

mod shapes {
    #[derive(oxla::Tree, Clone, Copy, Debug, PartialEq)]
    pub struct Point {
        pub x: f64,
        pub y: f64,
    }
}

#[oxla::transforms(grad(dist_grad, wrt = (a, b)), jvp(dist_jvp, wrt = a))]
fn dist(a: &crate::tree::shapes::Point, b: &shapes::Point, scale: f64) -> f64 {
    scale * ((a.x - b.x).powi(2) + (a.y - b.y).powi(2)).sqrt()
}

#[oxla::jit]
fn midpoint_and_gap(a: &shapes::Point, b: &shapes::Point) -> (shapes::Point, f64) {
    (
        shapes::Point {
            x: (a.x + b.x) * 0.5,
            y: (a.y + b.y) * 0.5,
        },
        b.x - a.x,
    )
}

#[test]
fn structs_of_scalars_by_path_two_in_and_a_tuple_out() {
    use shapes::Point;
    let (a, b) = (Point { x: 1.0, y: 2.0 }, Point { x: 4.0, y: 6.0 });
    assert_eq!(dist(&a, &b, 2.0), 10.0);
    let close = |p: Point, x: f64, y: f64| (p.x - x).abs() < 1e-15 && (p.y - y).abs() < 1e-15;
    // d/da of 2·|a − b| is 2·(a − b)/|a − b| = (−0.6, −0.8)·2.
    let (ga, gb): (Point, Point) = dist_grad(&a, &b, 2.0);
    assert!(close(ga, -1.2, -1.6), "{ga:?}");
    assert!(close(gb, 1.2, 1.6), "{gb:?}");
    let (d, dd) = dist_jvp(&a, &b, 2.0, &Point { x: 1.0, y: 0.0 });
    assert_eq!(d, 10.0);
    assert!((dd - ga.x).abs() < 1e-15, "{dd}");
    assert_eq!(midpoint_and_gap(&a, &b), (Point { x: 2.5, y: 4.0 }, 3.0));
}

// In an `impl` block, as an associated function.
struct Model;

impl Model {
    #[oxla::grad(energy_grad)]
    fn energy(p: &shapes::Point) -> f64 {
        p.x * p.x + 3.0 * p.y
    }
}

#[test]
fn associated_functions_take_structs_too() {
    let g = Model::energy_grad(&shapes::Point { x: 2.0, y: 5.0 });
    assert_eq!(g, shapes::Point { x: 4.0, y: 3.0 });
    assert_eq!(Model::energy(&shapes::Point { x: 2.0, y: 5.0 }), 19.0);
}

// `vmap` with the struct shared by every example.
#[oxla::transforms(vmap(predict_batch, in_axes = (None, 0)))]
fn predict(d: &Dense, x: ArrayView1<f64>) -> Array1<f64> {
    (x.dot(&d.w) + &d.b).tanh()
}

#[test]
fn vmap_shares_a_struct_between_examples() {
    let n = net(11);
    let xs = Array2::from_shape_fn((6, 3), |(i, j)| (i * 3 + j) as f64 * 0.1 - 0.8);
    let batched = predict_batch(&n.first, xs.view());
    assert_eq!(batched.dim(), (6, 4));
    for (i, row) in xs.rows().into_iter().enumerate() {
        let one = predict(&n.first, row);
        for (a, b) in batched.row(i).iter().zip(&one) {
            assert!((a - b).abs() < 1e-14, "{a} vs {b}");
        }
    }
}

// A `let` naming a part of a struct, and a `let` shadowing a struct's name.
#[oxla::grad(aliased_grad, wrt = net)]
fn aliased(net: &Net, x: ArrayView2<f64>) -> f64 {
    let first = &net.first;
    let h = dense(first, x);
    let w = &first.w;
    let net = sum(h) * net.temperature + sum(w);
    net * 2.0
}

#[test]
fn let_names_a_part_of_a_struct() {
    let n = net(12);
    let (x, _) = data();
    let g: Net = aliased_grad(&n, x.view());
    let direct = 2.0 * (dense(&n.first, x.view()).sum() * n.temperature + n.first.w.sum());
    assert!((aliased(&n, x.view()) - direct).abs() < 1e-12);
    check_against_central_differences(|q: &Net| aliased(q, x.view()), &n, &g);
}

// Arrays of structs (and of scalars) as fields.
#[derive(oxla::Tree, Clone, Debug, PartialEq)]
struct Stack {
    layers: [Dense; 3],
    gains: [f64; 2],
}

#[oxla::value_and_grad(stack_vg, wrt = s)]
fn stack_loss(s: &Stack, x: ArrayView2<f64>) -> f64 {
    let h = dense(&s.layers[0], x);
    let last = &s.layers[2];
    let h = dense(&s.layers[1], h) * s.gains[0];
    sum(dense(last, h)) * s.gains[1] + sum(&last.w)
}

#[oxla::jit]
fn scaled_stack(s: &Stack, k: f64) -> Stack {
    Stack {
        layers: [
            Dense {
                w: &s.layers[0].w * k,
                b: &s.layers[0].b * k,
            },
            s.layers[1],
            Dense {
                w: &s.layers[2].w * k,
                b: &s.layers[2].b * k,
            },
        ],
        gains: [s.gains[0] * k, s.gains[1]],
    }
}

#[test]
fn arrays_of_structs_as_fields() {
    let mut next = uniform(13);
    let mut layer = |i: usize, o: usize| Dense {
        w: Array2::from_shape_fn((i, o), |_| next()),
        b: Array1::from_shape_fn(o, |_| next()),
    };
    let s = Stack {
        layers: [layer(3, 4), layer(4, 4), layer(4, 2)],
        gains: [0.8, 1.3],
    };
    let (x, _) = data();
    let (l, g): (f64, Stack) = stack_vg(&s, x.view());
    assert_eq!(l, stack_loss(&s, x.view()));
    check_against_central_differences(|q: &Stack| stack_loss(q, x.view()), &s, &g);
    assert_eq!(
        Stack::leaf_names(),
        [
            "layers.0.w",
            "layers.0.b",
            "layers.1.w",
            "layers.1.b",
            "layers.2.w",
            "layers.2.b",
            "gains.0",
            "gains.1"
        ]
    );
    let scaled = scaled_stack(&s, 2.0);
    assert_eq!(scaled.layers[1], s.layers[1]);
    assert_eq!(scaled.gains, [1.6, 1.3]);
    for (a, b) in scaled.layers[2].w.iter().zip(&s.layers[2].w) {
        assert_eq!(*a, 2.0 * b);
    }
}

// Loops over an array of structs, unrolled as JAX's Python loop over a
// list of layers is traced.
#[derive(oxla::Tree, Clone, Debug, PartialEq)]
struct Deep {
    layers: [Dense; 3],
    scale: f64,
}

#[oxla::value_and_grad(deep_vg, wrt = d)]
fn deep_loss(d: &Deep, x: ArrayView2<f64>) -> f64 {
    let mut h = x.to_owned();
    for layer in d.layers.iter() {
        h = dense(layer, h.view());
    }
    sum(h) * d.scale
}

#[oxla::grad(deep_indexed_grad, wrt = d)]
fn deep_indexed(d: &Deep, x: ArrayView2<f64>) -> f64 {
    let mut h = x.to_owned();
    let mut penalty = 0.0;
    for i in 0..3 {
        h = dense(&d.layers[i], h.view());
        penalty += sum(&d.layers[i].w * &d.layers[i].w) * (i as f64 + 1.0);
    }
    sum(h) * d.scale + penalty
}

#[test]
fn loops_over_an_array_of_structs() {
    let mut next = uniform(17);
    let mut layer = || Dense {
        w: Array2::from_shape_fn((3, 3), |_| next()),
        b: Array1::from_shape_fn(3, |_| next()),
    };
    let d = Deep {
        layers: [layer(), layer(), layer()],
        scale: 0.7,
    };
    let (x, _) = data();
    // Plain Rust.
    let mut h = x.clone();
    let mut penalty = 0.0;
    for (i, l) in d.layers.iter().enumerate() {
        h = (h.dot(&l.w) + &l.b).mapv(f64::tanh);
        penalty += l.w.mapv(|v| v * v).sum() * (i as f64 + 1.0);
    }
    let want = h.sum() * d.scale;
    let (l, g) = deep_vg(&d, x.view());
    assert!((l - want).abs() < 1e-14, "{l} vs {want}");
    check_against_central_differences(|q: &Deep| deep_loss(q, x.view()), &d, &g);
    let want = want + penalty;
    assert!((deep_indexed(&d, x.view()) - want).abs() < 1e-13);
    let g = deep_indexed_grad(&d, x.view());
    check_against_central_differences(|q: &Deep| deep_indexed(q, x.view()), &d, &g);
}

// A helper returning a struct, bound by `let` in an annotated function.
#[oxla::func]
fn shrunk(l: &Dense, by: f64) -> Dense {
    Dense {
        w: &l.w * by,
        b: &l.b + by,
    }
}

#[oxla::grad(shrunk_loss_grad, wrt = l)]
fn shrunk_loss(l: &Dense, x: ArrayView2<f64>) -> f64 {
    let s = shrunk(l, 0.5);
    sum(dense(&s, x))
}

#[test]
fn a_helper_returns_a_struct() {
    let n = net(13);
    let (x, _) = data();
    let s = shrunk(&n.first, 0.5);
    assert_eq!(s.w, &n.first.w * 0.5);
    let direct = dense(&s, x.view()).sum();
    assert!((shrunk_loss(&n.first, x.view()) - direct).abs() < 1e-12);
    let g: Dense = shrunk_loss_grad(&n.first, x.view());
    check_against_central_differences(|q: &Dense| shrunk_loss(q, x.view()), &n.first, &g);
}
