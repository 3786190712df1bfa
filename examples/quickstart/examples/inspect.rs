//! Reading what oxla made of a function: the IR after the transforms, the
//! fused kernels, the Cranelift IR and the PTX.
//! Run with `cargo run -p quickstart --example inspect`.

use oxla::{grad, Inspect};

// The gradient of a softplus-regularized sum with respect to `x`.
#[grad(loss_grad, wrt = x)]
fn loss(x: &[f32], y: &[f32]) -> f32 {
    sum((x * y).tanh() + (1.0 + x.exp()).ln() * 0.1)
}

fn main() {
    // Every generated function `name` comes with its IR text, `NAME_IR`.
    let info = Inspect::new(LOSS_GRAD_IR).expect("the macro's IR parses");
    println!(
        "== IR of loss_grad (after grad and simplify) ==\n{}",
        info.ir()
    );
    println!("== fused kernels and launches ==\n{}", info.kernels());
    println!("== Cranelift IR ==\n{}", info.clif());
    println!("== PTX (sm_90) ==\n{}", info.ptx());

    // The function runs as usual; the first call compiles it.
    let g = loss_grad(&[0.5, -1.0, 2.0], &[1.0, 2.0, 3.0]);
    println!("loss_grad = {g:?}");
}
