//! `cargo xtask <task>`: the project's commands. Thin: each task calls
//! cargo or the `lab` binary and holds no lesson logic.
//!
//! Every task first adds the components `rust-toolchain.toml` names
//! (rust-src, llvm-tools, llvm-bitcode-linker) where the toolchain lacks
//! them: rustup does not add them by itself when cargo runs, and the kernels
//! cannot build without them (see `ensure_toolchain`).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};

#[path = "../../host/kernel_build.rs"]
mod kernel_build;
#[path = "../../host/src/launch_bounds.rs"]
#[allow(dead_code)]
mod launch_bounds;
mod new_lesson;

use clap::{Parser, Subcommand};

/// The project's commands: build the kernels and run a lesson, compare it
/// with CUDA C, read its assembly, run the tests, the sanitizer or the
/// profiler, and bundle what a GPU machine without Rust needs. Set
/// LAB_PTX_ARCH=sm_90 (or another sm_XX) to build the PTX for a newer GPU
/// than the default sm_75.
#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    arg_required_else_help = true
)]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Debug, Subcommand)]
enum Task {
    /// Build the kernels and run a lesson on the GPU (its flags follow it:
    /// `cargo xtask run roofline --json`; `cargo xtask run roofline --help`
    /// lists them).
    Run {
        /// The lesson, then `lab`'s flags for it.
        #[arg(required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true, value_name = "LESSON [FLAGS]")]
        args: Vec<String>,
    },
    /// Run each Rust kernel of a lesson beside its CUDA C twin (NVRTC),
    /// checked and timed interleaved.
    Compare {
        /// The lesson, then `lab`'s flags for it (`--json`, `--flush-l2`).
        #[arg(required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true, value_name = "LESSON [FLAGS]")]
        args: Vec<String>,
    },
    /// One kernel's PTX, Rust beside CUDA C, and its SASS with each side's
    /// registers (no GPU: NVRTC, ptxas, cuobjdump and nvdisasm come from
    /// the machine's CUDA toolkit, or from PyPI into target/tools).
    Asm {
        /// The kernel's exported symbol, for example `transpose_tiled`.
        kernel: String,
        /// The lesson the kernel belongs to.
        #[arg(long, default_value = "roofline")]
        lesson: String,
        /// The architecture the twin and the SASS are compiled for.
        #[arg(long, default_value = "sm_90")]
        arch: String,
    },
    /// Each lesson's --quick run under compute-sanitizer's memcheck,
    /// racecheck, synccheck and initcheck (needs a GPU and
    /// compute-sanitizer).
    Sanitize {
        /// The lessons, or `all`.
        #[arg(required = true, value_parser = clap::builder::PossibleValuesParser::new(lessons_and_all()))]
        lessons: Vec<String>,
    },
    /// Any lesson with Nsight Compute's measured DRAM/L2/L1 bytes,
    /// occupancy and top warp-stall reasons merged in (`lab <lesson> --ncu`),
    /// and for the roofline its chart in target/roofline.svg (needs a GPU
    /// and ncu).
    Profile {
        /// The lesson, then `lab`'s flags for it.
        #[arg(required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true, value_name = "LESSON [FLAGS]")]
        args: Vec<String>,
    },
    /// Run every test (the GPU tests report themselves skipped without a
    /// GPU); arguments go to `cargo test`.
    Test {
        /// Passed to `cargo test --workspace`.
        #[arg(num_args = 0.., trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Write the kernels' PTX where you can read it.
    Ptx {
        /// Where to write it.
        #[arg(default_value = "target/kernels.ptx")]
        file: PathBuf,
    },
    /// Put the release binary, the GPU tests, run.sh and sanitize.sh in
    /// target/bundle, for a GPU machine without Rust.
    Bundle,
    /// Render the lesson book (book/) into HTML with mdBook, its tables and
    /// charts generated from the recorded runs in docs/results, and check
    /// its links, anchors and figures (no GPU; mdBook comes with the build).
    Book {
        /// Where the HTML goes (emptied first).
        #[arg(long, default_value = "target/book")]
        out: PathBuf,
        /// The recorded run its tables and charts read (a folder `cargo
        /// xtask record` wrote; the H200 run the book is written from by
        /// default).
        #[arg(long)]
        run: Option<PathBuf>,
    },
    /// Record every lesson on this machine's GPU the way the book reads a
    /// run: each report with its JSON rows (and Nsight Compute's counters
    /// where ncu is on the PATH), each Rust-against-CUDA-C comparison, and
    /// the PTX and SASS of one kernel a lesson; then `cargo xtask book --run
    /// DIR` draws the book's tables and charts from it.
    Record {
        /// The folder to write (created; use a new one per run).
        dir: PathBuf,
    },
    /// The compile-time cost of specialization (chapter 19.3; no GPU): the
    /// kernels crate built for nvptx64 with 1, 4 and 16 specialized dot
    /// instantiations, and NVRTC compiling the CUDA C twins with as many,
    /// each timed over repetitions (median); one JSON record with its
    /// context.
    SpecializeCost {
        /// Timed builds per instantiation count (after one untimed warm-up).
        #[arg(long, default_value_t = 3)]
        reps: usize,
        /// Timed NVRTC compiles per instantiation count (each well under a
        /// second).
        #[arg(long, default_value_t = 11)]
        nvrtc_reps: usize,
        /// Where the record goes (relative to the workspace root).
        #[arg(long, default_value = "target/specialize-cost.json")]
        out: PathBuf,
        /// A line on the machine's state for the record (for example, what
        /// else it was running).
        #[arg(long, default_value = "")]
        note: String,
    },
    /// Scaffold a new lesson around a saxpy (kernel, CUDA C twin, host side,
    /// CPU and GPU tests, chapter stub) and register it everywhere lessons
    /// are listed (book/src/your-own-kernel.md walks through it).
    NewLesson {
        /// The lesson's name: a lower-case Rust identifier, e.g. `saxpy`.
        name: String,
    },
}

/// The lessons `lab` runs, and `all`.
fn lessons_and_all() -> Vec<&'static str> {
    xtask::LESSONS.iter().copied().chain(["all"]).collect()
}

/// The command line, with the lessons listed under each task that takes one.
fn parse() -> Result<Cli, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let lessons = format!("Lessons: {}", xtask::LESSONS.join(", "));
    let mut command = Cli::command();
    for task in ["run", "compare", "profile"] {
        command = command.mut_subcommand(task, |c| c.after_help(lessons.clone()));
    }
    Cli::from_arg_matches(&command.try_get_matches()?)
}

fn main() -> ExitCode {
    let cli = match parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // Bare `cargo xtask` lists the tasks, as a help request does.
            let listed =
                e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand;
            return ExitCode::from(if e.use_stderr() && !listed { 2 } else { 0 });
        }
    };
    let result = match cli.task {
        Task::Run { args } => run(&args),
        Task::Compare { args } => with_flag(args, "--compare"),
        Task::Asm {
            kernel,
            lesson,
            arch,
        } => asm(&kernel, &lesson, &arch),
        Task::Sanitize { lessons } => sanitize(&lessons),
        Task::Profile { args } => profile(args),
        Task::Test { args } => test(&args),
        Task::Ptx { file } => ptx(&file),
        Task::Bundle => bundle(),
        Task::Book { out, run } => book(&out, run.as_deref()),
        Task::Record { dir } => record(&dir),
        Task::SpecializeCost {
            reps,
            nvrtc_reps,
            out,
            note,
        } => specialize_cost(reps, nvrtc_reps, &out, &note),
        Task::NewLesson { name } => new_lesson::run(&root(), &name),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root (xtask/ sits in it).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask/ has a parent")
        .to_path_buf()
}

/// `$CARGO` (the cargo that runs xtask), in the workspace root.
fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root());
    cmd
}

/// Builds the release `lab` binary (target/release/lab).
fn build_lab() -> Result<()> {
    let mut cmd = cargo();
    cmd.args([
        "build",
        "--quiet",
        "--release",
        "--package",
        "host",
        "--bin",
        "lab",
    ]);
    status(cmd, "building lab")
}

/// Runs `cmd`, failing with its description if it does not succeed.
fn status(mut cmd: Command, what: &str) -> Result<()> {
    let st = cmd
        .status()
        .with_context(|| format!("could not start {what}"))?;
    if !st.success() {
        bail!("{what} failed ({st})");
    }
    Ok(())
}

/// The components the kernels need (rust-toolchain.toml names the same).
const COMPONENTS: [&str; 3] = ["rust-src", "llvm-tools", "llvm-bitcode-linker"];

/// Adds the toolchain components the kernels need, where missing.
///
/// rustup's cargo proxy sets `RUSTUP_TOOLCHAIN` for everything cargo starts,
/// xtask included; with it set, `rustup toolchain install` ignores
/// rust-toolchain.toml and adds nothing. So the components are added to the
/// toolchain that variable names (the pinned one, or whatever `cargo +x`
/// chose); without it, `rustup toolchain install` reads the file.
fn ensure_toolchain() -> Result<()> {
    let mut cmd = Command::new("rustup");
    cmd.current_dir(root());
    match std::env::var("RUSTUP_TOOLCHAIN") {
        Ok(toolchain) => cmd
            .args(["component", "add", "--toolchain", &toolchain])
            .args(COMPONENTS),
        Err(_) => cmd.args(["toolchain", "install"]),
    };
    match cmd.output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => bail!(
            "rustup could not add the components the kernels need ({}):\n{}",
            COMPONENTS.join(", "),
            String::from_utf8_lossy(&out.stderr)
        ),
        // No rustup: the toolchain came another way; build.rs names what is missing.
        Err(_) => Ok(()),
    }
}

/// `run <lesson> [flags]`: build `lab` in release mode and run it.
fn run(args: &[String]) -> Result<ExitCode> {
    ensure_toolchain()?;
    let mut cmd = cargo();
    cmd.args([
        "run",
        "--quiet",
        "--release",
        "--package",
        "host",
        "--bin",
        "lab",
        "--",
    ])
    .args(args);
    let st = cmd.status().context("could not start cargo")?;
    // Pass the lesson's own exit status through (3 means a check failed).
    Ok(ExitCode::from(st.code().unwrap_or(1) as u8))
}

/// `lab <lesson> FLAG [flags]`: the lesson with `flag` inserted after its
/// name (`compare` is `--compare`).
fn with_flag(mut args: Vec<String>, flag: &str) -> Result<ExitCode> {
    args.insert(1.min(args.len()), flag.to_string());
    run(&args)
}

/// `asm <kernel> [--lesson L] [--arch sm_XX]`: `lab L --asm <kernel>`,
/// with NVRTC and ptxas provided from PyPI where the machine has none.
fn asm(kernel: &str, lesson: &str, arch: &str) -> Result<ExitCode> {
    ensure_toolchain()?;
    let mut cmd = cargo();
    cmd.args([
        "run",
        "--quiet",
        "--release",
        "--package",
        "host",
        "--bin",
        "lab",
        "--",
    ])
    .args([lesson, "--asm", kernel, "--arch", arch]);
    with_cuda_tools(&mut cmd);
    let st = cmd.status().context("could not start cargo")?;
    Ok(ExitCode::from(st.code().unwrap_or(1) as u8))
}

/// Puts ptxas on the PATH and NVRTC on the loader path of `cmd`, each from
/// the machine where it has one, else from PyPI into target/tools.
fn with_cuda_tools(cmd: &mut Command) {
    if let Some(ptxas) = provide_ptxas() {
        cmd.env("PTXAS", &ptxas);
        if let Some(dir) = ptxas.parent() {
            cmd.env("PATH", prepend_path(dir, std::env::var_os("PATH")));
        }
    }
    // cuobjdump calls nvdisasm by name, so their folder goes on the PATH.
    if let Some(dir) = provide_sass_tools() {
        cmd.env("PATH", prepend_path(&dir, cmd_path(cmd)));
    }
    if let Some(dir) = provide_nvrtc() {
        cmd.env(
            "LD_LIBRARY_PATH",
            prepend_path(&dir, std::env::var_os("LD_LIBRARY_PATH")),
        );
    }
}

fn prepend_path(dir: &Path, rest: Option<std::ffi::OsString>) -> std::ffi::OsString {
    let mut paths = vec![dir.to_path_buf()];
    if let Some(rest) = rest {
        paths.extend(std::env::split_paths(&rest));
    }
    std::env::join_paths(paths).unwrap_or_default()
}

/// Installs `package` from PyPI into target/tools/<folder> unless `file`
/// (relative to it) is there already; returns the file's path.
fn from_pypi(package: &str, folder: &str, file: &str) -> Option<PathBuf> {
    let tools = root().join("target/tools").join(folder);
    let path = tools.join(file);
    if !path.exists() {
        eprintln!("installing {package} from PyPI into {}", tools.display());
        let installed = Command::new("python3")
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--root-user-action=ignore",
            ])
            .args(["--no-deps", "--target"])
            .arg(&tools)
            .arg(package)
            .status()
            .is_ok_and(|s| s.success());
        if !installed {
            eprintln!("warning: could not install {package} from PyPI");
            return None;
        }
    }
    path.exists().then_some(path)
}

/// A folder holding NVRTC for the tests and `asm`, where the machine's
/// loader cannot already find one: PyPI's nvidia-cuda-nvrtc-cu12.
fn provide_nvrtc() -> Option<PathBuf> {
    let found = Command::new("sh")
        .args(["-c", "ldconfig -p 2>/dev/null | grep -q 'libnvrtc.so'"])
        .status()
        .is_ok_and(|s| s.success());
    if found {
        return None;
    }
    from_pypi(
        "nvidia-cuda-nvrtc-cu12",
        "cuda-nvrtc",
        "nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
    )
    .and_then(|lib| lib.parent().map(Path::to_path_buf))
}

/// `profile <lesson> [flags]`: `lab <lesson> --ncu`, with
/// `--plot target/<lesson>.svg` for a lesson that draws a chart
/// ([`xtask::profile_args`]).
fn profile(args: Vec<String>) -> Result<ExitCode> {
    run(&xtask::profile_args(args, &root().join("target")))
}

/// `sanitize <lesson|all>...`: SANITIZE_SH over the release `lab`.
fn sanitize(args: &[String]) -> Result<ExitCode> {
    let lessons: Vec<&str> = if args.iter().any(|a| a == "all") {
        xtask::LESSONS.to_vec()
    } else {
        args.iter().map(String::as_str).collect()
    };
    ensure_toolchain()?;
    build_lab()?;
    let st = Command::new("bash")
        .arg("-c")
        .arg(SANITIZE_SH)
        .arg("sanitize.sh")
        .arg(root().join("target/release/lab"))
        .args(lessons)
        .status()
        .context("could not start bash")?;
    Ok(ExitCode::from(st.code().unwrap_or(1) as u8))
}

/// Runs each lesson's `--quick` mode under the four compute-sanitizer tools
/// and prints one line per tool; exits 0 only when all are clean and
/// memcheck reported the planted write past the end
/// (`lab --plant-write-past-end`). Buffers carry no guards here
/// (`LAB_NO_GUARDS`), so memcheck sees every write past one. Shared by
/// `cargo xtask sanitize` and the bundle (`target/bundle/sanitize.sh`).
/// Usage: sanitize.sh LAB LESSON...
const SANITIZE_SH: &str = r#"#!/usr/bin/env bash
set -u
lab=$1; shift
cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
if [ -z "$cs" ]; then
  echo "error: compute-sanitizer is not on the PATH or in /usr/local/cuda/bin; it comes with the CUDA toolkit" >&2
  exit 10
fi
echo "$("$cs" --version | tail -1)"
status=0
# Buffers exactly their length: the lab's guards past each buffer would hide
# from memcheck the very writes it looks for.
export LAB_NO_GUARDS=1
# The planted bug first: a kernel that writes one float past its output.
# memcheck must report it, or a clean result below means nothing.
log=$(mktemp)
"$cs" --tool memcheck --error-exitcode 86 "$lab" roofline --plant-write-past-end > "$log" 2>&1
rc=$?
if [ "$rc" -eq 86 ] && grep -q "write_past_end" "$log"; then
  echo "planted write one past the end: memcheck reports it ($(grep -m1 -E "Invalid __global__ write" "$log" | sed 's/^========= //'))"
else
  echo "planted write one past the end: memcheck did NOT report it (exit $rc)"
  tail -20 "$log"
  status=1
fi
rm -f "$log"
for lesson in "$@"; do
  for tool in memcheck racecheck synccheck initcheck; do
    log=$(mktemp)
    start=$(date +%s)
    # API errors are lab's to judge: it checks every driver call's result and
    # exits non-zero on any it does not expect, while one lesson (specialize)
    # makes a call that must fail (a link the driver has to refuse). So the
    # sanitizer reports memory, race, barrier and initialisation errors only.
    "$cs" --tool "$tool" --report-api-errors no --error-exitcode 86 "$lab" "$lesson" --quick > "$log" 2>&1
    rc=$?
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1 | sed 's/^========= //')
    if [ "$rc" -eq 0 ]; then
      echo "$lesson $tool: clean ($summary) in $(( $(date +%s) - start )) s"
    elif [ "$rc" -eq 86 ]; then
      echo "$lesson $tool: NOT CLEAN $summary"
      cat "$log"
      status=1
    else
      # Not the sanitizer's verdict: lab itself failed (no GPU, a check).
      echo "$lesson $tool: could not run: lab exited $rc"
      tail -5 "$log"
      status=1
    fi
    rm -f "$log"
  done
done
exit $status
"#;

/// `test [args]`: every test in the workspace.
fn test(args: &[String]) -> Result<ExitCode> {
    ensure_toolchain()?;
    let mut cmd = cargo();
    cmd.args(["test", "--workspace"]).args(args);
    with_cuda_tools(&mut cmd);
    status(cmd, "cargo test")?;
    Ok(ExitCode::SUCCESS)
}

/// The PATH `cmd` will run with: its own where set, else this process's.
fn cmd_path(cmd: &Command) -> Option<std::ffi::OsString> {
    cmd.get_envs()
        .find(|(k, _)| *k == "PATH")
        .and_then(|(_, v)| v.map(Into::into))
        .or_else(|| std::env::var_os("PATH"))
}

/// The one release of PyPI's cuobjdump and nvdisasm wheels the lab
/// installs, the same for both (cuobjdump runs the nvdisasm beside it).
const SASS_TOOLS_VERSION: &str = "13.5.37";

/// The folder holding cuobjdump and nvdisasm, which turn ptxas's cubin into
/// the SASS that `asm` and the lessons' Rust-against-C tables show, for
/// putting on the PATH (cuobjdump calls nvdisasm by name): `None` where the
/// PATH has both already; the CUDA toolkit's `bin` (`$CUDA_HOME`, then
/// `/usr/local/cuda`) where it has both; else PyPI's nvidia-cuda-cuobjdump
/// and nvidia-cuda-nvdisasm at [`SASS_TOOLS_VERSION`] (CUDA 13, which reads
/// the cubins of sm_75 to sm_90 that ptxas writes) in target/tools/sass.
/// Both are installed or neither is: a cuobjdump without its nvdisasm
/// would fail where none says plainly that the SASS is not shown. No GPU
/// is needed; without PyPI, `asm` says the SASS is not shown.
fn provide_sass_tools() -> Option<PathBuf> {
    let has_both = |dir: &Path| dir.join("cuobjdump").is_file() && dir.join("nvdisasm").is_file();
    let on_path = std::env::var_os("PATH").is_some_and(|paths| {
        let dirs: Vec<PathBuf> = std::env::split_paths(&paths).collect();
        ["cuobjdump", "nvdisasm"]
            .iter()
            .all(|t| dirs.iter().any(|d| d.join(t).is_file()))
    });
    if on_path {
        return None;
    }
    let toolkit = std::env::var_os("CUDA_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/local/cuda"))
        .join("bin");
    if has_both(&toolkit) {
        return Some(toolkit);
    }
    let tools = root().join("target/tools/sass");
    let bin = tools.join("nvidia/cu13/bin");
    if !has_both(&bin) {
        eprintln!(
            "installing cuobjdump and nvdisasm {SASS_TOOLS_VERSION} from PyPI into {}",
            tools.display()
        );
        let installed = Command::new("python3")
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args([
                "--root-user-action=ignore",
                "--retries",
                "1",
                "--timeout",
                "15",
            ])
            .args(["--no-deps", "--target"])
            .arg(&tools)
            .arg(format!("nvidia-cuda-cuobjdump=={SASS_TOOLS_VERSION}"))
            .arg(format!("nvidia-cuda-nvdisasm=={SASS_TOOLS_VERSION}"))
            .status()
            .is_ok_and(|s| s.success());
        if !installed || !has_both(&bin) {
            eprintln!(
                "warning: could not install cuobjdump and nvdisasm from PyPI; the SASS will not be shown"
            );
            return None;
        }
    }
    Some(bin)
}

/// A ptxas for the tests and `asm`: `$PTXAS`, the PATH's, or one installed
/// from PyPI (nvidia-cuda-nvcc-cu12) into target/tools. No GPU is needed;
/// without one the PTX assembly test says it was skipped (and fails in CI).
fn provide_ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PTXAS") {
        return Some(p.into());
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("ptxas"))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| {
        from_pypi(
            "nvidia-cuda-nvcc-cu12",
            "cuda-nvcc",
            "nvidia/cuda_nvcc/bin/ptxas",
        )
    })
}

/// The PTX host/build.rs leaves in its own target directory, for a release
/// build of the host: rustc's, before the build script writes the kernels'
/// launch bounds into it.
fn built_ptx() -> PathBuf {
    root().join("target/release/ptx/nvptx64-nvidia-cuda/release/kernels_gpu.ptx")
}

/// Writes the PTX `lab` embeds to `dest`: [`built_ptx`] with the kernels'
/// launch bounds written in, as host/build.rs does.
fn write_lab_ptx(dest: &Path) -> Result<()> {
    let raw = std::fs::read_to_string(built_ptx())
        .with_context(|| format!("could not read the PTX at {}", built_ptx().display()))?;
    let ptx = launch_bounds::apply(&raw)
        .map_err(|e| anyhow::anyhow!("{}: {e}", built_ptx().display()))?;
    std::fs::write(dest, ptx)
        .with_context(|| format!("could not write the PTX to {}", dest.display()))
}

/// `ptx [FILE]`: build the kernels and copy their PTX somewhere readable
/// (a relative FILE is relative to the workspace root).
fn ptx(file: &Path) -> Result<ExitCode> {
    ensure_toolchain()?;
    let mut cmd = cargo();
    cmd.args(["build", "--quiet", "--release", "--package", "host"]);
    status(cmd, "building the kernels")?;
    let dest = root().join(file);
    write_lab_ptx(&dest)?;
    println!("{}", dest.display());
    Ok(ExitCode::SUCCESS)
}

/// `book`: the lesson book, rendered and checked by the `lab-book` crate
/// (built here, so xtask itself stays quick to build).
fn book(out: &Path, run: Option<&Path>) -> Result<ExitCode> {
    let root = root();
    let out = if out.is_absolute() {
        out.to_path_buf()
    } else {
        root.join(out)
    };
    let mut cmd = cargo();
    cmd.current_dir(&root)
        .args(["run", "--release", "--quiet", "-p", "lab-book", "--"])
        .arg("--root")
        .arg(&root)
        .arg("--out")
        .arg(&out);
    if let Some(run) = run {
        // The run relative to the root, as the book's directives name paths.
        let here = std::env::current_dir()?.join(run);
        let rel = here.strip_prefix(&root).map_err(|_| {
            anyhow::anyhow!(
                "--run {}: the run must sit inside the repository ({})",
                run.display(),
                root.display()
            )
        })?;
        cmd.arg("--run").arg(rel);
    }
    let st = cmd.status().context("running cargo")?;
    Ok(if st.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `record <dir>`: every lesson recorded as the book reads a run.
fn record(dir: &Path) -> Result<ExitCode> {
    ensure_toolchain()?;
    build_lab()?;
    let lab = root().join("target/release/lab");
    let dir = std::env::current_dir()?.join(dir);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let ncu = Command::new("ncu")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ncu {
        eprintln!(
            "ncu is not on the PATH: recording without Nsight Compute's counters (the roofline chart will have no DRAM arrows)"
        );
    }
    let mut failed = Vec::new();
    let mut step = |what: String, args: Vec<String>, file: PathBuf| -> Result<()> {
        eprintln!("{what} -> {}", file.display());
        let out =
            std::fs::File::create(&file).with_context(|| format!("creating {}", file.display()))?;
        let mut cmd = Command::new(&lab);
        cmd.args(&args).stdout(out);
        with_cuda_tools(&mut cmd);
        let st = cmd
            .status()
            .with_context(|| format!("starting {}", lab.display()))?;
        if !st.success() {
            failed.push(format!("lab {} ({st})", args.join(" ")));
        }
        Ok(())
    };
    for lesson in xtask::LESSONS {
        let mut args = vec![lesson.to_string(), "--record".into(), "--results".into()];
        args.push(dir.join("results").display().to_string());
        if ncu {
            args.push("--ncu".into());
        }
        step(
            format!("{lesson}: the report"),
            args,
            dir.join(format!("{lesson}.txt")),
        )?;
        step(
            format!("{lesson}: Rust against CUDA C"),
            vec![lesson.to_string(), "--compare".into(), "--json".into()],
            dir.join(format!("{lesson}-compare.jsonl")),
        )?;
    }
    for (lesson, kernel) in xtask::BOOK_ASM {
        step(
            format!("{kernel}: PTX and SASS"),
            vec![lesson.to_string(), "--asm".into(), kernel.to_string()],
            dir.join(format!("asm-{kernel}.txt")),
        )?;
    }
    if !failed.is_empty() {
        bail!(
            "{} step(s) failed (their output is in their files):\n  {}",
            failed.len(),
            failed.join("\n  ")
        );
    }
    println!(
        "Recorded every lesson into {}. Draw the book from it: cargo xtask book --run {}",
        dir.display(),
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `bundle`: everything a GPU machine without Rust needs, in target/bundle:
/// the release `lab`, each GPU test executable, the PTX, and run.sh.
fn bundle() -> Result<ExitCode> {
    ensure_toolchain()?;
    let dir = root().join("target/bundle");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .with_context(|| format!("could not clear {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir)?;

    build_lab()?;
    std::fs::copy(root().join("target/release/lab"), dir.join("lab"))?;
    write_lab_ptx(&dir.join("kernels.ptx"))?;

    // Build the GPU tests and learn their executables' paths from cargo.
    let out = cargo()
        .args([
            "test",
            "--release",
            "--package",
            "lab-tests",
            "--no-run",
            "--message-format=json",
        ])
        .output()
        .context("could not start cargo test --no-run")?;
    if !out.status.success() {
        bail!(
            "building the GPU tests failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let mut tests = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let name = msg["target"]["name"].as_str().unwrap_or("");
        if let (true, Some(exe)) = (name.starts_with("gpu_"), msg["executable"].as_str()) {
            std::fs::copy(exe, dir.join(name))?;
            tests.push(name.to_string());
        }
    }
    if tests.is_empty() {
        bail!("cargo built no gpu_* test executables");
    }
    for (name, text) in [
        (
            "run.sh",
            RUN_SH.replace("LESSONS", &xtask::LESSONS.join(" ")),
        ),
        ("sanitize.sh", SANITIZE_SH.to_string()),
    ] {
        std::fs::write(dir.join(name), text)?;
        set_executable(&dir.join(name))?;
    }
    println!(
        "{} (lab, {}, run.sh, sanitize.sh)",
        dir.display(),
        tests.join(", ")
    );
    Ok(ExitCode::SUCCESS)
}

/// The bundle's script: the lesson as a table and as JSON, then every GPU
/// test. Outputs go to the folder given as its argument (default: here).
const RUN_SH: &str = r#"#!/usr/bin/env bash
# Runs lessons (default: every lesson) on a GPU machine without Rust: each
# as a table (recorded into <output-folder>/results), then as JSON with the
# table run as its baseline, its profile mode (each kernel once, what ncu
# profiles), then beside its CUDA C twins (table, JSON); the softmax's CUDA
# graphs as DOT files (<output-folder>/graphs/softmax); then every GPU test.
# Usage: run.sh [output-folder [lesson...]]
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
shift || true
lessons=("$@")
[ ${#lessons[@]} -eq 0 ] && lessons=(LESSONS)
mkdir -p "$out"
status=0
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv
fi
for lesson in "${lessons[@]}"; do
  # The lessons that capture CUDA graphs keep a DOT file of each from the recorded run.
  graphs=()
  if [ "$lesson" = softmax ]; then graphs=(--graphs-dir "$out/graphs/$lesson"); fi
  "$here/lab" "$lesson" --record --results "$out/results" ${graphs[@]+"${graphs[@]}"} | tee "$out/$lesson.txt" || status=1
  "$here/lab" "$lesson" --json --baseline last --results "$out/results" > "$out/$lesson.jsonl" || status=1
  echo "$lesson JSON rows: $(wc -l < "$out/$lesson.jsonl")"
  "$here/lab" "$lesson" --profile || status=1
  "$here/lab" "$lesson" --compare | tee "$out/$lesson-compare.txt" || status=1
  "$here/lab" "$lesson" --compare --json > "$out/$lesson-compare.jsonl" || status=1
done
for t in "$here"/gpu_*; do
  "$t" 2>&1 | tee "$out/$(basename "$t").txt" || status=1
done
exit $status
"#;

#[cfg(unix)]
fn set_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}

#[cfg(not(unix))]
fn set_executable(_: &Path) -> Result<()> {
    Ok(())
}

/// The instantiation counts `specialize-cost` builds, each a value of the
/// `lab_specialize_cost` cfg that kernels-gpu/src/specialize.rs knows.
const SPECIALIZE_COST_COUNTS: [usize; 3] = [1, 4, 16];

/// The median of `v` (the mean of the middle two for an even count), in
/// the unit of `v`; 0 for none.
fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// The output of `program args`, trimmed, or "unknown".
fn output_of(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .current_dir(root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// The kernel build of host/build.rs (same target, flags, profile and
/// environment, `-Ctarget-cpu=sm_75`), into `target_dir`, with
/// `--cfg lab_specialize_cost="count"` given to the kernels crate alone.
fn kernel_cost_build(target_dir: &Path, count: usize) -> Command {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd =
        kernel_build::kernel_build(&cargo, &root().join("kernels-gpu"), "sm_75", target_dir);
    cmd.args(["--", "--cfg"])
        .arg(format!("lab_specialize_cost=\"{count}\""));
    cmd
}

/// Runs one kernel build, returning its wall time (ms) and whether cargo
/// compiled kernels-gpu (rather than finding it fresh).
fn timed_kernel_build(target_dir: &Path, count: usize) -> Result<(f64, bool)> {
    let start = std::time::Instant::now();
    let out = kernel_cost_build(target_dir, count)
        .output()
        .context("could not start cargo for the kernel build")?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        bail!("the kernel build with {count} instantiation(s) failed:\n{stderr}");
    }
    Ok((ms, stderr.contains("Compiling kernels-gpu")))
}

/// `specialize-cost`: for each count of [`SPECIALIZE_COST_COUNTS`], one
/// untimed build (it also builds `core` the first time), then `reps` timed
/// builds, the counts interleaved, each after setting kernels-gpu/src/lib.rs's
/// modification time to now so cargo recompiles the kernels crate (and only
/// it: the crate is cold, its dependency `core` is not). A build cargo finds
/// fresh is an error. A no-op build (nothing to compile) is timed too: the
/// part of each figure that is cargo's own start-up. Then the PTX each count
/// gives (bytes, entries) and the NVRTC times of the CUDA C twins
/// (`specialize_nvrtc_cost`, an example of the host crate, run first).
/// Writes one JSON object to `out`.
fn specialize_cost(reps: usize, nvrtc_reps: usize, out: &Path, note: &str) -> Result<ExitCode> {
    ensure_toolchain()?;
    if reps == 0 || nvrtc_reps == 0 {
        bail!("--reps and --nvrtc-reps must be at least 1");
    }
    // The tree as the measurement starts: everything below is built from it
    // (the NVRTC part first, then only kernels-gpu).
    let commit = output_of("git", &["rev-parse", "--short=12", "HEAD"]);
    let dirty = !output_of("git", &["status", "--porcelain", "--untracked-files=no"]).is_empty();
    // The CUDA C twins under NVRTC: a host example, which loads NVRTC.
    eprintln!("specialize-cost: NVRTC");
    let mut cmd = cargo();
    cmd.args([
        "run",
        "--quiet",
        "--release",
        "--package",
        "host",
        "--example",
        "specialize_nvrtc_cost",
        "--",
    ])
    .arg(nvrtc_reps.to_string());
    with_cuda_tools(&mut cmd);
    let nvrtc = cmd
        .output()
        .context("could not start cargo for the NVRTC timing")?;
    if !nvrtc.status.success() {
        bail!(
            "the NVRTC timing failed:\n{}",
            String::from_utf8_lossy(&nvrtc.stderr)
        );
    }
    let nvrtc: serde_json::Value = serde_json::from_slice(&nvrtc.stdout)
        .context("the NVRTC timing did not print one JSON object")?;
    let target_dir = root().join("target/specialize-cost");
    let lib_rs = root().join("kernels-gpu/src/lib.rs");
    let touch = || -> Result<()> {
        std::fs::File::options()
            .append(true)
            .open(&lib_rs)
            .and_then(|f| f.set_modified(std::time::SystemTime::now()))
            .with_context(|| {
                format!(
                    "could not set the modification time of {}",
                    lib_rs.display()
                )
            })
    };
    let ptx = target_dir.join("nvptx64-nvidia-cuda/release/kernels_gpu.ptx");
    let load_before = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); SPECIALIZE_COST_COUNTS.len()];
    let mut ptx_facts = Vec::new();
    for &count in &SPECIALIZE_COST_COUNTS {
        eprintln!("specialize-cost: warm-up build, {count} instantiation(s)");
        touch()?;
        timed_kernel_build(&target_dir, count)?;
        let text = std::fs::read_to_string(&ptx)
            .with_context(|| format!("the build left no PTX at {}", ptx.display()))?;
        let entries = text
            .lines()
            .filter(|l| l.contains(".entry dot_specialized_"))
            .count();
        if entries != count {
            bail!("the build with {count} instantiation(s) has {entries} dot_specialized entries");
        }
        ptx_facts.push(serde_json::json!({
            "instantiations": count,
            "ptx_bytes": text.len(),
            "ptx_lines": text.lines().count(),
            "dot_specialized_entries": entries,
            "fma_f32_in_dot_specialized": dot_specialized_fma(&text),
        }));
    }
    for rep in 0..reps {
        for (i, &count) in SPECIALIZE_COST_COUNTS.iter().enumerate() {
            touch()?;
            let (ms, compiled) = timed_kernel_build(&target_dir, count)?;
            if !compiled {
                bail!("cargo did not recompile kernels-gpu (rep {rep}, {count} instantiation(s))");
            }
            eprintln!("specialize-cost: rep {rep}, {count} instantiation(s): {ms:.0} ms");
            times[i].push(ms);
        }
    }
    let mut noop = Vec::new();
    for _ in 0..reps {
        let (ms, compiled) = timed_kernel_build(&target_dir, 16)?;
        if compiled {
            bail!("the no-op build recompiled kernels-gpu");
        }
        noop.push(ms);
    }

    let load_after = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();

    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let record = serde_json::json!({
        "what": "specialize-cost: compile time of specialization (chapter 19.3), no GPU",
        "commit": if dirty { format!("{commit}-dirty") } else { commit },
        "date_utc": output_of("date", &["-u", "+%Y-%m-%dT%H:%M:%SZ"]),
        "cpu": cpu,
        "logical_cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "loadavg_before": load_before.trim(),
        "loadavg_after": load_after.trim(),
        "rustc": output_of("rustc", &["--version"]),
        "cargo": std::env::var("CARGO").unwrap_or_default(),
        "note": note,
        "method": "wall time of `cargo rustc` building kernels-gpu for nvptx64-nvidia-cuda (release, -Ctarget-cpu=sm_75, -Zbuild-std=core, as host/build.rs does) with --cfg lab_specialize_cost=COUNT; kernels-gpu recompiled each time (its src/lib.rs touched), core already built; counts interleaved; the whole crate (every lesson's kernels) is compiled, so the differences between counts are the specialization's share",
        "tree": "commit and dirt as the measurement started; everything is built from that tree",
        "reps": reps,
        "kernels_crate": SPECIALIZE_COST_COUNTS.iter().zip(&times).zip(&ptx_facts).map(|((count, t), facts)| serde_json::json!({
            "instantiations": count,
            "build_ms": t,
            "median_build_ms": median(t.clone()),
            "ptx": facts,
        })).collect::<Vec<_>>(),
        "noop_build_ms": noop,
        "median_noop_build_ms": median(noop.clone()),
        "nvrtc": nvrtc,
    });
    let path = root().join(out);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("could not create {}", dir.display()))?;
    }
    std::fs::write(&path, serde_json::to_string_pretty(&record)? + "\n")
        .with_context(|| format!("could not write {}", path.display()))?;
    println!("{}", serde_json::to_string_pretty(&record)?);
    eprintln!("specialize-cost: written to {}", path.display());
    if dirty {
        eprintln!("specialize-cost: the tree is dirty: the record's commit says so");
    }
    Ok(ExitCode::SUCCESS)
}

/// `fma.rn.f32` instructions in the `dot_specialized_*` entries of `ptx`
/// (each entry runs from its `.entry` line to its closing `}` line).
fn dot_specialized_fma(ptx: &str) -> usize {
    let mut inside = false;
    let mut fma = 0;
    for line in ptx.lines() {
        if line.contains(".entry ") {
            inside = line.contains(".entry dot_specialized_");
        } else if line.trim() == "}" {
            inside = false;
        } else if inside && line.trim_start().starts_with("fma.rn.f32") {
            fma += 1;
        }
    }
    fma
}
