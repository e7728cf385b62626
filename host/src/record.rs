//! Recorded runs and the answer to "did my change help?": a run's JSON rows
//! appended to a results file keyed by GPU and lesson, and a comparison of
//! this run with a baseline run, kernel by kernel, with a verdict computed
//! from the two distributions of per-launch times (Welch's t-test, through
//! statrs), not by eye.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};
use statrs::statistics::{Data, Distribution, OrderStatistics};

/// `results/<gpu>/<lesson>.jsonl` under `dir`, the GPU's name made safe for
/// a file name (`NVIDIA H200` -> `nvidia-h200`).
pub fn results_file(dir: &Path, gpu: &str, lesson: &str) -> PathBuf {
    let slug: String = gpu
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    dir.join(slug).join(format!("{lesson}.jsonl"))
}

/// Appends `lines` (one JSON object each) to `path`, creating its folder.
pub fn append(path: &Path, lines: &[serde_json::Value]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    for line in lines {
        writeln!(file, "{line}")?;
    }
    Ok(())
}

/// One recorded run: its date and each kernel's per-launch samples (ms),
/// keyed by the row's `symbol`.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The run's start, as its context recorded it.
    pub date: String,
    /// What must match for two runs to be compared: the GPU, the sizes,
    /// the timing plan and whether L2 was flushed, from the context.
    pub setup: serde_json::Value,
    /// `symbol` -> per-launch samples, ms.
    pub samples: BTreeMap<String, Vec<f64>>,
}

/// The part of a row's context two runs must share to be compared.
pub fn setup_of(row: &serde_json::Value) -> serde_json::Value {
    let c = &row["context"];
    serde_json::json!({
        "gpu": c["gpu"], "sizes": c["sizes"], "timing": c["timing"], "l2_flushed": c["l2_flushed"],
    })
}

/// Fails, naming what differs, unless `now`'s rows were measured with the
/// baseline's GPU, sizes, timing plan and L2 treatment: a comparison across
/// those would read a change of setup as a change of speed.
pub fn comparable(base: &Run, now: &[serde_json::Value]) -> Result<(), String> {
    let Some(first) = now.iter().find(|r| r["samples_ms"].is_array()) else {
        return Ok(());
    };
    let setup = setup_of(first);
    let differing: Vec<&str> = ["gpu", "sizes", "timing", "l2_flushed"]
        .into_iter()
        .filter(|k| setup[*k] != base.setup[*k])
        .collect();
    if differing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the baseline run of {} was measured with a different {}: a comparison would read that as a change of speed",
            base.date,
            differing.join(", ")
        ))
    }
}

/// Reads the runs in a results file (or any file of JSON rows), oldest
/// first, grouping rows by their context's date. Rows without `symbol` and
/// `samples_ms` (the ridge point) are skipped.
///
/// # Errors
/// The file cannot be read, or a line is not JSON (its line number says
/// which).
pub fn load_runs(path: &Path) -> Result<Vec<Run>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut runs: Vec<Run> = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let row: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| format!("{} line {}: {e}", path.display(), i + 1))?;
        let date = row["context"]["date"].as_str().unwrap_or("").to_string();
        let (Some(symbol), Some(samples)) = (row["symbol"].as_str(), row["samples_ms"].as_array())
        else {
            continue;
        };
        let samples: Vec<f64> = samples
            .iter()
            .filter_map(serde_json::Value::as_f64)
            .collect();
        if runs.last().is_none_or(|r| r.date != date) {
            runs.push(Run {
                date,
                setup: setup_of(&row),
                samples: BTreeMap::new(),
            });
        }
        runs.last_mut()
            .expect("pushed above")
            .samples
            .insert(symbol.to_string(), samples);
    }
    Ok(runs)
}

/// The per-launch samples of each row of one run's JSON lines that has a
/// `symbol` and `samples_ms`, keyed by symbol, with the symbols in row
/// order.
pub fn samples_of(lines: &[serde_json::Value]) -> (BTreeMap<String, Vec<f64>>, Vec<String>) {
    let mut map = BTreeMap::new();
    let mut order = Vec::new();
    for row in lines {
        if let (Some(symbol), Some(samples)) =
            (row["symbol"].as_str(), row["samples_ms"].as_array())
        {
            map.insert(
                symbol.to_string(),
                samples
                    .iter()
                    .filter_map(serde_json::Value::as_f64)
                    .collect(),
            );
            order.push(symbol.to_string());
        }
    }
    (map, order)
}

/// Whether a kernel got faster, slower, or neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Verdict {
    /// Faster, and the difference is beyond the noise.
    Faster,
    /// Slower, and the difference is beyond the noise.
    Slower,
    /// The difference is within the noise.
    NoChange,
}

/// How one kernel's time moved between a baseline and now.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// The baseline's median, ms.
    pub base_ms: f64,
    /// This run's median, ms.
    pub now_ms: f64,
    /// (now - base) / base, percent.
    pub change_pct: f64,
    /// Welch's two-sided p-value for equal means.
    pub p_value: f64,
    /// The verdict: p < [`SIGNIFICANCE`] and a change of at least
    /// [`MIN_CHANGE_PCT`], else no change.
    pub verdict: Verdict,
}

/// The p-value under which a difference is called real: 1%.
pub const SIGNIFICANCE: f64 = 0.01;

/// The smallest change in the median (percent) a verdict reports. Within
/// one run the samples are so tight that Welch's test calls a 0.1% shift
/// real, but between two runs of the same binary on an H200 (2026-11-29,
/// docs/results/baseline-h200-2026-11-29.txt) medians moved by up to 0.78%
/// with p < 0.01: run-to-run variation the within-run samples do not see.
pub const MIN_CHANGE_PCT: f64 = 1.0;

/// Compares two samples of per-launch times with Welch's t-test (unequal
/// variances; the Welch-Satterthwaite degrees of freedom; the Student t
/// distribution from statrs). A verdict other than `NoChange` needs both
/// p < [`SIGNIFICANCE`] and a median change of at least [`MIN_CHANGE_PCT`].
/// Fewer than two samples on either side give p = 1.
pub fn compare(base: &[f64], now: &[f64]) -> Change {
    let median = |x: &[f64]| Data::new(x.to_vec()).median();
    let (base_ms, now_ms) = (median(base), median(now));
    let change_pct = 100.0 * (now_ms - base_ms) / base_ms;
    let p_value = welch_p(base, now);
    let verdict = if p_value < SIGNIFICANCE && change_pct.abs() >= MIN_CHANGE_PCT {
        if now_ms < base_ms {
            Verdict::Faster
        } else {
            Verdict::Slower
        }
    } else {
        Verdict::NoChange
    };
    Change {
        base_ms,
        now_ms,
        change_pct,
        p_value,
        verdict,
    }
}

/// Welch's two-sided p-value for the means of `a` and `b`.
fn welch_p(a: &[f64], b: &[f64]) -> f64 {
    if a.len() < 2 || b.len() < 2 {
        return 1.0;
    }
    let stats = |x: &[f64]| {
        let d = Data::new(x.to_vec());
        (
            d.mean().unwrap_or(0.0),
            d.variance().unwrap_or(0.0),
            x.len() as f64,
        )
    };
    let (ma, va, na) = stats(a);
    let (mb, vb, nb) = stats(b);
    let (sa, sb) = (va / na, vb / nb);
    let se2 = sa + sb;
    if se2 == 0.0 {
        return if ma == mb { 1.0 } else { 0.0 };
    }
    let t = (ma - mb) / se2.sqrt();
    let df = se2 * se2 / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0));
    match StudentsT::new(0.0, 1.0, df) {
        Ok(dist) => 2.0 * (1.0 - dist.cdf(t.abs())),
        Err(_) => 1.0,
    }
}

/// The baseline run `spec` names: `last` (the newest run in `recorded`,
/// this GPU's and lesson's results file) or a path to a file of rows (its
/// newest run).
///
/// # Errors
/// No such file, or no run in it.
pub fn baseline(spec: &str, recorded: &Path) -> Result<Run, String> {
    let path = if spec == "last" {
        recorded.to_path_buf()
    } else {
        PathBuf::from(spec)
    };
    if spec == "last" && !path.exists() {
        return Err(format!(
            "no recorded run to compare with yet ({} does not exist): record one with --record first",
            path.display()
        ));
    }
    load_runs(&path)?
        .pop()
        .ok_or_else(|| format!("{} holds no recorded run to compare with", path.display()))
}

/// The comparison table: per kernel the baseline and current medians, the
/// change, the p-value and the verdict.
pub fn table(base: &Run, now: &BTreeMap<String, Vec<f64>>, order: &[String]) -> String {
    let mut t = crate::report::table(&[
        "kernel",
        "baseline ms",
        "now ms",
        "change %",
        "p",
        "verdict",
    ]);
    for symbol in order {
        let (Some(b), Some(n)) = (base.samples.get(symbol), now.get(symbol)) else {
            continue;
        };
        let c = compare(b, n);
        t.add_row(vec![
            symbol.to_string(),
            format!("{:.4}", c.base_ms),
            format!("{:.4}", c.now_ms),
            format!("{:+.2}", c.change_pct),
            format!("{:.3}", c.p_value),
            format!("{:?}", c.verdict),
        ]);
    }
    format!(
        "Against the baseline run of {} (Welch's t-test on the per-launch samples; a verdict needs p < {SIGNIFICANCE} \
         and a change of at least {MIN_CHANGE_PCT}% in the median, the run-to-run floor):\n{t}\n",
        base.date
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_on_synthetic_distributions() {
        let base = [1.00, 1.01, 0.99, 1.00, 1.02, 0.98, 1.00];
        // 10% faster with the same spread: clearly faster.
        let fast: Vec<f64> = base.iter().map(|x| x * 0.9).collect();
        let c = compare(&base, &fast);
        assert_eq!(c.verdict, Verdict::Faster);
        assert!((c.change_pct + 10.0).abs() < 1e-9, "{}", c.change_pct);
        assert!(c.p_value < 1e-6);
        // 10% slower: slower.
        let slow: Vec<f64> = base.iter().map(|x| x * 1.1).collect();
        assert_eq!(compare(&base, &slow).verdict, Verdict::Slower);
        // The same distribution reordered: no change, p = 1.
        let same = [1.00, 1.00, 0.98, 1.02, 0.99, 1.01, 1.00];
        let c = compare(&base, &same);
        assert_eq!(c.verdict, Verdict::NoChange);
        assert!(c.p_value > 0.99);
        // A 0.5% shift inside a 2% spread: no change.
        let shifted: Vec<f64> = base.iter().map(|x| x * 1.005).collect();
        assert_eq!(compare(&base, &shifted).verdict, Verdict::NoChange);
        // A 0.5% shift with almost no spread is significant but below the
        // run-to-run floor: no change. The same at 3% is a verdict.
        let tight = [1.0, 1.0001, 0.9999, 1.0, 1.0002, 0.9998, 1.0];
        let tight_slow: Vec<f64> = tight.iter().map(|x| x * 1.005).collect();
        let c = compare(&tight, &tight_slow);
        assert!(c.p_value < SIGNIFICANCE);
        assert_eq!(c.verdict, Verdict::NoChange);
        let tight_slower: Vec<f64> = tight.iter().map(|x| x * 1.03).collect();
        assert_eq!(compare(&tight, &tight_slower).verdict, Verdict::Slower);
        // One sample a side cannot support a verdict.
        assert_eq!(compare(&[1.0], &[2.0]).verdict, Verdict::NoChange);
    }

    #[test]
    fn welch_with_unequal_sizes_and_variances() {
        // a: n 4, mean 2.5, var 5/3; b: n 3, mean 5, var 13. t = -1.14708,
        // Welch-Satterthwaite df = 2.38839, two-sided p = 0.353209 (computed
        // with mpmath's regularised incomplete beta). The pooled-variance
        // test would give p = 0.2457.
        let p = welch_p(&[1.0, 2.0, 3.0, 4.0], &[2.0, 4.0, 9.0]);
        assert!((p - 0.353209).abs() < 5e-6, "{p}");
        // Symmetric in its arguments.
        assert!((welch_p(&[2.0, 4.0, 9.0], &[1.0, 2.0, 3.0, 4.0]) - p).abs() < 1e-12);
    }

    #[test]
    fn runs_measured_differently_are_not_compared() {
        let row = |flushed: bool| serde_json::json!({"symbol": "k", "samples_ms": [1.0, 1.0], "context": {"date": "d", "gpu": "G", "sizes": {"n": 1}, "timing": {"batches": 7}, "l2_flushed": flushed}});
        let base = Run {
            date: "d".into(),
            setup: setup_of(&row(false)),
            samples: BTreeMap::new(),
        };
        assert!(comparable(&base, &[row(false)]).is_ok());
        let err = comparable(&base, &[row(true)]).unwrap_err();
        assert!(err.contains("different l2_flushed"), "{err}");
    }

    #[test]
    fn welch_matches_a_hand_computed_case() {
        // a: mean 2, var 1 (n 3); b: mean 5, var 1 (n 3). t = -3 / sqrt(2/3)
        // = -3.674, df = 4; two-sided p = 0.0213 (Student t tables).
        let p = welch_p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]);
        assert!((p - 0.0213).abs() < 5e-4, "{p}");
    }

    #[test]
    fn runs_group_by_date_and_the_newest_is_the_baseline() {
        let dir = std::env::temp_dir().join(format!("lab-record-{}", std::process::id()));
        let file = results_file(&dir, "NVIDIA H200", "roofline");
        assert!(
            file.ends_with("nvidia-h200/roofline.jsonl"),
            "{}",
            file.display()
        );
        let row = |date: &str, ms: f64| serde_json::json!({"symbol": "vector_add", "samples_ms": [ms, ms], "context": {"date": date}});
        append(
            &file,
            &[
                row("d1", 1.0),
                serde_json::json!({"variant": "ridge-point", "context": {"date": "d1"}}),
            ],
        )
        .unwrap();
        append(&file, &[row("d2", 2.0)]).unwrap();
        let runs = load_runs(&file).unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].samples["vector_add"], [1.0, 1.0]);
        let last = baseline("last", &file).unwrap();
        assert_eq!(last.date, "d2");
        std::fs::remove_dir_all(&dir).ok();
        assert!(
            baseline("last", &file)
                .unwrap_err()
                .contains("record one with --record first")
        );
    }
}
