//! GPU tests of the unroll kernels and their CUDA C twins: every kernel,
//! both sides, bit for bit against the CPU reference at every checked size
//! (16, 1000, 4002 and the odd 1,048,576 + 611, where every lane guard
//! fires), and the seed's 16-element launch. Where no NVIDIA driver is
//! present, every test is reported as ignored.

use host::compare::Side;
use host::gpu::Gpu;
use host::unroll::{self, CHECKED_SIZES, Kernel, Unroll, reference};
use kernels_gpu::unroll::{CHECK_ELEMS, SEED_GPU_ELEMS};
use lab_tests::{kernel_trials, run_gpu_trials, trial, use_side};

fn check(gpu: &Gpu, kernel: Kernel, side: Side) -> Result<(), String> {
    let mut lesson = Unroll::new(gpu, CHECK_ELEMS).map_err(|e| e.to_string())?;
    use_side::<unroll::UnrollLesson>(gpu, &mut lesson, side)?;
    for n in CHECKED_SIZES {
        if let (Some(f), _) = lesson.check(kernel, n).map_err(|e| e.to_string())? {
            return Err(f.to_string());
        }
    }
    let got = lesson.seed_example(kernel).map_err(|e| e.to_string())?;
    let (a, b) = reference::seed_gpu_inputs(SEED_GPU_ELEMS);
    if got != reference::sum(&a, &b) {
        return Err(format!("the seed's 16-element launch gave {got:?}"));
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    let mut trials = kernel_trials(check);
    trials.push(trial("unroll::the_lesson_runs_quick", |gpu| {
        lab_tests::run_quick::<unroll::UnrollLesson>(gpu).map(drop)
    }));
    run_gpu_trials(trials)
}
