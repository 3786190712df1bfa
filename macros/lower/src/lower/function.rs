//! A function's lowering: its signature's types and size symbols, then its
//! body through a `Lowerer`, into an IR `Function` (`lower_fn`).

use super::lowerer::BindKind;
use super::lowerer::Lowerer;
use crate::errors::Errors;
use crate::lower::consts::ConstParam;
use crate::parse::types::{param_ty, result_ty, strip_group, RustTy};
use crate::parse::types::{PURE, SUPPORTED_PARAMS, SUPPORTED_RETURNS};
use oxla_core::{DType, Dim, Function, Shape, Type};
use proc_macro2::Span;
use syn::spanned::Spanned;

pub(crate) const SUPPORTED_METHODS: &str =
    "supported methods are exp, ln, sin, cos, tanh, sqrt, powi(<integer literal>), powf(e), max(e), \
     min(e), exp_m1, floor, ceil, round, round_ties_even, trunc, signum";
pub(crate) const SUPPORTED_STMTS: &str = "supported statements are `let` and `let mut` bindings, assignments (`x = e`, `x += e`, …), `if` and `match` that assign, `for i in a..b` and `while cond` loops, `return` inside `if`, and a final expression";
pub(crate) const SUPPORTED_EXPRS: &str = "supported expressions are float, integer and bool literals, parameters, \
     `let` variables and constants, `+ - * /`, unary `-`, comparisons, `!`, `&&`, `||`, parentheses, `if a < b { … } else { … }`, `match` on an integer, `x.len()`, the methods exp, ln, sin, \
     cos, tanh, sqrt, powi, powf, max, min, exp_m1, floor, ceil, round, round_ties_even, trunc, signum, the functions `sum(x)` and `dot(x, y)`, and a tuple as the result";

/// The declared results: their types, and whether they form a tuple.
pub(crate) fn return_tys(ty: &syn::Type) -> Result<(Vec<(RustTy, Span)>, bool), syn::Error> {
    if let syn::Type::Tuple(t) = strip_group(ty) {
        if t.elems.is_empty() {
            return Err(syn::Error::new_spanned(
                ty,
                format!("an oxla function must return a value: {SUPPORTED_RETURNS}"),
            ));
        }
        let mut out = Vec::new();
        for e in &t.elems {
            match result_ty(e) {
                Ok(r) => out.push((r, e.span())),
                Err(msg) => return Err(syn::Error::new_spanned(e, msg)),
            }
        }
        return Ok((out, true));
    }
    match result_ty(ty) {
        Ok(r) => Ok((vec![(r, ty.span())], false)),
        Err(msg) => Err(syn::Error::new_spanned(ty, msg)),
    }
}

/// The length symbol of slice parameter `name`.
pub fn length_symbol(name: &str) -> String {
    format!("n_{name}")
}

/// The symbol of axis `axis` of parameter `name`, of rank `rank`: `n_x` for
/// a vector (its length), `x_0`, `x_1`, … otherwise.
pub fn dim_symbol(name: &str, axis: usize, rank: usize) -> String {
    if rank == 1 {
        length_symbol(name)
    } else {
        format!("{name}_{axis}")
    }
}

/// The IR type of a parameter of Rust type `t` named `name`.
pub(crate) fn param_ir_type(name: &str, t: &RustTy, dtype: DType) -> Type {
    let dims = match t {
        RustTy::Fixed { dims, .. } => dims.iter().map(|d| Dim::Const(*d)).collect(),
        t => {
            let r = t.rank();
            (0..r).map(|a| Dim::sym(&dim_symbol(name, a, r))).collect()
        }
    };
    // Integer parameters keep their type; floats take the function's.
    let dtype = if t.dtype().is_float() {
        dtype
    } else {
        t.dtype()
    };
    Type::new(dtype, Shape(dims))
}

/// Lower `item` to an IR function named after it. All problems are reported
/// together, each at its span.
pub fn lower_fn(item: &syn::ItemFn) -> Result<Function, Errors> {
    lower_fn_checked(item).map(|(f, _)| f)
}

/// An integer parameter whose elements index an axis of size `bound`
/// (`take`, `select`): every compiled call checks each element against it
/// before any kernel runs, and fails naming the parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexCheck {
    pub param: String,
    pub bound: Dim,
}

/// `lower_fn`, with the index checks the call must make.
pub fn lower_fn_checked(item: &syn::ItemFn) -> Result<(Function, Vec<IndexCheck>), Errors> {
    lower_fn_full(item).map(|(f, checks, _)| (f, checks))
}

/// `lower_fn_checked`, with the constants the function reads (its hidden
/// parameters, see `consts`).
pub fn lower_fn_full(
    item: &syn::ItemFn,
) -> Result<(Function, Vec<IndexCheck>, Vec<ConstParam>), Errors> {
    lower_fn_axes(item).map(|(f, checks, consts, _)| (f, checks, consts))
}

/// Each axis name the body's collectives use, with the span of its first
/// use (see `stack::check_bound_axes`).
pub(crate) type AxisSpans = Vec<(String, Span)>;

/// `lower_fn_full`, with where each axis name is first used.
pub(crate) fn lower_fn_axes(
    item: &syn::ItemFn,
) -> Result<(Function, Vec<IndexCheck>, Vec<ConstParam>, AxisSpans), Errors> {
    let mut errors = Errors::new();
    let mut checks = Vec::new();
    let mut consts = Vec::new();
    let mut axes = Vec::new();
    let f = lower_into(item, &mut errors, &mut checks, &mut consts, &mut axes);
    match (f, errors.is_empty()) {
        (Some(f), true) => Ok((f, checks, consts, axes)),
        _ => {
            if errors.is_empty() {
                errors.spanned(
                    &item.sig.ident,
                    "internal error: lowering failed without an error",
                );
            }
            Err(errors)
        }
    }
}

pub(crate) fn ident_name(id: &syn::Ident) -> String {
    let s = id.to_string();
    s.strip_prefix("r#").map(str::to_string).unwrap_or(s)
}

/// A declared result: its type and the span of that type.
type Declared = (RustTy, Span);

/// A parameter: its name, its type and the span of that type.
type Param = (String, RustTy, Span);

/// The signature, checked: the parameters with their types, those whose
/// type had errors (bound without a value, so their uses are not reported
/// again), the declared results and the one float type.
struct Signature {
    params: Vec<Param>,
    unbound: Vec<String>,
    returns: Option<Vec<Declared>>,
    dtype: DType,
}

/// Where a float type appears in the signature: its type, its span and
/// what to call it in an error.
type FloatUse = (DType, Span, String);

fn lower_into(
    item: &syn::ItemFn,
    errors: &mut Errors,
    checks: &mut Vec<IndexCheck>,
    consts: &mut Vec<ConstParam>,
    axes: &mut AxisSpans,
) -> Option<Function> {
    check_plain_fn(&item.sig, errors);
    let sig = check_signature(&item.sig, errors);
    let (mut f, outs) = lower_body_on_params(item, &sig, errors, checks, consts, axes);
    let (Some((outs, tail_span)), Some(rets)) = (outs, sig.returns) else {
        return None;
    };
    if !check_results(&f, &outs, tail_span, &rets, errors) {
        return None;
    }
    f.outs = outs;
    errors.is_empty().then_some(f)
}

/// Reports what makes `sig` other than a plain, non-generic `fn`: `const`,
/// `async`, `unsafe`, `extern`, type or const generics, variadics.
fn check_plain_fn(sig: &syn::Signature, errors: &mut Errors) {
    if let Some(c) = &sig.constness {
        errors.spanned(
            c,
            "`const fn` is not supported: oxla functions are plain `fn`s",
        );
    }
    if let Some(a) = &sig.asyncness {
        errors.spanned(
            a,
            "`async fn` is not supported: oxla functions are plain `fn`s",
        );
    }
    if let Some(u) = &sig.unsafety {
        errors.spanned(u, format!("`unsafe fn` is not supported: {PURE}"));
    }
    if let Some(abi) = &sig.abi {
        errors.spanned(
            abi,
            "`extern` functions are not supported: oxla functions are plain `fn`s",
        );
    }
    // Lifetimes (of views) are fine; type and const generics are not.
    let only_lifetimes = sig
        .generics
        .params
        .iter()
        .all(|p| matches!(p, syn::GenericParam::Lifetime(_)));
    if !only_lifetimes || sig.generics.where_clause.is_some() {
        errors.spanned(
            &sig.generics,
            "generic functions are supported over one float type only: `fn f<T: oxla::Float>(x: T) -> T` (T is f32 or f64), or use one concrete float type (f32, f64, f16 or bf16)",
        );
    }
    if let Some(v) = &sig.variadic {
        errors.spanned(
            v,
            format!("variadic functions are not supported; {SUPPORTED_PARAMS}"),
        );
    }
}

/// The parameter and result types, and the one float type they share.
fn check_signature(sig: &syn::Signature, errors: &mut Errors) -> Signature {
    let mut floats: Vec<FloatUse> = Vec::new();
    let (params, unbound) = check_params(sig, errors, &mut floats);
    let returns = check_returns(sig, errors, &mut floats);
    let dtype = one_float_type(&floats, errors);
    Signature {
        params,
        unbound,
        returns,
        dtype,
    }
}

/// Each parameter's name and type (see `Signature`); its float type, if
/// any, added to `floats`.
fn check_params(
    sig: &syn::Signature,
    errors: &mut Errors,
    floats: &mut Vec<FloatUse>,
) -> (Vec<Param>, Vec<String>) {
    let mut params = Vec::new();
    let mut unbound = Vec::new();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Receiver(r) => errors.spanned(
                r,
                "methods are not supported: oxla functions are free functions (no `self`)",
            ),
            syn::FnArg::Typed(pt) => {
                let name = match &*pt.pat {
                    syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                        if let Some(m) = &pi.mutability {
                            errors.spanned(m, "`mut` parameters are not supported: declare a mutable copy in the body, `let mut x = x;`");
                        }
                        Some(ident_name(&pi.ident))
                    }
                    other => {
                        errors.spanned(other, "unsupported parameter pattern: parameters must be plain names, like `x: f32`");
                        None
                    }
                };
                match param_ty(&pt.ty) {
                    Ok(t) => {
                        if let Some(name) = name {
                            if t.dtype().is_float() {
                                floats.push((
                                    t.dtype(),
                                    pt.ty.span(),
                                    format!("parameter `{name}`"),
                                ));
                            }
                            params.push((name, t, pt.ty.span()));
                        }
                    }
                    Err(msg) if name.is_some() => {
                        errors.spanned(&pt.ty, msg);
                        // Uses of the parameter are not reported again.
                        unbound.push(name.unwrap_or_default());
                    }
                    Err(msg) => errors.spanned(&pt.ty, msg),
                }
            }
        }
    }
    (params, unbound)
}

/// The declared results (`None` after an error); their float types added
/// to `floats`.
fn check_returns(
    sig: &syn::Signature,
    errors: &mut Errors,
    floats: &mut Vec<FloatUse>,
) -> Option<Vec<Declared>> {
    match &sig.output {
        syn::ReturnType::Default => {
            errors.spanned(
                &sig.ident,
                format!("an oxla function must return a value: {SUPPORTED_RETURNS}"),
            );
            None
        }
        syn::ReturnType::Type(_, ty) => match return_tys(ty) {
            Ok((rs, _)) => {
                for (r, span) in rs.iter().filter(|(r, _)| r.dtype().is_float()) {
                    floats.push((r.dtype(), *span, "the return type".to_string()));
                }
                Some(rs)
            }
            Err(e) => {
                errors.push(e);
                None
            }
        },
    }
}

/// The float type of the first of `floats` (f32 when there is none); each
/// other one that differs is reported.
fn one_float_type(floats: &[FloatUse], errors: &mut Errors) -> DType {
    let dtype = floats.first().map(|f| f.0).unwrap_or(DType::F32);
    if let Some((_, _, first)) = floats.first() {
        for (d, span, what) in &floats[1..] {
            if *d != dtype {
                errors.at(
                    *span,
                    format!(
                        "mixed float types: {what} is {d} but {first} is {dtype}; all parameters and results of an oxla function use one float type (f32, f64, f16 or bf16)"
                    ),
                );
            }
        }
    }
    dtype
}

/// The body lowered through a `Lowerer` on the parameters: the function
/// (without its results yet) and the body's results. The index checks and
/// the constants it reads go to `checks` and `consts`.
fn lower_body_on_params(
    item: &syn::ItemFn,
    sig: &Signature,
    errors: &mut Errors,
    checks: &mut Vec<IndexCheck>,
    consts: &mut Vec<ConstParam>,
    axes: &mut AxisSpans,
) -> (Function, Option<super::lowerer::Results>) {
    let mut lw = Lowerer {
        f: Function::new(&ident_name(&item.sig.ident)),
        dtype: sig.dtype,
        scopes: vec![Vec::new()],
        assign_floor: 0,
        frames: Vec::new(),
        inlining: Vec::new(),
        closures: Vec::new(),
        errors,
        takes: Vec::new(),
        consts: Vec::new(),
        spans: std::collections::HashMap::new(),
        prelowered: std::collections::HashMap::new(),
        assigned_in_ifs: None,
        axis_spans: Vec::new(),
    };
    for (name, t, _) in &sig.params {
        let v = lw.f.add_param(name, param_ir_type(name, t, sig.dtype));
        lw.bind_as(name.clone(), Some(v), BindKind::Param);
    }
    for name in &sig.unbound {
        lw.bind_as(name.clone(), None, BindKind::Param);
    }
    let outs = lw.lower_body(&item.block);
    add_index_checks(&lw, checks);
    *consts = std::mem::take(&mut lw.consts);
    *axes = std::mem::take(&mut lw.axis_spans);
    (lw.f, outs)
}

/// The checks of the `take`s and `select`s whose indices are a parameter,
/// each once. Resolved after the body, once every unification renamed its
/// symbols. An index array computed in the body (not a parameter) is not
/// checked: it picks 0 when out of range, never reading outside `x`.
fn add_index_checks(lw: &Lowerer, checks: &mut Vec<IndexCheck>) {
    for (idx, x, axis) in &lw.takes {
        if let Some(p) = lw.f.params.iter().position(|v| v == idx) {
            let c = IndexCheck {
                param: lw.f.param_names[p].clone(),
                bound: lw.f.shape(*x).0[*axis].clone(),
            };
            if !checks.contains(&c) {
                checks.push(c);
            }
        }
    }
}

/// Reports where the body's results `outs` (the tail at `tail_span`) do not
/// match the declared results `rets`; `false` when their counts differ.
fn check_results(
    f: &Function,
    outs: &[oxla_core::Var],
    tail_span: Span,
    rets: &[Declared],
    errors: &mut Errors,
) -> bool {
    if outs.len() != rets.len() {
        errors.at(
            tail_span,
            format!(
                "this returns {} values but the declared return type has {}",
                outs.len(),
                rets.len()
            ),
        );
        return false;
    }
    for (v, (r, span)) in outs.iter().zip(rets) {
        check_result(f, *v, r, *span, errors);
    }
    true
}

/// Reports where the result `v` does not match the declared type `r`
/// (at `span`): its element type, or its rank.
fn check_result(f: &Function, v: oxla_core::Var, r: &RustTy, span: Span, errors: &mut Errors) {
    let shape = f.shape(v).clone();
    let computed = f.dtype(v);
    if r.dtype().is_float() != computed.is_float()
        || (!computed.is_float() && computed != r.dtype())
    {
        let declared = r.dtype();
        let want = if computed.is_float() {
            "a float".to_string()
        } else {
            format!("`{computed}`")
        };
        errors.at(span, format!("the declared result holds {declared} but the function computes {computed} values here; declare {want}"));
        return;
    }
    match (r, shape.rank()) {
        (r, rank) if r.rank() == rank => {}
        (RustTy::Scalar(_), _) => errors.at(
            span,
            format!("the declared result is a scalar but the function computes an array of shape {shape} here; reduce it (`sum`, `mean`, …) or declare an array result"),
        ),
        (_, 0) => errors.at(
            span,
            "the declared result is an array but the function computes a scalar here; declare a float result",
        ),
        (r, rank) => errors.at(
            span,
            format!("the declared result has rank {} but the function computes an array of rank {rank} (shape {shape}) here", r.rank()),
        ),
    }
}
