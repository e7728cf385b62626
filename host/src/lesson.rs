//! The one lesson layer: what every lesson is to `lab` ([`Lesson`]: its
//! name, kernels, sizes, capabilities, run, CUDA C twins and comparison),
//! what a run hands back ([`Outcome`] of a [`Report`]), and the report the
//! chapter-19 lessons share ([`SectionReport`]: sections of traced or
//! counted text, then timed rows with their bytes and FLOP).
//!
//! `crate::runner` drives every lesson through this interface, so a flag
//! works the same for each: `--json`, `--quick`, `--compare`, `--record`,
//! `--baseline`, `--flush-l2`, `--asm`, `--profile`, `--ncu` and
//! `--ncu-csv` (the profile by default launches every row of the lesson's
//! twin set once: [`profile_rows`]); the flags only some lessons take
//! (`--plot`, `--graphs-dir`) are refused from the lesson's
//! [`Capabilities`]. Each lesson keeps its kernels in
//! `kernels-gpu/src/<lesson>.rs` and its host side (references, launches,
//! checks, report) in `host/src/<lesson>/` beside its CUDA C twins; this
//! module holds none of a lesson's content.

use std::path::Path;

use serde_json::json;

use crate::check::Failure;
use crate::compare::{ComparedKernel, Comparison, TwinRows};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::kernels::KernelId;
use crate::ncu::{CacheControl, Profile};
use crate::plot::Chart;
use crate::report::{Context, DerivedLimits, Verdict, table, verdict};
use crate::sizes::LessonSizes;
use crate::timing::{Plan, Timing};

/// The flags only some lessons take. Every other flag works for every
/// lesson; a flag a lesson's capabilities lack is refused with one line
/// naming the lessons that take it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// `--plot FILE.svg`: the roofline chart.
    pub plot: bool,
    /// `--graphs-dir DIR`: each captured CUDA graph as a DOT file.
    pub graphs_dir: bool,
}

impl Capabilities {
    /// None of the optional flags.
    pub const NONE: Capabilities = Capabilities {
        plot: false,
        graphs_dir: false,
    };
}

/// What the command line asks of one lesson run, beside the sizes.
pub struct RunOptions<'a> {
    /// How each kernel is timed.
    pub plan: Plan,
    /// `--quick`: the sanitizer's small sizes (every check still made).
    pub quick: bool,
    /// `--graphs-dir`: where to write each CUDA graph as DOT (created
    /// before the run).
    pub graphs_dir: Option<&'a Path>,
    /// A progress bar on stderr (hidden for `--json` and off a terminal).
    pub progress: &'a indicatif::ProgressBar,
}

/// The outcome of a lesson's run: its report, or every failed check (and
/// no figure).
pub enum Outcome<R> {
    /// Every check passed.
    Passed(R),
    /// At least one check failed: every failure, no figure.
    Failed(Vec<Failure>),
    /// A kernel faulted (or the driver failed) after these checks failed:
    /// the context is unusable, so the run stops with the error.
    Faulted {
        /// Checks that failed before the fault.
        failures: Vec<Failure>,
        /// The fault.
        error: Error,
    },
}

impl<R> Outcome<R> {
    /// The same outcome, its report (if it passed) mapped by `f`.
    pub fn map<S>(self, f: impl FnOnce(R) -> S) -> Outcome<S> {
        match self {
            Outcome::Passed(r) => Outcome::Passed(f(r)),
            Outcome::Failed(failures) => Outcome::Failed(failures),
            Outcome::Faulted { failures, error } => Outcome::Faulted { failures, error },
        }
    }
}

/// The outcome of a comparison: every kernel pair, or every failed check.
pub type CompareOutcome = std::result::Result<Vec<ComparedKernel>, Vec<Failure>>;

/// What every lesson's report gives `lab`: a table for people and JSON
/// lines for scripts, both carrying the run's context.
pub trait Report {
    /// The run's context (for the clocks `lab` reads around the run).
    fn context_mut(&mut self) -> &mut Context;
    /// The report for people.
    fn table(&self) -> String;
    /// One JSON object per row, each with the run's context; a timed row
    /// has `symbol` (unique in the run) and `samples_ms`, which `--record`
    /// and `--baseline` match.
    fn json_lines(&self) -> Vec<serde_json::Value>;
    /// The roofline chart, for lessons that take `--plot`.
    fn chart(&self) -> Option<Chart> {
        None
    }
    /// Reads Nsight Compute's counters into the lesson's own figures, for
    /// lessons whose reading uses them (every report also gets the shared
    /// counters section and `ncu` keys from `crate::runner`).
    fn merge_counters(&mut self, _profile: &Profile) {}
}

/// A lesson as `lab` runs it. Implemented once per lesson, on a unit type
/// in the lesson's module; `crate::runner::drive` runs any of them.
pub trait Lesson {
    /// The name on the command line.
    const NAME: &'static str;
    /// One line: what the lesson teaches.
    const ABOUT: &'static str;
    /// The optional flags it takes.
    const CAPABILITIES: Capabilities = Capabilities::NONE;
    /// Its kernels.
    type Kernel: KernelId;
    /// Its sizes, from `--quick` and the GPU's facts
    /// ([`LessonSizes::for_gpu`]).
    type Sizes: LessonSizes;
    /// Its kernels on one GPU, with buffers at the run's sizes: what its
    /// comparison with the CUDA C twins runs
    /// ([`crate::compare::compare_twins`]).
    type Twins<'g>: TwinRows;

    /// The block shapes, as the context records them.
    fn block_sizes() -> serde_json::Value;

    /// The lesson's kernels in the base (sm_75) module beyond
    /// [`Lesson::Kernel`]'s, each symbol with its declared parameters:
    /// kernels it loads through a set of their own (the GEMM lesson's f16
    /// kernel). None by default.
    fn more_base_kernels() -> Vec<(&'static str, &'static [crate::kernels::Param])> {
        Vec::new()
    }

    /// The lesson's kernels in the base module that have no CUDA C twin,
    /// each symbol with its declared parameters: measuring kernels only
    /// Rust runs (the roofline's FP16 tensor-core chains). The signature
    /// test holds them against the Rust PTX alone. None by default.
    fn rust_only_base_kernels() -> Vec<(&'static str, &'static [crate::kernels::Param])> {
        Vec::new()
    }

    /// The CUDA C program NVRTC compiles for the twins (the lesson's
    /// constants as `#define`s, then `<lesson>.cu`).
    fn cuda_c() -> String;

    /// Checks every kernel against its CPU reference, then (only if all are
    /// right) measures, and reports with `context`.
    ///
    /// # Errors
    /// Allocation, launch, fault and driver errors.
    fn run(
        gpu: &Gpu,
        sizes: &Self::Sizes,
        context: Context,
        options: &RunOptions<'_>,
    ) -> Result<Outcome<Box<dyn Report>>>;

    /// The lesson's kernels and buffers at `sizes`, for the comparison.
    ///
    /// # Errors
    /// As [`Lesson::run`].
    fn twins<'g>(gpu: &'g Gpu, sizes: &Self::Sizes) -> Result<Self::Twins<'g>>;

    /// Lines the comparison prints under its header (what it ran at, where
    /// that differs from the lesson's run).
    fn compare_notes(_sizes: &Self::Sizes) -> Vec<String> {
        Vec::new()
    }

    /// The architecture NVRTC compiles the twins for on a GPU of compute
    /// capability `cc` (and ptxas assembles both sides' SASS for): the GPU's
    /// own `sm_XY`, unless a twin needs an architecture-specific target
    /// (`sm_90a` for `wgmma`).
    fn twin_arch(cc: (i32, i32)) -> String {
        format!("sm_{}{}", cc.0, cc.1)
    }

    /// The comparison's chart, for lessons that take `--plot`.
    fn compare_chart(_sizes: &Self::Sizes, _comparison: &Comparison) -> Option<Chart> {
        None
    }

    /// How ncu treats the caches between this lesson's profiled kernels:
    /// flushed before each (cold-cache bytes, ncu's default) unless the
    /// lesson's reading needs each kernel to meet the caches as the kernel
    /// before it left them.
    const NCU_CACHE: CacheControl = CacheControl::Flush;

    /// `--profile`: one launch of each kernel and nothing else, for a
    /// profiler; returns the line to print. By default every row of the
    /// lesson's twin set ([`Lesson::twins`], at the run's sizes) on the Rust
    /// side, once ([`profile_rows`]).
    ///
    /// # Errors
    /// Allocation, launch and driver errors.
    fn profile(gpu: &Gpu, sizes: &Self::Sizes) -> Result<String> {
        let mut twins = Self::twins(gpu, sizes)?;
        let rows = profile_rows(&mut twins)?;
        Ok(format!(
            "profile mode: {rows} rows of the {} lesson launched once each (Rust kernels, the run's sizes), no checks",
            Self::NAME
        ))
    }
}

/// One launch and nothing more: how [`profile_rows`] runs a row through its
/// timing path (a pair of CUDA events around it, which ncu does not
/// profile; no warm-up, no L2 flush).
pub const PROFILE_PLAN: Plan = Plan {
    warmups: 0,
    batches: 1,
    launches_per_batch: 1,
    flush_l2: false,
};

/// Launches every row of `rows` (a lesson's twin set) once on the Rust side
/// at the set's sizes, through the row's own timing path with
/// [`PROFILE_PLAN`], so a profiler sees each kernel the lesson times with
/// the buffers and shape it times it at. Returns the rows launched.
///
/// # Errors
/// Launch, fault and driver errors.
pub fn profile_rows<T: TwinRows>(rows: &mut T) -> Result<usize> {
    rows.use_side(crate::compare::Side::Rust);
    let units = rows.units();
    for &unit in &units {
        rows.time_unit(unit, PROFILE_PLAN)?;
    }
    Ok(units.len())
}

/// The JSON fields every row's line has (and [`Row::field`] may not add).
pub const COMMON_ROW_FIELDS: &[&str] = &[
    "lesson",
    "section",
    "variant",
    "symbol",
    "label",
    "on",
    "timed_by",
    "median_ms",
    "min_ms",
    "max_ms",
    "samples_ms",
    "bytes",
    "gb_per_s",
    "flop",
    "gflop_per_s",
    "context",
];

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
    /// The limit the row's rate is read against ([`Row::verdict`]).
    pub limit: RowLimit,
    /// Fields a lesson adds to the row's JSON line beyond the common ones
    /// (the GEMM lesson's `precision` and `cublas_share`, say); a key of
    /// [`COMMON_ROW_FIELDS`] here is ignored in the JSON line.
    pub fields: serde_json::Map<String, serde_json::Value>,
}

/// The limit a row's rate is read against, by seed 002's rule of thumb
/// ([`crate::report::verdict`]).
#[derive(Debug, Clone, PartialEq)]
pub enum RowLimit {
    /// The GPU's derived limits ([`DerivedLimits::binding`]): the DRAM
    /// bandwidth for the row's GB/s, the FP32 peak for its GFLOP/s,
    /// whichever binds. What every GPU row timed by CUDA events gets
    /// unless its lesson names another, so rows added later are read too.
    Derived,
    /// A limit the lesson names, in GB/s (read against the row's GB/s):
    /// a PCIe link, a measured ceiling. `None` where the lesson could not
    /// tell the value: no reading then.
    GbPerS {
        /// The name, as the reading prints it ("the PCIe link").
        name: String,
        /// The value, GB/s.
        value: Option<f64>,
    },
    /// A limit the lesson names, in GFLOP/s (read against the row's
    /// GFLOP/s): a measured compute ceiling. `None` where the lesson could
    /// not tell the value: no reading then.
    GflopPerS {
        /// The name, as the reading prints it ("the measured tensor-core
        /// ceiling").
        name: String,
        /// The value, GFLOP/s.
        value: Option<f64>,
    },
    /// No limit applies: a CPU row, GPU work timed by the host clock (its
    /// time is not the kernel's), or a row its lesson says has none.
    None,
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
            limit: RowLimit::Derived,
            fields: serde_json::Map::new(),
        }
    }

    /// The same row with `key: value` added to its JSON line. A key the
    /// common fields already use is refused (a lesson bug), so a lesson
    /// cannot shadow `median_ms` or `symbol`.
    ///
    /// # Panics
    /// On a key of the common fields.
    pub fn field(mut self, key: &str, value: serde_json::Value) -> Row {
        assert!(
            !COMMON_ROW_FIELDS.contains(&key),
            "{key} is one of every row's own JSON fields"
        );
        self.fields.insert(key.to_string(), value);
        self
    }

    /// The same row, read against a limit of `value` GB/s named `name`
    /// (`None`: unknown, no reading) instead of the derived limits.
    pub fn against_gb_per_s(self, name: impl Into<String>, value: Option<f64>) -> Row {
        Row {
            limit: RowLimit::GbPerS {
                name: name.into(),
                value,
            },
            ..self
        }
    }

    /// The same row, read against a limit of `value` GFLOP/s named `name`
    /// (`None`: unknown, no reading) instead of the derived limits.
    pub fn against_gflop_per_s(self, name: impl Into<String>, value: Option<f64>) -> Row {
        Row {
            limit: RowLimit::GflopPerS {
                name: name.into(),
                value,
            },
            ..self
        }
    }

    /// The same row, read against no limit.
    pub fn no_limit(self) -> Row {
        Row {
            limit: RowLimit::None,
            ..self
        }
    }

    /// The row's rate read against its limit: `None` for a CPU row, a
    /// host-clocked row, a row with [`RowLimit::None`], no rate, or an
    /// unknown limit.
    pub fn verdict(&self, derived: &DerivedLimits) -> Option<Verdict> {
        if self.cpu || self.host_clock {
            return None;
        }
        match &self.limit {
            RowLimit::Derived => derived.binding(
                self.gb_per_s().filter(|_| !derived.fits_in_l2(self.bytes)),
                self.gflop_per_s(),
            ),
            RowLimit::GbPerS { name, value } => verdict(self.gb_per_s()?, *value, name, "GB/s"),
            RowLimit::GflopPerS { name, value } => {
                verdict(self.gflop_per_s()?, *value, name, "GFLOP/s")
            }
            RowLimit::None => None,
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

/// The report the chapter-19 lessons share: the run's context and the
/// sections the lesson found.
pub struct SectionReport {
    /// The run's context.
    pub context: Context,
    /// What the lesson found.
    pub findings: Findings,
}

impl SectionReport {
    /// A report of `findings` under `context`.
    ///
    /// # Errors
    /// [`Error::Bug`] naming a row key used twice (records and
    /// `--baseline` match rows by key).
    pub fn new(context: Context, findings: Findings) -> Result<SectionReport> {
        let report = SectionReport { context, findings };
        if let Some(key) = report.duplicate_key() {
            return Err(Error::Bug(format!(
                "the {} lesson reported two rows named `{key}` (row keys must be unique: records and --baseline match rows by them)",
                report.context.lesson
            )));
        }
        Ok(report)
    }

    /// The outcome of a passed run: this report of `findings`, boxed.
    ///
    /// # Errors
    /// As [`SectionReport::new`].
    pub fn passed(context: Context, findings: Findings) -> Result<Outcome<Box<dyn Report>>> {
        Ok(Outcome::Passed(Box::new(SectionReport::new(
            context, findings,
        )?)))
    }
}

impl Report for SectionReport {
    fn context_mut(&mut self) -> &mut Context {
        &mut self.context
    }

    /// The report for people: the context's header, then each section's
    /// text, its rows as a table and their reading.
    fn table(&self) -> String {
        let mut s = self.context.header();
        let plan = self.context.timing;
        let limits = &self.context.derived_limits;
        let clocks = &self.context.clocks;
        for section in &self.findings.sections {
            s.push_str(&format!("\n== {} ==\n", section.title));
            for line in &section.text {
                s.push_str(line);
                s.push('\n');
            }
            if !section.rows.is_empty() {
                // The verdict column where a row has a limit, the clock
                // column where a row's clock is flagged.
                let verdicts: Vec<Option<Verdict>> =
                    section.rows.iter().map(|r| r.verdict(limits)).collect();
                let flags: Vec<Option<String>> = section
                    .rows
                    .iter()
                    .map(|r| {
                        clocks
                            .while_timed(r.timing.window.as_ref())
                            .and_then(|w| w.flag())
                    })
                    .collect();
                let (with_verdict, with_flag) = (
                    verdicts.iter().any(Option::is_some),
                    flags.iter().any(Option::is_some),
                );
                let mut header = vec![
                    "row",
                    "what",
                    "median ms",
                    "spread %",
                    "GB/s",
                    "GFLOP/s",
                    "on",
                ];
                if with_verdict {
                    header.push(crate::report::VERDICT_COLUMN);
                }
                if with_flag {
                    header.push(crate::report::CLOCK_COLUMN);
                }
                let mut t = table(&header);
                for (i, r) in section.rows.iter().enumerate() {
                    let mut cells = vec![
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
                    ];
                    if with_verdict {
                        cells.push(verdicts[i].as_ref().map_or("-".to_string(), Verdict::words));
                    }
                    if with_flag {
                        cells.push(flags[i].clone().unwrap_or_else(|| "-".to_string()));
                    }
                    t.add_row(cells);
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
        if rows.iter().any(|r| r.verdict(limits).is_some()) {
            footer.push(crate::report::verdict_footnote(limits));
        }
        if !footer.is_empty() {
            s.push_str(&format!("\n{}\n", footer.join(" ")));
        }
        s
    }

    /// One JSON object per timed row, then one with the facts; each with
    /// the run's context.
    fn json_lines(&self) -> Vec<serde_json::Value> {
        let c = &self.context;
        let mut lines: Vec<serde_json::Value> = self
            .findings
            .sections
            .iter()
            .flat_map(|section| {
                section.rows.iter().map(move |r| {
                    let mut row = json!({
                        "lesson": c.lesson, "section": section.title, "variant": "timed",
                        "symbol": r.key, "label": r.label, "on": if r.cpu { "cpu" } else { "gpu" },
                        "timed_by": if r.host_clock { "host clock" } else { "cuda events" },
                        "median_ms": r.timing.median_ms(), "min_ms": r.timing.min_ms(), "max_ms": r.timing.max_ms(),
                        "samples_ms": r.timing.samples_ms,
                        "bytes": r.bytes, "gb_per_s": r.gb_per_s(), "flop": r.flop, "gflop_per_s": r.gflop_per_s(),
                        "context": c,
                    });
                    if let Some(object) = row.as_object_mut() {
                        // A lesson's fields never replace a common one.
                        for (key, value) in &r.fields {
                            object.entry(key.clone()).or_insert_with(|| value.clone());
                        }
                    }
                    crate::report::add_readings(
                        &mut row,
                        r.verdict(&c.derived_limits).as_ref(),
                        c.clocks.while_timed(r.timing.window.as_ref()).as_ref(),
                    );
                    row
                })
            })
            .collect();
        lines.push(json!({"lesson": c.lesson, "variant": "facts", "facts": self.findings.facts, "context": c}));
        lines
    }
}

/// A number with `digits` decimals, or a dash.
fn cell(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.digits$}"))
}

impl SectionReport {
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
    Timing::new(samples_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_divide_counts_by_the_median() {
        let r = Row::new("k", "k", Timing::new(vec![1.0, 2.0, 4.0]))
            .bytes(4e6)
            .flop(2e9);
        assert_eq!(r.gb_per_s(), Some(2.0));
        assert_eq!(r.gflop_per_s(), Some(1000.0));
        assert_eq!(Row::new("k", "k", Timing::new(vec![1.0])).gb_per_s(), None);
    }
}
