//! The softmax lesson's CPU reference and input, written for obvious
//! correctness: each row in f64 (the f32 inputs and EPS promoted), plain
//! loops, no tiles. It never calls the kernels' code, so it can disagree
//! with them.

use kernels_gpu::softmax::EPS;

/// The input at flat index `i` of a row-major matrix: a hash of the index
/// (see [`crate::fill`]) mapped to [-4, 4) in steps of 1/256, so every row
/// differs, the row maximum sits at a different column in each row, and
/// every value is exact in f32.
pub fn fill_x(i: usize) -> f32 {
    (crate::fill::below(i, 0x1, 2048) as f32 - 1024.0) / 256.0
}

/// One row's RMS-scaled softmax in f64: `y_j = exp((x_j - max) * s) / sum`,
/// `s = 1 / sqrt(mean(x^2) + EPS)`, `sum = sum_j exp((x_j - max) * s)`.
pub fn row(x: &[f32]) -> Vec<f64> {
    let n = x.len() as f64;
    let max = x.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v as f64));
    let mean_square = x.iter().map(|&v| v as f64 * v as f64).sum::<f64>() / n;
    let s = 1.0 / (mean_square + EPS as f64).sqrt();
    let e: Vec<f64> = x.iter().map(|&v| ((v as f64 - max) * s).exp()).collect();
    let sum: f64 = e.iter().sum();
    e.into_iter().map(|v| v / sum).collect()
}

/// Every row of a `rows` x `n` matrix, rows computed on all CPU cores.
pub fn matrix(x: &[f32], n: usize) -> Vec<f64> {
    let mut y = vec![0.0f64; x.len()];
    let threads = std::thread::available_parallelism().map_or(1, |p| p.get());
    let rows_per = (x.len() / n).div_ceil(threads).max(1);
    std::thread::scope(|s| {
        for (xs, ys) in x.chunks(rows_per * n).zip(y.chunks_mut(rows_per * n)) {
            s.spawn(move || {
                for (xr, yr) in xs.chunks(n).zip(ys.chunks_mut(n)) {
                    yr.copy_from_slice(&row(xr));
                }
            });
        }
    });
    y
}

/// The largest `|got - want| / |want|` over every element (every output is
/// positive; a NaN makes it NaN), computed on all CPU cores.
pub fn max_relative_error(got: &[f32], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len(), "compare outputs of equal length");
    let threads = std::thread::available_parallelism().map_or(1, |p| p.get());
    let chunk = got.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = got
            .chunks(chunk)
            .zip(want.chunks(chunk))
            .map(|(g, w)| {
                s.spawn(move || {
                    g.iter()
                        .zip(w)
                        .map(|(&g, &w)| (f64::from(g) - w).abs() / w.abs())
                        .fold(0.0f64, |m, e| {
                            if e.is_nan() || m.is_nan() {
                                f64::NAN
                            } else {
                                m.max(e)
                            }
                        })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a check thread"))
            .fold(0.0f64, |m, e| {
                if e.is_nan() || m.is_nan() {
                    f64::NAN
                } else {
                    m.max(e)
                }
            })
    })
}
