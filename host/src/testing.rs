//! The kernels only the tests launch (`kernels-gpu/src/testing.rs`): one
//! that faults on purpose, so a test can check how a fault is reported, and
//! the device tanh over a sweep of inputs. They live in a kernel set of
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
