//! Pmap and collective steps of a program's schedule, run on the host like
//! loop and cond steps (`exec::loops`, `exec::cond`).
//!
//! A pmap step (`ops::control::Pmap`) runs its body's program once per
//! device, each on a thread of its own, on the device's slice of every
//! mapped operand (a pointer into the operand: nothing is copied on the
//! way in) and writes each device's results into its slice of the stacked
//! outputs. While the body runs, the thread's *axis context* binds the
//! pmap's axis name to this device's member of a communicator
//! (`comm::Communicator`) for the group; a collective step
//! (`ops::collective`) in the body looks its axis up there and calls the
//! communicator, with the layout changes JAX's collectives make around it
//! (a gather's new axis moved to its place, the scattered axis moved to
//! the front first). On CPU devices the group is `comm::SharedGroup`:
//! shared memory, a fixed reduction order, so results are the same run to
//! run and on every device.
//!
//! A device that fails aborts the group, so the others' collectives end in
//! an error rather than a wait; the step reports the first device's error
//! that is not such a consequence.

use super::host_step::{buffer_from, write_outs, Nested, Renumbered};
use super::{ArgDims, Launcher, Program, RawArg, Scratch};
use crate::buffer::Buffer;
use crate::comm::{Communicator, ReduceOp, SharedComm};
use crate::dtype::DType;
use crate::ir::Type;
use crate::ops::collective::{Collective, CollectiveKind};
use crate::ops::control::Pmap;
use crate::shape::Dim;
use std::cell::RefCell;
use std::sync::Arc;

/// The environment variable that sets how many CPU devices there are (as
/// JAX's `--xla_force_host_platform_device_count`); by default one per
/// core.
pub const CPU_DEVICES_ENV: &str = "OXLA_CPU_DEVICES";

/// Set by `set_cpu_device_count` (0: not set).
static CPU_DEVICES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Sets the number of CPU devices for the rest of the process (JAX's
/// `jax_num_cpu_devices` option), over `OXLA_CPU_DEVICES`; at least 1.
pub fn set_cpu_device_count(n: usize) {
    CPU_DEVICES.store(n.max(1), std::sync::atomic::Ordering::Relaxed);
}

/// The number of CPU devices: the last `set_cpu_device_count`, else
/// `OXLA_CPU_DEVICES` if set (at least 1), else one per core available to
/// the process.
pub fn cpu_device_count() -> usize {
    let set = CPU_DEVICES.load(std::sync::atomic::Ordering::Relaxed);
    if set > 0 {
        return set;
    }
    std::env::var(CPU_DEVICES_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1)
}

/// What a collective's error says when another device aborted the group
/// (`comm::CommErrorKind::Aborted`'s text).
const ABORTED: &str = "the group was aborted by rank";

/// A pmap step of the schedule (`HostStep::Pmap`).
#[derive(Clone, Debug)]
pub struct PmapStep {
    /// How many of the program's launches run before it.
    pub at: usize,
    /// The op (its body's function, axis, mapping), for checks and messages.
    pub op: Pmap,
    /// The body's program. When the body's types name the axis's size
    /// symbol, the program takes one more parameter at the end, `bool[n]`,
    /// which only binds it (`carrier`).
    pub body: Nested,
    pub carrier: bool,
    /// Which of the body's results the step's results are.
    pub results: Vec<usize>,
    /// The buffers of the operands.
    pub args: Vec<usize>,
    /// The buffers the step writes, one per entry of `results`.
    pub outs: Vec<usize>,
}

/// A collective step of the schedule (`HostStep::Collective`).
#[derive(Clone, Debug)]
pub struct CollectiveStep {
    pub at: usize,
    pub op: Collective,
    /// Its operand's buffer (none for `axis_index`).
    pub args: Vec<usize>,
    /// `[0]`: its one result.
    pub results: Vec<usize>,
    /// The buffer it writes.
    pub outs: Vec<usize>,
}

thread_local! {
    /// The axes bound on this thread: each pmap running a body here pushes
    /// its axis and this device's member of the group.
    static AXES: RefCell<Vec<(String, Arc<dyn Communicator>)>> = const { RefCell::new(Vec::new()) };
}

/// The communicator this thread's innermost pmap over `axis` bound.
fn bound_axis(axis: &str) -> Option<Arc<dyn Communicator>> {
    AXES.with(|a| {
        a.borrow()
            .iter()
            .rev()
            .find(|(n, _)| n == axis)
            .map(|(_, c)| c.clone())
    })
}

/// Binds `axis` to `comm` on this thread until dropped.
struct AxisBinding;

impl AxisBinding {
    fn bind(axis: &str, comm: Arc<dyn Communicator>) -> AxisBinding {
        AXES.with(|a| a.borrow_mut().push((axis.to_string(), comm)));
        AxisBinding
    }
}

impl Drop for AxisBinding {
    fn drop(&mut self) {
        AXES.with(|a| a.borrow_mut().pop());
    }
}

/// The members of the group a pmap over `n` device slices runs on (one per
/// slice), and the size of its axis: `n` CPU devices of this process; or,
/// in an MPI job (`comm::mpi`), for a pmap not inside another, this
/// process's one device of the job's world, whose size is the number of
/// processes.
fn device_group(
    axis: &str,
    n: usize,
    arg: &str,
) -> Result<(Vec<Arc<dyn Communicator>>, usize), String> {
    #[cfg(feature = "mpi")]
    if AXES.with(|a| a.borrow().is_empty()) {
        if let Some(world) = crate::comm::mpi::world() {
            let size = world.size();
            if n != 1 {
                return Err(format!(
                    "pmap over `{axis}` in an MPI job of {size} processes: argument `{arg}` has {n} entries along the device axis, but each process passes the slice of its own device (1 entry, JAX's local device count)"
                ));
            }
            return Ok((vec![world as Arc<dyn Communicator>], size));
        }
    }
    let devices = cpu_device_count();
    if n > devices {
        return Err(format!(
            "pmap over `{axis}`: argument `{arg}` has {n} entries along the device axis, one per device, but there are {devices} CPU devices (set {CPU_DEVICES_ENV}={n}, as JAX's --xla_force_host_platform_device_count)"
        ));
    }
    let members = SharedComm::group(n)
        .into_iter()
        .map(|m| Arc::new(m) as Arc<dyn Communicator>)
        .collect();
    Ok((members, n))
}

/// Each device's results fill its slice of the step's outputs. They do
/// unless a result's shape names the axis's size and the group spans more
/// devices than this process maps (an MPI job).
fn check_result_lengths(
    axis: &str,
    size: usize,
    results: &[&Buffer],
    outs: &[(*mut u8, usize)],
) -> Result<(), String> {
    for (k, (b, (_, len))) in results.iter().zip(outs).enumerate() {
        if b.len() != *len {
            return Err(format!(
                "result {k} of the pmap over `{axis}` has {} elements on each device, its slot {len}: its shape names the size of the axis ({size} devices in all), which differs from the devices this process maps; across processes return such a value reduced (psum) or scattered (psum_scatter)",
                b.len()
            ));
        }
    }
    Ok(())
}

/// A pointer that crosses to a device thread.
#[derive(Clone, Copy)]
struct Shared<T>(T);
// SAFETY: the pointers a pmap step hands its device threads point into
// operands that outlive the scoped threads, which only read them, and into
// disjoint slices of the outputs (one per device), which only that
// device's thread writes. Each device's `Scratch` goes to that device's
// thread alone; the raw pointers it holds are rebound by every call before
// use.
unsafe impl<T> Send for Shared<T> {}
// SAFETY: as for `Send`.
unsafe impl<T> Sync for Shared<T> {}

impl Program {
    /// Check pmap step `s` (see `check_host_step`): its operands are the
    /// op's, its results the op's result types.
    pub(super) fn check_pmap(
        &self,
        what: &str,
        s: &PmapStep,
        written: &mut [bool],
        read: &mut [bool],
    ) -> Result<(), String> {
        let types = self.buffer_types(what, &s.args)?;
        let refs: Vec<&Type> = types.iter().collect();
        let results = s.op.infer(&refs).map_err(|e| format!("{what}: {e}"))?;
        self.check_step_operands(what, "pmap", &s.args, &types, written, read)?;
        let body = &s.body.program.function;
        let n_params = s.op.n_operands() + s.carrier as usize;
        if body.params.len() != n_params || body.outs.len() != s.op.body.outs.len() {
            return Err(format!("{what}: the body program does not match the op"));
        }
        self.check_step_results(what, &s.args, &s.results, &s.outs, &results, written)
    }

    /// Check collective step `s`.
    pub(super) fn check_collective(
        &self,
        what: &str,
        s: &CollectiveStep,
        written: &mut [bool],
        read: &mut [bool],
    ) -> Result<(), String> {
        let types = self.buffer_types(what, &s.args)?;
        if types.len() != s.op.arity() {
            return Err(format!("{what}: {} operands", types.len()));
        }
        let refs: Vec<&Type> = types.iter().collect();
        let out = s.op.infer(&refs).map_err(|e| format!("{what}: {e}"))?;
        self.check_step_operands(what, "collective", &s.args, &types, written, read)?;
        self.check_step_results(what, &s.args, &s.results, &s.outs, &[out], written)
    }

    /// Run pmap step `s`: the body on every device's thread.
    ///
    /// # Safety
    /// As for `run_host_step`.
    pub(super) unsafe fn run_pmap(
        &self,
        s: &PmapStep,
        launcher: &dyn Launcher,
        ops: &[RawArg],
        outs: &[(*mut u8, usize)],
        nested: &mut [Scratch],
    ) -> Result<(), String> {
        let axis = &s.op.axis;
        let name = |k: usize| &s.op.body.param_names[k];
        let mut n: Option<(usize, usize)> = None;
        for (k, op) in ops.iter().enumerate() {
            if !s.op.mapped[k] {
                continue;
            }
            let d = op
                .dims
                .get()
                .and_then(|d| d.first().copied())
                .ok_or_else(|| {
                    format!(
                        "pmap over `{axis}`: argument `{}` has no device axis",
                        name(k)
                    )
                })?;
            match n {
                Some((m, j)) if m != d => {
                    return Err(format!(
                        "pmap over `{axis}`: argument `{}` has {d} entries along the device axis, argument `{}` {m}",
                        name(k),
                        name(j)
                    ))
                }
                _ => n = Some((d, k)),
            }
        }
        let (n, first) = n.ok_or_else(|| format!("pmap over `{axis}` maps no argument"))?;
        let (members, size) = device_group(axis, n, name(first))?;
        if let Dim::Const(c) = s.op.size {
            if c as usize != n {
                return Err(format!(
                    "pmap over `{axis}`: {n} devices, but its collectives need {c} (the extent of the axis they scatter or split)"
                ));
            }
        }
        if n == 0 {
            return Ok(());
        }
        // Each device's operands: a slice of a mapped one, all of another.
        let mut per_device: Vec<Vec<RawArg>> = vec![Vec::with_capacity(ops.len() + 1); n];
        for (k, op) in ops.iter().enumerate() {
            for (d, args) in per_device.iter_mut().enumerate() {
                args.push(if s.op.mapped[k] {
                    let dims = op.dims.get().expect("checked above");
                    let len = op.len / n;
                    RawArg {
                        dtype: op.dtype,
                        // SAFETY: device `d`'s slice lies within the
                        // operand's `len` elements (`d < n`, `len · n` of
                        // them).
                        ptr: unsafe { op.ptr.add(d * len * op.dtype.size_bytes()) },
                        len,
                        dims: ArgDims::new(&dims[1..]).expect("a smaller rank"),
                    }
                } else {
                    *op
                });
            }
        }
        // The axis's size, which the body's types may name: the devices of
        // the whole group (every process's, in an MPI job).
        let carrier = vec![0u8; size];
        if s.carrier {
            for args in per_device.iter_mut() {
                args.push(RawArg {
                    dtype: DType::Bool,
                    ptr: carrier.as_ptr(),
                    len: size,
                    dims: ArgDims::new(&[size]).expect("rank 1"),
                });
            }
        }
        let out_slices: Vec<Vec<(*mut u8, usize)>> = (0..n)
            .map(|d| {
                outs.iter()
                    .zip(&s.results)
                    .map(|((ptr, len), r)| {
                        let bytes = s.op.body.dtype(s.op.body.outs[*r]).size_bytes();
                        let each = len / n;
                        // SAFETY: as for the operands: within the output.
                        (unsafe { ptr.add(d * each * bytes) }, each)
                    })
                    .collect()
            })
            .collect();
        let body = &s.body;
        let results = &s.results;
        let launcher = Shared(launcher);
        // Each device's space (its buffer pool) is kept across calls in the
        // step's scratch, as a loop body's is.
        let scratches: Vec<Shared<&mut Scratch>> =
            nested[0].devices(n).iter_mut().map(Shared).collect();
        let errors: Vec<Result<(), String>> = std::thread::scope(|scope| {
            let handles: Vec<_> = members
                .iter()
                .zip(per_device.into_iter().zip(out_slices))
                .zip(scratches)
                .map(|((member, (args, outs)), scratch)| {
                    let member = member.clone();
                    let args = Shared(args);
                    let outs = Shared(outs);
                    scope.spawn(move || {
                        let (args, outs, scratch) = (args, outs, scratch);
                        let _bound = AxisBinding::bind(axis, member.clone());
                        let renumbered = Renumbered {
                            inner: launcher.0,
                            kernels: &body.kernels,
                        };
                        // SAFETY: the device's operands point into live
                        // operands of their stated lengths, its outputs
                        // into its own slices of the step's outputs, which
                        // overlap no operand (`check_schedule`).
                        let r = unsafe {
                            body.program
                                .call_in(&renumbered, &args.0, &[], scratch.0, |res| {
                                    let picked: Vec<&Buffer> =
                                        results.iter().map(|k| &res[*k]).collect();
                                    check_result_lengths(axis, size, &picked, &outs.0)?;
                                    write_outs(&picked, &outs.0)
                                })
                        }
                        .and_then(|r| r);
                        if let Err(e) = &r {
                            member.abort(e);
                        }
                        r
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(format!("pmap over `{axis}`: a device panicked")))
                })
                .collect()
        });
        drop(carrier);
        // The first device's own error: the others' are the abort it
        // caused (`comm::CommErrorKind::Aborted`), reported only if no
        // device says more.
        let mut first: Option<String> = None;
        let mut echo: Option<String> = None;
        for (d, r) in errors.into_iter().enumerate() {
            if let Err(e) = r {
                let e = format!("pmap over `{axis}`, device {d}: {e}");
                let slot = if e.contains(ABORTED) {
                    &mut echo
                } else {
                    &mut first
                };
                slot.get_or_insert(e);
            }
        }
        let first = first.or(echo);
        first.map_or(Ok(()), Err)
    }

    /// Run collective step `s` on this thread's device (see `run_host_step`).
    ///
    /// # Safety
    /// As for `run_host_step`.
    pub(super) unsafe fn run_collective(
        &self,
        s: &CollectiveStep,
        ops: &[RawArg],
        outs: &[(*mut u8, usize)],
    ) -> Result<(), String> {
        let c = &s.op;
        let comm = bound_axis(&c.axis)
            .ok_or_else(|| format!("`{c}` runs outside every pmap over the axis `{}`", c.axis))?;
        let n = comm.size();
        if let Dim::Const(k) = c.size {
            if k as usize != n {
                return Err(format!(
                    "`{c}` needs {k} devices along `{}`, the pmap has {n}",
                    c.axis
                ));
            }
        }
        let err = |e: crate::comm::CommError| format!("`{c}`: {e}");
        let out = match &c.kind {
            CollectiveKind::AxisIndex { dtype } => Buffer::from_f64(*dtype, &[comm.rank() as f64]),
            kind => {
                let op = &ops[0];
                // SAFETY: the operand points to `len` live elements of its
                // dtype (the caller's guarantee).
                let mut x = unsafe { buffer_from(op) };
                let dims = op.dims.get().unwrap_or(&[]).to_vec();
                match kind {
                    CollectiveKind::Psum => {
                        comm.all_reduce(&mut x, ReduceOp::Sum).map_err(err)?;
                        x
                    }
                    CollectiveKind::Pmax => {
                        comm.all_reduce(&mut x, ReduceOp::Max).map_err(err)?;
                        x
                    }
                    CollectiveKind::Pmin => {
                        comm.all_reduce(&mut x, ReduceOp::Min).map_err(err)?;
                        x
                    }
                    CollectiveKind::AllGather { axis } => {
                        let g = comm.all_gather(&x).map_err(err)?;
                        let mut gd = vec![n];
                        gd.extend(&dims);
                        move_axis(&g, &gd, 0, *axis)
                    }
                    CollectiveKind::PsumScatter { axis } => {
                        check_extent(c, &dims, *axis, n)?;
                        let front = move_axis(&x, &dims, *axis, 0);
                        comm.reduce_scatter(&front, ReduceOp::Sum).map_err(err)?
                    }
                    CollectiveKind::Ppermute { perm } => comm.permute(&x, perm).map_err(err)?,
                    CollectiveKind::AllToAll { split, concat } => {
                        check_extent(c, &dims, *split, n)?;
                        let front = move_axis(&x, &dims, *split, 0);
                        let got = comm.all_to_all(&front).map_err(err)?;
                        let mut gd = vec![n];
                        gd.extend(
                            dims.iter()
                                .enumerate()
                                .filter(|(a, _)| a != split)
                                .map(|(_, d)| *d),
                        );
                        move_axis(&got, &gd, 0, *concat)
                    }
                    CollectiveKind::AxisIndex { .. } => unreachable!(),
                }
            }
        };
        // SAFETY: the output holds the result's element count of its dtype
        // (`check_collective`) and overlaps the operand nowhere.
        unsafe { write_outs(&[&out], outs) }
    }
}

/// The axis a `psum_scatter` scatters or an `all_to_all` splits has one
/// entry per device.
fn check_extent(c: &Collective, dims: &[usize], axis: usize, n: usize) -> Result<(), String> {
    match dims.get(axis) {
        Some(d) if *d == n => Ok(()),
        Some(d) => Err(format!(
            "`{c}`: axis {axis} has {d} entries, one per device needs {n}"
        )),
        None => Err(format!("`{c}`: the operand has no axis {axis}")),
    }
}

/// `b` (row-major, `dims`) with axis `from` moved to position `to`.
pub(crate) fn move_axis(b: &Buffer, dims: &[usize], from: usize, to: usize) -> Buffer {
    if from == to || b.is_empty() {
        return b.clone();
    }
    let perm = crate::ops::layout::move_axis_perm(dims.len(), from, to);
    let out_dims: Vec<usize> = perm.iter().map(|a| dims[*a]).collect();
    let mut in_strides = vec![1usize; dims.len()];
    for a in (0..dims.len().saturating_sub(1)).rev() {
        in_strides[a] = in_strides[a + 1] * dims[a + 1];
    }
    let size = b.dtype().size_bytes();
    let mut out = Buffer::zeros(b.dtype(), b.len());
    let src = b.as_ptr();
    let dst = out.as_mut_ptr();
    let mut idx = vec![0usize; dims.len()];
    for i in 0..b.len() {
        let at: usize = idx.iter().zip(&perm).map(|(x, a)| x * in_strides[*a]).sum();
        // SAFETY: `at` and `i` are below `b.len()`, the element count of
        // both buffers, of `size` bytes each.
        unsafe { std::ptr::copy_nonoverlapping(src.add(at * size), dst.add(i * size), size) };
        for a in (0..idx.len()).rev() {
            idx[a] += 1;
            if idx[a] < out_dims[a] {
                break;
            }
            idx[a] = 0;
        }
    }
    out
}
