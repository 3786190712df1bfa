//! `OXLA_NUM_THREADS` and `set_num_threads` are capped at four threads per
//! available core (issue 20, item 12). A binary of its own: it sets the
//! environment variable before the first use and changes the process-wide
//! thread count.

use oxla::{jit, num_threads, set_num_threads};

#[jit]
fn total(x: &[f32]) -> f32 {
    sum(x * 2.0)
}

#[test]
fn a_huge_thread_count_is_capped() {
    // Four per core, computed here from the standard library alone.
    let cap = 4 * std::thread::available_parallelism().map_or(1, |n| n.get());
    // One test in this binary, run before any oxla call.
    std::env::set_var("OXLA_NUM_THREADS", "10000");
    assert_eq!(num_threads(), cap, "OXLA_NUM_THREADS=10000 is capped");
    // A split kernel still runs, and quickly: 2^20 elements.
    let x = vec![0.5f32; 1 << 20];
    let t = std::time::Instant::now();
    assert_eq!(total(&x), (1 << 20) as f32);
    assert!(t.elapsed().as_secs() < 20, "took {:?}", t.elapsed());
    set_num_threads(10_000);
    assert_eq!(num_threads(), cap, "set_num_threads(10000) is capped");
    set_num_threads(cap);
    assert_eq!(num_threads(), cap);
    set_num_threads(0);
    assert_eq!(num_threads(), 1);
}
