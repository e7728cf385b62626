//! CPU-only tests of the fusion lesson: the reference on hand-checked
//! values, the byte model, the launch shapes, and the PTX (one entry per
//! width, the stages' arithmetic as FMAs, the twins compiling with NVRTC).

use host::fusion::{Kernel, blocks_for, launch_config, reference};
use host::kernels::KernelId;
use host::ptx::{PTX, entries, entry_body};
use kernels_gpu::fusion::*;

#[test]
fn the_reference_on_hand_checked_values() {
    // x = 1/6: stage 1 gives 0, GELU(0) = 0, + r, clamped: r itself.
    assert!((reference::chain(1.0 / 6.0, 0.25) - 0.25).abs() < 1e-7);
    // A large input clamps at HI: x = 4 gives 5.75, GELU(5.75) ~ 5.75.
    assert_eq!(reference::chain(4.0, 0.0), 3.0);
    // A very negative one: x = -4 gives -6.25, GELU(-6.25) ~ -0 (tanh ~ -1),
    // so the result is the residual: -0.4 stays (above LO).
    assert!((reference::chain(-4.0, -0.4) - -0.4).abs() < 1e-6);
    // GELU(1) = 0.5 (1 + tanh(0.79788456 * 1.044715)) = 0.8411920...
    let one = (1.0 - BETA) / GAMMA;
    assert!(
        (reference::chain(one, 0.0) - 0.841_192).abs() < 2e-6,
        "{}",
        reference::chain(one, 0.0)
    );
}

#[test]
fn the_tolerance_check_names_the_first_bad_index() {
    use host::check::{Value, first_mismatch};
    let want = [1.0f64, 2.0, 0.0];
    let tol = host::fusion::TOLERANCE;
    assert_eq!(
        first_mismatch(&[1.0, 2.000_01, 0.000_000_5], &want, tol),
        None
    );
    let m = first_mismatch(&[1.0, 2.001, 0.0], &want, tol).unwrap();
    assert_eq!((m.index, m.got, m.want), (1, 2.001, Value::F64(2.0)));
    assert!(
        m.to_string().ends_with("(tolerance 1e-6 + 1e-5 x |want|)"),
        "{m}"
    );
    assert!(first_mismatch(&[f32::NAN, 2.0, 0.0], &want, tol).is_some());
}

#[test]
fn the_byte_model_is_36_against_12() {
    assert_eq!(STAGED_FLOATS * 4.0, 36.0);
    assert_eq!(FUSED_FLOATS * 4.0, 12.0);
    assert_eq!(STAGE_FLOATS.iter().sum::<f64>(), STAGED_FLOATS);
    assert_eq!(Kernel::AddResidual.floats(), 3.0);
    assert_eq!(Kernel::Wide(8).floats(), FUSED_FLOATS);
}

#[test]
fn launch_shapes_cover_n_at_every_width() {
    for &w in WIDTHS {
        let c = launch_config(Kernel::Wide(w), CHECK_ELEMS);
        assert!(c.grid_dim.0 as usize * 256 * w >= CHECK_ELEMS, "width {w}");
        assert!(
            (c.grid_dim.0 as usize - 1) * 256 * w < CHECK_ELEMS,
            "width {w}: a block too many"
        );
    }
    assert_eq!(blocks_for(SEED_ELEMS, 1), 65_536);
    assert_eq!(blocks_for(SEED_ELEMS, 32), 2048);
}

#[test]
fn the_ptx_has_one_entry_per_width_and_every_kernel() {
    let found = entries(PTX);
    for &k in Kernel::ALL {
        assert!(found.contains(&k.symbol()), "missing {}", k.symbol());
    }
    let widths = found
        .iter()
        .filter(|e| e.starts_with("chain_fused_wide_"))
        .count();
    assert_eq!(widths, WIDTHS.len());
}

/// Each wide kernel's PTX has all W copies written out
/// (`device::unroll::unrolled`), with the twin's counts: 2W read-only loads,
/// W stores and 8W FMAs (the 8 of `chain_fused`, per element); no branch
/// (the guards are predicated in the PTX itself: `load_readonly_if`,
/// `store_if`; the twin's PTX branches and ptxas predicates it) and nothing
/// in local memory.
#[test]
fn each_wide_kernel_is_straight_line_code_over_registers() {
    let per_element = host::ptx::PtxMix::of(entry_body(PTX, "chain_fused_wide_1").unwrap());
    assert_eq!(per_element.fma_f32, 8, "{per_element:?}");
    for &w in WIDTHS {
        let name = format!("chain_fused_wide_{w}");
        let body = entry_body(PTX, &name).unwrap();
        let mix = host::ptx::PtxMix::of(body);
        let want: std::collections::BTreeMap<String, usize> = [
            ("ld.global.nc 32b".to_string(), 2 * w),
            ("st.global 32b".to_string(), w),
        ]
        .into();
        assert_eq!(mix.accesses, want, "{name}: {mix:?}");
        assert_eq!((mix.fma_f32, mix.branches), (8 * w, 0), "{name}: {mix:?}");
        assert!(
            !body.contains(".local"),
            "{name} keeps an array in local memory"
        );
    }
}

#[test]
fn the_stages_use_fma_the_fast_units_and_the_read_only_path() {
    let body = |k: Kernel| entry_body(PTX, k.symbol()).unwrap();
    assert!(body(Kernel::ScaleBias).contains("fma.rn.f32"));
    let gelu = body(Kernel::Gelu);
    for op in [
        "ex2.approx.ftz.f32",
        "rcp.approx.ftz.f32",
        "fma.rn.f32",
        "ld.global.nc",
    ] {
        assert!(gelu.contains(op), "apply_gelu lacks {op}");
    }
    // The tanh is branch-free: the stage's only branch is its bounds guard.
    assert!(gelu.matches("bra").count() <= 2, "{gelu}");
    assert!(!gelu.contains(".local"));
    assert!(body(Kernel::Fused).contains("ld.global.nc"));
}

/// A fusion report from invented times (not measurements: the part-3
/// sentence's arithmetic and wording are what is tested).
fn synthetic_report(smallest_staged_ms: f64) -> String {
    use host::lesson::Report as _;
    let t = |ms: f64| host::timing::Timing::new(vec![ms]);
    let info = lab_tests::profile("H200").info();
    let sizes = host::fusion::Sizes::new(&info, false);
    let batch = sizes.launches_per_batch as f64;
    let measured = host::fusion::Measured {
        sizes: sizes.clone(),
        clamped_pct: 22.8,
        // 3.2 us an empty one-block launch, 160 us over the full grid.
        empty_small: t(3.2e-3 * batch),
        empty_full: t(160e-3 * batch),
        copy: t(0.2),
        stages: [t(0.2), t(0.21), t(0.24), t(0.2)],
        staged: t(0.86),
        fused: t(0.245),
        differing: (0, 0.0),
        sweep: vec![
            (1024, t(smallest_staged_ms), t(0.0034)),
            (sizes.elems, t(0.86), t(0.245)),
        ],
        wide: Vec::new(),
    };
    let context = host::report::Context::new(
        "fusion",
        &info,
        &sizes,
        serde_json::json!({"all": 256}),
        host::timing::Plan::DEFAULT,
        "2026-11-30T00:00:00Z".into(),
    );
    host::fusion::report::Report::new(&info, context, measured).table()
}

#[test]
fn the_sweep_reading_names_the_launch_it_approaches_from_the_data() {
    // 4 launches of 3.22 us: within 25% of the one-block empty launch.
    let near = synthetic_report(4.0 * 3.22e-3);
    assert!(
        near.contains("At n = 1024 (4 blocks a launch) it is 3.220 us, within 25% of part 1's empty launch of one block (3.200 us)"),
        "{near}"
    );
    // The reading names only the launch it approaches, not the whole
    // grid's cost (160 us, which part 1's table does list).
    let reading = near
        .lines()
        .find(|l| l.contains("At n = 1024"))
        .expect("a sweep reading");
    assert!(
        !reading.contains("160.000") && !reading.contains("chain's whole grid"),
        "{reading}"
    );
    // 4 launches of 20 us: neither, so both figures are given and nothing is
    // called launch-bound.
    let far = synthetic_report(4.0 * 20e-3);
    assert!(
        far.contains("it is 20.000 us, against part 1's 3.200 us"),
        "{far}"
    );
    assert!(
        far.contains("160.000 us over the chain's whole grid"),
        "{far}"
    );
    assert!(!far.contains("launching is all"), "{far}");
}

/// Part 3's seed-size row timed at `staged_ms` and `fused_ms` (invented
/// times), the run otherwise as [`synthetic_report`]'s, with a profile
/// whose last launches over the seed's grid moved `stage_mb` MB each
/// (four stages) and `fused_mb` MB (chain_fused): invented counts in the
/// CSV shape `ncu --csv --print-units base` writes.
fn seed_report(
    staged_ms: f64,
    fused_ms: f64,
    stage_mb: f64,
    fused_mb: f64,
) -> host::fusion::report::Report {
    use host::fusion::{Measured, Sizes};
    let t = |ms: f64| host::timing::Timing::new(vec![ms]);
    let info = lab_tests::profile("H200").info();
    let sizes = Sizes::new(&info, false);
    let seed = SEED_ELEMS;
    let measured = Measured {
        sizes: sizes.clone(),
        clamped_pct: 22.8,
        empty_small: t(3.2),
        empty_full: t(160.0),
        copy: t(0.2),
        stages: [t(0.2), t(0.21), t(0.24), t(0.2)],
        staged: t(0.86),
        fused: t(0.245),
        differing: (0, 0.0),
        sweep: vec![
            (1024, t(0.0128), t(0.0034)),
            (seed, t(staged_ms), t(fused_ms)),
        ],
        wide: Vec::new(),
    };
    let context = host::report::Context::new(
        "fusion",
        &info,
        &sizes,
        serde_json::json!({"all": 256}),
        host::timing::Plan::DEFAULT,
        "2026-11-30T00:00:00Z".into(),
    );
    let mut csv = String::from(
        "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\
         \"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n",
    );
    let mut id = 0;
    let mut launch = |k: Kernel, blocks: u32, mb: f64| {
        csv += &format!(
            "\"{id}\",\"1\",\"lab\",\"h\",\"{}\",\"1\",\"13\",\"(256, 1, 1)\",\"({blocks}, 1, 1)\",\"0\",\"9.0\",\
             \"Command line profiler metrics\",\"dram__bytes.sum\",\"Mbyte\",\"{mb}\"\n",
            k.symbol()
        );
        id += 1;
    };
    // The rows at the lesson's size first (other byte counts, which the
    // reading must not take), then the seed's pair twice, the first run of
    // each with other counts too.
    for k in Kernel::STAGES.into_iter().chain([Kernel::Fused]) {
        launch(k, blocks_for(sizes.elems, 1), 999.0);
    }
    for mb in [1.0, stage_mb] {
        for k in Kernel::STAGES {
            launch(k, blocks_for(seed, 1), mb);
        }
    }
    for mb in [1.0, fused_mb] {
        launch(Kernel::Fused, blocks_for(seed, 1), mb);
    }
    let profile =
        host::ncu::Profile::parse(&csv, host::ncu::CacheControl::AsLeft).expect("the CSV reads");
    let mut report = host::fusion::report::Report::new(&info, context, measured);
    host::lesson::Report::merge_counters(&mut report, &profile);
    report
}

#[test]
fn measured_dram_near_the_compulsory_ratio_under_a_larger_time_ratio_is_a_launch_effect() {
    use host::fusion::report::{Gap, seed_counters};
    use host::lesson::Report as _;
    // 4 x 50 MB against 67 MB: 2.99x the bytes; 3.51x the time.
    let r = seed_report(0.2213, 0.0631, 50.0, 67.0);
    let seed = seed_counters(&r.measured, r.counters.as_ref().unwrap()).unwrap();
    assert_eq!(seed.staged_dram_bytes, 200e6);
    assert_eq!(seed.fused_dram_bytes, 67e6);
    assert_eq!(seed.gap(), Gap::LaunchAndOccupancy);
    let table = r.table();
    assert!(
        table
            .contains("a DRAM ratio of 2.99 against the compulsory 3.00, and a time ratio of 3.51"),
        "{table}"
    );
    assert!(table.contains("bytes do not explain the gap"), "{table}");
    assert!(table.contains("launch and occupancy effect"), "{table}");
    // 0.2213 - 0.0631 x 200 / 67 ms beyond the bytes; 3 x 3.2 us launches.
    assert!(
        table.contains("takes 0.0329 ms beyond its DRAM bytes at chain_fused's DRAM rate, of which its three extra launches at part 1's empty-launch cost are 0.0096 ms"),
        "{table}"
    );
    let lines = r.json_lines();
    let row = lines
        .iter()
        .find(|l| l["variant"] == "staged vs fused, measured DRAM")
        .expect("a measured-DRAM row");
    assert_eq!(row["gap"], "LaunchAndOccupancy");
    assert!(row.get("symbol").is_none());
}

#[test]
fn measured_dram_that_matches_the_time_ratio_is_bytes_and_away_from_three_a_cache_effect() {
    use host::fusion::report::{Gap, seed_counters};
    use host::lesson::Report as _;
    // 4 x 59 MB against 67 MB: 3.52x the bytes for 3.51x the time, past
    // the compulsory 3.00 by more than 10%: a cache effect.
    let r = seed_report(0.2213, 0.0631, 59.0, 67.0);
    let seed = seed_counters(&r.measured, r.counters.as_ref().unwrap()).unwrap();
    assert_eq!(seed.gap(), Gap::Bytes);
    let table = r.table();
    assert!(
        table.contains("the gap is bytes, and not the compulsory ones"),
        "{table}"
    );
    assert!(table.contains("(a cache effect)"), "{table}");
    // 3.00x the bytes for 3.05x the time: bytes, the compulsory ones.
    let r = seed_report(0.3050, 0.1, 50.25, 67.0);
    assert!(
        r.table()
            .contains("near the compulsory one: the gap is the compulsory bytes")
    );
}

#[test]
fn measured_dram_past_the_time_ratio_says_the_bytes_overstate_it() {
    use host::fusion::report::{Gap, seed_counters};
    use host::lesson::Report as _;
    // 3.00x the bytes, 2.2x the time.
    let r = seed_report(0.22, 0.1, 50.25, 67.0);
    let seed = seed_counters(&r.measured, r.counters.as_ref().unwrap()).unwrap();
    assert_eq!(seed.gap(), Gap::FasterThanBytes);
    assert!(r.table().contains("the bytes overstate the gap"));
}

#[test]
fn without_the_seed_launches_the_reading_says_why() {
    use host::lesson::Report as _;
    let mut r = seed_report(0.2213, 0.0631, 50.0, 67.0);
    // A profile without the seed's grid (made by another program).
    let other = host::ncu::Profile::parse(
        "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\
         \"0\",\"chain_fused\",\"dram__bytes.sum\",\"byte\",\"1\"\n",
        host::ncu::CacheControl::AsLeft,
    )
    .unwrap();
    r.merge_counters(&other);
    let table = r.table();
    assert!(
        table.contains("No measured-DRAM reading of staged against fused: the profile has no DRAM bytes for apply_scale_bias over 65536 blocks"),
        "{table}"
    );
}
