//! Factorizations and solves, `jnp.linalg`'s and `jax.scipy.linalg`'s
//! spellings, each lowered to the primitives of `oxla_core::ops::linalg`
//! (which carry JAX's derivative rules) or a composition of them:
//!
//! | written | IR |
//! |---|---|
//! | `cholesky(a)` | `cholesky((a + aᵀ)/2)`: lower, NaN where not positive definite |
//! | `solve(a, b)` | `solve[0](a, b)` (LU with partial pivoting) |
//! | `solve_triangular(a, b, lower)` | `triangular_solve[1,lower,0,0](a, b)` |
//! | `triangular_solve(a, b, left_side, lower, transpose_a, unit_diagonal)` | `triangular_solve[..](a, b)` (`lax.linalg`'s) |
//! | `cho_solve(l, b)` | two triangular solves with the lower factor `l` |
//! | `inv(a)` | `solve(a, I)` |
//! | `det(a)`, `let (sign, logabsdet) = slogdet(a)` | `det`, `det_sign` and `log_abs_det` |
//!
//! Every matrix operand may carry leading batch axes (`[..., n, n]`); a
//! right-hand side `b` is `[..., n, m]`, or `[..., n]` (a vector, as
//! `jnp.linalg.solve` takes it). Flags are `bool` literals: JAX's are
//! static too.

use crate::lower::vocab::arrays::strip;
use crate::lower::Lowerer;
use oxla_core::ops::linalg::{self, TriangularSolve};
use oxla_core::{Dim, Op, Shape, Var};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::Expr;

/// The functions handled here, name and usage.
pub(crate) const FACTORIZATION_FUNCTIONS: &[(&str, &str)] = &[
    ("cholesky", "cholesky(a)"),
    ("solve", "solve(a, b)"),
    ("solve_triangular", "solve_triangular(a, b, lower)"),
    (
        "triangular_solve",
        "triangular_solve(a, b, left_side, lower, transpose_a, unit_diagonal)",
    ),
    ("cho_solve", "cho_solve(l, b)"),
    ("inv", "inv(a)"),
    ("det", "det(a)"),
    (
        "slogdet",
        "slogdet(a) (bound by `let (sign, logabsdet) = …`)",
    ),
];

impl Lowerer<'_> {
    /// A factorization or solve, if `name` is one (else `None`).
    pub(crate) fn lower_factorization_call(
        &mut self,
        name: &str,
        c: &syn::ExprCall,
    ) -> Option<Option<Var>> {
        let usage = FACTORIZATION_FUNCTIONS.iter().find(|(n, _)| *n == name)?.1;
        let args: Vec<&Expr> = c.args.iter().collect();
        let arity = match name {
            "cholesky" | "inv" | "det" | "slogdet" => 1,
            "solve" | "cho_solve" => 2,
            "solve_triangular" => 3,
            _ => 6,
        };
        if args.len() != arity {
            self.errors.at(
                c.paren_token.span.join(),
                format!("`{name}` takes `{usage}`"),
            );
            return Some(None);
        }
        if name == "slogdet" {
            self.errors.at(
                c.paren_token.span.join(),
                "`slogdet` gives the sign and log|det|: bind both, `let (sign, logabsdet) = slogdet(a);`",
            );
            return Some(None);
        }
        let span = c.span();
        // (`Some(None)`: handled, the error already reported.)
        Some(self.factorization(name, &args, span))
    }

    fn factorization(&mut self, name: &str, args: &[&Expr], span: Span) -> Option<Var> {
        let a = self.lower_expr(args[0]);
        let b = args.get(1).map(|e| self.lower_expr(e));
        let a = a?;
        self.square_matrix(a, args[0], name)?;
        let f = &mut self.f;
        match name {
            "cholesky" => {
                let s = linalg::symmetrize(f, a);
                return Some(linalg::cholesky(f, s));
            }
            "inv" => return Some(linalg::inv(f, a)),
            "det" => return Some(linalg::det(f, a)),
            _ => {}
        }
        let b = b??;
        let flag = |this: &mut Self, k: usize| this.bool_literal(args[k], name);
        let solve = match name {
            "solve" => None,
            "cho_solve" => Some(None),
            "solve_triangular" => Some(Some(TriangularSolve {
                left_side: true,
                lower: flag(self, 2)?,
                transpose_a: false,
                unit_diagonal: false,
            })),
            _ => {
                let left_side = flag(self, 2)?;
                let lower = flag(self, 3)?;
                let transpose_a = flag(self, 4)?;
                let unit_diagonal = flag(self, 5)?;
                Some(Some(TriangularSolve {
                    left_side,
                    lower,
                    transpose_a,
                    unit_diagonal,
                }))
            }
        };
        let left_side = !matches!(solve, Some(Some(t)) if !t.left_side);
        let (b, vector) = self.right_hand_side(a, b, args[1], name, left_side)?;
        let f = &mut self.f;
        let x = match solve {
            None => linalg::solve(f, a, b),
            Some(None) => linalg::cho_solve(f, a, b),
            Some(Some(t)) => linalg::triangular_solve(f, a, b, t),
        };
        match vector {
            Some(shape) => self.push(Op::Reshape { shape }, &[x], span),
            None => Some(x),
        }
    }

    /// `let (sign, logabsdet) = slogdet(a)`.
    pub(crate) fn slogdet(&mut self, c: &syn::ExprCall) -> Option<Vec<Var>> {
        let [Some(ae), None] = [c.args.first(), c.args.get(1)] else {
            self.errors.at(
                c.paren_token.span.join(),
                "`slogdet` takes one matrix: `let (sign, logabsdet) = slogdet(a);`",
            );
            return None;
        };
        let a = self.lower_expr(ae)?;
        self.square_matrix(a, ae, "slogdet")?;
        let (sign, log) = linalg::slogdet(&mut self.f, a);
        Some(vec![sign, log])
    }

    /// Checks that `a` (written `e`) is a float square matrix, or a batch
    /// of them.
    fn square_matrix(&mut self, a: Var, e: &Expr, name: &str) -> Option<()> {
        let t = self.f.ty(a).clone();
        let d = &t.shape.0;
        let r = d.len();
        if !t.dtype.is_float() || r < 2 || !self.unify(&d[r - 2], &d[r - 1]) {
            self.errors.spanned(
                e,
                format!(
                    "`{name}` takes a float square matrix `[n, n]` (or a batch `[..., n, n]`), got {t}"
                ),
            );
            return None;
        }
        Some(())
    }

    /// `b` as a matrix right-hand side of `a` (`[..., n, m]`, or `[..., m,
    /// n]` for a solve from the right), a vector `[..., n]` made a column:
    /// with the shape to give the solution back when it was a vector.
    fn right_hand_side(
        &mut self,
        a: Var,
        b: Var,
        e: &Expr,
        name: &str,
        left_side: bool,
    ) -> Option<(Var, Option<Shape>)> {
        let (ta, tb) = (self.f.ty(a).clone(), self.f.ty(b).clone());
        let (ra, rb) = (ta.shape.rank(), tb.shape.rank());
        let n = ta.shape.0[ra - 1].clone();
        let batch = &ta.shape.0[..ra - 2];
        let bad = |this: &mut Self| {
            let want = if left_side {
                "`[..., n]` or `[..., n, m]`"
            } else {
                "`[..., m, n]`"
            };
            this.errors.spanned(
                e,
                format!("`{name}` takes a right-hand side {want} of the matrix's dtype, batch axes and n (the matrix is {ta}), got {tb}"),
            );
            None
        };
        if tb.dtype != ta.dtype || rb + 1 < ra || rb > ra {
            return bad(self);
        }
        let dims = &tb.shape.0;
        let batch_ok =
            dims.len() >= batch.len() && batch.iter().zip(dims).all(|(x, y)| self.unify(x, y));
        if !batch_ok {
            return bad(self);
        }
        if rb + 1 == ra {
            if !left_side || !self.unify(&dims[rb - 1], &n) {
                return bad(self);
            }
            // The shape as unified with the matrix's.
            let vector = self.f.shape(b).clone();
            let mut column = vector.0.clone();
            column.push(Dim::Const(1));
            let col = self.push(
                Op::Reshape {
                    shape: Shape(column),
                },
                &[b],
                e.span(),
            )?;
            return Some((col, Some(vector)));
        }
        let along = if left_side { rb - 2 } else { rb - 1 };
        if !self.unify(&dims[along], &n) {
            return bad(self);
        }
        Some((b, None))
    }

    /// A `true` or `false` literal (a flag, static as JAX's).
    fn bool_literal(&mut self, e: &Expr, name: &str) -> Option<bool> {
        match strip(e) {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Bool(b),
                ..
            }) => Some(b.value),
            _ => {
                self.errors.spanned(
                    e,
                    format!(
                        "`{name}` takes its flags as `true` or `false` literals (static, as JAX's)"
                    ),
                );
                None
            }
        }
    }
}
