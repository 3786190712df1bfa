//! Fusion: IR function → `Program` of kernels.
//!
//! Values are *materialized* (written to memory) only where they must be:
//! parameters, outputs, and results of reductions (`reduce_sum`, `dot`).
//! Every other value — elementwise ops, literals, broadcasts — is computed
//! inside the kernel of each materialized value that needs it, so
//! `sum(x * 2 * y + z)` is one kernel with no temporaries. A broadcast becomes
//! a stride (0 along the new axes) on the loads below it.

use super::{Inst, InstKind, Kernel, KernelArg, Store, ValueId};
use crate::exec::{BufferInfo, Launch, Program};
use crate::ir::{Function, Var};
use crate::ops::Op;
use crate::shape::Size;
use crate::transforms::simplify;
use crate::verify::verify;
use std::collections::{BTreeSet, HashMap};

/// Group elementwise chains and broadcasts with the reduction that consumes
/// them into kernels; return the program that runs them in order.
pub fn fuse(f: &Function) -> Result<Program, String> {
    verify(f)?;
    let f = simplify(f);
    let defs = f.definitions();
    let mut materialized = vec![false; f.types.len()];
    for v in f.params.iter().chain(&f.outs) {
        materialized[v.index()] = true;
    }
    for e in &f.eqns {
        if matches!(e.op, Op::ReduceSum { .. } | Op::Dot) {
            materialized[e.out.index()] = true;
        }
    }

    let mut buffers: Vec<BufferInfo> = Vec::new();
    let mut buffer_of: HashMap<Var, usize> = HashMap::new();
    for (i, p) in f.params.iter().enumerate() {
        buffer_of.insert(*p, buffers.len());
        buffers.push(BufferInfo {
            dtype: f.dtype(*p),
            shape: f.shape(*p).clone(),
            param: Some(i),
        });
    }
    let mut kernels: Vec<Kernel> = Vec::new();
    let mut launches = Vec::new();
    for e in &f.eqns {
        if !materialized[e.out.index()] {
            continue;
        }
        let mut b = KernelBuilder::new(&f, &defs, &materialized);
        let out_arg_dtype = f.dtype(e.out);
        let value = match &e.op {
            Op::ReduceSum { axes } => {
                let x = e.ins[0];
                let rank = f.shape(x).rank();
                let order: Vec<usize> = (0..rank)
                    .filter(|a| !axes.contains(a))
                    .chain(axes.iter().copied())
                    .collect();
                let mut cmap = vec![0; rank];
                for (pos, axis) in order.iter().enumerate() {
                    cmap[*axis] = pos;
                }
                b.domain = order.iter().map(|a| Size::of(&f.shape(x).0[*a])).collect();
                b.reduce_dims = axes.len();
                b.value(x, &cmap)
            }
            Op::Dot => {
                b.domain = vec![Size::of(&f.shape(e.ins[0]).0[0])];
                b.reduce_dims = 1;
                let l = b.value(e.ins[0], &[0]);
                let r = b.value(e.ins[1], &[0]);
                b.inst(
                    f.dtype(e.out),
                    InstKind::Binary(crate::ops::elementwise::BinaryOp::Mul, l, r),
                )
            }
            _ => {
                let shape = f.shape(e.out);
                b.domain = shape.0.iter().map(Size::of).collect();
                let cmap: Vec<usize> = (0..shape.rank()).collect();
                b.root_value(e.out, &cmap)
            }
        };
        let out_buffer = buffers.len();
        buffers.push(BufferInfo {
            dtype: f.dtype(e.out),
            shape: f.shape(e.out).clone(),
            param: None,
        });
        buffer_of.insert(e.out, out_buffer);
        let (kernel, inputs) = b.finish(value, out_arg_dtype);
        let mut args: Vec<usize> = inputs.iter().map(|v| buffer_of[v]).collect();
        args.push(out_buffer);
        let index = match kernels.iter().position(|k| k.name == kernel.name) {
            Some(i) => i,
            None => {
                kernels.push(kernel);
                kernels.len() - 1
            }
        };
        launches.push(Launch {
            kernel: index,
            args,
        });
    }
    let outputs = f.outs.iter().map(|o| buffer_of[o]).collect();
    Ok(Program::new(f.clone(), kernels, buffers, launches, outputs))
}

/// Builds one kernel: the expression DAG of a materialized value, with loads
/// of the materialized values it reads.
struct KernelBuilder<'a> {
    f: &'a Function,
    defs: &'a [Option<usize>],
    materialized: &'a [bool],
    domain: Vec<Size>,
    reduce_dims: usize,
    insts: Vec<Inst>,
    /// Materialized values read, in arg order.
    inputs: Vec<Var>,
    memo: HashMap<(Var, Vec<usize>), ValueId>,
}

impl<'a> KernelBuilder<'a> {
    fn new(f: &'a Function, defs: &'a [Option<usize>], materialized: &'a [bool]) -> Self {
        KernelBuilder {
            f,
            defs,
            materialized,
            domain: Vec::new(),
            reduce_dims: 0,
            insts: Vec::new(),
            inputs: Vec::new(),
            memo: HashMap::new(),
        }
    }

    fn inst(&mut self, dtype: crate::dtype::DType, kind: InstKind) -> ValueId {
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
    fn value(&mut self, v: Var, cmap: &[usize]) -> ValueId {
        if self.materialized[v.index()] {
            return self.load(v, cmap);
        }
        self.root_value(v, cmap)
    }

    /// Like `value`, but computes `v` from its definition even when it is
    /// materialized (it is the kernel's own result).
    fn root_value(&mut self, v: Var, cmap: &[usize]) -> ValueId {
        let key = (v, cmap.to_vec());
        if let Some(id) = self.memo.get(&key) {
            return *id;
        }
        let Some(e) = self.defs[v.index()].map(|i| &self.f.eqns[i]) else {
            return self.load(v, cmap);
        };
        let dtype = self.f.dtype(v);
        let id = match &e.op {
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
            Op::ReduceSum { .. } | Op::Dot => self.load(v, cmap),
        };
        self.memo.insert(key, id);
        id
    }

    fn load(&mut self, v: Var, cmap: &[usize]) -> ValueId {
        let arg = match self.inputs.iter().position(|x| *x == v) {
            Some(i) => i,
            None => {
                self.inputs.push(v);
                self.inputs.len() - 1
            }
        };
        let buf_strides = self.f.shape(v).strides();
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
        self.inst(self.f.dtype(v), InstKind::Load { arg, strides })
    }

    fn finish(self, value: ValueId, out_dtype: crate::dtype::DType) -> (Kernel, Vec<Var>) {
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
            if let InstKind::Load { strides, .. } = &inst.kind {
                for s in strides {
                    syms.extend(s.syms.iter().cloned());
                }
            }
        }
        let store = Store {
            arg: args.len() - 1,
            value,
        };
        let mut k = Kernel {
            name: String::new(),
            args,
            sizes: syms.into_iter().collect(),
            domain: self.domain,
            reduce_dims: self.reduce_dims,
            insts: self.insts,
            stores: vec![store],
        };
        k.name = k.symbol();
        (k, self.inputs)
    }
}
