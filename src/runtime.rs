//! Turning IR text into something callable: fuse, then bind the kernels the
//! build script compiled or compile them with the JIT, once per function.

use crate::__private::AotKernel;
use oxla_core::exec::{DirectCall, Launcher, Program};
use oxla_core::kernel::fusion::fuse;
use oxla_core::kernel::KernelFn;
use oxla_cpu::{
    matmul_plans, split_plans, IsaLevel, JitModule, MatmulPlan, Split, MIN_PARALLEL_ELEMS,
};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A program with one callable function per kernel. The fields a lean call
/// reads come first (`repr(C)`), so that they share cache lines.
#[repr(C)]
pub(crate) struct Ready {
    /// The direct call's kernel, to call as is when it runs on fewer
    /// elements than a split takes and is not a matrix product.
    pub lean_fn: Option<KernelFn>,
    /// The lean call, when the program is one launch (see `DirectCall`).
    pub direct: Option<DirectCall>,
    pub program: Program,
    pub fns: Vec<KernelFn>,
    /// The kernels that are matrix products, run on `gemm`.
    pub plans: Vec<Option<MatmulPlan>>,
    /// How each kernel splits across threads.
    pub splits: Vec<Option<Split>>,
    /// Whether every kernel came from the build script.
    pub aot: bool,
    /// The ISA level the kernels were compiled for (`None`: the host's).
    pub isa: Option<IsaLevel>,
    /// Keeps JIT-compiled code alive.
    _jit: Option<JitModule>,
}

/// The launcher of a lean call: the direct kernel's function called as is
/// below the split threshold (see `Ready::lean_fn`), else the full launcher.
pub(crate) struct LeanLauncher<'a> {
    ready: &'a Ready,
}

impl Launcher for LeanLauncher<'_> {
    unsafe fn launch(&self, kernel: usize, args: &[*mut u8], sizes: &[i64]) {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.ready.launcher().launch(kernel, args, sizes) }
    }

    #[inline(always)]
    unsafe fn launch_elems(&self, kernel: usize, args: &[*mut u8], sizes: &[i64], elems: u64) {
        if let (Some(f), Some(d)) = (self.ready.lean_fn, &self.ready.direct) {
            if elems < MIN_PARALLEL_ELEMS && kernel == d.kernel() {
                // SAFETY: `f` is `kernel` compiled (`lean_fn`); the
                // caller's contract covers its arguments; below the split
                // threshold the full launcher would make this same call.
                return unsafe { f(args.as_ptr(), sizes.as_ptr()) };
            }
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { self.launch(kernel, args, sizes) }
    }
}

impl Ready {
    /// The launcher of a lean call (see `LeanLauncher`).
    #[inline]
    pub fn lean_launcher(&self) -> LeanLauncher<'_> {
        LeanLauncher { ready: self }
    }

    /// The launcher that runs this program's kernels.
    #[inline]
    pub fn launcher(&self) -> oxla_cpu::CpuLauncher<'_> {
        oxla_cpu::CpuLauncher {
            kernels: &self.program.kernels,
            fns: &self.fns,
            plans: &self.plans,
            splits: &self.splits,
        }
    }
}

pub(crate) struct Compiled;

/// How a function's kernels came to be, recorded on its first call.
#[derive(Clone, Debug)]
pub struct CompileRecord {
    /// The generated function's name.
    pub function: String,
    /// How many kernels its program has (a loop body's and a cond
    /// branch's included).
    pub kernels: usize,
    /// Where the kernels came from.
    pub how: CompiledBy,
    /// The ISA level of the build script's kernels that were bound (`None`
    /// for JIT-compiled code, which targets the host, or no kernels).
    pub isa: Option<IsaLevel>,
    /// Time from IR text to callable kernels (parse, fuse, compile or bind).
    pub time: Duration,
}

/// Where a function's kernels came from (see [`CompileRecord`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompiledBy {
    /// Kernels linked from the build script's object code.
    BuildScript,
    /// Kernels compiled in process by cranelift-jit.
    Jit,
    /// The function needs no kernel (its outputs are its inputs).
    NoKernels,
}

static LOG: Mutex<Vec<CompileRecord>> = Mutex::new(Vec::new());

/// Every function compiled so far in this process, in order.
pub fn compile_log() -> Vec<CompileRecord> {
    LOG.lock().map(|l| l.clone()).unwrap_or_default()
}

impl Compiled {
    pub fn build(ir: &str, aot: &[AotKernel]) -> Result<Ready, String> {
        let start = Instant::now();
        let function = oxla_core::text::parse(ir)?;
        Self::build_function(function, aot, start)
    }

    /// `build` for a function already parsed (or derived at run time, see
    /// `CompiledFn::size_one_program`); `start` is when its making began.
    pub fn build_function(
        function: oxla_core::Function,
        aot: &[AotKernel],
        start: Instant,
    ) -> Result<Ready, String> {
        let ready = Self::build_inner(function, aot)?;
        let how = match (ready.program.kernels.len(), ready.aot) {
            (0, _) => CompiledBy::NoKernels,
            (_, true) => CompiledBy::BuildScript,
            (_, false) => CompiledBy::Jit,
        };
        let record = CompileRecord {
            function: ready.program.function.name.clone(),
            kernels: ready.program.kernels.len(),
            how,
            isa: if ready.aot { ready.isa } else { None },
            time: start.elapsed(),
        };
        if let Ok(mut log) = LOG.lock() {
            log.push(record);
        }
        Ok(ready)
    }

    fn build_inner(function: oxla_core::Function, aot: &[AotKernel]) -> Result<Ready, String> {
        let program = fuse(&function)?;
        program.check_schedule()?;
        dump(&program);
        let level = requested_isa()?;
        let bound = level.unwrap_or_else(oxla_cpu::host_level);
        let linked: Option<Vec<KernelFn>> = program
            .kernels
            .iter()
            .map(|k| {
                aot.iter().find(|a| a.name == k.name).map(|a| match bound {
                    IsaLevel::X86_64V4 => a.v4,
                    IsaLevel::X86_64V3 => a.v3,
                    IsaLevel::Baseline => a.base,
                })
            })
            .collect();
        let (fns, aot, isa, jit) = match linked {
            Some(fns) => (fns, true, Some(bound), None),
            None => {
                let jit = match level {
                    Some(l) => JitModule::compile_at(&program.kernels, l)?,
                    None => JitModule::compile(&program.kernels)?,
                };
                let fns = (0..program.kernels.len())
                    .map(|i| jit.function(i))
                    .collect();
                (fns, false, level, Some(jit))
            }
        };
        let plans = matmul_plans(&program.kernels);
        let direct = DirectCall::of(&program);
        let lean_fn = direct
            .as_ref()
            .filter(|d| plans[d.kernel()].is_none())
            .map(|d| fns[d.kernel()]);
        Ok(Ready {
            aot: aot && !fns.is_empty(),
            lean_fn,
            plans,
            splits: split_plans(&program.kernels),
            direct,
            isa,
            program,
            fns,
            _jit: jit,
        })
    }
}

/// The environment variable that pins the CPU code to one ISA level
/// (`x86-64-v4`, `x86-64-v3` or `baseline`) instead of the best the CPU
/// supports: to test the other levels' kernels on a newer CPU, or to compare
/// them.
pub const ISA_ENV: &str = "OXLA_ISA";

/// The ISA level `OXLA_ISA` asks for, if set; an error when the value is
/// unknown or the CPU cannot run it.
fn requested_isa() -> Result<Option<IsaLevel>, String> {
    let Ok(value) = std::env::var(ISA_ENV) else {
        return Ok(None);
    };
    let level = match value.trim() {
        "" => return Ok(None),
        "baseline" | "x86-64" => IsaLevel::Baseline,
        "x86-64-v3" | "v3" => IsaLevel::X86_64V3,
        "x86-64-v4" | "v4" => IsaLevel::X86_64V4,
        other => {
            return Err(format!(
                "{ISA_ENV}={other:?}: expected `x86-64-v4`, `x86-64-v3` or `baseline`"
            ))
        }
    };
    if !oxla_cpu::host_supports(level) {
        return Err(format!("{ISA_ENV}={value}, but this CPU cannot run it"));
    }
    Ok(Some(level))
}

/// Print the passes' outputs named in `OXLA_DUMP` (`ir,kernels,clif,ptx`).
fn dump(program: &Program) {
    let Ok(what) = std::env::var("OXLA_DUMP") else {
        return;
    };
    let info = crate::Inspect::from_program(program.clone());
    for part in what.split(',').map(str::trim) {
        let text = match part {
            "ir" => info.ir(),
            "kernels" => info.kernels(),
            "clif" => info.clif(),
            "ptx" => info.ptx(),
            _ => continue,
        };
        eprintln!("=== oxla {part}: {} ===\n{text}", program.function.name);
    }
}
