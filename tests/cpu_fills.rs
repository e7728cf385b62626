//! Every lesson's inputs, one table: each fill takes the values its
//! docstring names (in range, all of them), and none repeats under a shift,
//! so a kernel that reads element i + k where it should read i gets a
//! different input for most i, and its check sees a different output.

use host::{
    bandwidth, conv2d, fuse, fusion, harness, roofline, softmax, specialize, unroll, vectorize,
};

/// One fill: its name, the fill as f64, its range [lo, hi] (both
/// included, up to f32 rounding of the formula), and how many distinct values it takes (`None`: too many to
/// all appear in a sample).
struct Fill {
    name: &'static str,
    at: fn(usize) -> f64,
    lo: f64,
    hi: f64,
    values: Option<usize>,
}

macro_rules! fill {
    ($name:literal, $f:expr, $lo:expr, $hi:expr, $values:expr) => {
        Fill {
            name: $name,
            at: |i| f64::from($f(i)),
            lo: $lo,
            hi: $hi,
            values: $values,
        }
    };
}

fn fills() -> Vec<Fill> {
    vec![
        fill!(
            "roofline fill_a",
            roofline::reference::fill_a,
            1.0,
            7.0,
            Some(7)
        ),
        fill!(
            "roofline fill_b",
            roofline::reference::fill_b,
            -2.0,
            2.0,
            Some(5)
        ),
        fill!(
            "roofline fill_scrambled",
            |i| roofline::reference::fill_scrambled(i, 1),
            -4.0,
            4.0,
            Some(9)
        ),
        fill!(
            "harness fill_a",
            harness::reference::fill_a,
            -5.0,
            5.0 - 1.0 / 64.0,
            Some(640)
        ),
        fill!(
            "harness fill_b",
            harness::reference::fill_b,
            0.0,
            3.0 - 1.0 / 128.0,
            Some(384)
        ),
        fill!(
            "unroll fill_a",
            unroll::reference::fill_a,
            -5.0,
            639.0 / 61.0 - 5.0,
            Some(640)
        ),
        fill!(
            "unroll fill_b",
            unroll::reference::fill_b,
            0.0,
            388.0 / 3.0,
            Some(389)
        ),
        fill!(
            "fuse fill_a",
            fuse::reference::fill_a,
            -1000.0 / 257.0,
            1000.0 / 257.0,
            Some(2001)
        ),
        fill!(
            "fuse fill_b",
            fuse::reference::fill_b,
            -500.0 / 263.0,
            500.0 / 263.0,
            Some(1001)
        ),
        fill!(
            "fuse fill_c",
            fuse::reference::fill_c,
            -150.0 / 37.0,
            150.0 / 37.0,
            Some(301)
        ),
        fill!(
            "fusion fill_x",
            fusion::reference::fill_x,
            -4.0,
            4.0 - 1.0 / 256.0,
            Some(2048)
        ),
        fill!(
            "fusion fill_r",
            fusion::reference::fill_r,
            -0.5,
            0.5 - 1.0 / 97.0,
            Some(97)
        ),
        fill!(
            "conv2d fill",
            conv2d::reference::fill,
            -1.0,
            1.0,
            Some(2003)
        ),
        fill!(
            "softmax fill_x",
            softmax::reference::fill_x,
            -4.0,
            4.0 - 1.0 / 256.0,
            Some(2048)
        ),
        fill!(
            "specialize fill_x",
            specialize::reference::fill_x,
            -1.0,
            1.0,
            None
        ),
        fill!(
            "specialize fill_y",
            specialize::reference::fill_y,
            -1.0,
            1.0,
            None
        ),
        fill!(
            "vectorize fill_a",
            vectorize::reference::fill_a,
            -4.0,
            4.0,
            None
        ),
        fill!(
            "vectorize fill_b",
            vectorize::reference::fill_b,
            0.0,
            0.25,
            None
        ),
        fill!(
            "bandwidth pattern",
            bandwidth::pattern,
            0.0,
            250.0,
            Some(251)
        ),
    ]
}

const SAMPLE: usize = 40_000;

#[test]
fn every_fill_takes_the_values_it_names() {
    for f in fills() {
        let mut seen: Vec<u64> = (0..SAMPLE)
            .map(|i| (f.at)(i))
            .inspect(|&v| {
                let slack = 1e-6 * f.lo.abs().max(f.hi.abs());
                assert!(
                    (f.lo - slack..=f.hi + slack).contains(&v),
                    "{}: {v} outside [{}, {}]",
                    f.name,
                    f.lo,
                    f.hi
                );
            })
            .map(f64::to_bits)
            .collect();
        seen.sort_unstable();
        seen.dedup();
        match f.values {
            Some(m) => assert_eq!(
                seen.len(),
                m,
                "{}: {} distinct values in {SAMPLE}",
                f.name,
                seen.len()
            ),
            None => assert!(
                seen.len() > SAMPLE * 99 / 100,
                "{}: only {} distinct",
                f.name,
                seen.len()
            ),
        }
    }
}

#[test]
fn no_shift_reads_the_same_inputs() {
    // Shifts up to 4096 cover every period the seeds' fills had (5, 7, 97,
    // 301, 384, 389, 640, 1001, 2001, 2003, 2048) and the sides and row
    // lengths the lessons use; a hashed fill agrees with its shifted self
    // on about 1/m of the elements, a periodic one on all of them.
    let n = 8192;
    for f in fills() {
        let v: Vec<f64> = (0..n + 4096).map(f.at).collect();
        let chance = f.values.map_or(0.0, |m| 1.0 / m as f64);
        for shift in 1..=4096 {
            let same = (0..n).filter(|&i| v[i] == v[i + shift]).count();
            assert!(
                (same as f64) < (chance + 0.04) * n as f64,
                "{}: shifted by {shift}, {same} of {n} elements read the same value",
                f.name
            );
        }
    }
}

#[test]
fn a_shifted_read_changes_the_checked_output() {
    // Fusion clamps at both ends, so many inputs give the same output; a
    // wrong index must still change most outputs, not only most inputs.
    use fusion::reference::{chain, fill_r, fill_x};
    let n = 4096;
    for shift in [1, 97, 256, 2048, 4096] {
        let changed = (0..n)
            .filter(|&i| chain(fill_x(i + shift), fill_r(i)) != chain(fill_x(i), fill_r(i)))
            .count();
        assert!(
            changed > n / 2,
            "shift {shift}: only {changed} of {n} outputs change"
        );
    }
}
