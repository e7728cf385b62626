//! CPU-only tests of the roofline's BF16 tensor-core ceiling (they run in
//! CI): `mma_peak`'s exact reference against the PTX ISA's fragment layout
//! read the other way round, and the check failing a misread layout, a
//! skipped step, a warp's output in another's place and an unwritten
//! element; the FLOP count and the sizes on every GPU profile; the
//! clock-derived limit per compute capability; which of `mma.sync` and
//! cuBLAS sets the ceiling and the sentence that says so; and `mma_peak` in
//! the sm_80 PTX and through ptxas. The same for the `wgmma` chains of
//! compute capability 9.0: `wgmma_peak`'s reference and check, its sizes,
//! which of the three sets the ceiling, and `wgmma_peak` in the sm_90a PTX
//! and through ptxas. The report's table, JSON and chart with
//! a tensor ceiling are in `cpu_roofline.rs`, beside its synthetic report.

use host::cublas::Half;
use host::gpu::{DeviceInfo, tensor_flop_per_clock_per_sm};
use host::kernels::KernelId;
use host::ptx::{PTX, PTX_SM80, PTX_SM90A, entries, entry_body};
use host::roofline::reference::{FragmentLayout, MmaPeak, PTX_ISA_LAYOUT, WgmmaPeak};
use host::roofline::tensor::{
    CUBLAS_QUICK_SIDE, CUBLAS_SIDES, HopperKernel, Source, TensorCeiling, TensorKernel,
    TensorSizes, TensorTimings, TuringTensorKernel, WGMMA_THREADS, ceiling_half, cublas_bytes,
    cublas_flop, large_side_skipped, mma_peak_mismatch, no_wgmma, unavailable,
};
use host::timing::Timing;
use kernels_gpu::roofline::*;

// ---- the reference and the check ------------------------------------------------

/// A's element (row, col), found the other way round from
/// `PTX_ISA_LAYOUT`: which lane and which of its eight elements holds it,
/// read off the PTX ISA's figure for the m16n8k16 A fragment (rows `group`
/// and `group + 8`, columns `2 pair`, `2 pair + 1`, then 8 more; registers
/// in the order a0a1, a2a3, a4a5, a6a7).
fn a_by_hand(row: usize, col: usize) -> f64 {
    let lane = 4 * (row % 8) + (col % 8) / 2;
    let j = 2 * (row / 8 + 2 * (col / 8)) + col % 2;
    f64::from(mma_a_value(lane as u32, j as u32))
}

/// B's element (k, n), the same way: column `group`, rows `2 pair`, `2
/// pair + 1` (b0b1), then 8 more (b2b3).
fn b_by_hand(k: usize, n: usize) -> f64 {
    let lane = 4 * n + (k % 8) / 2;
    let j = 2 * (k / 8) + k % 2;
    f64::from(mma_b_value(lane as u32, j as u32))
}

#[test]
fn the_reference_product_is_the_ptx_isa_layout_read_backwards() {
    let r = MmaPeak::new(PTX_ISA_LAYOUT, 1);
    for row in 0..16 {
        for col in 0..8 {
            let want: f64 = (0..16).map(|k| a_by_hand(row, k) * b_by_hand(k, col)).sum();
            assert_eq!(r.product()[row][col], want, "(A B)[{row}][{col}]");
        }
    }
    // Known answers (computed once by hand from the value functions): the
    // first and last elements of A B.
    assert_eq!(r.product()[0][0], 222.0);
    assert_eq!(r.product()[15][7], 323.0);
    // The fragments are small positive integers, so A B is at least 16 and
    // at most MMA_PRODUCT_MAX everywhere.
    let all: Vec<f64> = r.product().iter().flatten().copied().collect();
    assert!(
        all.iter()
            .all(|&x| (16.0..=f64::from(MMA_PRODUCT_MAX)).contains(&x))
    );
    let mut distinct = all.clone();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    assert!(
        distinct.len() >= 64,
        "{} distinct elements of A B",
        distinct.len()
    );
}

#[test]
fn each_output_is_its_chains_start_plus_the_steps_times_a_b() {
    let iters = 100;
    let r = MmaPeak::new(PTX_ISA_LAYOUT, iters);
    // Warp 3, chain 5, accumulator register 2, lane 9: row 9 / 4 + 8 = 10,
    // column 2 (9 % 4) + 0 = 2 (the PTX ISA's C layout).
    let i = 3 * MMA_OUT_PER_WARP + (5 * 4 + 2) * 32 + 9;
    let want = f64::from(mma_c0(3, 5)) + 100.0 * r.product()[10][2];
    assert_eq!(r.element(i), want);
    assert_eq!(mma_c0(3, 5), 3 * 8 + 5);
    // The start repeats every MMA_C0_WARPS warps, and differs within them.
    assert_eq!(mma_c0(MMA_C0_WARPS + 3, 5), mma_c0(3, 5));
    assert_ne!(mma_c0(4, 5), mma_c0(3, 5));
}

#[test]
fn every_output_stays_an_exact_f32() {
    // At the most steps allowed, the largest output is below 2^24.
    let r = MmaPeak::new(PTX_ISA_LAYOUT, MMA_ITERS_EXACT_MAX);
    let largest = (0..MMA_C0_WARPS as usize * MMA_OUT_PER_WARP)
        .map(|i| r.element(i))
        .fold(0.0, f64::max);
    assert!(largest < f64::from(1u32 << 24), "{largest}");
    assert!(
        f64::from(MMA_C0_MAX) + f64::from(MMA_ITERS_EXACT_MAX + 1) * f64::from(MMA_PRODUCT_MAX)
            >= f64::from(1u32 << 24),
        "the limit is the largest that stays exact"
    );
    assert!(r.elements(0..4096).iter().all(|v| v.fract() == 0.0));
}

/// The outputs of `warps` warps that a GPU whose fragments sit as `layout`
/// says would write, after `iters` steps.
fn gpu_as(layout: FragmentLayout, iters: u32, warps: usize) -> Vec<f32> {
    MmaPeak::new(layout, iters).elements(0..warps * MMA_OUT_PER_WARP)
}

/// The check as the lesson makes it (`mma_peak_mismatch`, the PTX ISA's
/// layout) on `got`.
fn check(got: &[f32], iters: u32) -> Option<String> {
    mma_peak_mismatch(got, 0, &MmaPeak::new(PTX_ISA_LAYOUT, iters))
}

#[test]
fn the_check_passes_the_right_output() {
    assert_eq!(check(&gpu_as(PTX_ISA_LAYOUT, 64, 40), 64), None);
    // And a chunk that starts inside the output.
    let r = MmaPeak::new(PTX_ISA_LAYOUT, 64);
    let start = 7 * MMA_OUT_PER_WARP + 100;
    assert_eq!(
        mma_peak_mismatch(&r.elements(start..start + 5000), start, &r),
        None
    );
}

/// The checks a misread layout would fail: if the hardware placed the
/// fragments as any of these layouts says, while the reference reads them
/// the PTX ISA's way, some output differs. (A check that passed them all
/// could not tell a right layout from a wrong one.)
#[test]
fn the_check_fails_every_misread_layout() {
    let ptx = PTX_ISA_LAYOUT;
    let wrong: [(&str, FragmentLayout); 8] = [
        (
            "A's registers 1 and 2 swapped (rows + 8 and columns + 8)",
            FragmentLayout {
                a: |lane, j| {
                    let (g, p, r, h) = (lane / 4, lane % 4, j / 2, j % 2);
                    (g + 8 * (r / 2), 2 * p + 8 * (r % 2) + h)
                },
                ..ptx
            },
        ),
        (
            "A's halves swapped",
            FragmentLayout {
                a: |lane, j| {
                    let (g, p, r, h) = (lane / 4, lane % 4, j / 2, j % 2);
                    (g + 8 * (r % 2), 2 * p + 8 * (r / 2) + 1 - h)
                },
                ..ptx
            },
        ),
        (
            "A transposed",
            FragmentLayout {
                a: |lane, j| {
                    let (row, col) = (PTX_ISA_LAYOUT.a)(lane, j);
                    (col, row)
                },
                ..ptx
            },
        ),
        (
            "B's halves swapped",
            FragmentLayout {
                b: |lane, j| {
                    let (g, p, r, h) = (lane / 4, lane % 4, j / 2, j % 2);
                    (2 * p + 8 * r + 1 - h, g)
                },
                ..ptx
            },
        ),
        (
            "B's registers swapped",
            FragmentLayout {
                b: |lane, j| {
                    let (g, p, r, h) = (lane / 4, lane % 4, j / 2, j % 2);
                    (2 * p + 8 * (1 - r) + h, g)
                },
                ..ptx
            },
        ),
        (
            "B's rows interleaved (pair + 4 half)",
            FragmentLayout {
                b: |lane, j| {
                    let (g, p, r, h) = (lane / 4, lane % 4, j / 2, j % 2);
                    (p + 4 * h + 8 * r, g)
                },
                ..ptx
            },
        ),
        (
            "C's row and column roles of the register swapped",
            FragmentLayout {
                c: |lane, r| (lane / 4 + 8 * (r % 2), 2 * (lane % 4) + r / 2),
                ..ptx
            },
        ),
        (
            "C's halves swapped",
            FragmentLayout {
                c: |lane, r| (lane / 4 + 8 * (r / 2), 2 * (lane % 4) + 1 - r % 2),
                ..ptx
            },
        ),
    ];
    for (what, layout) in wrong {
        let got = gpu_as(layout, 64, 3);
        assert!(check(&got, 64).is_some(), "the check passes {what}");
    }
}

#[test]
fn the_check_fails_a_skipped_step_a_misplaced_warp_and_an_unwritten_element() {
    let right = gpu_as(PTX_ISA_LAYOUT, 64, 3);
    // One trip (MMA_UNROLL steps) short, and a single step short: every
    // element is off by a multiple of A B (at least 16).
    for iters in [64 - MMA_UNROLL, 63] {
        let short = gpu_as(PTX_ISA_LAYOUT, iters, 3);
        assert!(
            short.iter().zip(&right).all(|(s, r)| s != r),
            "{iters} steps"
        );
        let why = check(&short, 64).expect("a skipped step fails");
        assert!(
            why.contains("warp 0, chain 0, accumulator register 0, lane 0"),
            "{why}"
        );
    }
    // Warp 1's outputs written where warp 2's go.
    let mut misplaced = right.clone();
    misplaced.copy_within(MMA_OUT_PER_WARP..2 * MMA_OUT_PER_WARP, 2 * MMA_OUT_PER_WARP);
    let why = check(&misplaced, 64).expect("a misplaced warp fails");
    assert!(why.contains("warp 2, chain 0"), "{why}");
    // The poison left in one element.
    let mut unwritten = right;
    let last = unwritten.len() - 1;
    unwritten[last] = f32::from_bits(u32::MAX);
    let why = check(&unwritten, 64).expect("an unwritten element fails");
    assert!(
        why.contains("warp 2, chain 7, accumulator register 3, lane 31"),
        "{why}"
    );
}

// ---- the FLOP count and the sizes ------------------------------------------------

#[test]
fn the_flop_count_is_warps_steps_chains_and_4096() {
    assert_eq!(
        MMA_FLOP, 4096,
        "m16n8k16: 16 x 8 outputs, 16 products each, 2 FLOP a product"
    );
    let s = TensorSizes {
        half: Half::Bf16,
        mma_blocks: 132 * 32,
        mma_iters: 2048,
        cublas_side: 4096,
        cublas_large_side: Some(8192),
        wgmma_blocks: None,
        wgmma_iters: 2048,
    };
    assert_eq!(s.mma_warps(), 132 * 32 * 8);
    assert_eq!(s.mma_flop(), (132 * 32 * 8) as f64 * 2048.0 * 8.0 * 4096.0);
    assert_eq!(s.mma_out_len(), 132 * 32 * 8 * 8 * 128);
    assert_eq!(s.cublas_sides(), [4096, 8192]);
    assert_eq!(cublas_flop(4096), 2.0 * 4096f64.powi(3));
    assert_eq!(
        s.device_bytes(),
        s.mma_out_len() * 4 + 8192 * 8192 * (2 + 2 + 4)
    );
    let c = s.launch_config();
    assert_eq!(
        (c.grid_dim, c.block_dim),
        ((132 * 32, 1, 1), (THREADS_PER_BLOCK, 1, 1))
    );
    assert_eq!(
        (s.wgmma_flop(), s.wgmma_out_len()),
        (0.0, 0),
        "no wgmma chains, nothing of theirs"
    );
}

#[test]
fn the_wgmma_flop_count_is_blocks_steps_and_two_warpgroups_of_four_instructions() {
    assert_eq!(
        WGMMA_STEP_FLOP,
        2 * 4 * 524_288,
        "a step: 2 warpgroups x 4 wgmma m64n256k16, each 64 x 256 x 16 products of 2 FLOP"
    );
    let s = TensorSizes {
        half: Half::Bf16,
        mma_blocks: 132 * 32,
        mma_iters: 2048,
        cublas_side: 4096,
        cublas_large_side: Some(8192),
        wgmma_blocks: Some(132 * 4),
        wgmma_iters: 2048,
    };
    assert_eq!(
        s.wgmma_flop(),
        (132 * 4) as f64 * 2048.0 * WGMMA_STEP_FLOP as f64
    );
    assert_eq!(s.wgmma_out_len(), 132 * 4 * 2 * 64 * 256);
    assert_eq!(
        s.device_bytes(),
        (s.mma_out_len() + s.wgmma_out_len()) * 4 + 8192 * 8192 * (2 + 2 + 4)
    );
    let c = s.wgmma_launch_config();
    assert_eq!(
        (c.grid_dim, c.block_dim, c.shared_mem_bytes),
        ((132 * 4, 1, 1), (WGMMA_THREADS, 1, 1), WGMMA_SHARED_BYTES)
    );
}

#[test]
fn sizes_on_every_gpu_profile() {
    for p in lab_tests::PROFILES {
        let info = p.info();
        let (full, quick) = (TensorSizes::for_device(&info), TensorSizes::quick(&info));
        assert_eq!(unavailable(&info), None, "{}", p.name);
        let full = full.expect("a tensor ceiling from 7.5 on");
        full.validate().unwrap();
        let half = if p.cc >= (8, 0) {
            Half::Bf16
        } else {
            Half::F16
        };
        assert_eq!(
            (full.half, quick.map(|q| q.half)),
            (half, Some(half)),
            "{}",
            p.name
        );
        assert_eq!(
            (full.mma_symbol(), full.cublas_symbol()),
            match half {
                Half::Bf16 => ("mma_peak", "cublasGemmEx_bf16"),
                Half::F16 => ("mma_peak_f16", "cublasGemmEx_fp16"),
            }
        );
        assert_eq!(full.mma_blocks, MMA_BLOCKS_PER_SM * p.sms, "{}", p.name);
        assert_eq!(full.mma_iters, MMA_ITERS);
        if p.cc == (9, 0) {
            assert_eq!(no_wgmma(&info), None, "{}", p.name);
            assert_eq!(
                full.wgmma_blocks,
                Some(WGMMA_BLOCKS_PER_SM * p.sms),
                "{}",
                p.name
            );
            assert_eq!(full.wgmma_iters, WGMMA_ITERS);
            let quick = quick.expect("quick sizes from 8.0 on");
            assert_eq!(
                (quick.wgmma_blocks, quick.wgmma_iters),
                (Some(p.sms), WGMMA_QUICK_ITERS)
            );
        } else {
            assert_eq!(
                (full.wgmma_blocks, quick.and_then(|q| q.wgmma_blocks)),
                (None, None),
                "{}",
                p.name
            );
            let why = no_wgmma(&info).expect("a reason");
            assert!(
                why.contains(&format!("compute capability {}.{}", p.cc.0, p.cc.1))
                    && why.contains("9.0 only"),
                "{why}"
            );
        }
        // Every profile has 16 GB or more: 8192^3's 512 MiB fits a quarter.
        assert_eq!(full.cublas_sides(), CUBLAS_SIDES, "{}", p.name);
        assert_eq!(large_side_skipped(&info, &full), None);
        let quick = quick.expect("quick sizes from 7.5 on");
        quick.validate().unwrap();
        assert_eq!(quick.cublas_sides(), [CUBLAS_QUICK_SIDE]);
        assert!(
            large_side_skipped(&info, &quick)
                .unwrap()
                .contains("--quick")
        );
    }
    // The roofline's sizes carry them, and count their bytes.
    let h200 = lab_tests::profile("H200").info();
    let s = host::roofline::Sizes::for_device(&h200);
    let t = s.tensor.expect("an H200 has a tensor ceiling");
    let without = host::roofline::Sizes { tensor: None, ..s };
    assert_eq!(s.device_bytes(), without.device_bytes() + t.device_bytes());
    let t4 = host::roofline::Sizes::for_device(&lab_tests::profile("T4").info());
    assert_eq!(
        t4.tensor.map(|t| t.half),
        Some(Half::F16),
        "a T4's ceiling is FP16"
    );
    // Below 7.5 there is none, and the reason names the compute capability
    // and what each precision needs.
    let v100 = DeviceInfo {
        name: "Tesla V100".into(),
        compute_capability: (7, 0),
        ..lab_tests::profile("T4").info()
    };
    assert_eq!(TensorSizes::for_device(&v100), None);
    assert_eq!(ceiling_half(&v100), None);
    let why = unavailable(&v100).expect("a reason below 7.5");
    assert!(
        why.contains("Tesla V100 has compute capability 7.0")
            && why.contains("needs 7.5")
            && why.contains("8.0"),
        "{why}"
    );
}

#[test]
fn the_larger_cublas_side_needs_a_quarter_of_memory() {
    let small = DeviceInfo {
        total_memory_bytes: 4 * cublas_bytes(8192) - 1,
        ..lab_tests::profile("A100 40GB").info()
    };
    let s = TensorSizes::for_device(&small).unwrap();
    assert_eq!(s.cublas_sides(), [4096]);
    let why = large_side_skipped(&small, &s).unwrap();
    assert!(
        why.contains("8192^3 not timed") && why.contains("512 MiB") && why.contains("quarter"),
        "{why}"
    );
    let enough = DeviceInfo {
        total_memory_bytes: 4 * cublas_bytes(8192),
        ..small
    };
    assert_eq!(
        TensorSizes::for_device(&enough).unwrap().cublas_sides(),
        [4096, 8192]
    );
}

#[test]
fn invalid_tensor_sizes_are_errors_that_say_why() {
    let good = TensorSizes::for_device(&lab_tests::profile("H200").info()).unwrap();
    let msg = |s: TensorSizes| s.validate().unwrap_err().to_string();
    assert!(
        msg(TensorSizes {
            mma_iters: 2050,
            ..good
        })
        .contains("whole trips of 4 steps")
    );
    assert!(
        msg(TensorSizes {
            mma_iters: 0,
            ..good
        })
        .contains("at least one")
    );
    let over = (MMA_ITERS_EXACT_MAX / MMA_UNROLL + 1) * MMA_UNROLL;
    assert!(
        msg(TensorSizes {
            mma_iters: over,
            ..good
        })
        .contains("2^24")
    );
    assert!(
        msg(TensorSizes {
            mma_blocks: 0,
            ..good
        })
        .contains("blocks")
    );
    assert!(
        msg(TensorSizes {
            wgmma_iters: 0,
            ..good
        })
        .contains("wgmma steps")
    );
    assert!(
        msg(TensorSizes {
            wgmma_iters: WGMMA_ITERS_EXACT_MAX + 1,
            ..good
        })
        .contains("2^24")
    );
    assert!(
        msg(TensorSizes {
            wgmma_blocks: Some(0),
            ..good
        })
        .contains("wgmma_peak blocks")
    );
    // An FP16 ceiling has no wgmma chains (wgmma_peak is bf16).
    assert!(
        msg(TensorSizes {
            half: Half::F16,
            ..good
        })
        .contains("wgmma_peak is bf16")
    );
    // Without wgmma chains their step count is not read.
    TensorSizes {
        wgmma_blocks: None,
        wgmma_iters: 0,
        ..good
    }
    .validate()
    .unwrap();
    // The roofline's own validation reaches them.
    let s = host::roofline::Sizes::for_device(&lab_tests::profile("H200").info());
    let bad = host::roofline::Sizes {
        tensor: Some(TensorSizes {
            mma_iters: 3,
            ..good
        }),
        ..s
    };
    assert!(bad.validate().is_err());
}

// ---- the derived limit ------------------------------------------------------------

#[test]
fn the_derived_limit_per_compute_capability() {
    // NVIDIA's published peaks, per SM and clock: A100 312 TFLOP/s dense
    // BF16, 108 SMs, 1410 MHz; H100 SXM5 989.4 TFLOP/s, 132 SMs, 1830 MHz.
    let a100: f64 = 312e12 / (108.0 * 1.41e9);
    let h100: f64 = 989.4e12 / (132.0 * 1.83e9);
    assert_eq!(
        a100.round(),
        2049.0,
        "2048 within the whitepaper's rounding"
    );
    assert_eq!(h100.round(), 4096.0);
    assert_eq!(tensor_flop_per_clock_per_sm((8, 0)), Some(2048));
    assert_eq!(tensor_flop_per_clock_per_sm((9, 0)), Some(4096));
    // The lesson derives it from the driver's clock, the FP32 limit's path:
    // an H200 at 1980 MHz, 132 SMs; an A100 profile at the same clock.
    let h200 = lab_tests::profile("H200").info();
    assert_eq!(
        h200.derived_tensor_flop_per_s(),
        Some(132.0 * 4096.0 * 1.98e9)
    );
    let a100_info = lab_tests::profile("A100 40GB").info();
    assert_eq!(
        a100_info.derived_tensor_flop_per_s(),
        Some(108.0 * 2048.0 * 1.98e9)
    );
    // The same clock and SMs as the FP32 limit: the ratio is the per-SM one.
    let ratio = h200.derived_tensor_flop_per_s().unwrap() / h200.derived_fp32_flop_per_s().unwrap();
    assert_eq!(ratio, 4096.0 / 256.0);
    // No rate written down: unknown, not invented.
    for name in ["T4", "A10", "L4", "B200", "RTX 5090"] {
        assert_eq!(
            lab_tests::profile(name).info().derived_tensor_flop_per_s(),
            None,
            "{name}"
        );
    }
    // A clock the driver reports as 0 leaves it unknown.
    let no_clock = DeviceInfo {
        sm_clock_khz: 0,
        ..h200
    };
    assert_eq!(no_clock.derived_tensor_flop_per_s(), None);
}

// ---- the ceiling: mma.sync or cuBLAS ------------------------------------------------

fn timing(ms: f64) -> Timing {
    Timing::new(vec![ms * 0.99, ms, ms * 1.01])
}

/// H200 sizes, `mma_peak` at `mma_tflop`, `wgmma_peak` at its rate (or
/// missing, with its reason) and cuBLAS at the given rates per side (or
/// missing, with its reason).
fn ceiling_with(
    mma_tflop: f64,
    wgmma: Result<f64, String>,
    cublas: Result<Vec<(usize, f64)>, String>,
) -> TensorCeiling {
    let info = lab_tests::profile("H200").info();
    let sizes = TensorSizes::for_device(&info).unwrap();
    let ms = |flop: f64, tflop: f64| flop / (tflop * 1e12) * 1e3;
    let timings = TensorTimings {
        mma: timing(ms(sizes.mma_flop(), mma_tflop)),
        wgmma: wgmma.map(|tflop| timing(ms(sizes.wgmma_flop(), tflop))),
        cublas: cublas.map(|rows| {
            rows.into_iter()
                .map(|(side, tflop)| (side, timing(ms(cublas_flop(side), tflop))))
                .collect()
        }),
    };
    TensorCeiling::new(&info, sizes, timings)
}

/// As [`ceiling_with`], without `wgmma` chains (a reason given).
fn ceiling(mma_tflop: f64, cublas: Result<Vec<(usize, f64)>, String>) -> TensorCeiling {
    ceiling_with(
        mma_tflop,
        Err("no wgmma chains: not in this test".into()),
        cublas,
    )
}

#[test]
fn cublas_sets_the_ceiling_where_it_beats_the_chains() {
    let c = ceiling(640.0, Ok(vec![(4096, 755.0), (8192, 708.0)]));
    assert_eq!(c.source(), Source::Cublas);
    assert!((c.mma_gflop_per_s - 640_000.0).abs() < 1e-6);
    assert!(
        (c.gflop_per_s() - 755_000.0).abs() < 1e-6,
        "the best side, not the last"
    );
    assert_eq!(c.cublas_best().unwrap().side, 4096);
    let over = c.cublas_over_mma_pct().unwrap();
    assert!((over - 100.0 * (755.0 / 640.0 - 1.0)).abs() < 1e-9);
    let s = c.sentence();
    assert!(
        s.contains("The BF16 tensor-core ceiling is cuBLAS's GemmEx at 4096^3, 755.0 TFLOP/s: 18.0% above the 8 mma.sync chains a warp at 640.0 TFLOP/s"),
        "{s}"
    );
    assert!(std::ptr::eq(
        c.timing(),
        &c.cublas.as_ref().unwrap()[0].timing
    ));
    let j = c.json();
    assert_eq!(j["source"], "cuBLAS");
    assert!((j["gflop_per_s"].as_f64().unwrap() - 755_000.0).abs() < 1e-6);
    assert!((j["mma_sync_gflop_per_s"].as_f64().unwrap() - 640_000.0).abs() < 1e-6);
    assert!((j["cublas_best_gflop_per_s"].as_f64().unwrap() - 755_000.0).abs() < 1e-6);
    assert_eq!(j["cublas_best_side"], 4096);
    let derived = 132.0 * 4096.0 * 1.98e9 / 1e9;
    assert_eq!(j["derived_limit_gflop_per_s"], derived);
    // The tensor roof meets a 4000 GB/s bandwidth ceiling at 755000 / 4000.
    assert!((c.ridge(4000.0) - 188.75).abs() < 1e-9);
}

/// A T4's ceiling is FP16: `mma_peak_f16` against cuBLAS's FP16 GEMM, no
/// `wgmma` chains (the reason names 7.5), no derived limit (Turing's
/// FP32-accumulate rate differs between products); the sentence and the
/// JSON say FP16 and name the kernel.
#[test]
fn a_t4s_ceiling_is_fp16_with_its_own_kernel_and_cublas_call() {
    let info = lab_tests::profile("T4").info();
    let sizes = TensorSizes::for_device(&info).unwrap();
    assert_eq!((sizes.half, sizes.wgmma_blocks), (Half::F16, None));
    let ms = |flop: f64, tflop: f64| flop / (tflop * 1e12) * 1e3;
    let timings = TensorTimings {
        mma: timing(ms(sizes.mma_flop(), 50.0)),
        wgmma: Err(no_wgmma(&info).unwrap()),
        cublas: Ok(vec![(4096, timing(ms(cublas_flop(4096), 40.0)))]),
    };
    let c = TensorCeiling::new(&info, sizes, timings);
    assert_eq!(c.source(), Source::MmaSync);
    assert_eq!(c.derived_gflop_per_s, None);
    let s = c.sentence();
    assert!(
        s.contains(
            "The FP16 tensor-core ceiling is the 8 mma.sync chains a warp (each step two f16 m16n8k8), 50.0 TFLOP/s; \
             cuBLAS's best, 40.0 TFLOP/s at 4096^3, is 20.0% below it."
        ),
        "{s}"
    );
    assert!(
        s.contains("No wgmma chains: T4 has compute capability 7.5"),
        "{s}"
    );
    let j = c.json();
    assert_eq!(
        (j["precision"].as_str(), j["mma_symbol"].as_str()),
        (Some("fp16"), Some("mma_peak_f16"))
    );
    assert_eq!(j["derived_limit_gflop_per_s"], serde_json::Value::Null);
}

#[test]
fn the_chains_set_the_ceiling_where_cublas_is_slower() {
    let c = ceiling(300.0, Ok(vec![(4096, 280.0)]));
    assert_eq!(c.source(), Source::MmaSync);
    assert!((c.gflop_per_s() - 300_000.0).abs() < 1e-6);
    assert!(std::ptr::eq(c.timing(), &c.mma));
    let s = c.sentence();
    assert!(
        s.contains("is the 8 mma.sync chains a warp, 300.0 TFLOP/s; cuBLAS's best, 280.0 TFLOP/s at 4096^3, is 6.7% below it"),
        "{s}"
    );
    assert_eq!(c.json()["source"], "mma.sync");
}

#[test]
fn without_cublas_the_chains_set_it_with_a_caveat() {
    let c = ceiling(640.0, Err("cuBLAS not found (...)".into()));
    assert_eq!(c.source(), Source::MmaSync);
    assert_eq!(c.cublas_best().map(|r| r.side), None);
    assert_eq!(c.cublas_over_mma_pct(), None);
    let s = c.sentence();
    assert!(
        s.contains("640.0 TFLOP/s, with a caveat: cuBLAS did not run (cuBLAS not found (...))"),
        "{s}"
    );
    assert_eq!(s.lines().count(), 1);
    let j = c.json();
    assert_eq!(j["cublas_best_gflop_per_s"], serde_json::Value::Null);
    assert_eq!(j["cublas_missing"], "cuBLAS not found (...)");
    assert!(s.contains(" No wgmma chains: not in this test."), "{s}");
}

#[test]
fn the_wgmma_chains_set_the_ceiling_where_they_beat_cublas_and_mma_sync() {
    let c = ceiling_with(640.0, Ok(820.0), Ok(vec![(4096, 755.0), (8192, 708.0)]));
    assert_eq!(c.source(), Source::Wgmma);
    assert_eq!(c.chains().0, Source::Wgmma);
    assert!((c.gflop_per_s() - 820_000.0).abs() < 1e-6);
    assert!(std::ptr::eq(c.timing(), &c.wgmma.as_ref().unwrap().timing));
    let over = c.cublas_over_wgmma_pct().unwrap();
    assert!((over - 100.0 * (755.0 / 820.0 - 1.0)).abs() < 1e-9);
    let s = c.sentence();
    assert!(
        s.contains(
            "The BF16 tensor-core ceiling is the wgmma chains (2 warpgroups a block, m64n256k16), 820.0 TFLOP/s; \
             cuBLAS's best, 755.0 TFLOP/s at 4096^3, is 7.9% below it."
        ),
        "{s}"
    );
    assert!(
        s.contains("The 8 mma.sync chains a warp reach 640.0 TFLOP/s, 78.0% of the wgmma chains."),
        "{s}"
    );
    let j = c.json();
    assert_eq!(j["source"], "wgmma");
    assert!((j["wgmma_gflop_per_s"].as_f64().unwrap() - 820_000.0).abs() < 1e-6);
    assert_eq!(j["wgmma_missing"], serde_json::Value::Null);
    assert_eq!(j["wgmma_blocks"], 132 * WGMMA_BLOCKS_PER_SM);
}

#[test]
fn cublas_sets_the_ceiling_where_it_beats_the_wgmma_chains_and_says_by_how_much() {
    let c = ceiling_with(640.0, Ok(700.0), Ok(vec![(4096, 770.0)]));
    assert_eq!(c.source(), Source::Cublas);
    assert_eq!(c.chains(), (Source::Wgmma, 700_000.0));
    let s = c.sentence();
    assert!(
        s.contains(
            "cuBLAS's GemmEx at 4096^3, 770.0 TFLOP/s: 10.0% above the wgmma chains (2 warpgroups a block, \
             m64n256k16) at 700.0 TFLOP/s"
        ),
        "{s}"
    );
    assert!(
        s.contains("reach 640.0 TFLOP/s, 91.4% of the wgmma chains"),
        "{s}"
    );
    // wgmma chains slower than mma.sync's (a misbuilt kernel, say): the
    // mma.sync chains are the chains, and the sentence gives the wgmma rate.
    let c = ceiling_with(640.0, Ok(320.0), Ok(vec![(4096, 600.0)]));
    assert_eq!(c.source(), Source::MmaSync);
    assert!(c.sentence().contains("The wgmma chains (2 warpgroups a block, m64n256k16) reach 320.0 TFLOP/s, 50.0% of the mma.sync chains."), "{}", c.sentence());
}

// ---- wgmma_peak's reference and check ----------------------------------------------

#[test]
fn wgmma_peak_tiles_are_small_integers_in_a_hashed_order() {
    let (a, b) = WgmmaPeak::tiles();
    assert_eq!((a.len(), b.len()), (128 * 64, 64 * 256));
    for v in a.iter().chain(&b) {
        assert!(
            v.fract() == 0.0 && (1.0..=WGMMA_VALUE_MAX as f32).contains(v),
            "{v}"
        );
        assert_eq!(half::bf16::from_f32(*v).to_f32(), *v, "exact in bf16");
    }
    // No row of A repeats another's, and no column of B: a row or column
    // read from the wrong place changes the product.
    let rows: std::collections::HashSet<Vec<u32>> = a
        .chunks(64)
        .map(|r| r.iter().map(|v| v.to_bits()).collect())
        .collect();
    assert_eq!(rows.len(), 128);
    let cols: std::collections::HashSet<Vec<u32>> = (0..256)
        .map(|c| (0..64).map(|k| b[k * 256 + c].to_bits()).collect())
        .collect();
    assert_eq!(cols.len(), 256);
}

#[test]
fn each_wgmma_output_is_its_warpgroups_start_plus_the_steps_times_a_b() {
    let (a, b) = WgmmaPeak::tiles();
    let r = WgmmaPeak::new(5);
    let product = |row: usize, col: usize| -> f64 {
        (0..64)
            .map(|k| f64::from(a[row * 64 + k]) * f64::from(b[k * 256 + col]))
            .sum()
    };
    for (group, row, col) in [
        (0, 0, 0),
        (1, 0, 0),
        (1, 63, 255),
        (2, 17, 130),
        (4097, 5, 9),
    ] {
        let i = group * WGMMA_OUT_PER_WARPGROUP + row * 256 + col;
        let want = f64::from(wgmma_c0(group as u32)) + 5.0 * product(64 * (group % 2) + row, col);
        assert_eq!(r.element(i), want, "warpgroup {group}, ({row}, {col})");
    }
    assert_eq!(
        wgmma_c0(4097),
        1,
        "the starts repeat every WGMMA_C0_GROUPS warpgroups"
    );
}

#[test]
fn every_wgmma_output_stays_an_exact_f32() {
    let r = WgmmaPeak::new(WGMMA_ITERS_EXACT_MAX);
    let largest = (0..128 * 256)
        .map(|i| r.product(i / 256, i % 256))
        .fold(0.0, f64::max);
    assert!(largest <= f64::from(WGMMA_PRODUCT_MAX));
    let top = f64::from(WGMMA_C0_GROUPS - 1)
        + f64::from(WGMMA_ITERS_EXACT_MAX) * f64::from(WGMMA_PRODUCT_MAX);
    assert!(top < f64::from(1u32 << 24), "{top}");
}

#[test]
fn the_wgmma_check_fails_a_skipped_step_a_swapped_warpgroup_and_a_misplaced_element() {
    let iters = 16;
    let r = WgmmaPeak::new(iters);
    let groups = 6;
    let good: Vec<f32> = (0..groups * WGMMA_OUT_PER_WARPGROUP)
        .map(|i| r.element(i) as f32)
        .collect();
    assert_eq!(r.mismatch(&good, 0), None);
    assert_eq!(r.mismatch(&good[1000..], 1000), None, "an offset chunk");
    // One step fewer in every output.
    let fewer = WgmmaPeak::new(iters - 1);
    let skipped: Vec<f32> = (0..good.len()).map(|i| fewer.element(i) as f32).collect();
    assert!(
        r.mismatch(&skipped, 0)
            .unwrap()
            .contains("warpgroup 0, row 0, column 0")
    );
    // Warpgroup 1's tile where warpgroup 0's should be.
    let mut swapped = good.clone();
    swapped.copy_within(WGMMA_OUT_PER_WARPGROUP..2 * WGMMA_OUT_PER_WARPGROUP, 0);
    assert!(r.mismatch(&swapped, 0).is_some());
    // Two neighbouring columns exchanged (a fragment's registers misplaced).
    let mut exchanged = good.clone();
    exchanged.swap(3 * 256 + 40, 3 * 256 + 41);
    let m = r.mismatch(&exchanged, 0).expect("caught");
    assert!(m.contains("row 3, column 40"), "{m}");
    // An unwritten (poisoned) element.
    let mut poisoned = good;
    poisoned[5 * WGMMA_OUT_PER_WARPGROUP - 1] = f32::NAN;
    assert!(
        r.mismatch(&poisoned, 0)
            .unwrap()
            .contains("warpgroup 4, row 63, column 255")
    );
}

// ---- the PTX ----------------------------------------------------------------------

/// `mma_peak` is in the sm_80 module with the parameters its launch is
/// checked against, and not in the sm_75 one; one trip of its run-time
/// loop is MMA_UNROLL steps of MMA_CHAINS chains (the loop itself stays: a
/// branch back); it writes each chain's four accumulators once, and keeps
/// no local memory.
#[test]
fn mma_peak_is_in_the_sm80_module_as_written() {
    let kernels: Vec<_> = TensorKernel::ALL
        .iter()
        .map(|k| (k.symbol(), k.params()))
        .collect();
    let faults = lab_tests::signature_faults(&kernels, PTX_SM80, "the sm_80 module");
    assert!(faults.is_empty(), "{}", faults.join("\n"));
    assert!(
        !entries(PTX).contains(&"mma_peak"),
        "the sm_75 module has no tensor-core kernel"
    );
    let body = entry_body(PTX_SM80, "mma_peak").expect("an entry has a body");
    let count = |what: &str| {
        body.lines()
            .filter(|l| l.trim_start().starts_with(what))
            .count()
    };
    assert_eq!(
        count("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
        MMA_CHAINS * MMA_UNROLL as usize,
        "one trip: {MMA_UNROLL} steps of {MMA_CHAINS} chains"
    );
    assert_eq!(
        count("st.global"),
        MMA_CHAINS * 4,
        "every accumulator stored once"
    );
    assert_eq!(count("ld.global"), 0, "registers only");
    assert!(
        lab_tests::has_backward_branch(body),
        "no loop: no branch goes back to an earlier label"
    );
    assert!(!body.contains(".local"), "no local memory");
}

/// `mma_peak_f16` is in the sm_75 module (every lesson's, built for sm_75
/// or later) with the parameters its launch is checked against, and not in
/// the sm_80 one; one trip of its run-time loop is MMA_UNROLL steps of
/// MMA_CHAINS chains, each step two f16 `mma.sync` m16n8k8 (the loop
/// stays: a branch back); it writes each chain's four accumulators once,
/// and keeps no local memory.
#[test]
fn mma_peak_f16_is_in_the_sm75_module_as_written() {
    let kernels: Vec<_> = TuringTensorKernel::ALL
        .iter()
        .map(|k| (k.symbol(), k.params()))
        .collect();
    let faults = lab_tests::signature_faults(&kernels, PTX, "the sm_75 module");
    assert!(faults.is_empty(), "{}", faults.join("\n"));
    assert!(
        !entries(PTX_SM80).contains(&"mma_peak_f16"),
        "the sm_80 module's chains are bf16"
    );
    let body = entry_body(PTX, "mma_peak_f16").expect("an entry has a body");
    let count = |what: &str| {
        body.lines()
            .filter(|l| l.trim_start().starts_with(what))
            .count()
    };
    assert_eq!(
        count("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32"),
        2 * MMA_CHAINS * MMA_UNROLL as usize,
        "one trip: {MMA_UNROLL} steps of {MMA_CHAINS} chains, two m16n8k8 a step"
    );
    assert_eq!(
        count("mma.sync"),
        2 * MMA_CHAINS * MMA_UNROLL as usize,
        "no other mma"
    );
    assert_eq!(
        count("st.global"),
        MMA_CHAINS * 4,
        "every accumulator stored once"
    );
    assert_eq!(count("ld.global"), 0, "registers only");
    assert!(
        lab_tests::has_backward_branch(body),
        "no loop: no branch goes back to an earlier label"
    );
    assert!(!body.contains(".local"), "no local memory");
}

/// ptxas assembles the sm_75 module for sm_75 (a T4) and sm_90 with no
/// spill in `mma_peak_f16` (skipped, saying so, where no ptxas is found
/// outside CI).
#[test]
fn mma_peak_f16_assembles_without_spills() {
    let Some(reports) =
        lab_tests::ptxas_reports(PTX, "kernels", &["sm_75", "sm_90"], &["mma_peak_f16"])
    else {
        return;
    };
    for (arch, _, report) in reports {
        assert!(
            report.contains("0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"),
            "{arch}: {report}"
        );
    }
}

/// ptxas assembles the sm_80 module for sm_80 and sm_90 with no spill in
/// `mma_peak` (skipped, saying so, where no ptxas is found outside CI).
#[test]
fn mma_peak_assembles_without_spills() {
    let Some(reports) =
        lab_tests::ptxas_reports(PTX_SM80, "kernels_sm80", &["sm_80", "sm_90"], &["mma_peak"])
    else {
        return;
    };
    for (arch, _, report) in reports {
        assert!(
            report.contains("0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"),
            "{arch}: {report}"
        );
    }
}

/// `wgmma_peak` is in the sm_90a module with the parameters its launch is
/// checked against, and in neither other module; one trip of its run-time
/// loop is one step, 4 `wgmma` m64n256k16 between a fence and a commit and
/// a wait for all but the newest group (the loop itself stays: a branch
/// back); it copies its tiles with `cp.async` once, writes each of its 128
/// accumulators once and keeps no local memory.
#[test]
fn wgmma_peak_is_in_the_sm90a_module_as_written() {
    let kernels: Vec<_> = HopperKernel::ALL
        .iter()
        .map(|k| (k.symbol(), k.params()))
        .collect();
    let faults = lab_tests::signature_faults(&kernels, PTX_SM90A, "the sm_90a module");
    assert!(faults.is_empty(), "{}", faults.join("\n"));
    assert!(!entries(PTX).contains(&"wgmma_peak") && !entries(PTX_SM80).contains(&"wgmma_peak"));
    let body = entry_body(PTX_SM90A, "wgmma_peak").expect("an entry has a body");
    let count = |what: &str| {
        body.lines()
            .filter(|l| l.trim_start().starts_with(what))
            .count()
    };
    assert_eq!(
        count("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"),
        4,
        "one step: k = 64"
    );
    assert_eq!(count("wgmma.fence.sync.aligned"), 1);
    assert_eq!(count("wgmma.commit_group.sync.aligned"), 1);
    assert_eq!(
        count("wgmma.wait_group.sync.aligned 1"),
        1,
        "one group left in flight a step"
    );
    assert_eq!(
        count("wgmma.wait_group.sync.aligned 0"),
        1,
        "all waited for before the stores"
    );
    assert_eq!(
        count("cp.async.cg.shared.global"),
        12,
        "4 chunks of A and 8 of B a thread, once"
    );
    assert_eq!(count("st.global"), 128, "every accumulator stored once");
    assert!(
        lab_tests::has_backward_branch(body),
        "no loop: no branch goes back to an earlier label"
    );
    assert!(!body.contains(".local"), "no local memory");
}

/// ptxas assembles `wgmma_peak` for sm_90a with no spill and without
/// serializing its `wgmma`s (skipped, saying so, where no ptxas is found
/// outside CI).
#[test]
fn wgmma_peak_assembles_without_spills() {
    let Some(reports) =
        lab_tests::ptxas_reports(PTX_SM90A, "kernels_sm90a", &["sm_90a"], &["wgmma_peak"])
    else {
        return;
    };
    for (arch, _, report) in reports {
        assert!(
            report.contains("0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"),
            "{arch}: {report}"
        );
        assert!(
            !report.contains("(C75"),
            "{arch}: ptxas changed the wgmma pipeline: {report}"
        );
    }
}
