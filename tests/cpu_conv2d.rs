//! CPU-only tests of the conv2d lesson: the seed's FLOP counts and padding
//! overhead, the references on hand-checked images, the bound that the
//! check allows, the launch shapes, the PTX (nine FMAs and nine read-only
//! loads per output, the weights from the parameter space) and the CUDA C
//! twins compiling with NVRTC.

use host::check::Tolerance;
use host::conv2d::{
    self, Kernel, conv2d_basic_host, conv2d_padded_host, formula_lines, padding_overhead, reference,
};
use host::kernels::KernelId;
use host::ptx::{PTX, PtxMix, entries, entry_body};
use kernels_gpu::conv2d::*;

#[test]
fn the_seed_flop_counts_and_padding_overhead() {
    assert_eq!(Kernel::Valid.flop(64), 69_192);
    assert_eq!(Kernel::Same.flop(64), 73_728);
    assert_eq!(Kernel::Valid.flop(128), 285_768);
    assert_eq!(Kernel::Same.flop(128), 294_912);
    let (extra, pct) = padding_overhead(64);
    assert_eq!(extra, 4536);
    assert_eq!(format!("{pct:.1}"), "6.6");
    let (extra, pct) = padding_overhead(128);
    assert_eq!(extra, 9144);
    assert_eq!(format!("{pct:.1}"), "3.2");
    assert_eq!(
        formula_lines(64),
        [
            "basic_ops  = 2 * (64-2)^2 * 3 * 3 = 69192",
            "padded_ops = 2 * 64^2 * 3 * 3 = 73728",
            "extra work from padding: 4536 more FLOPs (6.6% more)",
        ]
    );
    // 8192: 589752 more of 1207369800, 0.0488%: two decimals, not "0.0%".
    assert_eq!(
        formula_lines(8192)[2],
        "extra work from padding: 589752 more FLOPs (0.05% more)"
    );
    // The large sizes: 2 (n-2)^2 9 and 2 n^2 9 past 32 bits of FLOP.
    assert_eq!(Kernel::Valid.flop(8192), 2 * 8190 * 8190 * 9);
    assert_eq!(Kernel::Same.flop(8192), 2 * 8192 * 8192 * 9);
}

#[test]
fn bytes_and_intensity() {
    // 64: 4 x 4096 in, 4 x 3844 out.
    assert_eq!(Kernel::Valid.compulsory_bytes(64), 4 * (4096 + 3844));
    assert_eq!(Kernel::Same.compulsory_bytes(64), 8 * 4096);
    // Same: 18 n^2 FLOP over 8 n^2 bytes, exactly 2.25 FLOP/byte.
    assert_eq!(Kernel::Same.intensity(8192), 2.25);
    assert!((Kernel::Valid.intensity(8192) - 2.25).abs() < 1e-3);
}

/// Chapter 18's 4 x 4 worked example: the image 1..16, the seed's stencil
/// (corners and centre): the four valid outputs by hand, 1+3+6+9+11 = 30,
/// 2+4+7+10+12 = 35, 5+7+10+13+15 = 50, 6+8+11+14+16 = 55.
#[test]
fn the_four_by_four_worked_example() {
    let image: Vec<f32> = (1..=16).map(|v| v as f32).collect();
    let t = &reference::SEED_TAPS;
    assert_eq!(reference::valid_f64(&image, 4, t), [30.0, 35.0, 50.0, 55.0]);
    assert_eq!(reference::valid_fma(&image, 4, t), [30.0, 35.0, 50.0, 55.0]);
    let mut out = [0.0f32; 4];
    conv2d_basic_host(&image, 4, t, &mut out);
    assert_eq!(out, [30.0, 35.0, 50.0, 55.0]);
    // Same: (0,0) sees the centre 1 and the lower-right corner 6 (the other
    // corners are padding): 7. (1,1) sees 1, 3, 9, 11 and 6: 30.
    let same = reference::same_f64(&image, 4, t);
    assert_eq!((same[0], same[5]), (7.0, 30.0));
    let mut out = [0.0f32; 16];
    conv2d_padded_host(&image, 4, t, &mut out);
    assert_eq!(out.map(f64::from).to_vec(), same);
    assert_eq!(
        reference::same_fma(&image, 4, t)
            .iter()
            .map(|&v| f64::from(v))
            .collect::<Vec<_>>(),
        same
    );
}

/// One 1 in a 6 x 6 image of zeros shows the stencil's orientation: the
/// kernels correlate (as the seed does), so output (r, c) holds
/// w[(2 - (r - ... )) ...]: the stencil turned by 180 degrees around the 1.
#[test]
fn an_impulse_shows_the_stencil_turned() {
    let (n, y, x) = (6, 2, 3);
    let mut image = vec![0.0f32; n * n];
    image[y * n + x] = 1.0;
    let t = &reference::LESSON_TAPS;
    let valid = reference::valid_fma(&image, n, t);
    let m = n - 2;
    for row in 0..m {
        for col in 0..m {
            let (r, c) = (y as isize - row as isize, x as isize - col as isize);
            let want = if (0..3).contains(&r) && (0..3).contains(&c) {
                t.w[r as usize * 3 + c as usize]
            } else {
                0.0
            };
            assert_eq!(valid[row * m + col], want, "({row}, {col})");
        }
    }
    let same = reference::same_fma(&image, n, t);
    // The same output at (y, x) is the centre weight, at (y + 1, x + 1) the
    // top-left one, at (y - 1, x - 1) the bottom-right one.
    assert_eq!(same[y * n + x], t.w[4]);
    assert_eq!(same[(y + 1) * n + x + 1], t.w[0]);
    assert_eq!(same[(y - 1) * n + x - 1], t.w[8]);
}

#[test]
fn every_f32_evaluation_stays_in_the_bound_and_the_orders_differ() {
    for n in [3, 64, 67, 128] {
        let image = reference::image(n);
        let t = &reference::LESSON_TAPS;
        for &k in Kernel::ALL {
            let want = conv2d::Expected::of(k, &image, n);
            assert_eq!(
                host::check::first_mismatch(&want.fma, &want.f64, Tolerance::Bound(&want.bound)),
                None,
                "{k:?} n={n}"
            );
            let mut host = vec![0.0f32; k.outputs(n)];
            match k {
                Kernel::Valid => conv2d_basic_host(&image, n, t, &mut host),
                Kernel::Same => conv2d_padded_host(&image, n, t, &mut host),
            }
            assert_eq!(
                host::check::first_mismatch(&host, &want.f64, Tolerance::Bound(&want.bound)),
                None,
                "{k:?} n={n}"
            );
            if n == 128 {
                // Nine FMAs and nine rounded products with eight rounded
                // adds round differently: the bit-exact check is the
                // sharper one, and it is the kernels' order it pins.
                let differ = host
                    .iter()
                    .zip(&want.fma)
                    .filter(|(a, b)| a.to_bits() != b.to_bits())
                    .count();
                assert!(differ > 0, "{k:?}: the two orders agreed everywhere");
            }
        }
    }
}

#[test]
fn the_bound_catches_a_wrong_value_and_a_poisoned_one() {
    let n = 67;
    let image = reference::image(n);
    let want = conv2d::Expected::of(Kernel::Valid, &image, n);
    let mut got = want.fma.clone();
    got[100] += 1e-3;
    assert_eq!(
        host::check::first_mismatch(&got, &want.f64, Tolerance::Bound(&want.bound))
            .map(|m| m.index),
        Some(100)
    );
    let mut got = want.fma.clone();
    got[7] = f32::from_bits(u32::MAX);
    assert_eq!(
        host::check::first_mismatch(&got, &want.f64, Tolerance::Bound(&want.bound))
            .map(|m| m.index),
        Some(7)
    );
    // The bound is tight: one ulp at a large output is inside, a thousand
    // ulps are not.
    let i = (0..want.fma.len())
        .max_by(|&a, &b| want.fma[a].abs().total_cmp(&want.fma[b].abs()))
        .unwrap();
    let mut got = want.fma.clone();
    got[i] = f32::from_bits(got[i].to_bits() + 1);
    assert_eq!(
        host::check::first_mismatch(&got, &want.f64, Tolerance::Bound(&want.bound)),
        None
    );
    got[i] = f32::from_bits(got[i].to_bits() + 1000);
    assert_eq!(
        host::check::first_mismatch(&got, &want.f64, Tolerance::Bound(&want.bound))
            .map(|m| m.index),
        Some(i)
    );
}

#[test]
fn launch_shapes_cover_every_output_and_no_more() {
    for n in [3, 4, 64, 128, CHECK_SIDE, 4096, 8192] {
        for &k in Kernel::ALL {
            let c = k.launch_config(n);
            assert_eq!(c.block_dim, (BLOCK_X, BLOCK_Y, 1));
            let side = k.out_side(n);
            let (gx, gy) = (c.grid_dim.0 as usize, c.grid_dim.1 as usize);
            assert!(
                gx * BLOCK_X as usize >= side && gy * BLOCK_Y as usize >= side,
                "{k:?} n={n}"
            );
            assert!(
                (gx - 1) * (BLOCK_X as usize) < side && (gy - 1) * (BLOCK_Y as usize) < side,
                "{k:?} n={n}"
            );
        }
    }
    assert_eq!(Kernel::Valid.outputs(3), 1);
    assert_eq!(Kernel::Valid.outputs(CHECK_SIDE), 1025 * 1025);
}

#[test]
fn the_ptx_has_nine_fmas_and_nine_read_only_loads_per_output() {
    let found = entries(PTX);
    for &k in Kernel::ALL {
        assert!(found.contains(&k.symbol()), "missing {}", k.symbol());
        let body = entry_body(PTX, k.symbol()).unwrap();
        let mix = PtxMix::of(body);
        assert_eq!(mix.fma_f32, TAPS, "{}: {}", k.symbol(), mix.summary());
        assert_eq!(
            mix.accesses.get("ld.global.nc 32b"),
            Some(&TAPS),
            "{}",
            mix.summary()
        );
        assert_eq!(
            mix.accesses.get("st.global 32b"),
            Some(&1),
            "{}",
            mix.summary()
        );
        // No plain global load (the weights come from the parameter space),
        // no unfused arithmetic, no local memory.
        assert_eq!(mix.accesses.get("ld.global 32b"), None, "{}", mix.summary());
        for op in ["mul.rn.f32", "add.rn.f32", ".local"] {
            assert!(!body.contains(op), "{} has {op}", k.symbol());
        }
        assert_eq!(
            body.matches("ld.param.b32").count(),
            TAPS + 1,
            "nine weights and n"
        );
    }
}

#[test]
fn the_twins_compile_with_nvrtc_and_show_the_same() {
    let Some(ptx) = lab_tests::twin_ptx_on_cpu::<host::conv2d::Conv2dLesson>((7, 5)) else {
        return;
    };
    // nvcc contracts `sum += x * w` into the same nine FMAs.
    for &k in Kernel::ALL {
        let mix = PtxMix::of(entry_body(&ptx, k.symbol()).unwrap());
        assert_eq!(mix.fma_f32, TAPS, "{}", mix.summary());
    }
}

#[test]
fn the_sizes_record_every_checked_and_timed_side() {
    // On an H200 (60 MiB L2) the largest image is 4096 doubled to 8192
    // (256 MiB); on a T4 (4 MiB) it stays 4096; on a B200 (126 MiB) 16384.
    let sizes = |name| conv2d::Sizes::new(&lab_tests::profile(name).info(), false);
    let h200 = sizes("H200");
    assert_eq!(h200.timed_sides, [64, 128, 4096, 8192]);
    assert_eq!(h200.checked_sides, [64, 128, 4096, 8192, CHECK_SIDE]);
    assert_eq!(sizes("T4").timed_sides, [64, 128, 2048, 4096]);
    assert_eq!(sizes("B200").timed_sides, [64, 128, 8192, 16384]);
    let quick = conv2d::Sizes::new(&lab_tests::profile("H200").info(), true);
    assert_eq!(quick.checked_sides, [64, 128, CHECK_SIDE]);
    let j = serde_json::to_value(&h200).unwrap();
    assert_eq!(j["cpu_sides"], serde_json::json!([64, 128]));
}

/// A made-up row (not a measurement: the reading's arithmetic and wording
/// are what is tested).
fn row(key: String, ms: f64, flop: u64, bytes: Option<u64>, cpu: bool) -> host::lesson::Row {
    let r = host::lesson::Row::new(key, "synthetic", host::timing::Timing::new(vec![ms]))
        .flop(flop as f64);
    let r = match bytes {
        Some(b) => r.bytes(b as f64),
        None => r,
    };
    if cpu { r.on_cpu() } else { r }
}

#[test]
fn the_reading_sets_each_figure_against_the_roofline() {
    let info = lab_tests::synthetic_device(60 << 20, 132);
    // 8192, both kernels at 0.2 ms.
    let n = 8192;
    let rows: Vec<_> = Kernel::ALL
        .iter()
        .map(|k| {
            row(
                format!("{}/{n}", k.symbol()),
                0.2,
                k.flop(n),
                Some(k.compulsory_bytes(n)),
                false,
            )
        })
        .collect();
    let text = conv2d::size_reading(&rows, n, &info);
    // Bound: min(66.9 TFLOP/s, intensity x 4814.3 GB/s): valid 2.2495
    // FLOP/byte, 10830 GFLOP/s; same 2.25, 10832.
    // 2 x 8190^2 x 9 FLOP in 0.2 ms = 6036.85 GFLOP/s, 55.7% of 10830.
    assert!(
        text.contains(
            "GPU: valid 6036.85 GFLOP/s = 55.7% of its bound 10830 GFLOP/s at 2.25 FLOP/byte"
        ),
        "{text}"
    );
    // 2 x 8192^2 x 9 FLOP in 0.2 ms = 6039.80 GFLOP/s, 55.8% of 10832.
    assert!(
        text.contains("same 6039.80 GFLOP/s = 55.8% of its bound 10832 GFLOP/s at 2.25 FLOP/byte"),
        "{text}"
    );
    assert!(!text.contains("The grids"), "{text}");
    assert!(!text.contains("CPU"), "{text}");
    // 64: 16 blocks for 132 SMs; a CPU mirror beside the GPU.
    let n = 64;
    let mut rows: Vec<_> = Kernel::ALL
        .iter()
        .map(|k| {
            row(
                format!("{}/{n}", k.symbol()),
                0.004,
                k.flop(n),
                Some(k.compulsory_bytes(n)),
                false,
            )
        })
        .collect();
    rows.push(row(
        format!("conv2d_basic_host/{n}"),
        0.04,
        Kernel::Valid.flop(n),
        None,
        true,
    ));
    let text = conv2d::size_reading(&rows, n, &info);
    // At 64 the valid kernel's intensity (2.18) differs from the same one's
    // (2.25): each figure against its own bound.
    assert!(text.contains("at 2.18 FLOP/byte"), "{text}");
    assert!(text.contains("at 2.25 FLOP/byte"), "{text}");
    assert!(
        text.contains("The grids are 16 and 16 blocks for 132 SMs"),
        "{text}"
    );
    // 31760 bytes at 4814.3 GB/s: 0.007 us, against 4.0 us measured.
    assert!(
        text.contains("took 4.0 us where the derived DRAM limit moves its 31760 compulsory bytes in 0.007 us (606x): the time is fixed cost"),
        "{text}"
    );
    // 69192 FLOP in 0.04 ms: 1.73 GFLOP/s, ten times the GPU's time.
    assert!(
        text.contains("basic 1.73 GFLOP/s; its time is 10.00x the GPU valid kernel's"),
        "{text}"
    );
    // A made-up GPU time only 7.5x the DRAM time (128: 129040 bytes, 0.027
    // us, against 0.2 us): the grid is still small, but no fixed-cost claim;
    // and a CPU faster than the GPU is said the other way round.
    let n = 128;
    let mut rows: Vec<_> = Kernel::ALL
        .iter()
        .map(|k| {
            row(
                format!("{}/{n}", k.symbol()),
                0.0002,
                k.flop(n),
                Some(k.compulsory_bytes(n)),
                false,
            )
        })
        .collect();
    rows.push(row(
        format!("conv2d_basic_host/{n}"),
        0.0001,
        Kernel::Valid.flop(n),
        None,
        true,
    ));
    let text = conv2d::size_reading(&rows, n, &info);
    assert!(text.contains("The grids are 64 and 64 blocks"), "{text}");
    assert!(text.contains("(7x)."), "{text}");
    assert!(!text.contains("fixed cost"), "{text}");
    assert!(
        text.contains("the GPU valid kernel took 2.00x its time"),
        "{text}"
    );
}

#[test]
fn conv2d_valid_reads_ntid_first_and_guards_with_two_compares() {
    // global_index_x_u32's order (the twin's prologue) and opaque_u32's
    // guard, as in the "Fast Rust kernels" chapter.
    let body = entry_body(PTX, Kernel::Valid.symbol()).unwrap();
    if let Err(e) = lab_tests::reads_block_dim_first(body) {
        panic!("{e}:\n{body}");
    }
    assert!(
        !body.contains("max.u32"),
        "the guard as two compares, not one of a max:\n{body}"
    );
}
