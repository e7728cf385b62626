//! A run's context, as every report's header and JSON row carry it: which
//! GPU ran (its PCI bus id and UUID, not CUDA's ordinal), and the clocks
//! with how they were read.

use host::clocks::{Clocks, Reading};
use host::gpu::DeviceInfo;

fn context(info: &DeviceInfo) -> host::report::Context {
    host::report::Context::new(
        "roofline",
        info,
        &host::roofline::Sizes::for_device(info),
        serde_json::json!({}),
        host::timing::Plan::DEFAULT,
        "2026-11-30T00:00:00Z".into(),
    )
}

#[test]
fn the_context_names_the_gpu_by_its_pci_bus_id_and_uuid() {
    let info = DeviceInfo {
        pci_bus_id: Some("0000:19:00.0".into()),
        uuid: Some("GPU-5a4f0e36-298c-e2d1-0123-456789abcdef".into()),
        ..lab_tests::synthetic_device(60 << 20, 132)
    };
    let c = context(&info);
    assert_eq!(
        c.device_line(),
        "GPU: synthetic (compute capability 9.0, PCI 0000:19:00.0), 132 SMs, 61440 KiB L2, driver CUDA 13.0"
    );
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["pci_bus_id"], "0000:19:00.0");
    assert_eq!(json["gpu_uuid"], "GPU-5a4f0e36-298c-e2d1-0123-456789abcdef");
    // Without them, the line says nothing of a PCI id and the JSON has null.
    let c = context(&lab_tests::synthetic_device(60 << 20, 132));
    assert_eq!(
        c.device_line(),
        "GPU: synthetic (compute capability 9.0), 132 SMs, 61440 KiB L2, driver CUDA 13.0"
    );
    assert_eq!(
        serde_json::to_value(&c).unwrap()["pci_bus_id"],
        serde_json::Value::Null
    );
}

#[test]
fn the_header_says_how_the_clocks_were_read() {
    let mut c = context(&lab_tests::synthetic_device(60 << 20, 132));
    // Before lab reads them (a test's context, a profile run).
    let last = |c: &host::report::Context| c.header().lines().last().unwrap().to_string();
    assert_eq!(
        last(&c),
        "Clocks while timing: unknown (this run did not read the clocks)"
    );
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["clocks"]["method"], "not read");
    assert_eq!(json["clocks"]["samples"], 0);
    assert_eq!(json["clocks"]["sm_mhz"], serde_json::Value::Null);
    // Read while timing: the number of readings, median and range.
    let readings: Vec<Reading> = [1980, 1980, 1965, 1980]
        .into_iter()
        .map(|sm| Reading {
            sm_mhz: sm,
            memory_mhz: 3201,
            temperature_c: Some(51),
            power_w: None,
        })
        .collect();
    c.clocks = Clocks::from_readings(&host::clocks::nvml_method(), &readings);
    assert_eq!(
        last(&c),
        "Clocks while timing (read while timing: NVML every 10 ms while a kernel was timed, 4 samples): \
         SM 1980 MHz median (1965 to 1980), memory 3201 MHz median (3201 to 3201), 51 to 51 C; SM at the end 1980 MHz \
         against 1980 at the start: within the 3% share; base clock unknown (not read)"
    );
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["clocks"]["samples"], 4);
    assert_eq!(
        json["clocks"]["sm_mhz"],
        serde_json::json!({"min": 1965.0, "median": 1980.0, "max": 1980.0})
    );
    assert_eq!(json["clocks"]["power_w"], serde_json::Value::Null);
    assert_eq!(json["clocks"]["unknown"], serde_json::Value::Null);
    // NVML absent: unknown, and why.
    c.clocks = Clocks::unknown(
        host::clocks::nvml_method(),
        "NVML (libnvidia-ml.so.1, installed with the NVIDIA driver) could not be loaded: not found",
    );
    assert_eq!(
        last(&c),
        "Clocks while timing: unknown (NVML (libnvidia-ml.so.1, installed with the NVIDIA driver) could not be \
         loaded: not found)"
    );
}
