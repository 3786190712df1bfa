//! Structured control flow: loops whose body is a function, in the manner of
//! JAX's `fori_loop` and `while_loop`, and the reverse sweep that
//! differentiates them.
//!
//! A `Loop` carries values through its body: `for i in lo..hi` (`For`: the
//! body also receives `i`) or while a condition function holds (`While`).
//! Its operands are `[lo, hi]` (i64 scalars, `For` only), the constants the
//! body reads, then the carries' initial values; its results are the final
//! values of the carries listed in `results`.
//!
//! Derivatives, each rule closed under the others:
//! - JVP: the primal loop, plus a *tangent loop* whose body is the body's
//!   JVP and whose results are the tangent carries. The tangent loop is
//!   linear in its tangent operands and remembers the loop it came from
//!   (`TangentOf`), which is what its transpose needs.
//! - Transpose of a tangent loop: a `LoopReverse`, which runs the primal loop
//!   keeping its carries (all, or every k-th with recomputation of the rest:
//!   `Checkpoint`), then sweeps back through the body's VJP. For a `While`
//!   loop the forward sweep records the trip count, so reverse mode works
//!   through `while` loops too.
//! - JVP of a `LoopReverse` (forward-over-reverse: Hessians) is a
//!   `LoopReverse` of the JVPs of its two bodies. Reverse over reverse is not
//!   supported (`LoopReverse` is not linear in any operand).
//! - Batching: the body is batched; a batched trip count or a batched `while`
//!   condition runs until every example is done and freezes each example's
//!   carries once its own loop has ended (a select on a per-example mask).

use crate::dtype::DType;
use crate::interp;
use crate::ir::{Function, Type, Var};
use crate::ops::elementwise::CmpOp;
use crate::ops::Op;
use crate::shape::{Dim, Shape};
use crate::tensor::Tensor;
use crate::transforms::jvp::jvp_wrt;
use crate::transforms::vjp::vjp_cotangents;
use crate::transforms::vmap::vmap_sized;
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What ends a loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LoopKind {
    /// `for i in lo..hi`: operands `lo`, `hi` come first; the body receives `i`.
    For,
    /// `while cond(consts, carries)`.
    While,
}

impl LoopKind {
    /// `for` or `while`, as the loop is written.
    pub fn keyword(self) -> &'static str {
        match self {
            LoopKind::For => "for",
            LoopKind::While => "while",
        }
    }
}

/// How reverse mode keeps the carries of the forward sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Checkpoint {
    /// Every step's carries: memory grows with the trip count.
    All,
    /// The carries of every k-th step; the steps in between are recomputed
    /// one segment at a time on the way back (memory n/k + k steps, one more
    /// forward sweep of work).
    Every(u64),
    /// `Every(⌈√n⌉)` for the trip count n (known before a `For` loop runs;
    /// a `While` loop uses 64).
    Sqrt,
}

/// A loop; see the module documentation.
#[derive(Clone, Debug, PartialEq)]
pub struct Loop {
    pub kind: LoopKind,
    /// How many of the body's leading params are constants.
    pub n_consts: usize,
    /// Params: the constants, then `i: i64` (`For` only), then the carries;
    /// results: the carries' next values.
    pub body: Function,
    /// `While` only. Params: the constants, then the carries; result: one
    /// bool scalar.
    pub cond: Option<Function>,
    /// Which carries are results, in order.
    pub results: Vec<usize>,
    pub checkpoint: Checkpoint,
    /// Set on the tangent loop of a JVP.
    pub tangent_of: Option<Box<TangentOf>>,
}

/// Where a tangent loop came from. Its constants are the primal constants
/// followed by the tangents of `consts`; its carries, the primal carries
/// followed by the tangents of `carries`; its results, those tangents.
#[derive(Clone, Debug, PartialEq)]
pub struct TangentOf {
    pub primal: Loop,
    /// Primal constants with a tangent.
    pub consts: Vec<usize>,
    /// Primal carries with a tangent (the float ones).
    pub carries: Vec<usize>,
}

/// Reverse mode through a loop. Operands: `fwd`'s operands, then the final
/// cotangents `r`. Runs `fwd`, then for each step from the last down, with
/// the carries `c` that step started from:
/// `(a, r) = back(consts, [i], c, r)`, summing the `a`s. Results: the listed
/// entries of `(Σa.., r..)`.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopReverse {
    /// Its `results` and `tangent_of` are not used.
    pub fwd: Loop,
    /// Params: `fwd.body`'s params, then `r`; results: the `a`s, then the next `r`.
    pub back: Function,
    pub n_acc: usize,
    pub results: Vec<usize>,
}

impl Loop {
    /// `lo`, `hi` for `For`.
    pub fn n_bounds(&self) -> usize {
        match self.kind {
            LoopKind::For => 2,
            LoopKind::While => 0,
        }
    }
    pub fn n_carries(&self) -> usize {
        self.body.outs.len()
    }
    /// Index of the first carry among the body's params.
    fn carry_param0(&self) -> usize {
        self.n_consts + self.n_bounds() / 2
    }
    pub fn carry_type(&self, k: usize) -> &Type {
        self.body.ty(self.body.outs[k])
    }
    pub fn n_operands(&self) -> usize {
        self.n_bounds() + self.n_consts + self.n_carries()
    }

    /// Check the bodies against each other; shared by `infer` and `LoopReverse::infer`.
    fn check(&self, ins: &[&Type]) -> Result<(), String> {
        let (nb, nk, nc) = (self.n_bounds(), self.n_consts, self.n_carries());
        if ins.len() != self.n_operands() {
            return Err(format!(
                "loop takes {} operands, got {}",
                self.n_operands(),
                ins.len()
            ));
        }
        let i64_scalar = Type::scalar(DType::I64);
        if ins[..nb].iter().any(|t| **t != i64_scalar) {
            return Err("a for loop's bounds must be i64 scalars".into());
        }
        if self.body.params.len() != self.carry_param0() + nc {
            return Err("loop body: wrong number of params".into());
        }
        if self.kind == LoopKind::For && self.body.ty(self.body.params[nk]) != &i64_scalar {
            return Err("a for loop body's index param must be an i64 scalar".into());
        }
        for k in 0..nk {
            if self.body.ty(self.body.params[k]) != ins[nb + k] {
                return Err(format!(
                    "loop constant {k}: the body takes {}, the operand is {}",
                    self.body.ty(self.body.params[k]),
                    ins[nb + k]
                ));
            }
        }
        for k in 0..nc {
            let p = self.body.ty(self.body.params[self.carry_param0() + k]);
            if p != self.carry_type(k) || p != ins[nb + nk + k] {
                return Err(format!(
                    "loop carry {k}: the body takes {p} and gives {}, the initial value is {}",
                    self.carry_type(k),
                    ins[nb + nk + k]
                ));
            }
        }
        match (&self.cond, self.kind) {
            (None, LoopKind::For) => {}
            (Some(c), LoopKind::While) => {
                let takes: Vec<&Type> = c.params.iter().map(|p| c.ty(*p)).collect();
                let want: Vec<&Type> = ins[nb..].to_vec();
                if takes != want
                    || c.outs.len() != 1
                    || c.ty(c.outs[0]) != &Type::scalar(DType::Bool)
                {
                    return Err("a while loop's condition must take the constants and carries and give a bool scalar".into());
                }
            }
            _ => return Err("a while loop, and only a while loop, has a condition".into()),
        }
        if self.results.iter().any(|r| *r >= nc) {
            return Err("a loop result names no carry".into());
        }
        Ok(())
    }

    pub fn infer(&self, ins: &[&Type]) -> Result<Vec<Type>, String> {
        self.check(ins)?;
        if let Some(t) = &self.tangent_of {
            let p = &t.primal;
            if p.kind != self.kind
                || self.n_consts != p.n_consts + t.consts.len()
                || self.n_carries() != p.n_carries() + t.carries.len()
            {
                return Err("a tangent loop does not match its primal loop".into());
            }
        }
        Ok(self
            .results
            .iter()
            .map(|r| self.carry_type(*r).clone())
            .collect())
    }

    /// Operand `i` is a tangent of the tangent loop.
    pub fn is_linear_in(&self, i: usize) -> bool {
        let Some(t) = &self.tangent_of else {
            return false;
        };
        let (nb, pk, pc) = (self.n_bounds(), t.primal.n_consts, t.primal.n_carries());
        let t_consts = nb + pk..nb + pk + t.consts.len();
        let t_carries = nb + self.n_consts + pc..self.n_operands();
        t_consts.contains(&i) || t_carries.contains(&i)
    }

    /// The trip count of a `For` loop from its bound operands.
    fn trip(lo: f64, hi: f64) -> u64 {
        if hi > lo {
            (hi - lo) as u64
        } else {
            0
        }
    }

    /// One step: the body on `consts`, step `i`, `carries`.
    fn step(&self, consts: &[Tensor], i: i64, carries: Vec<Tensor>) -> Result<Vec<Tensor>, String> {
        let mut args: Vec<Tensor> = consts.to_vec();
        if self.kind == LoopKind::For {
            args.push(Tensor::scalar(DType::I64, i as f64));
        }
        args.extend(carries);
        interp::eval(&self.body, &args)
    }

    fn holds(&self, consts: &[Tensor], carries: &[Tensor]) -> Result<bool, String> {
        let c = self.cond.as_ref().expect("a while loop has a condition");
        let mut args = consts.to_vec();
        args.extend(carries.iter().cloned());
        Ok(interp::eval(c, &args)?[0].data[0] != 0.0)
    }

    /// Run the loop; `visit(k, carries)` sees the carries each step `k`
    /// starts from. Returns the final carries and the trip count.
    fn run(
        &self,
        ins: &[&Tensor],
        mut visit: impl FnMut(u64, &[Tensor]) -> Result<(), String>,
    ) -> Result<(Vec<Tensor>, u64), String> {
        let nb = self.n_bounds();
        let consts: Vec<Tensor> = ins[nb..nb + self.n_consts]
            .iter()
            .map(|t| (*t).clone())
            .collect();
        let mut carries: Vec<Tensor> = ins[nb + self.n_consts..]
            .iter()
            .map(|t| (*t).clone())
            .collect();
        let mut k = 0u64;
        match self.kind {
            LoopKind::For => {
                let lo = ins[0].data[0];
                for step in 0..Loop::trip(lo, ins[1].data[0]) {
                    visit(step, &carries)?;
                    carries = self.step(&consts, lo as i64 + step as i64, carries)?;
                }
                k = Loop::trip(lo, ins[1].data[0]);
            }
            LoopKind::While => {
                while self.holds(&consts, &carries)? {
                    visit(k, &carries)?;
                    carries = self.step(&consts, 0, carries)?;
                    k += 1;
                }
            }
        }
        Ok((carries, k))
    }

    /// Reference evaluation.
    pub fn eval(&self, ins: &[&Tensor]) -> Result<Vec<Tensor>, String> {
        let (carries, _) = self.run(ins, |_, _| Ok(()))?;
        Ok(self.results.iter().map(|r| carries[*r].clone()).collect())
    }

    /// The tangent loop for tangents of the constants at `consts` and the
    /// carries at `carries` (see `TangentOf`).
    pub fn tangent(&self, consts: &[usize], carries: &[usize]) -> Loop {
        let (nk, c0, nc) = (self.n_consts, self.carry_param0(), self.n_carries());
        let wrt: Vec<usize> = consts
            .iter()
            .copied()
            .chain(carries.iter().map(|k| c0 + k))
            .collect();
        let j = jvp_wrt(&self.body, &wrt);
        // `j`: params (consts, [i], carries, t_consts, t_carries), results
        // (carries, one tangent per carry); reorder to the loop's layout.
        let np = self.body.params.len();
        let order: Vec<usize> = (0..nk)
            .chain(np..np + consts.len())
            .chain(nk..c0 + nc)
            .chain(np + consts.len()..np + wrt.len())
            .collect();
        let outs: Vec<usize> = (0..nc).chain(carries.iter().map(|k| nc + k)).collect();
        let body = rearranged(&j, &order, &outs);
        let cond = self.cond.as_ref().map(|c| {
            // The condition reads the primal values only.
            let mut order: Vec<Option<usize>> = (0..nk).map(Some).collect();
            order.extend(std::iter::repeat(None).take(consts.len()));
            order.extend((nk..nk + nc).map(Some));
            order.extend(std::iter::repeat(None).take(carries.len()));
            with_unused_params(c, &order, &body)
        });
        Loop {
            kind: self.kind,
            n_consts: nk + consts.len(),
            body,
            cond,
            results: (nc..nc + carries.len()).collect(),
            checkpoint: self.checkpoint,
            tangent_of: Some(Box::new(TangentOf {
                primal: Loop {
                    results: (0..nc).collect(),
                    tangent_of: None,
                    ..self.clone()
                },
                consts: consts.to_vec(),
                carries: carries.to_vec(),
            })),
        }
    }

    /// The reverse sweep that transposes this tangent loop: cotangents of
    /// its tangent constants and initial tangents from those of its results.
    pub fn transpose_reverse(&self) -> LoopReverse {
        let t = self.tangent_of.as_ref().expect("a tangent loop");
        reverse_sweep(&t.primal, &t.consts, &t.carries)
    }

    /// For this tangent loop with a cotangent on the results with
    /// `live[k]`: which of its tangent constants (per `TangentOf::consts`
    /// entry) and tangent carries (per `TangentOf::carries` entry) a
    /// cotangent can reach. The others' cotangents are symbolic zeros: the
    /// reverse sweep leaves them out (`reverse_sweep`), so a carry that only
    /// steers (read by a predicate, or by the `while` condition, which is
    /// never differentiated) never multiplies its zero cotangent by its NaN
    /// local derivative.
    pub fn cotangent_reach(&self, live: &[bool]) -> (Vec<bool>, Vec<bool>) {
        let t = self.tangent_of.as_ref().expect("a tangent loop");
        let (pk, pc) = (t.primal.n_consts, t.primal.n_carries());
        let mut results = vec![false; self.n_carries()];
        for (r, on) in self.results.iter().zip(live) {
            results[*r] |= *on;
        }
        let (consts, carries) = crate::transforms::zeros::loop_cotangent_reach(self, &results);
        (consts[pk..].to_vec(), carries[pc..].to_vec())
    }
}

/// The reverse sweep through `p` for the tangents of its constants at
/// `consts` and of its carries at `carries` (increasing): its backward body
/// is the VJP of the body's next values of those carries alone, so the
/// cotangents of the other carries are symbolic zeros, not zeros that a
/// local derivative multiplies.
pub fn reverse_sweep(p: &Loop, consts: &[usize], carries: &[usize]) -> LoopReverse {
    let c0 = p.carry_param0();
    let wrt: Vec<usize> = consts
        .iter()
        .copied()
        .chain(carries.iter().map(|k| c0 + k))
        .collect();
    let np = p.body.params.len();
    let all: Vec<usize> = (0..np).collect();
    // `back`: params (body params, one cotangent per carry in `carries`),
    // results (the constants' cotangents, the carries' cotangents).
    let back = vjp_cotangents(&rearranged(&p.body, &all, carries), &wrt);
    LoopReverse {
        fwd: Loop {
            results: Vec::new(),
            tangent_of: None,
            ..p.clone()
        },
        back,
        n_acc: consts.len(),
        results: (0..consts.len() + carries.len()).collect(),
    }
}

/// Add `for i in lo..hi { carries = body(consts, i, carries) }` to `f`
/// (JAX's `fori_loop`); its results are the final carries.
pub fn push_for(
    f: &mut Function,
    lo: Var,
    hi: Var,
    consts: &[Var],
    init: &[Var],
    body: Function,
    checkpoint: Checkpoint,
) -> Result<Vec<Var>, String> {
    let l = Loop {
        kind: LoopKind::For,
        n_consts: consts.len(),
        results: (0..body.outs.len()).collect(),
        body,
        cond: None,
        checkpoint,
        tangent_of: None,
    };
    let mut ins = vec![lo, hi];
    ins.extend(consts);
    ins.extend(init);
    f.push_all(Op::Loop(Box::new(l)), &ins)
}

/// Add `while cond(consts, carries) { carries = body(consts, carries) }` to
/// `f` (JAX's `while_loop`); its results are the final carries.
pub fn push_while(
    f: &mut Function,
    consts: &[Var],
    init: &[Var],
    cond: Function,
    body: Function,
    checkpoint: Checkpoint,
) -> Result<Vec<Var>, String> {
    let l = Loop {
        kind: LoopKind::While,
        n_consts: consts.len(),
        results: (0..body.outs.len()).collect(),
        body,
        cond: Some(cond),
        checkpoint,
        tangent_of: None,
    };
    let ins: Vec<Var> = consts.iter().chain(init).copied().collect();
    f.push_all(Op::Loop(Box::new(l)), &ins)
}

impl Checkpoint {
    /// The length of the segments the forward sweep keeps one carry set of,
    /// for the trip count `n` (`None` for a `While` loop); `None` keeps
    /// every step. Every executor of a reverse sweep uses this, so they
    /// all run the same steps.
    pub fn segment(self, n: Option<u64>) -> Option<u64> {
        match self {
            Checkpoint::All => None,
            Checkpoint::Every(k) => Some(k.max(1)),
            Checkpoint::Sqrt => Some(match n {
                Some(n) => ((n as f64).sqrt().ceil() as u64).max(1),
                None => 64,
            }),
        }
    }
    pub fn text(self) -> String {
        match self {
            Checkpoint::All => "all".into(),
            Checkpoint::Every(k) => format!("every:{k}"),
            Checkpoint::Sqrt => "sqrt".into(),
        }
    }
    pub fn parse(s: &str) -> Option<Checkpoint> {
        match s {
            "all" => Some(Checkpoint::All),
            "sqrt" => Some(Checkpoint::Sqrt),
            _ => s
                .strip_prefix("every:")?
                .parse()
                .ok()
                .map(Checkpoint::Every),
        }
    }
}

fn list_text(v: &[usize]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(";")
}

fn kind_text(k: LoopKind) -> &'static str {
    match k {
        LoopKind::For => "for",
        LoopKind::While => "while",
    }
}

impl Loop {
    /// The op's name and arguments in the text form; the functions it holds
    /// follow it (`functions`). A tangent loop is written as its primal loop
    /// and the tangents taken, and rebuilt from them when parsed.
    pub fn header(&self) -> String {
        match &self.tangent_of {
            None => format!(
                "loop[{},{},{},{}]",
                kind_text(self.kind),
                self.n_consts,
                self.checkpoint.text(),
                list_text(&self.results)
            ),
            Some(t) => format!(
                "loop_tangent[{},{},{},{}|{}|{}]",
                kind_text(self.kind),
                t.primal.n_consts,
                self.checkpoint.text(),
                list_text(&t.primal.results),
                list_text(&t.consts),
                list_text(&t.carries)
            ),
        }
    }

    /// The functions the text form writes after the header.
    pub fn functions(&self) -> Vec<&Function> {
        let l = match &self.tangent_of {
            Some(t) => &t.primal,
            None => self,
        };
        std::iter::once(&l.body).chain(&l.cond).collect()
    }

    /// Rebuild from the text form's header arguments and functions.
    pub fn from_text(name: &str, arg: &str, fns: Vec<Function>) -> Result<Loop, String> {
        let bad = || format!("bad op `{name}[{arg}]`");
        let parts: Vec<&str> = arg.split('|').collect();
        let head: Vec<&str> = parts[0].split(',').collect();
        let [kind, n_consts, ckpt, results] = head[..] else {
            return Err(bad());
        };
        let kind = match kind {
            "for" => LoopKind::For,
            "while" => LoopKind::While,
            _ => return Err(bad()),
        };
        let list = |s: &str| -> Result<Vec<usize>, String> {
            s.split(';')
                .filter(|x| !x.is_empty())
                .map(|x| x.parse().map_err(|_| bad()))
                .collect()
        };
        let mut fns = fns.into_iter();
        let body = fns.next().ok_or_else(bad)?;
        let cond = match kind {
            LoopKind::While => Some(fns.next().ok_or_else(bad)?),
            LoopKind::For => None,
        };
        let primal = Loop {
            kind,
            n_consts: n_consts.parse().map_err(|_| bad())?,
            body,
            cond,
            results: list(results)?,
            checkpoint: Checkpoint::parse(ckpt).ok_or_else(bad)?,
            tangent_of: None,
        };
        match (name, &parts[1..]) {
            ("loop", []) => Ok(primal),
            ("loop_tangent", [tc, fc]) => Ok(primal.tangent(&list(tc)?, &list(fc)?)),
            _ => Err(bad()),
        }
    }
}

impl LoopReverse {
    pub fn header(&self) -> String {
        format!(
            "loop_reverse[{},{},{},{}|{}]",
            kind_text(self.fwd.kind),
            self.fwd.n_consts,
            self.fwd.checkpoint.text(),
            self.n_acc,
            list_text(&self.results)
        )
    }

    pub fn functions(&self) -> Vec<&Function> {
        std::iter::once(&self.fwd.body)
            .chain(&self.fwd.cond)
            .chain(std::iter::once(&self.back))
            .collect()
    }

    pub fn from_text(arg: &str, fns: Vec<Function>) -> Result<LoopReverse, String> {
        let bad = || format!("bad op `loop_reverse[{arg}]`");
        let (head, results) = arg.split_once('|').ok_or_else(bad)?;
        let (rest, n_acc) = head.rsplit_once(',').ok_or_else(bad)?;
        let mut fns = fns;
        let back = fns.pop().ok_or_else(bad)?;
        let fwd = Loop::from_text("loop", &format!("{rest},"), fns)?;
        Ok(LoopReverse {
            fwd,
            back,
            n_acc: n_acc.parse().map_err(|_| bad())?,
            results: results
                .split(';')
                .filter(|x| !x.is_empty())
                .map(|x| x.parse().map_err(|_| bad()))
                .collect::<Result<_, _>>()?,
        })
    }

    pub fn n_r(&self) -> usize {
        self.back.outs.len() - self.n_acc
    }

    pub fn infer(&self, ins: &[&Type]) -> Result<Vec<Type>, String> {
        let nf = self.fwd.n_operands();
        if ins.len() != nf + self.n_r() {
            return Err(format!(
                "loop_reverse takes {} operands, got {}",
                nf + self.n_r(),
                ins.len()
            ));
        }
        self.fwd.check(&ins[..nf])?;
        let np = self.fwd.body.params.len();
        if self.back.params.len() != np + self.n_r() {
            return Err("loop_reverse: the backward body takes the wrong number of params".into());
        }
        for k in 0..np {
            if self.back.ty(self.back.params[k]) != self.fwd.body.ty(self.fwd.body.params[k]) {
                return Err(format!(
                    "loop_reverse: backward param {k} differs from the body's"
                ));
            }
        }
        for k in 0..self.n_r() {
            let p = self.back.ty(self.back.params[np + k]);
            if p != self.back.ty(self.back.outs[self.n_acc + k]) || p != ins[nf + k] {
                return Err(format!(
                    "loop_reverse: cotangent {k} has inconsistent types"
                ));
            }
        }
        if self.results.iter().any(|r| *r >= self.back.outs.len()) {
            return Err("a loop_reverse result names no value".into());
        }
        Ok(self
            .results
            .iter()
            .map(|r| self.back.ty(self.back.outs[*r]).clone())
            .collect())
    }

    /// The trip count of the forward sweep's segments (`Checkpoint`).
    fn segment(&self, n: Option<u64>) -> Option<u64> {
        self.fwd.checkpoint.segment(n)
    }

    /// Reference evaluation: forward, keeping carries as `checkpoint` says,
    /// then backward. The largest number of carries held at once is
    /// reported to `TAPE_PEAK`.
    pub fn eval(&self, ins: &[&Tensor]) -> Result<Vec<Tensor>, String> {
        let f = &self.fwd;
        let (nb, nk) = (f.n_bounds(), f.n_consts);
        let nf = f.n_operands();
        let consts: Vec<Tensor> = ins[nb..nb + nk].iter().map(|t| (*t).clone()).collect();
        let lo = if nb > 0 { ins[0].data[0] as i64 } else { 0 };
        let known_n = (nb > 0).then(|| Loop::trip(ins[0].data[0], ins[1].data[0]));
        let seg = self.segment(known_n);
        let per_step: usize = (0..f.n_carries())
            .map(|k| ins[nb + nk + k].numel() * f.carry_type(k).dtype.size_bytes())
            .sum();
        let limit = tape_limit();
        let what = || format!("a `{}` loop", f.kind.keyword());
        let mut tape: Vec<Vec<Tensor>> = Vec::new();
        let (_, n) = f.run(&ins[..nf], |k, c| {
            if seg.map_or(true, |s| k % s == 0) {
                let bytes = (tape.len() + 1).saturating_mul(per_step);
                if bytes > limit {
                    return Err(tape_limit_error(&what(), bytes, k + 1, limit));
                }
                tape.push(c.to_vec());
            }
            Ok(())
        })?;
        let mut peak = tape.len();
        let mut acc: Option<Vec<Tensor>> = None;
        let mut r: Vec<Tensor> = ins[nf..].iter().map(|t| (*t).clone()).collect();
        let s = seg.unwrap_or(1);
        let mut k_end = n;
        while k_end > 0 {
            let start = (k_end - 1) / s * s;
            let bytes = (tape.len() + (k_end - start) as usize).saturating_mul(per_step);
            if seg.is_some() && bytes > limit {
                return Err(tape_limit_error(&what(), bytes, n, limit));
            }
            // The carries of steps start..k_end, recomputed from the checkpoint.
            let mut steps = vec![tape[(start / s) as usize].clone()];
            for k in start..k_end - 1 {
                let c = steps.last().expect("one").clone();
                steps.push(f.step(&consts, lo + k as i64, c)?);
            }
            if seg.is_some() {
                peak = peak.max(tape.len() + steps.len());
            }
            for k in (start..k_end).rev() {
                let mut args = consts.clone();
                if nb > 0 {
                    args.push(Tensor::scalar(DType::I64, (lo + k as i64) as f64));
                }
                args.extend(steps[(k - start) as usize].iter().cloned());
                args.extend(r);
                let mut out = interp::eval(&self.back, &args)?;
                r = out.split_off(self.n_acc);
                acc = Some(match acc {
                    None => out,
                    Some(a) => a.iter().zip(&out).map(|(x, y)| add(x, y)).collect(),
                });
            }
            k_end = start;
        }
        TAPE_PEAK.with(|p| p.set(p.get().max(peak * per_step)));
        let acc = match acc {
            Some(a) => a,
            None => {
                // No step ran: zeros shaped as one step's would be (the
                // backward body is pure, so running it for shapes is safe).
                let mut args = consts.clone();
                if nb > 0 {
                    args.push(Tensor::scalar(DType::I64, lo as f64));
                }
                args.extend(ins[nb + nk..].iter().map(|t| (*t).clone()));
                let out = interp::eval(&self.back, &args)?;
                out[..self.n_acc]
                    .iter()
                    .map(|t| Tensor::new(t.dtype, t.shape.clone(), vec![0.0; t.numel()]))
                    .collect()
            }
        };
        let all: Vec<Tensor> = acc.into_iter().chain(r).collect();
        Ok(self.results.iter().map(|i| all[*i].clone()).collect())
    }
}

thread_local! {
    /// The most bytes of loop carries a reverse sweep of the reference
    /// interpreter has held at once on this thread.
    static TAPE_PEAK: Cell<usize> = const { Cell::new(0) };
}

/// The largest tape (bytes of stored carries) a reverse sweep evaluated by
/// the reference interpreter on this thread has held since the last reset.
pub fn tape_peak_bytes() -> usize {
    TAPE_PEAK.with(Cell::get)
}

/// Record a reverse sweep's largest tape (generated scalar code calls this).
pub fn note_tape_bytes(bytes: usize) {
    TAPE_PEAK.with(|p| p.set(p.get().max(bytes)));
}

/// Reset `tape_peak_bytes`.
pub fn reset_tape_peak() {
    TAPE_PEAK.with(|p| p.set(0));
}

/// The environment variable that sets the tape limit, in bytes (read on
/// first use; `set_tape_limit` overrides it).
pub const TAPE_LIMIT_ENV: &str = "OXLA_TAPE_LIMIT_BYTES";

/// The process-wide tape limit in bytes; 0 until first read or set.
static TAPE_LIMIT: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// A limit for this thread only (`with_tape_limit`).
    static TAPE_LIMIT_HERE: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The most bytes of carries a reverse sweep may keep on its tape before it
/// fails: `with_tape_limit`'s on this thread, else the last
/// `set_tape_limit`, else `OXLA_TAPE_LIMIT_BYTES`, else a quarter of the
/// machine's physical memory (`MemTotal` of `/proc/meminfo`; 4 GiB where
/// that cannot be read).
///
/// Why a limit: a `while` loop that never ends spins in the forward pass
/// (as JAX's `while_loop` does), but under reverse mode each step also
/// keeps its carries, so the tape grew until the allocator aborted the
/// process (SIGABRT at 2.1 GB, no message). With the limit the sweep fails
/// with an error naming the function and the loop instead.
pub fn tape_limit() -> usize {
    if let Some(l) = TAPE_LIMIT_HERE.with(Cell::get) {
        return l;
    }
    let set = TAPE_LIMIT.load(Ordering::Relaxed);
    if set > 0 {
        return set;
    }
    let l = std::env::var(TAPE_LIMIT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|l| *l > 0)
        .unwrap_or_else(default_tape_limit);
    TAPE_LIMIT.store(l, Ordering::Relaxed);
    l
}

/// Set the tape limit for every thread from now on (`0` means 1 byte:
/// every reverse sweep that keeps anything fails; `usize::MAX` means no
/// limit).
pub fn set_tape_limit(bytes: usize) {
    TAPE_LIMIT.store(bytes.max(1), Ordering::Relaxed);
}

/// Run `f` with the tape limit `bytes` on this thread (where loop steps
/// run: the host drives every loop), restoring the previous one after,
/// also when `f` panics.
pub fn with_tape_limit<R>(bytes: usize, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<usize>);
    impl Drop for Restore {
        fn drop(&mut self) {
            TAPE_LIMIT_HERE.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(TAPE_LIMIT_HERE.with(|c| c.replace(Some(bytes.max(1)))));
    f()
}

/// A quarter of the physical memory, or 4 GiB where it is unknown.
fn default_tape_limit() -> usize {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        let line = m.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        usize::try_from(kib.saturating_mul(1024)).ok()
    });
    match total {
        Some(t) if t > 0 => t / 4,
        _ => (4u64 << 30).min(usize::MAX as u64) as usize,
    }
}

/// The error of a reverse sweep whose tape would pass the limit: `what`
/// names the function and the loop, `bytes` the tape it would keep after
/// `steps` forward steps.
pub fn tape_limit_error(what: &str, bytes: usize, steps: u64, limit: usize) -> String {
    format!(
        "{what}: the reverse sweep would keep {bytes} bytes of loop carries after {steps} steps, \
         over the tape limit of {limit} bytes. A loop that never ends spins in the forward pass \
         (as JAX's does), but under reverse mode each step is kept until the process runs out \
         of memory: check that the loop ends. If it does, keep fewer steps with \
         `oxla::checkpoint(..)` or `oxla::checkpoint_every(k, ..)` around its range or \
         condition, or raise the limit (`{TAPE_LIMIT_ENV}`, \
         `oxla_core::ops::control::set_tape_limit`)"
    )
}

fn add(x: &Tensor, y: &Tensor) -> Tensor {
    Tensor::new(
        x.dtype,
        x.shape.clone(),
        x.data.iter().zip(&y.data).map(|(a, b)| a + b).collect(),
    )
}

/// `f` with its params reordered (`order[k]` is the old index of new param
/// `k`) and its results picked by `outs`, numbered densely again (so that
/// the text form reads back to an equal function).
pub(crate) fn rearranged(f: &Function, order: &[usize], outs: &[usize]) -> Function {
    let mut g = Function::new(&f.name);
    let mut map = vec![None; f.types.len()];
    for i in order {
        let p = f.params[*i];
        map[p.index()] = Some(g.add_param(&f.param_names[*i], f.ty(p).clone()));
    }
    for e in &f.eqns {
        g.copy_eqn(e, &mut map);
    }
    g.outs = outs
        .iter()
        .map(|i| map[f.outs[*i].index()].expect("defined"))
        .collect();
    g
}

/// `f` with params in a new layout: `order[k]` is the old param that new
/// param `k` is, or `None` for a new param it ignores, typed like param `k`
/// of `like` (a while loop's body, whose params are laid out as the
/// condition's).
fn with_unused_params(f: &Function, order: &[Option<usize>], like: &Function) -> Function {
    let mut g = Function::new(&f.name);
    let mut map = vec![None; f.types.len()];
    for (k, o) in order.iter().enumerate() {
        match o {
            Some(i) => {
                let p = f.params[*i];
                map[p.index()] = Some(g.add_param(&f.param_names[*i], f.ty(p).clone()));
            }
            None => {
                let lk = like.params[k];
                g.add_param(&like.param_names[k], like.ty(lk).clone());
            }
        }
    }
    for e in &f.eqns {
        g.copy_eqn(e, &mut map);
    }
    g.outs = f
        .outs
        .iter()
        .map(|o| map[o.index()].expect("defined"))
        .collect();
    g
}

/// `f` with the params `keep[k] == None` removed and read as zeros instead
/// (`keep[k]` is the old index of the param in position `k`).
fn zero_params(f: &Function, keep: &[Option<usize>]) -> Function {
    let mut g = Function::new(&f.name);
    let mut map = vec![None; f.types.len()];
    for k in keep.iter().flatten() {
        let p = f.params[*k];
        map[p.index()] = Some(g.add_param(&f.param_names[*k], f.ty(p).clone()));
    }
    for (k, p) in f.params.iter().enumerate() {
        if !keep.contains(&Some(k)) {
            let t = f.ty(*p).clone();
            map[p.index()] = Some(g.full(0.0, t.dtype, &t.shape));
        }
    }
    for e in &f.eqns {
        g.copy_eqn(e, &mut map);
    }
    g.outs = f
        .outs
        .iter()
        .map(|o| map[o.index()].expect("defined"))
        .collect();
    crate::transforms::simplify::simplify(&g)
}

/// Copy `f`'s equations into `g` with `args` for its params; its results.
pub(crate) fn inline(g: &mut Function, f: &Function, args: &[Var]) -> Vec<Var> {
    let mut map = vec![None; f.types.len()];
    for (p, a) in f.params.iter().zip(args) {
        map[p.index()] = Some(*a);
    }
    for e in &f.eqns {
        g.copy_eqn(e, &mut map);
    }
    f.outs
        .iter()
        .map(|o| map[o.index()].expect("defined"))
        .collect()
}

/// For the tangent loop `l`: the positions of the operands of its primal
/// loop (which its transpose `transpose_reverse` takes, before the
/// cotangents), and of its tangent operands, in the order of that
/// transpose's results.
fn reverse_positions(l: &Loop) -> (Vec<usize>, Vec<usize>) {
    let t = l.tangent_of.as_ref().expect("a tangent loop");
    let (nb, pk, pc) = (l.n_bounds(), t.primal.n_consts, t.primal.n_carries());
    let nk = l.n_consts;
    let primal = (0..nb + pk).chain(nb + nk..nb + nk + pc).collect();
    let tangents = (nb + pk..nb + nk)
        .chain(nb + nk + pc..l.n_operands())
        .collect();
    (primal, tangents)
}

/// Transpose rule of a tangent loop (`known`, `cts`: as `Op::transpose`
/// takes them): its reverse sweep, for the tangent carries and constants a
/// cotangent reaches only. The others' cotangents are symbolic zeros
/// (`Loop::cotangent_reach`).
pub(crate) fn loop_transpose(
    g: &mut Function,
    l: &Loop,
    known: &[Option<Var>],
    cts: &[Option<Var>],
) -> Vec<Option<Var>> {
    let t = l
        .tangent_of
        .as_ref()
        .expect("internal error: a linear loop is a tangent loop");
    let live: Vec<bool> = cts.iter().map(Option::is_some).collect();
    let (const_on, carry_on) = l.cotangent_reach(&live);
    let consts: Vec<usize> = (0..t.consts.len())
        .filter(|q| const_on[*q])
        .map(|q| t.consts[q])
        .collect();
    let carries: Vec<usize> = (0..t.carries.len())
        .filter(|q| carry_on[*q])
        .map(|q| t.carries[q])
        .collect();
    // The cotangent of each kept tangent carry after the loop (zero for one
    // reached only through the body).
    let pc = t.primal.n_carries();
    let seeds: Vec<Var> = (0..t.carries.len())
        .filter(|q| carry_on[*q])
        .map(|q| {
            let r = l.results.iter().position(|r| *r == pc + q);
            match r.and_then(|r| cts[r]) {
                Some(c) => c,
                None => {
                    let ty = l.carry_type(pc + q);
                    g.full(0.0, ty.dtype, &ty.shape)
                }
            }
        })
        .collect();
    let (primal_at, tangent_at) = reverse_positions(l);
    let mut ins: Vec<Var> = primal_at
        .iter()
        .map(|k| known[*k].expect("internal error: a loop's primal operand"))
        .collect();
    ins.extend(seeds);
    let sweep = reverse_sweep(&t.primal, &consts, &carries);
    let back = g
        .push_all(Op::LoopReverse(Box::new(sweep)), &ins)
        .expect("internal error: transposing a loop");
    let mut out = vec![None; known.len()];
    let reached = tangent_at
        .iter()
        .zip(const_on.iter().chain(&carry_on))
        .filter(|(_, on)| **on);
    for ((k, _), c) in reached.zip(back) {
        out[*k] = Some(c);
    }
    out
}

// ---- JVP ----

/// Which constants of `l` have a tangent among the operand tangents `t`,
/// and which carries get one: the float carries whose tangent may be
/// nonzero at some step (`zeros::loop_tangent_reach`, a fixpoint, as JAX's
/// loop JVPs find theirs). Every other carry's tangent is a symbolic zero
/// in every step, never a zero tangent carry that the body would multiply
/// by its local derivatives (0·inf = NaN where a slope is infinite).
fn tangent_selection(l: &Loop, t: &[Option<Var>]) -> (Vec<usize>, Vec<usize>) {
    let nb = l.n_bounds();
    let consts = (0..l.n_consts).filter(|k| t[nb + k].is_some()).collect();
    let on: Vec<bool> = t[..l.n_operands()].iter().map(Option::is_some).collect();
    let (_, reach) = crate::transforms::zeros::loop_tangent_reach(l, &on);
    let carries = (0..l.n_carries()).filter(|k| reach[*k]).collect();
    (consts, carries)
}

/// The operands of `l.tangent(consts, carries)`: `l`'s bounds and
/// constants, the constants' tangents, the initial carries, and their
/// tangents (zeros where `t` has none).
fn tangent_operands(
    g: &mut Function,
    l: &Loop,
    ins: &[Var],
    t: &[Option<Var>],
    consts: &[usize],
    carries: &[usize],
) -> Vec<Var> {
    let (nb, nk) = (l.n_bounds(), l.n_consts);
    let mut operands: Vec<Var> = ins[..nb + nk].to_vec();
    operands.extend(consts.iter().map(|k| t[nb + k].expect("a tangent")));
    operands.extend(&ins[nb + nk..l.n_operands()]);
    for k in carries {
        operands.push(t[nb + nk + k].unwrap_or_else(|| g.zeros_like(ins[nb + nk + k])));
    }
    operands
}

/// JVP of a loop: the primal results, and a tangent for each (`None`: zero).
pub fn loop_jvp(
    g: &mut Function,
    l: &Loop,
    ins: &[Var],
    t: &[Option<Var>],
) -> (Vec<Var>, Vec<Option<Var>>) {
    let primal = g
        .push_all(Op::Loop(Box::new(l.clone())), ins)
        .expect("internal error: copying a loop");
    let (consts, carries) = tangent_selection(l, t);
    let tl = l.tangent(&consts, &carries);
    let operands = tangent_operands(g, l, ins, t, &consts, &carries);
    let tangents = g
        .push_all(Op::Loop(Box::new(tl)), &operands)
        .expect("internal error: building a tangent loop");
    let ts = l
        .results
        .iter()
        .map(|r| carries.iter().position(|k| k == r).map(|p| tangents[p]))
        .collect();
    (primal, ts)
}

/// JVP of a reverse sweep (forward over reverse).
pub fn reverse_jvp(
    g: &mut Function,
    lr: &LoopReverse,
    ins: &[Var],
    t: &[Option<Var>],
) -> (Vec<Var>, Vec<Option<Var>>) {
    let primal = g
        .push_all(Op::LoopReverse(Box::new(lr.clone())), ins)
        .expect("internal error: copying a reverse loop");
    let f = &lr.fwd;
    let (nk, nc) = (f.n_consts, f.n_carries());
    let (na, nr) = (lr.n_acc, lr.n_r());
    let nf = f.n_operands();
    let (consts, carries) = tangent_selection(f, t);
    let fwd = Loop {
        tangent_of: None,
        results: Vec::new(),
        ..f.tangent(&consts, &carries)
    };
    // The backward body's JVP, laid out as (consts, t_consts, [i], c, t_c, r, t_r)
    // → (a, t_a, r', t_r').
    let c0 = f.carry_param0();
    let np = f.body.params.len();
    let wrt: Vec<usize> = consts
        .iter()
        .copied()
        .chain(carries.iter().map(|k| c0 + k))
        .chain(np..np + nr)
        .collect();
    let j = jvp_wrt(&lr.back, &wrt);
    let nbp = lr.back.params.len();
    let (tk, tc) = (nbp, nbp + consts.len());
    let tr = tc + carries.len();
    let order: Vec<usize> = (0..nk)
        .chain(tk..tk + consts.len())
        .chain(nk..c0 + nc)
        .chain(tc..tc + carries.len())
        .chain(np..np + nr)
        .chain(tr..tr + nr)
        .collect();
    let no = na + nr;
    let outs: Vec<usize> = (0..na)
        .chain(no..no + na)
        .chain(na..no)
        .chain(no + na..2 * no)
        .collect();
    let back = rearranged(&j, &order, &outs);
    let results: Vec<usize> = lr
        .results
        .iter()
        .map(|q| {
            if *q < na {
                na + q
            } else {
                2 * na + nr + (q - na)
            }
        })
        .collect();
    let tl = LoopReverse {
        fwd,
        back,
        n_acc: 2 * na,
        results,
    };
    let mut operands = tangent_operands(g, f, ins, t, &consts, &carries);
    operands.extend(&ins[nf..]);
    for k in 0..nr {
        operands.push(t[nf + k].unwrap_or_else(|| g.zeros_like(ins[nf + k])));
    }
    let tangents = g
        .push_all(Op::LoopReverse(Box::new(tl)), &operands)
        .expect("internal error: building the JVP of a reverse loop");
    (primal, tangents.into_iter().map(Some).collect())
}

// ---- batching ----

/// A per-example mask `[b]` as a select predicate over `like` (`[b, ...]`).
fn mask_over(g: &mut Function, mask: Var, like: Var) -> Var {
    let shape = g.shape(like).clone();
    g.broadcast(mask, shape, vec![0])
}

/// The per-example mask `lo_b ≤ i < hi_b` of step `i` (an i64 scalar) of a
/// loop batched over per-example bounds (f64 vectors of `size`).
fn in_range(h: &mut Function, i: Var, lo_b: Var, hi_b: Var, size: &Dim) -> Var {
    let i_f = h
        .push(Op::Convert { dtype: DType::F64 }, &[i])
        .expect("convert");
    let i_b = h.broadcast(i_f, Shape(vec![size.clone()]), vec![]);
    let started = h.cmp(CmpOp::Le, lo_b, i_b);
    let before_end = h.cmp(CmpOp::Lt, i_b, hi_b);
    let no = h.full(0.0, DType::Bool, &Shape(vec![size.clone()]));
    h.select(started, before_end, no)
}

/// Whether any element of the bool vector `p` is true.
fn any(g: &mut Function, p: Var) -> Var {
    let x = g
        .push(Op::Convert { dtype: DType::F32 }, &[p])
        .expect("convert");
    let m = g
        .push(Op::ReduceMax { axes: vec![0] }, &[x])
        .expect("reduce_max");
    let half = g.literal(0.5, DType::F32);
    g.cmp(CmpOp::Gt, m, half)
}

/// The batched loop: every carry batched; consts batched where `batched`
/// says. A batched trip count or condition masks the steps of examples that
/// are done. Returns the new loop and its operands, and, for a masked loop,
/// nothing else: its body freezes finished examples itself.
fn batch_loop(
    g: &mut Function,
    l: &Loop,
    ins: &[Var],
    batched: &[bool],
    size: &Dim,
) -> (Loop, Vec<Var>) {
    let (nb, nk, nc) = (l.n_bounds(), l.n_consts, l.n_carries());
    let mut operands: Vec<Var> = Vec::new();
    let bounds_batched = batched[..nb].iter().any(|b| *b);
    // The bounds of the batched loop, and the per-example bounds as extra constants.
    let mut extra: Vec<Var> = Vec::new();
    if nb > 0 {
        if bounds_batched {
            let b: Vec<Var> = (0..2)
                .map(|k| {
                    if batched[k] {
                        ins[k]
                    } else {
                        g.broadcast_batch(ins[k], size)
                    }
                })
                .collect();
            let as_f = |g: &mut Function, v: Var| {
                g.push(Op::Convert { dtype: DType::F64 }, &[v])
                    .expect("convert")
            };
            let (lo_f, hi_f) = (as_f(g, b[0]), as_f(g, b[1]));
            let lo = g
                .push(Op::ReduceMin { axes: vec![0] }, &[lo_f])
                .expect("reduce_min");
            let hi = g
                .push(Op::ReduceMax { axes: vec![0] }, &[hi_f])
                .expect("reduce_max");
            // An empty batch runs no step.
            let hi = g.binary(crate::ops::elementwise::BinaryOp::Max, hi, lo);
            for v in [lo, hi] {
                operands.push(
                    g.push(Op::Convert { dtype: DType::I64 }, &[v])
                        .expect("convert"),
                );
            }
            extra = vec![lo_f, hi_f];
        } else {
            operands.extend(&ins[..2]);
        }
    }
    operands.extend(&ins[nb..nb + nk]);
    operands.extend(&extra);
    for k in 0..nc {
        let v = ins[nb + nk + k];
        operands.push(if batched[nb + nk + k] {
            v
        } else {
            g.broadcast_batch(v, size)
        });
    }
    let const_axes: Vec<Option<usize>> = (0..nk).map(|k| batched[nb + k].then_some(0)).collect();
    let body = batch_body(l, &const_axes, extra.len(), size);
    let cond = l.cond.as_ref().map(|c| {
        let mut axes = const_axes.clone();
        axes.extend(std::iter::repeat(Some(0)).take(nc));
        let cb = vmap_sized(c, &axes, &[Some(0)], size)
            .expect("internal error: batching a loop condition");
        let mut h = Function::new(&c.name);
        let ps: Vec<Var> = cb
            .params
            .iter()
            .zip(&cb.param_names)
            .map(|(p, n)| h.add_param(n, cb.ty(*p).clone()))
            .collect();
        let p = inline(&mut h, &cb, &ps)[0];
        let a = any(&mut h, p);
        h.outs = vec![a];
        h
    });
    let bl = Loop {
        kind: l.kind,
        n_consts: nk + extra.len(),
        body,
        cond,
        results: l.results.clone(),
        checkpoint: l.checkpoint,
        tangent_of: None,
    };
    (bl, operands)
}

/// The batched body with its per-example mask; params (consts, [lo_b, hi_b],
/// [i], carries), every carry batched.
fn batch_body(l: &Loop, const_axes: &[Option<usize>], n_extra: usize, size: &Dim) -> Function {
    let (nk, nc) = (l.n_consts, l.n_carries());
    let mut axes = const_axes.to_vec();
    if l.kind == LoopKind::For {
        axes.push(None);
    }
    axes.extend(std::iter::repeat(Some(0)).take(nc));
    let bb = vmap_sized(&l.body, &axes, &vec![Some(0); nc], size)
        .expect("internal error: batching a loop body");
    let masked = n_extra > 0 || l.kind == LoopKind::While;
    if !masked {
        return bb;
    }
    let mut h = Function::new(&l.body.name);
    let consts: Vec<Var> = (0..nk)
        .map(|k| h.add_param(&bb.param_names[k], bb.ty(bb.params[k]).clone()))
        .collect();
    let bounds_ty = Type::new(DType::F64, Shape(vec![size.clone()]));
    let extra: Vec<Var> = (0..n_extra)
        .map(|k| h.add_param(&format!("bound{k}"), bounds_ty.clone()))
        .collect();
    let i = (l.kind == LoopKind::For).then(|| h.add_param("i", Type::scalar(DType::I64)));
    let c0 = nk + i.map_or(0, |_| 1);
    let carries: Vec<Var> = (0..nc)
        .map(|k| h.add_param(&bb.param_names[c0 + k], bb.ty(bb.params[c0 + k]).clone()))
        .collect();
    let mut args = consts.clone();
    args.extend(i);
    args.extend(&carries);
    let next = inline(&mut h, &bb, &args);
    let mask = match i {
        Some(i) => in_range(&mut h, i, extra[0], extra[1], size),
        None => {
            let mut axes = const_axes.to_vec();
            axes.extend(std::iter::repeat(Some(0)).take(nc));
            let c = l.cond.as_ref().expect("a while loop has a condition");
            let cb = vmap_sized(c, &axes, &[Some(0)], size)
                .expect("internal error: batching a loop condition");
            let mut cargs = consts.clone();
            cargs.extend(&carries);
            inline(&mut h, &cb, &cargs)[0]
        }
    };
    h.outs = next
        .iter()
        .zip(&carries)
        .map(|(n, c)| {
            let m = mask_over(&mut h, mask, *c);
            h.select(m, *n, *c)
        })
        .collect();
    crate::transforms::simplify::simplify(&h)
}

/// Batching rule of a loop: every result batched.
pub fn loop_batch(
    g: &mut Function,
    l: &Loop,
    ins: &[Var],
    batched: &[bool],
    size: &Dim,
) -> Vec<Var> {
    let (bl, operands) = batch_loop(g, l, ins, batched, size);
    g.push_all(Op::Loop(Box::new(bl)), &operands)
        .expect("internal error: batching a loop")
}

/// Batching rule of a reverse sweep: the forward loop batched as a loop
/// is, the backward body batched and masked by the same per-example mask
/// (a finished example's cotangents pass through, adding nothing).
pub fn reverse_batch(
    g: &mut Function,
    lr: &LoopReverse,
    ins: &[Var],
    batched: &[bool],
    size: &Dim,
) -> Vec<Var> {
    let f = &lr.fwd;
    let nf = f.n_operands();
    let (bl, mut operands) = batch_loop(g, f, &ins[..nf], &batched[..nf], size);
    for k in 0..lr.n_r() {
        let v = ins[nf + k];
        operands.push(if batched[nf + k] {
            v
        } else {
            g.broadcast_batch(v, size)
        });
    }
    let (nk, nc, na, nr) = (f.n_consts, f.n_carries(), lr.n_acc, lr.n_r());
    let n_extra = bl.n_consts - nk;
    let nb = f.n_bounds();
    let mut axes: Vec<Option<usize>> = (0..nk).map(|k| batched[nb + k].then_some(0)).collect();
    if f.kind == LoopKind::For {
        axes.push(None);
    }
    axes.extend(std::iter::repeat(Some(0)).take(nc + nr));
    let bb = vmap_sized(&lr.back, &axes, &vec![Some(0); na + nr], size)
        .expect("internal error: batching a reverse loop");
    let back = if n_extra == 0 && f.kind == LoopKind::For {
        bb
    } else {
        // Same params as the batched body plus the cotangents.
        let mut h = Function::new(&lr.back.name);
        let body = &bl.body;
        let ps: Vec<Var> = body
            .params
            .iter()
            .zip(&body.param_names)
            .map(|(p, n)| h.add_param(n, body.ty(*p).clone()))
            .collect();
        let rs: Vec<Var> = (0..nr)
            .map(|k| {
                let p = bb.params[bb.params.len() - nr + k];
                h.add_param(&bb.param_names[bb.params.len() - nr + k], bb.ty(p).clone())
            })
            .collect();
        // The batched back body's args: consts, [i], carries, r (no extra bounds).
        let mut args: Vec<Var> = ps[..nk].to_vec();
        args.extend(&ps[nk + n_extra..]);
        args.extend(&rs);
        let out = inline(&mut h, &bb, &args);
        // The mask: the masked body's own, recomputed from its params.
        let carries = &ps[ps.len() - nc..];
        let mask = step_mask(&mut h, &bl, f, &ps, carries, size);
        let mut outs = Vec::new();
        for (k, o) in out.iter().enumerate() {
            let keep = if k < na { h.zeros_like(*o) } else { rs[k - na] };
            let m = mask_over(&mut h, mask, *o);
            outs.push(h.select(m, *o, keep));
        }
        h.outs = outs;
        crate::transforms::simplify::simplify(&h)
    };
    let rl = LoopReverse {
        fwd: bl,
        back,
        n_acc: na,
        results: lr.results.clone(),
    };
    g.push_all(Op::LoopReverse(Box::new(rl)), &operands)
        .expect("internal error: batching a reverse loop")
}

/// The per-example mask of a step of the batched loop `bl` (of `f`), from
/// the batched body's params `ps`.
fn step_mask(
    h: &mut Function,
    bl: &Loop,
    f: &Loop,
    ps: &[Var],
    carries: &[Var],
    size: &Dim,
) -> Var {
    let nk = f.n_consts;
    let n_extra = bl.n_consts - nk;
    match f.kind {
        LoopKind::For => {
            debug_assert_eq!(n_extra, 2);
            in_range(h, ps[bl.n_consts], ps[nk], ps[nk + 1], size)
        }
        LoopKind::While => {
            let c = f.cond.as_ref().expect("a while loop has a condition");
            let axes: Vec<Option<usize>> = (0..nk)
                .map(|k| {
                    (bl.body.shape(bl.body.params[k]).rank() > c.shape(c.params[k]).rank())
                        .then_some(0)
                })
                .chain(std::iter::repeat(Some(0)).take(carries.len()))
                .collect();
            let cb = vmap_sized(c, &axes, &[Some(0)], size)
                .expect("internal error: batching a loop condition");
            let mut args: Vec<Var> = ps[..nk].to_vec();
            args.extend(carries);
            inline(h, &cb, &args)[0]
        }
    }
}

// ---- cond ----

/// `if pred { then(consts) } else { otherwise(consts) }`, in the manner of
/// JAX's `lax.cond`: only the taken branch runs. Operands: the predicate (a
/// bool scalar), then the constants the branches read; both branches take
/// the constants as params and give results of the same types, which are
/// the op's results.
///
/// Rules:
/// - JVP: the primal cond, plus a *tangent cond* on the same predicate whose
///   branches are the branches' JVPs (constants: the primal ones, then the
///   tangents taken; results: the tangents of the float results). It is
///   linear in its trailing `n_linear` constants.
/// - Transpose of a tangent cond: a cond on the same predicate of the
///   branches' transposes (each branch's VJP with respect to its linear
///   params, which a linear function's VJP does not read). Reverse over
///   reverse therefore needs nothing more.
/// - Batching: an unbatched predicate gives a cond of the batched branches;
///   a batched one runs both batched branches and selects per example, as
///   JAX does.
#[derive(Clone, Debug, PartialEq)]
pub struct Cond {
    /// Runs when the predicate holds.
    pub then: Function,
    /// Runs when it does not.
    pub otherwise: Function,
    /// How many trailing constants are tangents the branches are linear in
    /// (set on the tangent cond of a JVP; 0 otherwise).
    pub n_linear: usize,
}

impl Cond {
    pub fn n_consts(&self) -> usize {
        self.then.params.len()
    }
    pub fn n_operands(&self) -> usize {
        1 + self.n_consts()
    }
    pub fn branches(&self) -> [&Function; 2] {
        [&self.then, &self.otherwise]
    }

    pub fn infer(&self, ins: &[&Type]) -> Result<Vec<Type>, String> {
        if ins.len() != self.n_operands() {
            return Err(format!(
                "cond takes {} operands, got {}",
                self.n_operands(),
                ins.len()
            ));
        }
        if *ins[0] != Type::scalar(DType::Bool) {
            return Err(format!(
                "a cond's predicate must be a bool scalar, got {}",
                ins[0]
            ));
        }
        if self.n_linear > self.n_consts() {
            return Err("a cond is linear in more constants than it has".into());
        }
        for (name, b) in [("then", &self.then), ("else", &self.otherwise)] {
            if b.params.len() != self.n_consts() {
                return Err(format!(
                    "cond: the {name} branch takes {} params, the cond passes {}",
                    b.params.len(),
                    self.n_consts()
                ));
            }
            for (k, (p, t)) in b.params.iter().zip(&ins[1..]).enumerate() {
                if b.ty(*p) != *t {
                    return Err(format!(
                        "cond constant {k}: the {name} branch takes {}, the operand is {t}",
                        b.ty(*p)
                    ));
                }
            }
        }
        let types =
            |b: &Function| -> Vec<Type> { b.outs.iter().map(|o| b.ty(*o).clone()).collect() };
        let (t, e) = (types(&self.then), types(&self.otherwise));
        if t != e {
            let list = |v: &[Type]| {
                v.iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(format!(
                "cond: the branches' results differ: ({}) and ({})",
                list(&t),
                list(&e)
            ));
        }
        Ok(t)
    }

    /// Operand `i` is one of the tangents the cond is linear in.
    pub fn is_linear_in(&self, i: usize) -> bool {
        i >= self.n_operands() - self.n_linear && i < self.n_operands()
    }

    /// Reference evaluation: the taken branch only.
    pub fn eval(&self, ins: &[&Tensor]) -> Result<Vec<Tensor>, String> {
        let consts: Vec<Tensor> = ins[1..].iter().map(|t| (*t).clone()).collect();
        let taken = if ins[0].data[0] != 0.0 {
            &self.then
        } else {
            &self.otherwise
        };
        interp::eval(taken, &consts)
    }

    /// Each branch mapped by `f`, keeping `n_linear`.
    fn map_branches(&self, mut f: impl FnMut(&Function) -> Function, n_linear: usize) -> Cond {
        Cond {
            then: f(&self.then),
            otherwise: f(&self.otherwise),
            n_linear,
        }
    }

    /// The tangent cond for tangents of the constants at `consts`: params
    /// (constants, their tangents), results the tangents of the float
    /// results (at `float_results`).
    pub fn tangent(&self, consts: &[usize], float_results: &[usize]) -> Cond {
        let n_out = self.then.outs.len();
        let order: Vec<usize> = (0..self.n_consts() + consts.len()).collect();
        let outs: Vec<usize> = float_results.iter().map(|k| n_out + k).collect();
        self.map_branches(
            |b| {
                let j = jvp_wrt(b, consts);
                crate::transforms::simplify::simplify(&rearranged(&j, &order, &outs))
            },
            consts.len(),
        )
    }

    /// The transpose of this tangent cond: params (the primal constants,
    /// one cotangent per result), results the cotangents of the linear
    /// constants.
    pub fn transposed(&self) -> Cond {
        let nk = self.n_consts();
        let n_primal = nk - self.n_linear;
        let n_out = self.then.outs.len();
        let wrt: Vec<usize> = (n_primal..nk).collect();
        self.map_branches(
            |b| {
                let v = vjp_cotangents(b, &wrt);
                // The linear params are read as zeros: a function linear in
                // them has a VJP that does not depend on them.
                let keep: Vec<Option<usize>> =
                    (0..n_primal).chain(nk..nk + n_out).map(Some).collect();
                zero_params(&v, &keep)
            },
            0,
        )
    }

    /// The cond with only the results at `results`, taking the same
    /// constants (an unread array constant may still be what gives a
    /// branch the size of a dimension, so none is dropped here).
    pub fn with_results(&self, results: &[usize]) -> Cond {
        self.map_branches(
            |b| {
                let mut g = b.clone();
                g.outs = results.iter().map(|r| b.outs[*r]).collect();
                crate::transforms::simplify::simplify(&g)
            },
            self.n_linear,
        )
    }

    /// The cond with only the results at `results` and the constants its
    /// branches then read; also returns the constants kept.
    pub fn pruned(&self, results: &[usize]) -> (Cond, Vec<usize>) {
        let pick = |b: &Function| {
            let mut g = b.clone();
            g.outs = results.iter().map(|r| b.outs[*r]).collect();
            crate::transforms::simplify::simplify(&g)
        };
        let (t, e) = (pick(&self.then), pick(&self.otherwise));
        let read = |b: &Function| -> Vec<bool> {
            let mut used = vec![false; b.types.len()];
            for v in b.eqns.iter().flat_map(|e| &e.ins).chain(&b.outs) {
                used[v.index()] = true;
            }
            b.params.iter().map(|p| used[p.index()]).collect()
        };
        let (rt, re) = (read(&t), read(&e));
        let kept: Vec<usize> = (0..self.n_consts()).filter(|k| rt[*k] || re[*k]).collect();
        let n_primal = self.n_consts() - self.n_linear;
        let n_linear = kept.iter().filter(|k| **k >= n_primal).count();
        let all: Vec<usize> = (0..results.len()).collect();
        let cond = Cond {
            then: rearranged(&t, &kept, &all),
            otherwise: rearranged(&e, &kept, &all),
            n_linear,
        };
        (cond, kept)
    }

    /// Both branches simplified.
    pub fn simplified(&self) -> Cond {
        self.map_branches(crate::transforms::simplify::simplify, self.n_linear)
    }

    pub fn header(&self) -> String {
        format!("cond[{}]", self.n_linear)
    }

    pub fn functions(&self) -> Vec<&Function> {
        self.branches().to_vec()
    }

    pub fn from_text(arg: &str, fns: Vec<Function>) -> Result<Cond, String> {
        let bad = || format!("bad op `cond[{arg}]`");
        let [then, otherwise]: [Function; 2] = fns.try_into().map_err(|_| bad())?;
        Ok(Cond {
            then,
            otherwise,
            n_linear: arg.parse().map_err(|_| bad())?,
        })
    }
}

/// Add `if pred { then(consts) } else { otherwise(consts) }` to `f` (JAX's
/// `lax.cond`); its results are the taken branch's.
pub fn push_cond(
    f: &mut Function,
    pred: Var,
    consts: &[Var],
    then: Function,
    otherwise: Function,
) -> Result<Vec<Var>, String> {
    let c = Cond {
        then,
        otherwise,
        n_linear: 0,
    };
    let ins: Vec<Var> = std::iter::once(pred)
        .chain(consts.iter().copied())
        .collect();
    f.push_all(Op::Cond(Box::new(c)), &ins)
}

/// JVP of a cond: the primal results, and a tangent for each (`None`: zero).
pub fn cond_jvp(
    g: &mut Function,
    c: &Cond,
    ins: &[Var],
    t: &[Option<Var>],
) -> (Vec<Var>, Vec<Option<Var>>) {
    let primal = g
        .push_all(Op::Cond(Box::new(c.clone())), ins)
        .expect("internal error: copying a cond");
    let consts: Vec<usize> = (0..c.n_consts()).filter(|k| t[1 + k].is_some()).collect();
    let floats: Vec<usize> = (0..c.then.outs.len())
        .filter(|k| c.then.dtype(c.then.outs[*k]).is_float())
        .collect();
    if consts.is_empty() || floats.is_empty() {
        return (primal.clone(), vec![None; primal.len()]);
    }
    let tc = c.tangent(&consts, &floats);
    let mut operands = ins.to_vec();
    operands.extend(consts.iter().map(|k| t[1 + k].expect("a tangent")));
    // A result whose tangent is the constant 0 in both branches (it does
    // not depend on the tangents taken: a comparison's, a stop_gradient's,
    // a value computed from other params) is a symbolic zero, not a result.
    let [zt, ze] = tc.branches().map(crate::transforms::zeros::zero_results);
    let nonzero: Vec<usize> = (0..floats.len()).filter(|k| !(zt[*k] && ze[*k])).collect();
    if nonzero.is_empty() {
        return (primal.clone(), vec![None; primal.len()]);
    }
    let tc = if nonzero.len() < floats.len() {
        tc.with_results(&nonzero)
    } else {
        tc
    };
    let floats: Vec<usize> = nonzero.iter().map(|k| floats[*k]).collect();
    let tangents = g
        .push_all(Op::Cond(Box::new(tc)), &operands)
        .expect("internal error: building a tangent cond");
    let ts = (0..primal.len())
        .map(|k| floats.iter().position(|f| *f == k).map(|p| tangents[p]))
        .collect();
    (primal, ts)
}

/// Transpose rule of a tangent cond (`known`, `cts`: as `Op::transpose`
/// takes them): the cond of the branches' transposes, on the same predicate
/// and primal constants, for the results that have a cotangent only (the
/// others' are symbolic zeros, not zeros a branch would multiply by its
/// local derivatives). A constant whose cotangent is the constant 0 in both
/// transposed branches gets none. As JAX's `_cond_transpose`, a constant
/// read by one branch only gets a zero from the other (a materialized zero:
/// which branch runs is known at run time only).
pub(crate) fn cond_transpose(
    g: &mut Function,
    c: &Cond,
    known: &[Option<Var>],
    cts: &[Option<Var>],
) -> Vec<Option<Var>> {
    let live: Vec<usize> = (0..cts.len()).filter(|k| cts[*k].is_some()).collect();
    let n_primal = 1 + c.n_consts() - c.n_linear;
    let mut ins: Vec<Var> = known[..n_primal]
        .iter()
        .map(|v| v.expect("internal error: a cond's primal operand"))
        .collect();
    ins.extend(cts.iter().flatten());
    let tr = if live.len() < cts.len() {
        c.with_results(&live).transposed()
    } else {
        c.transposed()
    };
    let [zt, ze] = tr.branches().map(crate::transforms::zeros::zero_results);
    let back = g
        .push_all(Op::Cond(Box::new(tr)), &ins)
        .expect("internal error: transposing a cond");
    let mut out = vec![None; n_primal];
    out.extend(
        back.into_iter()
            .enumerate()
            .map(|(q, v)| (!(zt[q] && ze[q])).then_some(v)),
    );
    out
}

/// Batching rule of a cond: every result batched.
pub fn cond_batch(
    g: &mut Function,
    c: &Cond,
    ins: &[Var],
    batched: &[bool],
    size: &Dim,
) -> Vec<Var> {
    let consts = &ins[1..];
    let const_batched = &batched[1..];
    if !batched[0] {
        let axes: Vec<Option<usize>> = const_batched.iter().map(|b| b.then_some(0)).collect();
        let outs = vec![Some(0); c.then.outs.len()];
        let bc = c.map_branches(
            |b| vmap_sized(b, &axes, &outs, size).expect("internal error: batching a cond branch"),
            c.n_linear,
        );
        return g
            .push_all(Op::Cond(Box::new(bc)), ins)
            .expect("internal error: batching a cond");
    }
    // A per-example predicate: both branches run, a select picks.
    let [t, e] = c
        .branches()
        .map(|b| batched_branch(g, b, consts, const_batched, size));
    t.iter()
        .zip(&e)
        .map(|(t, e)| {
            let m = mask_over(g, ins[0], *t);
            g.select(m, *t, *e)
        })
        .collect()
}

/// The branch `b` inlined into `g` on `consts`, its results all batched.
fn batched_branch(
    g: &mut Function,
    b: &Function,
    consts: &[Var],
    batched: &[bool],
    size: &Dim,
) -> Vec<Var> {
    if batched.iter().any(|x| *x) {
        let axes: Vec<Option<usize>> = batched.iter().map(|x| x.then_some(0)).collect();
        let bb = vmap_sized(b, &axes, &vec![Some(0); b.outs.len()], size)
            .expect("internal error: batching a cond branch");
        inline(g, &bb, consts)
    } else {
        inline(g, b, consts)
            .into_iter()
            .map(|v| g.broadcast_batch(v, size))
            .collect()
    }
}
