//! What every report carries: the run's context (the measuring chapter's
//! rule: a number means nothing without the GPU, driver, toolchain, sizes
//! and date it was measured with), and the table style.

use comfy_table::{ContentArrangement, Table, presets};
use serde::Serialize;

use crate::clocks::Clocks;
use crate::gpu::DeviceInfo;
use crate::ptx;
use crate::timing::Plan;

/// The context of one run, attached to every JSON row.
#[derive(Debug, Clone, Serialize)]
pub struct Context {
    /// The lesson's name.
    pub lesson: &'static str,
    /// The GPU's name.
    pub gpu: String,
    /// The GPU's UUID (`GPU-...`, as `nvidia-smi -L` writes it): which
    /// physical GPU ran this, where two share a name. `None` where the driver
    /// did not say; records written before this field have none either.
    pub gpu_uuid: Option<String>,
    /// The GPU's PCI bus id (`0000:1b:00.0`, `cuDeviceGetPCIBusId`): which
    /// GPU of the machine ran, whatever CUDA's device order; `None` as for
    /// `gpu_uuid`.
    pub pci_bus_id: Option<String>,
    /// Compute capability, `major.minor`.
    pub compute_capability: String,
    /// Streaming multiprocessors.
    pub sms: u32,
    /// L2 cache, bytes.
    pub l2_bytes: usize,
    /// The NVIDIA kernel module's version, where readable.
    pub driver_version: Option<String>,
    /// The CUDA version the driver supports.
    pub driver_cuda: String,
    /// CUDA's module loading mode, `lazy` or `eager` (`CUDA_MODULE_LOADING`):
    /// it decides when a kernel's code is loaded, so a first call's time.
    /// `None` where the driver did not say, and in older records.
    pub module_loading: Option<String>,
    /// The Rust toolchain that built the kernels and the host.
    pub toolchain: &'static str,
    /// The PTX target architecture and ISA version.
    pub ptx: String,
    /// The lesson's sizes: the same value the run used.
    pub sizes: serde_json::Value,
    /// The buffers the run timed as DRAM streams, with their bytes.
    pub streams: Vec<crate::sizes::Stream>,
    /// The lesson's block shapes.
    pub block_sizes: serde_json::Value,
    /// How each kernel was timed.
    pub timing: Plan,
    /// Whether L2 was flushed between timed launches.
    pub l2_flushed: bool,
    /// When the run started, RFC 3339, UTC.
    pub date: String,
    /// The git commit the binary was built from.
    pub git_commit: &'static str,
    /// The GPU's SM and memory clocks (and temperature and power) while the
    /// run's kernels were timed, with how they were read
    /// ([`crate::clocks`]); "not read" until `lab` sets them after the run.
    pub clocks: Clocks,
    /// The limits derived from the driver's attributes that rows are read
    /// against ([`verdict`]) where a lesson measured no ceiling of its own.
    pub derived_limits: DerivedLimits,
}

/// The GPU's limits derived from the driver's attributes
/// ([`DeviceInfo::derived_dram_bytes_per_s`],
/// [`DeviceInfo::derived_fp32_flop_per_s`]); `None` where an attribute of 0
/// leaves one unknown.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DerivedLimits {
    /// DRAM bandwidth, GB/s (10^9 bytes per second).
    pub dram_gb_per_s: Option<f64>,
    /// FP32 FMA peak, GFLOP/s (10^9 FLOP per second).
    pub fp32_gflop_per_s: Option<f64>,
    /// The L2's size, bytes (`None` where the driver reports 0): a row
    /// whose bytes per launch fit in it is not read against DRAM
    /// ([`DerivedLimits::fits_in_l2`]).
    pub l2_bytes: Option<f64>,
}

impl DerivedLimits {
    /// The derived limits of `info`'s GPU.
    pub fn of(info: &DeviceInfo) -> DerivedLimits {
        DerivedLimits {
            dram_gb_per_s: info.derived_dram_bytes_per_s().map(|b| b / 1e9),
            fp32_gflop_per_s: info.derived_fp32_flop_per_s().map(|f| f / 1e9),
            l2_bytes: (info.l2_bytes > 0).then_some(info.l2_bytes as f64),
        }
    }

    /// Whether a launch that moves `bytes` fits in the L2: then its data can
    /// stay in the cache from one back-to-back launch to the next, and DRAM
    /// bandwidth is not its limit (the roofline and the chapter-19 lessons
    /// size their streams to 4x the L2 or more for that reason). `false`
    /// where either is unknown.
    pub fn fits_in_l2(&self, bytes: Option<f64>) -> bool {
        matches!((bytes, self.l2_bytes), (Some(b), Some(l2)) if b <= l2)
    }

    /// The limit name of the derived DRAM bandwidth in readings.
    pub const DRAM: &'static str = "the derived DRAM bandwidth";
    /// The limit name of the derived FP32 peak in readings.
    pub const FP32: &'static str = "the derived FP32 peak";

    /// The reading of a row that moves `gb_per_s` and does `gflop_per_s`
    /// against whichever derived limit binds it: the one of which it
    /// reaches the larger share. That is the roofline's choice: a kernel
    /// of intensity I reaches a larger share of the bandwidth B than of
    /// the peak P exactly when I < P / B, left of the ridge point. `None`
    /// where neither rate is given or both limits are unknown.
    pub fn binding(&self, gb_per_s: Option<f64>, gflop_per_s: Option<f64>) -> Option<Verdict> {
        let dram = gb_per_s.and_then(|g| verdict(g, self.dram_gb_per_s, Self::DRAM, "GB/s"));
        let fp32 =
            gflop_per_s.and_then(|g| verdict(g, self.fp32_gflop_per_s, Self::FP32, "GFLOP/s"));
        match (dram, fp32) {
            (Some(d), Some(f)) => Some(if f.share_pct > d.share_pct { f } else { d }),
            (d, f) => d.or(f),
        }
    }
}

/// At or above this share of the relevant limit, percent, a kernel is
/// close to done: seed 002 (the measuring chapter, "What to compare
/// against": "At 80% you are close to done").
pub const CLOSE_TO_DONE_PCT: f64 = 80.0;

/// At or below this share of the relevant limit, percent, something is
/// wrong: seed 002 ("At 15% something is wrong", and the chapter on
/// memory access patterns is where to look).
pub const SOMETHING_WRONG_PCT: f64 = 15.0;

/// Where a share of a limit falls among seed 002's bands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Band {
    /// 100% or more: at the limit, or past it, where the limit does not
    /// bind the row (caches served part of its bytes, or the limit
    /// understates the GPU).
    AtOrPastLimit,
    /// [`CLOSE_TO_DONE_PCT`] up to 100%.
    CloseToDone,
    /// Between the bands: the seed's rule gives no verdict; there is room
    /// left, and nothing says the kernel is broken.
    Between,
    /// [`SOMETHING_WRONG_PCT`] or less.
    SomethingWrong,
}

impl Band {
    /// The band of `share_pct` (percent of the limit).
    pub fn of(share_pct: f64) -> Band {
        if share_pct >= 100.0 {
            Band::AtOrPastLimit
        } else if share_pct >= CLOSE_TO_DONE_PCT {
            Band::CloseToDone
        } else if share_pct > SOMETHING_WRONG_PCT {
            Band::Between
        } else {
            Band::SomethingWrong
        }
    }

    /// The band in words, as tables print it.
    pub fn words(self) -> &'static str {
        match self {
            Band::AtOrPastLimit => "at or past the limit",
            Band::CloseToDone => "close to done",
            Band::Between => "between the bands, room left",
            Band::SomethingWrong => "something is wrong",
        }
    }
}

/// A figure read against the limit that applies to it ([`verdict`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// The limit's name ("the measured bandwidth ceiling", "the derived
    /// FP32 peak", ...).
    pub limit: String,
    /// The limit's value, in `unit`.
    pub limit_value: f64,
    /// The unit of the figure and the limit ("GB/s", "GFLOP/s").
    pub unit: &'static str,
    /// The figure as a share of the limit, percent.
    pub share_pct: f64,
    /// Its band.
    pub band: Band,
}

impl Verdict {
    /// The reading in words: `"84.1% of the derived DRAM bandwidth: close
    /// to done"`.
    pub fn words(&self) -> String {
        format!(
            "{:.1}% of {}: {}",
            self.share_pct,
            self.limit,
            self.band.words()
        )
    }

    /// The JSON a row carries: `limit` (the name), `limit_value`,
    /// `limit_unit`, `share_of_limit_pct`, `limit_band` and
    /// `limit_reading` (the words).
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "limit": self.limit, "limit_value": self.limit_value, "limit_unit": self.unit,
            "share_of_limit_pct": self.share_pct, "limit_band": self.band, "limit_reading": self.words(),
        })
    }
}

/// Reads `achieved` against `limit` (both in `unit`), the limit named
/// `name`, by seed 002's rule of thumb (the measuring chapter: divide the
/// bytes moved by the time, compare with the card's peak; "At 80% you are
/// close to done. At 15% something is wrong"). The bands, by share of the
/// limit: 100% or more, at or past it ([`Band::AtOrPastLimit`]: past it,
/// this limit does not bind the row); [`CLOSE_TO_DONE_PCT`] (80%) up to
/// 100%, close to done; [`SOMETHING_WRONG_PCT`] (15%) or less, something
/// is wrong; between the two, the seed says nothing, and the reading says
/// so ([`Band::Between`]: room left, no verdict).
///
/// `None`, not a wrong reading, where the limit is unknown (`None`: a
/// driver attribute of 0), not a positive finite number, or `achieved` is
/// not finite.
pub fn verdict(
    achieved: f64,
    limit: Option<f64>,
    name: &str,
    unit: &'static str,
) -> Option<Verdict> {
    let limit = limit.filter(|l| l.is_finite() && *l > 0.0)?;
    if !achieved.is_finite() || achieved < 0.0 {
        return None;
    }
    let share_pct = 100.0 * achieved / limit;
    Some(Verdict {
        limit: name.to_string(),
        limit_value: limit,
        unit,
        share_pct,
        // The band of the share as printed (one decimal), so 79.96% never
        // reads "80.0% ...: between the bands".
        band: Band::of((share_pct * 10.0).round() / 10.0),
    })
}

impl Context {
    /// The context of a run of `lesson` on `info`'s device that started at
    /// `started` (take it with [`now`] before the first check).
    pub fn new(
        lesson: &'static str,
        info: &DeviceInfo,
        sizes: &impl crate::sizes::LessonSizes,
        block_sizes: serde_json::Value,
        timing: Plan,
        started: String,
    ) -> Context {
        Context {
            lesson,
            gpu: info.name.clone(),
            gpu_uuid: info.uuid.clone(),
            pci_bus_id: info.pci_bus_id.clone(),
            compute_capability: format!(
                "{}.{}",
                info.compute_capability.0, info.compute_capability.1
            ),
            sms: info.sms,
            l2_bytes: info.l2_bytes,
            driver_version: info.driver_version.clone(),
            driver_cuda: info.driver_cuda.clone(),
            module_loading: info.module_loading.clone(),
            toolchain: ptx::RUSTC_VERSION,
            ptx: format!("{} (ISA {})", ptx::target(), ptx::isa_version()),
            sizes: serde_json::to_value(sizes).unwrap_or_default(),
            streams: sizes.streams(),
            block_sizes,
            timing,
            l2_flushed: timing.flush_l2,
            date: started,
            git_commit: ptx::GIT_COMMIT,
            clocks: Clocks::not_read(),
            derived_limits: DerivedLimits::of(info),
        }
    }

    /// The device line every table opens with.
    pub fn device_line(&self) -> String {
        let driver = match &self.driver_version {
            Some(v) => format!("driver {v} (CUDA {})", self.driver_cuda),
            None => format!("driver CUDA {}", self.driver_cuda),
        };
        let pci = self
            .pci_bus_id
            .as_ref()
            .map_or(String::new(), |id| format!(", PCI {id}"));
        format!(
            "GPU: {} (compute capability {}{pci}), {} SMs, {} KiB L2, {}",
            self.gpu,
            self.compute_capability,
            self.sms,
            self.l2_bytes / 1024,
            driver
        )
    }

    /// The lines every table opens with: the device, the build, each
    /// streamed buffer with its multiple of the L2, and the clocks while
    /// timing.
    pub fn header(&self) -> String {
        format!(
            "{}\n{}\n{}\n{}\n",
            self.device_line(),
            self.build_line(),
            crate::sizes::streams_line(&self.streams, self.l2_bytes),
            self.clocks.line()
        )
    }

    /// `gb_per_s` read against the derived DRAM bandwidth ([`verdict`]);
    /// `None` where that limit is unknown.
    pub fn dram_verdict(&self, gb_per_s: f64) -> Option<Verdict> {
        verdict(
            gb_per_s,
            self.derived_limits.dram_gb_per_s,
            DerivedLimits::DRAM,
            "GB/s",
        )
    }

    /// The SM clock over `timing`'s window ([`Clocks::while_timed`]).
    pub fn while_timed(&self, timing: &crate::timing::Timing) -> Option<crate::clocks::WhileTimed> {
        self.clocks.while_timed(timing.window.as_ref())
    }

    /// What the clock flags on the row of `timing`, as one cell; `None`
    /// when nothing is flagged.
    pub fn clock_flag(&self, timing: &crate::timing::Timing) -> Option<String> {
        self.while_timed(timing).and_then(|w| w.flag())
    }

    /// The build line: toolchain and PTX target.
    pub fn build_line(&self) -> String {
        format!(
            "Built by {}, PTX {}, commit {}; run {}",
            self.toolchain, self.ptx, self.git_commit, self.date
        )
    }
}

/// The time now, RFC 3339 in UTC, to the second: a run's start.
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// A table in the project's style: Markdown-compatible ASCII, so a report
/// pastes into a README unchanged.
pub fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_style(presets::ASCII_MARKDOWN)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header.iter().copied());
    t
}

/// How a time compares with a baseline time, in words: `"N% faster"`,
/// `"N% slower"` (N from the time ratio) or `"within 5%"` (a ratio
/// within 1.05 either way: no difference is called inside it).
pub fn relative_speed(ms: f64, baseline_ms: f64) -> String {
    let r = baseline_ms / ms;
    if r > 1.05 {
        format!("{:.0}% faster", (r - 1.0) * 100.0)
    } else if r < 1.0 / 1.05 {
        format!("{:.0}% slower", (1.0 / r - 1.0) * 100.0)
    } else {
        "within 5%".to_string()
    }
}

/// The header of the column that holds each row's [`Verdict`].
pub const VERDICT_COLUMN: &str = "against the limit (seed 002)";

/// The header of the column that holds each row's clock flags
/// ([`crate::clocks::WhileTimed::flag`]); a table has it only where a row
/// is flagged.
pub const CLOCK_COLUMN: &str = "clock while timed";

/// The sentence under a table with verdicts: the bands and their source,
/// and the derived limits' values (or that one is unknown).
pub fn verdict_footnote(limits: &DerivedLimits) -> String {
    let value = |v: Option<f64>, unit: &str| {
        v.map_or("unknown (a driver attribute of 0)".to_string(), |v| {
            format!("{v:.1} {unit}")
        })
    };
    format!(
        "Against the limit: seed 002's rule of thumb, {CLOSE_TO_DONE_PCT:.0}% of the limit or more is close to done, \
         {SOMETHING_WRONG_PCT:.0}% or less says something is wrong, and between the two the rule gives no verdict; a GPU \
         row is read against the derived limit that binds it ({} {}, {} {}, from the driver's attributes) unless its \
         reading names another; a row whose bytes per launch fit in the L2 is not read against DRAM (its data can stay \
         in the cache between launches).",
        DerivedLimits::DRAM,
        value(limits.dram_gb_per_s, "GB/s"),
        DerivedLimits::FP32,
        value(limits.fp32_gflop_per_s, "GFLOP/s"),
    )
}

/// Adds a row's readings to its JSON object: the [`Verdict::json`] keys
/// where a limit applies (`limit`, `limit_value`, `limit_unit`,
/// `share_of_limit_pct`, `limit_band`, `limit_reading`), and
/// `clocks_while_timed` (readings in the row's window, their range, and
/// `flags`) where the row has a timing window and the clocks were read.
pub fn add_readings(
    row: &mut serde_json::Value,
    verdict: Option<&Verdict>,
    clocks: Option<&crate::clocks::WhileTimed>,
) {
    let Some(obj) = row.as_object_mut() else {
        return;
    };
    if let Some(serde_json::Value::Object(v)) = verdict.map(Verdict::json) {
        obj.extend(v);
    }
    if let Some(w) = clocks {
        obj.insert(
            "clocks_while_timed".into(),
            serde_json::to_value(w).unwrap_or_default(),
        );
    }
}
