//! GPU tests of the specialize kernels and their CUDA C twins: each
//! specialized kernel at its N and the runtime kernel at every N, checked
//! bit for bit against the f32 fma reference (and within the rounding bound
//! of f64) at the odd correctness size and at a few awkward dot counts; the
//! specialized and runtime outputs identical; the linking evidence: two
//! NVRTC units with relocatable device code, linked by the driver's
//! linker (`cuLinkCreate`, `cuLinkAddData`, `cuLinkComplete`), hold one
//! definition of each template instantiation, their kernels compute 70 and
//! 17, and the control (an ordinary function defined in both) is refused.
//! Where no NVIDIA driver is present, every test is reported as ignored.

use host::compare::Side;
use host::gpu::Gpu;
use host::specialize::{self, Kernel, Sizes, Specialize};
use kernels_gpu::specialize::{CHECK_DOTS, SPECIALIZED_N};
use lab_tests::{kernel_trials, run_gpu_trials, trial, use_side};

fn lesson(gpu: &Gpu, side: Side) -> Result<Specialize<'_>, String> {
    let sizes = Sizes::new(&gpu.info, true);
    let mut lesson = Specialize::new(gpu, &sizes).map_err(|e| e.to_string())?;
    use_side::<specialize::SpecializeLesson>(gpu, &mut lesson, side)?;
    Ok(lesson)
}

/// `kernel` at each length it computes, at the check size and at 1, 31
/// and 257 dots (a partial warp, a partial block and one past a block).
fn check(gpu: &Gpu, kernel: Kernel, side: Side) -> Result<(), String> {
    let mut lesson = lesson(gpu, side)?;
    let lengths: Vec<usize> = match kernel {
        Kernel::Specialized(n) => vec![n],
        Kernel::Runtime => SPECIALIZED_N.to_vec(),
    };
    for n in lengths {
        for count in [CHECK_DOTS, 1, 31, 257] {
            let (failures, _) = lesson.check(kernel, n, count).map_err(|e| e.to_string())?;
            if let Some(f) = failures.first() {
                return Err(f.to_string());
            }
        }
    }
    Ok(())
}

/// dot_specialized_N and dot_runtime at N give the same bits, on both
/// sides, and the two sides agree.
fn specialized_and_runtime_agree(gpu: &Gpu) -> Result<(), String> {
    let mut outputs = Vec::new();
    for side in [Side::Rust, Side::CudaC] {
        let mut lesson = lesson(gpu, side)?;
        for &n in SPECIALIZED_N {
            let s = lesson
                .check(Kernel::Specialized(n), n, CHECK_DOTS)
                .map_err(|e| e.to_string())?
                .1;
            let r = lesson
                .check(Kernel::Runtime, n, CHECK_DOTS)
                .map_err(|e| e.to_string())?
                .1;
            if s != r {
                return Err(format!(
                    "{}: N = {n}: specialized and runtime differ",
                    side.label()
                ));
            }
            outputs.push(s);
        }
    }
    let (rust, c) = outputs.split_at(SPECIALIZED_N.len());
    if rust != c {
        return Err("Rust and CUDA C outputs differ".into());
    }
    Ok(())
}

/// A specialized kernel asked for another length is an error, not a
/// launch.
fn a_wrong_length_is_refused(gpu: &Gpu) -> Result<(), String> {
    let mut lesson = lesson(gpu, Side::Rust)?;
    match lesson.launch(Kernel::Specialized(4), 8, 10) {
        Err(host::Error::Size(_)) => Ok(()),
        other => Err(format!("expected a size error, got {other:?}")),
    }
}

/// The driver's linker keeps one definition of dot_linked<4> and of
/// dot_linked<2> from the two units, both kernels compute the hand-checked
/// dots, the control pair is refused with a log, and the units' PTX
/// declares what the lesson says (.weak instantiations, .visible control).
fn the_linker_keeps_one_copy_of_each_instantiation(gpu: &Gpu) -> Result<(), String> {
    let evidence = specialize::weak::gather(gpu).map_err(|e| e.to_string())?;
    let wrong = specialize::weak::declarations_wrong(&evidence.units);
    if !wrong.is_empty() {
        return Err(wrong.join("; "));
    }
    let linked = evidence
        .linked
        .as_ref()
        .map_err(|log| format!("the pair was refused: {log}"))?;
    if linked.definitions != [(2, 1), (4, 1)] {
        return Err(format!(
            "definitions (N, count) in the linked image: {:?}, want [(2, 1), (4, 1)]",
            linked.definitions
        ));
    }
    for unit in specialize::weak::UNITS {
        match linked.outputs.iter().find(|(u, _)| u == unit) {
            Some((_, got)) if got[..] == specialize::weak::LINKED_EXPECTED => {}
            other => return Err(format!("{unit}: {other:?}, want [70.0, 17.0]")),
        }
    }
    match &evidence.control {
        Err(log) if !log.is_empty() => {}
        Err(_) => return Err("the control was refused with an empty log".into()),
        Ok(()) => return Err("the control (dot4_plain in both units) was linked".into()),
    }
    specialize::linkage_reading(linked, &evidence.control)?;
    Ok(())
}

fn main() -> std::process::ExitCode {
    let mut trials = kernel_trials(check);
    trials.push(trial(
        "specialized_and_runtime_agree",
        specialized_and_runtime_agree,
    ));
    trials.push(trial(
        "a_wrong_length_is_refused",
        a_wrong_length_is_refused,
    ));
    trials.push(trial(
        "the_linker_keeps_one_copy_of_each_instantiation",
        the_linker_keeps_one_copy_of_each_instantiation,
    ));
    trials.push(trial("specialize::the_lesson_runs_quick", |gpu| {
        lab_tests::run_quick::<specialize::SpecializeLesson>(gpu).map(drop)
    }));
    run_gpu_trials(trials)
}
