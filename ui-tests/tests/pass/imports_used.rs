// The names an annotated body imports count as used although the macro
// replaces the body: `s!`, `NewAxis`, `Axis`, `concatenate!`, a constant.
#![deny(unused_imports)]

mod consts {
    pub const SCALE: f64 = 2.0;
}

use consts::SCALE;
use oxla::ndarray::{array, concatenate, s, Array2, ArrayView1, Axis, NewAxis};

#[oxla::jit]
fn tails(x: ArrayView1<f64>) -> Array2<f64> {
    let y = x.slice(s![1..]);
    y.slice(s![.., NewAxis]).to_owned() * SCALE
}

#[oxla::grad(ends_grad)]
fn ends(x: ArrayView1<f64>) -> f64 {
    let both = concatenate![Axis(0), x.slice(s![..1]), x.slice(s![-1..])];
    (&both * &both).sum()
}

fn main() {
    let x = array![1.0, 2.0, 3.0];
    let t = tails(x.view());
    assert_eq!(t, array![[4.0], [6.0]]);
    assert_eq!(ends_grad(x.view()), array![2.0, 0.0, 6.0]);
}
