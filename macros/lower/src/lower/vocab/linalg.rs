//! Norms, diagonals and `einsum`, each a composition of ops whose rules
//! already give the derivatives and the batching:
//!
//! | written | IR |
//! |---|---|
//! | `norm(x)` (2-norm of a vector, Frobenius of a matrix), `norm(x, Axis(k))` | `sqrt(reduce_sum(x²))` |
//! | `x.diag()`, `diag(x)` of a matrix (ndarray, `jnp.diag`) | `select(row == col, x, 0)`, `reduce_sum` over the longer axis |
//! | `diag(v)` of a vector (`jnp.diag`: the diagonal matrix) | `broadcast`, `select(row == col, v, 0)` |
//! | `einsum("ij,jk->ik", a, b)` | `reduce_sum` of letters one operand alone drops, `dot_general`, `transpose` |
//!
//! The diagonal is picked by a select, not a product with `eye`, so an
//! infinite element off the diagonal does not make it NaN. `einsum`'s spec
//! is a string literal, read when the macro runs: one or two operands, each
//! letter at most once per operand (no traces `ii`, which `dot_general`
//! does not cover), the output's letters among the operands'.

use crate::lower::vocab::arrays::axis_arg_of;
use crate::lower::Lowerer;
use oxla_core::ops::elementwise::{BinaryOp, CmpOp, UnaryOp};
use oxla_core::{Dim, DotDims, Op, Shape, Var};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::Expr;

/// The functions handled here, name and usage.
pub(crate) const LINALG_FUNCTIONS: &[(&str, &str)] = &[
    ("norm", "norm(x[, Axis(k)])"),
    ("diag", "diag(x)"),
    ("einsum", "einsum(\"ij,jk->ik\", a, b)"),
];

/// The methods handled here (for error messages).
pub(crate) const LINALG_METHODS: &str = "diag()";

/// A parsed `einsum` spec: each operand's letters and the output's.
struct Spec {
    inputs: Vec<Vec<char>>,
    output: Vec<char>,
}

/// numpy's `einsum` spec, restricted to what `dot_general` covers.
fn parse_spec(spec: &str, operands: usize) -> Result<Spec, String> {
    let spec: String = spec.chars().filter(|c| !c.is_whitespace()).collect();
    let (ins, out) = match spec.split_once("->") {
        Some((i, o)) => (i.to_string(), Some(o.to_string())),
        None => (spec.clone(), None),
    };
    if spec.contains("...") {
        return Err("an ellipsis `...` is not supported: name every axis".into());
    }
    let inputs: Vec<Vec<char>> = ins.split(',').map(|s| s.chars().collect()).collect();
    if inputs.len() != operands {
        return Err(format!(
            "the spec names {} operands, the call passes {operands}",
            inputs.len()
        ));
    }
    if !(1..=2).contains(&operands) {
        return Err("`einsum` takes one or two operands".into());
    }
    for (k, letters) in inputs.iter().enumerate() {
        if let Some(c) = letters.iter().find(|c| !c.is_ascii_alphabetic()) {
            return Err(format!("operand {k}: `{c}` is not a letter"));
        }
        for (i, c) in letters.iter().enumerate() {
            if letters[..i].contains(c) {
                return Err(format!("operand {k} repeats `{c}` (a trace or a diagonal, which `einsum` here does not take: use `x.diag()`)"));
            }
        }
    }
    let output: Vec<char> = match out {
        Some(o) => o.chars().collect(),
        // numpy's implicit output: the letters seen once, in order.
        None => {
            let all: Vec<char> = inputs.iter().flatten().copied().collect();
            let mut once: Vec<char> = all
                .iter()
                .copied()
                .filter(|c| all.iter().filter(|d| *d == c).count() == 1)
                .collect();
            once.sort_unstable();
            once
        }
    };
    for (i, c) in output.iter().enumerate() {
        if !inputs.iter().any(|l| l.contains(c)) {
            return Err(format!("the output's `{c}` is in no operand"));
        }
        if output[..i].contains(c) {
            return Err(format!("the output repeats `{c}`"));
        }
    }
    Ok(Spec { inputs, output })
}

impl Lowerer<'_> {
    /// `norm`, `diag` or `einsum`, if `name` is one of them (else `None`).
    pub(crate) fn lower_linalg_call(
        &mut self,
        name: &str,
        c: &syn::ExprCall,
    ) -> Option<Option<Var>> {
        let usage = LINALG_FUNCTIONS.iter().find(|(n, _)| *n == name)?.1;
        let args: Vec<&Expr> = c.args.iter().collect();
        let span = c.span();
        let arity_ok = match name {
            "norm" => (1..=2).contains(&args.len()),
            "diag" => args.len() == 1,
            _ => (2..=3).contains(&args.len()),
        };
        if !arity_ok {
            self.errors.at(
                c.paren_token.span.join(),
                format!("`{name}` takes `{usage}`"),
            );
            return Some(None);
        }
        if name == "einsum" {
            return Some(self.einsum(args[0], &args[1..], span));
        }
        // (`Some(None)`: handled, the error already reported.)
        let Some(x) = self.lower_expr(args[0]) else {
            return Some(None);
        };
        Some(match name {
            "norm" => self.norm(x, args.get(1).copied(), span),
            _ => self.diag(x, args[0], span),
        })
    }

    /// `x.diag()`, if `m` is that.
    pub(crate) fn lower_linalg_method(&mut self, m: &syn::ExprMethodCall) -> Option<Option<Var>> {
        if m.method != "diag" {
            return None;
        }
        if !m.args.is_empty() {
            self.errors.at(
                m.paren_token.span.join(),
                "`diag` takes no arguments: `x.diag()`",
            );
            return Some(None);
        }
        let x = self.lower_expr(&m.receiver);
        let span = self.method_span(m);
        let Some(x) = x else { return Some(None) };
        if self.f.shape(x).rank() != 2 {
            self.errors.spanned(
                &m.receiver,
                format!("`x.diag()` takes a matrix, got {}", self.f.ty(x)),
            );
            return Some(None);
        }
        Some(self.diag(x, &m.receiver, span))
    }

    /// The 2-norm of every element of `x`, or along `axis`.
    fn norm(&mut self, x: Var, axis: Option<&Expr>, span: Span) -> Option<Var> {
        let rank = self.f.shape(x).rank();
        if !self.f.dtype(x).is_float() || rank == 0 {
            self.errors.at(
                span,
                format!("`norm` takes a float array, got {}", self.f.ty(x)),
            );
            return None;
        }
        let axes = match axis {
            None => (0..rank).collect(),
            Some(e) => match axis_arg_of(e, rank) {
                Some(k) => vec![k],
                None => {
                    self.errors.spanned(
                        e,
                        format!("`norm` takes an axis `Axis(k)` with -{rank} <= k < {rank}"),
                    );
                    return None;
                }
            },
        };
        let sq = self.push(Op::Binary(BinaryOp::Mul), &[x, x], span)?;
        let ss = self.push(Op::ReduceSum { axes }, &[sq], span)?;
        self.push(Op::Unary(UnaryOp::Sqrt), &[ss], span)
    }

    /// The `row == col` mask of `shape` (rank 2).
    fn diagonal_mask(&mut self, shape: Shape, span: Span) -> Option<Var> {
        let dtype = self.dtype;
        let iota = |axis| Op::Iota {
            shape: shape.clone(),
            axis,
            dtype,
        };
        let row = self.push(iota(0), &[], span)?;
        let col = self.push(iota(1), &[], span)?;
        self.push(Op::Cmp(CmpOp::Eq), &[row, col], span)
    }

    /// `jnp.diag`: a matrix's diagonal, or the diagonal matrix of a vector.
    fn diag(&mut self, x: Var, at: &Expr, span: Span) -> Option<Var> {
        let dims = self.f.shape(x).0.clone();
        match dims.as_slice() {
            [n] => {
                let shape = Shape(vec![n.clone(), n.clone()]);
                let wide = self.push(
                    Op::Broadcast {
                        shape: shape.clone(),
                        dims: vec![0],
                    },
                    &[x],
                    span,
                )?;
                let mask = self.diagonal_mask(shape, span)?;
                let zero = self.f.zeros_like(wide);
                self.push(Op::Select, &[mask, wide, zero], span)
            }
            [n, m] => {
                // Summed over the longer axis, each kept index holds one
                // diagonal element (the rest are exact zeros).
                let axis = match (n, m) {
                    _ if n == m => 1,
                    (Dim::Const(a), Dim::Const(b)) => usize::from(a <= b),
                    _ => {
                        self.errors.spanned(
                            at,
                            format!("`diag` of {}: the diagonal's length is the smaller of two run-time sizes, which oxla cannot name; slice the matrix square first", self.f.ty(x)),
                        );
                        return None;
                    }
                };
                let mask = self.diagonal_mask(Shape(dims), span)?;
                let zero = self.f.zeros_like(x);
                let picked = self.push(Op::Select, &[mask, x, zero], span)?;
                self.push(Op::ReduceSum { axes: vec![axis] }, &[picked], span)
            }
            _ => {
                self.errors.spanned(
                    at,
                    format!("`diag` takes a vector or a matrix, got {}", self.f.ty(x)),
                );
                None
            }
        }
    }

    /// `einsum(spec, a[, b])`.
    fn einsum(&mut self, spec: &Expr, operands: &[&Expr], span: Span) -> Option<Var> {
        let xs: Vec<Option<Var>> = operands.iter().map(|e| self.lower_expr(e)).collect();
        let text = match spec {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => s.value(),
            _ => {
                self.errors.spanned(
                    spec,
                    "`einsum` takes its spec as a string literal: `einsum(\"ij,jk->ik\", a, b)`",
                );
                return None;
            }
        };
        let spec_span = spec.span();
        let parsed = match parse_spec(&text, operands.len()) {
            Ok(p) => p,
            Err(why) => {
                self.errors.at(
                    spec_span,
                    format!("`einsum` spec \"{text}\": {why}; supported are the contractions `dot_general` covers, such as \"ij,jk->ik\", \"bij,bjk->bik\", \"i,i->\", \"i,j->ij\", \"ij->ji\""),
                );
                return None;
            }
        };
        let xs: Vec<Var> = xs.into_iter().collect::<Option<_>>()?;
        for (k, (x, letters)) in xs.iter().zip(&parsed.inputs).enumerate() {
            let rank = self.f.shape(*x).rank();
            if rank != letters.len() {
                self.errors.spanned(
                    operands[k],
                    format!(
                        "`einsum` spec \"{text}\" gives operand {k} {} axes, but it is {}",
                        letters.len(),
                        self.f.ty(*x)
                    ),
                );
                return None;
            }
            if !self.f.dtype(*x).is_float() {
                self.errors.spanned(
                    operands[k],
                    format!("`einsum` takes float arrays, got {}", self.f.ty(*x)),
                );
                return None;
            }
        }
        let out = &parsed.output;
        // A letter only one operand has and the output lacks is summed
        // away first.
        let mut ops = Vec::new();
        for (k, (x, letters)) in xs.iter().zip(&parsed.inputs).enumerate() {
            let others: Vec<char> = parsed
                .inputs
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != k)
                .flat_map(|(_, l)| l.iter().copied())
                .collect();
            let dropped: Vec<usize> = (0..letters.len())
                .filter(|i| !out.contains(&letters[*i]) && !others.contains(&letters[*i]))
                .collect();
            let kept: Vec<char> = (0..letters.len())
                .filter(|i| !dropped.contains(i))
                .map(|i| letters[i])
                .collect();
            let x = match dropped.is_empty() {
                true => *x,
                false => self.push(Op::ReduceSum { axes: dropped }, &[*x], span)?,
            };
            ops.push((x, kept));
        }
        let (result, letters) = match ops.as_slice() {
            [(a, la), (b, lb)] => {
                let pos = |l: &[char], c: char| l.iter().position(|d| *d == c);
                let shared: Vec<char> = la.iter().copied().filter(|c| lb.contains(c)).collect();
                let (batch, contract): (Vec<char>, Vec<char>) =
                    shared.iter().partition(|c| out.contains(c));
                let dims = DotDims {
                    lhs_contract: contract.iter().filter_map(|c| pos(la, *c)).collect(),
                    rhs_contract: contract.iter().filter_map(|c| pos(lb, *c)).collect(),
                    lhs_batch: batch.iter().filter_map(|c| pos(la, *c)).collect(),
                    rhs_batch: batch.iter().filter_map(|c| pos(lb, *c)).collect(),
                };
                for c in &shared {
                    let (i, j) = (pos(la, *c)?, pos(lb, *c)?);
                    let (da, db) = (self.f.shape(*a).0[i].clone(), self.f.shape(*b).0[j].clone());
                    if !self.unify(&da, &db) {
                        self.errors.at(
                            span,
                            format!("`einsum` spec \"{text}\": `{c}` is {da} in operand 0 and {db} in operand 1"),
                        );
                        return None;
                    }
                }
                let free = |l: &[char]| -> Vec<char> {
                    l.iter().copied().filter(|c| !shared.contains(c)).collect()
                };
                let mut letters = batch.clone();
                letters.extend(free(la));
                letters.extend(free(lb));
                (self.push(Op::DotGeneral(dims), &[*a, *b], span)?, letters)
            }
            [(a, la)] => (*a, la.clone()),
            _ => return None,
        };
        let perm: Vec<usize> = out
            .iter()
            .filter_map(|c| letters.iter().position(|d| d == c))
            .collect();
        if perm.iter().copied().eq(0..perm.len()) {
            return Some(result);
        }
        self.push(Op::Transpose { perm }, &[result], span)
    }
}
