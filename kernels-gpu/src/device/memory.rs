//! Global-memory loads through the read-only data path, and the strided
//! dot product built on them ([`dot_strided`]); also [`load_v2`], a
//! coherent 8-byte load kept coherent on purpose (its docs say why), and
//! predicated stores.
//!
//! nvcc loads `const T* __restrict__` inputs with `ld.global.nc` (SASS
//! `LDG.E.CONSTANT`): the non-coherent path through the texture/L1 cache,
//! legal because the kernel promises nothing writes that memory while it
//! runs. A Rust `*const f32` gives LLVM no such promise and becomes a plain
//! `ld.global`. The NVVM intrinsic below states it for one load; LLVM
//! merges neighbouring ones into `ld.global.nc.v2`/`.v4` where it can.
//!
//! The intrinsic's name is one LLVM keeps for compatibility and upgrades on
//! load; `tests/cpu_roofline.rs` checks the PTX still shows `ld.global.nc`.
//!
//! [`Float4`] is CUDA's `float4`: 16 bytes, 16-byte aligned, moved by one
//! 128-bit load or store (`ld.global.nc.v4.f32` / `st.global.v4`, SASS
//! `LDG.E.128.CONSTANT` / `STG.E.128`).

use crate::device::math::fma;

unsafe extern "C" {
    #[link_name = "llvm.nvvm.ldg.global.f.f32.p0"]
    fn ldg_f32(p: *const f32, align: i32) -> f32;
}

// ANCHOR: load_readonly
/// Reads `*p` through the read-only data path (`ld.global.nc.f32`).
///
/// # Safety
/// `p` is a valid, 4-byte-aligned pointer into global memory, and nothing
/// writes that address for the rest of the kernel (the `__restrict__`
/// promise). A pointer into shared or local memory is undefined behaviour.
#[inline(always)]
pub unsafe fn load_readonly(p: *const f32) -> f32 {
    // SAFETY: the caller upholds the contract above.
    unsafe { ldg_f32(p, 4) }
}
// ANCHOR_END: load_readonly

// ANCHOR: dot_strided
/// The dot product of `len` floats of `a`, `a_step` apart, with `len`
/// floats of `b`, `b_step` apart (steps in elements): `acc = fma(a[p *
/// a_step], b[p * b_step], acc)` for p = 0, 1, ... in ascending order from
/// `acc = 0`, each element read once through the read-only path
/// ([`load_readonly`]). A row of a row-major matrix is `a_step = 1`, a
/// column of one with `n` columns is `b_step = n`.
///
/// # Memory
/// Two pointers walk the vectors, each advanced by its step after every
/// FMA: the loop nvcc's strength reduction makes of `a[row * k + p] *
/// b[p * n + col]`. LLVM unrolls it (8 steps a trip at rustc 1.95) with the
/// B addresses one add of the same stride apart. Written with the index
/// instead, `b.add(p * n + col)`, LLVM kept one 64-bit multiple of the
/// stride per unrolled step (`4n`, `8n`, `12n`, `16n`), and `gemm_naive`
/// took 1.077 of its twin's time at 4096^3, against 0.926 with this walk
/// (docs/results/h200-2026-12-02-naive-loops). A loop that must also
/// handle a remainder (`len` not a multiple of the unroll) carries a copy
/// of the B pointer to start it from; where the launch assumption makes
/// `len` a multiple of a tile, say so first
/// ([`assume_whole_tiles`](crate::device::launch::assume_whole_tiles)).
///
/// # Safety
/// Every element read (`a[p * a_step]`, `b[p * b_step]` for p < `len`) is
/// inside its allocation, 4-byte aligned, and not written during the
/// kernel ([`load_readonly`]'s contract). Nothing is required of the
/// addresses past the last element: the pointers step with
/// `wrapping_add`, since a column's walk ends `b_step` floats past its
/// last element, outside the matrix for every column but the last.
#[inline(always)]
pub unsafe fn dot_strided(
    a: *const f32,
    a_step: usize,
    b: *const f32,
    b_step: usize,
    len: usize,
) -> f32 {
    let (mut pa, mut pb) = (a, b);
    let mut acc = 0.0f32;
    for _ in 0..len {
        // SAFETY: p < len: inside both vectors (the caller's contract).
        acc = fma(
            unsafe { load_readonly(pa) },
            unsafe { load_readonly(pb) },
            acc,
        );
        pa = pa.wrapping_add(a_step);
        pb = pb.wrapping_add(b_step);
    }
    acc
}
// ANCHOR_END: dot_strided

// ANCHOR: float4
/// Four floats moved as one 16-byte access, like CUDA's `float4`.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct Float4 {
    /// Element 0.
    pub x: f32,
    /// Element 1.
    pub y: f32,
    /// Element 2.
    pub z: f32,
    /// Element 3.
    pub w: f32,
}
// ANCHOR_END: float4

// ANCHOR: load_readonly_v4
/// Reads `*p` with one 128-bit load through the read-only path
/// (`ld.global.nc.v4.f32`), as CUDA's `__ldg(const float4*)` does: inline
/// PTX with the generic address, which on every supported GPU is the global
/// address itself.
///
/// # Safety
/// As [`load_readonly`], with `p` 16-byte aligned.
#[inline(always)]
pub unsafe fn load_readonly_v4(p: *const Float4) -> Float4 {
    let (x, y, z, w): (f32, f32, f32, f32);
    // SAFETY: the caller guarantees `p` is a valid, aligned global address
    // that nothing writes during the kernel; the asm only reads 16 bytes.
    unsafe {
        core::arch::asm!(
            "ld.global.nc.v4.f32 {{{x}, {y}, {z}, {w}}}, [{p}];",
            p = in(reg64) p,
            x = out(reg32) x,
            y = out(reg32) y,
            z = out(reg32) z,
            w = out(reg32) w,
            options(pure, readonly, nostack, preserves_flags),
        )
    };
    Float4 { x, y, z, w }
}
// ANCHOR_END: load_readonly_v4

// ANCHOR: predicated
/// `*p` through the read-only path where `in_range`, else 0.0, as a
/// predicated load with no branch: `setp` on `in_range`, the result set to
/// 0, then `@q ld.global.nc.f32` (SASS `@!P LDG.E.CONSTANT`).
///
/// The Rust `if i < n { load_readonly(p) } else { 0.0 }` becomes a branch
/// in LLVM's PTX, and LLVM sinks the element's arithmetic into the guarded
/// block; in unrolled code that makes a run of blocks too large for ptxas
/// to turn into predicated code, so it schedules them one at a time and
/// keeps every value live to the end. NVRTC's PTX also branches, but around
/// the load alone, which ptxas turns into a predicated load. This writes
/// the predicate into the PTX directly. Use it with [`store_if`] for
/// elementwise guards in unrolled code (`fusion::chain_fused_wide`).
///
/// The address goes to `ld.global` as it is, a generic address, which on
/// every supported GPU is the global address itself (as for
/// [`load_readonly_v4`]).
///
/// # Safety
/// Where `in_range`, as [`load_readonly`]. Elsewhere `p` is not read and
/// may be any address (form it with `wrapping_add`).
#[inline(always)]
pub unsafe fn load_readonly_if(in_range: bool, p: *const f32) -> f32 {
    let v: f32;
    // SAFETY: the load runs only where in_range, where the caller
    // guarantees p is a valid global address nothing writes.
    unsafe {
        core::arch::asm!(
            "{{\n\t.reg .pred q;\n\tsetp.ne.u32 q, {c}, 0;\n\tmov.b32 {v}, 0f00000000;\n\t@q ld.global.nc.f32 {v}, [{p}];\n\t}}",
            c = in(reg32) in_range as u32,
            p = in(reg64) p,
            v = out(reg32) v,
            options(pure, readonly, nostack, preserves_flags),
        )
    };
    v
}

/// `*p = v` where `in_range`, as a predicated store with no branch (`setp`
/// on `in_range`, then `@q st.global.f32`, SASS `@P STG.E`): the store half
/// of [`load_readonly_if`], with the same generic-address convention.
///
/// # Safety
/// Where `in_range`, `p` is a valid, 4-byte-aligned global address that
/// no other thread accesses during the kernel. Elsewhere `p` is not
/// written and may be any address.
#[inline(always)]
pub unsafe fn store_if(in_range: bool, p: *mut f32, v: f32) {
    // SAFETY: the store runs only where in_range, as the caller guarantees.
    unsafe {
        core::arch::asm!(
            "{{\n\t.reg .pred q;\n\tsetp.ne.u32 q, {c}, 0;\n\t@q st.global.f32 [{p}], {v};\n\t}}",
            c = in(reg32) in_range as u32,
            p = in(reg64) p,
            v = in(reg32) v,
            options(nostack, preserves_flags),
        )
    };
}
// ANCHOR_END: predicated

/// The pair `p[0..2]` with one 8-byte load through the coherent path
/// (`ld.global.v2.f32`, SASS `LDG.E.64`), with the generic-address
/// convention of [`load_readonly_v4`]; no predicate.
///
/// Not the read-only path on purpose. ptxas may move a store above an
/// `ld.global.nc` (it promises nothing writes that memory), but not above a
/// load the store might alias: so a run of these loads followed by stores
/// through another pointer stays in that order, the loads all issued
/// before the first store waits on one. The GEMM epilogue reads C this way
/// (`gemm::mma_tiles::store_tile_row`). Read through predicated
/// `ld.global.nc`, and also through unpredicated `ld.global.nc` (tried),
/// ptxas 12.9 and 13.0 moved its stores up among its loads, a store
/// waiting on its load while others were yet to be issued
/// (docs/results/cpu-2026-12-06-epilogue-order). A pair that may lie
/// outside is read from an address known to be inside and its value left
/// unused, so the load holds no predicate.
///
/// # Safety
/// `p` is an 8-byte-aligned global address of two floats.
#[inline(always)]
pub unsafe fn load_v2(p: *const f32) -> [f32; 2] {
    let (x, y): (f32, f32);
    // SAFETY: the caller guarantees `p` is a valid, aligned global address;
    // the asm only reads 8 bytes.
    unsafe {
        core::arch::asm!(
            "ld.global.v2.f32 {{{x}, {y}}}, [{p}];",
            p = in(reg64) p,
            x = out(reg32) x,
            y = out(reg32) y,
            options(pure, readonly, nostack, preserves_flags),
        )
    };
    [x, y]
}

/// `p[0..2] = v` where `in_range`: [`store_if`] 8 bytes wide (`@q
/// st.global.v2.f32`, SASS `STG.E.64`).
///
/// # Safety
/// Where `in_range`, `p` is an 8-byte-aligned global address of two floats
/// no other thread accesses during the kernel. Elsewhere `p` is not
/// written.
#[inline(always)]
pub unsafe fn store_v2_if(in_range: bool, p: *mut f32, v: [f32; 2]) {
    // SAFETY: the store runs only where in_range, as the caller guarantees.
    unsafe {
        core::arch::asm!(
            "{{\n\t.reg .pred q;\n\tsetp.ne.u32 q, {c}, 0;\n\t@q st.global.v2.f32 [{p}], {{{x}, {y}}};\n\t}}",
            c = in(reg32) in_range as u32,
            p = in(reg64) p,
            x = in(reg32) v[0],
            y = in(reg32) v[1],
            options(nostack, preserves_flags),
        )
    };
}

// ANCHOR: opaque_index
/// `i`, unchanged, as one value LLVM cannot look inside: an empty `asm!`
/// (no PTX instruction) that the address arithmetic after it must start
/// from.
///
/// nvcc turns `in[row * side + col]` into one wide multiply-add and one
/// shift-add (`IMAD.WIDE.U32` + `LEA`). LLVM's NVPTX passes instead split
/// the sum and reassociate it: the row's and the column's parts of the
/// address are formed separately and added later, which costs a few more
/// integer instructions per thread. Passing the finished index through
/// `opaque_index` keeps it whole; ptxas then forms the address as it does
/// for nvcc. Measured on the H200: `conv2d_valid` matches its twin's SASS
/// instruction count this way, and `transpose_tiled` did too, with its
/// shared address still formed otherwise until [`SharedPtr::row`](crate::device::shared::SharedPtr::row)
/// (the book chapter "Fast Rust kernels" has the before and after). Use it on an
/// index that is a product plus a sum, in a short kernel where a few
/// integer instructions show; it also stops LLVM from sharing parts of two
/// such indices, so check the SASS (`cargo xtask asm`) before and after.
///
/// It also keeps `base + lane` an `add` where LLVM knows `base`'s low bits
/// are zero (`base = g * 4`) and would write `or.b64`: after an `or`,
/// ptxas branched around two of `add_unrolled_4`'s four guarded lanes
/// instead of predicating them (1.007 of the twin's time before, parity
/// after: docs/results/h200-2026-12-02-guards).
#[inline(always)]
pub fn opaque_index(mut i: usize) -> usize {
    // SAFETY: an empty template that leaves the register as it is.
    unsafe {
        core::arch::asm!("// index: {0}", inout(reg64) i, options(pure, nomem, nostack, preserves_flags))
    };
    i
}
// ANCHOR_END: opaque_index

// ANCHOR: opaque_u32
/// `v`, unchanged, as a 32-bit value LLVM cannot look inside (an empty
/// `asm!`, no PTX instruction): for a bound that two guards share.
///
/// nvcc compiles `if (row >= m || col >= m) return;` as two compares
/// (`ISETP.GE` then `ISETP.GE.OR` into one predicate). LLVM folds two
/// compares against one bound into one compare of their maximum
/// (`max.u32` then `setp`, SASS `VIMNMX` then `ISETP`). Comparing the
/// second coordinate against `opaque_u32(m)` leaves LLVM two different
/// bounds, so the compares stay two; joined with `|` or `&` (with `||` or
/// `&&` LLVM emits two branches, two `EXIT`s), as in
/// `if (row >= m) | (col >= opaque_u32(m)) { return; }`, ptxas builds the
/// twin's guard (`conv2d_valid`; `heat_step_global` with `&` and `<`).
/// The guard's form did not decide either kernel's time (the book chapter
/// "Fast Rust kernels"): it is there so that the SASS matches the twin's
/// and what is left to compare is what differs.
#[inline(always)]
pub fn opaque_u32(mut v: u32) -> u32 {
    // SAFETY: an empty template that leaves the register as it is.
    unsafe {
        core::arch::asm!("// bound: {0}", inout(reg32) v, options(pure, nomem, nostack, preserves_flags))
    };
    v
}
// ANCHOR_END: opaque_u32

/// `a * b` as the full 64-bit product of two signed 32-bit values: one PTX
/// `mul.wide.s32`, one SASS `IMAD.WIDE` (or the first half of an
/// `IMAD.WIDE` that also adds).
///
/// nvcc writes `(size_t)row * n` with `int row, n` this way. LLVM, once it
/// has proved `row` non-negative (from a guard such as `row < n - 1`),
/// widens it with a zero extension instead and multiplies in 64 bits
/// (`mad.lo.s64`), which ptxas builds from an unsigned `IMAD.WIDE.U32` and
/// a correction for the sign of `n`: two more integer instructions (seen
/// at sm_90 on `heat_step_global`, whose SASS then had the twin's 46
/// instructions; with `opaque_u32` and not the read order of
/// `thread::global_index_x_u32`, its time did not move: the book chapter
/// "Fast Rust kernels"). The product cannot overflow: `|a * b| <= 2^62`.
#[inline(always)]
pub fn mul_wide_i32(a: i32, b: i32) -> i64 {
    let product: i64;
    // SAFETY: one arithmetic instruction on registers; no memory.
    unsafe {
        core::arch::asm!(
            "mul.wide.s32 {p}, {a}, {b};",
            p = out(reg64) product,
            a = in(reg32) a,
            b = in(reg32) b,
            options(pure, nomem, nostack, preserves_flags),
        )
    };
    product
}
