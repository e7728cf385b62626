//! The conv2d lesson on the host (chapter 19.4, Worked Example 19.4.2): the
//! seed's FLOP formulas and padding overhead, its host mirrors timed on the
//! CPU at its sizes (64 and 128) with its protocol, and the same two
//! convolutions on the GPU at those sizes and at sizes a modern GPU needs
//! (4096, 8192), in GFLOP/s beside the roofline's bound for their
//! arithmetic intensity. Every output is checked first: bit for bit against
//! the kernels' arithmetic done on the CPU, and within a stated bound of an
//! f64 reference.

pub mod reference;

use cudarc::driver::{CudaSlice, LaunchConfig};
use kernels_gpu::conv2d::*;
use serde::Serialize;
use serde_json::json;

use crate::check::{Failure, Tolerance, first_mismatch};
use crate::compare::Twinned;
use crate::error::{Error, Result};
use crate::gpu::{DeviceInfo, Gpu};
use crate::kernels::{KernelId, KernelSet};
use crate::lesson::{
    self, Findings, Outcome, Row, RunOptions, Section, SectionReport, time_on_cpu,
};
use crate::report::Context;
use crate::sizes::{LessonSizes, Stream, grown_side};
use crate::timing::{self, Plan, Timing};

crate::kernel_ids! {
    /// The two convolutions: (image, out, n, the 3x3 taps by value).
    pub enum Kernel {
        /// No padding: (n - 2)^2 outputs (the seed's "basic").
        Valid = "conv2d_valid" (Ptr, Ptr, U32, Struct(36)),
        /// Zero padding: n^2 outputs (the seed's "padded").
        Same = "conv2d_same" (Ptr, Ptr, U32, Struct(36)),
    }
}

impl Kernel {
    /// The seed's name for it.
    pub fn seed_name(self) -> &'static str {
        match self {
            Kernel::Valid => "basic",
            Kernel::Same => "padded",
        }
    }

    /// Outputs along each side of an n x n image: n - 2 or n.
    pub fn out_side(self, n: usize) -> usize {
        match self {
            Kernel::Valid => n.saturating_sub(TAPS_PER_SIDE - 1),
            Kernel::Same => n,
        }
    }

    /// Outputs of an n x n image.
    pub fn outputs(self, n: usize) -> usize {
        self.out_side(n) * self.out_side(n)
    }

    /// The seed's FLOP count: 2 FLOP per tap x 9 taps x outputs, so
    /// 2 (n - 2)^2 x 9 (valid) or 2 n^2 x 9 (same).
    pub fn flop(self, n: usize) -> u64 {
        (FLOP_PER_TAP * TAPS * self.outputs(n)) as u64
    }

    /// Compulsory DRAM bytes of one launch: the image read once (4 n^2) and
    /// every output written once (4 per output). The 36 bytes of weights
    /// travel as a kernel parameter and are not counted.
    pub fn compulsory_bytes(self, n: usize) -> u64 {
        (4 * (n * n + self.outputs(n))) as u64
    }

    /// FLOP per compulsory byte.
    pub fn intensity(self, n: usize) -> f64 {
        self.flop(n) as f64 / self.compulsory_bytes(n) as f64
    }

    // ANCHOR: launch_config
    /// The launch over an n x n image: BLOCK_X x BLOCK_Y blocks covering
    /// the outputs.
    pub fn launch_config(self, n: usize) -> LaunchConfig {
        let side = self.out_side(n);
        LaunchConfig {
            grid_dim: (
                side.div_ceil(BLOCK_X as usize).max(1) as u32,
                side.div_ceil(BLOCK_Y as usize).max(1) as u32,
                1,
            ),
            block_dim: (BLOCK_X, BLOCK_Y, 1),
            shared_mem_bytes: 0,
        }
    }
    // ANCHOR_END: launch_config
}

/// The seed's padding overhead at side n: the same convolution's FLOP
/// minus the valid one's, and that as a percentage of the valid one's.
pub fn padding_overhead(n: usize) -> (u64, f64) {
    let (valid, same) = (Kernel::Valid.flop(n), Kernel::Same.flop(n));
    let extra = same - valid;
    (extra, 100.0 * extra as f64 / valid as f64)
}

/// The seed's lines for side n: the two formulas with their values, and the
/// padding overhead (to the seed's one decimal, or two below 0.1%).
pub fn formula_lines(n: usize) -> Vec<String> {
    let (extra, pct) = padding_overhead(n);
    vec![
        format!(
            "basic_ops  = 2 * ({n}-2)^2 * 3 * 3 = {}",
            Kernel::Valid.flop(n)
        ),
        format!("padded_ops = 2 * {n}^2 * 3 * 3 = {}", Kernel::Same.flop(n)),
        // The seed's one decimal, and two where one would print 0.0%.
        format!(
            "extra work from padding: {extra} more FLOPs ({pct:.prec$}% more)",
            prec = if pct >= 0.1 { 1 } else { 2 }
        ),
    ]
}

// ---- the seed's host mirrors ------------------------------------------------

/// The seed's valid ("basic") convolution on the CPU: f32, `sum += x * w`
/// (rustc does not fuse it: a multiply and an add per tap), into `out` of
/// (n - 2)^2.
///
/// # Panics
/// When n < 3 or the slices are the wrong sizes.
pub fn conv2d_basic_host(input: &[f32], n: usize, taps: &Taps3x3, out: &mut [f32]) {
    let m = n - 2;
    assert!(input.len() == n * n && out.len() == m * m);
    for row in 0..m {
        for col in 0..m {
            let mut sum = 0.0f32;
            for r in 0..3 {
                for c in 0..3 {
                    sum += input[(row + r) * n + col + c] * taps.w[r * 3 + c];
                }
            }
            out[row * m + col] = sum;
        }
    }
}

// ANCHOR: padded_host
/// The seed's padded ("same") convolution on the CPU: copies the image into
/// a zeroed (n + 2) x (n + 2) buffer on every call, as the seed does, then
/// convolves that, into `out` of n^2.
///
/// # Panics
/// When the slices are the wrong sizes.
pub fn conv2d_padded_host(input: &[f32], n: usize, taps: &Taps3x3, out: &mut [f32]) {
    assert!(input.len() == n * n && out.len() == n * n);
    let p = n + 2;
    let mut padded = vec![0.0f32; p * p];
    for r in 0..n {
        padded[(r + 1) * p + 1..(r + 1) * p + 1 + n].copy_from_slice(&input[r * n..(r + 1) * n]);
    }
    for row in 0..n {
        for col in 0..n {
            let mut sum = 0.0f32;
            for r in 0..3 {
                for c in 0..3 {
                    sum += padded[(row + r) * p + col + c] * taps.w[r * 3 + c];
                }
            }
            out[row * n + col] = sum;
        }
    }
}
// ANCHOR_END: padded_host

// ANCHOR: cpu_plan
/// The seed's timing protocol for its host mirrors: 5 warm-up calls, then
/// 20 timed calls (each its own sample here, so the median and spread come
/// with the mean the seed printed).
pub const SEED_CPU_PLAN: Plan = Plan {
    warmups: 5,
    batches: 20,
    launches_per_batch: 1,
    flush_l2: false,
};
// ANCHOR_END: cpu_plan

// ---- the GPU side -----------------------------------------------------------

/// What the checks of one kernel at one side compare against: the f32 FMA
/// mirror (bit for bit), the f64 reference and its bound.
pub struct Expected {
    /// The kernels' arithmetic on the CPU.
    pub fma: Vec<f32>,
    /// The f64 sums.
    pub f64: Vec<f64>,
    /// The largest error allowed against `f64` at each output.
    pub bound: Vec<f64>,
}

impl Expected {
    /// The expected outputs of `kernel` over `input` (n x n).
    pub fn of(kernel: Kernel, input: &[f32], n: usize) -> Expected {
        let t = &reference::LESSON_TAPS;
        match kernel {
            Kernel::Valid => Expected {
                fma: reference::valid_fma(input, n, t),
                f64: reference::valid_f64(input, n, t),
                bound: reference::bound_valid(input, n, t),
            },
            Kernel::Same => Expected {
                fma: reference::same_fma(input, n, t),
                f64: reference::same_f64(input, n, t),
                bound: reference::bound_same(input, n, t),
            },
        }
    }
}

/// Floats past the largest output that the output buffer also has,
/// poisoned before each check and required to stay poisoned: a kernel that
/// writes past its last output (a wrong row stride, a missing guard) fails,
/// although the write stays inside the allocation where compute-sanitizer
/// cannot see it.
pub const GUARD_FLOATS: usize = 64;

/// The image and output buffers on one GPU, sized for the largest side the
/// run uses.
pub struct Conv2d<'g> {
    gpu: &'g Gpu,
    kernels: KernelSet<Kernel>,
    input: CudaSlice<f32>,
    out: CudaSlice<f32>,
    /// Floats each buffer holds.
    capacity: usize,
    /// The side of the image `input` holds now.
    loaded: Option<usize>,
    /// The largest side the buffers hold (the comparison times it).
    largest: usize,
}

impl<'g> Conv2d<'g> {
    /// Checks free memory and allocates an image and an output of
    /// `max_side`^2 floats each.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] before allocating; driver errors.
    pub fn new(gpu: &'g Gpu, max_side: usize) -> Result<Self> {
        let capacity = max_side * max_side;
        gpu.require_free_memory(
            4 * (2 * capacity + GUARD_FLOATS),
            &format!("the conv2d lesson's {max_side} x {max_side} image and output"),
        )?;
        Ok(Conv2d {
            gpu,
            kernels: KernelSet::new(gpu)?,
            input: gpu.alloc_f32(capacity)?,
            out: gpu.alloc_f32(capacity + GUARD_FLOATS)?,
            capacity,
            loaded: None,
            largest: max_side,
        })
    }

    /// Makes `input` hold the n x n image of [`reference::fill`].
    ///
    /// # Errors
    /// [`Error::Size`] for an image past the buffers; driver errors.
    fn prepare(&mut self, n: usize) -> Result<()> {
        if n * n > self.capacity {
            return Err(Error::Size(format!(
                "conv2d: a {n} x {n} image; the buffers hold {} floats",
                self.capacity
            )));
        }
        if self.loaded != Some(n) {
            self.gpu
                .upload(&reference::image(n), &mut self.input.slice_mut(..n * n))?;
            self.loaded = Some(n);
        }
        Ok(())
    }

    /// Launches `kernel` over the n x n image in `input` (asynchronously)
    /// on the side in use.
    ///
    /// # Errors
    /// [`Error::Size`] for n < 3 or an image past the buffers; a launch the
    /// driver refuses, charged to the kernel.
    pub fn launch(&mut self, kernel: Kernel, n: usize) -> Result<()> {
        if n < MIN_SIDE || n * n > self.capacity {
            return Err(Error::Size(format!(
                "{}: a {n} x {n} image; the buffers hold {} floats and a 3x3 valid convolution needs n >= {MIN_SIDE}",
                kernel.symbol(),
                self.capacity
            )));
        }
        // ANCHOR: launch
        let taps = reference::LESSON_TAPS;
        let launch = self
            .kernels
            .launch(self.gpu, kernel)
            .input(&self.input)
            .output(&mut self.out)
            .scalar(n as u32)
            .by_value(&taps);
        // SAFETY: both buffers hold n^2 >= the kernel's outputs floats
        // (checked above), they are distinct, and the grid covers the
        // outputs; the taps travel as the kernel's 36-byte #[repr(C)]
        // parameter, and every argument's kind is checked at launch.
        unsafe { launch.launch(kernel.launch_config(n)) }
        // ANCHOR_END: launch
    }

    /// Runs `kernel` over the n x n image into a 0xFF-poisoned output and
    /// checks every output: bit for bit against `want.fma`, and within
    /// `want.bound` of `want.f64`; the [`GUARD_FLOATS`] after the last
    /// output must still be poison. Returns the failures (at most one per
    /// check) and the output's bits.
    pub fn check(
        &mut self,
        kernel: Kernel,
        n: usize,
        want: &Expected,
    ) -> Result<(Vec<Failure>, Vec<u64>)> {
        self.prepare(n)?;
        let outputs = kernel.outputs(n);
        self.gpu
            .fill_bytes(&mut self.out.slice_mut(..outputs + GUARD_FLOATS), 0xFF)?;
        self.launch(kernel, n)?;
        self.gpu.sync_after(kernel.symbol())?;
        let mut got = vec![0.0f32; outputs + GUARD_FLOATS];
        self.gpu.download(&self.out, &mut got)?;
        let guard = got.split_off(outputs);
        let side = kernel.out_side(n);
        let mut failures = Vec::new();
        if let Some(m) = first_mismatch(&got, &want.fma, Tolerance::Bits) {
            failures.push(Failure {
                kernel: kernel.symbol(),
                detail: format!(
                    "n = {n}: {}: nine FMAs in row-major tap order, as the CPU mirror does them",
                    m.in_2d(side)
                ),
            });
        }
        if let Some(j) = guard.iter().position(|g| g.to_bits() != u32::MAX) {
            failures.push(Failure {
                kernel: kernel.symbol(),
                detail: format!(
                    "n = {n}: wrote {:e} {} float(s) past its last output (index {}); that must stay poisoned",
                    guard[j],
                    j + 1,
                    outputs + j
                ),
            });
        }
        if let Some(m) = first_mismatch(&got, &want.f64, Tolerance::Bound(&want.bound)) {
            failures.push(Failure {
                kernel: kernel.symbol(),
                detail: format!(
                    "n = {n}: against the f64 reference, {} (the bound is 10 x 2^-24 x sum |x w|)",
                    m.in_2d(side)
                ),
            });
        }
        Ok((
            failures,
            got.iter().map(|v| u64::from(v.to_bits())).collect(),
        ))
    }

    /// Times `kernel` over the n x n image with `plan`.
    pub fn time(&mut self, kernel: Kernel, n: usize, plan: Plan) -> Result<Timing> {
        self.prepare(n)?;
        let gpu = self.gpu;
        timing::time_kernel(gpu, kernel.symbol(), plan, || self.launch(kernel, n))
    }
}

impl Twinned for Conv2d<'_> {
    type Kernel = Kernel;

    fn kernels(&mut self) -> &mut KernelSet<Kernel> {
        &mut self.kernels
    }

    fn check(&mut self, k: Kernel) -> Result<(Vec<Failure>, Vec<u64>)> {
        let want = Expected::of(k, &reference::image(CHECK_SIDE), CHECK_SIDE);
        Conv2d::check(self, k, CHECK_SIDE, &want)
    }

    fn time(&mut self, k: Kernel, plan: Plan) -> Result<Timing> {
        let n = self.largest;
        Conv2d::time(self, k, n, plan)
    }
}

/// The lesson's sizes: the sides of the square images timed on the GPU
/// (the seed's two, then the largest side, whose image streams from DRAM,
/// and half of it), and the sides checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sizes {
    /// Every side timed on the GPU, in report order.
    pub timed_sides: Vec<usize>,
    /// Every side checked: the timed ones and the odd check side.
    pub checked_sides: Vec<usize>,
    /// The sides the host mirrors are timed at on the CPU (the seed's).
    pub cpu_sides: [usize; 2],
}

impl Sizes {
    /// A full run on `info`'s GPU: the seed's sides, then the largest side
    /// (grown from [`SEED_LARGE_SIDE`] until an image is at least 4x the
    /// L2) and half of it; `quick`: the seed's sides only.
    pub fn new(info: &crate::gpu::DeviceInfo, quick: bool) -> Sizes {
        let mut timed_sides = SEED_SIDES.to_vec();
        if !quick {
            let largest = grown_side(SEED_LARGE_SIDE, size_of::<f32>(), info.l2_bytes);
            timed_sides.extend([largest / 2, largest]);
        }
        let checked_sides = timed_sides.iter().copied().chain([CHECK_SIDE]).collect();
        Sizes {
            timed_sides,
            checked_sides,
            cpu_sides: SEED_SIDES,
        }
    }

    /// The largest side checked or timed: what the buffers hold.
    pub fn max_side(&self) -> usize {
        self.checked_sides
            .iter()
            .copied()
            .max()
            .unwrap_or(CHECK_SIDE)
    }

    /// Fails unless every image's `row * n + col` fits the kernels' 32-bit
    /// row and column.
    ///
    /// # Errors
    /// [`Error::Size`] naming the side.
    pub fn validate(&self) -> Result<()> {
        let n = self.max_side();
        if n * n > u32::MAX as usize {
            return Err(Error::Size(format!(
                "conv2d: a {n} x {n} image is past the kernels' 32-bit rows and columns"
            )));
        }
        Ok(())
    }
}

impl LessonSizes for Sizes {
    fn for_gpu(info: &crate::gpu::DeviceInfo, quick: bool) -> Result<Sizes> {
        let sizes = Sizes::new(info, quick);
        sizes.validate()?;
        Ok(sizes)
    }
    /// The largest image and its output; the smaller sides are timed where
    /// they fall (the seed's sit in L2: the GFLOP/s against size curve).
    fn streams(&self) -> Vec<Stream> {
        let n = self.max_side();
        vec![Stream::of::<f32>("largest image, output", n * n)]
    }

    fn device_bytes(&self) -> usize {
        let n = self.max_side();
        4 * (2 * n * n + GUARD_FLOATS)
    }
}

/// The roofline's bound for a kernel of `intensity` FLOP/byte on this GPU,
/// FLOP/s: min(FP32 peak, intensity x DRAM bandwidth), both derived from
/// the driver's attributes. `None` where either is unknown (an
/// architecture the lanes table lacks, or a clock, SM count or bus width
/// the driver reports as 0).
pub fn roofline_bound(info: &DeviceInfo, intensity: f64) -> Option<f64> {
    let peak = info.derived_fp32_flop_per_s()?;
    let dram = info.derived_dram_bytes_per_s()?;
    Some(peak.min(intensity * dram))
}

/// How many times the time the derived DRAM limit needs for a launch's
/// compulsory bytes a measured time must be before the reading calls the
/// time fixed cost rather than memory traffic.
pub const FIXED_COST_RATIO: f64 = 10.0;

/// The reading of one size's rows (the two GPU kernels keyed
/// `<symbol>/<n>`, and at the seed's sizes the host mirrors): each GPU
/// figure against the roofline's bound at its own intensity; where a grid
/// has fewer blocks than `info` has SMs, the measured time beside the time
/// the derived DRAM limit needs for the compulsory bytes (called fixed cost
/// only when it is [`FIXED_COST_RATIO`] times that or more); and the CPU
/// mirror beside the GPU.
///
/// # Panics
/// When `rows` lacks either GPU kernel's row at `n` (a caller bug).
pub fn size_reading(rows: &[Row], n: usize, info: &DeviceInfo) -> String {
    let dram = info.derived_dram_bytes_per_s();
    let peak = info.derived_fp32_flop_per_s();
    let gpu_row = |k: Kernel| {
        rows.iter()
            .find(|r| r.key == format!("{}/{n}", k.symbol()))
            .expect("the caller passes both GPU rows")
    };
    let (valid, same) = (gpu_row(Kernel::Valid), gpu_row(Kernel::Same));
    let against_bound = |k: Kernel, r: &Row| {
        let got = r.gflop_per_s().unwrap_or(f64::NAN);
        let name = match k {
            Kernel::Valid => "valid",
            Kernel::Same => "same",
        };
        match roofline_bound(info, k.intensity(n)) {
            Some(b) => format!(
                "{name} {got:.2} GFLOP/s = {:.1}% of its bound {:.0} GFLOP/s at {:.2} FLOP/byte",
                100.0 * got * 1e9 / b,
                b / 1e9,
                k.intensity(n)
            ),
            None => format!(
                "{name} {got:.2} GFLOP/s at {:.2} FLOP/byte (no bound: {} unknown)",
                k.intensity(n),
                match (peak, dram) {
                    (None, None) => "the FP32 peak and the DRAM limit are",
                    (None, Some(_)) => "the FP32 peak is",
                    _ => "the DRAM limit is",
                }
            ),
        }
    };
    let mut reading = format!(
        "GPU: {}; {}. Bound = min(FP32 peak {}, intensity x DRAM {}), both derived from the driver's \
         attributes.",
        against_bound(Kernel::Valid, valid),
        against_bound(Kernel::Same, same),
        peak.map_or("unknown".to_string(), |p| format!("{:.0} GFLOP/s", p / 1e9)),
        dram.map_or("unknown".to_string(), |d| format!("{:.0} GB/s", d / 1e9)),
    );
    let blocks = |k: Kernel| {
        let g = k.launch_config(n).grid_dim;
        g.0 as usize * g.1 as usize
    };
    if blocks(Kernel::Same) < info.sms as usize {
        let measured_us = 1e3 * valid.timing.median_ms();
        let grids = format!(
            " The grids are {} and {} blocks for {} SMs, so most SMs have nothing to do; the valid kernel took \
             {measured_us:.1} us",
            blocks(Kernel::Valid),
            blocks(Kernel::Same),
            info.sms,
        );
        reading.push_str(&grids);
        match dram {
            Some(dram) => {
                let dram_us = 1e6 * Kernel::Valid.compulsory_bytes(n) as f64 / dram;
                let ratio = measured_us / dram_us;
                reading.push_str(&format!(
                    " where the derived DRAM limit moves its {} compulsory bytes in {dram_us:.3} us ({ratio:.0}x){}",
                    Kernel::Valid.compulsory_bytes(n),
                    if ratio >= FIXED_COST_RATIO {
                        ": the time is fixed cost (the launch, block scheduling), not memory traffic."
                    } else {
                        "."
                    }
                ));
            }
            None => reading.push_str(
                " (the derived DRAM limit is unknown, so the time is not set against the traffic's).",
            ),
        }
    }
    if let Some(cpu) = rows
        .iter()
        .find(|r| r.cpu && r.key.starts_with("conv2d_basic_host"))
    {
        let ratio = cpu.timing.median_ms() / valid.timing.median_ms();
        reading.push_str(&format!(
            " CPU (host mirror, one thread): basic {:.2} GFLOP/s; {} (the GPU's time is the kernel alone, without \
             the copies to and from it).",
            cpu.gflop_per_s().unwrap_or(f64::NAN),
            if ratio >= 1.0 {
                format!("its time is {ratio:.2}x the GPU valid kernel's")
            } else {
                format!("the GPU valid kernel took {:.2}x its time", 1.0 / ratio)
            }
        ));
    }
    reading
}

/// The CUDA C twins.
pub const CUDA_C_SOURCE: &str = include_str!("conv2d.cu");

/// The conv2d lesson as `lab` runs it.
pub struct Conv2dLesson;

impl lesson::Lesson for Conv2dLesson {
    const NAME: &'static str = "conv2d";
    const ABOUT: &'static str = "Chapter 19.4: 3x3 convolutions, valid and zero-padded, in GFLOP/s on the GPU (the seed's sides up to a DRAM-sized image) and the seed's host mirrors on the CPU.";
    type Kernel = Kernel;
    type Sizes = Sizes;
    type Twins<'g> = Conv2d<'g>;

    fn block_sizes() -> serde_json::Value {
        json!({"conv2d_valid": [BLOCK_X, BLOCK_Y], "conv2d_same": [BLOCK_X, BLOCK_Y]})
    }

    /// What NVRTC compiles: the block shape as `#define`s, then the twins.
    fn cuda_c() -> String {
        format!("#define BLOCK_X {BLOCK_X}\n#define BLOCK_Y {BLOCK_Y}\n{CUDA_C_SOURCE}")
    }

    /// Both kernels checked at every side (and the host mirrors at the seed's),
    /// then the seed's formulas, the CPU rows and the GPU rows, side by side.
    fn run(
        gpu: &Gpu,
        sizes: &Sizes,
        context: Context,
        options: &RunOptions<'_>,
    ) -> Result<Outcome<Box<dyn lesson::Report>>> {
        let plan = options.plan;
        let checked = sizes.checked_sides.clone();
        let mut lesson = Conv2d::new(gpu, sizes.max_side())?;
        let mut failures = Vec::new();
        for &n in &checked {
            let image = reference::image(n);
            for &k in Kernel::ALL {
                let want = Expected::of(k, &image, n);
                failures.extend(lesson.check(k, n, &want)?.0);
            }
        }
        // The host mirrors, within the same f64 bound (their order differs:
        // a rounded multiply and a rounded add per tap, so not bit-exact).
        let taps = reference::LESSON_TAPS;
        for n in SEED_SIDES {
            let image = reference::image(n);
            for &k in Kernel::ALL {
                let mut out = vec![0.0f32; k.outputs(n)];
                let want = Expected::of(k, &image, n);
                match k {
                    Kernel::Valid => conv2d_basic_host(&image, n, &taps, &mut out),
                    Kernel::Same => conv2d_padded_host(&image, n, &taps, &mut out),
                }
                if let Some(m) = first_mismatch(&out, &want.f64, Tolerance::Bound(&want.bound)) {
                    failures.push(Failure {
                        kernel: k.symbol(),
                        detail: format!(
                            "(host mirror conv2d_{}) n = {n}: against the f64 reference, {}",
                            k.seed_name(),
                            m.in_2d(k.out_side(n))
                        ),
                    });
                }
            }
        }
        if !failures.is_empty() {
            return Ok(Outcome::Failed(failures));
        }

        let mut checks = Section::new("Checks");
        checks.line(format!(
            "Both kernels at n = {}: every output bit for bit against the CPU's nine FMAs in the kernels' order, and within \
             10 x 2^-24 x sum|x w| of an f64 reference. The host mirrors at n = {} and {}: within the same bound (a rounded \
             multiply and a rounded add per tap, so not bit for bit).",
            checked
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            SEED_SIDES[0],
            SEED_SIDES[1]
        ));
        checks.line(format!(
            "Stencil (row-major): {:?}; image: fill(i) = (hash(i) mod 2003) / 1001 - 1 (host/src/fill.rs).",
            taps.w
        ));

        let dram = gpu.info.derived_dram_bytes_per_s();
        let peak = gpu.info.derived_fp32_flop_per_s();
        let mut sections = vec![checks];
        let mut facts_sides = Vec::new();
        for &n in &sizes.timed_sides {
            let mut s = Section::new(format!("{n} x {n} convolution"));
            for line in formula_lines(n) {
                s.line(line);
            }
            for &k in Kernel::ALL {
                s.line(format!(
                    "{} ({}): {} outputs, {} compulsory bytes (4 n^2 in + 4 per output out), {:.3} FLOP/byte",
                    k.symbol(),
                    k.seed_name(),
                    k.outputs(n),
                    k.compulsory_bytes(n),
                    k.intensity(n)
                ));
            }
            if SEED_SIDES.contains(&n) {
                s.line(format!(
                    "The CPU rows are timed by the host clock with the seed's protocol, {} warm-up calls then {} timed \
                     calls, each call its own sample (not the GPU rows' counts given at the foot).",
                    SEED_CPU_PLAN.warmups, SEED_CPU_PLAN.batches
                ));
                let image = reference::image(n);
                for &k in Kernel::ALL {
                    let mut out = vec![0.0f32; k.outputs(n)];
                    // ANCHOR: time_mirror
                    let t = time_on_cpu(SEED_CPU_PLAN, || match k {
                        Kernel::Valid => {
                            conv2d_basic_host(std::hint::black_box(&image), n, &taps, &mut out)
                        }
                        Kernel::Same => {
                            conv2d_padded_host(std::hint::black_box(&image), n, &taps, &mut out)
                        }
                    });
                    std::hint::black_box(&out);
                    // ANCHOR_END: time_mirror
                    s.rows.push(
                        Row::new(
                            format!("conv2d_{}_host/{n}", k.seed_name()),
                            format!(
                                "host mirror, {} (the seed's protocol: {} warm-up + {} timed)",
                                k.seed_name(),
                                SEED_CPU_PLAN.warmups,
                                SEED_CPU_PLAN.batches
                            ),
                            t,
                        )
                        .flop(k.flop(n) as f64)
                        .on_cpu(),
                    );
                }
            }
            let mut bounds = Vec::new();
            for &k in Kernel::ALL {
                let t = lesson.time(k, n, plan)?;
                s.rows.push(
                    Row::new(
                        format!("{}/{n}", k.symbol()),
                        format!(
                            "GPU, {} x {} outputs, {BLOCK_X}x{BLOCK_Y} blocks",
                            k.out_side(n),
                            k.out_side(n)
                        ),
                        t,
                    )
                    .bytes(k.compulsory_bytes(n) as f64)
                    .flop(k.flop(n) as f64),
                );
                bounds.push(roofline_bound(&gpu.info, k.intensity(n)));
            }
            s.reading = Some(size_reading(&s.rows, n, &gpu.info));
            let (extra, pct_extra) = padding_overhead(n);
            facts_sides.push(json!({
                "n": n,
                "basic_ops": Kernel::Valid.flop(n), "padded_ops": Kernel::Same.flop(n),
                "padding_extra_flop": extra, "padding_extra_pct": pct_extra,
                "valid_bytes": Kernel::Valid.compulsory_bytes(n), "same_bytes": Kernel::Same.compulsory_bytes(n),
                "valid_flop_per_byte": Kernel::Valid.intensity(n), "same_flop_per_byte": Kernel::Same.intensity(n),
                "roofline_bound_flop_per_s": bounds,
            }));
            sections.push(s);
        }

        SectionReport::passed(
            context,
            Findings {
                sections,
                facts: json!({
                    "taps": taps.w, "checked_sides": checked, "sides": facts_sides,
                    "derived_dram_bytes_per_s": dram, "derived_fp32_flop_per_s": peak,
                    "check": "bit-exact against nine f32 FMAs in row-major tap order; within 10 x 2^-24 x sum|x w| of f64",
                }),
            },
        )
    }

    fn twins<'g>(gpu: &'g Gpu, sizes: &Sizes) -> Result<Conv2d<'g>> {
        Conv2d::new(gpu, sizes.max_side())
    }
}
