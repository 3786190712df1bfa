//! A fuzz test of the whole expansion: thousands of random functions,
//! their bodies drawn from the supported vocabulary and from Rust oxla does
//! not support (loops, macros, closures, odd literals and types), under
//! random attribute stacks. Every expansion must finish without a panic and
//! without an "internal error": a function is either expanded or rejected
//! with ordinary spanned errors, and after an error every function emitted
//! has the stub body. Deterministic (a fixed seed).

use crate::codegen::CodegenOptions;
use crate::expand_attribute_with;
use crate::parse::attr::TransformKind;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

const LITERALS: &[&str] = &[
    "0.0",
    "1.0",
    "2.5",
    "1e-3",
    "3",
    "0",
    "1e39",
    "1e309",
    "3.4e38",
    "65520.0",
    "1f32",
    "2f64",
    "7u8",
    "1_000",
    "0x10",
    "1e-400",
    "'c'",
    "\"s\"",
    "true",
    "b'a'",
    "4294967296",
    "340282366920938463463374607431768211456",
];

const UNARY: &[&str] = &[
    "exp",
    "ln",
    "sin",
    "cos",
    "tanh",
    "sqrt",
    "abs",
    "square",
    "recip",
    "ln_1p",
    "floor",
    "ceil",
    "round",
    "trunc",
    "signum",
    "exp_m1",
    "cbrt",
    "sinh",
    "log",
    "to_string",
    "len",
    "sum",
    "mean",
    "t",
];

const FUNCTIONS: &[&str] = &[
    "sum",
    "mean",
    "sigmoid",
    "relu",
    "softplus",
    "log1p",
    "expm1",
    "erf",
    "sign",
    "stop_gradient",
    "f64::exp",
    "f32::exp",
    "f64::sqrt",
    "f64::cbrt",
    "std::f64::consts::PI",
    "zeros_like",
    "ones_like",
    "logsumexp",
    "foo",
    "oxla::sum",
    "Vec::new",
];

const POWI: &[&str] = &[
    "0",
    "1",
    "2",
    "-1",
    "-2147483648",
    "-2147483647",
    "2147483647",
    "2147483648",
    "n",
    "2.0",
];

struct Gen {
    rng: Rng,
    names: Vec<String>,
    /// Draw from everything (else only from the supported vocabulary).
    wild: bool,
}

/// `all` when wild, else its first `supported` entries (each list puts the
/// supported entries first).
fn choose<'a>(all: &'a [&'a str], supported: usize, wild: bool) -> &'a [&'a str] {
    if wild {
        all
    } else {
        &all[..supported]
    }
}

impl Gen {
    fn name(&mut self) -> String {
        if self.rng.chance(3) {
            return self
                .rng
                .pick(&["A", "consts::G", "Self::K", "(x.len() as f64)"])
                .to_string();
        }
        if self.names.is_empty() || (self.wild && self.rng.chance(5)) {
            if !self.wild {
                return "1.5".to_string();
            }
            return self
                .rng
                .pick(&["zz", "self", "Self", "_", "crate::x"])
                .to_string();
        }
        let i = self.rng.below(self.names.len());
        self.names[i].clone()
    }

    /// A statement that assigns `m` (a `let mut` variable): an assignment,
    /// an `if`/`else if` that assigns, a `match` that assigns, or an early
    /// `return` inside an `if`.
    fn control_stmt(&mut self, m: &str, e: String) -> String {
        let op = self.rng.pick(&["=", "+=", "-=", "*=", "/="]);
        let c = format!(
            "{} {} {}",
            self.expr(1),
            self.rng.pick(&["<", ">", "=="]),
            self.expr(1)
        );
        match self.rng.below(12) {
            0 | 1 => format!("{m} {op} {e};"),
            6 | 9 | 10 => {
                let k = self.rng.pick(&["0..3", "0..n", "1..=n", "0..x.len()", "0..y.len()", "oxla::checkpoint(0..n)"]);
                format!("for i in {k} {{ {m} {op} {e} * (i as f64); }}")
            }
            7 => format!("while {m} < 10.0 {{ {m} {op} {e}; }}"),
            11 => format!("while (n as f64) < {} {{ {m} {op} {e}; }}", self.expr(1)),
            8 => format!("for _ in 0..2 {{ for j in 0..=1 {{ if {c} {{ {m} {op} {e}; }} }} }}"),
            2 => format!("if {c} {{ {m} {op} {e}; }}"),
            3 => format!(
                "if {c} {{ {m} {op} {e}; }} else if {} < 0.0 {{ {m} = {}; }} else {{ let t = {m}; {m} = t * 2.0; }}",
                self.expr(1),
                self.expr(2)
            ),
            4 => {
                let k = self.rng.pick(&["n", "x.len()", "y.len()", "x", "3"]);
                format!(
                    "match {k} {{ 0 => {m} {op} {e}, 1 | 2 => {{ {m} = {}; }} 3..=5 => {{}} _ => {m} *= 2.0 }}",
                    self.expr(1)
                )
            }
            _ => format!("if {c} {{ return {m}; }}"),
        }
    }

    /// Assignments and control flow that are errors (or odd), for wild
    /// cases.
    fn wild_assignment(&mut self, name: &str) -> String {
        let e = self.expr(2);
        let forms = [
            format!("{name} = {e};"),
            format!("x = {e};"),
            format!("x[0] = {e};"),
            format!("{name} %= {e};"),
            format!("let mut {name} = {e}; {name} = x;"),
            format!("let q = match n {{ k if k > 1 => {e}, _ => 1.0 }};"),
            format!("let q = match n {{ 0 => {e}, 1 => 2.0 }};"),
            format!("let q = match n {{ 0.5 => {e}, _ => 2.0 }};"),
            format!("let q = match n {{ 1..1 => {e}, _ => 2.0 }};"),
            "let g = |v: f64| { return v; };".to_string(),
            format!("{{ if {e} > 0.0 {{ return 1.0; }} }}"),
            format!("let q = if {e} > 0.0 {{ return 1.0 }} else {{ 2.0 }};"),
            format!("if {e} > 0.0 {{ 1.0 }} else {{ 2.0 }};"),
            "let q = A * consts::G + Self::K + x.len() as f64 + x.shape()[1] as f64;".to_string(),
            format!("let mut {name} = x.len(); {name} += 1;"),
            format!("for v in x {{ {name} = {e}; }}"),
            format!("loop {{ {name} = {e}; }}"),
            format!("for i in 0..n {{ if {e} > 0.0 {{ break; }} }}"),
            format!("for i in 0.. {{ {name} = {e}; }}"),
            format!("'a: while {e} > 0.0 {{ continue 'a; }}"),
            format!("for i in 0..{e} {{ {name} = {e}; }}"),
        ];
        forms[self.rng.below(forms.len())].clone()
    }

    fn expr(&mut self, depth: usize) -> String {
        if depth == 0 || self.rng.chance(20) {
            return if self.rng.chance(60) {
                self.name()
            } else {
                self.rng.pick(choose(LITERALS, 6, self.wild)).to_string()
            };
        }
        let d = depth - 1;
        let w = self.wild;
        let kinds = if w { 16 } else { 13 };
        match self.rng.below(kinds) {
            0..=3 => {
                let op = self.rng.pick(choose(
                    &["+", "-", "*", "/", "%", "<", "==", "&&", "<<", "+="],
                    4,
                    w,
                ));
                format!("({} {op} {})", self.expr(d), self.expr(d))
            }
            4 => format!("-{}", self.expr(d)),
            5 => format!("(-{})", self.expr(d)),
            6 | 7 => format!("{}.{}()", self.expr(d), self.rng.pick(choose(UNARY, 15, w))),
            8 => format!(
                "{}.powi({})",
                self.expr(d),
                self.rng.pick(choose(POWI, 6, w))
            ),
            9 => format!(
                "{}.{}({})",
                self.expr(d),
                self.rng
                    .pick(choose(&["max", "min", "dot", "powf", "clamp"], 2, w)),
                self.expr(d)
            ),
            10 => format!(
                "{}({})",
                self.rng.pick(choose(FUNCTIONS, 13, w)),
                self.expr(d)
            ),
            11 => format!(
                "if {} {} {} {{ {} }} else {{ {} }}",
                self.expr(d),
                self.rng.pick(&["<", ">=", "!="]),
                self.expr(d),
                self.expr(d),
                self.expr(d)
            ),
            12 => format!(
                "({} as {})",
                self.expr(d),
                self.rng.pick(choose(
                    &["i64", "f32", "f64", "i32", "bool", "u8", "usize"],
                    1,
                    w
                ))
            ),
            13 => {
                let unsupported = [
                    "loop { break 1.0 }",
                    "{ let mut a = 1.0; a += 1.0; a }",
                    "(|v: f64| v)(1.0)",
                    "[1.0, 2.0][0]",
                    "x[0]",
                    "x[[0, 1]]",
                    "match 1 { _ => 1.0 }",
                    "unsafe { 1.0 }",
                    "println!(\"hi\")",
                    "vec![1.0]",
                    "&mut 1.0",
                    "*x",
                    "x.0",
                    "(1.0, 2.0)",
                    "0..3",
                    "{ return 1.0; }",
                    "if true { return 2.0 } else { 1.0 }",
                    "async { 1.0 }",
                    "x.mapv(|v| v as f32)",
                    "x.mapv(|v| v * 2.0)",
                    "dot(x, x)",
                    "matmul(x, x)",
                    "x.sum_axis(Axis(3))",
                    "softmax(x, Axis(0))",
                ];
                self.rng.pick(&unsupported).to_string()
            }
            14 => format!("{{ let t = {}; t * {} }}", self.expr(d), self.expr(d)),
            _ => format!("({})", self.expr(d)),
        }
    }

    fn function(&mut self) -> (TransformKind, String, String) {
        self.wild = self.rng.chance(50);
        let w = self.wild;
        let float = self
            .rng
            .pick(&["f32", "f64", "f64", "f32", "oxla::half::f16", "T"]);
        let param_types = [
            float,
            float,
            "&[FLOAT]",
            "&[FLOAT]",
            "ArrayView2<FLOAT>",
            "[FLOAT; 3]",
            "usize",
            "i32",
            "bool",
            "&[i64]",
            "String",
            "&mut [FLOAT]",
            "f64",
            "f32",
            "T",
            "Vec<FLOAT>",
        ];
        let param_types = choose(&param_types, 4, w);
        let n_params = self.rng.below(4) + usize::from(!w);
        let mut params = Vec::new();
        self.names.clear();
        for i in 0..n_params {
            let name = self.rng.pick(choose(
                &["x", "y", "z", "w", "__oxla_p", "r#type", "n"],
                4,
                w,
            ));
            let name = if params
                .iter()
                .any(|p: &String| p.starts_with(&format!("{name}:")))
            {
                format!("{name}{i}")
            } else {
                name.to_string()
            };
            let ty = self.rng.pick(param_types).replace("FLOAT", float);
            params.push(format!("{name}: {ty}"));
            self.names.push(name);
        }
        let mut body = String::new();
        let mut mutable: Vec<String> = Vec::new();
        for _ in 0..self.rng.below(6) {
            let name = self.rng.pick(&["a", "b", "c"]).to_string();
            let e = self.expr(3);
            let stmt = match self.rng.below(18) + if w { 0 } else { 4 } {
                0 => format!("{e};"),
                1 => format!("let {name}: {float} = {e};"),
                2 => format!("let ({name}, _) = ({e}, 1.0);"),
                3 => self.wild_assignment(&name),
                4..=6 => {
                    mutable.push(name.clone());
                    format!("let mut {name} = {e};")
                }
                14 => format!("let ({name}, _) = ({e}, 1.0);"),
                7..=13 if !mutable.is_empty() => {
                    let m = mutable[self.rng.below(mutable.len())].clone();
                    self.control_stmt(&m, e)
                }
                _ => format!("let {name} = {e};"),
            };
            body.push_str(&stmt);
            self.names.push(name);
        }
        let tail = self.expr(4);
        body.push_str(&match self.rng.below(8) + if w { 0 } else { 3 } {
            0 => format!("return {tail};"),
            1 => format!("({tail}, {})", self.expr(2)),
            2 => format!("{tail};"),
            _ => tail,
        });
        let ret = self
            .rng
            .pick(choose(
                &[
                    "FLOAT",
                    "FLOAT",
                    "Vec<FLOAT>",
                    "(FLOAT, Vec<FLOAT>)",
                    "Array1<FLOAT>",
                    "i64",
                    "bool",
                    "()",
                    "String",
                ],
                3,
                w,
            ))
            .replace("FLOAT", float);
        let generics = match float {
            // Generic over the float type.
            "T" => "<T: oxla::Float>",
            _ if w && self.rng.chance(5) => "<T>",
            _ => "",
        };
        let mut attrs = String::new();
        for _ in 0..self.rng.below(3) {
            let a = self.rng.pick(choose(
                &[
                    "#[oxla::grad(g1)]",
                    "#[oxla::jvp(t1)]",
                    "#[oxla::vjp(b1)]",
                    "#[oxla::vmap(v1)]",
                    "#[oxla::vmap(v2, in_axes = (0, None))]",
                    "#[oxla::jit(j1)]",
                    "#[oxla::hessian(h1)]",
                    "#[oxla::grad(f)]",
                    "#[oxla::grad(g1, wrt = nope)]",
                    "#[oxla::value_and_grad(vg1, wrt = x)]",
                ],
                6,
                w,
            ));
            attrs.push_str(a);
        }
        let item = format!(
            "{attrs} fn f{generics}({}) -> {ret} {{ {body} }}",
            params.join(", ")
        );
        let (kind, args) = match self.rng.below(5) {
            0 => (TransformKind::Jit, String::new()),
            1 => (TransformKind::Grad, "dg".to_string()),
            2 => (TransformKind::Vmap, "dv".to_string()),
            3 => (TransformKind::Jvp, "dj".to_string()),
            _ => (TransformKind::Vjp, "db".to_string()),
        };
        (kind, args, item)
    }
}

#[test]
fn fuzz_expansion_never_panics_and_reports_only_spanned_errors() {
    let mut gen = Gen {
        rng: Rng(0x0A1A_2026),
        names: Vec::new(),
        wild: true,
    };
    let (mut expanded, mut rejected, mut unparsed) = (0, 0, 0);
    // Expanded functions with each control-flow form (the generator must
    // reach them, not only their errors).
    let forms = [
        "let mut",
        "+=",
        "if",
        "match",
        "return",
        "consts::G",
        "len()",
        "for ",
        "while ",
        "let (",
        "<T: oxla::Float>",
    ];
    let mut with_form = [0usize; 11];
    // The generator nests deeply; the default test thread's stack is small.
    let run = move || {
        for case in 0..6000 {
            let (kind, args, item) = gen.function();
            // rustc hands an attribute only items that parse.
            let Ok(parsed) = syn::parse_str::<syn::ItemFn>(&item) else {
                unparsed += 1;
                continue;
            };
            let item_ts = quote::quote!(#parsed);
            let args_ts: proc_macro2::TokenStream = args.parse().unwrap();
            let out = catch_unwind(AssertUnwindSafe(|| {
                expand_attribute_with(kind, args_ts, item_ts, &CodegenOptions::default())
            }))
            .unwrap_or_else(|_| panic!("case {case}: the expansion panicked on\n{item}"));
            let text = out.to_string();
            assert!(
                !text.contains("internal error"),
                "case {case}: an internal error for\n{item}\n{text}"
            );
            let file: syn::File = syn::parse2(out).unwrap_or_else(|e| {
                panic!("case {case}: the expansion does not parse ({e}) for\n{item}")
            });
            if text.contains("compile_error") {
                rejected += 1;
                // After an error, no body of the user's is emitted again.
                for i in &file.items {
                    if let syn::Item::Fn(f) = i {
                        let body = &f.block;
                        let body = quote::quote!(#body).to_string();
                        assert!(
                            body.contains("did not compile"),
                            "case {case}: a real body after an error for\n{item}\n{text}"
                        );
                    }
                }
            } else {
                expanded += 1;
                for (n, form) in with_form.iter_mut().zip(forms) {
                    *n += usize::from(item.contains(form));
                }
            }
        }
        println!("fuzz: {expanded} expanded, {rejected} rejected, {unparsed} not Rust; expanded with {forms:?}: {with_form:?}");
        assert!(expanded > 100 && rejected > 1000, "{expanded} {rejected}");
        assert!(
            with_form.iter().all(|n| *n >= 5),
            "{forms:?}: {with_form:?}"
        );
    };
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(run)
        .unwrap()
        .join()
        .unwrap();
}

/// Random deep and long functions under `#[grad]` (issue 20): `if`s on
/// scalars nested 64 and 128 deep, and sums of 5,000 and 10,000 random
/// terms, each expanding without errors in time roughly linear in its size
/// (twice the size in less than three times the time, in one of three
/// measurements, each the fastest of two runs; with generous absolute
/// limits for a slow machine).
#[test]
fn fuzz_deep_and_long_functions_expand_in_linear_time() {
    use crate::tests::scale::{assert_linear, within};
    use std::time::{Duration, Instant};
    fn step(rng: &mut Rng) -> String {
        let c = 0.5 + rng.below(100) as f64 / 100.0;
        match rng.below(6) {
            0 => format!("y = y * {c:?};"),
            1 => format!("y = y + {c:?};"),
            2 => "y = y.sin();".to_string(),
            3 => format!("y -= {c:?} * x;"),
            4 => "y = y * y;".to_string(),
            _ => format!("y = y.max({c:?});"),
        }
    }
    fn cond(rng: &mut Rng) -> String {
        let c = rng.below(200) as f64 / 100.0 - 1.0;
        let v = rng.pick(&["x", "y"]);
        let op = rng.pick(&[">", "<", ">=", "<="]);
        format!("{v} {op} {c:?}")
    }
    /// `if`s nested `d` deep, the nesting going down either branch.
    fn nested(rng: &mut Rng, d: usize) -> String {
        let mut body = "y".to_string();
        for _ in 0..d {
            let (s1, s2, c) = (step(rng), step(rng), cond(rng));
            body = if rng.chance(50) {
                format!("if {c} {{ {s1} {body} }} else {{ {s2} y }}")
            } else {
                format!("if {c} {{ {s1} y }} else {{ {s2} {body} }}")
            };
        }
        format!("fn f(x: f64) -> f64 {{ let mut y = x; {body} }}")
    }
    /// A sum of `n` random terms.
    fn long(rng: &mut Rng, n: usize) -> String {
        let mut s = String::from("x");
        for _ in 0..n {
            let c = 1.0 + rng.below(100) as f64 / 10.0;
            let op = rng.pick(&["+", "-", "+", "*"]);
            let term = match rng.below(4) {
                0 => format!("x * {c:?}"),
                1 => "x.sin()".to_string(),
                2 => format!("{c:?}"),
                _ => format!("(x - {c:?})"),
            };
            s += &format!(" {op} {term}");
        }
        format!("fn f(x: f64) -> f64 {{ {s} }}")
    }
    fn time(item: String) -> Duration {
        within(Duration::from_secs(120), "an expansion", move || {
            (0..2)
                .map(|_| {
                    let ts: proc_macro2::TokenStream = item.parse().unwrap();
                    let t = Instant::now();
                    let out = expand_attribute_with(
                        TransformKind::Grad,
                        "dg".parse().unwrap(),
                        ts,
                        &CodegenOptions::default(),
                    );
                    let elapsed = t.elapsed();
                    let text = out.to_string();
                    assert!(!text.contains("compile_error"), "{item}\n{text}");
                    elapsed
                })
                .min()
                .unwrap()
        })
    }
    let mut rng = Rng(0x0A1A_2020);
    for case in 0..3 {
        let (a, b) = (nested(&mut rng, 64), nested(&mut rng, 128));
        let (_, large) = assert_linear(&format!("case {case}: ifs nested 64 and 128 deep"), || {
            (time(a.clone()), time(b.clone()))
        });
        assert!(large < Duration::from_secs(30), "{large:?}");
        let (a, b) = (long(&mut rng, 5000), long(&mut rng, 10000));
        let (_, large) = assert_linear(
            &format!("case {case}: sums of 5000 and 10000 terms"),
            || (time(a.clone()), time(b.clone())),
        );
        assert!(large < Duration::from_secs(60), "{large:?}");
    }
}
