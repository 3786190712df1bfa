//! Communicators: the run-time side of the collectives (`psum`, `pmax`,
//! `pmin`, `all_gather`, `psum_scatter`, `all_to_all`, `ppermute`) that a
//! `pmap`'s per-device programs call between kernels.
//!
//! A [`Communicator`] is one member (one *rank*) of a group of `size`
//! devices along a mapped axis. Every rank calls the same collectives in
//! the same order with matching arguments; each call returns when every
//! rank's part is done. [`SharedComm`] is the group of CPU devices of one
//! process (one thread per device, shared memory); an MPI communicator is
//! meant to implement the same trait with the same semantics.
//!
//! # Semantics (JAX's)
//!
//! - **Reductions** ([`ReduceOp`]) are the elementwise left fold in rank
//!   order, `((x_0 ∘ x_1) ∘ x_2) ∘ …`, in the buffer's own element type, so
//!   the result is the same bits on every rank and in every run, whatever
//!   the timing. A sum of `f32` adds in `f32`; `f16`/`bf16` add through
//!   `f32` and round back after each addition (which is their correctly
//!   rounded addition: `f32` has more than twice their precision, so the
//!   double rounding is harmless). Integer sums wrap, as XLA's do. Max and
//!   min are JAX's `maximum`/`minimum`, defined once in
//!   [`BinaryOp::eval`](crate::ops::elementwise::BinaryOp::eval): NaN if
//!   either operand is NaN, and `max(+0, -0) = +0`, `min(+0, -0) = -0`.
//!   On `bool` buffers the sum and the max are OR and the min is AND.
//! - **Failures never hang.** Every wait for other ranks ends after a
//!   timeout ([`default_timeout`], `OXLA_COLLECTIVE_TIMEOUT`) in a
//!   [`CommError`] naming the collective and the ranks that did not arrive.
//!   A rank that fails can [`abort`](Communicator::abort) the group; the
//!   others' pending and later calls then fail at once. Ranks that call
//!   different collectives, or the same one with different lengths, types,
//!   reductions or pairs, all get a [`CommErrorKind::Mismatch`] saying what
//!   differs.
//! - **After an error** from a timeout or an abort the group is broken:
//!   every later call on every member fails. A mismatch or an invalid
//!   argument is seen identically by every rank (it is decided on the
//!   descriptions all of them published), so the group stays usable; an
//!   implementation that cannot guarantee that (MPI) may break the group
//!   instead. The contents of an `all_reduce` buffer are unspecified after
//!   an error.

#[cfg(feature = "mpi")]
pub mod mpi;
mod shared;
#[cfg(test)]
mod tests;

pub use shared::SharedComm;

use crate::buffer::Buffer;
use crate::dtype::DType;
use crate::ops::elementwise::BinaryOp;
use half::{bf16, f16};
use std::fmt;
use std::time::Duration;

/// The elementwise reduction of `all_reduce` and `reduce_scatter`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// `psum`: addition (OR on `bool`).
    Sum,
    /// `pmax`: JAX's `maximum` (OR on `bool`).
    Max,
    /// `pmin`: JAX's `minimum` (AND on `bool`).
    Min,
}

impl ReduceOp {
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        }
    }
}

impl fmt::Display for ReduceOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which collective a call is (in errors and call descriptions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CommOp {
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    Permute,
}

impl CommOp {
    pub fn name(self) -> &'static str {
        match self {
            CommOp::AllReduce => "all_reduce",
            CommOp::AllGather => "all_gather",
            CommOp::ReduceScatter => "reduce_scatter",
            CommOp::AllToAll => "all_to_all",
            CommOp::Permute => "permute",
        }
    }
}

impl fmt::Display for CommOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One member of a group of devices along a mapped axis.
///
/// Every rank of the group calls the same collectives in the same order,
/// with the same length, element type, reduction and pairs (what differs
/// is an error on every rank, see [`CommErrorKind::Mismatch`]). A call
/// blocks until every rank has made it, or fails: after the group's
/// timeout, or at once when a member aborts the group.
pub trait Communicator: Send + Sync {
    /// This device's index along the axis, in `0..size()`.
    fn rank(&self) -> usize;

    /// The number of devices along the axis.
    fn size(&self) -> usize;

    /// Replace every rank's `buf`, in place, by the elementwise reduction
    /// of all ranks' buffers (the left fold in rank order, see the module
    /// docs). All buffers have the same length and element type.
    fn all_reduce(&self, buf: &mut Buffer, op: ReduceOp) -> Result<(), CommError>;

    /// The ranks' `send` buffers (all of the same length and type)
    /// concatenated in rank order: `size() · send.len()` elements.
    fn all_gather(&self, send: &Buffer) -> Result<Buffer, CommError>;

    /// `send` holds `size()` chunks of `send.len() / size()` elements; rank
    /// `r` gets chunk `r` of the elementwise reduction over the ranks.
    fn reduce_scatter(&self, send: &Buffer, op: ReduceOp) -> Result<Buffer, CommError>;

    /// `send` holds `size()` chunks of `send.len() / size()` elements;
    /// chunk `j` goes to rank `j`. The result's chunk `j` came from rank `j`.
    fn all_to_all(&self, send: &Buffer) -> Result<Buffer, CommError>;

    /// `pairs` are `(source, destination)` ranks, each rank at most once as
    /// a source and at most once as a destination (an error otherwise).
    /// The result is the `send` of the rank whose pair names this rank as
    /// its destination, or zeros of `send`'s length and type if none does.
    fn permute(&self, send: &Buffer, pairs: &[(usize, usize)]) -> Result<Buffer, CommError>;

    /// Break the group: every pending and later call of every member fails
    /// with [`CommErrorKind::Aborted`] naming this rank and `why`. For a
    /// rank that fails outside the collectives, so that the others do not
    /// wait for it until the timeout. The first abort (or timeout) wins;
    /// later ones are ignored.
    fn abort(&self, why: &str);
}

/// The environment variable that sets the collectives' timeout, in
/// seconds (a positive number; fractions allowed).
pub const TIMEOUT_ENV: &str = "OXLA_COLLECTIVE_TIMEOUT";

/// The timeout when `OXLA_COLLECTIVE_TIMEOUT` is unset: 300 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// How long a collective waits for the other ranks: `OXLA_COLLECTIVE_TIMEOUT`
/// seconds, or [`DEFAULT_TIMEOUT`] where it is unset or not a positive
/// number.
pub fn default_timeout() -> Duration {
    parse_timeout(std::env::var(TIMEOUT_ENV).ok().as_deref())
}

/// The timeout a value of `OXLA_COLLECTIVE_TIMEOUT` sets.
fn parse_timeout(seconds: Option<&str>) -> Duration {
    seconds
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .unwrap_or(DEFAULT_TIMEOUT)
}

/// A failed collective, as seen by one rank.
#[derive(Clone, Debug, PartialEq)]
pub struct CommError {
    /// The rank that reports it.
    pub rank: usize,
    /// The collective it was calling.
    pub op: CommOp,
    pub kind: CommErrorKind,
}

/// What went wrong.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CommErrorKind {
    /// `missing` did not arrive in `during` within `waited`; the group is
    /// broken. (`during` is the collective that timed out, which a rank
    /// that calls another collective later also reports.)
    Timeout {
        during: CommOp,
        missing: Vec<usize>,
        waited: Duration,
    },
    /// Rank `by` aborted the group (it failed, panicked, or its member was
    /// dropped); the group is broken.
    Aborted { by: usize, reason: String },
    /// The ranks' calls differ (collective, element type, length,
    /// reduction or pairs); `detail` lists them.
    Mismatch { detail: String },
    /// The call itself is invalid (pairs that are not a partial
    /// permutation of the ranks, a length not divisible by the size).
    Invalid { detail: String },
}

impl fmt::Display for CommError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} on rank {}: ", self.op, self.rank)?;
        match &self.kind {
            CommErrorKind::Timeout {
                during,
                missing,
                waited,
            } => write!(
                f,
                "{} {} did not arrive in {during} within {:.3} s (the collective timeout; \
                 {TIMEOUT_ENV} sets it, in seconds)",
                if missing.len() == 1 { "rank" } else { "ranks" },
                list(missing),
                waited.as_secs_f64()
            ),
            CommErrorKind::Aborted { by, reason } => {
                write!(f, "the group was aborted by rank {by}: {reason}")
            }
            CommErrorKind::Mismatch { detail } => {
                write!(f, "the ranks' calls do not match: {detail}")
            }
            CommErrorKind::Invalid { detail } => f.write_str(detail),
        }
    }
}

impl std::error::Error for CommError {}

/// `0, 2, 3`.
fn list(ranks: &[usize]) -> String {
    ranks
        .iter()
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a rank passed to a collective: every rank publishes its own, and
/// the call goes ahead only where all of them are equal (see
/// [`agree`]).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CallDesc {
    pub op: CommOp,
    pub dtype: DType,
    pub len: usize,
    pub reduce: Option<ReduceOp>,
    pub pairs: Vec<(usize, usize)>,
}

impl fmt::Display for CallDesc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({}[{}]", self.op, self.dtype, self.len)?;
        if let Some(r) = self.reduce {
            write!(f, ", {r}")?;
        }
        if self.op == CommOp::Permute {
            write!(f, ", {:?}", self.pairs)?;
        }
        f.write_str(")")
    }
}

/// Whether every rank's call (in rank order) is the same and valid for a
/// group of `calls.len()` ranks. Deterministic in `calls`, so every rank
/// that decides it on the same descriptions decides the same.
pub(crate) fn agree(calls: &[CallDesc]) -> Result<(), CommErrorKind> {
    let first = &calls[0];
    if calls.iter().any(|c| c != first) {
        let mut differ = Vec::new();
        let mut field = |name: &'static str, f: &dyn Fn(&CallDesc) -> String| {
            if calls.iter().any(|c| f(c) != f(first)) {
                differ.push(name);
            }
        };
        field("collective", &|c| c.op.to_string());
        field("element type", &|c| c.dtype.to_string());
        field("length", &|c| c.len.to_string());
        field("reduction", &|c| format!("{:?}", c.reduce));
        field("pairs", &|c| format!("{:?}", c.pairs));
        // The distinct calls, each with the ranks that made it.
        let mut groups: Vec<(&CallDesc, Vec<usize>)> = Vec::new();
        for (r, c) in calls.iter().enumerate() {
            match groups.iter_mut().find(|(d, _)| *d == c) {
                Some((_, ranks)) => ranks.push(r),
                None => groups.push((c, vec![r])),
            }
        }
        let calls = groups
            .iter()
            .map(|(c, ranks)| {
                let who = if ranks.len() == 1 { "rank" } else { "ranks" };
                format!("{who} {} called {c}", list(ranks))
            })
            .collect::<Vec<_>>()
            .join("; ");
        return Err(CommErrorKind::Mismatch {
            detail: format!("they differ in {}: {calls}", differ.join(" and ")),
        });
    }
    let size = calls.len();
    let invalid = |detail: String| Err(CommErrorKind::Invalid { detail });
    match first.op {
        CommOp::ReduceScatter | CommOp::AllToAll if !first.len.is_multiple_of(size) => {
            invalid(format!(
                "the length {} is not a multiple of the group's size {size}",
                first.len
            ))
        }
        CommOp::Permute => check_pairs(&first.pairs, size).or_else(invalid),
        _ => Ok(()),
    }
}

/// Whether `pairs` (source, destination) are a partial permutation of
/// `0..size`: every rank in range, at most once as a source and at most
/// once as a destination.
pub(crate) fn check_pairs(pairs: &[(usize, usize)], size: usize) -> Result<(), String> {
    let mut source = vec![false; size];
    let mut dest = vec![false; size];
    for &(s, d) in pairs {
        if s >= size || d >= size {
            return Err(format!(
                "the pair ({s}, {d}) names a rank outside the group of {size} in {pairs:?}"
            ));
        }
        if std::mem::replace(&mut source[s], true) {
            return Err(format!("source {s} appears twice in {pairs:?}"));
        }
        if std::mem::replace(&mut dest[d], true) {
            return Err(format!("destination {d} appears twice in {pairs:?}"));
        }
    }
    Ok(())
}

/// An element type of [`Buffer`], with the reductions on it.
pub(crate) trait Element: Copy + Send + Sync + 'static {
    const DTYPE: DType;
    const ZERO: Self;
    fn sum(a: Self, b: Self) -> Self;
    fn max(a: Self, b: Self) -> Self;
    fn min(a: Self, b: Self) -> Self;
    fn wrap(v: Vec<Self>) -> Buffer;
}

macro_rules! float_element {
    ($t:ty, $variant:ident, $zero:expr, $sum:expr, $wide:expr, $narrow:expr) => {
        impl Element for $t {
            const DTYPE: DType = DType::$variant;
            const ZERO: Self = $zero;
            #[inline(always)]
            fn sum(a: Self, b: Self) -> Self {
                $sum(a, b)
            }
            // JAX's `maximum`/`minimum` as the interpreter evaluates them (in
            // f64, which is exact for every narrower float: the result is
            // one of the operands, or ±0).
            #[inline(always)]
            fn max(a: Self, b: Self) -> Self {
                $narrow(BinaryOp::Max.eval($wide(a), $wide(b)))
            }
            #[inline(always)]
            fn min(a: Self, b: Self) -> Self {
                $narrow(BinaryOp::Min.eval($wide(a), $wide(b)))
            }
            fn wrap(v: Vec<Self>) -> Buffer {
                Buffer::$variant(v)
            }
        }
    };
}

float_element!(
    f32,
    F32,
    0.0,
    |a: f32, b: f32| a + b,
    |a: f32| a as f64,
    |x: f64| x as f32
);
float_element!(f64, F64, 0.0, |a: f64, b: f64| a + b, |a: f64| a, |x| x);
// Half types add in f32 and round back after every addition (as kernels
// compute them); this is their correctly rounded addition.
float_element!(
    f16,
    F16,
    f16::ZERO,
    |a: f16, b: f16| f16::from_f32(a.to_f32() + b.to_f32()),
    |a: f16| a.to_f64(),
    f16::from_f64
);
float_element!(
    bf16,
    BF16,
    bf16::ZERO,
    |a: bf16, b: bf16| bf16::from_f32(a.to_f32() + b.to_f32()),
    |a: bf16| a.to_f64(),
    bf16::from_f64
);

macro_rules! int_element {
    ($t:ty, $variant:ident) => {
        impl Element for $t {
            const DTYPE: DType = DType::$variant;
            const ZERO: Self = 0;
            #[inline(always)]
            fn sum(a: Self, b: Self) -> Self {
                a.wrapping_add(b)
            }
            #[inline(always)]
            fn max(a: Self, b: Self) -> Self {
                Ord::max(a, b)
            }
            #[inline(always)]
            fn min(a: Self, b: Self) -> Self {
                Ord::min(a, b)
            }
            fn wrap(v: Vec<Self>) -> Buffer {
                Buffer::$variant(v)
            }
        }
    };
}

int_element!(i32, I32);
int_element!(i64, I64);

/// `bool`, one byte 0 or 1.
impl Element for u8 {
    const DTYPE: DType = DType::Bool;
    const ZERO: Self = 0;
    #[inline(always)]
    fn sum(a: Self, b: Self) -> Self {
        a | b
    }
    #[inline(always)]
    fn max(a: Self, b: Self) -> Self {
        a | b
    }
    #[inline(always)]
    fn min(a: Self, b: Self) -> Self {
        a & b
    }
    fn wrap(v: Vec<Self>) -> Buffer {
        Buffer::Bool(v)
    }
}

/// Elements per tile of the folds: the accumulator (up to 16 KiB) stays in
/// the L1 cache while every input streams through it once.
const TILE: usize = 2048;

/// `dst[i] = ((srcs[0][i] ∘ srcs[1][i]) ∘ srcs[2][i]) ∘ …`: the left fold
/// of the inputs in order, each of `dst`'s length.
pub(crate) fn fold<T: Element>(op: ReduceOp, dst: &mut [T], srcs: &[&[T]]) {
    match op {
        ReduceOp::Sum => fold_with(dst, srcs, T::sum),
        ReduceOp::Max => fold_with(dst, srcs, T::max),
        ReduceOp::Min => fold_with(dst, srcs, T::min),
    }
}

/// The left fold of `bufs` in order, written back to every one of them:
/// an all-reduce of slices of equal length, in place.
pub(crate) fn fold_in_place<T: Element>(op: ReduceOp, bufs: &mut [&mut [T]]) {
    match op {
        ReduceOp::Sum => fold_in_place_with(bufs, T::sum),
        ReduceOp::Max => fold_in_place_with(bufs, T::max),
        ReduceOp::Min => fold_in_place_with(bufs, T::min),
    }
}

/// `acc[i] = f(acc[i], x[i])`.
#[inline(always)]
fn accumulate<T: Element>(acc: &mut [T], x: &[T], f: impl Fn(T, T) -> T) {
    for (a, &b) in acc.iter_mut().zip(x) {
        *a = f(*a, b);
    }
}

fn fold_with<T: Element>(dst: &mut [T], srcs: &[&[T]], f: impl Fn(T, T) -> T + Copy) {
    let mut tile = [T::ZERO; TILE];
    let mut start = 0;
    while start < dst.len() {
        let end = dst.len().min(start + TILE);
        let acc = &mut tile[..end - start];
        acc.copy_from_slice(&srcs[0][start..end]);
        for src in &srcs[1..] {
            accumulate(acc, &src[start..end], f);
        }
        dst[start..end].copy_from_slice(acc);
        start = end;
    }
}

fn fold_in_place_with<T: Element>(bufs: &mut [&mut [T]], f: impl Fn(T, T) -> T + Copy) {
    let len = bufs[0].len();
    let mut tile = [T::ZERO; TILE];
    let mut start = 0;
    while start < len {
        let end = len.min(start + TILE);
        let acc = &mut tile[..end - start];
        // Every input's tile is read before any is written.
        acc.copy_from_slice(&bufs[0][start..end]);
        for src in &bufs[1..] {
            accumulate(acc, &src[start..end], f);
        }
        for dst in bufs.iter_mut() {
            dst[start..end].copy_from_slice(acc);
        }
        start = end;
    }
}
