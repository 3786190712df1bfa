//! The `Program`: a fused function's kernels, buffers, launches and host
//! steps; its construction, the structural check of its schedule
//! (`check_schedule`), and its text.

use super::bind::{static_solve_order, SolveStep};
use super::{HostStep, MAX_RANK};
use crate::dtype::DType;
use crate::ir::Function;
use crate::kernel::Kernel;
use crate::shape::derived::Plan;
use crate::shape::{Dim, Shape};
use std::fmt::Write as _;

/// A materialized value: a parameter or a kernel's output.
#[derive(Clone, Debug)]
pub struct BufferInfo {
    pub dtype: DType,
    pub shape: Shape,
    /// The parameter index, for buffers the caller passes in.
    pub param: Option<usize>,
}

/// One kernel launch: the kernel and the buffers it takes, in its arg order.
#[derive(Clone, Debug)]
pub struct Launch {
    pub kernel: usize,
    pub args: Vec<usize>,
}

/// A fused function: its kernels and the order to run them in.
#[derive(Clone, Debug)]
pub struct Program {
    /// The function the program computes (simplified).
    pub function: Function,
    /// Each kernel's `name` is its `Kernel::symbol()`.
    pub kernels: Vec<Kernel>,
    pub buffers: Vec<BufferInfo>,
    pub launches: Vec<Launch>,
    /// Loops and conds, run on the host between launches (`HostStep::at`),
    /// in order.
    /// Their nested programs' kernels are in `kernels` too, so a backend
    /// compiles one list.
    pub host_steps: Vec<HostStep>,
    /// For each host step, each operand's dimensions, then each result's
    /// (symbols resolved to indices): a nested program's arguments carry
    /// their dimensions.
    pub(super) host_step_dims: Vec<Vec<Vec<DimRef>>>,
    /// The buffer holding each output of the function.
    pub outputs: Vec<usize>,
    /// Every dimension symbol, in the order of the bound sizes.
    pub symbols: Vec<String>,
    /// For each buffer: element count = factor × product of bound sizes at these indices.
    pub(super) numel: Vec<(u64, Vec<usize>)>,
    /// For each launch: indices into the bound sizes, in the kernel's `sizes` order.
    pub(super) launch_sizes: Vec<Vec<usize>>,
    /// Each parameter's dimensions, symbols resolved to indices.
    pub(super) param_dims: Vec<Vec<DimRef>>,
    /// Each output's dimensions, likewise.
    pub(super) out_dims: Vec<Vec<DimRef>>,
    /// Where each buffer lives during a call.
    pub(super) slots: Vec<Slot>,
    /// The order in which arguments bind the symbols; it depends on shapes
    /// only, so it is worked out once. `None` when some symbol cannot be bound.
    pub(super) solve_order: Option<Vec<SolveStep>>,
    /// The derived symbols (`shape::derived`), computed from the others once
    /// those are bound, never bound from an argument: their evaluation
    /// checks the slices' bounds.
    pub(super) derived: Vec<usize>,
    /// Each derived symbol's definition with its symbols as indices
    /// (`None` if one is not a symbol of the program), and the index of its
    /// first base symbol (where messages say its value came from).
    pub(super) derived_plans: Vec<(Option<Plan>, Option<usize>)>,
    /// Whether a kernel loads at an offset or stores into a region: then
    /// every call checks each launch's extents (`check_bounds`) before
    /// running it, so a slice can never read outside a buffer.
    pub(super) windowed: bool,
    /// The max/min reductions whose axes must not be empty
    /// (`ops::reduce::nonempty_reductions`): each with its reduced sizes,
    /// checked at every call from the bound sizes (`check_nonempty`).
    pub(super) nonempty: Vec<(crate::ops::reduce::NonEmpty, Vec<DimRef>)>,
}

/// Where a buffer of a program lives during a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// The caller's argument at this index.
    Param(usize),
    /// The `o`-th buffer the call allocates (in buffer order).
    Owned(usize),
}

#[derive(Clone, Copy, Debug)]
pub(super) enum DimRef {
    Const(u64),
    Sym(usize),
}

impl Program {
    pub fn new(
        function: Function,
        kernels: Vec<Kernel>,
        buffers: Vec<BufferInfo>,
        launches: Vec<Launch>,
        outputs: Vec<usize>,
    ) -> Program {
        // The function's symbols, and derived ones only a kernel names (the
        // offset of a concatenation's part).
        let mut symbols = function.symbols();
        // (Only the kernels this program launches: a loop's nested
        // programs bind their own.)
        symbols.extend(
            launches
                .iter()
                .flat_map(|l| kernels.get(l.kernel))
                .flat_map(|k| k.sizes.iter().cloned()),
        );
        let symbols: Vec<String> = symbols.into_iter().collect();
        let index = |s: &str| {
            symbols
                .iter()
                .position(|x| x == s)
                .expect("symbol of the function")
        };
        let numel = buffers
            .iter()
            .map(|b| {
                let n = b.shape.numel();
                (n.factor, n.syms.iter().map(|s| index(s)).collect())
            })
            .collect();
        let launch_sizes = launches
            .iter()
            .map(|l| kernels[l.kernel].sizes.iter().map(|s| index(s)).collect())
            .collect();
        let dim_refs = |shape: &Shape| -> Vec<DimRef> {
            shape
                .0
                .iter()
                .map(|d| match d {
                    Dim::Const(c) => DimRef::Const(*c),
                    Dim::Sym(s) => DimRef::Sym(index(s)),
                })
                .collect()
        };
        let param_dims: Vec<Vec<DimRef>> = function
            .params
            .iter()
            .map(|p| dim_refs(function.shape(*p)))
            .collect();
        let out_dims = outputs
            .iter()
            .map(|b| dim_refs(&buffers[*b].shape))
            .collect();
        let mut owned = 0;
        let slots = buffers
            .iter()
            .map(|b| match b.param {
                Some(p) => Slot::Param(p),
                None => {
                    owned += 1;
                    Slot::Owned(owned - 1)
                }
            })
            .collect();
        let derived: Vec<usize> = (0..symbols.len())
            .filter(|k| crate::shape::derived::is_derived(&symbols[*k]))
            .collect();
        let position = |s: &str| symbols.iter().position(|x| x == s);
        let derived_plans = derived
            .iter()
            .map(|k| {
                let d = Dim::Sym(symbols[*k].clone());
                let mut base = Vec::new();
                crate::shape::derived::base_symbols(&d, &mut base);
                let first = base.first().and_then(|b| position(b));
                (Plan::new(&d, &position), first)
            })
            .collect();
        // Derived symbols are computed, not solved for: with one in a
        // parameter's shape, flat arguments take the general solver.
        let in_params = param_dims
            .iter()
            .flatten()
            .any(|d| matches!(d, DimRef::Sym(k) if derived.contains(k)));
        let solve_order = match in_params {
            true => None,
            false => static_solve_order(&param_dims, symbols.len(), &derived),
        };
        let windowed = kernels.iter().any(|k| {
            k.region().is_some()
                || k.is_indexed()
                || k.insts.iter().any(|i| {
                    matches!(&i.kind, crate::kernel::InstKind::Load { offset, .. } if !offset.is_empty())
                })
        });
        let nonempty = crate::ops::reduce::nonempty_reductions(&function)
            .into_iter()
            .map(|n| {
                let refs = n
                    .dims
                    .iter()
                    .map(|d| match d {
                        Dim::Const(c) => DimRef::Const(*c),
                        Dim::Sym(s) => {
                            DimRef::Sym(symbols.iter().position(|x| x == s).unwrap_or(usize::MAX))
                        }
                    })
                    .collect();
                (n, refs)
            })
            .collect();
        Program {
            derived,
            derived_plans,
            windowed,
            nonempty,
            solve_order,
            param_dims,
            out_dims,
            slots,
            function,
            kernels,
            buffers,
            launches,
            host_steps: Vec::new(),
            host_step_dims: Vec::new(),
            outputs,
            symbols,
            numel,
            launch_sizes,
        }
    }

    /// The program with `steps` (loops and conds) in its schedule (their
    /// nested programs' kernels already in `kernels`). Each operand's shape
    /// must use only this program's symbols (a step's operands are values
    /// of its function).
    pub fn with_host_steps(mut self, steps: Vec<HostStep>) -> Program {
        let index = |s: &str| self.symbols.iter().position(|x| x == s);
        self.host_step_dims = steps
            .iter()
            .map(|l| {
                // The operands' dimensions, then the results'.
                l.args()
                    .iter()
                    .chain(l.outs())
                    .map(|b| {
                        self.buffers.get(*b).map_or(Vec::new(), |info| {
                            info.shape
                                .0
                                .iter()
                                .map(|d| match d {
                                    Dim::Const(c) => DimRef::Const(*c),
                                    Dim::Sym(s) => DimRef::Sym(index(s).unwrap_or(usize::MAX)),
                                })
                                .collect()
                        })
                    })
                    .collect()
            })
            .collect();
        self.host_steps = steps;
        self
    }

    /// Where buffer `b` lives during a call.
    pub fn slot(&self, b: usize) -> Slot {
        self.slots[b]
    }

    /// For launch `l`: the index into the bound sizes of each of its
    /// kernel's size arguments.
    pub fn launch_sizes(&self, l: usize) -> &[usize] {
        &self.launch_sizes[l]
    }

    /// Check that the schedule is well formed, the structural precondition
    /// every executor relies on: each launch matches its kernel's arity and
    /// dtypes, reads only parameters or buffers written by an earlier launch,
    /// writes only buffers the call allocates, each exactly once (or, by
    /// launches storing into regions of it, again before anything reads
    /// it: a pad, a concatenation) and never one it also reads; every
    /// output exists and is written. Programs from
    /// `fuse` always pass; run it once per program, not per call.
    pub fn check_schedule(&self) -> Result<(), String> {
        let f = &self.function;
        for v in f.params.iter().chain(&f.outs) {
            if f.shape(*v).rank() > MAX_RANK {
                return Err(format!(
                    "`{}`: {} has rank {}; at most {MAX_RANK} axes are supported",
                    f.name,
                    f.ty(*v),
                    f.shape(*v).rank()
                ));
            }
        }
        for (b, info) in self.buffers.iter().enumerate() {
            if let Some(i) = info.param {
                if i >= self.function.params.len() {
                    return Err(format!("buffer {b} is parameter {i}, which is missing"));
                }
            }
        }
        let mut written = vec![false; self.buffers.len()];
        let mut read = vec![false; self.buffers.len()];
        if self.host_steps.windows(2).any(|w| w[0].at() > w[1].at())
            || self.host_steps.iter().any(|s| s.at() > self.launches.len())
        {
            return Err("host steps (loops, conds) out of order".into());
        }
        if self.host_step_dims.len() != self.host_steps.len()
            || self
                .host_steps
                .iter()
                .zip(&self.host_step_dims)
                .any(|(s, d)| {
                    s.args().len() + s.outs().len() != d.len()
                        || d.iter()
                            .flatten()
                            .any(|r| matches!(r, DimRef::Sym(k) if *k >= self.symbols.len()))
                })
        {
            return Err("host steps (loops, conds) not set with `with_host_steps`, or with a dimension the program does not bind".into());
        }
        let mut next_step = 0;
        for l in 0..=self.launches.len() {
            while next_step < self.host_steps.len() && self.host_steps[next_step].at() == l {
                self.check_host_step(next_step, &mut written, &mut read)?;
                next_step += 1;
            }
            let Some(launch) = self.launches.get(l) else {
                break;
            };
            let k = self.kernels.get(launch.kernel).ok_or_else(|| {
                format!("launch {l} runs kernel {}, which is missing", launch.kernel)
            })?;
            if launch.args.len() != k.args.len() {
                return Err(format!(
                    "launch {l} (`{}`) passes {} buffers, the kernel takes {}",
                    k.name,
                    launch.args.len(),
                    k.args.len()
                ));
            }
            for (a, (b, arg)) in launch.args.iter().zip(&k.args).enumerate() {
                let info = self
                    .buffers
                    .get(*b)
                    .ok_or_else(|| format!("launch {l} passes buffer {b}, which is missing"))?;
                if info.dtype != arg.dtype {
                    return Err(format!(
                        "launch {l} (`{}`) arg {a}: buffer {b} holds {}, the kernel takes {}",
                        k.name, info.dtype, arg.dtype
                    ));
                }
                if !arg.output && !written[*b] && info.param.is_none() {
                    return Err(format!(
                        "launch {l} (`{}`) reads buffer {b} before any launch writes it",
                        k.name
                    ));
                }
                if !arg.output {
                    read[*b] = true;
                }
            }
            for (a, (b, arg)) in launch.args.iter().zip(&k.args).enumerate() {
                if !arg.output {
                    continue;
                }
                if self.buffers[*b].param.is_some() {
                    return Err(format!("launch {l} (`{}`) writes a parameter", k.name));
                }
                let used_twice = launch
                    .args
                    .iter()
                    .enumerate()
                    .any(|(c, x)| c != a && x == b);
                // Several launches may write one buffer in a row when each
                // later one stores into a region of it (a pad after its zero
                // fill, the parts of a concatenation), before anything reads it.
                let rewrite = written[*b] && (k.region().is_none() || read[*b]);
                if rewrite || used_twice {
                    return Err(format!(
                        "launch {l} (`{}`) writes buffer {b}, which is written elsewhere or also passed to it",
                        k.name
                    ));
                }
                written[*b] = true;
            }
        }
        for (i, b) in self.outputs.iter().enumerate() {
            let info = self
                .buffers
                .get(*b)
                .ok_or_else(|| format!("output {i} is buffer {b}, which is missing"))?;
            if info.param.is_none() && !written[*b] {
                return Err(format!("output {i} (buffer {b}) is never written"));
            }
        }
        Ok(())
    }

    /// Element count of buffer `b` under bound sizes.
    pub fn buffer_len(&self, b: usize, sizes: &[u64]) -> usize {
        let (factor, syms) = &self.numel[b];
        syms.iter().fold(*factor, |acc, s| acc * sizes[*s]) as usize
    }

    /// The program as text: kernels and launches, and each host step with
    /// its nested programs (their kernels are listed once, at the top).
    pub fn text(&self) -> String {
        let mut s = String::new();
        for k in &self.kernels {
            let _ = writeln!(s, "{k}");
        }
        self.schedule_text(&mut s);
        s
    }

    /// The launches, host steps and outputs (`text` without the kernels).
    pub(super) fn schedule_text(&self, s: &mut String) {
        let mut next_step = 0;
        for i in 0..=self.launches.len() {
            while next_step < self.host_steps.len() && self.host_steps[next_step].at() == i {
                self.host_step_text(next_step, s);
                next_step += 1;
            }
            let Some(l) = self.launches.get(i) else {
                break;
            };
            let args: Vec<String> = l.args.iter().map(|b| format!("b{b}")).collect();
            let _ = writeln!(
                s,
                "launch {}({})",
                self.kernels[l.kernel].name,
                args.join(", ")
            );
        }
        let outs: Vec<String> = self.outputs.iter().map(|b| format!("b{b}")).collect();
        let _ = writeln!(s, "return {}", outs.join(", "));
    }
}
