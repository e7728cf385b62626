//! CPU references for the roofline kernels, written for obvious correctness:
//! plain loops, f64 accumulation, nothing shared with the kernels' code, so
//! a reference can disagree with a kernel. Where the operation order is
//! deliberate (the Horner chain and the FMA chains run in f32, in the
//! kernels' order) the function says so.

use kernels_gpu::roofline::{
    FMA_ADD, FMA_CHAINS, FMA_MUL, MMA_CHAINS, MMA_OUT_PER_WARP, POLY_ADD, POLY_DEGREE, POLY_SCALE,
    TRIAD_SCALAR, WGMMA_OUT_PER_WARPGROUP, WGMMA_VALUE_MAX, mma_a_value, mma_b_value, mma_c0,
    wgmma_c0,
};

/// The first input: the seed's small integers 1..=7, in a hashed order
/// (the seed repeats them with period 7, so an index off by a multiple of 7
/// would read the same value). With the second input's values every sum,
/// partial sum and dot product in the lesson is an exact f32, so a mismatch
/// is an index bug; and with only seven values the polynomial's reference
/// is computed once per value.
pub fn fill_a(i: usize) -> f32 {
    crate::fill::below(i, 0xA, 7) as f32 + 1.0
}

/// The second input: small integers -2..=2, in a hashed order.
pub fn fill_b(i: usize) -> f32 {
    crate::fill::below(i, 0xB, 5) as f32 - 2.0
}

/// Small integers in -4..=4 in a pseudo-random order (a hash of the index
/// and `stream`): no row or run repeats, and any dot product over fewer than
/// 2^24 / 16 terms is an exact f32. The matmul checks use it.
pub fn fill_scrambled(i: usize, stream: u64) -> f32 {
    crate::fill::below(i, stream, 9) as f32 - 4.0
}

/// The transpose's input: element `i` holds `i` itself, as the bit pattern
/// of the f32 (`f32::from_bits(i)`). A swapped index can never land on an
/// equal element, and unlike `i as f32` (exact only below 2^24) it stays
/// exact at any size this lesson uses: a transpose moves bits and never does
/// arithmetic on them.
pub fn fill_index_bits(i: usize) -> f32 {
    f32::from_bits(u32::try_from(i).expect("buffers hold fewer than 2^32 elements"))
}

/// The triad stream's float `i`: `a[i] + TRIAD_SCALAR * b[i]` of the two
/// fills (small integers, so exact however it is rounded).
pub fn triad(i: usize) -> f32 {
    fill_a(i) + TRIAD_SCALAR * fill_b(i)
}

/// The dot stream's block sums over `n4` float4 pairs of the fills, for a
/// grid of `blocks` blocks of `threads` threads: pair `i` belongs to thread
/// `i mod (blocks x threads)` (the grid-stride loop), so to block
/// `(i mod (blocks x threads)) / threads`. Summed in integers (every
/// product is an integer), so the result is exact in any order; the lesson
/// keeps every block sum below 2^24, where f32 is exact too. Computed on all
/// CPU cores, a block at a time.
pub fn stream_dot_partials(n4: usize, blocks: usize, threads: usize) -> Vec<f32> {
    let grid = blocks * threads;
    // Each worker sums whole blocks: block b's pairs are b * threads + t +
    // k * grid for its threads t and every k.
    crate::fill::filled(0..blocks, |b| {
        let mut sum = 0i64;
        for t in 0..threads {
            let mut i = b * threads + t;
            while i < n4 {
                let dot: f32 = (4 * i..4 * i + 4).map(|j| fill_a(j) * fill_b(j)).sum();
                sum += dot as i64;
                i += grid;
            }
        }
        sum as f32
    })
}

/// `out[i] = a[i] + b[i]`.
pub fn vector_add(a: &[f32], b: &[f32]) -> Vec<f32> {
    a.iter().zip(b).map(|(x, y)| x + y).collect()
}

/// The transpose of a `side` x `side` row-major matrix:
/// `out[col * side + row] = input[row * side + col]`.
pub fn transpose(input: &[f32], side: usize) -> Vec<f32> {
    let mut out = vec![0.0; side * side];
    for row in 0..side {
        for col in 0..side {
            out[col * side + row] = input[row * side + col];
        }
    }
    out
}

/// `c = a * b` for `d` x `d` row-major matrices, accumulated in f64.
pub fn matmul(a: &[f32], b: &[f32], d: usize) -> Vec<f32> {
    let mut c = vec![0.0; d * d];
    for row in 0..d {
        for col in 0..d {
            let mut acc = 0.0f64;
            for p in 0..d {
                acc += a[row * d + p] as f64 * b[p * d + col] as f64;
            }
            c[row * d + col] = acc as f32;
        }
    }
    c
}

/// The sum of each consecutive `block`-element slice of `x` (the last slice
/// may be short), in f64.
pub fn block_sums(x: &[f32], block: usize) -> Vec<f64> {
    x.chunks(block)
        .map(|chunk| chunk.iter().map(|&v| v as f64).sum())
        .collect()
}

/// One explicit heat step on an `n` x `n` grid, in f64:
/// `out = c + r * (w + e + n + s - 4c)` on interior cells. The boundary ring
/// is 0, which is what the lesson leaves there (it zeroes the output before
/// each stencil kernel, and neither kernel writes the ring).
pub fn heat_step(input: &[f32], n: usize, r: f32) -> Vec<f32> {
    let mut out = vec![0.0; n * n];
    for row in 1..n.saturating_sub(1) {
        for col in 1..n - 1 {
            let c = row * n + col;
            let centre = input[c] as f64;
            let neighbours = input[c - 1] as f64
                + input[c + 1] as f64
                + input[c - n] as f64
                + input[c + n] as f64;
            out[c] = (centre + r as f64 * (neighbours - 4.0 * centre)) as f32;
        }
    }
    out
}

/// The Horner chain, in f32 and in the kernel's order (`x = v * 0.0625`,
/// `acc = x`, then 256 times `acc = fma(acc, x, 1)`), each step one
/// correctly rounded fused multiply-add as on the GPU, so the two agree bit
/// for bit rather than within an argument about association.
pub fn polynomial(input: &[f32]) -> Vec<f32> {
    input
        .iter()
        .map(|&v| {
            let x = v * POLY_SCALE;
            let mut acc = x;
            for _ in 0..POLY_DEGREE {
                acc = acc.mul_add(x, POLY_ADD);
            }
            acc
        })
        .collect()
}

/// [`polynomial`] of every element, computed once per distinct input value
/// (the lesson's input has 7), so a whole buffer can be checked exactly.
pub fn polynomial_by_value(input: &[f32]) -> Vec<f32> {
    let mut memo: std::collections::HashMap<u32, f32> = std::collections::HashMap::new();
    input
        .iter()
        .map(|&v| {
            *memo
                .entry(v.to_bits())
                .or_insert_with(|| polynomial(&[v])[0])
        })
        .collect()
}

/// One thread's result of the FMA ceiling kernel: FMA_CHAINS chains, chain q
/// starting at q / 8, each stepped `iters` times by `acc = fma(acc, MUL,
/// ADD)`, then summed in chain order, all in f32 as the kernel does. This is
/// what shows the loop ran every step the FLOP count assumes.
pub fn fma_sum(iters: i32) -> f32 {
    let mut sum = 0.0f32;
    for q in 0..FMA_CHAINS {
        let mut acc = q as f32 * 0.125;
        for _ in 0..iters {
            acc = acc.mul_add(FMA_MUL, FMA_ADD);
        }
        sum += acc;
    }
    sum
}

// ---- the BF16 tensor-core ceiling ------------------------------------------

/// Where the elements of a warp's `mma.sync.m16n8k16` fragments sit in the
/// tiles: A (16 x 16), B (16 x 8, k by n) and the accumulator C/D (16 x 8).
/// The reference reads each lane's registers through it; a test hands it
/// deliberately wrong layouts to show the check would catch a misread one.
#[derive(Debug, Clone, Copy)]
pub struct FragmentLayout {
    /// (row, column) of A element `j` (register `j / 2`, low half for even
    /// `j`) of lane `lane`.
    pub a: fn(lane: usize, j: usize) -> (usize, usize),
    /// (k, n) of B element `j` (register `j / 2`, low half for even `j`) of
    /// lane `lane`.
    pub b: fn(lane: usize, j: usize) -> (usize, usize),
    /// (row, column) of accumulator register `r` of lane `lane`.
    pub c: fn(lane: usize, r: usize) -> (usize, usize),
}

/// The layout of the PTX ISA, "Matrix Fragments for mma.m16n8k16 with
/// floating point type", written out as it reads there: lane `l` has
/// `group = l / 4` and `pair = l % 4`; A's register r holds row `group + 8
/// (r % 2)`, columns `2 pair + 8 (r / 2)` and the next; B's register r holds
/// rows `2 pair + 8 r` and the next of column `group`; C's register r is row
/// `group + 8 (r / 2)`, column `2 pair + r % 2`.
pub const PTX_ISA_LAYOUT: FragmentLayout = FragmentLayout {
    a: |lane, j| {
        let (group, pair, r, half) = (lane / 4, lane % 4, j / 2, j % 2);
        (group + 8 * (r % 2), 2 * pair + 8 * (r / 2) + half)
    },
    b: |lane, j| {
        let (group, pair, r, half) = (lane / 4, lane % 4, j / 2, j % 2);
        (2 * pair + 8 * r + half, group)
    },
    c: |lane, r| {
        let (group, pair) = (lane / 4, lane % 4);
        (group + 8 * (r / 2), 2 * pair + r % 2)
    },
};

/// What `mma_peak` must write, element by element, for one step count:
/// the product A B of the fragments the kernel builds from each lane
/// ([`mma_a_value`], [`mma_b_value`]), placed by a [`FragmentLayout`], in
/// f64; then each output is its chain's initial value ([`mma_c0`]) plus
/// `iterations` times its element of A B. Every term is an integer, so
/// adding A B `iterations` times and multiplying once agree exactly.
#[derive(Debug, Clone)]
pub struct MmaPeak {
    layout: FragmentLayout,
    product: [[f64; 8]; 16],
    iterations: u32,
}

impl MmaPeak {
    /// The reference for `iterations` steps of every chain, the fragments
    /// read through `layout`. A layout that leaves an element of A or B
    /// unplaced leaves a NaN there, which every output it reaches carries.
    pub fn new(layout: FragmentLayout, iterations: u32) -> MmaPeak {
        let mut a = [[f64::NAN; 16]; 16];
        let mut b = [[f64::NAN; 8]; 16];
        for lane in 0..32 {
            for j in 0..8 {
                let (row, col) = (layout.a)(lane, j);
                a[row][col] = f64::from(mma_a_value(lane as u32, j as u32));
            }
            for j in 0..4 {
                let (k, n) = (layout.b)(lane, j);
                b[k][n] = f64::from(mma_b_value(lane as u32, j as u32));
            }
        }
        let mut product = [[0.0f64; 8]; 16];
        for (row, out) in product.iter_mut().enumerate() {
            for (col, out) in out.iter_mut().enumerate() {
                for k in 0..16 {
                    *out += a[row][k] * b[k][col];
                }
            }
        }
        MmaPeak {
            layout,
            product,
            iterations,
        }
    }

    /// The product A B, 16 x 8, as the layout places the fragments.
    pub fn product(&self) -> &[[f64; 8]; 16] {
        &self.product
    }

    /// Output element `i` of `mma_peak`: warp `i / MMA_OUT_PER_WARP`; in
    /// it, chain `q`, accumulator register `r` and lane `l` at `(q * 4 + r)
    /// * 32 + l` (the kernel's store order).
    pub fn element(&self, i: usize) -> f64 {
        let (warp, within) = (i / MMA_OUT_PER_WARP, i % MMA_OUT_PER_WARP);
        let (chain, r, lane) = (within / 128, within / 32 % 4, within % 32);
        debug_assert!(chain < MMA_CHAINS);
        let (row, col) = (self.layout.c)(lane, r);
        f64::from(mma_c0(warp as u32, chain as u32))
            + f64::from(self.iterations) * self.product[row][col]
    }

    /// Elements `range` of the output, as f32 (exact: every one is an
    /// integer below 2^24 within the kernel's step limit), on every CPU
    /// core.
    pub fn elements(&self, range: std::ops::Range<usize>) -> Vec<f32> {
        crate::fill::filled(range, |i| self.element(i) as f32)
    }
}

// ---- the wgmma ceiling ------------------------------------------------------

/// The fill streams of `wgmma_peak`'s two tiles (no other fill uses them).
pub const WGMMA_STREAMS: [u64; 2] = [0x5747_4d4d_4131, 0x5747_4d4d_4232];

/// Rows of `wgmma_peak`'s A tile (2 warpgroups of 64) and of its B tile
/// (one step's k), and B's columns: the GEMM lesson's Hopper stage.
const WG_ROWS: usize = kernels_gpu::gemm::WG_BLOCK_M as usize;
const WG_K: usize = kernels_gpu::gemm::WG_BLOCK_K as usize;
const WG_COLS: usize = kernels_gpu::gemm::WG_BLOCK_N as usize;

/// What `wgmma_peak` must write, for one step count: its tiles A (128 x 64)
/// and B (64 x 256), integers 1 to WGMMA_VALUE_MAX in a hashed order
/// ([`crate::fill::below`], so no row or column repeats another's pattern);
/// their product in f64; and each output of warpgroup `w` at (row, col) of
/// its 64 x 256 tile: `wgmma_c0(w)` plus `iterations` times element
/// (`64 (w % 2) + row`, col) of A B. Every term is an integer below 2^24
/// within the kernel's step limit, so the GPU's result is exact.
#[derive(Debug, Clone)]
pub struct WgmmaPeak {
    product: Vec<f64>,
    iterations: u32,
}

impl WgmmaPeak {
    /// The two tiles, row-major, as f32 (exact in bf16: small integers).
    pub fn tiles() -> (Vec<f32>, Vec<f32>) {
        let tile = |len: usize, stream: u64| -> Vec<f32> {
            (0..len)
                .map(|i| (1 + crate::fill::below(i, stream, u64::from(WGMMA_VALUE_MAX))) as f32)
                .collect()
        };
        (
            tile(WG_ROWS * WG_K, WGMMA_STREAMS[0]),
            tile(WG_K * WG_COLS, WGMMA_STREAMS[1]),
        )
    }

    /// The reference for `iterations` steps of every warpgroup.
    pub fn new(iterations: u32) -> WgmmaPeak {
        let (a, b) = WgmmaPeak::tiles();
        let mut product = vec![0.0f64; WG_ROWS * WG_COLS];
        for row in 0..WG_ROWS {
            for col in 0..WG_COLS {
                product[row * WG_COLS + col] = (0..WG_K)
                    .map(|k| f64::from(a[row * WG_K + k]) * f64::from(b[k * WG_COLS + col]))
                    .sum();
            }
        }
        WgmmaPeak {
            product,
            iterations,
        }
    }

    /// Element (`row`, `col`) of A B (128 x 256).
    pub fn product(&self, row: usize, col: usize) -> f64 {
        self.product[row * WG_COLS + col]
    }

    /// Output element `i`: warpgroup `i / WGMMA_OUT_PER_WARPGROUP`, then
    /// row-major in its 64 x 256 tile (the kernel's store order).
    pub fn element(&self, i: usize) -> f64 {
        let (group, within) = (i / WGMMA_OUT_PER_WARPGROUP, i % WGMMA_OUT_PER_WARPGROUP);
        let (row, col) = (within / WG_COLS, within % WG_COLS);
        f64::from(wgmma_c0(group as u32))
            + f64::from(self.iterations) * self.product(64 * (group % 2) + row, col)
    }

    /// The first element of `got`, elements `start..` of the output, that
    /// is not exactly the reference's, as one line: index, got, wanted, and
    /// where it sits (warpgroup, row, column). `None` where every element
    /// matches.
    pub fn mismatch(&self, got: &[f32], start: usize) -> Option<String> {
        let want = crate::fill::filled(start..start + got.len(), |i| self.element(i) as f32);
        let mut m = crate::check::first_mismatch(got, &want, crate::check::Tolerance::Exact)?;
        m.index += start;
        let within = m.index % WGMMA_OUT_PER_WARPGROUP;
        Some(format!(
            "{m} (warpgroup {}, row {}, column {}); a tile read through a wrong descriptor, a skipped step or an \
             output in another warpgroup's place",
            m.index / WGMMA_OUT_PER_WARPGROUP,
            within / WG_COLS,
            within % WG_COLS,
        ))
    }
}
