//! GPU tests of the GEMM lesson: each kernel and its CUDA C twin (the
//! tensor-core kernels' and, on compute capability 9.0, the wgmma kernel's
//! included) checked
//! against the f64 reference at the small non-square shape and, by samples,
//! at a shape no tile divides; then the lesson's quick run through the
//! lesson layer. Where no NVIDIA driver is present, every test is reported
//! as ignored.

use host::compare::Side;
use host::gemm::{
    F16Kernel, Gemm, GemmLesson, GemmRow, Kernel, SMALL, TC_SMALL, TcKernel, Timed, WgKernel,
};
use host::gpu::Gpu;
use host::kernels::KernelId;
use lab_tests::{kernel_trials, run_gpu_trials, trial, use_side};

fn check(gpu: &Gpu, kernel: Kernel, side: Side) -> Result<(), String> {
    let mut lesson = Gemm::new(gpu, 300).map_err(|e| e.to_string())?;
    use_side::<GemmLesson>(gpu, &mut lesson, side)?;
    // SMALL: k and n not multiples of 4 (the float4 kernel's scalar
    // fallback); (257, 300, 129): B by float4s, a partial last row of
    // blocks; (67, 132, 100): A and B by float4s with a partial block;
    // (40, 132, 5): one step of k, shorter than a tile (the warp-tiled
    // kernel's loop without a prefetch).
    for shape in [SMALL, (257, 300, 129), (67, 132, 100), (40, 132, 5)] {
        let (failures, _) = lesson
            .check(kernel, shape, None, None)
            .map_err(|e| e.to_string())?;
        if let Some(f) = failures.first() {
            return Err(f.to_string());
        }
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    let mut trials = kernel_trials::<Kernel>(check);
    for side in [Side::Rust, Side::CudaC] {
        let name = format!(
            "gemm::the_tensor_core_kernel_matches_the_reference ({})",
            side.label()
        );
        trials.push(trial(&name, move |gpu| {
            // 600: buffers for the largest shape below, 257 x 264 x 520.
            let mut lesson = Gemm::new(gpu, 600).map_err(|e| e.to_string())?;
            lesson.enable_tensor_cores().map_err(|e| e.to_string())?;
            if let Err(why) = &lesson.tensor {
                // A GPU below compute capability 8.0: the lesson says so and
                // runs the FP32 kernels; nothing to check here.
                eprintln!("no tensor-core kernel on this GPU: {why}");
                return Ok(());
            }
            use_side::<GemmLesson>(gpu, &mut lesson, side)?;
            let tc = lesson.tensor.as_ref().expect("checked above");
            if let Some(why) = &tc.wide {
                eprintln!(
                    "{} not checked on this GPU: {why}",
                    TcKernel::Bf16SwizzledWide.symbol()
                );
            }
            let kernels: Vec<TcKernel> = tc.mma_kernels().collect();
            for kernel in kernels {
                // (67, 136, 40): fewer steps of k than the pipelined
                // kernels' stages, so their prologues commit empty groups.
                // (257, 264, 128) and (257, 264, 512): k a multiple of both
                // swizzled kernels' steps (32 and 64), so in one grid the
                // whole blocks take the unguarded copies and the partial
                // last block row and column the guarded. (257, 264, 520) and
                // (257, 264, 512): 9 and 8 steps of the wide kernel (17 and
                // 16 of the 128 x 128 one), so every stage is refilled after
                // it was read and the rotation wraps more than once, in both
                // instances. (1, 8, 8): one row and one pair of columns a
                // lane group, so nearly every C pair of the epilogue lies
                // outside and is read at its row and column clamped into C.
                for shape in [
                    TC_SMALL,
                    (257, 264, 136),
                    (67, 136, 40),
                    (257, 264, 128),
                    (257, 264, 520),
                    (257, 264, 512),
                    (1, 8, 8),
                ] {
                    let mut failures = lesson
                        .check_tc(kernel, shape, None)
                        .map_err(|e| e.to_string())?;
                    failures.extend(
                        lesson
                            .check_tc_exact(kernel, shape)
                            .map_err(|e| e.to_string())?,
                    );
                    if let Some(f) = failures.first() {
                        return Err(f.to_string());
                    }
                }
            }
            let same = lesson
                .check_tc_same_sums((257, 264, 136))
                .map_err(|e| e.to_string())?;
            same.first().map_or(Ok(()), |f| Err(f.to_string()))
        }));
    }
    // The f16 kernel of the sm_75 module, what a T4 runs: on every GPU of
    // compute capability 7.5 and up, both sides, at shapes with a partial
    // block, one step of k and many.
    for side in [Side::Rust, Side::CudaC] {
        let name = format!(
            "gemm::the_f16_kernel_matches_the_reference ({})",
            side.label()
        );
        trials.push(trial(&name, move |gpu| {
            let mut lesson = Gemm::new(gpu, 600).map_err(|e| e.to_string())?;
            lesson.enable_tensor_cores().map_err(|e| e.to_string())?;
            if let Err(why) = &lesson.fp16 {
                // Only a GPU below 7.5 or a build below sm_75 has none.
                let built = host::ptx::parse_sm(host::ptx::PTX_ARCH).unwrap_or((0, 0));
                if gpu.info.compute_capability >= (7, 5) && built >= (7, 5) {
                    return Err(format!("a GPU of compute capability 7.5 or more and a build for {} have no f16 side: {why}", host::ptx::PTX_ARCH));
                }
                eprintln!("no f16 tensor-core kernel on this GPU: {why}");
                return Ok(());
            }
            use_side::<GemmLesson>(gpu, &mut lesson, side)?;
            // (67, 136, 40): two steps, the second 8 deep; (257, 264, 136):
            // a partial row and column of blocks; (130, 392, 584): 19 steps,
            // each stage refilled 9 times; (1, 8, 8): an epilogue whose C
            // pairs lie outside but for one row, read at clamped places.
            for &kernel in F16Kernel::ALL {
                for shape in [TC_SMALL, (67, 136, 40), (67, 136, 8), (257, 264, 136), (130, 392, 584), (1, 8, 8)] {
                    let mut failures = lesson.check_tc(kernel, shape, None).map_err(|e| e.to_string())?;
                    failures.extend(lesson.check_tc_exact(kernel, shape).map_err(|e| e.to_string())?);
                    if let Some(f) = failures.first() {
                        return Err(f.to_string());
                    }
                }
            }
            Ok(())
        }));
    }
    // A held timing ([`Gemm::time_held`]): the hold's untimed second and
    // its timed second both pass on the host's clock, at least its least
    // count of batches is timed, each batch measured, inside a window the
    // clock readings can be taken from.
    trials.push(trial(
        "gemm::a_held_timing_holds_then_times_for_a_second_each",
        |gpu| {
            let mut lesson = Gemm::new(gpu, 256).map_err(|e| e.to_string())?;
            lesson
                .set_shape((256, 256, 256))
                .map_err(|e| e.to_string())?;
            let hold = host::timing::Hold::DEFAULT;
            let began = std::time::Instant::now();
            let timing = lesson
                .time_held(
                    Timed::Kernel(GemmRow::Fp32(Kernel::Tiled)),
                    host::timing::Plan::DEFAULT,
                )
                .map_err(|e| e.to_string())?;
            let took = began.elapsed().as_secs_f64();
            if took < hold.untimed_s + hold.timed_s {
                return Err(format!(
                    "held for {took:.3} s, less than {} + {} s",
                    hold.untimed_s, hold.timed_s
                ));
            }
            if timing.samples_ms.len() < hold.min_batches as usize
                || timing.samples_ms.iter().any(|&ms| ms <= 0.0)
            {
                return Err(format!("held batches: {:?}", timing.samples_ms));
            }
            // The clock readings' window covers the timed batches alone: at
            // least the timed second, and not the untimed one before it.
            let window = timing
                .window
                .ok_or_else(|| "a held timing with no window".to_string())?;
            let timed = (window.end - window.start).as_secs_f64();
            if timed < hold.timed_s || took - timed < hold.untimed_s {
                return Err(format!("a window of {timed:.3} s in a hold of {took:.3} s"));
            }
            Ok(())
        },
    ));
    // The quick run: its FP32 rows are read against the FMA ceiling
    // measured in the same run, and from compute capability 8.0 on its
    // tensor-core rows against the tensor-core ceiling measured there, and
    // the report says what set it.
    trials.push(trial("gemm::the_lesson_runs_quick", |gpu| {
        let (table, lines) = lab_tests::run_quick::<GemmLesson>(gpu)?;
        // Every FP32 row, on any GPU, against the FMA ceiling measured in
        // the same run.
        lab_tests::report_contains(&table, &["Measured before the timings below, as lab roofline measures it: the FP32 ceiling"])?;
        let fma = lines
            .iter()
            .find(|l| l["variant"] == "facts")
            .and_then(|l| l["facts"]["fma_ceiling_gflop_per_s"].as_f64())
            .ok_or("no fma_ceiling_gflop_per_s in the facts")?;
        for row in lines.iter().filter(|l| l["precision"] == "fp32") {
            if row["limit"] != host::gemm::FMA_CEILING || row["limit_value"].as_f64() != Some(fma) {
                return Err(format!("{} is not read against the measured FMA ceiling {fma}: {}", row["symbol"], row["limit"]));
            }
        }
        // From 7.5 on the rows of the measured tensor-core ceiling's
        // precision (BF16 from 8.0, FP16 on 7.5) read against it, the FP16
        // rows from 8.0 against no limit; where cuBLAS loaded, beside its
        // FP16 GEMM, each FP16 kernel row with its share.
        if gpu.info.compute_capability < (7, 5) {
            return Ok(());
        }
        let (precision, upper) = if gpu.info.compute_capability >= (8, 0) { ("bf16", "BF16") } else { ("fp16", "FP16") };
        lab_tests::report_contains(
            &table,
            &[&format!("Measured before the timings below, as lab roofline measures it: The {upper} tensor-core ceiling is")],
        )?;
        let facts = lines
            .iter()
            .find(|l| l["variant"] == "facts")
            .map(|l| &l["facts"]["tensor_ceiling"])
            .filter(|t| !t.is_null())
            .ok_or("no tensor_ceiling in the JSON")?;
        let value = facts["gflop_per_s"].as_f64().ok_or(format!("no measured ceiling: {facts}"))?;
        if facts["precision"] != precision {
            return Err(format!("compute capability {:?}, yet the ceiling is {}", gpu.info.compute_capability, facts["precision"]));
        }
        let fp16: Vec<_> = lines.iter().filter(|l| l["precision"] == "fp16" && l["symbol"].is_string()).collect();
        if !fp16.iter().any(|r| r["symbol"].as_str().is_some_and(|s| s.starts_with("gemm_f16_mma/"))) {
            return Err("no gemm_f16_mma row".into());
        }
        let with_cublas = lines.iter().find(|l| l["variant"] == "facts").is_some_and(|l| l["facts"]["cublas"].get("Ok").is_some());
        for row in &fp16 {
            let is_kernel = row["symbol"].as_str().is_some_and(|s| s.starts_with("gemm_f16_mma/"));
            if with_cublas && is_kernel && !row["cublas_share"].is_number() {
                return Err(format!("{} has no share of cuBLAS's FP16 GEMM", row["symbol"]));
            }
            if precision == "bf16" && !row["limit"].is_null() {
                return Err(format!("{} is read against {}, but the measured ceiling is BF16", row["symbol"], row["limit"]));
            }
        }
        if with_cublas && !fp16.iter().any(|r| r["symbol"].as_str().is_some_and(|s| s.starts_with("cublasGemmEx_fp16/"))) {
            return Err("cuBLAS loaded, but there is no cublasGemmEx_fp16 row".into());
        }
        let tc_rows: Vec<_> = lines.iter().filter(|l| l["precision"] == precision && l["symbol"].is_string()).collect();
        if tc_rows.is_empty() {
            return Err(format!("no {precision} rows"));
        }
        for row in tc_rows {
            if row["limit"] != host::gemm::TENSOR_CEILING || row["limit_value"].as_f64() != Some(value) {
                return Err(format!("{} is not read against the measured ceiling {value}: {}", row["symbol"], row["limit"]));
            }
        }
        println!("    the measured tensor-core ceiling: {:.1} TFLOP/s, set by {}", value / 1e3, facts["source"]);
        Ok(())
    }));
    // Last: a TMA kernel whose copies never land traps (after 4 s), and a
    // trap ends the process's context for every trial after it.
    for side in [Side::Rust, Side::CudaC] {
        let name = format!(
            "gemm::the_wgmma_kernels_match_the_reference ({})",
            side.label()
        );
        trials.push(trial(&name, move |gpu| {
            let mut lesson = Gemm::new(gpu, 600).map_err(|e| e.to_string())?;
            lesson.enable_tensor_cores().map_err(|e| e.to_string())?;
            let hopper = match &lesson.tensor {
                Ok(tc) => tc.hopper.as_ref().err().cloned(),
                Err(why) => Some(why.clone()),
            };
            if let Some(why) = hopper {
                // Not compute capability 9.0: the lesson says so and runs
                // the other kernels; nothing to check here.
                eprintln!("no wgmma kernel on this GPU: {why}");
                return Ok(());
            }
            use_side::<GemmLesson>(gpu, &mut lesson, side)?;
            // (67, 136, 40): one step of k, fewer than the prologue's two;
            // (257, 264, 136): three steps, the last 8 deep, a partial row
            // of blocks and a partial column; (130, 392, 584): ten steps,
            // the stages reused twice over, both warpgroups' rows cut by m;
            // (1153, 264, 136): 10 block rows, a whole group of WG_GROUP
            // and a partial one of 2, in the grid's grouped walk; (1, 8, 8):
            // one row of one tile of k, tensor-map boxes far past A's and
            // B's edges, every C pair but one row's read at clamped places.
            for &kernel in WgKernel::ALL {
                for shape in [
                    TC_SMALL,
                    (67, 136, 40),
                    (257, 264, 136),
                    (130, 392, 584),
                    (1153, 264, 136),
                    (1, 8, 8),
                ] {
                    let mut failures = lesson
                        .check_tc(kernel, shape, None)
                        .map_err(|e| e.to_string())?;
                    failures.extend(
                        lesson
                            .check_tc_exact(kernel, shape)
                            .map_err(|e| e.to_string())?,
                    );
                    if let Some(f) = failures.first() {
                        return Err(f.to_string());
                    }
                }
            }
            Ok(())
        }));
    }
    run_gpu_trials(trials)
}
