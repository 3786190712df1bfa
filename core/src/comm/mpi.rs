//! The processes of an MPI job as one group of devices (feature `mpi`):
//! one CPU device per process, the collectives MPI's own.
//!
//! [`init`] initializes MPI (from the environment `mpirun` sets) and makes
//! the job's world this process's [`world`] group; a `pmap` that is not
//! inside another then spans the processes (`exec::pmap`): each process
//! passes its own device's slice, as a JAX process passes its local
//! devices' slices. Dropping the [`Distributed`] guard finalizes MPI.
//!
//! # How a collective runs
//!
//! 1. **Headers.** Every rank sends the others a small description of its
//!    call (collective, element type, length, reduction, a hash of the
//!    pairs) with non-blocking sends and receives, and polls them until all
//!    have arrived or the timeout ([`super::default_timeout`]) passes: a
//!    rank that never calls the collective (it runs another program, or
//!    died without the job ending) gives a [`CommErrorKind::Timeout`] naming
//!    it, not a hang. Every rank then checks the same descriptions
//!    (`comm::agree`), so all of them fail together on a mismatch, before any
//!    data moves.
//! 2. **Data**, with MPI's collectives on the buffers' bytes:
//!    `MPI_Allreduce` / `MPI_Reduce_scatter_block` for the sums of `f32` and
//!    `f64` (in MPI's reduction order, the same on every rank and in every
//!    run of the same job shape; it may differ in rounding from the threads
//!    group's rank-order fold), `MPI_Allgather` then the rank-order fold of
//!    this crate for every other reduction (JAX's NaN-propagating max and
//!    min, wrapping integer sums, half types rounded after each addition,
//!    which MPI's built-in operations do not give), `MPI_Allgather`,
//!    `MPI_Alltoall`, and a send and a receive per pair for `permute`.
//!
//! [`Communicator::abort`] breaks this process's member only: the other
//! processes learn of it by their timeout, or when this process exits and
//! `mpirun` ends the job.

use super::{agree, check_pairs, fold, CallDesc, CommError, CommErrorKind, CommOp};
use super::{default_timeout, Communicator, Element, ReduceOp};
use crate::buffer::{each_buffer, Buffer};
use crate::dtype::DType;
use mpi::collective::SystemOperation;
use mpi::datatype::Equivalence;
use mpi::environment::Universe;
use mpi::raw::AsRaw;
use mpi::request::Request;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator as _, CommunicatorCollectives, Destination, Source};
use mpi::Threading;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The tags of oxla's messages on its own (duplicated) communicator.
const HEADER_TAG: i32 = 1;
const PERMUTE_TAG: i32 = 2;

/// The largest message MPI's `int` counts describe, in bytes.
const MAX_BYTES: usize = i32::MAX as usize;

/// The job's world while [`init`]'s guard lives.
static WORLD: Mutex<Option<Arc<MpiComm>>> = Mutex::new(None);

/// This process's member of the job's world, after [`init`] and until its
/// guard is dropped.
pub fn world() -> Option<Arc<MpiComm>> {
    WORLD.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

/// MPI, initialized by [`init`]: finalized when this is dropped (keep it
/// alive until the program's last collective). Dropped while its thread
/// panics, it aborts the whole job (`MPI_Abort`) instead: the other
/// processes could not finish.
pub struct Distributed {
    world: Arc<MpiComm>,
    universe: Option<Universe>,
}

impl Distributed {
    /// This process's rank in the job (JAX's `jax.process_index()`).
    pub fn process_index(&self) -> usize {
        self.world.rank
    }

    /// The number of processes in the job (JAX's `jax.process_count()`).
    pub fn process_count(&self) -> usize {
        self.world.size
    }
}

impl std::fmt::Debug for Distributed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Distributed")
            .field("process_index", &self.world.rank)
            .field("process_count", &self.world.size)
            .finish()
    }
}

impl Drop for Distributed {
    fn drop(&mut self) {
        // Dropped by a panic: the other processes cannot finish the job's
        // collectives (and MPI_Finalize would wait for them), so end the
        // job, as `mpirun` does when a process dies.
        if std::thread::panicking() {
            if let Some(u) = &self.universe {
                eprintln!(
                    "oxla: process {} of the MPI job panicked; aborting the job",
                    self.world.rank
                );
                u.world().abort(101);
            }
        }
        WORLD.lock().unwrap_or_else(PoisonError::into_inner).take();
        // The communicator is freed before MPI is finalized; a member still
        // held elsewhere fails its later calls instead of using it.
        self.world.lock().comm.take();
        self.universe.take();
    }
}

/// Initializes MPI with the environment `mpirun` (or `srun`) set, as JAX's
/// `jax.distributed.initialize()`: from now until the guard is dropped, a
/// `pmap` spans the job's processes, one device each. A program run
/// without `mpirun` is a job of one process.
pub fn init() -> Result<Distributed, String> {
    if mpi::environment::is_initialized() {
        return Err(
            "MPI is already initialized: call oxla::distributed::init() once, \
                    before any other use of MPI"
                .into(),
        );
    }
    let (universe, threading) = mpi::initialize_with_threading(Threading::Multiple)
        .ok_or("MPI could not be initialized")?;
    // The members serialize their calls (one lock), so the threads that run
    // devices may call MPI one at a time.
    if !matches!(threading, Threading::Multiple | Threading::Serialized) {
        return Err(format!(
            "this MPI gives thread support {threading:?}; oxla's device threads need \
             MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE"
        ));
    }
    // A communicator of its own, so that no message of the user's can
    // match oxla's.
    let comm = universe.world().duplicate();
    let world = Arc::new(MpiComm::new(comm, default_timeout()));
    *WORLD.lock().unwrap_or_else(PoisonError::into_inner) = Some(world.clone());
    Ok(Distributed {
        world,
        universe: Some(universe),
    })
}

/// One process's member of an MPI communicator (see the module docs).
pub struct MpiComm {
    rank: usize,
    size: usize,
    timeout: Duration,
    /// This MPI's `MPI_IN_PLACE` (a C macro, so the bindings lack it), where
    /// the library is one whose value is known.
    in_place: Option<usize>,
    inner: Mutex<Inner>,
}

struct Inner {
    /// `None` once MPI is shut down.
    comm: Option<SimpleCommunicator>,
    /// The send side of `MPI_Allreduce` (which cannot reduce in place
    /// portably), kept between calls: a fresh allocation of a large buffer
    /// costs its page faults on every call.
    scratch: Vec<u64>,
    /// Why the member is broken (a timeout or an abort), once it is.
    failure: Option<CommErrorKind>,
}

// SAFETY: MPI is initialized with MPI_THREAD_SERIALIZED or better (`init`
// checks), and the communicator is used only with the member's lock held,
// so no two threads call MPI through it at once.
unsafe impl Send for Inner {}

impl MpiComm {
    fn new(comm: SimpleCommunicator, timeout: Duration) -> MpiComm {
        MpiComm {
            rank: comm.rank() as usize,
            size: comm.size() as usize,
            timeout,
            in_place: in_place_address(),
            inner: Mutex::new(Inner {
                comm: Some(comm),
                scratch: Vec::new(),
                failure: None,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn error(&self, op: CommOp, kind: CommErrorKind) -> CommError {
        CommError {
            rank: self.rank,
            op,
            kind,
        }
    }

    /// Runs `work` on the communicator once every rank has made the call
    /// `desc` describes (step 1 of the module docs).
    fn call<R>(
        &self,
        desc: CallDesc,
        work: impl FnOnce(&SimpleCommunicator, &mut Vec<u64>) -> R,
    ) -> Result<R, CommError> {
        let op = desc.op;
        let mut inner = self.lock();
        let Inner {
            comm,
            scratch,
            failure,
        } = &mut *inner;
        if let Some(f) = failure {
            return Err(self.error(op, f.clone()));
        }
        let Some(comm) = comm.as_ref() else {
            return Err(self.error(
                op,
                CommErrorKind::Invalid {
                    detail: "MPI was shut down (the oxla::distributed guard was dropped)".into(),
                },
            ));
        };
        let bytes = desc.len * desc.dtype.size_bytes() * self.size;
        let agreed = self.exchange(comm, &desc).and_then(|()| {
            if bytes > MAX_BYTES {
                Err(CommErrorKind::Invalid {
                    detail: format!(
                        "{bytes} bytes over the group exceed MPI's count limit ({MAX_BYTES})"
                    ),
                })
            } else {
                Ok(())
            }
        });
        match agreed {
            Ok(()) => Ok(work(comm, scratch)),
            Err(kind) => {
                if matches!(kind, CommErrorKind::Timeout { .. }) {
                    *failure = Some(kind.clone());
                }
                Err(self.error(op, kind))
            }
        }
    }

    /// Every rank's header, checked with [`agree`] (step 1).
    fn exchange(&self, comm: &SimpleCommunicator, desc: &CallDesc) -> Result<(), CommErrorKind> {
        let mine = header(desc);
        let mut theirs = vec![[0u64; HEADER_LEN]; self.size];
        theirs[self.rank] = mine;
        let missing = mpi::request::scope(|scope| {
            let mut pending: Vec<(Option<usize>, Request<'_, [u64], _>)> = Vec::new();
            for r in (0..self.size).filter(|r| *r != self.rank) {
                let to = comm.process_at_rank(r as i32);
                let req = to.immediate_send_with_tag(scope, &mine[..], HEADER_TAG);
                pending.push((None, req));
            }
            for (r, slot) in theirs.iter_mut().enumerate() {
                if r != self.rank {
                    let from = comm.process_at_rank(r as i32);
                    let req =
                        from.immediate_receive_into_with_tag(scope, &mut slot[..], HEADER_TAG);
                    pending.push((Some(r), req));
                }
            }
            let start = Instant::now();
            loop {
                pending = pending
                    .into_iter()
                    .filter_map(|(r, req)| req.test().err().map(|req| (r, req)))
                    .collect();
                if pending.is_empty() || start.elapsed() >= self.timeout {
                    break;
                }
                back_off(start.elapsed());
            }
            let missing: Vec<usize> = pending.iter().filter_map(|(r, _)| *r).collect();
            for (_, req) in pending {
                req.cancel();
                req.wait();
            }
            missing
        });
        if !missing.is_empty() {
            return Err(CommErrorKind::Timeout {
                during: desc.op,
                missing,
                waited: self.timeout,
            });
        }
        let calls: Vec<CallDesc> = theirs.iter().map(|h| decode(h, desc)).collect();
        agree(&calls)?;
        if theirs.iter().any(|h| h[PAIRS] != mine[PAIRS]) {
            return Err(CommErrorKind::Mismatch {
                detail: "they differ in pairs".into(),
            });
        }
        if desc.op == CommOp::Permute {
            check_pairs(&desc.pairs, self.size)
                .map_err(|detail| CommErrorKind::Invalid { detail })?;
        }
        Ok(())
    }

    fn desc<T: Element>(
        &self,
        op: CommOp,
        len: usize,
        reduce: Option<ReduceOp>,
        pairs: &[(usize, usize)],
    ) -> CallDesc {
        CallDesc {
            op,
            dtype: T::DTYPE,
            len,
            reduce,
            pairs: pairs.to_vec(),
        }
    }

    /// A sum of `f32` or `f64` by `MPI_Allreduce`.
    fn all_reduce_sum<T: Element + Equivalence>(&self, buf: &mut [T]) -> Result<(), CommError> {
        let desc = self.desc::<T>(CommOp::AllReduce, buf.len(), Some(ReduceOp::Sum), &[]);
        self.call(desc, |comm, scratch| {
            // Every rank agreed on the length; MPI refuses two empty
            // buffers at one (dangling) address.
            if buf.is_empty() {
                return Ok(());
            }
            let Some(in_place) = self.in_place else {
                let send = copy_into(scratch, buf);
                comm.all_reduce_into(send, buf, SystemOperation::sum());
                return Ok(());
            };
            let count = i32::try_from(buf.len()).expect("checked against MAX_BYTES");
            // SAFETY: `in_place` is this library's MPI_IN_PLACE, so MPI reads
            // and writes `buf` only: `count` elements of `T`'s MPI datatype,
            // which `buf` holds; the communicator and the operation are live
            // handles.
            let code = unsafe {
                mpi::ffi::MPI_Allreduce(
                    std::ptr::without_provenance::<std::ffi::c_void>(in_place),
                    buf.as_mut_ptr().cast(),
                    count,
                    T::equivalent_datatype().as_raw(),
                    SystemOperation::sum().as_raw(),
                    comm.as_raw(),
                )
            };
            if code == 0 {
                Ok(())
            } else {
                Err(CommErrorKind::Invalid {
                    detail: format!("MPI_Allreduce returned error code {code}"),
                })
            }
        })
        .and_then(|r| r.map_err(|kind| self.error(CommOp::AllReduce, kind)))
    }

    /// Any other reduction: every rank's buffer, folded in rank order.
    fn all_reduce_t<T: Element>(&self, buf: &mut [T], op: ReduceOp) -> Result<(), CommError> {
        let desc = self.desc::<T>(CommOp::AllReduce, buf.len(), Some(op), &[]);
        self.call(desc, |comm, _| {
            if buf.is_empty() {
                return;
            }
            let all = gather(comm, buf, self.size);
            let srcs: Vec<&[T]> = all.chunks(buf.len()).collect();
            fold(op, buf, &srcs);
        })
    }

    fn all_gather_t<T: Element>(&self, send: &[T]) -> Result<Vec<T>, CommError> {
        let desc = self.desc::<T>(CommOp::AllGather, send.len(), None, &[]);
        self.call(desc, |comm, _| gather(comm, send, self.size))
    }

    /// A sum of `f32` or `f64` by `MPI_Reduce_scatter_block`.
    fn reduce_scatter_sum<T: Element + Equivalence>(
        &self,
        send: &[T],
    ) -> Result<Vec<T>, CommError> {
        let desc = self.desc::<T>(CommOp::ReduceScatter, send.len(), Some(ReduceOp::Sum), &[]);
        self.call(desc, |comm, _| {
            let mut out = vec![T::ZERO; send.len() / self.size];
            if out.is_empty() {
                return out;
            }
            comm.reduce_scatter_block_into(send, &mut out[..], SystemOperation::sum());
            out
        })
    }

    /// Any other reduction: every rank's buffer, this rank's chunk folded in
    /// rank order.
    fn reduce_scatter_t<T: Element>(&self, send: &[T], op: ReduceOp) -> Result<Vec<T>, CommError> {
        let desc = self.desc::<T>(CommOp::ReduceScatter, send.len(), Some(op), &[]);
        self.call(desc, |comm, _| {
            let c = send.len() / self.size;
            let mut out = vec![T::ZERO; c];
            if c == 0 {
                return out;
            }
            let all = gather(comm, send, self.size);
            let own = self.rank * c..(self.rank + 1) * c;
            let srcs: Vec<&[T]> = all.chunks(send.len()).map(|s| &s[own.clone()]).collect();
            fold(op, &mut out, &srcs);
            out
        })
    }

    fn all_to_all_t<T: Element>(&self, send: &[T]) -> Result<Vec<T>, CommError> {
        let desc = self.desc::<T>(CommOp::AllToAll, send.len(), None, &[]);
        self.call(desc, |comm, _| {
            let mut out = vec![T::ZERO; send.len()];
            if out.is_empty() {
                return out;
            }
            comm.all_to_all_into(as_bytes(send), as_bytes_mut(&mut out));
            out
        })
    }

    fn permute_t<T: Element>(
        &self,
        send: &[T],
        pairs: &[(usize, usize)],
    ) -> Result<Vec<T>, CommError> {
        let desc = self.desc::<T>(CommOp::Permute, send.len(), None, pairs);
        self.call(desc, |comm, _| {
            let mut out = vec![T::ZERO; send.len()];
            if out.is_empty() {
                return out;
            }
            mpi::request::scope(|scope| {
                let sent = pairs.iter().find(|p| p.0 == self.rank).map(|&(_, d)| {
                    comm.process_at_rank(d as i32).immediate_send_with_tag(
                        scope,
                        as_bytes(send),
                        PERMUTE_TAG,
                    )
                });
                if let Some(&(s, _)) = pairs.iter().find(|p| p.1 == self.rank) {
                    comm.process_at_rank(s as i32)
                        .receive_into_with_tag(as_bytes_mut(&mut out), PERMUTE_TAG);
                }
                if let Some(req) = sent {
                    req.wait();
                }
            });
            out
        })
    }
}

/// Every rank's `send`, concatenated in rank order (`MPI_Allgather`).
fn gather<T: Element>(comm: &SimpleCommunicator, send: &[T], size: usize) -> Vec<T> {
    let mut out = vec![T::ZERO; send.len() * size];
    // Every rank agreed on the length; MPI refuses two empty buffers at one
    // (dangling) address.
    if out.is_empty() {
        return out;
    }
    comm.all_gather_into(as_bytes(send), as_bytes_mut(&mut out));
    out
}

/// `MPI_IN_PLACE` of the MPI this process runs: `(void *) 1` in Open MPI,
/// `(void *) -1` in MPICH and its derivatives (their `mpi.h`); `None` for
/// another library (the sums then copy their input first).
fn in_place_address() -> Option<usize> {
    let version = mpi::environment::library_version().unwrap_or_default();
    if version.contains("Open MPI") {
        Some(1)
    } else if version.contains("MPICH") {
        Some(usize::MAX)
    } else {
        None
    }
}

/// `src` copied into `scratch` (grown as needed), as a slice of `T`.
fn copy_into<'a, T: Element>(scratch: &'a mut Vec<u64>, src: &[T]) -> &'a [T] {
    let bytes = std::mem::size_of_val(src);
    assert!(std::mem::align_of::<T>() <= std::mem::align_of::<u64>());
    let words = bytes.div_ceil(8);
    if scratch.len() < words {
        scratch.resize(words, 0);
    }
    // SAFETY: the scratch holds `words · 8 ≥ bytes` bytes, and it does not
    // overlap `src` (which the caller borrows apart from it).
    unsafe {
        std::ptr::copy_nonoverlapping(
            src.as_ptr().cast::<u8>(),
            scratch.as_mut_ptr().cast::<u8>(),
            bytes,
        )
    };
    // SAFETY: the scratch is aligned for `T` (asserted), holds at least
    // `src.len()` elements' bytes, and those bytes were copied from valid
    // `T`s; the slice borrows the scratch for its life.
    unsafe { std::slice::from_raw_parts(scratch.as_ptr().cast::<T>(), src.len()) }
}

fn as_bytes<T: Element>(v: &[T]) -> &[u8] {
    // SAFETY: every `Element` type (f16, bf16, f32, f64, i32, i64, and u8
    // for bool) is plain data without padding, so its bytes may be read.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
}

fn as_bytes_mut<T: Element>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: as for `as_bytes`; the bytes written come from the same
    // element type on another rank (the headers agreed on it), so they
    // form valid values (a bool byte is 0 or 1 there too).
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), std::mem::size_of_val(v)) }
}

/// Spin, yielding the core, for the first 100 ms of a wait, then sleep
/// 1 ms between polls: ranks that arrive together meet within
/// microseconds even on a busy machine (a sleeping rank would wake a
/// scheduler tick late), and one that waits long costs no core.
fn back_off(waited: Duration) {
    if waited < Duration::from_millis(100) {
        std::thread::yield_now();
    } else {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The words of a header: collective, element type, length, reduction,
/// and a hash of the pairs.
const HEADER_LEN: usize = 5;
const PAIRS: usize = 4;

const OPS: [CommOp; 5] = [
    CommOp::AllReduce,
    CommOp::AllGather,
    CommOp::ReduceScatter,
    CommOp::AllToAll,
    CommOp::Permute,
];
const REDUCES: [ReduceOp; 3] = [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min];

fn pick<T: Copy>(all: &[T], k: u64, own: T) -> T {
    all.get(k as usize).copied().unwrap_or(own)
}

fn code<T: PartialEq>(all: &[T], x: &T) -> u64 {
    all.iter().position(|a| a == x).expect("listed") as u64
}

fn header(desc: &CallDesc) -> [u64; HEADER_LEN] {
    // FNV-1a over the pairs: equal pairs hash equally on every rank.
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for &(s, d) in &desc.pairs {
        for w in [s as u64, d as u64] {
            hash = (hash ^ w).wrapping_mul(0x0100_0000_01b3);
        }
    }
    [
        code(&OPS, &desc.op),
        code(&DType::ALL, &desc.dtype),
        desc.len as u64,
        desc.reduce.map_or(0, |r| 1 + code(&REDUCES, &r)),
        hash,
    ]
}

/// The call a header describes (pairs aside: only their hash travels, and
/// `exchange` compares it); a word out of range reads as this rank's own.
fn decode(h: &[u64; HEADER_LEN], own: &CallDesc) -> CallDesc {
    CallDesc {
        op: pick(&OPS, h[0], own.op),
        dtype: pick(&DType::ALL, h[1], own.dtype),
        len: h[2] as usize,
        reduce: match h[3] {
            0 => None,
            k => Some(pick(&REDUCES, k - 1, own.reduce.unwrap_or(ReduceOp::Sum))),
        },
        pairs: Vec::new(),
    }
}

impl Communicator for MpiComm {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn all_reduce(&self, buf: &mut Buffer, op: ReduceOp) -> Result<(), CommError> {
        match (buf, op) {
            (Buffer::F32(v), ReduceOp::Sum) => self.all_reduce_sum(v),
            (Buffer::F64(v), ReduceOp::Sum) => self.all_reduce_sum(v),
            (buf, op) => each_buffer!(buf, v => self.all_reduce_t(v, op)),
        }
    }

    fn all_gather(&self, send: &Buffer) -> Result<Buffer, CommError> {
        each_buffer!(send, v => self.all_gather_t(v).map(Element::wrap))
    }

    fn reduce_scatter(&self, send: &Buffer, op: ReduceOp) -> Result<Buffer, CommError> {
        match (send, op) {
            (Buffer::F32(v), ReduceOp::Sum) => self.reduce_scatter_sum(v).map(Element::wrap),
            (Buffer::F64(v), ReduceOp::Sum) => self.reduce_scatter_sum(v).map(Element::wrap),
            (send, op) => each_buffer!(send, v => self.reduce_scatter_t(v, op).map(Element::wrap)),
        }
    }

    fn all_to_all(&self, send: &Buffer) -> Result<Buffer, CommError> {
        each_buffer!(send, v => self.all_to_all_t(v).map(Element::wrap))
    }

    fn permute(&self, send: &Buffer, pairs: &[(usize, usize)]) -> Result<Buffer, CommError> {
        each_buffer!(send, v => self.permute_t(v, pairs).map(Element::wrap))
    }

    fn abort(&self, why: &str) {
        let mut inner = self.lock();
        if inner.failure.is_none() {
            inner.failure = Some(CommErrorKind::Aborted {
                by: self.rank,
                reason: why.to_string(),
            });
        }
    }
}
