//! GPU tests of the vectorize kernels and their CUDA C twins: every add,
//! both sides, bit for bit against the reference at the traced sizes, at
//! sizes below one vector, and at the odd check size. Where no NVIDIA
//! driver is present, every test is reported as ignored.

use host::compare::Side;
use host::gpu::Gpu;
use host::kernels::KernelId;
use host::vectorize::{self, Kernel, Sizes, Vectorize};
use kernels_gpu::vectorize::CHECK_ELEMS;
use lab_tests::{run_gpu_trials, trial, use_side};

fn check_all(gpu: &Gpu, side: Side) -> Result<(), String> {
    let sizes = Sizes::new(&gpu.info, true);
    let mut lesson = Vectorize::new(gpu, &sizes).map_err(|e| e.to_string())?;
    use_side::<vectorize::VectorizeLesson>(gpu, &mut lesson, side)?;
    for &k in Kernel::ALL {
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
        trial("vectorize::every_add_is_bit_exact_rust", |gpu| {
            check_all(gpu, Side::Rust)
        }),
        trial("vectorize::every_add_is_bit_exact_cuda_c", |gpu| {
            check_all(gpu, Side::CudaC)
        }),
        trial("vectorize::the_lesson_runs_quick", |gpu| {
            let (table, _) = lab_tests::run_quick::<vectorize::VectorizeLesson>(gpu)?;
            match table.matches("\n== ").count() {
                3 => Ok(()),
                n => Err(format!(
                    "expected three sections, the report has {n}:\n{table}"
                )),
            }
        }),
        trial(
            "vectorize::every_gpu_row_is_read_against_its_limit",
            |gpu| {
                // Seed 002's reading: each event-timed row with a rate names
                // its limit and band, where the driver's attributes give one.
                let (table, lines) = lab_tests::run_quick::<vectorize::VectorizeLesson>(gpu)?;
                if gpu.info.derived_dram_bytes_per_s().is_none() {
                    return Ok(());
                }
                if !table.contains(host::report::VERDICT_COLUMN) {
                    return Err(format!("no verdict column:\n{table}"));
                }
                for line in lines
                    .iter()
                    .filter(|l| l["timed_by"] == "cuda events" && l["gb_per_s"].is_number())
                {
                    let band = line["limit_band"].as_str().unwrap_or("");
                    if line["limit"] != host::report::DerivedLimits::DRAM
                        || ![
                            "at_or_past_limit",
                            "close_to_done",
                            "between",
                            "something_wrong",
                        ]
                        .contains(&band)
                    {
                        return Err(format!("row without its reading: {line}"));
                    }
                }
                Ok(())
            },
        ),
    ])
}
