//! The `lab` binary's answers to bad input: one clear line on stderr and a
//! non-zero exit, never a panic or a backtrace.

use std::process::Command;

fn lab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(args)
        .output()
        .expect("lab runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_unknown_lesson_lists_the_valid_ones() {
    let (code, stdout, stderr) = lab(&["no-such-lesson"]);
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    // Lessons are added by several branches at once: the list is checked by
    // its start and its shape, and each lesson's presence by its own line.
    assert!(
        stderr.starts_with(
            "error: unknown lesson `no-such-lesson`; the lessons are: roofline, fusion, "
        ),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    for lesson in [
        "vectorize",
        "unroll",
        "fuse",
        "specialize",
        "harness",
        "softmax",
    ] {
        assert!(
            stderr.contains(&format!(", {lesson},")) || stderr.ends_with(&format!(", {lesson}\n")),
            "{stderr}"
        );
    }
}

#[test]
fn an_unknown_flag_lists_the_valid_ones() {
    let (code, _, stderr) = lab(&["roofline", "--fast"]);
    assert_eq!(code, 2);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(
            "error: unknown flag `--fast`; the flags are: --json, --profile, --compare"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("--device"), "{stderr}");
}

#[test]
fn a_missing_lesson_lists_the_lessons() {
    let (code, _, stderr) = lab(&[]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with(
            "error: which lesson? `lab <LESSON>`; the lessons are: roofline, fusion, "
        ),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn json_and_profile_are_exclusive() {
    let (code, _, stderr) = lab(&["roofline", "--json", "--profile"]);
    assert_eq!(code, 2);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("cannot be used with"), "{stderr}");
}

#[test]
fn asm_of_an_unknown_kernel_names_the_kernels() {
    let (code, _, stderr) = lab(&["roofline", "--asm", "no_such_kernel"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.starts_with("error: no kernel named `no_such_kernel`; the kernels are: "),
        "{stderr}"
    );
    assert!(stderr.contains("vector_add"), "{stderr}");
}

/// A ceiling kernel has no CUDA C twin: asm shows its Rust side alone, and
/// says so, instead of refusing the name.
#[test]
fn asm_of_a_kernel_without_a_twin_shows_its_rust_side() {
    // asm compiles the lesson's twins with NVRTC (`cargo xtask test`
    // provides one); no GPU is needed.
    if let Err(e) = host::nvrtc::library() {
        assert!(std::env::var_os("CI").is_none(), "CI must run this: {e}");
        eprintln!("skipped: {e}");
        return;
    }
    let (code, stdout, stderr) = lab(&["roofline", "--asm", "mma_peak"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.starts_with("mma_peak has no CUDA C twin"),
        "{stdout}"
    );
    assert!(
        stdout.contains("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
        "{stdout}"
    );
}

#[test]
fn without_a_driver_the_lesson_says_so_in_one_line() {
    // SAFETY: only tries to dlopen the driver library.
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        eprintln!("skipped: this machine has an NVIDIA driver");
        return;
    }
    for args in [
        &["roofline"][..],
        &["roofline", "--compare"],
        &["roofline", "--quick"],
        &["fusion"],
        &["fusion", "--compare"],
    ] {
        let (code, stdout, stderr) = lab(args);
        assert_eq!(code, 4, "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{stdout}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("error: no NVIDIA driver found"),
            "{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn a_flag_a_lesson_does_not_take_is_refused_naming_the_lessons_that_do() {
    let (code, _, stderr) = lab(&["fusion", "--plot", "x.svg"]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        "error: --plot is not available for the fusion lesson; it is for: roofline\n"
    );
    // Every lesson, every optional flag it lacks: one line, exit 2, before
    // any GPU work (this machine has none, which would be exit 4).
    type Allows = fn(&host::lesson::Capabilities) -> bool;
    let flags: [(&[&str], Allows); 2] = [
        (&["--plot", "x.svg"], |c| c.plot),
        (&["--graphs-dir", "x"], |c| c.graphs_dir),
    ];
    let mut refused = 0;
    for lesson in &host::lessons::ALL {
        for (flag, allowed) in flags {
            if allowed(&lesson.capabilities) {
                continue;
            }
            let args: Vec<&str> = [lesson.name].iter().chain(flag).copied().collect();
            let (code, _, stderr) = lab(&args);
            assert_eq!(code, 2, "{args:?}: {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
            let name = flag[0].trim_start_matches("--");
            assert!(
                stderr.contains("is not available for the") && stderr.contains(lesson.name),
                "{args:?} ({name}): {stderr}"
            );
            refused += 1;
        }
    }
    assert!(refused >= 18, "{refused} refusals");
}

#[test]
fn every_lesson_takes_profile_and_the_counters() {
    // --ncu-csv is read before any GPU work: a missing file is a file error
    // (9) for every lesson, never a refusal (2).
    let missing = std::env::temp_dir().join(format!("lab-no-such-{}.csv", std::process::id()));
    for lesson in &host::lessons::ALL {
        let (code, _, stderr) = lab(&[lesson.name, "--ncu-csv", missing.to_str().unwrap()]);
        assert_eq!(code, 9, "{}: {stderr}", lesson.name);
        assert!(stderr.contains("--ncu-csv cannot read it"), "{stderr}");
    }
    // SAFETY: only tries to dlopen the driver library.
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        eprintln!("skipped the --profile half: this machine has an NVIDIA driver");
        return;
    }
    for lesson in &host::lessons::ALL {
        let (code, _, stderr) = lab(&[lesson.name, "--profile"]);
        assert_eq!(code, 4, "{}: {stderr}", lesson.name);
        assert!(
            stderr.starts_with("error: no NVIDIA driver found"),
            "{stderr}"
        );
    }
}

#[test]
fn measurement_flags_that_cannot_combine_are_refused() {
    for args in [
        &["roofline", "--quick", "--record"][..],
        &["roofline", "--quick", "--baseline", "last"],
        &["roofline", "--quick", "--ncu"],
        &["roofline", "--record", "--compare"],
        &["roofline", "--ncu", "--ncu-csv", "x.csv"],
        &["roofline", "--profile", "--plot", "x.svg"],
    ] {
        let (code, _, stderr) = lab(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains("cannot be used with"), "{args:?}: {stderr}");
    }
}

#[test]
fn graphs_dir_is_the_softmax_lessons_alone() {
    let (code, _, stderr) = lab(&["vectorize", "--graphs-dir", "x"]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr,
        "error: --graphs-dir is not available for the vectorize lesson; it is for: softmax\n"
    );
}

#[test]
fn each_failure_exits_under_its_own_kind() {
    // Not an architecture: a usage error (2), before NVRTC is needed.
    let (code, _, stderr) = lab(&["roofline", "--asm", "copy_coalesced", "--arch", "bogus"]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr,
        "error: --arch \"bogus\" is not an architecture like sm_90\n"
    );
    // A folder that cannot be made: a file error (9), before any GPU work
    // (this machine has none, which would be exit 4).
    let blocker = std::env::temp_dir().join(format!("lab-cli-file-{}", std::process::id()));
    std::fs::write(&blocker, "a file where a folder is wanted").unwrap();
    let below = blocker.join("graphs");
    let (code, _, stderr) = lab(&["softmax", "--graphs-dir", below.to_str().unwrap()]);
    assert_eq!(code, 9, "{stderr}");
    assert!(stderr.contains("cannot create the folder"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let (code, _, stderr) = lab(&[
        "vectorize",
        "--record",
        "--results",
        below.to_str().unwrap(),
    ]);
    assert_eq!(code, 9, "{stderr}");
    std::fs::remove_file(&blocker).ok();
}

#[test]
fn asm_works_with_nvrtc_named_libnvrtc_so_13_alone() {
    // The NVRTC this test process loads (`cargo xtask test` provides one),
    // linked into a folder under CUDA 13's name only, as a CUDA 13
    // runtime-only install ships it; no GPU is needed.
    let nvrtc = match host::nvrtc::library() {
        Ok(nvrtc) => nvrtc,
        Err(e) => {
            assert!(std::env::var_os("CI").is_none(), "CI must run this: {e}");
            eprintln!("skipped: {e}");
            return;
        }
    };
    let Some(real) = std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .map(std::path::PathBuf::from)
        .find(|p| p.file_name() == nvrtc.path().file_name())
    else {
        eprintln!("skipped: {:?} is not in /proc/self/maps", nvrtc.path());
        return;
    };
    let dir = std::env::temp_dir().join(format!("lab-cli-nvrtc13-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("libnvrtc.so.13");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(["roofline", "--asm", "copy_coalesced", "--arch", "sm_90"])
        .env("LD_LIBRARY_PATH", &dir)
        .output()
        .expect("lab runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("CUDA C PTX (NVRTC, sm_90)"), "{stdout}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn every_file_flag_is_checked_before_a_gpu_is_looked_for() {
    // A regular file where a folder is wanted: nothing can be made below it
    // (whoever runs the test, root included). This machine's lack of a GPU
    // would be exit 4; each bad path must be exit 9 first, in one line.
    let blocker = std::env::temp_dir().join(format!("lab-cli-files-{}", std::process::id()));
    std::fs::write(&blocker, "a file where a folder is wanted").unwrap();
    let below = blocker.join("sub");
    let below = below.to_str().unwrap();
    // "Not a directory (os error 20)", in the C library's words.
    let enotdir = std::io::Error::from_raw_os_error(20).to_string();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["vectorize", "--record", "--results", below],
            format!(
                "error: {below}: cannot create the folder --record writes the run's rows into: {enotdir}; \
                 choose another with --results DIR\n"
            ),
        ),
        (
            vec!["roofline", "--ncu", "--results", below],
            format!(
                "error: {below}: cannot create the folder --ncu saves its CSV into: {enotdir}; \
                 choose another with --results DIR\n"
            ),
        ),
        (
            vec!["softmax", "--graphs-dir", below],
            format!(
                "error: {below}: cannot create the folder --graphs-dir writes the DOT files into: {enotdir}; \
                 choose another --graphs-dir\n"
            ),
        ),
        (
            vec!["roofline", "--ncu-csv", below],
            format!("error: {below}: --ncu-csv cannot read it: {enotdir}\n"),
        ),
    ];
    for (args, want) in &cases {
        let (code, stdout, stderr) = lab(args);
        assert_eq!(code, 9, "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        assert_eq!(&stderr, want, "{args:?}");
    }
    // --plot's folder cannot be made below the file either.
    let chart = format!("{below}/roofline.svg");
    let (code, _, stderr) = lab(&["roofline", "--plot", &chart]);
    assert_eq!(code, 9, "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "error: {below}: --plot cannot write the chart here: cannot create the folder: "
        )),
        "{stderr}"
    );
    assert!(stderr.ends_with("; choose another FILE.svg\n"), "{stderr}");
    std::fs::remove_file(&blocker).ok();

    // Writable paths pass the check and leave nothing behind: the run then
    // stops where it looks for the GPU (exit 4 on a machine without one).
    // SAFETY: only tries to dlopen the driver library.
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        return;
    }
    let dir = std::env::temp_dir().join(format!("lab-cli-files-ok-{}", std::process::id()));
    let results = dir.join("results");
    let chart = dir.join("charts/roofline.svg");
    let (code, _, stderr) = lab(&[
        "roofline",
        "--record",
        "--results",
        results.to_str().unwrap(),
        "--plot",
        chart.to_str().unwrap(),
    ]);
    assert_eq!(code, 4, "{stderr}");
    assert_eq!(
        std::fs::read_dir(&results).unwrap().count(),
        0,
        "a probe was left"
    );
    assert!(!chart.exists(), "the chart's trial file was left");
    std::fs::remove_dir_all(&dir).ok();
}
