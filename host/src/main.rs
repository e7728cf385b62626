//! `lab`: runs one lesson on the GPU and prints its report.
//!
//! `cargo xtask run roofline` builds and runs this binary; on a GPU machine
//! without Rust, run the bundled copy directly: `./lab roofline`.

use std::process::ExitCode;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{CommandFactory, Parser, ValueEnum};
use host::error::exit;
use host::gpu::Gpu;
use host::roofline::{self, Outcome, Roofline, Sizes};
use host::timing::Plan;

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Lesson {
    /// Two measured ceilings and ten kernels placed on a roofline.
    Roofline,
    /// A four-stage elementwise chain, staged against fused; launch cost; a
    /// size sweep; widening.
    Fusion,
    /// Chapter 19.1: 16-byte vector adds with a scalar tail; the width trap
    /// (float4, double2, eight halves) in the types, the PTX and the SASS.
    Vectorize,
    /// Chapter 19.2: loop unrolling, counted on the host, then one against
    /// four elements per thread on the GPU (consecutive and coalesced).
    Unroll,
    /// Chapter 19.2: relu(a*b+c) as three kernels against one fused kernel:
    /// memory operations counted (8 against 4) and timed.
    Fuse,
    /// Chapter 19.3: a dot product specialized by const generics (N = 2, 4,
    /// 8, 16): one body per N in the binary and the PTX, timed against N at
    /// run time.
    Specialize,
    /// Chapter 19.4: one kernel timed the wrong ways (no synchronisation,
    /// the first call) and the right ways, and how far each is off.
    Harness,
    /// Chapter 19.4: 3x3 convolutions, valid and zero-padded, in GFLOP/s on
    /// the GPU (64 to 8192) and the seed's host mirrors on the CPU.
    Conv2d,
    /// Chapter 19.4: host-device copies (pageable, pinned), device-to-device
    /// by the copy engine and by a kernel, in GB/s; the device query.
    Bandwidth,
    /// RMS-scaled softmax: staged kernels against a cooperative megakernel
    /// that keeps its tile in shared memory, replayed from CUDA graphs.
    Softmax,
}

impl Lesson {
    /// The chapter-19 lessons' descriptors; `None` for the lessons with a
    /// runner of their own.
    fn small(self) -> Option<&'static host::lesson::Lesson> {
        match self {
            Lesson::Roofline | Lesson::Fusion | Lesson::Softmax => None,
            Lesson::Vectorize => Some(&host::vectorize::LESSON),
            Lesson::Unroll => Some(&host::unroll::LESSON),
            Lesson::Fuse => Some(&host::fuse::LESSON),
            Lesson::Specialize => Some(&host::specialize::LESSON),
            Lesson::Harness => Some(&host::harness::LESSON),
            Lesson::Conv2d => Some(&host::conv2d::LESSON),
            Lesson::Bandwidth => Some(&host::bandwidth::LESSON),
        }
    }
}

/// Runs a GPU lesson: checks every kernel against a CPU reference, times it
/// with CUDA events and reports what the lesson teaches. Exit status: 0 all
/// checks passed; 2 unknown lesson or flag; 3 a check failed; 4 no driver;
/// 5 no such device; 6 PTX the GPU or driver cannot run; 7 not enough device
/// memory; 8 a kernel faulted; 9 a file could not be read or written (or a
/// baseline does not match); 10 a needed tool (NVRTC, ncu) is missing or
/// failed; 1 any other driver error.
#[derive(Debug, Parser)]
#[command(name = "lab", version)]
struct Args {
    /// The lesson to run.
    lesson: Lesson,
    /// One JSON object per row (with the run's context) instead of the table.
    #[arg(long, conflicts_with = "profile")]
    json: bool,
    /// One launch per kernel in table order and nothing else: for a profiler.
    #[arg(long, conflicts_with_all = ["compare", "asm"])]
    profile: bool,
    /// Run every kernel beside its CUDA C twin (compiled by NVRTC): both
    /// checked, timed interleaved, with registers and PTX instruction mix.
    #[arg(long, conflicts_with = "asm")]
    compare: bool,
    /// Show one kernel's PTX, Rust beside CUDA C, and its SASS where ptxas
    /// and cuobjdump are on the PATH. Needs NVRTC, not a GPU.
    #[arg(long, value_name = "KERNEL")]
    asm: Option<String>,
    /// The architecture `--asm` compiles the CUDA C twin and the SASS for.
    #[arg(long, default_value = "sm_90", requires = "asm")]
    arch: String,
    /// Small sizes and one timed launch per kernel, every check still made:
    /// for compute-sanitizer (`cargo xtask sanitize`). Its figures are not
    /// measurements worth keeping.
    #[arg(long, conflicts_with_all = ["record", "baseline", "ncu", "ncu_csv"])]
    quick: bool,
    /// The CUDA device index.
    #[arg(long, default_value_t = 0)]
    device: usize,
    /// Flush L2 before every timed launch and time each launch alone:
    /// cold-cache times (the default times warm launches back to back).
    #[arg(long)]
    flush_l2: bool,
    /// Append this run's rows, with their context, to
    /// <results>/<gpu>/<lesson>.jsonl.
    #[arg(long, conflicts_with_all = ["profile", "compare", "asm"])]
    record: bool,
    /// Compare this run with a recorded one: `last` (the newest in the
    /// results file) or a path to a file of JSON rows.
    #[arg(long, value_name = "FILE|last", conflicts_with_all = ["profile", "compare", "asm"])]
    baseline: Option<String>,
    /// The folder of recorded runs.
    #[arg(long, value_name = "DIR", default_value = "results")]
    results: std::path::PathBuf,
    /// Draw the roofline (log-log, both ceilings, the ridge, each kernel)
    /// into this SVG file; with --compare, Rust and CUDA C points together.
    #[arg(long, value_name = "FILE.svg", conflicts_with_all = ["profile", "asm"])]
    plot: Option<std::path::PathBuf>,
    /// Profile the lesson with Nsight Compute first (ncu over `--profile`,
    /// clocks left alone), save its CSV beside the recorded runs and merge
    /// the counters into this run's report.
    #[arg(long, conflicts_with_all = ["profile", "compare", "asm", "ncu_csv"])]
    ncu: bool,
    /// Merge Nsight Compute's counters from this CSV (ncu --csv over
    /// `--profile`): measured DRAM, L2 and L1 bytes and occupancy per kernel.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["profile", "compare", "asm"])]
    ncu_csv: Option<std::path::PathBuf>,
    /// Write each captured CUDA graph as a DOT file into this folder
    /// (softmax lesson).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["profile", "compare", "asm"])]
    graphs_dir: Option<std::path::PathBuf>,
}

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) => return usage_error(e),
    };
    match run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            let code = e
                .downcast_ref::<host::Error>()
                .map_or(exit::OTHER, host::Error::exit_code);
            ExitCode::from(code)
        }
    }
}

/// One line for an argument error, listing what is valid; help and version
/// print as clap renders them.
fn usage_error(e: clap::Error) -> ExitCode {
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    let invalid = match e
        .get(ContextKind::InvalidArg)
        .or(e.get(ContextKind::InvalidValue))
    {
        Some(ContextValue::String(s)) => s.clone(),
        _ => String::new(),
    };
    let lessons: Vec<String> = Lesson::value_variants()
        .iter()
        .filter_map(|l| l.to_possible_value().map(|v| v.get_name().to_string()))
        .collect();
    let flags: Vec<String> = Args::command()
        .get_arguments()
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect();
    let message = match e.kind() {
        ErrorKind::InvalidValue
            if e.get(ContextKind::InvalidArg)
                .is_some_and(|a| a.to_string().contains("LESSON")) =>
        {
            let value = match e.get(ContextKind::InvalidValue) {
                Some(ContextValue::String(v)) => v.clone(),
                _ => String::new(),
            };
            format!(
                "unknown lesson `{value}`; the lessons are: {}",
                lessons.join(", ")
            )
        }
        ErrorKind::UnknownArgument => {
            format!(
                "unknown flag `{invalid}`; the flags are: {} (and --help)",
                flags.join(", ")
            )
        }
        ErrorKind::MissingRequiredArgument => {
            format!(
                "which lesson? `lab <LESSON>`; the lessons are: {}",
                lessons.join(", ")
            )
        }
        _ => {
            let text = e.render().to_string();
            let first = text
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ")
                .to_string();
            format!("{first} (see `lab --help`)")
        }
    };
    eprintln!("error: {message}");
    ExitCode::from(exit::USAGE)
}

fn run(args: &Args) -> anyhow::Result<ExitCode> {
    if args.graphs_dir.is_some() && !matches!(args.lesson, Lesson::Softmax) {
        eprintln!(
            "error: --graphs-dir is available for the softmax lesson only (the one that builds CUDA graphs)"
        );
        return Ok(ExitCode::from(exit::USAGE));
    }
    match args.lesson {
        Lesson::Roofline => run_roofline(args),
        Lesson::Fusion => run_fusion(args),
        Lesson::Softmax => run_softmax(args),
        other => run_small(args, other.small().expect("a chapter-19 lesson")),
    }
}

fn run_softmax(args: &Args) -> anyhow::Result<ExitCode> {
    use host::softmax::{self, Shape, Softmax};
    if let Some(code) = refuse(
        &[
            (args.profile, "--profile"),
            (args.plot.is_some(), "--plot"),
            (args.ncu || args.ncu_csv.is_some(), "--ncu"),
            (args.baseline.is_some(), "--baseline"),
        ],
        "is not available for the softmax lesson",
    ) {
        return Ok(code);
    }
    if let Some(code) = show_asm(args, softmax::cuda_c_program, "softmax.cu")? {
        return Ok(code);
    }
    let started = host::report::now();
    let gpu = Gpu::open(args.device)?;
    let recorded = host::record::results_file(&args.results, &gpu.info.name, "softmax");
    let plan = lesson_plan(args);
    let shape = if args.quick {
        Shape::QUICK
    } else {
        Shape::LESSON
    };
    let mut lesson = Softmax::new(&gpu, shape)?;
    if args.compare {
        let c_ptx = host::nvrtc::compile(
            &softmax::cuda_c_program(),
            "softmax.cu",
            gpu.info.compute_capability,
        )?;
        lesson.load_twins(&c_ptx)?;
        let plan = Plan {
            flush_l2: args.flush_l2,
            ..COMPARE_PLAN
        };
        return match softmax::compare(&mut lesson, &c_ptx, COMPARE_TRIALS, plan)? {
            Err(failures) => Ok(print_failures(&failures, "comparison")),
            Ok(kernels) => {
                let context = host::report::Context::new(
                    "softmax",
                    &gpu.info,
                    softmax::report::sizes_json(shape, &gpu.info),
                    softmax::report::block_sizes_json(),
                    plan,
                    started,
                );
                let comparison = comparison(context, kernels)?;
                emit(
                    args.json,
                    || comparison.json_lines(),
                    || {
                        softmax::report::compare_table(
                            &comparison.context,
                            &comparison.nvrtc,
                            comparison.trials,
                            &comparison.kernels,
                        )
                    },
                );
                Ok(ExitCode::SUCCESS)
            }
        };
    }
    let clocks_start = host::report::read_clocks(args.device);
    let progress = progress_bar(args.json);
    let outcome = softmax::run(&mut lesson, plan, args.graphs_dir.as_deref(), &progress)?;
    progress.finish_and_clear();
    match outcome {
        softmax::Outcome::Failed(failures) => Ok(print_failures(&failures, "figure")),
        softmax::Outcome::Passed(rows) => {
            let mut report =
                softmax::report::build(&gpu.info, shape, plan, rows, lesson.shared_optin, started);
            report.context.clocks_mhz = host::report::Clocks {
                start: clocks_start,
                end: host::report::read_clocks(args.device),
            };
            let lines = report.json_lines();
            emit(args.json, || lines.clone(), || report.table());
            if let (Some(dir), false) = (&args.graphs_dir, args.json) {
                println!("Graphs written as DOT files to {}", dir.display());
            }
            if args.record {
                record(args.json, &recorded, &lines)?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Runs one chapter-19 lesson: `--asm`, `--compare`, or its run with
/// `--json`, `--record` and `--baseline`.
fn run_small(args: &Args, lesson: &host::lesson::Lesson) -> anyhow::Result<ExitCode> {
    if let Some(code) = refuse(
        &[
            (args.profile, "--profile"),
            (args.plot.is_some(), "--plot"),
            (args.ncu || args.ncu_csv.is_some(), "--ncu"),
        ],
        "is available for the roofline lesson only, so far",
    ) {
        return Ok(code);
    }
    let file = format!("{}.cu", lesson.name);
    if let Some(code) = show_asm(args, lesson.cuda_c, &file)? {
        return Ok(code);
    }
    let started = host::report::now();
    let gpu = Gpu::open(args.device)?;
    let recorded = host::record::results_file(&args.results, &gpu.info.name, lesson.name);
    let plan = lesson_plan(args);
    let context = |plan: Plan, quick: bool| {
        host::report::Context::new(
            lesson.name,
            &gpu.info,
            (lesson.sizes)(quick),
            (lesson.block_sizes)(),
            plan,
            started.clone(),
        )
    };
    let baseline = load_baseline(args, &recorded, context(plan, args.quick))?;
    if args.compare {
        let c_ptx = host::nvrtc::compile(&(lesson.cuda_c)(), &file, gpu.info.compute_capability)?;
        let plan = Plan {
            flush_l2: args.flush_l2,
            ..COMPARE_PLAN
        };
        return match (lesson.compare)(&gpu, &c_ptx, COMPARE_TRIALS, plan)? {
            Err(failures) => Ok(print_failures(&failures, "comparison")),
            Ok(kernels) => {
                let comparison = comparison(context(plan, false), kernels)?;
                emit(args.json, || comparison.json_lines(), || comparison.table());
                Ok(ExitCode::SUCCESS)
            }
        };
    }
    let mut report_context = context(plan, args.quick);
    let clocks_start = host::report::read_clocks(args.device);
    match (lesson.run)(&gpu, plan, args.quick)? {
        host::lesson::Outcome::Failed(failures) => Ok(print_failures(&failures, "figure")),
        host::lesson::Outcome::Passed(findings) => {
            report_context.clocks_mhz = host::report::Clocks {
                start: clocks_start,
                end: host::report::read_clocks(args.device),
            };
            let report = host::lesson::Report {
                context: report_context,
                findings,
            };
            if let Some(key) = report.duplicate_key() {
                anyhow::bail!(
                    "the {} lesson reported two rows named `{key}` (a bug: row keys must be unique)",
                    lesson.name
                );
            }
            let lines = report.json_lines();
            emit(args.json, || lines.clone(), || report.table());
            if let Some(base) = &baseline {
                print_baseline(args.json, base, &lines);
            }
            if args.record {
                record(args.json, &recorded, &lines)?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn run_fusion(args: &Args) -> anyhow::Result<ExitCode> {
    use host::fusion::{self, Fusion};
    if let Some(code) = refuse(
        &[
            (args.profile, "--profile"),
            (args.plot.is_some(), "--plot"),
            (args.ncu || args.ncu_csv.is_some(), "--ncu"),
        ],
        "is available for the roofline lesson only, so far",
    ) {
        return Ok(code);
    }
    if let Some(code) = show_asm(args, fusion::cuda_c_program, "fusion.cu")? {
        return Ok(code);
    }
    let started = host::report::now();
    let gpu = Gpu::open(args.device)?;
    let recorded = host::record::results_file(&args.results, &gpu.info.name, "fusion");
    let plan = lesson_plan(args);
    let scale = if args.quick {
        fusion::Scale::QUICK
    } else {
        fusion::Scale::LESSON
    };
    let setup = host::report::Context::new(
        "fusion",
        &gpu.info,
        fusion::report::sizes_json(scale),
        serde_json::json!({"all": kernels_gpu::fusion::THREADS_PER_BLOCK}),
        plan,
        started.clone(),
    );
    let baseline = load_baseline(args, &recorded, setup)?;
    let mut lesson = Fusion::new(&gpu)?;
    if args.compare {
        let c_ptx = host::nvrtc::compile(
            &fusion::cuda_c_program(),
            "fusion.cu",
            gpu.info.compute_capability,
        )?;
        lesson.load_twins(&c_ptx)?;
        let plan = Plan {
            flush_l2: args.flush_l2,
            ..COMPARE_PLAN
        };
        return match fusion::compare(&mut lesson, &c_ptx, COMPARE_TRIALS, plan)? {
            Err(failures) => Ok(print_failures(&failures, "comparison")),
            Ok(kernels) => {
                let context = host::report::Context::new(
                    "fusion",
                    &gpu.info,
                    fusion::report::sizes_json(fusion::Scale::LESSON),
                    serde_json::json!({"all": kernels_gpu::fusion::THREADS_PER_BLOCK}),
                    plan,
                    started,
                );
                let comparison = comparison(context, kernels)?;
                emit(args.json, || comparison.json_lines(), || comparison.table());
                Ok(ExitCode::SUCCESS)
            }
        };
    }
    let progress = progress_bar(args.json);
    let outcome = fusion::run(&mut lesson, plan, scale, &progress)?;
    progress.finish_and_clear();
    match outcome {
        fusion::Outcome::Failed(failures) => Ok(print_failures(&failures, "figure")),
        fusion::Outcome::Passed(measured) => {
            let report = fusion::report::Report::new(&gpu.info, plan, *measured, started);
            let lines = report.json_lines();
            emit(args.json, || lines.clone(), || report.table());
            if let Some(base) = &baseline {
                print_baseline(args.json, base, &lines);
            }
            if args.record {
                record(args.json, &recorded, &lines)?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The timing plan the flags ask for: the lesson's, or `--quick`'s, with
/// `--flush-l2`.
fn lesson_plan(args: &Args) -> Plan {
    Plan {
        flush_l2: args.flush_l2,
        ..if args.quick {
            Plan::QUICK
        } else {
            Plan::DEFAULT
        }
    }
}

/// The first of `flags` that is set, refused with one line (`error: FLAG
/// WHY`) and the usage exit status; `None` when none is set.
fn refuse(flags: &[(bool, &str)], why: &str) -> Option<ExitCode> {
    let (_, flag) = flags.iter().find(|(on, _)| *on)?;
    eprintln!("error: {flag} {why}");
    Some(ExitCode::from(exit::USAGE))
}

/// `--asm KERNEL`: the kernel's PTX (and SASS where the tools are found)
/// beside its CUDA C twin's from `source()` (named `file` in NVRTC's
/// messages); `None` without the flag.
fn show_asm(
    args: &Args,
    source: impl FnOnce() -> String,
    file: &str,
) -> anyhow::Result<Option<ExitCode>> {
    let Some(kernel) = &args.asm else {
        return Ok(None);
    };
    print!(
        "{}",
        host::asm::side_by_side(kernel, &source(), file, &args.arch)?
    );
    Ok(Some(ExitCode::SUCCESS))
}

/// Interleaved trials per kernel pair in a comparison.
const COMPARE_TRIALS: u32 = 7;
/// The timing of one side in one trial: shorter than a lesson's, as each
/// kernel is timed 2 x COMPARE_TRIALS times.
const COMPARE_PLAN: Plan = Plan {
    warmups: 3,
    batches: 3,
    launches_per_batch: 10,
    flush_l2: false,
};

/// The baseline `--baseline` names, checked to have been measured the way
/// this run (`setup`) will be; `None` without the flag.
fn load_baseline(
    args: &Args,
    recorded: &std::path::Path,
    setup: host::report::Context,
) -> anyhow::Result<Option<host::record::Run>> {
    let Some(spec) = &args.baseline else {
        return Ok(None);
    };
    let base = host::record::baseline(spec, recorded).map_err(anyhow::Error::msg)?;
    host::record::comparable(
        &base,
        &[serde_json::json!({"samples_ms": [], "context": setup})],
    )
    .map_err(anyhow::Error::msg)?;
    Ok(Some(base))
}

/// A progress bar on stderr (drawn only on a terminal), hidden in JSON mode.
fn progress_bar(json: bool) -> indicatif::ProgressBar {
    if json {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(0);
    if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}") {
        bar.set_style(style);
    }
    bar
}

/// Prints how each row of this run (`lines`) moved against `base`: a table,
/// or one JSON object per row.
fn print_baseline(json: bool, base: &host::record::Run, lines: &[serde_json::Value]) {
    let (now, order) = host::record::samples_of(lines);
    if json {
        for symbol in &order {
            if let (Some(b), Some(n)) = (base.samples.get(symbol), now.get(symbol)) {
                let change = host::record::compare(b, n);
                let context = lines
                    .first()
                    .map(|l| l["context"].clone())
                    .unwrap_or_default();
                println!(
                    "{}",
                    serde_json::json!({"variant": "baseline-change", "symbol": symbol, "baseline_date": base.date, "change": change, "context": context})
                );
            }
        }
    } else {
        print!("\n{}", host::record::table(base, &now, &order));
    }
}

/// Appends this run's rows to the results file.
fn record(json: bool, path: &std::path::Path, lines: &[serde_json::Value]) -> anyhow::Result<()> {
    host::record::append(path, lines).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    if !json {
        println!("Recorded in {}", path.display());
    }
    Ok(())
}

/// A comparison report: its context, NVRTC's version, the pairs.
fn comparison(
    context: host::report::Context,
    kernels: Vec<host::compare::ComparedKernel>,
) -> anyhow::Result<host::compare::Comparison> {
    let (major, minor) = host::nvrtc::version()?;
    Ok(host::compare::Comparison {
        context,
        nvrtc: format!("{major}.{minor}"),
        trials: COMPARE_TRIALS,
        kernels,
    })
}

/// Prints a report as JSON lines or as its table.
fn emit(
    json: bool,
    lines: impl FnOnce() -> Vec<serde_json::Value>,
    table: impl FnOnce() -> String,
) {
    if json {
        for line in lines() {
            println!("{line}");
        }
    } else {
        print!("{}", table());
    }
}

fn print_failures(failures: &[host::check::Failure], what: &str) -> ExitCode {
    for f in failures {
        eprintln!("FAILED {f}");
    }
    eprintln!(
        "{} check(s) failed; no {what} is printed from a run whose kernels are wrong",
        failures.len()
    );
    ExitCode::from(exit::CHECK_FAILED)
}

fn run_roofline(args: &Args) -> anyhow::Result<ExitCode> {
    if let Some(code) = show_asm(args, roofline::cuda_c_program, "roofline.cu")? {
        return Ok(code);
    }
    let started = host::report::now();
    let gpu = Gpu::open(args.device)?;
    let sizes = if args.quick {
        Sizes::quick(&gpu.info)
    } else {
        Sizes::for_device(&gpu.info)
    };
    let plan = lesson_plan(args);
    // Files first: a bad path or an incomparable baseline is an error before
    // minutes of GPU work, not after.
    let recorded = host::record::results_file(&args.results, &gpu.info.name, "roofline");
    let saved_csv = match &args.ncu_csv {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
        ),
        None => None,
    };
    let setup = host::report::Context::new(
        "roofline",
        &gpu.info,
        roofline::report::sizes_json(&sizes),
        roofline::report::block_sizes_json(),
        plan,
        started.clone(),
    );
    let baseline = load_baseline(args, &recorded, setup)?;
    // ncu runs this program as a child, before this process allocates.
    let profiled_csv = if args.ncu {
        let exe = std::env::current_exe()?;
        let child_args = vec![
            "roofline".into(),
            "--profile".into(),
            "--device".into(),
            args.device.to_string(),
        ];
        Some(host::ncu::profile(&exe, &child_args).map_err(host::Error::Tool)?)
    } else {
        None
    };
    let mut lesson = Roofline::new(&gpu, sizes)?;
    if args.compare {
        let source = roofline::cuda_c_program();
        let c_ptx = host::nvrtc::compile(&source, "roofline.cu", gpu.info.compute_capability)?;
        lesson.load_twins(&c_ptx)?;
        let plan = Plan {
            flush_l2: args.flush_l2,
            ..COMPARE_PLAN
        };
        return match roofline::compare(&mut lesson, &c_ptx, COMPARE_TRIALS, plan)? {
            roofline::CompareOutcome::Failed(failures) => {
                Ok(print_failures(&failures, "comparison"))
            }
            roofline::CompareOutcome::Passed(kernels) => {
                let context = host::report::Context::new(
                    "roofline",
                    &gpu.info,
                    roofline::report::sizes_json(&sizes),
                    roofline::report::block_sizes_json(),
                    plan,
                    started,
                );
                let comparison = comparison(context, kernels)?;
                emit(args.json, || comparison.json_lines(), || comparison.table());
                if let Some(path) = &args.plot {
                    let title = format!(
                        "Roofline, Rust and CUDA C, {} ({})",
                        gpu.info.name, comparison.context.date
                    );
                    let chart = roofline::report::compare_chart(&comparison.kernels, &sizes, title);
                    host::plot::roofline_svg(&chart, path).map_err(anyhow::Error::msg)?;
                }
                Ok(ExitCode::SUCCESS)
            }
        };
    }
    if args.profile {
        lesson.profile()?;
        println!(
            "profile mode: {} launches, no checks, no timings",
            roofline::Kernel::ALL.len()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let csv_text = match (saved_csv, profiled_csv) {
        (Some(text), _) => Some(text),
        (None, Some(csv)) => {
            let saved = recorded.with_file_name("roofline-ncu.csv");
            if let Some(dir) = saved.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&saved, &csv)?;
            eprintln!("ncu's CSV saved to {}", saved.display());
            Some(csv)
        }
        (None, None) => None,
    };
    let counters = match csv_text {
        Some(text) => Some(host::ncu::parse_csv(&text).map_err(host::Error::Tool)?),
        None => None,
    };
    let clocks_start = host::report::read_clocks(args.device);
    let progress = progress_bar(args.json);
    let outcome = roofline::run(&mut lesson, plan, &progress)?;
    progress.finish_and_clear();
    match outcome {
        Outcome::Failed(failures) => Ok(print_failures(&failures, "roofline")),
        Outcome::Faulted { failures, error } => {
            for f in &failures {
                eprintln!("FAILED {f}");
            }
            Err(error.into())
        }
        Outcome::Passed {
            measured,
            driver_copy,
        } => {
            let mut report =
                roofline::report::build(&gpu.info, sizes, plan, &measured, driver_copy, started);
            report.context.clocks_mhz = host::report::Clocks {
                start: clocks_start,
                end: host::report::read_clocks(args.device),
            };
            if let Some(counters) = counters {
                report.merge_counters(counters);
            }
            emit(args.json, || report.json_lines(), || report.table());
            let lines = report.json_lines();
            if let Some(base) = &baseline {
                print_baseline(args.json, base, &lines);
            }
            if let Some(path) = &args.plot {
                host::plot::roofline_svg(&report.chart(), path).map_err(anyhow::Error::msg)?;
                if !args.json {
                    println!("Roofline chart written to {}", path.display());
                }
            }
            if args.record {
                record(args.json, &recorded, &lines)?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
