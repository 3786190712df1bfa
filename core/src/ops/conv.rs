//! Convolution: `conv[..](x, w)`, `lax.conv_general_dilated` in one layout.
//!
//! The op has one layout: `x` is `[N, C, spatial..]`, `w` is
//! `[O, I, window..]` and the result `[N / batch_groups, O, spatial'..]`
//! (JAX's NCHW/OIHW/NCHW). Any other of JAX's dimension numbers (NHWC, …)
//! is a transpose of each operand and of the result, which the builder
//! (`conv_general_dilated`) adds, so every rule and the host step see one
//! layout.
//!
//! Along each spatial axis the op sums `x[i]·w[k]` into `y[p]` over the
//! input positions `i`, window taps `k` and output positions `p` related
//! by one integer equation, `a·i + b·p + c·k = d` (`ConvAxis`), inside each
//! operand's extent, and the result's length along the axis is a parameter.
//! `lax.conv_general_dilated`'s strides `s`, padding `(lo, hi)` and
//! dilations `ld` (input) and `rd` (window) are the equation
//! `ld·i − s·p − rd·k = −lo` with the length `window_len` gives
//! (`(D|K|s|lo|hi|ld|rd)` when a size is a symbol). With `G` feature groups,
//! output feature `o` reads input features `g·I .. (g+1)·I` for its group
//! `g = o / (O/G)`; with `B` batch groups, output batch `n` of output
//! feature `o` reads input batch `g·(N/B) + n` for `o`'s group `g`.
//!
//! The derivative rules are JAX's (`jax/_src/lax/convolution.py`): the JVP
//! is bilinear; the lhs transpose is a convolution of the cotangent with
//! the kernel's features swapped (its groups moved into its input
//! features), the rhs transpose a convolution of the input with the
//! cotangent, batch and feature axes swapped, feature groups becoming batch
//! groups. Each sums the same products as the forward convolution, so it
//! is the same equation with the roles of `i`, `p`, `k` exchanged, its
//! length the operand's: JAX writes that as a flipped kernel, strides and
//! dilations traded and paddings computed from the sizes, which a size
//! known only at the call would not give.
//!
//! Batching differs from JAX's too: `vmap`'s batch size is a symbol here,
//! which no reshape can fold into `N`, `O` or the group counts (parameters),
//! so the op has leading axes of its own (`lead`): each on both operands
//! (one convolution per index) or on one (the other shared). The transposes
//! keep them and sum a cotangent over the axes its operand lacked.
//!
//! Group counts regroup features by reshapes, so with groups the feature
//! sizes must be constants; batch, feature and spatial sizes may otherwise
//! be symbols.
//!
//! On devices it is a host step (`exec::conv`): im2col and one `gemm` per
//! (batch, group).

use crate::ir::{Function, Type, Var};
use crate::kernel::PairwiseSum;
use crate::ops::layout::{inverse_perm, reshape, transpose};
use crate::ops::Op;
use crate::shape::derived::{window_len, WindowGeometry};
use crate::shape::{Dim, Shape};
use crate::tensor::{unravel, Tensor};

/// A leading axis of a convolution's result (`vmap`'s batch axes): on both
/// operands (paired, one convolution per index), or on one of them (the
/// other shared by every index).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lead {
    Both,
    Lhs,
    Rhs,
}

impl Lead {
    pub fn on_lhs(self) -> bool {
        matches!(self, Lead::Both | Lead::Lhs)
    }
    pub fn on_rhs(self) -> bool {
        matches!(self, Lead::Both | Lead::Rhs)
    }
    fn letter(self) -> char {
        match self {
            Lead::Both => 'b',
            Lead::Lhs => 'l',
            Lead::Rhs => 'r',
        }
    }
}

/// One spatial axis of a convolution: input position `i`, output
/// position `p` and window tap `k` meet where `a·i + b·p + c·k = d`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConvAxis {
    pub a: i64,
    pub b: i64,
    pub c: i64,
    pub d: i64,
    /// The result's length along the axis.
    pub len: Dim,
    /// "SAME" padding of an input whose size is known only at the call:
    /// `d` is the low padding's negation, computed then from the sizes.
    pub same: Option<SameRule>,
}

/// "SAME" padding at the call: `lo = max((⌈n/s⌉ − 1)·s + dilated k − n, 0) / 2`
/// for an input of `n` and a window of `k` taps; which of the axis's roles
/// (0: input, 1: output, 2: tap) holds the forward convolution's input and
/// window moves with the transposes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SameRule {
    pub stride: u64,
    pub rhs_dilation: u64,
    pub x_role: u8,
    pub w_role: u8,
}

impl SameRule {
    /// `d` for the roles' lengths `sizes` (input, output, tap).
    fn offset(&self, sizes: [usize; 3]) -> i64 {
        let n = sizes[self.x_role as usize] as i64;
        let k = dilate(sizes[self.w_role as usize] as u64, self.rhs_dilation) as i64;
        let s = self.stride as i64;
        let out = (n + s - 1) / s;
        let total = ((out.max(1) - 1) * s + k - n).max(0);
        -(total / 2)
    }

    /// The rule with two roles exchanged.
    fn swapped(self, a: u8, b: u8) -> SameRule {
        let swap = |r: u8| {
            if r == a {
                b
            } else if r == b {
                a
            } else {
                r
            }
        };
        SameRule {
            x_role: swap(self.x_role),
            w_role: swap(self.w_role),
            ..self
        }
    }
}

impl ConvAxis {
    /// `lax.conv_general_dilated`'s axis: `ld·i − s·p − rd·k = −lo`, of
    /// the length its padding `(lo, hi)` gives over `input` and `window`.
    pub fn strided(input: &Dim, window: &Dim, g: WindowGeometry) -> ConvAxis {
        ConvAxis {
            a: g.lhs_dilation as i64,
            b: -(g.stride as i64),
            c: -(g.rhs_dilation as i64),
            d: -g.lo,
            len: window_len(input, window, g),
            same: None,
        }
    }

    /// `d` for the roles' lengths (input, output, tap).
    pub fn offset(&self, sizes: [usize; 3]) -> i64 {
        self.same.map_or(self.d, |r| r.offset(sizes))
    }

    /// The input position that output `p` reads at tap `k`, if any within
    /// `n` input positions.
    pub fn input_pos(&self, d: i64, p: usize, k: usize, n: usize) -> Option<usize> {
        let rest = d - self.b * p as i64 - self.c * k as i64;
        if rest % self.a != 0 {
            return None;
        }
        let i = rest / self.a;
        (0..n as i64).contains(&i).then_some(i as usize)
    }
}

/// The parameters of a convolution in the op's one layout.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConvParams {
    pub axes: Vec<ConvAxis>,
    pub feature_groups: u64,
    pub batch_groups: u64,
    /// The result's leading axes before `[N, O, spatial..]`; each operand
    /// has those on it, in order, before its own layout's axes.
    pub lead: Vec<Lead>,
}

impl ConvParams {
    /// How many leading axes each operand has.
    pub fn lead_counts(&self) -> (usize, usize) {
        let on = |k: fn(Lead) -> bool| self.lead.iter().filter(|l| k(**l)).count();
        (on(Lead::on_lhs), on(Lead::on_rhs))
    }

    pub fn spatial(&self) -> usize {
        self.axes.len()
    }

    /// The group count (feature or batch groups, whichever is above 1).
    pub fn groups(&self) -> u64 {
        self.feature_groups * self.batch_groups
    }

    /// The text form: `a,b,c,d;..;fg;bg;lead` (an axis's equation each;
    /// `lead` a letter per leading axis: `b`oth, `l`hs, `r`hs). The
    /// lengths are the result type's.
    pub fn text(&self) -> String {
        let mut parts: Vec<String> = self
            .axes
            .iter()
            .map(|x| match x.same {
                None => format!("{},{},{},{}", x.a, x.b, x.c, x.d),
                Some(r) => format!(
                    "{},{},{},same:{}:{}:{}{}",
                    x.a, x.b, x.c, r.stride, r.rhs_dilation, r.x_role, r.w_role
                ),
            })
            .collect();
        parts.push(self.feature_groups.to_string());
        parts.push(self.batch_groups.to_string());
        parts.push(self.lead.iter().map(|l| l.letter()).collect());
        parts.join(";")
    }

    /// Parses `text`'s form; `out` is the result's shape (whose spatial
    /// sizes are the axes' lengths).
    pub fn parse(s: &str, out: &[Dim]) -> Option<ConvParams> {
        let parts: Vec<&str> = s.split(';').collect();
        let [axes @ .., fg, bg, lead] = &parts[..] else {
            return None;
        };
        let lens = out.get(lead.len() + 2..)?;
        if axes.len() != lens.len() {
            return None;
        }
        let axes = axes
            .iter()
            .zip(lens)
            .map(|(x, len)| {
                let parts: Vec<&str> = x.split(',').collect();
                let [a, b, c, d] = parts[..] else { return None };
                let (a, b, c): (i64, i64, i64) =
                    (a.parse().ok()?, b.parse().ok()?, c.parse().ok()?);
                let (d, same) = match d.strip_prefix("same:") {
                    None => (d.parse().ok()?, None),
                    Some(rule) => {
                        let [st, rd, roles] = rule.split(':').collect::<Vec<_>>()[..] else {
                            return None;
                        };
                        let roles: Vec<u8> = roles
                            .chars()
                            .map(|r| r.to_digit(10).filter(|r| *r < 3).map(|r| r as u8))
                            .collect::<Option<_>>()?;
                        let [x_role, w_role] = roles[..] else {
                            return None;
                        };
                        let rule = SameRule {
                            stride: st.parse().ok().filter(|s| *s > 0)?,
                            rhs_dilation: rd.parse().ok().filter(|s| *s > 0)?,
                            x_role,
                            w_role,
                        };
                        (0, Some(rule))
                    }
                };
                (a != 0).then(|| ConvAxis {
                    a,
                    b,
                    c,
                    d,
                    len: len.clone(),
                    same,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(ConvParams {
            axes,
            feature_groups: fg.parse().ok()?,
            batch_groups: bg.parse().ok()?,
            lead: lead
                .chars()
                .map(|c| match c {
                    'b' => Some(Lead::Both),
                    'l' => Some(Lead::Lhs),
                    'r' => Some(Lead::Rhs),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()?,
        })
    }
}

/// The extent of `n` points `d` apart (XLA's dilated size).
pub fn dilate(n: u64, d: u64) -> u64 {
    if n == 0 {
        0
    } else {
        (n - 1) * d + 1
    }
}

/// The result's leading dimensions, from the operands' (`None`: a paired
/// axis of two sizes).
pub fn lead_dims<D: Clone + PartialEq>(lead: &[Lead], x: &[D], w: &[D]) -> Option<Vec<D>> {
    let (mut i, mut j) = (0, 0);
    lead.iter()
        .map(|l| {
            let d = match l {
                Lead::Both => {
                    let same = x[i] == w[j];
                    let d = x[i].clone();
                    (i, j) = (i + 1, j + 1);
                    same.then_some(d)?
                }
                Lead::Lhs => {
                    i += 1;
                    x[i - 1].clone()
                }
                Lead::Rhs => {
                    j += 1;
                    w[j - 1].clone()
                }
            };
            Some(d)
        })
        .collect()
}

pub fn conv_infer(x: &Type, w: &Type, p: &ConvParams) -> Result<Type, String> {
    let err = |why: &str| Err(format!("conv of {x} and {w} with [{}]: {why}", p.text()));
    if x.dtype != w.dtype || !x.dtype.is_float() {
        return err("needs two float operands of one element type");
    }
    let s = p.spatial();
    let (nx, nw) = p.lead_counts();
    if x.shape.rank() != nx + s + 2 || w.shape.rank() != nw + s + 2 {
        return err(&format!(
            "needs operands of rank {} (batch, feature and {s} spatial axes)",
            s + 2
        ));
    }
    let Some(lead) = lead_dims(&p.lead, &x.shape.0[..nx], &w.shape.0[..nw]) else {
        return err("paired leading axes must have one size");
    };
    if p.axes.iter().any(|a| a.a == 0) {
        return err("an axis's input coefficient must not be 0");
    }
    let (fg, bg) = (p.feature_groups, p.batch_groups);
    if fg == 0 || bg == 0 || (fg > 1 && bg > 1) {
        return err("feature and batch group counts are at least 1, and one of them is 1");
    }
    let (n, c) = (&x.shape.0[nx], &x.shape.0[nx + 1]);
    let (o, i) = (&w.shape.0[nw], &w.shape.0[nw + 1]);
    if fg == 1 {
        if c != i {
            return err(&format!(
                "the input's {c} features must be the kernel's {i} input features"
            ));
        }
    } else {
        match (c, i) {
            (Dim::Const(c), Dim::Const(i)) if *c == i * fg => {}
            _ => {
                return err(&format!(
                    "the input's {c} features must be the kernel's {i} input features times {fg} feature groups (known sizes)"
                ))
            }
        }
    }
    let groups = p.groups();
    if groups > 1 && !matches!(o, Dim::Const(o) if o % groups == 0) {
        return err(&format!(
            "the kernel's {o} output features must divide into {groups} groups (a known size)"
        ));
    }
    let n = match n {
        _ if bg == 1 => n.clone(),
        Dim::Const(n) if n % bg == 0 => Dim::Const(n / bg),
        _ => {
            return err(&format!(
                "the input's batch of {n} must divide into {bg} batch groups (a known size)"
            ))
        }
    };
    let mut out = lead;
    out.extend([n, o.clone()]);
    out.extend(p.axes.iter().map(|a| a.len.clone()));
    Ok(Type::new(x.dtype, Shape(out)))
}

/// The sizes of one convolution, shared by the reference and the host step.
#[derive(Clone, Debug)]
pub struct ConvGeometry {
    /// Output batch, output features, input features per group.
    pub n: usize,
    pub o: usize,
    pub i: usize,
    /// Input batch and features.
    pub in_n: usize,
    pub in_c: usize,
    pub input: Vec<usize>,
    pub window: Vec<usize>,
    pub output: Vec<usize>,
    /// Each axis's `d` at these sizes.
    pub offsets: Vec<i64>,
    pub p: ConvParams,
}

impl ConvGeometry {
    /// From the operands' and the result's dimensions (without leading
    /// axes).
    pub fn new(x: &[usize], w: &[usize], out: &[usize], p: &ConvParams) -> ConvGeometry {
        ConvGeometry {
            n: out[0],
            o: w[0],
            i: w[1],
            in_n: x[0],
            in_c: x[1],
            input: x[2..].to_vec(),
            window: w[2..].to_vec(),
            output: out[2..].to_vec(),
            offsets: (0..p.spatial())
                .map(|k| p.axes[k].offset([x[k + 2], out[k + 2], w[k + 2]]))
                .collect(),
            p: p.clone(),
        }
    }

    pub fn groups(&self) -> usize {
        self.p.groups() as usize
    }

    /// Output features per group.
    pub fn o_per_group(&self) -> usize {
        self.o / self.groups()
    }

    /// The input batch and first input feature that output batch `n` of
    /// group `g` reads.
    pub fn input_origin(&self, n: usize, g: usize) -> (usize, usize) {
        if self.p.batch_groups > 1 {
            (g * self.n + n, 0)
        } else {
            (n, g * self.i)
        }
    }

    /// The row-major offset within one input feature plane of the element
    /// that output position `out` reads at window tap `tap` (both
    /// multi-indices), if any.
    pub fn input_offset(&self, out: &[usize], tap: &[usize]) -> Option<usize> {
        let mut off = 0;
        for (k, axis) in self.p.axes.iter().enumerate() {
            off = off * self.input[k]
                + axis.input_pos(self.offsets[k], out[k], tap[k], self.input[k])?;
        }
        Some(off)
    }
}

/// For each index of the result's leading axes (row-major), the index of
/// the input's and of the kernel's slice it convolves.
pub fn lead_slices(lead: &[Lead], x_lead: &[usize], w_lead: &[usize]) -> Vec<(usize, usize)> {
    let dims = lead_dims(lead, x_lead, w_lead).expect("paired leading axes of one size");
    let count: usize = dims.iter().product();
    (0..count)
        .map(|e| {
            let c = unravel(e, &dims);
            let (mut xi, mut wi) = (0, 0);
            for (k, l) in lead.iter().enumerate() {
                if l.on_lhs() {
                    xi = xi * dims[k] + c[k];
                }
                if l.on_rhs() {
                    wi = wi * dims[k] + c[k];
                }
            }
            (xi, wi)
        })
        .collect()
}

/// The reference: each output element's products summed pairwise in `f64`
/// in (feature, window) row-major order, rounded once.
pub fn conv_eval(x: &Tensor, w: &Tensor, p: &ConvParams, out_shape: &[usize]) -> Tensor {
    let (nx, nw) = p.lead_counts();
    let nl = p.lead.len();
    let geo = ConvGeometry::new(&x.shape[nx..], &w.shape[nw..], &out_shape[nl..], p);
    let x_size: usize = x.shape[nx..].iter().product();
    let w_size: usize = w.shape[nw..].iter().product();
    let mut data = Vec::new();
    for (xi, wi) in lead_slices(&p.lead, &x.shape[..nx], &w.shape[..nw]) {
        let xs = &x.data[xi * x_size..][..x_size];
        let ws = &w.data[wi * w_size..][..w_size];
        data.extend(
            conv_eval_one(xs, ws, &geo)
                .into_iter()
                .map(|v| x.dtype.round(v)),
        );
    }
    Tensor::new(x.dtype, out_shape.to_vec(), data)
}

/// One convolution (no leading axes) in `f64`.
fn conv_eval_one(x: &[f64], w: &[f64], geo: &ConvGeometry) -> Vec<f64> {
    let plane_in: usize = geo.input.iter().product();
    let taps: usize = geo.window.iter().product();
    let mut shape = vec![geo.n, geo.o];
    shape.extend(&geo.output);
    let n_out: usize = shape.iter().product();
    let og = geo.o_per_group();
    (0..n_out)
        .map(|e| {
            let c = unravel(e, &shape);
            let (n, o, out) = (c[0], c[1], &c[2..]);
            let (bn, c0) = geo.input_origin(n, o / og);
            let mut sum = PairwiseSum::new();
            for ci in 0..geo.i {
                for t in 0..taps {
                    let tap = unravel(t, &geo.window);
                    if let Some(off) = geo.input_offset(out, &tap) {
                        let xv = x[(bn * geo.in_c + c0 + ci) * plane_in + off];
                        let wv = w[(o * geo.i + ci) * taps + t];
                        sum.push(xv * wv, |v| v);
                    }
                }
            }
            sum.total(|v| v)
        })
        .collect()
}

// ---- builders ---------------------------------------------------------------

pub fn conv(f: &mut Function, x: Var, w: Var, p: ConvParams) -> Var {
    f.push(Op::Conv(p), &[x, w])
        .unwrap_or_else(|e| panic!("internal error: {e}"))
}

/// JAX's `ConvDimensionNumbers`: for the input and the result, the axes of
/// (batch, feature, spatial..); for the kernel, of (output feature, input
/// feature, window..).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvDims {
    pub lhs: Vec<usize>,
    pub rhs: Vec<usize>,
    pub out: Vec<usize>,
}

impl ConvDims {
    /// NCHW / OIHW / NCHW over `spatial` axes (JAX's default).
    pub fn nchw(spatial: usize) -> ConvDims {
        let id: Vec<usize> = (0..spatial + 2).collect();
        ConvDims {
            lhs: id.clone(),
            rhs: id.clone(),
            out: id,
        }
    }

    /// NHWC / HWIO / NHWC (`("NHWC", "HWIO", "NHWC")`).
    pub fn nhwc(spatial: usize) -> ConvDims {
        let s = spatial;
        let mut lhs = vec![0, s + 1];
        lhs.extend(1..=s);
        let mut rhs = vec![s + 1, s];
        rhs.extend(0..s);
        ConvDims {
            lhs: lhs.clone(),
            rhs,
            out: lhs,
        }
    }
}

/// Padding as JAX spells it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Padding {
    Valid,
    /// Output size `ceil(input / stride)`, the extra split low-first.
    Same,
    Explicit(Vec<(i64, i64)>),
}

impl Padding {
    /// The explicit pairs for an input of `input` and (dilated) windows of
    /// `window` (`lax.padtype_to_pads`): "SAME" needs the input's size
    /// unless the stride is 1, and the window's size.
    pub fn pairs(
        &self,
        input: &[Dim],
        window: &[Dim],
        strides: &[u64],
    ) -> Result<Vec<(i64, i64)>, String> {
        Ok(match self {
            Padding::Valid => vec![(0, 0); input.len()],
            Padding::Explicit(p) => p.clone(),
            Padding::Same => (0..input.len())
                .map(|k| {
                    let total = match (&input[k], &window[k]) {
                        (Dim::Const(n), Dim::Const(w)) => {
                            let out = n.div_ceil(strides[k]);
                            ((out.max(1) - 1) * strides[k] + w) as i64 - *n as i64
                        }
                        (_, Dim::Const(w)) if strides[k] == 1 => *w as i64 - 1,
                        (n, w) => {
                            return Err(format!(
                                "\"SAME\" padding of an axis of {n} with a window of {w} and stride {} needs sizes known when the function is built (or give the padding pairs)",
                                strides[k]
                            ))
                        }
                    };
                    let total = total.max(0);
                    Ok((total / 2, total - total / 2))
                })
                .collect::<Result<_, String>>()?,
        })
    }
}

/// The parameters of `lax.conv_general_dilated` for an input of spatial
/// sizes `input` and a kernel of window sizes `window` (the op's layout,
/// no leading axes).
#[allow(clippy::too_many_arguments)]
pub fn dilated_params(
    input: &[Dim],
    window: &[Dim],
    strides: &[u64],
    padding: &Padding,
    lhs_dilation: &[u64],
    rhs_dilation: &[u64],
    feature_groups: u64,
) -> Result<ConvParams, String> {
    let s = input.len();
    for (what, v) in [
        ("strides", strides),
        ("lhs_dilation", lhs_dilation),
        ("rhs_dilation", rhs_dilation),
    ] {
        if v.len() != s {
            return Err(format!(
                "`{what}` has {} entries, the input {s} spatial axes",
                v.len()
            ));
        }
        if v.contains(&0) {
            return Err(format!("`{what}` must be at least 1 on every axis"));
        }
    }
    if let Padding::Explicit(p) = padding {
        if p.len() != s {
            return Err(format!(
                "`padding` has {} pairs, the input {s} spatial axes",
                p.len()
            ));
        }
    }
    let dilated: Vec<Dim> = (0..s)
        .map(|k| match &window[k] {
            Dim::Const(w) => Dim::Const(dilate(*w, rhs_dilation[k])),
            d => d.clone(),
        })
        .collect();
    // "SAME" over sizes known only at the call: the rule, its length ⌈n/s⌉.
    if *padding == Padding::Same && padding.pairs(input, &dilated, strides).is_err() {
        if lhs_dilation.iter().any(|d| *d != 1) {
            return Err(
                "\"SAME\" padding with an lhs dilation needs sizes known when the function is built (or give the padding pairs)"
                    .into(),
            );
        }
        let axes = (0..s)
            .map(|k| {
                let len = crate::shape::derived::slice_len(
                    &input[k],
                    crate::shape::derived::Bound::Start(0),
                    crate::shape::derived::Bound::End(0),
                    strides[k],
                )?;
                Ok(ConvAxis {
                    a: 1,
                    b: -(strides[k] as i64),
                    c: -(rhs_dilation[k] as i64),
                    d: 0,
                    len,
                    same: Some(SameRule {
                        stride: strides[k],
                        rhs_dilation: rhs_dilation[k],
                        x_role: 0,
                        w_role: 2,
                    }),
                })
            })
            .collect::<Result<_, String>>()?;
        return Ok(ConvParams {
            axes,
            feature_groups,
            batch_groups: 1,
            lead: Vec::new(),
        });
    }
    let pads = padding.pairs(input, &dilated, strides)?;
    let axes = (0..s)
        .map(|k| {
            let g = WindowGeometry {
                stride: strides[k],
                lo: pads[k].0,
                hi: pads[k].1,
                lhs_dilation: lhs_dilation[k],
                rhs_dilation: rhs_dilation[k],
            };
            ConvAxis::strided(&input[k], &window[k], g)
        })
        .collect();
    Ok(ConvParams {
        axes,
        feature_groups,
        batch_groups: 1,
        lead: Vec::new(),
    })
}

/// `lax.conv_general_dilated`: operands in the layout `dims` names,
/// transposed into the op's one layout and the result back.
#[allow(clippy::too_many_arguments)]
pub fn conv_general_dilated(
    f: &mut Function,
    x: Var,
    w: Var,
    strides: &[u64],
    padding: &Padding,
    lhs_dilation: &[u64],
    rhs_dilation: &[u64],
    dims: &ConvDims,
    feature_groups: u64,
) -> Result<Var, String> {
    let rank = f.shape(x).rank();
    if rank < 3 || f.shape(w).rank() != rank {
        return Err(format!(
            "needs an input and a kernel of one rank (at least 3), got {} and {}",
            f.ty(x),
            f.ty(w)
        ));
    }
    for (what, spec) in [("lhs", &dims.lhs), ("rhs", &dims.rhs), ("out", &dims.out)] {
        let mut seen = spec.clone();
        seen.sort_unstable();
        if spec.len() != rank || seen != (0..rank).collect::<Vec<_>>() {
            return Err(format!(
                "the {what} dimension numbers {spec:?} must order the {rank} axes of the input"
            ));
        }
    }
    let xc = transpose(f, x, dims.lhs.clone());
    let wc = transpose(f, w, dims.rhs.clone());
    let p = dilated_params(
        &f.shape(xc).0[2..],
        &f.shape(wc).0[2..],
        strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        feature_groups,
    )?;
    let out = f.push(Op::Conv(p), &[xc, wc])?;
    Ok(transpose(f, out, inverse_perm(&dims.out)))
}

// ---- derivative rules -------------------------------------------------------

/// JVP: bilinear, so the sum of the convolution with each tangent.
pub fn conv_jvp(
    f: &mut Function,
    x: Var,
    w: Var,
    p: &ConvParams,
    tx: Option<Var>,
    tw: Option<Var>,
) -> Option<Var> {
    let l = tx.map(|t| conv(f, t, w, p.clone()));
    let r = tw.map(|t| conv(f, x, t, p.clone()));
    match (l, r) {
        (Some(l), Some(r)) => Some(f.add(l, r)),
        (l, r) => l.or(r),
    }
}

fn constant(d: &Dim) -> u64 {
    match d {
        Dim::Const(n) => *n,
        Dim::Sym(s) => panic!("internal error: conv regroups an axis of symbolic size {s}"),
    }
}

/// Axis `src` of `x` split into `(size, rest)` (JAX's `_reshape_axis_out_of`).
fn axis_out_of(f: &mut Function, src: usize, size: u64, x: Var) -> Var {
    let mut s = f.shape(x).0.clone();
    let rest = constant(&s[src]) / size;
    s.splice(src..=src, [Dim::Const(size), Dim::Const(rest)]);
    reshape(f, x, Shape(s))
}

/// Axis `src` of `x` merged into axis `dst` (numbered without `src`), as
/// its major part (JAX's `_reshape_axis_into`).
fn axis_into(f: &mut Function, src: usize, dst: usize, x: Var) -> Var {
    let s = f.shape(x).0.clone();
    let mut perm: Vec<usize> = (0..s.len()).filter(|a| *a != src).collect();
    perm.insert(dst, src);
    let t = transpose(f, x, perm);
    let mut merged: Vec<Dim> = s
        .iter()
        .enumerate()
        .filter(|(a, _)| *a != src)
        .map(|(_, d)| d.clone())
        .collect();
    merged[dst] = Dim::Const(constant(&merged[dst]) * constant(&s[src]));
    reshape(f, t, Shape(merged))
}

/// The permutation swapping axes `at` and `at + 1` of a rank-`rank` value.
fn swap_at(rank: usize, at: usize) -> Vec<usize> {
    let mut perm: Vec<usize> = (0..rank).collect();
    perm.swap(at, at + 1);
    perm
}

/// Sum `v` over the leading axes whose `keep` is false (the result's
/// leading axes that one operand did not have).
fn sum_lead(f: &mut Function, v: Var, lead: &[Lead], keep: fn(Lead) -> bool) -> Var {
    let axes: Vec<usize> = (0..lead.len()).filter(|k| !keep(lead[*k])).collect();
    if axes.is_empty() {
        v
    } else {
        f.reduce_sum(v, axes)
    }
}

/// The cotangent of `x` (of type `x_ty`) given the kernel `w`:
/// `_conv_general_dilated_transpose_lhs` (see the module docs). A result
/// axis the input lacked (a kernel-only leading axis) is summed.
pub fn conv_transpose_lhs(f: &mut Function, p: &ConvParams, x_ty: &Type, w: Var, ct: Var) -> Var {
    let s = p.spatial();
    let (nx, nw) = p.lead_counts();
    let groups = p.groups();
    // The kernel's groups move from its output features into its input
    // features, which the transposed kernel outputs.
    let w = if groups > 1 {
        let w = axis_out_of(f, nw, groups, w);
        axis_into(f, nw, nw + 1, w)
    } else {
        w
    };
    let w = transpose(f, w, swap_at(nw + s + 2, nw));
    // Output positions become input positions, of the input's lengths.
    let axes = p
        .axes
        .iter()
        .zip(&x_ty.shape.0[nx + 2..])
        .map(|(a, len)| ConvAxis {
            a: a.b,
            b: a.a,
            c: a.c,
            d: a.d,
            len: len.clone(),
            same: a.same.map(|r| r.swapped(0, 1)),
        })
        .collect();
    // The cotangent has every leading axis; the kernel its own.
    let lead = p
        .lead
        .iter()
        .map(|l| if l.on_rhs() { Lead::Both } else { Lead::Lhs })
        .collect();
    let q = ConvParams {
        axes,
        feature_groups: groups,
        batch_groups: 1,
        lead,
    };
    let out = conv(f, ct, w, q);
    let out = sum_lead(f, out, &p.lead, Lead::on_lhs);
    if p.batch_groups > 1 {
        let out = axis_out_of(f, nx + 1, p.batch_groups, out);
        axis_into(f, nx + 1, nx, out)
    } else {
        out
    }
}

/// The cotangent of `w` (of type `w_ty`) given the input `x`:
/// `_conv_general_dilated_transpose_rhs` (see the module docs). A result
/// axis the kernel lacked (an input-only leading axis) is summed.
pub fn conv_transpose_rhs(f: &mut Function, p: &ConvParams, w_ty: &Type, x: Var, ct: Var) -> Var {
    let s = p.spatial();
    let (nx, nw) = p.lead_counts();
    let nl = p.lead.len();
    // Window taps become output positions, of the window's lengths.
    let axes = p
        .axes
        .iter()
        .zip(&w_ty.shape.0[nw + 2..])
        .map(|(a, len)| ConvAxis {
            a: a.a,
            b: a.c,
            c: a.b,
            d: a.d,
            len: len.clone(),
            same: a.same.map(|r| r.swapped(1, 2)),
        })
        .collect();
    // The input has its own leading axes; the cotangent every one.
    let lead = p
        .lead
        .iter()
        .map(|l| if l.on_lhs() { Lead::Both } else { Lead::Rhs })
        .collect();
    let q = ConvParams {
        axes,
        // Feature groups become batch groups, and back.
        feature_groups: p.batch_groups,
        batch_groups: p.feature_groups,
        lead,
    };
    let xt = transpose(f, x, swap_at(nx + s + 2, nx));
    let ctt = transpose(f, ct, swap_at(nl + s + 2, nl));
    let out = conv(f, xt, ctt, q);
    let out = transpose(f, out, swap_at(nl + s + 2, nl));
    sum_lead(f, out, &p.lead, Lead::on_rhs)
}

// ---- batching ---------------------------------------------------------------

/// Batching with a leading batch axis on the batched operands: a new
/// leading axis of the op, paired when both operands carry it. (JAX folds
/// the batch into the batch or feature-group axes by reshapes; here the
/// batch size is a symbol, which a reshape cannot multiply.)
pub fn conv_batch(f: &mut Function, x: Var, w: Var, p: &ConvParams, batched: &[bool]) -> Var {
    let new = match (batched[0], batched[1]) {
        (true, true) => Lead::Both,
        (true, false) => Lead::Lhs,
        (false, true) => Lead::Rhs,
        (false, false) => unreachable!("internal error: batching an unbatched conv"),
    };
    let mut q = p.clone();
    q.lead.insert(0, new);
    conv(f, x, w, q)
}
