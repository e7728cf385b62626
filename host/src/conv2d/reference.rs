//! The conv2d lesson's CPU references, written for obvious correctness:
//! plain loops over every output and every tap.
//!
//! Two of them, for two checks:
//! - [`valid_f64`] / [`same_f64`]: each output as the sum of its nine
//!   products in f64 (each f32 x f32 product is exact in f64, and nine of
//!   them add with a relative error near 2^-53), with [`bound_valid`] /
//!   [`bound_same`] the largest error an f32 evaluation may have: 10 x 2^-24
//!   x the sum of |x w| (the dot product's bound gamma_9 = 9u / (1 - 9u),
//!   rounded up), for any order of any nine f32 multiply-adds or FMAs.
//! - [`valid_fma`] / [`same_fma`]: the kernels' own arithmetic in f32, nine
//!   FMAs (`f32::mul_add`, correctly rounded) in row-major tap order from
//!   +0, padded taps as an FMA with 0. The GPU's `fma.rn.f32` rounds the
//!   same way, so a correct kernel matches these bit for bit.
//!
//! Outputs are row-major; rows are shared out over the host's threads
//! (each output is independent, so the split changes no bit).

use kernels_gpu::conv2d::{TAPS_PER_SIDE, Taps3x3};

/// The lesson's stencil: asymmetric (a transposed or mirrored tap order
/// fails the check) and not powers of two (the order of the nine roundings
/// shows in the bits).
pub const LESSON_TAPS: Taps3x3 = Taps3x3 {
    w: [0.1, -0.2, 0.3, -0.4, 1.5, 0.6, -0.7, 0.8, -0.9],
};

/// The seed's stencil (chapter 18's worked example): 1 on the corners and
/// the centre, 0 elsewhere. Symmetric and integral: the tests' known answer.
pub const SEED_TAPS: Taps3x3 = Taps3x3 {
    w: [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0],
};

/// The input at flat index `i` of any image: values in [-1, 1) on a grid
/// of 1/1001 (not dyadic, so most products round), in a hashed order, so
/// no row or column repeats another.
pub fn fill(i: usize) -> f32 {
    crate::fill::below(i, 0x1, 2003) as f32 / 1001.0 - 1.0
}

/// An n x n image of [`fill`].
pub fn image(n: usize) -> Vec<f32> {
    (0..n * n).map(fill).collect()
}

/// Error allowance per unit of sum |x w|: 10 x 2^-24, above gamma_9.
pub const BOUND_PER_ABS_SUM: f64 = 10.0 / (1u64 << 24) as f64;

/// Calls `f(row, out_row)` for every `cols`-wide row of `out`, spread over
/// the host's threads.
fn rows_in_parallel<T: Send>(out: &mut [T], cols: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let rows = out.len() / cols.max(1);
    let per_thread = rows.div_ceil(threads).max(1);
    std::thread::scope(|s| {
        for (chunk_index, chunk) in out.chunks_mut(per_thread * cols.max(1)).enumerate() {
            let f = &f;
            s.spawn(move || {
                for (k, row) in chunk.chunks_mut(cols).enumerate() {
                    f(chunk_index * per_thread + k, row);
                }
            });
        }
    });
}

/// The input at (y, x) of an n x n image, or 0 outside it (zero padding);
/// y and x may be -1 or n.
fn padded(input: &[f32], n: usize, y: isize, x: isize) -> f32 {
    if (0..n as isize).contains(&y) && (0..n as isize).contains(&x) {
        input[y as usize * n + x as usize]
    } else {
        0.0
    }
}

/// A generic pass over the outputs: `out_side` x `out_side` outputs, each
/// from `tap(row, col, r, c)`'s nine (x, w) pairs through `reduce`.
fn each_output<T: Send + Copy + Default>(
    out_side: usize,
    reduce: impl Fn(usize, usize) -> T + Sync,
) -> Vec<T> {
    let mut out = vec![T::default(); out_side * out_side];
    rows_in_parallel(&mut out, out_side, |row, line| {
        for (col, o) in line.iter_mut().enumerate() {
            *o = reduce(row, col);
        }
    });
    out
}

/// The valid convolution in f64: (n - 2)^2 outputs.
///
/// # Panics
/// When n < 3 or `input` is not n x n.
pub fn valid_f64(input: &[f32], n: usize, taps: &Taps3x3) -> Vec<f64> {
    assert!(n >= TAPS_PER_SIDE && input.len() == n * n);
    each_output(n - 2, |row, col| {
        let mut sum = 0.0f64;
        for r in 0..3 {
            for c in 0..3 {
                sum += f64::from(input[(row + r) * n + col + c]) * f64::from(taps.w[r * 3 + c]);
            }
        }
        sum
    })
}

/// The same (zero-padded) convolution in f64: n^2 outputs.
///
/// # Panics
/// When `input` is not n x n.
pub fn same_f64(input: &[f32], n: usize, taps: &Taps3x3) -> Vec<f64> {
    assert!(input.len() == n * n);
    each_output(n, |row, col| {
        let mut sum = 0.0f64;
        for r in 0..3 {
            for c in 0..3 {
                let x = padded(input, n, (row + r) as isize - 1, (col + c) as isize - 1);
                sum += f64::from(x) * f64::from(taps.w[r * 3 + c]);
            }
        }
        sum
    })
}

/// The largest error an f32 valid convolution may have at each output:
/// [`BOUND_PER_ABS_SUM`] x sum of |x w| over its taps.
pub fn bound_valid(input: &[f32], n: usize, taps: &Taps3x3) -> Vec<f64> {
    let abs_taps = Taps3x3 {
        w: taps.w.map(f32::abs),
    };
    let abs_input: Vec<f32> = input.iter().map(|x| x.abs()).collect();
    valid_f64(&abs_input, n, &abs_taps)
        .into_iter()
        .map(|s| s * BOUND_PER_ABS_SUM)
        .collect()
}

/// As [`bound_valid`], for the same convolution.
pub fn bound_same(input: &[f32], n: usize, taps: &Taps3x3) -> Vec<f64> {
    let abs_taps = Taps3x3 {
        w: taps.w.map(f32::abs),
    };
    let abs_input: Vec<f32> = input.iter().map(|x| x.abs()).collect();
    same_f64(&abs_input, n, &abs_taps)
        .into_iter()
        .map(|s| s * BOUND_PER_ABS_SUM)
        .collect()
}

/// The valid convolution as the kernels compute it: nine f32 FMAs in
/// row-major tap order from +0.
pub fn valid_fma(input: &[f32], n: usize, taps: &Taps3x3) -> Vec<f32> {
    assert!(n >= TAPS_PER_SIDE && input.len() == n * n);
    each_output(n - 2, |row, col| {
        let mut sum = 0.0f32;
        for r in 0..3 {
            for c in 0..3 {
                sum = input[(row + r) * n + col + c].mul_add(taps.w[r * 3 + c], sum);
            }
        }
        sum
    })
}

/// The same convolution as the kernels compute it: nine f32 FMAs in
/// row-major tap order from +0, a padded tap an FMA with 0.
pub fn same_fma(input: &[f32], n: usize, taps: &Taps3x3) -> Vec<f32> {
    assert!(input.len() == n * n);
    each_output(n, |row, col| {
        let mut sum = 0.0f32;
        for r in 0..3 {
            for c in 0..3 {
                let x = padded(input, n, (row + r) as isize - 1, (col + c) as isize - 1);
                sum = x.mul_add(taps.w[r * 3 + c], sum);
            }
        }
        sum
    })
}
