//! GPU tests of the conv2d kernels and their CUDA C twins: each kernel,
//! both sides, at sizes where every edge guard fires (the odd check side,
//! the smallest image, sides just past a block), bit for bit against the
//! CPU's FMA mirror and within the bound of the f64 reference; a size the
//! buffers cannot hold is an error, not a fault. Where no NVIDIA driver is
//! present, every test is reported as ignored.

use host::compare::{Side, Twinned};
use host::conv2d::{self, Conv2d, Expected, Kernel, reference};
use host::gpu::Gpu;
use host::kernels::KernelId;
use kernels_gpu::conv2d::CHECK_SIDE;
use lab_tests::{kernel_trials, run_gpu_trials, trial, use_side};

/// `kernel` on `side` at every awkward side: 3 (one valid output), 5, 33
/// and 41 (one past a block in x and in y), 67 and the check side.
fn check(gpu: &Gpu, kernel: Kernel, side: Side) -> Result<(), String> {
    let mut lesson = Conv2d::new(gpu, CHECK_SIDE).map_err(|e| e.to_string())?;
    use_side::<conv2d::Conv2dLesson>(gpu, &mut lesson, side)?;
    for n in [3, 5, 33, 41, 67, CHECK_SIDE] {
        let want = Expected::of(kernel, &reference::image(n), n);
        let (failures, _) = lesson.check(kernel, n, &want).map_err(|e| e.to_string())?;
        if let Some(f) = failures.first() {
            return Err(f.to_string());
        }
    }
    Ok(())
}

/// Rust and CUDA C outputs are the same bits at the check side.
fn the_sides_agree_bit_for_bit(gpu: &Gpu) -> Result<(), String> {
    let mut lesson = Conv2d::new(gpu, CHECK_SIDE).map_err(|e| e.to_string())?;
    use_side::<conv2d::Conv2dLesson>(gpu, &mut lesson, Side::CudaC)?;
    for &k in Kernel::ALL {
        let mut outs = Vec::new();
        for side in [Side::Rust, Side::CudaC] {
            lesson.kernels().use_side(side);
            outs.push(Twinned::check(&mut lesson, k).map_err(|e| e.to_string())?.1);
        }
        if let host::compare::Agreement::Differ { count, first } =
            host::compare::Agreement::of_bits(&outs[0], &outs[1])
        {
            return Err(format!(
                "{}: {count} outputs differ, first at {first}",
                k.symbol()
            ));
        }
    }
    Ok(())
}

/// An image past the buffers, or too small for a 3x3 valid convolution, is
/// an `Error::Size` before any launch.
fn bad_sizes_are_errors(gpu: &Gpu) -> Result<(), String> {
    let mut lesson = Conv2d::new(gpu, 64).map_err(|e| e.to_string())?;
    for (k, n) in [(Kernel::Valid, 2), (Kernel::Same, 65)] {
        match lesson.launch(k, n) {
            Err(host::Error::Size(_)) => {}
            other => return Err(format!("{k:?} at n = {n}: {other:?}")),
        }
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    let mut trials = kernel_trials(check);
    trials.extend([
        trial("the_sides_agree_bit_for_bit", the_sides_agree_bit_for_bit),
        trial("bad_sizes_are_errors", bad_sizes_are_errors),
        trial("conv2d::the_lesson_runs_quick", |gpu| {
            lab_tests::run_quick::<conv2d::Conv2dLesson>(gpu).map(drop)
        }),
    ]);
    run_gpu_trials(trials)
}
