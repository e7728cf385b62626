//! GPU tests of the fusion kernels and their CUDA C twins: each chain and
//! width against the f64 reference at the odd correctness size (1,048,576 +
//! 611: every bounds check fires), and the device tanh's error against f64.
//! Where no NVIDIA driver is present, every test is reported as ignored.

use host::compare::Side;
use host::fusion::{self, Chain, Fusion, Kernel};
use host::gpu::Gpu;
use kernels_gpu::fusion::{CHECK_ELEMS, WIDTHS};
use lab_tests::{run_gpu_trials, trial, use_side};

fn check(gpu: &Gpu, chain: Chain, side: Side) -> Result<(), String> {
    let mut lesson = Fusion::new(gpu, CHECK_ELEMS).map_err(|e| e.to_string())?;
    use_side::<fusion::FusionLesson>(gpu, &mut lesson, side)?;
    let want = lesson.reference();
    let (failures, _) = lesson.check(chain, &want).map_err(|e| e.to_string())?;
    match failures.first() {
        None => Ok(()),
        Some(f) => Err(f.to_string()),
    }
}

/// Every chain the lesson checks: the copy, the staged chain, the fused
/// kernel and each width from the one list of widths.
fn chains() -> Vec<Chain> {
    let mut chains = vec![
        Chain::Kernel(Kernel::CopyFloor),
        Chain::Staged,
        Chain::Kernel(Kernel::Fused),
    ];
    chains.extend(WIDTHS.iter().map(|&w| Chain::Kernel(Kernel::Wide(w))));
    chains
}

/// The device tanh (device::math::tanh) over [-20, 20] in steps of 1e-4:
/// largest absolute error against f64 under 2e-7.
fn device_tanh_is_accurate(gpu: &Gpu) -> Result<(), String> {
    let n = 400_001;
    let xs: Vec<f32> = (0..n).map(|i| (i as f64 * 1e-4 - 20.0) as f32).collect();
    let mut x = gpu.alloc_f32(n).map_err(|e| e.to_string())?;
    let mut y = gpu.alloc_f32(n).map_err(|e| e.to_string())?;
    gpu.upload(&xs, &mut x).map_err(|e| e.to_string())?;
    host::testing::tanh(gpu, &x, &mut y, n).map_err(|e| e.to_string())?;
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
    let mut lesson = Fusion::new(gpu, CHECK_ELEMS).map_err(|e| e.to_string())?;
    let want = lesson.reference();
    for chain in chains() {
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

/// The profile mode's seed-size pair ([`fusion::profile_seed`]) after
/// every compared kernel once ([`host::lesson::profile_rows`]): it runs at
/// the seed's 16 Mi elements, and the last chain_fused it launched left y
/// matching the f64 reference over the correctness size.
fn profile_mode_launches_the_seed_pair(gpu: &Gpu) -> Result<(), String> {
    use kernels_gpu::fusion::SEED_ELEMS;
    let mut lesson = Fusion::new(gpu, SEED_ELEMS).map_err(|e| e.to_string())?;
    let rows = host::lesson::profile_rows(&mut lesson).map_err(|e| e.to_string())?;
    if rows != <Kernel as host::kernels::KernelId>::ALL.len() - 1 {
        return Err(format!(
            "{rows} rows launched, not every kernel but the empty one"
        ));
    }
    if !fusion::profile_seed(&mut lesson).map_err(|e| e.to_string())? {
        return Err("no seed-size launches on buffers of the seed's size".into());
    }
    let want = lesson.reference();
    let got = lesson.read_y(CHECK_ELEMS).map_err(|e| e.to_string())?;
    match host::check::first_mismatch(&got, &want, fusion::TOLERANCE) {
        None => Ok(()),
        Some(m) => Err(format!("y after the seed's chain_fused: {m}")),
    }
}

fn main() -> std::process::ExitCode {
    let mut trials = Vec::new();
    for side in [Side::Rust, Side::CudaC] {
        for chain in chains() {
            let name = chain.symbol().replace(' ', "_");
            let prefix = if side == Side::Rust { "" } else { "twin_" };
            trials.push(trial(format!("{prefix}{name}"), move |gpu| {
                check(gpu, chain, side)
            }));
        }
    }
    trials.push(trial("device_tanh_is_accurate", device_tanh_is_accurate));
    trials.push(trial(
        "outputs_are_deterministic",
        outputs_are_deterministic,
    ));
    trials.push(trial(
        "profile_mode_launches_the_seed_pair",
        profile_mode_launches_the_seed_pair,
    ));
    trials.push(trial("fusion::the_lesson_runs_quick", |gpu| {
        lab_tests::run_quick::<fusion::FusionLesson>(gpu).map(drop)
    }));
    run_gpu_trials(trials)
}
