//! How a kernel is launched: block and grid sizes, shared by the emitter
//! (which bakes in the block size) and the host (which launches).

use oxla_core::{DType, Kernel};

/// Threads per block, for every kernel. Reductions rely on it being a
/// multiple of 32 (whole warps) and at most 1024.
pub const BLOCK: u32 = 256;

/// Warps per block.
pub(crate) const WARPS: u32 = BLOCK / 32;

/// Resident blocks per multiprocessor to aim for (256 threads × 8 = 2048,
/// the per-SM thread limit on sm_80/sm_90); grid-stride loops cover the rest.
const BLOCKS_PER_SM: u64 = 8;

/// Fewest reduced elements one block handles before a reduction is split
/// across blocks (four per thread), so atomics stay rare.
pub(crate) const MIN_CHUNK: u64 = 4 * BLOCK as u64;

/// A launch configuration, in CUDA's terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    /// Dynamic shared memory in bytes. Always 0: kernels declare their shared
    /// memory statically.
    pub shared_bytes: u32,
}

/// The launch configuration for `kernel` under the size values `sizes`
/// (in `kernel.sizes` order) on a device with `sm_count` multiprocessors.
///
/// Any grid is correct (kernels loop over their work); this one fills the
/// device. The grid is at least one block even with no work, so callers may
/// launch unconditionally (skipping the launch when
/// [`has_work`] is false is cheaper).
pub fn launch_config(kernel: &Kernel, sizes: &[i64], sm_count: u32) -> LaunchConfig {
    let extent = |d| kernel.eval_size(d, sizes);
    let outer: u64 = kernel.domain[..kernel.outer_dims()]
        .iter()
        .map(extent)
        .product();
    let inner: u64 = kernel.domain[kernel.outer_dims()..]
        .iter()
        .map(extent)
        .product();
    let blocks = if let Some(scan) = kernel.scan {
        // One thread per line along the scan axis.
        let n = extent(&kernel.domain[scan.axis]).max(1);
        (outer / n).div_ceil(BLOCK as u64)
    } else if kernel.is_reduction() {
        // One block per (outer index, chunk of the reduced axes).
        let chunks = if uses_atomics(kernel) {
            inner.div_ceil(MIN_CHUNK).max(1)
        } else {
            1
        };
        outer.saturating_mul(chunks)
    } else {
        outer.div_ceil(BLOCK as u64)
    };
    let cap = (sm_count.max(1) as u64) * BLOCKS_PER_SM;
    let grid = blocks.clamp(1, cap) as u32;
    LaunchConfig {
        grid: (grid, 1, 1),
        block: (BLOCK, 1, 1),
        shared_bytes: 0,
    }
}

/// Whether the kernel has any iteration to run under `sizes`. A kernel with
/// none needs no launch (reduction outputs are then the host's fill:
/// zeros, -inf or +inf).
pub fn has_work(kernel: &Kernel, sizes: &[i64]) -> bool {
    kernel.domain.iter().all(|d| kernel.eval_size(d, sizes) > 0)
}

/// Whether a reduction may split its reduced axes across blocks, each adding
/// its partial result atomically into the output the host filled (an add
/// for sums, a compare-and-swap loop for max/min). That needs every store
/// to accumulate in `f32`/`f64` and write the same type. Otherwise one block
/// sums each output element whole and stores it with a conversion.
pub(crate) fn uses_atomics(kernel: &Kernel) -> bool {
    kernel.stores.iter().all(|s| {
        let ty = kernel.insts[s.value].ty;
        matches!(ty, DType::F32 | DType::F64) && kernel.args[s.arg].dtype == ty
    })
}
