//! Compiling the CUDA C twins at run time with NVRTC, for the GPU at hand
//! and with nvcc's default code generation (FMA contraction on, IEEE
//! division and square root, no flush to zero), so a user needs no nvcc.
//!
//! The library is found and bound here, not by cudarc: cudarc 0.19, built
//! for CUDA 12, asks the system loader for `libnvrtc.so`, `.so.12`, `.so.11`
//! and older by bare name only, so a CUDA 13 runtime-only install (which
//! ships `libnvrtc.so.13` alone) was not found. [`library`] tries each of
//! [`LIBRARY_NAMES`] in each folder of [`search_dirs`] (LD_LIBRARY_PATH,
//! the toolkit, pip's wheels), then each name through the system loader's
//! own search (its cache, RUNPATH), and keeps the first that loads.

use std::ffi::{CStr, CString, OsStr, OsString, c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::error::{Error, Result};

/// The file names tried in each folder, in order: the unversioned name (a
/// toolkit's development link, whatever version it is), then the sonames
/// of CUDA 13, 12 and 11 (`.so.11.2` is CUDA 11.2 to 11.8's; `.so.11` is
/// what cudarc asks for).
pub const LIBRARY_NAMES: [&str; 5] = [
    "libnvrtc.so",
    "libnvrtc.so.13",
    "libnvrtc.so.12",
    "libnvrtc.so.11.2",
    "libnvrtc.so.11",
];

/// Where pip's NVRTC wheels put the library, below a `site-packages` (or
/// `dist-packages`) folder: `nvidia-cuda-nvrtc` 13.x (CUDA 13) and
/// `nvidia-cuda-nvrtc-cu12` (CUDA 12).
pub const WHEEL_DIRS: [&str; 2] = ["nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"];

/// The folders searched for [`LIBRARY_NAMES`], in order, that exist on
/// this machine; `var` reads an environment variable (`std::env::var_os`
/// in a run, a made-up environment in a test).
///
/// 1. each folder of `LD_LIBRARY_PATH` (the user's choice comes first);
/// 2. `$CUDA_HOME/lib64` and `$CUDA_PATH/lib64`, then `/usr/local/cuda/lib64`;
/// 3. pip's wheel folders ([`WHEEL_DIRS`]) in the site-packages of
///    `$VIRTUAL_ENV`, `$CONDA_PREFIX`, `~/.local`, `/usr/local`, `/usr` and
///    `/opt/conda` (every `lib/python3.*`, and Debian's `lib/python3`), and
///    `$CONDA_PREFIX/lib` (conda's `cuda-nvrtc`).
///
/// A folder listed twice is searched once.
pub fn search_dirs(var: impl Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(paths) = var("LD_LIBRARY_PATH") {
        dirs.extend(std::env::split_paths(&paths).filter(|p| !p.as_os_str().is_empty()));
    }
    for home in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = var(home) {
            dirs.push(PathBuf::from(root).join("lib64"));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    let mut prefixes: Vec<PathBuf> = Vec::new();
    for name in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(p) = var(name) {
            prefixes.push(p.into());
        }
    }
    if let Some(home) = var("HOME") {
        prefixes.push(PathBuf::from(home).join(".local"));
    }
    prefixes.extend(["/usr/local", "/usr", "/opt/conda"].map(PathBuf::from));
    for prefix in &prefixes {
        for site in site_packages(prefix) {
            dirs.extend(WHEEL_DIRS.iter().map(|w| site.join(w)));
        }
    }
    if let Some(conda) = var("CONDA_PREFIX") {
        dirs.push(PathBuf::from(conda).join("lib"));
    }
    let mut seen = std::collections::HashSet::new();
    dirs.retain(|d| d.is_dir() && seen.insert(d.clone()));
    dirs
}

/// The `site-packages` and `dist-packages` folders of the Python installs
/// under `prefix`: `lib/python3.*/{site,dist}-packages` and
/// `lib/python3/dist-packages`.
fn site_packages(prefix: &Path) -> Vec<PathBuf> {
    let lib = prefix.join("lib");
    let Ok(entries) = std::fs::read_dir(&lib) else {
        return Vec::new();
    };
    let mut pythons: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(OsStr::to_str)
                .is_some_and(|n| n.starts_with("python3"))
        })
        .collect();
    // The newest Python first, as sorted names ("python3.9" after
    // "python3.12" would sort wrong, so by the number after the dot).
    pythons.sort_by_key(|p| {
        let name = p.file_name().and_then(OsStr::to_str).unwrap_or("");
        std::cmp::Reverse(
            name.trim_start_matches("python3")
                .trim_start_matches('.')
                .parse::<u32>()
                .unwrap_or(0),
        )
    });
    pythons
        .iter()
        .flat_map(|p| [p.join("site-packages"), p.join("dist-packages")])
        .collect()
}

/// The loader's reason that `file` did not load, one line: dlerror's text
/// (which names the file) where libloading has it, else libloading's own.
fn loader_error(file: &OsStr, e: &libloading::Error) -> String {
    use std::error::Error as _;
    let why = e.source().map_or_else(|| e.to_string(), |s| s.to_string());
    let file = Path::new(file).display().to_string();
    if why.contains(&file) {
        why
    } else {
        format!("{file}: {why}")
    }
}

/// Loads the NVRTC builtins libraries (`libnvrtc-builtins.so.*`, not the
/// `.alt` ones) that sit beside `nvrtc`, where it is a path. NVRTC 13 asks
/// the system loader for its builtins by name when it compiles, and that
/// search does not include NVRTC's own folder (its RUNPATH `$ORIGIN` serves
/// its direct dependencies only): a library found outside LD_LIBRARY_PATH
/// (in pip's wheel, under `$CUDA_HOME`) then fails every compile with
/// `NVRTC_ERROR_BUILTIN_OPERATION_FAILURE`. A library already loaded answers
/// a request for its soname, so loading them first by path serves that
/// request. Failures are ignored: NVRTC reports its own then.
fn preload_builtins(nvrtc: &Path) -> Vec<libloading::Library> {
    let Some(dir) = nvrtc.parent().filter(|d| !d.as_os_str().is_empty()) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(OsStr::to_str)
                .is_some_and(|n| n.starts_with("libnvrtc-builtins.so"))
        })
        .collect();
    names.sort();
    names
        .iter()
        // SAFETY: the builtins library's initialisers have no
        // preconditions.
        .filter_map(|p| unsafe { libloading::Library::new(p) }.ok())
        .collect()
}

/// An `nvrtcProgram` handle.
type Program = *mut c_void;

/// NVRTC's status codes (`nvrtcResult`) that this module tells apart.
const NVRTC_SUCCESS: c_int = 0;
const NVRTC_ERROR_INVALID_OPTION: c_int = 5;
const NVRTC_ERROR_COMPILATION: c_int = 6;

/// A loaded NVRTC library: the functions the twins need, bound by name.
pub struct Nvrtc {
    /// Where it was loaded from: a path, or the bare name the system loader
    /// resolved.
    path: PathBuf,
    /// `nvrtcVersion`'s answer, `(major, minor)`.
    version: (i32, i32),
    create_program: unsafe extern "C" fn(
        *mut Program,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> c_int,
    compile_program: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> c_int,
    get_ptx_size: unsafe extern "C" fn(Program, *mut usize) -> c_int,
    get_ptx: unsafe extern "C" fn(Program, *mut c_char) -> c_int,
    get_log_size: unsafe extern "C" fn(Program, *mut usize) -> c_int,
    get_log: unsafe extern "C" fn(Program, *mut c_char) -> c_int,
    destroy_program: unsafe extern "C" fn(*mut Program) -> c_int,
    error_string: unsafe extern "C" fn(c_int) -> *const c_char,
    /// Keeps the functions above mapped.
    _library: libloading::Library,
    /// The builtins libraries loaded beside it (see [`preload_builtins`]).
    _builtins: Vec<libloading::Library>,
}

impl std::fmt::Debug for Nvrtc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nvrtc")
            .field("path", &self.path)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl Nvrtc {
    /// Loads the NVRTC library `file` (a path, or a bare file name for the
    /// system loader to find) and binds its functions.
    ///
    /// # Errors
    /// The loader's reason, one line, where the file does not load, lacks
    /// one of the functions, or its `nvrtcVersion` fails.
    pub fn open(file: impl AsRef<OsStr>) -> std::result::Result<Nvrtc, String> {
        let file = file.as_ref();
        // A path is loaded as the file it links to: NVRTC looks for its
        // builtins library (libnvrtc-builtins.so.*) beside the file it was
        // loaded as, and a link elsewhere has none beside it.
        let target = if Path::new(file).components().count() > 1 {
            std::fs::canonicalize(file).map_or_else(|_| file.to_owned(), PathBuf::into_os_string)
        } else {
            file.to_owned()
        };
        let builtins = preload_builtins(Path::new(&target));
        // SAFETY: loading NVRTC runs only its initialisers, which have no
        // preconditions.
        let library =
            unsafe { libloading::Library::new(&target) }.map_err(|e| loader_error(file, &e))?;
        macro_rules! bind {
            ($name:literal) => {
                // SAFETY: the type is the function's C signature in
                // nvrtc.h (CUDA 11 to 13), for the symbol of that name.
                *unsafe { library.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| format!("{}: no {}: {e}", Path::new(file).display(), $name))?
            };
        }
        let version_fn: unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int =
            bind!("nvrtcVersion");
        let mut nvrtc = Nvrtc {
            path: PathBuf::from(file),
            version: (0, 0),
            create_program: bind!("nvrtcCreateProgram"),
            compile_program: bind!("nvrtcCompileProgram"),
            get_ptx_size: bind!("nvrtcGetPTXSize"),
            get_ptx: bind!("nvrtcGetPTX"),
            get_log_size: bind!("nvrtcGetProgramLogSize"),
            get_log: bind!("nvrtcGetProgramLog"),
            destroy_program: bind!("nvrtcDestroyProgram"),
            error_string: bind!("nvrtcGetErrorString"),
            _library: library,
            _builtins: builtins,
        };
        let (mut major, mut minor) = (0, 0);
        // SAFETY: writes two ints.
        let status = unsafe { version_fn(&mut major, &mut minor) };
        if status != NVRTC_SUCCESS {
            return Err(format!(
                "{}: nvrtcVersion failed: {}",
                nvrtc.path.display(),
                nvrtc.describe(status)
            ));
        }
        nvrtc.version = (major, minor);
        Ok(nvrtc)
    }

    /// Finds and loads NVRTC: each of [`LIBRARY_NAMES`] in each of `dirs`
    /// (in that order: folder by folder), then each name through the system
    /// loader's search.
    ///
    /// # Errors
    /// [`Error::NvrtcMissing`] where none loads, naming the first file that
    /// was found but did not load (with the loader's reason).
    pub fn find(dirs: &[PathBuf]) -> Result<Nvrtc> {
        let mut unloadable = None;
        let files = dirs
            .iter()
            .flat_map(|d| LIBRARY_NAMES.iter().map(move |n| d.join(n)))
            .filter(|f| f.exists());
        for file in files {
            match Nvrtc::open(&file) {
                Ok(nvrtc) => return Ok(nvrtc),
                Err(why) => {
                    unloadable.get_or_insert(why);
                }
            }
        }
        for name in LIBRARY_NAMES {
            if let Ok(nvrtc) = Nvrtc::open(name) {
                return Ok(nvrtc);
            }
        }
        Err(Error::NvrtcMissing { unloadable })
    }

    /// Where the library was loaded from: a path, or a bare file name the
    /// system loader resolved.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// NVRTC's version, `(major, minor)`.
    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    /// `NVRTC_ERROR_NAME` for a status code, from the library.
    fn describe(&self, status: c_int) -> String {
        // SAFETY: returns a static string for any status.
        let text = unsafe { (self.error_string)(status) };
        if text.is_null() {
            return format!("status {status}");
        }
        // SAFETY: a NUL-terminated static string.
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    }

    /// Compiles `source` to PTX for `sm_XY` where `cc = (X, Y)`, with nvcc's
    /// defaults (`--fmad=true`) and C++17. `name` labels NVRTC's messages.
    ///
    /// # Errors
    /// [`Error::Nvrtc`]: with NVRTC's log when the source does not compile
    /// or NVRTC does not know the architecture; with NVRTC's status where a
    /// call fails otherwise.
    pub fn compile(&self, source: &str, name: &str, cc: (i32, i32)) -> Result<String> {
        self.compile_with(source, name, &format!("sm_{}{}", cc.0, cc.1), &[])
    }

    /// [`Nvrtc::compile`] for the architecture `arch` (`sm_90`, or an
    /// architecture-specific one such as `sm_90a`) with `extra` NVRTC
    /// options after the defaults
    /// (for example `--relocatable-device-code=true`, which keeps external
    /// device functions for a later link, as `nvcc -rdc=true` does).
    ///
    /// # Errors
    /// As [`Nvrtc::compile`]; an option holding a NUL byte, or one NVRTC
    /// does not accept, is an [`Error::Nvrtc`] too.
    pub fn compile_with(
        &self,
        source: &str,
        name: &str,
        arch: &str,
        extra: &[&str],
    ) -> Result<String> {
        let nul = |what: &str| Error::Nvrtc(format!("{name}: the {what} holds a NUL byte"));
        let src = CString::new(source).map_err(|_| nul("source"))?;
        let label = CString::new(name).map_err(|_| nul("name"))?;
        let options: Vec<CString> = [
            "--fmad=true".to_string(),
            format!("--gpu-architecture={arch}"),
            "--std=c++17".to_string(),
        ]
        .into_iter()
        .chain(extra.iter().map(|o| o.to_string()))
        .map(|o| CString::new(o).map_err(|_| nul("option list")))
        .collect::<Result<_>>()?;
        let option_ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
        let fail = |call: &str, status: c_int| {
            Error::Nvrtc(format!("{name}: {call} failed: {}", self.describe(status)))
        };

        let mut program: Program = std::ptr::null_mut();
        // SAFETY: `src` and `label` are NUL-terminated and outlive the
        // program (destroyed below, before they drop); no headers.
        let status = unsafe {
            (self.create_program)(
                &mut program,
                src.as_ptr(),
                label.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        if status != NVRTC_SUCCESS {
            return Err(fail("nvrtcCreateProgram", status));
        }
        let program = ProgramGuard {
            nvrtc: self,
            program,
        };
        // SAFETY: a live program; `option_ptrs` holds that many
        // NUL-terminated strings, alive for the call.
        let status = unsafe {
            (self.compile_program)(
                program.program,
                option_ptrs.len() as c_int,
                option_ptrs.as_ptr(),
            )
        };
        if status == NVRTC_ERROR_COMPILATION || status == NVRTC_ERROR_INVALID_OPTION {
            return Err(Error::Nvrtc(format!(
                "{name} did not compile ({}, NVRTC {}.{}):\n{}",
                self.describe(status),
                self.version.0,
                self.version.1,
                program.log()
            )));
        }
        if status != NVRTC_SUCCESS {
            return Err(fail("nvrtcCompileProgram", status));
        }
        let mut size = 0usize;
        // SAFETY: a compiled program; writes one size_t.
        let status = unsafe { (self.get_ptx_size)(program.program, &mut size) };
        if status != NVRTC_SUCCESS {
            return Err(fail("nvrtcGetPTXSize", status));
        }
        let mut ptx = vec![0u8; size];
        // SAFETY: `ptx` holds the `size` bytes NVRTC said it writes.
        let status = unsafe { (self.get_ptx)(program.program, ptx.as_mut_ptr().cast()) };
        if status != NVRTC_SUCCESS {
            return Err(fail("nvrtcGetPTX", status));
        }
        let end = ptx.iter().position(|&b| b == 0).unwrap_or(ptx.len());
        ptx.truncate(end);
        String::from_utf8(ptx)
            .map_err(|_| Error::Nvrtc(format!("{name}: NVRTC's PTX is not UTF-8")))
    }
}

/// Destroys a program when dropped, on every path out of
/// [`Nvrtc::compile`].
struct ProgramGuard<'a> {
    nvrtc: &'a Nvrtc,
    program: Program,
}

impl ProgramGuard<'_> {
    /// The program's log (NVRTC's warnings and errors), or why it could not
    /// be read.
    fn log(&self) -> String {
        let mut size = 0usize;
        // SAFETY: a live program; writes one size_t.
        let status = unsafe { (self.nvrtc.get_log_size)(self.program, &mut size) };
        if status != NVRTC_SUCCESS {
            return format!("(no log: {})", self.nvrtc.describe(status));
        }
        let mut log = vec![0u8; size.max(1)];
        // SAFETY: `log` holds the `size` bytes NVRTC said it writes.
        let status = unsafe { (self.nvrtc.get_log)(self.program, log.as_mut_ptr().cast()) };
        if status != NVRTC_SUCCESS {
            return format!("(no log: {})", self.nvrtc.describe(status));
        }
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        String::from_utf8_lossy(&log[..end]).into_owned()
    }
}

impl Drop for ProgramGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: a live program, destroyed once.
        unsafe { (self.nvrtc.destroy_program)(&mut self.program) };
    }
}

// SAFETY: NVRTC's functions may be called from any thread (each program is
// used by one call at a time here), and the fields are function pointers
// and the library handle, which do not change after loading.
unsafe impl Send for Nvrtc {}
// SAFETY: as above.
unsafe impl Sync for Nvrtc {}

/// The NVRTC library this process uses, found on first use (see
/// [`Nvrtc::find`] over [`search_dirs`] of this process's environment).
///
/// # Errors
/// [`Error::NvrtcMissing`] where no NVRTC library loads (the same answer on
/// every call).
pub fn library() -> Result<&'static Nvrtc> {
    static LIBRARY: OnceLock<std::result::Result<Nvrtc, Option<String>>> = OnceLock::new();
    let found = LIBRARY.get_or_init(|| {
        Nvrtc::find(&search_dirs(|v| std::env::var_os(v))).map_err(|e| match e {
            Error::NvrtcMissing { unloadable } => unloadable,
            _ => None,
        })
    });
    found.as_ref().map_err(|unloadable| Error::NvrtcMissing {
        unloadable: unloadable.clone(),
    })
}

/// The NVRTC version, `(major, minor)`.
///
/// # Errors
/// [`Error::NvrtcMissing`] where the NVRTC library cannot be loaded.
pub fn version() -> Result<(i32, i32)> {
    Ok(library()?.version())
}

/// Fails with [`Error::NvrtcMissing`] unless an NVRTC library loads.
pub fn require_nvrtc() -> Result<()> {
    library().map(|_| ())
}

/// Compiles `source` to PTX for `sm_XY` where `cc = (X, Y)` with this
/// process's NVRTC (see [`Nvrtc::compile`]).
///
/// # Errors
/// [`Error::NvrtcMissing`]; [`Error::Nvrtc`] with NVRTC's log when the
/// source does not compile.
pub fn compile(source: &str, name: &str, cc: (i32, i32)) -> Result<String> {
    library()?.compile(source, name, cc)
}

/// Compiles `source` to PTX for the architecture `arch` (`sm_90`, or an
/// architecture-specific `sm_90a`) with this process's NVRTC (see
/// [`Nvrtc::compile_with`]).
///
/// # Errors
/// As [`compile`].
pub fn compile_for(source: &str, name: &str, arch: &str) -> Result<String> {
    library()?.compile_with(source, name, arch, &[])
}
