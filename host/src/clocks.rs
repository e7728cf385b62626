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
use std::time::Duration;

use serde::Serialize;

/// Time between two readings while a kernel is timed.
pub const PERIOD: Duration = Duration::from_millis(10);

/// How many [`TimedWork`] guards are alive in this process.
static TIMED: AtomicUsize = AtomicUsize::new(0);

/// Marks timed GPU work: while one is alive, a [`Sampler`] keeps its
/// readings. Take one after the warm-ups and drop it when the timed
/// launches have finished (after the last synchronisation).
#[must_use = "the work counts as timed only while the guard is alive"]
pub struct TimedWork(());

/// Starts a stretch of timed GPU work (see [`TimedWork`]).
pub fn timed_work() -> TimedWork {
    TIMED.fetch_add(1, Ordering::SeqCst);
    TimedWork(())
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
        }
    }

    /// What a context holds before `lab` reads the clocks (a test's, a
    /// profile run's).
    pub fn not_read() -> Clocks {
        Clocks::unknown("not read", "this run did not read the clocks")
    }

    /// The summary of `readings` taken by `method`; "unknown" with a reason
    /// where there are none.
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
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<Vec<Reading>>>,
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
            Ok(nvml) => Sampler::with_reader(&nvml_method(), move || nvml.read()),
            Err(why) => Sampler::not_started(&nvml_method(), why),
        }
    }

    /// A sampler that reads nothing, for the reason `why`.
    pub fn not_started(method: &str, why: impl Into<String>) -> Sampler {
        Sampler {
            method: method.to_string(),
            not_started: Some(why.into()),
            stop: None,
            thread: None,
        }
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
                    kept.push(r);
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
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Stops reading and summarises what was kept.
    pub fn finish(mut self) -> Clocks {
        if let Some(why) = self.not_started.take() {
            return Clocks::unknown(&self.method, why);
        }
        match self.stop_thread() {
            Some(readings) => Clocks::from_readings(&self.method, &readings),
            None => Clocks::unknown(&self.method, "the sampling thread failed"),
        }
    }

    fn stop_thread(&mut self) -> Option<Vec<Reading>> {
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
        Ok(Nvml {
            device,
            clock,
            temperature,
            power,
            shutdown,
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
        drop(guard);
        let clocks = sampler.finish();
        assert!(clocks.samples >= 5, "{clocks:?}");
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
                 median (3201 to 3201), 58 to 59 C, 458 to 495 W",
                clocks.samples
            )
        );
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
