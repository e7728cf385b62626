//! The specialize lesson (chapter 19.3): one dot-product device function
//! generic over its length `const N: usize`, exported once per N, beside a
//! kernel that takes N as an argument and loops over it at run time.
//!
//! Each `dot_specialized_N` entry is its own compiled body with the trip
//! count baked in: the loop is fully unrolled (no backward branch, exactly
//! N fused multiply-adds), and the bodies grow with N (the "code bloat"
//! the seed warns about). `dot_runtime` is one body for every N, with a
//! loop whose bound it reads from a parameter.
//!
//! Layout: `count` dots of length N, element k of dot v at `x[k * count +
//! v]` (structure of arrays), so for each k the 32 lanes of a warp read 32
//! consecutive floats.

/// Threads per block of every launch: 8 warps.
pub const THREADS_PER_BLOCK: u32 = 256;

/// Calls `$m!` with each specialized kernel's exported name and its length
/// (`dot_specialized_2 = 2, ...`): the seed's 2 and 4, and the 8 and 16 of
/// its code-bloat warning. The one list that the kernels,
/// [`SPECIALIZED_N`], [`SPECIALIZED_SYMBOLS`], the host's kernel ids and the
/// CUDA C twins are all made from.
///
/// The compile-time-cost measurement (`cargo xtask specialize-cost`) builds
/// this crate for nvptx64 with `--cfg lab_specialize_cost="1"`, `"4"` or
/// `"16"`: "1" and "16" swap in a list of that many instantiations (the
/// variants below); "4" is this list, the lesson's own, as is every build
/// without that cfg.
// ANCHOR: lengths
#[cfg(not(any(lab_specialize_cost = "1", lab_specialize_cost = "16")))]
#[macro_export]
macro_rules! specialized_lengths {
    ($m:ident) => {
        $m! {
            dot_specialized_2 = 2,
            dot_specialized_4 = 4,
            dot_specialized_8 = 8,
            dot_specialized_16 = 16,
        }
    };
}
// ANCHOR_END: lengths

/// Cost build with one instantiation: N = 16 only.
#[cfg(lab_specialize_cost = "1")]
#[macro_export]
macro_rules! specialized_lengths {
    ($m:ident) => {
        $m! { dot_specialized_16 = 16 }
    };
}

/// Cost build with sixteen instantiations: every N from 1 to 16.
#[cfg(lab_specialize_cost = "16")]
#[macro_export]
macro_rules! specialized_lengths {
    ($m:ident) => {
        $m! {
            dot_specialized_1 = 1, dot_specialized_2 = 2, dot_specialized_3 = 3,
            dot_specialized_4 = 4, dot_specialized_5 = 5, dot_specialized_6 = 6,
            dot_specialized_7 = 7, dot_specialized_8 = 8, dot_specialized_9 = 9,
            dot_specialized_10 = 10, dot_specialized_11 = 11, dot_specialized_12 = 12,
            dot_specialized_13 = 13, dot_specialized_14 = 14, dot_specialized_15 = 15,
            dot_specialized_16 = 16,
        }
    };
}

/// The lengths the specialized kernel is instantiated for.
pub const SPECIALIZED_N: &[usize] = specialized_lengths!(family_values);
/// The specialized kernels' exported symbols, in [`SPECIALIZED_N`] order.
pub const SPECIALIZED_SYMBOLS: &[&str] = specialized_lengths!(family_symbols);
/// The longest specialized length.
pub const MAX_SPECIALIZED_N: usize = SPECIALIZED_N[SPECIALIZED_N.len() - 1];

/// Bytes each input buffer (x and y) of the timed runs starts from: 64 MiB.
/// The host doubles it until a buffer is at least 4x the GPU's L2, so the
/// timed dots stream from DRAM; at length N the buffers hold
/// `bytes / 4 / N` dots.
pub const SEED_INPUT_BYTES: usize = 64 << 20;

/// Dots in the correctness runs: odd, so no block size divides it and the
/// bounds guard runs in the last block.
pub const CHECK_DOTS: usize = 65_536 + 611;

const _: () = assert!(CHECK_DOTS % 2 == 1, "odd: the bounds guard must fire");
const _: () = assert!(
    SEED_INPUT_BYTES.is_multiple_of(MAX_SPECIALIZED_N * size_of::<f32>()),
    "every N divides the timed buffers, at every doubling"
);
const _: () = assert!(
    CHECK_DOTS * MAX_SPECIALIZED_N <= SEED_INPUT_BYTES / size_of::<f32>(),
    "the check runs fit the timed buffers"
);

/// The kernels, compiled only for the GPU.
#[cfg(target_arch = "nvptx64")]
mod kernels {
    use crate::device::math::fma;
    use crate::device::memory::load_readonly;
    use crate::device::thread::global_index_x;

    // ANCHOR: dot_specialized
    /// `out[v] = sum over k < N of x[k count + v] * y[k count + v]`, summed
    /// in order k = 0, 1, ... with one fused multiply-add per term (what
    /// nvcc makes of `sum += a * b`), starting from +0.
    ///
    /// # Memory
    /// For each k the warp reads 32 consecutive floats of x and of y:
    /// coalesced. 8 N + 4 bytes per dot (N from each input, one result).
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x >= count`: one thread per dot.
    ///
    /// # Safety
    /// `x` and `y` hold `N * count` floats and `out` holds `count`; nothing
    /// writes `x` or `y` while the kernel runs.
    #[inline(always)]
    unsafe fn dot_specialized<const N: usize>(
        x: *const f32,
        y: *const f32,
        out: *mut f32,
        count: u64,
    ) {
        let v = global_index_x();
        if v < count {
            let mut sum = 0.0f32;
            // N is a constant: LLVM unrolls this completely (the PTX test
            // checks there is no loop left).
            for k in 0..N {
                let i = (k as u64 * count + v) as usize;
                // SAFETY: k < N and v < count, so i < N count.
                sum = unsafe { fma(load_readonly(x.add(i)), load_readonly(y.add(i)), sum) };
            }
            // SAFETY: v < count.
            unsafe { *out.add(v as usize) = sum };
        }
    }
    // ANCHOR_END: dot_specialized

    /// The same dot with its length `n` a kernel argument: one compiled
    /// body for every length, looping at run time.
    ///
    /// # Memory
    /// As `dot_specialized`: coalesced, 8 n + 4 bytes per dot.
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x >= count`: one thread per dot.
    ///
    /// # Safety
    /// `x` and `y` hold `n * count` floats and `out` holds `count`; nothing
    /// writes `x` or `y` while the kernel runs.
    // ANCHOR: dot_runtime
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn dot_runtime(
        x: *const f32,
        y: *const f32,
        out: *mut f32,
        count: u64,
        n: u32,
    ) {
        let v = global_index_x();
        if v < count {
            let mut sum = 0.0f32;
            // Two pointers stepping by `count`: the shape nvcc gives the C
            // twin's loop (an index recomputed per term costs a 64-bit
            // multiply-add per load pair here). wrapping_add: the step after
            // the last term points past the buffers and is never read.
            let (mut px, mut py) = (x.wrapping_add(v as usize), y.wrapping_add(v as usize));
            for _ in 0..n {
                // SAFETY: at term k, px and py are x and y + k count + v,
                // with k < n and v < count: inside the n count floats.
                sum = unsafe { fma(load_readonly(px), load_readonly(py), sum) };
                px = px.wrapping_add(count as usize);
                py = py.wrapping_add(count as usize);
            }
            // SAFETY: v < count.
            unsafe { *out.add(v as usize) = sum };
        }
    }
    // ANCHOR_END: dot_runtime

    // ANCHOR: exports
    /// Exports `dot_specialized::<N>` as `dot_specialized_N`.
    macro_rules! specialized_kernels {
        ($($name:ident = $n:literal),* $(,)?) => {$(
            /// `dot_specialized` with its length fixed at compile time.
            ///
            /// # Safety
            /// As `dot_specialized` at this N.
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $name(x: *const f32, y: *const f32, out: *mut f32, count: u64) {
                // SAFETY: the caller upholds dot_specialized's contract.
                unsafe { dot_specialized::<$n>(x, y, out, count) }
            }
        )*};
    }

    crate::specialized_lengths!(specialized_kernels);
    // ANCHOR_END: exports
}
