//! The unroll lesson (chapter 19.2): an elementwise add where each thread
//! handles `UNROLL` elements in a loop the compiler unrolls completely,
//! beside the one-element-per-thread add.
//!
//! Unrolling keeps the arithmetic (one add per element) and removes
//! bookkeeping: the thread index is computed once per `UNROLL` elements and
//! no loop counter, compare or backward branch is left in the body. Two
//! ways to give a thread `UNROLL` elements are compiled: the seed's
//! (`UNROLL` consecutive elements per thread) and a coalesced one (the
//! elements one block-width apart), so the lesson can measure what the
//! access pattern costs. A third kernel is the combination the seed names
//! but does not build: the unrolled loop whose body is a 16-byte vector
//! load, add and store (`UNROLL` float4s per thread), with a scalar tail.

/// Threads per block of every launch: 8 warps.
pub const THREADS_PER_BLOCK: u32 = 256;
/// Elements one thread of an unrolled kernel handles (the seed's `UNROLL`).
pub const UNROLL: usize = 4;
/// Elements one block of an unrolled kernel covers: both unrolled kernels
/// cover the same contiguous chunk per block, only the thread-to-element
/// map inside it differs.
pub const ELEMS_PER_UNROLLED_BLOCK: usize = UNROLL * THREADS_PER_BLOCK as usize;
/// Bytes one load or store of the unrolled-and-vectorized kernel moves:
/// PTX's widest global access (`ld.global.v4.f32`, SASS `LDG.E.128`).
pub const VECTOR_BYTES: usize = 16;
/// Floats in one 16-byte vector (CUDA's `float4`), derived from the sizes.
pub const VEC_WIDTH: usize = VECTOR_BYTES / size_of::<f32>();
/// Elements one block of the unrolled-and-vectorized kernel covers:
/// `UNROLL` float4s per thread.
pub const ELEMS_PER_UNROLLED_VEC_BLOCK: usize = UNROLL * VEC_WIDTH * THREADS_PER_BLOCK as usize;
/// Elements the timed adds start from: 16 Mi floats, 64 MiB a buffer. The
/// host doubles it until each of the three buffers (a, b, out) is at least
/// 4x the GPU's L2, so the timed adds stream from DRAM on any GPU.
pub const SEED_TIMED_ELEMS: usize = 1 << 24;
/// Bytes one add moves per element: a and b read, out written, 4 bytes each.
pub const BYTES_PER_ELEM: usize = 3 * size_of::<f32>();
/// The correctness size: odd, so neither `UNROLL` nor a block divides it and
/// every per-lane bounds guard runs.
pub const CHECK_ELEMS: usize = 1_048_576 + 611;
/// The seed's two host-mirror sizes: 1000 (no remainder) and 4002 (a
/// remainder of 2).
pub const SEED_SIZES: [usize; 2] = [1000, 4002];
/// The seed's GPU launch: 16 elements, one thread per group of 4.
pub const SEED_GPU_ELEMS: usize = 16;

const _: () = assert!(CHECK_ELEMS % 2 == 1, "odd: UNROLL does not divide it");
const _: () = assert!(VEC_WIDTH == 4, "a float4 holds four floats");
const _: () = assert!(
    !CHECK_ELEMS.is_multiple_of(VEC_WIDTH) && SEED_SIZES[1] % VEC_WIDTH == 2,
    "the vectorized kernel's scalar tail runs at the check size (3 left) and at 4002 (2 left)"
);
const _: () = assert!(
    SEED_TIMED_ELEMS.is_multiple_of(ELEMS_PER_UNROLLED_VEC_BLOCK),
    "the timed adds are whole vectorized blocks too: no tail there"
);
const _: () = assert!(
    !CHECK_ELEMS.is_multiple_of(ELEMS_PER_UNROLLED_BLOCK),
    "a partial last block, so the guards fire"
);
const _: () = assert!(
    SEED_TIMED_ELEMS.is_multiple_of(ELEMS_PER_UNROLLED_BLOCK),
    "the timed adds run whole blocks at every doubling: the guards never fail there"
);
const _: () = assert!(
    SEED_SIZES[0].is_multiple_of(UNROLL) && SEED_SIZES[1] % UNROLL == 2,
    "the seed's sizes: no remainder, then a remainder of 2"
);

/// The kernels, compiled only for the GPU.
#[cfg(target_arch = "nvptx64")]
mod kernels {
    use super::*;
    use crate::device::memory::{Float4, opaque_index};
    use crate::device::thread::{block_dim_x, block_idx_x, global_index_x, thread_idx_x};

    const _: () = assert!(
        size_of::<Float4>() == VECTOR_BYTES,
        "a Float4 is one 16-byte access"
    );

    // ANCHOR: add_at
    /// `out[i] = a[i] + b[i]` for one i, if i < n.
    ///
    /// # Safety
    /// `a`, `b` and `out` hold at least `n` floats; `out` overlaps neither
    /// input.
    #[inline(always)]
    unsafe fn add_at(a: *const f32, b: *const f32, out: *mut f32, n: u64, i: u64) {
        if i < n {
            let i = i as usize;
            // SAFETY: i < n.
            unsafe { *out.add(i) = *a.add(i) + *b.add(i) };
        }
    }
    // ANCHOR_END: add_at

    /// `out[i] = a[i] + b[i]`, one element per thread: the baseline.
    ///
    /// # Memory
    /// Three coalesced 4-byte streams (a warp's access covers 128
    /// contiguous bytes); 12 bytes per element.
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x >= n`.
    ///
    /// # Safety
    /// `a`, `b` and `out` hold `n` floats; `out` overlaps neither input.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn add_one_per_thread(
        a: *const f32,
        b: *const f32,
        out: *mut f32,
        n: u64,
    ) {
        // SAFETY: the caller's contract is add_at's.
        unsafe { add_at(a, b, out, n, global_index_x()) }
    }

    /// `out[i] = a[i] + b[i]`, `UNROLL` consecutive elements per thread (the
    /// seed's form): thread g handles [g UNROLL, g UNROLL + UNROLL), each
    /// element behind its own bounds guard. The loop over the lanes has a
    /// constant trip count, so LLVM unrolls it completely (CUDA's
    /// `#pragma unroll`): no counter and no backward branch remain.
    ///
    /// # Memory
    /// Strided: lane k of a warp's k-th access reads the floats 16 bytes
    /// apart, so one warp-wide load spans 512 bytes (16 sectors of 32 bytes)
    /// for 128 useful bytes; the next three accesses use the rest of those
    /// sectors, if L1 still holds them. 12 bytes per element.
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x * UNROLL >= n`.
    ///
    /// # Safety
    /// `a`, `b` and `out` hold `n` floats; `out` overlaps neither input.
    // ANCHOR: add_unrolled_4
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn add_unrolled_4(
        a: *const f32,
        b: *const f32,
        out: *mut f32,
        n: u64,
    ) {
        // Through opaque_index, `base + lane` stays an add: knowing base's
        // low bits are zero, LLVM writes it as `or`, after which ptxas
        // branched around lanes 1 and 2 where the twin's SASS predicates
        // them. With it, the twin's 53 SASS instructions at sm_90, lanes
        // 0-2 predicated and an early exit before lane 3, as the twin's.
        let base = opaque_index((global_index_x() * UNROLL as u64) as usize) as u64;
        for lane in 0..UNROLL as u64 {
            // SAFETY: the caller's contract is add_at's.
            unsafe { add_at(a, b, out, n, base + lane) }
        }
    }
    // ANCHOR_END: add_unrolled_4

    /// `out[i] = a[i] + b[i]`, `UNROLL` elements per thread, one block width
    /// apart: block β covers [β B UNROLL, (β + 1) B UNROLL) (B = block_dim.x)
    /// and thread t of it handles elements t, t + B, t + 2B, t + 3B of that
    /// chunk. The same chunk per block as `add_unrolled_4`, the same
    /// unrolled loop; only the map from lanes to elements differs.
    ///
    /// # Memory
    /// Coalesced: each of a warp's accesses covers 128 contiguous bytes (4
    /// sectors, all used). 12 bytes per element.
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x * UNROLL >= n`.
    ///
    /// # Safety
    /// `a`, `b` and `out` hold `n` floats; `out` overlaps neither input.
    // ANCHOR: add_unrolled_4_coalesced
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn add_unrolled_4_coalesced(
        a: *const f32,
        b: *const f32,
        out: *mut f32,
        n: u64,
    ) {
        let width = block_dim_x() as u64;
        let first = block_idx_x() as u64 * width * UNROLL as u64 + thread_idx_x() as u64;
        for lane in 0..UNROLL as u64 {
            // SAFETY: the caller's contract is add_at's.
            unsafe { add_at(a, b, out, n, first + lane * width) }
        }
    }
    // ANCHOR_END: add_unrolled_4_coalesced

    /// `out[i] = a[i] + b[i]`, unrolled and vectorized: the seed's
    /// combination. The buffers are read as float4s; block β covers the
    /// float4s [β B UNROLL, (β + 1) B UNROLL) (B = block_dim.x) and thread t
    /// of it adds float4s t, t + B, t + 2B, t + 3B of that chunk, each with
    /// one 16-byte load per input and one 16-byte store, behind a guard
    /// against the n / 4 whole float4s; the lane loop is unrolled
    /// completely. The n % 4 floats past the last whole float4 (at most 3)
    /// are the tail: grid thread g < n % 4 adds float n - n % 4 + g.
    ///
    /// # Memory
    /// Coalesced 16-byte accesses (`ld.global.v4.f32`, `st.global.v4.f32`;
    /// SASS `LDG.E.128`, `STG.E.128`): each warp access covers 512
    /// contiguous bytes (16 sectors, all used). 12 bytes per element; a
    /// thread's 16 elements take 8 loads and 4 stores.
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x * UNROLL >= n / 4` and
    /// `grid_dim.x * block_dim.x >= n % 4` (at least 3 threads in all, for the
    /// tail).
    ///
    /// # Safety
    /// `a`, `b` and `out` hold `n` floats, are 16-byte aligned (every
    /// device allocation is) and `out` overlaps neither input.
    // ANCHOR: add_unrolled_4_vec4
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn add_unrolled_4_vec4(
        a: *const f32,
        b: *const f32,
        out: *mut f32,
        n: u64,
    ) {
        let vectors = n / VEC_WIDTH as u64;
        let (a4, b4, out4) = (a.cast::<Float4>(), b.cast::<Float4>(), out.cast::<Float4>());
        let width = block_dim_x() as u64;
        let first = block_idx_x() as u64 * width * UNROLL as u64 + thread_idx_x() as u64;
        for lane in 0..UNROLL as u64 {
            let v = first + lane * width;
            if v < vectors {
                let v = v as usize;
                // SAFETY: v < n / 4, so the float4 [4v, 4v + 4) lies inside
                // the n floats, 16-byte aligned because the base is. The
                // fields are read one by one (LLVM merges them into one
                // 16-byte load; a whole-struct copy may not be).
                unsafe {
                    let (x, y) = (a4.add(v), b4.add(v));
                    *out4.add(v) = Float4 {
                        x: (*x).x + (*y).x,
                        y: (*x).y + (*y).y,
                        z: (*x).z + (*y).z,
                        w: (*x).w + (*y).w,
                    };
                }
            }
        }
        let tail = n - vectors * VEC_WIDTH as u64;
        let g = global_index_x();
        if g < tail {
            let i = (vectors * VEC_WIDTH as u64 + g) as usize;
            // SAFETY: i < 4 (n / 4) + n % 4 = n.
            unsafe { *out.add(i) = *a.add(i) + *b.add(i) };
        }
    }
    // ANCHOR_END: add_unrolled_4_vec4
}
