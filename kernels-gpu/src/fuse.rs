//! The fuse lesson (chapter 19.2): `y = relu(a * b + c)` as three kernels
//! (multiply into t1, add into t2, relu into y) against one fused kernel
//! that keeps both intermediates in a register.
//!
//! Counted per element, the three kernels make 5 tensor-sized reads and 3
//! writes (8 x 4 = 32 bytes); the fused one 3 reads and 1 write (16 bytes).
//!
//! Rounding: the unfused pipeline stores `a * b` as an f32 before the add,
//! so the product is rounded on its own. The fused kernel writes `a * b + c`
//! plainly, which rustc never contracts into an FMA, and so rounds the same
//! way: the two pipelines agree bit for bit. A separate kernel,
//! `fused_mul_add_relu_fma`, rounds once with an FMA, to show that this is a
//! different result, not a faster way to the same one.

/// Threads per block of every launch: 8 warps.
pub const THREADS_PER_BLOCK: u32 = 256;
/// Elements the timed pipelines start from: 16 Mi floats, 64 MiB a tensor.
/// The host doubles it until each of the six buffers (a, b, c, t1, t2, y)
/// is at least 4x the GPU's L2, so every stage streams from DRAM.
pub const SEED_TIMED_ELEMS: usize = 1 << 24;
/// The correctness size: odd, so no block divides it and every bounds guard
/// runs.
pub const CHECK_ELEMS: usize = 1_048_576 + 611;
/// Bytes of one tensor-sized access: one f32 per element.
pub const ELEM_BYTES: usize = size_of::<f32>();
/// Tensor-sized reads and writes per element of the unfused pipeline:
/// mul reads a, b and writes t1; add reads t1, c and writes t2; relu reads
/// t2 and writes y.
pub const UNFUSED_READS: usize = 5;
/// See [`UNFUSED_READS`].
pub const UNFUSED_WRITES: usize = 3;
/// The fused kernel reads a, b, c once each and writes y once.
pub const FUSED_READS: usize = 3;
/// See [`FUSED_READS`].
pub const FUSED_WRITES: usize = 1;

const _: () = assert!(CHECK_ELEMS % 2 == 1, "odd: no block divides it");
const _: () = assert!(
    (UNFUSED_READS + UNFUSED_WRITES) == 2 * (FUSED_READS + FUSED_WRITES),
    "fusion halves the memory operations: 8 against 4"
);

/// The kernels, compiled only for the GPU.
#[cfg(target_arch = "nvptx64")]
mod kernels {
    use super::*;
    use crate::device::math::fma;
    use crate::device::thread::global_index_x;

    // ANCHOR: helpers
    /// `max(z, 0)` as the seed writes it: `z > 0 ? z : 0`, so a NaN or a
    /// negative zero gives +0.
    #[inline(always)]
    fn relu(z: f32) -> f32 {
        if z > 0.0 { z } else { 0.0 }
    }

    /// This thread's element, if it is below `n`.
    #[inline(always)]
    fn element(n: u64) -> Option<usize> {
        let i = global_index_x();
        (i < n).then_some(i as usize)
    }
    // ANCHOR_END: helpers

    // ANCHOR: stage_mul
    /// Stage 1 of 3: `t1[i] = a[i] * b[i]`, rounded to f32.
    ///
    /// # Memory
    /// Coalesced: two 4-byte reads, one 4-byte write per element (12 bytes).
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x >= n`.
    ///
    /// # Safety
    /// `a`, `b` and `t1` hold `n` floats; `t1` overlaps neither input.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn unfused_mul(
        a: *const f32,
        b: *const f32,
        t1: *mut f32,
        n: u64,
    ) {
        if let Some(i) = element(n) {
            // SAFETY: i < n.
            unsafe { *t1.add(i) = *a.add(i) * *b.add(i) };
        }
    }
    // ANCHOR_END: stage_mul

    /// Stage 2 of 3: `t2[i] = t1[i] + c[i]`.
    ///
    /// # Memory
    /// Coalesced: two 4-byte reads, one 4-byte write per element (12 bytes).
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x >= n`.
    ///
    /// # Safety
    /// `t1`, `c` and `t2` hold `n` floats; `t2` overlaps neither input.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn unfused_add(
        t1: *const f32,
        c: *const f32,
        t2: *mut f32,
        n: u64,
    ) {
        if let Some(i) = element(n) {
            // SAFETY: i < n.
            unsafe { *t2.add(i) = *t1.add(i) + *c.add(i) };
        }
    }

    /// Stage 3 of 3: `y[i] = relu(t2[i])`.
    ///
    /// # Memory
    /// Coalesced: one 4-byte read, one 4-byte write per element (8 bytes).
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x >= n`.
    ///
    /// # Safety
    /// `t2` and `y` hold `n` floats and do not overlap.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn unfused_relu(t2: *const f32, y: *mut f32, n: u64) {
        if let Some(i) = element(n) {
            // SAFETY: i < n.
            unsafe { *y.add(i) = relu(*t2.add(i)) };
        }
    }

    // ANCHOR: fused
    /// `y[i] = relu(a[i] * b[i] + c[i])` in one pass, the product rounded
    /// before the add (rustc emits `mul.rn.f32` then `add.rn.f32`, never an
    /// FMA), so every element equals the unfused pipeline's bit for bit.
    ///
    /// # Memory
    /// Coalesced: three 4-byte reads, one 4-byte write per element (16
    /// bytes); the product and the sum live in registers.
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x >= n`.
    ///
    /// # Safety
    /// `a`, `b`, `c` and `y` hold `n` floats; `y` overlaps no input.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn fused_mul_add_relu(
        a: *const f32,
        b: *const f32,
        c: *const f32,
        y: *mut f32,
        n: u64,
    ) {
        if let Some(i) = element(n) {
            // SAFETY: i < n.
            unsafe { *y.add(i) = relu(*a.add(i) * *b.add(i) + *c.add(i)) };
        }
    }
    // ANCHOR_END: fused

    // ANCHOR: fused_fma
    /// `y[i] = relu(fma(a[i], b[i], c[i]))`: fused, with `a * b + c` rounded
    /// once (`fma.rn.f32`). Not the unfused pipeline's result: wherever the
    /// exact product needs more than 24 significant bits, the unfused form
    /// adds the product's rounding error and this one does not; where the
    /// add cancels most of the product, that error is many units in the
    /// last place of the result.
    ///
    /// # Memory
    /// As `fused_mul_add_relu`: 16 bytes per element.
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x >= n`.
    ///
    /// # Safety
    /// `a`, `b`, `c` and `y` hold `n` floats; `y` overlaps no input.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn fused_mul_add_relu_fma(
        a: *const f32,
        b: *const f32,
        c: *const f32,
        y: *mut f32,
        n: u64,
    ) {
        if let Some(i) = element(n) {
            // SAFETY: i < n.
            unsafe { *y.add(i) = relu(fma(*a.add(i), *b.add(i), *c.add(i))) };
        }
    }
    // ANCHOR_END: fused_fma
}
