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

use crate::error::{DriverContext, Result};
use crate::ptx::PtxMix;
use crate::report::{Context, table};
use crate::timing::Timing;

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

/// A lesson's compiled kernels on both sides, by position in the lesson's
/// kernel list, and which side launches use now.
pub struct Kernels {
    symbols: Vec<&'static str>,
    rust: Vec<CudaFunction>,
    twins: Option<Vec<CudaFunction>>,
    active: Side,
}

impl Kernels {
    /// The Rust kernels named `symbols`, from the embedded PTX; their
    /// positions are their places in `symbols`.
    pub fn new(gpu: &crate::gpu::Gpu, symbols: &[&'static str]) -> crate::error::Result<Kernels> {
        Ok(Kernels {
            symbols: symbols.to_vec(),
            rust: symbols
                .iter()
                .map(|s| gpu.function(s))
                .collect::<crate::error::Result<_>>()?,
            twins: None,
            active: Side::Rust,
        })
    }

    /// Loads the CUDA C twins of the same symbols from NVRTC's `ptx`.
    ///
    /// # Errors
    /// The driver refusing the PTX, or a symbol missing from it.
    pub fn load_twins(&mut self, gpu: &crate::gpu::Gpu, ptx: &str) -> crate::error::Result<()> {
        self.twins = Some(gpu.load_twins(ptx, &self.symbols)?);
        Ok(())
    }

    /// The kernels' symbols, in position order.
    pub fn symbols(&self) -> &[&'static str] {
        &self.symbols
    }

    /// The position of `symbol`; `None` for a symbol not in the list.
    pub fn position(&self, symbol: &str) -> Option<usize> {
        self.symbols.iter().position(|s| *s == symbol)
    }

    /// Makes later launches use `side`.
    ///
    /// # Panics
    /// On [`Side::CudaC`] before [`Kernels::load_twins`] (a caller bug).
    pub fn use_side(&mut self, side: Side) {
        assert!(
            side == Side::Rust || self.twins.is_some(),
            "load_twins first"
        );
        self.active = side;
    }

    /// The kernel at position `i` on `side`.
    pub fn get(&self, i: usize, side: Side) -> Option<&CudaFunction> {
        match side {
            Side::Rust => self.rust.get(i),
            Side::CudaC => self.twins.as_ref().and_then(|t| t.get(i)),
        }
    }

    /// The kernel at position `i` on the side in use.
    ///
    /// # Panics
    /// For a position past the lesson's list (a caller bug).
    pub fn active(&self, i: usize) -> &CudaFunction {
        self.get(i, self.active)
            .expect("a kernel of the lesson's list")
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

/// One kernel's comparison from its interleaved `timing`: the driver's
/// statistics of both compiled kernels and the PTX mix of each (`symbol`'s
/// entry in the embedded Rust PTX and in NVRTC's `c_ptx`).
#[allow(clippy::too_many_arguments)]
pub fn pair(
    label: &'static str,
    symbol: &'static str,
    rust: &CudaFunction,
    c: &CudaFunction,
    c_ptx: &str,
    timing: PairTiming,
    agreement: Agreement,
    note: Option<&'static str>,
) -> crate::error::Result<ComparedKernel> {
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
            "{}\n{}\nCUDA C twins compiled by NVRTC {} for sm_{} with nvcc's defaults (FMA contraction on).\n\
             Each kernel: {} trials, each timing Rust then CUDA C ({} warm-ups, median of {} batches of {} launches each); \
             ratio = Rust / C per trial, median and range.\n\
             Every kernel on both sides matches the CPU reference.\n\n",
            c.device_line(),
            c.build_line(),
            self.nvrtc,
            c.compute_capability.replace('.', ""),
            self.trials,
            c.timing.warmups,
            c.timing.batches,
            c.timing.launches_per_batch,
        );
        let mut t = table(&[
            "kernel",
            "Rust ms",
            "C ms",
            "Rust/C",
            "range",
            "regs R/C",
            "smem R/C",
            "local R/C",
            "outputs",
        ]);
        for k in &self.kernels {
            let (lo, hi) = k.timing.ratio_range();
            t.add_row(vec![
                k.symbol.to_string(),
                format!("{:.4}", k.timing.rust_median_ms()),
                format!("{:.4}", k.timing.c_median_ms()),
                format!("{:.3}", k.timing.ratio()),
                format!("{lo:.3}-{hi:.3}"),
                format!("{}/{}", k.rust.registers, k.c.registers),
                format!("{}/{}", k.rust.shared_bytes, k.c.shared_bytes),
                format!("{}/{}", k.rust.local_bytes, k.c.local_bytes),
                k.agreement.text(),
            ]);
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
            "{parity} of {} kernels: Rust at or under CUDA C, or within the trial range (it spans 1.00).\n",
            self.kernels.len()
        ));
        for k in slower {
            s.push_str(&format!(
                "{}: Rust/C {:.3} in every trial. {}\n",
                k.symbol,
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
