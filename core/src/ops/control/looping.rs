//! The forward loop op (`Loop`: `for` and `while`), its text form, its JVP.

use super::reverse::{reverse_sweep, LoopReverse};
use super::surgery::{rearranged, with_unused_params};
use crate::dtype::DType;
use crate::interp;
use crate::ir::{Function, Type, Var};
use crate::ops::Op;
use crate::tensor::Tensor;
use crate::transforms::jvp::jvp_wrt;

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
    pub(super) fn carry_param0(&self) -> usize {
        self.n_consts + self.n_bounds() / 2
    }
    pub fn carry_type(&self, k: usize) -> &Type {
        self.body.ty(self.body.outs[k])
    }
    pub fn n_operands(&self) -> usize {
        self.n_bounds() + self.n_consts + self.n_carries()
    }

    /// Check the bodies against each other; shared by `infer` and `LoopReverse::infer`.
    pub(super) fn check(&self, ins: &[&Type]) -> Result<(), String> {
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
    pub(super) fn trip(lo: f64, hi: f64) -> u64 {
        if hi > lo {
            (hi - lo) as u64
        } else {
            0
        }
    }

    /// One step: the body on `consts`, step `i`, `carries`.
    pub(super) fn step(
        &self,
        consts: &[Tensor],
        i: i64,
        carries: Vec<Tensor>,
    ) -> Result<Vec<Tensor>, String> {
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
    pub(super) fn run(
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
            order.extend(std::iter::repeat_n(None, consts.len()));
            order.extend((nk..nk + nc).map(Some));
            order.extend(std::iter::repeat_n(None, carries.len()));
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

pub(super) fn list_text(v: &[usize]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(";")
}

pub(super) fn kind_text(k: LoopKind) -> &'static str {
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

// ---- JVP ----

/// Which constants of `l` have a tangent among the operand tangents `t`,
/// and which carries get one: the float carries whose tangent may be
/// nonzero at some step (`zeros::loop_tangent_reach`, a fixpoint, as JAX's
/// loop JVPs find theirs). Every other carry's tangent is a symbolic zero
/// in every step, never a zero tangent carry that the body would multiply
/// by its local derivatives (0·inf = NaN where a slope is infinite).
pub(super) fn tangent_selection(l: &Loop, t: &[Option<Var>]) -> (Vec<usize>, Vec<usize>) {
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
pub(super) fn tangent_operands(
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
