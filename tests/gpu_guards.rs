//! The guards past every buffer on the GPU: the planted kernel that writes
//! one float past the end of its output is reported by the guard check,
//! naming the kernel and the argument; a kernel that stays inside passes;
//! and a write past the elements a check launched on, inside a larger
//! buffer, is reported by the check's own poisoned guard. (That memcheck
//! reports the same write is `cargo xtask sanitize`'s first line.)

use host::Error;
use host::gpu::Gpu;
use lab_tests::{run_gpu_trials, trial};

const N: usize = 1000;

fn guards_are_on(gpu: &Gpu) -> Result<(), String> {
    if gpu.guards.bytes() == 0 {
        return Err(format!(
            "the guards are off ({} is set): unset it to run these tests",
            host::guard::NO_GUARDS_ENV
        ));
    }
    Ok(())
}

fn a_write_past_the_end_is_caught_by_the_guard(gpu: &Gpu) -> Result<(), String> {
    guards_are_on(gpu)?;
    let mut out = gpu.alloc_f32(N).map_err(|e| e.to_string())?;
    let err = host::testing::write_past_end(gpu, &mut out, N, true)
        .err()
        .ok_or("the write past the end went unseen")?;
    match &err {
        Error::WrotePastEnd {
            kernel,
            what,
            bytes,
            offset,
        } if kernel == "write_past_end"
            && what == "argument 0"
            && *bytes == 4 * N
            && *offset == 0 => {}
        other => return Err(format!("wrong error: {other:?}")),
    }
    let message = err.to_string();
    if !message.contains("cargo xtask sanitize") {
        return Err(format!(
            "the message does not say how to find the write: {message}"
        ));
    }
    if err.exit_code() != host::error::exit::KERNEL_FAULT {
        return Err(format!("exit code {}", err.exit_code()));
    }
    Ok(())
}

fn a_kernel_that_stays_inside_passes(gpu: &Gpu) -> Result<(), String> {
    guards_are_on(gpu)?;
    let mut out = gpu.alloc_f32(N).map_err(|e| e.to_string())?;
    host::testing::write_past_end(gpu, &mut out, N, false).map_err(|e| e.to_string())?;
    let mut got = vec![0.0f32; N];
    gpu.download(&out, &mut got).map_err(|e| e.to_string())?;
    let want: Vec<f32> = (0..N).map(|i| i as f32).collect();
    if got != want {
        return Err("write_past_end did not write 0..n".into());
    }
    Ok(())
}

fn a_write_past_the_checked_elements_is_caught_inside_a_larger_buffer(
    gpu: &Gpu,
) -> Result<(), String> {
    let mut out = gpu.alloc_f32(2 * N).map_err(|e| e.to_string())?;
    gpu.poison_output(&mut out, N).map_err(|e| e.to_string())?;
    // Inside the allocation: the buffer's own guard sees nothing.
    host::testing::write_past_end(gpu, &mut out, N, true).map_err(|e| e.to_string())?;
    match gpu.read_output(&out, N, "write_past_end") {
        Err(Error::WrotePastEnd {
            kernel,
            what,
            offset: 0,
            ..
        }) if kernel == "write_past_end" && what.contains("1000 elements") => Ok(()),
        other => Err(format!("wrong outcome: {other:?}")),
    }
}

fn main() -> std::process::ExitCode {
    run_gpu_trials(vec![
        trial(
            "a_write_past_the_end_is_caught_by_the_guard",
            a_write_past_the_end_is_caught_by_the_guard,
        ),
        trial(
            "a_kernel_that_stays_inside_passes",
            a_kernel_that_stays_inside_passes,
        ),
        trial(
            "a_write_past_the_checked_elements_is_caught_inside_a_larger_buffer",
            a_write_past_the_checked_elements_is_caught_inside_a_larger_buffer,
        ),
    ])
}
