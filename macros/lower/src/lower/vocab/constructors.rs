//! Arrays built from nothing but a shape, and `where`:
//!
//! | written | as | derivative |
//! |---|---|---|
//! | `zeros(shape)`, `ones(shape)` | a literal broadcast to `shape` | none |
//! | `full(shape, v)` | `v` broadcast to `shape` (numpy's `full`) | to `v`: the sum of the cotangent |
//! | `arange(n)` | `iota` along axis 0 of `[n]`: `0, 1, …, n − 1` in the float type | none |
//! | `eye(n)` | `iota_0 == iota_1 ? 1 : 0` on `[n, n]` | none |
//! | `where_(a < b, x, y)`, `select(a < b, x, y)` | `a`, `b`, `x`, `y` broadcast together (jnp.where), a comparison, a select | to `x` where the condition holds, to `y` elsewhere |
//!
//! A size is an integer literal or an axis length of an array in scope —
//! `x.len()`, `x.len_of(Axis(k))`, `x.nrows()`, `x.ncols()` — which is a
//! symbol bound at the call when the axis has a run-time size. A shape is
//! one size, a tuple or array of sizes, or `x.raw_dim()` / `x.dim()`.
//! ndarray's spellings `Array::zeros(shape)`, `Array2::ones(shape)`,
//! `Array::from_elem(shape, v)` and `Array2::eye(n)` are the same functions.

use crate::lower::cmp_op;
use crate::lower::vocab::arrays::{axis_arg, strip};
use crate::lower::Lowerer;
use oxla_core::ops::elementwise::CmpOp;
use oxla_core::{Dim, Op, Shape, Var};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::Expr;

/// The functions handled here, name and usage.
pub(crate) const CONSTRUCTOR_FUNCTIONS: &[(&str, &str)] = &[
    ("zeros", "zeros(shape)"),
    ("ones", "ones(shape)"),
    ("full", "full(shape, v)"),
    ("arange", "arange(n)"),
    ("eye", "eye(n)"),
    ("where_", "where_(a < b, x, y)"),
    ("select", "select(a < b, x, y)"),
];

const SIZES: &str = "a size is an integer literal or an axis length: `x.len()`, \
     `x.len_of(Axis(k))`, `x.nrows()`, `x.ncols()`";

const SHAPES: &str = "a shape is a size, a tuple or array of sizes, or `x.raw_dim()` / `x.dim()`";

/// The constructor an ndarray associated function names (`Array2::zeros`).
pub(crate) fn ndarray_constructor(ty: &str, f: &str) -> Option<&'static str> {
    let is_array = ty == "Array"
        || ty
            .strip_prefix("Array")
            .is_some_and(|d| d.parse::<u8>().is_ok());
    if !is_array {
        return None;
    }
    Some(match f {
        "zeros" => "zeros",
        "ones" => "ones",
        "from_elem" => "full",
        "eye" => "eye",
        _ => return None,
    })
}

impl Lowerer<'_> {
    /// A constructor or `where_`/`select` call, if `name` is one.
    pub(crate) fn lower_constructor_call(
        &mut self,
        name: &str,
        c: &syn::ExprCall,
    ) -> Option<Option<Var>> {
        let (want, usage) = match name {
            "zeros" | "ones" => (1, "a shape: `(shape)`"),
            "full" => (2, "a shape and a value: `(shape, v)`"),
            "arange" | "eye" => (1, "a size: `(n)`"),
            "where_" | "select" => (3, "a comparison and two values: `(a < b, x, y)`"),
            _ => return None,
        };
        let args: Vec<&Expr> = c.args.iter().collect();
        if args.len() != want {
            self.errors
                .at(c.paren_token.span.join(), format!("`{name}` takes {usage}"));
            return Some(None);
        }
        // (`Some(None)`: handled, with the error already reported.)
        Some(self.constructor(name, &args, c.span()))
    }

    fn constructor(&mut self, name: &str, args: &[&Expr], span: Span) -> Option<Var> {
        match name {
            "zeros" | "ones" => {
                let fill = if name == "zeros" { 0.0 } else { 1.0 };
                let shape = self.shape_arg(args[0], name)?;
                self.filled(fill, shape, span)
            }
            "full" => {
                let shape = self.shape_arg(args[0], name);
                let v = self.lower_expr(args[1]);
                self.full(shape?, v?, span)
            }
            "arange" => {
                let n = self.size_arg(args[0], name)?;
                let dtype = self.dtype;
                self.push(
                    Op::Iota {
                        shape: Shape(vec![n]),
                        axis: 0,
                        dtype,
                    },
                    &[],
                    span,
                )
            }
            "eye" => {
                let n = self.size_arg(args[0], name)?;
                self.eye(n, span)
            }
            _ => self.where_(name, args[0], args[1], args[2], span),
        }
    }

    fn filled(&mut self, fill: f64, shape: Shape, span: Span) -> Option<Var> {
        let v = self.f.literal(fill, self.dtype);
        self.push(
            Op::Broadcast {
                shape,
                dims: vec![],
            },
            &[v],
            span,
        )
    }

    /// `v` broadcast to `shape`; `v` may be an array that broadcasts to it.
    fn full(&mut self, shape: Shape, v: Var, span: Span) -> Option<Var> {
        let z = self.filled(0.0, shape.clone(), span)?;
        let mut vs = [z, v];
        self.broadcast_all(&mut vs, span)?;
        if *self.f.shape(vs[1]) != *self.f.shape(vs[0]) {
            self.errors.at(
                span,
                format!(
                    "`full`: the value of shape {} does not broadcast to the shape {shape}",
                    self.f.shape(v)
                ),
            );
            return None;
        }
        Some(vs[1])
    }

    fn eye(&mut self, n: Dim, span: Span) -> Option<Var> {
        let dtype = self.dtype;
        let shape = Shape(vec![n.clone(), n]);
        let iota = |axis| Op::Iota {
            shape: shape.clone(),
            axis,
            dtype,
        };
        let (row, col) = (iota(0), iota(1));
        let row = self.push(row, &[], span)?;
        let col = self.push(col, &[], span)?;
        let diagonal = self.push(Op::Cmp(CmpOp::Eq), &[row, col], span)?;
        let one = self.f.full_like(1.0, row);
        let zero = self.f.zeros_like(row);
        self.push(Op::Select, &[diagonal, one, zero], span)
    }

    /// `jnp.where(l OP r, x, y)`: all four broadcast to one shape.
    fn where_(&mut self, name: &str, cond: &Expr, x: &Expr, y: &Expr, span: Span) -> Option<Var> {
        let cmp = match strip(cond) {
            Expr::Binary(b) => cmp_op(&b.op).map(|op| (op, b)),
            _ => None,
        };
        let x = self.lower_expr(x);
        let y = self.lower_expr(y);
        let Some((op, b)) = cmp else {
            self.errors.spanned(
                cond,
                format!("the condition of `{name}` is one comparison of two numbers or arrays (`<`, `<=`, `>`, `>=`, `==`, `!=`)"),
            );
            return None;
        };
        let l = self.lower_expr(&b.left);
        let r = self.lower_expr(&b.right);
        let mut vs = [l?, r?, x?, y?];
        self.broadcast_all(&mut vs, span)?;
        let p = self.push(Op::Cmp(op), &vs[..2], cond.span())?;
        self.push(Op::Select, &[p, vs[2], vs[3]], span)
    }

    /// `x.into_shape_with_order(shape)` (also `to_shape`, `into_shape`,
    /// `into_shape_clone`, and JAX's `reshape`): the same row-major
    /// elements in a new shape, one size of which may be `-1` (inferred, as
    /// numpy's); `x.flatten()` / `x.ravel()`: one axis. `None` when `m` is
    /// none of them.
    pub(crate) fn lower_reshape_method(&mut self, m: &syn::ExprMethodCall) -> Option<Option<Var>> {
        let name = m.method.to_string();
        let shape_arg = match (name.as_str(), m.args.len()) {
            (
                "reshape"
                | "into_shape_with_order"
                | "to_shape"
                | "into_shape"
                | "into_shape_clone",
                1,
            ) => Some(&m.args[0]),
            ("flatten" | "ravel", 0) => None,
            _ => return None,
        };
        let x = self.lower_expr(&m.receiver);
        // Each size, `None` for the one inferred.
        let sizes: Option<Vec<Option<Dim>>> = match shape_arg {
            None => Some(vec![None]),
            Some(e) => {
                let elems: Vec<&Expr> = match strip(e) {
                    Expr::Tuple(t) => t.elems.iter().collect(),
                    Expr::Array(a) => a.elems.iter().collect(),
                    e => vec![e],
                };
                let minus_one = |e: &Expr| {
                    matches!(strip(e), Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_))
                        && matches!(strip(&u.expr), Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) if i.base10_digits() == "1"))
                };
                elems
                    .into_iter()
                    .map(|e| match minus_one(e) {
                        true => Some(None),
                        false => self.size_arg(e, &name).map(Some),
                    })
                    .collect()
            }
        };
        let (Some(x), Some(sizes)) = (x, sizes) else {
            return Some(None);
        };
        let span = self.method_span(m);
        let count = self.f.shape(x).numel();
        if sizes.iter().filter(|d| d.is_none()).count() > 1 {
            self.errors
                .at(span, format!("`{name}`: at most one size may be `-1`"));
            return Some(None);
        }
        // The inferred size: the count divided by the others, when that is
        // a constant or one symbol.
        let known = sizes
            .iter()
            .flatten()
            .fold(oxla_core::Size::one(), |acc, d| {
                acc.mul(&oxla_core::Size::of(d))
            });
        let inferred = || -> Option<Dim> {
            let mut rest = count.syms.clone();
            for s in &known.syms {
                let i = rest.iter().position(|r| r == s)?;
                rest.remove(i);
            }
            if known.factor == 0 || !count.factor.is_multiple_of(known.factor) {
                return None;
            }
            let factor = count.factor / known.factor;
            match (rest.len(), factor) {
                (0, c) => Some(Dim::Const(c)),
                (1, 1) => Some(Dim::Sym(rest.pop()?)),
                _ => None,
            }
        };
        let mut dims = Vec::new();
        for d in sizes {
            match d {
                Some(d) => dims.push(d),
                None => match inferred() {
                    Some(d) => dims.push(d),
                    None => {
                        self.errors.at(
                            span,
                            format!(
                                "`{name}` of {}: {} would be a product of sizes with a run-time one, which oxla cannot name as one size; keep that axis (`x.into_shape_with_order((n, 6))`) or give every size",
                                self.f.ty(x),
                                if shape_arg.is_some() { "the `-1` size" } else { "the length" }
                            ),
                        );
                        return Some(None);
                    }
                },
            }
        }
        // A run-time size the new shape fixes (`x: [n, m]` reshaped to
        // `(n, 2, 3)` makes m 6): unified, so it is checked at the call.
        let target = Shape(dims.clone()).numel();
        let mut left = count.syms.clone();
        let mut right = target.syms.clone();
        left.retain(|s| match right.iter().position(|r| r == s) {
            Some(i) => {
                right.remove(i);
                false
            }
            None => true,
        });
        if let ([only], []) = (left.as_slice(), right.as_slice()) {
            if count.factor != 0 && target.factor.is_multiple_of(count.factor) {
                let k = Dim::Const(target.factor / count.factor);
                self.unify(&Dim::Sym(only.clone()), &k);
            }
        }
        Some(self.push(Op::Reshape { shape: Shape(dims) }, &[x], span))
    }

    /// Whether `m` is one of the reshapes returning a `Result` in ndarray.
    pub(crate) fn is_reshape_method(&self, m: &syn::ExprMethodCall) -> bool {
        matches!(
            m.method.to_string().as_str(),
            "into_shape_with_order" | "to_shape" | "into_shape" | "into_shape_clone"
        )
    }

    /// A shape argument (see the module docs).
    pub(crate) fn shape_arg(&mut self, e: &Expr, name: &str) -> Option<Shape> {
        match strip(e) {
            Expr::Tuple(t) => self.sizes(t.elems.iter(), name),
            Expr::Array(a) => self.sizes(a.elems.iter(), name),
            Expr::MethodCall(m)
                if m.args.is_empty() && (m.method == "raw_dim" || m.method == "dim") =>
            {
                let x = self.lower_expr(&m.receiver)?;
                Some(self.f.shape(x).clone())
            }
            _ => match self.size(e) {
                Some(d) => Some(Shape(vec![d])),
                None => {
                    self.errors.spanned(
                        e,
                        format!("unsupported shape in `{name}`: {SHAPES}; {SIZES}"),
                    );
                    None
                }
            },
        }
    }

    fn sizes<'e>(&mut self, elems: impl Iterator<Item = &'e Expr>, name: &str) -> Option<Shape> {
        let mut dims = Vec::new();
        let mut ok = true;
        for e in elems {
            match self.size_arg(e, name) {
                Some(d) => dims.push(d),
                None => ok = false,
            }
        }
        ok.then_some(Shape(dims))
    }

    fn size_arg(&mut self, e: &Expr, name: &str) -> Option<Dim> {
        let d = self.size(e);
        if d.is_none() {
            self.errors
                .spanned(e, format!("unsupported size in `{name}`: {SIZES}"));
        }
        d
    }

    /// A size expression's dimension, or `None` (not reported) when `e` is
    /// not one.
    fn size(&mut self, e: &Expr) -> Option<Dim> {
        match strip(e) {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) if matches!(i.suffix(), "" | "usize") => {
                i.base10_parse::<u64>().ok().map(Dim::Const)
            }
            Expr::MethodCall(m) => {
                let axis = match (m.method.to_string().as_str(), m.args.len()) {
                    ("len" | "nrows", 0) => 0,
                    ("ncols", 0) => 1,
                    ("len_of", 1) => axis_arg(&m.args[0])?,
                    _ => return None,
                };
                let x = self.lower_expr(&m.receiver)?;
                let shape = self.f.shape(x);
                let rank_ok = match m.method.to_string().as_str() {
                    "nrows" | "ncols" => shape.rank() == 2,
                    _ => axis < shape.rank(),
                };
                if !rank_ok {
                    self.errors
                        .spanned(m, format!("`{}` of an array of shape {shape}", m.method));
                    return None;
                }
                Some(shape.0[axis].clone())
            }
            _ => None,
        }
    }
}
