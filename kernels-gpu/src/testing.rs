//! Kernels that exist only for the tests: one that faults, so they can check
//! how a fault is reported, and the device tanh over a sweep of inputs.

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
