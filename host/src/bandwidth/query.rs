//! The device query (the seed's `cudaGetDeviceCount` and
//! `cudaGetDeviceProperties`, through the driver API's `cuDeviceGetCount`
//! and `cuDeviceGetAttribute`), the limits derived from it, and what the
//! host can learn about the host-device link.
//!
//! The link is not a device attribute: the driver reports the GPU's PCI
//! address and nothing about the link's generation or width. On Linux the
//! kernel publishes those in sysfs
//! (`/sys/bus/pci/devices/<address>/current_link_speed` and `_width`); where
//! that is readable the lesson reads it, and says so where it is not (a
//! container without sysfs, or a GPU on NVLink-C2C, as on Grace Hopper).

use cudarc::driver::CudaContext;
use cudarc::driver::sys::CUdevice_attribute as Attr;
use serde::Serialize;

use crate::error::{DriverContext, Result};
use crate::gpu::{DeviceInfo, Gpu};

/// What the lesson reads beyond [`DeviceInfo`].
#[derive(Debug, Clone, Serialize)]
pub struct DeviceQuery {
    /// CUDA devices this process can see (`cuDeviceGetCount`, the seed's
    /// `cudaGetDeviceCount`): every GPU the driver finds, less those
    /// `CUDA_VISIBLE_DEVICES` hides.
    pub device_count: u32,
    /// `CUDA_VISIBLE_DEVICES` as this process saw it, where set: the
    /// reason the count can be below the GPUs in the machine.
    pub visible_devices_env: Option<String>,
    /// Threads per warp.
    pub warp_size: u32,
    /// Threads one block may have.
    pub max_threads_per_block: u32,
    /// Largest block, threads along (x, y, z).
    pub max_block_dim: (u32, u32, u32),
    /// Largest grid, blocks along (x, y, z).
    pub max_grid_dim: (u32, u32, u32),
    /// Static shared memory one block may use, bytes.
    pub shared_per_block: u32,
    /// Shared memory one block may use after opting in
    /// (`cuFuncSetAttribute`), bytes.
    pub shared_per_block_optin: u32,
    /// Shared memory of one SM, bytes.
    pub shared_per_sm: u32,
    /// 32-bit registers one block may use.
    pub regs_per_block: u32,
    /// Blocks one SM holds at most.
    pub max_blocks_per_sm: u32,
    /// Constant memory, bytes.
    pub constant_bytes: u32,
    /// Copy engines that run beside kernels (`ASYNC_ENGINE_COUNT`).
    pub copy_engines: u32,
    /// Whether ECC is on for device memory.
    pub ecc: bool,
    /// The GPU's PCI address, `domain:bus:device.0`, as sysfs names it.
    pub pci_address: String,
    /// Whether the GPU can read pageable host memory through the host's page
    /// tables (true on NVLink-C2C systems such as Grace Hopper).
    pub uses_host_page_tables: bool,
}

impl DeviceQuery {
    /// Reads the attributes of `gpu`'s device.
    ///
    /// # Errors
    /// A driver error from `cuDeviceGetAttribute`.
    pub fn of(gpu: &Gpu) -> Result<DeviceQuery> {
        let attr = |a: Attr| {
            gpu.ctx
                .attribute(a)
                .call("cuDeviceGetAttribute")
                .map(|v| v.max(0) as u32)
        };
        Ok(DeviceQuery {
            device_count: CudaContext::device_count().call("cuDeviceGetCount")?.max(0) as u32,
            visible_devices_env: std::env::var("CUDA_VISIBLE_DEVICES").ok(),
            warp_size: attr(Attr::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?,
            max_threads_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            max_block_dim: (
                attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
                attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
                attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
            ),
            max_grid_dim: (
                attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
                attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
                attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
            ),
            shared_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
            shared_per_block_optin: attr(
                Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )?,
            shared_per_sm: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)?,
            regs_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)?,
            max_blocks_per_sm: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)?,
            constant_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY)?,
            copy_engines: attr(Attr::CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT)?,
            ecc: attr(Attr::CU_DEVICE_ATTRIBUTE_ECC_ENABLED)? != 0,
            pci_address: format!(
                "{:04x}:{:02x}:{:02x}.0",
                attr(Attr::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)?,
                attr(Attr::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)?,
                attr(Attr::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)?
            ),
            uses_host_page_tables: attr(
                Attr::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES,
            )? != 0,
        })
    }
}

/// The report's lines for the device: what the driver says, then what
/// follows from it.
pub fn lines(info: &DeviceInfo, q: &DeviceQuery) -> Vec<String> {
    let kib = |b: u32| format!("{} KiB", b / 1024);
    let mut out = vec![
        format!(
            "devices: {} visible to this process (cuDeviceGetCount{}); this run uses device {}",
            q.device_count,
            q.visible_devices_env
                .as_deref()
                .map_or(String::new(), |v| format!(", CUDA_VISIBLE_DEVICES={v}")),
            info.ordinal
        ),
        format!(
            "name {}, compute capability {}.{}, {} SMs, warp size {}",
            info.name, info.compute_capability.0, info.compute_capability.1, info.sms, q.warp_size
        ),
        format!(
            "max threads per block {}, per SM {}; max blocks per SM {}; largest block {:?}, largest grid {:?}",
            q.max_threads_per_block,
            info.max_threads_per_sm,
            q.max_blocks_per_sm,
            q.max_block_dim,
            q.max_grid_dim
        ),
        format!(
            "shared memory per block {} ({} opt-in), per SM {}; registers per block {}, per SM {}; constant memory {}",
            kib(q.shared_per_block),
            kib(q.shared_per_block_optin),
            kib(q.shared_per_sm),
            q.regs_per_block,
            info.regs_per_sm,
            kib(q.constant_bytes)
        ),
        format!(
            "L2 {} KiB; device memory {:.1} GiB, ECC {}; memory clock {} MHz, bus {} bits; SM clock {} MHz; {} copy engine(s)",
            info.l2_bytes / 1024,
            info.total_memory_bytes as f64 / (1u64 << 30) as f64,
            if q.ecc { "on" } else { "off" },
            info.memory_clock_khz / 1000,
            info.memory_bus_bits,
            info.sm_clock_khz / 1000,
            q.copy_engines
        ),
    ];
    match info.derived_dram_bytes_per_s() {
        Some(dram) => out.push(format!(
            "derived: DRAM {:.1} GB/s = 2 x {} MHz x {} bits / 8 (a figure from the attributes, not a measurement)",
            dram / 1e9,
            info.memory_clock_khz / 1000,
            info.memory_bus_bits
        )),
        None => out.push(format!(
            "derived: DRAM unknown: the driver reports a memory clock of {} MHz and a bus of {} bits",
            info.memory_clock_khz / 1000,
            info.memory_bus_bits
        )),
    }
    let lanes = crate::gpu::fp32_lanes_per_sm(info.compute_capability);
    match (info.derived_fp32_flop_per_s(), lanes) {
        (Some(flops), Some(lanes)) => out.push(format!(
            "derived: FP32 {:.1} TFLOP/s = {} SMs x {lanes} lanes x 2 (an FMA) x {} MHz; ridge point {}",
            flops / 1e12,
            info.sms,
            info.sm_clock_khz / 1000,
            info.derived_ridge_flop_per_byte()
                .map_or("unknown (no DRAM limit)".to_string(), |r| format!("{r:.1} FLOP/byte"))
        )),
        (None, Some(_)) => out.push(format!(
            "derived: FP32 peak unknown: the driver reports {} SMs at an SM clock of {} MHz",
            info.sms,
            info.sm_clock_khz / 1000
        )),
        _ => out.push("derived: FP32 peak unknown for this compute capability".to_string()),
    }
    out.push(format!(
        "derived: {} resident threads ({} warps) per SM, {} on the GPU; {} registers per thread at full occupancy",
        info.max_threads_per_sm,
        info.max_threads_per_sm / q.warp_size.max(1),
        info.max_threads_per_sm as u64 * info.sms as u64,
        info.regs_per_sm / info.max_threads_per_sm.max(1)
    ));
    out
}

/// A PCIe link as sysfs reports it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PcieLink {
    /// Transfers per second per lane, GT/s.
    pub gt_per_s: f64,
    /// Lanes.
    pub width: u32,
}

impl PcieLink {
    /// Payload bits per transferred bit of the line code: 8b/10b up to 5
    /// GT/s (PCIe 1 and 2), 128b/130b from 8 GT/s (PCIe 3 to 5), and for 64
    /// GT/s (PCIe 6, FLIT mode) 242 of every 256 bytes.
    pub fn encoding(&self) -> f64 {
        if self.gt_per_s < 8.0 {
            0.8
        } else if self.gt_per_s < 64.0 {
            128.0 / 130.0
        } else {
            242.0 / 256.0
        }
    }

    /// The link's data rate in one direction after line coding, bytes/s:
    /// GT/s x lanes x encoding / 8. Packet headers take a further few
    /// percent, so no copy reaches it.
    pub fn bytes_per_s(&self) -> f64 {
        self.gt_per_s * 1e9 * self.width as f64 * self.encoding() / 8.0
    }

    /// The PCIe generation this speed belongs to.
    pub fn generation(&self) -> u32 {
        match self.gt_per_s {
            s if s < 3.0 => 1,
            s if s < 6.0 => 2,
            s if s < 10.0 => 3,
            s if s < 20.0 => 4,
            s if s < 40.0 => 5,
            s if s < 80.0 => 6,
            _ => 7,
        }
    }
}

/// Parses sysfs's `current_link_speed` (for example `32.0 GT/s PCIe`) and
/// `current_link_width` (`16`); `None` for anything else (`Unknown`).
pub fn parse_link(speed: &str, width: &str) -> Option<PcieLink> {
    let gt_per_s: f64 = speed.split_whitespace().next()?.parse().ok()?;
    let width: u32 = width.trim().parse().ok()?;
    (gt_per_s > 0.0 && width > 0).then_some(PcieLink { gt_per_s, width })
}

/// The GPU's link from sysfs: `(current, max)`, each where readable.
/// `current` is read when called: an idle GPU may have trained its link
/// down, so the lesson reads it right after the copies.
pub fn read_link(pci_address: &str) -> (Option<PcieLink>, Option<PcieLink>) {
    let dir = std::path::Path::new("/sys/bus/pci/devices").join(pci_address);
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    let link = |speed: &str, width: &str| parse_link(&read(speed)?, &read(width)?);
    (
        link("current_link_speed", "current_link_width"),
        link("max_link_speed", "max_link_width"),
    )
}
