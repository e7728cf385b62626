//! The roofline lesson on the host: sizes, one launcher per kernel, the
//! checks against the CPU references, timing, and the report.
//!
//! Every launch is written once, in [`Roofline::launch`], and used by the
//! check, the timing and `--profile` alike, so a profiled kernel runs the
//! shape the timed one ran.

pub mod fma_ceiling;
pub mod gemm_points;
pub mod model;
pub mod reference;
pub mod report;
pub mod tensor;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig};
use kernels_gpu::roofline::*;
use serde::Serialize;

use crate::check::{Failure, Tolerance, first_mismatch, first_non_finite};
use crate::compare::{Side, Twinned};
use crate::error::{Error, Result};
use crate::fill;
use crate::gpu::{DeviceInfo, Gpu};
use crate::kernels::{KernelId, KernelSet};
use crate::lesson::{self, Capabilities, Outcome, RunOptions};
use crate::ragged::{Edge, RAGGED_TAIL, RaggedPair, shape_1d, time_pair};
use crate::report::Context;
use crate::sizes::{LessonSizes, Stream, grown_side};
use crate::timing::{self, Plan, Timing};
use tensor::{TensorPeak, TensorSizes, TensorTimings};

crate::kernel_ids! {
    /// The sixteen kernels, in table order: the seed's copy, the three
    /// streams the bandwidth ceiling is the best of, the ten placed kernels
    /// and the guarded naive transpose (timed at a round and a ragged side,
    /// not placed), the FMA ceiling. Each with its exported symbol (the CUDA C twin's
    /// name too) and its parameters, as `kernels-gpu` declares them.
    pub enum Kernel {
        /// The seed's bandwidth ceiling, kept as a labelled row: (in, out, n / 4 float4s).
        Copy = "copy_coalesced" (Ptr, Ptr, U64),
        /// Read-only stream: block sums of a . b: (a, b, partials, float4s).
        StreamDot = "stream_dot" (Ptr, Ptr, Ptr, U64),
        /// Copy stream: (in, out, float4s).
        StreamCopy = "stream_copy" (Ptr, Ptr, U64),
        /// Two-reads-one-write stream, out = a + s b: (a, b, out, float4s, s).
        StreamTriad = "stream_triad" (Ptr, Ptr, Ptr, U64, F32),
        /// `out = a + b`.
        VectorAdd = "vector_add" (Ptr, Ptr, Ptr, U64),
        /// `out = a + b` over the stride-32 permutation: (a, b, out, cols, stride).
        VectorAddPermuted = "vector_add_permuted" (Ptr, Ptr, Ptr, U64, U32),
        /// Transpose, straight through global memory: (in, out, side).
        TransposeNaive = "transpose_naive" (Ptr, Ptr, U64),
        /// Transpose through a padded shared tile.
        TransposeTiled = "transpose_tiled" (Ptr, Ptr, U64),
        /// The naive transpose with an edge guard, for any side: the
        /// round-against-ragged pair's 2D kernel (not placed).
        TransposeNaiveGuarded = "transpose_naive_guarded" (Ptr, Ptr, U64),
        /// Matmul, one thread per output, straight from global memory: (a, b, c, dim).
        MatmulNaive = "matmul_naive" (Ptr, Ptr, Ptr, U64),
        /// Matmul through 16 x 16 shared tiles.
        MatmulTiled = "matmul_tiled" (Ptr, Ptr, Ptr, U64),
        /// Sequential-addressing block reduction: (in, partials, n).
        Reduce = "reduce_sequential_addressing" (Ptr, Ptr, U64),
        /// 5-point heat step from global memory: (in, out, side, r).
        StencilGlobal = "heat_step_global" (Ptr, Ptr, U32, F32),
        /// 5-point heat step through a shared apron.
        StencilTiled = "heat_step_tiled" (Ptr, Ptr, U32, F32),
        /// Horner polynomial of degree 256: (in, out, n).
        Polynomial = "polynomial_horner" (Ptr, Ptr, U64),
        /// The FP32 ceiling: (out, iterations).
        FmaPeak = "fma_peak" (Ptr, U32),
    }
}

impl Kernel {
    /// The ten kernels placed on the roofline (all but the ceilings' own
    /// and the guarded transpose, which the ragged pair times).
    pub fn placed() -> impl Iterator<Item = Kernel> {
        Kernel::ALL.iter().copied().filter(|k| {
            !matches!(
                k,
                Kernel::Copy | Kernel::FmaPeak | Kernel::TransposeNaiveGuarded
            ) && !k.is_stream()
        })
    }

    /// The kernels timed at a round and a ragged size side by side: the
    /// vector add at n and n + [`RAGGED_TAIL`], the guarded naive transpose
    /// at side and side - 1.
    pub const RAGGED: [Kernel; 2] = [Kernel::VectorAdd, Kernel::TransposeNaiveGuarded];

    /// The three streams the bandwidth ceiling is the best of.
    pub const STREAMS: [Kernel; 3] = [Kernel::StreamDot, Kernel::StreamCopy, Kernel::StreamTriad];

    /// Whether it is one of [`Kernel::STREAMS`].
    pub fn is_stream(self) -> bool {
        Kernel::STREAMS.contains(&self)
    }

    /// The launch shape a stream gets where one shape is asked for (the
    /// comparison, `--profile`): grid-stride for the dot, whose block sums
    /// want few blocks; one float4 a thread for the others, the faster
    /// shape for a copy on the H200 (docs/shared DEVICE-NOTES, 2026-11-30).
    /// The lesson's own run times every stream in both shapes.
    pub fn default_shape(self) -> Shape {
        if self == Kernel::StreamDot {
            Shape::GridStride
        } else {
            Shape::PerElement
        }
    }

    /// The row label in the table and the JSON `variant`.
    pub fn label(self) -> &'static str {
        match self {
            Kernel::Copy => "copy, coalesced, float4 (the seed's)",
            Kernel::StreamDot => "stream: dot (2 reads)",
            Kernel::StreamCopy => "stream: copy (1 read, 1 write)",
            Kernel::StreamTriad => "stream: triad (2 reads, 1 write)",
            Kernel::VectorAdd => "vector add",
            Kernel::VectorAddPermuted => "vector add, stride 32",
            Kernel::TransposeNaive => "transpose, naive",
            Kernel::TransposeTiled => "transpose, tiled",
            Kernel::TransposeNaiveGuarded => "transpose, naive, edge-guarded",
            Kernel::MatmulNaive => "matmul, naive",
            Kernel::MatmulTiled => "matmul, tiled 16",
            Kernel::Reduce => "block reduction",
            Kernel::StencilGlobal => "stencil, global",
            Kernel::StencilTiled => "stencil, tiled",
            Kernel::Polynomial => "polynomial, 256",
            Kernel::FmaPeak => "fma, 8 chains",
        }
    }
}

/// How a stream kernel's grid covers its buffers (the kernels are written
/// grid-stride, so both shapes run the same code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// One float4 a thread: the grid covers the buffer.
    PerElement,
    /// A grid of [`Sizes::stream_blocks`] blocks (every SM full of threads)
    /// looping over the buffer.
    GridStride,
}

impl Shape {
    /// Both shapes, in table order.
    pub const ALL: [Shape; 2] = [Shape::PerElement, Shape::GridStride];

    /// Its name in the JSON rows (`shape`, and the row key
    /// `<symbol>/<shape>` a baseline matches rows by).
    pub fn key(self) -> &'static str {
        match self {
            Shape::PerElement => "per-element",
            Shape::GridStride => "grid-stride",
        }
    }

    /// The label in the table.
    pub fn label(self) -> &'static str {
        match self {
            Shape::PerElement => "one float4 a thread",
            Shape::GridStride => "grid-stride",
        }
    }
}

/// The problem sizes of one run. The lesson derives them from the device
/// ([`Sizes::for_device`]); tests choose small ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Sizes {
    /// Elements of the vector kernels (copy, adds, reduction, polynomial).
    pub n: usize,
    /// Side of the square transposes.
    #[serde(rename = "transpose_side")]
    pub side: usize,
    /// Side of the square matmuls.
    #[serde(rename = "matmul_side")]
    pub mat_dim: usize,
    /// Side of the square stencil grid.
    pub stencil_side: usize,
    /// Blocks of the FMA ceiling's launch.
    pub fma_blocks: u32,
    /// Iterations of each FMA chain.
    pub fma_iters: i32,
    /// Float4s in each of the bandwidth ceiling's buffers.
    pub stream_n4: usize,
    /// Blocks of a grid-stride stream launch.
    pub stream_blocks: u32,
    /// The tensor-core ceiling's sizes (BF16 from compute capability 8.0,
    /// FP16 on 7.5); `None` where there is none ([`tensor::unavailable`]).
    pub tensor: Option<TensorSizes>,
}

/// The largest float4 count a grid-stride dot may give each thread and
/// still keep every block sum an exact f32: a block sums 256 x 4 x k
/// products of at most 7 x 2 = 14, which must stay below 2^24.
const DOT_EXACT_PER_THREAD: usize = (1 << 24) / (THREADS_PER_BLOCK as usize * 4 * 14);

impl Sizes {
    /// The lesson's sizes on a device: the seed's (4096^2 vectors, 512
    /// matmul, 2048^2 stencil) where its L2 is small enough, grown by powers
    /// of two where it is not (see [`grown_side`]); the FMA ceiling launches
    /// FMA_BLOCKS_PER_SM blocks per SM.
    ///
    /// The bandwidth ceiling's three buffers are STREAM_L2_MULTIPLE times
    /// the L2, rounded up to a power of two (2 GiB on an H200; 1 GiB where
    /// the driver reports no L2 size), halved while one is over an eighth
    /// of the GPU's memory; its grid-stride grid fills
    /// every SM with threads (more blocks only where the dot's exactness
    /// needs them). The tensor-core ceiling's sizes are
    /// [`TensorSizes::for_device`]'s.
    pub fn for_device(info: &DeviceInfo) -> Sizes {
        let side = grown_side(SEED_SIDE, size_of::<f32>(), info.l2_bytes);
        // An L2 the driver reports as 0 is unknown: 1 GiB a buffer then.
        let l2 = if info.l2_bytes == 0 {
            (1 << 30) / STREAM_L2_MULTIPLE
        } else {
            info.l2_bytes
        };
        let mut stream_bytes = (STREAM_L2_MULTIPLE * l2).next_power_of_two();
        while stream_bytes > (info.total_memory_bytes / 8).max(1 << 24) {
            stream_bytes /= 2;
        }
        let stream_n4 = stream_bytes / 16;
        let resident = info.sms.max(1) * (info.max_threads_per_sm / THREADS_PER_BLOCK).max(1);
        Sizes {
            n: side * side,
            side,
            mat_dim: MAT_DIM,
            stencil_side: grown_side(SEED_STENCIL_SIDE, size_of::<f32>(), info.l2_bytes),
            fma_blocks: FMA_BLOCKS_PER_SM * info.sms,
            fma_iters: FMA_ITERS,
            stream_n4,
            stream_blocks: resident.max(Sizes::dot_exact_blocks(stream_n4)),
            tensor: TensorSizes::for_device(info),
        }
    }

    /// The fewest grid-stride blocks that keep the dot's block sums exact
    /// over `n4` float4s (see `DOT_EXACT_PER_THREAD`).
    pub fn dot_exact_blocks(n4: usize) -> u32 {
        n4.div_ceil(DOT_EXACT_PER_THREAD * THREADS_PER_BLOCK as usize) as u32
    }

    /// Blocks of a stream launch in `shape`.
    pub fn stream_grid(&self, shape: Shape) -> u32 {
        match shape {
            Shape::PerElement => self.stream_n4.div_ceil(THREADS_PER_BLOCK as usize) as u32,
            Shape::GridStride => self.stream_blocks,
        }
    }

    /// Small sizes that still exercise every guard (the GPU tests' and
    /// `--quick`'s, for compute-sanitizer): 4099 strided columns and n =
    /// 131,168 (neither a multiple of 256, so the last block is partial), a
    /// 77^2 stencil grid (75 interior cells: 32 and 8 divide neither way),
    /// 96^2 transposes (3 tiles), a 48^3 matmul (3 tiles) and one FMA block
    /// per SM, the seed's 2048 iterations; streams of 32,771 float4s (the
    /// last block partial) and a grid-stride grid of one block per SM; the
    /// tensor-core ceiling's quick sizes ([`TensorSizes::quick`]).
    pub fn quick(info: &DeviceInfo) -> Sizes {
        Sizes {
            n: STRIDE as usize * 4099,
            side: 96,
            mat_dim: 48,
            stencil_side: 77,
            fma_blocks: info.sms,
            fma_iters: SEED_FMA_ITERS,
            stream_n4: 32_771,
            stream_blocks: info.sms.max(1),
            tensor: TensorSizes::quick(info),
        }
    }

    /// Floats of the inputs the placed kernels read: `a` and `b` hold them
    /// (on the host too), followed by the rest of the streams' floats.
    pub fn lesson_len(&self) -> usize {
        self.ragged_n()
            .max(self.side * self.side)
            .max(self.mat_dim * self.mat_dim)
            .max(self.stencil_side * self.stencil_side)
    }

    /// Floats in each of the three shared buffers: enough for every kernel,
    /// the streams included.
    pub fn buffer_len(&self) -> usize {
        self.lesson_len().max(4 * self.stream_n4)
    }

    /// Floats of the partial-sums buffer: the reduction's blocks or the
    /// dot's, whichever is more.
    pub fn partials_len(&self) -> usize {
        self.vector_blocks()
            .max(self.stream_grid(Shape::PerElement) as usize)
            .max(self.stream_blocks as usize)
    }

    /// The vector add's ragged size: n + [`RAGGED_TAIL`] elements.
    pub fn ragged_n(&self) -> usize {
        self.n + RAGGED_TAIL
    }

    /// Elements and launch shape of `kernel` (one of [`Kernel::RAGGED`]) at
    /// `edge`: the vector add over n or n + [`RAGGED_TAIL`] elements; the
    /// guarded transpose over side^2 or (side - 1)^2, its grid rounded up
    /// to whole tiles. `None` for any other kernel.
    pub fn ragged_launch(&self, kernel: Kernel, edge: Edge) -> Option<(usize, LaunchConfig)> {
        let cfg = |grid_dim, block_dim| LaunchConfig {
            grid_dim,
            block_dim,
            shared_mem_bytes: 0,
        };
        match kernel {
            // ANCHOR: vector_add_shape
            Kernel::VectorAdd => {
                let n = match edge {
                    Edge::Round => self.n,
                    Edge::Ragged => self.ragged_n(),
                };
                let blocks = n.div_ceil(THREADS_PER_BLOCK as usize) as u32;
                Some((n, cfg((blocks, 1, 1), (THREADS_PER_BLOCK, 1, 1))))
            }
            // ANCHOR_END: vector_add_shape
            Kernel::TransposeNaiveGuarded => {
                let side = self.ragged_side(edge);
                let tiles = side.div_ceil(TRANSPOSE_TILE as usize) as u32;
                Some((
                    side * side,
                    cfg((tiles, tiles, 1), (TRANSPOSE_TILE, TRANSPOSE_TILE, 1)),
                ))
            }
            _ => None,
        }
    }

    /// The transpose side at `edge`: side, or side - 1.
    pub fn ragged_side(&self, edge: Edge) -> usize {
        match edge {
            Edge::Round => self.side,
            Edge::Ragged => self.side.saturating_sub(1),
        }
    }

    /// Blocks of a one-thread-one-element launch over `n` elements.
    pub fn vector_blocks(&self) -> usize {
        self.n.div_ceil(THREADS_PER_BLOCK as usize)
    }

    /// Threads of the FMA ceiling's launch (one output float each).
    pub fn fma_threads(&self) -> usize {
        self.fma_blocks as usize * THREADS_PER_BLOCK as usize
    }

    /// Interior cells of the stencil grid, (S - 2)^2.
    pub fn stencil_interior(&self) -> usize {
        let inner = self.stencil_side.saturating_sub(2);
        inner * inner
    }

    /// The stencil grid in blocks (x, y), covering the interior. It does not
    /// divide evenly, which is why both stencils guard their stores.
    pub fn stencil_grid(&self) -> (u32, u32) {
        let inner = self.stencil_side.saturating_sub(2);
        (
            inner.div_ceil(STENCIL_BLOCK_X as usize) as u32,
            inner.div_ceil(STENCIL_BLOCK_Y as usize) as u32,
        )
    }

    /// Device bytes the lesson allocates: three buffers and the partials,
    /// and the tensor-core ceiling's ([`TensorSizes::device_bytes`]) where
    /// it has one.
    pub fn device_bytes(&self) -> usize {
        (3 * self.buffer_len() + self.partials_len()) * 4
            + self.tensor.map_or(0, |t| t.device_bytes())
    }

    /// Checks the relations the kernels' launch assumptions need.
    ///
    /// # Errors
    /// [`Error::Size`] naming the relation that fails.
    pub fn validate(&self) -> Result<()> {
        let fail = |msg: String| Err(Error::Size(msg));
        if !self.side.is_multiple_of(TRANSPOSE_TILE as usize) {
            return fail(format!(
                "transpose side {} is not a multiple of {TRANSPOSE_TILE}: the transposes have no edge guard",
                self.side
            ));
        }
        if self.mat_dim == 0 || !self.mat_dim.is_multiple_of(MAT_TILE as usize) {
            return fail(format!(
                "matmul side {} is not a positive multiple of {MAT_TILE}: the matmuls have no edge guard, and matmul_naive tells the compiler so (assume_whole_tiles)",
                self.mat_dim
            ));
        }
        if !self.n.is_multiple_of(STRIDE as usize) {
            return fail(format!(
                "n = {} is not a multiple of the stride {STRIDE}: the strided add's grid would not be a permutation",
                self.n
            ));
        }
        if !self.n.is_multiple_of(4) {
            return fail(format!(
                "n = {} is not a multiple of 4: the copy ceiling moves float4s",
                self.n
            ));
        }
        if self.side < 2 {
            return fail(format!(
                "transpose side {} leaves no ragged side (side - 1) to time",
                self.side
            ));
        }
        if self.stencil_side < 3 {
            return fail(format!(
                "stencil side {} has no interior",
                self.stencil_side
            ));
        }
        if self.ragged_n() > u32::MAX as usize || self.vector_blocks() > i32::MAX as usize {
            return fail(format!(
                "n = {} is past what one launch's grid and the index fill cover",
                self.n
            ));
        }
        if self.stream_n4 == 0 || self.stream_blocks == 0 {
            return fail(
                "the bandwidth ceiling's streams need at least one float4 and one block".into(),
            );
        }
        if self.stream_grid(Shape::PerElement) as usize > i32::MAX as usize {
            return fail(format!(
                "{} float4s a stream buffer is past what one launch's grid covers",
                self.stream_n4
            ));
        }
        if self.stream_blocks < Sizes::dot_exact_blocks(self.stream_n4) {
            return fail(format!(
                "{} grid-stride blocks over {} float4s: a dot block sum could pass 2^24 and round; it needs {}",
                self.stream_blocks,
                self.stream_n4,
                Sizes::dot_exact_blocks(self.stream_n4)
            ));
        }
        if self.fma_threads() > self.buffer_len() {
            return fail(format!(
                "{} FMA threads ({} blocks of {THREADS_PER_BLOCK}) write more floats than the {}-float output buffer holds",
                self.fma_threads(),
                self.fma_blocks,
                self.buffer_len()
            ));
        }
        if let Some(t) = &self.tensor {
            t.validate()?;
        }
        Ok(())
    }
}

impl LessonSizes for Sizes {
    fn for_gpu(info: &crate::gpu::DeviceInfo, quick: bool) -> Result<Sizes> {
        let sizes = if quick {
            Sizes::quick(info)
        } else {
            Sizes::for_device(info)
        };
        sizes.validate()?;
        Ok(sizes)
    }
    /// The vectors, the transposes' matrices and the stencil's grid are
    /// streamed; the 512^3 matmul is not (it is the compute-bound kernel
    /// whose 3 MiB sit in L2 by design, as in the seed).
    fn streams(&self) -> Vec<Stream> {
        vec![
            Stream::of::<[f32; 4]>("bandwidth-ceiling streams (a, b, out)", self.stream_n4),
            Stream::of::<f32>("vectors (a, b, out)", self.n),
            Stream::of::<f32>("transposes (in, out)", self.side * self.side),
            Stream::of::<f32>(
                "stencil grid (in, out)",
                self.stencil_side * self.stencil_side,
            ),
        ]
    }

    fn device_bytes(&self) -> usize {
        Sizes::device_bytes(self)
    }
}

/// The launch shape of `kernel` at `sizes`: the one every path uses.
pub fn launch_config(kernel: Kernel, sizes: &Sizes) -> LaunchConfig {
    let cfg = |grid_dim: (u32, u32, u32), block_dim: (u32, u32, u32)| LaunchConfig {
        grid_dim,
        block_dim,
        shared_mem_bytes: 0,
    };
    let vector = (sizes.vector_blocks() as u32, 1, 1);
    let block = (THREADS_PER_BLOCK, 1, 1);
    match kernel {
        Kernel::StreamDot | Kernel::StreamCopy | Kernel::StreamTriad => {
            stream_config(kernel.default_shape(), sizes)
        }
        Kernel::Copy => cfg(
            (
                (sizes.n / 4).div_ceil(THREADS_PER_BLOCK as usize) as u32,
                1,
                1,
            ),
            block,
        ),
        Kernel::VectorAdd | Kernel::Reduce | Kernel::Polynomial => cfg(vector, block),
        Kernel::VectorAddPermuted => {
            let cols = sizes.n / STRIDE as usize;
            cfg(
                (cols.div_ceil(THREADS_PER_BLOCK as usize) as u32, STRIDE, 1),
                block,
            )
        }
        Kernel::TransposeNaive | Kernel::TransposeTiled | Kernel::TransposeNaiveGuarded => {
            let tiles = (sizes.side / TRANSPOSE_TILE as usize) as u32;
            cfg((tiles, tiles, 1), (TRANSPOSE_TILE, TRANSPOSE_TILE, 1))
        }
        Kernel::MatmulNaive | Kernel::MatmulTiled => {
            let tiles = (sizes.mat_dim / MAT_TILE as usize) as u32;
            cfg((tiles, tiles, 1), (MAT_TILE, MAT_TILE, 1))
        }
        Kernel::StencilGlobal | Kernel::StencilTiled => {
            let (x, y) = sizes.stencil_grid();
            cfg((x, y, 1), (STENCIL_BLOCK_X, STENCIL_BLOCK_Y, 1))
        }
        Kernel::FmaPeak => cfg((sizes.fma_blocks, 1, 1), block),
    }
}

/// The launch shape of a stream kernel in `shape`: blocks of
/// THREADS_PER_BLOCK threads.
pub fn stream_config(shape: Shape, sizes: &Sizes) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (sizes.stream_grid(shape), 1, 1),
        block_dim: (THREADS_PER_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Which device buffer a kernel writes.
#[derive(Clone, Copy)]
enum Output {
    /// The shared output buffer.
    Out,
    /// The reduction's one float per block.
    Partials,
}

/// A check's verdict and the output it read.
pub struct Checked {
    /// Every failed check (empty when the kernel is right).
    pub failures: Vec<Failure>,
    /// What the kernel wrote, as far as the check read it.
    pub output: Vec<f32>,
}

/// Floats a stream buffer is filled, checked and uploaded in at a time
/// (128 MiB): the host never holds a whole 2 GiB buffer.
const CHUNK: usize = 1 << 25;

/// A 32-bit FNV-1a hash over a chunk's words: what two implementations' stream
/// outputs are compared by, one per chunk (both already matched the CPU
/// reference exactly, so a different digest means different zero signs).
pub fn digest(chunk: &[f32]) -> u32 {
    chunk.iter().fold(0x811c_9dc5, |h: u32, v| {
        (h ^ v.to_bits()).wrapping_mul(0x0100_0193)
    })
}

/// The CUDA C twins of the roofline kernels, in this file's own words.
pub const CUDA_C_SOURCE: &str = include_str!("roofline.cu");

/// The lesson's constants as `#define`s, prepended to [`CUDA_C_SOURCE`] so
/// both languages compile from the same numbers. Floats are written in
/// Rust's shortest round-trip form with an `f` suffix, so each parses to
/// the same f32.
pub fn cuda_c_defines() -> String {
    let ints: [(&str, i64); 15] = [
        ("THREADS_PER_BLOCK", THREADS_PER_BLOCK as i64),
        ("TRANSPOSE_TILE", TRANSPOSE_TILE as i64),
        ("MAT_TILE", MAT_TILE as i64),
        ("STENCIL_BLOCK_X", STENCIL_BLOCK_X as i64),
        ("STENCIL_BLOCK_Y", STENCIL_BLOCK_Y as i64),
        ("HALO", HALO as i64),
        ("STENCIL_SHARED_X", STENCIL_SHARED_X as i64),
        ("STENCIL_SHARED_Y", STENCIL_SHARED_Y as i64),
        ("POLY_DEGREE", POLY_DEGREE as i64),
        ("FMA_CHAINS", FMA_CHAINS as i64),
        ("FMA_UNROLL", FMA_UNROLL as i64),
        ("STRIDE", STRIDE as i64),
        ("FMA_ITERS", FMA_ITERS as i64),
        ("SEED_FMA_ITERS", SEED_FMA_ITERS as i64),
        ("MAT_DIM", MAT_DIM as i64),
    ];
    let floats: [(&str, f32); 6] = [
        ("STENCIL_COLD", STENCIL_COLD),
        ("POLY_SCALE", POLY_SCALE),
        ("POLY_ADD", POLY_ADD),
        ("FMA_MUL", FMA_MUL),
        ("FMA_ADD", FMA_ADD),
        ("TRIAD_SCALAR", TRIAD_SCALAR),
    ];
    let mut out = String::new();
    for (name, v) in ints {
        out.push_str(&format!("#define {name} {v}\n"));
    }
    for (name, v) in floats {
        out.push_str(&format!("#define {name} {v:?}f\n"));
    }
    out
}

/// The lesson's buffers on one GPU, at one set of sizes.
pub struct Roofline<'g> {
    gpu: &'g Gpu,
    sizes: Sizes,
    kernels: KernelSet<Kernel>,
    a: CudaSlice<f32>,
    b: CudaSlice<f32>,
    out: CudaSlice<f32>,
    partials: CudaSlice<f32>,
    host_a: Vec<f32>,
    host_b: Vec<f32>,
}

impl<'g> Roofline<'g> {
    /// Checks the sizes and the free memory, allocates the buffers and fills
    /// the inputs with [`reference::fill_a`] and [`reference::fill_b`] (the
    /// host keeps the placed kernels' part of them; the streams' rest is
    /// uploaded a chunk at a time).
    ///
    /// # Errors
    /// [`Error::Size`] for sizes the kernels cannot run; [`Error::OutOfMemory`]
    /// before any allocation where the GPU is too small; driver errors.
    pub fn new(gpu: &'g Gpu, sizes: Sizes) -> Result<Self> {
        sizes.validate()?;
        gpu.require_free_memory(sizes.device_bytes(), "the roofline lesson's buffers")?;
        let kernels = KernelSet::new(gpu)?;
        let len = sizes.buffer_len();
        let lesson = sizes.lesson_len();
        let host_a = fill::filled(0..lesson, reference::fill_a);
        let host_b = fill::filled(0..lesson, reference::fill_b);
        let mut a = gpu.alloc_f32(len)?;
        let mut b = gpu.alloc_f32(len)?;
        gpu.upload(&host_a, &mut a.slice_mut(..lesson))?;
        gpu.upload(&host_b, &mut b.slice_mut(..lesson))?;
        for start in (lesson..len).step_by(CHUNK) {
            let end = (start + CHUNK).min(len);
            gpu.upload(
                &fill::filled(start..end, reference::fill_a),
                &mut a.slice_mut(start..end),
            )?;
            gpu.upload(
                &fill::filled(start..end, reference::fill_b),
                &mut b.slice_mut(start..end),
            )?;
        }
        Ok(Roofline {
            gpu,
            sizes,
            kernels,
            a,
            b,
            out: gpu.alloc_f32(len)?,
            partials: gpu.alloc_f32(sizes.partials_len())?,
            host_a,
            host_b,
        })
    }

    /// The sizes every launch uses (validated when the lesson was built;
    /// fixed for its life, since the unsafe launches rely on them).
    pub fn sizes(&self) -> Sizes {
        self.sizes
    }

    /// The function `kernel` launches on `side`.
    pub fn function(&self, kernel: Kernel, side: Side) -> Option<&CudaFunction> {
        self.kernels.get(kernel, side)
    }

    /// Launches `kernel` once on the lesson's buffers (asynchronously), a
    /// stream in its [`Kernel::default_shape`].
    ///
    /// # Errors
    /// A launch the driver refuses, charged to the kernel.
    pub fn launch(&mut self, kernel: Kernel) -> Result<()> {
        self.launch_shaped(kernel, kernel.default_shape())
    }

    /// As [`Roofline::launch`], a stream kernel in `shape` (the shape is
    /// ignored for the other kernels, which have one launch shape each).
    ///
    /// # Errors
    /// A launch the driver refuses, charged to the kernel.
    pub fn launch_shaped(&mut self, kernel: Kernel, shape: Shape) -> Result<()> {
        let s = self.sizes;
        let cfg = if kernel.is_stream() {
            stream_config(shape, &s)
        } else {
            launch_config(kernel, &s)
        };
        let Roofline {
            gpu,
            kernels,
            a,
            b,
            out,
            partials,
            ..
        } = self;
        let n = s.n as u64;
        let n4 = (s.n / 4) as u64;
        let cols = (s.n / STRIDE as usize) as u64;
        let side = s.side as u64;
        let d = s.mat_dim as u64;
        let grid = s.stencil_side as i32;
        let (gpu, a, b): (&Gpu, &CudaSlice<f32>, &CudaSlice<f32>) = (gpu, a, b);
        let launch = kernels.launch(gpu, kernel);
        let s4 = s.stream_n4 as u64;
        let launch = match kernel {
            Kernel::StreamDot => launch.input(a).input(b).output(partials).scalar(s4),
            Kernel::StreamCopy => launch.input(a).output(out).scalar(s4),
            Kernel::StreamTriad => launch
                .input(a)
                .input(b)
                .output(out)
                .scalar(s4)
                .scalar(TRIAD_SCALAR),
            Kernel::Copy => launch.input(a).output(out).scalar(n4),
            Kernel::VectorAdd => launch.input(a).input(b).output(out).scalar(n),
            Kernel::VectorAddPermuted => launch
                .input(a)
                .input(b)
                .output(out)
                .scalar(cols)
                .scalar(STRIDE),
            Kernel::TransposeNaive | Kernel::TransposeTiled | Kernel::TransposeNaiveGuarded => {
                launch.input(a).output(out).scalar(side)
            }
            Kernel::MatmulNaive | Kernel::MatmulTiled => {
                launch.input(a).input(b).output(out).scalar(d)
            }
            Kernel::Reduce => launch.input(a).output(partials).scalar(n),
            Kernel::StencilGlobal | Kernel::StencilTiled => {
                launch.input(a).output(out).scalar(grid).scalar(STENCIL_R)
            }
            Kernel::Polynomial => launch.input(a).output(out).scalar(n),
            Kernel::FmaPeak => launch.output(out).scalar(s.fma_iters),
        };
        // SAFETY: `Sizes::validate` plus `launch_config` give each kernel
        // the shape its launch assumption names, within buffers of
        // `buffer_len()` floats (4 x stream_n4 at least) and `partials_len()`
        // partials (one per block of either stream shape); the argument
        // kinds are checked against the declared parameters.
        unsafe { launch.launch(cfg) }
    }

    /// Runs `kernel` once on poisoned (or, for the stencils, zeroed) output
    /// and compares the result with its CPU reference. Returns every failed
    /// check (empty when the kernel is right).
    ///
    /// Tolerances: exact wherever the arithmetic is (the fills keep every
    /// sum and dot product an exact f32; copy and transpose compare bits;
    /// the Horner chain runs the same correctly rounded FMAs in the same
    /// order on both sides); relative 1e-5 for the stencil, the seed's
    /// tolerance (with FMAs and these integer inputs the kernels match the
    /// f64 reference exactly, but a compiler that rounds `r * (...)` before
    /// the add is a legal build of the same kernel and lands within it). The
    /// FMA ceiling is exact too (the seed allowed 1%, which would pass a
    /// loop that skipped 20 of its 2,048 steps while its FLOPs count all):
    /// the reference runs the same f32 FMAs and the same chain sum.
    ///
    /// # Errors
    /// A kernel fault or driver error (a wrong answer is a [`Failure`]).
    pub fn check(&mut self, kernel: Kernel) -> Result<Vec<Failure>> {
        Ok(self.check_output(kernel)?.failures)
    }

    /// As [`Roofline::check`], also returning what the kernel wrote (the
    /// part the check read), so two implementations can be compared bit for
    /// bit.
    pub fn check_output(&mut self, kernel: Kernel) -> Result<Checked> {
        let s = self.sizes;
        let sym = kernel.symbol();
        let fail = |detail: String| Failure {
            kernel: sym,
            detail,
        };
        let mut failures = Vec::new();
        let output = match kernel {
            Kernel::StreamDot | Kernel::StreamCopy | Kernel::StreamTriad => {
                let mut output = Vec::new();
                for shape in Shape::ALL {
                    let (found, digests) = self.check_stream(kernel, shape)?;
                    failures.extend(found.map(|m| fail(format!("{} launch: {m}", shape.label()))));
                    if shape == kernel.default_shape() {
                        output = digests;
                    }
                }
                output
            }
            Kernel::Copy | Kernel::VectorAdd | Kernel::VectorAddPermuted => {
                let got = self.run_poisoned(kernel, s.n)?;
                let want = match kernel {
                    Kernel::Copy => self.host_a[..s.n].to_vec(),
                    _ => reference::vector_add(&self.host_a[..s.n], &self.host_b[..s.n]),
                };
                let bad = if kernel == Kernel::Copy {
                    first_mismatch(&got, &want, Tolerance::Bits)
                } else {
                    first_mismatch(&got, &want, Tolerance::Exact)
                };
                if let Some(m) = bad {
                    let hint = if kernel == Kernel::VectorAddPermuted {
                        "; the 2D grid did not visit every index once"
                    } else {
                        ""
                    };
                    failures.push(fail(format!("{m}{hint}")));
                }
                got
            }
            Kernel::TransposeNaive | Kernel::TransposeTiled | Kernel::TransposeNaiveGuarded => {
                let len = s.side * s.side;
                let input: Vec<f32> = (0..len).map(reference::fill_index_bits).collect();
                self.gpu.upload(&input, &mut self.a.slice_mut(..len))?;
                // A fault returns here: the context is unusable then, and the
                // error must name the kernel, not the restoring copy.
                let got = self.run_poisoned(kernel, len)?;
                self.gpu
                    .upload(&self.host_a[..len], &mut self.a.slice_mut(..len))?;
                let want = reference::transpose(&input, s.side);
                if let Some(m) = first_mismatch(&got, &want, Tolerance::Bits) {
                    failures.push(fail(m.in_2d(s.side).to_string()));
                }
                got
            }
            Kernel::MatmulNaive | Kernel::MatmulTiled => {
                // Inputs of its own, small signed integers in a hashed order
                // (every dot product exact), then restores the fills.
                let len = s.mat_dim * s.mat_dim;
                let (ca, cb): (Vec<f32>, Vec<f32>) = (0..len)
                    .map(|i| {
                        (
                            reference::fill_scrambled(i, 1),
                            reference::fill_scrambled(i, 2),
                        )
                    })
                    .unzip();
                self.gpu.upload(&ca, &mut self.a.slice_mut(..len))?;
                self.gpu.upload(&cb, &mut self.b.slice_mut(..len))?;
                let got = self.run_poisoned(kernel, len)?;
                self.gpu
                    .upload(&self.host_a[..len], &mut self.a.slice_mut(..len))?;
                self.gpu
                    .upload(&self.host_b[..len], &mut self.b.slice_mut(..len))?;
                let want = reference::matmul(&ca, &cb, s.mat_dim);
                if let Some(m) = first_mismatch(&got, &want, Tolerance::Exact) {
                    failures.push(fail(m.in_2d(s.mat_dim).to_string()));
                }
                got
            }
            Kernel::Reduce => {
                // Each block's sum is exact in f32 (at most 256 x 7), so every
                // block is compared exactly: stronger than the seed's check of
                // the total, and it names the bad block.
                self.gpu.fill_bytes(&mut self.partials, 0xFF)?;
                let got = self.run_and_read(kernel, Output::Partials, s.vector_blocks())?;
                let want: Vec<f32> =
                    reference::block_sums(&self.host_a[..s.n], THREADS_PER_BLOCK as usize)
                        .into_iter()
                        .map(|x| x as f32)
                        .collect();
                if let Some(m) = first_mismatch(&got, &want, Tolerance::Exact) {
                    failures.push(fail(format!("block sum {m}")));
                }
                got
            }
            Kernel::StencilGlobal | Kernel::StencilTiled => {
                // Zeroed, not poisoned: neither kernel writes the boundary
                // ring, which the reference leaves at 0. The guard after the
                // grid is poisoned all the same.
                let len = s.stencil_side * s.stencil_side;
                self.gpu.poison_output(&mut self.out, len)?;
                self.gpu.fill_bytes(&mut self.out.slice_mut(..len), 0)?;
                let got = self.run_and_read(kernel, Output::Out, len)?;
                let want = reference::heat_step(&self.host_a[..len], s.stencil_side, STENCIL_R);
                if let Some(m) = first_mismatch(&got, &want, Tolerance::Relative(1e-5)) {
                    failures.push(fail(m.in_2d(s.stencil_side).to_string()));
                }
                got
            }
            Kernel::Polynomial => {
                // The seed checks a prefix against the CPU chain and scans the
                // rest for non-finite values, since the full reference is
                // billions of FMAs. Here the prefix is checked the seed's way,
                // and the rest exactly too: the input has only 7 distinct
                // values, so the reference is computed once per value.
                let got = self.run_poisoned(kernel, s.n)?;
                let prefix = POLY_CHECK.min(s.n);
                let want = reference::polynomial(&self.host_a[..prefix]);
                if let Some(m) = first_mismatch(&got[..prefix], &want, Tolerance::Exact) {
                    failures.push(fail(format!(
                        "{m}; the chain did not run the {POLY_DEGREE} steps the FLOP count assumes"
                    )));
                }
                if let Some(i) = first_non_finite(&got) {
                    failures.push(fail(format!(
                        "element {i} is unwritten or not finite: {:e}",
                        got[i]
                    )));
                }
                let want_all = reference::polynomial_by_value(&self.host_a[..s.n]);
                if let Some(m) = first_mismatch(&got, &want_all, Tolerance::Exact) {
                    failures.push(fail(format!("{m} (beyond the prefix)")));
                }
                got
            }
            Kernel::FmaPeak => {
                let threads = s.fma_threads();
                let got = self.run_poisoned(kernel, threads)?;
                let want = vec![reference::fma_sum(s.fma_iters); threads];
                if let Some(m) = first_mismatch(&got, &want, Tolerance::Exact) {
                    failures.push(fail(format!(
                        "{m}; the loop did not run the {} iterations the FLOP count assumes",
                        s.fma_iters
                    )));
                }
                got
            }
        };
        Ok(Checked { failures, output })
    }

    /// Checks one stream kernel in one shape against its reference, a chunk
    /// of the output at a time (the buffers are up to 2 GiB): the dot's
    /// block sums exactly (integer inputs, sums below 2^24), the copy bit
    /// for bit, the triad exactly. Returns the first mismatch and what the
    /// comparison of two implementations reads: the block sums' bits for the
    /// dot, one [`digest`] per chunk for the others.
    fn check_stream(
        &mut self,
        kernel: Kernel,
        shape: Shape,
    ) -> Result<(Option<crate::check::Mismatch>, Vec<f32>)> {
        let s = self.sizes;
        let len = 4 * s.stream_n4;
        if kernel == Kernel::StreamDot {
            let blocks = s.stream_grid(shape) as usize;
            self.gpu.fill_bytes(&mut self.partials, 0xFF)?;
            self.launch_shaped(kernel, shape)?;
            self.gpu.sync_after(kernel.symbol())?;
            let got = self
                .gpu
                .read_output(&self.partials, blocks, kernel.symbol())?;
            let want =
                reference::stream_dot_partials(s.stream_n4, blocks, THREADS_PER_BLOCK as usize);
            return Ok((first_mismatch(&got, &want, Tolerance::Exact), got));
        }
        self.gpu.poison_output(&mut self.out, len)?;
        self.launch_shaped(kernel, shape)?;
        self.gpu.sync_after(kernel.symbol())?;
        // The guard after the streams' floats (inside `out` where the placed
        // kernels' buffers are longer).
        self.gpu
            .check_poison_after(&self.out, len, kernel.symbol())?;
        let mut digests = Vec::new();
        let mut got = vec![0.0f32; CHUNK.min(len)];
        for start in (0..len).step_by(CHUNK) {
            let end = (start + CHUNK).min(len);
            let got = &mut got[..end - start];
            self.gpu.download_from(&self.out, start, got)?;
            let bad = if kernel == Kernel::StreamCopy {
                let want = fill::filled(start..end, reference::fill_a);
                first_mismatch(got, &want, Tolerance::Bits)
            } else {
                let want = fill::filled(start..end, reference::triad);
                first_mismatch(got, &want, Tolerance::Exact)
            };
            if let Some(mut m) = bad {
                m.index += start;
                return Ok((Some(m), digests));
            }
            digests.push(f32::from_bits(digest(got)));
        }
        Ok((None, digests))
    }

    /// Poisons the first `len` floats of the output and a guard after them,
    /// runs `kernel` once and returns those floats; a write into the guard
    /// (past `len`, inside the shared buffer) is an error.
    fn run_poisoned(&mut self, kernel: Kernel, len: usize) -> Result<Vec<f32>> {
        self.gpu.poison_output(&mut self.out, len)?;
        self.run_and_read(kernel, Output::Out, len)
    }

    /// Runs `kernel` once, waits for it (a fault is charged to it) and
    /// returns the first `len` floats of `output`, whose guard after them
    /// the caller poisoned ([`Gpu::poison_output`]).
    fn run_and_read(&mut self, kernel: Kernel, output: Output, len: usize) -> Result<Vec<f32>> {
        self.launch(kernel)?;
        self.gpu.sync_after(kernel.symbol())?;
        let buffer = match output {
            Output::Out => &self.out,
            Output::Partials => &self.partials,
        };
        self.gpu.read_output(buffer, len, kernel.symbol())
    }

    /// Times `kernel` with `plan` (see [`timing::time_kernel`]), a stream
    /// in its default shape.
    pub fn time(&mut self, kernel: Kernel, plan: Plan) -> Result<Timing> {
        self.time_shaped(kernel, kernel.default_shape(), plan)
    }

    /// Times `kernel` launched in `shape` with `plan`.
    pub fn time_shaped(&mut self, kernel: Kernel, shape: Shape, plan: Plan) -> Result<Timing> {
        let gpu = self.gpu;
        timing::time_kernel(gpu, kernel.symbol(), plan, || {
            self.launch_shaped(kernel, shape)
        })
    }

    /// Times the driver's own device-to-device copy (`cuMemcpyDtoDAsync`)
    /// of the copy kernel's n floats: a cross-check on the copy ceiling that
    /// no kernel of ours wrote.
    pub fn time_driver_copy(&mut self, plan: Plan) -> Result<Timing> {
        let n = self.sizes.n;
        let Roofline { gpu, a, out, .. } = self;
        timing::time_kernel(gpu, "cuMemcpyDtoDAsync", plan, || {
            gpu.stream
                .memcpy_dtod(&a.slice(..n), &mut out.slice_mut(..n))
                .map_err(|source| Error::Driver {
                    call: "cuMemcpyDtoDAsync",
                    source,
                })
        })
    }

    /// Launches `kernel` (one of [`Kernel::RAGGED`]) once at `edge`'s size
    /// ([`Sizes::ragged_launch`]).
    ///
    /// # Errors
    /// [`Error::Bug`] for a kernel not in [`Kernel::RAGGED`]; a launch the
    /// driver refuses, charged to the kernel.
    pub fn launch_at(&mut self, kernel: Kernel, edge: Edge) -> Result<()> {
        let s = self.sizes;
        let Some((_, cfg)) = s.ragged_launch(kernel, edge) else {
            return Err(Error::Bug(format!(
                "{} has no round-against-ragged launch",
                kernel.symbol()
            )));
        };
        let Roofline {
            gpu,
            kernels,
            a,
            b,
            out,
            ..
        } = self;
        let (gpu, a, b): (&Gpu, &CudaSlice<f32>, &CudaSlice<f32>) = (gpu, a, b);
        // ANCHOR: vector_add_launch
        let launch = kernels.launch(gpu, kernel);
        let launch = match kernel {
            Kernel::VectorAdd => {
                let n = match edge {
                    Edge::Round => s.n,
                    Edge::Ragged => s.ragged_n(),
                };
                launch.input(a).input(b).output(out).scalar(n as u64)
            }
            _ => launch
                .input(a)
                .output(out)
                .scalar(s.ragged_side(edge) as u64),
        };
        // SAFETY: the buffers hold `lesson_len()` floats, which covers
        // n + RAGGED_TAIL and side^2 (`Sizes::lesson_len`); the grid covers
        // every element (`Sizes::ragged_launch`), and the guarded transpose
        // and the add check their bounds.
        unsafe { launch.launch(cfg) }
        // ANCHOR_END: vector_add_launch
    }

    /// Checks `kernel` (one of [`Kernel::RAGGED`]) at `edge`'s size against
    /// its reference, every element, and the guard after them: the add
    /// exactly over the fills, the transpose bit for bit over the
    /// index-bits input (then the fills are restored). Returns every
    /// failure.
    ///
    /// # Errors
    /// As [`Roofline::launch_at`]; a fault charged to the kernel.
    pub fn check_at(&mut self, kernel: Kernel, edge: Edge) -> Result<Vec<Failure>> {
        let s = self.sizes;
        let Some((len, _)) = s.ragged_launch(kernel, edge) else {
            return Err(Error::Bug(format!(
                "{} has no round-against-ragged launch",
                kernel.symbol()
            )));
        };
        let sym = kernel.symbol();
        let what = |m: String| Failure {
            kernel: sym,
            detail: format!("{} size, {len} elements: {m}", edge.key()),
        };
        // ANCHOR: vector_add_check
        if kernel == Kernel::VectorAdd {
            self.gpu.poison_output(&mut self.out, len)?;
            self.launch_at(kernel, edge)?;
            self.gpu.sync_after(sym)?;
            let got = self.gpu.read_output(&self.out, len, sym)?;
            let want = reference::vector_add(&self.host_a[..len], &self.host_b[..len]);
            return Ok(first_mismatch(&got, &want, Tolerance::Exact)
                .map(|m| what(m.to_string()))
                .into_iter()
                .collect());
        }
        // ANCHOR_END: vector_add_check
        let side = s.ragged_side(edge);
        let input: Vec<f32> = (0..len).map(reference::fill_index_bits).collect();
        self.gpu.upload(&input, &mut self.a.slice_mut(..len))?;
        self.gpu.poison_output(&mut self.out, len)?;
        self.launch_at(kernel, edge)?;
        self.gpu.sync_after(sym)?;
        let got = self.gpu.read_output(&self.out, len, sym)?;
        self.gpu
            .upload(&self.host_a[..len], &mut self.a.slice_mut(..len))?;
        let want = reference::transpose(&input, side);
        Ok(first_mismatch(&got, &want, Tolerance::Bits)
            .map(|m| what(m.in_2d(side).to_string()))
            .into_iter()
            .collect())
    }

    /// Times `kernel` (one of [`Kernel::RAGGED`]) at `edge`'s size with
    /// `plan`.
    ///
    /// # Errors
    /// As [`Roofline::launch_at`].
    pub fn time_at(&mut self, kernel: Kernel, edge: Edge, plan: Plan) -> Result<Timing> {
        let gpu = self.gpu;
        timing::time_kernel(gpu, kernel.symbol(), plan, || self.launch_at(kernel, edge))
    }

    /// Both sizes of `kernel` (one of [`Kernel::RAGGED`]) timed side by
    /// side ([`time_pair`]), as a [`RaggedPair`].
    ///
    /// # Errors
    /// As [`Roofline::launch_at`].
    pub fn time_ragged(&mut self, kernel: Kernel, plan: Plan) -> Result<RaggedPair> {
        let s = self.sizes;
        let (round, ragged) = time_pair(|edge| self.time_at(kernel, edge, plan))?;
        let elems = |edge| s.ragged_launch(kernel, edge).map_or(0, |(n, _)| n);
        let (round_shape, ragged_shape) = if kernel == Kernel::VectorAdd {
            let r = shape_1d(s.n);
            (r.clone(), format!("{r} + {RAGGED_TAIL}"))
        } else {
            (
                format!("{}^2", s.ragged_side(Edge::Round)),
                format!("{}^2", s.ragged_side(Edge::Ragged)),
            )
        };
        Ok(RaggedPair {
            what: kernel.label().to_string(),
            stem: kernel.symbol().to_string(),
            round_elems: elems(Edge::Round),
            ragged_elems: elems(Edge::Ragged),
            round_shape,
            ragged_shape,
            round,
            ragged,
        })
    }

    /// `--profile`: one launch of each kernel in table order, then a sync;
    /// no checks, no timing. What a profiler pass needs and nothing else.
    pub fn profile(&mut self) -> Result<()> {
        for &kernel in Kernel::ALL {
            self.launch(kernel)?;
            self.gpu.sync_after(kernel.symbol())?;
        }
        Ok(())
    }
}

/// One kernel's timing.
#[derive(Debug, Clone)]
pub struct Measured {
    /// The kernel.
    pub kernel: Kernel,
    /// The launch shape (a stream's; [`Kernel::default_shape`] otherwise).
    pub shape: Shape,
    /// Its per-launch timing.
    pub timing: Timing,
}

/// What a passed run measured: every kernel's timing in table order (each
/// stream in both shapes), and the driver's device-to-device copy of the
/// seed's copy's bytes.
pub struct Timings {
    /// Every kernel's timing, in [`KernelId::ALL`] order; each stream twice,
    /// in [`Shape::ALL`] order.
    pub measured: Vec<Measured>,
    /// The driver's `cuMemcpyDtoDAsync` of the same bytes as the copy.
    pub driver_copy: Timing,
    /// The [`Kernel::RAGGED`] kernels, each at a round and a ragged size.
    pub ragged: Vec<RaggedPair>,
    /// The tensor-core side's timings, or why the run has none.
    pub tensor: std::result::Result<TensorTimings, String>,
}

/// Checks every kernel (the tensor-core chains and cuBLAS's GEMM of their
/// precision too, where `tensor` has them), then, only if all are right, times every kernel.
/// A failure does not stop the checks: every failure is collected; a fault
/// stops them (the context is unusable), with what was found before it.
/// `progress` advances once per check and per timing.
///
/// # Errors
/// Driver errors and kernel faults during the timings.
pub fn run(
    lesson: &mut Roofline<'_>,
    tensor: &mut std::result::Result<TensorPeak<'_>, String>,
    plan: Plan,
    progress: &indicatif::ProgressBar,
) -> Result<Outcome<Timings>> {
    let tensor_steps = tensor.as_ref().map_or(0, |t| 1 + t.timing_steps());
    progress.set_length(
        2 * Kernel::ALL.len() as u64 - 1
            + Kernel::STREAMS.len() as u64
            + 1
            + 3 * Kernel::RAGGED.len() as u64
            + tensor_steps,
    );
    let mut failures = Vec::new();
    for &kernel in Kernel::ALL {
        progress.set_message(format!("checking {}", kernel.symbol()));
        progress.inc(1);
        match lesson.check(kernel) {
            Ok(found) => failures.extend(found),
            Err(error) => return Ok(Outcome::Faulted { failures, error }),
        }
    }
    for kernel in Kernel::RAGGED {
        for edge in Edge::ALL {
            progress.set_message(format!("checking {}/{}", kernel.symbol(), edge.key()));
            progress.inc(1);
            match lesson.check_at(kernel, edge) {
                Ok(found) => failures.extend(found),
                Err(error) => return Ok(Outcome::Faulted { failures, error }),
            }
        }
    }
    if let Ok(t) = tensor {
        progress.set_message(format!(
            "checking {} and cuBLAS's {} GEMM",
            t.sizes().mma_symbol(),
            t.sizes().half.upper()
        ));
        progress.inc(1);
        match t.check() {
            Ok(found) => failures.extend(found),
            Err(error) => return Ok(Outcome::Faulted { failures, error }),
        }
    }
    if !failures.is_empty() {
        return Ok(Outcome::Failed(failures));
    }
    let mut measured = Vec::with_capacity(Kernel::ALL.len() + Kernel::STREAMS.len());
    // The guarded transpose is timed only in its round-against-ragged pair.
    for &kernel in Kernel::ALL
        .iter()
        .filter(|&&k| k != Kernel::TransposeNaiveGuarded)
    {
        let shapes: &[Shape] = if kernel.is_stream() {
            &Shape::ALL
        } else {
            &[Shape::PerElement]
        };
        for &shape in shapes {
            progress.set_message(format!("timing {}", kernel.symbol()));
            progress.inc(1);
            measured.push(Measured {
                kernel,
                shape,
                timing: lesson.time_shaped(kernel, shape, plan)?,
            });
        }
    }
    progress.set_message("timing cuMemcpyDtoDAsync");
    progress.inc(1);
    let driver_copy = lesson.time_driver_copy(plan)?;
    let mut ragged = Vec::new();
    for kernel in Kernel::RAGGED {
        progress.set_message(format!("timing {} round and ragged", kernel.symbol()));
        progress.inc(1);
        ragged.push(lesson.time_ragged(kernel, plan)?);
    }
    let tensor = match tensor {
        Ok(t) => Ok(t.time(plan, progress)?),
        Err(why) => Err(why.clone()),
    };
    Ok(Outcome::Passed(Timings {
        measured,
        driver_copy,
        ragged,
        tensor,
    }))
}

impl Twinned for Roofline<'_> {
    type Kernel = Kernel;

    fn kernels(&mut self) -> &mut KernelSet<Kernel> {
        &mut self.kernels
    }

    fn check(&mut self, kernel: Kernel) -> Result<(Vec<Failure>, Vec<u64>)> {
        let checked = self.check_output(kernel)?;
        let bits = checked
            .output
            .iter()
            .map(|v| u64::from(v.to_bits()))
            .collect();
        Ok((checked.failures, bits))
    }

    fn time(&mut self, kernel: Kernel, plan: Plan) -> Result<Timing> {
        Roofline::time(self, kernel, plan)
    }
}

/// The roofline lesson as `lab` runs it.
pub struct RooflineLesson;

impl lesson::Lesson for RooflineLesson {
    const NAME: &'static str = "roofline";
    const ABOUT: &'static str = "Measured ceilings (memory, FP32, BF16 tensor cores or FP16 on a T4) and ten kernels placed on a roofline.";
    const CAPABILITIES: Capabilities = Capabilities {
        plot: true,
        graphs_dir: false,
    };
    type Kernel = Kernel;
    type Sizes = Sizes;
    type Twins<'g> = Roofline<'g>;

    fn block_sizes() -> serde_json::Value {
        report::block_sizes_json()
    }

    /// The FP16 tensor-core chains, where the base module has them (built
    /// for sm_75 or later): a measuring kernel with no twin.
    fn rust_only_base_kernels() -> Vec<(&'static str, &'static [crate::kernels::Param])> {
        use crate::kernels::KernelId;
        if crate::ptx::base_has_fp16_mma() {
            tensor::TuringTensorKernel::ALL
                .iter()
                .map(|k| (k.symbol(), k.params()))
                .collect()
        } else {
            Vec::new()
        }
    }

    /// What NVRTC compiles: [`cuda_c_defines`] then [`CUDA_C_SOURCE`].
    fn cuda_c() -> String {
        format!("{}{}", cuda_c_defines(), CUDA_C_SOURCE)
    }

    fn run(
        gpu: &Gpu,
        sizes: &Sizes,
        context: Context,
        options: &RunOptions<'_>,
    ) -> Result<Outcome<Box<dyn lesson::Report>>> {
        let mut lesson = Roofline::new(gpu, *sizes)?;
        let mut tensor = match (tensor::unavailable(&gpu.info), sizes.tensor) {
            (Some(why), _) => Err(why),
            (None, None) => Err("No tensor-core ceiling: these sizes have none".to_string()),
            (None, Some(t)) => Ok(TensorPeak::new(gpu, t)?),
        };
        let outcome = run(&mut lesson, &mut tensor, options.plan, options.progress)?;
        // The GEMM lesson's last steps, placed on this roofline: checked and
        // timed after the roofline's own buffers are freed.
        drop(lesson);
        drop(tensor);
        let gemm = match &outcome {
            Outcome::Passed(_) => {
                let side = if options.quick {
                    gemm_points::GEMM_QUICK_SIDE
                } else {
                    gemm_points::GEMM_SIDE
                };
                options.progress.set_message(format!(
                    "checking and timing the GEMM lesson's kernels at {side}^3"
                ));
                // Too little memory, a size or a driver refusal costs only
                // the GEMM points (the report says why); a fault is an error.
                match gemm_points::measure(gpu, side, options.plan) {
                    Ok(m) if !m.failures.is_empty() => return Ok(Outcome::Failed(m.failures)),
                    Ok(m) => Ok(m),
                    Err(
                        e @ (Error::OutOfMemory { .. } | Error::Size(_) | Error::Driver { .. }),
                    ) => Err(e.to_string()),
                    Err(e) => return Err(e),
                }
            }
            _ => Err("not measured: the run did not pass".to_string()),
        };
        Ok(outcome.map(|t| {
            let mut report = report::build(&gpu.info, *sizes, context, &t.measured, t.driver_copy);
            report.ragged = t.ragged;
            report.gemm = gemm;
            report.tensor = match (t.tensor, sizes.tensor) {
                (Ok(timings), Some(ts)) => Ok(tensor::TensorCeiling::new(&gpu.info, ts, timings)),
                (Err(why), _) => Err(why),
                (Ok(_), None) => Err("No tensor-core ceiling: these sizes have none".to_string()),
            };
            Box::new(report) as Box<dyn lesson::Report>
        }))
    }

    fn twins<'g>(gpu: &'g Gpu, sizes: &Sizes) -> Result<Roofline<'g>> {
        Roofline::new(gpu, *sizes)
    }

    fn compare_chart(
        sizes: &Sizes,
        comparison: &crate::compare::Comparison,
    ) -> Option<crate::plot::Chart> {
        let title = format!(
            "Roofline, Rust and CUDA C, {} ({})",
            comparison.context.gpu, comparison.context.date
        );
        Some(report::compare_chart(&comparison.kernels, sizes, title))
    }

    fn profile(gpu: &Gpu, sizes: &Sizes) -> Result<String> {
        let mut lesson = Roofline::new(gpu, *sizes)?;
        lesson.profile()?;
        Ok(format!(
            "profile mode: {} launches, no checks, no timings",
            Kernel::ALL.len()
        ))
    }
}
