//! CPU-only tests of the vectorize lesson: the host mirror's counts at the
//! seed's sizes, widths derived from the types, the reference's rounding,
//! launch shapes, and the PTX: every 16-byte kernel loads and stores with
//! one 128-bit access per input and output, of the element's width.

use half::f16;
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
    let t = vectorized_add_host(&mut vec![0.0; 33], &a, &a, 4);
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
fn the_reference_rounds_once_in_each_type() {
    // The fills are exact in every type, and i = 0 gives -5 + 0.
    assert_eq!(reference::fill_a(0), -5.0);
    assert_eq!(reference::fill_b(0), 0.0);
    for i in 0..5000 {
        let (a, b) = (reference::fill_a(i), reference::fill_b(i));
        assert_eq!(f16::from_f32(a).to_f32(), a, "fill_a({i}) is not a half");
        assert_eq!(f16::from_f32(b).to_f32(), b, "fill_b({i}) is not a half");
    }
    let n = 3000;
    let bits = reference::sum_bits(Dtype::F16, n);
    // Half sums with 11-bit significands: the result is rounded, and the
    // reference's value is the nearest half to the exact sum.
    for (i, &got) in bits.iter().enumerate() {
        let exact = f64::from(reference::fill_a(i)) + f64::from(reference::fill_b(i));
        let got = f64::from(f16::from_bits(got as u16).to_f32());
        assert!(
            (got - exact).abs() <= exact.abs() * 2f64.powi(-11) + 1e-12,
            "index {i}: {got} vs {exact}"
        );
    }
    assert_eq!(
        reference::bits_of(
            Dtype::F64,
            &reference::input_bytes(Dtype::F64, 2, reference::fill_a)
        ),
        [(-5.0f64).to_bits(), (reference::fill_a(1) as f64).to_bits()]
    );
}

#[test]
fn launch_shapes_cover_vectors_and_tail() {
    for d in Dtype::ALL {
        for n in [1, 3, 10, 41, CHECK_ELEMS, d.timed_elems()] {
            let c = Kernel::Vec16(d).launch_config(n);
            let threads = c.grid_dim.0 as usize * c.block_dim.0 as usize;
            assert!(
                threads >= n / d.width() && threads >= n % d.width(),
                "{d:?} n = {n}"
            );
            let c = Kernel::Scalar(d).launch_config(n);
            assert!(c.grid_dim.0 as usize * c.block_dim.0 as usize >= n);
        }
        assert!(d.timed_elems() * d.size() <= TIMED_BUFFER_BYTES);
        assert_ne!(
            d.timed_elems() % d.width(),
            0,
            "the timed size runs the tail"
        );
    }
}

#[test]
fn every_vector_kernel_moves_16_bytes_per_access() {
    let found = entries(PTX);
    for k in Kernel::ALL {
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
fn the_twins_compile_with_nvrtc_and_match_the_entries() {
    if host::nvrtc::require_nvrtc().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run this test: NVRTC is missing"
        );
        eprintln!("skipped: NVRTC is not on the loader path");
        return;
    }
    let ptx =
        host::nvrtc::compile(&host::vectorize::cuda_c_program(), "vectorize.cu", (7, 5)).unwrap();
    let mut c = entries(&ptx);
    c.sort();
    let mut rust: Vec<&str> = Kernel::ALL.iter().map(|k| k.symbol()).collect();
    rust.sort();
    assert_eq!(c, rust);
    // The twin's vector add is 128-bit too.
    let body = entry_body(&ptx, "add_vec16_f64").unwrap();
    assert!(
        body.contains("ld.global.v2.f64") || body.contains("ld.global.v2.b64"),
        "{body}"
    );
}
