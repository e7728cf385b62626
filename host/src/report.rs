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
