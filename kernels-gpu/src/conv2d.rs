//! The conv2d lesson (chapter 19.4): a 3x3 convolution of one n x n image,
//! "valid" (no padding, (n - 2)^2 outputs) and "same" (zero padding, n^2
//! outputs), one thread per output, measured in GFLOP/s.
//!
//! Every tap is one multiply and one add, fused into one FMA in a fixed
//! order (row-major over the 3 x 3 taps, starting from 0): the CUDA C twin's
//! `sum += x * w` contracts to the same FMAs, and the host's exact mirror
//! does the same in f32, so the three agree bit for bit.

/// Taps of the stencil along each side.
pub const TAPS_PER_SIDE: usize = 3;
/// Taps in all: one multiply and one add each.
pub const TAPS: usize = TAPS_PER_SIDE * TAPS_PER_SIDE;
/// FLOP per tap: the seed's count (one multiply, one add), though the GPU
/// issues them as one FMA.
pub const FLOP_PER_TAP: usize = 2;

/// Threads per block along x (columns): one warp covers 32 neighbouring
/// outputs of a row, so each tap's loads coalesce into 128-byte lines.
pub const BLOCK_X: u32 = 32;
/// Threads per block along y (rows): 8 rows, 256 threads, and the rows of a
/// block share 8 + 2 input rows through L1.
pub const BLOCK_Y: u32 = 8;

/// The seed's two sizes (its host mirrors ran at these).
pub const SEED_SIDES: [usize; 2] = [64, 128];
/// The side the large images start from: 4096 x 4096 floats, 64 MiB. The
/// host doubles it until an image is at least 4x the GPU's L2 (8192 on an
/// H200) and times that side and half of it beside the seed's.
pub const SEED_LARGE_SIDE: usize = 4096;
/// The correctness side, apart from the timed ones: 1000 + 27 = 1027, so
/// neither the valid output's side (1025) nor the same output's (1027) is a
/// multiple of BLOCK_X or BLOCK_Y and every edge guard fires.
pub const CHECK_SIDE: usize = 1027;
/// The smallest image a valid convolution has an output for.
pub const MIN_SIDE: usize = TAPS_PER_SIDE;

// ANCHOR: taps
/// The 3 x 3 weights, row-major, passed to the kernels by value (a kernel
/// parameter lives in the constant bank: every thread reads the same 36
/// bytes without a global load).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Taps3x3 {
    /// `w[r * 3 + c]` weighs input (row + r, col + c) of a valid output.
    pub w: [f32; TAPS],
}
// ANCHOR_END: taps

const _: () = assert!(
    core::mem::size_of::<Taps3x3>() == TAPS * 4,
    "nine packed floats, as the C twin's struct"
);
const _: () = assert!(
    (BLOCK_X * BLOCK_Y) as usize <= 1024,
    "a block holds at most 1024 threads"
);
const _: () = assert!(
    BLOCK_X.is_multiple_of(32),
    "a block row is whole warps, so each warp reads one row segment"
);
const _: () = assert!(
    !(CHECK_SIDE - 2).is_multiple_of(BLOCK_X as usize)
        && !(CHECK_SIDE - 2).is_multiple_of(BLOCK_Y as usize)
        && !CHECK_SIDE.is_multiple_of(BLOCK_X as usize)
        && !CHECK_SIDE.is_multiple_of(BLOCK_Y as usize),
    "the check side leaves partial blocks on both kernels"
);

/// The kernels, compiled only for the GPU.
#[cfg(target_arch = "nvptx64")]
mod kernels {
    use super::*;
    use crate::device::math::fma;
    use crate::device::memory::{load_readonly, opaque_index, opaque_u32};
    use crate::device::thread::{global_index_x_u32, global_index_y_u32};

    /// This thread's output column and row.
    #[inline(always)]
    fn output_col_row() -> (u32, u32) {
        (global_index_x_u32(), global_index_y_u32())
    }

    /// The valid ("basic") convolution: for row, col < n - 2,
    /// `out[row * (n - 2) + col] = sum over r, c < 3 of
    /// input[(row + r) * n + col + c] * taps.w[r * 3 + c]`, as nine FMAs in
    /// row-major tap order from 0.
    ///
    /// # Memory
    /// Each warp reads 32 consecutive floats per tap row (coalesced,
    /// through the read-only path `ld.global.nc`); neighbouring threads and
    /// the block's 8 rows reuse each input 9 times through L1/L2, so DRAM
    /// sees about 4 bytes in and 4 bytes out per output: 18 FLOP per 8
    /// bytes, 2.25 FLOP/byte.
    ///
    /// # Launch assumption
    /// A 2D grid of BLOCK_X x BLOCK_Y blocks covering (n - 2) x (n - 2)
    /// outputs; threads past the edge return.
    ///
    /// # Safety
    /// `input` holds n * n floats, `out` (n - 2)^2, they do not overlap, and
    /// n >= 3.
    // ANCHOR: conv2d_valid
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn conv2d_valid(
        input: *const f32,
        out: *mut f32,
        n: u32,
        taps: Taps3x3,
    ) {
        let (col, row) = output_col_row();
        let m = n - 2;
        // Two compares, as the twin's guard (see opaque_u32), not one of
        // their maximum.
        if (row >= m) | (col >= opaque_u32(m)) {
            return;
        }
        let w = taps.w;
        let mut sum = 0.0f32;
        for r in 0..TAPS_PER_SIDE as u32 {
            let line = opaque_index((row + r) as usize * n as usize + col as usize);
            for c in 0..TAPS_PER_SIDE as u32 {
                // SAFETY: row + r <= n - 1 and col + c <= n - 1, inside the
                // n x n input, which nothing writes during the launch.
                let x = unsafe { load_readonly(input.add(line + c as usize)) };
                sum = fma(x, w[(r * 3 + c) as usize], sum);
            }
        }
        // SAFETY: row, col < n - 2: inside the (n - 2)^2 output.
        unsafe { *out.add(opaque_index(row as usize * m as usize + col as usize)) = sum };
    }
    // ANCHOR_END: conv2d_valid

    /// The padded ("same") convolution: for row, col < n,
    /// `out[row * n + col] = sum over r, c < 3 of
    /// x(row + r - 1, col + c - 1) * taps.w[r * 3 + c]`, where x is the input
    /// inside the image and 0 outside it (zero padding); nine FMAs in
    /// row-major tap order from 0, the padded taps included (an FMA with 0).
    ///
    /// # Memory
    /// As [`conv2d_valid`]: coalesced read-only loads, 9x reuse through the
    /// caches, about 8 DRAM bytes per output (2.25 FLOP/byte). The padding
    /// is a bounds test per tap, not a padded copy of the image.
    ///
    /// # Launch assumption
    /// A 2D grid of BLOCK_X x BLOCK_Y blocks covering n x n outputs; threads
    /// past the edge return.
    ///
    /// # Safety
    /// `input` and `out` hold n * n floats each and do not overlap.
    // ANCHOR: conv2d_same
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn conv2d_same(
        input: *const f32,
        out: *mut f32,
        n: u32,
        taps: Taps3x3,
    ) {
        let (col, row) = output_col_row();
        if row >= n || col >= n {
            return;
        }
        let w = taps.w;
        let mut sum = 0.0f32;
        for r in 0..TAPS_PER_SIDE as u32 {
            // Row -1 wraps to u32::MAX, so one unsigned test covers both edges.
            let y = (row + r).wrapping_sub(1);
            for c in 0..TAPS_PER_SIDE as u32 {
                let x = (col + c).wrapping_sub(1);
                let v = if y < n && x < n {
                    // SAFETY: (y, x) is inside the n x n input, which nothing
                    // writes during the launch.
                    unsafe { load_readonly(input.add(y as usize * n as usize + x as usize)) }
                } else {
                    0.0
                };
                sum = fma(v, w[(r * 3 + c) as usize], sum);
            }
        }
        // SAFETY: row, col < n: inside the n x n output.
        unsafe { *out.add(row as usize * n as usize + col as usize) = sum };
    }
    // ANCHOR_END: conv2d_same
}
