//! The roofline's FP32 ceiling on its own: `fma_peak` at the roofline's
//! sizes, checked exactly and timed, without the rest of the lesson's
//! buffers, for a lesson that reads its FP32 rows against the measured
//! ceiling (the GEMM lesson).

use super::{Kernel, Sizes, launch_config, model, reference};
use crate::check::{Failure, Tolerance, first_mismatch};
use crate::error::Result;
use crate::gpu::Gpu;
use crate::kernels::KernelSet;
use crate::timing::{self, Plan, Timing};

/// The measured FP32 ceiling: `fma_peak`'s rate and its timing.
#[derive(Debug, Clone)]
pub struct FmaCeiling {
    /// `fma_peak`'s FLOP ([`model::cost`]) over its median time, GFLOP/s.
    pub gflop_per_s: f64,
    /// Its timing.
    pub timing: Timing,
}

/// Runs `fma_peak` at the roofline's FMA sizes (its quick ones for
/// `quick`) into a poisoned output, compares every thread's sum exactly
/// with [`reference::fma_sum`], then, if it is right, times it with `plan`.
/// Returns the ceiling, or the check's failure.
///
/// # Errors
/// A fault (charged to the kernel), an allocation or a driver error.
pub fn measure(
    gpu: &Gpu,
    quick: bool,
    plan: Plan,
) -> Result<std::result::Result<FmaCeiling, Failure>> {
    let sizes = if quick {
        Sizes::quick(&gpu.info)
    } else {
        Sizes::for_device(&gpu.info)
    };
    let kernel = Kernel::FmaPeak;
    let kernels = KernelSet::<Kernel>::new(gpu)?;
    let threads = sizes.fma_threads();
    let mut out = gpu.alloc_f32(threads)?;
    let launch = |out: &mut cudarc::driver::CudaSlice<f32>| {
        let launch = kernels
            .launch(gpu, kernel)
            .output(out)
            .scalar(sizes.fma_iters);
        // SAFETY: `out` holds a float for every thread of the launch
        // (`fma_threads`), the shape the roofline launches it with; the
        // argument kinds are checked against the declared parameters.
        unsafe { launch.launch(launch_config(kernel, &sizes)) }
    };
    gpu.poison_output(&mut out, threads)?;
    launch(&mut out)?;
    gpu.sync_after(kernel.symbol())?;
    let got = gpu.read_output(&out, threads, kernel.symbol())?;
    let want = vec![reference::fma_sum(sizes.fma_iters); threads];
    if let Some(m) = first_mismatch(&got, &want, Tolerance::Exact) {
        return Ok(Err(Failure {
            kernel: kernel.symbol(),
            detail: format!(
                "{m}; the loop did not run the {} iterations the FLOP count assumes",
                sizes.fma_iters
            ),
        }));
    }
    let timing = timing::time_kernel(gpu, kernel.symbol(), plan, || launch(&mut out))?;
    let flop = model::cost(kernel, &sizes).flop;
    Ok(Ok(FmaCeiling {
        gflop_per_s: model::per_second_e9(flop, timing.median_ms()),
        timing,
    }))
}
