//! The one path every lesson runs through: [`drive`] takes the command line
//! and a [`Lesson`], and does for each lesson alike what `lab` promises:
//! refuse the flags the lesson does not take, check files before any GPU
//! work, show `--asm`, size the lesson from the GPU at hand (one sizes value
//! for the run and its record), load a baseline, compare with the CUDA C
//! twins, run, print a table or JSON lines, compare with the baseline, plot
//! and record.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::cli::Args;
use crate::clocks::Sampler;
use crate::compare::{Comparison, TwinRows, compare_twins};
use crate::error::{Error, Result, exit};
use crate::gpu::Gpu;
use crate::lesson::{Capabilities, Lesson, Outcome, RunOptions};
use crate::report::{Context, now};
use crate::sizes::LessonSizes;
use crate::timing::Plan;

/// Interleaved trials per kernel pair in a comparison: even, so each side is
/// timed first in as many trials as the other (the records of commit
/// 23c4bfd and before used 7: Rust first in 4).
pub const COMPARE_TRIALS: u32 = 8;
const _: () = assert!(
    COMPARE_TRIALS.is_multiple_of(2),
    "each side goes first equally often"
);

/// The timing of one side in one trial: shorter than a lesson's, as each
/// kernel is timed 2 x COMPARE_TRIALS times.
pub const COMPARE_PLAN: Plan = Plan {
    warmups: 3,
    batches: 3,
    launches_per_batch: 10,
    flush_l2: false,
};

/// Whether a lesson's capabilities allow one optional flag.
type Allows = fn(&Capabilities) -> bool;

/// The optional flags: each one's name, whether the command line sets it,
/// and the capability that allows it.
/// (`--profile`, `--ncu` and `--ncu-csv` are every lesson's.)
fn optional_flags(args: &Args) -> [(&'static str, bool, Allows); 2] {
    [
        ("--plot", args.plot.is_some(), |c| c.plot),
        ("--graphs-dir", args.graphs_dir.is_some(), |c| c.graphs_dir),
    ]
}

/// The first optional flag set on the command line that `lesson`'s
/// capabilities lack, refused in one line that names the lessons that take
/// it; `None` when every flag set is the lesson's.
pub fn refused_flag(args: &Args, lesson: &str, capabilities: &Capabilities) -> Option<Error> {
    let (flag, _, allowed) = optional_flags(args)
        .into_iter()
        .find(|(_, set, allowed)| *set && !allowed(capabilities))?;
    let takers: Vec<&str> = crate::lessons::ALL
        .iter()
        .filter(|l| allowed(&l.capabilities))
        .map(|l| l.name)
        .collect();
    Some(Error::Usage(format!(
        "{flag} is not available for the {lesson} lesson; it is for: {}",
        takers.join(", ")
    )))
}

/// The timing plan the flags ask for: the lesson's, or `--quick`'s, with
/// `--flush-l2`.
pub fn lesson_plan(args: &Args) -> Plan {
    Plan {
        flush_l2: args.flush_l2,
        ..if args.quick {
            Plan::QUICK
        } else {
            Plan::DEFAULT
        }
    }
}

/// Runs lesson `L` as `args` asks. Returns the exit status of a run that
/// got as far as its checks (3 when one failed).
///
/// # Errors
/// Every failure that stops a run, each of its own [`Error`] kind (so of
/// its own exit status).
pub fn drive<L: Lesson>(args: &Args) -> Result<ExitCode> {
    if let Some(refusal) = refused_flag(args, L::NAME, &L::CAPABILITIES) {
        return Err(refusal);
    }
    let file = format!("{}.cu", L::NAME);
    if let Some(kernel) = &args.asm {
        print!(
            "{}",
            crate::asm::side_by_side(kernel, &L::cuda_c(), &file, &args.arch)?
        );
        return Ok(ExitCode::SUCCESS);
    }
    // Files first: a bad path is an error before minutes of GPU work, and
    // before a GPU is even looked for.
    let Inputs {
        ncu_csv: saved_csv,
        baseline: baseline_file,
    } = check_files(args)?;

    let started = now();
    let gpu = Gpu::open(args.device)?;
    let sizes = L::Sizes::for_gpu(&gpu.info, args.quick)?;
    let plan = lesson_plan(args);
    let recorded = crate::record::results_file(&args.results, &gpu.info.name, L::NAME);
    let context = Context::new(L::NAME, &gpu.info, &sizes, L::block_sizes(), plan, started);
    let baseline = match (baseline_file, &args.baseline) {
        (Some(base), _) => Some(comparable(base, &context)?),
        (None, Some(spec)) => {
            let base = crate::record::baseline(spec, &recorded).map_err(Error::Baseline)?;
            Some(comparable(base, &context)?)
        }
        (None, None) => None,
    };
    if args.record {
        writable(&recorded)?;
    }

    if args.compare {
        let arch = L::twin_arch(gpu.info.compute_capability);
        let c_ptx = crate::nvrtc::compile_for(&L::cuda_c(), &file, &arch)?;
        let plan = Plan {
            flush_l2: args.flush_l2,
            ..COMPARE_PLAN
        };
        let mut twins = L::twins(&gpu, &sizes)?;
        twins.load_twins(&gpu, &c_ptx)?;
        let sampler = Sampler::start(gpu.info.pci_bus_id.as_deref());
        let compared = compare_twins(&mut twins, &c_ptx, COMPARE_TRIALS, plan, &arch)?;
        let clocks = sampler.finish();
        let kernels = match compared {
            Err(failures) => return Ok(print_failures(&failures, "comparison")),
            Ok(kernels) => kernels,
        };
        let nvrtc = crate::nvrtc::library()?;
        let (major, minor) = nvrtc.version();
        let comparison = Comparison {
            context: Context {
                timing: plan,
                clocks,
                ..context
            },
            notes: L::compare_notes(&sizes),
            nvrtc: format!("{major}.{minor}"),
            nvrtc_library: nvrtc.path().display().to_string(),
            trials: COMPARE_TRIALS,
            kernels,
        };
        emit(args.json, &comparison.json_lines(), || comparison.table());
        if let Some(path) = &args.plot
            && let Some(chart) = L::compare_chart(&sizes, &comparison)
        {
            write_chart(&chart, path, args.json)?;
        }
        return Ok(ExitCode::SUCCESS);
    }

    if args.profile {
        println!("{}", L::profile(&gpu, &sizes)?);
        return Ok(ExitCode::SUCCESS);
    }

    // ncu runs this program as a child; its CSV is saved beside the records.
    // A saved CSV is read as made the way --ncu makes it for this lesson.
    let csv = match (saved_csv, args.ncu) {
        (Some(text), _) => Some(text),
        (None, true) => Some(profile_with_ncu(args, &recorded, L::NCU_CACHE)?),
        (None, false) => None,
    };
    let profile = match csv {
        Some(text) => Some(crate::ncu::Profile::parse(&text, L::NCU_CACHE).map_err(Error::Tool)?),
        None => None,
    };

    let progress = progress_bar(args.json);
    let options = RunOptions {
        plan,
        quick: args.quick,
        graphs_dir: args.graphs_dir.as_deref(),
        progress: &progress,
    };
    // The clocks are read while the lesson times its kernels.
    let sampler = Sampler::start(gpu.info.pci_bus_id.as_deref());
    let outcome = L::run(&gpu, &sizes, context, &options)?;
    let clocks = sampler.finish();
    progress.finish_and_clear();
    let mut report = match outcome {
        Outcome::Passed(report) => report,
        Outcome::Failed(failures) => return Ok(print_failures(&failures, "figure")),
        Outcome::Faulted { failures, error } => {
            for f in &failures {
                eprintln!("FAILED {f}");
            }
            return Err(error);
        }
    };
    report.context_mut().clocks = clocks;
    if let Some(profile) = &profile {
        report.merge_counters(profile);
    }
    let mut lines = report.json_lines();
    // Every lesson's counters alike: an `ncu` key on each row that names a
    // profiled kernel, one row per profiled launch, and their section.
    if let Some(profile) = &profile {
        profile.annotate(&mut lines);
        let context = serde_json::to_value(&*report.context_mut())
            .map_err(|e| Error::Bug(format!("the run's context is not JSON: {e}")))?;
        lines.extend(profile.json_lines(L::NAME, &context));
    }
    emit(args.json, &lines, || {
        let mut table = report.table();
        if let Some(profile) = &profile {
            table.push_str(&profile.section());
        }
        table
    });
    if let Some(base) = &baseline {
        print_baseline(args.json, base, &lines)?;
    }
    if let Some(path) = &args.plot
        && let Some(chart) = report.chart()
    {
        write_chart(&chart, path, args.json)?;
    }
    if let Some(dir) = &args.graphs_dir
        && !args.json
    {
        println!("Graphs written as DOT files to {}", dir.display());
    }
    if args.record {
        crate::record::append(&recorded, &lines).map_err(|e| Error::file(&recorded, e))?;
        if !args.json {
            println!("Recorded in {}", recorded.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What [`check_files`] read from the files the command line names.
pub struct Inputs {
    /// The text of `--ncu-csv FILE`.
    pub ncu_csv: Option<String>,
    /// The run in `--baseline FILE` (`last` needs the GPU's name: read
    /// later).
    pub baseline: Option<Vec<crate::record::Run>>,
}

/// Checks every file and folder the command line names, before any GPU
/// work: `--graphs-dir DIR` is created and written in; `--results DIR`
/// likewise where `--record` or `--ncu` will write there; `--plot FILE`'s
/// folder is created and the file opened for writing; `--ncu-csv FILE` and
/// `--baseline FILE` are read.
///
/// # Errors
/// [`Error::File`] naming the path, the flag and the operating system's
/// reason (exit status 9); [`Error::Baseline`] for a baseline file that
/// holds no run.
pub fn check_files(args: &Args) -> Result<Inputs> {
    if let Some(dir) = &args.graphs_dir {
        writable_dir(
            dir,
            "--graphs-dir writes the DOT files into",
            "choose another --graphs-dir",
        )?;
    }
    if args.record || args.ncu {
        let flag = if args.record {
            "--record writes the run's rows into"
        } else {
            "--ncu saves its CSV into"
        };
        writable_dir(&args.results, flag, "choose another with --results DIR")?;
    }
    if let Some(path) = &args.plot {
        writable(path).map_err(|e| match e {
            Error::File { path, why } => Error::File {
                path,
                why: format!("--plot cannot write the chart here: {why}; choose another FILE.svg"),
            },
            other => other,
        })?;
    }
    let ncu_csv = match &args.ncu_csv {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .map_err(|e| Error::file(path, format!("--ncu-csv cannot read it: {e}")))?,
        ),
        None => None,
    };
    // A baseline named by its path is read now; `last` needs the GPU's name.
    let baseline = match args.baseline.as_deref() {
        Some(spec) if spec != "last" => {
            Some(crate::record::baseline(spec, Path::new(spec)).map_err(Error::Baseline)?)
        }
        _ => None,
    };
    Ok(Inputs { ncu_csv, baseline })
}

/// Creates `dir` (and its parents), as a [`Error::File`] on failure.
fn create_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::file(dir, format!("cannot create the folder: {e}")))
}

/// Fails unless `dir` exists or can be created, and a file can be made in
/// it (a probe file, removed again). `purpose` ("--record writes ... into")
/// and `fix` ("choose another ...") complete the message.
fn writable_dir(dir: &Path, purpose: &str, fix: &str) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::file(
            dir,
            format!("cannot create the folder {purpose}: {e}; {fix}"),
        )
    })?;
    let probe = dir.join(format!(".lab-write-probe-{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(|e| {
            Error::file(
                dir,
                format!("cannot write in the folder {purpose}: {e}; {fix}"),
            )
        })?;
    std::fs::remove_file(&probe).map_err(|e| Error::file(&probe, e))
}

/// Fails unless `file` can be appended to: its folder is created, and the
/// file opened for appending (a file made only to try is removed again).
fn writable(file: &Path) -> Result<()> {
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_dir(dir)?;
    }
    let existed = file.exists();
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .map_err(|e| Error::file(file, e))?;
    if !existed {
        std::fs::remove_file(file).map_err(|e| Error::file(file, e))?;
    }
    Ok(())
}

/// `base` with its caveats, once checked to have been measured the way
/// this run (`context`) will be ([`crate::record::comparable`]).
fn comparable(
    base: Vec<crate::record::Run>,
    context: &Context,
) -> Result<(Vec<crate::record::Run>, Vec<String>)> {
    let now = serde_json::to_value(context)
        .map_err(|e| Error::Bug(format!("the run's context is not JSON: {e}")))?;
    let caveats = crate::record::comparable(&base, &now).map_err(Error::Baseline)?;
    Ok((base, caveats))
}

/// Runs `lab <lesson> --profile` under Nsight Compute (the caches as
/// `cache` says) and saves its CSV beside the recorded runs, after one line
/// naming the ncu options it was made with.
fn profile_with_ncu(
    args: &Args,
    recorded: &Path,
    cache: crate::ncu::CacheControl,
) -> Result<String> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::Tool(format!("cannot find this program to profile it: {e}")))?;
    // `--ncu` and `--quick` are refused together (cli.rs), so the child
    // profiles the sizes the report runs at.
    let child = vec![
        args.lesson.clone(),
        "--profile".into(),
        "--device".into(),
        args.device.to_string(),
    ];
    let csv = crate::ncu::profile(&exe, &child, cache).map_err(Error::Tool)?;
    let saved: PathBuf = recorded.with_file_name(format!("{}-ncu.csv", args.lesson));
    if let Some(dir) = saved.parent() {
        create_dir(dir)?;
    }
    // The first line says how the CSV was made (the parser skips it).
    let made = format!(
        "==LAB== ncu {} {} {}\n",
        crate::ncu::ncu_args(cache).join(" "),
        exe.display(),
        child.join(" ")
    );
    std::fs::write(&saved, format!("{made}{csv}")).map_err(|e| Error::file(&saved, e))?;
    eprintln!("ncu's CSV saved to {}", saved.display());
    Ok(csv)
}

fn write_chart(chart: &crate::plot::Chart, path: &Path, json: bool) -> Result<()> {
    crate::plot::roofline_svg(chart, path).map_err(|e| Error::file(path, e))?;
    if !json {
        println!("Roofline chart written to {}", path.display());
    }
    Ok(())
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

/// Prints how each row of this run (`lines`) moved against the baseline's
/// runs `base`: a table with the rule and `caveats` under it, or one JSON
/// object per row (each with the caveats; `change` null and `error` set
/// where a row could not be compared).
///
/// # Errors
/// [`Error::Bug`] where this run's own rows do not read as a run (a
/// repeated key, a time that is not positive).
fn print_baseline(
    json: bool,
    (base, caveats): &(Vec<crate::record::Run>, Vec<String>),
    lines: &[serde_json::Value],
) -> Result<()> {
    let now = crate::record::runs_of(lines)
        .map_err(|e| Error::Bug(format!("this run's rows do not read as a run: {e}")))?
        .into_iter()
        .next();
    let Some(now) = now else {
        return Ok(());
    };
    if !json {
        print!("\n{}", crate::record::table(base, &now, caveats));
        return Ok(());
    }
    let dates: Vec<&str> = base.iter().map(|r| r.date.as_str()).collect();
    let (compared, missing) = crate::record::changes(base, &now);
    for (symbol, change) in compared {
        let (change, error) = match change {
            Ok(c) => (Some(c), None),
            Err(e) => (None, Some(e)),
        };
        println!(
            "{}",
            serde_json::json!({"variant": "baseline-change", "symbol": symbol, "baseline_date": dates.last(),
                "baseline_dates": dates, "change": change, "error": error, "caveats": caveats,
                "not_in_baseline": missing, "context": now.context})
        );
    }
    Ok(())
}

/// Prints a report as JSON lines or as its table.
fn emit(json: bool, lines: &[serde_json::Value], table: impl FnOnce() -> String) {
    if json {
        for line in lines {
            println!("{line}");
        }
    } else {
        print!("{}", table());
    }
}

/// Every failed check on stderr, then the exit status of a failed check.
fn print_failures(failures: &[crate::check::Failure], what: &str) -> ExitCode {
    for f in failures {
        eprintln!("FAILED {f}");
    }
    eprintln!(
        "{} check(s) failed; no {what} is printed from a run whose kernels are wrong",
        failures.len()
    );
    ExitCode::from(exit::CHECK_FAILED)
}
