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

// ANCHOR: global_index_x
/// `blockIdx.x * blockDim.x + threadIdx.x`, widened to 64 bits before the
/// multiply: the global x index of a one-thread-one-element launch.
///
/// `%ctaid.x` is read first, the order nvcc's PTX has for the `size_t`
/// form: ptxas then reads `blockIdx` with `S2UR`, as in the twins' SASS.
/// Reading `%ntid.x` first changed the prologue of 36 kernels away from
/// their twins' (checked at sm_90, 2026-12-02); the 32-bit form is the
/// other way round ([`global_index_x_u32`]).
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
/// `%ntid.x` is read before `%ctaid.x`, the order nvcc's PTX has. ptxas
/// follows the order of the reads: this way it loads `blockDim` from the
/// constant bank into a uniform register and `blockIdx` with `S2R`, the
/// twin's prologue; with `%ctaid` first it reads `blockIdx` with `S2UR`
/// and `blockDim` with `LDC` (seen at sm_90 with `cargo xtask asm
/// heat_step_global`). Measured on the H200, 2026-12-02: with these two,
/// `heat_step_global` went from 1.019 to 0.999 of its twin's time and
/// `conv2d_valid` from 1.010 to 1.000 (docs/results/h200-2026-12-02-prologue;
/// the book chapter "Fast Rust kernels").
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
