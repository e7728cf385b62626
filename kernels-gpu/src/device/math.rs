//! Arithmetic that must compile to one specific instruction.

// ANCHOR: fma
/// `a * b + c` rounded once: PTX `fma.rn.f32`, SASS `FFMA`.
///
/// nvcc contracts `a * b + c` into an FMA by default (`--fmad=true`); rustc
/// never does, and ptxas will not fuse the separate `mul.rn` and `add.rn`
/// that rustc emits. Kernels whose arithmetic is a multiply-add call this,
/// so the FLOP count, the speed and the rounding match the CUDA C twin.
#[inline(always)]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    core::intrinsics::fmaf32(a, b, c)
}
// ANCHOR_END: fma

// ANCHOR: exp2_approx
/// `2^x` by the special-function unit: PTX `ex2.approx.ftz.f32` (SASS
/// `MUFU.EX2`), maximum relative error about 2^-22 (PTX ISA), subnormal
/// results flushed to zero.
#[inline(always)]
pub fn exp2_approx(x: f32) -> f32 {
    let y: f32;
    // SAFETY: a register-to-register instruction with no side effects.
    unsafe {
        core::arch::asm!("ex2.approx.ftz.f32 {y}, {x};", y = out(reg32) y, x = in(reg32) x, options(pure, nomem, nostack))
    };
    y
}
// ANCHOR_END: exp2_approx

// ANCHOR: rcp_approx
/// `1 / x` by the special-function unit: PTX `rcp.approx.ftz.f32`, within
/// about 1 ulp; `1 / inf` is 0.
#[inline(always)]
pub fn rcp_approx(x: f32) -> f32 {
    let y: f32;
    // SAFETY: as above.
    unsafe {
        core::arch::asm!("rcp.approx.ftz.f32 {y}, {x};", y = out(reg32) y, x = in(reg32) x, options(pure, nomem, nostack))
    };
    y
}
// ANCHOR_END: rcp_approx

/// Coefficients of `tanh(x) = x + x^3 * P(x^2)` on `|x| < 0.55`, P of degree
/// 4 (lowest first). Fitted here by weighted least squares on 2000
/// Chebyshev nodes against numpy's tanh in double: relative error under
/// 1.2e-9 in exact arithmetic, so f32 rounding (6e-8) dominates.
pub const TANH_SMALL: [f32; 5] = [
    -0.333_333_2,
    0.133_326_32,
    -0.053_856_663,
    0.021_088_185,
    -0.006_296_012,
];

/// Where `tanh` switches from the odd polynomial to the exponential form.
pub const TANH_SPLIT: f32 = 0.55;

// ANCHOR: tanh
/// `tanh(x)` in f32, accurate to about 1e-7 absolute over all inputs (the
/// fusion lesson checks the whole chain against f64 within 1e-6 absolute +
/// 1e-5 relative).
///
/// Why not the alternatives: the device's `tanh.approx.f32` has a relative
/// error of about 2^-11 (5e-4), far outside that tolerance; `libm::tanhf`
/// builds for nvptx but compiles to 570 PTX lines with a local-memory stack
/// frame and IEEE divisions. This one is a polynomial for small `|x|`
/// (where `1 - 2 / (1 + e^{2x})` would cancel) and, above, that form with
/// `e^{2|x|}` from `ex2.approx` and the division from `rcp.approx`; for
/// large `|x|` the exponential overflows to infinity and the result is
/// exactly 1. The sign is restored last.
#[inline(always)]
pub fn tanh(x: f32) -> f32 {
    let a = f32::from_bits(x.to_bits() & 0x7fff_ffff);
    // Both forms, then a select: no branch, so a loop over several values
    // (the widened fusion kernels) unrolls into straight-line code.
    let u = a * a;
    let p = fma(
        fma(
            fma(fma(TANH_SMALL[4], u, TANH_SMALL[3]), u, TANH_SMALL[2]),
            u,
            TANH_SMALL[1],
        ),
        u,
        TANH_SMALL[0],
    );
    let small = fma(a * u, p, a);
    // e^{2a} = 2^{2a log2(e)}
    let e = exp2_approx(a * 2.885_390_08);
    let large = fma(-2.0, rcp_approx(1.0 + e), 1.0);
    let r: f32;
    // A select in PTX (`selp`): written in asm because LLVM turns a Rust
    // `if` over two computed values back into a branch.
    // SAFETY: register-only instructions with no side effects.
    unsafe {
        core::arch::asm!(
            "{{ .reg .pred p; setp.lt.f32 p, {a}, {split}; selp.f32 {r}, {small}, {large}, p; }}",
            r = out(reg32) r,
            a = in(reg32) a,
            split = in(reg32) TANH_SPLIT,
            small = in(reg32) small,
            large = in(reg32) large,
            options(pure, nomem, nostack),
        )
    };
    f32::from_bits(r.to_bits() | (x.to_bits() & 0x8000_0000))
}
// ANCHOR_END: tanh
