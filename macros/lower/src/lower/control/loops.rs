//! `for` and `while` loops in an annotated function, lowered to the IR's
//! loop op (`oxla_core::ops::control`): the loop's body (and a `while`
//! loop's condition) becomes a function of its own, whose params are the
//! values it reads from outside (constants of the loop), the index, and the
//! carries: the `let mut` variables the body assigns. After the loop those
//! variables hold the loop's results (SSA underneath, as for `if`).
//!
//! While the body is lowered, a `LoopFrame` holds the enclosing function:
//! every binding visible at the loop is captured as a param of the body up
//! front (unused ones are dropped afterwards), and a crate constant first
//! read inside the body becomes a hidden param of the outermost function and
//! is threaded through every enclosing loop.

use crate::lower::{ident_name, BindKind, Lowerer, Scope};
use oxla_core::ops::control::{self, Checkpoint};
use oxla_core::ops::elementwise::BinaryOp;
use oxla_core::{DType, Function, Op, Type, Var};
use proc_macro2::Span;
use quote::ToTokens;
use std::collections::HashMap;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::Expr;

/// The function a loop body is lowered out of.
pub(crate) struct LoopFrame {
    /// The enclosing function (the top function or an outer loop's body);
    /// after `exit_frame`, the function lowered in the frame.
    pub(crate) outer_f: Function,
    outer_scopes: Vec<Scope>,
    outer_closures: Vec<crate::lower::inline::Closure>,
    outer_assign_floor: usize,
    /// How many index checks (`takes`) were recorded before the loop.
    outer_takes: usize,
    /// Each constant: its value outside, its param in the function being
    /// lowered.
    consts: Vec<(Var, Var)>,
    /// Crate constants (by path) captured inside, with their index in `consts`.
    hidden: HashMap<String, usize>,
    index: Option<Var>,
    carries: Vec<Var>,
    /// A `while` loop's condition, once lowered: the function, its param for
    /// each constant, and its carry params.
    cond: Option<(Function, Vec<Var>, Vec<Var>)>,
}

/// Which loop, and what its frame starts from.
enum Kind<'a> {
    For { index: Option<syn::Ident> },
    While { cond: &'a Expr },
}

/// The variable names a loop body assigns (`x = …`, `x += …`, `x[i] = …`,
/// `x.slice_mut(..).assign(..)`), outside closures.
pub(crate) fn assigned_names(body: &syn::Block) -> Vec<String> {
    assigned_names_with(|f| f.visit_block(body))
}

/// `assigned_names` of an `if` (without copying it into a block).
pub(crate) fn assigned_names_in_if(i: &syn::ExprIf) -> Vec<String> {
    assigned_names_with(|f| f.visit_expr_if(i))
}

fn assigned_names_with(walk: impl FnOnce(&mut dyn for<'a> Visit<'a>)) -> Vec<String> {
    struct Find(Vec<String>);
    impl<'a> Visit<'a> for Find {
        fn visit_expr_assign(&mut self, a: &'a syn::ExprAssign) {
            if let Some(id) = crate::lower::written_variable(&a.left) {
                self.0.push(ident_name(id));
            }
            syn::visit::visit_expr_assign(self, a);
        }
        fn visit_expr_binary(&mut self, b: &'a syn::ExprBinary) {
            if crate::lower::is_compound_assign(&b.op) {
                if let Some(id) = crate::lower::written_variable(&b.left) {
                    self.0.push(ident_name(id));
                }
            }
            syn::visit::visit_expr_binary(self, b);
        }
        fn visit_expr_method_call(&mut self, m: &'a syn::ExprMethodCall) {
            if let Some((x, _)) = crate::lower::slice_assign_target(m) {
                if let Some(id) = crate::lower::written_variable(x) {
                    self.0.push(ident_name(id));
                }
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_closure(&mut self, _: &'a syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    let mut f = Find(Vec::new());
    walk(&mut f);
    let mut out = Vec::new();
    for n in f.0 {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// The first `return` in a loop body (not inside a closure): not
/// supported (`break` and `continue` are rewritten, see `loop_exits`).
fn jump(body: &syn::Block) -> Option<(Span, &'static str)> {
    struct Find(Option<(Span, &'static str)>);
    impl<'a> Visit<'a> for Find {
        fn visit_expr_return(&mut self, r: &'a syn::ExprReturn) {
            self.0.get_or_insert((r.return_token.span, "return"));
        }
        fn visit_expr_closure(&mut self, _: &'a syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    let mut f = Find(None);
    f.visit_block(body);
    f.0
}

/// `oxla::checkpoint(x)` / `oxla::checkpoint_every(k, x)` around a loop's
/// range or condition: the policy and the expression inside.
fn checkpoint_of<'a>(e: &'a Expr, errors: &mut crate::errors::Errors) -> (Checkpoint, &'a Expr) {
    let Expr::Call(c) = crate::lower::strip_parens(e) else {
        return (Checkpoint::All, e);
    };
    let Expr::Path(p) = &*c.func else {
        return (Checkpoint::All, e);
    };
    let Some(last) = p.path.segments.last() else {
        return (Checkpoint::All, e);
    };
    match (last.ident.to_string().as_str(), c.args.len()) {
        ("checkpoint", 1) => (Checkpoint::Sqrt, &c.args[0]),
        ("checkpoint_every", 2) => {
            let k = match &c.args[0] {
                Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(i),
                    ..
                }) => i.base10_parse::<u64>().ok().filter(|k| *k > 0),
                _ => None,
            };
            match k {
                Some(k) => (Checkpoint::Every(k), &c.args[1]),
                None => {
                    errors.spanned(
                        &c.args[0],
                        "`checkpoint_every` takes a positive integer literal: how many steps apart the kept carries are",
                    );
                    (Checkpoint::All, &c.args[1])
                }
            }
        }
        _ => (Checkpoint::All, e),
    }
}

/// A `return` inside a loop that `loop_exits::rewrite_loop_returns` could
/// not rewrite.
const RETURN_IN_LOOP: &str = "`return` inside a loop is supported as a statement of the loop's own body (`if done { return x; }`, not inside a nested loop or an expression), returning variables declared before the loop, which hold their values when it ends; this one reads a variable bound inside the loop or is elsewhere: assign the value to a `let mut` declared before the loop, `break`, and return it after the loop";

const LOOP_FORMS: &str = "supported loops are `for i in a..b` and `for i in a..=b` (integer bounds: literals, integer parameters, constants, `x.len()`), `for v in xs.iter()` (also `&xs`, `m.rows()`, `m.columns()`, `.enumerate()`), and `while cond`; the variables a loop changes are `let mut` variables declared before it";

impl Lowerer<'_> {
    /// `for pat in range { body }` as a statement.
    pub(crate) fn lower_for(&mut self, fl: &syn::ExprForLoop) {
        if let Some(l) = &fl.label {
            self.errors
                .spanned(l, format!("loop labels are not supported; {LOOP_FORMS}"));
            return;
        }
        if let Some(block) = crate::lower::control::loop_iter::rewrite(fl, self.frames.len()) {
            self.lower_block_as(&block, crate::lower::control::flow::Want::Unit);
            return;
        }
        if let Some((span, "return")) = jump(&fl.body) {
            self.errors.at(span, RETURN_IN_LOOP);
            return;
        }
        if crate::lower::control::loop_exits::has_exit(&fl.body).is_some() {
            match crate::lower::control::loop_exits::rewrite_for(fl, self.frames.len()) {
                Ok(block) => {
                    self.lower_block_as(&block, crate::lower::control::flow::Want::Unit);
                }
                Err(e) => self.errors.push(e),
            }
            return;
        }
        let index = match &*fl.pat {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                if let Some(m) = &pi.mutability {
                    self.errors.spanned(m, "the loop index cannot be `mut`");
                    return;
                }
                Some(pi.ident.clone())
            }
            syn::Pat::Wild(_) => None,
            p => {
                self.errors
                    .spanned(p, "a loop binds its index to a name or `_`");
                return;
            }
        };
        let (ckpt, range) = checkpoint_of(&fl.expr, self.errors);
        let Expr::Range(r) = crate::lower::strip_parens(range) else {
            self.errors.spanned(range, format!("a `for` loop runs over a range `a..b` or over an array (`xs.iter()`, `&xs`, `m.rows()`, `m.columns()`, with `.enumerate()`); other iterators are not supported (index them: `for i in 0..x.len() {{ … x[i] … }}`); {LOOP_FORMS}"));
            return;
        };
        let (Some(lo), Some(hi)) = (&r.start, &r.end) else {
            self.errors
                .spanned(r, format!("a loop's range needs both bounds; {LOOP_FORMS}"));
            return;
        };
        let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
        let (Some(lo), Some(hi)) = (self.loop_bound(lo, false), self.loop_bound(hi, inclusive))
        else {
            return;
        };
        self.lower_loop(Kind::For { index }, &fl.body, ckpt, &[lo, hi]);
    }

    /// `while cond { body }` as a statement.
    pub(crate) fn lower_while(&mut self, w: &syn::ExprWhile) {
        if let Some(l) = &w.label {
            self.errors
                .spanned(l, format!("loop labels are not supported; {LOOP_FORMS}"));
            return;
        }
        if let Some((span, "return")) = jump(&w.body) {
            self.errors.at(span, RETURN_IN_LOOP);
            return;
        }
        if crate::lower::control::loop_exits::has_exit(&w.body).is_some() && w.label.is_none() {
            if let Expr::Let(l) = &*w.cond {
                self.errors
                    .spanned(l, format!("`while let` is not supported; {LOOP_FORMS}"));
                return;
            }
            match crate::lower::control::loop_exits::rewrite_while(w, self.frames.len()) {
                Ok(block) => {
                    self.lower_block_as(&block, crate::lower::control::flow::Want::Unit);
                }
                Err(e) => self.errors.push(e),
            }
            return;
        }
        if let Expr::Let(l) = &*w.cond {
            self.errors
                .spanned(l, format!("`while let` is not supported; {LOOP_FORMS}"));
            return;
        }
        let (ckpt, cond) = checkpoint_of(&w.cond, self.errors);
        self.lower_loop(Kind::While { cond }, &w.body, ckpt, &[]);
    }

    /// A loop bound as an i64 scalar of the current function (`+ 1` when
    /// `inclusive`).
    fn loop_bound(&mut self, e: &Expr, inclusive: bool) -> Option<Var> {
        let v = match crate::lower::strip_parens(e) {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) => match i.base10_parse::<i64>() {
                Ok(n) => self.f.literal(n as f64, DType::I64),
                Err(_) => {
                    self.errors
                        .spanned(i, "this loop bound does not fit in an i64");
                    return None;
                }
            },
            e => {
                let v = self.lower_expr(e)?;
                let t = self.f.ty(v).clone();
                let from_const =
                    matches!(e, Expr::Path(p) if crate::lower::consts::looks_like_const(p));
                let ok = t.shape.is_scalar()
                    && (matches!(t.dtype, DType::I64 | DType::I32)
                        || (from_const && t.dtype.is_float()));
                if !ok {
                    self.errors.spanned(
                        e,
                        format!("a loop bound is an integer scalar, not {t}; {LOOP_FORMS}"),
                    );
                    return None;
                }
                if t.dtype == DType::I64 {
                    v
                } else {
                    self.push(Op::Convert { dtype: DType::I64 }, &[v], e.span())?
                }
            }
        };
        if !inclusive {
            return Some(v);
        }
        // Integers are carried as f64 values in the kernels; `+ 1` is exact
        // below 2^53.
        let x = self.push(Op::Convert { dtype: DType::F64 }, &[v], e.span())?;
        let one = self.f.literal(1.0, DType::F64);
        let y = self.push(Op::Binary(BinaryOp::Add), &[x, one], e.span())?;
        self.push(Op::Convert { dtype: DType::I64 }, &[y], e.span())
    }

    /// Lower the loop; rebind its carries to its results.
    fn lower_loop(&mut self, kind: Kind<'_>, body: &syn::Block, ckpt: Checkpoint, bounds: &[Var]) {
        // The carries: `let mut` variables bound outside that the body assigns.
        let mut carries: Vec<(usize, usize)> = Vec::new();
        for name in assigned_names(body) {
            if let Some((si, bi)) = self.binding_at(&name) {
                let b = &self.scopes[si][bi];
                if b.kind == BindKind::Mut && si >= self.assign_floor {
                    if b.var.is_none() {
                        // Its value had errors, already reported.
                        return;
                    }
                    carries.push((si, bi));
                }
            }
        }
        let init: Vec<Var> = carries
            .iter()
            .map(|(si, bi)| self.scopes[*si][*bi].var.expect("checked"))
            .collect();
        match &kind {
            Kind::For { index } => {
                let name = index.as_ref().map_or("_".to_string(), ident_name);
                self.enter_frame("loop_body", &carries, Some(&name));
            }
            Kind::While { cond } => {
                self.enter_frame("loop_cond", &carries, None);
                match self.lower_while_condition(cond) {
                    Some(c) => self.switch_to_body(vec![c], &carries, "loop_body"),
                    None => {
                        self.exit_frame();
                        return;
                    }
                }
            }
        }
        self.lower_block_as(body, crate::lower::control::flow::Want::Unit);
        let next: Option<Vec<Var>> = carries
            .iter()
            .map(|(si, bi)| self.scopes[*si][*bi].var)
            .collect();
        let frame = self.exit_frame();
        let Some(next) = next else {
            return;
        };
        let (body_fn, cond_fn, consts) = frame.finish(next);
        let span = body.brace_token.span.join();
        let results = match kind {
            Kind::For { .. } => control::push_for(
                &mut self.f,
                bounds[0],
                bounds[1],
                &consts,
                &init,
                body_fn,
                ckpt,
            ),
            Kind::While { .. } => control::push_while(
                &mut self.f,
                &consts,
                &init,
                cond_fn.expect("a while loop's condition"),
                body_fn,
                ckpt,
            ),
        };
        match results {
            Ok(rs) => {
                for ((si, bi), r) in carries.iter().zip(rs) {
                    self.scopes[*si][*bi].var = Some(r);
                }
            }
            Err(e) => self.errors.at(
                span,
                format!("internal error in oxla: building a loop: {e}"),
            ),
        }
    }

    fn lower_while_condition(&mut self, cond: &Expr) -> Option<Var> {
        let c = self.lower_expr(cond)?;
        let t = self.f.ty(c).clone();
        if t != Type::scalar(DType::Bool) {
            self.errors.spanned(
                cond,
                format!("a `while` condition is a scalar comparison or bool, not {t}"),
            );
            return None;
        }
        Some(c)
    }

    /// Start lowering into a new function: every value a visible binding
    /// holds becomes a constant param, then `index` (an i64 param, bound in
    /// a scope of its own), then the carries.
    pub(crate) fn enter_frame(
        &mut self,
        name: &str,
        carries: &[(usize, usize)],
        index: Option<&str>,
    ) {
        let outer_f = std::mem::replace(&mut self.f, Function::new(name));
        let mut frame = LoopFrame {
            outer_f,
            outer_scopes: self.scopes.clone(),
            outer_closures: self.closures.clone(),
            outer_assign_floor: self.assign_floor,
            outer_takes: self.takes.len(),
            consts: Vec::new(),
            hidden: HashMap::new(),
            index: None,
            carries: Vec::new(),
            cond: None,
        };
        let mut seen: HashMap<Var, Var> = HashMap::new();
        let mut capture = |f: &mut Function, frame: &mut LoopFrame, v: Var, name: &str| -> Var {
            *seen.entry(v).or_insert_with(|| {
                let p = f.add_param(name, frame.outer_f.ty(v).clone());
                frame.consts.push((v, p));
                p
            })
        };
        let mut scopes = self.scopes.clone();
        for (si, s) in scopes.iter_mut().enumerate() {
            for (bi, b) in s.iter_mut().enumerate() {
                if carries.contains(&(si, bi)) {
                    continue;
                }
                if let Some(v) = b.var {
                    b.var = Some(capture(&mut self.f, &mut frame, v, &b.name));
                }
            }
        }
        for c in self.closures.iter_mut() {
            c.map_captured(|v, name| capture(&mut self.f, &mut frame, v, name));
        }
        let mut inner = Vec::new();
        if let Some(i) = index {
            let v = self.f.add_param(i, Type::scalar(DType::I64));
            frame.index = Some(v);
            inner.push(crate::lower::Binding {
                name: i.to_string(),
                var: Some(v),
                kind: BindKind::Let,
            });
        }
        for (si, bi) in carries {
            let b = &scopes[*si][*bi];
            let v = b.var.expect("checked");
            let p = self.f.add_param(&b.name, frame.outer_f.ty(v).clone());
            frame.carries.push(p);
            scopes[*si][*bi].var = Some(p);
        }
        scopes.push(inner);
        self.scopes = scopes;
        // The body may assign its carries and its own `let mut`s.
        self.assign_floor = 0;
        self.frames.push(frame);
    }

    /// A `while` loop's condition is lowered (its results `outs`): keep it,
    /// and continue with the body (`name`), a new function with params for
    /// the same constants and carries. (A cond's then branch, likewise,
    /// before its else branch.) Index checks recorded in the first function
    /// follow its params into the second.
    pub(crate) fn switch_to_body(
        &mut self,
        outs: Vec<Var>,
        carries: &[(usize, usize)],
        name: &str,
    ) {
        let mut cond = std::mem::replace(&mut self.f, Function::new(name));
        cond.outs = outs;
        let frame = self.frames.last_mut().expect("a loop frame");
        let cond_consts: Vec<Var> = frame.consts.iter().map(|c| c.1).collect();
        let cond_carries = std::mem::take(&mut frame.carries);
        let mut map: HashMap<Var, Var> = HashMap::new();
        for p in cond_consts.iter().chain(&cond_carries) {
            let k = cond.params.iter().position(|q| q == p).expect("a param");
            map.insert(
                *p,
                self.f.add_param(&cond.param_names[k], cond.ty(*p).clone()),
            );
        }
        for c in frame.consts.iter_mut() {
            c.1 = map[&c.1];
        }
        let recorded = self.takes.split_off(frame.outer_takes);
        self.takes.extend(
            recorded
                .into_iter()
                .filter_map(|(i, x, axis)| Some((*map.get(&i)?, *map.get(&x)?, axis))),
        );
        frame.carries = cond_carries.iter().map(|p| map[p]).collect();
        // The body sees what the condition saw, through the new params.
        let by_outer: HashMap<Var, Var> = frame.consts.iter().copied().collect();
        let mut scopes = frame.outer_scopes.clone();
        for s in scopes.iter_mut() {
            for b in s.iter_mut() {
                b.var = b.var.and_then(|v| by_outer.get(&v).copied());
            }
        }
        for ((si, bi), p) in carries.iter().zip(&frame.carries) {
            scopes[*si][*bi].var = Some(*p);
        }
        scopes.push(Vec::new());
        let mut closures = frame.outer_closures.clone();
        for c in closures.iter_mut() {
            c.map_captured(|v, _| by_outer.get(&v).copied().unwrap_or(v));
        }
        frame.cond = Some((cond, cond_consts, cond_carries));
        self.closures = closures;
        self.scopes = scopes;
    }

    /// Close the innermost frame: back to the enclosing function. Index
    /// checks recorded inside are kept when both their arrays are
    /// constants of the loop (then they are values outside it too).
    pub(crate) fn exit_frame(&mut self) -> LoopFrame {
        let mut frame = self.frames.pop().expect("a loop frame");
        std::mem::swap(&mut self.f, &mut frame.outer_f);
        self.scopes = std::mem::take(&mut frame.outer_scopes);
        self.closures = std::mem::take(&mut frame.outer_closures);
        self.assign_floor = frame.outer_assign_floor;
        let inside = self.takes.split_off(frame.outer_takes);
        let outside = |v: Var| frame.consts.iter().find(|c| c.1 == v).map(|c| c.0);
        for (idx, x, axis) in inside {
            if let (Some(i), Some(x)) = (outside(idx), outside(x)) {
                self.takes.push((i, x, axis));
            }
        }
        frame
    }

    /// A crate constant read inside a loop body: the outermost function's
    /// hidden param for it, passed through every enclosing loop.
    pub(crate) fn const_in_loop(&mut self, p: &syn::ExprPath) -> Option<Var> {
        let key = p.to_token_stream().to_string();
        if let Some(k) = self.frames.last().and_then(|fr| fr.hidden.get(&key)) {
            return Some(self.frames.last().expect("frame").consts[*k].1);
        }
        // The constant's value in the enclosing function.
        let mut frame = self.frames.pop().expect("a loop frame");
        std::mem::swap(&mut self.f, &mut frame.outer_f);
        let outer = self.const_param(p);
        std::mem::swap(&mut self.f, &mut frame.outer_f);
        let Some(outer) = outer else {
            self.frames.push(frame);
            return None;
        };
        let ty = frame.outer_f.ty(outer).clone();
        let name = format!("{}in_loop", crate::lower::consts::CONST_PARAM_PREFIX);
        let inner = self.f.add_param(&name, ty.clone());
        if let Some((cond, cond_consts, _)) = frame.cond.as_mut() {
            cond_consts.push(cond.add_param(&name, ty));
        }
        frame.hidden.insert(key, frame.consts.len());
        frame.consts.push((outer, inner));
        self.frames.push(frame);
        Some(inner)
    }

    /// Apply a symbol renaming to the functions the frames hold.
    pub(crate) fn substitute_in_frames(&mut self, from: &str, to: &oxla_core::Dim) {
        for fr in self.frames.iter_mut() {
            crate::lower::substitute(&mut fr.outer_f, from, to);
            if let Some((c, _, _)) = fr.cond.as_mut() {
                crate::lower::substitute(c, from, to);
            }
        }
    }
}

impl LoopFrame {
    /// The function lowered first in this frame (a `while` loop's
    /// condition, a cond's then branch), once the frame switched to the
    /// second.
    pub(crate) fn first_mut(&mut self) -> Option<&mut Function> {
        self.cond.as_mut().map(|c| &mut c.0)
    }
    /// The loop's body (its results `next`), its condition, and the outside
    /// values of the constants either reads, with every function's params in
    /// the loop's order: constants, [index], carries.
    pub(crate) fn finish(self, next: Vec<Var>) -> (Function, Option<Function>, Vec<Var>) {
        // `exit_frame` swapped the body into `outer_f`.
        let LoopFrame {
            outer_f: mut body,
            consts,
            index,
            carries,
            cond,
            ..
        } = self;
        body.outs = next;
        let reads =
            |f: &Function, v: Var| f.eqns.iter().any(|e| e.ins.contains(&v)) || f.outs.contains(&v);
        let mut kept = Vec::new();
        let mut body_params = Vec::new();
        let mut cond_params = Vec::new();
        for (k, (outer, p)) in consts.iter().enumerate() {
            let cond_reads = cond.as_ref().is_some_and(|(c, cc, _)| reads(c, cc[k]));
            if reads(&body, *p) || cond_reads {
                kept.push(*outer);
                body_params.push(*p);
                if let Some((_, cc, _)) = &cond {
                    cond_params.push(cc[k]);
                }
            }
        }
        body_params.extend(index);
        body_params.extend(&carries);
        let body = with_params(body, &body_params);
        let cond = cond.map(|(c, _, carries)| {
            cond_params.extend(carries);
            with_params(c, &cond_params)
        });
        (body, cond, kept)
    }
}

/// `f` with exactly the params `params`, in that order (the others must
/// be unread).
fn with_params(mut f: Function, params: &[Var]) -> Function {
    f.param_names = params
        .iter()
        .map(|p| f.param_names[f.params.iter().position(|q| q == p).expect("a param")].clone())
        .collect();
    f.params = params.to_vec();
    f
}
