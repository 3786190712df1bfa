//! The group of CPU devices of one process: one thread per device, the
//! buffers exchanged through shared memory.
//!
//! # How a collective runs
//!
//! Every collective is two group-wide barriers (one mutex, one condition
//! variable, generation counters) with the work between them:
//!
//! 1. **Enter.** Each rank publishes a description of its call and the
//!    address of its buffer, and waits for the others. The last to arrive
//!    checks that the descriptions agree ([`agree`]); every rank reads that
//!    one verdict, so all of them fail together on a mismatch, before
//!    anyone has touched another's memory.
//! 2. **Work.** Each rank reads the parts of the other ranks' buffers that
//!    it needs. No two ranks touch the same bytes unless both only read
//!    them. `all_reduce` splits the buffers into `size` chunks; rank `r`
//!    owns chunk `r` of *every* rank's buffer: it folds them, tile by tile,
//!    in rank order, and writes the result back into all of them. Each
//!    rank so reads and writes as many bytes as a copy of one buffer, the
//!    least an in-place all-reduce can move (every buffer is read and
//!    written once), with no barrier in the middle.
//! 3. **Exit.** A last barrier, after which no rank touches another's
//!    memory, so each may return and let its buffer go. It reports a
//!    failure of the group during the collective (a rank that panicked in
//!    it did not do its part of the work).
//!
//! The enter barrier fails on the group's timeout or on an abort. The exit
//! barrier cannot fail: a rank that passed the enter barrier may still be
//! reading or writing the others' buffers, so no one may return before it
//! is done, even after an abort, a timeout or a panic (a panicking rank
//! waits there while it unwinds). It waits only for ranks that run the
//! copies and folds of this file, which end; past the timeout it says on
//! stderr whom it waits for.

use super::{agree, fold, fold_in_place, CallDesc, CommError, CommErrorKind, CommOp};
use super::{Communicator, Element, ReduceOp};
use crate::buffer::{each_buffer, Buffer};
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// One member of a group of thread-devices made by [`SharedComm::group`].
/// Each member goes to the thread that runs its device (it is `Send`).
///
/// Dropping a member aborts the group (it can no longer take part): with
/// "panicked" as the reason where its thread is unwinding.
pub struct SharedComm {
    rank: usize,
    group: Arc<Group>,
}

struct Group {
    size: usize,
    timeout: Duration,
    state: Mutex<State>,
    wake: Condvar,
}

struct State {
    /// Barriers completed (the enter barrier and `all_reduce`'s middle one).
    generation: u64,
    /// Who has arrived at the barrier in progress.
    arrived: Vec<bool>,
    count: usize,
    /// Each rank's call, published at the enter barrier.
    calls: Vec<Option<(CallDesc, Region)>>,
    /// The last completed enter barrier's verdict: every rank's memory, or
    /// why the call cannot go ahead.
    entered: Result<Vec<Region>, CommErrorKind>,
    /// The exit barrier, which ignores failures.
    exit_generation: u64,
    exited: Vec<bool>,
    exit_count: usize,
    /// The group's failure when the last exit barrier completed.
    exit_failure: Option<CommErrorKind>,
    /// Why the group is broken (a timeout or an abort), once it is.
    failure: Option<CommErrorKind>,
}

impl SharedComm {
    /// A group of `size` members, rank `r` at index `r`, whose collectives
    /// wait [`default_timeout`](super::default_timeout) for each other.
    pub fn group(size: usize) -> Vec<SharedComm> {
        Self::group_with_timeout(size, super::default_timeout())
    }

    /// A group of `size` members whose collectives wait at most `timeout`
    /// for each other.
    ///
    /// # Panics
    /// If `size` is 0.
    pub fn group_with_timeout(size: usize, timeout: Duration) -> Vec<SharedComm> {
        assert!(size > 0, "a group of devices needs at least one member");
        let group = Arc::new(Group {
            size,
            timeout,
            state: Mutex::new(State {
                generation: 0,
                arrived: vec![false; size],
                count: 0,
                calls: vec![None; size],
                entered: Ok(Vec::new()),
                exit_generation: 0,
                exited: vec![false; size],
                exit_count: 0,
                exit_failure: None,
                failure: None,
            }),
            wake: Condvar::new(),
        });
        (0..size)
            .map(|rank| SharedComm {
                rank,
                group: group.clone(),
            })
            .collect()
    }

    /// How long a collective waits for the other ranks.
    pub fn timeout(&self) -> Duration {
        self.group.timeout
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // No code of this file panics while it holds the lock; a poisoned
        // lock still holds a consistent state.
        self.group
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn error(&self, op: CommOp, kind: CommErrorKind) -> CommError {
        CommError {
            rank: self.rank,
            op,
            kind,
        }
    }

    /// Arrive at the barrier in progress and wait for every rank; the last
    /// to arrive runs `complete` first. Fails if the group is or becomes
    /// broken, or after the timeout (which breaks it).
    fn barrier<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        op: CommOp,
        complete: impl FnOnce(&mut State),
    ) -> Result<MutexGuard<'a, State>, CommError> {
        let g = &*self.group;
        if let Some(why) = &st.failure {
            return Err(self.error(op, why.clone()));
        }
        st.arrived[self.rank] = true;
        st.count += 1;
        if st.count == g.size {
            complete(&mut st);
            st.count = 0;
            st.arrived.fill(false);
            st.generation += 1;
            g.wake.notify_all();
            return Ok(st);
        }
        let generation = st.generation;
        let deadline = Instant::now().checked_add(g.timeout);
        loop {
            // Completion first: a barrier that completed was passed even
            // if the group broke just after.
            if st.generation != generation {
                return Ok(st);
            }
            if let Some(why) = &st.failure {
                return Err(self.error(op, why.clone()));
            }
            let now = Instant::now();
            match deadline {
                Some(deadline) if now >= deadline => {
                    let kind = CommErrorKind::Timeout {
                        during: op,
                        missing: (0..g.size).filter(|&r| !st.arrived[r]).collect(),
                        waited: g.timeout,
                    };
                    st.failure = Some(kind.clone());
                    g.wake.notify_all();
                    return Err(self.error(op, kind));
                }
                Some(deadline) => {
                    st = g
                        .wake
                        .wait_timeout(st, deadline - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
                None => st = g.wake.wait(st).unwrap_or_else(PoisonError::into_inner),
            }
        }
    }

    /// Step 1: publish this rank's call and memory, wait for every rank's,
    /// and return every rank's memory if the calls agree. On success the
    /// caller must go through the returned [`Exit`] before it returns.
    fn enter(&self, desc: CallDesc, mem: Region) -> Result<(Vec<Region>, Exit<'_>), CommError> {
        let op = desc.op;
        let mut st = self.lock();
        st.calls[self.rank] = Some((desc, mem));
        let st = self.barrier(st, op, |st| {
            let (calls, mems): (Vec<_>, Vec<_>) = st
                .calls
                .iter_mut()
                .map(|c| c.take().expect("every rank published its call"))
                .unzip();
            st.entered = agree(&calls).map(|()| mems);
        })?;
        match &st.entered {
            Ok(mems) => Ok((
                mems.clone(),
                Exit {
                    comm: self,
                    op,
                    passed: false,
                },
            )),
            Err(kind) => Err(self.error(op, kind.clone())),
        }
    }

    fn all_reduce_t<T: Element>(&self, buf: &mut [T], op: ReduceOp) -> Result<(), CommError> {
        let len = buf.len();
        let desc = self.desc::<T>(CommOp::AllReduce, len, Some(op), &[]);
        let (mems, exit) = self.enter(desc, Region::of_mut(buf))?;
        #[cfg(test)]
        tests::panic_here_if_asked();
        if mems.len() > 1 {
            let own = chunk_range::<T>(len, mems.len(), self.rank);
            let mut chunks: Vec<&mut [T]> = mems
                .iter()
                // SAFETY: between enter and exit; chunk `rank` of every
                // buffer is touched by this rank alone (each rank its own
                // chunk), its owner included, which reaches its buffer only
                // through its Region until the exit.
                .map(|m| unsafe { m.slice_mut(own.clone()) })
                .collect();
            fold_in_place(op, &mut chunks);
        }
        exit.pass()
    }

    fn all_gather_t<T: Element>(&self, send: &[T]) -> Result<Vec<T>, CommError> {
        let desc = self.desc::<T>(CommOp::AllGather, send.len(), None, &[]);
        let (mems, exit) = self.enter(desc, Region::of(send))?;
        let mut out = Vec::with_capacity(send.len() * mems.len());
        for m in &mems {
            // SAFETY: between enter and exit; send buffers are only read.
            out.extend_from_slice(unsafe { m.slice(0..send.len()) });
        }
        exit.pass().map(|()| out)
    }

    fn reduce_scatter_t<T: Element>(&self, send: &[T], op: ReduceOp) -> Result<Vec<T>, CommError> {
        let desc = self.desc::<T>(CommOp::ReduceScatter, send.len(), Some(op), &[]);
        let (mems, exit) = self.enter(desc, Region::of(send))?;
        let c = send.len() / mems.len();
        let own = self.rank * c..(self.rank + 1) * c;
        let srcs: Vec<&[T]> = mems
            .iter()
            // SAFETY: between enter and exit; send buffers are only read.
            .map(|m| unsafe { m.slice(own.clone()) })
            .collect();
        let mut out = vec![T::ZERO; c];
        fold(op, &mut out, &srcs);
        exit.pass().map(|()| out)
    }

    fn all_to_all_t<T: Element>(&self, send: &[T]) -> Result<Vec<T>, CommError> {
        let desc = self.desc::<T>(CommOp::AllToAll, send.len(), None, &[]);
        let (mems, exit) = self.enter(desc, Region::of(send))?;
        let c = send.len() / mems.len();
        let own = self.rank * c..(self.rank + 1) * c;
        let mut out = Vec::with_capacity(send.len());
        for m in &mems {
            // SAFETY: between enter and exit; send buffers are only read.
            out.extend_from_slice(unsafe { m.slice(own.clone()) });
        }
        exit.pass().map(|()| out)
    }

    fn permute_t<T: Element>(
        &self,
        send: &[T],
        pairs: &[(usize, usize)],
    ) -> Result<Vec<T>, CommError> {
        let desc = self.desc::<T>(CommOp::Permute, send.len(), None, pairs);
        let (mems, exit) = self.enter(desc, Region::of(send))?;
        let out = match pairs.iter().find(|p| p.1 == self.rank) {
            // SAFETY: between enter and exit; send buffers are only read.
            Some(&(s, _)) => unsafe { mems[s].slice(0..send.len()) }.to_vec(),
            None => vec![T::ZERO; send.len()],
        };
        exit.pass().map(|()| out)
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
}

/// Chunk `k` of `n` of `len` elements: contiguous, in order, their starts
/// on 64-byte multiples (so ranks writing neighbouring chunks do not share
/// cache lines); the last ones may be empty.
fn chunk_range<T>(len: usize, n: usize, k: usize) -> Range<usize> {
    let line = (64 / std::mem::size_of::<T>()).max(1);
    let step = len.div_ceil(n).div_ceil(line) * line;
    len.min(k * step)..len.min((k + 1) * step)
}

/// Step 3: the exit barrier, passed by [`Exit::pass`] or, on an early
/// return or while the thread unwinds, when it is dropped (after aborting
/// the group, where it unwinds, so that no one waits for this rank
/// elsewhere).
struct Exit<'a> {
    comm: &'a SharedComm,
    op: CommOp,
    passed: bool,
}

impl Exit<'_> {
    /// Wait until every rank is done with the others' memory; an error if
    /// the group failed before all of them were (as where a rank panicked
    /// without doing its part).
    fn pass(mut self) -> Result<(), CommError> {
        self.passed = true;
        match self.wait() {
            None => Ok(()),
            Some(kind) => Err(self.comm.error(self.op, kind)),
        }
    }

    /// The barrier; the group's failure, if it failed before the last rank
    /// arrived.
    fn wait(&self) -> Option<CommErrorKind> {
        let comm = self.comm;
        let g = &*comm.group;
        let mut st = comm.lock();
        st.exited[comm.rank] = true;
        st.exit_count += 1;
        if st.exit_count == g.size {
            st.exit_count = 0;
            st.exited.fill(false);
            st.exit_generation += 1;
            st.exit_failure = st.failure.clone();
            g.wake.notify_all();
            return st.exit_failure.clone();
        }
        let generation = st.exit_generation;
        let start = Instant::now();
        let mut said = false;
        while st.exit_generation == generation {
            st = g
                .wake
                .wait_timeout(st, g.timeout)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            if st.exit_generation == generation && !said && start.elapsed() >= g.timeout {
                let missing: Vec<usize> = (0..g.size).filter(|&r| !st.exited[r]).collect();
                eprintln!(
                    "oxla: rank {} cannot return from {} before ranks {missing:?} are done \
                     with its memory; still waiting after {:.3} s",
                    comm.rank,
                    self.op,
                    start.elapsed().as_secs_f64()
                );
                said = true;
            }
        }
        // No later exit barrier can complete before this rank reads it.
        st.exit_failure.clone()
    }
}

impl Drop for Exit<'_> {
    fn drop(&mut self) {
        if self.passed {
            return;
        }
        if std::thread::panicking() {
            let comm = self.comm;
            comm.abort(&format!("rank {} panicked in {}", comm.rank, self.op));
        }
        self.wait();
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::cell::Cell;

    thread_local! {
        static PANIC: Cell<bool> = const { Cell::new(false) };
    }

    /// Make this thread's next `all_reduce` panic after the enter barrier,
    /// where the others may read its buffer.
    pub(in super::super) fn panic_in_next_all_reduce() {
        PANIC.with(|p| p.set(true));
    }

    pub(super) fn panic_here_if_asked() {
        if PANIC.with(|p| p.replace(false)) {
            panic!("asked to panic inside all_reduce");
        }
    }
}

impl Drop for SharedComm {
    fn drop(&mut self) {
        let why = if std::thread::panicking() {
            format!("rank {} panicked", self.rank)
        } else {
            format!("rank {} left the group (its member was dropped)", self.rank)
        };
        self.abort(&why);
    }
}

impl Communicator for SharedComm {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.group.size
    }

    fn all_reduce(&self, buf: &mut Buffer, op: ReduceOp) -> Result<(), CommError> {
        each_buffer!(buf, v => self.all_reduce_t(v, op))
    }

    fn all_gather(&self, send: &Buffer) -> Result<Buffer, CommError> {
        each_buffer!(send, v => self.all_gather_t(v).map(Element::wrap))
    }

    fn reduce_scatter(&self, send: &Buffer, op: ReduceOp) -> Result<Buffer, CommError> {
        each_buffer!(send, v => self.reduce_scatter_t(v, op).map(Element::wrap))
    }

    fn all_to_all(&self, send: &Buffer) -> Result<Buffer, CommError> {
        each_buffer!(send, v => self.all_to_all_t(v).map(Element::wrap))
    }

    fn permute(&self, send: &Buffer, pairs: &[(usize, usize)]) -> Result<Buffer, CommError> {
        each_buffer!(send, v => self.permute_t(v, pairs).map(Element::wrap))
    }

    fn abort(&self, why: &str) {
        let mut st = self.lock();
        if st.failure.is_none() {
            st.failure = Some(CommErrorKind::Aborted {
                by: self.rank,
                reason: why.to_string(),
            });
        }
        self.group.wake.notify_all();
    }
}

/// A rank's buffer as it published it: where, and how many elements (of
/// the type every rank agreed on at the enter barrier). The only raw
/// memory of this file; `slice` and `slice_mut` are its only accesses.
#[derive(Clone, Copy, Debug)]
struct Region {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: a Region is an address that other ranks' threads read through
// only between the enter and exit barriers of the call that published it,
// under the rules of `slice` and `slice_mut`.
unsafe impl Send for Region {}

impl Region {
    /// A buffer only read by the collective.
    fn of<T>(v: &[T]) -> Region {
        Region {
            ptr: v.as_ptr().cast_mut().cast(),
            len: v.len(),
        }
    }

    /// A buffer also written by the collective: after this, its owner
    /// accesses it only through the Region until the exit barrier.
    fn of_mut<T>(v: &mut [T]) -> Region {
        Region {
            ptr: v.as_mut_ptr().cast(),
            len: v.len(),
        }
    }

    /// Elements `range` of the buffer, to read.
    ///
    /// # Safety
    /// The caller is between the enter and exit barriers of the collective
    /// that published this Region (so the owner is in the collective too,
    /// and cannot return, free or touch its buffer other than as this file
    /// does before everyone has passed the exit barrier); `T` is the type
    /// the ranks agreed on; and no rank writes these elements while the
    /// slice lives.
    unsafe fn slice<'a, T: Element>(&self, range: Range<usize>) -> &'a [T] {
        assert!(range.start <= range.end && range.end <= self.len);
        std::slice::from_raw_parts(self.ptr.cast::<T>().add(range.start), range.len())
    }

    /// Elements `range` of the buffer, to write.
    ///
    /// # Safety
    /// As for `slice`; moreover no one else reads or writes these elements
    /// while the slice lives.
    #[allow(clippy::mut_from_ref)]
    unsafe fn slice_mut<'a, T: Element>(&self, range: Range<usize>) -> &'a mut [T] {
        assert!(range.start <= range.end && range.end <= self.len);
        std::slice::from_raw_parts_mut(self.ptr.cast::<T>().add(range.start), range.len())
    }
}
