//! The array vocabulary: the methods and functions on n-d arrays, under the
//! names an ndarray / jax.numpy user would guess, each lowered to IR ops.
//!
//! | written | IR |
//! |---|---|
//! | `x.t()`, `x.reversed_axes()`, `x.permuted_axes([..])` | `transpose` |
//! | `a.dot(&b)`, `dot(a, b)` (ndarray: 1·1, 2·1, 1·2, 2·2) | `dot_general` (1·1: `dot`) |
//! | `matmul(a, b)` (numpy: batched over leading axes) | `dot_general` (+ `transpose`) |
//! | `x.sum()`, `sum(x)`, `x.sum_axis(Axis(k))` | `reduce_sum` |
//! | `x.mean()`, `mean(x)`, `x.mean_axis(Axis(k))` | `reduce_sum` / `dim_size` |
//! | `x.max()`, `max(x)`, `x.max_axis(Axis(k))` (and min) | `reduce_max` / `reduce_min` |
//! | `x.product()`, `prod(x)`, `x.product_axis(Axis(k))`, `x.prod_axis(Axis(k))`, `prod(x, Axis(k))` | `reduce_prod` |
//! | `x.cumsum(Axis(k))`, `cumsum(x, Axis(k))`, `x.cumprod(Axis(k))`, `cumprod(x, Axis(k))` | `linear_scan` (see `oxla_core::ops::scan`) |
//! | `x.insert_axis(Axis(k))`, `x.remove_axis(Axis(k))` (a size-1 axis) | `reshape` |
//! | `logsumexp(x)`, `logsumexp(x, Axis(k))` | max, exp, sum, log with `stop_gradient` on the max |
//! | `softmax(x, Axis(k))`, `log_softmax(x, Axis(k))` | likewise |
//! | `stop_gradient(x)` | `stop_gradient` |
//! | `take_along_axis(x, &labels, Axis(k))` (integer indices) | `gather` with shared leading axes (+ `transpose`) |
//! | `take(x, &idx, Axis(k))`, `x.select(Axis(k), &idx)` (integer indices, any shape) | `gather` |
//! | `x.slice(s![..])`, `concatenate(..)`, `stack(..)` and their macros | see `slicing` |
//! | `sort(x[, Axis(k)])`, `argsort(x[, Axis(k)])`, `let (v, i) = top_k(x, k)` | `argsort` (+ `gather`, see `oxla_core::ops::sort`) |
//!
//! Binary arithmetic broadcasts as numpy does (`broadcast_all`).

use crate::lower::Lowerer;
use oxla_core::ops::elementwise::{BinaryOp, CmpOp, UnaryOp};
use oxla_core::{Dim, DotDims, Op, Shape, Type, Var};
use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::Expr;

/// The array methods handled here (for error messages).
pub(crate) const ARRAY_METHODS: &str = "t, reversed_axes, permuted_axes([..]), dot(&y), \
     sum(), sum_axis(Axis(k)), mean(), mean_axis(Axis(k)), max(), min(), max_axis(Axis(k)), \
     min_axis(Axis(k)), insert_axis(Axis(k)), remove_axis(Axis(k)), slice(s![..]), \
     slice_axis(Axis(k), Slice::from(a..b)), select(Axis(k), &idx), product(), product_axis(Axis(k)), \
     prod_axis(Axis(k)), cumsum(Axis(k)), cumprod(Axis(k)), row(i), column(j), var(ddof), std(ddof), \
     var_axis(Axis(k), ddof), std_axis(Axis(k), ddof), into_shape_with_order(shape), to_shape(shape), \
     reshape(shape), flatten(), ravel(), and the sizes len(), nrows(), ncols(), \
     len_of(Axis(k)), shape()[k]; clone(), to_owned(), view() and into_owned() are the value itself";

/// The functions handled here (and in `slicing`), name and usage.
pub(crate) const ARRAY_FUNCTIONS: &[(&str, &str)] = &[
    ("sum", "sum(x)"),
    ("mean", "mean(x)"),
    ("max", "max(x)"),
    ("min", "min(x)"),
    ("prod", "prod(x[, Axis(k)])"),
    ("cumsum", "cumsum(x, Axis(k))"),
    ("cumprod", "cumprod(x, Axis(k))"),
    ("dot", "dot(a, b)"),
    ("matmul", "matmul(a, b)"),
    ("logsumexp", "logsumexp(x[, Axis(k)])"),
    ("softmax", "softmax(x, Axis(k))"),
    ("log_softmax", "log_softmax(x, Axis(k))"),
    ("stop_gradient", "stop_gradient(x)"),
    ("take_along_axis", "take_along_axis(x, &idx, Axis(k))"),
    ("take", "take(x, &idx, Axis(k))"),
    ("argmax", "argmax(x[, Axis(k)])"),
    ("argmin", "argmin(x[, Axis(k)])"),
    ("sort", "sort(x[, Axis(k)])"),
    ("argsort", "argsort(x[, Axis(k)])"),
    (
        "top_k",
        "top_k(x, k) (bound by `let (values, indices) = …`)",
    ),
    ("zeros_like", "zeros_like(x)"),
    ("ones_like", "ones_like(x)"),
    ("full_like", "full_like(x, v)"),
    ("outer", "outer(a, b)"),
    ("meshgrid", "meshgrid(&x, &y) (bound by `let (xx, yy) = …`)"),
    ("concatenate", "concatenate(Axis(k), &[a.view(), b.view()])"),
    ("stack", "stack(Axis(k), &[a.view(), b.view()])"),
    ("roll", "roll(x, shift, Axis(k))"),
    ("concatenate", "concatenate![Axis(k), a, b]"),
    ("stack", "stack![Axis(k), a, b]"),
];

/// `Axis(k)` (also `ndarray::Axis(k)`, `oxla::ndarray::Axis(k)`) with
/// `k ≥ 0`.
pub(crate) fn axis_arg(e: &Expr) -> Option<usize> {
    usize::try_from(signed_axis_arg(e)?).ok()
}

/// `Axis(k)` for an array of rank `rank`, `k` also negative as JAX's
/// `axis=-1` (the last axis); `None` when it is not one or out of range.
pub(crate) fn axis_arg_of(e: &Expr, rank: usize) -> Option<usize> {
    let k = signed_axis_arg(e)?;
    let k = if k < 0 { k + rank as i64 } else { k };
    usize::try_from(k).ok().filter(|k| *k < rank)
}

/// `Axis(k)` with an integer literal `k`, possibly negative.
fn signed_axis_arg(e: &Expr) -> Option<i64> {
    let Expr::Call(c) = strip(e) else {
        return None;
    };
    let Expr::Path(p) = &*c.func else {
        return None;
    };
    if p.path.segments.last()?.ident != "Axis" || c.args.len() != 1 {
        return None;
    }
    let lit = |e: &Expr| match strip(e) {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<i64>().ok(),
        _ => None,
    };
    match strip(&c.args[0]) {
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => lit(&u.expr).map(|k| -k),
        e => lit(e),
    }
}

/// `[1, 0, 2]` or `(1, 0, 2)` of integer literals.
fn axes_list(e: &Expr) -> Option<Vec<usize>> {
    let elems: Vec<&Expr> = match strip(e) {
        Expr::Array(a) => a.elems.iter().collect(),
        Expr::Tuple(t) => t.elems.iter().collect(),
        _ => return None,
    };
    elems
        .into_iter()
        .map(|x| match strip(x) {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) => i.base10_parse().ok(),
            _ => None,
        })
        .collect()
}

pub(crate) fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip(&p.expr),
        Expr::Group(g) => strip(&g.expr),
        Expr::Reference(r) if r.mutability.is_none() => strip(&r.expr),
        e => e,
    }
}

/// Which reduction a name asks for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reduction {
    Sum,
    Mean,
    Max,
    Min,
    Prod,
}

impl Reduction {
    fn of(name: &str) -> Option<(Reduction, bool)> {
        Some(match name {
            "sum" => (Reduction::Sum, false),
            "mean" => (Reduction::Mean, false),
            "max" => (Reduction::Max, false),
            "min" => (Reduction::Min, false),
            "sum_axis" => (Reduction::Sum, true),
            "mean_axis" => (Reduction::Mean, true),
            "max_axis" => (Reduction::Max, true),
            "min_axis" => (Reduction::Min, true),
            "product" => (Reduction::Prod, false),
            "product_axis" | "prod_axis" => (Reduction::Prod, true),
            _ => return None,
        })
    }
}

impl Lowerer<'_> {
    /// An array method, if `m` is one (else `None`: the caller handles it).
    pub(crate) fn lower_array_method(&mut self, m: &syn::ExprMethodCall) -> Option<Option<Var>> {
        if let Some(v) = self.lower_layout_method(m) {
            return Some(v);
        }
        if let Some(v) = self.lower_linalg_method(m) {
            return Some(v);
        }
        let name = m.method.to_string();
        let args: Vec<&Expr> = m.args.iter().collect();
        // `x.max(y)` / `x.min(y)` are elementwise; `x.max()` reduces.
        if matches!(name.as_str(), "max" | "min") && !args.is_empty() {
            return None;
        }
        if matches!(name.as_str(), "var" | "std" | "var_axis" | "std_axis") {
            let x = self.lower_expr(&m.receiver);
            let span = self.method_span(m);
            return Some(self.variance(&name, x?, &args, span, m));
        }
        let handled = matches!(
            name.as_str(),
            "t" | "reversed_axes"
                | "permuted_axes"
                | "dot"
                | "insert_axis"
                | "remove_axis"
                | "select"
                | "cumsum"
                | "cumprod"
        ) || Reduction::of(&name).is_some();
        if !handled {
            return None;
        }
        let x = self.lower_expr(&m.receiver);
        let span = self.method_span(m);
        Some(self.array_method(&name, x, &args, span, m))
    }

    /// ndarray's `x.var(ddof)`, `x.std(ddof)` (every element) and
    /// `x.var_axis(Axis(k), ddof)`, `x.std_axis(..)`: `Σ(x − mean)² / (n −
    /// ddof)` and its square root, as `jnp.var(x, ddof=…)`.
    fn variance(
        &mut self,
        name: &str,
        x: Var,
        args: &[&Expr],
        span: Span,
        m: &syn::ExprMethodCall,
    ) -> Option<Var> {
        let rank = self.f.shape(x).rank();
        let (axes, ddof) = match (name, args) {
            ("var" | "std", [ddof]) => ((0..rank).collect::<Vec<_>>(), ddof),
            ("var_axis" | "std_axis", [axis, ddof]) => match axis_arg_of(axis, rank) {
                Some(k) => (vec![k], ddof),
                _ => {
                    self.errors.spanned(
                        axis,
                        format!("`{name}` takes an axis `Axis(k)` with k < {rank}"),
                    );
                    return None;
                }
            },
            _ => {
                let form = match name {
                    "var" | "std" => format!("`x.{name}(ddof)`"),
                    _ => format!("`x.{name}(Axis(k), ddof)`"),
                };
                self.errors
                    .at(m.paren_token.span.join(), format!("`{name}` takes {form}"));
                return None;
            }
        };
        if !self.f.dtype(x).is_float() || rank == 0 {
            self.errors
                .spanned(&m.receiver, format!("`{name}` takes a float array"));
            return None;
        }
        let ddof = self.lower_expr(ddof)?;
        let count = self.count_of(x, &axes, span)?;
        let total = self.reduce(Reduction::Sum, x, axes.clone(), span)?;
        let mut vs = [total, count];
        self.broadcast_all(&mut vs, span)?;
        let mean = self.push(Op::Binary(BinaryOp::Div), &vs, span)?;
        let kept: Vec<usize> = (0..rank).filter(|a| !axes.contains(a)).collect();
        let mean = self.push(
            Op::Broadcast {
                shape: self.f.shape(x).clone(),
                dims: kept,
            },
            &[mean],
            span,
        )?;
        let d = self.push(Op::Binary(BinaryOp::Sub), &[x, mean], span)?;
        let d2 = self.push(Op::Binary(BinaryOp::Mul), &[d, d], span)?;
        let ss = self.reduce(Reduction::Sum, d2, axes, span)?;
        let mut vs = [count, ddof];
        self.coerce(&mut vs, span)?;
        let den = self.push(Op::Binary(BinaryOp::Sub), &vs, span)?;
        let mut vs = [ss, den];
        self.broadcast_all(&mut vs, span)?;
        let var = self.push(Op::Binary(BinaryOp::Div), &vs, span)?;
        match name.starts_with("std") {
            true => self.push(Op::Unary(UnaryOp::Sqrt), &[var], span),
            false => Some(var),
        }
    }

    fn array_method(
        &mut self,
        name: &str,
        x: Option<Var>,
        args: &[&Expr],
        span: Span,
        m: &syn::ExprMethodCall,
    ) -> Option<Var> {
        let want = match name {
            "t" | "reversed_axes" | "sum" | "mean" | "max" | "min" | "product" => 0,
            "select" => 2,
            _ => 1,
        };
        if args.len() != want {
            let what = match want {
                0 => "no arguments",
                1 => "one argument",
                _ => "an axis and integer indices: `(Axis(k), &idx)`",
            };
            self.errors
                .at(m.paren_token.span.join(), format!("`{name}` takes {what}"));
            return None;
        }
        if name == "dot" {
            let y = self.lower_expr(args[0]);
            return self.ndarray_dot(x?, y?, span);
        }
        if name == "select" {
            let idx = self.lower_expr(args[1]);
            let (Some(x), Some(idx)) = (x, idx) else {
                return None;
            };
            let rank = self.f.shape(x).rank();
            let axis = self.axis(args[0], name, rank)?;
            return self.take(name, x, idx, axis, [&m.receiver, args[1], args[0]], span);
        }
        let x = x?;
        let rank = self.f.shape(x).rank();
        match name {
            "t" | "reversed_axes" => {
                let perm = (0..rank).rev().collect();
                self.push(Op::Transpose { perm }, &[x], span)
            }
            "permuted_axes" => {
                let Some(perm) = axes_list(args[0]) else {
                    self.errors.spanned(
                        args[0],
                        "`permuted_axes` takes the new order of the axes as integer literals, like `[1, 0, 2]`",
                    );
                    return None;
                };
                self.push(Op::Transpose { perm }, &[x], span)
            }
            "insert_axis" | "remove_axis" => {
                let positions = if name == "insert_axis" {
                    rank + 1
                } else {
                    rank
                };
                let axis = self.axis(args[0], name, positions)?;
                let mut dims = self.f.shape(x).0.clone();
                let limit = if name == "insert_axis" {
                    rank
                } else {
                    rank.saturating_sub(1)
                };
                if axis > limit || (name == "remove_axis" && rank == 0) {
                    self.errors.spanned(
                        args[0],
                        format!("axis {axis} is out of range for an array of rank {rank}"),
                    );
                    return None;
                }
                if name == "insert_axis" {
                    dims.insert(axis, Dim::Const(1));
                } else {
                    if dims[axis] != Dim::Const(1) {
                        self.errors.spanned(
                            args[0],
                            format!(
                                "`remove_axis` removes an axis of size 1, but axis {axis} has size {}",
                                dims[axis]
                            ),
                        );
                        return None;
                    }
                    dims.remove(axis);
                }
                self.push(Op::Reshape { shape: Shape(dims) }, &[x], span)
            }
            "cumsum" | "cumprod" => self.cumulative(name, x, args[0]),
            _ => {
                let (kind, with_axis) = Reduction::of(name)?;
                let axes = if with_axis {
                    let a = self.axis(args[0], name, rank)?;
                    if a >= rank {
                        self.errors.spanned(
                            args[0],
                            format!("axis {a} is out of range for an array of rank {rank}"),
                        );
                        return None;
                    }
                    vec![a]
                } else {
                    (0..rank).collect()
                };
                self.reduce(kind, x, axes, span)
            }
        }
    }

    /// The axis `e` names of an array of rank `rank` (negative counting
    /// from the end, as JAX's `axis=-1`); an error when it names none.
    fn axis(&mut self, e: &Expr, name: &str, rank: usize) -> Option<usize> {
        let a = axis_arg_of(e, rank);
        if a.is_none() {
            let why = match signed_axis_arg(e) {
                Some(k) => format!("axis {k} is out of range for an array of rank {rank}"),
                None => format!("`{name}` takes an axis as `Axis(k)` with an integer literal k (negative from the end, `Axis(-1)`)"),
            };
            self.errors.spanned(e, why);
        }
        a
    }

    /// `cumsum` / `cumprod` of `x` along the axis `axis_expr`, inclusive
    /// (numpy's): `linear_scan` compositions (`oxla_core::ops::scan`).
    fn cumulative(&mut self, name: &str, x: Var, axis_expr: &Expr) -> Option<Var> {
        let rank = self.f.shape(x).rank();
        let axis = self.axis(axis_expr, name, rank)?;
        if axis >= rank {
            self.errors.spanned(
                axis_expr,
                format!("axis {axis} is out of range for an array of rank {rank}"),
            );
            return None;
        }
        Some(if name == "cumsum" {
            oxla_core::ops::scan::cumsum(&mut self.f, x, axis)
        } else {
            oxla_core::ops::scan::cumprod(&mut self.f, x, axis)
        })
    }

    /// How many elements of `x` the `axes` (at least one) hold, a scalar
    /// of the function's float type.
    fn count_of(&mut self, x: Var, axes: &[usize], span: Span) -> Option<Var> {
        let mut count = None;
        for a in axes {
            let dim = self.f.shape(x).0[*a].clone();
            let n = self.push(
                Op::DimSize {
                    dim,
                    dtype: self.dtype,
                },
                &[],
                span,
            )?;
            count = Some(match count {
                None => n,
                Some(c) => self.push(Op::Binary(BinaryOp::Mul), &[c, n], span)?,
            });
        }
        count
    }

    fn reduce(&mut self, kind: Reduction, x: Var, axes: Vec<usize>, span: Span) -> Option<Var> {
        if self.f.shape(x).is_scalar() && !axes.is_empty() {
            return Some(x);
        }
        match kind {
            Reduction::Sum => self.push(Op::ReduceSum { axes }, &[x], span),
            Reduction::Max => self.push(Op::ReduceMax { axes }, &[x], span),
            Reduction::Min => self.push(Op::ReduceMin { axes }, &[x], span),
            Reduction::Prod => self.push(Op::ReduceProd { axes }, &[x], span),
            Reduction::Mean => {
                if axes.is_empty() {
                    return self.push(Op::ReduceSum { axes }, &[x], span);
                }
                let count = self.count_of(x, &axes, span)?;
                let s = self.push(Op::ReduceSum { axes }, &[x], span)?;
                let mut vs = [s, count];
                self.broadcast_all(&mut vs, span)?;
                self.push(Op::Binary(BinaryOp::Div), &vs, span)
            }
        }
    }

    /// `a.dot(&b)` with ndarray's meaning: vector·vector (a scalar),
    /// matrix·vector, vector·matrix, matrix·matrix.
    pub(crate) fn ndarray_dot(&mut self, a: Var, b: Var, span: Span) -> Option<Var> {
        let (ra, rb) = (self.f.shape(a).rank(), self.f.shape(b).rank());
        if !(1..=2).contains(&ra) || !(1..=2).contains(&rb) {
            self.errors.at(
                span,
                format!(
                    "`dot` takes vectors and matrices, got arrays of shapes {} and {}; use `matmul` for batched products",
                    self.f.shape(a),
                    self.f.shape(b)
                ),
            );
            return None;
        }
        self.contract(a, b, ra - 1, 0, span)
    }

    /// A product contracting axis `ka` of `a` with axis `kb` of `b`, their
    /// sizes unified; vector·vector stays the `dot` op.
    fn contract(&mut self, a: Var, b: Var, ka: usize, kb: usize, span: Span) -> Option<Var> {
        let (da, db) = (self.f.shape(a).0[ka].clone(), self.f.shape(b).0[kb].clone());
        if !self.unify(&da, &db) {
            self.errors.at(
                span,
                format!(
                    "cannot multiply arrays of shapes {} and {}: the contracted axes have sizes {da} and {db}",
                    self.f.shape(a),
                    self.f.shape(b)
                ),
            );
            return None;
        }
        if self.f.shape(a).rank() == 1 && self.f.shape(b).rank() == 1 {
            return self.push(Op::Dot, &[a, b], span);
        }
        let dims = DotDims {
            lhs_contract: vec![ka],
            rhs_contract: vec![kb],
            ..DotDims::default()
        };
        self.push(Op::DotGeneral(dims), &[a, b], span)
    }

    /// numpy's `matmul`: vectors as in `dot`; arrays of rank ≥ 3 are stacks of
    /// matrices over their leading axes (equal in both, or one operand a
    /// single matrix).
    fn matmul(&mut self, a: Var, b: Var, span: Span) -> Option<Var> {
        let (ra, rb) = (self.f.shape(a).rank(), self.f.shape(b).rank());
        if ra == 0 || rb == 0 {
            self.errors
                .at(span, "`matmul` takes arrays, not scalars: use `*` to scale");
            return None;
        }
        if ra <= 2 && rb <= 2 {
            return self.ndarray_dot(a, b, span);
        }
        let ka = ra - 1;
        let kb = if rb == 1 { 0 } else { rb - 2 };
        if ra == rb {
            // Batched over the leading ra - 2 axes.
            let nb = ra - 2;
            for i in 0..nb {
                let (x, y) = (self.f.shape(a).0[i].clone(), self.f.shape(b).0[i].clone());
                if !self.unify(&x, &y) {
                    self.errors.at(
                        span,
                        format!("cannot multiply stacks of shapes {} and {}: batch axis {i} has sizes {x} and {y}", self.f.shape(a), self.f.shape(b)),
                    );
                    return None;
                }
            }
            let (dx, dy) = (self.f.shape(a).0[ka].clone(), self.f.shape(b).0[kb].clone());
            if !self.unify(&dx, &dy) {
                self.errors.at(span, format!("cannot multiply stacks of shapes {} and {}: the contracted axes have sizes {dx} and {dy}", self.f.shape(a), self.f.shape(b)));
                return None;
            }
            let dims = DotDims {
                lhs_contract: vec![ka],
                rhs_contract: vec![kb],
                lhs_batch: (0..nb).collect(),
                rhs_batch: (0..nb).collect(),
            };
            return self.push(Op::DotGeneral(dims), &[a, b], span);
        }
        if rb <= 2 {
            // A stack times one matrix (or vector): the stack's axes lead.
            return self.contract(a, b, ka, kb, span);
        }
        if ra <= 2 {
            // One matrix (or vector) times a stack: the result's axes come
            // out as [a's free, b's stack…, b's n]; move the stack first.
            let p = self.contract(a, b, ka, kb, span)?;
            let r = self.f.shape(p).rank();
            let free_a = ra - 1;
            let stack = rb - 2;
            let mut perm: Vec<usize> = (free_a..free_a + stack).collect();
            perm.extend(0..free_a);
            perm.extend(free_a + stack..r);
            return self.push(Op::Transpose { perm }, &[p], span);
        }
        self.errors.at(
            span,
            format!(
                "`matmul` of stacks of different ranks ({} and {}) is not supported: give both the same leading axes",
                self.f.shape(a),
                self.f.shape(b)
            ),
        );
        None
    }

    /// `outer(a, b)` (`jnp.outer`): `a[i] · b[j]`, of vectors (an array of
    /// higher rank is flattened by numpy; here it is an error).
    fn outer(&mut self, a: Var, b: Var, args: &[&Expr], span: Span) -> Option<Var> {
        for (v, e) in [(a, args[0]), (b, args[1])] {
            let t = self.f.ty(v).clone();
            if t.shape.rank() != 1 || !t.dtype.is_float() {
                self.errors
                    .spanned(e, format!("`outer` takes two float vectors, got {t}"));
                return None;
            }
        }
        // `a` down the columns, `b` along the rows.
        let (row, col) = self.grid(b, a, span)?;
        let mut vs = [col, row];
        self.coerce(&mut vs, span)?;
        self.push(Op::Binary(BinaryOp::Mul), &vs, span)
    }

    /// An array function, if `name` is one (else `None`).
    pub(crate) fn lower_array_call(
        &mut self,
        name: &str,
        c: &syn::ExprCall,
    ) -> Option<Option<Var>> {
        if let Some(v) = self.lower_layout_call(name, c) {
            return Some(v);
        }
        if let Some(v) = self.lower_linalg_call(name, c) {
            return Some(v);
        }
        if let Some(v) = self.lower_factorization_call(name, c) {
            return Some(v);
        }
        if let Some(v) = self.lower_conv_call(name, c) {
            return Some(v);
        }
        let span = c.span();
        let args: Vec<&Expr> = c.args.iter().collect();
        let arity = |n: &str| -> Option<(usize, usize)> {
            Some(match n {
                "mean" | "max" | "min" | "stop_gradient" | "zeros_like" | "ones_like" => (1, 1),
                "full_like" => (2, 2),
                "matmul" | "outer" => (2, 2),
                "logsumexp" | "argmax" | "argmin" | "prod" | "sort" | "argsort" => (1, 2),
                "top_k" => (2, 2),
                "cumsum" | "cumprod" => (2, 2),
                "softmax" | "log_softmax" => (2, 2),
                "take_along_axis" | "take" => (3, 3),
                _ => return None,
            })
        };
        let (lo, hi) = arity(name)?;
        if args.len() < lo || args.len() > hi {
            let what = match (lo, hi) {
                (1, 1) => "one argument".to_string(),
                (2, 2) if name == "matmul" || name == "outer" => "two arguments".to_string(),
                (2, 2) if name == "full_like" => "an array and a value: `(x, v)`".to_string(),
                (3, 3) => {
                    "an array, integer indices and an axis: `(x, &labels, Axis(k))`".to_string()
                }
                (2, 2) => "an array and an axis: `(x, Axis(k))`".to_string(),
                _ => "an array and optionally an axis: `(x)` or `(x, Axis(k))`".to_string(),
            };
            self.errors
                .at(c.paren_token.span.join(), format!("`{name}` takes {what}"));
            return Some(None);
        }
        if name == "top_k" {
            self.errors.at(
                c.paren_token.span.join(),
                "`top_k` gives the values and their indices: bind both, `let (values, indices) = top_k(x, k);`",
            );
            return Some(None);
        }
        let x = self.lower_expr(args[0]);
        if name == "sort" || name == "argsort" {
            let x = x?;
            return Some(self.sort_call(name, x, &args));
        }
        if name == "argmax" || name == "argmin" {
            let Some(x) = x else { return Some(None) };
            let rank = self.f.shape(x).rank();
            let axis = match args.get(1) {
                Some(e) => match self.axis(e, name, rank) {
                    Some(a) => Some(a),
                    None => return Some(None),
                },
                None => None,
            };
            return Some(self.arg_choose(name == "argmax", x, axis, &args, span));
        }
        if name == "take_along_axis" {
            let idx = self.lower_expr(args[1]);
            let (Some(x), Some(idx)) = (x, idx) else {
                return Some(None);
            };
            let rank = self.f.shape(x).rank();
            let Some(axis) = self.axis(args[2], name, rank) else {
                return Some(None);
            };
            return Some(self.take_along_axis(x, idx, axis, &args, span));
        }
        if name == "take" {
            let idx = self.lower_expr(args[1]);
            let (Some(x), Some(idx)) = (x, idx) else {
                return Some(None);
            };
            let rank = self.f.shape(x).rank();
            let Some(axis) = self.axis(args[2], name, rank) else {
                return Some(None);
            };
            return Some(self.take(name, x, idx, axis, [args[0], args[1], args[2]], span));
        }
        Some(self.array_call(name, x, &args, span))
    }

    /// `x[k]`, `x[i]`, `x[[i, j]]`: the leading axes fixed, as in Rust and
    /// ndarray. Each index is an integer literal or an integer scalar known
    /// at run time (a parameter, or computed).
    ///
    /// A literal is allowed on an axis of static size only (a fixed-size
    /// array's), checked when the macro expands, and lowered as a one-hot
    /// select and a sum (its transpose puts the cotangent back at the
    /// index). A run-time index is a gather with a rank-0 index (its
    /// transpose a scatter-add), on an axis of any size: an index parameter
    /// is checked at each call, as `take`'s are; a computed index outside
    /// the axis is clamped into it (a negative one wrapped once first), as
    /// JAX's indexing does (`ops::gather::clamp_index`).
    pub(crate) fn lower_index(&mut self, i: &syn::ExprIndex) -> Option<Var> {
        let lit = |e: &Expr| match strip(e) {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(n),
                ..
            }) => n.base10_parse::<u64>().ok(),
            _ => None,
        };
        let parts: Vec<&Expr> = match strip(&i.index) {
            Expr::Array(a) => a.elems.iter().collect(),
            _ => vec![&*i.index],
        };
        // A crate `const` is read as a scalar (see `consts`): an array one
        // cannot be indexed.
        if let Expr::Path(p) = strip(&i.expr) {
            let local = p.path.get_ident().filter(|_| p.qself.is_none());
            let bound =
                local.is_some_and(|id| self.binding_at(&crate::lower::ident_name(id)).is_some());
            if !bound && crate::lower::consts::looks_like_const(p) {
                let shown = p.to_token_stream().to_string().replace(' ', "");
                self.errors.spanned(
                    &i.expr,
                    format!("`{shown}[..]`: a `const` or `static` is read as a number, so a constant array cannot be indexed; bind its values in the function (`let c = [0.25, -1.5, 2.0];`, then `c[i]` and `for ci in c` work) or pass the array as a parameter (`c: &[f64]`)"),
                );
                return None;
            }
        }
        let mut x = self.lower_expr(&i.expr)?;
        let span = i.span();
        if parts.len() > self.f.shape(x).rank() {
            self.errors.spanned(
                &i.index,
                format!(
                    "{} indices for an array of rank {}",
                    parts.len(),
                    self.f.shape(x).rank()
                ),
            );
            return None;
        }
        if let Some(arrays) = self.index_arrays(&parts) {
            return self.fancy_index(x, &arrays?, span);
        }
        for part in parts {
            x = match lit(part) {
                Some(k) => self.index_static(x, k, part, span)?,
                None => self.index_run_time(x, part, &i.expr, span)?,
            };
        }
        Some(x)
    }

    /// The index arrays of `x[[i0, i1]]` (numpy's `x[i0, i1]`), when the
    /// first index is an integer array; `Some(None)` after an error.
    fn index_arrays(&mut self, parts: &[&Expr]) -> Option<Option<Vec<Var>>> {
        let first = parts.first()?;
        // A variable (`idx`, `&idx`): lowered here, and again below when it
        // is a scalar, which only reads it again.
        let var = |e: &Expr| match strip(e) {
            Expr::Path(p) => p.path.get_ident().is_some(),
            _ => false,
        };
        if !var(first) {
            return None;
        }
        let Some(v) = self.lower_expr(first) else {
            return Some(None);
        };
        let t = self.f.ty(v).clone();
        if !matches!(t.dtype, oxla_core::DType::I32 | oxla_core::DType::I64) || t.shape.rank() == 0
        {
            return None;
        }
        let mut vs = vec![v];
        for p in &parts[1..] {
            let Some(v) = self.lower_expr(p) else {
                return Some(None);
            };
            let u = self.f.ty(v).clone();
            let same = matches!(u.dtype, oxla_core::DType::I32 | oxla_core::DType::I64)
                && u.shape.rank() == t.shape.rank()
                && (0..u.shape.rank()).all(|k| self.unify(&t.shape.0[k], &u.shape.0[k]));
            if !same {
                self.errors.spanned(
                    p,
                    format!("indexing by index arrays (`x[[i, j]]`, numpy's `x[i, j]`) takes integer arrays of one shape, {t} first and {u} here"),
                );
                return Some(None);
            }
            vs.push(v);
        }
        Some(Some(vs))
    }

    /// `x[[i0, i1, …]]` with integer arrays of one shape S (numpy's fancy
    /// indexing): the element `x[i0[s], i1[s], …]` for each s, then the
    /// axes not indexed. One gather along axis 0, then one per further
    /// index along the next axis, batched over S.
    fn fancy_index(&mut self, x: Var, idx: &[Var], span: Span) -> Option<Var> {
        if !self.f.dtype(x).is_float() {
            self.errors.at(
                span,
                format!(
                    "indexing by index arrays takes a float array, got {}",
                    self.f.ty(x)
                ),
            );
            return None;
        }
        let s_rank = self.f.shape(idx[0]).rank();
        let mut g = x;
        for (k, i) in idx.iter().enumerate() {
            // Checked at each call against x's axis k when a parameter.
            self.takes.push((*i, x, k));
            let (axis, batch) = if k == 0 { (0, 0) } else { (s_rank, s_rank) };
            g = self.push(Op::Gather { axis, batch }, &[g, *i], span)?;
        }
        Some(g)
    }

    /// `x[k]` with a literal `k` on a leading axis of static size.
    fn index_static(&mut self, x: Var, k: u64, at_expr: &Expr, span: Span) -> Option<Var> {
        let shape = self.f.shape(x).clone();
        let Dim::Const(len) = shape.0[0] else {
            self.errors.spanned(
                at_expr,
                format!("a literal index needs an axis of static size (a fixed-size array parameter, `[f64; 3]`), so that it is checked when the macro expands; this axis has the run-time size `{}`: pass the index as an integer parameter (`x[i]` with `i: usize`), checked at each call", shape.0[0]),
            );
            return None;
        };
        if k >= len {
            self.errors.spanned(
                at_expr,
                format!("index {k} is out of range for an axis of size {len}"),
            );
            return None;
        }
        let dtype = self.f.dtype(x);
        let at = self.push(
            Op::Iota {
                shape: shape.clone(),
                axis: 0,
                dtype,
            },
            &[],
            span,
        )?;
        let kv = self.f.full(k as f64, dtype, &shape);
        let hit = self.push(Op::Cmp(CmpOp::Eq), &[at, kv], span)?;
        let zero = self.f.zeros_like(x);
        let picked = self.push(Op::Select, &[hit, x, zero], span)?;
        self.push(Op::ReduceSum { axes: vec![0] }, &[picked], span)
    }

    /// `x[i]` with an integer scalar `i` known at run time.
    fn index_run_time(&mut self, x: Var, index: &Expr, array: &Expr, span: Span) -> Option<Var> {
        if matches!(strip(index), Expr::Range(_)) {
            self.errors.spanned(
                index,
                "a range is not an index: slice with `x.slice(s![1..])`",
            );
            return None;
        }
        let idx = self.lower_expr(index)?;
        let it = self.f.ty(idx).clone();
        if !matches!(it.dtype, oxla_core::DType::I32 | oxla_core::DType::I64)
            || it.shape.rank() != 0
        {
            self.errors.spanned(
                index,
                format!("an index must be an integer scalar (`x[i]` with `i: usize`) or an integer literal (`x[1]`), got {it}; slice with `x.slice(s![1..])`"),
            );
            return None;
        }
        self.take("indexing", x, idx, 0, [array, index, index], span)
    }

    /// `argmax(x)` / `argmin(x)` (the flat index, row-major) or along
    /// `Axis(k)`, as `i64`, as jnp's: the first position holding the max
    /// (min), or the first NaN. An empty axis is an error at the call, as
    /// JAX raises (`ops::reduce::nonempty_reductions`).
    /// The index is the min over the positions that hold the chosen value
    /// (or a NaN) of their coordinate, computed in the float type: exact for
    /// indices below 2^24 (f32) or 2^53 (f64).
    fn arg_choose(
        &mut self,
        max: bool,
        x: Var,
        axis: Option<usize>,
        args: &[&Expr],
        span: Span,
    ) -> Option<Var> {
        let xt = self.f.ty(x).clone();
        let (dtype, shape, rank) = (xt.dtype, xt.shape.clone(), xt.shape.rank());
        if !dtype.is_float() || rank == 0 {
            self.errors.spanned(
                args[0],
                format!(
                    "`{}` takes a float array, got {xt}",
                    if max { "argmax" } else { "argmin" }
                ),
            );
            return None;
        }
        if let Some(a) = axis.filter(|a| *a >= rank) {
            self.errors.spanned(
                args[1],
                format!("axis {a} is out of range for an array of rank {rank}"),
            );
            return None;
        }
        let axes: Vec<usize> = match axis {
            Some(a) => vec![a],
            None => (0..rank).collect(),
        };
        let op = if max {
            Op::ReduceMax { axes: axes.clone() }
        } else {
            Op::ReduceMin { axes: axes.clone() }
        };
        let m = self.push(op, &[x], span)?;
        let m = self.push(Op::StopGradient, &[m], span)?;
        let m = self.keep_axes(m, x, &axes, span)?;
        // The row-major index over `axes`: Σ iota_a · (product of the later
        // reduced sizes).
        let mut index: Option<Var> = None;
        let mut stride: Option<Var> = None;
        for a in axes.iter().rev() {
            let at = self.push(
                Op::Iota {
                    shape: shape.clone(),
                    axis: *a,
                    dtype,
                },
                &[],
                span,
            )?;
            let term = match stride {
                Some(s) => self.push(Op::Binary(BinaryOp::Mul), &[at, s], span)?,
                None => at,
            };
            index = Some(match index {
                Some(i) => self.push(Op::Binary(BinaryOp::Add), &[i, term], span)?,
                None => term,
            });
            let n = self.push(
                Op::DimSize {
                    dim: shape.0[*a].clone(),
                    dtype,
                },
                &[],
                span,
            )?;
            let n = self.push(
                Op::Broadcast {
                    shape: shape.clone(),
                    dims: vec![],
                },
                &[n],
                span,
            )?;
            stride = Some(match stride {
                Some(s) => self.push(Op::Binary(BinaryOp::Mul), &[s, n], span)?,
                None => n,
            });
        }
        let index = index.expect("at least one axis");
        let inf = self.f.full_like(f64::INFINITY, x);
        let hit = self.push(Op::Cmp(CmpOp::Eq), &[x, m], span)?;
        let nan = self.push(Op::Cmp(CmpOp::Ne), &[x, x], span)?;
        let cand = self.push(Op::Select, &[hit, index, inf], span)?;
        let cand = self.push(Op::Select, &[nan, index, cand], span)?;
        let first = self.push(Op::ReduceMin { axes }, &[cand], span)?;
        self.push(
            Op::Convert {
                dtype: oxla_core::DType::I64,
            },
            &[first],
            span,
        )
    }

    /// `sort(x[, Axis(k)])` and `argsort(x[, Axis(k)])` (`jnp.sort`,
    /// `jnp.argsort`: along the last axis by default; stable, NaN last):
    /// an `argsort` op, and for `sort` the gather of `x` by it, whose
    /// derivative is the gather of the tangent.
    fn sort_call(&mut self, name: &str, x: Var, args: &[&Expr]) -> Option<Var> {
        let t = self.f.ty(x).clone();
        let rank = t.shape.rank();
        if rank == 0 || (name == "sort" && !t.dtype.is_float()) {
            let what = if name == "sort" {
                "a float array"
            } else {
                "an array"
            };
            self.errors.spanned(
                args[0],
                format!("`{name}` takes {what} of rank ≥ 1, got {t}"),
            );
            return None;
        }
        let axis = match args.get(1) {
            Some(e) => self.axis(e, name, rank)?,
            None => rank - 1,
        };
        Some(if name == "sort" {
            oxla_core::ops::sort::sort(&mut self.f, x, axis, false)
        } else {
            oxla_core::ops::sort::argsort(&mut self.f, x, axis, false)
        })
    }

    /// `let (values, indices) = top_k(x, k)` (`lax.top_k`): the `k` largest
    /// along the last axis, largest first, and their indices (`k` an
    /// integer literal, as JAX's is static).
    pub(crate) fn top_k(&mut self, c: &syn::ExprCall) -> Option<Vec<Var>> {
        let usage =
            "`top_k` takes an array and an integer literal: `let (values, indices) = top_k(x, 3);`";
        let [xe, ke] = [c.args.first(), c.args.get(1)];
        let (Some(xe), Some(ke), 2) = (xe, ke, c.args.len()) else {
            self.errors.at(c.paren_token.span.join(), usage);
            return None;
        };
        let x = self.lower_expr(xe)?;
        let Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(k),
            ..
        }) = strip(ke)
        else {
            self.errors.spanned(ke, usage);
            return None;
        };
        let k: u64 = k.base10_parse().ok()?;
        let t = self.f.ty(x).clone();
        let rank = t.shape.rank();
        if rank == 0 || !t.dtype.is_float() {
            self.errors.spanned(
                xe,
                format!("`top_k` takes a float array of rank ≥ 1, got {t}"),
            );
            return None;
        }
        if matches!(t.shape.0[rank - 1], Dim::Const(n) if n < k) {
            self.errors.spanned(
                ke,
                format!(
                    "`top_k` of {k} along a last axis of {}",
                    t.shape.0[rank - 1]
                ),
            );
            return None;
        }
        let (values, indices) = oxla_core::ops::sort::top_k(&mut self.f, x, k);
        Some(vec![values, indices])
    }

    /// `take_along_axis(x, idx, Axis(k))`: `out[.., ..] = x[.., idx[.., ..], ..]`,
    /// one index per lane along axis `k` (`idx` has `x`'s shape without
    /// axis `k`), as `jnp.take_along_axis(x, idx[..., None], k)[..., 0]`: each
    /// row's label. Lowered as a `gather` whose leading axes (every axis but
    /// `k`) are shared with the indices: `x` with axis `k` moved last (a
    /// copy unless `k` is already last), one read per index. Its transpose
    /// is the scatter-add of the cotangent into the chosen positions. A
    /// label parameter is checked at each call (`IndexCheck`); a computed
    /// label out of range is clamped into the axis, as JAX's gather does.
    fn take_along_axis(
        &mut self,
        x: Var,
        idx: Var,
        axis: usize,
        args: &[&Expr],
        span: Span,
    ) -> Option<Var> {
        let (xt, it) =
            self.gather_operands("take_along_axis", x, idx, axis, [args[0], args[1], args[2]])?;
        let rank = xt.shape.rank();
        let kept: Vec<usize> = (0..rank).filter(|a| *a != axis).collect();
        if it.shape.rank() != kept.len() {
            self.errors.spanned(
                args[1],
                format!("`take_along_axis` needs one index per lane: indices of shape {} (x's shape {} without axis {axis}), got {}", Shape(kept.iter().map(|a| xt.shape.0[*a].clone()).collect()), xt.shape, it.shape),
            );
            return None;
        }
        for (k, a) in kept.iter().enumerate() {
            let (d, e) = (
                self.f.shape(x).0[*a].clone(),
                self.f.shape(idx).0[k].clone(),
            );
            if !self.unify(&d, &e) {
                self.errors.spanned(
                    args[1],
                    format!(
                        "`take_along_axis`: index axis {k} has size {e}, but x's axis {a} has {d}"
                    ),
                );
                return None;
            }
        }
        // A label parameter is checked at each call, as `take`'s indices are.
        self.takes.push((idx, x, axis));
        let mut perm = kept;
        perm.push(axis);
        let x = oxla_core::ops::layout::transpose(&mut self.f, x, perm);
        self.push(
            Op::Gather {
                axis: rank - 1,
                batch: rank - 1,
            },
            &[x, idx],
            span,
        )
    }

    /// `take(x, idx, Axis(k))` and `x.select(Axis(k), idx)` (`numpy.take`,
    /// ndarray's `select`): the result has shape
    /// `x.shape[..k] ++ idx.shape ++ x.shape[k+1..]`, its element at
    /// `(a, i, b)` being `x[a, idx[i], b]`. Lowered to one `gather`: a read
    /// by address per element of the result, whatever the size of `x`; its
    /// transpose is a `scatter_add` (a row picked twice gets both
    /// contributions). Every read is guarded, so no index can read outside
    /// `x`; when the indices are a parameter, every compiled call checks
    /// them against the axis first and fails naming the argument
    /// (`IndexCheck`), as numpy does; computed indices out of range are clamped.
    pub(crate) fn take(
        &mut self,
        name: &str,
        x: Var,
        idx: Var,
        axis: usize,
        // The expressions of `x`, the indices and the axis (for errors).
        exprs: [&Expr; 3],
        span: Span,
    ) -> Option<Var> {
        self.gather_operands(name, x, idx, axis, exprs)?;
        self.takes.push((idx, x, axis));
        self.push(Op::Gather { axis, batch: 0 }, &[x, idx], span)
    }

    /// The checks `take` and `take_along_axis` share: integer indices, a
    /// float array, an axis within its rank (`exprs`: the expressions of
    /// `x`, the indices and the axis, for errors). Their types, when valid.
    fn gather_operands(
        &mut self,
        name: &str,
        x: Var,
        idx: Var,
        axis: usize,
        exprs: [&Expr; 3],
    ) -> Option<(Type, Type)> {
        let (xt, it) = (self.f.ty(x).clone(), self.f.ty(idx).clone());
        if !matches!(it.dtype, oxla_core::DType::I32 | oxla_core::DType::I64) {
            self.errors.spanned(
                exprs[1],
                format!("`{name}` takes integer indices (i32 or i64), got {it}"),
            );
            return None;
        }
        if !xt.dtype.is_float() {
            self.errors
                .spanned(exprs[0], format!("`{name}` takes a float array, got {xt}"));
            return None;
        }
        let rank = xt.shape.rank();
        if axis >= rank {
            self.errors.spanned(
                exprs[2],
                format!("axis {axis} is out of range for an array of rank {rank}"),
            );
            return None;
        }
        Some((xt, it))
    }

    fn array_call(
        &mut self,
        name: &str,
        x: Option<Var>,
        args: &[&Expr],
        span: Span,
    ) -> Option<Var> {
        if name == "matmul" {
            let y = self.lower_expr(args[1]);
            return self.matmul(x?, y?, span);
        }
        if name == "outer" {
            let y = self.lower_expr(args[1]);
            return self.outer(x?, y?, args, span);
        }
        if let Some(fill) = match name {
            "zeros_like" => Some(0.0),
            "ones_like" => Some(1.0),
            _ => None,
        } {
            return Some(self.f.full_like(fill, x?));
        }
        if name == "full_like" {
            // `v` broadcast to `x`'s shape (numpy's `full_like`); no
            // derivative flows to `x`, only to `v`.
            let v = self.lower_expr(args[1])?;
            let x = x?;
            let mut vs = [x, v];
            self.broadcast_all(&mut vs, span)?;
            return Some(vs[1]);
        }
        let x = x?;
        let rank = self.f.shape(x).rank();
        let axes = match args.get(1) {
            Some(e) => {
                let a = self.axis(e, name, rank)?;
                if a >= rank {
                    self.errors.spanned(
                        e,
                        format!("axis {a} is out of range for an array of rank {rank}"),
                    );
                    return None;
                }
                vec![a]
            }
            None => (0..rank).collect(),
        };
        match name {
            "mean" => self.reduce(Reduction::Mean, x, axes, span),
            "max" => self.reduce(Reduction::Max, x, axes, span),
            "min" => self.reduce(Reduction::Min, x, axes, span),
            "prod" => self.reduce(Reduction::Prod, x, axes, span),
            "cumsum" | "cumprod" => self.cumulative(name, x, args[1]),
            "stop_gradient" => self.push(Op::StopGradient, &[x], span),
            "logsumexp" => {
                let (shifted, m) = self.shift_by_max(x, &axes, true, span)?;
                let e = self.push(Op::Unary(UnaryOp::Exp), &[shifted], span)?;
                let s = self.push(Op::ReduceSum { axes }, &[e], span)?;
                let l = self.push(Op::Unary(UnaryOp::Log), &[s], span)?;
                self.push(Op::Binary(BinaryOp::Add), &[l, m], span)
            }
            _ => {
                // softmax / log_softmax along `axes`, kept as a broadcast.
                let (shifted, _) = self.shift_by_max(x, &axes, false, span)?;
                let e = self.push(Op::Unary(UnaryOp::Exp), &[shifted], span)?;
                let s = self.push(Op::ReduceSum { axes: axes.clone() }, &[e], span)?;
                let s = self.keep_axes(s, x, &axes, span)?;
                if name == "softmax" {
                    self.push(Op::Binary(BinaryOp::Div), &[e, s], span)
                } else {
                    let l = self.push(Op::Unary(UnaryOp::Log), &[s], span)?;
                    self.push(Op::Binary(BinaryOp::Sub), &[shifted, l], span)
                }
            }
        }
    }

    /// `x - stop_gradient(max(x, axes))` (broadcast back) and the max itself
    /// (reduced shape), as JAX's logsumexp and softmax shift for stability.
    /// With `finite` (logsumexp) an infinite max shifts by 0 instead, as
    /// JAX's logsumexp does, so a row of -inf gives -inf and a row holding
    /// +inf gives +inf, not NaN; JAX's softmax and log_softmax shift by the
    /// max as it is, so a row holding +inf gives NaN everywhere.
    fn shift_by_max(
        &mut self,
        x: Var,
        axes: &[usize],
        finite: bool,
        span: Span,
    ) -> Option<(Var, Var)> {
        let m = self.push(
            Op::ReduceMax {
                axes: axes.to_vec(),
            },
            &[x],
            span,
        )?;
        let mut m = self.push(Op::StopGradient, &[m], span)?;
        let infs: &[f64] = if finite {
            &[f64::NEG_INFINITY, f64::INFINITY]
        } else {
            &[]
        };
        for &inf in infs {
            let inf = self.f.full_like(inf, m);
            let is_inf = self.push(Op::Cmp(CmpOp::Eq), &[m, inf], span)?;
            let zero = self.f.zeros_like(m);
            m = self.push(Op::Select, &[is_inf, zero, m], span)?;
        }
        let mb = self.keep_axes(m, x, axes, span)?;
        let shifted = self.push(Op::Binary(BinaryOp::Sub), &[x, mb], span)?;
        Some((shifted, m))
    }

    /// Broadcast `r`, a reduction of `like` over `axes`, back to `like`'s shape.
    fn keep_axes(&mut self, r: Var, like: Var, axes: &[usize], span: Span) -> Option<Var> {
        let shape = self.f.shape(like).clone();
        let dims = (0..shape.rank()).filter(|a| !axes.contains(a)).collect();
        self.push(Op::Broadcast { shape, dims }, &[r], span)
    }

    /// Bring `vs` to one shape as numpy broadcasts: shapes are aligned at
    /// their trailing axes; an axis of size 1 (or a missing one) stretches to
    /// the others' size; symbolic sizes at one position are unified (so the
    /// call checks they match). A size-1 axis is only known statically: an
    /// axis whose size is a symbol is never stretched.
    pub(crate) fn broadcast_all(&mut self, vs: &mut [Var], span: Span) -> Option<()> {
        let rank = vs
            .iter()
            .map(|v| self.f.shape(*v).rank())
            .max()
            .unwrap_or(0);
        for pos in 0..rank {
            // The non-1 sizes at this position (counted from the end).
            let mut target: Option<Dim> = None;
            for k in 0..vs.len() {
                let shape = self.f.shape(vs[k]).clone();
                let Some(i) = (shape.rank() + pos).checked_sub(rank) else {
                    continue;
                };
                let d = shape.0[i].clone();
                if d == Dim::Const(1) {
                    continue;
                }
                match &target {
                    None => target = Some(d),
                    Some(t) => {
                        let t = t.clone();
                        if !self.unify(&t, &d) {
                            let shapes: Vec<String> =
                                vs.iter().map(|v| self.f.shape(*v).to_string()).collect();
                            self.errors.at(
                                span,
                                format!(
                                    "cannot broadcast arrays of shapes {} together: sizes {t} and {d} at one axis",
                                    shapes.join(" and ")
                                ),
                            );
                            return None;
                        }
                        // A substitution may have renamed `t`.
                        target = Some(self.f.shape(vs[k]).0[i].clone());
                    }
                }
            }
        }
        // The common shape (re-read after unification).
        let mut common = vec![Dim::Const(1); rank];
        for v in vs.iter() {
            let shape = self.f.shape(*v);
            let off = rank - shape.rank();
            for (i, d) in shape.0.iter().enumerate() {
                if *d != Dim::Const(1) {
                    common[off + i] = d.clone();
                }
            }
        }
        let common = Shape(common);
        for v in vs.iter_mut() {
            if *self.f.shape(*v) == common {
                continue;
            }
            let shape = self.f.shape(*v).clone();
            let off = rank - shape.rank();
            // Drop the size-1 axes that stretch, then broadcast the rest.
            let kept: Vec<usize> = (0..shape.rank())
                .filter(|i| shape.0[*i] == common.0[off + i])
                .collect();
            let mut x = *v;
            if kept.len() != shape.rank() {
                let squeezed = Shape(kept.iter().map(|i| shape.0[*i].clone()).collect());
                x = self.push(Op::Reshape { shape: squeezed }, &[x], span)?;
            }
            let dims = kept.iter().map(|i| off + i).collect();
            *v = self.push(
                Op::Broadcast {
                    shape: common.clone(),
                    dims,
                },
                &[x],
                span,
            )?;
        }
        Some(())
    }
}
