//! The pmap op (`Pmap`, JAX's `xla_pmap_p`) and its rules.

use super::surgery::{rearranged, zero_params};
use crate::interp;
use crate::ir::{Function, Type, Var};
use crate::ops::collective::axis_dim;
use crate::ops::layout::{move_axis_perm, transpose};
use crate::ops::Op;
use crate::shape::{Dim, Shape};
use crate::tensor::Tensor;
use crate::transforms::jvp::jvp_wrt;
use crate::transforms::vjp::vjp_cotangents;
use crate::transforms::vmap::{vmap_sized, BatchAxis};

/// `body` run once per device along the axis `axis`, in the manner of
/// `jax.pmap`: operand `k` is split along its leading axis when
/// `mapped[k]` (one slice per device; every mapped operand's leading axis
/// has the same extent, the number of devices) and passed whole to every
/// device otherwise; every result is stacked along a new leading axis.
/// Inside the body, collectives over `axis` reach across the devices, and
/// the axis's size is its symbol `collective::axis_dim(axis)`, which the
/// results' types give as the mapped extent.
///
/// Rules (JAX's for a pmap, which are those of a call of its body):
/// - Meaning, and the reference evaluation: the named vmap of the body
///   (`vmap_named`), where each collective is an operation over the batch.
/// - JVP: the primal pmap, plus a tangent pmap of the body's JVP (params:
///   the primal operands, then the tangents taken, mapped as their primals
///   are; results: the float results' tangents), linear in its trailing
///   `n_linear` operands.
/// - Transpose of a tangent pmap: a pmap of the body's VJP with respect to
///   its linear params (each collective transposed on the device); the
///   cotangent of a replicated (unmapped) operand is the sum of the
///   devices' cotangents.
/// - Batching: the batch axis goes inside, after the device axis, and the
///   body is batched (by name, so a collective over a vmap outside the
///   pmap reduces over the batch inside each device).
#[derive(Clone, Debug, PartialEq)]
pub struct Pmap {
    pub body: Function,
    pub axis: String,
    /// The number of devices the body assumes: the axis symbol, or the
    /// extent its shapes fix (`collective::unify_axis`).
    pub size: Dim,
    pub mapped: Vec<bool>,
    /// How many trailing operands are tangents the body is linear in (on a
    /// JVP's tangent pmap; 0 otherwise).
    pub n_linear: usize,
}

impl Pmap {
    pub fn n_operands(&self) -> usize {
        self.body.params.len()
    }

    /// The number of devices: the leading extent of the mapped operands.
    fn devices<'a>(&self, ins: &[&'a Type]) -> Result<&'a Dim, String> {
        let mut n: Option<&Dim> = None;
        for (k, t) in ins.iter().enumerate() {
            if !self.mapped[k] {
                continue;
            }
            let d = t.shape.0.first().ok_or_else(|| {
                format!("pmap over `{}`: mapped operand {k} is a scalar", self.axis)
            })?;
            match n {
                None => n = Some(d),
                Some(m) if m != d => {
                    return Err(format!(
                        "pmap over `{}`: mapped operands with leading extents {m} and {d}",
                        self.axis
                    ))
                }
                _ => {}
            }
        }
        let n = n.ok_or_else(|| format!("pmap over `{}` maps no operand", self.axis))?;
        if let (Dim::Const(a), Dim::Const(b)) = (n, &self.size) {
            if a != b {
                return Err(format!(
                    "pmap over `{}`: {a} devices, but its collectives need {b}",
                    self.axis
                ));
            }
        }
        Ok(n)
    }

    /// The body's type `t` as the op sees it: the axis symbol is the
    /// number of devices `n`.
    fn outside(&self, t: &Type, n: &Dim) -> Type {
        let from = axis_dim(&self.axis);
        let dims = t
            .shape
            .0
            .iter()
            .map(|d| if *d == from { n.clone() } else { d.clone() })
            .collect();
        Type::new(t.dtype, Shape(dims))
    }

    pub fn infer(&self, ins: &[&Type]) -> Result<Vec<Type>, String> {
        if ins.len() != self.n_operands() || self.mapped.len() != self.n_operands() {
            return Err(format!(
                "pmap takes {} operands, got {} ({} mapping flags)",
                self.n_operands(),
                ins.len(),
                self.mapped.len()
            ));
        }
        if self.n_linear > self.n_operands() {
            return Err("a pmap is linear in more operands than it has".into());
        }
        let n = self.devices(ins)?;
        for (k, (p, t)) in self.body.params.iter().zip(ins).enumerate() {
            let mut want = self.outside(self.body.ty(*p), n);
            if self.mapped[k] {
                want.shape.0.insert(0, n.clone());
            }
            if want != **t {
                return Err(format!(
                    "pmap over `{}`: operand {k} is {t}, the body takes {want}",
                    self.axis
                ));
            }
        }
        Ok(self
            .body
            .outs
            .iter()
            .map(|o| {
                let mut t = self.outside(self.body.ty(*o), n);
                t.shape.0.insert(0, n.clone());
                t
            })
            .collect())
    }

    /// Operand `i` is one of the tangents the pmap is linear in.
    pub fn is_linear_in(&self, i: usize) -> bool {
        i >= self.n_operands() - self.n_linear && i < self.n_operands()
    }

    /// Reference evaluation: the named vmap of the body.
    pub fn eval(&self, ins: &[&Tensor]) -> Result<Vec<Tensor>, String> {
        let in_axes: Vec<Option<usize>> = self.mapped.iter().map(|m| m.then_some(0)).collect();
        let out_axes = vec![Some(0); self.body.outs.len()];
        let axis = BatchAxis {
            size: self.size.clone(),
            name: Some(self.axis.clone()),
        };
        let batched = vmap_sized(&self.body, &in_axes, &out_axes, &axis)?;
        let args: Vec<Tensor> = ins.iter().map(|t| (*t).clone()).collect();
        interp::eval(&batched, &args)
    }

    pub fn header(&self) -> String {
        let mapped: String = self
            .mapped
            .iter()
            .map(|m| if *m { '1' } else { '0' })
            .collect();
        format!(
            "pmap[{},{},{mapped},{}]",
            self.axis, self.size, self.n_linear
        )
    }

    pub fn functions(&self) -> Vec<&Function> {
        vec![&self.body]
    }

    pub fn from_text(arg: &str, fns: Vec<Function>) -> Result<Pmap, String> {
        let bad = || format!("bad op `pmap[{arg}]`");
        let [body]: [Function; 1] = fns.try_into().map_err(|_| bad())?;
        let parts: Vec<&str> = arg.split(',').collect();
        let [axis, size, mapped, n_linear] = parts[..] else {
            return Err(bad());
        };
        Ok(Pmap {
            body,
            axis: axis.to_string(),
            size: crate::text::parse_dim(size).ok_or_else(bad)?,
            mapped: mapped.chars().map(|c| c == '1').collect(),
            n_linear: n_linear.parse().map_err(|_| bad())?,
        })
    }

    /// The same pmap over another body.
    fn with_body(&self, body: Function, mapped: Vec<bool>, n_linear: usize) -> Pmap {
        Pmap {
            body,
            axis: self.axis.clone(),
            size: self.size.clone(),
            mapped,
            n_linear,
        }
    }
}

/// Push `pmap(body)` over `axis` onto `f` (the body's axis size unified
/// with its shapes, `collective::unify_axis`).
pub fn push_pmap(
    f: &mut Function,
    body: &Function,
    axis: &str,
    mapped: Vec<bool>,
    ins: &[Var],
) -> Result<Vec<Var>, String> {
    let (body, size) = crate::ops::collective::unify_axis(body, axis)?;
    let p = Pmap {
        body,
        axis: axis.to_string(),
        size,
        mapped,
        n_linear: 0,
    };
    f.push_all(Op::Pmap(Box::new(p)), ins)
}

/// JVP of a pmap: the primal results, and a tangent for each float result.
pub fn pmap_jvp(
    g: &mut Function,
    p: &Pmap,
    ins: &[Var],
    t: &[Option<Var>],
) -> (Vec<Var>, Vec<Option<Var>>) {
    let primal = g
        .push_all(Op::Pmap(Box::new(p.clone())), ins)
        .expect("internal error: copying a pmap");
    let taken: Vec<usize> = (0..p.n_operands()).filter(|k| t[*k].is_some()).collect();
    let floats: Vec<usize> = (0..p.body.outs.len())
        .filter(|k| p.body.dtype(p.body.outs[*k]).is_float())
        .collect();
    if taken.is_empty() || floats.is_empty() {
        return (primal.clone(), vec![None; primal.len()]);
    }
    let n_out = p.body.outs.len();
    let j = jvp_wrt(&p.body, &taken);
    let order: Vec<usize> = (0..p.n_operands() + taken.len()).collect();
    let outs: Vec<usize> = floats.iter().map(|k| n_out + k).collect();
    let body = crate::transforms::simplify::simplify(&rearranged(&j, &order, &outs));
    let zero = crate::transforms::zeros::zero_results(&body);
    let nonzero: Vec<usize> = (0..floats.len()).filter(|k| !zero[*k]).collect();
    if nonzero.is_empty() {
        return (primal.clone(), vec![None; primal.len()]);
    }
    let body = if nonzero.len() < floats.len() {
        let mut b = body.clone();
        b.outs = nonzero.iter().map(|k| body.outs[*k]).collect();
        crate::transforms::simplify::simplify(&b)
    } else {
        body
    };
    let mut mapped = p.mapped.clone();
    mapped.extend(taken.iter().map(|k| p.mapped[*k]));
    let tp = p.with_body(body, mapped, taken.len());
    let mut operands = ins.to_vec();
    operands.extend(taken.iter().map(|k| t[*k].expect("a tangent")));
    let tangents = g
        .push_all(Op::Pmap(Box::new(tp)), &operands)
        .expect("internal error: building a tangent pmap");
    let floats: Vec<usize> = nonzero.iter().map(|k| floats[*k]).collect();
    let ts = (0..primal.len())
        .map(|k| floats.iter().position(|f| *f == k).map(|q| tangents[q]))
        .collect();
    (primal, ts)
}

/// Transpose rule of a tangent pmap (`known`, `cts`: as `Op::transpose`
/// takes them).
pub(crate) fn pmap_transpose(
    g: &mut Function,
    p: &Pmap,
    known: &[Option<Var>],
    cts: &[Option<Var>],
) -> Vec<Option<Var>> {
    let n = p.n_operands();
    let n_primal = n - p.n_linear;
    let live: Vec<usize> = (0..cts.len()).filter(|k| cts[*k].is_some()).collect();
    // The body with the live results only, then its VJP with respect to the
    // linear params: params (primal operands, one cotangent per live
    // result), results the linear params' cotangents, per device.
    let mut body = p.body.clone();
    body.outs = live.iter().map(|k| p.body.outs[*k]).collect();
    let wrt: Vec<usize> = (n_primal..n).collect();
    let v = vjp_cotangents(&body, &wrt);
    let keep: Vec<Option<usize>> = (0..n_primal).chain(n..n + live.len()).map(Some).collect();
    let back_body = zero_params(&v, &keep);
    let zero = crate::transforms::zeros::zero_results(&back_body);
    let mut mapped: Vec<bool> = p.mapped[..n_primal].to_vec();
    mapped.extend(std::iter::repeat_n(true, live.len()));
    let back = p.with_body(back_body, mapped, 0);
    let mut ins: Vec<Var> = known[..n_primal]
        .iter()
        .map(|v| v.expect("internal error: a pmap's primal operand"))
        .collect();
    ins.extend(cts.iter().flatten());
    let outs = g
        .push_all(Op::Pmap(Box::new(back)), &ins)
        .expect("internal error: transposing a pmap");
    let mut result = vec![None; n_primal];
    for (q, v) in outs.into_iter().enumerate() {
        if zero[q] {
            result.push(None);
        } else if p.mapped[n_primal + q] {
            result.push(Some(v));
        } else {
            // A replicated operand: every device's cotangent adds up.
            result.push(Some(g.reduce_sum(v, vec![0])));
        }
    }
    result
}

/// Batching rule of a pmap: the batch goes inside, after the device axis.
pub fn pmap_batch(
    g: &mut Function,
    p: &Pmap,
    ins: &[Var],
    batched: &[bool],
    axis: &BatchAxis,
) -> Vec<Var> {
    let operands: Vec<Var> = ins
        .iter()
        .enumerate()
        .map(|(k, v)| {
            if batched[k] && p.mapped[k] {
                let rank = g.shape(*v).rank();
                transpose(g, *v, move_axis_perm(rank, 0, 1))
            } else {
                *v
            }
        })
        .collect();
    let in_axes: Vec<Option<usize>> = batched.iter().map(|b| b.then_some(0)).collect();
    let out_axes = vec![Some(0); p.body.outs.len()];
    let body = vmap_sized(&p.body, &in_axes, &out_axes, axis)
        .expect("internal error: batching a pmap's body");
    let n_linear = p.n_linear;
    let bp = p.with_body(body, p.mapped.clone(), n_linear);
    let outs = g
        .push_all(Op::Pmap(Box::new(bp)), &operands)
        .expect("internal error: batching a pmap");
    outs.into_iter()
        .map(|v| {
            let rank = g.shape(v).rank();
            transpose(g, v, move_axis_perm(rank, 1, 0))
        })
        .collect()
}
