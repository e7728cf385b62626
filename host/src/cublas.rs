//! cuBLAS, loaded at run time: the vendor's GEMM that the GEMM lesson
//! measures its kernels against, at the same size and precision.
//!
//! The library is found the way NVRTC is ([`crate::nvrtc::search_dirs`]:
//! `LD_LIBRARY_PATH`, the CUDA toolkit's `lib64`, pip's wheel folders),
//! under the names of CUDA 13 and 12, then through the system loader. It is
//! optional: where it is missing, [`Cublas::find`] says why in one line and
//! the lesson runs everything else. cudarc's own cuBLAS bindings are not
//! used because they look only for CUDA 12's file names and panic where
//! none loads.
//!
//! Only what the lesson needs is bound: a handle on the lesson's stream,
//! `cublasSgemm_v2` in cuBLAS's default math mode (FP32 throughout: no
//! TF32 tensor cores unless asked for, and the lesson never asks), and
//! `cublasGemmEx` for bf16 or f16 inputs with f32 accumulation.

use std::ffi::{c_int, c_void};
use std::path::PathBuf;

/// File names tried in each folder, newest CUDA first.
pub const LIBRARY_NAMES: [&str; 3] = ["libcublas.so.13", "libcublas.so.12", "libcublas.so"];

/// Where pip's cuBLAS wheels put the library below `site-packages`, beside
/// [`crate::nvrtc::WHEEL_DIRS`]'s (CUDA 13's wheels share `nvidia/cu13/lib`).
pub const WHEEL_DIRS: [&str; 1] = ["nvidia/cublas/lib"];

type Handle = *mut c_void;

/// `cublasGemmEx`'s C signature (cuBLAS 12 and 13): handle, transa, transb,
/// m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
/// computeType, algo.
type GemmEx = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const c_void,
    u64,
    c_int,
    c_int,
    u64,
    c_int,
    c_int,
    *const c_void,
    u64,
    c_int,
    c_int,
    c_int,
    c_int,
) -> c_int;

/// `CUDA_R_32F` (cudaDataType).
const CUDA_R_32F: c_int = 0;
/// `CUDA_R_16BF` (cudaDataType).
const CUDA_R_16BF: c_int = 14;
/// `CUDA_R_16F` (cudaDataType).
const CUDA_R_16F: c_int = 2;

/// The 16-bit input types [`Cublas::gemm_half_row_major`] takes.
/// Serialised as its [`Half::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Half {
    /// bfloat16: 8 exponent bits, 8 significant bits (`half::bf16`).
    #[serde(rename = "bf16")]
    Bf16,
    /// IEEE binary16: 5 exponent bits, 11 significant bits (`half::f16`).
    #[serde(rename = "fp16")]
    F16,
}

impl Half {
    /// Both, in the order the GEMM lesson reports them.
    pub const ALL: [Half; 2] = [Half::Bf16, Half::F16];

    /// The name rows and JSON give the precision: `bf16`, `fp16`.
    pub fn name(self) -> &'static str {
        match self {
            Half::Bf16 => "bf16",
            Half::F16 => "fp16",
        }
    }

    /// The name in report sentences: `BF16`, `FP16`.
    pub fn upper(self) -> &'static str {
        match self {
            Half::Bf16 => "BF16",
            Half::F16 => "FP16",
        }
    }

    /// Its `cudaDataType`.
    fn cuda_type(self) -> c_int {
        match self {
            Half::Bf16 => CUDA_R_16BF,
            Half::F16 => CUDA_R_16F,
        }
    }

    /// The 16 bits of `x` rounded to the nearest value of this type.
    pub fn bits(self, x: f32) -> u16 {
        match self {
            Half::Bf16 => half::bf16::from_f32(x).to_bits(),
            Half::F16 => half::f16::from_f32(x).to_bits(),
        }
    }
}
/// `CUBLAS_COMPUTE_32F`: products summed in f32.
const CUBLAS_COMPUTE_32F: c_int = 68;
/// `CUBLAS_GEMM_DEFAULT`: cuBLAS picks the algorithm.
const CUBLAS_GEMM_DEFAULT: c_int = -1;

const CUBLAS_STATUS_SUCCESS: c_int = 0;
/// `CUBLAS_OP_N`: the operand as stored.
const CUBLAS_OP_N: c_int = 0;
/// `CUBLAS_DEFAULT_MATH`: FP32 arithmetic for SGEMM, no TF32.
const CUBLAS_DEFAULT_MATH: c_int = 0;

/// A cuBLAS handle bound to one stream, with the functions the lesson
/// calls.
pub struct Cublas {
    handle: Handle,
    /// The stream the handle is bound to (`cublasSetStream`).
    stream: *mut c_void,
    version: c_int,
    path: PathBuf,
    sgemm: unsafe extern "C" fn(
        Handle,
        c_int,
        c_int,
        c_int,
        c_int,
        c_int,
        *const f32,
        u64,
        c_int,
        u64,
        c_int,
        *const f32,
        u64,
        c_int,
    ) -> c_int,
    gemm_ex: GemmEx,
    destroy: unsafe extern "C" fn(Handle) -> c_int,
    /// Keeps the functions above mapped.
    _library: libloading::Library,
}

impl std::fmt::Debug for Cublas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cublas")
            .field("path", &self.path)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl Cublas {
    /// Loads cuBLAS from `file` (a path, or a bare name for the system
    /// loader), creates a handle in `stream`'s CUDA context (current on this
    /// thread), binds it to `stream` and sets the default math mode.
    ///
    /// # Errors
    /// One line: the loader's reason, a missing function, or the failing
    /// call's status.
    pub fn open(
        file: &std::ffi::OsStr,
        stream: &cudarc::driver::CudaStream,
    ) -> Result<Cublas, String> {
        let stream: *mut c_void = stream.cu_stream().cast();
        let name = PathBuf::from(file);
        // SAFETY: loading cuBLAS runs only its initialisers, which have no
        // preconditions.
        let library = unsafe { libloading::Library::new(file) }
            .map_err(|e| format!("{}: {e}", name.display()))?;
        macro_rules! bind {
            ($name:literal) => {
                // SAFETY: the type is the function's C signature in
                // cublas_api.h (cuBLAS 12 and 13), for the symbol of that
                // name.
                *unsafe { library.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| format!("{}: no {}: {e}", name.display(), $name))?
            };
        }
        let create: unsafe extern "C" fn(*mut Handle) -> c_int = bind!("cublasCreate_v2");
        let set_stream: unsafe extern "C" fn(Handle, *mut c_void) -> c_int =
            bind!("cublasSetStream_v2");
        let set_math: unsafe extern "C" fn(Handle, c_int) -> c_int = bind!("cublasSetMathMode");
        let get_version: unsafe extern "C" fn(Handle, *mut c_int) -> c_int =
            bind!("cublasGetVersion_v2");
        let sgemm = bind!("cublasSgemm_v2");
        let gemm_ex = bind!("cublasGemmEx");
        let destroy = bind!("cublasDestroy_v2");
        let mut cublas = Cublas {
            handle: std::ptr::null_mut(),
            stream,
            version: 0,
            path: name,
            sgemm,
            gemm_ex,
            destroy,
            _library: library,
        };
        let check = |call: &str, status: c_int| {
            succeeded(status, || format!("{}: {call}", cublas.path.display()))
        };
        let mut handle = std::ptr::null_mut();
        // SAFETY: writes one handle; the caller's context is current.
        check("cublasCreate", unsafe { create(&mut handle) })?;
        let mut version = 0;
        // SAFETY: `handle` is the live handle just created; each call takes
        // it and plain values (the stream is the caller's live stream).
        let calls = unsafe {
            [
                ("cublasSetStream", set_stream(handle, stream)),
                ("cublasSetMathMode", set_math(handle, CUBLAS_DEFAULT_MATH)),
                ("cublasGetVersion", get_version(handle, &mut version)),
            ]
        };
        cublas.handle = handle;
        cublas.version = version;
        for (call, status) in calls {
            check(call, status)?;
        }
        Ok(cublas)
    }

    /// Finds cuBLAS: each of [`LIBRARY_NAMES`] in each folder of
    /// [`crate::nvrtc::search_dirs`] and [`WHEEL_DIRS`], then each name
    /// through the system loader.
    ///
    /// # Errors
    /// One line saying what was searched, and the first file found that did
    /// not load, with the loader's reason.
    pub fn find(stream: &cudarc::driver::CudaStream) -> Result<Cublas, String> {
        let mut dirs = crate::nvrtc::search_dirs(|v| std::env::var_os(v));
        let wheels: Vec<PathBuf> = dirs
            .iter()
            .filter(|d| d.ends_with("nvidia/cu13/lib") || d.ends_with("nvidia/cuda_nvrtc/lib"))
            .filter_map(|d| d.parent().and_then(|p| p.parent()))
            .flat_map(|site| WHEEL_DIRS.iter().map(move |w| site.join(w)))
            .filter(|d| d.is_dir())
            .collect();
        dirs.extend(wheels);
        let mut unloadable = None;
        for file in dirs
            .iter()
            .flat_map(|d| LIBRARY_NAMES.iter().map(move |n| d.join(n)))
        {
            if file.exists() {
                match Cublas::open(file.as_os_str(), stream) {
                    Ok(c) => return Ok(c),
                    Err(why) => {
                        unloadable.get_or_insert(why);
                    }
                }
            }
        }
        for name in LIBRARY_NAMES {
            if let Ok(c) = Cublas::open(std::ffi::OsStr::new(name), stream) {
                return Ok(c);
            }
        }
        Err(match unloadable {
            Some(why) => format!("cuBLAS did not load: {why}"),
            None => format!(
                "cuBLAS not found ({} in LD_LIBRARY_PATH, the CUDA toolkit's lib64 or pip's nvidia-cublas wheel); \
                 install the CUDA toolkit or `pip install nvidia-cublas`",
                LIBRARY_NAMES.join(", ")
            ),
        })
    }

    /// Where the library was loaded from.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// cuBLAS's version as `major.minor.patch` (from `cublasGetVersion`).
    pub fn version(&self) -> String {
        let v = self.version;
        format!("{}.{}.{}", v / 10_000, v / 100 % 100, v % 100)
    }

    /// Row-major `D = alpha * A * B + beta * D` for `A` (m x k), `B`
    /// (k x n) and `D` (m x n), given as device addresses, queued on the
    /// handle's stream. cuBLAS is column-major; a row-major matrix is its
    /// transpose, so this asks for `D^T = B^T A^T`: the same call with the
    /// operands swapped and the dimensions n, m.
    ///
    /// # Safety
    /// `a`, `b` and `d` are live device allocations of at least m*k, k*n
    /// and m*n floats; `d` overlaps neither input.
    ///
    /// # Errors
    /// The status, where cuBLAS refuses the call.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn sgemm_row_major(
        &self,
        m: usize,
        n: usize,
        k: usize,
        alpha: f32,
        a: u64,
        b: u64,
        beta: f32,
        d: u64,
    ) -> Result<(), String> {
        let (m, n, k) = (m as c_int, n as c_int, k as c_int);
        // SAFETY: the caller's contract; alpha and beta are read before
        // the call returns (host pointer mode, the default).
        let status = unsafe {
            (self.sgemm)(
                self.handle,
                CUBLAS_OP_N,
                CUBLAS_OP_N,
                n,
                m,
                k,
                &alpha,
                b,
                n,
                a,
                k,
                &beta,
                d,
                n,
            )
        };
        succeeded(status, || {
            format!("cublasSgemm (m = {m}, n = {n}, k = {k})")
        })
    }

    /// Row-major `D = alpha * A * B + beta * D` with A (m x k) and B (k x n)
    /// in `half` (bf16 or f16) and D in f32, the products summed in f32
    /// (`cublasGemmEx`, `CUBLAS_COMPUTE_32F`, cuBLAS's default algorithm:
    /// its tensor-core kernels), queued on the handle's stream; the operands
    /// swapped as in [`Cublas::sgemm_row_major`].
    ///
    /// # Safety
    /// As [`Cublas::sgemm_row_major`], with `a` and `b` holding `half`'s
    /// bit patterns.
    ///
    /// # Errors
    /// The status, where cuBLAS refuses the call.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn gemm_half_row_major(
        &self,
        half: Half,
        m: usize,
        n: usize,
        k: usize,
        alpha: f32,
        a: u64,
        b: u64,
        beta: f32,
        d: u64,
    ) -> Result<(), String> {
        let (m, n, k) = (m as c_int, n as c_int, k as c_int);
        let (alpha, beta) = (
            &alpha as *const f32 as *const c_void,
            &beta as *const f32 as *const c_void,
        );
        // SAFETY: the caller's contract; alpha and beta are f32, as the
        // 32F compute type reads them, and live through the call.
        let status = unsafe {
            (self.gemm_ex)(
                self.handle,
                CUBLAS_OP_N,
                CUBLAS_OP_N,
                n,
                m,
                k,
                alpha,
                b,
                half.cuda_type(),
                n,
                a,
                half.cuda_type(),
                k,
                beta,
                d,
                CUDA_R_32F,
                n,
                CUBLAS_COMPUTE_32F,
                CUBLAS_GEMM_DEFAULT,
            )
        };
        succeeded(status, || {
            format!("cublasGemmEx ({}) (m = {m}, n = {n}, k = {k})", half.name())
        })
    }

    /// Row-major `D = alpha * A * B + beta * D` in `half` (bf16 or f16)
    /// with f32 sums ([`Cublas::gemm_half_row_major`]) on device buffers,
    /// queued on `stream`: A is `m x k` and B `k x n` 16-bit patterns (as
    /// [`crate::gpu::Gpu::upload_half`] makes them), D `m x n` floats; each
    /// buffer's leading elements are the matrix, so one set of buffers
    /// serves every size up to its length. With `beta = 0` cuBLAS does not
    /// read D (BLAS's rule), so a poisoned D is fine.
    ///
    /// `stream` must be the stream the handle was opened on
    /// ([`Cublas::find`]): the buffers' use is ordered on it, and another
    /// stream is refused.
    ///
    /// # Errors
    /// One line: another stream than the handle's, a buffer shorter than
    /// its matrix, or cuBLAS's status.
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_half_buffers(
        &self,
        stream: &cudarc::driver::CudaStream,
        half: Half,
        (m, n, k): (usize, usize, usize),
        alpha: f32,
        a: &cudarc::driver::CudaSlice<u16>,
        b: &cudarc::driver::CudaSlice<u16>,
        beta: f32,
        d: &mut cudarc::driver::CudaSlice<f32>,
    ) -> Result<(), String> {
        use cudarc::driver::{DevicePtr, DevicePtrMut};
        let call = format!("cublasGemmEx ({})", half.name());
        if stream.cu_stream().cast::<c_void>() != self.stream {
            return Err(format!(
                "{call}: the buffers' stream is not the stream the cuBLAS handle is bound to"
            ));
        }
        for (name, len, need) in [
            ("A", a.len(), m * k),
            ("B", b.len(), k * n),
            ("D", d.len(), m * n),
        ] {
            if len < need {
                return Err(format!(
                    "{call} of {m} x {n} x {k}: {name} holds {len} elements, {need} needed"
                ));
            }
        }
        let (d_ptr, _d) = d.device_ptr_mut(stream);
        let (a_ptr, _a) = a.device_ptr(stream);
        let (b_ptr, _b) = b.device_ptr(stream);
        // SAFETY: A, B and D are live allocations of at least m*k, k*n
        // 16-bit values and m*n floats (checked above), D is a distinct
        // allocation (a mutable borrow), and the buffers' stream is the
        // handle's (checked).
        unsafe { self.gemm_half_row_major(half, m, n, k, alpha, a_ptr, b_ptr, beta, d_ptr) }
    }
}

/// `Ok` for `CUBLAS_STATUS_SUCCESS`, else one line: `call` (what was
/// called, made only on failure) and the status it returned.
fn succeeded(status: c_int, call: impl FnOnce() -> String) -> Result<(), String> {
    if status == CUBLAS_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(format!("{} returned status {status}", call()))
    }
}

impl Drop for Cublas {
    fn drop(&mut self) {
        if !self.handle.is_null() {
            // SAFETY: the handle is live and dropped once.
            unsafe { (self.destroy)(self.handle) };
        }
    }
}
