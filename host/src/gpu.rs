//! The GPU a lesson runs on: the driver, one device, one stream, the
//! embedded PTX loaded as a module, and what the device reports about itself.

use std::sync::Arc;

use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut,
};
use cudarc::nvrtc::Ptx;
use serde::Serialize;

use crate::error::{DriverContext, Error, Result};
use crate::ptx;

/// What the driver reports about a device, read once when it is opened.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceInfo {
    /// The device index.
    pub ordinal: usize,
    /// The marketing name, for example `NVIDIA H200`.
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors.
    pub sms: u32,
    /// L2 cache, bytes.
    pub l2_bytes: usize,
    /// Device memory, bytes.
    pub total_memory_bytes: usize,
    /// Peak SM clock, kHz (`CU_DEVICE_ATTRIBUTE_CLOCK_RATE`); 0 where the
    /// driver does not report it (then every figure derived from it is
    /// unknown).
    pub sm_clock_khz: u32,
    /// Peak memory clock, kHz (`CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE`); 0
    /// where the driver does not report it.
    pub memory_clock_khz: u32,
    /// Global memory bus width, bits; 0 where the driver does not report it.
    pub memory_bus_bits: u32,
    /// Resident threads an SM holds at most.
    pub max_threads_per_sm: u32,
    /// 32-bit registers an SM holds.
    pub regs_per_sm: u32,
    /// Shared memory one block may use when it opts in, bytes
    /// (`MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`).
    pub shared_per_block_optin: usize,
    /// Shared memory of one SM, bytes (`MAX_SHARED_MEMORY_PER_MULTIPROCESSOR`).
    pub shared_per_sm: usize,
    /// Resident blocks an SM holds at most (`MAX_BLOCKS_PER_MULTIPROCESSOR`).
    pub max_blocks_per_sm: u32,
    /// The CUDA version the driver supports, `major.minor`.
    pub driver_cuda: String,
    /// The NVIDIA kernel module's version (for example `580.159.04`), where
    /// `/proc/driver/nvidia/version` is readable.
    pub driver_version: Option<String>,
    /// The device's UUID as `nvidia-smi -L` writes it
    /// (`GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, from `cuDeviceGetUuid`):
    /// which physical GPU this is, where two share a name. `None` where the
    /// driver did not answer.
    pub uuid: Option<String>,
    /// The device's PCI bus id, `domain:bus:device.function` in hex
    /// (`cuDeviceGetPCIBusId`); `None` where the driver did not answer.
    pub pci_bus_id: Option<String>,
    /// CUDA's module loading mode for this process, `lazy` or `eager`
    /// (`cuModuleGetLoadingMode`, set by `CUDA_MODULE_LOADING`); `None`
    /// where the driver did not answer.
    pub module_loading: Option<String>,
}

/// FP32 results per clock per SM (the FMA lanes), by compute capability.
///
/// Source: the CUDA C++ Programming Guide, "Arithmetic Instructions",
/// throughput table, row "32-bit floating-point add, multiply, multiply-add".
/// Returns `None` for an architecture the table here does not list.
pub fn fp32_lanes_per_sm(cc: (i32, i32)) -> Option<u32> {
    match cc {
        (5, _) | (6, 1) | (6, 2) => Some(128),
        (6, 0) | (7, _) | (8, 0) => Some(64),
        (8, 6) | (8, 7) | (8, 9) | (9, 0) | (10, _) | (11, _) | (12, _) => Some(128),
        _ => None,
    }
}

/// Dense BF16 and FP16 tensor-core FLOP per clock per SM (the whitepapers
/// give both the same dense rate), products summed in FP32 (an FMA counts
/// 2), by compute capability, where NVIDIA publishes the figures it follows
/// from: the peak dense rate over SMs x boost clock.
///
/// - 8.0, 2048: the A100 SXM4, 312 TFLOP/s dense FP16 and BF16 on 108 SMs
///   at a 1410 MHz boost clock (312e12 / (108 x 1.41e9) = 2049), "NVIDIA
///   A100 Tensor Core GPU Architecture" whitepaper, 2020, table 1 and
///   "Third generation Tensor Cores" (1024 dense FP16/BF16 FMA a clock an
///   SM).
/// - 9.0, 4096: the H100 SXM5, 989.4 TFLOP/s dense FP16 and BF16 on 132
///   SMs at a 1830 MHz boost clock (989.4e12 / (132 x 1.83e9) = 4096),
///   "NVIDIA H100 Tensor Core GPU Architecture" whitepaper, 2022, table 3.
///   The H200 has the same GH100 SM.
///
/// `None` for every other compute capability: 7.5, 8.6 and 8.9 parts differ in their FP32-accumulate rate
/// between GeForce and data-centre products (the Turing whitepaper, 2018:
/// a T4 or a Quadro sums FP16 products in FP32 at the full rate, a GeForce
/// at half of it), and no figure is written down here for 10.x or 12.x.
pub fn tensor_flop_per_clock_per_sm(cc: (i32, i32)) -> Option<u32> {
    match cc {
        (8, 0) => Some(2048),
        (9, 0) => Some(4096),
        _ => None,
    }
}

/// Blocks of `threads` threads using `shared_bytes` of shared memory and
/// `regs_per_thread` registers that one SM of `info`'s GPU holds at once: a
/// model of the occupancy calculator for the GPU-profile test, where no
/// driver answers. The smallest of four limits: resident blocks, resident
/// threads, shared memory (each block also takes the 1 KiB the driver
/// reserves per block from compute capability 8.0 on) and registers
/// (allocated per warp in units of 256). Source: the CUDA C++ Programming
/// Guide, "Technical Specifications per Compute Capability" and the
/// occupancy section of the CUDA C++ Best Practices Guide. The GPU tests
/// hold it against the driver's `cuOccupancyMaxActiveBlocksPerMultiprocessor`.
pub fn modeled_blocks_per_sm(
    info: &DeviceInfo,
    threads: u32,
    shared_bytes: usize,
    regs_per_thread: u32,
) -> u32 {
    let threads = threads.max(1);
    let by_blocks = info.max_blocks_per_sm;
    let by_threads = info.max_threads_per_sm / threads;
    let reserved = if info.compute_capability >= (8, 0) {
        1024
    } else {
        0
    };
    let by_shared = if shared_bytes == 0 {
        u32::MAX
    } else {
        (info.shared_per_sm / (shared_bytes + reserved)) as u32
    };
    let warps = threads.div_ceil(32);
    let per_warp = (regs_per_thread * 32).div_ceil(256) * 256;
    let by_regs = info.regs_per_sm / (warps * per_warp).max(1);
    by_blocks.min(by_threads).min(by_shared).min(by_regs)
}

impl DeviceInfo {
    /// The theoretical DRAM bandwidth derived from the driver's attributes,
    /// bytes/s: memory clock x bus width x 2 (two transfers a clock, double
    /// data rate) / 8 bits. A derived figure, not a measurement and not the
    /// datasheet's: the measured copy ceiling is set beside it.
    ///
    /// `None` (unknown) where the driver reports a memory clock or a bus
    /// width of 0: some drivers and platforms do not report them, and a 0
    /// would make every share of this limit infinite.
    pub fn derived_dram_bytes_per_s(&self) -> Option<f64> {
        if self.memory_clock_khz == 0 || self.memory_bus_bits == 0 {
            return None;
        }
        Some(self.memory_clock_khz as f64 * 1e3 * self.memory_bus_bits as f64 * 2.0 / 8.0)
    }

    /// The theoretical FP32 rate derived from the driver's attributes,
    /// FLOP/s: SMs x FP32 lanes per SM x 2 (an FMA is two FLOP) x peak SM
    /// clock.
    ///
    /// `None` (unknown) where [`fp32_lanes_per_sm`] does not know the
    /// architecture, or the driver reports an SM clock or an SM count of 0.
    pub fn derived_fp32_flop_per_s(&self) -> Option<f64> {
        self.per_sm_per_clock(
            fp32_lanes_per_sm(self.compute_capability).map(|lanes| lanes as f64 * 2.0),
        )
    }

    /// The theoretical dense BF16 and FP16 tensor-core rate (FP32 sums)
    /// derived from the driver's attributes the way
    /// [`DeviceInfo::derived_fp32_flop_per_s`] is, FLOP/s: SMs x
    /// [`tensor_flop_per_clock_per_sm`] x peak SM clock
    /// (`CU_DEVICE_ATTRIBUTE_CLOCK_RATE`).
    ///
    /// `None` (unknown) where no per-SM rate is written down for the
    /// compute capability, or the driver reports an SM clock or an SM count
    /// of 0.
    pub fn derived_tensor_flop_per_s(&self) -> Option<f64> {
        self.per_sm_per_clock(tensor_flop_per_clock_per_sm(self.compute_capability).map(f64::from))
    }

    /// SMs x `per_clock` (FLOP a clock an SM) x the peak SM clock, FLOP/s:
    /// the one path every clock-derived compute limit takes. `None` where
    /// `per_clock` is, or the SM clock or SM count reads 0.
    fn per_sm_per_clock(&self, per_clock: Option<f64>) -> Option<f64> {
        if self.sm_clock_khz == 0 || self.sms == 0 {
            return None;
        }
        per_clock.map(|flop| self.sms as f64 * flop * self.sm_clock_khz as f64 * 1e3)
    }

    /// The ridge point of the derived limits, FLOP/byte: the derived FP32
    /// rate over the derived DRAM bandwidth; `None` where either is unknown.
    pub fn derived_ridge_flop_per_byte(&self) -> Option<f64> {
        Some(self.derived_fp32_flop_per_s()? / self.derived_dram_bytes_per_s()?)
    }
}

/// An open device: its primary context, a stream, and the lessons' module.
pub struct Gpu {
    /// The device's primary context.
    pub(crate) ctx: Arc<CudaContext>,
    /// The stream every launch, copy and event of a lesson goes on. Private
    /// to the crate: event tracking is off, which is sound only while every
    /// buffer is used on this one stream.
    pub(crate) stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    /// What the device reports about itself.
    pub info: DeviceInfo,
    /// Scratch of twice the L2, written to evict it (allocated on first use).
    flush: std::sync::OnceLock<CudaSlice<f32>>,
    /// The poisoned guards after every buffer [`Gpu::alloc`] made.
    pub guards: crate::guard::Guards,
}

impl Gpu {
    /// Opens device `ordinal` and loads the embedded PTX.
    ///
    /// # Errors
    /// [`Error::NoDriver`] where libcuda cannot be loaded (checked first,
    /// because cudarc panics on a missing library); [`Error::NoDevice`] for
    /// an index past the device count; [`Error::GpuTooOld`] where the PTX
    /// targets a newer architecture; [`Error::PtxRejected`] where the driver
    /// refuses the PTX.
    pub fn open(ordinal: usize) -> Result<Gpu> {
        // SAFETY: only tries to dlopen the driver library.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(Error::NoDriver);
        }
        match cudarc::driver::result::init() {
            Ok(()) => {}
            Err(e) if e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_NO_DEVICE => {
                return Err(Error::NoDevice { ordinal, count: 0 });
            }
            Err(source) => {
                return Err(Error::Driver {
                    call: "cuInit",
                    source,
                });
            }
        }
        let count = CudaContext::device_count().call("cuDeviceGetCount")?;
        if ordinal >= count.max(0) as usize {
            return Err(Error::NoDevice { ordinal, count });
        }
        let ctx = CudaContext::new(ordinal).call("cuDevicePrimaryCtxRetain")?;
        // One stream, and every buffer used on it only: cudarc's per-buffer
        // event tracking would record extra events around each launch.
        // SAFETY: no buffer of this context is ever used on another stream.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().call("cuStreamCreate")?;
        let info = query(&ctx, ordinal)?;

        let target = ptx::target_compute_capability();
        if info.compute_capability < target {
            return Err(Error::GpuTooOld {
                gpu: info.name.clone(),
                cc: info.compute_capability,
                target,
            });
        }
        let module =
            ctx.load_module(Ptx::from_src(ptx::PTX))
                .map_err(|source| Error::PtxRejected {
                    isa: ptx::isa_version().to_string(),
                    target: ptx::target().to_string(),
                    driver: info.driver_cuda.clone(),
                    source,
                })?;
        Ok(Gpu {
            ctx,
            stream,
            module,
            info,
            flush: std::sync::OnceLock::new(),
            guards: crate::guard::Guards::default(),
        })
    }

    /// The kernel exported as `symbol` from the embedded PTX.
    ///
    /// # Errors
    /// [`Error::Bug`] where the PTX exports no such kernel (the host names
    /// a kernel `kernels-gpu` does not export); the driver's error where
    /// loading it fails otherwise (under lazy loading this call loads it).
    pub fn function(&self, symbol: &str) -> Result<CudaFunction> {
        self.module.load_function(symbol).map_err(|source| {
            if source.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_NOT_FOUND {
                Error::Bug(format!("the kernels' PTX exports no kernel `{symbol}`"))
            } else {
                Error::Driver {
                    call: "cuModuleGetFunction",
                    source,
                }
            }
        })
    }

    /// Fails with [`Error::OutOfMemory`] unless `needed` bytes are free now.
    /// Called before allocating, so a GPU too small for a lesson's sizes gets
    /// a sentence instead of an allocation error halfway through.
    pub fn require_free_memory(&self, needed: usize, what: &str) -> Result<()> {
        let (free, _total) = self.ctx.mem_get_info().call("cuMemGetInfo")?;
        if needed > free {
            return Err(Error::OutOfMemory {
                what: what.to_string(),
                needed,
                free,
            });
        }
        Ok(())
    }

    /// Loads `ptx` (a lesson's CUDA C twins, compiled by NVRTC) as a module
    /// of its own and returns its kernels named `symbols`, in that order.
    ///
    /// # Errors
    /// The driver refusing the PTX, or a symbol missing from it.
    pub fn load_twins(&self, ptx: &str, symbols: &[&str]) -> Result<Vec<CudaFunction>> {
        self.load_functions(
            ptx,
            symbols,
            "cuModuleLoadData (the CUDA C twins)",
            "cuModuleGetFunction (a CUDA C twin)",
        )
    }

    /// Loads `ptx` as a module of its own and returns its kernels named
    /// `symbols`, in that order; `load` and `get` name the two driver calls
    /// in an error (which module, which kernel).
    ///
    /// # Errors
    /// The driver refusing the PTX, or a symbol missing from it.
    pub fn load_functions(
        &self,
        ptx: &str,
        symbols: &[&str],
        load: &'static str,
        get: &'static str,
    ) -> Result<Vec<CudaFunction>> {
        let module = self
            .ctx
            .load_module(Ptx::from_src(ptx))
            .map_err(|source| Error::Driver { call: load, source })?;
        symbols
            .iter()
            .map(|s| {
                module
                    .load_function(s)
                    .map_err(|source| Error::Driver { call: get, source })
            })
            .collect()
    }

    /// A device buffer of `len` floats, contents undefined until written
    /// (every f32 bit pattern is a valid f32, so reading it is defined).
    pub fn alloc_f32(&self, len: usize) -> Result<CudaSlice<f32>> {
        // SAFETY: any bits are a valid f32; every lesson fills or 0xFF-poisons
        // a buffer before a kernel's output is read from it.
        unsafe { self.alloc::<f32>(len) }
    }

    /// A device buffer of `len` elements of `T`, contents undefined, with a
    /// poisoned guard of [`crate::guard::GUARD_BYTES`] past its end that a
    /// check reads back (see [`crate::guard`]; none under
    /// [`crate::guard::NO_GUARDS_ENV`]). Every buffer a kernel of the lab
    /// writes comes from here.
    ///
    /// # Errors
    /// The driver's allocation or memset error.
    ///
    /// # Safety
    /// The contents are undefined: `T` must be valid for any bits, or the
    /// buffer written before it is read.
    pub unsafe fn alloc<T: cudarc::driver::DeviceRepr>(&self, len: usize) -> Result<CudaSlice<T>> {
        const {
            assert!(
                size_of::<T>() > 0,
                "a buffer of zero-sized elements has no end to guard"
            )
        };
        let size = size_of::<T>();
        let extra = self.guards.bytes().div_ceil(size);
        // SAFETY: passed on from the caller.
        let whole = unsafe { self.stream.alloc::<T>(len + extra) }.call("cuMemAllocAsync")?;
        let base = whole.leak();
        // SAFETY: `base` is this stream's allocation of `len + extra`
        // elements, now owned by the returned buffer alone (leaked above),
        // which frees the whole allocation, guard included, when dropped
        // (on an error below too).
        let buf = unsafe { self.stream.upgrade_device_ptr::<T>(base, len) };
        if extra > 0 {
            // SAFETY: the allocation holds (len + extra) elements, so the
            // guard's extra elements start len elements in.
            unsafe {
                cudarc::driver::result::memset_d8_async(
                    base + (len * size) as u64,
                    crate::guard::POISON,
                    extra * size,
                    self.stream.cu_stream(),
                )
            }
            .call("cuMemsetD8Async (a buffer's guard)")?;
            self.guards.register(base, len * size);
        }
        Ok(buf)
    }

    /// As [`Gpu::alloc`], every byte of the buffer 0.
    ///
    /// # Errors
    /// As [`Gpu::alloc`].
    pub fn alloc_zeros<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
        &self,
        len: usize,
    ) -> Result<CudaSlice<T>> {
        // SAFETY: zeroed before anything reads it, and `T` is valid as zero
        // bits.
        let mut buf = unsafe { self.alloc::<T>(len) }?;
        self.fill_bytes(&mut buf, 0)?;
        Ok(buf)
    }

    /// Sets every byte of `buf` (a buffer or a view of any element type) to
    /// `byte` (0xFF makes every f32, f64 and f16 a NaN, so an element a kernel
    /// never writes fails its check).
    pub fn fill_bytes<T, B: DevicePtrMut<T>>(&self, buf: &mut B, byte: u8) -> Result<()> {
        let bytes = buf.num_bytes();
        let (ptr, _record) = buf.device_ptr_mut(&self.stream);
        // SAFETY: `ptr` addresses `bytes` bytes of this context's memory.
        unsafe {
            cudarc::driver::result::memset_d8_async(ptr, byte, bytes, self.stream.cu_stream())
        }
        .call("cuMemsetD8Async")
    }

    /// Copies host floats into `dst` (a buffer or a view of the same length).
    pub fn upload<D: DevicePtrMut<f32>>(&self, src: &[f32], dst: &mut D) -> Result<()> {
        self.stream.memcpy_htod(src, dst).call("cuMemcpyHtoDAsync")
    }

    /// A new device buffer holding `host` rounded to bf16 (round to
    /// nearest even, `half::bf16::from_f32`), as the 16-bit patterns
    /// tensor-core kernels and cuBLAS read: exact for values with at most 8
    /// significant bits, such as the GEMM fills.
    ///
    /// # Errors
    /// The driver's allocation or copy error.
    pub fn upload_bf16(&self, host: &[f32]) -> Result<CudaSlice<u16>> {
        self.upload_half(host, crate::cublas::Half::Bf16)
    }

    /// A new device buffer holding `host` rounded to `half` (bf16 or f16,
    /// round to nearest even), as 16-bit patterns: exact for values that
    /// type holds, such as the GEMM fills (9 significant bits at most, in
    /// [-1, 1)) in f16.
    ///
    /// # Errors
    /// The driver's allocation or copy error.
    pub fn upload_half(&self, host: &[f32], half: crate::cublas::Half) -> Result<CudaSlice<u16>> {
        let bits: Vec<u16> = host.iter().map(|&x| half.bits(x)).collect();
        // SAFETY: every bit pattern is a valid u16; the buffer is written by
        // the copy below before anything reads it.
        let mut buf = unsafe { self.alloc::<u16>(bits.len()) }?;
        self.stream
            .memcpy_htod(&bits, &mut buf)
            .call("cuMemcpyHtoDAsync")?;
        Ok(buf)
    }

    /// Copies the first `dst.len()` floats of `src` to the host.
    pub fn download(&self, src: &CudaSlice<f32>, dst: &mut [f32]) -> Result<()> {
        self.download_from(src, 0, dst)
    }

    /// Copies `dst.len()` floats of `src` from float `start` on to the host
    /// (a chunk of a buffer too large to read at once).
    pub fn download_from(&self, src: &CudaSlice<f32>, start: usize, dst: &mut [f32]) -> Result<()> {
        let view = src.slice(start..start + dst.len());
        self.stream
            .memcpy_dtoh(&view, dst)
            .call("cuMemcpyDtoHAsync")
    }

    /// Evicts L2 by writing twice its size of scratch memory (on the stream,
    /// asynchronously): the next kernel starts with a cold cache.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] when the scratch buffer (allocated on first
    /// use) does not fit; driver errors.
    pub fn flush_l2(&self) -> Result<()> {
        if self.flush.get().is_none() {
            let floats = (2 * self.info.l2_bytes).div_ceil(4).max(1);
            self.require_free_memory(floats * 4, "the L2 flush buffer (twice the L2)")?;
            let buf = self.alloc_f32(floats)?;
            let _ = self.flush.set(buf);
        }
        let buf = self.flush.get().expect("set above");
        let bytes = buf.num_bytes();
        let (ptr, _record) = buf.device_ptr(&self.stream);
        // SAFETY: `ptr` addresses `bytes` bytes of this context's scratch
        // buffer, which nothing else reads.
        unsafe { cudarc::driver::result::memset_d8_async(ptr, 0, bytes, self.stream.cu_stream()) }
            .call("cuMemsetD8Async (L2 flush)")
    }

    /// Poisons the first `n` floats of `buf` with 0xFF (NaN), and the
    /// guard's length after them where the buffer is longer: a check that
    /// launches a kernel on part of a buffer, with [`Gpu::read_output`].
    ///
    /// # Errors
    /// Driver errors.
    pub fn poison_output(&self, buf: &mut CudaSlice<f32>, n: usize) -> Result<()> {
        let end = (n + crate::guard::GUARD_BYTES / 4).min(buf.len());
        self.fill_bytes(&mut buf.slice_mut(..end), 0xFF)
    }

    /// The first `n` floats of `buf`, after [`Gpu::check_poison_after`].
    ///
    /// # Errors
    /// As [`Gpu::check_poison_after`].
    pub fn read_output(&self, buf: &CudaSlice<f32>, n: usize, kernel: &str) -> Result<Vec<f32>> {
        self.check_poison_after(buf, n, kernel)?;
        let mut got = vec![0.0f32; n];
        self.download(buf, &mut got)?;
        Ok(got)
    }

    /// Checks that the guard's length after the first `n` floats of `buf`
    /// (as much as the buffer holds) still holds [`Gpu::poison_output`]'s
    /// poison.
    ///
    /// # Errors
    /// [`Error::WrotePastEnd`] naming `kernel` where a poisoned float after
    /// the `n` changed; driver errors.
    pub fn check_poison_after(&self, buf: &CudaSlice<f32>, n: usize, kernel: &str) -> Result<()> {
        let end = (n + crate::guard::GUARD_BYTES / 4).min(buf.len());
        let mut after = vec![0.0f32; end - n.min(end)];
        self.download_from(buf, n.min(end), &mut after)?;
        match after.iter().position(|v| v.to_bits() != u32::MAX) {
            Some(k) => Err(Error::WrotePastEnd {
                kernel: kernel.to_string(),
                what: format!("the {n} elements it was launched on"),
                bytes: n * 4,
                offset: 4 * k,
            }),
            None => Ok(()),
        }
    }

    /// Waits for the stream; an error that surfaces here is charged to
    /// `kernel`, the last kernel launched on it. Then reads back the guard
    /// of every buffer a launch was given to write since the last call.
    ///
    /// # Errors
    /// [`Error::KernelFault`] for a fault; [`Error::WrotePastEnd`] for a
    /// changed guard byte, naming the kernel given that buffer.
    pub fn sync_after(&self, kernel: &str) -> Result<()> {
        self.sync(kernel)?;
        self.check_guards()
    }

    /// Waits for the stream, charging an error to `kernel`, without reading
    /// any guard back: for a host-clocked window, which must hold nothing
    /// but the launches and the wait ([`Gpu::check_guards`] after the clock
    /// stops).
    ///
    /// # Errors
    /// [`Error::KernelFault`] for a fault.
    pub fn sync(&self, kernel: &str) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|source| Error::KernelFault {
                kernel: kernel.to_string(),
                source,
            })
    }

    /// Reads back the guard of every buffer a launch was given to write
    /// since the last check (the stream must be idle: call after
    /// [`Gpu::sync`]).
    ///
    /// # Errors
    /// [`Error::WrotePastEnd`] for the first changed guard byte found, naming
    /// the first kernel given that buffer since the last check (the other
    /// buffers are not read then); driver errors.
    pub fn check_guards(&self) -> Result<()> {
        for w in self.guards.take_written() {
            let mut guard = vec![0u8; self.guards.bytes()];
            // SAFETY: the buffer was allocated with this guard after it and
            // is alive (a launch was given it since the last check).
            unsafe {
                cudarc::driver::result::memcpy_dtoh_sync(&mut guard, w.base + w.bytes as u64)
            }
            .call("cuMemcpyDtoH (a buffer's guard)")?;
            if let Some(offset) = guard.iter().position(|&b| b != crate::guard::POISON) {
                return Err(Error::WrotePastEnd {
                    kernel: w.kernel.to_string(),
                    what: format!("argument {}", w.argument),
                    bytes: w.bytes,
                    offset,
                });
            }
        }
        Ok(())
    }
}

fn query(ctx: &Arc<CudaContext>, ordinal: usize) -> Result<DeviceInfo> {
    // A negative attribute is not a count: read it as 0, which every
    // figure derived from it treats as unknown.
    let attr = |a: Attr| {
        ctx.attribute(a)
            .call("cuDeviceGetAttribute")
            .map(|v| v.max(0))
    };
    let mut version = 0i32;
    // SAFETY: writes one int.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) }
        .result()
        .call("cuDriverGetVersion")?;
    Ok(DeviceInfo {
        ordinal,
        name: ctx.name().call("cuDeviceGetName")?,
        compute_capability: ctx.compute_capability().call("cuDeviceGetAttribute")?,
        sms: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
        l2_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as usize,
        total_memory_bytes: ctx.total_mem().call("cuDeviceTotalMem")?,
        sm_clock_khz: attr(Attr::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)? as u32,
        memory_clock_khz: attr(Attr::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)? as u32,
        memory_bus_bits: attr(Attr::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)? as u32,
        max_threads_per_sm: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)? as u32,
        regs_per_sm: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)? as u32,
        shared_per_block_optin: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?
            as usize,
        shared_per_sm: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)?
            as usize,
        max_blocks_per_sm: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)? as u32,
        driver_cuda: format!("{}.{}", version / 1000, (version % 1000) / 10),
        driver_version: kernel_module_version(),
        uuid: ctx.uuid().ok().map(|u| format_uuid(&u.bytes)),
        pci_bus_id: pci_bus_id(ctx.cu_device()),
        module_loading: module_loading_mode().ok(),
    })
}

/// A device UUID's 16 bytes as `nvidia-smi -L` writes them:
/// `GPU-` then 8-4-4-4-12 lowercase hex digits.
pub fn format_uuid(bytes: &[std::ffi::c_char; 16]) -> String {
    let hex: Vec<String> = bytes.iter().map(|&b| format!("{:02x}", b as u8)).collect();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        hex[0..4].concat(),
        hex[4..6].concat(),
        hex[6..8].concat(),
        hex[8..10].concat(),
        hex[10..16].concat()
    )
}

/// The PCI bus id of `device` (`0000:1b:00.0`), where the driver answers.
fn pci_bus_id(device: cudarc::driver::sys::CUdevice) -> Option<String> {
    // The driver writes at most 13 characters and a NUL (its documentation
    // asks for a buffer of at least 13); 32 leaves room.
    let mut buf = [0 as std::ffi::c_char; 32];
    // SAFETY: writes at most `buf.len()` bytes into `buf`, NUL-terminated.
    let r = unsafe {
        cudarc::driver::sys::cuDeviceGetPCIBusId(buf.as_mut_ptr(), buf.len() as i32, device)
    };
    if r != cudarc::driver::sys::CUresult::CUDA_SUCCESS {
        return None;
    }
    // SAFETY: the buffer is NUL-terminated: the driver wrote a C string
    // shorter than it, and it started zeroed.
    let id = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
    Some(id.to_string_lossy().into_owned())
}

/// CUDA's module loading mode for this process as the driver reports it:
/// `lazy` or `eager` (`CUDA_MODULE_LOADING` chooses it; lazy is the default
/// from CUDA 12.2 on Linux).
///
/// # Errors
/// The driver's error as one line, where `cuModuleGetLoadingMode` fails
/// (call it after `cuInit`: [`Gpu::open`] does).
pub fn module_loading_mode() -> std::result::Result<String, String> {
    use cudarc::driver::sys::{CUmoduleLoadingMode, CUresult, cuModuleGetLoadingMode};
    let mut mode = CUmoduleLoadingMode::CU_MODULE_EAGER_LOADING;
    // SAFETY: writes one enum value.
    let r = unsafe { cuModuleGetLoadingMode(&mut mode) };
    if r != CUresult::CUDA_SUCCESS {
        return Err(format!("cuModuleGetLoadingMode failed: {r:?}"));
    }
    Ok(if mode == CUmoduleLoadingMode::CU_MODULE_LAZY_LOADING {
        "lazy"
    } else {
        "eager"
    }
    .to_string())
}

/// The NVIDIA kernel module's version from `/proc/driver/nvidia/version`,
/// where that file exists.
fn kernel_module_version() -> Option<String> {
    let text = std::fs::read_to_string("/proc/driver/nvidia/version").ok()?;
    parse_kernel_module_version(&text)
}

/// The first `N.N...` token after "Kernel Module" (the open module's line
/// reads "... Open Kernel Module for x86_64  580.159.04  Release Build ...").
pub fn parse_kernel_module_version(text: &str) -> Option<String> {
    let after = text.split("Kernel Module").nth(1)?;
    after
        .split_whitespace()
        .find(|t| t.contains('.') && t.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_module_version_from_both_module_flavours() {
        let open = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U16)";
        let closed = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023";
        assert_eq!(
            parse_kernel_module_version(open).as_deref(),
            Some("580.159.04")
        );
        assert_eq!(
            parse_kernel_module_version(closed).as_deref(),
            Some("535.104.05")
        );
        assert_eq!(parse_kernel_module_version("nothing here"), None);
    }

    #[test]
    fn uuids_read_as_nvidia_smi_writes_them() {
        let bytes: [std::ffi::c_char; 16] =
            std::array::from_fn(|i| (i as u8 * 17) as std::ffi::c_char);
        assert_eq!(
            format_uuid(&bytes),
            "GPU-00112233-4455-6677-8899-aabbccddeeff"
        );
    }

    #[test]
    fn fp32_lanes_by_architecture() {
        assert_eq!(fp32_lanes_per_sm((7, 5)), Some(64));
        assert_eq!(fp32_lanes_per_sm((8, 0)), Some(64));
        assert_eq!(fp32_lanes_per_sm((8, 6)), Some(128));
        assert_eq!(fp32_lanes_per_sm((9, 0)), Some(128));
        assert_eq!(fp32_lanes_per_sm((3, 5)), None);
    }

    #[test]
    fn tensor_rates_follow_the_whitepapers() {
        // A100: 312 TFLOP/s over 108 SMs at 1410 MHz; H100 SXM5: 989.4 over
        // 132 at 1830 MHz; each within 0.1% of the rate written down.
        let per_clock = |tflop: f64, sms: f64, mhz: f64| tflop * 1e12 / (sms * mhz * 1e6);
        for (cc, got) in [
            ((8, 0), per_clock(312.0, 108.0, 1410.0)),
            ((9, 0), per_clock(989.4, 132.0, 1830.0)),
        ] {
            let want = f64::from(tensor_flop_per_clock_per_sm(cc).unwrap());
            assert!(
                (got / want - 1.0).abs() < 1e-3,
                "{cc:?}: {got} against {want}"
            );
        }
        for cc in [(7, 5), (8, 6), (8, 9), (10, 0), (12, 0)] {
            assert_eq!(tensor_flop_per_clock_per_sm(cc), None, "{cc:?}");
        }
    }
}
