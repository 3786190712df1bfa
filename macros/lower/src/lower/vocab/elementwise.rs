//! Elementwise functions built from the IR's primitives, with the numerics
//! JAX gives them (the derivative follows from the composition, so every
//! transform goes through them without new rules):
//!
//! | written | as | derivative |
//! |---|---|---|
//! | `x.abs()` | `x < 0 ? -x : (x == 0 ? 0 : x)` (`abs(-0.0)` = 0) | sign(x), 0 at 0 (JAX) |
//! | `x.square()`, `x.recip()` | `x * x`, `1 / x` | the usual |
//! | `x.clamp(lo, hi)` | `min(max(x, lo), hi)` | 1 inside, 0 outside, ½ at a bound |
//! | `x.ln_1p()`, `log1p(x)` | Kahan's `ln(u)·x / (u - 1)`, `u = 1 + x` (exact for tiny `x`) | `1 / (1 + x)` |
//! | `sigmoid(x)` | `1/(1+e)` or `e/(1+e)` with `e = exp(-|x|)` | `σ(1-σ)`, finite everywhere |
//! | `relu(x)` | `x <= 0 ? 0 : x` (NaN stays NaN) | 0 at 0 (JAX) |
//! | `softplus(x)` | `(x >= 0 ? x : 0) + log1p(exp(-|x|))` (JAX's `logaddexp(x, 0)`) | `sigmoid(x)` |
//! | `expm1(x)` | the `expm1` op (also the method `exp_m1`) | `exp(x)` (JAX: `expm1(x) + 1`, which cancels for x < 0) |
//! | `erf(x)` | the `erf` op | `2/√π · exp(−x²)` (JAX) |
//! | `sign(x)` | the `sign` op (`jnp.sign`: ±0 and NaN unchanged) | 0 |
//!
//! Where a formula has a branch whose value or derivative is not finite,
//! the branch's inputs are kept finite (`exp(-|x|)` ≤ 1, a divisor of 1
//! where it would be 0), so a cotangent of zero through the branch not
//! taken stays zero instead of becoming `0 · ∞ = NaN`.

use crate::lower::Lowerer;
use oxla_core::ops::elementwise::{BinaryOp, CmpOp, UnaryOp};
use oxla_core::ops::special::SpecialFn;
use oxla_core::{Op, Var};
use proc_macro2::Span;
use syn::spanned::Spanned;

/// The elementwise methods handled here (for error messages).
pub(crate) const ELEMENTWISE_METHODS: &str = "abs, square, recip, clamp(lo, hi), ln_1p";

/// The elementwise functions handled here, name and usage (the special
/// functions, `erf_inv`, … are core's `SpecialFn::ALL`: see `vocab::functions`).
pub(crate) const ELEMENTWISE_FUNCTIONS: &[(&str, &str)] = &[
    ("sigmoid", "sigmoid(x)"),
    ("relu", "relu(x)"),
    ("softplus", "softplus(x)"),
    ("log1p", "log1p(x)"),
    ("expm1", "expm1(x)"),
    ("erf", "erf(x)"),
    ("sign", "sign(x)"),
    ("powf", "powf(x, y)"),
    ("power", "power(x, y)"),
    ("clip", "clip(x, lo, hi)"),
    ("logaddexp", "logaddexp(a, b)"),
];

impl Lowerer<'_> {
    /// An elementwise method, if `m` is one (else `None`).
    pub(crate) fn lower_elementwise_method(
        &mut self,
        m: &syn::ExprMethodCall,
    ) -> Option<Option<Var>> {
        let name = m.method.to_string();
        let want = match name.as_str() {
            "abs" | "square" | "recip" | "ln_1p" => 0,
            "clamp" => 2,
            _ => return None,
        };
        let x = self.lower_expr(&m.receiver);
        let args: Vec<Option<Var>> = m.args.iter().map(|a| self.lower_expr(a)).collect();
        if args.len() != want {
            let what = if want == 0 {
                "no arguments"
            } else {
                "two arguments: `clamp(lo, hi)`"
            };
            self.errors
                .at(m.paren_token.span.join(), format!("`{name}` takes {what}"));
            return Some(None);
        }
        let x = match x {
            Some(x) => x,
            None => return Some(None),
        };
        let span = self.method_span(m);
        Some(match name.as_str() {
            "abs" => self.abs(x, span),
            "square" => self.push(Op::Binary(BinaryOp::Mul), &[x, x], span),
            "recip" => {
                let one = self.f.full_like(1.0, x);
                self.push(Op::Binary(BinaryOp::Div), &[one, x], span)
            }
            "ln_1p" => self.log1p(x, span),
            _ => match (args[0], args[1]) {
                (Some(lo), Some(hi)) => self.clamp(x, lo, hi, span),
                _ => None,
            },
        })
    }

    /// An elementwise function call `name(x)`, if `name` is one.
    pub(crate) fn lower_elementwise_call(
        &mut self,
        name: &str,
        c: &syn::ExprCall,
    ) -> Option<Option<Var>> {
        if matches!(name, "powf" | "power") {
            return Some(self.lower_power_call(name, c));
        }
        if matches!(name, "clip" | "logaddexp") {
            return Some(self.lower_numpy_binary(name, c));
        }
        let special = SpecialFn::from_name(name);
        if special.is_none()
            && !matches!(
                name,
                "sigmoid" | "relu" | "softplus" | "log1p" | "expm1" | "erf" | "sign"
            )
        {
            return None;
        }
        let args: Vec<Option<Var>> = c.args.iter().map(|a| self.lower_expr(a)).collect();
        if args.len() != 1 {
            self.errors.at(
                c.paren_token.span.join(),
                format!("`{name}` takes one argument"),
            );
            return Some(None);
        }
        // (`Some(None)`: handled, with the error already reported.)
        let Some(x) = args[0] else {
            return Some(None);
        };
        let span = c.span();
        if let Some(op) = special {
            return Some(self.push(Op::Special(op), &[x], span));
        }
        Some(match name {
            "sigmoid" => self.sigmoid(x, span),
            "relu" => self.relu(x, span),
            "softplus" => self.softplus(x, span),
            "sign" => self.push(Op::Unary(UnaryOp::Sign), &[x], span),
            "expm1" => self.push(Op::Unary(UnaryOp::ExpM1), &[x], span),
            "erf" => self.push(Op::Unary(UnaryOp::Erf), &[x], span),
            _ => self.log1p(x, span),
        })
    }

    /// `powf(x, y)` / `power(x, y)` (numpy's name): `x^y` elementwise, the
    /// operands broadcast as numpy does.
    fn lower_power_call(&mut self, name: &str, c: &syn::ExprCall) -> Option<Var> {
        let args: Vec<Option<Var>> = c.args.iter().map(|a| self.lower_expr(a)).collect();
        if args.len() != 2 {
            self.errors.at(
                c.paren_token.span.join(),
                format!("`{name}` takes two arguments: `{name}(x, y)`"),
            );
            return None;
        }
        let mut vs = [args[0]?, args[1]?];
        let span = c.span();
        self.broadcast_all(&mut vs, span)?;
        self.push(Op::Binary(BinaryOp::Pow), &vs, span)
    }

    /// `clip(x, lo, hi)` (`jnp.clip`, as `x.clamp(lo, hi)`) and
    /// `logaddexp(a, b)` (`jnp.logaddexp`), operands broadcast.
    fn lower_numpy_binary(&mut self, name: &str, c: &syn::ExprCall) -> Option<Var> {
        let args: Vec<Option<Var>> = c.args.iter().map(|a| self.lower_expr(a)).collect();
        let span = c.span();
        match (name, args.as_slice()) {
            ("clip", [x, lo, hi]) => self.clamp((*x)?, (*lo)?, (*hi)?, span),
            ("logaddexp", [a, b]) => {
                let mut vs = [(*a)?, (*b)?];
                self.broadcast_all(&mut vs, span)?;
                self.logaddexp(vs[0], vs[1], span)
            }
            _ => {
                let form = if name == "clip" {
                    "`clip(x, lo, hi)`"
                } else {
                    "`logaddexp(a, b)`"
                };
                self.errors
                    .at(c.paren_token.span.join(), format!("`{name}` takes {form}"));
                None
            }
        }
    }

    /// `log(e^a + e^b)` as JAX computes it: the larger operand plus
    /// `log1p(e^{-|a - b|})`, never overflowing; `a + b` where `a - b` is
    /// NaN (both infinite of one sign: that infinity). The larger is picked
    /// by a select, `a` on a tie, and the exponent's slope there is `a`'s
    /// side, so the derivative at `a = b` is ½ to each, as JAX's rule.
    fn logaddexp(&mut self, a: Var, b: Var, span: Span) -> Option<Var> {
        let first = self.push(Op::Cmp(CmpOp::Ge), &[a, b], span)?;
        let larger = self.push(Op::Select, &[first, a, b], span)?;
        let delta = self.push(Op::Binary(BinaryOp::Sub), &[a, b], span)?;
        let e = self.exp_neg_abs(delta, span)?;
        let tail = self.log1p(e, span)?;
        let out = self.push(Op::Binary(BinaryOp::Add), &[larger, tail], span)?;
        let nan = self.push(Op::Cmp(CmpOp::Ne), &[delta, delta], span)?;
        let both = self.push(Op::Binary(BinaryOp::Add), &[a, b], span)?;
        self.push(Op::Select, &[nan, both, out], span)
    }

    /// Rust's `a % b` on floats (C's `fmod`): `a − b·trunc(a / b)` computed
    /// exactly, as the IR has no remainder op. The quotient `q = trunc(a /
    /// b)` may be one off where `a / b` rounds across an integer; `a − q·b`
    /// is exact by Dekker's product (`q·b = p + e` exactly, with Veltkamp
    /// splits into half-width parts) and Sterbenz's lemma (`a − p` is
    /// exact, `a` and `p` being within a factor 2; the rounded products are
    /// kept from FMA contraction), so a remainder of the
    /// wrong sign or size shows a wrong `q`, and the next one is taken. Exact
    /// wherever `|a / b| < 2^53` (f64) or `2^24` (f32) and `|b|` is far from
    /// overflow; beyond, NaN (Rust's value needs a long division). `b = ±∞`
    /// gives `a`, a zero result has `a`'s sign, NaN and `b = 0` give NaN.
    /// The derivatives are JAX's `rem`'s: 1 in `a`, `−trunc(a / b)` in `b`.
    pub(crate) fn float_rem(&mut self, a: Var, b: Var, span: Span) -> Option<Var> {
        let mut vs = [a, b];
        self.broadcast_all(&mut vs, span)?;
        let [a, b] = vs;
        let dtype = self.f.dtype(a);
        let (split, limit) = match dtype {
            oxla_core::DType::F32 => (4097.0, 16_777_216.0),
            _ => (134_217_729.0, 9_007_199_254_740_992.0),
        };
        let k = |lw: &mut Self, v: f64| lw.f.full_like(v, a);
        let bin =
            |lw: &mut Self, op: BinaryOp, x: Var, y: Var| lw.push(Op::Binary(op), &[x, y], span);
        // A rounded product the backends cannot contract into an FMA with
        // the subtraction that reads it (the CPU JIT contracts `a·b − c`):
        // behind a select (`x = x` holds but for NaN, which it keeps).
        let rounded_mul = |lw: &mut Self, x: Var, y: Var| -> Option<Var> {
            let m = bin(lw, BinaryOp::Mul, x, y)?;
            let real = lw.push(Op::Cmp(CmpOp::Eq), &[x, x], span)?;
            lw.push(Op::Select, &[real, m, x], span)
        };
        // Veltkamp: `x = hi + lo`, each half the significand.
        let halves = |lw: &mut Self, x: Var| -> Option<(Var, Var)> {
            let s = k(lw, split);
            let c = rounded_mul(lw, s, x)?;
            let d = bin(lw, BinaryOp::Sub, c, x)?;
            let hi = bin(lw, BinaryOp::Sub, c, d)?;
            let lo = bin(lw, BinaryOp::Sub, x, hi)?;
            Some((hi, lo))
        };
        let (bh, bl) = halves(self, b)?;
        // `a − q·b`, exactly when it is representable.
        let exact_rem = |lw: &mut Self, q: Var| -> Option<Var> {
            let p = rounded_mul(lw, q, b)?;
            let (qh, ql) = halves(lw, q)?;
            let hh = bin(lw, BinaryOp::Mul, qh, bh)?;
            let e = bin(lw, BinaryOp::Sub, hh, p)?;
            let hl = bin(lw, BinaryOp::Mul, qh, bl)?;
            let e = bin(lw, BinaryOp::Add, e, hl)?;
            let lh = bin(lw, BinaryOp::Mul, ql, bh)?;
            let e = bin(lw, BinaryOp::Add, e, lh)?;
            let ll = bin(lw, BinaryOp::Mul, ql, bl)?;
            let e = bin(lw, BinaryOp::Add, e, ll)?;
            let d = bin(lw, BinaryOp::Sub, a, p)?;
            bin(lw, BinaryOp::Sub, d, e)
        };
        let ratio = bin(self, BinaryOp::Div, a, b)?;
        let q0 = self.push(
            Op::Unary(UnaryOp::Round(oxla_core::ops::elementwise::Rounding::Trunc)),
            &[ratio],
            span,
        )?;
        let r0 = exact_rem(self, q0)?;
        // The quotient's direction: sign(a)·sign(b); a remainder of the
        // wrong sign means |q| one too large, one of |b| or more one too small.
        let sa = self.push(Op::Unary(UnaryOp::Sign), &[a], span)?;
        let sb = self.push(Op::Unary(UnaryOp::Sign), &[b], span)?;
        let dir = bin(self, BinaryOp::Mul, sa, sb)?;
        let sr = self.push(Op::Unary(UnaryOp::Sign), &[r0], span)?;
        let flip = bin(self, BinaryOp::Mul, sr, sa)?;
        let zero = k(self, 0.0);
        let too_big = self.push(Op::Cmp(CmpOp::Lt), &[flip, zero], span)?;
        let ar = self.abs(r0, span)?;
        let ab = self.abs(b, span)?;
        let too_small = self.push(Op::Cmp(CmpOp::Ge), &[ar, ab], span)?;
        let down = bin(self, BinaryOp::Sub, q0, dir)?;
        let up = bin(self, BinaryOp::Add, q0, dir)?;
        let q1 = self.push(Op::Select, &[too_big, down, q0], span)?;
        let q1 = self.push(Op::Select, &[too_small, up, q1], span)?;
        let r = exact_rem(self, q1)?;
        // A zero remainder has `a`'s sign (`a·0`); an infinite `b` leaves
        // `a`; a quotient past the exact range is NaN.
        let signed_zero = bin(self, BinaryOp::Mul, a, zero)?;
        let is_zero = self.push(Op::Cmp(CmpOp::Eq), &[r, zero], span)?;
        let r = self.push(Op::Select, &[is_zero, signed_zero, r], span)?;
        let inf = k(self, f64::INFINITY);
        let b_inf = self.push(Op::Cmp(CmpOp::Eq), &[ab, inf], span)?;
        let aa = self.abs(a, span)?;
        let a_finite = self.push(Op::Cmp(CmpOp::Lt), &[aa, inf], span)?;
        let keep_a = self.logic(&[b_inf, a_finite], CmpOp::Gt, 1.5, span)?;
        let r = self.push(Op::Select, &[keep_a, a, r], span)?;
        let aq = self.abs(q0, span)?;
        let lim = k(self, limit);
        let past = self.push(Op::Cmp(CmpOp::Ge), &[aq, lim], span)?;
        let nan = k(self, f64::NAN);
        self.push(Op::Select, &[past, nan, r], span)
    }

    /// Rust's `a.rem_euclid(b)` on floats: `a % b`, plus `|b|` when that is
    /// negative (so in `[0, |b|)`, rounded as Rust rounds it).
    pub(crate) fn float_rem_euclid(&mut self, a: Var, b: Var, span: Span) -> Option<Var> {
        let r = self.float_rem(a, b, span)?;
        let mut vs = [r, b];
        self.broadcast_all(&mut vs, span)?;
        let ab = self.abs(vs[1], span)?;
        let up = self.push(Op::Binary(BinaryOp::Add), &[r, ab], span)?;
        let zero = self.f.full_like(0.0, r);
        let negative = self.push(Op::Cmp(CmpOp::Lt), &[r, zero], span)?;
        self.push(Op::Select, &[negative, up, r], span)
    }

    fn clamp(&mut self, x: Var, lo: Var, hi: Var, span: Span) -> Option<Var> {
        let mut vs = [x, lo, hi];
        self.broadcast_all(&mut vs, span)?;
        let above = self.push(Op::Binary(BinaryOp::Max), &[vs[0], vs[1]], span)?;
        self.push(Op::Binary(BinaryOp::Min), &[above, vs[2]], span)
    }

    fn relu(&mut self, x: Var, span: Span) -> Option<Var> {
        let zero = self.f.zeros_like(x);
        let p = self.push(Op::Cmp(CmpOp::Le), &[x, zero], span)?;
        self.push(Op::Select, &[p, zero, x], span)
    }

    fn softplus(&mut self, x: Var, span: Span) -> Option<Var> {
        let zero = self.f.zeros_like(x);
        let p = self.push(Op::Cmp(CmpOp::Ge), &[x, zero], span)?;
        let pos = self.push(Op::Select, &[p, x, zero], span)?;
        let e = self.exp_neg_abs(x, span)?;
        let l = self.log1p(e, span)?;
        self.push(Op::Binary(BinaryOp::Add), &[pos, l], span)
    }

    fn abs(&mut self, x: Var, span: Span) -> Option<Var> {
        let zero = self.f.zeros_like(x);
        let neg = self.push(Op::Cmp(CmpOp::Lt), &[x, zero], span)?;
        let is_zero = self.push(Op::Cmp(CmpOp::Eq), &[x, zero], span)?;
        let minus = self.push(Op::Unary(UnaryOp::Neg), &[x], span)?;
        let rest = self.push(Op::Select, &[is_zero, zero, x], span)?;
        self.push(Op::Select, &[neg, minus, rest], span)
    }

    /// `exp(-|x|)`, in (0, 1] (NaN for NaN), as `exp(x >= 0 ? -x : x)`: at 0
    /// its derivative is that of `exp(-x)`, the side the callers' formulas
    /// take there (through `abs`, whose derivative at 0 is 0, it would be 0).
    fn exp_neg_abs(&mut self, x: Var, span: Span) -> Option<Var> {
        let zero = self.f.zeros_like(x);
        let p = self.push(Op::Cmp(CmpOp::Ge), &[x, zero], span)?;
        let minus = self.push(Op::Unary(UnaryOp::Neg), &[x], span)?;
        let m = self.push(Op::Select, &[p, minus, x], span)?;
        self.push(Op::Unary(UnaryOp::Exp), &[m], span)
    }

    fn sigmoid(&mut self, x: Var, span: Span) -> Option<Var> {
        let e = self.exp_neg_abs(x, span)?;
        let one = self.f.full_like(1.0, x);
        let d = self.push(Op::Binary(BinaryOp::Add), &[one, e], span)?;
        let pos = self.push(Op::Binary(BinaryOp::Div), &[one, d], span)?;
        let neg = self.push(Op::Binary(BinaryOp::Div), &[e, d], span)?;
        let zero = self.f.zeros_like(x);
        let p = self.push(Op::Cmp(CmpOp::Ge), &[x, zero], span)?;
        self.push(Op::Select, &[p, pos, neg], span)
    }

    /// `ln(1 + x)` to full precision for small `x` (Kahan): with `u = 1 + x`
    /// rounded, `ln(u) · x / (u - 1)`, or `x` where `u` rounds to 1; +inf
    /// where `u` is.
    fn log1p(&mut self, x: Var, span: Span) -> Option<Var> {
        let one = self.f.full_like(1.0, x);
        let inf = self.f.full_like(f64::INFINITY, x);
        let u = self.push(Op::Binary(BinaryOp::Add), &[one, x], span)?;
        let u_is_one = self.push(Op::Cmp(CmpOp::Eq), &[u, one], span)?;
        let u_is_inf = self.push(Op::Cmp(CmpOp::Eq), &[u, inf], span)?;
        let um1 = self.push(Op::Binary(BinaryOp::Sub), &[u, one], span)?;
        // A finite, nonzero divisor and argument in the branches not taken.
        let den = self.push(Op::Select, &[u_is_one, one, um1], span)?;
        let den = self.push(Op::Select, &[u_is_inf, one, den], span)?;
        let arg = self.push(Op::Select, &[u_is_inf, one, u], span)?;
        let l = self.push(Op::Unary(UnaryOp::Log), &[arg], span)?;
        let lx = self.push(Op::Binary(BinaryOp::Mul), &[l, x], span)?;
        let q = self.push(Op::Binary(BinaryOp::Div), &[lx, den], span)?;
        let q = self.push(Op::Select, &[u_is_one, x, q], span)?;
        self.push(Op::Select, &[u_is_inf, inf, q], span)
    }
}
