//! Rust next to CUDA C: the machinery every lesson's comparison reuses.
//! Both implementations of a kernel run on the same buffers, are checked
//! against the same CPU reference and compared with each other bit for bit,
//! then timed interleaved (Rust, C, Rust, C, ...) in one process, so clock
//! and temperature drift hit both alike. Beside the times: what the compiler
//! made of each (registers, shared and local memory per the driver, and the
//! PTX instruction mix that explains most gaps).

use cudarc::driver::CudaFunction;
use cudarc::driver::sys::CUfunction_attribute as FnAttr;
use serde::Serialize;
use serde_json::json;
use statrs::statistics::{Data, Max, Min, OrderStatistics};

use crate::check::Failure;
use crate::error::{DriverContext, Result};
use crate::kernels::{KernelId, KernelSet};
use crate::ptx::PtxMix;
use crate::report::{Context, table};
use crate::timing::{Plan, Timing};

/// Which implementation of a lesson's kernels runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Side {
    /// The Rust kernels (kernels-gpu, the embedded PTX).
    Rust,
    /// The CUDA C twins, compiled by NVRTC for the GPU at hand.
    CudaC,
}

impl Side {
    /// The name a report uses.
    pub fn label(self) -> &'static str {
        match self {
            Side::Rust => "Rust",
            Side::CudaC => "CUDA C",
        }
    }
}

/// What the driver reports about one compiled kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FunctionStats {
    /// Registers per thread.
    pub registers: i32,
    /// Static shared memory per block, bytes.
    pub shared_bytes: i32,
    /// Local memory per thread (spills and stack), bytes.
    pub local_bytes: i32,
}

impl FunctionStats {
    /// Reads the attributes of `f` (`cuFuncGetAttribute`).
    pub fn of(f: &CudaFunction) -> Result<FunctionStats> {
        let attr = |a: FnAttr| f.get_attribute(a).call("cuFuncGetAttribute");
        Ok(FunctionStats {
            registers: attr(FnAttr::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            shared_bytes: attr(FnAttr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
            local_bytes: attr(FnAttr::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
        })
    }
}

/// Interleaved timings of one kernel pair: one median per side per trial.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PairTiming {
    /// Rust's per-launch median of each trial, ms.
    pub rust_ms: Vec<f64>,
    /// CUDA C's per-launch median of each trial, ms.
    pub c_ms: Vec<f64>,
}

impl PairTiming {
    /// Rust / C of each trial: the two were timed back to back.
    pub fn ratios(&self) -> Vec<f64> {
        self.rust_ms
            .iter()
            .zip(&self.c_ms)
            .map(|(r, c)| r / c)
            .collect()
    }

    /// Median of the per-trial ratios.
    pub fn ratio(&self) -> f64 {
        Data::new(self.ratios()).median()
    }

    /// Smallest and largest per-trial ratio.
    pub fn ratio_range(&self) -> (f64, f64) {
        let d = Data::new(self.ratios());
        (d.min(), d.max())
    }

    /// Median of Rust's trial medians, ms.
    pub fn rust_median_ms(&self) -> f64 {
        Data::new(self.rust_ms.clone()).median()
    }

    /// Median of C's trial medians, ms.
    pub fn c_median_ms(&self) -> f64 {
        Data::new(self.c_ms.clone()).median()
    }
}

/// Times `trials` rounds of (Rust, then C) with `time`, which times one side.
pub fn interleave(trials: u32, mut time: impl FnMut(Side) -> Result<Timing>) -> Result<PairTiming> {
    let mut pair = PairTiming::default();
    for _ in 0..trials {
        pair.rust_ms.push(time(Side::Rust)?.median_ms());
        pair.c_ms.push(time(Side::CudaC)?.median_ms());
    }
    Ok(pair)
}

/// One row's comparison from its interleaved `timing`: the driver's
/// statistics of both compiled kernels and the PTX mix of each (`symbol`'s
/// entry in the embedded Rust PTX and in NVRTC's `c_ptx`).
#[allow(clippy::too_many_arguments)]
fn pair(
    label: &'static str,
    symbol: &'static str,
    rust: &CudaFunction,
    c: &CudaFunction,
    c_ptx: &str,
    timing: PairTiming,
    agreement: Agreement,
    note: Option<&'static str>,
) -> Result<ComparedKernel> {
    let mix = |ptx: &str| {
        crate::ptx::entry_body(ptx, symbol)
            .map(PtxMix::of)
            .unwrap_or_default()
    };
    Ok(ComparedKernel {
        label,
        symbol,
        timing,
        rust: FunctionStats::of(rust)?,
        c: FunctionStats::of(c)?,
        rust_mix: mix(crate::ptx::PTX),
        c_mix: mix(c_ptx),
        agreement,
        note,
    })
}

/// How the two outputs compare.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Agreement {
    /// Every element has the same bits.
    Identical,
    /// `count` elements differ; the first at `first`.
    Differ {
        /// Elements whose bits differ.
        count: usize,
        /// The first such index.
        first: usize,
    },
}

impl Agreement {
    /// Compares two outputs bit for bit.
    pub fn of(rust: &[f32], c: &[f32]) -> Agreement {
        let bits = |x: &[f32]| {
            x.iter()
                .map(|v| u64::from(v.to_bits()))
                .collect::<Vec<u64>>()
        };
        Agreement::of_bits(&bits(rust), &bits(c))
    }

    /// Compares two outputs given as each element's bits (any element type
    /// up to 64 bits: `f32::to_bits`, `f64::to_bits`, `f16::to_bits` widened).
    pub fn of_bits(rust: &[u64], c: &[u64]) -> Agreement {
        let mut differ = rust.iter().zip(c).enumerate().filter(|(_, (r, c))| r != c);
        match differ.next() {
            None if rust.len() == c.len() => Agreement::Identical,
            None => Agreement::Differ {
                count: rust.len().abs_diff(c.len()),
                first: rust.len().min(c.len()),
            },
            Some((first, _)) => Agreement::Differ {
                count: 1 + differ.count(),
                first,
            },
        }
    }

    fn text(&self) -> String {
        match self {
            Agreement::Identical => "identical".into(),
            Agreement::Differ { count, first } => format!("{count} differ (first at {first})"),
        }
    }
}

/// One kernel's comparison.
#[derive(Debug, Clone, Serialize)]
pub struct ComparedKernel {
    /// The row label.
    pub label: &'static str,
    /// The exported name on both sides.
    pub symbol: &'static str,
    /// The interleaved timings.
    pub timing: PairTiming,
    /// Rust's compiled kernel.
    pub rust: FunctionStats,
    /// CUDA C's compiled kernel.
    pub c: FunctionStats,
    /// Rust's PTX instruction mix.
    pub rust_mix: PtxMix,
    /// CUDA C's PTX instruction mix.
    pub c_mix: PtxMix,
    /// Rust's output against C's.
    pub agreement: Agreement,
    /// Why a ratio above 1.00 stays, from the evidence; `None` elsewhere.
    pub note: Option<&'static str>,
}

/// A lesson's comparison: the context and every kernel pair.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// Lines the lesson adds under the header (what the comparison ran at).
    pub notes: Vec<String>,
    /// The run's context.
    pub context: Context,
    /// NVRTC's version, `major.minor`.
    pub nvrtc: String,
    /// Interleaved trials per kernel.
    pub trials: u32,
    /// The kernels, in table order.
    pub kernels: Vec<ComparedKernel>,
}

impl Comparison {
    /// The human-readable report.
    pub fn table(&self) -> String {
        let c = &self.context;
        let mut s = format!(
            "{}CUDA C twins compiled by NVRTC {} for sm_{} with nvcc's defaults (FMA contraction on).\n{}\
             Each row: {} trials, each timing Rust then CUDA C ({} warm-ups, median of {} batches of {} launches each); \
             ratio = Rust / C per trial, median and range.\n\
             Every row on both sides matches the CPU reference.\n\n",
            c.header(),
            self.nvrtc,
            c.compute_capability.replace('.', ""),
            self.notes
                .iter()
                .map(|n| format!("{n}\n"))
                .collect::<String>(),
            self.trials,
            c.timing.warmups,
            c.timing.batches,
            c.timing.launches_per_batch,
        );
        // A row that runs a sequence (softmax's variants) names the kernel
        // whose registers and PTX it shows; elsewhere the row is the kernel.
        let sequences = self.kernels.iter().any(|k| k.label != k.symbol);
        let mut header = vec!["kernel"];
        if sequences {
            header = vec!["row", "main kernel"];
        }
        header.extend([
            "Rust ms",
            "C ms",
            "Rust/C",
            "range",
            "regs R/C",
            "smem R/C",
            "local R/C",
            "outputs",
        ]);
        let mut t = table(&header);
        for k in &self.kernels {
            let (lo, hi) = k.timing.ratio_range();
            let mut row = vec![k.label.to_string()];
            if sequences {
                row.push(k.symbol.to_string());
            }
            row.extend([
                format!("{:.4}", k.timing.rust_median_ms()),
                format!("{:.4}", k.timing.c_median_ms()),
                format!("{:.3}", k.timing.ratio()),
                format!("{lo:.3}-{hi:.3}"),
                format!("{}/{}", k.rust.registers, k.c.registers),
                format!("{}/{}", k.rust.shared_bytes, k.c.shared_bytes),
                format!("{}/{}", k.rust.local_bytes, k.c.local_bytes),
                k.agreement.text(),
            ]);
            t.add_row(row);
        }
        s.push_str(&format!(
            "{t}\n\nPTX instruction mix (static counts: a loop body counts once)\n"
        ));
        let mut t = table(&[
            "kernel",
            "side",
            "loads and stores by space, path, width",
            "fma",
            "bra",
        ]);
        for k in &self.kernels {
            for (side, mix) in [(Side::Rust, &k.rust_mix), (Side::CudaC, &k.c_mix)] {
                let accesses: Vec<String> = mix
                    .accesses
                    .iter()
                    .map(|(key, n)| format!("{key} x{n}"))
                    .collect();
                t.add_row(vec![
                    k.symbol.to_string(),
                    side.label().to_string(),
                    accesses.join(", "),
                    mix.fma_f32.to_string(),
                    mix.branches.to_string(),
                ]);
            }
        }
        s.push_str(&format!("{t}\n"));
        // A kernel is slower only when every trial says so; a range that
        // spans 1.00 is parity within this run's noise.
        let slower: Vec<&ComparedKernel> = self
            .kernels
            .iter()
            .filter(|k| k.timing.ratio_range().0 > 1.0)
            .collect();
        let parity = self.kernels.len() - slower.len();
        s.push_str(&format!(
            "{parity} of {} rows: Rust at or under CUDA C, or within the trial range (it spans 1.00).\n",
            self.kernels.len()
        ));
        for k in slower {
            s.push_str(&format!(
                "{}: Rust/C {:.3} in every trial. {}\n",
                k.label,
                k.timing.ratio(),
                k.note.unwrap_or("No explanation recorded yet.")
            ));
        }
        s
    }

    /// One JSON object per kernel, with the run's context.
    pub fn json_lines(&self) -> Vec<serde_json::Value> {
        self.kernels
            .iter()
            .map(|k| {
                let (lo, hi) = k.timing.ratio_range();
                json!({
                    "variant": k.label, "symbol": k.symbol,
                    "rust_ms": k.timing.rust_median_ms(), "c_ms": k.timing.c_median_ms(),
                    "ratio": k.timing.ratio(), "ratio_min": lo, "ratio_max": hi,
                    "trials": k.timing,
                    "rust": k.rust, "c": k.c, "rust_mix": k.rust_mix, "c_mix": k.c_mix,
                    "agreement": k.agreement, "note": k.note,
                    "nvrtc": self.nvrtc,
                    "context": self.context,
                })
            })
            .collect()
    }
}

/// A lesson whose kernels have CUDA C twins, compared kernel by kernel:
/// what most lessons implement. Every such lesson is a [`TwinRows`] whose
/// rows are its kernels.
pub trait Twinned {
    /// The lesson's kernels.
    type Kernel: KernelId;
    /// The lesson's kernels on both sides.
    fn kernels(&mut self) -> &mut KernelSet<Self::Kernel>;
    /// The kernels compared, in order: by default all of them.
    fn compared(&self) -> Vec<Self::Kernel> {
        Self::Kernel::ALL.to_vec()
    }
    /// Runs `kernel` (on the side in use) at the check size, checks it
    /// against the CPU reference, and returns every failure and the output
    /// as each element's bits.
    ///
    /// # Errors
    /// Launch, fault and driver errors.
    fn check(&mut self, kernel: Self::Kernel) -> Result<(Vec<Failure>, Vec<u64>)>;
    /// Times `kernel` (on the side in use) at the timed size.
    ///
    /// # Errors
    /// Launch, fault and driver errors.
    fn time(&mut self, kernel: Self::Kernel, plan: Plan) -> Result<Timing>;
    /// Why the kernel's Rust/C ratio stays above 1.00, from recorded
    /// evidence.
    fn gap_note(&self, _kernel: Self::Kernel) -> Option<&'static str> {
        None
    }
}

/// What [`compare_twins`] needs: rows, each run and timed on either side.
/// A row is a `Unit`: one kernel (every [`Twinned`] lesson), or a launch
/// sequence (softmax's variants).
pub trait TwinRows {
    /// The lesson's kernels.
    type Kernel: KernelId;
    /// What one comparison row runs.
    type Unit: Copy;
    /// The lesson's kernels on both sides.
    fn kernel_set(&mut self) -> &mut KernelSet<Self::Kernel>;
    /// The rows compared, in order.
    fn units(&self) -> Vec<Self::Unit>;
    /// The row's label (the kernel's symbol, where the row is a kernel).
    fn label(&self, unit: Self::Unit) -> &'static str;
    /// The kernel whose registers and PTX the row shows.
    fn kernel(&self, unit: Self::Unit) -> Self::Kernel;
    /// As [`Twinned::check`], for a row.
    ///
    /// # Errors
    /// Launch, fault and driver errors.
    fn check_unit(&mut self, unit: Self::Unit) -> Result<(Vec<Failure>, Vec<u64>)>;
    /// As [`Twinned::time`], for a row.
    ///
    /// # Errors
    /// Launch, fault and driver errors.
    fn time_unit(&mut self, unit: Self::Unit, plan: Plan) -> Result<Timing>;
    /// As [`Twinned::gap_note`], for a row.
    fn note(&self, _unit: Self::Unit) -> Option<&'static str> {
        None
    }
}

impl<T: Twinned> TwinRows for T {
    type Kernel = T::Kernel;
    type Unit = T::Kernel;

    fn kernel_set(&mut self) -> &mut KernelSet<T::Kernel> {
        self.kernels()
    }

    fn units(&self) -> Vec<T::Kernel> {
        self.compared()
    }

    fn label(&self, kernel: T::Kernel) -> &'static str {
        kernel.symbol()
    }

    fn kernel(&self, kernel: T::Kernel) -> T::Kernel {
        kernel
    }

    fn check_unit(&mut self, kernel: T::Kernel) -> Result<(Vec<Failure>, Vec<u64>)> {
        self.check(kernel)
    }

    fn time_unit(&mut self, kernel: T::Kernel, plan: Plan) -> Result<Timing> {
        self.time(kernel, plan)
    }

    fn note(&self, kernel: T::Kernel) -> Option<&'static str> {
        self.gap_note(kernel)
    }
}

/// Every row of `lesson` beside its twin (the twins already loaded from
/// `c_ptx` into its [`KernelSet`]): each side checked against the reference
/// and the two outputs compared bit for bit; then, if every check passed,
/// timed interleaved (Rust, C, Rust, C, ...) `trials` times. The lesson is
/// left on the Rust side, also after an error.
///
/// # Errors
/// Any launch, fault or driver error from the lesson's `check` or `time`.
///
/// # Panics
/// If the lesson's twins were not loaded (a caller bug).
pub fn compare_twins<T: TwinRows>(
    lesson: &mut T,
    c_ptx: &str,
    trials: u32,
    plan: Plan,
) -> Result<crate::lesson::CompareOutcome> {
    let outcome = compare_both_sides(lesson, c_ptx, trials, plan);
    lesson.kernel_set().use_side(Side::Rust);
    outcome
}

fn compare_both_sides<T: TwinRows>(
    lesson: &mut T,
    c_ptx: &str,
    trials: u32,
    plan: Plan,
) -> Result<crate::lesson::CompareOutcome> {
    let units = lesson.units();
    let mut failures = Vec::new();
    let mut agreements = Vec::new();
    for &unit in &units {
        let mut outputs = Vec::new();
        for side in [Side::Rust, Side::CudaC] {
            lesson.kernel_set().use_side(side);
            let (found, got) = lesson.check_unit(unit)?;
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
    for (&unit, agreement) in units.iter().zip(agreements) {
        let timing = interleave(trials, |side| {
            lesson.kernel_set().use_side(side);
            lesson.time_unit(unit, plan)
        })?;
        let (label, kernel, note) = (lesson.label(unit), lesson.kernel(unit), lesson.note(unit));
        let kernels = lesson.kernel_set();
        let side = |s| kernels.get(kernel, s).expect("both sides are loaded");
        pairs.push(pair(
            label,
            kernel.symbol(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_counts_differing_bits() {
        assert_eq!(
            Agreement::of(&[1.0, 2.0], &[1.0, 2.0]),
            Agreement::Identical
        );
        assert_eq!(
            Agreement::of(&[1.0, 2.0, 3.0, -0.0], &[1.0, 2.5, 3.0, 0.0]),
            Agreement::Differ { count: 2, first: 1 }
        );
    }

    #[test]
    fn ratios_pair_trials() {
        let t = PairTiming {
            rust_ms: vec![1.0, 2.0, 3.0],
            c_ms: vec![2.0, 2.0, 2.0],
        };
        assert_eq!(t.ratios(), [0.5, 1.0, 1.5]);
        assert_eq!(t.ratio(), 1.0);
        assert_eq!(t.ratio_range(), (0.5, 1.5));
        assert_eq!(t.rust_median_ms(), 2.0);
    }
}
