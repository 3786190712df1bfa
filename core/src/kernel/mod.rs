//! The kernel IR: backend-neutral loop nests over symbolic sizes.
//!
//! A kernel iterates over a rectangular `domain` (outermost first). Each
//! iteration evaluates the SSA instructions `insts` (loads, constants,
//! arithmetic). When `reduce_dims == 0` the kernel is a *map*: every stored
//! value is written at the row-major position of the iteration (or, for a
//! store into a `Region`, at the region's offset and strides). Otherwise the
//! trailing `reduce_dims` axes are summed over: every stored value is the sum
//! of the values over those axes, computed with error O(log n)·eps in the
//! value's type (n the number of terms), written at the row-major position of
//! the outer axes. The order of additions is otherwise the backend's choice
//! (blocked, vectorized, tree-shaped across threads); a plain running sum,
//! whose error grows like n·eps, does not meet it (in `f32` it stops growing
//! at 2^24 when adding ones). The kernel interpreter sums pairwise in the
//! value's type ([`PairwiseSum`]); a sum of no terms is zero.
//!
//! A *scan* kernel (`scan` set; a map) visits its domain axis `scan.axis` in
//! order (from the last coordinate down when `reverse`), every other
//! coordinate independently: the `Carry` instruction is the state before the
//! step, 0 at the first position of each line along the axis and the value
//! of `scan.next` at the previous position otherwise. Backends run it as a
//! sequential loop per line (on the CPU the scan axis innermost, in PTX one
//! thread per line).
//!
//! Calling convention shared by every backend (CPU object code, JIT, PTX
//! launches go through the same order): buffers are passed in `args` order
//! (inputs, then outputs), then the values of the size symbols in `sizes`
//! order. On the CPU that is
//! `unsafe extern "C" fn(args: *const *mut u8, sizes: *const i64)`.

pub mod fusion;
pub mod interp;
pub mod matmul;
mod verify;

use crate::dtype::DType;
use crate::ops::elementwise::{BinaryOp, CmpOp, UnaryOp};
use crate::shape::Size;
use std::fmt::{self, Write as _};

/// The signature of a compiled CPU kernel (see the module docs).
pub type KernelFn = unsafe extern "C" fn(args: *const *mut u8, sizes: *const i64);

/// Index of an instruction in `Kernel::insts`; the value it defines.
pub type ValueId = usize;

/// A kernel is well formed when `Kernel::verify` accepts it (the invariants
/// every executor relies on; see `kernel::verify`).
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// A symbol name derived from the kernel's text (see `Kernel::symbol`).
    pub name: String,
    pub args: Vec<KernelArg>,
    /// Size symbols, in the order their values are passed.
    pub sizes: Vec<String>,
    /// Loop extents, outermost first. Empty for a kernel that runs once.
    pub domain: Vec<Size>,
    /// How many trailing axes of `domain` are reduced over (0 = map).
    pub reduce_dims: usize,
    /// How a reduction combines the values over those axes; `Sum` for maps
    /// (which ignore it).
    pub reduce: Reduce,
    pub insts: Vec<Inst>,
    pub stores: Vec<Store>,
    /// A scan kernel's carried axis (see the module docs).
    pub scan: Option<Scan>,
}

/// The carried state of a scan kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scan {
    /// The domain axis visited in order.
    pub axis: usize,
    /// From the last coordinate down.
    pub reverse: bool,
    /// The state after the step, read by the next position's `Carry`.
    pub next: ValueId,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelArg {
    /// Element type in memory.
    pub dtype: DType,
    pub output: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    /// Type of the value: a float type or `Bool` (never an integer). Fusion
    /// gives `F32`, `F64` or `Bool` (half values compute in `f32`); a value
    /// of a half type is rounded to it after the instruction, which the
    /// interpreter and PTX lower and the CPU backend does not.
    pub ty: DType,
    pub kind: InstKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum InstKind {
    /// Load element `offset + sum_k coord[k] * strides[k]` of input `arg`,
    /// where `offset` is a sum of sizes (empty: 0; a slice's start);
    /// `strides.len() == domain.len()`. Half types widen to `f32`.
    Load {
        arg: usize,
        strides: Vec<Size>,
        offset: Vec<Size>,
    },
    Const(f64),
    Unary(UnaryOp, ValueId),
    Binary(BinaryOp, ValueId, ValueId),
    Cmp(CmpOp, ValueId, ValueId),
    /// `if cond { a } else { b }`.
    Select(ValueId, ValueId, ValueId),
    /// The value of a size (a product of size symbols) as a float of the
    /// inst's type; its symbols are in the kernel's `sizes`.
    Size(Size),
    /// The iteration's coordinate along domain axis `axis` as a float of the
    /// inst's type (rounded to it, like any value).
    Index(usize),
    /// An indirect load (a gather): like `Load`, plus `i · stride` where `i`
    /// is the value of inst `index` (an integer buffer loaded as `f64`,
    /// exact below 2^53), with `i` first wrapped once if negative (`i +
    /// bound`) and then clamped into `0..bound` (`ops::gather::clamp_index`,
    /// JAX's indexing and gather default). An empty axis
    /// (`bound == 0`) reads nothing and gives 0, so no index, however
    /// computed, reads outside the buffer. A scatter store clamps the same way.
    LoadIndexed {
        arg: usize,
        strides: Vec<Size>,
        offset: Vec<Size>,
        index: ValueId,
        stride: Size,
        bound: Size,
    },
    /// In a scan kernel: the state before this step (see the module docs).
    Carry,
}

/// The indexed part of a scatter-add store (see `Region::scatter`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scatter {
    /// The inst whose value is the index (as in `InstKind::LoadIndexed`).
    pub index: ValueId,
    pub stride: Size,
    pub bound: Size,
}

/// How a reduction kernel combines the values over its reduced axes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Reduce {
    /// The sum (see the module docs for its accuracy).
    #[default]
    Sum,
    /// The largest value, NaN-propagating; -inf over none.
    Max,
    /// The smallest value, NaN-propagating; +inf over none.
    Min,
    /// The product, in any order (relative error about n·eps); 1 over none.
    Prod,
}

impl Reduce {
    pub fn name(self) -> &'static str {
        match self {
            Reduce::Sum => "sum",
            Reduce::Max => "max",
            Reduce::Min => "min",
            Reduce::Prod => "prod",
        }
    }

    /// The result over no values, and the value an accumulator starts from.
    pub fn identity(self) -> f64 {
        match self {
            Reduce::Sum => 0.0,
            Reduce::Max => f64::NEG_INFINITY,
            Reduce::Min => f64::INFINITY,
            Reduce::Prod => 1.0,
        }
    }

    /// The binary op that combines two partial results.
    pub fn op(self) -> BinaryOp {
        match self {
            Reduce::Sum => BinaryOp::Add,
            Reduce::Max => BinaryOp::Max,
            Reduce::Min => BinaryOp::Min,
            Reduce::Prod => BinaryOp::Mul,
        }
    }

    /// `acc` combined with the next value `x` (unrounded).
    pub fn combine(self, acc: f64, x: f64) -> f64 {
        self.op().eval(acc, x)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Store {
    /// An output arg.
    pub arg: usize,
    pub value: ValueId,
    /// Where a map stores (`None`: the row-major position of the iteration).
    /// Every store of a kernel has the same region.
    pub region: Option<Region>,
}

/// A strided part of a map kernel's output: the iteration at `coord` writes
/// element `offset + sum_k coord[k] * strides[k]` (a part of a
/// concatenation, or the operand's positions in a pad). Several launches
/// write disjoint regions of one buffer (see `Program::check_schedule`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// A sum of sizes.
    pub offset: Vec<Size>,
    /// One per domain axis.
    pub strides: Vec<Size>,
    /// A scatter-add: the store *adds* its value at `i · stride` past the
    /// region's position, `i` the value of `index`, when `0 <= i < bound`;
    /// other indices add nothing. Several iterations may add to one element:
    /// the CPU and the interpreters add in iteration order (deterministic),
    /// PTX adds with atomics in no fixed order.
    pub scatter: Option<Scatter>,
}

/// The value of a sum of sizes (an offset) under `eval`.
pub fn eval_sum(terms: &[Size], eval: impl Fn(&Size) -> u64) -> u64 {
    terms.iter().map(eval).sum()
}

/// `load a<arg> strides[..]` and its offset, if any: a load without one
/// writes nothing, so earlier kernels keep their text and symbol.
fn load_text(arg: usize, strides: &[Size], offset: &[Size]) -> String {
    let st: Vec<String> = strides.iter().map(|x| x.to_string()).collect();
    let off = match offset.is_empty() {
        true => String::new(),
        false => format!(" offset {}", sum_text(offset)),
    };
    format!("load a{arg} strides[{}]{off}", st.join(", "))
}

fn sum_text(terms: &[Size]) -> String {
    let t: Vec<String> = terms.iter().map(|x| x.to_string()).collect();
    t.join("+")
}

impl Kernel {
    /// Number of outer (non-reduced) axes.
    pub fn outer_dims(&self) -> usize {
        self.domain.len() - self.reduce_dims
    }

    pub fn is_reduction(&self) -> bool {
        self.reduce_dims > 0
    }

    /// Elements written to each output (for a region store: one past the
    /// largest index written).
    pub fn output_len(&self, sizes: &[i64]) -> usize {
        let extents = self.domain[..self.outer_dims()]
            .iter()
            .map(|s| self.eval_size(s, sizes) as usize);
        match self.region() {
            None => extents.product(),
            Some(r) => {
                let extents: Vec<usize> = extents.collect();
                if extents.contains(&0) {
                    return 0;
                }
                let mut last: u64 = r
                    .strides
                    .iter()
                    .zip(&extents)
                    .map(|(s, e)| self.eval_size(s, sizes) * (*e as u64 - 1))
                    .sum();
                if let Some(sc) = &r.scatter {
                    let bound = self.eval_size(&sc.bound, sizes);
                    if bound == 0 {
                        return 0;
                    }
                    last += self.eval_size(&sc.stride, sizes) * (bound - 1);
                }
                (self.eval_offset(&r.offset, sizes) + last) as usize + 1
            }
        }
    }

    /// The region every store writes, if the kernel stores into one.
    pub fn region(&self) -> Option<&Region> {
        self.stores.first().and_then(|s| s.region.as_ref())
    }

    /// Value of a sum of sizes under the kernel's size arguments.
    pub fn eval_offset(&self, terms: &[Size], sizes: &[i64]) -> u64 {
        eval_sum(terms, |s| self.eval_size(s, sizes))
    }

    /// Value of a size under the kernel's size arguments.
    pub fn eval_size(&self, s: &Size, sizes: &[i64]) -> u64 {
        s.eval(|name| {
            let i = self
                .sizes
                .iter()
                .position(|n| n == name)
                .expect("size symbol of kernel");
            sizes[i] as u64
        })
    }

    /// Number of elements input `arg` must hold for the loads to stay in
    /// bounds: one past the largest index any load of it reads.
    pub fn input_extent(&self, arg: usize, sizes: &[i64]) -> usize {
        let extents: Vec<u64> = self
            .domain
            .iter()
            .map(|d| self.eval_size(d, sizes))
            .collect();
        if extents.contains(&0) {
            return 0;
        }
        let mut need = 0usize;
        for inst in &self.insts {
            let (a, strides, offset, indexed) = match &inst.kind {
                InstKind::Load {
                    arg,
                    strides,
                    offset,
                } => (arg, strides, offset, 0),
                InstKind::LoadIndexed {
                    arg,
                    strides,
                    offset,
                    stride,
                    bound,
                    ..
                } => {
                    let bound = self.eval_size(bound, sizes);
                    if bound == 0 {
                        // Reads nothing.
                        continue;
                    }
                    (
                        arg,
                        strides,
                        offset,
                        self.eval_size(stride, sizes) * (bound - 1),
                    )
                }
                _ => continue,
            };
            if *a == arg {
                let last: u64 = strides
                    .iter()
                    .zip(&extents)
                    .map(|(s, e)| self.eval_size(s, sizes) * (e - 1))
                    .sum();
                let last = last + self.eval_offset(offset, sizes) + indexed;
                need = need.max(last as usize + 1);
            }
        }
        need
    }

    /// Check a call against the calling convention: a well-formed kernel
    /// (`Kernel::verify`), one buffer per arg, each given as (element type,
    /// element count), holding the elements the kernel reads or writes; one
    /// non-negative value per size symbol.
    pub fn check_call(
        &self,
        bufs: impl ExactSizeIterator<Item = (DType, usize)>,
        sizes: &[i64],
    ) -> Result<(), String> {
        if bufs.len() != self.args.len() {
            return Err(format!(
                "kernel takes {} buffers, got {}",
                self.args.len(),
                bufs.len()
            ));
        }
        if sizes.len() != self.sizes.len() || sizes.iter().any(|s| *s < 0) {
            return Err(format!(
                "kernel takes {} non-negative sizes, got {sizes:?}",
                self.sizes.len()
            ));
        }
        self.verify()?;
        for (i, (a, (dtype, len))) in self.args.iter().zip(bufs).enumerate() {
            if a.dtype != dtype {
                return Err(format!("buffer {i}: expected {}, got {dtype}", a.dtype));
            }
            let need = if a.output {
                self.output_len(sizes)
            } else {
                self.input_extent(i, sizes)
            };
            if len < need {
                return Err(format!("buffer {i}: needs {need} elements, has {len}"));
            }
        }
        Ok(())
    }

    /// Whether inst `v` is a plain load of an integer buffer as `f64`: what
    /// an indexed load or store takes its index from.
    pub fn is_index_value(&self, v: ValueId) -> bool {
        match self.insts.get(v) {
            Some(Inst {
                ty: DType::F64,
                kind: InstKind::Load { arg, .. },
            }) => self
                .args
                .get(*arg)
                .is_some_and(|a| !a.output && matches!(a.dtype, DType::I32 | DType::I64)),
            _ => false,
        }
    }

    /// Whether the kernel reads or writes at positions read from memory.
    pub fn is_indexed(&self) -> bool {
        self.region().is_some_and(|r| r.scatter.is_some())
            || self
                .insts
                .iter()
                .any(|i| matches!(i.kind, InstKind::LoadIndexed { .. }))
    }

    /// The canonical text, without the name: the kernel's identity.
    pub fn body_text(&self) -> String {
        let mut s = String::new();
        let args: Vec<String> = self
            .args
            .iter()
            .map(|a| format!("{}{}", if a.output { "out " } else { "" }, a.dtype))
            .collect();
        let domain: Vec<String> = self.domain.iter().map(|d| d.to_string()).collect();
        // A sum writes no combiner, so kernels from before max/min keep
        // their text and symbol.
        let combiner = match self.reduce {
            Reduce::Sum => String::new(),
            r => format!(" {}", r.name()),
        };
        let _ = writeln!(
            s,
            "({}) sizes({}) domain[{}] reduce={}{combiner}",
            args.join(", "),
            self.sizes.join(", "),
            domain.join(", "),
            self.reduce_dims
        );
        for (i, inst) in self.insts.iter().enumerate() {
            let _ = write!(s, "  v{i}: {} = ", inst.ty);
            let _ = match &inst.kind {
                InstKind::Load {
                    arg,
                    strides,
                    offset,
                } => writeln!(s, "{}", load_text(*arg, strides, offset)),
                InstKind::Const(c) => writeln!(s, "const {c:?}"),
                InstKind::Unary(op, a) => writeln!(s, "{} v{a}", op.name()),
                InstKind::Binary(op, a, b) => writeln!(s, "{} v{a} v{b}", op.name()),
                InstKind::Cmp(op, a, b) => writeln!(s, "{} v{a} v{b}", op.name()),
                InstKind::Select(c, a, b) => writeln!(s, "select v{c} v{a} v{b}"),
                InstKind::Size(z) => writeln!(s, "size {z}"),
                InstKind::Index(axis) => writeln!(s, "index {axis}"),
                InstKind::LoadIndexed {
                    arg,
                    strides,
                    offset,
                    index,
                    stride,
                    bound,
                } => writeln!(
                    s,
                    "{} at v{index}*{stride} below {bound}",
                    load_text(*arg, strides, offset)
                ),
                InstKind::Carry => writeln!(s, "carry"),
            };
        }
        // Only a scan writes a line, so other kernels keep their symbols.
        if let Some(sc) = &self.scan {
            let dir = if sc.reverse { " reverse" } else { "" };
            let _ = writeln!(s, "  scan axis {}{dir} next v{}", sc.axis, sc.next);
        }
        for st in &self.stores {
            let _ = write!(s, "  store a{} v{}", st.arg, st.value);
            if let Some(r) = &st.region {
                let st: Vec<String> = r.strides.iter().map(|x| x.to_string()).collect();
                let _ = write!(
                    s,
                    " region offset {} strides[{}]",
                    sum_text(&r.offset),
                    st.join(", ")
                );
                if let Some(sc) = &r.scatter {
                    let _ = write!(s, " add at v{}*{} below {}", sc.index, sc.stride, sc.bound);
                }
            }
            s.push('\n');
        }
        s
    }

    /// A symbol name derived from the kernel's text, so that every tool that
    /// builds the same kernel (the macro, the build helper, the JIT) names it
    /// the same way.
    pub fn symbol(&self) -> String {
        format!("oxla_k_{:016x}", fnv1a64(self.body_text().as_bytes()))
    }
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kernel {} {}", self.name, self.body_text())
    }
}

/// 64-bit FNV-1a: a stable hash (the same in every process and version).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Pairwise summation, one value at a time: the sum of `n` values is built as
/// a balanced binary tree of additions over consecutive runs of 1, 2, 4, …
/// values, so its rounding error grows like log2(n)·eps instead of n·eps, in
/// O(log n) memory. `round` is applied after every addition (the type the
/// sum is computed in). The kernel interpreter and the reference interpreter
/// both use it, so their `f64` sums agree bit for bit.
#[derive(Clone, Debug, Default)]
pub struct PairwiseSum {
    /// Partial sums of runs of strictly decreasing power-of-two lengths.
    runs: Vec<(f64, u64)>,
}

impl PairwiseSum {
    pub fn new() -> PairwiseSum {
        PairwiseSum::default()
    }

    /// Add the next term.
    pub fn push(&mut self, v: f64, round: impl Fn(f64) -> f64) {
        let (mut sum, mut len) = (v, 1u64);
        // Merge equal-length runs, like carries in a binary counter.
        while let Some(&(s, l)) = self.runs.last() {
            if l != len {
                break;
            }
            self.runs.pop();
            sum = round(s + sum);
            len += l;
        }
        self.runs.push((sum, len));
    }

    /// The sum of every term pushed (zero for none); the shortest runs are
    /// added first.
    pub fn total(&self, round: impl Fn(f64) -> f64) -> f64 {
        let mut it = self.runs.iter().rev();
        match it.next() {
            None => 0.0,
            Some(&(first, _)) => it.fold(first, |acc, &(s, _)| round(s + acc)),
        }
    }
}

/// Neumaier's compensated sum in `f64`: error about eps·|sum| + n·eps²·Σ|x|,
/// nearly independent of n. Not used by any executor; it is the yardstick
/// the tests and the GPU check measure summation error against.
pub fn compensated_sum(xs: impl IntoIterator<Item = f64>) -> f64 {
    let (mut s, mut c) = (0.0f64, 0.0f64);
    for x in xs {
        let t = s + x;
        c += if s.abs() >= x.abs() {
            (s - t) + x
        } else {
            (x - t) + s
        };
        s = t;
    }
    s + c
}
