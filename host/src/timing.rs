//! Timing a kernel honestly, as the measuring chapter and the seeds ask:
//! compile and load outside the timed region, warm up each kernel, time with
//! CUDA events on the stream (a host clock around an asynchronous launch
//! times the launch, not the kernel), and report a distribution.

use cudarc::driver::sys::CUevent_flags;
use serde::Serialize;
use statrs::statistics::{Data, Max, Min, OrderStatistics};

use crate::error::{DriverContext, Error, Result};
use crate::gpu::Gpu;

/// How many launches are timed, and how.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Plan {
    /// Untimed launches first: lazy module loading makes each kernel's first
    /// launch pay its own load, and clocks need a moment to rise.
    pub warmups: u32,
    /// Timed batches, each bracketed by one pair of events.
    pub batches: u32,
    /// Back-to-back launches in one batch; a batch's time is divided by this.
    pub launches_per_batch: u32,
    /// Flush L2 before every timed launch (each launch then timed alone):
    /// a cold-cache time, where the default times a warm one.
    pub flush_l2: bool,
}

impl Plan {
    /// What every lesson uses unless it says otherwise: 3 warm-ups, then 7
    /// batches of 10 launches (the seed's 3 + 10, repeated for a spread).
    pub const DEFAULT: Plan = Plan {
        warmups: 3,
        batches: 7,
        launches_per_batch: 10,
        flush_l2: false,
    };

    /// One warm-up and one batch of one launch: for quick and sanitizer runs.
    pub const QUICK: Plan = Plan {
        warmups: 1,
        batches: 1,
        launches_per_batch: 1,
        flush_l2: false,
    };
}

/// Per-launch times of one kernel, one sample per batch, ms.
#[derive(Debug, Clone, Serialize)]
pub struct Timing {
    /// Per-launch ms of each batch, in the order measured.
    pub samples_ms: Vec<f64>,
    /// When the timed batches ran (with those of the kernels timed in
    /// rounds beside it, [`time_alternating`]), on the host's monotonic clock: the
    /// window the clock readings of this row, or of this side of a
    /// comparison's trial, are taken from
    /// ([`crate::clocks::Clocks::while_timed`],
    /// [`crate::clocks::Clocks::readings_in`]). `None` for a timing not
    /// taken on the GPU under a [`crate::clocks::TimedWork`] guard (CPU
    /// rows, synthetic timings).
    #[serde(skip)]
    pub window: Option<crate::clocks::Window>,
}

impl Timing {
    /// A timing of `samples_ms` (per-launch ms of each batch) with no
    /// window: a CPU row's, a recorded run's or a test's.
    pub fn new(samples_ms: Vec<f64>) -> Timing {
        Timing {
            samples_ms,
            window: None,
        }
    }

    /// A GPU timing of `samples_ms` taken during `window`.
    pub fn timed(samples_ms: Vec<f64>, window: crate::clocks::Window) -> Timing {
        Timing {
            samples_ms,
            window: Some(window),
        }
    }

    fn data(&self) -> Data<Vec<f64>> {
        Data::new(self.samples_ms.clone())
    }

    /// The median per-launch time, ms.
    pub fn median_ms(&self) -> f64 {
        self.data().median()
    }

    /// The fastest batch's per-launch time, ms.
    pub fn min_ms(&self) -> f64 {
        self.data().min()
    }

    /// The slowest batch's per-launch time, ms.
    pub fn max_ms(&self) -> f64 {
        self.data().max()
    }

    /// (max - min) / median, as a percentage: how far apart the batches were.
    pub fn spread_pct(&self) -> f64 {
        100.0 * (self.max_ms() - self.min_ms()) / self.median_ms()
    }
}

/// Runs `launch` `plan.warmups` times, then times `plan.batches` batches of
/// `plan.launches_per_batch` launches with events on the GPU's stream.
///
/// # Errors
/// Any launch or driver error; a kernel fault is charged to `kernel`;
/// [`Error::TimingBroken`] if a batch measures no time.
pub fn time_kernel(
    gpu: &Gpu,
    kernel: &str,
    plan: Plan,
    mut launch: impl FnMut() -> Result<()>,
) -> Result<Timing> {
    let [timing] = time_alternating(gpu, [kernel], plan, |_| launch())?;
    Ok(timing)
}

/// Times `N` launches in rounds: after `plan.warmups` untimed launches of
/// each, `plan.batches` rounds in which each is timed for one batch of
/// `plan.launches_per_batch` launches, as [`time_kernel`] times one.
/// `launch(i)` launches the `i`-th, named `kernels[i]`. Round `r` takes them
/// in order when `r` is even and in reverse when it is odd
/// (`round_order`), so for `N = 2` batch `r` of each runs right next to
/// batch `r` of the other, and neither always follows the other: a drift in
/// clock or temperature reaches both. Used where one kernel's time is read
/// as a share of another's, round by round (the GEMM lesson's share of
/// cuBLAS), as [`crate::compare::interleave`] alternates the two sides of a
/// comparison.
///
/// Returns one [`Timing`] for each entry of `kernels`, in that order, each
/// with the window of the whole run of rounds: its clock readings are those
/// of all `N`.
///
/// # Errors
/// Any launch or driver error; a fault is charged to the kernel whose batch
/// it surfaced in; [`Error::TimingBroken`] if a batch measures no time.
pub fn time_alternating<const N: usize>(
    gpu: &Gpu,
    kernels: [&str; N],
    plan: Plan,
    mut launch: impl FnMut(usize) -> Result<()>,
) -> Result<[Timing; N]> {
    for (i, kernel) in kernels.iter().enumerate() {
        for _ in 0..plan.warmups {
            launch(i)?;
        }
        gpu.sync_after(kernel)?;
    }
    // The timed launches are not checks: no guard bookkeeping between them.
    let _untracked = gpu.guards.untracked();

    let (start, stop) = (new_event(gpu)?, new_event(gpu)?);
    // The clocks are read while this guard lives: the timed batches only.
    let timed = crate::clocks::timed_work();
    let mut samples_ms: [Vec<f64>; N] =
        std::array::from_fn(|_| Vec::with_capacity(plan.batches as usize));
    for round in 0..plan.batches {
        for i in round_order::<N>(round) {
            let ms = batch_ms(gpu, kernels[i], plan, &start, &stop, &mut || launch(i))?;
            samples_ms[i].push(ms);
        }
    }
    let window = timed.window();
    Ok(samples_ms.map(|samples| Timing::timed(samples, window)))
}

/// How long [`time_held`] runs a kernel alone before it times it, and for
/// how long it then times it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Hold {
    /// Untimed launches, back to back in batches, for at least this long:
    /// the board's power and clock settle on what this kernel draws.
    pub untimed_s: f64,
    /// Timed batches for at least this long: an SM clock held at a power
    /// limit moves up and down many times a second, and the median of
    /// batches spread over a second reads the middle of that motion, where
    /// a few milliseconds would read one moment of it.
    pub timed_s: f64,
    /// At least this many timed batches, however long one takes.
    pub min_batches: u32,
}

impl Hold {
    /// 1 s untimed, then at least 1 s and 3 batches timed. The evidence is
    /// from a longer protocol: on an H100 at its 700 W limit, a scratch
    /// program that ran each GEMM alone for 3 s and took the median of its
    /// batches over the last 2 s read the wide BF16 kernel at 4096^3 at
    /// 393.4 and 390.3 TFLOP/s in two passes (cuBLAS at 562.1 and 555.5),
    /// while its batches of 10 launches ranged from 358.1 to 407.5 in the
    /// first pass (docs/results/h100-2026-12-07-sustained-sizes/
    /// sustain-sizes-log.txt). The lesson times 1 s rather than 2 to keep
    /// its run short; the spread column shows how far its batches moved.
    pub const DEFAULT: Hold = Hold {
        untimed_s: 1.0,
        timed_s: 1.0,
        min_batches: 3,
    };
}

/// Times `kernel` held at the clock its own power draw settles at: launches
/// it untimed, `plan.warmups` launches (at least one) and then batches of
/// `plan.launches_per_batch`, until `hold.untimed_s` has passed; then times
/// batches as [`time_kernel`] does until `hold.timed_s` has passed and at
/// least `hold.min_batches` were timed. What a long run of the one kernel
/// gets, where [`time_kernel`] times a few batches right after other work
/// and meets the clock that work left.
///
/// # Errors
/// As [`time_kernel`].
pub fn time_held(
    gpu: &Gpu,
    kernel: &str,
    hold: Hold,
    plan: Plan,
    mut launch: impl FnMut() -> Result<()>,
) -> Result<Timing> {
    let untimed = std::time::Instant::now();
    // The warm-ups' writes are checked, as `time_alternating` checks them;
    // the rest of the hold, like the timed launches, is not.
    for _ in 0..plan.warmups.max(1) {
        launch()?;
    }
    gpu.sync_after(kernel)?;
    let _untracked = gpu.guards.untracked();
    while untimed.elapsed().as_secs_f64() < hold.untimed_s {
        for _ in 0..plan.launches_per_batch.max(1) {
            launch()?;
        }
        gpu.sync(kernel)?;
    }
    let (start, stop) = (new_event(gpu)?, new_event(gpu)?);
    let timed = crate::clocks::timed_work();
    let began = std::time::Instant::now();
    let mut samples_ms = Vec::new();
    while samples_ms.len() < hold.min_batches.max(1) as usize
        || began.elapsed().as_secs_f64() < hold.timed_s
    {
        samples_ms.push(batch_ms(gpu, kernel, plan, &start, &stop, &mut launch)?);
    }
    Ok(Timing::timed(samples_ms, timed.window()))
}

/// A CUDA event on `gpu`'s context, for timing.
fn new_event(gpu: &Gpu) -> Result<cudarc::driver::CudaEvent> {
    gpu.ctx
        .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
        .call("cuEventCreate")
}

/// The order [`time_alternating`] times its `N` launches in, round `round`
/// (from 0): `0, 1, ..., N - 1` in an even round, the reverse in an odd one.
pub(crate) fn round_order<const N: usize>(round: u32) -> [usize; N] {
    std::array::from_fn(|j| {
        if round.is_multiple_of(2) {
            j
        } else {
            N - 1 - j
        }
    })
}

/// One batch of `plan.launches_per_batch` launches of `kernel`: the
/// per-launch ms. With `plan.flush_l2`, each launch alone after a write of
/// twice the L2 that evicts whatever the last launch left there; the flush
/// is not timed.
fn batch_ms(
    gpu: &Gpu,
    kernel: &str,
    plan: Plan,
    start: &cudarc::driver::CudaEvent,
    stop: &cudarc::driver::CudaEvent,
    launch: &mut impl FnMut() -> Result<()>,
) -> Result<f64> {
    let total = if plan.flush_l2 {
        let mut total = 0.0;
        for _ in 0..plan.launches_per_batch {
            gpu.flush_l2()?;
            total += between_events(gpu, kernel, start, stop, 1, launch)?;
        }
        total
    } else {
        between_events(gpu, kernel, start, stop, plan.launches_per_batch, launch)?
    };
    // Written negated so that a NaN total is refused too.
    #[allow(clippy::neg_cmp_op_on_partial_ord, reason = "a NaN total must fail")]
    if !(total > 0.0) {
        return Err(Error::TimingBroken {
            kernel: kernel.to_string(),
            ms: total,
        });
    }
    Ok(total / plan.launches_per_batch as f64)
}

/// `count` launches between a start and a stop event on the GPU's stream;
/// the elapsed ms. A fault surfacing at the stop is charged to `kernel`.
fn between_events(
    gpu: &Gpu,
    kernel: &str,
    start: &cudarc::driver::CudaEvent,
    stop: &cudarc::driver::CudaEvent,
    count: u32,
    launch: &mut impl FnMut() -> Result<()>,
) -> Result<f64> {
    start.record(&gpu.stream).call("cuEventRecord")?;
    for _ in 0..count {
        launch()?;
    }
    stop.record(&gpu.stream).call("cuEventRecord")?;
    stop.synchronize().map_err(|source| Error::KernelFault {
        kernel: kernel.to_string(),
        source,
    })?;
    Ok(start.elapsed_ms(stop).call("cuEventElapsedTime")? as f64)
}

#[cfg(test)]
mod tests {
    use super::Timing;

    #[test]
    fn alternating_rounds_reverse_the_order() {
        assert_eq!(super::round_order::<2>(0), [0, 1]);
        assert_eq!(super::round_order::<2>(1), [1, 0]);
        assert_eq!(super::round_order::<3>(2), [0, 1, 2]);
        assert_eq!(super::round_order::<3>(3), [2, 1, 0]);
        assert_eq!(super::round_order::<1>(5), [0]);
    }

    #[test]
    fn statistics_of_a_known_sample() {
        let t = Timing::new(vec![2.0, 1.0, 4.0, 3.0, 10.0]);
        assert_eq!(t.median_ms(), 3.0);
        assert_eq!(t.min_ms(), 1.0);
        assert_eq!(t.max_ms(), 10.0);
        assert_eq!(t.spread_pct(), 300.0);
    }
}
