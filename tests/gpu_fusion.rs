//! GPU tests of the fusion kernels and their CUDA C twins: each chain and
//! width against the f64 reference at the odd correctness size (1,048,576 +
//! 611: every bounds check fires), and the device tanh's error against f64.
//! Where no NVIDIA driver is present, every test is reported as ignored.

use host::compare::Side;
use host::fusion::{self, Chain, Fusion, Kernel};
use host::gpu::Gpu;
use kernels_gpu::fusion::WIDTHS;
use lab_tests::run_gpu_trials;

fn twin_ptx(gpu: &Gpu) -> Result<&'static str, String> {
    lab_tests::twin_ptx(gpu, fusion::cuda_c_program, "fusion.cu")
}

fn check(gpu: &Gpu, chain: Chain, side: Side) -> Result<(), String> {
    let mut lesson = Fusion::new(gpu).map_err(|e| e.to_string())?;
    if side == Side::CudaC {
        lesson
            .load_twins(twin_ptx(gpu)?)
            .map_err(|e| e.to_string())?;
        lesson.use_side(Side::CudaC);
    }
    let want = lesson.reference();
    let (failures, _) = lesson.check(chain, &want).map_err(|e| e.to_string())?;
    match failures.first() {
        None => Ok(()),
        Some(f) => Err(f.to_string()),
    }
}

/// The device tanh (device::math::tanh) over [-20, 20] in steps of 1e-4:
/// largest absolute error against f64 under 2e-7.
fn device_tanh_is_accurate(gpu: &Gpu) -> Result<(), String> {
    let n = 400_001;
    let xs: Vec<f32> = (0..n).map(|i| (i as f64 * 1e-4 - 20.0) as f32).collect();
    let mut x = gpu.alloc_f32(n).map_err(|e| e.to_string())?;
    let mut y = gpu.alloc_f32(n).map_err(|e| e.to_string())?;
    gpu.upload(&xs, &mut x).map_err(|e| e.to_string())?;
    let f = gpu
        .function(kernels_gpu::testing::TANH_FOR_TESTS)
        .map_err(|e| e.to_string())?;
    gpu.launch_elementwise(&f, kernels_gpu::testing::TANH_FOR_TESTS, &x, &mut y, n)
        .map_err(|e| e.to_string())?;
    gpu.sync_after(kernels_gpu::testing::TANH_FOR_TESTS)
        .map_err(|e| e.to_string())?;
    let mut ys = vec![0.0f32; n];
    gpu.download(&y, &mut ys).map_err(|e| e.to_string())?;
    let (worst, at) = xs
        .iter()
        .zip(&ys)
        .map(|(&x, &y)| ((y as f64 - (x as f64).tanh()).abs(), x))
        .fold(
            (0.0, 0.0),
            |(m, mx), (e, x)| if e > m { (e, x) } else { (m, mx) },
        );
    println!("device tanh: largest absolute error {worst:.3e} at x = {at}");
    if worst < 2e-7 {
        Ok(())
    } else {
        Err(format!("largest absolute error {worst:e} at x = {at}"))
    }
}

/// Two runs of every chain and width give bit-identical outputs (no
/// atomics anywhere in the lesson).
fn outputs_are_deterministic(gpu: &Gpu) -> Result<(), String> {
    let mut lesson = Fusion::new(gpu).map_err(|e| e.to_string())?;
    let want = lesson.reference();
    let mut chains = vec![
        Chain::Kernel(Kernel::CopyFloor),
        Chain::Staged,
        Chain::Kernel(Kernel::Fused),
    ];
    chains.extend(WIDTHS.iter().map(|&w| Chain::Kernel(Kernel::Wide(w))));
    for chain in chains {
        let first = lesson.check(chain, &want).map_err(|e| e.to_string())?.1;
        let second = lesson.check(chain, &want).map_err(|e| e.to_string())?.1;
        if let host::compare::Agreement::Differ { count, first } =
            host::compare::Agreement::of(&first, &second)
        {
            return Err(format!(
                "{}: {count} elements differ between two runs, first at {first}",
                chain.symbol()
            ));
        }
    }
    Ok(())
}

macro_rules! trials {
    ($($name:ident => $chain:expr),* $(,)?) => {{
        let mut t: Vec<(&'static str, fn(&Gpu) -> Result<(), String>)> = Vec::new();
        $( t.push((stringify!($name), |gpu| check(gpu, $chain, Side::Rust))); )*
        $( t.push((concat!("twin_", stringify!($name)), |gpu| check(gpu, $chain, Side::CudaC))); )*
        t
    }};
}

fn main() -> std::process::ExitCode {
    const _: () = assert!(WIDTHS.len() == 6, "one trial per width below");
    let mut trials = trials![
        copy_floor => Chain::Kernel(Kernel::CopyFloor),
        staged_chain => Chain::Staged,
        chain_fused => Chain::Kernel(Kernel::Fused),
        chain_fused_wide_1 => Chain::Kernel(Kernel::Wide(1)),
        chain_fused_wide_2 => Chain::Kernel(Kernel::Wide(2)),
        chain_fused_wide_4 => Chain::Kernel(Kernel::Wide(4)),
        chain_fused_wide_8 => Chain::Kernel(Kernel::Wide(8)),
        chain_fused_wide_16 => Chain::Kernel(Kernel::Wide(16)),
        chain_fused_wide_32 => Chain::Kernel(Kernel::Wide(32)),
    ];
    trials.push(("device_tanh_is_accurate", device_tanh_is_accurate));
    trials.push(("outputs_are_deterministic", outputs_are_deterministic));
    run_gpu_trials(trials)
}
