//! # oxla
//!
//! JAX-style composable function transformations for Rust, done ahead of
//! time. Annotate a plain numeric function and name what to generate:
//!
//! ```
//! #[oxla::grad(df)]
//! fn f(x: f64, y: f64, z: f64) -> f64 {
//!     x + 2.0 * y + z * z
//! }
//! assert_eq!(df(1.0, 2.0, 3.0), (1.0, 2.0, 6.0));
//! ```
//!
//! - `#[grad(name, wrt = ..)]`, `#[value_and_grad(..)]`: reverse mode;
//! - `#[jvp(name, wrt = ..)]`, `#[vjp(name, wrt = ..)]`: forward and reverse
//!   mode, with tangents (cotangents) for the `wrt` parameters only
//!   (default: every float parameter);
//! - `#[vmap(name, in_axes = ..)]`: batching (`axis_name = j` names the
//!   batch for the collectives);
//! - `#[pmap(name, axis_name = i, in_axes = ..)]`: one call per CPU device
//!   (see [`set_cpu_device_count`]), with the collectives `psum`, `pmean`,
//!   `pmax`, `pmin`, `all_gather`, `psum_scatter`, `ppermute`,
//!   `all_to_all`, `axis_index` and `axis_size` over the named axis;
//! - `#[jit]`: compile the function itself into fused kernels;
//! - `#[transforms(grad(g, ..), value_and_grad(vg, ..), ..)]`: several
//!   independent transforms of one definition.
//! - `#[func]`: a helper the others may call (see "Helpers" below);
//!   `#[custom_jvp(jvp = f_jvp)]` and `#[custom_vjp(fwd = f_fwd, bwd =
//!   f_bwd)]` on a helper give it a derivative rule of your own (see
//!   "Custom derivative rules" below).
//! - `#[derive(Tree)]`: a parameter struct, taken, returned and
//!   differentiated as a whole (see "Parameter structs" below).
//!
//! Stacked attributes compose bottom-up; `of = f` (or `of = grad(..)`) on
//! any of them transforms `f` (or that transform of the function) instead of
//! the function below:
//!
//! ```
//! #[oxla::transforms(
//!     grad(df, wrt = x),                    // grad(f) in x
//!     value_and_grad(f_vg),                 // value_and_grad(f)
//!     grad(d2f, wrt = x, of = grad(wrt = x)),   // grad(grad(f)): composed
//! )]
//! fn f(x: f64, y: f64) -> f64 {
//!     x * x * x * y
//! }
//! assert_eq!(df(2.0, 1.0), 12.0);
//! assert_eq!(f_vg(2.0, 1.0), (8.0, 12.0, 8.0));
//! assert_eq!(d2f(2.0, 1.0), 12.0);
//!
//! #[oxla::grad(d2h, of = dh)]                 // grad(dh)
//! #[oxla::value_and_grad(h_vg, of = h)]       // of `h` itself, not of `dh`
//! #[oxla::grad(dh)]
//! fn h(x: f64) -> f64 {
//!     x * x * x
//! }
//! assert_eq!(dh(2.0), 12.0);
//! assert_eq!(h_vg(2.0), (8.0, 12.0));
//! assert_eq!(d2h(2.0), 12.0);
//! ```
//!
//! Derivatives and batching are worked
//! out when the macro expands. Scalar functions become straight-line Rust;
//! array functions run as fused kernels: compiled by the build script
//! (`oxla_build::compile`) or, without one, by Cranelift on first call.
//! Each generated function `name` comes with `NAME_IR`, its IR text (hidden
//! from the docs); see
//! [`Inspect`] to read its kernels, Cranelift IR and PTX, or set
//! `OXLA_DUMP=ir,kernels,clif,ptx`.
//!
//! - `#[jacfwd(name, wrt = x)]`, `#[jacrev(..)]`, `#[hessian(..)]`: full
//!   Jacobians and Hessians, shaped as in JAX (result axes, then `x`'s).
//!
//! # Arrays
//!
//! Parameters are floats (`f32`, `f64`, `f16`, `bf16`), integer scalars
//! (`i32`, `i64`, `usize`, `u32`) and `bool`, slices `&[T]`,
//! [`ndarray`] views and references (`ArrayView2<T>`, `&Array2<T>`, ranks
//! 1–6) and fixed-size arrays (`[[T; 3]; 2]`, whose sizes are static);
//! results are floats, `i32`, `i64`, `bool`, `Vec<T>` and
//! `Array1<T>`…`Array6<T>` (elements: a float, `i32`, `i64` or `bool`). Views in any
//! layout are accepted (a transposed or stepped view is copied to a
//! contiguous buffer first). The sizes are checked at each call; a mismatch
//! panics with a message naming the argument, the axis, and the argument
//! axis whose size it had to equal.
//!
//! ```
//! use oxla::ndarray::{array, Array1, ArrayView1, ArrayView2};
//!
//! #[oxla::value_and_grad(loss_and_grad, wrt = w)]
//! fn loss(w: ArrayView1<f64>, x: ArrayView2<f64>, y: ArrayView1<f64>) -> f64 {
//!     let err = x.dot(&w) - y;
//!     (err * err).mean()
//! }
//! let x = array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
//! let y = array![1.0, 2.0, 3.0];
//! let (value, g): (f64, Array1<f64>) = loss_and_grad(&array![0.0, 0.5], &x, &y);
//! assert!(value < 1.0 && g.len() == 2);
//! ```
//!
//! Every function with array results also comes as `name_into`: the same
//! parameters, then one destination per array result (`&mut [T]` for a
//! `Vec<T>` result, anything that converts into an `ArrayViewMut` — `&mut
//! array`, `array.view_mut()`, a row — for an `Array` result), returning
//! the scalar results. The kernels write straight into the destinations,
//! so a training step allocates nothing:
//!
//! ```
//! # use oxla::ndarray::{array, Array1, ArrayView1, ArrayView2};
//! # #[oxla::value_and_grad(loss_and_grad, wrt = w)]
//! # fn loss(w: ArrayView1<f64>, x: ArrayView2<f64>, y: ArrayView1<f64>) -> f64 {
//! #     let err = x.dot(&w) - y;
//! #     (err * err).mean()
//! # }
//! # let x = array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
//! # let y = array![1.0, 2.0, 3.0];
//! let (mut w, mut g) = (array![0.0, 0.5], Array1::zeros(2));
//! for _ in 0..10 {
//!     let value: f64 = loss_and_grad_into(&w, &x, &y, &mut g);
//!     w.scaled_add(-0.01, &g);
//! }
//! ```
//!
//! A destination's shape must be the result's (a mismatch panics naming
//! the destination); one not in standard layout (a transposed view) is
//! written through a temporary.
//!
//! # The vocabulary
//!
//! Coming from JAX: the repository's `docs/JAX_NUMPY.md` lists the jax.numpy,
//! lax, jax.nn and transform names with oxla's spelling and derivative of
//! each, or why it is not supported (generated from the vocabulary, every
//! supported row compiled and compared with JAX by the tests).
//!
//! Inside an annotated function, arrays combine with `+ - * /` under numpy
//! broadcasting (trailing axes aligned, a size-1 axis stretched), and:
//!
//! | written | meaning | derivative |
//! |---|---|---|
//! | `x.exp()` `.ln()` `.sin()` `.cos()` `.tanh()` `.sqrt()` `.powi(n)` (also `f64::exp(x)`, `f32::powi(x, n)`, … for every float method) | elementwise | the usual one; `powi(0)` is 0 in every order |
//! | `a.max(b)`, `a.min(b)` | elementwise, NaN from either operand (JAX's `maximum`) | a tie splits 0.5/0.5 |
//! | `if a < b { x } else { y }`, `if flag { x } else { y }` on a scalar condition | a cond (`lax.cond`): only the taken branch runs | through the taken branch only: a side that is NaN or infinite where it is not taken (`x.ln()` for `x <= 0`) does not reach the gradient |
//! | `if a < b { x } else { y }` on an array condition | elementwise select (both sides computed) | through the chosen branch, elementwise (as `jnp.where`: an infinite derivative on the other side gives NaN) |
//! | `a < b`, `a <= b`, `a == b`, … as a value | elementwise comparison: `bool`s, to return or cast | none |
//! | `n as f32`, `(x * 10.0) as i32`, `flag as i32`, `k as i64`; on arrays `x.mapv(\|v\| v as f32)` | Rust's `as` (float → integer truncates and saturates, NaN → 0; `i32` → `i64` exact, `i64` → `i32` wraps); to the function's float type, `i32` or `i64` (`usize` is not a value type: write `as i64`) | through float → float (the identity); none from or to an integer |
//! | `fn f<T: oxla::Float>(x: &[T]) -> T` (or `where T: oxla::Float`); in its body `T::zero()`, `T::one()`, `T::from(0.5)` (also `.unwrap()`), `n as T`, `T::EPSILON`, `T::PI()`, `T::exp(x)`, and literals | generic over the float type: compiled for `f32` and for `f64`, every generated function generic too (`NAME_IR` the f64 instance's IR, `NAME_F32_IR` the f32 one's); `T::…` means the concrete type's | each instance's own |
//! | `a.dot(&b)`, `dot(a, b)` | ndarray's product: vector·vector, matrix·vector, vector·matrix, matrix·matrix (one `dot_general`) | bilinear: `da·b + a·db` |
//! | `matmul(a, b)` | numpy's `matmul`: stacks of matrices over leading axes | bilinear |
//! | `x.t()`, `x.reversed_axes()`, `x.permuted_axes([1, 0, 2])` | transpose | transposed back |
//! | `x.insert_axis(Axis(k))`, `x.remove_axis(Axis(k))` (a size-1 axis) | reshape | reshaped back |
//! | `x.sum()`, `sum(x)`, `x.sum_axis(Axis(k))` | sum | broadcast back |
//! | `x.mean()`, `mean(x)`, `x.mean_axis(Axis(k))` | mean | broadcast back over n |
//! | `x.max()`, `max(x)`, `x.max_axis(Axis(k))` (and `min`) | max / min, NaN propagating; -inf / +inf when empty | shared equally by the elements equal to the result (JAX) |
//! | `x.product()`, `prod(x)`, `x.product_axis(Axis(k))`, `x.prod_axis(Axis(k))`, `prod(x, Axis(k))` | product; 1 when empty | `Π_{j≠i} x_j` from exclusive products (no division): exact in every order, also where one or two elements are 0 |
//! | `x.cumsum(Axis(k))`, `cumsum(x, Axis(k))`, `x.cumprod(Axis(k))`, `cumprod(x, Axis(k))` | inclusive cumulative sum / product along the axis (numpy's) | a scan in the other direction (exact at zeros, every order) |
//! | `logsumexp(x)`, `logsumexp(x, Axis(k))` | `log Σ exp`, shifted by the max for stability | softmax |
//! | `softmax(x, Axis(k))`, `log_softmax(x, Axis(k))` | along an axis, stable | exact (the shift is under `stop_gradient`) |
//! | `stop_gradient(x)` | the identity | zero |
//! | `argmax(x)`, `argmax(x, Axis(k))` (and `argmin`) | `i64` index: the first max (min) or the first NaN, row-major over all axes without `Axis`; `i64::MAX` for an empty axis | none (an integer) |
//! | `sort(x)`, `sort(x, Axis(k))`, `argsort(x[, Axis(k)])`, `let (values, indices) = top_k(x, k)` | JAX's order: stable, NaN last (first in `top_k`), `-0.0 == 0.0`; `i64` indices; along the last axis by default (`top_k`: always, literal `k`); CPU only | the tangent gathered by the permutation |
//! | `zeros_like(x)`, `ones_like(x)`, `full_like(x, v)` | constants of `x`'s shape (`v` broadcast) | none to `x`; `full_like` passes `v`'s |
//! | `x[1]`, `x[[1, 0]]`, `x[1][0]` (integer literals, axes of static size); `x[i]`, `x[[i, j]]` (integer scalars known at run time, on any axis: a parameter is checked at each call, a computed index outside the axis reads 0) | the element or sub-array | put back at the index (a scatter-add for a run-time index) |
//! | `x.slice(s![1.., ..;2, -1, NewAxis])`, `x.slice_axis(Axis(k), Slice::from(a..b))` | ndarray's slicing: ranges with steps ≥ 1, bounds from the end, an index removes the axis; on an axis of run-time size the length is a derived size, checked at the call (an error naming the argument when the slice does not fit) | padded back with zeros (`lax.pad`) |
//! | `concatenate(Axis(k), &[a.view(), b.view()])`, `concatenate![Axis(k), a, b]` | joined along an existing axis | sliced back into each operand |
//! | `stack(Axis(k), &[..])`, `stack![Axis(k), a, b]` | joined along a new axis | sliced back |
//! | `roll(x, shift, Axis(k))` | `jnp.roll`: elements shifted cyclically along the axis | rolled back |
//! | `take_along_axis(x, &labels, Axis(k))` | `x[.., labels[..], ..]`: one index per lane along `k` (each row's label), a gather; a label argument out of range panics at the call naming it, a computed one is clamped into the axis (JAX's gather default) | scattered (added) back into the picked positions; none for the indices |
//! | `take(x, &idx, Axis(k))`, `x.select(Axis(k), &idx)` (`i32`/`i64` indices of any shape) | `numpy.take`: shape `x.shape[..k] ++ idx.shape ++ x.shape[k+1..]` (an embedding lookup: `table.select(Axis(0), &ids)`), a gather: one read by address per result element, whatever the size of `x`; an index argument out of range panics at the call naming it, a computed one is clamped into the axis (JAX's gather default) | a scatter-add into the picked rows, twice for a row picked twice (sequential on the CPU, atomic on the GPU); none for the indices |
//! | `x.abs()`, `x.square()`, `x.recip()`, `x.clamp(lo, hi)` | elementwise (`abs(-0.0)` = 0) | `abs`: sign(x), 0 at 0 (JAX); `clamp`: ½ at a bound |
//! | `x.ln_1p()`, `log1p(x)` | `ln(1 + x)`, exact for tiny `x` | `1 / (1 + x)` |
//! | `x.into_shape_with_order(shape).unwrap()`, `x.to_shape(..)`, `x.reshape(..)`, `x.flatten()`, `x.ravel()` | the same row-major elements in a new shape (one size `-1`, inferred); a size the new shape fixes is checked at the call | reshaped back |
//! | `expand_dims(x, Axis(k))`, `squeeze(x[, Axis(k)])`, `x.squeeze()` | `jnp.expand_dims`, `jnp.squeeze`: a size-1 axis added or removed (an axis also as `k`, negative from the end) | reshaped back |
//! | `swapaxes(x, a, b)`, `x.swapaxes(a, b)`, `moveaxis(x, src, dst)` | `jnp.swapaxes`, `jnp.moveaxis`: a transpose | transposed back |
//! | `broadcast_to(x, shape)`, `x.broadcast(shape).unwrap()` | numpy's broadcasting to `shape` (axes aligned from the end, size-1 axes stretched) | summed back over the broadcast axes |
//! | `tile(x, reps)`, `repeat(x, n[, Axis(k)])` | `jnp.tile` (copies joined along each axis), `jnp.repeat` (each element `n` times; flattened without an axis); on an axis of run-time size `d` the result's size is the derived `d + d + …`, bound at the call | summed back over the copies |
//! | `norm(x)`, `norm(x, Axis(k))` | `jnp.linalg.norm`: the 2-norm of a vector, Frobenius of a matrix, or along an axis | `x / norm` (NaN at 0, as JAX) |
//! | `x.diag()`, `diag(x)` | `jnp.diag`: a matrix's diagonal (the shorter side's length), or a vector's diagonal matrix | put back on the diagonal |
//! | `einsum("ij,jk->ik", a, b)`, `einsum("ij->ji", a)` | `jnp.einsum` of one or two operands for the contractions `dot_general` covers (batch, contracted and free letters; a letter one operand alone drops is summed); the spec a string literal, read at compile time (no traces `ii`, no `...`) | as the `dot_general`, sums and transposes it is |
//! | `cholesky(a)` | `jnp.linalg.cholesky`: the lower factor of `(a + aᵀ)/2`; a matrix that is not positive definite gives NaN in the lower triangle (as JAX); any leading batch axes; CPU only | JAX's `L·Φ(L⁻¹ ȧ L⁻ᵀ)` |
//! | `solve(a, b)`, `inv(a)` | `jnp.linalg.solve` (`b` a vector `[..., n]` or matrix `[..., n, m]`), `jnp.linalg.inv`: LU with partial pivoting | `a⁻¹(ḃ − ȧ x)`; transpose a solve with `aᵀ` |
//! | `solve_triangular(a, b, lower)`, `triangular_solve(a, b, left_side, lower, transpose_a, unit_diagonal)`, `cho_solve(l, b)` | `jax.scipy.linalg.solve_triangular`, `lax.linalg.triangular_solve` (flags `bool` literals), `jax.scipy.linalg.cho_solve((l, True), b)` | `−op(a)⁻¹ op(ȧ) x` on the read triangle; transpose flips `transpose_a` |
//! | `det(a)`, `let (sign, logabsdet) = slogdet(a)` | `jnp.linalg.det`, `jnp.linalg.slogdet` (sign 0 and `-∞` when singular) | `det · tr(a⁻¹ȧ)`, `tr(a⁻¹ȧ)` (NaN at a singular `a`, where JAX's `det` takes cofactors) |
//! | `conv(x, w, strides, padding)`, `conv_general_dilated(x, w, strides, padding[, lhs_dilation, rhs_dilation[, ("NHWC", "HWIO", "NHWC")[, feature_group_count]]])` | `lax.conv` / `lax.conv_general_dilated` in 1, 2 or 3 spatial dimensions (NCHW/OIHW by default); sizes as literals (`[2, 2]`, or one for every axis), padding `Padding::Same`, `Padding::Valid`, `"SAME"`, `"VALID"` or `[(lo, hi), ..]`; sizes may be known only at the call (with feature groups the feature sizes must be static); CPU only (im2col + `gemm`) | bilinear: JAX's transposes (a convolution of the cotangent with the kernel, and of the input with the cotangent) |
//! | `max_pool(x, window, strides, padding)`, `avg_pool(..)` (NCHW, the window over the spatial axes); `reduce_window_max(x, window, strides, padding)`, `reduce_window_sum(..)` (a size per axis) | `lax.reduce_window` with max or sum; average = sum / window size (padding counted, flax's default) | max: the whole cotangent to the first maximum of each window (JAX's `select_and_scatter_add`); sum and average: spread back over each window |
//! | `a % b`, `a %= b`, `a.rem_euclid(b)` (floats and integer scalars), `a / b`, `div_euclid` (integers) | as Rust computes them: a float `%` is C's `fmod` bit for bit where the quotient is below 2^53 (f64) or 2^24 (f32), NaN beyond | 1 in `a`, `−trunc(a / b)` in `b` (JAX's `rem`) |
//! | `clip(x, lo, hi)` | `jnp.clip`, as `x.clamp(lo, hi)`, the three broadcast | as `clamp` |
//! | `logaddexp(a, b)` | `jnp.logaddexp`: `ln(e^a + e^b)` without overflow, `a + b` where both are the same infinity | `e^(a−out)` and `e^(b−out)`: ½ each at a tie (JAX) |
//! | `outer(a, b)` | `jnp.outer` of two vectors | `g·b` and `gᵀ·a` |
//! | `let (xx, yy) = meshgrid(&x, &y);` | `jnp.meshgrid` (indexing "xy"): both `[len(y), len(x)]`, `xx[i, j] = x[j]`, `yy[i, j] = y[i]` | summed back along the broadcast axis |
//! | `x.row(i)`, `x.column(j)` | `s![i, ..]`, `s![.., j]`: `i` a literal or a scalar known at run time (a parameter is checked at the call) | scattered back into the row or column |
//! | `x.var(ddof)`, `x.std(ddof)`, `x.var_axis(Axis(k), ddof)`, `x.std_axis(..)` | ndarray's (`jnp.var(x, ddof=…)`): `Σ(x − mean)² / (n − ddof)` and its square root | `2(x − mean)/(n − ddof)`; `std`'s divided by `2·std` |
//! | `sigmoid(x)`, `softplus(x)`, `relu(x)` | jax.nn's, stable at ±∞ | finite everywhere; `relu` 0 at 0 |
//! | `zeros(shape)`, `ones(shape)`, `full(shape, v)` (also `Array2::zeros(..)`, `Array::from_elem(shape, v)`) | constants; a shape is a size, a tuple/array of sizes or `x.raw_dim()`/`x.dim()`, a size an integer literal or `x.len()`, `x.len_of(Axis(k))`, `x.nrows()`, `x.ncols()` | none; `full` passes `v`'s (summed) |
//! | `arange(n)`, `eye(n)` (also `Array2::eye(n)`) | `0, 1, …, n−1` and the identity, in the function's float type | none |
//! | `where_(a < b, x, y)`, `select(a < b, x, y)` | `jnp.where`: the four operands broadcast together | to `x` where the condition holds, to `y` elsewhere |
//! | `erf(x)` | the error function, within an ulp in f64, correctly rounded f32 on the sample measured | `2/√π·exp(−x²)` (JAX), every order |
//! | `erf_inv(x)` | `lax.erf_inv` (`jax.scipy.special.erfinv`), ±inf at ±1, NaN beyond: kernels run XLA's expansion (Giles' polynomials), within an f32 ulp of JAX's values and 4 ulp in f64 (where both lose digits near ±1 as JAX's does); scalar code is within an ulp | `√π/2·exp(y²)` (JAX), every order |
//! | `x.exp_m1()`, `expm1(x)` | `e^x − 1`, accurate near 0 (within 2 ulp in f64) | `e^x` in every order |
//! | `x.floor()`, `.ceil()`, `.trunc()`, `.round()` (halfway away from 0, Rust's), `.round_ties_even()` (`jnp.round`) | exact for every input; ±0, ±inf, NaN as Rust gives them | 0 in every order (JAX) |
//! | `x.signum()` | Rust's: ±1 with the sign bit (±1 at ±0), NaN for NaN | 0 in every order |
//! | `x.powf(y)`, `powf(x, y)`, `power(x, y)` (`y` an array or a scalar, numpy broadcasting) | `x^y` as Rust's `powf` on every special value (`x^0 = 1` even for NaN, `1^y = 1`, a negative `x` to a non-integer `y` is NaN, to an integer `y` signed); within an ulp of the correctly rounded result (f32 and f64), exact where an integer power is representable | `y·x^(y−1)` in `x`, 0 where `y = 0`; `ln(x)·x^y` in `y`, 0 at `x = 0` (NaN for a negative `x`) |
//! | `sign(x)` | `jnp.sign`: -1, 1, or `x` itself at ±0 and NaN | 0 in every order |
//!
//! | `f(a, b)`, `path::f(a, b)` where `f` is marked `#[oxla::func]` (any module or crate); `let (a, b) = f(x);` when it returns a tuple | `f`'s body, inlined with its parameters bound to the arguments | through the body |
//! | `let sq = \|v\| v * v;` then `sq(x)` | the closure's body, inlined at each call, capturing as Rust does | through the body |
//! | `std::f64::consts::PI`, `f32::consts::E`, … | the constant, in the function's float type | none |
//! | `A`, `consts::G`, `Self::K` (a crate `const` or `static`, SCREAMING_CASE) | read at each call as `(A) as T` (T the function's float type; rustc checks it exists and is a number); not inside a helper | none (never differentiated, never batched) |
//! | `let mut y = x;` then `y = e;`, `y += e;` (`-=`, `*=`, `/=`) | a new value for `y` (SSA); it keeps `y`'s dtype and shape | through the new value |
//! | `if c { y = a; } else if d { y *= b; }` (any branch may assign; `else` optional when it only assigns) | each assigned variable is a result of the `if`'s cond (a scalar `c`), or merged by `select(c, then, else)` (an array `c`, elementwise) | through the chosen branch |
//! | `if c { return a; } rest` (also nested, in both branches) | `if c { a } else { rest }` | through the chosen branch |
//! | `match k { 0 => a, 1 \| 2 => b, 3..=9 => c, _ => d }` on an `i32`/`i64`/`usize` scalar (no guards; exhaustive, as rustc requires) | a chain of selects (every arm is computed); arms may assign | through the chosen arm |
//! | `x.len()`, `x.nrows()`, `x.ncols()`, `x.len_of(Axis(k))`, `x.shape()[k]`; `k < 0` with an integer `k` | the size as an `i64` (`x.len() as f64` is the size itself); an integer compared with an integer literal | none |
//! | `i + 1`, `n - i`, `2 * i`, `i / 2`, `i % n`, `i < n` on integer scalars and arrays (`labels + 1`, `idx / 2`) | integer arithmetic and comparisons as Rust's, exact below 2^53: `/` and `%` truncate (JAX's `lax.div` and `lax.rem`; `jnp`'s `//` and `%` floor, which `div_euclid`/`rem_euclid` give for a positive divisor) | none |
//! | `for i in a..b { … }`, `a..=b` (integer bounds), `while cond { … }` (a scalar bool), nested; `oxla::checkpoint(range_or_cond)`, `oxla::checkpoint_every(k, …)` | a loop op of the IR (never unrolled) whose carries are the `let mut` variables the body assigns; reverse mode keeps every step's carries, or every ⌈√n⌉-th / k-th with the rest recomputed (`oxla::loop_tape_peak_bytes()`) | through every step, forward and reverse (also through `while`), Hessians (forward over reverse) and second derivatives by reverse over reverse (`grad` of `grad`, Hessian-vector products; a third by reverse mode alone is refused, `jacfwd` of it works), `vmap` with a trip count per example |
//! | `p.w1`, `p.layer.w` where `p: &Mlp` and `Mlp` has `#[derive(oxla::Tree)]`; `f(&p.layer, x)` to a helper taking `&Layer`; a result `Mlp { w1: …, … }` | a leaf of a parameter struct (each leaf is one parameter of the IR, `p__w1`); a struct argument passes its leaves | the gradient with respect to `p` is an `Mlp` |
//!
//! # Parameter structs (pytrees)
//!
//! `#[derive(oxla::Tree)]` on a struct of arrays (`Array1<F>`…`Array6<F>`)
//! and scalars of one float type (f32 or f64), of other such structs, and
//! of fixed-size arrays of these (`layers: [Layer; 3]`, indexed by literals:
//! `p.layers[0].w`), makes it a parameter: an oxla function takes it (`p: &Mlp`, `p.w1` in the
//! body, `layer(&p.l1, x)` passing it on to a helper that takes a `&Layer`),
//! returns it (a struct literal `Mlp { w1: …, … }`), and `grad`,
//! `value_and_grad`, `vjp` with respect to it (`wrt = p`, or by default)
//! return the same struct type holding the gradients; `jvp` takes a tangent
//! of that type (`t_p: &Mlp`). The [`Tree`](trait@Tree) trait gives an
//! optimizer step its operations (`axpy`, `scale`, `map`, `zip_map`,
//! `zeros_like`, `dot`, `norm2`, `flatten`, `for_each_leaf_mut`):
//!
//! ```
//! use oxla::ndarray::{array, Array1, Array2, ArrayView1, ArrayView2};
//! use oxla::Tree;
//!
//! #[derive(oxla::Tree, Clone, Debug)]
//! struct Mlp { w1: Array2<f64>, b1: Array1<f64>, w2: Array1<f64>, b2: f64 }
//!
//! #[oxla::func]
//! fn layer(w: &Array2<f64>, b: &Array1<f64>, x: ArrayView2<f64>) -> Array2<f64> {
//!     (x.dot(w) + b).tanh()
//! }
//!
//! #[oxla::value_and_grad(loss_vg, wrt = p)]
//! fn loss(p: &Mlp, x: ArrayView2<f64>, y: ArrayView1<f64>) -> f64 {
//!     let r = layer(&p.w1, &p.b1, x).dot(&p.w2) + p.b2 - y;
//!     (&r * &r).mean()
//! }
//!
//! let (x, y) = (array![[0.0, 1.0], [1.0, 0.5], [-1.0, 2.0]], array![0.5, -0.2, 0.3]);
//! let mut p = Mlp {
//!     w1: array![[0.1, -0.2, 0.3], [0.2, 0.1, -0.1]],
//!     b1: Array1::zeros(3),
//!     w2: array![0.3, -0.2, 0.1],
//!     b2: 0.0,
//! };
//! let first = loss(&p, x.view(), y.view());
//! for _ in 0..20 {
//!     let (_loss, g): (f64, Mlp) = loss_vg(&p, x.view(), y.view());
//!     p.axpy(-0.1, &g); // p ← p − 0.1·g
//! }
//! assert!(loss(&p, x.view(), y.view()) < first);
//! ```
//!
//! The struct may be named by any path (`crate::model::Mlp`, another
//! crate's). Transforms compose over structs as over arrays. `vmap` shares
//! a struct between examples (`in_axes = (None, 0)`) or batches it
//! (`in_axes = 0`): a batch of structs is a [`Batched<Mlp>`](Batched), each
//! leaf with a leading batch axis, which a `vmap` also returns for a struct
//! result — per-example gradients are JAX's `vmap(grad(loss), in_axes=(None,
//! 0, 0))`:
//!
//! ```
//! use oxla::ndarray::{array, Array1, ArrayView1};
//! use oxla::{Batched, Tree};
//!
//! #[derive(oxla::Tree, Clone, Debug, PartialEq)]
//! struct Line { w: Array1<f64>, b: f64 }
//!
//! #[oxla::transforms(vmap(per_example, in_axes = (None, 0, 0), of = grad(wrt = p)))]
//! fn loss(p: &Line, x: ArrayView1<f64>, y: f64) -> f64 {
//!     let r = p.w.dot(&x) + p.b - y;
//!     r * r
//! }
//!
//! let p = Line { w: array![1.0, -1.0], b: 0.5 };
//! let (xs, ys) = (array![[1.0, 2.0], [0.0, 1.0], [2.0, 0.0]], array![0.0, 1.0, 2.0]);
//! let g: Batched<Line> = per_example(&p, xs.view(), ys.view());
//! assert_eq!(g.leaf("w").shape(), &[3, 2]); // a leading batch axis
//! // Example 1: r = -1 - 1 + 0.5 = -1.5, so dw = 2r·x, db = 2r.
//! assert_eq!(g.example(1), Line { w: array![0.0, -3.0], b: -3.0 });
//! ```
//!
//! `jacfwd`, `jacrev` and `hessian` of a function taking a struct work with
//! respect to an array or scalar parameter. A helper may return a struct
//! (`let q = step(&p, &g);`). Not yet: Jacobians and Hessians with respect
//! to a struct, a batch of structs inside an annotated function, `ArrayD`
//! and f16/bf16 fields, tuple fields, structs in tuples or arrays as
//! parameters (`&[Mlp; 2]`).
//!
//! # Helpers: functions calling functions
//!
//! `#[oxla::func]` marks a helper. It is emitted as `#[jit]` would emit it,
//! so plain Rust calls it as usual; an annotated function (or another
//! helper) that calls it, by its name, a path or through a `use`, in the
//! same module, another module or another crate, gets its body inlined,
//! so `grad`, `vmap`, `jvp`, `hessian`… all go through it:
//!
//! ```
//! #[oxla::func]
//! fn smooth_relu(x: f64) -> f64 {
//!     (x.exp() + 1.0).ln()
//! }
//!
//! #[oxla::grad(df)]
//! fn f(x: f64) -> f64 {
//!     smooth_relu(2.0 * x)
//! }
//! let s = 1.0 / (1.0 + (-1.0f64).exp());
//! assert!((df(0.5) - 2.0 * s).abs() < 1e-12);
//! ```
//!
//! A helper takes the same parameters as any oxla function, returns one
//! value, uses the caller's float type, and may not be recursive nor take
//! the name of a vocabulary function (`softplus`, `sum`, …). A call of a
//! plain Rust function is an error at the call (rustc's "cannot find
//! macro `f`": the helper's macro is how a call finds it).
//!
//! ## Custom derivative rules
//!
//! As JAX's `jax.custom_jvp` and `jax.custom_vjp`, a helper can carry its
//! own derivative rule, which every transform of a function calling it uses
//! instead of differentiating its body. The rule functions are helpers too,
//! laid out as oxla's own `#[jvp]` and `#[vjp]` functions (tangents and
//! cotangents for float values only):
//!
//! | attribute | rule functions | transforms |
//! |---|---|---|
//! | `#[oxla::custom_jvp(jvp = f_jvp)]` | `f_jvp(params…, tangents…) -> (results…, tangents…)`, linear in the tangents | all: `grad`, `vjp`, `jvp`, `jacfwd`, `jacrev`, `hessian` (which differentiates `f_jvp`'s own body), `vmap` |
//! | `#[oxla::custom_vjp(fwd = f_fwd, bwd = f_bwd)]` | `f_fwd(params…) -> (results…, residuals…)`; `f_bwd(residuals…, cotangents…) -> cotangents…` (one per float parameter) | reverse mode (`grad`, `vjp`, `jacrev`, `hessian` = forward over reverse, through `f_fwd` and `f_bwd`) and `vmap`; forward mode (`jvp`, `jacfwd`) is a compile error, as in JAX |
//!
//! ```
//! #[oxla::func]
//! #[oxla::custom_jvp(jvp = log1pexp_jvp)]
//! fn log1pexp(x: f64) -> f64 {
//!     (1.0 + x.exp()).ln()
//! }
//!
//! #[oxla::func]
//! fn log1pexp_jvp(x: f64, t: f64) -> (f64, f64) {
//!     let e = x.exp();
//!     ((1.0 + e).ln(), (1.0 - 1.0 / (1.0 + e)) * t)
//! }
//!
//! #[oxla::grad(df)]
//! fn f(x: f64) -> f64 {
//!     log1pexp(x)
//! }
//! assert_eq!(df(1000.0), 1.0); // eˣ/(1 + eˣ) would be ∞/∞
//! ```
//!
//! Plain Rust calls of the helper run its body. A rule function calling
//! the helper it is the rule of is a cycle between helpers (an error): write
//! the value out in the rule, as above.
//!
//! Integer arrays (`ArrayView1<i32>`, `&[i64]`, …) and integer scalars
//! (`n: usize`) are parameters for labels, indices and counts: they enter
//! arithmetic through `as` (`n as f32`) and carry no derivative (`wrt`
//! refuses them; by default a gradient is taken with respect to every
//! float parameter). A `usize` passes as an `i64`: one above `i64::MAX`
//! panics at the call.
//!
//! Results can be `i64`/`i32` (scalars, `Vec`, arrays) where the function
//! computes indices (`argmax`) or casts, and `bool` where it compares.
//!
//! Loops run over integer parameters and sizes (`for i in 0..n`), with
//! `break`, `continue` and `return` as statements. Index arrays of one shape
//! index together (`x[[idx_a, idx_b]]`, numpy's `x[idx_a, idx_b]`). Not yet:
//! slice bounds known only at run time (other than a window `s![k..k + w]`
//! of literal width), indexing a crate `const` array (`C[i]`: bind the
//! values with `let c = [..];` in the function).
//!
//! Matrix products run on the `gemm` crate on the CPU; everything around
//! them (a bias, an activation, the reductions that follow) is fused into
//! kernels that make one pass over memory.
//!
//! # The public surface
//!
//! What this page lists is oxla's API: the attributes, [`Tree`] and
//! [`Float`], the element types ([`Element`], [`DType`], [`half`]), the
//! [`ndarray`] version to use, devices ([`devices`], [`DeviceArray`]),
//! threads ([`set_num_threads`]), loop checkpointing and its memory limit
//! ([`checkpoint`], [`set_tape_limit`]), and what tells how a function was
//! compiled ([`Inspect`], [`compile_log`]). The compiler underneath, the
//! `oxla_core` crate (IR, transforms, fusion, interpreters), is reachable
//! as `oxla::oxla_core` for oxla's own crates and tests, but it is an
//! implementation detail with no stability promise: it is not documented
//! here and may change in any release. Generated code does not name it:
//! it calls the hidden `__private` module, which changes together with the
//! macros.

#![warn(missing_docs)]

/// `#[derive(oxla::Tree)]`: a parameter struct (see [`Tree`](trait@Tree)).
pub use oxla_macros::Tree;
pub use oxla_macros::{
    custom_jvp, custom_vjp, func, grad, hessian, jacfwd, jacrev, jit, jvp, pmap, transforms,
    value_and_grad, vjp, vmap,
};

mod tree;
pub use tree::Tree;

mod batched;
pub use batched::Batched;

mod float;
pub use float::Float;

/// The compiler underneath: IR, transforms, fusion, interpreters. An
/// implementation detail with no stability promise (see "The public
/// surface" above).
#[doc(hidden)]
pub use oxla_core;

/// The element type of an array, as a value (what [`DeviceArray::dtype`]
/// returns).
pub use oxla_core::DType;

/// The memory limit of reverse mode through a loop: a reverse sweep fails,
/// naming the function and the loop, rather than keep more than
/// [`tape_limit`] bytes of loop carries (set per process with
/// [`set_tape_limit`], per thread with [`with_tape_limit`], or with the
/// environment variable [`TAPE_LIMIT_ENV`]).
pub use oxla_core::ops::control::{set_tape_limit, tape_limit, with_tape_limit, TAPE_LIMIT_ENV};

/// The n-dimensional arrays oxla functions take and return (the version
/// oxla is built with: use it, or the same version, in your crate).
pub use ndarray;

/// `f16` and `bf16`, the half-precision element types oxla functions take.
pub use half;

mod device;
mod device_array;
mod device_call;
#[cfg_attr(not(feature = "cuda"), path = "device_gpu_none.rs")]
mod device_gpu;
#[cfg(feature = "mpi")]
pub mod distributed;
pub mod random;
/// The element types generated functions take and return (`f32`, `f64`,
/// `f16`, `bf16`, `i32`, `i64`, `bool`).
pub use __private::Element;
pub use device::{
    cpu, cpu_devices, devices, gpu, gpu_devices, set_cpu_device_count, Device, DeviceError,
    Platform, CPU_DEVICES_ENV,
};
pub use device_array::{device_put, DeviceArray};
pub use device_call::DeviceArg;

mod inspect;
mod runtime;
mod size_one;
pub use inspect::Inspect;
pub use oxla_cpu::{
    host_level, host_supports_v3, host_supports_v4, num_threads, set_num_threads, IsaLevel,
    THREADS_ENV,
};
pub use runtime::{compile_log, CompileRecord, CompiledBy, ISA_ENV};

/// The most bytes of loop carries that the reverse sweep of a loop has kept
/// at once on this thread since `reset_loop_tape_peak` (how checkpointing's
/// memory saving is measured).
pub fn loop_tape_peak_bytes() -> usize {
    oxla_core::ops::control::tape_peak_bytes()
}

/// Marks a loop of an annotated function for checkpointed reverse mode:
/// `for i in oxla::checkpoint(0..n) { … }` or
/// `while oxla::checkpoint(err > tol) { … }`. The reverse sweep then keeps
/// the carries of every ⌈√n⌉-th step and recomputes the others one segment
/// at a time (memory 2√n steps instead of n, one more forward sweep of
/// work); the gradient is the same bit for bit. Outside the macros it is the
/// identity, so the function stays plain Rust.
pub fn checkpoint<T>(x: T) -> T {
    x
}

/// Like [`checkpoint`], keeping every `every`-th step's carries (memory
/// n/every + every steps).
pub fn checkpoint_every<T>(every: u64, x: T) -> T {
    let _ = every;
    x
}

/// Reset `loop_tape_peak_bytes`.
pub fn reset_loop_tape_peak() {
    oxla_core::ops::control::reset_tape_peak()
}

#[doc(hidden)]
pub mod __private;
