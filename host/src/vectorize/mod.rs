//! The vectorize lesson on the host (chapter 19.1): the main-loop-plus-
//! remainder trace counted by a host mirror at the seed's sizes, the width
//! trap shown from the types, the PTX and the SASS, every add checked bit
//! for bit, and the 16-byte adds timed against the one-element adds.

pub mod reference;

use cudarc::driver::{CudaSlice, LaunchConfig};
use half::f16;
use kernels_gpu::vectorize::*;
use serde_json::json;

use crate::check::Failure;
use crate::compare::Twinned;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::kernels::{KernelId, KernelSet, Param};
use crate::lesson::{self, Findings, Outcome, Row, RunOptions, Section, SectionReport};
use crate::ptx::{PTX, PtxMix, entry_body};
use crate::ragged::{Edge, RAGGED_TAIL, RaggedPair, shape_1d, time_pair};
use crate::report::Context;
use crate::sizes::{LessonSizes, Stream, grown};
use crate::timing::{self, Plan, Timing};

/// The element types, each with its 16-byte vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    /// `f32` in `float4`.
    F32,
    /// `f64` in `double2`.
    F64,
    /// IEEE half in eight halves.
    F16,
}

impl Dtype {
    /// Every element type, in report order.
    pub const ALL: [Dtype; 3] = [Dtype::F32, Dtype::F64, Dtype::F16];

    /// Bytes of one element.
    pub fn size(self) -> usize {
        match self {
            Dtype::F32 => size_of::<f32>(),
            Dtype::F64 => size_of::<f64>(),
            Dtype::F16 => size_of::<f16>(),
        }
    }

    /// Elements in one 16-byte vector, from the kernels' own types.
    pub fn width(self) -> usize {
        match self {
            Dtype::F32 => width::<F32x4>(),
            Dtype::F64 => width::<F64x2>(),
            Dtype::F16 => width::<F16x8>(),
        }
    }

    /// The vector's name (CUDA's `float4` and `double2`; eight halves as
    /// `half8`).
    pub fn vector_name(self) -> &'static str {
        match self {
            Dtype::F32 => "float4",
            Dtype::F64 => "double2",
            Dtype::F16 => "half8",
        }
    }

    /// The element's name.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::F64 => "f64",
            Dtype::F16 => "f16",
        }
    }
}

/// The lesson's kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// One element per thread.
    Scalar(Dtype),
    /// One 16-byte vector per thread and a scalar tail.
    Vec16(Dtype),
}

impl KernelId for Kernel {
    /// Every kernel, in report order: per type, scalar then vector.
    const ALL: &'static [Kernel] = &[
        Kernel::Scalar(Dtype::F32),
        Kernel::Vec16(Dtype::F32),
        Kernel::Scalar(Dtype::F64),
        Kernel::Vec16(Dtype::F64),
        Kernel::Scalar(Dtype::F16),
        Kernel::Vec16(Dtype::F16),
    ];

    /// The exported symbol (the CUDA C twin's too).
    fn symbol(self) -> &'static str {
        match self {
            Kernel::Scalar(Dtype::F32) => "add_scalar_f32",
            Kernel::Scalar(Dtype::F64) => "add_scalar_f64",
            Kernel::Scalar(Dtype::F16) => "add_scalar_f16",
            Kernel::Vec16(Dtype::F32) => "add_vec16_f32",
            Kernel::Vec16(Dtype::F64) => "add_vec16_f64",
            Kernel::Vec16(Dtype::F16) => "add_vec16_f16",
        }
    }

    /// Every add takes (a, b, out, n).
    fn params(self) -> &'static [Param] {
        &[Param::Ptr, Param::Ptr, Param::Ptr, Param::U64]
    }
}

impl Kernel {
    /// The element type.
    pub fn dtype(self) -> Dtype {
        match self {
            Kernel::Scalar(d) | Kernel::Vec16(d) => d,
        }
    }

    // ANCHOR: launch_config
    /// Threads the kernel's launch assumption needs over `n` elements: the
    /// vector add max(n / W, n % W), the scalar add n.
    pub fn threads(self, n: usize) -> usize {
        match self {
            Kernel::Scalar(_) => n,
            Kernel::Vec16(d) => (n / d.width()).max(n % d.width()),
        }
    }

    /// The launch over `n` elements: blocks of THREADS_PER_BLOCK covering
    /// [`Kernel::threads`].
    pub fn launch_config(self, n: usize) -> LaunchConfig {
        let threads = self.threads(n);
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
    // ANCHOR_END: launch_config
}

/// The lesson's sizes: three buffers (a, b, out) of `buffer_bytes` each,
/// and the two sizes each add is timed at: a round one (a power of two of
/// elements) and a ragged one beside it (the round one plus
/// [`RAGGED_TAIL`], which leaves a tail in every type).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Sizes {
    /// Bytes of each of the three buffers: the ragged size of the widest
    /// type and the check's guard.
    pub buffer_bytes: usize,
    /// Elements of each add at the round size, per element type in
    /// [`Dtype::ALL`] order.
    pub round_elems: [usize; 3],
    /// Elements at the ragged size: the round size plus [`RAGGED_TAIL`].
    pub ragged_elems: [usize; 3],
    /// The odd correctness size.
    pub check_elems: usize,
    /// The seed's traced sizes.
    pub traced: [usize; 2],
}

const _: () = assert!(
    CHECK_ELEMS == (1 << 20) + RAGGED_TAIL,
    "--quick's ragged size is the check size, its round one 2^20"
);

impl Sizes {
    /// A full run on `info`'s GPU: round sizes of [`SEED_BUFFER_BYTES`]
    /// grown by powers of two to at least 4x the L2 (see
    /// [`crate::sizes::grown`]), so each is 2^k elements of every type; the
    /// ragged sizes [`RAGGED_TAIL`] elements more. `quick`: 2^20 elements
    /// round and the check size ([`CHECK_ELEMS`] = 2^20 + 611) ragged,
    /// cache-resident.
    pub fn new(info: &crate::gpu::DeviceInfo, quick: bool) -> Sizes {
        let largest = Dtype::ALL.iter().map(|d| d.size()).max().unwrap_or(8);
        let round_elems = if quick {
            Dtype::ALL.map(|_| CHECK_ELEMS - RAGGED_TAIL)
        } else {
            let bytes = grown(SEED_BUFFER_BYTES, 1, info.l2_bytes);
            Dtype::ALL.map(|d| bytes / d.size())
        };
        let ragged_elems = round_elems.map(|n| n + RAGGED_TAIL);
        let buffer_bytes = Dtype::ALL
            .iter()
            .zip(ragged_elems)
            .map(|(d, n)| n * d.size())
            .max()
            .unwrap_or(CHECK_ELEMS * largest)
            .max(CHECK_ELEMS * largest);
        Sizes {
            buffer_bytes: (buffer_bytes + GUARD_BYTES).next_multiple_of(VECTOR_BYTES),
            round_elems,
            ragged_elems,
            check_elems: CHECK_ELEMS,
            traced: TRACED_SIZES,
        }
    }

    /// Elements of `d`'s add at `edge`'s size.
    pub fn elems(&self, d: Dtype, edge: Edge) -> usize {
        let i = Dtype::ALL.iter().position(|&x| x == d).unwrap_or(0);
        match edge {
            Edge::Round => self.round_elems[i],
            Edge::Ragged => self.ragged_elems[i],
        }
    }

    /// How `d`'s size at `edge` is written for people (`2^26`,
    /// `2^26 + 611`).
    pub fn shape(&self, d: Dtype, edge: Edge) -> String {
        let round = shape_1d(self.elems(d, Edge::Round));
        match edge {
            Edge::Round => round,
            Edge::Ragged => format!("{round} + {RAGGED_TAIL}"),
        }
    }
}

impl LessonSizes for Sizes {
    fn for_gpu(info: &crate::gpu::DeviceInfo, quick: bool) -> Result<Sizes> {
        Ok(Sizes::new(info, quick))
    }
    fn streams(&self) -> Vec<Stream> {
        vec![Stream {
            name: "a, b, out",
            bytes: self.buffer_bytes,
        }]
    }

    fn device_bytes(&self) -> usize {
        3 * self.buffer_bytes
    }
}

/// What the host mirror counted for one size and width (the seed's trace).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Trace {
    /// Elements.
    pub size: usize,
    /// Elements per vector instruction.
    pub width: usize,
    /// (size / width) * width: where the main loop stops.
    pub simd_count: usize,
    /// Vector instructions the main loop issued.
    pub vector_instructions: usize,
    /// Scalar instructions the remainder issued.
    pub scalar_instructions: usize,
}

impl Trace {
    /// Vector plus scalar instructions.
    pub fn total(&self) -> usize {
        self.vector_instructions + self.scalar_instructions
    }

    /// Total as a percentage of the scalar-only baseline (one instruction
    /// per element).
    pub fn pct_of_baseline(&self) -> f64 {
        100.0 * self.total() as f64 / self.size as f64
    }

    /// The seed's lines for this trace.
    pub fn lines(&self) -> Vec<String> {
        vec![
            format!(
                "size={}, width={}: simd_count = ({}/{})*{} = {}",
                self.size, self.width, self.size, self.width, self.width, self.simd_count
            ),
            format!(
                "  vector instructions = {} (elements 0-{})",
                self.vector_instructions,
                self.simd_count.saturating_sub(1)
            ),
            format!(
                "  scalar instructions = {} (elements {}-{})",
                self.scalar_instructions,
                self.simd_count,
                self.size.saturating_sub(1)
            ),
            format!(
                "  total instructions  = {} (scalar-only baseline = {}; {:.1}% of it)",
                self.total(),
                self.size,
                self.pct_of_baseline()
            ),
        ]
    }
}

/// The host mirror of the vector add: `out = a + b` with a main loop of
/// `width`-element steps and a one-element remainder, counting the
/// instructions each issues.
///
/// # Panics
/// When `out` or `b` is shorter than `a`, or `width` is 0 (caller bugs).
pub fn vectorized_add_host(out: &mut [f32], a: &[f32], b: &[f32], width: usize) -> Trace {
    assert!(width > 0, "a vector holds at least one element");
    assert!(
        out.len() >= a.len() && b.len() >= a.len(),
        "out and b hold a.len() elements"
    );
    let size = a.len();
    let simd_count = (size / width) * width;
    let mut trace = Trace {
        size,
        width,
        simd_count,
        vector_instructions: 0,
        scalar_instructions: 0,
    };
    for i in (0..simd_count).step_by(width) {
        for lane in 0..width {
            out[i + lane] = a[i + lane] + b[i + lane];
        }
        trace.vector_instructions += 1;
    }
    for i in simd_count..size {
        out[i] = a[i] + b[i];
        trace.scalar_instructions += 1;
    }
    trace
}

/// One of the seed's small launches, as it ran: its budget, its launch
/// shape and the values it wrote beside the host's.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SeedLaunch {
    /// The element type (`f32`).
    pub dtype: &'static str,
    /// The vector type (`float4`).
    pub vector: &'static str,
    /// Elements per array.
    pub elems: usize,
    /// Bytes per array ([`SEED_BUDGET_BYTES`]).
    pub bytes_per_array: usize,
    /// Elements per vector.
    pub width: usize,
    /// Blocks.
    pub grid: u32,
    /// Threads per block: one vector each.
    pub block: u32,
    /// What the GPU wrote, element by element.
    pub got: Vec<f64>,
    /// The host's sums.
    pub want: Vec<f64>,
}

impl SeedLaunch {
    /// The report's lines: the launch, then the GPU's values above the
    /// host reference's.
    pub fn lines(&self) -> Vec<String> {
        let show = |v: &[f64]| {
            v.iter()
                .map(|x| format!("{x}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        vec![
            format!(
                "{:<7} <<<{}, {}>>>: {} threads x one {} ({} bytes) = {} x {} ({} bytes a buffer)",
                self.vector,
                self.grid,
                self.block,
                self.grid * self.block,
                self.vector,
                VECTOR_BYTES,
                self.elems,
                self.dtype,
                self.bytes_per_array
            ),
            format!("  GPU out:        {}", show(&self.got)),
            format!("  host reference: {}", show(&self.want)),
        ]
    }
}

/// The lesson's three byte buffers (a, b, out) on one GPU, holding
/// whichever element type was last loaded.
pub struct Vectorize<'g> {
    gpu: &'g Gpu,
    sizes: Sizes,
    kernels: KernelSet<Kernel>,
    a: CudaSlice<u8>,
    b: CudaSlice<u8>,
    out: CudaSlice<u8>,
    /// The element type and count a and b hold now.
    loaded: Option<(Dtype, usize)>,
}

impl<'g> Vectorize<'g> {
    /// Checks free memory and allocates the three buffers.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] before allocating; driver errors.
    pub fn new(gpu: &'g Gpu, sizes: &Sizes) -> Result<Self> {
        gpu.require_free_memory(sizes.device_bytes(), "the vectorize lesson's three buffers")?;
        let alloc = || -> Result<CudaSlice<u8>> {
            // SAFETY: any bytes are valid u8; inputs are uploaded and the
            // output poisoned before anything is read.
            unsafe { gpu.alloc::<u8>(sizes.buffer_bytes) }
        };
        Ok(Vectorize {
            gpu,
            sizes: sizes.clone(),
            kernels: KernelSet::new(gpu)?,
            a: alloc()?,
            b: alloc()?,
            out: alloc()?,
            loaded: None,
        })
    }

    /// Makes a and b hold at least `n` elements of `dtype` (the reference
    /// fills).
    fn prepare(&mut self, dtype: Dtype, n: usize) -> Result<()> {
        if matches!(self.loaded, Some((d, m)) if d == dtype && m >= n) {
            return Ok(());
        }
        let upload = |dst: &mut CudaSlice<u8>, bytes: Vec<u8>| {
            self.gpu
                .stream
                .memcpy_htod(&bytes, &mut dst.slice_mut(..bytes.len()))
                .map_err(|source| Error::Driver {
                    call: "cuMemcpyHtoDAsync",
                    source,
                })
        };
        upload(
            &mut self.a,
            reference::input_bytes(dtype, n, reference::fill_a),
        )?;
        upload(
            &mut self.b,
            reference::input_bytes(dtype, n, reference::fill_b),
        )?;
        self.loaded = Some((dtype, n));
        Ok(())
    }

    /// Launches `kernel` over `n` elements (asynchronously) on the side in
    /// use, in its [`Kernel::launch_config`].
    ///
    /// # Errors
    /// [`Error::Size`] when `n` elements (and the check's guard) do not fit
    /// the buffers; a launch error charged to the kernel.
    pub fn launch(&mut self, kernel: Kernel, n: usize) -> Result<()> {
        self.launch_in(kernel, n, kernel.launch_config(n))
    }

    /// As [`Vectorize::launch`], in the launch shape `config`.
    ///
    /// # Errors
    /// As [`Vectorize::launch`]; [`Error::Size`] for a shape with fewer
    /// threads than the kernel's launch assumption needs for `n`.
    fn launch_in(&mut self, kernel: Kernel, n: usize, config: LaunchConfig) -> Result<()> {
        self.fits(kernel.dtype(), n)?;
        let threads = config.grid_dim.0 as usize * config.block_dim.0 as usize;
        let needed = kernel.threads(n);
        if threads < needed || config.grid_dim.1 != 1 || config.block_dim.1 != 1 {
            return Err(Error::Size(format!(
                "{} over {n} elements needs a 1D launch of at least {needed} threads, not {:?} x {:?}",
                kernel.symbol(),
                config.grid_dim,
                config.block_dim
            )));
        }
        let launch = self
            .kernels
            .launch(self.gpu, kernel)
            .input(&self.a)
            .input(&self.b)
            .output(&mut self.out)
            .scalar(n as u64);
        // SAFETY: the three buffers hold n elements of the kernel's type
        // (`fits` above), are distinct, and the grid covers the kernel's
        // threads for n (checked above).
        unsafe { launch.launch(config) }
    }

    /// Runs `kernel` over `n` elements in `config` into a poisoned output
    /// (0xFF bytes, NaN in every type) and reads back the n elements and
    /// the GUARD_BYTES after them; a failure where the guard was written
    /// (a stale width or a wrong tail index writes there) or where an
    /// element's bytes differ from `want` (the reference's bytes of at
    /// least n elements: a longer one's prefix serves). Returns the failure
    /// (if any) and the n elements' bytes.
    ///
    /// # Errors
    /// As [`Vectorize::launch_in`]; a fault charged to the kernel; driver
    /// errors.
    fn run_checked(
        &mut self,
        kernel: Kernel,
        n: usize,
        config: LaunchConfig,
        want: &[u8],
        what: &str,
    ) -> Result<(Option<Failure>, Vec<u8>)> {
        let d = kernel.dtype();
        self.fits(d, n)?;
        let bytes = n * d.size();
        // 0xFF bytes: a NaN in every type, so an element never written fails.
        self.gpu
            .fill_bytes(&mut self.out.slice_mut(..bytes + GUARD_BYTES), 0xFF)?;
        self.launch_in(kernel, n, config)?;
        self.gpu.sync_after(kernel.symbol())?;
        let mut got = vec![0u8; bytes + GUARD_BYTES];
        self.gpu
            .stream
            .memcpy_dtoh(&self.out.slice(..bytes + GUARD_BYTES), &mut got)
            .map_err(|source| Error::Driver {
                call: "cuMemcpyDtoHAsync",
                source,
            })?;
        self.gpu.sync_after(kernel.symbol())?;
        let guard = got.split_off(bytes);
        if let Some(i) = guard.iter().position(|&b| b != 0xFF) {
            let failure = Failure {
                kernel: kernel.symbol(),
                detail: format!(
                    "{what}, n = {n}: wrote past the last element, at byte {i} after it"
                ),
            };
            return Ok((Some(failure), got));
        }
        let failure = if got[..] == want[..bytes] {
            None
        } else {
            let i = got
                .chunks_exact(d.size())
                .zip(want.chunks_exact(d.size()))
                .position(|(g, w)| g != w)
                .unwrap_or(0);
            let bits = |b: &[u8]| reference::element_bits(d, &b[i * d.size()..(i + 1) * d.size()]);
            Some(Failure {
                kernel: kernel.symbol(),
                detail: format!(
                    "{what}, n = {n}: wrong at index {i}{}: got {}, want {} (bit-exact: one correctly rounded add)",
                    if matches!(kernel, Kernel::Vec16(_)) && i >= n - n % d.width() {
                        " (in the scalar tail)"
                    } else {
                        ""
                    },
                    reference::show(d, bits(&got)),
                    reference::show(d, bits(want))
                ),
            })
        };
        Ok((failure, got))
    }

    /// Runs `kernel` over `n` elements of the reference fills in its own
    /// launch shape and checks every element's bits, and the guard after
    /// them; returns the failure (if any) and the output's bits.
    ///
    /// # Errors
    /// As [`Vectorize::launch`]; a fault charged to the kernel; driver
    /// errors.
    pub fn check(&mut self, kernel: Kernel, n: usize) -> Result<(Option<Failure>, Vec<u64>)> {
        let want = reference::sum_bytes(kernel.dtype(), n);
        let (failure, got) = self.check_against(kernel, n, &want)?;
        Ok((failure, reference::bits_of(kernel.dtype(), &got)))
    }

    /// As [`Vectorize::check`] against `want`, the reference's bytes of at
    /// least `n` elements (one reference serves every kernel of a type and
    /// both timed sizes); returns the output's bytes.
    ///
    /// # Errors
    /// As [`Vectorize::check`].
    pub fn check_against(
        &mut self,
        kernel: Kernel,
        n: usize,
        want: &[u8],
    ) -> Result<(Option<Failure>, Vec<u8>)> {
        let d = kernel.dtype();
        if want.len() < n * d.size() {
            return Err(Error::Bug(format!(
                "a reference of {} bytes for {n} {} elements",
                want.len(),
                d.name()
            )));
        }
        self.fits(d, n)?;
        self.prepare(d, n)?;
        self.run_checked(kernel, n, kernel.launch_config(n), want, "fills")
    }

    /// The seed's small launch of `d`'s vector add: [`SEED_BUDGET_BYTES`]
    /// per array (two 16-byte vectors), inputs `a[i] = i + 1` and
    /// `b[i] = 100 (i + 1)`, launched `<<<1, 2>>>` (one vector a thread),
    /// checked bit for bit against the host's sums and the guard after
    /// them. Returns the failure (if any) and what ran, with the values.
    ///
    /// # Errors
    /// As [`Vectorize::launch_in`]; a fault charged to the kernel; driver
    /// errors.
    pub fn seed_launch(&mut self, d: Dtype) -> Result<(Option<Failure>, SeedLaunch)> {
        let n = SEED_BUDGET_BYTES / d.size();
        let kernel = Kernel::Vec16(d);
        let a: Vec<f64> = (0..n).map(reference::seed_a).collect();
        let b: Vec<f64> = (0..n).map(reference::seed_b).collect();
        let want: Vec<f64> = a
            .iter()
            .zip(&b)
            .map(|(&x, &y)| reference::add_in(d, x, y))
            .collect();
        let bytes =
            |v: &[f64]| -> Vec<u8> { v.iter().flat_map(|&x| reference::to_bytes(d, x)).collect() };
        // The buffers no longer hold the fills.
        self.loaded = None;
        for (dst, values) in [(&mut self.a, &a), (&mut self.b, &b)] {
            let host = bytes(values);
            self.gpu
                .stream
                .memcpy_htod(&host, &mut dst.slice_mut(..host.len()))
                .map_err(|source| Error::Driver {
                    call: "cuMemcpyHtoDAsync",
                    source,
                })?;
        }
        let block = (n / d.width()) as u32;
        let config = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        };
        let (failure, got) =
            self.run_checked(kernel, n, config, &bytes(&want), "the seed's launch")?;
        let got = reference::bits_of(d, &got)
            .into_iter()
            .map(|bits| reference::value_of(d, bits))
            .collect();
        Ok((
            failure,
            SeedLaunch {
                dtype: d.name(),
                vector: d.vector_name(),
                elems: n,
                bytes_per_array: n * d.size(),
                width: d.width(),
                grid: 1,
                block,
                got,
                want,
            },
        ))
    }

    /// Times `kernel` over `n` elements with `plan`.
    ///
    /// # Errors
    /// As [`Vectorize::launch`].
    pub fn time(&mut self, kernel: Kernel, n: usize, plan: Plan) -> Result<Timing> {
        self.fits(kernel.dtype(), n)?;
        self.prepare(kernel.dtype(), n)?;
        let gpu = self.gpu;
        timing::time_kernel(gpu, kernel.symbol(), plan, || self.launch(kernel, n))
    }

    /// Fails with [`Error::Size`] unless `n` elements of `dtype` and the
    /// guard fit one buffer.
    fn fits(&self, dtype: Dtype, n: usize) -> Result<()> {
        let bytes = self.sizes.buffer_bytes;
        if n * dtype.size() + GUARD_BYTES > bytes {
            return Err(Error::Size(format!(
                "{n} {} elements do not fit the vectorize lesson's {bytes}-byte buffers",
                dtype.name()
            )));
        }
        Ok(())
    }
}

/// Bytes after the last element a check requires to stay untouched: one
/// vector.
pub const GUARD_BYTES: usize = VECTOR_BYTES;

impl Twinned for Vectorize<'_> {
    type Kernel = Kernel;

    fn kernels(&mut self) -> &mut KernelSet<Kernel> {
        &mut self.kernels
    }

    fn check(&mut self, k: Kernel) -> Result<(Vec<Failure>, Vec<u64>)> {
        let (failure, got) = Vectorize::check(self, k, CHECK_ELEMS)?;
        Ok((failure.into_iter().collect(), got))
    }

    fn time(&mut self, k: Kernel, plan: Plan) -> Result<Timing> {
        // The ragged size: the one that runs the tail.
        let n = self.sizes.elems(k.dtype(), Edge::Ragged);
        Vectorize::time(self, k, n, plan)
    }
}

/// The 16-byte accesses of `kernel`'s PTX: its loads and stores by width
/// (PtxMix keys such as `ld.global 128b`), and the PTX lines of its vector
/// accesses.
pub fn ptx_evidence(kernel: Kernel) -> (PtxMix, Vec<String>) {
    let body = entry_body(PTX, kernel.symbol()).unwrap_or("");
    let vector_lines = body
        .lines()
        .map(str::trim)
        .filter(|l| {
            (l.starts_with("ld.global.v") || l.starts_with("st.global.v")) && !l.contains("param")
        })
        .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
        .collect();
    (PtxMix::of(body), vector_lines)
}

/// Counts of 128-bit global loads and stores in one function's SASS:
/// instructions whose opcode is `LDG` or `STG` with a `.128` part
/// (`LDG.E.128`, `LDG.E.128.CONSTANT`, `STG.E.128`).
pub fn sass_128_counts(sass: &str) -> (usize, usize) {
    let count = |op: &str| {
        sass.lines()
            .filter(|l| {
                l.split_whitespace()
                    .any(|w| w.starts_with(op) && w[op.len()..].split('.').any(|p| p == "128"))
            })
            .count()
    };
    (count("LDG"), count("STG"))
}

/// The width trap's section and evidence: each vector type's width from its
/// size, the Rust PTX's vector accesses, and the SASS for this GPU where
/// ptxas and cuobjdump are found. Pushes a failure for SASS that does not
/// show 2 x `LDG.E.128` and 1 x `STG.E.128`, or PTX without 16-byte
/// accesses; a tool that fails is reported in the section, not as an error.
fn width_trap(gpu: &Gpu, failures: &mut Vec<Failure>) -> (Section, Vec<serde_json::Value>) {
    let mut trap = Section::new("The width trap: one 16-byte access, three element types");
    let (major, minor) = gpu.info.compute_capability;
    let arch = format!("sm_{major}{minor}");
    let mut evidence = Vec::new();
    for d in Dtype::ALL {
        let k = Kernel::Vec16(d);
        let (mix, vector_lines) = ptx_evidence(k);
        if mix.accesses.get("ld.global 128b") != Some(&2)
            || mix.accesses.get("st.global 128b") != Some(&1)
        {
            failures.push(Failure {
                kernel: k.symbol(),
                detail: format!(
                    "its PTX lacks one 16-byte load per input and one 16-byte store: {}",
                    mix.summary()
                ),
            });
        }
        let (sass_text, sass_counts) = match crate::asm::sass(PTX, &arch, k.symbol()) {
            Ok(Some(sass)) => {
                let (ld, st) = sass_128_counts(&sass);
                if (ld, st) != (2, 1) {
                    failures.push(Failure {
                        kernel: k.symbol(),
                        detail: format!("its SASS for {arch} has {ld} x LDG.E.128 and {st} x STG.E.128, not 2 and 1"),
                    });
                }
                (
                    format!("{ld} x LDG.E.128, {st} x STG.E.128"),
                    Some((ld, st)),
                )
            }
            Ok(None) => (
                "not shown (ptxas and cuobjdump not found)".to_string(),
                None,
            ),
            Err(e) => (format!("not shown ({e})"), None),
        };
        trap.line(format!(
            "{:<7} width = {} / {} = {} elements; Rust PTX: {}; SASS ({arch}): {sass_text}",
            d.vector_name(),
            VECTOR_BYTES,
            d.size(),
            d.width(),
            vector_lines.join(", "),
        ));
        evidence.push(json!({
            "dtype": d.name(), "vector": d.vector_name(), "vector_bytes": VECTOR_BYTES, "elem_bytes": d.size(),
            "width": d.width(), "ptx_vector_accesses": vector_lines, "ptx_mix": mix,
            "sass_arch": arch, "sass_ldg_128": sass_counts.map(|c| c.0), "sass_stg_128": sass_counts.map(|c| c.1),
        }));
    }
    trap.reading = Some(
        "Every type moves 16 bytes per load and store; what differs is how many elements those bytes are. A width \
         copied from the float4 kernel (4) into the double2 one would read 16 bytes past each 2-element vector."
            .to_string(),
    );
    (trap, evidence)
}

/// The CUDA C twins.
pub const CUDA_C_SOURCE: &str = include_str!("vectorize.cu");

/// The vectorize lesson as `lab` runs it.
pub struct VectorizeLesson;

impl lesson::Lesson for VectorizeLesson {
    const NAME: &'static str = "vectorize";
    const ABOUT: &'static str = "Chapter 19.1: 16-byte vector adds with a scalar tail; the width trap (float4, double2, eight halves) in the types, the PTX and the SASS.";
    type Kernel = Kernel;
    type Sizes = Sizes;
    type Twins<'g> = Vectorize<'g>;

    fn block_sizes() -> serde_json::Value {
        json!({"all": THREADS_PER_BLOCK})
    }

    /// What NVRTC compiles: the block size as a `#define`, then the twins.
    fn cuda_c() -> String {
        format!("#define THREADS_PER_BLOCK {THREADS_PER_BLOCK}\n{CUDA_C_SOURCE}")
    }

    /// Every kernel checked at the traced sizes and the odd check size, and the
    /// width trap's PTX and SASS checked; then the trace and the timings
    /// (`quick`: at the check size).
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] before allocating; launch, fault and driver
    /// errors.
    fn run(
        gpu: &Gpu,
        sizes: &Sizes,
        context: Context,
        options: &RunOptions<'_>,
    ) -> Result<Outcome<Box<dyn lesson::Report>>> {
        let plan = options.plan;
        let quick = options.quick;
        let mut lesson = Vectorize::new(gpu, sizes)?;
        let mut failures = Vec::new();
        for &k in Kernel::ALL {
            for n in TRACED_SIZES.into_iter().chain([CHECK_ELEMS]) {
                failures.extend(lesson.check(k, n)?.0);
            }
        }
        // Both timed sizes, every element and the guard after them: one
        // reference per type (the round size is a prefix of the ragged one).
        for d in Dtype::ALL {
            let want = reference::sum_bytes(d, sizes.elems(d, Edge::Ragged));
            for k in [Kernel::Scalar(d), Kernel::Vec16(d)] {
                // Ragged first: the fills it loads serve the round size too.
                for edge in [Edge::Ragged, Edge::Round] {
                    failures.extend(lesson.check_against(k, sizes.elems(d, edge), &want)?.0);
                }
            }
        }

        // The seed's small launches: one 32-byte budget per array, its
        // values printed beside the host's.
        let mut seed = Section::new(format!(
            "The seed's launches: {SEED_BUDGET_BYTES} bytes per array, one {VECTOR_BYTES}-byte vector a thread"
        ));
        let mut launches = Vec::new();
        for d in Dtype::ALL {
            let (failure, launch) = lesson.seed_launch(d)?;
            failures.extend(failure);
            for line in launch.lines() {
                seed.line(line);
            }
            launches.push(launch);
        }
        let covered: Vec<String> = launches
            .iter()
            .map(|l| format!("{} {}", l.vector, l.elems))
            .collect();
        let vectors: Vec<usize> = launches
            .iter()
            .map(|l| (l.grid * l.block) as usize)
            .collect();
        seed.reading = Some(format!(
            "Every launch moved {SEED_BUDGET_BYTES} bytes per array in {} 16-byte vectors per input ({}); the elements those \
             bytes hold differ by type: {}. Each output matched the host reference bit for bit, and the {GUARD_BYTES} \
             bytes after it stayed unwritten.",
            vectors.iter().max().unwrap_or(&0),
            if vectors.iter().all(|&v| v == vectors[0]) {
                "the same count in every type"
            } else {
                "a different count per type"
            },
            covered.join(", ")
        ));

        // The width trap, from the types, the PTX and the SASS; SASS that does
        // not show one 128-bit load per input and one 128-bit store is a failed
        // check of the lesson's claim.
        let (trap, evidence) = width_trap(gpu, &mut failures);
        if !failures.is_empty() {
            return Ok(Outcome::Failed(failures));
        }

        // The seed's trace, counted by the host mirror.
        let mut trace_section =
            Section::new("Main loop plus remainder, float4 (host mirror, counted)");
        let mut traces = Vec::new();
        for (size, scale_b) in [(TRACED_SIZES[0], 10.0f32), (TRACED_SIZES[1], 2.0)] {
            let a: Vec<f32> = (0..size).map(|i| i as f32).collect();
            let b: Vec<f32> = (0..size).map(|i| i as f32 * scale_b).collect();
            let mut out = vec![0.0f32; size];
            let t = vectorized_add_host(&mut out, &a, &b, Dtype::F32.width());
            for line in t.lines() {
                trace_section.line(line);
            }
            if size == TRACED_SIZES[0] {
                let shown: Vec<String> = out.iter().map(|v| format!("{v}")).collect();
                trace_section.line(format!("  output: {}", shown.join(" ")));
            }
            traces.push(t);
        }
        let (small, large) = (&traces[0], &traces[1]);
        trace_section.reading = Some(format!(
            "Both sizes leave a remainder, but {} leftover of {} is a smaller share than {} of {}: {:.1}% of the scalar \
             baseline against {:.1}%. The GPU kernels make the same split (n / W vectors, then n % W tail elements) and \
             were checked bit for bit at {}, {} and {} elements, and at both timed sizes.",
            large.scalar_instructions,
            large.size,
            small.scalar_instructions,
            small.size,
            large.pct_of_baseline(),
            small.pct_of_baseline(),
            TRACED_SIZES[0],
            TRACED_SIZES[1],
            CHECK_ELEMS
        ));

        // Timed: every add at the round and the ragged size, side by side.
        let buffer_mib = sizes.buffer_bytes >> 20;
        let mut timed = Section::new(if quick {
            format!(
                "Timed (--quick: 2^20 and {CHECK_ELEMS} elements, cache-resident; not a DRAM figure)"
            )
        } else {
            format!(
                "Timed: scalar against 16-byte adds, round and ragged sizes, 3 buffers of {buffer_mib} MiB"
            )
        });
        let mut pairs = Vec::new();
        for &k in Kernel::ALL {
            let d = k.dtype();
            lesson.prepare(d, sizes.elems(d, Edge::Ragged))?;
            let (round, ragged) = time_pair(|edge| lesson.time(k, sizes.elems(d, edge), plan))?;
            let what = match k {
                Kernel::Scalar(_) => format!("{}, one per thread", d.name()),
                Kernel::Vec16(_) => format!("{}, one {} per thread", d.name(), d.vector_name()),
            };
            let pair = RaggedPair {
                what: format!("{} ({what})", k.symbol()),
                stem: k.symbol().to_string(),
                round_elems: sizes.elems(d, Edge::Round),
                ragged_elems: sizes.elems(d, Edge::Ragged),
                round_shape: sizes.shape(d, Edge::Round),
                ragged_shape: sizes.shape(d, Edge::Ragged),
                round,
                ragged,
            };
            for edge in Edge::ALL {
                let n = pair.elems(edge);
                timed.rows.push(
                    Row::new(
                        pair.key(edge),
                        format!("{} x {what}", sizes.shape(d, edge)),
                        pair.timing(edge).clone(),
                    )
                    .bytes((3 * n * d.size()) as f64),
                );
            }
            pairs.push(pair);
        }
        let ms = |k: Kernel| {
            timed
                .rows
                .iter()
                .find(|r| r.key == format!("{}/{}", k.symbol(), Edge::Round.key()))
                .map_or(f64::NAN, |r| r.timing.median_ms())
        };
        let ratios: Vec<(Dtype, f64)> = Dtype::ALL
            .iter()
            .map(|&d| (d, ms(Kernel::Scalar(d)) / ms(Kernel::Vec16(d))))
            .collect();
        let shown: Vec<String> = ratios
            .iter()
            .map(|(d, r)| format!("{} {r:.2}x", d.name()))
            .collect();
        let mut reading = format!(
            "Bytes counted: a and b read once, out written once (3 x n x element size). Each size was timed twice, \
             round, ragged, ragged, round, and each row merges its two timings' batches. Scalar time / vector time at \
             the round size: {}.",
            shown.join(", ")
        );
        let by_width = |d: Dtype| {
            ratios
                .iter()
                .find(|(x, _)| *x == d)
                .map_or(f64::NAN, |r| r.1)
        };
        if by_width(Dtype::F16) > by_width(Dtype::F32)
            && by_width(Dtype::F32) > by_width(Dtype::F64)
        {
            reading.push_str(
                " The narrower the element, the more the one-element-per-thread add loses: it moves the same bytes in \
                 more, narrower accesses.",
            );
        }
        timed.reading = Some(reading);

        // What the ragged edge cost, per add.
        let mut edge_section = Section::new(format!(
            "Round against ragged: each add at 2^k and 2^k + {RAGGED_TAIL} elements"
        ));
        for p in &pairs {
            edge_section.line(p.sentence());
        }
        let count = |v: crate::ragged::EdgeCost| pairs.iter().filter(|p| p.verdict() == v).count();
        edge_section.reading = Some(format!(
            "{RAGGED_TAIL} elements more leave a tail of n % W in every type (f32 {}, f64 {}, f16 {}), added one element \
             a thread by the first threads of the same launch, and every element of both sizes was checked. Of the {} \
             adds, {} cost more per element at the ragged size past the noise, {} less, {} within it (the noise: both \
             rows' batch spreads added).",
            sizes.elems(Dtype::F32, Edge::Ragged) % Dtype::F32.width(),
            sizes.elems(Dtype::F64, Edge::Ragged) % Dtype::F64.width(),
            sizes.elems(Dtype::F16, Edge::Ragged) % Dtype::F16.width(),
            pairs.len(),
            count(crate::ragged::EdgeCost::Costlier),
            count(crate::ragged::EdgeCost::Cheaper),
            count(crate::ragged::EdgeCost::WithinNoise),
        ));

        SectionReport::passed(
            context,
            Findings {
                sections: vec![trace_section, seed, trap, timed, edge_section],
                facts: json!({
                    "traces": traces, "seed_launches": launches, "width_trap": evidence,
                    "round_vs_ragged": pairs.iter().map(RaggedPair::json).collect::<Vec<_>>(),
                }),
            },
        )
    }

    fn twins<'g>(gpu: &'g Gpu, sizes: &Sizes) -> Result<Vectorize<'g>> {
        Vectorize::new(gpu, sizes)
    }
}
