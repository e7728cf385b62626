//! What the chapter-19 lessons (`vectorize`, `unroll`, `fuse`, `specialize`,
//! `harness`, `conv2d`, `bandwidth`) share: a report made of sections (text
//! the lesson traces or counts, then timed rows with their bytes and FLOP),
//! a descriptor `lab` dispatches on, and the Rust-beside-CUDA-C comparison
//! every lesson's kernels go through ([`compare_twins`]).
//!
//! Each lesson keeps its kernels in `kernels-gpu/src/<lesson>.rs`, its host
//! side (references, launches, checks, the run) in `host/src/<lesson>/` with
//! its CUDA C twins beside it; this module holds none of a lesson's content.

use cudarc::driver::CudaFunction;
use serde_json::json;

use crate::check::Failure;
use crate::compare::{Agreement, ComparedKernel, Kernels, Side, interleave, pair};
use crate::error::Result;
use crate::gpu::Gpu;
use crate::report::{Context, table};
use crate::timing::{Plan, Timing};

/// One timed row: a kernel (or a host function, or a copy) at one size.
#[derive(Debug, Clone)]
pub struct Row {
    /// The row's key, unique within a run (the recorded-runs files and
    /// `--baseline` match rows by it): the kernel's symbol, with `/size`
    /// where a lesson times one kernel at several sizes.
    pub key: String,
    /// What the row is, for people.
    pub label: String,
    /// Per-launch (or per-call) times.
    pub timing: Timing,
    /// Bytes the row counts as moved per launch (compulsory bytes, or
    /// what the lesson's line says it counts); `None` where not meaningful.
    pub bytes: Option<f64>,
    /// Floating-point operations per launch; `None` where not meaningful.
    pub flop: Option<f64>,
    /// Whether the row is measured on the CPU (a host mirror) rather than
    /// the GPU: its figures are labelled as CPU figures.
    pub cpu: bool,
    /// Whether GPU work was timed by the host clock rather than by CUDA
    /// events (the harness lesson's wrong ways); CPU rows always are.
    pub host_clock: bool,
}

impl Row {
    /// A GPU row with no byte or FLOP count yet.
    pub fn new(key: impl Into<String>, label: impl Into<String>, timing: Timing) -> Row {
        Row {
            key: key.into(),
            label: label.into(),
            timing,
            bytes: None,
            flop: None,
            cpu: false,
            host_clock: false,
        }
    }

    /// The same row, counting `bytes` per launch.
    pub fn bytes(self, bytes: f64) -> Row {
        Row {
            bytes: Some(bytes),
            ..self
        }
    }

    /// The same row, counting `flop` per launch.
    pub fn flop(self, flop: f64) -> Row {
        Row {
            flop: Some(flop),
            ..self
        }
    }

    /// The same row, marked as a CPU measurement (host clock).
    pub fn on_cpu(self) -> Row {
        Row {
            cpu: true,
            host_clock: true,
            ..self
        }
    }

    /// The same row, marked as GPU work timed by the host clock.
    pub fn host_clocked(self) -> Row {
        Row {
            host_clock: true,
            ..self
        }
    }

    /// Where the row ran and what timed it, for the table.
    pub fn timed_by(&self) -> &'static str {
        match (self.cpu, self.host_clock) {
            (true, _) => "CPU, host clock",
            (false, true) => "GPU, host clock",
            (false, false) => "GPU, events",
        }
    }

    /// Bytes / median time, GB/s (10^9 bytes per second).
    pub fn gb_per_s(&self) -> Option<f64> {
        self.bytes
            .map(|b| b / (self.timing.median_ms() * 1e-3) / 1e9)
    }

    /// FLOP / median time, GFLOP/s (10^9 FLOP per second).
    pub fn gflop_per_s(&self) -> Option<f64> {
        self.flop
            .map(|f| f / (self.timing.median_ms() * 1e-3) / 1e9)
    }
}

/// One part of a lesson's report: what it traced or counted (text lines),
/// what it timed (rows), and the sentence that reads the rows.
#[derive(Debug, Clone, Default)]
pub struct Section {
    /// The heading.
    pub title: String,
    /// Lines printed under the heading, before the rows.
    pub text: Vec<String>,
    /// Timed rows, printed as one table.
    pub rows: Vec<Row>,
    /// What the rows show, printed after them.
    pub reading: Option<String>,
}

impl Section {
    /// A section with a heading and nothing else yet.
    pub fn new(title: impl Into<String>) -> Section {
        Section {
            title: title.into(),
            ..Section::default()
        }
    }

    /// Adds a line of text.
    pub fn line(&mut self, text: impl Into<String>) {
        self.text.push(text.into());
    }
}

/// What a lesson found when every check passed: its sections, and the facts
/// (counts, traces, evidence) scripts get as one JSON object.
#[derive(Debug, Clone)]
pub struct Findings {
    /// The report's parts, in order.
    pub sections: Vec<Section>,
    /// The lesson's counted and traced facts, for `--json`.
    pub facts: serde_json::Value,
}

/// The outcome of a lesson's run: findings, or every failed check (and no
/// figure).
pub enum Outcome {
    /// Every check passed.
    Passed(Findings),
    /// At least one check failed.
    Failed(Vec<Failure>),
}

/// The outcome of a comparison: every kernel pair, or every failed check.
pub type CompareOutcome = std::result::Result<Vec<ComparedKernel>, Vec<Failure>>;

/// A lesson's report: the run's context and its findings.
pub struct Report {
    /// The run's context.
    pub context: Context,
    /// What the lesson found.
    pub findings: Findings,
}

/// A number with `digits` decimals, or a dash.
fn cell(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.digits$}"))
}

impl Report {
    /// The first row key used twice in the findings (keys must be unique:
    /// recorded runs and `--baseline` match rows by key); `None` when all
    /// are distinct.
    pub fn duplicate_key(&self) -> Option<&str> {
        let mut seen = std::collections::HashSet::new();
        self.findings
            .sections
            .iter()
            .flat_map(|s| &s.rows)
            .map(|r| r.key.as_str())
            .find(|k| !seen.insert(*k))
    }

    /// The report for people: the device and build lines, then each
    /// section's text, its rows as a table and their reading.
    pub fn table(&self) -> String {
        let mut s = format!(
            "{}\n{}\n",
            self.context.device_line(),
            self.context.build_line()
        );
        let plan = self.context.timing;
        for section in &self.findings.sections {
            s.push_str(&format!("\n== {} ==\n", section.title));
            for line in &section.text {
                s.push_str(line);
                s.push('\n');
            }
            if !section.rows.is_empty() {
                let mut t = table(&[
                    "row",
                    "what",
                    "median ms",
                    "spread %",
                    "GB/s",
                    "GFLOP/s",
                    "on",
                ]);
                for r in &section.rows {
                    t.add_row(vec![
                        r.key.clone(),
                        r.label.clone(),
                        format!("{:.4}", r.timing.median_ms()),
                        if r.timing.samples_ms.len() > 1 {
                            format!("{:.1}", r.timing.spread_pct())
                        } else {
                            "- (1 sample)".to_string()
                        },
                        cell(r.gb_per_s(), 1),
                        cell(r.gflop_per_s(), 2),
                        r.timed_by().to_string(),
                    ]);
                }
                s.push_str(&format!("{t}\n"));
            }
            if let Some(reading) = &section.reading {
                s.push_str(reading);
                s.push('\n');
            }
        }
        let rows: Vec<&Row> = self
            .findings
            .sections
            .iter()
            .flat_map(|s| &s.rows)
            .collect();
        let mut footer = Vec::new();
        if rows.iter().any(|r| !r.host_clock) {
            footer.push(format!(
                "'GPU, events' rows: CUDA events, {} warm-up launches, median of {} batches of {} launches{}; spread = \
                 (max - min) / median over the batches.",
                plan.warmups,
                plan.batches,
                plan.launches_per_batch,
                if plan.flush_l2 { ", L2 flushed before each" } else { "" },
            ));
        }
        if rows.iter().any(|r| r.host_clock) {
            footer.push(
                "'host clock' rows: timed by the host's clock, with the warm-ups and timed calls their label or section \
                 gives."
                    .to_string(),
            );
        }
        if !footer.is_empty() {
            s.push_str(&format!("\n{}\n", footer.join(" ")));
        }
        s
    }

    /// One JSON object per timed row, then one with the facts; each with
    /// the run's context.
    pub fn json_lines(&self) -> Vec<serde_json::Value> {
        let c = &self.context;
        let mut lines: Vec<serde_json::Value> = self
            .findings
            .sections
            .iter()
            .flat_map(|section| {
                section.rows.iter().map(move |r| {
                    json!({
                        "lesson": c.lesson, "section": section.title, "variant": "timed",
                        "symbol": r.key, "label": r.label, "on": if r.cpu { "cpu" } else { "gpu" },
                        "timed_by": if r.host_clock { "host clock" } else { "cuda events" },
                        "median_ms": r.timing.median_ms(), "min_ms": r.timing.min_ms(), "max_ms": r.timing.max_ms(),
                        "samples_ms": r.timing.samples_ms,
                        "bytes": r.bytes, "gb_per_s": r.gb_per_s(), "flop": r.flop, "gflop_per_s": r.gflop_per_s(),
                        "context": c,
                    })
                })
            })
            .collect();
        lines.push(json!({"lesson": c.lesson, "variant": "facts", "facts": self.findings.facts, "context": c}));
        lines
    }
}

/// A lesson as `lab` runs it: its name, its sizes for the context, its run,
/// its CUDA C twins and its comparison.
pub struct Lesson {
    /// The name on the command line.
    pub name: &'static str,
    /// The sizes (`quick`: the sanitizer's) as the context records them.
    pub sizes: fn(quick: bool) -> serde_json::Value,
    /// The block shapes as the context records them.
    pub block_sizes: fn() -> serde_json::Value,
    /// Checks every kernel, then measures; `quick` runs the sanitizer's
    /// sizes (every check still made).
    pub run: fn(gpu: &Gpu, plan: Plan, quick: bool) -> Result<Outcome>,
    /// The CUDA C program NVRTC compiles (constants as `#define`s, then the
    /// twins).
    pub cuda_c: fn() -> String,
    /// Runs every kernel beside its twin loaded from `c_ptx`: checked,
    /// compared bit for bit, timed interleaved `trials` times with `plan`.
    pub compare: fn(gpu: &Gpu, c_ptx: &str, trials: u32, plan: Plan) -> Result<CompareOutcome>,
}

/// A lesson whose kernels have CUDA C twins: what [`compare_twins`] needs.
pub trait Twinned {
    /// The lesson's kernels on both sides.
    fn kernels(&mut self) -> &mut Kernels;
    /// The kernels compared, by exported symbol (the same on both sides):
    /// by default every kernel the lesson loaded.
    fn compared(&mut self) -> Vec<&'static str> {
        self.kernels().symbols().to_vec()
    }
    /// Runs `symbol` (on the side in use) at the check size, checks it
    /// against the CPU reference, and returns every failure and its output
    /// as each element's bits.
    fn check(&mut self, symbol: &'static str) -> Result<(Vec<Failure>, Vec<u64>)>;
    /// Times `symbol` (on the side in use) at the timed size.
    fn time(&mut self, symbol: &'static str, plan: Plan) -> Result<Timing>;
    /// Why `symbol`'s Rust/C ratio stays above 1.00, from recorded evidence.
    fn gap_note(&self, _symbol: &str) -> Option<&'static str> {
        None
    }
}

/// Every compared kernel of `lesson` beside its twin (already loaded from
/// `c_ptx` into its [`Kernels`]): each side checked against the reference
/// and the two outputs compared bit for bit; then, if every check passed,
/// timed interleaved (Rust, C, Rust, C, ...) `trials` times. The lesson is
/// left on the Rust side, also after an error.
///
/// # Errors
/// Any launch, fault or driver error from the lesson's `check` or `time`.
///
/// # Panics
/// If the lesson's twins were not loaded (a caller bug).
pub fn compare_twins(
    lesson: &mut impl Twinned,
    c_ptx: &str,
    trials: u32,
    plan: Plan,
) -> Result<CompareOutcome> {
    let outcome = compare_both_sides(lesson, c_ptx, trials, plan);
    lesson.kernels().use_side(Side::Rust);
    outcome
}

fn compare_both_sides(
    lesson: &mut impl Twinned,
    c_ptx: &str,
    trials: u32,
    plan: Plan,
) -> Result<CompareOutcome> {
    let symbols = lesson.compared();
    let mut failures = Vec::new();
    let mut agreements = Vec::new();
    for &symbol in &symbols {
        let mut outputs = Vec::new();
        for side in [Side::Rust, Side::CudaC] {
            lesson.kernels().use_side(side);
            let (found, got) = lesson.check(symbol)?;
            failures.extend(found.into_iter().map(|f| Failure {
                detail: format!("({}) {}", side.label(), f.detail),
                ..f
            }));
            outputs.push(got);
        }
        agreements.push(Agreement::of_bits(&outputs[0], &outputs[1]));
    }
    if !failures.is_empty() {
        return Ok(Err(failures));
    }
    let mut pairs = Vec::new();
    for (&symbol, agreement) in symbols.iter().zip(agreements) {
        let timing = interleave(trials, |side| {
            lesson.kernels().use_side(side);
            lesson.time(symbol, plan)
        })?;
        let note = lesson.gap_note(symbol);
        let kernels = lesson.kernels();
        let i = kernels
            .position(symbol)
            .expect("a compared kernel is one the lesson loaded");
        let side = |s| -> &CudaFunction { kernels.get(i, s).expect("both sides are loaded") };
        pairs.push(pair(
            symbol,
            symbol,
            side(Side::Rust),
            side(Side::CudaC),
            c_ptx,
            timing,
            agreement,
            note,
        )?);
    }
    Ok(Ok(pairs))
}

/// Times a host function the way the GPU rows are timed, with the host
/// clock (no device involved): `plan.warmups` calls, then `plan.batches`
/// batches of `plan.launches_per_batch` calls; per-call ms per batch.
pub fn time_on_cpu(plan: Plan, mut f: impl FnMut()) -> Timing {
    for _ in 0..plan.warmups {
        f();
    }
    let samples_ms = (0..plan.batches)
        .map(|_| {
            let start = std::time::Instant::now();
            for _ in 0..plan.launches_per_batch {
                f();
            }
            start.elapsed().as_secs_f64() * 1e3 / plan.launches_per_batch as f64
        })
        .collect();
    Timing { samples_ms }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_divide_counts_by_the_median() {
        let r = Row::new(
            "k",
            "k",
            Timing {
                samples_ms: vec![1.0, 2.0, 4.0],
            },
        )
        .bytes(4e6)
        .flop(2e9);
        assert_eq!(r.gb_per_s(), Some(2.0));
        assert_eq!(r.gflop_per_s(), Some(1000.0));
        assert_eq!(
            Row::new(
                "k",
                "k",
                Timing {
                    samples_ms: vec![1.0]
                }
            )
            .gb_per_s(),
            None
        );
    }
}
