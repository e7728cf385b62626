//! Hopper's tensor memory accelerator and the shared-memory barriers that
//! count its bytes (compute capability 9.0, `sm_90a` module only, `--cfg
//! lab_hopper`): `cp.async.bulk.tensor` copies a 2D box of a matrix from
//! global to shared memory, described by a tensor map the host encodes
//! (`cuTensorMapEncodeTiled`), and signals an `mbarrier` in shared memory
//! when its bytes have landed. One thread issues a whole tile; no thread
//! computes an address of it, and the copy writes through the async proxy,
//! which `wgmma` reads through, so no proxy fence is needed between them.
//!
//! The PTX ISA's sections: "Data Movement and Conversion Instructions:
//! cp.async.bulk.tensor", "Parallel Synchronization and Communication
//! Instructions: mbarrier". `tests/cpu_gemm.rs` checks that each instruction
//! appears in the sm_90a PTX as written here.

/// `mbarrier.init.shared::cta.b64 [bar], count`: a barrier at the 8-byte
/// aligned shared address `bar` whose phase completes after `count`
/// arrivals and the transaction bytes they announce.
///
/// # Safety
/// One thread initialises each barrier, before any other use of it, and a
/// [`fence_mbarrier_init`] and a block barrier follow before any thread
/// waits on it or a copy signals it.
#[inline(always)]
pub unsafe fn mbarrier_init(bar: u32, count: u32) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "mbarrier.init.shared::cta.b64 [{b}], {c};",
            b = in(reg32) bar,
            c = in(reg32) count,
            options(nostack, preserves_flags)
        )
    };
}

/// `fence.mbarrier_init.release.cluster`: makes this thread's
/// `mbarrier.init`s visible to the other threads and to the async proxy
/// (the copies that will signal them).
#[inline(always)]
pub fn fence_mbarrier_init() {
    // SAFETY: a fence; it touches no memory of the program's.
    unsafe {
        core::arch::asm!(
            "fence.mbarrier_init.release.cluster;",
            options(nostack, preserves_flags)
        )
    };
}

/// `mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], bytes`: this
/// thread's arrival on `bar`, announcing `bytes` of copies that will
/// complete on it; the phase completes once the arrivals are in and those
/// bytes have landed.
///
/// # Safety
/// `bar` is an initialised barrier; the copies that follow signal it with
/// exactly `bytes` bytes.
#[inline(always)]
pub unsafe fn mbarrier_arrive_expect_tx(bar: u32, bytes: u32) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [{b}], {n};",
            b = in(reg32) bar,
            n = in(reg32) bytes,
            options(nostack, preserves_flags)
        )
    };
}

/// Waits until the phase of `bar` with parity `parity` has completed
/// (`mbarrier.try_wait.parity.shared::cta.b64`, retried until it says so):
/// a barrier's first phase has parity 0, its next 1, and so on. Once it
/// returns, the bytes of the copies that phase counted are visible to this
/// thread, and to `wgmma` issued after it. After `timeout_ns` by
/// `%globaltimer` it gives up and traps: a phase that has not completed
/// by then never will (its bytes were announced wrong, or a copy faulted),
/// and the launch fails with an error that names the kernel instead of
/// hanging the process.
///
/// # Safety
/// `bar` is an initialised barrier.
#[inline(always)]
pub unsafe fn mbarrier_wait_parity(bar: u32, parity: u32, timeout_ns: u64) {
    let start = global_timer_ns();
    loop {
        let done: u32;
        // SAFETY: the caller's contract. One template line, so the braces
        // of the predicate's scope never start a line of the PTX. Not
        // `nomem`: the tile's reads must stay after it.
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [{b}], {ph}; selp.u32 {d}, 1, 0, p; }}",
                b = in(reg32) bar,
                ph = in(reg32) parity,
                d = out(reg32) done,
                options(nostack, preserves_flags)
            )
        };
        if done != 0 {
            return;
        }
        if global_timer_ns().wrapping_sub(start) > timeout_ns {
            // SAFETY: ends this thread's kernel; the host sees the launch
            // fail.
            unsafe { core::arch::nvptx::trap() };
        }
    }
}

/// The GPU's global nanosecond timer (`%globaltimer`).
#[inline(always)]
fn global_timer_ns() -> u64 {
    let t: u64;
    // SAFETY: reads a special register. Not `pure`: each read is a new time.
    unsafe {
        core::arch::asm!("mov.u64 {t}, %globaltimer;", t = out(reg64) t, options(nomem, nostack, preserves_flags))
    };
    t
}

/// `fence.proxy.tensormap::generic.acquire.sys [map], 128`: makes the
/// tensor map at the global address `map`, written by a copy from the host
/// before the launch (the generic proxy), visible to this thread's copies,
/// which read it through the tensor-map proxy. Issued once per map by the
/// thread that copies, before its first copy (CUDA C++ Programming Guide,
/// "Using TMA to transfer multi-dimensional arrays": a tensor map in global
/// memory). PTX ISA 8.3.
///
/// # Safety
/// `map` is the global address of a 128-byte tensor map.
#[inline(always)]
pub unsafe fn fence_tensormap_acquire(map: *const u8) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "fence.proxy.tensormap::generic.acquire.sys [{m}], 128;",
            m = in(reg64) map,
            options(nostack, preserves_flags)
        )
    };
}

// ANCHOR: tma_load_2d
/// Copies the 2D box at element coordinates (`x`, `y`) (`x` along the
/// matrix's contiguous dimension) of the tensor map at `tensor_map` to the
/// shared address `dst`, and completes its bytes on the barrier `bar`
/// (`cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes`).
/// Elements of the box outside the matrix are zeros. The box's size, the
/// element type and the swizzle `dst` is written in are the map's.
///
/// # Safety
/// `tensor_map` is the global address of a valid 128-byte tensor map
/// (64-byte aligned) that nothing writes during the kernel; `dst` is
/// aligned as the map's swizzle needs (1024 bytes for the 128-byte one),
/// with the box's bytes of shared memory after it that nothing reads until
/// `bar`'s phase completes; `bar`'s arrival announced these bytes.
#[inline(always)]
pub unsafe fn tma_load_2d(dst: u32, tensor_map: *const u8, x: i32, y: i32, bar: u32) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{d}], [{m}, {{{x}, {y}}}], [{b}];",
            d = in(reg32) dst,
            m = in(reg64) tensor_map,
            x = in(reg32) x,
            y = in(reg32) y,
            b = in(reg32) bar,
            options(nostack, preserves_flags)
        )
    };
}
// ANCHOR_END: tma_load_2d
