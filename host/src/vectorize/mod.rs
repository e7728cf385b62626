//! The vectorize lesson on the host (chapter 19.1): the main-loop-plus-
//! remainder trace counted by a host mirror at the seed's sizes, the width
//! trap shown from the types, the PTX and the SASS, every add checked bit
//! for bit, and the 16-byte adds timed against the one-element adds.

pub mod reference;

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use half::f16;
use kernels_gpu::vectorize::*;
use serde_json::json;

use crate::check::Failure;
use crate::compare::Kernels;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::lesson::{self, CompareOutcome, Findings, Outcome, Row, Section, Twinned};
use crate::ptx::{PTX, PtxMix, entry_body};
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

    /// Elements of the timed add: one less than the buffer holds beside the
    /// check's guard, which leaves a tail in every type, so the timed launch
    /// runs its tail too.
    pub fn timed_elems(self) -> usize {
        (TIMED_BUFFER_BYTES - GUARD_BYTES) / self.size() - 1
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

impl Kernel {
    /// Every kernel, in report order: per type, scalar then vector.
    pub const ALL: [Kernel; 6] = [
        Kernel::Scalar(Dtype::F32),
        Kernel::Vec16(Dtype::F32),
        Kernel::Scalar(Dtype::F64),
        Kernel::Vec16(Dtype::F64),
        Kernel::Scalar(Dtype::F16),
        Kernel::Vec16(Dtype::F16),
    ];

    /// The exported symbol (the CUDA C twin's too).
    pub fn symbol(self) -> &'static str {
        match self {
            Kernel::Scalar(Dtype::F32) => "add_scalar_f32",
            Kernel::Scalar(Dtype::F64) => "add_scalar_f64",
            Kernel::Scalar(Dtype::F16) => "add_scalar_f16",
            Kernel::Vec16(Dtype::F32) => "add_vec16_f32",
            Kernel::Vec16(Dtype::F64) => "add_vec16_f64",
            Kernel::Vec16(Dtype::F16) => "add_vec16_f16",
        }
    }

    /// The element type.
    pub fn dtype(self) -> Dtype {
        match self {
            Kernel::Scalar(d) | Kernel::Vec16(d) => d,
        }
    }

    /// The kernel exported as `symbol`.
    pub fn of_symbol(symbol: &str) -> Option<Kernel> {
        Kernel::ALL.into_iter().find(|k| k.symbol() == symbol)
    }

    /// The launch over `n` elements: the vector add needs max(n / W, n % W)
    /// threads, the scalar add n.
    pub fn launch_config(self, n: usize) -> LaunchConfig {
        let threads = match self {
            Kernel::Scalar(_) => n,
            Kernel::Vec16(d) => (n / d.width()).max(n % d.width()),
        };
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

/// The lesson's three byte buffers (a, b, out) of TIMED_BUFFER_BYTES on
/// one GPU, holding whichever element type was last loaded.
pub struct Vectorize<'g> {
    gpu: &'g Gpu,
    kernels: Kernels,
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
    pub fn new(gpu: &'g Gpu) -> Result<Self> {
        gpu.require_free_memory(
            3 * TIMED_BUFFER_BYTES,
            "the vectorize lesson's three buffers",
        )?;
        let symbols: Vec<&str> = Kernel::ALL.iter().map(|k| k.symbol()).collect();
        let alloc = || -> Result<CudaSlice<u8>> {
            // SAFETY: any bytes are valid u8; inputs are uploaded and the
            // output poisoned before anything is read.
            unsafe { gpu.stream.alloc::<u8>(TIMED_BUFFER_BYTES) }.map_err(|source| Error::Driver {
                call: "cuMemAllocAsync",
                source,
            })
        };
        Ok(Vectorize {
            gpu,
            kernels: Kernels::new(gpu, &symbols)?,
            a: alloc()?,
            b: alloc()?,
            out: alloc()?,
            loaded: None,
        })
    }

    /// Loads the CUDA C twins from NVRTC's `ptx`.
    ///
    /// # Errors
    /// The driver refusing the PTX, or a kernel missing from it.
    pub fn load_twins(&mut self, ptx: &str) -> Result<()> {
        self.kernels.load_twins(self.gpu, ptx)
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
    /// use.
    ///
    /// # Errors
    /// [`Error::Size`] when `n` elements (and the check's guard) do not fit
    /// the buffers; a launch error charged to the kernel.
    pub fn launch(&mut self, kernel: Kernel, n: usize) -> Result<()> {
        fits(kernel.dtype(), n)?;
        let i = Kernel::ALL
            .iter()
            .position(|&k| k == kernel)
            .expect("a kernel of the lesson");
        let f = self.kernels.active(i).clone();
        let n64 = n as u64;
        let mut builder = self.gpu.stream.launch_builder(&f);
        builder
            .arg(&self.a)
            .arg(&self.b)
            .arg(&mut self.out)
            .arg(&n64);
        // SAFETY: the three buffers hold n elements of the kernel's type
        // (`fits` above), are distinct, and the grid covers the kernel's
        // threads for n.
        unsafe { builder.launch(kernel.launch_config(n)) }.map_err(|source| {
            Error::KernelFault {
                kernel: kernel.symbol().to_string(),
                source,
            }
        })?;
        Ok(())
    }

    /// Runs `kernel` over `n` elements into a poisoned output (0xFF bytes,
    /// NaN in every type) and checks every element's bits against the
    /// reference, and that the GUARD_BYTES after the last element are still
    /// poison (a stale width or a wrong tail index writes there); returns the
    /// failure (if any) and the output's bits.
    ///
    /// # Errors
    /// As [`Vectorize::launch`]; a fault charged to the kernel; driver
    /// errors.
    pub fn check(&mut self, kernel: Kernel, n: usize) -> Result<(Option<Failure>, Vec<u64>)> {
        let d = kernel.dtype();
        fits(d, n)?;
        self.prepare(d, n)?;
        let bytes = n * d.size();
        // 0xFF bytes: a NaN in every type, so an element never written fails.
        self.gpu
            .fill_bytes(&mut self.out.slice_mut(..bytes + GUARD_BYTES), 0xFF)?;
        self.launch(kernel, n)?;
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
        if let Some(i) = got[bytes..].iter().position(|&b| b != 0xFF) {
            let failure = Failure {
                kernel: kernel.symbol(),
                detail: format!(
                    "n = {n}: wrote past the last element, at byte {} after it",
                    i
                ),
            };
            return Ok((Some(failure), reference::bits_of(d, &got[..bytes])));
        }
        let got = reference::bits_of(d, &got[..bytes]);
        let want = reference::sum_bits(d, n);
        let failure = got.iter().zip(&want).position(|(g, w)| g != w).map(|i| Failure {
            kernel: kernel.symbol(),
            detail: format!(
                "n = {n}: wrong at index {i}: got {}, want {} (bit-exact: one correctly rounded add)",
                reference::show(d, got[i]),
                reference::show(d, want[i])
            ),
        });
        Ok((failure, got))
    }

    /// Times `kernel` over `n` elements with `plan`.
    ///
    /// # Errors
    /// As [`Vectorize::launch`].
    pub fn time(&mut self, kernel: Kernel, n: usize, plan: Plan) -> Result<Timing> {
        fits(kernel.dtype(), n)?;
        self.prepare(kernel.dtype(), n)?;
        let gpu = self.gpu;
        timing::time_kernel(gpu, kernel.symbol(), plan, || self.launch(kernel, n))
    }
}

/// Bytes after the last element a check requires to stay untouched: one
/// vector.
pub const GUARD_BYTES: usize = VECTOR_BYTES;

/// Fails with [`Error::Size`] unless `n` elements of `dtype` and the guard
/// fit one buffer.
fn fits(dtype: Dtype, n: usize) -> Result<()> {
    if n * dtype.size() + GUARD_BYTES > TIMED_BUFFER_BYTES {
        return Err(Error::Size(format!(
            "{n} {} elements do not fit the vectorize lesson's {TIMED_BUFFER_BYTES}-byte buffers",
            dtype.name()
        )));
    }
    Ok(())
}

impl Twinned for Vectorize<'_> {
    fn kernels(&mut self) -> &mut Kernels {
        &mut self.kernels
    }

    fn check(&mut self, symbol: &'static str) -> Result<(Vec<Failure>, Vec<u64>)> {
        let k = Kernel::of_symbol(symbol).expect("a kernel of the lesson");
        let (failure, got) = Vectorize::check(self, k, CHECK_ELEMS)?;
        Ok((failure.into_iter().collect(), got))
    }

    fn time(&mut self, symbol: &'static str, plan: Plan) -> Result<Timing> {
        let k = Kernel::of_symbol(symbol).expect("a kernel of the lesson");
        Vectorize::time(self, k, k.dtype().timed_elems(), plan)
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

/// The lesson's sizes for the context.
pub fn sizes_json(quick: bool) -> serde_json::Value {
    let timed: Vec<serde_json::Value> = Dtype::ALL
        .iter()
        .map(|d| json!({"dtype": d.name(), "elems": if quick { CHECK_ELEMS } else { d.timed_elems() }}))
        .collect();
    json!({"traced": TRACED_SIZES, "check_elems": CHECK_ELEMS, "timed": timed, "buffer_bytes": TIMED_BUFFER_BYTES})
}

/// Every kernel checked at the traced sizes and the odd check size, and the
/// width trap's PTX and SASS checked; then the trace and the timings
/// (`quick`: at the check size).
///
/// # Errors
/// [`Error::OutOfMemory`] before allocating; launch, fault and driver
/// errors.
pub fn run(gpu: &Gpu, plan: Plan, quick: bool) -> Result<Outcome> {
    let mut lesson = Vectorize::new(gpu)?;
    let mut failures = Vec::new();
    for k in Kernel::ALL {
        for n in TRACED_SIZES.into_iter().chain([CHECK_ELEMS]) {
            failures.extend(lesson.check(k, n)?.0);
        }
    }

    // The width trap, from the types, the PTX and the SASS; SASS that does
    // not show one 128-bit load per input and one 128-bit store is a failed
    // check of the lesson's claim.
    let (trap, evidence) = width_trap(gpu, &mut failures);
    if !failures.is_empty() {
        return Ok(Outcome::Failed(failures));
    }

    // The seed's trace, counted by the host mirror.
    let mut trace_section = Section::new("Main loop plus remainder, float4 (host mirror, counted)");
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
         were checked bit for bit at {}, {} and {} elements.",
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

    // Timed.
    let buffer_mib = TIMED_BUFFER_BYTES >> 20;
    let mut timed = Section::new(if quick {
        format!("Timed (--quick: {CHECK_ELEMS} elements, cache-resident; not a DRAM figure)")
    } else {
        format!("Timed: scalar against 16-byte adds, 3 buffers of {buffer_mib} MiB")
    });
    for k in Kernel::ALL {
        let d = k.dtype();
        let n = if quick { CHECK_ELEMS } else { d.timed_elems() };
        let t = lesson.time(k, n, plan)?;
        let what = match k {
            Kernel::Scalar(_) => format!("{n} x {}, one per thread", d.name()),
            Kernel::Vec16(_) => format!("{n} x {}, one {} per thread", d.name(), d.vector_name()),
        };
        timed
            .rows
            .push(Row::new(k.symbol(), what, t).bytes((3 * n * d.size()) as f64));
    }
    let ms = |k: Kernel| {
        timed
            .rows
            .iter()
            .find(|r| r.key == k.symbol())
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
        "Bytes counted: a and b read once, out written once (3 x n x element size). Scalar time / vector time: {}.",
        shown.join(", ")
    );
    let by_width = |d: Dtype| {
        ratios
            .iter()
            .find(|(x, _)| *x == d)
            .map_or(f64::NAN, |r| r.1)
    };
    if by_width(Dtype::F16) > by_width(Dtype::F32) && by_width(Dtype::F32) > by_width(Dtype::F64) {
        reading.push_str(
            " The narrower the element, the more the one-element-per-thread add loses: it moves the same bytes in \
             more, narrower accesses.",
        );
    }
    timed.reading = Some(reading);

    Ok(Outcome::Passed(Findings {
        sections: vec![trace_section, trap, timed],
        facts: json!({"traces": traces, "width_trap": evidence}),
    }))
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

/// What NVRTC compiles: the block size as a `#define`, then the twins.
pub fn cuda_c_program() -> String {
    format!("#define THREADS_PER_BLOCK {THREADS_PER_BLOCK}\n{CUDA_C_SOURCE}")
}

/// Every kernel beside its twin (see [`lesson::compare_twins`]).
pub fn compare(gpu: &Gpu, c_ptx: &str, trials: u32, plan: Plan) -> Result<CompareOutcome> {
    let mut lesson = Vectorize::new(gpu)?;
    lesson.load_twins(c_ptx)?;
    lesson::compare_twins(&mut lesson, c_ptx, trials, plan)
}

/// The lesson as `lab` runs it.
pub const LESSON: lesson::Lesson = lesson::Lesson {
    name: "vectorize",
    sizes: sizes_json,
    block_sizes: || json!({"all": THREADS_PER_BLOCK}),
    run,
    cuda_c: cuda_c_program,
    compare,
};
