//! GPU tests of the __name__ lesson: each kernel and its CUDA C twin checked
//! against the CPU reference at the odd size, at one element and at a whole
//! number of blocks; then the lesson's quick run through the lesson layer.
//! Where no NVIDIA driver is present, every test is reported as ignored.

use host::__name__::{__Name__, __Name__Lesson, Kernel};
use host::compare::Side;
use host::gpu::Gpu;
use kernels_gpu::__name__::{CHECK_ELEMS, THREADS_PER_BLOCK};
use lab_tests::{kernel_trials, run_gpu_trials, trial, use_side};

fn check(gpu: &Gpu, kernel: Kernel, side: Side) -> Result<(), String> {
    let mut lesson = __Name__::new(gpu, CHECK_ELEMS).map_err(|e| e.to_string())?;
    use_side::<__Name__Lesson>(gpu, &mut lesson, side)?;
    for n in [CHECK_ELEMS, 1, 4 * THREADS_PER_BLOCK as usize] {
        let (failure, _) = lesson.check_at(kernel, n).map_err(|e| e.to_string())?;
        if let Some(f) = failure {
            return Err(f.to_string());
        }
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    let mut trials = kernel_trials::<Kernel>(check);
    trials.push(trial("__name__::the_lesson_runs_quick", |gpu| {
        lab_tests::run_quick::<__Name__Lesson>(gpu).map(drop)
    }));
    run_gpu_trials(trials)
}
