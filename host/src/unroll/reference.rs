//! The unroll lesson's CPU reference and host mirrors, written for obvious
//! correctness: the inputs as plain formulas of the index, each sum as one
//! f32 add (a single correctly rounded operation, so the GPU must match it
//! bit for bit), and the seed's two loops with their counters.

/// What a host mirror counted: how often the loop's own bookkeeping ran
/// (increment, compare, branch: once per iteration) and how many adds it
/// did (once per element).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct UnrollStats {
    /// Loop iterations, main loop and remainder together.
    pub loop_control_events: usize,
    /// Element additions.
    pub arithmetic_ops: usize,
}

/// `out = a + b` one element per iteration, counting both.
///
/// # Panics
/// When `a`, `b` or `out` is shorter than the others.
pub fn plain_add(out: &mut [f32], a: &[f32], b: &[f32]) -> UnrollStats {
    let mut s = UnrollStats {
        loop_control_events: 0,
        arithmetic_ops: 0,
    };
    for i in 0..a.len() {
        out[i] = a[i] + b[i];
        s.loop_control_events += 1;
        s.arithmetic_ops += 1;
    }
    s
}

/// `out = a + b` with a main loop of `unroll` adds per iteration over the
/// first (len / unroll) * unroll elements, then a one-element remainder
/// loop, counting both.
///
/// # Panics
/// When the slices differ in length or `unroll` is 0.
pub fn unrolled_add(out: &mut [f32], a: &[f32], b: &[f32], unroll: usize) -> UnrollStats {
    let size = a.len();
    let main = (size / unroll) * unroll;
    let mut s = UnrollStats {
        loop_control_events: 0,
        arithmetic_ops: 0,
    };
    for i in (0..main).step_by(unroll) {
        // The body a compiler writes out for a fixed `unroll`: `unroll`
        // adds under one iteration's bookkeeping.
        for lane in 0..unroll {
            out[i + lane] = a[i + lane] + b[i + lane];
        }
        s.loop_control_events += 1;
        s.arithmetic_ops += unroll;
    }
    for i in main..size {
        out[i] = a[i] + b[i];
        s.loop_control_events += 1;
        s.arithmetic_ops += 1;
    }
    s
}

/// The seed's inputs for its mirror sizes: a = i, and b = 3i at 1000
/// elements, b = 1 at any other size (4002).
pub fn seed_inputs(size: usize) -> (Vec<f32>, Vec<f32>) {
    let a = (0..size).map(|i| i as f32).collect();
    let b = (0..size)
        .map(|i| if size == 1000 { (3 * i) as f32 } else { 1.0 })
        .collect();
    (a, b)
}

/// The seed's 16-element GPU example: a = i, b = 2i, so a + b = 3i.
pub fn seed_gpu_inputs(size: usize) -> (Vec<f32>, Vec<f32>) {
    (
        (0..size).map(|i| i as f32).collect(),
        (0..size).map(|i| (2 * i) as f32).collect(),
    )
}

/// The lesson's first input at index `i`: integers in [0, 640) over 61,
/// less 5, in a hashed order: values in [-5, 5.5), most of them inexact in
/// binary.
pub fn fill_a(i: usize) -> f32 {
    crate::fill::below(i, 0x1, 640) as f32 / 61.0 - 5.0
}

/// The lesson's second input at index `i`: thirds of integers below 389,
/// in a hashed order, so most values and sums are inexact and the sum
/// really is rounded.
pub fn fill_b(i: usize) -> f32 {
    crate::fill::below(i, 0x2, 389) as f32 / 3.0
}

/// `fill(0..n)`.
pub fn filled(n: usize, fill: fn(usize) -> f32) -> Vec<f32> {
    (0..n).map(fill).collect()
}

/// a[i] + b[i] for each i: one f32 add, as every kernel does it.
pub fn sum(a: &[f32], b: &[f32]) -> Vec<f32> {
    a.iter().zip(b).map(|(x, y)| x + y).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mirrors_agree_and_count_as_the_seed_prints() {
        let (a, b) = seed_inputs(4002);
        let (mut p, mut u) = (vec![0.0; 4002], vec![0.0; 4002]);
        assert_eq!(
            plain_add(&mut p, &a, &b),
            UnrollStats {
                loop_control_events: 4002,
                arithmetic_ops: 4002
            }
        );
        assert_eq!(
            unrolled_add(&mut u, &a, &b, 4),
            UnrollStats {
                loop_control_events: 1002,
                arithmetic_ops: 4002
            }
        );
        assert_eq!(p, u);
        assert_eq!(u[4001], 4002.0);
    }
}
