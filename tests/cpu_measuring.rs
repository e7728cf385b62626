//! The measuring chapter's (seed 002) two readings every report makes,
//! checked from synthetic timings: each rate against the limit that applies
//! to it (80% or more: close to done; 15% or less: something is wrong),
//! and the SM clock over each row's timing window (below the base clock,
//! or moved by more than the stated share), with the run's end against
//! its start.

use std::time::{Duration, Instant};

use host::clocks::{Clocks, MOVE_SHARE_PCT, Reading, Stamped, Window};
use host::gpu::DeviceInfo;
use host::lesson::{Findings, Report as _, Row, Section, SectionReport};
use host::report::{Band, CLOCK_COLUMN, DerivedLimits, VERDICT_COLUMN, verdict};
use host::timing::Timing;

fn context(info: &DeviceInfo) -> host::report::Context {
    host::report::Context::new(
        "measuring-test",
        info,
        &host::roofline::Sizes::for_device(info),
        serde_json::json!({}),
        host::timing::Plan::DEFAULT,
        "2026-11-30T00:00:00Z".into(),
    )
}

/// The synthetic H200's derived DRAM bandwidth, GB/s (5242 MHz x 5120
/// bits x 2 / 8, as `cpu_unknown_limits` checks).
const DRAM_GB_S: f64 = 4814.304;
/// Its derived FP32 peak, GFLOP/s.
const FP32_GFLOP_S: f64 = 66908.16;

#[test]
fn the_bands_are_the_seeds_and_unknown_limits_give_no_reading() {
    let band = |pct: f64| verdict(pct, Some(100.0), "L", "GB/s").unwrap().band;
    assert_eq!(band(120.0), Band::AtOrPastLimit);
    assert_eq!(band(100.0), Band::AtOrPastLimit);
    assert_eq!(band(99.9), Band::CloseToDone);
    assert_eq!(band(80.0), Band::CloseToDone);
    assert_eq!(band(79.9), Band::Between);
    // The band follows the share as printed (one decimal).
    assert_eq!(band(79.96), Band::CloseToDone);
    assert_eq!(band(79.94), Band::Between);
    assert_eq!(band(15.1), Band::Between);
    assert_eq!(band(15.0), Band::SomethingWrong);
    assert_eq!(band(0.0), Band::SomethingWrong);
    let v = verdict(2.0, Some(4.0), "the derived DRAM bandwidth", "GB/s").unwrap();
    assert_eq!(v.share_pct, 50.0);
    assert_eq!(
        v.words(),
        "50.0% of the derived DRAM bandwidth: between the bands, room left"
    );
    assert_eq!(
        verdict(3.5, Some(4.0), "X", "GB/s").unwrap().words(),
        "87.5% of X: close to done"
    );
    assert_eq!(
        verdict(0.5, Some(4.0), "X", "GB/s").unwrap().words(),
        "12.5% of X: something is wrong"
    );
    // Unknown or broken limits and figures: no reading at all.
    assert_eq!(verdict(1.0, None, "X", "GB/s"), None);
    assert_eq!(verdict(1.0, Some(0.0), "X", "GB/s"), None);
    assert_eq!(verdict(1.0, Some(f64::INFINITY), "X", "GB/s"), None);
    assert_eq!(verdict(f64::NAN, Some(4.0), "X", "GB/s"), None);
    // The JSON a row carries.
    let j = verdict(3.5, Some(4.0), "X", "GB/s").unwrap().json();
    assert_eq!(j["limit"], "X");
    assert_eq!(j["limit_value"], 4.0);
    assert_eq!(j["limit_unit"], "GB/s");
    assert_eq!(j["share_of_limit_pct"], 87.5);
    assert_eq!(j["limit_band"], "close_to_done");
    assert_eq!(j["limit_reading"], "87.5% of X: close to done");
}

#[test]
fn the_derived_limit_that_binds_is_the_larger_share() {
    let info = lab_tests::synthetic_device(60 << 20, 132);
    let limits = DerivedLimits::of(&info);
    assert_eq!(limits.dram_gb_per_s, Some(DRAM_GB_S));
    assert_eq!(limits.fp32_gflop_per_s, Some(FP32_GFLOP_S));
    // Left of the ridge point the DRAM share is the larger, right of it
    // the FP32 share.
    let left = limits
        .binding(Some(0.9 * DRAM_GB_S), Some(0.1 * FP32_GFLOP_S))
        .unwrap();
    assert_eq!(left.limit, DerivedLimits::DRAM);
    let right = limits
        .binding(Some(0.01 * DRAM_GB_S), Some(0.5 * FP32_GFLOP_S))
        .unwrap();
    assert_eq!(right.limit, DerivedLimits::FP32);
    assert_eq!(right.band, Band::Between);
    // One limit unknown: the other reads; both unknown: nothing.
    let no_dram = DerivedLimits {
        dram_gb_per_s: None,
        ..limits
    };
    assert_eq!(
        no_dram
            .binding(Some(0.9 * DRAM_GB_S), Some(0.1 * FP32_GFLOP_S))
            .unwrap()
            .limit,
        DerivedLimits::FP32
    );
    let zeroed = DeviceInfo {
        sm_clock_khz: 0,
        memory_clock_khz: 0,
        ..info
    };
    assert_eq!(
        DerivedLimits::of(&zeroed).binding(Some(1.0), Some(1.0)),
        None
    );
}

/// One 1 ms row moving `share` of the derived DRAM bandwidth.
fn dram_row(key: &str, share: f64, timing: Timing) -> Row {
    Row::new(key, key, timing).bytes(share * DRAM_GB_S * 1e9 * 1e-3)
}

fn ms1() -> Timing {
    Timing::new(vec![1.0, 1.0, 1.0])
}

fn cells<'t>(table: &'t str, key: &str) -> Vec<&'t str> {
    table
        .lines()
        .find(|l| l.starts_with(&format!("| {key} ")))
        .unwrap_or_else(|| panic!("no row {key} in:\n{table}"))
        .split('|')
        .map(str::trim)
        .collect()
}

#[test]
fn a_section_table_reads_each_row_against_its_limit() {
    let info = lab_tests::synthetic_device(60 << 20, 132);
    let mut section = Section::new("synthetic rows");
    section.rows = vec![
        dram_row("near", 0.9, ms1()),
        dram_row("far", 0.1, ms1()),
        // Compute-bound: 50% of the FP32 peak, a sliver of DRAM.
        Row::new("fma", "fma", ms1())
            .bytes(1e6)
            .flop(0.5 * FP32_GFLOP_S * 1e9 * 1e-3),
        // A host mirror, and GPU work timed by the host clock: no reading.
        dram_row("cpu", 0.9, ms1()).on_cpu(),
        dram_row("host_clocked", 0.9, ms1()).host_clocked(),
        // A row its lesson reads against another limit (50 GB/s of 63).
        Row::new("link", "link", ms1())
            .bytes(50e9 * 1e-3)
            .against_gb_per_s("the PCIe link (per direction)", Some(63.0)),
        Row::new("link_unknown", "link", ms1())
            .bytes(50e9 * 1e-3)
            .against_gb_per_s("the PCIe link (per direction)", None),
        dram_row("none", 0.9, ms1()).no_limit(),
    ];
    let report = SectionReport::new(
        context(&info),
        Findings {
            sections: vec![section],
            facts: serde_json::json!({}),
        },
    )
    .unwrap();
    let table = report.table();
    assert!(table.contains(VERDICT_COLUMN), "{table}");
    // No clock read: no clock column.
    assert!(!table.contains(CLOCK_COLUMN), "{table}");
    let reading = |key: &str| cells(&table, key)[8].to_string();
    assert_eq!(
        reading("near"),
        "90.0% of the derived DRAM bandwidth: close to done"
    );
    assert_eq!(
        reading("far"),
        "10.0% of the derived DRAM bandwidth: something is wrong"
    );
    assert_eq!(
        reading("fma"),
        "50.0% of the derived FP32 peak: between the bands, room left"
    );
    for key in ["cpu", "host_clocked", "link_unknown", "none"] {
        assert_eq!(reading(key), "-", "{key}");
    }
    assert_eq!(
        reading("link"),
        "79.4% of the PCIe link (per direction): between the bands, room left"
    );
    assert!(
        table.contains(
            "Against the limit: seed 002's rule of thumb, 80% of the limit or more is close to done, 15% or less says \
             something is wrong, and between the two the rule gives no verdict; a GPU row is read against the derived \
             limit that binds it (the derived DRAM bandwidth 4814.3 GB/s, the derived FP32 peak 66908.2 GFLOP/s, from \
             the driver's attributes) unless its reading names another; a row whose bytes per launch fit in the L2 \
             is not read against DRAM (its data can stay in the cache between launches)."
        ),
        "{table}"
    );
    let json = report.json_lines();
    let row = |key: &str| {
        json.iter()
            .find(|l| l["symbol"] == key)
            .unwrap_or_else(|| panic!("no JSON row {key}"))
            .clone()
    };
    assert_eq!(row("near")["limit"], DerivedLimits::DRAM);
    assert_eq!(row("near")["limit_band"], "close_to_done");
    assert_eq!(row("far")["limit_band"], "something_wrong");
    assert_eq!(row("fma")["limit"], DerivedLimits::FP32);
    assert_eq!(row("link")["limit"], "the PCIe link (per direction)");
    assert_eq!(row("link")["limit_value"], 63.0);
    for key in ["cpu", "host_clocked", "link_unknown", "none"] {
        assert_eq!(row(key).get("limit"), None, "{key}");
        assert_eq!(row(key).get("limit_reading"), None, "{key}");
    }
    assert_eq!(
        json[0]["context"]["derived_limits"],
        serde_json::json!({
            "dram_gb_per_s": DRAM_GB_S,
            "fp32_gflop_per_s": FP32_GFLOP_S,
            "l2_bytes": (60u64 << 20) as f64
        })
    );

    // A driver attribute of 0: no verdict column, no footnote, no keys.
    let zeroed = DeviceInfo {
        memory_clock_khz: 0,
        sm_clock_khz: 0,
        ..info
    };
    let mut section = Section::new("synthetic rows");
    section.rows = vec![dram_row("near", 0.9, ms1())];
    let report = SectionReport::new(
        context(&zeroed),
        Findings {
            sections: vec![section],
            facts: serde_json::json!({}),
        },
    )
    .unwrap();
    let table = report.table();
    assert!(!table.contains(VERDICT_COLUMN), "{table}");
    assert!(!table.contains("Against the limit"), "{table}");
    assert_eq!(report.json_lines()[0].get("limit"), None);
}

fn reading(sm: u32) -> Reading {
    Reading {
        sm_mhz: sm,
        memory_mhz: 3201,
        temperature_c: None,
        power_w: None,
    }
}

/// Readings at `ms` after `t0`.
fn stamped(t0: Instant, at: &[(u64, u32)]) -> Vec<Stamped> {
    at.iter()
        .map(|&(ms, sm)| Stamped {
            at: t0 + Duration::from_millis(ms),
            reading: reading(sm),
        })
        .collect()
}

fn window(t0: Instant, from_ms: u64, to_ms: u64) -> Window {
    Window {
        start: t0 + Duration::from_millis(from_ms),
        end: t0 + Duration::from_millis(to_ms),
    }
}

#[test]
fn the_share_a_clock_may_move_is_the_baselines_floor() {
    assert_eq!(MOVE_SHARE_PCT, host::record::RUN_TO_RUN_FLOOR_PCT);
    assert_eq!(
        host::clocks::apart_pct(1980.0, 1755.0),
        host::clocks::apart_pct(1755.0, 1980.0)
    );
    assert!((host::clocks::apart_pct(1755.0, 1980.0) - 12.820_512_820_512_8).abs() < 1e-9);
}

#[test]
fn rows_timed_under_a_moving_or_low_clock_are_flagged() {
    let t0 = Instant::now();
    // Row "steady": two readings at 1980 in 0..100 ms. Row "throttled":
    // 1980 then 1755 in 200..300 ms. Row "short": a window no reading fell
    // in. The run ends 12.8% below where it started.
    let readings = stamped(t0, &[(10, 1980), (50, 1980), (210, 1980), (250, 1755)]);
    let method = host::clocks::nvml_method();
    let clocks = Clocks::from_stamped(&method, &readings, Ok(1980));
    let steady = clocks.while_timed(Some(&window(t0, 0, 100))).unwrap();
    assert_eq!(steady.samples, 2);
    assert_eq!(steady.below_base, Some(false));
    assert_eq!(steady.flag(), None);
    let throttled = clocks.while_timed(Some(&window(t0, 200, 300))).unwrap();
    assert_eq!(
        (throttled.sm_min_mhz, throttled.sm_max_mhz),
        (Some(1755), Some(1980))
    );
    assert_eq!(throttled.below_base, Some(true));
    assert_eq!(
        throttled.flag().unwrap(),
        "SM below the base clock while timed (1755 < 1980 MHz); SM clock moved 12.8% while timed (1755 to 1980 MHz, \
         past the 3% share)"
    );
    let short = clocks.while_timed(Some(&window(t0, 400, 405))).unwrap();
    assert_eq!((short.samples, short.flag()), (0, None));
    // No window (a CPU row, a synthetic timing): nothing to say.
    assert_eq!(clocks.while_timed(None), None);
    assert_eq!(clocks.end_differs_from_start, Some(true));
    assert_eq!(clocks.readings_below_base, Some(1));
    assert_eq!(
        clocks.line(),
        "Clocks while timing (read while timing: NVML every 10 ms while a kernel was timed, 4 samples): SM 1980 MHz \
         median (1755 to 1980), memory 3201 MHz median (3201 to 3201); SM at the end 1755 MHz against 1980 at the \
         start: differs by 12.8%, past the 3% share; base clock 1980 MHz (NVML's default applications clock): 1 of 4 \
         readings below it (flagged on the rows timed then)"
    );

    // The table and the JSON of a section report flag the throttled row
    // only.
    let info = lab_tests::synthetic_device(60 << 20, 132);
    let mut c = context(&info);
    c.clocks = clocks.clone();
    let mut section = Section::new("clocked rows");
    section.rows = vec![
        dram_row(
            "steady",
            0.9,
            Timing::timed(vec![1.0; 3], window(t0, 0, 100)),
        ),
        dram_row(
            "throttled",
            0.9,
            Timing::timed(vec![1.0; 3], window(t0, 200, 300)),
        ),
        dram_row(
            "short",
            0.9,
            Timing::timed(vec![1.0; 3], window(t0, 400, 405)),
        ),
        dram_row("cpu", 0.9, ms1()).on_cpu(),
    ];
    let report = SectionReport::new(
        c,
        Findings {
            sections: vec![section],
            facts: serde_json::json!({}),
        },
    )
    .unwrap();
    let table = report.table();
    assert!(table.contains(CLOCK_COLUMN), "{table}");
    assert_eq!(cells(&table, "steady")[9], "-");
    assert_eq!(cells(&table, "short")[9], "-");
    assert_eq!(cells(&table, "cpu")[9], "-");
    assert_eq!(
        cells(&table, "throttled")[9],
        "SM below the base clock while timed (1755 < 1980 MHz); SM clock moved 12.8% while timed (1755 to 1980 MHz, \
         past the 3% share)"
    );
    let json = report.json_lines();
    let row = |key: &str| json.iter().find(|l| l["symbol"] == key).unwrap().clone();
    assert_eq!(
        row("steady")["clocks_while_timed"]["flags"],
        serde_json::json!([])
    );
    assert_eq!(row("steady")["clocks_while_timed"]["samples"], 2);
    assert_eq!(row("throttled")["clocks_while_timed"]["below_base"], true);
    assert_eq!(
        row("throttled")["clocks_while_timed"]["flags"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(row("short")["clocks_while_timed"]["samples"], 0);
    assert_eq!(row("cpu").get("clocks_while_timed"), None);
    let ctx = &json[0]["context"]["clocks"];
    assert_eq!(ctx["base_sm_mhz"], 1980);
    assert_eq!(ctx["sm_start_mhz"], 1980);
    assert_eq!(ctx["sm_end_mhz"], 1755);
    assert_eq!(ctx["end_differs_from_start"], true);
    assert_eq!(ctx["move_share_pct"], 3.0);
    assert_eq!(ctx.get("stamped"), None);

    // Nothing flagged anywhere: no clock column at all.
    let calm = Clocks::from_stamped(&method, &stamped(t0, &[(10, 1980), (50, 1965)]), Ok(1965));
    assert_eq!(calm.end_differs_from_start, Some(false));
    assert!(
        calm.line().ends_with(
            "; SM at the end 1965 MHz against 1980 at the start: within the 3% share; base clock 1965 MHz (NVML's \
             default applications clock): no reading below it"
        ),
        "{}",
        calm.line()
    );
    let mut c = context(&info);
    c.clocks = calm;
    let mut section = Section::new("calm");
    section.rows = vec![dram_row(
        "steady",
        0.9,
        Timing::timed(vec![1.0; 3], window(t0, 0, 100)),
    )];
    let report = SectionReport::new(
        c,
        Findings {
            sections: vec![section],
            facts: serde_json::json!({}),
        },
    )
    .unwrap();
    assert!(!report.table().contains(CLOCK_COLUMN));
}

#[test]
fn an_unknown_base_clock_skips_that_test_and_says_why() {
    let t0 = Instant::now();
    let why = "NVML gave no default applications clock: Not Supported";
    let clocks = Clocks::from_stamped(
        &host::clocks::nvml_method(),
        &stamped(t0, &[(10, 1980), (50, 1755)]),
        Err(why.to_string()),
    );
    let w = clocks.while_timed(Some(&window(t0, 0, 100))).unwrap();
    assert_eq!(w.below_base, None);
    // The move is still flagged; the base clock is not guessed.
    assert_eq!(
        w.flag().unwrap(),
        "SM clock moved 12.8% while timed (1755 to 1980 MHz, past the 3% share)"
    );
    assert_eq!(clocks.readings_below_base, None);
    assert!(
        clocks.line().ends_with(
            "; base clock unknown (NVML gave no default applications clock: Not Supported)"
        ),
        "{}",
        clocks.line()
    );
    // Clocks never read: no row says anything of them.
    assert_eq!(
        Clocks::not_read().while_timed(Some(&window(t0, 0, 100))),
        None
    );
}

#[test]
fn the_roofline_reads_kernels_against_the_ceiling_that_binds_them() {
    use host::kernels::KernelId;
    use host::roofline::model::cost;
    use host::roofline::{Kernel, Sizes};
    let info = lab_tests::synthetic_device(60 << 20, 132);
    let s = Sizes::for_device(&info);
    // Every stream and copy at 4000 GB/s (the bandwidth ceiling), the FMA
    // kernel at 60000 GFLOP/s (the FMA ceiling), every placed kernel at
    // 2000 GB/s over its compulsory bytes.
    let ms_for = |k: Kernel, rate_per_s: f64| {
        let c = cost(k, &s);
        let count = if k == Kernel::FmaPeak {
            c.flop
        } else {
            c.bytes
        };
        count / rate_per_s * 1e3
    };
    let measured: Vec<host::roofline::Measured> = Kernel::ALL
        .iter()
        .map(|&k| host::roofline::Measured {
            kernel: k,
            shape: k.default_shape(),
            timing: Timing::new(vec![match k {
                Kernel::FmaPeak => ms_for(k, 60_000e9),
                k if k.is_stream() => ms_for(k, 4000e9),
                _ => ms_for(k, 2000e9),
            }]),
        })
        .collect();
    let report = host::roofline::report::build(
        &info,
        s,
        context(&info),
        &measured,
        Timing::new(vec![ms_for(Kernel::Copy, 4000e9)]),
    );
    let table = report.table();
    let ceiling = table
        .lines()
        .find(|l| l.contains("<- the ceiling"))
        .expect("the bandwidth ceiling's row");
    let c: Vec<&str> = ceiling.split('|').map(str::trim).collect();
    assert_eq!(
        c[7],
        format!(
            "{:.1}% of the derived DRAM bandwidth: close to done",
            100.0 * 4000.0 / DRAM_GB_S
        )
    );
    let fma = table
        .lines()
        .find(|l| l.contains("60000.0 GFLOP/s"))
        .expect("the FMA ceiling's row");
    let c: Vec<&str> = fma.split('|').map(str::trim).collect();
    assert_eq!(
        c[7],
        format!(
            "{:.1}% of the derived FP32 peak: close to done",
            100.0 * 60000.0 / FP32_GFLOP_S
        )
    );
    // A memory-bound kernel at 2000 GB/s: 50% of the measured ceiling.
    let add = table
        .lines()
        .find(|l| l.starts_with(&format!("| {} ", Kernel::VectorAdd.label())))
        .expect("vector_add's row");
    let c: Vec<&str> = add.split('|').map(str::trim).collect();
    assert_eq!(
        c[10],
        "50.0% of the measured bandwidth ceiling: between the bands, room left"
    );
    let json = report.json_lines();
    let add = json
        .iter()
        .find(|l| {
            l["symbol"] == Kernel::VectorAdd.symbol() && l["variant"] == Kernel::VectorAdd.label()
        })
        .unwrap();
    assert_eq!(add["limit"], "the measured bandwidth ceiling");
    assert_eq!(add["limit_band"], "between");
    assert!(
        (add["share_of_limit_pct"].as_f64().unwrap() - 50.0).abs() < 1e-6,
        "{add}"
    );
    assert_eq!(json[0]["limit"], "the derived DRAM bandwidth");
    assert_eq!(json[0]["limit_band"], "close_to_done");
}

#[test]
fn a_row_whose_bytes_fit_in_the_l2_is_not_read_against_dram() {
    let info = lab_tests::synthetic_device(60 << 20, 132);
    let limits = DerivedLimits::of(&info);
    assert_eq!(limits.l2_bytes, Some((60u64 << 20) as f64));
    // 24 MB a launch in 0.01 ms: 2400 GB/s, half the derived DRAM rate, but
    // the bytes fit in a 60 MiB L2, so DRAM is not their limit.
    let small = Row::new("small", "small", Timing::new(vec![0.01])).bytes(24e6);
    assert_eq!(small.verdict(&limits), None);
    assert!(limits.fits_in_l2(Some(24e6)));
    // The same rate over 4x the L2 is read against DRAM.
    let big_bytes = 4.0 * (60u64 << 20) as f64;
    let big = Row::new("big", "big", Timing::new(vec![big_bytes / 2400e6])).bytes(big_bytes);
    let v = big.verdict(&limits).unwrap();
    assert_eq!(v.limit, DerivedLimits::DRAM);
    // Where the driver reports no L2, nothing is known to fit: read it.
    let no_l2 = DerivedLimits {
        l2_bytes: None,
        ..limits
    };
    assert!(!no_l2.fits_in_l2(Some(24e6)));
    assert_eq!(small.verdict(&no_l2).unwrap().limit, DerivedLimits::DRAM);
}

/// A comparison's trials alternate which side goes first (Rust, C; then C,
/// Rust; ...), and each trial's times land on their own side.
#[test]
fn a_comparison_alternates_the_side_that_goes_first() {
    use host::compare::{Side, interleave};
    let mut order = Vec::new();
    let pair = interleave(4, |side| {
        order.push(side);
        // Rust takes 1 ms a launch, C 2: a swapped slot would show.
        Ok(Timing::new(vec![if side == Side::Rust {
            1.0
        } else {
            2.0
        }]))
    })
    .expect("no launch to fail");
    use Side::{CudaC, Rust};
    assert_eq!(order, [Rust, CudaC, CudaC, Rust, Rust, CudaC, CudaC, Rust]);
    assert_eq!(pair.first, [Rust, CudaC, Rust, CudaC]);
    assert_eq!(pair.rust_ms, [1.0; 4]);
    assert_eq!(pair.c_ms, [2.0; 4]);
    assert_eq!(pair.ratio(), 0.5);
}

/// A comparison keeps when each side's batches of each trial ran, and reads
/// the run's SM clock readings inside them: per trial in the JSON, pooled per
/// side in the words under the table, where a row is named. A row whose
/// median is past the minimum effect while one trial is inside it is named
/// too, with how many trials are past it on the median's side.
#[test]
fn a_comparison_reads_the_clock_each_side_met_in_its_trials() {
    use host::compare::{
        Agreement, ComparedKernel, Comparison, FunctionStats, PairTiming, Side, interleave,
    };
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    // Trial j's first side runs from 40j to 40j + 15 ms, its second from
    // 40j + 20 to 40j + 35: two readings each, 10 ms apart.
    let timed = |rust_ms: [f64; 4]| {
        let mut calls = 0u64;
        interleave(4, |side| {
            let start = 20 * calls;
            calls += 1;
            let ms = match side {
                Side::CudaC => 1.0,
                Side::Rust => rust_ms[(start / 40) as usize],
            };
            let window = Window {
                start: at(start),
                end: at(start + 15),
            };
            Ok(Timing::timed(vec![ms], window))
        })
        .expect("no launch to fail")
    };
    // Readings every 10 ms: 1980 MHz inside Rust's batches, 1900 inside C's
    // (the order alternates: Rust, C; C, Rust; ...).
    let rust_at = |ms: u64| {
        let (trial, slot) = (ms / 40, (ms % 40) / 20);
        (slot == 0) == (trial % 2 == 0)
    };
    let stamped: Vec<Stamped> = (0..16)
        .map(|i| Stamped {
            at: at(10 * i),
            reading: Reading {
                sm_mhz: if rust_at(10 * i) { 1980 } else { 1900 },
                memory_mhz: 3201,
                temperature_c: Some(50),
                power_w: Some(450.0),
            },
        })
        .collect();
    let comparison = |timing: PairTiming, clocks: Clocks| {
        let mut context = context(&lab_tests::synthetic_device(60 << 20, 132));
        context.clocks = clocks;
        let stats = FunctionStats {
            registers: 126,
            shared_bytes: 0,
            local_bytes: 0,
        };
        Comparison {
            notes: Vec::new(),
            context,
            nvrtc: "13.0".into(),
            nvrtc_library: "libnvrtc.so".into(),
            trials: 4,
            kernels: vec![ComparedKernel {
                label: "gemm_bf16_mma",
                symbol: "gemm_bf16_mma",
                timing,
                rust: stats,
                c: stats,
                rust_mix: Default::default(),
                c_mix: Default::default(),
                agreement: Agreement::Identical,
                sass: None,
            }],
        }
    };
    let read = || Clocks::from_stamped("test reader", &stamped, Ok(1980));

    // Rust 1.003 of C in the first trial, 1.02 after: parity, the median past.
    let drifting = comparison(timed([1.003, 1.02, 1.02, 1.02]), read());
    let words = drifting.verdicts();
    assert!(
        words.contains(
            "gemm_bf16_mma: Rust/C 1.020 (1.003-1.020), parity, though the median is past 1 ± 0.005 (3 of 4 \
             trials are, on its side). Registers 126/126, local bytes 0/0. SM clock while its trials were timed: \
             Rust 1980 MHz (median of 8 readings); CUDA C 1900 MHz (median of 8 readings)."
        ),
        "{words}"
    );
    let row = &drifting.json_lines()[0];
    for i in 0..4 {
        let trial = |side: &str| row["trial_clocks"][side][i].clone();
        assert_eq!(trial("rust")["samples"], 2);
        assert_eq!(trial("rust")["sm_mhz"]["median"], 1980.0);
        assert_eq!(trial("c")["sm_mhz"]["median"], 1900.0);
    }

    // Past the effect on both sides: only the median's side is counted.
    let both = comparison(timed([0.98, 1.02, 1.03, 1.02]), read());
    assert!(
        both.verdicts().contains(
            "parity, though the median is past 1 ± 0.005 (3 of 4 trials are, on its side)"
        ),
        "{}",
        both.verdicts()
    );

    // Slower in every trial: the verdict as before, with the clocks.
    let slower = comparison(timed([1.02; 4]), read());
    assert!(
        slower.verdicts().contains(
            "gemm_bf16_mma: Rust/C 1.020 (1.020-1.020), slower. Registers 126/126, local bytes 0/0. SM clock"
        ),
        "{}",
        slower.verdicts()
    );

    // Rust's batches between two readings: that side says it has none.
    let c_only: Vec<Stamped> = stamped
        .iter()
        .filter(|s| !rust_at(s.at.duration_since(t0).as_millis() as u64))
        .copied()
        .collect();
    let half = comparison(
        timed([1.02; 4]),
        Clocks::from_stamped("test reader", &c_only, Ok(1980)),
    );
    assert!(
        half.verdicts().contains(
            "SM clock while its trials were timed: Rust none (its batches were each shorter than the 10 ms \
             between readings); CUDA C 1900 MHz (median of 8 readings)."
        ),
        "{}",
        half.verdicts()
    );

    // Clocks not read: no sentence, and every trial's clock null.
    let unread = comparison(timed([1.02; 4]), Clocks::not_read());
    assert!(
        !unread.verdicts().contains("SM clock"),
        "{}",
        unread.verdicts()
    );
    assert_eq!(
        unread.json_lines()[0]["trial_clocks"]["rust"][0],
        serde_json::Value::Null
    );

    // At parity with the median inside the effect: not named.
    let level = comparison(timed([1.001, 1.002, 1.0, 0.999]), read());
    assert!(
        !level.verdicts().contains("gemm_bf16_mma:"),
        "{}",
        level.verdicts()
    );
}
