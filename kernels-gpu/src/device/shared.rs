//! Shared memory: per-block scratch that every thread of a block can reach,
//! about as fast as L1.
//!
//! CUDA C writes `__shared__ float tile[32][33];` inside a kernel. Rust has
//! no address-space-qualified statics, so [`shared_array!`](crate::shared_array)
//! does what nvcc does instead: it declares the array once at module scope in
//! the PTX (`.shared .align 16 .b8 NAME[bytes];`), and its handle's
//! `shared()` gives the kernels the array's address in the shared state
//! space, taken straight from the symbol (`mov.u32 %r, NAME;`), as a typed
//! [`SharedPtr`] whose `read`/`write` are `ld.shared`/`st.shared` (SASS
//! `LDS`/`STS`). NVRTC does the same with a 64-bit register
//! (`mov.u64 %rd, tile;` then `st.shared.f32 [%rd]`); shared addresses fit
//! in 32 bits, and PTX takes either width. The address never passes
//! through the generic address space.
//!
//! The form matters twice over. A shared array reached through a plain
//! generic pointer compiles to generic `ld`/`st` (SASS `LD.E`/`ST.E`),
//! which made an early probe's tiled transpose 8% slower than nvcc's. An
//! earlier device layer then told LLVM the generic address was shared (an
//! `llvm.nvvm.isspacep.shared` assumption): the accesses became
//! `ld.shared`, but through `cvta.shared.u64` / `cvta.to.shared.u64`, which
//! SASS pays for with an `S2UR SR_SWINHI` (the shared window's base) and a
//! few uniform moves in every kernel. That kept `transpose_tiled` 0.7% and
//! `reduce_sequential_addressing` 1.4% behind their CUDA C twins in the book
//! run of 2026-12-01. With [`SharedPtr`] the conversion is gone from every
//! kernel (`ptx_has_no_generic_shared_conversion` in
//! `tests/cpu_roofline.rs` keeps it so), and the reduction runs at parity
//! (`docs/results/h200-2026-12-01-parity-all/roofline-compare.jsonl`).
//!
//! One module-scope symbol serves every kernel and every inlined copy of a
//! function that uses it; a kernel that never touches it is given 0 bytes.
//! Names are PTX symbols, so they must be unique across the crate: a
//! duplicate compiles in Rust but ptxas rejects the PTX (the
//! `ptx_assembles_without_spills` test catches it).

// ANCHOR: shared_ptr
/// An element type [`SharedPtr`] can load and store: one `ld.shared` /
/// `st.shared` of its width.
///
/// # Safety
/// Implementations must move exactly `size_of::<Self>()` bytes at the
/// given shared address and touch nothing else.
pub unsafe trait SharedWord: Copy {
    /// Reads the value at the 32-bit shared address `addr`.
    ///
    /// # Safety
    /// `addr` is an aligned address inside a shared array of the block.
    unsafe fn load_shared(addr: u32) -> Self;
    /// Writes `v` at the 32-bit shared address `addr`.
    ///
    /// # Safety
    /// As [`load_shared`](SharedWord::load_shared).
    unsafe fn store_shared(addr: u32, v: Self);
}

macro_rules! shared_word {
    ($ty:ty, $ptx:literal) => {
        // SAFETY: one 4-byte ld/st.shared at `addr`, nothing else.
        unsafe impl SharedWord for $ty {
            #[inline(always)]
            unsafe fn load_shared(addr: u32) -> Self {
                let v: $ty;
                // SAFETY: the caller guarantees addr is in a shared array.
                // Not `pure`: a barrier or another thread's store may change
                // the value between two reads of one address.
                unsafe {
                    core::arch::asm!(
                        concat!("ld.shared.", $ptx, " {v}, [{a}];"),
                        a = in(reg32) addr,
                        v = out(reg32) v,
                        options(readonly, nostack, preserves_flags),
                    )
                };
                v
            }
            #[inline(always)]
            unsafe fn store_shared(addr: u32, v: Self) {
                // SAFETY: the caller guarantees addr is in a shared array.
                unsafe {
                    core::arch::asm!(
                        concat!("st.shared.", $ptx, " [{a}], {v};"),
                        a = in(reg32) addr,
                        v = in(reg32) v,
                        options(nostack, preserves_flags),
                    )
                };
            }
        }
    };
}
shared_word!(f32, "f32");
shared_word!(u32, "u32");

// SAFETY: one 16-byte ld/st.shared.v4.f32 at `addr` (16-byte aligned, as
// Float4 is), nothing else.
unsafe impl SharedWord for crate::device::memory::Float4 {
    #[inline(always)]
    unsafe fn load_shared(addr: u32) -> Self {
        let (x, y, z, w): (f32, f32, f32, f32);
        // SAFETY: the caller guarantees addr is a 16-byte-aligned place in a
        // shared array. Not `pure`, as for the 4-byte words.
        unsafe {
            core::arch::asm!(
                "ld.shared.v4.f32 {{{x}, {y}, {z}, {w}}}, [{a}];",
                a = in(reg32) addr,
                x = out(reg32) x, y = out(reg32) y, z = out(reg32) z, w = out(reg32) w,
                options(readonly, nostack, preserves_flags),
            )
        };
        Self { x, y, z, w }
    }
    #[inline(always)]
    unsafe fn store_shared(addr: u32, v: Self) {
        // SAFETY: as load_shared.
        unsafe {
            core::arch::asm!(
                "st.shared.v4.f32 [{a}], {{{x}, {y}, {z}, {w}}};",
                a = in(reg32) addr,
                x = in(reg32) v.x, y = in(reg32) v.y, z = in(reg32) v.z, w = in(reg32) v.w,
                options(nostack, preserves_flags),
            )
        };
    }
}

/// A typed 32-bit address in the shared state space, formed from the
/// array's symbol as nvcc forms the address of `__shared__ float tile[...]`
/// (`mov` of the symbol, then `ld.shared.f32 [reg]`), so SASS addresses the
/// array directly (`LDS`/`STS` on a 32-bit register) with no
/// generic-to-shared conversion.
/// Get one from a [`shared_array!`](crate::shared_array) or
/// [`dynamic_shared!`](crate::dynamic_shared) handle's `shared()`.
///
/// Indices count elements of `T`, as `tile[i]` does in CUDA C. Each access
/// is inline PTX that LLVM orders against barriers and other memory
/// accesses but does not merge or delete.
#[derive(Clone, Copy)]
pub struct SharedPtr<T> {
    addr: u32,
    elem: core::marker::PhantomData<*mut T>,
}

impl<T: SharedWord> SharedPtr<T> {
    /// Wraps a 32-bit shared address (bytes from the start of the block's
    /// shared memory window).
    ///
    /// # Safety
    /// `addr` is the shared address of an array of `T`, aligned for `T`.
    #[inline(always)]
    pub unsafe fn from_addr(addr: u32) -> Self {
        Self {
            addr,
            elem: core::marker::PhantomData,
        }
    }

    /// The 32-bit shared address itself (bytes), for instructions that take
    /// one (`ldmatrix`, `cp.async`).
    #[inline(always)]
    pub fn addr(self) -> u32 {
        self.addr
    }

    /// The element `i` places on: `addr + i * size_of::<T>()` bytes.
    #[inline(always)]
    pub fn add(self, i: u32) -> Self {
        let step = core::mem::size_of::<T>() as u32;
        Self {
            addr: self.addr.wrapping_add(i.wrapping_mul(step)),
            elem: self.elem,
        }
    }

    /// Row `r` of a 2D tile of `pitch` elements a row, as a pointer of its
    /// own: `addr + r * pitch * size_of::<T>()` bytes (modulo 2^32, as
    /// [`add`](SharedPtr::add)), formed before a column is added
    /// (`tile.row(r, pitch).read(col)`) and kept whole.
    ///
    /// nvcc forms `&tile[r][col]` as the symbol plus the row's bytes, then
    /// the column's. LLVM folds `tile.read(r * pitch + col)` the other way
    /// round, the index's bytes first and the symbol last; ptxas then builds
    /// the shared window's base in a uniform register (SASS `S2UR
    /// SR_CgaCtaId`, `ULEA`) where for nvcc's order it uses an ordinary one
    /// (`S2R SR_CgaCtaId`, `LEA`, an `IMAD` a row). The row's address goes
    /// through an empty `asm!` (as [`opaque_u32`](crate::device::memory::opaque_u32)
    /// does a bound), so LLVM cannot fold it back into the index. With it,
    /// `transpose_tiled`'s SASS is its CUDA C twin's, instruction for
    /// instruction (ptxas 12.9 at sm_90).
    #[inline(always)]
    pub fn row(self, r: u32, pitch: u32) -> Self {
        let mut addr = self.add(r.wrapping_mul(pitch)).addr;
        // SAFETY: an empty template that leaves the register as it is.
        unsafe {
            core::arch::asm!("// shared row: {0}", inout(reg32) addr, options(pure, nomem, nostack, preserves_flags))
        };
        Self {
            addr,
            elem: self.elem,
        }
    }

    /// `tile[i]`: one `ld.shared` (SASS `LDS`).
    ///
    /// # Safety
    /// Element `i` is inside the array; another thread's write to it is
    /// ordered before this read by a barrier.
    #[inline(always)]
    pub unsafe fn read(self, i: u32) -> T {
        // SAFETY: the caller keeps i inside the array.
        unsafe { T::load_shared(self.add(i).addr) }
    }

    /// `tile[i] = v`: one `st.shared` (SASS `STS`).
    ///
    /// # Safety
    /// Element `i` is inside the array, and no other thread reads or writes
    /// it before the next barrier.
    #[inline(always)]
    pub unsafe fn write(self, i: u32, v: T) {
        // SAFETY: the caller keeps i inside the array.
        unsafe { T::store_shared(self.add(i).addr, v) }
    }
}
// ANCHOR_END: shared_ptr

// ANCHOR: shared_array
/// Declares a statically sized shared-memory array at module scope and a
/// zero-sized handle type of the same name whose `shared()` returns its
/// address as a [`SharedPtr`](crate::device::shared::SharedPtr).
///
/// ```ignore
/// shared_array!(TRANSPOSE_TILE: [f32; 32 * 33]);
/// let tile = TRANSPOSE_TILE::shared();
/// unsafe { tile.row(ty, 33).write(tx, v) }; // tile[ty][tx] = v
/// ```
///
/// The name becomes a PTX symbol and must be unique in the crate. Every block
/// gets its own copy; its contents are undefined until a thread of the block
/// writes them, and other threads see a write only after
/// [`sync_threads`](crate::device::thread::sync_threads).
#[macro_export]
macro_rules! shared_array {
    ($name:ident : [$ty:ty; $len:expr]) => {
        const _: () = assert!(::core::mem::align_of::<$ty>() <= 16, "the array is declared .align 16");
        ::core::arch::global_asm!(
            concat!(".shared .align 16 .b8 ", stringify!($name), "[{bytes}];"),
            bytes = const ::core::mem::size_of::<[$ty; $len]>(),
        );
        $crate::shared_handle!($name, $ty);
    };
}
// ANCHOR_END: shared_array

// ANCHOR: dynamic_shared
/// Declares the module's dynamic shared-memory array (CUDA's
/// `extern __shared__ float NAME[];`) and a zero-sized handle of the same
/// name whose `shared()` returns its first element as a
/// [`SharedPtr`](crate::device::shared::SharedPtr), like
/// [`shared_array!`](crate::shared_array)'s.
///
/// The PTX is `.extern .shared .align 16 .b8 NAME[];`: the array has no size
/// of its own; each launch gives it `shared_mem_bytes` bytes. All dynamic
/// arrays of a module start at the same address, so declare one and carve
/// it up (`SharedPtr::add`). Sizes above 48 KiB need the kernel's
/// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` raised first (host).
#[macro_export]
macro_rules! dynamic_shared {
    ($name:ident : [$ty:ty]) => {
        const _: () = assert!(
            ::core::mem::align_of::<$ty>() <= 16,
            "the array is declared .align 16"
        );
        ::core::arch::global_asm!(concat!(
            ".extern .shared .align 16 .b8 ",
            stringify!($name),
            "[];"
        ));
        $crate::shared_handle!($name, $ty);
    };
}
// ANCHOR_END: dynamic_shared

/// The handle type both declaring macros give a shared array.
#[doc(hidden)]
#[macro_export]
macro_rules! shared_handle {
    ($name:ident, $ty:ty) => {
        #[allow(non_camel_case_types)]
        #[doc = concat!("Handle to the shared array `", stringify!($name), "`.")]
        pub struct $name;

        impl $name {
            /// Element 0 as a 32-bit shared address (`mov.u32 %r, NAME;`).
            #[inline(always)]
            pub fn shared() -> $crate::device::shared::SharedPtr<$ty> {
                let addr: u32;
                // SAFETY: mov only names the address of the symbol the
                // calling macro declared; it reads and writes no memory.
                unsafe {
                    ::core::arch::asm!(
                        concat!("mov.u32 {a}, ", stringify!($name), ";"),
                        a = out(reg32) addr,
                        options(pure, nomem, nostack, preserves_flags),
                    )
                };
                // SAFETY: the symbol is this array, aligned to 16 bytes.
                unsafe { $crate::device::shared::SharedPtr::from_addr(addr) }
            }
        }
    };
}
