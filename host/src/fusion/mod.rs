//! The fusion lesson on the host: one launcher per kernel, the checks
//! against the f64 reference at an odd size, and the four parts' timings.
//! Every launch is written once, in [`Fusion::launch`].

pub mod reference;
pub mod report;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig};
use kernels_gpu::fusion::*;
use serde::Serialize;

use crate::check::{Failure, Tolerance, first_mismatch};
use crate::compare::{FunctionStats, Side, Twinned};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::kernels::{KernelId, KernelSet, Param};
use crate::lesson::{self, Outcome, RunOptions};
use crate::report::Context;
use crate::sizes::{LessonSizes, Stream, grown};
use crate::timing::{self, Plan, Timing};

/// The lesson's kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// The empty kernel of part 1.
    DoNothing,
    /// The copy floor.
    CopyFloor,
    /// Stage 1.
    ScaleBias,
    /// Stage 2.
    Gelu,
    /// Stage 3.
    AddResidual,
    /// Stage 4.
    ClampRange,
    /// The four stages in one kernel.
    Fused,
    /// The fused kernel, this many elements per thread (one of WIDTHS).
    Wide(usize),
}

/// Every kernel, in report order: the wide ones from the one list of
/// widths (`kernels_gpu::fused_widths!`).
macro_rules! all_kernels {
    ($($name:ident = $w:literal),* $(,)?) => {
        &[
            Kernel::DoNothing,
            Kernel::CopyFloor,
            Kernel::ScaleBias,
            Kernel::Gelu,
            Kernel::AddResidual,
            Kernel::ClampRange,
            Kernel::Fused,
            $(Kernel::Wide($w),)*
        ]
    };
}

impl KernelId for Kernel {
    const ALL: &'static [Kernel] = kernels_gpu::fused_widths!(all_kernels);

    /// The exported PTX symbol (and the CUDA C twin's).
    fn symbol(self) -> &'static str {
        match self {
            Kernel::DoNothing => "do_nothing",
            Kernel::CopyFloor => "copy_floor",
            Kernel::ScaleBias => "apply_scale_bias",
            Kernel::Gelu => "apply_gelu",
            Kernel::AddResidual => "apply_add_residual",
            Kernel::ClampRange => "apply_clamp_range",
            Kernel::Fused => "chain_fused",
            Kernel::Wide(w) => WIDTHS
                .iter()
                .position(|&v| v == w)
                .map(|i| WIDE_SYMBOLS[i])
                .expect("a wide kernel is one of WIDTHS"),
        }
    }

    /// Each stage and the copy (in, out, n); the residual add and the fused
    /// kernels (in, residual, out, n); the empty kernel nothing.
    fn params(self) -> &'static [Param] {
        use Param::{Ptr, U64};
        match self {
            Kernel::DoNothing => &[],
            Kernel::CopyFloor | Kernel::ScaleBias | Kernel::Gelu | Kernel::ClampRange => {
                &[Ptr, Ptr, U64]
            }
            Kernel::AddResidual | Kernel::Fused | Kernel::Wide(_) => &[Ptr, Ptr, Ptr, U64],
        }
    }
}

impl Kernel {
    /// The four stages, in chain order.
    pub const STAGES: [Kernel; 4] = [
        Kernel::ScaleBias,
        Kernel::Gelu,
        Kernel::AddResidual,
        Kernel::ClampRange,
    ];

    /// Elements one thread handles.
    pub fn per_thread(self) -> usize {
        match self {
            Kernel::Wide(w) => w,
            _ => 1,
        }
    }

    /// Floats the kernel moves per element (compulsory).
    pub fn floats(self) -> f64 {
        match self {
            Kernel::DoNothing => 0.0,
            Kernel::CopyFloor => COPY_FLOATS,
            Kernel::ScaleBias => STAGE_FLOATS[0],
            Kernel::Gelu => STAGE_FLOATS[1],
            Kernel::AddResidual => STAGE_FLOATS[2],
            Kernel::ClampRange => STAGE_FLOATS[3],
            Kernel::Fused | Kernel::Wide(_) => FUSED_FLOATS,
        }
    }
}

/// How close each element of a chain must be to the f64 reference: the
/// seed's test, `ABS_TOLERANCE + REL_TOLERANCE x |want|`.
pub const TOLERANCE: Tolerance<'static> = Tolerance::AbsRel {
    abs: ABS_TOLERANCE,
    rel: REL_TOLERANCE,
};

// ANCHOR: launch_config
/// Blocks of THREADS_PER_BLOCK threads for `n` elements, `per_thread` each.
pub fn blocks_for(n: usize, per_thread: usize) -> u32 {
    n.div_ceil(THREADS_PER_BLOCK as usize * per_thread) as u32
}

/// The launch shape of `kernel` over `n` elements.
pub fn launch_config(kernel: Kernel, n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks_for(n, kernel.per_thread()), 1, 1),
        block_dim: (THREADS_PER_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}
// ANCHOR_END: launch_config

/// Indices of the buffers a launch reads or writes: x, the residual, the
/// three intermediates, y.
const X: usize = 0;
const R: usize = 1;
const Y: usize = 5;

/// The buffer `kernel` writes: each stage its intermediate (t1, t2, t3),
/// the last stage, the copy and the fused kernels y.
fn output_buffer(kernel: Kernel) -> usize {
    match kernel {
        Kernel::ScaleBias => 2,
        Kernel::Gelu => 3,
        Kernel::AddResidual => 4,
        _ => Y,
    }
}

/// The lesson's six buffers of `elems` floats on one GPU, and its kernels.
pub struct Fusion<'g> {
    gpu: &'g Gpu,
    kernels: KernelSet<Kernel>,
    /// Floats each buffer holds.
    elems: usize,
    bufs: [CudaSlice<f32>; 6],
    host_x: Vec<f32>,
    host_r: Vec<f32>,
}

impl<'g> Fusion<'g> {
    /// Checks free memory, allocates six buffers of `elems` floats (at
    /// least the check size), fills x and the residual.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] before allocating; driver errors.
    pub fn new(gpu: &'g Gpu, elems: usize) -> Result<Self> {
        let elems = elems.max(CHECK_ELEMS);
        gpu.require_free_memory(6 * elems * 4, "the fusion lesson's six buffers")?;
        let kernels = KernelSet::new(gpu)?;
        let host_x: Vec<f32> = (0..elems).map(reference::fill_x).collect();
        let host_r: Vec<f32> = (0..elems).map(reference::fill_r).collect();
        let mut bufs = [
            gpu.alloc_f32(elems)?,
            gpu.alloc_f32(elems)?,
            gpu.alloc_f32(elems)?,
            gpu.alloc_f32(elems)?,
            gpu.alloc_f32(elems)?,
            gpu.alloc_f32(elems)?,
        ];
        gpu.upload(&host_x, &mut bufs[X])?;
        gpu.upload(&host_r, &mut bufs[R])?;
        Ok(Fusion {
            gpu,
            kernels,
            elems,
            bufs,
            host_x,
            host_r,
        })
    }

    /// The compiled function of `kernel` on `side`.
    pub fn function(&self, kernel: Kernel, side: Side) -> Option<&CudaFunction> {
        self.kernels.get(kernel, side)
    }

    /// Launches `kernel` over `n` elements (asynchronously). Each stage reads
    /// the previous one's buffer (x -> t1 -> t2 -> t3 -> y); the copy reads x
    /// and writes y; the fused kernels read x and r and write y.
    /// `DoNothing` takes `n` as the grid's element count (1 block of 1
    /// thread when `n` is 1).
    pub fn launch(&mut self, kernel: Kernel, n: usize) -> Result<()> {
        if n > self.elems {
            return Err(Error::Size(format!(
                "{}: {n} elements, buffers of {}",
                kernel.symbol(),
                self.elems
            )));
        }
        let mut cfg = launch_config(kernel, n);
        if kernel == Kernel::DoNothing && n == 1 {
            cfg.block_dim = (1, 1, 1);
        }
        let n64 = n as u64;
        let [x, r, t1, t2, t3, y] = &mut self.bufs;
        let launch = self.kernels.launch(self.gpu, kernel);
        let launch = match kernel {
            Kernel::DoNothing => launch,
            Kernel::CopyFloor => launch.input(&*x).output(y).scalar(n64),
            Kernel::ScaleBias => launch.input(&*x).output(t1).scalar(n64),
            Kernel::Gelu => launch.input(&*t1).output(t2).scalar(n64),
            Kernel::AddResidual => launch.input(&*t2).input(&*r).output(t3).scalar(n64),
            Kernel::ClampRange => launch.input(&*t3).output(y).scalar(n64),
            Kernel::Fused | Kernel::Wide(_) => launch.input(&*x).input(&*r).output(y).scalar(n64),
        };
        // SAFETY: every buffer holds `elems` >= n floats (checked above),
        // each output is a buffer no input of the same launch is, and the
        // grid covers n elements at the kernel's elements per thread; the
        // argument kinds are checked at launch.
        unsafe { launch.launch(cfg) }
    }

    /// The four stages, in order, enqueued back to back.
    pub fn launch_staged(&mut self, n: usize) -> Result<()> {
        for stage in Kernel::STAGES {
            self.launch(stage, n)?;
        }
        Ok(())
    }

    /// `count` launches of the empty kernel over `n` elements' grid (1: one
    /// block of one thread).
    pub fn launch_empty_batch(&mut self, n: usize, count: u32) -> Result<()> {
        for _ in 0..count {
            self.launch(Kernel::DoNothing, n)?;
        }
        Ok(())
    }

    /// Runs `chain` at CHECK_ELEMS on its output buffer poisoned with 0xFF
    /// (y, or the intermediate a stage kernel writes), and returns it; a
    /// write into the poison just past CHECK_ELEMS is an error.
    fn run_checked(&mut self, chain: Chain) -> Result<Vec<f32>> {
        let n = CHECK_ELEMS;
        let last = match chain {
            Chain::Staged => Kernel::ClampRange,
            Chain::Kernel(k) => k,
        };
        let out = output_buffer(last);
        self.gpu.poison_output(&mut self.bufs[out], n)?;
        match chain {
            Chain::Staged => self.launch_staged(n)?,
            Chain::Kernel(k) => self.launch(k, n)?,
        }
        self.gpu.sync_after(last.symbol())?;
        self.gpu.read_output(&self.bufs[out], n, last.symbol())
    }

    /// The f64 reference over CHECK_ELEMS.
    pub fn reference(&self) -> Vec<f64> {
        (0..CHECK_ELEMS)
            .map(|i| reference::chain(self.host_x[i], self.host_r[i]))
            .collect()
    }

    /// Checks `chain` at CHECK_ELEMS (odd: every guard fires) against
    /// `want` (the copy floor against its input, bit for bit), and returns
    /// the failures and what it wrote.
    pub fn check(&mut self, chain: Chain, want: &[f64]) -> Result<(Vec<Failure>, Vec<f32>)> {
        let got = self.run_checked(chain)?;
        let mut failures = Vec::new();
        if chain == Chain::Kernel(Kernel::CopyFloor) {
            // The copy is checked against its input, bit for bit.
            if let Some(m) = first_mismatch(&got, &self.host_x[..got.len()], Tolerance::Bits) {
                failures.push(Failure {
                    kernel: chain.symbol(),
                    detail: m.to_string(),
                });
            }
        } else if let Some(m) = first_mismatch(&got, want, TOLERANCE) {
            failures.push(Failure {
                kernel: chain.symbol(),
                detail: m.to_string(),
            });
        }
        Ok((failures, got))
    }

    /// Times `chain` over `n` elements with `plan`.
    pub fn time(&mut self, chain: Chain, n: usize, plan: Plan) -> Result<Timing> {
        let gpu = self.gpu;
        timing::time_kernel(gpu, chain.symbol(), plan, || match chain {
            Chain::Staged => self.launch_staged(n),
            Chain::Kernel(k) => self.launch(k, n),
        })
    }

    /// Downloads the first `n` floats of y (after a chain ran over them).
    pub fn read_y(&self, n: usize) -> Result<Vec<f32>> {
        let mut got = vec![0.0f32; n];
        self.gpu.download(&self.bufs[Y], &mut got)?;
        Ok(got)
    }

    // ANCHOR: blocks_per_sm
    /// Blocks of `kernel` one SM holds at THREADS_PER_BLOCK threads (the
    /// occupancy API).
    pub fn blocks_per_sm(&self, kernel: Kernel) -> Result<u32> {
        self.function(kernel, Side::Rust)
            .expect("loaded")
            .occupancy_max_active_blocks_per_multiprocessor(THREADS_PER_BLOCK, 0, None)
            .map_err(|source| Error::Driver {
                call: "cuOccupancyMaxActiveBlocksPerMultiprocessor",
                source,
            })
    }
    // ANCHOR_END: blocks_per_sm
}

/// What a check or a timing runs: the staged chain (four launches) or one
/// kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chain {
    /// The four stage kernels in order.
    Staged,
    /// One kernel.
    Kernel(Kernel),
}

impl Chain {
    /// The name errors and reports use.
    pub fn symbol(self) -> &'static str {
        match self {
            Chain::Staged => "staged chain",
            Chain::Kernel(k) => k.symbol(),
        }
    }
}

/// Part 4's row for one width.
#[derive(Debug, Clone)]
pub struct WideRow {
    /// Elements per thread.
    pub width: usize,
    /// Blocks of the timed launch.
    pub blocks: u32,
    /// The compiled kernel's registers, shared and local bytes.
    pub stats: FunctionStats,
    /// Blocks per SM from the occupancy API.
    pub blocks_per_sm: u32,
    /// Theoretical occupancy: resident threads / the SM's maximum, percent.
    pub occupancy_pct: f64,
    /// The timing at ELEMS.
    pub timing: Timing,
}

/// Everything the lesson measured, after every check passed.
#[derive(Debug, Clone)]
pub struct Measured {
    /// The sizes the parts ran at.
    pub sizes: Sizes,
    /// Share of the reference on a clamp bound, percent.
    pub clamped_pct: f64,
    /// Part 1: batches of 1000 empty launches, one block of one thread.
    pub empty_small: Timing,
    /// Part 1: the same over the chain's grid.
    pub empty_full: Timing,
    /// Part 2: the copy floor.
    pub copy: Timing,
    /// Part 2: each stage alone.
    pub stages: [Timing; 4],
    /// Part 2: the staged chain timed as one.
    pub staged: Timing,
    /// Part 2: the fused chain.
    pub fused: Timing,
    /// Part 2: elements where staged and fused outputs differ, and the
    /// largest difference (a fact about fusion, not a failure).
    pub differing: (usize, f64),
    /// Part 3: (n, staged, fused).
    pub sweep: Vec<(usize, Timing, Timing)>,
    /// Part 4: one row per width.
    pub wide: Vec<WideRow>,
}

/// What the four parts run at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sizes {
    /// Elements of parts 2 and 4 (and the sweep's largest).
    pub elems: usize,
    /// Part 3's sizes, up to `elems`.
    pub sweep: Vec<usize>,
    /// Empty launches per timed batch in part 1.
    pub launches_per_batch: u32,
    /// The odd correctness size.
    pub check_elems: usize,
    /// Part 4's elements per thread.
    pub widths: &'static [usize],
}

impl Sizes {
    /// A full run on `info`'s GPU: the seed's [`SEED_ELEMS`] doubled until
    /// a buffer is at least 4x the L2 (the seed's 16 Mi on a GPU whose L2
    /// is 16 MiB or less), the seed's sweep up to it, batches of
    /// LAUNCHES_PER_BATCH empty launches. `quick`: the correctness size and
    /// batches of 10 (every check is still made at the correctness size).
    pub fn new(info: &crate::gpu::DeviceInfo, quick: bool) -> Sizes {
        let (elems, launches_per_batch) = if quick {
            (CHECK_ELEMS, 10)
        } else {
            (
                grown(SEED_ELEMS, size_of::<f32>(), info.l2_bytes),
                LAUNCHES_PER_BATCH,
            )
        };
        let mut sweep: Vec<usize> = SWEEP.iter().copied().filter(|&n| n <= elems).collect();
        if sweep.last().is_some_and(|&n| n < elems) {
            sweep.push(elems);
        }
        Sizes {
            elems,
            sweep,
            launches_per_batch,
            check_elems: CHECK_ELEMS,
            widths: WIDTHS,
        }
    }
}

impl LessonSizes for Sizes {
    fn for_gpu(info: &crate::gpu::DeviceInfo, quick: bool) -> Result<Sizes> {
        Ok(Sizes::new(info, quick))
    }
    fn streams(&self) -> Vec<Stream> {
        vec![Stream::of::<f32>("x, r, t1, t2, t3, y", self.elems)]
    }

    fn device_bytes(&self) -> usize {
        6 * self.elems.max(CHECK_ELEMS) * size_of::<f32>()
    }
}

/// Checks every chain and width at the odd size, then runs the four parts
/// at `sizes`. The seed's last check stands: the staged chain must be
/// slower than the fused one at 3x the bytes, or the two are not running
/// the same chain.
pub fn run(
    lesson: &mut Fusion<'_>,
    plan: Plan,
    sizes: &Sizes,
    progress: &indicatif::ProgressBar,
) -> Result<Outcome<Measured>> {
    progress.set_length(5);
    progress.set_message("checking");
    let want = lesson.reference();
    let mut failures = Vec::new();
    let mut checks = vec![
        Chain::Kernel(Kernel::CopyFloor),
        Chain::Staged,
        Chain::Kernel(Kernel::Fused),
    ];
    checks.extend(WIDTHS.iter().map(|&w| Chain::Kernel(Kernel::Wide(w))));
    for chain in checks {
        failures.extend(lesson.check(chain, &want)?.0);
    }
    if !failures.is_empty() {
        return Ok(Outcome::Failed(failures));
    }
    let clamped = want
        .iter()
        .filter(|&&w| w == HI as f64 || w == LO as f64)
        .count();

    let elems = sizes.elems;
    let batch = sizes.launches_per_batch;
    progress.inc(1);
    progress.set_message("part 1: launch cost");
    let gpu = lesson.gpu;
    let empty_small = timing::time_kernel(gpu, "do_nothing", plan, || {
        lesson.launch_empty_batch(1, batch)
    })?;
    let empty_full = timing::time_kernel(gpu, "do_nothing", plan, || {
        lesson.launch_empty_batch(elems, batch)
    })?;

    progress.inc(1);
    progress.set_message("part 2: the chain");
    let copy = lesson.time(Chain::Kernel(Kernel::CopyFloor), elems, plan)?;
    let mut stages = Vec::with_capacity(4);
    for stage in Kernel::STAGES {
        stages.push(lesson.time(Chain::Kernel(stage), elems, plan)?);
    }
    let staged = lesson.time(Chain::Staged, elems, plan)?;
    let staged_y = lesson.read_y(elems)?;
    let fused = lesson.time(Chain::Kernel(Kernel::Fused), elems, plan)?;
    let fused_y = lesson.read_y(elems)?;
    let differing = staged_y
        .iter()
        .zip(&fused_y)
        .filter(|(a, b)| a.to_bits() != b.to_bits())
        .fold((0usize, 0.0f64), |(n, m), (a, b)| {
            (n + 1, m.max((*a as f64 - *b as f64).abs()))
        });

    progress.inc(1);
    progress.set_message("part 3: the sweep");
    let mut sweep = Vec::with_capacity(sizes.sweep.len());
    for &n in &sizes.sweep {
        let s = lesson.time(Chain::Staged, n, plan)?;
        let f = lesson.time(Chain::Kernel(Kernel::Fused), n, plan)?;
        sweep.push((n, s, f));
    }

    progress.inc(1);
    progress.set_message("part 4: widths");
    let mut wide = Vec::with_capacity(WIDTHS.len());
    for &w in WIDTHS {
        let k = Kernel::Wide(w);
        let stats = FunctionStats::of(lesson.function(k, Side::Rust).expect("loaded"))?;
        let blocks_per_sm = lesson.blocks_per_sm(k)?;
        wide.push(WideRow {
            width: w,
            blocks: blocks_for(elems, w),
            stats,
            blocks_per_sm,
            occupancy_pct: 100.0 * (blocks_per_sm * THREADS_PER_BLOCK) as f64
                / gpu.info.max_threads_per_sm as f64,
            timing: lesson.time(Chain::Kernel(k), elems, plan)?,
        });
    }

    if staged.median_ms() <= fused.median_ms() {
        return Ok(Outcome::Failed(vec![Failure {
            kernel: "staged chain",
            detail: format!(
                "the staged chain ({:.6} ms) is not slower than the fused one ({:.6} ms), which cannot be right at 3x the bytes",
                staged.median_ms(),
                fused.median_ms()
            ),
        }]));
    }
    Ok(Outcome::Passed(Measured {
        sizes: sizes.clone(),
        clamped_pct: 100.0 * clamped as f64 / CHECK_ELEMS as f64,
        empty_small,
        empty_full,
        copy,
        stages: stages.try_into().expect("four stages"),
        staged,
        fused,
        differing,
        sweep,
        wide,
    }))
}

/// The CUDA C twins of the fusion kernels.
pub const CUDA_C_SOURCE: &str = include_str!("fusion.cu");

/// `WIDE(W)` once per width: the twins the CUDA C source instantiates,
/// from the one list of widths.
macro_rules! cuda_instances {
    ($($name:ident = $w:literal),* $(,)?) => {
        concat!($("WIDE(", $w, ") "),*)
    };
}

/// Every kernel but the empty one is compared: each side checked at the
/// odd size (the kernels that are whole chains against the f64 reference;
/// every kernel's output compared between the two languages), then timed
/// at the lesson's size.
impl Twinned for Fusion<'_> {
    type Kernel = Kernel;

    fn kernels(&mut self) -> &mut KernelSet<Kernel> {
        &mut self.kernels
    }

    fn compared(&self) -> Vec<Kernel> {
        Kernel::ALL
            .iter()
            .copied()
            .filter(|&k| k != Kernel::DoNothing)
            .collect()
    }

    fn check(&mut self, k: Kernel) -> Result<(Vec<Failure>, Vec<u64>)> {
        // The stages read their predecessor's buffer: run the stages before
        // this one first, on the side in use, so the input is its own.
        if let Some(pos) = Kernel::STAGES.iter().position(|&s| s == k) {
            for &before in &Kernel::STAGES[..pos] {
                self.launch(before, CHECK_ELEMS)?;
            }
        }
        let chain = Chain::Kernel(k);
        let (found, got) = if matches!(k, Kernel::Fused | Kernel::Wide(_)) {
            let want = self.reference();
            Fusion::check(self, chain, &want)?
        } else {
            (Vec::new(), self.run_checked(chain)?)
        };
        Ok((found, got.iter().map(|v| u64::from(v.to_bits())).collect()))
    }

    fn time(&mut self, k: Kernel, plan: Plan) -> Result<Timing> {
        let n = self.elems;
        Fusion::time(self, Chain::Kernel(k), n, plan)
    }
}

/// The fusion lesson as `lab` runs it.
pub struct FusionLesson;

impl lesson::Lesson for FusionLesson {
    const NAME: &'static str = "fusion";
    const ABOUT: &'static str = "A four-stage elementwise chain, staged against fused; launch cost; a size sweep; widening.";
    type Kernel = Kernel;
    type Sizes = Sizes;
    type Twins<'g> = Fusion<'g>;

    fn block_sizes() -> serde_json::Value {
        serde_json::json!({"all": THREADS_PER_BLOCK})
    }

    /// What NVRTC compiles: the lesson's constants and the wide instances as
    /// `#define`s, then the twins.
    fn cuda_c() -> String {
        let mut defines = String::new();
        for (name, v) in [
            ("GAMMA", GAMMA),
            ("BETA", BETA),
            ("LO", LO),
            ("HI", HI),
            ("GELU_A", GELU_A),
            ("GELU_B", GELU_B),
        ] {
            defines.push_str(&format!("#define {name} {v:?}f\n"));
        }
        defines.push_str(&format!(
            "#define WIDE_INSTANCES {}\n",
            kernels_gpu::fused_widths!(cuda_instances)
        ));
        format!("{defines}{CUDA_C_SOURCE}")
    }

    fn run(
        gpu: &Gpu,
        sizes: &Sizes,
        context: Context,
        options: &RunOptions<'_>,
    ) -> Result<Outcome<Box<dyn lesson::Report>>> {
        let mut lesson = Fusion::new(gpu, sizes.elems)?;
        let outcome = run(&mut lesson, options.plan, sizes, options.progress)?;
        Ok(outcome.map(|m| {
            Box::new(report::Report::new(&gpu.info, context, m)) as Box<dyn lesson::Report>
        }))
    }

    fn twins<'g>(gpu: &'g Gpu, sizes: &Sizes) -> Result<Fusion<'g>> {
        Fusion::new(gpu, sizes.elems)
    }

    /// The reading of staged against fused is about what each kernel finds
    /// in L2 after the one before it: ncu must leave the caches alone.
    const NCU_CACHE: crate::ncu::CacheControl = crate::ncu::CacheControl::AsLeft;

    /// Every compared kernel once at the lesson's size, then the seed's
    /// staged chain and chain_fused at [`SEED_ELEMS`] ([`profile_seed`]).
    fn profile(gpu: &Gpu, sizes: &Sizes) -> Result<String> {
        let mut lesson = Fusion::new(gpu, sizes.elems)?;
        let rows = lesson::profile_rows(&mut lesson)?;
        let seed = if profile_seed(&mut lesson)? {
            format!(", then the staged chain and chain_fused twice each at the seed's {SEED_ELEMS}")
        } else {
            format!(" (buffers under the seed's {SEED_ELEMS}: no seed-size launches)")
        };
        Ok(format!(
            "profile mode: {rows} kernels once each at {} elements{seed}; no checks, no timings",
            lesson.elems
        ))
    }
}

/// The seed's part-2 pair for the profiler: the staged chain twice, then
/// chain_fused twice, at [`SEED_ELEMS`] elements, so the second of each
/// meets L2 as a timed loop leaves it (each stage after the one before it,
/// the fused kernel after itself); the report reads the last launch of each
/// kernel over the seed's grid ([`report::seed_counters`]). Returns false
/// (and launches nothing) where the buffers are shorter than the seed's
/// size.
///
/// # Errors
/// Launch, fault and driver errors.
pub fn profile_seed(lesson: &mut Fusion<'_>) -> Result<bool> {
    let n = SEED_ELEMS;
    if n > lesson.elems {
        return Ok(false);
    }
    for _ in 0..2 {
        lesson.launch_staged(n)?;
    }
    lesson.gpu.sync_after("staged chain")?;
    for _ in 0..2 {
        lesson.launch(Kernel::Fused, n)?;
    }
    lesson.gpu.sync_after(Kernel::Fused.symbol())?;
    Ok(true)
}
