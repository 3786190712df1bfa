//! [`CudaProgram`](crate::CudaProgram)'s call on the host, for tests on
//! machines without a GPU: the same `program::Schedule` (binding,
//! allocation, fills, launch order, outputs) and the same host-step runner
//! (`host_steps`, loops and conds), with host buffers in place of device
//! arrays and the kernel interpreter in place of the PTX. Its memory is
//! modelled as the device sees it: buffers the call allocates
//! uninitialised hold `poison`, and a reduction combines its result into
//! its output (the PTX adds block partial sums atomically, or takes their
//! max/min by compare-and-swap), so only the fill the schedule chooses
//! (0, -inf, +inf) makes a reduction come out right.
//!
//! Everything but the driver calls is checked this way; the device run
//! itself is `tests/suite/program.rs` on a GPU.

use crate::host_steps::{self, Children, Runner};
use crate::program::{Bound, Output, Schedule};
use oxla_core::exec::{ArgDims, Program, Slot};
use oxla_core::kernel::interp;
use oxla_core::{Buffer, DType};
use oxla_ptx::has_work;

/// A host array with its dimensions (the emulated `DeviceBuffer`).
#[derive(Clone, Debug)]
pub(crate) struct HostBuf {
    pub buf: Buffer,
    pub dims: Vec<usize>,
}

/// A program, its schedule and its host steps' programs (the emulated
/// `CudaProgram`).
pub(crate) struct Model {
    pub program: Program,
    pub schedule: Schedule,
    host: Vec<Children<Model>>,
}

impl Model {
    pub fn new(program: Program) -> Result<Model, String> {
        let schedule = Schedule::new(&program)?;
        Model::with_schedule(program, schedule)
    }

    /// The model with a schedule of the caller's (tests alter one).
    pub fn with_schedule(program: Program, schedule: Schedule) -> Result<Model, String> {
        let host = program
            .host_steps
            .iter()
            .map(|s| Children::load(s, |n| Model::new(n.program.clone()), Model::new))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Model {
            program,
            schedule,
            host,
        })
    }

    /// `run` on arguments known by their lengths only (as
    /// `CudaProgram::run` passes them).
    pub fn run_flat(&self, args: &[Buffer]) -> Result<Vec<Buffer>, String> {
        let held: Vec<HostBuf> = args
            .iter()
            .map(|b| HostBuf {
                buf: b.clone(),
                dims: vec![b.len()],
            })
            .collect();
        let refs: Vec<(&HostBuf, ArgDims)> = held.iter().map(|b| (b, ArgDims::FLAT)).collect();
        Ok(self.run(&refs)?.into_iter().map(|b| b.buf).collect())
    }

    /// `CudaProgram::run_args` on host buffers.
    pub fn run(&self, args: &[(&HostBuf, ArgDims)]) -> Result<Vec<HostBuf>, String> {
        let (p, s) = (&self.program, &self.schedule);
        let spec: Vec<(DType, usize, ArgDims)> = args
            .iter()
            .map(|(b, d)| (b.buf.dtype(), b.buf.len(), *d))
            .collect();
        let bound = s.bind(p, &spec)?;
        let mut owned: Vec<Option<HostBuf>> = s
            .owned
            .iter()
            .map(|o| {
                let len = bound.lens[o.buffer];
                let dims = s.dims(o.buffer, &bound);
                (!o.from_step).then(|| HostBuf {
                    buf: match o.fill {
                        Some(v) => Buffer::from_f64(o.dtype, &vec![v; len]),
                        None => poison(o.dtype, len),
                    },
                    dims,
                })
            })
            .collect();
        let mut next_host = 0;
        for l in 0..=s.steps.len() {
            while next_host < p.host_steps.len() && p.host_steps[next_host].at() == l {
                self.host_step(next_host, args, &mut owned, &bound)?;
                next_host += 1;
            }
            let Some(step) = s.steps.get(l) else {
                break;
            };
            let k = &p.kernels[step.kernel];
            let sizes = &bound.kernel_sizes[l];
            if !has_work(k, sizes) && k.region().is_some() {
                continue;
            }
            if !has_work(k, sizes) {
                // As `launch_step`: nothing runs; non-zeroed outputs are zeroed.
                for (b, arg) in step.args.iter().zip(&k.args) {
                    if let (true, Slot::Owned(o)) = (arg.output, s.slot[*b]) {
                        if s.owned[o].fill.is_none() {
                            let d = owned[o].as_mut().ok_or("an output is missing")?;
                            d.buf = Buffer::zeros(s.owned[o].dtype, bound.lens[*b]);
                        }
                    }
                }
                continue;
            }
            let mut bufs: Vec<Buffer> = step
                .args
                .iter()
                .map(|b| match s.slot[*b] {
                    Slot::Param(i) => Ok(args[i].0.buf.clone()),
                    Slot::Owned(o) => owned[o]
                        .as_ref()
                        .map(|d| d.buf.clone())
                        .ok_or_else(|| format!("launch {l}: buffer {b} is missing")),
                })
                .collect::<Result<_, String>>()?;
            for (b, d) in step.args.iter().zip(&bufs) {
                if d.len() != bound.lens[*b] {
                    return Err(format!("launch {l}: buffer {b} has {} elements", d.len()));
                }
            }
            interp::run(k, &mut bufs, sizes)?;
            for ((b, arg), mut d) in step.args.iter().zip(&k.args).zip(bufs) {
                if let (true, Slot::Owned(o)) = (arg.output, s.slot[*b]) {
                    let out = owned[o].as_mut().ok_or("an output is missing")?;
                    if k.is_reduction() {
                        for j in 0..d.len() {
                            d.set(j, k.reduce.combine(out.buf.get(j), d.get(j)));
                        }
                    }
                    out.buf = d;
                }
            }
        }
        let mut results = Vec::with_capacity(s.outputs.len());
        for (i, o) in s.outputs.iter().enumerate() {
            let buf = match *o {
                Output::Param(q) => args[q].0.buf.clone(),
                Output::Copy(o) => owned[o].as_ref().ok_or("missing")?.buf.clone(),
                Output::Move(o) => owned[o].take().ok_or("missing")?.buf,
            };
            let dims = s.dims(p.outputs[i], &bound);
            results.push(HostBuf { buf, dims });
        }
        Ok(results)
    }

    /// `CudaProgram::host_step` on host buffers.
    fn host_step(
        &self,
        j: usize,
        args: &[(&HostBuf, ArgDims)],
        owned: &mut [Option<HostBuf>],
        bound: &Bound,
    ) -> Result<(), String> {
        let (p, s) = (&self.program, &self.schedule);
        let step = &p.host_steps[j];
        let results = {
            let mut ops: Vec<(&HostBuf, ArgDims)> = Vec::new();
            for b in step.args() {
                let d = match s.slot[*b] {
                    Slot::Param(i) => args[i].0,
                    Slot::Owned(o) => owned[o]
                        .as_ref()
                        .ok_or_else(|| format!("host step {j}: buffer {b} is missing"))?,
                };
                if d.buf.dtype() != p.buffers[*b].dtype || d.buf.len() != bound.lens[*b] {
                    return Err(format!("host step {j}: buffer {b} is wrong"));
                }
                let dims = s.dims(*b, bound);
                ops.push((d, ArgDims::new(&dims).unwrap_or(ArgDims::FLAT)));
            }
            let outs: Vec<(DType, Vec<usize>)> = step
                .outs()
                .iter()
                .map(|b| (p.buffers[*b].dtype, s.dims(*b, bound)))
                .collect();
            host_steps::run(&HostRunner, step, &self.host[j], &ops, &outs)?
        };
        for (b, d) in step.outs().iter().zip(results) {
            let dims = s.dims(*b, bound);
            let Slot::Owned(o) = s.slot[*b] else {
                return Err(format!("host step {j} writes a parameter"));
            };
            if d.buf.dtype() != p.buffers[*b].dtype
                || d.buf.len() != bound.lens[*b]
                || d.dims != dims
                || owned[o].is_some()
            {
                return Err(format!(
                    "host step {j}: result for buffer {b} is {} of shape {:?}, expected {} of {dims:?}",
                    d.buf.dtype(),
                    d.dims,
                    p.buffers[*b].dtype
                ));
            }
            owned[o] = Some(d);
        }
        Ok(())
    }
}

/// Host steps on host buffers.
struct HostRunner;

impl Runner for HostRunner {
    type Buf = HostBuf;
    type Prog = Model;

    fn run(&self, p: &Model, args: &[(&HostBuf, ArgDims)]) -> Result<Vec<HostBuf>, String> {
        p.run(args)
    }

    fn dims(&self, b: &HostBuf) -> ArgDims {
        ArgDims::new(&b.dims).unwrap_or(ArgDims::FLAT)
    }

    fn bytes(&self, b: &HostBuf) -> usize {
        b.buf.len() * b.buf.dtype().size_bytes()
    }

    fn read_i64(&self, b: &HostBuf) -> Result<i64, String> {
        match &b.buf {
            Buffer::I64(v) if v.len() == 1 => Ok(v[0]),
            _ => Err("a loop bound is not one i64".into()),
        }
    }

    fn read_bool(&self, b: &HostBuf) -> Result<bool, String> {
        match &b.buf {
            Buffer::Bool(v) if v.len() == 1 => Ok(v[0] != 0),
            _ => Err("a predicate is not one bool".into()),
        }
    }

    fn set_index(&self, slot: &mut Option<HostBuf>, i: i64) -> Result<(), String> {
        *slot = Some(HostBuf {
            buf: Buffer::I64(vec![i]),
            dims: Vec::new(),
        });
        Ok(())
    }

    fn copy(&self, b: &HostBuf, dims: ArgDims) -> Result<HostBuf, String> {
        Ok(HostBuf {
            buf: b.buf.clone(),
            dims: dims.get().map_or_else(|| b.dims.clone(), <[usize]>::to_vec),
        })
    }

    fn zeros(&self, dtype: DType, dims: &[usize]) -> Result<HostBuf, String> {
        Ok(HostBuf {
            buf: Buffer::zeros(dtype, dims.iter().product()),
            dims: dims.to_vec(),
        })
    }
}

/// What an uninitialised device buffer may hold: all bits set (a NaN
/// for every float type, so reading it shows in any float result).
pub(crate) fn poison(dtype: DType, len: usize) -> Buffer {
    match dtype {
        DType::F16 => Buffer::F16(vec![half::f16::from_bits(u16::MAX); len]),
        DType::BF16 => Buffer::BF16(vec![half::bf16::from_bits(u16::MAX); len]),
        DType::F32 => Buffer::F32(vec![f32::from_bits(u32::MAX); len]),
        DType::F64 => Buffer::F64(vec![f64::from_bits(u64::MAX); len]),
        DType::Bool => Buffer::Bool(vec![u8::MAX; len]),
        DType::I32 => Buffer::I32(vec![-1; len]),
        DType::I64 => Buffer::I64(vec![-1; len]),
    }
}

/// Run `program` as `CudaProgram::run` would (arguments known by their
/// lengths), on the host with the kernel interpreter (see the module docs).
pub fn run(program: &Program, args: &[Buffer]) -> Result<Vec<Buffer>, String> {
    Model::new(program.clone())?.run_flat(args)
}

/// Run `program` as `CudaProgram::run_shaped` would, on the host with the
/// kernel interpreter (see the module docs).
pub fn run_shaped(
    program: &Program,
    args: &[(Buffer, Vec<usize>)],
) -> Result<Vec<(Buffer, Vec<usize>)>, String> {
    let m = Model::new(program.clone())?;
    let held: Vec<HostBuf> = args
        .iter()
        .map(|(b, d)| HostBuf {
            buf: b.clone(),
            dims: d.clone(),
        })
        .collect();
    let mut refs = Vec::with_capacity(held.len());
    for b in &held {
        let d = ArgDims::new(&b.dims).ok_or("too many axes")?;
        if b.dims.iter().product::<usize>() != b.buf.len() {
            return Err(format!(
                "shape {:?} does not hold {} elements",
                b.dims,
                b.buf.len()
            ));
        }
        refs.push((b, d));
    }
    Ok(m.run(&refs)?.into_iter().map(|b| (b.buf, b.dims)).collect())
}
