//! Slicing vocabulary, as ndarray spells it:
//!
//! | written | IR |
//! |---|---|
//! | `x.slice(s![1.., ..;2, 3, -2.., NewAxis])` | `slice` (+ `reshape` for indices and `NewAxis`) |
//! | `x.slice_axis(Axis(k), Slice::from(a..b))` | `slice` |
//! | `concatenate(Axis(k), &[a.view(), b.view()])`, `concatenate![Axis(k), a, b]` | `concatenate` |
//! | `stack(Axis(k), &[a.view(), b.view()])`, `stack![Axis(k), a, b]` | `reshape` + `concatenate` |
//!
//! Bounds and steps are integer literals; a negative bound counts from the
//! end, as in ndarray. On an axis of static size an out-of-range slice is a
//! compile error; on an axis of run-time size the derived length
//! (`shape::derived`) checks it when the function is called.

use crate::lower::Lowerer;
use oxla_core::ops::slicing::{concatenate, slice_bounds};
use oxla_core::shape::derived::Bound;
use oxla_core::{DType, Dim, Op, Shape, Var};
use proc_macro2::{Span, TokenStream};
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Token};

const S_MACRO_HELP: &str = "`s![..]` takes one item per axis: a range with integer-literal bounds (`1..`, `..-1`, `2..5`, `..=3`), optionally with a step `;k` (k >= 1), an integer index (a literal, or a scalar known at run time), or `NewAxis`";

/// One item of `s![..]`.
pub(crate) enum Item {
    Range(Bound, Bound, u64),
    Index(i64),
    /// An index known at run time (`s![.., o]`): a gather along its axis.
    RunTime(Box<Expr>),
    /// `k..k + w` with `k` known at run time and `w` a literal
    /// (`lax.dynamic_slice`): a window of `w`, gathered.
    Window(Box<Expr>, u64),
    NewAxis,
}

pub(crate) fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip(&p.expr),
        Expr::Group(g) => strip(&g.expr),
        Expr::Reference(r) if r.mutability.is_none() => strip(&r.expr),
        e => e,
    }
}

/// An integer literal, possibly negated.
pub(crate) fn int_lit(e: &Expr) -> Option<i64> {
    match strip(e) {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => int_lit(&u.expr).map(|v| -v),
        _ => None,
    }
}

fn is_path(e: &Expr, name: &str) -> bool {
    matches!(strip(e), Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == name))
}

/// A start bound (`k` or `-k`).
pub(crate) fn start_bound(v: i64) -> Bound {
    if v < 0 {
        Bound::End(v.unsigned_abs())
    } else {
        Bound::Start(v as u64)
    }
}

/// `k..k + w` (or `k..w + k`, `k..=k + w - 1` is not taken) with a
/// literal `w`: the window's start and length.
fn window(r: &syn::ExprRange) -> Option<Item> {
    let start = r.start.as_deref()?;
    let Expr::Binary(b) = strip(r.end.as_deref()?) else {
        return None;
    };
    if !matches!(b.op, syn::BinOp::Add(_)) || !matches!(r.limits, syn::RangeLimits::HalfOpen(_)) {
        return None;
    }
    let same = |e: &Expr| {
        quote::ToTokens::to_token_stream(strip(e)).to_string()
            == quote::ToTokens::to_token_stream(strip(start)).to_string()
    };
    let w = match (int_lit(&b.left), int_lit(&b.right)) {
        (None, Some(w)) if same(&b.left) => w,
        (Some(w), None) if same(&b.right) => w,
        _ => return None,
    };
    u64::try_from(w)
        .ok()
        .map(|w| Item::Window(Box::new(start.clone()), w))
}

/// A range `a..b` / `a..=b` as bounds; `None` when not literal.
fn range_bounds(r: &syn::ExprRange) -> Option<(Bound, Bound)> {
    let start = match &r.start {
        None => Bound::Start(0),
        Some(e) => start_bound(int_lit(e)?),
    };
    let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
    let stop = match &r.end {
        None => Bound::End(0),
        Some(e) => {
            let v = int_lit(e)?;
            match (inclusive, v) {
                (false, v) => start_bound(v),
                (true, -1) => Bound::End(0),
                (true, v) if v < 0 => Bound::End(v.unsigned_abs() - 1),
                (true, v) => Bound::Start(v as u64 + 1),
            }
        }
    };
    Some((start, stop))
}

impl Lowerer<'_> {
    /// `x.slice(s![..])` or `x.slice_axis(..)`, if `m` is one.
    pub(crate) fn lower_slicing_method(&mut self, m: &syn::ExprMethodCall) -> Option<Option<Var>> {
        let name = m.method.to_string();
        let args: Vec<&Expr> = m.args.iter().collect();
        match (name.as_str(), args.as_slice()) {
            ("slice", [arg]) => {
                let x = self.lower_expr(&m.receiver);
                let Expr::Macro(mac) = strip(arg) else {
                    self.errors
                        .spanned(arg, format!("`slice` takes `s![..]`: {S_MACRO_HELP}"));
                    return Some(None);
                };
                if !mac.mac.path.is_ident("s") {
                    self.errors
                        .spanned(arg, format!("`slice` takes `s![..]`: {S_MACRO_HELP}"));
                    return Some(None);
                }
                let items = self.s_items(&mac.mac.tokens, mac.span())?;
                // After an error in the receiver (already reported) this is
                // still `slice`: `None` here would report it as unknown.
                let Some(x) = x else { return Some(None) };
                Some(self.slice_items(x, &items, arg.span()))
            }
            // `x.row(i)` / `x.column(j)` of a matrix: `s![i, ..]` /
            // `s![.., j]`, the index a literal or known at run time.
            ("row" | "column", [at]) => {
                let x = self.lower_expr(&m.receiver);
                let Some(x) = x else { return Some(None) };
                if self.f.shape(x).rank() != 2 {
                    self.errors.spanned(
                        &m.method,
                        format!("`{name}` takes a matrix, got {}", self.f.ty(x)),
                    );
                    return Some(None);
                }
                let pick = match int_lit(at) {
                    Some(k) => Item::Index(k),
                    None => Item::RunTime(Box::new((*at).clone())),
                };
                let whole = Item::Range(Bound::Start(0), Bound::End(0), 1);
                let items = match name.as_str() {
                    "row" => vec![pick, whole],
                    _ => vec![whole, pick],
                };
                Some(self.slice_items(x, &Some(items), m.span()))
            }
            ("slice_axis", [axis, s]) => {
                let x = self.lower_expr(&m.receiver);
                let k = crate::lower::vocab::arrays::axis_arg(axis);
                let range = match strip(s) {
                    Expr::Call(c)
                        if c.args.len() == 1
                            && matches!(&*c.func, Expr::Path(p) if p.path.segments.len() == 2
                                && p.path.segments[0].ident == "Slice"
                                && p.path.segments[1].ident == "from") =>
                    {
                        match strip(&c.args[0]) {
                            Expr::Range(r) => range_bounds(r),
                            _ => None,
                        }
                    }
                    _ => None,
                };
                let (Some(k), Some((a, b))) = (k, range) else {
                    self.errors.spanned(
                        m,
                        "`slice_axis` takes `Axis(k)` and `Slice::from(a..b)` with integer literals",
                    );
                    return Some(None);
                };
                let Some(x) = x else { return Some(None) };
                let rank = self.f.shape(x).rank();
                if k >= rank {
                    self.errors.spanned(
                        axis,
                        format!("axis {k} is out of range for an array of rank {rank}"),
                    );
                    return Some(None);
                }
                let mut items: Vec<Item> = (0..rank)
                    .map(|_| Item::Range(Bound::Start(0), Bound::End(0), 1))
                    .collect();
                items[k] = Item::Range(a, b, 1);
                Some(self.slice_items(x, &Some(items), s.span()))
            }
            _ => None,
        }
    }

    /// Parse the tokens of `s![..]`.
    pub(crate) fn s_items(
        &mut self,
        tokens: &TokenStream,
        span: Span,
    ) -> Option<Option<Vec<Item>>> {
        let parser = |input: ParseStream| {
            let mut out: Vec<(Expr, Option<Expr>)> = Vec::new();
            while !input.is_empty() {
                let e: Expr = input.parse()?;
                let step = if input.peek(Token![;]) {
                    input.parse::<Token![;]>()?;
                    Some(input.parse::<Expr>()?)
                } else {
                    None
                };
                out.push((e, step));
                if input.is_empty() {
                    break;
                }
                input.parse::<Token![,]>()?;
            }
            Ok(out)
        };
        let parsed = match parser.parse2(tokens.clone()) {
            Ok(p) => p,
            Err(e) => {
                self.errors.at(span, format!("{S_MACRO_HELP} ({e})"));
                return Some(None);
            }
        };
        let mut items = Vec::new();
        for (e, step) in &parsed {
            let step_v = match step {
                None => Some(1),
                Some(s) => int_lit(s).filter(|v| *v >= 1).map(|v| v as u64),
            };
            let Some(step_v) = step_v else {
                let s = step.as_ref().expect("a step");
                self.errors.spanned(
                    s,
                    "a slice step must be an integer literal >= 1 (negative steps, which reverse, are not supported)",
                );
                return Some(None);
            };
            let item = match strip(e) {
                Expr::Range(r) => range_bounds(r)
                    .map(|(a, b)| Item::Range(a, b, step_v))
                    .or_else(|| (step_v == 1).then(|| window(r)).flatten()),
                e if is_path(e, "NewAxis") && step.is_none() => Some(Item::NewAxis),
                e if step.is_none() => Some(match int_lit(e) {
                    Some(k) => Item::Index(k),
                    None => Item::RunTime(Box::new(e.clone())),
                }),
                _ => None,
            };
            match item {
                Some(i) => items.push(i),
                None => {
                    self.errors.spanned(e, S_MACRO_HELP);
                    return Some(None);
                }
            }
        }
        Some(Some(items))
    }

    /// Apply parsed `s![..]` items to `x`.
    fn slice_items(&mut self, x: Var, items: &Option<Vec<Item>>, span: Span) -> Option<Var> {
        let items = items.as_ref()?;
        let shape = self.f.shape(x).clone();
        let axes = items.iter().filter(|i| !matches!(i, Item::NewAxis)).count();
        if axes != shape.rank() {
            self.errors.at(
                span,
                format!(
                    "`s![..]` covers {axes} of the {} axes of this array (shape {shape}): give one item per axis (`..` keeps an axis whole); `NewAxis` items add axes",
                    shape.rank()
                ),
            );
            return None;
        }
        let mut bounds = Vec::new();
        let mut result: Vec<Option<usize>> = Vec::new(); // per item: kept axis or new
        let mut index_axes: Vec<usize> = Vec::new(); // axes an index removes
                                                     // Run-time indices: the result axis each keeps until it is gathered.
        let mut run_time: Vec<(usize, &Expr)> = Vec::new();
        // Windows at a run-time start: the axis, the start, the length.
        let mut windows: Vec<(usize, &Expr, u64)> = Vec::new();
        let mut axis = 0;
        for item in items {
            match item {
                Item::NewAxis => result.push(None),
                Item::Range(a, b, s) => {
                    bounds.push((*a, *b, *s));
                    result.push(Some(axis));
                    axis += 1;
                }
                Item::RunTime(e) => {
                    bounds.push((Bound::Start(0), Bound::End(0), 1));
                    run_time.push((result.len(), e));
                    result.push(Some(axis));
                    axis += 1;
                }
                Item::Window(e, w) => {
                    bounds.push((Bound::Start(0), Bound::End(0), 1));
                    windows.push((result.len(), e, *w));
                    result.push(Some(axis));
                    axis += 1;
                }
                Item::Index(k) => {
                    index_axes.push(axis);
                    let a = start_bound(*k);
                    let b = match *k {
                        -1 => Bound::End(0),
                        k if k < 0 => Bound::End(k.unsigned_abs() - 1),
                        k => Bound::Start(k as u64 + 1),
                    };
                    bounds.push((a, b, 1));
                    axis += 1;
                }
            }
        }
        let sliced = match slice_bounds(&mut self.f, x, &bounds) {
            Ok(v) => v,
            Err(e) => {
                self.errors.at(
                    span,
                    format!(
                        "{e} (array of shape {shape}); slices of a static axis must lie within it"
                    ),
                );
                return None;
            }
        };
        // An index on an axis of run-time size leaves a derived length
        // (`(n:k:k+1:1)`, 1 once `k < n` is checked at the call) that no
        // reshape can drop: sum that axis away instead (one term). The
        // symbol stays in the program, so the call still checks it.
        let mut sliced = sliced;
        let summed: Vec<usize> = index_axes
            .iter()
            .copied()
            .filter(|a| self.f.shape(sliced).0[*a] != Dim::Const(1))
            .collect();
        if !summed.is_empty() {
            if !self.f.dtype(sliced).is_float() {
                self.errors.at(
                    span,
                    format!(
                        "an integer index on an axis of run-time size is supported on float arrays only (this one is {}): index a float array, or keep the axis with a range `k..k + 1`",
                        self.f.ty(sliced)
                    ),
                );
                return None;
            }
            sliced = self.push(
                Op::ReduceSum {
                    axes: summed.clone(),
                },
                &[sliced],
                span,
            )?;
        }
        let dims = self.f.shape(sliced).0.clone();
        let out: Vec<Dim> = result
            .iter()
            .map(|r| match r {
                Some(a) => dims[*a - summed.iter().filter(|s| **s < *a).count()].clone(),
                None => Dim::Const(1),
            })
            .collect();
        let mut x = match out == dims {
            true => sliced,
            false => self.push(Op::Reshape { shape: Shape(out) }, &[sliced], span)?,
        };
        // Each window is a gather of `w` positions from its start, clamped
        // so the window fits (`lax.dynamic_slice`'s rule); the axis keeps
        // its place.
        for (at, e, w) in windows {
            x = self.dynamic_window(x, at, e, w, span)?;
        }
        // Each run-time index picks along the axis it kept, the last first
        // so the others' positions hold (`x[i]`'s gather, checked alike).
        for (at, e) in run_time.into_iter().rev() {
            let idx = self.lower_expr(e)?;
            let it = self.f.ty(idx).clone();
            if !matches!(it.dtype, DType::I32 | DType::I64) || !it.shape.is_scalar() {
                self.errors.spanned(
                    e,
                    format!("an index in `s![..]` is an integer literal or an integer scalar known at run time (`s![.., i]` with `i: usize`), got {it}"),
                );
                return None;
            }
            x = self.take("s![..]", x, idx, at, [e, e, e], span)?;
        }
        Some(x)
    }

    /// `x`'s axis `axis` cut to the `w` positions from `start` (an integer
    /// scalar known at run time), the start placed as `lax.dynamic_slice`
    /// places it (`window_positions`); a window longer than the axis is an
    /// error at the call (its size is checked like a slice's).
    fn dynamic_window(
        &mut self,
        x: Var,
        axis: usize,
        start: &Expr,
        w: u64,
        span: Span,
    ) -> Option<Var> {
        let n = self.f.shape(x).0[axis].clone();
        let idx = self.window_positions(&n, start, w, span)?;
        self.push(Op::Gather { axis, batch: 0 }, &[x, idx], span)
    }

    /// The `w` positions (i64) from `start` (an integer scalar known at run
    /// time) along an axis of `n`, the start wrapped once if negative
    /// (`k + n`), then clamped into `0..=n − w` as
    /// `lax.dynamic_slice` and `lax.dynamic_update_slice` clamp it: what a
    /// window reads (a gather) and what a write into it updates (its
    /// transpose, a scatter-add).
    pub(crate) fn window_positions(
        &mut self,
        n: &Dim,
        start: &Expr,
        w: u64,
        span: Span,
    ) -> Option<Var> {
        let k = self.lower_expr(start)?;
        let kt = self.f.ty(k).clone();
        if !matches!(kt.dtype, DType::I32 | DType::I64) || !kt.shape.is_scalar() {
            self.errors.spanned(
                start,
                format!("a window's start in `s![k..k + w]` is an integer scalar, got {kt}"),
            );
            return None;
        }
        // The window must fit: `w ≤ n`, checked at the call by the length
        // of the slice `n − w` (a derived size) when `n` is not static.
        let rest = match n {
            Dim::Const(len) if *len < w => {
                self.errors.at(
                    span,
                    format!("a window of {w} does not fit an axis of size {len}"),
                );
                return None;
            }
            _ => oxla_core::shape::derived::slice_len(n, Bound::Start(0), Bound::End(w), 1).ok()?,
        };
        let f64_ = DType::F64;
        let kf = self.push(Op::Convert { dtype: f64_ }, &[k], span)?;
        let hi = self.push(
            Op::DimSize {
                dim: rest,
                dtype: f64_,
            },
            &[],
            span,
        )?;
        let zero = self.f.literal(0.0, f64_);
        // A negative start is first wrapped once (`k + n`), as JAX's
        // `dynamic_slice` normalizes it before clamping.
        let size = self.push(
            Op::DimSize {
                dim: n.clone(),
                dtype: f64_,
            },
            &[],
            span,
        )?;
        let neg = self.push(
            Op::Cmp(oxla_core::ops::elementwise::CmpOp::Lt),
            &[kf, zero],
            span,
        )?;
        let up = self.push(
            Op::Binary(oxla_core::ops::elementwise::BinaryOp::Add),
            &[kf, size],
            span,
        )?;
        let kf = self.push(Op::Select, &[neg, up, kf], span)?;
        let kf = self.push(
            Op::Binary(oxla_core::ops::elementwise::BinaryOp::Max),
            &[kf, zero],
            span,
        )?;
        let kf = self.push(
            Op::Binary(oxla_core::ops::elementwise::BinaryOp::Min),
            &[kf, hi],
            span,
        )?;
        let positions = Shape(vec![Dim::Const(w)]);
        let iota = self.push(
            Op::Iota {
                shape: positions.clone(),
                axis: 0,
                dtype: f64_,
            },
            &[],
            span,
        )?;
        let kb = self.push(
            Op::Broadcast {
                shape: positions,
                dims: vec![],
            },
            &[kf],
            span,
        )?;
        let at = self.push(
            Op::Binary(oxla_core::ops::elementwise::BinaryOp::Add),
            &[iota, kb],
            span,
        )?;
        self.push(Op::Convert { dtype: DType::I64 }, &[at], span)
    }

    /// `concatenate(Axis(k), &[..])` / `stack(Axis(k), &[..])` /
    /// `roll(x, shift, Axis(k))`, if `name` is one of them.
    pub(crate) fn lower_slicing_call(
        &mut self,
        name: &str,
        c: &syn::ExprCall,
    ) -> Option<Option<Var>> {
        if name == "roll" {
            return Some(self.lower_roll(c));
        }
        if name != "concatenate" && name != "stack" {
            return None;
        }
        let args: Vec<&Expr> = c.args.iter().collect();
        let list = match args.as_slice() {
            [_, l] => match strip(l) {
                Expr::Array(a) => Some(a.elems.iter().collect::<Vec<_>>()),
                _ => None,
            },
            _ => None,
        };
        let Some(list) = list else {
            self.errors.at(
                c.paren_token.span.join(),
                format!("`{name}` takes an axis and a list of arrays: `{name}(Axis(k), &[a.view(), b.view()])`"),
            );
            return Some(None);
        };
        Some(self.join(name == "stack", args[0], &list, c.span()))
    }

    /// `concatenate![Axis(k), a, b]` / `stack![..]`, if `m` is one of them.
    pub(crate) fn lower_slicing_macro(&mut self, m: &syn::ExprMacro) -> Option<Option<Var>> {
        let name = m.mac.path.get_ident()?.to_string();
        if name != "concatenate" && name != "stack" {
            return None;
        }
        let parsed = Punctuated::<Expr, Token![,]>::parse_terminated.parse2(m.mac.tokens.clone());
        let args: Vec<Expr> = match parsed {
            Ok(p) if p.len() >= 2 => p.into_iter().collect(),
            _ => {
                self.errors.spanned(
                    &m.mac,
                    format!("`{name}!` takes an axis and arrays: `{name}![Axis(k), a, b]`"),
                );
                return Some(None);
            }
        };
        let list: Vec<&Expr> = args[1..].iter().collect();
        Some(self.join(name == "stack", &args[0], &list, m.span()))
    }

    /// `roll(x, shift, Axis(k))`, `jnp.roll`: element `i` of the result is
    /// element `i - shift` of `x` along axis k, wrapping around. The two
    /// pieces are slices, concatenated: on an axis of run-time size `n` the
    /// shift is taken as written, so `|shift| ≤ n` is checked at the call
    /// (JAX also takes larger shifts, mod n); on a static axis it is
    /// reduced mod n.
    fn lower_roll(&mut self, c: &syn::ExprCall) -> Option<Var> {
        const HELP: &str = "`roll` takes an array, a shift and an axis: `roll(x, 1, Axis(0))`, the shift an integer literal (possibly negative)";
        let args: Vec<&Expr> = c.args.iter().collect();
        let [x_e, shift_e, axis_e] = args.as_slice() else {
            self.errors.at(c.paren_token.span.join(), HELP);
            return None;
        };
        let x = self.lower_expr(x_e);
        let (Some(shift), Some(x)) = (int_lit(shift_e), x) else {
            self.errors.at(c.paren_token.span.join(), HELP);
            return None;
        };
        let shape = self.f.shape(x).clone();
        let Some(axis) = crate::lower::vocab::arrays::axis_arg_of(axis_e, shape.rank().max(1))
        else {
            self.errors.at(c.paren_token.span.join(), HELP);
            return None;
        };
        let Some(n) = shape.0.get(axis).cloned() else {
            self.errors.spanned(
                axis_e,
                format!("`roll` along axis {axis} of an array of shape {shape}"),
            );
            return None;
        };
        // The first piece starts at `cut`: (n − s).. then ..(n − s).
        let (first, second) = match n {
            Dim::Const(len) => {
                let s = if len == 0 {
                    0
                } else {
                    shift.rem_euclid(len as i64) as u64
                };
                if s == 0 {
                    return Some(x);
                }
                let cut = Bound::Start(len - s);
                ((cut, Bound::End(0)), (Bound::Start(0), cut))
            }
            _ if shift == 0 => return Some(x),
            _ if shift > 0 => {
                let s = shift as u64;
                (
                    (Bound::End(s), Bound::End(0)),
                    (Bound::Start(0), Bound::End(s)),
                )
            }
            _ => {
                let s = shift.unsigned_abs();
                (
                    (Bound::Start(s), Bound::End(0)),
                    (Bound::Start(0), Bound::Start(s)),
                )
            }
        };
        let span = c.span();
        let piece = |lw: &mut Self, (a, b): (Bound, Bound)| -> Option<Var> {
            let bounds: Vec<(Bound, Bound, u64)> = (0..shape.rank())
                .map(|k| match k == axis {
                    true => (a, b, 1),
                    false => (Bound::Start(0), Bound::End(0), 1),
                })
                .collect();
            match slice_bounds(&mut lw.f, x, &bounds) {
                Ok(v) => Some(v),
                Err(e) => {
                    lw.errors.at(span, format!("`roll`: {e}"));
                    None
                }
            }
        };
        let (a, b) = (piece(self, first)?, piece(self, second)?);
        Some(concatenate(&mut self.f, &[a, b], axis))
    }

    /// Concatenate (or stack) `list` along the axis `axis_e`.
    fn join(&mut self, stack: bool, axis_e: &Expr, list: &[&Expr], span: Span) -> Option<Var> {
        let what = if stack { "stack" } else { "concatenate" };
        // `a.view()` is the array itself here.
        let xs: Vec<Option<Var>> = list
            .iter()
            .map(|e| match strip(e) {
                Expr::MethodCall(m) if m.method == "view" && m.args.is_empty() => {
                    self.lower_expr(&m.receiver)
                }
                e => self.lower_expr(e),
            })
            .collect();
        let mut xs: Vec<Var> = xs.into_iter().collect::<Option<_>>()?;
        // A negative axis counts from the end of the result (`stack` adds
        // one).
        let positions = xs.first().map_or(0, |x| self.f.shape(*x).rank()) + usize::from(stack);
        let Some(axis) = crate::lower::vocab::arrays::axis_arg_of(axis_e, positions.max(1)) else {
            self.errors.spanned(
                axis_e,
                format!(
                    "`{what}` of arrays of rank {} takes an axis `Axis(k)` with an integer literal k from -{positions} to {} (negative from the end)",
                    positions - usize::from(stack),
                    positions - 1
                ),
            );
            return None;
        };
        if xs.is_empty() {
            self.errors
                .at(span, format!("`{what}` needs at least one array"));
            return None;
        }
        let shapes: Vec<String> = xs.iter().map(|x| self.f.ty(*x).to_string()).collect();
        // Sizes that must agree are unified (the call checks them), as
        // broadcasting does.
        let r0 = self.f.shape(xs[0]).rank();
        for i in 1..xs.len() {
            if self.f.shape(xs[i]).rank() != r0 {
                continue;
            }
            for k in (0..r0).filter(|k| stack || *k != axis) {
                let (d0, d) = (
                    self.f.shape(xs[0]).0[k].clone(),
                    self.f.shape(xs[i]).0[k].clone(),
                );
                self.unify(&d0, &d);
            }
        }
        if stack {
            let first = self.f.shape(xs[0]).clone();
            if xs.iter().any(|x| *self.f.shape(*x) != first) || axis > first.rank() {
                self.errors.at(
                    span,
                    format!(
                        "`stack` along axis {axis} needs arrays of one shape and an axis at most their rank, got {}",
                        shapes.join(", ")
                    ),
                );
                return None;
            }
            let mut dims = first.0.clone();
            dims.insert(axis, Dim::Const(1));
            for x in &mut xs {
                *x = self.push(
                    Op::Reshape {
                        shape: Shape(dims.clone()),
                    },
                    &[*x],
                    span,
                )?;
            }
        }
        let r = self.f.shape(xs[0]).rank();
        let fits = xs.iter().all(|x| {
            let t = self.f.ty(*x);
            let f0 = self.f.ty(xs[0]);
            t.dtype == f0.dtype
                && t.shape.rank() == r
                && (0..r).all(|k| k == axis || t.shape.0[k] == f0.shape.0[k])
        });
        if axis >= r || !fits {
            self.errors.at(
                span,
                format!(
                    "`{what}` along axis {axis} needs arrays of one rank (above {axis}) whose other axes agree, got {}",
                    shapes.join(", ")
                ),
            );
            return None;
        }
        Some(concatenate(&mut self.f, &xs, axis))
    }
}
