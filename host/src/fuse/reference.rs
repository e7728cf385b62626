//! The fuse lesson's CPU reference and host mirrors, written for obvious
//! correctness: the inputs as plain formulas of the index; each stage as
//! the f32 operation the kernel does (a product, a sum, each rounded once,
//! and a compare), so the GPU must match bit for bit; and the seed's two
//! pipelines with a counter on every tensor-sized read and write.

/// Tensor-sized reads and writes a pipeline made, counted one per element
/// access.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemOps {
    /// Element reads.
    pub reads: usize,
    /// Element writes.
    pub writes: usize,
}

impl MemOps {
    /// Reads plus writes.
    pub fn total(self) -> usize {
        self.reads + self.writes
    }

    /// The counts divided by the tensor length: tensor-sized reads and
    /// writes.
    pub fn per_element(self, size: usize) -> MemOps {
        MemOps {
            reads: self.reads / size,
            writes: self.writes / size,
        }
    }
}

/// `max(z, 0)` as the seed and the kernels write it: `z > 0 ? z : 0`.
pub fn relu(z: f32) -> f32 {
    if z > 0.0 { z } else { 0.0 }
}

/// `out = relu(a * b + c)` as three passes over memory (multiply into t1,
/// add into t2, relu into out), counting every element read and write.
///
/// # Panics
/// When the slices differ in length.
pub fn unfused_pipeline(a: &[f32], b: &[f32], c: &[f32], out: &mut [f32]) -> MemOps {
    let n = a.len();
    let mut ops = MemOps::default();
    let mut t1 = vec![0.0f32; n];
    let mut t2 = vec![0.0f32; n];
    for i in 0..n {
        t1[i] = a[i] * b[i];
        ops.reads += 2;
        ops.writes += 1;
    }
    for i in 0..n {
        t2[i] = t1[i] + c[i];
        ops.reads += 2;
        ops.writes += 1;
    }
    for i in 0..n {
        out[i] = relu(t2[i]);
        ops.reads += 1;
        ops.writes += 1;
    }
    ops
}

/// `out = relu(a * b + c)` in one pass, the product and sum in locals,
/// counting every element read and write.
///
/// # Panics
/// When the slices differ in length.
pub fn fused_pipeline(a: &[f32], b: &[f32], c: &[f32], out: &mut [f32]) -> MemOps {
    let mut ops = MemOps::default();
    for i in 0..a.len() {
        // Written as two operations: the product rounded, then the sum
        // (Rust never contracts this into one FMA).
        let product = a[i] * b[i];
        out[i] = relu(product + c[i]);
        ops.reads += 3;
        ops.writes += 1;
    }
    ops
}

/// `relu(a * b + c)` with `a * b + c` rounded once (a correctly rounded
/// FMA, `f32::mul_add`): the reference of the fused FMA kernel.
pub fn fused_fma(a: &[f32], b: &[f32], c: &[f32]) -> Vec<f32> {
    a.iter()
        .zip(b)
        .zip(c)
        .map(|((&x, &y), &z)| relu(x.mul_add(y, z)))
        .collect()
}

/// The lesson's six-element example: the first element is
/// relu(1 * 2 + 0) = 2, the others land at or below zero (-1, -1, -1, 0,
/// 0) and clamp to 0.
pub const EXAMPLE_A: [f32; 6] = [1.0, 3.0, -2.0, 0.5, 4.0, -1.0];
/// See [`EXAMPLE_A`].
pub const EXAMPLE_B: [f32; 6] = [2.0, -1.0, 2.0, -4.0, 0.25, -3.0];
/// See [`EXAMPLE_A`].
pub const EXAMPLE_C: [f32; 6] = [0.0, 2.0, 3.0, 1.0, -1.0, -3.0];

/// The first input at index `i`: integers in [-1000, 1000] over 257, in a
/// hashed order, so most values are inexact in binary and products need
/// rounding.
pub fn fill_a(i: usize) -> f32 {
    crate::fill::below(i, 0x1, 2001) as f32 / 257.0 - 1000.0 / 257.0
}

/// The second input at index `i`: integers in [-500, 500] over 263, in a
/// hashed order.
pub fn fill_b(i: usize) -> f32 {
    crate::fill::below(i, 0x2, 1001) as f32 / 263.0 - 500.0 / 263.0
}

/// The third input at index `i`: integers in [-150, 150] over 37, in a
/// hashed order; about half negative, so relu clamps a fair share of the
/// outputs.
pub fn fill_c(i: usize) -> f32 {
    crate::fill::below(i, 0x3, 301) as f32 / 37.0 - 150.0 / 37.0
}

/// `fill(0..n)`.
pub fn filled(n: usize, fill: fn(usize) -> f32) -> Vec<f32> {
    (0..n).map(fill).collect()
}

/// The three inputs of length `n`, from the fills.
pub struct Inputs {
    /// a.
    pub a: Vec<f32>,
    /// b.
    pub b: Vec<f32>,
    /// c.
    pub c: Vec<f32>,
}

impl Inputs {
    /// The fills over `0..n`.
    pub fn new(n: usize) -> Inputs {
        Inputs {
            a: filled(n, fill_a),
            b: filled(n, fill_b),
            c: filled(n, fill_c),
        }
    }

    /// t1 = a * b, each rounded to f32.
    pub fn t1(&self) -> Vec<f32> {
        self.a.iter().zip(&self.b).map(|(x, y)| x * y).collect()
    }

    /// t2 = t1 + c, each rounded to f32.
    pub fn t2(&self) -> Vec<f32> {
        self.t1().iter().zip(&self.c).map(|(x, y)| x + y).collect()
    }

    /// y = relu(t2).
    pub fn y(&self) -> Vec<f32> {
        self.t2().into_iter().map(relu).collect()
    }

    /// y with one rounding per element (the FMA kernel's reference).
    pub fn y_fma(&self) -> Vec<f32> {
        fused_fma(&self.a, &self.b, &self.c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_gives_two_then_zeros_both_ways() {
        let (mut u, mut f) = ([9.0f32; 6], [9.0f32; 6]);
        let ou = unfused_pipeline(&EXAMPLE_A, &EXAMPLE_B, &EXAMPLE_C, &mut u);
        let of = fused_pipeline(&EXAMPLE_A, &EXAMPLE_B, &EXAMPLE_C, &mut f);
        assert_eq!(u, [2.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(u, f);
        assert_eq!(
            ou.per_element(6),
            MemOps {
                reads: 5,
                writes: 3
            }
        );
        assert_eq!(
            of.per_element(6),
            MemOps {
                reads: 3,
                writes: 1
            }
        );
    }
}
