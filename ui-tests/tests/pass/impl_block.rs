// Associated functions (without `self`) of an `impl` block: every item the
// expansion defines becomes an associated item, and generated code names
// none of them, so nothing needs `Self::`.

struct Model;

impl Model {
    #[oxla::grad(loss_grad)]
    pub fn loss(w: &[f32], x: &[f32]) -> f32 {
        sum((w * x).exp())
    }

    #[oxla::vmap(doubles)]
    #[oxla::jit]
    fn double(x: &[f64]) -> Vec<f64> {
        x * 2.0
    }
}

fn main() {
    let (dw, dx) = Model::loss_grad(&[0.0], &[2.0]);
    assert_eq!((dw, dx), (vec![2.0], vec![0.0]));
    assert!(Model::LOSS_IR.contains("exp"));
    let d = Model::double(&[1.0, 2.0]);
    let mut out = [0.0; 2];
    Model::double_into(&[1.0, 2.0], &mut out);
    assert_eq!(d, out.to_vec());
    let b = Model::doubles(&oxla::ndarray::arr2(&[[1.0, 2.0]]));
    assert_eq!(b, oxla::ndarray::arr2(&[[2.0, 4.0]]));
    // `double` and `double_into` share one compiled program.
    let compiles = oxla::compile_log()
        .iter()
        .filter(|r| r.function == "double")
        .count();
    assert_eq!(compiles, 1);
}
