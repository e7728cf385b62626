//! The unroll lesson on the host (chapter 19.2): the seed's plain and
//! unrolled loops counted by host mirrors at its sizes, the seed's
//! 16-element GPU launch actually run, the PTX showing the unrolled loop is
//! gone, and the one-element-per-thread add timed against two
//! four-elements-per-thread adds (the seed's consecutive form and a
//! coalesced form) and the combination the seed names, unrolled and
//! vectorized (four float4s per thread, with a scalar tail), every output
//! checked bit for bit.

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
        /// `UNROLL` float4s per thread, one block width apart, and a
        /// scalar tail: unrolled and vectorized.
        UnrolledVec4 = "add_unrolled_4_vec4" (Ptr, Ptr, Ptr, U64),
    }
}

impl Kernel {
    /// What the kernel is, for a table row.
    pub fn label(self) -> &'static str {
        match self {
            Kernel::OnePerThread => "1 element per thread",
            Kernel::Unrolled => "4 consecutive elements per thread (the seed's)",
            Kernel::UnrolledCoalesced => "4 elements per thread, a block width apart",
            Kernel::UnrolledVec4 => {
                "4 float4s per thread, a block width apart (unrolled and vectorized)"
            }
        }
    }

    /// Elements one thread handles (the tail aside).
    pub fn elems_per_thread(self) -> usize {
        match self {
            Kernel::OnePerThread => 1,
            Kernel::Unrolled | Kernel::UnrolledCoalesced => UNROLL,
            Kernel::UnrolledVec4 => UNROLL * VEC_WIDTH,
        }
    }

    /// Bytes one thread moves with one load (or store) of one input.
    pub fn bytes_per_access(self) -> usize {
        match self {
            Kernel::UnrolledVec4 => VECTOR_BYTES,
            _ => size_of::<f32>(),
        }
    }

    /// Loads of one input (and stores of the output) one thread makes,
    /// the tail aside: elements per thread over elements per access.
    pub fn accesses_per_thread(self) -> usize {
        self.elems_per_thread() * size_of::<f32>() / self.bytes_per_access()
    }

    /// Bounds guards the kernel's source writes, one compare each: one per
    /// element, or one per float4 and one for the tail.
    pub fn guards(self) -> usize {
        match self {
            Kernel::UnrolledVec4 => UNROLL + 1,
            k => k.elems_per_thread(),
        }
    }

    /// f32 adds the kernel's source writes: one per element, and one for
    /// the tail's element.
    pub fn adds(self) -> usize {
        match self {
            Kernel::UnrolledVec4 => UNROLL * VEC_WIDTH + 1,
            k => k.elems_per_thread(),
        }
    }

    /// Elements one block covers (the tail aside).
    pub fn elems_per_block(self) -> usize {
        THREADS_PER_BLOCK as usize * self.elems_per_thread()
    }

    // ANCHOR: launch_config
    /// The launch over `n` elements: blocks of THREADS_PER_BLOCK, enough to
    /// give every element a thread's lane (at least one block).
    pub fn launch_config(self, n: usize) -> LaunchConfig {
        let per_block = self.elems_per_block();
        LaunchConfig {
            grid_dim: (n.div_ceil(per_block).max(1) as u32, 1, 1),
            block_dim: (THREADS_PER_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        }
    }
    // ANCHOR_END: launch_config

    // ANCHOR: index_map
    /// The element that lane `lane` (0 to elems_per_thread - 1) of thread
    /// `thread` in block `block` handles, with `block_dim` threads per
    /// block, the tail aside: the kernels' index maps, on the host. For the
    /// vectorized kernel lane `lane` is float `lane % 4` of its float4
    /// `lane / 4`.
    pub fn element(self, block: usize, block_dim: usize, thread: usize, lane: usize) -> usize {
        match self {
            Kernel::OnePerThread => block * block_dim + thread,
            Kernel::Unrolled => (block * block_dim + thread) * UNROLL + lane,
            Kernel::UnrolledCoalesced => block * block_dim * UNROLL + lane * block_dim + thread,
            Kernel::UnrolledVec4 => {
                let vector = block * block_dim * UNROLL + (lane / VEC_WIDTH) * block_dim + thread;
                vector * VEC_WIDTH + lane % VEC_WIDTH
            }
        }
    }
    // ANCHOR_END: index_map

    /// 32-byte sectors one warp-wide access touches (warp 0 of block 0,
    /// access `access` of accesses_per_thread, each thread's
    /// bytes_per_access bytes): 4 when the warp's 32 floats are contiguous,
    /// up to 32 when they are scattered; 16 for 32 contiguous float4s. A
    /// count from the index map, not a measurement.
    pub fn sectors_per_warp_access(self, access: usize) -> usize {
        let per_access = self.bytes_per_access() / size_of::<f32>();
        let mut sectors: Vec<usize> = (0..32)
            .flat_map(|t| {
                let first = self.element(0, THREADS_PER_BLOCK as usize, t, access * per_access) * 4;
                (first..first + self.bytes_per_access()).map(|byte| byte / 32)
            })
            .collect();
        sectors.sort_unstable();
        sectors.dedup();
        sectors.len()
    }

    /// Useful bytes one warp-wide access moves: 32 threads' bytes.
    pub fn bytes_per_warp_access(self) -> usize {
        32 * self.bytes_per_access()
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
    /// Global loads, any width.
    pub ld_global: usize,
    /// Global stores, any width.
    pub st_global: usize,
    /// 16-byte global loads of four 32-bit values (`ld.global.v4...`).
    pub ld_global_v4: usize,
    /// 16-byte global stores of four 32-bit values (`st.global.v4...`).
    pub st_global_v4: usize,
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
                c.ld_global_v4 += usize::from(is_v4_32(op));
            } else if op.starts_with("st.global") {
                c.st_global += 1;
                c.st_global_v4 += usize::from(is_v4_32(op));
            }
        }
        c
    }

    /// Memory instructions (global loads and stores) per element of the
    /// kernel's thread, the tail's aside: `(ld + st - tail's) / elements`.
    /// The vectorized kernel's tail (two loads and a store) runs in at
    /// most 3 threads of the grid, so it is left out of the per-element
    /// figure; the count of every instruction is in the line itself.
    pub fn memory_per_elem(&self, kernel: Kernel) -> f64 {
        let tail = if kernel == Kernel::UnrolledVec4 { 3 } else { 0 };
        (self.ld_global + self.st_global).saturating_sub(tail) as f64
            / kernel.elems_per_thread() as f64
    }

    /// The counts of `kernel` in the embedded (Rust) PTX.
    pub fn of_kernel(kernel: Kernel) -> PtxCounts {
        PtxCounts::of(entry_body(PTX, kernel.symbol()).unwrap_or(""))
    }
}

/// Whether a PTX global load or store opcode moves four 32-bit values
/// (`ld.global.v4.f32`, `st.global.v4.b32`, `ld.global.nc.v4.u32`, ...).
fn is_v4_32(op: &str) -> bool {
    let parts: Vec<&str> = op.split('.').collect();
    parts.contains(&"v4") && parts.last().is_some_and(|t| t.ends_with("32"))
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
    /// the kernel's block width past `n` (where the buffers hold one) was
    /// written: a missing bounds guard fails too. Returns the failure (if
    /// any) and the first `n` output elements' bits.
    pub fn check(&mut self, kernel: Kernel, n: usize) -> Result<(Option<Failure>, Vec<u64>)> {
        let end = (n + kernel.elems_per_block()).min(self.elems);
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
/// ones, which decide nothing; memory instructions per element without the
/// vectorized kernel's tail, see [`PtxCounts::memory_per_elem`]).
pub fn ptx_line(kernel: Kernel, c: PtxCounts) -> String {
    let per = kernel.elems_per_thread() as f64;
    format!(
        "{:<26} {} element(s)/thread: setp {}, bra {} ({} unconditional, {} backward), add.f32 {}, ld.global {} \
         ({} of 16 bytes), st.global {} ({} of 16 bytes); per element: {:.2} setp, {:.2} conditional bra, {:.2} add, \
         {:.2} memory instructions",
        kernel.symbol(),
        kernel.elems_per_thread(),
        c.setp,
        c.bra,
        c.uncond_bra,
        c.backward_bra,
        c.add_f32,
        c.ld_global,
        c.ld_global_v4,
        c.st_global,
        c.st_global_v4,
        c.setp as f64 / per,
        (c.bra - c.uncond_bra) as f64 / per,
        c.add_f32 as f64 / per,
        c.memory_per_elem(kernel)
    )
}

/// The PTX section's reading, from the counts of every kernel shown (Rust,
/// and the CUDA C twins where NVRTC ran): whether a loop is left, whether
/// each kernel keeps exactly the guards and adds its source writes, what
/// the unconditional branches are, and what the unrolled-and-vectorized
/// kernel did to the memory and the arithmetic instructions (the seed's
/// claim that the combination cuts both).
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
    let as_written = counts.iter().all(|(k, c)| {
        c.setp == k.guards() && c.bra - c.uncond_bra == k.guards() && c.add_f32 == k.adds()
    });
    if as_written {
        reading.push_str(
            "What remains is what each source writes: the seed's one bounds guard (setp + conditional bra) and one \
             add per element, and in the vectorized kernel one guard per float4 and one for its tail. ",
        );
    } else {
        reading.push_str(
            "The guards and adds are not exactly those each source writes in every kernel (one guard and one add per \
             element; one guard per float4 and one for the tail in the vectorized kernel): see the lines above. ",
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
    if let Some(combined) = combination_reading(counts) {
        reading.push(' ');
        reading.push_str(&combined);
    }
    reading
}

/// What the unrolled-and-vectorized kernel's counts say about the seed's
/// claim that the combination cuts both the loop overhead and the
/// instruction count: its 16-byte accesses, its memory instructions per
/// element against the scalar unrolled add's, and its adds per element.
/// `None` where `counts` lacks either kernel.
fn combination_reading(counts: &[(Kernel, PtxCounts)]) -> Option<String> {
    let of = |kernel: Kernel| -> Vec<PtxCounts> {
        counts
            .iter()
            .filter(|(k, _)| *k == kernel)
            .map(|(_, c)| *c)
            .collect()
    };
    let (vec4, scalar) = (of(Kernel::UnrolledVec4), of(Kernel::UnrolledCoalesced));
    let (v, s) = (vec4.first()?, scalar.first()?);
    let k = Kernel::UnrolledVec4;
    let elems = k.elems_per_thread();
    let all_vector = vec4.iter().all(|c| {
        c.ld_global_v4 == 2 * k.accesses_per_thread() && c.st_global_v4 == k.accesses_per_thread()
    });
    let loads = if all_vector {
        format!(
            "moves its {elems} elements with {} 16-byte loads and {} 16-byte stores in every PTX shown",
            v.ld_global_v4, v.st_global_v4
        )
    } else {
        format!(
            "was not given one 16-byte load per input and one 16-byte store per float4 in every PTX shown ({} and {} \
             in the first): the vector accesses were split",
            v.ld_global_v4, v.st_global_v4
        )
    };
    let (mv, ms) = (
        v.memory_per_elem(k),
        s.memory_per_elem(Kernel::UnrolledCoalesced),
    );
    // Adds per element of the thread's main body: the tail's one aside.
    let adds = v.add_f32.saturating_sub(1) as f64 / elems as f64;
    Some(format!(
        "The unrolled and vectorized add (the seed's combination) {loads}: {mv:.2} memory instructions per element \
         against {ms:.2} in {}, {}. Its adds are {adds:.2} per element ({} add.f32 for {elems} elements and \
         the tail's one), {}",
        Kernel::UnrolledCoalesced.symbol(),
        if mv <= 0.0 || ms <= 0.0 {
            "no ratio (a count is zero)".to_string()
        } else if mv < ms {
            format!("{:.1}x fewer", ms / mv)
        } else if mv > ms {
            format!("{:.1}x more", mv / ms)
        } else {
            "as many".to_string()
        },
        v.add_f32,
        if (adds - 1.0).abs() < 1e-9 {
            "as many as before: on this PTX the combination cuts the loop overhead and the memory instructions, not the \
             arithmetic instructions (each float4 is added as four add.f32)."
        } else if adds < 1.0 {
            "fewer than one per element: the arithmetic instruction count fell too."
        } else {
            "more than one per element: see the line above."
        }
    ))
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

/// The timed section's reading from the four medians (ms): each unrolled
/// form against one element per thread, the two scalar forms against each
/// other, with the sector counts of the index maps, then the unrolled and
/// vectorized add against the scalar unrolled add it vectorizes.
pub fn timed_reading(one_ms: f64, consecutive_ms: f64, coalesced_ms: f64, vec4_ms: f64) -> String {
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
    let combined = vec4_ms / coalesced_ms;
    let combined_verdict = if combined < 1.0 / 1.05 {
        "here the fewer instructions show as time"
    } else if combined > 1.05 {
        "here it is the slower one despite its fewer instructions as written"
    } else {
        "here the fewer instructions do not change the time by more than 5%: the same bytes move either way"
    };
    format!(
        "Bytes counted: a and b read once, out written once ({BYTES_PER_ELEM} bytes per element). Against one \
         element per thread, the consecutive unrolled add is {} it (time ratio {:.2}) and the coalesced one {} it \
         ({:.2}). Consecutive / coalesced time: {strided:.2}, so {verdict}. The unrolled and vectorized add \
         (the seed's combination) is {} one element per thread ({:.2}) and {} the coalesced unrolled add it \
         vectorizes ({combined:.2}): as written it issues one load or store for every {VEC_WIDTH} of that add's, for the \
         same bytes (the PTX section counts them), and {combined_verdict}.",
        relative(consecutive_ms, one_ms),
        consecutive_ms / one_ms,
        relative(coalesced_ms, one_ms),
        coalesced_ms / one_ms,
        relative(vec4_ms, one_ms),
        vec4_ms / one_ms,
        relative(vec4_ms, coalesced_ms),
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
    const ABOUT: &'static str = "Chapter 19.2: loop unrolling, counted on the host, then one against four elements per thread on the GPU (consecutive, coalesced, and unrolled with float4s).";
    type Kernel = Kernel;
    type Sizes = Sizes;
    type Twins<'g> = Unroll<'g>;

    fn block_sizes() -> serde_json::Value {
        json!({"all": THREADS_PER_BLOCK, "seed_example": SEED_GPU_ELEMS.div_ceil(UNROLL),
            "seed_example_vec4": SEED_GPU_ELEMS.div_ceil(Kernel::UnrolledVec4.elems_per_thread())})
    }

    /// What NVRTC compiles: UNROLL and VEC_WIDTH as `#define`s, then the
    /// twins.
    fn cuda_c() -> String {
        format!("#define UNROLL {UNROLL}\n#define VEC_WIDTH {VEC_WIDTH}\n{CUDA_C_SOURCE}")
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
        let vec4_at = Kernel::ALL
            .iter()
            .position(|&k| k == Kernel::UnrolledVec4)
            .expect("a kernel of the lesson");
        let vec4_threads = SEED_GPU_ELEMS.div_ceil(Kernel::UnrolledVec4.elems_per_thread());
        launch.line(format!(
            "{} <<<1,{vec4_threads}>>> (each thread handles {UNROLL} float4s, {} elements): {}",
            Kernel::UnrolledVec4.symbol(),
            Kernel::UnrolledVec4.elems_per_thread(),
            show(&seed_outputs[vec4_at])
        ));
        launch.line(format!("host reference (a+b): {}", show(&seed_want)));
        launch.line(format!(
            "every kernel checked bit for bit at n = {}: passed; the {} kernels' outputs identical at n = {CHECK_ELEMS}: \
             {identical_on_gpu}",
            CHECKED_SIZES.map(|n| n.to_string()).join(", "),
            Kernel::ALL.len()
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
                "Timed: 1 against 4 elements per thread, and 4 float4s per thread, 3 buffers of {} MiB",
                (elems * 4) >> 20
            )
        });
        let mut sector_facts = Vec::new();
        for &k in Kernel::ALL {
            let sectors: Vec<usize> = (0..k.accesses_per_thread())
                .map(|i| k.sectors_per_warp_access(i))
                .collect();
            timed.line(format!(
                "{:<26} 32-byte sectors per warp-wide access (from the index map): {:?} for {} useful bytes each",
                k.symbol(),
                sectors,
                k.bytes_per_warp_access()
            ));
            sector_facts.push(
                json!({"symbol": k.symbol(), "sectors_per_warp_access": sectors,
                "bytes_per_warp_access": k.bytes_per_warp_access()}),
            );
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
            ms(Kernel::UnrolledVec4),
        ));

        SectionReport::passed(
            context,
            Findings {
                sections: vec![mirrors, launch, ptx, timed],
                facts: json!({
                    "mirrors": mirror_facts,
                    "seed_gpu_example": {"elems": SEED_GPU_ELEMS, "threads": seed_threads, "output": seed_outputs[1]},
                    "seed_gpu_example_vec4": {"elems": SEED_GPU_ELEMS, "threads": vec4_threads,
                        "output": seed_outputs[vec4_at]},
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
