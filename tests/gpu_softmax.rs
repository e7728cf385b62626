//! GPU tests of the softmax lesson at a small matrix (3 rows of 10,007
//! columns: no tile width divides a row, so every last tile is partial):
//! every variant at every protocol geometry on both sides against the f64
//! reference (the megakernel refusing the 131,072-column tile), the row
//! barrier reused across launches and graph replays, the captured
//! graphs' nodes and their metadata (node types, each kernel node's kernel
//! and resources), and a DOT file per graph from a run at the full size.
//! Where no NVIDIA driver is present, every test is reported as ignored.

use host::compare::{Side, TwinRows};
use host::gpu::Gpu;
use host::kernels::KernelId;
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
    for variant in [
        Variant::Retained,
        Variant::RowRetained,
        Variant::RoundtripOn,
    ] {
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
        let facts = softmax::GraphFacts::of(
            &nodes,
            |f| lesson.symbol_of(f),
            graph.capture_us,
            graph.instantiate_us,
            0.0,
        );
        if let Some(problem) = facts.verify(&plan, lesson.shape.rows) {
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

/// Each graph's metadata on both sides: every node a kernel node, each
/// naming a kernel of the variant's sequence (the C twins' handles resolve
/// too), with registers above zero, no local memory, the planned block and
/// dynamic shared memory, and static shared memory only where the kernel
/// declares it (the staged kernels' reduction scratch; the megakernels take
/// theirs from the dynamic array).
fn graphs_carry_their_metadata(gpu: &Gpu) -> Result<(), String> {
    let mut lesson = lesson(gpu, Side::CudaC)?;
    for side in [Side::Rust, Side::CudaC] {
        lesson.use_side(side);
        for variant in Variant::ALL {
            let plan = lesson
                .admit(variant, Geometry { w: 4096, t: 128 })
                .map_err(|e| e.to_string())?
                .map_err(|r| r.to_string())?;
            let graph = lesson.capture(&plan).map_err(|e| e.to_string())?;
            let nodes = graph.nodes().map_err(|e| e.to_string())?;
            let facts = softmax::GraphFacts::of(&nodes, |f| lesson.symbol_of(f), 0.0, 0.0, 0.0);
            let at = format!("{} ({})", variant.label(), side.label());
            if let Some(problem) = facts.verify(&plan, lesson.shape.rows) {
                return Err(format!("{at}: {problem}"));
            }
            if facts.node_types.iter().any(|t| t != "kernel") {
                return Err(format!("{at}: node types {:?}", facts.node_types));
            }
            let handles = nodes.iter().filter_map(|n| n.kernel).map(|n| n.function);
            for (k, handle) in facts.kernels.iter().zip(handles) {
                // The node's function is the one the side in use loaded.
                let id = <softmax::Kernel as KernelId>::ALL
                    .iter()
                    .find(|id| Some(id.symbol()) == k.symbol)
                    .ok_or(format!("{at}: a node launches an unknown function"))?;
                let loaded = lesson
                    .function(*id, side)
                    .ok_or(format!("{at}: {} is not loaded", id.symbol()))?;
                if loaded.cu_function() != handle {
                    return Err(format!(
                        "{at}: {} is not the {} side's function",
                        id.symbol(),
                        side.label()
                    ));
                }
                if k.registers <= 0 || k.local_bytes != 0 {
                    return Err(format!(
                        "{at}: {} has {} registers, {} local bytes",
                        id.symbol(),
                        k.registers,
                        k.local_bytes
                    ));
                }
                let wants_static = !variant.cooperative();
                if (k.static_shared_bytes > 0) != wants_static {
                    return Err(format!(
                        "{at}: {:?} has {} bytes of static shared memory",
                        k.symbol, k.static_shared_bytes
                    ));
                }
            }
            println!("{at}: {:?}", facts.resources());
        }
    }
    lesson.use_side(Side::Rust);
    Ok(())
}

/// The lesson's run at the full size on this GPU (its timed matrix; one
/// timed run per row, so quick) writes one DOT file per admitted variant
/// and geometry, each holding as many kernel nodes as the row's graph, and
/// every row's JSON carries the node types and each kernel's resources.
fn the_full_run_writes_a_dot_file_per_graph(gpu: &Gpu) -> Result<(), String> {
    use host::lesson::Outcome;
    let shape = Shape::for_device(&gpu.info);
    let mut lesson = Softmax::new(gpu, shape).map_err(|e| e.to_string())?;
    let dir = std::env::temp_dir().join(format!("gpu-softmax-dots-{}", std::process::id()));
    let progress = indicatif::ProgressBar::hidden();
    let outcome = softmax::run(
        &mut lesson,
        host::timing::Plan::QUICK,
        Some(&dir),
        &progress,
    )
    .map_err(|e| e.to_string())?;
    let rows = match outcome {
        Outcome::Passed(rows) => rows,
        Outcome::Failed(f) => return Err(format!("{} checks failed, first: {}", f.len(), f[0])),
        Outcome::Faulted { error, .. } => return Err(error.to_string()),
    };
    let mut written = 0;
    let mut most_nodes = 0;
    for row in &rows {
        let softmax::Row::Ran(r) = row else { continue };
        let name = format!(
            "{}-W{}-T{}.dot",
            r.plan.variant.label(),
            r.plan.geometry.w,
            r.plan.geometry.t
        );
        let text = std::fs::read_to_string(dir.join(&name)).map_err(|e| format!("{name}: {e}"))?;
        let kernels = text.matches("{KERNEL").count();
        if kernels != r.graph.kernel_nodes {
            return Err(format!(
                "{name}: {kernels} kernel nodes, the graph had {}",
                r.graph.kernel_nodes
            ));
        }
        if !text.contains(r.plan.variant.main_symbol()) {
            return Err(format!(
                "{name} does not name {}",
                r.plan.variant.main_symbol()
            ));
        }
        written += 1;
        most_nodes = most_nodes.max(kernels);
    }
    let files = std::fs::read_dir(&dir).map_err(|e| e.to_string())?.count();
    let _ = std::fs::remove_dir_all(&dir);
    if files != written {
        return Err(format!("{files} files for {written} graphs"));
    }
    let context = host::report::Context::new(
        "softmax",
        &gpu.info,
        &softmax::Sizes::of(shape),
        softmax::report::block_sizes_json(),
        host::timing::Plan::QUICK,
        host::report::now(),
    );
    let report = softmax::report::build(context, shape, rows, lesson.shared_optin);
    for line in host::lesson::Report::json_lines(&report) {
        if line["status"] != "ran" {
            continue;
        }
        let types = line["node_types"].as_array().ok_or("no node_types")?;
        let launches = line["kernel_launches"]
            .as_array()
            .ok_or("no kernel_launches")?;
        if types.len() != line["nodes"].as_u64().unwrap_or(0) as usize
            || launches.len() != line["kernel_nodes"].as_u64().unwrap_or(0) as usize
            || launches
                .iter()
                .any(|k| k["registers"].as_i64().unwrap_or(0) <= 0)
        {
            return Err(format!("{}: {line}", line["symbol"]));
        }
    }
    println!(
        "{written} DOT files at {} x {}, the largest graph {most_nodes} kernel nodes",
        shape.rows, shape.n
    );
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
            lesson.use_side(side);
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
        trial("graphs_carry_their_metadata", graphs_carry_their_metadata),
        trial(
            "the_full_run_writes_a_dot_file_per_graph",
            the_full_run_writes_a_dot_file_per_graph,
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
