//! `--baseline` replayed on recorded runs: verdicts must hold across
//! processes. The runs here are pairs of processes on one H200 whose
//! kernels did not change between them; a verdict of FAST or SLOW between
//! any two would be a false one. The run-to-run floor is recomputed from
//! the same files, so the figure in `host::record` cannot drift from them.

use std::path::{Path, PathBuf};

use host::record::{
    MEASURED_IN, MEASURED_RUN_TO_RUN_PCT, RUN_TO_RUN_FLOOR_PCT, Run, Verdict, baseline, changes,
    comparable, floor_pct, load_runs, table,
};

/// A file under docs/results.
fn results(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../docs/results")
        .join(path)
}

/// The only run in a recorded file.
fn only_run(path: &str) -> Run {
    let mut runs = load_runs(&results(path)).unwrap();
    assert_eq!(runs.len(), 1, "{path}");
    runs.remove(0)
}

const BEFORE: &str = "roofline-h200-2026-11-29.jsonl";
const AFTER: &str = "recorded-h200-2026-11-29.jsonl";
const RERUN: &str = "rerun-all-lessons-2026-11-29T20-07Z/roofline.jsonl";

/// The roofline's 13 timed rows, in the order the runs report them.
const ROOFLINE_ROWS: [&str; 13] = [
    "copy_coalesced",
    "fma_peak",
    "cuMemcpyDtoDAsync",
    "vector_add",
    "vector_add_permuted",
    "transpose_naive",
    "transpose_tiled",
    "matmul_naive",
    "matmul_tiled",
    "reduce_sequential_addressing",
    "heat_step_global",
    "heat_step_tiled",
    "polynomial_horner",
];

#[test]
fn the_roofline_runs_of_18_04_and_18_19_get_no_verdict_either_way() {
    // The pair: the batch-level Welch test called six of these rows
    // faster or slower (heat_step_global +1.95% at p 2e-15 among them).
    for (base_file, now_file) in [(BEFORE, AFTER), (AFTER, BEFORE)] {
        let base = baseline(results(base_file).to_str().unwrap(), Path::new("unused")).unwrap();
        assert_eq!(base.len(), 1, "one run in {base_file}");
        let now = only_run(now_file);
        assert_eq!(now.context["lesson"], "roofline");
        // Measured the same way; the records predate the GPU's UUID, its PCI
        // bus id and the module loading mode, which is said, not refused.
        let caveats = comparable(&base, &now.context).unwrap();
        let date = &base[0].date;
        assert_eq!(
            caveats,
            [
                format!(
                    "cannot confirm the same GPU: the baseline run of {date} and this run recorded no GPU UUID or PCI bus id"
                ),
                format!(
                    "cannot confirm the same module loading mode: the baseline run of {date} and this run recorded none"
                ),
            ]
        );
        let (compared, missing) = changes(&base, &now);
        assert!(missing.is_empty(), "{missing:?}");
        let symbols: Vec<&str> = compared.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(symbols, ROOFLINE_ROWS);
        for (symbol, change) in &compared {
            let c = change.as_ref().unwrap();
            assert_eq!(c.verdict, Verdict::Same, "{symbol}: {c:?}");
            assert!(c.difference_pct < 2.5, "{symbol}: {c:?}");
            // Each row's floor is the 3%, but matmul_naive's: its batches at
            // 18:19 spread 7.04% (a slow batch), so that is its floor.
            if symbol == "matmul_naive" {
                assert!((c.floor_pct - 7.037).abs() < 0.001, "{}", c.floor_pct);
            } else {
                assert_eq!(c.floor_pct, RUN_TO_RUN_FLOOR_PCT, "{symbol}");
            }
        }
        // The widest of them: vector_add_permuted, 2.43% faster at 18:19.
        let (_, permuted) = &compared[4];
        let permuted = permuted.as_ref().unwrap();
        let want = if base_file == BEFORE { -2.431 } else { 2.492 };
        assert!(
            (permuted.change_pct - want).abs() < 0.001,
            "{}",
            permuted.change_pct
        );
        assert!((permuted.difference_pct - 2.492).abs() < 0.001);
        let text = table(&base, &now, &caveats);
        assert!(text.contains("This comparison: 13 SAME.\n"), "{text}");
        assert!(
            !text.contains("| FAST ") && !text.contains("| SLOW "),
            "{text}"
        );
        assert!(text.contains("Note: cannot confirm the same GPU"), "{text}");
    }
}

/// Every set of recorded runs in docs/results of the same kernels on the
/// same H200, each run a process of its own: the 2026-11-29 roofline runs
/// (the roofline's kernels differ between those builds by formatting
/// only), and on 2026-11-30 each lesson recorded, then run again, by one
/// build (0ab6f4b), with fusion run twice more by f6c29b2, whose kernels
/// are 0ab6f4b's.
fn same_kernel_sets() -> Vec<Vec<String>> {
    let mut sets = vec![vec![
        BEFORE.to_string(),
        AFTER.to_string(),
        RERUN.to_string(),
    ]];
    for lesson in [
        "bandwidth",
        "conv2d",
        "fuse",
        "harness",
        "roofline",
        "softmax",
        "specialize",
        "unroll",
        "vectorize",
    ] {
        sets.push(vec![
            format!("one-layer-h200-2026-11-30/recorded/nvidia-h200/{lesson}.jsonl"),
            format!("one-layer-h200-2026-11-30/{lesson}.jsonl"),
        ]);
    }
    sets.push(
        [
            "one-layer-h200-2026-11-30/recorded/nvidia-h200/fusion.jsonl",
            "one-layer-h200-2026-11-30/fusion.jsonl",
            "one-layer-h200-2026-11-30/final-f6c29b2/recorded/nvidia-h200/fusion.jsonl",
            "one-layer-h200-2026-11-30/final-f6c29b2/fusion.jsonl",
        ]
        .map(String::from)
        .to_vec(),
    );
    sets
}

#[test]
fn no_pair_of_processes_of_unchanged_kernels_gets_a_verdict() {
    let mut compared = 0;
    let mut same = 0;
    for set in same_kernel_sets() {
        let runs: Vec<Run> = set.iter().map(|p| only_run(p)).collect();
        for (i, now) in runs.iter().enumerate() {
            // Each run against each other one, and against all the others
            // together (a baseline of several runs).
            let others: Vec<Run> = runs
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, r)| r.clone())
                .collect();
            let mut baselines: Vec<Vec<Run>> = others.iter().map(|r| vec![r.clone()]).collect();
            if others.len() > 1 {
                baselines.push(others);
            }
            for base in baselines {
                comparable(&base, &now.context).unwrap_or_else(|e| panic!("{}: {e}", set[i]));
                for (symbol, change) in changes(&base, now).0 {
                    let c = change.unwrap();
                    compared += 1;
                    same += usize::from(c.verdict == Verdict::Same);
                    assert!(
                        !matches!(c.verdict, Verdict::Fast | Verdict::Slow),
                        "{} {symbol} against {} run(s): {c:?}",
                        set[i],
                        base.len()
                    );
                }
            }
        }
    }
    // Every comparison made, and how many of them are SAME: the other 12
    // are host-clocked rows (conv2d's CPU rows and harness's), AMBIGUOUS.
    assert_eq!((compared, same), (603, 591));
}

#[test]
fn the_floor_is_the_widest_move_measured_between_processes() {
    // Rows timed by CUDA events whose batches sit within the floor in both
    // runs (a wider row takes its own spread as its floor).
    let mut widest = (0.0_f64, String::new());
    for set in same_kernel_sets() {
        let runs: Vec<(&str, Run)> = set.iter().map(|p| (p.as_str(), only_run(p))).collect();
        for (i, (file_a, a)) in runs.iter().enumerate() {
            for (file_b, b) in &runs[i + 1..] {
                for (symbol, sa) in &a.samples {
                    let Some(sb) = b.samples.get(symbol) else {
                        continue;
                    };
                    let host = a.host_clocked.contains(symbol) || b.host_clocked.contains(symbol);
                    if host || floor_pct(&[sa, sb]) > RUN_TO_RUN_FLOOR_PCT {
                        continue;
                    }
                    let c = host::record::compare(&[sa], &[sb], false).unwrap();
                    if c.difference_pct > widest.0 {
                        widest = (
                            c.difference_pct,
                            format!("{symbol}: {file_a} against {file_b}"),
                        );
                    }
                }
            }
        }
    }
    assert!(
        (widest.0 - MEASURED_RUN_TO_RUN_PCT).abs() < 0.005,
        "{widest:?}"
    );
    assert_eq!(
        widest.1,
        format!("vector_add_permuted: {BEFORE} against {RERUN}")
    );
    assert_eq!(
        MEASURED_IN,
        format!("docs/results/{BEFORE} against docs/results/{RERUN}")
    );
}

#[test]
fn every_recorded_file_still_loads() {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                found.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&results(""), &mut files);
    assert!(files.len() >= 40, "{}", files.len());
    for file in files {
        load_runs(&file).unwrap_or_else(|e| panic!("{e}"));
    }
}
