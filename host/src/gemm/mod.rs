//! The GEMM lesson on the host: `D = alpha * A * B + beta * C` from a
//! thread per output to 2D register blocking and float4 accesses in FP32,
//! then on the tensor cores: FP16 with `mma.sync` m16n8k8 (the sm_75
//! module, compute capability 7.5 and up, a T4 included), BF16 with
//! `mma.sync` m16n8k16 and two and four `cp.async` stages (the sm_80
//! module), and on compute capability 9.0 BF16 `wgmma` fed by `cp.async`
//! and by the tensor memory accelerator (the sm_90a module); each kernel
//! checked and timed at square sizes from 1024 to 8192 (and 4095, whose
//! edges no tile divides) beside cuBLAS at the same size and precision.
//!
//! The checks, all of which can fail:
//! - a small shape (67, 131, 97 for FP32; 67, 136, 104 for the tensor-core
//!   kernels, whose k and n must be multiples of 8) against the f64 CPU
//!   reference in every element, within [`bound`] (four times it for the
//!   tensor cores, [`TC_BOUND_FACTOR`]);
//! - at every timed size, 512 sampled elements (corners included) against
//!   the f64 reference within their own bound, and every element against
//!   cuBLAS (where it loads) within twice the bound at the largest
//!   magnitudes ([`bound_for_k`]): loose, it catches gross errors only;
//! - every FP32 kernel equal, element for element, to the naive kernel's
//!   output: all of them add an output's k products in the same order with
//!   the same FMAs (`kernels-gpu/src/gemm.rs`);
//! - each tensor-core kernel, on integer inputs whose every partial sum is
//!   exact ([`reference::integer`]), equal to the naive kernel's output in
//!   every element: a wrong or stale tile anywhere shows; and the
//!   BF16 `mma.sync` kernels equal to each other on the fills, bit for
//!   bit, and the `wgmma` kernels to each other.
//!
//! `D` is poisoned (NaN) before every checked launch, so a kernel that
//! skips a tile fails.

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, LaunchConfig};
use kernels_gpu::gemm::*;
use serde::Serialize;
use serde_json::json;
use statrs::statistics::{Data, Max, Min, OrderStatistics};

use crate::check::{Failure, Tolerance, first_mismatch};
use crate::compare::{Shown, Side, TwinRows, shown_from, shown_in};
use crate::cublas::{Cublas, Half};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::kernels::{KernelId, KernelSet};
use crate::lesson::{self, Findings, Outcome, Row, RunOptions, Section, SectionReport};
use crate::ptx::Module;
use crate::report::Context;
use crate::sizes::{LessonSizes, Stream};
use crate::timing::{self, Hold, Plan, Timing};

// ANCHOR: kernels
crate::kernel_ids! {
    /// The lesson's kernels, each with its exported symbol (the Rust
    /// kernel's and its CUDA C twin's) and its parameters in order:
    /// (m, n, k, alpha, A, B, beta, C, D).
    pub enum Kernel {
        /// A thread per output.
        Naive = "gemm_naive" (U32, U32, U32, F32, Ptr, Ptr, F32, Ptr, Ptr),
        /// Shared-memory tiles of TILE x TILE.
        Tiled = "gemm_tiled" (U32, U32, U32, F32, Ptr, Ptr, F32, Ptr, Ptr),
        /// 1D register blocking: 8 outputs of a column a thread, 64 x 64 a
        /// block.
        Regblock1d = "gemm_regblock_1d" (U32, U32, U32, F32, Ptr, Ptr, F32, Ptr, Ptr),
        /// 2D register blocking: 8 x 8 outputs a thread, 128 x 128 a block.
        Regblock = "gemm_regblock" (U32, U32, U32, F32, Ptr, Ptr, F32, Ptr, Ptr),
        /// The same tiles with float4 global and shared accesses.
        Vectorized = "gemm_vectorized" (U32, U32, U32, F32, Ptr, Ptr, F32, Ptr, Ptr),
        /// The float4 tiles arranged by warp, double-buffered, the next
        /// step's loads in flight during this step's FMAs.
        Warptiled = "gemm_warptiled" (U32, U32, U32, F32, Ptr, Ptr, F32, Ptr, Ptr),
    }
}
// ANCHOR_END: kernels

crate::kernel_ids! {
    /// The tensor-core kernels, from the sm_80 module (`host::ptx::PTX_SM80`),
    /// loaded on GPUs of compute capability 8.0 and up: (m, n, k, alpha,
    /// A in bf16, B in bf16, beta, C, D).
    pub enum TcKernel {
        /// BF16 inputs, FP32 accumulation: `mma.sync` fed by `ldmatrix`,
        /// tiles copied by `cp.async` into two stages.
        Bf16Mma = "gemm_bf16_mma" (U32, U32, U32, F32, Ptr, Ptr, F32, Ptr, Ptr),
        /// The same tiles through a 4-stage `cp.async` pipeline in dynamic
        /// shared memory, one barrier a step.
        Bf16Pipelined = "gemm_bf16_pipelined" (U32, U32, U32, F32, Ptr, Ptr, F32, Ptr, Ptr),
        /// The same sums from 4 warps of 64 x 64 over 128 x 128 blocks,
        /// XOR-swizzled stages, fragments loaded 16 of k ahead, the grid
        /// walked in groups of block rows.
        Bf16Swizzled = "gemm_bf16_swizzled" (U32, U32, U32, F32, Ptr, Ptr, F32, Ptr, Ptr),
        /// The same kernel over 128 x 256 blocks of 8 warps, 64 of k a
        /// step, 3 stages in 144 KiB of shared memory (refused on GPUs
        /// that give a block less).
        Bf16SwizzledWide = "gemm_bf16_swizzled_wide" (U32, U32, U32, F32, Ptr, Ptr, F32, Ptr, Ptr),
    }
}

impl TcKernel {
    /// What the kernel does, for its row in the report.
    pub fn label(self) -> &'static str {
        match self {
            TcKernel::Bf16Mma => "BF16 in, FP32 sums: mma.sync, ldmatrix, cp.async, 2 stages",
            TcKernel::Bf16Pipelined => "BF16 in, FP32 sums: the same, 4 cp.async stages",
            TcKernel::Bf16Swizzled => {
                "BF16 in, FP32 sums: 64 x 64 warp tiles, swizzled stages, fragments 16 of k ahead"
            }
            TcKernel::Bf16SwizzledWide => {
                "BF16 in, FP32 sums: the same warps over 128 x 256 x 64 blocks, 3 stages in 144 KiB"
            }
        }
    }

    /// Bytes of dynamic shared memory a block of the kernel takes (0 where
    /// its stages are static).
    pub fn dynamic_shared_bytes(self) -> u32 {
        match self {
            TcKernel::Bf16Mma => 0,
            TcKernel::Bf16Pipelined => TC_PIPE_BYTES,
            TcKernel::Bf16Swizzled => SW_BYTES,
            TcKernel::Bf16SwizzledWide => SWW_BYTES,
        }
    }

    /// The launch over an m x n output: a block a tile of D (`TC_BLOCK_M x
    /// TC_BLOCK_N` with `TC_THREADS` threads, or the swizzled kernels'
    /// `SW_BLOCK_M x SW_BLOCK_N` with `SW_THREADS` and `SW_BLOCK_M x
    /// SWW_BLOCK_N` with `SWW_THREADS`).
    pub fn launch_config(self, m: usize, n: usize) -> LaunchConfig {
        let blocks = |extent: usize, per: u32| extent.div_ceil(per as usize).max(1) as u32;
        let (tile_m, tile_n, threads) = match self {
            TcKernel::Bf16Mma | TcKernel::Bf16Pipelined => (TC_BLOCK_M, TC_BLOCK_N, TC_THREADS),
            TcKernel::Bf16Swizzled => (SW_BLOCK_M, SW_BLOCK_N, SW_THREADS),
            TcKernel::Bf16SwizzledWide => (SW_BLOCK_M, SWW_BLOCK_N, SWW_THREADS),
        };
        LaunchConfig {
            grid_dim: (blocks(n, tile_n), blocks(m, tile_m), 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: self.dynamic_shared_bytes(),
        }
    }

    /// Why the kernel cannot run at (m, n, k), if it cannot
    /// ([`TensorKernel::refusal`]).
    pub fn refusal(self, shape: (usize, usize, usize)) -> Option<String> {
        TensorKernel::Mma(self).refusal(shape)
    }
}

crate::kernel_ids! {
    /// The FP16 tensor-core kernel, from the sm_75 module every lesson
    /// loads (PTX ISA 6.5, `--cfg lab_fp16_mma`), so it runs on every GPU
    /// of compute capability 7.5 and up, a T4 included: (m, n, k, alpha, A
    /// in f16, B in f16, beta, C, D).
    pub enum F16Kernel {
        /// FP16 inputs, FP32 accumulation: `gemm_bf16_mma`'s tiles and
        /// fragments, each 16 of k as two `mma.sync` m16n8k8, the copies
        /// through registers into two stages (no `cp.async` before 8.0).
        F16Mma = "gemm_f16_mma" (U32, U32, U32, F32, Ptr, Ptr, F32, Ptr, Ptr),
    }
}

crate::kernel_ids! {
    /// The Hopper kernels, from the sm_90a module (`host::ptx::PTX_SM90A`),
    /// loaded on GPUs of compute capability 9.0: (m, n, k, alpha, A in bf16,
    /// B in bf16, beta, C, D).
    pub enum WgKernel {
        /// BF16 inputs, FP32 accumulation: `wgmma` m64n256k16 reading both
        /// tiles from shared memory (128-byte swizzle), tiles of 128 x 256
        /// copied by `cp.async` through `WG_STAGES` stages.
        Bf16Wgmma = "gemm_bf16_wgmma" (U32, U32, U32, F32, Ptr, Ptr, F32, Ptr, Ptr),
        /// The same tiles, stages and `wgmma`s, each step's tiles copied by
        /// the tensor memory accelerator onto an `mbarrier`: (m, n, k,
        /// alpha, A's tensor map, B's tensor map, beta, C, D).
        Bf16Tma = "gemm_bf16_tma" (U32, U32, U32, F32, Ptr, Ptr, F32, Ptr, Ptr),
    }
}

/// A tensor-core kernel of any module: bf16 `mma.sync` (sm_80), bf16
/// `wgmma` (sm_90a) or f16 `mma.sync` (sm_75). All take the same
/// parameters, read 16-bit copies of the same inputs and are checked the
/// same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TensorKernel {
    /// A kernel of the sm_80 module.
    Mma(TcKernel),
    /// A kernel of the sm_90a module.
    Wgmma(WgKernel),
    /// The f16 kernel of the sm_75 module.
    Turing(F16Kernel),
}

impl From<F16Kernel> for TensorKernel {
    fn from(k: F16Kernel) -> TensorKernel {
        TensorKernel::Turing(k)
    }
}

impl From<TcKernel> for TensorKernel {
    fn from(k: TcKernel) -> TensorKernel {
        TensorKernel::Mma(k)
    }
}

impl From<WgKernel> for TensorKernel {
    fn from(k: WgKernel) -> TensorKernel {
        TensorKernel::Wgmma(k)
    }
}

impl TensorKernel {
    /// The exported symbol (the Rust kernel's and its twin's).
    pub fn symbol(self) -> &'static str {
        match self {
            TensorKernel::Mma(k) => k.symbol(),
            TensorKernel::Wgmma(k) => k.symbol(),
            TensorKernel::Turing(k) => k.symbol(),
        }
    }

    /// The 16-bit type of its A and B.
    pub fn precision(self) -> Half {
        match self {
            TensorKernel::Mma(_) | TensorKernel::Wgmma(_) => Half::Bf16,
            TensorKernel::Turing(_) => Half::F16,
        }
    }

    /// What the kernel does, for its row in the report.
    pub fn label(self) -> &'static str {
        match self {
            TensorKernel::Mma(k) => k.label(),
            TensorKernel::Wgmma(WgKernel::Bf16Wgmma) => {
                "BF16 in, FP32 sums: wgmma m64n256k16 from swizzled shared tiles, 4 cp.async stages"
            }
            TensorKernel::Wgmma(WgKernel::Bf16Tma) => {
                "BF16 in, FP32 sums: the same wgmma tiles, copied by TMA onto mbarriers"
            }
            TensorKernel::Turing(F16Kernel::F16Mma) => {
                "FP16 in, FP32 sums: mma.sync m16n8k8 (compute capability 7.5), ldmatrix, loads through registers, 2 stages"
            }
        }
    }

    /// The name of the module its Rust side comes from: `sm_80 module`
    /// (the base module's by its target, `sm_75 module` by default).
    pub fn module_name(self) -> &'static str {
        match self {
            TensorKernel::Mma(_) => Module::Sm80.name(),
            TensorKernel::Wgmma(_) => Module::Sm90a.name(),
            TensorKernel::Turing(_) => concat!(env!("LAB_PTX_ARCH"), " module"),
        }
    }

    /// Bytes of dynamic shared memory a block takes (0 where its stages are
    /// static).
    pub fn dynamic_shared_bytes(self) -> u32 {
        match self {
            TensorKernel::Mma(k) => k.dynamic_shared_bytes(),
            TensorKernel::Turing(_) => 0,
            TensorKernel::Wgmma(WgKernel::Bf16Wgmma) => WG_SHARED_BYTES,
            TensorKernel::Wgmma(WgKernel::Bf16Tma) => WG_TMA_SHARED_BYTES,
        }
    }

    /// The launch over an m x n output.
    pub fn launch_config(self, m: usize, n: usize) -> LaunchConfig {
        match self {
            TensorKernel::Mma(k) => k.launch_config(m, n),
            // gemm_bf16_mma's tiles and block, with static shared stages.
            TensorKernel::Turing(_) => TcKernel::Bf16Mma.launch_config(m, n),
            TensorKernel::Wgmma(_) => {
                let blocks = |extent: usize, per: u32| extent.div_ceil(per as usize).max(1) as u32;
                LaunchConfig {
                    grid_dim: (blocks(n, WG_BLOCK_N), blocks(m, WG_BLOCK_M), 1),
                    block_dim: (WG_THREADS, 1, 1),
                    shared_mem_bytes: self.dynamic_shared_bytes(),
                }
            }
        }
    }

    /// Why the kernel cannot run at (m, n, k), if it cannot: every one
    /// copies 16-byte chunks (8 16-bit elements) of A's and B's rows, so k
    /// and n must be multiples of 8; and its epilogue reads a C pair that
    /// lies outside the matrix at a place inside it
    /// (`mma_tiles::store_tile_row`), so m and n must not be 0.
    pub fn refusal(self, shape: (usize, usize, usize)) -> Option<String> {
        let (m, n, k) = shape;
        if m == 0 || n == 0 {
            return Some(format!(
                "{} needs m and n of at least 1 (its epilogue reads inside C); {m} x {n} is empty",
                self.symbol()
            ));
        }
        (n % TC_ALIGN != 0 || k % TC_ALIGN != 0).then(|| {
            format!(
                "{} needs k and n multiples of {TC_ALIGN} (rows copied in 16-byte chunks of 16-bit elements); {n} x {k} is not",
                self.symbol()
            )
        })
    }
}

impl Kernel {
    /// What the kernel does, for its row in the report.
    pub fn label(self) -> &'static str {
        match self {
            Kernel::Naive => "FP32, a thread per output",
            Kernel::Tiled => "FP32, 32 x 32 shared tiles",
            Kernel::Regblock1d => "FP32, 8 outputs of a column a thread in registers",
            Kernel::Regblock => "FP32, 8 x 8 outputs a thread in registers",
            Kernel::Vectorized => "FP32, the same with float4 loads",
            Kernel::Warptiled => "FP32, float4 tiles by warp, loads a step ahead",
        }
    }

    /// The launch over an m x n output.
    pub fn launch_config(self, m: usize, n: usize) -> LaunchConfig {
        let blocks = |extent: usize, per: u32| extent.div_ceil(per as usize).max(1) as u32;
        let (grid_dim, block_dim) = match self {
            Kernel::Naive => (
                (blocks(n, NAIVE_BLOCK.0), blocks(m, NAIVE_BLOCK.1), 1),
                (NAIVE_BLOCK.0, NAIVE_BLOCK.1, 1),
            ),
            Kernel::Tiled => ((blocks(n, TILE), blocks(m, TILE), 1), (TILE, TILE, 1)),
            Kernel::Regblock1d => (
                (blocks(n, R1_BLOCK_N), blocks(m, R1_BLOCK_M), 1),
                (R1_THREADS, 1, 1),
            ),
            Kernel::Regblock | Kernel::Vectorized | Kernel::Warptiled => (
                (blocks(n, BLOCK_N), blocks(m, BLOCK_M), 1),
                (REG_THREADS, 1, 1),
            ),
        };
        LaunchConfig {
            grid_dim,
            block_dim,
            shared_mem_bytes: 0,
        }
    }
}

/// Why a GPU named `name` whose blocks may opt in to `optin` bytes of shared
/// memory (`MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`) cannot run
/// `gemm_bf16_swizzled_wide`, which takes `SWW_BYTES` (144 KiB) a block;
/// `None` where it can (compute capability 8.0 and 8.7 give a block up to
/// 163 KiB, 9.0 227 KiB, 8.6 and 8.9 99 KiB: the CUDA C Programming Guide's
/// table of technical specifications per compute capability).
pub fn wide_refusal(name: &str, optin: usize) -> Option<String> {
    (optin < SWW_BYTES as usize).then(|| {
        format!(
            "it takes {SWW_BYTES} bytes of shared memory a block and {name} gives a block at most {optin} \
             (MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)"
        )
    })
}

/// Floating-point operations of one GEMM: a multiply and an add for each
/// of the m n k products (the epilogue's 3 m n are not counted, as BLAS
/// benchmarks do not).
pub fn flop(m: usize, n: usize, k: usize) -> f64 {
    2.0 * m as f64 * n as f64 * k as f64
}

/// Compulsory bytes of one GEMM: A, B and C read once, D written once,
/// all in f32.
pub fn bytes(m: usize, n: usize, k: usize) -> f64 {
    ((m * k + k * n + 2 * m * n) * size_of::<f32>()) as f64
}

/// [`bytes`] with A and B in bf16 or f16 (2 bytes an element), C and D in
/// f32.
pub fn bytes_bf16(m: usize, n: usize, k: usize) -> f64 {
    ((m * k + k * n) * 2 + 2 * m * n * size_of::<f32>()) as f64
}

/// The unit roundoff of f32, 2^-24.
pub const UNIT_ROUNDOFF: f64 = f32::EPSILON as f64 / 2.0;

/// The error bound of one output computed as this lesson's kernels compute
/// it, against the exact value: `(k + 2) u (|alpha| S + |beta c|)`, where
/// `S = sum over p of |a_p b_p|` and u = 2^-24. A sum of k products in
/// floating point is within `k u S` of the exact sum to first order
/// (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed.,
/// section 3.1); the epilogue's scale, `beta * c` and FMA add two more
/// roundings. It holds for any order of summation, so it bounds cuBLAS's
/// result as well.
pub fn bound(k: usize, abs_products: f64, c: f32) -> f64 {
    (k as f64 + 2.0)
        * UNIT_ROUNDOFF
        * (f64::from(ALPHA).abs() * abs_products + f64::from(BETA).abs() * f64::from(c).abs())
}

/// [`bound`] with `S` at its largest for the fills (every |a|, |b| and |c|
/// at most 1: S <= k): what any output of a k-deep GEMM may be off by.
pub fn bound_for_k(k: usize) -> f64 {
    bound(k, k as f64, 1.0)
}

pub mod reference {
    //! The CPU reference, written for obvious correctness: the inputs as
    //! formulas of the index, each output as a plain f64 loop.

    use super::{ALPHA, BETA};

    /// Element `i` (row-major) of a matrix: a multiple of 1/256 in [-1, 1),
    /// hashed (`crate::fill`: no period, so an off-by-anything index reads
    /// another value) from the stream `stream` (A, B and C each have one).
    pub fn fill(i: usize, stream: u64) -> f32 {
        crate::fill::below(i, stream, 512) as f32 / 256.0 - 1.0
    }

    /// The streams of A, B and C.
    pub const STREAMS: [u64; 3] = [0x6A, 0x6B, 0x6C];

    /// Element `i` of the integer inputs: -2, -1, 0, 1 or 2, hashed from
    /// `stream`. With them every product is an integer of magnitude at most
    /// 4 and every partial sum of k <= 8192 products an integer below 2^15,
    /// exact in f32 however it is ordered, rounded or truncated, and the
    /// epilogue `0.75 acc - 0.5 c` (c a multiple of 1/256 in [-1, 1)) needs
    /// at most 24 significant bits: every correct kernel gives the exact
    /// result, and the same bits.
    pub fn integer(i: usize, stream: u64) -> f32 {
        crate::fill::below(i, stream, 5) as f32 - 2.0
    }

    /// The streams of the integer A and B.
    pub const INTEGER_STREAMS: [u64; 2] = [0x6F, 0x70];

    /// The first `len` elements of a matrix's fill (on every CPU core).
    pub fn matrix(len: usize, stream: u64) -> Vec<f32> {
        matrix_of(len, stream, fill)
    }

    /// The first `len` elements of `element(i, stream)` (on every CPU core).
    pub fn matrix_of(len: usize, stream: u64, element: fn(usize, u64) -> f32) -> Vec<f32> {
        crate::fill::filled(0..len, |i| element(i, stream))
    }

    // ANCHOR: reference
    /// Output (row, col) of `alpha * A * B + beta * C` in f64, and the sum
    /// of its products' magnitudes (for [`super::bound`]), for row-major
    /// `a` (m x k), `b` (k x n), `c` (m x n).
    pub fn output(
        a: &[f32],
        b: &[f32],
        c: &[f32],
        n: usize,
        k: usize,
        row: usize,
        col: usize,
    ) -> (f64, f64) {
        let (mut sum, mut magnitude) = (0.0f64, 0.0f64);
        for p in 0..k {
            let product = f64::from(a[row * k + p]) * f64::from(b[p * n + col]);
            sum += product;
            magnitude += product.abs();
        }
        (
            f64::from(ALPHA) * sum + f64::from(BETA) * f64::from(c[row * n + col]),
            magnitude,
        )
    }
    // ANCHOR_END: reference
}

/// The small non-square shape every kernel is checked at in full against
/// the CPU reference: m, n, k = 67, 131, 97, none a multiple of a tile, so
/// every edge guard has work.
pub const SMALL: (usize, usize, usize) = (67, 131, 97);

/// The small shape the tensor-core kernel is checked at in full: m = 67
/// (no tile of rows divides it), n = 136 and k = 104 (multiples of 8, as the
/// kernel needs, but of no tile).
pub const TC_SMALL: (usize, usize, usize) = (67, 136, 104);

/// Elements of `D` checked against the f64 reference at each timed size:
/// the four corners, then hashed positions.
pub const SAMPLES: usize = 512;

/// The sampled positions of an m x n output: its four corners, then
/// hashed ones (`crate::fill`), `SAMPLES` in all (fewer for a small one).
pub fn sample_positions(m: usize, n: usize) -> Vec<(usize, usize)> {
    let mut at = vec![(0, 0), (0, n - 1), (m - 1, 0), (m - 1, n - 1)];
    at.extend((0..SAMPLES.saturating_sub(4)).map(|i| {
        (
            crate::fill::below(i, 0x6D, m as u64) as usize,
            crate::fill::below(i, 0x6E, n as u64) as usize,
        )
    }));
    at.truncate(SAMPLES.min(m * n));
    at
}

/// How much looser than [`bound`] a tensor-core result may be. Tensor
/// cores sum the products of one `mma` step with their own adder, which
/// aligns and truncates significands rather than rounding each addition
/// (Fasi, Higham, Mikaitis and Pranesh, "Numerical behavior of NVIDIA
/// tensor cores", PeerJ Computer Science 7:e330, 2021): each addition then
/// errs by up to 2u instead of u; the factor 4 doubles that again as a
/// margin. The inputs are exact in bf16 (multiples of 1/256 in [-1, 1)), so
/// the products are exact and only the sums round.
pub const TC_BOUND_FACTOR: f64 = 4.0;

/// Checks `got` (an m x n output of `kernel`) at the sampled positions
/// against the f64 reference, each within its own [`bound`].
pub fn check_samples(
    kernel: &'static str,
    got: &[f32],
    a: &[f32],
    b: &[f32],
    c: &[f32],
    shape: (usize, usize, usize),
) -> Option<Failure> {
    check_samples_within(kernel, got, a, b, c, shape, 1.0)
}

/// [`check_samples`] with each bound multiplied by `factor` (1 for FP32,
/// [`TC_BOUND_FACTOR`] for tensor-core sums).
pub fn check_samples_within(
    kernel: &'static str,
    got: &[f32],
    a: &[f32],
    b: &[f32],
    c: &[f32],
    shape: (usize, usize, usize),
    factor: f64,
) -> Option<Failure> {
    let (m, n, k) = shape;
    for (row, col) in sample_positions(m, n) {
        let (want, magnitude) = reference::output(a, b, c, n, k, row, col);
        let allowed = factor * bound(k, magnitude, c[row * n + col]);
        let g = got[row * n + col];
        if !(f64::from(g) - want).abs().le(&allowed) {
            return Some(Failure {
                kernel,
                detail: format!(
                    "{m} x {n} x {k}: D[{row}][{col}] = {g}, the f64 reference gives {want} (allowed {allowed:.3e})"
                ),
            });
        }
    }
    None
}

/// The lesson's matrices at the largest size, smaller sizes using their
/// leading elements (a row-major s x s matrix is the first s^2 elements).
pub struct Gemm<'g> {
    gpu: &'g Gpu,
    kernels: KernelSet<Kernel>,
    a: CudaSlice<f32>,
    b: CudaSlice<f32>,
    c: CudaSlice<f32>,
    d: CudaSlice<f32>,
    a_host: Vec<f32>,
    b_host: Vec<f32>,
    c_host: Vec<f32>,
    /// cuBLAS on the lesson's stream, or why not.
    pub cublas: std::result::Result<Cublas, String>,
    /// The bf16 tensor-core kernels and the bf16 copies of A and B, or why
    /// this GPU has none.
    pub tensor: std::result::Result<TensorCores, String>,
    /// The f16 tensor-core kernel and the f16 copies of A and B, or why
    /// this GPU has none.
    pub fp16: std::result::Result<Fp16Cores, String>,
    /// The integer inputs ([`reference::integer`]) in f32, A's and B's, for
    /// the naive kernel the tensor-core kernels' exact check compares with
    /// (uploaded by [`Gemm::enable_tensor_cores`]).
    int_f32: Option<(CudaSlice<f32>, CudaSlice<f32>)>,
    /// Whether `fp16` was loaded (it holds the side or why there is none).
    fp16_loaded: bool,
    /// The inputs launches read.
    inputs: Inputs,
    /// The shape launches use: set by [`Gemm::set_shape`].
    shape: (usize, usize, usize),
}

/// The inputs a launch reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inputs {
    /// The fills: multiples of 1/256 in [-1, 1).
    Fills,
    /// The integer inputs of [`reference::integer`], whose GEMM every
    /// correct kernel computes exactly.
    Integers,
}

impl<'g> Gemm<'g> {
    /// Allocates A, B, C and D for the largest square `side` (and at least
    /// [`SMALL`]'s shape), fills A, B and C, and loads the kernels and cuBLAS.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] before allocating; driver errors.
    pub fn new(gpu: &'g Gpu, side: usize) -> Result<Self> {
        let elems = [SMALL, TC_SMALL]
            .iter()
            .map(|&(m, n, k)| (m * k).max(k * n).max(m * n))
            .fold(side * side, usize::max);
        gpu.require_free_memory(
            4 * elems * size_of::<f32>(),
            "the GEMM lesson's A, B, C and D",
        )?;
        // (The tensor-core side's buffers are asked for in
        // enable_tensor_cores.)
        let [sa, sb, sc] = reference::STREAMS;
        let (a_host, b_host, c_host) = (
            reference::matrix(elems, sa),
            reference::matrix(elems, sb),
            reference::matrix(elems, sc),
        );
        let upload = |host: &[f32]| -> Result<CudaSlice<f32>> {
            let mut buf = gpu.alloc_f32(elems)?;
            gpu.upload(host, &mut buf)?;
            Ok(buf)
        };
        let (a, b, c) = (upload(&a_host)?, upload(&b_host)?, upload(&c_host)?);
        let d = gpu.alloc_f32(elems)?;
        gpu.sync_after("uploading the GEMM inputs")?;
        let cublas = Cublas::find(&gpu.stream);
        let later = "the tensor-core kernels are loaded by Gemm::enable_tensor_cores";
        let (tensor, fp16) = (Err(later.to_string()), Err(later.to_string()));
        Ok(Gemm {
            gpu,
            kernels: KernelSet::new(gpu)?,
            a,
            b,
            c,
            d,
            a_host,
            b_host,
            c_host,
            cublas,
            tensor,
            fp16,
            int_f32: None,
            fp16_loaded: false,
            inputs: Inputs::Fills,
            shape: (side, side, side),
        })
    }

    /// Uploads the integer inputs in f32, then loads the tensor-core sides
    /// with their 16-bit copies of A and B and of the integer inputs: the
    /// bf16 one (the sm_80 module) on compute capability 8.0 or more, the
    /// f16 one (the sm_75 module's kernel) on 7.5 or more; `tensor` and
    /// `fp16` say why a GPU has none. Separate from [`Gemm::new`] so that
    /// what runs only the FP32 kernels does not load the modules.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`]; driver errors on a GPU that should run them.
    pub fn enable_tensor_cores(&mut self) -> Result<()> {
        self.enable_sides(true)
    }

    /// [`Gemm::enable_tensor_cores`] for the bf16 side alone (`fp16` stays
    /// an error that says so): what `lab roofline`'s GEMM points need, with
    /// no f16 copies of the inputs in device memory.
    ///
    /// # Errors
    /// As [`Gemm::enable_tensor_cores`].
    pub fn enable_bf16_tensor_cores(&mut self) -> Result<()> {
        self.enable_sides(false)
    }

    /// The integer inputs in f32 and the bf16 side, once; the f16 side,
    /// once, where `with_fp16` (so a later [`Gemm::enable_tensor_cores`]
    /// after [`Gemm::enable_bf16_tensor_cores`] still loads it).
    fn enable_sides(&mut self, with_fp16: bool) -> Result<()> {
        let gpu = self.gpu;
        let [ia, ib] = reference::INTEGER_STREAMS;
        let len = self.a_host.len();
        let load_fp16 = with_fp16 && !self.fp16_loaded;
        if self.int_f32.is_some() && !load_fp16 {
            return Ok(());
        }
        let (int_a, int_b) = (
            reference::matrix_of(len, ia, reference::integer),
            reference::matrix_of(len, ib, reference::integer),
        );
        if self.int_f32.is_none() {
            gpu.require_free_memory(
                2 * len * size_of::<f32>(),
                "the GEMM lesson's integer inputs in f32",
            )?;
            let upload_f32 = |host: &[f32]| -> Result<CudaSlice<f32>> {
                let mut buf = gpu.alloc_f32(host.len())?;
                gpu.upload(host, &mut buf)?;
                Ok(buf)
            };
            let ints = (upload_f32(&int_a)?, upload_f32(&int_b)?);
            self.tensor = TensorCores::new(gpu, &self.a_host, &self.b_host, &int_a, &int_b)?;
            self.int_f32 = Some(ints);
            self.fp16 = Err("the f16 side is loaded by Gemm::enable_tensor_cores, not by enable_bf16_tensor_cores".into());
        }
        if load_fp16 {
            self.fp16 = Fp16Cores::new(gpu, &self.a_host, &self.b_host, &int_a, &int_b)?;
            self.fp16_loaded = true;
        }
        Ok(())
    }

    /// Which inputs launches read: the fills, or the integer inputs
    /// (tensor-core side only).
    pub fn set_inputs(&mut self, inputs: Inputs) {
        self.inputs = inputs;
    }

    /// Sets the (m, n, k) that [`Gemm::launch`] and the timing use.
    ///
    /// # Errors
    /// [`Error::Size`] where a matrix would not fit the buffers.
    pub fn set_shape(&mut self, shape: (usize, usize, usize)) -> Result<()> {
        let (m, n, k) = shape;
        if [m * k, k * n, m * n].iter().any(|&e| e > self.d.len()) || m == 0 || n == 0 || k == 0 {
            return Err(Error::Size(format!(
                "GEMM of {m} x {n} x {k}: buffers of {} floats",
                self.d.len()
            )));
        }
        self.shape = shape;
        Ok(())
    }

    /// Launches `kernel` at the current shape (asynchronously).
    ///
    /// # Errors
    /// A launch the driver refuses.
    pub fn launch(&mut self, kernel: Kernel) -> Result<()> {
        let (m, n, k) = self.shape;
        let (a, b) = match (self.inputs, &self.int_f32) {
            (Inputs::Fills, _) => (&self.a, &self.b),
            (Inputs::Integers, Some((a, b))) => (a, b),
            (Inputs::Integers, None) => {
                return Err(Error::Size(
                    "the integer inputs are uploaded by Gemm::enable_tensor_cores".into(),
                ));
            }
        };
        let launch = self
            .kernels
            .launch(self.gpu, kernel)
            .scalar(m as u32)
            .scalar(n as u32)
            .scalar(k as u32)
            .scalar(ALPHA)
            .input(a)
            .input(b)
            .scalar(BETA)
            .input(&self.c)
            .output(&mut self.d);
        // SAFETY: A, B, C and D hold at least m*k, k*n and m*n floats
        // (set_shape checked) and are distinct allocations; the grid covers
        // D as the kernel's launch assumption asks; the arguments' kinds are
        // checked against the kernel's parameters before the launch.
        unsafe { launch.launch(kernel.launch_config(m, n)) }
    }

    /// cuBLAS's SGEMM at the current shape, in place on D after copying C
    /// into it (asynchronously): `D = alpha * A * B + beta * C`, as the
    /// lesson's kernels compute it.
    ///
    /// # Errors
    /// [`Error::Cublas`] where cuBLAS is missing or refuses the call.
    pub fn launch_cublas(&mut self) -> Result<()> {
        self.copy_c_into_d()?;
        self.cublas_gemm()
    }

    /// Queues the copy of C's first m * n floats into D: what cuBLAS, which
    /// computes in place, needs before it computes the lesson's product.
    ///
    /// # Errors
    /// A copy the driver refuses.
    fn copy_c_into_d(&mut self) -> Result<()> {
        let (m, n, _) = self.shape;
        let stream = &self.gpu.stream;
        let (d_ptr, _d) = self.d.device_ptr_mut(stream);
        let (c_ptr, _c) = self.c.device_ptr(stream);
        // SAFETY: both allocations hold at least m*n floats (set_shape); the
        // copy is queued on the lesson's stream, before what follows.
        unsafe {
            cudarc::driver::result::memcpy_dtod_async(
                d_ptr,
                c_ptr,
                m * n * size_of::<f32>(),
                stream.cu_stream(),
            )
        }
        .map_err(|source| Error::Driver {
            call: "cuMemcpyDtoDAsync",
            source,
        })
    }

    /// cuBLAS's SGEMM alone, in place on D (`D = alpha * A * B + beta * D`),
    /// queued: what the timing measures, so cuBLAS's time holds no copy the
    /// lesson's kernels do not make. D's values do not matter to the time,
    /// and with beta = -0.5 repeated calls stay bounded.
    ///
    /// # Errors
    /// [`Error::Cublas`] where cuBLAS is missing or refuses the call.
    pub fn cublas_gemm(&mut self) -> Result<()> {
        let (m, n, k) = self.shape;
        let cublas = self
            .cublas
            .as_ref()
            .map_err(|why| Error::Cublas(why.clone()))?;
        let stream = &self.gpu.stream;
        let (d_ptr, _d) = self.d.device_ptr_mut(stream);
        let (a_ptr, _a) = self.a.device_ptr(stream);
        let (b_ptr, _b) = self.b.device_ptr(stream);
        // SAFETY: A, B and D hold m*k, k*n and m*n floats (set_shape), D
        // overlaps neither input, and the handle is bound to this stream.
        unsafe { cublas.sgemm_row_major(m, n, k, ALPHA, a_ptr, b_ptr, BETA, d_ptr) }
            .map_err(Error::Cublas)
    }

    /// Runs `kernel` (or cuBLAS, for `None`) at the current shape into a
    /// poisoned D and returns D.
    ///
    /// # Errors
    /// A fault, charged to the kernel; driver and cuBLAS errors.
    pub fn output(&mut self, kernel: Option<Kernel>) -> Result<Vec<f32>> {
        match kernel {
            Some(kernel) => self.output_of(kernel.symbol(), |g| g.launch(kernel)),
            None => self.output_of("cublasSgemm", Self::launch_cublas),
        }
    }

    /// Poisons D's first m * n floats, queues `launch` (what runs, named
    /// `name` in errors), waits for it and returns D.
    ///
    /// # Errors
    /// The launch's; a fault, charged to `name`.
    fn output_of(
        &mut self,
        name: &'static str,
        launch: impl FnOnce(&mut Self) -> Result<()>,
    ) -> Result<Vec<f32>> {
        let (m, n, _) = self.shape;
        self.gpu.poison_output(&mut self.d, m * n)?;
        launch(self)?;
        self.gpu.sync_after(name)?;
        let got = self.gpu.read_output(&self.d, m * n, name)?;
        self.gpu.sync_after(name)?;
        Ok(got)
    }

    /// The checks a kernel's output `got` at `shape` meets on the fills:
    /// against the f64 reference in every element at `small` (its small
    /// shape) or at the sampled positions otherwise, each within `factor`
    /// times [`bound`]; and against `cublas` (cuBLAS's output at this shape,
    /// `what` names it) within twice `factor` times [`bound_for_k`].
    #[allow(clippy::too_many_arguments)]
    fn reference_failures(
        &self,
        kernel: &'static str,
        got: &[f32],
        shape: (usize, usize, usize),
        small: (usize, usize, usize),
        factor: f64,
        cublas: Option<&[f32]>,
        what: &str,
    ) -> Vec<Failure> {
        let (m, n, k) = shape;
        let (a, b, c) = (
            &self.a_host[..m * k],
            &self.b_host[..k * n],
            &self.c_host[..m * n],
        );
        let mut failures = Vec::new();
        if shape == small {
            let (want, bounds): (Vec<f64>, Vec<f64>) = (0..m * n)
                .map(|i| {
                    let (w, s) = reference::output(a, b, c, n, k, i / n, i % n);
                    (w, factor * bound(k, s, c[i]))
                })
                .unzip();
            failures.extend(
                first_mismatch(got, &want, Tolerance::Bound(&bounds)).map(|e| Failure {
                    kernel,
                    detail: format!("{m} x {n} x {k} against the f64 reference: {e}"),
                }),
            );
        } else {
            failures.extend(check_samples_within(kernel, got, a, b, c, shape, factor));
        }
        if let Some(want) = cublas {
            let allowed = 2.0 * factor * bound_for_k(k);
            failures.extend(
                first_mismatch(
                    got,
                    want,
                    Tolerance::AbsRel {
                        abs: allowed,
                        rel: 0.0,
                    },
                )
                .map(|e| Failure {
                    kernel,
                    detail: format!("{m} x {n} x {k} against {what}: {e}"),
                }),
            );
        }
        failures
    }

    /// What the driver reports about `kernel`'s Rust build: registers a
    /// thread, static shared bytes a block, and the blocks of its launch
    /// shape one SM holds (the occupancy API), with the theoretical
    /// occupancy that gives (resident threads over the SM's maximum).
    ///
    /// # Errors
    /// Driver errors.
    pub fn occupancy(&self, kernel: Kernel) -> Result<(crate::compare::FunctionStats, u32, f64)> {
        let block = kernel.launch_config(1, 1).block_dim;
        occupancy_of(
            self.gpu,
            self.kernels.active(kernel),
            block.0 * block.1 * block.2,
            0,
        )
    }

    // ANCHOR: check
    /// Every check of `kernel` at `shape` (see the module's list): against
    /// the f64 reference in full for the small shape and at sampled
    /// positions otherwise, against `cublas` (cuBLAS's output at this shape,
    /// where it ran) and against `naive` (the naive kernel's output). Returns
    /// the failures and the output.
    ///
    /// # Errors
    /// As [`Gemm::output`].
    pub fn check(
        &mut self,
        kernel: Kernel,
        shape: (usize, usize, usize),
        cublas: Option<&[f32]>,
        naive: Option<&[f32]>,
    ) -> Result<(Vec<Failure>, Vec<f32>)> {
        self.set_shape(shape)?;
        let got = self.output(Some(kernel))?;
        let (m, n, k) = shape;
        let what = format!("cuBLAS (allowed twice the bound for k = {k})");
        let mut failures =
            self.reference_failures(kernel.symbol(), &got, shape, SMALL, 1.0, cublas, &what);
        if let Some(want) = naive {
            failures.extend(
                first_mismatch(&got, want, Tolerance::Exact).map(|e| Failure {
                    kernel: kernel.symbol(),
                    detail: format!(
                        "{m} x {n} x {k}: not the naive kernel's sums (same order, same FMAs): {e}"
                    ),
                }),
            );
        }
        Ok((failures, got))
    }
    // ANCHOR_END: check

    /// Times `what` alone at the current shape ([`timing::time_kernel`]):
    /// a kernel as [`Gemm::launch`] or [`Gemm::launch_tc`] launches it,
    /// cuBLAS in place on D with no copy of C, as in [`Gemm::time_rounds`].
    ///
    /// # Errors
    /// As the launches.
    pub fn time(&mut self, what: Timed, plan: Plan) -> Result<Timing> {
        let gpu = self.gpu;
        timing::time_kernel(gpu, what.symbol(), plan, || self.launch_timed(what))
    }

    /// Times `what` held at the current shape ([`timing::time_held`] with
    /// [`HOLD`]): launched alone as [`Gemm::time`] launches it,
    /// untimed and then timed for about a second each, so that it meets the
    /// clock its own power draw settles at.
    ///
    /// # Errors
    /// As the launches.
    pub fn time_held(&mut self, what: Timed, plan: Plan) -> Result<Timing> {
        let gpu = self.gpu;
        timing::time_held(gpu, what.symbol(), HOLD, plan, || self.launch_timed(what))
    }

    /// Times `kernel` and then `reference` (one of cuBLAS's GEMMs) at the
    /// current shape in rounds ([`timing::time_alternating`]): each round
    /// one batch of each, the order reversed every other round, so each of
    /// the kernel's batches runs next to one of cuBLAS's. [`Share::of`]
    /// reads the two as rounds.
    ///
    /// # Errors
    /// As the launches ([`Gemm::launch`], [`Gemm::launch_tc`], the cuBLAS
    /// calls); a fault is charged to the one whose batch it surfaced in.
    pub fn time_rounds(
        &mut self,
        kernel: GemmRow,
        reference: Timed,
        plan: Plan,
    ) -> Result<(Timing, Timing)> {
        let gpu = self.gpu;
        let order = [Timed::Kernel(kernel), reference];
        let [k, c] = timing::time_alternating(gpu, order.map(Timed::symbol), plan, |i| {
            self.launch_timed(order[i])
        })?;
        Ok((k, c))
    }

    /// One launch of `what` at the current shape, as it is timed: a kernel
    /// as [`Gemm::launch`] or [`Gemm::launch_tc`] launches it, cuBLAS in
    /// place on D with no copy of C ([`Gemm::cublas_gemm`],
    /// [`Gemm::cublas_half_gemm`]).
    fn launch_timed(&mut self, what: Timed) -> Result<()> {
        match what {
            Timed::Kernel(GemmRow::Fp32(kernel)) => self.launch(kernel),
            Timed::Kernel(GemmRow::Tensor(kernel)) => self.launch_tc(kernel),
            Timed::CublasSgemm => self.cublas_gemm(),
            Timed::CublasGemmEx(half) => self.cublas_half_gemm(half),
        }
    }
}

/// What the lesson times: one of its kernels, or one of cuBLAS's GEMMs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timed {
    /// One of the lesson's kernels.
    Kernel(GemmRow),
    /// cuBLAS's FP32 GEMM, `cublasSgemm`.
    CublasSgemm,
    /// cuBLAS's GEMM of 16-bit inputs with FP32 sums, `cublasGemmEx`.
    CublasGemmEx(Half),
}

impl Timed {
    /// Its row's label: the kernel's, or which of cuBLAS's GEMMs.
    pub fn label(self) -> String {
        match self {
            Timed::Kernel(GemmRow::Fp32(kernel)) => kernel.label().to_string(),
            Timed::Kernel(GemmRow::Tensor(kernel)) => kernel.label().to_string(),
            Timed::CublasSgemm => "cuBLAS SGEMM, FP32".to_string(),
            Timed::CublasGemmEx(half) => format!("cuBLAS GemmEx, {} in, FP32 sums", half.upper()),
        }
    }

    /// How the report names its rate, where a kernel's share is read
    /// against it: "cuBLAS SGEMM's FP32 throughput", "cuBLAS's BF16
    /// throughput"; a kernel's, by its symbol.
    pub fn throughput(self) -> String {
        match self {
            Timed::Kernel(kernel) => format!("{}'s throughput", kernel.symbol()),
            Timed::CublasSgemm => "cuBLAS SGEMM's FP32 throughput".to_string(),
            Timed::CublasGemmEx(half) => format!("cuBLAS's {} throughput", half.upper()),
        }
    }

    /// The name its timings and faults go by: the kernel's symbol,
    /// `cublasSgemm`, or [`cublas_half_symbol`]'s name.
    pub fn symbol(self) -> &'static str {
        match self {
            Timed::Kernel(kernel) => kernel.symbol(),
            Timed::CublasSgemm => "cublasSgemm",
            Timed::CublasGemmEx(half) => cublas_half_symbol(half),
        }
    }
}

/// A kernel's share of cuBLAS's throughput at one size and precision read
/// in rounds ([`Gemm::time_rounds`]): each round times one batch of the
/// kernel and one of cuBLAS's back to back. Both do the same FLOP, so a
/// round's share is cuBLAS's per-launch time over the kernel's in that
/// round. The lesson gives it beside the share of the two rows, each timed
/// alone: under a power limit the clock a batch meets depends on what ran
/// just before it, so the two readings can differ by more than the spread
/// of either (on an H200 at 9e16104 the `mma.sync` rows were timed down to
/// 1785 MHz while cuBLAS's row, timed before them, ran at the 1980 MHz base
/// clock: docs/results/h200-2026-12-06-head-9e16104).
#[derive(Debug, Clone, PartialEq)]
pub struct Share {
    /// Each round's share, cuBLAS's ms over the kernel's (1.0: as fast as
    /// cuBLAS), in the order timed.
    pub per_round: Vec<f64>,
    /// The median of the kernel's per-launch ms in the rounds.
    pub kernel_ms: f64,
    /// The median of cuBLAS's per-launch ms in the rounds.
    pub cublas_ms: f64,
}

impl Share {
    /// The share from the kernel's and cuBLAS's timings of one
    /// alternation: batch `i` of each was timed in round `i`.
    ///
    /// # Panics
    /// If the two have different counts of batches (one alternation gives
    /// both the same).
    pub fn of(kernel: &Timing, cublas: &Timing) -> Share {
        assert_eq!(
            kernel.samples_ms.len(),
            cublas.samples_ms.len(),
            "one alternation times both the same batches"
        );
        Share {
            per_round: kernel
                .samples_ms
                .iter()
                .zip(&cublas.samples_ms)
                .map(|(k, c)| c / k)
                .collect(),
            kernel_ms: kernel.median_ms(),
            cublas_ms: cublas.median_ms(),
        }
    }

    /// The median of the rounds' shares (1.0: as fast as cuBLAS).
    pub fn median(&self) -> f64 {
        Data::new(self.per_round.clone()).median()
    }

    /// The smallest and largest round's share.
    pub fn range(&self) -> (f64, f64) {
        let d = Data::new(self.per_round.clone());
        (d.min(), d.max())
    }

    /// The report's sentence for `row`: its share of `what` (say "cuBLAS
    /// SGEMM's FP32 throughput") row against row (`of_rows`: the kernel's
    /// row's GFLOP/s over cuBLAS's, where both rows have one), then in the
    /// rounds, with their range and the two medians there, and whether the
    /// first lies outside that range.
    pub fn sentence(&self, row: &str, what: &str, of_rows: Option<f64>) -> String {
        let (lo, hi) = self.range();
        let rows = of_rows.map_or(String::new(), |r| {
            format!(" {:.1}% row against row;", 100.0 * r)
        });
        let rounds = match self.per_round.len() {
            1 => format!(
                "{:.1}% in one round, a batch of it beside one of cuBLAS's",
                100.0 * self.median()
            ),
            n => format!(
                "{:.1}% in {n} rounds of a batch of it beside one of cuBLAS's (the median; rounds {:.1} to {:.1}%)",
                100.0 * self.median(),
                100.0 * lo,
                100.0 * hi
            ),
        };
        let apart = match of_rows {
            Some(r) if self.per_round.len() > 1 && !(lo..=hi).contains(&r) => {
                " The two readings disagree past the rounds' spread: what ran before each batch moved this share."
            }
            _ => "",
        };
        format!(
            "{row}: of {what},{rows} {rounds}; in the rounds it took {:.4} ms a launch and cuBLAS {:.4} ms.{apart}",
            self.kernel_ms, self.cublas_ms
        )
    }

    /// The fields a row's JSON line carries beside `cublas_share` (row
    /// against row): `cublas_share_rounds` (the median),
    /// `cublas_share_rounds_range` ([smallest, largest]),
    /// `cublas_share_per_round`, and `rounds_ms` (the kernel's and cuBLAS's
    /// median per-launch ms in the rounds).
    pub fn fields(&self) -> [(&'static str, serde_json::Value); 4] {
        let (lo, hi) = self.range();
        [
            ("cublas_share_rounds", json!(self.median())),
            ("cublas_share_rounds_range", json!([lo, hi])),
            ("cublas_share_per_round", json!(self.per_round)),
            (
                "rounds_ms",
                json!({"kernel": self.kernel_ms, "cublas": self.cublas_ms}),
            ),
        ]
    }
}

/// The tensor-core side: the sm_80 module's kernels (and, on compute
/// capability 9.0, the sm_90a module's) and A and B in bf16 (the fills are
/// multiples of 1/256 in [-1, 1), exact in bf16, so they are the FP32
/// kernels' inputs exactly).
pub struct TensorCores {
    kernels: KernelSet<TcKernel>,
    /// Why the GPU cannot run `gemm_bf16_swizzled_wide`, if it cannot
    /// ([`wide_refusal`]).
    pub wide: Option<String>,
    /// The Hopper kernels, or why this GPU has none.
    pub hopper: std::result::Result<KernelSet<WgKernel>, String>,
    inputs: HalfInputs,
    /// The TMA kernel's tensor maps of A and B, for the shape and inputs
    /// they were encoded for.
    maps: Option<TensorMaps>,
}

/// The tensor maps of the bf16 A (m x k, boxes [`WG_TMA_BOX_A`]) and B (k x
/// n, boxes [`WG_TMA_BOX_B`]) one shape and one kind of inputs reads, in
/// device memory.
struct TensorMaps {
    key: ((usize, usize, usize), Inputs),
    a: CudaSlice<u8>,
    b: CudaSlice<u8>,
}

impl TensorCores {
    /// Loads the sm_80 module (and the sm_90a module on compute capability
    /// 9.0) and uploads A and B and the integer inputs `int_a` and `int_b`
    /// as bf16, on a GPU of compute capability 8.0 or more; on an older one,
    /// the reason it has none (the outer `Ok`).
    ///
    /// # Errors
    /// Driver errors on a GPU that should run the module.
    pub fn new(
        gpu: &Gpu,
        a: &[f32],
        b: &[f32],
        int_a: &[f32],
        int_b: &[f32],
    ) -> Result<std::result::Result<TensorCores, String>> {
        let (major, minor) = gpu.info.compute_capability;
        if !Module::Sm80.runs_on((major, minor)) {
            return Ok(Err(format!(
                "{} has compute capability {major}.{minor}; the bf16 mma.sync, ldmatrix and cp.async of the sm_80 module \
                 need 8.0 or more",
                gpu.info.name
            )));
        }
        let kernels = KernelSet::from_module(gpu, Module::Sm80)?;
        let wide = wide_refusal(&gpu.info.name, gpu.info.shared_per_block_optin);
        let hopper = if Module::Sm90a.runs_on((major, minor)) {
            // A driver that cannot load the module (it is PTX ISA 8.3, from
            // CUDA 12.3 on) costs the wgmma rows only, with the reason.
            match KernelSet::from_module(gpu, Module::Sm90a) {
                Ok(set) => {
                    for &kernel in WgKernel::ALL {
                        crate::kernels::allow_dynamic_shared(
                            set.active(kernel),
                            TensorKernel::from(kernel).dynamic_shared_bytes(),
                        )?;
                    }
                    Ok(set)
                }
                Err(e) => Err(format!(
                    "the sm_90a module (PTX ISA 8.3, which needs a driver of CUDA 12.3 or later) did not load: {e}"
                )),
            }
        } else {
            Err(format!(
                "{} has compute capability {major}.{minor}; wgmma and the sm_90a module need exactly 9.0",
                gpu.info.name
            ))
        };
        let inputs = HalfInputs::upload(gpu, Half::Bf16, [a, b, int_a, int_b])?;
        let tc = TensorCores {
            kernels,
            wide,
            hopper,
            inputs,
            maps: None,
        };
        for kernel in tc.mma_kernels() {
            crate::kernels::allow_dynamic_shared(
                tc.kernels.active(kernel),
                TensorKernel::from(kernel).dynamic_shared_bytes(),
            )?;
        }
        Ok(Ok(tc))
    }

    /// Encodes the tensor maps of A and B (the `inputs` in bf16) for
    /// `shape` and uploads them, unless they are already those; queued on
    /// the stream before the launch that reads them.
    ///
    /// # Errors
    /// The driver refusing a map ([`crate::tma::bf16_tensor_map_128b`]);
    /// the allocation or the copy.
    fn encode_maps(
        &mut self,
        gpu: &Gpu,
        shape: (usize, usize, usize),
        inputs: Inputs,
    ) -> Result<()> {
        if self
            .maps
            .as_ref()
            .is_some_and(|maps| maps.key == (shape, inputs))
        {
            return Ok(());
        }
        let (m, n, k) = shape;
        let (a, b) = self.inputs.pick(inputs);
        let (a_ptr, _a) = a.device_ptr(&gpu.stream);
        let (b_ptr, _b) = b.device_ptr(&gpu.stream);
        let map_a = crate::tma::bf16_tensor_map_128b(a_ptr, m, k, WG_TMA_BOX_A)?;
        let map_b = crate::tma::bf16_tensor_map_128b(b_ptr, k, n, WG_TMA_BOX_B)?;
        self.maps = Some(TensorMaps {
            key: (shape, inputs),
            a: crate::tma::upload_map(gpu, &map_a)?,
            b: crate::tma::upload_map(gpu, &map_b)?,
        });
        Ok(())
    }

    /// The sm_80 module's kernels this GPU runs: all but the wide one where
    /// it cannot give a block its shared memory ([`TensorCores::wide`]).
    pub fn mma_kernels(&self) -> impl Iterator<Item = TcKernel> + '_ {
        TcKernel::ALL
            .iter()
            .copied()
            .filter(|&k| k != TcKernel::Bf16SwizzledWide || self.wide.is_none())
    }

    /// Every tensor-core kernel this GPU runs: the sm_80 module's
    /// ([`TensorCores::mma_kernels`]), then the sm_90a module's where it
    /// loaded.
    pub fn kernels(&self) -> Vec<TensorKernel> {
        let mut all: Vec<TensorKernel> = self.mma_kernels().map(TensorKernel::from).collect();
        if self.hopper.is_ok() {
            all.extend(WgKernel::ALL.iter().map(|&k| TensorKernel::from(k)));
        }
        all
    }

    /// `kernel`'s function on the side in use.
    ///
    /// # Panics
    /// For a Hopper kernel where the sm_90a module did not load (a caller
    /// bug: [`TensorCores::kernels`] lists only those that did). The wide
    /// swizzled kernel's function exists where it is refused, but has no
    /// shared memory allowed: callers go by [`TensorCores::kernels`].
    pub fn function(&self, kernel: TensorKernel) -> &cudarc::driver::CudaFunction {
        match (kernel, &self.hopper) {
            (TensorKernel::Mma(k), _) => self.kernels.active(k),
            (TensorKernel::Wgmma(k), Ok(set)) => set.active(k),
            (TensorKernel::Wgmma(_), Err(why)) => {
                panic!("a Hopper kernel without the sm_90a module ({why}): a caller bug")
            }
            (TensorKernel::Turing(k), _) => panic!(
                "{} is the f16 side's (Gemm::tensor_function): a caller bug",
                k.symbol()
            ),
        }
    }
}

/// A and B and the integer A and B ([`reference::integer`]) in one 16-bit
/// type, in device memory: what a tensor-core side's kernels and cuBLAS
/// read.
struct HalfInputs {
    a: CudaSlice<u16>,
    b: CudaSlice<u16>,
    a_int: CudaSlice<u16>,
    b_int: CudaSlice<u16>,
}

impl HalfInputs {
    /// The four matrices `host` (A, B, the integer A and B) rounded to
    /// `half` and uploaded, checked for room first.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`]; the driver's allocation or copy error.
    fn upload(gpu: &Gpu, half: Half, host: [&[f32]; 4]) -> Result<HalfInputs> {
        let bytes = host.iter().map(|m| m.len() * size_of::<u16>()).sum();
        gpu.require_free_memory(
            bytes,
            &format!(
                "the GEMM lesson's {} A and B and integer inputs",
                half.name()
            ),
        )?;
        let [a, b, a_int, b_int] = host;
        let inputs = HalfInputs {
            a: gpu.upload_half(a, half)?,
            b: gpu.upload_half(b, half)?,
            a_int: gpu.upload_half(a_int, half)?,
            b_int: gpu.upload_half(b_int, half)?,
        };
        gpu.sync_after(&format!("uploading the {} tensor-core inputs", half.name()))?;
        Ok(inputs)
    }

    /// A and B of the kind `inputs` names.
    fn pick(&self, inputs: Inputs) -> (&CudaSlice<u16>, &CudaSlice<u16>) {
        match inputs {
            Inputs::Fills => (&self.a, &self.b),
            Inputs::Integers => (&self.a_int, &self.b_int),
        }
    }
}

/// The FP16 tensor-core side: the sm_75 module's f16 kernel (compute
/// capability 7.5 and up, a T4 included) and A and B in f16 (the fills,
/// multiples of 1/256 in [-1, 1), and the integer inputs are exact in f16,
/// so they are the FP32 kernels' inputs exactly).
pub struct Fp16Cores {
    kernels: KernelSet<F16Kernel>,
    inputs: HalfInputs,
}

impl Fp16Cores {
    /// Finds the f16 kernel in the base module and uploads A, B and the
    /// integer inputs as f16, on a GPU of compute capability 7.5 or more; on
    /// an older one, or where the module was built for an architecture below
    /// sm_75 (`LAB_PTX_ARCH`, which leaves the kernel out), the reason (the
    /// outer `Ok`).
    ///
    /// # Errors
    /// The kernel missing from a module built for sm_75 or later, or any
    /// other driver error; [`Error::OutOfMemory`].
    pub fn new(
        gpu: &Gpu,
        a: &[f32],
        b: &[f32],
        int_a: &[f32],
        int_b: &[f32],
    ) -> Result<std::result::Result<Fp16Cores, String>> {
        let (major, minor) = gpu.info.compute_capability;
        if (major, minor) < (7, 5) {
            return Ok(Err(format!(
                "{} has compute capability {major}.{minor}; the f16 mma.sync m16n8k8 and ldmatrix need 7.5 or more",
                gpu.info.name
            )));
        }
        if !crate::ptx::base_has_fp16_mma() {
            return Ok(Err(format!(
                "the PTX is built for {} (LAB_PTX_ARCH), below sm_75, where ldmatrix and the f16 mma.sync m16n8k8 of {} do not exist",
                crate::ptx::PTX_ARCH,
                F16Kernel::F16Mma.symbol()
            )));
        }
        let kernels = KernelSet::new(gpu)?;
        let inputs = HalfInputs::upload(gpu, Half::F16, [a, b, int_a, int_b])?;
        Ok(Ok(Fp16Cores { kernels, inputs }))
    }
}

/// The name cuBLAS's GEMM of `half` inputs has in rows, errors and checks.
pub fn cublas_half_symbol(half: Half) -> &'static str {
    match half {
        Half::Bf16 => "cublasGemmEx_bf16",
        Half::F16 => "cublasGemmEx_fp16",
    }
}

impl Gemm<'_> {
    /// Launches the tensor-core `kernel` at the current shape (queued).
    ///
    /// # Errors
    /// [`Error::Size`] for a shape the kernel refuses or a GPU without its
    /// module; a launch the driver refuses.
    pub fn launch_tc(&mut self, kernel: impl Into<TensorKernel>) -> Result<()> {
        let kernel = kernel.into();
        let (m, n, k) = self.shape;
        if let Some(why) = kernel.refusal(self.shape) {
            return Err(Error::Size(why));
        }
        if let (
            TensorKernel::Mma(TcKernel::Bf16SwizzledWide),
            Ok(TensorCores {
                wide: Some(why), ..
            }),
        ) = (kernel, &self.tensor)
        {
            return Err(Error::Size(format!(
                "{} cannot run on this GPU: {why}",
                kernel.symbol()
            )));
        }
        let (gpu, inputs) = (self.gpu, self.inputs);
        if kernel == TensorKernel::Wgmma(WgKernel::Bf16Tma) {
            let tc = self
                .tensor
                .as_mut()
                .map_err(|why| Error::Size(why.clone()))?;
            tc.encode_maps(gpu, self.shape, inputs)?;
        }
        let size_err = |why: &String| Error::Size(why.clone());
        let (launch, half_inputs, maps) = match kernel {
            TensorKernel::Turing(id) => {
                let h = self.fp16.as_ref().map_err(size_err)?;
                (h.kernels.launch(gpu, id), &h.inputs, None)
            }
            TensorKernel::Mma(id) => {
                let tc = self.tensor.as_ref().map_err(size_err)?;
                (tc.kernels.launch(gpu, id), &tc.inputs, None)
            }
            TensorKernel::Wgmma(id) => {
                let tc = self.tensor.as_ref().map_err(size_err)?;
                let set = tc.hopper.as_ref().map_err(size_err)?;
                // The TMA kernel reads A and B through their tensor maps.
                let maps = tc.maps.as_ref().filter(|_| id == WgKernel::Bf16Tma);
                (set.launch(gpu, id), &tc.inputs, maps)
            }
        };
        let launch = launch
            .scalar(m as u32)
            .scalar(n as u32)
            .scalar(k as u32)
            .scalar(ALPHA);
        let launch = match maps {
            Some(maps) => launch.input(&maps.a).input(&maps.b),
            None => {
                let (a, b) = half_inputs.pick(inputs);
                launch.input(a).input(b)
            }
        };
        let launch = launch.scalar(BETA).input(&self.c).output(&mut self.d);
        // SAFETY: A and B (16-bit) hold the fills' first elements, at least
        // m*k and k*n (set_shape checked the f32 buffers of the same
        // length), C and D m*n floats; k and n are multiples of 8 (checked
        // above); the grid covers D and the block has its dynamic shared
        // memory (allowed when the module loaded, for every kernel but a
        // refused wide one, returned above); the parameter kinds are
        // checked.
        unsafe { launch.launch(kernel.launch_config(m, n)) }
    }

    /// The Rust or twin function (the side in use) of a tensor-core
    /// `kernel`, where its side loaded and the GPU runs it (not the wide
    /// swizzled kernel where [`TensorCores::wide`] refuses it).
    pub fn tensor_function(&self, kernel: TensorKernel) -> Option<&cudarc::driver::CudaFunction> {
        match kernel {
            TensorKernel::Turing(k) => self.fp16.as_ref().ok().map(|h| h.kernels.active(k)),
            TensorKernel::Wgmma(_) if self.tensor.as_ref().is_ok_and(|tc| tc.hopper.is_err()) => {
                None
            }
            TensorKernel::Mma(TcKernel::Bf16SwizzledWide)
                if self.tensor.as_ref().is_ok_and(|tc| tc.wide.is_some()) =>
            {
                None
            }
            _ => self.tensor.as_ref().ok().map(|tc| tc.function(kernel)),
        }
    }

    /// The tensor-core kernels of `half` this GPU runs: the bf16 side's
    /// ([`Gemm::tensor_kernels`]), or the f16 kernel; none where that side
    /// did not load.
    pub fn tensor_kernels_of(&self, half: Half) -> Vec<TensorKernel> {
        match (half, &self.fp16) {
            (Half::Bf16, _) => self.tensor_kernels(),
            (Half::F16, Ok(_)) => F16Kernel::ALL.iter().map(|&k| k.into()).collect(),
            (Half::F16, Err(_)) => Vec::new(),
        }
    }

    /// Why this GPU has no tensor-core kernel of `half`, if it has none.
    pub fn no_tensor_kernels(&self, half: Half) -> Option<&str> {
        match half {
            Half::Bf16 => self.tensor.as_ref().err().map(String::as_str),
            Half::F16 => self.fp16.as_ref().err().map(String::as_str),
        }
    }

    /// The tensor-core kernels this GPU runs ([`TensorCores::kernels`]);
    /// none where the tensor-core side did not load.
    pub fn tensor_kernels(&self) -> Vec<TensorKernel> {
        self.tensor
            .as_ref()
            .map(TensorCores::kernels)
            .unwrap_or_default()
    }

    /// cuBLAS's GEMM of `half` inputs (`cublasGemmEx`, f32 sums) at the
    /// current shape, in place on D after copying C into it (queued).
    ///
    /// # Errors
    /// [`Error::Cublas`] where cuBLAS is missing or refuses; [`Error::Size`]
    /// without the inputs of `half`.
    pub fn launch_cublas_half(&mut self, half: Half) -> Result<()> {
        self.copy_c_into_d()?;
        self.cublas_half_gemm(half)
    }

    /// cuBLAS's GEMM of `half` inputs alone, in place on D: what its timing
    /// measures.
    ///
    /// # Errors
    /// As [`Gemm::launch_cublas_half`].
    pub fn cublas_half_gemm(&mut self, half: Half) -> Result<()> {
        let (m, n, k) = self.shape;
        let cublas = self
            .cublas
            .as_ref()
            .map_err(|why| Error::Cublas(why.clone()))?;
        let (a, b) = match half {
            Half::Bf16 => self.tensor.as_ref().map(|tc| tc.inputs.pick(Inputs::Fills)),
            Half::F16 => self.fp16.as_ref().map(|h| h.inputs.pick(Inputs::Fills)),
        }
        .map_err(|why| Error::Size(why.clone()))?;
        let stream = &self.gpu.stream;
        let (d_ptr, _d) = self.d.device_ptr_mut(stream);
        let (a_ptr, _a) = a.device_ptr(stream);
        let (b_ptr, _b) = b.device_ptr(stream);
        // SAFETY: A and B hold m*k and k*n 16-bit values of `half`, D m*n
        // floats, D overlaps neither, and the handle is bound to this stream.
        unsafe { cublas.gemm_half_row_major(half, m, n, k, ALPHA, a_ptr, b_ptr, BETA, d_ptr) }
            .map_err(Error::Cublas)
    }

    /// Runs a tensor-core `kernel` at the current shape into a poisoned D
    /// and returns D.
    ///
    /// # Errors
    /// As the launches; a fault, charged to the kernel.
    pub fn output_tc(&mut self, kernel: TensorKernel) -> Result<Vec<f32>> {
        self.output_of(kernel.symbol(), |g| g.launch_tc(kernel))
    }

    /// Runs cuBLAS's GEMM of `half` inputs at the current shape into a
    /// poisoned D (C copied in first) and returns D.
    ///
    /// # Errors
    /// As [`Gemm::launch_cublas_half`]; a fault, charged to cuBLAS.
    pub fn output_cublas_half(&mut self, half: Half) -> Result<Vec<f32>> {
        self.output_of(cublas_half_symbol(half), |g| g.launch_cublas_half(half))
    }

    /// Checks a tensor-core `kernel` at `shape`: in full against the f64
    /// reference for [`TC_SMALL`], else at the sampled positions, each
    /// within [`TC_BOUND_FACTOR`] times [`bound`]; and against `cublas`
    /// (cuBLAS's output at this shape for the kernel's precision), within
    /// twice that at the largest magnitudes.
    ///
    /// # Errors
    /// As [`Gemm::output_tc`].
    pub fn check_tc(
        &mut self,
        kernel: impl Into<TensorKernel>,
        shape: (usize, usize, usize),
        cublas: Option<&[f32]>,
    ) -> Result<Vec<Failure>> {
        let kernel = kernel.into();
        self.set_shape(shape)?;
        let got = self.output_tc(kernel)?;
        let what = format!("cuBLAS's {} GEMM", kernel.precision().name());
        let failures = self.reference_failures(
            kernel.symbol(),
            &got,
            shape,
            TC_SMALL,
            TC_BOUND_FACTOR,
            cublas,
            &what,
        );
        Ok(failures)
    }

    /// The exact check of a tensor-core `kernel` at `shape`: on the integer
    /// inputs ([`reference::integer`]), where every partial sum is exact,
    /// its output must equal the naive FP32 kernel's in every element. A
    /// wrong or stale tile anywhere changes some element by at least 0.75.
    ///
    /// # Errors
    /// As the launches.
    pub fn check_tc_exact(
        &mut self,
        kernel: impl Into<TensorKernel>,
        shape: (usize, usize, usize),
    ) -> Result<Vec<Failure>> {
        let kernel = kernel.into();
        self.set_shape(shape)?;
        self.set_inputs(Inputs::Integers);
        let naive = self.output(Some(Kernel::Naive));
        let got = naive.and_then(|naive| Ok((naive, self.output_tc(kernel)?)));
        self.set_inputs(Inputs::Fills);
        let (naive, got) = got?;
        let (m, n, k) = shape;
        Ok(first_mismatch(&got, &naive, Tolerance::Exact)
            .map(|e| Failure {
                kernel: kernel.symbol(),
                detail: format!("{m} x {n} x {k}, integer inputs (exact sums): not the naive FP32 kernel's result: {e}"),
            })
            .into_iter()
            .collect())
    }

    /// Every tensor-core kernel's output at `shape` (on the fills) against
    /// the first of its family's, bit for bit: the `mma.sync` kernels share
    /// tiles and the order of their `mma`s, and the `wgmma` kernels theirs,
    /// so any difference is a wrong or stale tile. (The families are not
    /// held to each other's bits: a `wgmma` sums its 16 products with its own
    /// adder, which need not round as `mma.sync`'s does.)
    ///
    /// # Errors
    /// As the launches.
    pub fn check_tc_same_sums(&mut self, shape: (usize, usize, usize)) -> Result<Vec<Failure>> {
        self.set_shape(shape)?;
        let (mma, wgmma): (Vec<TensorKernel>, Vec<TensorKernel>) = self
            .tensor_kernels()
            .into_iter()
            .partition(|k| matches!(k, TensorKernel::Mma(_)));
        let mut failures = Vec::new();
        for family in [mma, wgmma] {
            let Some((&first, rest)) = family.split_first() else {
                continue;
            };
            let want = self.output_tc(first)?;
            for &kernel in rest {
                let got = self.output_tc(kernel)?;
                let (m, n, k) = shape;
                failures.extend(first_mismatch(&got, &want, Tolerance::Exact).map(|e| Failure {
                    kernel: kernel.symbol(),
                    detail: format!("{m} x {n} x {k}: not {}'s sums (same tiles, same order of tensor-core steps): {e}", first.symbol()),
                }));
            }
        }
        Ok(failures)
    }
}

/// A row of the GEMM lesson's comparison with its CUDA C twins: an FP32
/// kernel (the sm_75 module), or a tensor-core kernel (the sm_80 or sm_90a
/// module, compared where it loads and the compared size is one it runs
/// at).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GemmRow {
    /// An FP32 kernel.
    Fp32(Kernel),
    /// A tensor-core kernel.
    Tensor(TensorKernel),
}

impl GemmRow {
    /// The kernel's symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            GemmRow::Fp32(k) => k.symbol(),
            GemmRow::Tensor(k) => k.symbol(),
        }
    }
}

impl TwinRows for Gemm<'_> {
    type Unit = GemmRow;

    fn units(&self) -> Vec<GemmRow> {
        let mut units: Vec<GemmRow> = Kernel::ALL.iter().map(|&k| GemmRow::Fp32(k)).collect();
        let runs = |k: &TensorKernel| k.refusal(self.shape).is_none();
        let tensor = Half::ALL
            .into_iter()
            .flat_map(|half| self.tensor_kernels_of(half));
        units.extend(tensor.filter(runs).map(GemmRow::Tensor));
        units
    }

    fn label(&self, unit: GemmRow) -> &'static str {
        unit.symbol()
    }

    fn shown(&mut self, unit: GemmRow) -> Shown<'_> {
        match (unit, &self.tensor) {
            (GemmRow::Fp32(k), _) => shown_in(&self.kernels, k),
            (GemmRow::Tensor(TensorKernel::Turing(k)), _) => match &self.fp16 {
                Ok(h) => shown_in(&h.kernels, k),
                Err(why) => panic!(
                    "an f16 row ({}) without its side ({why}): a caller bug",
                    k.symbol()
                ),
            },
            (GemmRow::Tensor(TensorKernel::Mma(k)), Ok(tc)) => {
                shown_from(&tc.kernels, k, Module::Sm80.ptx())
            }
            (
                GemmRow::Tensor(TensorKernel::Wgmma(k)),
                Ok(TensorCores {
                    hopper: Ok(set), ..
                }),
            ) => shown_from(set, k, Module::Sm90a.ptx()),
            (GemmRow::Tensor(k), _) => panic!(
                "a tensor-core row ({}) without its module: a caller bug",
                k.symbol()
            ),
        }
    }

    /// Every kernel set's twins come from the one NVRTC module.
    fn load_twins(&mut self, gpu: &Gpu, c_ptx: &str) -> Result<()> {
        self.kernels.load_twins(gpu, c_ptx)?;
        if let Ok(h) = &mut self.fp16 {
            h.kernels.load_twins(gpu, c_ptx)?;
        }
        if let Ok(tc) = &mut self.tensor {
            tc.kernels.load_twins(gpu, c_ptx)?;
            for kernel in tc.mma_kernels() {
                let twin = tc
                    .kernels
                    .get(kernel, Side::CudaC)
                    .expect("the twins just loaded");
                crate::kernels::allow_dynamic_shared(
                    twin,
                    TensorKernel::from(kernel).dynamic_shared_bytes(),
                )?;
            }
            if let Ok(set) = &mut tc.hopper {
                set.load_twins(gpu, c_ptx)?;
                for &kernel in WgKernel::ALL {
                    let twin = set.get(kernel, Side::CudaC).expect("the twins just loaded");
                    crate::kernels::allow_dynamic_shared(
                        twin,
                        TensorKernel::from(kernel).dynamic_shared_bytes(),
                    )?;
                }
            }
        }
        Ok(())
    }

    fn use_side(&mut self, side: Side) {
        self.kernels.use_side(side);
        if let Ok(h) = &mut self.fp16 {
            h.kernels.use_side(side);
        }
        if let Ok(tc) = &mut self.tensor {
            tc.kernels.use_side(side);
            if let Ok(set) = &mut tc.hopper {
                set.use_side(side);
            }
        }
    }

    /// At the small shape, against the reference in full (the tensor-core
    /// kernel also exactly on the integer inputs); the output's bits (on
    /// the fills) for the comparison with the twin.
    fn check_unit(&mut self, unit: GemmRow) -> Result<(Vec<Failure>, Vec<u64>)> {
        let shape = self.shape;
        let (failures, got) = match unit {
            GemmRow::Fp32(k) => Gemm::check(self, k, SMALL, None, None)?,
            GemmRow::Tensor(k) => {
                let mut failures = self.check_tc_exact(k, TC_SMALL)?;
                failures.extend(self.check_tc(k, TC_SMALL, None)?);
                (failures, self.output_tc(k)?)
            }
        };
        self.set_shape(shape)?;
        Ok((
            failures,
            got.iter().map(|v| u64::from(v.to_bits())).collect(),
        ))
    }

    /// At the shape the twins were made for (the compared size).
    fn time_unit(&mut self, unit: GemmRow, plan: Plan) -> Result<Timing> {
        self.time(Timed::Kernel(unit), plan)
    }
}

/// `row`'s GFLOP/s over `reference`'s, both rows timed alone: the share of
/// cuBLAS row against row, where both have a rate.
fn row_share(row: &Row, reference: &Row) -> Option<f64> {
    Some(row.gflop_per_s()? / reference.gflop_per_s()?)
}

/// Reads `row`'s share of cuBLAS both ways: row against row, against
/// `reference` (cuBLAS's row), into its `cublas_share`; and in rounds of
/// `kernel` (the row's kernel) beside `cublas`, timed now at the lesson's
/// current shape ([`Gemm::time_rounds`]), into [`Share::fields`]'s fields.
/// Returns both: the share row against row, where both rows have a rate,
/// and the rounds' reading.
///
/// # Errors
/// As [`Gemm::time_rounds`].
fn read_share(
    lesson: &mut Gemm<'_>,
    row: &mut Row,
    reference: &Row,
    kernel: GemmRow,
    cublas: Timed,
    plan: Plan,
) -> Result<(Option<f64>, Share)> {
    let of_rows = row_share(row, reference);
    if let Some(share) = of_rows {
        row.fields.insert("cublas_share".into(), json!(share));
    }
    let (kernel_timing, cublas_timing) = lesson.time_rounds(kernel, cublas, plan)?;
    let share = Share::of(&kernel_timing, &cublas_timing);
    row.fields
        .extend(share.fields().map(|(k, v)| (k.to_string(), v)));
    Ok((of_rows, share))
}

/// Why `lesson` has no tensor-core rows of `half` at `side` cubed, as the
/// report says it: no kernels of that precision on this GPU, or a size
/// they refuse (all of them the same sizes); `None` where they run.
fn no_tensor_rows(lesson: &Gemm<'_>, half: Half, side: usize) -> Option<String> {
    if let Some(why) = lesson.no_tensor_kernels(half) {
        return Some(format!("No {} tensor-core rows: {why}.", half.upper()));
    }
    let kernels = lesson.tensor_kernels_of(half);
    let why = kernels.first()?.refusal((side, side, side))?;
    Some(format!(
        "No {} tensor-core rows at {side}: {why}.",
        half.upper()
    ))
}

/// The sizes from which the lesson also times every row held
/// ([`Gemm::time_held`]): 4096 and 8192, the sizes its targets are set at.
pub const HELD_FROM: usize = 4096;

/// How long the held rows run untimed and then timed ([`Gemm::time_held`]);
/// the held section's text and the rows' JSON `hold` read it from here.
pub const HOLD: Hold = Hold::DEFAULT;

/// Every row of `side` again, held: the size's section marked held, with
/// the FP32 rows (read by `fp32_limit`) after cuBLAS SGEMM, then the
/// tensor-core rows of each precision the size's section ran (read by
/// `tensor_limit`) after cuBLAS's GEMM of that precision ([`held_rows`]);
/// `bytes` are the FP32 and the 16-bit rows' bytes a launch and `flop`
/// their FLOP.
///
/// # Errors
/// As [`Gemm::time_held`].
fn held_section(
    lesson: &mut Gemm<'_>,
    side: usize,
    (by, by_half, fl): (f64, f64, f64),
    fp32_limit: &dyn Fn(Row) -> Row,
    tensor_limit: &dyn Fn(Half, Row) -> Row,
    plan: Plan,
    shares: &mut [serde_json::Value],
) -> Result<Section> {
    let hold = HOLD;
    let mut held = Section::new(format!("{side} x {side} x {side}, held"));
    held.line(format!(
        "Held: each row of {side} again, alone{}: untimed launches for at least {} s (the warm-ups, then \
         whole batches), then batches of {} timed for at least {} s and {} batches; the rows give the median \
         over those batches, not over the footer's {}. Under a power limit a kernel run alone for a while \
         meets the clock its own power draw holds the board at, where the rows above met the clock the work \
         just before them left; the clock column says where the SM clock moved while a row was timed.",
        if lesson.cublas.is_ok() { ", cuBLAS's first at each precision" } else { "" },
        hold.untimed_s,
        plan.launches_per_batch,
        hold.timed_s,
        hold.min_batches,
        plan.batches
    ));
    let fp32: Vec<GemmRow> = Kernel::ALL.iter().map(|&k| GemmRow::Fp32(k)).collect();
    let sgemm = lesson.cublas.is_ok().then_some(Timed::CublasSgemm);
    let mut rows = held_rows(
        lesson,
        side,
        &fp32,
        sgemm,
        "fp32",
        (by, fl),
        fp32_limit,
        plan,
        shares,
        &mut held,
    )?;
    // The tensor-core rows the size's section ran (it says why where there
    // are none).
    for half in Half::ALL {
        if no_tensor_rows(lesson, half, side).is_some() {
            continue;
        }
        let kernels: Vec<GemmRow> = lesson
            .tensor_kernels_of(half)
            .into_iter()
            .map(GemmRow::Tensor)
            .collect();
        let cublas = lesson.cublas.is_ok().then_some(Timed::CublasGemmEx(half));
        rows.extend(held_rows(
            lesson,
            side,
            &kernels,
            cublas,
            half.name(),
            (by_half, fl),
            &|row: Row| tensor_limit(half, row),
            plan,
            shares,
            &mut held,
        )?);
    }
    held.rows = rows;
    Ok(held)
}

/// One precision's rows at `side`, timed held ([`Gemm::time_held`]) at
/// the lesson's current shape: `cublas` first (one of cuBLAS's GEMMs of
/// their precision, where cuBLAS loaded),
/// then each of `kernels`, into rows keyed `{symbol}/{side}/held` of
/// `precision` (the rows' JSON `precision`) that `limit` reads, with
/// `bytes` and `flop` a launch. Each kernel's line in `section` gives its
/// share of cuBLAS held (named by [`Timed::throughput`]) beside its two other readings, from its entry in `shares` (the JSON
/// facts' `cublas_share`, row `{symbol}/{side}`), which gains
/// `cublas_share_held`.
///
/// # Errors
/// As [`Gemm::time_held`].
#[allow(clippy::too_many_arguments)]
fn held_rows(
    lesson: &mut Gemm<'_>,
    side: usize,
    kernels: &[GemmRow],
    cublas: Option<Timed>,
    precision: &str,
    (bytes, flop): (f64, f64),
    limit: &dyn Fn(Row) -> Row,
    plan: Plan,
    shares: &mut [serde_json::Value],
    section: &mut Section,
) -> Result<Vec<Row>> {
    let row = |key: String, label: String, timing: Timing| {
        let mut row = limit(Row::new(key, label, timing).bytes(bytes).flop(flop));
        row.fields.insert("hold".into(), json!(HOLD));
        row.fields.insert("precision".into(), json!(precision));
        row
    };
    let reference = match cublas {
        Some(c) => {
            let timing = lesson.time_held(c, plan)?;
            Some(row(
                format!("{}/{side}/held", c.symbol()),
                c.label(),
                timing,
            ))
        }
        None => None,
    };
    let what = cublas.map_or_else(String::new, Timed::throughput);
    let mut rows = Vec::new();
    for &kernel in kernels {
        let timing = lesson.time_held(Timed::Kernel(kernel), plan)?;
        let mut held = row(
            format!("{}/{side}/held", kernel.symbol()),
            Timed::Kernel(kernel).label(),
            timing,
        );
        if let Some(reference) = &reference
            && let Some(share) = row_share(&held, reference)
        {
            held.fields.insert("cublas_share_held".into(), json!(share));
            let key = format!("{}/{side}", kernel.symbol());
            let (of_rows, rounds) = note_held_share(shares, &key, share);
            section.line(held_sentence(
                &key, &what, &held, reference, of_rows, rounds,
            ));
        }
        rows.push(held);
    }
    rows.extend(reference);
    Ok(rows)
}

/// Adds `share` (held) to the entry of `shares` (the JSON facts'
/// `cublas_share`) whose `row` is `key`, as `cublas_share_held`; returns
/// that entry's share row against row and in rounds, where it has them.
/// An entry that is missing is left so, and both come back `None`.
pub fn note_held_share(
    shares: &mut [serde_json::Value],
    key: &str,
    share: f64,
) -> (Option<f64>, Option<f64>) {
    match shares.iter_mut().find(|e| e["row"] == key) {
        Some(entry) => {
            entry["cublas_share_held"] = json!(share);
            (
                entry["cublas_share"].as_f64(),
                entry["cublas_share_rounds"].as_f64(),
            )
        }
        None => (None, None),
    }
}

/// The report's line for a kernel's row `key` held: its share of `what`
/// held (`held`'s rate over `reference`'s, cuBLAS's row held; both rows
/// need their FLOP, else the share reads 0), each row's median ms a launch
/// and count of timed batches, then the share row against row (`of_rows`)
/// and in rounds (`rounds`), where there is one.
pub fn held_sentence(
    key: &str,
    what: &str,
    held: &Row,
    reference: &Row,
    of_rows: Option<f64>,
    rounds: Option<f64>,
) -> String {
    let others: Vec<String> = [(of_rows, "row against row"), (rounds, "in rounds")]
        .into_iter()
        .filter_map(|(v, how)| v.map(|v| format!("{:.1}% {how}", 100.0 * v)))
        .collect();
    format!(
        "{key}: {:.1}% of {what} held ({:.4} ms a launch, median of {} batches, against cuBLAS's {:.4} ms, of {}){}.",
        100.0 * row_share(held, reference).unwrap_or(0.0),
        held.timing.median_ms(),
        held.timing.samples_ms.len(),
        reference.timing.median_ms(),
        reference.timing.samples_ms.len(),
        if others.is_empty() {
            String::new()
        } else {
            format!("; {}", others.join(", "))
        }
    )
}

/// `f`'s registers, shared and local bytes, the blocks of `threads`
/// threads with `dynamic` bytes of dynamic shared memory one SM of `gpu`
/// holds (the occupancy API), and the theoretical occupancy that gives, in % of the SM's
/// resident threads.
///
/// # Errors
/// Driver errors.
fn occupancy_of(
    gpu: &Gpu,
    f: &cudarc::driver::CudaFunction,
    threads: u32,
    dynamic: u32,
) -> Result<(crate::compare::FunctionStats, u32, f64)> {
    let stats = crate::compare::FunctionStats::of(f)?;
    let blocks = f
        .occupancy_max_active_blocks_per_multiprocessor(threads, dynamic as usize, None)
        .map_err(|source| Error::Driver {
            call: "cuOccupancyMaxActiveBlocksPerMultiprocessor",
            source,
        })?;
    let occupancy =
        100.0 * f64::from(blocks * threads) / f64::from(gpu.info.max_threads_per_sm.max(1));
    Ok((stats, blocks, occupancy))
}

/// The name the FP32 rows' readings give their limit.
pub const FMA_CEILING: &str = "the measured FMA ceiling";

/// The name the tensor-core rows' readings give their limit.
pub const TENSOR_CEILING: &str = "the measured tensor-core ceiling";

/// The tensor-core ceiling as `lab roofline` measures it
/// ([`crate::roofline::tensor`]: BF16 from compute capability 8.0,
/// `mma_peak`, `wgmma_peak` on 9.0 and cuBLAS's BF16 GEMM; FP16 on 7.5,
/// `mma_peak_f16` and cuBLAS's FP16 GEMM; the fastest of them), at the
/// roofline's sizes (its
/// quick ones for `--quick`), checked, then timed with `options.plan`.
/// Returns the ceiling, or why there is none (no sizes for this GPU, too
/// little memory, a module that does not load), and the checks' failures
/// (the lesson fails on any).
///
/// # Errors
/// A fault in a check or a timing, or a driver error during them.
fn measured_tensor_ceiling(
    gpu: &Gpu,
    options: &RunOptions<'_>,
) -> Result<(
    std::result::Result<crate::roofline::tensor::TensorCeiling, String>,
    Vec<Failure>,
)> {
    use crate::roofline::tensor::{TensorCeiling, TensorPeak, TensorSizes, unavailable};
    let sizes = if options.quick {
        TensorSizes::quick(&gpu.info)
    } else {
        TensorSizes::for_device(&gpu.info)
    };
    let Some(sizes) = sizes else {
        return Ok((
            Err(unavailable(&gpu.info)
                .unwrap_or_else(|| "no tensor-core sizes for this GPU".into())),
            Vec::new(),
        ));
    };
    let mut peak = match TensorPeak::new(gpu, sizes) {
        Ok(p) => p,
        Err(e @ (Error::OutOfMemory { .. } | Error::Size(_) | Error::Driver { .. })) => {
            return Ok((Err(e.to_string()), Vec::new()));
        }
        Err(e) => return Err(e),
    };
    let failures = peak.check()?;
    if !failures.is_empty() {
        return Ok((Err("its checks failed".into()), failures));
    }
    let timings = peak.time(options.plan, &indicatif::ProgressBar::hidden())?;
    Ok((
        Ok(TensorCeiling::new(&gpu.info, sizes, timings)),
        Vec::new(),
    ))
}

/// The lesson's sizes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sizes {
    /// The square sizes each kernel is checked and timed at, ascending.
    pub sides: Vec<usize>,
    /// The size the CUDA C comparison times at.
    pub compared: usize,
}

/// The device memory the lesson holds, in f32 matrices of the largest
/// size: A, B, C and D; A and B in bf16 (one) and f16 (one); the integer A
/// and B in f32 (two), bf16 (one) and f16 (one).
pub const MATRICES: usize = 10;

/// The square sizes of a full run: 1024 to 8192, and 4095, whose edges no
/// tile divides.
pub const SIDES: [usize; 5] = [1024, 2048, 4095, 4096, 8192];

impl Sizes {
    /// A full run: those of [`SIDES`] whose [`MATRICES`] take at most a
    /// quarter of the GPU's memory (all five on a 16 GiB T4: 2.5 GiB at 8192);
    /// `quick`: 128 (for the sanitizer).
    pub fn new(info: &crate::gpu::DeviceInfo, quick: bool) -> Sizes {
        if quick {
            return Sizes {
                sides: vec![128],
                compared: 128,
            };
        }
        let fits = |s: usize| MATRICES * s * s * size_of::<f32>() <= info.total_memory_bytes / 4;
        let sides: Vec<usize> = SIDES.iter().copied().filter(|&s| fits(s)).collect();
        let sides = if sides.is_empty() { vec![1024] } else { sides };
        let compared = sides
            .iter()
            .copied()
            .filter(|&s| s <= 4096)
            .max()
            .unwrap_or(sides[0]);
        Sizes { sides, compared }
    }
}

impl LessonSizes for Sizes {
    fn for_gpu(info: &crate::gpu::DeviceInfo, quick: bool) -> Result<Sizes> {
        Ok(Sizes::new(info, quick))
    }

    /// The four matrices at the largest size, together: a GEMM re-reads
    /// its inputs from the caches by design, so this is the footprint the
    /// run touches, not a stream read once.
    fn streams(&self) -> Vec<Stream> {
        let s = *self.sides.last().unwrap_or(&0);
        vec![Stream::of::<f32>("A, B, C, D", 4 * s * s)]
    }

    fn device_bytes(&self) -> usize {
        let s = *self.sides.last().unwrap_or(&0);
        MATRICES * s * s * size_of::<f32>()
    }
}

/// The CUDA C twins.
pub const CUDA_C_SOURCE: &str = include_str!("gemm.cu");

/// The GEMM lesson as `lab` runs it.
pub struct GemmLesson;

impl lesson::Lesson for GemmLesson {
    const NAME: &'static str = "gemm";
    const ABOUT: &'static str = "GEMM from a thread per output to 2D register blocking, float4 accesses and warp tiles with loads a step ahead in FP32, then on the tensor cores: FP16 mma.sync m16n8k8 (from a T4 on), BF16 mma.sync, ldmatrix, cp.async (from compute capability 8.0), on Hopper wgmma fed by cp.async and by TMA, checked against a CPU reference and cuBLAS, timed beside cuBLAS at 1024 to 8192.";
    type Kernel = Kernel;
    type Sizes = Sizes;
    type Twins<'g> = Gemm<'g>;

    fn block_sizes() -> serde_json::Value {
        json!({
            "gemm_naive": [NAIVE_BLOCK.0, NAIVE_BLOCK.1],
            "gemm_tiled": [TILE, TILE],
            "gemm_regblock_1d": {"threads": R1_THREADS, "block_tile": [R1_BLOCK_M, R1_BLOCK_N, R1_BLOCK_K], "thread_tile": [R1_THREAD_M, 1]},
            "gemm_regblock": {"threads": REG_THREADS, "block_tile": [BLOCK_M, BLOCK_N, BLOCK_K], "thread_tile": [THREAD_M, THREAD_N]},
            "gemm_vectorized": {"threads": REG_THREADS, "block_tile": [BLOCK_M, BLOCK_N, BLOCK_K], "thread_tile": [THREAD_M, THREAD_N]},
            "gemm_warptiled": {"threads": REG_THREADS, "block_tile": [BLOCK_M, BLOCK_N, BLOCK_K], "warp_tile": [64, 32],
                "thread_tile": [THREAD_M, THREAD_N], "launch_bounds": [REG_THREADS, WARP_MIN_BLOCKS]},
            "gemm_bf16_mma": {"threads": TC_THREADS, "block_tile": [TC_BLOCK_M, TC_BLOCK_N, TC_BLOCK_K], "warp_tile": [64, 32],
                "stages": TC_STAGES},
            "gemm_f16_mma": {"threads": TC_THREADS, "block_tile": [TC_BLOCK_M, TC_BLOCK_N, TC_BLOCK_K], "warp_tile": [64, 32],
                "stages": TC_STAGES, "launch_bounds": [TC_THREADS, F16_MIN_BLOCKS]},
            "gemm_bf16_pipelined": {"threads": TC_THREADS, "block_tile": [TC_BLOCK_M, TC_BLOCK_N, TC_BLOCK_K], "warp_tile": [64, 32],
                "stages": TC_PIPE_STAGES},
            "gemm_bf16_swizzled": {"threads": SW_THREADS, "block_tile": [SW_BLOCK_M, SW_BLOCK_N, SW_BLOCK_K], "warp_tile": [64, 64],
                "stages": SW_STAGES, "group": SW_GROUP, "launch_bounds": [SW_THREADS, SW_MIN_BLOCKS]},
            "gemm_bf16_swizzled_wide": {"threads": SWW_THREADS, "block_tile": [SW_BLOCK_M, SWW_BLOCK_N, SWW_BLOCK_K], "warp_tile": [64, 64],
                "stages": SWW_STAGES, "group": SW_GROUP, "launch_bounds": [SWW_THREADS, SWW_MIN_BLOCKS], "dynamic_shared_bytes": SWW_BYTES},
            "gemm_bf16_wgmma": {"threads": WG_THREADS, "block_tile": [WG_BLOCK_M, WG_BLOCK_N, WG_BLOCK_K],
                "warpgroup_tile": [64, WG_BLOCK_N], "stages": WG_STAGES, "group": WG_GROUP},
            "gemm_bf16_tma": {"threads": WG_THREADS, "block_tile": [WG_BLOCK_M, WG_BLOCK_N, WG_BLOCK_K],
                "warpgroup_tile": [64, WG_BLOCK_N], "stages": WG_STAGES, "group": WG_GROUP, "boxes": [WG_TMA_BOX_A, WG_TMA_BOX_B]},
        })
    }

    /// The f16 kernel, where the base module has it (built for sm_75 or
    /// later).
    fn more_base_kernels() -> Vec<(&'static str, &'static [crate::kernels::Param])> {
        if crate::ptx::base_has_fp16_mma() {
            F16Kernel::ALL
                .iter()
                .map(|k| (k.symbol(), k.params()))
                .collect()
        } else {
            Vec::new()
        }
    }

    /// The constants the twins use, as `#define`s, then the twins.
    fn cuda_c() -> String {
        format!(
            "#define NAIVE_BLOCK_X {}\n#define NAIVE_BLOCK_Y {}\n#define TILE {TILE}\n#define R1_BLOCK_M {R1_BLOCK_M}\n\
             #define R1_BLOCK_N {R1_BLOCK_N}\n#define R1_BLOCK_K {R1_BLOCK_K}\n#define R1_THREAD_M {R1_THREAD_M}\n\
             #define R1_THREADS {R1_THREADS}\n#define BLOCK_M {BLOCK_M}\n\
             #define BLOCK_N {BLOCK_N}\n#define BLOCK_K {BLOCK_K}\n#define THREAD_M {THREAD_M}\n#define THREAD_N {THREAD_N}\n\
             #define REG_THREADS {REG_THREADS}\n#define REG_LOADS {REG_LOADS}\n#define WARP_MIN_BLOCKS {WARP_MIN_BLOCKS}\n#define F16_MIN_BLOCKS {F16_MIN_BLOCKS}\n#define TC_BLOCK_M {TC_BLOCK_M}\n\
             #define TC_BLOCK_N {TC_BLOCK_N}\n#define TC_BLOCK_K {TC_BLOCK_K}\n#define TC_THREADS {TC_THREADS}\n\
             #define TC_A_STRIDE {TC_A_STRIDE}\n#define TC_B_STRIDE {TC_B_STRIDE}\n#define TC_STAGES {TC_STAGES}\n\
             #define TC_STAGE_BYTES {TC_STAGE_BYTES}\n#define TC_PIPE_STAGES {TC_PIPE_STAGES}\n#define SW_BLOCK_M {SW_BLOCK_M}\n\
             #define SW_BLOCK_N {SW_BLOCK_N}\n#define SW_BLOCK_K {SW_BLOCK_K}\n#define SW_THREADS {SW_THREADS}\n\
             #define SW_MIN_BLOCKS {SW_MIN_BLOCKS}\n#define SW_STAGES {SW_STAGES}\n#define SW_GROUP {SW_GROUP}\n\
             #define SWW_BLOCK_N {SWW_BLOCK_N}\n#define SWW_BLOCK_K {SWW_BLOCK_K}\n#define SWW_THREADS {SWW_THREADS}\n\
             #define SWW_MIN_BLOCKS {SWW_MIN_BLOCKS}\n#define SWW_STAGES {SWW_STAGES}\n#define WG_BLOCK_M {WG_BLOCK_M}\n#define WG_GROUP {WG_GROUP}\n\
             #define WG_BLOCK_N {WG_BLOCK_N}\n#define WG_BLOCK_K {WG_BLOCK_K}\n#define WG_THREADS {WG_THREADS}\n\
             #define WG_STAGES {WG_STAGES}\n#define WG_A_BYTES {WG_A_BYTES}\n#define WG_STAGE_BYTES {WG_STAGE_BYTES}\n\
             #define WG_TILE_ALIGN {WG_TILE_ALIGN}\n#define WG_A_SBO {WG_A_SBO}\n#define WG_B_LBO {WG_B_LBO}\n\
             #define WG_B_SBO {WG_B_SBO}\n#define WG_TMA_SHARED_BYTES {WG_TMA_SHARED_BYTES}\n#define MBARRIER_TIMEOUT_NS {}ull\n{CUDA_C_SOURCE}",
            NAIVE_BLOCK.0, NAIVE_BLOCK.1, WG_MBARRIER_TIMEOUT_NS
        )
    }

    /// The small shape, then each size: cuBLAS's output, every kernel
    /// checked; only if everything passes, each timed with cuBLAS beside it.
    fn run(
        gpu: &Gpu,
        sizes: &Sizes,
        context: Context,
        options: &RunOptions<'_>,
    ) -> Result<Outcome<Box<dyn lesson::Report>>> {
        let largest = *sizes.sides.last().expect("at least one size");
        let mut lesson = Gemm::new(gpu, largest)?;
        let mut failures = Vec::new();
        for &kernel in Kernel::ALL {
            failures.extend(lesson.check(kernel, SMALL, None, None)?.0);
        }
        let cublas_line = match &lesson.cublas {
            Ok(c) => format!(
                "cuBLAS {} ({}), SGEMM in its default math mode (FP32, no TF32). Each kernel's share of cuBLAS is read two ways at every size: \
                 row against row (its row and cuBLAS's, each timed alone: at each size and precision cuBLAS's row first, then \
                 the kernels' in the table's order), and, after every row of the size, in rounds that time a batch of the \
                 kernel and one of cuBLAS's back to back, the order reversed every other round. Under a power limit the clock a batch meets depends on what ran just before it; where \
                 the two readings disagree past the rounds' spread, the share is known only to within both.{}",
                c.version(),
                c.path().display(),
                if sizes.sides.iter().any(|&side| side >= HELD_FROM) && !options.quick {
                    format!(
                        " From {HELD_FROM} on there is a third reading, held: each row again after a second of its own \
                         launches, timed for a second more (the sections marked held)."
                    )
                } else {
                    String::new()
                }
            ),
            Err(why) => format!(
                "No cuBLAS row: {why}. Every kernel still runs, checked against the CPU reference."
            ),
        };
        for &side in &sizes.sides {
            let shape = (side, side, side);
            lesson.set_shape(shape)?;
            let cublas = match lesson.cublas {
                Ok(_) => {
                    let got = lesson.output(None)?;
                    let (a, b, c) = (
                        &lesson.a_host[..side * side],
                        &lesson.b_host[..side * side],
                        &lesson.c_host[..side * side],
                    );
                    failures.extend(check_samples("cublasSgemm", &got, a, b, c, shape));
                    Some(got)
                }
                Err(_) => None,
            };
            let (naive_failures, naive) =
                lesson.check(Kernel::Naive, shape, cublas.as_deref(), None)?;
            failures.extend(naive_failures);
            for &kernel in &Kernel::ALL[1..] {
                failures.extend(
                    lesson
                        .check(kernel, shape, cublas.as_deref(), Some(&naive))?
                        .0,
                );
            }
        }
        // The tensor-core kernels of each 16-bit precision: in full at
        // their small shape, then at each size they run at, exactly on the
        // integer inputs, and against the samples and cuBLAS's GEMM of that
        // precision on the fills.
        lesson.enable_tensor_cores()?;
        for half in Half::ALL {
            let kernels = lesson.tensor_kernels_of(half);
            let Some(&first) = kernels.first() else {
                continue;
            };
            for &kernel in &kernels {
                failures.extend(lesson.check_tc(kernel, TC_SMALL, None)?);
                failures.extend(lesson.check_tc_exact(kernel, TC_SMALL)?);
            }
            for &side in &sizes.sides {
                let shape = (side, side, side);
                if first.refusal(shape).is_some() {
                    continue;
                }
                lesson.set_shape(shape)?;
                let cublas = match lesson.cublas {
                    Ok(_) => {
                        let got = lesson.output_cublas_half(half)?;
                        let (a, b, c) = (
                            &lesson.a_host[..side * side],
                            &lesson.b_host[..side * side],
                            &lesson.c_host[..side * side],
                        );
                        failures.extend(check_samples_within(
                            cublas_half_symbol(half),
                            &got,
                            a,
                            b,
                            c,
                            shape,
                            TC_BOUND_FACTOR,
                        ));
                        Some(got)
                    }
                    Err(_) => None,
                };
                for &kernel in &kernels {
                    failures.extend(lesson.check_tc(kernel, shape, cublas.as_deref())?);
                    failures.extend(lesson.check_tc_exact(kernel, shape)?);
                }
                if half == Half::Bf16 {
                    failures.extend(lesson.check_tc_same_sums(shape)?);
                }
            }
        }
        if !failures.is_empty() {
            return Ok(Outcome::Failed(failures));
        }
        // The tensor-core rows of the ceiling's precision (BF16 from compute
        // capability 8.0, FP16 on 7.5) are read against the ceiling `lab
        // roofline` measures, measured here in the same run (its chains and
        // cuBLAS checked first), before any GEMM is timed.
        let ceiling_half = crate::roofline::tensor::ceiling_half(&gpu.info);
        let side_loaded = match ceiling_half {
            Some(Half::Bf16) => lesson.tensor.is_ok(),
            Some(Half::F16) => lesson.fp16.is_ok(),
            None => false,
        };
        let ceiling = if side_loaded {
            let (ceiling, found) = measured_tensor_ceiling(gpu, options)?;
            if !found.is_empty() {
                return Ok(Outcome::Failed(found));
            }
            Some(ceiling)
        } else {
            None
        };
        let ceiling_value = ceiling
            .as_ref()
            .and_then(|c| c.as_ref().ok())
            .map(|c| c.gflop_per_s());
        // The precision whose rows read against it (the measured ceiling's,
        // which `TensorSizes` takes from `ceiling_half`): none where it was
        // not measured.
        let ceiling_half = ceiling_half.filter(|_| side_loaded);
        // The FP32 rows, likewise, against the FP32 ceiling `lab roofline`
        // measures (`fma_peak`, checked exactly first).
        let fma = match crate::roofline::fma_ceiling::measure(gpu, options.quick, options.plan)? {
            Ok(f) => f,
            Err(failure) => return Ok(Outcome::Failed(vec![failure])),
        };

        let mut sections = Vec::new();
        let mut shares = Vec::new();
        let mut occupancy_lines = Vec::new();
        let mut occupancy_facts = Vec::new();
        for &kernel in Kernel::ALL {
            let (stats, blocks, pct) = lesson.occupancy(kernel)?;
            occupancy_lines.push(format!(
                "{}: {} registers a thread, {} bytes of shared memory a block, {blocks} block(s) an SM: {pct:.1}% \
                 theoretical occupancy.",
                kernel.symbol(),
                stats.registers,
                stats.shared_bytes
            ));
            occupancy_facts.push(json!({"symbol": kernel.symbol(), "registers": stats.registers, "shared_bytes": stats.shared_bytes,
                "local_bytes": stats.local_bytes, "blocks_per_sm": blocks, "occupancy_pct": pct}));
        }
        for kernel in Half::ALL
            .into_iter()
            .flat_map(|half| lesson.tensor_kernels_of(half))
        {
            let Some(function) = lesson.tensor_function(kernel) else {
                continue;
            };
            {
                let dynamic = kernel.dynamic_shared_bytes();
                let threads = kernel.launch_config(1, 1).block_dim.0;
                let (stats, blocks, pct) = occupancy_of(gpu, function, threads, dynamic)?;
                occupancy_lines.push(format!(
                    "{} ({}): {} registers a thread, {} bytes of shared memory a block, {blocks} block(s) an SM: \
                     {pct:.1}% theoretical occupancy.",
                    kernel.symbol(),
                    kernel.module_name(),
                    stats.registers,
                    stats.shared_bytes + dynamic as i32
                ));
                occupancy_facts.push(json!({"symbol": kernel.symbol(), "registers": stats.registers,
                    "shared_bytes": stats.shared_bytes + dynamic as i32, "dynamic_shared_bytes": dynamic,
                    "local_bytes": stats.local_bytes, "blocks_per_sm": blocks, "occupancy_pct": pct,
                    "module": kernel.module_name().trim_end_matches(" module")}));
            }
        }
        if let Ok(TensorCores {
            wide: Some(why), ..
        }) = &lesson.tensor
        {
            occupancy_lines.push(format!(
                "No {}: {why}.",
                TcKernel::Bf16SwizzledWide.symbol()
            ));
        }
        if let Ok(TensorCores {
            hopper: Err(why), ..
        }) = &lesson.tensor
        {
            occupancy_lines.push(format!("No wgmma kernel: {why}."));
        }
        occupancy_lines.push(format!(
            "Measured before the timings below, as lab roofline measures it: the FP32 ceiling, {} FMA chains a thread \
             (fma_peak), {:.1} GFLOP/s{}. The FP32 rows are read against it.",
            kernels_gpu::roofline::FMA_CHAINS,
            fma.gflop_per_s,
            context
                .clocks
                .while_timed(fma.timing.window.as_ref())
                .and_then(|w| w.flag())
                .map_or(String::new(), |f| format!(" (timed while: {f})"))
        ));
        match &ceiling {
            Some(Ok(c)) => occupancy_lines.push(format!(
                "Measured before the timings below, as lab roofline measures it: {}{} The {} tensor-core rows are read \
                 against that ceiling.",
                c.sentence(),
                context
                    .clocks
                    .while_timed(c.timing().window.as_ref())
                    .and_then(|w| w.flag())
                    .map_or(String::new(), |f| format!(" It was timed while: {f}.")),
                c.sizes.half.upper()
            )),
            Some(Err(why)) => occupancy_lines.push(format!("No measured tensor-core ceiling: {why}.")),
            None => {}
        }
        if lesson.fp16.is_ok() && ceiling_half != Some(Half::F16) {
            occupancy_lines.push(format!(
                "No FP16 tensor-core ceiling is measured on this GPU (lab roofline's ceiling is BF16 from compute \
                 capability 8.0; its FP16 chains run where there is no bf16 mma.sync, on 7.5), so the FP16 rows are \
                 read against no limit{}.",
                if lesson.cublas.is_ok() { "; each gives its share of cuBLAS's FP16 GEMM" } else { "" }
            ));
        }
        // How a tensor-core row of `half` is read: against the measured
        // ceiling where it is of the ceiling's precision, else against none.
        let tensor_limit = |half: Half, row: Row| {
            if ceiling_half == Some(half) {
                row.against_gflop_per_s(TENSOR_CEILING, ceiling_value)
            } else {
                row.no_limit()
            }
        };
        for &side in &sizes.sides {
            lesson.set_shape((side, side, side))?;
            let (fl, by, by_half) = (
                flop(side, side, side),
                bytes(side, side, side),
                bytes_bf16(side, side, side),
            );
            let mut section = Section::new(format!(
                "{side} x {side} x {side}{}",
                if options.quick {
                    ", quick: not a measurement"
                } else {
                    ""
                }
            ));
            let cublas_timing = match lesson.cublas {
                Ok(_) => Some(lesson.time(Timed::CublasSgemm, options.plan)?),
                Err(_) => None,
            };
            let mut rows = Vec::new();
            for &kernel in Kernel::ALL {
                let timing = lesson.time(Timed::Kernel(GemmRow::Fp32(kernel)), options.plan)?;
                rows.push(
                    Row::new(
                        format!("{}/{side}", kernel.symbol()),
                        kernel.label(),
                        timing,
                    )
                    .bytes(by)
                    .flop(fl)
                    .against_gflop_per_s(FMA_CEILING, Some(fma.gflop_per_s)),
                );
            }
            if let Some(t) = cublas_timing {
                let reference =
                    Row::new(format!("cublasSgemm/{side}"), Timed::CublasSgemm.label(), t)
                        .bytes(by)
                        .flop(fl)
                        .against_gflop_per_s(FMA_CEILING, Some(fma.gflop_per_s));
                // After every row of the size, each kernel again in rounds
                // beside cuBLAS ([`Share`]).
                for (row, &kernel) in rows.iter_mut().zip(Kernel::ALL) {
                    let (of_rows, reading) = read_share(
                        &mut lesson,
                        row,
                        &reference,
                        GemmRow::Fp32(kernel),
                        Timed::CublasSgemm,
                        options.plan,
                    )?;
                    section.line(reading.sentence(
                        &row.key,
                        &Timed::CublasSgemm.throughput(),
                        of_rows,
                    ));
                    shares.push(json!({"row": row.key, "side": side, "precision": "fp32", "cublas_share": of_rows,
                        "cublas_share_rounds": reading.median()}));
                }
                rows.push(reference);
            }
            for row in rows.iter_mut() {
                row.fields.insert("precision".into(), json!("fp32"));
            }
            // The tensor-core rows of each 16-bit precision (FP32 sums),
            // against cuBLAS's GEMM of that precision; a size the kernels
            // refuse (all of them the same sizes), or a GPU without that
            // side, says why. The rows of the ceiling's precision are read
            // against the measured tensor-core ceiling, any other against no
            // limit.
            for half in Half::ALL {
                let kernels = lesson.tensor_kernels_of(half);
                if let Some(why) = no_tensor_rows(&lesson, half, side) {
                    section.line(why);
                    continue;
                }
                let read = |row: Row| tensor_limit(half, row);
                let cublas_tc = match lesson.cublas {
                    Ok(_) => Some(lesson.time(Timed::CublasGemmEx(half), options.plan)?),
                    Err(_) => None,
                };
                let mut tc_rows = Vec::new();
                for &kernel in &kernels {
                    let timing =
                        lesson.time(Timed::Kernel(GemmRow::Tensor(kernel)), options.plan)?;
                    tc_rows.push(read(
                        Row::new(
                            format!("{}/{side}", kernel.symbol()),
                            kernel.label(),
                            timing,
                        )
                        .bytes(by_half)
                        .flop(fl),
                    ));
                }
                let reference = cublas_tc.map(|t| {
                    read(
                        Row::new(
                            format!("{}/{side}", cublas_half_symbol(half)),
                            Timed::CublasGemmEx(half).label(),
                            t,
                        )
                        .bytes(by_half)
                        .flop(fl),
                    )
                });
                if let Some(reference) = &reference {
                    for (row, &kernel) in tc_rows.iter_mut().zip(&kernels) {
                        let (of_rows, reading) = read_share(
                            &mut lesson,
                            row,
                            reference,
                            GemmRow::Tensor(kernel),
                            Timed::CublasGemmEx(half),
                            options.plan,
                        )?;
                        section.line(reading.sentence(
                            &row.key,
                            &Timed::CublasGemmEx(half).throughput(),
                            of_rows,
                        ));
                        shares.push(json!({"row": row.key, "side": side, "precision": half.name(), "cublas_share": of_rows,
                            "cublas_share_rounds": reading.median()}));
                    }
                }
                rows.extend(tc_rows.into_iter().chain(reference).map(|mut r| {
                    r.fields.insert("precision".into(), json!(half.name()));
                    r
                }));
            }
            section.rows = rows;
            sections.push(section);
            if side >= HELD_FROM && !options.quick {
                sections.push(held_section(
                    &mut lesson,
                    side,
                    (by, by_half, fl),
                    &|row: Row| row.against_gflop_per_s(FMA_CEILING, Some(fma.gflop_per_s)),
                    &tensor_limit,
                    options.plan,
                    &mut shares,
                )?);
            }
        }
        if let Some(first) = sections.first_mut() {
            first.text.insert(
                0,
                format!(
                    "Every FP32 kernel matches the f64 reference at {} x {} x {} in every element and at {SAMPLES} sampled \
                     elements of every size, each within (k + 2) 2^-24 (|alpha| sum |a b| + |beta c|){}; and equals the \
                     naive kernel's output in every element.{}",
                    SMALL.0,
                    SMALL.1,
                    SMALL.2,
                    if lesson.cublas.is_ok() {
                        "; matches cuBLAS in every element within twice that bound at the largest |a|, |b|, |c| (1)"
                    } else {
                        ""
                    },
                    if lesson.tensor.is_ok() || lesson.fp16.is_ok() {
                        format!(
                            " Each tensor-core kernel matches the f64 reference at {} x {} x {} in every element and at the samples of \
                             every size it runs at, within {TC_BOUND_FACTOR} times that bound (tensor cores truncate in their sums){}; \
                             and, on integer inputs whose sums are exact, equals the naive FP32 kernel's output in every element.{}",
                            TC_SMALL.0,
                            TC_SMALL.1,
                            TC_SMALL.2,
                            if lesson.cublas.is_ok() {
                                "; matches cuBLAS's GEMM of its precision (BF16 or FP16) in every element within twice that"
                            } else {
                                ""
                            },
                            match &lesson.tensor {
                                Ok(TensorCores { hopper: Ok(_), .. }) => {
                                    " The BF16 mma.sync kernels give the same bits at every size they run at, and so do the wgmma \
                                     kernels among themselves."
                                }
                                Ok(_) => " The BF16 mma.sync kernels give the same bits at every size they run at.",
                                Err(_) => "",
                            }
                        )
                    } else {
                        String::new()
                    }
                ),
            );
            first.text.insert(1, cublas_line);
            for (i, line) in occupancy_lines.into_iter().enumerate() {
                first.text.insert(2 + i, line);
            }
        }
        SectionReport::passed(
            context,
            Findings {
                sections,
                facts: json!({
                    "alpha": ALPHA,
                    "beta": BETA,
                    "small_shape": [SMALL.0, SMALL.1, SMALL.2],
                    "tensor_core_small_shape": [TC_SMALL.0, TC_SMALL.1, TC_SMALL.2],
                    "tensor_core_bound_factor": TC_BOUND_FACTOR,
                    "sides": sizes.sides,
                    "cublas": lesson.cublas.as_ref().map(|c| c.version()).map_err(Clone::clone),
                    "fp16": lesson.fp16.as_ref().map(|_| F16Kernel::F16Mma.symbol()).map_err(Clone::clone),
                    "cublas_share": shares,
                    "kernels": occupancy_facts,
                    "fma_ceiling_gflop_per_s": fma.gflop_per_s,
                    "tensor_ceiling": match &ceiling {
                        Some(Ok(c)) => c.json(),
                        Some(Err(why)) => json!({ "why_none": why }),
                        None => serde_json::Value::Null,
                    },
                }),
            },
        )
    }

    /// Where the tensor-core rows' Rust PTX comes from, which the header's
    /// module line does not say.
    fn compare_notes(_sizes: &Sizes) -> Vec<String> {
        let symbols: Vec<&str> = TcKernel::ALL.iter().map(|k| k.symbol()).collect();
        let hopper: Vec<&str> = WgKernel::ALL.iter().map(|k| k.symbol()).collect();
        let turing: Vec<&str> = F16Kernel::ALL.iter().map(|k| k.symbol()).collect();
        vec![
            format!(
                "{}: the Rust side is the {} module every lesson loads (PTX ISA {}), compared where the GPU has compute \
                 capability 7.5 or more.",
                turing.join(", "),
                crate::ptx::PTX_ARCH,
                crate::ptx::isa_version()
            ),
            format!(
                "{}: the Rust side is the sm_80 module (PTX ISA 7.0), compared where the GPU has compute capability 8.0 or more.",
                symbols.join(", ")
            ),
            format!(
                "{}: the Rust side is the sm_90a module (PTX ISA 8.3), the twins NVRTC's for sm_90a, compared where the GPU has \
                 compute capability 9.0.",
                hopper.join(", ")
            ),
        ]
    }

    /// sm_90a on compute capability 9.0, where the twin of `gemm_bf16_wgmma`
    /// needs the architecture-specific target (its body is empty for any
    /// other); the GPU's own `sm_XY` elsewhere.
    fn twin_arch(cc: (i32, i32)) -> String {
        if Module::Sm90a.runs_on(cc) {
            "sm_90a".to_string()
        } else {
            format!("sm_{}{}", cc.0, cc.1)
        }
    }

    fn twins<'g>(gpu: &'g Gpu, sizes: &Sizes) -> Result<Gemm<'g>> {
        let mut twins = Gemm::new(gpu, sizes.compared)?;
        twins.enable_tensor_cores()?;
        twins.set_shape((sizes.compared, sizes.compared, sizes.compared))?;
        Ok(twins)
    }
}
