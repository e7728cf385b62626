//! The softmax lesson: an RMS-scaled softmax over the rows of a matrix,
//! `y = exp((x - max) * s) / sum` with `s = 1 / sqrt(mean(x^2) + EPS)`, run
//! as three kernels (staged, recompute) and as one cooperative megakernel
//! per group of rows that keeps its tile in shared memory. Three
//! megakernels share one body: `softmax_retained` (its blocks meet at a grid
//! barrier between phases), `softmax_row_retained` (row barriers: only a
//! row's blocks wait for each other) and `softmax_retained_control` (the
//! grid-barrier kernel carrying runtime flags that undo one part of the
//! retention at a time, to price it).
//!
//! Port of the seed `004` (an RMS-scaled softmax benchmark). A row of `n`
//! columns is cut into tiles of `w` columns, one block of `T` threads per
//! tile. Three phases per row:
//! 1. each tile's maximum and sum of squares, into `tile_max`/`tile_sumsq`;
//! 2. each block reduces its row's tile statistics to the row's maximum and
//!    scale, computes its tile's exponentials and their sum (`tile_sum`);
//! 3. each block reduces its row's tile sums and divides.
//!
//! Constants first, each with its reason; the kernels follow, each with
//! what it computes, how it touches memory and the launch shape it assumes.

/// Tile widths of the protocol, in columns. 131,072 floats (512 KiB) fit no
/// GPU's shared memory: the retained variants must refuse it at admission
/// while the staged ones, which keep nothing in shared memory, run it.
pub const TILE_WIDTHS: [u32; 4] = [4096, 8192, 16384, 131_072];
/// Threads per block of the protocol: 2, 4 and 8 warps.
pub const BLOCK_SIZES: [u32; 3] = [64, 128, 256];

/// Rows of the timed matrix.
pub const ROWS: usize = 64;
/// Columns of the timed matrix: a prime, so no tile width divides it and the
/// last tile of every row is partial. 64 x 1,000,003 floats is 256 MB per
/// buffer, several times the L2 of any current GPU (60 MiB on an H200).
pub const COLS: usize = 1_000_003;
/// `--quick`'s rows (compute-sanitizer runs; every check still made).
pub const QUICK_ROWS: usize = 4;
/// `--quick`'s columns: prime, and above the widest tile so even W = 131,072
/// has three tiles a row.
pub const QUICK_COLS: usize = 300_007;
/// The GPU tests' rows.
pub const TEST_ROWS: usize = 3;
/// The GPU tests' columns: prime, three 4096-column tiles with a partial
/// last one.
pub const TEST_COLS: usize = 10_007;

/// Added to the mean square before the square root (the seed's 1e-5).
pub const EPS: f32 = 1e-5;
/// log2(e), rounded to f32: `e^t = 2^(t * LOG2E)`.
pub const LOG2E: f32 = core::f32::consts::LOG2_E;

/// Floats of block-reduction scratch: one per warp of the largest block
/// (1024 threads), so any block size that is a whole number of warps fits.
pub const SCRATCH_FLOATS: u32 = 32;
/// The largest block a kernel here supports (one scratch slot per warp).
pub const MAX_THREADS: u32 = SCRATCH_FLOATS * 32;

/// Bit of the retained kernel's `controls`: phase 2 reloads x from global
/// memory instead of reading the tile phase 1 kept in shared memory.
pub const RELOAD_INPUT: u32 = 1;
/// Bit of `controls`: phase 2 writes the exponentials to global memory and
/// phase 3 reads them back, instead of keeping them in shared memory.
pub const ROUNDTRIP_EXPONENTIALS: u32 = 2;

/// Relative tolerance of every output against the f64 reference. Sources of
/// error, each measured or bounded: `ex2.approx.ftz` is within 2 ulp
/// (2.4e-7) of 2^u; rounding `(x - m) * s * log2(e)` to f32 moves u by at
/// most |u| x 6e-8 (|u| < 8 here); the f32 sums of squares and of
/// exponentials over a million terms (per-thread runs, then trees) are good
/// to a few 1e-7 relative. 2e-5 leaves a margin of about 10 over what the
/// GPU tests measure and still catches a wrong scale, a lost tile or a
/// wrong row (errors of 1e-3 and more).
pub const REL_TOLERANCE: f64 = 2e-5;

/// Bytes of dynamic shared memory the retained kernel needs for a tile of
/// `w` columns: the tile and the reduction scratch.
pub const fn retained_shared_bytes(w: u32) -> usize {
    (w as usize + SCRATCH_FLOATS as usize) * 4
}

/// Tiles a row of `n` columns needs at width `w` (the last may be partial).
pub const fn tiles_per_row(n: usize, w: u32) -> usize {
    n.div_ceil(w as usize)
}

const _: () = assert!(
    !COLS.is_multiple_of(4096)
        && !QUICK_COLS.is_multiple_of(4096)
        && !TEST_COLS.is_multiple_of(4096),
    "the last tile is partial"
);
const _: () = assert!(
    QUICK_COLS > 2 * 131_072,
    "--quick gives even the widest tile several tiles a row"
);
const _: () = assert!(
    TEST_COLS > 2 * 4096,
    "the tests' rows span several of the narrowest tiles"
);
const _: () = assert!(
    BLOCK_SIZES[2] <= MAX_THREADS,
    "the scratch holds one slot per warp"
);
const _: () = assert!(
    BLOCK_SIZES[0].is_multiple_of(32)
        && BLOCK_SIZES[1].is_multiple_of(32)
        && BLOCK_SIZES[2].is_multiple_of(32),
    "blocks are whole warps: the shuffles use the full mask"
);
const _: () = assert!(
    TILE_WIDTHS[0].is_multiple_of(BLOCK_SIZES[2]),
    "every thread of a block has columns in a full tile"
);

/// The kernels, compiled only for the GPU.
#[cfg(target_arch = "nvptx64")]
mod kernels {
    use super::*;
    use crate::device::atomic::row_barrier;
    use crate::device::math::{exp2_approx, fma};
    use crate::device::memory::load_readonly;
    use crate::device::shared::SharedPtr;
    use crate::device::thread::{block_dim_x, block_idx_x, grid_dim_x, thread_idx_x};
    use crate::device::warp::block_reduce;

    crate::shared_array!(SOFTMAX_SCRATCH: [f32; SCRATCH_FLOATS as usize]);
    crate::dynamic_shared!(SOFTMAX_TILE: [f32]);

    /// Where one block's tile lies.
    #[derive(Clone, Copy)]
    struct Tile {
        /// The row.
        row: u32,
        /// The tile's index within its row.
        t: u32,
        /// The tile's index over the whole matrix (row * tiles + t): its
        /// slot in the per-tile arrays.
        slot: u32,
        /// Flat index of the tile's first element.
        base: u64,
        /// Columns of the tile inside the row: `w`, or fewer for the last.
        len: u32,
    }

    #[inline(always)]
    fn tile(slot: u32, n: u32, w: u32, tiles: u32) -> Tile {
        let row = slot / tiles;
        let t = slot % tiles;
        let first = t * w;
        Tile {
            row,
            t,
            slot,
            base: row as u64 * n as u64 + first as u64,
            len: if n - first < w { n - first } else { w },
        }
    }

    /// `e^((x - m) * scale)` as both languages compute it here: the
    /// product rounded, times log2(e) rounded, then `ex2.approx.ftz`.
    #[inline(always)]
    fn scaled_exp(x: f32, m: f32, scale: f32) -> f32 {
        exp2_approx((x - m) * scale * LOG2E)
    }

    /// The row's scale from its sum of squares: `1 / sqrt(ss / n + EPS)`,
    /// IEEE division and square root as nvcc's defaults give.
    #[inline(always)]
    fn row_scale_of(sumsq: f32, n: u32) -> f32 {
        1.0 / core::intrinsics::sqrtf32(sumsq / n as f32 + EPS)
    }

    /// Reduces `count` per-tile values of one row (`values[0..count]`) with
    /// the whole block: each thread takes every block_dim-th value, then
    /// [`block_reduce`]. Plain loads: the values were written by other
    /// blocks before a kernel boundary or a row barrier.
    #[inline(always)]
    unsafe fn row_reduce<const MAX: bool>(
        values: *const f32,
        count: u32,
        scratch: SharedPtr<f32>,
    ) -> f32 {
        let mut acc = if MAX { f32::NEG_INFINITY } else { 0.0 };
        let mut i = thread_idx_x();
        while i < count {
            // SAFETY: i < count, the caller's bound.
            let v = unsafe { *values.add(i as usize) };
            acc = if MAX { acc.max(v) } else { acc + v };
            i += block_dim_x();
        }
        // SAFETY: the caller's scratch.
        unsafe { block_reduce::<MAX>(acc, scratch) }
    }

    // ANCHOR: phase_stats
    /// Phase 1 for one tile: its maximum and sum of squares into its slots.
    /// With `kept`, each value is also stored at its column there
    /// (shared memory: the retained kernel's tile).
    #[inline(always)]
    unsafe fn phase_stats(
        x: *const f32,
        tl: Tile,
        tile_max: *mut f32,
        tile_sumsq: *mut f32,
        kept: Option<SharedPtr<f32>>,
        scratch: SharedPtr<f32>,
    ) {
        let mut m = f32::NEG_INFINITY;
        let mut ss = 0.0f32;
        let mut j = thread_idx_x();
        while j < tl.len {
            // SAFETY: j < len keeps the element inside the row and x.
            let v = unsafe { load_readonly(x.add((tl.base + j as u64) as usize)) };
            if let Some(kept) = kept {
                // SAFETY: j < len <= w, the tile's shared size.
                unsafe { kept.write(j, v) };
            }
            m = m.max(v);
            ss = fma(v, v, ss);
            j += block_dim_x();
        }
        // SAFETY: the caller's scratch; every thread reaches both reductions.
        let (m, ss) = unsafe {
            (
                block_reduce::<true>(m, scratch),
                block_reduce::<false>(ss, scratch),
            )
        };
        if thread_idx_x() == 0 {
            // SAFETY: slot < rows * tiles, the arrays' length.
            unsafe {
                *tile_max.add(tl.slot as usize) = m;
                *tile_sumsq.add(tl.slot as usize) = ss;
            }
        }
    }
    // ANCHOR_END: phase_stats

    /// The per-row buffers every phase-2 and phase-3 block reads or writes.
    #[derive(Clone, Copy)]
    struct RowStats {
        tile_max: *mut f32,
        tile_sumsq: *mut f32,
        tile_sum: *mut f32,
        row_max: *mut f32,
        row_scale: *mut f32,
        row_sum: *mut f32,
    }

    /// Phase 2 for one tile: the row's maximum and scale from its tiles'
    /// statistics, the tile's exponentials and their sum. Input from `kept`
    /// (shared) when given, else from x; exponentials to `kept` and/or to
    /// `e` (global) as asked.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn phase_exponentials(
        x: *const f32,
        e: *mut f32,
        tl: Tile,
        s: RowStats,
        n: u32,
        tiles: u32,
        input_kept: Option<SharedPtr<f32>>,
        output_kept: Option<SharedPtr<f32>>,
        write_e: bool,
        scratch: SharedPtr<f32>,
    ) {
        let first = tl.row * tiles;
        // SAFETY: the row's `tiles` slots exist; the caller's scratch.
        let (m, ss) = unsafe {
            (
                row_reduce::<true>(s.tile_max.add(first as usize), tiles, scratch),
                row_reduce::<false>(s.tile_sumsq.add(first as usize), tiles, scratch),
            )
        };
        let scale = row_scale_of(ss, n);
        let mut mass = 0.0f32;
        let mut j = thread_idx_x();
        while j < tl.len {
            let i = (tl.base + j as u64) as usize;
            // SAFETY: j < len: inside the tile (shared) and the row (global).
            unsafe {
                let v = match input_kept {
                    Some(kept) => kept.read(j),
                    None => load_readonly(x.add(i)),
                };
                let v = scaled_exp(v, m, scale);
                if let Some(kept) = output_kept {
                    kept.write(j, v);
                }
                if write_e {
                    *e.add(i) = v;
                }
                mass += v;
            }
            j += block_dim_x();
        }
        // SAFETY: the caller's scratch.
        let mass = unsafe { block_reduce::<false>(mass, scratch) };
        if thread_idx_x() == 0 {
            // SAFETY: slot and row are inside their arrays.
            unsafe {
                *s.tile_sum.add(tl.slot as usize) = mass;
                if tl.t == 0 {
                    *s.row_max.add(tl.row as usize) = m;
                    *s.row_scale.add(tl.row as usize) = scale;
                }
            }
        }
    }

    /// Where phase 3 finds a tile's exponentials.
    #[derive(Clone, Copy)]
    enum Source {
        /// Read back from `e` in global memory (plain loads: the retained
        /// kernel wrote them in this launch).
        Global(*const f32),
        /// Read back from `e`, written by an earlier kernel: the read-only
        /// path is legal.
        GlobalReadOnly(*const f32),
        /// Recomputed from x with the row's maximum and scale.
        Recompute(*const f32),
        /// Kept in shared memory by phase 2.
        Kept(SharedPtr<f32>),
    }

    /// Phase 3 for one tile: the row's sum from its tiles' sums, then
    /// `y = v / sum` for each of the tile's exponentials `v`.
    #[inline(always)]
    unsafe fn phase_normalize(
        y: *mut f32,
        tl: Tile,
        s: RowStats,
        tiles: u32,
        source: Source,
        scratch: SharedPtr<f32>,
    ) {
        // SAFETY: the row's slots exist; the caller's scratch.
        let z = unsafe {
            row_reduce::<false>(s.tile_sum.add((tl.row * tiles) as usize), tiles, scratch)
        };
        // SAFETY: row < rows.
        let (m, scale) = unsafe {
            (
                *s.row_max.add(tl.row as usize),
                *s.row_scale.add(tl.row as usize),
            )
        };
        if thread_idx_x() == 0 && tl.t == 0 {
            // SAFETY: as above.
            unsafe { *s.row_sum.add(tl.row as usize) = z };
        }
        let mut j = thread_idx_x();
        while j < tl.len {
            let i = (tl.base + j as u64) as usize;
            // SAFETY: j < len, as in phase 2.
            unsafe {
                let v = match source {
                    Source::Global(e) => *e.add(i),
                    Source::GlobalReadOnly(e) => load_readonly(e.add(i)),
                    Source::Recompute(x) => scaled_exp(load_readonly(x.add(i)), m, scale),
                    Source::Kept(kept) => kept.read(j),
                };
                *y.add(i) = v / z;
            }
            j += block_dim_x();
        }
    }

    /// Phase 1 of the staged and recompute variants: each tile's maximum
    /// and sum of squares.
    ///
    /// # Memory
    /// Reads its tile of x once, coalesced (consecutive threads take
    /// consecutive columns), through the read-only path; writes two floats.
    ///
    /// # Launch assumption
    /// One block per tile: `grid_dim.x = rows * tiles`, `tiles =
    /// ceil(n / w)`; `block_dim.x` a multiple of 32, at most MAX_THREADS.
    ///
    /// # Safety
    /// `x` holds rows * n floats; `tile_max` and `tile_sumsq` rows * tiles.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn softmax_tile_stats(
        x: *const f32,
        tile_max: *mut f32,
        tile_sumsq: *mut f32,
        n: u32,
        w: u32,
        tiles: u32,
    ) {
        let tl = tile(block_idx_x(), n, w, tiles);
        // SAFETY: the launch assumption and the caller's buffers.
        unsafe { phase_stats(x, tl, tile_max, tile_sumsq, None, SOFTMAX_SCRATCH::shared()) }
    }

    /// Phase 2 of the staged and recompute variants: each block reduces
    /// its row's tile statistics to the row's maximum and scale, then
    /// computes its tile's exponentials and their sum. With `write_e != 0`
    /// (staged) the exponentials go to `e`; without (recompute) only their
    /// sum is kept and phase 3 computes them again.
    ///
    /// # Memory
    /// Reads its row's 2 x tiles statistics and its tile of x (coalesced,
    /// read-only path); staged writes the tile to `e` (coalesced): 8 bytes
    /// per element staged, 4 recompute.
    ///
    /// # Launch assumption
    /// As [`softmax_tile_stats`], after it on the same stream.
    ///
    /// # Safety
    /// As [`softmax_tile_stats`]; `e` holds rows * n floats, `tile_sum`
    /// rows * tiles, `row_max` and `row_scale` rows.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn softmax_tile_exp(
        x: *const f32,
        e: *mut f32,
        tile_max: *mut f32,
        tile_sumsq: *mut f32,
        tile_sum: *mut f32,
        row_max: *mut f32,
        row_scale: *mut f32,
        n: u32,
        w: u32,
        tiles: u32,
        write_e: u32,
    ) {
        let tl = tile(block_idx_x(), n, w, tiles);
        let s = RowStats {
            tile_max,
            tile_sumsq,
            tile_sum,
            row_max,
            row_scale,
            row_sum: core::ptr::null_mut(),
        };
        // SAFETY: the launch assumption and the caller's buffers.
        unsafe {
            phase_exponentials(
                x,
                e,
                tl,
                s,
                n,
                tiles,
                None,
                None,
                write_e != 0,
                SOFTMAX_SCRATCH::shared(),
            )
        }
    }

    /// Phase 3 of the staged and recompute variants: each block reduces its
    /// row's tile sums and writes `y = v / sum` over its tile, with `v`
    /// read from `src` (staged: the exponentials) or, with `recompute !=
    /// 0`, computed again from `src` = x and the row's maximum and scale.
    ///
    /// # Memory
    /// Reads tiles sums and its tile of `src` (coalesced, read-only path),
    /// writes its tile of y (coalesced): 8 bytes per element.
    ///
    /// # Launch assumption
    /// As [`softmax_tile_stats`], after [`softmax_tile_exp`].
    ///
    /// # Safety
    /// `src` and `y` hold rows * n floats and do not overlap; the row
    /// arrays rows floats, `tile_sum` rows * tiles.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn softmax_tile_normalize(
        src: *const f32,
        y: *mut f32,
        tile_sum: *mut f32,
        row_max: *mut f32,
        row_scale: *mut f32,
        row_sum: *mut f32,
        n: u32,
        w: u32,
        tiles: u32,
        recompute: u32,
    ) {
        let tl = tile(block_idx_x(), n, w, tiles);
        let s = RowStats {
            tile_max: core::ptr::null_mut(),
            tile_sumsq: core::ptr::null_mut(),
            tile_sum,
            row_max,
            row_scale,
            row_sum,
        };
        let source = if recompute != 0 {
            Source::Recompute(src)
        } else {
            Source::GlobalReadOnly(src)
        };
        // SAFETY: the launch assumption and the caller's buffers.
        unsafe { phase_normalize(y, tl, s, tiles, source, SOFTMAX_SCRATCH::shared()) }
    }

    /// Which blocks meet at the megakernels' two barriers.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Scope {
        /// Every block of the launch (the whole row group): one slot pair,
        /// the group's first row's, with `grid_dim.x` participants.
        Grid,
        /// Only the blocks of the block's own row: its row's slot pair,
        /// with `tiles` participants.
        Row,
    }

    /// The body every megakernel shares: phase 1, barrier, phase 2,
    /// barrier, phase 3, the tile kept in dynamic shared memory unless a
    /// control in `controls` undoes part of that (the callers without
    /// controls pass a constant 0, so the branches fold away and the kernel
    /// carries no flag).
    ///
    /// # Safety
    /// The buffers and launch assumption of [`softmax_retained`] (for
    /// `Scope::Grid`) or [`softmax_row_retained`] (for `Scope::Row`):
    /// every block of the grid resident at once (a cooperative launch),
    /// `row_base` plus the rows the grid handles within the buffers' rows.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn retained_body(
        scope: Scope,
        x: *const f32,
        e: *mut f32,
        y: *mut f32,
        s: RowStats,
        arrivals: *mut u32,
        epochs: *mut u32,
        n: u32,
        w: u32,
        tiles: u32,
        row_base: u32,
        controls: u32,
    ) {
        // ANCHOR: retained_body
        let tl = tile(row_base * tiles + block_idx_x(), n, w, tiles);
        let kept = SOFTMAX_TILE::shared();
        let scratch = kept.add(w);
        let reload = controls & RELOAD_INPUT != 0;
        let roundtrip = controls & ROUNDTRIP_EXPONENTIALS != 0;
        let (slot, participants) = match scope {
            Scope::Grid => (row_base as usize * 2, grid_dim_x()),
            Scope::Row => (tl.row as usize * 2, tiles),
        };
        // SAFETY: the launch assumption; the barrier slots named above
        // belong to this launch's rows.
        unsafe {
            phase_stats(
                x,
                tl,
                s.tile_max,
                s.tile_sumsq,
                if reload { None } else { Some(kept) },
                scratch,
            );
            row_barrier(arrivals.add(slot), epochs.add(slot), participants);
            phase_exponentials(
                x,
                e,
                tl,
                s,
                n,
                tiles,
                if reload { None } else { Some(kept) },
                if roundtrip { None } else { Some(kept) },
                roundtrip,
                scratch,
            );
            row_barrier(arrivals.add(slot + 1), epochs.add(slot + 1), participants);
            let source = if roundtrip {
                Source::Global(e)
            } else {
                Source::Kept(kept)
            };
            phase_normalize(y, tl, s, tiles, source, scratch);
        }
        // ANCHOR_END: retained_body
    }

    /// All three phases for a group of rows in one cooperative launch: each
    /// block keeps its tile in dynamic shared memory from phase 1 to phase
    /// 3, and between phases every block of the launch meets at one
    /// device-scope grid barrier ([`row_barrier`] with `grid_dim.x`
    /// participants), so only the row statistics pass through global
    /// memory. No control flags: `controls` is accepted (one argument list
    /// for the three megakernels) and ignored.
    ///
    /// # Memory
    /// Reads x once and writes y once, both coalesced: 8 bytes per element,
    /// the compulsory traffic. Shared memory: the tile (w floats,
    /// `ld.shared`/`st.shared`) and SCRATCH_FLOATS of scratch.
    ///
    /// # Launch assumption
    /// Cooperative: `grid_dim.x = group_rows * tiles`, every block resident
    /// at once (the host's admission checks occupancy x SMs); block `b`
    /// handles tile `b % tiles` of row `row_base + b / tiles`;
    /// `block_dim.x` a multiple of 32, at most MAX_THREADS; dynamic shared
    /// memory `retained_shared_bytes(w)`.
    ///
    /// # Safety
    /// Buffers as in the staged kernels; `arrivals` and `epochs` hold 2 x
    /// rows counters, zeroed once at allocation (the barrier keeps them
    /// reusable; this kernel uses the pair of row `row_base`). Launched
    /// ordinarily, or with too few blocks resident, the barrier never
    /// returns.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn softmax_retained(
        x: *const f32,
        e: *mut f32,
        y: *mut f32,
        tile_max: *mut f32,
        tile_sumsq: *mut f32,
        tile_sum: *mut f32,
        row_max: *mut f32,
        row_scale: *mut f32,
        row_sum: *mut f32,
        arrivals: *mut u32,
        epochs: *mut u32,
        n: u32,
        w: u32,
        tiles: u32,
        row_base: u32,
        _controls: u32,
    ) {
        let s = RowStats {
            tile_max,
            tile_sumsq,
            tile_sum,
            row_max,
            row_scale,
            row_sum,
        };
        // SAFETY: the launch assumption and the caller's buffers.
        unsafe {
            retained_body(
                Scope::Grid,
                x,
                e,
                y,
                s,
                arrivals,
                epochs,
                n,
                w,
                tiles,
                row_base,
                0,
            )
        }
    }

    /// The control kernel: [`softmax_retained`] (the same grid barrier)
    /// carrying runtime control flags that undo parts of the retention to
    /// price them: RELOAD_INPUT (phase 2 reads x again from global memory),
    /// ROUNDTRIP_EXPONENTIALS (phase 2 writes the exponentials to `e`,
    /// phase 3 reads them back), both, or neither (`controls = 0`: the
    /// retained traffic, with the flags' branches still in the code).
    ///
    /// # Memory
    /// As [`softmax_retained`] with `controls = 0`; each control adds 4
    /// (reload) or 8 (round trip) bytes per element, coalesced.
    ///
    /// # Launch assumption
    /// As [`softmax_retained`].
    ///
    /// # Safety
    /// As [`softmax_retained`].
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn softmax_retained_control(
        x: *const f32,
        e: *mut f32,
        y: *mut f32,
        tile_max: *mut f32,
        tile_sumsq: *mut f32,
        tile_sum: *mut f32,
        row_max: *mut f32,
        row_scale: *mut f32,
        row_sum: *mut f32,
        arrivals: *mut u32,
        epochs: *mut u32,
        n: u32,
        w: u32,
        tiles: u32,
        row_base: u32,
        controls: u32,
    ) {
        let s = RowStats {
            tile_max,
            tile_sumsq,
            tile_sum,
            row_max,
            row_scale,
            row_sum,
        };
        // SAFETY: the launch assumption and the caller's buffers.
        unsafe {
            retained_body(
                Scope::Grid,
                x,
                e,
                y,
                s,
                arrivals,
                epochs,
                n,
                w,
                tiles,
                row_base,
                controls,
            )
        }
    }

    /// [`softmax_retained`] with row barriers instead of the grid barrier:
    /// between phases each block waits only for the other blocks of its own
    /// row ([`row_barrier`] with `tiles` participants, the row's slot pair),
    /// so a row whose tiles are done moves on without waiting for the rest
    /// of the group. No control flags (`controls` ignored).
    ///
    /// # Memory
    /// As [`softmax_retained`]: 8 bytes per element.
    ///
    /// # Launch assumption
    /// As [`softmax_retained`].
    ///
    /// # Safety
    /// As [`softmax_retained`]; uses the slot pair of every row it handles.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn softmax_row_retained(
        x: *const f32,
        e: *mut f32,
        y: *mut f32,
        tile_max: *mut f32,
        tile_sumsq: *mut f32,
        tile_sum: *mut f32,
        row_max: *mut f32,
        row_scale: *mut f32,
        row_sum: *mut f32,
        arrivals: *mut u32,
        epochs: *mut u32,
        n: u32,
        w: u32,
        tiles: u32,
        row_base: u32,
        _controls: u32,
    ) {
        let s = RowStats {
            tile_max,
            tile_sumsq,
            tile_sum,
            row_max,
            row_scale,
            row_sum,
        };
        // SAFETY: the launch assumption and the caller's buffers.
        unsafe {
            retained_body(
                Scope::Row,
                x,
                e,
                y,
                s,
                arrivals,
                epochs,
                n,
                w,
                tiles,
                row_base,
                0,
            )
        }
    }
}
