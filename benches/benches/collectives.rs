//! The shared-memory communicator (`oxla_core::comm::SharedComm`): a psum
//! (`all_reduce` with `ReduceOp::Sum`) of f32 over 2 and 4 thread-devices
//! beside a plain memcpy (`copy_from_slice`, one thread) of the same bytes,
//! at 64 MB and 1 MB. The target is a psum within 1.5× of the memcpy. Run:
//! `cargo bench -p oxla-benches --bench collectives`.
//!
//! An in-place all-reduce over `n` buffers must read and write every one of
//! them, as `n` memcpys do; so beside each psum the bench times `n` threads
//! that each copy their own buffer at the same time (`memcpy_n_threads`):
//! the floor for the psum on this machine. Where one core saturates the
//! memory bandwidth, that floor is `n` times the one-thread memcpy.
//!
//! Each device is a thread that lives through the whole benchmark with its
//! own buffers; the time is rank 0's, from the end of a synchronising
//! all_reduce of one element to the end of another after the last
//! operation. After a first psum of `rank + 1` everywhere is checked, the
//! buffers hold +inf while timed: a steady state of non-zero bytes (zero
//! pages and zero data can flatter a copy), and SIMD float addition takes
//! the same time on infinities as on any normal value.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use oxla::oxla_core::comm::{Communicator, ReduceOp, SharedComm};
use oxla::oxla_core::Buffer;
use std::hint::black_box;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

#[derive(Clone, Copy)]
enum Work {
    /// Every device psums its buffer.
    Psum,
    /// Every device copies its own buffer into another, all at once.
    Memcpy,
}

/// One device's buffers.
struct Device {
    comm: SharedComm,
    buf: Buffer,
    dst: Vec<f32>,
}

impl Device {
    fn new(comm: SharedComm, len: usize) -> Device {
        let mut d = Device {
            comm,
            buf: Buffer::F32(vec![0.0; len]),
            dst: vec![0.0; len],
        };
        d.check();
        d
    }

    /// All ranks psum `rank + 1`; every element must be `n(n+1)/2`. Then
    /// +inf.
    fn check(&mut self) {
        let (n, len) = (self.comm.size(), self.buf.len());
        self.buf = Buffer::F32(vec![(self.comm.rank() + 1) as f32; len]);
        self.comm.all_reduce(&mut self.buf, ReduceOp::Sum).unwrap();
        let want = (n * (n + 1) / 2) as f32;
        assert_eq!(self.buf, Buffer::F32(vec![want; len]), "psum over {n}");
        self.buf = Buffer::F32(vec![f32::INFINITY; len]);
    }

    fn sync(&self) {
        let mut one = Buffer::F32(vec![0.0]);
        self.comm.all_reduce(&mut one, ReduceOp::Sum).unwrap();
    }

    /// This device's part of a timed batch of `iters`.
    fn batch(&mut self, work: Work, iters: u64) -> Duration {
        self.sync();
        let start = Instant::now();
        for _ in 0..iters {
            match work {
                Work::Psum => self
                    .comm
                    .all_reduce(black_box(&mut self.buf), ReduceOp::Sum)
                    .unwrap(),
                Work::Memcpy => {
                    let Buffer::F32(src) = &self.buf else {
                        unreachable!()
                    };
                    self.dst.copy_from_slice(black_box(src));
                    black_box(&mut self.dst);
                }
            }
        }
        self.sync();
        start.elapsed()
    }
}

/// A worker thread-device: where its work is sent, and its thread.
type Worker = (mpsc::Sender<(Work, u64)>, JoinHandle<()>);

/// `n` thread-devices; rank 0 stays with the caller.
struct Devices {
    rank0: Device,
    workers: Vec<Worker>,
    done: mpsc::Receiver<()>,
}

impl Devices {
    fn new(n: usize, len: usize) -> Devices {
        let mut members = SharedComm::group(n).into_iter();
        let rank0 = members.next().unwrap();
        let (done_tx, done) = mpsc::channel();
        let workers = members
            .map(|comm| {
                let (tx, rx) = mpsc::channel::<(Work, u64)>();
                let done_tx = done_tx.clone();
                let handle = std::thread::spawn(move || {
                    let mut device = Device::new(comm, len);
                    while let Ok((work, iters)) = rx.recv() {
                        device.batch(work, iters);
                        done_tx.send(()).unwrap();
                    }
                });
                (tx, handle)
            })
            .collect();
        Devices {
            rank0: Device::new(rank0, len),
            workers,
            done,
        }
    }

    /// Time `iters` of `work` on every device (rank 0's clock).
    fn run(&mut self, work: Work, iters: u64) -> Duration {
        for (tx, _) in &self.workers {
            tx.send((work, iters)).unwrap();
        }
        let took = self.rank0.batch(work, iters);
        for _ in &self.workers {
            self.done.recv().unwrap();
        }
        took
    }

    fn stop(self) {
        for (tx, handle) in self.workers {
            drop(tx);
            handle.join().unwrap();
        }
    }
}

fn bench_psum(c: &mut Criterion) {
    for (bytes, label) in [(64 << 20, "64MB"), (1 << 20, "1MB")] {
        let len = bytes / 4;
        let mut group = c.benchmark_group(format!("psum_f32_{label}"));
        group.throughput(Throughput::Bytes(bytes as u64));
        if bytes > 8 << 20 {
            group
                .sample_size(20)
                .measurement_time(Duration::from_secs(6));
        } else {
            group
                .sample_size(50)
                .measurement_time(Duration::from_secs(3));
        }
        let src = vec![1.0f32; len];
        let mut dst = vec![0.0f32; len];
        group.bench_function(BenchmarkId::new("memcpy", label), |b| {
            b.iter(|| dst.copy_from_slice(black_box(&src)))
        });
        black_box(&dst);
        for n in [2, 4] {
            let mut devices = Devices::new(n, len);
            let id = |name: String| BenchmarkId::new(name, label);
            group.bench_function(id(format!("psum_{n}_devices")), |b| {
                b.iter_custom(|iters| devices.run(Work::Psum, iters))
            });
            group.bench_function(id(format!("memcpy_{n}_threads")), |b| {
                b.iter_custom(|iters| devices.run(Work::Memcpy, iters))
            });
            devices.stop();
        }
        group.finish();
    }
}

criterion_group!(benches, bench_psum);
criterion_main!(benches);
