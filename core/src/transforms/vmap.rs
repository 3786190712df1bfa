use crate::ir::Function;
/// Batch `f` over a new leading axis: `in_axes[i]` is `Some(0)` for a batched
/// param and `None` for one shared by every example. Every output is batched
/// along axis 0.
pub fn vmap(f: &Function, in_axes: &[Option<usize>]) -> Result<Function, String> {
    let _ = (f, in_axes);
    todo!()
}
