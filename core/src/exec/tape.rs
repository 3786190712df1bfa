//! Runtime state of reverse sweeps: the tape peak counter and the tape limit.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

thread_local! {
    /// The most bytes of loop carries a reverse sweep of the reference
    /// interpreter has held at once on this thread.
    pub(crate) static TAPE_PEAK: Cell<usize> = const { Cell::new(0) };
}

/// The largest tape (bytes of stored carries) a reverse sweep evaluated by
/// the reference interpreter on this thread has held since the last reset.
pub fn tape_peak_bytes() -> usize {
    TAPE_PEAK.with(Cell::get)
}

/// Record a reverse sweep's largest tape (generated scalar code calls this).
pub fn note_tape_bytes(bytes: usize) {
    TAPE_PEAK.with(|p| p.set(p.get().max(bytes)));
}

/// Reset `tape_peak_bytes`.
pub fn reset_tape_peak() {
    TAPE_PEAK.with(|p| p.set(0));
}

/// The environment variable that sets the tape limit, in bytes (read on
/// first use; `set_tape_limit` overrides it).
pub const TAPE_LIMIT_ENV: &str = "OXLA_TAPE_LIMIT_BYTES";

/// The process-wide tape limit in bytes; 0 until first read or set.
static TAPE_LIMIT: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// A limit for this thread only (`with_tape_limit`).
    static TAPE_LIMIT_HERE: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The most bytes of carries a reverse sweep may keep on its tape before it
/// fails: `with_tape_limit`'s on this thread, else the last
/// `set_tape_limit`, else `OXLA_TAPE_LIMIT_BYTES`, else a quarter of the
/// machine's physical memory (`MemTotal` of `/proc/meminfo`; 4 GiB where
/// that cannot be read).
///
/// Why a limit: a `while` loop that never ends spins in the forward pass
/// (as JAX's `while_loop` does), but under reverse mode each step also
/// keeps its carries, so the tape grew until the allocator aborted the
/// process (SIGABRT at 2.1 GB, no message). With the limit the sweep fails
/// with an error naming the function and the loop instead.
pub fn tape_limit() -> usize {
    if let Some(l) = TAPE_LIMIT_HERE.with(Cell::get) {
        return l;
    }
    let set = TAPE_LIMIT.load(Ordering::Relaxed);
    if set > 0 {
        return set;
    }
    let l = std::env::var(TAPE_LIMIT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|l| *l > 0)
        .unwrap_or_else(default_tape_limit);
    TAPE_LIMIT.store(l, Ordering::Relaxed);
    l
}

/// Set the tape limit for every thread from now on (`0` means 1 byte:
/// every reverse sweep that keeps anything fails; `usize::MAX` means no
/// limit).
pub fn set_tape_limit(bytes: usize) {
    TAPE_LIMIT.store(bytes.max(1), Ordering::Relaxed);
}

/// Run `f` with the tape limit `bytes` on this thread (where loop steps
/// run: the host drives every loop), restoring the previous one after,
/// also when `f` panics.
pub fn with_tape_limit<R>(bytes: usize, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<usize>);
    impl Drop for Restore {
        fn drop(&mut self) {
            TAPE_LIMIT_HERE.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(TAPE_LIMIT_HERE.with(|c| c.replace(Some(bytes.max(1)))));
    f()
}

/// A quarter of the physical memory, or 4 GiB where it is unknown.
fn default_tape_limit() -> usize {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        let line = m.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        usize::try_from(kib.saturating_mul(1024)).ok()
    });
    match total {
        Some(t) if t > 0 => t / 4,
        _ => (4u64 << 30).min(usize::MAX as u64) as usize,
    }
}

/// The error of a reverse sweep whose tape would pass the limit: `what`
/// names the function and the loop, `bytes` the tape it would keep after
/// `steps` forward steps.
pub fn tape_limit_error(what: &str, bytes: usize, steps: u64, limit: usize) -> String {
    format!(
        "{what}: the reverse sweep would keep {bytes} bytes of loop carries after {steps} steps, \
         over the tape limit of {limit} bytes. A loop that never ends spins in the forward pass \
         (as JAX's does), but under reverse mode each step is kept until the process runs out \
         of memory: check that the loop ends. If it does, keep fewer steps with \
         `oxla::checkpoint(..)` or `oxla::checkpoint_every(k, ..)` around its range or \
         condition, or raise the limit (`{TAPE_LIMIT_ENV}`, \
         `oxla::set_tape_limit`)"
    )
}
