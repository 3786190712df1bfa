//! The op catalog (the `oxla-test-support` crate) on the CUDA
//! runner: every case's function, its VJP, the function with its rank-2+
//! params transposed (read through permuted strides) and the function
//! batched along last axes, in f64 and in f32, fused and run through a
//! caller's `run` (the GPU, or `oxla_cuda::emulate` on the host) with
//! shaped arguments at sizes around the launch and reduction blocks, and
//! compared element by element (and shape by shape) with the reference
//! interpreter on the unfused function. The tolerances are the CPU
//! backend's `catalog_programs` ones. Shared by `tests/suite/catalog.rs`
//! and `examples/gpu_check.rs`.

/// The op catalog of programs and inputs.
pub use oxla_test_support as ir;

use ir::{catalog, concrete, random_args_for, rng, shape_envs, with_transposed_params, Case};
use oxla_core::exec::Program;
use oxla_core::kernel::fusion::fuse;
use oxla_core::shape::derived;
use oxla_core::transforms::{vjp, vmap_axes};
use oxla_core::{Buffer, DType, Dim, Function, Tensor};
use oxla_cuda::{emulate, CudaProgram, Gpu};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// The sizes every symbol of a case takes (all equal): empty, one, a few,
/// past a warp, and several blocks of a launch and of a reduction.
pub const SIZES: [usize; 5] = [0, 1, 3, 33, 1000];

/// Most elements of an argument or result at one binding (larger
/// bindings are left out).
pub const MAX_ELEMENTS: usize = 20_000;

/// The batch size of the batched programs (the symbol `vmap` adds).
pub const BATCH: usize = 3;

/// f64: the math functions within a few ulp, sums in another order than
/// the reference (blocked or atomic): within (log₂k + 2)·eps·Σ|x| for the
/// sums here, ≲ 1e-10 relative to max(1, |want|) in the worst case of full
/// cancellation (the CPU backend's `catalog_programs` bound).
pub const RTOL: f64 = 1e-9;

/// f32: the reference rounds every value to f32 as the backends do, so
/// elementwise results differ by the math functions' few ulp and sums by
/// their order, typically eps·√k·|x| ≲ 1e-5 (as `catalog_programs`). A
/// wrong element, stride or block tail is an O(1) error.
pub const RTOL_F32: f64 = 1e-4;

/// How much of the catalog a check runs.
#[derive(Clone, Copy, Debug)]
pub struct Extent<'a> {
    /// The sizes every symbol takes (all equal); with several base
    /// symbols, the catalog's `shape_envs` (independent small sizes) too.
    pub sizes: &'a [usize],
    /// Bindings with an argument or result larger than this are left out.
    pub max_elements: usize,
    /// Also each program with every f64 in f32.
    pub f32: bool,
    /// Also the transposed-params and batched forms.
    pub forms: bool,
}

/// The whole check: [`SIZES`], [`MAX_ELEMENTS`], f64 and f32, every form.
pub const FULL: Extent<'static> = Extent {
    sizes: &SIZES,
    max_elements: MAX_ELEMENTS,
    f32: true,
    forms: true,
};

/// What a catalog check ran and found.
pub struct Report {
    /// Per case: its worst error as a fraction of the tolerance, or the
    /// first failure.
    pub cases: Vec<(String, Result<f64, String>)>,
    /// Programs (function, VJP, forms, each dtype) checked.
    pub programs: usize,
    /// Calls of `run` compared.
    pub runs: usize,
}

impl Report {
    pub fn failures(&self) -> usize {
        self.cases.iter().filter(|(_, r)| r.is_err()).count()
    }

    /// One line: cases, programs, runs, failures, the worst error.
    pub fn summary(&self) -> String {
        let worst = self
            .cases
            .iter()
            .filter_map(|(_, r)| r.as_ref().ok())
            .fold(0.0f64, |a, b| a.max(*b));
        format!(
            "{} cases, {} programs, {} runs: {} failed; worst error {worst:.3} of tolerance",
            self.cases.len(),
            self.programs,
            self.runs,
            self.failures()
        )
    }
}

/// Arrays with their dimensions (arguments or results of a run).
pub type Shaped = Vec<(Buffer, Vec<usize>)>;
pub type ShapedArgs = [(Buffer, Vec<usize>)];

/// A runner of fused programs: the function (f64 or f32) and its
/// arguments with their dimensions; the results with theirs.
pub type Run<'a> = dyn Fn(&Function, &ShapedArgs) -> Result<Shaped, String> + 'a;

/// Every case of the catalog (its function and VJP, their transposed and
/// batched forms, in f64 and f32) run by `run` against the interpreter at
/// [`SIZES`]; per case the worst error as a fraction of the tolerance, or
/// the first failure (a panic in one case is that case's failure).
pub fn check_catalog(
    run: impl Fn(&Function, &ShapedArgs) -> Result<Shaped, String>,
) -> Vec<(String, Result<f64, String>)> {
    check_catalog_with(FULL, &run, &mut |_, _| {}).cases
}

/// [`check_catalog`] over `extent`, with the counts; `on_case` sees each
/// case's result as it comes (for progress lines).
pub fn check_catalog_with(
    extent: Extent,
    run: &Run,
    on_case: &mut dyn FnMut(&str, &Result<f64, String>),
) -> Report {
    let programs = Cell::new(0usize);
    let runs = Cell::new(0usize);
    let cases = catalog(&Dim::sym("n"))
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let result = catch_unwind(AssertUnwindSafe(|| {
                check_case(i, c, extent, run, &programs, &runs)
            }))
            .unwrap_or_else(|e| Err(format!("panicked: {}", panic_message(&*e))));
            on_case(&c.name, &result);
            (c.name.clone(), result)
        })
        .collect();
    Report {
        cases,
        programs: programs.get(),
        runs: runs.get(),
    }
}

/// [`FULL`], or with env `OXLA_GPU_CATALOG=quick` only each case's
/// function and VJP in f64 (a quarter of the programs, for a GPU run
/// short of time).
pub fn gpu_extent() -> Extent<'static> {
    if std::env::var("OXLA_GPU_CATALOG").is_ok_and(|v| v == "quick") {
        Extent {
            f32: false,
            forms: false,
            ..FULL
        }
    } else {
        FULL
    }
}

fn panic_message(e: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = e.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = e.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".into()
    }
}

/// A program of a case: what it is, the function, its params' ranges.
pub struct CaseProgram {
    pub what: &'static str,
    pub f: Function,
    pub ranges: Vec<(f64, f64)>,
}

/// The programs of a case in f64: its function, its VJP and (with
/// `forms`) the function with transposed params and the function batched
/// along the last axis of every param and result (the CPU backend's
/// `catalog_programs` set).
pub fn programs(c: &Case, forms: bool) -> Vec<CaseProgram> {
    let mut out = vec![CaseProgram {
        what: "function",
        f: c.f.clone(),
        ranges: c.ranges.clone(),
    }];
    let mut vjp_ranges = c.ranges.clone();
    vjp_ranges.extend(vec![(-1.0, 1.0); c.f.outs.len()]);
    out.push(CaseProgram {
        what: "VJP",
        f: vjp(&c.f),
        ranges: vjp_ranges,
    });
    if !forms {
        return out;
    }
    if let Some(t) = with_transposed_params(&c.f) {
        out.push(CaseProgram {
            what: "transposed params",
            f: t,
            ranges: c.ranges.clone(),
        });
    }
    let last = |vs: &[oxla_core::Var]| -> Vec<Option<usize>> {
        vs.iter().map(|v| Some(c.f.shape(*v).rank())).collect()
    };
    let batched = vmap_axes(&c.f, &last(&c.f.params), &last(&c.f.outs))
        .unwrap_or_else(|e| panic!("vmap_axes `{}`: {e}", c.name));
    out.push(CaseProgram {
        what: "batched along last axes",
        f: batched,
        ranges: c.ranges.clone(),
    });
    out
}

/// `f` with every f64 value in f32: its text form with the type renamed.
pub fn in_f32(f: &Function) -> Function {
    let text = oxla_core::text::print(f);
    assert!(!text.contains("f32"), "{text}");
    let g = oxla_core::text::parse(&text.replace("f64", "f32"))
        .unwrap_or_else(|e| panic!("`{}` in f32: {e}", f.name));
    oxla_core::verify::verify(&g).unwrap();
    g
}

fn check_case(
    i: usize,
    c: &Case,
    extent: Extent,
    run: &Run,
    programs_run: &Cell<usize>,
    runs: &Cell<usize>,
) -> Result<f64, String> {
    let mut worst = 0.0f64;
    for (j, p) in programs(c, extent.forms).iter().enumerate() {
        let seed = (10 * i + j) as u64;
        let mut forms = vec![(DType::F64, p.f.clone(), RTOL)];
        if extent.f32 {
            forms.push((DType::F32, in_f32(&p.f), RTOL_F32));
        }
        for (dtype, f, rtol) in forms {
            let ctx = format!("{} ({dtype})", p.what);
            let (w, n) = check_program(c, &f, &p.ranges, seed, extent, rtol, run)
                .map_err(|e| format!("{ctx}: {e}"))?;
            worst = worst.max(w);
            programs_run.set(programs_run.get() + 1);
            runs.set(runs.get() + n);
        }
    }
    Ok(worst)
}

/// The bindings `f` runs at: every symbol at each size (a batch symbol
/// `vmap` added at [`BATCH`]), and with several base symbols the
/// catalog's independent draws; those at which a slice does not fit or
/// an array is over `max_elements` left out.
fn bindings(c: &Case, f: &Function, seed: u64, extent: Extent) -> Vec<BTreeMap<String, usize>> {
    let case_syms = c.f.symbols();
    let symbols = f.symbols();
    let sizes: &[usize] = if symbols.is_empty() {
        &[1]
    } else {
        extent.sizes
    };
    let mut envs = Vec::new();
    for &size in sizes {
        let mut env: BTreeMap<String, u64> = symbols
            .iter()
            .filter(|s| !derived::is_derived(s))
            .map(|s| {
                let v = if case_syms.contains(s) { size } else { BATCH };
                (s.clone(), v as u64)
            })
            .collect();
        // A size some slice of the case does not fit is left out (the
        // core fusion tests check that such a call is refused).
        if derived::bind_derived(symbols.iter().map(String::as_str), &mut env).is_ok() {
            envs.push(env.into_iter().map(|(k, v)| (k, v as usize)).collect());
        }
    }
    let bases = symbols.iter().filter(|s| !derived::is_derived(s)).count();
    if bases > 1 {
        for env in shape_envs(f, seed) {
            if !envs.contains(&env) {
                envs.push(env);
            }
        }
    }
    envs.retain(|env| {
        f.params
            .iter()
            .chain(&f.outs)
            .all(|v| concrete(f.shape(*v), env).iter().product::<usize>() <= extent.max_elements)
    });
    envs
}

/// `f` run by `run` against the interpreter at each of its bindings;
/// the worst error as a fraction of `rtol`, and the number of runs.
fn check_program(
    c: &Case,
    f: &Function,
    ranges: &[(f64, f64)],
    seed: u64,
    extent: Extent,
    rtol: f64,
    run: &Run,
) -> Result<(f64, usize), String> {
    let mut worst = 0.0f64;
    let envs = bindings(c, f, seed, extent);
    if envs.is_empty() {
        return Err(format!("no binding of {:?} fits", extent.sizes));
    }
    for (k, env) in envs.iter().enumerate() {
        let mut rng = rng(seed * 1009 + k as u64);
        let mut args = random_args_for(f, ranges, &c.sep, &mut rng, env);
        for a in &mut args {
            // Values of the parameter's type, for the reference too.
            a.data.iter_mut().for_each(|v| *v = a.dtype.round(*v));
        }
        let want = oxla_core::interp::eval(f, &args).map_err(|e| format!("interpreter: {e}"))?;
        let shaped: Vec<(Buffer, Vec<usize>)> = args
            .iter()
            .map(|t| (t.to_buffer(), t.shape.clone()))
            .collect();
        let got = match run(f, &shaped) {
            Ok(got) => got,
            // A max or min over no elements is an error at the call (JAX
            // raises; `Program::check_nonempty`): the error is the result.
            Err(e) if e.contains("has no identity") && has_empty_axis(env) => continue,
            Err(e) => return Err(format!("at {env:?}: {e}")),
        };
        let w = compare(&got, &want, rtol).map_err(|e| format!("at {env:?}: {e}"))?;
        worst = worst.max(w);
    }
    Ok((worst, envs.len()))
}

/// Whether a binding makes some axis empty (where a max has no value).
fn has_empty_axis(env: &BTreeMap<String, usize>) -> bool {
    env.values().any(|v| *v == 0)
}

/// `got` against the interpreter's `want`: dtypes, shapes, and every
/// element within `rtol`·max(1, |want|) (NaN where `want` is NaN); the
/// worst error as a fraction of that.
pub fn compare(got: &[(Buffer, Vec<usize>)], want: &[Tensor], rtol: f64) -> Result<f64, String> {
    if got.len() != want.len() {
        return Err(format!(
            "{} outputs, the interpreter gives {}",
            got.len(),
            want.len()
        ));
    }
    let mut worst = 0.0f64;
    for (o, ((g, dims), w)) in got.iter().zip(want).enumerate() {
        if g.dtype() != w.dtype || *dims != w.shape || g.len() != w.data.len() {
            return Err(format!(
                "output {o}: {} of shape {dims:?} ({} elements), the interpreter gives {} of \
                 shape {:?}",
                g.dtype(),
                g.len(),
                w.dtype,
                w.shape
            ));
        }
        for (j, want) in w.data.iter().enumerate() {
            let got = g.get(j);
            if got == *want || (got.is_nan() && want.is_nan()) {
                continue;
            }
            let ratio = (got - want).abs() / (rtol * want.abs().max(1.0));
            if ratio.is_nan() || ratio > 1.0 {
                return Err(format!(
                    "output {o}, element {j}: got {got:e}, interpreter {want:e} \
                     (tolerance {rtol:e}·max(1, |want|))"
                ));
            }
            worst = worst.max(ratio);
        }
    }
    Ok(worst)
}

/// Runs on the host through `oxla_cuda::emulate` (the CUDA runner's
/// schedule and host steps, the kernel interpreter for the PTX), each
/// function fused once and reused while the same function is run.
pub fn on_the_host() -> impl Fn(&Function, &ShapedArgs) -> Result<Shaped, String> {
    let last: RefCell<Option<(Function, Program)>> = RefCell::new(None);
    move |f, args| {
        let mut slot = last.borrow_mut();
        if slot.as_ref().is_none_or(|(g, _)| g != f) {
            *slot = None;
            *slot = Some((f.clone(), fuse(f)?));
        }
        emulate::run_shaped(&slot.as_ref().unwrap().1, args)
    }
}

/// Runs on `gpu` through `CudaProgram::run_shaped`, each function fused
/// and loaded once and reused while the same function is run (at its
/// several bindings).
pub fn on_the_gpu(gpu: &Arc<Gpu>) -> impl Fn(&Function, &ShapedArgs) -> Result<Shaped, String> {
    let gpu = gpu.clone();
    let last: RefCell<Option<(Function, CudaProgram)>> = RefCell::new(None);
    move |f, args| {
        let mut slot = last.borrow_mut();
        if slot.as_ref().is_none_or(|(g, _)| g != f) {
            // The previous program's module is unloaded first.
            *slot = None;
            let p = CudaProgram::load_on(&gpu, fuse(f)?).map_err(|e| format!("loading: {e}"))?;
            *slot = Some((f.clone(), p));
        }
        slot.as_ref().unwrap().1.run_shaped(args)
    }
}
