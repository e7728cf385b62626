//! The thread hierarchy: a grid of blocks, a block of threads, warps of 32.
//!
//! Each index is a special register read (`%tid`, `%ntid`, `%ctaid`,
//! `%nctaid`). The values are `u32`, as CUDA's `dim3` is unsigned; kernels
//! that index buffers of more than 2^32 bytes widen to `u64` before they
//! multiply, as the seeds' `static_cast<size_t>` does.

use core::arch::nvptx;

// ANCHOR: thread_idx_x
/// `threadIdx.x`.
#[inline(always)]
pub fn thread_idx_x() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { nvptx::_thread_idx_x() as u32 }
}
// ANCHOR_END: thread_idx_x

/// `threadIdx.y`.
#[inline(always)]
pub fn thread_idx_y() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_thread_idx_y() as u32 }
}

// ANCHOR: block_dim_x
/// `blockDim.x`.
#[inline(always)]
pub fn block_dim_x() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_dim_x() as u32 }
}
// ANCHOR_END: block_dim_x

/// `blockDim.y`.
#[inline(always)]
pub fn block_dim_y() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_dim_y() as u32 }
}

// ANCHOR: block_idx_x
/// `blockIdx.x`.
#[inline(always)]
pub fn block_idx_x() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_idx_x() as u32 }
}
// ANCHOR_END: block_idx_x

/// `blockIdx.y`.
#[inline(always)]
pub fn block_idx_y() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_idx_y() as u32 }
}

// ANCHOR: grid_dim_x
/// `gridDim.x`: blocks in the grid along x.
#[inline(always)]
pub fn grid_dim_x() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { nvptx::_grid_dim_x() as u32 }
}
// ANCHOR_END: grid_dim_x

/// `gridDim.y`: blocks in the grid along y.
#[inline(always)]
pub fn grid_dim_y() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { nvptx::_grid_dim_y() as u32 }
}

// ANCHOR: global_index_x
/// `blockIdx.x * blockDim.x + threadIdx.x`, widened to 64 bits before the
/// multiply: the global x index of a one-thread-one-element launch.
///
/// `%ctaid.x` is read first, the order nvcc's PTX has for the `size_t`
/// form: ptxas then reads `blockIdx` with `S2UR`, as in the twins' SASS.
/// Reading `%ntid.x` first moved the prologue of 34 lesson kernels (and
/// two test kernels) away from their twins' (sm_90,
/// docs/results/h200-2026-12-02-prologue/ntid-first-global_index_x.txt);
/// the 32-bit form is the other way round ([`global_index_x_u32`]).
#[inline(always)]
pub fn global_index_x() -> u64 {
    block_idx_x() as u64 * block_dim_x() as u64 + thread_idx_x() as u64
}
// ANCHOR_END: global_index_x

// ANCHOR: global_index_y
/// `blockIdx.y * blockDim.y + threadIdx.y`, in 64 bits.
#[inline(always)]
pub fn global_index_y() -> u64 {
    block_idx_y() as u64 * block_dim_y() as u64 + thread_idx_y() as u64
}
// ANCHOR_END: global_index_y

// ANCHOR: global_index_x_u32
/// `blockIdx.x * blockDim.x + threadIdx.x` in 32 bits: the global x index
/// of a 2D launch whose kernel indexes in `u32` or `i32`.
///
/// `blockDim` is read before `blockIdx`, the order nvcc's PTX has
/// (`%ntid.x`, then `%ctaid.x`). The reads are pure, so nothing in the
/// language fixes their order; rustc 1.95's LLVM keeps the source's, and
/// the PTX tests of `heat_step_global` and `conv2d_valid` pin it. ptxas
/// follows it: this way it loads `blockDim` from the constant bank into a
/// uniform register and reads `blockIdx` with `S2R`, the twins' prologue;
/// with `%ctaid` first it read `blockIdx` with `S2UR` and `blockDim` with
/// `LDC` (at sm_90, `cargo xtask asm heat_step_global`). With it both
/// kernels run at parity with their twins on the H200 (the book chapter
/// "Fast Rust kernels" has the runs).
#[inline(always)]
pub fn global_index_x_u32() -> u32 {
    let dim = block_dim_x();
    dim * block_idx_x() + thread_idx_x()
}
// ANCHOR_END: global_index_x_u32

/// `blockIdx.y * blockDim.y + threadIdx.y` in 32 bits, read in the order
/// [`global_index_x_u32`] gives.
#[inline(always)]
pub fn global_index_y_u32() -> u32 {
    let dim = block_dim_y();
    dim * block_idx_y() + thread_idx_y()
}

// ANCHOR: sync_threads
/// `__syncthreads()`: a barrier for every thread of the block (`bar.sync 0`).
/// Shared-memory writes before it are visible to the whole block after it.
///
/// Every thread of the block must reach it, or the block hangs: kernels put
/// their bounds guards around loads and stores, never around the barrier.
#[inline(always)]
pub fn sync_threads() {
    // SAFETY: a block barrier; the caller's launch shape makes every thread
    // of the block reach it (each kernel's launch assumption says so).
    unsafe { nvptx::_syncthreads() }
}
// ANCHOR_END: sync_threads
