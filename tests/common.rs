//! Helpers shared by the integration tests.
//!
//! GPU tests open the GPU once through [`open_gpu`]: on a machine without an
//! NVIDIA driver (or without a device) they report one line saying so and
//! mark every GPU test ignored, so a CPU-only CI run shows them as skipped,
//! not passed. A GPU that is present but cannot be used fails every test.

use host::Error;
use host::gpu::Gpu;

/// What opening the GPU gave: a GPU, no GPU on this machine (skip), or a
/// GPU that failed to open (every test fails with the reason).
pub enum Opened {
    /// The GPU, with the PTX loaded.
    Gpu(Gpu),
    /// No NVIDIA driver or no device: the GPU tests cannot run here.
    Absent(String),
    /// A GPU is here but could not be used (PTX refused, driver error).
    Broken(String),
}

/// Opens device 0.
pub fn open_gpu() -> Opened {
    match Gpu::open(0) {
        Ok(gpu) => Opened::Gpu(gpu),
        Err(e @ (Error::NoDriver | Error::NoDevice { .. })) => {
            Opened::Absent(format!("GPU tests skipped: {e}"))
        }
        Err(e) => Opened::Broken(e.to_string()),
    }
}

/// Runs GPU trials under libtest-mimic: each trial gets the shared GPU; with
/// no GPU every trial is listed as ignored and one line says why.
pub fn run_gpu_trials(
    trials: Vec<(&'static str, fn(&Gpu) -> Result<(), String>)>,
) -> std::process::ExitCode {
    use libtest_mimic::{Arguments, Trial};
    use std::sync::Arc;

    let mut args = Arguments::from_args();
    // One GPU, one stream: trials run one at a time.
    args.test_threads = Some(1);
    let gpu = match open_gpu() {
        Opened::Gpu(gpu) => Ok(Arc::new(gpu)),
        Opened::Absent(why) => {
            eprintln!("{why}");
            Err(None)
        }
        Opened::Broken(why) => Err(Some(why)),
    };
    let trials = trials
        .into_iter()
        .map(|(name, f)| match &gpu {
            Ok(gpu) => {
                let gpu = Arc::clone(gpu);
                Trial::test(name, move || f(&gpu).map_err(Into::into))
            }
            Err(None) => Trial::test(name, || Ok(())).with_ignored_flag(true),
            Err(Some(why)) => {
                let why = why.clone();
                Trial::test(name, move || {
                    Err(format!("the GPU could not be opened: {why}").into())
                })
            }
        })
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}

/// A synthetic H200-like device for CPU tests: what the lessons read from
/// a device is its L2, its SMs and its limits.
pub fn synthetic_device(l2_bytes: usize, sms: u32) -> host::gpu::DeviceInfo {
    host::gpu::DeviceInfo {
        ordinal: 0,
        name: "synthetic".into(),
        compute_capability: (9, 0),
        sms,
        l2_bytes,
        total_memory_bytes: 80 << 30,
        sm_clock_khz: 1_980_000,
        memory_clock_khz: 3_201_000,
        memory_bus_bits: 6016,
        max_threads_per_sm: 2048,
        regs_per_sm: 65536,
        driver_cuda: "13.0".into(),
        driver_version: None,
    }
}

/// NVRTC's PTX of a lesson's CUDA C twins (`program()`, named `file` in
/// NVRTC's messages) for `gpu`'s architecture, compiled once per test
/// binary and program.
///
/// # Errors
/// NVRTC missing or the program not compiling, as one line.
pub fn twin_ptx(
    gpu: &Gpu,
    program: fn() -> String,
    file: &'static str,
) -> Result<&'static str, String> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static PTX: OnceLock<Mutex<HashMap<&'static str, Result<&'static str, String>>>> =
        OnceLock::new();
    let mut cache = PTX
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    cache
        .entry(file)
        .or_insert_with(|| {
            host::nvrtc::compile(&program(), file, gpu.info.compute_capability)
                .map(|ptx| &*Box::leak(ptx.into_boxed_str()))
                .map_err(|e| e.to_string())
        })
        .clone()
}
