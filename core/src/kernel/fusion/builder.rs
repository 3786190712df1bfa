//! `KernelBuilder`: one kernel, the expression DAG of a materialized
//! value over its domain, with loads of the materialized values it reads
//! (coordinate maps, strides, offsets, indexed loads).

use super::materialize::unit_remap;
use crate::ir::{Function, Var};
use crate::kernel::{Inst, InstKind, Kernel, KernelArg, Reduce, Region, Scan, Store, ValueId};
use crate::ops::elementwise::BinaryOp;
use crate::ops::{DotDims, FusionKind, Op};
use crate::shape::{Dim, Size};
use std::collections::{BTreeSet, HashMap};

/// The coordinate-map entry of an axis whose coordinate is always 0.
pub const ZERO: usize = usize::MAX;

/// For a gather's (or scatter-add's) indices: the domain axis of each index
/// axis, given `cmap` of the gathered value's axes (the shared leading
/// axes are the value's first; the others sit at `axis..`).
pub(super) fn index_cmap(
    f: &Function,
    idx: Var,
    axis: usize,
    batch: usize,
    cmap: &[usize],
) -> Vec<usize> {
    (0..f.shape(idx).rank())
        .map(|k| {
            if k < batch {
                cmap[k]
            } else {
                cmap[axis + k - batch]
            }
        })
        .collect()
}

/// `sum_k starts[k] * strides[k]` as a sum of sizes (zero terms dropped).
pub(super) fn offset_terms(starts: &[Dim], strides: &[Size]) -> Vec<Size> {
    starts
        .iter()
        .zip(strides)
        .map(|(a, s)| Size::of(a).mul(s))
        .filter(|t| !t.is_zero())
        .collect()
}

/// Builds one kernel: the expression DAG of a materialized value, with loads
/// of the materialized values it reads.
pub(super) struct KernelBuilder<'a> {
    f: &'a Function,
    defs: &'a [Option<usize>],
    materialized: &'a [bool],
    pub(super) domain: Vec<Size>,
    pub(super) reduce_dims: usize,
    reduce: Reduce,
    scan: Option<Scan>,
    insts: Vec<Inst>,
    /// Materialized values read, in arg order.
    inputs: Vec<Var>,
    memo: HashMap<(Var, Vec<usize>), ValueId>,
    /// Inside a `convert` to a float: integer buffers load widened to it.
    widen_to: Option<crate::dtype::DType>,
}

impl<'a> KernelBuilder<'a> {
    pub(super) fn new(
        f: &'a Function,
        defs: &'a [Option<usize>],
        materialized: &'a [bool],
    ) -> Self {
        KernelBuilder {
            f,
            defs,
            materialized,
            domain: Vec::new(),
            reduce_dims: 0,
            reduce: Reduce::Sum,
            scan: None,
            insts: Vec::new(),
            inputs: Vec::new(),
            memo: HashMap::new(),
            widen_to: None,
        }
    }

    /// A reduction of `x` over `axes` (increasing): the kept axes outermost
    /// in order, then the reduced ones.
    pub(super) fn reduction(&mut self, x: Var, axes: &[usize], reduce: Reduce) -> ValueId {
        let shape = self.f.shape(x);
        let rank = shape.rank();
        let order: Vec<usize> = (0..rank)
            .filter(|a| !axes.contains(a))
            .chain(axes.iter().copied())
            .collect();
        let mut cmap = vec![0; rank];
        for (pos, axis) in order.iter().enumerate() {
            cmap[*axis] = pos;
        }
        self.domain = order.iter().map(|a| Size::of(&shape.0[*a])).collect();
        self.reduce_dims = axes.len();
        if !axes.is_empty() {
            self.reduce = reduce;
        }
        self.value(x, &cmap)
    }

    /// `linear_scan(a, b)` (equation `e`): a scan kernel over the result's
    /// shape whose state is `a·carry + b` and whose stored value is the
    /// carry, the state before the step.
    pub(super) fn linear_scan(
        &mut self,
        e: &crate::ir::Eqn,
        axis: usize,
        reverse: bool,
    ) -> ValueId {
        let shape = self.f.shape(e.out());
        self.domain = shape.0.iter().map(Size::of).collect();
        let cmap: Vec<usize> = (0..shape.rank()).collect();
        let dtype = self.f.dtype(e.out());
        let a = self.value(e.ins[0], &cmap);
        let b = self.value(e.ins[1], &cmap);
        let carry = self.inst(dtype, InstKind::Carry);
        let step = self.inst(dtype, InstKind::Binary(BinaryOp::Mul, a, carry));
        let next = self.inst(dtype, InstKind::Binary(BinaryOp::Add, step, b));
        self.scan = Some(Scan {
            axis,
            reverse,
            next,
        });
        carry
    }

    /// `dot_general(a, b)`: the domain is [batch axes, lhs free axes, rhs
    /// free axes, contracted axes (in `lhs_contract` order)], the contracted
    /// ones summed, and the body is one product.
    pub(super) fn dot_general(
        &mut self,
        a: Var,
        b: Var,
        d: &DotDims,
        dtype: crate::dtype::DType,
    ) -> ValueId {
        let (sa, sb) = (self.f.shape(a).clone(), self.f.shape(b).clone());
        let (mut ca, mut cb) = (vec![0; sa.rank()], vec![0; sb.rank()]);
        let mut domain = Vec::new();
        for (x, y) in d.lhs_batch.iter().zip(&d.rhs_batch) {
            (ca[*x], cb[*y]) = (domain.len(), domain.len());
            domain.push(Size::of(&sa.0[*x]));
        }
        for x in d.lhs_free(sa.rank()) {
            ca[x] = domain.len();
            domain.push(Size::of(&sa.0[x]));
        }
        for y in d.rhs_free(sb.rank()) {
            cb[y] = domain.len();
            domain.push(Size::of(&sb.0[y]));
        }
        for (x, y) in d.lhs_contract.iter().zip(&d.rhs_contract) {
            (ca[*x], cb[*y]) = (domain.len(), domain.len());
            domain.push(Size::of(&sa.0[*x]));
        }
        self.domain = domain;
        self.reduce_dims = d.lhs_contract.len();
        let l = self.value(a, &ca);
        let r = self.value(b, &cb);
        self.inst(dtype, InstKind::Binary(BinaryOp::Mul, l, r))
    }

    pub(super) fn inst(&mut self, dtype: crate::dtype::DType, kind: InstKind) -> ValueId {
        let ty = dtype.compute_type();
        // Equal instructions share one value.
        if let Some(i) = self.insts.iter().position(|x| x.ty == ty && x.kind == kind) {
            return i;
        }
        self.insts.push(Inst { ty, kind });
        self.insts.len() - 1
    }

    /// The value of `v` at the iteration point, where axis `k` of `v` is
    /// domain axis `cmap[k]`.
    pub(super) fn value(&mut self, v: Var, cmap: &[usize]) -> ValueId {
        if self.materialized[v.index()] {
            return self.load(v, cmap);
        }
        self.root_value(v, cmap)
    }

    /// Like `value`, but computes `v` from its definition even when it is
    /// materialized (it is the kernel's own result).
    pub(super) fn root_value(&mut self, v: Var, cmap: &[usize]) -> ValueId {
        let key = (v, cmap.to_vec());
        if let Some(id) = self.memo.get(&key) {
            return *id;
        }
        let Some(e) = self.defs[v.index()].map(|i| &self.f.eqns[i]) else {
            return self.load(v, cmap);
        };
        let id = match e.op.fusion_kind() {
            // Written to memory by kernels of their own, or by a host step.
            FusionKind::Reduction
            | FusionKind::Scan
            | FusionKind::Assemble
            | FusionKind::Control
            | FusionKind::Collective
            | FusionKind::Sort
            | FusionKind::Linalg
            | FusionKind::Conv => self.load(v, cmap),
            FusionKind::Elementwise
            | FusionKind::Broadcast
            | FusionKind::Layout
            | FusionKind::Indexed => self.expression(e, v, cmap),
        };
        self.memo.insert(key, id);
        id
    }

    /// The kernel instructions computing `v`, defined by `e` (an op fusion
    /// computes inside kernels), at the coordinates `cmap`.
    fn expression(&mut self, e: &crate::ir::Eqn, v: Var, cmap: &[usize]) -> ValueId {
        let dtype = self.f.dtype(v);
        match &e.op {
            // A literal holds its value rounded to its own type (as in `interp`).
            Op::Literal { value, .. } => self.inst(dtype, InstKind::Const(dtype.round(*value))),
            Op::Broadcast { dims, .. } => {
                let inner: Vec<usize> = dims.iter().map(|d| cmap[*d]).collect();
                self.value(e.ins[0], &inner)
            }
            Op::Unary(op) => {
                let a = self.value(e.ins[0], cmap);
                self.inst(dtype, InstKind::Unary(*op, a))
            }
            Op::Binary(op) => {
                let (a, b) = (self.value(e.ins[0], cmap), self.value(e.ins[1], cmap));
                self.inst(dtype, InstKind::Binary(*op, a, b))
            }
            Op::Cmp(op) => {
                let (a, b) = (self.value(e.ins[0], cmap), self.value(e.ins[1], cmap));
                self.inst(dtype, InstKind::Cmp(*op, a, b))
            }
            Op::Select => {
                let c = self.value(e.ins[0], cmap);
                let (a, b) = (self.value(e.ins[1], cmap), self.value(e.ins[2], cmap));
                self.inst(dtype, InstKind::Select(c, a, b))
            }
            Op::StopGradient => self.value(e.ins[0], cmap),
            Op::Convert { dtype: to } if self.f.dtype(e.ins[0]) == crate::dtype::DType::Bool => {
                let c = self.value(e.ins[0], cmap);
                // To an integer: the select is in f64 (0 and 1 are exact)
                // and the store converts.
                let ty = if to.is_float() {
                    *to
                } else {
                    crate::dtype::DType::F64
                };
                let (one, zero) = (
                    self.inst(ty, InstKind::Const(1.0)),
                    self.inst(ty, InstKind::Const(0.0)),
                );
                self.inst(ty, InstKind::Select(c, one, zero))
            }
            // To an integer: the kernel's result (`fuse` checked), which the
            // store to the integer buffer converts.
            Op::Convert { dtype: to } if !to.is_float() => self.value(e.ins[0], cmap),
            Op::Convert { dtype: to } => {
                // An integer operand is a buffer (`fuse` checked), read as `to`.
                let outer = self.widen_to.replace(*to);
                let a = self.value(e.ins[0], cmap);
                self.widen_to = outer;
                a
            }
            Op::Transpose { perm } => {
                // Result axis i is operand axis perm[i].
                let mut inner = vec![ZERO; perm.len()];
                for (i, p) in perm.iter().enumerate() {
                    inner[*p] = cmap[i];
                }
                self.value(e.ins[0], &inner)
            }
            Op::Reshape { shape } => match unit_remap(self.f.shape(e.ins[0]), shape) {
                Some(map) => {
                    let inner: Vec<usize> =
                        map.iter().map(|r| r.map_or(ZERO, |r| cmap[r])).collect();
                    self.value(e.ins[0], &inner)
                }
                // The operand's buffer (materialized) holds the elements in
                // the reshaped row-major order.
                None => self.load_strided(e.ins[0], &shape.strides(), cmap),
            },
            Op::DimSize { dim, .. } => match dim {
                Dim::Const(c) => self.inst(dtype, InstKind::Const(dtype.round(*c as f64))),
                Dim::Sym(_) => self.inst(dtype, InstKind::Size(Size::of(dim))),
            },
            Op::Iota { axis, .. } => match cmap[*axis] {
                ZERO => self.inst(dtype, InstKind::Const(0.0)),
                d => self.inst(dtype, InstKind::Index(d)),
            },
            Op::Slice { starts, steps, .. } => {
                // The operand's buffer (materialized) read from the window's
                // start with its strides multiplied by the steps.
                let x = e.ins[0];
                let base = self.f.shape(x).strides();
                let strides: Vec<Size> = base
                    .iter()
                    .zip(steps)
                    .map(|(s, k)| s.mul(&Size::constant(*k)))
                    .collect();
                let offset = offset_terms(starts, &base);
                self.load_at(x, &strides, offset, cmap)
            }
            Op::Gather { axis, batch } => {
                let (x, idx) = (e.ins[0], e.ins[1]);
                let index = self.index_value(idx, &index_cmap(self.f, idx, *axis, *batch, cmap));
                let n_idx = self.f.shape(idx).rank() - batch;
                let xs = self.f.shape(x);
                // The picked axis moves by the index, not by a loop.
                let xcmap: Vec<usize> = (0..xs.rank())
                    .map(|k| match k {
                        k if k < *axis => cmap[k],
                        k if k == *axis => ZERO,
                        k => cmap[k - 1 + n_idx],
                    })
                    .collect();
                let strides = xs.strides();
                let (stride, bound) = (strides[*axis].clone(), Size::of(&xs.0[*axis]));
                let (arg, strides) = self.load_args(x, &strides, &xcmap);
                self.inst(
                    dtype,
                    InstKind::LoadIndexed {
                        arg,
                        strides,
                        offset: Vec::new(),
                        index,
                        stride,
                        bound,
                    },
                )
            }
            op => unreachable!("internal error: {op} is not computed inside a kernel"),
        }
    }

    /// Load materialized `v` at the iteration point (its own strides).
    fn load(&mut self, v: Var, cmap: &[usize]) -> ValueId {
        let strides = self.f.shape(v).strides();
        self.load_strided(v, &strides, cmap)
    }

    /// Load the buffer of materialized `v` through `buf_strides`, one per
    /// axis of the value read (axis `k` at domain axis `cmap[k]`).
    fn load_strided(&mut self, v: Var, buf_strides: &[Size], cmap: &[usize]) -> ValueId {
        self.load_at(v, buf_strides, Vec::new(), cmap)
    }

    /// An index array's element at the iteration point, as an `f64` load of
    /// its integer buffer (below the layout ops `index_base` looks through).
    pub(super) fn index_value(&mut self, v: Var, cmap: &[usize]) -> ValueId {
        let f = self.f;
        let e = match self.defs[v.index()].map(|i| &f.eqns[i]) {
            Some(e) if !self.materialized[v.index()] => e,
            _ => {
                let outer = self.widen_to.replace(crate::dtype::DType::F64);
                let id = self.load(v, cmap);
                self.widen_to = outer;
                return id;
            }
        };
        match &e.op {
            Op::Transpose { perm } => {
                let mut inner = vec![ZERO; perm.len()];
                for (i, p) in perm.iter().enumerate() {
                    inner[*p] = cmap[i];
                }
                self.index_value(e.ins[0], &inner)
            }
            Op::Broadcast { dims, .. } => {
                let inner: Vec<usize> = dims.iter().map(|d| cmap[*d]).collect();
                self.index_value(e.ins[0], &inner)
            }
            Op::StopGradient => self.index_value(e.ins[0], cmap),
            Op::Reshape { shape } => match unit_remap(f.shape(e.ins[0]), shape) {
                Some(map) => {
                    let inner: Vec<usize> =
                        map.iter().map(|r| r.map_or(ZERO, |r| cmap[r])).collect();
                    self.index_value(e.ins[0], &inner)
                }
                None => {
                    let outer = self.widen_to.replace(crate::dtype::DType::F64);
                    let id = self.load_strided(e.ins[0], &shape.strides(), cmap);
                    self.widen_to = outer;
                    id
                }
            },
            _ => panic!("internal error: index array {v} is not materialized"),
        }
    }

    /// `load_strided` from element `offset` (a sum of sizes) on.
    fn load_at(
        &mut self,
        v: Var,
        buf_strides: &[Size],
        offset: Vec<Size>,
        cmap: &[usize],
    ) -> ValueId {
        let (arg, strides) = self.load_args(v, buf_strides, cmap);
        let dtype = match self.widen_to {
            Some(to) if !self.f.dtype(v).is_float() => to,
            _ => self.f.dtype(v),
        };
        self.inst(
            dtype,
            InstKind::Load {
                arg,
                strides,
                offset,
            },
        )
    }

    /// The arg of materialized `v` (added to the inputs) and the strides,
    /// one per domain axis, of reading it through `buf_strides` (axis `k`
    /// of `v` at domain axis `cmap[k]`).
    fn load_args(&mut self, v: Var, buf_strides: &[Size], cmap: &[usize]) -> (usize, Vec<Size>) {
        let arg = match self.inputs.iter().position(|x| *x == v) {
            Some(i) => i,
            None => {
                self.inputs.push(v);
                self.inputs.len() - 1
            }
        };
        let strides = (0..self.domain.len())
            .map(|d| {
                let axes: Vec<&Size> = (0..cmap.len())
                    .filter(|k| cmap[*k] == d)
                    .map(|k| &buf_strides[k])
                    .collect();
                match axes.as_slice() {
                    [] => Size::zero(),
                    [s] => (*s).clone(),
                    _ => panic!("internal error: two axes of one value on one loop"),
                }
            })
            .collect();
        (arg, strides)
    }

    pub(super) fn finish(
        self,
        value: ValueId,
        out_dtype: crate::dtype::DType,
        region: Option<Region>,
    ) -> (Kernel, Vec<Var>) {
        let mut args: Vec<KernelArg> = self
            .inputs
            .iter()
            .map(|v| KernelArg {
                dtype: self.f.dtype(*v),
                output: false,
            })
            .collect();
        args.push(KernelArg {
            dtype: out_dtype,
            output: true,
        });
        let mut syms = BTreeSet::new();
        for s in &self.domain {
            syms.extend(s.syms.iter().cloned());
        }
        for inst in &self.insts {
            match &inst.kind {
                InstKind::Load {
                    strides, offset, ..
                } => {
                    for s in strides.iter().chain(offset) {
                        syms.extend(s.syms.iter().cloned());
                    }
                }
                InstKind::LoadIndexed {
                    strides,
                    offset,
                    stride,
                    bound,
                    ..
                } => {
                    for s in strides.iter().chain(offset).chain([stride, bound]) {
                        syms.extend(s.syms.iter().cloned());
                    }
                }
                InstKind::Size(s) => syms.extend(s.syms.iter().cloned()),
                _ => {}
            }
        }
        if let Some(r) = &region {
            let scatter = r.scatter.iter().flat_map(|sc| [&sc.stride, &sc.bound]);
            for s in r.strides.iter().chain(&r.offset).chain(scatter) {
                syms.extend(s.syms.iter().cloned());
            }
        }
        let store = Store {
            arg: args.len() - 1,
            value,
            region,
        };
        let mut k = Kernel {
            name: String::new(),
            args,
            sizes: syms.into_iter().collect(),
            domain: self.domain,
            reduce_dims: self.reduce_dims,
            reduce: self.reduce,
            insts: self.insts,
            stores: vec![store],
            scan: self.scan,
        };
        k.name = k.symbol();
        (k, self.inputs)
    }
}
