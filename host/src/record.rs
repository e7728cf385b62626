//! Recorded runs and the answer to "did my change help?": a run's JSON rows
//! appended to a results file keyed by GPU and lesson, and a comparison of
//! this run with a baseline of one or more recorded runs, row by row.
//!
//! # The verdict: the run is the unit
//!
//! The batches of one process are not independent samples of another
//! process: two processes running unchanged kernels on one H200 put a
//! kernel's median 2.54% apart while each one's batches spread by 0.17%
//! and 0.08% (see [`MEASURED_RUN_TO_RUN_PCT`]). A test on the batches (the
//! Welch's t-test this module used before) calls such moves real: between
//! the roofline runs of docs/results/roofline-h200-2026-11-29.jsonl and
//! docs/results/recorded-h200-2026-11-29.jsonl it gave six verdicts, with
//! p down to 4e-16. Here each run contributes one number per row, the
//! median of its batches, and a side's time is the median of its runs'
//! medians. [`compare`] then labels each row as nvbench's compare script
//! does:
//!
//! - `SAME`: the two sides differ by no more than the row's floor
//!   ([`floor_pct`]: [`RUN_TO_RUN_FLOOR_PCT`], or the row's widest batch
//!   spread within a run where that is wider);
//! - `FAST` / `SLOW`: past the floor, the two sides' ranges of run medians
//!   apart, the row timed by CUDA events with at least two batches in every
//!   run, and, with a single run on each side, past twice the floor;
//! - `AMBIGUOUS`: anything else (record more runs).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::timing::Timing;

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
///
/// # Errors
/// The folder cannot be made or the file cannot be opened or written.
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

/// The measured move between processes that [`RUN_TO_RUN_FLOOR_PCT`] is
/// taken from, percent (the larger median over the smaller, minus one).
///
/// Among the runs in docs/results of unchanged kernels on the same H200
/// (same driver, sizes and timing plan; the sets `tests/cpu_baseline.rs`
/// lists), taken two at a time, over the rows timed by CUDA events whose
/// batches spread less than the floor in both runs, the widest move is the
/// roofline's `vector_add_permuted`: median 4.128566 ms at
/// 2026-11-29T18:04:20Z in docs/results/roofline-h200-2026-11-29.jsonl,
/// 4.026439 ms at 2026-11-29T20:08:03Z in
/// docs/results/rerun-all-lessons-2026-11-29T20-07Z/roofline.jsonl (the
/// roofline's kernels differ between those builds by formatting only):
/// 2.54%, where that row's batches spread 0.17% and 0.08% within each run.
/// The pair the issue names (the same 18:04 run against 4.028195 ms at
/// 18:19:08 in docs/results/recorded-h200-2026-11-29.jsonl) differs by
/// 2.49%. `tests/cpu_baseline.rs` recomputes this figure from those files.
pub const MEASURED_RUN_TO_RUN_PCT: f64 = 2.54;

/// The recorded files [`MEASURED_RUN_TO_RUN_PCT`] is measured between.
pub const MEASURED_IN: &str = "docs/results/roofline-h200-2026-11-29.jsonl against \
                               docs/results/rerun-all-lessons-2026-11-29T20-07Z/roofline.jsonl";

/// The smallest difference (percent, larger over smaller) between two
/// sides that a verdict may call a change: [`MEASURED_RUN_TO_RUN_PCT`]
/// (2.54%), rounded up to the next half percent. A row whose batches
/// scatter more than this within one run has that scatter as its floor
/// instead ([`floor_pct`]).
pub const RUN_TO_RUN_FLOOR_PCT: f64 = 3.0;

const _: () = assert!(
    MEASURED_RUN_TO_RUN_PCT < RUN_TO_RUN_FLOOR_PCT,
    "the floor must cover the move measured between processes of unchanged kernels"
);

/// One recorded run: its context and each timed row's per-batch samples,
/// keyed by the row's `symbol`.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The run's start, as its context recorded it.
    pub date: String,
    /// The context of the run's first timed row (GPU, driver, sizes,
    /// timing plan, commit ...), as recorded; `null` where the row had none.
    pub context: serde_json::Value,
    /// `symbol` -> per-launch time of each batch, ms.
    pub samples: BTreeMap<String, Vec<f64>>,
    /// The rows whose JSON says they were timed by the host clock
    /// (`"timed_by": "host clock"`), not by CUDA events.
    pub host_clocked: BTreeSet<String>,
    /// The symbols in the order the run reported them.
    pub order: Vec<String>,
}

impl Run {
    /// The part of the context two runs must share to be compared: see
    /// [`setup_of`].
    pub fn setup(&self) -> serde_json::Value {
        setup_of(&self.context)
    }
}

/// The part of a run's `context` two runs must share to be compared: the
/// GPU's name, the sizes, the timing plan and whether L2 was flushed. The
/// timing plan's own `flush_l2` is left out (records before it was added
/// lack it; `l2_flushed` says the same).
pub fn setup_of(context: &serde_json::Value) -> serde_json::Value {
    let mut timing = context["timing"].clone();
    if let Some(t) = timing.as_object_mut() {
        t.remove("flush_l2");
    }
    serde_json::json!({
        "gpu": context["gpu"], "sizes": context["sizes"], "timing": timing,
        "l2_flushed": context["l2_flushed"],
    })
}

/// Adds one JSON row to the run it belongs to (a new run when its context's
/// lesson or date differs from the last run's), keyed by its `key` where it
/// has one (a kernel timed in two launch shapes: `stream_dot/grid-stride`),
/// else by its `symbol`. Rows without `symbol` or `samples_ms` (the ridge
/// point, the facts, a comparison's rows) are skipped.
///
/// # Errors
/// A `samples_ms` that is not a non-empty list of positive times, or a
/// symbol the run already holds.
fn add_row(runs: &mut Vec<Run>, row: &serde_json::Value) -> Result<(), String> {
    let (Some(symbol), Some(samples)) = (
        row["key"].as_str().or(row["symbol"].as_str()),
        row.get("samples_ms"),
    ) else {
        return Ok(());
    };
    if samples.is_null() {
        return Ok(());
    }
    let samples: Vec<f64> = samples
        .as_array()
        .map(|a| {
            a.iter()
                .map(serde_json::Value::as_f64)
                .collect::<Option<Vec<f64>>>()
        })
        .unwrap_or(None)
        .filter(|s| !s.is_empty() && s.iter().all(|x| x.is_finite() && *x > 0.0))
        .ok_or_else(|| {
            format!("`{symbol}`: samples_ms must be a non-empty list of positive times in ms")
        })?;
    let context = &row["context"];
    let date = context["date"].as_str().unwrap_or("").to_string();
    let same_run = runs
        .last()
        .is_some_and(|r| r.date == date && r.context["lesson"] == context["lesson"]);
    if !same_run {
        runs.push(Run {
            date: date.clone(),
            context: context.clone(),
            samples: BTreeMap::new(),
            host_clocked: BTreeSet::new(),
            order: Vec::new(),
        });
    }
    let run = runs.last_mut().expect("pushed above");
    if run.samples.insert(symbol.to_string(), samples).is_some() {
        return Err(format!(
            "two rows of `{symbol}` in the run of {date}: a run's row keys are unique"
        ));
    }
    if row["timed_by"].as_str() == Some("host clock") {
        run.host_clocked.insert(symbol.to_string());
    }
    run.order.push(symbol.to_string());
    Ok(())
}

/// The runs in `rows` (one run's JSON lines, or several runs' in the order
/// written), grouped by their context's lesson and date.
///
/// # Errors
/// As for [`load_runs`], naming the row's index (from 0).
pub fn runs_of(rows: &[serde_json::Value]) -> Result<Vec<Run>, String> {
    let mut runs = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        add_row(&mut runs, row).map_err(|e| format!("row {i}: {e}"))?;
    }
    Ok(runs)
}

/// Reads the runs in a results file (or any file of JSON rows), oldest
/// first, grouping consecutive rows by their context's lesson and date.
/// Rows without `symbol` and `samples_ms` (the ridge point) are skipped.
///
/// # Errors
/// The file cannot be read; a line is not JSON; a row's `samples_ms` is not
/// a non-empty list of positive times; a run holds two rows of one symbol.
/// Each names the file and the line.
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
        add_row(&mut runs, &row).map_err(|e| format!("{} line {}: {e}", path.display(), i + 1))?;
    }
    Ok(runs)
}

/// The git commit a run was built from, where it names one clean build:
/// `None` for records without a commit, or built from a tree with
/// uncommitted changes (`-dirty`), whose code the commit does not pin.
fn clean_commit(run: &Run) -> Option<&str> {
    run.context["git_commit"]
        .as_str()
        .filter(|c| !c.is_empty() && !c.ends_with("-dirty"))
}

/// What must match for two recorded runs to be one baseline: the setup,
/// the physical GPU, the driver and the module loading mode.
fn group_key(run: &Run) -> serde_json::Value {
    let c = &run.context;
    serde_json::json!({
        "setup": run.setup(), "uuid": c["gpu_uuid"], "pci": c["pci_bus_id"],
        "driver": c["driver_version"], "cuda": c["driver_cuda"], "loading": c["module_loading"],
    })
}

/// The baseline `spec` names, oldest run first: `last` reads `recorded`
/// (this GPU's and lesson's results file), any other spec is a path to a
/// file of rows. The baseline is the file's newest run, with every earlier
/// run in it built from the same clean git commit (see the `git_commit` of
/// the context) and measured the same way (setup, GPU, driver, module
/// loading): several runs of one build make the baseline's range. A newest
/// run without a clean commit is a baseline of one run.
///
/// # Errors
/// No such file, a file [`load_runs`] refuses, or no run in it.
pub fn baseline(spec: &str, recorded: &Path) -> Result<Vec<Run>, String> {
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
    let mut runs = load_runs(&path)?;
    let newest = runs
        .pop()
        .ok_or_else(|| format!("{} holds no recorded run to compare with", path.display()))?;
    let mut group: Vec<Run> = match clean_commit(&newest) {
        Some(commit) => {
            let key = group_key(&newest);
            runs.into_iter()
                .filter(|r| clean_commit(r) == Some(commit) && group_key(r) == key)
                .collect()
        }
        None => Vec::new(),
    };
    group.push(newest);
    Ok(group)
}

/// A context field as text, where the record has it.
fn field<'a>(context: &'a serde_json::Value, key: &str) -> Option<&'a str> {
    context[key].as_str().filter(|s| !s.is_empty())
}

/// Checks that every run of `base` was measured the way the run with
/// context `now` is: the same setup ([`setup_of`]), the same physical GPU
/// (its UUID where both records have one, else its PCI bus id), the same
/// driver (kernel module version and CUDA version) and the same module
/// loading mode. Returns the caveats: what could not be confirmed because a
/// record lacks the field (records written before the GPU's UUID, PCI bus
/// id and module loading mode were recorded have none of them), one line
/// each.
///
/// # Errors
/// One line naming the baseline run and everything that differs: a
/// comparison across those would read a change of setup as a change of
/// speed.
pub fn comparable(base: &[Run], now: &serde_json::Value) -> Result<Vec<String>, String> {
    let mut caveats: Vec<String> = Vec::new();
    let mut caveat = |line: String| {
        if !caveats.contains(&line) {
            caveats.push(line);
        }
    };
    let now_setup = setup_of(now);
    for run in base {
        let (b, setup) = (&run.context, run.setup());
        let mut differs: Vec<String> = [
            ("gpu", "GPU model"),
            ("sizes", "sizes"),
            ("timing", "timing plan"),
            ("l2_flushed", "L2 treatment"),
        ]
        .into_iter()
        .filter(|(k, _)| setup[*k] != now_setup[*k])
        .map(|(_, what)| what.to_string())
        .collect();
        // Which physical GPU: its UUID where both say, else its bus id.
        let pair = |key: &str| (field(b, key), field(now, key));
        match (pair("gpu_uuid"), pair("pci_bus_id")) {
            ((Some(x), Some(y)), _) if x != y => {
                differs.push(format!("physical GPU (UUID {x}; this run {y})"))
            }
            ((Some(_), Some(_)), _) => {}
            (_, (Some(x), Some(y))) if x != y => {
                differs.push(format!("physical GPU (PCI bus {x}; this run {y})"))
            }
            (_, (Some(_), Some(_))) => {}
            _ => caveat(format!(
                "cannot confirm the same GPU: {} recorded no GPU UUID or PCI bus id",
                side(b, now, &["gpu_uuid", "pci_bus_id"], &run.date)
            )),
        }
        match pair("driver_version") {
            (Some(x), Some(y)) if x != y => differs.push(format!("driver ({x}; this run {y})")),
            (Some(_), Some(_)) => {}
            _ => caveat(format!(
                "cannot confirm the same driver: {} recorded no kernel module version",
                side(b, now, &["driver_version"], &run.date)
            )),
        }
        if let (Some(x), Some(y)) = pair("driver_cuda")
            && x != y
        {
            differs.push(format!("driver CUDA version ({x}; this run {y})"));
        }
        match pair("module_loading") {
            (Some(x), Some(y)) if x != y => {
                differs.push(format!("module loading mode ({x}; this run {y})"))
            }
            (Some(_), Some(_)) => {}
            _ => caveat(format!(
                "cannot confirm the same module loading mode: {} recorded none",
                side(b, now, &["module_loading"], &run.date)
            )),
        }
        if !differs.is_empty() {
            return Err(format!(
                "the baseline run of {} was measured with a different {}: a comparison would read that as a change of speed",
                run.date,
                differs.join(", ")
            ));
        }
    }
    Ok(caveats)
}

/// Which side lacks all of `keys`: "the baseline run of DATE", "this run"
/// or "the baseline run of DATE and this run".
fn side(base: &serde_json::Value, now: &serde_json::Value, keys: &[&str], date: &str) -> String {
    let lacks = |c: &serde_json::Value| keys.iter().all(|k| field(c, k).is_none());
    match (lacks(base), lacks(now)) {
        (true, true) => format!("the baseline run of {date} and this run"),
        (false, true) => "this run".to_string(),
        _ => format!("the baseline run of {date}"),
    }
}

/// Whether a row got faster, slower, neither, or cannot be told; named as
/// nvbench's compare script names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    /// Faster: past the floor, the runs apart (see [`compare`]).
    Fast,
    /// Slower: past the floor, the runs apart.
    Slow,
    /// Within the floor: no change these runs can show.
    Same,
    /// Past the floor, but the runs do not settle it.
    Ambiguous,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::Fast => "FAST",
            Verdict::Slow => "SLOW",
            Verdict::Same => "SAME",
            Verdict::Ambiguous => "AMBIGUOUS",
        })
    }
}

/// How one row's time moved between a baseline and now, run by run.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// The baseline's time: the median of its runs' medians, ms.
    pub base_ms: f64,
    /// This side's time, the same way, ms.
    pub now_ms: f64,
    /// (now - base) / base, percent.
    pub change_pct: f64,
    /// The larger time over the smaller, minus one, percent: the difference
    /// the floor is held against (the same either way round).
    pub difference_pct: f64,
    /// The row's floor, percent ([`floor_pct`]).
    pub floor_pct: f64,
    /// The baseline's runs.
    pub base_runs: usize,
    /// This side's runs.
    pub now_runs: usize,
    /// The lowest and highest run median of the baseline, ms.
    pub base_range_ms: (f64, f64),
    /// The lowest and highest run median of this side, ms.
    pub now_range_ms: (f64, f64),
    /// The verdict.
    pub verdict: Verdict,
    /// Why, in a few words.
    pub why: String,
}

/// A row's floor, percent: [`RUN_TO_RUN_FLOOR_PCT`], or the widest spread
/// ((max - min) / median of the batches, percent) of any one of `runs`
/// with two batches or more, where that is wider: a row whose batches
/// scatter by 12% within one process shows no smaller change between two.
pub fn floor_pct(runs: &[&[f64]]) -> f64 {
    runs.iter()
        .filter(|r| r.len() >= 2)
        .map(|r| Timing::new(r.to_vec()).spread_pct())
        .fold(RUN_TO_RUN_FLOOR_PCT, f64::max)
}

/// Compares one row's runs: `base` and `now` each hold one list of per-batch
/// times (ms) per run; `host_clock` says the row was timed by the host clock
/// on either side. Each run counts once, by its median; a side's time is
/// the median of its run medians, its range their lowest and highest. The
/// verdict:
///
/// - [`Verdict::Same`] when the larger time over the smaller is within the
///   row's [`floor_pct`];
/// - [`Verdict::Fast`] or [`Verdict::Slow`] when it is past the floor, the
///   two ranges do not overlap, the row is timed by CUDA events with at
///   least two batches in every run (the floor was measured for such rows;
///   host-clocked rows moved by up to 91% between processes,
///   docs/results/one-layer-h200-2026-11-30/conv2d.jsonl against
///   recorded/nvidia-h200/conv2d.jsonl there), and, with a single run on
///   each side, it is past twice the floor;
/// - [`Verdict::Ambiguous`] otherwise.
///
/// # Errors
/// A side with no run, a run with no batch, or a time that is not a
/// positive finite number.
pub fn compare(base: &[&[f64]], now: &[&[f64]], host_clock: bool) -> Result<Change, String> {
    for (name, side) in [("baseline", base), ("now", now)] {
        if side.is_empty() {
            return Err(format!("the {name} side holds no run"));
        }
        if side
            .iter()
            .any(|r| r.is_empty() || r.iter().any(|x| !x.is_finite() || *x <= 0.0))
        {
            return Err(format!(
                "a {name} run's times must be one or more positive numbers of ms"
            ));
        }
    }
    let medians = |side: &[&[f64]]| -> Vec<f64> {
        side.iter()
            .map(|r| Timing::new(r.to_vec()).median_ms())
            .collect()
    };
    let (bm, nm) = (medians(base), medians(now));
    let summary = |m: &[f64]| {
        let t = Timing::new(m.to_vec());
        (t.median_ms(), (t.min_ms(), t.max_ms()))
    };
    let ((base_ms, base_range_ms), (now_ms, now_range_ms)) = (summary(&bm), summary(&nm));
    let change_pct = 100.0 * (now_ms - base_ms) / base_ms;
    let difference_pct = 100.0 * (base_ms.max(now_ms) / base_ms.min(now_ms) - 1.0);
    let all: Vec<&[f64]> = base.iter().chain(now).copied().collect();
    let floor = floor_pct(&all);
    let apart = if now_ms > base_ms {
        now_range_ms.0 > base_range_ms.1
    } else {
        now_range_ms.1 < base_range_ms.0
    };
    let single = base.len() == 1 && now.len() == 1;
    let (verdict, why) = if difference_pct <= floor {
        (Verdict::Same, format!("within the {floor:.1}% floor"))
    } else if host_clock {
        (
            Verdict::Ambiguous,
            "timed by the host clock: the floor is for rows timed by CUDA events".to_string(),
        )
    } else if all.iter().any(|r| r.len() < 2) {
        (
            Verdict::Ambiguous,
            "a run of one batch: its scatter is unmeasured".to_string(),
        )
    } else if !apart {
        (
            Verdict::Ambiguous,
            "past the floor, but the runs' ranges overlap".to_string(),
        )
    } else if single && difference_pct <= 2.0 * floor {
        (
            Verdict::Ambiguous,
            format!(
                "one run a side: past the floor, not past twice it ({:.1}%)",
                2.0 * floor
            ),
        )
    } else {
        let verdict = if now_ms < base_ms {
            Verdict::Fast
        } else {
            Verdict::Slow
        };
        (verdict, "past the floor, the runs apart".to_string())
    };
    Ok(Change {
        base_ms,
        now_ms,
        change_pct,
        difference_pct,
        floor_pct: floor,
        base_runs: base.len(),
        now_runs: now.len(),
        base_range_ms,
        now_range_ms,
        verdict,
        why,
    })
}

/// One row's key and its [`Change`], or why it could not be compared.
pub type RowChange = (String, Result<Change, String>);

/// Each row of `now` (in its order) that at least one run of `base` also
/// holds, with its [`Change`] (or why it could not be compared); and the
/// rows of `now` no baseline run holds.
pub fn changes(base: &[Run], now: &Run) -> (Vec<RowChange>, Vec<String>) {
    let mut compared = Vec::new();
    let mut missing = Vec::new();
    for symbol in &now.order {
        let b: Vec<&[f64]> = base
            .iter()
            .filter_map(|r| r.samples.get(symbol).map(Vec::as_slice))
            .collect();
        let Some(n) = now.samples.get(symbol) else {
            continue;
        };
        if b.is_empty() {
            missing.push(symbol.clone());
            continue;
        }
        let host_clock = now.host_clocked.contains(symbol)
            || base.iter().any(|r| r.host_clocked.contains(symbol));
        compared.push((symbol.clone(), compare(&b, &[n.as_slice()], host_clock)));
    }
    (compared, missing)
}

/// The comparison for people: per row the two sides' times, the change,
/// the floor, the runs, the verdict and why; then the rule, the count of
/// each verdict and the caveats ([`comparable`]'s).
pub fn table(base: &[Run], now: &Run, caveats: &[String]) -> String {
    let mut t = crate::report::table(&[
        "kernel",
        "baseline ms",
        "now ms",
        "change %",
        "floor %",
        "runs",
        "verdict",
        "why",
    ]);
    let (compared, missing) = changes(base, now);
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for (symbol, change) in &compared {
        match change {
            Ok(c) => {
                *counts.entry(c.verdict.to_string()).or_default() += 1;
                t.add_row(vec![
                    symbol.clone(),
                    format!("{:.4}", c.base_ms),
                    format!("{:.4}", c.now_ms),
                    format!("{:+.2}", c.change_pct),
                    format!("{:.1}", c.floor_pct),
                    format!("{} / {}", c.base_runs, c.now_runs),
                    c.verdict.to_string(),
                    c.why.clone(),
                ]);
            }
            Err(e) => {
                *counts.entry("not compared".into()).or_default() += 1;
                t.add_row(vec![
                    symbol.clone(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    e.clone(),
                ]);
            }
        }
    }
    let dates = match base {
        [] => "no run".to_string(),
        [one] => format!("the run of {}", one.date),
        [first, .., last] => format!(
            "{} runs of one build, {} to {}",
            base.len(),
            first.date,
            last.date
        ),
    };
    let tally: Vec<String> = counts.iter().map(|(v, n)| format!("{n} {v}")).collect();
    let mut s =
        format!("Against the baseline ({dates}); each run counts once, by its median:\n{t}\n");
    s.push_str(&format!(
        "The unit is the run: a side's time is the median of its runs' medians (runs: baseline / now). SAME: the two \
         differ by no more than the floor, {RUN_TO_RUN_FLOOR_PCT}% (the widest move measured between two processes of \
         unchanged kernels was {MEASURED_RUN_TO_RUN_PCT}%, {MEASURED_IN}), or the row's widest batch spread within a \
         run where that is wider. FAST or SLOW: past the floor, the two sides' ranges of run medians apart, timed by \
         CUDA events with two or more batches a run, and with one run on each side past twice the floor. AMBIGUOUS: \
         anything else; record more runs of the baseline's build (--record several times) to settle it.\n\
         This comparison: {}.\n",
        if tally.is_empty() {
            "no row in common".to_string()
        } else {
            tally.join(", ")
        }
    ));
    if !missing.is_empty() {
        s.push_str(&format!(
            "Not in the baseline, so not compared: {}.\n",
            missing.join(", ")
        ));
    }
    for c in caveats {
        s.push_str(&format!("Note: {c}.\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seven batches around `centre` with a 4% spread.
    fn batches(centre: f64) -> Vec<f64> {
        [1.00, 1.01, 0.99, 1.00, 1.02, 0.98, 1.00]
            .iter()
            .map(|x| x * centre)
            .collect()
    }

    fn verdict(base: &[Vec<f64>], now: &[Vec<f64>]) -> Change {
        let b: Vec<&[f64]> = base.iter().map(Vec::as_slice).collect();
        let n: Vec<&[f64]> = now.iter().map(Vec::as_slice).collect();
        compare(&b, &n, false).unwrap()
    }

    #[test]
    fn a_ten_percent_change_over_several_runs_is_called() {
        // Three runs a side, each with a 4% batch spread (so the floor is
        // 4%), runs scattered by 1%: 10% faster, 10% slower.
        let base: Vec<Vec<f64>> = [1.00, 1.01, 0.995].iter().map(|&c| batches(c)).collect();
        let fast: Vec<Vec<f64>> = [0.90, 0.909, 0.8955].iter().map(|&c| batches(c)).collect();
        let c = verdict(&base, &fast);
        assert_eq!(c.verdict, Verdict::Fast, "{c:?}");
        assert!((c.change_pct + 10.0).abs() < 1e-9, "{}", c.change_pct);
        assert!((c.floor_pct - 4.0).abs() < 1e-9, "{}", c.floor_pct);
        assert_eq!((c.base_runs, c.now_runs), (3, 3));
        assert_eq!(c.base_range_ms, (0.995, 1.01));
        let slow: Vec<Vec<f64>> = [1.10, 1.111, 1.0945].iter().map(|&c| batches(c)).collect();
        assert_eq!(verdict(&base, &slow).verdict, Verdict::Slow);
        // The current run is one run: 10% against three is still called.
        assert_eq!(verdict(&base, &[batches(0.9)]).verdict, Verdict::Fast);
        // One run a side: 10% is past twice the 4% floor, so called too.
        assert_eq!(
            verdict(&[batches(1.0)], &[batches(1.1)]).verdict,
            Verdict::Slow
        );
    }

    #[test]
    fn moves_within_the_floor_or_the_runs_scatter_are_not_called() {
        let tight = |c: f64| vec![c, c * 1.0001, c * 0.9999, c, c * 1.0002, c * 0.9998, c];
        // 2.5% (the move between processes of unchanged kernels) with batches
        // within 0.04%: SAME, under the 3% floor.
        let c = verdict(&[tight(1.0)], &[tight(1.025)]);
        assert_eq!(c.verdict, Verdict::Same, "{c:?}");
        assert_eq!(c.floor_pct, RUN_TO_RUN_FLOOR_PCT);
        assert_eq!(c.why, "within the 3.0% floor");
        // The same measure either way round: 2.9% slower and 2.9% faster
        // (larger over smaller) are both within 3%.
        assert_eq!(
            verdict(&[tight(1.029)], &[tight(1.0)]).verdict,
            Verdict::Same
        );
        // One run a side, 4%: past the floor, not past twice it.
        let c = verdict(&[tight(1.0)], &[tight(1.04)]);
        assert_eq!(c.verdict, Verdict::Ambiguous);
        assert_eq!(
            c.why,
            "one run a side: past the floor, not past twice it (6.0%)"
        );
        // 7% against one run is called.
        assert_eq!(
            verdict(&[tight(1.0)], &[tight(1.07)]).verdict,
            Verdict::Slow
        );
        // Baseline runs from 0.95 to 1.10 (median 1.0): 1.05 is 5% past the
        // median but inside their range: AMBIGUOUS.
        let base = [tight(0.95), tight(1.0), tight(1.10)];
        let c = verdict(&base, &[tight(1.05)]);
        assert_eq!(c.verdict, Verdict::Ambiguous);
        assert_eq!(c.why, "past the floor, but the runs' ranges overlap");
        // A row whose batches spread 12% within a run has a 12% floor.
        let wide = vec![1.0, 1.06, 0.94, 1.0, 1.0, 1.0, 1.0];
        let wider: Vec<f64> = wide.iter().map(|x| x * 1.1).collect();
        let c = verdict(std::slice::from_ref(&wide), &[wider]);
        assert!((c.floor_pct - 12.0).abs() < 1e-9, "{}", c.floor_pct);
        assert_eq!(c.verdict, Verdict::Same);
    }

    #[test]
    fn host_clocked_and_one_batch_rows_get_no_verdict() {
        let b = [1.0, 1.0, 1.0];
        let n = [2.0, 2.0, 2.0];
        let c = compare(&[&b], &[&n], true).unwrap();
        assert_eq!(c.verdict, Verdict::Ambiguous);
        assert!(c.why.starts_with("timed by the host clock"), "{}", c.why);
        let c = compare(&[&[1.0]], &[&[2.0]], false).unwrap();
        assert_eq!(c.verdict, Verdict::Ambiguous);
        assert_eq!(c.why, "a run of one batch: its scatter is unmeasured");
        // Within the floor is SAME, however timed.
        assert_eq!(compare(&[&b], &[&b], true).unwrap().verdict, Verdict::Same);
    }

    #[test]
    fn bad_times_are_errors_not_panics() {
        assert_eq!(
            compare(&[], &[&[1.0]], false).unwrap_err(),
            "the baseline side holds no run"
        );
        assert_eq!(
            compare(&[&[1.0]], &[&[]], false).unwrap_err(),
            "a now run's times must be one or more positive numbers of ms"
        );
        assert!(compare(&[&[0.0, 1.0]], &[&[1.0]], false).is_err());
        assert!(compare(&[&[f64::NAN, 1.0]], &[&[1.0]], false).is_err());
    }

    #[test]
    fn verdicts_are_written_as_nvbench_writes_them() {
        assert_eq!(serde_json::to_value(Verdict::Fast).unwrap(), "FAST");
        assert_eq!(
            serde_json::to_value(Verdict::Ambiguous).unwrap(),
            "AMBIGUOUS"
        );
        assert_eq!(Verdict::Same.to_string(), "SAME");
        assert_eq!(Verdict::Slow.to_string(), "SLOW");
    }

    /// A context as `Context` writes it, with the identity fields given.
    fn context(
        uuid: Option<&str>,
        pci: Option<&str>,
        driver: &str,
        loading: Option<&str>,
    ) -> serde_json::Value {
        serde_json::json!({
            "date": "2026-12-01T10:00:00Z", "lesson": "roofline", "gpu": "NVIDIA H200",
            "gpu_uuid": uuid, "pci_bus_id": pci, "driver_version": driver, "driver_cuda": "13.0",
            "module_loading": loading, "sizes": {"n": 1},
            "timing": {"batches": 7, "launches_per_batch": 10, "warmups": 3, "flush_l2": false},
            "l2_flushed": false, "git_commit": "abc",
        })
    }

    fn run_of(context: serde_json::Value) -> Run {
        runs_of(&[serde_json::json!({"symbol": "k", "samples_ms": [1.0, 1.0], "context": context})])
            .unwrap()
            .remove(0)
    }

    #[test]
    fn another_gpu_driver_or_loading_mode_is_refused_in_one_line() {
        let here = context(
            Some("GPU-1"),
            Some("0000:1b:00.0"),
            "580.159.04",
            Some("lazy"),
        );
        let same = run_of(here.clone());
        assert_eq!(comparable(&[same], &here), Ok(vec![]));
        let cases = [
            (
                context(
                    Some("GPU-2"),
                    Some("0000:1b:00.0"),
                    "580.159.04",
                    Some("lazy"),
                ),
                "physical GPU (UUID GPU-2; this run GPU-1)",
            ),
            (
                context(None, Some("0000:2a:00.0"), "580.159.04", Some("lazy")),
                "physical GPU (PCI bus 0000:2a:00.0; this run 0000:1b:00.0)",
            ),
            (
                context(
                    Some("GPU-1"),
                    Some("0000:1b:00.0"),
                    "575.57.08",
                    Some("lazy"),
                ),
                "driver (575.57.08; this run 580.159.04)",
            ),
            (
                context(
                    Some("GPU-1"),
                    Some("0000:1b:00.0"),
                    "580.159.04",
                    Some("eager"),
                ),
                "module loading mode (eager; this run lazy)",
            ),
        ];
        for (base, what) in cases {
            let err = comparable(&[run_of(base)], &here).unwrap_err();
            assert_eq!(
                err,
                format!(
                    "the baseline run of 2026-12-01T10:00:00Z was measured with a different {what}: a comparison would \
                     read that as a change of speed"
                )
            );
            assert_eq!(err.lines().count(), 1);
        }
        // The same UUID on another bus is the same GPU, moved.
        let moved = context(
            Some("GPU-1"),
            Some("0000:2a:00.0"),
            "580.159.04",
            Some("lazy"),
        );
        assert_eq!(comparable(&[run_of(moved)], &here), Ok(vec![]));
        // A setup that differs: named.
        let mut flushed = here.clone();
        flushed["l2_flushed"] = true.into();
        let err = comparable(&[run_of(flushed)], &here).unwrap_err();
        assert!(err.contains("different L2 treatment:"), "{err}");
    }

    #[test]
    fn old_records_without_identity_are_caveats_not_refusals() {
        let here = context(
            Some("GPU-1"),
            Some("0000:1b:00.0"),
            "580.159.04",
            Some("lazy"),
        );
        // A record from before these fields, its timing plan without
        // flush_l2 (as the 2026-11-29T18:04 roofline run wrote it).
        let mut old = context(None, None, "580.159.04", None);
        old.as_object_mut().unwrap().remove("gpu_uuid");
        old.as_object_mut().unwrap().remove("module_loading");
        old["timing"] = serde_json::json!({"batches": 7, "launches_per_batch": 10, "warmups": 3});
        assert_eq!(
            comparable(&[run_of(old)], &here),
            Ok(vec![
                "cannot confirm the same GPU: the baseline run of 2026-12-01T10:00:00Z recorded no GPU UUID or PCI bus id"
                    .to_string(),
                "cannot confirm the same module loading mode: the baseline run of 2026-12-01T10:00:00Z recorded none"
                    .to_string(),
            ])
        );
    }

    #[test]
    fn runs_group_by_date_and_the_newest_build_is_the_baseline() {
        let dir = std::env::temp_dir().join(format!("lab-record-{}", std::process::id()));
        let file = results_file(&dir, "NVIDIA H200", "roofline");
        assert!(
            file.ends_with("nvidia-h200/roofline.jsonl"),
            "{}",
            file.display()
        );
        let row = |date: &str, commit: &str, ms: f64| serde_json::json!({"symbol": "vector_add", "samples_ms": [ms, ms], "context": {"date": date, "git_commit": commit}});
        append(
            &file,
            &[
                row("d1", "aaa", 1.0),
                serde_json::json!({"variant": "ridge-point", "context": {"date": "d1"}}),
            ],
        )
        .unwrap();
        append(&file, &[row("d2", "bbb", 2.0), row("d3", "bbb", 3.0)]).unwrap();
        append(&file, &[row("d4", "bbb", 4.0)]).unwrap();
        let runs = load_runs(&file).unwrap();
        assert_eq!(runs.len(), 4);
        assert_eq!(runs[0].samples["vector_add"], [1.0, 1.0]);
        // The newest run and the earlier runs of its commit.
        let dates = |runs: Vec<Run>| runs.into_iter().map(|r| r.date).collect::<Vec<_>>();
        assert_eq!(dates(baseline("last", &file).unwrap()), ["d2", "d3", "d4"]);
        // A build from a dirty tree is a baseline of one run.
        append(
            &file,
            &[row("d5", "bbb-dirty", 5.0), row("d6", "bbb-dirty", 6.0)],
        )
        .unwrap();
        assert_eq!(dates(baseline("last", &file).unwrap()), ["d6"]);
        std::fs::remove_dir_all(&dir).ok();
        assert!(
            baseline("last", &file)
                .unwrap_err()
                .contains("record one with --record first")
        );
    }

    #[test]
    fn bad_rows_are_named_by_line() {
        let dir = std::env::temp_dir().join(format!("lab-record-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("bad.jsonl");
        let ctx = r#""context": {"date": "d"}"#;
        for (body, why) in [
            (
                format!(r#"{{"symbol": "k", "samples_ms": [], {ctx}}}"#),
                "`k`: samples_ms must be a non-empty list of positive times in ms",
            ),
            (
                format!(r#"{{"symbol": "k", "samples_ms": [1.0, "x"], {ctx}}}"#),
                "`k`: samples_ms must be a non-empty list of positive times in ms",
            ),
            (
                format!(r#"{{"symbol": "k", "samples_ms": [-1.0], {ctx}}}"#),
                "`k`: samples_ms must be a non-empty list of positive times in ms",
            ),
        ] {
            std::fs::write(&file, format!("\n{body}\n")).unwrap();
            assert_eq!(
                load_runs(&file).unwrap_err(),
                format!("{} line 2: {why}", file.display())
            );
        }
        let row = format!(r#"{{"symbol": "k", "samples_ms": [1.0], {ctx}}}"#);
        std::fs::write(&file, format!("{row}\n{row}\n")).unwrap();
        assert_eq!(
            load_runs(&file).unwrap_err(),
            format!(
                "{} line 2: two rows of `k` in the run of d: a run's row keys are unique",
                file.display()
            )
        );
        std::fs::write(&file, "{not json\n").unwrap();
        assert!(
            load_runs(&file)
                .unwrap_err()
                .starts_with(&format!("{} line 1: ", file.display()))
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
