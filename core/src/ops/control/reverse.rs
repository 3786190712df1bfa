//! The reverse-sweep loop op (`LoopReverse`): its reference evaluation, text form and JVP.
//! Its transpose (reverse over reverse) is in `reverse_transpose.rs`.

use super::looping::{kind_text, list_text, tangent_operands, tangent_selection, Loop, TangentOf};
use super::surgery::rearranged;
use crate::dtype::DType;
use crate::exec::tape::{tape_limit, tape_limit_error, TAPE_PEAK};
use crate::interp;
use crate::ir::{Function, Type, Var};
use crate::ops::Op;
use crate::tensor::Tensor;
use crate::transforms::jvp::jvp_wrt;
use crate::transforms::vjp::vjp_cotangents;

/// Reverse mode through a loop. Operands: `fwd`'s operands, then the final
/// cotangents `r`. Runs `fwd`, then for each step from the last down, with
/// the carries `c` that step started from:
/// `(a, r) = back(consts, [i], c, r)`, summing the `a`s. Results: the listed
/// entries of `(Σa.., r..)`.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopReverse {
    /// Its `results` are not used. Its `tangent_of` is set on the JVP of a
    /// gradient sweep (`is_tangent`), and says which tangents it takes.
    pub fwd: Loop,
    /// Params: `fwd.body`'s params, then `r`; results: the `a`s, then the next `r`.
    pub back: Function,
    pub n_acc: usize,
    pub results: Vec<usize>,
    /// Which gradient this sweep is (of the primal sweep, for a tangent
    /// one): `None` where that is not known (a batched sweep, the JVP of a
    /// JVP), which reverse mode through it then refuses.
    pub sweep_of: Option<SweepOf>,
}

/// What `reverse_sweep(fwd, consts, carries)` computes: with the final
/// cotangents `r_j` paired with the carries `carries[j]` and
/// `ψ = Σ_j ⟨r_j, final carry carries[j]⟩`, the `a`s are `∂ψ/∂` the
/// constants `consts` and the `r`s `∂ψ/∂` the initial carries `carries`.
/// Being a gradient of a scalar is what lets reverse mode run through it
/// (`reverse_transpose`).
#[derive(Clone, Debug, PartialEq)]
pub struct SweepOf {
    pub consts: Vec<usize>,
    pub carries: Vec<usize>,
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
        sweep_of: Some(SweepOf {
            consts: consts.to_vec(),
            carries: carries.to_vec(),
        }),
    }
}

impl LoopReverse {
    /// The op's name and arguments in the text form; the functions it holds
    /// follow it (`functions`). A gradient sweep adds which gradient it is;
    /// the JVP of one is written as that sweep and the tangents taken, and
    /// rebuilt from them when parsed (as a tangent loop is).
    pub fn header(&self) -> String {
        match (self.tangent_of(), &self.sweep_of) {
            (Some(t), Some(s)) => format!(
                "loop_reverse_tangent[{},{},{}|{}|{}|{}|{}|{}]",
                kind_text(t.primal.kind),
                t.primal.n_consts,
                t.primal.checkpoint.text(),
                list_text(&self.primal_results()),
                list_text(&s.consts),
                list_text(&s.carries),
                list_text(&t.consts),
                list_text(&t.carries)
            ),
            (_, of) => {
                let of = of
                    .as_ref()
                    .map(|s| format!("|{}|{}", list_text(&s.consts), list_text(&s.carries)))
                    .unwrap_or_default();
                format!(
                    "loop_reverse[{},{},{},{}|{}{of}]",
                    kind_text(self.fwd.kind),
                    self.fwd.n_consts,
                    self.fwd.checkpoint.text(),
                    self.n_acc,
                    list_text(&self.results)
                )
            }
        }
    }

    pub fn functions(&self) -> Vec<&Function> {
        match self.tangent_of() {
            Some(t) => std::iter::once(&t.primal.body)
                .chain(&t.primal.cond)
                .collect(),
            None => std::iter::once(&self.fwd.body)
                .chain(&self.fwd.cond)
                .chain(std::iter::once(&self.back))
                .collect(),
        }
    }

    pub fn from_text(name: &str, arg: &str, fns: Vec<Function>) -> Result<LoopReverse, String> {
        let bad = || format!("bad op `{name}[{arg}]`");
        let list = |s: &str| -> Result<Vec<usize>, String> {
            s.split(';')
                .filter(|x| !x.is_empty())
                .map(|x| x.parse().map_err(|_| bad()))
                .collect()
        };
        let parts: Vec<&str> = arg.split('|').collect();
        if name == "loop_reverse_tangent" {
            let [head, results, sk, sc, tk, tc] = parts[..] else {
                return Err(bad());
            };
            let p = Loop::from_text("loop", &format!("{head},"), fns)?;
            let mut sweep = reverse_sweep(&p, &list(sk)?, &list(sc)?);
            sweep.results = list(results)?;
            return Ok(sweep.tangent(&list(tk)?, &list(tc)?));
        }
        let (head, results, of) = match parts[..] {
            [head, results] => (head, results, None),
            [head, results, consts, carries] => (
                head,
                results,
                Some(SweepOf {
                    consts: list(consts)?,
                    carries: list(carries)?,
                }),
            ),
            _ => return Err(bad()),
        };
        let (rest, n_acc) = head.rsplit_once(',').ok_or_else(bad)?;
        let mut fns = fns;
        let back = fns.pop().ok_or_else(bad)?;
        let fwd = Loop::from_text("loop", &format!("{rest},"), fns)?;
        Ok(LoopReverse {
            fwd,
            back,
            n_acc: n_acc.parse().map_err(|_| bad())?,
            results: list(results)?,
            sweep_of: of,
        })
    }

    /// For the JVP of a gradient sweep: the tangents it takes, and the
    /// primal loop.
    pub fn tangent_of(&self) -> Option<&TangentOf> {
        self.sweep_of.as_ref()?;
        self.fwd.tangent_of.as_deref()
    }

    /// Whether this is the JVP of a gradient sweep, which reverse mode can
    /// run through (linear in its tangent operands).
    pub fn is_tangent(&self) -> bool {
        self.tangent_of().is_some()
    }

    /// For the JVP of a gradient sweep: the results of that sweep, which
    /// this one gives the tangents of (the inverse of `tangent`'s mapping).
    pub(super) fn primal_results(&self) -> Vec<usize> {
        let (na, nr) = (self.n_acc / 2, self.n_r() / 2);
        self.results
            .iter()
            .map(|x| match *x {
                x if (na..2 * na).contains(&x) => x - na,
                x if x >= 2 * na + nr => na + x - 2 * na - nr,
                _ => panic!("internal error: a tangent sweep gives a primal result"),
            })
            .collect()
    }

    /// Operand `i` is a tangent of the JVP of a gradient sweep: its
    /// operands are those of `fwd.tangent(consts, carries)` (bounds,
    /// constants, their tangents, carries, their tangents), then the
    /// cotangents `r` and their tangents.
    pub fn is_linear_in(&self, i: usize) -> bool {
        if !self.is_tangent() {
            return false;
        }
        let nf = self.fwd.n_operands();
        let nr = self.n_r() / 2;
        self.fwd.is_linear_in(i) || (nf + nr..nf + 2 * nr).contains(&i)
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

    /// Which carries the backward body reads: the residuals a step must
    /// keep. A carry only written by the body (`hs[t] = h` collecting a
    /// loop's outputs, a running sum) has a cotangent that flows through
    /// selects and adds whose transposes need no primal value, so its
    /// step values are not kept — JAX's scan keeps only the residuals its
    /// linearized body reads, and without this the tape of a loop that
    /// fills an array grew with the steps squared. A checkpoint still
    /// keeps every carry: the forward sweep restarts from it.
    pub fn back_reads_carries(&self) -> Vec<bool> {
        let c0 = self.fwd.carry_param0();
        let mut read = vec![false; self.fwd.n_carries()];
        let mut mark = |v: &Var| {
            if let Some(k) = self.back.params.iter().position(|p| p == v) {
                if (c0..c0 + read.len()).contains(&k) {
                    read[k - c0] = true;
                }
            }
        };
        self.back
            .eqns
            .iter()
            .flat_map(|e| &e.ins)
            .for_each(&mut mark);
        self.back.outs.iter().for_each(&mut mark);
        read
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
        // Without checkpoints each step keeps only what `back` reads (the
        // others are passed as their initial values, which it ignores); a
        // checkpoint keeps every carry.
        let kept = match seg {
            None => self.back_reads_carries(),
            Some(_) => vec![true; f.n_carries()],
        };
        let per_step: usize = (0..f.n_carries())
            .filter(|k| kept[*k])
            .map(|k| ins[nb + nk + k].numel() * f.carry_type(k).dtype.size_bytes())
            .sum();
        let limit = tape_limit();
        let what = || format!("a `{}` loop", f.kind.keyword());
        // A sweep whose backward body reads no carry keeps no steps at all
        // (a `while` that never ends then spins as it does forward).
        let record = kept.contains(&true);
        let nothing: Vec<Option<Tensor>> = vec![None; f.n_carries()];
        let mut tape: Vec<Vec<Option<Tensor>>> = Vec::new();
        let (_, n) = f.run(&ins[..nf], |k, c| {
            if record && seg.is_none_or(|s| k % s == 0) {
                let bytes = (tape.len() + 1).saturating_mul(per_step);
                if bytes > limit {
                    return Err(tape_limit_error(&what(), bytes, k + 1, limit));
                }
                let step = c.iter().zip(&kept).map(|(t, keep)| keep.then(|| t.clone()));
                tape.push(step.collect());
            }
            Ok(())
        })?;
        let unpacked = |step: &[Option<Tensor>]| -> Vec<Tensor> {
            let initial = &ins[nb + nk..nf];
            step.iter()
                .zip(initial)
                .map(|(t, t0)| t.clone().unwrap_or_else(|| (*t0).clone()))
                .collect()
        };
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
            let first = if record {
                &tape[(start / s) as usize]
            } else {
                &nothing
            };
            let mut steps = vec![unpacked(first)];
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

fn add(x: &Tensor, y: &Tensor) -> Tensor {
    Tensor::new(
        x.dtype,
        x.shape.clone(),
        x.data.iter().zip(&y.data).map(|(a, b)| a + b).collect(),
    )
}

impl LoopReverse {
    /// The JVP of this sweep for tangents of `fwd`'s constants at `consts`
    /// and carries at `carries` (as `tangent_selection` picks them) and of
    /// every `r`. Operands: those of `fwd.tangent(consts, carries)`, the
    /// `r`s, their tangents; results: the tangents of `results`. The JVP of
    /// a gradient sweep keeps where it came from (`tangent_of`), which its
    /// transpose needs; the JVP of any other sweep does not.
    pub fn tangent(&self, consts: &[usize], carries: &[usize]) -> LoopReverse {
        let f = &self.fwd;
        let (nk, nc) = (f.n_consts, f.n_carries());
        let (na, nr) = (self.n_acc, self.n_r());
        let gradient = self.sweep_of.is_some() && f.tangent_of.is_none();
        let tangent = f.tangent(consts, carries);
        let fwd = Loop {
            tangent_of: tangent.tangent_of.clone().filter(|_| gradient),
            results: Vec::new(),
            ..tangent
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
        let j = jvp_wrt(&self.back, &wrt);
        let nbp = self.back.params.len();
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
        let results: Vec<usize> = self
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
        LoopReverse {
            fwd,
            back,
            n_acc: 2 * na,
            results,
            sweep_of: self.sweep_of.clone().filter(|_| gradient),
        }
    }
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
    let nr = lr.n_r();
    let nf = f.n_operands();
    let (consts, carries) = tangent_selection(f, t);
    let tl = lr.tangent(&consts, &carries);
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
