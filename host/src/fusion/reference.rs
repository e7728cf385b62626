//! The fusion lesson's CPU reference and inputs, written for obvious
//! correctness: the chain in f64 with the f32 constants promoted (so the
//! reference checks the kernels' arithmetic, not how many digits were
//! typed), a plain loop.

use kernels_gpu::fusion::{BETA, GAMMA, GELU_A, GELU_B, HI, LO};

/// The input: [-4, 4) in steps of 1/256, in a hashed order, so stage 1
/// gives [-6.25, 5.75) and the clamp at HI = 3 catches a real share.
pub fn fill_x(i: usize) -> f32 {
    (crate::fill::below(i, 0x1, 2048) as f32 / 1024.0 - 1.0) * 4.0
}

/// The residual: [-0.5, 0.5) in steps of 1/97, in a hashed order.
pub fn fill_r(i: usize) -> f32 {
    crate::fill::below(i, 0x2, 97) as f32 / 97.0 - 0.5
}

/// The four stages on one element, in f64.
pub fn chain(x: f32, r: f32) -> f64 {
    let mut v = x as f64 * GAMMA as f64 + BETA as f64;
    let inner = GELU_A as f64 * (v + GELU_B as f64 * v * v * v);
    v = 0.5 * v * (1.0 + inner.tanh());
    v += r as f64;
    v.clamp(LO as f64, HI as f64)
}
