//! The GEMM lesson's last steps placed on the roofline: its fastest FP32
//! kernel (`gemm_warptiled`) and its last tensor-core step on this GPU
//! (`gemm_bf16_tma` on compute capability 9.0, `gemm_bf16_pipelined` from
//! 8.0, `gemm_f16_mma` on 7.5), each checked (at sampled elements) and timed in the roofline's own
//! run at one square size, at the intensity of its compulsory bytes (A, B and C read once, D
//! written once: [`crate::gemm::bytes`], [`crate::gemm::bytes_bf16`]).
//! A GEMM of that size sits far right of both ridge points, so its roof is
//! the flat one of its precision: the FMA ceiling for FP32, the tensor-core
//! ceiling for BF16 or FP16 (where the ceiling is of that precision).

use crate::check::Failure;
use crate::cublas::Half;
use crate::error::Result;
use crate::gemm::{self, Gemm, GemmRow, Kernel, TensorKernel, Timed};
use crate::gpu::Gpu;
use crate::timing::{Plan, Timing};

/// The square side (m = n = k) of the placed GEMMs in a full run: the GEMM
/// lesson's compared size.
pub const GEMM_SIDE: usize = 4096;

/// The side in `--quick` runs (a multiple of the tensor-core kernels' 8).
pub const GEMM_QUICK_SIDE: usize = 256;

/// The precision of a placed GEMM, which picks its roof.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// FP32 in and out, on the FMA units: under the FMA ceiling.
    Fp32,
    /// BF16 in, FP32 sums, on the tensor cores: under a BF16 tensor-core
    /// ceiling.
    Bf16,
    /// FP16 in, FP32 sums, on the tensor cores (compute capability 7.5):
    /// under an FP16 tensor-core ceiling.
    Fp16,
}

impl Precision {
    /// Its name in the JSON rows' `variant` (`gemm-fp32`, `gemm-bf16`,
    /// `gemm-fp16`).
    pub fn name(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Bf16 => "bf16",
            Precision::Fp16 => "fp16",
        }
    }

    /// The 16-bit input type of a tensor-core precision; `None` for FP32.
    pub fn half(self) -> Option<Half> {
        match self {
            Precision::Fp32 => None,
            Precision::Bf16 => Some(Half::Bf16),
            Precision::Fp16 => Some(Half::F16),
        }
    }
}

/// One placed GEMM kernel.
#[derive(Debug, Clone)]
pub struct GemmPoint {
    /// The kernel's exported name.
    pub symbol: &'static str,
    /// Its row label in the GEMM lesson.
    pub label: &'static str,
    /// Its precision.
    pub precision: Precision,
    /// m = n = k.
    pub side: usize,
    /// 2 side^3 ([`gemm::flop`]).
    pub flop: f64,
    /// Compulsory bytes.
    pub bytes: f64,
    /// Its timing.
    pub timing: Timing,
}

impl GemmPoint {
    /// FLOP per compulsory byte.
    pub fn intensity(&self) -> f64 {
        self.flop / self.bytes
    }

    /// FLOP over the median time, GFLOP/s.
    pub fn gflop_per_s(&self) -> f64 {
        super::model::per_second_e9(self.flop, self.timing.median_ms())
    }
}

/// The tensor-core step placed on a GPU, with its precision:
/// `gemm_bf16_tma` where the sm_90a module loaded (compute capability 9.0),
/// else `gemm_bf16_pipelined` where the sm_80 module did, else
/// `gemm_f16_mma` where the f16 side loaded (7.5); or why there is none
/// (the sides' reasons, or the kernel refusing the shape).
fn tensor_kernel(
    lesson: &Gemm<'_>,
    shape: (usize, usize, usize),
) -> std::result::Result<(TensorKernel, Precision), String> {
    let (kernel, precision) = match (&lesson.tensor, &lesson.fp16) {
        (Ok(tc), _) => match &tc.hopper {
            Ok(_) => (
                TensorKernel::Wgmma(gemm::WgKernel::Bf16Tma),
                Precision::Bf16,
            ),
            Err(_) => (
                TensorKernel::Mma(gemm::TcKernel::Bf16Pipelined),
                Precision::Bf16,
            ),
        },
        (Err(_), Ok(_)) => (
            TensorKernel::Turing(gemm::F16Kernel::F16Mma),
            Precision::Fp16,
        ),
        (Err(bf16), Err(fp16)) => {
            return Err(format!("no bf16 side ({bf16}) and no f16 side ({fp16})"));
        }
    };
    match kernel.refusal(shape) {
        Some(why) => Err(why),
        None => Ok((kernel, precision)),
    }
}

/// What [`measure`] placed: the points, why the run has no tensor-core point
/// (where it has none), and the checks' failures (no point where there is
/// one).
#[derive(Debug, Clone, Default)]
pub struct Measured {
    /// The placed kernels, FP32 first.
    pub points: Vec<GemmPoint>,
    /// Why there is no tensor-core point, where there is none.
    pub no_tensor_point: Option<String>,
    /// The checks' failures.
    pub failures: Vec<Failure>,
}

/// Checks `gemm_warptiled` and the tensor-core step the GPU has
/// ([`tensor_kernel`]) at `side`^3 (at 512 sampled elements against the
/// f64 reference, within the GEMM lesson's bounds; the tensor-core kernel
/// also exactly on integer inputs whose sums are exact), then, if both are
/// right, times them with `plan`.
///
/// # Errors
/// A fault (charged to the kernel), too little memory, or a driver error.
pub fn measure(gpu: &Gpu, side: usize, plan: Plan) -> Result<Measured> {
    let shape = (side, side, side);
    let mut lesson = Gemm::new(gpu, side)?;
    let (mut failures, _) = lesson.check(Kernel::Warptiled, shape, None, None)?;
    // The bf16 side alone where it loads (no f16 copies in device memory);
    // the f16 side too only where it does not (compute capability 7.5).
    lesson.enable_bf16_tensor_cores()?;
    if lesson.tensor.is_err() {
        lesson.enable_tensor_cores()?;
    }
    let tensor = tensor_kernel(&lesson, shape);
    if let Ok((kernel, _)) = tensor {
        failures.extend(lesson.check_tc(kernel, shape, None)?);
        failures.extend(lesson.check_tc_exact(kernel, shape)?);
    }
    if !failures.is_empty() {
        return Ok(Measured {
            failures,
            ..Measured::default()
        });
    }
    lesson.set_shape(shape)?;
    let mut points = vec![GemmPoint {
        symbol: Kernel::Warptiled.symbol(),
        label: Kernel::Warptiled.label(),
        precision: Precision::Fp32,
        side,
        flop: gemm::flop(side, side, side),
        bytes: gemm::bytes(side, side, side),
        timing: lesson.time(Timed::Kernel(GemmRow::Fp32(Kernel::Warptiled)), plan)?,
    }];
    if let Ok((kernel, precision)) = tensor {
        points.push(GemmPoint {
            symbol: kernel.symbol(),
            label: kernel.label(),
            precision,
            side,
            flop: gemm::flop(side, side, side),
            bytes: gemm::bytes_bf16(side, side, side),
            timing: lesson.time(Timed::Kernel(GemmRow::Tensor(kernel)), plan)?,
        });
    }
    Ok(Measured {
        points,
        no_tensor_point: tensor.err(),
        failures: Vec::new(),
    })
}
