//! The CUDA backend's tests (kernels and programs on the GPU against the
//! interpreter, cuBLAS products, the GEMM plans), in one binary: each file
//! alone cost a test binary (and its disk and link time) apiece.

#[path = "../common/mod.rs"]
mod common;

mod catalog;
mod cublas;
mod gemm_plan;
mod gpu;
mod program;
