//! Rust's control flow, lowered to SSA and to the IR's control ops: blocks,
//! mutation and branches (`flow`), `if` on a scalar as a cond (`cond`), and
//! `for`/`while` loops as the loop op (`loops`), after `break`/`continue`
//! and loops over an array's elements are rewritten in source
//! (`loop_exits`, `loop_iter`).

pub(crate) mod cond;
pub(crate) mod flow;
pub(crate) mod loop_exits;
pub(crate) mod loop_iter;
pub(crate) mod loops;
