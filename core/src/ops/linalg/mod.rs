//! Dense linear algebra on the last two axes, every leading axis a batch
//! (`jnp.linalg`'s and `lax.linalg`'s convention): a few primitives with
//! JAX's derivative rules, side by side, and the rest compositions.
//!
//! | op | result | JVP | linear in |
//! |---|---|---|---|
//! | `cholesky(a)` | lower `L`, `a = L Lᵀ` (reads `a`'s lower triangle) | `L·Φ(L⁻¹ ȧ L⁻ᵀ)` | — |
//! | `triangular_solve[..](a, b)` | `op(a)⁻¹ b` or `b op(a)⁻¹` | `−op(a)⁻¹ op(ȧ) x` (or `−x op(ȧ) op(a)⁻¹`) plus the solve of `ḃ` | `b`: transpose flips `transpose_a` |
//! | `solve[t](a, b)` | `op(a)⁻¹ b` by LU with partial pivoting | `op(a)⁻¹ (ḃ − op(ȧ) x)` | `b`: transpose flips `t` |
//! | `det(a)` | the determinant | `det · tr(a⁻¹ ȧ)` | — |
//! | `log_abs_det(a)` | `log |det a|` | `tr(a⁻¹ ȧ)` | — |
//! | `det_sign(a)` | `sign det a` (0 if singular) | zero | — |
//!
//! `Φ` keeps the lower triangle and halves the diagonal (JAX's
//! `cholesky_jvp_rule`, from Murray, arXiv:1602.07527). The rule assumes a
//! symmetric `ȧ`: the user-facing `cholesky` symmetrizes its operand first,
//! `(a + aᵀ)/2`, as `lax.linalg.cholesky` does, so its gradient is
//! symmetric. A matrix that is not positive definite gives a factor whose
//! lower triangle is NaN (zeros above), as `jnp.linalg.cholesky` does. `inv`, `cho_solve` and
//! `slogdet` are compositions (see the builders below), so their
//! derivatives follow from these rules.
//!
//! Batching: the ops already take leading batch axes, so a batched operand
//! keeps its batch axis first and an unbatched one is broadcast to it.
//! Evaluation (`dense`) is shared by the interpreter and the host step that
//! runs these ops in compiled programs (`exec::linalg`).

pub mod dense;

use crate::ir::{Function, Type, Var};
use crate::ops::dot_general::{dot_general, DotDims};
use crate::ops::elementwise::CmpOp;
use crate::ops::layout::transpose;
use crate::ops::Op;
use crate::shape::{Dim, Shape};
use crate::tensor::Tensor;
use crate::transforms::vmap::BatchAxis;
use dense::Triangle;
use std::fmt;

/// A linear algebra primitive (see the module's table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinalgOp {
    Cholesky,
    TriangularSolve(TriangularSolve),
    /// `op(a)⁻¹ b`, `op` the transpose when `transpose_a`.
    Solve {
        transpose_a: bool,
    },
    Det,
    LogAbsDet,
    DetSign,
}

/// `lax.linalg.triangular_solve`'s parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TriangularSolve {
    /// `op(a) x = b` (else `x op(a) = b`).
    pub left_side: bool,
    /// `a`'s lower triangle is read (else its upper).
    pub lower: bool,
    pub transpose_a: bool,
    /// The diagonal is taken as ones (not read).
    pub unit_diagonal: bool,
}

impl TriangularSolve {
    fn triangle(self) -> Triangle {
        Triangle {
            lower: self.lower,
            transpose: self.transpose_a,
            unit_diagonal: self.unit_diagonal,
        }
    }
}

impl LinalgOp {
    /// The op's name (its text form without the flags).
    pub fn name(self) -> &'static str {
        match self {
            LinalgOp::Cholesky => "cholesky",
            LinalgOp::TriangularSolve(_) => "triangular_solve",
            LinalgOp::Solve { .. } => "solve",
            LinalgOp::Det => "det",
            LinalgOp::LogAbsDet => "log_abs_det",
            LinalgOp::DetSign => "det_sign",
        }
    }

    pub fn arity(self) -> usize {
        match self {
            LinalgOp::TriangularSolve(_) | LinalgOp::Solve { .. } => 2,
            _ => 1,
        }
    }

    /// The names of the text form (`text::parse_op` reads them back).
    pub const NAMES: [&'static str; 6] = [
        "cholesky",
        "triangular_solve",
        "solve",
        "det",
        "log_abs_det",
        "det_sign",
    ];

    /// Parses `name` with its bracketed flags (`0`/`1`), the inverse of
    /// `Display`.
    pub fn parse(name: &str, flags: Option<&str>) -> Result<LinalgOp, String> {
        let bits: Vec<bool> = match flags {
            None => Vec::new(),
            Some(s) => s
                .split(',')
                .map(|b| match b {
                    "0" => Ok(false),
                    "1" => Ok(true),
                    _ => Err(format!("bad flag `{b}` of `{name}`: 0 or 1")),
                })
                .collect::<Result<_, _>>()?,
        };
        Ok(match (name, &bits[..]) {
            ("cholesky", []) => LinalgOp::Cholesky,
            ("triangular_solve", &[left_side, lower, transpose_a, unit_diagonal]) => {
                LinalgOp::TriangularSolve(TriangularSolve {
                    left_side,
                    lower,
                    transpose_a,
                    unit_diagonal,
                })
            }
            ("solve", &[transpose_a]) => LinalgOp::Solve { transpose_a },
            ("det", []) => LinalgOp::Det,
            ("log_abs_det", []) => LinalgOp::LogAbsDet,
            ("det_sign", []) => LinalgOp::DetSign,
            _ => return Err(format!("bad op `{name}`: wrong flags {bits:?}")),
        })
    }

    pub fn infer(self, ins: &[&Type]) -> Result<Type, String> {
        let a = ins[0];
        let (n, batch) = square(a).map_err(|why| format!("{self} of {a}: {why}"))?;
        match self {
            LinalgOp::Cholesky => Ok(a.clone()),
            LinalgOp::Det | LinalgOp::LogAbsDet | LinalgOp::DetSign => {
                Ok(Type::new(a.dtype, Shape(batch.to_vec())))
            }
            LinalgOp::TriangularSolve(_) | LinalgOp::Solve { .. } => {
                let b = ins[1];
                let left = match self {
                    LinalgOp::TriangularSolve(t) => t.left_side,
                    _ => true,
                };
                let bd = &b.shape.0;
                let fits = b.dtype == a.dtype
                    && bd.len() == a.shape.rank()
                    && bd[..batch.len()] == *batch
                    && bd[if left { bd.len() - 2 } else { bd.len() - 1 }] == *n;
                if !fits {
                    let want = if left { "[..., n, m]" } else { "[..., m, n]" };
                    return Err(format!(
                        "{self} of {a} and {b}: b must be {want} with a's batch axes and dtype"
                    ));
                }
                Ok(b.clone())
            }
        }
    }

    /// The reference evaluation, matrix by matrix over the batch.
    pub fn eval(self, ins: &[&Tensor]) -> Tensor {
        let a = ins[0];
        let r = a.shape.len();
        let n = a.shape[r - 1];
        let count: usize = a.shape[..r - 2].iter().product();
        let dtype = a.dtype;
        let mut data = Vec::new();
        for k in 0..count {
            let am = &a.data[k * n * n..(k + 1) * n * n];
            let rhs = |b: &Tensor| {
                let per = b.data.len().checked_div(count).unwrap_or(0);
                b.data[k * per..(k + 1) * per].to_vec()
            };
            match self {
                LinalgOp::Cholesky => match dense::cholesky(am, n) {
                    Some(l) => data.extend(l),
                    None => data.extend((0..n * n).map(|p| {
                        let (i, j) = (p / n, p % n);
                        if j <= i {
                            f64::NAN
                        } else {
                            0.0
                        }
                    })),
                },
                LinalgOp::TriangularSolve(t) => data.extend(dense::triangular_solve(
                    am,
                    n,
                    t.triangle(),
                    t.left_side,
                    &rhs(ins[1]),
                )),
                LinalgOp::Solve { transpose_a } => {
                    data.extend(dense::lu(am, n).solve(&rhs(ins[1]), transpose_a))
                }
                LinalgOp::Det => data.push(dense::lu(am, n).det()),
                LinalgOp::LogAbsDet => data.push(dense::lu(am, n).slogdet().1),
                LinalgOp::DetSign => data.push(dense::lu(am, n).slogdet().0),
            }
        }
        let shape = match self {
            LinalgOp::Cholesky => a.shape.clone(),
            LinalgOp::TriangularSolve(_) | LinalgOp::Solve { .. } => ins[1].shape.clone(),
            _ => a.shape[..r - 2].to_vec(),
        };
        let data = data.into_iter().map(|x| dtype.round(x)).collect();
        Tensor::new(dtype, shape, data)
    }

    /// The tangent of result `out` given the operands' tangents.
    pub fn jvp(self, f: &mut Function, ins: &[Var], out: Var, t: &[Option<Var>]) -> Option<Var> {
        let a = ins[0];
        match self {
            LinalgOp::Cholesky => t[0].map(|da| cholesky_jvp(f, out, da)),
            LinalgOp::TriangularSolve(ts) => {
                let from_a = t[0].map(|da| {
                    // Only the triangle the solve reads has a derivative.
                    let da = triangle_part(f, da, ts.lower, !ts.unit_diagonal);
                    let op_da = if ts.transpose_a { swap_last(f, da) } else { da };
                    let prod = if ts.left_side {
                        matmul(f, op_da, out)
                    } else {
                        matmul(f, out, op_da)
                    };
                    let s = push(f, self, &[a, prod]);
                    f.neg(s)
                });
                let from_b = t[1].map(|db| push(f, self, &[a, db]));
                add_opt(f, from_a, from_b)
            }
            LinalgOp::Solve { transpose_a } => {
                let from_a = t[0].map(|da| {
                    let op_da = if transpose_a { swap_last(f, da) } else { da };
                    let prod = matmul(f, op_da, out);
                    let s = push(f, self, &[a, prod]);
                    f.neg(s)
                });
                let from_b = t[1].map(|db| push(f, self, &[a, db]));
                add_opt(f, from_a, from_b)
            }
            LinalgOp::Det => t[0].map(|da| {
                let tr = trace_solve(f, a, da);
                f.mul(out, tr)
            }),
            LinalgOp::LogAbsDet => t[0].map(|da| trace_solve(f, a, da)),
            LinalgOp::DetSign => None,
        }
    }

    /// Whether operand `i` may carry a tangent linearly: a solve's `b`.
    pub fn is_linear_in(self, i: usize) -> bool {
        matches!(self, LinalgOp::TriangularSolve(_) | LinalgOp::Solve { .. }) && i == 1
    }

    /// Whether a tangent reaches the result (not `det_sign`'s).
    pub fn has_tangent(self) -> bool {
        self != LinalgOp::DetSign
    }

    /// The cotangent of `b` (the one linear operand), `a` known: the solve
    /// with the transposed matrix, `op(a)⁻ᵀ ct` (or `ct op(a)⁻ᵀ`).
    pub fn transpose(self, f: &mut Function, a: Var, ct: Var) -> Var {
        let flipped = match self {
            LinalgOp::TriangularSolve(t) => LinalgOp::TriangularSolve(TriangularSolve {
                transpose_a: !t.transpose_a,
                ..t
            }),
            LinalgOp::Solve { transpose_a } => LinalgOp::Solve {
                transpose_a: !transpose_a,
            },
            _ => panic!("internal error: {self} is not linear"),
        };
        push(f, flipped, &[a, ct])
    }

    /// Batching: the batch axis leads, which the ops take as one more batch
    /// axis; an unbatched operand is broadcast along it.
    pub fn batch(self, f: &mut Function, ins: &[Var], batched: &[bool], axis: &BatchAxis) -> Var {
        let ins = f.batch_all(ins, batched, &axis.size);
        push(f, self, &ins)
    }
}

impl fmt::Display for LinalgOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = |x: bool| u8::from(x);
        match self {
            LinalgOp::Cholesky => f.write_str("cholesky"),
            LinalgOp::TriangularSolve(t) => write!(
                f,
                "triangular_solve[{},{},{},{}]",
                b(t.left_side),
                b(t.lower),
                b(t.transpose_a),
                b(t.unit_diagonal)
            ),
            LinalgOp::Solve { transpose_a } => write!(f, "solve[{}]", b(*transpose_a)),
            LinalgOp::Det => f.write_str("det"),
            LinalgOp::LogAbsDet => f.write_str("log_abs_det"),
            LinalgOp::DetSign => f.write_str("det_sign"),
        }
    }
}

/// The size of a square matrix type's last two axes, and its batch axes.
fn square(a: &Type) -> Result<(&Dim, &[Dim]), String> {
    let d = &a.shape.0;
    if !a.dtype.is_float() || d.len() < 2 {
        return Err("needs a float array of rank ≥ 2 (a matrix, or a batch of them)".into());
    }
    let r = d.len();
    if d[r - 1] != d[r - 2] {
        return Err(format!(
            "its last two axes ({} and {}) are not a square matrix",
            d[r - 2],
            d[r - 1]
        ));
    }
    Ok((&d[r - 1], &d[..r - 2]))
}

fn push(f: &mut Function, op: LinalgOp, ins: &[Var]) -> Var {
    f.push(Op::Linalg(op), ins)
        .unwrap_or_else(|e| panic!("internal error: {e}"))
}

fn add_opt(f: &mut Function, a: Option<Var>, b: Option<Var>) -> Option<Var> {
    match (a, b) {
        (Some(a), Some(b)) => Some(f.add(a, b)),
        (a, b) => a.or(b),
    }
}

/// `x y` over the last two axes, the leading ones paired.
pub fn matmul(f: &mut Function, x: Var, y: Var) -> Var {
    let r = f.shape(x).rank();
    let batch: Vec<usize> = (0..r - 2).collect();
    let d = DotDims {
        lhs_contract: vec![r - 1],
        rhs_contract: vec![r - 2],
        lhs_batch: batch.clone(),
        rhs_batch: batch,
    };
    dot_general(f, x, y, d)
}

/// `x` with its last two axes swapped.
pub fn swap_last(f: &mut Function, x: Var) -> Var {
    let r = f.shape(x).rank();
    let mut perm: Vec<usize> = (0..r).collect();
    perm.swap(r - 2, r - 1);
    transpose(f, x, perm)
}

/// The comparison `cmp(row, col)` over `x`'s shape, row and column its
/// last two axes.
fn position_mask(f: &mut Function, x: Var, cmp: CmpOp) -> Var {
    let shape = f.shape(x).clone();
    let r = shape.rank();
    let dtype = f.dtype(x);
    let iota = |axis| Op::Iota {
        shape: shape.clone(),
        axis,
        dtype,
    };
    let row = f.push(iota(r - 2), &[]).expect("internal error: iota");
    let col = f.push(iota(r - 1), &[]).expect("internal error: iota");
    f.cmp(cmp, row, col)
}

/// The lower (or upper) triangle of `x`, with or without its diagonal,
/// zeros elsewhere (picked by a select, so an infinity outside stays out).
pub fn triangle_part(f: &mut Function, x: Var, lower: bool, diagonal: bool) -> Var {
    let cmp = match (lower, diagonal) {
        (true, true) => CmpOp::Ge,
        (true, false) => CmpOp::Gt,
        (false, true) => CmpOp::Le,
        (false, false) => CmpOp::Lt,
    };
    let keep = position_mask(f, x, cmp);
    let zero = f.zeros_like(x);
    f.select(keep, x, zero)
}

/// `tr(a⁻¹ da)` over the batch.
fn trace_solve(f: &mut Function, a: Var, da: Var) -> Var {
    let s = push(f, LinalgOp::Solve { transpose_a: false }, &[a, da]);
    let on_diagonal = position_mask(f, s, CmpOp::Eq);
    let zero = f.zeros_like(s);
    let diag = f.select(on_diagonal, s, zero);
    let r = f.shape(s).rank();
    f.reduce_sum(diag, vec![r - 2, r - 1])
}

/// JAX's `cholesky_jvp_rule`: `L̇ = L Φ(L⁻¹ ȧ L⁻ᵀ)`.
fn cholesky_jvp(f: &mut Function, l: Var, da: Var) -> Var {
    let lower = |left_side, transpose_a| {
        LinalgOp::TriangularSolve(TriangularSolve {
            left_side,
            lower: true,
            transpose_a,
            unit_diagonal: false,
        })
    };
    // ȧ L⁻ᵀ, then L⁻¹ (ȧ L⁻ᵀ).
    let right = push(f, lower(false, true), &[l, da]);
    let inner = push(f, lower(true, false), &[l, right]);
    // Φ: the strict lower triangle plus half the diagonal.
    let strict = triangle_part(f, inner, true, false);
    let on_diagonal = position_mask(f, inner, CmpOp::Eq);
    let zero = f.zeros_like(inner);
    let diag = f.select(on_diagonal, inner, zero);
    let half = f.full_like(0.5, diag);
    let half_diag = f.mul(half, diag);
    let phi = f.add(strict, half_diag);
    matmul(f, l, phi)
}

// The builders the lowering and the tests use.

pub fn cholesky(f: &mut Function, a: Var) -> Var {
    push(f, LinalgOp::Cholesky, &[a])
}

/// `(a + aᵀ)/2`: what `lax.linalg.cholesky` factors by default.
pub fn symmetrize(f: &mut Function, a: Var) -> Var {
    let at = swap_last(f, a);
    let s = f.add(a, at);
    let half = f.full_like(0.5, s);
    f.mul(half, s)
}

pub fn triangular_solve(f: &mut Function, a: Var, b: Var, t: TriangularSolve) -> Var {
    push(f, LinalgOp::TriangularSolve(t), &[a, b])
}

pub fn solve(f: &mut Function, a: Var, b: Var) -> Var {
    push(f, LinalgOp::Solve { transpose_a: false }, &[a, b])
}

/// `jax.scipy.linalg.cho_solve((l, True), b)`: `x` with `l lᵀ x = b`, two
/// triangular solves.
pub fn cho_solve(f: &mut Function, l: Var, b: Var) -> Var {
    let t = |transpose_a| TriangularSolve {
        left_side: true,
        lower: true,
        transpose_a,
        unit_diagonal: false,
    };
    let y = triangular_solve(f, l, b, t(false));
    triangular_solve(f, l, y, t(true))
}

/// The identity matrix of `a`'s type.
pub fn eye_like(f: &mut Function, a: Var) -> Var {
    let on_diagonal = position_mask(f, a, CmpOp::Eq);
    let one = f.full_like(1.0, a);
    let zero = f.zeros_like(a);
    f.select(on_diagonal, one, zero)
}

/// `jnp.linalg.inv`: `solve(a, I)`.
pub fn inv(f: &mut Function, a: Var) -> Var {
    let i = eye_like(f, a);
    solve(f, a, i)
}

pub fn det(f: &mut Function, a: Var) -> Var {
    push(f, LinalgOp::Det, &[a])
}

/// `jnp.linalg.slogdet`: `(sign, log|det|)`.
pub fn slogdet(f: &mut Function, a: Var) -> (Var, Var) {
    (
        push(f, LinalgOp::DetSign, &[a]),
        push(f, LinalgOp::LogAbsDet, &[a]),
    )
}
