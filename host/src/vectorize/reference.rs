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

/// The bits of a + b at index `i`, in `dtype`.
pub fn sum_bit(dtype: Dtype, i: usize) -> u64 {
    let (a, b) = (fill_a(i), fill_b(i));
    match dtype {
        Dtype::F32 => u64::from((a as f32 + b as f32).to_bits()),
        Dtype::F64 => (a + b).to_bits(),
        Dtype::F16 => {
            let (a, b) = (f16::from_f64(a), f16::from_f64(b));
            u64::from(f16::from_f32(a.to_f32() + b.to_f32()).to_bits())
        }
    }
}

/// The bits of a + b at each of the first `n` indices, in `dtype`.
pub fn sum_bits(dtype: Dtype, n: usize) -> Vec<u64> {
    (0..n).map(|i| sum_bit(dtype, i)).collect()
}

/// The sums a + b of the first `n` indices as `dtype`'s little-endian
/// bytes: what a right kernel writes, byte for byte.
pub fn sum_bytes(dtype: Dtype, n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * dtype.size());
    for i in 0..n {
        let bits = sum_bit(dtype, i);
        out.extend_from_slice(&bits.to_le_bytes()[..dtype.size()]);
    }
    out
}

/// The seed's small launches' first input: `a[i] = i + 1` (seed 000's
/// 8-element launch), exact in every type here.
pub fn seed_a(i: usize) -> f64 {
    (i + 1) as f64
}

/// The seed's small launches' second input: `b[i] = 100 (i + 1)`, so each
/// sum reads as the index twice (101, 202, ...) and a wrong index shows.
pub fn seed_b(i: usize) -> f64 {
    100.0 * (i + 1) as f64
}

/// `a + b` of one element in `dtype`, each rounded to the type first and
/// the sum rounded once: the host reference of the seed's launches.
pub fn add_in(dtype: Dtype, a: f64, b: f64) -> f64 {
    match dtype {
        Dtype::F32 => f64::from(a as f32 + b as f32),
        Dtype::F64 => a + b,
        Dtype::F16 => {
            let (a, b) = (f16::from_f64(a), f16::from_f64(b));
            f64::from(f16::from_f32(a.to_f32() + b.to_f32()).to_f32())
        }
    }
}

/// `v` as `dtype`'s little-endian bytes (rounded to nearest even).
pub fn to_bytes(dtype: Dtype, v: f64) -> Vec<u8> {
    match dtype {
        Dtype::F32 => (v as f32).to_le_bytes().to_vec(),
        Dtype::F64 => v.to_le_bytes().to_vec(),
        Dtype::F16 => f16::from_f64(v).to_le_bytes().to_vec(),
    }
}

/// An element's value from its bits, widened to f64.
pub fn value_of(dtype: Dtype, bits: u64) -> f64 {
    match dtype {
        Dtype::F32 => f64::from(f32::from_bits(bits as u32)),
        Dtype::F64 => f64::from_bits(bits),
        Dtype::F16 => f64::from(f16::from_bits(bits as u16).to_f32()),
    }
}

/// Each element's bits from a little-endian byte buffer of `dtype`.
pub fn bits_of(dtype: Dtype, bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(dtype.size())
        .map(|c| element_bits(dtype, c))
        .collect()
}

/// One element's bits from its `dtype.size()` little-endian bytes.
///
/// # Panics
/// When `bytes` is not one element long (a caller bug).
pub fn element_bits(dtype: Dtype, c: &[u8]) -> u64 {
    match dtype {
        Dtype::F32 => u64::from(u32::from_le_bytes(c.try_into().expect("4 bytes"))),
        Dtype::F64 => u64::from_le_bytes(c.try_into().expect("8 bytes")),
        Dtype::F16 => u64::from(u16::from_le_bytes(c.try_into().expect("2 bytes"))),
    }
}

/// An element's value from its bits, for a failure message.
pub fn show(dtype: Dtype, bits: u64) -> String {
    match dtype {
        Dtype::F32 => format!("{:e}", f32::from_bits(bits as u32)),
        Dtype::F64 => format!("{:e}", f64::from_bits(bits)),
        Dtype::F16 => format!("{:e}", f16::from_bits(bits as u16).to_f32()),
    }
}
