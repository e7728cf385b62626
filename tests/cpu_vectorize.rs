//! CPU-only tests of the vectorize lesson: the host mirror's counts at the
//! seed's sizes, widths derived from the types, the reference's rounding,
//! launch shapes, and the PTX: every 16-byte kernel loads and stores with
//! one 128-bit access per input and output, of the element's width.

use half::f16;
use host::kernels::KernelId;
use host::ptx::{PTX, entries, entry_body};
use host::ragged::Edge;
use host::vectorize::{Dtype, Kernel, reference, sass_128_counts, vectorized_add_host};
use kernels_gpu::vectorize::*;

#[test]
fn the_trace_at_10_and_41_counts_what_the_seed_prints() {
    let a: Vec<f32> = (0..10).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..10).map(|i| i as f32 * 10.0).collect();
    let mut out = vec![0.0; 10];
    let t = vectorized_add_host(&mut out, &a, &b, 4);
    assert_eq!(
        (
            t.simd_count,
            t.vector_instructions,
            t.scalar_instructions,
            t.total()
        ),
        (8, 2, 2, 4)
    );
    assert_eq!(
        out,
        [0.0, 11.0, 22.0, 33.0, 44.0, 55.0, 66.0, 77.0, 88.0, 99.0]
    );
    assert_eq!(format!("{:.1}", t.pct_of_baseline()), "40.0");

    let a = vec![1.0f32; 41];
    let mut out = vec![0.0; 41];
    let t = vectorized_add_host(&mut out, &a, &a, 4);
    assert_eq!(
        (
            t.simd_count,
            t.vector_instructions,
            t.scalar_instructions,
            t.total()
        ),
        (40, 10, 1, 11)
    );
    assert_eq!(format!("{:.1}", t.pct_of_baseline()), "26.8");
    // The seed's self-check: size 33 gives 8 vectors and 1 scalar.
    let a = vec![1.0f32; 33];
    let t = vectorized_add_host(&mut [0.0; 33], &a, &a, 4);
    assert_eq!((t.vector_instructions, t.scalar_instructions), (8, 1));
}

#[test]
fn widths_come_from_the_types() {
    assert_eq!(width::<F32x4>(), 4);
    assert_eq!(width::<F64x2>(), 2);
    assert_eq!(width::<F16x8>(), 8);
    for d in Dtype::ALL {
        assert_eq!(d.width() * d.size(), VECTOR_BYTES, "{d:?}");
    }
}

#[test]
fn the_reference_rounds_and_a_truncating_add_would_fail() {
    let n = 4096;
    for d in Dtype::ALL {
        let want = reference::sum_bits(d, n);
        let (mut inexact, mut truncation_caught) = (0, 0);
        for (i, &bits) in want.iter().enumerate() {
            let (a, b) = (
                reference::as_dtype(d, reference::fill_a(i)),
                reference::as_dtype(d, reference::fill_b(i)),
            );
            let exact = a + b; // exact in f64 for f32 and f16 inputs
            let got = match d {
                Dtype::F32 => f64::from(f32::from_bits(bits as u32)),
                Dtype::F64 => f64::from_bits(bits),
                Dtype::F16 => f64::from(f16::from_bits(bits as u16).to_f32()),
            };
            // Correctly rounded: within half an ulp of the exact sum.
            let ulp = match d {
                Dtype::F32 => {
                    f64::from((got as f32).abs().max(f32::MIN_POSITIVE)).next_up_f32_ulp()
                }
                Dtype::F64 => (got.abs().max(f64::MIN_POSITIVE)).ulp64(),
                Dtype::F16 => f64::from(f16::from_f64(got.abs()).ulp16()),
            };
            if d != Dtype::F64 {
                assert!(
                    (got - exact).abs() <= ulp / 2.0,
                    "{d:?} index {i}: {got} vs {exact}"
                );
            }
            if got != exact {
                inexact += 1;
            }
            // A sum truncated toward zero differs from the reference here:
            // the check would catch an add.rz.
            let toward_zero = if d == Dtype::F64 {
                got
            } else {
                truncate(d, exact)
            };
            if toward_zero != got {
                truncation_caught += 1;
            }
        }
        if d != Dtype::F64 {
            assert!(inexact > n / 2, "{d:?}: only {inexact} of {n} sums round");
            assert!(
                truncation_caught > n / 4,
                "{d:?}: truncation caught {truncation_caught} times"
            );
        }
    }
    // f64 sums round too: the rounding error of a + b (Fast2Sum, exact
    // when |a| >= |b|) is not zero.
    let f64_inexact = (0..n)
        .map(|i| (reference::fill_a(i), reference::fill_b(i)))
        .filter(|&(a, b)| a.abs() >= b.abs() && b - ((a + b) - a) != 0.0)
        .count();
    assert!(
        f64_inexact > n / 2,
        "f64: only {f64_inexact} of {n} sums round"
    );
    assert_eq!(
        reference::bits_of(
            Dtype::F64,
            &reference::input_bytes(Dtype::F64, 2, reference::fill_a)
        ),
        [
            reference::fill_a(0).to_bits(),
            reference::fill_a(1).to_bits()
        ]
    );
}

/// `x` (exact) rounded toward zero into `d` (f32 or f16), widened.
fn truncate(d: Dtype, x: f64) -> f64 {
    let nearest = reference::as_dtype(d, x);
    if nearest.abs() <= x.abs() {
        return nearest;
    }
    // One step toward zero from the nearest value.
    match d {
        Dtype::F32 => {
            let v = nearest as f32;
            f64::from(f32::from_bits(v.to_bits() - 1))
        }
        _ => {
            let v = f16::from_f64(nearest);
            f64::from(f16::from_bits(v.to_bits() - 1).to_f32())
        }
    }
}

trait Ulp {
    fn next_up_f32_ulp(self) -> f64;
    fn ulp64(self) -> f64;
}
impl Ulp for f64 {
    fn next_up_f32_ulp(self) -> f64 {
        let v = self as f32;
        f64::from(f32::from_bits(v.to_bits() + 1)) - f64::from(v)
    }
    fn ulp64(self) -> f64 {
        f64::from_bits(self.to_bits() + 1) - self
    }
}
trait Ulp16 {
    fn ulp16(self) -> f32;
}
impl Ulp16 for f16 {
    fn ulp16(self) -> f32 {
        f16::from_bits(self.to_bits() + 1).to_f32() - self.to_f32()
    }
}

#[test]
fn launch_shapes_cover_vectors_and_tail() {
    let sizes = host::vectorize::Sizes::new(&lab_tests::profile("H200").info(), false);
    for d in Dtype::ALL {
        assert_eq!(
            sizes.elems(d, Edge::Round) * d.size(),
            256 << 20,
            "64 MiB doubled to 4x a 60 MiB L2"
        );
        for n in [
            1,
            3,
            10,
            41,
            CHECK_ELEMS,
            sizes.elems(d, Edge::Round),
            sizes.elems(d, Edge::Ragged),
        ] {
            let c = Kernel::Vec16(d).launch_config(n);
            let threads = c.grid_dim.0 as usize * c.block_dim.0 as usize;
            assert!(
                threads >= n / d.width() && threads >= n % d.width(),
                "{d:?} n = {n}"
            );
            assert_eq!(
                Kernel::Vec16(d).threads(n),
                (n / d.width()).max(n % d.width())
            );
            let c = Kernel::Scalar(d).launch_config(n);
            assert!(c.grid_dim.0 as usize * c.block_dim.0 as usize >= n);
        }
    }
}

#[test]
fn the_timed_sizes_are_a_round_and_a_ragged_pair() {
    use host::ragged::RAGGED_TAIL;
    for (gpu, quick) in [("H200", false), ("T4", false), ("H200", true)] {
        let sizes = host::vectorize::Sizes::new(&lab_tests::profile(gpu).info(), quick);
        for d in Dtype::ALL {
            let (round, ragged) = (sizes.elems(d, Edge::Round), sizes.elems(d, Edge::Ragged));
            assert!(round.is_power_of_two(), "{gpu} {d:?}: {round}");
            assert_eq!(ragged, round + RAGGED_TAIL);
            assert_eq!(round % d.width(), 0, "the round size has no tail");
            assert_ne!(
                ragged % d.width(),
                0,
                "{gpu} {d:?}: the ragged size runs the tail"
            );
            assert!(
                ragged * d.size() + host::vectorize::GUARD_BYTES <= sizes.buffer_bytes,
                "{gpu} {d:?}: the ragged size and the guard fit"
            );
            assert_eq!(
                sizes.shape(d, Edge::Ragged),
                format!("{} + 611", sizes.shape(d, Edge::Round))
            );
        }
        assert_eq!(sizes.buffer_bytes % VECTOR_BYTES, 0);
        if quick {
            assert_eq!(sizes.elems(Dtype::F32, Edge::Round), 1 << 20);
            assert_eq!(sizes.elems(Dtype::F64, Edge::Ragged), CHECK_ELEMS);
        }
    }
    let h200 = host::vectorize::Sizes::new(&lab_tests::profile("H200").info(), false);
    assert_eq!(h200.shape(Dtype::F32, Edge::Round), "2^26");
    assert_eq!(h200.shape(Dtype::F16, Edge::Ragged), "2^27 + 611");
}

#[test]
fn the_reference_bytes_are_the_reference_bits() {
    for d in Dtype::ALL {
        let bytes = reference::sum_bytes(d, 1000);
        assert_eq!(bytes.len(), 1000 * d.size());
        assert_eq!(reference::bits_of(d, &bytes), reference::sum_bits(d, 1000));
        // Distinct sums: a wrong index reads a different value.
        let mut bits = reference::sum_bits(d, 1000);
        bits.sort_unstable();
        bits.dedup();
        assert!(
            bits.len() > 900,
            "{d:?}: only {} distinct sums of 1000",
            bits.len()
        );
    }
}

#[test]
fn the_seed_launches_show_the_seeds_values() {
    // 32 bytes per array: 8 floats, 4 doubles, 16 halves; two vectors each.
    for (d, n) in [(Dtype::F32, 8), (Dtype::F64, 4), (Dtype::F16, 16)] {
        assert_eq!(SEED_BUDGET_BYTES / d.size(), n);
        assert_eq!(n / d.width(), 2, "{d:?}: <<<1, 2>>>");
        let sums: Vec<f64> = (0..n)
            .map(|i| reference::add_in(d, reference::seed_a(i), reference::seed_b(i)))
            .collect();
        let want: Vec<f64> = (1..=n).map(|i| 101.0 * i as f64).collect();
        assert_eq!(sums, want, "{d:?}");
        // The bytes the GPU is handed hold those values exactly.
        for i in 0..n {
            let b = reference::to_bytes(d, reference::seed_b(i));
            assert_eq!(
                reference::value_of(d, reference::element_bits(d, &b)),
                reference::seed_b(i)
            );
        }
    }
    // The seed's own printed line for the float4 launch.
    let launch = host::vectorize::SeedLaunch {
        dtype: "f32",
        vector: "float4",
        elems: 8,
        bytes_per_array: 32,
        width: 4,
        grid: 1,
        block: 2,
        got: (1..=8).map(|i| 101.0 * i as f64).collect(),
        want: (1..=8).map(|i| 101.0 * i as f64).collect(),
    };
    let lines = launch.lines();
    assert_eq!(
        lines[0],
        "float4  <<<1, 2>>>: 2 threads x one float4 (16 bytes) = 8 x f32 (32 bytes a buffer)"
    );
    assert_eq!(
        lines[1],
        "  GPU out:        101 202 303 404 505 606 707 808"
    );
    assert_eq!(
        lines[2],
        "  host reference: 101 202 303 404 505 606 707 808"
    );
}

#[test]
fn the_ragged_reading_follows_the_timings() {
    use host::ragged::{EdgeCost, RaggedPair};
    use host::timing::Timing;
    let t = |ms: &[f64]| Timing::new(ms.to_vec());
    let round = 1usize << 26;
    let pair = |round_ms: &[f64], ragged_ms: &[f64]| RaggedPair {
        what: "add_vec16_f32".into(),
        stem: "add_vec16_f32".into(),
        round_elems: round,
        ragged_elems: round + 611,
        round_shape: "2^26".into(),
        ragged_shape: "2^26 + 611".into(),
        round: t(round_ms),
        ragged: t(ragged_ms),
    };
    // 0.2000 ms for 2^26: 2.980 ps per element; the ragged size at the same
    // rate takes 0.2000018 ms. Spreads of 1% each: within the noise.
    let p = pair(&[0.199, 0.200, 0.201], &[0.199, 0.2000018, 0.201]);
    assert_eq!(p.verdict(), EdgeCost::WithinNoise);
    let s = p.sentence();
    assert!(s.starts_with("add_vec16_f32: 2^26 (67108864 elements) 2.980 ps/element, 2^26 + 611 (67109475 elements) 2.980 ps/element"), "{s}");
    assert!(s.contains("within the noise (2.00%)"), "{s}");
    // 5% slower past 0.2% of spread: the edge is called, with its cost in ms.
    let p = pair(&[0.2, 0.2002], &[0.21, 0.2102]);
    assert_eq!(p.verdict(), EdgeCost::Costlier);
    assert!(
        p.sentence().contains("past the noise (0.20%)"),
        "{}",
        p.sentence()
    );
    assert!(
        p.edge_ms() > 0.009 && p.edge_ms() < 0.011,
        "{}",
        p.edge_ms()
    );
    assert_eq!(p.key(Edge::Round), "add_vec16_f32/round");
    assert_eq!(p.json()["verdict"], "costlier");
}

#[test]
fn every_vector_kernel_moves_16_bytes_per_access() {
    let found = entries(PTX);
    for &k in Kernel::ALL {
        assert!(found.contains(&k.symbol()), "missing {}", k.symbol());
    }
    for (d, load, store, tail) in [
        (
            Dtype::F32,
            "ld.global.v4.b32",
            "st.global.v4.b32",
            "ld.global.b32",
        ),
        (
            Dtype::F64,
            "ld.global.v2.b64",
            "st.global.v2.b64",
            "ld.global.b64",
        ),
        (
            Dtype::F16,
            "ld.global.v4.b32",
            "st.global.v4.b32",
            "ld.global.b16",
        ),
    ] {
        let body = entry_body(PTX, Kernel::Vec16(d).symbol()).unwrap();
        let lines: Vec<&str> = body.lines().map(str::trim).collect();
        let count = |op: &str| {
            lines
                .iter()
                .filter(|l| l.split_whitespace().next() == Some(op))
                .count()
        };
        assert_eq!(count(load), 2, "{d:?}: one vector load per input\n{body}");
        assert_eq!(count(store), 1, "{d:?}: one vector store\n{body}");
        assert_eq!(count(tail), 2, "{d:?}: the tail's scalar loads\n{body}");
        let scalar = entry_body(PTX, Kernel::Scalar(d).symbol()).unwrap();
        assert!(
            !scalar.contains(".v2.") && !scalar.contains(".v4."),
            "{d:?} scalar add uses vectors"
        );
    }
    // The half adds are the paired instruction.
    assert_eq!(
        entry_body(PTX, "add_vec16_f16")
            .unwrap()
            .matches("add.rn.f16x2")
            .count(),
        4
    );
}

#[test]
fn sass_counts_read_cuobjdump_lines() {
    let sass = "/*0170*/ LDG.E.128 R4, desc[UR4][R4.64] ;\n/*0180*/ LDG.E.128.CONSTANT R12, desc[UR4][R8.64] ;\n\
                /*01f0*/ STG.E.128 desc[UR4][R10.64], R12 ;\n/*0200*/ LDG.E R3, desc[UR4][R2.64] ;";
    assert_eq!(sass_128_counts(sass), (2, 1));
}

#[test]
fn the_twins_compile_with_nvrtc_and_show_the_same() {
    let Some(ptx) = lab_tests::twin_ptx_on_cpu::<host::vectorize::VectorizeLesson>((7, 5)) else {
        return;
    };
    // The twin's vector add is 128-bit too.
    let body = entry_body(&ptx, "add_vec16_f64").unwrap();
    assert!(
        body.contains("ld.global.v2.f64") || body.contains("ld.global.v2.b64"),
        "{body}"
    );
}
