//! GPU tests of the roofline kernels and their CUDA C twins (compiled by
//! NVRTC): each against its CPU reference at small sizes. Sizes that no block size divides for the kernels with
//! bounds checks (copy, adds, reduction, stencils, polynomial); exact tiles
//! for the transposes and matmuls, which the seed writes without an edge
//! guard (their launch assumption says so).
//!
//! The BF16 tensor-core ceiling (compute capability 8.0 and up): `mma_peak`
//! checked exactly (and the check seen to fail on the hardware for a wrong
//! step count and a misread layout), and the reported ceiling at least
//! cuBLAS's best and the `mma.sync` chains'. Below 8.0 those tests check
//! that the run has no tensor ceiling and says why in one line.
//!
//! Where no NVIDIA driver is present, every test is reported as ignored.

use host::compare::{Agreement, Side};
use host::gpu::Gpu;
use host::kernels::KernelId;
use host::ragged::Edge;
use host::roofline::{self, Kernel, Roofline, Sizes};
use lab_tests::{kernel_trials, run_gpu_trials, trial, use_side};

/// Small sizes that exercise every guard (see `Sizes::quick`).
fn small(gpu: &Gpu) -> Sizes {
    Sizes::quick(&gpu.info)
}

fn check(gpu: &Gpu, kernel: Kernel, side: Side) -> Result<(), String> {
    let mut lesson = Roofline::new(gpu, small(gpu)).map_err(|e| e.to_string())?;
    use_side::<roofline::RooflineLesson>(gpu, &mut lesson, side)?;
    let failures = lesson.check(kernel).map_err(|e| e.to_string())?;
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n"))
    }
}

/// The lesson's own sizes pass their checks on this GPU's memory and grid
/// limits (no launch: a size the GPU cannot hold is an error before any
/// allocation).
fn lesson_sizes_are_valid(gpu: &Gpu) -> Result<(), String> {
    let sizes = Sizes::for_device(&gpu.info);
    sizes.validate().map_err(|e| e.to_string())?;
    gpu.require_free_memory(sizes.device_bytes(), "the roofline lesson")
        .map_err(|e| e.to_string())
}

/// The events time the kernel, not the launch: the FMA kernel with twice
/// the iterations takes about twice as long (a wide band: this checks the
/// timer measures device work, it is not a performance target).
fn timing_follows_the_work(gpu: &Gpu) -> Result<(), String> {
    let time = |iters: i32| -> Result<f64, String> {
        let sizes = Sizes {
            fma_iters: iters,
            ..small(gpu)
        };
        let mut lesson = Roofline::new(gpu, sizes).map_err(|e| e.to_string())?;
        let t = lesson
            .time(Kernel::FmaPeak, host::timing::Plan::DEFAULT)
            .map_err(|e| e.to_string())?;
        if t.samples_ms.len() != host::timing::Plan::DEFAULT.batches as usize {
            return Err(format!("{} samples", t.samples_ms.len()));
        }
        Ok(t.median_ms())
    };
    let (one, two) = (time(20_480)?, time(40_960)?);
    let ratio = two / one;
    if (1.6..2.4).contains(&ratio) {
        Ok(())
    } else {
        Err(format!(
            "2x the iterations took {ratio:.2}x the time ({one:.4} ms, {two:.4} ms)"
        ))
    }
}

/// Two runs of every kernel give bit-identical outputs: none uses atomics,
/// so nothing about the order blocks run in may change a result.
fn outputs_are_deterministic(gpu: &Gpu) -> Result<(), String> {
    let mut lesson = Roofline::new(gpu, small(gpu)).map_err(|e| e.to_string())?;
    for &kernel in Kernel::ALL {
        let first = lesson
            .check_output(kernel)
            .map_err(|e| e.to_string())?
            .output;
        let second = lesson
            .check_output(kernel)
            .map_err(|e| e.to_string())?
            .output;
        if let Agreement::Differ { count, first } = Agreement::of(&first, &second) {
            return Err(format!(
                "{}: {count} elements differ between two runs, first at {first}",
                kernel.symbol()
            ));
        }
    }
    Ok(())
}

/// Seed 002's clock check on a real GPU: a timed kernel carries its
/// timing window, the NVML sampler stamps readings inside it, the base
/// clock is read or said to be unknown, and the row's readings are the
/// ones in its window (at least one where the window spans three reading
/// periods).
fn clock_readings_fall_in_the_rows_window(gpu: &Gpu) -> Result<(), String> {
    let mut lesson = Roofline::new(gpu, small(gpu)).map_err(|e| e.to_string())?;
    let sampler = host::clocks::Sampler::start(gpu.info.pci_bus_id.as_deref());
    let plan = host::timing::Plan {
        warmups: 3,
        batches: 20,
        launches_per_batch: 20,
        flush_l2: false,
    };
    let t = lesson
        .time(Kernel::FmaPeak, plan)
        .map_err(|e| e.to_string())?;
    let clocks = sampler.finish();
    let window = t.window.ok_or("a GPU timing carries no window")?;
    if window.end < window.start {
        return Err("the window ends before it starts".into());
    }
    if clocks.unknown.is_some() {
        // No NVML here: nothing is attributed, and nothing is flagged.
        return match clocks.while_timed(Some(&window)) {
            None => Ok(()),
            Some(w) => Err(format!("clocks unknown, yet a row got {w:?}")),
        };
    }
    if clocks.base_sm_mhz.is_none() && clocks.base_unknown.is_none() {
        return Err("the base clock is neither read nor said to be unknown".into());
    }
    let w = clocks
        .while_timed(Some(&window))
        .ok_or("clocks were read, yet the row got none")?;
    let inside = clocks.stamped.iter().filter(|s| window.holds(s.at)).count();
    if w.samples != inside {
        return Err(format!(
            "{} readings given to the row, {inside} in its window",
            w.samples
        ));
    }
    let span = window.end - window.start;
    if span >= host::clocks::PERIOD * 3 && w.samples == 0 {
        return Err(format!("a window of {span:?} holds no reading"));
    }
    println!("    {}", clocks.line());
    Ok(())
}

/// The round-against-ragged kernels at both sizes on one side: the vector
/// add at n and n + 611 (every element exact), the guarded transpose at
/// side and side - 1 (bit for bit), each with the guard after its output.
fn ragged_sizes_check(gpu: &Gpu, side: Side) -> Result<(), String> {
    let mut lesson = Roofline::new(gpu, small(gpu)).map_err(|e| e.to_string())?;
    use_side::<roofline::RooflineLesson>(gpu, &mut lesson, side)?;
    for kernel in Kernel::RAGGED {
        for edge in Edge::ALL {
            let failures = lesson.check_at(kernel, edge).map_err(|e| e.to_string())?;
            if let Some(f) = failures.first() {
                return Err(f.to_string());
            }
        }
    }
    // The fills are restored: the placed kernels still pass.
    let failures = lesson.check(Kernel::VectorAdd).map_err(|e| e.to_string())?;
    match failures.first() {
        Some(f) => Err(f.to_string()),
        None => Ok(()),
    }
}

/// The GPU's own tensor-core chains at the quick sizes (`mma_peak` from
/// 8.0, `mma_peak_f16` on 7.5): [`chains_check`]. Below 7.5: no tensor
/// sizes, and the reason names the compute capability.
fn mma_peak_checks(gpu: &Gpu) -> Result<(), String> {
    use host::roofline::tensor::{TensorSizes, unavailable};
    let Some(sizes) = TensorSizes::quick(&gpu.info) else {
        let why = unavailable(&gpu.info).ok_or("no tensor sizes, yet no reason")?;
        println!("    {why}");
        return if why.contains("needs 7.5") {
            Ok(())
        } else {
            Err(why)
        };
    };
    chains_check(gpu, sizes)
}

/// A T4's FP16 ceiling, `mma_peak_f16` from the sm_75 module and cuBLAS's
/// FP16 GEMM, on any GPU from 7.5 (an H200 runs the T4's code):
/// [`chains_check`] at the quick sizes in FP16.
fn mma_peak_f16_checks(gpu: &Gpu) -> Result<(), String> {
    use host::cublas::Half;
    use host::roofline::tensor::{TensorSizes, unavailable};
    let Some(quick) = TensorSizes::quick(&gpu.info) else {
        let why = unavailable(&gpu.info).ok_or("no tensor sizes, yet no reason")?;
        println!("    {why}");
        return Ok(());
    };
    if quick.half == Half::F16 {
        println!("    the GPU's own ceiling is FP16: mma_peak_checks ran it");
        return Ok(());
    }
    chains_check(
        gpu,
        TensorSizes {
            half: Half::F16,
            wgmma_blocks: None,
            ..quick
        },
    )
}

/// The chains' kernel of `sizes`' precision and cuBLAS's GEMM beside it,
/// through the lesson's check: every element of the chains exactly its
/// reference at the PTX ISA's fragment layout, cuBLAS within its bound.
/// Then the same launch against a reference one trip short and one with
/// C's halves swapped: both must fail, on the hardware, or the check could
/// not tell.
fn chains_check(gpu: &Gpu, sizes: host::roofline::tensor::TensorSizes) -> Result<(), String> {
    use host::roofline::reference::{FragmentLayout, MmaPeak, PTX_ISA_LAYOUT};
    use host::roofline::tensor::TensorPeak;
    use kernels_gpu::roofline::MMA_UNROLL;
    println!("    {} and {}", sizes.mma_symbol(), sizes.cublas_symbol());
    let mut tensor = TensorPeak::new(gpu, sizes).map_err(|e| e.to_string())?;
    if let Err(why) = tensor.cublas() {
        println!("    without cuBLAS: {why}");
    }
    let failures = tensor.check().map_err(|e| e.to_string())?;
    if let Some(f) = failures.first() {
        return Err(f.to_string());
    }
    let short = MmaPeak::new(PTX_ISA_LAYOUT, sizes.mma_iters - MMA_UNROLL);
    let halves = FragmentLayout {
        c: |lane, r| (lane / 4 + 8 * (r / 2), 2 * (lane % 4) + 1 - r % 2),
        ..PTX_ISA_LAYOUT
    };
    for (what, wrong) in [
        ("one trip short", short),
        ("C's halves swapped", MmaPeak::new(halves, sizes.mma_iters)),
    ] {
        if tensor
            .check_mma(&wrong)
            .map_err(|e| e.to_string())?
            .is_none()
        {
            return Err(format!("the check passed a reference {what}"));
        }
    }
    Ok(())
}

/// `wgmma_peak` at the quick sizes on compute capability 9.0: every
/// element exactly its reference (the lesson's check, in `check`). Then the
/// same launch against a reference one step short: it must fail, on the
/// hardware. Elsewhere the run has no `wgmma` chains, and the reason names
/// the compute capability.
fn wgmma_peak_checks(gpu: &Gpu) -> Result<(), String> {
    use host::roofline::reference::WgmmaPeak;
    use host::roofline::tensor::{TensorPeak, TensorSizes, no_wgmma};
    let Some(sizes) = TensorSizes::quick(&gpu.info).filter(|s| s.wgmma_blocks.is_some()) else {
        let why = no_wgmma(&gpu.info).ok_or("no wgmma sizes, yet no reason")?;
        println!("    {why}");
        return Ok(());
    };
    let mut tensor = TensorPeak::new(gpu, sizes).map_err(|e| e.to_string())?;
    if let Some(why) = tensor.wgmma_missing() {
        return Err(format!("compute capability 9.0, yet {why}"));
    }
    let failures = tensor.check().map_err(|e| e.to_string())?;
    if let Some(f) = failures.first() {
        return Err(f.to_string());
    }
    let short = WgmmaPeak::new(sizes.wgmma_iters - 1);
    match tensor.check_wgmma(&short).map_err(|e| e.to_string())? {
        None => Err("the check passed a reference one step short".into()),
        Some(f) => {
            println!("    one step short: {f}");
            Ok(())
        }
    }
}

/// The lesson's quick run: where the GPU has tensor cores, the reported
/// tensor ceiling is at least cuBLAS's best and the `mma.sync` chains' (and
/// the `wgmma` chains' on 9.0), set by whichever is fastest, and the report
/// names it, its precision (BF16 from 8.0, FP16 on 7.5) and prints the
/// tensor ridge point; below 7.5 one line says there is none.
fn the_tensor_ceiling_is_at_least_cublas_best(gpu: &Gpu) -> Result<(), String> {
    let (table, lines) = lab_tests::run_quick::<roofline::RooflineLesson>(gpu)?;
    let ceiling = lines
        .iter()
        .find(|l| l["variant"] == "ceiling-tensor")
        .ok_or("no ceiling-tensor row")?;
    if gpu.info.compute_capability < (7, 5) {
        let why = ceiling["why_none"]
            .as_str()
            .ok_or("no why_none below 7.5")?;
        return lab_tests::report_contains(&table, &[why]);
    }
    let facts = &ceiling["tensor_ceiling"];
    let value = ceiling["value"].as_f64().ok_or("no ceiling value")?;
    let mma = facts["mma_sync_gflop_per_s"]
        .as_f64()
        .ok_or("no mma.sync rate")?;
    let cublas = facts["cublas_best_gflop_per_s"].as_f64();
    let wgmma = facts["wgmma_gflop_per_s"].as_f64();
    if gpu.info.compute_capability == (9, 0) && wgmma.is_none() {
        return Err(format!(
            "compute capability 9.0, yet no wgmma chains: {}",
            facts["wgmma_missing"]
        ));
    }
    let fastest = [
        ("mma.sync", Some(mma)),
        ("wgmma", wgmma),
        ("cuBLAS", cublas),
    ]
    .into_iter()
    .filter_map(|(name, rate)| rate.map(|r| (name, r)))
    .fold(
        ("mma.sync", mma),
        |best, next| if next.1 > best.1 { next } else { best },
    );
    if value < fastest.1 {
        return Err(format!(
            "the ceiling {value} GFLOP/s is below {}'s {} (mma.sync {mma}, wgmma {wgmma:?}, cuBLAS {cublas:?})",
            fastest.0, fastest.1
        ));
    }
    if facts["source"] != fastest.0 {
        return Err(format!(
            "set by {}, but {} is faster",
            facts["source"], fastest.0
        ));
    }
    println!(
        "    mma.sync {:.1} TFLOP/s, wgmma {}, cuBLAS {} (quick sizes)",
        mma / 1e3,
        wgmma.map_or(format!("none ({})", facts["wgmma_missing"]), |w| format!(
            "{:.1} TFLOP/s",
            w / 1e3
        )),
        cublas.map_or(format!("none ({})", facts["cublas_missing"]), |c| format!(
            "{:.1} TFLOP/s",
            c / 1e3
        )),
    );
    let precision = if gpu.info.compute_capability >= (8, 0) {
        "BF16"
    } else {
        "FP16"
    };
    lab_tests::report_contains(
        &table,
        &[
            &format!("The {precision} tensor-core ceiling is"),
            "tensor ridge point:",
            "<- the tensor ceiling",
        ],
    )
}

fn main() -> std::process::ExitCode {
    let mut trials = kernel_trials(check);
    trials.extend([
        trial("lesson_sizes_are_valid", lesson_sizes_are_valid),
        trial("timing_follows_the_work", timing_follows_the_work),
        trial("outputs_are_deterministic", outputs_are_deterministic),
        trial(
            "clock_readings_fall_in_the_rows_window",
            clock_readings_fall_in_the_rows_window,
        ),
        trial("ragged_sizes_check_rust", |gpu| {
            ragged_sizes_check(gpu, Side::Rust)
        }),
        trial("ragged_sizes_check_cuda_c", |gpu| {
            ragged_sizes_check(gpu, Side::CudaC)
        }),
        trial("mma_peak_checks", mma_peak_checks),
        trial("mma_peak_f16_checks", mma_peak_f16_checks),
        trial("wgmma_peak_checks", wgmma_peak_checks),
        trial(
            "the_tensor_ceiling_is_at_least_cublas_best",
            the_tensor_ceiling_is_at_least_cublas_best,
        ),
        trial("roofline::the_lesson_runs_quick", |gpu| {
            let (table, lines) = lab_tests::run_quick::<roofline::RooflineLesson>(gpu)?;
            lab_tests::report_contains(
                &table,
                &[
                    "| vector_add/ragged ",
                    "| transpose_naive_guarded/ragged ",
                    "95^2 (9025 elements)",
                    "The GEMM lesson's last steps on this roofline, checked and timed at 256^3",
                    "- gemm_warptiled (",
                ],
            )?;
            // The GEMM points: gemm_warptiled, and from compute capability
            // 7.5 on the last tensor-core step (FP16 on 7.5, BF16 from 8.0),
            // each under its roof.
            let gemm: Vec<_> = lines
                .iter()
                .filter(|l| {
                    l["variant"]
                        .as_str()
                        .is_some_and(|v| v.starts_with("gemm-"))
                })
                .collect();
            let cc = gpu.info.compute_capability;
            let want = if cc >= (7, 5) { 2 } else { 1 };
            if gemm.len() != want {
                return Err(format!("{} GEMM points, not {want}", gemm.len()));
            }
            if let Some(tc) = gemm.get(1) {
                let precision = if cc >= (8, 0) { "bf16" } else { "fp16" };
                if tc["precision"] != precision {
                    return Err(format!(
                        "compute capability {cc:?}, yet the tensor-core point is {}",
                        tc["precision"]
                    ));
                }
            }
            for g in &gemm {
                if g["roof"].is_null() || g["intensity"].as_f64().is_none_or(|i| i <= 0.0) {
                    return Err(format!("a GEMM point without a roof or an intensity: {g}"));
                }
            }
            host::record::runs_of(&lines).map(drop)
        }),
    ]);
    run_gpu_trials(trials)
}
