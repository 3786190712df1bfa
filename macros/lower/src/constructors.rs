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
use crate::lower::Lowerer;
use crate::vocab::{axis_arg, strip};
use oxla_core::ops::elementwise::CmpOp;
use oxla_core::{Dim, Op, Shape, Var};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::Expr;

/// The functions handled here (for error messages).
pub(crate) const CONSTRUCTOR_FUNCTIONS: &str = "zeros(shape), ones(shape), full(shape, v), \
     arange(n), eye(n), where_(a < b, x, y), select(a < b, x, y)";

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

    /// A shape argument (see the module docs).
    fn shape_arg(&mut self, e: &Expr, name: &str) -> Option<Shape> {
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
