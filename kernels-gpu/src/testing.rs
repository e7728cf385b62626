//! A kernel that exists only so the tests can check how a fault is reported.

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

/// The symbol of the faulting kernel.
pub const FAULT_ON_PURPOSE: &str = "fault_on_purpose";
