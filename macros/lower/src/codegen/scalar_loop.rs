//! Loops in straight-line scalar code: a `Loop` becomes a Rust `while` loop
//! over a tuple of carries, and a `LoopReverse` a forward loop that keeps
//! its carries on a tape (every step's, or every k-th step's with the
//! steps between recomputed one segment at a time), then a loop back through
//! the backward body. Same semantics as `ops::control`'s reference
//! evaluation, step for step, so the results are bit-identical to it.
//! A `Cond` becomes a Rust `if`/`else` whose arms are its branches: only
//! the taken one runs, as in `Cond::eval`.

use crate::codegen::paths;
use crate::codegen::scalar_block;
use oxla_core::ops::control::{Checkpoint, Cond, Loop, LoopKind, LoopReverse};
use oxla_core::DType;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// The Rust type of each carry.
fn carry_types(l: &Loop) -> Vec<TokenStream> {
    (0..l.n_carries())
        .map(|k| paths::float(l.carry_type(k).dtype))
        .collect()
}

fn tuple_fields(name: &syn::Ident, n: usize) -> Vec<TokenStream> {
    (0..n)
        .map(|k| {
            let k = syn::Index::from(k);
            quote!(#name.#k)
        })
        .collect()
}

/// The step `i` (an i64 expression) applied to the carry tuple `c`.
fn step(l: &Loop, consts: &[TokenStream], i: &TokenStream, c: &syn::Ident) -> TokenStream {
    let mut args = consts.to_vec();
    if l.kind == LoopKind::For {
        args.push(i.clone());
    }
    args.extend(tuple_fields(c, l.n_carries()));
    scalar_block(&l.body, &args)
}

fn holds(l: &Loop, consts: &[TokenStream], c: &syn::Ident) -> TokenStream {
    let cond = l.cond.as_ref().expect("a while loop has a condition");
    let mut args = consts.to_vec();
    args.extend(tuple_fields(c, l.n_carries()));
    let block = scalar_block(cond, &args);
    quote!(#block.0)
}

/// The forward sweep: runs the loop from the carries in `c`, calling
/// `visit` (statements that see `c` and the step number `k`) before each
/// step; leaves the final carries in `c` and the trip count in `k`.
fn forward(l: &Loop, ins: &[TokenStream], visit: TokenStream) -> TokenStream {
    let nb = l.n_bounds();
    let consts = &ins[nb..nb + l.n_consts];
    let init = &ins[nb + l.n_consts..l.n_operands()];
    let c = format_ident!("__oxla_c");
    let i64_ty = paths::float(DType::I64);
    let u64_ty = quote!(::core::primitive::u64);
    let tys = carry_types(l);
    match l.kind {
        LoopKind::For => {
            // Integer parameters keep their Rust type (`usize`, `i32`, …).
            let (lo, hi) = (&ins[0], &ins[1]);
            let next = step(l, consts, &quote!((__oxla_lo + __oxla_k as #i64_ty)), &c);
            quote! {
                let __oxla_lo: #i64_ty = #lo as #i64_ty;
                let __oxla_hi: #i64_ty = #hi as #i64_ty;
                let __oxla_n: #u64_ty = if __oxla_hi > __oxla_lo { (__oxla_hi - __oxla_lo) as #u64_ty } else { 0 };
                let mut #c: (#(#tys,)*) = (#(#init,)*);
                let mut __oxla_k: #u64_ty = 0;
                while __oxla_k < __oxla_n {
                    #visit
                    #c = #next;
                    __oxla_k += 1;
                }
            }
        }
        LoopKind::While => {
            let next = step(l, consts, &quote!(0), &c);
            let test = holds(l, consts, &c);
            quote! {
                let __oxla_lo: #i64_ty = 0;
                let mut #c: (#(#tys,)*) = (#(#init,)*);
                let mut __oxla_k: #u64_ty = 0;
                while #test {
                    #visit
                    #c = #next;
                    __oxla_k += 1;
                }
            }
        }
    }
}

/// A loop as an expression of its results' tuple.
pub(crate) fn loop_expr(l: &Loop, ins: &[TokenStream]) -> TokenStream {
    let run = forward(l, ins, quote!());
    let c = format_ident!("__oxla_c");
    let fields = tuple_fields(&c, l.n_carries());
    let results: Vec<&TokenStream> = l.results.iter().map(|r| &fields[*r]).collect();
    quote!({
        #run
        (#(#results,)*)
    })
}

/// A reverse sweep as an expression of its results' tuple.
pub(crate) fn reverse_expr(lr: &LoopReverse, ins: &[TokenStream]) -> TokenStream {
    let f = &lr.fwd;
    let nb = f.n_bounds();
    let nf = f.n_operands();
    let consts = &ins[nb..nb + f.n_consts];
    let r_init = &ins[nf..];
    let u64_ty = quote!(::core::primitive::u64);
    let i64_ty = paths::float(DType::I64);
    let usize_ty = quote!(::core::primitive::usize);
    let vec = paths::vec();
    let private = paths::private();
    let tys = carry_types(f);
    // The segment length: 1 keeps every step's carries.
    let seg = match (f.checkpoint, f.kind) {
        (Checkpoint::All, _) => quote!(1),
        (Checkpoint::Every(k), _) => {
            let k = k.max(1);
            quote!(#k)
        }
        (Checkpoint::Sqrt, LoopKind::For) => {
            let (lo, hi) = (&ins[0], &ins[1]);
            quote!({
                let (__oxla_lo, __oxla_hi) = (#lo as #i64_ty, #hi as #i64_ty);
                let __oxla_n: #u64_ty = if __oxla_hi > __oxla_lo { (__oxla_hi - __oxla_lo) as #u64_ty } else { 0 };
                ((__oxla_n as ::core::primitive::f64).sqrt().ceil() as #u64_ty).max(1)
            })
        }
        (Checkpoint::Sqrt, LoopKind::While) => quote!(64),
    };
    let bytes: usize = (0..f.n_carries())
        .map(|k| f.carry_type(k).dtype.size_bytes())
        .sum();
    // The tape stops at the limit (a `while` that never ends would grow it
    // until the process aborts), as the kernel path's does.
    let what = syn::LitStr::new(
        &format!(
            "the `{}` loop whose body is `{}`",
            match f.kind {
                LoopKind::For => "for",
                LoopKind::While => "while",
            },
            f.body.name
        ),
        proc_macro2::Span::call_site(),
    );
    let run = forward(
        f,
        ins,
        quote! {
            if __oxla_k % __oxla_seg == 0 {
                if (__oxla_tape.len() + 1) * #bytes > __oxla_limit {
                    #private::tape_limit_exceeded(#what, (__oxla_tape.len() + 1) * #bytes, __oxla_k, __oxla_limit);
                }
                __oxla_tape.push(__oxla_c);
            }
        },
    );
    let c = format_ident!("__oxla_c");
    let na = lr.n_acc;
    let nr = lr.n_r();
    let a_tys: Vec<TokenStream> = (0..na)
        .map(|k| paths::float(lr.back.dtype(lr.back.outs[k])))
        .collect();
    let zeros: Vec<TokenStream> = a_tys.iter().map(|t| quote!(0.0 as #t)).collect();
    let step_c = step(f, consts, &quote!((__oxla_lo + __oxla_j as #i64_ty)), &c);
    let mut back_args: Vec<TokenStream> = consts.to_vec();
    if f.kind == LoopKind::For {
        back_args.push(quote!((__oxla_lo + __oxla_j as #i64_ty)));
    }
    let cs = format_ident!("__oxla_cs");
    back_args.extend(tuple_fields(&cs, f.n_carries()));
    let r = format_ident!("__oxla_r");
    back_args.extend(tuple_fields(&r, nr));
    let back = scalar_block(&lr.back, &back_args);
    let out = format_ident!("__oxla_out");
    let out_fields = tuple_fields(&out, na + nr);
    let acc = format_ident!("__oxla_acc");
    let acc_fields = tuple_fields(&acc, na);
    let r_fields = tuple_fields(&r, nr);
    let acc_update: Vec<TokenStream> = acc_fields
        .iter()
        .zip(&out_fields[..na])
        .map(|(a, o)| quote!(#a += #o;))
        .collect();
    let r_next = &out_fields[na..];
    let all: Vec<&TokenStream> = acc_fields.iter().chain(&r_fields).collect();
    let results: Vec<&TokenStream> = lr.results.iter().map(|q| all[*q]).collect();
    let r_tys: Vec<TokenStream> = (0..nr)
        .map(|k| paths::float(lr.back.dtype(lr.back.outs[na + k])))
        .collect();
    quote!({
        let __oxla_seg: #u64_ty = #seg;
        let __oxla_limit: #usize_ty = #private::tape_limit();
        let mut __oxla_tape: #vec<(#(#tys,)*)> = #vec::new();
        #run
        let __oxla_trips: #u64_ty = __oxla_k;
        let mut #acc: (#(#a_tys,)*) = (#(#zeros,)*);
        let mut #r: (#(#r_tys,)*) = (#(#r_init,)*);
        let mut __oxla_steps: #vec<(#(#tys,)*)> = #vec::new();
        let mut __oxla_peak: #usize_ty = __oxla_tape.len();
        let mut __oxla_end: #u64_ty = __oxla_trips;
        while __oxla_end > 0 {
            let __oxla_start = (__oxla_end - 1) / __oxla_seg * __oxla_seg;
            __oxla_steps.clear();
            __oxla_steps.push(__oxla_tape[(__oxla_start / __oxla_seg) as #usize_ty]);
            let mut __oxla_j: #u64_ty = __oxla_start;
            while __oxla_j + 1 < __oxla_end {
                let #c = __oxla_steps[__oxla_steps.len() - 1];
                __oxla_steps.push(#step_c);
                __oxla_j += 1;
            }
            if __oxla_seg > 1 {
                __oxla_peak = __oxla_peak.max(__oxla_tape.len() + __oxla_steps.len());
            }
            let mut __oxla_j: #u64_ty = __oxla_end;
            while __oxla_j > __oxla_start {
                __oxla_j -= 1;
                let #cs = __oxla_steps[(__oxla_j - __oxla_start) as #usize_ty];
                let #out = #back;
                #(#acc_update)*
                #r = (#(#r_next,)*);
            }
            __oxla_end = __oxla_start;
        }
        #private::note_loop_tape(__oxla_peak * #bytes);
        (#(#results,)*)
    })
}

/// A cond as an expression of its results' tuple: `if pred { then } else
/// { otherwise }`, each branch a block on the constants.
pub(crate) fn cond_expr(c: &Cond, ins: &[TokenStream]) -> TokenStream {
    let pred = &ins[0];
    let then = scalar_block(&c.then, &ins[1..]);
    let otherwise = scalar_block(&c.otherwise, &ins[1..]);
    quote!(if #pred { #then } else { #otherwise })
}
