//! Binary and logical operators, integer arithmetic, and array literals.

use super::lowerer::Lowerer;
use super::syntax::cmp_op;
use super::syntax::is_compound_assign;
use super::syntax::strip_parens;
use super::syntax::IntOp;
use oxla_core::ops::elementwise::{BinaryOp, CmpOp, Rounding, UnaryOp};
use oxla_core::{DType, Dim, Op, Shape, Var};
use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{BinOp, Expr};

impl Lowerer<'_> {
    pub(crate) fn lower_binary(&mut self, b: &syn::ExprBinary) -> Option<Var> {
        if let BinOp::And(_) | BinOp::Or(_) = b.op {
            // Both sides are computed (pure values: nothing to skip), as
            // 0 or 1: `a && b` is `a + b > 1.5`, `a || b` is `a + b > 0.5`.
            let l = self.lower_expr(&b.left);
            let r = self.lower_expr(&b.right);
            let span = self.binary_span(b);
            let (l, r) = (l?, r?);
            self.bool_operand(l, &b.left)?;
            self.bool_operand(r, &b.right)?;
            let at = if matches!(b.op, BinOp::And(_)) {
                1.5
            } else {
                0.5
            };
            return self.logic(&[l, r], CmpOp::Gt, at, span);
        }
        if let BinOp::Rem(_) = b.op {
            let l = self.lower_expr(&b.left);
            let r = self.lower_expr(&b.right);
            let span = self.binary_span(b);
            let (l, r) = (l?, r?);
            if let Some(v) = self.int_arithmetic(b, IntOp::Rem, l, r, span) {
                return v;
            }
            let mut vs = [l, r];
            self.coerce(&mut vs, span)?;
            return self.float_rem(vs[0], vs[1], span);
        }
        let op = match b.op {
            BinOp::Add(_) => BinaryOp::Add,
            BinOp::Sub(_) => BinaryOp::Sub,
            BinOp::Mul(_) => BinaryOp::Mul,
            BinOp::Div(_) => BinaryOp::Div,
            op if cmp_op(&op).is_some() => {
                // A comparison as a value: a bool (an array of them), to
                // return or to cast.
                let l = self.lower_expr(&b.left);
                let r = self.lower_expr(&b.right);
                let span = self.binary_span(b);
                let (l, r) = self.int_against_literal(b, l?, r?, span)?;
                let mut vs = [l, r];
                self.coerce(&mut vs, span)?;
                return self.push(Op::Cmp(cmp_op(&op)?), &vs, span);
            }
            op if is_compound_assign(&op) => {
                self.errors.spanned(
                    op,
                    "an assignment is a statement (`x += e;`), not a value: assign, then use `x`",
                );
                return None;
            }
            op => {
                let shown = op.to_token_stream().to_string();
                self.errors.spanned(op, format!("unsupported operator `{shown}`: supported operators are + - * /, the comparisons < <= > >= == != and, on bools, ! && ||"));
                return None;
            }
        };
        let l = self.lower_expr(&b.left);
        let r = self.lower_expr(&b.right);
        let span = self.binary_span(b);
        let (l, r) = (l?, r?);
        if let Some(v) = self.int_arithmetic(b, IntOp::Arith(op), l, r, span) {
            return v;
        }
        self.float_with_int(b, l, r)?;
        let mut vs = [l, r];
        self.coerce(&mut vs, span)?;
        self.push(Op::Binary(op), &vs, span)
    }

    /// Arithmetic of a float and an integer (`x.sum() / x.len()`), which
    /// Rust refuses too: an error at the operator naming the conversion.
    fn float_with_int(&mut self, b: &syn::ExprBinary, l: Var, r: Var) -> Option<()> {
        let int = |d: DType| matches!(d, DType::I32 | DType::I64);
        let (dl, dr) = (self.f.dtype(l), self.f.dtype(r));
        let (int_side, int_ty) = match (int(dl), int(dr)) {
            (true, false) if dr.is_float() => (&b.left, self.f.ty(l).clone()),
            (false, true) if dl.is_float() => (&b.right, self.f.ty(r).clone()),
            _ => return Some(()),
        };
        // An integer array is a label or index array: the op's own error.
        if !int_ty.shape.is_scalar() {
            return Some(());
        }
        let shown = int_side.to_token_stream().to_string();
        let op = b.op.to_token_stream().to_string();
        self.errors.spanned(
            b.op,
            format!(
                "`{op}` of a float and an integer ({int_ty}): convert the integer, `({shown}) as {}`",
                self.dtype
            ),
        );
        None
    }

    /// An error at `at` unless `x` is a bool (a comparison, a bool value).
    pub(super) fn bool_operand(&mut self, x: Var, at: &impl quote::ToTokens) -> Option<()> {
        if self.f.dtype(x) == DType::Bool {
            return Some(());
        }
        self.errors.spanned(
            at,
            format!(
                "`!`, `&&` and `||` take bools (comparisons, `true`, `false`), got {}",
                self.f.ty(x)
            ),
        );
        None
    }

    /// The sum of the bools `xs` (each 0 or 1 in the float type), compared
    /// with `at` by `op`, broadcast together.
    pub(crate) fn logic(&mut self, xs: &[Var], op: CmpOp, at: f64, span: Span) -> Option<Var> {
        let mut sum = None;
        for x in xs {
            let v = self.push(Op::Convert { dtype: self.dtype }, &[*x], span)?;
            sum = Some(match sum {
                None => v,
                Some(s) => {
                    let mut vs = [s, v];
                    self.broadcast_all(&mut vs, span)?;
                    self.push(Op::Binary(BinaryOp::Add), &vs, span)?
                }
            });
        }
        let mut vs = [sum?, self.literal(at)];
        self.broadcast_all(&mut vs, span)?;
        self.push(Op::Cmp(op), &vs, span)
    }

    /// `i + 1`, `n - i`, `2 * i`, `i / 2`, `i % n` on integer scalars and
    /// arrays (an integer literal counts as one): truncating as Rust's `/`
    /// and `%` (JAX's `lax.div` and `lax.rem`; `jnp`'s `//` and `%` floor
    /// instead, which is `div_euclid`/`rem_euclid` for a positive divisor),
    /// computed in f64 and converted back,
    /// exact below 2^53 — a quotient's truncation too: `a / c` rounds to
    /// the wrong side of an integer only when |a| > 2^53. Rust panics on a
    /// zero divisor; here it gives XLA's values (`a / 0 = -1`,
    /// `a % 0 = a`). `Some` when the operands are integers.
    fn int_arithmetic(
        &mut self,
        b: &syn::ExprBinary,
        op: IntOp,
        l: Var,
        r: Var,
        span: Span,
    ) -> Option<Option<Var>> {
        // Integer scalars and arrays alike: computed exactly in f64 (below
        // 2^53), elementwise with numpy's broadcasting.
        let int = |lw: &Self, v: Var| matches!(lw.f.dtype(v), DType::I32 | DType::I64);
        let int_literal = |e: &Expr| match strip_parens(e) {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) => i.base10_parse::<i64>().ok(),
            _ => None,
        };
        let dtype = match (int(self, l), int(self, r)) {
            (true, true) => self.f.dtype(l).max(self.f.dtype(r)),
            (true, false) if int_literal(&b.right).is_some() => self.f.dtype(l),
            (false, true) if int_literal(&b.left).is_some() => self.f.dtype(r),
            _ => return None,
        };
        let wide = |lw: &mut Self, v: Var, e: &Expr| -> Option<Var> {
            match int_literal(e) {
                Some(k) if !int(lw, v) => Some(lw.f.literal(k as f64, DType::F64)),
                _ => lw.push(Op::Convert { dtype: DType::F64 }, &[v], span),
            }
        };
        let a = wide(self, l, &b.left);
        let c = wide(self, r, &b.right);
        let (Some(a), Some(c)) = (a, c) else {
            return Some(None);
        };
        let mut vs = [a, c];
        if self.coerce(&mut vs, span).is_none() {
            return Some(None);
        }
        let [a, c] = vs;
        let v = match op {
            IntOp::Arith(BinaryOp::Div) | IntOp::Rem => self.int_quotient(op, a, c, span),
            IntOp::Arith(op) => self.push(Op::Binary(op), &[a, c], span),
        };
        Some(v.and_then(|v| self.push(Op::Convert { dtype }, &[v], span)))
    }

    /// `a.rem_euclid(c)` / `a.div_euclid(c)` on integer scalars, as Rust
    /// computes them: the remainder in `0..|c|` and the quotient that goes
    /// with it (numpy's `mod` and `floor_divide` for a positive divisor).
    /// `a` an integer scalar and `c` its divisor (lowered).
    pub(super) fn int_euclid(
        &mut self,
        m: &syn::ExprMethodCall,
        a: Var,
        c: Var,
        rem: bool,
    ) -> Option<Var> {
        let int = |lw: &Self, v: Var| {
            lw.f.shape(v).is_scalar() && matches!(lw.f.dtype(v), DType::I32 | DType::I64)
        };
        let span = m.span();
        let dtype = self.f.dtype(a);
        if !int(self, c) && !matches!(strip_parens(&m.args[0]), Expr::Lit(_)) {
            self.errors.spanned(
                &m.args[0],
                format!(
                    "`{}` of an integer takes an integer, got {}",
                    m.method,
                    self.f.ty(c)
                ),
            );
            return None;
        }
        let wide = |lw: &mut Self, v: Var| match lw.f.dtype(v) {
            DType::F64 => Some(v),
            _ => lw.push(Op::Convert { dtype: DType::F64 }, &[v], span),
        };
        let (a, c) = (wide(self, a)?, wide(self, c)?);
        let r = self.int_quotient(IntOp::Rem, a, c, span)?;
        // A negative remainder moves up by |c|, its quotient by −sign(c).
        let zero = self.f.literal(0.0, DType::F64);
        let negative = self.push(Op::Cmp(CmpOp::Lt), &[r, zero], span)?;
        let sign = self.push(Op::Unary(UnaryOp::Sign), &[c], span)?;
        let v = if rem {
            let size = self.push(Op::Binary(BinaryOp::Mul), &[sign, c], span)?;
            let up = self.push(Op::Binary(BinaryOp::Add), &[r, size], span)?;
            self.push(Op::Select, &[negative, up, r], span)?
        } else {
            let q = self.int_quotient(IntOp::Arith(BinaryOp::Div), a, c, span)?;
            let down = self.push(Op::Binary(BinaryOp::Sub), &[q, sign], span)?;
            self.push(Op::Select, &[negative, down, q], span)?
        };
        self.push(Op::Convert { dtype }, &[v], span)
    }

    /// `[a, b, c]` (`jnp.array([a, b, c])`): its elements, scalars or
    /// arrays of one shape (`[[1.0, 2.0], [3.0, 4.0]]`), stacked along a
    /// new leading axis of static length; the elements may be any
    /// expressions, and derivatives flow through them.
    pub(super) fn lower_array_literal(&mut self, a: &syn::ExprArray) -> Option<Var> {
        let elems: Vec<Option<Var>> = a.elems.iter().map(|e| self.lower_expr(e)).collect();
        let span = a.bracket_token.span.join();
        if elems.is_empty() {
            self.errors.at(
                span,
                "an empty array literal has no element type: write `zeros(0)`",
            );
            return None;
        }
        let elems = elems.into_iter().collect::<Option<Vec<Var>>>()?;
        // One dtype and one shape, as Rust (and numpy) ask: the sizes are
        // unified, never broadcast.
        for (k, v) in elems.iter().enumerate().skip(1) {
            let (first, t) = (self.f.ty(elems[0]).clone(), self.f.ty(*v).clone());
            let same = t.dtype == first.dtype
                && t.shape.rank() == first.shape.rank()
                && (0..t.shape.rank()).all(|i| self.unify(&first.shape.0[i], &t.shape.0[i]));
            if !same {
                self.errors.spanned(
                    &a.elems[k],
                    format!("the elements of an array literal have one shape: the first is {first}, this one {t}"),
                );
                return None;
            }
        }
        let mut dims = vec![Dim::Const(1)];
        dims.extend(self.f.shape(elems[0]).0.iter().cloned());
        let rows: Vec<Var> = elems
            .iter()
            .map(|v| {
                self.push(
                    Op::Reshape {
                        shape: Shape(dims.clone()),
                    },
                    &[*v],
                    span,
                )
            })
            .collect::<Option<_>>()?;
        Some(oxla_core::ops::slicing::concatenate(&mut self.f, &rows, 0))
    }

    /// `meshgrid(&x, &y)` (`jnp.meshgrid`, indexing `"xy"`): `(X, Y)`, both
    /// of shape `[len(y), len(x)]`, `X[i, j] = x[j]`, `Y[i, j] = y[i]`;
    /// bound by a tuple `let`.
    pub(super) fn meshgrid(&mut self, c: &syn::ExprCall) -> Option<Vec<Var>> {
        let args: Vec<Option<Var>> = c.args.iter().map(|a| self.lower_expr(a)).collect();
        let [x, y] = args.as_slice() else {
            self.errors.at(
                c.paren_token.span.join(),
                "`meshgrid` takes two vectors: `let (xx, yy) = meshgrid(&x, &y);` (numpy's indexing \"xy\")",
            );
            return None;
        };
        let (x, y) = ((*x)?, (*y)?);
        for (v, e) in [(x, &c.args[0]), (y, &c.args[1])] {
            let t = self.f.ty(v).clone();
            if t.shape.rank() != 1 || !t.dtype.is_float() {
                self.errors
                    .spanned(e, format!("`meshgrid` takes two float vectors, got {t}"));
                return None;
            }
        }
        let (xx, yy) = self.grid(x, y, c.span())?;
        Some(vec![xx, yy])
    }

    /// The vectors `x` and `y` broadcast to `[len(y), len(x)]`: `x` along
    /// the rows, `y` down the columns (`meshgrid`, `outer`).
    pub(crate) fn grid(&mut self, x: Var, y: Var, span: Span) -> Option<(Var, Var)> {
        let shape = Shape(vec![
            self.f.shape(y).0[0].clone(),
            self.f.shape(x).0[0].clone(),
        ]);
        let across = |dims: Vec<usize>, v: Var, lw: &mut Self| {
            lw.push(
                Op::Broadcast {
                    shape: shape.clone(),
                    dims,
                },
                &[v],
                span,
            )
        };
        Some((across(vec![1], x, self)?, across(vec![0], y, self)?))
    }

    /// `a / c` truncated (`Div`) or `a − c·trunc(a / c)` (`Rem`), of
    /// integers held in f64; a zero divisor gives -1 and `a`.
    fn int_quotient(&mut self, op: IntOp, a: Var, c: Var, span: Span) -> Option<Var> {
        let ratio = self.push(Op::Binary(BinaryOp::Div), &[a, c], span)?;
        let q = self.push(Op::Unary(UnaryOp::Round(Rounding::Trunc)), &[ratio], span)?;
        let zero = self.f.zeros_like(c);
        let by_zero = self.push(Op::Cmp(CmpOp::Eq), &[c, zero], span)?;
        let (value, on_zero) = match op {
            IntOp::Rem => {
                let whole = self.push(Op::Binary(BinaryOp::Mul), &[c, q], span)?;
                (self.push(Op::Binary(BinaryOp::Sub), &[a, whole], span)?, a)
            }
            _ => (q, self.f.full_like(-1.0, q)),
        };
        self.push(Op::Select, &[by_zero, on_zero, value], span)
    }

    /// `x as i64` / `x as i32` of an integer scalar or array, with Rust's
    /// `as`: widening is exact, narrowing wraps modulo 2^32 (JAX's
    /// `astype` does too). Computed in f64, as integer arithmetic is
    /// (exact below 2^53): a kernel converts integers only to and from
    /// floats.
    pub(crate) fn int_cast(&mut self, x: Var, to: DType, span: Span) -> Option<Var> {
        let wide = self.push(Op::Convert { dtype: DType::F64 }, &[x], span)?;
        let v = match (self.f.dtype(x), to) {
            (DType::I64, DType::I32) => {
                let half = self.f.full_like(2f64.powi(31), wide);
                let whole = self.f.full_like(2f64.powi(32), wide);
                let up = self.push(Op::Binary(BinaryOp::Add), &[wide, half], span)?;
                let r = self.float_rem_euclid(up, whole, span)?;
                self.push(Op::Binary(BinaryOp::Sub), &[r, half], span)?
            }
            _ => wide,
        };
        self.push(Op::Convert { dtype: to }, &[v], span)
    }

    fn binary_span(&mut self, b: &syn::ExprBinary) -> Span {
        let (l, r) = (
            self.edge_span(&b.left, true),
            self.edge_span(&b.right, false),
        );
        l.join(r).unwrap_or(l)
    }
}
