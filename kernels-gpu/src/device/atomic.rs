//! Atomics and sleeping at device (`.gpu`) scope, and a reusable row
//! barrier built from them. No separate fence is needed: each access here
//! carries its own ordering (acquire, release, acquire-release, relaxed).
//!
//! Why inline PTX and not `core::sync::atomic`: with this LLVM a Rust
//! `fetch_add` compiles to a relaxed `atom.global.add.u32` whatever ordering
//! it names, and atomic loads, stores and fences come out at system scope
//! (`.sys`). Blocks of one kernel synchronise at GPU scope, so every
//! operation here says its ordering and scope itself:
//! `atom.acq_rel.gpu`, `ld.acquire.gpu`, `st.release.gpu`, `ld.relaxed.gpu`,
//! `st.relaxed.gpu`. These need PTX ISA 6.0 and sm_70; `nanosleep` needs ISA
//! 6.3 and sm_70: the default target (sm_75, ISA 6.3) has them all.
//! `tests/cpu_softmax.rs` checks the PTX still spells each one.
//!
//! Every function takes a generic pointer that must point into global
//! memory (the `.global` in each instruction).

// ANCHOR: fetch_add_acq_rel_gpu
/// `atomicAdd` with acquire-release ordering at GPU scope: adds `v` to `*p`
/// and returns the old value (`atom.acq_rel.gpu.global.add.u32`).
///
/// # Safety
/// `p` is a valid, 4-byte-aligned address in global memory.
#[inline(always)]
pub unsafe fn fetch_add_acq_rel_gpu(p: *mut u32, v: u32) -> u32 {
    let old: u32;
    // SAFETY: the caller guarantees `p`; the asm reads and writes only *p
    // (not `nomem`, so the compiler keeps memory accesses on their side).
    unsafe {
        core::arch::asm!("atom.acq_rel.gpu.global.add.u32 {old}, [{p}], {v};", old = out(reg32) old, p = in(reg64) p, v = in(reg32) v, options(nostack))
    };
    old
}
// ANCHOR_END: fetch_add_acq_rel_gpu

// ANCHOR: load_acquire_gpu
/// A load with acquire ordering at GPU scope (`ld.acquire.gpu.global.u32`):
/// writes another block made before a release that this load observes are
/// visible to this thread after it.
///
/// # Safety
/// As [`fetch_add_acq_rel_gpu`].
#[inline(always)]
pub unsafe fn load_acquire_gpu(p: *const u32) -> u32 {
    let v: u32;
    // SAFETY: as above; reads *p only.
    unsafe {
        core::arch::asm!("ld.acquire.gpu.global.u32 {v}, [{p}];", v = out(reg32) v, p = in(reg64) p, options(nostack))
    };
    v
}
// ANCHOR_END: load_acquire_gpu

/// A relaxed atomic load at GPU scope (`ld.relaxed.gpu.global.u32`): no
/// ordering, but never torn and never served from a stale register copy.
///
/// # Safety
/// As [`fetch_add_acq_rel_gpu`].
#[inline(always)]
pub unsafe fn load_relaxed_gpu(p: *const u32) -> u32 {
    let v: u32;
    // SAFETY: as above; reads *p only.
    unsafe {
        core::arch::asm!("ld.relaxed.gpu.global.u32 {v}, [{p}];", v = out(reg32) v, p = in(reg64) p, options(nostack))
    };
    v
}

// ANCHOR: store_release_gpu
/// A store with release ordering at GPU scope (`st.release.gpu.global.u32`):
/// this thread's earlier writes are visible to any thread that acquires
/// this value.
///
/// # Safety
/// As [`fetch_add_acq_rel_gpu`].
#[inline(always)]
pub unsafe fn store_release_gpu(p: *mut u32, v: u32) {
    // SAFETY: as above; writes *p only.
    unsafe {
        core::arch::asm!("st.release.gpu.global.u32 [{p}], {v};", p = in(reg64) p, v = in(reg32) v, options(nostack))
    };
}
// ANCHOR_END: store_release_gpu

/// A relaxed atomic store at GPU scope (`st.relaxed.gpu.global.u32`).
///
/// # Safety
/// As [`fetch_add_acq_rel_gpu`].
#[inline(always)]
pub unsafe fn store_relaxed_gpu(p: *mut u32, v: u32) {
    // SAFETY: as above; writes *p only.
    unsafe {
        core::arch::asm!("st.relaxed.gpu.global.u32 [{p}], {v};", p = in(reg64) p, v = in(reg32) v, options(nostack))
    };
}

// ANCHOR: nanosleep
/// `__nanosleep(ns)`: suspends the thread for about `ns` nanoseconds (the
/// hardware picks a duration in [0, 2 x ns]), so a spinning thread leaves
/// its SM's issue slots to warps with work.
#[inline(always)]
pub fn nanosleep(ns: u32) {
    // SAFETY: sleeping has no preconditions and touches no memory.
    unsafe { core::arch::asm!("nanosleep.u32 {ns};", ns = in(reg32) ns, options(nomem, nostack)) };
}
// ANCHOR_END: nanosleep

// ANCHOR: row_barrier
/// Waits until all `participants` blocks that share this barrier slot have
/// arrived: a device-scope release/acquire barrier for a subset of a
/// grid's blocks (the blocks that work on one row).
///
/// How: `bar.sync` so the whole block has finished its writes; thread 0
/// reads the slot's epoch, then adds 1 to its arrival count with
/// acquire-release ordering. The block that brings the count to
/// `participants` is last: it resets the count to 0 and publishes
/// `epoch + 1` with a release store. Every other block's thread 0 spins on
/// an acquire load of the epoch (sleeping between tries) until it moves.
/// A second `bar.sync` lets the rest of the block through. The release
/// chain (each arrival's release, the last arriver's acquire, its release of
/// the epoch, the waiters' acquire of it, then `bar.sync`) makes every
/// global write any participant made before the barrier visible to every
/// thread of every participant after it.
///
/// Reuse: the count returns to 0 and the epoch only grows (wrapping), so a
/// slot can serve any number of barriers without the host resetting it:
/// across launches and graph replays (kernel boundaries order the uses),
/// and within a launch when the same `participants` blocks use it again (a
/// block reads the epoch before it arrives, and the epoch cannot move
/// until every participant, that block included, has arrived; the reset
/// of the count is ordered before the release that lets the others go on).
/// Zero both arrays once when they are allocated; a launch that dies inside
/// the barrier leaves them dirty (its context is lost anyway).
///
/// # Safety
/// `arrivals` and `epochs` are valid global addresses of this slot's two
/// counters. Exactly `participants` blocks call it for this slot, all of
/// them resident at once (a cooperative launch whose admission checked the
/// occupancy), and every thread of each block reaches it; otherwise it
/// never returns.
#[inline(always)]
pub unsafe fn row_barrier(arrivals: *mut u32, epochs: *mut u32, participants: u32) {
    crate::device::thread::sync_threads();
    if crate::device::thread::thread_idx_x() == 0 {
        // SAFETY: the caller guarantees both addresses.
        unsafe {
            let before = load_relaxed_gpu(epochs);
            let prior = fetch_add_acq_rel_gpu(arrivals, 1);
            if prior == participants - 1 {
                store_relaxed_gpu(arrivals, 0);
                store_release_gpu(epochs, before.wrapping_add(1));
            } else {
                while load_acquire_gpu(epochs) == before {
                    nanosleep(32);
                }
            }
        }
    }
    crate::device::thread::sync_threads();
}
// ANCHOR_END: row_barrier
