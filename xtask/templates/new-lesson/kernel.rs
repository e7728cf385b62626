//! The __name__ lesson: your own kernel, checked against a CPU reference,
//! timed and compared with its CUDA C twin from its first run.
//!
//! `cargo xtask new-lesson __name__` wrote this file as a starting point: a
//! saxpy, `out[i] = a * x[i] + y[i]`, the smallest kernel that reads two
//! streams, computes and writes a third. Replace it with your kernel; keep
//! its comment's three parts true (what it computes, how it touches memory,
//! the launch it assumes), and keep the CUDA C twin
//! (`host/src/__name__/__name__.cu`) and the CPU reference
//! (`host/src/__name__/mod.rs`) computing the same thing.
//!
//! The constants the host needs too (block size, sizes, the scalar `a`)
//! live here, once: this crate also builds for the host, where only they
//! exist.

/// Threads per block of every launch: 8 warps. The host's launch reads it
/// from here, and the CUDA C twin gets it as a `#define`.
pub const THREADS_PER_BLOCK: u32 = 256;

/// The scalar every launch passes as `a`. Times the inputs' multiples of
/// 1/64 it stays exact in f32, so the multiply and the add round to the same
/// bits whether a compiler contracts them into one FMA (NVRTC does, by
/// default) or not (rustc never does): Rust and CUDA C can agree bit for bit.
pub const A: f32 = 1.5;

/// Elements the timed run starts from: 16 Mi floats, 64 MiB a buffer. The
/// host doubles it until one buffer is at least 4x the GPU's L2, so the
/// kernel streams from DRAM rather than from the cache.
pub const SEED_ELEMS: usize = 1 << 24;

/// The correctness size: odd, so no block size divides it and the bounds
/// guard in the last block has threads to turn away.
pub const CHECK_ELEMS: usize = 1_048_576 + 611;

const _: () = assert!(CHECK_ELEMS % 2 == 1, "odd: the bounds guard must fire");
const _: () = assert!(
    CHECK_ELEMS < SEED_ELEMS,
    "the check runs in the timed buffers"
);

/// The kernel, compiled only for the GPU.
#[cfg(target_arch = "nvptx64")]
mod kernels {
    use crate::device::math::fma;
    use crate::device::memory::load_readonly;
    use crate::device::thread::global_index_x;

    // ANCHOR: __name__
    /// `out[i] = a * x[i] + y[i]` for `i < n`, one element per thread: one
    /// fused multiply-add, rounded once (the device layer's `fma`: rustc
    /// never fuses `a * x + y` on its own, and NVRTC contracts the twin's
    /// into the same instruction, so both sides give the same bits).
    ///
    /// # Memory
    /// Three coalesced streams: `x` and `y` read on the read-only path,
    /// `out` written; 12 bytes and 2 FLOP per element, nothing reused.
    ///
    /// # Launch assumption
    /// One thread per element: `grid_dim.x * block_dim.x >= n` (the host
    /// launches blocks of `THREADS_PER_BLOCK`).
    ///
    /// # Safety
    /// `x`, `y` and `out` hold `n` floats; `out` overlaps neither input.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn __name__(
        a: f32,
        x: *const f32,
        y: *const f32,
        out: *mut f32,
        n: u64,
    ) {
        let i = global_index_x();
        // The bounds guard: the last block reaches past n.
        if i < n {
            let i = i as usize;
            // SAFETY: i < n, each buffer holds n floats, and nothing writes
            // x or y while the kernel runs.
            unsafe { *out.add(i) = fma(a, load_readonly(x.add(i)), load_readonly(y.add(i))) };
        }
    }
    // ANCHOR_END: __name__
}
