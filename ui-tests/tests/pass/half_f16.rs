// `f16` in an oxla function's signature is `half::f16`, imported or not
// (issue 20: without the import it meant Rust's unstable primitive `f16`,
// which is no oxla element type: E0658 and E0277 from generated code).
use oxla::grad;
use oxla::half::f16 as H;

#[grad(dh)]
fn h(x: f16) -> f16 {
    x * x
}

#[grad(db)]
fn b(x: bf16) -> bf16 {
    x * x
}

mod imported {
    use oxla::half::f16;
    #[oxla::grad(dh)]
    pub fn h(x: f16) -> f16 {
        x * x
    }
}

fn main() {
    assert_eq!(dh(H::from_f32(3.0)).to_f32(), 6.0);
    assert_eq!(db(oxla::half::bf16::from_f32(3.0)).to_f32(), 6.0);
    assert_eq!(imported::dh(H::from_f32(2.0)).to_f32(), 4.0);
}
