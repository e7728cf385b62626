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

use crate::wgmma_layout::{descriptor_128b, descriptor_advance, swizzle_128b};

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

/// The 1D register-blocked kernel's tile of `D` per block: `R1_BLOCK_M x
/// R1_BLOCK_N`, `R1_BLOCK_K` deep per step.
pub const R1_BLOCK_M: u32 = 64;
/// See [`R1_BLOCK_M`].
pub const R1_BLOCK_N: u32 = 64;
/// See [`R1_BLOCK_M`].
pub const R1_BLOCK_K: u32 = 8;
/// Outputs a thread of the 1D register-blocked kernel keeps in registers:
/// `R1_THREAD_M` consecutive rows of one column of `D`.
pub const R1_THREAD_M: u32 = 8;
/// Threads of a 1D register-blocked block: one per column of `R1_THREAD_M`
/// outputs of the block's tile.
pub const R1_THREADS: u32 = R1_BLOCK_M / R1_THREAD_M * R1_BLOCK_N;

const _: () = assert!(
    R1_THREADS == R1_BLOCK_M * R1_BLOCK_K && R1_THREADS == R1_BLOCK_K * R1_BLOCK_N,
    "each thread of gemm_regblock_1d loads exactly one element of each tile a step"
);
const _: () = assert!(
    R1_BLOCK_N.is_multiple_of(32),
    "a warp's 32 threads share one group of rows, so their reads of the A tile are one broadcast"
);

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

const _: () = assert!(
    REG_THREADS == 256,
    "the tile loads below assume 256 threads"
);
const _: () = assert!(
    BLOCK_M == 128 && BLOCK_N == 128 && BLOCK_K == 8 && THREAD_M == 8 && THREAD_N == 8,
    "gemm_vectorized's layout: a float4 of each tile a thread, a 16 x 16 grid of 4 x 4 blocks"
);
const _: () = assert!(
    (BLOCK_M * BLOCK_K).is_multiple_of(REG_THREADS)
        && (BLOCK_K * BLOCK_N).is_multiple_of(REG_THREADS),
    "each thread loads a whole number of elements of each tile"
);

/// Elements of each tile a register-blocked thread loads per step (the A
/// and B tiles are the same size: `BLOCK_M == BLOCK_N`).
pub const REG_LOADS: u32 = BLOCK_M * BLOCK_K / REG_THREADS;
const _: () = assert!(BLOCK_M == BLOCK_N, "REG_LOADS serves both tiles");

/// Blocks of `REG_THREADS` threads the warp-tiled kernel asks an SM to
/// hold at once (its launch bounds, as CUDA C's `__launch_bounds__(256,
/// 2)`): ptxas keeps it at 128 registers a thread or fewer.
pub const WARP_MIN_BLOCKS: u32 = 2;

/// Blocks of `TC_THREADS` threads the f16 kernel (`gemm_f16_mma`) asks an
/// SM to hold at once (its launch bounds): ptxas keeps it at 128 registers
/// a thread or fewer, where it would take 135 on sm_90 and so fit one block
/// an SM. (On a T4 shared memory holds one block an SM anyway: its 64 KiB
/// are less than two blocks' `TC_STAGES * TC_STAGE_BYTES`.)
pub const F16_MIN_BLOCKS: u32 = 2;

/// The tensor-core kernel's tile of `D` per block (BF16 inputs, FP32
/// accumulation): `TC_BLOCK_M x TC_BLOCK_N`, `TC_BLOCK_K` deep per step.
pub const TC_BLOCK_M: u32 = 128;
/// See [`TC_BLOCK_M`].
pub const TC_BLOCK_N: u32 = 128;
/// See [`TC_BLOCK_M`].
pub const TC_BLOCK_K: u32 = 32;
/// Threads of a tensor-core block: 8 warps, as 2 (rows) x 4 (columns), each
/// computing a 64 x 32 tile of the block's as 4 x 4 `mma` tiles of 16 x 8.
pub const TC_THREADS: u32 = 256;
/// bf16 elements of padding after each shared row, so the 8 rows one
/// `ldmatrix` reads fall in 8 different 16-byte bank groups (a row of A's 40
/// elements is 80 bytes: the 8 rows start at 0, 80, 160, ... modulo 128,
/// all different; a row of B's 136 is 272 bytes, 16 modulo 128).
pub const TC_PAD: u32 = 8;
/// Row strides of the shared tiles, in bf16 elements.
pub const TC_A_STRIDE: u32 = TC_BLOCK_K + TC_PAD;
/// See [`TC_A_STRIDE`].
pub const TC_B_STRIDE: u32 = TC_BLOCK_N + TC_PAD;
/// Bytes of one pipeline stage in shared memory for a block tile `bn`
/// columns wide: the A tile (`TC_BLOCK_M` rows of `TC_A_STRIDE` bf16) then
/// the B tile (`TC_BLOCK_K` rows of `bn + TC_PAD` bf16).
pub const fn tc_stage_bytes(bn: u32) -> u32 {
    2 * (TC_BLOCK_M * TC_A_STRIDE + TC_BLOCK_K * (bn + TC_PAD))
}
/// Bytes of one pipeline stage of the 128-column tiles.
pub const TC_STAGE_BYTES: u32 = tc_stage_bytes(TC_BLOCK_N);
/// Pipeline stages: the copy of the next tile runs while this one is used.
pub const TC_STAGES: u32 = 2;
/// The alignment the tensor-core kernel needs of `k` and `n`: a 16-byte
/// `cp.async` chunk is 8 bf16 elements, so rows must start on one.
pub const TC_ALIGN: usize = 8;

const _: () = assert!(
    TC_STAGES * TC_STAGE_BYTES <= 48 * 1024,
    "static shared memory is at most 48 KiB"
);

/// Stages of the pipelined tensor-core kernel, in dynamic shared memory.
pub const TC_PIPE_STAGES: u32 = 4;
/// Dynamic shared bytes of the pipelined tensor-core kernel.
pub const TC_PIPE_BYTES: u32 = TC_PIPE_STAGES * TC_STAGE_BYTES;
const _: () = assert!(
    TC_PIPE_STAGES >= 2 && TC_PIPE_BYTES <= 99 * 1024,
    "every GPU of compute capability 8.0 and up gives a block 99 KiB of shared memory or more"
);
const _: () = assert!(
    (TC_BLOCK_M * TC_BLOCK_K / 8).is_multiple_of(TC_THREADS)
        && (TC_BLOCK_K * TC_BLOCK_N / 8).is_multiple_of(TC_THREADS),
    "each thread copies a whole number of 16-byte chunks of each tile"
);

/// The swizzled tensor-core kernel's tile of `D` per block
/// (`gemm_bf16_swizzled`): `SW_BLOCK_M x SW_BLOCK_N`, `SW_BLOCK_K` deep per
/// step. Chosen among 15 shapes timed beside cuBLAS on an H200
/// (docs/results/h200-2026-12-02-mma-explore): by the median of three
/// rounds, second at 4096^3 (behind 128 x 256 x 64) and fifth at 8192^3,
/// where four shapes of 8 warps over 128 x 256 or 256 x 128 blocks (96 to
/// 144 KiB of shared memory a block, one block an SM) were 0.4 to 6%
/// faster. It needs 64 KiB and holds two blocks an SM.
pub const SW_BLOCK_M: u32 = 128;
/// See [`SW_BLOCK_M`].
pub const SW_BLOCK_N: u32 = 128;
/// See [`SW_BLOCK_M`].
pub const SW_BLOCK_K: u32 = 32;
/// Threads of a swizzled block: 4 warps as 2 x 2, each a 64 x 64 tile of
/// the block's as 4 x 8 `mma` tiles of 16 x 8 (128 f32 accumulators a
/// thread).
pub const SW_THREADS: u32 = 128;
/// Blocks of `SW_THREADS` `gemm_bf16_swizzled` asks an SM to hold at once
/// (its launch bounds): 255 registers a thread or fewer, so two blocks'
/// 8 warps fit an SM's 65536 registers.
pub const SW_MIN_BLOCKS: u32 = 2;
/// `cp.async` stages of `gemm_bf16_swizzled`, in dynamic shared memory.
pub const SW_STAGES: u32 = 4;
/// Block rows both swizzled kernels' grids walk together ([`grouped_block`]).
pub const SW_GROUP: u32 = 8;
/// Bytes of a swizzled stage's A tile `bk` deep: `SW_BLOCK_M` rows of `bk`
/// bf16, no padding ([`sw_offset`]).
pub const fn sw_a_bytes(bk: u32) -> u32 {
    SW_BLOCK_M * bk * 2
}
/// Bytes of one swizzled stage of a block `bn` wide, `bk` deep: the A tile
/// ([`sw_a_bytes`]), then the B tile (`bk` rows of `bn` bf16).
pub const fn sw_stage_bytes(bn: u32, bk: u32) -> u32 {
    sw_a_bytes(bk) + bk * bn * 2
}
/// Bytes of one stage's A tile of `gemm_bf16_swizzled` (`SW_BLOCK_M x
/// SW_BLOCK_K`).
pub const SW_A_BYTES: u32 = sw_a_bytes(SW_BLOCK_K);
/// Bytes of one stage of `gemm_bf16_swizzled` (its A tile, then `SW_BLOCK_K
/// x SW_BLOCK_N` of B).
pub const SW_STAGE_BYTES: u32 = sw_stage_bytes(SW_BLOCK_N, SW_BLOCK_K);
/// Dynamic shared bytes of `gemm_bf16_swizzled` (64 KiB).
pub const SW_BYTES: u32 = SW_STAGES * SW_STAGE_BYTES;
/// 16-byte chunks (8 bf16) in a row of the swizzled A tile: the `width`
/// of its [`sw_offset`].
pub const SW_A_ROW_CHUNKS: u32 = SW_BLOCK_K / 8;
/// 16-byte chunks in a row of the swizzled B tile ([`SW_A_ROW_CHUNKS`]).
pub const SW_B_ROW_CHUNKS: u32 = SW_BLOCK_N / 8;
const _: () = assert!(
    SW_STAGES >= 2 && SW_BYTES <= 99 * 1024 && SW_BLOCK_K.is_multiple_of(32),
    "every GPU of compute capability 8.0 and up gives a block 99 KiB; a step is an even number of 16s of k"
);
const _: () = assert!(
    (SW_BLOCK_M * SW_BLOCK_K / 8).is_multiple_of(SW_THREADS)
        && (SW_BLOCK_K * SW_BLOCK_N / 8).is_multiple_of(SW_THREADS),
    "each thread copies a whole number of 16-byte chunks of each tile"
);
const _: () = assert!(
    (SW_A_ROW_CHUNKS == 4 || SW_A_ROW_CHUNKS.is_multiple_of(8))
        && SW_B_ROW_CHUNKS.is_multiple_of(8)
        && (SWW_BLOCK_K / 8).is_multiple_of(8)
        && (SWW_BLOCK_N / 8).is_multiple_of(8),
    "sw_offset swizzles rows of 4 chunks or of a multiple of 8"
);

/// The wide swizzled kernel's block (`gemm_bf16_swizzled_wide`): `SW_BLOCK_M
/// x SWW_BLOCK_N`, `SWW_BLOCK_K` deep a step, 8 warps of 64 x 64 as 2 x 4,
/// `SWW_STAGES` stages. The fastest of the 15 shapes timed beside cuBLAS at
/// 8192^3 on an H200 (383.4 to 390.2 TFLOP/s in three rounds, against 364.4
/// to 372.2 for [`SW_BLOCK_M`]'s shape;
/// docs/results/h200-2026-12-02-mma-explore). It needs `SWW_BYTES` (144
/// KiB) of shared memory a block: compute capability 8.0 and 8.7 give a
/// block up to 163 KiB and 9.0 227 KiB, 8.6 and 8.9 only 99, where the
/// host refuses it with the reason.
pub const SWW_BLOCK_N: u32 = 256;
/// See [`SWW_BLOCK_N`].
pub const SWW_BLOCK_K: u32 = 64;
/// Threads of a wide swizzled block: 8 warps.
pub const SWW_THREADS: u32 = 256;
/// Blocks of `SWW_THREADS` the wide kernel asks an SM to hold (its launch
/// bounds): one, so a thread may take 255 registers.
pub const SWW_MIN_BLOCKS: u32 = 1;
/// `cp.async` stages of the wide kernel.
pub const SWW_STAGES: u32 = 3;
/// Dynamic shared bytes of the wide kernel (144 KiB).
pub const SWW_BYTES: u32 = SWW_STAGES * sw_stage_bytes(SWW_BLOCK_N, SWW_BLOCK_K);
const _: () = assert!(
    SWW_BYTES <= 163 * 1024 && SWW_THREADS == SWW_BLOCK_N && SW_THREADS == SW_BLOCK_N,
    "the wide kernel fits compute capability 8.0's 163 KiB a block; a swizzled block of BN threads is 2 x BN / 64 warps"
);

/// Byte offset of 16-byte chunk `chunk` of row `row` in a shared tile
/// `width` chunks wide (4, or a multiple of 8), XOR-swizzled instead of
/// padded: with rows of 8 chunks or more, the chunk's low 3 bits XOR the
/// row's; with rows of 4 chunks (64 bytes, two rows to a 128-byte line),
/// XOR bits 1 and 2 of the row. Either way the 8 rows one `ldmatrix` phase
/// reads at one chunk fall in 8 different 16-byte bank groups, and the 32
/// consecutive chunks a warp's `cp.async` writes cover each group 4 times:
/// neither side has a bank conflict, and the tile has no padding bytes.
/// (For rows of 8 chunks this is CUTLASS's `Swizzle<3, 4, 3>`; for wider
/// rows the XOR still takes the row's low 3 bits.)
pub const fn sw_offset(row: u32, chunk: u32, width: u32) -> u32 {
    let slot = if width >= 8 {
        chunk ^ (row & 7)
    } else {
        chunk ^ ((row >> 1) & 3)
    };
    (row * width + slot) * 16
}

/// The (block row, block column) that block `id` (`blockIdx.y * gridDim.x
/// + blockIdx.x`) of a grid of `rows x cols` blocks computes, walking the
/// grid in groups of `group` block rows, down each column of a group before
/// the next: blocks that run at once then share A's row panels and B's
/// column panels in L2 (Triton's matmul tutorial, "L2 cache
/// optimizations"). The last group may be shorter. A bijection on `0..rows
/// * cols`.
pub const fn grouped_block(id: u32, rows: u32, cols: u32, group: u32) -> (u32, u32) {
    let per_group = group * cols;
    let first = id / per_group * group;
    let size = if rows - first < group {
        rows - first
    } else {
        group
    };
    let within = id % per_group;
    (first + within % size, within / size)
}

/// Block rows the Hopper kernels' grids walk together ([`grouped_block`]).
/// At 8192^3 (a grid of 32 x 64 blocks of 128 x 256, one block an SM, 132
/// SMs) a wave walking row by row covers about 4 block rows and all 32 of
/// B's 4 MiB column panels, about 138 MiB of A and B; in groups of 8 rows
/// it covers about 17 column panels and 8 row panels, about 84 MiB. Either
/// is more than the L2 (50 MiB on an H100, 60 on an H200), so what the
/// grouping changes is how often B comes from DRAM: about 16 times a GEMM
/// row by row, about 8 times grouped.
pub const WG_GROUP: u32 = 8;

/// The Hopper kernel's tile of `D` per block (`wgmma`, sm_90a module):
/// `WG_BLOCK_M x WG_BLOCK_N`, `WG_BLOCK_K` deep per step. A step's k extent
/// is 64 bf16, 128 bytes: one row of the 128-byte swizzle. (In trial runs
/// on an H200, 128 x 256 was faster than 128 x 128 with 3 to 6 stages.)
pub const WG_BLOCK_M: u32 = 128;
/// See [`WG_BLOCK_M`].
pub const WG_BLOCK_N: u32 = 256;
/// See [`WG_BLOCK_M`].
pub const WG_BLOCK_K: u32 = 64;
/// Threads of a Hopper block: 2 warpgroups of 128, each computing 64 rows
/// by `WG_BLOCK_N` columns of the block's tile with `wgmma` m64n256k16
/// (128 f32 accumulators a thread).
pub const WG_THREADS: u32 = 256;
/// `cp.async` stages of the Hopper kernel, in dynamic shared memory.
pub const WG_STAGES: u32 = 4;
/// Bytes of one stage's A tile: `WG_BLOCK_M` rows of 128 bytes, 128-byte
/// swizzled ([`wg_a_offset`]).
pub const WG_A_BYTES: u32 = WG_BLOCK_M * WG_BLOCK_K * 2;
/// Bytes of one stage's B tile: `WG_BLOCK_N / 64` blocks of 64 columns,
/// each `WG_BLOCK_K` rows of 128 bytes, 128-byte swizzled ([`wg_b_offset`]).
pub const WG_B_BYTES: u32 = WG_BLOCK_K * WG_BLOCK_N * 2;
/// Bytes of one stage for a block tile `bn` columns wide: the A tile, then
/// the B tile (`WG_BLOCK_K` rows of `bn` bf16).
pub const fn wg_stage_bytes(bn: u32) -> u32 {
    WG_A_BYTES + WG_BLOCK_K * bn * 2
}
/// Bytes of one stage of the kernel's tiles: the A tile, then the B tile.
pub const WG_STAGE_BYTES: u32 = wg_stage_bytes(WG_BLOCK_N);
/// The alignment a 128-byte-swizzled tile needs (its 8-row atoms start on
/// 1024-byte boundaries, so a descriptor's base offset is 0). Dynamic
/// shared memory is only promised 16, so the kernel rounds its base up and
/// the launch asks for this much more.
pub const WG_TILE_ALIGN: u32 = 1024;
/// Dynamic shared bytes of the Hopper kernel: its stages and the slack to
/// align them.
pub const WG_SHARED_BYTES: u32 = WG_STAGES * WG_STAGE_BYTES + WG_TILE_ALIGN;
/// Dynamic shared bytes of the TMA kernel: its stages, an 8-byte `mbarrier`
/// a stage, and the slack to align them.
pub const WG_TMA_SHARED_BYTES: u32 = WG_STAGES * (WG_STAGE_BYTES + 8) + WG_TILE_ALIGN;
/// Nanoseconds the TMA kernel waits for a stage's copies before it traps: a
/// tile's copies take microseconds, so a stage that has not landed after 4
/// s never will, and the launch fails naming the kernel instead of hanging
/// (`device::tma::mbarrier_wait_parity`).
pub const WG_MBARRIER_TIMEOUT_NS: u64 = 4_000_000_000;
/// The box of one TMA copy of A: 64 elements of k (128 bytes, a row of the
/// 128-byte swizzle, the widest box it allows) by `WG_BLOCK_M` rows.
pub const WG_TMA_BOX_A: [u32; 2] = [WG_BLOCK_K, WG_BLOCK_M];
/// The box of one TMA copy of B: 64 columns (128 bytes) by `WG_BLOCK_K`
/// rows of k; `WG_BLOCK_N / 64` of them a stage.
pub const WG_TMA_BOX_B: [u32; 2] = [64, WG_BLOCK_K];
/// The A descriptor's stride-dimension byte offset: from one 8-row atom
/// of A (K-major) to the next, 8 rows of 128 bytes.
pub const WG_A_SBO: u32 = 8 * 128;
/// The B descriptor's leading-dimension byte offset: B is N-major, and in
/// the 128-byte swizzle the LBO steps from one 64-column block to the next,
/// a whole block of `WG_BLOCK_K` rows of 128 bytes.
pub const WG_B_LBO: u32 = WG_BLOCK_K * 128;
/// The B descriptor's stride-dimension byte offset: from one group of 8
/// k rows to the next within a 64-column block.
pub const WG_B_SBO: u32 = 8 * 128;

const _: () = assert!(
    WG_BLOCK_M == 2 * 64
        && (WG_BLOCK_N == 128 || WG_BLOCK_N == 256)
        && WG_BLOCK_K == 64
        && WG_THREADS == 256,
    "two warpgroups of m64n128 or m64n256, one 128-byte row of k a step"
);
const _: () = assert!(
    WG_A_BYTES.is_multiple_of(WG_TILE_ALIGN) && WG_B_BYTES.is_multiple_of(WG_TILE_ALIGN),
    "every tile starts on a swizzle atom"
);
const _: () = assert!(
    WG_TMA_SHARED_BYTES <= 227 * 1024,
    "a block of compute capability 9.0 has at most 227 KiB"
);
const _: () = assert!(
    (WG_BLOCK_M * WG_BLOCK_K / 8).is_multiple_of(WG_THREADS)
        && (WG_BLOCK_K * WG_BLOCK_N / 8).is_multiple_of(WG_THREADS),
    "each thread copies a whole number of 16-byte chunks of each tile"
);

// ANCHOR: wg_layout
/// Byte offset in a stage's A tile of element (`row`, `col`) of the block's
/// `WG_BLOCK_M x WG_BLOCK_K` slice of A: K-major, row `row` at `128 row`
/// bytes, swizzled.
pub const fn wg_a_offset(row: u32, col: u32) -> u32 {
    swizzle_128b(row * 128 + col * 2)
}

/// The descriptor of warpgroup `warpgroup`'s A operand for k slice `kk`
/// (16 deep) of the stage at shared address `stage` (1024-byte aligned):
/// its 64 rows from row `64 warpgroup` of the tile, K-major, 8-row atoms
/// [`WG_A_SBO`] apart, the start moved 32 bytes (16 bf16) along the rows a
/// slice (the hardware swizzles the address it forms, so a start inside a
/// row's 128 bytes reads the swizzled chunks).
pub const fn wg_a_descriptor(stage: u32, warpgroup: u32, kk: u32) -> u64 {
    descriptor_advance(
        descriptor_128b(stage + warpgroup * 64 * 128, 16, WG_A_SBO),
        32 * kk,
    )
}

/// The descriptor of the B operand for k slice `kk` of the stage at
/// `stage`: all `WG_BLOCK_N` columns, N-major, 64-column blocks
/// [`WG_B_LBO`] apart, groups of 8 k rows [`WG_B_SBO`] apart, the start
/// moved 16 rows (2048 bytes) a slice.
pub const fn wg_b_descriptor(stage: u32, kk: u32) -> u64 {
    descriptor_advance(
        descriptor_128b(stage + WG_A_BYTES, WG_B_LBO, WG_B_SBO),
        16 * 128 * kk,
    )
}

/// Byte offset in a stage's B tile of element (`row`, `col`) of the
/// block's `WG_BLOCK_K x WG_BLOCK_N` slice of B: N-major, in blocks of 64
/// columns [`WG_B_LBO`] apart, row `row` of a block at `128 row` bytes,
/// swizzled.
pub const fn wg_b_offset(row: u32, col: u32) -> u32 {
    swizzle_128b((col / 64) * WG_B_LBO + row * 128 + (col % 64) * 2)
}
// ANCHOR_END: wg_layout

/// The GPU kernels, compiled only for the GPU.
#[cfg(target_arch = "nvptx64")]
mod kernels {
    use super::*;
    use crate::device::math::fma;
    use crate::device::memory::{Float4, dot_strided, load_readonly, load_readonly_v4};
    use crate::device::shared::SharedPtr;
    use crate::device::thread::{
        block_idx_x, block_idx_y, sync_threads, thread_idx_x, thread_idx_y,
    };
    use crate::device::unroll::unrolled;
    use crate::shared_array;

    shared_array!(GEMM_TILE_A: [f32; (TILE * TILE) as usize]);
    shared_array!(GEMM_TILE_B: [f32; (TILE * TILE) as usize]);
    shared_array!(GEMM_R1_A: [f32; (R1_BLOCK_M * R1_BLOCK_K) as usize]);
    shared_array!(GEMM_R1_B: [f32; (R1_BLOCK_K * R1_BLOCK_N) as usize]);
    shared_array!(GEMM_REG_A: [f32; (BLOCK_K * BLOCK_M) as usize]);
    shared_array!(GEMM_REG_B: [f32; (BLOCK_K * BLOCK_N) as usize]);
    shared_array!(GEMM_WARP_A: [f32; (2 * BLOCK_K * BLOCK_M) as usize]);
    shared_array!(GEMM_WARP_B: [f32; (2 * BLOCK_K * BLOCK_N) as usize]);

    /// The float4 `p[row][col..col + 4]` of a row-major matrix with `cols`
    /// columns, in one 16-byte load where `vec` (cols a multiple of 4) and
    /// the four are inside `rows x cols`, else as four guarded floats (0
    /// outside).
    ///
    /// # Safety
    /// `p` holds `rows * cols` floats nothing writes during the kernel, and
    /// is 16-byte aligned (cudaMalloc's buffers are 256-byte aligned); `col`
    /// is a multiple of 4, so with `vec` the element's address is aligned.
    #[inline(always)]
    unsafe fn load4_or_zero(
        p: *const f32,
        row: u32,
        col: u32,
        rows: u32,
        cols: u32,
        vec: bool,
    ) -> Float4 {
        if vec && row < rows && col + 3 < cols {
            // SAFETY: inside; aligned (p aligned, cols and col multiples of 4).
            unsafe { load_readonly_v4(p.add(row as usize * cols as usize + col as usize).cast()) }
        } else {
            // SAFETY: guarded.
            let at = |j: u32| unsafe { load_or_zero(p, row, col + j, rows, cols) };
            Float4 {
                x: at(0),
                y: at(1),
                z: at(2),
                w: at(3),
            }
        }
    }

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
    unsafe fn store_d(
        d: *mut f32,
        c: *const f32,
        row: u32,
        col: u32,
        m: u32,
        n: u32,
        alpha: f32,
        beta: f32,
        acc: f32,
    ) {
        if row < m && col < n {
            let i = row as usize * n as usize + col as usize;
            // SAFETY: inside the matrices.
            unsafe { *d.add(i) = fma(alpha, acc, beta * load_readonly(c.add(i))) };
        }
    }

    /// Writes a thread's float4 of each tile into a step's shared tiles: `va`
    /// (A row `a_row`, k `a_k..a_k + 4`) transposed, as four floats at
    /// `[a_k + i][a_row]` of `tile_a`; `vb` (B row `b_row`, columns
    /// `b_col..b_col + 4`) as one float4 of `tile_b4`. Both tiles are
    /// `BLOCK_K` rows of `BLOCK_M` (= `BLOCK_N`) floats from their handles.
    ///
    /// # Safety
    /// `a_row < BLOCK_M`, `a_k + 3 < BLOCK_K`, `b_row < BLOCK_K`, `b_col + 3
    /// < BLOCK_N` and a multiple of 4; no other thread reads these elements
    /// before the next barrier.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn stage_float4s(
        tile_a: SharedPtr<f32>,
        tile_b4: SharedPtr<Float4>,
        a_row: u32,
        a_k: u32,
        va: Float4,
        b_row: u32,
        b_col: u32,
        vb: Float4,
    ) {
        // SAFETY: the caller's.
        unsafe {
            tile_a.write(a_k * BLOCK_M + a_row, va.x);
            tile_a.write((a_k + 1) * BLOCK_M + a_row, va.y);
            tile_a.write((a_k + 2) * BLOCK_M + a_row, va.z);
            tile_a.write((a_k + 3) * BLOCK_M + a_row, va.w);
            tile_b4.write(b_row * (BLOCK_N / 4) + b_col / 4, vb);
        }
    }

    /// One k of an 8 x 8 thread tile: `acc[i][j] += a[i] * b[j]` by FMA,
    /// with the thread's 8 values of A as two float4s (`a0`, `a1`) and of B
    /// as two (`b0`, `b1`), as the float4 kernels read them.
    #[inline(always)]
    fn fma_outer(
        acc: &mut [[f32; THREAD_N as usize]; THREAD_M as usize],
        a0: Float4,
        a1: Float4,
        b0: Float4,
        b1: Float4,
    ) {
        let col_a = [a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w];
        let row_b = [b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w];
        unrolled::<{ THREAD_M as usize }>(|i| {
            unrolled::<{ THREAD_N as usize }>(|j| acc[i][j] = fma(col_a[i], row_b[j], acc[i][j]));
        });
    }

    // ANCHOR: gemm_naive
    /// `D = alpha * A * B + beta * C`, one thread per element of `D`: the dot
    /// product of a row of `A` and a column of `B`, k FMAs in ascending k.
    ///
    /// # Memory
    /// 2k loads per output, two pointers walking a row of `A` and a column
    /// of `B` (`dot_strided`). A warp spans 32 columns of one row: the `B`
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
        // SAFETY: row < m, col < n: row `row` of A (k floats, 1 apart) and
        // column `col` of B (k floats, n apart), read-only.
        let acc = unsafe {
            dot_strided(
                a.add(row as usize * k as usize),
                1,
                b.add(col as usize),
                n as usize,
                k as usize,
            )
        };
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

    // ANCHOR: gemm_regblock_1d
    /// Each thread keeps `R1_THREAD_M` outputs of one column of `D` in
    /// registers (1D register blocking): per step of depth `R1_BLOCK_K`, a
    /// block stages an `R1_BLOCK_M x R1_BLOCK_K` tile of `A` and an
    /// `R1_BLOCK_K x R1_BLOCK_N` tile of `B`, and for each k each thread
    /// reads one value of `B` and multiplies it by its `R1_THREAD_M` values
    /// of `A`'s column.
    ///
    /// # Memory
    /// Per step each thread loads one element of each tile (consecutive
    /// threads: 8 consecutive k of a row of A, consecutive columns of a row
    /// of B) and, per k, reads 1 + `R1_THREAD_M` values from shared memory
    /// for `R1_THREAD_M` FMAs: 9 per 8, where the tiled kernel reads 2 per
    /// FMA. The 32 threads of a warp share their rows, so each read of the A
    /// tile is one broadcast, and they read 32 consecutive floats of B.
    /// Edges load 0 and skip the store, so any m, n, k works.
    ///
    /// # Launch assumption
    /// `R1_THREADS` (512) threads in one dimension per block, a grid of
    /// `ceil(n / R1_BLOCK_N) x ceil(m / R1_BLOCK_M)` blocks. Every thread
    /// reaches every barrier.
    ///
    /// # Safety
    /// As [`gemm_naive`].
    #[unsafe(no_mangle)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe extern "ptx-kernel" fn gemm_regblock_1d(
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
        let (tile_a, tile_b) = (GEMM_R1_A::shared(), GEMM_R1_B::shared());
        let tid = thread_idx_x();
        let (block_row, block_col) = (block_idx_y() * R1_BLOCK_M, block_idx_x() * R1_BLOCK_N);
        // This thread's outputs: rows first_row.. of column col of the
        // block's tile.
        let (first_row, col) = ((tid / R1_BLOCK_N) * R1_THREAD_M, tid % R1_BLOCK_N);
        // The element of each tile this thread loads: A (r, q), stored at
        // [r][q]; B (qb, cb), stored at [qb][cb].
        let (r, q) = (tid / R1_BLOCK_K, tid % R1_BLOCK_K);
        let (qb, cb) = (tid / R1_BLOCK_N, tid % R1_BLOCK_N);
        let mut acc = [0.0f32; R1_THREAD_M as usize];
        let mut p0 = 0;
        while p0 < k {
            // SAFETY: the loads are guarded; both shared indices are below
            // R1_THREADS, the tiles' size.
            unsafe {
                tile_a.write(tid, load_or_zero(a, block_row + r, p0 + q, m, k));
                tile_b.write(tid, load_or_zero(b, p0 + qb, block_col + cb, k, n));
            }
            sync_threads();
            unrolled::<{ R1_BLOCK_K as usize }>(|q| {
                let q = q as u32;
                // SAFETY: q < R1_BLOCK_K, col < R1_BLOCK_N, first_row + i <
                // R1_BLOCK_M.
                unsafe {
                    let b_value = tile_b.read(q * R1_BLOCK_N + col);
                    unrolled::<{ R1_THREAD_M as usize }>(|i| {
                        acc[i] = fma(
                            tile_a.read((first_row + i as u32) * R1_BLOCK_K + q),
                            b_value,
                            acc[i],
                        );
                    });
                }
            });
            sync_threads();
            p0 += R1_BLOCK_K;
        }
        unrolled::<{ R1_THREAD_M as usize }>(|i| {
            // SAFETY: the store is guarded.
            unsafe {
                store_d(
                    d,
                    c,
                    block_row + first_row + i as u32,
                    block_col + col,
                    m,
                    n,
                    alpha,
                    beta,
                    acc[i],
                )
            };
        });
    }
    // ANCHOR_END: gemm_regblock_1d

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
                    tile_a.write(
                        q * BLOCK_M + r,
                        load_or_zero(a, block_row + r, p0 + q, m, k),
                    );
                    tile_b.write(
                        qb * BLOCK_N + cb,
                        load_or_zero(b, p0 + qb, block_col + cb, k, n),
                    );
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
                    unrolled::<{ THREAD_M as usize }>(|i| {
                        col_a[i] = tile_a.read(q * BLOCK_M + first_row + i as u32)
                    });
                    unrolled::<{ THREAD_N as usize }>(|j| {
                        row_b[j] = tile_b.read(q * BLOCK_N + first_col + j as u32)
                    });
                }
                unrolled::<{ THREAD_M as usize }>(|i| {
                    unrolled::<{ THREAD_N as usize }>(|j| {
                        acc[i][j] = fma(col_a[i], row_b[j], acc[i][j])
                    });
                });
            });
            sync_threads();
            p0 += BLOCK_K;
        }
        unrolled::<{ THREAD_M as usize }>(|i| {
            unrolled::<{ THREAD_N as usize }>(|j| {
                let (row, col) = (
                    block_row + first_row + i as u32,
                    block_col + first_col + j as u32,
                );
                // SAFETY: the store is guarded.
                unsafe { store_d(d, c, row, col, m, n, alpha, beta, acc[i][j]) };
            });
        });
    }
    // ANCHOR_END: gemm_regblock

    // ANCHOR: gemm_vectorized
    /// [`gemm_regblock`]'s tiles with 16-byte accesses: each thread loads
    /// one float4 of the A tile (4 consecutive k of a row, stored transposed
    /// as four floats) and one of the B tile (stored as it is) a step, and
    /// reads its A column and B row from shared memory as float4s. Its
    /// 8 x 8 outputs are four 4 x 4 blocks 64 rows and 64 columns apart
    /// (rows `4 ty` and `64 + 4 ty`, columns `4 tx` and `64 + 4 tx` for
    /// thread (tx, ty) of a 16 x 16 grid), so a warp's float4 reads of a
    /// B row are 16 consecutive float4s (no bank conflict) and of an A
    /// column two broadcast addresses.
    ///
    /// # Memory
    /// Per step 2 global float4 loads and 4 shared float4 reads per 64 FMAs
    /// (the register-blocked kernel: 8 global floats and 16 shared floats).
    /// A float4 load needs its row inside the matrix, its four columns
    /// inside and k (for A) or n (for B) a multiple of 4, so that the
    /// 16-byte address is aligned; elsewhere the thread loads four guarded
    /// floats. The sums are the naive kernel's: k ascending, one FMA each.
    ///
    /// # Launch assumption
    /// As [`gemm_regblock`]: `REG_THREADS` (256) threads in one dimension,
    /// a grid of `ceil(n / BLOCK_N) x ceil(m / BLOCK_M)` blocks.
    ///
    /// # Safety
    /// As [`gemm_naive`].
    #[unsafe(no_mangle)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe extern "ptx-kernel" fn gemm_vectorized(
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
        // SAFETY: both arrays are 16-byte aligned (`shared_array!`).
        let (tile_a4, tile_b4) = unsafe {
            (
                SharedPtr::<Float4>::from_addr(tile_a.addr()),
                SharedPtr::<Float4>::from_addr(tile_b.addr()),
            )
        };
        let tid = thread_idx_x();
        let (tx, ty) = (tid % 16, tid / 16);
        let (block_row, block_col) = (block_idx_y() * BLOCK_M, block_idx_x() * BLOCK_N);
        // This thread's float4 of each tile: A row a_row, k a_k..a_k + 4; B
        // row b_row, columns b_col..b_col + 4.
        let (a_row, a_k) = (tid / 2, (tid % 2) * 4);
        let (b_row, b_col) = (tid / 32, (tid % 32) * 4);
        let (a_vec, b_vec) = (k % 4 == 0, n % 4 == 0);
        let mut acc = [[0.0f32; THREAD_N as usize]; THREAD_M as usize];
        let mut p0 = 0;
        while p0 < k {
            // SAFETY: the loads are guarded (a float4 only where inside and
            // aligned); the tile indices are this thread's, inside the tiles.
            unsafe {
                let va = load4_or_zero(a, block_row + a_row, p0 + a_k, m, k, a_vec);
                let vb = load4_or_zero(b, p0 + b_row, block_col + b_col, k, n, b_vec);
                stage_float4s(tile_a, tile_b4, a_row, a_k, va, b_row, b_col, vb);
            }
            sync_threads();
            unrolled::<{ BLOCK_K as usize }>(|q| {
                let q = q as u32;
                // SAFETY: float4 indices inside the tiles (q < BLOCK_K,
                // 64 + 4 ty + 3 < BLOCK_M, 64 + 4 tx + 3 < BLOCK_N).
                let (a0, a1, b0, b1) = unsafe {
                    (
                        tile_a4.read((q * BLOCK_M + 4 * ty) / 4),
                        tile_a4.read((q * BLOCK_M + 64 + 4 * ty) / 4),
                        tile_b4.read((q * BLOCK_N + 4 * tx) / 4),
                        tile_b4.read((q * BLOCK_N + 64 + 4 * tx) / 4),
                    )
                };
                fma_outer(&mut acc, a0, a1, b0, b1);
            });
            sync_threads();
            p0 += BLOCK_K;
        }
        unrolled::<{ THREAD_M as usize }>(|i| {
            unrolled::<{ THREAD_N as usize }>(|j| {
                let row = block_row + (i as u32 / 4) * 64 + 4 * ty + i as u32 % 4;
                let col = block_col + (j as u32 / 4) * 64 + 4 * tx + j as u32 % 4;
                // SAFETY: the store is guarded.
                unsafe { store_d(d, c, row, col, m, n, alpha, beta, acc[i][j]) };
            });
        });
    }
    // ANCHOR_END: gemm_vectorized

    crate::launch_bounds!(gemm_warptiled, REG_THREADS, WARP_MIN_BLOCKS);

    // ANCHOR: gemm_warptiled
    /// [`gemm_vectorized`]'s float4 tiles, arranged by warp, double-buffered
    /// and fetched a step ahead. The 8 warps, as 2 (rows) x 4 (columns),
    /// each own a 64 x 32 tile of the block's D; lane `l` computes rows `4
    /// (l / 4)` and `32 + 4 (l / 4)` (4 each) and columns `4 (l % 4)` and
    /// `16 + 4 (l % 4)` (4 each) of its warp's tile: 8 x 8 outputs, as
    /// before. While the warps multiply step `s` from one pair of shared
    /// tiles, each thread's global loads for step `s + 1` are in flight into
    /// registers; it writes them into the other pair after its FMAs.
    ///
    /// # Memory
    /// Per step each thread loads one float4 of each tile from global
    /// memory (guarded as [`gemm_vectorized`]'s), then per k reads 2
    /// float4s of its A column and 2 of its B row from shared memory. A
    /// warp's A reads are 8 consecutive float4s (one 128-byte wavefront) and
    /// its B reads 4, each broadcast to 8 lanes; in [`gemm_vectorized`] a
    /// warp reads 16 B float4s (two wavefronts). Two buffers of each tile
    /// need one barrier a step, not two: step `s` writes the buffer step `s
    /// - 1` read, after the barrier that ended step `s - 1`. The prefetch
    /// takes 8 more registers a thread; the launch bounds (256 threads, 2
    /// blocks an SM: `launch_bounds!`) hold ptxas to 128, so two blocks
    /// still fit. The sums are the naive kernel's: k ascending, one FMA
    /// each.
    ///
    /// # Launch assumption
    /// As [`gemm_regblock`]: `REG_THREADS` (256) threads in one dimension,
    /// a grid of `ceil(n / BLOCK_N) x ceil(m / BLOCK_M)` blocks. Every
    /// thread reaches every barrier.
    ///
    /// # Safety
    /// As [`gemm_naive`].
    #[unsafe(no_mangle)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe extern "ptx-kernel" fn gemm_warptiled(
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
        let (tile_a, tile_b) = (GEMM_WARP_A::shared(), GEMM_WARP_B::shared());
        // SAFETY: both arrays are 16-byte aligned (`shared_array!`).
        let (tile_a4, tile_b4) = unsafe {
            (
                SharedPtr::<Float4>::from_addr(tile_a.addr()),
                SharedPtr::<Float4>::from_addr(tile_b.addr()),
            )
        };
        let tid = thread_idx_x();
        let (warp, lane) = (tid / 32, tid % 32);
        // The first row and column of this thread's 4 x 4 blocks.
        let row0 = (warp / 4) * 64 + 4 * (lane / 4);
        let col0 = (warp % 4) * 32 + 4 * (lane % 4);
        // This thread's first float4 of a row of each tile (float4 units).
        let (row0_4, col0_4) = (row0 / 4, col0 / 4);
        let (block_row, block_col) = (block_idx_y() * BLOCK_M, block_idx_x() * BLOCK_N);
        let (a_vec, b_vec) = (k % 4 == 0, n % 4 == 0);
        let mut acc = [[0.0f32; THREAD_N as usize]; THREAD_M as usize];
        // This thread's float4 of each tile, as gemm_vectorized's: A row
        // a_row, k a_k..a_k + 4 (stored transposed); B row b_row, columns
        // b_col..b_col + 4.
        let (a_row, a_k) = (tid / 2, (tid % 2) * 4);
        let (b_row, b_col) = (tid / 32, (tid % 32) * 4);
        // SAFETY (both): guarded loads.
        let fetch_a =
            |p0: u32| unsafe { load4_or_zero(a, block_row + a_row, p0 + a_k, m, k, a_vec) };
        let fetch_b =
            |p0: u32| unsafe { load4_or_zero(b, p0 + b_row, block_col + b_col, k, n, b_vec) };
        let stage = |buf: u32, va: Float4, vb: Float4| {
            let (a_buf, b_buf) = (
                tile_a.add(buf * BLOCK_K * BLOCK_M),
                tile_b4.add(buf * (BLOCK_K * BLOCK_N / 4)),
            );
            // SAFETY: this thread's elements of buffer `buf`, which no
            // thread reads before the barrier that ends this step.
            unsafe { stage_float4s(a_buf, b_buf, a_row, a_k, va, b_row, b_col, vb) };
        };
        let mut compute = |buf: u32| {
            // The buffer's first float4 of this thread, once: each k's reads
            // are then these two addresses plus constants, which ptxas folds
            // into the instructions. An index summed per read (buffer + k +
            // thread, then scaled by 16) was recomputed for every k.
            let a_at = tile_a4.add(buf * (BLOCK_K * BLOCK_M / 4) + row0_4);
            let b_at = tile_b4.add(buf * (BLOCK_K * BLOCK_N / 4) + col0_4);
            unrolled::<{ BLOCK_K as usize }>(|q| {
                let q = q as u32;
                // SAFETY: float4 indices inside the buffer (q < BLOCK_K,
                // row0 + 32 + 3 < BLOCK_M, col0 + 16 + 3 < BLOCK_N).
                let (a0, a1, b0, b1) = unsafe {
                    (
                        a_at.read(q * (BLOCK_M / 4)),
                        a_at.read(q * (BLOCK_M / 4) + 32 / 4),
                        b_at.read(q * (BLOCK_N / 4)),
                        b_at.read(q * (BLOCK_N / 4) + 16 / 4),
                    )
                };
                fma_outer(&mut acc, a0, a1, b0, b1);
            });
        };
        stage(0, fetch_a(0), fetch_b(0));
        sync_threads();
        let (mut p0, mut buf) = (0, 0);
        while p0 < k {
            let next = p0 + BLOCK_K;
            if next < k {
                // Issued here, consumed by `stage` after this step's FMAs,
                // which hide the loads' latency.
                let (va, vb) = (fetch_a(next), fetch_b(next));
                compute(buf);
                stage(buf ^ 1, va, vb);
            } else {
                compute(buf);
            }
            sync_threads();
            buf ^= 1;
            p0 = next;
        }
        unrolled::<{ THREAD_M as usize }>(|i| {
            unrolled::<{ THREAD_N as usize }>(|j| {
                let row = block_row + row0 + (i as u32 / 4) * 32 + i as u32 % 4;
                let col = block_col + col0 + (j as u32 / 4) * 16 + j as u32 % 4;
                // SAFETY: the store is guarded.
                unsafe { store_d(d, c, row, col, m, n, alpha, beta, acc[i][j]) };
            });
        });
    }
    // ANCHOR_END: gemm_warptiled
}

/// What the `mma.sync` kernels of both modules share (the sm_80 module's
/// bf16 kernels, the sm_75 module's f16 one): where a thread's 16-byte
/// chunk of a tile lies, one step of a warp's 64 x 32 tile from the padded
/// shared stage, and the epilogue.
#[cfg(all(target_arch = "nvptx64", any(lab_tensor_cores, lab_fp16_mma)))]
pub(crate) mod mma_tiles {
    use super::*;
    use crate::device::math::fma;
    use crate::device::memory::{load_v2, store_v2_if};
    use crate::device::mma::{ldmatrix_x2_trans, ldmatrix_x4};
    use crate::device::unroll::unrolled;

    /// The (row, column) of chunk `s` of thread `tid` among `threads` in a
    /// tile `width` 16-bit elements wide: 16-byte chunks (8 elements) in
    /// row-major order, so a warp's 32 chunks are 512 consecutive bytes of
    /// a row, or of consecutive rows (coalesced).
    #[inline(always)]
    pub fn chunk_place(tid: u32, s: usize, threads: u32, width: u32) -> (u32, u32) {
        let chunk = tid + s as u32 * threads;
        (chunk / (width / 8), (chunk % (width / 8)) * 8)
    }

    // ANCHOR: mma_warp_tile
    /// One step (`TC_BLOCK_K` of k) of a warp's 64 x 32 tile from the stage
    /// at shared address `a_tile` (A `TC_BLOCK_M x TC_BLOCK_K`, rows
    /// `TC_A_STRIDE` apart, then B `TC_BLOCK_K x TC_BLOCK_N`, rows
    /// `TC_B_STRIDE` apart): per 16 of k, 4 A fragments by `ldmatrix.x4`, 4
    /// B fragments by `ldmatrix.x2.trans`, then the 4 x 4 `mma` tiles by
    /// `mma` (m16n8k16's fragments in, the tile's f32 sums out), in
    /// ascending k; after each 16 of k, `after_k16` with its index (the f16
    /// kernel stores the next step's chunks there; a no-op elsewhere).
    ///
    /// # Safety
    /// The stage's tiles were written before a barrier and are inside a
    /// shared array; (`warp_row`, `warp_col`) is a 64 x 32 tile inside
    /// the block's; the warp is converged.
    #[inline(always)]
    pub unsafe fn mma_warp_tile(
        a_tile: u32,
        warp_row: u32,
        warp_col: u32,
        lane: u32,
        acc: &mut [[[f32; 4]; 4]; 4],
        mma: impl Fn([u32; 4], [u32; 2], [f32; 4]) -> [f32; 4],
        mut after_k16: impl FnMut(usize),
    ) {
        let b_tile = a_tile + 2 * TC_BLOCK_M * TC_A_STRIDE;
        unrolled::<{ (TC_BLOCK_K / 16) as usize }>(|kk| {
            let kk = kk as u32 * 16;
            let mut fa = [[0u32; 4]; 4];
            let mut fb = [[0u32; 2]; 4];
            // SAFETY: every address is a 16-byte row inside this stage's
            // tiles (the caller's contract).
            unsafe {
                unrolled::<4>(|i| {
                    let row = warp_row + i as u32 * 16 + (lane / 8 % 2) * 8 + lane % 8;
                    let col = kk + (lane / 16) * 8;
                    fa[i] = ldmatrix_x4(a_tile + 2 * (row * TC_A_STRIDE + col));
                });
                unrolled::<4>(|j| {
                    let row = kk + lane % 16;
                    let col = warp_col + j as u32 * 8;
                    fb[j] = ldmatrix_x2_trans(b_tile + 2 * (row * TC_B_STRIDE + col));
                });
            }
            unrolled::<4>(|i| {
                unrolled::<4>(|j| acc[i][j] = mma(fa[i], fb[j], acc[i][j]));
            });
            after_k16(kk as usize / 16);
        });
    }
    // ANCHOR_END: mma_warp_tile

    // ANCHOR: store_tiles
    /// `D = alpha * acc + beta * C` for a warp's `MI x NJ` mma tiles of 16 x
    /// 8 (C/D fragment layout, device::mma's docs) whose first element is
    /// at (`row0`, `col0`), inside `m x n` only.
    ///
    /// # Memory
    /// For each row of tiles, the lane's `NJ x 4` elements of C are loaded
    /// first and then D stored, 8 bytes (a pair) an access: every pair
    /// loaded with no predicate (`load_v2`; a pair outside the matrix from
    /// its row and column clamped into it, its value not stored), every D
    /// pair stored where it is
    /// inside (`store_v2_if`, predicated: no branch). Through raw pointers
    /// LLVM may not move a load of C past a store to D (they might alias;
    /// CUDA C's `__restrict__` says they do not), so written element by
    /// element each load would wait for the store before it; and an `if`
    /// around each access becomes branches that ptxas schedules one block
    /// at a time. The loads take the coherent path (`ld.global`, not
    /// `.nc`) so that ptxas, too, keeps a row's loads ahead of its stores,
    /// as the twins' branches make it do: with predicated `ld.global.nc`
    /// loads it moved stores up among them, so a store waited on its load
    /// while the row's later loads were not yet issued (10 runs of loads
    /// for `gemm_bf16_mma`'s 4 rows in its sm_90a SASS, ptxas 12.9 and
    /// 13.0, against 4: docs/results/cpu-2026-12-06-epilogue-order;
    /// `tests/cpu_gemm.rs` checks the order). The clamp
    /// is an integer minimum a row and a column, where choosing the address
    /// `c` for a pair outside was a 64-bit select a pair and kept every
    /// pair's predicate alive from its load to its store:
    /// `gemm_bf16_tma`'s epilogue took 1020 instructions so, 668 with the
    /// clamp and 637 with 9e16104's read-only loads (ptxas 12.9, sm_90a;
    /// docs/results/h100-2026-12-06-epilogue-clamp/epilogue-cost.txt). On
    /// an H100, with the select it took 6.5% and 10.1% longer than with
    /// the read-only loads (docs/results/h100-2026-12-06-epilogue-loads);
    /// on another, with the clamp, no row was slower
    /// (docs/results/h100-2026-12-06-epilogue-clamp).
    ///
    /// # Safety
    /// `c` and `d` hold m x n floats and are 8-byte aligned (cudaMalloc's
    /// are 256-byte aligned); m >= 1, n is a multiple of `TC_ALIGN` and at
    /// least 8 (a pair outside is read at row `min(row, m - 1)` and column
    /// `min(col, n - 2)`), and `col0` a multiple of 8; `d` overlaps nothing
    /// the kernel reads.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn store_tiles<const MI: usize, const NJ: usize>(
        acc: &[[[f32; 4]; NJ]; MI],
        row0: u32,
        col0: u32,
        lane: u32,
        m: u32,
        n: u32,
        alpha: f32,
        beta: f32,
        c: *const f32,
        d: *mut f32,
    ) {
        // The row's body is a function of its own: as a closure it is one
        // LLVM may decline to inline (it did at NJ = 8), and then `acc`
        // would have to be in memory (a `.local` array) to be passed.
        unrolled::<MI>(|i| {
            // SAFETY: the caller's.
            unsafe {
                store_tile_row(
                    &acc[i],
                    row0 + i as u32 * 16,
                    col0,
                    lane,
                    m,
                    n,
                    alpha,
                    beta,
                    c,
                    d,
                )
            };
        });
    }

    /// One row of [`store_tiles`]: `NJ` mma tiles of 16 x 8 from (`row0`,
    /// `col0`), C loaded first, then D stored, each lane's two neighbours
    /// (`c0, c1` and `c2, c3` of the fragment) in one 8-byte access. The
    /// pair's first column is even (`col0` is a multiple of 8) and n a
    /// multiple of `TC_ALIGN`, so a pair is inside the matrix or wholly
    /// outside, and its offset is even.
    ///
    /// # Safety
    /// As [`store_tiles`].
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn store_tile_row<const NJ: usize>(
        acc: &[[f32; 4]; NJ],
        row0: u32,
        col0: u32,
        lane: u32,
        m: u32,
        n: u32,
        alpha: f32,
        beta: f32,
        c: *const f32,
        d: *mut f32,
    ) {
        let (group, pair) = (lane / 4, lane % 4);
        let place = |j: usize, h: usize| {
            let row = row0 + group + 8 * h as u32;
            let col = col0 + j as u32 * 8 + 2 * pair;
            (row < m && col < n, row as usize * n as usize + col as usize)
        };
        let mut cv = [[[0.0f32; 2]; 2]; NJ];
        unrolled::<NJ>(|j| {
            unrolled::<2>(|h| {
                // The pair's row and column clamped into C: the pair itself
                // where it is inside, one of C's where not (its value then
                // unused). Even, as col and n are, so 8-byte aligned.
                let row = (row0 + group + 8 * h as u32).min(m - 1);
                let col = (col0 + j as u32 * 8 + 2 * pair).min(n - 2);
                // SAFETY: inside C (m >= 1 and n >= 8, the caller's).
                cv[j][h] =
                    unsafe { load_v2(c.wrapping_add(row as usize * n as usize + col as usize)) };
            });
        });
        unrolled::<NJ>(|j| {
            unrolled::<2>(|h| {
                let (inside, at) = place(j, h);
                let v = [
                    fma(alpha, acc[j][2 * h], beta * cv[j][h][0]),
                    fma(alpha, acc[j][2 * h + 1], beta * cv[j][h][1]),
                ];
                // SAFETY: written only inside D.
                unsafe { store_v2_if(inside, d.wrapping_add(at), v) };
            });
        });
    }
    // ANCHOR_END: store_tiles
}

/// The FP16 tensor-core kernel of the sm_75 module (`--cfg lab_fp16_mma`,
/// PTX ISA 6.5): what a T4 runs, with no `cp.async` (compute capability
/// 8.0) on the way to shared memory.
#[cfg(all(target_arch = "nvptx64", lab_fp16_mma))]
pub(crate) mod turing_kernels {
    use super::mma_tiles::{chunk_place, mma_warp_tile, store_tiles};
    use super::*;
    use crate::device::memory::{Float4, load_readonly_v4};
    use crate::device::mma::mma_f16_m16n8k16_as_two_k8;
    use crate::device::shared::SharedPtr;
    use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x};
    use crate::device::unroll::unrolled;
    use crate::shared_array;

    shared_array!(GEMM_F16_STAGES: [Float4; (TC_STAGES * TC_STAGE_BYTES / 16) as usize]);

    /// The 16-byte chunks (8 f16 each, carried as a [`Float4`]'s bits) of
    /// A and B per thread per step: 2 of the A tile and 2 of the B tile.
    const CHUNKS: usize = (TC_BLOCK_M * TC_BLOCK_K / 8 / TC_THREADS) as usize;
    const _: () = assert!(CHUNKS == 2 && TC_BLOCK_K * TC_BLOCK_N / 8 / TC_THREADS == CHUNKS as u32);

    /// The places of this thread's chunks in a stage, in `Float4`s from
    /// its start: `CHUNKS` of the A tile (rows `TC_A_STRIDE` apart), then
    /// `CHUNKS` of the B tile after it (rows `TC_B_STRIDE` apart); and
    /// their global (row, column) offsets from the step's corner, as
    /// (A's rows, A's columns) and (B's rows, B's columns).
    #[inline(always)]
    fn places(s: usize) -> ((u32, u32), (u32, u32)) {
        let tid = thread_idx_x();
        (
            chunk_place(tid, s, TC_THREADS, TC_BLOCK_K),
            chunk_place(tid, s, TC_THREADS, TC_BLOCK_N),
        )
    }

    /// This thread's chunks of one step's tiles, read from global memory
    /// into registers: A from row `block_row`, column `p0`; B from row
    /// `p0`, column `block_col`; one 16-byte read-only load each (`ld
    /// .global.nc.v4`), zeros for a chunk outside the matrices.
    ///
    /// # Safety
    /// `a` (m x k) and `b` (k x n) are 16-byte aligned with k and n
    /// multiples of 8, and nothing writes them during the kernel.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn fetch(
        a: *const u16,
        b: *const u16,
        m: u32,
        n: u32,
        k: u32,
        block_row: u32,
        block_col: u32,
        p0: u32,
    ) -> [Float4; 2 * CHUNKS] {
        let zero = Float4 {
            x: 0.0,
            y: 0.0,
            z: 0.0,
            w: 0.0,
        };
        let mut staged = [zero; 2 * CHUNKS];
        unrolled::<CHUNKS>(|s| {
            let ((row, col), (b_row, b_col)) = places(s);
            let (grow, gcol) = (block_row + row, p0 + col);
            if grow < m && gcol < k {
                // SAFETY: inside A, 16-byte aligned (the caller's shapes).
                staged[s] = unsafe {
                    load_readonly_v4(a.add(grow as usize * k as usize + gcol as usize).cast())
                };
            }
            let (grow, gcol) = (p0 + b_row, block_col + b_col);
            if grow < k && gcol < n {
                // SAFETY: as above, inside B.
                staged[CHUNKS + s] = unsafe {
                    load_readonly_v4(b.add(grow as usize * n as usize + gcol as usize).cast())
                };
            }
        });
        staged
    }

    /// Writes this thread's `staged` chunks into the stage at `stage`
    /// (16-byte `st.shared.v4` each), where [`mma_warp_tile`] reads them.
    ///
    /// # Safety
    /// `stage` is a stage of `TC_STAGE_BYTES` in a shared array that no
    /// thread reads until the next barrier.
    #[inline(always)]
    unsafe fn store(stage: SharedPtr<Float4>, staged: &[Float4; 2 * CHUNKS]) {
        unrolled::<CHUNKS>(|s| {
            let ((row, col), (b_row, b_col)) = places(s);
            // SAFETY: both places are inside the stage (the tiles' shapes);
            // the caller's barrier discipline.
            unsafe {
                stage.write((row * TC_A_STRIDE + col) / 8, staged[s]);
                stage.write(
                    (TC_BLOCK_M * TC_A_STRIDE + b_row * TC_B_STRIDE + b_col) / 8,
                    staged[CHUNKS + s],
                );
            }
        });
    }

    crate::launch_bounds!(gemm_f16_mma, TC_THREADS, F16_MIN_BLOCKS);

    // ANCHOR: gemm_f16_mma
    /// `D = alpha * A * B + beta * C` with A and B in f16 and the products
    /// summed in f32 on the tensor cores of compute capability 7.5 and up:
    /// [`gemm_bf16_mma`](super::tensor_kernels)'s tiles (a `TC_BLOCK_M x
    /// TC_BLOCK_N` tile of D a block, its 8 warps as 2 x 4 of 64 x 32, each
    /// 4 x 4 `mma` tiles) and fragments (`ldmatrix`), each 16 of k as two
    /// `mma.sync` m16n8k8, the shape a T4 has.
    ///
    /// # Memory
    /// No `cp.async` before compute capability 8.0, so the copies go
    /// through registers: each thread loads its 4 chunks of the next step
    /// (16-byte read-only loads) before this step's `mma`s, which run while
    /// those loads are in flight, and writes them into the other of the two
    /// stages after the step's first 16 of k (half a step for the loads to
    /// land; their 16 registers are free for the second half, which keeps
    /// the kernel in 128 registers without a spill); one barrier a step (the
    /// other stage was last read before the previous one). Rows padded by `TC_PAD`, as in the bf16
    /// kernels, so `ldmatrix` has no bank conflict; chunks outside the
    /// matrices are zeros; the store is guarded.
    ///
    /// # Launch assumption
    /// As `gemm_bf16_mma`: `TC_THREADS` threads in one dimension (declared
    /// as its launch bounds, with `F16_MIN_BLOCKS` blocks an SM), a grid of
    /// `ceil(n / TC_BLOCK_N) x ceil(m / TC_BLOCK_M)`; k and n multiples of
    /// `TC_ALIGN`, m and n not 0 (the epilogue reads a pair outside at a
    /// place of C's). Every thread reaches every barrier and every
    /// warp-wide instruction.
    ///
    /// # Safety
    /// `a` holds m x k f16, `b` k x n f16 (both 16-byte aligned), `c` and
    /// `d` m x n floats (8-byte aligned: the epilogue moves pairs); `d`
    /// overlaps none of them.
    #[unsafe(no_mangle)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe extern "ptx-kernel" fn gemm_f16_mma(
        m: u32,
        n: u32,
        k: u32,
        alpha: f32,
        a: *const u16,
        b: *const u16,
        beta: f32,
        c: *const f32,
        d: *mut f32,
    ) {
        let stages = GEMM_F16_STAGES::shared();
        let stage = |s: u32| stages.add(s * (TC_STAGE_BYTES / 16));
        let tid = thread_idx_x();
        let (warp, lane) = (tid / 32, tid % 32);
        let (warp_row, warp_col) = ((warp / 4) * 64, (warp % 4) * 32);
        let (block_row, block_col) = (block_idx_y() * TC_BLOCK_M, block_idx_x() * TC_BLOCK_N);
        let steps = k.div_ceil(TC_BLOCK_K);
        // SAFETY (every fetch): the launch assumption's shapes and alignment.
        let fetch =
            |step: u32| unsafe { fetch(a, b, m, n, k, block_row, block_col, step * TC_BLOCK_K) };
        let mut acc = [[[0.0f32; 4]; 4]; 4];

        let mut staged = fetch(0);
        // SAFETY: no thread reads stage 0 before the barrier below.
        unsafe { store(stage(0), &staged) };
        sync_threads();
        let mut step = 0;
        while step < steps {
            let more = step + 1 < steps;
            if more {
                staged = fetch(step + 1);
            }
            // SAFETY: this step's stage, written before the last barrier;
            // the warp is converged.
            unsafe {
                mma_warp_tile(
                    stage(step % TC_STAGES).addr(),
                    warp_row,
                    warp_col,
                    lane,
                    &mut acc,
                    mma_f16_m16n8k16_as_two_k8,
                    |k16| {
                        if more && k16 == 0 {
                            // SAFETY: the other stage was last read in the
                            // previous step, before the barrier that ended it.
                            unsafe { store(stage((step + 1) % TC_STAGES), &staged) };
                        }
                    },
                )
            };
            sync_threads();
            step += 1;
        }

        // SAFETY: the caller's C and D (m x n).
        unsafe {
            store_tiles(
                &acc,
                block_row + warp_row,
                block_col + warp_col,
                lane,
                m,
                n,
                alpha,
                beta,
                c,
                d,
            )
        };
    }
    // ANCHOR_END: gemm_f16_mma
}

/// The tensor-core kernels, compiled only into the sm_80 module
/// (`--cfg lab_tensor_cores`, `-Ctarget-cpu=sm_80`).
#[cfg(all(target_arch = "nvptx64", lab_tensor_cores))]
pub(crate) mod tensor_kernels {
    use super::mma_tiles::{chunk_place, mma_warp_tile, store_tiles};
    use super::*;
    use crate::device::mma::{
        cp_async_16, cp_async_16_whole, cp_async_commit, cp_async_pipeline, cp_async_wait,
        ldmatrix_x4, ldmatrix_x4_trans, mma_bf16_m16n8k16,
    };
    use crate::device::thread::{
        block_idx_x, block_idx_y, grid_dim_x, grid_dim_y, sync_threads, thread_idx_x,
    };
    use crate::device::unroll::unrolled;
    use crate::shared_array;

    shared_array!(GEMM_TC_STAGES: [u32; (TC_STAGES * TC_STAGE_BYTES / 4) as usize]);

    /// Queues the `cp.async` copy of the 16-byte chunk (8 bf16) at (`row`,
    /// `col`) of the row-major `rows x cols` matrix `p` to shared address
    /// `dst`; outside the matrix, nothing is read and the copy writes 16
    /// zero bytes (a source size of 0).
    ///
    /// # Safety
    /// `p` holds `rows * cols` bf16 and is 16-byte aligned, `cols` and `col`
    /// are multiples of 8 (so a chunk is inside a row or wholly outside);
    /// `dst` is a 16-byte-aligned chunk of shared memory.
    ///
    /// ([`load_stage`] writes the same three lines inline: calling this
    /// instead changes `gemm_bf16_mma`'s and `gemm_bf16_pipelined`'s PTX,
    /// whose measured ratios to their twins would then need a new run.)
    #[inline(always)]
    unsafe fn copy_chunk_or_zero(
        dst: u32,
        p: *const u16,
        row: u32,
        col: u32,
        rows: u32,
        cols: u32,
    ) {
        let inside = row < rows && col < cols;
        let src = if inside {
            p.wrapping_add(row as usize * cols as usize + col as usize)
        } else {
            p
        };
        // SAFETY: read only where inside (the caller's).
        unsafe { cp_async_16(dst, src.cast(), if inside { 16 } else { 0 }) };
    }

    /// Queues the copies of one step's tiles into the stage at shared
    /// address `a_tile`: the A tile (`TC_BLOCK_M x TC_BLOCK_K` from row
    /// `block_row`, column `p0`, rows `TC_A_STRIDE` apart) and right after
    /// it the B tile (`TC_BLOCK_K x BN` from row `p0`, column `block_col`,
    /// rows `BN + TC_PAD` apart), 16 bytes (8 bf16) a chunk, each of the
    /// `THREADS` threads `A_CHUNKS` chunks of A and `B_CHUNKS` of B; chunks
    /// outside the matrices are zeros.
    ///
    /// `BN` and `THREADS` are arguments, constants wherever this is inlined
    /// (a const parameter could not be computed from the caller's).
    ///
    /// # Safety
    /// `a` (m x k) and `b` (k x n) are 16-byte aligned with k and n
    /// multiples of 8, so every chunk is inside a row or wholly outside;
    /// the stage holds `tc_stage_bytes(BN)` bytes; `A_CHUNKS * THREADS * 8
    /// == TC_BLOCK_M * TC_BLOCK_K` and `B_CHUNKS * THREADS * 8 ==
    /// TC_BLOCK_K * BN` (the callers assert it at compile time).
    #[inline(always)]
    #[allow(clippy::too_many_arguments, non_snake_case)]
    unsafe fn load_stage<const A_CHUNKS: usize, const B_CHUNKS: usize>(
        a_tile: u32,
        BN: u32,
        THREADS: u32,
        a: *const u16,
        b: *const u16,
        m: u32,
        n: u32,
        k: u32,
        block_row: u32,
        block_col: u32,
        p0: u32,
    ) {
        let tid = thread_idx_x();
        let b_tile = a_tile + 2 * TC_BLOCK_M * TC_A_STRIDE;
        unrolled::<A_CHUNKS>(|s| {
            let (row, col) = chunk_place(tid, s, THREADS, TC_BLOCK_K);
            let (grow, gcol) = (block_row + row, p0 + col);
            let inside = grow < m && gcol < k;
            let src = if inside {
                a.wrapping_add(grow as usize * k as usize + gcol as usize)
            } else {
                a
            };
            // SAFETY: the destination is inside the stage; the source is
            // read only where inside (the caller's alignment).
            unsafe {
                cp_async_16(
                    a_tile + 2 * (row * TC_A_STRIDE + col),
                    src.cast(),
                    if inside { 16 } else { 0 },
                )
            };
        });
        unrolled::<B_CHUNKS>(|s| {
            let (row, col) = chunk_place(tid, s, THREADS, BN);
            let (grow, gcol) = (p0 + row, block_col + col);
            let inside = grow < k && gcol < n;
            let src = if inside {
                b.wrapping_add(grow as usize * n as usize + gcol as usize)
            } else {
                b
            };
            // SAFETY: as above.
            unsafe {
                cp_async_16(
                    b_tile + 2 * (row * (BN + TC_PAD) + col),
                    src.cast(),
                    if inside { 16 } else { 0 },
                )
            };
        });
    }

    // ANCHOR: gemm_bf16_mma
    /// `D = alpha * A * B + beta * C` with A and B in bf16 and the products
    /// summed in f32 on the tensor cores (`mma.sync` m16n8k16), C and D in
    /// f32. A block computes a `TC_BLOCK_M x TC_BLOCK_N` tile of D; its 8
    /// warps, as 2 x 4, a 64 x 32 tile each, as 4 x 4 `mma` tiles, with 64
    /// f32 accumulators a thread.
    ///
    /// # Memory
    /// Each step's A and B tiles go from global to shared memory by
    /// `cp.async` (no registers on the way), into one of two stages, so the
    /// next step's copy overlaps this step's `mma`s. Fragments come from
    /// shared memory by `ldmatrix` (A as stored, B transposed on the way);
    /// rows are padded by `TC_PAD` elements so an `ldmatrix` has no bank
    /// conflict. Chunks outside the matrices are zero-filled by the copy
    /// itself; the store is guarded.
    ///
    /// # Launch assumption
    /// `TC_THREADS` threads in one dimension, a grid of `ceil(n /
    /// TC_BLOCK_N) x ceil(m / TC_BLOCK_M)`; k and n multiples of
    /// `TC_ALIGN`, m and n not 0 (the epilogue reads a pair outside at a
    /// place of C's; the host refuses other shapes). Every thread reaches every
    /// barrier and every warp-wide instruction.
    ///
    /// # Safety
    /// `a` holds m x k bf16, `b` k x n bf16 (both 16-byte aligned), `c` and
    /// `d` m x n floats (8-byte aligned: the epilogue moves pairs); `d`
    /// overlaps none of them.
    #[unsafe(no_mangle)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe extern "ptx-kernel" fn gemm_bf16_mma(
        m: u32,
        n: u32,
        k: u32,
        alpha: f32,
        a: *const u16,
        b: *const u16,
        beta: f32,
        c: *const f32,
        d: *mut f32,
    ) {
        let base = GEMM_TC_STAGES::shared().addr();
        let tid = thread_idx_x();
        let (warp, lane) = (tid / 32, tid % 32);
        let (warp_row, warp_col) = ((warp / 4) * 64, (warp % 4) * 32);
        let (block_row, block_col) = (block_idx_y() * TC_BLOCK_M, block_idx_x() * TC_BLOCK_N);
        let steps = k.div_ceil(TC_BLOCK_K);
        let mut acc = [[[0.0f32; 4]; 4]; 4];

        // SAFETY: the launch assumption (alignment, shapes) is load_stage's.
        unsafe {
            load_stage::<2, 2>(
                base, TC_BLOCK_N, TC_THREADS, a, b, m, n, k, block_row, block_col, 0,
            )
        };
        cp_async_commit();
        let mut step = 0;
        while step < steps {
            // Start the next step's copy into the other stage, then wait for
            // this step's (all groups but the newest).
            if step + 1 < steps {
                // SAFETY: as above; the other stage was last read before the
                // barrier that ended the previous step.
                unsafe {
                    let stage = base + ((step + 1) % TC_STAGES) * TC_STAGE_BYTES;
                    load_stage::<2, 2>(
                        stage,
                        TC_BLOCK_N,
                        TC_THREADS,
                        a,
                        b,
                        m,
                        n,
                        k,
                        block_row,
                        block_col,
                        (step + 1) * TC_BLOCK_K,
                    )
                };
            }
            cp_async_commit();
            cp_async_wait::<1>();
            sync_threads();

            let a_tile = base + (step % TC_STAGES) * TC_STAGE_BYTES;
            // SAFETY: this stage's tiles, written before the barrier above;
            // the warp is converged (no divergent branch reaches here).
            unsafe {
                mma_warp_tile(
                    a_tile,
                    warp_row,
                    warp_col,
                    lane,
                    &mut acc,
                    mma_bf16_m16n8k16,
                    |_| {},
                )
            };
            sync_threads();
            step += 1;
        }
        cp_async_wait::<0>();

        // SAFETY: the caller's C and D (m x n).
        unsafe {
            store_tiles(
                &acc,
                block_row + warp_row,
                block_col + warp_col,
                lane,
                m,
                n,
                alpha,
                beta,
                c,
                d,
            )
        };
    }
    // ANCHOR_END: gemm_bf16_mma

    crate::dynamic_shared!(GEMM_TC_PIPELINE: [u32]);

    // ANCHOR: pipelined_steps
    /// The main loop and epilogue of the pipelined tensor-core kernels: a
    /// block of 2 x `WARPS_N` warps computes a `TC_BLOCK_M x (WARPS_N * NJ
    /// * 8)` tile of D, each warp 64 x `NJ * 8` as 4 x `NJ` `mma` tiles,
    /// through `STAGES` `cp.async` stages of `tc_stage_bytes(WARPS_N * NJ *
    /// 8)` bytes in the dynamic shared memory at `base`. `A_CHUNKS` and
    /// `B_CHUNKS` are [`load_stage`]'s (a compile-time error if they do not
    /// cover the tiles).
    ///
    /// # Memory
    /// Step `s` waits for its own copy (`cp.async.wait_group` with
    /// `IN_FLIGHT = STAGES - 2` newer groups allowed in flight), then the barrier;
    /// after it, every warp has finished step `s - 1`, so the copy for step
    /// `s + STAGES - 1` goes into that step's stage. Every thread commits
    /// one group a step, empty past the last step, so the wait's count
    /// holds to the end. A fragments by `ldmatrix.x4`, B fragments two
    /// 8-column tiles at a time by `ldmatrix.x4.trans`. Every output's
    /// `mma`s run in ascending k in every instance, so all instances give
    /// the same bits.
    ///
    /// # Safety
    /// As [`gemm_bf16_mma`]; `base` holds `STAGES * tc_stage_bytes(WARPS_N
    /// * NJ * 8)` bytes; the block has `64 * WARPS_N` threads.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn pipelined_steps<
        const WARPS_N: u32,
        const NJ: usize,
        const STAGES: u32,
        const IN_FLIGHT: u32,
        const A_CHUNKS: usize,
        const B_CHUNKS: usize,
    >(
        base: u32,
        m: u32,
        n: u32,
        k: u32,
        alpha: f32,
        a: *const u16,
        b: *const u16,
        beta: f32,
        c: *const f32,
        d: *mut f32,
    ) {
        const {
            let (threads, bn) = (64 * WARPS_N, WARPS_N * NJ as u32 * 8);
            assert!(
                NJ % 2 == 0 && STAGES >= 2,
                "B fragments come in pairs; a pipeline has 2 stages or more"
            );
            assert!(
                A_CHUNKS as u32 * threads * 8 == TC_BLOCK_M * TC_BLOCK_K
                    && B_CHUNKS as u32 * threads * 8 == TC_BLOCK_K * bn,
                "the threads' 16-byte chunks cover each tile once"
            );
        };
        let (threads, bn) = (64 * WARPS_N, WARPS_N * NJ as u32 * 8);
        let (b_stride, stage_bytes) = (bn + TC_PAD, tc_stage_bytes(bn));
        let tid = thread_idx_x();
        let (warp, lane) = (tid / 32, tid % 32);
        let (warp_row, warp_col) = ((warp / WARPS_N) * 64, (warp % WARPS_N) * NJ as u32 * 8);
        let (block_row, block_col) = (block_idx_y() * TC_BLOCK_M, block_idx_x() * bn);
        let steps = k.div_ceil(TC_BLOCK_K);
        let mut acc = [[[0.0f32; 4]; NJ]; 4];
        // SAFETY (every load_stage below): the caller's alignment and
        // shapes; the stage is inside `base`'s STAGES stages.
        let load = |stage: u32, step: u32| unsafe {
            load_stage::<A_CHUNKS, B_CHUNKS>(
                base + stage * stage_bytes,
                bn,
                threads,
                a,
                b,
                m,
                n,
                k,
                block_row,
                block_col,
                step * TC_BLOCK_K,
            )
        };

        // The refill goes out in two parts, A's copies after the first 16 of
        // k's fragment loads and mma and B's after the second's, not before
        // them: issued back to back with the step's `ldmatrix`, the copies
        // and the fragment loads filled the memory instruction queue (Nsight
        // Compute's MIO-throttle stalls were 17.7% of the samples against
        // the twin's 7.1%, whose address arithmetic spaces its copies out).
        // All four after the first 16 of k: 1.06 of the twin's time; split:
        // parity (docs/results/h200-2026-12-02-refill-split).
        cp_async_pipeline::<STAGES, IN_FLIGHT, 1, _>(
            steps,
            load,
            || {},
            |stage, _, refill| {
                let a_tile = base + stage * stage_bytes;
                let b_tile = a_tile + 2 * TC_BLOCK_M * TC_A_STRIDE;
                unrolled::<{ (TC_BLOCK_K / 16) as usize }>(|kk| {
                    let kk = kk as u32 * 16;
                    let mut fa = [[0u32; 4]; 4];
                    let mut fb = [[0u32; 2]; NJ];
                    // SAFETY: rows inside this stage, written before the barrier;
                    // the warp is converged.
                    unsafe {
                        unrolled::<4>(|i| {
                            let row = warp_row + i as u32 * 16 + (lane / 8 % 2) * 8 + lane % 8;
                            fa[i] = ldmatrix_x4(
                                a_tile + 2 * (row * TC_A_STRIDE + kk + (lane / 16) * 8),
                            );
                        });
                        unrolled::<NJ>(|j| {
                            if j % 2 == 0 {
                                let col = warp_col + j as u32 * 8 + (lane / 16) * 8;
                                let r = ldmatrix_x4_trans(
                                    b_tile + 2 * ((kk + lane % 16) * b_stride + col),
                                );
                                fb[j] = [r[0], r[1]];
                                fb[j + 1] = [r[2], r[3]];
                            }
                        });
                    }
                    unrolled::<4>(|i| {
                        unrolled::<NJ>(|j| acc[i][j] = mma_bf16_m16n8k16(fa[i], fb[j], acc[i][j]));
                    });
                    const {
                        assert!(
                            TC_BLOCK_K == 32,
                            "the refill's two parts go after the step's two 16s of k"
                        )
                    };
                    // SAFETY: as `load`: the stage the refill names, whole tiles.
                    refill.issue_part(
                        |stage, step| unsafe {
                            let (tile, p0) = (base + stage * stage_bytes, step * TC_BLOCK_K);
                            if kk == 0 {
                                load_stage::<A_CHUNKS, 0>(
                                    tile, bn, threads, a, b, m, n, k, block_row, block_col, p0,
                                )
                            } else {
                                load_stage::<0, B_CHUNKS>(
                                    tile, bn, threads, a, b, m, n, k, block_row, block_col, p0,
                                )
                            }
                        },
                        kk != 0,
                    );
                });
            },
        );
        // SAFETY: the caller's C and D (m x n).
        unsafe {
            store_tiles(
                &acc,
                block_row + warp_row,
                block_col + warp_col,
                lane,
                m,
                n,
                alpha,
                beta,
                c,
                d,
            )
        };
    }
    // ANCHOR_END: pipelined_steps

    // ANCHOR: gemm_bf16_pipelined
    /// [`gemm_bf16_mma`] with a deeper `cp.async` pipeline: `TC_PIPE_STAGES`
    /// stages in dynamic shared memory, so the copies of the next
    /// `TC_PIPE_STAGES - 1` steps are in flight while the warps multiply
    /// this one, and one barrier a step instead of two
    /// ([`pipelined_steps`]). The same tiles (128 x 128 x 32, 8 warps of 64
    /// x 32), the same stage layout, the same sums in the same order: its
    /// output is [`gemm_bf16_mma`]'s, bit for bit.
    ///
    /// # Memory
    /// As [`pipelined_steps`].
    ///
    /// # Launch assumption
    /// As [`gemm_bf16_mma`], with `TC_PIPE_BYTES` bytes of dynamic shared
    /// memory (the host raises the kernel's limit past 48 KiB).
    ///
    /// # Safety
    /// As [`gemm_bf16_mma`].
    #[unsafe(no_mangle)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe extern "ptx-kernel" fn gemm_bf16_pipelined(
        m: u32,
        n: u32,
        k: u32,
        alpha: f32,
        a: *const u16,
        b: *const u16,
        beta: f32,
        c: *const f32,
        d: *mut f32,
    ) {
        let base = GEMM_TC_PIPELINE::shared().addr();
        // SAFETY: the caller's; 8 warps as 2 x 4, each 4 x 4 mma tiles.
        unsafe {
            pipelined_steps::<4, 4, TC_PIPE_STAGES, { TC_PIPE_STAGES - 2 }, 2, 2>(
                base, m, n, k, alpha, a, b, beta, c, d,
            )
        };
    }
    // ANCHOR_END: gemm_bf16_pipelined

    /// Queues the copies of one step's tiles of a swizzled kernel (a block
    /// of `BN` threads over a `SW_BLOCK_M x BN` tile, `BK` of k a step) into
    /// the stage at shared address `stage`: the A tile (`SW_BLOCK_M x BK`
    /// from row `block_row`, column `p0`), then at `sw_a_bytes(BK)` the B
    /// tile (`BK x BN` from row `p0`, column `block_col`), each chunk at its
    /// [`sw_offset`]. Chunk `tid + s * BN` in row-major order, so a warp's
    /// 32 consecutive copies read whole row segments of A and 512
    /// consecutive bytes of B: every 32-byte sector they touch is used;
    /// zeros outside the matrices. `A_COPIES` and `B_COPIES` are the chunks
    /// a thread copies of each tile (a compile-time error if they do not
    /// cover it).
    ///
    /// With `GUARDED` false every chunk is taken to be inside (the caller
    /// knows the block's tiles are whole) and copied with
    /// [`cp_async_16_whole`]: no comparison, no zero fill.
    ///
    /// # Safety
    /// As [`copy_chunk_or_zero`] for `a` (m x k) and `b` (k x n), and with
    /// `GUARDED` false every chunk inside; the stage holds
    /// `sw_stage_bytes(BN, BK)` bytes.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn load_swizzled_stage<
        const GUARDED: bool,
        const BN: u32,
        const BK: u32,
        const A_COPIES: usize,
        const B_COPIES: usize,
    >(
        stage: u32,
        a: *const u16,
        b: *const u16,
        m: u32,
        n: u32,
        k: u32,
        block_row: u32,
        block_col: u32,
        p0: u32,
    ) {
        const {
            assert!(
                A_COPIES as u32 * BN == SW_BLOCK_M * BK / 8 && B_COPIES as u32 * BN == BK * BN / 8,
                "a block of BN threads copies each tile's 16-byte chunks in whole rounds"
            )
        };
        let tid = thread_idx_x();
        let (a_width, b_width) = (BK / 8, BN / 8);
        // SAFETY: the caller's; `dst` is a chunk inside the stage.
        let copy = |dst: u32, p: *const u16, row: u32, col: u32, rows: u32, cols: u32| unsafe {
            if GUARDED {
                copy_chunk_or_zero(dst, p, row, col, rows, cols)
            } else {
                cp_async_16_whole(
                    dst,
                    p.wrapping_add(row as usize * cols as usize + col as usize)
                        .cast(),
                )
            }
        };
        unrolled::<A_COPIES>(|s| {
            let chunk = tid + s as u32 * BN;
            let (row, c) = (chunk / a_width, chunk % a_width);
            copy(
                stage + sw_offset(row, c, a_width),
                a,
                block_row + row,
                p0 + c * 8,
                m,
                k,
            );
        });
        unrolled::<B_COPIES>(|s| {
            let chunk = tid + s as u32 * BN;
            let (row, c) = (chunk / b_width, chunk % b_width);
            copy(
                stage + sw_a_bytes(BK) + sw_offset(row, c, b_width),
                b,
                p0 + row,
                block_col + c * 8,
                k,
                n,
            );
        });
    }

    /// The fragments of 16 of k (from `kk`, a multiple of 16) of a warp's
    /// 64 x 64 tile at (`warp_row`, `warp_col`) of the swizzled stage at
    /// `stage` (tiles `BN` wide, `BK` deep): 4 A fragments (16 x 16) by
    /// `ldmatrix.x4`, 8 B fragments (16 x 8) two at a time by
    /// `ldmatrix.x4.trans`.
    ///
    /// # Safety
    /// The stage's tiles were written before a barrier (or are never used);
    /// the warp is converged.
    #[inline(always)]
    unsafe fn swizzled_fragments<const BN: u32, const BK: u32>(
        stage: u32,
        warp_row: u32,
        warp_col: u32,
        lane: u32,
        kk: u32,
    ) -> ([[u32; 4]; 4], [[u32; 2]; 8]) {
        let mut fa = [[0u32; 4]; 4];
        let mut fb = [[0u32; 2]; 8];
        // SAFETY (both): every address is a chunk inside the stage.
        unrolled::<4>(|i| {
            let row = warp_row + i as u32 * 16 + lane % 16;
            fa[i] = unsafe { ldmatrix_x4(stage + sw_offset(row, kk / 8 + lane / 16, BK / 8)) };
        });
        unrolled::<4>(|jj| {
            let chunk = (warp_col + jj as u32 * 16) / 8 + lane / 16;
            let r = unsafe {
                ldmatrix_x4_trans(stage + sw_a_bytes(BK) + sw_offset(kk + lane % 16, chunk, BN / 8))
            };
            fb[2 * jj] = [r[0], r[1]];
            fb[2 * jj + 1] = [r[2], r[3]];
        });
        (fa, fb)
    }

    // ANCHOR: gemm_bf16_swizzled
    /// [`gemm_bf16_pipelined`]'s sums from a faster shape: a block computes
    /// a `SW_BLOCK_M x SW_BLOCK_N` tile of D with 4 warps of 64 x 64 (4 x 8
    /// `mma` tiles, 128 f32 accumulators a thread), so each 16 of k a warp
    /// issues 8 `ldmatrix.x4` for 32 `mma` where a 64 x 32 warp issues 6
    /// (4 `.x4` and 2 `.x4.trans`) for 16.
    ///
    /// # Memory
    /// - `SW_STAGES` `cp.async` stages in dynamic shared memory, rows
    ///   XOR-swizzled ([`sw_offset`]) instead of padded: no bank conflict on
    ///   either the copies' or `ldmatrix`'s side.
    /// - The fragments of the next 16 of k are loaded before this 16's
    ///   `mma`s (two register sets), across the step's end too: the wait
    ///   and barrier for step `s + 1` come before step `s`'s last 16 of k,
    ///   so its first fragments load while that 16 multiplies.
    /// - Step `s` copies step `s + SW_STAGES - 1` into the stage step `s - 1`
    ///   used, whose last fragments every warp loaded before the barrier.
    ///   One group a step, empty past the end, so the wait's count holds.
    /// - The grid is walked in groups of `SW_GROUP` block rows
    ///   ([`grouped_block`]).
    ///
    /// Every output's `mma`s run in ascending k: the output is
    /// [`gemm_bf16_mma`]'s, bit for bit.
    ///
    /// # Launch assumption
    /// `SW_THREADS` threads in one dimension, a grid of `ceil(n /
    /// SW_BLOCK_N) x ceil(m / SW_BLOCK_M)`, `SW_BYTES` bytes of dynamic
    /// shared memory (the host raises the kernel's limit past 48 KiB); k
    /// and n multiples of `TC_ALIGN`, m and n not 0. Every thread reaches
    /// every barrier and every warp-wide instruction.
    ///
    /// # Safety
    /// As [`gemm_bf16_mma`].
    #[unsafe(no_mangle)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe extern "ptx-kernel" fn gemm_bf16_swizzled(
        m: u32,
        n: u32,
        k: u32,
        alpha: f32,
        a: *const u16,
        b: *const u16,
        beta: f32,
        c: *const f32,
        d: *mut f32,
    ) {
        // SAFETY: the caller's; 4 warps as 2 x 2, 4 stages of 32 of k.
        unsafe {
            swizzled_block::<
                SW_BLOCK_N,
                SW_BLOCK_K,
                SW_STAGES,
                { SW_STAGES - 2 },
                { (SW_STAGES - 1) as usize },
                2,
                4,
                4,
            >(m, n, k, alpha, a, b, beta, c, d)
        }
    }
    // ANCHOR_END: gemm_bf16_swizzled
    crate::launch_bounds!(gemm_bf16_swizzled, SW_THREADS, SW_MIN_BLOCKS);

    // ANCHOR: gemm_bf16_swizzled_wide
    /// [`gemm_bf16_swizzled`] over blocks twice as wide and steps twice as
    /// deep, for GPUs that give a block `SWW_BYTES` (144 KiB) of shared
    /// memory: 8 warps of 64 x 64 as 2 x 4 over a `SW_BLOCK_M x SWW_BLOCK_N`
    /// tile, `SWW_BLOCK_K` of k a step through `SWW_STAGES` stages, one
    /// block an SM. Per step a block reads 25% fewer bytes of A and B for
    /// its products, and waits at one barrier for 64 of k instead of 32.
    ///
    /// # Memory
    /// As [`gemm_bf16_swizzled`], with `SWW_STAGES` stages of
    /// `sw_stage_bytes(SWW_BLOCK_N, SWW_BLOCK_K)` bytes. The output is
    /// [`gemm_bf16_mma`]'s, bit for bit.
    ///
    /// # Launch assumption
    /// `SWW_THREADS` threads in one dimension, a grid of `ceil(n /
    /// SWW_BLOCK_N) x ceil(m / SW_BLOCK_M)`, `SWW_BYTES` bytes of dynamic
    /// shared memory (the host refuses a GPU that cannot give them); k and
    /// n multiples of `TC_ALIGN`, m and n not 0. Every thread reaches every
    /// barrier and every warp-wide instruction.
    ///
    /// # Safety
    /// As [`gemm_bf16_mma`].
    #[unsafe(no_mangle)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe extern "ptx-kernel" fn gemm_bf16_swizzled_wide(
        m: u32,
        n: u32,
        k: u32,
        alpha: f32,
        a: *const u16,
        b: *const u16,
        beta: f32,
        c: *const f32,
        d: *mut f32,
    ) {
        // SAFETY: the caller's; 8 warps as 2 x 4, 3 stages of 64 of k.
        unsafe {
            swizzled_block::<
                SWW_BLOCK_N,
                SWW_BLOCK_K,
                SWW_STAGES,
                { SWW_STAGES - 2 },
                { (SWW_STAGES - 1) as usize },
                4,
                4,
                8,
            >(m, n, k, alpha, a, b, beta, c, d)
        }
    }
    // ANCHOR_END: gemm_bf16_swizzled_wide
    crate::launch_bounds!(gemm_bf16_swizzled_wide, SWW_THREADS, SWW_MIN_BLOCKS);

    // ANCHOR: swizzled_block
    /// A swizzled kernel's block: which tile of D it computes
    /// ([`grouped_block`] over `SW_BLOCK_M x BN` tiles), then its steps,
    /// with unguarded copies where the block's tiles are whole at every
    /// step ([`swizzled_steps`]; the const parameters are its).
    ///
    /// # Safety
    /// As [`swizzled_steps`] with `GUARDED` true.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn swizzled_block<
        const BN: u32,
        const BK: u32,
        const STAGES: u32,
        const IN_FLIGHT: u32,
        const PROLOGUE: usize,
        const K16S: usize,
        const A_COPIES: usize,
        const B_COPIES: usize,
    >(
        m: u32,
        n: u32,
        k: u32,
        alpha: f32,
        a: *const u16,
        b: *const u16,
        beta: f32,
        c: *const f32,
        d: *mut f32,
    ) {
        let (row_block, col_block) = grouped_block(
            block_idx_y() * grid_dim_x() + block_idx_x(),
            grid_dim_y(),
            grid_dim_x(),
            SW_GROUP,
        );
        let (block_row, block_col) = (row_block * SW_BLOCK_M, col_block * BN);
        // One branch a block, the same for all its threads: where the
        // block's tiles are whole at every step, the copies need no guard.
        // (Written as differences: `block_row < m` and `block_col < n`
        // where m, n > 0, and a sum could wrap for n near 2^32.)
        let whole = m > block_row
            && m - block_row >= SW_BLOCK_M
            && n > block_col
            && n - block_col >= BN
            && k % BK == 0;
        // SAFETY: the caller's; `whole` is what the unguarded copies need.
        unsafe {
            if whole {
                swizzled_steps::<false, BN, BK, STAGES, IN_FLIGHT, PROLOGUE, K16S, A_COPIES, B_COPIES>(
                    block_row, block_col, m, n, k, alpha, a, b, beta, c, d,
                )
            } else {
                swizzled_steps::<true, BN, BK, STAGES, IN_FLIGHT, PROLOGUE, K16S, A_COPIES, B_COPIES>(
                    block_row, block_col, m, n, k, alpha, a, b, beta, c, d,
                )
            }
        }
    }
    // ANCHOR_END: swizzled_block

    // ANCHOR: swizzled_steps
    /// The main loop and epilogue of a swizzled kernel for the block tile at
    /// (`block_row`, `block_col`), its copies guarded or not
    /// ([`load_swizzled_stage`]'s `GUARDED`): `BN` threads, 2 x `BN / 64`
    /// warps of 64 x 64, `STAGES` stages of `BK` of k. `IN_FLIGHT` is
    /// `STAGES - 2`, `PROLOGUE` `STAGES - 1`, `K16S` `BK / 16` (a
    /// compile-time error otherwise).
    ///
    /// # Safety
    /// As [`gemm_bf16_swizzled`] for this shape; with `GUARDED` false the
    /// block's tiles are inside the matrices at every step.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn swizzled_steps<
        const GUARDED: bool,
        const BN: u32,
        const BK: u32,
        const STAGES: u32,
        const IN_FLIGHT: u32,
        const PROLOGUE: usize,
        const K16S: usize,
        const A_COPIES: usize,
        const B_COPIES: usize,
    >(
        block_row: u32,
        block_col: u32,
        m: u32,
        n: u32,
        k: u32,
        alpha: f32,
        a: *const u16,
        b: *const u16,
        beta: f32,
        c: *const f32,
        d: *mut f32,
    ) {
        const {
            assert!(
                BN % 64 == 0 && BK % 32 == 0 && STAGES >= 2,
                "64 x 64 warps; an even number of 16s of k a step"
            );
            assert!(
                IN_FLIGHT == STAGES - 2
                    && PROLOGUE == STAGES as usize - 1
                    && K16S == BK as usize / 16,
                "the derived counts match the shape"
            );
        };
        let base = GEMM_TC_PIPELINE::shared().addr();
        let tid = thread_idx_x();
        let (warp, lane) = (tid / 32, tid % 32);
        let warps_n = BN / 64;
        let (warp_row, warp_col) = ((warp / warps_n) * 64, (warp % warps_n) * 64);
        let steps = k.div_ceil(BK);
        // The stages rotate: `stage` is step `step`'s, and the one after it
        // wraps to `base`. (Held in a variable, not `base + step % STAGES *
        // bytes`: LLVM spreads that remainder into every fragment's and
        // copy's address, a register each.)
        let bytes = sw_stage_bytes(BN, BK);
        let last_stage = base + (STAGES - 1) * bytes;
        let mut acc = [[[0.0f32; 4]; 8]; 4];

        unrolled::<PROLOGUE>(|s| {
            if (s as u32) < steps {
                // SAFETY: the caller's shapes and alignment; a stage of `base`.
                unsafe {
                    load_swizzled_stage::<GUARDED, BN, BK, A_COPIES, B_COPIES>(
                        base + s as u32 * bytes,
                        a,
                        b,
                        m,
                        n,
                        k,
                        block_row,
                        block_col,
                        s as u32 * BK,
                    )
                };
            }
            cp_async_commit();
        });
        cp_async_wait::<IN_FLIGHT>();
        sync_threads();
        // SAFETY (every fragment load): the stage's copies landed before the
        // last barrier (past the last step, a stage never used).
        let mut frags = unsafe { swizzled_fragments::<BN, BK>(base, warp_row, warp_col, lane, 0) };
        let (mut step, mut stage, mut previous) = (0, base, last_stage);
        while step < steps {
            let following = if stage == last_stage {
                base
            } else {
                stage + bytes
            };
            unrolled::<K16S>(|kk| {
                let last = kk == K16S - 1;
                if last {
                    cp_async_wait::<IN_FLIGHT>();
                    sync_threads();
                }
                let (at, kk_next) = if last {
                    (following, 0)
                } else {
                    (stage, (kk as u32 + 1) * 16)
                };
                let next =
                    unsafe { swizzled_fragments::<BN, BK>(at, warp_row, warp_col, lane, kk_next) };
                if kk == 0 {
                    // Step `step + STAGES - 1` goes where step `step - 1` was.
                    let s = step + STAGES - 1;
                    if s < steps {
                        // SAFETY: as the prologue's.
                        unsafe {
                            load_swizzled_stage::<GUARDED, BN, BK, A_COPIES, B_COPIES>(
                                previous,
                                a,
                                b,
                                m,
                                n,
                                k,
                                block_row,
                                block_col,
                                s * BK,
                            )
                        };
                    }
                    cp_async_commit();
                }
                unrolled::<4>(|i| {
                    unrolled::<8>(|j| {
                        acc[i][j] = mma_bf16_m16n8k16(frags.0[i], frags.1[j], acc[i][j])
                    });
                });
                frags = next;
            });
            (previous, stage) = (stage, following);
            step += 1;
        }
        cp_async_wait::<0>();

        // SAFETY: the caller's C and D (m x n).
        unsafe {
            store_tiles(
                &acc,
                block_row + warp_row,
                block_col + warp_col,
                lane,
                m,
                n,
                alpha,
                beta,
                c,
                d,
            )
        };
    }
    // ANCHOR_END: swizzled_steps

    /// The Hopper kernels, in the sm_90a module only (`--cfg lab_hopper`,
    /// `-Ctarget-cpu=sm_90a`): `wgmma` reads both operands from shared
    /// memory, so no warp loads a fragment.
    #[cfg(lab_hopper)]
    pub(crate) mod hopper {
        use super::*;
        use crate::device::tma::{
            fence_mbarrier_init, fence_tensormap_acquire, mbarrier_arrive_expect_tx, mbarrier_init,
            mbarrier_wait_parity, tma_load_2d,
        };
        use crate::device::warp::uniform;
        use crate::device::wgmma::{WgmmaAcc, fence_proxy_async_shared, wgmma_commit, wgmma_fence};
        use crate::gemm::mma_tiles::store_tile_row;

        crate::dynamic_shared!(GEMM_WG_PIPELINE: [u32]);

        /// Queues the copies of one step's tiles into the stage at shared
        /// address `stage` (1024-byte aligned): the A tile (`WG_BLOCK_M x
        /// WG_BLOCK_K` from row `block_row`, column `p0`) at
        /// [`wg_a_offset`], then the B tile (`WG_BLOCK_K x BN` from row
        /// `p0`, column `block_col`, `BN = 32 B_CHUNKS`) at `WG_A_BYTES` +
        /// [`wg_b_offset`]. 16 bytes (8 bf16) a chunk, 4 chunks of A and
        /// `B_CHUNKS` of B a thread; 8 (A) or `BN / 8` (B) consecutive
        /// threads read one row's 128 or `2 BN` bytes, so the reads
        /// coalesce; chunks outside the matrices are zeros.
        ///
        /// # Safety
        /// `a` (m x k) and `b` (k x n) are 16-byte aligned with k and n
        /// multiples of 8; the stage holds `wg_stage_bytes(BN)` bytes.
        /// Every one of the block's `WG_THREADS` threads calls it (each
        /// queues only its own chunks); the copies have landed only after
        /// the caller commits and waits for the group (`cp_async_commit`,
        /// `cp_async_wait`), and a `wgmma` may read the stage only after
        /// every thread's [`fence_proxy_async_shared`] and a barrier.
        #[inline(always)]
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn load_wg_stage<const B_CHUNKS: usize>(
            stage: u32,
            a: *const u16,
            b: *const u16,
            m: u32,
            n: u32,
            k: u32,
            block_row: u32,
            block_col: u32,
            p0: u32,
        ) {
            const A_CHUNKS: usize = (WG_BLOCK_M * WG_BLOCK_K / 8 / WG_THREADS) as usize;
            let bn = B_CHUNKS as u32 * WG_THREADS * 8 / WG_BLOCK_K;
            let tid = thread_idx_x();
            unrolled::<A_CHUNKS>(|s| {
                let chunk = tid + s as u32 * WG_THREADS;
                let (row, col) = (chunk / (WG_BLOCK_K / 8), (chunk % (WG_BLOCK_K / 8)) * 8);
                let (grow, gcol) = (block_row + row, p0 + col);
                let inside = grow < m && gcol < k;
                let src = if inside {
                    a.wrapping_add(grow as usize * k as usize + gcol as usize)
                } else {
                    a
                };
                // SAFETY: inside the stage; read only where inside.
                unsafe {
                    cp_async_16(
                        stage + wg_a_offset(row, col),
                        src.cast(),
                        if inside { 16 } else { 0 },
                    )
                };
            });
            unrolled::<B_CHUNKS>(|s| {
                let chunk = tid + s as u32 * WG_THREADS;
                let (row, col) = (chunk / (bn / 8), (chunk % (bn / 8)) * 8);
                let (grow, gcol) = (p0 + row, block_col + col);
                let inside = grow < k && gcol < n;
                let src = if inside {
                    b.wrapping_add(grow as usize * n as usize + gcol as usize)
                } else {
                    b
                };
                // SAFETY: as above.
                unsafe {
                    cp_async_16(
                        stage + WG_A_BYTES + wg_b_offset(row, col),
                        src.cast(),
                        if inside { 16 } else { 0 },
                    )
                };
            });
        }

        /// One step of k (64) for a warpgroup: its 4 `wgmma`s (k = 16 each,
        /// the descriptors advanced 32 bytes along A's rows and 2048 bytes
        /// down B's) on the stage at `stage`, between a fence and a commit,
        /// then the wait for all but this group.
        ///
        /// # Safety
        /// As [`WgmmaAcc::mma_bf16`], for the stage's tiles.
        #[inline(always)]
        pub(crate) unsafe fn wgmma_step<const H: usize>(
            acc: &mut [[[f32; 4]; 16]; H],
            stage: u32,
            warpgroup: u32,
        ) where
            [[[f32; 4]; 16]; H]: WgmmaAcc,
        {
            wgmma_fence();
            unrolled::<{ (WG_BLOCK_K / 16) as usize }>(|kk| {
                let kk = kk as u32;
                // SAFETY: the caller's.
                unsafe {
                    acc.mma_bf16(
                        wg_a_descriptor(stage, warpgroup, kk),
                        wg_b_descriptor(stage, kk),
                    )
                };
            });
            wgmma_commit();
            acc.wait::<1>();
        }

        /// The epilogue of a warp of a Hopper block: `D = alpha * acc + beta
        /// * C` for its 16 rows from `row0` and `128 H` columns from `col0`,
        /// each 128 columns as 16 C fragments (C loaded, then D stored,
        /// [`store_tile_row`]), inside m x n only.
        ///
        /// # Safety
        /// As [`store_tiles`].
        #[inline(always)]
        #[allow(clippy::too_many_arguments)]
        unsafe fn store_wg<const H: usize>(
            acc: &[[[f32; 4]; 16]; H],
            row0: u32,
            col0: u32,
            lane: u32,
            m: u32,
            n: u32,
            alpha: f32,
            beta: f32,
            c: *const f32,
            d: *mut f32,
        ) {
            unrolled::<H>(|h| {
                // SAFETY: the caller's.
                unsafe {
                    store_tile_row(
                        &acc[h],
                        row0,
                        col0 + 128 * h as u32,
                        lane,
                        m,
                        n,
                        alpha,
                        beta,
                        c,
                        d,
                    )
                };
            });
        }

        // ANCHOR: wgmma_pipeline
        /// The body of the Hopper kernels: a block of 2 warpgroups computes
        /// a `WG_BLOCK_M x 128 H` tile of D, each warpgroup 64 rows with
        /// `wgmma` m64n(128 H)k16, through `STAGES` `cp.async` stages of
        /// `wg_stage_bytes(128 H)` bytes in the dynamic shared memory
        /// (`IN_FLIGHT = STAGES - 3` and `B_CHUNKS = 4 H` are checked at
        /// compile time: a const parameter cannot be computed from another).
        ///
        /// # Memory
        /// Each step's A and B tiles (64 deep) go from global to shared
        /// memory by `cp.async` in the 128-byte swizzle `wgmma` reads
        /// ([`wg_a_offset`], [`wg_b_offset`]). Step `s` waits for its own
        /// copy, fences it to the async proxy and passes the barrier; then
        /// queues the copy of step `s + STAGES - 2` into the stage step `s -
        /// 2` used (its `wgmma`s finished before the barrier: each
        /// warpgroup waits for all but its newest group), and issues its 4
        /// `wgmma`s (k = 16 each, the descriptors advanced 32 bytes along
        /// A's rows and 2048 bytes down B's) as one group, left in flight
        /// while the next step's copy is waited for. Every thread commits
        /// one copy group a step (empty past the end), so the waits' counts
        /// hold to the end. The block's tile comes from [`grouped_block`]:
        /// the grid is walked in groups of `WG_GROUP` block rows.
        ///
        /// # Safety
        /// As [`gemm_bf16_wgmma`]; the launch has `STAGES *
        /// wg_stage_bytes(128 H) + WG_TILE_ALIGN` bytes of dynamic shared
        /// memory and a grid of `ceil(n / (128 H)) x ceil(m / WG_BLOCK_M)`.
        #[inline(always)]
        #[allow(clippy::too_many_arguments)]
        unsafe fn wgmma_pipeline<
            const STAGES: u32,
            const IN_FLIGHT: u32,
            const H: usize,
            const B_CHUNKS: usize,
        >(
            m: u32,
            n: u32,
            k: u32,
            alpha: f32,
            a: *const u16,
            b: *const u16,
            beta: f32,
            c: *const f32,
            d: *mut f32,
        ) where
            [[[f32; 4]; 16]; H]: WgmmaAcc,
        {
            const {
                assert!(
                    B_CHUNKS == 4 * H,
                    "each thread copies 4 chunks of each 128 columns of B"
                );
            };
            let bn = 128 * H as u32;
            let stage_bytes = wg_stage_bytes(bn);
            let base =
                (GEMM_WG_PIPELINE::shared().addr() + WG_TILE_ALIGN - 1) & !(WG_TILE_ALIGN - 1);
            let tid = thread_idx_x();
            // The warpgroup index through `uniform`: ptxas then forms the
            // descriptors built from it in uniform registers.
            let (warpgroup, warp, lane) = (uniform(tid / 128), tid % 128 / 32, tid % 32);
            // The grid in groups of WG_GROUP block rows ([`grouped_block`]).
            let (row_block, col_block) = grouped_block(
                block_idx_y() * grid_dim_x() + block_idx_x(),
                grid_dim_y(),
                grid_dim_x(),
                WG_GROUP,
            );
            let (block_row, block_col) = (row_block * WG_BLOCK_M, col_block * bn);
            let steps = k.div_ceil(WG_BLOCK_K);
            let mut acc = [[[0.0f32; 4]; 16]; H];
            // SAFETY (every load below): the caller's alignment and shapes;
            // the stage is one of the STAGES inside the aligned base.
            let load = |stage: u32, step: u32| unsafe {
                load_wg_stage::<B_CHUNKS>(
                    base + stage * stage_bytes,
                    a,
                    b,
                    m,
                    n,
                    k,
                    block_row,
                    block_col,
                    step * WG_BLOCK_K,
                )
            };

            // SAFETY (compute): the stage was written, fenced and published
            // by the barrier before it, and is not rewritten before this
            // group is waited for (AHEAD 2); the warpgroup is converged.
            cp_async_pipeline::<STAGES, IN_FLIGHT, 2, _>(
                steps,
                load,
                fence_proxy_async_shared,
                |stage, _, refill| {
                    // The refill first, as before this step's `wgmma`s.
                    refill.issue();
                    unsafe { wgmma_step(&mut acc, base + stage * stage_bytes, warpgroup) }
                },
            );
            acc.wait::<0>();
            // SAFETY: the caller's C and D (m x n).
            unsafe {
                store_wg(
                    &acc,
                    block_row + warpgroup * 64 + warp * 16,
                    block_col,
                    lane,
                    m,
                    n,
                    alpha,
                    beta,
                    c,
                    d,
                )
            };
        }
        // ANCHOR_END: wgmma_pipeline

        // ANCHOR: gemm_bf16_wgmma
        /// `D = alpha * A * B + beta * C` with A and B in bf16 and the
        /// products summed in f32 on Hopper's warpgroup tensor cores
        /// (`wgmma.mma_async` m64n256k16, both operands from shared memory
        /// through descriptors), C and D in f32. A block computes a
        /// `WG_BLOCK_M x WG_BLOCK_N` tile of D; each of its 2 warpgroups 64
        /// rows of it, 128 f32 accumulators a thread.
        ///
        /// # Memory
        /// As [`wgmma_pipeline`], through `WG_STAGES` stages.
        ///
        /// # Launch assumption
        /// `WG_THREADS` threads in one dimension, a grid of `ceil(n /
        /// WG_BLOCK_N) x ceil(m / WG_BLOCK_M)`, `WG_SHARED_BYTES` of dynamic
        /// shared memory; k and n multiples of `TC_ALIGN`, m and n not 0.
        /// Every thread reaches every barrier and every warpgroup-wide
        /// instruction.
        ///
        /// # Safety
        /// `a` holds m x k bf16, `b` k x n bf16 (both 16-byte aligned), `c`
        /// and `d` m x n floats (8-byte aligned: the epilogue moves pairs);
        /// `d` overlaps none of them.
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn gemm_bf16_wgmma(
            m: u32,
            n: u32,
            k: u32,
            alpha: f32,
            a: *const u16,
            b: *const u16,
            beta: f32,
            c: *const f32,
            d: *mut f32,
        ) {
            const H: usize = (WG_BLOCK_N / 128) as usize;
            // SAFETY: the caller's.
            unsafe {
                wgmma_pipeline::<WG_STAGES, { WG_STAGES - 3 }, H, { 4 * H }>(
                    m, n, k, alpha, a, b, beta, c, d,
                )
            };
        }
        // ANCHOR_END: gemm_bf16_wgmma

        // ANCHOR: tma_pipeline
        /// The TMA kernel's body: [`wgmma_pipeline`]'s tiles, stages and
        /// `wgmma`s, with each step's tiles copied by the tensor memory
        /// accelerator instead of by every thread: thread 0 announces the
        /// stage's bytes on the stage's `mbarrier` and issues one 2D copy of
        /// A's tile (128 rows x 64 k) and `H * 2` of B's (64 k x 64 columns
        /// each, one per 64-column block), each landing in the 128-byte
        /// swizzle `wgmma` reads; every thread waits on the barrier's phase
        /// for the step. Edges need no code: the copy zero-fills what lies
        /// outside the matrix.
        ///
        /// # Memory
        /// `STAGES` stages of `wg_stage_bytes(128 H)` bytes, then one 8-byte
        /// barrier a stage. Thread 0 initialises the barriers and issues the
        /// first `STAGES - 2` steps' copies before the first block barrier.
        /// Step `s` waits for its stage's phase (parity `(s
        /// / STAGES) % 2`), passes the block barrier (after it, every
        /// warpgroup has waited for its `wgmma`s of step `s - 2`), then
        /// thread 0 refills the stage of step `s - 2` with step `s + STAGES
        /// - 2`, and the warpgroups issue step `s`'s `wgmma`s. The block's
        /// tile comes from [`grouped_block`] (groups of `WG_GROUP` block
        /// rows), as in [`wgmma_pipeline`].
        ///
        /// # Safety
        /// `tmap_a` and `tmap_b` are the global addresses of tensor maps of
        /// A (m x k bf16, box 64 x 128, 128-byte swizzle) and B (k x n bf16,
        /// box 64 x 64, 128-byte swizzle) that nothing writes during the
        /// kernel; the launch has `STAGES * (wg_stage_bytes(128 H) + 8) +
        /// WG_TILE_ALIGN` bytes of dynamic shared memory and a grid of
        /// `ceil(n / (128 H)) x ceil(m / WG_BLOCK_M)`; `c` and `d` hold m x n
        /// floats (8-byte aligned: the epilogue moves pairs), `d` overlapping
        /// nothing.
        #[inline(always)]
        #[allow(clippy::too_many_arguments)]
        unsafe fn tma_pipeline<const STAGES: u32, const H: usize>(
            m: u32,
            n: u32,
            k: u32,
            alpha: f32,
            tmap_a: *const u8,
            tmap_b: *const u8,
            beta: f32,
            c: *const f32,
            d: *mut f32,
        ) where
            [[[f32; 4]; 16]; H]: WgmmaAcc,
        {
            const {
                assert!(
                    STAGES >= 3,
                    "a stage is refilled two steps after its wgmmas were issued"
                )
            };
            let bn = 128 * H as u32;
            let stage_bytes = wg_stage_bytes(bn);
            let base =
                (GEMM_WG_PIPELINE::shared().addr() + WG_TILE_ALIGN - 1) & !(WG_TILE_ALIGN - 1);
            let bar = |stage: u32| base + STAGES * stage_bytes + 8 * stage;
            let tid = thread_idx_x();
            // As in `wgmma_pipeline`: the descriptors in uniform registers.
            let (warpgroup, warp, lane) = (uniform(tid / 128), tid % 128 / 32, tid % 32);
            // The grid in groups of WG_GROUP block rows ([`grouped_block`]).
            let (row_block, col_block) = grouped_block(
                block_idx_y() * grid_dim_x() + block_idx_x(),
                grid_dim_y(),
                grid_dim_x(),
                WG_GROUP,
            );
            let (block_row, block_col) = (row_block * WG_BLOCK_M, col_block * bn);
            let steps = k.div_ceil(WG_BLOCK_K);
            let mut acc = [[[0.0f32; 4]; 16]; H];
            // Thread 0's copies of one step into its stage: A's box at (k,
            // row), then B's boxes at (column, k), 64 columns each.
            // SAFETY (every issue below): thread 0 only; the maps are the
            // caller's; the stage is free (see # Memory) and its barrier's
            // arrival announces exactly the boxes' bytes.
            let issue = |step: u32| unsafe {
                let (stage, p0) = (
                    base + (step % STAGES) * stage_bytes,
                    (step * WG_BLOCK_K) as i32,
                );
                mbarrier_arrive_expect_tx(bar(step % STAGES), stage_bytes);
                tma_load_2d(stage, tmap_a, p0, block_row as i32, bar(step % STAGES));
                unrolled::<H>(|h| {
                    unrolled::<2>(|half| {
                        let blk = 2 * h as u32 + half as u32;
                        let col = (block_col + 64 * blk) as i32;
                        tma_load_2d(
                            stage + WG_A_BYTES + blk * WG_B_LBO,
                            tmap_b,
                            col,
                            p0,
                            bar(step % STAGES),
                        );
                    });
                });
            };

            // Thread 0 sets up the barriers and issues the first steps'
            // copies in one block, before the one block barrier that
            // publishes the barriers to the other threads (two blocks on
            // the same condition around the barrier would let LLVM thread
            // them, copying `bar.sync` into each path: undefined for an
            // `.aligned` barrier).
            if tid == 0 {
                let mut s = 0;
                while s < STAGES {
                    // SAFETY: one thread initialises each barrier, before
                    // the fence, the copies and the block barrier below.
                    unsafe { mbarrier_init(bar(s), 1) };
                    s += 1;
                }
                fence_mbarrier_init();
                // SAFETY: the caller's maps.
                unsafe {
                    fence_tensormap_acquire(tmap_a);
                    fence_tensormap_acquire(tmap_b);
                }
                let mut s = 0;
                while s + 2 < STAGES {
                    if s < steps {
                        issue(s);
                    }
                    s += 1;
                }
            }
            sync_threads();
            let mut step = 0;
            while step < steps {
                // SAFETY: the barrier was initialised before the block
                // barrier above.
                unsafe {
                    mbarrier_wait_parity(
                        bar(step % STAGES),
                        (step / STAGES) % 2,
                        WG_MBARRIER_TIMEOUT_NS,
                    )
                };
                sync_threads();
                let next = step + STAGES - 2;
                if tid == 0 && next < steps {
                    issue(next);
                }
                // SAFETY: the stage's bytes landed (the barrier's phase) and
                // it is not refilled before this group is waited for; the
                // warpgroup is converged.
                unsafe { wgmma_step(&mut acc, base + (step % STAGES) * stage_bytes, warpgroup) };
                step += 1;
            }
            acc.wait::<0>();
            // SAFETY: the caller's C and D (m x n).
            unsafe {
                store_wg(
                    &acc,
                    block_row + warpgroup * 64 + warp * 16,
                    block_col,
                    lane,
                    m,
                    n,
                    alpha,
                    beta,
                    c,
                    d,
                )
            };
        }
        // ANCHOR_END: tma_pipeline

        // ANCHOR: gemm_bf16_tma
        /// [`gemm_bf16_wgmma`] fed by the tensor memory accelerator: the
        /// same tiles (128 x 256 x 64), stages, `wgmma`s and sums, each
        /// step's tiles copied by one thread's TMA copies onto an
        /// `mbarrier` ([`tma_pipeline`]) where every thread queued its
        /// `cp.async` chunks before.
        ///
        /// # Launch assumption
        /// As [`gemm_bf16_wgmma`], with `WG_TMA_SHARED_BYTES` of dynamic
        /// shared memory; k and n multiples of `TC_ALIGN` (16-byte rows, as
        /// a tensor map's strides must be), m and n not 0.
        ///
        /// # Safety
        /// As [`tma_pipeline`].
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn gemm_bf16_tma(
            m: u32,
            n: u32,
            k: u32,
            alpha: f32,
            tmap_a: *const u8,
            tmap_b: *const u8,
            beta: f32,
            c: *const f32,
            d: *mut f32,
        ) {
            const H: usize = (WG_BLOCK_N / 128) as usize;
            // SAFETY: the caller's.
            unsafe { tma_pipeline::<WG_STAGES, H>(m, n, k, alpha, tmap_a, tmap_b, beta, c, d) };
        }
        // ANCHOR_END: gemm_bf16_tma
    }
}
