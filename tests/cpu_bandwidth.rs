//! CPU-only tests of the bandwidth lesson: the byte-counting rule, the
//! source pattern (never the poison byte), the copy kernel's launch shape
//! and PTX (one 16-byte read-only load and one 16-byte store), the link
//! arithmetic from sysfs's text, the device-query lines on a synthetic
//! device (the device count among them), the seed's orders-of-magnitude
//! claim read from synthetic rows, and the CUDA C twin compiling with
//! NVRTC.

use host::bandwidth::query::{self, DeviceQuery, PcieLink, parse_link};
use host::bandwidth::{self, COPY_KERNEL, Copy, copy_launch_config, pattern, pattern_bytes};
use host::ptx::{PTX, PtxMix, entries, entry_body};
use kernels_gpu::bandwidth::*;
use lab_tests::{profile, synthetic_device};

/// The timed size on an H200 (60 MiB L2): 64 MiB doubled to 256 MiB.
const TIMED_BYTES: usize = 256 << 20;

#[test]
fn bytes_are_counted_the_way_each_row_says() {
    let n = TIMED_BYTES;
    for c in [
        Copy::HtodPageable,
        Copy::HtodPinned,
        Copy::DtohPageable,
        Copy::DtohPinned,
    ] {
        assert_eq!(c.counted_bytes(n), n as u64, "{c:?} crosses the link once");
        assert!(!c.on_device());
    }
    for c in [Copy::DtodEngine, Copy::DtodKernel] {
        assert_eq!(
            c.counted_bytes(n),
            2 * n as u64,
            "{c:?} reads and writes DRAM"
        );
    }
    assert_eq!(Copy::DtodKernel.key(), COPY_KERNEL);
    let keys: std::collections::BTreeSet<&str> = Copy::ALL.iter().map(|c| c.key()).collect();
    assert_eq!(keys.len(), Copy::ALL.len(), "row keys are unique");
}

#[test]
fn the_pattern_never_holds_the_poison_byte_and_varies() {
    let bytes = pattern_bytes(1 << 16);
    assert!(bytes.iter().all(|&b| b != 0xFF));
    let distinct: std::collections::BTreeSet<u8> = bytes.iter().copied().collect();
    assert!(distinct.len() > 200, "{} distinct bytes", distinct.len());
    // Neighbours differ (a copy shifted by one byte fails).
    assert!(bytes.windows(2).filter(|w| w[0] == w[1]).count() < bytes.len() / 100);
    assert_eq!(pattern(12345), bytes[12345]);
}

#[test]
fn the_copy_launch_covers_vectors_and_tail() {
    for n in [1, 15, 16, 17, 4099, CHECK_BYTES, TIMED_BYTES] {
        let c = copy_launch_config(n);
        let threads = c.grid_dim.0 as usize * THREADS_PER_BLOCK as usize;
        assert!(
            threads >= n / VECTOR_BYTES && threads >= n % VECTOR_BYTES,
            "n={n}"
        );
        assert!(
            threads - (THREADS_PER_BLOCK as usize)
                < (n / VECTOR_BYTES).max(n % VECTOR_BYTES).max(1),
            "n={n}"
        );
    }
    assert_eq!(CHECK_BYTES % VECTOR_BYTES, 3);
    assert_eq!(copy_launch_config(TIMED_BYTES).grid_dim.0, 65_536);
}

#[test]
fn the_copy_kernel_moves_16_bytes_per_access() {
    assert!(entries(PTX).contains(&COPY_KERNEL));
    let body = entry_body(PTX, COPY_KERNEL).unwrap();
    assert!(body.contains("ld.global.nc.v4.u32"), "{body}");
    let mix = PtxMix::of(body);
    assert_eq!(
        mix.accesses.get("st.global 128b"),
        Some(&1),
        "{}",
        mix.summary()
    );
    // The tail: one byte load and one byte store.
    assert_eq!(
        mix.accesses.get("st.global 8b"),
        Some(&1),
        "{}",
        mix.summary()
    );
    assert!(!body.contains(".local"));
}

#[test]
fn link_rates_from_sysfs_text() {
    let gen5 = parse_link("32.0 GT/s PCIe\n", "16\n").unwrap();
    assert_eq!(
        gen5,
        PcieLink {
            gt_per_s: 32.0,
            width: 16
        }
    );
    assert_eq!(gen5.generation(), 5);
    // 32 GT/s x 16 lanes x 128/130 / 8 = 63.015 GB/s per direction.
    assert!((gen5.bytes_per_s() / 1e9 - 63.015).abs() < 1e-3);
    let gen4 = parse_link("16.0 GT/s PCIe", "16").unwrap();
    assert_eq!(gen4.generation(), 4);
    assert!((gen4.bytes_per_s() / 1e9 - 31.508).abs() < 1e-3);
    // PCIe 1: 2.5 GT/s with 8b/10b, x8: 2 GB/s.
    let gen1 = parse_link("2.5 GT/s PCIe", "8").unwrap();
    assert_eq!((gen1.generation(), gen1.bytes_per_s()), (1, 2e9));
    assert_eq!(parse_link("Unknown", "16"), None);
    assert_eq!(parse_link("32.0 GT/s PCIe", "0"), None);
    // No such device: nothing read, no error.
    assert_eq!(query::read_link("ffff:ff:ff.0"), (None, None));
}

#[test]
fn the_device_query_lines_and_derived_limits() {
    let info = synthetic_device(60 << 20, 132);
    let mut q = DeviceQuery {
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
    for text in [
        "devices: 1 visible to this process (cuDeviceGetCount); this run uses device 0",
        "warp size 32",
        "max threads per block 1024, per SM 2048",
        "shared memory per block 48 KiB (227 KiB opt-in), per SM 228 KiB",
        "registers per block 65536, per SM 65536",
        "L2 61440 KiB",
        "memory clock 3201 MHz, bus 6016 bits",
        // 2 x 3201 MHz x 6016 bits / 8 = 4814.3 GB/s.
        "derived: DRAM 4814.3 GB/s",
        // 132 x 128 x 2 x 1980 MHz = 66.9 TFLOP/s.
        "derived: FP32 66.9 TFLOP/s",
        "64 warps) per SM, 270336 on the GPU; 32 registers per thread",
    ] {
        assert!(lines.contains(text), "missing `{text}` in:\n{lines}");
    }
    // The count and the variable that can lower it, as this process saw them.
    q.device_count = 2;
    q.visible_devices_env = Some("3,5".into());
    let first = query::lines(&info, &q)[0].clone();
    assert_eq!(
        first,
        "devices: 2 visible to this process (cuDeviceGetCount, CUDA_VISIBLE_DEVICES=3,5); this run uses device 0"
    );
}

#[test]
fn the_twin_compiles_with_nvrtc_and_matches_the_entry() {
    let Some(ptx) = lab_tests::twin_ptx_on_cpu::<host::bandwidth::BandwidthLesson>((7, 5)) else {
        return;
    };
    assert_eq!(entries(&ptx), [COPY_KERNEL]);
    let mix = PtxMix::of(entry_body(&ptx, COPY_KERNEL).unwrap());
    assert_eq!(
        mix.accesses.get("st.global 128b"),
        Some(&1),
        "{}",
        mix.summary()
    );
}

#[test]
fn the_sizes_are_the_timed_and_check_sizes() {
    let h200 = profile("H200").info();
    assert_eq!(bandwidth::Sizes::new(&h200, false).timed_bytes, TIMED_BYTES);
    assert_eq!(bandwidth::Sizes::new(&h200, true).timed_bytes, CHECK_BYTES);
    // A T4's 4 MiB L2 keeps the 64 MiB seed; a B200's 126 MiB takes 512.
    assert_eq!(
        bandwidth::Sizes::new(&profile("T4").info(), false).timed_bytes,
        64 << 20
    );
    assert_eq!(
        bandwidth::Sizes::new(&profile("B200").info(), false).timed_bytes,
        512 << 20
    );
}

/// `text` with each run of spaces as one (the table's columns are padded).
fn squeeze(text: &str) -> String {
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Rows of a made-up run: 256 MiB copies at the given ms (not measurements;
/// the section's arithmetic and wording are what is tested).
fn synthetic_rows(ms: [f64; 6]) -> Vec<host::lesson::Row> {
    Copy::ALL
        .iter()
        .zip(ms)
        .map(|(c, ms)| {
            host::lesson::Row::new(c.key(), c.label(), host::timing::Timing::new(vec![ms]))
                .bytes(c.counted_bytes(TIMED_BYTES) as f64)
        })
        .collect()
}

#[test]
fn the_limits_section_compares_each_copy_with_its_limit() {
    // 268,435,456 bytes in 5.0 ms: 53.7 GB/s; 2 x that in 0.125 ms: 4295 GB/s.
    let rows = synthetic_rows([10.0, 5.0, 10.0, 5.0, 0.125, 0.125]);
    let gen5 = PcieLink {
        gt_per_s: 32.0,
        width: 16,
    };
    let (s, link) = bandwidth::limits_section(
        &rows,
        Some(4.8e12),
        Some(gen5),
        Some(gen5),
        "0000:41:00.0",
        false,
    );
    assert_eq!(link, Some(gen5));
    let text = squeeze(&s.text.join("\n"));
    assert!(
        text.contains("dtod_copy_engine 4295.0 GB/s = 89.5% of the derived DRAM 4800.0 GB/s"),
        "{text}"
    );
    assert!(
        text.contains("htod_pinned 53.7 GB/s = 85.2% of the link's 63.0 GB/s per direction"),
        "{text}"
    );
    assert!(
        text.contains(
            "PCIe gen 5 x16 at 32.0 GT/s (read after the copies; the device's maximum too)"
        ),
        "{text}"
    );
    let reading = s.reading.unwrap();
    assert!(
        reading.contains("host -> device 2.00x, device -> host 2.00x"),
        "{reading}"
    );
    assert!(
        reading.contains("Copy engine against kernel: 1.00x"),
        "{reading}"
    );
    // Per byte copied: 4295 / 2 over 53.7, 40x (the GB/s columns differ
    // 80x: the device rows count each byte twice).
    assert!(
        reading.contains(
            "finishes 40x sooner than the same bytes across the link (dtod_copy_engine 4295.0 GB/s counted 2n, \
             against htod_pinned 53.7 GB/s counted n): data that stays on the GPU skips the link."
        ),
        "{reading}"
    );
    assert!(reading.contains("staging buffer"), "{reading}");
    // Pageable as fast as pinned one way: no staging-buffer explanation.
    let rows = synthetic_rows([5.0, 5.0, 10.0, 5.0, 0.125, 0.125]);
    let (s, _) = bandwidth::limits_section(
        &rows,
        Some(4.8e12),
        Some(gen5),
        Some(gen5),
        "0000:41:00.0",
        false,
    );
    let reading = s.reading.unwrap();
    assert!(
        reading.contains(
            "host -> device 1.00x, device -> host 2.00x (pinned was not faster in both directions"
        ),
        "{reading}"
    );
    assert!(!reading.contains("staging buffer"), "{reading}");
}

#[test]
fn a_link_read_in_a_power_saving_state_gives_way_to_the_maximum() {
    let rows = synthetic_rows([10.0, 5.0, 10.0, 5.0, 0.125, 0.125]);
    let idle = PcieLink {
        gt_per_s: 2.5,
        width: 16,
    };
    let gen5 = PcieLink {
        gt_per_s: 32.0,
        width: 16,
    };
    let (s, link) = bandwidth::limits_section(
        &rows,
        Some(4.8e12),
        Some(idle),
        Some(gen5),
        "0000:41:00.0",
        false,
    );
    assert_eq!(link, Some(gen5));
    assert!(s.text.join("\n").contains("power-saving state"));
    // No link at all: said, and the host rows against DRAM only.
    let (s, link) =
        bandwidth::limits_section(&rows, Some(4.8e12), None, None, "0009:01:00.0", true);
    assert_eq!(link, None);
    let text = squeeze(&s.text.join("\n"));
    assert!(text.contains("no limit to be compared with"), "{text}");
    assert!(text.contains("likely NVLink-C2C"), "{text}");
    assert!(
        text.contains("htod_pinned 53.7 GB/s = 1.1% of the DRAM limit"),
        "{text}"
    );
}

#[test]
fn the_host_memcpy_check_catches_a_short_and_a_long_copy() {
    let src = bandwidth::pattern_bytes(100);
    let poisoned = || vec![0xFFu8; 100];
    let mut dst = poisoned();
    dst[..90].copy_from_slice(&src[..90]);
    assert!(bandwidth::host_copy_failure(&src, &dst, 90).is_none());
    // One byte short: byte 89 still poison.
    let mut dst = poisoned();
    dst[..89].copy_from_slice(&src[..89]);
    let f = bandwidth::host_copy_failure(&src, &dst, 90).expect("a short copy fails");
    assert!(f.detail.contains("byte 89 is 0xff"), "{}", f.detail);
    // One byte long: byte 90 written.
    let mut dst = poisoned();
    dst[..91].copy_from_slice(&src[..91]);
    let f = bandwidth::host_copy_failure(&src, &dst, 90).expect("a long copy fails");
    assert!(f.detail.contains("1 past the end"), "{}", f.detail);
}

/// The six copies of [`synthetic_rows`] and the host memcpy at `host_ms`
/// (counted n), or without it.
fn rows_with_memcpy(device_ms: f64, host_ms: Option<f64>) -> Vec<host::lesson::Row> {
    let mut rows = synthetic_rows([10.0, 5.0, 10.0, 5.0, device_ms, device_ms * 1.01]);
    if let Some(ms) = host_ms {
        rows.push(
            host::lesson::Row::new(
                "htoh_memcpy",
                "host -> host memcpy",
                host::timing::Timing::new(vec![ms]),
            )
            .bytes(TIMED_BYTES as f64)
            .on_cpu(),
        );
    }
    rows
}

#[test]
fn the_seed_claim_is_read_from_the_ratio() {
    assert_eq!(bandwidth::SEED_CLAIM_RATIO, (10.0, 100.0));
    // 2 x 256 MiB in 0.125 ms: 4295.0 GB/s (the engine, faster than the
    // kernel at 1.01x its time); 256 MiB in 28 ms: 9.6 GB/s. 448x.
    let (s, facts) = bandwidth::seed_claim_section(&rows_with_memcpy(0.125, Some(28.0)));
    let text = s.text.join("\n");
    assert!(
        text.contains(
            "dtod_copy_engine 4295.0 GB/s (counted 2n: read and write, as GPU memory bandwidth is quoted) / htoh_memcpy \
             9.6 GB/s (counted n, as the seed counts it) = 448x, 10^2.65"
        ),
        "{text}"
    );
    assert!(
        text.contains("counted alike (bytes copied per second on both sides): 224x, 10^2.35"),
        "{text}"
    );
    let r = s.reading.unwrap();
    assert!(
        r.contains("the ratio is 448x, over two orders of magnitude: the claim does not hold here, the gap is larger"),
        "{r}"
    );
    assert!(!r.contains("turns on how"), "{r}");
    assert_eq!(facts["holds"], false);
    assert_eq!(facts["device_row"], "dtod_copy_engine");
    assert!((facts["ratio"].as_f64().unwrap() - 448.0).abs() < 0.01);
    // 16x holds; counted alike, 8x does not: the reading says so.
    let (s, facts) = bandwidth::seed_claim_section(&rows_with_memcpy(0.125, Some(1.0)));
    let r = s.reading.unwrap();
    assert!(
        r.contains("16x, within one to two orders of magnitude: the claim holds here"),
        "{r}"
    );
    assert!(
        r.contains("8x, under one order of magnitude")
            && r.contains("turns on how the bytes are counted"),
        "{r}"
    );
    assert_eq!(
        (facts["holds"].clone(), facts["holds_counted_alike"].clone()),
        (true.into(), false.into())
    );
    // A host copy nearly as fast as the device: under one order.
    let (s, _) = bandwidth::seed_claim_section(&rows_with_memcpy(0.125, Some(0.2)));
    assert!(
        s.reading
            .unwrap()
            .contains("under one order of magnitude: the claim does not hold here")
    );
    // The kernel faster than the engine: it is the row compared.
    let mut rows = rows_with_memcpy(0.125, Some(28.0));
    rows.swap(4, 5);
    rows[4].key = "dtod_copy_engine".into();
    rows[5].key = COPY_KERNEL.into();
    let (_, facts) = bandwidth::seed_claim_section(&rows);
    assert_eq!(facts["device_row"], COPY_KERNEL);
    // No host row: no ratio, no verdict.
    let (s, facts) = bandwidth::seed_claim_section(&rows_with_memcpy(0.125, None));
    assert!(s.reading.unwrap().contains("no ratio"));
    assert_eq!(facts["holds"], serde_json::Value::Null);
}
