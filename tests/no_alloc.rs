//! A training step written into the caller's buffers allocates nothing: a
//! counting global allocator (this test binary's own) counts the
//! allocations a thread makes during the steps, after one warm-up step
//! (which compiles the program and fills the executor's buffer pool).

use oxla::ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};
use oxla::value_and_grad;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded to `System` unchanged; the counter is a
// const-initialized thread-local `Cell` without a destructor, which does
// not allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

/// A two-layer network's loss (elementwise products and sums, no matrix
/// product: `gemm` manages its own packing memory, which is not oxla's to
/// promise about).
#[value_and_grad(loss_and_grad, wrt = (w1, w2))]
fn loss(w1: ArrayView1<f32>, w2: ArrayView1<f32>, x: ArrayView2<f32>, y: ArrayView1<f32>) -> f32 {
    let h = (x * w1).tanh();
    let pred = (h * w2).sum_axis(Axis(1));
    let err = pred - y;
    (err * err).mean()
}

#[test]
fn a_training_step_into_buffers_allocates_nothing() {
    let (n, d) = (256, 16);
    let x = Array2::from_shape_fn((n, d), |(i, j)| ((i * 13 + j * 7) % 17) as f32 / 17.0 - 0.5);
    let y = Array1::from_shape_fn(n, |i| ((i % 3) as f32) - 1.0);
    let mut w1 = Array1::from_shape_fn(d, |j| 0.05 * j as f32 - 0.4);
    let mut w2 = Array1::from_shape_fn(d, |j| 0.3 - 0.02 * j as f32);
    let (mut g1, mut g2) = (Array1::zeros(d), Array1::zeros(d));
    let lr = 0.1;
    let mut step = |w1: &mut Array1<f32>, w2: &mut Array1<f32>| {
        let l = loss_and_grad_into(w1.view(), w2.view(), x.view(), y.view(), &mut g1, &mut g2);
        w1.scaled_add(-lr, &g1);
        w2.scaled_add(-lr, &g2);
        l
    };
    let first = step(&mut w1, &mut w2);
    let before = allocations();
    let mut last = first;
    for _ in 0..20 {
        last = step(&mut w1, &mut w2);
    }
    let during = allocations() - before;
    assert_eq!(during, 0, "20 steps allocated {during} times");
    assert!(last < first, "the loss went from {first} to {last}");

    // The allocating form gives the same numbers.
    let (l, a1, a2) = loss_and_grad(w1.view(), w2.view(), x.view(), y.view());
    let l2 = loss_and_grad_into(w1.view(), w2.view(), x.view(), y.view(), &mut g1, &mut g2);
    assert_eq!(l.to_bits(), l2.to_bits());
    assert_eq!((a1, a2), (g1.clone(), g2.clone()));
}

/// A reduction of slices to a scalar: the lean call.
#[oxla::jit]
fn weighted_sum(x: &[f32], y: &[f32], a: f32) -> f32 {
    sum(x * a * y)
}

#[test]
fn a_lean_call_allocates_nothing() {
    let x: Vec<f32> = (0..1000).map(|i| i as f32 * 1e-3).collect();
    let first = weighted_sum(&x, &x, 2.0);
    let before = allocations();
    let mut last = 0.0;
    for _ in 0..20 {
        last = weighted_sum(&x, &x, 2.0);
    }
    let during = allocations() - before;
    assert_eq!(during, 0, "20 calls allocated {during} times");
    assert_eq!(last.to_bits(), first.to_bits());
}
