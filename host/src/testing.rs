//! The kernels only the tests launch (`kernels-gpu/src/testing.rs`): one
//! that faults on purpose, so a test can check how a fault is reported; one
//! that writes a float past the end of its output (the guards' and the
//! sanitizer's planted bug); and the device tanh over a sweep of inputs. They live in a kernel set of
//! their own, so the signature test covers them like every lesson's.

use cudarc::driver::{CudaSlice, LaunchConfig};

use crate::error::Result;
use crate::gpu::Gpu;
use crate::kernels::KernelSet;

crate::kernel_ids! {
    /// The test-only kernels.
    pub enum TestKernel {
        /// Writes to address 16: every thread faults. No arguments.
        FaultOnPurpose = "fault_on_purpose" (),
        /// `y[i] = tanh(x[i])` with the device tanh: (x, y, n).
        TanhForTests = "tanh_for_tests" (Ptr, Ptr, U64),
        /// `out[i] = i` for i < n, and `out[n]` too where `past`: (out, n, past).
        WritePastEnd = "write_past_end" (Ptr, U64, U32),
    }
}

/// Launches `fault_on_purpose` on one thread (asynchronously): the fault
/// surfaces at the next synchronisation, charged to the kernel.
///
/// # Errors
/// The launch refused; the kernel missing from the PTX.
pub fn fault_on_purpose(gpu: &Gpu) -> Result<()> {
    let kernels = KernelSet::<TestKernel>::new(gpu)?;
    let launch = kernels.launch(gpu, TestKernel::FaultOnPurpose);
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (1, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel takes no arguments; its fault is its purpose, and
    // the caller's test process expects the context to be lost.
    unsafe { launch.launch(cfg) }
}

/// `y[i] = tanh(x[i])` for the first `n` elements on the GPU, one thread
/// an element, blocks of 256; waits for it.
///
/// # Errors
/// [`crate::Error::Size`] for `n` past either buffer; launch and fault
/// errors charged to the kernel.
pub fn tanh(gpu: &Gpu, x: &CudaSlice<f32>, y: &mut CudaSlice<f32>, n: usize) -> Result<()> {
    if n > x.len() || n > y.len() {
        return Err(crate::Error::Size(format!(
            "tanh_for_tests: {n} elements, buffers of {} and {}",
            x.len(),
            y.len()
        )));
    }
    let kernels = KernelSet::<TestKernel>::new(gpu)?;
    let launch = kernels
        .launch(gpu, TestKernel::TanhForTests)
        .input(x)
        .output(y)
        .scalar(n as u64);
    let cfg = LaunchConfig {
        grid_dim: (n.div_ceil(256) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: both buffers hold at least n floats (checked above) and are
    // distinct; one thread an element.
    unsafe { launch.launch(cfg) }?;
    gpu.sync_after("tanh_for_tests")
}

/// Launches `write_past_end` on the first `n` floats of `out` (one thread
/// an element, blocks of 256), writing `out[n]` too where `past`, and waits
/// for it: [`Gpu::sync_after`] reads the guard after `out`.
///
/// # Errors
/// [`crate::Error::WrotePastEnd`] where the write past the end landed in a
/// guard (`past` with `n == out.len()`); [`crate::Error::Size`] for `n` of
/// 0 or past the buffer; launch and fault errors charged to the kernel.
pub fn write_past_end(gpu: &Gpu, out: &mut CudaSlice<f32>, n: usize, past: bool) -> Result<()> {
    if n == 0 || n > out.len() {
        return Err(crate::Error::Size(format!(
            "write_past_end: {n} elements, a buffer of {}",
            out.len()
        )));
    }
    let kernels = KernelSet::<TestKernel>::new(gpu)?;
    let launch = kernels
        .launch(gpu, TestKernel::WritePastEnd)
        .output(out)
        .scalar(n as u64)
        .scalar(u32::from(past));
    let cfg = LaunchConfig {
        grid_dim: (n.div_ceil(256) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: one thread an element of the n the buffer holds; the one
    // write past them is the planted bug, which lands in the buffer's guard
    // (or, under LAB_NO_GUARDS, past the allocation, for memcheck).
    unsafe { launch.launch(cfg) }?;
    gpu.sync_after("write_past_end")
}

/// `lab --plant-write-past-end`: opens device `ordinal`, allocates 1000
/// floats and runs [`write_past_end`] on all of them with the planted write.
/// The guard check turns it into [`crate::Error::WrotePastEnd`]; under
/// `cargo xtask sanitize` (no guards) it returns `Ok` and memcheck must
/// report the write.
///
/// # Errors
/// As [`write_past_end`], and opening the device.
pub fn plant_write_past_end(ordinal: usize) -> Result<()> {
    let gpu = Gpu::open(ordinal)?;
    let mut out = gpu.alloc_f32(1000)?;
    write_past_end(&gpu, &mut out, 1000, true)
}
