//! Checks that say where: the first bad index (row and column for 2D data),
//! the value got, the value wanted and the tolerance that was allowed. One
//! helper, [`first_mismatch`], serves f32 and f64 references under every
//! tolerance the lessons use. Outputs are poisoned with 0xFF bytes (a NaN in
//! every f32) before a kernel runs, so an element the kernel never wrote
//! fails here too: a NaN is never within any tolerance.

use std::fmt;

/// A reference value: f32 (a reference that reproduces the kernel's f32
/// arithmetic) or f64 (one computed more precisely than the kernel).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// An f32 reference.
    F32(f32),
    /// An f64 reference.
    F64(f64),
}

impl Value {
    /// The value as f64 (exact for an f32).
    pub fn as_f64(self) -> f64 {
        match self {
            Value::F32(v) => f64::from(v),
            Value::F64(v) => v,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::F32(v) => write!(f, "{v:e}"),
            Value::F64(v) => write!(f, "{v:e}"),
        }
    }
}

/// An element type a reference can be written in.
pub trait Reference: Copy + Send + Sync {
    /// The element as a [`Value`].
    fn value(self) -> Value;
}

impl Reference for f32 {
    fn value(self) -> Value {
        Value::F32(self)
    }
}

impl Reference for f64 {
    fn value(self) -> Value {
        Value::F64(self)
    }
}

/// How close an output element must be to its reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tolerance<'a> {
    /// The same bits, sign of zero included: kernels that only move data.
    Bits,
    /// Equal as numbers (-0 equals 0): arithmetic the reference reproduces
    /// operation for operation.
    Exact,
    /// `|got - want| <= rel * |want|`, or `<= rel` where want is 0.
    Relative(f64),
    /// `|got - want| <= abs + rel * |want|`.
    AbsRel {
        /// The absolute part, for results near 0.
        abs: f64,
        /// The part relative to `|want|`.
        rel: f64,
    },
    /// `|got - want| <= bound[i]`: a bound derived per element (from the
    /// magnitudes that element sums, say).
    Bound(&'a [f64]),
}

impl Tolerance<'_> {
    /// Whether `got` passes against `want` at element `i`.
    pub fn passes(&self, i: usize, got: f32, want: Value) -> bool {
        let (g, w) = (f64::from(got), want.as_f64());
        match *self {
            // An f32 reference is compared in its own bits: widening to f64
            // need not keep a NaN's payload.
            Tolerance::Bits => match want {
                Value::F32(w) => got.to_bits() == w.to_bits(),
                Value::F64(_) => g.to_bits() == w.to_bits(),
            },
            Tolerance::Exact => g == w,
            Tolerance::Relative(rel) => (g - w).abs() <= rel * if w == 0.0 { 1.0 } else { w.abs() },
            Tolerance::AbsRel { abs, rel } => (g - w).abs() <= abs + rel * w.abs(),
            Tolerance::Bound(bound) => (g - w).abs() <= bound[i],
        }
    }

    /// What was allowed at element `i`, for a message.
    fn describe(&self, i: usize) -> String {
        match *self {
            Tolerance::Bits => "bit for bit".to_string(),
            Tolerance::Exact => "exact".to_string(),
            Tolerance::Relative(rel) => format!("relative tolerance {rel:e}"),
            Tolerance::AbsRel { abs, rel } => format!("tolerance {abs:e} + {rel:e} x |want|"),
            Tolerance::Bound(bound) => format!("error bound {:e} at this element", bound[i]),
        }
    }
}

/// The first element where a kernel's output disagrees with its reference.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// Flat index into the output.
    pub index: usize,
    /// What the kernel wrote.
    pub got: f32,
    /// What the reference says.
    pub want: Value,
    /// Columns per row, where the output is a 2D row-major array: the
    /// message then names the row and column.
    pub cols: Option<usize>,
    /// What was allowed, in words.
    pub allowed: String,
}

impl Mismatch {
    /// The same mismatch, reported as (row, column) of a row-major array
    /// with `cols` columns.
    pub fn in_2d(self, cols: usize) -> Mismatch {
        Mismatch {
            cols: Some(cols),
            ..self
        }
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "wrong at index {}", self.index)?;
        if let Some(cols) = self.cols {
            write!(f, " (row {}, col {})", self.index / cols, self.index % cols)?;
        }
        write!(f, ": got {:e}, want {}", self.got, self.want)?;
        if let Value::F32(want) = self.want
            && self.got.to_bits() != want.to_bits()
            && (self.got.is_nan() || self.got.abs() < 1e-30)
        {
            write!(
                f,
                " (bits got {:#010x}, want {:#010x})",
                self.got.to_bits(),
                want.to_bits()
            )?;
        }
        write!(f, " ({})", self.allowed)
    }
}

/// Elements past which [`first_mismatch`] splits the work over the CPU's
/// cores.
const PARALLEL_FROM: usize = 1 << 20;

/// The first index where `got` is not within `tolerance` of `want`, or
/// `None` when every element passes. A NaN in `got` fails every tolerance
/// but [`Tolerance::Bits`] against the same NaN. Large outputs are checked
/// on every core; the answer is the same first index.
///
/// # Panics
/// If the slices (or a [`Tolerance::Bound`]) differ in length: a bug in the
/// caller, not in a kernel.
pub fn first_mismatch<W: Reference>(
    got: &[f32],
    want: &[W],
    tolerance: Tolerance<'_>,
) -> Option<Mismatch> {
    assert_eq!(got.len(), want.len(), "compare outputs of equal length");
    if let Tolerance::Bound(b) = tolerance {
        assert_eq!(b.len(), got.len(), "one bound per element");
    }
    let scan_from = |offset: usize, g: &[f32], w: &[W]| {
        g.iter()
            .zip(w)
            .enumerate()
            .position(|(i, (&g, &w))| !tolerance.passes(offset + i, g, w.value()))
            .map(|i| offset + i)
    };
    let index = if got.len() < PARALLEL_FROM {
        scan_from(0, got, want)
    } else {
        let threads = std::thread::available_parallelism().map_or(1, |p| p.get());
        let chunk = got.len().div_ceil(threads).max(1);
        std::thread::scope(|s| {
            let handles: Vec<_> = got
                .chunks(chunk)
                .zip(want.chunks(chunk))
                .enumerate()
                .map(|(k, (g, w))| s.spawn(move || scan_from(k * chunk, g, w)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a check thread"))
                .collect::<Vec<_>>()
        })
        .into_iter()
        .flatten()
        .next()
    }?;
    Some(Mismatch {
        index,
        got: got[index],
        want: want[index].value(),
        cols: None,
        allowed: tolerance.describe(index),
    })
}

/// The first element that is not finite (NaN or infinite), or `None`.
/// Covers the part of an output a reference does not: a 0xFF-poisoned
/// element the kernel never wrote is a NaN.
pub fn first_non_finite(x: &[f32]) -> Option<usize> {
    x.iter().position(|v| !v.is_finite())
}

/// One failed check: which kernel, and what was wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The kernel's exported symbol (or the name of what ran).
    pub kernel: &'static str,
    /// What was wrong, one line.
    pub detail: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kernel, self.detail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_bad_index_and_names_row_and_column() {
        let want = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
        let got = [1.0, 2.0, 3.0, 4.0, 5.5, 7.0];
        let m = first_mismatch(&got, &want, Tolerance::Relative(1e-5)).unwrap();
        assert_eq!((m.index, m.got, m.want), (4, 5.5, Value::F32(5.0)));
        assert_eq!(
            m.in_2d(3).to_string(),
            "wrong at index 4 (row 1, col 1): got 5.5e0, want 5e0 (relative tolerance 1e-5)"
        );
    }

    #[test]
    fn tolerance_is_relative_and_absolute_at_zero() {
        let rel = Tolerance::Relative(1e-5);
        assert_eq!(first_mismatch(&[1000.001], &[1000.0f32], rel), None);
        assert!(first_mismatch(&[1000.1], &[1000.0f32], rel).is_some());
        assert_eq!(first_mismatch(&[1e-6], &[0.0f32], rel), None);
        assert!(first_mismatch(&[1e-4], &[0.0f32], rel).is_some());
        let absrel = Tolerance::AbsRel {
            abs: 1e-6,
            rel: 1e-5,
        };
        assert_eq!(first_mismatch(&[5e-7], &[0.0f64], absrel), None);
        assert!(first_mismatch(&[2e-6], &[0.0f64], absrel).is_some());
    }

    #[test]
    fn f64_references_and_per_element_bounds() {
        let want = [1.0f64, 2.0, 3.0];
        let got = [1.0f32, 2.0 + 1e-6, 3.0 + 1e-3];
        let bound = [0.0, 1e-5, 1e-5];
        let m = first_mismatch(&got, &want, Tolerance::Bound(&bound)).unwrap();
        assert_eq!(m.index, 2);
        assert!(
            m.to_string()
                .ends_with("(error bound 1e-5 at this element)"),
            "{m}"
        );
        assert_eq!(
            first_mismatch(&got[..2], &want[..2], Tolerance::Bound(&bound[..2])),
            None
        );
    }

    #[test]
    fn poison_always_fails() {
        let nan = f32::from_bits(u32::MAX);
        for tol in [
            Tolerance::Exact,
            Tolerance::Relative(1.0),
            Tolerance::AbsRel { abs: 1.0, rel: 1.0 },
        ] {
            assert_eq!(
                first_mismatch(&[1.0, nan], &[1.0f32, 2.0], tol)
                    .unwrap()
                    .index,
                1
            );
        }
        assert_eq!(first_mismatch(&[nan], &[nan], Tolerance::Bits), None);
        assert_eq!(first_non_finite(&[0.0, 1.0, nan]), Some(2));
        assert_eq!(first_non_finite(&[0.0, f32::INFINITY]), Some(1));
        assert_eq!(first_non_finite(&[0.0]), None);
    }

    #[test]
    fn bits_see_the_sign_of_zero_and_exact_does_not() {
        assert_eq!(
            first_mismatch(&[-0.0], &[0.0f32], Tolerance::Bits)
                .unwrap()
                .index,
            0
        );
        assert_eq!(first_mismatch(&[-0.0], &[0.0f32], Tolerance::Exact), None);
    }

    #[test]
    fn the_parallel_scan_finds_the_same_first_index() {
        let n = PARALLEL_FROM * 3 + 17;
        let want: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let mut got = want.clone();
        got[n - 5] = -1.0;
        got[PARALLEL_FROM + 3] = -1.0;
        let m = first_mismatch(&got, &want, Tolerance::Exact).unwrap();
        assert_eq!(m.index, PARALLEL_FROM + 3);
    }
}
