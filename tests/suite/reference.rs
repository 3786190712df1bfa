//! Reading the committed outputs of the JAX reference scripts
//! (`tests/reference/*_jax.txt`): lines `name dims: v v ...`, the values
//! row-major, dims comma-separated (`-` or nothing for a scalar).

use ndarray::{ArrayD, IxDyn};

/// The array on the line `name` of `text` (the file `file`, for messages).
pub fn reference_array(text: &str, file: &str, name: &str) -> ArrayD<f64> {
    let line = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no `{name}` in {file}"));
    let (head, values) = line.split_once(':').unwrap();
    let dims: Vec<usize> = match head.split_whitespace().nth(1) {
        None | Some("-") => vec![],
        Some(dims) => dims.split(',').map(|d| d.parse().unwrap()).collect(),
    };
    let data = values
        .split_whitespace()
        .map(|v| v.parse::<f64>().unwrap())
        .collect();
    ArrayD::from_shape_vec(IxDyn(&dims), data).unwrap()
}
