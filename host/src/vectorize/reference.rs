//! The vectorize lesson's CPU reference, written for obvious correctness:
//! the inputs as plain formulas of the index, and each sum as one correctly
//! rounded add in the element type (for halves: the f32 sum of two halves,
//! rounded once to half, which is the correctly rounded half sum because
//! f32 carries more than 2 x 11 + 2 significand bits).

use half::f16;

use super::Dtype;

/// The first input at index `i`: values in [-5, 5) with a fractional part,
/// exact in f32, f64 and f16 (multiples of 1/64 under 8 in magnitude).
pub fn fill_a(i: usize) -> f32 {
    ((i * 37) % 640) as f32 / 64.0 - 5.0
}

/// The second input at index `i`: values in [0, 3), multiples of 1/128.
pub fn fill_b(i: usize) -> f32 {
    ((i * 11) % 384) as f32 / 128.0
}

/// The first `n` elements of `fill` as `dtype`, little-endian bytes.
pub fn input_bytes(dtype: Dtype, n: usize, fill: fn(usize) -> f32) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * dtype.size());
    for i in 0..n {
        let v = fill(i);
        match dtype {
            Dtype::F32 => out.extend_from_slice(&v.to_le_bytes()),
            Dtype::F64 => out.extend_from_slice(&f64::from(v).to_le_bytes()),
            Dtype::F16 => out.extend_from_slice(&f16::from_f32(v).to_le_bytes()),
        }
    }
    out
}

/// The bits of a + b at each of the first `n` indices, in `dtype`.
pub fn sum_bits(dtype: Dtype, n: usize) -> Vec<u64> {
    (0..n)
        .map(|i| {
            let (a, b) = (fill_a(i), fill_b(i));
            match dtype {
                Dtype::F32 => u64::from((a + b).to_bits()),
                Dtype::F64 => (f64::from(a) + f64::from(b)).to_bits(),
                Dtype::F16 => {
                    let (a, b) = (f16::from_f32(a), f16::from_f32(b));
                    u64::from(f16::from_f32(a.to_f32() + b.to_f32()).to_bits())
                }
            }
        })
        .collect()
}

/// Each element's bits from a little-endian byte buffer of `dtype`.
pub fn bits_of(dtype: Dtype, bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(dtype.size())
        .map(|c| match dtype {
            Dtype::F32 => u64::from(u32::from_le_bytes(c.try_into().expect("4 bytes"))),
            Dtype::F64 => u64::from_le_bytes(c.try_into().expect("8 bytes")),
            Dtype::F16 => u64::from(u16::from_le_bytes(c.try_into().expect("2 bytes"))),
        })
        .collect()
}

/// An element's value from its bits, for a failure message.
pub fn show(dtype: Dtype, bits: u64) -> String {
    match dtype {
        Dtype::F32 => format!("{:e}", f32::from_bits(bits as u32)),
        Dtype::F64 => format!("{:e}", f64::from_bits(bits)),
        Dtype::F16 => format!("{:e}", f16::from_bits(bits as u16).to_f32()),
    }
}
