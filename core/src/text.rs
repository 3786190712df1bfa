//! The text form of the IR: prints and parses.
use crate::ir::Function;
/// Print `f` in the text form.
pub fn print(f: &Function) -> String {
    let _ = f;
    todo!()
}
/// Parse the text form.
pub fn parse(s: &str) -> Result<Function, String> {
    let _ = s;
    todo!()
}
