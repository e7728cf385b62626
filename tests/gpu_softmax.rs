//! GPU tests of the softmax lesson at a small matrix (3 rows of 10,007
//! columns: no tile width divides a row, so every last tile is partial):
//! every variant at every protocol geometry on both sides against the f64
//! reference (the megakernel refusing the 131,072-column tile), the row
//! barrier reused across launches and graph replays, and the captured
//! graphs' nodes. Where no NVIDIA driver is present, every test is reported
//! as ignored.

use host::compare::{Side, TwinRows};
use host::gpu::Gpu;
use host::softmax::{self, Geometry, Refusal, Shape, Softmax, Variant, protocol};
use lab_tests::{run_gpu_trials, trial, use_side};

fn lesson(gpu: &Gpu, side: Side) -> Result<Softmax<'_>, String> {
    let mut lesson = Softmax::new(gpu, Shape::TEST).map_err(|e| e.to_string())?;
    use_side::<softmax::SoftmaxLesson>(gpu, &mut lesson, side)?;
    Ok(lesson)
}

/// `variant` at every geometry on `side`: each admitted one matches the
/// reference; the megakernel variants must refuse the widest tile by its
/// shared memory, the staged ones must run it.
fn every_geometry(gpu: &Gpu, variant: Variant, side: Side) -> Result<(), String> {
    let mut lesson = lesson(gpu, side)?;
    let want = lesson.reference();
    let mut worst = 0.0f64;
    for g in protocol() {
        match lesson.admit(variant, g).map_err(|e| e.to_string())? {
            Err(refusal) => {
                let expected = variant.cooperative() && g.w == 131_072;
                if !expected || !matches!(refusal, Refusal::SharedMemory { .. }) {
                    return Err(format!("W={} T={}: unexpected {refusal}", g.w, g.t));
                }
            }
            Ok(plan) => {
                if variant.cooperative() && g.w == 131_072 {
                    return Err("the 512 KiB tile was admitted".into());
                }
                let got = lesson.run_once(&plan).map_err(|e| e.to_string())?;
                let (failure, w) = softmax::check(variant.label(), &got, &want, lesson.shape.n);
                if let Some(f) = failure {
                    return Err(format!("W={} T={}: {f}", g.w, g.t));
                }
                worst = worst.max(w);
            }
        }
    }
    println!(
        "{} ({}): largest relative error {worst:.3e}",
        variant.label(),
        side.label()
    );
    Ok(())
}

/// The barrier's counters are never reset by the host: five launches of the
/// megakernel in a row, then five replays of its graph, each correct.
fn barrier_is_reusable(gpu: &Gpu) -> Result<(), String> {
    let mut lesson = lesson(gpu, Side::Rust)?;
    let want = lesson.reference();
    let geometry = Geometry { w: 4096, t: 128 };
    for variant in [Variant::Retained, Variant::Roundtrip] {
        let plan = lesson
            .admit(variant, geometry)
            .map_err(|e| e.to_string())?
            .map_err(|r| r.to_string())?;
        for round in 0..5 {
            let got = lesson.run_once(&plan).map_err(|e| e.to_string())?;
            if let (Some(f), _) = softmax::check(variant.label(), &got, &want, lesson.shape.n) {
                return Err(format!("direct launch {round}: {f}"));
            }
        }
        let graph = lesson.capture(&plan).map_err(|e| e.to_string())?;
        for round in 0..5 {
            lesson.poison().map_err(|e| e.to_string())?;
            graph.launch().map_err(|e| e.to_string())?;
            let got = lesson.read_y().map_err(|e| e.to_string())?;
            if let (Some(f), _) = softmax::check(variant.label(), &got, &want, lesson.shape.n) {
                return Err(format!("replay {round}: {f}"));
            }
        }
    }
    Ok(())
}

/// Captured graphs hold one kernel node per launch; the megakernel's nodes
/// keep the cooperative attribute through capture, the staged ones do not
/// have it. Groups of one row force several cooperative launches (row_base
/// above 0), and each graph's replay is checked against the reference.
fn graphs_have_the_expected_nodes(gpu: &Gpu) -> Result<(), String> {
    let mut lesson = lesson(gpu, Side::Rust)?;
    let want = lesson.reference();
    for variant in Variant::ALL {
        let mut plan = lesson
            .admit(variant, Geometry { w: 4096, t: 64 })
            .map_err(|e| e.to_string())?
            .map_err(|r| r.to_string())?;
        if variant.cooperative() {
            plan.group_rows = 1;
            plan.launches = lesson.shape.rows;
        }
        let graph = lesson.capture(&plan).map_err(|e| e.to_string())?;
        let nodes = graph.nodes().map_err(|e| e.to_string())?;
        let facts = softmax::GraphFacts {
            nodes: nodes.len(),
            kernel_nodes: nodes.iter().filter(|n| n.is_kernel()).count(),
            cooperative: nodes.iter().filter_map(|n| n.cooperative).collect(),
            capture_us: graph.capture_us,
            instantiate_us: graph.instantiate_us,
            first_replay_us: 0.0,
        };
        if let Some(problem) = facts.verify(&plan) {
            return Err(format!("{}: {problem}", variant.label()));
        }
        let want_nodes = if variant.cooperative() {
            lesson.shape.rows
        } else {
            3
        };
        if facts.kernel_nodes != want_nodes {
            return Err(format!(
                "{}: {} kernel nodes, want {want_nodes}",
                variant.label(),
                facts.kernel_nodes
            ));
        }
        lesson.poison().map_err(|e| e.to_string())?;
        graph.launch().map_err(|e| e.to_string())?;
        let got = lesson.read_y().map_err(|e| e.to_string())?;
        if let (Some(f), _) = softmax::check(variant.label(), &got, &want, lesson.shape.n) {
            return Err(format!("replay of {} launches: {f}", plan.launches));
        }
        println!(
            "{}: {} kernel nodes, cooperative {:?}",
            variant.label(),
            facts.kernel_nodes,
            facts.cooperative
        );
    }
    Ok(())
}

/// Rust and CUDA C give the same bits for every variant.
fn twins_agree_bit_for_bit(gpu: &Gpu) -> Result<(), String> {
    let mut lesson = lesson(gpu, Side::CudaC)?;
    for variant in Variant::ALL {
        let plan = lesson
            .admit(variant, Geometry { w: 4096, t: 256 })
            .map_err(|e| e.to_string())?
            .map_err(|r| r.to_string())?;
        let mut outs = Vec::new();
        for side in [Side::Rust, Side::CudaC] {
            lesson.kernel_set().use_side(side);
            outs.push(lesson.run_once(&plan).map_err(|e| e.to_string())?);
        }
        if let host::compare::Agreement::Differ { count, first } =
            host::compare::Agreement::of(&outs[0], &outs[1])
        {
            return Err(format!(
                "{}: {count} elements differ, first at {first}",
                variant.label()
            ));
        }
    }
    Ok(())
}

/// A cooperative grid the GPU cannot hold at once is refused by the driver
/// (the launch never runs) and reported as a refused cooperative launch,
/// exit status 12, not as a kernel fault. The grid is forged past
/// admission: 131,072 tiles a row, far more blocks than any GPU holds.
fn an_oversized_cooperative_grid_is_refused(gpu: &Gpu) -> Result<(), String> {
    let mut lesson = lesson(gpu, Side::Rust)?;
    let plan = lesson
        .admit(Variant::Retained, Geometry { w: 4096, t: 128 })
        .map_err(|e| e.to_string())?
        .map_err(|r| r.to_string())?;
    let forged = softmax::Launches {
        tiles: 1 << 17,
        ..plan
    };
    let blocks = (plan.group_rows.min(lesson.shape.rows) << 17) as u32;
    match lesson.enqueue(&forged) {
        Err(e @ host::Error::CooperativeRefused { .. }) => {
            let message = e.to_string();
            let want = format!(
                "the driver refused the cooperative launch of `{}` ({blocks} blocks of 128 threads, {} bytes of \
                 shared memory each): CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
                Variant::Retained.main_symbol(),
                plan.shared_bytes
            );
            if !message.starts_with(&want)
                || e.exit_code() != host::error::exit::COOPERATIVE_REFUSED
            {
                return Err(format!("{message} (exit {})", e.exit_code()));
            }
        }
        Err(other) => return Err(format!("not a refusal: {other}")),
        Ok(()) => return Err(format!("{blocks} co-resident blocks were launched")),
    }
    // Nothing ran and nothing sticks: the admitted plan still runs right.
    let got = lesson.run_once(&plan).map_err(|e| e.to_string())?;
    let want = lesson.reference();
    match softmax::check(Variant::Retained.label(), &got, &want, lesson.shape.n) {
        (Some(f), _) => Err(format!("after the refusal: {f}")),
        _ => Ok(()),
    }
}

fn main() -> std::process::ExitCode {
    let mut trials = Vec::new();
    for side in [Side::Rust, Side::CudaC] {
        for variant in Variant::ALL {
            let prefix = if side == Side::Rust { "" } else { "twin_" };
            trials.push(trial(format!("{prefix}{}", variant.label()), move |gpu| {
                every_geometry(gpu, variant, side)
            }));
        }
    }
    trials.extend([
        trial("barrier_is_reusable", barrier_is_reusable),
        trial(
            "graphs_have_the_expected_nodes",
            graphs_have_the_expected_nodes,
        ),
        trial("twins_agree_bit_for_bit", twins_agree_bit_for_bit),
        trial(
            "an_oversized_cooperative_grid_is_refused",
            an_oversized_cooperative_grid_is_refused,
        ),
        trial("softmax::the_lesson_runs_quick", |gpu| {
            lab_tests::run_quick::<softmax::SoftmaxLesson>(gpu).map(drop)
        }),
    ]);
    run_gpu_trials(trials)
}
