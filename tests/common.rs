//! Helpers shared by the integration tests.
//!
//! GPU tests open the GPU once through [`open_gpu`]: on a machine without an
//! NVIDIA driver (or without a device) they report one line saying so and
//! mark every GPU test ignored, so a CPU-only CI run shows them as skipped,
//! not passed. A GPU that is present but cannot be used fails every test.

use host::Error;
use host::gpu::Gpu;

/// What opening the GPU gave: a GPU, no GPU on this machine (skip), or a
/// GPU that failed to open (every test fails with the reason).
#[allow(
    clippy::large_enum_variant,
    reason = "made once a test executable, and matched on by value"
)]
pub enum Opened {
    /// The GPU, with the PTX loaded.
    Gpu(Gpu),
    /// No NVIDIA driver or no device: the GPU tests cannot run here.
    Absent(String),
    /// A GPU is here but could not be used (PTX refused, driver error).
    Broken(String),
}

/// Opens device 0.
pub fn open_gpu() -> Opened {
    match Gpu::open(0) {
        Ok(gpu) => Opened::Gpu(gpu),
        Err(e @ (Error::NoDriver | Error::NoDevice { .. })) => {
            Opened::Absent(format!("GPU tests skipped: {e}"))
        }
        Err(e) => Opened::Broken(e.to_string()),
    }
}

/// One GPU test: its name and what it does with the shared GPU.
pub type Trial = (
    String,
    Box<dyn Fn(&Gpu) -> Result<(), String> + Send + Sync>,
);

/// A GPU test named `name`.
pub fn trial(
    name: impl Into<String>,
    f: impl Fn(&Gpu) -> Result<(), String> + Send + Sync + 'static,
) -> Trial {
    (name.into(), Box::new(f))
}

/// One trial per kernel of `K` and side: `<symbol>` runs `check` on the
/// Rust kernel, `twin_<symbol>` on its CUDA C twin. The kernels come from
/// the lesson's own list, so a new kernel gets its trials.
pub fn kernel_trials<K: host::kernels::KernelId + Send + Sync>(
    check: fn(&Gpu, K, host::compare::Side) -> Result<(), String>,
) -> Vec<Trial> {
    use host::compare::Side;
    [Side::Rust, Side::CudaC]
        .into_iter()
        .flat_map(|side| {
            K::ALL.iter().map(move |&k| {
                let prefix = if side == Side::Rust { "" } else { "twin_" };
                trial(format!("{prefix}{}", k.symbol()), move |gpu| {
                    check(gpu, k, side)
                })
            })
        })
        .collect()
}

/// Runs GPU trials under libtest-mimic: each trial gets the shared GPU; with
/// no GPU every trial is listed as ignored and one line says why.
pub fn run_gpu_trials(trials: Vec<Trial>) -> std::process::ExitCode {
    use libtest_mimic::{Arguments, Trial as Mimic};
    use std::sync::Arc;

    let mut args = Arguments::from_args();
    // One GPU, one stream: trials run one at a time.
    args.test_threads = Some(1);
    let gpu = match open_gpu() {
        Opened::Gpu(gpu) => Ok(Arc::new(gpu)),
        Opened::Absent(why) => {
            eprintln!("{why}");
            Err(None)
        }
        Opened::Broken(why) => Err(Some(why)),
    };
    let trials = trials
        .into_iter()
        .map(|(name, f)| match &gpu {
            Ok(gpu) => {
                let gpu = Arc::clone(gpu);
                Mimic::test(name, move || f(&gpu).map_err(Into::into))
            }
            Err(None) => Mimic::test(name, || Ok(())).with_ignored_flag(true),
            Err(Some(why)) => {
                let why = why.clone();
                Mimic::test(name, move || {
                    Err(format!("the GPU could not be opened: {why}").into())
                })
            }
        })
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}

/// A synthetic H200-like device for CPU tests: what the lessons read from
/// a device is its L2, its SMs and its limits.
pub fn synthetic_device(l2_bytes: usize, sms: u32) -> host::gpu::DeviceInfo {
    host::gpu::DeviceInfo {
        l2_bytes,
        sms,
        name: "synthetic".into(),
        ..profile("H200").info()
    }
}

/// A GPU as NVIDIA publishes it: the facts the lessons size themselves and
/// admit their launches from.
///
/// Sources. Per compute capability (resident threads, blocks and registers
/// per SM, shared memory per SM and per block with opt-in): the CUDA C++
/// Programming Guide, "Technical Specifications per Compute Capability"
/// (CUDA 12.8), which NVIDIA's CCCL also encodes
/// (`cudax/include/cuda/experimental/__device/arch_traits.cuh`: 7.5, 8.0,
/// 8.6, 9.0). Per product (SMs, L2, memory, compute capability): NVIDIA's
/// datasheets and architecture whitepapers: T4 (Turing, "NVIDIA T4 Tensor
/// Core GPU" datasheet), A10 and A100 40 GB (the A10 datasheet, "NVIDIA A100
/// Tensor Core GPU Architecture"), L4 and RTX 4090 ("NVIDIA Ada GPU
/// Architecture"), H100 SXM5 ("NVIDIA H100 Tensor Core GPU Architecture"),
/// B200 ("NVIDIA Blackwell Architecture Technical Brief", HGX B200) and RTX
/// 5090 ("NVIDIA RTX Blackwell GPU Architecture"). The H200's SMs and L2 are
/// what its driver reported to this project (docs/results, 2026-11-29);
/// its memory is the published 141 GB. L2 sizes in "MB" are taken as MiB,
/// the unit the driver reports them in (an H100's "50 MB" is 51200 KiB).
#[derive(Debug, Clone, Copy)]
pub struct GpuProfile {
    /// The product.
    pub name: &'static str,
    /// Compute capability.
    pub cc: (i32, i32),
    /// Streaming multiprocessors.
    pub sms: u32,
    /// L2, MiB.
    pub l2_mib: usize,
    /// Device memory, bytes.
    pub memory_bytes: usize,
}

/// Per compute capability: (resident threads per SM, resident blocks per
/// SM, shared memory per SM in KiB, opt-in shared memory per block in KiB),
/// from the CUDA C++ Programming Guide's table. 64 Ki registers per SM on
/// every one of them.
pub fn per_sm_limits(cc: (i32, i32)) -> (u32, u32, usize, usize) {
    match cc {
        (7, 5) => (1024, 16, 64, 64),
        (8, 0) => (2048, 32, 164, 163),
        (8, 6) => (1536, 16, 100, 99),
        (8, 9) => (1536, 24, 100, 99),
        (9, 0) | (10, 0) => (2048, 32, 228, 227),
        (12, 0) => (1536, 32, 100, 99),
        other => panic!("no published limits written down here for compute capability {other:?}"),
    }
}

const GB: usize = 1_000_000_000;

/// The GPUs the lessons must size themselves for, from a Colab T4 to a
/// B200.
pub const PROFILES: &[GpuProfile] = &[
    GpuProfile {
        name: "T4",
        cc: (7, 5),
        sms: 40,
        l2_mib: 4,
        memory_bytes: 15 << 30,
    },
    GpuProfile {
        name: "A10",
        cc: (8, 6),
        sms: 72,
        l2_mib: 6,
        memory_bytes: 24 * GB,
    },
    GpuProfile {
        name: "A100 40GB",
        cc: (8, 0),
        sms: 108,
        l2_mib: 40,
        memory_bytes: 40 * GB,
    },
    GpuProfile {
        name: "L4",
        cc: (8, 9),
        sms: 58,
        l2_mib: 48,
        memory_bytes: 24 * GB,
    },
    GpuProfile {
        name: "RTX 4090",
        cc: (8, 9),
        sms: 128,
        l2_mib: 72,
        memory_bytes: 24 * GB,
    },
    GpuProfile {
        name: "H100",
        cc: (9, 0),
        sms: 132,
        l2_mib: 50,
        memory_bytes: 80 * GB,
    },
    GpuProfile {
        name: "H200",
        cc: (9, 0),
        sms: 132,
        l2_mib: 60,
        memory_bytes: 141 * GB,
    },
    GpuProfile {
        name: "B200",
        cc: (10, 0),
        sms: 148,
        l2_mib: 126,
        memory_bytes: 180 * GB,
    },
    GpuProfile {
        name: "RTX 5090",
        cc: (12, 0),
        sms: 170,
        l2_mib: 96,
        memory_bytes: 32 * GB,
    },
];

/// The profile named `name`.
///
/// # Panics
/// For a name not in [`PROFILES`].
pub fn profile(name: &str) -> GpuProfile {
    *PROFILES
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no GPU profile {name}"))
}

impl GpuProfile {
    /// The device as the driver would report it (clocks and bus width are
    /// the H200's: no lesson sizes itself from them).
    pub fn info(&self) -> host::gpu::DeviceInfo {
        let (threads, blocks, shared_sm_kib, optin_kib) = per_sm_limits(self.cc);
        host::gpu::DeviceInfo {
            ordinal: 0,
            name: self.name.into(),
            compute_capability: self.cc,
            sms: self.sms,
            l2_bytes: self.l2_mib << 20,
            total_memory_bytes: self.memory_bytes,
            sm_clock_khz: 1_980_000,
            memory_clock_khz: 3_201_000,
            memory_bus_bits: 6016,
            max_threads_per_sm: threads,
            regs_per_sm: 65536,
            shared_per_block_optin: optin_kib << 10,
            shared_per_sm: shared_sm_kib << 10,
            max_blocks_per_sm: blocks,
            driver_cuda: "13.0".into(),
            driver_version: None,
            uuid: None,
            pci_bus_id: None,
            module_loading: None,
        }
    }
}

/// NVRTC's PTX of lesson `L`'s CUDA C twins for `gpu`'s architecture,
/// compiled once per test binary and lesson.
///
/// # Errors
/// NVRTC missing or the program not compiling, as one line.
pub fn twin_ptx<L: host::lesson::Lesson>(gpu: &Gpu) -> Result<&'static str, String> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static PTX: OnceLock<Mutex<HashMap<&'static str, Result<&'static str, String>>>> =
        OnceLock::new();
    let mut cache = PTX
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    cache
        .entry(L::NAME)
        .or_insert_with(|| {
            host::nvrtc::compile_for(
                &L::cuda_c(),
                &format!("{}.cu", L::NAME),
                &L::twin_arch(gpu.info.compute_capability),
            )
            .map(|ptx| &*Box::leak(ptx.into_boxed_str()))
            .map_err(|e| e.to_string())
        })
        .clone()
}

/// NVRTC's PTX of lesson `L`'s CUDA C twins for compute capability `cc`
/// (for the lesson's twin architecture there, `Lesson::twin_arch`), for a
/// CPU test (see [`nvrtc_ptx`]).
pub fn twin_ptx_on_cpu<L: host::lesson::Lesson>(cc: (i32, i32)) -> Option<String> {
    nvrtc_ptx(L::cuda_c, &format!("{}.cu", L::NAME), &L::twin_arch(cc))
}

/// Makes `lesson` (lesson `L`'s kernels) launch `side`'s kernels: for CUDA
/// C, its twins are compiled (once) and loaded first.
///
/// # Errors
/// NVRTC or the driver failing, as one line.
pub fn use_side<L: host::lesson::Lesson>(
    gpu: &Gpu,
    lesson: &mut impl host::compare::TwinRows,
    side: host::compare::Side,
) -> Result<(), String> {
    if side == host::compare::Side::CudaC {
        let ptx = twin_ptx::<L>(gpu)?;
        lesson.load_twins(gpu, ptx).map_err(|e| e.to_string())?;
        lesson.use_side(side);
    }
    Ok(())
}

/// `Ok` when `table` (a report's text) contains every text in `needed`;
/// else an error naming the first one missing, with the whole table.
///
/// # Errors
/// The first missing text, as one message.
pub fn report_contains(table: &str, needed: &[&str]) -> Result<(), String> {
    match needed.iter().find(|want| !table.contains(*want)) {
        Some(want) => Err(format!("the report lacks {want:?}:\n{table}")),
        None => Ok(()),
    }
}

/// Runs lesson `L` the way `lab L --quick` does, through the one lesson
/// interface, and returns its report's table and JSON lines; every check
/// must pass.
///
/// # Errors
/// A failed check, a fault or a driver error, as one line.
pub fn run_quick<L: host::lesson::Lesson>(
    gpu: &Gpu,
) -> Result<(String, Vec<serde_json::Value>), String> {
    use host::lesson::Outcome;
    let sizes = <L::Sizes as host::sizes::LessonSizes>::for_gpu(&gpu.info, true)
        .map_err(|e| e.to_string())?;
    let plan = host::timing::Plan::QUICK;
    let context = host::report::Context::new(
        L::NAME,
        &gpu.info,
        &sizes,
        L::block_sizes(),
        plan,
        host::report::now(),
    );
    let progress = indicatif::ProgressBar::hidden();
    let options = host::lesson::RunOptions {
        plan,
        quick: true,
        graphs_dir: None,
        progress: &progress,
    };
    match L::run(gpu, &sizes, context, &options).map_err(|e| e.to_string())? {
        Outcome::Passed(report) => Ok((report.table(), report.json_lines())),
        Outcome::Failed(f) => Err(format!("{} checks failed, first: {}", f.len(), f[0])),
        Outcome::Faulted { failures, error } => Err(format!(
            "faulted after {} failed checks: {error}",
            failures.len()
        )),
    }
}

/// NVRTC's PTX of `program` (named `file` in NVRTC's messages) for the
/// architecture `arch` (`sm_75`, `sm_90a`), for a CPU test; `None` (after one line saying so) where
/// NVRTC is missing on this machine.
///
/// # Panics
/// Where NVRTC is missing under CI (`CI` set: the README's test command
/// fetches it, so CI must run every such test), or the program does not
/// compile.
pub fn nvrtc_ptx(program: fn() -> String, file: &str, arch: &str) -> Option<String> {
    if host::nvrtc::require_nvrtc().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run this test: NVRTC is missing"
        );
        eprintln!("skipped: NVRTC is not on the loader path");
        return None;
    }
    Some(host::nvrtc::compile_for(&program(), file, arch).unwrap_or_else(|e| panic!("{file}: {e}")))
}

/// What is wrong with `kernels` (symbol and declared parameters each)
/// against the `.param` lists of the same entries in `ptx` (`which` names
/// the PTX in the messages): one line per fault, empty when every kernel's
/// count and kind of parameters match.
pub fn signature_faults(
    kernels: &[(&'static str, &'static [host::kernels::Param])],
    ptx: &str,
    which: &str,
) -> Vec<String> {
    let mut faults = Vec::new();
    for &(symbol, declared) in kernels {
        let Some(params) = host::ptx::entry_params(ptx, symbol) else {
            faults.push(format!("{symbol}: no .entry in the {which}"));
            continue;
        };
        if params.len() != declared.len() {
            faults.push(format!(
                "{symbol}: declares {} parameters, the {which} has {}",
                declared.len(),
                params.len()
            ));
            continue;
        }
        for (i, (want, got)) in declared.iter().zip(&params).enumerate() {
            if !want.matches(got) {
                faults.push(format!(
                    "{symbol}: parameter {i} is declared a {want}, the {which} has `{}`",
                    got.text
                ));
            }
        }
    }
    faults
}

/// The label a PTX line defines (`$L__BB0_4:`, which LLVM may follow with
/// a comment), without its colon; `None` for any other line.
pub fn ptx_label(line: &str) -> Option<&str> {
    let code = line.split("//").next().unwrap_or("").trim();
    code.strip_suffix(':').filter(|l| l.starts_with('$'))
}

/// The label a PTX branch line jumps to (`bra`, `bra.uni`, either under a
/// predicate such as `@%p1` or `@!%p1`); `None` for any other line.
pub fn branch_target(line: &str) -> Option<&str> {
    let line = line.trim();
    let unpredicated = if line.starts_with('@') {
        line.split_once(char::is_whitespace)?.1.trim()
    } else {
        line
    };
    let (op, rest) = unpredicated.split_once(char::is_whitespace)?;
    op.starts_with("bra")
        .then(|| rest.trim().trim_end_matches(';').trim())
}

/// Some `bra` in `body` (one kernel's PTX) jumps to a label defined above
/// it: a run-time loop survived compilation.
pub fn has_backward_branch(body: &str) -> bool {
    let mut seen = Vec::new();
    for line in body.lines() {
        if let Some(label) = ptx_label(line) {
            seen.push(label);
        } else if branch_target(line).is_some_and(|target| seen.contains(&target)) {
            return true;
        }
    }
    false
}

/// Whether `body` (one kernel's PTX) reads `%ntid.x` before `%ctaid.x` and
/// `%ntid.y` before `%ctaid.y`, the order nvcc's PTX has and
/// `device::thread::global_index_x_u32` keeps (ptxas follows it: the
/// twins' prologue). `Err` names the first axis read the other way or not
/// read at all.
pub fn reads_block_dim_first(body: &str) -> Result<(), String> {
    for axis in ["x", "y"] {
        let at = |reg: &str| {
            body.find(&format!("%{reg}.{axis}"))
                .ok_or(format!("no %{reg}.{axis} read"))
        };
        if at("ntid")? > at("ctaid")? {
            return Err(format!("%ctaid.{axis} is read before %ntid.{axis}"));
        }
    }
    Ok(())
}

/// The loops of a PTX entry's `body`, in order: each from the label LLVM
/// marks `// =>This Inner Loop Header` to the branch back to that label
/// (the loop's back edge), both included. A loop whose back edge is not
/// found is left out.
pub fn loops(body: &str) -> Vec<&str> {
    let mut found = Vec::new();
    for (at, _) in body.match_indices("// =>This Inner Loop Header") {
        let start = body[..at].rfind('\n').map_or(0, |i| i + 1);
        let label = body[start..at].trim().trim_end_matches(':');
        let from_label = &body[start..];
        let mut offset = 0;
        for line in from_label.lines() {
            offset += line.len() + 1;
            let t = line.trim().trim_end_matches(';');
            if t.contains("bra") && t.ends_with(label) {
                found.push(&from_label[..offset - 1]);
                break;
            }
        }
    }
    found
}

/// The registers added to other registers in `ptx`'s 64-bit adds
/// (`add.s64 %rdA, %rdB, %rdC;` gives `%rdC`): in a loop that walks
/// pointers, the strides it advances them by.
pub fn add_strides(ptx: &str) -> std::collections::BTreeSet<&str> {
    ptx.lines()
        .filter_map(|l| l.trim().strip_prefix("add.s64"))
        .filter_map(|ops| ops.trim().trim_end_matches(';').split(", ").nth(2))
        .filter(|op| op.starts_with("%rd"))
        .collect()
}

/// The SASS of `function` in `ptx` assembled for `arch` ([`host::asm::sass`]:
/// ptxas and cuobjdump from the machine's CUDA or, under `cargo xtask
/// test`, from PyPI); `None`, after one line saying so, where either tool
/// is missing outside CI.
///
/// # Panics
/// A tool missing under CI (`CI` set), or either tool failing.
pub fn sass_on_cpu(ptx: &str, arch: &str, function: &str) -> Option<String> {
    let sass = host::asm::sass(ptx, arch, function).unwrap();
    if sass.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run this test: `cargo xtask test` provides ptxas and cuobjdump"
        );
        eprintln!("skipped: ptxas or cuobjdump not found");
    }
    sass
}

/// ptxas's `-v` report for each of `entries` of `ptx` (a module named
/// `name` in messages), assembled for each of `archs`: `(arch, entry,
/// report)`, the report being the lines from the entry's "Compiling entry
/// function" to the next entry's, then every line elsewhere in the log that
/// names the entry (`in function '<entry>'`: ptxas's wgmma diagnostics). ptxas comes from `$PTXAS` or the PATH
/// (`cargo xtask test` provides one from PyPI); `None`, after one line
/// saying so, where there is none outside CI.
///
/// # Panics
/// No ptxas under CI (`CI` set), ptxas rejecting the PTX, or an entry it
/// did not compile.
pub fn ptxas_reports(
    ptx: &str,
    name: &str,
    archs: &[&str],
    entries: &[&str],
) -> Option<Vec<(String, String, String)>> {
    let Some(ptxas) = std::env::var_os("PTXAS")
        .map(std::path::PathBuf::from)
        .or_else(|| host::asm::find_tool("ptxas"))
    else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run this test: install ptxas or set PTXAS"
        );
        eprintln!("skipped: no ptxas on PATH and PTXAS unset");
        return None;
    };
    let dir = std::env::temp_dir().join(format!("lab-ptxas-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let src = dir.join(format!("{name}.ptx"));
    std::fs::write(&src, ptx).expect("the PTX is written");
    let mut reports = Vec::new();
    for arch in archs {
        let out = std::process::Command::new(&ptxas)
            .args(["-v", &format!("-arch={arch}"), "-o"])
            .arg(dir.join(format!("{arch}.cubin")))
            .arg(&src)
            .output()
            .expect("ptxas runs");
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "ptxas rejected {name} for {arch}:\n{log}"
        );
        for entry in entries {
            let report = log
                .split(&format!("Compiling entry function '{entry}'"))
                .nth(1)
                .unwrap_or_else(|| panic!("{arch}: ptxas did not compile {entry}:\n{log}"));
            let report = report
                .split("Compiling entry function")
                .next()
                .unwrap_or(report);
            // ptxas prints some diagnostics of an entry (the wgmma ones,
            // C75xx) before any entry's section, naming the function.
            let named = format!("function '{entry}'");
            let diagnostics: Vec<&str> = log.lines().filter(|l| l.contains(&named)).collect();
            let report = format!("{report}{}", diagnostics.join("\n"));
            reports.push((arch.to_string(), entry.to_string(), report));
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    Some(reports)
}

#[cfg(test)]
mod report_contains_tests {
    #[test]
    fn names_the_first_missing_text() {
        assert_eq!(super::report_contains("a b c", &["a", "c"]), Ok(()));
        let err = super::report_contains("a b c", &["a", "x", "y"]).unwrap_err();
        assert!(err.starts_with("the report lacks \"x\":\na b c"), "{err}");
    }
}

#[cfg(test)]
mod reads_block_dim_first_tests {
    #[test]
    fn names_the_axis_read_the_other_way() {
        let nvcc = "mov.u32 %r1, %ntid.x;\nmov.u32 %r2, %ctaid.x;\nmov.u32 %r3, %ntid.y;\nmov.u32 %r4, %ctaid.y;";
        assert_eq!(super::reads_block_dim_first(nvcc), Ok(()));
        let swapped_y = "mov.u32 %r1, %ntid.x;\nmov.u32 %r2, %ctaid.x;\nmov.u32 %r4, %ctaid.y;\nmov.u32 %r3, %ntid.y;";
        assert_eq!(
            super::reads_block_dim_first(swapped_y),
            Err("%ctaid.y is read before %ntid.y".into())
        );
        assert_eq!(
            super::reads_block_dim_first("mov.u32 %r1, %ntid.x;"),
            Err("no %ctaid.x read".into())
        );
    }
}

#[cfg(test)]
mod loop_tests {
    // The main loop and remainder of the gemm_naive PTX before it walked
    // two pointers (rustc 1.95), cut to their adds and branches.
    const INDEXED: &str = "\tmov.b64 \t%rd34, %rd37;\n\
$L__BB0_5:                              // =>This Inner Loop Header: Depth=1\n\
\tadd.s64 \t%rd18, %rd36, %rd33;\n\
\tadd.s64 \t%rd19, %rd36, %rd10;\n\
\tadd.s64 \t%rd36, %rd36, %rd8;\n\
\tadd.s64 \t%rd35, %rd35, 16;\n\
\t@%p6 bra \t$L__BB0_5;\n\
\tsetp.eq.b64 \t%p7, %rd38, 0;\n\
$L__BB0_8:                              // =>This Inner Loop Header: Depth=1\n\
\t.pragma \"nounroll\";\n\
\tadd.s64 \t%rd39, %rd39, %rd33;\n\
\t@%p8 bra \t$L__BB0_8;\n\
\tbra.uni \t$L__BB0_9;\n";

    #[test]
    fn cuts_each_loop_at_its_back_edge() {
        let found = super::loops(INDEXED);
        assert_eq!(found.len(), 2);
        assert!(
            found[0].starts_with("$L__BB0_5:") && found[0].ends_with("@%p6 bra \t$L__BB0_5;"),
            "{}",
            found[0]
        );
        assert!(
            found[1].starts_with("$L__BB0_8:") && found[1].ends_with("@%p8 bra \t$L__BB0_8;"),
            "{}",
            found[1]
        );
        // LLVM's two-jump latch: the back edge is the bra.uni.
        let two_jump = "$L__BB3_1:   // =>This Inner Loop Header: Depth=1\n\t@%p1 bra \t$L__BB3_2;\n\tbra.uni \t$L__BB3_1;\n$L__BB3_2:\n";
        assert_eq!(
            super::loops(two_jump),
            vec![
                "$L__BB3_1:   // =>This Inner Loop Header: Depth=1\n\t@%p1 bra \t$L__BB3_2;\n\tbra.uni \t$L__BB3_1;"
            ]
        );
    }

    #[test]
    fn collects_register_strides_not_immediates() {
        let found = super::loops(INDEXED);
        assert_eq!(
            super::add_strides(found[0]).into_iter().collect::<Vec<_>>(),
            ["%rd10", "%rd33", "%rd8"]
        );
        assert_eq!(
            super::add_strides(found[1]).into_iter().collect::<Vec<_>>(),
            ["%rd33"]
        );
    }
}
