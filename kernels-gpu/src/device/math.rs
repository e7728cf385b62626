//! Arithmetic that must compile to one specific instruction.

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
