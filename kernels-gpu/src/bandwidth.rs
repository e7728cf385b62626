//! The bandwidth lesson (chapter 19.4): a device-to-device copy done by a
//! kernel, one 16-byte vector per thread and a byte tail, timed beside the
//! copy engine (`cuMemcpyDtoD`) and the host-device copies.

use core::mem::size_of;

/// Threads per block of the copy kernel: 8 warps.
pub const THREADS_PER_BLOCK: u32 = 256;
/// Bytes one thread copies with one load and one store: PTX's widest global
/// access (`ld.global.nc.v4`, SASS `LDG.E.128`).
pub const VECTOR_BYTES: usize = 16;
/// Bytes every timed copy starts from: 64 MiB. The host doubles it until a
/// copy's source is at least 4x the GPU's L2 (256 MiB on an H200), so both
/// ends of a device-to-device copy stream from and to DRAM.
pub const SEED_TIMED_BYTES: usize = 64 << 20;
/// The correctness size, apart from the timed one: 1 MiB + 611 bytes, so
/// the kernel's byte tail (611 % 16 = 3 bytes) and its last partial block
/// both run.
pub const CHECK_BYTES: usize = (1 << 20) + 611;

/// Sixteen bytes as four 32-bit words: what one thread moves.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bytes16(pub [u32; 4]);

const _: () = assert!(size_of::<Bytes16>() == VECTOR_BYTES, "a vector is 16 bytes");
const _: () = assert!(
    !CHECK_BYTES.is_multiple_of(VECTOR_BYTES),
    "the check size has a byte tail"
);
const _: () = assert!(
    SEED_TIMED_BYTES.is_multiple_of(VECTOR_BYTES),
    "the timed copy is whole vectors, at every doubling"
);

/// The kernels, compiled only for the GPU.
#[cfg(target_arch = "nvptx64")]
mod kernels {
    use super::*;
    use crate::device::thread::global_index_x;

    // ANCHOR: load_readonly_16
    /// One 16-byte load through the read-only path
    /// (`ld.global.nc.v4.u32`), as nvcc emits for a `const uint4*
    /// __restrict__` source.
    ///
    /// # Safety
    /// `p` is a 16-byte-aligned global address that nothing writes during
    /// the kernel.
    #[inline(always)]
    unsafe fn load_readonly_16(p: *const Bytes16) -> Bytes16 {
        let (a, b, c, d): (u32, u32, u32, u32);
        // SAFETY: the caller's contract; the asm only reads 16 bytes.
        unsafe {
            core::arch::asm!(
                "ld.global.nc.v4.u32 {{{a}, {b}, {c}, {d}}}, [{p}];",
                p = in(reg64) p,
                a = out(reg32) a,
                b = out(reg32) b,
                c = out(reg32) c,
                d = out(reg32) d,
                options(pure, readonly, nostack, preserves_flags),
            )
        };
        Bytes16([a, b, c, d])
    }
    // ANCHOR_END: load_readonly_16

    // ANCHOR: copy_vec16
    /// `dst[i] = src[i]` for i < n bytes: thread t < n / 16 copies bytes
    /// [16 t, 16 t + 16) with one 16-byte load and one 16-byte store; the
    /// first n % 16 threads also copy one tail byte each.
    ///
    /// # Memory
    /// Coalesced 16-byte accesses (`ld.global.nc.v4.u32` /
    /// `st.global.v4.u32`, SASS `LDG.E.128.CONSTANT` / `STG.E.128`): each
    /// byte read once and written once, 2n bytes of DRAM traffic.
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x >= max(n / 16, n % 16)`.
    ///
    /// # Safety
    /// `src` and `dst` hold `n` bytes, are 16-byte aligned (every device
    /// allocation is) and do not overlap.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn copy_vec16(src: *const u8, dst: *mut u8, n: u64) {
        let vectors = n / VECTOR_BYTES as u64;
        let i = global_index_x();
        if i < vectors {
            // SAFETY: i < n / 16, so the vector lies inside both buffers,
            // aligned because the bases are; nothing writes `src`.
            unsafe {
                let v = load_readonly_16(src.cast::<Bytes16>().add(i as usize));
                *dst.cast::<Bytes16>().add(i as usize) = v;
            }
        }
        let tail = n - vectors * VECTOR_BYTES as u64;
        if i < tail {
            let j = (vectors * VECTOR_BYTES as u64 + i) as usize;
            // SAFETY: j < n.
            unsafe { *dst.add(j) = *src.add(j) };
        }
    }
    // ANCHOR_END: copy_vec16
}
