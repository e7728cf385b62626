//! Tensor cores and asynchronous copies: `mma.sync`, `ldmatrix` and
//! `cp.async`, each one PTX instruction in an `asm!`.
//! - Compute capability 8.0 and up: bf16 m16n8k16 and `cp.async`, for the
//!   kernels of the sm_80 module (`--cfg lab_tensor_cores`, built with
//!   `-Ctarget-cpu=sm_80`: PTX ISA 7.0, where these instructions exist).
//! - Compute capability 7.5 (a T4) and up: `ldmatrix` and f16 m16n8k8,
//!   for the sm_75 module's FP16 kernel (`--cfg lab_fp16_mma`, which the
//!   build sets with PTX ISA 6.5, where they first exist).
//!
//! Only kernels compiled under those cfgs call these functions, so no
//! module emits an instruction its target lacks.
//!
//! Shapes and fragment layouts are the PTX ISA's ("Matrix Fragments for
//! mma.m16n8k16 with floating point type", "ldmatrix"): in a warp, lane
//! `l` has `group = l / 4` and `pair = l % 4`.
//! - A (16 x 16, row-major): 4 registers of two bf16 each; register `r`
//!   holds row `group + 8 (r % 2)`, columns `2 pair + 8 (r / 2)` and the
//!   next.
//! - B (16 x 8, "col"): 2 registers; register `r` holds rows (k)
//!   `2 pair + 8 r` and the next, column (n) `group`.
//! - C, D (16 x 8, f32): 4 registers; `r` holds row `group + 8 (r / 2)`,
//!   column `2 pair + r % 2`.
//!
//! `tests/cpu_gemm.rs` checks that each instruction appears in the sm_80
//! PTX (and the f16 ones in the sm_75 PTX) as written here.

// ANCHOR: mma_bf16
/// `D = A * B + C` on the tensor cores for one warp: A 16 x 16 and B 16 x 8
/// in bf16, C and D 16 x 8 in f32 (`mma.sync.aligned.m16n8k16.row.col.f32
/// .bf16.bf16.f32`), 4096 FLOP. Every lane of the warp must call it with its
/// own fragments (layouts in the module's docs). A safe function, as
/// [`shfl_xor`](crate::device::warp::shfl_xor) is: it touches registers
/// only, and the crate treats a converged warp as part of each kernel's
/// launch assumption, not as an `unsafe` precondition.
#[inline(always)]
pub fn mma_bf16_m16n8k16(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
    let d: [f32; 4];
    let (d0, d1, d2, d3): (f32, f32, f32, f32);
    // SAFETY: a register-only instruction; the caller's warp is converged
    // (`.aligned`), which every kernel here guarantees by calling it from
    // warp-uniform control flow.
    unsafe {
        core::arch::asm!(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, {{{c0}, {c1}, {c2}, {c3}}};",
            d0 = out(reg32) d0, d1 = out(reg32) d1, d2 = out(reg32) d2, d3 = out(reg32) d3,
            a0 = in(reg32) a[0], a1 = in(reg32) a[1], a2 = in(reg32) a[2], a3 = in(reg32) a[3],
            b0 = in(reg32) b[0], b1 = in(reg32) b[1],
            c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], c3 = in(reg32) c[3],
            options(pure, nomem, nostack, preserves_flags),
        )
    };
    d = [d0, d1, d2, d3];
    d
}
// ANCHOR_END: mma_bf16

// ANCHOR: mma_f16
/// `D = A * B + C` on the tensor cores for one warp: A 16 x 8 and B 8 x 8
/// in f16, C and D 16 x 8 in f32 (`mma.sync.aligned.m16n8k8.row.col.f32
/// .f16.f16.f32`), 2048 FLOP: the shape compute capability 7.5 has (PTX
/// ISA 6.5 on sm_75). A is 2 registers (register `r`: row `group + 8 r`,
/// columns `2 pair` and the next), B one (rows `2 pair` and the next,
/// column `group`), C and D as for m16n8k16 (the module's docs). Safe for
/// the reason [`mma_bf16_m16n8k16`] is.
#[inline(always)]
pub fn mma_f16_m16n8k8(a: [u32; 2], b: u32, c: [f32; 4]) -> [f32; 4] {
    let (d0, d1, d2, d3): (f32, f32, f32, f32);
    // SAFETY: a register-only instruction; the caller's warp is converged.
    unsafe {
        core::arch::asm!(
            "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}}}, {{{b0}}}, {{{c0}, {c1}, {c2}, {c3}}};",
            d0 = out(reg32) d0, d1 = out(reg32) d1, d2 = out(reg32) d2, d3 = out(reg32) d3,
            a0 = in(reg32) a[0], a1 = in(reg32) a[1],
            b0 = in(reg32) b,
            c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], c3 = in(reg32) c[3],
            options(pure, nomem, nostack, preserves_flags),
        )
    };
    [d0, d1, d2, d3]
}

/// A 16 x 16 by 16 x 8 step in f16 with f32 sums, taking m16n8k16's
/// fragments (the layouts `ldmatrix` gives [`mma_bf16_m16n8k16`]) and
/// issuing two [`mma_f16_m16n8k8`]: k 0-7 from A registers 0 and 1 and B
/// register 0, then k 8-15 from A registers 2 and 3 and B register 1. In
/// the PTX ISA's layouts m16n8k16's A registers 0-1 (and 2-3) are
/// m16n8k8's for the first (and second) 8 of k, and its B registers 0 and
/// 1 likewise, so a kernel written for m16n8k16 runs on a Turing GPU with
/// only this call changed. The two halves' products are summed one `mma`
/// after the other, so the result may round differently from one
/// m16n8k16's.
#[inline(always)]
pub fn mma_f16_m16n8k16_as_two_k8(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
    let low = mma_f16_m16n8k8([a[0], a[1]], b[0], c);
    mma_f16_m16n8k8([a[2], a[3]], b[1], low)
}
// ANCHOR_END: mma_f16

// ANCHOR: ldmatrix
/// Four 8 x 8 matrices of 16-bit elements from shared memory into one
/// register each (`ldmatrix.sync.aligned.m8n8.x4.shared.b16`): lane `l`
/// gives the 32-bit shared address of row `l % 8` of matrix `l / 8`, and
/// receives, in register `j`, row `l / 4`, elements `2 (l % 4)` and the
/// next, of matrix `j`. With the matrices at rows 0-7 and 8-15 of columns
/// 0-7, then of columns 8-15, of a row-major 16 x 16 tile, the four
/// registers are an `mma` A fragment.
///
/// # Safety
/// Every lane's address is a 16-byte-aligned row of 16 bytes inside a
/// shared array, written before a barrier; the warp is converged.
#[inline(always)]
pub unsafe fn ldmatrix_x4(addr: u32) -> [u32; 4] {
    let (r0, r1, r2, r3): (u32, u32, u32, u32);
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{{r0}, {r1}, {r2}, {r3}}}, [{a}];",
            a = in(reg32) addr,
            r0 = out(reg32) r0, r1 = out(reg32) r1, r2 = out(reg32) r2, r3 = out(reg32) r3,
            options(readonly, nostack, preserves_flags),
        )
    };
    [r0, r1, r2, r3]
}

/// Two 8 x 8 matrices, each transposed on the way (`ldmatrix.sync.aligned
/// .m8n8.x2.trans.shared.b16`): lanes 0-15 give the addresses of rows 0-7
/// of matrix 0 and of matrix 1, and lane `l` receives, in register `j`,
/// elements at rows `2 (l % 4)` and the next, column `l / 4`, of matrix
/// `j`. From a row-major `[k][n]` tile (rows k to k + 15 at one column
/// offset) this is an `mma` B fragment.
///
/// # Safety
/// As [`ldmatrix_x4`], for lanes 0-15's addresses (lanes 16-31 pass any
/// address of the same array; the instruction ignores them).
#[inline(always)]
pub unsafe fn ldmatrix_x2_trans(addr: u32) -> [u32; 2] {
    let (r0, r1): (u32, u32);
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {{{r0}, {r1}}}, [{a}];",
            a = in(reg32) addr,
            r0 = out(reg32) r0, r1 = out(reg32) r1,
            options(readonly, nostack, preserves_flags),
        )
    };
    [r0, r1]
}

/// Four 8 x 8 matrices, each transposed on the way (`ldmatrix.sync.aligned
/// .m8n8.x4.trans.shared.b16`): lane `l` gives the address of row `l % 8`
/// of matrix `l / 8`, and receives, in register `j`, elements at rows
/// `2 (l % 4)` and the next, column `l / 4`, of matrix `j`. From a
/// row-major `[k][n]` tile, with matrices 0 and 1 at rows k to k + 15 of
/// columns c to c + 7 and matrices 2 and 3 at the same rows of columns
/// c + 8 to c + 15, registers 0-1 and 2-3 are the `mma` B fragments of two
/// adjacent 8-column tiles: half the instructions of two
/// [`ldmatrix_x2_trans`].
///
/// # Safety
/// As [`ldmatrix_x4`].
#[inline(always)]
pub unsafe fn ldmatrix_x4_trans(addr: u32) -> [u32; 4] {
    let (r0, r1, r2, r3): (u32, u32, u32, u32);
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{{r0}, {r1}, {r2}, {r3}}}, [{a}];",
            a = in(reg32) addr,
            r0 = out(reg32) r0, r1 = out(reg32) r1, r2 = out(reg32) r2, r3 = out(reg32) r3,
            options(readonly, nostack, preserves_flags),
        )
    };
    [r0, r1, r2, r3]
}
// ANCHOR_END: ldmatrix

// ANCHOR: cp_async
/// Copies 16 bytes from global to shared memory without passing through
/// registers (`cp.async.cg.shared.global`, cached in L2 only): of the 16
/// bytes, the first `src_bytes` (16 or 0) come from `src` and the rest are
/// zeros, so a chunk outside a matrix becomes zeros with no load. The copy
/// completes asynchronously: [`cp_async_commit`] closes a group of copies
/// and [`cp_async_wait`] waits for all but the newest N groups.
///
/// # Safety
/// `dst` is a 16-byte-aligned shared address with 16 bytes of its array
/// after it; where `src_bytes` is 16, `src` is a 16-byte-aligned global
/// address of 16 readable bytes nothing writes during the kernel. Nothing
/// reads `dst` before a wait that covers this copy and a barrier.
#[inline(always)]
pub unsafe fn cp_async_16(dst: u32, src: *const u8, src_bytes: u32) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "cp.async.cg.shared.global [{d}], [{s}], 16, {n};",
            d = in(reg32) dst,
            s = in(reg64) src,
            n = in(reg32) src_bytes,
            options(nostack, preserves_flags),
        )
    };
}

/// [`cp_async_16`] of a chunk known to be inside its matrix: the form with
/// no source size (`cp.async.cg.shared.global [dst], [src], 16`), so no
/// register, select or comparison per copy. In an H200 trial of the
/// swizzled GEMM, the zero-filling form with its per-copy guards took 15 to
/// 23% longer at 4096^3 and 8 to 15% at 8192^3, round by round, where every
/// chunk was inside (docs/results/h200-2026-12-02-mma-explore, `log2.txt`).
///
/// # Safety
/// As [`cp_async_16`] with `src_bytes` 16.
#[inline(always)]
pub unsafe fn cp_async_16_whole(dst: u32, src: *const u8) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "cp.async.cg.shared.global [{d}], [{s}], 16;",
            d = in(reg32) dst,
            s = in(reg64) src,
            options(nostack, preserves_flags),
        )
    };
}

/// Closes the group of this thread's `cp.async` copies issued since the
/// last commit (`cp.async.commit_group`); an empty group is allowed.
#[inline(always)]
pub fn cp_async_commit() {
    // SAFETY: bookkeeping of the thread's own copies; touches no memory.
    unsafe { core::arch::asm!("cp.async.commit_group;", options(nostack, preserves_flags)) };
}

/// Waits until at most `N` of this thread's committed groups are still in
/// flight (`cp.async.wait_group N`). Other threads' copies need a barrier
/// after it to be visible.
#[inline(always)]
pub fn cp_async_wait<const N: u32>() {
    // SAFETY: waits on the thread's own copies; LLVM must not move memory
    // accesses across it (no `nomem`).
    unsafe {
        core::arch::asm!("cp.async.wait_group {n};", n = const N, options(nostack, preserves_flags))
    };
}
// ANCHOR_END: cp_async

// ANCHOR: cp_async_pipeline
/// The refill of one step of [`cp_async_pipeline`]: the copy of a later
/// step into the stage an earlier step used, and its commit, issued once.
/// A step's `compute` may issue it where it wants ([`Refill::issue`]), or
/// in parts spread through its work ([`Refill::issue_part`]); the pipeline
/// issues it after `compute` where `compute` did not. It is
/// per thread: each thread commits one group a step either way, so a call
/// some threads skip still keeps the counts (then `load` must hold no
/// barrier or warp-collective, as `cp.async` copies do not); called
/// unconditionally, the flag folds away and `load` is inlined once.
pub struct Refill<L: FnMut(u32, u32)> {
    load: L,
    /// (stage, step) to copy, or `None` past the last step.
    next: Option<(u32, u32)>,
    issued: bool,
}

impl<L: FnMut(u32, u32)> Refill<L> {
    /// Queues the refill's copy (where there is one) and commits its group
    /// (an empty one past the last step), the first time it is called in a
    /// step; a no-op after that.
    #[inline(always)]
    pub fn issue(&mut self) {
        if !self.issued {
            if let Some((stage, step)) = self.next {
                (self.load)(stage, step);
            }
            cp_async_commit();
            self.issued = true;
        }
    }

    /// Queues part of the refill's copy, `part(stage, step)` (where there
    /// is a step to copy), and with `last` commits the group; a no-op once
    /// the refill is issued. The parts together must copy what `load`
    /// copies, and the call with `last` must be reached on every path of
    /// the step's `compute`: without it the pipeline's own `issue` after
    /// `compute` queues the whole copy again (harmless, the same bytes,
    /// but twice the copies). Spreading the copies through a step's work
    /// keeps them from filling the memory instruction queue together with
    /// its `ldmatrix` (`gemm_bf16_pipelined`, the book chapter "Fast Rust
    /// kernels").
    #[inline(always)]
    pub fn issue_part(&mut self, part: impl FnOnce(u32, u32), last: bool) {
        if !self.issued {
            if let Some((stage, step)) = self.next {
                part(stage, step);
            }
            if last {
                cp_async_commit();
                self.issued = true;
            }
        }
    }
}

/// The skeleton of a `STAGES`-stage `cp.async` pipeline over `steps` steps,
/// for every thread of a block. The prologue queues the copies of the first
/// `STAGES - AHEAD` steps, one group each. Step `s` then:
/// - waits for its own group (`cp_async_wait::<IN_FLIGHT>`, leaving the
///   `IN_FLIGHT = STAGES - AHEAD - 1` newer ones in flight);
/// - calls `publish` (a proxy fence where the tiles are read through the
///   async proxy, as `wgmma` reads them; nothing otherwise);
/// - passes the block barrier;
/// - calls `compute(stage, s, refill)` on its own stage, where `refill`
///   ([`Refill`]) queues the copy of step `s + STAGES - AHEAD` by
///   `load(stage, step)`, into the stage step `s - AHEAD` used, and commits
///   it, when `compute` calls [`Refill::issue`] (first thing, or after some
///   of its own work) or the last [`Refill::issue_part`], or after
///   `compute` if it does neither.
///
/// Every thread commits one group a step, empty past the last step, so the
/// waits' counts hold to the end; after the last step all copies are
/// waited for. `AHEAD` is how many steps back the refilled stage was read:
/// 1 where a step's reads of its stage are done before the next barrier
/// (`ldmatrix`), 2 where they may still be in flight across it (a `wgmma`
/// group left in flight for one step). The refill may go anywhere in the
/// step after its barrier: the stage it writes is one no warp reads after
/// that barrier.
///
/// `publish` and `compute` are called at one place each and `load` at the
/// prologue and the refill (whose flag folds away where `compute` issues it
/// unconditionally, or not at all; a `compute` that issues it in parts
/// calls its own part copies instead), so LLVM inlines them; the PTX of the
/// kernels built on it is that of the loops written out.
#[inline(always)]
pub fn cp_async_pipeline<
    const STAGES: u32,
    const IN_FLIGHT: u32,
    const AHEAD: u32,
    L: FnMut(u32, u32),
>(
    steps: u32,
    mut load: L,
    mut publish: impl FnMut(),
    mut compute: impl FnMut(u32, u32, &mut Refill<&mut L>),
) {
    const {
        assert!(
            AHEAD >= 1 && STAGES > AHEAD,
            "a stage is refilled AHEAD steps after it was used"
        );
        assert!(
            IN_FLIGHT + AHEAD + 1 == STAGES,
            "a step waits for its own copy, leaving the newer ones in flight"
        );
    };
    let mut s = 0;
    while s + AHEAD < STAGES {
        if s < steps {
            load(s, s);
        }
        cp_async_commit();
        s += 1;
    }
    let mut step = 0;
    while step < steps {
        cp_async_wait::<IN_FLIGHT>();
        publish();
        crate::device::thread::sync_threads();
        let next = step + STAGES - AHEAD;
        let mut refill = Refill {
            load: &mut load,
            next: (next < steps).then_some((next % STAGES, next)),
            issued: false,
        };
        compute(step % STAGES, step, &mut refill);
        refill.issue();
        step += 1;
    }
    cp_async_wait::<0>();
}
// ANCHOR_END: cp_async_pipeline
