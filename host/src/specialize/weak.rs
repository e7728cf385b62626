//! The weak-symbol point of chapter 19.3, from real artifacts. A C++
//! template instantiated in several translation units is emitted in each of
//! them as a weak symbol (COMDAT on the host, `.weak` in PTX), and the
//! linker keeps one definition; an ordinary function defined in two units
//! is a duplicate definition, which the linker refuses.
//!
//! The GPU side of that, shown here: [`LINKAGE_SOURCE`] compiled by NVRTC
//! as two units (`unit_a`, `unit_b`) with relocatable device code, each
//! instantiating `dot_linked<4>` and `dot_linked<2>`. In their PTX the
//! instantiations are `.weak .func` (an ordinary function `.visible
//! .func`); ptxas keeps that as an ELF symbol of binding WEAK (GLOBAL for
//! the ordinary one) in each relocatable cubin; the driver's linker
//! (`cuLinkCreate`/`cuLinkComplete`) joins the two units into one image that
//! holds one definition of each instantiation, and refuses the control pair
//! that defines `dot4_plain` twice.
//!
//! Rust has no such merge to do for the lesson's kernels: the kernels crate
//! is one crate compiled to one PTX module, where each `dot_specialized_N`
//! is a `.visible .entry` and no symbol is `.weak` ([`rust_ptx_linkage`]).

use std::ffi::CString;

use serde::Serialize;

use crate::error::{Error, Result};

/// One unit of the pair: a template dot instantiated at N = 4 and 2, called
/// from the kernel `UNIT_KERNEL` (a `#define`).
pub const LINKAGE_SOURCE: &str = include_str!("linkage.cu");

/// The two units' kernels, one per unit.
pub const UNITS: [&str; 2] = ["unit_a", "unit_b"];

/// The source of unit `kernel`; with `plain`, each unit also defines the
/// ordinary function `dot4_plain` (the control).
pub fn unit_source(kernel: &str, plain: bool) -> String {
    format!(
        "#define UNIT_KERNEL {kernel}\n{}{LINKAGE_SOURCE}",
        if plain {
            "#define PLAIN_IN_EVERY_UNIT\n"
        } else {
            ""
        }
    )
}

/// How a PTX function or kernel is declared to the linker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Linkage {
    /// `.weak`: one definition kept among several (a template
    /// instantiation).
    Weak,
    /// `.visible`: an ordinary external definition; two are an error.
    Visible,
    /// `.extern`: declared here, defined in another unit.
    Extern,
    /// No directive: internal to its module.
    Internal,
}

/// One function (`.func`) or kernel (`.entry`) a PTX module declares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PtxFunction {
    /// Its (mangled) name.
    pub name: String,
    /// Its linkage directive.
    pub linkage: Linkage,
    /// A kernel (`.entry`) rather than a device function (`.func`).
    pub entry: bool,
}

/// Every function and kernel `ptx` declares, once each (a forward
/// declaration and its definition are one), in order of first appearance.
pub fn ptx_functions(ptx: &str) -> Vec<PtxFunction> {
    let mut out: Vec<PtxFunction> = Vec::new();
    for line in ptx.lines() {
        let mut rest = line.trim();
        let mut linkage = Linkage::Internal;
        for (word, l) in [
            (".weak", Linkage::Weak),
            (".visible", Linkage::Visible),
            (".extern", Linkage::Extern),
        ] {
            if let Some(r) = rest.strip_prefix(word) {
                linkage = l;
                rest = r.trim_start();
            }
        }
        let entry = if let Some(r) = rest.strip_prefix(".entry") {
            rest = r;
            true
        } else if let Some(r) = rest.strip_prefix(".func") {
            rest = r;
            false
        } else {
            continue;
        };
        rest = rest.trim_start();
        // A return value comes first, in parentheses: `(.param .b32 x)`.
        if rest.starts_with('(') {
            let Some(close) = rest.find(')') else {
                continue;
            };
            rest = rest[close + 1..].trim_start();
        }
        let name: String = rest
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != '(' && *c != ';')
            .collect();
        if name.is_empty() || out.iter().any(|f| f.name == name) {
            continue;
        }
        out.push(PtxFunction {
            name,
            linkage,
            entry,
        });
    }
    out
}

/// Whether a mangled C++ name is an instantiation of `dot_linked` (the
/// Itanium mangling spells the template argument: `ILi4E` for `<4>`) and
/// at which N.
pub fn dot_linked_n(name: &str) -> Option<usize> {
    let rest = name.strip_prefix("_Z10dot_linkedILi")?;
    rest.split_once("EE")?.0.parse().ok()
}

/// The PTX functions of `ptx` with their linkage, for the lesson's kernels
/// (`kernels-gpu`): the `dot_specialized_*` kernels, and how many symbols
/// of the module are `.weak`.
pub fn rust_ptx_linkage(ptx: &str) -> (Vec<PtxFunction>, usize) {
    let all = ptx_functions(ptx);
    let weak = all.iter().filter(|f| f.linkage == Linkage::Weak).count();
    (
        all.into_iter()
            .filter(|f| f.name.starts_with("dot_specialized_"))
            .collect(),
        weak,
    )
}

/// The two units' PTX, compiled by NVRTC for `sm_XY` (`cc`) with
/// relocatable device code; with `plain`, the control pair.
///
/// # Errors
/// [`Error::NvrtcMissing`] or [`Error::Nvrtc`] as [`crate::nvrtc`] gives
/// them.
pub fn unit_ptx(cc: (i32, i32), plain: bool) -> Result<Vec<String>> {
    let nvrtc = crate::nvrtc::library()?;
    UNITS
        .iter()
        .map(|unit| {
            nvrtc.compile_with(
                &unit_source(unit, plain),
                &format!("{unit}.cu"),
                &format!("sm_{}{}", cc.0, cc.1),
                &["--relocatable-device-code=true"],
            )
        })
        .collect()
}

/// An ELF symbol's binding, as `readelf -s` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Binding {
    /// STB_WEAK.
    Weak,
    /// STB_GLOBAL.
    Global,
    /// STB_LOCAL.
    Local,
}

/// One defined function of a cubin (an ELF file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CubinFunction {
    /// Its symbol.
    pub name: String,
    /// Its binding.
    pub binding: Binding,
    /// Its size in bytes.
    pub size: u64,
}

/// The functions a cubin defines (text symbols with a definition), from its
/// ELF symbol table.
///
/// # Errors
/// [`Error::Tool`] when `cubin` is not an ELF file `object` can read.
pub fn cubin_functions(cubin: &[u8]) -> Result<Vec<CubinFunction>> {
    use object::{Object, ObjectSymbol, SymbolKind};
    let file =
        object::File::parse(cubin).map_err(|e| Error::Tool(format!("reading a cubin: {e}")))?;
    Ok(file
        .symbols()
        .filter(|s| s.kind() == SymbolKind::Text && s.is_definition())
        .filter_map(|s| {
            let name = s.name().ok()?.to_string();
            let binding = if s.is_weak() {
                Binding::Weak
            } else if s.is_global() {
                Binding::Global
            } else {
                Binding::Local
            };
            Some(CubinFunction {
                name,
                binding,
                size: s.size(),
            })
        })
        .collect())
}

/// `ptx` assembled by ptxas for `arch` (`sm_75`) as a relocatable object
/// (`ptxas -c`, what `nvcc -rdc` makes of each unit): `None` where ptxas is
/// not found.
///
/// # Errors
/// [`Error::Tool`] when ptxas fails or its output cannot be read.
pub fn relocatable_cubin(ptx: &str, arch: &str) -> Result<Option<Vec<u8>>> {
    let Some(ptxas) = crate::asm::find_tool("ptxas") else {
        return Ok(None);
    };
    static SEQUENCE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let unique = SEQUENCE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("lab-weak-{}-{unique}", std::process::id()));
    let fail = |what: String| Error::Tool(what);
    std::fs::create_dir_all(&dir).map_err(|e| fail(format!("{}: {e}", dir.display())))?;
    let (src, bin) = (dir.join("unit.ptx"), dir.join("unit.cubin"));
    let result = std::fs::write(&src, ptx)
        .map_err(|e| fail(format!("{}: {e}", src.display())))
        .and_then(|()| {
            let o = std::process::Command::new(&ptxas)
                .arg(format!("-arch={arch}"))
                .arg("-c")
                .arg("-o")
                .arg(&bin)
                .arg(&src)
                .output()
                .map_err(|e| fail(format!("{}: {e}", ptxas.display())))?;
            if !o.status.success() {
                return Err(fail(format!(
                    "ptxas -c failed: {}",
                    String::from_utf8_lossy(&o.stderr)
                )));
            }
            std::fs::read(&bin).map_err(|e| fail(format!("{}: {e}", bin.display())))
        });
    std::fs::remove_dir_all(&dir).ok();
    result.map(Some)
}

/// The driver's linker on `units` (PTX, each added as its own unit):
/// `Ok(Ok(image))` with the linked cubin, `Ok(Err(log))` with the linker's
/// error log where it refuses them (a symbol defined twice, say). Needs
/// the GPU's context (bound to this thread here).
///
/// # Errors
/// [`Error::Driver`] when a driver call fails other than by the link being
/// refused.
pub fn link(
    gpu: &crate::gpu::Gpu,
    units: &[(String, String)],
) -> Result<std::result::Result<Vec<u8>, String>> {
    use cudarc::driver::sys;
    let driver = |call: &'static str| move |source| Error::Driver { call, source };
    gpu.ctx
        .bind_to_thread()
        .map_err(driver("cuCtxSetCurrent"))?;
    let mut log = vec![0u8; 1 << 14];
    let mut options = [
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values: [*mut std::ffi::c_void; 2] = [
        log.as_mut_ptr().cast(),
        std::ptr::without_provenance_mut(log.len()),
    ];
    let mut state: sys::CUlinkState = std::ptr::null_mut();
    // SAFETY: two options with their values (a buffer alive until the state
    // is destroyed below, and its size passed by value as the driver
    // expects); `state` receives the new link state.
    unsafe { sys::cuLinkCreate_v2(2, options.as_mut_ptr(), values.as_mut_ptr(), &mut state) }
        .result()
        .map_err(driver("cuLinkCreate"))?;
    let log_text = |log: &[u8]| {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        String::from_utf8_lossy(&log[..end]).trim().to_string()
    };
    let outcome = (|| -> Result<std::result::Result<Vec<u8>, String>> {
        for (name, ptx) in units {
            let data = CString::new(ptx.as_str())
                .map_err(|_| Error::Tool(format!("{name}: the PTX holds a NUL byte")))?;
            let label = CString::new(name.as_str())
                .map_err(|_| Error::Tool(format!("{name}: the name holds a NUL byte")))?;
            // SAFETY: a live link state; NUL-terminated PTX of the given size
            // (with its NUL) and name, both alive for the call; no options.
            let added = unsafe {
                sys::cuLinkAddData_v2(
                    state,
                    sys::CUjitInputType::CU_JIT_INPUT_PTX,
                    data.as_ptr() as *mut std::ffi::c_void,
                    data.as_bytes_with_nul().len(),
                    label.as_ptr(),
                    0,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
            };
            if added != sys::CUresult::CUDA_SUCCESS {
                return Ok(Err(format!("{name}: {added:?}: {}", log_text(&log))));
            }
        }
        let mut image: *mut std::ffi::c_void = std::ptr::null_mut();
        let mut size = 0usize;
        // SAFETY: a live link state; the image stays owned by the state
        // until cuLinkDestroy, so it is copied out before that.
        let done = unsafe { sys::cuLinkComplete(state, &mut image, &mut size) };
        if done != sys::CUresult::CUDA_SUCCESS {
            return Ok(Err(format!("{done:?}: {}", log_text(&log))));
        }
        // SAFETY: the driver's image of `size` bytes, alive until
        // cuLinkDestroy below.
        Ok(Ok(unsafe {
            std::slice::from_raw_parts(image.cast::<u8>(), size)
        }
        .to_vec()))
    })();
    // SAFETY: the state created above, destroyed once.
    let destroyed = unsafe { sys::cuLinkDestroy(state) }
        .result()
        .map_err(driver("cuLinkDestroy"));
    // The link's own error first: a failed destroy after it says less.
    let linked = outcome?;
    destroyed?;
    Ok(linked)
}

/// What the linked pair shows: for each instantiation of `dot_linked`, how
/// many definitions the linked image holds, and each unit's kernel
/// launched on `a = [1, 2, 3, 4]`, `b = [5, 6, 7, 8]` with its output
/// (`[70, 17]` when right: the 4-term and the 2-term dot).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Linked {
    /// (N, definitions in the linked image).
    pub definitions: Vec<(usize, usize)>,
    /// (unit kernel, its two outputs).
    pub outputs: Vec<(String, Vec<f32>)>,
}

/// The inputs [`launch_linked`] gives each unit's kernel: the seed's
/// `a = [1, 2, 3, 4]` and `b = [5, 6, 7, 8]` (no two products equal, so a
/// wrong index changes the sum).
pub const LINKED_INPUTS: ([f32; 4], [f32; 4]) = ([1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]);

/// The lengths each unit's kernel computes, in the order of its outputs
/// (`out[0] = dot_linked<4>`, `out[1] = dot_linked<2>`).
pub const LINKED_N: [usize; 2] = [4, 2];

/// The expected outputs of each unit's kernel on [`LINKED_INPUTS`],
/// checked by hand: `1*5 + 2*6 + 3*7 + 4*8 = 70` and `1*5 + 2*6 = 17`.
pub const LINKED_EXPECTED: [f32; 2] = [70.0, 17.0];

/// The CPU reference for each unit's kernel: the dot of the first N of
/// [`LINKED_INPUTS`] for each N of [`LINKED_N`], a plain loop in f64
/// (exact for these small integers).
pub fn linked_reference() -> Vec<f32> {
    let (a, b) = LINKED_INPUTS;
    LINKED_N
        .iter()
        .map(|&n| {
            (0..n)
                .map(|k| f64::from(a[k]) * f64::from(b[k]))
                .sum::<f64>() as f32
        })
        .collect()
}

/// Loads the linked `image`, counts its `dot_linked` definitions and
/// launches each unit's kernel once (one thread).
///
/// # Errors
/// [`Error::Driver`] where loading, a copy or a launch fails;
/// [`Error::Tool`] where the image is not readable ELF.
pub fn launch_linked(gpu: &crate::gpu::Gpu, image: Vec<u8>) -> Result<Linked> {
    use cudarc::driver::{LaunchConfig, PushKernelArg};
    let driver = |call: &'static str| move |source| Error::Driver { call, source };
    let mut definitions: Vec<(usize, usize)> = Vec::new();
    for f in cubin_functions(&image)? {
        if let Some(n) = dot_linked_n(&f.name) {
            match definitions.iter_mut().find(|(m, _)| *m == n) {
                Some((_, count)) => *count += 1,
                None => definitions.push((n, 1)),
            }
        }
    }
    definitions.sort();
    let module = gpu
        .ctx
        .load_module(cudarc::nvrtc::Ptx::from_binary(image))
        .map_err(driver("cuModuleLoadData"))?;
    let a = gpu
        .stream
        .clone_htod(&LINKED_INPUTS.0)
        .map_err(driver("cuMemcpyHtoD"))?;
    let b = gpu
        .stream
        .clone_htod(&LINKED_INPUTS.1)
        .map_err(driver("cuMemcpyHtoD"))?;
    let mut outputs = Vec::new();
    for unit in UNITS {
        let f = module
            .load_function(unit)
            .map_err(driver("cuModuleGetFunction"))?;
        // Poisoned with NaN, so an output the kernel does not write fails.
        let mut out = gpu
            .stream
            .clone_htod(&[f32::NAN; LINKED_N.len()])
            .map_err(driver("cuMemcpyHtoD"))?;
        let mut launch = gpu.stream.launch_builder(&f);
        launch.arg(&a).arg(&b).arg(&mut out);
        let one_thread = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the kernel takes (const float*, const float*, float*),
        // reads 4 floats of each input and writes 2 of out (one thread):
        // all allocated.
        unsafe { launch.launch(one_thread) }.map_err(driver("cuLaunchKernel"))?;
        let host = gpu
            .stream
            .clone_dtoh(&out)
            .map_err(driver("cuMemcpyDtoH"))?;
        outputs.push((unit.to_string(), host));
    }
    Ok(Linked {
        definitions,
        outputs,
    })
}

/// How a symbol of the linkage units reads in the source: `dot_linked<4>`
/// for an instantiation, `dot4_plain` for the control (`dot4_plain$1` for
/// the internal copy NVRTC also makes of it, which the unit's own kernel
/// calls), the name itself otherwise (the kernels are `extern "C"`).
pub fn source_name(name: &str) -> String {
    if let Some(n) = dot_linked_n(name) {
        format!("dot_linked<{n}>")
    } else if let Some(suffix) = name.strip_prefix(PLAIN_MANGLED) {
        format!("dot4_plain{suffix}")
    } else {
        name.to_string()
    }
}

/// The Itanium-mangled name of the control's `dot4_plain(const float*,
/// const float*)`.
pub const PLAIN_MANGLED: &str = "_Z10dot4_plainPKfS0_";

/// What one unit of the control pair (both instantiations and
/// `dot4_plain`) declares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnitEvidence {
    /// The unit's file name (`unit_a.cu`).
    pub unit: String,
    /// The functions and kernels of its PTX, with their linkage.
    pub ptx: Vec<PtxFunction>,
    /// The functions of its relocatable cubin (`ptxas -c`) with their ELF
    /// binding; `None` where ptxas is not found.
    pub elf: Option<Vec<CubinFunction>>,
}

/// Everything the linking section shows, from one GPU.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    /// The architecture the units are compiled for (`sm_90`).
    pub arch: String,
    /// NVRTC's version, `(major, minor)`.
    pub nvrtc: (i32, i32),
    /// The control pair's units, one per [`UNITS`].
    pub units: Vec<UnitEvidence>,
    /// The pair without the control, linked by the driver and launched:
    /// `Err` with the linker's log where the driver refused it.
    pub linked: std::result::Result<Linked, String>,
    /// The control pair linked: `Err` with the linker's log where the driver
    /// refused it (what the lesson expects), `Ok` where it linked.
    pub control: std::result::Result<(), String>,
}

/// Compiles both pairs with NVRTC for `gpu`'s architecture (with
/// relocatable device code), reads the control pair's PTX declarations
/// and (where ptxas is found) ELF bindings, links the pair with the
/// driver's linker, launches its two kernels, and links the control pair.
///
/// # Errors
/// [`Error::NvrtcMissing`] where NVRTC is not found; [`Error::Nvrtc`],
/// [`Error::Tool`] (ptxas failing) or [`Error::Driver`] where a step fails
/// other than by the link being refused.
pub fn gather(gpu: &crate::gpu::Gpu) -> Result<Evidence> {
    let cc = gpu.info.compute_capability;
    let arch = format!("sm_{}{}", cc.0, cc.1);
    let nvrtc = crate::nvrtc::version()?;
    let named = |ptx: Vec<String>| -> Vec<(String, String)> {
        UNITS.iter().map(|u| format!("{u}.cu")).zip(ptx).collect()
    };
    let control = named(unit_ptx(cc, true)?);
    let pair = named(unit_ptx(cc, false)?);
    let mut units = Vec::new();
    for (unit, ptx) in &control {
        let elf = relocatable_cubin(ptx, &arch)?
            .map(|cubin| cubin_functions(&cubin))
            .transpose()?;
        units.push(UnitEvidence {
            unit: unit.clone(),
            ptx: ptx_functions(ptx),
            elf,
        });
    }
    let linked = match link(gpu, &pair)? {
        Ok(image) => Ok(launch_linked(gpu, image)?),
        Err(log) => Err(log),
    };
    let control = link(gpu, &control)?.map(drop);
    Ok(Evidence {
        arch,
        nvrtc,
        units,
        linked,
        control,
    })
}

/// What does not hold in the units' declarations: in each unit's PTX, both
/// instantiations `.weak`, `dot4_plain` `.visible` and the unit's kernel a
/// `.visible .entry`; in its ELF symbols (where read), the instantiations
/// WEAK and `dot4_plain` GLOBAL. Empty when all hold.
pub fn declarations_wrong(units: &[UnitEvidence]) -> Vec<String> {
    let mut wrong = Vec::new();
    for (u, kernel) in units.iter().zip(UNITS) {
        let mut ns: Vec<usize> = Vec::new();
        for f in &u.ptx {
            if let Some(n) = dot_linked_n(&f.name) {
                ns.push(n);
                if f.linkage != Linkage::Weak {
                    wrong.push(format!(
                        "{}: dot_linked<{n}> is {:?} in the PTX, not .weak",
                        u.unit, f.linkage
                    ));
                }
            }
        }
        ns.sort_unstable();
        let mut want = LINKED_N.to_vec();
        want.sort_unstable();
        if ns != want {
            wrong.push(format!(
                "{}: the PTX instantiates dot_linked at N = {ns:?}, not {want:?}",
                u.unit
            ));
        }
        match u.ptx.iter().find(|f| f.name == PLAIN_MANGLED) {
            Some(f) if f.linkage == Linkage::Visible => {}
            Some(f) => wrong.push(format!(
                "{}: dot4_plain is {:?} in the PTX, not .visible",
                u.unit, f.linkage
            )),
            None => wrong.push(format!("{}: no dot4_plain in the PTX", u.unit)),
        }
        if !u
            .ptx
            .iter()
            .any(|f| f.name == kernel && f.entry && f.linkage == Linkage::Visible)
        {
            wrong.push(format!(
                "{}: no .visible .entry {kernel} in the PTX",
                u.unit
            ));
        }
        if let Some(elf) = &u.elf {
            for f in elf {
                let want = if dot_linked_n(&f.name).is_some() {
                    Binding::Weak
                } else if f.name == PLAIN_MANGLED {
                    Binding::Global
                } else {
                    continue;
                };
                if f.binding != want {
                    wrong.push(format!(
                        "{}: {} has ELF binding {:?}, not {want:?}",
                        u.unit,
                        source_name(&f.name),
                        f.binding
                    ));
                }
            }
            if !elf.iter().any(|f| dot_linked_n(&f.name).is_some()) {
                wrong.push(format!("{}: the cubin defines no dot_linked", u.unit));
            }
        }
    }
    wrong
}

/// One unit's declarations as the report prints them: `.weak .func
/// dot_linked<4>, ..., .visible .entry unit_a`.
pub fn ptx_line(u: &UnitEvidence) -> String {
    u.ptx.iter().map(declaration).collect::<Vec<_>>().join(", ")
}

/// One PTX function as the report prints it: `.weak .func dot_linked<4>`.
pub fn declaration(f: &PtxFunction) -> String {
    let linkage = match f.linkage {
        Linkage::Weak => ".weak ",
        Linkage::Visible => ".visible ",
        Linkage::Extern => ".extern ",
        Linkage::Internal => "",
    };
    let kind = if f.entry { ".entry" } else { ".func" };
    format!("{linkage}{kind} {}", source_name(&f.name))
}

/// One unit's ELF symbols as the report prints them: `dot_linked<4> WEAK
/// (96 bytes), ...`; `None` where ptxas was not found.
pub fn elf_line(u: &UnitEvidence) -> Option<String> {
    let elf = u.elf.as_ref()?;
    Some(
        elf.iter()
            .map(|f| {
                let binding = match f.binding {
                    Binding::Weak => "WEAK",
                    Binding::Global => "GLOBAL",
                    Binding::Local => "LOCAL",
                };
                format!("{} {binding} ({} bytes)", source_name(&f.name), f.size)
            })
            .collect::<Vec<_>>()
            .join(", "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_declarations_are_parsed_with_their_linkage() {
        let ptx = ".weak .func  (.param .b32 func_retval0) _Z10dot_linkedILi4EEfPKfS1_\n(\n\
                   .visible .func  (.param .b32 func_retval0) _Z10dot4_plainPKfS0_(\n\
                   .func  (.param .b32 func_retval0) _Z10dot4_plainPKfS0_$1(\n\
                   .visible .entry unit_a(\n\
                   .weak .func  (.param .b32 func_retval0) _Z10dot_linkedILi4EEfPKfS1_(\n";
        let f = ptx_functions(ptx);
        let got: Vec<(&str, Linkage, bool)> = f
            .iter()
            .map(|f| (f.name.as_str(), f.linkage, f.entry))
            .collect();
        assert_eq!(
            got,
            vec![
                ("_Z10dot_linkedILi4EEfPKfS1_", Linkage::Weak, false),
                ("_Z10dot4_plainPKfS0_", Linkage::Visible, false),
                ("_Z10dot4_plainPKfS0_$1", Linkage::Internal, false),
                ("unit_a", Linkage::Visible, true),
            ]
        );
        assert_eq!(dot_linked_n("_Z10dot_linkedILi4EEfPKfS1_"), Some(4));
        assert_eq!(dot_linked_n("_Z10dot_linkedILi16EEfPKfS1_"), Some(16));
        assert_eq!(dot_linked_n("_Z10dot4_plainPKfS0_"), None);
    }
}
