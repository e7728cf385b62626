//! The roofline's tensor-core ceiling: BF16 on GPUs of compute capability
//! 8.0 and up, `mma_peak` (from the sm_80 module) and, on 9.0,
//! `wgmma_peak` (from the sm_90a module); FP16 on 7.5 (a T4, which has f16
//! `mma.sync` m16n8k8 but no bf16), `mma_peak_f16` (from the sm_75 module
//! every lesson loads). Each is checked exactly and timed; cuBLAS's GEMM of
//! the same precision (`cublasGemmEx`, FP32 sums) is checked and timed
//! beside them; the ceiling the report draws is the fastest of them.
//!
//! A ceiling that cuBLAS beats is no ceiling. `mma.sync` is the tensor-core
//! instruction every GPU from compute capability 7.5 on runs (f16 from 7.5,
//! bf16 from 8.0); on Hopper (9.0) cuBLAS reaches the tensor cores through
//! `wgmma`, a warpgroup-wide asynchronous instruction that reads its
//! operands from shared memory, and goes faster than any chain of
//! `mma.sync`; so on 9.0 the lesson times chains of `wgmma` too. It takes
//! max(the `mma.sync` chains, `wgmma_peak`, cuBLAS's best) as the roof and
//! says which set it and by how much.

use cudarc::driver::{CudaSlice, LaunchConfig};
use kernels_gpu::roofline::{
    MMA_BLOCKS_PER_SM, MMA_CHAINS, MMA_FLOP, MMA_ITERS, MMA_ITERS_EXACT_MAX, MMA_OUT_PER_WARP,
    MMA_QUICK_ITERS, MMA_UNROLL, THREADS_PER_BLOCK, WGMMA_BLOCKS_PER_SM, WGMMA_ITERS,
    WGMMA_ITERS_EXACT_MAX, WGMMA_OUT_PER_WARPGROUP, WGMMA_QUICK_ITERS, WGMMA_SHARED_BYTES,
    WGMMA_STEP_FLOP,
};
use serde::Serialize;
use serde_json::json;

use super::CHUNK;
use super::model::per_second_e9;
use super::reference::{MmaPeak, PTX_ISA_LAYOUT, WgmmaPeak};
use crate::check::{Failure, Tolerance, first_mismatch};
use crate::cublas::{Cublas, Half};
use crate::error::{Error, Result};
use crate::gemm;
use crate::gpu::{DeviceInfo, Gpu};
use crate::kernels::{KernelSet, Launch};
use crate::timing::{self, Plan, Timing};

crate::kernel_ids! {
    /// The roofline's kernels in the sm_80 module (`host::ptx::PTX_SM80`),
    /// loaded on GPUs of compute capability 8.0 and up.
    pub enum TensorKernel {
        /// The BF16 tensor-core ceiling: MMA_CHAINS `mma.sync` chains a
        /// warp: (out, iterations).
        MmaPeak = "mma_peak" (Ptr, U32),
    }
}

crate::kernel_ids! {
    /// The roofline's kernel in the sm_75 module every lesson loads (built
    /// with `--cfg lab_fp16_mma` for sm_75 and later), for GPUs of compute
    /// capability 7.5, which have f16 `mma.sync` but no bf16.
    pub enum TuringTensorKernel {
        /// The FP16 tensor-core ceiling: `mma_peak`'s chains, each step two
        /// f16 `mma.sync` m16n8k8: (out, iterations).
        MmaPeakF16 = "mma_peak_f16" (Ptr, U32),
    }
}

crate::kernel_ids! {
    /// The roofline's kernels in the sm_90a module (`host::ptx::PTX_SM90A`),
    /// loaded on GPUs of compute capability 9.0 only.
    pub enum HopperKernel {
        /// The wgmma ceiling: 2 warpgroups a block, each a chain of
        /// `wgmma` m64n256k16 steps on shared tiles: (A tile, B tile, out,
        /// iterations).
        WgmmaPeak = "wgmma_peak" (Ptr, Ptr, Ptr, U32),
    }
}

pub use kernels_gpu::roofline::WGMMA_THREADS;

/// The square sides (m = n = k) cuBLAS's GEMM is timed at: the first
/// always, the second where its matrices take at most
/// 1 / [`CUBLAS_MEMORY_SHARE`] of the GPU's memory.
pub const CUBLAS_SIDES: [usize; 2] = [4096, 8192];

/// The one side cuBLAS is timed at in `--quick` runs: small, as the GEMM
/// lesson's quick side. At 1024 on the H200 cuBLAS 13.1 picks a Hopper
/// kernel (`nvjet_sm90_*`) in which racecheck reports hazards (its shared
/// memory is synchronised by TMA and mbarriers), and excluding that kernel
/// from racecheck makes the sanitizer fail; at 128 its kernel is clean
/// (docs/results/h200-2026-12-01-tensor-ceiling).
pub const CUBLAS_QUICK_SIDE: usize = 128;

/// The larger cuBLAS side runs only where its matrices take at most this
/// fraction (1 / 4) of the GPU's memory: the roofline's own buffers hold
/// up to 3/8 of it.
pub const CUBLAS_MEMORY_SHARE: usize = 4;

/// The precision of `info`'s GPU's tensor-core ceiling: BF16 from compute
/// capability 8.0, FP16 on 7.5 where the base module has `mma_peak_f16`
/// ([`crate::ptx::base_has_fp16_mma`]); `None` otherwise ([`unavailable`]
/// says why).
pub fn ceiling_half(info: &DeviceInfo) -> Option<Half> {
    let cc = info.compute_capability;
    if cc >= (8, 0) {
        Some(Half::Bf16)
    } else if cc >= (7, 5) && crate::ptx::base_has_fp16_mma() {
        Some(Half::F16)
    } else {
        None
    }
}

/// The chains' kernel of a `half` ceiling: `mma_peak` (bf16, sm_80
/// module) or `mma_peak_f16` (f16, sm_75 module).
pub fn mma_symbol(half: Half) -> &'static str {
    match half {
        Half::Bf16 => TensorKernel::MmaPeak.symbol(),
        Half::F16 => TuringTensorKernel::MmaPeakF16.symbol(),
    }
}

/// The module the chains of a `half` ceiling come from, as the report
/// names it.
pub fn mma_module(half: Half) -> &'static str {
    match half {
        Half::Bf16 => crate::ptx::Module::Sm80.name(),
        Half::F16 => "sm_75 module",
    }
}

/// Device bytes of one square cuBLAS GEMM of `side`: A and B in bf16 or
/// f16 (2 bytes an element), D in f32.
pub fn cublas_bytes(side: usize) -> usize {
    side * side * (2 + 2 + 4)
}

/// FLOP of one square GEMM of `side`: 2 side^3 (a multiply and an add per
/// product; [`gemm::flop`]).
pub fn cublas_flop(side: usize) -> f64 {
    gemm::flop(side, side, side)
}

/// The tensor-core ceiling's sizes: its precision, the chains' launch and
/// the cuBLAS GEMMs beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TensorSizes {
    /// The inputs' precision: bf16 (`mma_peak`, compute capability 8.0 and
    /// up) or f16 (`mma_peak_f16`, 7.5); cuBLAS's GEMM takes the same. Not
    /// in the recorded sizes (the GPU, which a comparison of runs matches,
    /// decides it, and the `ceiling-tensor` row names it), so the runs
    /// recorded before it existed still compare.
    #[serde(skip)]
    pub half: Half,
    /// Blocks of the chains' launch (`mma_peak` or `mma_peak_f16`),
    /// THREADS_PER_BLOCK threads each.
    pub mma_blocks: u32,
    /// Steps of each `mma.sync` chain (a multiple of MMA_UNROLL).
    pub mma_iters: u32,
    /// The side cuBLAS's GEMM is always timed (and checked) at.
    pub cublas_side: usize,
    /// The larger side it is also timed at, where its matrices fit
    /// [`CUBLAS_MEMORY_SHARE`]; `None` where they do not, or in `--quick`.
    pub cublas_large_side: Option<usize>,
    /// Blocks of `wgmma_peak`'s launch, [`WGMMA_THREADS`] threads each;
    /// `None` on a GPU without `wgmma` (any but compute capability 9.0:
    /// [`no_wgmma`] says why) and in an FP16 ceiling (`wgmma_peak` is
    /// bf16).
    pub wgmma_blocks: Option<u32>,
    /// Steps of each `wgmma_peak` warpgroup (4 `wgmma` m64n256k16 each).
    pub wgmma_iters: u32,
}

impl TensorSizes {
    /// The lesson's sizes on `info`'s GPU: MMA_BLOCKS_PER_SM blocks an SM
    /// of MMA_ITERS steps (several waves of warps on every SM), cuBLAS at
    /// [`CUBLAS_SIDES`] (the larger where it fits a quarter of memory), in
    /// [`ceiling_half`]'s precision. `None` where that has none
    /// ([`unavailable`] says why).
    pub fn for_device(info: &DeviceInfo) -> Option<TensorSizes> {
        let half = ceiling_half(info)?;
        Some(TensorSizes {
            half,
            mma_blocks: MMA_BLOCKS_PER_SM * info.sms.max(1),
            mma_iters: MMA_ITERS,
            cublas_side: CUBLAS_SIDES[0],
            cublas_large_side: Some(CUBLAS_SIDES[1])
                .filter(|&s| cublas_bytes(s) <= info.total_memory_bytes / CUBLAS_MEMORY_SHARE),
            wgmma_blocks: has_wgmma(info, half).then(|| WGMMA_BLOCKS_PER_SM * info.sms.max(1)),
            wgmma_iters: WGMMA_ITERS,
        })
    }

    /// `--quick`'s sizes: one block an SM, MMA_QUICK_ITERS steps
    /// (WGMMA_QUICK_ITERS for `wgmma_peak`), cuBLAS at
    /// [`CUBLAS_QUICK_SIDE`] only. `None` where [`ceiling_half`] is.
    pub fn quick(info: &DeviceInfo) -> Option<TensorSizes> {
        let half = ceiling_half(info)?;
        Some(TensorSizes {
            half,
            mma_blocks: info.sms.max(1),
            mma_iters: MMA_QUICK_ITERS,
            cublas_side: CUBLAS_QUICK_SIDE,
            cublas_large_side: None,
            wgmma_blocks: has_wgmma(info, half).then(|| info.sms.max(1)),
            wgmma_iters: WGMMA_QUICK_ITERS,
        })
    }

    /// The chains' kernel: [`mma_symbol`] of the precision.
    pub fn mma_symbol(&self) -> &'static str {
        mma_symbol(self.half)
    }

    /// What cuBLAS's GEMM of this precision is called in rows, failures
    /// and timings (`cublasGemmEx_bf16`, `cublasGemmEx_fp16`).
    pub fn cublas_symbol(&self) -> &'static str {
        gemm::cublas_half_symbol(self.half)
    }

    /// Warps of the chains' launch.
    pub fn mma_warps(&self) -> usize {
        self.mma_blocks as usize * (THREADS_PER_BLOCK / 32) as usize
    }

    /// Floats the chains' kernel writes: every chain's 16 x 8 tile, every
    /// warp.
    pub fn mma_out_len(&self) -> usize {
        self.mma_warps() * MMA_OUT_PER_WARP
    }

    /// FLOP of one chains' launch: warps x steps x MMA_CHAINS x 4096
    /// (MMA_FLOP, an m16n8k16 step: one `mma.sync` in bf16, two m16n8k8 in
    /// f16).
    pub fn mma_flop(&self) -> f64 {
        self.mma_warps() as f64 * f64::from(self.mma_iters) * MMA_CHAINS as f64 * MMA_FLOP as f64
    }

    /// Floats `wgmma_peak` writes: every warpgroup's 64 x 256 tile (0
    /// without `wgmma`).
    pub fn wgmma_out_len(&self) -> usize {
        self.wgmma_blocks
            .map_or(0, |b| b as usize * 2 * WGMMA_OUT_PER_WARPGROUP)
    }

    /// FLOP of one `wgmma_peak` launch: blocks x steps x WGMMA_STEP_FLOP
    /// (2 warpgroups x 4 `wgmma` m64n256k16 of 2 x 64 x 256 x 16); 0
    /// without `wgmma`.
    pub fn wgmma_flop(&self) -> f64 {
        self.wgmma_blocks.map_or(0.0, |b| {
            f64::from(b) * f64::from(self.wgmma_iters) * WGMMA_STEP_FLOP as f64
        })
    }

    /// `wgmma_peak`'s launch: `wgmma_blocks` blocks (1 without `wgmma`)
    /// of [`WGMMA_THREADS`] threads, WGMMA_SHARED_BYTES of dynamic shared
    /// memory.
    pub fn wgmma_launch_config(&self) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (self.wgmma_blocks.unwrap_or(1), 1, 1),
            block_dim: (WGMMA_THREADS, 1, 1),
            shared_mem_bytes: WGMMA_SHARED_BYTES,
        }
    }

    /// The sides cuBLAS is timed at, smallest first.
    pub fn cublas_sides(&self) -> Vec<usize> {
        std::iter::once(self.cublas_side)
            .chain(self.cublas_large_side)
            .collect()
    }

    /// Device bytes at most: the chains' and `wgmma_peak`'s outputs and
    /// the largest cuBLAS side's matrices (cuBLAS's own workspace and
    /// `wgmma_peak`'s 48 KiB of tiles are not counted).
    pub fn device_bytes(&self) -> usize {
        (self.mma_out_len() + self.wgmma_out_len()) * size_of::<f32>()
            + self
                .cublas_sides()
                .into_iter()
                .map(cublas_bytes)
                .max()
                .unwrap_or(0)
    }

    /// The chains' launch: `mma_blocks` blocks of THREADS_PER_BLOCK threads.
    pub fn launch_config(&self) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (self.mma_blocks, 1, 1),
            block_dim: (THREADS_PER_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// Checks what the chains' launch assumption and exact check need.
    ///
    /// # Errors
    /// [`Error::Size`] naming the relation that fails.
    pub fn validate(&self) -> Result<()> {
        let fail = |msg: String| Err(Error::Size(msg));
        if self.mma_iters == 0 || !self.mma_iters.is_multiple_of(MMA_UNROLL) {
            return fail(format!(
                "{} mma.sync steps a chain: {} runs whole trips of {MMA_UNROLL} steps, at least one",
                self.mma_iters,
                self.mma_symbol()
            ));
        }
        if self.mma_iters > MMA_ITERS_EXACT_MAX {
            return fail(format!(
                "{} mma.sync steps a chain: past {MMA_ITERS_EXACT_MAX} an accumulator can pass 2^24 and the exact check \
                 would fail on rounding",
                self.mma_iters
            ));
        }
        if self.mma_blocks == 0 || self.mma_blocks > i32::MAX as u32 {
            return fail(format!(
                "{} {} blocks: one launch's grid takes 1 to 2^31 - 1",
                self.mma_blocks,
                self.mma_symbol()
            ));
        }
        if self.cublas_sides().contains(&0) {
            return fail("a cuBLAS GEMM of side 0".into());
        }
        if self.half == Half::F16 && self.wgmma_blocks.is_some() {
            return fail("wgmma chains in an FP16 ceiling: wgmma_peak is bf16".into());
        }
        if self.wgmma_blocks.is_some() {
            if self.wgmma_iters == 0 || self.wgmma_iters > WGMMA_ITERS_EXACT_MAX {
                return fail(format!(
                    "{} wgmma steps a warpgroup: wgmma_peak runs 1 to {WGMMA_ITERS_EXACT_MAX} (past it an \
                     accumulator can pass 2^24 and the exact check would fail on rounding)",
                    self.wgmma_iters
                ));
            }
            if self
                .wgmma_blocks
                .is_some_and(|b| b == 0 || b > i32::MAX as u32)
            {
                return fail(format!(
                    "{:?} wgmma_peak blocks: one launch's grid takes 1 to 2^31 - 1",
                    self.wgmma_blocks
                ));
            }
        }
        Ok(())
    }
}

/// Why `info`'s GPU has no tensor-core ceiling, or `None` where it has one
/// ([`ceiling_half`]: BF16 from compute capability 8.0, FP16 on 7.5 where
/// the base module was built for sm_75 or later).
pub fn unavailable(info: &DeviceInfo) -> Option<String> {
    let (major, minor) = info.compute_capability;
    if ceiling_half(info).is_some() {
        None
    } else if (major, minor) < (7, 5) {
        Some(format!(
            "No tensor-core ceiling: {} has compute capability {major}.{minor}; f16 mma.sync m16n8k8 needs 7.5 or \
             more, bf16 mma.sync 8.0",
            info.name
        ))
    } else {
        Some(format!(
            "No tensor-core ceiling: the PTX is built for {} (LAB_PTX_ARCH), below sm_75, so the sm_75 module has no \
             {} (its f16 mma.sync m16n8k8 needs sm_75), and {}'s compute capability {major}.{minor} has no bf16 \
             mma.sync",
            crate::ptx::PTX_ARCH,
            TuringTensorKernel::MmaPeakF16.symbol(),
            info.name
        ))
    }
}

/// Whether a `half` ceiling on `info`'s GPU times `wgmma` chains: BF16 on
/// compute capability 9.0 ([`no_wgmma`]).
fn has_wgmma(info: &DeviceInfo, half: Half) -> bool {
    half == Half::Bf16 && no_wgmma(info).is_none()
}

/// Why `info`'s GPU has no `wgmma` chains, or `None` where it has them
/// (compute capability 9.0: `wgmma` exists only for the architecture-specific
/// target sm_90a, whose PTX no other GPU loads).
pub fn no_wgmma(info: &DeviceInfo) -> Option<String> {
    let cc = info.compute_capability;
    (!crate::ptx::Module::Sm90a.runs_on(cc)).then(|| {
        format!(
            "no wgmma chains: {} has compute capability {}.{}, and wgmma runs on 9.0 only (sm_90a)",
            info.name, cc.0, cc.1
        )
    })
}

/// Why the larger cuBLAS side was not timed at `sizes` on `info`'s GPU, or
/// `None` where it was.
pub fn large_side_skipped(info: &DeviceInfo, sizes: &TensorSizes) -> Option<String> {
    if sizes.cublas_large_side.is_some() {
        return None;
    }
    let side = CUBLAS_SIDES[1];
    Some(if sizes.cublas_side != CUBLAS_SIDES[0] {
        format!("{side}^3 not timed in a --quick run")
    } else {
        format!(
            "{side}^3 not timed: its matrices ({:.0} MiB) are over a quarter of the GPU's {:.1} GiB",
            crate::sizes::mib(cublas_bytes(side)),
            info.total_memory_bytes as f64 / (1u64 << 30) as f64
        )
    })
}

/// The first element of `got`, elements `start..` of the chains' output
/// (`mma_peak`'s or `mma_peak_f16`'s: the same values),
/// that is not exactly `reference`'s, as one line: index, got, wanted, and
/// where it sits (warp, chain, accumulator register, lane). `None` where
/// every element matches.
pub fn mma_peak_mismatch(got: &[f32], start: usize, reference: &MmaPeak) -> Option<String> {
    let want = reference.elements(start..start + got.len());
    let mut m = first_mismatch(got, &want, Tolerance::Exact)?;
    m.index += start;
    let within = m.index % MMA_OUT_PER_WARP;
    Some(format!(
        "{m} (warp {}, chain {}, accumulator register {}, lane {}); a fragment layout other than the PTX ISA's, a \
         skipped step or an output in another warp's place",
        m.index / MMA_OUT_PER_WARP,
        within / 128,
        within / 32 % 4,
        within % 32,
    ))
}

/// cuBLAS's operands at the largest side: A and B (the GEMM lesson's fills,
/// [`gemm::reference::matrix`], so the figures compare with that lesson's
/// cuBLAS rows) in the ceiling's precision, and D.
struct CublasOperands {
    cublas: Cublas,
    a: CudaSlice<u16>,
    b: CudaSlice<u16>,
    d: CudaSlice<f32>,
}

/// The `mma.sync` chains' kernel: `mma_peak` from the sm_80 module (BF16)
/// or `mma_peak_f16` from the sm_75 module (FP16). Both take (out,
/// iterations) and write the same exact output.
enum MmaChains {
    Bf16(KernelSet<TensorKernel>),
    Fp16(KernelSet<TuringTensorKernel>),
}

impl MmaChains {
    /// The kernel of a `half` ceiling.
    ///
    /// # Errors
    /// The driver refusing the sm_80 module, or the sm_75 module lacking
    /// `mma_peak_f16`.
    fn load(gpu: &Gpu, half: Half) -> Result<MmaChains> {
        Ok(match half {
            Half::Bf16 => MmaChains::Bf16(KernelSet::from_module(gpu, crate::ptx::Module::Sm80)?),
            Half::F16 => MmaChains::Fp16(KernelSet::new(gpu)?),
        })
    }

    /// A launch of the kernel, its arguments to come.
    fn launch<'a>(&'a self, gpu: &'a Gpu) -> Launch<'a> {
        match self {
            MmaChains::Bf16(set) => set.launch(gpu, TensorKernel::MmaPeak),
            MmaChains::Fp16(set) => set.launch(gpu, TuringTensorKernel::MmaPeakF16),
        }
    }
}

/// `wgmma_peak` from the sm_90a module, its two tiles (the reference's,
/// in bf16) and its output buffer.
struct WgmmaChains {
    kernels: KernelSet<HopperKernel>,
    a: CudaSlice<u16>,
    b: CudaSlice<u16>,
    out: CudaSlice<f32>,
}

/// The tensor-core side of one roofline run: the `mma.sync` chains'
/// kernel ([`TensorSizes::mma_symbol`]), its output buffer, `wgmma_peak`
/// (or why not), and cuBLAS with its operands (or why not).
pub struct TensorPeak<'g> {
    gpu: &'g Gpu,
    sizes: TensorSizes,
    chains: MmaChains,
    out: CudaSlice<f32>,
    wgmma: std::result::Result<WgmmaChains, String>,
    cublas: std::result::Result<CublasOperands, String>,
}

/// What the tensor-core side timed.
#[derive(Debug, Clone)]
pub struct TensorTimings {
    /// The `mma.sync` chains' timing.
    pub mma: Timing,
    /// `wgmma_peak`'s timing, or why the run has none (not compute
    /// capability 9.0, or the sm_90a module did not load).
    pub wgmma: std::result::Result<Timing, String>,
    /// cuBLAS's GEMM (the ceiling's precision) at each side, smallest
    /// first; or why cuBLAS was not timed (missing, or refused a call).
    pub cublas: std::result::Result<Vec<(usize, Timing)>, String>,
}

impl<'g> TensorPeak<'g> {
    /// Loads the chains' kernel (the sm_80 module's `mma_peak` for BF16, the
    /// sm_75 module's `mma_peak_f16` for FP16) and allocates its output;
    /// where `sizes` has `wgmma` blocks, loads the sm_90a module and uploads
    /// `wgmma_peak`'s tiles (a module the driver refuses costs only the
    /// `wgmma` row, whose absence the report explains); finds cuBLAS and,
    /// where it loads, uploads its A and B at the largest side.
    ///
    /// # Errors
    /// [`Error::Size`] for sizes the chains cannot run; [`Error::OutOfMemory`]
    /// before allocating; the driver refusing the sm_80 module (a GPU below
    /// 8.0 with BF16 sizes: take the sizes from [`TensorSizes::for_device`])
    /// or an allocation.
    pub fn new(gpu: &'g Gpu, sizes: TensorSizes) -> Result<Self> {
        sizes.validate()?;
        gpu.require_free_memory(sizes.device_bytes(), "the tensor-core ceiling's buffers")?;
        let chains = MmaChains::load(gpu, sizes.half)?;
        let out = gpu.alloc_f32(sizes.mma_out_len())?;
        let wgmma = match sizes.wgmma_blocks {
            None => Err(no_wgmma(&gpu.info)
                .unwrap_or_else(|| "no wgmma chains: these sizes have none".into())),
            Some(_) => match KernelSet::<HopperKernel>::from_module(gpu, crate::ptx::Module::Sm90a)
            {
                Err(e) => Err(format!(
                    "no wgmma chains: the sm_90a module did not load ({e})"
                )),
                Ok(set) => {
                    crate::kernels::allow_dynamic_shared(
                        set.active(HopperKernel::WgmmaPeak),
                        WGMMA_SHARED_BYTES,
                    )?;
                    let (a, b) = WgmmaPeak::tiles();
                    Ok(WgmmaChains {
                        kernels: set,
                        a: gpu.upload_bf16(&a)?,
                        b: gpu.upload_bf16(&b)?,
                        out: gpu.alloc_f32(sizes.wgmma_out_len())?,
                    })
                }
            },
        };
        let cublas = match Cublas::find(&gpu.stream) {
            Err(why) => Err(why),
            Ok(cublas) => {
                let side = sizes
                    .cublas_sides()
                    .into_iter()
                    .max()
                    .unwrap_or(sizes.cublas_side);
                let [sa, sb, _] = gemm::reference::STREAMS;
                let a = gpu.upload_half(&gemm::reference::matrix(side * side, sa), sizes.half)?;
                let b = gpu.upload_half(&gemm::reference::matrix(side * side, sb), sizes.half)?;
                let d = gpu.alloc_f32(side * side)?;
                gpu.sync_after("uploading cuBLAS's 16-bit inputs")?;
                Ok(CublasOperands { cublas, a, b, d })
            }
        };
        Ok(TensorPeak {
            gpu,
            sizes,
            chains,
            out,
            wgmma,
            cublas,
        })
    }

    /// The sizes every launch uses.
    pub fn sizes(&self) -> TensorSizes {
        self.sizes
    }

    /// cuBLAS, or why the run has none.
    pub fn cublas(&self) -> std::result::Result<&Cublas, &str> {
        self.cublas
            .as_ref()
            .map(|c| &c.cublas)
            .map_err(String::as_str)
    }

    /// Launches the chains' kernel once (asynchronously).
    ///
    /// # Errors
    /// A launch the driver refuses.
    pub fn launch(&mut self) -> Result<()> {
        let launch = self
            .chains
            .launch(self.gpu)
            .output(&mut self.out)
            .scalar(self.sizes.mma_iters);
        // SAFETY: `out` holds MMA_OUT_PER_WARP floats for every warp of the
        // launch (`mma_out_len`); blocks of THREADS_PER_BLOCK threads, a
        // whole number of warps; the step count is whole trips (validated);
        // the argument kinds are checked against the declared parameters.
        unsafe { launch.launch(self.sizes.launch_config()) }
    }

    /// Why the run has no `wgmma` chains, or `None` where it has them.
    pub fn wgmma_missing(&self) -> Option<&str> {
        self.wgmma.as_ref().err().map(String::as_str)
    }

    /// Launches `wgmma_peak` once (asynchronously).
    ///
    /// # Errors
    /// [`Error::Size`] where the run has no `wgmma` chains; a launch the
    /// driver refuses.
    pub fn launch_wgmma(&mut self) -> Result<()> {
        let sizes = self.sizes;
        let chains = self
            .wgmma
            .as_mut()
            .map_err(|why| Error::Size(why.clone()))?;
        let launch = chains
            .kernels
            .launch(self.gpu, HopperKernel::WgmmaPeak)
            .input(&chains.a)
            .input(&chains.b)
            .output(&mut chains.out)
            .scalar(sizes.wgmma_iters);
        // SAFETY: A and B are the 128 x 64 and 64 x 256 bf16 tiles
        // (`WgmmaPeak::tiles`, allocations 256-byte aligned); `out` holds
        // WGMMA_OUT_PER_WARPGROUP floats for each of the 2 warpgroups of
        // every block (`wgmma_out_len`); blocks of WGMMA_THREADS threads
        // with WGMMA_SHARED_BYTES of dynamic shared memory, allowed above;
        // the step count validated; the argument kinds are checked against
        // the declared parameters.
        unsafe { launch.launch(sizes.wgmma_launch_config()) }
    }

    /// cuBLAS's GEMM of `side` in the ceiling's precision (D = ALPHA A B,
    /// beta 0, so D is not read), queued.
    ///
    /// # Errors
    /// [`Error::Cublas`] where the run has no cuBLAS, a buffer is too short
    /// or cuBLAS refuses the call.
    pub fn launch_cublas(&mut self, side: usize) -> Result<()> {
        let ops = self
            .cublas
            .as_mut()
            .map_err(|why| Error::Cublas(why.clone()))?;
        ops.cublas
            .gemm_half_buffers(
                &self.gpu.stream,
                self.sizes.half,
                (side, side, side),
                kernels_gpu::gemm::ALPHA,
                &ops.a,
                &ops.b,
                0.0,
                &mut ops.d,
            )
            .map_err(Error::Cublas)
    }

    /// Runs the chains' kernel once into a poisoned (NaN) output and
    /// compares every element exactly with [`MmaPeak`] at the PTX ISA's
    /// fragment layout
    /// ([`TensorPeak::check_mma`]); where the run has `wgmma` chains, the
    /// same for `wgmma_peak` against [`WgmmaPeak`]
    /// ([`TensorPeak::check_wgmma`]). Then, where cuBLAS loaded, its GEMM at
    /// the checked side into a poisoned D, against the f64 reference at the
    /// GEMM lesson's sampled positions within its tensor-core bound
    /// ([`gemm::check_samples_within`]). Returns every failure; a cuBLAS
    /// call that cuBLAS refuses is no failure of a result: the run goes on
    /// without cuBLAS and says why.
    ///
    /// # Errors
    /// A fault (charged to the kernel or to cuBLAS) or a driver error.
    pub fn check(&mut self) -> Result<Vec<Failure>> {
        let reference = MmaPeak::new(PTX_ISA_LAYOUT, self.sizes.mma_iters);
        let mut failures: Vec<Failure> = self.check_mma(&reference)?.into_iter().collect();
        if self.wgmma.is_ok() {
            let reference = WgmmaPeak::new(self.sizes.wgmma_iters);
            failures.extend(self.check_wgmma(&reference)?);
        }
        match self.check_cublas() {
            Ok(found) => failures.extend(found),
            Err(Error::Cublas(why)) => self.cublas = Err(why),
            Err(e) => return Err(e),
        }
        Ok(failures)
    }

    /// Runs the chains' kernel once into a poisoned (NaN) output and
    /// compares every element exactly with `reference` (both kernels write
    /// the same: f16 and bf16 hold these small integers exactly), a chunk
    /// at a time
    /// ([`mma_peak_mismatch`]); the guard after the output must stay
    /// poisoned. The lesson's check passes the PTX ISA's layout at the
    /// launch's step count; a GPU test passes a wrong one, to see the check
    /// fail on the hardware.
    ///
    /// # Errors
    /// A fault, charged to the kernel; [`Error::WrotePastEnd`]; driver
    /// errors.
    pub fn check_mma(&mut self, reference: &MmaPeak) -> Result<Option<Failure>> {
        let sym = self.sizes.mma_symbol();
        let len = self.sizes.mma_out_len();
        self.gpu.poison_output(&mut self.out, len)?;
        self.launch()?;
        self.gpu.sync_after(sym)?;
        self.gpu.check_poison_after(&self.out, len, sym)?;
        let mut got = vec![0.0f32; CHUNK.min(len)];
        for start in (0..len).step_by(CHUNK) {
            let end = (start + CHUNK).min(len);
            let got = &mut got[..end - start];
            self.gpu.download_from(&self.out, start, got)?;
            if let Some(detail) = mma_peak_mismatch(got, start, reference) {
                return Ok(Some(Failure {
                    kernel: sym,
                    detail,
                }));
            }
        }
        Ok(None)
    }

    /// Runs `wgmma_peak` once into a poisoned (NaN) output and compares
    /// every element exactly with `reference`, a chunk at a time
    /// ([`WgmmaPeak::mismatch`]); the guard after the output must stay
    /// poisoned. The lesson passes the reference at the launch's step
    /// count; a GPU test passes one step fewer, to see the check fail.
    ///
    /// # Errors
    /// [`Error::Size`] where the run has no `wgmma` chains; a fault,
    /// charged to the kernel; [`Error::WrotePastEnd`]; driver errors.
    pub fn check_wgmma(&mut self, reference: &WgmmaPeak) -> Result<Option<Failure>> {
        let sym = HopperKernel::WgmmaPeak.symbol();
        let len = self.sizes.wgmma_out_len();
        {
            let chains = self
                .wgmma
                .as_mut()
                .map_err(|why| Error::Size(why.clone()))?;
            self.gpu.poison_output(&mut chains.out, len)?;
        }
        self.launch_wgmma()?;
        self.gpu.sync_after(sym)?;
        let chains = self
            .wgmma
            .as_ref()
            .map_err(|why| Error::Size(why.clone()))?;
        self.gpu.check_poison_after(&chains.out, len, sym)?;
        let mut got = vec![0.0f32; CHUNK.min(len)];
        for start in (0..len).step_by(CHUNK) {
            let end = (start + CHUNK).min(len);
            let got = &mut got[..end - start];
            self.gpu.download_from(&chains.out, start, got)?;
            if let Some(detail) = reference.mismatch(got, start) {
                return Ok(Some(Failure {
                    kernel: sym,
                    detail,
                }));
            }
        }
        Ok(None)
    }

    /// cuBLAS's part of [`TensorPeak::check`].
    fn check_cublas(&mut self) -> Result<Vec<Failure>> {
        if self.cublas.is_err() {
            return Ok(Vec::new());
        }
        let side = self.sizes.cublas_side;
        let len = side * side;
        let ops = self
            .cublas
            .as_mut()
            .map_err(|why| Error::Cublas(why.clone()))?;
        self.gpu.poison_output(&mut ops.d, len)?;
        let name = self.sizes.cublas_symbol();
        self.launch_cublas(side)?;
        self.gpu.sync_after(name)?;
        let ops = self
            .cublas
            .as_ref()
            .map_err(|why| Error::Cublas(why.clone()))?;
        let got = self.gpu.read_output(&ops.d, len, name)?;
        let [sa, sb, _] = gemm::reference::STREAMS;
        let (a, b) = (
            gemm::reference::matrix(len, sa),
            gemm::reference::matrix(len, sb),
        );
        // beta = 0: C is zero in the reference (D = ALPHA A B).
        let c = vec![0.0f32; len];
        let shape = (side, side, side);
        Ok(
            gemm::check_samples_within(name, &got, &a, &b, &c, shape, gemm::TC_BOUND_FACTOR)
                .into_iter()
                .collect(),
        )
    }

    /// Times the chains' kernel with `plan`, then `wgmma_peak` (where the
    /// run has it), then cuBLAS's GEMM at each side (where cuBLAS loaded).
    /// `progress` advances once per timing.
    ///
    /// # Errors
    /// Driver errors and faults; a cuBLAS call cuBLAS refuses is not one
    /// (the timings then say why cuBLAS has none).
    pub fn time(&mut self, plan: Plan, progress: &indicatif::ProgressBar) -> Result<TensorTimings> {
        let (mma_name, cublas_name) = (self.sizes.mma_symbol(), self.sizes.cublas_symbol());
        progress.set_message(format!("timing {mma_name}"));
        progress.inc(1);
        let gpu = self.gpu;
        let mma = timing::time_kernel(gpu, mma_name, plan, || self.launch())?;
        let wgmma = match &self.wgmma {
            Err(why) => Err(why.clone()),
            Ok(_) => {
                let sym = HopperKernel::WgmmaPeak.symbol();
                progress.set_message(format!("timing {sym}"));
                progress.inc(1);
                Ok(timing::time_kernel(gpu, sym, plan, || self.launch_wgmma())?)
            }
        };
        let cublas = match &self.cublas {
            Err(why) => Err(why.clone()),
            Ok(_) => {
                let mut rows = Vec::new();
                let mut refused = None;
                for side in self.sizes.cublas_sides() {
                    progress.set_message(format!("timing {cublas_name} at {side}^3"));
                    progress.inc(1);
                    match timing::time_kernel(gpu, cublas_name, plan, || self.launch_cublas(side)) {
                        Ok(t) => rows.push((side, t)),
                        Err(Error::Cublas(why)) => {
                            refused = Some(format!("cuBLAS refused the {side}^3 GEMM: {why}"));
                            break;
                        }
                        Err(e) => return Err(e),
                    }
                }
                match refused {
                    Some(why) => Err(why),
                    None => Ok(rows),
                }
            }
        };
        Ok(TensorTimings { mma, wgmma, cublas })
    }

    /// Timings of this side's steps for a progress bar: the chains,
    /// `wgmma_peak` where the run has it, and each cuBLAS side.
    pub fn timing_steps(&self) -> u64 {
        1 + u64::from(self.wgmma.is_ok())
            + if self.cublas.is_ok() {
                self.sizes.cublas_sides().len() as u64
            } else {
                0
            }
    }
}

/// Which measurement set the tensor-core ceiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Source {
    /// The `mma.sync` chains (`mma_peak` or `mma_peak_f16`).
    #[serde(rename = "mma.sync")]
    MmaSync,
    /// The `wgmma` chains of `wgmma_peak` (compute capability 9.0).
    #[serde(rename = "wgmma")]
    Wgmma,
    /// cuBLAS's GEMM (the ceiling's precision) at its fastest side.
    #[serde(rename = "cuBLAS")]
    Cublas,
}

impl Source {
    /// Its name in the report and the JSON (`mma.sync`, `wgmma`, `cuBLAS`).
    pub fn name(self) -> &'static str {
        match self {
            Source::MmaSync => "mma.sync",
            Source::Wgmma => "wgmma",
            Source::Cublas => "cuBLAS",
        }
    }
}

/// cuBLAS's GEMM at one side.
#[derive(Debug, Clone)]
pub struct CublasRow {
    /// m = n = k.
    pub side: usize,
    /// Its timing.
    pub timing: Timing,
    /// 2 side^3 FLOP over the median time, GFLOP/s.
    pub gflop_per_s: f64,
}

/// `wgmma_peak`'s timing and rate.
#[derive(Debug, Clone)]
pub struct WgmmaRow {
    /// Its timing.
    pub timing: Timing,
    /// [`TensorSizes::wgmma_flop`] over the median time, GFLOP/s.
    pub gflop_per_s: f64,
}

/// The tensor-core ceiling of one run: the `mma.sync` chains' rate,
/// `wgmma_peak`'s and cuBLAS's rates beside it (or why none), and the one
/// the roof is drawn at; all in [`TensorSizes::half`]'s precision.
#[derive(Debug, Clone)]
pub struct TensorCeiling {
    /// The sizes measured at.
    pub sizes: TensorSizes,
    /// The chains' timing.
    pub mma: Timing,
    /// The chains' FLOP ([`TensorSizes::mma_flop`]) over their median
    /// time, GFLOP/s.
    pub mma_gflop_per_s: f64,
    /// cuBLAS at each side, smallest first; or why there is none.
    pub cublas: std::result::Result<Vec<CublasRow>, String>,
    /// `wgmma_peak`, or why there is none.
    pub wgmma: std::result::Result<WgmmaRow, String>,
    /// Why the larger cuBLAS side was not timed, where it was not.
    pub large_side_skipped: Option<String>,
    /// The clock-derived limit ([`DeviceInfo::derived_tensor_flop_per_s`]),
    /// GFLOP/s; `None` where unknown.
    pub derived_gflop_per_s: Option<f64>,
}

impl TensorCeiling {
    /// The ceiling from a run's timings on `info`'s GPU at `sizes`.
    pub fn new(info: &DeviceInfo, sizes: TensorSizes, timings: TensorTimings) -> TensorCeiling {
        let cublas = timings.cublas.map(|rows| {
            rows.into_iter()
                .map(|(side, timing)| CublasRow {
                    side,
                    gflop_per_s: per_second_e9(cublas_flop(side), timing.median_ms()),
                    timing,
                })
                .collect()
        });
        let wgmma = timings.wgmma.map(|timing| WgmmaRow {
            gflop_per_s: per_second_e9(sizes.wgmma_flop(), timing.median_ms()),
            timing,
        });
        TensorCeiling {
            sizes,
            mma_gflop_per_s: per_second_e9(sizes.mma_flop(), timings.mma.median_ms()),
            mma: timings.mma,
            wgmma,
            cublas,
            large_side_skipped: large_side_skipped(info, &sizes),
            derived_gflop_per_s: info.derived_tensor_flop_per_s().map(|f| f / 1e9),
        }
    }

    /// The name its readings give the clock-derived limit: `the derived
    /// BF16 tensor-core peak` (or FP16).
    pub fn derived_name(&self) -> String {
        format!("the derived {} tensor-core peak", self.sizes.half.upper())
    }

    /// cuBLAS's fastest side, where it ran.
    pub fn cublas_best(&self) -> Option<&CublasRow> {
        self.cublas
            .as_ref()
            .ok()?
            .iter()
            .max_by(|x, y| x.gflop_per_s.total_cmp(&y.gflop_per_s))
    }

    /// The fastest chains: `wgmma_peak` where it ran and beat the
    /// `mma.sync` chains, else those; with its rate, GFLOP/s.
    pub fn chains(&self) -> (Source, f64) {
        match &self.wgmma {
            Ok(w) if w.gflop_per_s > self.mma_gflop_per_s => (Source::Wgmma, w.gflop_per_s),
            _ => (Source::MmaSync, self.mma_gflop_per_s),
        }
    }

    /// Which set the ceiling: cuBLAS where its best is faster than the
    /// fastest chains, else those chains.
    pub fn source(&self) -> Source {
        let (chains, rate) = self.chains();
        match self.cublas_best() {
            Some(c) if c.gflop_per_s > rate => Source::Cublas,
            _ => chains,
        }
    }

    /// The ceiling, GFLOP/s: max(the `mma.sync` chains, `wgmma_peak`,
    /// cuBLAS's best).
    pub fn gflop_per_s(&self) -> f64 {
        let rate = self.chains().1;
        self.cublas_best().map_or(rate, |c| c.gflop_per_s.max(rate))
    }

    /// The timing of what set the ceiling (its spread is the ceiling's
    /// noise).
    pub fn timing(&self) -> &Timing {
        match (self.source(), self.cublas_best(), &self.wgmma) {
            (Source::Cublas, Some(c), _) => &c.timing,
            (Source::Wgmma, _, Ok(w)) => &w.timing,
            _ => &self.mma,
        }
    }

    /// By how much cuBLAS's best exceeds the `mma.sync` chains, percent of
    /// the chains' rate; negative where it is slower; `None` without cuBLAS.
    pub fn cublas_over_mma_pct(&self) -> Option<f64> {
        self.cublas_best()
            .map(|c| 100.0 * (c.gflop_per_s / self.mma_gflop_per_s - 1.0))
    }

    /// By how much cuBLAS's best exceeds the `wgmma` chains, percent of
    /// their rate; negative where it is slower; `None` without cuBLAS or
    /// without `wgmma` chains.
    pub fn cublas_over_wgmma_pct(&self) -> Option<f64> {
        let w = self.wgmma.as_ref().ok()?;
        self.cublas_best()
            .map(|c| 100.0 * (c.gflop_per_s / w.gflop_per_s - 1.0))
    }

    /// The ridge point of the tensor roof over a bandwidth ceiling of
    /// `bandwidth_gb_per_s`, FLOP/byte: below it no kernel can be bound by
    /// the tensor cores.
    pub fn ridge(&self, bandwidth_gb_per_s: f64) -> f64 {
        self.gflop_per_s() / bandwidth_gb_per_s
    }

    /// The report's sentence: what set the ceiling, from this run's
    /// numbers, by how much cuBLAS beat or trailed the chains, what the
    /// `mma.sync` chains reached beside the `wgmma` ones, or why the run has
    /// no `wgmma` chains; the one-line caveat where cuBLAS did not run.
    pub fn sentence(&self) -> String {
        let tflop = |g: f64| g / 1e3;
        let precision = self.sizes.half.upper();
        let mma = match self.sizes.half {
            Half::Bf16 => format!("{MMA_CHAINS} mma.sync chains a warp"),
            Half::F16 => format!("{MMA_CHAINS} mma.sync chains a warp (each step two f16 m16n8k8)"),
        };
        let wgmma = "wgmma chains (2 warpgroups a block, m64n256k16)";
        let (chains, rate) = self.chains();
        let chains_name = match chains {
            Source::Wgmma => wgmma.to_string(),
            _ => mma.clone(),
        };
        let first = match (&self.cublas, self.cublas_best()) {
            (Err(why), _) => format!(
                "The {precision} tensor-core ceiling is the {chains_name}, {:.1} TFLOP/s, with a caveat: cuBLAS did not run \
                 ({why}), and cuBLAS's GEMM can be faster than chains of one instruction.",
                tflop(rate)
            ),
            (Ok(_), Some(best)) if self.source() == Source::Cublas => format!(
                "The {precision} tensor-core ceiling is cuBLAS's GemmEx at {}^3, {:.1} TFLOP/s: {:.1}% above the {chains_name} \
                 at {:.1} TFLOP/s, so on this GPU the chains are no ceiling and the roof is cuBLAS's.",
                best.side,
                tflop(best.gflop_per_s),
                100.0 * (best.gflop_per_s / rate - 1.0),
                tflop(rate)
            ),
            (Ok(_), Some(best)) => format!(
                "The {precision} tensor-core ceiling is the {chains_name}, {:.1} TFLOP/s; cuBLAS's best, {:.1} TFLOP/s at \
                 {}^3, is {:.1}% below it.",
                tflop(rate),
                tflop(best.gflop_per_s),
                best.side,
                100.0 * (1.0 - best.gflop_per_s / rate)
            ),
            (Ok(_), None) => format!(
                "The {precision} tensor-core ceiling is the {chains_name}, {:.1} TFLOP/s.",
                tflop(rate)
            ),
        };
        let second = match (&self.wgmma, chains) {
            (Err(why), _) => {
                let mut why = why.clone();
                if let Some(first) = why.get_mut(..1) {
                    first.make_ascii_uppercase();
                }
                format!(" {why}.")
            }
            (Ok(_), Source::Wgmma) => format!(
                " The {mma} reach {:.1} TFLOP/s, {:.1}% of the wgmma chains.",
                tflop(self.mma_gflop_per_s),
                100.0 * self.mma_gflop_per_s / rate
            ),
            (Ok(w), _) => format!(
                " The {wgmma} reach {:.1} TFLOP/s, {:.1}% of the mma.sync chains.",
                tflop(w.gflop_per_s),
                100.0 * w.gflop_per_s / self.mma_gflop_per_s
            ),
        };
        first + &second
    }

    /// The JSON object `tensor_ceiling` of the report's `ceiling-tensor`
    /// row.
    pub fn json(&self) -> serde_json::Value {
        let best = self.cublas_best();
        json!({
            "gflop_per_s": self.gflop_per_s(),
            "precision": self.sizes.half,
            "mma_symbol": self.sizes.mma_symbol(),
            "source": self.source(),
            "mma_sync_gflop_per_s": self.mma_gflop_per_s,
            "wgmma_gflop_per_s": self.wgmma.as_ref().ok().map(|w| w.gflop_per_s),
            "wgmma_missing": self.wgmma.as_ref().err(),
            "cublas_over_wgmma_pct": self.cublas_over_wgmma_pct(),
            "cublas_best_gflop_per_s": best.map(|c| c.gflop_per_s),
            "cublas_best_side": best.map(|c| c.side),
            "cublas_over_mma_sync_pct": self.cublas_over_mma_pct(),
            "cublas_missing": self.cublas.as_ref().err(),
            "cublas_large_side_skipped": self.large_side_skipped,
            "derived_limit_gflop_per_s": self.derived_gflop_per_s,
            "share_of_derived": self.derived_gflop_per_s.map(|d| self.gflop_per_s() / d),
            "mma_blocks": self.sizes.mma_blocks, "mma_iters": self.sizes.mma_iters, "mma_chains": MMA_CHAINS,
            "wgmma_blocks": self.sizes.wgmma_blocks, "wgmma_iters": self.sizes.wgmma_iters,
        })
    }
}
