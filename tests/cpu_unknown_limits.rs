//! A driver that reports an attribute as 0 (SM clock, memory clock, bus
//! width; some drivers and platforms do) leaves the limits derived from it
//! unknown: every report that sets a figure against a derived limit says
//! "unknown" or "-", never "inf", "NaN" or "0.0 GB/s".

use host::bandwidth::{self, Copy, query};
use host::kernels::KernelId;

/// The bytes of the made-up copies: 256 MiB.
const TIMED_BYTES: usize = 256 << 20;
use host::gpu::DeviceInfo;
use host::lesson::Report as _;
use host::roofline::model::cost;
use host::roofline::{Kernel as RooflineKernel, Sizes as RooflineSizes};
use host::timing::Timing;

/// The synthetic H200 with every clock and the bus width reported as 0.
fn zeroed() -> DeviceInfo {
    DeviceInfo {
        sm_clock_khz: 0,
        memory_clock_khz: 0,
        memory_bus_bits: 0,
        ..lab_tests::synthetic_device(60 << 20, 132)
    }
}

/// Fails where `text` shows a figure divided by a 0 limit.
fn assert_no_broken_figure(text: &str) {
    for bad in ["inf", "NaN", " 0.0 GB/s", " 0 GB/s", " 0.0 GFLOP/s"] {
        assert!(!text.contains(bad), "{bad:?} in:\n{text}");
    }
}

fn timing(ms: f64) -> Timing {
    Timing::new(vec![ms])
}

#[test]
fn each_zero_attribute_alone_makes_its_limit_unknown() {
    let full = lab_tests::synthetic_device(60 << 20, 132);
    assert_eq!(full.derived_dram_bytes_per_s(), Some(4_814_304_000_000.0));
    assert_eq!(full.derived_fp32_flop_per_s(), Some(66_908_160_000_000.0));
    let without = |f: fn(&mut DeviceInfo)| {
        let mut info = full.clone();
        f(&mut info);
        (
            info.derived_dram_bytes_per_s(),
            info.derived_fp32_flop_per_s(),
            info.derived_ridge_flop_per_byte(),
        )
    };
    let dram = full.derived_dram_bytes_per_s();
    let fp32 = full.derived_fp32_flop_per_s();
    assert_eq!(without(|i| i.memory_clock_khz = 0), (None, fp32, None));
    assert_eq!(without(|i| i.memory_bus_bits = 0), (None, fp32, None));
    assert_eq!(without(|i| i.sm_clock_khz = 0), (dram, None, None));
    assert_eq!(without(|i| i.sms = 0), (dram, None, None));
    assert_eq!(
        full.derived_ridge_flop_per_byte(),
        Some(66_908_160_000_000.0 / 4_814_304_000_000.0)
    );
}

#[test]
fn the_harness_reading_claims_no_peak_it_does_not_know() {
    let text = host::harness::reading(false, 20, 227_401.0, None, false);
    assert!(
        text.contains(
            "its \"227401 GB/s\" cannot be set against the device's DRAM peak, unknown here (the driver reports a \
             memory clock or bus width of 0)"
        ),
        "{text}"
    );
    assert!(!text.contains("impossible"), "{text}");
    assert_no_broken_figure(&text);
}

#[test]
fn the_bandwidth_query_and_limits_say_unknown() {
    let info = zeroed();
    let q = query::DeviceQuery {
        device_count: 1,
        visible_devices_env: None,
        warp_size: 32,
        max_threads_per_block: 1024,
        max_block_dim: (1024, 1024, 64),
        max_grid_dim: (2_147_483_647, 65535, 65535),
        shared_per_block: 48 << 10,
        shared_per_block_optin: 227 << 10,
        shared_per_sm: 228 << 10,
        regs_per_block: 65536,
        max_blocks_per_sm: 32,
        constant_bytes: 64 << 10,
        copy_engines: 3,
        ecc: true,
        pci_address: "0000:41:00.0".into(),
        uses_host_page_tables: false,
    };
    let lines = query::lines(&info, &q).join("\n");
    assert!(
        lines.contains(
            "derived: DRAM unknown: the driver reports a memory clock of 0 MHz and a bus of 0 bits"
        ),
        "{lines}"
    );
    assert!(
        lines.contains(
            "derived: FP32 peak unknown: the driver reports 132 SMs at an SM clock of 0 MHz"
        ),
        "{lines}"
    );
    assert_no_broken_figure(&lines);
    // The FP32 peak known, the DRAM limit not: no ridge point.
    let half = DeviceInfo {
        sm_clock_khz: 1_980_000,
        ..zeroed()
    };
    let lines = query::lines(&half, &q).join("\n");
    assert!(
        lines.contains(
            "derived: FP32 66.9 TFLOP/s = 132 SMs x 128 lanes x 2 (an FMA) x 1980 MHz; ridge point unknown (no DRAM limit)"
        ),
        "{lines}"
    );

    // 256 MiB copies (not measurements: the wording is what is tested).
    let rows: Vec<host::lesson::Row> = Copy::ALL
        .iter()
        .zip([10.0, 5.0, 10.0, 5.0, 0.125, 0.125])
        .map(|(c, ms)| {
            host::lesson::Row::new(c.key(), c.label(), timing(ms))
                .bytes(c.counted_bytes(TIMED_BYTES) as f64)
        })
        .collect();
    let gen5 = query::PcieLink {
        gt_per_s: 32.0,
        width: 16,
    };
    for (current, max) in [(Some(gen5), Some(gen5)), (None, None)] {
        let (s, _) = bandwidth::limits_section(&rows, None, current, max, "0000:41:00.0", false);
        let text = s
            .text
            .iter()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            text.contains(
                "dtod_copy_engine 4295.0 GB/s = an unknown share of the derived DRAM limit, unknown here (the driver \
                 reports a memory clock or bus width of 0)"
            ),
            "{text}"
        );
        assert!(
            text.contains("htod_pinned 53.7 GB/s = ")
                && text.contains("an unknown share of the DRAM limit"),
            "{text}"
        );
        assert_no_broken_figure(&text);
    }
}

#[test]
fn the_conv2d_reading_has_no_bound_without_the_limits() {
    use host::conv2d::Kernel;
    let info = zeroed();
    assert_eq!(host::conv2d::roofline_bound(&info, 2.25), None);
    // The FP32 peak alone is not a bound either: the sloped roof is unknown.
    let half = DeviceInfo {
        sm_clock_khz: 1_980_000,
        ..zeroed()
    };
    assert_eq!(host::conv2d::roofline_bound(&half, 2.25), None);
    // 64: 16 blocks for 132 SMs, where the reading would set the time
    // against the DRAM limit's.
    let n = 64;
    let rows: Vec<_> = Kernel::ALL
        .iter()
        .map(|k| {
            host::lesson::Row::new(format!("{}/{n}", k.symbol()), "synthetic", timing(0.004))
                .flop(k.flop(n) as f64)
                .bytes(k.compulsory_bytes(n) as f64)
        })
        .collect();
    let text = host::conv2d::size_reading(&rows, n, &info);
    assert!(
        text.contains("valid 17.30 GFLOP/s at 2.18 FLOP/byte (no bound: the FP32 peak and the DRAM limit are unknown)"),
        "{text}"
    );
    assert!(
        text.contains("Bound = min(FP32 peak unknown, intensity x DRAM unknown)"),
        "{text}"
    );
    assert!(
        text.contains(
            "the valid kernel took 4.0 us (the derived DRAM limit is unknown, so the time is not set against the traffic's)."
        ),
        "{text}"
    );
    assert!(!text.contains("fixed cost"), "{text}");
    assert_no_broken_figure(&text);
    let text = host::conv2d::size_reading(&rows, n, &half);
    assert!(
        text.contains("(no bound: the DRAM limit is unknown)"),
        "{text}"
    );
}

#[test]
fn the_roofline_report_prints_unknown_and_a_dash() {
    let info = zeroed();
    let s = RooflineSizes::for_device(&info);
    let ms_for = |k: RooflineKernel, rate_per_s: f64| {
        let c = cost(k, &s);
        let count = if k == RooflineKernel::FmaPeak {
            c.flop
        } else {
            c.bytes
        };
        count / rate_per_s * 1e3
    };
    let measured: Vec<host::roofline::Measured> = RooflineKernel::ALL
        .iter()
        .map(|&k| host::roofline::Measured {
            kernel: k,
            shape: k.default_shape(),
            timing: timing(match k {
                RooflineKernel::FmaPeak => ms_for(k, 60_000e9),
                RooflineKernel::StreamDot => ms_for(k, 4000e9),
                _ => ms_for(k, 2000e9),
            }),
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
    let report = host::roofline::report::build(
        &info,
        s,
        context,
        &measured,
        timing(ms_for(RooflineKernel::Copy, 4000e9)),
    );
    let table = report.table();
    // The measured bandwidth ceiling, its derived limit unknown, no share.
    let copy = table
        .lines()
        .find(|l| l.contains("<- the ceiling"))
        .expect("the bandwidth ceiling's row");
    let cells: Vec<&str> = copy.split('|').map(str::trim).collect();
    assert_eq!(&cells[4..7], ["4000.0 GB/s", "unknown", "-"], "{copy}");
    let fma = table
        .lines()
        .find(|l| l.contains("60000.0 GFLOP/s"))
        .expect("the FMA ceiling's row");
    let cells: Vec<&str> = fma.split('|').map(str::trim).collect();
    assert_eq!(&cells[5..7], ["unknown", "-"], "{fma}");
    assert!(!table.contains("inf") && !table.contains("NaN"), "{table}");
    // The ceiling, the three streams measured, the seed's copy, the FMA
    // ceiling and the driver's copy.
    // No reading against an unknown limit: a dash, and no limit in the JSON.
    assert_eq!(cells[7], "-", "{fma}");
    let cells: Vec<&str> = copy.split('|').map(str::trim).collect();
    assert_eq!(cells[7], "-", "{copy}");
    for line in report.json_lines().iter().take(7) {
        assert_eq!(line["derived_limit"], serde_json::Value::Null, "{line}");
        assert_eq!(line["share_of_derived"], serde_json::Value::Null, "{line}");
        assert_eq!(line.get("limit_reading"), None, "{line}");
    }
}

#[test]
fn an_unknown_l2_still_sizes_the_bandwidth_ceiling_in_gib() {
    let info = host::gpu::DeviceInfo {
        l2_bytes: 0,
        ..lab_tests::synthetic_device(60 << 20, 132)
    };
    let s = RooflineSizes::for_device(&info);
    assert_eq!(s.stream_n4 * 16, 1 << 30);
    s.validate().unwrap();
}
