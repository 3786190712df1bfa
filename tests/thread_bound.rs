//! `set_num_threads(1)` bounds every part of a call, the library's matrix
//! products included: process CPU time over wall time stays near 1 while a
//! function whose time is matrix products runs (before, `gemm` ran large
//! products on rayon's global pool, one thread per core whatever oxla's
//! setting: 1.65 on two cores). And the products, matrix-vector ones split
//! across threads included, give the same bits at any thread count. A
//! binary of its own: the thread count and the CPU time are the process's.

use ndarray::{Array1, Array2, Array3, ArrayView1, ArrayView2};
use oxla::{jit, set_num_threads, vmap};

/// A matrix product (1024×784 · 784×512), then a matrix-vector product
/// (1024×512 · 512, large enough to be split across threads).
#[jit]
fn layer(x: ArrayView2<f32>, w: ArrayView2<f32>, v: ArrayView1<f32>) -> Array1<f32> {
    x.dot(&w).tanh().dot(&v)
}

/// A batch of matrix-vector products (each split into row blocks).
#[vmap(batched_mv, in_axes = (0, None))]
fn mv(a: ArrayView2<f32>, v: ArrayView1<f32>) -> Array1<f32> {
    a.dot(&v)
}

/// This process's user + system CPU time, in seconds (Linux: fields 14 and
/// 15 of `/proc/self/stat`, in clock ticks of 1/100 s).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // The command name (field 2) is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')').expect("a stat line") + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3.
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    ticks as f64 / 100.0
}

/// CPU time over wall time while `layer` runs for at least `secs`.
fn cpu_per_wall(x: &Array2<f32>, w: &Array2<f32>, v: &Array1<f32>, secs: f64) -> f64 {
    layer(x.view(), w.view(), v.view());
    let (c0, t0) = (cpu_seconds(), std::time::Instant::now());
    while t0.elapsed().as_secs_f64() < secs {
        std::hint::black_box(layer(x.view(), w.view(), v.view()));
    }
    (cpu_seconds() - c0) / t0.elapsed().as_secs_f64()
}

#[cfg(target_os = "linux")]
#[test]
fn one_thread_means_one_core_and_the_bits_do_not_depend_on_threads() {
    let x = Array2::from_shape_fn((1024, 784), |(i, j)| {
        ((i * 7 + j * 3) % 17) as f32 / 17.0 - 0.5
    });
    let w = Array2::from_shape_fn((784, 512), |(i, j)| {
        ((i * 5 + j * 11) % 13) as f32 / 130.0 - 0.05
    });
    let v = Array1::from_shape_fn(512, |j| ((j * 3) % 7) as f32 / 7.0 - 0.4);

    set_num_threads(1);
    let one = layer(x.view(), w.view(), v.view());
    let ratio = cpu_per_wall(&x, &w, &v, 1.5);
    assert!(ratio < 1.2, "at 1 thread the process used {ratio:.2} cores");

    for threads in [2, 3] {
        set_num_threads(threads);
        let got = layer(x.view(), w.view(), v.view());
        let bits = |a: &Array1<f32>| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&got), bits(&one), "{threads} threads");
    }
    // Each matrix of a batch gets its own product, blocks and all.
    let a = Array3::from_shape_fn((3, 1024, 512), |(b, i, j)| {
        ((b * 5 + i * 3 + j * 7) % 19) as f32 - 9.0
    });
    let got = batched_mv(a.view(), v.view());
    for b in 0..3 {
        for i in 0..1024 {
            let want: f64 = (0..512).map(|j| a[[b, i, j]] as f64 * v[j] as f64).sum();
            let g = got[[b, i]] as f64;
            assert!(
                (g - want).abs() <= 1e-4 * want.abs().max(1.0),
                "[{b}, {i}]: {g} vs {want}"
            );
        }
    }

    // The same at two threads uses more than one core where there are
    // two (printed: a shared machine's load makes it no fit bound).
    set_num_threads(2);
    eprintln!(
        "CPU time / wall time: 1 thread {ratio:.2}, 2 threads {:.2}",
        cpu_per_wall(&x, &w, &v, 1.0)
    );
}
