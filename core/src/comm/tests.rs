//! The shared-memory group against plain sequential computations of the
//! same collectives, bit for bit, and its failures.

use super::*;
use crate::ops::elementwise::BinaryOp;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

const DTYPES: [DType; 7] = [
    DType::F32,
    DType::F64,
    DType::F16,
    DType::BF16,
    DType::I32,
    DType::I64,
    DType::Bool,
];
const OPS: [ReduceOp; 3] = [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min];
/// Empty, fewer elements than ranks, a few, and several tiles of the fold
/// per rank with chunks that do not fall on tile boundaries.
const LENS: [usize; 4] = [0, 1, 7, 20_011];
const LONG: Duration = Duration::from_secs(60);

/// splitmix64: a small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Random values with every mantissa bit random, both signs and exponents
/// over a range of 2^-4..2^4 (so the order of additions shows in the
/// rounding); full-range integers (so sums wrap).
fn random(dtype: DType, len: usize, rng: &mut Rng) -> Buffer {
    let mut bits = || rng.next();
    let exp = |b: u64| (b >> 40) % 9; // 0..=8, around the bias
    match dtype {
        DType::F32 => Buffer::F32(
            (0..len)
                .map(|_| {
                    let b = bits();
                    f32::from_bits(
                        ((b >> 63) as u32) << 31
                            | ((123 + exp(b)) as u32) << 23
                            | (b as u32 & 0x7F_FFFF),
                    )
                })
                .collect(),
        ),
        DType::F64 => Buffer::F64(
            (0..len)
                .map(|_| {
                    let b = bits();
                    let m = bits() & ((1 << 52) - 1);
                    f64::from_bits((b >> 63) << 63 | (1019 + exp(b)) << 52 | m)
                })
                .collect(),
        ),
        DType::F16 => Buffer::F16(
            (0..len)
                .map(|_| {
                    let b = bits();
                    f16::from_bits(
                        ((b >> 63) as u16) << 15
                            | ((11 + exp(b)) as u16) << 10
                            | (b as u16 & 0x3FF),
                    )
                })
                .collect(),
        ),
        DType::BF16 => Buffer::BF16(
            (0..len)
                .map(|_| {
                    let b = bits();
                    bf16::from_bits(
                        ((b >> 63) as u16) << 15 | ((123 + exp(b)) as u16) << 7 | (b as u16 & 0x7F),
                    )
                })
                .collect(),
        ),
        DType::I32 => Buffer::I32((0..len).map(|_| bits() as i32).collect()),
        DType::I64 => Buffer::I64((0..len).map(|_| bits() as i64).collect()),
        DType::Bool => Buffer::Bool((0..len).map(|_| (bits() & 1) as u8).collect()),
    }
}

/// The bits of every element, to compare bit for bit (NaNs, signed zeros).
fn bits(b: &Buffer) -> Vec<u64> {
    match b {
        Buffer::F16(v) => v.iter().map(|x| x.to_bits() as u64).collect(),
        Buffer::BF16(v) => v.iter().map(|x| x.to_bits() as u64).collect(),
        Buffer::F32(v) => v.iter().map(|x| x.to_bits() as u64).collect(),
        Buffer::F64(v) => v.iter().map(|x| x.to_bits()).collect(),
        Buffer::Bool(v) => v.iter().map(|&x| x as u64).collect(),
        Buffer::I32(v) => v.iter().map(|&x| x as u32 as u64).collect(),
        Buffer::I64(v) => v.iter().map(|&x| x as u64).collect(),
    }
}

fn assert_bits_eq(got: &Buffer, want: &Buffer, what: &str) {
    assert_eq!(got.dtype(), want.dtype(), "{what}: element type");
    assert_eq!(got.len(), want.len(), "{what}: length");
    let (g, w) = (bits(got), bits(want));
    if let Some(i) = (0..g.len()).find(|&i| g[i] != w[i]) {
        panic!(
            "{what}: element {i} is {} ({:#x}), the sequential computation gives {} ({:#x})",
            got.get(i),
            g[i],
            want.get(i),
            w[i]
        );
    }
}

fn jmax(a: f64, b: f64) -> f64 {
    BinaryOp::Max.eval(a, b)
}

fn jmin(a: f64, b: f64) -> f64 {
    BinaryOp::Min.eval(a, b)
}

/// `acc ∘ x`, elementwise, in the buffers' type, written out per type.
fn combine(op: ReduceOp, acc: &mut Buffer, x: &Buffer) {
    use ReduceOp::*;
    match (acc, x) {
        (Buffer::F32(a), Buffer::F32(b)) => {
            for (a, &b) in a.iter_mut().zip(b) {
                *a = match op {
                    Sum => *a + b,
                    Max => jmax(*a as f64, b as f64) as f32,
                    Min => jmin(*a as f64, b as f64) as f32,
                }
            }
        }
        (Buffer::F64(a), Buffer::F64(b)) => {
            for (a, &b) in a.iter_mut().zip(b) {
                *a = match op {
                    Sum => *a + b,
                    Max => jmax(*a, b),
                    Min => jmin(*a, b),
                }
            }
        }
        (Buffer::F16(a), Buffer::F16(b)) => {
            for (a, &b) in a.iter_mut().zip(b) {
                *a = match op {
                    Sum => f16::from_f32(a.to_f32() + b.to_f32()),
                    Max => f16::from_f64(jmax(a.to_f64(), b.to_f64())),
                    Min => f16::from_f64(jmin(a.to_f64(), b.to_f64())),
                }
            }
        }
        (Buffer::BF16(a), Buffer::BF16(b)) => {
            for (a, &b) in a.iter_mut().zip(b) {
                *a = match op {
                    Sum => bf16::from_f32(a.to_f32() + b.to_f32()),
                    Max => bf16::from_f64(jmax(a.to_f64(), b.to_f64())),
                    Min => bf16::from_f64(jmin(a.to_f64(), b.to_f64())),
                }
            }
        }
        (Buffer::I32(a), Buffer::I32(b)) => {
            for (a, &b) in a.iter_mut().zip(b) {
                *a = match op {
                    Sum => a.wrapping_add(b),
                    Max => (*a).max(b),
                    Min => (*a).min(b),
                }
            }
        }
        (Buffer::I64(a), Buffer::I64(b)) => {
            for (a, &b) in a.iter_mut().zip(b) {
                *a = match op {
                    Sum => a.wrapping_add(b),
                    Max => (*a).max(b),
                    Min => (*a).min(b),
                }
            }
        }
        (Buffer::Bool(a), Buffer::Bool(b)) => {
            for (a, &b) in a.iter_mut().zip(b) {
                *a = match op {
                    Sum | Max => (*a != 0 || b != 0) as u8,
                    Min => (*a != 0 && b != 0) as u8,
                }
            }
        }
        _ => panic!("mixed element types"),
    }
}

/// The left fold `((x_0 ∘ x_1) ∘ x_2) ∘ …`, one rank after the other.
fn fold_ref(op: ReduceOp, xs: &[Buffer]) -> Buffer {
    let mut acc = xs[0].clone();
    for x in &xs[1..] {
        combine(op, &mut acc, x);
    }
    acc
}

macro_rules! each {
    ($buf:expr, $v:ident => $e:expr) => {
        match $buf {
            Buffer::F16($v) => Buffer::F16($e),
            Buffer::BF16($v) => Buffer::BF16($e),
            Buffer::F32($v) => Buffer::F32($e),
            Buffer::F64($v) => Buffer::F64($e),
            Buffer::Bool($v) => Buffer::Bool($e),
            Buffer::I32($v) => Buffer::I32($e),
            Buffer::I64($v) => Buffer::I64($e),
        }
    };
}

/// Elements `range` of `b`.
fn part(b: &Buffer, range: std::ops::Range<usize>) -> Buffer {
    each!(b, v => v[range].to_vec())
}

/// The buffers one after the other.
fn concat(parts: &[Buffer]) -> Buffer {
    let mut out = parts[0].clone();
    for p in &parts[1..] {
        match (&mut out, p) {
            (Buffer::F16(a), Buffer::F16(b)) => a.extend_from_slice(b),
            (Buffer::BF16(a), Buffer::BF16(b)) => a.extend_from_slice(b),
            (Buffer::F32(a), Buffer::F32(b)) => a.extend_from_slice(b),
            (Buffer::F64(a), Buffer::F64(b)) => a.extend_from_slice(b),
            (Buffer::Bool(a), Buffer::Bool(b)) => a.extend_from_slice(b),
            (Buffer::I32(a), Buffer::I32(b)) => a.extend_from_slice(b),
            (Buffer::I64(a), Buffer::I64(b)) => a.extend_from_slice(b),
            _ => panic!("mixed element types"),
        }
    }
    out
}

/// Run `f` on every member of a group of `n`, one thread each; the results
/// in rank order.
fn run<R: Send>(n: usize, timeout: Duration, f: impl Fn(&dyn Communicator) -> R + Sync) -> Vec<R> {
    let members = SharedComm::group_with_timeout(n, timeout);
    std::thread::scope(|s| {
        let handles: Vec<_> = members
            .into_iter()
            .map(|m| {
                let f = &f;
                s.spawn(move || f(&m))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// Every rank's random input of `dtype` and `len`.
fn inputs(n: usize, dtype: DType, len: usize, seed: u64) -> Vec<Buffer> {
    let mut rng = Rng(seed);
    (0..n).map(|_| random(dtype, len, &mut rng)).collect()
}

#[test]
fn all_reduce_is_the_sequential_left_fold_bitwise() {
    let mut checked = 0;
    for n in 1..=4 {
        for dtype in DTYPES {
            for op in OPS {
                for len in LENS {
                    let xs = inputs(n, dtype, len, (n * 1000 + len) as u64);
                    let want = fold_ref(op, &xs);
                    // Twice on the same inputs, in one group.
                    let got = run(n, LONG, |c| {
                        let mut a = xs[c.rank()].clone();
                        c.all_reduce(&mut a, op).unwrap();
                        let mut b = xs[c.rank()].clone();
                        c.all_reduce(&mut b, op).unwrap();
                        (a, b)
                    });
                    for (r, (a, b)) in got.iter().enumerate() {
                        let what = format!("all_reduce {op} of {dtype}[{len}] over {n}, rank {r}");
                        assert_bits_eq(a, &want, &what);
                        assert_bits_eq(b, a, &format!("{what}, second run"));
                        checked += 1;
                    }
                }
            }
        }
    }
    assert_eq!(checked, 10 * 7 * 3 * 4);
}

#[test]
fn all_reduce_runs_are_identical_across_groups() {
    for n in [2, 3, 4] {
        let xs = inputs(n, DType::F32, 20_011, 7);
        let once = || {
            run(n, LONG, |c| {
                let mut b = xs[c.rank()].clone();
                c.all_reduce(&mut b, ReduceOp::Sum).unwrap();
                bits(&b)
            })
        };
        let (first, second) = (once(), once());
        assert_eq!(first, second, "two runs over {n} ranks");
        assert!(
            first.iter().all(|b| *b == first[0]),
            "every rank has the same bits"
        );
    }
}

/// The data makes the order of additions show, so the bitwise comparisons
/// above do check the order: folding in reverse rank order differs.
#[test]
fn the_order_of_the_sum_shows_in_the_bits() {
    for n in [3, 4] {
        let xs = inputs(n, DType::F32, 20_011, 11);
        let forward = fold_ref(ReduceOp::Sum, &xs);
        let reversed: Vec<Buffer> = xs.iter().rev().cloned().collect();
        let backward = fold_ref(ReduceOp::Sum, &reversed);
        let differ = bits(&forward)
            .iter()
            .zip(bits(&backward))
            .filter(|(a, b)| **a != *b)
            .count();
        assert!(
            differ > 1000,
            "only {differ} of 20011 sums depend on the order"
        );
        let got = run(n, LONG, |c| {
            let mut b = xs[c.rank()].clone();
            c.all_reduce(&mut b, ReduceOp::Sum).unwrap();
            b
        });
        assert_bits_eq(&got[n - 1], &forward, "left fold");
    }
}

#[test]
fn max_and_min_follow_jax_with_nan_and_signed_zeros() {
    let nan = f64::NAN;
    // Per element: rank 0, rank 1, rank 2; then the max and the min.
    let cases: [([f64; 3], f64, f64); 7] = [
        ([0.0, -0.0, -0.0], 0.0, -0.0),
        ([-0.0, -0.0, 0.0], 0.0, -0.0),
        ([-0.0, -0.0, -0.0], -0.0, -0.0),
        ([nan, 1.0, 2.0], nan, nan),
        ([1.0, nan, -3.0], nan, nan),
        ([1.0, 5.0, nan], nan, nan),
        ([-1.5, 4.0, 2.0], 4.0, -1.5),
    ];
    for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16] {
        let xs: Vec<Buffer> = (0..3)
            .map(|r| Buffer::from_f64(dtype, &cases.map(|c| c.0[r])))
            .collect();
        for (op, k) in [(ReduceOp::Max, 1), (ReduceOp::Min, 2)] {
            let got = run(3, LONG, |c| {
                let mut b = xs[c.rank()].clone();
                c.all_reduce(&mut b, op).unwrap();
                b
            });
            for b in &got {
                for (i, case) in cases.iter().enumerate() {
                    let want = if k == 1 { case.1 } else { case.2 };
                    let v = b.get(i);
                    let what = format!("{op} of {dtype} {:?}: got {v}, want {want}", case.0);
                    if want.is_nan() {
                        assert!(v.is_nan(), "{what}");
                    } else {
                        assert_eq!(v, want, "{what}");
                        assert_eq!(
                            v.is_sign_negative(),
                            want.is_sign_negative(),
                            "{what}: sign"
                        );
                    }
                }
                assert_bits_eq(b, &fold_ref(op, &xs), &format!("{op} of {dtype}"));
            }
        }
    }
}

#[test]
fn all_gather_concatenates_in_rank_order() {
    for n in 1..=4 {
        for dtype in DTYPES {
            for len in LENS {
                let xs = inputs(n, dtype, len, 3 + len as u64);
                let want = concat(&xs);
                let got = run(n, LONG, |c| c.all_gather(&xs[c.rank()]).unwrap());
                for (r, b) in got.iter().enumerate() {
                    assert_bits_eq(
                        b,
                        &want,
                        &format!("all_gather {dtype}[{len}] over {n}, rank {r}"),
                    );
                }
            }
        }
    }
}

#[test]
fn reduce_scatter_gives_each_rank_its_chunk_of_the_fold() {
    for n in 1..=4 {
        for dtype in DTYPES {
            for op in OPS {
                for chunk in [0, 1, 5, 5003] {
                    let xs = inputs(n, dtype, n * chunk, 5 + chunk as u64);
                    let got = run(n, LONG, |c| c.reduce_scatter(&xs[c.rank()], op).unwrap());
                    for (r, b) in got.iter().enumerate() {
                        let parts: Vec<Buffer> = xs
                            .iter()
                            .map(|x| part(x, r * chunk..(r + 1) * chunk))
                            .collect();
                        let what = format!("reduce_scatter {op} {dtype}[{n}·{chunk}], rank {r}");
                        assert_bits_eq(b, &fold_ref(op, &parts), &what);
                    }
                }
            }
        }
    }
}

#[test]
fn all_to_all_transposes_the_chunks() {
    for n in 1..=4 {
        for dtype in DTYPES {
            for chunk in [0, 1, 5, 5003] {
                let xs = inputs(n, dtype, n * chunk, 9 + chunk as u64);
                let got = run(n, LONG, |c| c.all_to_all(&xs[c.rank()]).unwrap());
                for (r, b) in got.iter().enumerate() {
                    // Chunk j of the result: chunk r of rank j's input.
                    let parts: Vec<Buffer> = xs
                        .iter()
                        .map(|x| part(x, r * chunk..(r + 1) * chunk))
                        .collect();
                    let what = format!("all_to_all {dtype}[{n}·{chunk}], rank {r}");
                    assert_bits_eq(b, &concat(&parts), &what);
                }
            }
        }
    }
}

#[test]
fn permute_by_a_cyclic_shift() {
    for n in 1..=4 {
        for dtype in DTYPES {
            let xs = inputs(n, dtype, 1001, 13);
            let pairs: Vec<(usize, usize)> = (0..n).map(|r| (r, (r + 1) % n)).collect();
            let got = run(n, LONG, |c| c.permute(&xs[c.rank()], &pairs).unwrap());
            for (r, b) in got.iter().enumerate() {
                let what = format!("permute {dtype} over {n}, rank {r}");
                assert_bits_eq(b, &xs[(r + n - 1) % n], &what);
            }
        }
    }
}

#[test]
fn permute_partial_gives_zeros_where_no_pair_arrives() {
    let xs = inputs(4, DType::F32, 333, 17);
    let pairs = [(0, 2), (2, 1), (3, 3)];
    let got = run(4, LONG, |c| c.permute(&xs[c.rank()], &pairs).unwrap());
    assert_bits_eq(
        &got[0],
        &Buffer::zeros(DType::F32, 333),
        "rank 0 (no source)",
    );
    assert_bits_eq(&got[1], &xs[2], "rank 1 from rank 2");
    assert_bits_eq(&got[2], &xs[0], "rank 2 from rank 0");
    assert_bits_eq(&got[3], &xs[3], "rank 3 from itself");
    // No pairs at all: zeros everywhere, of the send's type.
    let got = run(3, LONG, |c| {
        c.permute(&Buffer::I64(vec![5; 4]), &[]).unwrap()
    });
    assert!(got.iter().all(|b| *b == Buffer::I64(vec![0; 4])));
}

/// Every rank's error, where every rank must fail.
fn errors<R: std::fmt::Debug>(results: Vec<Result<R, CommError>>) -> Vec<CommError> {
    results
        .into_iter()
        .enumerate()
        .map(|(r, res)| match res {
            Err(e) => {
                assert_eq!(e.rank, r, "{e}");
                e
            }
            Ok(v) => panic!("rank {r} succeeded with {v:?}"),
        })
        .collect()
}

#[test]
fn invalid_pairs_fail_on_every_rank_and_the_group_goes_on() {
    let cases: [(&[(usize, usize)], &str); 3] = [
        (&[(0, 1), (2, 1)], "destination 1 appears twice"),
        (&[(0, 1), (0, 2)], "source 0 appears twice"),
        (&[(0, 3)], "outside the group of 3"),
    ];
    for (pairs, says) in cases {
        let results = run(3, LONG, |c| {
            let bad = c.permute(&Buffer::F32(vec![1.0; 8]), pairs);
            // The same group still works after the error.
            let good = c.permute(&Buffer::F32(vec![c.rank() as f32; 8]), &[(0, 1), (1, 0)]);
            (bad, good)
        });
        let (bad, good): (Vec<_>, Vec<_>) = results.into_iter().unzip();
        for e in errors(bad) {
            assert_eq!(e.op, CommOp::Permute);
            assert!(matches!(e.kind, CommErrorKind::Invalid { .. }), "{e}");
            assert!(e.to_string().contains(says), "{e}");
        }
        let good: Vec<Buffer> = good.into_iter().map(Result::unwrap).collect();
        assert_eq!(good[0], Buffer::F32(vec![1.0; 8]));
        assert_eq!(good[1], Buffer::F32(vec![0.0; 8]));
        assert_eq!(good[2], Buffer::F32(vec![0.0; 8]));
    }
}

#[test]
fn a_length_not_divisible_by_the_size_fails_on_every_rank() {
    let results = run(3, LONG, |c| {
        c.reduce_scatter(&Buffer::F32(vec![1.0; 10]), ReduceOp::Sum)
    });
    for e in errors(results) {
        assert!(matches!(e.kind, CommErrorKind::Invalid { .. }), "{e}");
        assert!(
            e.to_string()
                .contains("not a multiple of the group's size 3"),
            "{e}"
        );
    }
    let results = run(4, LONG, |c| c.all_to_all(&Buffer::I32(vec![1; 6])));
    assert_eq!(errors(results).len(), 4);
}

#[test]
fn mismatched_lengths_fail_on_every_rank_and_the_group_goes_on() {
    let results = run(3, LONG, |c| {
        let len = if c.rank() == 1 { 8 } else { 16 };
        let mut b = Buffer::F32(vec![1.0; len]);
        let bad = c.all_reduce(&mut b, ReduceOp::Sum);
        let mut b = Buffer::F32(vec![1.0; 16]);
        c.all_reduce(&mut b, ReduceOp::Sum).unwrap();
        assert_eq!(b, Buffer::F32(vec![3.0; 16]));
        bad
    });
    for e in errors(results) {
        let CommErrorKind::Mismatch { detail } = &e.kind else {
            panic!("not a mismatch: {e}");
        };
        assert_eq!(
            detail,
            "they differ in length: ranks 0, 2 called all_reduce(f32[16], sum); \
             rank 1 called all_reduce(f32[8], sum)"
        );
    }
}

#[test]
fn mismatched_calls_say_what_differs() {
    // (what rank 2 does differently, what the message names)
    type Call = fn(&dyn Communicator, bool) -> Result<(), CommError>;
    let cases: [(Call, &str); 4] = [
        (
            |c, odd| {
                let mut b = Buffer::F32(vec![1.0; 4]);
                match odd {
                    true => c.all_gather(&b).map(drop),
                    false => c.all_reduce(&mut b, ReduceOp::Sum),
                }
            },
            "they differ in collective and reduction: ranks 0, 1 called all_reduce(f32[4], sum); \
             rank 2 called all_gather(f32[4])",
        ),
        (
            |c, odd| {
                let mut b = match odd {
                    true => Buffer::F64(vec![1.0; 4]),
                    false => Buffer::F32(vec![1.0; 4]),
                };
                c.all_reduce(&mut b, ReduceOp::Sum)
            },
            "they differ in element type",
        ),
        (
            |c, odd| {
                let op = if odd { ReduceOp::Max } else { ReduceOp::Sum };
                c.all_reduce(&mut Buffer::I32(vec![1; 4]), op)
            },
            "rank 2 called all_reduce(i32[4], max)",
        ),
        (
            |c, odd| {
                let pairs: &[(usize, usize)] = if odd { &[(0, 1)] } else { &[(1, 0)] };
                c.permute(&Buffer::F32(vec![1.0; 4]), pairs).map(drop)
            },
            "they differ in pairs",
        ),
    ];
    for (call, says) in cases {
        let results = run(3, LONG, |c| call(c, c.rank() == 2));
        for e in errors(results) {
            assert!(matches!(e.kind, CommErrorKind::Mismatch { .. }), "{e}");
            assert!(e.to_string().contains(says), "{e}\nshould say: {says}");
        }
    }
}

/// Run ranks `0..n-1` of a group of `n` on threads with `f`; rank `n - 1`
/// runs `last` on the calling thread with its member.
fn run_but_last<R: Send>(
    n: usize,
    timeout: Duration,
    f: impl Fn(&dyn Communicator) -> R + Sync,
    last: impl FnOnce(SharedComm),
) -> Vec<R> {
    let mut members = SharedComm::group_with_timeout(n, timeout);
    let odd = members.pop().unwrap();
    std::thread::scope(|s| {
        let handles: Vec<_> = members
            .into_iter()
            .map(|m| {
                let f = &f;
                s.spawn(move || f(&m))
            })
            .collect();
        last(odd);
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn a_rank_that_never_calls_times_out_the_others() {
    let timeout = Duration::from_millis(200);
    let start = Instant::now();
    let mut keep = None;
    let results = run_but_last(
        3,
        timeout,
        |c| {
            let r = c.all_reduce(&mut Buffer::F32(vec![1.0; 64]), ReduceOp::Sum);
            (r, start.elapsed())
        },
        // Alive (not dropped) but never calling.
        |m| keep = Some(m),
    );
    for (r, (res, took)) in results.into_iter().enumerate() {
        let e = res.expect_err("the collective should time out");
        assert_eq!(e.rank, r);
        assert_eq!(
            e.kind,
            CommErrorKind::Timeout {
                during: CommOp::AllReduce,
                missing: vec![2],
                waited: timeout
            }
        );
        assert!(
            e.to_string().starts_with(
                "all_reduce on rank {r}: rank 2 did not arrive in all_reduce within 0.200 s"
                    .replace("{r}", &r.to_string())
                    .as_str()
            ),
            "{e}"
        );
        assert!(
            took >= timeout && took < Duration::from_secs(10),
            "{took:?}"
        );
    }
    // The late rank finds the group broken, at once.
    let late = keep.unwrap();
    let t = Instant::now();
    let e = late.all_gather(&Buffer::F32(vec![1.0])).unwrap_err();
    assert!(matches!(e.kind, CommErrorKind::Timeout { .. }), "{e}");
    assert!(t.elapsed() < Duration::from_secs(1));
}

#[test]
fn an_abort_fails_the_others_promptly() {
    let start = Instant::now();
    let results = run_but_last(
        3,
        LONG,
        |c| {
            let first = c.all_gather(&Buffer::I64(vec![1; 3])).map(drop);
            let second = c.all_reduce(&mut Buffer::F64(vec![1.0; 3]), ReduceOp::Sum);
            (first, second, start.elapsed())
        },
        |m| {
            m.all_gather(&Buffer::I64(vec![1; 3])).unwrap();
            std::thread::sleep(Duration::from_millis(50));
            m.abort("kernel 3 failed");
            // Its own later calls fail too.
            let e = m
                .all_reduce(&mut Buffer::F64(vec![1.0; 3]), ReduceOp::Sum)
                .unwrap_err();
            assert_eq!(
                e.to_string(),
                "all_reduce on rank 2: the group was aborted by rank 2: kernel 3 failed"
            );
        },
    );
    for (r, (first, second, took)) in results.into_iter().enumerate() {
        first.unwrap();
        let e = second.unwrap_err();
        assert_eq!(
            e.kind,
            CommErrorKind::Aborted {
                by: 2,
                reason: "kernel 3 failed".into()
            },
            "rank {r}"
        );
        assert!(
            took < Duration::from_secs(10),
            "{took:?}: not before the timeout"
        );
    }
}

#[test]
fn a_panicking_rank_aborts_the_group() {
    let start = Instant::now();
    let results = run_but_last(
        3,
        LONG,
        |c| {
            let e = c.all_to_all(&Buffer::F32(vec![1.0; 3])).unwrap_err();
            (e, start.elapsed())
        },
        |m| {
            let caught = catch_unwind(AssertUnwindSafe(move || {
                let _member = m;
                panic!("a kernel panicked");
            }));
            assert!(caught.is_err());
        },
    );
    for (e, took) in results {
        assert_eq!(
            e.kind,
            CommErrorKind::Aborted {
                by: 2,
                reason: "rank 2 panicked".into()
            }
        );
        assert!(took < Duration::from_secs(10), "{took:?}");
    }
}

/// A rank that panics after the others may have started reading its
/// buffer: they fail promptly, and its buffer outlives their reading (it
/// unwinds only after the exit barrier).
#[test]
fn a_rank_panicking_inside_a_collective_aborts_the_group() {
    let len = 1 << 16;
    let start = Instant::now();
    let results = run_but_last(
        3,
        LONG,
        |c| {
            let mut b = Buffer::F32(vec![1.0; len]);
            let e = c.all_reduce(&mut b, ReduceOp::Sum).unwrap_err();
            (e, start.elapsed())
        },
        |m| {
            let caught = catch_unwind(AssertUnwindSafe(|| {
                shared::tests::panic_in_next_all_reduce();
                let mut b = Buffer::F32(vec![1.0; len]);
                m.all_reduce(&mut b, ReduceOp::Sum)
            }));
            assert!(caught.is_err(), "the hook did not panic");
            // The group stays broken for the member that panicked.
            let e = m.all_gather(&Buffer::F32(vec![1.0])).unwrap_err();
            assert!(
                e.to_string().contains("rank 2 panicked in all_reduce"),
                "{e}"
            );
        },
    );
    for (e, took) in results {
        assert_eq!(
            e.kind,
            CommErrorKind::Aborted {
                by: 2,
                reason: "rank 2 panicked in all_reduce".into()
            }
        );
        assert!(took < Duration::from_secs(10), "{took:?}");
    }
}

#[test]
fn a_dropped_member_aborts_the_group() {
    let start = Instant::now();
    let results = run_but_last(
        2,
        LONG,
        |c| {
            let e = c.permute(&Buffer::Bool(vec![1; 3]), &[(0, 1)]).unwrap_err();
            (e, start.elapsed())
        },
        |m| {
            std::thread::sleep(Duration::from_millis(20));
            drop(m);
        },
    );
    let (e, took) = &results[0];
    assert_eq!(
        e.to_string(),
        "permute on rank 0: the group was aborted by rank 1: rank 1 left the group (its member \
         was dropped)"
    );
    assert!(*took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn a_group_runs_many_collectives_in_a_row() {
    let n = 4;
    let steps = 300;
    let sums = run(n, LONG, |c| {
        let mut total = 0i64;
        for step in 0..steps {
            let r = c.rank() as i64;
            let mut b = Buffer::I64(vec![r + step; 5]);
            match step % 4 {
                0 => {
                    c.all_reduce(&mut b, ReduceOp::Sum).unwrap();
                    assert_eq!(b, Buffer::I64(vec![6 + 4 * step; 5]));
                }
                1 => {
                    c.all_reduce(&mut b, ReduceOp::Max).unwrap();
                    assert_eq!(b, Buffer::I64(vec![3 + step; 5]));
                }
                2 => {
                    let g = c.all_gather(&Buffer::I64(vec![r])).unwrap();
                    assert_eq!(g, Buffer::I64(vec![0, 1, 2, 3]));
                }
                _ => {
                    let p = c.permute(&Buffer::I64(vec![r]), &[(3, 0), (0, 3)]).unwrap();
                    let want = match r {
                        0 => 3,
                        3 => 0,
                        _ => 0,
                    };
                    assert_eq!(p, Buffer::I64(vec![want]));
                }
            }
            if step % 4 < 2 {
                total += b.get(0) as i64;
            }
        }
        total
    });
    assert!(sums.iter().all(|s| *s == sums[0]), "{sums:?}");
}

#[test]
fn the_timeout_comes_from_the_environment_variable() {
    assert_eq!(parse_timeout(None), DEFAULT_TIMEOUT);
    assert_eq!(parse_timeout(Some("2.5")), Duration::from_millis(2500));
    assert_eq!(parse_timeout(Some(" 10 ")), Duration::from_secs(10));
    assert_eq!(parse_timeout(Some("0")), DEFAULT_TIMEOUT);
    assert_eq!(parse_timeout(Some("-1")), DEFAULT_TIMEOUT);
    assert_eq!(parse_timeout(Some("soon")), DEFAULT_TIMEOUT);
    assert_eq!(DEFAULT_TIMEOUT, Duration::from_secs(300));
    assert_eq!(SharedComm::group_with_timeout(2, LONG)[1].timeout(), LONG);
}

#[test]
fn fold_in_place_reads_every_input_before_writing() {
    // Several tiles and a partial one; every slice ends with the sum.
    let len = 3 * TILE + 17;
    let mut a: Vec<f32> = (0..len).map(|i| i as f32).collect();
    let mut b: Vec<f32> = (0..len).map(|i| 1000.0 + i as f32).collect();
    let mut c: Vec<f32> = (0..len).map(|i| 0.5 * i as f32).collect();
    fold_in_place(ReduceOp::Sum, &mut [&mut a, &mut b, &mut c]);
    for i in 0..len {
        let want = (i as f32 + (1000.0 + i as f32)) + 0.5 * i as f32;
        assert_eq!((a[i], b[i], c[i]), (want, want, want), "element {i}");
    }
    let mut out = vec![0.0; len];
    fold(ReduceOp::Max, &mut out, &[&a, &[7000.0; 3 * TILE + 17]]);
    assert!(out.iter().enumerate().all(|(i, x)| *x == a[i].max(7000.0)));
}
