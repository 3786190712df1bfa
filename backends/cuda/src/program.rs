//! Whole fused programs on the GPU: arrays stay on the device and every
//! launch of a call is queued on the device's one stream without waiting.
//!
//! A [`CudaProgram`] is an `oxla_core::exec::Program` with its kernels
//! loaded. Its [`Schedule`] is worked out once from the program (which
//! buffer each launch reads and writes, which buffers the call allocates,
//! where each output comes from) and checked then; each call binds the
//! dimension symbols from the arguments' dimensions (or, for flat arrays,
//! their lengths) and checks every launch's buffers against what its
//! kernel reads and writes *before* anything is queued, so a bad call is
//! an error and never an out-of-bounds access.
//!
//! Loops and conds (host steps, between launches) run in `host_steps`,
//! with child programs loaded once and sharing this program's module and
//! stream; their results are moved into the buffers the launches after
//! them read.
//!
//! Matrix products (`oxla_core::kernel::matmul`) in a layout cuBLAS can
//! express (`gemm_plan`) are queued as cuBLAS calls on the same stream
//! instead of their PTX kernels, when the cuBLAS library can be loaded.

use crate::blas;
use crate::buffer::DeviceBuffer;
use crate::context::Gpu;
use crate::gemm_plan;
use crate::host_steps::{self, Children, Runner};
use crate::kernels::CudaKernels;
use cudarc::driver::PushKernelArg;
use oxla_core::exec::{ArgDims, Program, Slot};
use oxla_core::kernel::fusion::fuse;
use oxla_core::kernel::matmul::MatmulKernel;
use oxla_core::{Buffer, DType, Dim, Function};
use oxla_ptx::has_work;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A fused program whose kernels are loaded on one device.
pub struct CudaProgram {
    program: Program,
    schedule: Schedule,
    kernels: CudaKernels,
    /// Per kernel, the product cuBLAS may run (`None`: not a product, or
    /// of a type cuBLAS is not used for).
    products: Vec<Option<MatmulKernel>>,
    /// `Ok` when products run on cuBLAS, else why they run on their PTX
    /// kernels.
    blas: Result<(), String>,
    /// Launches run as cuBLAS calls so far (this program's, not its
    /// loops' bodies').
    blas_launches: AtomicUsize,
    /// Per host step (`program.host_steps`), its programs.
    host: Vec<Children<CudaProgram>>,
}

/// An argument of a call: the array and the dimensions it binds from.
pub(crate) type Arg<'a> = (&'a DeviceBuffer, ArgDims);

impl CudaProgram {
    /// Check the program's schedule and load its kernels on device 0 (PTX
    /// for the device's architecture); matrix products go to cuBLAS where
    /// it can be loaded. Errs, never panics, when there is no GPU.
    pub fn new(program: Program) -> Result<CudaProgram, String> {
        CudaProgram::load_on(&Gpu::open(0)?, program)
    }

    /// As [`new`](Self::new), but every product runs on its PTX kernel.
    pub fn new_without_cublas(program: Program) -> Result<CudaProgram, String> {
        CudaProgram::load_on_without_cublas(&Gpu::open(0)?, program)
    }

    /// As [`new`](Self::new), on `gpu`: every program loaded on one `Gpu`
    /// queues its work on that device's one stream, so the arrays of one
    /// program's calls can feed another's without synchronizing.
    pub fn load_on(gpu: &Arc<Gpu>, program: Program) -> Result<CudaProgram, String> {
        CudaProgram::load(gpu, program, true)
    }

    /// As [`load_on`](Self::load_on), but every product runs on its PTX
    /// kernel.
    pub fn load_on_without_cublas(gpu: &Arc<Gpu>, program: Program) -> Result<CudaProgram, String> {
        CudaProgram::load(gpu, program, false)
    }

    fn load(gpu: &Arc<Gpu>, program: Program, cublas: bool) -> Result<CudaProgram, String> {
        // Checked before the module is loaded.
        Schedule::new(&program)?;
        let kernels = CudaKernels::load_on(gpu, &program.kernels)?;
        CudaProgram::with_kernels(program, kernels, cublas)
    }

    /// The program with its kernels already loaded (`kernels` holds
    /// `program.kernels`, in order); its host steps' programs are made from
    /// the same module.
    fn with_kernels(
        program: Program,
        kernels: CudaKernels,
        cublas: bool,
    ) -> Result<CudaProgram, String> {
        let schedule = Schedule::new(&program)?;
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
            kernels.gpu().blas().map(|_| ())
        };
        let mut host = Vec::with_capacity(program.host_steps.len());
        for (j, s) in program.host_steps.iter().enumerate() {
            let children = Children::load(
                s,
                |n| {
                    let ks = kernels.subset(&n.kernels)?;
                    CudaProgram::with_kernels(n.program.clone(), ks, cublas)
                },
                |p| CudaProgram::load(kernels.gpu(), p, cublas),
            )
            .map_err(|e| format!("host step {j} of `{}`: {e}", program.function.name))?;
            host.push(children);
        }
        Ok(CudaProgram {
            program,
            schedule,
            kernels,
            products,
            blas,
            blas_launches: AtomicUsize::new(0),
            host,
        })
    }

    /// `Ok` when this program's matrix products run on cuBLAS (those whose
    /// layout it expresses), else why they run on their PTX kernels.
    pub fn cublas(&self) -> Result<(), String> {
        self.blas.clone()
    }

    /// How many launches ran as cuBLAS calls so far (over all calls,
    /// including those of its loops' and conds' programs).
    pub fn cublas_launches(&self) -> usize {
        let nested: usize = self
            .host
            .iter()
            .flat_map(Children::nested)
            .map(CudaProgram::cublas_launches)
            .sum();
        self.blas_launches.load(Ordering::Relaxed) + nested
    }

    /// Fuse `f` into a program and load it on device 0.
    pub fn from_function(f: &Function) -> Result<CudaProgram, String> {
        CudaProgram::new(fuse(f)?)
    }

    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The device the program is loaded on.
    pub fn gpu(&self) -> &Arc<Gpu> {
        self.kernels.gpu()
    }

    /// The loaded kernels, with the stream every call is queued on.
    pub fn kernels(&self) -> &CudaKernels {
        &self.kernels
    }

    /// Copy a host array to the device as a flat array (queued on the
    /// device's stream; see [`DeviceBuffer`]).
    pub fn upload(&self, b: &Buffer) -> Result<DeviceBuffer, String> {
        self.gpu().upload(b)
    }

    /// Copy a host array to the device with the shape `dims`.
    pub fn upload_shaped(&self, b: &Buffer, dims: &[usize]) -> Result<DeviceBuffer, String> {
        self.gpu().upload_shaped(b, dims)
    }

    /// Wait for the queued work and copy `d` back to the host.
    pub fn download(&self, d: &DeviceBuffer) -> Result<Buffer, String> {
        self.gpu().download(d)
    }

    /// Wait until every queued launch and copy has finished.
    pub fn synchronize(&self) -> Result<(), String> {
        self.gpu().synchronize()
    }

    /// Run on host arrays known by their lengths: upload,
    /// [`run_device`](Self::run_device), download. A parameter with several
    /// dimension symbols in one shape cannot be bound from its length alone:
    /// use [`run_shaped`](Self::run_shaped).
    pub fn run(&self, args: &[Buffer]) -> Result<Vec<Buffer>, String> {
        // Check before copying anything over.
        let spec: Vec<(DType, usize, ArgDims)> = args
            .iter()
            .map(|b| (b.dtype(), b.len(), ArgDims::FLAT))
            .collect();
        self.schedule.bind(&self.program, &spec)?;
        let dev = args
            .iter()
            .map(|b| self.upload(b))
            .collect::<Result<Vec<_>, _>>()?;
        let refs: Vec<&DeviceBuffer> = dev.iter().collect();
        let outs = self.run_device(&refs)?;
        outs.iter().map(|d| self.download(d)).collect()
    }

    /// Run on host arrays with their shapes: upload each with its shape,
    /// [`run_device`](Self::run_device), download; the results come with
    /// theirs.
    pub fn run_shaped(
        &self,
        args: &[(Buffer, Vec<usize>)],
    ) -> Result<Vec<(Buffer, Vec<usize>)>, String> {
        let mut spec = Vec::with_capacity(args.len());
        for (i, (b, dims)) in args.iter().enumerate() {
            let d = ArgDims::new(dims).ok_or_else(|| {
                format!(
                    "argument {i}: {} axes, at most {}",
                    dims.len(),
                    oxla_core::exec::MAX_RANK
                )
            })?;
            spec.push((b.dtype(), b.len(), d));
        }
        // Check before copying anything over.
        self.schedule.bind(&self.program, &spec)?;
        let dev = args
            .iter()
            .map(|(b, dims)| self.upload_shaped(b, dims))
            .collect::<Result<Vec<_>, _>>()?;
        let refs: Vec<&DeviceBuffer> = dev.iter().collect();
        let outs = self.run_device(&refs)?;
        outs.iter()
            .map(|d| Ok((self.download(d)?, d.dims().to_vec())))
            .collect()
    }

    /// Queue the whole program on device arrays (one per parameter) and
    /// return its outputs as device arrays with their shapes, without
    /// waiting: the results are ready once [`synchronize`](Self::synchronize)
    /// or [`download`](Self::download) returns. The dimension symbols are
    /// bound from each shaped array's dimensions and each flat one's length.
    /// Outputs that are parameters are copied device-to-device. Arity,
    /// dtypes and shapes are checked (errors name the argument) before
    /// anything is queued. A program with loops or conds reads their bounds
    /// and predicates back (small downloads, which wait for the work queued
    /// before them); its arrays stay on the device.
    pub fn run_device(&self, args: &[&DeviceBuffer]) -> Result<Vec<DeviceBuffer>, String> {
        let args: Vec<Arg<'_>> = args.iter().map(|b| (*b, b.arg_dims())).collect();
        self.run_args(&args)
    }

    /// `run_device` with each argument's dimensions given.
    pub(crate) fn run_args(&self, args: &[Arg<'_>]) -> Result<Vec<DeviceBuffer>, String> {
        let spec: Vec<(DType, usize, ArgDims)> =
            args.iter().map(|(b, d)| (b.dtype, b.len, *d)).collect();
        let bound = self.schedule.bind(&self.program, &spec)?;
        let bufs: Vec<&DeviceBuffer> = args.iter().map(|a| a.0).collect();
        let gpu = self.gpu();
        let ks = &self.kernels;
        let mut owned: Vec<Option<DeviceBuffer>> = Vec::with_capacity(self.schedule.owned.len());
        for (o, slot) in self.schedule.owned.iter().enumerate() {
            debug_assert_eq!(self.schedule.slot[slot.buffer], Slot::Owned(o));
            let dims = self.schedule.dims(slot.buffer, &bound);
            if slot.from_step {
                // Its host step moves its result in.
                owned.push(None);
                continue;
            }
            owned.push(Some(match slot.fill {
                // Reduction outputs: blocks combine into them (PTX
                // convention), from zeros, -inf or +inf.
                Some(0.0) => gpu.zeros(slot.dtype, &dims)?,
                Some(v) => {
                    let mut d = gpu.alloc_uninit(slot.dtype, &dims, true)?;
                    let len = d.len;
                    ks.fill(&mut d, len, v)?;
                    d
                }
                // Map outputs: the kernel writes every element (or, with no
                // work, `launch_step` zeroes them).
                None => gpu.alloc_uninit(slot.dtype, &dims, true)?,
            }));
        }
        let host_steps = &self.program.host_steps;
        let mut next_host = 0;
        for l in 0..=self.schedule.steps.len() {
            while next_host < host_steps.len() && host_steps[next_host].at() == l {
                self.host_step(next_host, &bufs, &mut owned, &bound)?;
                next_host += 1;
            }
            let Some(step) = self.schedule.steps.get(l) else {
                break;
            };
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
            let result = self.launch_step(l, &bufs, &owned, &mut outs, &bound);
            for (o, d) in outs {
                owned[o] = Some(d);
            }
            result?;
        }
        let mut results = Vec::with_capacity(self.schedule.outputs.len());
        for (i, src) in self.schedule.outputs.iter().enumerate() {
            let missing = || internal(format!("output {i} has no buffer"));
            let mut d = match *src {
                Output::Param(p) => gpu.copy(bufs[p])?,
                Output::Copy(o) => gpu.copy(owned[o].as_ref().ok_or_else(missing)?)?,
                Output::Move(o) => owned[o].take().ok_or_else(missing)?,
            };
            // Every result has its shape under this call's binding (a
            // parameter passed flat comes back shaped).
            d.reshape(&self.schedule.dims(self.program.outputs[i], &bound))?;
            results.push(d);
        }
        Ok(results)
    }

    /// Run host step `j` (a loop or cond) on its operands and move its
    /// results into their buffers in `owned`.
    fn host_step(
        &self,
        j: usize,
        args: &[&DeviceBuffer],
        owned: &mut [Option<DeviceBuffer>],
        bound: &Bound,
    ) -> Result<(), String> {
        let p = &self.program;
        let s = &p.host_steps[j];
        let results = {
            let mut ops: Vec<Arg<'_>> = Vec::with_capacity(s.args().len());
            for b in s.args() {
                let d = match self.schedule.slot[*b] {
                    Slot::Param(i) => args[i],
                    Slot::Owned(o) => owned[o]
                        .as_ref()
                        .ok_or_else(|| internal(format!("host step {j}: buffer {b} is missing")))?,
                };
                if d.dtype != p.buffers[*b].dtype || d.len != bound.lens[*b] {
                    return Err(internal(format!(
                        "host step {j}: buffer {b} holds {} {}, expected {} {}",
                        d.len, d.dtype, bound.lens[*b], p.buffers[*b].dtype
                    )));
                }
                let dims = self.schedule.dims(*b, bound);
                ops.push((d, ArgDims::new(&dims).unwrap_or(ArgDims::FLAT)));
            }
            let outs: Vec<(DType, Vec<usize>)> = s
                .outs()
                .iter()
                .map(|b| (p.buffers[*b].dtype, self.schedule.dims(*b, bound)))
                .collect();
            let runner = DeviceRunner(self.gpu());
            host_steps::run(&runner, s, &self.host[j], &ops, &outs).map_err(|e| {
                format!(
                    "{} `{}` in `{}`: {e}",
                    s.keyword(),
                    s.name(),
                    p.function.name
                )
            })?
        };
        for (b, mut d) in s.outs().iter().zip(results) {
            let dims = self.schedule.dims(*b, bound);
            let Slot::Owned(o) = self.schedule.slot[*b] else {
                return Err(internal(format!("host step {j} writes a parameter")));
            };
            // What every launch reading it relies on: its dtype and element
            // count (checked again at each launch), and its shape.
            if d.dtype != p.buffers[*b].dtype
                || d.len != bound.lens[*b]
                || (d.shaped && d.dims != dims)
                || owned[o].is_some()
            {
                return Err(internal(format!(
                    "host step {j}: result for buffer {b} is {} of shape {:?}, expected {} of {dims:?}",
                    d.dtype, d.dims, p.buffers[*b].dtype
                )));
            }
            d.reshape(&dims)?;
            owned[o] = Some(d);
        }
        Ok(())
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
        let (Some(product), Ok(())) = (&self.products[step.kernel], &self.blas) else {
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
            self.gpu().blas()?,
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
}

/// Host steps on the device: arrays are `DeviceBuffer`s, programs
/// `CudaProgram`s loaded on the same device (and stream).
struct DeviceRunner<'a>(&'a Arc<Gpu>);

impl Runner for DeviceRunner<'_> {
    type Buf = DeviceBuffer;
    type Prog = CudaProgram;

    fn run(&self, p: &CudaProgram, args: &[Arg<'_>]) -> Result<Vec<DeviceBuffer>, String> {
        p.run_args(args)
    }

    fn dims(&self, b: &DeviceBuffer) -> ArgDims {
        b.arg_dims()
    }

    fn bytes(&self, b: &DeviceBuffer) -> usize {
        b.num_bytes()
    }

    fn read_i64(&self, b: &DeviceBuffer) -> Result<i64, String> {
        match self.0.download(b)? {
            Buffer::I64(v) if v.len() == 1 => Ok(v[0]),
            other => Err(internal(format!(
                "a loop bound is {} {}, not one i64",
                other.len(),
                other.dtype()
            ))),
        }
    }

    fn read_bool(&self, b: &DeviceBuffer) -> Result<bool, String> {
        match self.0.download(b)? {
            Buffer::Bool(v) if v.len() == 1 => Ok(v[0] != 0),
            other => Err(internal(format!(
                "a predicate is {} {}, not one bool",
                other.len(),
                other.dtype()
            ))),
        }
    }

    fn set_index(&self, slot: &mut Option<DeviceBuffer>, i: i64) -> Result<(), String> {
        let d = match slot {
            Some(d) => d,
            None => slot.insert(self.0.alloc_uninit(DType::I64, &[], true)?),
        };
        if d.dtype != DType::I64 || d.len != 1 {
            return Err(internal("the loop index array changed".into()));
        }
        // Queued on the stream, after the launches of the previous step
        // (which read the old index): the driver stages the 8 bytes before
        // the call returns.
        let mut view = d.bytes.slice_mut(0..8);
        self.0
            .stream()
            .memcpy_htod(&i.to_le_bytes(), &mut view)
            .map_err(|e| format!("copying the loop index: {e}"))
    }

    fn copy(&self, b: &DeviceBuffer, dims: ArgDims) -> Result<DeviceBuffer, String> {
        let mut d = self.0.copy(b)?;
        if let Some(dims) = dims.get() {
            d.reshape(dims)?;
        }
        Ok(d)
    }

    fn zeros(&self, dtype: DType, dims: &[usize]) -> Result<DeviceBuffer, String> {
        self.0.zeros(dtype, dims)
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
    /// Whether a host step (loop or cond) writes it: then it is not
    /// allocated, the step's result is moved in.
    pub from_step: bool,
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

/// One axis of a buffer's shape: a constant or a bound symbol's index.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Axis {
    Const(usize),
    Sym(usize),
}

/// The host side of a program, worked out and checked once.
#[derive(Clone, Debug)]
pub(crate) struct Schedule {
    pub slot: Vec<Slot>,
    pub owned: Vec<OwnedBuffer>,
    pub steps: Vec<Step>,
    pub outputs: Vec<Output>,
    /// Each buffer's shape, its symbols as indices of the bound sizes.
    pub shapes: Vec<Vec<Axis>>,
}

/// One call's binding: the symbols' sizes, every buffer's element count and
/// each launch's size arguments.
#[derive(Clone, Debug)]
pub(crate) struct Bound {
    pub sizes: Vec<u64>,
    pub lens: Vec<usize>,
    pub kernel_sizes: Vec<Vec<i64>>,
}

impl Schedule {
    /// Check that the program is well formed for running on device buffers:
    /// every launch matches its kernel's arity and dtypes, writes only
    /// buffers the call allocates, each of them exactly once and before any
    /// launch reads it, and never one it also reads; every output exists;
    /// host steps read only what was written before them and write buffers
    /// nothing else writes (`Program::check_schedule`, which also checks
    /// their nested programs).
    pub fn new(p: &Program) -> Result<Schedule, String> {
        p.check_schedule()?;
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
                from_step: false,
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
        for (j, s) in p.host_steps.iter().enumerate() {
            for b in s.outs() {
                let Slot::Owned(o) = slot[*b] else {
                    return Err(format!("host step {j} writes a parameter"));
                };
                owned[o].fill = None;
                owned[o].from_step = true;
            }
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
        let shapes = p
            .buffers
            .iter()
            .map(|info| {
                info.shape
                    .0
                    .iter()
                    .map(|d| match d {
                        Dim::Const(c) => Ok(Axis::Const(*c as usize)),
                        Dim::Sym(name) => p
                            .symbols
                            .iter()
                            .position(|s| s == name)
                            .map(Axis::Sym)
                            .ok_or_else(|| {
                                format!("`{}`: a buffer's dimension `{name}` is no symbol of the program", p.function.name)
                            }),
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Schedule {
            slot,
            owned,
            steps,
            outputs,
            shapes,
        })
    }

    /// Buffer `b`'s dimensions under `bound`.
    pub fn dims(&self, b: usize, bound: &Bound) -> Vec<usize> {
        self.shapes[b]
            .iter()
            .map(|a| match *a {
                Axis::Const(c) => c,
                Axis::Sym(k) => bound.sizes[k] as usize,
            })
            .collect()
    }

    /// Check a call's arguments (dtype, element count and dimensions of
    /// each: `ArgDims::FLAT` for one known by its length only) and bind
    /// the symbols (`Program::bind_dims`); then check every launch's
    /// buffers against the elements its kernel reads and writes. Errors
    /// name the argument.
    pub fn bind(&self, p: &Program, args: &[(DType, usize, ArgDims)]) -> Result<Bound, String> {
        let f = &p.function;
        p.check_arg_types(args.iter().map(|a| a.0))?;
        let spec: Vec<(usize, ArgDims)> = args.iter().map(|a| (a.1, a.2)).collect();
        let sizes = p.bind_dims(&spec)?;
        // A max, min or argmax over an empty axis has no value (JAX raises):
        // an error before anything is queued, as on the CPU.
        p.check_nonempty(&sizes)?;
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
        Ok(Bound {
            sizes,
            lens,
            kernel_sizes,
        })
    }
}

#[cfg(test)]
mod tests {
    //! The schedule run on the host with the kernel interpreter, against
    //! the reference interpreter: checks everything `run_device` does
    //! except the driver calls, on machines without a GPU.

    use super::*;
    use crate::emulate::Model;
    use oxla_core::transforms::{grad, vmap};
    use oxla_core::{Dim, Op, Shape, Tensor, Type};

    /// `run_device` on host buffers known by their lengths, with
    /// schedule `s` (`crate::emulate`).
    fn run_host(p: &Program, s: &Schedule, args: &[Buffer]) -> Result<Vec<Buffer>, String> {
        Model::with_schedule(p.clone(), s.clone())?.run_flat(args)
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
        let got = match run_host(&p, &s, &args) {
            // A max over no elements: JAX raises, and so does every executor.
            Err(e) if e.contains("has no identity") => return Ok(()),
            r => r?,
        };
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
        let f64s = |n| (DType::F64, n, ArgDims::FLAT);
        let e = s.bind(&p, &[f64s(3), f64s(4), f64s(3)]).unwrap_err();
        assert!(e.contains("`y`"), "{e}");
        let e = s
            .bind(&p, &[f64s(3), (DType::F32, 3, ArgDims::FLAT), f64s(3)])
            .unwrap_err();
        assert!(e.contains("`y`") && e.contains("f32"), "{e}");
        let e = s.bind(&p, &[f64s(3)]).unwrap_err();
        assert!(e.contains("3 arguments"), "{e}");
        assert!(s.bind(&p, &[f64s(0), f64s(0), f64s(0)]).is_ok());
    }

    /// `x: [m, k]`, `y: [k, m]` → `x + yᵀ`: each argument has two dimension
    /// symbols, so lengths alone cannot bind them (the failure of 52 cuBLAS
    /// products on the first GPU run), dimensions can.
    fn two_symbols_each() -> Function {
        let mut f = Function::new("two_symbols_each");
        let (m, k) = (Dim::sym("m"), Dim::sym("k"));
        let x = f.add_param(
            "x",
            Type::new(DType::F64, Shape(vec![m.clone(), k.clone()])),
        );
        let y = f.add_param("y", Type::new(DType::F64, Shape(vec![k, m])));
        let yt = f.push(Op::Transpose { perm: vec![1, 0] }, &[y]).unwrap();
        f.outs = vec![f.add(x, yt)];
        f
    }

    #[test]
    fn binding_from_dimensions_solves_several_symbols_per_argument() {
        let p = fuse(&two_symbols_each()).unwrap();
        let s = Schedule::new(&p).unwrap();
        let shaped = |d: &[usize]| (DType::F64, d.iter().product(), ArgDims::new(d).unwrap());
        let bound = s.bind(&p, &[shaped(&[2, 3]), shaped(&[3, 2])]).unwrap();
        assert_eq!(s.dims(p.outputs[0], &bound), [2, 3]);
        // Flat, as before: the error it gave on the GPU.
        let flat = (DType::F64, 6, ArgDims::FLAT);
        let e = s.bind(&p, &[flat, flat]).unwrap_err();
        assert!(e.contains("cannot infer dimension"), "{e}");
        // A wrong dimension names the argument and the axis.
        let e = s.bind(&p, &[shaped(&[2, 3]), shaped(&[3, 4])]).unwrap_err();
        assert!(e.contains("`y`") && e.contains("axis 1"), "{e}");
        let e = s.bind(&p, &[shaped(&[2, 3]), shaped(&[6])]).unwrap_err();
        assert!(e.contains("`y`") && e.contains("rank 2"), "{e}");
        // One shaped argument binds both symbols; the other may be flat.
        assert!(s.bind(&p, &[shaped(&[2, 3]), flat]).is_ok());
        // The emulated call returns the result with its shape.
        let x = Buffer::from_f64(DType::F64, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let y = Buffer::from_f64(DType::F64, &[10.0, 40.0, 20.0, 50.0, 30.0, 60.0]);
        let out = crate::emulate::run_shaped(&p, &[(x, vec![2, 3]), (y, vec![3, 2])]).unwrap();
        assert_eq!(out[0].1, [2, 3]);
        assert_eq!(out[0].0.to_f64(), [11.0, 22.0, 33.0, 44.0, 55.0, 66.0]);
    }

    /// A `for` loop's program passes `Schedule::new` (it refused host
    /// steps before), its result buffer is filled by the step, not
    /// allocated, and the emulated call runs it.
    #[test]
    fn programs_with_loops_are_scheduled() {
        use oxla_core::ops::control::{push_for, Checkpoint};
        let mut body = Function::new("double");
        let x = vec_f64(&mut body, "x");
        let _i = body.add_param("i", Type::scalar(DType::I64));
        let c = vec_f64(&mut body, "c");
        let d = body.add(c, x);
        body.outs = vec![d];
        let mut f = Function::new("repeat_add");
        let x = vec_f64(&mut f, "x");
        let lo = f.add_param("lo", Type::scalar(DType::I64));
        let hi = f.add_param("hi", Type::scalar(DType::I64));
        let r = push_for(&mut f, lo, hi, &[x], &[x], body, Checkpoint::All).unwrap();
        f.outs = vec![r[0]];
        let p = fuse(&f).unwrap();
        assert_eq!(p.host_steps.len(), 1);
        let s = Schedule::new(&p).unwrap();
        let out = p.host_steps[0].outs()[0];
        let Slot::Owned(o) = s.slot[out] else {
            panic!("a loop writes a buffer of the call")
        };
        assert!(s.owned[o].from_step && s.owned[o].fill.is_none());
        let x = Buffer::from_f64(DType::F64, &[1.0, -2.0]);
        let i64s = |v: i64| Buffer::I64(vec![v]);
        for (lo, hi, times) in [(0, 3, 4.0), (5, 5, 1.0), (3, -1, 1.0), (-2, 2, 5.0)] {
            let got = run_host(&p, &s, &[x.clone(), i64s(lo), i64s(hi)]).unwrap();
            assert_eq!(got[0].to_f64(), [times, -2.0 * times], "{lo}..{hi}");
        }
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
