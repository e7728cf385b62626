//! Warp-level data exchange: the 32 lanes of a warp read each other's
//! registers without touching shared memory.

unsafe extern "C" {
    #[link_name = "llvm.nvvm.shfl.sync.bfly.f32"]
    fn shfl_sync_bfly_f32(mask: u32, value: f32, lane_mask: u32, clamp: u32) -> f32;
}

/// Every lane of a full warp.
pub const FULL_MASK: u32 = 0xffff_ffff;

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
