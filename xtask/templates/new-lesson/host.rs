//! The __name__ lesson on the host: its sizes from the GPU at hand, inputs
//! that never repeat, the CPU reference, the check that can fail, the timing
//! and the report, all through the one lesson layer (`crate::lesson`), so
//! `lab __name__` takes every flag every lesson takes (`--json`, `--quick`,
//! `--compare`, `--record`, `--baseline`, `--flush-l2`, `--asm`,
//! `--profile`, `--ncu`).
//!
//! `cargo xtask new-lesson __name__` wrote it around a saxpy. When you change
//! the kernel (`kernels-gpu/src/__name__.rs`), change with it: its entry in
//! [`Kernel`] (symbol and parameters), its launch in [`__Name__::launch`],
//! [`reference`], the bytes and FLOP [`Kernel::bytes`] and [`Kernel::flop`]
//! count, and, where the arithmetic changes, [`TOLERANCE`].

use cudarc::driver::{CudaSlice, LaunchConfig};
use kernels_gpu::__name__::*;
use serde::Serialize;
use serde_json::json;

use crate::check::{Failure, Tolerance, first_mismatch};
use crate::compare::Twinned;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::kernels::{KernelId, KernelSet};
use crate::lesson::{self, Findings, Outcome, Row, RunOptions, Section, SectionReport};
use crate::report::Context;
use crate::sizes::{LessonSizes, Stream, grown};
use crate::timing::{self, Plan, Timing};

// ANCHOR: kernels
crate::kernel_ids! {
    /// The lesson's kernels, each with its exported symbol (the Rust
    /// kernel's and its CUDA C twin's) and its parameters in order: every
    /// launch is checked against them, and `tests/cpu_signatures.rs` holds
    /// them against both PTX files. Add a kernel here and everything below
    /// that matches on [`Kernel`] asks you for its parts.
    pub enum Kernel {
        /// out = a * x + y: (a, x, y, out, n).
        __Name__ = "__name__" (F32, Ptr, Ptr, Ptr, U64),
    }
}
// ANCHOR_END: kernels

impl Kernel {
    /// What the kernel computes, for its row in the report.
    pub fn label(self) -> &'static str {
        match self {
            Kernel::__Name__ => "out = a * x + y, one element a thread",
        }
    }

    /// Bytes one launch over `n` elements asks of memory (compulsory
    /// bytes): x and y read, out written.
    pub fn bytes(self, n: usize) -> f64 {
        match self {
            Kernel::__Name__ => (3 * n * size_of::<f32>()) as f64,
        }
    }

    /// Floating-point operations of one launch over `n` elements: a
    /// multiply and an add each.
    pub fn flop(self, n: usize) -> f64 {
        match self {
            Kernel::__Name__ => (2 * n) as f64,
        }
    }
}

/// One thread per element, in blocks of `THREADS_PER_BLOCK` (at least one
/// block).
pub fn launch_config(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(THREADS_PER_BLOCK as usize).max(1) as u32, 1, 1),
        block_dim: (THREADS_PER_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// How far an output may be from the f64 reference: the kernel's FMA
/// rounds once in f32, by at most half a unit in the last place of the
/// result; a kernel you write as a separate multiply and add rounds twice.
/// Relative 2^-23 covers the sum's rounding; the absolute part covers
/// results near 0, where the add cancels most of the product and a separate
/// product's own rounding (up to |a x| / 2^24, under 4e-7 for the fills'
/// |a x| <= 6) is large against the result. On the
/// lesson's fills every operation is exact, so the kernel meets the
/// reference exactly; the bound is what a kernel on other inputs may use.
pub const TOLERANCE: Tolerance<'static> = Tolerance::AbsRel {
    abs: ABS_TOLERANCE,
    rel: REL_TOLERANCE,
};
/// The absolute part of [`TOLERANCE`].
pub const ABS_TOLERANCE: f64 = 1e-6;
/// The part of [`TOLERANCE`] relative to the reference: 2^-23.
pub const REL_TOLERANCE: f64 = f32::EPSILON as f64;

pub mod reference {
    //! The CPU reference, written for obvious correctness: the inputs as
    //! formulas of the index, the output as a plain loop in f64, never the
    //! kernel's own code, so the two can disagree.

    /// `x` at index `i`: a multiple of 1/64 in [-4, 4), in a hashed order
    /// (`crate::fill`: no period, so an index that is off by any amount
    /// reads another value).
    pub fn fill_x(i: usize) -> f32 {
        crate::fill::below(i, 0x5A, 512) as f32 / 64.0 - 4.0
    }

    /// `y` at index `i`: a multiple of 1/128 in [-1, 1), hashed as `x` is,
    /// from a stream of its own.
    pub fn fill_y(i: usize) -> f32 {
        crate::fill::below(i, 0x5B, 256) as f32 / 128.0 - 1.0
    }

    /// The first `n` elements of `fill` (on every CPU core).
    pub fn input(n: usize, fill: fn(usize) -> f32) -> Vec<f32> {
        crate::fill::filled(0..n, fill)
    }

    // ANCHOR: reference
    /// `a * x[i] + y[i]` for every `i`, in f64: what the kernel computes,
    /// before its f32 roundings.
    ///
    /// # Panics
    /// When `x` and `y` differ in length.
    pub fn saxpy(a: f32, x: &[f32], y: &[f32]) -> Vec<f64> {
        assert_eq!(x.len(), y.len(), "x and y of one length");
        x.iter()
            .zip(y)
            .map(|(&x, &y)| f64::from(a) * f64::from(x) + f64::from(y))
            .collect()
    }
    // ANCHOR_END: reference
}

/// The check: the first element of `got` (what `kernel` wrote) that is not
/// within [`TOLERANCE`] of `want` (the reference), as a failure that says
/// where, what was got and what was wanted; `None` when every element
/// passes. An element the kernel never wrote still holds the poison (a NaN),
/// which no tolerance admits.
pub fn check_output(kernel: Kernel, got: &[f32], want: &[f64]) -> Option<Failure> {
    first_mismatch(got, want, TOLERANCE).map(|m| Failure {
        kernel: kernel.symbol(),
        detail: format!("n = {}: {m}", got.len()),
    })
}

/// The lesson's kernels and buffers: `x` and `y` (holding the fills) and
/// `out`, each of the same length, and the inputs' host copies the
/// reference reads.
pub struct __Name__<'g> {
    gpu: &'g Gpu,
    kernels: KernelSet<Kernel>,
    x: CudaSlice<f32>,
    y: CudaSlice<f32>,
    out: CudaSlice<f32>,
    x_host: Vec<f32>,
    y_host: Vec<f32>,
}

impl<'g> __Name__<'g> {
    /// Checks free memory, allocates the three buffers of `elems` floats,
    /// uploads the inputs and gets the kernels from the PTX.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] before allocating; driver errors.
    pub fn new(gpu: &'g Gpu, elems: usize) -> Result<Self> {
        gpu.require_free_memory(
            3 * elems * size_of::<f32>(),
            "the __name__ lesson's three buffers (x, y, out)",
        )?;
        let x_host = reference::input(elems, reference::fill_x);
        let y_host = reference::input(elems, reference::fill_y);
        let mut x = gpu.alloc_f32(elems)?;
        let mut y = gpu.alloc_f32(elems)?;
        gpu.upload(&x_host, &mut x)?;
        gpu.upload(&y_host, &mut y)?;
        let out = gpu.alloc_f32(elems)?;
        gpu.sync_after("uploading the __name__ inputs")?;
        Ok(__Name__ {
            gpu,
            kernels: KernelSet::new(gpu)?,
            x,
            y,
            out,
            x_host,
            y_host,
        })
    }

    /// Launches `kernel` over the first `n` elements (asynchronously), on
    /// the side in use (Rust, or its CUDA C twin in a comparison).
    ///
    /// # Errors
    /// [`Error::Size`] past the buffers; a launch the driver refuses.
    pub fn launch(&mut self, kernel: Kernel, n: usize) -> Result<()> {
        if n > self.out.len() {
            return Err(Error::Size(format!(
                "{}: {n} elements, buffers of {}",
                kernel.symbol(),
                self.out.len()
            )));
        }
        match kernel {
            Kernel::__Name__ => {
                let launch = self
                    .kernels
                    .launch(self.gpu, kernel)
                    .scalar(A)
                    .input(&self.x)
                    .input(&self.y)
                    .output(&mut self.out)
                    .scalar(n as u64);
                // SAFETY: the three buffers hold at least n floats (checked
                // above) and are distinct allocations; the grid gives each
                // element one thread; the arguments' kinds are checked
                // against the kernel's parameters before the launch.
                unsafe { launch.launch(launch_config(n)) }
            }
        }
    }

    // ANCHOR: check
    /// Runs `kernel` over `n` elements into a poisoned output (0xFF bytes, a
    /// NaN in every float) and checks every element against the reference.
    /// Returns the failure, if any, and the output's bits (which a
    /// comparison holds against the CUDA C twin's).
    ///
    /// # Errors
    /// [`Error::WrotePastEnd`] where the kernel wrote past the `n` elements;
    /// a fault, charged to the kernel; driver errors.
    pub fn check_at(&mut self, kernel: Kernel, n: usize) -> Result<(Option<Failure>, Vec<u64>)> {
        self.gpu.poison_output(&mut self.out, n)?;
        self.launch(kernel, n)?;
        self.gpu.sync_after(kernel.symbol())?;
        let got = self.gpu.read_output(&self.out, n, kernel.symbol())?;
        self.gpu.sync_after(kernel.symbol())?;
        let want = reference::saxpy(A, &self.x_host[..n], &self.y_host[..n]);
        let bits = got.iter().map(|v| u64::from(v.to_bits())).collect();
        Ok((check_output(kernel, &got, &want), bits))
    }
    // ANCHOR_END: check
}

impl Twinned for __Name__<'_> {
    type Kernel = Kernel;

    fn kernels(&mut self) -> &mut KernelSet<Kernel> {
        &mut self.kernels
    }

    /// At the odd check size.
    fn check(&mut self, kernel: Kernel) -> Result<(Vec<Failure>, Vec<u64>)> {
        let (failure, bits) = self.check_at(kernel, CHECK_ELEMS)?;
        Ok((failure.into_iter().collect(), bits))
    }

    /// Over the whole buffers, the way every lesson times: warm-up
    /// launches, then CUDA events around batches of launches
    /// (`crate::timing::time_kernel`).
    fn time(&mut self, kernel: Kernel, plan: Plan) -> Result<Timing> {
        let n = self.out.len();
        let gpu = self.gpu;
        timing::time_kernel(gpu, kernel.symbol(), plan, || self.launch(kernel, n))
    }
}

/// The lesson's sizes: the timed buffers' length and every size the
/// kernels are checked at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sizes {
    /// Elements of each of the three buffers, the timed size.
    pub elems: usize,
    /// The sizes every kernel is checked at: the odd one, a single element
    /// and the timed size.
    pub checked: Vec<usize>,
}

impl Sizes {
    /// A full run on `info`'s GPU: [`SEED_ELEMS`] doubled until a buffer is
    /// at least 4x the L2; `quick`: the check size, for the sanitizer.
    pub fn new(info: &crate::gpu::DeviceInfo, quick: bool) -> Sizes {
        let elems = if quick {
            CHECK_ELEMS
        } else {
            grown(SEED_ELEMS, size_of::<f32>(), info.l2_bytes)
        };
        let mut checked = vec![CHECK_ELEMS, 1, elems];
        checked.dedup();
        Sizes { elems, checked }
    }
}

impl LessonSizes for Sizes {
    fn for_gpu(info: &crate::gpu::DeviceInfo, quick: bool) -> Result<Sizes> {
        Ok(Sizes::new(info, quick))
    }

    fn streams(&self) -> Vec<Stream> {
        vec![Stream::of::<f32>("x, y, out", self.elems)]
    }

    fn device_bytes(&self) -> usize {
        3 * self.elems * size_of::<f32>()
    }
}

/// What a row's arithmetic intensity says about the kernel on this GPU:
/// below the ridge point of the derived limits (`ridge`, FLOP/byte; `None`
/// where the driver leaves it unknown) it is memory-bound and its GB/s is
/// the figure to read, above it its GFLOP/s.
pub fn reading(kernel: Kernel, ridge: Option<f64>) -> String {
    let intensity = kernel.flop(1) / kernel.bytes(1);
    match ridge {
        Some(ridge) if intensity < ridge => format!(
            "{} does {intensity:.3} FLOP per byte it moves, below this GPU's ridge point of {ridge:.2} FLOP/byte: it is \
             memory-bound, so its GB/s, read against the DRAM bandwidth, says how close it runs to this GPU's limit.",
            kernel.symbol()
        ),
        Some(ridge) => format!(
            "{} does {intensity:.3} FLOP per byte it moves, at or above this GPU's ridge point of {ridge:.2} FLOP/byte: \
             it is compute-bound, so its GFLOP/s, read against the FP32 peak, says how close it runs to this GPU's limit.",
            kernel.symbol()
        ),
        None => format!(
            "{} does {intensity:.3} FLOP per byte it moves; this GPU's ridge point is unknown (the driver reports a \
             clock or bus width of 0), so nothing here says which limit binds.",
            kernel.symbol()
        ),
    }
}

/// The CUDA C twin.
pub const CUDA_C_SOURCE: &str = include_str!("__name__.cu");

/// The __name__ lesson as `lab` runs it.
pub struct __Name__Lesson;

impl lesson::Lesson for __Name__Lesson {
    const NAME: &'static str = "__name__";
    const ABOUT: &'static str = "Your own kernel (from cargo xtask new-lesson): out = a * x + y, checked against a CPU reference, timed and compared with its CUDA C twin.";
    type Kernel = Kernel;
    type Sizes = Sizes;
    type Twins<'g> = __Name__<'g>;

    fn block_sizes() -> serde_json::Value {
        json!({"all": THREADS_PER_BLOCK})
    }

    /// What NVRTC compiles: the constants the twin may need as `#define`s,
    /// then the twin.
    fn cuda_c() -> String {
        format!("#define THREADS_PER_BLOCK {THREADS_PER_BLOCK}\n{CUDA_C_SOURCE}")
    }

    /// Every kernel checked at every checked size; only if all pass, each
    /// timed over the whole buffers and reported.
    fn run(
        gpu: &Gpu,
        sizes: &Sizes,
        context: Context,
        options: &RunOptions<'_>,
    ) -> Result<Outcome<Box<dyn lesson::Report>>> {
        let mut lesson = __Name__::new(gpu, sizes.elems)?;
        let mut failures = Vec::new();
        for &kernel in Kernel::ALL {
            for &n in &sizes.checked {
                failures.extend(lesson.check_at(kernel, n)?.0);
            }
        }
        if !failures.is_empty() {
            return Ok(Outcome::Failed(failures));
        }

        let n = sizes.elems;
        let mut section = Section::new(format!(
            "{n} floats a buffer ({:.1} MiB){}",
            (n * size_of::<f32>()) as f64 / (1 << 20) as f64,
            if options.quick {
                ", quick: not a measurement"
            } else {
                ""
            }
        ));
        section.line(format!(
            "All {} kernel(s) match the CPU reference (f64; allowed {ABS_TOLERANCE:e} + {REL_TOLERANCE:e} x |want|) in \
             every element at n = {}.",
            Kernel::ALL.len(),
            sizes
                .checked
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
        let ridge = gpu.info.derived_ridge_flop_per_byte();
        let mut readings = Vec::new();
        for &kernel in Kernel::ALL {
            let timing = lesson.time(kernel, options.plan)?;
            section.rows.push(
                Row::new(kernel.symbol(), kernel.label(), timing)
                    .bytes(kernel.bytes(n))
                    .flop(kernel.flop(n)),
            );
            readings.push(reading(kernel, ridge));
        }
        section.reading = Some(readings.join("\n"));
        SectionReport::passed(
            context,
            Findings {
                sections: vec![section],
                facts: json!({
                    "a": A,
                    "checked_elems": sizes.checked,
                    "kernels": Kernel::ALL.iter().map(|k| json!({
                        "symbol": k.symbol(), "bytes_per_elem": k.bytes(1), "flop_per_elem": k.flop(1),
                    })).collect::<Vec<_>>(),
                }),
            },
        )
    }

    fn twins<'g>(gpu: &'g Gpu, sizes: &Sizes) -> Result<__Name__<'g>> {
        __Name__::new(gpu, sizes.elems)
    }
}
