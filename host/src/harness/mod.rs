//! The harness lesson on the host (chapter 19.4): one kernel timed four
//! ways, three of them measuring something other than the kernel.
//!
//! 1. Host clock around launches with no synchronisation: the launches are
//!    asynchronous, so this times the host handing work to the driver (the
//!    enqueue), not the GPU doing it. Reads too fast.
//! 2. The first call, host-clocked with a synchronisation: it pays for
//!    loading the kernel (under CUDA's lazy loading, `cuModuleGetFunction`
//!    loads it onto the device) and runs at whatever clock an idle GPU sat
//!    at. Reads too slow. A process has one first call per kernel, so this
//!    is one sample.
//! 3. The seed's harness: warm-up runs, then `cuStreamSynchronize` on both
//!    sides of N launches, host clock: the kernel's time plus one
//!    synchronisation's latency spread over N. Each of its two
//!    synchronisations is also removed on its own: (3a) without the one
//!    before the clock starts, the warm-ups still queued run inside the
//!    clock; (3b) without the one before it stops, the clock stops once the
//!    last launch is queued. Method 1 is both removed.
//! 4. The project's harness ([`timing::time_kernel`]): warm-up, CUDA events
//!    on the stream, the median and spread of several batches. The
//!    reference the others are set against.
//!
//! Every output is checked, every element, before any figure is reported;
//! so is the output of the seed's host workload after its timed calls.

pub mod reference;

use std::time::Instant;

use cudarc::driver::{CudaSlice, LaunchConfig};
use kernels_gpu::harness::*;
use serde::Serialize;
use serde_json::json;

use crate::check::{Failure, Tolerance, first_mismatch};
use crate::compare::Twinned;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::kernels::KernelSet;
use crate::lesson::{self, Findings, Outcome, Row, RunOptions, Section, SectionReport};
use crate::report::Context;
use crate::sizes::{LessonSizes, Stream, grown};
use crate::timing::{self, Plan, Timing};

crate::kernel_ids! {
    /// The lesson's one kernel.
    pub enum Kernel {
        /// out = a + b: (a, b, out, n).
        Add = "harness_add" (Ptr, Ptr, Ptr, U64),
    }
}

/// The kernel's exported symbol (the CUDA C twin's too).
pub const SYMBOL: &str = Kernel::Add.symbol();

// ANCHOR: launch_config
/// One thread per element, in blocks of THREADS_PER_BLOCK.
pub fn launch_config(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(THREADS_PER_BLOCK as usize).max(1) as u32, 1, 1),
        block_dim: (THREADS_PER_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}
// ANCHOR_END: launch_config

/// Bytes one add over `n` elements moves: a and b read, out written.
pub fn bytes(n: usize) -> f64 {
    (3 * n * size_of::<f32>()) as f64
}

/// The first call's host-clock time, in its two parts.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct FirstCall {
    /// `cuModuleGetFunction` for the kernel, ms (where lazy loading loads
    /// it onto the device).
    pub get_function_ms: f64,
    /// The first launch to the end of the synchronisation after it, ms.
    pub launch_and_sync_ms: f64,
}

impl FirstCall {
    /// Both parts: what a program that times its first call sees (the
    /// runtime API does the `cuModuleGetFunction` inside the first launch).
    pub fn total_ms(&self) -> f64 {
        self.get_function_ms + self.launch_and_sync_ms
    }
}

/// Which of the seed harness's two synchronisations a host-clocked timing
/// keeps: the one after the warm-ups, before the clock starts (it drains
/// the warm-ups from the queue), and the one after the timed launches,
/// before the clock stops (it waits for them to finish).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Syncs {
    /// The synchronisation before the clock starts.
    pub before_start: bool,
    /// The synchronisation before the clock stops.
    pub before_stop: bool,
}

impl Syncs {
    /// The seed's harness: both (method 3).
    pub const BOTH: Syncs = Syncs {
        before_start: true,
        before_stop: true,
    };
    /// Without the one before the clock starts (method 3a).
    pub const NO_START: Syncs = Syncs {
        before_start: false,
        before_stop: true,
    };
    /// Without the one before the clock stops (method 3b).
    pub const NO_STOP: Syncs = Syncs {
        before_start: true,
        before_stop: false,
    };
    /// Neither (method 1).
    pub const NONE: Syncs = Syncs {
        before_start: false,
        before_stop: false,
    };

    /// The method's row key (after `harness_add/<n>/`).
    pub fn key(self) -> &'static str {
        match (self.before_start, self.before_stop) {
            (true, true) => "host-sync",
            (false, true) => "no-start-sync",
            (true, false) => "no-stop-sync",
            (false, false) => "no-sync",
        }
    }

    /// The method's row label, with the seed harness's counts.
    pub fn label(self, warmups: u32, runs: u32) -> String {
        match (self.before_start, self.before_stop) {
            (true, true) => {
                format!("(3) seed's harness: {warmups} warm-ups, sync, {runs} launches, sync")
            }
            (false, true) => format!(
                "(3a) seed's harness less the first sync: {warmups} warm-ups, {runs} launches, sync"
            ),
            (true, false) => format!(
                "(3b) seed's harness less the second sync: {warmups} warm-ups, sync, {runs} launches"
            ),
            (false, false) => format!("(1) host clock, {runs} launches, no synchronisation"),
        }
    }
}

/// The per-launch medians (ms) of the seed's harness with each
/// combination of its synchronisations, and the events' median, with the
/// harness's counts: what [`sync_reading`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SyncEffects {
    /// Both synchronisations (method 3).
    pub both_ms: f64,
    /// Without the one before the clock starts (method 3a).
    pub no_start_ms: f64,
    /// Without the one before the clock stops (method 3b).
    pub no_stop_ms: f64,
    /// Neither (method 1).
    pub none_ms: f64,
    /// CUDA events (method 4).
    pub events_ms: f64,
    /// Warm-up launches before each timed window.
    pub warmups: u32,
    /// Launches in each timed window.
    pub runs: u32,
}

impl SyncEffects {
    /// The most (3a) can read against (3) when every queued warm-up runs
    /// inside the clock and the GPU, not the host, sets the pace:
    /// (warm-ups + runs) / runs.
    pub fn warmup_bound(&self) -> f64 {
        f64::from(self.warmups + self.runs) / f64::from(self.runs.max(1))
    }
}

/// What removing each synchronisation on its own does, from the run's
/// medians: (3a) and (3b) against (3), each beside (1) (both removed),
/// and which removal moves the figure more. Ratios within 5% are called no
/// effect.
pub fn sync_reading(e: &SyncEffects) -> String {
    let ratio = |ms: f64| ms / e.both_ms;
    let (r_start, r_stop, r_none) = (ratio(e.no_start_ms), ratio(e.no_stop_ms), ratio(e.none_ms));
    if ![r_start, r_stop, r_none]
        .iter()
        .all(|r| r.is_finite() && *r > 0.0)
    {
        return format!(
            "Each synchronisation on its own: no ratios ((3) took {} ms per launch).",
            e.both_ms
        );
    }
    let within = |r: f64| (r - 1.0).abs() <= 0.05;
    let bound = e.warmup_bound();
    let start = if within(r_start) {
        format!(
            "Without the synchronisation before the clock starts, (3a) is within 5% of (3) ({r_start:.2}x): at this size the \
             warm-ups left in the queue do not show in the figure."
        )
    } else if r_start > 1.0 {
        format!(
            "Without the synchronisation before the clock starts, (3a) reads {r_start:.2}x (3): the warm-ups still queued ran \
             inside the clock ({} warm-ups over {} runs would make it {bound:.2}x at most, if all of them did and the GPU set \
             the pace){}.",
            e.warmups,
            e.runs,
            if r_start > bound * 1.05 {
                "; it reads more than that bound, so something besides the warm-ups slowed it"
            } else {
                ""
            }
        )
    } else {
        format!(
            "Without the synchronisation before the clock starts, (3a) reads {r_start:.2}x (3), faster, which the queued \
             warm-ups cannot cause (they only add work inside the clock)."
        )
    };
    let stop = if within(r_stop) {
        format!(
            "Without the synchronisation before the clock stops, (3b) is within 5% of (3) ({r_stop:.2}x): at this size \
             queueing the {} launches takes about as long as running them.",
            e.runs
        )
    } else if r_stop < 1.0 {
        format!(
            "Without the synchronisation before the clock stops, (3b) reads {r_stop:.2}x (3): the clock stopped once the \
             last launch was queued, before the GPU finished, so it is too fast."
        )
    } else {
        format!(
            "Without the synchronisation before the clock stops, (3b) reads {r_stop:.2}x (3), slower, which stopping the \
             clock earlier cannot cause."
        )
    };
    let none = format!(
        "Both removed, (1) reads {r_none:.2}x (3){}.",
        if within(e.none_ms / e.no_stop_ms) {
            format!(
                ", within 5% of (3b) alone ({:.2}x): the missing second synchronisation accounts for it",
                e.none_ms / e.no_stop_ms
            )
        } else {
            format!(", {:.2}x (3b) alone", e.none_ms / e.no_stop_ms)
        }
    );
    let (big, small) = (r_start.ln().abs(), r_stop.ln().abs());
    let larger = if within(r_start) && within(r_stop) {
        "Neither removal alone moves the figure by more than 5% at this size.".to_string()
    } else if big > small {
        format!(
            "At this size the synchronisation before the clock starts is the one that matters more ({r_start:.2}x against \
             {r_stop:.2}x)."
        )
    } else {
        format!(
            "At this size the synchronisation before the clock stops is the one that matters more ({r_stop:.2}x against \
             {r_start:.2}x)."
        )
    };
    format!("{start} {stop} {none} {larger}")
}

/// The failure of the seed's host workload: the first of the `n`
/// elements of `out` (what [`reference::vector_add`] left after its timed
/// calls) whose bits differ from the reference sum of the inputs' fills,
/// recomputed here from [`reference::fill_a`] and [`reference::fill_b`].
/// `None` when every element is right.
pub fn host_workload_failure(out: &[f32], n: usize) -> Option<Failure> {
    let want: Vec<f32> = (0..n)
        .map(|i| reference::fill_a(i) + reference::fill_b(i))
        .collect();
    let got = out.get(..n).unwrap_or(out);
    if got.len() < n {
        return Some(Failure {
            kernel: "vector_add_host",
            detail: format!("n = {n}: only {} outputs", got.len()),
        });
    }
    first_mismatch(got, &want, Tolerance::Bits).map(|m| Failure {
        kernel: "vector_add_host",
        detail: format!("n = {n}: {m}: the host workload after its timed calls"),
    })
}

/// How far a method's time is from the events' median, in words: within
/// 5% "agrees", else "too fast" (a shorter time, so the kernel looks
/// faster than it is) or "too slow", by the factor.
/// Without a positive, finite pair of times there is no ratio: it says so.
pub fn verdict(method_ms: f64, events_ms: f64) -> String {
    let ratio = method_ms / events_ms;
    if !(events_ms > 0.0 && ratio.is_finite()) {
        format!("no ratio ({method_ms} ms against {events_ms} ms)")
    } else if (ratio - 1.0).abs() <= 0.05 {
        format!("agrees within 5% ({ratio:.2}x)")
    } else if ratio < 1.0 {
        format!(
            "too fast by {:.1}x ({ratio:.3}x the events' time)",
            1.0 / ratio
        )
    } else {
        format!("too slow by {ratio:.1}x")
    }
}

/// CUDA's module loading mode as the driver reports it (`lazy`, `eager`,
/// or `unknown (...)` where the driver does not say), and the
/// `CUDA_MODULE_LOADING` variable it was read under.
pub fn loading_mode() -> (String, Option<String>) {
    let mode = crate::gpu::module_loading_mode().unwrap_or_else(|e| format!("unknown ({e})"));
    (mode, std::env::var("CUDA_MODULE_LOADING").ok())
}

/// The lesson's buffers: a and b (the reference inputs) and out, of
/// `capacity` floats each; the kernel, once it has been called.
pub struct Harness<'g> {
    gpu: &'g Gpu,
    kernels: Option<KernelSet<Kernel>>,
    a: CudaSlice<f32>,
    b: CudaSlice<f32>,
    out: CudaSlice<f32>,
    a_host: Vec<f32>,
    b_host: Vec<f32>,
}

impl<'g> Harness<'g> {
    /// Checks free memory, allocates three buffers of `capacity` floats and
    /// uploads the inputs. Does not touch the kernel.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] before allocating; driver errors.
    pub fn new(gpu: &'g Gpu, capacity: usize) -> Result<Self> {
        gpu.require_free_memory(
            3 * capacity * size_of::<f32>(),
            "the harness lesson's three buffers",
        )?;
        let a_host = reference::input(capacity, reference::fill_a);
        let b_host = reference::input(capacity, reference::fill_b);
        let mut a = gpu.alloc_f32(capacity)?;
        let mut b = gpu.alloc_f32(capacity)?;
        gpu.upload(&a_host, &mut a)?;
        gpu.upload(&b_host, &mut b)?;
        let out = gpu.alloc_f32(capacity)?;
        gpu.sync_after("uploading the harness inputs")?;
        Ok(Harness {
            gpu,
            kernels: None,
            a,
            b,
            out,
            a_host,
            b_host,
        })
    }

    /// Gets the kernel from the module unless that was done already.
    pub fn load(&mut self) -> Result<()> {
        if self.kernels.is_none() {
            self.kernels = Some(KernelSet::new(self.gpu)?);
        }
        Ok(())
    }

    /// Launches the add over `n` elements (asynchronously) on the side in
    /// use, getting the kernel first if this is its first call.
    ///
    /// # Errors
    /// [`Error::Size`] past the buffers; a launch the driver refuses.
    // ANCHOR: launch
    pub fn launch(&mut self, n: usize) -> Result<()> {
        if n > self.out.len() {
            return Err(Error::Size(format!(
                "{SYMBOL}: {n} elements, buffers of {}",
                self.out.len()
            )));
        }
        self.load()?;
        let launch = self
            .kernels
            .as_ref()
            .expect("loaded above")
            .launch(self.gpu, Kernel::Add)
            .input(&self.a)
            .input(&self.b)
            .output(&mut self.out)
            .scalar(n as u64);
        // SAFETY: the three buffers hold at least n floats (checked above)
        // and are distinct; the grid has one thread per element.
        unsafe { launch.launch(launch_config(n)) }
    }
    // ANCHOR_END: launch

    /// Fills the output with 0xFF (NaN) and waits for it, so an element the
    /// kernel never writes fails the check and no fill is timed.
    fn poison(&mut self) -> Result<()> {
        self.gpu.fill_bytes(&mut self.out, 0xFF)?;
        self.gpu.sync_after("poisoning the harness output")
    }

    /// Method 2: the kernel's first call in this process, host-clocked:
    /// `cuModuleGetFunction`, then one launch over `n` and a
    /// synchronisation. Leaves the output for [`Harness::verify`].
    ///
    /// # Errors
    /// [`Error::Tool`] when the kernel was already got (a second "first"
    /// call would measure nothing); driver errors.
    pub fn first_call(&mut self, n: usize) -> Result<FirstCall> {
        if self.kernels.is_some() {
            return Err(Error::Tool(format!(
                "{SYMBOL} was already loaded: its first call is gone"
            )));
        }
        self.poison()?;
        // Nothing but the call inside the clock: the guards are noted and
        // read after it stops.
        let start = Instant::now();
        self.load()?;
        let loaded = Instant::now();
        self.launch(n)?;
        self.gpu.sync(SYMBOL)?;
        let done = Instant::now();
        self.gpu.check_guards()?;
        Ok(FirstCall {
            get_function_ms: (loaded - start).as_secs_f64() * 1e3,
            launch_and_sync_ms: (done - loaded).as_secs_f64() * 1e3,
        })
    }

    /// Checks the first `n` elements of the output, every one, bit for bit
    /// against the reference; returns the failure, if any, and the
    /// output's bits.
    pub fn verify(&mut self, n: usize) -> Result<(Option<Failure>, Vec<u64>)> {
        let mut got = vec![0.0f32; n];
        self.gpu.download(&self.out, &mut got)?;
        self.gpu.sync_after(SYMBOL)?;
        let want: Vec<f32> = (0..n).map(|i| self.a_host[i] + self.b_host[i]).collect();
        let failure = first_mismatch(&got, &want, Tolerance::Bits).map(|m| Failure {
            kernel: SYMBOL,
            detail: format!("n = {n}: {m}: one correctly rounded add"),
        });
        Ok((
            failure,
            got.iter().map(|g| u64::from(g.to_bits())).collect(),
        ))
    }

    /// Runs the add over `n` elements into a poisoned output and checks it.
    pub fn check(&mut self, n: usize) -> Result<(Option<Failure>, Vec<u64>)> {
        self.poison()?;
        self.launch(n)?;
        self.gpu.sync_after(SYMBOL)?;
        self.verify(n)
    }

    /// Methods 1 and 3 (3a, 3b), host-clocked: per batch, `warmups`
    /// launches, then the host clock around `runs` launches; per-launch ms
    /// per batch. `syncs` says which of the seed's two synchronisations
    /// are kept: before the clock starts (the warm-ups drained first) and
    /// before it stops (the clock sees the kernels finish). Without the
    /// first the warm-ups stay queued as the clock starts; without the
    /// second the clock sees only the launches handed to the driver. Each
    /// batch is drained afterwards, untimed, so the next starts from an
    /// empty queue and a fault still surfaces.
    pub fn time_host_clocked(
        &mut self,
        n: usize,
        (warmups, runs, batches): (u32, u32, u32),
        syncs: Syncs,
    ) -> Result<Timing> {
        let mut samples_ms = Vec::with_capacity(batches as usize);
        // The clocks are read while this guard lives (warm-ups included:
        // the seed's protocol repeats them before every batch).
        let timed = crate::clocks::timed_work();
        // The clocked windows hold launches and waits only: no guard
        // bookkeeping (the outputs were checked before), no guard reads.
        let untracked = self.gpu.guards.untracked();
        // ANCHOR: host_clocked
        for _ in 0..batches {
            for _ in 0..warmups {
                self.launch(n)?;
            }
            if syncs.before_start {
                self.gpu.sync(SYMBOL)?;
            }
            let start = Instant::now();
            for _ in 0..runs {
                self.launch(n)?;
            }
            if syncs.before_stop {
                self.gpu.sync(SYMBOL)?;
            }
            samples_ms.push(start.elapsed().as_secs_f64() * 1e3 / f64::from(runs));
            self.gpu.sync(SYMBOL)?;
        }
        // ANCHOR_END: host_clocked
        drop(untracked);
        Ok(Timing::timed(samples_ms, timed.window()))
    }

    /// Method 4: CUDA events with `plan` (see [`timing::time_kernel`]).
    // ANCHOR: events
    pub fn time_with_events(&mut self, n: usize, plan: Plan) -> Result<Timing> {
        let gpu = self.gpu;
        timing::time_kernel(gpu, SYMBOL, plan, || self.launch(n))
    }
    // ANCHOR_END: events
}

impl Twinned for Harness<'_> {
    type Kernel = Kernel;

    fn kernels(&mut self) -> &mut KernelSet<Kernel> {
        self.kernels
            .as_mut()
            .expect("compare loads the kernels first")
    }

    fn check(&mut self, _kernel: Kernel) -> Result<(Vec<Failure>, Vec<u64>)> {
        let (failure, bits) = Harness::check(self, CHECK_ELEMS)?;
        Ok((failure.into_iter().collect(), bits))
    }

    /// At the whole buffers: the large size of the run.
    fn time(&mut self, _kernel: Kernel, plan: Plan) -> Result<Timing> {
        let n = self.out.len();
        self.time_with_events(n, plan)
    }
}

/// What each method measured, for one size's section: `first_section`
/// (the seed's size, with the first call and the CPU row), the seed
/// harness's `runs`, method 1's implied GB/s, the derived DRAM peak in GB/s
/// (`None` where the driver's attributes leave it unknown) and whether the
/// three buffers fit in the L2 (where the DRAM peak is no hard limit).
pub fn reading(
    first_section: bool,
    runs: u32,
    no_sync_gb_s: f64,
    dram_gb_s: Option<f64>,
    fits_l2: bool,
) -> String {
    let over_peak = match dram_gb_s {
        None => format!(
            ": its \"{no_sync_gb_s:.0} GB/s\" cannot be set against the device's DRAM peak, unknown here (the \
             driver reports a memory clock or bus width of 0)"
        ),
        Some(dram) if no_sync_gb_s <= dram => String::new(),
        Some(dram) if fits_l2 => format!(
            ": its \"{no_sync_gb_s:.0} GB/s\" is over the device's derived DRAM peak of {dram:.0} GB/s (not a \
             hard limit here: the three buffers fit in the L2)"
        ),
        Some(dram) => format!(
            ": its \"{no_sync_gb_s:.0} GB/s\" is over the device's derived DRAM peak of {dram:.0} GB/s, \
             impossible for a kernel that streams these bytes from DRAM"
        ),
    };
    format!(
        "(1) measures how fast the host hands launches to the driver, not the kernel{over_peak}. {}(3) adds one \
         synchronisation's latency spread over {runs} launches to the kernel's time. (4) is the kernel's time: the \
         figure to use. Only (4) is timed as the footer's 'GPU, events' line says; {} host-clocked, with the \
         counts their labels give.",
        if first_section {
            "(2) measures loading the kernel and a cold start, once per process: it is not the kernel's speed. "
        } else {
            ""
        },
        if first_section {
            "(1) to (3b) and the CPU row are"
        } else {
            "(1) and (3) to (3b) are"
        }
    )
}

/// The lesson's sizes: the seed's workload (cache-resident on most GPUs, on
/// purpose), then the large one that streams from DRAM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sizes {
    /// Elements of the two timed workloads: the seed's, then the large one
    /// (the check size in a quick run).
    pub timed_elems: [usize; 2],
    /// Elements of the first call.
    pub first_call_elems: usize,
    /// The odd correctness size.
    pub check_elems: usize,
    /// The seed's harness: warm-ups, then timed runs.
    pub seed_harness: [u32; 2],
}

impl Sizes {
    /// A full run on `info`'s GPU: the large workload grown from
    /// [`SEED_LARGE_ELEMS`] until a buffer is at least 4x the L2; `quick`:
    /// the check size in its place.
    pub fn new(info: &crate::gpu::DeviceInfo, quick: bool) -> Sizes {
        let large = if quick {
            CHECK_ELEMS
        } else {
            grown(SEED_LARGE_ELEMS, size_of::<f32>(), info.l2_bytes)
        };
        Sizes {
            timed_elems: [SEED_ELEMS, large],
            first_call_elems: SEED_ELEMS,
            check_elems: CHECK_ELEMS,
            seed_harness: [SEED_WARMUPS, SEED_RUNS],
        }
    }

    /// Floats each of the three buffers holds: enough for every workload.
    pub fn capacity(&self) -> usize {
        self.timed_elems[1].max(SEED_ELEMS).max(CHECK_ELEMS)
    }
}

impl LessonSizes for Sizes {
    fn for_gpu(info: &crate::gpu::DeviceInfo, quick: bool) -> Result<Sizes> {
        Ok(Sizes::new(info, quick))
    }
    /// The large workload; the seed's is timed where it falls (in L2 on
    /// most GPUs), as the seed times it.
    fn streams(&self) -> Vec<Stream> {
        vec![Stream::of::<f32>(
            "a, b, out (large workload)",
            self.timed_elems[1],
        )]
    }

    fn device_bytes(&self) -> usize {
        3 * self.capacity() * size_of::<f32>()
    }
}

/// The CUDA C twin.
pub const CUDA_C_SOURCE: &str = include_str!("harness.cu");

/// The harness lesson as `lab` runs it.
pub struct HarnessLesson;

impl lesson::Lesson for HarnessLesson {
    const NAME: &'static str = "harness";
    const ABOUT: &'static str = "Chapter 19.4: one kernel timed the wrong ways (no synchronisation, the first call) and the right ways, each synchronisation removed on its own, and how far each is off.";
    type Kernel = Kernel;
    type Sizes = Sizes;
    type Twins<'g> = Harness<'g>;

    fn block_sizes() -> serde_json::Value {
        json!({"all": THREADS_PER_BLOCK})
    }

    /// What NVRTC compiles: the block size as a `#define`, then the twin.
    fn cuda_c() -> String {
        format!("#define THREADS_PER_BLOCK {THREADS_PER_BLOCK}\n{CUDA_C_SOURCE}")
    }

    /// The first call, then every size checked; then each size timed the
    /// three repeatable ways, and the seed's own CPU workload.
    fn run(
        gpu: &Gpu,
        sizes: &Sizes,
        context: Context,
        options: &RunOptions<'_>,
    ) -> Result<Outcome<Box<dyn lesson::Report>>> {
        let plan = options.plan;
        let quick = options.quick;
        let mut lesson = Harness::new(gpu, sizes.capacity())?;
        let sizes = sizes.timed_elems;
        let (mode, mode_env) = loading_mode();

        // Method 2 first: nothing in this process has got or launched the
        // kernel yet. Its output is the first thing checked.
        let first = lesson.first_call(SEED_ELEMS)?;
        let mut failures = Vec::new();
        failures.extend(lesson.verify(SEED_ELEMS)?.0);
        for n in [CHECK_ELEMS, sizes[1], 1] {
            failures.extend(lesson.check(n)?.0);
        }
        if !failures.is_empty() {
            return Ok(Outcome::Failed(failures));
        }

        let (warmups, runs, batches) = if quick {
            (plan.warmups, plan.launches_per_batch, plan.batches)
        } else {
            (SEED_WARMUPS, SEED_RUNS, plan.batches)
        };
        let dram = gpu.info.derived_dram_bytes_per_s().map(|d| d / 1e9);
        let mut sections = Vec::new();
        let mut facts = Vec::new();
        for (index, &n) in sizes.iter().enumerate() {
            let counts = (warmups, runs, batches);
            let without_sync = lesson.time_host_clocked(n, counts, Syncs::NONE)?;
            let with_sync = lesson.time_host_clocked(n, counts, Syncs::BOTH)?;
            let no_start = lesson.time_host_clocked(n, counts, Syncs::NO_START)?;
            let no_stop = lesson.time_host_clocked(n, counts, Syncs::NO_STOP)?;
            let events = lesson.time_with_events(n, plan)?;
            let truth = events.median_ms();
            let buffer = (n * size_of::<f32>()) as f64;
            // The working set is all three buffers: what decides whether
            // back-to-back launches find them in the L2.
            let mut section = Section::new(format!(
                "{n} floats (3 buffers of {:.1} MiB, together {:.2}x the L2{})",
                buffer / (1 << 20) as f64,
                bytes(n) / gpu.info.l2_bytes.max(1) as f64,
                if index == 0 {
                    ", the seed's workload"
                } else if quick {
                    ", quick: not a measurement"
                } else {
                    ""
                }
            ));
            let key = |method: &str| format!("{SYMBOL}/{n}/{method}");
            let host_row = |syncs: Syncs, t: &Timing| {
                Row::new(key(syncs.key()), syncs.label(warmups, runs), t.clone()).host_clocked()
            };
            let mut rows = vec![
                host_row(Syncs::NONE, &without_sync),
                host_row(Syncs::BOTH, &with_sync),
                host_row(Syncs::NO_START, &no_start),
                host_row(Syncs::NO_STOP, &no_stop),
                Row::new(
                    key("events"),
                    format!(
                        "(4) events: {} warm-ups, median of {} x {}",
                        plan.warmups, plan.batches, plan.launches_per_batch
                    ),
                    events.clone(),
                ),
            ];
            let mut verdicts = vec![
                ("no-sync", verdict(without_sync.median_ms(), truth)),
                ("host-sync", verdict(with_sync.median_ms(), truth)),
                ("no-start-sync", verdict(no_start.median_ms(), truth)),
                ("no-stop-sync", verdict(no_stop.median_ms(), truth)),
            ];
            if index == 0 {
                let first_timing = Timing::new(vec![first.total_ms()]);
                rows.insert(
                    1,
                    Row::new(
                        key("first-call"),
                        "(2) first call: get function, launch, sync; host clock; one sample",
                        first_timing,
                    )
                    .host_clocked(),
                );
                verdicts.insert(1, ("first-call", verdict(first.total_ms(), truth)));
                section.line(format!(
                    "Module loading: {mode} (CUDA_MODULE_LOADING {}). First call of {SYMBOL}: cuModuleGetFunction {:.3} ms \
                     + launch and sync {:.3} ms = {:.3} ms.",
                    mode_env.as_deref().map_or("unset: the driver's default".to_string(), |v| format!("= {v}")),
                    first.get_function_ms,
                    first.launch_and_sync_ms,
                    first.total_ms()
                ));
            }
            section.rows = rows.into_iter().map(|r| r.bytes(bytes(n))).collect();
            for (method, v) in &verdicts {
                section.line(format!("{method:<13} against the events' median: {v}"));
            }
            let spread = |t: &Timing| {
                format!(
                    "{:.4} / {:.4} / {:.4}",
                    t.min_ms(),
                    t.median_ms(),
                    t.max_ms()
                )
            };
            section.line(format!(
                "min / median / max per launch, ms: no-sync {}; host-sync {}; no-start-sync {}; no-stop-sync {}; events {}",
                spread(&without_sync),
                spread(&with_sync),
                spread(&no_start),
                spread(&no_stop),
                spread(&events)
            ));
            let enqueue_rate = bytes(n) / (without_sync.median_ms() * 1e-3) / 1e9;
            let effects = SyncEffects {
                both_ms: with_sync.median_ms(),
                no_start_ms: no_start.median_ms(),
                no_stop_ms: no_stop.median_ms(),
                none_ms: without_sync.median_ms(),
                events_ms: truth,
                warmups,
                runs,
            };
            section.reading = Some(format!(
                "{}\n{}",
                reading(
                    index == 0,
                    runs,
                    enqueue_rate,
                    dram,
                    bytes(n) <= gpu.info.l2_bytes as f64,
                ),
                sync_reading(&effects)
            ));
            let mut host_workload = serde_json::Value::Null;
            if index == 0 {
                // The seed's own workload: the host loop under the seed's
                // harness, labelled a CPU figure.
                // Poisoned (NaN) first, so an element the loop never wrote
                // fails the check after the timing.
                let mut out = vec![f32::NAN; n];
                let (a, b) = (&lesson.a_host[..n], &lesson.b_host[..n]);
                let cpu_plan = Plan {
                    warmups,
                    batches,
                    launches_per_batch: runs,
                    flush_l2: false,
                };
                let t = lesson::time_on_cpu(cpu_plan, || {
                    reference::vector_add(std::hint::black_box(&mut out), a, b)
                });
                // The seed checks its workload's output ("spot-checked output
                // correctness"); here every element, after the timed calls.
                if let Some(failure) = host_workload_failure(&out, n) {
                    return Ok(Outcome::Failed(vec![failure]));
                }
                section.line(format!(
                    "Host workload vector_add_host/{n} ({warmups} warm-up + {runs} timed calls a batch, {batches} batches): \
                     output correct, all {n} elements equal to the reference bit for bit after the timed calls."
                ));
                host_workload = json!({"symbol": format!("vector_add_host/{n}"), "elems": n, "elements_checked": n,
                    "correct": true, "checked": "after the timed calls, every element bit for bit"});
                section.rows.push(
                    Row::new(
                        format!("vector_add_host/{n}"),
                        format!("seed's host loop under its harness ({warmups} + {runs})"),
                        t,
                    )
                    .bytes(bytes(n))
                    .on_cpu(),
                );
            }
            facts.push(json!({
                "elems": n,
                "events_median_ms": truth,
                "methods": verdicts.iter().map(|(m, v)| json!({"method": m, "verdict": v})).collect::<Vec<_>>(),
                "syncs": {
                    "medians_ms": effects,
                    "against_both": {
                        "no_start_sync": effects.no_start_ms / effects.both_ms,
                        "no_stop_sync": effects.no_stop_ms / effects.both_ms,
                        "no_sync": effects.none_ms / effects.both_ms,
                    },
                    "warmup_bound": effects.warmup_bound(),
                },
                "host_workload": host_workload,
            }));
            sections.push(section);
        }
        SectionReport::passed(
            context,
            Findings {
                sections,
                facts: json!({
                    "module_loading": mode, "cuda_module_loading_env": mode_env, "first_call": first,
                    "checked_elems": [SEED_ELEMS, CHECK_ELEMS, sizes[1], 1], "sizes": facts,
                }),
            },
        )
    }

    /// The kernel got up front: the comparison does not time its first call.
    fn twins<'g>(gpu: &'g Gpu, sizes: &Sizes) -> Result<Harness<'g>> {
        let mut lesson = Harness::new(gpu, sizes.timed_elems[1].max(CHECK_ELEMS))?;
        lesson.load()?;
        Ok(lesson)
    }
}
