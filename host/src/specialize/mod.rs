//! The specialize lesson on the host (chapter 19.3): a dot product whose
//! length is a compile-time constant, instantiated at N = 2, 4, 8 and 16.
//! Each instantiation is a body of its own: shown in the host binary's
//! symbol table ([`binary`]) and in the PTX (one loop-free entry per N,
//! exactly N fused multiply-adds, bodies growing with N); then every GPU
//! dot is checked bit for bit and the specialized kernels are timed
//! against the one that reads N at run time. Last, the linker's side
//! ([`weak`]): a CUDA C template instantiated in two units is `.weak` in
//! both and linked into one copy, where Rust's kernels are each one
//! `.visible .entry` of the one module.

pub mod binary;
pub mod reference;
pub mod weak;

use cudarc::driver::{CudaSlice, LaunchConfig};
use kernels_gpu::specialize::*;
use serde::Serialize;
use serde_json::json;

use crate::check::{Failure, Tolerance, first_mismatch};
use crate::compare::Twinned;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::kernels::{KernelId, KernelSet, Param};
use crate::lesson::{self, Findings, Outcome, Row, RunOptions, Section, SectionReport};
use crate::ptx::{PTX, PtxMix, entry_body};
use crate::report::Context;
use crate::sizes::{LessonSizes, Stream, grown};
use crate::timing::{self, Plan, Timing};

/// The lesson's kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// `dot_specialized_N`: N fixed at compile time (one of
    /// [`SPECIALIZED_N`]).
    Specialized(usize),
    /// `dot_runtime`: N a kernel argument.
    Runtime,
}

/// Every kernel: the specialized ones from the one list of lengths
/// (`kernels_gpu::specialized_lengths!`), then `dot_runtime`.
macro_rules! all_kernels {
    ($($name:ident = $n:literal),* $(,)?) => {
        &[$(Kernel::Specialized($n),)* Kernel::Runtime]
    };
}

impl KernelId for Kernel {
    const ALL: &'static [Kernel] = kernels_gpu::specialized_lengths!(all_kernels);

    /// The exported symbol (the CUDA C twin's too).
    fn symbol(self) -> &'static str {
        match self {
            Kernel::Specialized(n) => SPECIALIZED_N
                .iter()
                .position(|&m| m == n)
                .map(|i| SPECIALIZED_SYMBOLS[i])
                .expect("a specialized kernel is one of SPECIALIZED_N"),
            Kernel::Runtime => "dot_runtime",
        }
    }

    /// (x, y, out, count), and `dot_runtime`'s length N.
    fn params(self) -> &'static [Param] {
        match self {
            Kernel::Specialized(_) => &[Param::Ptr, Param::Ptr, Param::Ptr, Param::U64],
            Kernel::Runtime => &[Param::Ptr, Param::Ptr, Param::Ptr, Param::U64, Param::U32],
        }
    }
}

impl Kernel {
    /// One thread per dot, in blocks of THREADS_PER_BLOCK.
    pub fn launch_config(count: usize) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (
                count.div_ceil(THREADS_PER_BLOCK as usize).max(1) as u32,
                1,
                1,
            ),
            block_dim: (THREADS_PER_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        }
    }
}

/// Bytes one launch moves over `count` dots of length `n`: n floats from
/// each input and one result per dot.
pub fn bytes(n: usize, count: usize) -> f64 {
    ((2 * n + 1) * size_of::<f32>() * count) as f64
}

/// FLOP of one launch: one multiply and one add (one FMA) per term.
pub fn flop(n: usize, count: usize) -> f64 {
    (2 * n * count) as f64
}

/// The lesson's buffers on one GPU: x and y (filled once with the
/// reference inputs), and the output.
pub struct Specialize<'g> {
    gpu: &'g Gpu,
    sizes: Sizes,
    kernels: KernelSet<Kernel>,
    x: CudaSlice<f32>,
    y: CudaSlice<f32>,
    out: CudaSlice<f32>,
    /// Floats of x and y uploaded (the fills are by flat index, so every
    /// (n, count) with n count <= this reads a prefix).
    input_len: usize,
    /// The inputs on the host, for the references.
    x_host: Vec<f32>,
    y_host: Vec<f32>,
}

impl<'g> Specialize<'g> {
    /// Checks free memory, allocates the buffers at `sizes` and uploads the
    /// inputs.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] before allocating; driver errors.
    pub fn new(gpu: &'g Gpu, sizes: &Sizes) -> Result<Self> {
        let input_len = sizes.input_floats;
        let out_len = sizes.out_floats();
        gpu.require_free_memory(sizes.device_bytes(), "the specialize lesson's buffers")?;
        let x_host = reference::input(input_len, reference::fill_x);
        let y_host = reference::input(input_len, reference::fill_y);
        let mut x = gpu.alloc_f32(input_len)?;
        let mut y = gpu.alloc_f32(input_len)?;
        gpu.upload(&x_host, &mut x)?;
        gpu.upload(&y_host, &mut y)?;
        Ok(Specialize {
            gpu,
            sizes: sizes.clone(),
            kernels: KernelSet::new(gpu)?,
            x,
            y,
            out: gpu.alloc_f32(out_len)?,
            input_len,
            x_host,
            y_host,
        })
    }

    /// Launches `kernel` over `count` dots of length `n` (asynchronously)
    /// on the side in use.
    ///
    /// # Errors
    /// [`Error::Size`] when the buffers are too small or a specialized
    /// kernel is asked for another length; a launch the driver refuses.
    pub fn launch(&mut self, kernel: Kernel, n: usize, count: usize) -> Result<()> {
        let needed = n.saturating_mul(count);
        if needed > self.input_len || count > self.out.len() || n > u32::MAX as usize {
            return Err(Error::Size(format!(
                "{}: {count} dots of {n} need {needed} input floats and {count} outputs; the buffers hold {} and {}",
                kernel.symbol(),
                self.input_len,
                self.out.len()
            )));
        }
        if matches!(kernel, Kernel::Specialized(m) if m != n) {
            return Err(Error::Size(format!(
                "{} computes dots of length {}, not {n}",
                kernel.symbol(),
                match kernel {
                    Kernel::Specialized(m) => m,
                    Kernel::Runtime => n,
                }
            )));
        }
        // ANCHOR: launch
        let mut launch = self
            .kernels
            .launch(self.gpu, kernel)
            .input(&self.x)
            .input(&self.y)
            .output(&mut self.out)
            .scalar(count as u64);
        if kernel == Kernel::Runtime {
            launch = launch.scalar(n as u32);
        }
        // SAFETY: x and y hold at least n count floats and out at least
        // count (checked above), the three are distinct buffers, and the
        // grid has one thread per dot; the argument kinds (dot_runtime's
        // extra u32 length only for it) are checked at launch.
        unsafe { launch.launch(Kernel::launch_config(count)) }
        // ANCHOR_END: launch
    }

    /// Runs `kernel` over `count` dots of length `n` into a poisoned output
    /// and checks every dot: bit for bit against the f32 fma reference, and
    /// within the rounding bound of the f64 one. Returns the failures (at
    /// most one per kind) and the output's bits.
    pub fn check(
        &mut self,
        kernel: Kernel,
        n: usize,
        count: usize,
    ) -> Result<(Vec<Failure>, Vec<u64>)> {
        self.gpu.fill_bytes(&mut self.out, 0xFF)?;
        self.launch(kernel, n, count)?;
        self.gpu.sync_after(kernel.symbol())?;
        let mut got = vec![0.0f32; count];
        self.gpu.download(&self.out, &mut got)?;
        self.gpu.sync_after(kernel.symbol())?;
        let want = reference::dots_fma_f32(&self.x_host, &self.y_host, n, count);
        let mut failures = Vec::new();
        let fail = |what: &str, m: crate::check::Mismatch| Failure {
            kernel: kernel.symbol(),
            detail: format!("N = {n}, {count} dots: {what}: {m}"),
        };
        if let Some(m) = first_mismatch(&got, &want, Tolerance::Bits) {
            failures.push(fail("against the same fma sequence in f32", m));
        }
        let (exact, bounds): (Vec<f64>, Vec<f64>) = (0..count)
            .map(|v| {
                let (exact, magnitude) =
                    reference::dot_f64(&self.x_host, &self.y_host, n, count, v);
                (exact, reference::error_bound(n, magnitude))
            })
            .unzip();
        if let Some(m) = first_mismatch(&got, &exact, Tolerance::Bound(&bounds)) {
            failures.push(fail("against f64, within the rounding bound", m));
        }
        Ok((
            failures,
            got.iter().map(|g| u64::from(g.to_bits())).collect(),
        ))
    }

    /// Times `kernel` over `count` dots of length `n` with `plan`.
    pub fn time(&mut self, kernel: Kernel, n: usize, count: usize, plan: Plan) -> Result<Timing> {
        let gpu = self.gpu;
        timing::time_kernel(gpu, kernel.symbol(), plan, || self.launch(kernel, n, count))
    }
}

/// The length `dot_runtime` is timed at when set beside its twin: the
/// longest loop.
pub const RUNTIME_COMPARED_N: usize = MAX_SPECIALIZED_N;

impl Twinned for Specialize<'_> {
    type Kernel = Kernel;

    fn kernels(&mut self) -> &mut KernelSet<Kernel> {
        &mut self.kernels
    }

    /// A specialized kernel at its N; `dot_runtime` at every N, its
    /// outputs one after another.
    fn check(&mut self, k: Kernel) -> Result<(Vec<Failure>, Vec<u64>)> {
        let lengths: Vec<usize> = match k {
            Kernel::Specialized(n) => vec![n],
            Kernel::Runtime => SPECIALIZED_N.to_vec(),
        };
        let mut failures = Vec::new();
        let mut bits = Vec::new();
        for n in lengths {
            let (f, b) = Specialize::check(self, k, n, CHECK_DOTS)?;
            failures.extend(f);
            bits.extend(b);
        }
        Ok((failures, bits))
    }

    /// A specialized kernel at its N; `dot_runtime` at RUNTIME_COMPARED_N.
    fn time(&mut self, k: Kernel, plan: Plan) -> Result<Timing> {
        let n = match k {
            Kernel::Specialized(n) => n,
            Kernel::Runtime => RUNTIME_COMPARED_N,
        };
        let count = self.sizes.dots(n);
        Specialize::time(self, k, n, count, plan)
    }
}

/// What one kernel's PTX body shows.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BodyEvidence {
    /// The entry's symbol.
    pub symbol: &'static str,
    /// Whether the PTX has this entry.
    pub present: bool,
    /// PTX instructions in the body (lines ending in `;` that are not
    /// directives; labels and comments excluded).
    pub instructions: usize,
    /// `fma.rn.f32` instructions.
    pub fma: usize,
    /// Global loads.
    pub loads: usize,
    /// Branches to a label earlier in the body: a loop.
    pub backward_branches: usize,
    /// `fma.rn.f32` per trip of each loop, in the order of their back
    /// edges (see [`loop_fma`]).
    pub fma_per_loop: Vec<usize>,
}

/// Instructions in a PTX body: statements ending in `;`, minus directives
/// (`.reg`, `.param`, `.pragma`, ...) and comments.
pub fn ptx_instructions(body: &str) -> usize {
    body.lines()
        .map(str::trim)
        .filter(|l| l.ends_with(';') && !l.starts_with('.') && !l.starts_with("//"))
        .count()
}

/// The loops of a PTX body: one entry per branch whose target label comes
/// before it (a back edge), giving the `fma.rn.f32` instructions between
/// that label and the branch (one trip's multiply-adds), in the order the
/// back edges appear.
pub fn loop_fma(body: &str) -> Vec<usize> {
    let mut labels = std::collections::HashMap::new();
    let mut fma_so_far = 0;
    let mut loops = Vec::new();
    for line in body.lines().map(str::trim) {
        if let Some(label) = line
            .split_whitespace()
            .next()
            .and_then(|w| w.strip_suffix(':'))
        {
            labels.insert(label.to_string(), fma_so_far);
            continue;
        }
        let mut words = line.split_whitespace();
        let mut op = words.next().unwrap_or("");
        if op.starts_with('@') {
            op = words.next().unwrap_or("");
        }
        if op == "fma.rn.f32" {
            fma_so_far += 1;
        } else if op == "bra" || op.starts_with("bra.") {
            let target = words.next().unwrap_or("").trim_end_matches(';');
            if let Some(at_label) = labels.get(target) {
                loops.push(fma_so_far - at_label);
            }
        }
    }
    loops
}

/// Branches in a PTX body whose target label comes before the branch: the
/// back edges of loops.
pub fn backward_branches(body: &str) -> usize {
    loop_fma(body).len()
}

/// The evidence for `kernel` from `ptx`.
pub fn body_evidence(ptx: &str, kernel: Kernel) -> BodyEvidence {
    let body = entry_body(ptx, kernel.symbol());
    let text = body.unwrap_or("");
    let mix = PtxMix::of(text);
    let fma_per_loop = loop_fma(text);
    BodyEvidence {
        symbol: kernel.symbol(),
        present: body.is_some(),
        instructions: ptx_instructions(text),
        fma: mix.fma_f32,
        loads: mix
            .accesses
            .iter()
            .filter(|(k, _)| k.starts_with("ld.global"))
            .map(|(_, n)| n)
            .sum(),
        backward_branches: fma_per_loop.len(),
        fma_per_loop,
    }
}

/// Whether the PTX proves the specialization: one entry per N, each with
/// no loop and exactly N fma (and 2 N loads), bodies growing with N, and
/// the runtime kernel with a loop. Returns what does not hold, if anything.
pub fn specialization_holds(bodies: &[BodyEvidence]) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut last = 0;
    for (b, &k) in bodies.iter().zip(Kernel::ALL) {
        if !b.present {
            wrong.push(format!("{}: no such entry in the PTX", b.symbol));
            continue;
        }
        match k {
            Kernel::Specialized(n) => {
                if b.backward_branches != 0 {
                    wrong.push(format!("{}: still has a loop", b.symbol));
                }
                if b.fma != n || b.loads != 2 * n {
                    wrong.push(format!(
                        "{}: {} fma and {} loads, not {n} and {}",
                        b.symbol,
                        b.fma,
                        b.loads,
                        2 * n
                    ));
                }
                if b.instructions <= last {
                    wrong.push(format!("{}: body not larger than the last", b.symbol));
                }
                last = b.instructions;
            }
            Kernel::Runtime => {
                if b.backward_branches == 0 {
                    wrong.push(format!("{}: no loop", b.symbol));
                }
            }
        }
    }
    wrong
}

/// The host section's reading, from the symbols [`binary::host_symbols`]
/// found: `Err` with what is wrong unless each N of [`SPECIALIZED_N`] is
/// its own symbol at its own address.
pub fn host_reading(symbols: &[binary::HostSymbol]) -> std::result::Result<String, String> {
    let mapped: Vec<&binary::HostSymbol> = symbols.iter().filter(|s| s.n != 0).collect();
    let ns: Vec<usize> = mapped.iter().map(|s| s.n).collect();
    let addresses: std::collections::BTreeSet<u64> = mapped.iter().map(|s| s.address).collect();
    if ns != SPECIALIZED_N || addresses.len() != ns.len() {
        return Err(format!(
            "expected one symbol at its own address for each N of {SPECIALIZED_N:?}; found N = {ns:?} at {} distinct address(es)",
            addresses.len()
        ));
    }
    let sizes: Vec<u64> = mapped.iter().map(|s| s.size).collect();
    let growing = sizes.windows(2).all(|w| w[0] < w[1]);
    let v0 = mapped
        .iter()
        .all(|s| s.demangled.contains("dot_specialized::<"));
    Ok(format!(
        "{} instantiations at {} distinct addresses: separate functions, not one function with a length argument. \
         Their sizes ({} bytes) {}. {}",
        ns.len(),
        addresses.len(),
        sizes
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        if growing {
            "grow with N: the code bloat"
        } else {
            "do not grow with N here"
        },
        if v0 {
            "The v0 mangling spells each N out in the name."
        } else {
            "The default (legacy) mangling folds the generic argument into the hash, so the names differ only \
             there; each symbol's N is known from the function pointer the program took of it."
        }
    ))
}

/// The PTX section's reading from the bodies' evidence and what
/// [`specialization_holds`] found wrong.
pub fn ptx_reading(bodies: &[BodyEvidence], wrong: &[String]) -> String {
    if !wrong.is_empty() {
        return format!(
            "The PTX does not show what the lesson expects: {}",
            wrong.join("; ")
        );
    }
    let loops = bodies
        .iter()
        .find(|b| b.symbol == Kernel::Runtime.symbol())
        .map_or(&[][..], |b| &b.fma_per_loop[..]);
    format!(
        "Each dot_specialized_N has no backward branch and exactly N fma: the loop is gone, and the body grows with N \
         (the code bloat that pays for it). dot_runtime is one body for every N, with {} loop(s) ({} fma a trip) \
         whose trip count comes from its argument.",
        loops.len(),
        loops
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(" and ")
    )
}

/// The linking section's reading from the linked pair (`linked`: its
/// definitions and its kernels' outputs) and the control pair's link
/// (`control`: `Err` with the linker's log where refused): `Err` with what
/// is wrong unless each instantiation of [`weak::LINKED_N`] has exactly one
/// definition in the linked image, each unit's kernel computed
/// [`weak::linked_reference`], and the control was refused.
pub fn linkage_reading(
    linked: &weak::Linked,
    control: &std::result::Result<(), String>,
) -> std::result::Result<String, String> {
    let mut wrong = Vec::new();
    let mut ns = weak::LINKED_N.to_vec();
    ns.sort_unstable();
    for &n in &ns {
        let count = linked
            .definitions
            .iter()
            .find(|(m, _)| *m == n)
            .map_or(0, |(_, c)| *c);
        if count != 1 {
            wrong.push(format!(
                "the linked image holds {count} definitions of dot_linked<{n}>, not 1"
            ));
        }
    }
    for (n, _) in &linked.definitions {
        if !ns.contains(n) {
            wrong.push(format!(
                "the linked image holds a dot_linked<{n}> no unit asked for"
            ));
        }
    }
    let want = weak::linked_reference();
    for unit in weak::UNITS {
        match linked.outputs.iter().find(|(u, _)| u == unit) {
            Some((_, got)) if *got == want => {}
            Some((_, got)) => wrong.push(format!("{unit} computed {got:?}, the CPU {want:?}")),
            None => wrong.push(format!("{unit} was not launched")),
        }
    }
    match control {
        Ok(()) => {
            wrong.push("the driver's linker accepted dot4_plain defined in both units".to_string())
        }
        // Any link error lands here; only one that names dot4_plain is the
        // refusal the lesson shows.
        Err(log) if !log.contains(weak::PLAIN_MANGLED) => wrong.push(format!(
            "the control pair failed to link, but its log does not name dot4_plain ({}): {log}",
            weak::PLAIN_MANGLED
        )),
        Err(_) => {}
    }
    if !wrong.is_empty() {
        return Err(wrong.join("; "));
    }
    Ok(format!(
        "Both units instantiate dot_linked<{}>; the linked image holds one definition of each, which both \
         kernels call (each computes the CPU's values). The linker could merge them because a template \
         instantiation is a weak definition: any unit may emit it, and one copy is kept. The ordinary \
         function dot4_plain, a strong definition in both units, is a conflict the linker refuses: the same \
         units without it linked, so the refusal is dot4_plain's.",
        ns.iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join("> and dot_linked<")
    ))
}

/// What Rust does instead, from the lesson's PTX (`kernels`: the
/// `dot_specialized_*` declarations; `weak_symbols`: `.weak` symbols in the
/// module, as [`weak::rust_ptx_linkage`] gives them): `Err` with what is
/// wrong unless every N of [`SPECIALIZED_N`] is one `.visible .entry` and
/// nothing is `.weak`.
pub fn rust_linkage_reading(
    kernels: &[weak::PtxFunction],
    weak_symbols: usize,
) -> std::result::Result<String, String> {
    let mut wrong = Vec::new();
    for &symbol in SPECIALIZED_SYMBOLS {
        let found: Vec<&weak::PtxFunction> = kernels.iter().filter(|f| f.name == symbol).collect();
        match found[..] {
            [f] if f.entry && f.linkage == weak::Linkage::Visible => {}
            [f] => wrong.push(format!(
                "{symbol} is {:?} {}",
                f.linkage,
                if f.entry { ".entry" } else { ".func" }
            )),
            _ => wrong.push(format!("{symbol} is declared {} times", found.len())),
        }
    }
    if weak_symbols != 0 {
        wrong.push(format!("{weak_symbols} symbol(s) of the module are .weak"));
    }
    if !wrong.is_empty() {
        return Err(wrong.join("; "));
    }
    Ok(format!(
        "Rust: the kernels crate is one crate compiled to one PTX module, where each of the {} \
         instantiations is its own .visible .entry under its own name and no symbol is .weak: no other \
         unit emits a copy, so there is nothing for a linker to merge. (On the host, rustc shares a \
         generic's instantiations between crates through its own metadata, not through weak symbols.)",
        SPECIALIZED_SYMBOLS.len()
    ))
}

/// The linking section from `evidence` (see [`weak::gather`]) and the
/// lesson's own PTX, and the failures it found (a linked kernel whose
/// outputs differ from the CPU's).
pub fn linkage_section(evidence: &weak::Evidence, rust_ptx: &str) -> (Section, Vec<Failure>) {
    let mut section = Section::new("Linking: one copy of each instantiation");
    let mut failures = Vec::new();
    section.line(format!(
        "NVRTC {}.{} with -rdc=true for {}: two units ({}), each instantiating dot_linked<N> at N = {} and, in the \
         control pair, defining the ordinary function dot4_plain.",
        evidence.nvrtc.0,
        evidence.nvrtc.1,
        evidence.arch,
        evidence.units.iter().map(|u| u.unit.as_str()).collect::<Vec<_>>().join(" and "),
        list(&weak::LINKED_N)
    ));
    for u in &evidence.units {
        section.line(format!("{} PTX: {}", u.unit, weak::ptx_line(u)));
        match weak::elf_line(u) {
            Some(line) => section.line(format!(
                "{} ELF symbols (ptxas -c -arch={}): {line}",
                u.unit, evidence.arch
            )),
            None => section.line(format!(
                "{} ELF symbols: not read (ptxas not found on the PATH or in $CUDA_HOME/bin)",
                u.unit
            )),
        }
    }
    let declared = weak::declarations_wrong(&evidence.units);
    let mut reading = Vec::new();
    if !declared.is_empty() {
        reading.push(format!(
            "The declarations do not show what the lesson expects: {}.",
            declared.join("; ")
        ));
        failures.push(Failure {
            kernel: "dot_linked (the units' PTX)",
            detail: declared.join("; "),
        });
    }
    match &evidence.linked {
        Ok(linked) => {
            section.line(format!(
                "linked by the driver (cuLinkCreate, cuLinkAddData, cuLinkComplete): {}",
                linked
                    .definitions
                    .iter()
                    .map(|(n, c)| format!("dot_linked<{n}>: {c} definition(s)"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            let want = weak::linked_reference();
            for (unit, got) in &linked.outputs {
                section.line(format!(
                    "{unit}(a = {:?}, b = {:?}) = {got:?} (CPU: {want:?})",
                    weak::LINKED_INPUTS.0,
                    weak::LINKED_INPUTS.1
                ));
                if *got != want {
                    failures.push(Failure {
                        kernel: "dot_linked (the linked units)",
                        detail: format!("{unit}: got {got:?}, the CPU {want:?}"),
                    });
                }
            }
            match &evidence.control {
                Err(log) => section.line(format!(
                    "control (dot4_plain in both units): refused by the driver's linker: {log}"
                )),
                Ok(()) => section.line("control (dot4_plain in both units): linked (not refused)"),
            }
            reading.push(match linkage_reading(linked, &evidence.control) {
                Ok(text) => text,
                Err(wrong) => {
                    failures.push(Failure {
                        kernel: "dot_linked (the linked units)",
                        detail: wrong.clone(),
                    });
                    format!("The link does not show what the lesson expects: {wrong}.")
                }
            });
        }
        Err(log) => {
            section.line(format!(
                "the pair without the control: refused by the driver's linker: {log}"
            ));
            failures.push(Failure {
                kernel: "dot_linked (the linked units)",
                detail: format!("the driver's linker refused the two units: {log}"),
            });
        }
    }
    let (mut kernels, weak_symbols) = weak::rust_ptx_linkage(rust_ptx);
    // The lesson's order (the PTX's is rustc's); any other after.
    kernels.sort_by_key(|f| {
        SPECIALIZED_SYMBOLS
            .iter()
            .position(|s| *s == f.name)
            .unwrap_or(usize::MAX)
    });
    section.line(format!(
        "kernels-gpu's PTX: {}; .weak symbols in the module: {weak_symbols}",
        kernels
            .iter()
            .map(weak::declaration)
            .collect::<Vec<_>>()
            .join(", ")
    ));
    reading.push(match rust_linkage_reading(&kernels, weak_symbols) {
        Ok(text) => text,
        Err(wrong) => {
            failures.push(Failure {
                kernel: "dot_specialized (kernels-gpu's PTX)",
                detail: wrong.clone(),
            });
            format!("Rust's PTX does not show what the lesson expects: {wrong}.")
        }
    });
    section.reading = Some(reading.join(" "));
    (section, failures)
}

/// The lengths of `ns` whose ratio (runtime / specialized time) passes
/// `keep`, as `2, 4`.
fn lengths_where(ratios: &[(usize, f64)], keep: impl Fn(f64) -> bool) -> Vec<usize> {
    ratios
        .iter()
        .filter(|&&(_, r)| keep(r))
        .map(|&(n, _)| n)
        .collect()
}

/// `2, 4` from `[2, 4]`.
fn list(ns: &[usize]) -> String {
    ns.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The timed section's reading from the measured `ratios` (N, runtime /
/// specialized median time) and dot_runtime's loops (`fma_per_loop` of its
/// PTX body).
pub fn timed_reading(ratios: &[(usize, f64)], runtime_loops: &[usize]) -> String {
    let mut text = format!(
        "Bytes counted: each dot reads N floats of x and of y and writes one (8 N + 4 bytes). Runtime / specialized \
         time: {}.",
        ratios
            .iter()
            .map(|(n, r)| format!("N = {n}: {r:.2}x"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let slower = lengths_where(ratios, |r| r > 1.05);
    let level = lengths_where(ratios, |r| (r - 1.0).abs() <= 0.05);
    let faster = lengths_where(ratios, |r| r < 0.95);
    for (ns, what) in [
        (&slower, "dot_runtime is over 5% slower"),
        (&level, "the two are within 5%"),
        (&faster, "dot_runtime is over 5% faster"),
    ] {
        if !ns.is_empty() {
            text += &format!(" At N = {}, {what}.", list(ns));
        }
    }
    text += " Both compute the same bits (checked); what differs is the loop. The specialized bodies have none: \
             all 2 N loads of a dot can be in flight at once.";
    // LLVM's runtime unrolling: a main loop of u terms a trip, entered only
    // when n >= u, then a remainder loop of one term for n mod u.
    if let [main, 1] = runtime_loops
        && *main > 1
    {
        let u = *main;
        let ns: Vec<usize> = ratios.iter().map(|&(n, _)| n).collect();
        let remainder_only: Vec<usize> = ns.iter().copied().filter(|&n| n < u).collect();
        let main_only: Vec<usize> = ns
            .iter()
            .copied()
            .filter(|&n| n >= u && n % u == 0)
            .collect();
        let both: Vec<usize> = ns
            .iter()
            .copied()
            .filter(|&n| n > u && n % u != 0)
            .collect();
        text += &format!(
            " dot_runtime's PTX has a main loop of {u} terms a trip and a remainder loop of one term a trip, each \
             trip waiting for its own loads."
        );
        for (group, what) in [
            (&remainder_only, "run only in the remainder loop"),
            (&main_only, "run only in the main loop"),
            (&both, "run in both"),
        ] {
            if !group.is_empty() {
                text += &format!(" N = {} {what}.", list(group));
            }
        }
        if !slower.is_empty() && slower == remainder_only {
            text += " The lengths where dot_runtime is slower are exactly those that never enter the main loop.";
        }
    } else {
        text += &format!(
            " dot_runtime's PTX has {} loop(s), {} fma a trip.",
            runtime_loops.len(),
            list(runtime_loops)
        );
    }
    text
}

/// The lesson's sizes: the input buffers (x and y), which at length N hold
/// `input_floats / N` dots of structure-of-arrays layout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sizes {
    /// Floats in each of x and y.
    pub input_floats: usize,
    /// Dots each timed launch runs, per length in [`SPECIALIZED_N`] order.
    pub timed_dots: Vec<usize>,
    /// Dots of the correctness runs.
    pub check_dots: usize,
}

impl Sizes {
    /// A full run on `info`'s GPU: x and y grown from [`SEED_INPUT_BYTES`]
    /// until each is at least 4x the L2, every length timed over all of
    /// them; `quick`: what the checks need, timed at the check size.
    pub fn new(info: &crate::gpu::DeviceInfo, quick: bool) -> Sizes {
        let input_floats = if quick {
            CHECK_DOTS * MAX_SPECIALIZED_N
        } else {
            grown(SEED_INPUT_BYTES, 1, info.l2_bytes) / size_of::<f32>()
        };
        Sizes {
            input_floats,
            timed_dots: SPECIALIZED_N
                .iter()
                .map(|&n| if quick { CHECK_DOTS } else { input_floats / n })
                .collect(),
            check_dots: CHECK_DOTS,
        }
    }

    /// Dots a timed launch at length `n` runs.
    pub fn dots(&self, n: usize) -> usize {
        SPECIALIZED_N
            .iter()
            .position(|&m| m == n)
            .map_or(self.input_floats / n, |i| self.timed_dots[i])
            .min(self.out_floats())
    }

    /// Floats of the output: one per dot of the shortest length.
    pub fn out_floats(&self) -> usize {
        self.timed_dots
            .iter()
            .copied()
            .max()
            .unwrap_or(0)
            .max(self.check_dots)
    }
}

impl LessonSizes for Sizes {
    fn for_gpu(info: &crate::gpu::DeviceInfo, quick: bool) -> Result<Sizes> {
        Ok(Sizes::new(info, quick))
    }
    fn streams(&self) -> Vec<Stream> {
        vec![Stream::of::<f32>("x, y", self.input_floats)]
    }

    fn device_bytes(&self) -> usize {
        (2 * self.input_floats + self.out_floats()) * size_of::<f32>()
    }
}

/// The CUDA C twins.
pub const CUDA_C_SOURCE: &str = include_str!("specialize.cu");

/// The CUDA C twins with `dot_specialized_N` instantiated for each N of
/// `lengths` (the lesson compiles the ones of [`SPECIALIZED_N`]): what
/// `cargo xtask specialize-cost` times NVRTC on.
pub fn cuda_c_with(lengths: &[usize]) -> String {
    let instances: String = lengths
        .iter()
        .map(|n| format!("SPECIALIZED({n}) "))
        .collect();
    format!(
        "#define THREADS_PER_BLOCK {THREADS_PER_BLOCK}\n#define SPECIALIZED_INSTANCES {instances}\n{CUDA_C_SOURCE}"
    )
}

/// The specialize lesson as `lab` runs it.
pub struct SpecializeLesson;

impl lesson::Lesson for SpecializeLesson {
    const NAME: &'static str = "specialize";
    const ABOUT: &'static str = "Chapter 19.3: a dot product specialized by const generics (N = 2, 4, 8, 16): one body per N in the binary and the PTX, timed against N at run time; and how a linker keeps one copy of each instantiation.";
    type Kernel = Kernel;
    type Sizes = Sizes;
    type Twins<'g> = Specialize<'g>;

    fn block_sizes() -> serde_json::Value {
        json!({"all": THREADS_PER_BLOCK})
    }

    /// What NVRTC compiles: the block size and the instances to make as
    /// `#define`s, then the twins.
    fn cuda_c() -> String {
        cuda_c_with(SPECIALIZED_N)
    }

    /// Every kernel checked at every length it runs; then the host symbols,
    /// the PTX bodies and the timings.
    fn run(
        gpu: &Gpu,
        sizes: &Sizes,
        context: Context,
        options: &RunOptions<'_>,
    ) -> Result<Outcome<Box<dyn lesson::Report>>> {
        let plan = options.plan;
        let quick = options.quick;
        let mut lesson = Specialize::new(gpu, sizes)?;
        let mut failures = Vec::new();
        for &n in SPECIALIZED_N {
            for k in [Kernel::Specialized(n), Kernel::Runtime] {
                failures.extend(lesson.check(k, n, CHECK_DOTS)?.0);
                // One dot: the smallest grid, the guard in every other thread.
                failures.extend(lesson.check(k, n, 1)?.0);
            }
        }
        let examples = binary::examples();
        for e in &examples {
            if e.got != e.want {
                failures.push(Failure {
                    kernel: "host dot_specialized",
                    detail: format!("N = {}: got {}, want {}", e.n, e.got, e.want),
                });
            }
        }
        let exe = std::env::current_exe().map_err(|e| Error::Tool(format!("current_exe: {e}")))?;
        let symbols = binary::host_symbols(&exe)?;
        let host_text = host_reading(&symbols);
        if let Err(detail) = &host_text {
            failures.push(Failure {
                kernel: "host dot_specialized",
                detail: format!("{}: {detail}", exe.display()),
            });
        }
        // Part 4 (gathered here, so its failures stop the run with the
        // others): the linker's side, from NVRTC's units and the driver's
        // linker.
        let linking = match weak::gather(gpu) {
            Ok(evidence) => {
                let (section, found) = linkage_section(&evidence, PTX);
                failures.extend(found);
                (section, serde_json::to_value(&evidence).unwrap_or_default())
            }
            Err(e @ Error::NvrtcMissing { .. }) => {
                let mut section = Section::new("Linking: one copy of each instantiation");
                section.line(format!(
                    "not shown: the two CUDA C units are compiled by NVRTC, and {e}"
                ));
                (section, serde_json::Value::Null)
            }
            Err(e) => return Err(e),
        };
        if !failures.is_empty() {
            return Ok(Outcome::Failed(failures));
        }

        // Part 1: the host's instantiations, from the running binary.
        let mut host = Section::new("Host: one function per N, in the binary's symbol table");
        for e in &examples {
            let show = |v: &[f32]| {
                v.iter()
                    .map(|x| format!("{x}"))
                    .collect::<Vec<_>>()
                    .join(",")
            };
            host.line(format!(
                "dot_specialized::<{}>([{}], [{}]) = {} (expected {})",
                e.n,
                show(&e.a),
                show(&e.b),
                e.got,
                e.want
            ));
        }
        host.line(format!(
            "{} (symbol table, like nm --demangle):",
            exe.display()
        ));
        for s in &symbols {
            host.line(format!(
                "  N = {:<2} {:016x} {:>4} bytes  {}  ({})",
                if s.n == 0 {
                    "?".to_string()
                } else {
                    s.n.to_string()
                },
                s.address,
                s.size,
                s.demangled,
                s.mangled
            ));
        }
        host.reading = host_text.ok();

        // Part 2: the GPU's bodies, from the PTX.
        let mut ptx = Section::new("GPU: one PTX entry per N, fully unrolled");
        let bodies: Vec<BodyEvidence> =
            Kernel::ALL.iter().map(|&k| body_evidence(PTX, k)).collect();
        let arch = format!(
            "sm_{}{}",
            gpu.info.compute_capability.0, gpu.info.compute_capability.1
        );
        let mut sass_counts = Vec::new();
        for b in &bodies {
            let sass = crate::asm::sass(PTX, &arch, b.symbol)?
                .map(|text| crate::asm::sass_instructions(&text));
            sass_counts.push(json!({"symbol": b.symbol, "arch": arch, "sass_instructions": sass}));
            ptx.line(format!(
                "{:<20} {:>3} PTX instructions, {:>2} fma, {:>2} loads, {} loop(s); SASS ({arch}): {}",
                b.symbol,
                b.instructions,
                b.fma,
                b.loads,
                b.backward_branches,
                sass.map_or_else(
                    || "not shown (ptxas and cuobjdump not found)".to_string(),
                    |n| format!("{n} instructions")
                )
            ));
        }
        let wrong = specialization_holds(&bodies);
        ptx.reading = Some(ptx_reading(&bodies, &wrong));

        // Part 3: timed.
        let mut timed = Section::new(format!(
            "Timed: specialized against runtime N, inputs of {} MiB each",
            (sizes.input_floats * size_of::<f32>()) >> 20
        ));
        if quick {
            timed.title = "Timed (quick sizes: not a measurement)".to_string();
        }
        let mut ratios = Vec::new();
        for &n in SPECIALIZED_N {
            let count = sizes.dots(n);
            let mut row = |k: Kernel, key: String, what: String| -> Result<f64> {
                let t = lesson.time(k, n, count, plan)?;
                let ms = t.median_ms();
                timed.rows.push(
                    Row::new(key, what, t)
                        .bytes(bytes(n, count))
                        .flop(flop(n, count)),
                );
                Ok(ms)
            };
            let s = row(
                Kernel::Specialized(n),
                format!("dot_specialized_{n}"),
                format!("{count} dots of {n}, N at compile time"),
            )?;
            let r = row(
                Kernel::Runtime,
                format!("dot_runtime/{n}"),
                format!("{count} dots of {n}, N = {n} an argument"),
            )?;
            ratios.push((n, r / s));
        }
        timed.reading = Some(timed_reading(
            &ratios,
            &bodies[Kernel::Runtime.index()].fma_per_loop,
        ));

        SectionReport::passed(
            context,
            Findings {
                sections: vec![host, ptx, timed, linking.0],
                facts: json!({
                    "linkage": linking.1,
                    "examples": examples, "host_symbols": symbols, "ptx_bodies": bodies, "ptx_holds": wrong.is_empty(), "sass": sass_counts,
                    "runtime_over_specialized": ratios.iter().map(|(n, r)| json!({"n": n, "ratio": r})).collect::<Vec<_>>(),
                }),
            },
        )
    }

    fn twins<'g>(gpu: &'g Gpu, sizes: &Sizes) -> Result<Specialize<'g>> {
        Specialize::new(gpu, sizes)
    }

    fn compare_notes(_sizes: &Sizes) -> Vec<String> {
        vec![format!(
            "dot_runtime is timed at N = {RUNTIME_COMPARED_N} here (its longest loop); each specialized kernel at its own N."
        )]
    }
}
