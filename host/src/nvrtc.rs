//! Compiling the CUDA C twins at run time with NVRTC (through cudarc), for
//! the GPU at hand and with nvcc's default code generation (FMA contraction
//! on, IEEE division and square root, no flush to zero), so a user needs no
//! nvcc.

use cudarc::nvrtc::{CompileError, CompileOptions};

use crate::error::{Error, Result};

/// The NVRTC version, `(major, minor)`.
///
/// # Errors
/// [`Error::NvrtcMissing`] where the NVRTC library cannot be loaded.
pub fn version() -> Result<(i32, i32)> {
    require_nvrtc()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: writes two ints.
    unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| Error::Nvrtc(format!("nvrtcVersion failed: {e:?}")))?;
    Ok((major, minor))
}

/// Fails with [`Error::NvrtcMissing`] unless the NVRTC library loads
/// (checked first: cudarc panics on a missing library).
pub fn require_nvrtc() -> Result<()> {
    // SAFETY: only tries to dlopen the library.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(Error::NvrtcMissing)
    }
}

/// Compiles `source` to PTX for `sm_XY` where `cc = (X, Y)`, with nvcc's
/// defaults (`--fmad=true`), C++17 and `-default-device`. `name` labels
/// NVRTC's messages.
///
/// # Errors
/// [`Error::NvrtcMissing`]; [`Error::Nvrtc`] with NVRTC's log when the
/// source does not compile.
pub fn compile(source: &str, name: &str, cc: (i32, i32)) -> Result<String> {
    require_nvrtc()?;
    let opts = CompileOptions {
        fmad: Some(true),
        options: vec![
            format!("--gpu-architecture=sm_{}{}", cc.0, cc.1),
            "--std=c++17".into(),
        ],
        name: Some(name.to_string()),
        ..Default::default()
    };
    let ptx = cudarc::nvrtc::compile_ptx_with_opts(source, opts).map_err(|e| match e {
        CompileError::CompileError { log, .. } => Error::Nvrtc(format!(
            "{name} did not compile:\n{}",
            log.to_string_lossy()
        )),
        other => Error::Nvrtc(format!("{name}: {other:?}")),
    })?;
    Ok(ptx.to_src())
}
