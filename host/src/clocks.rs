//! The GPU's clocks (and temperature and power) while the lab times its
//! kernels, as a run's context records them.
//!
//! A clock read before a run finds an idle GPU (an H200 at 345 MHz), which
//! says nothing of the clock the kernels ran at. So a [`Sampler`] thread
//! reads the GPU through NVML (the driver's management library, which
//! nvidia-smi is built on) every [`PERIOD`], and keeps a reading only while
//! a kernel is being timed: [`timing::time_kernel`](crate::timing::time_kernel)
//! and every other timed loop hold a [`TimedWork`] guard around their timed
//! launches. NVML rather than nvidia-smi: one nvidia-smi call starts a
//! process and takes tens of milliseconds, longer than many kernels' whole
//! timed window; an NVML read takes microseconds. The GPU is found by its
//! PCI bus id, which names the same GPU whatever order CUDA (and
//! `CUDA_VISIBLE_DEVICES`) gives the devices; nvidia-smi's own indices
//! follow another order.

use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;

/// Time between two readings while a kernel is timed.
pub const PERIOD: Duration = Duration::from_millis(10);

/// How many [`TimedWork`] guards are alive in this process.
static TIMED: AtomicUsize = AtomicUsize::new(0);

/// The share, percent, by which the SM clock may move before a figure is
/// flagged: within one row's timing window (its smallest reading against
/// its largest) and between the run's first and last readings, each as
/// the larger over the smaller, minus one.
///
/// Why this number: a compute-bound kernel's time scales with the inverse
/// of the SM clock, so a clock move of N% can move such a row's time by
/// N% on its own. `--baseline` calls two times the SAME within
/// [`crate::record::RUN_TO_RUN_FLOOR_PCT`] (3%, the widest move measured
/// between processes of unchanged kernels), so a clock that moved by more
/// than that floor can by itself carry a row past it: the figure then
/// says as much about the clock as about the kernel.
pub const MOVE_SHARE_PCT: f64 = crate::record::RUN_TO_RUN_FLOOR_PCT;

/// A stretch of timed work on the host's monotonic clock: from the moment
/// its [`TimedWork`] guard was taken to the moment its window was read
/// (after the last synchronisation). The readings a [`Sampler`] stamps
/// inside it are the ones that row was timed under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// When the timed work began.
    pub start: Instant,
    /// When it ended.
    pub end: Instant,
}

impl Window {
    /// Whether `at` lies inside the window (both ends included).
    pub fn holds(&self, at: Instant) -> bool {
        self.start <= at && at <= self.end
    }
}

/// Marks timed GPU work: while one is alive, a [`Sampler`] keeps its
/// readings. Take one after the warm-ups and drop it when the timed
/// launches have finished (after the last synchronisation); its
/// [`TimedWork::window`] is the stretch a row's figures come from.
#[must_use = "the work counts as timed only while the guard is alive"]
pub struct TimedWork {
    start: Instant,
}

/// Starts a stretch of timed GPU work (see [`TimedWork`]).
pub fn timed_work() -> TimedWork {
    TIMED.fetch_add(1, Ordering::SeqCst);
    TimedWork {
        start: Instant::now(),
    }
}

impl TimedWork {
    /// The window from the guard's start to now: call it once the timed
    /// launches have finished, before dropping the guard.
    pub fn window(&self) -> Window {
        Window {
            start: self.start,
            end: Instant::now(),
        }
    }
}

impl Drop for TimedWork {
    fn drop(&mut self) {
        TIMED.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Whether timed GPU work is going on in this process now.
pub fn timing_now() -> bool {
    TIMED.load(Ordering::SeqCst) > 0
}

/// One reading of the GPU.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    /// The SM clock, MHz.
    pub sm_mhz: u32,
    /// The memory clock, MHz.
    pub memory_mhz: u32,
    /// The GPU's temperature, degrees C, where NVML reports it.
    pub temperature_c: Option<u32>,
    /// The board's power draw, W, where NVML reports it.
    pub power_w: Option<f64>,
}

/// A reading and when the sampler took it (the host's monotonic clock), so
/// it can be given to the row whose [`Window`] holds it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stamped {
    /// When the reading was taken.
    pub at: Instant,
    /// The reading.
    pub reading: Reading,
}

/// How far apart two clocks are, percent: the larger over the smaller,
/// minus one (the same measure `--baseline` uses for two times; see
/// [`MOVE_SHARE_PCT`]). 0 for two zeros.
pub fn apart_pct(a: f64, b: f64) -> f64 {
    let (lo, hi) = (a.min(b), a.max(b));
    if hi == 0.0 {
        0.0
    } else if lo <= 0.0 {
        f64::INFINITY
    } else {
        100.0 * (hi / lo - 1.0)
    }
}

/// Where the SM base clock comes from: NVML's default applications clock
/// of the SM domain (`nvmlDeviceGetDefaultApplicationsClock`, NVML 5.319
/// on; the graphics domain where the SM domain is not reported, the same
/// clock on current GPUs). NVML names no "base clock" call; its manual
/// calls the applications clock what the GPU boosts above ("automatically
/// boosting above base clocks", `nvmlDeviceResetApplicationsClocks`). On
/// GPUs where NVML has deprecated or does not report the call, the base
/// clock is unknown and no row is tested against it.
pub const BASE_CLOCK_SOURCE: &str = "NVML's default applications clock";

/// The SM clock over one row's timing window: how many readings fell in
/// it, their least and largest, and what they flag (a clock below the base
/// clock, or one that moved by more than [`MOVE_SHARE_PCT`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhileTimed {
    /// Readings inside the window (none where it was shorter than
    /// [`PERIOD`]).
    pub samples: usize,
    /// The least SM clock read in the window, MHz.
    pub sm_min_mhz: Option<u32>,
    /// The largest SM clock read in the window, MHz.
    pub sm_max_mhz: Option<u32>,
    /// How far apart the least and the largest are, percent ([`apart_pct`]).
    pub moved_pct: Option<f64>,
    /// Whether a reading was below the base clock; `None` where the base
    /// clock is unknown or no reading fell in the window.
    pub below_base: Option<bool>,
    /// What a reader must know beside the row's figures, in words; empty
    /// when nothing is flagged.
    pub flags: Vec<String>,
}

impl WhileTimed {
    /// The flags as one cell, `None` when there is none.
    pub fn flag(&self) -> Option<String> {
        (!self.flags.is_empty()).then(|| self.flags.join("; "))
    }
}

/// The SM clock read inside some stretches of timed work: how many
/// readings, and their least, median and largest. What a comparison gives
/// each side of each trial ([`crate::compare::Comparison::json_lines`]), so
/// a Rust/C ratio that moves from trial to trial can be read beside the
/// clock each side met. No power: NVML's power reading
/// (`nvmlDeviceGetPowerUsage`) is an average over 1 s on Ampere (but
/// GA100) and later GPUs, per NVML's reference for that call, far longer
/// than one side's batches, so it could not tell the two sides apart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WindowReadings {
    /// Readings inside the windows (one every [`PERIOD`] at most; 0 where
    /// every window was shorter).
    pub samples: usize,
    /// The SM clock, MHz; `None` without a reading.
    pub sm_mhz: Option<Summary>,
}

/// The least, the median and the largest of a set of readings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// The least.
    pub min: f64,
    /// The median (of an even count, the mean of the middle two).
    pub median: f64,
    /// The largest.
    pub max: f64,
}

impl Summary {
    /// The summary of `values`; `None` for none.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Summary> {
        let mut v: Vec<f64> = values.into_iter().collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let mid = v.len() / 2;
        let median = if v.len() % 2 == 1 {
            v[mid]
        } else {
            (v[mid - 1] + v[mid]) / 2.0
        };
        Some(Summary {
            min: v[0],
            median,
            max: v[v.len() - 1],
        })
    }
}

/// The GPU's clocks, temperature and power over a run's timed work, as its
/// context records them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Clocks {
    /// How they were read ([`nvml_method`]), or that they were not.
    pub method: String,
    /// Readings kept (each taken while a kernel was timed).
    pub samples: usize,
    /// Why there are no figures, where there are none.
    pub unknown: Option<String>,
    /// The SM clock, MHz.
    pub sm_mhz: Option<Summary>,
    /// The memory clock, MHz.
    pub memory_mhz: Option<Summary>,
    /// The GPU's temperature, degrees C.
    pub temperature_c: Option<Summary>,
    /// The board's power draw, W.
    pub power_w: Option<Summary>,
    /// The SM base clock, MHz ([`BASE_CLOCK_SOURCE`]); `None` where it is
    /// unknown.
    pub base_sm_mhz: Option<u32>,
    /// Why the base clock is unknown, where it is.
    pub base_unknown: Option<String>,
    /// Readings below the base clock; `None` where it is unknown.
    pub readings_below_base: Option<usize>,
    /// The SM clock of the first reading kept, MHz.
    pub sm_start_mhz: Option<u32>,
    /// The SM clock of the last reading kept, MHz.
    pub sm_end_mhz: Option<u32>,
    /// Whether the last differs from the first by more than
    /// [`MOVE_SHARE_PCT`]; `None` without readings.
    pub end_differs_from_start: Option<bool>,
    /// The share a clock may move before it is flagged, percent
    /// ([`MOVE_SHARE_PCT`]).
    pub move_share_pct: f64,
    /// Every reading kept, with when it was taken: what
    /// [`Clocks::while_timed`] gives each row and [`Clocks::readings_in`]
    /// each side of a comparison's trials. Not in the JSON (the rows carry
    /// what falls in their windows).
    #[serde(skip)]
    pub stamped: Vec<Stamped>,
}

impl Clocks {
    /// No reading: `method` says how it would have been read, `why` why
    /// there is none.
    pub fn unknown(method: impl Into<String>, why: impl Into<String>) -> Clocks {
        Clocks {
            method: method.into(),
            samples: 0,
            unknown: Some(why.into()),
            sm_mhz: None,
            memory_mhz: None,
            temperature_c: None,
            power_w: None,
            base_sm_mhz: None,
            base_unknown: None,
            readings_below_base: None,
            sm_start_mhz: None,
            sm_end_mhz: None,
            end_differs_from_start: None,
            move_share_pct: MOVE_SHARE_PCT,
            stamped: Vec::new(),
        }
    }

    /// What a context holds before `lab` reads the clocks (a test's, a
    /// profile run's).
    pub fn not_read() -> Clocks {
        Clocks::unknown("not read", "this run did not read the clocks")
    }

    /// The summary of `stamped` readings (in the order taken) by `method`,
    /// with the base clock `base` (or why it is unknown): what
    /// [`Sampler::finish`] returns, and what rows are flagged from
    /// ([`Clocks::while_timed`]).
    pub fn from_stamped(method: &str, stamped: &[Stamped], base: Result<u32, String>) -> Clocks {
        let readings: Vec<Reading> = stamped.iter().map(|s| s.reading).collect();
        let mut clocks = Clocks::from_readings(method, &readings);
        clocks.stamped = stamped.to_vec();
        match base {
            Ok(mhz) => {
                clocks.base_sm_mhz = Some(mhz);
                clocks.base_unknown = None;
                clocks.readings_below_base =
                    Some(readings.iter().filter(|r| r.sm_mhz < mhz).count());
            }
            Err(why) => clocks.base_unknown = Some(why),
        }
        clocks
    }

    /// The SM clock over one row's timing `window`: `None` for a row with
    /// no window (a CPU row, a synthetic timing) or a run with no stamped
    /// reading (clocks not read, or read without stamps); else the readings stamped inside it, and
    /// their flags: "SM below the base clock" where one reading is below
    /// [`Clocks::base_sm_mhz`], "SM clock moved" where the least and the
    /// largest are more than [`MOVE_SHARE_PCT`] apart.
    pub fn while_timed(&self, window: Option<&Window>) -> Option<WhileTimed> {
        let window = window?;
        if self.stamped.is_empty() {
            return None;
        }
        let sm: Vec<u32> = self
            .stamped_in(std::slice::from_ref(window))
            .map(|r| r.sm_mhz)
            .collect();
        let (lo, hi) = (sm.iter().min().copied(), sm.iter().max().copied());
        let moved_pct = lo.zip(hi).map(|(lo, hi)| apart_pct(lo as f64, hi as f64));
        let below_base = self.base_sm_mhz.zip(lo).map(|(base, lo)| lo < base);
        let mut flags = Vec::new();
        if let (Some(true), Some(base), Some(lo)) = (below_base, self.base_sm_mhz, lo) {
            flags.push(format!(
                "SM below the base clock while timed ({lo} < {base} MHz)"
            ));
        }
        if let (Some(moved), Some(lo), Some(hi)) = (moved_pct, lo, hi)
            && moved > MOVE_SHARE_PCT
        {
            flags.push(format!(
                "SM clock moved {moved:.1}% while timed ({lo} to {hi} MHz, past the {MOVE_SHARE_PCT:.0}% share)"
            ));
        }
        Some(WhileTimed {
            samples: sm.len(),
            sm_min_mhz: lo,
            sm_max_mhz: hi,
            moved_pct,
            below_base,
            flags,
        })
    }

    /// The readings stamped inside any of `windows`, in the order taken.
    fn stamped_in<'a>(&'a self, windows: &'a [Window]) -> impl Iterator<Item = &'a Reading> + 'a {
        self.stamped
            .iter()
            .filter(|s| windows.iter().any(|w| w.holds(s.at)))
            .map(|s| &s.reading)
    }

    /// The SM clock read inside any of `windows`, pooled: `None` for no
    /// window, or for a run that kept no stamped reading at all (clocks
    /// not read, or every timed stretch of the run shorter than
    /// [`PERIOD`]: [`Clocks::unknown`] says which); else the count and
    /// summary (a count of 0 where these windows were shorter than
    /// [`PERIOD`]).
    pub fn readings_in(&self, windows: &[Window]) -> Option<WindowReadings> {
        if self.stamped.is_empty() || windows.is_empty() {
            return None;
        }
        let sm: Vec<f64> = self.stamped_in(windows).map(|r| r.sm_mhz as f64).collect();
        Some(WindowReadings {
            samples: sm.len(),
            sm_mhz: Summary::of(sm),
        })
    }

    /// The summary of `readings` (in the order taken) by `method`, with no
    /// base clock ("not read") and no stamps; "unknown" with a reason where
    /// there are none.
    pub fn from_readings(method: &str, readings: &[Reading]) -> Clocks {
        if readings.is_empty() {
            return Clocks::unknown(
                method,
                format!(
                    "no reading fell inside timed work (each timed stretch was shorter than the {} ms between \
                     readings)",
                    PERIOD.as_millis()
                ),
            );
        }
        Clocks {
            method: method.to_string(),
            samples: readings.len(),
            unknown: None,
            sm_mhz: Summary::of(readings.iter().map(|r| r.sm_mhz as f64)),
            memory_mhz: Summary::of(readings.iter().map(|r| r.memory_mhz as f64)),
            temperature_c: Summary::of(
                readings
                    .iter()
                    .filter_map(|r| r.temperature_c.map(|t| t as f64)),
            ),
            power_w: Summary::of(readings.iter().filter_map(|r| r.power_w)),
            base_sm_mhz: None,
            base_unknown: Some("not read".to_string()),
            readings_below_base: None,
            sm_start_mhz: readings.first().map(|r| r.sm_mhz),
            sm_end_mhz: readings.last().map(|r| r.sm_mhz),
            end_differs_from_start: readings
                .first()
                .zip(readings.last())
                .map(|(a, b)| apart_pct(a.sm_mhz as f64, b.sm_mhz as f64) > MOVE_SHARE_PCT),
            move_share_pct: MOVE_SHARE_PCT,
            stamped: Vec::new(),
        }
    }

    /// One line for a report's header: `Clocks while timing (...): SM 1980
    /// MHz median (1755 to 1980), ...`, or `Clocks while timing: unknown
    /// (why)`.
    pub fn line(&self) -> String {
        let (Some(sm), Some(mem)) = (self.sm_mhz, self.memory_mhz) else {
            return format!(
                "Clocks while timing: unknown ({})",
                self.unknown.as_deref().unwrap_or("no reading")
            );
        };
        let range = |s: Summary, unit: &str| {
            format!(
                "{:.0} {unit} median ({:.0} to {:.0})",
                s.median, s.min, s.max
            )
        };
        let mut line = format!(
            "Clocks while timing ({}, {} samples): SM {}, memory {}",
            self.method,
            self.samples,
            range(sm, "MHz"),
            range(mem, "MHz")
        );
        if let Some(t) = self.temperature_c {
            line.push_str(&format!(", {:.0} to {:.0} C", t.min, t.max));
        }
        if let Some(p) = self.power_w {
            line.push_str(&format!(", {:.0} to {:.0} W", p.min, p.max));
        }
        if let (Some(start), Some(end)) = (self.sm_start_mhz, self.sm_end_mhz) {
            let moved = apart_pct(start as f64, end as f64);
            if self.end_differs_from_start == Some(true) {
                line.push_str(&format!(
                    "; SM at the end {end} MHz against {start} at the start: differs by {moved:.1}%, past the {:.0}% \
                     share",
                    self.move_share_pct
                ));
            } else {
                line.push_str(&format!(
                    "; SM at the end {end} MHz against {start} at the start: within the {:.0}% share",
                    self.move_share_pct
                ));
            }
        }
        match (self.base_sm_mhz, self.readings_below_base) {
            (Some(base), Some(0)) => line.push_str(&format!(
                "; base clock {base} MHz ({BASE_CLOCK_SOURCE}): no reading below it"
            )),
            (Some(base), Some(below)) => line.push_str(&format!(
                "; base clock {base} MHz ({BASE_CLOCK_SOURCE}): {below} of {} readings below it (flagged on the \
                 rows timed then)",
                self.samples
            )),
            _ => line.push_str(&format!(
                "; base clock unknown ({})",
                self.base_unknown.as_deref().unwrap_or("not read")
            )),
        }
        line
    }
}

/// The method a [`Sampler`] over NVML states: `read while timing: NVML
/// every 10 ms while a kernel was timed`.
pub fn nvml_method() -> String {
    format!(
        "read while timing: NVML every {} ms while a kernel was timed",
        PERIOD.as_millis()
    )
}

/// Reads the GPU every [`PERIOD`] on a thread of its own, keeping the
/// readings taken while timed work goes on (see [`TimedWork`]), until
/// [`Sampler::finish`].
pub struct Sampler {
    method: String,
    /// Why it reads nothing, where it could not start.
    not_started: Option<String>,
    /// The SM base clock, MHz, or why it is unknown.
    base: Result<u32, String>,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<Vec<Stamped>>>,
}

impl Sampler {
    /// Starts reading the GPU at `pci_bus_id` through NVML. Where NVML does
    /// not load or does not know the GPU, the sampler reads nothing and
    /// [`Sampler::finish`] says why.
    pub fn start(pci_bus_id: Option<&str>) -> Sampler {
        let Some(id) = pci_bus_id else {
            return Sampler::not_started(
                &nvml_method(),
                "the driver gave no PCI bus id to find the GPU in NVML by",
            );
        };
        match Nvml::open(id) {
            Ok(nvml) => {
                let base = nvml.base.clone();
                Sampler::with_reader(&nvml_method(), move || nvml.read()).with_base(base)
            }
            Err(why) => Sampler::not_started(&nvml_method(), why),
        }
    }

    /// A sampler that reads nothing, for the reason `why`.
    pub fn not_started(method: &str, why: impl Into<String>) -> Sampler {
        Sampler {
            method: method.to_string(),
            not_started: Some(why.into()),
            base: Err("not read".to_string()),
            stop: None,
            thread: None,
        }
    }

    /// The same sampler, with the SM base clock (MHz) its readings are set
    /// against, or why it is unknown.
    pub fn with_base(mut self, base: Result<u32, String>) -> Sampler {
        self.base = base;
        self
    }

    /// Starts calling `read` every [`PERIOD`] on a thread of its own,
    /// keeping what it returns while timed work goes on both when the call
    /// starts and when it returns; `method` describes it.
    pub fn with_reader(
        method: &str,
        mut read: impl FnMut() -> Option<Reading> + Send + 'static,
    ) -> Sampler {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let mut kept = Vec::new();
            loop {
                if timing_now()
                    && let Some(r) = read()
                    && timing_now()
                {
                    kept.push(Stamped {
                        at: Instant::now(),
                        reading: r,
                    });
                }
                match stopped.recv_timeout(PERIOD) {
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    _ => return kept,
                }
            }
        });
        Sampler {
            method: method.to_string(),
            not_started: None,
            base: Err("this reader gives no base clock".to_string()),
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Stops reading and summarises what was kept, with the base clock.
    pub fn finish(mut self) -> Clocks {
        if let Some(why) = self.not_started.take() {
            return Clocks::unknown(&self.method, why);
        }
        match self.stop_thread() {
            Some(stamped) => Clocks::from_stamped(&self.method, &stamped, self.base.clone()),
            None => Clocks::unknown(&self.method, "the sampling thread failed"),
        }
    }

    fn stop_thread(&mut self) -> Option<Vec<Stamped>> {
        drop(self.stop.take());
        self.thread.take()?.join().ok()
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

/// `nvmlDevice_t`.
type Device = *mut c_void;

const NVML_SUCCESS: c_int = 0;
const NVML_CLOCK_GRAPHICS: c_int = 0;
const NVML_CLOCK_SM: c_int = 1;
const NVML_CLOCK_MEM: c_int = 2;
const NVML_TEMPERATURE_GPU: c_int = 0;

/// NVML, initialised, with one GPU's handle and the calls a reading needs.
struct Nvml {
    device: Device,
    clock: unsafe extern "C" fn(Device, c_int, *mut c_uint) -> c_int,
    temperature: unsafe extern "C" fn(Device, c_int, *mut c_uint) -> c_int,
    power: unsafe extern "C" fn(Device, *mut c_uint) -> c_int,
    shutdown: unsafe extern "C" fn() -> c_int,
    /// The SM base clock, MHz ([`BASE_CLOCK_SOURCE`]), or why not.
    base: Result<u32, String>,
    _library: libloading::Library,
}

// SAFETY: NVML's calls are thread-safe, and the handle stays valid until
// `nvmlShutdown`, which only `Drop` calls; the sampler thread alone uses it.
unsafe impl Send for Nvml {}

impl Nvml {
    /// Loads NVML (`libnvidia-ml.so.1`, installed with the driver),
    /// initialises it and finds the GPU at `pci_bus_id`.
    ///
    /// # Errors
    /// One line: NVML not loadable, a call missing, or the GPU not found.
    fn open(pci_bus_id: &str) -> Result<Nvml, String> {
        let name = "libnvidia-ml.so.1";
        // SAFETY: loading NVML runs only its initialisers.
        let library = unsafe { libloading::Library::new(name) }.map_err(|e| {
            use std::error::Error as _;
            format!(
                "NVML ({name}, installed with the NVIDIA driver) could not be loaded: {}",
                e.source().map_or_else(|| e.to_string(), |s| s.to_string())
            )
        })?;
        macro_rules! bind {
            ($name:literal) => {
                // SAFETY: the type is the function's C signature in nvml.h
                // (stable since NVML 5), for the symbol of that name.
                *unsafe { library.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| format!("NVML has no {}: {e}", $name))?
            };
        }
        let init: unsafe extern "C" fn() -> c_int = bind!("nvmlInit_v2");
        let by_pci: unsafe extern "C" fn(*const c_char, *mut Device) -> c_int =
            bind!("nvmlDeviceGetHandleByPciBusId_v2");
        let error_string: unsafe extern "C" fn(c_int) -> *const c_char = bind!("nvmlErrorString");
        let describe = |status: c_int| {
            // SAFETY: returns a static string for any status.
            let text = unsafe { error_string(status) };
            if text.is_null() {
                format!("status {status}")
            } else {
                // SAFETY: a NUL-terminated static string.
                unsafe { CStr::from_ptr(text) }
                    .to_string_lossy()
                    .into_owned()
            }
        };
        let shutdown: unsafe extern "C" fn() -> c_int = bind!("nvmlShutdown");
        let (clock, temperature, power) = (
            bind!("nvmlDeviceGetClockInfo"),
            bind!("nvmlDeviceGetTemperature"),
            bind!("nvmlDeviceGetPowerUsage"),
        );
        // SAFETY: no preconditions; paired with `nvmlShutdown` in `Drop`
        // (or below, on failure).
        let status = unsafe { init() };
        if status != NVML_SUCCESS {
            return Err(format!("nvmlInit failed: {}", describe(status)));
        }
        let id =
            CString::new(pci_bus_id).map_err(|_| "a PCI bus id with a NUL byte".to_string())?;
        let mut device: Device = std::ptr::null_mut();
        // SAFETY: a NUL-terminated id; writes one handle.
        let status = unsafe { by_pci(id.as_ptr(), &mut device) };
        if status != NVML_SUCCESS {
            // SAFETY: balances the successful init above.
            unsafe { shutdown() };
            return Err(format!(
                "NVML did not find the GPU at PCI bus id {pci_bus_id}: {}",
                describe(status)
            ));
        }
        // The base clock: optional, so a driver without the call (or one
        // that has deprecated it) still gives the readings.
        // SAFETY: the C signature of nvmlDeviceGetDefaultApplicationsClock
        // in nvml.h (since NVML 5.319).
        let default_clock: Option<unsafe extern "C" fn(Device, c_int, *mut c_uint) -> c_int> =
            unsafe { library.get(b"nvmlDeviceGetDefaultApplicationsClock\0") }
                .ok()
                .map(|f| *f);
        let base = match default_clock {
            None => Err("NVML has no nvmlDeviceGetDefaultApplicationsClock".to_string()),
            Some(get) => {
                let mut status = NVML_SUCCESS;
                let mut found = None;
                for domain in [NVML_CLOCK_SM, NVML_CLOCK_GRAPHICS] {
                    let mut mhz: c_uint = 0;
                    // SAFETY: a valid handle; writes one unsigned int.
                    status = unsafe { get(device, domain, &mut mhz) };
                    if status == NVML_SUCCESS && mhz > 0 {
                        found = Some(mhz);
                        break;
                    }
                }
                found.ok_or_else(|| {
                    format!(
                        "NVML gave no default applications clock: {}",
                        if status == NVML_SUCCESS {
                            "it reported 0 MHz".to_string()
                        } else {
                            describe(status)
                        }
                    )
                })
            }
        };
        Ok(Nvml {
            device,
            clock,
            temperature,
            power,
            shutdown,
            base,
            _library: library,
        })
    }

    /// The GPU's clocks now, with its temperature and power where NVML
    /// reports them; `None` where a clock cannot be read.
    fn read(&self) -> Option<Reading> {
        let read = |f: &dyn Fn(*mut c_uint) -> c_int| {
            let mut v: c_uint = 0;
            (f(&mut v) == NVML_SUCCESS).then_some(v)
        };
        // SAFETY (each call): a valid handle; writes one unsigned int.
        let sm = read(&|v| unsafe { (self.clock)(self.device, NVML_CLOCK_SM, v) })?;
        let memory = read(&|v| unsafe { (self.clock)(self.device, NVML_CLOCK_MEM, v) })?;
        let temperature =
            read(&|v| unsafe { (self.temperature)(self.device, NVML_TEMPERATURE_GPU, v) });
        let milliwatts = read(&|v| unsafe { (self.power)(self.device, v) });
        Some(Reading {
            sm_mhz: sm,
            memory_mhz: memory,
            temperature_c: temperature,
            power_w: milliwatts.map(|mw| mw as f64 / 1e3),
        })
    }
}

impl Drop for Nvml {
    fn drop(&mut self) {
        // SAFETY: balances the `nvmlInit_v2` of `open`.
        unsafe { (self.shutdown)() };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_of_known_values() {
        assert_eq!(
            Summary::of([3.0, 1.0, 2.0]),
            Some(Summary {
                min: 1.0,
                median: 2.0,
                max: 3.0
            })
        );
        assert_eq!(Summary::of([4.0, 1.0, 2.0, 3.0]).unwrap().median, 2.5);
        assert_eq!(Summary::of([]), None);
    }

    fn reading(sm: u32) -> Reading {
        Reading {
            sm_mhz: sm,
            memory_mhz: 3201,
            temperature_c: Some(40 + sm / 100),
            power_w: Some(sm as f64 / 4.0),
        }
    }

    /// One test for everything that touches the process-wide count of
    /// timed work, so no other test's guard overlaps it.
    #[test]
    fn the_sampler_keeps_only_readings_taken_while_timing() {
        // Not timing: the reader is not even called.
        let calls = std::sync::Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        let sampler = Sampler::with_reader("test reader", move || {
            counted.fetch_add(1, Ordering::SeqCst);
            Some(reading(1980))
        });
        std::thread::sleep(PERIOD * 5);
        let clocks = sampler.finish();
        assert_eq!(calls.load(Ordering::SeqCst), 0);
        assert_eq!(clocks.samples, 0);
        assert_eq!(
            clocks.line(),
            "Clocks while timing: unknown (no reading fell inside timed work (each timed stretch was shorter \
             than the 10 ms between readings))"
        );

        // Timing: every reading is kept, each taken inside the guard.
        let mut sm = 1755;
        let sampler = Sampler::with_reader("test reader", move || {
            sm = (sm + 75).min(1980);
            Some(reading(sm))
        });
        let guard = timed_work();
        while !timing_now() {}
        std::thread::sleep(PERIOD * 20);
        let window = guard.window();
        drop(guard);
        let clocks = sampler.finish();
        assert!(clocks.samples >= 5, "{clocks:?}");
        // The readings are stamped inside the guard's window (all but one
        // taken in the instant between reading the window and dropping the
        // guard), so the row timed then gets them, and the 1830-to-1980
        // climb is flagged on it.
        let row = clocks.while_timed(Some(&window)).unwrap();
        assert!(row.samples + 1 >= clocks.samples, "{row:?}");
        assert_eq!(
            row.flag().unwrap(),
            "SM clock moved 8.2% while timed (1830 to 1980 MHz, past the 3% share)"
        );
        assert_eq!(clocks.unknown, None);
        let sm = clocks.sm_mhz.unwrap();
        assert_eq!((sm.min, sm.max), (1830.0, 1980.0), "{clocks:?}");
        assert_eq!(
            clocks.memory_mhz,
            Some(Summary {
                min: 3201.0,
                median: 3201.0,
                max: 3201.0
            })
        );
        // 1830, 1905, then 1980 from the third reading on: the median is
        // 1980 from five readings up.
        assert_eq!(
            clocks.line(),
            format!(
                "Clocks while timing (test reader, {} samples): SM 1980 MHz median (1830 to 1980), memory 3201 MHz \
                 median (3201 to 3201), 58 to 59 C, 458 to 495 W; SM at the end 1980 MHz against 1830 at the start: \
                 differs by 8.2%, past the 3% share; base clock unknown (this reader gives no base clock)",
                clocks.samples
            )
        );
    }

    #[test]
    fn readings_in_windows_are_pooled_from_their_stamps_alone() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        // Readings every 10 ms, the clock falling 15 MHz a reading from 1980.
        let stamped: Vec<Stamped> = (0..10)
            .map(|i| Stamped {
                at: at(10 * i),
                reading: reading(1980 - 15 * i as u32),
            })
            .collect();
        let clocks = Clocks::from_stamped("test reader", &stamped, Ok(1980));
        let window = |from: u64, to: u64| Window {
            start: at(from),
            end: at(to),
        };
        // 0 to 25 ms holds readings 0, 1 and 2; 65 to 75 ms holds reading 7.
        let got = clocks
            .readings_in(&[window(0, 25), window(65, 75)])
            .unwrap();
        assert_eq!(got.samples, 4);
        assert_eq!(
            got.sm_mhz,
            Some(Summary {
                min: 1875.0,
                median: 1957.5,
                max: 1980.0
            })
        );
        // A window between two readings: counted as none, not as missing.
        let empty = clocks.readings_in(&[window(41, 49)]).unwrap();
        assert_eq!((empty.samples, empty.sm_mhz), (0, None));
        // No window, or clocks never read: nothing to say.
        assert_eq!(clocks.readings_in(&[]), None);
        assert_eq!(Clocks::not_read().readings_in(&[window(0, 90)]), None);
    }

    #[test]
    fn a_sampler_that_could_not_start_says_why() {
        let clocks = Sampler::not_started(&nvml_method(), "NVML could not be loaded").finish();
        assert_eq!(
            clocks,
            Clocks::unknown(
                "read while timing: NVML every 10 ms while a kernel was timed",
                "NVML could not be loaded"
            )
        );
        assert_eq!(
            clocks.line(),
            "Clocks while timing: unknown (NVML could not be loaded)"
        );
        // No PCI bus id: NVML is not even asked.
        let clocks = Sampler::start(None).finish();
        assert_eq!(
            clocks.unknown.as_deref(),
            Some("the driver gave no PCI bus id to find the GPU in NVML by")
        );
        // No GPU at that id, or no NVML on this machine: said which.
        let clocks = Sampler::start(Some("ffff:ff:1f.7")).finish();
        let why = clocks.unknown.unwrap();
        // SAFETY: only tries to dlopen NVML.
        if unsafe { libloading::Library::new("libnvidia-ml.so.1") }.is_ok() {
            assert!(
                why.starts_with("NVML did not find the GPU at PCI bus id ffff:ff:1f.7: ")
                    || why.starts_with("nvmlInit failed: "),
                "{why}"
            );
        } else {
            assert!(
                why.starts_with(
                    "NVML (libnvidia-ml.so.1, installed with the NVIDIA driver) could not be loaded: "
                ),
                "{why}"
            );
        }
        assert_eq!(clocks.samples, 0);
    }
}
