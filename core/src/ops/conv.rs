//! Convolution: `conv[..](x, w)`, `lax.conv_general_dilated` in one layout.
//!
//! The op has one layout: `x` is `[N, C, spatial..]`, `w` is
//! `[O, I, window..]` and the result `[N / batch_groups, O, spatial'..]`
//! (JAX's NCHW/OIHW/NCHW). Any other of JAX's dimension numbers (NHWC, …)
//! is a transpose of each operand and of the result, which the builder
//! (`conv_general_dilated`) adds, so every rule and the host step see one
//! layout. Its parameters are XLA's: window strides, padding (low, high;
//! negative crops), lhs (input) dilation, rhs (window) dilation, and the
//! feature and batch group counts (at most one of them above 1).
//!
//! Output position `p` along a spatial axis reads input position
//! `(p·stride + k·rhs_dilation − low) / lhs_dilation` for window tap `k`,
//! where that is an integer inside the input (else a zero of the padding or
//! of the dilation's holes). With `G` feature groups, output feature `o`
//! reads input features `g·I .. (g+1)·I` for its group `g = o / (O/G)`; with
//! `B` batch groups, output batch `n` of output feature `o` reads input
//! batch `g·(N/B) + n` for `o`'s group `g`.
//!
//! The rules are JAX's (`jax/_src/lax/convolution.py`): the JVP is bilinear;
//! the lhs transpose is a convolution of the cotangent with the kernel
//! flipped along its window axes and its features swapped (strides and lhs
//! dilation trading places); the rhs transpose is a convolution of `x` with
//! the cotangent, batch and feature axes swapped, feature groups becoming
//! batch groups.
//!
//! Batching differs from JAX's: `vmap`'s batch size is a symbol here, which
//! no reshape can fold into `N`, `O` or the group counts (parameters), so
//! the op has leading axes of its own (`lead`): each on both operands (one
//! convolution per index) or on one (the other shared). The transposes
//! keep them and sum a cotangent over the axes its operand lacked. Every
//! other dimension must be known when the function is built.
//!
//! On devices it is a host step (`exec::conv`): im2col and one `gemm` per
//! (batch, group).

use crate::dtype::DType;
use crate::ir::{Function, Type, Var};
use crate::kernel::PairwiseSum;
use crate::ops::elementwise::CmpOp;
use crate::ops::layout::{inverse_perm, move_axis_perm, reshape, transpose};
use crate::ops::{DotDims, Op};
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

/// The parameters of a convolution in the op's one layout.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConvParams {
    pub strides: Vec<u64>,
    /// `(low, high)` per spatial axis; negative crops.
    pub padding: Vec<(i64, i64)>,
    pub lhs_dilation: Vec<u64>,
    pub rhs_dilation: Vec<u64>,
    pub feature_groups: u64,
    pub batch_groups: u64,
    /// The result's leading axes before `[N, O, spatial..]`; each operand
    /// has those on it, in order, before its own layout's axes.
    pub lead: Vec<Lead>,
}

impl ConvParams {
    /// No strides, padding or dilation over `spatial` axes, one group.
    pub fn plain(spatial: usize) -> ConvParams {
        ConvParams {
            strides: vec![1; spatial],
            padding: vec![(0, 0); spatial],
            lhs_dilation: vec![1; spatial],
            rhs_dilation: vec![1; spatial],
            feature_groups: 1,
            batch_groups: 1,
            lead: Vec::new(),
        }
    }

    /// How many leading axes each operand has.
    pub fn lead_counts(&self) -> (usize, usize) {
        let on = |k: fn(Lead) -> bool| self.lead.iter().filter(|l| k(**l)).count();
        (on(Lead::on_lhs), on(Lead::on_rhs))
    }

    pub fn spatial(&self) -> usize {
        self.strides.len()
    }

    /// The group count (feature or batch groups, whichever is above 1).
    pub fn groups(&self) -> u64 {
        self.feature_groups * self.batch_groups
    }

    /// The text form: `strides;lo:hi,..;lhs_dil;rhs_dil;fg;bg;lead`
    /// (`lead` a letter per leading axis: `b`oth, `l`hs, `r`hs).
    pub fn text(&self) -> String {
        let list = |v: &[u64]| {
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        let pads = self
            .padding
            .iter()
            .map(|(l, h)| format!("{l}:{h}"))
            .collect::<Vec<_>>()
            .join(",");
        let lead: String = self.lead.iter().map(|l| l.letter()).collect();
        format!(
            "{};{pads};{};{};{};{};{lead}",
            list(&self.strides),
            list(&self.lhs_dilation),
            list(&self.rhs_dilation),
            self.feature_groups,
            self.batch_groups
        )
    }

    /// Parses `text`'s form.
    pub fn parse(s: &str) -> Option<ConvParams> {
        let parts: Vec<&str> = s.split(';').collect();
        let [st, pads, ld, rd, fg, bg, lead] = parts[..] else {
            return None;
        };
        let list = |p: &str| -> Option<Vec<u64>> {
            if p.is_empty() {
                return Some(Vec::new());
            }
            p.split(',').map(|x| x.parse().ok()).collect()
        };
        let padding = if pads.is_empty() {
            Vec::new()
        } else {
            pads.split(',')
                .map(|p| {
                    let (l, h) = p.split_once(':')?;
                    Some((l.parse().ok()?, h.parse().ok()?))
                })
                .collect::<Option<Vec<_>>>()?
        };
        Some(ConvParams {
            strides: list(st)?,
            padding,
            lhs_dilation: list(ld)?,
            rhs_dilation: list(rd)?,
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

/// The output size along one spatial axis.
pub fn out_size(input: u64, window: u64, stride: u64, pad: (i64, i64), ld: u64, rd: u64) -> u64 {
    let padded = dilate(input, ld) as i64 + pad.0 + pad.1;
    let w = dilate(window, rd) as i64;
    if padded < w || w == 0 {
        0
    } else {
        ((padded - w) / stride as i64 + 1) as u64
    }
}

fn concrete(dims: &[Dim]) -> Option<Vec<u64>> {
    dims.iter()
        .map(|d| match d {
            Dim::Const(n) => Some(*n),
            Dim::Sym(_) => None,
        })
        .collect()
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
    let (Some(xs), Some(ws)) = (concrete(&x.shape.0[nx..]), concrete(&w.shape.0[nw..])) else {
        return err("needs dimensions known when the function is built");
    };
    if p.padding.len() != s || p.lhs_dilation.len() != s || p.rhs_dilation.len() != s {
        return err("needs one stride, padding and dilation per spatial axis");
    }
    let all = |v: &[u64]| v.iter().all(|x| *x >= 1);
    if !all(&p.strides) || !all(&p.lhs_dilation) || !all(&p.rhs_dilation) {
        return err("strides and dilations must be at least 1");
    }
    let (fg, bg) = (p.feature_groups, p.batch_groups);
    if fg == 0 || bg == 0 || (fg > 1 && bg > 1) {
        return err("feature and batch group counts are at least 1, and one of them is 1");
    }
    let (n, c, o, i) = (xs[0], xs[1], ws[0], ws[1]);
    if c != i * fg {
        return err(&format!(
            "the input's {c} features must be the kernel's {i} input features times {fg} feature groups"
        ));
    }
    if o % p.groups() != 0 {
        return err(&format!(
            "the kernel's {o} output features must divide into {} groups",
            p.groups()
        ));
    }
    if n % bg != 0 {
        return err(&format!(
            "the input's batch of {n} must divide into {bg} batch groups"
        ));
    }
    let mut out = lead;
    out.extend([Dim::Const(n / bg), Dim::Const(o)]);
    for k in 0..s {
        out.push(Dim::Const(out_size(
            xs[k + 2],
            ws[k + 2],
            p.strides[k],
            p.padding[k],
            p.lhs_dilation[k],
            p.rhs_dilation[k],
        )));
    }
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
    pub p: ConvParams,
}

impl ConvGeometry {
    pub fn new(x: &[usize], w: &[usize], p: &ConvParams) -> ConvGeometry {
        let output = (0..p.spatial())
            .map(|k| {
                out_size(
                    x[k + 2] as u64,
                    w[k + 2] as u64,
                    p.strides[k],
                    p.padding[k],
                    p.lhs_dilation[k],
                    p.rhs_dilation[k],
                ) as usize
            })
            .collect();
        ConvGeometry {
            n: x[0] / p.batch_groups as usize,
            o: w[0],
            i: w[1],
            in_n: x[0],
            in_c: x[1],
            input: x[2..].to_vec(),
            window: w[2..].to_vec(),
            output,
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

    /// The input position along spatial axis `a` read by output position
    /// `out` at window tap `tap`: `None` in padding or a dilation's hole.
    pub fn input_pos(&self, a: usize, out: usize, tap: usize) -> Option<usize> {
        let p = &self.p;
        let q =
            (out as u64 * p.strides[a] + tap as u64 * p.rhs_dilation[a]) as i64 - p.padding[a].0;
        let ld = p.lhs_dilation[a] as i64;
        if q < 0 || q % ld != 0 {
            return None;
        }
        let r = (q / ld) as usize;
        (r < self.input[a]).then_some(r)
    }

    /// The row-major offset within one input feature plane of the element
    /// that output position `out` reads at window tap `tap` (both
    /// multi-indices), if any.
    pub fn input_offset(&self, out: &[usize], tap: &[usize]) -> Option<usize> {
        let mut off = 0;
        for a in 0..self.input.len() {
            off = off * self.input[a] + self.input_pos(a, out[a], tap[a])?;
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
pub fn conv_eval(x: &Tensor, w: &Tensor, p: &ConvParams) -> Tensor {
    let (nx, nw) = p.lead_counts();
    let geo = ConvGeometry::new(&x.shape[nx..], &w.shape[nw..], p);
    let x_size: usize = x.shape[nx..].iter().product();
    let w_size: usize = w.shape[nw..].iter().product();
    let mut shape = lead_dims(&p.lead, &x.shape[..nx], &w.shape[..nw]).expect("paired sizes");
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
    shape.extend([geo.n, geo.o]);
    shape.extend(&geo.output);
    Tensor::new(x.dtype, shape, data)
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
    /// The explicit pairs for inputs of `input` and (dilated) windows of
    /// `window` (`lax.padtype_to_pads`).
    pub fn pairs(&self, input: &[u64], window: &[u64], strides: &[u64]) -> Vec<(i64, i64)> {
        match self {
            Padding::Valid => vec![(0, 0); input.len()],
            Padding::Explicit(p) => p.clone(),
            Padding::Same => (0..input.len())
                .map(|k| {
                    let out = input[k].div_ceil(strides[k]);
                    let total =
                        ((out.max(1) - 1) * strides[k] + window[k]) as i64 - input[k] as i64;
                    let total = total.max(0);
                    (total / 2, total - total / 2)
                })
                .collect(),
        }
    }
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
    for (what, spec) in [("lhs", &dims.lhs), ("rhs", &dims.rhs), ("out", &dims.out)] {
        let mut seen = spec.clone();
        seen.sort_unstable();
        if spec.len() != rank || seen != (0..rank).collect::<Vec<_>>() {
            return Err(format!(
                "the {what} dimension numbers {spec:?} must order the {rank} axes of the input"
            ));
        }
    }
    if f.shape(w).rank() != rank {
        return Err(format!(
            "the kernel has rank {}, the input {rank}",
            f.shape(w).rank()
        ));
    }
    let xc = transpose(f, x, dims.lhs.clone());
    let wc = transpose(f, w, dims.rhs.clone());
    let (Some(xs), Some(ws)) = (concrete(&f.shape(xc).0), concrete(&f.shape(wc).0)) else {
        return Err("conv needs dimensions known when the function is built".into());
    };
    let s = rank.saturating_sub(2);
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
    }
    if let Padding::Explicit(p) = padding {
        if p.len() != s {
            return Err(format!(
                "`padding` has {} pairs, the input {s} spatial axes",
                p.len()
            ));
        }
    }
    let window: Vec<u64> = (0..s).map(|k| dilate(ws[k + 2], rhs_dilation[k])).collect();
    let p = ConvParams {
        strides: strides.to_vec(),
        padding: padding.pairs(&xs[2..], &window, strides),
        lhs_dilation: lhs_dilation.to_vec(),
        rhs_dilation: rhs_dilation.to_vec(),
        feature_groups,
        batch_groups: 1,
        lead: Vec::new(),
    };
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

/// The constant dimensions of `t` after its `lead` leading axes.
fn trailing(t: &Type, lead: usize) -> Vec<u64> {
    concrete(&t.shape.0[lead..]).expect("internal error: a conv operand of unknown dimensions")
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

/// `x` reversed along `axis`: a product with the exchange matrix (the op
/// set has no reversal; the window axes this flips are short).
fn reverse(f: &mut Function, x: Var, axis: usize) -> Var {
    let dtype = f.dtype(x);
    let rank = f.shape(x).rank();
    let k = constant(&f.shape(x).0[axis]);
    if k <= 1 {
        return x;
    }
    let square = Shape(vec![Dim::Const(k), Dim::Const(k)]);
    let iota = |f: &mut Function, axis| {
        let op = Op::Iota {
            shape: square.clone(),
            axis,
            dtype,
        };
        f.push(op, &[]).expect("internal error: iota")
    };
    let (row, col) = (iota(f, 0), iota(f, 1));
    let sum = f.add(row, col);
    let last = f.full((k - 1) as f64, dtype, &square);
    let on = f.cmp(CmpOp::Eq, sum, last);
    let one = f.full(1.0, dtype, &square);
    let zero = f.full(0.0, dtype, &square);
    let exchange = f.select(on, one, zero);
    let d = DotDims {
        lhs_contract: vec![axis],
        rhs_contract: vec![0],
        lhs_batch: vec![],
        rhs_batch: vec![],
    };
    let g = super::dot_general::dot_general(f, x, exchange, d);
    // The reversed axis came out last.
    transpose(f, g, move_axis_perm(rank, rank - 1, axis))
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
/// `_conv_general_dilated_transpose_lhs`. A result axis the input lacked
/// (a kernel-only leading axis) is summed.
pub fn conv_transpose_lhs(f: &mut Function, p: &ConvParams, x_ty: &Type, w: Var, ct: Var) -> Var {
    let s = p.spatial();
    let (nx, nw) = p.lead_counts();
    let nl = p.lead.len();
    let x_dims = trailing(x_ty, nx);
    let w_dims = trailing(f.ty(w), nw);
    let ct_dims = trailing(f.ty(ct), nl);
    let groups = p.groups();
    // The kernel's groups move from its output features into its input
    // features, which the transposed kernel outputs.
    let w = if groups > 1 {
        let w = axis_out_of(f, nw, groups, w);
        axis_into(f, nw, nw + 1, w)
    } else {
        w
    };
    // Swap the kernel's feature axes and flip its window.
    let mut w = transpose(f, w, swap_at(nw + s + 2, nw));
    for a in nw + 2..nw + s + 2 {
        w = reverse(f, w, a);
    }
    let padding = (0..s)
        .map(|k| {
            let in_d = dilate(x_dims[k + 2], p.lhs_dilation[k]) as i64;
            let w_d = dilate(w_dims[k + 2], p.rhs_dilation[k]) as i64;
            let out_d = dilate(ct_dims[k + 2], p.strides[k]) as i64;
            let before = w_d - p.padding[k].0 - 1;
            let after = in_d + w_d - 1 - out_d - before;
            (before, after)
        })
        .collect();
    // The cotangent has every leading axis; the kernel its own.
    let lead = p
        .lead
        .iter()
        .map(|l| if l.on_rhs() { Lead::Both } else { Lead::Lhs })
        .collect();
    let q = ConvParams {
        strides: p.lhs_dilation.clone(),
        padding,
        lhs_dilation: p.strides.clone(),
        rhs_dilation: p.rhs_dilation.clone(),
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
/// `_conv_general_dilated_transpose_rhs`. A result axis the kernel lacked
/// (an input-only leading axis) is summed.
pub fn conv_transpose_rhs(f: &mut Function, p: &ConvParams, w_ty: &Type, x: Var, ct: Var) -> Var {
    let s = p.spatial();
    let (nx, nw) = p.lead_counts();
    let nl = p.lead.len();
    let x_dims = trailing(f.ty(x), nx);
    let w_dims = trailing(w_ty, nw);
    let ct_dims = trailing(f.ty(ct), nl);
    let padding = (0..s)
        .map(|k| {
            let in_d = dilate(x_dims[k + 2], p.lhs_dilation[k]) as i64;
            let w_d = dilate(w_dims[k + 2], p.rhs_dilation[k]) as i64;
            let out_d = dilate(ct_dims[k + 2], p.strides[k]) as i64;
            let lo = p.padding[k].0;
            (lo, (out_d - in_d) + (w_d - lo - 1))
        })
        .collect();
    // The input has its own leading axes; the cotangent every one.
    let lead = p
        .lead
        .iter()
        .map(|l| if l.on_lhs() { Lead::Both } else { Lead::Rhs })
        .collect();
    let q = ConvParams {
        strides: p.rhs_dilation.clone(),
        padding,
        lhs_dilation: p.lhs_dilation.clone(),
        rhs_dilation: p.strides.clone(),
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

/// Whether `dtype` is one the host step computes in directly (the others
/// go through `f32`).
pub fn gemm_native(dtype: DType) -> bool {
    matches!(dtype, DType::F32 | DType::F64)
}
