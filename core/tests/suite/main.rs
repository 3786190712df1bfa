//! The IR's tests (transforms, fusion, the interpreter), in one binary:
//! each file alone cost a test binary (and its disk and link time) apiece.

use oxla_test_support as common;

mod cond;
mod conv;
mod custom_derivatives;
mod fusion;
mod fusion_cost;
mod fusion_nd;
mod half;
mod jacobian;
mod jax_conventions;
mod kernel_verify;
mod linalg;
mod loops;
mod ops_ad;
mod pmap;
mod prod_scan;
mod slicing_schedule;
mod smoke;
mod sort;
mod sums;
mod text;
mod vmap;
