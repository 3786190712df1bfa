use crate::ir::Function;
/// Forward mode. Params: the primals, then one tangent `t_<name>` per float
/// param. Outputs: the primal outputs, then one tangent per output.
pub fn jvp(f: &Function) -> Function {
    let _ = f;
    todo!()
}
