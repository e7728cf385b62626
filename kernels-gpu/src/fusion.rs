//! The fusion lesson: one four-stage elementwise chain (scale and bias,
//! GELU, add a residual, clamp), run as four kernels and as one, with launch
//! cost and the cost of widening the fused kernel priced apart.
//!
//! Port of the seed `fusion.cu`. Constants first, each with its reason; the
//! kernels follow, each with what it computes, how it touches memory and the
//! launch shape it assumes.

/// The seed's elements of the timed chain: 16 Mi, 64 MiB a buffer, six
/// buffers. Large enough that the chain's traffic is milliseconds while its
/// launches stay microseconds. The host doubles it until a buffer is at
/// least 4x the GPU's L2 (64 Mi on an H200, where the seed's 64 MiB would
/// be 1.1x the L2).
pub const SEED_ELEMS: usize = 16_777_216;
/// The correctness size: no block size divides it (it is odd), so every
/// bounds check fires.
pub const CHECK_ELEMS: usize = 1_048_576 + 611;
/// Threads per block of every launch: 8 warps.
pub const THREADS_PER_BLOCK: u32 = 256;
/// Empty launches per timed batch in part 1.
pub const LAUNCHES_PER_BATCH: u32 = 1000;
/// Part 3's sizes, swept down until launches dominate.
pub const SWEEP: [usize; 5] = [1024, 16_384, 262_144, 4_194_304, 16_777_216];
// ANCHOR: widths
/// Calls `$m!` with each wide fused kernel's exported name and its elements
/// per thread (`chain_fused_wide_1 = 1, ...`): the one list that the
/// kernels, [`WIDTHS`], [`WIDE_SYMBOLS`], the host's kernel ids and the
/// CUDA C twins are all made from.
#[macro_export]
macro_rules! fused_widths {
    ($m:ident) => {
        $m! {
            chain_fused_wide_1 = 1,
            chain_fused_wide_2 = 2,
            chain_fused_wide_4 = 4,
            chain_fused_wide_8 = 8,
            chain_fused_wide_16 = 16,
            chain_fused_wide_32 = 32,
        }
    };
}
// ANCHOR_END: widths

/// Part 4's elements per thread; one exported kernel per width.
pub const WIDTHS: &[usize] = fused_widths!(family_values);
/// The wide kernels' exported symbols, in [`WIDTHS`] order.
pub const WIDE_SYMBOLS: &[&str] = fused_widths!(family_symbols);

/// Stage 1: `v * GAMMA + BETA`.
pub const GAMMA: f32 = 1.5;
/// Stage 1's shift.
pub const BETA: f32 = -0.25;
/// Stage 4 clamps into [LO, HI]; with inputs in [-4, 4) stage 1 gives
/// [-6.25, 5.75), so HI = 3 catches a real share.
pub const LO: f32 = -6.0;
/// The clamp's upper bound.
pub const HI: f32 = 3.0;
/// GELU, tanh form: `0.5 v (1 + tanh(A (v + B v^3)))`, A = sqrt(2 / pi).
pub const GELU_A: f32 = 0.797_884_6;
/// GELU's cubic coefficient.
pub const GELU_B: f32 = 0.044_715;

/// Floats each element moves in the staged chain: 2 + 2 + 3 + 2 (stage 3
/// also reads the residual), so 36 bytes, not the 32 of "one stage times 4".
pub const STAGED_FLOATS: f64 = 9.0;
/// Floats each element moves in the fused chain: x, the residual, out.
pub const FUSED_FLOATS: f64 = 3.0;
/// Floats each element moves in the copy floor.
pub const COPY_FLOATS: f64 = 2.0;
/// Floats each stage moves per element, in order.
pub const STAGE_FLOATS: [f64; 4] = [2.0, 2.0, 3.0, 2.0];

/// Relative tolerance against the f64 reference.
pub const REL_TOLERANCE: f64 = 1e-5;
/// Absolute tolerance against the f64 reference (for results near 0).
pub const ABS_TOLERANCE: f64 = 1e-6;

const _: () = assert!(
    THREADS_PER_BLOCK.is_multiple_of(32),
    "a block is a whole number of warps"
);
const _: () = assert!(
    CHECK_ELEMS % 2 == 1,
    "an odd size: no block size divides it"
);
const _: () = assert!(
    SWEEP[SWEEP.len() - 1] <= SEED_ELEMS,
    "the sweep reuses the timed buffers"
);
const _: () = assert!(HI > LO, "the clamp range is a range");
const _: () = assert!(
    STAGE_FLOATS[0] + STAGE_FLOATS[1] + STAGE_FLOATS[2] + STAGE_FLOATS[3] == STAGED_FLOATS,
    "the staged chain's floats are its stages' floats"
);

/// The kernels, compiled only for the GPU.
#[cfg(target_arch = "nvptx64")]
mod kernels {
    use super::*;
    use crate::device::math::{fma, tanh};
    use crate::device::memory::{load_readonly, load_readonly_if, opaque_index, store_if};
    use crate::device::thread::{block_dim_x, global_index_x, grid_dim_x};
    use crate::device::unroll::unrolled;

    // The four stages as plain functions, so the staged kernels and every
    // fused kernel run the same arithmetic; only where the intermediates
    // live differs. Multiply-adds are written as FMAs, as nvcc contracts
    // the CUDA C twin's `v * kGamma + kBeta` and `v + B * v * v * v`.

    // ANCHOR: stages
    #[inline(always)]
    fn scale_bias(v: f32) -> f32 {
        fma(v, GAMMA, BETA)
    }

    #[inline(always)]
    fn gelu(v: f32) -> f32 {
        let inner = GELU_A * fma(GELU_B * v * v, v, v);
        0.5 * v * (1.0 + tanh(inner))
    }

    #[inline(always)]
    fn add_residual(v: f32, r: f32) -> f32 {
        v + r
    }

    #[inline(always)]
    fn clamp_range(v: f32) -> f32 {
        v.max(LO).min(HI)
    }
    // ANCHOR_END: stages

    /// Does nothing: part 1 times batches of it, so what the clock sees is
    /// the cost of starting and finishing a kernel.
    ///
    /// # Memory
    /// None.
    ///
    /// # Launch assumption
    /// Any grid, any block.
    #[unsafe(no_mangle)]
    pub extern "ptx-kernel" fn do_nothing() {}

    /// `out[i] = input[i]`: the floor no elementwise chain over these
    /// buffers can beat, measured with this lesson's block shape and sizes.
    ///
    /// # Memory
    /// One coalesced read and one coalesced write: 8 bytes per element.
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x >= n`.
    ///
    /// # Safety
    /// `input` and `out` hold `n` floats and do not overlap.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn copy_floor(input: *const f32, out: *mut f32, n: u64) {
        let i = global_index_x();
        if i < n {
            // SAFETY: i < n.
            unsafe { *out.add(i as usize) = load_readonly(input.add(i as usize)) };
        }
    }

    /// Stage 1 of 4: `out[i] = input[i] * GAMMA + BETA`.
    ///
    /// # Memory
    /// One coalesced read, one coalesced write: 8 bytes per element.
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x >= n`.
    ///
    /// # Safety
    /// As `copy_floor`.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn apply_scale_bias(input: *const f32, out: *mut f32, n: u64) {
        let i = global_index_x();
        if i < n {
            // SAFETY: i < n.
            unsafe { *out.add(i as usize) = scale_bias(load_readonly(input.add(i as usize))) };
        }
    }

    /// Stage 2 of 4: `out[i] = gelu(input[i])`, the chain's one
    /// transcendental.
    ///
    /// # Memory
    /// One coalesced read, one coalesced write: 8 bytes per element.
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x >= n`.
    ///
    /// # Safety
    /// As `copy_floor`.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn apply_gelu(input: *const f32, out: *mut f32, n: u64) {
        let i = global_index_x();
        if i < n {
            // SAFETY: i < n.
            unsafe { *out.add(i as usize) = gelu(load_readonly(input.add(i as usize))) };
        }
    }

    /// Stage 3 of 4: `out[i] = input[i] + r[i]`.
    ///
    /// # Memory
    /// Two coalesced reads and one write: 12 bytes per element, the stage
    /// that makes the staged chain 36 bytes and not 32.
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x >= n`.
    ///
    /// # Safety
    /// `input`, `r` and `out` hold `n` floats; `out` overlaps neither.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn apply_add_residual(
        input: *const f32,
        r: *const f32,
        out: *mut f32,
        n: u64,
    ) {
        let i = global_index_x();
        if i < n {
            let i = i as usize;
            // SAFETY: i < n.
            unsafe {
                *out.add(i) = add_residual(load_readonly(input.add(i)), load_readonly(r.add(i)))
            };
        }
    }

    /// Stage 4 of 4: `out[i] = clamp(input[i], LO, HI)`.
    ///
    /// # Memory
    /// One coalesced read, one coalesced write: 8 bytes per element.
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x >= n`.
    ///
    /// # Safety
    /// As `copy_floor`.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn apply_clamp_range(input: *const f32, out: *mut f32, n: u64) {
        let i = global_index_x();
        if i < n {
            // SAFETY: i < n.
            unsafe { *out.add(i as usize) = clamp_range(load_readonly(input.add(i as usize))) };
        }
    }

    // ANCHOR: chain_fused
    /// All four stages in one thread; the three intermediates stay in
    /// registers.
    ///
    /// # Memory
    /// Two coalesced reads (x, the residual) and one write: 12 bytes per
    /// element against the staged chain's 36.
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x >= n`.
    ///
    /// # Safety
    /// `x`, `r` and `out` hold `n` floats; `out` overlaps neither.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn chain_fused(
        x: *const f32,
        r: *const f32,
        out: *mut f32,
        n: u64,
    ) {
        let i = global_index_x();
        if i < n {
            let i = i as usize;
            // SAFETY: i < n.
            unsafe {
                let v = gelu(scale_bias(load_readonly(x.add(i))));
                *out.add(i) = clamp_range(add_residual(v, load_readonly(r.add(i))));
            }
        }
    }
    // ANCHOR_END: chain_fused

    /// The fused chain with each thread carrying `W` elements, one whole
    /// grid apart (base, base + stride, ...): load all W, transform all W,
    /// store all W, so W loads are in flight per thread and W values live
    /// at once. Same work, bytes and arithmetic for every W.
    ///
    /// # Memory
    /// For a fixed k the warp's 32 lanes touch 32 consecutive floats: every
    /// access coalesces. 12 bytes per element.
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x * W >= n`: the indices cover [0, n) once.
    ///
    /// # Safety
    /// As `chain_fused`.
    // ANCHOR: chain_fused_wide
    #[inline(always)]
    unsafe fn chain_fused_wide<const W: usize>(
        x: *const f32,
        r: *const f32,
        out: *mut f32,
        n: u64,
    ) {
        let base = global_index_x();
        let stride = grid_dim_x() as u64 * block_dim_x() as u64;
        let mut v = [0.0f32; W];
        // Three passes over the W elements, each copied W times by
        // `unrolled` (CUDA C's `#pragma unroll`): with k a constant in every
        // copy, v[k] is a register, never an indexed stack array. The
        // guards are predicates in the PTX, not branches (`load_readonly_if`,
        // `store_if`): what ptxas makes of the twin's `(i < n) ? ... : 0`.
        // Each pass forms its own indices behind `opaque_index`: LLVM would
        // otherwise compute them once and keep W addresses and predicates
        // live across all three passes (W = 8: 37 registers to the twin's
        // 32; with it, 32).
        unrolled::<W>(|k| {
            let i = opaque_index((base + k as u64 * stride) as usize) as u64;
            // SAFETY: read only when i < n.
            v[k] = scale_bias(unsafe { load_readonly_if(i < n, x.wrapping_add(i as usize)) });
        });
        unrolled::<W>(|k| {
            let i = opaque_index((base + k as u64 * stride) as usize) as u64;
            // SAFETY: read only when i < n.
            let res = unsafe { load_readonly_if(i < n, r.wrapping_add(i as usize)) };
            v[k] = add_residual(gelu(v[k]), res);
        });
        unrolled::<W>(|k| {
            let i = opaque_index((base + k as u64 * stride) as usize) as u64;
            // SAFETY: written only when i < n.
            unsafe { store_if(i < n, out.wrapping_add(i as usize), clamp_range(v[k])) };
        });
    }
    // ANCHOR_END: chain_fused_wide

    // ANCHOR: wide_kernels
    /// Exports `chain_fused_wide::<W>` as `chain_fused_wide_W`.
    macro_rules! wide_kernels {
        ($($name:ident = $w:literal),* $(,)?) => {$(
            /// `chain_fused_wide` with this many elements per thread.
            ///
            /// # Safety
            /// As `chain_fused`, with `grid_dim.x * block_dim.x * W >= n`.
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $name(x: *const f32, r: *const f32, out: *mut f32, n: u64) {
                // SAFETY: the caller upholds chain_fused_wide's contract.
                unsafe { chain_fused_wide::<$w>(x, r, out, n) }
            }
        )*};
    }

    crate::fused_widths!(wide_kernels);
    // ANCHOR_END: wide_kernels
}
