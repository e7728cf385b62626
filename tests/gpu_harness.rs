//! GPU tests of the harness kernel and its CUDA C twin: checked every
//! element at the odd size, at one element and at the seed's size (through
//! the first-call path); each timing method (the seed's harness with both,
//! either and neither of its synchronisations, and the events) gives
//! positive, finite per-launch times, and the output is still right after
//! them. Where no NVIDIA driver is present, every test is
//! reported as ignored.

use host::compare::Side;
use host::gpu::Gpu;
use host::harness::{self, Harness, Syncs};
use host::timing::Plan;
use kernels_gpu::harness::{CHECK_ELEMS, SEED_ELEMS};
use lab_tests::{run_gpu_trials, trial, use_side};

fn check(gpu: &Gpu, side: Side) -> Result<(), String> {
    let mut lesson = Harness::new(gpu, SEED_ELEMS).map_err(|e| e.to_string())?;
    lesson.load().map_err(|e| e.to_string())?;
    use_side::<harness::HarnessLesson>(gpu, &mut lesson, side)?;
    for n in [CHECK_ELEMS, 1, SEED_ELEMS] {
        if let (Some(f), _) = lesson.check(n).map_err(|e| e.to_string())? {
            return Err(f.to_string());
        }
    }
    Ok(())
}

/// The first-call path gets the kernel, launches once and its output
/// checks; a second "first call" on the same lesson is refused.
fn first_call_then_check(gpu: &Gpu) -> Result<(), String> {
    let mut lesson = Harness::new(gpu, SEED_ELEMS).map_err(|e| e.to_string())?;
    let first = lesson.first_call(SEED_ELEMS).map_err(|e| e.to_string())?;
    if !(first.get_function_ms >= 0.0 && first.launch_and_sync_ms > 0.0) {
        return Err(format!("first call timed as {first:?}"));
    }
    if let (Some(f), _) = lesson.verify(SEED_ELEMS).map_err(|e| e.to_string())? {
        return Err(f.to_string());
    }
    match lesson.first_call(SEED_ELEMS) {
        Err(host::Error::Tool(_)) => Ok(()),
        other => Err(format!("a second first call was not refused: {other:?}")),
    }
}

/// Every method returns one positive, finite sample per batch.
fn every_method_measures(gpu: &Gpu) -> Result<(), String> {
    let mut lesson = Harness::new(gpu, CHECK_ELEMS).map_err(|e| e.to_string())?;
    let e = |e: host::Error| e.to_string();
    let timings = [
        lesson
            .time_host_clocked(CHECK_ELEMS, (2, 5, 3), Syncs::NONE)
            .map_err(e)?,
        lesson
            .time_host_clocked(CHECK_ELEMS, (2, 5, 3), Syncs::BOTH)
            .map_err(e)?,
        lesson
            .time_host_clocked(CHECK_ELEMS, (2, 5, 3), Syncs::NO_START)
            .map_err(e)?,
        lesson
            .time_host_clocked(CHECK_ELEMS, (2, 5, 3), Syncs::NO_STOP)
            .map_err(e)?,
        lesson
            .time_with_events(
                CHECK_ELEMS,
                Plan {
                    warmups: 2,
                    batches: 3,
                    launches_per_batch: 5,
                    flush_l2: false,
                },
            )
            .map_err(e)?,
    ];
    for t in &timings {
        if t.samples_ms.len() != 3 || !t.samples_ms.iter().all(|s| s.is_finite() && *s > 0.0) {
            return Err(format!("samples {:?}", t.samples_ms));
        }
    }
    // The output is still right after all those launches.
    match lesson.verify(CHECK_ELEMS).map_err(e)? {
        (Some(f), _) => Err(f.to_string()),
        (None, _) => Ok(()),
    }
}

/// The quick run's report carries the four host-clocked rows of each
/// size, the reading of each synchronisation on its own, and the host
/// workload's correctness line (text) and fact (JSON).
fn the_report_reads_each_sync(gpu: &Gpu) -> Result<(), String> {
    let (table, json) = lab_tests::run_quick::<harness::HarnessLesson>(gpu)?;
    lab_tests::report_contains(
        &table,
        &[
            "/no-sync",
            "/host-sync",
            "/no-start-sync",
            "/no-stop-sync",
            "/events",
            "Without the synchronisation before the clock starts, (3a)",
            "Without the synchronisation before the clock stops, (3b)",
            "Both removed, (1) reads",
            "output correct, all 2000000 elements equal to the reference",
        ],
    )?;
    let facts = json
        .iter()
        .find(|l| l["variant"] == "facts")
        .ok_or("no facts line")?;
    let first = &facts["facts"]["sizes"][0];
    if first["host_workload"]["correct"] != true
        || first["syncs"]["against_both"]["no_stop_sync"]
            .as_f64()
            .is_none()
    {
        return Err(format!("facts: {first}"));
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    run_gpu_trials(vec![
        trial(
            "harness::the_report_reads_each_sync",
            the_report_reads_each_sync,
        ),
        trial("harness_add", |gpu| check(gpu, Side::Rust)),
        trial("twin_harness_add", |gpu| check(gpu, Side::CudaC)),
        trial("first_call_then_check", first_call_then_check),
        trial("every_method_measures", every_method_measures),
        trial("harness::the_lesson_runs_quick", |gpu| {
            lab_tests::run_quick::<harness::HarnessLesson>(gpu).map(drop)
        }),
    ])
}
