//! A 3×3 convolution layer under benchmark (`benches/conv_layer.rs`).

use oxla::ndarray::ArrayView4;

/// `sum(conv(x, w) · g)` ("SAME", stride 1), its value and its gradient
/// with respect to the input and the kernel: the forward convolution and
/// both transposes.
#[oxla::value_and_grad(layer_and_grad, wrt = (x, w))]
pub fn layer(x: ArrayView4<f32>, w: ArrayView4<f32>, g: ArrayView4<f32>) -> f32 {
    (conv(x, w, [1, 1], [(1, 1), (1, 1)]) * g).sum()
}
