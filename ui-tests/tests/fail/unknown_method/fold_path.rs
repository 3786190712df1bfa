#![allow(dead_code)]

// A maximum folded with `f64::max` by path: the error says the fold is
// `max(x)` and lists the reductions of the vocabulary.
#[oxla::jit]
fn top(x: &[f64]) -> f64 {
    x.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
}

fn main() {}
