//! The dense factorizations and solves behind the linear algebra ops
//! (`ops::linalg`), on row-major `f64` matrices: the reference
//! interpreter and the host step both run these, so every backend gets
//! the same numbers. Unblocked right-looking loops whose inner loops run
//! along contiguous rows (so they vectorize); see ARCHITECTURE's "Linear
//! algebra" for why there is no library here.

/// The lower Cholesky factor of the `n × n` matrix `a` (only its lower
/// triangle is read), zeros above the diagonal; `None` when a pivot is not
/// positive (the matrix is not positive definite, or holds a NaN).
pub fn cholesky(a: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut l = vec![0.0; n * n];
    for j in 0..n {
        let row_j = j * n;
        let d = a[row_j + j] - dot(&l[row_j..row_j + j], &l[row_j..row_j + j]);
        if d.is_nan() || d <= 0.0 {
            return None;
        }
        let d = d.sqrt();
        l[row_j + j] = d;
        for i in j + 1..n {
            let (head, tail) = l.split_at_mut(i * n);
            let s = dot(&tail[..j], &head[row_j..row_j + j]);
            tail[j] = (a[i * n + j] - s) / d;
        }
    }
    Some(l)
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    // Four accumulators, so the sum is not one long dependency chain.
    let mut acc = [0.0f64; 4];
    let chunks = a.len() / 4;
    for c in 0..chunks {
        for k in 0..4 {
            acc[k] += a[4 * c + k] * b[4 * c + k];
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for k in 4 * chunks..a.len() {
        s += a[k] * b[k];
    }
    s
}

/// `rows[dst] -= factor · rows[src]` for rows of length `m` (`src != dst`).
fn axpy_rows(x: &mut [f64], m: usize, dst: usize, src: usize, factor: f64) {
    if factor == 0.0 {
        return;
    }
    let (d, s) = if dst > src {
        let (lo, hi) = x.split_at_mut(dst * m);
        (&mut hi[..m], &lo[src * m..src * m + m])
    } else {
        let (lo, hi) = x.split_at_mut(src * m);
        (&mut lo[dst * m..dst * m + m], &hi[..m])
    };
    for (d, s) in d.iter_mut().zip(s) {
        *d -= factor * s;
    }
}

/// How a triangular matrix is read: which triangle, whether transposed,
/// whether its diagonal is taken as ones.
#[derive(Clone, Copy, Debug)]
pub struct Triangle {
    pub lower: bool,
    pub transpose: bool,
    pub unit_diagonal: bool,
}

/// The triangular matrix `op(a)` that `Triangle` describes, written out
/// (zeros in the other triangle), and whether it is lower triangular.
fn triangle_of(a: &[f64], n: usize, t: Triangle) -> (Vec<f64>, bool) {
    let mut m = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            let inside = if t.lower { j <= i } else { j >= i };
            if !inside {
                continue;
            }
            let v = if i == j && t.unit_diagonal {
                1.0
            } else {
                a[i * n + j]
            };
            if t.transpose {
                m[j * n + i] = v;
            } else {
                m[i * n + j] = v;
            }
        }
    }
    (m, t.lower != t.transpose)
}

/// Solve `t x = b` in place for a triangular `n × n` `t` and `n × m` `b`,
/// by forward (`lower`) or backward substitution along rows of `b`.
fn substitute(t: &[f64], n: usize, lower: bool, b: &mut [f64], m: usize) {
    let order: Box<dyn Iterator<Item = usize>> = if lower {
        Box::new(0..n)
    } else {
        Box::new((0..n).rev())
    };
    for i in order {
        let known: Box<dyn Iterator<Item = usize>> = if lower {
            Box::new(0..i)
        } else {
            Box::new(i + 1..n)
        };
        for k in known {
            axpy_rows(b, m, i, k, t[i * n + k]);
        }
        let d = t[i * n + i];
        for v in &mut b[i * m..i * m + m] {
            *v /= d;
        }
    }
}

fn transposed(x: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    let mut t = vec![0.0; x.len()];
    for i in 0..rows {
        for j in 0..cols {
            t[j * rows + i] = x[i * cols + j];
        }
    }
    t
}

/// `lax.linalg.triangular_solve`: `x` with `op(a) x = b` (`left_side`, `b`
/// of `n × m`) or `x op(a) = b` (`b` of `m × n`), `op(a)` the triangle
/// `t` of the `n × n` `a`.
pub fn triangular_solve(a: &[f64], n: usize, t: Triangle, left_side: bool, b: &[f64]) -> Vec<f64> {
    let m = b.len().checked_div(n).unwrap_or(0);
    let (tri, lower) = triangle_of(a, n, t);
    if left_side {
        let mut x = b.to_vec();
        substitute(&tri, n, lower, &mut x, m);
        x
    } else {
        // x T = b  ⇔  Tᵀ xᵀ = bᵀ, and Tᵀ is triangular the other way.
        let tri_t = transposed(&tri, n, n);
        let mut xt = transposed(b, m, n);
        substitute(&tri_t, n, !lower, &mut xt, m);
        transposed(&xt, n, m)
    }
}

/// An LU factorization with partial pivoting, `P a = L U` (LAPACK's
/// `getrf`): `L` unit lower and `U` upper packed in `lu`, and `perm[i]` the
/// row of `a` that is row `i` of `P a`.
pub struct Lu {
    pub n: usize,
    pub lu: Vec<f64>,
    pub perm: Vec<usize>,
    /// The permutation's sign, `±1`.
    pub parity: f64,
}

pub fn lu(a: &[f64], n: usize) -> Lu {
    let mut lu = a.to_vec();
    let mut perm: Vec<usize> = (0..n).collect();
    let mut parity = 1.0;
    for j in 0..n {
        // The largest magnitude in column j at or below the diagonal (the
        // first such on ties, as LAPACK's `idamax`; a NaN is never chosen
        // over a number, and leaves the pivot as is).
        let mut p = j;
        for i in j + 1..n {
            if lu[i * n + j].abs() > lu[p * n + j].abs() {
                p = i;
            }
        }
        if p != j {
            for k in 0..n {
                lu.swap(j * n + k, p * n + k);
            }
            perm.swap(j, p);
            parity = -parity;
        }
        let d = lu[j * n + j];
        if d == 0.0 {
            // A singular column: nothing to eliminate with (LAPACK goes on
            // likewise, and the solves divide by the zero).
            continue;
        }
        for i in j + 1..n {
            let factor = lu[i * n + j] / d;
            lu[i * n + j] = factor;
            let (head, tail) = lu.split_at_mut(i * n);
            let pivot_row = &head[j * n + j + 1..j * n + n];
            for (x, p) in tail[j + 1..n].iter_mut().zip(pivot_row) {
                *x -= factor * p;
            }
        }
    }
    Lu {
        n,
        lu,
        perm,
        parity,
    }
}

impl Lu {
    /// `x` with `a x = b` (`transpose`: `aᵀ x = b`) for `b` of `n × m`.
    pub fn solve(&self, b: &[f64], transpose: bool) -> Vec<f64> {
        let n = self.n;
        let m = b.len().checked_div(n).unwrap_or(0);
        let unit_lower = Triangle {
            lower: true,
            transpose: false,
            unit_diagonal: true,
        };
        let upper = Triangle {
            lower: false,
            transpose: false,
            unit_diagonal: false,
        };
        if !transpose {
            // a = Pᵀ L U: solve L U x = P b.
            let mut pb = vec![0.0; n * m];
            for (i, &r) in self.perm.iter().enumerate() {
                pb[i * m..i * m + m].copy_from_slice(&b[r * m..r * m + m]);
            }
            let y = triangular_solve(&self.lu, n, unit_lower, true, &pb);
            triangular_solve(&self.lu, n, upper, true, &y)
        } else {
            // aᵀ = Uᵀ Lᵀ P: solve Uᵀ Lᵀ z = b, then x = Pᵀ z.
            let t = |tri: Triangle| Triangle {
                transpose: true,
                ..tri
            };
            let y = triangular_solve(&self.lu, n, t(upper), true, b);
            let z = triangular_solve(&self.lu, n, t(unit_lower), true, &y);
            let mut x = vec![0.0; n * m];
            for (i, &r) in self.perm.iter().enumerate() {
                x[r * m..r * m + m].copy_from_slice(&z[i * m..i * m + m]);
            }
            x
        }
    }

    /// `(sign, log|det|)` (`jnp.linalg.slogdet`): `(0, -∞)` for a singular
    /// matrix.
    pub fn slogdet(&self) -> (f64, f64) {
        let n = self.n;
        let (mut sign, mut log) = (self.parity, 0.0);
        for i in 0..n {
            let u = self.lu[i * n + i];
            if u == 0.0 {
                return (0.0, f64::NEG_INFINITY);
            }
            sign *= u.signum();
            log += u.abs().ln();
        }
        (sign, log)
    }

    /// The determinant, as the product of `U`'s diagonal (it overflows
    /// where `slogdet` does not, as JAX's `det` does).
    pub fn det(&self) -> f64 {
        let n = self.n;
        (0..n).fold(self.parity, |d, i| d * self.lu[i * n + i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matmul(a: &[f64], b: &[f64], n: usize, k: usize, m: usize) -> Vec<f64> {
        let mut c = vec![0.0; n * m];
        for i in 0..n {
            for j in 0..m {
                c[i * m + j] = (0..k).map(|p| a[i * k + p] * b[p * m + j]).sum();
            }
        }
        c
    }

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
    }

    const A: [f64; 9] = [4.0, 2.0, 0.6, 2.0, 5.0, 1.0, 0.6, 1.0, 3.0];

    #[test]
    fn cholesky_reproduces_the_matrix() {
        let l = cholesky(&A, 3).unwrap();
        assert!(close(&matmul(&l, &transposed(&l, 3, 3), 3, 3, 3), &A));
        assert!(cholesky(&[1.0, 2.0, 2.0, 1.0], 2).is_none());
    }

    #[test]
    fn triangular_solves_invert_their_product() {
        let b = [1.0, -2.0, 0.5, 3.0, 1.5, -1.0];
        for bits in 0..16u8 {
            let t = Triangle {
                lower: bits & 1 != 0,
                transpose: bits & 2 != 0,
                unit_diagonal: bits & 4 != 0,
            };
            let left = bits & 8 != 0;
            let (tri, _) = triangle_of(&A, 3, t);
            let x = triangular_solve(&A, 3, t, left, &b);
            let back = if left {
                matmul(&tri, &x, 3, 3, 2)
            } else {
                matmul(&x, &tri, 2, 3, 3)
            };
            assert!(close(&back, &b), "{t:?} left {left}");
        }
    }

    #[test]
    fn lu_solves_and_determinant() {
        let a = [0.0, 2.0, 1.0, 1.0, 1.0, 0.0, 3.0, 0.5, 2.0];
        let b = [1.0, 2.0, 3.0];
        let f = lu(&a, 3);
        assert!(close(&matmul(&a, &f.solve(&b, false), 3, 3, 1), &b));
        let at = transposed(&a, 3, 3);
        assert!(close(&matmul(&at, &f.solve(&b, true), 3, 3, 1), &b));
        // det by cofactors along the first row.
        let det = 0.0 - 2.0 * (1.0 * 2.0 - 0.0 * 3.0) + 1.0 * (1.0 * 0.5 - 1.0 * 3.0);
        assert!((f.det() - det).abs() < 1e-12);
        let (s, l) = f.slogdet();
        assert!((s * l.exp() - det).abs() < 1e-12);
    }
}
