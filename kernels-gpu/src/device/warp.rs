//! Warp-level data exchange: the 32 lanes of a warp read each other's
//! registers without touching shared memory; and the block-wide reduction
//! built on it.

use super::shared::SharedPtr;
use super::thread::{block_dim_x, sync_threads, thread_idx_x};

unsafe extern "C" {
    #[link_name = "llvm.nvvm.shfl.sync.bfly.f32"]
    fn shfl_sync_bfly_f32(mask: u32, value: f32, lane_mask: u32, clamp: u32) -> f32;
    #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
    fn shfl_sync_idx_i32(mask: u32, value: u32, lane: u32, clamp: u32) -> u32;
}

/// Every lane of a full warp.
pub const FULL_MASK: u32 = 0xffff_ffff;

// ANCHOR: shfl_xor
/// `__shfl_xor_sync(0xffffffff, value, lane_mask)`: the value held by lane
/// `lane ^ lane_mask` (PTX `shfl.sync.bfly.b32`).
///
/// Every lane of the warp must call it with the same `lane_mask`; a block
/// whose size is a multiple of 32 satisfies the full mask.
#[inline(always)]
pub fn shfl_xor(value: f32, lane_mask: u32) -> f32 {
    // SAFETY: a register exchange inside the warp; the caller's launch shape
    // makes all 32 lanes present (block sizes are whole warps).
    unsafe { shfl_sync_bfly_f32(FULL_MASK, value, lane_mask, 0x1f) }
}
// ANCHOR_END: shfl_xor

// ANCHOR: uniform
/// `__shfl_sync(0xffffffff, value, 0)`: lane 0's `value`, in every lane
/// (PTX `shfl.sync.idx.b32`).
///
/// For a value that is already the same in every lane (a warp's index,
/// `threadIdx.x / 32`, or a warpgroup's, `threadIdx.x / 128`, in a
/// one-dimensional block) it changes no value, only what
/// ptxas knows: a shuffle from one lane is warp-uniform, so ptxas can keep
/// the result, and what is computed from it alone, in uniform registers. A
/// `wgmma` descriptor built from the warpgroup index is then formed in
/// uniform registers (`UMOV`, `ULOP3`, `UIADD3`) where it was formed per
/// thread and copied over with `R2UR` (CUTLASS's `canonical_warp_group_idx`
/// broadcasts the same way, for the same reason). In `gemm_bf16_wgmma` that
/// closed a 2% gap to the CUDA C twin (the book's "Fast Rust kernels"
/// chapter, "A warp-uniform index", has the profile and the timings).
///
/// Every lane of the warp must call it (converged; a block whose size is a
/// multiple of 32 satisfies the full mask); a value that differs between
/// lanes becomes lane 0's.
#[inline(always)]
pub fn uniform(value: u32) -> u32 {
    // SAFETY: a register exchange inside the warp; the caller's launch shape
    // makes all 32 lanes present (block sizes are whole warps).
    unsafe { shfl_sync_idx_i32(FULL_MASK, value, 0, 0x1f) }
}
// ANCHOR_END: uniform

// ANCHOR: block_reduce
/// The block's sum (or maximum, with `MAX`) of every thread's `v`,
/// returned to every thread. Butterfly shuffles within each warp, one
/// partial per warp in `scratch`, then every thread adds the partials in
/// warp order: the same order in every block (and in the CUDA C twins), so
/// the result does not depend on which block computes it.
///
/// # Safety
/// Every thread of the block must call it (it holds two barriers); the
/// block is one-dimensional and a whole number of warps; `scratch` is a
/// shared array holding a float per warp (block_dim / 32 floats), and is
/// free again when it returns.
#[inline(always)]
pub unsafe fn block_reduce<const MAX: bool>(mut v: f32, scratch: SharedPtr<f32>) -> f32 {
    let mut lane_mask = 16;
    while lane_mask > 0 {
        let other = shfl_xor(v, lane_mask);
        v = if MAX { v.max(other) } else { v + other };
        lane_mask >>= 1;
    }
    let tid = thread_idx_x();
    // SAFETY: the warp index is below block_dim / 32, the floats `scratch`
    // holds; the caller brings every thread of the block to both barriers.
    unsafe {
        if tid % 32 == 0 {
            scratch.write(tid / 32, v);
        }
        sync_threads();
        let mut r = scratch.read(0);
        for i in 1..block_dim_x() / 32 {
            let p = scratch.read(i);
            r = if MAX { r.max(p) } else { r + p };
        }
        sync_threads();
        r
    }
}
// ANCHOR_END: block_reduce
