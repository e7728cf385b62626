//! The bandwidth lesson on the host (chapter 19.4, the seed's file 08): the
//! device query and the limits derived from it; then every way bytes move
//! on this machine, each checked byte for byte and timed with CUDA events:
//! host to device and device to host from pageable and from pinned host
//! memory, device to device by the copy engine and by a kernel, and the
//! seed's host-to-host memcpy on the CPU; and the seed's claim (a GPU's
//! memory bandwidth one to two orders of magnitude above the host
//! memcpy's) read against the two measured figures.
//!
//! Bytes are counted the way each row says: a copy between host and device
//! counts n (each byte crosses the link once); a copy within device memory
//! counts 2n (each byte read from DRAM once and written once, the traffic
//! the DRAM limit bounds), as CUDA's `bandwidthTest` sample counts it; the
//! host memcpy counts n, as the seed did.

pub mod query;

use cudarc::driver::{CudaSlice, DevicePtrMut, LaunchConfig, PinnedHostSlice};
use kernels_gpu::bandwidth::*;
use serde::Serialize;
use serde_json::json;

use crate::check::Failure;
use crate::compare::Twinned;
use crate::error::{DriverContext, Error, Result};
use crate::gpu::Gpu;
use crate::kernels::KernelSet;
use crate::lesson::{
    self, Findings, Outcome, Row, RunOptions, Section, SectionReport, time_on_cpu,
};
use crate::report::Context;
use crate::sizes::{LessonSizes, Stream, grown};
use crate::timing::{self, Plan, Timing};

crate::kernel_ids! {
    /// The lesson's one kernel.
    pub enum Kernel {
        /// The device-to-device copy, 16 bytes a thread: (src, dst, n bytes).
        CopyVec16 = "copy_vec16" (Ptr, Ptr, U64),
    }
}

/// The symbol of the copy kernel (the CUDA C twin's too).
pub const COPY_KERNEL: &str = Kernel::CopyVec16.symbol();

/// Bytes past the largest copy that every buffer also has, poisoned before
/// each check and required to stay poisoned: a copy that writes past its n
/// bytes (a wrong tail index) fails, although the write stays inside the
/// allocation where compute-sanitizer cannot see it.
pub const GUARD_BYTES: usize = 64;

/// The byte of every source buffer at index `i`: a hash of the index (see
/// [`crate::fill`]) kept below 251, so it is never the 0xFF the
/// destinations are poisoned with and a byte a copy skipped always shows.
pub fn pattern(i: usize) -> u8 {
    crate::fill::below(i, 0x1, 251) as u8
}

/// The first `n` bytes of [`pattern`].
pub fn pattern_bytes(n: usize) -> Vec<u8> {
    (0..n).map(pattern).collect()
}

/// One way of moving bytes, timed as one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Copy {
    /// Pageable host memory to the device: the driver stages it through a
    /// pinned buffer of its own.
    HtodPageable,
    /// Pinned (page-locked) host memory to the device: one DMA.
    HtodPinned,
    /// The device to pageable host memory.
    DtohPageable,
    /// The device to pinned host memory.
    DtohPinned,
    /// Device to device by the copy engine (`cuMemcpyDtoDAsync`).
    DtodEngine,
    /// Device to device by the `copy_vec16` kernel.
    DtodKernel,
}

impl Copy {
    /// Every copy, in report order.
    pub const ALL: [Copy; 6] = [
        Copy::HtodPageable,
        Copy::HtodPinned,
        Copy::DtohPageable,
        Copy::DtohPinned,
        Copy::DtodEngine,
        Copy::DtodKernel,
    ];

    /// The row's key.
    pub fn key(self) -> &'static str {
        match self {
            Copy::HtodPageable => "htod_pageable",
            Copy::HtodPinned => "htod_pinned",
            Copy::DtohPageable => "dtoh_pageable",
            Copy::DtohPinned => "dtoh_pinned",
            Copy::DtodEngine => "dtod_copy_engine",
            Copy::DtodKernel => COPY_KERNEL,
        }
    }

    /// What the row is, for people.
    pub fn label(self) -> &'static str {
        match self {
            Copy::HtodPageable => "host (pageable) -> device, cuMemcpyHtoDAsync",
            Copy::HtodPinned => "host (pinned) -> device, cuMemcpyHtoDAsync",
            Copy::DtohPageable => "device -> host (pageable), cuMemcpyDtoHAsync",
            Copy::DtohPinned => "device -> host (pinned), cuMemcpyDtoHAsync",
            Copy::DtodEngine => "device -> device, copy engine (cuMemcpyDtoDAsync)",
            Copy::DtodKernel => "device -> device, copy_vec16 kernel (16 B per thread)",
        }
    }

    /// Whether the copy stays in device memory.
    pub fn on_device(self) -> bool {
        matches!(self, Copy::DtodEngine | Copy::DtodKernel)
    }

    /// Bytes the row counts for a copy of `n` bytes: 2n within device
    /// memory (read + write), n across the link.
    pub fn counted_bytes(self, n: usize) -> u64 {
        if self.on_device() {
            2 * n as u64
        } else {
            n as u64
        }
    }
}

/// The launch of `copy_vec16` over `n` bytes: max(n / 16, n % 16) threads.
pub fn copy_launch_config(n: usize) -> LaunchConfig {
    let threads = (n / VECTOR_BYTES).max(n % VECTOR_BYTES);
    LaunchConfig {
        grid_dim: (
            threads.div_ceil(THREADS_PER_BLOCK as usize).max(1) as u32,
            1,
            1,
        ),
        block_dim: (THREADS_PER_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The lesson's buffers: two on the device (`a`, the source of every copy
/// out of it; `b`, the destination of the device-to-device copies) and, on
/// the host, a pageable and a pinned source holding [`pattern`] and a
/// pageable and a pinned destination.
pub struct Bandwidth<'g> {
    gpu: &'g Gpu,
    kernels: KernelSet<Kernel>,
    bytes: usize,
    a: CudaSlice<u8>,
    b: CudaSlice<u8>,
    pageable_src: Vec<u8>,
    pageable_dst: Vec<u8>,
    pinned_src: PinnedHostSlice<u8>,
    pinned_dst: PinnedHostSlice<u8>,
}

/// A driver error of `call`.
fn driver(call: &'static str) -> impl Fn(cudarc::driver::DriverError) -> Error {
    move |source| Error::Driver { call, source }
}

impl<'g> Bandwidth<'g> {
    /// Checks free device memory, then allocates two device buffers of
    /// `bytes` and four host buffers of `bytes` (two of them pinned), each
    /// with [`GUARD_BYTES`] more, and fills both sources with [`pattern`].
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] before allocating device memory; driver errors
    /// (pinning `bytes` of host memory can fail where the host is short).
    pub fn new(gpu: &'g Gpu, bytes: usize) -> Result<Self> {
        let len = bytes + GUARD_BYTES;
        gpu.require_free_memory(2 * len, "the bandwidth lesson's two device buffers")?;
        // SAFETY: any bytes are valid u8; every destination is poisoned or
        // written before it is read.
        let alloc = || unsafe { gpu.alloc::<u8>(len) };
        // ANCHOR: pinned
        // Plain page-locked memory (flags 0, what cudaMallocHost gives):
        // cudarc's default adds write-combining, which makes the host's own
        // reads of a destination very slow.
        // SAFETY: u8 has no invalid bits; the contents are written below.
        let pin = || {
            unsafe { gpu.ctx.alloc_pinned_with_flags::<u8>(len, 0) }
                .map_err(driver("cuMemHostAlloc"))
        };
        // ANCHOR_END: pinned
        let src = pattern_bytes(len);
        let mut pinned_src = pin()?;
        pinned_src
            .as_mut_slice()
            .map_err(driver("cuEventSynchronize"))?
            .copy_from_slice(&src);
        Ok(Bandwidth {
            gpu,
            kernels: KernelSet::new(gpu)?,
            bytes,
            a: alloc()?,
            b: alloc()?,
            pageable_dst: vec![0u8; len],
            pageable_src: src,
            pinned_src,
            pinned_dst: pin()?,
        })
    }

    /// Bytes of every buffer.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    fn size_ok(&self, n: usize) -> Result<()> {
        if n > self.bytes {
            return Err(Error::Size(format!(
                "bandwidth: a copy of {n} bytes; the buffers hold {}",
                self.bytes
            )));
        }
        Ok(())
    }

    /// Launches the copy kernel (on the side in use) from `a` to `b` over
    /// `n` bytes, asynchronously.
    ///
    /// # Errors
    /// [`Error::Size`] past the buffers; a launch the driver refuses.
    pub fn launch_copy(&mut self, n: usize) -> Result<()> {
        self.size_ok(n)?;
        let launch = self
            .kernels
            .launch(self.gpu, Kernel::CopyVec16)
            .input(&self.a)
            .output(&mut self.b)
            .scalar(n as u64);
        // SAFETY: both buffers hold n bytes, are distinct device
        // allocations (16-byte aligned), and the grid covers
        // max(n / 16, n % 16) threads.
        unsafe { launch.launch(copy_launch_config(n)) }
    }

    /// Enqueues `copy` of the first `n` bytes on the GPU's stream (a
    /// pageable copy returns once the driver has taken or delivered the
    /// bytes; the others return at once).
    ///
    /// # Errors
    /// [`Error::Size`] past the buffers; the driver's errors.
    // ANCHOR: enqueue
    pub fn enqueue(&mut self, copy: Copy, n: usize) -> Result<()> {
        self.size_ok(n)?;
        let stream = &self.gpu.stream;
        match copy {
            Copy::HtodPageable => stream
                .memcpy_htod(&self.pageable_src[..n], &mut self.a.slice_mut(..n))
                .map_err(driver("cuMemcpyHtoDAsync (pageable)")),
            Copy::HtodPinned => {
                // The first n bytes of the pinned source, as a plain slice:
                // the stream orders the copy after everything before it.
                let src = self
                    .pinned_src
                    .as_slice()
                    .map_err(driver("cuEventSynchronize"))?;
                stream
                    .memcpy_htod(&src[..n], &mut self.a.slice_mut(..n))
                    .map_err(driver("cuMemcpyHtoDAsync (pinned)"))
            }
            Copy::DtohPageable => stream
                .memcpy_dtoh(&self.a.slice(..n), &mut self.pageable_dst[..n])
                .map_err(driver("cuMemcpyDtoHAsync (pageable)")),
            Copy::DtohPinned => {
                let dst = self
                    .pinned_dst
                    .as_mut_slice()
                    .map_err(driver("cuEventSynchronize"))?;
                stream
                    .memcpy_dtoh(&self.a.slice(..n), &mut dst[..n])
                    .map_err(driver("cuMemcpyDtoHAsync (pinned)"))
            }
            Copy::DtodEngine => stream
                .memcpy_dtod(&self.a.slice(..n), &mut self.b.slice_mut(..n))
                .map_err(driver("cuMemcpyDtoDAsync")),
            Copy::DtodKernel => self.launch_copy(n),
        }
    }
    // ANCHOR_END: enqueue

    /// Fills the first `n` bytes of device buffer `b` (or `a`) with 0xFF.
    fn poison_device(&mut self, which_b: bool, n: usize) -> Result<()> {
        let stream = self.gpu.stream.clone();
        let buf = if which_b { &mut self.b } else { &mut self.a };
        let mut view = buf.slice_mut(..n);
        let (ptr, _record) = view.device_ptr_mut(&stream);
        // SAFETY: `ptr` addresses n bytes of this context's memory.
        unsafe { cudarc::driver::result::memset_d8_async(ptr, 0xFF, n, stream.cu_stream()) }
            .call("cuMemsetD8Async")
    }

    /// Checks `copy` over the first `n` bytes by a round trip whose every
    /// destination was poisoned with 0xFF first:
    /// - host to device: the copy into `a`, then `a` back to the host by
    ///   the other kind of host memory;
    /// - device to host: `a` loaded by the other kind, then the copy;
    /// - device to device: `a` loaded, the copy into `b`, `b` back.
    ///
    /// The bytes that come back must be the source's, every one, and the
    /// [`GUARD_BYTES`] after them (poisoned with the rest) still 0xFF: the
    /// read-back covers n + GUARD_BYTES. Returns the failure (if any) and
    /// the bytes that came back.
    pub fn check(&mut self, copy: Copy, n: usize) -> Result<(Option<Failure>, Vec<u8>)> {
        self.size_ok(n)?;
        let name = copy.key();
        let m = n + GUARD_BYTES;
        // Step 1: the pattern into `a` (poisoned first, guard included).
        self.poison_device(false, m)?;
        let load = match copy {
            Copy::HtodPageable => Copy::HtodPageable,
            Copy::HtodPinned => Copy::HtodPinned,
            Copy::DtohPageable => Copy::HtodPinned,
            _ => Copy::HtodPageable,
        };
        self.enqueue(load, n)?;
        // Step 2: device to device, where that is the copy checked.
        if copy.on_device() {
            self.poison_device(true, m)?;
            self.enqueue(copy, n)?;
        }
        // Step 3: back to the host, into a poisoned destination.
        let from_b = copy.on_device();
        let back_pinned = matches!(copy, Copy::HtodPageable | Copy::DtohPinned);
        self.gpu.sync_after(name)?;
        let got: Vec<u8> = if back_pinned {
            let dst = self
                .pinned_dst
                .as_mut_slice()
                .map_err(driver("cuEventSynchronize"))?;
            dst[..m].fill(0xFF);
            let src = if from_b { &self.b } else { &self.a };
            self.gpu
                .stream
                .memcpy_dtoh(&src.slice(..m), &mut dst[..m])
                .map_err(driver("cuMemcpyDtoHAsync (pinned)"))?;
            self.gpu.sync_after(name)?;
            dst[..m].to_vec()
        } else {
            self.pageable_dst[..m].fill(0xFF);
            let src = if from_b { &self.b } else { &self.a };
            self.gpu
                .stream
                .memcpy_dtoh(&src.slice(..m), &mut self.pageable_dst[..m])
                .map_err(driver("cuMemcpyDtoHAsync (pageable)"))?;
            self.gpu.sync_after(name)?;
            self.pageable_dst[..m].to_vec()
        };
        let want = |i: usize| if i < n { self.pageable_src[i] } else { 0xFF };
        let failure = (0..m).find(|&i| got[i] != want(i)).map(|i| Failure {
            kernel: name,
            detail: if i < n {
                format!(
                    "{n} bytes: byte {i} came back as {:#04x}, want {:#04x}{} (a round trip through the copy)",
                    got[i],
                    want(i),
                    if got[i] == 0xFF { ": never written" } else { "" }
                )
            } else {
                format!(
                    "{n} bytes: byte {i}, {} past the end, was written ({:#04x}); it must stay poisoned (0xff)",
                    i - n + 1,
                    got[i]
                )
            },
        });
        Ok((failure, got))
    }

    /// Times `copy` of the first `n` bytes with `plan` (CUDA events around
    /// each batch on the stream).
    pub fn time(&mut self, copy: Copy, n: usize, plan: Plan) -> Result<Timing> {
        self.size_ok(n)?;
        let gpu = self.gpu;
        timing::time_kernel(gpu, copy.key(), plan, || self.enqueue(copy, n))
    }
}

impl Twinned for Bandwidth<'_> {
    type Kernel = Kernel;

    fn kernels(&mut self) -> &mut KernelSet<Kernel> {
        &mut self.kernels
    }

    fn check(&mut self, _kernel: Kernel) -> Result<(Vec<Failure>, Vec<u64>)> {
        let (failure, got) = Bandwidth::check(self, Copy::DtodKernel, CHECK_BYTES)?;
        Ok((
            failure.into_iter().collect(),
            got.into_iter().map(u64::from).collect(),
        ))
    }

    fn time(&mut self, _kernel: Kernel, plan: Plan) -> Result<Timing> {
        let n = self.bytes;
        Bandwidth::time(self, Copy::DtodKernel, n, plan)
    }
}

/// The seed's protocol for its host memcpy: 3 warm-up copies, then 20 timed
/// (each its own sample here).
pub const SEED_CPU_PLAN: Plan = Plan {
    warmups: 3,
    batches: 20,
    launches_per_batch: 1,
    flush_l2: false,
};

/// The lesson's sizes: the bytes every copy moves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sizes {
    /// Bytes of every timed copy.
    pub timed_bytes: usize,
    /// The odd correctness size.
    pub check_bytes: usize,
}

impl Sizes {
    /// A full run on `info`'s GPU: [`SEED_TIMED_BYTES`] doubled until a
    /// copy's source is at least 4x the L2; `quick`: the check size.
    pub fn new(info: &crate::gpu::DeviceInfo, quick: bool) -> Sizes {
        Sizes {
            timed_bytes: if quick {
                CHECK_BYTES
            } else {
                grown(SEED_TIMED_BYTES, 1, info.l2_bytes)
            },
            check_bytes: CHECK_BYTES,
        }
    }
}

impl LessonSizes for Sizes {
    fn for_gpu(info: &crate::gpu::DeviceInfo, quick: bool) -> Result<Sizes> {
        Ok(Sizes::new(info, quick))
    }
    fn streams(&self) -> Vec<Stream> {
        vec![Stream {
            name: "copy source, destination",
            bytes: self.timed_bytes,
        }]
    }

    /// Two device buffers; the two pinned host buffers are host memory.
    fn device_bytes(&self) -> usize {
        2 * (self.timed_bytes + GUARD_BYTES)
    }
}

/// The failure of a host memcpy of the first `n` bytes of `src` into a
/// `dst` poisoned with 0xFF before: a byte below `n` that differs from the
/// source, or a byte past `n` that is no longer 0xFF. `None` when the copy
/// is right.
pub fn host_copy_failure(src: &[u8], dst: &[u8], n: usize) -> Option<Failure> {
    let i = (0..dst.len()).find(|&i| dst[i] != if i < n { src[i] } else { 0xFF })?;
    Some(Failure {
        kernel: "htoh_memcpy",
        detail: if i < n {
            format!(
                "{n} bytes: byte {i} is {:#04x} after the timed host memcpy, want {:#04x}",
                dst[i], src[i]
            )
        } else {
            format!(
                "{n} bytes: byte {i}, {} past the end, was written ({:#04x}) by the timed host memcpy",
                i - n + 1,
                dst[i]
            )
        },
    })
}

/// The section that sets each copy of `rows` (the timed copies) against its
/// limit: device-to-device against the derived DRAM limit `dram` (bytes/s;
/// `None` where the driver's attributes leave it unknown, and then no share
/// of it is printed), host-device against the link. The link compared is `current` (read
/// after the copies) unless a copy already beat it (the link had trained
/// down to save power), then `max`; `None` where neither is known. Also
/// returns the link compared.
pub fn limits_section(
    rows: &[Row],
    dram: Option<f64>,
    current: Option<query::PcieLink>,
    max: Option<query::PcieLink>,
    pci_address: &str,
    uses_host_page_tables: bool,
) -> (Section, Option<query::PcieLink>) {
    let gbs = |key: &str| {
        rows.iter()
            .find(|r| r.key == key)
            .and_then(Row::gb_per_s)
            .unwrap_or(f64::NAN)
    };
    // "N%" of the derived DRAM limit, or "an unknown share".
    let share = |gb_s: f64| match dram {
        Some(d) => format!("{:.1}%", 100.0 * gb_s * 1e9 / d),
        None => "an unknown share".to_string(),
    };
    // "N% of the derived DRAM D GB/s", or that the limit is unknown.
    let of_dram = |gb_s: f64| match dram {
        Some(d) => format!("{} of the derived DRAM {:.1} GB/s", share(gb_s), d / 1e9),
        None => format!(
            "{} of the derived DRAM limit, unknown here (the driver reports a memory clock or bus width of 0)",
            share(gb_s)
        ),
    };
    let mut limits = Section::new("Against the limits");
    for copy in [Copy::DtodEngine, Copy::DtodKernel] {
        limits.line(format!(
            "{:<18} {:>8.1} GB/s = {}",
            copy.key(),
            gbs(copy.key()),
            of_dram(gbs(copy.key()))
        ));
    }
    // The link to compare with: the one read after the copies, unless a
    // copy already beat it (the link was read after it had trained down to
    // save power), then the device's maximum.
    let best_host = [
        Copy::HtodPageable,
        Copy::HtodPinned,
        Copy::DtohPageable,
        Copy::DtohPinned,
    ]
    .iter()
    .map(|c| gbs(c.key()) * 1e9)
    .fold(0.0, f64::max);
    let link = match (current, max) {
        (Some(c), Some(m)) if best_host > c.bytes_per_s() => Some(m),
        (c, m) => c.or(m),
    };
    let link_text = match link {
        Some(link) => {
            let limit = link.bytes_per_s();
            for copy in [
                Copy::HtodPageable,
                Copy::HtodPinned,
                Copy::DtohPageable,
                Copy::DtohPinned,
            ] {
                limits.line(format!(
                    "{:<18} {:>8.1} GB/s = {:.1}% of the link's {:.1} GB/s per direction ({} of the DRAM limit)",
                    copy.key(),
                    gbs(copy.key()),
                    100.0 * gbs(copy.key()) * 1e9 / limit,
                    limit / 1e9,
                    share(gbs(copy.key()))
                ));
            }
            format!(
                "Link (sysfs, {}): PCIe gen {} x{} at {:.1} GT/s{}; per direction {:.1} GB/s after line coding ({:.4}), \
                 before packet headers.",
                pci_address,
                link.generation(),
                link.width,
                link.gt_per_s,
                match (current, max) {
                    (Some(c), Some(m)) if c == m => {
                        " (read after the copies; the device's maximum too)".to_string()
                    }
                    (Some(c), Some(m)) if c == link => format!(
                        " (read after the copies; the device's maximum is {:.1} GT/s x{})",
                        m.gt_per_s, m.width
                    ),
                    (Some(c), _) if c == link => " (read after the copies)".to_string(),
                    (Some(c), _) => format!(
                        " (the device's maximum: after the copies the link showed {:.1} GT/s x{}, a \
                         power-saving state that a copy had already beaten)",
                        c.gt_per_s, c.width
                    ),
                    _ => " (the device's maximum; the current link was not readable)".to_string(),
                },
                limit / 1e9,
                link.encoding()
            )
        }
        None => {
            for copy in [
                Copy::HtodPageable,
                Copy::HtodPinned,
                Copy::DtohPageable,
                Copy::DtohPinned,
            ] {
                limits.line(format!(
                    "{:<18} {:>8.1} GB/s = {} of the DRAM limit (the link is the bound, and unknown here)",
                    copy.key(),
                    gbs(copy.key()),
                    share(gbs(copy.key()))
                ));
            }
            format!(
                "Link: the driver does not report it and sysfs has no link for {} here{}: the host <-> device rows have no \
             limit to be compared with.",
                pci_address,
                if uses_host_page_tables {
                    " (the GPU reads host page tables: likely NVLink-C2C, as on Grace Hopper)"
                } else {
                    ""
                }
            )
        }
    };
    limits.line(link_text);
    let htod = gbs(Copy::HtodPinned.key()) / gbs(Copy::HtodPageable.key());
    let dtoh = gbs(Copy::DtohPinned.key()) / gbs(Copy::DtohPageable.key());
    // The fastest of `copies` (the first on a tie).
    let fastest = |copies: &[Copy]| {
        copies
            .iter()
            .copied()
            .reduce(|best, c| {
                if gbs(c.key()) > gbs(best.key()) {
                    c
                } else {
                    best
                }
            })
            .expect("a non-empty list")
    };
    let host = fastest(&[
        Copy::HtodPageable,
        Copy::HtodPinned,
        Copy::DtohPageable,
        Copy::DtohPinned,
    ]);
    let device = fastest(&[Copy::DtodEngine, Copy::DtodKernel]);
    // Per byte copied: the device rows count each byte twice.
    let speedup = (gbs(device.key()) / 2.0) / gbs(host.key());
    limits.reading = Some(format!(
        "Pinned against pageable: host -> device {htod:.2}x, device -> host {dtoh:.2}x{}. Copy engine against \
         kernel: {:.2}x. A copy within device memory finishes {speedup:.0}x sooner than the same bytes across the \
         link ({} {:.1} GB/s counted 2n, against {} {:.1} GB/s counted n){}",
        if htod > 1.0 && dtoh > 1.0 {
            " (a pageable copy goes through the driver's own pinned staging buffer, one more copy on the host)"
        } else {
            " (pinned was not faster in both directions in this run)"
        },
        gbs(Copy::DtodEngine.key()) / gbs(Copy::DtodKernel.key()),
        device.key(),
        gbs(device.key()),
        host.key(),
        gbs(host.key()),
        if speedup > 1.0 {
            ": data that stays on the GPU skips the link."
        } else {
            "."
        }
    ));
    (limits, link)
}

/// The seed's claim about its host memcpy figure: a GPU's memory bandwidth
/// "typically runs one to two orders of magnitude higher", a ratio of 10
/// to 100 (seed 000, Worked Example 19.4.2's closing paragraph).
pub const SEED_CLAIM_RATIO: (f64, f64) = (10.0, 100.0);

/// Where `ratio` falls against the seed's one to two orders of magnitude,
/// in words, and whether the claim holds (`None` without a ratio).
fn claim_verdict(ratio: f64) -> (String, Option<bool>) {
    let (low, high) = SEED_CLAIM_RATIO;
    if !(ratio.is_finite() && ratio > 0.0) {
        (
            "no ratio: a row is missing or timed at zero".to_string(),
            None,
        )
    } else if ratio < low {
        (
            "under one order of magnitude: the claim does not hold here, the gap is smaller than it says".to_string(),
            Some(false),
        )
    } else if ratio <= high {
        (
            "within one to two orders of magnitude: the claim holds here".to_string(),
            Some(true),
        )
    } else {
        (
            "over two orders of magnitude: the claim does not hold here, the gap is larger than it says".to_string(),
            Some(false),
        )
    }
}

/// The seed's claim read against the run: the fastest device-to-device
/// copy of `rows` (GB/s counted 2n, read and write, the way a GPU's memory
/// bandwidth is quoted) over the host memcpy row `htoh_memcpy` (counted n,
/// the way the seed counted it), as a ratio and in orders of magnitude
/// (log10), with the verdict against [`SEED_CLAIM_RATIO`]; then the same
/// two copies counted alike (bytes copied per second on both sides, half
/// the ratio). Returns the section and its facts for the JSON.
pub fn seed_claim_section(rows: &[Row]) -> (Section, serde_json::Value) {
    let gbs = |key: &str| {
        rows.iter()
            .find(|r| r.key == key)
            .and_then(Row::gb_per_s)
            .unwrap_or(f64::NAN)
    };
    let device = [Copy::DtodEngine, Copy::DtodKernel]
        .into_iter()
        .reduce(|best, c| {
            if gbs(c.key()) > gbs(best.key()) {
                c
            } else {
                best
            }
        })
        .expect("two device copies");
    let (device_gb_s, host_gb_s) = (gbs(device.key()), gbs("htoh_memcpy"));
    let ratio = device_gb_s / host_gb_s;
    // Both sides as bytes copied per second: the device row counts each
    // byte twice.
    let alike = ratio / 2.0;
    let (verdict, holds) = claim_verdict(ratio);
    let (verdict_alike, holds_alike) = claim_verdict(alike);
    let (low, high) = SEED_CLAIM_RATIO;
    let mut section = Section::new(
        "The seed's claim: GPU memory bandwidth one to two orders of magnitude above the host memcpy",
    );
    section.line(format!(
        "The seed measured only a host memcpy and said a GPU's memory bandwidth typically runs one to two orders of \
         magnitude higher ({low:.0}x to {high:.0}x). Both are measured here."
    ));
    section.line(format!(
        "{} {device_gb_s:.1} GB/s (counted 2n: read and write, as GPU memory bandwidth is quoted) / htoh_memcpy \
         {host_gb_s:.1} GB/s (counted n, as the seed counts it) = {ratio:.0}x, 10^{:.2}",
        device.key(),
        ratio.log10()
    ));
    section.line(format!(
        "counted alike (bytes copied per second on both sides): {alike:.0}x, 10^{:.2}",
        alike.log10()
    ));
    section.reading = Some(format!(
        "On this machine the ratio is {ratio:.0}x, {verdict}. Counted alike it is {alike:.0}x, {verdict_alike}{}",
        if holds == holds_alike {
            ".".to_string()
        } else {
            ": the verdict turns on how the bytes are counted.".to_string()
        }
    ));
    let facts = json!({
        "claim_ratio": [low, high], "device_row": device.key(), "device_gb_s": device_gb_s,
        "host_row": "htoh_memcpy", "host_gb_s": host_gb_s, "ratio": ratio, "orders_of_magnitude": ratio.log10(),
        "holds": holds, "ratio_counted_alike": alike, "holds_counted_alike": holds_alike,
    });
    (section, facts)
}

/// The CUDA C twin of the copy kernel. The copy engine's and the host
/// copies have no kernel, so no twin: they are driver calls on both sides.
pub const CUDA_C_SOURCE: &str = include_str!("bandwidth.cu");

/// The bandwidth lesson as `lab` runs it.
pub struct BandwidthLesson;

impl lesson::Lesson for BandwidthLesson {
    const NAME: &'static str = "bandwidth";
    const ABOUT: &'static str = "Chapter 19.4: host-device copies (pageable, pinned), device-to-device by the copy engine and by a kernel, in GB/s; the device query; the seed's orders-of-magnitude claim read.";
    type Kernel = Kernel;
    type Sizes = Sizes;
    type Twins<'g> = Bandwidth<'g>;

    fn block_sizes() -> serde_json::Value {
        json!({COPY_KERNEL: THREADS_PER_BLOCK})
    }

    /// What NVRTC compiles: the vector width as a `#define`, then the twin.
    fn cuda_c() -> String {
        format!("#define VECTOR_BYTES {VECTOR_BYTES}\n{CUDA_C_SOURCE}")
    }

    /// Every copy checked at the odd size and the timed size; then the device
    /// query, the timed copies and what they reach of each limit.
    fn run(
        gpu: &Gpu,
        sizes: &Sizes,
        context: Context,
        options: &RunOptions<'_>,
    ) -> Result<Outcome<Box<dyn lesson::Report>>> {
        let plan = options.plan;
        let n = sizes.timed_bytes;
        let mut lesson = Bandwidth::new(gpu, n)?;
        let mut failures = Vec::new();
        // The check size, and the timed size where it is another (not in the
        // sanitizer's quick run).
        let sizes: &[usize] = if n == CHECK_BYTES {
            &[CHECK_BYTES]
        } else {
            &[CHECK_BYTES, n]
        };
        for copy in Copy::ALL {
            for &size in sizes {
                failures.extend(lesson.check(copy, size)?.0);
            }
        }
        if !failures.is_empty() {
            return Ok(Outcome::Failed(failures));
        }

        let q = query::DeviceQuery::of(gpu)?;
        let mut device = Section::new("Device query (cuDeviceGetCount, cuDeviceGetAttribute)");
        for line in query::lines(&gpu.info, &q) {
            device.line(line);
        }

        let mib = n as f64 / (1u64 << 20) as f64;
        let mut copies = Section::new(format!("Copies of {mib:.0} MiB, CUDA events"));
        copies.line(format!(
            "Every copy to or from the device checked first: the bytes that came back through a round trip equal the \
             source's, at {} bytes, each destination poisoned with 0xFF before. The host memcpy is checked after its \
             timing, into a destination poisoned before it.",
            sizes
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(" and ")
        ));
        copies.line(
            "Bytes counted: host <-> device n (each byte crosses the link once); device -> device 2n (each byte read and \
             written once in DRAM: the traffic the DRAM limit bounds, as CUDA's bandwidthTest counts it); host memcpy n (as \
             the seed counts it). GB = 10^9 bytes (the seed divided by 2^30)."
                .to_string(),
        );
        for copy in Copy::ALL {
            let t = lesson.time(copy, n, plan)?;
            copies
                .rows
                .push(Row::new(copy.key(), copy.label(), t).bytes(copy.counted_bytes(n) as f64));
        }
        // The seed's host-to-host memcpy, on the CPU, into a poisoned
        // destination that must hold the source afterwards (the timed closure
        // copied the n bytes its row counts, and no more).
        let (src, dst) = (&lesson.pageable_src, &mut lesson.pageable_dst);
        dst.fill(0xFF);
        let t = time_on_cpu(SEED_CPU_PLAN, || {
            dst[..n].copy_from_slice(std::hint::black_box(&src[..n]));
        });
        std::hint::black_box(&dst);
        if let Some(failure) = host_copy_failure(src, dst, n) {
            return Ok(Outcome::Failed(vec![failure]));
        }
        copies.line(format!(
            "The host memcpy row is timed by the host clock with the seed's protocol, {} warm-up copies then {} timed \
             copies, each copy its own sample (not the GPU rows' counts given at the foot).",
            SEED_CPU_PLAN.warmups, SEED_CPU_PLAN.batches
        ));
        copies.rows.push(
            Row::new(
                "htoh_memcpy",
                format!(
                    "host -> host memcpy (the seed's protocol: {} warm-up + {} timed)",
                    SEED_CPU_PLAN.warmups, SEED_CPU_PLAN.batches
                ),
                t,
            )
            .bytes(n as f64)
            .on_cpu(),
        );

        // What each reaches of its limit.
        let (current, max) = query::read_link(&q.pci_address);
        let dram = gpu.info.derived_dram_bytes_per_s();
        let (limits, link) = limits_section(
            &copies.rows,
            dram,
            current,
            max,
            &q.pci_address,
            q.uses_host_page_tables,
        );
        // Seed 002's reading: the host <-> device copies against the link
        // compared above (unknown: no reading), not against DRAM.
        let host_copies = [
            Copy::HtodPageable,
            Copy::HtodPinned,
            Copy::DtohPageable,
            Copy::DtohPinned,
        ];
        for row in copies.rows.iter_mut() {
            if host_copies.iter().any(|c| c.key() == row.key) {
                *row = row.clone().against_gb_per_s(
                    "the PCIe link (per direction)",
                    link.map(|l| l.bytes_per_s() / 1e9),
                );
            }
        }
        let (claim, claim_facts) = seed_claim_section(&copies.rows);

        SectionReport::passed(
            context,
            Findings {
                sections: vec![device, copies, limits, claim],
                facts: json!({
                    "device": gpu.info, "query": q,
                    "derived_dram_bytes_per_s": dram, "derived_fp32_flop_per_s": gpu.info.derived_fp32_flop_per_s(),
                    "link_current": current, "link_max": max,
                    "link_compared": link, "link_bytes_per_s": link.map(|l| l.bytes_per_s()),
                    "bytes": n, "check_bytes": CHECK_BYTES,
                    "counting": {"htod": "n", "dtoh": "n", "dtod": "2n (read + write)", "htoh": "n (the seed's rule)"},
                    "seed_claim": claim_facts,
                }),
            },
        )
    }

    fn twins<'g>(gpu: &'g Gpu, sizes: &Sizes) -> Result<Bandwidth<'g>> {
        Bandwidth::new(gpu, sizes.timed_bytes.max(CHECK_BYTES))
    }
}
