//! Elementwise ops: unary math, binary arithmetic, comparisons and select.
//!
//! Every rule of every elementwise op is here, side by side: evaluation on one
//! element (`eval`), the JVP, the transpose (for the ops linear in an operand),
//! and lowering into the kernel IR (the same enums are kernel instructions).
//! Batching is generic: operands are brought to the batched shape (see `batch`).

use crate::ir::{Function, Var};

/// Unary elementwise ops on floats.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum UnaryOp {
    Neg,
    Exp,
    Log,
    Sin,
    Cos,
    Tanh,
    Sqrt,
    /// Integer power.
    Powi(i32),
    /// `e^x − 1`, accurate near 0 (Rust's `exp_m1`, `jnp.expm1`).
    ExpM1,
    /// The error function (`jax.lax.erf`).
    Erf,
    /// Rounding to an integer (see `Rounding`): piecewise constant, so the
    /// derivative is a symbolic zero in every order.
    Round(Rounding),
    /// `jnp.sign` (`lax.sign`): -1, +1, or the operand itself for ±0 and NaN.
    Sign,
    /// Rust's `signum`: ±1 with the sign bit of the operand (so ±1 for ±0),
    /// NaN for NaN.
    Signum,
}

/// The ways of rounding to an integer; every one is exact, keeps the sign of
/// a zero result (`(-0.3).trunc()` is -0.0) and returns ±inf, NaN and values
/// too large to have a fraction unchanged.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Rounding {
    /// Toward -inf (`floor`).
    Floor,
    /// Toward +inf (`ceil`).
    Ceil,
    /// Toward zero (`trunc`).
    Trunc,
    /// To nearest, halfway away from zero (Rust's `round`).
    HalfAway,
    /// To nearest, halfway to even (Rust's `round_ties_even`, `jnp.round`).
    HalfEven,
}

impl Rounding {
    pub const ALL: [Rounding; 5] = [
        Rounding::Floor,
        Rounding::Ceil,
        Rounding::Trunc,
        Rounding::HalfAway,
        Rounding::HalfEven,
    ];

    /// The Rust method's name, which is also the op's name in the text form.
    pub fn name(self) -> &'static str {
        match self {
            Rounding::Floor => "floor",
            Rounding::Ceil => "ceil",
            Rounding::Trunc => "trunc",
            Rounding::HalfAway => "round",
            Rounding::HalfEven => "round_ties_even",
        }
    }

    pub fn eval(self, x: f64) -> f64 {
        match self {
            Rounding::Floor => x.floor(),
            Rounding::Ceil => x.ceil(),
            Rounding::Trunc => x.trunc(),
            Rounding::HalfAway => x.round(),
            Rounding::HalfEven => x.round_ties_even(),
        }
    }
}

/// The error function in f64 (the `libm` crate's, fdlibm's algorithm: within
/// an ulp): the interpreters' reference and what generated scalar code calls.
pub fn erf(x: f64) -> f64 {
    libm::erf(x)
}

/// Binary elementwise ops on floats of equal shapes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    /// NaN if either operand is NaN, else `if a > b { a } else { b }`
    /// (JAX's `maximum`: NaN propagates from both positions).
    Max,
    /// NaN if either operand is NaN, else `if a < b { a } else { b }`.
    Min,
    /// `a^b` with Rust's `powf` (C's `pow`) on every special value:
    /// `pow(x, ±0) = 1` even for a NaN `x`, `pow(1, y) = 1` even for a NaN
    /// `y`, a negative finite `x` with a non-integer finite `y` is NaN, and
    /// a negative `x` with an integer `y` takes the sign of `x^y`.
    Pow,
}

/// Comparisons; the result is `bool`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl UnaryOp {
    pub fn name(self) -> String {
        match self {
            UnaryOp::Neg => "neg".into(),
            UnaryOp::Exp => "exp".into(),
            UnaryOp::Log => "log".into(),
            UnaryOp::Sin => "sin".into(),
            UnaryOp::Cos => "cos".into(),
            UnaryOp::Tanh => "tanh".into(),
            UnaryOp::Sqrt => "sqrt".into(),
            UnaryOp::Powi(n) => format!("powi[{n}]"),
            UnaryOp::ExpM1 => "expm1".into(),
            UnaryOp::Erf => "erf".into(),
            UnaryOp::Round(r) => r.name().into(),
            UnaryOp::Sign => "sign".into(),
            UnaryOp::Signum => "signum".into(),
        }
    }

    /// The unary ops without parameters.
    pub const SIMPLE: [UnaryOp; 16] = [
        UnaryOp::Neg,
        UnaryOp::Exp,
        UnaryOp::Log,
        UnaryOp::Sin,
        UnaryOp::Cos,
        UnaryOp::Tanh,
        UnaryOp::Sqrt,
        UnaryOp::ExpM1,
        UnaryOp::Erf,
        UnaryOp::Round(Rounding::Floor),
        UnaryOp::Round(Rounding::Ceil),
        UnaryOp::Round(Rounding::Trunc),
        UnaryOp::Round(Rounding::HalfAway),
        UnaryOp::Round(Rounding::HalfEven),
        UnaryOp::Sign,
        UnaryOp::Signum,
    ];

    /// Evaluate on one element (in f64; callers round to the dtype).
    pub fn eval(self, x: f64) -> f64 {
        match self {
            UnaryOp::Neg => -x,
            UnaryOp::Exp => x.exp(),
            UnaryOp::Log => x.ln(),
            UnaryOp::Sin => x.sin(),
            UnaryOp::Cos => x.cos(),
            UnaryOp::Tanh => x.tanh(),
            UnaryOp::Sqrt => x.sqrt(),
            UnaryOp::Powi(n) => x.powi(n),
            UnaryOp::ExpM1 => x.exp_m1(),
            UnaryOp::Erf => erf(x),
            UnaryOp::Round(r) => r.eval(x),
            UnaryOp::Sign => {
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    x
                }
            }
            UnaryOp::Signum => x.signum(),
        }
    }

    /// Tangent of `y = op(x)` given the tangent `t` of `x`; `None` is a
    /// symbolic zero (`powi[0]` and the piecewise-constant ops, whose
    /// derivative is 0 wherever it exists; JAX gives 0 at the jumps too).
    pub fn jvp(self, f: &mut Function, x: Var, y: Var, t: Var) -> Option<Var> {
        Some(match self {
            UnaryOp::Round(_) | UnaryOp::Sign | UnaryOp::Signum => return None,
            UnaryOp::Neg => f.neg(t),
            UnaryOp::Exp => f.mul(t, y),
            UnaryOp::ExpM1 => {
                // e^x, not JAX's `expm1(x) + 1`: the same value, but the sum
                // cancels for x < 0 (relative error 1e-3 at -30, exactly 0
                // below -37 in f64 where expm1 rounds to -1), and e^x's own
                // derivatives are e^x in every order.
                let e = f.unary(UnaryOp::Exp, x);
                f.mul(t, e)
            }
            UnaryOp::Erf => {
                // 2/√π · e^(−x²), JAX's rule; its own derivatives follow
                // from exp, mul and neg.
                let x2 = f.mul(x, x);
                let m = f.neg(x2);
                let e = f.unary(UnaryOp::Exp, m);
                let c = f.full_like(std::f64::consts::FRAC_2_SQRT_PI, x);
                let d = f.mul(c, e);
                f.mul(t, d)
            }
            UnaryOp::Log => f.div(t, x),
            UnaryOp::Sin => {
                let c = f.unary(UnaryOp::Cos, x);
                f.mul(t, c)
            }
            UnaryOp::Cos => {
                let s = f.unary(UnaryOp::Sin, x);
                let ns = f.neg(s);
                f.mul(t, ns)
            }
            UnaryOp::Tanh => {
                // 1 - y^2
                let y2 = f.mul(y, y);
                let one = f.full_like(1.0, y);
                let d = f.sub(one, y2);
                f.mul(t, d)
            }
            UnaryOp::Sqrt => {
                // t / (2 y)
                let two = f.full_like(2.0, y);
                let d = f.mul(two, y);
                f.div(t, d)
            }
            UnaryOp::Powi(n) => {
                // d/dx x^n = n x^(n-1), with JAX's `integer_pow` conventions:
                // n = 0 has derivative exactly 0 (a symbolic zero, not
                // 0 * x^-1, which is NaN at 0) and n = 1 exactly 1, so no
                // derivative of any order is NaN at 0.
                let d = match n {
                    0 => return None,
                    1 => f.full_like(1.0, x),
                    // n - 1 does not fit in i32: x^(n-1) = x^n * x^-1.
                    i32::MIN => {
                        let p = f.unary(UnaryOp::Powi(n), x);
                        let r = f.unary(UnaryOp::Powi(-1), x);
                        let p = f.mul(p, r);
                        let c = f.full_like(n as f64, x);
                        f.mul(c, p)
                    }
                    _ => {
                        let p = f.unary(UnaryOp::Powi(n - 1), x);
                        let c = f.full_like(n as f64, x);
                        f.mul(c, p)
                    }
                };
                f.mul(t, d)
            }
        })
    }

    /// Whether the op is linear in its operand (only `neg`).
    pub fn is_linear(self) -> bool {
        matches!(self, UnaryOp::Neg)
    }
}

impl BinaryOp {
    pub const ALL: [BinaryOp; 7] = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Max,
        BinaryOp::Min,
        BinaryOp::Pow,
    ];

    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::Max => "max",
            BinaryOp::Min => "min",
            BinaryOp::Pow => "pow",
        }
    }

    pub fn eval(self, a: f64, b: f64) -> f64 {
        match self {
            BinaryOp::Add => a + b,
            BinaryOp::Sub => a - b,
            BinaryOp::Mul => a * b,
            BinaryOp::Div => a / b,
            // NaN from either operand; at a tie the bitwise AND (max) or OR
            // (min) of the operands: the operand itself when they are equal
            // and non-zero (same bits), and +0 for max, -0 for min of zeros of
            // either sign in either order, as JAX's (`lax.max`, IEEE 754-2019
            // `maximum`) does.
            BinaryOp::Max => {
                if a == b {
                    f64::from_bits(a.to_bits() & b.to_bits())
                } else if a > b || a.is_nan() {
                    a
                } else {
                    b
                }
            }
            BinaryOp::Min => {
                if a == b {
                    f64::from_bits(a.to_bits() | b.to_bits())
                } else if a < b || a.is_nan() {
                    a
                } else {
                    b
                }
            }
            BinaryOp::Pow => a.powf(b),
        }
    }

    /// Tangent of `y = op(a, b)`; `None` tangents are symbolic zeros.
    pub fn jvp(
        self,
        f: &mut Function,
        a: Var,
        b: Var,
        y: Var,
        ta: Option<Var>,
        tb: Option<Var>,
    ) -> Option<Var> {
        match self {
            BinaryOp::Add => add_opt(f, ta, tb),
            BinaryOp::Sub => {
                let ntb = tb.map(|t| f.neg(t));
                add_opt(f, ta, ntb)
            }
            BinaryOp::Mul => {
                let l = ta.map(|t| f.mul(t, b));
                let r = tb.map(|t| f.mul(a, t));
                add_opt(f, l, r)
            }
            BinaryOp::Div => {
                // (ta - y * tb) / b
                let yt = tb.map(|t| {
                    let p = f.mul(y, t);
                    f.neg(p)
                });
                let num = add_opt(f, ta, yt)?;
                Some(f.div(num, b))
            }
            BinaryOp::Max | BinaryOp::Min => {
                // JAX's `_balanced_eq`: each operand equal to the result gets
                // weight 1, halved when both are (a tie splits 0.5/0.5); a NaN
                // result equals neither operand, so both get 0. The weights
                // are built from comparisons, selects and literals of primal
                // values only, so they carry no tangent themselves and every
                // higher derivative, transpose and batching rule applies.
                let wa = ta.map(|_| balanced_weight(f, a, b, y));
                let wb = tb.map(|_| balanced_weight(f, b, a, y));
                let l = ta.zip(wa).map(|(t, w)| f.mul(t, w));
                let r = tb.zip(wb).map(|(t, w)| f.mul(t, w));
                add_opt(f, l, r)
            }
            BinaryOp::Pow => {
                let l = ta.map(|t| {
                    let d = pow_slope_base(f, a, b);
                    f.mul(t, d)
                });
                let r = tb.map(|t| {
                    let d = pow_slope_exponent(f, a, y);
                    f.mul(t, d)
                });
                add_opt(f, l, r)
            }
        }
    }

    /// Whether the op is linear in operand `i` when the other operand is a
    /// constant of the linear map (so it may have a linear operand there).
    pub fn linear_in(self, i: usize) -> bool {
        match self {
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul => true,
            BinaryOp::Div => i == 0,
            BinaryOp::Max | BinaryOp::Min | BinaryOp::Pow => false,
        }
    }

    /// Cotangents of the linear operands given the output cotangent `ct`.
    /// `known[i]` is the operand's value when it is not linear.
    pub fn transpose(self, f: &mut Function, known: [Option<Var>; 2], ct: Var) -> [Option<Var>; 2] {
        match self {
            BinaryOp::Add => [
                known[0].is_none().then_some(ct),
                known[1].is_none().then_some(ct),
            ],
            BinaryOp::Sub => {
                let cb = known[1].is_none().then(|| f.neg(ct));
                [known[0].is_none().then_some(ct), cb]
            }
            BinaryOp::Mul => match known {
                [None, Some(b)] => [Some(f.mul(ct, b)), None],
                [Some(a), None] => [None, Some(f.mul(a, ct))],
                _ => panic!("internal error: mul transposed with both or neither operand linear"),
            },
            BinaryOp::Div => match known {
                [None, Some(b)] => [Some(f.div(ct, b)), None],
                _ => panic!("internal error: div is linear only in its numerator"),
            },
            BinaryOp::Max | BinaryOp::Min | BinaryOp::Pow => {
                panic!("internal error: {} is not linear", self.name())
            }
        }
    }
}

/// `∂(x^y)/∂x = y·x^(y−1)`, defined as 0 where `y == 0` (so `x^0 = 1` has
/// slope 0 at `x = 0` too, not `0·0^(−1)` = NaN). JAX's float rule is
/// `y·pow(x, y − 1)` alone (NaN at x = 0, y = 0). The select is on primal
/// values, so every higher derivative follows; the mixed second derivative
/// exactly at `y == 0` sees the constant branch (0, where `1/x` is the limit).
fn pow_slope_base(f: &mut Function, x: Var, y: Var) -> Var {
    let one = f.full_like(1.0, y);
    let zero = f.zeros_like(y);
    let ym1 = f.sub(y, one);
    let p = f.binary(BinaryOp::Pow, x, ym1);
    let d = f.mul(y, p);
    let y_is_zero = f.cmp(CmpOp::Eq, y, zero);
    f.select(y_is_zero, zero, d)
}

/// `∂(x^y)/∂y = ln(x)·x^y`, defined as 0 where `x == 0` for every `y`.
/// JAX replaces `x == 0` by 1 inside the log (`_replace_zero`), which gives
/// 0 where `x^y` is finite but `0·inf` = NaN for `y < 0`; the select gives
/// 0 there too (the branch not taken carries no tangent, so every order
/// follows). NaN for a negative `x`, whose non-integer powers are NaN.
fn pow_slope_exponent(f: &mut Function, x: Var, ans: Var) -> Var {
    let zero = f.zeros_like(x);
    let x_is_zero = f.cmp(CmpOp::Eq, x, zero);
    let l = f.unary(UnaryOp::Log, x);
    let d = f.mul(l, ans);
    f.select(x_is_zero, zero, d)
}

/// The weight of operand `x` in the tangent of `y = max(x, other)` (or
/// `min`): `(x == y ? 1 : 0) / (other == y ? 2 : 1)`, as a nested select.
fn balanced_weight(f: &mut Function, x: Var, other: Var, y: Var) -> Var {
    let x_is_y = f.cmp(CmpOp::Eq, x, y);
    let other_is_y = f.cmp(CmpOp::Eq, other, y);
    let one = f.full_like(1.0, y);
    let half = f.full_like(0.5, y);
    let zero = f.zeros_like(y);
    let shared = f.select(other_is_y, half, one);
    f.select(x_is_y, shared, zero)
}

fn add_opt(f: &mut Function, a: Option<Var>, b: Option<Var>) -> Option<Var> {
    match (a, b) {
        (Some(a), Some(b)) => Some(f.add(a, b)),
        (a, None) => a,
        (None, b) => b,
    }
}

impl CmpOp {
    pub const ALL: [CmpOp; 6] = [
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
        CmpOp::Eq,
        CmpOp::Ne,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CmpOp::Lt => "lt",
            CmpOp::Le => "le",
            CmpOp::Gt => "gt",
            CmpOp::Ge => "ge",
            CmpOp::Eq => "eq",
            CmpOp::Ne => "ne",
        }
    }

    pub fn eval(self, a: f64, b: f64) -> bool {
        match self {
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
        }
    }
}
