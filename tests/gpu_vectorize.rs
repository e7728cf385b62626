//! GPU tests of the vectorize kernels and their CUDA C twins: every add,
//! both sides, bit for bit against the reference at the traced sizes, at
//! sizes below one vector, and at the odd check size. Where no NVIDIA
//! driver is present, every test is reported as ignored.

use host::compare::Side;
use host::gpu::Gpu;
use host::kernels::KernelId;
use host::vectorize::{self, Dtype, Kernel, Sizes, Vectorize};
use kernels_gpu::vectorize::CHECK_ELEMS;
use lab_tests::{run_gpu_trials, trial, use_side};

fn check_all(gpu: &Gpu, side: Side) -> Result<(), String> {
    let sizes = Sizes::new(&gpu.info, true);
    let mut lesson = Vectorize::new(gpu, &sizes).map_err(|e| e.to_string())?;
    use_side::<vectorize::VectorizeLesson>(gpu, &mut lesson, side)?;
    for &k in Kernel::ALL {
        for n in [1, 3, 7, 10, 41, 4099, 1 << 20, CHECK_ELEMS] {
            if let (Some(f), _) = lesson.check(k, n).map_err(|e| e.to_string())? {
                return Err(f.to_string());
            }
        }
    }
    Ok(())
}

/// The seed's small launches (32 bytes per array, `<<<1, 2>>>`) on one
/// side: each output is the seed's 101, 202, ... and matches the host's.
fn seed_launches(gpu: &Gpu, side: Side) -> Result<(), String> {
    let sizes = Sizes::new(&gpu.info, true);
    let mut lesson = Vectorize::new(gpu, &sizes).map_err(|e| e.to_string())?;
    use_side::<vectorize::VectorizeLesson>(gpu, &mut lesson, side)?;
    for (d, n) in [(Dtype::F32, 8), (Dtype::F64, 4), (Dtype::F16, 16)] {
        let (failure, launch) = lesson.seed_launch(d).map_err(|e| e.to_string())?;
        if let Some(f) = failure {
            return Err(f.to_string());
        }
        let want: Vec<f64> = (1..=n).map(|i| 101.0 * i as f64).collect();
        if launch.got != want || launch.want != want || (launch.grid, launch.block) != (1, 2) {
            return Err(format!("{d:?}: {launch:?}"));
        }
    }
    // The fills are back after a seed launch: a check still passes.
    if let (Some(f), _) = lesson
        .check(Kernel::Vec16(Dtype::F32), CHECK_ELEMS)
        .map_err(|e| e.to_string())?
    {
        return Err(f.to_string());
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    run_gpu_trials(vec![
        trial("vectorize::every_add_is_bit_exact_rust", |gpu| {
            check_all(gpu, Side::Rust)
        }),
        trial("vectorize::every_add_is_bit_exact_cuda_c", |gpu| {
            check_all(gpu, Side::CudaC)
        }),
        trial("vectorize::seed_launches_rust", |gpu| {
            seed_launches(gpu, Side::Rust)
        }),
        trial("vectorize::seed_launches_cuda_c", |gpu| {
            seed_launches(gpu, Side::CudaC)
        }),
        trial("vectorize::the_lesson_runs_quick", |gpu| {
            let (table, _) = lab_tests::run_quick::<vectorize::VectorizeLesson>(gpu)?;
            let sections = table.matches("\n== ").count();
            if sections != 5 {
                return Err(format!(
                    "expected five sections, the report has {sections}:\n{table}"
                ));
            }
            lab_tests::report_contains(
                &table,
                &[
                    "  GPU out:        101 202 303 404 505 606 707 808",
                    "  host reference: 101 202 303 404",
                    "add_vec16_f32/round",
                    "add_vec16_f32/ragged",
                    "2^20 + 611 (1049187 elements)",
                ],
            )?;
            Ok(())
        }),
        trial(
            "vectorize::every_gpu_row_is_read_against_its_limit",
            |gpu| {
                // Seed 002's reading: each event-timed row with a rate names
                // its limit and band, where the driver's attributes give one,
                // unless its bytes per launch fit in the L2 (then DRAM is
                // not its limit and the row has no reading).
                let (table, lines) = lab_tests::run_quick::<vectorize::VectorizeLesson>(gpu)?;
                if gpu.info.derived_dram_bytes_per_s().is_none() {
                    return Ok(());
                }
                let limits = host::report::DerivedLimits::of(&gpu.info);
                let mut read = 0;
                for line in lines
                    .iter()
                    .filter(|l| l["timed_by"] == "cuda events" && l["gb_per_s"].is_number())
                {
                    let band = line["limit_band"].as_str();
                    if limits.fits_in_l2(line["bytes"].as_f64()) {
                        if band.is_some() {
                            return Err(format!(
                                "a row that fits in the L2 read against DRAM: {line}"
                            ));
                        }
                        continue;
                    }
                    read += 1;
                    if line["limit"] != host::report::DerivedLimits::DRAM
                        || !band.is_some_and(|b| {
                            [
                                "at_or_past_limit",
                                "close_to_done",
                                "between",
                                "something_wrong",
                            ]
                            .contains(&b)
                        })
                    {
                        return Err(format!("row without its reading: {line}"));
                    }
                }
                if (read > 0) != table.contains(host::report::VERDICT_COLUMN) {
                    return Err(format!(
                        "{read} rows read against DRAM, and the verdict column does not match:\n{table}"
                    ));
                }
                Ok(())
            },
        ),
    ])
}
