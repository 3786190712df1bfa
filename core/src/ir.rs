//! The IR: a typed SSA function of tensor equations, like a jaxpr.
//!
//! `Function` is also the builder: every op is added with `push`, which runs
//! the op's shape/dtype rule. The convenience methods (`add`, `mul`, …) are
//! for transforms, whose inputs are well typed; a failure there is a bug in
//! oxla and panics with "internal error".

use crate::dtype::DType;
use crate::ops::elementwise::{BinaryOp, CmpOp, UnaryOp};
use crate::ops::Op;
use crate::shape::{Dim, Shape};
use std::collections::BTreeSet;
use std::fmt;

/// An SSA value; its index into `Function::types`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Var(pub u32);

impl Var {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{}", self.0)
    }
}

/// The type of a value: element type and shape.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Type {
    pub dtype: DType,
    pub shape: Shape,
}

impl Type {
    pub fn new(dtype: DType, shape: Shape) -> Type {
        Type { dtype, shape }
    }
    pub fn scalar(dtype: DType) -> Type {
        Type {
            dtype,
            shape: Shape::scalar(),
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.dtype, self.shape)
    }
}

/// One equation: `outs = op(ins)`. Every op has one result except the
/// structured control-flow ops (`ops::control`), which have one per carry.
#[derive(Clone, Debug, PartialEq)]
pub struct Eqn {
    pub op: Op,
    pub ins: Vec<Var>,
    pub outs: Vec<Var>,
}

impl Eqn {
    /// The result of a single-result op.
    pub fn out(&self) -> Var {
        assert!(
            self.outs.len() == 1,
            "internal error: `{}` has {} results",
            self.op,
            self.outs.len()
        );
        self.outs[0]
    }
}

/// A function: typed parameters, equations in order, outputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    pub params: Vec<Var>,
    /// A name for each parameter (used in error messages and generated code).
    pub param_names: Vec<String>,
    pub eqns: Eqns,
    pub outs: Vec<Var>,
    /// The type of every value, indexed by `Var`.
    pub types: Vec<Type>,
    /// Set by `simplify` on the function it returns, so that simplifying it
    /// again (a cond's branches, once per transform above them) is free.
    pub(crate) simplified: Simplified,
}

/// A function's equations, a `Vec<Eqn>` (through `Deref`) shared between
/// the copies of a function until one of them is changed (copy on write).
/// Every transform of a function holding a cond copies the cond, branches
/// and all, into its result; with the branches' equations shared, a copy
/// costs only the equations of its own level, so transforming nested conds
/// is linear in their depth, not quadratic.
#[derive(Clone, Default, PartialEq)]
pub struct Eqns(std::sync::Arc<Vec<Eqn>>);

impl std::ops::Deref for Eqns {
    type Target = Vec<Eqn>;
    fn deref(&self) -> &Vec<Eqn> {
        &self.0
    }
}

impl std::ops::DerefMut for Eqns {
    fn deref_mut(&mut self) -> &mut Vec<Eqn> {
        std::sync::Arc::make_mut(&mut self.0)
    }
}

impl fmt::Debug for Eqns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl From<Vec<Eqn>> for Eqns {
    fn from(v: Vec<Eqn>) -> Eqns {
        Eqns(std::sync::Arc::new(v))
    }
}

impl FromIterator<Eqn> for Eqns {
    fn from_iter<I: IntoIterator<Item = Eqn>>(it: I) -> Eqns {
        Eqns::from(it.into_iter().collect::<Vec<_>>())
    }
}

impl IntoIterator for Eqns {
    type Item = Eqn;
    type IntoIter = std::vec::IntoIter<Eqn>;
    /// The equations, moved out if no other copy shares them.
    fn into_iter(self) -> std::vec::IntoIter<Eqn> {
        std::sync::Arc::try_unwrap(self.0)
            .unwrap_or_else(|shared| (*shared).clone())
            .into_iter()
    }
}

impl<'a> IntoIterator for &'a Eqns {
    type Item = &'a Eqn;
    type IntoIter = std::slice::Iter<'a, Eqn>;
    fn into_iter(self) -> std::slice::Iter<'a, Eqn> {
        self.0.iter()
    }
}

impl<'a> IntoIterator for &'a mut Eqns {
    type Item = &'a mut Eqn;
    type IntoIter = std::slice::IterMut<'a, Eqn>;
    fn into_iter(self) -> std::slice::IterMut<'a, Eqn> {
        std::sync::Arc::make_mut(&mut self.0).iter_mut()
    }
}

/// `simplify`'s mark: the sizes and results of the function it returned.
/// A function changed since (an equation, param or value added, its results
/// replaced) no longer matches and is simplified again. Not part of a
/// function's value: every two marks are equal.
#[derive(Clone, Debug, Default)]
pub(crate) struct Simplified(Option<(usize, usize, usize, Vec<Var>)>);

impl PartialEq for Simplified {
    fn eq(&self, _: &Simplified) -> bool {
        true
    }
}

impl Function {
    pub fn new(name: &str) -> Function {
        Function {
            name: name.to_string(),
            params: Vec::new(),
            param_names: Vec::new(),
            eqns: Eqns::default(),
            outs: Vec::new(),
            types: Vec::new(),
            simplified: Simplified::default(),
        }
    }

    fn size_key(&self) -> (usize, usize, usize, Vec<Var>) {
        (
            self.params.len(),
            self.eqns.len(),
            self.types.len(),
            self.outs.clone(),
        )
    }

    /// Mark `self` as `simplify`'s result, as it stands.
    pub(crate) fn mark_simplified(&mut self) {
        self.simplified = Simplified(Some(self.size_key()));
    }

    /// `self` is a result of `simplify`, unchanged since.
    pub(crate) fn is_simplified(&self) -> bool {
        self.simplified.0.as_ref() == Some(&self.size_key())
    }

    pub fn ty(&self, v: Var) -> &Type {
        &self.types[v.index()]
    }

    pub fn shape(&self, v: Var) -> &Shape {
        &self.types[v.index()].shape
    }

    pub fn dtype(&self, v: Var) -> DType {
        self.types[v.index()].dtype
    }

    /// A new value of type `ty` with no definition yet.
    pub fn fresh(&mut self, ty: Type) -> Var {
        self.types.push(ty);
        Var(self.types.len() as u32 - 1)
    }

    pub fn add_param(&mut self, name: &str, ty: Type) -> Var {
        let v = self.fresh(ty);
        self.params.push(v);
        self.param_names.push(name.to_string());
        v
    }

    /// A new function named `name` whose params are the first `count` params
    /// of `src`, and the map from `src`'s values into it (params only, so far).
    pub fn with_params_of(
        src: &Function,
        name: &str,
        count: usize,
    ) -> (Function, Vec<Option<Var>>) {
        let mut g = Function::new(name);
        let mut map = vec![None; src.types.len()];
        for (p, pname) in src.params.iter().zip(&src.param_names).take(count) {
            map[p.index()] = Some(g.add_param(pname, src.ty(*p).clone()));
        }
        (g, map)
    }

    /// Re-emit `e`, an equation of another function, with its operands
    /// mapped through `map` (which must already hold them); its results are
    /// entered into `map`.
    pub fn copy_eqn(&mut self, e: &Eqn, map: &mut [Option<Var>]) -> Vec<Var> {
        let ins: Vec<Var> = e
            .ins
            .iter()
            .map(|v| map[v.index()].expect("internal error: operand not yet mapped"))
            .collect();
        let outs = match self.push_all(e.op.clone(), &ins) {
            Ok(v) => v,
            Err(err) => panic!("internal error: copying {} in `{}`: {err}", e.op, self.name),
        };
        for (o, n) in e.outs.iter().zip(&outs) {
            map[o.index()] = Some(*n);
        }
        outs
    }

    /// Add `op(ins)`, an op with one result, after checking it with the op's
    /// shape/dtype rule.
    pub fn push(&mut self, op: Op, ins: &[Var]) -> Result<Var, String> {
        let outs = self.push_all(op, ins)?;
        match outs[..] {
            [v] => Ok(v),
            _ => Err(format!(
                "internal error: `push` of an op with {} results",
                outs.len()
            )),
        }
    }

    /// Add `op(ins)` with all its results.
    pub fn push_all(&mut self, op: Op, ins: &[Var]) -> Result<Vec<Var>, String> {
        let in_types: Vec<&Type> = ins.iter().map(|v| self.ty(*v)).collect();
        let tys = op.infer_all(&in_types)?;
        let outs: Vec<Var> = tys.into_iter().map(|t| self.fresh(t)).collect();
        self.eqns.push(Eqn {
            op,
            ins: ins.to_vec(),
            outs: outs.clone(),
        });
        Ok(outs)
    }

    fn push_ok(&mut self, op: Op, ins: &[Var]) -> Var {
        match self.push(op.clone(), ins) {
            Ok(v) => v,
            Err(e) => panic!("internal error: building {op} in `{}`: {e}", self.name),
        }
    }

    // ---- builders used by the op rules and the transforms ----

    pub fn unary(&mut self, op: UnaryOp, x: Var) -> Var {
        self.push_ok(Op::Unary(op), &[x])
    }
    pub fn binary(&mut self, op: BinaryOp, a: Var, b: Var) -> Var {
        self.push_ok(Op::Binary(op), &[a, b])
    }
    pub fn add(&mut self, a: Var, b: Var) -> Var {
        self.binary(BinaryOp::Add, a, b)
    }
    pub fn sub(&mut self, a: Var, b: Var) -> Var {
        self.binary(BinaryOp::Sub, a, b)
    }
    pub fn mul(&mut self, a: Var, b: Var) -> Var {
        self.binary(BinaryOp::Mul, a, b)
    }
    pub fn div(&mut self, a: Var, b: Var) -> Var {
        self.binary(BinaryOp::Div, a, b)
    }
    pub fn neg(&mut self, a: Var) -> Var {
        self.unary(UnaryOp::Neg, a)
    }
    pub fn cmp(&mut self, op: CmpOp, a: Var, b: Var) -> Var {
        self.push_ok(Op::Cmp(op), &[a, b])
    }
    pub fn select(&mut self, p: Var, a: Var, b: Var) -> Var {
        self.push_ok(Op::Select, &[p, a, b])
    }
    pub fn literal(&mut self, value: f64, dtype: DType) -> Var {
        self.push_ok(Op::Literal { value, dtype }, &[])
    }
    /// Broadcast `x` into `shape`, axis `i` of `x` going to axis `dims[i]`.
    pub fn broadcast(&mut self, x: Var, shape: Shape, dims: Vec<usize>) -> Var {
        self.push_ok(Op::Broadcast { shape, dims }, &[x])
    }
    pub fn reduce_sum(&mut self, x: Var, axes: Vec<usize>) -> Var {
        self.push_ok(Op::ReduceSum { axes }, &[x])
    }
    pub fn dot(&mut self, a: Var, b: Var) -> Var {
        self.push_ok(Op::Dot, &[a, b])
    }
    /// A tensor of `shape` filled with `value`.
    pub fn full(&mut self, value: f64, dtype: DType, shape: &Shape) -> Var {
        let l = self.literal(value, dtype);
        if shape.is_scalar() {
            l
        } else {
            self.broadcast(l, shape.clone(), Vec::new())
        }
    }
    /// A tensor of the type of `like` filled with `value`.
    pub fn full_like(&mut self, value: f64, like: Var) -> Var {
        let ty = self.ty(like).clone();
        self.full(value, ty.dtype, &ty.shape)
    }
    pub fn zeros_like(&mut self, like: Var) -> Var {
        self.full_like(0.0, like)
    }
    /// Add a new leading axis of size `batch` by broadcasting.
    pub fn broadcast_batch(&mut self, x: Var, batch: &Dim) -> Var {
        let mut shape = vec![batch.clone()];
        shape.extend(self.shape(x).0.iter().cloned());
        let dims = (1..shape.len()).collect();
        self.broadcast(x, Shape(shape), dims)
    }

    /// The operands `ins` all batched along a new leading axis of size
    /// `batch`: those `batched` marks as they are, the others broadcast.
    pub fn batch_all(&mut self, ins: &[Var], batched: &[bool], batch: &Dim) -> Vec<Var> {
        ins.iter()
            .zip(batched)
            .map(|(v, b)| {
                if *b {
                    *v
                } else {
                    self.broadcast_batch(*v, batch)
                }
            })
            .collect()
    }

    /// Every dimension symbol used by the function.
    /// Every dimension symbol of the function: in its types, in the
    /// dimensions its ops name (slice starts, `dim_size`), and the base
    /// symbols of every derived one.
    pub fn symbols(&self) -> BTreeSet<String> {
        let mut dims: Vec<crate::shape::Dim> = self
            .types
            .iter()
            .flat_map(|t| t.shape.0.iter().cloned())
            .collect();
        for e in &self.eqns {
            match &e.op {
                Op::Slice { starts, .. } | Op::Pad { starts, .. } => {
                    dims.extend(starts.iter().cloned())
                }
                Op::DimSize { dim, .. } => dims.push(dim.clone()),
                _ => {}
            }
        }
        let mut out = BTreeSet::new();
        for d in &dims {
            if let crate::shape::Dim::Sym(s) = d {
                out.insert(s.clone());
                let mut base = Vec::new();
                crate::shape::derived::base_symbols(d, &mut base);
                out.extend(base);
            }
        }
        out
    }

    /// The definition of each value, if it is defined by an equation.
    pub fn definitions(&self) -> Vec<Option<usize>> {
        let mut def = vec![None; self.types.len()];
        for (i, e) in self.eqns.iter().enumerate() {
            for o in &e.outs {
                def[o.index()] = Some(i);
            }
        }
        def
    }

    /// The literal value of `v` if it is a scalar literal or a broadcast of one.
    pub fn literal_value(&self, v: Var, defs: &[Option<usize>]) -> Option<f64> {
        let e = &self.eqns[defs[v.index()]?];
        match &e.op {
            Op::Literal { value, .. } => Some(*value),
            Op::Broadcast { .. } => self.literal_value(e.ins[0], defs),
            _ => None,
        }
    }

    /// Whether every parameter and output is a scalar.
    pub fn is_scalar_only(&self) -> bool {
        self.params
            .iter()
            .chain(&self.outs)
            .all(|v| self.shape(*v).is_scalar())
    }
}
