//! GPU error paths: a kernel that faults must produce an error that names
//! it and suggests the sanitizer, and the process must still be able to
//! report it (no panic, no abort). Its own test binary: a fault leaves the
//! CUDA context unusable, so nothing else may share this process after it.

use host::Error;
use host::gpu::Gpu;
use host::testing::TestKernel;
use lab_tests::{run_gpu_trials, trial};

fn a_faulting_kernel_is_named(gpu: &Gpu) -> Result<(), String> {
    const FAULT_ON_PURPOSE: &str = "fault_on_purpose";
    assert_eq!(TestKernel::FaultOnPurpose.symbol(), FAULT_ON_PURPOSE);
    // The launch itself is accepted; the fault surfaces at the next sync.
    let err = host::testing::fault_on_purpose(gpu)
        .and_then(|()| gpu.sync_after(FAULT_ON_PURPOSE))
        .err()
        .ok_or("the faulting kernel reported no error")?;
    let message = err.to_string();
    match &err {
        Error::KernelFault { kernel, .. } if kernel == FAULT_ON_PURPOSE => {}
        other => return Err(format!("wrong error: {other:?}")),
    }
    for want in ["kernel `fault_on_purpose` failed", "compute-sanitizer"] {
        if !message.contains(want) {
            return Err(format!("the message lacks {want:?}: {message}"));
        }
    }
    // The driver reports an illegal address; under compute-sanitizer the
    // same fault arrives as a launch failure (seen on the H200, 2026-11-29).
    if !["CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_LAUNCH_FAILED"]
        .iter()
        .any(|c| message.contains(c))
    {
        return Err(format!("the message names no fault: {message}"));
    }
    if err.exit_code() != host::error::exit::KERNEL_FAULT {
        return Err(format!("exit code {}", err.exit_code()));
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    run_gpu_trials(vec![trial(
        "a_faulting_kernel_is_named",
        a_faulting_kernel_is_named,
    )])
}
