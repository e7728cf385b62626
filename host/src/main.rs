//! `lab`: runs one lesson on the GPU and prints its report.
//!
//! `cargo xtask run roofline` builds and runs this binary; on a GPU machine
//! without Rust, run the bundled copy directly: `./lab roofline`.

use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use host::gpu::Gpu;
use host::roofline::{self, Outcome, Roofline, Sizes};
use host::timing::Plan;

/// Exit status when a kernel's result disagrees with its CPU reference.
const EXIT_CHECK_FAILED: u8 = 3;
/// Exit status for every other error (no driver, no device, a fault, ...).
const EXIT_ERROR: u8 = 1;

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Lesson {
    /// Two measured ceilings and ten kernels placed on a roofline.
    Roofline,
}

/// Runs a GPU lesson: checks every kernel against a CPU reference, times it
/// with CUDA events and reports what the lesson teaches.
#[derive(Debug, Parser)]
#[command(name = "lab", version)]
struct Args {
    /// The lesson to run.
    lesson: Lesson,
    /// One JSON object per row (with the run's context) instead of the table.
    #[arg(long, conflicts_with = "profile")]
    json: bool,
    /// One launch per kernel in table order and nothing else: for a profiler.
    #[arg(long)]
    profile: bool,
    /// The CUDA device index.
    #[arg(long, default_value_t = 0)]
    device: usize,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn run(args: &Args) -> anyhow::Result<ExitCode> {
    match args.lesson {
        Lesson::Roofline => run_roofline(args),
    }
}

fn run_roofline(args: &Args) -> anyhow::Result<ExitCode> {
    let gpu = Gpu::open(args.device)?;
    let sizes = Sizes::for_device(&gpu.info);
    let mut lesson = Roofline::new(&gpu, sizes)?;
    if args.profile {
        lesson.profile()?;
        println!("profile mode: {} launches, no checks, no timings", roofline::Kernel::ALL.len());
        return Ok(ExitCode::SUCCESS);
    }
    let plan = Plan::DEFAULT;
    match roofline::run(&mut lesson, plan)? {
        Outcome::Failed(failures) => {
            for f in &failures {
                eprintln!("FAILED {f}");
            }
            eprintln!(
                "{} check(s) failed; no roofline is printed from a run whose kernels are wrong",
                failures.len()
            );
            Ok(ExitCode::from(EXIT_CHECK_FAILED))
        }
        Outcome::Passed { measured, driver_copy } => {
            let report = roofline::report::build(&gpu.info, sizes, plan, &measured, driver_copy);
            if args.json {
                for line in report.json_lines() {
                    println!("{line}");
                }
            } else {
                print!("{}", report.table());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
