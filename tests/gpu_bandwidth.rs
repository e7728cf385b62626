//! GPU tests of the bandwidth lesson: every copy (pageable and pinned, both
//! directions, the copy engine and the copy kernel on both sides) checked
//! by its round trip at awkward sizes; the device query's answers are
//! consistent. Where no NVIDIA driver is present, every test is reported as
//! ignored.

use host::bandwidth::query::DeviceQuery;
use host::bandwidth::{self, Bandwidth, Copy};
use host::compare::Side;
use host::gpu::Gpu;
use kernels_gpu::bandwidth::CHECK_BYTES;
use lab_tests::{run_gpu_trials, trial, use_side};

/// The sizes: one byte, a byte short of and past one vector, a tail of 3
/// past a page, and the lesson's check size.
const SIZES: [usize; 5] = [1, 15, 17, 4099, CHECK_BYTES];

fn check(gpu: &Gpu, copy: Copy, side: Side) -> Result<(), String> {
    let mut lesson = Bandwidth::new(gpu, CHECK_BYTES).map_err(|e| e.to_string())?;
    use_side::<bandwidth::BandwidthLesson>(gpu, &mut lesson, side)?;
    for n in SIZES {
        if let (Some(f), _) = lesson.check(copy, n).map_err(|e| e.to_string())? {
            return Err(f.to_string());
        }
    }
    Ok(())
}

/// What the driver says hangs together: a warp of 32, the opt-in shared
/// memory at least the default, a block's registers within an SM's, and
/// at least one device counted, this run's among them.
fn the_device_query_is_consistent(gpu: &Gpu) -> Result<(), String> {
    let q = DeviceQuery::of(gpu).map_err(|e| e.to_string())?;
    let ok = q.warp_size == 32
        && q.max_threads_per_block >= 256
        && q.shared_per_block_optin >= q.shared_per_block
        && q.shared_per_sm >= q.shared_per_block_optin
        && q.regs_per_block <= gpu.info.regs_per_sm
        && q.copy_engines >= 1
        && q.device_count >= 1
        && (gpu.info.ordinal as u32) < q.device_count;
    if ok { Ok(()) } else { Err(format!("{q:?}")) }
}

/// A copy past the buffers is an `Error::Size`, not a fault.
fn too_large_is_an_error(gpu: &Gpu) -> Result<(), String> {
    let mut lesson = Bandwidth::new(gpu, 4096).map_err(|e| e.to_string())?;
    match lesson.enqueue(Copy::DtodKernel, 4097) {
        Err(host::Error::Size(_)) => Ok(()),
        other => Err(format!("{other:?}")),
    }
}

/// The PCI bus id the context records (`cuDeviceGetPCIBusId`) is the
/// device the attributes name, and the UUID has nvidia-smi's shape.
fn the_gpu_is_named_by_its_pci_bus_id(gpu: &Gpu) -> Result<(), String> {
    let q = DeviceQuery::of(gpu).map_err(|e| e.to_string())?;
    let id = gpu.info.pci_bus_id.as_deref().ok_or("no PCI bus id")?;
    // The driver's id and the attributes' address, each domain:bus:device.
    let parts = |s: &str| -> Option<Vec<u64>> {
        let (head, _function) = s.rsplit_once('.')?;
        head.split(':')
            .map(|p| u64::from_str_radix(p, 16).ok())
            .collect()
    };
    if parts(id).is_none() || parts(id) != parts(&q.pci_address) {
        return Err(format!("PCI bus id {id}, attributes {}", q.pci_address));
    }
    let uuid = gpu.info.uuid.as_deref().ok_or("no UUID")?;
    let groups: Vec<usize> = uuid
        .strip_prefix("GPU-")
        .ok_or(format!("UUID {uuid}"))?
        .split('-')
        .map(str::len)
        .collect();
    if groups != [8, 4, 4, 4, 12] {
        return Err(format!("UUID {uuid}"));
    }
    println!("PCI bus id {id}, {uuid}");
    Ok(())
}

/// Clocks read while a copy is timed: NVML (present wherever the driver
/// is) finds the GPU by its PCI bus id and keeps readings. 8,000 device
/// copies of 64 MiB: about a quarter of a second on an H200, some 25
/// readings 10 ms apart.
fn clocks_are_read_while_timing(gpu: &Gpu) -> Result<(), String> {
    let n = 64 << 20;
    let mut lesson = Bandwidth::new(gpu, n).map_err(|e| e.to_string())?;
    let plan = host::timing::Plan {
        warmups: 3,
        batches: 40,
        launches_per_batch: 200,
        flush_l2: false,
    };
    let sampler = host::clocks::Sampler::start(gpu.info.pci_bus_id.as_deref());
    let timing = lesson
        .time(Copy::DtodKernel, n, plan)
        .map_err(|e| e.to_string())?;
    let clocks = sampler.finish();
    let timed_ms: f64 = timing.samples_ms.iter().sum::<f64>() * 200.0;
    println!("{} over {timed_ms:.0} ms of timed copies", clocks.line());
    match (clocks.samples, clocks.sm_mhz, clocks.memory_mhz) {
        (n, Some(sm), Some(mem)) if n > 0 && sm.min > 0.0 && mem.min > 0.0 => Ok(()),
        _ => Err(format!("{clocks:?}")),
    }
}

/// The quick run's report prints the device count and reads the seed's
/// claim from its own two figures: a ratio, and a verdict in the JSON.
fn the_report_counts_devices_and_reads_the_claim(gpu: &Gpu) -> Result<(), String> {
    let (table, json) = lab_tests::run_quick::<bandwidth::BandwidthLesson>(gpu)?;
    lab_tests::report_contains(
        &table,
        &[
            "visible to this process (cuDeviceGetCount",
            "The seed's claim",
            "counted alike (bytes copied per second on both sides)",
            "On this machine the ratio is",
        ],
    )?;
    let facts = json
        .iter()
        .find(|l| l["variant"] == "facts")
        .ok_or("no facts line")?;
    let claim = &facts["facts"]["seed_claim"];
    let ratio = claim["ratio"].as_f64().unwrap_or(f64::NAN);
    if !(ratio.is_finite() && ratio > 0.0 && claim["holds"].is_boolean()) {
        return Err(format!("seed_claim: {claim}"));
    }
    if facts["facts"]["query"]["device_count"]
        .as_u64()
        .unwrap_or(0)
        < 1
    {
        return Err(format!("query: {}", facts["facts"]["query"]));
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    // Every copy on the Rust side (the driver's copies have no twin), and
    // the copy kernel's twin.
    let mut trials: Vec<_> = Copy::ALL
        .into_iter()
        .map(|copy| trial(copy.key(), move |gpu| check(gpu, copy, Side::Rust)))
        .collect();
    trials.extend([
        trial("twin_copy_vec16", |gpu| {
            check(gpu, Copy::DtodKernel, Side::CudaC)
        }),
        trial(
            "the_device_query_is_consistent",
            the_device_query_is_consistent,
        ),
        trial("too_large_is_an_error", too_large_is_an_error),
        trial(
            "the_gpu_is_named_by_its_pci_bus_id",
            the_gpu_is_named_by_its_pci_bus_id,
        ),
        trial("clocks_are_read_while_timing", clocks_are_read_while_timing),
        trial("bandwidth::the_lesson_runs_quick", |gpu| {
            lab_tests::run_quick::<bandwidth::BandwidthLesson>(gpu).map(drop)
        }),
        trial(
            "bandwidth::the_report_counts_devices_and_reads_the_claim",
            the_report_counts_devices_and_reads_the_claim,
        ),
    ]);
    run_gpu_trials(trials)
}
