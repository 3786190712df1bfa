use crate::ir::Function;
/// Reverse mode. Params: the primals, then one cotangent per output (`ct`, or
/// `ct0`, `ct1`, … with several outputs). Outputs: the primal outputs, then one
/// cotangent per param.
pub fn vjp(f: &Function) -> Function {
    let _ = f;
    todo!()
}
/// Gradient of a function with one scalar float output with respect to the
/// params at indices `wrt`. Outputs: one gradient per `wrt` entry.
pub fn grad(f: &Function, wrt: &[usize]) -> Result<Function, String> {
    let _ = (f, wrt);
    todo!()
}
/// Like `grad`, with the value first: outputs `(value, grads...)`.
pub fn value_and_grad(f: &Function, wrt: &[usize]) -> Result<Function, String> {
    let _ = (f, wrt);
    todo!()
}
