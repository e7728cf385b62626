//! Global-memory loads through the read-only data path.
//!
//! nvcc loads `const T* __restrict__` inputs with `ld.global.nc` (SASS
//! `LDG.E.CONSTANT`): the non-coherent path through the texture/L1 cache,
//! legal because the kernel promises nothing writes that memory while it
//! runs. A Rust `*const f32` gives LLVM no such promise and becomes a plain
//! `ld.global`. The NVVM intrinsic below states it for one load; LLVM
//! merges neighbouring ones into `ld.global.nc.v2`/`.v4` where it can.
//!
//! The intrinsic's name is one LLVM keeps for compatibility and upgrades on
//! load; `tests/cpu_roofline.rs` checks the PTX still shows `ld.global.nc`.

unsafe extern "C" {
    #[link_name = "llvm.nvvm.ldg.global.f.f32.p0"]
    fn ldg_f32(p: *const f32, align: i32) -> f32;
}

/// Reads `*p` through the read-only data path (`ld.global.nc.f32`).
///
/// # Safety
/// `p` is a valid, 4-byte-aligned pointer into global memory, and nothing
/// writes that address for the rest of the kernel (the `__restrict__`
/// promise). A pointer into shared or local memory is undefined behaviour.
#[inline(always)]
pub unsafe fn load_readonly(p: *const f32) -> f32 {
    // SAFETY: the caller upholds the contract above.
    unsafe { ldg_f32(p, 4) }
}
