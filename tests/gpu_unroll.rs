//! GPU tests of the unroll kernels and their CUDA C twins: every kernel,
//! both sides, bit for bit against the CPU reference at every checked size
//! (16, 1000, 4002 and the odd 1,048,576 + 611, where every lane guard
//! fires), at sizes that leave the unrolled-and-vectorized kernel a tail of
//! 1, 2 and 3 floats (with and without whole float4s before it), and the
//! seed's 16-element launch. Where no NVIDIA driver is
//! present, every test is reported as ignored.

use host::compare::Side;
use host::gpu::Gpu;
use host::unroll::{self, CHECKED_SIZES, Kernel, Unroll, reference};
use kernels_gpu::unroll::{CHECK_ELEMS, SEED_GPU_ELEMS};
use lab_tests::{kernel_trials, run_gpu_trials, trial, use_side};

/// Sizes beyond the lesson's: only a tail (1, 2, 3), one float4 and a
/// tail of 1, and a whole vectorized block (4096 floats) plus tails of 1,
/// 2 and 3, so the tail threads sit in the first block of a grid of two.
const TAIL_SIZES: [usize; 7] = [1, 2, 3, 5, 4097, 4098, 4099];

fn check(gpu: &Gpu, kernel: Kernel, side: Side) -> Result<(), String> {
    let mut lesson = Unroll::new(gpu, CHECK_ELEMS).map_err(|e| e.to_string())?;
    use_side::<unroll::UnrollLesson>(gpu, &mut lesson, side)?;
    for n in CHECKED_SIZES.into_iter().chain(TAIL_SIZES) {
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
