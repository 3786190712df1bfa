//! A psum across the processes of an MPI job (`oxla::distributed`, feature
//! `mpi`) beside OpenMPI's own `MPI_Allreduce` on the same buffers: f32 sums
//! of 64 MB and 1 MB over 2 processes on one machine (loopback, shared
//! memory). The target is the psum within 1.2× of `MPI_Allreduce`. The
//! psum reduces in place (`MPI_IN_PLACE`), so beside the out-of-place call
//! (separate send and receive buffers) the bench times the in-place one
//! too. Run:
//! `cargo bench -p oxla-benches --features mpi --bench mpi_psum` (it starts
//! itself under `mpirun -n 2`; `OXLA_BENCH_RANKS` sets another count).
//!
//! Not criterion: its sampling decides the iteration counts on each
//! process separately, and collectives need every process to make the same
//! calls. Here every process runs the same fixed schedule: rounds that
//! alternate the two, each round `reps` calls between barriers, timed on
//! rank 0; the medians over the rounds are printed.

use mpi::collective::SystemOperation;
use mpi::datatype::Equivalence;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::CommunicatorCollectives;
use oxla::oxla_core::comm::mpi::world;
use oxla::oxla_core::comm::{Communicator, ReduceOp};
use oxla::oxla_core::Buffer;
use std::time::Instant;

const ROUNDS: usize = 11;

fn main() {
    if std::env::var_os("OMPI_COMM_WORLD_SIZE").is_none() {
        let ranks = std::env::var("OXLA_BENCH_RANKS").unwrap_or_else(|_| "2".into());
        let status = std::process::Command::new("mpirun")
            .args(["-n", &ranks, "--oversubscribe"])
            .arg(std::env::current_exe().expect("this binary"))
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .status()
            .expect("mpirun (OpenMPI's openmpi-bin)");
        std::process::exit(status.code().unwrap_or(1));
    }
    let mpi = oxla::distributed::init().expect("MPI");
    let library = mpi::environment::library_version().unwrap_or_default();
    assert!(
        library.contains("Open MPI"),
        "this bench is for Open MPI, not {library}"
    );
    let oxla_world = world().expect("the world");
    let raw = SimpleCommunicator::world();
    let (rank, procs) = (mpi.process_index(), mpi.process_count());
    if rank == 0 {
        println!("psum of f32 over {procs} MPI processes, median of {ROUNDS} rounds:");
        println!(
            "| bytes | MPI_Allreduce | MPI_Allreduce in place | oxla psum | psum / in place |"
        );
        println!("|---|---|---|---|---|");
    }
    for (bytes, reps) in [(64usize << 20, 5), (1 << 20, 200)] {
        let len = bytes / 4;
        let send: Vec<f32> = (0..len)
            .map(|i| ((i % 97) as f32 + rank as f32) / 8.0)
            .collect();
        let mut recv = vec![0.0f32; len];
        // Both give the same sums (exact: multiples of 1/8).
        raw.all_reduce_into(&send[..], &mut recv[..], SystemOperation::sum());
        let mut buf = Buffer::F32(send.clone());
        oxla_world.all_reduce(&mut buf, ReduceOp::Sum).unwrap();
        assert_eq!(buf, Buffer::F32(recv.clone()), "psum vs MPI_Allreduce");

        let time = |f: &mut dyn FnMut()| {
            raw.barrier();
            let t = Instant::now();
            for _ in 0..reps {
                f();
            }
            raw.barrier();
            t.elapsed().as_secs_f64() / reps as f64
        };
        let mut inplace = send.clone();
        let (mut mpi_t, mut inplace_t, mut oxla_t) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            mpi_t.push(time(&mut || {
                raw.all_reduce_into(&send[..], &mut recv[..], SystemOperation::sum())
            }));
            inplace_t.push(time(&mut || {
                // SAFETY: Open MPI's MPI_IN_PLACE is `(void *) 1` (checked
                // below); MPI then reads and writes `inplace` only, `len`
                // floats.
                let code = unsafe {
                    mpi::ffi::MPI_Allreduce(
                        std::ptr::without_provenance::<std::ffi::c_void>(1),
                        inplace.as_mut_ptr().cast(),
                        len as i32,
                        f32::equivalent_datatype().as_raw(),
                        SystemOperation::sum().as_raw(),
                        raw.as_raw(),
                    )
                };
                assert_eq!(code, 0);
            }));
            oxla_t.push(time(&mut || {
                oxla_world.all_reduce(&mut buf, ReduceOp::Sum).unwrap()
            }));
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (m, i, o) = (
            median(&mut mpi_t),
            median(&mut inplace_t),
            median(&mut oxla_t),
        );
        if rank == 0 {
            println!(
                "| {} MB | {:.3} ms | {:.3} ms | {:.3} ms | {:.2}× |",
                bytes >> 20,
                m * 1e3,
                i * 1e3,
                o * 1e3,
                o / i
            );
        }
    }
}
