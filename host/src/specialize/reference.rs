//! The specialize lesson's CPU reference, written for obvious correctness.
//!
//! Inputs are formulas of the index: odd multiples of 2^-24 in (-1, 1), so
//! no input and no product is zero (no +0 / -0 question) and the products
//! need more than 24 bits (every fused multiply-add rounds, so an unfused
//! multiply then add would give different bits somewhere).
//!
//! Two references per dot:
//! - [`dot_fma_f32`]: the kernels' own order of operations, one
//!   correctly rounded fused multiply-add per term from +0, in f32. The GPU
//!   must match it bit for bit: an `fma.rn.f32` is correctly rounded on
//!   every architecture, and so is `f32::mul_add`.
//! - [`dot_f64`]: the exact-ish sum in f64, which the f32 result must be
//!   within [`error_bound`] of: the classic bound for a recursive sum of N
//!   products, gamma_N * sum |x_k y_k| with gamma_N = N u / (1 - N u), u =
//!   2^-24 (Higham, Accuracy and Stability of Numerical Algorithms, 3.1).

/// An odd multiple of 2^-24 in (-1, 1) from a hash of `i` and `seed`.
fn fill(i: usize, seed: u64) -> f32 {
    // The top 23 bits of the index's hash (see `crate::fill`).
    let m = (crate::fill::hash(i, seed) >> 41) as u32;
    let numerator = 2 * m as i32 + 1 - (1 << 24); // odd, |.| < 2^24: exact in f32
    numerator as f32 / (1u32 << 24) as f32
}

/// Element `i` of the x input (the flat buffer, `k * count + v`).
pub fn fill_x(i: usize) -> f32 {
    fill(i, 0x1)
}

/// Element `i` of the y input.
pub fn fill_y(i: usize) -> f32 {
    fill(i, 0x2)
}

/// The first `len` elements of `fill`.
pub fn input(len: usize, fill: fn(usize) -> f32) -> Vec<f32> {
    (0..len).map(fill).collect()
}

/// Dot `v` of `count` dots of length `n` in the structure-of-arrays
/// layout, as the kernels compute it: `sum = fma(x_k, y_k, sum)` for k = 0,
/// 1, ..., n - 1 from +0, in f32.
pub fn dot_fma_f32(x: &[f32], y: &[f32], n: usize, count: usize, v: usize) -> f32 {
    let mut sum = 0.0f32;
    for k in 0..n {
        sum = x[k * count + v].mul_add(y[k * count + v], sum);
    }
    sum
}

/// The same dot accumulated in f64 (each product exact in f64: 24 + 24
/// bits), and the sum of the products' magnitudes for the error bound.
pub fn dot_f64(x: &[f32], y: &[f32], n: usize, count: usize, v: usize) -> (f64, f64) {
    let mut sum = 0.0f64;
    let mut magnitude = 0.0f64;
    for k in 0..n {
        let p = f64::from(x[k * count + v]) * f64::from(y[k * count + v]);
        sum += p;
        magnitude += p.abs();
    }
    (sum, magnitude)
}

/// gamma_n * `magnitude`: how far an f32 recursive sum of `n` products may
/// be from the exact sum, whatever the order and with or without fused
/// multiply-adds.
pub fn error_bound(n: usize, magnitude: f64) -> f64 {
    let u = f64::from(f32::EPSILON) / 2.0;
    let nu = n as f64 * u;
    nu / (1.0 - nu) * magnitude
}

/// All `count` dots of length `n`, bit for bit as the kernels must give
/// them.
pub fn dots_fma_f32(x: &[f32], y: &[f32], n: usize, count: usize) -> Vec<f32> {
    (0..count).map(|v| dot_fma_f32(x, y, n, count, v)).collect()
}
