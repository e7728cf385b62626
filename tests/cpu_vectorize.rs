//! CPU-only tests of the vectorize lesson: the host mirror's counts at the
//! seed's sizes, widths derived from the types, the reference's rounding,
//! launch shapes, and the PTX: every 16-byte kernel loads and stores with
//! one 128-bit access per input and output, of the element's width.

use half::f16;
use host::kernels::KernelId;
use host::ptx::{PTX, entries, entry_body};
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
    assert_eq!(
        sizes.buffer_bytes,
        256 << 20,
        "64 MiB doubled to 4x a 60 MiB L2"
    );
    for d in Dtype::ALL {
        for n in [1, 3, 10, 41, CHECK_ELEMS, sizes.timed(d)] {
            let c = Kernel::Vec16(d).launch_config(n);
            let threads = c.grid_dim.0 as usize * c.block_dim.0 as usize;
            assert!(
                threads >= n / d.width() && threads >= n % d.width(),
                "{d:?} n = {n}"
            );
            let c = Kernel::Scalar(d).launch_config(n);
            assert!(c.grid_dim.0 as usize * c.block_dim.0 as usize >= n);
        }
        assert!(sizes.timed(d) * d.size() <= sizes.buffer_bytes);
        assert_ne!(
            sizes.timed(d) % d.width(),
            0,
            "the timed size runs the tail"
        );
    }
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
