//! GPU tests of the fuse kernels and their CUDA C twins: each kernel, both
//! sides, bit for bit against the CPU reference at the odd size 1,048,576 +
//! 611 and at 6; the three-kernel pipeline (t1, t2 and y) likewise; the
//! fused output identical to the pipeline's; the six-element example. Where
//! no NVIDIA driver is present, every test is reported as ignored.

use host::compare::{Agreement, Side};
use host::fuse::{self, CHECKED_SIZES, Fuse, Kernel, reference};
use host::gpu::Gpu;
use kernels_gpu::fuse::CHECK_ELEMS;
use lab_tests::{kernel_trials, run_gpu_trials, trial, use_side};

fn lesson(gpu: &Gpu, side: Side) -> Result<Fuse<'_>, String> {
    let mut lesson = Fuse::new(gpu, CHECK_ELEMS).map_err(|e| e.to_string())?;
    use_side::<fuse::FuseLesson>(gpu, &mut lesson, side)?;
    Ok(lesson)
}

fn check(gpu: &Gpu, kernel: Kernel, side: Side) -> Result<(), String> {
    let mut lesson = lesson(gpu, side)?;
    for n in CHECKED_SIZES {
        if let (Some(f), _) = lesson.check(kernel, n).map_err(|e| e.to_string())? {
            return Err(f.to_string());
        }
    }
    Ok(())
}

/// The three stages from poisoned intermediates, then the fused kernel:
/// t1, t2, y right, and the fused y identical to the pipeline's.
fn pipeline(gpu: &Gpu, side: Side) -> Result<(), String> {
    let mut lesson = lesson(gpu, side)?;
    for n in CHECKED_SIZES {
        let (failures, y) = lesson.check_pipeline(n).map_err(|e| e.to_string())?;
        if let Some(f) = failures.first() {
            return Err(f.to_string());
        }
        let (_, fused) = lesson.check(Kernel::Fused, n).map_err(|e| e.to_string())?;
        let y: Vec<u64> = y.iter().map(|v| u64::from(v.to_bits())).collect();
        if let Agreement::Differ { count, first } = Agreement::of_bits(&y, &fused) {
            return Err(format!(
                "n = {n}: fused differs from the pipeline in {count}, first at {first}"
            ));
        }
    }
    let (unfused, fused) = lesson.example().map_err(|e| e.to_string())?;
    let want = [2.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    if unfused != want || fused != want {
        return Err(format!("the example gave {unfused:?} and {fused:?}"));
    }
    let mut host = [0.0f32; 6];
    reference::fused_pipeline(
        &reference::EXAMPLE_A,
        &reference::EXAMPLE_B,
        &reference::EXAMPLE_C,
        &mut host,
    );
    if host != want {
        return Err(format!("the host mirror gave {host:?}"));
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    let mut trials = kernel_trials(check);
    trials.push(trial("unfused_pipeline", |gpu| pipeline(gpu, Side::Rust)));
    trials.push(trial("twin_unfused_pipeline", |gpu| {
        pipeline(gpu, Side::CudaC)
    }));
    trials.push(trial("fuse::the_lesson_runs_quick", |gpu| {
        lab_tests::run_quick::<fuse::FuseLesson>(gpu).map(drop)
    }));
    run_gpu_trials(trials)
}
