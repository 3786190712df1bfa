//! Functional updates: writing into a `let mut` array, JAX's
//! `x.at[i].set(v)` / `.add` / `.mul` and `lax.dynamic_update_slice` in
//! Rust's spelling.
//!
//! | written | JAX | IR |
//! |---|---|---|
//! | `x[i] = v`, `x[[i, j]] = v` | `x.at[i].set(v)`, `x.at[i, j].set(v)` | `select(mask, v, x)` |
//! | `x[i] += v` (`-=`, `*=`, `/=`, `%=`) | `x.at[i].add(v)` (`.multiply`, …) | `select(mask, x + v, x)` |
//! | `x[i] = x[i].max(v)` | `x.at[i].max(v)` | the same, read then written |
//! | `x.slice_mut(s![a..b, ..]).assign(&y)` | `x.at[a:b].set(y)` | `select(mask, pad(y), x)` |
//! | `x.slice_mut(s![k..k + w]).assign(&y)` | `lax.dynamic_update_slice(x, y, (k,))` | `select(mask, scatter_add(y, k + iota(w)), x)` |
//!
//! The variable's binding takes the new array, as `x = …` would: in a
//! loop it is a carry, in an `if` both branches' arrays are merged.
//!
//! Why a select and not a scatter op: the mask compares an `iota` with the
//! index, so the update is elementwise (fused into one kernel with what
//! computes `v`), linear in `x` and in `v` (the JVP is the same select of
//! the tangents, the transpose routes the cotangent by the same mask: JAX's
//! scatter rules for unique indices), and batched by the generic
//! elementwise rule. Its cost is one pass over `x` per write.
//!
//! Indices as JAX's updates take them: a negative index is wrapped once
//! (`i + n`); an index still outside `0..n` writes nothing (JAX drops
//! out-of-range scatter updates). An index *parameter* out of range is an
//! error at the call, as reading `x[i]` with it is. A window's start is
//! clamped so the window fits, as `lax.dynamic_update_slice` clamps it.

use crate::lower::vocab::slicing::{int_lit, start_bound, strip, Item};
use crate::lower::{ident_name, Lowerer};
use oxla_core::ops::elementwise::{BinaryOp, CmpOp};
use oxla_core::shape::derived::{self, Bound};
use oxla_core::{DType, Dim, Op, Shape, Var};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{BinOp, Expr};

const WRITE_HELP: &str = "write into a `let mut` array variable: `x[i] = v` (a row, or an element of a 1-D array), `x[[i, j]] = v` (an element of a matrix), `x[i] += v`, or `x.slice_mut(s![a..b]).assign(&y)`";

/// The variable an assignment statement writes: `x` of `x = …`, `x[i] = …`,
/// `x[[i, j]] += …` and `x.slice_mut(..).assign(..)` (what a loop carries
/// and an `if` merges).
pub(crate) fn written_variable(target: &Expr) -> Option<&syn::Ident> {
    match crate::lower::strip_parens(target) {
        Expr::Path(p) if p.qself.is_none() => p.path.get_ident(),
        Expr::Index(ix) => match crate::lower::strip_parens(&ix.expr) {
            Expr::Path(p) if p.qself.is_none() => p.path.get_ident(),
            _ => None,
        },
        _ => None,
    }
}

/// `x.slice_mut(s![..])` of `x.slice_mut(s![..]).assign(&y)`: `x` and the
/// `s![..]` argument.
pub(crate) fn slice_assign_target(m: &syn::ExprMethodCall) -> Option<(&Expr, &Expr)> {
    if m.method != "assign" {
        return None;
    }
    match crate::lower::strip_parens(&m.receiver) {
        Expr::MethodCall(s) if s.method == "slice_mut" && s.args.len() == 1 => {
            Some((&s.receiver, &s.args[0]))
        }
        _ => None,
    }
}

/// Where a window sits along one axis of the array written into.
enum Place {
    /// `start..` with `step`, as `pad` places it.
    Static { start: Dim, step: u64 },
    /// At the positions (an i64 vector) a scatter-add places it.
    At(Var),
}

impl Lowerer<'_> {
    /// `x[idx] = rhs` or `x[idx] op= rhs`.
    pub(crate) fn lower_element_assign(
        &mut self,
        ix: &syn::ExprIndex,
        op: Option<&BinOp>,
        rhs: &Expr,
    ) {
        let _ = self.element_update(ix, op, rhs);
    }

    fn element_update(
        &mut self,
        ix: &syn::ExprIndex,
        op: Option<&BinOp>,
        rhs: &Expr,
    ) -> Option<()> {
        let id = match crate::lower::strip_parens(&ix.expr) {
            Expr::Path(p) if p.qself.is_none() => p.path.get_ident(),
            _ => None,
        };
        let Some(id) = id else {
            let msg = match crate::lower::strip_parens(&ix.expr) {
                Expr::Index(_) => format!("`x[i][j] = v` is not supported: index once with all the indices, `x[[i, j]] = v`; {WRITE_HELP}"),
                _ => WRITE_HELP.to_string(),
            };
            self.errors.spanned(&ix.expr, msg);
            self.lower_expr(rhs);
            return None;
        };
        let Some((si, bi)) = self.assignable(id) else {
            self.lower_expr(rhs);
            return None;
        };
        let name = ident_name(id);
        let Some(x) = self.scopes[si][bi].var else {
            self.lower_expr(rhs);
            return None;
        };
        let span = ix.span();
        let parts: Vec<&Expr> = match strip(&ix.index) {
            Expr::Array(a) => a.elems.iter().collect(),
            _ => vec![&*ix.index],
        };
        let xt = self.f.ty(x).clone();
        let rank = xt.shape.rank();
        if parts.len() > rank || parts.is_empty() {
            self.errors.spanned(
                &ix.index,
                format!(
                    "{} indices for `{name}`, an array of rank {rank} ({xt}): a write takes one index per leading axis it picks, at most {rank} (`{name}[i] = row`, `{name}[[i, j]] = v`)",
                    parts.len()
                ),
            );
            self.lower_expr(rhs);
            return None;
        }
        if !xt.dtype.is_float() {
            self.errors.spanned(
                &ix.expr,
                format!("writing into an element takes a float array, `{name}` is {xt}"),
            );
            self.lower_expr(rhs);
            return None;
        }
        let mut mask: Option<Var> = None;
        for (axis, part) in parts.iter().enumerate() {
            let m = self.index_mask(x, axis, part, span);
            let m = match (mask, m) {
                (_, None) => None,
                (None, Some(m)) => Some(m),
                (Some(a), Some(m)) => self.push(Op::Select, &[a, m, a], span),
            };
            let Some(m) = m else {
                self.lower_expr(rhs);
                return None;
            };
            mask = Some(m);
        }
        let mask = mask?;
        let v = self.lower_expr(rhs)?;
        // The value is the block `x[idx]` (shape `x.shape[parts..]`) or
        // broadcasts to it: trailing axes aligned, as numpy's.
        let block = Shape(xt.shape.0[parts.len()..].to_vec());
        let vt = self.f.ty(v).clone();
        let mut vs = [x, v];
        let off = block.rank().saturating_sub(vt.shape.rank());
        let fits = vt.shape.rank() <= block.rank()
            && vt
                .shape
                .0
                .iter()
                .enumerate()
                .all(|(k, d)| *d == Dim::Const(1) || self.unify(&block.0[off + k].clone(), d))
            && {
                self.coerce(&mut vs, span)?;
                *self.f.shape(vs[0]) == xt.shape && self.f.dtype(vs[1]) == xt.dtype
            };
        if !fits {
            let site: &dyn quote::ToTokens = match op {
                Some(op) => op,
                None => rhs,
            };
            self.errors.spanned(
                site,
                format!("`{name}[..]` here is {} of shape {block}, but this writes {vt}: write a value of that shape, or a scalar", xt.dtype.name()),
            );
            return None;
        }
        let v = vs[1];
        let new = match op {
            None => v,
            Some(op) => {
                let bin = match op {
                    BinOp::AddAssign(_) => BinaryOp::Add,
                    BinOp::SubAssign(_) => BinaryOp::Sub,
                    BinOp::MulAssign(_) => BinaryOp::Mul,
                    BinOp::DivAssign(_) => BinaryOp::Div,
                    BinOp::RemAssign(_) => {
                        let r = self.float_rem(x, v, op.span());
                        let r = r?;
                        return self.commit(si, bi, &name, x, mask, r, span);
                    }
                    _ => {
                        let shown = quote::ToTokens::to_token_stream(op).to_string();
                        self.errors.spanned(
                            op,
                            format!("unsupported compound assignment `{shown}` into an element: supported are `=`, `+=`, `-=`, `*=`, `/=` and `%=` (for JAX's `.at[i].max(v)` write `x[i] = x[i].max(v)`)"),
                        );
                        return None;
                    }
                };
                self.push(Op::Binary(bin), &[x, v], op.span())?
            }
        };
        self.commit(si, bi, &name, x, mask, new, span)
    }

    /// The binding at `(si, bi)` takes `select(mask, new, x)`.
    #[allow(clippy::too_many_arguments)]
    fn commit(
        &mut self,
        si: usize,
        bi: usize,
        name: &str,
        x: Var,
        mask: Var,
        new: Var,
        span: Span,
    ) -> Option<()> {
        let out = self.push(Op::Select, &[mask, new, x], span)?;
        let site = quote::quote_spanned!(span=> #name);
        if self.keep_type(name, x, out, &site) {
            self.scopes[si][bi].var = Some(out);
        }
        Some(())
    }

    /// Where `x`'s coordinate along `axis` equals the index `part` (a bool
    /// array of `x`'s shape): the index wrapped once when negative; out of
    /// range it matches nowhere.
    fn index_mask(&mut self, x: Var, axis: usize, part: &Expr, span: Span) -> Option<Var> {
        let shape = self.f.shape(x).clone();
        let n = shape.0[axis].clone();
        let at = match int_lit(part) {
            Some(k) => {
                if let Dim::Const(len) = n {
                    let len = len as i64;
                    if k >= len || k < -len {
                        self.errors.spanned(
                            part,
                            format!("index {k} is out of range for axis {axis} of size {len}"),
                        );
                        return None;
                    }
                }
                self.f.literal(k as f64, DType::F64)
            }
            None => {
                if matches!(strip(part), Expr::Range(_)) {
                    self.errors.spanned(
                        part,
                        "a range is not an index: write into a slice with `x.slice_mut(s![a..b]).assign(&y)`",
                    );
                    return None;
                }
                let idx = self.lower_expr(part)?;
                let it = self.f.ty(idx).clone();
                if !matches!(it.dtype, DType::I32 | DType::I64) || !it.shape.is_scalar() {
                    self.errors.spanned(
                        part,
                        format!("an index in a write is an integer scalar (`x[i] = v` with `i: usize`, a loop variable) or an integer literal, got {it}; writing at an array of indices is not supported"),
                    );
                    return None;
                }
                // An index parameter is checked at each call, as a read's.
                self.takes.push((idx, x, axis));
                self.push(Op::Convert { dtype: DType::F64 }, &[idx], span)?
            }
        };
        // Wrapped once: `i + n` where `i < 0`.
        let size = self.push(
            Op::DimSize {
                dim: n,
                dtype: DType::F64,
            },
            &[],
            span,
        )?;
        let zero = self.f.literal(0.0, DType::F64);
        let neg = self.push(Op::Cmp(CmpOp::Lt), &[at, zero], span)?;
        let up = self.push(Op::Binary(BinaryOp::Add), &[at, size], span)?;
        let at = self.push(Op::Select, &[neg, up, at], span)?;
        let at = self.push(
            Op::Broadcast {
                shape: shape.clone(),
                dims: vec![],
            },
            &[at],
            span,
        )?;
        let coord = self.push(
            Op::Iota {
                shape,
                axis,
                dtype: DType::F64,
            },
            &[],
            span,
        )?;
        self.push(Op::Cmp(CmpOp::Eq), &[coord, at], span)
    }

    /// `x.slice_mut(s![..]).assign(&y)`: `x` takes `y` in the window.
    pub(crate) fn lower_slice_assign(&mut self, m: &syn::ExprMethodCall) {
        let _ = self.slice_update(m);
    }

    fn slice_update(&mut self, m: &syn::ExprMethodCall) -> Option<()> {
        let (target, s_arg) = slice_assign_target(m).expect("a slice assignment");
        let span = m.span();
        let help = "`x.slice_mut(s![..]).assign(&y)` writes `y` into a window of the `let mut` array `x`: one item per axis of `x`, each a range with integer-literal bounds (`1..4`, `..;2`), a window `k..k + w` with `k` an integer known at run time, or an integer literal index";
        let id = match crate::lower::strip_parens(target) {
            Expr::Path(p) if p.qself.is_none() => p.path.get_ident(),
            _ => None,
        };
        let [y_e] = m.args.iter().collect::<Vec<_>>()[..] else {
            self.errors.spanned(&m.method, help);
            return None;
        };
        let Some(id) = id else {
            self.errors.spanned(target, help);
            return None;
        };
        let (si, bi) = self.assignable(id)?;
        let name = ident_name(id);
        let x = self.scopes[si][bi].var?;
        let items = match strip(s_arg) {
            Expr::Macro(mac) if mac.mac.path.is_ident("s") => {
                self.s_items(&mac.mac.tokens, mac.span())??
            }
            _ => {
                self.errors.spanned(s_arg, help);
                return None;
            }
        };
        let xt = self.f.ty(x).clone();
        if !xt.dtype.is_float() {
            self.errors.spanned(
                target,
                format!("writing into a slice takes a float array, `{name}` is {xt}"),
            );
            return None;
        }
        let shape = xt.shape.clone();
        if items.iter().any(|i| matches!(i, Item::NewAxis)) || items.len() != shape.rank() {
            self.errors.spanned(
                s_arg,
                format!(
                    "`s![..]` here covers {} of the {} axes of `{name}` ({xt}) or adds one: {help}",
                    items.len(),
                    shape.rank()
                ),
            );
            return None;
        }
        // Per axis: the window's length, where it sits, and whether an
        // index dropped the axis from `y`.
        let mut window: Vec<Dim> = Vec::new();
        let mut places: Vec<Place> = Vec::new();
        let mut dropped: Vec<bool> = Vec::new();
        for (k, item) in items.iter().enumerate() {
            let n = shape.0[k].clone();
            let range = |a: Bound, b: Bound, s: u64| -> Result<(Dim, Dim), String> {
                Ok((
                    derived::start_index(&n, a)?,
                    derived::slice_len(&n, a, b, s)?,
                ))
            };
            let (len, place, drop) = match item {
                Item::Range(a, b, s) => match range(*a, *b, *s) {
                    Ok((start, len)) => (len, Place::Static { start, step: *s }, false),
                    Err(e) => {
                        self.errors
                            .spanned(s_arg, format!("{e} (`{name}` is {xt})"));
                        return None;
                    }
                },
                Item::Index(i) => {
                    let a = start_bound(*i);
                    let b = match *i {
                        -1 => Bound::End(0),
                        i if i < 0 => Bound::End(i.unsigned_abs() - 1),
                        i => Bound::Start(i as u64 + 1),
                    };
                    match range(a, b, 1) {
                        Ok((start, _)) => (Dim::Const(1), Place::Static { start, step: 1 }, true),
                        Err(e) => {
                            self.errors
                                .spanned(s_arg, format!("{e} (`{name}` is {xt})"));
                            return None;
                        }
                    }
                }
                Item::Window(e, w) => {
                    let at = self.window_positions(&n, e, *w, span)?;
                    (Dim::Const(*w), Place::At(at), false)
                }
                Item::RunTime(e) => {
                    let at = self.window_positions(&n, e, 1, span)?;
                    (Dim::Const(1), Place::At(at), true)
                }
                Item::NewAxis => unreachable!("rejected above"),
            };
            window.push(len);
            places.push(place);
            dropped.push(drop);
        }
        // `y` has the window's shape without the indexed axes (or is a
        // scalar): it gets them back as axes of size 1.
        let y = self.lower_expr(y_e)?;
        let yt = self.f.ty(y).clone();
        let kept: Vec<Dim> = window
            .iter()
            .zip(&dropped)
            .filter(|(_, d)| !**d)
            .map(|(w, _)| w.clone())
            .collect();
        let mut ok = yt.shape.is_scalar()
            || (yt.shape.rank() == kept.len()
                && kept
                    .iter()
                    .zip(&yt.shape.0.clone())
                    .all(|(a, b)| self.unify(a, b)));
        let y = if ok && yt.dtype != xt.dtype {
            let mut vs = [x, y];
            self.coerce(&mut vs, span)?;
            ok = self.f.dtype(vs[1]) == xt.dtype;
            vs[1]
        } else {
            y
        };
        if !ok {
            self.errors.spanned(
                y_e,
                format!(
                    "this window of `{name}` is {} of shape {}, but `y` is {yt}: assign an array of the window's shape (or a scalar)",
                    xt.dtype.name(),
                    Shape(kept)
                ),
            );
            return None;
        }
        // Re-read after unification.
        let window: Vec<Dim> = (0..window.len())
            .map(|k| match &items[k] {
                Item::Range(a, b, s) => derived::slice_len(&self.f.shape(x).0[k], *a, *b, *s)
                    .unwrap_or(window[k].clone()),
                _ => window[k].clone(),
            })
            .collect();
        let wshape = Shape(window);
        let y = if self.f.shape(y).is_scalar() {
            self.push(
                Op::Broadcast {
                    shape: wshape.clone(),
                    dims: vec![],
                },
                &[y],
                span,
            )?
        } else if *self.f.shape(y) != wshape {
            self.push(
                Op::Reshape {
                    shape: wshape.clone(),
                },
                &[y],
                span,
            )?
        } else {
            y
        };
        let ones = self.f.full(1.0, xt.dtype, &wshape);
        let placed = self.place(y, &places, x, span)?;
        let covered = self.place(ones, &places, x, span)?;
        let zero = self.f.zeros_like(x);
        let mask = self.push(Op::Cmp(CmpOp::Ne), &[covered, zero], span)?;
        self.commit(si, bi, &name, x, mask, placed, span)
    }

    /// `w` (the window's shape) placed into zeros of `x`'s shape, one axis
    /// at a time.
    fn place(&mut self, w: Var, places: &[Place], x: Var, span: Span) -> Option<Var> {
        let full = self.f.shape(x).clone();
        let mut v = w;
        for (k, place) in places.iter().enumerate() {
            let mut dims = self.f.shape(v).0.clone();
            dims[k] = full.0[k].clone();
            let shape = Shape(dims);
            v = match place {
                Place::Static { start, step } => {
                    let r = shape.rank();
                    let mut starts = vec![Dim::Const(0); r];
                    starts[k] = start.clone();
                    let mut steps = vec![1; r];
                    steps[k] = *step;
                    oxla_core::ops::slicing::pad(&mut self.f, v, shape, starts, steps)
                }
                Place::At(at) => self.push(
                    Op::ScatterAdd {
                        axis: k,
                        batch: 0,
                        shape,
                    },
                    &[v, *at],
                    span,
                )?,
            };
        }
        Some(v)
    }
}
