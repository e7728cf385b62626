//! Checks that say where: the first bad index (row and column for 2D data),
//! the value got and the value wanted. Outputs are poisoned with 0xFF bytes
//! (a NaN in every f32) before a kernel runs, so an element the kernel never
//! wrote fails here too: a NaN is never within any tolerance.

use std::fmt;

/// The first element where a kernel's output disagrees with its reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mismatch {
    /// Flat index into the output.
    pub index: usize,
    /// What the kernel wrote.
    pub got: f32,
    /// What the reference says.
    pub want: f32,
    /// Columns per row, where the output is a 2D row-major array: the
    /// message then names the row and column.
    pub cols: Option<usize>,
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
        write!(f, ": got {:e}, want {:e}", self.got, self.want)?;
        if self.got.to_bits() != self.want.to_bits()
            && (self.got.is_nan() || self.got.abs() < 1e-30)
        {
            write!(
                f,
                " (bits got {:#010x}, want {:#010x})",
                self.got.to_bits(),
                self.want.to_bits()
            )?;
        }
        Ok(())
    }
}

/// The first index where `|got - want| > rel_tol * max(|want|, 1 if want
/// is 0)`, or `None` when every element agrees. `rel_tol = 0` demands exact
/// equality; a NaN on either side always fails.
///
/// # Panics
/// If the slices differ in length (a bug in the caller, not in a kernel).
pub fn first_mismatch(got: &[f32], want: &[f32], rel_tol: f32) -> Option<Mismatch> {
    assert_eq!(got.len(), want.len(), "compare outputs of equal length");
    got.iter()
        .zip(want)
        .position(|(&g, &w)| {
            let scale = if w == 0.0 { 1.0 } else { w.abs() };
            !((g - w).abs() <= rel_tol * scale)
        })
        .map(|index| Mismatch {
            index,
            got: got[index],
            want: want[index],
            cols: None,
        })
}

/// The first index where the bit patterns differ: for kernels that only
/// move data (copy, transpose), whose output must be the input's bits.
pub fn first_bit_mismatch(got: &[f32], want: &[f32]) -> Option<Mismatch> {
    assert_eq!(got.len(), want.len(), "compare outputs of equal length");
    got.iter()
        .zip(want)
        .position(|(g, w)| g.to_bits() != w.to_bits())
        .map(|index| Mismatch {
            index,
            got: got[index],
            want: want[index],
            cols: None,
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
    /// The kernel's exported symbol.
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
        let want = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let got = [1.0, 2.0, 3.0, 4.0, 5.5, 7.0];
        let m = first_mismatch(&got, &want, 1e-5).unwrap();
        assert_eq!((m.index, m.got, m.want), (4, 5.5, 5.0));
        assert_eq!(
            m.in_2d(3).to_string(),
            "wrong at index 4 (row 1, col 1): got 5.5e0, want 5e0"
        );
    }

    #[test]
    fn tolerance_is_relative_and_absolute_at_zero() {
        assert_eq!(first_mismatch(&[1000.001], &[1000.0], 1e-5), None);
        assert!(first_mismatch(&[1000.1], &[1000.0], 1e-5).is_some());
        assert_eq!(first_mismatch(&[1e-6], &[0.0], 1e-5), None);
        assert!(first_mismatch(&[1e-4], &[0.0], 1e-5).is_some());
    }

    #[test]
    fn poison_always_fails() {
        let nan = f32::from_bits(u32::MAX);
        assert_eq!(
            first_mismatch(&[1.0, nan], &[1.0, 2.0], 1.0).unwrap().index,
            1
        );
        assert_eq!(first_bit_mismatch(&[nan], &[nan]), None);
        assert_eq!(first_non_finite(&[0.0, 1.0, nan]), Some(2));
        assert_eq!(first_non_finite(&[0.0, f32::INFINITY]), Some(1));
        assert_eq!(first_non_finite(&[0.0]), None);
    }

    #[test]
    fn bit_compare_sees_sign_of_zero() {
        assert_eq!(first_bit_mismatch(&[-0.0], &[0.0]).unwrap().index, 0);
        assert_eq!(first_mismatch(&[-0.0], &[0.0], 0.0), None);
    }
}
