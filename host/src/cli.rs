//! `lab`'s command line: one set of flags for every lesson. Which lessons
//! take the optional flags is their [`Capabilities`](crate::lesson::Capabilities)'
//! business; the runner refuses the rest with one line.

use std::path::PathBuf;

use clap::Parser;
use clap::builder::{PossibleValue, PossibleValuesParser};

/// Runs a GPU lesson: checks every kernel against a CPU reference, times it
/// with CUDA events and reports what the lesson teaches. Exit status: 0 all
/// checks passed; 2 unknown lesson or flag (or a flag the lesson does not
/// take); 3 a check failed; 4 no driver; 5 no such device; 6 PTX the GPU or
/// driver cannot run; 7 not enough device memory; 8 a kernel faulted; 9 a
/// file could not be read or written (or a baseline does not match); 10 a
/// needed tool (NVRTC, ncu) is missing or failed; 11 a bug in the lab (a
/// launch whose arguments are not its kernel's, a kernel the PTX lacks); 12
/// the driver refused a cooperative launch (softmax); 1 any other driver
/// error.
#[derive(Debug, Parser)]
#[command(name = "lab", version)]
pub struct Args {
    /// The lesson to run.
    #[arg(value_parser = lessons())]
    pub lesson: String,
    /// One JSON object per row (with the run's context) instead of the table.
    #[arg(long, conflicts_with = "profile")]
    pub json: bool,
    /// One launch per kernel in table order and nothing else: for a profiler
    /// (`--ncu` runs this under Nsight Compute).
    #[arg(long, conflicts_with_all = ["compare", "asm"])]
    pub profile: bool,
    /// Run every kernel beside its CUDA C twin (compiled by NVRTC): both
    /// checked, timed interleaved, with registers and PTX instruction mix.
    #[arg(long, conflicts_with = "asm")]
    pub compare: bool,
    /// Show one kernel's PTX, Rust beside CUDA C, and its SASS where ptxas
    /// and cuobjdump are on the PATH. Needs NVRTC, not a GPU.
    #[arg(long, value_name = "KERNEL")]
    pub asm: Option<String>,
    /// The architecture `--asm` compiles the CUDA C twin and the SASS for.
    #[arg(long, default_value = "sm_90", requires = "asm")]
    pub arch: String,
    /// Small sizes and one timed launch per kernel, every check still made:
    /// for compute-sanitizer (`cargo xtask sanitize`). Its figures are not
    /// measurements worth keeping.
    #[arg(long, conflicts_with_all = ["record", "baseline", "ncu", "ncu_csv"])]
    pub quick: bool,
    /// The CUDA device index.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// Flush L2 before every timed launch and time each launch alone:
    /// cold-cache times (the default times warm launches back to back).
    #[arg(long)]
    pub flush_l2: bool,
    /// Append this run's rows, with their context, to
    /// <results>/<gpu>/<lesson>.jsonl.
    #[arg(long, conflicts_with_all = ["profile", "compare", "asm"])]
    pub record: bool,
    /// Compare this run with a recorded one: `last` (the newest in the
    /// results file) or a path to a file of JSON rows.
    #[arg(long, value_name = "FILE|last", conflicts_with_all = ["profile", "compare", "asm"])]
    pub baseline: Option<String>,
    /// The folder of recorded runs.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub results: PathBuf,
    /// Draw the roofline (log-log, the measured ceilings, the tensor-core
    /// roof where measured, the ridge, each kernel) into this SVG file; with
    /// --compare, Rust and CUDA C points together (roofline).
    #[arg(long, value_name = "FILE.svg", conflicts_with_all = ["profile", "asm"])]
    pub plot: Option<PathBuf>,
    /// Profile the lesson with Nsight Compute first (ncu over `--profile`,
    /// clocks left alone), save its CSV beside the recorded runs and merge
    /// the counters into this run's report: DRAM, L2 and L1 bytes,
    /// occupancy and the top warp-stall reasons per kernel.
    #[arg(long, conflicts_with_all = ["profile", "compare", "asm", "ncu_csv"])]
    pub ncu: bool,
    /// Merge Nsight Compute's counters from this CSV (ncu --csv over
    /// `--profile`, made the way `--ncu` makes it for the lesson): measured
    /// DRAM, L2 and L1 bytes, occupancy and stall reasons per kernel.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["profile", "compare", "asm"])]
    pub ncu_csv: Option<PathBuf>,
    /// Instead of the lesson, launch the test kernel that writes one float
    /// past the end of its output, and report what the guard check saw (for
    /// `cargo xtask sanitize`, which checks memcheck reports it too).
    #[arg(long, hide = true)]
    pub plant_write_past_end: bool,
    /// Write each captured CUDA graph as a DOT file into this folder
    /// (softmax).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["profile", "compare", "asm"])]
    pub graphs_dir: Option<PathBuf>,
}

/// The lessons, with what each teaches, for clap's checks and help.
fn lessons() -> PossibleValuesParser {
    PossibleValuesParser::new(
        crate::lessons::ALL
            .iter()
            .map(|l| PossibleValue::new(l.name).help(l.about)),
    )
}
