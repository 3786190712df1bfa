//! Random-program differential test: random well-typed IR functions (f32 and
//! f64; unary math kept in domain, binary ops, comparisons and select,
//! max/min, broadcasts, reductions, dot; some put through `grad` and/or
//! `vmap`) are fused and run through the kernel interpreter and the JIT at
//! the host and the baseline ISA, at several sizes each, and compared with
//! `interp::eval`; then again with the kernels that `oxla_cpu::native`
//! covers compiled by rustc at every ISA level the host runs (all programs'
//! kernels in one source per level, as the build helper does) and the rest
//! on the JIT.
//!
//! The kernel interpreter must match `eval` exactly (same rounding, same
//! summation order) unless a reduction sums in a type narrower than `f64`
//! (`eval` sums in `f64` and rounds once, the kernel interpreter sums in the
//! value's type); then it gets the JIT's bound. The JIT must match within a bound computed per element
//! from the values (`random_ir::reference`): local rounding of each op, its
//! propagation, and reordered summation.
//!
//! `OXLA_RANDOM_PROGRAMS=N` checks N programs instead of the default 500;
//! `OXLA_RANDOM_SEED=S` checks the single program of seed S (a failure
//! message names it); `OXLA_RANDOM_VERBOSE=1` prints each program before it
//! runs (to find one that crashes). Run with `--nocapture` for a summary.

use crate::accuracy::native;
use crate::random_ir;

use native::NativeModule;
use oxla_cpu::host_supports;

use oxla_core::exec::{FnLauncher, InterpLauncher, Launcher};
use oxla_core::kernel::fusion::fuse;
use oxla_core::tensor::unravel;
use oxla_core::{interp, text, Buffer, DType, Function, KernelFn, Tensor};
use oxla_cpu::{IsaLevel, JitModule};
use rand::rngs::StdRng;
use rand::SeedableRng;
use random_ir::{determinable, generate, random_args, reference, size_configs, Generated};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

const DEFAULT_PROGRAMS: u64 = 500;
const SEED_BASE: u64 = 0x0c1a_0000;
/// A JIT result may be this many times the computed bound from `eval`.
const SLACK: f64 = 2.0;

#[derive(Default)]
struct Stats {
    programs: usize,
    recipes: BTreeMap<String, usize>,
    kernels: usize,
    configs: usize,
    /// Bindings the executor cannot solve (an empty argument hides a size).
    unbindable: usize,
    elements: usize,
    /// Elements whose bound was infinite or that were uncertain bools.
    unchecked: usize,
    /// Largest observed |jit - eval| / bound, and where.
    worst_ratio: f64,
    worst_at: String,
    /// The program being checked, for `worst_at`.
    current: String,
}

fn env_u64(name: &str) -> Option<u64> {
    let s = std::env::var(name).ok()?;
    let s = s.trim();
    let v = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    Some(v.unwrap_or_else(|_| panic!("{name}={s} is not a number")))
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    match p.downcast::<String>() {
        Ok(s) => *s,
        Err(p) => match p.downcast::<&str>() {
            Ok(s) => s.to_string(),
            Err(_) => "(non-string panic)".into(),
        },
    }
}

#[test]
fn random_programs_match_the_interpreter() {
    let seeds: Vec<u64> = match env_u64("OXLA_RANDOM_SEED") {
        Some(s) => vec![s],
        None => {
            let n = env_u64("OXLA_RANDOM_PROGRAMS").unwrap_or(DEFAULT_PROGRAMS);
            (0..n).map(|i| SEED_BASE + i).collect()
        }
    };
    let verbose = std::env::var_os("OXLA_RANDOM_VERBOSE").is_some();
    let natives = Natives::compile(&seeds);
    let mut stats = Stats::default();
    for seed in seeds {
        if verbose {
            eprintln!("seed {seed}");
        }
        let g = catch_unwind(|| generate(seed))
            .unwrap_or_else(|p| panic!("seed {seed}: the generator panicked: {}", panic_text(p)));
        if verbose {
            eprintln!("{}", describe(&g));
        }
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| check(seed, &g, &natives, &mut stats))) {
            panic!(
                "random program {seed} failed (rerun alone with OXLA_RANDOM_SEED={seed}):\n{}\n{}",
                panic_text(p),
                describe(&g)
            );
        }
    }
    eprintln!(
        "random programs: {} programs {:?}, {} kernels, {} size bindings ({} unbindable), \
         {} output elements compared ({} unchecked), worst |jit - eval| / bound = {:.3} ({})",
        stats.programs,
        stats.recipes,
        stats.kernels,
        stats.configs,
        stats.unbindable,
        stats.elements,
        stats.unchecked,
        stats.worst_ratio,
        stats.worst_at,
    );
    assert!(
        stats.unchecked * 20 <= stats.elements.max(1),
        "too many elements without a finite bound: the generator lets values blow up"
    );
}

/// The IR of the program (and of the function before its transforms).
fn describe(g: &Generated) -> String {
    let mut s = format!(
        "--- program ({}) ---\n{}",
        g.recipe,
        text::print(&g.function)
    );
    if g.recipe != "base" {
        s += &format!("--- before the transforms ---\n{}", text::print(&g.base));
    }
    s
}

/// The native kernels of every program, one module per ISA level the host
/// runs.
struct Natives {
    levels: Vec<(IsaLevel, NativeModule)>,
}

impl Natives {
    fn none() -> Natives {
        Natives { levels: vec![] }
    }

    fn compile(seeds: &[u64]) -> Natives {
        let mut kernels: Vec<oxla_core::Kernel> = Vec::new();
        for &seed in seeds {
            let Ok(g) = catch_unwind(|| generate(seed)) else {
                continue;
            };
            let Ok(p) = fuse(&g.function) else { continue };
            for k in p.kernels {
                if !kernels.iter().any(|x| x.name == k.name) {
                    kernels.push(k);
                }
            }
        }
        let native = kernels
            .iter()
            .filter(|k| oxla_cpu::native::supports(k).is_ok())
            .count();
        let start = std::time::Instant::now();
        // One rustc per level, side by side.
        let levels: Vec<(IsaLevel, NativeModule)> = std::thread::scope(|scope| {
            let jobs: Vec<_> = IsaLevel::ALL
                .into_iter()
                .filter(|l| host_supports(*l))
                .map(|l| {
                    let kernels = &kernels;
                    scope.spawn(move || (l, NativeModule::compile(kernels, l)))
                })
                .collect();
            jobs.into_iter()
                .map(|j| {
                    let (l, m) = j.join().expect("compile thread");
                    (l, m.unwrap_or_else(|e| panic!("{e}")))
                })
                .collect()
        });
        eprintln!(
            "native: {native} of {} kernels, compiled at {} levels in {:.1} s",
            kernels.len(),
            levels.len(),
            start.elapsed().as_secs_f64()
        );
        Natives { levels }
    }

    /// Per level: a name for it and the program's kernels, native where
    /// compiled and `jit` otherwise.
    fn launch_sets(
        &self,
        kernels: &[oxla_core::Kernel],
        jit: &[KernelFn],
    ) -> Vec<(String, Vec<KernelFn>)> {
        self.levels
            .iter()
            .map(|(level, m)| {
                let fns = kernels
                    .iter()
                    .zip(jit)
                    .map(|(k, f)| m.function_named(&k.name).unwrap_or(*f))
                    .collect();
                (format!("native {level:?}"), fns)
            })
            .collect()
    }
}

fn check(seed: u64, g: &Generated, natives: &Natives, stats: &mut Stats) {
    let f = &g.function;
    stats.programs += 1;
    let kind = ["grad", "vmap"]
        .into_iter()
        .filter(|t| g.recipe.contains(t))
        .collect::<Vec<_>>();
    let kind = if kind.is_empty() {
        "plain".to_string()
    } else {
        kind.join("+")
    };
    *stats.recipes.entry(kind).or_default() += 1;
    stats.current = format!("seed {seed}");
    assert!(
        determinable(f),
        "the generator made a function whose sizes cannot be bound"
    );
    let mut rng = StdRng::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15);
    let configs = size_configs(&mut rng, f);
    check_function(f, &configs, &mut rng, natives, stats);
}

/// Fuse `f`, compile it at both ISAs and compare every launcher with
/// `interp::eval` at each size binding, on random arguments.
fn check_function(
    f: &Function,
    configs: &[BTreeMap<String, usize>],
    rng: &mut StdRng,
    natives: &Natives,
    stats: &mut Stats,
) {
    let printed = text::print(f);
    let parsed = text::parse(&printed).unwrap_or_else(|e| panic!("text::parse: {e}"));
    assert_eq!(
        text::print(&parsed),
        printed,
        "the IR text does not round-trip"
    );

    let prog = fuse(f).unwrap_or_else(|e| panic!("fuse: {e}"));
    stats.kernels += prog.kernels.len();
    let host = JitModule::compile(&prog.kernels).unwrap_or_else(|e| panic!("compile: {e}"));
    let base = JitModule::compile_at(&prog.kernels, IsaLevel::Baseline)
        .unwrap_or_else(|e| panic!("compile_at baseline: {e}"));
    let host_fns: Vec<KernelFn> = (0..host.len()).map(|i| host.function(i)).collect();
    let base_fns: Vec<KernelFn> = (0..base.len()).map(|i| base.function(i)).collect();
    let native_sets = natives.launch_sets(&prog.kernels, &host_fns);
    let native_launchers: Vec<(String, FnLauncher)> = native_sets
        .iter()
        .map(|(n, fns)| (n.clone(), FnLauncher(fns)))
        .collect();
    let (interp_l, host_l, base_l) = (
        InterpLauncher(&prog.kernels),
        FnLauncher(&host_fns),
        FnLauncher(&base_fns),
    );
    let mut launchers: Vec<(&str, &dyn Launcher)> = vec![
        ("kernel interpreter", &interp_l),
        ("JIT host ISA", &host_l),
        ("JIT baseline ISA", &base_l),
    ];
    for (n, l) in &native_launchers {
        launchers.push((n.as_str(), l));
    }

    let program = stats.current.clone();
    for env in configs {
        stats.configs += 1;
        let args = random_args(rng, f, env);
        let want = interp::eval(f, &args).unwrap_or_else(|e| panic!("eval at {env:?}: {e}"));
        let r = reference(f, &args);
        for (a, b) in r.outs.iter().zip(&want) {
            assert!(
                a.shape == b.shape && same_bits(&a.data, &b.data),
                "random_ir::reference disagrees with interp::eval at {env:?}"
            );
        }
        let lens: Vec<usize> = args.iter().map(Tensor::numel).collect();
        let bufs: Vec<Buffer> = args.iter().map(Tensor::to_buffer).collect();
        let sizes = match prog.bind(&lens) {
            Ok(s) => s,
            Err(e) => {
                // Only an empty argument can hide a size (m from m*0 elements).
                assert!(
                    lens.contains(&0),
                    "bind failed at {env:?} with no empty argument: {e}\n{}",
                    prog.text()
                );
                assert!(
                    prog.run(launchers[0].1, &bufs).is_err(),
                    "run succeeded where bind failed at {env:?}"
                );
                stats.unbindable += 1;
                continue;
            }
        };
        if !lens.contains(&0) {
            let expected: Vec<u64> = prog.symbols.iter().map(|s| env[s] as u64).collect();
            assert_eq!(sizes, expected, "bind at {env:?} ({:?})", prog.symbols);
        }
        prog.check_bounds(&sizes)
            .unwrap_or_else(|e| panic!("check_bounds at {env:?}: {e}\n{}", prog.text()));
        for &(name, launcher) in &launchers {
            stats.current = format!("{program} {name} at {env:?}");
            let got = prog
                .run(launcher, &bufs)
                .unwrap_or_else(|e| panic!("{name}: run at {env:?}: {e}\n{}", prog.text()));
            let exact = name == "kernel interpreter" && !sums_below_f64(&prog.kernels);
            if let Err(msg) = compare(&got, &want, &r.bounds, exact, stats) {
                panic!(
                    "{name} disagrees with interp::eval at sizes {env:?}: {msg}\n\
                     --- arguments (first 8 elements each) ---\n{}--- kernels ---\n{}",
                    args_text(&args),
                    prog.text()
                );
            }
        }
    }
}

fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

fn args_text(args: &[Tensor]) -> String {
    args.iter()
        .enumerate()
        .map(|(i, a)| {
            let head: Vec<String> = a.data.iter().take(8).map(|v| format!("{v:e}")).collect();
            format!("arg {i} {}{:?}: [{}]\n", a.dtype, a.shape, head.join(", "))
        })
        .collect()
}

/// Whether a reduction kernel sums a value narrower than `f64`.
fn sums_below_f64(kernels: &[oxla_core::Kernel]) -> bool {
    kernels
        .iter()
        .any(|k| k.is_reduction() && k.stores.iter().any(|s| k.insts[s.value].ty != DType::F64))
}

/// Compare every output element; `exact` asks for bitwise equality (up to
/// the sign of zero and NaN payloads).
fn compare(
    got: &[Buffer],
    want: &[Tensor],
    bounds: &[Vec<f64>],
    exact: bool,
    stats: &mut Stats,
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} outputs, expected {}", got.len(), want.len()));
    }
    for (o, ((g, w), b)) in got.iter().zip(want).zip(bounds).enumerate() {
        if g.dtype() != w.dtype || g.len() != w.numel() {
            return Err(format!(
                "output {o} is {}[{}], expected {}{:?}",
                g.dtype(),
                g.len(),
                w.dtype,
                w.shape
            ));
        }
        for (i, (&want_v, &bound)) in w.data.iter().zip(b).enumerate() {
            let got_v = g.get(i);
            let at = || {
                format!(
                    "output {o} {}{:?} element {:?}",
                    w.dtype,
                    w.shape,
                    unravel(i, &w.shape)
                )
            };
            let same = got_v == want_v || (got_v.is_nan() && want_v.is_nan());
            if exact {
                if !same {
                    return Err(format!("{}: got {got_v:e}, expected {want_v:e}", at()));
                }
                continue;
            }
            stats.elements += 1;
            if w.dtype == DType::Bool {
                if bound > 0.0 {
                    stats.unchecked += 1;
                } else if !same {
                    return Err(format!("{}: got {got_v}, expected {want_v}", at()));
                }
                continue;
            }
            if !bound.is_finite() {
                stats.unchecked += 1;
                continue;
            }
            let ok = if want_v.is_nan() || want_v.is_infinite() {
                same
            } else {
                let diff = (got_v - want_v).abs();
                if diff > 0.0 && diff / bound > stats.worst_ratio {
                    stats.worst_ratio = diff / bound;
                    stats.worst_at = format!(
                        "{}, {}: got {got_v:e}, expected {want_v:e}, bound {bound:e}",
                        stats.current,
                        at()
                    );
                }
                diff <= SLACK * bound
            };
            if !ok {
                return Err(format!(
                    "{}: got {got_v:e}, expected {want_v:e} (difference {:e}, allowed {:e})",
                    at(),
                    (got_v - want_v).abs(),
                    SLACK * bound
                ));
            }
        }
    }
    Ok(())
}

// ---- regressions found by the generator --------------------------------------

/// Check the function in IR text `src` at every binding of `configs`
/// (`(symbol, size)` lists).
fn check_text(src: &str, configs: &[&[(&str, usize)]]) {
    let f = text::parse(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let configs: Vec<BTreeMap<String, usize>> = configs
        .iter()
        .map(|c| c.iter().map(|(s, n)| (s.to_string(), *n)).collect())
        .collect();
    let mut stats = Stats::default();
    let mut rng = StdRng::seed_from_u64(7);
    if let Err(p) = catch_unwind(AssertUnwindSafe(|| {
        check_function(&f, &configs, &mut rng, &Natives::none(), &mut stats)
    })) {
        panic!("{}\n--- program ---\n{src}", panic_text(p));
    }
}

/// A vector comparison whose operand is a load used nowhere else: Cranelift
/// 0.135 folds the load into a legacy-SSE `cmpps`/`cmppd` as a memory operand,
/// which must be 16-byte aligned, and rows of `[m, n]` with odd `n` are not:
/// the baseline-ISA kernel crashed (SIGSEGV) before loads on SSE-only targets
/// went through a bitcast (seed 203032153).
#[test]
fn baseline_compare_of_an_unaligned_load() {
    for dtype in ["f32", "f64"] {
        let src = format!(
            "fn cmp_load(x %0: {dtype}[m,n], y %1: {dtype}[m,n], z %2: {dtype}[n]) {{
               %3: {dtype}[] = literal[0.0]
               %4: {dtype}[m,n] = broadcast[] %3
               %5: bool[m,n] = lt %4 %0
               %6: {dtype}[m,n] = select %5 %4 %1
               return %6
             }}"
        );
        check_text(
            &src,
            &[
                &[("m", 3), ("n", 5)],
                &[("m", 4), ("n", 17)],
                &[("m", 2), ("n", 1001)],
            ],
        );
    }
}
