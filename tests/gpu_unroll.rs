//! GPU tests of the unroll kernels and their CUDA C twins: every kernel,
//! both sides, bit for bit against the CPU reference at every checked size
//! (16, 1000, 4002 and the odd 1,048,576 + 611, where every lane guard
//! fires), and the seed's 16-element launch. Where no NVIDIA driver is
//! present, every test is reported as ignored.

use host::compare::Side;
use host::gpu::Gpu;
use host::lesson::Twinned;
use host::unroll::{self, CHECKED_SIZES, Kernel, Unroll, reference};
use kernels_gpu::unroll::{CHECK_ELEMS, SEED_GPU_ELEMS};
use lab_tests::run_gpu_trials;

fn twin_ptx(gpu: &Gpu) -> Result<&'static str, String> {
    lab_tests::twin_ptx(gpu, unroll::cuda_c_program, "unroll.cu")
}

fn lesson(gpu: &Gpu, side: Side) -> Result<Unroll<'_>, String> {
    let mut lesson = Unroll::new(gpu, CHECK_ELEMS).map_err(|e| e.to_string())?;
    if side == Side::CudaC {
        lesson
            .load_twins(twin_ptx(gpu)?)
            .map_err(|e| e.to_string())?;
        lesson.kernels().use_side(Side::CudaC);
    }
    Ok(lesson)
}

fn check(gpu: &Gpu, kernel: Kernel, side: Side) -> Result<(), String> {
    let mut lesson = lesson(gpu, side)?;
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

/// A trial's function.
type TrialFn = fn(&Gpu) -> Result<(), String>;

macro_rules! trials {
    ($($name:ident => $kernel:expr),* $(,)?) => {{
        let rust: Vec<(&'static str, TrialFn)> =
            vec![$((stringify!($name), (|gpu: &Gpu| check(gpu, $kernel, Side::Rust)) as TrialFn)),*];
        let twins: Vec<(&'static str, TrialFn)> =
            vec![$((concat!("twin_", stringify!($name)), (|gpu: &Gpu| check(gpu, $kernel, Side::CudaC)) as TrialFn)),*];
        [rust, twins].concat()
    }};
}

fn main() -> std::process::ExitCode {
    const _: () = assert!(Kernel::ALL.len() == 3, "one trial per kernel below");
    run_gpu_trials(trials![
        add_one_per_thread => Kernel::OnePerThread,
        add_unrolled_4 => Kernel::Unrolled,
        add_unrolled_4_coalesced => Kernel::UnrolledCoalesced,
    ])
}
