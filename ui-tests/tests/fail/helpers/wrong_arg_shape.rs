use oxla::ndarray::ArrayView1;

#[oxla::func]
fn norm2(v: ArrayView1<f64>) -> f64 {
    (&v * &v).sum()
}

#[oxla::grad(df)]
fn f(x: f64) -> f64 {
    norm2(x)
}

fn main() {
    let _ = df(1.0);
}
