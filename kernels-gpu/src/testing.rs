//! Kernels that exist only for the tests: one that faults, so they can check
//! how a fault is reported; one that writes a float past the end of its
//! output, so they can check the guards and compute-sanitizer see it; and
//! the device tanh over a sweep of inputs.

/// Writes to address 16, which no allocation covers: every thread faults
/// with an illegal address. The host must report the fault naming this
/// kernel (tests/gpu_errors.rs).
///
/// # Launch assumption
/// Any shape; one thread is enough.
///
/// # Safety
/// None: it faults on purpose, and leaves the context unusable.
#[cfg(target_arch = "nvptx64")]
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn fault_on_purpose() {
    let addr: u64;
    // SAFETY: a register move; the asm keeps the compiler from reasoning
    // about the constant address.
    unsafe { core::arch::asm!("mov.u64 {0}, 16;", out(reg64) addr, options(pure, nomem, nostack)) };
    let bad = addr as *mut f32;
    // SAFETY: none; this store is the fault the kernel exists for.
    unsafe { bad.write_volatile(1.0) };
}

/// `y[i] = device::math::tanh(x[i])`: lets a GPU test measure the device
/// tanh's error against f64 over a sweep of inputs.
///
/// # Launch assumption
/// `grid_dim.x * block_dim.x >= n`.
///
/// # Safety
/// `x` and `y` hold `n` floats.
#[cfg(target_arch = "nvptx64")]
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn tanh_for_tests(x: *const f32, y: *mut f32, n: u64) {
    let i = crate::device::thread::global_index_x();
    if i < n {
        // SAFETY: i < n.
        unsafe { *y.add(i as usize) = crate::device::math::tanh(*x.add(i as usize)) };
    }
}

/// `out[i] = i` for `i < n`; where `past` is nonzero, the thread of element
/// `n - 1` also writes `out[n]`, one float past the end of an `n`-float
/// output: the planted bug that the lab's guard check and compute-sanitizer's
/// memcheck must both report (tests/gpu_guards.rs, `cargo xtask sanitize`).
///
/// # Launch assumption
/// `grid_dim.x * block_dim.x >= n`, `n >= 1`.
///
/// # Safety
/// `out` holds `n` floats, or `n + 1` where `past` is nonzero (it does
/// not, on purpose, in the tests).
#[cfg(target_arch = "nvptx64")]
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn write_past_end(out: *mut f32, n: u64, past: u32) {
    let i = crate::device::thread::global_index_x();
    if i < n {
        // SAFETY: i < n.
        unsafe { *out.add(i as usize) = i as f32 };
        if past != 0 && i == n - 1 {
            // SAFETY: none where `out` holds only n floats; this store is
            // the bug the kernel exists for.
            unsafe { out.add(n as usize).write_volatile(-1.0) };
        }
    }
}
