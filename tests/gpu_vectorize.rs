//! GPU tests of the vectorize kernels and their CUDA C twins: every add,
//! both sides, bit for bit against the reference at the traced sizes, at
//! sizes below one vector, and at the odd check size. Where no NVIDIA
//! driver is present, every test is reported as ignored.

use host::compare::Side;
use host::gpu::Gpu;
use host::vectorize::{self, Kernel, Vectorize};
use kernels_gpu::vectorize::CHECK_ELEMS;
use lab_tests::run_gpu_trials;

fn check_all(gpu: &Gpu, side: Side) -> Result<(), String> {
    let mut lesson = Vectorize::new(gpu).map_err(|e| e.to_string())?;
    if side == Side::CudaC {
        let ptx = lab_tests::twin_ptx(gpu, vectorize::cuda_c_program, "vectorize.cu")?;
        lesson.load_twins(ptx).map_err(|e| e.to_string())?;
        host::lesson::Twinned::kernels(&mut lesson).use_side(Side::CudaC);
    }
    for k in Kernel::ALL {
        for n in [1, 3, 7, 10, 41, 4099, CHECK_ELEMS] {
            if let (Some(f), _) = lesson.check(k, n).map_err(|e| e.to_string())? {
                return Err(f.to_string());
            }
        }
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    run_gpu_trials(vec![
        ("vectorize::every_add_is_bit_exact_rust", |gpu| {
            check_all(gpu, Side::Rust)
        }),
        ("vectorize::every_add_is_bit_exact_cuda_c", |gpu| {
            check_all(gpu, Side::CudaC)
        }),
        (
            "vectorize::the_lesson_runs_quick",
            |gpu| match (vectorize::LESSON.run)(gpu, host::timing::Plan::QUICK, true)
                .map_err(|e| e.to_string())?
            {
                host::lesson::Outcome::Passed(f) if f.sections.len() == 3 => Ok(()),
                host::lesson::Outcome::Passed(_) => Err("expected three sections".into()),
                host::lesson::Outcome::Failed(f) => {
                    Err(format!("{} checks failed, first: {}", f.len(), f[0]))
                }
            },
        ),
    ])
}
