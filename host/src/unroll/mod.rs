//! The unroll lesson on the host (chapter 19.2): the seed's plain and
//! unrolled loops counted by host mirrors at its sizes, the seed's
//! 16-element GPU launch actually run, the PTX showing the unrolled loop is
//! gone, and the one-element-per-thread add timed against two
//! four-elements-per-thread adds (the seed's consecutive form and a
//! coalesced form), every output checked bit for bit.

pub mod reference;

use cudarc::driver::{CudaSlice, LaunchConfig};
use kernels_gpu::unroll::*;
use serde::Serialize;
use serde_json::json;

use crate::check::{Failure, Tolerance};
use crate::compare::{Agreement, Twinned};
use crate::error::Result;
use crate::gpu::Gpu;
use crate::kernels::{KernelId, KernelSet};
use crate::lesson::{self, Findings, Outcome, Row, RunOptions, Section, SectionReport};
use crate::ptx::{PTX, entry_body};
use crate::report::Context;
use crate::sizes::{LessonSizes, Stream, grown};
use crate::timing::{self, Plan, Timing};

crate::kernel_ids! {
    /// The lesson's kernels, each (a, b, out, n).
    pub enum Kernel {
        /// One element per thread.
        OnePerThread = "add_one_per_thread" (Ptr, Ptr, Ptr, U64),
        /// `UNROLL` consecutive elements per thread (the seed's form).
        Unrolled = "add_unrolled_4" (Ptr, Ptr, Ptr, U64),
        /// `UNROLL` elements per thread, one block width apart.
        UnrolledCoalesced = "add_unrolled_4_coalesced" (Ptr, Ptr, Ptr, U64),
    }
}

impl Kernel {
    /// What the kernel is, for a table row.
    pub fn label(self) -> &'static str {
        match self {
            Kernel::OnePerThread => "1 element per thread",
            Kernel::Unrolled => "4 consecutive elements per thread (the seed's)",
            Kernel::UnrolledCoalesced => "4 elements per thread, a block width apart",
        }
    }

    /// Elements one thread handles.
    pub fn elems_per_thread(self) -> usize {
        match self {
            Kernel::OnePerThread => 1,
            Kernel::Unrolled | Kernel::UnrolledCoalesced => UNROLL,
        }
    }

    /// The launch over `n` elements: blocks of THREADS_PER_BLOCK, enough to
    /// give every element a thread's lane (at least one block).
    pub fn launch_config(self, n: usize) -> LaunchConfig {
        let per_block = THREADS_PER_BLOCK as usize * self.elems_per_thread();
        LaunchConfig {
            grid_dim: (n.div_ceil(per_block).max(1) as u32, 1, 1),
            block_dim: (THREADS_PER_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// The element that lane `access` (0 to elems_per_thread - 1) of
    /// thread `thread` in block `block` handles, with `block_dim` threads
    /// per block: the kernels' index maps, on the host.
    pub fn element(self, block: usize, block_dim: usize, thread: usize, access: usize) -> usize {
        match self {
            Kernel::OnePerThread => block * block_dim + thread,
            Kernel::Unrolled => (block * block_dim + thread) * UNROLL + access,
            Kernel::UnrolledCoalesced => block * block_dim * UNROLL + access * block_dim + thread,
        }
    }

    /// 32-byte sectors one warp-wide 4-byte access touches (warp 0 of block
    /// 0, lane `access` of each thread): 4 when the warp's 32 floats are
    /// contiguous, up to 32 when they are scattered. A count from the index
    /// map, not a measurement.
    pub fn sectors_per_warp_access(self, access: usize) -> usize {
        let mut sectors: Vec<usize> = (0..32)
            .map(|t| self.element(0, THREADS_PER_BLOCK as usize, t, access) * 4 / 32)
            .collect();
        sectors.sort_unstable();
        sectors.dedup();
        sectors.len()
    }
}

/// Control-flow and arithmetic instructions in one kernel's PTX body
/// (static counts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct PtxCounts {
    /// Compares (`setp.*`): bounds guards and loop tests.
    pub setp: usize,
    /// Branches (`bra`, predicated or not).
    pub bra: usize,
    /// Unpredicated branches (`bra.uni` or a bare `bra`): jumps of the
    /// block layout, not decisions.
    pub uncond_bra: usize,
    /// Branches to a label earlier in the body: a loop's back edge.
    pub backward_bra: usize,
    /// f32 adds (`add.f32`, `add.rn.f32`, ...): the arithmetic.
    pub add_f32: usize,
    /// Global loads.
    pub ld_global: usize,
    /// Global stores.
    pub st_global: usize,
}

impl PtxCounts {
    /// Counts the instructions of `body` (one `.entry`'s text).
    pub fn of(body: &str) -> PtxCounts {
        let mut c = PtxCounts::default();
        let mut labels_seen: Vec<&str> = Vec::new();
        for line in body.lines().map(str::trim) {
            if let Some(label) = line.strip_suffix(':') {
                labels_seen.push(label);
                continue;
            }
            let mut words = line.split_whitespace();
            let mut op = words.next().unwrap_or("");
            let predicated = op.starts_with('@');
            if predicated {
                op = words.next().unwrap_or("");
            }
            if op.starts_with("setp.") {
                c.setp += 1;
            } else if op == "bra" || op.starts_with("bra.") {
                c.bra += 1;
                if !predicated {
                    c.uncond_bra += 1;
                }
                let target = words.next().unwrap_or("").trim_end_matches(';');
                if labels_seen.contains(&target) {
                    c.backward_bra += 1;
                }
            } else if op.starts_with("add.") && op.ends_with(".f32") {
                c.add_f32 += 1;
            } else if op.starts_with("ld.global") {
                c.ld_global += 1;
            } else if op.starts_with("st.global") {
                c.st_global += 1;
            }
        }
        c
    }

    /// The counts of `kernel` in the embedded (Rust) PTX.
    pub fn of_kernel(kernel: Kernel) -> PtxCounts {
        PtxCounts::of(entry_body(PTX, kernel.symbol()).unwrap_or(""))
    }
}

/// The lesson's three device buffers (a, b, out) of `elems` floats, with a
/// and b holding the reference fills.
pub struct Unroll<'g> {
    gpu: &'g Gpu,
    kernels: KernelSet<Kernel>,
    a: CudaSlice<f32>,
    b: CudaSlice<f32>,
    out: CudaSlice<f32>,
    elems: usize,
}

impl<'g> Unroll<'g> {
    /// Checks free memory, allocates three buffers of `elems` floats and
    /// uploads the inputs.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] before allocating; driver errors.
    pub fn new(gpu: &'g Gpu, elems: usize) -> Result<Self> {
        gpu.require_free_memory(
            3 * elems * size_of::<f32>(),
            "the unroll lesson's three buffers",
        )?;
        let mut a = gpu.alloc_f32(elems)?;
        let mut b = gpu.alloc_f32(elems)?;
        gpu.upload(&reference::filled(elems, reference::fill_a), &mut a)?;
        gpu.upload(&reference::filled(elems, reference::fill_b), &mut b)?;
        Ok(Unroll {
            gpu,
            kernels: KernelSet::new(gpu)?,
            a,
            b,
            out: gpu.alloc_f32(elems)?,
            elems,
        })
    }

    /// Launches `kernel` over the first `n` elements (asynchronously) on the
    /// side in use.
    ///
    /// # Errors
    /// [`Error::KernelFault`] naming the kernel.
    pub fn launch(&mut self, kernel: Kernel, n: usize) -> Result<()> {
        assert!(n <= self.elems, "n = {n} exceeds the buffers");
        launch_on(
            self.gpu,
            &self.kernels,
            kernel,
            (&self.a, &self.b, &mut self.out),
            n,
            kernel.launch_config(n),
        )
    }

    /// Runs `kernel` over `n` elements into a poisoned output and checks
    /// every element's bits against the reference, and that no element in
    /// the block past `n` (where the buffers hold one) was written: a
    /// missing bounds guard fails too. Returns the failure (if any) and the
    /// first `n` output elements' bits.
    pub fn check(&mut self, kernel: Kernel, n: usize) -> Result<(Option<Failure>, Vec<u64>)> {
        let end = (n + ELEMS_PER_UNROLLED_BLOCK).min(self.elems);
        self.gpu.fill_bytes(&mut self.out.slice_mut(..end), 0xFF)?;
        self.launch(kernel, n)?;
        self.gpu.sync_after(kernel.symbol())?;
        let mut got = vec![0.0f32; end];
        self.gpu.download(&self.out, &mut got)?;
        self.gpu.sync_after(kernel.symbol())?;
        let past_n = got[n..].iter().position(|v| v.to_bits() != u32::MAX);
        got.truncate(n);
        let want = reference::sum(
            &reference::filled(n, reference::fill_a),
            &reference::filled(n, reference::fill_b),
        );
        let failure = bit_failure(kernel, n, &got, &want).or_else(|| {
            past_n.map(|i| Failure {
                kernel: kernel.symbol(),
                detail: format!("n = {n}: element {} past the end was written", n + i),
            })
        });
        Ok((
            failure,
            got.iter().map(|v| u64::from(v.to_bits())).collect(),
        ))
    }

    /// Times `kernel` over all the buffers' elements with `plan`.
    pub fn time(&mut self, kernel: Kernel, plan: Plan) -> Result<Timing> {
        let n = self.elems;
        let gpu = self.gpu;
        timing::time_kernel(gpu, kernel.symbol(), plan, || self.launch(kernel, n))
    }

    /// The seed's GPU example, run: `kernel` over 16 elements with a = i,
    /// b = 2i, launched as the seed does (one block of 16 / UNROLL threads
    /// for the unrolled kernels); returns the output.
    pub fn seed_example(&mut self, kernel: Kernel) -> Result<Vec<f32>> {
        let n = SEED_GPU_ELEMS;
        let (ha, hb) = reference::seed_gpu_inputs(n);
        let mut a = self.gpu.alloc_f32(n)?;
        let mut b = self.gpu.alloc_f32(n)?;
        let mut out = self.gpu.alloc_f32(n)?;
        self.gpu.upload(&ha, &mut a)?;
        self.gpu.upload(&hb, &mut b)?;
        self.gpu.fill_bytes(&mut out, 0xFF)?;
        let threads = n.div_ceil(kernel.elems_per_thread()) as u32;
        let config = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        };
        launch_on(
            self.gpu,
            &self.kernels,
            kernel,
            (&a, &b, &mut out),
            n,
            config,
        )?;
        self.gpu.sync_after(kernel.symbol())?;
        let mut got = vec![0.0f32; n];
        self.gpu.download(&out, &mut got)?;
        self.gpu.sync_after(kernel.symbol())?;
        Ok(got)
    }
}

/// Launches `kernel` (on the side in use) on explicit buffers.
fn launch_on(
    gpu: &Gpu,
    kernels: &KernelSet<Kernel>,
    kernel: Kernel,
    (a, b, out): (&CudaSlice<f32>, &CudaSlice<f32>, &mut CudaSlice<f32>),
    n: usize,
    config: LaunchConfig,
) -> Result<()> {
    assert!(
        n <= a.len() && n <= b.len() && n <= out.len(),
        "n = {n} exceeds the buffers"
    );
    let launch = kernels
        .launch(gpu, kernel)
        .input(a)
        .input(b)
        .output(out)
        .scalar(n as u64);
    // SAFETY: the three buffers hold at least n floats (asserted), are
    // distinct allocations, and every caller's grid covers n elements at
    // the kernel's elements per thread.
    unsafe { launch.launch(config) }
}

/// The first element whose bits differ from the reference's, as a failure
/// naming the kernel, the index, the value got and the value wanted.
fn bit_failure(kernel: Kernel, n: usize, got: &[f32], want: &[f32]) -> Option<Failure> {
    crate::check::first_mismatch(got, want, Tolerance::Bits).map(|m| Failure {
        kernel: kernel.symbol(),
        detail: format!("n = {n}: {m}: one f32 add per element"),
    })
}

impl Twinned for Unroll<'_> {
    type Kernel = Kernel;

    fn kernels(&mut self) -> &mut KernelSet<Kernel> {
        &mut self.kernels
    }

    fn check(&mut self, k: Kernel) -> Result<(Vec<Failure>, Vec<u64>)> {
        let (failure, got) = Unroll::check(self, k, CHECK_ELEMS)?;
        Ok((failure.into_iter().collect(), got))
    }

    fn time(&mut self, k: Kernel, plan: Plan) -> Result<Timing> {
        Unroll::time(self, k, plan)
    }
}

/// The sizes every kernel is checked at: the seed's GPU example size, its
/// two mirror sizes, and the odd check size.
pub const CHECKED_SIZES: [usize; 4] = [SEED_GPU_ELEMS, SEED_SIZES[0], SEED_SIZES[1], CHECK_ELEMS];

/// The seed's lines for one mirror size: both loops' counts, whether the
/// arithmetic matches and whether every output element is identical.
pub fn mirror_lines(size: usize) -> (Vec<String>, serde_json::Value) {
    let (a, b) = reference::seed_inputs(size);
    let (mut out_plain, mut out_unrolled) = (vec![0.0f32; size], vec![0.0f32; size]);
    let plain = reference::plain_add(&mut out_plain, &a, &b);
    let unrolled = reference::unrolled_add(&mut out_unrolled, &a, &b, UNROLL);
    let main = (size / UNROLL) * UNROLL;
    let remainder = size - main;
    let identical = out_plain
        .iter()
        .zip(&out_unrolled)
        .all(|(p, u)| p.to_bits() == u.to_bits());
    let mut lines = Vec::new();
    if remainder == 0 {
        lines.push(format!(
            "size={size}, UNROLL={UNROLL}: unrolled_count = ({size}/{UNROLL})*{UNROLL} = {main}"
        ));
    } else {
        lines.push(format!(
            "size={size}, UNROLL={UNROLL}: unrolled_count = ({size}/{UNROLL})*{UNROLL} = {main}, \
             remainder = {remainder} element(s)"
        ));
    }
    lines.push(format!(
        "  plain loop:    {} loop-control events, {} arithmetic ops",
        plain.loop_control_events, plain.arithmetic_ops
    ));
    if remainder == 0 {
        lines.push(format!(
            "  unrolled loop: {} loop-control events, {} arithmetic ops",
            unrolled.loop_control_events, unrolled.arithmetic_ops
        ));
        lines.push(format!(
            "  overhead reduction: {}x fewer loop-control events ({} -> {})",
            plain.loop_control_events / unrolled.loop_control_events,
            plain.loop_control_events,
            unrolled.loop_control_events
        ));
        lines.push(format!(
            "  arithmetic op count identical: {}",
            plain.arithmetic_ops == unrolled.arithmetic_ops
        ));
    } else {
        lines.push(format!(
            "  unrolled loop: {} loop-control events ({} full groups + {} remainder), {} arithmetic ops",
            unrolled.loop_control_events,
            main / UNROLL,
            remainder,
            unrolled.arithmetic_ops
        ));
        lines.push(format!(
            "  arithmetic totals match: {} (both {})",
            plain.arithmetic_ops == unrolled.arithmetic_ops,
            plain.arithmetic_ops
        ));
    }
    lines.push(format!(
        "  every output element identical between plain and unrolled: {identical}"
    ));
    let facts = json!({"size": size, "unroll": UNROLL, "unrolled_count": main, "remainder": remainder,
        "plain": plain, "unrolled": unrolled, "outputs_identical": identical});
    (lines, facts)
}

/// The failure, if any, in one mirror size's facts (from [`mirror_lines`]):
/// outputs that differ between the two loops, different add counts, or
/// loop-control counts other than `size` and `size / UNROLL + size % UNROLL`.
pub fn mirror_failure(facts: &serde_json::Value) -> Option<Failure> {
    let count = |side: &str, what: &str| facts[side][what].as_u64().unwrap_or(u64::MAX);
    let size = facts["size"].as_u64().unwrap_or(u64::MAX);
    let unroll = UNROLL as u64;
    let problem = if facts["outputs_identical"] != true {
        "the plain and unrolled loops' outputs differ".to_string()
    } else if count("plain", "arithmetic_ops") != count("unrolled", "arithmetic_ops") {
        format!(
            "the loops count {} and {} adds",
            count("plain", "arithmetic_ops"),
            count("unrolled", "arithmetic_ops")
        )
    } else if count("plain", "loop_control_events") != size
        || count("unrolled", "loop_control_events") != size / unroll + size % unroll
    {
        format!(
            "loop-control events {} and {}, not {size} and {}",
            count("plain", "loop_control_events"),
            count("unrolled", "loop_control_events"),
            size / unroll + size % unroll
        )
    } else {
        return None;
    };
    Some(Failure {
        kernel: "unrolled_add (host mirror)",
        detail: format!("size {size}: {problem}"),
    })
}

/// One line of PTX evidence for `kernel`: its counts and what they come to
/// per element (branches per element counted without the unconditional
/// ones, which decide nothing).
pub fn ptx_line(kernel: Kernel, c: PtxCounts) -> String {
    let per = kernel.elems_per_thread() as f64;
    format!(
        "{:<26} {} element(s)/thread: setp {}, bra {} ({} unconditional, {} backward), add.f32 {}, ld.global {}, \
         st.global {}; per element: {:.2} setp, {:.2} conditional bra, {:.2} add",
        kernel.symbol(),
        kernel.elems_per_thread(),
        c.setp,
        c.bra,
        c.uncond_bra,
        c.backward_bra,
        c.add_f32,
        c.ld_global,
        c.st_global,
        c.setp as f64 / per,
        (c.bra - c.uncond_bra) as f64 / per,
        c.add_f32 as f64 / per
    )
}

/// The PTX section's reading, from the counts of every kernel shown (Rust,
/// and the CUDA C twins where NVRTC ran): whether a loop is left, whether
/// each element has exactly one guard and one add, and what the
/// unconditional branches are.
pub fn ptx_reading(counts: &[(Kernel, PtxCounts)]) -> String {
    let looped: Vec<&str> = counts
        .iter()
        .filter(|(_, c)| c.backward_bra > 0)
        .map(|(k, _)| k.symbol())
        .collect();
    let mut reading = String::from(
        "Static counts in each kernel's PTX (`--asm <kernel>` shows both sides' PTX and SASS). ",
    );
    if looped.is_empty() {
        reading.push_str(
            "No backward branch: the lane loop was unrolled completely, so nothing counts lanes at run time. ",
        );
    } else {
        reading.push_str(&format!(
            "A backward branch (a loop) is left in {}: the lane loop was not unrolled completely there. ",
            looped.join(", ")
        ));
    }
    let seed_form = counts.iter().all(|(k, c)| {
        let e = k.elems_per_thread();
        c.setp == e && c.bra - c.uncond_bra == e && c.add_f32 == e
    });
    if seed_form {
        reading.push_str(
            "Per element what remains is the seed's form: one bounds guard (setp + conditional bra) and one add. ",
        );
    } else {
        reading.push_str(
            "Per element the counts are not the seed's one guard and one add in every kernel: see the lines above. ",
        );
    }
    if counts.iter().any(|(_, c)| c.uncond_bra > 0) {
        reading.push_str(
            "An unconditional bra is a jump of the block layout (`bra.uni` past a guarded body), not a decision. ",
        );
    }
    reading.push_str(&format!(
        "What unrolling saves is the thread-index arithmetic, done once per thread and so once per {UNROLL} elements, \
         and {} of every {UNROLL} threads launched.",
        UNROLL - 1
    ));
    reading
}

/// How `ms` compares with `baseline_ms` in a sentence: "N% faster than",
/// "N% slower than" or "within 5% of".
fn relative(ms: f64, baseline_ms: f64) -> String {
    let words = crate::report::relative_speed(ms, baseline_ms);
    format!(
        "{words} {}",
        if words.starts_with("within") {
            "of"
        } else {
            "than"
        }
    )
}

/// The timed section's reading from the three medians (ms): each unrolled
/// form against one element per thread, then the two forms against each
/// other, with the sector counts of the index maps.
pub fn timed_reading(one_ms: f64, consecutive_ms: f64, coalesced_ms: f64) -> String {
    let sectors = |k: Kernel| k.sectors_per_warp_access(0);
    let extra = sectors(Kernel::Unrolled) as f64 / sectors(Kernel::UnrolledCoalesced) as f64;
    let strided = consecutive_ms / coalesced_ms;
    let verdict = if strided > 1.05 {
        format!(
            "the consecutive (strided) form is the slower one here, as its {extra:.0}x the sectors per warp access would suggest"
        )
    } else if strided < 1.0 / 1.05 {
        format!(
            "the consecutive form is the faster one here, despite touching {extra:.0}x the sectors per warp access"
        )
    } else {
        "the two forms are within 5% here: the strided form's extra sectors per access cost little time on this GPU"
            .to_string()
    };
    format!(
        "Bytes counted: a and b read once, out written once ({BYTES_PER_ELEM} bytes per element). Against one \
         element per thread, the consecutive unrolled add is {} it (time ratio {:.2}) and the coalesced one {} it \
         ({:.2}). Consecutive / coalesced time: {strided:.2}, so {verdict}.",
        relative(consecutive_ms, one_ms),
        consecutive_ms / one_ms,
        relative(coalesced_ms, one_ms),
        coalesced_ms / one_ms,
    )
}

/// The lesson's sizes: the timed adds' elements (three buffers of them),
/// and the sizes every kernel is checked at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sizes {
    /// Elements of each timed add.
    pub timed: usize,
    /// The sizes every kernel is checked at.
    pub checked: [usize; 4],
    /// The host mirrors' sizes (the seed's).
    pub mirror: [usize; 2],
    /// Elements one unrolled thread handles.
    pub unroll: usize,
    /// Bytes one add moves per element.
    pub bytes_per_elem: usize,
}

impl Sizes {
    /// A full run on `info`'s GPU: [`SEED_TIMED_ELEMS`] doubled until a
    /// buffer is at least 4x the L2 (whole unrolled blocks still);
    /// `quick`: the timed adds at the check size.
    pub fn new(info: &crate::gpu::DeviceInfo, quick: bool) -> Sizes {
        Sizes {
            timed: if quick {
                CHECK_ELEMS
            } else {
                grown(SEED_TIMED_ELEMS, size_of::<f32>(), info.l2_bytes)
            },
            checked: CHECKED_SIZES,
            mirror: SEED_SIZES,
            unroll: UNROLL,
            bytes_per_elem: BYTES_PER_ELEM,
        }
    }
}

impl LessonSizes for Sizes {
    fn for_gpu(info: &crate::gpu::DeviceInfo, quick: bool) -> Result<Sizes> {
        Ok(Sizes::new(info, quick))
    }
    fn streams(&self) -> Vec<Stream> {
        vec![Stream::of::<f32>("a, b, out", self.timed)]
    }

    fn device_bytes(&self) -> usize {
        3 * self.timed * size_of::<f32>()
    }
}

/// The twins compiled by NVRTC for `gpu`, or `None` where NVRTC is missing
/// or fails (the run reports its own kernels either way).
fn twins_ptx(gpu: &Gpu) -> Option<String> {
    crate::nvrtc::require_nvrtc().ok()?;
    crate::nvrtc::compile(
        &<UnrollLesson as lesson::Lesson>::cuda_c(),
        "unroll.cu",
        gpu.info.compute_capability,
    )
    .ok()
}

/// The CUDA C twins.
pub const CUDA_C_SOURCE: &str = include_str!("unroll.cu");

/// The unroll lesson as `lab` runs it.
pub struct UnrollLesson;

impl lesson::Lesson for UnrollLesson {
    const NAME: &'static str = "unroll";
    const ABOUT: &'static str = "Chapter 19.2: loop unrolling, counted on the host, then one against four elements per thread on the GPU (consecutive and coalesced).";
    type Kernel = Kernel;
    type Sizes = Sizes;
    type Twins<'g> = Unroll<'g>;

    fn block_sizes() -> serde_json::Value {
        json!({"all": THREADS_PER_BLOCK, "seed_example": SEED_GPU_ELEMS.div_ceil(UNROLL)})
    }

    /// What NVRTC compiles: UNROLL as a `#define`, then the twins.
    fn cuda_c() -> String {
        format!("#define UNROLL {UNROLL}\n{CUDA_C_SOURCE}")
    }

    /// Every kernel checked at every checked size and on the seed's example;
    /// then the mirrors' counts, the seed's launch, the PTX and the timings.
    fn run(
        gpu: &Gpu,
        sizes: &Sizes,
        context: Context,
        options: &RunOptions<'_>,
    ) -> Result<Outcome<Box<dyn lesson::Report>>> {
        let plan = options.plan;
        let elems = sizes.timed;
        let quick = options.quick;
        let mut lesson = Unroll::new(gpu, elems)?;
        let mut failures = Vec::new();
        let mut outputs = Vec::new();
        for &k in Kernel::ALL {
            for n in CHECKED_SIZES {
                let (failure, got) = lesson.check(k, n)?;
                failures.extend(failure);
                if n == CHECK_ELEMS {
                    outputs.push(got);
                }
            }
        }
        let mut seed_outputs = Vec::new();
        let (sa, sb) = reference::seed_gpu_inputs(SEED_GPU_ELEMS);
        let seed_want = reference::sum(&sa, &sb);
        for &k in Kernel::ALL {
            let got = lesson.seed_example(k)?;
            failures.extend(bit_failure(k, SEED_GPU_ELEMS, &got, &seed_want));
            seed_outputs.push(got);
        }
        // Part 1: the seed's host mirrors, counted; a disagreement between the
        // two loops fails the run like a kernel's.
        let mut mirrors =
            Section::new("Loop unrolling on the host: overhead counted, arithmetic unchanged");
        let mut mirror_facts = Vec::new();
        let mut reductions = Vec::new();
        for size in SEED_SIZES {
            let (lines, facts) = mirror_lines(size);
            for line in lines {
                mirrors.line(line);
            }
            failures.extend(mirror_failure(&facts));
            let events = |side: &str| {
                facts[side]["loop_control_events"]
                    .as_f64()
                    .unwrap_or(f64::NAN)
            };
            reductions.push(format!(
                "by {:.2} at size {size}",
                events("plain") / events("unrolled")
            ));
            mirror_facts.push(facts);
        }
        if !failures.is_empty() {
            return Ok(Outcome::Failed(failures));
        }
        let identical_on_gpu = outputs
            .iter()
            .all(|o| Agreement::of_bits(o, &outputs[0]) == Agreement::Identical);
        mirrors.reading = Some(format!(
            "Unrolling by {UNROLL} divides the loop's bookkeeping (increment, compare, branch) {} and leaves \
             the number of adds as it was: the two loops' outputs are equal element for element.",
            reductions.join(" and ")
        ));

        // Part 2: the seed's GPU launch, which it could not run.
        let mut launch =
            Section::new("The unrolled kernel on the GPU: the seed's 16-element launch, run");
        let show = |v: &[f32]| {
            v.iter()
                .map(|x| format!("{x}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let seed_threads = SEED_GPU_ELEMS.div_ceil(UNROLL);
        launch.line(format!(
            "kernel launch <<<1,{seed_threads}>>> (each thread handles {UNROLL} elements): {}",
            show(&seed_outputs[1])
        ));
        launch.line(format!("host reference (a+b): {}", show(&seed_want)));
        launch.line(format!(
            "every kernel checked bit for bit at n = {}: passed; the three kernels' outputs identical at n = {CHECK_ELEMS}: \
             {identical_on_gpu}",
            CHECKED_SIZES.map(|n| n.to_string()).join(", ")
        ));

        // Part 3: the PTX.
        let mut ptx = Section::new("The PTX: static instruction counts, Rust beside CUDA C");
        let mut ptx_facts = Vec::new();
        let mut shown = Vec::new();
        // The twins' PTX where NVRTC is here (it is not needed for the run).
        let c_ptx = twins_ptx(gpu);
        for &k in Kernel::ALL {
            let c = PtxCounts::of_kernel(k);
            ptx.line(format!("Rust   {}", ptx_line(k, c)));
            shown.push((k, c));
            let twin = c_ptx
                .as_deref()
                .and_then(|p| entry_body(p, k.symbol()))
                .map(PtxCounts::of);
            if let Some(t) = twin {
                ptx.line(format!("CUDA C {}", ptx_line(k, t)));
                shown.push((k, t));
            }
            ptx_facts.push(
                json!({"symbol": k.symbol(), "elems_per_thread": k.elems_per_thread(), "counts": c,
                "cuda_c_counts": twin}),
            );
        }
        if c_ptx.is_none() {
            ptx.line("CUDA C twins' PTX not shown: NVRTC is missing here or failed");
        }
        ptx.reading = Some(ptx_reading(&shown));

        // Part 4: timed.
        let mut timed = Section::new(if quick {
            format!(
                "Timed (--quick: {elems} floats, {} MiB in all against a {} MiB L2; not the full run's DRAM figures)",
                (elems * BYTES_PER_ELEM) >> 20,
                gpu.info.l2_bytes >> 20
            )
        } else {
            format!(
                "Timed: 1 against 4 elements per thread, 3 buffers of {} MiB",
                (elems * 4) >> 20
            )
        });
        let mut sector_facts = Vec::new();
        for &k in Kernel::ALL {
            let sectors: Vec<usize> = (0..k.elems_per_thread())
                .map(|i| k.sectors_per_warp_access(i))
                .collect();
            timed.line(format!(
                "{:<26} 32-byte sectors per warp-wide access (from the index map): {:?} for 128 useful bytes each",
                k.symbol(),
                sectors
            ));
            sector_facts.push(json!({"symbol": k.symbol(), "sectors_per_warp_access": sectors}));
        }
        for &k in Kernel::ALL {
            let t = lesson.time(k, plan)?;
            timed.rows.push(
                Row::new(k.symbol(), format!("{elems} floats, {}", k.label()), t)
                    .bytes((elems * BYTES_PER_ELEM) as f64),
            );
        }
        let ms = |k: Kernel| {
            timed
                .rows
                .iter()
                .find(|r| r.key == k.symbol())
                .map_or(f64::NAN, |r| r.timing.median_ms())
        };
        timed.reading = Some(timed_reading(
            ms(Kernel::OnePerThread),
            ms(Kernel::Unrolled),
            ms(Kernel::UnrolledCoalesced),
        ));

        SectionReport::passed(
            context,
            Findings {
                sections: vec![mirrors, launch, ptx, timed],
                facts: json!({
                    "mirrors": mirror_facts,
                    "seed_gpu_example": {"elems": SEED_GPU_ELEMS, "threads": seed_threads, "output": seed_outputs[1]},
                    "outputs_identical_on_gpu": identical_on_gpu,
                    "ptx": ptx_facts,
                    "sectors": sector_facts,
                }),
            },
        )
    }

    fn twins<'g>(gpu: &'g Gpu, sizes: &Sizes) -> Result<Unroll<'g>> {
        Unroll::new(gpu, sizes.timed)
    }
}
