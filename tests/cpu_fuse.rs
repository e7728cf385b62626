//! CPU-only tests of the fuse lesson: the host mirrors' memory-operation
//! counts on the example, the byte model, the reference (no negative zero
//! reaches relu; the FMA really rounds differently), the launch shape, the
//! PTX (no contraction in the fused kernel) and the CUDA C twins compiling
//! with NVRTC without contraction.

use host::fuse::reference::{self, EXAMPLE_A, EXAMPLE_B, EXAMPLE_C, Inputs, MemOps};
use host::fuse::{Difference, FUSED_BYTES_PER_ELEM, Kernel, UNFUSED_BYTES_PER_ELEM, mirror_lines};
use host::kernels::KernelId;
use host::ptx::{PTX, entries, entry_body};
use kernels_gpu::fuse::*;

#[test]
fn the_mirrors_count_8_against_4_on_the_example() {
    let (mut u, mut f) = ([f32::NAN; 6], [f32::NAN; 6]);
    let ou = reference::unfused_pipeline(&EXAMPLE_A, &EXAMPLE_B, &EXAMPLE_C, &mut u);
    let of = reference::fused_pipeline(&EXAMPLE_A, &EXAMPLE_B, &EXAMPLE_C, &mut f);
    assert_eq!(
        ou,
        MemOps {
            reads: 30,
            writes: 18
        }
    );
    assert_eq!(
        of,
        MemOps {
            reads: 18,
            writes: 6
        }
    );
    assert_eq!(u, [2.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    assert!(u.iter().zip(&f).all(|(x, y)| x.to_bits() == y.to_bits()));
    // The counts are per element: the same 8 and 4 at another length.
    let n = 1001;
    let inputs = Inputs::new(n);
    let mut out = vec![0.0; n];
    let ou = reference::unfused_pipeline(&inputs.a, &inputs.b, &inputs.c, &mut out);
    let of = reference::fused_pipeline(&inputs.a, &inputs.b, &inputs.c, &mut out);
    assert_eq!(
        (ou.per_element(n).total(), of.per_element(n).total()),
        (8, 4)
    );
    assert_eq!(ou.total(), 8 * n);
}

#[test]
fn the_mirror_lines_are_the_seeds() {
    let (lines, facts) = mirror_lines();
    assert_eq!(
        lines,
        [
            "relu(a*b+c) on 6 elements:",
            "  unfused (3 kernels): 5 tensor-sized reads, 3 tensor-sized writes, 8 total memory ops",
            "  fused   (1 kernel):  3 tensor-sized reads, 1 tensor-sized writes, 4 total memory ops",
            "outputs identical between unfused and fused: true",
            "fused output: 2.0 0.0 0.0 0.0 0.0 0.0",
            "memory traffic reduction: 2x (8 ops -> 4 ops), independent of size 6",
        ]
    );
    assert_eq!(facts["outputs_identical"], true);
}

#[test]
fn the_byte_model_is_32_against_16() {
    assert_eq!(UNFUSED_BYTES_PER_ELEM, 32);
    assert_eq!(FUSED_BYTES_PER_ELEM, 16);
    let stages: usize = Kernel::STAGES.iter().map(|k| k.bytes_per_elem()).sum();
    assert_eq!(stages, UNFUSED_BYTES_PER_ELEM);
    assert_eq!(
        Kernel::STAGES
            .iter()
            .map(|k| k.mem_ops().reads)
            .sum::<usize>(),
        UNFUSED_READS
    );
    assert_eq!(
        Kernel::Fused.mem_ops(),
        MemOps {
            reads: 3,
            writes: 1
        }
    );
    assert_eq!(Kernel::FusedFma.bytes_per_elem(), 16);
}

#[test]
fn relu_matches_the_seeds_select() {
    assert_eq!(reference::relu(2.5), 2.5);
    assert_eq!(reference::relu(-1.0).to_bits(), 0.0f32.to_bits());
    assert_eq!(reference::relu(-0.0).to_bits(), 0.0f32.to_bits());
    assert_eq!(reference::relu(f32::NAN).to_bits(), 0.0f32.to_bits());
}

#[test]
fn the_check_data_exercise_relu_and_rounding() {
    let inputs = Inputs::new(CHECK_ELEMS);
    let t2 = inputs.t2();
    // The kernels' relu compiles to max.f32 (both compilers): the same as the
    // select for every input these data give, none of them -0 or NaN.
    assert!(
        t2.iter()
            .all(|v| !v.is_nan() && v.to_bits() != (-0.0f32).to_bits())
    );
    let y = inputs.y();
    let zeros = y.iter().filter(|&&v| v == 0.0).count();
    assert!(
        zeros > CHECK_ELEMS / 5 && zeros < CHECK_ELEMS * 4 / 5,
        "{zeros} zeros"
    );
    // One rounding differs from two often enough to be seen: a fused kernel
    // contracted into an FMA would fail the bit-exact check.
    let d = Difference::of(&inputs.y_fma(), &y);
    assert!(d.differing > CHECK_ELEMS / 100, "{d:?}");
    assert!(d.max_ulps >= 1);
    // The FMA keeps the product's rounding error (under half an ULP of a
    // product below 16) out of the sum: differences stay that small in
    // absolute terms, however many ULPs of a cancelled result they are.
    assert!(d.max_abs > 0.0 && d.max_abs < 16.0 * f32::EPSILON, "{d:?}");
}

#[test]
fn difference_counts_bits_and_ulps() {
    let x = [1.0f32, 2.0, f32::from_bits(3.0f32.to_bits() + 2)];
    let y = [1.0f32, 2.0, 3.0];
    assert_eq!(
        Difference::of(&x, &y),
        Difference {
            elems: 3,
            differing: 1,
            max_ulps: 2,
            max_abs: 3.0f32.next_up().next_up() - 3.0,
        }
    );
}

#[test]
fn launch_shape_covers_n_with_no_spare_block() {
    let timed = host::fuse::Sizes::new(&lab_tests::profile("H200").info(), false).timed;
    assert_eq!(
        timed,
        1 << 26,
        "16 Mi floats doubled to 256 MiB a tensor for a 60 MiB L2"
    );
    for n in [1, 6, CHECK_ELEMS, timed] {
        let c = Kernel::launch_config(n);
        let blocks = c.grid_dim.0 as usize;
        assert!(blocks * THREADS_PER_BLOCK as usize >= n);
        assert!((blocks - 1) * (THREADS_PER_BLOCK as usize) < n);
    }
}

#[test]
fn the_fused_kernel_is_not_contracted() {
    let found = entries(PTX);
    for &k in Kernel::ALL {
        assert!(found.contains(&k.symbol()), "missing {}", k.symbol());
    }
    let body = |k: Kernel| entry_body(PTX, k.symbol()).unwrap();
    let fused = body(Kernel::Fused);
    assert!(
        fused.contains("mul.rn.f32") && fused.contains("add.rn.f32"),
        "{fused}"
    );
    assert!(!fused.contains("fma."), "{fused}");
    assert!(body(Kernel::FusedFma).contains("fma.rn.f32"));
    assert!(!body(Kernel::Mul).contains("fma."));
    // Each kernel touches global memory exactly as counted.
    for &k in Kernel::ALL {
        let b = body(k);
        let ld = b.matches("ld.global").count();
        let st = b.matches("st.global").count();
        assert_eq!(
            MemOps {
                reads: ld,
                writes: st
            },
            k.mem_ops(),
            "{}",
            k.symbol()
        );
    }
}

#[test]
fn the_twins_compile_with_nvrtc_without_contraction() {
    let Some(ptx) = lab_tests::twin_ptx_on_cpu::<host::fuse::FuseLesson>((7, 5)) else {
        return;
    };
    let fused = entry_body(&ptx, Kernel::Fused.symbol()).unwrap();
    assert!(fused.contains("mul.rn.f32"), "{fused}");
    assert!(
        !fused.contains("fma."),
        "NVRTC contracted the fused twin: {fused}"
    );
    assert!(
        entry_body(&ptx, Kernel::FusedFma.symbol())
            .unwrap()
            .contains("fma.rn.f32")
    );
}

#[test]
fn the_mirrors_agree_at_both_sizes() {
    for size in [6, host::fuse::MIRROR_SECOND_SIZE] {
        assert!(host::fuse::mirror_failure(size).is_none(), "n = {size}");
    }
}

#[test]
fn the_rust_ptx_has_two_arithmetic_instructions_fused_and_one_with_fma() {
    assert_eq!(host::fuse::ptx_arith_f32(Kernel::Fused), 2);
    assert_eq!(host::fuse::ptx_arith_f32(Kernel::FusedFma), 1);
}

#[test]
fn the_timed_reading_follows_the_medians() {
    use host::fuse::timed_reading;
    // The recorded H200 medians: the pipeline more than 2x the fused kernel.
    let r = timed_reading(0.6782, 0.6781, 0.2758, 0.2762);
    assert!(r.contains("2.46x, against the counted 2.00x"), "{r}");
    assert!(r.contains("moves its bytes faster (1.23x"), "{r}");
    assert!(r.contains("0.678 ms against 0.678 ms"), "{r}");
    assert!(r.contains("0.276 and 0.276 ms (within 5%"), "{r}");
    assert!(
        r.contains("1 f32 multiply/add/FMA instruction(s) against 2"),
        "{r}"
    );
    let r = timed_reading(2.0, 2.0, 1.0, 0.5);
    assert!(r.contains("within 5% of what the bytes alone"), "{r}");
    assert!(r.contains("100% faster"), "{r}");
    let r = timed_reading(1.5, 1.5, 1.0, 1.0);
    assert!(r.contains("moves its bytes slower (0.75x"), "{r}");
}
