//! The generator of the JAX name table's files, from `jax_names::ROWS`:
//! `docs/JAX_NUMPY.md` (the page), `tests/suite/jax_numpy.rs` (every
//! supported row compiled and compared with JAX) and
//! `tests/reference/jax_numpy_jax.py` (the same samples in JAX; its output
//! is committed beside it as `jax_numpy_jax.txt`).
//!
//! `OXLA_BLESS=1 cargo test -p oxla-lower jax_table` rewrites the files;
//! without it the test fails when a committed file differs, so the page and
//! the tests cannot drift from the rows. After blessing, rerun the script
//! (`python3 tests/reference/jax_numpy_jax.py > tests/reference/jax_numpy_jax.txt`).
//! The rows' own checks (every spelling names the vocabulary, every
//! vocabulary name has a row) are in `tests` below.

use super::jax_names::{Family, Grad, JaxName, Sample, Status, ROWS};
use std::fmt::Write;

/// A sample's inputs: name, Rust parameter type, the argument passed, and
/// the value built in the reference script (the Rust test reads the
/// values the script printed, so they are defined once). Fixed-size arrays
/// give the samples static sizes (literal indices, reshapes, diagonals).
const INPUTS: &[(&str, &str, &str, &str)] = &[
    (
        "x",
        "&[f64; 6]",
        "&i.x",
        "jnp.asarray(0.15 + 0.12 * np.arange(6.0))",
    ),
    (
        "y",
        "&[f64; 6]",
        "&i.y",
        "jnp.asarray(1.3 - 0.17 * np.arange(6.0))",
    ),
    (
        "m",
        "&[[f64; 4]; 3]",
        "&i.m",
        "jnp.asarray(np.sin(0.7 * np.arange(12.0) + 0.3).reshape(3, 4))",
    ),
    (
        "a",
        "&[[f64; 3]; 3]",
        "&i.a",
        "jnp.asarray(0.3 * np.cos(0.9 * np.arange(9.0)).reshape(3, 3) + 2.0 * np.eye(3))",
    ),
    (
        "n",
        "&[[f64; 2]; 4]",
        "&i.n",
        "jnp.asarray(np.cos(0.4 * np.arange(8.0) + 0.2).reshape(4, 2))",
    ),
    (
        "v",
        "&[f64; 4]",
        "&i.v",
        "jnp.asarray(np.sin(1.1 * np.arange(4.0)) + 0.5)",
    ),
    (
        "idx",
        "ArrayView1<i64>",
        "i.idx.view()",
        "jnp.asarray([2, 0, 3])",
    ),
    ("i", "usize", "i.i", "2"),
    ("k", "i64", "i.k", "2"),
    ("w", "f64", "i.w", "0.7"),
];

fn input(name: &str) -> (&'static str, &'static str, &'static str, &'static str) {
    *INPUTS
        .iter()
        .find(|(n, ..)| *n == name)
        .unwrap_or_else(|| panic!("no input `{name}`"))
}

fn arg_names(args: &str) -> Vec<&str> {
    args.split(',').map(str::trim).collect()
}

/// The identifier of a row: its JAX name in snake case, `py_` before a
/// name outside the `jnp`/`lax`/`jax` namespaces (`x[i]`, `len`).
pub(super) fn key(jax: &str) -> String {
    let mut out = String::new();
    for c in jax.chars() {
        let piece = match c {
            ':' => "s".to_string(),
            '@' => "matmul".to_string(),
            c if c.is_ascii_alphanumeric() => c.to_ascii_lowercase().to_string(),
            _ => "_".to_string(),
        };
        if piece == "_" && (out.is_empty() || out.ends_with('_')) {
            continue;
        }
        out.push_str(&piece);
    }
    let out = out.trim_end_matches('_').to_string();
    if ["jnp_", "lax_", "jax_", "flax_"]
        .iter()
        .any(|p| out.starts_with(p))
    {
        out
    } else {
        format!("py_{out}")
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// `docs/JAX_NUMPY.md`.
pub(super) fn page() -> String {
    let supported = ROWS
        .iter()
        .filter(|r| matches!(r.status, Status::Supported { .. }))
        .count();
    let mut out = String::new();
    out.push_str("# jax.numpy and lax in oxla\n\n");
    out.push_str(
        "<!-- Generated from `macros/lower/src/lower/vocab/jax_names.rs` by \
         `OXLA_BLESS=1 cargo test -p oxla-lower jax_table`: edit the rows there. -->\n\n",
    );
    let _ = writeln!(
        out,
        "The functions a JAX user reaches for, and how each is written inside an oxla function \
         (`#[grad]`, `#[jit]`, `#[vmap]`, … or an `#[oxla::func]` helper): {} names, {supported} \
         supported, {} not (with the reason, and what to write instead where there is something).\n",
        ROWS.len(),
        ROWS.len() - supported
    );
    out.push_str(
        "Every supported row is compiled by the test `tests/suite/jax_numpy.rs` on fixed inputs \
         and compared with JAX's value (`tests/reference/jax_numpy_jax.py`, whose output is \
         committed); where the row is differentiable, the gradient of the sum of its result is \
         compared with `jax.grad` and with central differences. This page, that test and that \
         script are generated from one list in the code, so a row cannot name a function the \
         vocabulary does not have, and a vocabulary function cannot be missing here.\n\n",
    );
    out.push_str(
        "Conventions: `x`, `a`, `b` are arrays (ndarray views, arrays or fixed-size arrays), \
         `Axis(k)` is `ndarray::Axis`, `ẋ` is the tangent of `x`. The \"derivative\" column \
         gives the forward-mode rule; reverse mode is its transpose (\"linear\": the tangent \
         goes through the same function; \"none\": no tangent flows, as for integer \
         results). Each op also has a batching rule, so the supported rows work under \
         `#[vmap]`.\n",
    );
    for family in Family::ALL {
        let rows: Vec<&JaxName> = ROWS.iter().filter(|r| r.family == family).collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n## {}\n", family.title());
        out.push_str("| JAX | oxla | derivative / why not |\n|---|---|---|\n");
        for r in rows {
            match r.status {
                Status::Supported {
                    spelling,
                    derivative,
                    ..
                } => {
                    let _ = writeln!(
                        out,
                        "| `{}` | {} | {} |",
                        cell(r.jax),
                        cell(spelling),
                        cell(derivative)
                    );
                }
                Status::Unsupported(why) => {
                    let _ = writeln!(out, "| `{}` | not supported | {} |", cell(r.jax), cell(why));
                }
            }
        }
    }
    out
}

/// The Rust expression that flattens a result of type `out` to `Vec<f64>`.
fn indent(body: &str) -> String {
    body.lines()
        .map(|l| format!("    {l}\n"))
        .collect::<String>()
}

fn scalar(ty: &str) -> bool {
    matches!(ty, "f64" | "i64" | "i32" | "bool")
}

/// `tests/suite/jax_numpy.rs`.
pub(super) fn rust_test() -> String {
    let mut out = String::new();
    out.push_str(RUST_HEADER);
    for family in Family::ALL {
        let rows: Vec<&JaxName> = ROWS
            .iter()
            .filter(|r| r.family == family && matches!(r.status, Status::Supported { .. }))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "\n// ---- {} {}\n",
            family.title(),
            "-".repeat(70usize.saturating_sub(family.title().len()))
        );
        let mut calls = String::new();
        for r in rows {
            let Status::Supported { sample, .. } = r.status else {
                continue;
            };
            let k = key(r.jax);
            let _ = writeln!(out, "// {}", r.jax);
            match sample {
                Sample::Value {
                    args,
                    oxla,
                    out: ty,
                    grad,
                    ..
                } => {
                    let names = arg_names(args);
                    let params: Vec<String> = names
                        .iter()
                        .map(|n| format!("{n}: {}", input(n).1))
                        .collect();
                    let params = params.join(", ");
                    let _ = write!(
                        out,
                        "#[oxla::func]\nfn {k}({params}) -> {ty} {{\n{}}}\n\n",
                        indent(oxla)
                    );
                    let call_args: Vec<&str> = names.iter().map(|n| input(n).2).collect();
                    let _ = writeln!(
                        calls,
                        "    c.value({:?}, {:?}, {k}({}).flat());",
                        k,
                        r.jax,
                        call_args.join(", ")
                    );
                    if grad != Grad::None {
                        let sum = if scalar(ty) {
                            format!("{k}({})", names.join(", "))
                        } else {
                            format!("{k}({}).sum()", names.join(", "))
                        };
                        let _ = write!(
                            out,
                            "#[oxla::grad({k}_grad, wrt = {})]\nfn {k}_sum({params}) -> f64 {{\n    {sum}\n}}\n\n",
                            names[0]
                        );
                        let mut perturbed: Vec<&str> = call_args.clone();
                        perturbed[0] = "p";
                        let fd = if grad == Grad::Checked {
                            format!(
                                "Some(central(|p| {k}_sum({}), {}))",
                                perturbed.join(", "),
                                call_args[0]
                            )
                        } else {
                            "None".to_string()
                        };
                        let _ = writeln!(
                            calls,
                            "    c.grad({:?}, {k}_grad({}).flat(), {fd});",
                            k,
                            call_args.join(", ")
                        );
                    }
                }
                Sample::Transform {
                    attr,
                    params,
                    ret,
                    body,
                    call,
                    ..
                } => {
                    let _ = write!(
                        out,
                        "#[oxla::{}]\nfn {k}_base({params}) -> {ret} {{\n{}}}\n\n",
                        attr.replace("NAME", &k),
                        indent(body)
                    );
                    let _ = writeln!(
                        calls,
                        "    c.value({:?}, {:?}, {k}({call}).flat());",
                        k, r.jax
                    );
                }
                Sample::Items { items, call, .. } => {
                    let _ = writeln!(out, "{}", items.replace("NAME", &k));
                    let _ = writeln!(
                        calls,
                        "    c.value({:?}, {:?}, {k}({call}).flat());",
                        k, r.jax
                    );
                }
            }
        }
        let _ = write!(out, "#[test]\nfn {}_rows_match_jax() {{\n", family.ident());
        if matches!(family, Family::Transforms | Family::Collectives) {
            out.push_str("    oxla::set_cpu_device_count(4);\n");
        }
        let _ = write!(
            out,
            "    let i = inputs();\n    let mut c = Checks::default();\n{calls}    c.finish();\n}}\n"
        );
    }
    out
}

const RUST_HEADER: &str = r#"//! Every supported row of the jax.numpy / lax name table
//! (`docs/JAX_NUMPY.md`), compiled and compared with JAX: each row's sample
//! is an `#[oxla::func]` evaluated on the reference script's inputs against
//! `tests/reference/jax_numpy_jax.txt`; where the row is differentiable, the
//! `#[grad]` of the sum of its result against `jax.grad` and against central
//! differences. Transforms and collectives are their attribute on a small
//! function.
//!
//! Generated from `macros/lower/src/lower/vocab/jax_names.rs` by
//! `OXLA_BLESS=1 cargo test -p oxla-lower jax_table`: edit the rows there.

use oxla::ndarray::{
    s, Array1, Array2, Array3, ArrayBase, ArrayD, ArrayView1, Axis, Data, Dimension, NewAxis, Slice,
};

fn jax(name: &str) -> ArrayD<f64> {
    let text = include_str!("../reference/jax_numpy_jax.txt");
    crate::reference::reference_array(text, "jax_numpy_jax.txt", name)
}

/// The reference script's inputs: fixed-size arrays (the samples'
/// parameters), the same as ndarray arrays (the transforms'), and scalars.
struct Inputs {
    x: [f64; 6],
    y: [f64; 6],
    m: [[f64; 4]; 3],
    a: [[f64; 3]; 3],
    n: [[f64; 2]; 4],
    v: [f64; 4],
    xa: Array1<f64>,
    ya: Array1<f64>,
    ma: Array2<f64>,
    aa: Array2<f64>,
    na: Array2<f64>,
    va: Array1<f64>,
    idx: Array1<i64>,
    i: usize,
    k: i64,
    w: f64,
}

fn vector<const N: usize>(name: &str) -> [f64; N] {
    let v = jax(name);
    std::array::from_fn(|q| v.as_slice().unwrap()[q])
}

fn matrix<const R: usize, const C: usize>(name: &str) -> [[f64; C]; R] {
    let v = jax(name);
    std::array::from_fn(|r| std::array::from_fn(|c| v[[r, c]]))
}

fn number(name: &str) -> f64 {
    jax(name).iter().next().copied().unwrap()
}

fn inputs() -> Inputs {
    let array = |n: &str| jax(n).into_dimensionality().unwrap();
    let table = |n: &str| jax(n).into_dimensionality().unwrap();
    Inputs {
        x: vector("input.x"),
        y: vector("input.y"),
        m: matrix("input.m"),
        a: matrix("input.a"),
        n: matrix("input.n"),
        v: vector("input.v"),
        xa: array("input.x"),
        ya: array("input.y"),
        ma: table("input.m"),
        aa: table("input.a"),
        na: table("input.n"),
        va: array("input.v"),
        idx: jax("input.idx").iter().map(|&e| e as i64).collect(),
        i: number("input.i") as usize,
        k: number("input.k") as i64,
        w: number("input.w"),
    }
}

/// A result as the reference file holds it: its elements, row-major, as
/// `f64` (integers and booleans converted as the script converts them).
trait Flat {
    fn flat(&self) -> Vec<f64>;
}

impl Flat for f64 {
    fn flat(&self) -> Vec<f64> {
        vec![*self]
    }
}

impl Flat for i64 {
    fn flat(&self) -> Vec<f64> {
        vec![*self as f64]
    }
}

impl Flat for i32 {
    fn flat(&self) -> Vec<f64> {
        vec![*self as f64]
    }
}

impl Flat for bool {
    fn flat(&self) -> Vec<f64> {
        vec![if *self { 1.0 } else { 0.0 }]
    }
}

impl<T: Flat, const N: usize> Flat for [T; N] {
    fn flat(&self) -> Vec<f64> {
        self.iter().flat_map(Flat::flat).collect()
    }
}

impl<T: Flat> Flat for Vec<T> {
    fn flat(&self) -> Vec<f64> {
        self.iter().flat_map(Flat::flat).collect()
    }
}

impl<S: Data, D: Dimension> Flat for ArrayBase<S, D>
where
    S::Elem: Flat,
{
    fn flat(&self) -> Vec<f64> {
        self.iter().flat_map(Flat::flat).collect()
    }
}

impl<A: Flat, B: Flat> Flat for (A, B) {
    fn flat(&self) -> Vec<f64> {
        let mut v = self.0.flat();
        v.extend(self.1.flat());
        v
    }
}

/// An input that central differences perturb, one element at a time.
trait Perturb: Clone {
    fn count(&self) -> usize;
    fn bump(&mut self, q: usize, h: f64);
}

impl<const N: usize> Perturb for [f64; N] {
    fn count(&self) -> usize {
        N
    }
    fn bump(&mut self, q: usize, h: f64) {
        self[q] += h;
    }
}

impl<const R: usize, const C: usize> Perturb for [[f64; C]; R] {
    fn count(&self) -> usize {
        R * C
    }
    fn bump(&mut self, q: usize, h: f64) {
        self[q / C][q % C] += h;
    }
}

/// Central differences of `f` at `x`.
fn central<X: Perturb>(f: impl Fn(&X) -> f64, x: &X) -> Vec<f64> {
    let h = 1e-6;
    (0..x.count())
        .map(|q| {
            let (mut p, mut m) = (x.clone(), x.clone());
            p.bump(q, h);
            m.bump(q, -h);
            (f(&p) - f(&m)) / (2.0 * h)
        })
        .collect()
}

/// The mismatches of one family's rows, reported together.
#[derive(Default)]
struct Checks {
    failures: Vec<String>,
    compared: usize,
}

impl Checks {
    fn close(&mut self, what: &str, got: &[f64], want: &[f64], rtol: f64) {
        self.compared += 1;
        if got.len() != want.len() {
            self.failures
                .push(format!("{what}: {} elements, expected {}", got.len(), want.len()));
            return;
        }
        for (q, (g, w)) in got.iter().zip(want).enumerate() {
            let same = (g.is_nan() && w.is_nan()) || (g - w).abs() <= rtol * (1.0 + w.abs());
            if !same {
                self.failures.push(format!("{what}[{q}]: oxla {g:e}, expected {w:e}"));
                return;
            }
        }
    }

    /// The value of row `key` (`jax`, its JAX name) against JAX's.
    fn value(&mut self, key: &str, jax_name: &str, got: Vec<f64>) {
        let want = jax(key);
        self.close(&format!("{jax_name} value"), &got, want.as_slice().unwrap(), 1e-10);
    }

    /// The gradient of the sum of row `key` against `jax.grad`'s and
    /// against central differences `fd` where given.
    fn grad(&mut self, key: &str, got: Vec<f64>, fd: Option<Vec<f64>>) {
        let want = jax(&format!("{key}.grad"));
        self.close(&format!("{key} grad"), &got, want.as_slice().unwrap(), 1e-9);
        if let Some(fd) = fd {
            self.close(&format!("{key} grad vs central differences"), &got, &fd, 1e-5);
        }
    }

    fn finish(self) {
        assert!(self.compared > 0, "nothing compared");
        assert!(self.failures.is_empty(), "{}", self.failures.join("\n"));
    }
}
"#;

/// `tests/reference/jax_numpy_jax.py`.
pub(super) fn python() -> String {
    let mut out = String::new();
    out.push_str(PY_HEADER);
    for (name, _, _, value) in INPUTS {
        let _ = writeln!(out, "    {name} = {value}");
    }
    for (name, ..) in INPUTS {
        let _ = writeln!(out, "    emit(\"input.{name}\", {name})");
    }
    for r in ROWS {
        let Status::Supported { sample, .. } = r.status else {
            continue;
        };
        let k = key(r.jax);
        let _ = writeln!(out, "    # {}", r.jax);
        match sample {
            Sample::Value {
                args, jax, grad, ..
            } => {
                let _ = writeln!(out, "    emit(\"{k}\", {jax})");
                if grad != Grad::None {
                    let _ = writeln!(
                        out,
                        "    emit(\"{k}.grad\", jax.grad(lambda {args}: jnp.sum(jnp.asarray({jax})))({args}))"
                    );
                }
            }
            Sample::Transform { jax, .. } => {
                let _ = writeln!(out, "    emit(\"{k}\", {jax})");
            }
            Sample::Items { py, jax, .. } => {
                for line in py.replace("NAME", &k).lines() {
                    let _ = writeln!(out, "    {line}");
                }
                let _ = writeln!(out, "    emit(\"{k}\", {})", jax.replace("NAME", &k));
            }
        }
    }
    out.push_str("\n\nif __name__ == \"__main__\":\n    main()\n");
    out
}

const PY_HEADER: &str = r##""""JAX's values for `tests/suite/jax_numpy.rs`: every supported row of
the jax.numpy / lax name table (`docs/JAX_NUMPY.md`) evaluated on fixed
inputs, and the gradient of the sum of each differentiable one.

Generated from `macros/lower/src/lower/vocab/jax_names.rs` by
`OXLA_BLESS=1 cargo test -p oxla-lower jax_table`: edit the rows there, then

    python3 tests/reference/jax_numpy_jax.py > tests/reference/jax_numpy_jax.txt

Line format: `name dims: v v ...` (float64 reprs, row-major; dims `-` for a
scalar); a tuple's parts are joined, booleans and integers written as floats.
"""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import jax.scipy.special  # noqa: E402,F401
import jax.scipy.linalg  # noqa: E402,F401
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402


def emit(name, a):
    if isinstance(a, tuple):
        a = np.concatenate([np.asarray(p, dtype=np.float64).ravel() for p in a])
    a = np.asarray(a, dtype=np.float64)
    dims = ",".join(map(str, a.shape)) or "-"
    print(f"{name} {dims}: " + " ".join(repr(float(v)) for v in a.ravel()))


def main():
    print(f"# JAX {jax.__version__}")
"##;

fn repo_file(path: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

/// The generated files are the committed ones (`OXLA_BLESS=1` writes them).
#[test]
fn jax_table_files_are_up_to_date() {
    let files = [
        ("docs/JAX_NUMPY.md", page()),
        ("tests/suite/jax_numpy.rs", rust_test()),
        ("tests/reference/jax_numpy_jax.py", python()),
    ];
    let bless = std::env::var("OXLA_BLESS").is_ok_and(|v| v == "1");
    let mut stale = Vec::new();
    for (path, text) in files {
        let file = repo_file(path);
        if bless {
            std::fs::write(&file, &text).unwrap();
        } else if std::fs::read_to_string(&file).ok().as_deref() != Some(text.as_str()) {
            stale.push(path);
        }
    }
    assert!(
        stale.is_empty(),
        "{stale:?} differ from the rows of jax_names.rs: run `OXLA_BLESS=1 cargo test -p oxla-lower jax_table`, then the reference script"
    );
}

mod tests {
    use super::super::jax_names::Term;
    use super::*;

    /// A row's vocabulary terms, and the sample text they must appear in.
    fn terms_and_text(r: &JaxName) -> Option<(&'static [Term], String)> {
        match r.status {
            Status::Supported { uses, sample, .. } => Some((
                uses,
                match sample {
                    Sample::Value { oxla, .. } => oxla.to_string(),
                    Sample::Transform { attr, body, .. } => format!("{attr} {body}"),
                    Sample::Items { items, .. } => items.to_string(),
                },
            )),
            Status::Unsupported(_) => None,
        }
    }

    #[test]
    fn jax_table_has_150_names_each_once() {
        assert!(ROWS.len() >= 150, "{} rows", ROWS.len());
        let mut keys: Vec<String> = ROWS.iter().map(|r| key(r.jax)).collect();
        keys.sort();
        let before = keys.len();
        keys.dedup();
        assert_eq!(before, keys.len(), "two rows share a JAX name's key");
        for (name, ..) in INPUTS {
            assert!(!keys.iter().any(|k| k == name), "{name}");
        }
    }

    /// Every term of a supported row is vocabulary that exists, and its
    /// sample uses it, so a renamed or removed vocabulary name fails here.
    #[test]
    fn jax_table_spellings_name_the_vocabulary() {
        let functions = crate::lower::vocab::functions();
        let methods = crate::lower::vocab::methods();
        let mut wrong = Vec::new();
        for r in ROWS {
            let Some((uses, text)) = terms_and_text(r) else {
                continue;
            };
            assert!(!uses.is_empty(), "{}: no terms", r.jax);
            for t in uses {
                let (known, shown) = match *t {
                    Term::F(n) => (functions.iter().any(|(f, _)| *f == n), format!("{n}(")),
                    Term::M(n) => (methods.contains(&n), format!(".{n}(")),
                    Term::T(n) => (
                        crate::parse::attr::TransformKind::from_name(n).is_some(),
                        format!("{n}("),
                    ),
                    Term::S(s) => (true, s.to_string()),
                };
                if !known {
                    wrong.push(format!("{}: {t:?} is not in the vocabulary", r.jax));
                }
                let shown_macro = shown.replace('(', "![");
                if !(text.contains(&shown) || text.contains(&shown_macro)) {
                    wrong.push(format!("{}: the sample does not use {t:?}", r.jax));
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// Every function and method of the vocabulary is some row's spelling.
    #[test]
    fn jax_table_names_every_vocabulary_function_and_method() {
        let used: Vec<Term> = ROWS
            .iter()
            .filter_map(terms_and_text)
            .flat_map(|(u, _)| u.iter().copied())
            .collect();
        let missing_f: Vec<&str> = crate::lower::vocab::functions()
            .into_iter()
            .map(|(n, _)| n)
            .filter(|n| !used.iter().any(|t| matches!(t, Term::F(f) if f == n)))
            .collect();
        let missing_m: Vec<&str> = crate::lower::vocab::methods()
            .into_iter()
            .filter(|n| !used.iter().any(|t| matches!(t, Term::M(m) if m == n)))
            .collect();
        let missing_t: Vec<&str> = crate::parse::attr::TransformKind::ALL
            .into_iter()
            .map(|k| k.name())
            .filter(|n| !used.iter().any(|t| matches!(t, Term::T(m) if m == n)))
            .collect();
        assert!(
            missing_f.is_empty() && missing_m.is_empty() && missing_t.is_empty(),
            "no row of jax_names.rs names the functions {missing_f:?}, the methods {missing_m:?}, the transforms {missing_t:?}"
        );
    }
}
