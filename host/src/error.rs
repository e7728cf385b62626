//! The host library's error type: one variant per failure a caller (or a
//! learner reading the message) needs to tell apart. Every message is one
//! line that says what went wrong and what to do.

use cudarc::driver::DriverError;

/// A failure while opening the GPU, loading the PTX or running a kernel.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `libcuda.so` could not be loaded: no NVIDIA driver on this machine.
    #[error(
        "no NVIDIA driver found (libcuda.so could not be loaded); this needs a machine with an NVIDIA GPU and its driver"
    )]
    NoDriver,

    /// The driver loaded but there is no GPU at the requested index.
    #[error("no CUDA device {ordinal}: the driver reports {count} device(s)")]
    NoDevice {
        /// The device index asked for.
        ordinal: usize,
        /// Devices the driver reports.
        count: i32,
    },

    /// The GPU is older than the architecture the PTX was built for.
    #[error(
        "{gpu} has compute capability {}.{}, below the PTX target sm_{}{}; rebuild with LAB_PTX_ARCH=sm_{}{} or lower",
        .cc.0, .cc.1, .target.0, .target.1, .cc.0, .cc.1
    )]
    GpuTooOld {
        /// The device's name.
        gpu: String,
        /// The device's compute capability.
        cc: (i32, i32),
        /// The PTX's target architecture.
        target: (i32, i32),
    },

    /// A driver call failed outside any kernel.
    #[error("{call} failed: {}", describe(.source))]
    Driver {
        /// The driver call or operation, in CUDA's words.
        call: &'static str,
        /// The driver's error code.
        source: DriverError,
    },

    /// The driver refused the embedded PTX (too new an ISA for the driver,
    /// or an architecture the GPU does not have).
    #[error(
        "the driver (CUDA {driver}) refused the kernels' PTX (ISA {isa}, target {target}): {}",
        describe(.source)
    )]
    PtxRejected {
        /// The `.version` line of the PTX.
        isa: String,
        /// The `.target` line of the PTX.
        target: String,
        /// The CUDA version the driver supports, as `major.minor`.
        driver: String,
        /// The driver's error code.
        source: DriverError,
    },

    /// A kernel faulted (illegal address, trap, ...): the error surfaced when
    /// the stream was synchronised after it.
    #[error(
        "kernel `{kernel}` failed: {}; find the faulting access with compute-sanitizer: `cargo xtask sanitize <lesson>`",
        describe(.source)
    )]
    KernelFault {
        /// The kernel's exported symbol.
        kernel: String,
        /// The driver's error code.
        source: DriverError,
    },

    /// A kernel wrote into the poisoned guard past the end of a buffer it
    /// was given to write (see [`crate::guard`]), or past the elements a
    /// check launched it on.
    #[error(
        "kernel `{kernel}` wrote past the end of {what} ({bytes} bytes): byte {offset} of the poisoned guard after it \
         changed; run `cargo xtask sanitize` (compute-sanitizer's memcheck) to find the write"
    )]
    WrotePastEnd {
        /// The kernel (the first one given the buffer since the last check).
        kernel: String,
        /// Which buffer: `"argument 2"`, `"its output"`.
        what: String,
        /// The length the kernel was to stay within, bytes.
        bytes: usize,
        /// The first changed byte, counted from that end.
        offset: usize,
    },

    /// The driver refused a cooperative launch (`cuLaunchCooperativeKernel`):
    /// more blocks than the GPU holds at once, no cooperative launches on
    /// this GPU or driver, or none permitted in this context. Not a fault
    /// in the kernel: it never ran.
    #[error(
        "the driver refused the cooperative launch of `{kernel}` ({blocks} blocks of {threads} threads, {shared_bytes} bytes of shared memory each): {}; {}",
        describe(.source),
        cooperative_advice(.source)
    )]
    CooperativeRefused {
        /// The kernel's exported symbol.
        kernel: String,
        /// Blocks in the grid.
        blocks: u32,
        /// Threads per block.
        threads: u32,
        /// Dynamic shared memory per block, bytes.
        shared_bytes: u32,
        /// The driver's error code: `CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE`,
        /// `CUDA_ERROR_NOT_SUPPORTED` or `CUDA_ERROR_NOT_PERMITTED`.
        source: DriverError,
    },

    /// The lesson's buffers do not fit the GPU's free memory.
    #[error("{what} needs {needed} bytes of device memory ({:.1} MiB) but only {free} bytes ({:.1} MiB) are free", *.needed as f64 / 1048576.0, *.free as f64 / 1048576.0)]
    OutOfMemory {
        /// What was being sized.
        what: String,
        /// Bytes the allocation needs.
        needed: usize,
        /// Bytes the driver reports free.
        free: usize,
    },

    /// A size that the lesson cannot run with on this GPU.
    #[error("{0}")]
    Size(String),

    /// cuBLAS is missing, or refused a call (the GEMM lesson's reference
    /// GEMM; the lesson runs its own kernels without it).
    #[error("cuBLAS: {0}")]
    Cublas(String),

    /// No NVRTC library could be loaded (needed to compile the CUDA C twins
    /// for `--compare` and `--asm`).
    #[error(
        "the NVRTC library could not be loaded{}: looked for libnvrtc.so, .so.13, .so.12 and .so.11 on LD_LIBRARY_PATH, \
         in $CUDA_HOME/lib64 and /usr/local/cuda/lib64, in pip's nvidia/cu13/lib and nvidia/cuda_nvrtc/lib, and where the \
         system loader looks; the CUDA C twins (--compare, --asm) are compiled with it at run time: install NVRTC from \
         CUDA 12 or 13 (the toolkit's cuda-nvrtc package, `pip install nvidia-cuda-nvrtc` for CUDA 13 or \
         `pip install nvidia-cuda-nvrtc-cu12` for CUDA 12), or put the folder holding libnvrtc.so* on LD_LIBRARY_PATH",
        .unloadable.as_ref().map_or(String::new(), |why| format!(" (one was found but did not load: {why})"))
    )]
    NvrtcMissing {
        /// The first library file that was found but did not load, with the
        /// loader's reason (a wrong architecture, a missing dependency).
        unloadable: Option<String>,
    },

    /// NVRTC failed (a compile error, with its log).
    #[error("NVRTC: {0}")]
    Nvrtc(String),

    /// A tool a command needs is missing or failed (ncu, its counters).
    #[error("{0}")]
    Tool(String),

    /// A kernel name no module exports.
    #[error("no kernel named `{name}`; the kernels are: {known}")]
    UnknownKernel {
        /// The name asked for.
        name: String,
        /// The names there are.
        known: String,
    },

    /// A launch whose arguments are not the kernel's declared parameters
    /// (a bug in the launch, caught before the driver reads them).
    #[error(
        "launch of `{kernel}`: the arguments pushed ({pushed}) are not the parameters it declares ({declared}); this is a bug in the lab"
    )]
    Signature {
        /// The kernel's exported symbol.
        kernel: String,
        /// The declared parameter kinds.
        declared: String,
        /// The kinds pushed.
        pushed: String,
    },

    /// A bug in the lab itself, not in the GPU, the input or a kernel's
    /// arithmetic: a kernel the PTX does not export, a report with two rows
    /// of one key.
    #[error("{0}; this is a bug in the lab")]
    Bug(String),

    /// A command line the lesson cannot take: a flag it does not offer, an
    /// architecture that is not one, a lesson that is not one.
    #[error("{0}")]
    Usage(String),

    /// A file or folder that cannot be read, written or created.
    #[error("{}: {why}", .path.display())]
    File {
        /// The path.
        path: std::path::PathBuf,
        /// What went wrong, in the operating system's words or ours.
        why: String,
    },

    /// A recorded run that cannot serve as this run's baseline (measured
    /// differently, or no run recorded yet).
    #[error("{0}")]
    Baseline(String),

    /// An event pair measured no time: every rate would divide by zero.
    #[error("timing of `{kernel}` came back as {ms} ms, which cannot be divided into")]
    TimingBroken {
        /// The kernel timed.
        kernel: String,
        /// The elapsed time the events reported.
        ms: f64,
    },
}

/// `CUDA_ERROR_NAME (the driver's sentence)`. The name comes from the
/// error code itself; the sentence from the driver, where one is loaded (so
/// a message can be formed, and tested, on a machine without a driver).
fn describe(e: &DriverError) -> String {
    let name = format!("{:?}", e.0);
    // SAFETY: only tries to dlopen the driver library.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return name;
    }
    match e.error_string() {
        Ok(text) => format!("{name} ({})", text.to_string_lossy()),
        Err(_) => name,
    }
}

/// What to do about a refused cooperative launch, by the driver's code.
fn cooperative_advice(e: &DriverError) -> &'static str {
    use cudarc::driver::sys::CUresult as R;
    match e.0 {
        R::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE => {
            "the grid is more blocks than the GPU holds at once; the lab sized it from the occupancy API for the \
             whole GPU, so something gives this process less of it (another process on the GPU, an MPS active-thread \
             limit, a MIG slice): run the lesson on a GPU of its own"
        }
        R::CUDA_ERROR_NOT_SUPPORTED => {
            "this GPU or driver does not support cooperative launches (CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 0), \
             so the lesson's cooperative kernels cannot run here"
        }
        R::CUDA_ERROR_NOT_PERMITTED => {
            "the driver does not permit a cooperative launch in this context (a GPU shared through MPS or \
             virtualised may forbid it): run the lesson on a GPU of its own, without MPS"
        }
        _ => "the driver gave no reason the lab knows",
    }
}

/// Exit statuses of the `lab` binary, one per kind of failure, so a script
/// can tell them apart. 0 is success; 2 is a usage error (an unknown lesson
/// or flag); 3 is a kernel whose result disagrees with its reference.
pub mod exit {
    /// A driver call failed outside any kernel (a [`Error::Driver`](super::Error::Driver)).
    pub const DRIVER: u8 = 1;
    /// An unknown lesson or flag.
    pub const USAGE: u8 = 2;
    /// A kernel's result disagrees with its CPU reference.
    pub const CHECK_FAILED: u8 = 3;
    /// No NVIDIA driver on this machine.
    pub const NO_DRIVER: u8 = 4;
    /// No GPU at the requested index.
    pub const NO_DEVICE: u8 = 5;
    /// The GPU is older than the PTX's target, or the driver refused the PTX.
    pub const PTX: u8 = 6;
    /// Not enough free device memory, or a size the lesson cannot run.
    pub const SIZE: u8 = 7;
    /// A kernel faulted, wrote past the end of its output, or its timing
    /// broke.
    pub const KERNEL_FAULT: u8 = 8;
    /// A file could not be read or written, or a baseline does not match
    /// this run.
    pub const FILE: u8 = 9;
    /// A tool a command needs (NVRTC, ncu, compute-sanitizer) is missing or
    /// failed.
    pub const TOOL: u8 = 10;
    /// A bug in the lab itself (a launch whose arguments do not match its
    /// kernel, a kernel the PTX lacks, two report rows of one key).
    pub const BUG: u8 = 11;
    /// The driver refused a cooperative launch (too many blocks for the GPU
    /// as this process has it, or no cooperative launches here).
    pub const COOPERATIVE_REFUSED: u8 = 12;
}

impl Error {
    /// A [`Error::File`] for `path` from an I/O error.
    pub fn file(path: impl Into<std::path::PathBuf>, e: impl std::fmt::Display) -> Error {
        Error::File {
            path: path.into(),
            why: e.to_string(),
        }
    }

    /// The `lab` binary's exit status for this error (see [`exit`]).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::NoDriver => exit::NO_DRIVER,
            Error::NoDevice { .. } => exit::NO_DEVICE,
            Error::GpuTooOld { .. } | Error::PtxRejected { .. } => exit::PTX,
            Error::Driver { .. } => exit::DRIVER,
            Error::KernelFault { .. } | Error::TimingBroken { .. } | Error::WrotePastEnd { .. } => {
                exit::KERNEL_FAULT
            }
            Error::OutOfMemory { .. } | Error::Size(_) => exit::SIZE,
            Error::NvrtcMissing { .. } | Error::Nvrtc(_) | Error::Tool(_) | Error::Cublas(_) => {
                exit::TOOL
            }
            Error::UnknownKernel { .. } | Error::Usage(_) => exit::USAGE,
            Error::File { .. } | Error::Baseline(_) => exit::FILE,
            Error::Signature { .. } | Error::Bug(_) => exit::BUG,
            Error::CooperativeRefused { .. } => exit::COOPERATIVE_REFUSED,
        }
    }

    /// This error, read as the outcome of a cooperative launch of `grid`
    /// blocks of `block` threads with `shared_bytes` of dynamic shared
    /// memory each: a [`Error::KernelFault`] whose code is one of the
    /// driver's three refusals (`CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE`,
    /// `CUDA_ERROR_NOT_SUPPORTED`, `CUDA_ERROR_NOT_PERMITTED`) becomes
    /// [`Error::CooperativeRefused`]; any other error is returned as it is.
    pub fn into_cooperative_refusal(self, grid: u32, block: u32, shared_bytes: u32) -> Error {
        use cudarc::driver::sys::CUresult as R;
        match self {
            Error::KernelFault { kernel, source }
                if matches!(
                    source.0,
                    R::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE
                        | R::CUDA_ERROR_NOT_SUPPORTED
                        | R::CUDA_ERROR_NOT_PERMITTED
                ) =>
            {
                Error::CooperativeRefused {
                    kernel,
                    blocks: grid,
                    threads: block,
                    shared_bytes,
                    source,
                }
            }
            other => other,
        }
    }
}

/// Shorthand for results in this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Attaches the driver call's name to a [`DriverError`].
pub(crate) trait DriverContext<T> {
    fn call(self, call: &'static str) -> Result<T>;
}

impl<T> DriverContext<T> for std::result::Result<T, DriverError> {
    fn call(self, call: &'static str) -> Result<T> {
        self.map_err(|source| Error::Driver { call, source })
    }
}
