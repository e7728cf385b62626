//! Inputs that do not repeat: every lesson's fills are formulas of a hash
//! of the element's index, so an index that is off by any amount reads
//! another value (with the probability the fill's value set allows), and a
//! check sees it. A fill with a period p would let an index off by a
//! multiple of p pass wherever it stays in range.

/// A well-mixed 64-bit hash of `(i, stream)`: SplitMix64's finaliser
/// (Steele, Lea and Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014) over the index offset by the stream's own
/// constant. Different streams give unrelated sequences.
pub fn hash(i: usize, stream: u64) -> u64 {
    let mut z = (i as u64).wrapping_add(stream.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One of `m` values `0..m` at index `i` of `stream`, in a hashed order.
pub fn below(i: usize, stream: u64, m: u64) -> u64 {
    hash(i, stream) % m
}

/// `f(i)` for every `i` in `range`, computed on all CPU cores (the lessons
/// fill buffers of up to 2 GiB, a second or more on one core).
pub fn filled<T: Send + Default + Clone>(
    range: std::ops::Range<usize>,
    f: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let mut out = vec![T::default(); range.len()];
    let threads = std::thread::available_parallelism().map_or(1, |p| p.get());
    let per = out.len().div_ceil(threads).max(1 << 16);
    std::thread::scope(|s| {
        for (k, chunk) in out.chunks_mut(per).enumerate() {
            let (f, start) = (&f, range.start + k * per);
            s.spawn(move || {
                for (j, v) in chunk.iter_mut().enumerate() {
                    *v = f(start + j);
                }
            });
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_shift_reads_the_same_values() {
        // For shifts up to 5000 (every period the old fills had: 5, 7, 97,
        // 389, 640, 2001, 2003, 2048 and their multiples), at most 1/m of
        // the elements plus a little read the value they would have read.
        let m = 7;
        let n = 20_000;
        for shift in 1..5000 {
            let same = (0..n)
                .filter(|&i| below(i, 1, m) == below(i + shift, 1, m))
                .count();
            assert!(same < n / 5, "shift {shift}: {same} of {n} equal");
        }
        assert_ne!(hash(0, 1), hash(0, 2));
    }

    #[test]
    fn filled_is_the_formula_at_every_index() {
        let got = filled(5..300_005, |i| below(i, 3, 1000));
        assert!(
            got.iter()
                .enumerate()
                .all(|(j, &v)| v == below(j + 5, 3, 1000))
        );
    }
}
