// `f16` in an oxla function means `half::f16`; when the name in scope is
// something else, the error says what it is instead (once, at the type).
#[allow(non_camel_case_types)]
type f16 = f32;

#[oxla::grad(dh)]
fn h(x: f16) -> f16 {
    x * x
}

fn main() {}
