//! oxla-ptx: kernel IR → PTX text for NVIDIA GPUs (`sm_80`, `sm_90`).
//!
//! Pure Rust and testable without a GPU: the tests assemble every module
//! with `ptxas`. `oxla-cuda` loads and launches the text.
//!
//! # Calling convention (the host relies on it)
//!
//! Each kernel becomes one `.visible .entry` named `kernel.name` with
//!
//! - one `.param .u64` per buffer, in `kernel.args` order: the device
//!   address of its first element (inputs and outputs alike), then
//! - one `.param .u64` per size symbol, in `kernel.sizes` order: its value
//!   (a non-negative `i64`).
//!
//! Launch with [`launch_config`]: one-dimensional blocks of [`BLOCK`]
//! threads (the entry declares `.maxntid` to match) and no dynamic shared
//! memory. Kernels loop over their work, so any grid size is correct.
//!
//! **Outputs of reduction kernels must be filled by the host with
//! `kernel.reduce.identity()` before the launch** (zeros for sums, -inf for
//! max, +inf for min): blocks combine partial results into them with
//! atomics, and a reduction with an empty reduced range writes nothing. A
//! module holding a max or min reduction also holds the entry
//! [`FILL_ENTRY`] that does that fill (see `fill.rs`). Map kernels write
//! every output element in `0..kernel.output_len(sizes)`.
//!
//! Buffers must not alias (inputs are read through the non-coherent cache).
//!
//! # Execution scheme
//!
//! - Map kernels (`reduce_dims == 0`): a grid-stride loop over the flattened
//!   row-major iteration index; coordinates are decoded by division by the
//!   extents (computed once at kernel start, as are the load strides), and
//!   each stored value is written at the iteration index.
//! - Reduction kernels: work units are (outer index, chunk of the reduced
//!   range); a reduced range is split into at most `⌈grid / outer⌉` chunks
//!   whose lengths are multiples of 1024. Blocks take units in a grid-stride
//!   loop; threads sum their elements of the chunk pairwise (trips of four
//!   through a binary-counter cascade), `shfl.sync.down.b32` sums each
//!   warp (an f64 as two halves), shared memory gathers the warps, and thread
//!   0 adds the block's sum with one `atom.global.add.f32/.f64`. The error
//!   grows like log n; the bound is in `emit.rs`'s docs. Max and min
//!   reductions take the same path with one NaN-propagating accumulator per
//!   thread and merge into the output with an `atom.global.cas` loop (there
//!   is no float atomic max). When a store
//!   is not an f32/f64 value written to a buffer of the same type (e.g. f32
//!   summed into an f16 output, or a bool "sum"), the kernel uses one unit
//!   per output element and stores the converted total instead.
//!
//! Half types load and store as `b16` and compute in `f32` (rounded after
//! each instruction like the interpreter); `bool` is one byte 0/1 and lives
//! in predicates. Reductions accumulate in f32/f64 (bool counts in f32) in a
//! tree order, so sums differ from the interpreter's sequential sums by
//! rounding; an f16/bf16-typed accumulator is rounded once at the end, not
//! after every addition as the interpreter does.
//!
//! # Arithmetic and accuracy
//!
//! `+ - * /` and `sqrt` are IEEE round-to-nearest (`.rn`, never contracted
//! into `fma`), so they match the interpreter bit for bit; `max`/`min` keep
//! the interpreter's rule (NaN if either operand is NaN, else
//! `if a > b { a } else { b }`), via `setp` + `setp.nan` + `selp`; comparisons are false on NaN except `ne`; `powi` is
//! repeated squaring (bit-exact with Rust's `powi` in f64).
//!
//! **Accuracy.** `examples/gpu_check.rs` of `oxla-cuda` measures every
//! function on a GPU against the interpreter (Rust `std` in f64, rounded to
//! the type) over 2²² inputs per function and fails above a bound per
//! function (f32: exp 2, log 2, sin/cos 2, tanh 3, sqrt 0 ulp; f64: exp 2,
//! log 3, sin/cos 2, tanh 4, sqrt 0). Measured on an H200 with the f32
//! `log` below: f32 exp 2, log 1 (none of 4.2·10⁶ over 1), sin/cos 0,
//! tanh 2, sqrt 0 ulp; f64 exp 1, log 3, sin/cos 1, tanh 4, sqrt 0 ulp. (The
//! `lg2.approx` f32 log it replaced was 24·10⁶ ulp off at x = 0.99999994.)
//! The numbers for `sin`/`cos` and f32 `log` below were also measured on
//! Rust models that perform the same operations as the emitted PTX, against
//! Rust's `std`.
//!
//! `sin`, `cos` (f32 and f64, module `trig`): computed in f64 over the whole
//! range. |x| ≤ 2³⁰: Cody–Waite with π/2 in three parts carried as a
//! double-double (branch-free); larger finite |x|: Payne–Hanek with a
//! 1216-bit table of 2/π (a `.const` array) and 64-bit integer products, on
//! a branch taken only by the threads that need it; Taylor polynomials on
//! |r| ≤ π/4. NaN, ±∞ → NaN; `sin(±0) = ±0`. Models, measured: f64 ≤ 1 ulp
//! from `std` on 10⁶ random inputs above 2³⁰ and 10⁶ below (std itself is
//! 8 ulp off on the hardest case, x = 6381956970095103·2⁷⁹⁷, where the model
//! gives the correctly rounded value); f32 (the f64 result rounded once)
//! 0 ulp from `std` rounded to f32 on 2.9·10⁸ f32 inputs (every 61st bit
//! pattern up to 2³⁰, every 7th above, the whole top binade, both signs:
//! `trig`'s ignored test `f32_full_dense`, ~13 min optimized on a shared
//! machine).
//!
//! f32 transcendentals:
//! - `exp`: Cody–Waite reduction then `ex2.approx.ftz` on |t| ≤ ½ (a
//!   relative bound, ~2 ulp, in the PTX ISA manual; the result is in
//!   [√½, √2], never near 0) and an exact two-step scale by 2ⁿ: 2 ulp
//!   measured, correct overflow to inf, underflow through the subnormals
//!   to 0. It is the only hardware approximation left.
//! - `log`: no `lg2.approx` (its bound is absolute near 1: 24·10⁶ ulp at
//!   x = 0.99999994 on an H200). The CPU backend's method, in f32 with
//!   `div.rn` and `fma.rn`: subnormals scaled by 2²³, `x = m·2^e` with m in
//!   [√½, √2), `f = m − 1`, `s = f/(2+f)`,
//!   `ln m = f − (f²/2 − s·(f²/2 + R(s²)))` (R: 2/3, 2/5, 2/7, 2/9), plus
//!   `e·ln2` in two parts; specials exact (±0 → -inf, negative → NaN,
//!   +inf → +inf, NaN → NaN, log 1 = +0). Its host model (the same
//!   operations; constants shared through [`log_f32_consts`]) is ≤ 1 ulp
//!   from `std` rounded to f32 (0.854 ulp from the exact value) on 5·10⁶
//!   inputs covering both sides of 1 exhaustively, the subnormals and the
//!   whole range (`tests/suite/math_model.rs`), as the CPU's 0.854 ulp on
//!   all 2³² inputs; on an H200, 1 ulp over 2²² inputs.
//! - `tanh`: Taylor polynomial for |x| < ½, `1 - 2/(exp(2|x|)+1)` above:
//!   ~3 ulp, 2 measured (`tanh.approx.f32` would be ~5e-4, too coarse).
//!
//! f64 transcendentals (no hardware approximations exist; our own
//! range reduction plus polynomials evaluated with `fma`):
//! - `exp`: Cody–Waite with ln2 in two parts, Taylor to r¹³ (truncation
//!   < 1e-17), two-step 2ⁿ scaling: relative error ~2-3 ulp (< 1e-15).
//! - `log`: exponent split, m ∈ [√½, √2), `2·atanh((m-1)/(m+1))` series:
//!   relative error ~2 ulp (3 measured on an H200, near 1); exact special
//!   cases (0, negative, inf, NaN, subnormals).
//! - `tanh`: `t/(t+2)` with `t = expm1(2|x|)`: relative error ~1e-15
//!   (4 ulp measured on an H200).
//! - `pow` (`pow.rs`, both types): the CPU's steps — f32 as
//!   `exp(y·log|x|)` in f64, rounded once; f64 with `ln|x|` as a
//!   double-double, the product by `fma`, and an `exp` of the pair — and the
//!   special values of Rust's `powf`, all by selects. The CPU code measures
//!   0.5 ulp (f32) and 0.75 ulp (f64) against exact references.
//!
//! The design does not use vector loads yet; loads are scalar and coalesced.

mod emit;
mod fill;
mod func;
mod launch;
mod math;
mod ops;
mod pow;
pub mod ptxas;
mod rounding;
pub mod samples;
mod trig;
mod validate;
mod values;

pub use fill::{needs_fill, FILL_ENTRY};
pub use launch::{has_work, launch_config, LaunchConfig, BLOCK};
pub use math::log_f32_consts;

use oxla_core::Kernel;

/// The GPU architecture the PTX targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arch {
    Sm80,
    Sm90,
}

impl Arch {
    /// The `.target` name, also `ptxas -arch=`.
    pub fn name(self) -> &'static str {
        match self {
            Arch::Sm80 => "sm_80",
            Arch::Sm90 => "sm_90",
        }
    }

    /// The newest architecture of ours a device of compute capability
    /// `major.minor` runs, or `None` if it is older than sm_80.
    pub fn for_compute_capability(major: i32, minor: i32) -> Option<Arch> {
        match (major, minor) {
            (m, _) if m >= 9 => Some(Arch::Sm90),
            (8, _) => Some(Arch::Sm80),
            _ => None,
        }
    }
}

/// PTX ISA version written in the header (accepted by CUDA 12.0+ drivers).
const PTX_VERSION: &str = "8.0";

/// One PTX module holding an entry for each kernel (see the crate docs).
pub fn emit_module(kernels: &[Kernel], arch: Arch) -> Result<String, String> {
    let mut names = std::collections::HashSet::new();
    let mut out = header(arch);
    if kernels.iter().any(uses_trig) {
        out.push_str(&trig::table_decl());
    }
    for k in kernels {
        if !names.insert(k.name.as_str()) {
            return Err(format!("two kernels are named `{}`", k.name));
        }
        validate::validate(k)?;
        out.push('\n');
        out.push_str(&emit::entry(k));
    }
    if needs_fill(kernels) {
        if !names.insert(FILL_ENTRY) {
            return Err(format!(
                "a kernel is named `{FILL_ENTRY}`, the fill entry's name"
            ));
        }
        out.push('\n');
        out.push_str(&fill::entry());
    }
    Ok(out)
}

/// A module holding just `kernel` (for dumps).
pub fn emit_kernel(kernel: &Kernel, arch: Arch) -> Result<String, String> {
    emit_module(std::slice::from_ref(kernel), arch)
}

/// Whether a kernel computes `sin` or `cos` (and so needs the 2/π table).
fn uses_trig(k: &Kernel) -> bool {
    use oxla_core::kernel::InstKind;
    use oxla_core::ops::elementwise::UnaryOp;
    k.insts
        .iter()
        .any(|i| matches!(i.kind, InstKind::Unary(UnaryOp::Sin | UnaryOp::Cos, _)))
}

fn header(arch: Arch) -> String {
    format!(
        "// Generated by oxla-ptx.\n.version {PTX_VERSION}\n.target {}\n.address_size 64\n",
        arch.name()
    )
}
