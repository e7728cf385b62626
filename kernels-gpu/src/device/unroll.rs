//! Loops flattened in the source, so the copies do not depend on LLVM's
//! unroll threshold.
//!
//! CUDA C writes `#pragma unroll` over a loop with a compile-time trip count
//! and nvcc copies the body that many times. Rust has no such pragma: LLVM
//! fully unrolls a constant-count loop only while the copies stay under its
//! size threshold. Past it the loop stays a loop, and a per-thread array
//! that the loop indexes (`let mut v = [0.0f32; W]; ... v[k]`) cannot live
//! in registers, because a register has no address to index: LLVM leaves it
//! in a `.local` stack array (a `__local_depot` in the PTX), and ptxas
//! either promotes it back, with extra registers and moves, or spills it to
//! local memory. [`unrolled`] makes the copies itself, each with its index
//! a constant, so every `v[k]` is a fixed element LLVM keeps in a register.
//! The copy helpers are `#[inline(always)]`; the body is a closure LLVM
//! inlines by its own heuristics, so what guarantees the result is the PTX
//! test named below, not this module.
//!
//! Measured on the H200: the fusion lesson's `chain_fused_wide_8` and
//! `_16` kept their arrays in a `__local_depot` and ran 14.5% and 7.2%
//! slower than their CUDA C twins (book run of 2026-12-01,
//! `docs/results/h200-2026-12-01-book/fusion-compare.jsonl`). Unrolled, and
//! with predicated guards (`memory::load_readonly_if`, `store_if`), `_16`
//! ran faster than its twin and `_8` 5.5% slower
//! (`docs/results/h200-2026-12-01-parity/fusion-compare.jsonl`); unrolling
//! without the predicated guards was not enough. The guard is
//! `ptx_has_no_local_depot` in `tests/cpu_roofline.rs`.

// ANCHOR: unrolled
/// Calls `body(0)`, `body(1)`, ..., `body(N - 1)` in order, as `N` inlined
/// copies of `body` with the index a constant in each: what `#pragma
/// unroll` does to `for (int k = 0; k < N; ++k)` in CUDA C.
///
/// `N` is at most 127 (a compile-time error above, reported when the
/// function is instantiated, so by a build, not by `cargo check`); N = 0
/// calls nothing. The copies are made
/// by the binary digits of `N` (64, 32, ..., 1), so any `N` in range costs
/// no more code than the `N` bodies themselves. Use it where the index
/// selects an element of a per-thread array, or where the trip count is
/// small and fixed and the body short; a long run-time loop is better left
/// to LLVM.
#[inline(always)]
pub fn unrolled<const N: usize>(mut body: impl FnMut(usize)) {
    const {
        assert!(
            N < 128,
            "unrolled::<N> copies the body N times; N must be below 128"
        )
    };
    let mut base = 0;
    if N & 64 != 0 {
        copies64(&mut body, base);
        base += 64;
    }
    if N & 32 != 0 {
        copies32(&mut body, base);
        base += 32;
    }
    if N & 16 != 0 {
        copies16(&mut body, base);
        base += 16;
    }
    if N & 8 != 0 {
        copies8(&mut body, base);
        base += 8;
    }
    if N & 4 != 0 {
        copies4(&mut body, base);
        base += 4;
    }
    if N & 2 != 0 {
        copies2(&mut body, base);
        base += 2;
    }
    if N & 1 != 0 {
        body(base);
    }
}
// ANCHOR_END: unrolled

/// Each `copiesP` calls `body(base)`, ..., `body(base + P - 1)` as two
/// inlined copies of the level below: no loop and no recursion, so the
/// always-inliner leaves `P` bodies with constant indices.
#[inline(always)]
fn copies2(body: &mut impl FnMut(usize), base: usize) {
    body(base);
    body(base + 1);
}

#[inline(always)]
fn copies4(body: &mut impl FnMut(usize), base: usize) {
    copies2(body, base);
    copies2(body, base + 2);
}

#[inline(always)]
fn copies8(body: &mut impl FnMut(usize), base: usize) {
    copies4(body, base);
    copies4(body, base + 4);
}

#[inline(always)]
fn copies16(body: &mut impl FnMut(usize), base: usize) {
    copies8(body, base);
    copies8(body, base + 8);
}

#[inline(always)]
fn copies32(body: &mut impl FnMut(usize), base: usize) {
    copies16(body, base);
    copies16(body, base + 16);
}

#[inline(always)]
fn copies64(body: &mut impl FnMut(usize), base: usize) {
    copies32(body, base);
    copies32(body, base + 32);
}
