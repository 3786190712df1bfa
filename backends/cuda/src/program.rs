//! Whole fused programs on the GPU: arrays stay on the device and every
//! launch of a call is queued on one stream without waiting.
//!
//! A [`CudaProgram`] is an `oxla_core::exec::Program` with its kernels
//! loaded. Its [`Schedule`] is worked out once from the program (which
//! buffer each launch reads and writes, which buffers the call allocates,
//! where each output comes from) and checked then; each call binds the
//! dimension symbols from the arguments' lengths and checks every launch's
//! buffers against what its kernel reads and writes *before* anything is
//! queued, so a bad call is an error and never an out-of-bounds access.
//!
//! Matrix products (`oxla_core::kernel::matmul`) in a layout cuBLAS can
//! express (`gemm_plan`) are queued as cuBLAS calls on the same stream
//! instead of their PTX kernels, when the cuBLAS library can be loaded.

use crate::blas;
use crate::buffer::DeviceBuffer;
use crate::gemm_plan;
use crate::kernels::CudaKernels;
use cudarc::cublas::CudaBlas;
use cudarc::driver::PushKernelArg;
use oxla_core::exec::{Program, Slot};
use oxla_core::kernel::fusion::fuse;
use oxla_core::kernel::matmul::MatmulKernel;
use oxla_core::{Buffer, DType, Function};
use oxla_ptx::has_work;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// A fused program whose kernels are loaded on device 0.
pub struct CudaProgram {
    program: Program,
    schedule: Schedule,
    kernels: CudaKernels,
    /// Per kernel, the product cuBLAS may run (`None`: not a product, or
    /// of a type cuBLAS is not used for).
    products: Vec<Option<MatmulKernel>>,
    /// The cuBLAS handle, or why products run on their PTX kernels.
    blas: Result<&'static Mutex<CudaBlas>, String>,
    /// Launches run as cuBLAS calls so far.
    blas_launches: AtomicUsize,
}

impl CudaProgram {
    /// Check the program's schedule and load its kernels (PTX for the
    /// device's architecture); matrix products go to cuBLAS where it can be
    /// loaded. Errs, never panics, when there is no GPU.
    pub fn new(program: Program) -> Result<CudaProgram, String> {
        CudaProgram::load(program, true)
    }

    /// As [`new`](Self::new), but every product runs on its PTX kernel.
    pub fn new_without_cublas(program: Program) -> Result<CudaProgram, String> {
        CudaProgram::load(program, false)
    }

    fn load(program: Program, cublas: bool) -> Result<CudaProgram, String> {
        let schedule = Schedule::new(&program)?;
        let kernels = CudaKernels::load(&program.kernels)?;
        let products: Vec<Option<MatmulKernel>> = program
            .kernels
            .iter()
            .map(|k| MatmulKernel::of(k).filter(|p| blas::supports(p.dtype)))
            .collect();
        let blas = if !cublas {
            Err("cuBLAS not requested".to_string())
        } else if products.iter().all(Option::is_none) {
            Err("no kernel is a matrix product".to_string())
        } else {
            blas::handle(kernels.stream())
        };
        Ok(CudaProgram {
            program,
            schedule,
            kernels,
            products,
            blas,
            blas_launches: AtomicUsize::new(0),
        })
    }

    /// `Ok` when this program's matrix products run on cuBLAS (those whose
    /// layout it expresses), else why they run on their PTX kernels.
    pub fn cublas(&self) -> Result<(), String> {
        self.blas.as_ref().map(|_| ()).map_err(Clone::clone)
    }

    /// How many launches ran as cuBLAS calls so far (over all calls).
    pub fn cublas_launches(&self) -> usize {
        self.blas_launches.load(Ordering::Relaxed)
    }

    /// Fuse `f` into a program and load it.
    pub fn from_function(f: &Function) -> Result<CudaProgram, String> {
        CudaProgram::new(fuse(f)?)
    }

    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The loaded kernels, with the stream every call is queued on.
    pub fn kernels(&self) -> &CudaKernels {
        &self.kernels
    }

    /// Copy a host array to the device (queued on the program's stream).
    pub fn upload(&self, b: &Buffer) -> Result<DeviceBuffer, String> {
        self.kernels.upload(b, b.len())
    }

    /// Wait for the queued work and copy `d` back to the host.
    pub fn download(&self, d: &DeviceBuffer) -> Result<Buffer, String> {
        self.kernels.download(d)
    }

    /// Wait until every queued launch and copy has finished.
    pub fn synchronize(&self) -> Result<(), String> {
        self.kernels.synchronize()
    }

    /// Run on host arrays: upload, [`run_device`](Self::run_device), download.
    pub fn run(&self, args: &[Buffer]) -> Result<Vec<Buffer>, String> {
        // Check before copying anything over.
        let spec: Vec<(DType, usize)> = args.iter().map(|b| (b.dtype(), b.len())).collect();
        self.schedule.bind(&self.program, &spec)?;
        let dev = args
            .iter()
            .map(|b| self.upload(b))
            .collect::<Result<Vec<_>, _>>()?;
        let refs: Vec<&DeviceBuffer> = dev.iter().collect();
        let outs = self.run_device(&refs)?;
        outs.iter().map(|d| self.download(d)).collect()
    }

    /// Queue the whole program on device arrays (one per parameter) and
    /// return its outputs as device arrays, without waiting: the results are
    /// ready once [`synchronize`](Self::synchronize) or
    /// [`download`](Self::download) returns. Outputs that are parameters are
    /// copied device-to-device. Arity, dtypes and lengths are checked (errors
    /// name the argument) before anything is queued.
    pub fn run_device(&self, args: &[&DeviceBuffer]) -> Result<Vec<DeviceBuffer>, String> {
        let spec: Vec<(DType, usize)> = args.iter().map(|b| (b.dtype, b.len)).collect();
        let bound = self.schedule.bind(&self.program, &spec)?;
        let ks = &self.kernels;
        let mut owned: Vec<Option<DeviceBuffer>> = Vec::with_capacity(self.schedule.owned.len());
        for (o, slot) in self.schedule.owned.iter().enumerate() {
            let len = bound.lens[slot.buffer];
            owned.push(Some(match slot.fill {
                // Reduction outputs: blocks combine into them (PTX
                // convention), from zeros, -inf or +inf.
                Some(v) if v == 0.0 => ks.zeros(slot.dtype, len)?,
                Some(v) => {
                    let mut d = ks.alloc_uninit(slot.dtype, len)?;
                    ks.fill(&mut d, len, v)?;
                    d
                }
                // Map outputs: the kernel writes every element (or, with no
                // work, `launch_step` zeroes them).
                None => ks.alloc_uninit(slot.dtype, len)?,
            }));
            debug_assert_eq!(self.schedule.slot[slot.buffer], Slot::Owned(o));
        }
        for (l, step) in self.schedule.steps.iter().enumerate() {
            // Take this launch's outputs out of `owned`, so they are borrowed
            // mutably while its inputs are borrowed shared.
            let mut outs = Vec::new();
            for b in step.outputs(&self.program) {
                let Slot::Owned(o) = self.schedule.slot[b] else {
                    return Err(internal(format!("launch {l} writes a parameter")));
                };
                let d = owned[o]
                    .take()
                    .ok_or_else(|| internal(format!("launch {l} writes buffer {b} twice")))?;
                outs.push((o, d));
            }
            let result = self.launch_step(l, args, &owned, &mut outs, &bound);
            for (o, d) in outs {
                owned[o] = Some(d);
            }
            result?;
        }
        let mut results = Vec::with_capacity(self.schedule.outputs.len());
        for (i, src) in self.schedule.outputs.iter().enumerate() {
            let missing = || internal(format!("output {i} has no buffer"));
            results.push(match *src {
                Output::Param(p) => self.copy(args[p])?,
                Output::Copy(o) => self.copy(owned[o].as_ref().ok_or_else(missing)?)?,
                Output::Move(o) => owned[o].take().ok_or_else(missing)?,
            });
        }
        Ok(results)
    }

    /// Queue launch `l`: `outs` holds its output buffers in argument order.
    fn launch_step(
        &self,
        l: usize,
        args: &[&DeviceBuffer],
        owned: &[Option<DeviceBuffer>],
        outs: &mut [(usize, DeviceBuffer)],
        bound: &Bound,
    ) -> Result<(), String> {
        let ks = &self.kernels;
        let step = &self.schedule.steps[l];
        let k = &self.program.kernels[step.kernel];
        let sizes = &bound.kernel_sizes[l];
        if !has_work(k, sizes) && k.region().is_some() {
            // An empty part of a concatenation or pad: nothing to write.
            return Ok(());
        }
        if !has_work(k, sizes) {
            // Nothing runs; leave no output element unwritten.
            for (o, d) in outs.iter_mut() {
                if self.schedule.owned[*o].fill.is_none() && d.num_bytes() > 0 {
                    let mut view = d.bytes.slice_mut(0..d.num_bytes());
                    ks.stream()
                        .memset_zeros(&mut view)
                        .map_err(|e| format!("zero output: {e}"))?;
                }
            }
            return Ok(());
        }
        if self.launch_gemm(l, args, owned, outs, bound)? {
            return Ok(());
        }
        let mut launch = ks.stream().launch_builder(ks.function(step.kernel));
        let mut outs = outs.iter_mut();
        for (a, (b, arg)) in step.args.iter().zip(&k.args).enumerate() {
            let (dtype, len) = if arg.output {
                let (_, d) = outs
                    .next()
                    .ok_or_else(|| internal(format!("launch {l}: output {a} missing")))?;
                let dl = (d.dtype, d.len);
                launch.arg(&mut d.bytes);
                dl
            } else {
                let d = match self.schedule.slot[*b] {
                    Slot::Param(p) => args[p],
                    Slot::Owned(o) => owned[o]
                        .as_ref()
                        .ok_or_else(|| internal(format!("launch {l}: buffer {b} is taken")))?,
                };
                launch.arg(&d.bytes);
                (d.dtype, d.len)
            };
            // The precondition the kernel relies on, checked again on the
            // very buffer pushed: its dtype, and exactly the element count
            // `Schedule::bind` checked against the kernel's reads and writes.
            if dtype != arg.dtype || len != bound.lens[*b] {
                return Err(internal(format!(
                    "launch {l} (`{}`) arg {a}: buffer {b} holds {len} {dtype}, expected {} {}",
                    k.name, bound.lens[*b], arg.dtype
                )));
            }
        }
        for s in sizes {
            launch.arg(s);
        }
        let cfg = ks.launch_config(k, sizes);
        // SAFETY: the entry was emitted by `oxla_ptx` for kernel `k` and takes
        // one u64 device address per buffer in `k.args` order, then one u64
        // per size in `k.sizes` order: exactly what was pushed above (the
        // sizes are the bound symbols in the kernel's order, all
        // non-negative i64, checked in `Schedule::bind`). Each buffer has the
        // kernel argument's dtype and the element count checked just above,
        // which `Schedule::bind` checked covers every element the kernel
        // reads (`input_extent`) and equals what it writes (`output_len`).
        // Outputs were taken out of `owned` and are written by this launch
        // only (`Schedule::new`), so they alias no input and no other output;
        // parameters are only read. Reduction outputs were filled with their
        // reduction's identity on this stream and nothing wrote them since;
        // map kernels write every output element. The block size comes from `launch_config`, matching
        // the entry's `.maxntid`. Every buffer outlives the launch: intermediates
        // are freed with stream-ordered frees on this same stream.
        unsafe { launch.launch(cfg) }.map_err(|e| format!("launching `{}`: {e}", k.name))?;
        Ok(())
    }

    /// Queue launch `l` as cuBLAS calls if its kernel is a product that
    /// cuBLAS should run at this call's sizes (`gemm_plan::plan_launch`);
    /// `false` leaves it to the PTX kernel.
    fn launch_gemm(
        &self,
        l: usize,
        args: &[&DeviceBuffer],
        owned: &[Option<DeviceBuffer>],
        outs: &mut [(usize, DeviceBuffer)],
        bound: &Bound,
    ) -> Result<bool, String> {
        let step = &self.schedule.steps[l];
        let (Some(product), Ok(blas)) = (&self.products[step.kernel], &self.blas) else {
            return Ok(false);
        };
        let Some(plan) = gemm_plan::plan_launch(product, &bound.kernel_sizes[l]) else {
            return Ok(false);
        };
        let [(_, out)] = outs else {
            return Err(internal(format!("launch {l}: a product has one output")));
        };
        let input = |a: usize| -> Result<&DeviceBuffer, String> {
            let b = step.args[a];
            let d = match self.schedule.slot[b] {
                Slot::Param(p) => args[p],
                Slot::Owned(o) => owned[o]
                    .as_ref()
                    .ok_or_else(|| internal(format!("launch {l}: buffer {b} is taken")))?,
            };
            // The element count `Schedule::bind` checked the kernel's reads
            // against; `blas::run` checks the plan's against the buffer.
            if d.len != bound.lens[b] {
                return Err(internal(format!("launch {l}: buffer {b} changed length")));
            }
            Ok(d)
        };
        let (lhs, rhs) = (input(product.lhs)?, input(product.rhs)?);
        blas::run(
            blas,
            self.kernels.stream(),
            &plan,
            product.dtype,
            lhs,
            rhs,
            out,
        )?;
        self.blas_launches.fetch_add(1, Ordering::Relaxed);
        Ok(true)
    }

    /// A device-to-device copy of `src`, queued on the program's stream.
    fn copy(&self, src: &DeviceBuffer) -> Result<DeviceBuffer, String> {
        let mut dst = self.kernels.alloc_uninit(src.dtype, src.len)?;
        let n = src.num_bytes();
        if n > 0 {
            let from = src.bytes.slice(0..n);
            let mut to = dst.bytes.slice_mut(0..n);
            self.kernels
                .stream()
                .memcpy_dtod(&from, &mut to)
                .map_err(|e| format!("device-to-device copy: {e}"))?;
        }
        Ok(dst)
    }
}

fn internal(msg: String) -> String {
    format!("internal error: {msg}")
}

/// A buffer the call allocates.
#[derive(Clone, Debug)]
pub(crate) struct OwnedBuffer {
    pub buffer: usize,
    pub dtype: DType,
    /// The value it is allocated filled with: the identity of the reduction
    /// that writes it (0, -inf or +inf: blocks combine into it), or 0 when no
    /// launch writes it; `None` (uninitialised) when a map kernel writes it
    /// whole.
    pub fill: Option<f64>,
}

/// One launch: the kernel, its buffers in argument order, and for each of
/// the kernel's size arguments the index of the bound symbol.
#[derive(Clone, Debug)]
pub(crate) struct Step {
    pub kernel: usize,
    pub args: Vec<usize>,
    pub sizes: Vec<usize>,
}

impl Step {
    /// The buffers this launch writes, in argument order.
    pub fn outputs<'a>(&'a self, p: &'a Program) -> impl Iterator<Item = usize> + 'a {
        let k = &p.kernels[self.kernel];
        self.args
            .iter()
            .zip(&k.args)
            .filter(|(_, a)| a.output)
            .map(|(b, _)| *b)
    }
}

/// Where an output of the function comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Output {
    /// A parameter: copied.
    Param(usize),
    /// An allocated buffer returned again later: copied.
    Copy(usize),
    /// An allocated buffer's last use: moved out.
    Move(usize),
}

/// The host side of a program, worked out and checked once.
#[derive(Clone, Debug)]
pub(crate) struct Schedule {
    pub slot: Vec<Slot>,
    pub owned: Vec<OwnedBuffer>,
    pub steps: Vec<Step>,
    pub outputs: Vec<Output>,
}

/// One call's binding: the symbols' sizes, every buffer's element count and
/// each launch's size arguments.
#[derive(Clone, Debug)]
pub(crate) struct Bound {
    pub lens: Vec<usize>,
    pub kernel_sizes: Vec<Vec<i64>>,
}

impl Schedule {
    /// Check that the program is well formed for running on device buffers:
    /// every launch matches its kernel's arity and dtypes, writes only
    /// buffers the call allocates, each of them exactly once and before any
    /// launch reads it, and never one it also reads; every output exists.
    pub fn new(p: &Program) -> Result<Schedule, String> {
        p.check_schedule()?;
        if let Some(s) = p.loops.first() {
            let what = if s.otherwise.is_some() {
                "a cond (an `if` on a scalar)"
            } else {
                "a loop"
            };
            return Err(format!(
                "`{}`: {what} does not run on the GPU yet: host steps run on the CPU's kernel path and the reference interpreter",
                p.function.name
            ));
        }
        let slot: Vec<Slot> = (0..p.buffers.len()).map(|b| p.slot(b)).collect();
        let mut owned: Vec<OwnedBuffer> = p
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, info)| info.param.is_none())
            .map(|(b, info)| OwnedBuffer {
                buffer: b,
                dtype: info.dtype,
                fill: Some(0.0),
            })
            .collect();
        let mut steps = Vec::with_capacity(p.launches.len());
        for (l, launch) in p.launches.iter().enumerate() {
            let step = Step {
                kernel: launch.kernel,
                args: launch.args.clone(),
                sizes: p.launch_sizes(l).to_vec(),
            };
            // Map outputs are written whole; reductions combine into their
            // identity.
            let k = &p.kernels[launch.kernel];
            let fill = k.is_reduction().then(|| k.reduce.identity());
            for b in step.outputs(p) {
                if let Slot::Owned(o) = slot[b] {
                    owned[o].fill = fill;
                }
            }
            steps.push(step);
        }
        let outputs = p
            .outputs
            .iter()
            .enumerate()
            .map(|(i, b)| match slot[*b] {
                Slot::Param(q) => Output::Param(q),
                Slot::Owned(o) if p.outputs[i + 1..].contains(b) => Output::Copy(o),
                Slot::Owned(o) => Output::Move(o),
            })
            .collect();
        Ok(Schedule {
            slot,
            owned,
            steps,
            outputs,
        })
    }

    /// Check a call's arguments (dtype and element count of each) and bind
    /// the symbols; then check every launch's buffers against the elements
    /// its kernel reads and writes. Errors name the argument.
    pub fn bind(&self, p: &Program, args: &[(DType, usize)]) -> Result<Bound, String> {
        let f = &p.function;
        p.check_arg_types(args.iter().map(|a| a.0))?;
        let lens: Vec<usize> = args.iter().map(|a| a.1).collect();
        let sizes = p.bind(&lens)?;
        if let Some(k) = sizes.iter().position(|s| i64::try_from(*s).is_err()) {
            return Err(format!(
                "`{}`: dimension `{}` = {} is too large",
                f.name, p.symbols[k], sizes[k]
            ));
        }
        let lens: Vec<usize> = (0..p.buffers.len())
            .map(|b| match self.slot[b] {
                Slot::Param(i) => args[i].1,
                Slot::Owned(_) => p.buffer_len(b, &sizes),
            })
            .collect();
        let mut kernel_sizes = Vec::with_capacity(self.steps.len());
        for (l, step) in self.steps.iter().enumerate() {
            let k = &p.kernels[step.kernel];
            let ks: Vec<i64> = step.sizes.iter().map(|s| sizes[*s] as i64).collect();
            for (a, (b, arg)) in step.args.iter().zip(&k.args).enumerate() {
                let (need, ok) = if arg.output {
                    // A region store writes part of its output (a pad's, a
                    // concatenation's), which other launches complete.
                    let n = k.output_len(&ks);
                    (n, n == lens[*b] || (k.region().is_some() && n <= lens[*b]))
                } else {
                    let n = k.input_extent(a, &ks);
                    (n, n <= lens[*b])
                };
                if !ok {
                    let which = match self.slot[*b] {
                        Slot::Param(i) => format!("argument `{}`", f.param_names[i]),
                        Slot::Owned(_) => format!("buffer {b}"),
                    };
                    return Err(format!(
                        "`{}`: launch {l} (`{}`) needs {need} elements of {which}, which has {}",
                        f.name, k.name, lens[*b]
                    ));
                }
            }
            kernel_sizes.push(ks);
        }
        Ok(Bound { lens, kernel_sizes })
    }
}

#[cfg(test)]
mod tests {
    //! The schedule run on the host with the kernel interpreter, against
    //! the reference interpreter: checks everything `run_device` does
    //! except the driver calls, on machines without a GPU.

    use super::*;
    use oxla_core::kernel::interp;
    use oxla_core::transforms::{grad, vmap};
    use oxla_core::{Dim, Op, Shape, Tensor, Type};

    /// `run_device`'s logic with host buffers and the kernel interpreter,
    /// modelling its memory as the device sees it: buffers it allocates
    /// uninitialised hold [`poison`], and a reduction combines its result
    /// into the output (the PTX adds block partial sums atomically, or takes
    /// their max/min by compare-and-swap), so only the fill `run_device`
    /// chooses (0, -inf, +inf) makes a reduction come out right.
    fn run_host(p: &Program, s: &Schedule, args: &[Buffer]) -> Result<Vec<Buffer>, String> {
        let spec: Vec<(DType, usize)> = args.iter().map(|b| (b.dtype(), b.len())).collect();
        let bound = s.bind(p, &spec)?;
        let mut owned: Vec<Option<Buffer>> = s
            .owned
            .iter()
            .map(|o| {
                let len = bound.lens[o.buffer];
                Some(match o.fill {
                    Some(v) => Buffer::from_f64(o.dtype, &vec![v; len]),
                    None => poison(o.dtype, len),
                })
            })
            .collect();
        for (l, step) in s.steps.iter().enumerate() {
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
                            owned[o] = Some(Buffer::zeros(s.owned[o].dtype, bound.lens[*b]));
                        }
                    }
                }
                continue;
            }
            let mut bufs: Vec<Buffer> = step
                .args
                .iter()
                .map(|b| match s.slot[*b] {
                    Slot::Param(i) => args[i].clone(),
                    Slot::Owned(o) => owned[o].clone().expect("present"),
                })
                .collect();
            for (b, d) in step.args.iter().zip(&bufs) {
                assert_eq!(d.len(), bound.lens[*b]);
            }
            interp::run(k, &mut bufs, sizes)?;
            for ((b, arg), mut d) in step.args.iter().zip(&k.args).zip(bufs) {
                if let (true, Slot::Owned(o)) = (arg.output, s.slot[*b]) {
                    if k.is_reduction() {
                        let before = owned[o].as_ref().expect("present");
                        for j in 0..d.len() {
                            d.set(j, k.reduce.combine(before.get(j), d.get(j)));
                        }
                    }
                    owned[o] = Some(d);
                }
            }
        }
        Ok(s.outputs
            .iter()
            .map(|o| match *o {
                Output::Param(i) => args[i].clone(),
                Output::Copy(o) => owned[o].clone().expect("present"),
                Output::Move(o) => owned[o].take().expect("present"),
            })
            .collect())
    }

    /// What an uninitialised device buffer may hold: all bits set (a NaN
    /// for every float type, so reading it shows in any float result).
    fn poison(dtype: DType, len: usize) -> Buffer {
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

    fn vec_f64(f: &mut Function, name: &str) -> oxla_core::Var {
        f.add_param(name, Type::new(DType::F64, Shape::vector(Dim::sym("n"))))
    }

    /// `sum(x * 2 * y + z)`.
    fn fused_sum() -> Function {
        let mut f = Function::new("fused_sum");
        let x = vec_f64(&mut f, "x");
        let y = vec_f64(&mut f, "y");
        let z = vec_f64(&mut f, "z");
        let two = f.literal(2.0, DType::F64);
        let two = f.broadcast(two, Shape::vector(Dim::sym("n")), vec![]);
        let a = f.mul(x, two);
        let b = f.mul(a, y);
        let c = f.add(b, z);
        let s = f.reduce_sum(c, vec![0]);
        f.outs.push(s);
        f
    }

    /// Outputs a parameter, an intermediate twice, and a reduction that
    /// feeds a map kernel.
    fn mixed() -> Function {
        let mut f = Function::new("mixed");
        let x = vec_f64(&mut f, "x");
        let y = vec_f64(&mut f, "y");
        let a = f.mul(x, y);
        let s = f.reduce_sum(a, vec![0]);
        let sb = f.broadcast(s, Shape::vector(Dim::sym("n")), vec![]);
        let d = f.sub(x, sb);
        f.outs = vec![a, x, d, a, s];
        f
    }

    /// Max and min reductions (outputs filled with -inf and +inf) next to a
    /// sum, and a map kernel reading the max.
    fn choosing() -> Function {
        let mut f = Function::new("choosing");
        let x = vec_f64(&mut f, "x");
        let y = vec_f64(&mut f, "y");
        let mx = f.push(Op::ReduceMax { axes: vec![0] }, &[x]).unwrap();
        let xy = f.mul(x, y);
        let mn = f.push(Op::ReduceMin { axes: vec![0] }, &[xy]).unwrap();
        let s = f.reduce_sum(x, vec![0]);
        let mb = f.broadcast(mx, Shape::vector(Dim::sym("n")), vec![]);
        let d = f.sub(x, mb);
        f.outs = vec![mx, mn, d, s];
        f
    }

    /// Run `f` at length `n` through `run_host` with schedule `s` (from
    /// `fuse(f)` unless given) and compare with the reference interpreter.
    fn compare(f: &Function, n: usize, s: Option<Schedule>) -> Result<(), String> {
        let p = fuse(f).unwrap();
        let s = s.unwrap_or_else(|| Schedule::new(&p).unwrap());
        let shapes: Vec<Vec<usize>> = f
            .params
            .iter()
            .map(|v| {
                let env = [("n".to_string(), n as u64), ("b".to_string(), 2)].into();
                f.shape(*v).concrete(&env).unwrap()
            })
            .collect();
        let args: Vec<Buffer> = shapes
            .iter()
            .enumerate()
            .map(|(i, sh)| {
                let len = sh.iter().product();
                let vals: Vec<f64> = (0..len).map(|j| ((i + 3 * j) % 7) as f64 - 3.0).collect();
                Buffer::from_f64(DType::F64, &vals)
            })
            .collect();
        let base = p.symbols.iter();
        let base = base.filter(|s| !oxla_core::shape::derived::is_derived(s));
        if n == 0 && base.count() > 1 {
            // Lengths alone cannot bind `b` in `[b, n]` when `n = 0`.
            let e = run_host(&p, &s, &args).unwrap_err();
            assert!(e.contains("cannot infer dimension `b`"), "{e}");
            return Ok(());
        }
        let got = run_host(&p, &s, &args)?;
        let tensors: Vec<Tensor> = shapes
            .iter()
            .zip(&args)
            .map(|(sh, b)| Tensor::from_buffer(sh.clone(), b))
            .collect();
        let want = oxla_core::interp::eval(f, &tensors).unwrap();
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            // Bitwise: a poisoned NaN must not pass for a NaN result.
            let (g, w) = (g.to_f64(), &w.data);
            let same = g.len() == w.len()
                && g.iter()
                    .zip(w)
                    .all(|(a, b)| a.to_bits() == b.to_bits() || a == b);
            if !same {
                return Err(format!(
                    "{} at n={n}, output {i}: {g:?}, expected {w:?}",
                    f.name
                ));
            }
        }
        Ok(())
    }

    fn check(f: &Function, n: usize) {
        compare(f, n, None).unwrap();
    }

    /// Concatenations (several launches writing regions of one buffer, one
    /// of them empty at n = 0) and a slice with a step, whose gradient is a
    /// pad (a zero fill, then a strided region).
    fn slicing() -> Function {
        use oxla_core::ops::slicing::{concatenate, slice_bounds};
        use oxla_core::shape::derived::Bound::{End, Start};
        let mut f = Function::new("slicing");
        let x = vec_f64(&mut f, "x");
        let y = vec_f64(&mut f, "y");
        let one = f.literal(1.0, DType::F64);
        let ones = f.broadcast(one, Shape::vector(Dim::Const(2)), vec![]);
        let c = concatenate(&mut f, &[ones, x, y], 0);
        let sl = slice_bounds(&mut f, x, &[(Start(0), End(0), 2)]).unwrap();
        let sn = f
            .push(Op::Unary(oxla_core::ops::elementwise::UnaryOp::Sin), &[sl])
            .unwrap();
        let s = f.reduce_sum(sn, vec![0]);
        f.outs = vec![c, s];
        f
    }

    #[test]
    fn schedule_matches_interpreter() {
        let g = grad(&fused_sum(), &[0, 1]).unwrap();
        let v = vmap(&g, &[Some(0), None, Some(0)]).unwrap();
        let sg = {
            let mut one = slicing();
            one.outs.remove(0);
            grad(&one, &[0]).unwrap()
        };
        for f in [fused_sum(), g, v, mixed(), choosing(), slicing(), sg] {
            for n in [0, 1, 3, 5, 1001] {
                check(&f, n);
            }
        }
    }

    /// The host model catches a schedule that leaves reduction outputs
    /// uninitialised (with every buffer zero-filled, as it was, it could not).
    #[test]
    fn unzeroed_reduction_outputs_are_caught() {
        for f in [fused_sum(), mixed(), choosing()] {
            let p = fuse(&f).unwrap();
            let mut s = Schedule::new(&p).unwrap();
            assert!(s.owned.iter().any(|o| o.fill.is_some()), "{}", f.name);
            for o in &mut s.owned {
                o.fill = None;
            }
            for n in [1, 5, 1001] {
                let e = compare(&f, n, Some(s.clone())).unwrap_err();
                assert!(e.contains("NaN"), "{e}");
            }
        }
    }

    /// Max and min outputs are filled with -inf and +inf, sums with zeros,
    /// map outputs not at all; and filling a max output with zeros instead
    /// is caught (here, on all-negative inputs, the max would come out 0).
    #[test]
    fn choosing_outputs_are_filled_with_their_identity() {
        let p = fuse(&choosing()).unwrap();
        let mut s = Schedule::new(&p).unwrap();
        let mut fills: Vec<Option<f64>> = s.owned.iter().map(|o| o.fill).collect();
        fills.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert_eq!(
            fills,
            [
                None,
                Some(f64::NEG_INFINITY),
                Some(0.0),
                Some(f64::INFINITY)
            ]
        );
        for o in &mut s.owned {
            if o.fill == Some(f64::NEG_INFINITY) {
                o.fill = Some(0.0);
            }
        }
        let x = Buffer::from_f64(DType::F64, &[-3.0, -1.0, -2.0]);
        let got = run_host(&p, &s, &[x.clone(), x]).unwrap();
        assert_eq!(got[0].get(0), 0.0, "the wrong fill shows");
    }

    #[test]
    fn schedule_sorts_outputs() {
        let p = fuse(&mixed()).unwrap();
        let s = Schedule::new(&p).unwrap();
        assert!(matches!(s.outputs[0], Output::Copy(_)));
        assert_eq!(s.outputs[1], Output::Param(0));
        assert!(matches!(s.outputs[3], Output::Move(_)));
        let reduced = s.owned.iter().filter(|o| o.fill.is_some()).count();
        assert!(reduced >= 1 && reduced < s.owned.len());
    }

    #[test]
    fn bad_calls_are_errors_naming_the_argument() {
        let p = fuse(&fused_sum()).unwrap();
        let s = Schedule::new(&p).unwrap();
        let f64s = |n| (DType::F64, n);
        let e = s.bind(&p, &[f64s(3), f64s(4), f64s(3)]).unwrap_err();
        assert!(e.contains("`y`"), "{e}");
        let e = s
            .bind(&p, &[f64s(3), (DType::F32, 3), f64s(3)])
            .unwrap_err();
        assert!(e.contains("`y`") && e.contains("f32"), "{e}");
        let e = s.bind(&p, &[f64s(3)]).unwrap_err();
        assert!(e.contains("3 arguments"), "{e}");
        assert!(s.bind(&p, &[f64s(0), f64s(0), f64s(0)]).is_ok());
    }

    #[test]
    fn malformed_programs_are_rejected() {
        let mut p = fuse(&fused_sum()).unwrap();
        let out = *p.launches[0].args.last().unwrap();
        // The kernel writing a parameter.
        *p.launches[0].args.last_mut().unwrap() = 0;
        assert!(Schedule::new(&p).is_err());
        // Reading its own output.
        p.launches[0].args[0] = out;
        *p.launches[0].args.last_mut().unwrap() = out;
        assert!(Schedule::new(&p).is_err());
    }
}
