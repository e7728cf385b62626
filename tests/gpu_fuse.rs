//! GPU tests of the fuse kernels and their CUDA C twins: each kernel, both
//! sides, bit for bit against the CPU reference at the odd size 1,048,576 +
//! 611 and at 6; the three-kernel pipeline (t1, t2 and y) likewise; the
//! fused output identical to the pipeline's; the six-element example. Where
//! no NVIDIA driver is present, every test is reported as ignored.

use host::compare::{Agreement, Side};
use host::fuse::{self, CHECKED_SIZES, Fuse, Kernel, reference};
use host::gpu::Gpu;
use host::lesson::Twinned;
use kernels_gpu::fuse::CHECK_ELEMS;
use lab_tests::run_gpu_trials;

fn twin_ptx(gpu: &Gpu) -> Result<&'static str, String> {
    lab_tests::twin_ptx(gpu, fuse::cuda_c_program, "fuse.cu")
}

fn lesson(gpu: &Gpu, side: Side) -> Result<Fuse<'_>, String> {
    let mut lesson = Fuse::new(gpu, CHECK_ELEMS).map_err(|e| e.to_string())?;
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
    const _: () = assert!(Kernel::ALL.len() == 5, "one trial per kernel below");
    let mut trials = trials![
        unfused_mul => Kernel::Mul,
        unfused_add => Kernel::Add,
        unfused_relu => Kernel::Relu,
        fused_mul_add_relu => Kernel::Fused,
        fused_mul_add_relu_fma => Kernel::FusedFma,
    ];
    trials.push(("unfused_pipeline", |gpu| pipeline(gpu, Side::Rust)));
    trials.push(("twin_unfused_pipeline", |gpu| pipeline(gpu, Side::CudaC)));
    run_gpu_trials(trials)
}
