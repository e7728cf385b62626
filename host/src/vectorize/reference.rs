//! The vectorize lesson's CPU reference, written for obvious correctness:
//! the inputs as plain formulas of the index (f64, rounded once to the
//! element type), and each sum as one correctly rounded add in the element
//! type. For halves: the f32 sum of two halves, rounded once to half, which
//! is the correctly rounded half sum because f32 carries at least 2 x 11 + 2
//! significand bits (24), so the double rounding is innocuous.

use half::f16;

use super::Dtype;

/// A 53-bit fraction in [0, 1) from a hash of the index (see
/// [`crate::fill`]), so that inputs carry every significand bit and no
/// shifted index reads the same value.
fn mix(i: usize, stream: u64) -> f64 {
    (crate::fill::hash(i, stream) >> 11) as f64 / (1u64 << 53) as f64
}

/// The first input at index `i`: values in [-4, 4) with all 53 bits used,
/// so that a sum rounds in every type (checked in tests/cpu_vectorize.rs).
pub fn fill_a(i: usize) -> f64 {
    mix(i, 0x1) * 8.0 - 4.0
}

/// The second input at index `i`: values in [0, 0.25), a smaller exponent
/// than most of a, so aligning the two discards bits and the sum rounds.
pub fn fill_b(i: usize) -> f64 {
    mix(i, 0x2) * 0.25
}

/// `v` as `dtype` (rounded to nearest even), widened back to f64.
pub fn as_dtype(dtype: Dtype, v: f64) -> f64 {
    match dtype {
        Dtype::F32 => f64::from(v as f32),
        Dtype::F64 => v,
        Dtype::F16 => f64::from(f16::from_f64(v).to_f32()),
    }
}

/// The first `n` elements of `fill` as `dtype`, little-endian bytes.
pub fn input_bytes(dtype: Dtype, n: usize, fill: fn(usize) -> f64) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * dtype.size());
    for i in 0..n {
        let v = fill(i);
        match dtype {
            Dtype::F32 => out.extend_from_slice(&(v as f32).to_le_bytes()),
            Dtype::F64 => out.extend_from_slice(&v.to_le_bytes()),
            Dtype::F16 => out.extend_from_slice(&f16::from_f64(v).to_le_bytes()),
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
                Dtype::F32 => u64::from((a as f32 + b as f32).to_bits()),
                Dtype::F64 => (a + b).to_bits(),
                Dtype::F16 => {
                    let (a, b) = (f16::from_f64(a), f16::from_f64(b));
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
