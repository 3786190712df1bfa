//! The jax.numpy / lax names a JAX user reaches for, each with oxla's
//! spelling and its derivative, or why it is not supported: one row per
//! JAX name, the single source of `docs/JAX_NUMPY.md`, of the test
//! `tests/suite/jax_numpy.rs` and of its reference script
//! `tests/reference/jax_numpy_jax.py` (all three written by the generator
//! in `jax_table`, which fails when a committed file differs).
//!
//! A supported row names the vocabulary it uses (`Term`s, checked against
//! `vocab::functions`, `vocab::methods` and the transform attributes; every
//! vocabulary name must be used by some row) and carries a sample: an oxla
//! body and the same computation in JAX, compared on fixed inputs (and,
//! where differentiable, the gradient of the sum of the result).
//!
//! Adding a row is one entry in `ROWS`.

/// Where a row is listed on the page.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Family {
    Elementwise,
    Nn,
    Reductions,
    Sorting,
    Shape,
    Indexing,
    Constructors,
    Linalg,
    Control,
    Lax,
    Collectives,
    Transforms,
    Random,
    Other,
}

impl Family {
    /// Every family, in page order.
    pub(crate) const ALL: [Family; 14] = [
        Family::Elementwise,
        Family::Nn,
        Family::Reductions,
        Family::Sorting,
        Family::Shape,
        Family::Indexing,
        Family::Constructors,
        Family::Linalg,
        Family::Control,
        Family::Lax,
        Family::Collectives,
        Family::Transforms,
        Family::Random,
        Family::Other,
    ];

    /// The page's heading for the family.
    pub(crate) fn title(self) -> &'static str {
        match self {
            Family::Elementwise => "Elementwise math and comparisons",
            Family::Nn => "jax.nn",
            Family::Reductions => "Reductions",
            Family::Sorting => "Sorting and selecting",
            Family::Shape => "Shape and layout",
            Family::Indexing => "Indexing, slicing and updates",
            Family::Constructors => "Constructors",
            Family::Linalg => "Linear algebra",
            Family::Control => "Control flow",
            Family::Lax => "Other lax primitives",
            Family::Collectives => "Collectives (inside `pmap` or a named `vmap`)",
            Family::Transforms => "Transforms",
            Family::Random => "jax.random",
            Family::Other => "Dtypes, complex numbers, FFT and data-dependent shapes",
        }
    }

    /// The family's name in generated identifiers.
    pub(crate) fn ident(self) -> &'static str {
        match self {
            Family::Elementwise => "elementwise",
            Family::Nn => "nn",
            Family::Reductions => "reductions",
            Family::Sorting => "sorting",
            Family::Shape => "shape",
            Family::Indexing => "indexing",
            Family::Constructors => "constructors",
            Family::Linalg => "linalg",
            Family::Control => "control",
            Family::Lax => "lax",
            Family::Collectives => "collectives",
            Family::Transforms => "transforms",
            Family::Random => "random",
            Family::Other => "other",
        }
    }
}

/// A piece of oxla's vocabulary that a row's spelling uses.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Term {
    /// A function of `vocab::functions` (`sum`, `softplus`).
    F(&'static str),
    /// A method of `vocab::methods` (`sin`, `sum_axis`).
    M(&'static str),
    /// A transform attribute (`grad`, `vmap`).
    T(&'static str),
    /// Rust syntax the lowering takes (`for`, `%`, `x[i] +=`), written as
    /// it appears in the sample.
    S(&'static str),
}

/// A sample of a supported row: compiled by oxla and compared with JAX.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Sample {
    /// `oxla`, the body of a function of the named inputs `args` (see
    /// `jax_table::INPUTS`) returning the Rust type `out`, against the JAX
    /// expression `jax` of the same inputs; `grad` says how the `#[grad]`
    /// of the sum of the result with respect to the first input is checked.
    Value {
        args: &'static str,
        oxla: &'static str,
        jax: &'static str,
        out: &'static str,
        grad: Grad,
    },
    /// The attribute `attr` (`NAME` standing for the generated function's
    /// name) on `fn(params) -> ret { body }`, the result called with the
    /// Rust arguments `call` (from the inputs `i`: `&i.x` a fixed-size
    /// array, `i.xa.view()` a view) and compared with the JAX expression `jax`.
    Transform {
        attr: &'static str,
        params: &'static str,
        ret: &'static str,
        body: &'static str,
        call: &'static str,
        jax: &'static str,
    },
    /// Items of their own (`NAME` standing for the generated names), one
    /// of them the function `NAME` called with `call`, against the JAX
    /// expression `jax` evaluated after the Python statements `py` (JAX's
    /// decorated definitions: `jax.custom_jvp`, `jax.custom_vjp`).
    Items {
        items: &'static str,
        call: &'static str,
        py: &'static str,
        jax: &'static str,
    },
}

/// How a value sample's gradient is checked.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Grad {
    /// Not differentiated (integer or boolean results, or no reverse mode
    /// in JAX to compare with).
    None,
    /// Against `jax.grad` and against central differences.
    Checked,
    /// Against `jax.grad` only: the derivative differs from the function's
    /// slope on purpose (`stop_gradient`).
    JaxOnly,
}

/// A row's status.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Status {
    Supported {
        /// oxla's spelling, markdown.
        spelling: &'static str,
        uses: &'static [Term],
        /// The derivative rule in words.
        derivative: &'static str,
        sample: Sample,
    },
    /// Why not, and what to write instead where there is something.
    Unsupported(&'static str),
}

/// One JAX name.
#[derive(Clone, Copy, Debug)]
pub(crate) struct JaxName {
    pub(crate) jax: &'static str,
    pub(crate) family: Family,
    pub(crate) status: Status,
}

use Family as Fm;
use Term::{F, M, S, T};

const fn ok(
    jax: &'static str,
    family: Family,
    spelling: &'static str,
    uses: &'static [Term],
    derivative: &'static str,
    sample: Sample,
) -> JaxName {
    JaxName {
        jax,
        family,
        status: Status::Supported {
            spelling,
            uses,
            derivative,
            sample,
        },
    }
}

const fn no(jax: &'static str, family: Family, why: &'static str) -> JaxName {
    JaxName {
        jax,
        family,
        status: Status::Unsupported(why),
    }
}

/// A value sample with the gradient checked.
const fn d(args: &'static str, oxla: &'static str, jax: &'static str, out: &'static str) -> Sample {
    Sample::Value {
        args,
        oxla,
        jax,
        out,
        grad: Grad::Checked,
    }
}

/// A value sample without a gradient (integer or boolean results, or a
/// derivative JAX does not define).
const fn v(args: &'static str, oxla: &'static str, jax: &'static str, out: &'static str) -> Sample {
    Sample::Value {
        args,
        oxla,
        jax,
        out,
        grad: Grad::None,
    }
}

const V: &str = "Array1<f64>";
const M2: &str = "Array2<f64>";
const R: &str = "f64";

const COMPLEX: &str = "complex dtypes: oxla has f32/f64/f16/bf16, bool and integer labels";
const HOST_RANDOM: &str =
    "host-side in oxla: call it outside the annotated function and pass the array in";
const LINALG_PLANNED: &str = "planned (issue 25: linear algebra with JAX's derivative rules)";
const DATA_SHAPE: &str =
    "a result whose shape depends on the values: oxla's shapes are known when the function is called";

/// Every row, by family.
pub(crate) const ROWS: &[JaxName] = &[
    // ---- elementwise ----------------------------------------------------------
    ok("jnp.sin", Fm::Elementwise, "`x.sin()`", &[M("sin")], "cos(x)·ẋ", d("x", "x.sin()", "jnp.sin(x)", V)),
    ok("jnp.cos", Fm::Elementwise, "`x.cos()`", &[M("cos")], "−sin(x)·ẋ", d("x", "x.cos()", "jnp.cos(x)", V)),
    ok("jnp.tan", Fm::Elementwise, "`x.sin() / x.cos()`", &[M("sin"), M("cos")], "through the quotient: (1 + tan²x)·ẋ", d("x", "x.sin() / x.cos()", "jnp.tan(x)", V)),
    ok("jnp.tanh", Fm::Elementwise, "`x.tanh()`", &[M("tanh")], "(1 − tanh²x)·ẋ", d("m", "m.tanh()", "jnp.tanh(m)", M2)),
    ok("jnp.sinh", Fm::Elementwise, "`(x.exp() - (-x).exp()) * 0.5`", &[M("exp")], "through the composition: cosh(x)·ẋ", d("m", "(m.exp() - (-m).exp()) * 0.5", "jnp.sinh(m)", M2)),
    ok("jnp.cosh", Fm::Elementwise, "`(x.exp() + (-x).exp()) * 0.5`", &[M("exp")], "through the composition: sinh(x)·ẋ", d("m", "(m.exp() + (-m).exp()) * 0.5", "jnp.cosh(m)", M2)),
    ok("jnp.exp", Fm::Elementwise, "`x.exp()`", &[M("exp")], "exp(x)·ẋ", d("m", "m.exp()", "jnp.exp(m)", M2)),
    ok("jnp.exp2", Fm::Elementwise, "`(x * LN_2).exp()`", &[M("exp"), S("LN_2")], "ln2·2ˣ·ẋ", d("x", "(x * std::f64::consts::LN_2).exp()", "jnp.exp2(x)", V)),
    ok("jnp.expm1", Fm::Elementwise, "`expm1(x)`, `x.exp_m1()`", &[F("expm1"), M("exp_m1")], "exp(x)·ẋ", d("m", "expm1(m) + m.exp_m1()", "2.0 * jnp.expm1(m)", M2)),
    ok("jnp.log", Fm::Elementwise, "`x.ln()`", &[M("ln")], "ẋ / x", d("x", "x.ln()", "jnp.log(x)", V)),
    ok("jnp.log2", Fm::Elementwise, "`x.ln() / LN_2`", &[M("ln"), S("LN_2")], "ẋ / (x·ln2)", d("x", "x.ln() / std::f64::consts::LN_2", "jnp.log2(x)", V)),
    ok("jnp.log10", Fm::Elementwise, "`x.ln() / LN_10`", &[M("ln"), S("LN_10")], "ẋ / (x·ln10)", d("x", "x.ln() / std::f64::consts::LN_10", "jnp.log10(x)", V)),
    ok("jnp.log1p", Fm::Elementwise, "`log1p(x)`, `x.ln_1p()`", &[F("log1p"), M("ln_1p")], "ẋ / (1 + x)", d("m", "log1p(m) + m.ln_1p()", "2.0 * jnp.log1p(m)", M2)),
    ok("jnp.sqrt", Fm::Elementwise, "`x.sqrt()`", &[M("sqrt")], "ẋ / (2·√x)", d("x", "x.sqrt()", "jnp.sqrt(x)", V)),
    ok("jnp.square", Fm::Elementwise, "`x.square()`", &[M("square")], "2x·ẋ", d("m", "m.square()", "jnp.square(m)", M2)),
    ok("jnp.reciprocal", Fm::Elementwise, "`x.recip()`", &[M("recip")], "−ẋ / x²", d("x", "x.recip()", "jnp.reciprocal(x)", V)),
    ok("jnp.abs", Fm::Elementwise, "`x.abs()`", &[M("abs")], "sign(x)·ẋ, 0 at 0 (JAX)", d("m", "m.abs()", "jnp.abs(m)", M2)),
    ok("jnp.absolute", Fm::Elementwise, "`x.abs()`", &[M("abs")], "sign(x)·ẋ, 0 at 0 (JAX)", d("m", "m.abs() * 2.0", "jnp.absolute(m) * 2.0", M2)),
    ok("jnp.negative", Fm::Elementwise, "`-x`", &[S("-")], "linear: −ẋ", d("m", "-m", "jnp.negative(m)", M2)),
    ok("jnp.add", Fm::Elementwise, "`a + b` (numpy broadcasting)", &[S("+")], "linear: ȧ + ḃ", d("m, v", "&m + &v", "jnp.add(m, v)", M2)),
    ok("jnp.subtract", Fm::Elementwise, "`a - b`", &[S("-")], "linear: ȧ − ḃ", d("x, y", "&x - &y", "jnp.subtract(x, y)", V)),
    ok("jnp.multiply", Fm::Elementwise, "`a * b`", &[S("*")], "bilinear: ȧ·b + a·ḃ", d("x, y", "&x * &y", "jnp.multiply(x, y)", V)),
    ok("jnp.divide", Fm::Elementwise, "`a / b`", &[S("/")], "ȧ / b − a·ḃ / b²", d("x, y", "&x / &y", "jnp.divide(x, y)", V)),
    ok("jnp.true_divide", Fm::Elementwise, "`a / b`", &[S("/")], "ȧ / b − a·ḃ / b²", d("y, x", "&y / &x", "jnp.true_divide(y, x)", V)),
    ok("jnp.power", Fm::Elementwise, "`power(x, y)`, `powf(x, y)`, `x.powf(y)`", &[F("power"), F("powf"), M("powf")], "y·x^(y−1)·ẋ + ln(x)·x^y·ẏ", d("x, y", "power(x, y) + powf(x, y) + x.powf(&y)", "3.0 * jnp.power(x, y)", V)),
    ok("lax.integer_pow", Fm::Elementwise, "`x.powi(n)` (`n` an integer literal)", &[M("powi")], "n·x^(n−1)·ẋ", d("m", "m.powi(3)", "lax.integer_pow(m, 3)", M2)),
    ok("jnp.maximum", Fm::Elementwise, "`a.max(b)`", &[M("max")], "to the larger; a tie splits ½/½ (JAX)", d("x, y", "x.max(&y)", "jnp.maximum(x, y)", V)),
    ok("jnp.minimum", Fm::Elementwise, "`a.min(b)`", &[M("min")], "to the smaller; a tie splits ½/½ (JAX)", d("x, y", "x.min(&y)", "jnp.minimum(x, y)", V)),
    ok("jnp.clip", Fm::Elementwise, "`clip(x, lo, hi)`, `x.clamp(lo, hi)`", &[F("clip"), M("clamp")], "ẋ inside, 0 outside, ½ at a bound", d("m", "clip(m, -0.5, 0.5) + m.clamp(-0.5, 0.5)", "2.0 * jnp.clip(m, -0.5, 0.5)", M2)),
    ok("jnp.sign", Fm::Elementwise, "`sign(x)` (`x.signum()` is Rust's: ±1 at ±0)", &[F("sign"), M("signum")], "0", d("m", "sign(m) + m.signum()", "2.0 * jnp.sign(m)", M2)),
    ok("jnp.floor", Fm::Elementwise, "`x.floor()`", &[M("floor")], "0", d("m", "(m * 3.0).floor()", "jnp.floor(m * 3.0)", M2)),
    ok("jnp.ceil", Fm::Elementwise, "`x.ceil()`", &[M("ceil")], "0", d("m", "(m * 3.0).ceil()", "jnp.ceil(m * 3.0)", M2)),
    ok("jnp.round", Fm::Elementwise, "`x.round_ties_even()` (`x.round()` is Rust's, halfway away from 0)", &[M("round_ties_even"), M("round")], "0", d("m", "(m * 3.0).round_ties_even() + (m * 3.0).round()", "2.0 * jnp.round(m * 3.0)", M2)),
    ok("jnp.trunc", Fm::Elementwise, "`x.trunc()`", &[M("trunc")], "0", d("m", "(m * 3.0).trunc()", "jnp.trunc(m * 3.0)", M2)),
    ok("jnp.fmod", Fm::Elementwise, "`a % b` (C's `fmod`, as Rust's `%`)", &[S("%")], "ȧ − trunc(a/b)·ḃ (JAX's `rem`)", d("y, x", "&y % &x", "jnp.fmod(y, x)", V)),
    ok("jnp.remainder", Fm::Elementwise, "`a.rem_euclid(b)` (the same for a positive divisor)", &[S("rem_euclid")], "ȧ − floor(a/b)·ḃ", d("y, x", "y.rem_euclid(&x)", "jnp.remainder(y, x)", V)),
    ok("jnp.floor_divide", Fm::Elementwise, "`(a / b).floor()`", &[M("floor")], "0", d("y, x", "(&y / &x).floor()", "jnp.floor_divide(y, x)", V)),
    ok("jnp.logaddexp", Fm::Elementwise, "`logaddexp(a, b)`", &[F("logaddexp")], "e^(a−out)·ȧ + e^(b−out)·ḃ, ½ each at a tie", d("m, v", "logaddexp(m, v)", "jnp.logaddexp(m, v)", M2)),
    ok("jnp.hypot", Fm::Elementwise, "`(a.square() + b.square()).sqrt()`", &[M("square"), M("sqrt")], "through the composition", d("x, y", "(x.square() + y.square()).sqrt()", "jnp.hypot(x, y)", V)),
    ok("jnp.deg2rad", Fm::Elementwise, "`x * (PI / 180.0)`", &[S("PI")], "linear", d("x", "&x * (std::f64::consts::PI / 180.0)", "jnp.deg2rad(x)", V)),
    ok("lax.erf", Fm::Elementwise, "`erf(x)`", &[F("erf")], "2/√π·exp(−x²)·ẋ", d("m", "erf(m)", "lax.erf(m)", M2)),
    ok("lax.erf_inv", Fm::Elementwise, "`erf_inv(x)`", &[F("erf_inv")], "√π/2·exp(y²)·ẋ", d("x", "erf_inv(x)", "lax.erf_inv(x)", V)),
    ok("lax.rsqrt", Fm::Elementwise, "`x.sqrt().recip()`", &[M("sqrt"), M("recip")], "−ẋ / (2·x^{3/2})", d("x", "x.sqrt().recip()", "lax.rsqrt(x)", V)),
    ok("jnp.isnan", Fm::Elementwise, "`x != x`", &[S("!=")], "none (boolean)", v("m", "m.ln() != m.ln()", "jnp.isnan(jnp.log(m))", "Array2<bool>")),
    ok("jnp.greater", Fm::Elementwise, "`a > b`", &[S(">")], "none (boolean)", v("x, y", "x > y", "jnp.greater(x, y)", "Array1<bool>")),
    ok("jnp.greater_equal", Fm::Elementwise, "`a >= b`", &[S(">=")], "none (boolean)", v("x, y", "x >= y", "jnp.greater_equal(x, y)", "Array1<bool>")),
    ok("jnp.less", Fm::Elementwise, "`a < b`", &[S("<")], "none (boolean)", v("x, y", "x < y", "jnp.less(x, y)", "Array1<bool>")),
    ok("jnp.less_equal", Fm::Elementwise, "`a <= b`", &[S("<=")], "none (boolean)", v("x, y", "x <= y", "jnp.less_equal(x, y)", "Array1<bool>")),
    ok("jnp.equal", Fm::Elementwise, "`a == b`", &[S("==")], "none (boolean)", v("x, y", "(x * 4.0).floor() == (y * 4.0).floor()", "jnp.equal(jnp.floor(x * 4.0), jnp.floor(y * 4.0))", "Array1<bool>")),
    ok("jnp.not_equal", Fm::Elementwise, "`a != b`", &[S("!=")], "none (boolean)", v("x, y", "x != y", "jnp.not_equal(x, y)", "Array1<bool>")),
    no("jnp.arcsin", Fm::Elementwise, "no inverse-trigonometric op in the IR yet (`asin`, `acos`, `atan`, `atan2` are not lowered)"),
    no("jnp.arccos", Fm::Elementwise, "no inverse-trigonometric op in the IR yet"),
    no("jnp.arctan", Fm::Elementwise, "no inverse-trigonometric op in the IR yet"),
    no("jnp.arctan2", Fm::Elementwise, "no inverse-trigonometric op in the IR yet"),
    no("jnp.arcsinh", Fm::Elementwise, "no inverse-hyperbolic op yet (`(x + (x² + 1).sqrt()).ln()` loses digits for large |x|)"),
    no("jnp.arctanh", Fm::Elementwise, "no inverse-hyperbolic op yet (`0.5·(log1p(x) − log1p(−x))` is a composition that works)"),
    no("jnp.cbrt", Fm::Elementwise, "no `cbrt` op yet (`x.powf(1.0 / 3.0)` is NaN for a negative `x`)"),
    no("jnp.isinf", Fm::Elementwise, "no infinity test yet (`x.abs() > f64::MAX` is the composition)"),
    no("jnp.isfinite", Fm::Elementwise, "no finiteness test yet (`(x - x) == (x - x)` is the composition)"),
    no("jnp.logical_and", Fm::Elementwise, "elementwise `&`/`|` on boolean arrays are not lowered (`&&` and `||` are on scalar conditions)"),
    no("jnp.logical_or", Fm::Elementwise, "elementwise `&`/`|` on boolean arrays are not lowered"),
    // ---- jax.nn -----------------------------------------------------------------
    ok("jax.nn.relu", Fm::Nn, "`relu(x)`", &[F("relu")], "ẋ where x > 0, 0 at 0 (JAX)", d("m", "relu(m)", "jax.nn.relu(m)", M2)),
    ok("jax.nn.sigmoid", Fm::Nn, "`sigmoid(x)`", &[F("sigmoid")], "σ(1−σ)·ẋ, finite everywhere", d("m", "sigmoid(m)", "jax.nn.sigmoid(m)", M2)),
    ok("jax.nn.softplus", Fm::Nn, "`softplus(x)`", &[F("softplus")], "sigmoid(x)·ẋ", d("m", "softplus(m)", "jax.nn.softplus(m)", M2)),
    ok("jax.nn.log_sigmoid", Fm::Nn, "`-softplus(-x)`", &[F("softplus")], "sigmoid(−x)·ẋ", d("m", "-softplus(-&m)", "jax.nn.log_sigmoid(m)", M2)),
    ok("jax.nn.silu", Fm::Nn, "`x * sigmoid(x)`", &[F("sigmoid")], "through the composition", d("m", "&m * sigmoid(m)", "jax.nn.silu(m)", M2)),
    ok("jax.nn.gelu", Fm::Nn, "`0.5 * x * (1.0 + erf(x * FRAC_1_SQRT_2))` (`approximate=False`)", &[F("erf")], "through the composition", d("m", "&m * 0.5 * (erf(&m * std::f64::consts::FRAC_1_SQRT_2) + 1.0)", "jax.nn.gelu(m, approximate=False)", M2)),
    ok("jax.nn.elu", Fm::Nn, "`where_(x > 0.0, x, expm1(x))`", &[F("where_"), F("expm1")], "to the branch taken", d("m", "where_(m > 0.0, m, expm1(m))", "jax.nn.elu(m)", M2)),
    ok("jax.nn.leaky_relu", Fm::Nn, "`where_(x >= 0.0, x, x * 0.01)`", &[F("where_")], "to the branch taken", d("m", "where_(m >= 0.0, m, &m * 0.01)", "jax.nn.leaky_relu(m, 0.01)", M2)),
    ok("jax.nn.relu6", Fm::Nn, "`x.clamp(0.0, 6.0)`", &[M("clamp")], "ẋ inside (0, 6), ½ at a bound", d("m", "(&m * 8.0).clamp(0.0, 6.0)", "jax.nn.relu6(m * 8.0)", M2)),
    ok("jax.nn.softmax", Fm::Nn, "`softmax(x, Axis(k))`", &[F("softmax")], "exact (the max shift is under `stop_gradient`)", d("m", "softmax(m, Axis(1))", "jax.nn.softmax(m, axis=1)", M2)),
    ok("jax.nn.log_softmax", Fm::Nn, "`log_softmax(x, Axis(k))`", &[F("log_softmax")], "ẋ − Σ softmax·ẋ along the axis", d("m", "log_softmax(m, Axis(0))", "jax.nn.log_softmax(m, axis=0)", M2)),
    ok("jax.nn.logsumexp", Fm::Nn, "`logsumexp(x[, Axis(k)])`", &[F("logsumexp")], "softmax(x)·ẋ", d("m", "logsumexp(m, Axis(1))", "jax.nn.logsumexp(m, axis=1)", V)),
    ok("jax.scipy.special.logsumexp", Fm::Nn, "`logsumexp(x)`", &[F("logsumexp")], "softmax(x)·ẋ", d("m", "logsumexp(m)", "jax.scipy.special.logsumexp(m)", R)),
    ok("jax.nn.one_hot", Fm::Nn, "`take(eye(n), &labels, Axis(0))`", &[F("take"), F("eye")], "none (integer labels)", v("idx", "take(eye(4), &idx, Axis(0))", "jax.nn.one_hot(idx, 4)", M2)),
    ok("jax.nn.standardize", Fm::Nn, "`(x - x.mean()) / (x.var(0.0) + eps).sqrt()`", &[M("mean"), M("var"), M("sqrt")], "through the composition", d("x", "(&x - x.mean()) / (x.var(0.0) + 1e-5).sqrt()", "jax.nn.standardize(x, epsilon=1e-5)", V)),
    no("jax.nn.initializers", Fm::Nn, "host-side: draw the weights with `oxla::random` outside the annotated function"),
    no("jax.nn.dot_product_attention", Fm::Nn, "no fused attention: compose `matmul`, `softmax` and `matmul`"),
    // ---- reductions -------------------------------------------------------------
    ok("jnp.sum", Fm::Reductions, "`x.sum()`, `sum(x)`, `x.sum_axis(Axis(k))`", &[M("sum"), F("sum"), M("sum_axis")], "linear: the cotangent broadcast back", d("m", "m.sum() + sum(m) + m.sum_axis(Axis(0)).sum()", "3.0 * jnp.sum(m)", R)),
    ok("jnp.mean", Fm::Reductions, "`x.mean()`, `mean(x)`, `x.mean_axis(Axis(k))`", &[M("mean"), F("mean"), M("mean_axis")], "linear: broadcast back over n", d("m", "m.mean_axis(Axis(1)) + m.mean() + mean(m)", "jnp.mean(m, axis=1) + 2.0 * jnp.mean(m)", V)),
    ok("jnp.average", Fm::Reductions, "`mean(x)` (no weights)", &[F("mean")], "linear", d("x", "mean(x)", "jnp.average(x)", R)),
    ok("jnp.max", Fm::Reductions, "`max(x)`, `x.max()`, `x.max_axis(Axis(k))`", &[F("max"), M("max"), M("max_axis")], "shared equally by the elements equal to the max (JAX)", d("m", "m.max_axis(Axis(0)) + max(m) + m.max()", "jnp.max(m, axis=0) + 2.0 * jnp.max(m)", V)),
    ok("jnp.min", Fm::Reductions, "`min(x)`, `x.min()`, `x.min_axis(Axis(k))`", &[F("min"), M("min"), M("min_axis")], "shared equally by the elements equal to the min (JAX)", d("m", "m.min_axis(Axis(1)) + min(m) + m.min()", "jnp.min(m, axis=1) + 2.0 * jnp.min(m)", V)),
    ok("jnp.amax", Fm::Reductions, "`max(x)`", &[F("max")], "as `jnp.max`", d("x", "max(x)", "jnp.amax(x)", R)),
    ok("jnp.amin", Fm::Reductions, "`min(x)`", &[F("min")], "as `jnp.min`", d("x", "min(x)", "jnp.amin(x)", R)),
    ok("jnp.prod", Fm::Reductions, "`x.product()`, `prod(x[, Axis(k)])`, `x.product_axis(Axis(k))`, `x.prod_axis(Axis(k))`", &[M("product"), F("prod"), M("product_axis"), M("prod_axis")], "Π_{j≠i} x_j from exclusive products (exact at zeros)", d("m", "m.product_axis(Axis(0)) + m.prod_axis(Axis(0)) + prod(m, Axis(0)) + m.product() + prod(m)", "3.0 * jnp.prod(m, axis=0) + 2.0 * jnp.prod(m)", V)),
    ok("jnp.cumsum", Fm::Reductions, "`cumsum(x, Axis(k))`, `x.cumsum(Axis(k))`", &[F("cumsum"), M("cumsum")], "linear: a reversed cumulative sum", d("m", "cumsum(m, Axis(1)) + m.cumsum(Axis(1))", "2.0 * jnp.cumsum(m, axis=1)", M2)),
    ok("jnp.cumprod", Fm::Reductions, "`cumprod(x, Axis(k))`, `x.cumprod(Axis(k))`", &[F("cumprod"), M("cumprod")], "a reversed scan (exact at zeros)", d("m", "cumprod(m, Axis(0)) + m.cumprod(Axis(0))", "2.0 * jnp.cumprod(m, axis=0)", M2)),
    ok("jnp.var", Fm::Reductions, "`x.var(ddof)`, `x.var_axis(Axis(k), ddof)`", &[M("var"), M("var_axis")], "2(x − mean)/(n − ddof)·ẋ", d("m", "m.var_axis(Axis(1), 1.0) + m.var(0.0)", "jnp.var(m, axis=1, ddof=1) + jnp.var(m)", V)),
    ok("jnp.std", Fm::Reductions, "`x.std(ddof)`, `x.std_axis(Axis(k), ddof)`", &[M("std"), M("std_axis")], "var's divided by 2·std", d("m", "m.std_axis(Axis(0), 0.0) + m.std(1.0)", "jnp.std(m, axis=0) + jnp.std(m, ddof=1)", V)),
    ok("jnp.ptp", Fm::Reductions, "`max(x) - min(x)`", &[F("max"), F("min")], "to the max and the min", d("x", "max(x) - min(x)", "jnp.ptp(x)", R)),
    ok("jnp.median", Fm::Reductions, "`sort(x).slice(s![2..4]).mean()` (the middle of a known length)", &[F("sort"), M("slice"), M("mean")], "to the middle elements", d("x", "sort(x).slice(s![2..4]).mean()", "jnp.median(x)", R)),
    ok("jnp.argmax", Fm::Reductions, "`argmax(x[, Axis(k)])` (`i64`)", &[F("argmax")], "none (an integer)", v("m", "argmax(m, Axis(1))", "jnp.argmax(m, axis=1)", "Array1<i64>")),
    ok("jnp.argmin", Fm::Reductions, "`argmin(x[, Axis(k)])` (`i64`)", &[F("argmin")], "none (an integer)", v("m", "argmin(m)", "jnp.argmin(m)", "i64")),
    no("jnp.nansum", Fm::Reductions, "no NaN-skipping reductions: `sum(where_(x != x, zeros_like(x), x))` is the composition"),
    no("jnp.nanmean", Fm::Reductions, "no NaN-skipping reductions"),
    no("jnp.all", Fm::Reductions, "no boolean reductions yet"),
    no("jnp.any", Fm::Reductions, "no boolean reductions yet"),
    no("jnp.count_nonzero", Fm::Reductions, "no boolean reductions yet"),
    // ---- sorting ----------------------------------------------------------------
    ok("jnp.sort", Fm::Sorting, "`sort(x[, Axis(k)])`", &[F("sort")], "the tangent gathered by the permutation", d("m", "sort(m, Axis(0))", "jnp.sort(m, axis=0)", M2)),
    ok("jnp.argsort", Fm::Sorting, "`argsort(x[, Axis(k)])` (`i64`, stable)", &[F("argsort")], "none (an integer)", v("m", "argsort(m)", "jnp.argsort(m)", "Array2<i64>")),
    ok("lax.sort", Fm::Sorting, "`sort(x)`", &[F("sort")], "the tangent gathered by the permutation", d("x", "sort(&x * -1.0)", "lax.sort(x * -1.0)", V)),
    ok("lax.top_k", Fm::Sorting, "`let (values, indices) = top_k(x, k);`", &[F("top_k")], "values: the tangent gathered; none for the indices", v("m", "let (values, indices) = top_k(m, 2);\n    (values, indices)", "lax.top_k(m, 2)", "(Array2<f64>, Array2<i64>)")),
    no("jnp.searchsorted", Fm::Sorting, "not in the vocabulary yet"),
    no("jnp.unique", Fm::Sorting, DATA_SHAPE),
    // ---- shape ------------------------------------------------------------------
    ok("jnp.reshape", Fm::Shape, "`x.into_shape_with_order(shape).unwrap()`, `x.to_shape(..)`, `x.reshape(..)`", &[M("into_shape_with_order"), M("to_shape"), M("reshape")], "linear: reshaped back", d("m", "m.into_shape_with_order((4, 3)).unwrap() + m.to_shape((4, 3)).unwrap() + m.reshape((4, 3))", "3.0 * jnp.reshape(m, (4, 3))", M2)),
    ok("jnp.ravel", Fm::Shape, "`x.flatten()`, `x.ravel()`", &[M("flatten"), M("ravel")], "linear: reshaped back", d("m", "m.flatten() + m.ravel()", "2.0 * jnp.ravel(m)", V)),
    ok("jnp.transpose", Fm::Shape, "`x.t()`, `x.reversed_axes()`, `x.permuted_axes([..])`", &[M("t"), M("reversed_axes"), M("permuted_axes")], "linear: transposed back", d("m", "m.t().to_owned() + m.reversed_axes() + m.permuted_axes([1, 0])", "3.0 * jnp.transpose(m)", M2)),
    ok("jnp.swapaxes", Fm::Shape, "`swapaxes(x, a, b)`, `x.swapaxes(a, b)`", &[F("swapaxes"), M("swapaxes")], "linear: swapped back", d("m", "swapaxes(m, 0, 1) + m.swapaxes(0, 1)", "2.0 * jnp.swapaxes(m, 0, 1)", M2)),
    ok("jnp.moveaxis", Fm::Shape, "`moveaxis(x, src, dst)`", &[F("moveaxis")], "linear: moved back", d("m", "moveaxis(m, 0, 1)", "jnp.moveaxis(m, 0, 1)", M2)),
    ok("jnp.expand_dims", Fm::Shape, "`expand_dims(x, Axis(k))`, `x.insert_axis(Axis(k))`", &[F("expand_dims"), M("insert_axis")], "linear: reshaped back", d("x", "expand_dims(x, Axis(0)) + x.insert_axis(Axis(0))", "2.0 * jnp.expand_dims(x, 0)", M2)),
    ok("jnp.squeeze", Fm::Shape, "`squeeze(x[, Axis(k)])`, `x.squeeze()`, `x.remove_axis(Axis(k))`", &[F("squeeze"), M("squeeze"), M("remove_axis")], "linear: reshaped back", d("x", "squeeze(expand_dims(x, Axis(1))) + expand_dims(x, Axis(0)).squeeze() + expand_dims(x, Axis(0)).remove_axis(Axis(0))", "3.0 * jnp.squeeze(jnp.expand_dims(x, 1))", V)),
    ok("jnp.broadcast_to", Fm::Shape, "`broadcast_to(x, shape)`, `x.broadcast(shape).unwrap()`", &[F("broadcast_to"), M("broadcast")], "linear: summed over the broadcast axes", d("x", "broadcast_to(x, (3, 6)) + x.broadcast((3, 6)).unwrap()", "2.0 * jnp.broadcast_to(x, (3, 6))", M2)),
    ok("jnp.tile", Fm::Shape, "`tile(x, reps)`", &[F("tile")], "linear: summed over the copies", d("m", "tile(m, (2, 1))", "jnp.tile(m, (2, 1))", M2)),
    ok("jnp.repeat", Fm::Shape, "`repeat(x, n[, Axis(k)])`", &[F("repeat")], "linear: summed over the copies", d("m", "repeat(m, 2, Axis(1))", "jnp.repeat(m, 2, axis=1)", M2)),
    ok("jnp.concatenate", Fm::Shape, "`concatenate(Axis(k), &[a.view(), b.view()])`, `concatenate![Axis(k), a, b]`", &[F("concatenate")], "linear: sliced back into each operand", d("x, y", "concatenate(Axis(0), &[x.view(), y.view()])", "jnp.concatenate([x, y])", V)),
    ok("jnp.hstack", Fm::Shape, "`concatenate![Axis(0), a, b]` (vectors)", &[F("concatenate")], "linear: sliced back", d("x, y", "concatenate![Axis(0), x, y]", "jnp.hstack([x, y])", V)),
    ok("jnp.vstack", Fm::Shape, "`stack![Axis(0), a, b]` (vectors), `concatenate![Axis(0), a, b]` (matrices)", &[F("stack")], "linear: sliced back", d("x, y", "stack![Axis(0), x, y]", "jnp.vstack([x, y])", M2)),
    ok("jnp.stack", Fm::Shape, "`stack(Axis(k), &[a.view(), b.view()])`, `stack![Axis(k), a, b]`", &[F("stack")], "linear: sliced back", d("x, y", "stack(Axis(1), &[x.view(), y.view()])", "jnp.stack([x, y], axis=1)", M2)),
    ok("jnp.roll", Fm::Shape, "`roll(x, shift, Axis(k))`", &[F("roll")], "linear: rolled back", d("m", "roll(m, 3, Axis(1))", "jnp.roll(m, 3, axis=1)", M2)),
    ok("jnp.asarray", Fm::Shape, "`x.view()`, `x.clone()` (the value itself)", &[M("view"), M("clone")], "the identity", d("m", "m.view().to_owned() + m.clone()", "2.0 * jnp.asarray(m)", M2)),
    ok("jnp.copy", Fm::Shape, "`x.to_owned()`, `x.into_owned()`", &[M("to_owned"), M("into_owned")], "the identity", d("m", "m.to_owned() + m.into_owned()", "2.0 * jnp.copy(m)", M2)),
    ok("jnp.shape", Fm::Shape, "`x.len_of(Axis(k))`, `x.shape()[k]`, `x.nrows()`, `x.ncols()` (`i64` values)", &[M("len_of"), M("shape"), M("nrows"), M("ncols")], "none (an integer)", v("m", "m.len_of(Axis(1)) * 1000 + m.shape()[0] * 100 + m.nrows() * 10 + m.ncols()", "m.shape[1] * 1000 + m.shape[0] * 100 + m.shape[0] * 10 + m.shape[1]", "i64")),
    ok("len", Fm::Shape, "`x.len()` (the leading axis, as Python's `len`)", &[M("len")], "none (an integer)", v("x", "x.len()", "len(x)", "i64")),
    ok("jnp.size", Fm::Shape, "`x.nrows() * x.ncols()`", &[M("nrows"), M("ncols")], "none (an integer)", v("m", "m.nrows() * m.ncols()", "jnp.size(m)", "i64")),
    no("jnp.split", Fm::Shape, "several results from one call are not lowered: take each piece with `x.slice(s![a..b])`"),
    no("jnp.pad", Fm::Shape, "no `pad` function (the IR's `pad` is a slice's transpose): `concatenate` with `zeros(..)`"),
    no("jnp.flip", Fm::Shape, "negative slice steps are not lowered (`s![..;-1]`)"),
    no("lax.rev", Fm::Shape, "negative slice steps are not lowered"),
    // ---- indexing ---------------------------------------------------------------
    ok("x[i]", Fm::Indexing, "`x[i]` (an integer scalar; a literal on an axis of static size)", &[S("x[i]")], "put back at the index (a scatter-add)", d("x, i", "x[i] * 2.0", "x[i] * 2.0", R)),
    ok("x[i, j]", Fm::Indexing, "`x[[i, j]]`", &[S("m[[i, 1]]")], "put back at the index", d("m, i", "m[[i, 1]] * 2.0", "m[i, 1] * 2.0", R)),
    ok("x[i, :]", Fm::Indexing, "`x.row(i)`, `x.column(j)`", &[M("row"), M("column")], "scattered back into the row or column", d("m, i", "m.row(i).to_owned() + m.column(i).slice(s![..1])", "m[i, :] + m[:1, i]", V)),
    ok("x[a:b:c]", Fm::Indexing, "`x.slice(s![a..b;c])`, `x.slice_axis(Axis(k), Slice::from(a..b))`", &[M("slice"), M("slice_axis")], "padded back with zeros (`lax.pad`)", d("m", "m.slice(s![1.., ..;2]).to_owned() + m.slice_axis(Axis(0), Slice::from(0..2)).slice(s![.., 1..3])", "m[1:, ::2] + m[0:2, 1:3]", M2)),
    ok("x[None]", Fm::Indexing, "`x.slice(s![NewAxis, ..])`", &[M("slice")], "reshaped back", d("x", "x.slice(s![NewAxis, ..]).to_owned()", "x[None]", M2)),
    ok("x[idx]", Fm::Indexing, "`x.select(Axis(0), &idx)`, `take(x, &idx, Axis(0))`", &[M("select")], "a scatter-add into the picked rows", d("m, idx", "m.select(Axis(1), &idx)", "m[:, idx]", M2)),
    ok("jnp.take", Fm::Indexing, "`take(x, &idx, Axis(k))`, `x.select(Axis(k), &idx)`", &[F("take")], "a scatter-add into the picked positions", d("x, idx", "take(x, &idx, Axis(0))", "jnp.take(x, idx, axis=0)", V)),
    ok("jnp.take_along_axis", Fm::Indexing, "`take_along_axis(x, &labels, Axis(k))` (one index per lane)", &[F("take_along_axis")], "scattered back into the picked positions", d("m, idx", "take_along_axis(m, &idx, Axis(1))", "jnp.take_along_axis(m, idx[:, None], axis=1)[:, 0]", V)),
    ok("x.at[i].set", Fm::Indexing, "`let mut z = x.to_owned(); z[i] = v;`", &[S("z[i] = ")], "ẏ at i, ẋ elsewhere", d("x, i", "let mut z = x.to_owned();\n    z[i] = z[0] * 3.0;\n    z", "x.at[i].set(x[0] * 3.0)", V)),
    ok("x.at[i].add", Fm::Indexing, "`z[i] += v`", &[S("z[i] += ")], "linear in both", d("x, i", "let mut z = x.to_owned();\n    z[i] += z[1].sin();\n    z", "x.at[i].add(jnp.sin(x[1]))", V)),
    ok("x.at[i].multiply", Fm::Indexing, "`z[i] *= v`", &[S("z[i] *= ")], "bilinear", d("x, i", "let mut z = x.to_owned();\n    z[i] *= z[4];\n    z", "x.at[i].multiply(x[4])", V)),
    ok("x.at[a:b].set", Fm::Indexing, "`z.slice_mut(s![a..b]).assign(&y)`", &[S("slice_mut"), S("assign")], "ẏ in the window, ẋ elsewhere", d("x, y", "let mut z = x.to_owned();\n    z.slice_mut(s![1..4]).assign(&(&y.slice(s![..3]) * 2.0));\n    z", "x.at[1:4].set(y[:3] * 2.0)", V)),
    ok("lax.dynamic_slice", Fm::Indexing, "`x.slice(s![k..k + w])` (`k` known at run time, `w` a literal)", &[M("slice"), S("k..k + 3")], "scattered back into the window", d("x, k", "x.slice(s![k..k + 3]).to_owned()", "lax.dynamic_slice(x, (k,), (3,))", V)),
    ok("lax.dynamic_update_slice", Fm::Indexing, "`z.slice_mut(s![k..k + w]).assign(&u)`", &[S("slice_mut"), S("k..k + 3")], "ẋ outside the window, the update's inside", d("x, y, k", "let mut z = x.to_owned();\n    z.slice_mut(s![k..k + 3]).assign(&y.slice(s![..3]));\n    z", "lax.dynamic_update_slice(x, y[:3], (k,))", V)),
    no("x[mask]", Fm::Indexing, DATA_SHAPE),
    no("jnp.nonzero", Fm::Indexing, DATA_SHAPE),
    no("jnp.argwhere", Fm::Indexing, DATA_SHAPE),
    no("lax.gather", Fm::Indexing, "not a function here: `take`, `take_along_axis`, `x[i]` and `x.select(..)` are its forms"),
    no("lax.scatter_add", Fm::Indexing, "not a function here: `z[i] += v` and `z.slice_mut(..)` writes are its forms"),
    // ---- constructors -------------------------------------------------------------
    ok("jnp.zeros", Fm::Constructors, "`zeros(shape)`, `Array2::zeros(shape)`", &[F("zeros")], "none", d("m", "&m + zeros((3, 4))", "m + jnp.zeros((3, 4))", M2)),
    ok("jnp.ones", Fm::Constructors, "`ones(shape)`", &[F("ones")], "none", d("m", "&m * ones(m.raw_dim())", "m * jnp.ones((3, 4))", M2)),
    ok("jnp.full", Fm::Constructors, "`full(shape, v)`, `Array::from_elem(shape, v)`", &[F("full")], "to `v`: the sum of the cotangent", d("x", "full((2, 3), x[1])", "jnp.full((2, 3), x[1])", M2)),
    ok("jnp.zeros_like", Fm::Constructors, "`zeros_like(x)`", &[F("zeros_like")], "none", d("x", "zeros_like(x) + &x", "jnp.zeros_like(x) + x", V)),
    ok("jnp.ones_like", Fm::Constructors, "`ones_like(x)`", &[F("ones_like")], "none", d("x", "ones_like(x) * &x", "jnp.ones_like(x) * x", V)),
    ok("jnp.full_like", Fm::Constructors, "`full_like(x, v)`", &[F("full_like")], "none to `x`; `v`'s passed", d("x", "full_like(x, x[2])", "jnp.full_like(x, x[2])", V)),
    ok("jnp.arange", Fm::Constructors, "`arange(n)` (the function's float type)", &[F("arange")], "none", d("x", "arange(6) * &x", "jnp.arange(6) * x", V)),
    ok("jnp.linspace", Fm::Constructors, "`arange(n) * step + start`", &[F("arange")], "none", d("x", "arange(6) * 0.2 + &x", "jnp.linspace(0.0, 1.0, 6) + x", V)),
    ok("jnp.eye", Fm::Constructors, "`eye(n)`, `Array2::eye(n)`", &[F("eye")], "none", d("a", "eye(3) * &a", "jnp.eye(3) * a", M2)),
    ok("jnp.identity", Fm::Constructors, "`eye(n)`", &[F("eye")], "none", d("a", "eye(3) + &a", "jnp.identity(3) + a", M2)),
    ok("jnp.where", Fm::Constructors, "`where_(c, x, y)`, `select(c, x, y)`", &[F("where_"), F("select")], "to `x` where `c` holds, to `y` elsewhere", d("x, y", "where_(x < y, &x * 2.0, &y) + select(x > y, &x, &y)", "jnp.where(x < y, x * 2.0, y) + jnp.where(x > y, x, y)", V)),
    ok("jnp.meshgrid", Fm::Constructors, "`let (xx, yy) = meshgrid(&x, &y);` (indexing \"xy\")", &[F("meshgrid")], "summed back along the broadcast axis", d("x, v", "let (xx, yy) = meshgrid(&x, &v);\n    &xx * &yy + &xx", "(lambda g: g[0] * g[1] + g[0])(jnp.meshgrid(x, v))", M2)),
    no("jnp.tril", Fm::Constructors, "not in the vocabulary yet: `where_` on a comparison of two `arange`s"),
    no("jnp.triu", Fm::Constructors, "not in the vocabulary yet"),
    // ---- linalg -------------------------------------------------------------------
    ok("jnp.dot", Fm::Linalg, "`a.dot(&b)`, `dot(a, b)` (vector and matrix products)", &[M("dot"), F("dot")], "bilinear: ȧ·b + a·ḃ", d("m, v", "m.dot(&v) + dot(m, v)", "2.0 * jnp.dot(m, v)", V)),
    ok("jnp.matmul", Fm::Linalg, "`matmul(a, b)` (stacks over leading axes)", &[F("matmul")], "bilinear", d("m, n", "matmul(m, n)", "jnp.matmul(m, n)", M2)),
    ok("a @ b", Fm::Linalg, "`a.dot(&b)`", &[M("dot")], "bilinear", d("m, n", "m.dot(&n)", "m @ n", M2)),
    ok("jnp.vdot", Fm::Linalg, "`dot(a, b)` (vectors)", &[F("dot")], "bilinear", d("x, y", "dot(x, y)", "jnp.vdot(x, y)", R)),
    ok("jnp.inner", Fm::Linalg, "`dot(a, b)` (vectors)", &[F("dot")], "bilinear", d("y, x", "dot(y, x)", "jnp.inner(y, x)", R)),
    ok("jnp.outer", Fm::Linalg, "`outer(a, b)`", &[F("outer")], "g·b and gᵀ·a", d("x, v", "outer(x, v)", "jnp.outer(x, v)", M2)),
    ok("jnp.einsum", Fm::Linalg, "`einsum(\"ij,jk->ik\", a, b)` (one or two operands, what `dot_general` covers)", &[F("einsum")], "as the `dot_general`, sums and transposes it is", d("m, n", "einsum(\"ij,jk->ki\", m, n)", "jnp.einsum('ij,jk->ki', m, n)", M2)),
    ok("jnp.tensordot", Fm::Linalg, "`einsum(..)`", &[F("einsum")], "bilinear", d("m, a", "einsum(\"ij,ik->jk\", m, a)", "jnp.tensordot(m, a, axes=([0], [0]))", M2)),
    ok("lax.dot_general", Fm::Linalg, "`einsum(..)`, `a.dot(&b)`", &[F("einsum")], "bilinear", d("m, n", "einsum(\"ij,jk->ik\", m, n)", "lax.dot_general(m, n, (([1], [0]), ([], [])))", M2)),
    ok("jnp.linalg.norm", Fm::Linalg, "`norm(x[, Axis(k)])` (2-norm, Frobenius)", &[F("norm")], "x / norm (NaN at 0, as JAX)", d("m", "norm(m, Axis(1)) + norm(m)", "jnp.linalg.norm(m, axis=1) + jnp.linalg.norm(m)", V)),
    ok("jnp.diag", Fm::Linalg, "`diag(x)`, `x.diag()`", &[F("diag")], "linear: put back on the diagonal", d("x", "diag(x)", "jnp.diag(x)", M2)),
    ok("jnp.diagonal", Fm::Linalg, "`x.diag()`, `diag(x)`", &[M("diag"), F("diag")], "linear", d("m", "m.diag().to_owned() + diag(m)", "2.0 * jnp.diagonal(m)", V)),
    ok("jnp.trace", Fm::Linalg, "`x.diag().sum()`", &[M("diag"), M("sum")], "linear", d("a", "a.diag().sum()", "jnp.trace(a)", R)),
    ok("jnp.linalg.cholesky", Fm::Linalg, "`cholesky(a)` (lower; symmetrizes `a` as JAX; NaN where not positive definite, as JAX)", &[F("cholesky")], "L·Φ(L⁻¹·sym(ȧ)·L⁻ᵀ), Φ the lower triangle with the diagonal halved", d("a", "cholesky(a.dot(&a.t()))", "jnp.linalg.cholesky(a @ a.T)", M2)),
    ok("jnp.linalg.solve", Fm::Linalg, "`solve(a, b)` (LU with partial pivoting; `b` a vector or a matrix)", &[F("solve")], "solve(a, ḃ − ȧ·x); transpose in b: solve(aᵀ, ·)", d("a, m", "solve(a, m)", "jnp.linalg.solve(a, m)", M2)),
    ok("jnp.linalg.inv", Fm::Linalg, "`inv(a)` (`solve(a, I)`)", &[F("inv")], "−a⁻¹·ȧ·a⁻¹ (through solve)", d("a", "inv(a)", "jnp.linalg.inv(a)", M2)),
    ok("jnp.linalg.det", Fm::Linalg, "`det(a)` (LU)", &[F("det")], "det(a)·tr(a⁻¹·ȧ)", d("a", "det(a)", "jnp.linalg.det(a)", R)),
    ok("jnp.linalg.slogdet", Fm::Linalg, "`let (sign, logabsdet) = slogdet(a);`", &[F("slogdet")], "sign: 0; logabsdet: tr(a⁻¹·ȧ)", d("a", "let (sign, logabsdet) = slogdet(a);\n    sign * logabsdet", "jnp.linalg.slogdet(a)[0] * jnp.linalg.slogdet(a)[1]", R)),
    no("jnp.linalg.qr", Fm::Linalg, LINALG_PLANNED),
    no("jnp.linalg.eigh", Fm::Linalg, LINALG_PLANNED),
    no("jnp.linalg.svd", Fm::Linalg, LINALG_PLANNED),
    ok("jax.scipy.linalg.solve_triangular", Fm::Linalg, "`solve_triangular(a, b, lower)` (`lower` a `bool` literal)", &[F("solve_triangular")], "linear in b (transpose: the transposed solve); in a: −solve(a, ȧ·x)", d("a, m", "solve_triangular(a, m, true)", "jax.scipy.linalg.solve_triangular(a, m, lower=True)", M2)),
    ok("jax.scipy.linalg.cho_solve", Fm::Linalg, "`cho_solve(l, b)` (`l` lower, from `cholesky`)", &[F("cho_solve"), F("cholesky")], "through its two triangular solves", d("a, m", "cho_solve(cholesky(a.dot(&a.t())), m)", "jax.scipy.linalg.cho_solve((jnp.linalg.cholesky(a @ a.T), True), m)", M2)),
    ok("lax.linalg.triangular_solve", Fm::Linalg, "`triangular_solve(a, b, left_side, lower, transpose_a, unit_diagonal)` (`bool` literals)", &[F("triangular_solve")], "linear in b (transpose: `transpose_a` flipped); in a: −solve(a, ȧ·x)", d("a, m", "triangular_solve(a, m, true, false, true, false)", "lax.linalg.triangular_solve(a, m, left_side=True, lower=False, transpose_a=True)", M2)),
    no("jnp.linalg.eig", Fm::Linalg, "non-symmetric eigenvalues are complex: complex dtypes are not supported"),
    no("jnp.kron", Fm::Linalg, "not in the vocabulary yet"),
    no("jnp.cross", Fm::Linalg, "not in the vocabulary yet"),
    // ---- control flow ---------------------------------------------------------------
    ok("lax.fori_loop", Fm::Control, "`for i in a..b { … }` (a loop op, never unrolled)", &[S("for")], "through every step, forward and reverse", d("x", "let mut c = 0.0;\n    for t in 0..4 {\n        c = c + x[t] * x[t + 1];\n    }\n    c", "lax.fori_loop(0, 4, lambda t, c: c + x[t] * x[t + 1], 0.0)", R)),
    ok("lax.while_loop", Fm::Control, "`while cond { … }`", &[S("while")], "through every step (JAX's `while_loop` has no reverse mode; oxla's has)", v("x, w", "let mut r = w;\n    let mut c = x.to_owned();\n    while r < 2.0 {\n        c = c.sin() * 1.1 + &x;\n        r = r + 0.5;\n    }\n    c", "lax.while_loop(lambda st: st[0] < 2.0, lambda st: (st[0] + 0.5, jnp.sin(st[1]) * 1.1 + x), (w, x))[1]", V)),
    ok("lax.scan", Fm::Control, "a `for` loop writing `hs[t] = h` (stacked outputs)", &[S("for"), S("hs[t] = h")], "through every step", d("x", "let mut h = 0.0;\n    let mut hs = zeros(x.len());\n    for t in 0..x.len() {\n        h = (h + x[t]).tanh();\n        hs[t] = h;\n    }\n    hs", "lax.scan(lambda h, xt: (jnp.tanh(h + xt), jnp.tanh(h + xt)), 0.0, x)[1]", V)),
    ok("lax.cond", Fm::Control, "`if a < b { x } else { y }` on a scalar condition", &[S("if")], "through the taken branch only", d("x, w", "if w < 1.0 { x.sin() } else { x.cos() }", "lax.cond(w < 1.0, lambda: jnp.sin(x), lambda: jnp.cos(x))", V)),
    ok("lax.switch", Fm::Control, "`match k { 0 => a, 1 => b, _ => c }` on an integer", &[S("match")], "through the chosen arm", d("x, i", "match i {\n        0 => x.sin(),\n        1 => x.cos(),\n        _ => x.exp(),\n    }", "lax.switch(i, [lambda: jnp.sin(x), lambda: jnp.cos(x), lambda: jnp.exp(x)])", V)),
    ok("lax.select", Fm::Control, "`select(c, x, y)`, `if c { x } else { y }` on an array condition", &[F("select")], "to `x` where `c` holds, to `y` elsewhere", d("x, y", "select(x < y, &x, &y)", "lax.select(x < y, x, y)", V)),
    ok("jax.checkpoint", Fm::Control, "`for t in oxla::checkpoint(a..b)`, `oxla::checkpoint_every(k, a..b)` (loops)", &[S("oxla::checkpoint")], "the same gradient, carries recomputed in segments", d("x", "let mut c = 0.0;\n    for t in oxla::checkpoint(0..5) {\n        c = (c + x[t]).sin();\n    }\n    c", "lax.fori_loop(0, 5, lambda t, c: jnp.sin(c + x[t]), 0.0)", R)),
    no("lax.map", Fm::Control, "write a `for` loop, or `#[vmap]`"),
    no("lax.associative_scan", Fm::Control, "not in the vocabulary: a `for` loop gives the sequential scan"),
    ok("jax.custom_jvp", Fm::Control, "`#[oxla::custom_jvp(jvp = f_jvp)]` on an `#[oxla::func]` helper", &[S("custom_jvp")], "the rule's: `f_jvp(primals, tangents) -> (out, tangent)`; reverse mode transposes it", Sample::Items {
        items: "#[oxla::func]\n#[oxla::custom_jvp(jvp = NAME_rule)]\nfn NAME_f(x: f64) -> f64 {\n    (1.0 + x.exp()).ln()\n}\n\n/// Twice the true derivative, so agreeing with JAX shows the rule is used.\n#[oxla::func]\nfn NAME_rule(x: f64, t: f64) -> (f64, f64) {\n    let e = x.exp();\n    ((1.0 + e).ln(), 2.0 * (1.0 - 1.0 / (1.0 + e)) * t)\n}\n\n#[oxla::grad(NAME)]\nfn NAME_base(x: f64) -> f64 {\n    NAME_f(x) * x\n}\n",
        call: "1.5",
        py: "@jax.custom_jvp\ndef NAME_f(x):\n    return jnp.log(1.0 + jnp.exp(x))\n\n@NAME_f.defjvp\ndef NAME_rule(p, t):\n    e = jnp.exp(p[0])\n    return jnp.log(1.0 + e), 2.0 * (1.0 - 1.0 / (1.0 + e)) * t[0]",
        jax: "jax.grad(lambda x: NAME_f(x) * x)(1.5)",
    }),
    ok("jax.custom_vjp", Fm::Control, "`#[oxla::custom_vjp(fwd = f_fwd, bwd = f_bwd)]` on an `#[oxla::func]` helper", &[S("custom_vjp")], "the rule's: `f_fwd` gives (out, residuals), `f_bwd(residuals, ct)` the cotangents; reverse mode only, as JAX", Sample::Items {
        items: "#[oxla::func]\n#[oxla::custom_vjp(fwd = NAME_fwd, bwd = NAME_bwd)]\nfn NAME_f(x: f64) -> f64 {\n    x.sin()\n}\n\n#[oxla::func]\nfn NAME_fwd(x: f64) -> (f64, f64) {\n    (x.sin(), x.cos())\n}\n\n/// The true cotangent, clipped into [-0.1, 0.1].\n#[oxla::func]\nfn NAME_bwd(c: f64, g: f64) -> f64 {\n    clip(c * g, -0.1, 0.1)\n}\n\n#[oxla::grad(NAME)]\nfn NAME_base(x: f64) -> f64 {\n    NAME_f(x) * 3.0\n}\n",
        call: "0.5",
        py: "@jax.custom_vjp\ndef NAME_f(x):\n    return jnp.sin(x)\n\ndef NAME_fwd(x):\n    return jnp.sin(x), jnp.cos(x)\n\ndef NAME_bwd(c, g):\n    return (jnp.clip(c * g, -0.1, 0.1),)\n\nNAME_f.defvjp(NAME_fwd, NAME_bwd)",
        jax: "jax.grad(lambda x: NAME_f(x) * 3.0)(0.5)",
    }),
    // ---- lax ------------------------------------------------------------------------
    ok("lax.stop_gradient", Fm::Lax, "`stop_gradient(x)`", &[F("stop_gradient")], "zero", Sample::Value { args: "x", oxla: "stop_gradient(x) * &x", jax: "lax.stop_gradient(x) * x", out: V, grad: Grad::JaxOnly }),
    ok("lax.logistic", Fm::Lax, "`sigmoid(x)`", &[F("sigmoid")], "σ(1−σ)·ẋ", d("x", "sigmoid(x)", "lax.logistic(x)", V)),
    ok("lax.clamp", Fm::Lax, "`x.clamp(lo, hi)`", &[M("clamp")], "ẋ inside, ½ at a bound", d("m", "m.clamp(-0.3, 0.3)", "lax.clamp(-0.3, m, 0.3)", M2)),
    ok("lax.pow", Fm::Lax, "`x.powf(y)`", &[M("powf")], "y·x^(y−1)·ẋ + ln(x)·x^y·ẏ", d("x, y", "x.powf(&y)", "lax.pow(x, y)", V)),
    ok("lax.broadcast_in_dim", Fm::Lax, "`broadcast_to(x, shape)`", &[F("broadcast_to")], "summed over the broadcast axes", d("x", "broadcast_to(x.insert_axis(Axis(1)), (6, 2))", "lax.broadcast_in_dim(x, (6, 2), (0,))", M2)),
    ok("lax.reshape", Fm::Lax, "`x.into_shape_with_order(shape).unwrap()`", &[M("into_shape_with_order")], "reshaped back", d("m", "m.into_shape_with_order((2, 6)).unwrap()", "lax.reshape(m, (2, 6))", M2)),
    ok("lax.transpose", Fm::Lax, "`x.permuted_axes([..])`", &[M("permuted_axes")], "transposed back", d("m", "m.permuted_axes([1, 0])", "lax.transpose(m, (1, 0))", M2)),
    ok("lax.squeeze", Fm::Lax, "`squeeze(x, Axis(k))`", &[F("squeeze")], "reshaped back", d("x", "squeeze(expand_dims(x, Axis(0)), Axis(0))", "lax.squeeze(x[None], (0,))", V)),
    ok("lax.expand_dims", Fm::Lax, "`expand_dims(x, Axis(k))`", &[F("expand_dims")], "reshaped back", d("x", "expand_dims(x, Axis(1))", "lax.expand_dims(x, (1,))", M2)),
    ok("lax.iota", Fm::Lax, "`arange(n)`", &[F("arange")], "none", v("x", "arange(x.len())", "lax.iota(jnp.float64, 6)", V)),
    ok("lax.full", Fm::Lax, "`full(shape, v)`", &[F("full")], "to `v`", d("x", "full(4, x[3])", "lax.full((4,), x[3])", V)),
    ok("lax.slice", Fm::Lax, "`x.slice(s![a..b;c])`", &[M("slice")], "padded back with zeros", d("x", "x.slice(s![1..5;2]).to_owned()", "lax.slice(x, (1,), (5,), (2,))", V)),
    ok("lax.concatenate", Fm::Lax, "`concatenate(Axis(k), &[..])`", &[F("concatenate")], "sliced back", d("m", "concatenate(Axis(1), &[m.view(), m.view()])", "lax.concatenate([m, m], 1)", M2)),
    ok("lax.cumsum", Fm::Lax, "`cumsum(x, Axis(k))`", &[F("cumsum")], "a reversed cumulative sum", d("x", "cumsum(x, Axis(0))", "lax.cumsum(x, axis=0)", V)),
    ok("lax.div", Fm::Lax, "`i / j` on integers (truncating)", &[S("/")], "none (integer)", v("idx", "&idx / 2", "lax.div(idx, 2)", "Array1<i64>")),
    ok("lax.rem", Fm::Lax, "`i % j` on integers; `a % b` on floats", &[S("%")], "none on integers", v("idx", "&idx % 2", "lax.rem(idx, 2)", "Array1<i64>")),
    ok("lax.convert_element_type", Fm::Lax, "`x.mapv(|v| v as i32)`, `n as f64`", &[S("as i32")], "through float → float; none to an integer", v("x", "(&x * 10.0).mapv(|v| v as i32)", "lax.convert_element_type(x * 10.0, jnp.int32)", "Array1<i32>")),
    ok("jnp.astype", Fm::Lax, "`x.mapv(|v| v as f32)`, `n as f64`", &[S("as i64")], "through float → float; none to an integer", v("x", "(&x * 10.0).mapv(|v| v as i64)", "(x * 10.0).astype(jnp.int64)", "Array1<i64>")),
    no("lax.reduce", Fm::Lax, "no generic reducer: `sum`, `max`, `min`, `prod` or a `for` loop"),
    ok("lax.reduce_window", Fm::Lax, "`reduce_window_max(x, window, strides, padding)`, `reduce_window_sum(..)` (a size per axis; built on `conv`)", &[F("reduce_window_max"), F("reduce_window_sum")], "max: to the first maximum of each window (JAX's ties); sum: linear", d("x", "reduce_window_max(x.reshape((1, 1, 6)), [1, 1, 2], [1, 1, 2], \"VALID\")\n        + reduce_window_sum(x.reshape((1, 1, 6)), [1, 1, 2], [1, 1, 2], \"VALID\")", "lax.reduce_window(x.reshape(1, 1, 6), -jnp.inf, lax.max, (1, 1, 2), (1, 1, 2), 'VALID') + lax.reduce_window(x.reshape(1, 1, 6), 0.0, lax.add, (1, 1, 2), (1, 1, 2), 'VALID')", "Array3<f64>")),
    ok("lax.conv_general_dilated", Fm::Lax, "`conv_general_dilated(x, w, strides, padding[, lhs_dilation, rhs_dilation[, (\"NHWC\", \"HWIO\", \"NHWC\")[, feature_group_count]]])` (1–3 spatial axes)", &[F("conv_general_dilated")], "bilinear; transposes as JAX's (the kernel flipped, axes swapped)", d("x", "conv_general_dilated(x.reshape((1, 2, 3)), [[[0.5, -1.0], [0.25, 2.0]]], [1], [(1, 1)], [1], [2])", "lax.conv_general_dilated(x.reshape(1, 2, 3), jnp.asarray([[[0.5, -1.0], [0.25, 2.0]]]), (1,), [(1, 1)], (1,), (2,))", "Array3<f64>")),
    ok("lax.conv", Fm::Lax, "`conv(x, w, strides, padding)` (NCHW / OIHW; `Padding::Same`, `\"VALID\"`, `[(lo, hi), ..]`)", &[F("conv")], "bilinear: conv(ẋ, w) + conv(x, ẇ)", d("x", "conv(x.reshape((1, 1, 6)), [[[1.0, -2.0, 0.5]]], [1], \"VALID\")", "lax.conv(x.reshape(1, 1, 6), jnp.asarray([[[1.0, -2.0, 0.5]]]), (1,), 'VALID')", "Array3<f64>")),
    no("jnp.convolve", Fm::Lax, "not in the vocabulary: `conv` with the kernel reversed (a correlation, as `lax.conv`) and padding `[(k - 1, k - 1)]` computes it"),
    ok("flax.linen.max_pool", Fm::Lax, "`max_pool(x, window, strides, padding)` (NCHW: the window over the spatial axes)", &[F("max_pool")], "to the first maximum of each window (JAX's ties)", d("x", "max_pool(x.reshape((1, 1, 6)), [2], [2], \"VALID\")", "lax.reduce_window(x.reshape(1, 1, 6), -jnp.inf, lax.max, (1, 1, 2), (1, 1, 2), 'VALID')", "Array3<f64>")),
    ok("flax.linen.avg_pool", Fm::Lax, "`avg_pool(x, window, strides, padding)` (sum / window size, padding counted as flax's default)", &[F("avg_pool")], "linear: the cotangent spread over each window", d("x", "avg_pool(x.reshape((1, 1, 6)), [3], [1], \"VALID\")", "lax.reduce_window(x.reshape(1, 1, 6), 0.0, lax.add, (1, 1, 3), (1, 1, 1), 'VALID') / 3.0", "Array3<f64>")),
    // ---- collectives -----------------------------------------------------------------
    ok("lax.psum", Fm::Collectives, "`psum(x, i)`", &[F("psum")], "linear: psum of the cotangent", Sample::Transform { attr: "vmap(NAME, axis_name = j)", params: "r: f64", ret: "f64", body: "psum(r, j) * r", call: "&i.x", jax: "jax.vmap(lambda r: lax.psum(r, 'j') * r, axis_name='j')(x)" }),
    ok("lax.pmean", Fm::Collectives, "`pmean(x, i)`", &[F("pmean")], "linear", Sample::Transform { attr: "pmap(NAME, axis_name = j)", params: "r: f64", ret: "f64", body: "pmean(r, j) - r", call: "&i.v", jax: "jax.vmap(lambda r: lax.pmean(r, 'j') - r, axis_name='j')(v)" }),
    ok("lax.pmax", Fm::Collectives, "`pmax(x, i)`", &[F("pmax")], "to the maximal elements", Sample::Transform { attr: "vmap(NAME, axis_name = j)", params: "r: f64", ret: "f64", body: "pmax(r, j)", call: "&i.x", jax: "jax.vmap(lambda r: lax.pmax(r, 'j'), axis_name='j')(x)" }),
    ok("lax.pmin", Fm::Collectives, "`pmin(x, i)`", &[F("pmin")], "to the minimal elements", Sample::Transform { attr: "vmap(NAME, axis_name = j)", params: "r: f64", ret: "f64", body: "pmin(r, j)", call: "&i.x", jax: "jax.vmap(lambda r: lax.pmin(r, 'j'), axis_name='j')(x)" }),
    ok("lax.all_gather", Fm::Collectives, "`all_gather(x, i[, axis])`", &[F("all_gather")], "linear: the cotangent's own slice, summed (psum_scatter)", Sample::Transform { attr: "vmap(NAME, axis_name = j)", params: "r: f64", ret: "Array1<f64>", body: "all_gather(r, j)", call: "&i.x", jax: "jax.vmap(lambda r: lax.all_gather(r, 'j'), axis_name='j')(x)" }),
    ok("lax.psum_scatter", Fm::Collectives, "`psum_scatter(x, i[, axis])`", &[F("psum_scatter")], "linear: all_gather of the cotangent", Sample::Transform { attr: "vmap(NAME, axis_name = j)", params: "r: ArrayView1<f64>", ret: "f64", body: "psum_scatter(r, j)", call: "i.aa.view()", jax: "jax.vmap(lambda r: lax.psum_scatter(r, 'j'), axis_name='j')(a)" }),
    ok("lax.ppermute", Fm::Collectives, "`ppermute(x, i, [(src, dst), …])`", &[F("ppermute")], "linear: the inverse permutation", Sample::Transform { attr: "vmap(NAME, axis_name = j)", params: "r: f64", ret: "f64", body: "ppermute(r, j, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0)])", call: "&i.x", jax: "jax.vmap(lambda r: lax.ppermute(r, 'j', [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0)]), axis_name='j')(x)" }),
    ok("lax.all_to_all", Fm::Collectives, "`all_to_all(x, i, split_axis, concat_axis)`", &[F("all_to_all")], "linear: the reverse all_to_all", Sample::Transform { attr: "vmap(NAME, axis_name = j)", params: "r: ArrayView1<f64>", ret: "Array1<f64>", body: "all_to_all(r, j, 0, 0)", call: "i.aa.view()", jax: "jax.vmap(lambda r: lax.all_to_all(r, 'j', 0, 0), axis_name='j')(a)" }),
    ok("lax.axis_index", Fm::Collectives, "`axis_index(i)` (`i64`)", &[F("axis_index")], "none (an integer)", Sample::Transform { attr: "vmap(NAME, axis_name = j)", params: "r: f64", ret: "f64", body: "r + axis_index(j) as f64", call: "&i.x", jax: "jax.vmap(lambda r: r + lax.axis_index('j'), axis_name='j')(x)" }),
    ok("lax.axis_size", Fm::Collectives, "`axis_size(i)` (`i64`)", &[F("axis_size")], "none (an integer)", Sample::Transform { attr: "pmap(NAME, axis_name = j)", params: "r: f64", ret: "f64", body: "r * axis_size(j) as f64", call: "&i.v", jax: "jax.vmap(lambda r: r * lax.axis_size('j'), axis_name='j')(v)" }),
    // ---- transforms ------------------------------------------------------------------
    ok("jax.jit", Fm::Transforms, "`#[jit]`, `#[jit(name)]`", &[T("jit")], "the function's own: `jit` composes with every transform", Sample::Transform { attr: "jit(NAME)", params: "x: ArrayView1<f64>", ret: "Array1<f64>", body: "x.sin() * 2.0", call: "&i.x", jax: "jax.jit(lambda x: jnp.sin(x) * 2.0)(x)" }),
    ok("jax.grad", Fm::Transforms, "`#[grad(name, wrt = x)]`", &[T("grad")], "reverse mode (JVP, linearize, transpose); `grad` of `grad` composes", Sample::Transform { attr: "grad(NAME, wrt = x)", params: "x: ArrayView1<f64>, y: ArrayView1<f64>", ret: "f64", body: "(x.sin() * y).sum()", call: "i.xa.view(), i.ya.view()", jax: "jax.grad(lambda x, y: jnp.sum(jnp.sin(x) * y))(x, y)" }),
    ok("jax.value_and_grad", Fm::Transforms, "`#[value_and_grad(name, wrt = x)]`", &[T("value_and_grad")], "reverse mode", Sample::Transform { attr: "value_and_grad(NAME, wrt = x)", params: "x: ArrayView1<f64>", ret: "f64", body: "(x.exp() * x).sum()", call: "&i.x", jax: "jax.value_and_grad(lambda x: jnp.sum(jnp.exp(x) * x))(x)" }),
    ok("jax.jvp", Fm::Transforms, "`#[jvp(name, wrt = x)]`: `name(x, t_x)`", &[T("jvp")], "forward mode", Sample::Transform { attr: "jvp(NAME, wrt = x)", params: "x: ArrayView1<f64>", ret: "Array1<f64>", body: "x.sin() * x.sum()", call: "i.xa.view(), i.ya.view()", jax: "jax.jvp(lambda x: jnp.sin(x) * jnp.sum(x), (x,), (y,))" }),
    ok("jax.vjp", Fm::Transforms, "`#[vjp(name, wrt = x)]`: `name(x, cotangent)`", &[T("vjp")], "reverse mode", Sample::Transform { attr: "vjp(NAME, wrt = x)", params: "x: ArrayView1<f64>", ret: "Array1<f64>", body: "x.sin() * x.sum()", call: "i.xa.view(), i.ya.view()", jax: "(lambda p: (p[0], p[1](y)[0]))(jax.vjp(lambda x: jnp.sin(x) * jnp.sum(x), x))" }),
    ok("jax.vmap", Fm::Transforms, "`#[vmap(name, in_axes = ..)]`", &[T("vmap")], "batched rules, per op", Sample::Transform { attr: "vmap(NAME, in_axes = (0, None))", params: "r: ArrayView1<f64>, v: ArrayView1<f64>", ret: "f64", body: "(r.sin() * v).sum()", call: "i.ma.view(), i.va.view()", jax: "jax.vmap(lambda r, v: jnp.sum(jnp.sin(r) * v), in_axes=(0, None))(m, v)" }),
    ok("jax.pmap", Fm::Transforms, "`#[pmap(name, axis_name = i)]` (CPU devices: `oxla::set_cpu_device_count`)", &[T("pmap")], "batched rules; collectives over the devices", Sample::Transform { attr: "pmap(NAME, axis_name = i)", params: "r: ArrayView1<f64>", ret: "f64", body: "psum(r.sum(), i) * r.sum()", call: "i.na.view()", jax: "jax.vmap(lambda r: lax.psum(jnp.sum(r), 'i') * jnp.sum(r), axis_name='i')(n)" }),
    ok("jax.jacfwd", Fm::Transforms, "`#[jacfwd(name, wrt = x)]`", &[T("jacfwd")], "forward mode, one column per input element", Sample::Transform { attr: "jacfwd(NAME, wrt = x)", params: "x: ArrayView1<f64>", ret: "Array1<f64>", body: "x.sin() * x.sum()", call: "&i.x", jax: "jax.jacfwd(lambda x: jnp.sin(x) * jnp.sum(x))(x)" }),
    ok("jax.jacrev", Fm::Transforms, "`#[jacrev(name, wrt = x)]`", &[T("jacrev")], "reverse mode, one row per output element", Sample::Transform { attr: "jacrev(NAME, wrt = x)", params: "x: ArrayView1<f64>", ret: "Array1<f64>", body: "x.exp() * x.sum()", call: "&i.x", jax: "jax.jacrev(lambda x: jnp.exp(x) * jnp.sum(x))(x)" }),
    ok("jax.hessian", Fm::Transforms, "`#[hessian(name, wrt = x)]`", &[T("hessian")], "forward over reverse", Sample::Transform { attr: "hessian(NAME, wrt = x)", params: "x: ArrayView1<f64>", ret: "f64", body: "(x.sin() * x).sum() * x.sum()", call: "&i.x", jax: "jax.hessian(lambda x: jnp.sum(jnp.sin(x) * x) * jnp.sum(x))(x)" }),
    no("jax.linearize", Fm::Transforms, "not a transform here: `#[jvp]` gives the tangent at a point"),
    no("jax.make_jaxpr", Fm::Transforms, "no tracing at run time: each generated function's IR text is the constant `NAME_IR` (or `OXLA_DUMP=ir`)"),
    no("jax.numpy.vectorize", Fm::Transforms, "write `#[vmap]`"),
    no("jax.tree_util.tree_map", Fm::Transforms, "host-side: a `#[derive(oxla::Tree)]` struct's `map`, `zip_map`, `axpy`"),
    no("jax.device_put", Fm::Transforms, "host-side: `oxla::device_put(array, device)`"),
    // ---- random ----------------------------------------------------------------------
    no("jax.random.PRNGKey", Fm::Random, "host-side in oxla: `oxla::random::key(seed)` (JAX's threefry bits)"),
    no("jax.random.key", Fm::Random, "host-side in oxla: `oxla::random::key(seed)`"),
    no("jax.random.split", Fm::Random, "host-side in oxla: `oxla::random::split(key, n)`"),
    no("jax.random.fold_in", Fm::Random, "host-side in oxla: `oxla::random::fold_in(key, data)`"),
    no("jax.random.uniform", Fm::Random, "host-side in oxla: `oxla::random::uniform(key, shape, lo, hi)`; call it outside the annotated function and pass the array in"),
    no("jax.random.normal", Fm::Random, "host-side in oxla: `oxla::random::normal(key, shape)`; call it outside the annotated function and pass the array in"),
    no("jax.random.truncated_normal", Fm::Random, "host-side in oxla: `oxla::random::truncated_normal(..)`"),
    no("jax.random.bernoulli", Fm::Random, "host-side in oxla: `oxla::random::bernoulli(key, p, shape)`"),
    no("jax.random.categorical", Fm::Random, "host-side in oxla: `oxla::random::categorical(key, logits, axis)`"),
    no("jax.random.gumbel", Fm::Random, "host-side in oxla: `oxla::random::gumbel(key, shape)`"),
    no("jax.random.permutation", Fm::Random, "host-side in oxla: `oxla::random::permutation(key, n)`"),
    no("jax.random.randint", Fm::Random, HOST_RANDOM),
    no("jax.random.choice", Fm::Random, HOST_RANDOM),
    // ---- other -----------------------------------------------------------------------
    no("jnp.complex64", Fm::Other, COMPLEX),
    no("jnp.real", Fm::Other, COMPLEX),
    no("jnp.imag", Fm::Other, COMPLEX),
    no("jnp.conj", Fm::Other, COMPLEX),
    no("jnp.angle", Fm::Other, COMPLEX),
    no("jnp.fft.fft", Fm::Other, COMPLEX),
    no("jnp.fft.rfft", Fm::Other, COMPLEX),
    no("jnp.histogram", Fm::Other, "not in the vocabulary yet"),
    no("jnp.interp", Fm::Other, "not in the vocabulary yet"),
];
