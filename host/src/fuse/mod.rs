//! The fuse lesson on the host (chapter 19.2): `relu(a * b + c)` as three
//! kernels against one. The host mirrors count the memory operations per
//! element (5 reads + 3 writes against 3 + 1), the seed's six-element
//! example runs on the GPU, both pipelines are checked against the CPU
//! reference and against each other bit for bit, and the timings show how
//! much of the counted 2x the GPU delivers.

pub mod reference;

use cudarc::driver::{CudaSlice, LaunchConfig};
use kernels_gpu::fuse::*;
use serde::Serialize;
use serde_json::json;

use crate::check::{Failure, Tolerance};
use crate::compare::{Agreement, Twinned};
use crate::error::Result;
use crate::gpu::Gpu;
use crate::kernels::{KernelId, KernelSet};
use crate::lesson::{self, Findings, Outcome, Row, RunOptions, Section, SectionReport};
use crate::report::Context;
use crate::sizes::{LessonSizes, Stream, grown};
use crate::timing::{self, Plan, Timing};

use reference::{EXAMPLE_A, EXAMPLE_B, EXAMPLE_C, Inputs, MemOps};

crate::kernel_ids! {
    /// The lesson's kernels: the inputs, then the output, then n.
    pub enum Kernel {
        /// Stage 1: t1 = a * b.
        Mul = "unfused_mul" (Ptr, Ptr, Ptr, U64),
        /// Stage 2: t2 = t1 + c.
        Add = "unfused_add" (Ptr, Ptr, Ptr, U64),
        /// Stage 3: y = relu(t2).
        Relu = "unfused_relu" (Ptr, Ptr, U64),
        /// y = relu(a * b + c), the product rounded before the add.
        Fused = "fused_mul_add_relu" (Ptr, Ptr, Ptr, Ptr, U64),
        /// y = relu(fma(a, b, c)), rounded once.
        FusedFma = "fused_mul_add_relu_fma" (Ptr, Ptr, Ptr, Ptr, U64),
    }
}

impl Kernel {
    /// The unfused pipeline's stages, in launch order.
    pub const STAGES: [Kernel; 3] = [Kernel::Mul, Kernel::Add, Kernel::Relu];

    /// What the kernel computes, for a table row.
    pub fn label(self) -> &'static str {
        match self {
            Kernel::Mul => "stage 1 of 3: t1 = a * b",
            Kernel::Add => "stage 2 of 3: t2 = t1 + c",
            Kernel::Relu => "stage 3 of 3: y = relu(t2)",
            Kernel::Fused => "fused: y = relu(a * b + c), product rounded",
            Kernel::FusedFma => "fused with FMA: rounded once, NOT the pipeline's bits",
        }
    }

    /// Tensor-sized reads and writes per element.
    pub fn mem_ops(self) -> MemOps {
        let (reads, writes) = match self {
            Kernel::Mul | Kernel::Add => (2, 1),
            Kernel::Relu => (1, 1),
            Kernel::Fused | Kernel::FusedFma => (FUSED_READS, FUSED_WRITES),
        };
        MemOps { reads, writes }
    }

    /// Bytes per element the kernel moves: its memory operations x 4.
    pub fn bytes_per_elem(self) -> usize {
        self.mem_ops().total() * ELEM_BYTES
    }

    // ANCHOR: launch_config
    /// The launch over `n` elements: one thread per element, blocks of
    /// THREADS_PER_BLOCK (at least one block).
    pub fn launch_config(n: usize) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (n.div_ceil(THREADS_PER_BLOCK as usize).max(1) as u32, 1, 1),
            block_dim: (THREADS_PER_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        }
    }
    // ANCHOR_END: launch_config
}

/// Bytes per element of the unfused pipeline, from its counted operations:
/// 8 x 4 = 32.
pub const UNFUSED_BYTES_PER_ELEM: usize = (UNFUSED_READS + UNFUSED_WRITES) * ELEM_BYTES;
/// Bytes per element of the fused kernel: 4 x 4 = 16.
pub const FUSED_BYTES_PER_ELEM: usize = (FUSED_READS + FUSED_WRITES) * ELEM_BYTES;
/// The sizes every kernel and the pipeline are checked at: the example's
/// length and the odd check size.
pub const CHECKED_SIZES: [usize; 2] = [EXAMPLE_A.len(), CHECK_ELEMS];
/// The pipeline's name in failures and timing rows.
pub const PIPELINE: &str = "unfused_pipeline";

/// The lesson's six device buffers of `elems` floats: the inputs a, b, c
/// (holding the fills), the intermediates t1, t2 and the output y.
pub struct Fuse<'g> {
    gpu: &'g Gpu,
    kernels: KernelSet<Kernel>,
    a: CudaSlice<f32>,
    b: CudaSlice<f32>,
    c: CudaSlice<f32>,
    t1: CudaSlice<f32>,
    t2: CudaSlice<f32>,
    y: CudaSlice<f32>,
    elems: usize,
}

/// Launches `kernel` (on the side in use) with `inputs`, then `out`, then n.
fn launch_on(
    gpu: &Gpu,
    kernels: &KernelSet<Kernel>,
    kernel: Kernel,
    inputs: &[&CudaSlice<f32>],
    out: &mut CudaSlice<f32>,
    n: usize,
) -> Result<()> {
    assert!(
        inputs.iter().all(|x| n <= x.len()) && n <= out.len(),
        "n = {n} exceeds the buffers"
    );
    let mut launch = kernels.launch(gpu, kernel);
    for &x in inputs {
        launch = launch.input(x);
    }
    let launch = launch.output(out).scalar(n as u64);
    // SAFETY: every buffer holds at least n floats (asserted), the output
    // is a distinct allocation from every input, and the grid gives each
    // element a thread; the argument kinds are checked at launch.
    unsafe { launch.launch(Kernel::launch_config(n)) }
}

/// The first element whose bits differ from `want`, as a failure naming
/// `kernel` and what was compared.
fn bit_failure(
    kernel: &'static str,
    what: &str,
    n: usize,
    got: &[f32],
    want: &[f32],
) -> Option<Failure> {
    crate::check::first_mismatch(got, want, Tolerance::Bits).map(|m| Failure {
        kernel,
        detail: format!("{what}, n = {n}: {m}: each f32 operation rounded once, no contraction"),
    })
}

/// A failure for an element written past the end (`past_n`, if any).
fn past_end_failure(
    kernel: &'static str,
    what: &str,
    n: usize,
    past_n: Option<usize>,
) -> Option<Failure> {
    past_n.map(|i| Failure {
        kernel,
        detail: format!("{what}, n = {n}: element {i} past the end was written"),
    })
}

impl<'g> Fuse<'g> {
    /// Checks free memory, allocates six buffers of `elems` floats and
    /// uploads the inputs.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] before allocating; driver errors.
    pub fn new(gpu: &'g Gpu, elems: usize) -> Result<Self> {
        gpu.require_free_memory(
            6 * elems * ELEM_BYTES,
            "the fuse lesson's six buffers (a, b, c, t1, t2, y)",
        )?;
        let input = |fill| -> Result<CudaSlice<f32>> {
            let mut buf = gpu.alloc_f32(elems)?;
            gpu.upload(&reference::filled(elems, fill), &mut buf)?;
            Ok(buf)
        };
        Ok(Fuse {
            gpu,
            kernels: KernelSet::new(gpu)?,
            a: input(reference::fill_a)?,
            b: input(reference::fill_b)?,
            c: input(reference::fill_c)?,
            t1: gpu.alloc_f32(elems)?,
            t2: gpu.alloc_f32(elems)?,
            y: gpu.alloc_f32(elems)?,
            elems,
        })
    }

    // ANCHOR: launch
    /// Launches `kernel` over the first `n` elements of its buffers
    /// (asynchronously) on the side in use: mul a, b -> t1; add t1, c ->
    /// t2; relu t2 -> y; the fused kernels a, b, c -> y.
    ///
    /// # Errors
    /// [`Error::KernelFault`] naming the kernel.
    pub fn launch(&mut self, kernel: Kernel, n: usize) -> Result<()> {
        assert!(n <= self.elems, "n = {n} exceeds the buffers");
        let (g, f) = (self.gpu, &self.kernels);
        match kernel {
            Kernel::Mul => launch_on(g, f, kernel, &[&self.a, &self.b], &mut self.t1, n),
            Kernel::Add => launch_on(g, f, kernel, &[&self.t1, &self.c], &mut self.t2, n),
            Kernel::Relu => launch_on(g, f, kernel, &[&self.t2], &mut self.y, n),
            Kernel::Fused | Kernel::FusedFma => {
                launch_on(g, f, kernel, &[&self.a, &self.b, &self.c], &mut self.y, n)
            }
        }
    }

    /// Launches the three stages in order over `n` elements.
    pub fn launch_pipeline(&mut self, n: usize) -> Result<()> {
        for k in Kernel::STAGES {
            self.launch(k, n)?;
        }
        Ok(())
    }
    // ANCHOR_END: launch

    /// The first `n` floats of `buf`, after the stream has drained, and the
    /// index of the first element past `n` (up to a block past it, where
    /// the buffer holds one) that is no longer poisoned: a kernel wrote
    /// past the end.
    fn read(&self, which: Buffer, n: usize, kernel: &str) -> Result<(Vec<f32>, Option<usize>)> {
        self.gpu.sync_after(kernel)?;
        let mut got = vec![0.0f32; self.guarded_end(n)];
        let buf = match which {
            Buffer::T1 => &self.t1,
            Buffer::T2 => &self.t2,
            Buffer::Y => &self.y,
        };
        self.gpu.download(buf, &mut got)?;
        self.gpu.sync_after(kernel)?;
        let past_n = got[n..]
            .iter()
            .position(|v| v.to_bits() != u32::MAX)
            .map(|i| n + i);
        got.truncate(n);
        Ok((got, past_n))
    }

    /// The end of what a check poisons and reads back for `n` elements: a
    /// block past `n`, within the buffers.
    fn guarded_end(&self, n: usize) -> usize {
        (n + THREADS_PER_BLOCK as usize).min(self.elems)
    }

    /// Fills the first `n` floats of an intermediate or output, and a block
    /// past them, with 0xFF (NaN), so an element no kernel writes fails its
    /// check, and so does one written past the end.
    fn poison(&mut self, which: Buffer, n: usize) -> Result<()> {
        let end = self.guarded_end(n);
        let buf = match which {
            Buffer::T1 => &mut self.t1,
            Buffer::T2 => &mut self.t2,
            Buffer::Y => &mut self.y,
        };
        self.gpu.fill_bytes(&mut buf.slice_mut(..end), 0xFF)
    }

    /// Runs `kernel` alone over `n` elements and checks its output's bits
    /// against the reference, and that nothing past `n` was written. A
    /// stage's input intermediate (t1 for add, t2 for relu) is first set to
    /// the reference's, so each stage is checked on its own. Returns the
    /// failure (if any) and the output's bits.
    pub fn check(&mut self, kernel: Kernel, n: usize) -> Result<(Option<Failure>, Vec<u64>)> {
        let inputs = Inputs::new(n);
        let (out, want) = match kernel {
            Kernel::Mul => (Buffer::T1, inputs.t1()),
            Kernel::Add => {
                self.gpu.upload(&inputs.t1(), &mut self.t1.slice_mut(..n))?;
                (Buffer::T2, inputs.t2())
            }
            Kernel::Relu => {
                self.gpu.upload(&inputs.t2(), &mut self.t2.slice_mut(..n))?;
                (Buffer::Y, inputs.y())
            }
            Kernel::Fused => (Buffer::Y, inputs.y()),
            Kernel::FusedFma => (Buffer::Y, inputs.y_fma()),
        };
        self.poison(out, n)?;
        self.launch(kernel, n)?;
        let (got, past_n) = self.read(out, n, kernel.symbol())?;
        let failure = bit_failure(kernel.symbol(), "output", n, &got, &want)
            .or_else(|| past_end_failure(kernel.symbol(), "output", n, past_n));
        Ok((
            failure,
            got.iter().map(|v| u64::from(v.to_bits())).collect(),
        ))
    }

    /// Runs the three stages over `n` elements from poisoned intermediates
    /// and checks t1, t2 and y bit for bit (and nothing written past `n`);
    /// returns every failure and y.
    pub fn check_pipeline(&mut self, n: usize) -> Result<(Vec<Failure>, Vec<f32>)> {
        let inputs = Inputs::new(n);
        for b in [Buffer::T1, Buffer::T2, Buffer::Y] {
            self.poison(b, n)?;
        }
        self.launch_pipeline(n)?;
        let mut failures = Vec::new();
        let (y, y_past) = self.read(Buffer::Y, n, PIPELINE)?;
        for (buf, want, what) in [
            (Buffer::T1, inputs.t1(), "t1 = a * b"),
            (Buffer::T2, inputs.t2(), "t2 = t1 + c"),
        ] {
            let (got, past_n) = self.read(buf, n, PIPELINE)?;
            failures.extend(bit_failure(PIPELINE, what, n, &got, &want));
            failures.extend(past_end_failure(PIPELINE, what, n, past_n));
        }
        failures.extend(bit_failure(PIPELINE, "y = relu(t2)", n, &y, &inputs.y()));
        failures.extend(past_end_failure(PIPELINE, "y = relu(t2)", n, y_past));
        Ok((failures, y))
    }

    /// Times `kernel` over all the buffers' elements with `plan`.
    pub fn time(&mut self, kernel: Kernel, plan: Plan) -> Result<Timing> {
        let n = self.elems;
        let gpu = self.gpu;
        timing::time_kernel(gpu, kernel.symbol(), plan, || self.launch(kernel, n))
    }

    /// Times the three stages launched back to back, per pipeline.
    pub fn time_pipeline(&mut self, plan: Plan) -> Result<Timing> {
        let n = self.elems;
        let gpu = self.gpu;
        timing::time_kernel(gpu, PIPELINE, plan, || self.launch_pipeline(n))
    }

    /// The six-element example on the GPU, on buffers of its own: the
    /// pipeline's y and the fused kernel's y.
    pub fn example(&mut self) -> Result<(Vec<f32>, Vec<f32>)> {
        let n = EXAMPLE_A.len();
        let g = self.gpu;
        let upload = |v: &[f32]| -> Result<CudaSlice<f32>> {
            let mut buf = g.alloc_f32(n)?;
            g.upload(v, &mut buf)?;
            Ok(buf)
        };
        let (a, b, c) = (
            upload(&EXAMPLE_A)?,
            upload(&EXAMPLE_B)?,
            upload(&EXAMPLE_C)?,
        );
        let mut t1 = g.alloc_f32(n)?;
        let mut t2 = g.alloc_f32(n)?;
        let mut y = g.alloc_f32(n)?;
        for buf in [&mut t1, &mut t2, &mut y] {
            g.fill_bytes(buf, 0xFF)?;
        }
        let f = &self.kernels;
        launch_on(g, f, Kernel::Mul, &[&a, &b], &mut t1, n)?;
        launch_on(g, f, Kernel::Add, &[&t1, &c], &mut t2, n)?;
        launch_on(g, f, Kernel::Relu, &[&t2], &mut y, n)?;
        g.sync_after(PIPELINE)?;
        let mut unfused = vec![0.0f32; n];
        g.download(&y, &mut unfused)?;
        g.fill_bytes(&mut y, 0xFF)?;
        let fused = Kernel::Fused;
        launch_on(g, f, fused, &[&a, &b, &c], &mut y, n)?;
        g.sync_after(fused.symbol())?;
        let mut out = vec![0.0f32; n];
        g.download(&y, &mut out)?;
        g.sync_after(fused.symbol())?;
        Ok((unfused, out))
    }
}

/// An intermediate or output buffer of [`Fuse`].
#[derive(Debug, Clone, Copy)]
enum Buffer {
    T1,
    T2,
    Y,
}

impl Twinned for Fuse<'_> {
    type Kernel = Kernel;

    fn kernels(&mut self) -> &mut KernelSet<Kernel> {
        &mut self.kernels
    }

    fn check(&mut self, k: Kernel) -> Result<(Vec<Failure>, Vec<u64>)> {
        let (failure, got) = Fuse::check(self, k, CHECK_ELEMS)?;
        Ok((failure.into_iter().collect(), got))
    }

    fn time(&mut self, k: Kernel, plan: Plan) -> Result<Timing> {
        Fuse::time(self, k, plan)
    }
}

/// How two outputs differ in value: elements whose bits differ, the
/// largest difference in units in the last place (ULPs) of f32, and the
/// largest absolute difference.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Difference {
    /// Elements compared.
    pub elems: usize,
    /// Elements whose bits differ.
    pub differing: usize,
    /// The largest distance in ULPs between two corresponding elements
    /// (both finite and of the same sign in this lesson).
    pub max_ulps: u32,
    /// The largest absolute difference.
    pub max_abs: f32,
}

impl Difference {
    /// Compares `x` with `y` element by element.
    pub fn of(x: &[f32], y: &[f32]) -> Difference {
        let mut d = Difference {
            elems: x.len(),
            differing: 0,
            max_ulps: 0,
            max_abs: 0.0,
        };
        for (p, q) in x.iter().zip(y) {
            if p.to_bits() != q.to_bits() {
                d.differing += 1;
                d.max_ulps = d.max_ulps.max(p.to_bits().abs_diff(q.to_bits()));
                d.max_abs = d.max_abs.max((p - q).abs());
            }
        }
        d
    }
}

/// The seed's lines for the host mirrors on the six-element example.
pub fn mirror_lines() -> (Vec<String>, serde_json::Value) {
    let n = EXAMPLE_A.len();
    let (mut unfused, mut fused) = (vec![0.0f32; n], vec![0.0f32; n]);
    let u = reference::unfused_pipeline(&EXAMPLE_A, &EXAMPLE_B, &EXAMPLE_C, &mut unfused);
    let f = reference::fused_pipeline(&EXAMPLE_A, &EXAMPLE_B, &EXAMPLE_C, &mut fused);
    let (up, fp) = (u.per_element(n), f.per_element(n));
    let identical = unfused
        .iter()
        .zip(&fused)
        .all(|(x, y)| x.to_bits() == y.to_bits());
    let lines = vec![
        format!("relu(a*b+c) on {n} elements:"),
        format!(
            "  unfused (3 kernels): {} tensor-sized reads, {} tensor-sized writes, {} total memory ops",
            up.reads,
            up.writes,
            up.total()
        ),
        format!(
            "  fused   (1 kernel):  {} tensor-sized reads, {} tensor-sized writes, {} total memory ops",
            fp.reads,
            fp.writes,
            fp.total()
        ),
        format!("outputs identical between unfused and fused: {identical}"),
        format!("fused output: {}", show(&fused)),
        format!(
            "memory traffic reduction: {:.0}x ({} ops -> {} ops), independent of size {n}",
            u.total() as f64 / f.total() as f64,
            up.total(),
            fp.total()
        ),
    ];
    let facts = json!({"elems": n, "unfused": u, "fused": f, "unfused_per_elem": up, "fused_per_elem": fp,
        "outputs_identical": identical, "fused_output": fused});
    (lines, facts)
}

/// The mirrors' failure, if any: at `size` elements of the lesson's fills,
/// the two pipelines' outputs differ in some bit, or their counts are not
/// the per-element constants (5 + 3 and 3 + 1) times `size`.
pub fn mirror_failure(size: usize) -> Option<Failure> {
    let inputs = Inputs::new(size);
    let (mut unfused, mut fused) = (vec![0.0f32; size], vec![0.0f32; size]);
    let u = reference::unfused_pipeline(&inputs.a, &inputs.b, &inputs.c, &mut unfused);
    let f = reference::fused_pipeline(&inputs.a, &inputs.b, &inputs.c, &mut fused);
    let want = |reads: usize, writes: usize| MemOps {
        reads: reads * size,
        writes: writes * size,
    };
    let problem = if let Some(m) = crate::check::first_mismatch(&fused, &unfused, Tolerance::Bits) {
        format!("the fused mirror differs from the unfused one: {m}")
    } else if u != want(UNFUSED_READS, UNFUSED_WRITES) || f != want(FUSED_READS, FUSED_WRITES) {
        format!(
            "counted {u:?} unfused and {f:?} fused, not {UNFUSED_READS} + {UNFUSED_WRITES} and \
             {FUSED_READS} + {FUSED_WRITES} per element"
        )
    } else {
        return None;
    };
    Some(Failure {
        kernel: "fused_pipeline (host mirror)",
        detail: format!("n = {size}: {problem}"),
    })
}

/// The host mirrors' second size: the per-element counts are checked here
/// as well as on the six-element example, so "independent of size" is
/// tested, not assumed.
pub const MIRROR_SECOND_SIZE: usize = 1000;

/// f32 multiplies, adds and FMAs (`mul.*f32`, `add.*f32`, `fma.*f32`) in
/// `kernel`'s body of the embedded (Rust) PTX.
pub fn ptx_arith_f32(kernel: Kernel) -> usize {
    crate::ptx::entry_body(crate::ptx::PTX, kernel.symbol())
        .unwrap_or("")
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|op| {
            ["mul.", "add.", "fma."].iter().any(|p| op.starts_with(p)) && op.ends_with(".f32")
        })
        .count()
}

/// The timed section's reading from the medians (ms) of the pipeline, the
/// three stages alone, the fused kernel and the FMA kernel.
pub fn timed_reading(pipeline_ms: f64, stage_sum_ms: f64, fused_ms: f64, fma_ms: f64) -> String {
    let counted = UNFUSED_BYTES_PER_ELEM as f64 / FUSED_BYTES_PER_ELEM as f64;
    let ratio = pipeline_ms / fused_ms;
    let mut reading =
        format!("Unfused / fused time: {ratio:.2}x, against the counted {counted:.2}x in bytes");
    if ratio > counted * 1.05 {
        reading.push_str(&format!(
            ": more than the bytes alone explain, because the fused kernel also moves its bytes faster \
             ({:.2}x the pipeline's GB/s over the counted bytes).",
            ratio / counted
        ));
    } else if ratio < counted / 1.05 {
        reading.push_str(&format!(
            ": less than the bytes alone would give, because the fused kernel moves its bytes slower \
             ({:.2}x the pipeline's GB/s over the counted bytes).",
            ratio / counted
        ));
    } else {
        reading.push_str(": within 5% of what the bytes alone would give.");
    }
    reading.push_str(&format!(
        " The three stages timed alone add up to {stage_sum_ms:.3} ms against {pipeline_ms:.3} ms back to back."
    ));
    let (plain, contracted) = (
        ptx_arith_f32(Kernel::Fused),
        ptx_arith_f32(Kernel::FusedFma),
    );
    reading.push_str(&format!(
        " Fused with and without FMA: {fma_ms:.3} and {fused_ms:.3} ms ({} of {:.2}), for the same \
         {FUSED_BYTES_PER_ELEM} bytes per element and {contracted} f32 multiply/add/FMA instruction(s) against \
         {plain} in the Rust PTX.",
        relative(fma_ms, fused_ms),
        fma_ms / fused_ms
    ));
    reading
}

/// How `ms` compares with `baseline_ms`, and that it is a time ratio.
fn relative(ms: f64, baseline_ms: f64) -> String {
    format!(
        "{}, a time ratio",
        crate::report::relative_speed(ms, baseline_ms)
    )
}

/// Floats with one decimal, as the seed prints them.
fn show(v: &[f32]) -> String {
    v.iter()
        .map(|x| format!("{x:.1}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The lesson's sizes: the timed pipelines' elements (six tensors of
/// them), and the sizes every kernel is checked at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sizes {
    /// Elements of each timed tensor.
    pub timed: usize,
    /// The sizes every kernel and the pipeline are checked at.
    pub checked: [usize; 2],
    /// The seed's example's elements.
    pub example: usize,
    /// Bytes per element moved by the unfused and the fused pipeline.
    pub bytes_per_elem: [usize; 2],
}

impl Sizes {
    /// A full run on `info`'s GPU: [`SEED_TIMED_ELEMS`] doubled until a
    /// tensor is at least 4x the L2; `quick`: the check size.
    pub fn new(info: &crate::gpu::DeviceInfo, quick: bool) -> Sizes {
        Sizes {
            timed: if quick {
                CHECK_ELEMS
            } else {
                grown(SEED_TIMED_ELEMS, ELEM_BYTES, info.l2_bytes)
            },
            checked: CHECKED_SIZES,
            example: EXAMPLE_A.len(),
            bytes_per_elem: [UNFUSED_BYTES_PER_ELEM, FUSED_BYTES_PER_ELEM],
        }
    }
}

impl LessonSizes for Sizes {
    fn for_gpu(info: &crate::gpu::DeviceInfo, quick: bool) -> Result<Sizes> {
        Ok(Sizes::new(info, quick))
    }
    fn streams(&self) -> Vec<Stream> {
        vec![Stream::of::<f32>("a, b, c, t1, t2, y", self.timed)]
    }

    fn device_bytes(&self) -> usize {
        6 * self.timed * ELEM_BYTES
    }
}

/// The CUDA C twins.
pub const CUDA_C_SOURCE: &str = include_str!("fuse.cu");

/// The fuse lesson as `lab` runs it.
pub struct FuseLesson;

impl lesson::Lesson for FuseLesson {
    const NAME: &'static str = "fuse";
    const ABOUT: &'static str = "Chapter 19.2: relu(a*b+c) as three kernels against one fused kernel: memory operations counted (8 against 4) and timed.";
    type Kernel = Kernel;
    type Sizes = Sizes;
    type Twins<'g> = Fuse<'g>;

    fn block_sizes() -> serde_json::Value {
        json!({"all": THREADS_PER_BLOCK})
    }

    /// What NVRTC compiles: the twins (they need no constant from the host).
    fn cuda_c() -> String {
        CUDA_C_SOURCE.to_string()
    }

    /// Every kernel and the pipeline checked at every checked size, the example
    /// on the GPU; then the mirrors' counts, the agreement and the timings.
    fn run(
        gpu: &Gpu,
        sizes: &Sizes,
        context: Context,
        options: &RunOptions<'_>,
    ) -> Result<Outcome<Box<dyn lesson::Report>>> {
        let plan = options.plan;
        let elems = sizes.timed;
        let quick = options.quick;
        let mut lesson = Fuse::new(gpu, elems)?;
        let mut failures = Vec::new();
        // Outputs at the check size, kept for the comparisons below.
        let (mut pipeline_y, mut fused_y, mut fma_y) = (Vec::new(), Vec::new(), Vec::new());
        let as_f32 = |bits: Vec<u64>| -> Vec<f32> {
            bits.into_iter().map(|b| f32::from_bits(b as u32)).collect()
        };
        for n in CHECKED_SIZES {
            for &k in Kernel::ALL {
                let (failure, got) = lesson.check(k, n)?;
                failures.extend(failure);
                match k {
                    Kernel::Fused if n == CHECK_ELEMS => fused_y = as_f32(got),
                    Kernel::FusedFma if n == CHECK_ELEMS => fma_y = as_f32(got),
                    _ => {}
                }
            }
            let (found, y) = lesson.check_pipeline(n)?;
            failures.extend(found);
            if n == CHECK_ELEMS {
                pipeline_y = y;
            }
        }
        // The fused kernel against the pipeline, element for element, on the
        // same inputs.
        let agreement = Agreement::of(&pipeline_y, &fused_y);
        if let Agreement::Differ { count, first } = agreement {
            failures.push(Failure {
                kernel: Kernel::Fused.symbol(),
                detail: format!(
                    "n = {CHECK_ELEMS}: differs from the unfused pipeline in {count} elements, first at {first}: \
                     {:e} against {:e}",
                    fused_y[first], pipeline_y[first]
                ),
            });
        }
        let (gpu_unfused, gpu_fused) = lesson.example()?;
        let mut example_want = vec![0.0f32; EXAMPLE_A.len()];
        reference::fused_pipeline(&EXAMPLE_A, &EXAMPLE_B, &EXAMPLE_C, &mut example_want);
        failures.extend(bit_failure(
            PIPELINE,
            "the six-element example",
            6,
            &gpu_unfused,
            &example_want,
        ));
        failures.extend(bit_failure(
            Kernel::Fused.symbol(),
            "the six-element example",
            6,
            &gpu_fused,
            &example_want,
        ));
        for size in [EXAMPLE_A.len(), MIRROR_SECOND_SIZE] {
            failures.extend(mirror_failure(size));
        }
        if !failures.is_empty() {
            return Ok(Outcome::Failed(failures));
        }
        let fma_difference = Difference::of(&fma_y, &pipeline_y);

        // Part 1: the seed's host mirrors, counted.
        let mut mirrors = Section::new("Fusion's memory traffic, counted by the host mirrors");
        let (lines, mirror_facts) = mirror_lines();
        for line in lines {
            mirrors.line(line);
        }
        mirrors.reading = Some(format!(
            "The count is per element, so the ratio does not depend on the length (the mirrors count the same \
             {} and {} per element at n = {MIRROR_SECOND_SIZE}, with identical outputs): each intermediate the unfused \
             pipeline keeps in memory costs one write and one read that the fused kernel does in a register.",
            UNFUSED_READS + UNFUSED_WRITES,
            FUSED_READS + FUSED_WRITES
        ));

        // Part 2: on the GPU.
        let mut gpu_section =
            Section::new("On the GPU: the example, the references, the two pipelines bit for bit");
        gpu_section.line(format!(
            "the six-element example, unfused (3 kernels): {}",
            show(&gpu_unfused)
        ));
        gpu_section.line(format!(
            "the six-element example, fused (1 kernel):    {}",
            show(&gpu_fused)
        ));
        gpu_section.line(format!(
            "every kernel, and the pipeline's t1, t2 and y, checked bit for bit against the CPU reference at n = {}: passed",
            CHECKED_SIZES.map(|n| n.to_string()).join(", ")
        ));
        gpu_section.line(format!(
            "fused against unfused on the GPU, n = {CHECK_ELEMS}: identical in every bit ({} clamped to 0)",
            pipeline_y.iter().filter(|&&v| v == 0.0).count()
        ));
        if fma_difference.differing == 0 {
            gpu_section.line(format!(
                "fused_mul_add_relu_fma (one rounding, checked against f32::mul_add): identical to the pipeline in all {} \
                 elements on this data",
                fma_difference.elems
            ));
        } else {
            gpu_section.line(format!(
                "fused_mul_add_relu_fma (one rounding, checked against f32::mul_add): differs from the pipeline in {} of {} \
                 elements, by at most {:.3e} in value and at most {} ULPs of the result (the largest where the add \
                 cancels most of the product)",
                fma_difference.differing,
                fma_difference.elems,
                fma_difference.max_abs,
                fma_difference.max_ulps
            ));
        }
        gpu_section.reading = Some(
            "The unfused pipeline rounds the product when it stores t1, so a fused kernel that must agree with it may not \
             contract a * b + c into an FMA: the Rust kernel writes the two operations (rustc never contracts), the CUDA \
             C twin multiplies with __fmul_rn (nvcc and NVRTC contract by default). The FMA kernel computes a different \
             function, not the same one faster: a fused op has to be checked against what it replaces."
                .to_string(),
        );

        // Part 3: timed.
        let mut timed = Section::new(if quick {
            format!(
                "Timed (--quick: {elems} floats, {} MiB in all against a {} MiB L2; not the full run's DRAM figures)",
                (6 * elems * ELEM_BYTES) >> 20,
                gpu.info.l2_bytes >> 20
            )
        } else {
            format!(
                "Timed: three kernels against one, {elems} floats ({} MiB per tensor)",
                (elems * ELEM_BYTES) >> 20
            )
        });
        timed.line(format!(
            "bytes counted from the operations x {ELEM_BYTES} bytes: unfused {} + {} + {} = {UNFUSED_BYTES_PER_ELEM} per \
             element, fused {FUSED_BYTES_PER_ELEM}",
            Kernel::Mul.bytes_per_elem(),
            Kernel::Add.bytes_per_elem(),
            Kernel::Relu.bytes_per_elem()
        ));
        for k in Kernel::STAGES {
            let t = lesson.time(k, plan)?;
            timed.rows.push(
                Row::new(k.symbol(), k.label(), t).bytes((elems * k.bytes_per_elem()) as f64),
            );
        }
        let t = lesson.time_pipeline(plan)?;
        timed.rows.push(
            Row::new(PIPELINE, "the 3 stages back to back: relu(a * b + c)", t)
                .bytes((elems * UNFUSED_BYTES_PER_ELEM) as f64),
        );
        for k in [Kernel::Fused, Kernel::FusedFma] {
            let t = lesson.time(k, plan)?;
            timed.rows.push(
                Row::new(k.symbol(), k.label(), t).bytes((elems * k.bytes_per_elem()) as f64),
            );
        }
        let ms = |key: &str| {
            timed
                .rows
                .iter()
                .find(|r| r.key == key)
                .map_or(f64::NAN, |r| r.timing.median_ms())
        };
        let ratio = ms(PIPELINE) / ms(Kernel::Fused.symbol());
        let stage_sum: f64 = Kernel::STAGES.iter().map(|k| ms(k.symbol())).sum();
        timed.reading = Some(timed_reading(
            ms(PIPELINE),
            stage_sum,
            ms(Kernel::Fused.symbol()),
            ms(Kernel::FusedFma.symbol()),
        ));

        let timed_facts = json!({"unfused_over_fused_time": ratio, "counted_bytes_ratio":
            UNFUSED_BYTES_PER_ELEM as f64 / FUSED_BYTES_PER_ELEM as f64, "stage_sum_ms": stage_sum});
        SectionReport::passed(
            context,
            Findings {
                sections: vec![mirrors, gpu_section, timed],
                facts: json!({
                    "mirrors": mirror_facts,
                    "gpu_example": {"unfused": gpu_unfused, "fused": gpu_fused},
                    "fused_vs_unfused_identical": agreement == Agreement::Identical,
                    "fma_vs_unfused": fma_difference,
                    "timed": timed_facts,
                }),
            },
        )
    }

    fn twins<'g>(gpu: &'g Gpu, sizes: &Sizes) -> Result<Fuse<'g>> {
        Fuse::new(gpu, sizes.timed)
    }
}
