//! The MPI communicator across the processes of `mpirun -n 2` and `-n 4`
//! (feature `mpi`): every collective on every element type gives what the
//! threads group (`SharedComm`, itself checked against sequential
//! computations) gives on the same ranks' buffers, and calls that differ,
//! are invalid or never come end in errors on every rank, not hangs.

use oxla_core::buffer::Buffer;
use oxla_core::comm::mpi::{init, world};
use oxla_core::comm::{CommErrorKind, Communicator, ReduceOp, SharedComm};
use oxla_core::dtype::DType;
use oxla_test_support::mpirun::mpi_test;
use std::time::Instant;

const OPS: [ReduceOp; 3] = [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min];

/// Rank `r`'s buffer: multiples of 1/8 (exact in every float type, so
/// sums in any order agree), with NaN, infinities and both zeros at fixed
/// places on some ranks (JAX's max and min on them); integers near the
/// type's limits, so sums wrap.
fn data(dtype: DType, len: usize, r: usize) -> Buffer {
    let mut v: Vec<f64> = (0..len)
        .map(|i| ((i * 7 + r * 13) % 61) as f64 / 8.0 - 3.5)
        .collect();
    if dtype.is_float() {
        for (i, x) in v.iter_mut().enumerate() {
            *x = match (i % 23, r) {
                (3, 1) => f64::NAN,
                (5, 0) => f64::INFINITY,
                (7, _) => {
                    if r.is_multiple_of(2) {
                        0.0
                    } else {
                        -0.0
                    }
                }
                _ => *x,
            };
        }
        return Buffer::from_f64(dtype, &v);
    }
    match dtype {
        DType::I32 => Buffer::I32(
            (0..len)
                .map(|i| (i32::MAX - i as i32 % 5).wrapping_add(r as i32))
                .collect(),
        ),
        DType::I64 => Buffer::I64(
            (0..len)
                .map(|i| (i64::MIN + i as i64 % 3).wrapping_sub(r as i64))
                .collect(),
        ),
        _ => Buffer::Bool((0..len).map(|i| (i + r).is_multiple_of(3) as u8).collect()),
    }
}

/// Equal element for element: the same bits, or both NaN (MPI's sum and
/// the fold may give NaNs of other payloads).
fn assert_same(got: &Buffer, want: &Buffer, what: &str) {
    assert_eq!(got.dtype(), want.dtype(), "{what}: element type");
    assert_eq!(got.len(), want.len(), "{what}: length");
    for i in 0..got.len() {
        let (g, w) = (got.get(i), want.get(i));
        let same =
            (g.is_nan() && w.is_nan()) || (g == w && g.is_sign_negative() == w.is_sign_negative());
        assert!(
            same,
            "{what}: element {i} is {g}, the threads group gives {w}"
        );
    }
    if matches!(got.dtype(), DType::I32 | DType::I64) {
        assert_eq!(format!("{got:?}"), format!("{want:?}"), "{what}");
    }
}

/// What rank `rank` of a threads group of `size` gets from `call` when each
/// rank passes `data(.., r)`.
fn threads<R: Send>(size: usize, rank: usize, call: impl Fn(&SharedComm, usize) -> R + Sync) -> R {
    let group = SharedComm::group(size);
    let call = &call;
    std::thread::scope(|s| {
        let handles: Vec<_> = group
            .iter()
            .enumerate()
            .map(|(r, m)| s.spawn(move || call(m, r)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a thread of the reference group"))
            .nth(rank)
            .expect("the rank's result")
    })
}

#[test]
fn collectives_match_the_threads_group() {
    mpi_test("collectives_match_the_threads_group", &[2, 4], &[], || {
        let _mpi = init().expect("MPI");
        let w = world().expect("the world after init");
        let (rank, size) = (w.rank(), w.size());
        for dtype in DType::ALL {
            for len in [0, 1, 7, 5003] {
                for op in OPS {
                    let mut got = data(dtype, len, rank);
                    w.all_reduce(&mut got, op).expect("all_reduce");
                    let want = threads(size, rank, |m, r| {
                        let mut b = data(dtype, len, r);
                        m.all_reduce(&mut b, op).unwrap();
                        b
                    });
                    assert_same(&got, &want, &format!("all_reduce {op} {dtype}[{len}]"));
                }
                let got = w.all_gather(&data(dtype, len, rank)).expect("all_gather");
                let want = threads(size, rank, |m, r| {
                    m.all_gather(&data(dtype, len, r)).unwrap()
                });
                assert_same(&got, &want, &format!("all_gather {dtype}[{len}]"));

                let chunked = len * size;
                for op in OPS {
                    let got = w
                        .reduce_scatter(&data(dtype, chunked, rank), op)
                        .expect("reduce_scatter");
                    let want = threads(size, rank, |m, r| {
                        m.reduce_scatter(&data(dtype, chunked, r), op).unwrap()
                    });
                    assert_same(
                        &got,
                        &want,
                        &format!("reduce_scatter {op} {dtype}[{chunked}]"),
                    );
                }
                let got = w
                    .all_to_all(&data(dtype, chunked, rank))
                    .expect("all_to_all");
                let want = threads(size, rank, |m, r| {
                    m.all_to_all(&data(dtype, chunked, r)).unwrap()
                });
                assert_same(&got, &want, &format!("all_to_all {dtype}[{chunked}]"));

                let ring: Vec<(usize, usize)> = (0..size).map(|s| (s, (s + 1) % size)).collect();
                let partial = vec![(0, size - 1), (size - 1, size - 1 - 1)];
                for pairs in [ring, partial] {
                    let got = w.permute(&data(dtype, len, rank), &pairs).expect("permute");
                    let want = threads(size, rank, |m, r| {
                        m.permute(&data(dtype, len, r), &pairs).unwrap()
                    });
                    assert_same(&got, &want, &format!("permute {pairs:?} {dtype}[{len}]"));
                }
            }
        }
    });
}

#[test]
fn calls_that_differ_fail_on_every_rank_and_the_group_goes_on() {
    mpi_test(
        "calls_that_differ_fail_on_every_rank_and_the_group_goes_on",
        &[2, 4],
        &[],
        || {
            let _mpi = init().expect("MPI");
            let w = world().expect("the world");
            let (rank, size) = (w.rank(), w.size());
            // Rank 0 sums 3 elements, the others 4.
            let mut b = Buffer::zeros(DType::F32, if rank == 0 { 3 } else { 4 });
            let e = w.all_reduce(&mut b, ReduceOp::Sum).unwrap_err();
            match &e.kind {
                CommErrorKind::Mismatch { detail } => {
                    assert!(detail.contains("length"), "{e}");
                    assert!(
                        detail.contains("rank 0 called all_reduce(f32[3], sum)"),
                        "{e}"
                    );
                }
                k => panic!("a mismatch, not {k:?}"),
            }
            // Another collective on one rank.
            let e = if rank == 1 {
                w.all_gather(&Buffer::zeros(DType::F64, 2)).unwrap_err()
            } else {
                let mut b = Buffer::zeros(DType::F64, 2);
                w.all_reduce(&mut b, ReduceOp::Max).unwrap_err()
            };
            assert!(matches!(e.kind, CommErrorKind::Mismatch { .. }), "{e}");
            // Pairs that are not a permutation: invalid on every rank.
            let e = w
                .permute(&Buffer::zeros(DType::I32, 1), &[(0, 1), (1, 1)])
                .unwrap_err();
            assert!(matches!(e.kind, CommErrorKind::Invalid { .. }), "{e}");
            // The group still works.
            let mut b = Buffer::from_f64(DType::F64, &[rank as f64]);
            w.all_reduce(&mut b, ReduceOp::Sum)
                .expect("a matching call");
            assert_eq!(b.get(0), (size * (size - 1) / 2) as f64);
        },
    );
}

#[test]
fn a_rank_that_never_calls_gives_a_timeout_naming_it() {
    mpi_test(
        "a_rank_that_never_calls_gives_a_timeout_naming_it",
        &[2, 4],
        &[("OXLA_COLLECTIVE_TIMEOUT", "1")],
        || {
            let _mpi = init().expect("MPI");
            let w = world().expect("the world");
            if w.rank() == 0 {
                return;
            }
            let start = Instant::now();
            let mut b = Buffer::zeros(DType::F32, 8);
            let e = w.all_reduce(&mut b, ReduceOp::Sum).unwrap_err();
            let waited = start.elapsed().as_secs_f64();
            match &e.kind {
                CommErrorKind::Timeout { missing, .. } => assert_eq!(missing, &[0], "{e}"),
                k => panic!("a timeout, not {k:?}"),
            }
            assert!((0.9..30.0).contains(&waited), "waited {waited} s");
            assert!(e.to_string().contains("OXLA_COLLECTIVE_TIMEOUT"), "{e}");
            // The member is broken: the next call fails at once.
            let start = Instant::now();
            assert!(w.all_gather(&b).is_err());
            assert!(start.elapsed().as_secs_f64() < 0.5);
        },
    );
}
