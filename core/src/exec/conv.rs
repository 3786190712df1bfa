//! The convolution step of the schedule (`ops::conv`): the host lays out
//! each (batch, group)'s input patches as a matrix (im2col) and multiplies
//! the group's kernel rows by it with `gemm`.
//!
//! `f32` and `f64` run in their own type; `f16` and `bf16` go through
//! `f32` and round once at the end. The sums are `gemm`'s (blocked, with
//! FMA), so they may differ from the reference's pairwise `f64` sums in
//! the last bits, as a matrix product does.

use super::host_step::buffer_from;
use super::{ArgDims, Program, RawArg};
use crate::buffer::Buffer;
use crate::dtype::DType;
use crate::ops::conv::{conv_infer, lead_slices, ConvGeometry, ConvParams};
use crate::tensor::unravel;

/// A convolution step (`HostStep::Conv`).
#[derive(Clone, Debug)]
pub struct ConvStep {
    pub at: usize,
    pub params: ConvParams,
    /// Its operands' buffers (input, kernel).
    pub args: Vec<usize>,
    /// `[0]`: its one result.
    pub results: Vec<usize>,
    /// The buffer it writes.
    pub outs: Vec<usize>,
}

impl ConvStep {
    pub fn text_kind(&self) -> String {
        format!("conv[{}]", self.params.text())
    }
}

/// Where each (window tap, output position) reads within an input plane;
/// `usize::MAX` for a zero of the padding or of a dilation's holes.
fn patch_offsets(geo: &ConvGeometry) -> Vec<usize> {
    let taps: usize = geo.window.iter().product();
    let outs: usize = geo.output.iter().product();
    let mut offs = Vec::with_capacity(taps * outs);
    for t in 0..taps {
        let tap = unravel(t, &geo.window);
        for p in 0..outs {
            let out = unravel(p, &geo.output);
            offs.push(geo.input_offset(&out, &tap).unwrap_or(usize::MAX));
        }
    }
    offs
}

/// The element types `gemm` multiplies here.
trait Scalar: Copy + Default + 'static {
    const ONE: Self;
}
impl Scalar for f32 {
    const ONE: f32 = 1.0;
}
impl Scalar for f64 {
    const ONE: f64 = 1.0;
}

/// `out` (`[n, o, output..]`) = the convolution of `x` and `w` (in the
/// op's layout), by im2col and one `gemm` per (batch, group).
fn conv_gemm<T: Scalar>(x: &[T], w: &[T], geo: &ConvGeometry, out: &mut [T]) {
    let plane_in: usize = geo.input.iter().product();
    let taps: usize = geo.window.iter().product();
    let outs: usize = geo.output.iter().product();
    let k = geo.i * taps;
    let og = geo.o_per_group();
    assert_eq!(x.len(), geo.in_n * geo.in_c * plane_in, "conv input size");
    assert_eq!(w.len(), geo.o * k, "conv kernel size");
    assert_eq!(out.len(), geo.n * geo.o * outs, "conv result size");
    if out.is_empty() {
        return;
    }
    if k == 0 {
        out.fill(T::default());
        return;
    }
    let offs = patch_offsets(geo);
    let mut patches = vec![T::default(); k * outs];
    for n in 0..geo.n {
        for g in 0..geo.groups() {
            let (bn, c0) = geo.input_origin(n, g);
            for ci in 0..geo.i {
                let start = ((bn * geo.in_c) + c0 + ci) * plane_in;
                let plane = &x[start..start + plane_in];
                for t in 0..taps {
                    let row = &mut patches[(ci * taps + t) * outs..][..outs];
                    let at = &offs[t * outs..][..outs];
                    for (r, &o) in row.iter_mut().zip(at) {
                        *r = if o == usize::MAX {
                            T::default()
                        } else {
                            plane[o]
                        };
                    }
                }
            }
            let rows = &w[g * og * k..][..og * k];
            let dst = &mut out[(n * geo.o + g * og) * outs..][..og * outs];
            // SAFETY: `rows` holds the og×k kernel matrix (row stride k),
            // `patches` the k×outs patch matrix (row stride outs) and `dst`
            // og×outs elements (row stride outs): every index gemm forms
            // is inside its slice, and `dst` overlaps neither operand.
            unsafe {
                gemm::gemm(
                    og,
                    outs,
                    k,
                    dst.as_mut_ptr(),
                    1,
                    outs as isize,
                    false,
                    rows.as_ptr(),
                    1,
                    k as isize,
                    patches.as_ptr(),
                    1,
                    outs as isize,
                    T::default(),
                    T::ONE,
                    false,
                    false,
                    false,
                    gemm::Parallelism::None,
                )
            };
        }
    }
}

/// The convolutions of every leading index (`lead_slices`' pairs).
fn conv_all<T: Scalar>(
    x: &[T],
    w: &[T],
    geo: &ConvGeometry,
    slices: &[(usize, usize)],
    out: &mut [T],
) {
    let x_size = geo.in_n * geo.in_c * geo.input.iter().product::<usize>();
    let w_size = geo.o * geo.i * geo.window.iter().product::<usize>();
    let out_size = geo.n * geo.o * geo.output.iter().product::<usize>();
    for (k, (xi, wi)) in slices.iter().enumerate() {
        conv_gemm(
            &x[xi * x_size..][..x_size],
            &w[wi * w_size..][..w_size],
            geo,
            &mut out[k * out_size..][..out_size],
        );
    }
}

/// The convolution of two buffers of one float dtype, in that dtype:
/// `x_dims` and `w_dims` are the operands' dimensions.
pub fn conv_buffers(
    x: &Buffer,
    w: &Buffer,
    [x_dims, w_dims, out_dims]: [&[usize]; 3],
    p: &ConvParams,
) -> Result<Buffer, String> {
    let (nx, nw) = p.lead_counts();
    let nl = p.lead.len();
    let s = p.spatial();
    for (dims, lead, name, b) in [(x_dims, nx, "input", x), (w_dims, nw, "kernel", w)] {
        if dims.len() != lead + s + 2 || dims.iter().product::<usize>() != b.len() {
            return Err(format!(
                "conv's {name} of dimensions {dims:?} ({} elements) does not fit [{}]",
                b.len(),
                p.text()
            ));
        }
    }
    let lead = crate::ops::conv::lead_dims(&p.lead, &x_dims[..nx], &w_dims[..nw]);
    if out_dims.len() != nl + s + 2 || lead.as_deref() != Some(&out_dims[..nl]) {
        return Err(format!(
            "conv's result dimensions {out_dims:?} do not fit its operands' {x_dims:?} and {w_dims:?}"
        ));
    }
    let geo = ConvGeometry::new(&x_dims[nx..], &w_dims[nw..], &out_dims[nl..], p);
    let slices = lead_slices(&p.lead, &x_dims[..nx], &w_dims[..nw]);
    let len = out_dims.iter().product::<usize>();
    let geo = &geo;
    Ok(match (x, w) {
        (Buffer::F32(x), Buffer::F32(w)) => {
            let mut out = vec![0f32; len];
            conv_all(x, w, geo, &slices, &mut out);
            Buffer::F32(out)
        }
        (Buffer::F64(x), Buffer::F64(w)) => {
            let mut out = vec![0f64; len];
            conv_all(x, w, geo, &slices, &mut out);
            Buffer::F64(out)
        }
        (x, w) if x.dtype() == w.dtype() && x.dtype().is_float() => {
            let wide = |b: &Buffer| -> Vec<f32> { (0..b.len()).map(|i| b.get(i) as f32).collect() };
            let mut out = vec![0f32; len];
            conv_all(&wide(x), &wide(w), geo, &slices, &mut out);
            let out: Vec<f64> = out.into_iter().map(f64::from).collect();
            Buffer::from_f64(x.dtype(), &out)
        }
        (x, w) => return Err(format!("conv of {} and {} buffers", x.dtype(), w.dtype())),
    })
}

impl Program {
    /// Check conv step `s` (see `check_host_step`): two operands of its
    /// dimensions, whose convolution's type is its result buffer's.
    pub(super) fn check_conv(
        &self,
        what: &str,
        s: &ConvStep,
        written: &mut [bool],
        read: &mut [bool],
    ) -> Result<(), String> {
        let types = self.buffer_types(what, &s.args)?;
        let [x, w] = &types[..] else {
            return Err(format!("{what}: {} operands, conv takes 2", types.len()));
        };
        let out = conv_infer(x, w, &s.params).map_err(|e| format!("{what}: {e}"))?;
        self.check_step_operands(what, "conv", &s.args, &types, written, read)?;
        self.check_step_results(what, &s.args, &s.results, &s.outs, &[out], written)
    }

    /// Run conv step `s`.
    ///
    /// # Safety
    /// As for `run_host_step`.
    pub(super) unsafe fn run_conv(
        &self,
        s: &ConvStep,
        ops: &[RawArg],
        outs: &[(*mut u8, usize)],
        out_dims: &[ArgDims],
    ) -> Result<(), String> {
        let dims = |k: usize| {
            ops[k]
                .dims
                .get()
                .map(<[usize]>::to_vec)
                .ok_or_else(|| "conv's operands need their dimensions".to_string())
        };
        let (x_dims, w_dims) = (dims(0)?, dims(1)?);
        let out_dims = out_dims
            .first()
            .and_then(|d| d.get())
            .ok_or_else(|| "conv's result needs its dimensions".to_string())?;
        // SAFETY: each operand points to `len` live elements of its dtype
        // (the caller's guarantee).
        let (x, w) = unsafe { (buffer_from(&ops[0]), buffer_from(&ops[1])) };
        let out = conv_buffers(&x, &w, [&x_dims, &w_dims, out_dims], &s.params)?;
        let (dst, dst_len) = outs[0];
        if dst_len != out.len() {
            return Err(format!(
                "conv writes {dst_len} elements, its operands give {}",
                out.len()
            ));
        }
        debug_assert!(out.dtype() != DType::Bool);
        // SAFETY: the output holds `dst_len == out.len()` elements of the
        // result's dtype (the operands', checked by `check_conv`), and
        // overlaps no operand.
        unsafe {
            std::ptr::copy_nonoverlapping(out.as_ptr(), dst, out.len() * out.dtype().size_bytes())
        };
        Ok(())
    }
}
