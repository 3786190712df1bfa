//! oxla-cpu: the CPU backend. One translator turns kernel IR into Cranelift
//! IR (`translate`); the JIT (`jit`) and object files for the build helper
//! (`object`) share it. `math` holds our vectorized transcendentals,
//! `pow` the two-operand `powf`.

mod half;
mod isa;
mod jit;
mod math;
mod matmul;
pub mod native;
mod object;
mod parallel;
mod pow;
mod rounding;
mod run;
mod translate;

pub use isa::{host_level, host_supports, host_supports_v3, host_supports_v4, IsaLevel};
pub use jit::JitModule;
pub use math::{oxla_cpu_cos_f32, oxla_cpu_cos_f64, oxla_cpu_sin_f32, oxla_cpu_sin_f64};
pub use matmul::{matmul_plans, CpuLauncher, MatmulPlan};
pub use object::{clif_text, emit_object};
pub use parallel::{
    max_threads, num_threads, set_num_threads, split_plans, Split, BLOCK_ELEMS, MIN_PARALLEL_ELEMS,
    THREADS_ENV, THREADS_PER_CORE,
};
pub use run::run_checked;
