//! Programs: kernels plus the host schedule that runs them, and the executor
//! every backend shares (the backend only supplies a `Launcher`).

use crate::buffer::Buffer;
use crate::dtype::DType;
use crate::ir::Function;
use crate::kernel::{interp, Kernel, KernelFn};
use crate::shape::derived::Plan;
use crate::shape::{Dim, Shape};
use std::fmt::Write as _;

mod cond;
mod direct;
mod host_step;
mod loops;
pub mod tape;
pub use cond::CondStep;
pub use direct::{DirectCall, DirectDims, FlatArg, ScalarSlots};
pub use host_step::{HostStep, Nested};
pub use loops::LoopStep;

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
    /// For each host step, each operand's dimensions (symbols resolved to
    /// indices): a nested program's arguments carry their dimensions.
    host_step_dims: Vec<Vec<Vec<DimRef>>>,
    /// The buffer holding each output of the function.
    pub outputs: Vec<usize>,
    /// Every dimension symbol, in the order of the bound sizes.
    pub symbols: Vec<String>,
    /// For each buffer: element count = factor × product of bound sizes at these indices.
    numel: Vec<(u64, Vec<usize>)>,
    /// For each launch: indices into the bound sizes, in the kernel's `sizes` order.
    launch_sizes: Vec<Vec<usize>>,
    /// Each parameter's dimensions, symbols resolved to indices.
    param_dims: Vec<Vec<DimRef>>,
    /// Each output's dimensions, likewise.
    out_dims: Vec<Vec<DimRef>>,
    /// Where each buffer lives during a call.
    slots: Vec<Slot>,
    /// The order in which arguments bind the symbols; it depends on shapes
    /// only, so it is worked out once. `None` when some symbol cannot be bound.
    solve_order: Option<Vec<SolveStep>>,
    /// The derived symbols (`shape::derived`), computed from the others once
    /// those are bound, never bound from an argument: their evaluation
    /// checks the slices' bounds.
    derived: Vec<usize>,
    /// Each derived symbol's definition with its symbols as indices
    /// (`None` if one is not a symbol of the program), and the index of its
    /// first base symbol (where messages say its value came from).
    derived_plans: Vec<(Option<Plan>, Option<usize>)>,
    /// Whether a kernel loads at an offset or stores into a region: then
    /// every call checks each launch's extents (`check_bounds`) before
    /// running it, so a slice can never read outside a buffer.
    windowed: bool,
    /// The max/min reductions whose axes must not be empty
    /// (`ops::reduce::nonempty_reductions`): each with its reduced sizes,
    /// checked at every call from the bound sizes (`check_nonempty`).
    nonempty: Vec<(crate::ops::reduce::NonEmpty, Vec<DimRef>)>,
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
enum DimRef {
    Const(u64),
    Sym(usize),
}

/// Scratch space reused across calls on one thread, so a call allocates
/// only the buffers it returns or passes between kernels.
#[derive(Default)]
struct Scratch {
    sizes: Vec<Option<u64>>,
    /// The argument (and axis, if it came with dimensions) that bound each symbol.
    source: Vec<(usize, Option<usize>)>,
    bound: Vec<u64>,
    /// Each buffer's element count under `bound`.
    lens: Vec<usize>,
    ptrs: Vec<*mut u8>,
    kernel_sizes: Vec<i64>,
    owned: Vec<Buffer>,
    results: Vec<Buffer>,
    /// The dimensions of each result, under `bound`.
    result_dims: Vec<ArgDims>,
    /// Small buffers kept from earlier calls for reuse: kernels write every
    /// element of their outputs, so a reused buffer needs no clearing.
    pool: Vec<Buffer>,
    /// For each owned buffer: the result whose caller-owned destination
    /// holds it (the kernels write there directly), if any.
    backing: Vec<Option<usize>>,
    /// The space of each host step's nested programs (a loop's body,
    /// condition and backward body; a cond's then and else branches: three
    /// per step), kept across calls like the rest.
    nested: Vec<Scratch>,
    /// A host step's operands and outputs.
    step_args: Vec<RawArg>,
    step_outs: Vec<(*mut u8, usize)>,
}

/// Buffers a call leaves behind (its intermediates, a scalar result after it
/// was read) are kept for reuse, at most `POOL_SIZE` of them and
/// `POOL_MAX_BYTES` in all per thread, so that a training step that writes
/// its results into the caller's buffers allocates nothing; a buffer that
/// would pass the byte budget is freed.
const POOL_MAX_BYTES: usize = 16 << 20;
const POOL_SIZE: usize = 32;

impl Scratch {
    fn buffer(&mut self, dtype: DType, len: usize) -> Buffer {
        match self
            .pool
            .iter()
            .position(|b| b.dtype() == dtype && b.len() == len)
        {
            // `remove` keeps the pool oldest first (see `recycle`).
            Some(i) => self.pool.remove(i),
            None => Buffer::zeros(dtype, len),
        }
    }

    /// Return what the call did not hand out to the pool.
    fn recycle(&mut self) {
        let bytes = |b: &Buffer| b.len() * b.dtype().size_bytes();
        let mut pooled: usize = self.pool.iter().map(bytes).sum();
        for b in self.owned.drain(..).chain(self.results.drain(..)) {
            let n = bytes(&b);
            if n == 0 || n > POOL_MAX_BYTES {
                continue;
            }
            // The oldest buffers (left by earlier calls, of sizes this call
            // did not use) make room.
            while !self.pool.is_empty()
                && (pooled + n > POOL_MAX_BYTES || self.pool.len() >= POOL_SIZE)
            {
                pooled -= bytes(&self.pool.remove(0));
            }
            pooled += n;
            self.pool.push(b);
        }
    }
}

/// Move a buffer out, leaving an empty one.
pub fn take_buffer(b: &mut Buffer) -> Buffer {
    std::mem::replace(b, Buffer::F32(Vec::new()))
}

/// One step of the static binding order: symbol `sym` is the element count
/// of parameter `param` divided by `factor` times the sizes of `others`,
/// which earlier steps bound.
#[derive(Clone, Debug)]
struct SolveStep {
    sym: usize,
    param: usize,
    factor: u64,
    others: Vec<usize>,
}

thread_local! {
    /// Scratch space reused by every call on this thread (see `execute_then`
    /// for when a call cannot use it).
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// Runs the kernels of a program.
pub trait Launcher {
    /// Run kernel `kernel` of the program.
    ///
    /// # Safety
    /// `args` and `sizes` must satisfy the kernel's calling convention: each
    /// pointer is valid for the elements the kernel reads or writes and
    /// outputs alias nothing else.
    unsafe fn launch(&self, kernel: usize, args: &[*mut u8], sizes: &[i64]);

    /// `launch`, told that the kernel's domain has `elems` elements, so a
    /// backend may take a shorter route for a small one (the CPU's: no
    /// check for a split across threads).
    ///
    /// # Safety
    /// As for `launch`; `elems` is the product of the kernel's domain
    /// extents under `sizes`.
    #[inline]
    unsafe fn launch_elems(&self, kernel: usize, args: &[*mut u8], sizes: &[i64], elems: u64) {
        let _ = elems;
        // SAFETY: the caller's contract, passed on.
        unsafe { self.launch(kernel, args, sizes) }
    }
}

/// One argument of a call: element type, pointer to the first element,
/// element count, and the dimensions the caller holds it with (row-major,
/// contiguous), if it has them. The pointer must be valid for `len` reads of
/// `dtype`.
#[derive(Clone, Copy, Debug)]
pub struct RawArg {
    pub dtype: DType,
    pub ptr: *const u8,
    pub len: usize,
    pub dims: ArgDims,
}

/// The most axes an argument or result can have.
pub const MAX_RANK: usize = 8;

/// The dimensions of an argument or result, held inline (a call allocates
/// nothing for them), or `flat`: a buffer known only by its length, whose
/// dimensions are solved from the element count (a slice passed for a
/// parameter of any rank, the form the executor's tests and the GPU runner
/// use).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgDims {
    /// `u8::MAX` for flat.
    rank: u8,
    dims: [usize; MAX_RANK],
}

impl ArgDims {
    pub const FLAT: ArgDims = ArgDims {
        rank: u8::MAX,
        dims: [0; MAX_RANK],
    };

    /// `None` above `MAX_RANK` axes.
    #[inline]
    pub fn new(dims: &[usize]) -> Option<ArgDims> {
        if dims.len() > MAX_RANK {
            return None;
        }
        let mut d = [0; MAX_RANK];
        d[..dims.len()].copy_from_slice(dims);
        Some(ArgDims {
            rank: dims.len() as u8,
            dims: d,
        })
    }

    /// The dimensions, or `None` for a flat buffer.
    #[inline]
    pub fn get(&self) -> Option<&[usize]> {
        (self.rank != u8::MAX).then(|| &self.dims[..self.rank as usize])
    }
}

/// Where the caller wants one result written: a buffer it owns, of
/// `dtype`, `len` elements in row-major order with dimensions `dims`.
/// `name` names it in errors (the generated function's parameter).
#[derive(Clone, Copy, Debug)]
pub struct RawDest {
    pub dtype: DType,
    pub ptr: *mut u8,
    pub len: usize,
    pub dims: ArgDims,
    pub name: &'static str,
}

impl RawArg {
    /// An argument known by its length only (see `ArgDims::FLAT`).
    pub fn flat(dtype: DType, ptr: *const u8, len: usize) -> RawArg {
        RawArg {
            dtype,
            ptr,
            len,
            dims: ArgDims::FLAT,
        }
    }
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
                l.args()
                    .iter()
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
                    s.args().len() != d.len()
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

    /// Bind every dimension symbol from the arguments' element counts,
    /// checking each argument; errors name the argument.
    pub fn bind(&self, lens: &[usize]) -> Result<Vec<u64>, String> {
        if lens.len() != self.function.params.len() {
            return Err(self.arity_error(lens.len()));
        }
        let mut scratch = Scratch::default();
        self.bind_into(&|i| (lens[i], ArgDims::FLAT), &mut scratch)?;
        Ok(scratch.sizes.iter().map(|s| s.expect("bound")).collect())
    }

    /// Bind every dimension symbol from the arguments' dimensions (or, for
    /// `ArgDims::FLAT` ones, their element counts); errors name the argument.
    pub fn bind_dims(&self, args: &[(usize, ArgDims)]) -> Result<Vec<u64>, String> {
        if args.len() != self.function.params.len() {
            return Err(self.arity_error(args.len()));
        }
        let mut scratch = Scratch::default();
        self.bind_into(&|i| args[i], &mut scratch)?;
        Ok(scratch.sizes.iter().map(|s| s.expect("bound")).collect())
    }

    /// The argument axes that are 1 where their symbol is bound to another
    /// size by another argument, as (parameter, axis): numpy broadcasting,
    /// which the program does not do (see `transforms::broadcast`). `None`
    /// unless that is the only thing wrong with the arguments' dimensions:
    /// every argument has dimensions of its parameter's rank, fixed sizes
    /// match, and every symbol's axes are each 1 or one common size.
    pub fn size_one_axes(&self, args: &[RawArg]) -> Option<Vec<(usize, usize)>> {
        if args.len() != self.param_dims.len() {
            return None;
        }
        let mut size = vec![1u64; self.symbols.len()];
        for (want, a) in self.param_dims.iter().zip(args) {
            let got = a.dims.get()?;
            if got.len() != want.len() || got.iter().product::<usize>() != a.len {
                return None;
            }
            for (w, g) in want.iter().zip(got) {
                match *w {
                    DimRef::Const(c) if c != *g as u64 => return None,
                    DimRef::Const(_) => {}
                    DimRef::Sym(k) if self.derived.contains(&k) => return None,
                    DimRef::Sym(k) => match (size[k], *g as u64) {
                        (_, 1) => {}
                        (1, g) => size[k] = g,
                        (s, g) if s == g => {}
                        _ => return None,
                    },
                }
            }
        }
        let mut ones = Vec::new();
        for (i, (want, a)) in self.param_dims.iter().zip(args).enumerate() {
            let got = a.dims.get()?;
            for (axis, (w, g)) in want.iter().zip(got).enumerate() {
                if let DimRef::Sym(k) = *w {
                    if *g == 1 && size[k] != 1 {
                        ones.push((i, axis));
                    }
                }
            }
        }
        (!ones.is_empty()).then_some(ones)
    }

    /// Check a call's arity and each argument's element type; errors name
    /// the argument.
    pub fn check_arg_types(
        &self,
        dtypes: impl ExactSizeIterator<Item = DType>,
    ) -> Result<(), String> {
        let f = &self.function;
        if dtypes.len() != f.params.len() {
            return Err(self.arity_error(dtypes.len()));
        }
        for (i, dtype) in dtypes.enumerate() {
            let want = f.dtype(f.params[i]);
            if dtype != want {
                return Err(format!(
                    "argument `{}` of `{}`: expected {want} elements, got {dtype} elements",
                    f.param_names[i], f.name
                ));
            }
        }
        Ok(())
    }

    fn arity_error(&self, got: usize) -> String {
        let f = &self.function;
        format!("`{}` takes {} arguments, got {got}", f.name, f.params.len())
    }

    /// Bind the symbols into `scratch.bound` and check every argument:
    /// directly from the dimensions when every argument has them, else in
    /// the static order from the lengths. `false` when that fails (the
    /// general solver then finds the binding, if any, or the error message).
    fn bind_fast(&self, args: &[RawArg], scratch: &mut Scratch) -> bool {
        let bound = &mut scratch.bound;
        bound.clear();
        if args.iter().all(|a| a.dims.get().is_some()) {
            const UNSET: u64 = u64::MAX;
            bound.resize(self.symbols.len(), UNSET);
            for (want, a) in self.param_dims.iter().zip(args) {
                let got = a.dims.get().unwrap_or(&[]);
                if got.len() != want.len() {
                    return false;
                }
                let mut numel = 1usize;
                for (w, g) in want.iter().zip(got) {
                    let g64 = *g as u64;
                    let ok = match *w {
                        DimRef::Const(c) => c == g64,
                        // Computed below, then checked.
                        DimRef::Sym(k) if self.derived.contains(&k) => true,
                        DimRef::Sym(k) if bound[k] == UNSET => {
                            bound[k] = g64;
                            true
                        }
                        DimRef::Sym(k) => bound[k] == g64,
                    };
                    if !ok {
                        return false;
                    }
                    numel *= g;
                }
                if numel != a.len {
                    return false;
                }
            }
            if self.derived.is_empty() {
                return !bound.contains(&UNSET);
            }
            if self.compute_derived(bound, UNSET).is_err() || bound.contains(&UNSET) {
                return false;
            }
            return self.param_dims.iter().zip(args).all(|(want, a)| {
                want.iter()
                    .zip(a.dims.get().unwrap_or(&[]))
                    .all(|(w, g)| match *w {
                        DimRef::Sym(k) => bound[k] == *g as u64,
                        DimRef::Const(_) => true,
                    })
            });
        }
        let len = |i: usize| args[i].len;
        let Some(order) = &self.solve_order else {
            return false;
        };
        bound.resize(self.symbols.len(), 0);
        for step in order {
            let known = step
                .others
                .iter()
                .fold(step.factor, |acc, k| acc * bound[*k]);
            let n = len(step.param) as u64;
            if known == 0 || !n.is_multiple_of(known) {
                return false;
            }
            bound[step.sym] = n / known;
        }
        if self.compute_derived(bound, 0).is_err() {
            return false;
        }
        (0..self.param_dims.len()).all(|i| {
            let (factor, syms) = &self.numel[i];
            syms.iter().fold(*factor, |acc, s| acc * bound[*s]) == len(i) as u64
        })
    }

    /// Bind the symbols into `scratch.sizes`: first directly from the
    /// arguments that come with dimensions (checking each axis), then for
    /// flat ones by solving one unknown per argument at a time from its
    /// element count, until nothing changes; then check every argument.
    fn bind_into(
        &self,
        arg: &dyn Fn(usize) -> (usize, ArgDims),
        scratch: &mut Scratch,
    ) -> Result<(), String> {
        let (sizes, source) = (&mut scratch.sizes, &mut scratch.source);
        sizes.clear();
        sizes.resize(self.symbols.len(), None);
        source.clear();
        source.resize(self.symbols.len(), (0, None));
        for (i, want) in self.param_dims.iter().enumerate() {
            let (len, dims) = arg(i);
            let Some(got) = dims.get() else { continue };
            if got.len() != want.len() || got.iter().product::<usize>() != len {
                return Err(self.rank_error(i, got));
            }
            for (axis, (w, g)) in want.iter().zip(got).enumerate() {
                let expected = match *w {
                    DimRef::Const(c) => c,
                    // Computed once the others are bound; checked below.
                    DimRef::Sym(k) if self.derived.contains(&k) => continue,
                    DimRef::Sym(k) => match sizes[k] {
                        Some(v) => v,
                        None => {
                            sizes[k] = Some(*g as u64);
                            source[k] = (i, Some(axis));
                            continue;
                        }
                    },
                };
                if expected != *g as u64 {
                    return Err(self.axis_error(i, axis, got, sizes, source));
                }
            }
        }
        let mut progress = true;
        while progress {
            progress = false;
            for (i, dims) in self.param_dims.iter().enumerate() {
                let (n, shaped) = arg(i);
                if shaped.get().is_some() {
                    continue;
                }
                let mut known = 1u64;
                let mut unknown = None;
                let mut solvable = true;
                for d in dims {
                    match *d {
                        DimRef::Const(c) => known *= c,
                        DimRef::Sym(k) => match (sizes[k], unknown) {
                            (Some(v), _) => known *= v,
                            (None, _) if self.derived.contains(&k) => solvable = false,
                            (None, None) => unknown = Some(k),
                            (None, Some(_)) => solvable = false,
                        },
                    }
                }
                if let (Some(k), true) = (unknown, solvable) {
                    let n = n as u64;
                    if known != 0 && n.is_multiple_of(known) {
                        sizes[k] = Some(n / known);
                        source[k] = (i, None);
                        progress = true;
                    }
                }
            }
        }
        if !self.derived.is_empty() {
            self.bind_derived(arg, sizes, source)?;
        }
        for (i, dims) in self.param_dims.iter().enumerate() {
            let mut expected = Some(1u64);
            for d in dims {
                expected = match *d {
                    DimRef::Const(c) => expected.map(|e| e * c),
                    DimRef::Sym(k) => expected.zip(sizes[k]).map(|(e, v)| e * v),
                };
            }
            let len = arg(i).0;
            if expected != Some(len as u64) {
                return Err(self.bind_error(i, len, expected, sizes, source));
            }
        }
        if let Some(k) = sizes.iter().position(Option::is_none) {
            let f = &self.function;
            return Err(format!(
                "`{}`: no argument determines dimension `{}`",
                f.name, self.symbols[k]
            ));
        }
        Ok(())
    }

    /// Compute the derived symbols in `bound` (where `unset` marks a symbol
    /// not bound) from the others; the error says which slice is out of
    /// range.
    fn compute_derived(&self, bound: &mut [u64], unset: u64) -> Result<(), String> {
        for (&k, (plan, _)) in self.derived.iter().zip(&self.derived_plans) {
            let value = |i: usize| (bound[i] != unset || unset == 0).then_some(bound[i]);
            let v = match plan.as_ref().and_then(|p| p.eval(&value)) {
                Some(v) => v,
                // Not computable: the evaluation by name says why.
                None => {
                    let lookup = |name: &str| {
                        let i = self.symbols.iter().position(|x| x == name)?;
                        value(i)
                    };
                    derived_eval(&self.symbols[k], &lookup)?
                }
            };
            bound[k] = v;
        }
        Ok(())
    }

    /// The general solver's step for derived symbols: compute each from the
    /// bound ones, then check every argument axis that carries one. Errors
    /// name the arguments that bound the symbols a failing slice uses.
    fn bind_derived(
        &self,
        arg: &dyn Fn(usize) -> (usize, ArgDims),
        sizes: &mut [Option<u64>],
        source: &mut [(usize, Option<usize>)],
    ) -> Result<(), String> {
        let f = &self.function;
        for (&k, (plan, first)) in self.derived.iter().zip(&self.derived_plans) {
            let fast = plan.as_ref().and_then(|p| p.eval(&|i| sizes[i]));
            let lookup = |name: &str| {
                let i = self.symbols.iter().position(|x| x == name)?;
                sizes[i]
            };
            match fast
                .ok_or(())
                .or_else(|()| derived_eval(&self.symbols[k], &lookup))
            {
                Ok(v) => {
                    sizes[k] = Some(v);
                    // For messages: where its (first) base symbol came from.
                    if let Some(i) = *first {
                        source[k] = source[i];
                    }
                }
                Err(e) => {
                    let mut base = Vec::new();
                    crate::shape::derived::base_symbols(
                        &Dim::Sym(self.symbols[k].clone()),
                        &mut base,
                    );
                    let from: Vec<String> = base
                        .iter()
                        .filter_map(|b| {
                            let i = self.symbols.iter().position(|x| x == b)?;
                            let v = sizes[i]?;
                            Some(format!("`{b}` = {v} from {}", self.source_text(source[i])))
                        })
                        .collect();
                    return Err(format!("`{}`: {e}; {}", f.name, from.join(", ")));
                }
            }
        }
        for (i, want) in self.param_dims.iter().enumerate() {
            let dims = arg(i).1;
            let Some(got) = dims.get() else { continue };
            for (axis, (w, g)) in want.iter().zip(got).enumerate() {
                if let DimRef::Sym(k) = *w {
                    if self.derived.contains(&k) && sizes[k] != Some(*g as u64) {
                        return Err(self.axis_error(i, axis, got, sizes, source));
                    }
                }
            }
        }
        Ok(())
    }

    /// Where symbol `k`'s value came from, for messages.
    fn source_text(&self, src: (usize, Option<usize>)) -> String {
        let name = &self.function.param_names[src.0];
        match src.1 {
            Some(axis) => format!("axis {axis} of argument `{name}`"),
            None => format!("argument `{name}`"),
        }
    }

    /// The message for argument `i`, passed with dimensions `got`, whose rank
    /// (or element count) does not fit its parameter.
    fn rank_error(&self, i: usize, got: &[usize]) -> String {
        let f = &self.function;
        let shape = f.shape(f.params[i]);
        let what = match shape.rank() {
            0 => "a scalar".to_string(),
            r => format!("an array of rank {r}"),
        };
        format!(
            "argument `{}` of `{}`: expected {what} (shape {shape}), got shape {got:?}",
            f.param_names[i], f.name
        )
    }

    /// The message for argument `i` whose axis `axis` does not match.
    fn axis_error(
        &self,
        i: usize,
        axis: usize,
        got: &[usize],
        sizes: &[Option<u64>],
        source: &[(usize, Option<usize>)],
    ) -> String {
        let f = &self.function;
        let shape = f.shape(f.params[i]);
        let why = match &shape.0[axis] {
            Dim::Const(c) => format!("its size is fixed at {c}"),
            Dim::Sym(name) => {
                let k = self.symbols.iter().position(|x| x == name).expect("symbol");
                format!(
                    "`{name}` = {} from {}",
                    sizes[k].expect("bound"),
                    self.source_text(source[k])
                )
            }
        };
        format!(
            "argument `{}` of `{}`: expected shape {shape}, got {got:?}: axis {axis} is {}, but {why}",
            f.param_names[i], f.name, got[axis]
        )
    }

    /// The message for argument `i` whose length `got` does not fit its shape.
    fn bind_error(
        &self,
        i: usize,
        got: usize,
        expected: Option<u64>,
        sizes: &[Option<u64>],
        source: &[(usize, Option<usize>)],
    ) -> String {
        let f = &self.function;
        let shape = f.shape(f.params[i]);
        let mut bound = String::new();
        let mut unbound = None;
        for name in shape.symbols() {
            let k = self.symbols.iter().position(|x| x == name).expect("symbol");
            match sizes[k] {
                Some(v) => {
                    let _ = write!(
                        bound,
                        ", {name} = {v} (from {})",
                        self.source_text(source[k])
                    );
                }
                None => unbound = Some(name),
            }
        }
        match (expected, unbound) {
            (Some(e), _) => format!(
                "argument `{}` of `{}`: expected shape {shape}{bound} = {e} elements, got {got}",
                f.param_names[i], f.name
            ),
            (None, u) => format!(
                "argument `{}` of `{}`: cannot infer dimension `{}` of its shape {shape} from {got} elements{bound}",
                f.param_names[i],
                f.name,
                u.unwrap_or("?")
            ),
        }
    }

    /// Run the program on host buffers (one per parameter).
    pub fn run(&self, launcher: &dyn Launcher, args: &[Buffer]) -> Result<Vec<Buffer>, String> {
        self.check_schedule()?;
        // SAFETY: the pointers come from live buffers of the stated lengths,
        // and the schedule was checked just above.
        unsafe { self.execute(launcher, &raw_args(args)) }
    }

    /// Run the program. Each argument's dtype and length is checked against
    /// its parameter before any kernel runs.
    ///
    /// # Safety
    /// Every `RawArg` pointer must be valid for `len` reads of its `dtype`
    /// for the duration of the call, `launcher` must run the kernels of
    /// this program by index, and the program must pass `check_schedule`
    /// (every program `fuse` returns does).
    pub unsafe fn execute(
        &self,
        launcher: &dyn Launcher,
        args: &[RawArg],
    ) -> Result<Vec<Buffer>, String> {
        self.execute_then(launcher, args, |outs, _| {
            outs.iter_mut().map(take_buffer).collect()
        })
    }

    /// Like `execute`, but hands the outputs and their dimensions to `take`
    /// instead of returning them: what `take` leaves in place (e.g. after
    /// reading a scalar) is kept for reuse by later calls, so a call need not
    /// allocate at all.
    ///
    /// # Safety
    /// As for `execute`.
    pub unsafe fn execute_then<R>(
        &self,
        launcher: &dyn Launcher,
        args: &[RawArg],
        take: impl FnOnce(&mut [Buffer], &[ArgDims]) -> R,
    ) -> Result<R, String> {
        self.execute_into_then(launcher, args, &[], take)
    }

    /// Like `execute_then`, but result `i` is written into `dests[i]` when
    /// that is `Some` (the kernels write there directly; the buffer handed
    /// to `take` for it is empty); `dests` is empty or has one entry per
    /// result. Each destination's dtype and dimensions are checked against
    /// its result before any kernel runs; an error names the destination.
    /// With every array result in a destination, a call allocates nothing
    /// once its intermediate buffers are pooled.
    ///
    /// # Safety
    /// As for `execute`; and each destination's `ptr` must be valid for
    /// `len` writes of its dtype for the call and overlap no argument and
    /// no other destination.
    pub unsafe fn execute_into_then<R>(
        &self,
        launcher: &dyn Launcher,
        args: &[RawArg],
        dests: &[Option<RawDest>],
        take: impl FnOnce(&mut [Buffer], &[ArgDims]) -> R,
    ) -> Result<R, String> {
        self.check_arg_types(args.iter().map(|a| a.dtype))?;
        if !dests.is_empty() && dests.len() != self.outputs.len() {
            return Err(format!(
                "`{}` has {} results, got {} destinations",
                self.function.name,
                self.outputs.len(),
                dests.len()
            ));
        }
        let mut take = Some(take);
        let mut run = |scratch: &mut Scratch| {
            let r = self.execute_with(launcher, args, dests, scratch).map(|()| {
                let take = take.take().expect("a call runs once");
                take(&mut scratch.results, &scratch.result_dims)
            });
            scratch.recycle();
            r
        };
        // The per-thread scratch space, unless it is unavailable: already
        // borrowed (re-entered from inside a launch), or being or already
        // destroyed (called from a thread-local destructor or an `atexit`
        // handler during teardown, where `with` would panic and, in an
        // `extern "C"` callback, abort). Then the call uses fresh space.
        let pooled = SCRATCH.try_with(|cell| cell.try_borrow_mut().ok().map(|mut s| run(&mut s)));
        match pooled {
            Ok(Some(r)) => r,
            Ok(None) | Err(_) => run(&mut Scratch::default()),
        }
    }

    /// Bind, allocate, launch; leave the outputs in `scratch.results`.
    ///
    /// # Safety
    /// As for `execute`.
    unsafe fn execute_with(
        &self,
        launcher: &dyn Launcher,
        args: &[RawArg],
        dests: &[Option<RawDest>],
        scratch: &mut Scratch,
    ) -> Result<(), String> {
        if !self.bind_fast(args, scratch) {
            self.bind_into(&|i| (args[i].len, args[i].dims), scratch)?;
            let bound: Vec<u64> = scratch.sizes.iter().map(|s| s.expect("bound")).collect();
            scratch.bound = bound;
        }
        if self.windowed {
            self.check_bounds(&scratch.bound)?;
        }
        if !self.nonempty.is_empty() {
            self.check_nonempty(&scratch.bound)?;
        }
        scratch.lens.clear();
        for (factor, syms) in &self.numel {
            let n = syms.iter().fold(*factor, |acc, s| acc * scratch.bound[*s]);
            scratch.lens.push(n as usize);
        }
        scratch.result_dims.clear();
        for want in &self.out_dims {
            let mut d = [0usize; MAX_RANK];
            for (k, dim) in want.iter().enumerate().take(MAX_RANK) {
                d[k] = match *dim {
                    DimRef::Const(c) => c as usize,
                    DimRef::Sym(s) => scratch.bound[s] as usize,
                };
            }
            let dims = ArgDims::new(&d[..want.len().min(MAX_RANK)]).expect("rank");
            scratch.result_dims.push(dims);
        }
        // Every destination is checked before any kernel writes.
        let dest = |i: usize| dests.get(i).copied().flatten();
        for (i, b) in self.outputs.iter().enumerate() {
            if let Some(d) = dest(i) {
                self.check_dest(i, &d, &scratch.result_dims[i], scratch.lens[*b])?;
            }
        }
        // An owned output buffer lives in the first destination of a result
        // it is: the kernels write there.
        let n_owned = self.buffers.iter().filter(|b| b.param.is_none()).count();
        scratch.backing.clear();
        scratch.backing.resize(n_owned, None);
        for (i, b) in self.outputs.iter().enumerate() {
            if let (Some(_), Slot::Owned(o)) = (dest(i), self.slots[*b]) {
                scratch.backing[o].get_or_insert(i);
            }
        }
        scratch.owned.clear();
        for (b, info) in self.buffers.iter().enumerate() {
            if let Slot::Owned(o) = self.slots[b] {
                let buf = match scratch.backing[o] {
                    Some(_) => Buffer::F32(Vec::new()),
                    None => scratch.buffer(info.dtype, scratch.lens[b]),
                };
                scratch.owned.push(buf);
            }
        }
        if scratch.nested.len() < 3 * self.host_steps.len() {
            scratch
                .nested
                .resize_with(3 * self.host_steps.len(), Scratch::default);
        }
        let Scratch {
            bound: sizes,
            lens,
            ptrs,
            kernel_sizes,
            owned,
            results,
            backing,
            nested,
            step_args,
            step_outs,
            ..
        } = scratch;
        // Where buffer `b` is during this call, and its element count,
        // checked: the precondition every kernel and host step relies on is
        // that each buffer holds exactly its shape's element count under
        // this binding.
        let place = |b: usize, owned: &mut [Buffer]| -> Result<(*mut u8, usize), String> {
            let (ptr, len) = match self.slots[b] {
                Slot::Param(p) => (args[p].ptr as *mut u8, args[p].len),
                Slot::Owned(o) => match backing[o].and_then(dest) {
                    Some(d) => (d.ptr, d.len),
                    None => (owned[o].as_mut_ptr(), owned[o].len()),
                },
            };
            if len != lens[b] {
                return Err(format!("internal error: buffer {b} has {len} elements"));
            }
            Ok((ptr, len))
        };
        let mut next_step = 0;
        for l in 0..=self.launches.len() {
            while next_step < self.host_steps.len() && self.host_steps[next_step].at() == l {
                let j = next_step;
                next_step += 1;
                let step = &self.host_steps[j];
                step_args.clear();
                for (b, dims) in step.args().iter().zip(&self.host_step_dims[j]) {
                    let (ptr, len) = place(*b, owned)?;
                    step_args.push(RawArg {
                        dtype: self.buffers[*b].dtype,
                        ptr,
                        len,
                        dims: host_step::dims_under(dims, sizes),
                    });
                }
                step_outs.clear();
                for b in step.outs() {
                    step_outs.push(place(*b, owned)?);
                }
                // SAFETY: the operands point into this call's arguments
                // and buffers, valid for their element counts (checked by
                // `place`); the outputs are buffers this call owns, or the
                // caller's destinations, distinct from each other and from
                // the operands (`check_schedule`, run once per program by
                // the callers, and the caller's guarantee for destinations).
                unsafe {
                    self.run_host_step(
                        j,
                        launcher,
                        step_args,
                        step_outs,
                        &mut nested[3 * j..3 * j + 3],
                    )?
                };
            }
            let Some(launch) = self.launches.get(l) else {
                break;
            };
            ptrs.clear();
            kernel_sizes.clear();
            kernel_sizes.extend(self.launch_sizes[l].iter().map(|s| sizes[*s] as i64));
            for b in &launch.args {
                ptrs.push(place(*b, owned)?.0);
            }
            // SAFETY: each pointer is valid for its buffer's element count
            // (checked just above); fusion only emits loads within a buffer's
            // shape and stores within the output's shape (`check_bounds`,
            // run in tests, and before any launch of every call of a
            // program with offset loads or region stores, whose extents
            // depend on the IR's stated slice shapes); a launch writes only
            // buffers this call owns, or destinations the caller owns, which
            // are distinct from each other and from the arguments and never
            // also passed as its inputs (`check_schedule`, run once per
            // program by the callers); the caller guarantees `RawArg`
            // pointers are valid for `len` elements and destinations for
            // `len` writes, overlapping nothing.
            unsafe { launcher.launch(launch.kernel, ptrs, kernel_sizes) };
        }
        results.clear();
        for (i, b) in self.outputs.iter().enumerate() {
            // Where the result's elements are when the kernels are done:
            // in a destination, when a result shares a buffer with an
            // earlier one.
            let in_dest = match self.slots[*b] {
                Slot::Owned(o) => backing[o].filter(|k| *k != i).and_then(dest),
                Slot::Param(_) => None,
            };
            if let Some(d) = dest(i) {
                let written_here =
                    matches!(self.slots[*b], Slot::Owned(o) if backing[o] == Some(i));
                if !written_here {
                    let src = match (self.slots[*b], in_dest) {
                        (_, Some(k)) => k.ptr as *const u8,
                        (Slot::Param(p), None) => args[p].ptr,
                        (Slot::Owned(o), None) => owned[o].as_ptr(),
                    };
                    // SAFETY: `src` holds `d.len` elements of `d.dtype`
                    // (checked against the result's shape and type above),
                    // and the destination overlaps no argument, other
                    // destination or buffer of this call (the caller's
                    // guarantee; owned buffers are this call's own).
                    unsafe {
                        std::ptr::copy_nonoverlapping(src, d.ptr, d.len * d.dtype.size_bytes())
                    };
                }
                results.push(Buffer::F32(Vec::new()));
                continue;
            }
            if let Some(k) = in_dest {
                let mut out = Buffer::zeros(k.dtype, k.len);
                // SAFETY: as above; `out` is a fresh buffer of `k.len` elements.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        k.ptr as *const u8,
                        out.as_mut_ptr(),
                        k.len * k.dtype.size_bytes(),
                    )
                };
                results.push(out);
                continue;
            }
            let out = match self.slots[*b] {
                Slot::Param(p) => {
                    let a = args[p];
                    // SAFETY: the caller guarantees `a.ptr` is valid for `a.len` elements of `a.dtype`.
                    let vals: Vec<f64> = (0..a.len)
                        .map(|i| unsafe { crate::buffer::read_raw(a.ptr, a.dtype, i) })
                        .collect();
                    Buffer::from_f64(a.dtype, &vals)
                }
                // An output returned twice is copied; otherwise it is moved out.
                Slot::Owned(o) if self.outputs[i + 1..].contains(b) => owned[o].clone(),
                Slot::Owned(o) => take_buffer(&mut owned[o]),
            };
            results.push(out);
        }
        Ok(())
    }

    /// Check destination `d` of result `i`, whose dimensions under this
    /// call's binding are `dims` and element count `len`.
    fn check_dest(&self, i: usize, d: &RawDest, dims: &ArgDims, len: usize) -> Result<(), String> {
        let f = &self.function;
        let want = self.buffers[self.outputs[i]].dtype;
        if d.dtype != want {
            return Err(format!(
                "destination `{}` of `{}`: result {i} holds {want} elements, the destination holds {}",
                d.name, f.name, d.dtype
            ));
        }
        let got = d.dims.get();
        if got != dims.get() || d.len != len {
            let got = match got {
                Some(g) => format!("{g:?}"),
                None => format!("{} elements", d.len),
            };
            return Err(format!(
                "destination `{}` of `{}`: result {i} has shape {:?} ({}), the destination has shape {got}",
                d.name,
                f.name,
                dims.get().unwrap_or(&[]),
                f.shape(f.outs[i])
            ));
        }
        Ok(())
    }

    /// Check, for given sizes, that every load of every launch stays within
    /// the buffer it reads and every output buffer is the kernel's output size.
    pub fn check_bounds(&self, sizes: &[u64]) -> Result<(), String> {
        for (l, launch) in self.launches.iter().enumerate() {
            let k = &self.kernels[launch.kernel];
            let ks: Vec<i64> = self.launch_sizes[l]
                .iter()
                .map(|s| sizes[*s] as i64)
                .collect();
            for (a, b) in launch.args.iter().enumerate() {
                let len = self.buffer_len(*b, sizes);
                let need = if k.args[a].output {
                    k.output_len(&ks)
                } else {
                    k.input_extent(a, &ks)
                };
                let whole = k.args[a].output && k.region().is_none();
                if need > len || (whole && need != len) {
                    return Err(format!(
                        "launch {l} ({}): arg {a} needs {need} elements, buffer has {len}",
                        k.name
                    ));
                }
            }
        }
        Ok(())
    }

    /// Whether some max/min reduction would be over no elements under the
    /// bound `sizes` (see `check_nonempty`).
    pub fn has_empty_reduction(&self, sizes: &[u64]) -> bool {
        self.nonempty.iter().any(|(_, refs)| {
            refs.iter().any(|d| match *d {
                DimRef::Const(c) => c == 0,
                DimRef::Sym(k) => sizes.get(k).is_some_and(|v| *v == 0),
            })
        })
    }

    /// A max or min (or argmax, argmin) over an axis of size 0 is an error
    /// naming the function, the reduction's operand (an argument, or the
    /// argument the empty axis's size comes from) and the axis, as JAX
    /// raises "zero-size array to reduction operation max which has no
    /// identity". sum, mean, prod, logsumexp and softmax are not affected.
    pub fn check_nonempty(&self, sizes: &[u64]) -> Result<(), String> {
        let f = &self.function;
        for (n, refs) in &self.nonempty {
            for (j, d) in refs.iter().enumerate() {
                let empty = match *d {
                    DimRef::Const(c) => c == 0,
                    DimRef::Sym(k) => sizes.get(k).is_some_and(|v| *v == 0),
                };
                if !empty {
                    continue;
                }
                let axis = n.axes[j];
                let what = match (n.param, &n.dims[j]) {
                    (Some(p), _) => format!("axis {axis} of argument `{}`", f.param_names[p]),
                    (None, Dim::Sym(s)) => {
                        // The first argument with an axis of this size.
                        let from = f.params.iter().enumerate().find_map(|(i, p)| {
                            f.shape(*p)
                                .0
                                .iter()
                                .position(|x| *x == Dim::Sym(s.clone()))
                                .map(|a| format!(" (axis {a} of argument `{}`)", f.param_names[i]))
                        });
                        format!(
                            "axis {axis} of a value, of size `{s}`{}",
                            from.unwrap_or_default()
                        )
                    }
                    (None, Dim::Const(_)) => format!("axis {axis} of a value"),
                };
                return Err(format!(
                    "`{}`: {} over {what}, which has size 0: a {} over no elements has no identity (JAX raises: zero-size array to reduction operation {} which has no identity)",
                    f.name, n.op, n.op, n.op
                ));
            }
        }
        Ok(())
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
    fn schedule_text(&self, s: &mut String) {
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

/// Runs kernels with the kernel interpreter.
pub struct InterpLauncher<'a>(pub &'a [Kernel]);

impl Launcher for InterpLauncher<'_> {
    unsafe fn launch(&self, kernel: usize, args: &[*mut u8], sizes: &[i64]) {
        interp::run_raw(&self.0[kernel], args, sizes)
    }
}

/// Runs compiled CPU kernels from a table of function pointers.
pub struct FnLauncher<'a>(pub &'a [KernelFn]);

impl Launcher for FnLauncher<'_> {
    unsafe fn launch(&self, kernel: usize, args: &[*mut u8], sizes: &[i64]) {
        (self.0[kernel])(args.as_ptr(), sizes.as_ptr())
    }
}

/// Arguments for `Program::execute` borrowed from host buffers.
pub fn raw_args(bufs: &[Buffer]) -> Vec<RawArg> {
    bufs.iter()
        .map(|b| RawArg::flat(b.dtype(), b.as_ptr(), b.len()))
        .collect()
}

/// Work out, from the shapes alone, an order in which each symbol is the
/// only unknown dimension of some parameter. `None` if a symbol is left over.
fn static_solve_order(
    param_dims: &[Vec<DimRef>],
    n_symbols: usize,
    derived: &[usize],
) -> Option<Vec<SolveStep>> {
    // Derived symbols are computed after the order has run.
    let mut known: Vec<bool> = (0..n_symbols).map(|k| derived.contains(&k)).collect();
    let mut order = Vec::new();
    let mut progress = true;
    while progress {
        progress = false;
        for (param, dims) in param_dims.iter().enumerate() {
            let mut factor = 1u64;
            let mut others = Vec::new();
            let mut unknown: Vec<usize> = Vec::new();
            for d in dims {
                match *d {
                    DimRef::Const(c) => factor *= c,
                    DimRef::Sym(k) if known[k] => others.push(k),
                    DimRef::Sym(k) => unknown.push(k),
                }
            }
            if let [sym] = unknown[..] {
                known[sym] = true;
                order.push(SolveStep {
                    sym,
                    param,
                    factor,
                    others,
                });
                progress = true;
            }
        }
    }
    known.iter().all(|k| *k).then_some(order)
}

/// The value of the derived symbol `name` given the bound ones.
fn derived_eval(name: &str, lookup: &dyn Fn(&str) -> Option<u64>) -> Result<u64, String> {
    crate::shape::derived::eval(&Dim::Sym(name.to_string()), lookup)
}
