//! `cargo xtask new-lesson` end to end, in a scratch copy of the repository
//! (its files as git lists them, tracked and untracked, ignored ones left
//! out) under `target/scaffold/repo`: names it must refuse are refused
//! with one line and leave every file as it was; then it scaffolds
//! `saxpy_demo`, and the copy builds `lab` and the lesson's CPU and GPU
//! tests, runs them (the GPU test reports itself skipped without a GPU) and
//! the tests that hold the lists of lessons against each other, the book
//! builds with the lesson's chapter stub, and `lab` lists the lesson.
//!
//! The scratch builds go to a target folder of their own,
//! `target/scaffold/target`, kept between runs, so a run after the first
//! rebuilds only the workspace's own crates. (The repository's own target
//! folder is not locked while `cargo test` runs its tests, so a nested
//! build there would not wait; but it would write the scratch copy's `lab`,
//! `xtask` and kernel PTX over the repository's own in `target/debug`.)

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

/// The lesson the test scaffolds.
const NAME: &str = "saxpy_demo";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

/// The scratch copy, its target folder and the lock the two share.
fn scaffold_dir() -> PathBuf {
    root().join("target").join("scaffold")
}

/// A command's stdout and stderr, for a failure message (the end of each).
fn shown(out: &Output) -> String {
    let tail = |bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes);
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(60)..].join("\n")
    };
    format!(
        "{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        tail(&out.stdout),
        tail(&out.stderr)
    )
}

/// Runs `cmd`, failing the test with its output unless it succeeds.
fn ok(mut cmd: Command, what: &str) -> Output {
    let start = Instant::now();
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: could not start: {e}"));
    assert!(out.status.success(), "{what} failed: {}", shown(&out));
    eprintln!("{what}: {:.1} s", start.elapsed().as_secs_f64());
    out
}

/// `git` in `dir`, with no repository settings from the environment.
fn git(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir);
    for var in ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"] {
        cmd.env_remove(var);
    }
    cmd
}

/// The cargo that runs this test, in `dir`, building into the scratch
/// target folder, offline and with the lock file as it is.
fn cargo(dir: &Path) -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| env!("CARGO").into()));
    cmd.current_dir(dir)
        .env("CARGO_TARGET_DIR", scaffold_dir().join("target"))
        .env("CARGO_TERM_COLOR", "never")
        .env_remove("CARGO_BUILD_TARGET_DIR");
    for var in ["CARGO_MAKEFLAGS", "MAKEFLAGS", "MFLAGS"] {
        cmd.env_remove(var);
    }
    cmd.args(["--offline", "--locked"]);
    cmd
}

/// Copies the repository's files as git lists them (tracked and untracked,
/// ignored ones left out) into `to`, fresh, and makes `to` a git repository
/// of one commit (host/build.rs watches `.git`).
fn copy_repository(to: &Path) {
    if to.exists() {
        std::fs::remove_dir_all(to).unwrap_or_else(|e| panic!("removing {}: {e}", to.display()));
    }
    let list = ok(
        {
            let mut cmd = git(&root());
            cmd.args([
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ]);
            cmd
        },
        "git ls-files",
    );
    let mut copied = 0;
    for rel in String::from_utf8_lossy(&list.stdout).split('\0') {
        let from = root().join(rel);
        // A tracked file deleted in the work tree, or a submodule.
        if rel.is_empty() || !from.is_file() {
            continue;
        }
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().expect("a file has a folder")).unwrap();
        std::fs::copy(&from, &dest).unwrap_or_else(|e| panic!("copying {rel}: {e}"));
        copied += 1;
    }
    assert!(copied > 100, "only {copied} files listed by git");
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &[
            "-c",
            "user.name=scaffold",
            "-c",
            "user.email=scaffold@localhost",
            "-c",
            "commit.gpgsign=false",
            "commit",
            "-q",
            "-m",
            "the repository before new-lesson",
        ],
    ] {
        let mut cmd = git(to);
        cmd.args(args);
        ok(cmd, &format!("git {}", args.join(" ")));
    }
}

/// Every file under `dir` (but `.git`), with its contents.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if !path.ends_with(".git") {
                    stack.push(path);
                }
            } else {
                let rel = path.strip_prefix(dir).unwrap().to_path_buf();
                files.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// The files that differ between two snapshots, for a message.
fn changed(a: &BTreeMap<PathBuf, Vec<u8>>, b: &BTreeMap<PathBuf, Vec<u8>>) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = a
        .iter()
        .filter(|(p, text)| b.get(*p) != Some(text))
        .map(|(p, _)| p.clone())
        .collect();
    paths.extend(b.keys().filter(|p| !a.contains_key(*p)).cloned());
    paths
}

/// `xtask new-lesson name` (the binary built from the scratch copy) in the
/// scratch copy.
fn new_lesson(xtask: &Path, repo: &Path, name: &str) -> Output {
    Command::new(xtask)
        .args(["new-lesson", name])
        .current_dir(repo)
        .output()
        .expect("the scratch copy's xtask starts")
}

/// Each name the command must refuse, and what its one line must say.
const REFUSED: &[(&str, &str)] = &[
    ("SaxpyDemo", "is not a lesson name"),
    ("saxpy-demo", "is not a lesson name"),
    ("harness", "is already a lesson"),
    ("type", "is a Rust keyword"),
    ("float", "CUDA C"),
    ("gpu", "host/src/gpu.rs exists"),
    ("docs", "tests/cpu_docs.rs exists"),
    ("vector_add", "defines a function or kernel `vector_add`"),
    (
        "dot_specialized_4",
        "specialize.rs defines a function or kernel",
    ),
];

/// Fails unless `xtask new-lesson name` exits non-zero with `says` and
/// "nothing was changed" in its error, and every file is as it was.
fn refused(xtask: &Path, repo: &Path, name: &str, says: &str) {
    let before = snapshot(repo);
    let out = new_lesson(xtask, repo, name);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains(says) && stderr.contains("nothing was changed"),
        "new-lesson {name}: want a refusal saying {says:?}: {}",
        shown(&out)
    );
    let after = snapshot(repo);
    assert!(
        before == after,
        "new-lesson {name} was refused but changed {:?}",
        changed(&before, &after)
    );
}

#[test]
fn new_lesson_refuses_bad_names_and_scaffolds_a_lesson_that_builds_and_runs_its_tests() {
    let started = Instant::now();
    std::fs::create_dir_all(scaffold_dir()).unwrap();
    // One scaffold at a time (two test runs at once would share the copy).
    let lock = std::fs::File::create(scaffold_dir().join(".lock")).unwrap();
    lock.lock().unwrap();
    let repo = scaffold_dir().join("repo");
    copy_repository(&repo);
    let xtask = scaffold_dir().join("target/debug/xtask");
    ok(
        {
            let mut cmd = cargo(&repo);
            cmd.args(["build", "--quiet", "--package", "xtask"]);
            cmd
        },
        "building the scratch copy's xtask",
    );

    // Refused names, and a missing anchor: one line each, nothing changed.
    for &(name, says) in REFUSED {
        refused(&xtask, &repo, name, says);
    }
    let summary = repo.join("book/src/SUMMARY.md");
    let text = std::fs::read_to_string(&summary).unwrap();
    std::fs::write(&summary, text.replace("# The lessons", "# Lessons")).unwrap();
    refused(&xtask, &repo, NAME, "no `# The lessons` heading");
    std::fs::write(&summary, text).unwrap();

    // The lesson: every file it names, the next commands, then refused as
    // an existing lesson.
    let before = snapshot(&repo);
    let out = new_lesson(&xtask, &repo, NAME);
    assert!(out.status.success(), "new-lesson {NAME}: {}", shown(&out));
    let printed = String::from_utf8_lossy(&out.stdout);
    let created = [
        format!("kernels-gpu/src/{NAME}.rs"),
        format!("host/src/{NAME}/{NAME}.cu"),
        format!("host/src/{NAME}/mod.rs"),
        format!("tests/cpu_{NAME}.rs"),
        format!("tests/gpu_{NAME}.rs"),
        format!("book/src/{NAME}.md"),
    ];
    let registered = [
        "kernels-gpu/src/lib.rs",
        "host/src/lib.rs",
        "host/src/lessons.rs",
        "xtask/src/lib.rs",
        "tests/Cargo.toml",
        "book/src/SUMMARY.md",
    ];
    let mut needed: Vec<String> = created.to_vec();
    needed.extend(registered.map(String::from));
    needed.extend([
        format!("cargo xtask run {NAME}"),
        format!("cargo xtask compare {NAME}"),
        "cargo xtask test".to_string(),
    ]);
    for line in &needed {
        assert!(
            printed.contains(line.as_str()),
            "the summary lacks {line}:\n{printed}"
        );
    }
    let after = snapshot(&repo);
    let mut want: Vec<PathBuf> = created
        .iter()
        .map(PathBuf::from)
        .chain(registered.map(PathBuf::from))
        .collect();
    want.sort();
    let mut got = changed(&before, &after);
    got.sort();
    assert_eq!(
        got, want,
        "new-lesson {NAME} changed other files than it says"
    );
    refused(&xtask, &repo, NAME, "is already a lesson");

    // It builds: lab, the lesson's tests and the tests that hold the lists
    // of lessons against each other; then they run.
    let lists = ["cpu_signatures", "cpu_profiles", "cpu_errors", "cpu_book"];
    let cpu = format!("cpu_{NAME}");
    let gpu = format!("gpu_{NAME}");
    let mut build = cargo(&repo);
    build.args(["build", "--package", "host", "--bin", "lab"]);
    let built = ok(build, "cargo build --bin lab");
    let mut tests = cargo(&repo);
    tests.args(["test", "--package", "lab-tests", "--no-run"]);
    for t in [cpu.as_str(), gpu.as_str()].into_iter().chain(lists) {
        tests.args(["--test", t]);
    }
    let compiled = ok(tests, "cargo test --no-run");
    // No compiler warning points into the lesson's files.
    for out in [&built, &compiled] {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let warned: Vec<&str> = stderr
            .lines()
            .filter(|l| l.trim_start().starts_with("-->") && l.contains(NAME))
            .collect();
        assert!(
            warned.is_empty(),
            "warnings in the scaffolded lesson:\n{stderr}"
        );
    }
    let mut run = cargo(&repo);
    run.args(["test", "--package", "lab-tests"]);
    for t in [cpu.as_str(), gpu.as_str(), "cpu_signatures", "cpu_profiles"] {
        run.args(["--test", t]);
    }
    let ran = ok(run, "the lesson's tests, cpu_signatures and cpu_profiles");
    let stdout = String::from_utf8_lossy(&ran.stdout);
    for needed in [
        "test the_check_fails_an_index_off_by_one ... ok".to_string(),
        format!("test {NAME}::launch_signatures_match_the_ptx"),
        "test every_lesson_fits_every_gpu_and_streams_from_dram ... ok".to_string(),
    ] {
        assert!(stdout.contains(&needed), "no {needed:?} in:\n{stdout}");
    }
    let mut order = cargo(&repo);
    order.args([
        "test",
        "--package",
        "lab-tests",
        "--test",
        "cpu_errors",
        "xtask_knows_every_lesson_lab_runs_in_its_order",
    ]);
    let ran = ok(order, "cpu_errors' lesson order");
    assert!(
        String::from_utf8_lossy(&ran.stdout).contains("1 passed"),
        "{}",
        shown(&ran)
    );
    // The chapter stub is on the book's template, the book builds with it,
    // and the book's run still holds every lesson it recorded (the new one
    // joins it when a run is recorded again): all of cpu_book passes.
    let mut chapter = cargo(&repo);
    chapter.args(["test", "--package", "lab-tests", "--test", "cpu_book"]);
    let ran = ok(chapter, "cpu_book");
    let out = String::from_utf8_lossy(&ran.stdout);
    assert!(
        out.contains(" 0 failed")
            && out.contains("every_lesson_has_a_chapter_on_the_template ... ok"),
        "{}",
        shown(&ran)
    );

    // lab lists it, with what it teaches.
    let lab = scaffold_dir().join("target/debug/lab");
    let help = Command::new(&lab).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.lines()
            .any(|l| l.trim_start().starts_with(&format!("- {NAME}: "))),
        "lab --help does not list {NAME}:\n{help}"
    );
    eprintln!("the whole test: {:.1} s", started.elapsed().as_secs_f64());
}
