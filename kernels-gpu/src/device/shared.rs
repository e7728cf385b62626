//! Shared memory: per-block scratch that every thread of a block can reach,
//! about as fast as L1.
//!
//! CUDA C writes `__shared__ float tile[32][33];` inside a kernel. Rust has
//! no address-space-qualified statics, so [`shared_array!`](crate::shared_array)
//! does what nvcc does instead: it declares the array once at module scope in
//! the PTX (`.shared .align 16 .b8 NAME[bytes];`) and gives the kernels a
//! typed pointer to it.
//!
//! A pointer to shared memory must also *look* like one to LLVM, or every
//! access stays a generic `ld`/`st` (SASS `LD.E`/`ST.E`), which made an early
//! probe's tiled transpose 8% slower than nvcc's. The accessor therefore:
//! 1. forms a generic address with `cvta.shared.u64` from `NAME+16`, an
//!    address inside the array (the macro requires more than 16 bytes),
//! 2. asks `llvm.nvvm.isspacep.shared` about that address and tells LLVM the
//!    answer is true (`assert_unchecked`); it is true,
//! 3. steps back 16 bytes to element 0. LLVM's address-space inference
//!    consults such an assumption only for the operand of a pointer
//!    computation, never for the pointer a load uses directly, so the
//!    assumption sits on that base and every access derived from
//!    `base - 16` becomes `ld.shared`/`st.shared`,
//! 4. keeps that answer alive with an empty `asm!` that reads it before the
//!    assumption, because LLVM otherwise deletes the assumption as unused.
//!
//! ptxas then removes the `isspacep` test. One module-scope symbol serves
//! every kernel and every inlined copy of a function that uses it; a kernel
//! that never touches it is given 0 bytes. Names are PTX symbols, so they
//! must be unique across the crate: a duplicate compiles in Rust but ptxas
//! rejects the PTX (the `ptx_assembles_without_spills` test catches it).

unsafe extern "C" {
    #[link_name = "llvm.nvvm.isspacep.shared"]
    fn isspacep_shared(p: *const u8) -> bool;
}

// ANCHOR: assume_shared
/// Returns `p` after telling LLVM that it points into shared memory.
///
/// # Safety
/// `p` is a generic address of shared memory (from `cvta.shared`). Telling
/// LLVM so about any other pointer is undefined behaviour.
#[inline(always)]
pub unsafe fn assume_shared<T>(p: *mut T) -> *mut T {
    // SAFETY: isspacep only inspects the address.
    let shared = unsafe { isspacep_shared(p as *const u8) };
    // SAFETY: an empty asm that reads a register. It is placed before the
    // assumption so that its use of `shared` is not one the assumption
    // dominates: LLVM would rewrite such a use to `true`, find the test used
    // only by the assumption, and delete both.
    unsafe {
        core::arch::asm!("// shared: {0}", in(reg32) shared as u32, options(nomem, nostack, preserves_flags))
    };
    // SAFETY: the caller guarantees `p` is a shared address.
    unsafe { core::hint::assert_unchecked(shared) };
    p
}
// ANCHOR_END: assume_shared

// ANCHOR: shared_array
/// Declares a statically sized shared-memory array at module scope and a
/// zero-sized handle type of the same name whose `as_mut_ptr()` returns a
/// `*mut T` in the shared state space.
///
/// ```ignore
/// shared_array!(TRANSPOSE_TILE: [f32; 32 * 33]);
/// let tile = TRANSPOSE_TILE::as_mut_ptr();
/// unsafe { *tile.add(ty * 33 + tx) = v };
/// ```
///
/// The name becomes a PTX symbol and must be unique in the crate. Every block
/// gets its own copy; its contents are undefined until a thread of the block
/// writes them, and other threads see a write only after
/// [`sync_threads`](crate::device::thread::sync_threads).
#[macro_export]
macro_rules! shared_array {
    ($name:ident : [$ty:ty; $len:expr]) => {
        const _: () = assert!(
            ::core::mem::size_of::<[$ty; $len]>() > 16,
            "the accessor takes the address of byte 16 of the array"
        );
        const _: () = assert!(
            ::core::mem::align_of::<$ty>() <= 16,
            "the array is declared .align 16"
        );
        ::core::arch::global_asm!(
            concat!(".shared .align 16 .b8 ", stringify!($name), "[{bytes}];"),
            bytes = const ::core::mem::size_of::<[$ty; $len]>(),
        );

        #[allow(non_camel_case_types)]
        #[doc = concat!("Handle to the shared array `", stringify!($name), "`.")]
        pub struct $name;

        impl $name {
            /// A pointer to element 0, in the shared state space.
            #[inline(always)]
            pub fn as_mut_ptr() -> *mut $ty {
                let generic: u64;
                // SAFETY: cvta only computes the generic address of a symbol
                // this macro declared; it reads and writes no memory.
                unsafe {
                    ::core::arch::asm!(
                        concat!("cvta.shared.u64 {p}, ", stringify!($name), "+16;"),
                        p = out(reg64) generic,
                        options(pure, nomem, nostack, preserves_flags),
                    )
                };
                // SAFETY: `generic` is the generic address of byte 16 of the
                // array, which is in the shared window.
                let base = unsafe { $crate::device::shared::assume_shared(generic as *mut u8) };
                base.wrapping_sub(16) as *mut $ty
            }
        }
    };
}
// ANCHOR_END: shared_array

// ANCHOR: dynamic_shared
/// Declares the module's dynamic shared-memory array (CUDA's
/// `extern __shared__ float NAME[];`) and a zero-sized handle of the same
/// name whose `as_mut_ptr()` returns a `*mut T` to its first element, in the
/// shared state space like [`shared_array!`](crate::shared_array)'s.
///
/// The PTX is `.extern .shared .align 16 .b8 NAME[];`: the array has no size
/// of its own; each launch gives it `shared_mem_bytes` bytes. All dynamic
/// arrays of a module start at the same address, so declare one and carve
/// it up. Sizes above 48 KiB need the kernel's
/// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` raised first (host).
///
/// The accessor forms its address from byte 16 as `shared_array!` does, so
/// a launch must give the array more than 16 bytes.
#[macro_export]
macro_rules! dynamic_shared {
    ($name:ident : [$ty:ty]) => {
        const _: () = assert!(::core::mem::align_of::<$ty>() <= 16, "the array is declared .align 16");
        ::core::arch::global_asm!(concat!(".extern .shared .align 16 .b8 ", stringify!($name), "[];"));

        #[allow(non_camel_case_types)]
        #[doc = concat!("Handle to the dynamic shared array `", stringify!($name), "`.")]
        pub struct $name;

        impl $name {
            /// A pointer to element 0, in the shared state space.
            #[inline(always)]
            pub fn as_mut_ptr() -> *mut $ty {
                let generic: u64;
                // SAFETY: cvta only computes the generic address of the
                // symbol declared above; it touches no memory.
                unsafe {
                    ::core::arch::asm!(
                        concat!("cvta.shared.u64 {p}, ", stringify!($name), "+16;"),
                        p = out(reg64) generic,
                        options(pure, nomem, nostack, preserves_flags),
                    )
                };
                // SAFETY: byte 16 of the launch's dynamic shared memory is a
                // shared address (the launch gives it more than 16 bytes).
                let base = unsafe { $crate::device::shared::assume_shared(generic as *mut u8) };
                base.wrapping_sub(16) as *mut $ty
            }
        }
    };
}
// ANCHOR_END: dynamic_shared
