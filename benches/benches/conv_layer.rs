//! A 3×3 convolution layer's forward and backward pass (batch 32, 64 → 64
//! features, 32×32, "SAME", f32) in oxla — `value_and_grad` of
//! `sum(conv(x, w) · g)`, whose gradient is both of the convolution's
//! transposes — beside the same three products written by hand as im2col
//! and one `gemm` call each per image (col2im for the input's gradient).
//! Both run `gemm` on one thread. Run:
//! `cargo bench -p oxla-benches --bench conv_layer`.

use criterion::{criterion_group, criterion_main, Criterion};
use oxla::ndarray::Array4;
use oxla_benches::conv_layer::layer_and_grad;
use std::hint::black_box;

const N: usize = 32;
const C: usize = 64;
const O: usize = 64;
const S: usize = 32;
const K: usize = 3;

/// `dst (m×n) = a (m×k) · b (k×n)` (+ `dst` when `add`), row-major, one
/// thread.
#[allow(clippy::too_many_arguments)]
fn matmul(
    m: usize,
    n: usize,
    k: usize,
    dst: &mut [f32],
    a: &[f32],
    b: &[f32],
    add: bool,
    [ta, tb]: [bool; 2],
) {
    assert!(dst.len() >= m * n && a.len() >= m * k && b.len() >= k * n);
    // (column, row) strides of a row-major matrix, or of its transpose.
    let st = |t: bool, cols: usize| {
        if t {
            (cols as isize, 1)
        } else {
            (1, cols as isize)
        }
    };
    let (a_cs, a_rs) = st(ta, if ta { m } else { k });
    let (b_cs, b_rs) = st(tb, if tb { k } else { n });
    // SAFETY: every operand holds its matrix (checked above) at the strides
    // given; `dst` overlaps neither operand.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            add,
            a.as_ptr(),
            a_cs,
            a_rs,
            b.as_ptr(),
            b_cs,
            b_rs,
            1.0f32,
            1.0f32,
            false,
            false,
            false,
            gemm::Parallelism::None,
        )
    }
}

/// The patches of one image: row `(c, dy, dx)`, column `(i, j)`.
fn im2col(x: &[f32], col: &mut [f32]) {
    for c in 0..C {
        for dy in 0..K {
            for dx in 0..K {
                let row = &mut col[((c * K + dy) * K + dx) * S * S..][..S * S];
                for i in 0..S {
                    for j in 0..S {
                        let (y, z) = (i + dy, j + dx);
                        row[i * S + j] = if (1..=S).contains(&y) && (1..=S).contains(&z) {
                            x[(c * S + y - 1) * S + z - 1]
                        } else {
                            0.0
                        };
                    }
                }
            }
        }
    }
}

/// The patches' gradient added back into one image's.
fn col2im(col: &[f32], gx: &mut [f32]) {
    gx.fill(0.0);
    for c in 0..C {
        for dy in 0..K {
            for dx in 0..K {
                let row = &col[((c * K + dy) * K + dx) * S * S..][..S * S];
                for i in 0..S {
                    for j in 0..S {
                        let (y, z) = (i + dy, j + dx);
                        if (1..=S).contains(&y) && (1..=S).contains(&z) {
                            gx[(c * S + y - 1) * S + z - 1] += row[i * S + j];
                        }
                    }
                }
            }
        }
    }
}

/// The same value and gradients by hand.
fn by_hand(x: &[f32], w: &[f32], g: &[f32], gx: &mut [f32], gw: &mut [f32]) -> f32 {
    let (ck, hw) = (C * K * K, S * S);
    let mut col = vec![0.0f32; ck * hw];
    let mut y = vec![0.0f32; O * hw];
    let mut dcol = vec![0.0f32; ck * hw];
    let mut value = 0.0f32;
    for n in 0..N {
        let (xn, gn) = (&x[n * C * hw..][..C * hw], &g[n * O * hw..][..O * hw]);
        im2col(xn, &mut col);
        matmul(O, hw, ck, &mut y, w, &col, false, [false, false]);
        value += y.iter().zip(gn).map(|(a, b)| a * b).sum::<f32>();
        // gw += g_n · colᵀ; dcol = wᵀ · g_n.
        matmul(O, ck, hw, gw, gn, &col, n > 0, [false, true]);
        matmul(ck, hw, O, &mut dcol, w, gn, false, [true, false]);
        col2im(&dcol, &mut gx[n * C * hw..][..C * hw]);
    }
    value
}

fn bench(c: &mut Criterion) {
    let mut seed = 1u32;
    let mut rand = |_| {
        seed = seed.wrapping_mul(1664525).wrapping_add(1013904223);
        (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
    };
    let x = Array4::from_shape_fn((N, C, S, S), &mut rand);
    let w = Array4::from_shape_fn((O, C, K, K), &mut rand);
    let g = Array4::from_shape_fn((N, O, S, S), &mut rand);
    let (xs, ws, gs) = (
        x.as_slice().unwrap(),
        w.as_slice().unwrap(),
        g.as_slice().unwrap(),
    );
    let mut gx = vec![0.0f32; xs.len()];
    let mut gw = vec![0.0f32; ws.len()];
    // The two agree before either is timed.
    let (v, ox, ow) = layer_and_grad(x.view(), w.view(), g.view());
    let hv = by_hand(xs, ws, gs, &mut gx, &mut gw);
    let near = |a: &[f32], b: &[f32]| {
        let scale = b.iter().fold(0f32, |m, v| m.max(v.abs()));
        a.iter().zip(b).all(|(p, q)| (p - q).abs() <= 1e-4 * scale)
    };
    assert!((v - hv).abs() <= 1e-3 * hv.abs().max(1.0), "{v} vs {hv}");
    assert!(near(ox.as_slice().unwrap(), &gx) && near(ow.as_slice().unwrap(), &gw));

    let mut group = c.benchmark_group("conv3x3_b32_64to64_32x32_fwd_bwd");
    group.sample_size(10);
    group.bench_function("oxla", |b| {
        b.iter(|| black_box(layer_and_grad(x.view(), w.view(), g.view())))
    });
    group.bench_function("im2col_gemm_by_hand", |b| {
        b.iter(|| black_box(by_hand(xs, ws, gs, &mut gx, &mut gw)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
