//! The harness lesson (chapter 19.4): the kernel the benchmark harness
//! times, the wrong ways and the right way. It is a plain vector add on
//! purpose: the lesson is about the stopwatch, not the kernel.
//!
//! `harness_add` is launched by this lesson only, so its first launch in a
//! `lab harness` process really is the kernel's first call (the cold one the
//! lesson times once).

/// Threads per block: 8 warps.
pub const THREADS_PER_BLOCK: u32 = 256;

/// The seed's workload: a vector add over 2,000,000 floats (8 MB a buffer,
/// which fits in an H200's 60 MiB L2).
pub const SEED_ELEMS: usize = 2_000_000;

/// The large workload starts from 16 Mi floats (64 MiB a buffer); the host
/// doubles it until a buffer is at least 4x the GPU's L2, so the add
/// streams from DRAM.
pub const SEED_LARGE_ELEMS: usize = 1 << 24;

/// The correctness size besides the two timed ones: odd, so no block size
/// divides it and the bounds guard fires.
pub const CHECK_ELEMS: usize = 1_048_576 + 611;

/// The seed's harness: 5 uncounted warm-up runs, then 20 timed runs.
pub const SEED_WARMUPS: u32 = 5;
/// The seed's harness: runs between the two synchronisations.
pub const SEED_RUNS: u32 = 20;

const _: () = assert!(CHECK_ELEMS % 2 == 1, "odd: the bounds guard must fire");
const _: () = assert!(
    SEED_ELEMS < SEED_LARGE_ELEMS && CHECK_ELEMS < SEED_LARGE_ELEMS,
    "every run fits the large buffers"
);

/// The kernel, compiled only for the GPU.
#[cfg(target_arch = "nvptx64")]
mod kernels {
    use crate::device::memory::load_readonly;
    use crate::device::thread::global_index_x;

    // ANCHOR: harness_add
    /// `out[i] = a[i] + b[i]` for i < n, one element per thread.
    ///
    /// # Memory
    /// Three coalesced streams through 4-byte accesses, the inputs on the
    /// read-only path; 12 bytes per element.
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x >= n`.
    ///
    /// # Safety
    /// `a`, `b` and `out` hold `n` floats; `out` overlaps neither input.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn harness_add(
        a: *const f32,
        b: *const f32,
        out: *mut f32,
        n: u64,
    ) {
        let i = global_index_x();
        if i < n {
            let i = i as usize;
            // SAFETY: i < n, and nothing writes a or b during the kernel.
            unsafe { *out.add(i) = load_readonly(a.add(i)) + load_readonly(b.add(i)) };
        }
    }
    // ANCHOR_END: harness_add
}
