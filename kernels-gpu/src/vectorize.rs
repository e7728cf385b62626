//! The vectorize lesson (chapter 19.1): an elementwise add whose main loop
//! moves 16 bytes per load and store, with a scalar tail for the elements
//! that do not fill a last vector, beside the one-element-per-thread add.
//!
//! The width trap: a 16-byte vector holds 4 floats, 2 doubles or 8 halves.
//! The width is never a literal here: it is `size_of` the vector over
//! `size_of` its element ([`width`]), so retyping the data retypes the
//! width.

use core::mem::size_of;

/// Threads per block of every launch: 8 warps.
pub const THREADS_PER_BLOCK: u32 = 256;
/// Bytes one vector load or store moves: PTX's widest global access
/// (`ld.global.v4.b32`, `ld.global.v2.b64`), SASS `LDG.E.128`.
pub const VECTOR_BYTES: usize = 16;
/// Bytes each of the three timed buffers (a, b, out) starts from: 64 MiB.
/// The host doubles it until a buffer is at least 4x the GPU's L2, so the
/// timed adds stream from DRAM on any GPU (64 MiB on a T4, 256 MiB on an
/// H200).
pub const SEED_BUFFER_BYTES: usize = 64 << 20;
/// The correctness size: odd, so no vector width and no block divides it and
/// every tail and guard runs.
pub const CHECK_ELEMS: usize = 1_048_576 + 611;
/// The seed's small launches' budget: 32 bytes per array, two 16-byte
/// vectors, launched `<<<1, 2>>>` (8 floats as float4, 4 doubles as
/// double2, 16 halves as eight halves).
pub const SEED_BUDGET_BYTES: usize = 32;
/// The seed's two traced sizes: 10 (2 vectors and a tail of 2) and 41 (10
/// vectors and a tail of 1).
pub const TRACED_SIZES: [usize; 2] = [10, 41];

// ANCHOR: vector_types
/// Four floats, the 16-byte vector CUDA calls `float4`.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct F32x4(pub [f32; 4]);

/// Two doubles, CUDA's `double2`.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct F64x2(pub [f64; 2]);

/// Eight IEEE halves as their bits, two to a 32-bit word as CUDA's `half2`
/// packs them (element 2k in the low half of word k).
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct F16x8(pub [u32; 4]);

/// A 16-byte vector of one element type.
pub trait Vector16: Copy {
    /// The element: its size sets the width.
    type Elem: Copy;
}

impl Vector16 for F32x4 {
    type Elem = f32;
}
impl Vector16 for F64x2 {
    type Elem = f64;
}
impl Vector16 for F16x8 {
    /// A half's bits.
    type Elem = u16;
}

/// Elements one vector holds: `size_of::<V>() / size_of::<V::Elem>()`,
/// derived from the types, never written down.
pub const fn width<V: Vector16>() -> usize {
    size_of::<V>() / size_of::<V::Elem>()
}
// ANCHOR_END: vector_types

const _: () = assert!(size_of::<F32x4>() == VECTOR_BYTES, "float4 is 16 bytes");
const _: () = assert!(size_of::<F64x2>() == VECTOR_BYTES, "double2 is 16 bytes");
const _: () = assert!(
    size_of::<F16x8>() == VECTOR_BYTES,
    "eight halves are 16 bytes"
);
const _: () = assert!(CHECK_ELEMS % 2 == 1, "odd: no width divides it");
const _: () = assert!(
    SEED_BUDGET_BYTES.is_multiple_of(VECTOR_BYTES),
    "the seed's budget is whole vectors, no tail"
);
const _: () = assert!(
    SEED_BUFFER_BYTES.is_multiple_of(VECTOR_BYTES),
    "whole vectors fit the buffers, at every doubling"
);

/// The kernels, compiled only for the GPU.
#[cfg(target_arch = "nvptx64")]
mod kernels {
    use super::*;
    use crate::device::thread::global_index_x;

    /// An elementwise add over one element type and its 16-byte vector.
    trait Add16: Vector16 {
        fn add(self, other: Self) -> Self;
        fn add_elem(a: Self::Elem, b: Self::Elem) -> Self::Elem;
    }

    impl Add16 for F32x4 {
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            F32x4([
                self.0[0] + o.0[0],
                self.0[1] + o.0[1],
                self.0[2] + o.0[2],
                self.0[3] + o.0[3],
            ])
        }
        #[inline(always)]
        fn add_elem(a: f32, b: f32) -> f32 {
            a + b
        }
    }

    impl Add16 for F64x2 {
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            F64x2([self.0[0] + o.0[0], self.0[1] + o.0[1]])
        }
        #[inline(always)]
        fn add_elem(a: f64, b: f64) -> f64 {
            a + b
        }
    }

    impl Add16 for F16x8 {
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            F16x8([
                add_f16x2(self.0[0], o.0[0]),
                add_f16x2(self.0[1], o.0[1]),
                add_f16x2(self.0[2], o.0[2]),
                add_f16x2(self.0[3], o.0[3]),
            ])
        }
        #[inline(always)]
        fn add_elem(a: u16, b: u16) -> u16 {
            add_f16(a, b)
        }
    }

    /// Two half adds in one instruction, round to nearest even (CUDA's
    /// `__hadd2`).
    #[inline(always)]
    fn add_f16x2(a: u32, b: u32) -> u32 {
        let r: u32;
        // SAFETY: a register-only arithmetic instruction (sm_53 and later).
        unsafe {
            core::arch::asm!("add.rn.f16x2 {r}, {a}, {b};", r = out(reg32) r, a = in(reg32) a, b = in(reg32) b,
                options(pure, nomem, nostack, preserves_flags))
        };
        r
    }

    /// One half add, round to nearest even (CUDA's `__hadd`).
    #[inline(always)]
    fn add_f16(a: u16, b: u16) -> u16 {
        let r: u16;
        // SAFETY: as add_f16x2.
        unsafe {
            core::arch::asm!("add.rn.f16 {r}, {a}, {b};", r = out(reg16) r, a = in(reg16) a, b = in(reg16) b,
                options(pure, nomem, nostack, preserves_flags))
        };
        r
    }

    /// `out[i] = a[i] + b[i]` for i < n, one 16-byte vector per thread and a
    /// scalar tail: thread t < n / W adds elements [t W, t W + W) with one
    /// vector load from each input and one vector store; the first
    /// n - (n / W) W threads also add one leftover element each.
    ///
    /// # Memory
    /// Coalesced 16-byte loads and stores (`ld.global.v4`/`v2`, SASS
    /// `LDG.E.128`/`STG.E.128`); 3 x size_of(Elem) bytes per element.
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x >= max(n / W, n % W)`.
    ///
    /// # Safety
    /// `a`, `b` and `out` hold `n` elements, are 16-byte aligned (every
    /// device allocation is) and `out` overlaps neither input.
    // ANCHOR: add_vec16
    #[inline(always)]
    unsafe fn add_vec16<V: Add16>(a: *const V::Elem, b: *const V::Elem, out: *mut V::Elem, n: u64) {
        let w = width::<V>() as u64;
        let vectors = n / w;
        let i = global_index_x();
        if i < vectors {
            let i = i as usize;
            // SAFETY: i < n / W, so the vector [iW, iW + W) lies inside n,
            // and it is 16-byte aligned because the base is.
            unsafe {
                let sum = (*a.cast::<V>().add(i)).add(*b.cast::<V>().add(i));
                *out.cast::<V>().add(i) = sum;
            }
        }
        let tail = n - vectors * w;
        if i < tail {
            let j = (vectors * w + i) as usize;
            // SAFETY: j < n.
            unsafe { *out.add(j) = V::add_elem(*a.add(j), *b.add(j)) };
        }
    }
    // ANCHOR_END: add_vec16

    /// `out[i] = a[i] + b[i]`, one element per thread: the baseline the
    /// vector add is timed against.
    ///
    /// # Memory
    /// Coalesced element-wide loads and stores; 3 x size_of(Elem) bytes
    /// per element.
    ///
    /// # Launch assumption
    /// `grid_dim.x * block_dim.x >= n`.
    ///
    /// # Safety
    /// `a`, `b` and `out` hold `n` elements; `out` overlaps neither input.
    // ANCHOR: add_scalar
    #[inline(always)]
    unsafe fn add_scalar<V: Add16>(
        a: *const V::Elem,
        b: *const V::Elem,
        out: *mut V::Elem,
        n: u64,
    ) {
        let i = global_index_x();
        if i < n {
            let i = i as usize;
            // SAFETY: i < n.
            unsafe { *out.add(i) = V::add_elem(*a.add(i), *b.add(i)) };
        }
    }
    // ANCHOR_END: add_scalar

    /// Exports the vector and scalar adds of one vector type.
    macro_rules! add_kernels {
        ($($vec:ident: $v:ty, $scalar:ident, $elem:ty;)*) => {$(
            /// The 16-byte vector add with a scalar tail (see `add_vec16`).
            ///
            /// # Safety
            /// As `add_vec16`.
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $vec(a: *const $elem, b: *const $elem, out: *mut $elem, n: u64) {
                // SAFETY: the caller upholds add_vec16's contract.
                unsafe { add_vec16::<$v>(a, b, out, n) }
            }

            /// The one-element-per-thread add (see `add_scalar`).
            ///
            /// # Safety
            /// As `add_scalar`.
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $scalar(a: *const $elem, b: *const $elem, out: *mut $elem, n: u64) {
                // SAFETY: the caller upholds add_scalar's contract.
                unsafe { add_scalar::<$v>(a, b, out, n) }
            }
        )*};
    }

    add_kernels! {
        add_vec16_f32: F32x4, add_scalar_f32, f32;
        add_vec16_f64: F64x2, add_scalar_f64, f64;
        add_vec16_f16: F16x8, add_scalar_f16, u16;
    }
}
