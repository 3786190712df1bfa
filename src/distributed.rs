//! Processes as devices (feature `mpi`): a `#[pmap]` that spans the
//! processes of an MPI job, as JAX's `jax.distributed.initialize()` makes
//! `pmap` span hosts.
//!
//! Start the program with `mpirun -n P` and call [`init`] first. Each
//! process is then one CPU device of a `P`-device axis: a pmap'd function
//! takes, in every process, the slice of its own device (the mapped
//! arguments have 1 entry along the device axis, JAX's local device count),
//! `axis_size` is `P` and `axis_index` the process's rank, and the
//! collectives are MPI's (`MPI_Allreduce`, `MPI_Allgather`,
//! `MPI_Alltoall`, point-to-point for `ppermute`), each checked first: ranks
//! that call different collectives, or with different lengths or element
//! types, all get an error, and one that never calls it an error after the
//! collective timeout (`OXLA_COLLECTIVE_TIMEOUT` seconds, 300 by default)
//! instead of a hang. A pmap inside another stays within the process.
//!
//! ```no_run
//! let mpi = oxla::distributed::init().expect("MPI");
//! println!("process {} of {}", mpi.process_index(), mpi.process_count());
//! // ... call pmap'd functions; `mpi` finalizes MPI when dropped.
//! ```
//!
//! Not yet: several devices per process, results whose shape names the
//! axis's size (an `all_gather` returned out of the pmap: reduce or scatter
//! it inside), and GPUs (NCCL).
//!
//! Floating-point sums go through `MPI_Allreduce`: the same bits on every
//! rank and in every run of the same job, but MPI's reduction order, which
//! may round differently from the rank-order fold of CPU-device threads.

pub use oxla_core::comm::mpi::{init, Distributed};
