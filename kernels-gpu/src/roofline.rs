//! The roofline lesson: measured ceilings (the best of three streaming
//! patterns for memory bandwidth, independent FMA chains for FP32
//! throughput and independent `mma.sync` chains for tensor-core
//! throughput, BF16 in the sm_80 module, FP16 in the sm_75 one for a T4)
//! and ten kernels placed between them by arithmetic intensity.
//!
//! Port of the seed `roofline.cu`. The constants open the module, grouped,
//! each with its reason; the compile-time checks below them bind them the
//! way the seed's `static_assert`s do. The kernels follow, each with what it
//! computes, how it touches memory and the launch shape it assumes.

// ---------------------------------------------------------------------------
// Sizes.
//
// The seed's vector buffers are SEED_SIDE^2 = 2^24 floats (64 MiB). That is
// a DRAM measurement on a GPU with a 4 MiB L2, but an H200's L2 is about
// 60 MB: a 64 MiB copy is partly served from L2 and the "ceiling" comes out
// far too low. The host therefore grows the square side by powers of two
// until one buffer is at least L2_MULTIPLE times the device's L2 (see
// `host::roofline::Sizes::for_l2`), and prints both sizes.

/// The seed's square side: every vector kernel shares side^2-float buffers.
pub const SEED_SIDE: usize = 4096;
/// The seed's stencil grid side (2048^2 cells, 16 MiB a buffer), grown
/// like SEED_SIDE where the L2 is large.
pub const SEED_STENCIL_SIDE: usize = 2048;
/// A streaming buffer must be at least this many times the L2, so that what
/// is timed is DRAM, not cache.
pub const L2_MULTIPLE: usize = 4;

/// The bandwidth ceiling's buffers are at least this many times the L2
/// (rounded up to a power of two: 2 GiB a buffer on an H200's 60 MiB L2).
/// Measured on the H200 (docs/shared DEVICE-NOTES, 2026-11-30): every
/// streaming pattern is 2 to 5% slower at 256 MiB buffers than at 1 GiB,
/// and BabelStream's kernels 4 to 13% slower at 256 MiB than at 2 GiB.
pub const STREAM_L2_MULTIPLE: usize = 32;
/// The triad's scalar: `out = a + TRIAD_SCALAR * b`. With the lesson's
/// small-integer inputs every result is an exact f32.
pub const TRIAD_SCALAR: f32 = 3.0;

/// Threads per block for every one-thread-one-element launch: 8 warps.
pub const THREADS_PER_BLOCK: u32 = 256;
/// The transpose tile is TRANSPOSE_TILE^2 threads: one warp per tile row.
pub const TRANSPOSE_TILE: u32 = 32;
/// Columns of the padded shared tile: one more than the tile, so a column
/// read lands in 32 different banks.
pub const TRANSPOSE_TILE_PITCH: u32 = TRANSPOSE_TILE + 1;

/// The strided add visits the same index set as the plain add, in a 2D grid
/// of n / STRIDE columns by STRIDE rows. `(i * stride) % n` is not a
/// permutation for a power-of-two n; the 2D grid is.
pub const STRIDE: u32 = 32;

/// The matmul side. Square, a multiple of the tile, so neither matmul needs
/// an edge guard. 512^2 floats is 1 MiB a matrix: the whole working set sits
/// in L2 on every GPU this project targets, which is why the naive matmul's
/// compulsory-byte rate reads far over the copy ceiling.
pub const MAT_DIM: usize = 512;
/// The tiled matmul's square tile (and block) side.
pub const MAT_TILE: u32 = 16;

/// Heat-equation stencil: a STENCIL_BLOCK_X by STENCIL_BLOCK_Y block updates
/// that many cells, reading a tile with a HALO-cell apron on every side.
/// One warp covers one row of the tile.
pub const STENCIL_BLOCK_X: u32 = 32;
/// Rows of cells a stencil block updates.
pub const STENCIL_BLOCK_Y: u32 = 8;
/// Cells of apron around the stencil tile.
pub const HALO: u32 = 1;
/// Columns of the stencil's shared tile (34).
pub const STENCIL_SHARED_X: u32 = STENCIL_BLOCK_X + 2 * HALO;
/// Rows of the stencil's shared tile (10).
pub const STENCIL_SHARED_Y: u32 = STENCIL_BLOCK_Y + 2 * HALO;
/// Cells of the stencil's shared tile (340).
pub const STENCIL_SHARED_CELLS: u32 = STENCIL_SHARED_X * STENCIL_SHARED_Y;
/// The diffusion number r = alpha * dt / dx^2, under the explicit scheme's
/// stability bound of 1/4.
pub const STENCIL_R: f32 = 0.2;
/// The value of cells outside the grid (a cold boundary).
pub const STENCIL_COLD: f32 = 0.0;

/// The one kernel right of the ridge point: a Horner chain of POLY_DEGREE
/// FMAs on one loaded float is 2 * POLY_DEGREE + 1 FLOP for 8 bytes.
pub const POLY_DEGREE: u32 = 256;
/// Scales the inputs (small integers in [1, 7]) below 1 in magnitude, so the
/// chain converges instead of overflowing: 7 * 0.0625 = 0.4375.
pub const POLY_SCALE: f32 = 0.0625;
/// The constant term added at each Horner step.
pub const POLY_ADD: f32 = 1.0;
/// The CPU checks the polynomial on this prefix (the full reference is
/// billions of host FMAs); a finite scan covers the rest.
pub const POLY_CHECK: usize = 65_536;

/// The FP32 ceiling: independent FMA chains per thread, so an FMA never
/// waits on the one before it.
pub const FMA_CHAINS: usize = 8;
/// The seed's FMA steps per chain; `--quick` and the tests use it.
pub const SEED_FMA_ITERS: i32 = 2048;
/// FMA steps per chain in the lesson's own run. Passed to the kernel at run
/// time so the compiler cannot unroll it into straight-line code that
/// measures the instruction cache instead of the FP32 pipes. Eight times
/// the seed's: on the H200 the seed's 2048 gave 96.4 to 96.7% of the
/// clock-derived peak, 8192 gave 97.5% and 16384 gave 97.7%, the launch's
/// ramp and tail being a smaller share of a longer run (experiment 3 in
/// docs/results/experiments). 4.3 ms a launch on an H200.
pub const FMA_ITERS: i32 = 16_384;
/// Steps of every chain per trip of the FMA kernel's run-time loop: 128 x 8
/// = 1024 FMAs per loop branch (16 KiB of SASS). The loop's own work (counter,
/// compare, branch and a reload of the multiplier: 4 instructions in the
/// sm_90 SASS) takes issue slots the FMAs need, as an SM sub-partition issues
/// one warp instruction a cycle and its 32 FP32 lanes take one FFMA a cycle.
/// Measured on an H200 (16384 iterations, three processes each,
/// experiment 10 in docs/results/experiments): 32 steps a trip gave 97.6 to
/// 97.8% of the clock-derived FP32 peak, 64 gave 98.6 to 98.9%, 128 gave
/// 99.2 to 99.3%. Earlier (2048 iterations, 2026-11-29): 8 steps (LLVM's own
/// choice) 92.4%, 16 steps 94.6 to 95.0%.
pub const FMA_UNROLL: i32 = 128;
/// Steps in one fully unrolled block of the FMA loop. LLVM flattens a
/// 32-step loop of 8 chains (256 FMAs) but leaves a 64-step loop as a loop
/// of 8-step blocks, so a trip of FMA_UNROLL steps is written as
/// FMA_UNROLL / FMA_BLOCK_STEPS such blocks, each of which it flattens.
pub const FMA_BLOCK_STEPS: i32 = 32;
/// Blocks launched per SM: a launch multiplier, not a residency figure.
/// Several waves queue behind the resident blocks, so the last wave's tail is
/// a small share of the run.
pub const FMA_BLOCKS_PER_SM: u32 = 32;
/// The FMA chain's multiplier: a hair over 1, so the value grows slowly.
pub const FMA_MUL: f32 = 1.000_000_1;
/// The FMA chain's addend.
pub const FMA_ADD: f32 = 1.0;

// ---------------------------------------------------------------------------
// The tensor-core ceiling: `mma_peak` (BF16, in the sm_80 module) and
// `mma_peak_f16` (FP16, in the sm_75 module, for compute capability 7.5).
//
// Each warp runs MMA_CHAINS independent chains of m16n8k16 steps
// (`mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`, or two f16
// m16n8k8 with the same fragments), D = A B + C with
// the chain's D fed back as its next C, so a step waits only on the same
// chain's previous step. The fragments hold small integers derived from
// the lane (mma_a_value, mma_b_value) and the accumulators start at a value
// derived from the warp and the chain (mma_c0): after n steps a chain holds
// C0 + n A B, every partial sum an integer below 2^24, so the GPU's result
// is exact and the CPU reference can be compared with it bit for bit.

/// Independent `mma.sync` chains per warp: enough independent tensor-core
/// instructions in flight that none waits on the one before it (the FP32
/// ceiling's FMA_CHAINS plays the same part).
pub const MMA_CHAINS: usize = 8;
/// Steps of every chain per trip of the chains' run-time loop: 4 x 8 = 32
/// `mma.sync` a trip, so the loop's own counter, compare and branch are a
/// small share of the issue slots. The iteration count is a multiple of it
/// (the host checks): the kernel has no remainder loop.
pub const MMA_UNROLL: u32 = 4;
/// Steps of each chain in the lesson's own run: with MMA_BLOCKS_PER_SM
/// blocks of THREADS_PER_BLOCK threads an SM, 32 x 8 warps x 2048 x 8 =
/// 4,194,304 `mma.sync` an SM a launch (a few ms on a large GPU, so the
/// launch's ramp and tail are a small share of it). A run-time argument, as
/// the FMA ceiling's is.
pub const MMA_ITERS: u32 = 2048;
/// Steps of each chain in `--quick` runs and the GPU tests.
pub const MMA_QUICK_ITERS: u32 = 64;
/// Blocks launched per SM, as FMA_BLOCKS_PER_SM: several waves of equal
/// blocks, so every SM holds several warps for the whole launch.
pub const MMA_BLOCKS_PER_SM: u32 = 32;
/// FLOP of one `mma.sync.m16n8k16`: 16 x 8 outputs, each 16 multiply-adds
/// of 2 FLOP.
pub const MMA_FLOP: u64 = 2 * 16 * 8 * 16;
/// Floats each warp writes: every chain's 16 x 8 accumulator tile.
pub const MMA_OUT_PER_WARP: usize = MMA_CHAINS * 16 * 8;
/// Fragment elements are integers from 1 to MMA_VALUE_MAX (never 0, so
/// every element of A B is at least 16 and a skipped step changes every
/// output). Seven values (a prime modulus in mma_a_value and mma_b_value)
/// give A B 81 distinct elements of its 128, so an output read from the
/// wrong place of the tile shows.
pub const MMA_VALUE_MAX: u32 = 7;
/// The largest element of A B: 16 products of at most MMA_VALUE_MAX^2.
pub const MMA_PRODUCT_MAX: u32 = 16 * MMA_VALUE_MAX * MMA_VALUE_MAX;
/// The initial accumulators repeat every MMA_C0_WARPS warps (mma_c0).
pub const MMA_C0_WARPS: u32 = 1024;
/// The largest initial accumulator, (MMA_C0_WARPS - 1) x MMA_CHAINS +
/// MMA_CHAINS - 1.
pub const MMA_C0_MAX: u32 = MMA_C0_WARPS * MMA_CHAINS as u32 - 1;
/// The most steps a chain may run with every result an exact f32: C0 + n x
/// MMA_PRODUCT_MAX stays below 2^24.
pub const MMA_ITERS_EXACT_MAX: u32 = ((1 << 24) - 1 - MMA_C0_MAX) / MMA_PRODUCT_MAX;

/// The integer lane `lane` of a warp puts in element `j` (0 to 7: register
/// j / 2, low half for even j) of its A fragment: 1 to MMA_VALUE_MAX. The
/// product term `lane * j` mixes the lane and the element, so A's rows and
/// columns all differ and a misread layout changes A B (tests/cpu_tensor_ceiling.rs
/// tries eight misreadings).
pub const fn mma_a_value(lane: u32, j: u32) -> u32 {
    1 + (5 * lane + 3 * j + lane * j) % MMA_VALUE_MAX
}

/// The integer lane `lane` puts in element `j` (0 to 3: register j / 2,
/// low half for even j) of its B fragment: 1 to MMA_VALUE_MAX.
pub const fn mma_b_value(lane: u32, j: u32) -> u32 {
    1 + (3 * lane + 5 * j + lane * j) % MMA_VALUE_MAX
}

/// The initial value of every element of chain `chain`'s accumulator in
/// warp `warp` (the warp's index in the grid): distinct for each chain of a
/// warp, so no two chains are the same computation (LLVM could merge two
/// identical `mma.sync` chains into one), and for each of MMA_C0_WARPS
/// consecutive warps, so a warp's output written in another's place shows.
pub const fn mma_c0(warp: u32, chain: u32) -> u32 {
    (warp % MMA_C0_WARPS) * MMA_CHAINS as u32 + chain
}

// ---------------------------------------------------------------------------
// The wgmma ceiling (`wgmma_peak`, in the sm_90a module only).
//
// On Hopper the fastest tensor-core instruction is the warpgroup's
// `wgmma.mma_async`, which reads both tiles from shared memory. Each block
// of `wgmma_peak` is the GEMM lesson's Hopper block without its copies:
// one stage of that lesson's swizzled tiles (A 128 x 64, B 64 x 256) is
// loaded once, then each of its 2 warpgroups runs `iterations` steps of
// that lesson's `wgmma_step` (4 `wgmma` m64n256k16, one group left in
// flight) into its own 64 x 256 accumulator. The tiles hold small integers
// (the host's hashed fill) and the accumulators start at a value of the
// warpgroup (wgmma_c0), so each output is that plus `iterations` times its
// element of A B, every partial sum an integer below 2^24: exact, and
// checked bit for bit.

/// Steps of each warpgroup in the lesson's own run: WGMMA_BLOCKS_PER_SM x
/// 2 warpgroups x 2048 steps x 4 `wgmma` m64n256k16 = 65536 instructions
/// an SM (about 4.5 TFLOP on 132 SMs, a few ms at several hundred
/// TFLOP/s). A run-time argument.
pub const WGMMA_ITERS: u32 = 2048;
/// Steps of each warpgroup in `--quick` runs and the GPU tests.
pub const WGMMA_QUICK_ITERS: u32 = 16;
/// Blocks launched per SM: its 128 f32 accumulators a thread leave room
/// for one block of 256 threads an SM, so these are 4 waves.
pub const WGMMA_BLOCKS_PER_SM: u32 = 4;
/// FLOP of one step of one block: 2 warpgroups x 4 `wgmma` m64n256k16,
/// each 64 x 256 outputs of 16 multiply-adds of 2 FLOP.
pub const WGMMA_STEP_FLOP: u64 = 2 * 4 * (2 * 64 * 256 * 16);
/// Floats each warpgroup writes: its 64 x 256 accumulator tile.
pub const WGMMA_OUT_PER_WARPGROUP: usize = 64 * 256;
/// The tiles' elements are integers from 1 to WGMMA_VALUE_MAX (never 0, so
/// a skipped step changes every output).
pub const WGMMA_VALUE_MAX: u32 = 7;
/// The largest element of A B: 64 products (a step's k) of at most
/// WGMMA_VALUE_MAX^2.
pub const WGMMA_PRODUCT_MAX: u32 = 64 * WGMMA_VALUE_MAX * WGMMA_VALUE_MAX;
/// The initial accumulators repeat every WGMMA_C0_GROUPS warpgroups.
pub const WGMMA_C0_GROUPS: u32 = 4096;
/// The most steps a warpgroup may run with every result an exact f32: the
/// largest start plus n x WGMMA_PRODUCT_MAX stays below 2^24.
pub const WGMMA_ITERS_EXACT_MAX: u32 = ((1 << 24) - 1 - (WGMMA_C0_GROUPS - 1)) / WGMMA_PRODUCT_MAX;
/// Dynamic shared memory of a `wgmma_peak` block, bytes: one stage of the
/// GEMM lesson's tiles and the slack to align it to 1024 bytes (past 48
/// KiB: the host raises the kernel's limit).
pub const WGMMA_SHARED_BYTES: u32 = crate::gemm::WG_STAGE_BYTES + crate::gemm::WG_TILE_ALIGN;
/// Threads of a `wgmma_peak` block: 2 warpgroups, the GEMM lesson's Hopper
/// block.
pub const WGMMA_THREADS: u32 = crate::gemm::WG_THREADS;

/// The initial value of every accumulator of warpgroup `group` (its index
/// in the grid, 2 a block): distinct for WGMMA_C0_GROUPS consecutive
/// warpgroups, so an output written in another warpgroup's place shows.
pub const fn wgmma_c0(group: u32) -> u32 {
    group % WGMMA_C0_GROUPS
}

const _: () = assert!(
    WGMMA_SHARED_BYTES > 48 * 1024 && WGMMA_SHARED_BYTES <= 227 * 1024,
    "past the 48 KiB a launch gets unasked (the host raises the limit), within the 227 KiB of a 9.0 block"
);
const _: () = assert!(WGMMA_THREADS == 256, "two warpgroups of 128 threads");
const _: () = assert!(
    WGMMA_ITERS <= WGMMA_ITERS_EXACT_MAX && WGMMA_QUICK_ITERS <= WGMMA_ITERS_EXACT_MAX,
    "every accumulator of wgmma_peak stays an integer below 2^24, exact in f32"
);
const _: () = assert!(
    crate::gemm::WG_BLOCK_M == 128
        && crate::gemm::WG_BLOCK_N == 256
        && crate::gemm::WG_BLOCK_K == 64,
    "wgmma_peak's FLOP and output counts are for the GEMM lesson's 128 x 256 x 64 stage"
);

// Compile-time relations, each with the reason it must hold.
const _: () = assert!(
    MMA_ITERS.is_multiple_of(MMA_UNROLL) && MMA_QUICK_ITERS.is_multiple_of(MMA_UNROLL),
    "the mma chains have no remainder loop: their step counts are whole trips"
);
const _: () = assert!(
    MMA_ITERS <= MMA_ITERS_EXACT_MAX && MMA_QUICK_ITERS <= MMA_ITERS_EXACT_MAX,
    "every accumulator of the mma chains stays an integer below 2^24, exact in f32"
);
const _: () = assert!(
    THREADS_PER_BLOCK.is_multiple_of(32),
    "a block is a whole number of warps"
);
const _: () = assert!(
    THREADS_PER_BLOCK.is_power_of_two(),
    "the reduction halves its stride, so the block size is a power of two"
);
const _: () = assert!(
    SEED_SIDE.is_multiple_of(TRANSPOSE_TILE as usize),
    "both transposes tile the matrix exactly, so neither has a bounds check"
);
const _: () = assert!(
    (SEED_SIDE * SEED_SIDE).is_multiple_of(THREADS_PER_BLOCK as usize),
    "the reduction's add count is exact only when every block is full"
);
const _: () = assert!(
    (SEED_SIDE * SEED_SIDE).is_multiple_of(STRIDE as usize),
    "the strided add's 2D grid is a permutation only when the stride divides n"
);
const _: () = assert!(
    FMA_UNROLL % FMA_BLOCK_STEPS == 0,
    "a trip of the FMA loop is a whole number of flattened blocks"
);
const _: () = assert!(
    SEED_FMA_ITERS % FMA_UNROLL == 0 && FMA_ITERS % FMA_UNROLL == 0,
    "both FMA runs are whole trips, so the remainder loop does not run"
);
const _: () = assert!(
    TRANSPOSE_TILE * TRANSPOSE_TILE <= 1024,
    "a block is at most 1024 threads"
);
const _: () = assert!(
    TRANSPOSE_TILE * TRANSPOSE_TILE_PITCH * 4 <= 49_152,
    "the padded transpose tile fits the 48 KiB a block gets without opting in"
);
const _: () = assert!(
    MAT_DIM.is_multiple_of(MAT_TILE as usize),
    "the tiled matmul has no edge guard"
);
const _: () = assert!(
    MAT_DIM * MAT_DIM <= SEED_SIDE * SEED_SIDE,
    "the matmul borrows the vector buffers"
);
const _: () = assert!(
    MAT_DIM * 7 * 2 < (1 << 24),
    "the largest dot product is exact in f32, so a mismatch is an index bug, not rounding"
);
const _: () = assert!(
    STENCIL_BLOCK_X * STENCIL_BLOCK_Y == THREADS_PER_BLOCK,
    "the stencil's fill loop strides by the block size; one output cell per thread"
);
const _: () = assert!(
    STENCIL_SHARED_CELLS * 4 <= 49_152,
    "the stencil apron fits the default 48 KiB of shared memory"
);
const _: () = assert!(
    POLY_CHECK <= SEED_SIDE * SEED_SIDE,
    "the check reads a prefix"
);

/// The kernels, compiled only for the GPU.
#[cfg(target_arch = "nvptx64")]
mod kernels {
    use super::*;
    use crate::device::launch::assume_whole_tiles;
    use crate::device::math::fma;
    use crate::device::memory::{
        Float4, dot_strided, load_readonly, load_readonly_v4, mul_wide_i32, opaque_index,
        opaque_u32,
    };
    use crate::device::thread::{
        block_dim_x, block_dim_y, block_idx_x, block_idx_y, global_index_x, global_index_x_u32,
        global_index_y, global_index_y_u32, grid_dim_x, sync_threads, thread_idx_x, thread_idx_y,
    };
    use crate::device::warp::block_reduce;
    use crate::shared_array;

    shared_array!(ROOFLINE_TRANSPOSE_TILE: [f32; (TRANSPOSE_TILE * TRANSPOSE_TILE_PITCH) as usize]);
    shared_array!(ROOFLINE_REDUCE_TILE: [f32; THREADS_PER_BLOCK as usize]);
    shared_array!(ROOFLINE_MATMUL_A: [f32; (MAT_TILE * MAT_TILE) as usize]);
    shared_array!(ROOFLINE_MATMUL_B: [f32; (MAT_TILE * MAT_TILE) as usize]);
    shared_array!(ROOFLINE_STENCIL_TILE: [f32; STENCIL_SHARED_CELLS as usize]);
    shared_array!(ROOFLINE_DOT_WARPS: [f32; (THREADS_PER_BLOCK / 32) as usize]);

    /// Threads in the whole grid: a grid-stride loop's step.
    #[inline(always)]
    fn grid_threads() -> u64 {
        grid_dim_x() as u64 * block_dim_x() as u64
    }

    /// Read-only stream: each block's share of `sum(a[i] . b[i])` over `n4`
    /// float4 pairs (four FMAs a pair) into `partials[blockIdx.x]`. One of
    /// the three patterns the bandwidth ceiling is the best of.
    ///
    /// # Memory
    /// Two coalesced 128-bit read streams (read-only path), grid-stride:
    /// thread t reads pairs t, t + T, t + 2T, ... for T threads in the grid.
    /// A warp-shuffle tree then shared memory reduce a block to one float
    /// (`block_reduce`): 32 bytes read per pair, one float written per block.
    ///
    /// # Launch assumption
    /// THREADS_PER_BLOCK threads a block (a whole number of warps: the
    /// shuffle needs every lane). Any grid: one pair a thread (grid covers
    /// n4) or a grid-stride grid. `partials` holds `grid_dim.x` floats.
    ///
    /// # Safety
    /// `a` and `b` hold `n4` aligned float4s; `partials` holds one float per
    /// block and overlaps neither.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn stream_dot(
        a: *const Float4,
        b: *const Float4,
        partials: *mut f32,
        n4: u64,
    ) {
        let warps = ROOFLINE_DOT_WARPS::shared();
        let step = grid_threads();
        let mut i = global_index_x();
        let mut acc = 0.0f32;
        while i < n4 {
            // SAFETY: i < n4 and both buffers hold n4 aligned float4s.
            let (x, y) = unsafe {
                (
                    load_readonly_v4(a.add(i as usize)),
                    load_readonly_v4(b.add(i as usize)),
                )
            };
            acc = fma(x.x, y.x, acc);
            acc = fma(x.y, y.y, acc);
            acc = fma(x.z, y.z, acc);
            acc = fma(x.w, y.w, acc);
            i += step;
        }
        // SAFETY: every thread gets here; the scratch holds a float per warp.
        let sum = unsafe { block_reduce::<false>(acc, warps) };
        if thread_idx_x() == 0 {
            // SAFETY: partials holds one float per block.
            unsafe { *partials.add(block_idx_x() as usize) = sum };
        }
    }

    /// Copy stream: `out[i] = input[i]` over `n4` float4s, grid-stride. One
    /// of the three patterns the bandwidth ceiling is the best of.
    ///
    /// # Memory
    /// One coalesced 128-bit read (read-only path) and one 128-bit write a
    /// float4: 32 bytes.
    ///
    /// # Launch assumption
    /// Any grid: one float4 a thread (grid covers n4) or grid-stride.
    ///
    /// # Safety
    /// `input` and `out` hold `n4` aligned float4s and do not overlap.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn stream_copy(input: *const Float4, out: *mut Float4, n4: u64) {
        let step = grid_threads();
        let mut i = global_index_x();
        while i < n4 {
            // SAFETY: i < n4 and both buffers hold n4 aligned float4s.
            unsafe { *out.add(i as usize) = load_readonly_v4(input.add(i as usize)) };
            i += step;
        }
    }

    /// Two-reads-one-write stream (STREAM's triad): `out[i] = a[i] + s *
    /// b[i]` over `n4` float4s, grid-stride, one FMA a lane. One of the
    /// three patterns the bandwidth ceiling is the best of.
    ///
    /// # Memory
    /// Two coalesced 128-bit reads (read-only path) and one 128-bit write:
    /// 48 bytes a float4.
    ///
    /// # Launch assumption
    /// Any grid: one float4 a thread (grid covers n4) or grid-stride.
    ///
    /// # Safety
    /// `a`, `b`, `out` hold `n4` aligned float4s; `out` overlaps neither
    /// input.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn stream_triad(
        a: *const Float4,
        b: *const Float4,
        out: *mut Float4,
        n4: u64,
        s: f32,
    ) {
        let step = grid_threads();
        let mut i = global_index_x();
        while i < n4 {
            // SAFETY: i < n4 and every buffer holds n4 aligned float4s.
            unsafe {
                let (x, y) = (
                    load_readonly_v4(a.add(i as usize)),
                    load_readonly_v4(b.add(i as usize)),
                );
                *out.add(i as usize) = Float4 {
                    x: fma(s, y.x, x.x),
                    y: fma(s, y.y, x.y),
                    z: fma(s, y.z, x.z),
                    w: fma(s, y.w, x.w),
                };
            }
            i += step;
        }
    }

    /// `out[i] = input[i]` over `n4` float4 elements: one thread owns one
    /// 16-byte element. The bandwidth ceiling.
    ///
    /// # Memory
    /// Consecutive threads take consecutive 16-byte elements: a warp reads
    /// 512 contiguous bytes with one 128-bit load per thread (read-only
    /// path) and writes 512 with one 128-bit store, the best pattern the GPU
    /// has. 8 bytes per float. Why 16 bytes a thread and not the seed's 4:
    /// a copy keeps only one load per thread in flight, and on an H200 4
    /// bytes a thread is too little data in flight to cover DRAM latency
    /// (measured: 56% of the derived bandwidth, below the vector add, which
    /// has two loads in flight).
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x >= n4`; the guard stays even where the block
    /// size divides n4.
    ///
    /// # Safety
    /// `input` and `out` hold `n4` float4s (16-byte aligned) and do not
    /// overlap.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn copy_coalesced(
        input: *const Float4,
        out: *mut Float4,
        n4: u64,
    ) {
        let i = global_index_x();
        if i < n4 {
            // SAFETY: i < n4 and the buffers hold n4 aligned float4s.
            unsafe {
                let v = load_readonly_v4(input.add(i as usize));
                *out.add(i as usize) = v;
            }
        }
    }

    // ANCHOR: vector_add
    /// `out[i] = a[i] + b[i]`. One thread owns one element.
    ///
    /// # Memory
    /// Three coalesced streams, two in and one out: 12 bytes for one add,
    /// 1/12 FLOP per byte.
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x >= n`.
    ///
    /// # Safety
    /// `a`, `b`, `out` hold `n` floats; `out` overlaps neither input.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn vector_add(
        a: *const f32,
        b: *const f32,
        out: *mut f32,
        n: u64,
    ) {
        let i = global_index_x();
        if i < n {
            let i = i as usize;
            // SAFETY: i < n and every buffer holds n floats.
            unsafe { *out.add(i) = load_readonly(a.add(i)) + load_readonly(b.add(i)) };
        }
    }
    // ANCHOR_END: vector_add

    /// The same add over the same index set, reached in stride order:
    /// `j = col * stride + blockIdx.y`, `out[j] = a[j] + b[j]`.
    ///
    /// # Memory
    /// A warp's 32 lanes sit `stride` floats apart: at stride 32 each lane
    /// owns its own 32-byte sector, 32 sectors a warp access instead of 4.
    /// The compulsory bytes are the plain add's, to the byte: only the
    /// address pattern differs.
    ///
    /// # Launch assumption
    /// A 2D grid: x covers `m = n / stride` columns (guarded), y is exactly
    /// `stride` rows, so every index in [0, n) is visited once.
    ///
    /// # Safety
    /// `a`, `b`, `out` hold `m * stride` floats; `out` overlaps neither input.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn vector_add_permuted(
        a: *const f32,
        b: *const f32,
        out: *mut f32,
        m: u64,
        stride: u32,
    ) {
        let col = global_index_x();
        if col < m {
            let j = (col * stride as u64 + block_idx_y() as u64) as usize;
            // SAFETY: col < m and block_idx_y < stride, so j < m * stride.
            unsafe { *out.add(j) = load_readonly(a.add(j)) + load_readonly(b.add(j)) };
        }
    }

    /// `out[col * side + row] = input[row * side + col]`, one element a thread,
    /// no arithmetic.
    ///
    /// # Memory
    /// The read coalesces (a warp reads 128 contiguous bytes). The write does
    /// not: consecutive lanes write `side` floats apart, 32 sectors a warp.
    /// 8 bytes per element, 0 FLOP.
    ///
    /// # Launch assumption
    /// TRANSPOSE_TILE x TRANSPOSE_TILE blocks over a grid that tiles the
    /// `side` x `side` matrix exactly: there is no bounds check.
    ///
    /// # Safety
    /// `input` and `out` hold `side * side` floats and do not overlap.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn transpose_naive(input: *const f32, out: *mut f32, side: u64) {
        let row = global_index_y();
        let col = global_index_x();
        // SAFETY: the exact tiling keeps row and col below side.
        unsafe {
            *out.add((col * side + row) as usize) =
                load_readonly(input.add((row * side + col) as usize))
        };
    }

    /// `transpose_naive` with an edge guard: the same one-element-a-thread
    /// transpose for any `side`, the threads of the partial tiles past the
    /// last row or column doing nothing. What the round-against-ragged pair
    /// times at `side` and `side - 1`.
    ///
    /// # Memory
    /// As `transpose_naive`: a coalesced read, a write of one 32-byte sector
    /// a lane; 8 bytes per element, 0 FLOP. At a side that is not a multiple
    /// of 8 floats, rows no longer start on a sector boundary, so a warp's
    /// read can straddle one more sector.
    ///
    /// # Launch assumption
    /// TRANSPOSE_TILE x TRANSPOSE_TILE blocks over a grid of
    /// ceil(side / TRANSPOSE_TILE)^2 blocks (at least covering the matrix).
    ///
    /// # Safety
    /// `input` and `out` hold `side * side` floats and do not overlap.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn transpose_naive_guarded(
        input: *const f32,
        out: *mut f32,
        side: u64,
    ) {
        let row = global_index_y();
        let col = global_index_x();
        if row < side && col < side {
            // SAFETY: row and col are below side, so both indices are below
            // side * side.
            unsafe {
                *out.add((col * side + row) as usize) =
                    load_readonly(input.add((row * side + col) as usize))
            };
        }
    }

    // ANCHOR: transpose_tiled
    /// The same transpose through a shared tile padded to 33 columns.
    ///
    /// # Memory
    /// Both the read and the write coalesce: the transposing step happens in
    /// shared memory. The pad puts a column's 32 elements in 32 different
    /// banks, so the column read has no bank conflict.
    ///
    /// # Launch assumption
    /// As `transpose_naive`: exact tiling, blocks of exactly TRANSPOSE_TILE^2
    /// threads. Every thread reaches the barrier.
    ///
    /// # Safety
    /// As `transpose_naive`.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn transpose_tiled(input: *const f32, out: *mut f32, side: u64) {
        let tile = ROOFLINE_TRANSPOSE_TILE::shared();
        let (tx, ty) = (thread_idx_x(), thread_idx_y());
        let tile_dim = TRANSPOSE_TILE as u64;

        let in_col = block_idx_x() as u64 * tile_dim + tx as u64;
        let in_row = block_idx_y() as u64 * tile_dim + ty as u64;
        // SAFETY: exact tiling keeps the global index in range; tx, ty < 32,
        // so the tile index is below 32 * 33.
        unsafe {
            tile.row(ty, TRANSPOSE_TILE_PITCH).write(
                tx,
                load_readonly(input.add(opaque_index((in_row * side + in_col) as usize))),
            )
        };
        sync_threads();

        let out_col = block_idx_y() as u64 * tile_dim + tx as u64;
        let out_row = block_idx_x() as u64 * tile_dim + ty as u64;
        // SAFETY: as above, with the tile read along a column.
        unsafe {
            *out.add(opaque_index((out_row * side + out_col) as usize)) =
                tile.row(tx, TRANSPOSE_TILE_PITCH).read(ty)
        };
    }
    // ANCHOR_END: transpose_tiled

    /// Sums each block's slice of `input` into `out[blockIdx.x]`: the
    /// sequential-addressing tree (stride halves from 128 to 1).
    ///
    /// # Memory
    /// One coalesced read per thread, the tree in shared memory, one float
    /// written per block: 4 bytes read per add.
    ///
    /// # Launch assumption
    /// Exactly THREADS_PER_BLOCK threads per block (the shared array and the
    /// halving loop are sized from it); `grid_dim.x * 256 >= n`. The guard
    /// covers the load, never a barrier: every thread reaches every barrier.
    ///
    /// # Safety
    /// `input` holds `n` floats; `out` holds `grid_dim.x` floats.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn reduce_sequential_addressing(
        input: *const f32,
        out: *mut f32,
        n: u64,
    ) {
        let tile = ROOFLINE_REDUCE_TILE::shared();
        let tid = thread_idx_x();
        let i = global_index_x();
        // SAFETY: tid < 256 = the tile's length; i < n is checked.
        unsafe {
            tile.write(
                tid,
                if i < n {
                    load_readonly(input.add(i as usize))
                } else {
                    0.0
                },
            )
        };
        sync_threads();

        let mut s = THREADS_PER_BLOCK / 2;
        while s > 0 {
            if tid < s {
                // SAFETY: tid + s < 256; only thread tid writes element tid.
                unsafe { tile.write(tid, tile.read(tid) + tile.read(tid + s)) };
            }
            sync_threads();
            s >>= 1;
        }

        if tid == 0 {
            // SAFETY: out holds one float per block.
            unsafe { *out.add(block_idx_x() as usize) = tile.read(0) };
        }
    }

    /// `c = a * b` for square `d` x `d` row-major matrices, one thread per
    /// output element, `acc = fma(a[row][p], b[p][col], acc)` over p.
    ///
    /// # Memory
    /// Each thread walks a row of `a` and a column of `b` (`dot_strided`):
    /// 2d loads for 2d FLOP. The lanes of a warp share one `a` element and
    /// read consecutive `b` elements, so the patterns are fine; the count is
    /// the problem, and at this size the re-reads are L2 (and L1) hits.
    ///
    /// # Launch assumption
    /// MAT_TILE x MAT_TILE blocks over a grid that tiles the matrix exactly:
    /// no edge guard, and `d` a positive multiple of MAT_TILE, which the
    /// kernel tells the compiler (`assume_whole_tiles`).
    ///
    /// # Safety
    /// `a`, `b`, `c` hold `d * d` floats; `c` overlaps neither input; `d` is
    /// a positive multiple of MAT_TILE (undefined behaviour otherwise).
    // ANCHOR: matmul_naive
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn matmul_naive(
        a: *const f32,
        b: *const f32,
        c: *mut f32,
        d: u64,
    ) {
        let (row, col, d) = (
            global_index_y() as usize,
            global_index_x() as usize,
            d as usize,
        );
        // SAFETY: the launch assumption: the grid tiles the d x d matrix
        // exactly, so d is a positive multiple of MAT_TILE (the host
        // refuses other sides, 0 among them). With it the k loop has no
        // remainder.
        unsafe { assume_whole_tiles::<MAT_TILE>(d) };
        // SAFETY: row, col < d: a row of `a` and a column of `b`, d floats
        // each, that nothing writes.
        let acc = unsafe { dot_strided(a.add(row * d), 1, b.add(col), d, d) };
        // SAFETY: row, col < d.
        unsafe { *c.add(row * d + col) = acc };
    }
    // ANCHOR_END: matmul_naive

    /// The same product one MAT_TILE x MAT_TILE tile at a time, through two
    /// shared tiles.
    ///
    /// # Memory
    /// Each thread loads two floats per tile step instead of two per k step:
    /// the compulsory loads fall by MAT_TILE while the FLOP count stays.
    ///
    /// # Launch assumption
    /// Blocks of exactly MAT_TILE x MAT_TILE threads, a grid that tiles the
    /// matrix exactly. Every thread reaches both barriers.
    ///
    /// # Safety
    /// As `matmul_naive`.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn matmul_tiled(
        a: *const f32,
        b: *const f32,
        c: *mut f32,
        d: u64,
    ) {
        let tile_a = ROOFLINE_MATMUL_A::shared();
        let tile_b = ROOFLINE_MATMUL_B::shared();
        let (tx, ty) = (thread_idx_x(), thread_idx_y());
        let t = MAT_TILE as u64;
        let row = block_idx_y() as u64 * t + ty as u64;
        let col = block_idx_x() as u64 * t + tx as u64;
        let own = ty * MAT_TILE + tx;

        let mut acc = 0.0f32;
        for step in 0..d / t {
            let a_col = step * t + tx as u64;
            let b_row = step * t + ty as u64;
            // SAFETY: exact tiling keeps every index below d; own < 256.
            unsafe {
                tile_a.write(own, load_readonly(a.add((row * d + a_col) as usize)));
                tile_b.write(own, load_readonly(b.add((b_row * d + col) as usize)));
            }
            sync_threads();
            for p in 0..MAT_TILE {
                // SAFETY: ty, tx, p < MAT_TILE.
                acc = unsafe {
                    fma(
                        tile_a.read(ty * MAT_TILE + p),
                        tile_b.read(p * MAT_TILE + tx),
                        acc,
                    )
                };
            }
            sync_threads();
        }
        // SAFETY: row, col < d.
        unsafe { *c.add((row * d + col) as usize) = acc };
    }

    /// One explicit step of the 2D heat equation, read straight from global
    /// memory: `out = c + r * (w + e + n + s - 4c)` on interior cells.
    ///
    /// Written as two FMAs, `fma(r, fma(-4, c, w + e + n + s), c)`, which is
    /// what nvcc's default contraction makes of the same expression.
    ///
    /// # Memory
    /// Five reads and one write per interior cell, each a contiguous 128-byte
    /// span across a warp. Four of the five are cells a neighbour also reads:
    /// the reuse the tiled kernel tries to capture.
    ///
    /// # Launch assumption
    /// STENCIL_BLOCK_X x STENCIL_BLOCK_Y blocks over a grid that covers the
    /// `n - 2` square interior; the guard covers the store (the grid does not
    /// divide evenly). No barrier.
    ///
    /// # Safety
    /// `input` and `out` hold `n * n` floats and do not overlap.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn heat_step_global(
        input: *const f32,
        out: *mut f32,
        n: i32,
        r: f32,
    ) {
        let col = global_index_x_u32() as i32 + 1;
        let row = global_index_y_u32() as i32 + 1;
        // Two compares, as the twin's guard (see opaque_u32), not one of
        // their maximum.
        if (col < n - 1) & (row < opaque_u32((n - 1) as u32) as i32) {
            // Signed 64-bit index arithmetic, as the CUDA C twin's size_t
            // casts of ints compile: one wide multiply-add (IMAD.WIDE),
            // which mul_wide_i32 keeps (see its docstring).
            let stride = n as isize;
            let c = mul_wide_i32(row, n) as isize + col as isize;
            // SAFETY: 1 <= row, col < n - 1, so all five cells are inside.
            unsafe {
                let centre = load_readonly(input.offset(c));
                let sum = load_readonly(input.offset(c - 1))
                    + load_readonly(input.offset(c + 1))
                    + load_readonly(input.offset(c - stride))
                    + load_readonly(input.offset(c + stride));
                *out.offset(c) = fma(r, fma(-4.0, centre, sum), centre);
            }
        }
    }

    /// The same step through a shared tile with a one-cell apron.
    ///
    /// # Memory
    /// A block reads a 34 x 10 patch to update 32 x 8 cells: 1.33 global
    /// reads per updated cell instead of 5. The fill loop strides by the
    /// block size, as 256 threads fetch 340 cells (84 threads go twice).
    /// Cells outside the grid read as STENCIL_COLD.
    ///
    /// # Launch assumption
    /// The grid of `heat_step_global`, blocks of exactly 32 x 8 threads.
    /// Guards cover loads and stores, never the barrier.
    ///
    /// # Safety
    /// As `heat_step_global`.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn heat_step_tiled(
        input: *const f32,
        out: *mut f32,
        n: i32,
        r: f32,
    ) {
        let tile = ROOFLINE_STENCIL_TILE::shared();
        let tile_col = (block_idx_x() * STENCIL_BLOCK_X) as i32 + 1;
        let tile_row = (block_idx_y() * STENCIL_BLOCK_Y) as i32 + 1;
        let halo = HALO as i32;
        let shared_x = STENCIL_SHARED_X as i32;

        let threads = (block_dim_x() * block_dim_y()) as i32;
        let mut s = (thread_idx_y() * block_dim_x() + thread_idx_x()) as i32;
        while s < STENCIL_SHARED_CELLS as i32 {
            let sy = s / shared_x;
            let sx = s - sy * shared_x;
            let gy = tile_row - halo + sy;
            let gx = tile_col - halo + sx;
            let inside = gx >= 0 && gx < n && gy >= 0 && gy < n;
            // SAFETY: s < 340 = the tile's length; the global read happens
            // only inside the grid.
            unsafe {
                tile.write(
                    s as u32,
                    if inside {
                        load_readonly(input.add(gy as usize * n as usize + gx as usize))
                    } else {
                        STENCIL_COLD
                    },
                )
            };
            s += threads;
        }
        sync_threads();

        let sx = thread_idx_x() as i32 + halo;
        let sy = thread_idx_y() as i32 + halo;
        let col = tile_col + thread_idx_x() as i32;
        let row = tile_row + thread_idx_y() as i32;
        if col < n - 1 && row < n - 1 {
            let at = |y: i32, x: i32| (y * shared_x + x) as u32;
            // SAFETY: 1 <= sx <= 32 and 1 <= sy <= 8, so every neighbour is
            // inside the 34 x 10 tile; row, col are interior cells.
            unsafe {
                let centre = tile.read(at(sy, sx));
                let sum = tile.read(at(sy, sx - 1))
                    + tile.read(at(sy, sx + 1))
                    + tile.read(at(sy - 1, sx))
                    + tile.read(at(sy + 1, sx));
                *out.add(row as usize * n as usize + col as usize) =
                    fma(r, fma(-4.0, centre, sum), centre);
            }
        }
    }

    // ANCHOR: polynomial_horner
    /// A Horner chain over one loaded float: `x = in[i] * POLY_SCALE`,
    /// `acc = x`, then POLY_DEGREE times `acc = fma(acc, x, POLY_ADD)`.
    ///
    /// # Memory
    /// Two coalesced streams (8 bytes per element) for 2 * 256 + 1 FLOP: the
    /// only intensity here right of the ridge point. The chain is dependent;
    /// the parallelism comes from the number of elements.
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x >= n`.
    ///
    /// # Safety
    /// `input` and `out` hold `n` floats and do not overlap.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn polynomial_horner(input: *const f32, out: *mut f32, n: u64) {
        let i = global_index_x();
        if i < n {
            // SAFETY: i < n.
            let x = unsafe { load_readonly(input.add(i as usize)) } * POLY_SCALE;
            let mut acc = x;
            for _ in 0..POLY_DEGREE {
                acc = fma(acc, x, POLY_ADD);
            }
            // SAFETY: i < n.
            unsafe { *out.add(i as usize) = acc };
        }
    }
    // ANCHOR_END: polynomial_horner

    /// The FP32 ceiling: FMA_CHAINS independent chains of `iters` FMAs each,
    /// summed and stored once.
    ///
    /// # Memory
    /// One coalesced store per thread after the loop; the loop touches
    /// registers only.
    ///
    /// # Launch assumption
    /// `out` holds one float per launched thread. `iters` is a run-time
    /// argument so the loop cannot be unrolled into straight-line code.
    ///
    /// # Safety
    /// `out` holds `grid_dim.x * block_dim.x` floats.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn fma_peak(out: *mut f32, iters: i32) {
        /// One step of every chain.
        #[inline(always)]
        fn step(acc: &mut [f32; FMA_CHAINS]) {
            for a in acc.iter_mut() {
                *a = fma(*a, FMA_MUL, FMA_ADD);
            }
        }

        let i = global_index_x();
        let mut acc = [0.0f32; FMA_CHAINS];
        for (q, a) in acc.iter_mut().enumerate() {
            *a = q as f32 * 0.125;
        }
        /// FMA_BLOCK_STEPS steps of every chain, flattened by LLVM.
        #[inline(always)]
        fn block(acc: &mut [f32; FMA_CHAINS]) {
            for _ in 0..FMA_BLOCK_STEPS {
                step(acc);
            }
        }

        // ANCHOR: fma_loop
        // FMA_UNROLL steps per trip of the run-time loop, then the rest: the
        // loop's own counter, compare and branch take issue slots from the
        // FMAs, so fewer trips leave more of the SM's issue rate to them.
        for _ in 0..iters / FMA_UNROLL {
            for _ in 0..FMA_UNROLL / FMA_BLOCK_STEPS {
                block(&mut acc);
            }
        }
        for _ in 0..iters % FMA_UNROLL {
            step(&mut acc);
        }
        // ANCHOR_END: fma_loop
        let mut sum = 0.0f32;
        for a in acc {
            sum += a;
        }
        // SAFETY: one float per launched thread.
        unsafe { *out.add(i as usize) = sum };
    }
}

/// The body both tensor-core ceiling kernels share (`mma_peak` in the
/// sm_80 module, `mma_peak_f16` in the sm_75 one): the chains, written once
/// over the fragment packing and the `mma` step each module has.
#[cfg(all(target_arch = "nvptx64", any(lab_tensor_cores, lab_fp16_mma)))]
mod mma_chains {
    use super::*;
    use crate::device::memory::opaque_index;
    use crate::device::thread::{block_dim_x, block_idx_x, thread_idx_x};
    use crate::device::unroll::unrolled;

    // ANCHOR: mma_peak
    /// Each warp runs MMA_CHAINS independent chains of `iterations` steps
    /// `D = A * B + D`, each step `mma` on m16n8k16's fragments (16 x 16 by
    /// 16 x 8, f32 accumulators; 4096 FLOP a step), then writes every
    /// accumulator. A and B are the same for every chain and step, from the
    /// lane (`mma_a_value`, `mma_b_value`, two 16-bit values a register as
    /// `pack(low, high)` makes them); chain q of warp w starts at
    /// `mma_c0(w, q)` in every element, so it ends at that plus
    /// `iterations` times A B, exactly.
    ///
    /// # Memory
    /// The loop touches registers only. At the end each warp writes its
    /// MMA_OUT_PER_WARP floats: for chain q and accumulator register r, the
    /// 32 lanes store 32 consecutive floats at `((w * MMA_CHAINS + q) * 4 +
    /// r) * 32 + lane` (one coalesced 128-byte store each).
    ///
    /// # Launch assumption
    /// One dimension, blocks of a whole number of warps (THREADS_PER_BLOCK
    /// in the lesson), any grid; `iterations` a multiple of MMA_UNROLL (the
    /// loop runs `iterations / MMA_UNROLL` trips), at most
    /// MMA_ITERS_EXACT_MAX for exact results. A run-time argument, so the
    /// loop is not flattened. Every lane reaches every `mma` (no branch
    /// depends on the lane).
    ///
    /// # Safety
    /// `out` holds MMA_OUT_PER_WARP floats for every warp of the grid.
    #[inline(always)]
    pub(super) unsafe fn mma_chains(
        out: *mut f32,
        iterations: u32,
        pack: impl Fn(u32, u32) -> u32,
        mma: impl Fn([u32; 4], [u32; 2], [f32; 4]) -> [f32; 4],
    ) {
        let tid = thread_idx_x();
        let lane = tid % 32;
        let warp = block_idx_x() * (block_dim_x() / 32) + tid / 32;
        let mut a = [0u32; 4];
        unrolled::<4>(|r| {
            a[r] = pack(
                mma_a_value(lane, 2 * r as u32),
                mma_a_value(lane, 2 * r as u32 + 1),
            )
        });
        let mut b = [0u32; 2];
        unrolled::<2>(|r| {
            b[r] = pack(
                mma_b_value(lane, 2 * r as u32),
                mma_b_value(lane, 2 * r as u32 + 1),
            )
        });
        let mut acc = [[0.0f32; 4]; MMA_CHAINS];
        unrolled::<MMA_CHAINS>(|q| acc[q] = [mma_c0(warp, q as u32) as f32; 4]);

        // ANCHOR: mma_loop
        // MMA_UNROLL steps of every chain a trip, the chains interleaved so
        // consecutive `mma.sync` are independent. The trip counter passes
        // through `opaque_index`, so LLVM cannot count the trips and unroll
        // the run-time loop again on its own (it made three copies of the
        // trip otherwise, as a two-way unroll and a remainder): each trip is
        // exactly MMA_UNROLL x MMA_CHAINS steps, which
        // tests/cpu_tensor_ceiling.rs counts in the PTX.
        let trips = (iterations / MMA_UNROLL) as usize;
        let mut trip = 0;
        while trip < trips {
            unrolled::<{ MMA_UNROLL as usize }>(|_| {
                unrolled::<MMA_CHAINS>(|q| acc[q] = mma(a, b, acc[q]));
            });
            trip = opaque_index(trip + 1);
        }
        // ANCHOR_END: mma_loop

        let base = warp as usize * MMA_OUT_PER_WARP + lane as usize;
        unrolled::<MMA_CHAINS>(|q| {
            unrolled::<4>(|r| {
                // SAFETY: below (warp + 1) * MMA_OUT_PER_WARP, which `out`
                // holds for every warp of the grid.
                unsafe { *out.add(base + (q * 4 + r) * 32) = acc[q][r] };
            });
        });
    }
    // ANCHOR_END: mma_peak
}

/// The BF16 tensor-core ceiling's kernel, compiled only into the sm_80
/// module (`--cfg lab_tensor_cores`, `-Ctarget-cpu=sm_80`).
#[cfg(all(target_arch = "nvptx64", lab_tensor_cores))]
mod tensor_kernels {
    use crate::device::mma::mma_bf16_m16n8k16;

    /// Two small integers as a bf16x2 register: `lo` in bits 0-15 (the
    /// fragment element of the lower index), `hi` in bits 16-31. A bf16 is
    /// the top half of an f32, exact for integers this small.
    #[inline(always)]
    fn bf16x2(lo: u32, hi: u32) -> u32 {
        ((lo as f32).to_bits() >> 16) | ((hi as f32).to_bits() & 0xFFFF_0000)
    }

    /// The BF16 tensor-core ceiling: [`super::mma_chains::mma_chains`] with
    /// bf16 fragments and one `mma.sync` m16n8k16 a step. Memory, launch
    /// shape and exact result as there.
    ///
    /// # Safety
    /// `out` holds MMA_OUT_PER_WARP floats for every warp of the grid.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn mma_peak(out: *mut f32, iterations: u32) {
        // SAFETY: the caller's contract.
        unsafe { super::mma_chains::mma_chains(out, iterations, bf16x2, mma_bf16_m16n8k16) }
    }
}

/// The FP16 tensor-core ceiling's kernel, compiled into the sm_75 module
/// (`--cfg lab_fp16_mma`), so a T4 has a tensor-core ceiling: the GPUs of
/// compute capability 7.5 have f16 `mma.sync` m16n8k8 but no bf16 `mma`.
#[cfg(all(target_arch = "nvptx64", lab_fp16_mma))]
mod turing_kernels {
    use crate::device::mma::mma_f16_m16n8k16_as_two_k8;

    /// Two small positive integers (below 2^11) as an f16x2 register: `lo`
    /// in bits 0-15, `hi` in bits 16-31. An f32's exponent rebiased from
    /// 127 to 15 and its top 10 mantissa bits are the f16, exact for such
    /// integers (their mantissa has at most 10 bits after the leading one).
    #[inline(always)]
    fn f16x2(lo: u32, hi: u32) -> u32 {
        let f16 = |v: u32| ((v as f32).to_bits() >> 13) - ((127 - 15) << 10);
        f16(lo) | (f16(hi) << 16)
    }

    /// The FP16 tensor-core ceiling: [`super::mma_chains::mma_chains`] with
    /// f16 fragments, each m16n8k16 step as two `mma.sync` m16n8k8
    /// ([`mma_f16_m16n8k16_as_two_k8`]: the same 4096 FLOP and, on these
    /// integers, the same exact sums as one m16n8k16). Memory, launch shape
    /// and exact result as there.
    ///
    /// # Safety
    /// `out` holds MMA_OUT_PER_WARP floats for every warp of the grid.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn mma_peak_f16(out: *mut f32, iterations: u32) {
        // SAFETY: the caller's contract.
        unsafe { super::mma_chains::mma_chains(out, iterations, f16x2, mma_f16_m16n8k16_as_two_k8) }
    }
}

/// The wgmma ceiling's kernel, compiled only into the sm_90a module
/// (`--cfg lab_hopper`, `-Ctarget-cpu=sm_90a`).
#[cfg(all(target_arch = "nvptx64", lab_hopper))]
mod hopper_kernels {
    use super::*;
    use crate::device::memory::opaque_index;
    use crate::device::mma::{cp_async_commit, cp_async_wait};
    use crate::device::thread::{block_idx_x, sync_threads, thread_idx_x};
    use crate::device::unroll::unrolled;
    use crate::device::wgmma::{WgmmaAcc, fence_proxy_async_shared};
    use crate::gemm::tensor_kernels::hopper::{load_wg_stage, wgmma_step};
    use crate::gemm::{WG_BLOCK_K, WG_BLOCK_M, WG_BLOCK_N, WG_TILE_ALIGN};

    crate::dynamic_shared!(WGMMA_PEAK_TILES: [u32]);

    // ANCHOR: wgmma_peak
    /// The wgmma ceiling: each of a block's 2 warpgroups runs `iterations`
    /// steps `D += A B` (4 `wgmma` m64n256k16 a step, the GEMM lesson's
    /// [`wgmma_step`]: bf16 tiles from shared memory, f32 accumulators;
    /// WGMMA_STEP_FLOP / 2 a step) on the same two tiles, then writes its
    /// accumulators. Warpgroup g of the block reads rows `64 g ..` of A;
    /// its accumulators start at `wgmma_c0(2 * block + g)`.
    ///
    /// # Memory
    /// Once, A (128 x 64 bf16, row-major) and B (64 x 256) go from global
    /// to shared memory by `cp.async`, in the GEMM lesson's 128-byte
    /// swizzled stage; the loop touches shared memory through `wgmma`
    /// only. At the end warpgroup `w` (of the grid) writes its 64 x 256
    /// tile row-major at `out + w * WGMMA_OUT_PER_WARPGROUP`, each thread
    /// its fragments' elements (row `16 warp + lane / 4 + 8 (r / 2)`,
    /// column `128 h + 8 j + 2 (lane % 4) + r % 2` of register `r` of
    /// fragment `acc[h][j]`).
    ///
    /// # Launch assumption
    /// `WG_THREADS` (256) threads in one dimension, any grid,
    /// `WGMMA_SHARED_BYTES` of dynamic shared memory; `iterations` at most
    /// WGMMA_ITERS_EXACT_MAX for exact results.
    ///
    /// # Safety
    /// `a` and `b` hold the two tiles, 16-byte aligned; `out` holds
    /// WGMMA_OUT_PER_WARPGROUP floats for every warpgroup of the grid.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn wgmma_peak(
        a: *const u16,
        b: *const u16,
        out: *mut f32,
        iterations: u32,
    ) {
        let base = (WGMMA_PEAK_TILES::shared().addr() + WG_TILE_ALIGN - 1) & !(WG_TILE_ALIGN - 1);
        let tid = thread_idx_x();
        let (warpgroup, warp, lane) = (tid / 128, tid % 128 / 32, tid % 32);
        // SAFETY: the caller's tiles, exactly one stage's shape; the stage
        // is inside the aligned dynamic shared memory.
        unsafe { load_wg_stage::<8>(base, a, b, WG_BLOCK_M, WG_BLOCK_N, WG_BLOCK_K, 0, 0, 0) };
        cp_async_commit();
        cp_async_wait::<0>();
        fence_proxy_async_shared();
        sync_threads();

        let group = block_idx_x() * 2 + warpgroup;
        let mut acc = [[[wgmma_c0(group) as f32; 4]; 16]; 2];
        // The step counter passes through `opaque_index`, so LLVM does not
        // unroll the run-time loop: each trip is one step, 4 `wgmma`s
        // (tests/cpu_tensor_ceiling.rs counts them in the PTX).
        let mut step = 0;
        while step < iterations as usize {
            // SAFETY: the tiles were written, fenced and published by the
            // barrier above, and nothing writes them again; the warpgroup
            // is converged (no branch depends on the thread).
            unsafe { wgmma_step(&mut acc, base, warpgroup) };
            step = opaque_index(step + 1);
        }
        acc.wait::<0>();

        let (row_of_lane, col_of_lane) = (warp * 16 + lane / 4, 2 * (lane % 4));
        let tile = out.wrapping_add(group as usize * WGMMA_OUT_PER_WARPGROUP);
        unrolled::<2>(|h| {
            unrolled::<16>(|j| {
                unrolled::<4>(|r| {
                    let row = row_of_lane + 8 * (r as u32 / 2);
                    let col = 128 * h as u32 + 8 * j as u32 + col_of_lane + r as u32 % 2;
                    // SAFETY: inside this warpgroup's tile of `out`.
                    unsafe { *tile.add((row * WG_BLOCK_N + col) as usize) = acc[h][j][r] };
                });
            });
        });
    }
    // ANCHOR_END: wgmma_peak
}
