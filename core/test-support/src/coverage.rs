//! Coverage: the op kinds and unary variants the catalog must use, its
//! families, and `family_tests!`, which gives each family a test of its
//! own in a suite.

use crate::catalog::catalog;
use oxla_core::ops::elementwise::UnaryOp;
use oxla_core::*;

/// The name of an op's kind. The `match` has no catch-all arm, so a new
/// `Op` variant does not compile until it is named here; name it in
/// [`OP_KINDS`] too and give the catalog a case that uses it.
pub fn op_kind(op: &Op) -> &'static str {
    match op {
        Op::Unary(_) => "unary",
        Op::Special(_) => "special",
        Op::Binary(_) => "binary",
        Op::Cmp(_) => "cmp",
        Op::Select => "select",
        Op::Literal { .. } => "literal",
        Op::Broadcast { .. } => "broadcast",
        Op::ReduceSum { .. } => "reduce_sum",
        Op::Dot => "dot",
        Op::ReduceMax { .. } => "reduce_max",
        Op::ReduceMin { .. } => "reduce_min",
        Op::Transpose { .. } => "transpose",
        Op::Reshape { .. } => "reshape",
        Op::DotGeneral(_) => "dot_general",
        Op::StopGradient => "stop_gradient",
        Op::DimSize { .. } => "dim_size",
        Op::Iota { .. } => "iota",
        Op::Convert { .. } => "convert",
        Op::Slice { .. } => "slice",
        Op::Pad { .. } => "pad",
        Op::Concatenate { .. } => "concatenate",
        Op::Gather { .. } => "gather",
        Op::ScatterAdd { .. } => "scatter_add",
        Op::ReduceProd { .. } => "reduce_prod",
        Op::LinearScan { .. } => "linear_scan",
        // No catalog case yet. Loops run on the kernel path as host steps
        // whose bodies are fused programs; their tests are
        // `core/tests/suite/loops.rs`, the backends' `tests/suite/loops.rs`
        // and the facade's `tests/suite/loops.rs`.
        Op::Loop(_) => "loop",
        Op::LoopReverse(_) => "loop_reverse",
        Op::Cond(_) => "cond",
        // No catalog case: a collective needs an enclosing pmap or named
        // vmap. Their tests are `core/tests/suite/pmap.rs`.
        Op::Collective(_) => "collective",
        Op::Pmap(_) => "pmap",
        // No catalog case: a host step the CUDA backend does not run yet,
        // and the catalog's programs run on every backend. Its tests are
        // `core/tests/suite/sort.rs` (the interpreter against the CPU
        // program, batching, derivatives) and the facade's
        // `tests/suite/sort.rs` (against JAX).
        Op::Argsort { .. } => "argsort",
        // No catalog case: fusion runs a custom call's primal function
        // (inlined), and its rules are tested in
        // `core/tests/suite/custom_derivatives.rs` and the facade's
        // `tests/suite/custom_derivatives.rs` (against JAX).
        Op::Custom(_) => "custom",
        // No catalog case, for the same reason as argsort: a host step the
        // CUDA backend does not run yet. Its tests are
        // `core/tests/suite/linalg.rs` and the facade's
        // `tests/suite/linalg.rs` (against JAX).
        Op::Linalg(_) => "linalg",
        // No catalog case, for the same reason (a host step the CUDA
        // backend does not run yet). Its tests are `core/tests/suite/conv.rs`
        // and the facade's `tests/suite/conv.rs` (against JAX).
        Op::Conv(_) => "conv",
    }
}

/// Every kind [`op_kind`] names: the catalog must use each.
pub const OP_KINDS: &[&str] = &[
    "unary",
    "special",
    "binary",
    "cmp",
    "select",
    "literal",
    "broadcast",
    "reduce_sum",
    "dot",
    "reduce_max",
    "reduce_min",
    "transpose",
    "reshape",
    "dot_general",
    "stop_gradient",
    "dim_size",
    "iota",
    "convert",
    "slice",
    "pad",
    "concatenate",
    "gather",
    "scatter_add",
    "reduce_prod",
    "linear_scan",
    "cond",
];

/// Every `UnaryOp`, one value per variant: `UnaryOp::SIMPLE` and a power.
/// The `match` has no catch-all arm, so a new variant does not compile
/// until it is named there; one outside `SIMPLE` must be added to the list.
pub fn unary_variants() -> Vec<UnaryOp> {
    let mut all = UnaryOp::SIMPLE.to_vec();
    all.push(UnaryOp::Powi(2));
    for op in &all {
        match op {
            UnaryOp::Neg
            | UnaryOp::Exp
            | UnaryOp::Log
            | UnaryOp::Sin
            | UnaryOp::Cos
            | UnaryOp::Tanh
            | UnaryOp::Sqrt
            | UnaryOp::ExpM1
            | UnaryOp::Erf
            | UnaryOp::Round(_)
            | UnaryOp::Sign
            | UnaryOp::Signum
            | UnaryOp::Powi(_) => {}
        }
    }
    all
}

/// Whether two unary ops are the same variant (any two powers match).
pub fn same_unary_variant(a: UnaryOp, b: UnaryOp) -> bool {
    std::mem::discriminant(&a) == std::mem::discriminant(&b)
}

/// The families of the catalog that [`family_tests!`](crate::family_tests)
/// gives a test of their own; the others run in its `other_families` test.
pub const FAMILIES: &[&str] = &[
    "unary",
    "special",
    "powi",
    "binary",
    "select",
    "broadcast",
    "reduce_sum",
    "dot",
    "reduce_max_min",
    "layout",
    "dot_general",
    "composite",
    "unit_broadcast",
    "special",
    "slicing",
    "gather",
    "scan",
    "cond",
];

/// The catalog's families missing from [`FAMILIES`] (added on another
/// branch without a test of their own).
pub fn unlisted_families() -> Vec<&'static str> {
    let mut fams: Vec<&'static str> = catalog(&Dim::sym("n"))
        .iter()
        .map(|c| c.family)
        .filter(|f| !FAMILIES.contains(f))
        .collect();
    fams.sort();
    fams.dedup();
    fams
}

/// One `#[test]` per family of the catalog, each calling `$check(family)`.
#[macro_export]
#[allow(unused_macros)] // not every test file uses it
macro_rules! family_tests {
    ($check:ident) => {
        #[test]
        fn unary_ops() {
            $check("unary");
        }
        #[test]
        fn powi() {
            $check("powi");
        }
        #[test]
        fn binary_ops() {
            $check("binary");
        }
        #[test]
        fn select_with_comparisons() {
            $check("select");
        }
        #[test]
        fn broadcast() {
            $check("broadcast");
        }
        #[test]
        fn reduce_sum() {
            $check("reduce_sum");
        }
        #[test]
        fn dot() {
            $check("dot");
        }
        #[test]
        fn reduce_max_min() {
            $check("reduce_max_min");
        }
        #[test]
        fn layout() {
            $check("layout");
        }
        #[test]
        fn dot_general() {
            $check("dot_general");
        }
        #[test]
        fn composite_functions() {
            $check("composite");
        }
        #[test]
        fn unit_axis_broadcasting() {
            $check("unit_broadcast");
        }
        #[test]
        fn iota_dim_size_stop_gradient_convert() {
            $check("special");
        }
        /// Families of the catalog not in `FAMILIES` still get checked.
        #[test]
        fn other_families() {
            for family in $crate::unlisted_families() {
                $check(family);
            }
        }
        #[test]
        fn slicing() {
            $check("slicing");
        }
        #[test]
        fn gather() {
            $check("gather");
        }
        #[test]
        fn products_and_scans() {
            $check("scan");
        }
        #[test]
        fn conds() {
            $check("cond");
        }
    };
}
