//! The library's tests through its public API, in one binary: linking
//! each file alone cost a test binary (and its disk and link time) apiece.
//! Tests that change process-wide state (the thread count, the allocator,
//! teardown) stay binaries of their own beside this folder.

// The tests write what users write in annotated functions and what edge
// cases need: index loops (the form a `for` over a range lowers), values
// that are NaN or a bool that is constant on purpose (`x - x`, `c || false`,
// `!(x > a)` for NaN), ndarray's negative slice ends (`1..-1`), and wide
// tuple signatures of references.
#![allow(
    clippy::needless_range_loop,
    clippy::eq_op,
    clippy::nonminimal_bool,
    clippy::overly_complex_bool_expr,
    clippy::neg_cmp_op_on_partial_ord,
    clippy::reversed_empty_ranges,
    clippy::type_complexity
)]

mod boundary;
mod calls_transformed;
mod constructors;
mod control_flow;
mod conv;
mod custom_derivatives;
mod deep_expressions;
mod device;
mod edges;
mod elementwise;
mod end_to_end;
mod gather;
mod generic;
mod helpers_cross_crate;
mod helpers_same_crate;
mod indexing;
mod jax_conventions;
// Generated (see its header): formatted by its generator, not by rustfmt.
#[rustfmt::skip]
mod jax_numpy;
mod labels;
mod lean_call;
mod linalg;
mod loop_hessians;
mod loops;
mod loops_arrays;
mod ndarray;
mod pmap;
mod powf;
mod prod_cumsum;
mod random;
mod reference;
mod rounding;
mod second_day;
mod size_one;
mod slicing;
mod slicing_index;
mod sort;
mod special;
mod struct_vmap;
mod symbolic_zeros;
mod tape_limit;
mod trait_methods;
mod transforms;
mod tree;
mod tree_cross_crate;
mod updates;

/// Runs `f` and returns its panic message.
pub(crate) fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let e = std::panic::catch_unwind(f).expect_err("the call should fail");
    match (e.downcast_ref::<String>(), e.downcast_ref::<&str>()) {
        (Some(s), _) => s.clone(),
        (_, Some(s)) => s.to_string(),
        _ => panic!("a panic without a message"),
    }
}
