//! The harness lesson's CPU reference, written for obvious correctness:
//! the inputs as formulas of the index, each sum one correctly rounded f32
//! add (so the GPU's `add.rn.f32` must match it bit for bit).

/// The first input at index `i`: multiples of 1/64 in [-5, 5), exact in
/// f32, in a hashed order.
pub fn fill_a(i: usize) -> f32 {
    crate::fill::below(i, 0x1, 640) as f32 / 64.0 - 5.0
}

/// The second input at index `i`: multiples of 1/128 in [0, 3), in a
/// hashed order.
pub fn fill_b(i: usize) -> f32 {
    crate::fill::below(i, 0x2, 384) as f32 / 128.0
}

/// The first `n` elements of `fill`.
pub fn input(n: usize, fill: fn(usize) -> f32) -> Vec<f32> {
    (0..n).map(fill).collect()
}

/// `out[i] = a[i] + b[i]`: the seed's `vector_add_workload`, the host
/// mirror the lesson also times on the CPU.
///
/// # Panics
/// When `a` or `b` is shorter than `out`.
pub fn vector_add(out: &mut [f32], a: &[f32], b: &[f32]) {
    assert!(
        a.len() >= out.len() && b.len() >= out.len(),
        "inputs too short"
    );
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        *o = x + y;
    }
}
