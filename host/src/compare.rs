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
use crate::clocks::{Clocks, Window, WindowReadings};
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

/// Interleaved timings of one kernel pair: one median per side per trial,
/// which side each trial timed first, and when each side's batches ran.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PairTiming {
    /// Rust's per-launch median of each trial, ms.
    pub rust_ms: Vec<f64>,
    /// CUDA C's per-launch median of each trial, ms.
    pub c_ms: Vec<f64>,
    /// The side each trial timed first ([`interleave`] alternates them).
    pub first: Vec<Side>,
    /// When Rust's timed batches of each trial ran (`None` for a timing
    /// with no window): where [`Comparison::json_lines`] finds the clock
    /// readings of each trial. Not in the JSON itself.
    #[serde(skip)]
    pub rust_windows: Vec<Option<Window>>,
    /// As `rust_windows`, for CUDA C.
    #[serde(skip)]
    pub c_windows: Vec<Option<Window>>,
}

/// The smallest Rust/C difference a comparison calls: 0.5%. A row is
/// slower only when every trial's ratio is over 1.005, faster only when
/// every one is under 0.995; anything else is parity. Below it, a gap is
/// within what the order of the two timings and the clocks move.
pub const MIN_EFFECT: f64 = 0.005;

/// What a pair's trials say about Rust against CUDA C.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Verdict {
    /// Every trial's Rust/C ratio is over 1 + [`MIN_EFFECT`].
    Slower,
    /// Every trial's Rust/C ratio is under 1 - [`MIN_EFFECT`].
    Faster,
    /// The trials' ratios reach into 1 ± [`MIN_EFFECT`].
    Parity,
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

    /// The windows of `side`'s trials, in trial order.
    fn windows(&self, side: Side) -> &[Option<Window>] {
        match side {
            Side::Rust => &self.rust_windows,
            Side::CudaC => &self.c_windows,
        }
    }

    /// The SM clock read in each of `side`'s trials, in trial order, from
    /// `clocks` (the run's): `None` for a trial with no window or a run
    /// that kept no reading ([`Clocks::readings_in`]).
    pub fn trial_readings(&self, side: Side, clocks: &Clocks) -> Vec<Option<WindowReadings>> {
        self.windows(side)
            .iter()
            .map(|w| w.and_then(|w| clocks.readings_in(&[w])))
            .collect()
    }

    /// The readings of all of `side`'s trials, pooled (see
    /// [`Clocks::readings_in`]).
    pub fn side_readings(&self, side: Side, clocks: &Clocks) -> Option<WindowReadings> {
        let windows: Vec<Window> = self.windows(side).iter().flatten().copied().collect();
        clocks.readings_in(&windows)
    }

    /// Whether the median ratio is past 1 ± [`MIN_EFFECT`] while the
    /// verdict is parity: some trials are inside the band, the median is
    /// not, so the row is worth a line of its own.
    pub fn median_past_effect_at_parity(&self) -> bool {
        self.verdict() == Verdict::Parity && past_effect(self.ratio()) != 0
    }

    /// Of the trials, how many are past 1 ± [`MIN_EFFECT`] on the median's
    /// side (above 1.005 where the median is, below 0.995 where it is):
    /// what a row named by [`PairTiming::median_past_effect_at_parity`] is
    /// said to have.
    pub fn trials_past_effect_with_median(&self) -> usize {
        let side = past_effect(self.ratio());
        self.ratios()
            .into_iter()
            .filter(|&r| side != 0 && past_effect(r) == side)
            .count()
    }

    /// Slower, faster or parity, from the range of the trials' ratios and
    /// [`MIN_EFFECT`].
    pub fn verdict(&self) -> Verdict {
        let (lo, hi) = self.ratio_range();
        if past_effect(lo) == 1 {
            Verdict::Slower
        } else if past_effect(hi) == -1 {
            Verdict::Faster
        } else {
            Verdict::Parity
        }
    }
}

/// Which side of 1 ± [`MIN_EFFECT`] a Rust/C ratio lies past: 1 above
/// (Rust slower), -1 below (Rust faster), 0 inside. The test
/// [`PairTiming::verdict`] applies to every trial.
fn past_effect(ratio: f64) -> i8 {
    if ratio > 1.0 + MIN_EFFECT {
        1
    } else if ratio < 1.0 - MIN_EFFECT {
        -1
    } else {
        0
    }
}

/// Times `trials` trials of both sides with `time`, which times one side,
/// alternating which side goes first (Rust, C; then C, Rust; ...), so a
/// warming clock or a cache the first run leaves favours neither side.
pub fn interleave(trials: u32, mut time: impl FnMut(Side) -> Result<Timing>) -> Result<PairTiming> {
    let mut pair = PairTiming::default();
    for trial in 0..trials {
        let order = crate::timing::round_order::<2>(trial).map(|i| [Side::Rust, Side::CudaC][i]);
        let (mut ms, mut windows) = ([0.0; 2], [None; 2]);
        for side in order {
            let timing = time(side)?;
            let i = usize::from(side == Side::CudaC);
            (ms[i], windows[i]) = (timing.median_ms(), timing.window);
        }
        pair.rust_ms.push(ms[0]);
        pair.c_ms.push(ms[1]);
        pair.first.push(order[0]);
        pair.rust_windows.push(windows[0]);
        pair.c_windows.push(windows[1]);
    }
    Ok(pair)
}

/// One row's comparison from its interleaved `timing`: the driver's
/// statistics of both compiled kernels and the PTX mix of each (`symbol`'s
/// entry in its Rust PTX module and in NVRTC's `c_ptx`).
fn pair(
    label: &'static str,
    shown: Shown<'_>,
    c_ptx: &str,
    timing: PairTiming,
    agreement: Agreement,
    sass_arch: &str,
) -> Result<ComparedKernel> {
    let Shown {
        symbol,
        rust,
        c,
        rust_ptx,
    } = shown;
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
        rust_mix: mix(rust_ptx),
        c_mix: mix(c_ptx),
        agreement,
        sass: sass_counts(symbol, rust_ptx, c_ptx, sass_arch),
    })
}

/// Instructions in `symbol`'s SASS on each side, assembled for `arch`
/// (the GPU's own) with ptxas and read back with cuobjdump, where both are
/// found and both succeed; `None` otherwise.
fn sass_counts(symbol: &str, rust_ptx: &str, c_ptx: &str, arch: &str) -> Option<SassCounts> {
    let count = |ptx: &str| {
        crate::asm::sass(ptx, arch, symbol)
            .ok()
            .flatten()
            .map(|text| crate::asm::sass_instructions(&text))
    };
    Some(SassCounts {
        arch: arch.to_string(),
        rust: count(rust_ptx)?,
        c: count(c_ptx)?,
    })
}

/// Instructions in one kernel's SASS on each side, for one architecture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SassCounts {
    /// The architecture assembled for (`sm_90`).
    pub arch: String,
    /// The Rust kernel's instructions.
    pub rust: usize,
    /// The CUDA C twin's instructions.
    pub c: usize,
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
    /// Each side's SASS instructions, where ptxas and cuobjdump are found.
    pub sass: Option<SassCounts>,
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
    /// The NVRTC library file the twins were compiled with (a path, or the
    /// bare name the system loader resolved).
    pub nvrtc_library: String,
    /// Interleaved trials per kernel.
    pub trials: u32,
    /// The kernels, in table order.
    pub kernels: Vec<ComparedKernel>,
}

impl Comparison {
    /// The human-readable report.
    pub fn table(&self) -> String {
        let c = &self.context;
        let arch = format!("sm_{}", c.compute_capability.replace('.', ""));
        let mut s = format!(
            "{}Rust kernels: PTX {} from rustc, compiled for this GPU ({arch}) by the driver when the module loads. \
             CUDA C twins: compiled by NVRTC {} ({}) for {arch} with nvcc's defaults (FMA contraction on).\n{}\
             Each row: {} trials of both sides, the order alternating (Rust first, then CUDA C first, ...), each side \
             {} warm-ups and the median of {} batches of {} launches; ratio = Rust / C per trial, median and range. \
             A row is called slower or faster only when every trial's ratio is past 1 ± {}; otherwise parity.\n\
             Every row on both sides matches the CPU reference.\n\n",
            c.header(),
            c.ptx,
            self.nvrtc,
            self.nvrtc_library,
            self.notes
                .iter()
                .map(|n| format!("{n}\n"))
                .collect::<String>(),
            self.trials,
            c.timing.warmups,
            c.timing.batches,
            c.timing.launches_per_batch,
            MIN_EFFECT,
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
            "verdict",
            "regs R/C",
            "smem R/C",
            "local R/C",
            "SASS R/C",
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
                format!("{:?}", k.timing.verdict()).to_lowercase(),
                format!("{}/{}", k.rust.registers, k.c.registers),
                format!("{}/{}", k.rust.shared_bytes, k.c.shared_bytes),
                format!("{}/{}", k.rust.local_bytes, k.c.local_bytes),
                k.sass
                    .as_ref()
                    .map_or_else(|| "-".to_string(), |n| format!("{}/{}", n.rust, n.c)),
                k.agreement.text(),
            ]);
            t.add_row(row);
        }
        let sass_note = match self.kernels.iter().find_map(|k| k.sass.as_ref()) {
            Some(n) => format!(
                "SASS R/C: instructions in each side's SASS, assembled for {} by ptxas and read by cuobjdump.\n",
                n.arch
            ),
            None => "SASS R/C: not counted (ptxas and cuobjdump not found).\n".to_string(),
        };
        s.push_str(&format!(
            "{t}\n{sass_note}\nPTX instruction mix (static counts: a loop body counts once)\n"
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
        s.push_str(&self.verdicts());
        s
    }

    /// The verdicts in words: how many rows are at parity, slower and
    /// faster, then for each row that is slower or faster, or at parity
    /// with its median past 1 ± [`MIN_EFFECT`]
    /// ([`PairTiming::median_past_effect_at_parity`]), its ratio, what the
    /// run measured of both compiled kernels (registers, local bytes, SASS
    /// instructions) and the SM clock each side's trials met. Only figures
    /// from this run: no explanation is carried over from another run or
    /// GPU.
    pub fn verdicts(&self) -> String {
        let count = |v: Verdict| {
            self.kernels
                .iter()
                .filter(|k| k.timing.verdict() == v)
                .count()
        };
        let mut s = format!(
            "{} of {} rows at parity (within {MIN_EFFECT} of 1 in some trial), {} slower and {} faster in every trial.\n",
            count(Verdict::Parity),
            self.kernels.len(),
            count(Verdict::Slower),
            count(Verdict::Faster),
        );
        for k in self.kernels.iter().filter(|k| {
            k.timing.verdict() != Verdict::Parity || k.timing.median_past_effect_at_parity()
        }) {
            let t = &k.timing;
            let (lo, hi) = t.ratio_range();
            let sass = k.sass.as_ref().map_or_else(String::new, |n| {
                format!(", SASS instructions {}/{} ({})", n.rust, n.c, n.arch)
            });
            let verdict = if t.median_past_effect_at_parity() {
                format!(
                    "parity, though the median is past 1 ± {MIN_EFFECT} ({} of {} trials are, on its side)",
                    t.trials_past_effect_with_median(),
                    t.ratios().len()
                )
            } else {
                format!("{:?}", t.verdict()).to_lowercase()
            };
            s.push_str(&format!(
                "{}: Rust/C {:.3} ({lo:.3}-{hi:.3}), {verdict}. Registers {}/{}, local bytes {}/{}{sass}.{}\n",
                k.label,
                t.ratio(),
                k.rust.registers,
                k.c.registers,
                k.rust.local_bytes,
                k.c.local_bytes,
                self.clocks_sentence(t),
            ));
        }
        s
    }

    /// What the run's clock readings say of both sides' trials of one row,
    /// as a sentence with a leading space: each side's median SM clock over
    /// the readings inside its timed batches, or that none fell inside
    /// them; empty where the run kept no reading at all.
    fn clocks_sentence(&self, t: &PairTiming) -> String {
        let clocks = &self.context.clocks;
        let (Some(rust), Some(c)) = (
            t.side_readings(Side::Rust, clocks),
            t.side_readings(Side::CudaC, clocks),
        ) else {
            return String::new();
        };
        let side = |name: &str, r: &WindowReadings| match r.sm_mhz {
            Some(sm) => format!(
                "{name} {:.0} MHz (median of {} readings)",
                sm.median, r.samples
            ),
            None => format!(
                "{name} none (its batches were each shorter than the {} ms between readings)",
                crate::clocks::PERIOD.as_millis()
            ),
        };
        format!(
            " SM clock while its trials were timed: {}; {}.",
            side("Rust", &rust),
            side("CUDA C", &c)
        )
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
                    "agreement": k.agreement, "verdict": k.timing.verdict(), "min_effect": MIN_EFFECT,
                    "trial_clocks": {
                        "rust": k.timing.trial_readings(Side::Rust, &self.context.clocks),
                        "c": k.timing.trial_readings(Side::CudaC, &self.context.clocks),
                    },
                    "sass": k.sass,
                    "nvrtc": self.nvrtc, "nvrtc_library": self.nvrtc_library,
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
}

/// The compiled kernel a comparison row shows (registers, PTX mix, SASS
/// count): its symbol, both sides' functions, and the Rust PTX module it
/// comes from (the embedded sm_75 module, or the sm_80 module of the
/// tensor-core kernels).
pub struct Shown<'a> {
    /// The exported name on both sides.
    pub symbol: &'static str,
    /// The Rust kernel.
    pub rust: &'a CudaFunction,
    /// The CUDA C twin.
    pub c: &'a CudaFunction,
    /// The PTX module text the Rust kernel was loaded from.
    pub rust_ptx: &'static str,
}

/// What [`compare_twins`] needs: rows, each run and timed on either side.
/// A row is a `Unit`: one kernel (every [`Twinned`] lesson), a launch
/// sequence (softmax's variants), or a kernel from one of several kernel
/// sets (the GEMM lesson's FP32 and tensor-core kernels).
pub trait TwinRows {
    /// What one comparison row runs.
    type Unit: Copy;
    /// The rows compared, in order.
    fn units(&self) -> Vec<Self::Unit>;
    /// The row's label (the kernel's symbol, where the row is a kernel).
    fn label(&self, unit: Self::Unit) -> &'static str;
    /// The kernel whose registers and PTX the row shows.
    ///
    /// # Panics
    /// If the twins were not loaded (a caller bug).
    fn shown(&mut self, unit: Self::Unit) -> Shown<'_>;
    /// Loads the CUDA C twins of every kernel from NVRTC's `c_ptx`.
    ///
    /// # Errors
    /// The driver refusing the PTX, or a symbol missing from it.
    fn load_twins(&mut self, gpu: &crate::gpu::Gpu, c_ptx: &str) -> Result<()>;
    /// Makes later launches use `side`.
    ///
    /// # Panics
    /// On [`Side::CudaC`] before [`TwinRows::load_twins`] (a caller bug).
    fn use_side(&mut self, side: Side);
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
}

/// [`TwinRows::shown`] for `kernel` of a set whose Rust side is the
/// embedded sm_75 module.
///
/// # Panics
/// If the set's twins were not loaded (a caller bug).
pub fn shown_in<K: KernelId>(kernels: &KernelSet<K>, kernel: K) -> Shown<'_> {
    shown_from(kernels, kernel, crate::ptx::PTX)
}

/// [`TwinRows::shown`] for `kernel` of a set whose Rust side was loaded
/// from `rust_ptx`.
///
/// # Panics
/// If the set's twins were not loaded (a caller bug).
pub fn shown_from<'a, K: KernelId>(
    kernels: &'a KernelSet<K>,
    kernel: K,
    rust_ptx: &'static str,
) -> Shown<'a> {
    let side = |s| kernels.get(kernel, s).expect("both sides are loaded");
    Shown {
        symbol: kernel.symbol(),
        rust: side(Side::Rust),
        c: side(Side::CudaC),
        rust_ptx,
    }
}

impl<T: Twinned> TwinRows for T {
    type Unit = T::Kernel;

    fn units(&self) -> Vec<T::Kernel> {
        self.compared()
    }

    fn label(&self, kernel: T::Kernel) -> &'static str {
        kernel.symbol()
    }

    fn shown(&mut self, kernel: T::Kernel) -> Shown<'_> {
        shown_in(self.kernels(), kernel)
    }

    fn load_twins(&mut self, gpu: &crate::gpu::Gpu, c_ptx: &str) -> Result<()> {
        self.kernels().load_twins(gpu, c_ptx)
    }

    fn use_side(&mut self, side: Side) {
        self.kernels().use_side(side);
    }

    fn check_unit(&mut self, kernel: T::Kernel) -> Result<(Vec<Failure>, Vec<u64>)> {
        self.check(kernel)
    }

    fn time_unit(&mut self, kernel: T::Kernel, plan: Plan) -> Result<Timing> {
        self.time(kernel, plan)
    }
}

/// Every row of `lesson` beside its twin (the twins already loaded from
/// `c_ptx` into its [`KernelSet`]): each side checked against the reference
/// and the two outputs compared bit for bit; then, if every check passed,
/// timed `trials` times in alternating order (see [`interleave`]), and each
/// kernel's SASS counted for `sass_arch` where the tools are found. The
/// lesson is left on the Rust side, also after an error.
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
    sass_arch: &str,
) -> Result<crate::lesson::CompareOutcome> {
    let outcome = compare_both_sides(lesson, c_ptx, trials, plan, sass_arch);
    lesson.use_side(Side::Rust);
    outcome
}

fn compare_both_sides<T: TwinRows>(
    lesson: &mut T,
    c_ptx: &str,
    trials: u32,
    plan: Plan,
    sass_arch: &str,
) -> Result<crate::lesson::CompareOutcome> {
    let units = lesson.units();
    let mut failures = Vec::new();
    let mut agreements = Vec::new();
    for &unit in &units {
        let mut outputs = Vec::new();
        for side in [Side::Rust, Side::CudaC] {
            lesson.use_side(side);
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
            lesson.use_side(side);
            lesson.time_unit(unit, plan)
        })?;
        let label = lesson.label(unit);
        pairs.push(pair(
            label,
            lesson.shown(unit),
            c_ptx,
            timing,
            agreement,
            sass_arch,
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
            first: vec![Side::Rust, Side::CudaC, Side::Rust],
            ..PairTiming::default()
        };
        assert_eq!(t.ratios(), [0.5, 1.0, 1.5]);
        assert_eq!(t.ratio(), 1.0);
        assert_eq!(t.ratio_range(), (0.5, 1.5));
        assert_eq!(t.rust_median_ms(), 2.0);
    }

    #[test]
    fn a_verdict_needs_every_trial_past_the_minimum_effect() {
        let of = |ratios: &[f64]| PairTiming {
            rust_ms: ratios.to_vec(),
            c_ms: vec![1.0; ratios.len()],
            ..PairTiming::default()
        };
        // 0.1% to 0.3% slower in every trial: under the 0.5% effect, parity.
        assert_eq!(of(&[1.001, 1.002, 1.003]).verdict(), Verdict::Parity);
        assert_eq!(of(&[1.006, 1.02, 1.10]).verdict(), Verdict::Slower);
        // One trial inside the band is enough for parity.
        assert_eq!(of(&[1.006, 1.004, 1.10]).verdict(), Verdict::Parity);
        assert_eq!(of(&[0.90, 0.99, 0.994]).verdict(), Verdict::Faster);
        assert_eq!(of(&[0.90, 1.01]).verdict(), Verdict::Parity);
    }

    #[test]
    fn trials_alternate_which_side_goes_first() {
        let mut calls = Vec::new();
        let pair = interleave(4, |side| {
            calls.push(side);
            Ok(Timing::new(vec![if side == Side::Rust {
                1.0
            } else {
                2.0
            }]))
        })
        .unwrap();
        use Side::{CudaC, Rust};
        assert_eq!(calls, [Rust, CudaC, CudaC, Rust, Rust, CudaC, CudaC, Rust]);
        assert_eq!(pair.first, [Rust, CudaC, Rust, CudaC]);
        assert_eq!(pair.rust_ms, [1.0; 4]);
        assert_eq!(pair.c_ms, [2.0; 4]);
    }
}
