//! CPU-only tests of the roofline lesson (they run in CI): the references on
//! hand-checked values, the FLOP and byte model, the sizes, and the PTX the
//! builder produced (entry points, state spaces, read-only loads, FMAs, no
//! local-memory spills).

use host::gpu::DeviceInfo;
use host::kernels::KernelId;
use host::lesson::Report as _;
use host::ptx::{self, PTX, entries, entry_body};
use host::roofline::model::{Ceilings, cost};
use host::roofline::{Kernel, Sizes, launch_config, reference};
use host::sizes::grown_side;
use kernels_gpu::roofline::*;

fn device(l2_bytes: usize, sms: u32) -> DeviceInfo {
    lab_tests::synthetic_device(l2_bytes, sms)
}

fn lesson_sizes(l2_bytes: usize, sms: u32) -> Sizes {
    Sizes::for_device(&device(l2_bytes, sms))
}

// ---- references on hand-checked values -----------------------------------

#[test]
fn the_transpose_input_is_its_own_index() {
    // (The other fills are checked for range and shifts in cpu_fills.rs.)
    assert_eq!(reference::fill_index_bits(5).to_bits(), 5);
    assert_eq!(reference::fill_index_bits(67_108_863).to_bits(), 67_108_863);
}

#[test]
fn scrambled_fill_is_small_and_rows_differ() {
    let d = MAT_DIM;
    let a: Vec<f32> = (0..d * d)
        .map(|i| reference::fill_scrambled(i, 1))
        .collect();
    assert!(
        a.iter()
            .all(|&v| v.fract() == 0.0 && (-4.0..=4.0).contains(&v))
    );
    for r in 1..d {
        assert_ne!(a[..d], a[r * d..(r + 1) * d], "row {r} equals row 0");
    }
    let differ = (0..100)
        .filter(|&i| reference::fill_scrambled(i, 1) != reference::fill_scrambled(i, 2))
        .count();
    assert!(
        differ > 50,
        "the two streams agree on {} of 100",
        100 - differ
    );
}

#[test]
fn polynomial_by_value_agrees_with_the_chain() {
    let input: Vec<f32> = (0..100).map(reference::fill_a).collect();
    assert_eq!(
        reference::polynomial_by_value(&input),
        reference::polynomial(&input)
    );
}

#[test]
fn vector_add_reference() {
    assert_eq!(
        reference::vector_add(&[1.0, 2.0, 7.0], &[-2.0, 0.5, 2.0]),
        [-1.0, 2.5, 9.0]
    );
}

#[test]
fn transpose_reference() {
    // [[0, 1, 2], [3, 4, 5], [6, 7, 8]] -> [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    let m: Vec<f32> = (0..9).map(|i| i as f32).collect();
    assert_eq!(
        reference::transpose(&m, 3),
        [0.0, 3.0, 6.0, 1.0, 4.0, 7.0, 2.0, 5.0, 8.0]
    );
}

#[test]
fn matmul_reference() {
    // [[1, 2], [3, 4]] x [[5, 6], [7, 8]] = [[19, 22], [43, 50]]
    assert_eq!(
        reference::matmul(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0], 2),
        [19.0, 22.0, 43.0, 50.0]
    );
}

#[test]
fn block_sums_reference() {
    assert_eq!(
        reference::block_sums(&[1.0, 2.0, 3.0, 4.0, 5.0], 2),
        [3.0, 7.0, 5.0]
    );
}

#[test]
fn heat_step_reference() {
    // A 4x4 grid; interior cell (1,1) = 6 with neighbours 5, 7, 2, 10:
    // 6 + 0.2 * (5 + 7 + 2 + 10 - 24) = 6. Cell (1,2) = 7 with 6, 8, 3, 11:
    // 7 + 0.2 * (28 - 28) = 7. A linear ramp is a steady state, so every
    // interior cell keeps its value; the ring is 0.
    let grid: Vec<f32> = (0..16).map(|i| i as f32 + 1.0).collect();
    let out = reference::heat_step(&grid, 4, 0.2);
    let want = [
        0.0, 0.0, 0.0, 0.0, 0.0, 6.0, 7.0, 0.0, 0.0, 10.0, 11.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    ];
    assert_eq!(out, want);
    // A single hot cell spreads: centre 10 with cold neighbours -> 10 - 0.2 * 40 = 2.
    let mut spike = vec![0.0f32; 9];
    spike[4] = 10.0;
    let out = reference::heat_step(&spike, 3, 0.2);
    assert!((out[4] - 2.0).abs() < 1e-6, "{}", out[4]);
}

#[test]
fn polynomial_reference() {
    // x = 0: acc = 0, then fma(0, 0, 1) = 1 and fma(1, 0, 1) = 1 for good.
    // x = 16 * 0.0625 = 1: acc = 1, then 2, 3, ..., 257 after 256 steps.
    assert_eq!(reference::polynomial(&[0.0, 16.0]), [1.0, 257.0]);
}

#[test]
fn fma_sum_reference() {
    // Zero steps: 0 + 0.125 + ... + 0.875 = 3.5. One step: each chain becomes
    // q/8 * 1.0000001 + 1, and the eight sum to 11.5 within f32 rounding.
    assert_eq!(reference::fma_sum(0), 3.5);
    assert!((reference::fma_sum(1) - 11.5).abs() < 1e-5);
    // The sum grows with the iteration count: half the steps is far off.
    assert!(reference::fma_sum(FMA_ITERS) > 1.9 * reference::fma_sum(FMA_ITERS / 2));
}

// ---- the FLOP and byte model ------------------------------------------------

#[test]
fn vector_add_is_one_twelfth_flop_per_byte() {
    let s = lesson_sizes(4 << 20, 40);
    assert_eq!(cost(Kernel::VectorAdd, &s).intensity(), 1.0 / 12.0);
    assert_eq!(
        cost(Kernel::VectorAddPermuted, &s),
        cost(Kernel::VectorAdd, &s)
    );
    assert_eq!(cost(Kernel::Copy, &s).bytes, 8.0 * s.n as f64);
    assert_eq!(cost(Kernel::Copy, &s).flop, 0.0);
}

#[test]
fn matmul_bytes_follow_the_seed() {
    let s = lesson_sizes(4 << 20, 40);
    let d = MAT_DIM as f64;
    assert_eq!(
        cost(Kernel::MatmulNaive, &s).bytes,
        (2.0 * d * d * d + d * d) * 4.0
    );
    assert_eq!(
        cost(Kernel::MatmulTiled, &s).bytes,
        (2.0 * d * d * d / 16.0 + d * d) * 4.0
    );
    assert_eq!(cost(Kernel::MatmulTiled, &s).flop, 2.0 * d * d * d);
}

#[test]
fn reduction_stencil_polynomial_and_fma_counts() {
    let s = lesson_sizes(4 << 20, 40);
    let n = (4096 * 4096) as f64;
    let blocks = n / 256.0;
    assert_eq!(cost(Kernel::Reduce, &s).flop, n - blocks);
    assert_eq!(cost(Kernel::Reduce, &s).bytes, (n + blocks) * 4.0);
    let interior = 2046.0 * 2046.0;
    assert_eq!(cost(Kernel::StencilGlobal, &s).flop, 7.0 * interior);
    assert_eq!(cost(Kernel::StencilGlobal, &s).bytes, 6.0 * interior * 4.0);
    // 2046 / 32 -> 64 blocks across, 2046 / 8 -> 256 down, 340 cells each.
    assert_eq!(
        cost(Kernel::StencilTiled, &s).bytes,
        (340.0 * 64.0 * 256.0 + interior) * 4.0
    );
    assert_eq!(cost(Kernel::Polynomial, &s).flop, 513.0 * n);
    assert_eq!(
        cost(Kernel::FmaPeak, &s).flop,
        (32 * 40 * 256) as f64 * FMA_ITERS as f64 * 8.0 * 2.0
    );
}

#[test]
fn dot_block_sums_are_the_grid_stride_sums_and_stay_exact() {
    // The bound DOT_EXACT_PER_THREAD assumes: no product of the two fills
    // is larger than 14 in magnitude.
    let largest = (0..100_000)
        .map(|i| (reference::fill_a(i) * reference::fill_b(i)).abs())
        .fold(0.0f32, f32::max);
    assert_eq!(largest, 14.0);
    // The reference against a plain simulation of the kernel: each thread's
    // f32 FMA chain in grid-stride order, then each block's sum.
    let (n4, blocks, threads) = (10_007, 3, 64);
    let grid = blocks * threads;
    let mut want = vec![0.0f32; blocks];
    for t in 0..grid {
        let mut acc = 0.0f32;
        let mut i = t;
        while i < n4 {
            for j in 4 * i..4 * i + 4 {
                acc = reference::fill_a(j).mul_add(reference::fill_b(j), acc);
            }
            i += grid;
        }
        want[t / threads] += acc;
    }
    assert_eq!(reference::stream_dot_partials(n4, blocks, threads), want);
}

#[test]
fn stream_counts_and_sizes() {
    use host::roofline::Shape;
    use host::roofline::model::cost_shaped;
    // An H200-like device: 60 MiB L2, 132 SMs, 2048 threads an SM, 141 GB.
    let s = lesson_sizes(60 << 20, 132);
    assert_eq!(
        s.stream_n4 * 16,
        2 << 30,
        "32 x 60 MiB, rounded up to 2 GiB"
    );
    assert_eq!(
        s.stream_blocks,
        132 * 8,
        "every SM full: 2048 / 256 blocks each"
    );
    let m = s.stream_n4 as f64;
    assert_eq!(
        cost_shaped(Kernel::StreamCopy, &s, Shape::GridStride).bytes,
        32.0 * m
    );
    assert_eq!(
        cost_shaped(Kernel::StreamTriad, &s, Shape::PerElement).bytes,
        48.0 * m
    );
    assert_eq!(
        cost_shaped(Kernel::StreamTriad, &s, Shape::PerElement).flop,
        8.0 * m
    );
    assert_eq!(
        cost_shaped(Kernel::StreamDot, &s, Shape::GridStride).bytes,
        32.0 * m + 4.0 * 1056.0
    );
    assert_eq!(
        cost_shaped(Kernel::StreamDot, &s, Shape::PerElement).bytes,
        32.0 * m + 4.0 * (m / 256.0)
    );
    // The dot's block sums stay exact: at most 1170 float4s a thread.
    assert!(s.stream_n4.div_ceil(1056 * 256) <= 1170);
    let few = Sizes {
        stream_blocks: 10,
        ..s
    };
    let e = few.validate().unwrap_err().to_string();
    assert!(e.contains("a dot block sum could pass 2^24"), "{e}");
    assert_eq!(Sizes::dot_exact_blocks(s.stream_n4), 449);
}

#[test]
fn ridge_point_and_attainable_rate() {
    let c = Ceilings {
        bandwidth_gb_per_s: 4000.0,
        fma_gflop_per_s: 60000.0,
    };
    assert_eq!(c.ridge(), 15.0);
    assert_eq!(c.attainable_gflop_per_s(1.0 / 12.0), 4000.0 / 12.0);
    assert_eq!(c.attainable_gflop_per_s(64.0), 60000.0);
}

// ---- sizes and launch shapes ------------------------------------------------

#[test]
fn buffers_grow_to_four_times_the_l2() {
    // A T4's 4 MiB L2: the seed's sizes stand.
    assert_eq!(grown_side(SEED_SIDE, 4, 4 << 20), 4096);
    assert_eq!(grown_side(SEED_STENCIL_SIDE, 4, 4 << 20), 2048);
    // An H200's 60 MiB: 64 MiB buffers are 1.07x the L2; 256 MiB are 4.3x.
    assert_eq!(grown_side(SEED_SIDE, 4, 60 << 20), 8192);
    assert_eq!(grown_side(SEED_STENCIL_SIDE, 4, 60 << 20), 8192);
    for l2 in [4 << 20, 40 << 20, 50_000_000, 60 << 20, 126 << 20] {
        let s = lesson_sizes(l2, 132);
        assert!(s.n * 4 >= 4 * l2, "{l2}");
        assert!(s.stencil_side * s.stencil_side * 4 >= 4 * l2, "{l2}");
        s.validate().unwrap();
    }
}

#[test]
fn invalid_sizes_are_errors_that_say_why() {
    let good = lesson_sizes(4 << 20, 40);
    let msg = |s: Sizes| s.validate().unwrap_err().to_string();
    assert!(msg(Sizes { side: 100, ..good }).contains("not a multiple of 32"));
    assert!(
        msg(Sizes {
            mat_dim: 40,
            ..good
        })
        .contains("not a positive multiple of 16")
    );
    // matmul_naive's assume_whole_tiles needs d > 0 as well.
    assert!(
        msg(Sizes { mat_dim: 0, ..good })
            .contains("matmul side 0 is not a positive multiple of 16")
    );
    assert!(msg(Sizes { n: 1001, ..good }).contains("stride"));
    assert!(
        msg(Sizes {
            fma_blocks: 1 << 20,
            ..good
        })
        .contains("FMA threads")
    );
}

#[test]
fn launch_shapes_cover_each_problem() {
    let s = lesson_sizes(60 << 20, 132);
    let c = launch_config(Kernel::VectorAdd, &s);
    assert_eq!((c.grid_dim, c.block_dim), ((262_144, 1, 1), (256, 1, 1)));
    let c = launch_config(Kernel::VectorAddPermuted, &s);
    assert_eq!(c.grid_dim.0 as usize * 256 * c.grid_dim.1 as usize, s.n);
    let c = launch_config(Kernel::TransposeTiled, &s);
    assert_eq!((c.grid_dim, c.block_dim), ((256, 256, 1), (32, 32, 1)));
    let c = launch_config(Kernel::StencilTiled, &s);
    assert_eq!((c.grid_dim, c.block_dim), ((256, 1024, 1), (32, 8, 1)));
    assert!(c.grid_dim.0 as usize * 32 >= 8190 && c.grid_dim.1 as usize * 8 >= 8190);
    let c = launch_config(Kernel::FmaPeak, &s);
    assert_eq!(c.grid_dim.0, 32 * 132);
}

// ---- the PTX ---------------------------------------------------------------

fn body(kernel: Kernel) -> &'static str {
    entry_body(PTX, kernel.symbol())
        .unwrap_or_else(|| panic!("no .entry {} in the PTX", kernel.symbol()))
}

#[test]
fn ptx_has_all_twelve_entry_points() {
    let found = entries(PTX);
    for &k in Kernel::ALL {
        assert!(found.contains(&k.symbol()), "missing {}", k.symbol());
    }
    // The twelve, the test-only kernels, the fusion lesson's 13, and the
    // chapter-19 lessons' own (each lesson's tests check its entries; several
    // branches add lessons at once, so no total is fixed here): no symbol
    // twice.
    for &k in host::testing::TestKernel::ALL {
        assert!(found.contains(&k.symbol()), "missing {}", k.symbol());
    }
    assert!(found.len() >= 12 + 2 + 13, "{found:?}");
    let mut unique = found.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), found.len(), "{found:?}");
}

#[test]
fn ptx_targets_sm_75_by_default() {
    if std::env::var("LAB_PTX_ARCH").is_err() {
        assert_eq!(ptx::target(), "sm_75");
        // PTX ISA 6.5, where ldmatrix and the f16 mma.sync m16n8k8 of gemm_f16_mma begin.
        assert_eq!(ptx::isa_version(), "6.5");
    }
    assert_eq!(ptx::parse_sm("sm_90a"), Some((9, 0)));
    assert_eq!(ptx::parse_sm("sm_100"), Some((10, 0)));
    assert_eq!(ptx::parse_sm("compute_75"), None);
}

/// A generic load or store (`ld.b32`, `st.f32`, ...) has no state space
/// between the opcode and its type.
fn generic_accesses(body: &str) -> Vec<&str> {
    body.lines()
        .map(str::trim)
        .filter(|l| {
            let op = l.split_whitespace().next().unwrap_or("");
            (op.starts_with("ld.") || op.starts_with("st."))
                && !op.contains(".global")
                && !op.contains(".shared")
                && !op.contains(".param")
                && !op.contains(".local")
                && !op.contains(".const")
        })
        .collect()
}

#[test]
fn tiled_kernels_use_the_shared_state_space() {
    for k in [
        Kernel::TransposeTiled,
        Kernel::MatmulTiled,
        Kernel::Reduce,
        Kernel::StencilTiled,
    ] {
        let b = body(k);
        assert!(b.contains("ld.shared."), "{}: no ld.shared", k.symbol());
        assert!(b.contains("st.shared."), "{}: no st.shared", k.symbol());
    }
    for &k in Kernel::ALL {
        let generic = generic_accesses(body(k));
        assert!(
            generic.is_empty(),
            "{}: generic accesses {generic:?}",
            k.symbol()
        );
    }
}

#[test]
fn no_kernel_spills_to_local_memory() {
    for &k in Kernel::ALL {
        let b = body(k);
        assert!(!b.contains(".local"), "{} uses local memory", k.symbol());
    }
}

#[test]
fn inputs_use_the_read_only_path() {
    for k in Kernel::ALL
        .iter()
        .copied()
        .filter(|&k| k != Kernel::FmaPeak)
    {
        let b = body(k);
        assert!(
            b.contains("ld.global.nc."),
            "{}: inputs not loaded with ld.global.nc",
            k.symbol()
        );
        let plain: Vec<&str> = b
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("ld.global.") && !l.starts_with("ld.global.nc."))
            .collect();
        assert!(
            plain.is_empty(),
            "{}: plain global loads {plain:?}",
            k.symbol()
        );
    }
}

#[test]
fn multiply_adds_are_fused() {
    for k in [
        Kernel::MatmulNaive,
        Kernel::MatmulTiled,
        Kernel::StencilGlobal,
        Kernel::StencilTiled,
        Kernel::Polynomial,
        Kernel::FmaPeak,
    ] {
        let b = body(k);
        assert!(b.contains("fma.rn.f32"), "{}: no fma.rn.f32", k.symbol());
    }
    // The only multiply left in the polynomial is the input scale.
    assert_eq!(body(Kernel::Polynomial).matches("mul.rn.f32").count(), 1);
    assert_eq!(
        body(Kernel::Polynomial).matches("fma.rn.f32").count(),
        POLY_DEGREE as usize
    );
    for k in [Kernel::MatmulNaive, Kernel::MatmulTiled, Kernel::FmaPeak] {
        assert!(
            !body(k).contains("mul.rn.f32"),
            "{}: an unfused multiply",
            k.symbol()
        );
    }
}

#[test]
fn the_copy_ceiling_moves_16_bytes_per_thread() {
    let b = body(Kernel::Copy);
    assert!(b.contains("ld.global.nc.v4.f32"), "{b}");
    assert!(b.contains("st.global.v4"), "{b}");
    let s = lesson_sizes(60 << 20, 132);
    let c = launch_config(Kernel::Copy, &s);
    assert_eq!(c.grid_dim.0 as usize * 256, s.n / 4);
}

#[test]
fn the_fma_loop_is_unrolled_but_not_flattened() {
    // One trip of the run-time loop holds FMA_UNROLL steps of 8 chains; the
    // loop itself stays (a branch back), so the count is not compiled in.
    let b = body(Kernel::FmaPeak);
    let fmas = b.matches("fma.rn.f32").count();
    assert!(fmas >= (FMA_UNROLL as usize) * FMA_CHAINS, "{fmas} FMAs");
    assert!(
        fmas < FMA_ITERS as usize,
        "{fmas} FMAs: the loop was flattened"
    );
    assert!(
        lab_tests::has_backward_branch(b),
        "no loop: no branch goes back to an earlier label"
    );
}

#[test]
fn shared_tiles_are_declared_once_at_module_scope() {
    // The roofline lesson's own (other lessons' are tested with them).
    let decls: Vec<&str> = PTX
        .lines()
        .filter(|l| l.trim_start().starts_with(".shared") && l.contains("ROOFLINE_"))
        .collect();
    assert_eq!(decls.len(), 6, "{decls:?}");
    assert!(
        decls
            .iter()
            .any(|d| d.contains("ROOFLINE_TRANSPOSE_TILE[4224]")),
        "32 x 33 floats"
    );
}

// ---- the PTX through ptxas ---------------------------------------------------

/// ptxas, from `$PTXAS` or the PATH (`cargo xtask test` provides one from
/// PyPI's nvidia-cuda-nvcc-cu12 where neither has it).
fn ptxas() -> Option<std::path::PathBuf> {
    std::env::var_os("PTXAS")
        .map(Into::into)
        .or_else(|| host::asm::find_tool("ptxas"))
}

/// The driver JIT-compiles this PTX when a lesson starts; ptxas is the same
/// assembler, so a PTX it rejects would fail on every GPU. Assembled for the
/// oldest target (sm_75) and Hopper (sm_90): no kernel may spill.
#[test]
fn ptx_assembles_without_spills() {
    let Some(ptxas) = ptxas() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run this test: install ptxas or set PTXAS"
        );
        eprintln!("skipped: no ptxas on PATH and PTXAS unset");
        return;
    };
    let dir = std::env::temp_dir().join(format!("lab-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("kernels.ptx");
    std::fs::write(&src, PTX).unwrap();
    for arch in ["sm_75", "sm_90"] {
        let out = std::process::Command::new(&ptxas)
            .args(["-v", &format!("-arch={arch}"), "-o"])
            .arg(dir.join(format!("{arch}.cubin")))
            .arg(&src)
            .output()
            .expect("ptxas runs");
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "ptxas rejected the PTX for {arch}:\n{log}"
        );
        let compiled = log.matches("Compiling entry function").count();
        assert_eq!(compiled, entries(PTX).len(), "{arch}: {log}");
        for line in log
            .lines()
            .filter(|l| l.contains("spill") || l.contains("stack frame"))
        {
            assert!(
                line.contains("0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"),
                "{arch}: {line}"
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Each kernel of the PTX with lines (trimmed) that `matches`, as
/// "module kernel: line / line": the offenders of a property every kernel
/// holds. Every kernel of the sm_75 module, and the kernels only the sm_80
/// and sm_90a modules hold (the tensor-core and the Hopper kernels: the
/// lessons' other kernels are built into those modules too, but run from
/// the sm_75 one).
fn kernels_with_lines(matches: impl Fn(&str) -> bool) -> Vec<String> {
    let (sm80, sm90a) = (ptx::PTX_SM80, ptx::PTX_SM90A);
    let own = |module: &'static str, before: &[&'static str]| {
        entries(module)
            .into_iter()
            .filter(|k| before.iter().all(|m| !entries(m).contains(k)))
            .map(move |k| (module, k))
            .collect::<Vec<_>>()
    };
    let kernels: Vec<(&str, &str)> = own(PTX, &[])
        .into_iter()
        .chain(own(sm80, &[PTX]))
        .chain(own(sm90a, &[PTX, sm80]))
        .collect();
    assert!(
        kernels.iter().any(|(_, k)| *k == "gemm_bf16_mma")
            && kernels.iter().any(|(_, k)| *k == "gemm_bf16_tma")
    );
    kernels
        .into_iter()
        .filter_map(|(module, k)| {
            let body = entry_body(module, k).expect("listed entries have bodies");
            let lines: Vec<&str> = body.lines().map(str::trim).filter(|l| matches(l)).collect();
            let name = if module == PTX {
                ""
            } else if module == sm80 {
                "sm_80 "
            } else {
                "sm_90a "
            };
            (!lines.is_empty()).then(|| format!("{name}{k}: {}", lines.join(" / ")))
        })
        .collect()
}

/// No kernel keeps a per-thread array in local memory: rustc's PTX has no
/// `.local` state space at all (no `__local_depot` stack array, no
/// `ld.local`/`st.local`). Such an array is what an indexed `[T; N]` becomes
/// when LLVM leaves its loop rolled, and ptxas either promotes it back with
/// extra registers and moves or spills it; the fusion lesson's wide kernels
/// at W = 8 and 16 were 7 to 15% slower than their CUDA C twins that way
/// before they used `device::unroll::unrolled`. (`ptx_assembles_without_spills` checks what
/// ptxas makes of the PTX; this checks what rustc hands it.)
#[test]
fn ptx_has_no_local_depot() {
    let offenders = kernels_with_lines(|l| l.contains(".local") || l.contains("__local_depot"));
    assert!(
        offenders.is_empty(),
        "local memory in the PTX:\n{}",
        offenders.join("\n")
    );
}

/// Every kernel reaches shared memory through 32-bit shared addresses
/// (`device::shared::SharedPtr`, from `mov.u32 %r, NAME`), never through a
/// generic address converted back (`cvta.shared` / `cvta.to.shared`): that
/// conversion costs an `S2UR SR_SWINHI` and uniform moves in every kernel's
/// SASS, which kept transpose_tiled and reduce_sequential_addressing about
/// 1% behind their CUDA C twins in the book run.
#[test]
fn ptx_has_no_generic_shared_conversion() {
    let offenders = kernels_with_lines(|l| l.starts_with("cvta") && l.contains("shared"));
    assert!(
        offenders.is_empty(),
        "generic-to-shared conversions in the PTX:\n{}",
        offenders.join("\n")
    );
}

/// The register count `asm` prints comes from ptxas's `-v` report, read for
/// the one function asked about.
#[test]
fn ptxas_registers_reads_the_named_function() {
    let report = "\
ptxas info    : Compiling entry function 'a_kernel' for 'sm_90'
ptxas info    : Function properties for a_kernel
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 47 registers, used 0 barriers, 376 bytes cmem[0]
ptxas info    : Compiling entry function 'a_kernel_2' for 'sm_90'
ptxas info    : Used 12 registers, used 1 barriers, 376 bytes cmem[0]
ptxas info    : Compiling entry function 'no_report' for 'sm_90'
";
    assert_eq!(host::asm::ptxas_registers(report, "a_kernel"), Some(47));
    assert_eq!(host::asm::ptxas_registers(report, "a_kernel_2"), Some(12));
    assert_eq!(host::asm::ptxas_registers(report, "no_report"), None);
    assert_eq!(host::asm::ptxas_registers(report, "absent"), None);
}

// ---- the PTX instruction-mix counter -----------------------------------------

#[test]
fn ptx_mix_counts_a_hand_written_kernel() {
    let body = "\
.visible .entry k(
\t.param .u64 .ptr .align 1 k_param_0
)
{
\tld.param.b64 \t%rd1, [k_param_0];
\tld.global.nc.b32 \t%r1, [%rd2];
\tld.global.nc.v4.f32 {%r2, %r3, %r4, %r5}, [%rd3];
\tld.global.b32 \t%r6, [%rd4];
\tld.shared.b32 \t%r7, [%rd5];
\tld.shared.b32 \t%r8, [%rd5+4];
\tst.shared.v2.b64 \t[%rd6], {%rd7, %rd8};
\tld.b32 \t%r9, [%rd9];
\tfma.rn.f32 \t%r10, %r1, %r6, %r7;
\tfma.rn.f32 \t%r11, %r10, %r6, %r7;
\tmul.rn.f32 \t%r12, %r11, %r11;
\t@%p1 bra \t$L__BB0_2;
\tbra.uni \t$L__BB0_1;
\tst.global.v4.b32 \t[%rd10], {%r1, %r2, %r3, %r4};
\tret;
}";
    let mix = host::ptx::PtxMix::of(body);
    let want: Vec<(&str, usize)> = vec![
        ("ld.generic 32b", 1),
        ("ld.global 32b", 1),
        ("ld.global.nc 128b", 1),
        ("ld.global.nc 32b", 1),
        ("ld.shared 32b", 2),
        ("st.global 128b", 1),
        ("st.shared 128b", 1),
    ];
    let got: Vec<(&str, usize)> = mix.accesses.iter().map(|(k, &n)| (k.as_str(), n)).collect();
    assert_eq!(got, want);
    assert_eq!(mix.fma_f32, 2);
    assert_eq!(mix.branches, 2);
    assert_eq!(
        mix.summary(),
        "ld.generic 32b x1, ld.global 32b x1, ld.global.nc 128b x1, ld.global.nc 32b x1, ld.shared 32b x2, \
         st.global 128b x1, st.shared 128b x1; fma 2; bra 2"
    );
}

// ---- the CUDA C twins ----------------------------------------------------------

/// The kernel names `__global__ void name(` declares in a CUDA C source.
fn cuda_c_kernels(source: &str) -> Vec<&str> {
    source
        .split("__global__ void ")
        .skip(1)
        .filter_map(|rest| rest.split('(').next())
        .map(str::trim)
        .collect()
}

/// The roofline's entries in the Rust PTX (the PTX also holds the other
/// lessons' kernels and the test-only ones).
fn roofline_entries(ptx: &str) -> Vec<&str> {
    let ours: Vec<&str> = Kernel::ALL.iter().map(|k| k.symbol()).collect();
    let mut e: Vec<&str> = entries(ptx)
        .into_iter()
        .filter(|s| ours.contains(s))
        .collect();
    e.sort();
    e
}

#[test]
fn every_rust_kernel_has_a_cuda_c_twin() {
    let rust = roofline_entries(PTX);
    let mut c = cuda_c_kernels(host::roofline::CUDA_C_SOURCE);
    c.sort();
    assert_eq!(
        rust, c,
        "the Rust PTX's entries and roofline.cu's kernels differ"
    );
    assert_eq!(c.len(), Kernel::ALL.len());
}

#[test]
fn cuda_c_defines_carry_the_rust_constants_exactly() {
    let defines = host::roofline::cuda_c_defines();
    let value = |name: &str| -> String {
        let line = defines
            .lines()
            .find(|l| l.starts_with(&format!("#define {name} ")))
            .unwrap_or_else(|| panic!("no #define {name}"));
        line.rsplit(' ').next().unwrap().to_string()
    };
    let float = |name: &str| value(name).trim_end_matches('f').parse::<f32>().unwrap();
    assert_eq!(float("FMA_MUL").to_bits(), FMA_MUL.to_bits());
    assert_eq!(float("POLY_SCALE"), POLY_SCALE);
    assert_eq!(float("POLY_ADD"), POLY_ADD);
    assert_eq!(float("FMA_ADD"), FMA_ADD);
    assert_eq!(float("STENCIL_COLD"), STENCIL_COLD);
    assert_eq!(value("TRANSPOSE_TILE"), TRANSPOSE_TILE.to_string());
    assert_eq!(value("FMA_UNROLL"), FMA_UNROLL.to_string());
    assert_eq!(value("POLY_DEGREE"), POLY_DEGREE.to_string());
}

/// NVRTC compiles the twins without a GPU. `cargo xtask test` provides
/// NVRTC from PyPI where the machine has none; in CI the test must run.
#[test]
fn cuda_c_twins_compile_with_nvrtc() {
    for cc in [(7, 5), (9, 0)] {
        let Some(ptx) = lab_tests::twin_ptx_on_cpu::<host::roofline::RooflineLesson>(cc) else {
            return;
        };
        let mut c = entries(&ptx);
        c.sort();
        assert_eq!(c, roofline_entries(PTX), "sm_{}{}", cc.0, cc.1);
        // nvcc's default contraction turns the multiply-adds into FMAs.
        for k in [
            Kernel::MatmulNaive,
            Kernel::MatmulTiled,
            Kernel::StencilGlobal,
            Kernel::Polynomial,
        ] {
            let body = entry_body(&ptx, k.symbol()).unwrap();
            assert!(
                body.contains("fma.rn.f32"),
                "{}: no fma in the twin",
                k.symbol()
            );
        }
        assert!(!ptx.contains(".local"), "a twin uses local memory");
    }
    // A source that does not compile is an error carrying NVRTC's log.
    let err = host::nvrtc::compile("__global__ void broken( {", "broken.cu", (7, 5)).unwrap_err();
    assert!(
        err.to_string().contains("broken.cu did not compile"),
        "{err}"
    );
}

// ---- the report, from synthetic timings ------------------------------------------

fn timing(ms: f64) -> host::timing::Timing {
    host::timing::Timing::new(vec![ms * 0.99, ms, ms * 1.01])
}

/// A report from invented times: the grid-stride dot at 4000 GB/s (the
/// bandwidth ceiling), the other stream rows at 3800, the seed's copy at
/// 4300 (over the ceiling past the noise, as a 4x-L2 copy can be), the
/// tiled transpose at 4050 (over it, within the noise), FMA at 60000 GFLOP/s
/// (ridge at 15 FLOP/byte), the naive matmul at 6000 GB/s of compulsory
/// bytes (above the roof), the polynomial at 500 (53% of the FMA ceiling),
/// every other kernel at 2000.
fn synthetic_report() -> host::roofline::report::Report {
    use host::roofline::Shape;
    let info = device(60 << 20, 132);
    let s = Sizes::for_device(&info);
    let ms_for = |k: Kernel, shape: Shape, rate_per_s: f64| {
        let c = host::roofline::model::cost_shaped(k, &s, shape);
        let count = if k == Kernel::FmaPeak {
            c.flop
        } else {
            c.bytes
        };
        count / rate_per_s * 1e3
    };
    let rate = |k: Kernel, shape: Shape| match k {
        Kernel::FmaPeak => 60_000e9,
        Kernel::StreamDot if shape == Shape::GridStride => 4000e9,
        Kernel::StreamDot | Kernel::StreamCopy | Kernel::StreamTriad => 3800e9,
        Kernel::Copy => 4300e9,
        Kernel::TransposeTiled => 4050e9,
        Kernel::MatmulNaive => 6000e9,
        Kernel::Polynomial => 500e9,
        _ => 2000e9,
    };
    let measured: Vec<host::roofline::Measured> = Kernel::ALL
        .iter()
        .flat_map(|&k| {
            let shapes = if k.is_stream() {
                Shape::ALL.to_vec()
            } else {
                vec![Shape::PerElement]
            };
            shapes.into_iter().map(move |shape| (k, shape))
        })
        .map(|(k, shape)| host::roofline::Measured {
            kernel: k,
            shape,
            timing: timing(ms_for(k, shape, rate(k, shape))),
        })
        .collect();
    let context = host::report::Context::new(
        "roofline",
        &info,
        &s,
        host::roofline::report::block_sizes_json(),
        host::timing::Plan::DEFAULT,
        "2026-11-29T00:00:00Z".into(),
    );
    let mut report = host::roofline::report::build(
        &info,
        s,
        context,
        &measured,
        timing(ms_for(Kernel::Copy, Shape::PerElement, 4000e9)),
    );
    report.ragged = synthetic_ragged(&s);
    report
}

/// The round-against-ragged pairs of [`synthetic_report`]: the vector add
/// at 2000 GB/s at both sizes (within the noise: both spreads are 2%), the
/// guarded transpose at 2000 GB/s round and 10% more time per element at
/// side - 1 (past the noise).
fn synthetic_ragged(s: &Sizes) -> Vec<host::ragged::RaggedPair> {
    use host::ragged::{Edge, RAGGED_TAIL, RaggedPair};
    let at = |bytes_per_elem: f64, elems: usize, slower: f64| {
        timing(bytes_per_elem * elems as f64 / 2000e9 * 1e3 * slower)
    };
    let n = |edge| s.ragged_launch(Kernel::VectorAdd, edge).unwrap().0;
    let t = |edge| {
        s.ragged_launch(Kernel::TransposeNaiveGuarded, edge)
            .unwrap()
            .0
    };
    assert_eq!(n(Edge::Ragged), s.n + RAGGED_TAIL);
    vec![
        RaggedPair {
            what: Kernel::VectorAdd.label().into(),
            stem: Kernel::VectorAdd.symbol().into(),
            round_elems: n(Edge::Round),
            ragged_elems: n(Edge::Ragged),
            round_shape: "2^26".into(),
            ragged_shape: "2^26 + 611".into(),
            round: at(12.0, n(Edge::Round), 1.0),
            ragged: at(12.0, n(Edge::Ragged), 1.0),
        },
        RaggedPair {
            what: Kernel::TransposeNaiveGuarded.label().into(),
            stem: Kernel::TransposeNaiveGuarded.symbol().into(),
            round_elems: t(Edge::Round),
            ragged_elems: t(Edge::Ragged),
            round_shape: format!("{}^2", s.side),
            ragged_shape: format!("{}^2", s.side - 1),
            round: at(8.0, t(Edge::Round), 1.0),
            ragged: at(8.0, t(Edge::Ragged), 1.1),
        },
    ]
}

#[test]
fn the_ragged_pairs_are_read_from_their_timings() {
    let r = synthetic_report();
    let table = r.table();
    assert!(
        table.contains("Round against ragged sizes, timed side by side"),
        "{table}"
    );
    for key in [
        "vector_add/round",
        "vector_add/ragged",
        "transpose_naive_guarded/round",
        "transpose_naive_guarded/ragged",
    ] {
        assert!(table.contains(&format!("| {key} ")), "{key}:\n{table}");
    }
    assert!(
        table.contains("vector add: 2^26 (67108864 elements) 6.000 ps/element, 2^26 + 611 (67109475 elements) 6.000 ps/element; +0.00% per element, within the noise (4.00%)"),
        "{table}"
    );
    assert!(
        table.contains("transpose, naive, edge-guarded: 8192^2 (67108864 elements)"),
        "{table}"
    );
    assert!(
        table.contains("the ragged edge costs +10.00% per element, past the noise (4.00%)"),
        "{table}"
    );
    // From the sizes: 8192^2 is 2^26, a multiple of 256, so 611 more
    // elements are 3 more blocks, the last partial; 8191 rows: every 8th
    // starts on a sector, against all of 8192's.
    assert!(
        table.contains("launches 3 more block(s) of 256 threads for its 611 more elements, the last one partial"),
        "{table}"
    );
    assert!(
        table.contains("8191, is not a multiple of the 32-wide tile")
            && table
                .contains("1024 of its rows start on a 32-byte sector boundary against 8192 of the round side's 8192"),
        "{table}"
    );
    let lines = r.json_lines();
    let keys: Vec<&str> = lines.iter().filter_map(|l| l["key"].as_str()).collect();
    assert!(
        keys.contains(&"vector_add/ragged") && keys.contains(&"transpose_naive_guarded/round"),
        "{keys:?}"
    );
    let reading = lines
        .iter()
        .find(|l| {
            l["variant"] == "round-vs-ragged" && l["round_key"] == "transpose_naive_guarded/round"
        })
        .unwrap();
    assert_eq!(reading["verdict"], "costlier");
    // Every row key is distinct, so --record and --baseline keep working.
    let runs = host::record::runs_of(&lines).unwrap();
    assert_eq!(runs.len(), 1);
}

#[test]
fn ragged_launches_cover_every_element() {
    for s in [
        lesson_sizes(60 << 20, 132),
        Sizes::quick(&device(60 << 20, 132)),
    ] {
        use host::ragged::Edge;
        assert!(
            s.lesson_len() >= s.ragged_n(),
            "the buffers hold the ragged add"
        );
        for edge in Edge::ALL {
            let (n, c) = s.ragged_launch(Kernel::VectorAdd, edge).unwrap();
            assert!(c.grid_dim.0 as usize * c.block_dim.0 as usize >= n);
            let (len, c) = s
                .ragged_launch(Kernel::TransposeNaiveGuarded, edge)
                .unwrap();
            let side = s.ragged_side(edge);
            assert_eq!(len, side * side);
            assert_eq!(
                (c.block_dim.0, c.block_dim.1),
                (TRANSPOSE_TILE, TRANSPOSE_TILE)
            );
            assert!(c.grid_dim.0 as usize * TRANSPOSE_TILE as usize >= side);
            assert_eq!(c.grid_dim.0, c.grid_dim.1);
        }
        assert_eq!(s.ragged_side(Edge::Ragged), s.side - 1);
        assert_ne!(
            (s.side - 1) % TRANSPOSE_TILE as usize,
            0,
            "the ragged side runs the guard"
        );
        assert!(
            s.ragged_launch(Kernel::TransposeTiled, Edge::Round)
                .is_none()
        );
    }
    assert_eq!(host::roofline::report::sector_aligned_rows(8192), 8192);
    assert_eq!(host::roofline::report::sector_aligned_rows(8191), 1024);
}

#[test]
fn the_guarded_transpose_checks_both_bounds() {
    let b = entry_body(PTX, Kernel::TransposeNaiveGuarded.symbol()).unwrap();
    // Both bounds before the one load and one store: two comparisons with
    // the side, or (as LLVM writes it) one of max(row, col) with it.
    let setp = b.matches("setp.").count();
    assert!(setp >= 2 || (setp == 1 && b.contains("max.u64")), "{b}");
    assert_eq!(b.matches("ld.global.nc").count(), 1, "{b}");
    assert_eq!(b.matches("st.global").count(), 1, "{b}");
    // The unguarded one has no comparison at all.
    let naive = entry_body(PTX, Kernel::TransposeNaive.symbol()).unwrap();
    assert_eq!(naive.matches("setp.").count(), 0, "{naive}");
    assert!(!Kernel::placed().any(|k| k == Kernel::TransposeNaiveGuarded));
    assert_eq!(Kernel::placed().count(), 10);
}

#[test]
fn ncu_counters_merge_into_the_report() {
    let mut r = synthetic_report();
    // A saved ncu CSV (the shape `ncu --csv --print-units base` writes) for
    // two kernels: the naive matmul moved 3.2 MB through DRAM for its
    // 1074.8 compulsory MB.
    let header = "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"";
    let csv = format!(
        "{header}\n\"5\",\"matmul_naive\",\"dram__bytes.sum\",\"byte\",\"3,200,000\"\n\
         \"5\",\"matmul_naive\",\"sm__maximum_warps_per_active_cycle_pct\",\"%\",\"100\"\n\
         \"1\",\"vector_add\",\"dram__bytes.sum\",\"Mbyte\",\"805.5\"\n"
    );
    r.merge_counters(host::ncu::parse_csv(&csv).unwrap());
    let table = r.table();
    assert!(table.contains("Measured bytes (Nsight Compute"), "{table}");
    let matmul = table
        .lines()
        .find(|l| l.starts_with("| matmul, naive") && l.contains("3.2"))
        .expect("a measured matmul row");
    assert!(matmul.contains("1074.8"), "{matmul}");
    let lines = r.json_lines();
    let row = lines
        .iter()
        .find(|l| l["symbol"] == "matmul_naive")
        .unwrap();
    assert_eq!(row["measured"]["dram_bytes"], 3_200_000.0);
    let flop = row["flop"].as_f64().unwrap();
    assert_eq!(
        row["measured"]["dram_intensity"].as_f64().unwrap(),
        flop / 3_200_000.0
    );
    assert_eq!(
        lines
            .iter()
            .find(|l| l["symbol"] == "transpose_naive")
            .unwrap()["measured"],
        serde_json::Value::Null
    );
}

#[test]
fn the_chart_draws_both_ceilings_and_labels_every_kernel() {
    let r = synthetic_report();
    let path = std::env::temp_dir().join(format!("lab-roofline-{}.svg", std::process::id()));
    host::plot::roofline_svg(&r.chart(), &path).unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    // LAB_CHART_OUT=file.svg keeps the chart, to look at it as a reader would.
    if let Some(keep) = std::env::var_os("LAB_CHART_OUT") {
        std::fs::copy(&path, keep).unwrap();
    }
    std::fs::remove_file(&path).ok();
    assert!(svg.starts_with("<svg"), "not an SVG");
    assert!(
        svg.contains("measured ceilings: memory 4000 GB/s, FMA 60000 GFLOP/s"),
        "no ceilings in the legend"
    );
    assert!(svg.contains("ridge point, 15.00 FLOP/byte"));
    for k in Kernel::placed() {
        assert!(svg.contains(k.label()), "{} is not labelled", k.label());
    }
    assert!(svg.contains("0 FLOP, so not on a log-log chart: transpose, naive; transpose, tiled"));
}

#[test]
fn the_chart_with_the_recorded_counters_and_a_zero_byte_kernel() {
    let mut r = synthetic_report();
    let csv = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/results/ncu-h200-2026-11-29.csv"
    ))
    .unwrap();
    let mut counters = host::ncu::parse_csv(&csv).unwrap();
    assert!(
        counters["matmul_naive"].dram_bytes.unwrap() < 3e6,
        "the recorded naive matmul moved ~2.1 MB"
    );
    // A placed kernel with 0 DRAM bytes has an infinite measured intensity:
    // it must be left off the chart, not hang the plotter.
    counters.get_mut("vector_add").unwrap().dram_bytes = Some(0.0);
    r.merge_counters(counters);
    let path = std::env::temp_dir().join(format!("lab-roofline-ncu-{}.svg", std::process::id()));
    host::plot::roofline_svg(&r.chart(), &path).unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    if let Some(keep) = std::env::var_os("LAB_CHART_OUT") {
        std::fs::copy(&path, keep).unwrap();
    }
    std::fs::remove_file(&path).ok();
    assert!(svg.contains("Rust, DRAM bytes measured by ncu"));
    let row = r
        .table()
        .lines()
        .find(|l| l.starts_with("| vector add ") && l.contains(" - |"))
        .map(str::to_string);
    assert!(
        row.is_some(),
        "a 0-byte kernel shows '-' for its DRAM intensity"
    );
}

#[test]
fn report_binds_each_kernel_to_the_right_ceiling() {
    let r = synthetic_report();
    assert!((r.ceilings.bandwidth_gb_per_s - 4000.0).abs() < 1e-6);
    assert_eq!(
        (r.best().kernel, r.best().shape),
        (Kernel::StreamDot, host::roofline::Shape::GridStride)
    );
    assert!((r.ceilings.ridge() - 15.0).abs() < 1e-9);
    for row in &r.rows {
        let left = row.cost.intensity() < 15.0;
        assert_eq!(row.memory_bound, left, "{:?}", row.kernel);
        assert_eq!(
            row.above_roof(),
            row.kernel == Kernel::MatmulNaive,
            "{:?}",
            row.kernel
        );
        assert_eq!(
            row.at_roof(),
            row.kernel == Kernel::TransposeTiled,
            "{:?}",
            row.kernel
        );
        if row.kernel == Kernel::MatmulNaive {
            assert!((row.percent_of_ceiling - 150.0).abs() < 1e-6);
            assert!((row.noise_pct - 4.0).abs() < 1e-9, "{}", row.noise_pct);
        } else if row.kernel == Kernel::TransposeTiled {
            assert!((row.percent_of_ceiling - 101.25).abs() < 1e-6);
        } else if left {
            assert!(
                (row.percent_of_ceiling - 50.0).abs() < 1e-6,
                "{:?}",
                row.kernel
            );
        }
    }
    // The polynomial (64 FLOP/byte) is the one right of the ridge: its share
    // is its GFLOP/s over the FMA ceiling.
    let poly = r
        .rows
        .iter()
        .find(|x| x.kernel == Kernel::Polynomial)
        .unwrap();
    assert!(!poly.memory_bound);
    assert!((poly.percent_of_ceiling - 100.0 * poly.gflop_per_s / 60_000.0).abs() < 1e-9);

    let table = r.table();
    for &k in Kernel::ALL {
        assert!(table.contains(k.label()), "table lacks {}", k.label());
    }
    // The ceiling names the stream that set it; the seed's copy, faster at
    // its 4x-L2 size, is said to beat it; the naive matmul is above the
    // roof, not at 150% of a ceiling.
    assert!(
        table.contains("stream: dot (2 reads), grid-stride <- the ceiling"),
        "{table}"
    );
    assert!(
        table.contains("here stream: dot (2 reads) grid-stride, 4000.0 GB/s"),
        "{table}"
    );
    assert!(
        table.contains(
            "The seed's copy (256 MiB buffers) beat it (4300.0 GB/s, past the 4.0% of their spreads)"
        ),
        "{table}"
    );
    assert!(!table.contains("The driver's copy beat it"), "{table}");
    let matmul = table
        .lines()
        .find(|l| l.starts_with("| matmul, naive"))
        .unwrap();
    assert!(matmul.contains("above the roof, 1.50x"), "{matmul}");
    assert!(!matmul.contains("150.0"), "{matmul}");
    assert!(
        table.contains(
            "Above the roof at their compulsory intensity, past the noise: matmul, naive."
        ),
        "{table}"
    );
    let transpose = table
        .lines()
        .find(|l| l.starts_with("| transpose, tiled"))
        .unwrap();
    assert!(
        transpose.contains("at the roof (within the noise)"),
        "{transpose}"
    );
    assert!(!table.contains("Faster than the FMA ceiling"), "{table}");
    assert!(table.contains("ridge point: 15.00 FLOP/byte"), "{table}");
    assert!(
        table.contains("9 of the 10 sit left of the ridge point"),
        "{table}"
    );

    let lines = r.json_lines();
    assert_eq!(
        lines.len(),
        1 + 6 + 1 + 1 + 1 + 1 + 1 + 10 + 2 * 3,
        "the bandwidth ceiling, 6 stream rows, the seed's copy, the FMA ceiling, the driver copy, the ridge, the \
         tensor ceiling (none measured), 10 kernels, and per ragged pair its two sizes and its reading"
    );
    for line in &lines {
        assert_eq!(line["context"]["gpu"], "synthetic");
        assert_eq!(line["context"]["date"], "2026-11-29T00:00:00Z");
    }
    assert_eq!(lines[0]["variant"], "ceiling-bandwidth");
    assert_eq!(lines[0]["set_by"], "stream_dot");
    assert_eq!(lines[0]["shape"], "grid-stride");
    assert!((lines[0]["value"].as_f64().unwrap() - 4000.0).abs() < 1e-6);
    for line in &lines[..10] {
        assert!(line["share_of_derived"].is_number(), "{line}");
    }
    assert_eq!(lines[7]["variant"], "seed-copy");
    assert_eq!(lines[8]["variant"], "ceiling-fma");
    assert_eq!(lines[10]["variant"], "ridge-point");
    assert_eq!(lines[11]["variant"], "ceiling-tensor");
    assert_eq!(lines[11]["value"], serde_json::Value::Null);
    assert_eq!(lines[11]["tensor_ceiling"], serde_json::Value::Null);
    assert!(
        lines[11]["why_none"]
            .as_str()
            .unwrap()
            .starts_with("No tensor-core ceiling"),
        "{}",
        lines[11]
    );
    assert_eq!(lines[12]["symbol"], "vector_add");
    let matmul = lines
        .iter()
        .find(|l| l["symbol"] == "matmul_naive")
        .unwrap();
    assert_eq!(matmul["above_roof"], true);
    // A baseline reads the rows as one run, each stream shape under its own
    // key.
    let runs = host::record::runs_of(&lines).unwrap();
    assert_eq!(runs.len(), 1);
    assert!(runs[0].samples.contains_key("stream_dot/grid-stride"));
    assert!(runs[0].samples.contains_key("stream_dot/per-element"));
    assert!(runs[0].samples.contains_key("vector_add"));
}

// ---- the BF16 tensor-core ceiling in the report ------------------------------------

/// [`synthetic_report`] with a tensor-core ceiling: `mma_peak` at 640
/// TFLOP/s, cuBLAS at 755 (4096^3) and 708 (8192^3) TFLOP/s, on the
/// synthetic H200's sizes.
fn synthetic_report_with_tensor(
    mma_tflop: f64,
    cublas: Vec<(usize, f64)>,
) -> host::roofline::report::Report {
    synthetic_report_with_chains(
        mma_tflop,
        Err("no wgmma chains: not in this test".into()),
        cublas,
    )
}

/// [`synthetic_report_with_tensor`] with `wgmma_peak` at its rate, TFLOP/s
/// (or missing, with its reason).
fn synthetic_report_with_chains(
    mma_tflop: f64,
    wgmma: Result<f64, String>,
    cublas: Vec<(usize, f64)>,
) -> host::roofline::report::Report {
    use host::roofline::tensor::{TensorCeiling, TensorTimings, cublas_flop};
    let mut r = synthetic_report();
    let sizes = r
        .sizes
        .tensor
        .expect("the synthetic H200 has a tensor ceiling");
    let ms = |flop: f64, tflop: f64| flop / (tflop * 1e12) * 1e3;
    let timings = TensorTimings {
        mma: timing(ms(sizes.mma_flop(), mma_tflop)),
        wgmma: wgmma.map(|tflop| timing(ms(sizes.wgmma_flop(), tflop))),
        cublas: Ok(cublas
            .into_iter()
            .map(|(side, tflop)| (side, timing(ms(cublas_flop(side), tflop))))
            .collect()),
    };
    r.tensor = Ok(TensorCeiling::new(&r.info, sizes, timings));
    r
}

#[test]
fn the_report_draws_the_tensor_ceiling_cublas_sets() {
    let r = synthetic_report_with_tensor(640.0, vec![(4096, 755.0), (8192, 708.0)]);
    let table = r.table();
    for want in [
        "Tensor-core ceiling (BF16): mma_peak 4224 blocks x 256 threads x 2048 steps x 8 chains (sm_80 module); wgmma_peak \
         528 blocks x 256 threads x 2048 steps x 4 wgmma m64n256k16 a warpgroup (sm_90a module); cuBLAS BF16 GemmEx \
         (FP32 sums) at 4096^3 and 8192^3",
        "mma_peak matches its CPU reference exactly in every element; cuBLAS's BF16 GEMM at 4096^3 matches the f64 \
         reference at 512 sampled elements",
        "BF16 tensor cores: cuBLAS GemmEx, 4096^3 <- the tensor ceiling",
        "The BF16 tensor-core ceiling is cuBLAS's GemmEx at 4096^3, 755.0 TFLOP/s: 18.0% above the 8 mma.sync chains a \
         warp at 640.0 TFLOP/s",
        // 755,000 GFLOP/s over the 4000 GB/s bandwidth ceiling.
        "tensor ridge point: 188.75 FLOP/byte",
        "BF16 tensor cores = 132 SMs x 4096 dense BF16 FLOP a clock an SM",
    ] {
        assert!(table.contains(want), "{want}:\n{table}");
    }
    let row = |label: &str| {
        table
            .lines()
            .find(|l| l.contains(label))
            .unwrap_or_else(|| panic!("{label}:\n{table}"))
    };
    // The measured rates in TFLOP/s, against 132 x 4096 x 1980 MHz =
    // 1070.5 TFLOP/s derived.
    let mma = row("BF16 tensor cores: mma_peak, 8 mma.sync chains");
    assert!(
        mma.contains("640.0 TFLOP/s") && mma.contains("1070.5 TFLOP/s"),
        "{mma}"
    );
    assert!(!mma.contains("<- the tensor ceiling"), "{mma}");
    assert!(row("cuBLAS GemmEx, 8192^3").contains("708.0 TFLOP/s"));
    assert!(!row("cuBLAS GemmEx, 8192^3").contains("<-"));

    let lines = r.json_lines();
    let find = |variant: &str| {
        lines
            .iter()
            .find(|l| l["variant"] == variant)
            .unwrap_or_else(|| panic!("{variant}"))
    };
    let ceiling = find("ceiling-tensor");
    assert_eq!(ceiling["set_by"], "cuBLAS");
    assert!((ceiling["value"].as_f64().unwrap() - 755_000.0).abs() < 1e-6);
    let facts = &ceiling["tensor_ceiling"];
    assert_eq!(facts["source"], "cuBLAS");
    assert!((facts["gflop_per_s"].as_f64().unwrap() - 755_000.0).abs() < 1e-6);
    assert!((facts["mma_sync_gflop_per_s"].as_f64().unwrap() - 640_000.0).abs() < 1e-6);
    assert!((facts["cublas_best_gflop_per_s"].as_f64().unwrap() - 755_000.0).abs() < 1e-6);
    assert!(facts["derived_limit_gflop_per_s"].is_number());
    assert_eq!(ceiling["why_none"], serde_json::Value::Null);
    assert!((find("ridge-point-tensor")["value"].as_f64().unwrap() - 188.75).abs() < 1e-9);
    assert_eq!(find("ceiling-tensor-mma")["symbol"], "mma_peak");
    assert_eq!(find("cublas-bf16-8192")["key"], "cublasGemmEx_bf16/8192");
    // Every timed row keeps a distinct key, so --record and --baseline work.
    let runs = host::record::runs_of(&lines).unwrap();
    assert_eq!(runs.len(), 1);
    for key in [
        "mma_peak",
        "cublasGemmEx_bf16/4096",
        "cublasGemmEx_bf16/8192",
    ] {
        assert!(runs[0].samples.contains_key(key), "{key}");
    }

    // The chart draws it as a second roof.
    let chart = r.chart();
    let roof = chart.tensor.as_ref().expect("a tensor roof");
    assert_eq!(roof.set_by, "cuBLAS");
    let svg = host::plot::roofline_svg_text(&chart).unwrap();
    if let Some(keep) = std::env::var_os("LAB_CHART_OUT") {
        std::fs::write(keep, &svg).unwrap();
    }
    assert!(
        svg.contains("BF16 tensor-core ceiling (cuBLAS): 755000 GFLOP/s, ridge 188.8 FLOP/byte"),
        "no tensor roof in the legend"
    );
    assert!(svg.contains("measured ceilings: memory 4000 GB/s, FMA 60000 GFLOP/s"));
}

#[test]
fn the_report_draws_the_tensor_ceiling_the_wgmma_chains_set() {
    let r = synthetic_report_with_chains(640.0, Ok(820.0), vec![(4096, 755.0), (8192, 708.0)]);
    let table = r.table();
    for want in [
        "mma_peak and wgmma_peak match their CPU references exactly in every element; cuBLAS's BF16 GEMM",
        "BF16 tensor cores: wgmma_peak, wgmma m64n256k16 chains, 2 warpgroups a block <- the tensor ceiling",
        "The BF16 tensor-core ceiling is the wgmma chains (2 warpgroups a block, m64n256k16), 820.0 TFLOP/s; \
         cuBLAS's best, 755.0 TFLOP/s at 4096^3, is 7.9% below it. The 8 mma.sync chains a warp reach 640.0 \
         TFLOP/s, 78.0% of the wgmma chains.",
        // 820,000 GFLOP/s over the 4000 GB/s bandwidth ceiling.
        "tensor ridge point: 205.00 FLOP/byte",
    ] {
        assert!(table.contains(want), "{want}:\n{table}");
    }
    let wgmma = table
        .lines()
        .find(|l| l.contains("BF16 tensor cores: wgmma_peak"))
        .unwrap();
    assert!(
        wgmma.contains("820.0 TFLOP/s") && wgmma.contains("1070.5 TFLOP/s"),
        "{wgmma}"
    );
    let lines = r.json_lines();
    let find = |variant: &str| {
        lines
            .iter()
            .find(|l| l["variant"] == variant)
            .unwrap_or_else(|| panic!("{variant}"))
    };
    assert_eq!(find("ceiling-tensor")["set_by"], "wgmma");
    let row = find("ceiling-tensor-wgmma");
    assert_eq!(row["symbol"], "wgmma_peak");
    assert!((row["value"].as_f64().unwrap() - 820_000.0).abs() < 1e-6);
    let runs = host::record::runs_of(&lines).unwrap();
    assert!(runs[0].samples.contains_key("wgmma_peak"));
    assert_eq!(
        r.chart().tensor.as_ref().expect("a tensor roof").set_by,
        "wgmma"
    );
}

#[test]
fn the_report_says_when_the_chains_set_the_tensor_ceiling() {
    let r = synthetic_report_with_tensor(300.0, vec![(4096, 280.0)]);
    let table = r.table();
    assert!(
        table.contains("BF16 tensor cores: mma_peak, 8 mma.sync chains <- the tensor ceiling"),
        "{table}"
    );
    assert!(
        table.contains("cuBLAS's best, 280.0 TFLOP/s at 4096^3, is 6.7% below it"),
        "{table}"
    );
    assert!(
        table.contains("tensor ridge point: 75.00 FLOP/byte"),
        "{table}"
    );
    let lines = r.json_lines();
    let ceiling = lines
        .iter()
        .find(|l| l["variant"] == "ceiling-tensor")
        .unwrap();
    assert_eq!(ceiling["set_by"], "mma.sync");
}

#[test]
fn a_gpu_below_7_5_has_one_line_and_no_tensor_ceiling() {
    let info = host::gpu::DeviceInfo {
        name: "Tesla V100".into(),
        compute_capability: (7, 0),
        ..lab_tests::profile("T4").info()
    };
    let why = host::roofline::tensor::unavailable(&info).unwrap();
    let mut r = synthetic_report();
    r.sizes.tensor = None;
    r.tensor = Err(why);
    let table = r.table();
    let lines: Vec<&str> = table.lines().filter(|l| l.contains("tensor")).collect();
    assert_eq!(
        lines,
        [
            "No tensor-core ceiling: Tesla V100 has compute capability 7.0; f16 mma.sync m16n8k8 needs 7.5 or more, bf16 \
          mma.sync 8.0."
        ],
        "{table}"
    );
    assert!(r.chart().tensor.is_none());
    let json = r.json_lines();
    let ceiling = json
        .iter()
        .find(|l| l["variant"] == "ceiling-tensor")
        .unwrap();
    assert!(
        ceiling["why_none"]
            .as_str()
            .unwrap()
            .contains("compute capability 7.0")
    );
    assert!(json.iter().all(|l| l["variant"] != "ridge-point-tensor"));
}

/// A T4's roofline (compute capability 7.5): an FP16 ceiling from
/// `mma_peak_f16` (the sm_75 module) and cuBLAS's FP16 GEMM, no derived
/// limit, and the GEMM lesson's FP16 kernel placed under it; a BF16 point
/// would have no roof there.
#[test]
fn a_t4s_roofline_has_an_fp16_tensor_ceiling_and_its_gemm_point() {
    use host::cublas::Half;
    use host::roofline::gemm_points::{GemmPoint, Measured, Precision};
    use host::roofline::tensor::{
        TensorCeiling, TensorSizes, TensorTimings, cublas_flop, no_wgmma,
    };
    let mut r = synthetic_report();
    r.info.name = "Tesla T4".into();
    r.info.compute_capability = (7, 5);
    let sizes = TensorSizes::for_device(&r.info).expect("7.5 has an FP16 ceiling");
    assert_eq!((sizes.half, sizes.wgmma_blocks), (Half::F16, None));
    r.sizes.tensor = Some(sizes);
    let ms = |flop: f64, tflop: f64| flop / (tflop * 1e12) * 1e3;
    let timings = TensorTimings {
        mma: timing(ms(sizes.mma_flop(), 50.0)),
        wgmma: Err(no_wgmma(&r.info).unwrap()),
        cublas: Ok(vec![(4096, timing(ms(cublas_flop(4096), 45.0)))]),
    };
    r.tensor = Ok(TensorCeiling::new(&r.info, sizes, timings));
    let side = 4096;
    let flop = host::gemm::flop(side, side, side);
    let point = |precision| GemmPoint {
        symbol: "gemm_f16_mma",
        label: "FP16 in, FP32 sums",
        precision,
        side,
        flop,
        bytes: host::gemm::bytes_bf16(side, side, side),
        timing: timing(flop / 20e12 * 1e3),
    };
    r.gemm = Ok(Measured {
        points: vec![point(Precision::Fp16)],
        ..Measured::default()
    });
    let table = r.table();
    for want in [
        "Tensor-core ceiling (FP16): mma_peak_f16 4224 blocks x 256 threads x 2048 steps x 8 chains (sm_75 module); \
         cuBLAS FP16 GemmEx (FP32 sums) at 4096^3",
        "FP16 tensor cores: mma_peak_f16, 8 mma.sync chains <- the tensor ceiling",
        "FP16 tensor cores: cuBLAS GemmEx, 4096^3",
        "The FP16 tensor-core ceiling is the 8 mma.sync chains a warp (each step two f16 m16n8k8), 50.0 TFLOP/s",
        "No wgmma chains: Tesla T4 has compute capability 7.5",
        "FP16 tensor cores: no per-SM rate is written down here for compute capability 7.5",
        "(the FP16 tensor-core ceiling over the bandwidth ceiling)",
        "mma_peak_f16 matches its CPU reference exactly in every element; cuBLAS's FP16 GEMM at 4096^3",
        "20000.0 GFLOP/s at 682.7 FLOP/byte, 40.0% of the tensor-core ceiling above it.",
    ] {
        assert!(table.contains(want), "{want}:\n{table}");
    }
    assert!(!table.contains("BF16"), "{table}");
    let lines = r.json_lines();
    let find = |v: &str| {
        lines
            .iter()
            .find(|l| l["variant"] == v)
            .unwrap_or_else(|| panic!("no {v}"))
    };
    assert_eq!(find("ceiling-tensor-mma")["symbol"], "mma_peak_f16");
    assert_eq!(find("cublas-fp16-4096")["key"], "cublasGemmEx_fp16/4096");
    assert_eq!(
        find("ceiling-tensor")["tensor_ceiling"]["precision"],
        "fp16"
    );
    assert_eq!(find("gemm-fp16")["roof"], "the tensor-core ceiling");
    // A BF16 point has no FP16 roof.
    r.gemm = Ok(Measured {
        points: vec![point(Precision::Bf16)],
        ..Measured::default()
    });
    assert!(r.table().contains("at 682.7 FLOP/byte."), "{}", r.table());
}

// ---- the GEMM lesson's kernels on the roofline -----------------------------------

/// The synthetic report with the tensor ceiling cuBLAS sets (755 TFLOP/s)
/// and two placed GEMMs at 4096^3: FP32 at 45 TFLOP/s, BF16 at 580.
fn synthetic_report_with_gemm() -> host::roofline::report::Report {
    use host::roofline::gemm_points::{GemmPoint, Measured, Precision};
    let mut r = synthetic_report_with_tensor(640.0, vec![(4096, 755.0)]);
    let side = 4096;
    let flop = host::gemm::flop(side, side, side);
    let ms = |tflop: f64| flop / (tflop * 1e12) * 1e3;
    r.gemm = Ok(Measured {
        points: vec![
            GemmPoint {
                symbol: "gemm_warptiled",
                label: "FP32, float4 tiles by warp, loads a step ahead",
                precision: Precision::Fp32,
                side,
                flop,
                bytes: host::gemm::bytes(side, side, side),
                timing: timing(ms(45.0)),
            },
            GemmPoint {
                symbol: "gemm_bf16_tma",
                label: "BF16 in, FP32 sums: the same wgmma tiles, copied by TMA onto mbarriers",
                precision: Precision::Bf16,
                side,
                flop,
                bytes: host::gemm::bytes_bf16(side, side, side),
                timing: timing(ms(580.0)),
            },
        ],
        ..Measured::default()
    });
    r
}

#[test]
fn the_gemm_kernels_sit_under_the_roof_of_their_precision() {
    let r = synthetic_report_with_gemm();
    let table = r.table();
    // FP32: 2 x 4096^3 over 4 matrices of 64 MiB, 512 FLOP/byte; 45000 of
    // the FMA ceiling's 60000 GFLOP/s. BF16: A and B in bf16, 682.7
    // FLOP/byte; 580000 of the tensor ceiling's 755000.
    for want in [
        "The GEMM lesson's last steps on this roofline, checked and timed at 4096^3",
        "- gemm_warptiled (FP32, float4 tiles by warp, loads a step ahead): 3.0542 ms, 45000.0 GFLOP/s at 512.0 \
         FLOP/byte, 75.0% of the FMA ceiling above it.",
        "- gemm_bf16_tma (BF16 in, FP32 sums: the same wgmma tiles, copied by TMA onto mbarriers): 0.2370 ms, \
         580000.0 GFLOP/s at 682.7 FLOP/byte, 76.8% of the tensor-core ceiling above it.",
    ] {
        assert!(table.contains(want), "{want}:\n{table}");
    }
    let lines = r.json_lines();
    let gemm: Vec<_> = lines
        .iter()
        .filter(|l| {
            l["variant"]
                .as_str()
                .is_some_and(|v| v.starts_with("gemm-"))
        })
        .collect();
    assert_eq!(gemm.len(), 2);
    assert_eq!(
        (gemm[0]["variant"].as_str(), gemm[1]["variant"].as_str()),
        (Some("gemm-fp32"), Some("gemm-bf16"))
    );
    assert_eq!(gemm[1]["precision"], "bf16");
    assert_eq!(gemm[1]["roof"], "the tensor-core ceiling");
    assert!((gemm[1]["share_of_roof"].as_f64().unwrap() - 580.0 / 755.0).abs() < 1e-9);
    let runs = host::record::runs_of(&lines).unwrap();
    assert!(
        runs[0].samples.contains_key("gemm_bf16_tma/4096"),
        "a distinct record key"
    );
    let chart = r.chart();
    let placed: Vec<_> = chart
        .points
        .iter()
        .filter(|p| p.series == host::plot::Series::Gemm)
        .map(|p| p.label.as_str())
        .collect();
    assert_eq!(placed, ["gemm_warptiled", "gemm_bf16_tma"]);
    let svg = host::plot::roofline_svg_text(&chart).unwrap();
    assert!(
        svg.contains("GEMM lesson (Rust), compulsory bytes"),
        "the series in the legend"
    );
    // Without a tensor ceiling the BF16 point has no roof to be read against.
    let mut r = synthetic_report_with_gemm();
    r.tensor = Err("none".into());
    assert!(r.table().contains("at 682.7 FLOP/byte."), "{}", r.table());
    // A GPU without a tensor-core step says why under the FP32 point.
    let mut r = synthetic_report_with_gemm();
    if let Ok(m) = &mut r.gemm {
        m.points.truncate(1);
        m.no_tensor_point = Some("no sm_80 module".into());
    }
    assert!(
        r.table()
            .contains("No tensor-core GEMM on it: no sm_80 module."),
        "{}",
        r.table()
    );
    // A run without them says why in one line.
    let mut r = synthetic_report_with_gemm();
    r.gemm = Err("not measured in this run".into());
    assert!(
        r.table()
            .contains("No GEMM kernels on this roofline: not measured in this run.")
    );
}

#[test]
fn matmul_naive_has_one_loop_walking_one_stride() {
    // assume_whole_tiles: with d a multiple of MAT_TILE there is no
    // remainder loop (LLVM's is rolled, `.pragma "nounroll"`), and so no
    // copy of the B pointer kept for it; dot_strided: the B addresses one
    // add of the same stride apart.
    let body = entry_body(PTX, Kernel::MatmulNaive.symbol()).unwrap();
    let loops = lab_tests::loops(body);
    assert_eq!(loops.len(), 1, "one k loop, no remainder:\n{body}");
    assert!(
        !body.contains("nounroll"),
        "no rolled remainder loop:\n{body}"
    );
    assert_eq!(
        lab_tests::add_strides(loops[0]).len(),
        1,
        "the pointers advance by one stride:\n{}",
        loops[0]
    );
    assert!(
        loops[0].matches("ld.global.nc").count() >= 8,
        "the loop unrolled:\n{}",
        loops[0]
    );
}

#[test]
fn heat_step_global_reads_ntid_first_and_multiplies_wide() {
    // global_index_x_u32's order (ptxas then gives the twin's prologue) and
    // mul_wide_i32's signed wide multiply: the two idioms of the "Fast Rust
    // kernels" chapter that this kernel's parity rests on.
    let body = entry_body(PTX, Kernel::StencilGlobal.symbol()).unwrap();
    if let Err(e) = lab_tests::reads_block_dim_first(body) {
        panic!("{e}:\n{body}");
    }
    // The row's offset as one mul.wide.s32 (the kernel has another, for
    // `c + stride`), not a 64-bit multiply of a zero-extended row.
    assert!(
        !body.contains("mad.lo.s64"),
        "the row's offset as one mul.wide.s32:\n{body}"
    );
    assert!(
        body.matches("mul.wide.s32").count() >= 2,
        "the row's offset as one mul.wide.s32:\n{body}"
    );
    assert!(
        !body.contains("max.s32"),
        "the guard as two compares, not one of a max:\n{body}"
    );
}

/// `transpose_tiled` forms each shared address as nvcc does, the tile's
/// symbol plus the row's bytes, then the column's (`SharedPtr::row`): two
/// row pointers in the PTX, and in the SASS the shared window's base read
/// into an ordinary register (`S2R SR_CgaCtaId`), not a uniform one
/// (`S2UR`, where LLVM had folded the row and column into one index), as
/// ptxas 12.9 (PyPI's, which `cargo xtask test` provides) assembles it for
/// sm_90. The SASS half is skipped, saying so, where ptxas or cuobjdump is
/// not found outside CI.
#[test]
fn transpose_tiled_forms_its_shared_addresses_as_nvcc_does() {
    let body = entry_body(PTX, "transpose_tiled").expect("an entry has a body");
    assert_eq!(body.matches("// shared row:").count(), 2, "{body}");
    let Some(sass) = lab_tests::sass_on_cpu(PTX, "sm_90", "transpose_tiled") else {
        return;
    };
    let base: Vec<&str> = sass.lines().filter(|l| l.contains("SR_CgaCtaId")).collect();
    assert_eq!(base.len(), 1, "{sass}");
    assert!(
        base[0].contains("S2R ") && !base[0].contains("S2UR"),
        "{}",
        base[0]
    );
}
