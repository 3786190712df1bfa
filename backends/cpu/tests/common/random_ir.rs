//! Random well-typed IR functions and a reference evaluation with a rigorous
//! per-element error bound, for differential tests of fusion, the executor
//! and the backends.
//!
//! The generator keeps every value in the domain of the ops applied to it:
//! `log`, `sqrt`, negative `powi` and divisors only see values with a known
//! positive lower bound (built as `x*x + c` or `exp(x)`), and values whose
//! static magnitude bound grows past `CAP` are squashed with `tanh`, so
//! nothing overflows, also after `grad`.
//!
//! The reference (`reference`) evaluates with the interpreter's own op rules
//! and, alongside, bounds for each element how far an implementation that
//! rounds each op correctly (within a few ulp for the transcendentals) and
//! sums reductions in any order may be from the interpreter: local rounding
//! plus the propagation of the operands' bounds through each op (exact
//! Lipschitz-style bounds, not first-order estimates). Comparisons whose
//! operands are within their bounds are *uncertain*; a `select` on an
//! uncertain predicate may take either branch.
#![allow(dead_code)]

use oxla_core::ops::elementwise::{BinaryOp, CmpOp, UnaryOp};
use oxla_core::shape::{Dim, Shape};
use oxla_core::transforms::{grad, vmap};
use oxla_core::{DType, Function, Op, Tensor, Type, Var};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;

/// Values whose magnitude bound exceeds this go through `tanh`.
const CAP: f64 = 1e3;
/// The largest extents the sizes below use, for the magnitude bounds.
const MAX_N: f64 = 1001.0;
const MAX_M: f64 = 17.0;
/// A positive lower bound below this is rebuilt (keeps `1/x` and `powi(x, -3)` moderate).
const MIN_LO: f64 = 1e-3;

/// The shapes a generated value can have.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// `[]`
    S,
    /// `[n]`
    N,
    /// `[m]`
    M,
    /// `[m, n]`
    MN,
}

impl Kind {
    fn shape(self) -> Shape {
        let (m, n) = (Dim::sym("m"), Dim::sym("n"));
        match self {
            Kind::S => Shape::scalar(),
            Kind::N => Shape::vector(n),
            Kind::M => Shape::vector(m),
            Kind::MN => Shape(vec![m, n]),
        }
    }

    fn numel_bound(self) -> f64 {
        match self {
            Kind::S => 1.0,
            Kind::N => MAX_N,
            Kind::M => MAX_M,
            Kind::MN => MAX_M * MAX_N,
        }
    }
}

/// A generated value: `|v| <= bound`, and `v >= lo > 0` when `lo` is known.
#[derive(Clone, Copy, Debug)]
struct Val {
    var: Var,
    kind: Kind,
    bound: f64,
    lo: Option<f64>,
}

/// A generated test program.
pub struct Generated {
    /// The function to check (after any transforms).
    pub function: Function,
    /// What was done to get it, for messages: `base`, `grad`, `vmap[..]`, ….
    pub recipe: String,
    /// The function before the transforms (equal to `function` for `base`).
    pub base: Function,
}

struct Gen {
    rng: StdRng,
    f: Function,
    dtype: DType,
    vals: Vec<Val>,
    kinds: Vec<Kind>,
    /// Comparison results (candidate outputs: bool buffers).
    bools: Vec<Var>,
}

impl Gen {
    fn push(&mut self, op: Op, ins: &[Var]) -> Var {
        match self.f.push(op.clone(), ins) {
            Ok(v) => v,
            Err(e) => panic!("generator built an ill-typed {op}: {e}"),
        }
    }

    /// Record a value; squash it with `tanh` first if it may be large.
    fn add(&mut self, var: Var, kind: Kind, bound: f64, lo: Option<f64>) -> Val {
        let v = if bound > CAP {
            let t = self.push(Op::Unary(UnaryOp::Tanh), &[var]);
            Val {
                var: t,
                kind,
                bound: 1.0,
                lo: None,
            }
        } else {
            Val {
                var,
                kind,
                bound,
                lo: lo.filter(|l| *l > 0.0),
            }
        };
        self.vals.push(v);
        v
    }

    fn literal(&mut self, value: f64, kind: Kind) -> Val {
        let dtype = self.dtype;
        let l = self.push(Op::Literal { value, dtype }, &[]);
        let value = dtype.round(value);
        let lo = (value > 0.0).then_some(value);
        if kind == Kind::S {
            return self.add(l, kind, value.abs(), lo);
        }
        let b = self.push(
            Op::Broadcast {
                shape: kind.shape(),
                dims: vec![],
            },
            &[l],
        );
        self.add(b, kind, value.abs(), lo)
    }

    fn random_literal(&mut self, kind: Kind) -> Val {
        let v = match self.rng.gen_range(0..4) {
            0 => [0.0, 1.0, -1.0, 0.5, 2.0][self.rng.gen_range(0..5)],
            _ => (self.rng.gen_range(-2.0..2.0f64) * 64.0).round() / 64.0,
        };
        self.literal(v, kind)
    }

    /// A value of `kind`: an existing one (recent ones more likely), a
    /// broadcast of a lower-rank one, or a literal.
    fn of_kind(&mut self, kind: Kind) -> Val {
        let have: Vec<usize> = (0..self.vals.len())
            .filter(|i| self.vals[*i].kind == kind)
            .collect();
        let roll = self.rng.gen_range(0..10);
        if !have.is_empty() && roll < 7 {
            let i = if self.rng.gen_bool(0.5) {
                have[have.len() - 1 - self.rng.gen_range(0..have.len().min(3))]
            } else {
                *have.choose(&mut self.rng).expect("nonempty")
            };
            return self.vals[i];
        }
        if roll < 9 && kind != Kind::S {
            let from = match kind {
                Kind::MN => *[Kind::S, Kind::N, Kind::M]
                    .choose(&mut self.rng)
                    .expect("nonempty"),
                _ => Kind::S,
            };
            let x = self.of_kind(from);
            return self.broadcast(x, kind);
        }
        self.random_literal(kind)
    }

    fn any(&mut self) -> Val {
        let k = *self.kinds.choose(&mut self.rng).expect("a kind");
        self.of_kind(k)
    }

    fn broadcast(&mut self, x: Val, to: Kind) -> Val {
        let dims = match (x.kind, to) {
            (Kind::S, _) => vec![],
            (Kind::N, Kind::MN) => vec![1],
            (Kind::M, Kind::MN) => vec![0],
            (a, b) => panic!("no broadcast from {a:?} to {b:?}"),
        };
        let v = self.push(
            Op::Broadcast {
                shape: to.shape(),
                dims,
            },
            &[x.var],
        );
        self.add(v, to, x.bound, x.lo)
    }

    fn unary(&mut self, op: UnaryOp, x: Val) -> Val {
        let v = self.push(Op::Unary(op), &[x.var]);
        let (bound, lo) = match op {
            UnaryOp::Neg => (x.bound, None),
            UnaryOp::Exp => (x.bound.exp(), Some((-x.bound).exp())),
            UnaryOp::Log => {
                let lo = x.lo.expect("log of a positive value");
                (lo.ln().abs().max(x.bound.ln().abs()), None)
            }
            UnaryOp::Sin | UnaryOp::Cos | UnaryOp::Tanh => (1.0, None),
            UnaryOp::Erf | UnaryOp::Sign | UnaryOp::Signum => (1.0, None),
            UnaryOp::ExpM1 => (x.bound.exp_m1(), None),
            UnaryOp::Round(_) => (x.bound + 1.0, None),
            UnaryOp::Sqrt => (x.bound.sqrt(), x.lo.map(f64::sqrt)),
            UnaryOp::Powi(n) if n >= 0 => (
                x.bound.powi(n),
                if n == 0 {
                    Some(1.0)
                } else {
                    x.lo.map(|l| l.powi(n))
                },
            ),
            UnaryOp::Powi(n) => {
                let lo = x.lo.expect("negative power of a positive value");
                (lo.powi(n), Some(x.bound.powi(n)))
            }
        };
        self.add(v, x.kind, bound, lo)
    }

    fn binary(&mut self, op: BinaryOp, a: Val, b: Val) -> Val {
        let v = self.push(Op::Binary(op), &[a.var, b.var]);
        let both = a.lo.zip(b.lo);
        let (bound, lo) = match op {
            BinaryOp::Add => (a.bound + b.bound, both.map(|(x, y)| x + y)),
            BinaryOp::Sub => (a.bound + b.bound, None),
            BinaryOp::Mul => (a.bound * b.bound, both.map(|(x, y)| x * y)),
            BinaryOp::Div => {
                let d = b.lo.expect("divisor bounded away from zero");
                (a.bound / d, a.lo.map(|x| x / b.bound))
            }
            BinaryOp::Max => (
                a.bound.max(b.bound),
                match (a.lo, b.lo) {
                    (Some(x), Some(y)) => Some(x.max(y)),
                    (x, y) => x.or(y),
                },
            ),
            BinaryOp::Min => (a.bound.max(b.bound), both.map(|(x, y)| x.min(y))),
            BinaryOp::Pow => {
                let lo = a.lo.expect("a positive base");
                let far = a.bound.max(1.0 / lo).max(1.0);
                (far.powf(b.bound), Some((1.0 / far).powf(b.bound)))
            }
        };
        self.add(v, a.kind, bound, lo)
    }

    /// `x` itself if it has a usable positive lower bound, else `x*x + c` or `exp(x)`.
    fn positive(&mut self, x: Val) -> Val {
        if x.lo.is_some_and(|l| l >= MIN_LO) {
            return x;
        }
        // Small enough that neither `x*x + c` nor `exp(x)` gets squashed.
        let x = if x.bound > 5.0 {
            self.unary(UnaryOp::Tanh, x)
        } else {
            x
        };
        if self.rng.gen_bool(0.5) {
            return self.unary(UnaryOp::Exp, x);
        }
        let sq = self.binary(BinaryOp::Mul, x, x);
        let sq = Val { lo: None, ..sq };
        let c = [0.25, 0.5, 1.0, 2.0][self.rng.gen_range(0..4)];
        let c = self.literal(c, x.kind);
        let s = self.binary(BinaryOp::Add, sq, c);
        // x*x >= 0, so the sum is at least c.
        let lo = c.lo;
        let s = Val { lo, ..s };
        if let Some(last) = self.vals.last_mut() {
            if last.var == s.var {
                last.lo = lo;
            }
        }
        s
    }

    fn random_unary(&mut self) {
        let x = self.any();
        match self.rng.gen_range(0..9) {
            0 => {
                self.unary(UnaryOp::Neg, x);
            }
            1 => {
                let x = if x.bound > 6.5 {
                    self.unary(UnaryOp::Tanh, x)
                } else {
                    x
                };
                self.unary(UnaryOp::Exp, x);
            }
            2 => {
                let p = self.positive(x);
                self.unary(UnaryOp::Log, p);
            }
            3 => {
                self.unary(UnaryOp::Sin, x);
            }
            4 => {
                self.unary(UnaryOp::Cos, x);
            }
            5 => {
                self.unary(UnaryOp::Tanh, x);
            }
            6 => {
                let p = self.positive(x);
                self.unary(UnaryOp::Sqrt, p);
            }
            _ => {
                let n = self.rng.gen_range(-3..=4);
                let x = if n < 0 {
                    self.positive(x)
                } else if x.bound.powi(n) > CAP {
                    self.unary(UnaryOp::Tanh, x)
                } else {
                    x
                };
                self.unary(UnaryOp::Powi(n), x);
            }
        }
    }

    fn random_binary(&mut self) {
        let a = self.any();
        let b = self.of_kind(a.kind);
        let op = *BinaryOp::ALL.choose(&mut self.rng).expect("an op");
        let (a, b) = if self.rng.gen_bool(0.5) {
            (a, b)
        } else {
            (b, a)
        };
        let (a, b) = match op {
            BinaryOp::Div => (a, self.positive(b)),
            // A base bounded away from 0 and an exponent in [-1, 1]: the
            // power stays within the bounds of its base (and their inverses).
            BinaryOp::Pow => {
                let a = self.positive(a);
                let b = if b.bound > 1.0 {
                    self.unary(UnaryOp::Tanh, b)
                } else {
                    b
                };
                (a, b)
            }
            _ => (a, b),
        };
        self.binary(op, a, b);
    }

    fn random_select(&mut self) {
        let x = self.any();
        let k = x.kind;
        let y = self.of_kind(k);
        let op = *CmpOp::ALL.choose(&mut self.rng).expect("an op");
        let p = self.push(Op::Cmp(op), &[x.var, y.var]);
        self.bools.push(p);
        let (a, b) = (self.of_kind(k), self.of_kind(k));
        let v = self.push(Op::Select, &[p, a.var, b.var]);
        let lo = a.lo.zip(b.lo).map(|(x, y)| x.min(y));
        self.add(v, k, a.bound.max(b.bound), lo);
    }

    fn random_broadcast(&mut self) {
        let pairs: Vec<(Kind, Kind)> = [
            (Kind::S, Kind::N),
            (Kind::S, Kind::M),
            (Kind::S, Kind::MN),
            (Kind::N, Kind::MN),
            (Kind::M, Kind::MN),
        ]
        .into_iter()
        .filter(|(a, b)| self.kinds.contains(a) && self.kinds.contains(b))
        .collect();
        let Some(&(from, to)) = pairs.choose(&mut self.rng) else {
            return self.random_unary();
        };
        let x = self.of_kind(from);
        self.broadcast(x, to);
    }

    fn random_reduce(&mut self) {
        let choices: Vec<(Kind, Vec<usize>, Kind)> = [
            (Kind::N, vec![0], Kind::S),
            (Kind::M, vec![0], Kind::S),
            (Kind::MN, vec![0], Kind::N),
            (Kind::MN, vec![1], Kind::M),
            (Kind::MN, vec![0, 1], Kind::S),
        ]
        .into_iter()
        .filter(|(k, _, _)| self.kinds.contains(k))
        .collect();
        let Some((from, axes, to)) = choices.choose(&mut self.rng).cloned() else {
            return self.random_binary();
        };
        let x = self.of_kind(from);
        let len = match (from, axes.as_slice()) {
            (Kind::MN, [0]) => MAX_M,
            (Kind::MN, [1]) => MAX_N,
            (k, _) => k.numel_bound(),
        };
        let v = self.push(Op::ReduceSum { axes }, &[x.var]);
        // An empty sum is 0: no lower bound.
        self.add(v, to, x.bound * len, None);
    }

    fn random_dot(&mut self) {
        if !self.kinds.contains(&Kind::N) {
            return self.random_binary();
        }
        let a = self.of_kind(Kind::N);
        let b = self.of_kind(Kind::N);
        let v = self.push(Op::Dot, &[a.var, b.var]);
        self.add(v, Kind::S, a.bound * b.bound * MAX_N, None);
    }

    fn sum_all(&mut self, x: Val) -> Val {
        let axes: Vec<usize> = (0..x.kind.shape().rank()).collect();
        if axes.is_empty() {
            return x;
        }
        let v = self.push(Op::ReduceSum { axes }, &[x.var]);
        // Not squashed: an output may be large.
        let v = Val {
            var: v,
            kind: Kind::S,
            bound: x.bound * x.kind.numel_bound(),
            lo: None,
        };
        self.vals.push(v);
        v
    }
}

/// A random function in `dtype` with 1–3 params of shape `[]`, `[n]` or
/// `[m, n]`, 3–25 equations and 1–3 outputs; when `scalar_out`, exactly one
/// scalar output.
fn random_function(rng: &mut StdRng, dtype: DType, name: &str, scalar_out: bool) -> Function {
    let mut g = Gen {
        rng: StdRng::seed_from_u64(rng.gen()),
        f: Function::new(name),
        dtype,
        vals: Vec::new(),
        kinds: vec![Kind::S],
        bools: Vec::new(),
    };
    let n_params = g.rng.gen_range(1..=3);
    let mut param_kinds: Vec<Kind> = (0..n_params)
        .map(|_| [Kind::S, Kind::N, Kind::MN][g.rng.gen_range(0..3)])
        .collect();
    // Arguments are flat buffers: `n` must come from an `[n]` argument for
    // `m` to follow from an `[m, n]` one.
    if param_kinds.contains(&Kind::MN) && !param_kinds.contains(&Kind::N) {
        let i = match param_kinds.iter().position(|k| *k == Kind::S) {
            Some(i) => i,
            None if n_params < 3 => {
                param_kinds.push(Kind::N);
                param_kinds.len() - 1
            }
            None => 0,
        };
        param_kinds[i] = Kind::N;
    }
    for (i, kind) in param_kinds.into_iter().enumerate() {
        let var =
            g.f.add_param(&format!("x{i}"), Type::new(dtype, kind.shape()));
        g.vals.push(Val {
            var,
            kind,
            bound: 2.0,
            lo: None,
        });
        let extra: &[Kind] = match kind {
            Kind::S => &[],
            Kind::N => &[Kind::N],
            _ => &[Kind::N, Kind::M, Kind::MN],
        };
        for k in extra {
            if !g.kinds.contains(k) {
                g.kinds.push(*k);
            }
        }
    }
    let target = g.rng.gen_range(3..=25);
    while g.f.eqns.len() < target {
        match g.rng.gen_range(0..100) {
            0..=29 => g.random_unary(),
            30..=59 => g.random_binary(),
            60..=71 => g.random_select(),
            72..=79 => g.random_broadcast(),
            80..=92 => g.random_reduce(),
            _ => g.random_dot(),
        }
    }
    let last = *g.vals.last().expect("a value");
    if scalar_out {
        let s = g.sum_all(last);
        g.f.outs = vec![s.var];
    } else {
        let mut outs = vec![last.var];
        for _ in 0..g.rng.gen_range(0..=2) {
            // A bool output is also loaded by any kernel that uses it.
            let v = if !g.bools.is_empty() && g.rng.gen_bool(0.3) {
                g.bools[g.rng.gen_range(0..g.bools.len())]
            } else {
                g.vals[g.rng.gen_range(0..g.vals.len())].var
            };
            outs.insert(g.rng.gen_range(0..=outs.len()), v);
        }
        g.f.outs = outs;
    }
    g.f
}

/// The program for `seed`: a random function in f32 or f64, sometimes put
/// through `grad` (all params) and/or `vmap` (random in_axes).
pub fn generate(seed: u64) -> Generated {
    let mut rng = StdRng::seed_from_u64(seed);
    let dtype = if rng.gen_bool(0.5) {
        DType::F32
    } else {
        DType::F64
    };
    let take_grad = rng.gen_bool(0.25);
    let take_vmap = rng.gen_bool(0.2);
    let name = format!("rand{seed}");
    let base = random_function(&mut rng, dtype, &name, take_grad);
    let mut f = base.clone();
    let mut recipe = vec!["base".to_string()];
    if take_grad {
        let wrt: Vec<usize> = (0..f.params.len()).collect();
        f = grad(&f, &wrt).expect("grad of a scalar function");
        recipe.push("grad".into());
    }
    if take_vmap {
        // Some in_axes leave the batch size or a dimension impossible to
        // infer from flat buffers (`[b, n]` and `[b, m, n]` alone); draw again.
        for _ in 0..8 {
            let mut axes: Vec<Option<usize>> = (0..f.params.len())
                .map(|_| rng.gen_bool(0.6).then_some(0))
                .collect();
            if axes.iter().all(Option::is_none) {
                let i = rng.gen_range(0..axes.len());
                axes[i] = Some(0);
            }
            let v = vmap(&f, &axes).expect("vmap");
            if determinable(&v) {
                f = v;
                recipe.push(format!("vmap{axes:?}"));
                break;
            }
        }
    }
    Generated {
        function: f,
        recipe: recipe.join(" -> "),
        base,
    }
}

/// Whether every dimension symbol of `f` follows from the element counts of
/// its arguments, solving for one unknown symbol per argument at a time.
pub fn determinable(f: &Function) -> bool {
    let mut known: Vec<String> = Vec::new();
    loop {
        let mut progress = false;
        for p in &f.params {
            let unknown: Vec<&str> = f
                .shape(*p)
                .symbols()
                .filter(|s| !known.iter().any(|k| k == s))
                .collect();
            if let [s] = unknown[..] {
                known.push(s.to_string());
                progress = true;
            }
        }
        if !progress {
            return f.symbols().iter().all(|s| known.contains(s));
        }
    }
}

/// Sizes to check `f` at: one binding of its symbols per entry. A function
/// over `n` only gets every length; one with `m` or `b` a few random
/// combinations, kept small enough for the interpreter.
pub fn size_configs(rng: &mut StdRng, f: &Function) -> Vec<BTreeMap<String, usize>> {
    const N: [usize; 7] = [0, 1, 3, 4, 5, 17, 1001];
    const M: [usize; 5] = [0, 1, 3, 4, 17];
    const B: [usize; 4] = [0, 1, 2, 5];
    let syms = f.symbols();
    if syms.iter().all(|s| s == "n") {
        if syms.is_empty() {
            return vec![BTreeMap::new()];
        }
        return N
            .iter()
            .map(|n| BTreeMap::from([("n".into(), *n)]))
            .collect();
    }
    let mut out = Vec::new();
    while out.len() < 3 {
        let mut env = BTreeMap::new();
        for s in &syms {
            let choices: &[usize] = match s.as_str() {
                "n" => &N,
                "m" => &M,
                _ => &B,
            };
            // The first binding has no empty dimension.
            let pick = loop {
                let v = *choices.choose(rng).expect("nonempty");
                if !out.is_empty() || v > 0 {
                    break v;
                }
            };
            env.insert(s.clone(), pick);
        }
        let largest = env.values().filter(|v| **v > 0).product::<usize>();
        if largest <= 6000 {
            out.push(env);
        }
    }
    out
}

/// Concrete shape of `shape` under `env`.
pub fn concrete(shape: &Shape, env: &BTreeMap<String, usize>) -> Vec<usize> {
    shape
        .0
        .iter()
        .map(|d| match d {
            Dim::Const(c) => *c as usize,
            Dim::Sym(s) => env[s],
        })
        .collect()
}

/// Random arguments in [-2, 2] for the params of `f`.
pub fn random_args(rng: &mut StdRng, f: &Function, env: &BTreeMap<String, usize>) -> Vec<Tensor> {
    f.params
        .iter()
        .map(|p| {
            let ty = f.ty(*p);
            let shape = concrete(&ty.shape, env);
            let n = shape.iter().product();
            let data = (0..n).map(|_| rng.gen_range(-2.0..2.0)).collect();
            Tensor::new(ty.dtype, shape, data)
        })
        .collect()
}

// ---- reference values with error bounds ------------------------------------

/// The interpreter's outputs, and for each output element a bound on how far
/// a correct implementation may be from it (`f64::INFINITY`: unknown). For a
/// bool output the bound is 0 (must match) or 1 (may differ).
pub struct Reference {
    pub outs: Vec<Tensor>,
    pub bounds: Vec<Vec<f64>>,
}

/// Evaluate `f` like `interp::eval` (the same op rules, in the same order),
/// tracking error bounds.
pub fn reference(f: &Function, args: &[Tensor]) -> Reference {
    let mut env: BTreeMap<String, usize> = BTreeMap::new();
    for (p, a) in f.params.iter().zip(args) {
        for (d, n) in f.shape(*p).0.iter().zip(&a.shape) {
            if let Dim::Sym(s) = d {
                env.insert(s.clone(), *n);
            }
        }
    }
    let mut vals: Vec<Option<Tensor>> = vec![None; f.types.len()];
    let mut errs: Vec<Option<Vec<f64>>> = vec![None; f.types.len()];
    for (p, a) in f.params.iter().zip(args) {
        vals[p.index()] = Some(a.clone());
        errs[p.index()] = Some(vec![0.0; a.numel()]);
    }
    for e in &f.eqns {
        let ins: Vec<&Tensor> = e
            .ins
            .iter()
            .map(|v| vals[v.index()].as_ref().expect("defined"))
            .collect();
        let in_errs: Vec<&[f64]> = e
            .ins
            .iter()
            .map(|v| errs[v.index()].as_deref().expect("defined"))
            .collect();
        let shape = concrete(&f.ty(e.out()).shape, &env);
        let r = eval_one(&e.op, &ins, &shape);
        let mut err = match e.op {
            // An operand compared with itself gives the same answer however
            // it was rounded (no NaN here).
            Op::Cmp(_) if e.ins[0] == e.ins[1] => vec![0.0; r.numel()],
            _ => propagate(&e.op, &ins, &in_errs, &r, &shape),
        };
        for x in &mut err {
            if x.is_nan() {
                *x = f64::INFINITY;
            }
        }
        vals[e.out().index()] = Some(r);
        errs[e.out().index()] = Some(err);
    }
    Reference {
        outs: f
            .outs
            .iter()
            .map(|o| vals[o.index()].clone().expect("defined"))
            .collect(),
        bounds: f
            .outs
            .iter()
            .map(|o| errs[o.index()].clone().expect("defined"))
            .collect(),
    }
}

/// The smallest positive value of `dtype` (an absolute floor for rounding
/// near zero).
fn tiny(dtype: DType) -> f64 {
    match dtype {
        DType::F64 => 1e-320,
        _ => 1e-44,
    }
}

fn f64_tensor(shape: &[usize], data: Vec<f64>) -> Tensor {
    Tensor {
        dtype: DType::F64,
        shape: shape.to_vec(),
        data,
    }
}

/// Error bound of `op`'s result given its operands, their bounds and the result.
fn propagate(op: &Op, ins: &[&Tensor], errs: &[&[f64]], r: &Tensor, shape: &[usize]) -> Vec<f64> {
    let dt = r.dtype;
    let eps = dt.epsilon();
    let local = |v: f64, c: f64| c * eps * v.abs() + tiny(dt);
    let n = r.numel();
    match op {
        Op::Literal { .. } => vec![0.0],
        Op::Unary(u) => (0..n)
            .map(|i| {
                let (x, ea, y) = (ins[0].data[i], errs[0][i], r.data[i]);
                let (prop, c) = match u {
                    UnaryOp::Neg => (ea, 0.0),
                    UnaryOp::Exp => (y.abs() * ea.exp_m1(), 10.0),
                    UnaryOp::Log => (
                        if ea < x.abs() {
                            -(-ea / x.abs()).ln_1p()
                        } else {
                            f64::INFINITY
                        },
                        10.0,
                    ),
                    UnaryOp::Sin | UnaryOp::Cos => (ea.min(2.0) + 4.0 * eps, 10.0),
                    UnaryOp::ExpM1 => (ea * (x + ea).exp(), 10.0),
                    // |erf'| ≤ 2/√π.
                    UnaryOp::Erf => (ea * std::f64::consts::FRAC_2_SQRT_PI, 10.0),
                    // Exact, but an input error may cross a jump.
                    UnaryOp::Round(_) => (if ea > 0.0 { ea + 1.0 } else { 0.0 }, 0.0),
                    UnaryOp::Sign | UnaryOp::Signum => (if ea > 0.0 { 2.0 } else { 0.0 }, 0.0),
                    UnaryOp::Tanh => {
                        let t = (x.abs() - ea).max(0.0).tanh();
                        (ea * (1.0 - t * t), 10.0)
                    }
                    UnaryOp::Sqrt => (
                        if x - ea < 0.0 {
                            f64::INFINITY
                        } else if x > 0.0 {
                            ea.sqrt().min(ea / x.sqrt())
                        } else {
                            ea.sqrt()
                        },
                        1.0,
                    ),
                    UnaryOp::Powi(k) => {
                        let a = x.abs();
                        let prop = match *k {
                            0 => 0.0,
                            k if k > 0 => (a + ea).powi(k) - a.powi(k),
                            k if ea < a => (a - ea).powi(k) - a.powi(k),
                            _ => f64::INFINITY,
                        };
                        (prop, k.unsigned_abs() as f64 + 2.0)
                    }
                };
                prop + local(y, c)
            })
            .collect(),
        Op::Binary(b) => (0..n)
            .map(|i| {
                let (x, y, ex, ey, z) = (
                    ins[0].data[i],
                    ins[1].data[i],
                    errs[0][i],
                    errs[1][i],
                    r.data[i],
                );
                match b {
                    BinaryOp::Add | BinaryOp::Sub => ex + ey + local(z, 1.0),
                    BinaryOp::Mul => x.abs() * ey + y.abs() * ex + ex * ey + local(z, 1.0),
                    BinaryOp::Div if ey < y.abs() => {
                        (ex + z.abs() * ey) / (y.abs() - ey) + local(z, 1.0)
                    }
                    BinaryOp::Div => f64::INFINITY,
                    BinaryOp::Max | BinaryOp::Min => ex.max(ey),
                    // z = x^y, x > 0: a relative change of x by ex/x moves
                    // ln z by at most |y|·ln(1 + ex/(x − ex)), and ey moves it
                    // by |ln x| + that much at most.
                    BinaryOp::Pow if ex < x => {
                        let rel = (ex / (x - ex)).ln_1p();
                        let spread = y.abs() * rel + (x.ln().abs() + rel) * ey;
                        z.abs() * spread.exp_m1() + local(z, 4.0)
                    }
                    BinaryOp::Pow => f64::INFINITY,
                }
            })
            .collect(),
        Op::Cmp(_) => (0..n)
            .map(|i| {
                let (x, y) = (ins[0].data[i], ins[1].data[i]);
                let e = errs[0][i] + errs[1][i];
                let uncertain = x.is_nan() || y.is_nan() || (e > 0.0 && (x - y).abs() <= e);
                if uncertain {
                    1.0
                } else {
                    0.0
                }
            })
            .collect(),
        Op::Select => (0..n)
            .map(|i| {
                let (ea, eb) = (errs[1][i], errs[2][i]);
                if errs[0][i] > 0.0 {
                    ea.max(eb) + (ins[1].data[i] - ins[2].data[i]).abs()
                } else if ins[0].data[i] != 0.0 {
                    ea
                } else {
                    eb
                }
            })
            .collect(),
        Op::Broadcast { .. } => {
            let e = f64_tensor(&ins[0].shape, errs[0].to_vec());
            eval_one(op, &[&e], shape).data
        }
        Op::ReduceSum { axes } => {
            let len: usize = axes.iter().map(|a| ins[0].shape[*a]).product();
            let e = f64_tensor(&ins[0].shape, errs[0].to_vec());
            let abs = f64_tensor(&ins[0].shape, ins[0].data.iter().map(|v| v.abs()).collect());
            let se = eval_one(op, &[&e], shape).data;
            let sa = eval_one(op, &[&abs], shape).data;
            se.iter()
                .zip(&sa)
                .map(|(e, a)| e + len as f64 * (eps * a + tiny(dt)))
                .collect()
        }
        Op::Dot => {
            let len = ins[0].numel();
            let (mut se, mut sa) = (0.0, 0.0);
            let pairs = ins[0].data.iter().zip(&ins[1].data);
            for ((&x, &y), (&ex, &ey)) in pairs.zip(errs[0].iter().zip(errs[1])) {
                let p = x * y;
                se += x.abs() * ey + y.abs() * ex + ex * ey + local(p, 1.0);
                sa += p.abs();
            }
            vec![se + len as f64 * (eps * sa + tiny(dt))]
        }
        other => panic!("random programs do not generate {other}"),
    }
}

/// The reference value of a single-result op.
fn eval_one(op: &Op, ins: &[&Tensor], shape: &[usize]) -> Tensor {
    let mut r = op
        .eval(ins, &[shape.to_vec()], &Default::default())
        .expect("a single-result op evaluates");
    r.remove(0)
}
