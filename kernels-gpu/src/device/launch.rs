//! Launch bounds for Rust kernels: CUDA C's `__launch_bounds__`; and
//! [`assume_whole_tiles`], a launch assumption told to the compiler.
//!
//! `__launch_bounds__(max_threads, min_blocks)` tells the compiler the
//! largest block a kernel is launched with and how many blocks of it an SM
//! should hold at once; ptxas then keeps the kernel's registers at or below
//! `65536 / (max_threads * min_blocks)` (rounded down to its allocation
//! step), so that many blocks fit. nvcc writes it into the PTX as the
//! entry's `.maxntid` and `.minnctapersm` directives (PTX ISA, "Performance
//! Tuning Directives"). rustc has no attribute for them on the stable
//! compiler, so [`launch_bounds!`](crate::launch_bounds) leaves a marker
//! comment in the module (`// lab:launch_bounds <kernel> <max_threads>
//! <min_blocks>`), and the host's build script, which turns the crate into
//! the PTX `lab` embeds, writes the two directives into that kernel's entry
//! (`host::launch_bounds::apply`). A marker naming no kernel of the module
//! fails the build.
//!
//! Without it ptxas picks the registers alone: a kernel that needs 132
//! registers a thread fits one block of 256 threads on an SM, not two.

// ANCHOR: launch_bounds
/// Declares `kernel`'s launch bounds: blocks of at most `max_threads`
/// threads, and `min_blocks` of them resident on an SM, as CUDA C's
/// `__launch_bounds__(max_threads, min_blocks)` (see the module docs for
/// how it reaches the PTX). Both are `u32` constant expressions. Write it
/// beside the kernel, at module scope:
///
/// ```ignore
/// launch_bounds!(gemm_warptiled, 256, 2);
/// ```
#[macro_export]
macro_rules! launch_bounds {
    ($kernel:ident, $max_threads:expr, $min_blocks:expr) => {
        const _: () = assert!(
            $max_threads > 0 && $max_threads <= 1024 && $min_blocks > 0,
            "a block has 1 to 1024 threads; an SM holds at least one"
        );
        ::core::arch::global_asm!(
            concat!("// lab:launch_bounds ", stringify!($kernel), " {threads} {blocks}"),
            threads = const $max_threads,
            blocks = const $min_blocks,
        );
    };
}
// ANCHOR_END: launch_bounds

// ANCHOR: assume_whole_tiles
/// Tells the compiler a kernel's launch assumption that `n` is a positive
/// multiple of `TILE` (a grid that tiles an `n`-wide matrix exactly, with
/// no edge guard), as `core::hint::assert_unchecked`; no instruction of
/// its own. `TILE` is a constant above zero (a compile-time error
/// otherwise).
///
/// A loop over `n` then needs no remainder: LLVM unrolls it without the
/// rolled loop for the last `n % 8` steps, and without the copy of the
/// loop's pointers it keeps to start that loop from. `matmul_naive` went
/// from 1.10 of its twin's time to 0.95 and 0.98 with it, in alternating
/// processes on one H200 (docs/results/h200-2026-12-02-naive-loops). The
/// loop before it issued eight loads before its first FMA and stalled on
/// a full load queue (Nsight Compute's `lg_throttle`, in that folder's
/// `rig/`), where the twin's spaces them out.
///
/// # Safety
/// `n > 0` and `n % TILE == 0` wherever it is called: a false assumption
/// is undefined behaviour. State it only where the host refuses other
/// sizes (the roofline lesson refuses a matmul side that is zero or not a
/// multiple of `MAT_TILE`).
#[inline(always)]
pub unsafe fn assume_whole_tiles<const TILE: u32>(n: usize) {
    const { assert!(TILE > 0, "a tile has at least one element") };
    // SAFETY: the caller's contract.
    unsafe { core::hint::assert_unchecked(n > 0 && n % TILE as usize == 0) };
}
// ANCHOR_END: assume_whole_tiles
