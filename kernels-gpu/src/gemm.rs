//! The GEMM lesson: `D = alpha * A * B + beta * C` for row-major `A`
//! (m x k), `B` (k x n) and `C`, `D` (m x n), in FP32, one step at a time
//! from a thread per output to a block that keeps a 128 x 128 tile of `D`
//! in registers, each measured beside cuBLAS's SGEMM at the same size.
//!
//! The output is out of place (`C` read, `D` written) so that the check can
//! poison `D`: a kernel that skips a tile leaves NaNs there. cuBLAS computes
//! in place; the host copies `C` into `D` before each cuBLAS call.
//!
//! Every kernel here adds the k products of an output in ascending k, each
//! with one FMA, and finishes with `fma(alpha, acc, beta * c)`, so all of
//! them (and their CUDA C twins, which NVRTC contracts the same way) give
//! the same bits: the check compares them with each other as well as with
//! the reference.
//!
//! The constants the host needs too live here, once.

/// `alpha` of every launch: exact in binary, so the epilogue's only
/// rounding is the FMA's.
pub const ALPHA: f32 = 0.75;

/// `beta` of every launch: exact in binary, and not 0, so every kernel must
/// read `C`.
pub const BETA: f32 = -0.5;

/// The naive kernel's block: 32 columns (a warp along a row of `D`, so the
/// `B` and `D` accesses coalesce and the `A` element is one broadcast) by 8
/// rows.
pub const NAIVE_BLOCK: (u32, u32) = (32, 8);

/// The shared-memory tile's side: a block of `TILE x TILE` threads, one
/// output each, stages a `TILE x TILE` tile of `A` and of `B` per step.
pub const TILE: u32 = 32;

/// The register-blocked kernel's tile of `D` per block: `BLOCK_M x BLOCK_N`.
pub const BLOCK_M: u32 = 128;
/// See [`BLOCK_M`].
pub const BLOCK_N: u32 = 128;
/// The depth of one step of the register-blocked kernel: the `A` tile is
/// `BLOCK_M x BLOCK_K`, the `B` tile `BLOCK_K x BLOCK_N`.
pub const BLOCK_K: u32 = 8;
/// Outputs a thread of the register-blocked kernel keeps in registers:
/// `THREAD_M x THREAD_N` (64 accumulators).
pub const THREAD_M: u32 = 8;
/// See [`THREAD_M`].
pub const THREAD_N: u32 = 8;
/// Threads of a register-blocked block: one per `THREAD_M x THREAD_N`
/// sub-tile of the block's tile.
pub const REG_THREADS: u32 = (BLOCK_M / THREAD_M) * (BLOCK_N / THREAD_N);

const _: () = assert!(REG_THREADS == 256, "the tile loads below assume 256 threads");
const _: () = assert!(
    (BLOCK_M * BLOCK_K) % REG_THREADS == 0 && (BLOCK_K * BLOCK_N) % REG_THREADS == 0,
    "each thread loads a whole number of elements of each tile"
);

/// Elements of each tile a register-blocked thread loads per step.
pub const REG_LOADS: u32 = BLOCK_M * BLOCK_K / REG_THREADS;

/// The GPU kernels, compiled only for the GPU.
#[cfg(target_arch = "nvptx64")]
mod kernels {
    use super::*;
    use crate::device::math::fma;
    use crate::device::memory::load_readonly;
    use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x, thread_idx_y};
    use crate::device::unroll::unrolled;
    use crate::shared_array;

    shared_array!(GEMM_TILE_A: [f32; (TILE * TILE) as usize]);
    shared_array!(GEMM_TILE_B: [f32; (TILE * TILE) as usize]);
    shared_array!(GEMM_REG_A: [f32; (BLOCK_K * BLOCK_M) as usize]);
    shared_array!(GEMM_REG_B: [f32; (BLOCK_K * BLOCK_N) as usize]);

    /// `a[row][col]` of a row-major matrix with `cols` columns, or 0 outside
    /// `rows x cols`: the tiles' edge guard. The index is formed in 64 bits
    /// (an 8192 x 8192 matrix has 2^26 elements, 2^28 bytes).
    ///
    /// # Safety
    /// `a` holds `rows * cols` floats nothing writes during the kernel.
    #[inline(always)]
    unsafe fn load_or_zero(a: *const f32, row: u32, col: u32, rows: u32, cols: u32) -> f32 {
        if row < rows && col < cols {
            // SAFETY: inside the matrix.
            unsafe { load_readonly(a.add(row as usize * cols as usize + col as usize)) }
        } else {
            0.0
        }
    }

    /// `d[row][col] = alpha * acc + beta * c[row][col]` inside `m x n`: the
    /// epilogue every kernel shares, one FMA after `beta * c`, as the twins'
    /// `fmaf(alpha, acc, beta * c)`.
    ///
    /// # Safety
    /// `c` and `d` hold `m * n` floats; `d` overlaps nothing else.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn store_d(d: *mut f32, c: *const f32, row: u32, col: u32, m: u32, n: u32, alpha: f32, beta: f32, acc: f32) {
        if row < m && col < n {
            let i = row as usize * n as usize + col as usize;
            // SAFETY: inside the matrices.
            unsafe { *d.add(i) = fma(alpha, acc, beta * load_readonly(c.add(i))) };
        }
    }

    // ANCHOR: gemm_naive
    /// `D = alpha * A * B + beta * C`, one thread per element of `D`: the dot
    /// product of a row of `A` and a column of `B`, k FMAs in ascending k.
    ///
    /// # Memory
    /// 2k loads per output. A warp spans 32 columns of one row: the `B`
    /// loads and the `D` store coalesce, the `A` load is one address for all
    /// 32 lanes. Every element of `A` is read n times and of `B` m times,
    /// from the caches: the kernel is bound by load instructions, not DRAM.
    ///
    /// # Launch assumption
    /// `NAIVE_BLOCK` blocks over a grid that covers `n` columns and `m`
    /// rows; threads outside return.
    ///
    /// # Safety
    /// `a` holds m x k floats, `b` k x n, `c` and `d` m x n; `d` overlaps
    /// none of them.
    #[unsafe(no_mangle)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe extern "ptx-kernel" fn gemm_naive(
        m: u32,
        n: u32,
        k: u32,
        alpha: f32,
        a: *const f32,
        b: *const f32,
        beta: f32,
        c: *const f32,
        d: *mut f32,
    ) {
        let col = block_idx_x() * NAIVE_BLOCK.0 + thread_idx_x();
        let row = block_idx_y() * NAIVE_BLOCK.1 + thread_idx_y();
        if row >= m || col >= n {
            return;
        }
        let mut acc = 0.0f32;
        let (row_a, n_wide) = (row as usize * k as usize, n as usize);
        for p in 0..k as usize {
            // SAFETY: row < m, col < n, p < k: inside A and B.
            acc = unsafe { fma(load_readonly(a.add(row_a + p)), load_readonly(b.add(p * n_wide + col as usize)), acc) };
        }
        // SAFETY: row < m, col < n.
        unsafe { store_d(d, c, row, col, m, n, alpha, beta, acc) };
    }
    // ANCHOR_END: gemm_naive

    // ANCHOR: gemm_tiled
    /// The same output per thread, with `A` and `B` staged through shared
    /// memory a `TILE x TILE` tile at a time: each element a block loads
    /// from global memory is used `TILE` times from shared memory.
    ///
    /// # Memory
    /// Per step each thread loads one element of each tile (coalesced along
    /// a row) and reads 2 x `TILE` from shared memory: global loads drop
    /// from 2k to 2k / `TILE` per output. Outside the matrices the tiles
    /// hold 0, whose products add nothing, so any m, n, k works.
    ///
    /// # Launch assumption
    /// `TILE x TILE` blocks over a grid that covers `n` columns and `m`
    /// rows. Every thread reaches both barriers of every step (the guards
    /// cover loads and the store, never a barrier).
    ///
    /// # Safety
    /// As [`gemm_naive`].
    #[unsafe(no_mangle)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe extern "ptx-kernel" fn gemm_tiled(
        m: u32,
        n: u32,
        k: u32,
        alpha: f32,
        a: *const f32,
        b: *const f32,
        beta: f32,
        c: *const f32,
        d: *mut f32,
    ) {
        let (tile_a, tile_b) = (GEMM_TILE_A::shared(), GEMM_TILE_B::shared());
        let (tx, ty) = (thread_idx_x(), thread_idx_y());
        let col = block_idx_x() * TILE + tx;
        let row = block_idx_y() * TILE + ty;
        let mut acc = 0.0f32;
        let mut p0 = 0;
        while p0 < k {
            // SAFETY: the loads are guarded; ty * TILE + tx < TILE^2.
            unsafe {
                tile_a.write(ty * TILE + tx, load_or_zero(a, row, p0 + tx, m, k));
                tile_b.write(ty * TILE + tx, load_or_zero(b, p0 + ty, col, k, n));
            }
            sync_threads();
            unrolled::<{ TILE as usize }>(|q| {
                let q = q as u32;
                // SAFETY: both indices are below TILE^2.
                acc = unsafe { fma(tile_a.read(ty * TILE + q), tile_b.read(q * TILE + tx), acc) };
            });
            sync_threads();
            p0 += TILE;
        }
        // SAFETY: the store is guarded.
        unsafe { store_d(d, c, row, col, m, n, alpha, beta, acc) };
    }
    // ANCHOR_END: gemm_tiled

    // ANCHOR: gemm_regblock
    /// Each thread keeps a `THREAD_M x THREAD_N` block of `D` in registers
    /// (2D register blocking): per step of depth `BLOCK_K`, a block stages a
    /// `BLOCK_M x BLOCK_K` tile of `A` (transposed, so a thread's `THREAD_M`
    /// values of one column are adjacent) and a `BLOCK_K x BLOCK_N` tile of
    /// `B`, and each thread multiplies a column of `THREAD_M` values of `A`
    /// by a row of `THREAD_N` values of `B` into its 64 accumulators.
    ///
    /// # Memory
    /// Per step each thread loads `REG_LOADS` elements of each tile from
    /// global memory and reads `THREAD_M + THREAD_N` = 16 values from shared
    /// memory per 64 FMAs, where the tiled kernel reads 2 per FMA. Edges
    /// load 0 and skip the store, so any m, n, k works.
    ///
    /// # Launch assumption
    /// `REG_THREADS` (256) threads in one dimension per block, a grid of
    /// `ceil(n / BLOCK_N) x ceil(m / BLOCK_M)` blocks. Every thread reaches
    /// every barrier.
    ///
    /// # Safety
    /// As [`gemm_naive`].
    #[unsafe(no_mangle)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe extern "ptx-kernel" fn gemm_regblock(
        m: u32,
        n: u32,
        k: u32,
        alpha: f32,
        a: *const f32,
        b: *const f32,
        beta: f32,
        c: *const f32,
        d: *mut f32,
    ) {
        let (tile_a, tile_b) = (GEMM_REG_A::shared(), GEMM_REG_B::shared());
        let tid = thread_idx_x();
        let (block_row, block_col) = (block_idx_y() * BLOCK_M, block_idx_x() * BLOCK_N);
        // This thread's sub-tile: rows first_row.., columns first_col.. of
        // the block's tile.
        let first_row = (tid / (BLOCK_N / THREAD_N)) * THREAD_M;
        let first_col = (tid % (BLOCK_N / THREAD_N)) * THREAD_N;
        let mut acc = [[0.0f32; THREAD_N as usize]; THREAD_M as usize];
        let mut p0 = 0;
        while p0 < k {
            unrolled::<{ REG_LOADS as usize }>(|s| {
                let e = tid + s as u32 * REG_THREADS;
                // A tile element (r, q) of BLOCK_M x BLOCK_K, stored at
                // [q][r]; B tile element (q, c) of BLOCK_K x BLOCK_N at [q][c].
                let (r, q) = (e / BLOCK_K, e % BLOCK_K);
                let (qb, cb) = (e / BLOCK_N, e % BLOCK_N);
                // SAFETY: the loads are guarded; both shared indices are
                // below BLOCK_K * BLOCK_M = BLOCK_K * BLOCK_N.
                unsafe {
                    tile_a.write(q * BLOCK_M + r, load_or_zero(a, block_row + r, p0 + q, m, k));
                    tile_b.write(qb * BLOCK_N + cb, load_or_zero(b, p0 + qb, block_col + cb, k, n));
                }
            });
            sync_threads();
            unrolled::<{ BLOCK_K as usize }>(|q| {
                let q = q as u32;
                let mut col_a = [0.0f32; THREAD_M as usize];
                let mut row_b = [0.0f32; THREAD_N as usize];
                // SAFETY: q < BLOCK_K, first_row + i < BLOCK_M and
                // first_col + j < BLOCK_N.
                unsafe {
                    unrolled::<{ THREAD_M as usize }>(|i| col_a[i] = tile_a.read(q * BLOCK_M + first_row + i as u32));
                    unrolled::<{ THREAD_N as usize }>(|j| row_b[j] = tile_b.read(q * BLOCK_N + first_col + j as u32));
                }
                unrolled::<{ THREAD_M as usize }>(|i| {
                    unrolled::<{ THREAD_N as usize }>(|j| acc[i][j] = fma(col_a[i], row_b[j], acc[i][j]));
                });
            });
            sync_threads();
            p0 += BLOCK_K;
        }
        unrolled::<{ THREAD_M as usize }>(|i| {
            unrolled::<{ THREAD_N as usize }>(|j| {
                let (row, col) = (block_row + first_row + i as u32, block_col + first_col + j as u32);
                // SAFETY: the store is guarded.
                unsafe { store_d(d, c, row, col, m, n, alpha, beta, acc[i][j]) };
            });
        });
    }
    // ANCHOR_END: gemm_regblock
}
