//! One kernel's code in both languages, side by side: its PTX from rustc and
//! from NVRTC, and, where `ptxas` and `cuobjdump` (with its `nvdisasm`) are
//! found (the PATH, then the CUDA toolkit's `bin`; `cargo xtask asm` puts
//! PyPI's on the PATH where the machine lacks them), the SASS each PTX
//! assembles to for the same architecture, with each side's registers.

use std::path::PathBuf;
use std::process::Command;

use crate::error::{Error, Result};
use crate::ptx::{Module, PTX, entries, entry_body, parse_sm};

/// Width of each column in the side-by-side view, characters.
const COLUMN: usize = 64;

/// The PTX (and SASS where the tools are present) of `kernel` (from the
/// sm_75 module, or the sm_80 one for the tensor-core kernels, or the
/// sm_90a one for the Hopper kernels), Rust on the left and the CUDA C twin
/// in `source` (compiled by NVRTC for `arch`, which may be an
/// architecture-specific `sm_90a`) on the right.
///
/// # Errors
/// [`Error::UnknownKernel`] for a name the PTX does not export;
/// [`Error::Usage`] for an architecture that is not `sm_XY`; NVRTC errors.
pub fn side_by_side(kernel: &str, source: &str, name: &str, arch: &str) -> Result<String> {
    // The sm_75 module first; the tensor-core kernels are only in the
    // sm_80 and sm_90a ones, the Hopper kernels only in the sm_90a one.
    let modules = [
        (PTX, None),
        (Module::Sm80.ptx(), Some(Module::Sm80)),
        (Module::Sm90a.ptx(), Some(Module::Sm90a)),
    ];
    let (module, from, rust) = modules
        .into_iter()
        .find_map(|(m, from)| Some((m, from, entry_body(m, kernel)?)))
        .ok_or_else(|| {
            let mut known: Vec<&str> = modules.iter().flat_map(|(m, _)| entries(m)).collect();
            known.sort_unstable();
            known.dedup();
            Error::UnknownKernel {
                name: kernel.to_string(),
                known: known.join(", "),
            }
        })?;
    let rust_target = from.map_or(crate::ptx::target(), Module::name);
    if parse_sm(arch).is_none() {
        return Err(Error::Usage(format!(
            "--arch {arch:?} is not an architecture like sm_90"
        )));
    }
    if from == Some(Module::Sm90a) && arch != "sm_90a" {
        // For any other architecture the twin's body is empty and ptxas
        // refuses the module's instructions.
        return Err(Error::Usage(format!(
            "{kernel} is in the sm_90a module (wgmma, TMA): ask for --arch sm_90a, not {arch}"
        )));
    }
    let c_ptx = crate::nvrtc::compile_for(source, name, arch)?;
    let Some(c) = entry_body(&c_ptx, kernel) else {
        // A kernel with no CUDA C twin (the tensor-core ceilings'
        // `mma_peak`, `mma_peak_f16` and `wgmma_peak`): its Rust side alone.
        return rust_only(kernel, module, rust, rust_target, arch);
    };
    let mut out = columns(
        &format!("Rust PTX (rustc, {rust_target})"),
        rust,
        &format!("CUDA C PTX (NVRTC, {arch})"),
        c,
    );
    match (assemble(module, arch, kernel)?, assemble(&c_ptx, arch, kernel)?) {
        (Some(r), Some(c)) => {
            let title = |side: &str, a: &Assembled| match a.registers {
                Some(n) => format!("{side} SASS ({arch}, {n} registers)"),
                None => format!("{side} SASS ({arch})"),
            };
            out.push('\n');
            out.push_str(&columns(&title("Rust", &r), &r.sass, &title("CUDA C", &c), &c.sass));
        }
        _ => out.push_str(
            "\nSASS: not shown; ptxas and cuobjdump (from the CUDA toolkit) are not both on the PATH. \
             `cargo xtask asm` fetches them from PyPI where the machine lacks them.\n",
        ),
    }
    Ok(out)
}

/// The PTX and SASS of a Rust `kernel` that has no CUDA C twin, with a line
/// that says so.
///
/// # Errors
/// As [`assemble`].
fn rust_only(
    kernel: &str,
    module: &str,
    rust: &str,
    rust_target: &str,
    arch: &str,
) -> Result<String> {
    let mut out = format!(
        "{kernel} has no CUDA C twin (a ceiling kernel is not compared): its Rust side alone.\n\nRust PTX (rustc, \
         {rust_target})\n{rust}\n"
    );
    match assemble(module, arch, kernel)? {
        Some(r) => {
            let registers = r.registers.map_or(String::new(), |n| format!(", {n} registers"));
            out.push_str(&format!("\nRust SASS ({arch}{registers})\n{}\n", r.sass));
        }
        None => out.push_str(
            "\nSASS: not shown; ptxas and cuobjdump (from the CUDA toolkit) are not both on the PATH. \
             `cargo xtask asm` fetches them from PyPI where the machine lacks them.\n",
        ),
    }
    Ok(out)
}

/// Two texts in two columns under their titles, each line cut to the column.
fn columns(left_title: &str, left: &str, right_title: &str, right: &str) -> String {
    let cut = |s: &str| -> String {
        let s = s.replace('\t', "  ");
        if s.chars().count() > COLUMN {
            s.chars().take(COLUMN - 1).chain(['~']).collect()
        } else {
            s
        }
    };
    let (l, r): (Vec<&str>, Vec<&str>) = (left.lines().collect(), right.lines().collect());
    let mut out = format!(
        "{:<COLUMN$} | {}\n{:-<COLUMN$}-+-{:-<COLUMN$}\n",
        cut(left_title),
        cut(right_title),
        "",
        ""
    );
    for i in 0..l.len().max(r.len()) {
        let a = cut(l.get(i).copied().unwrap_or(""));
        let b = cut(r.get(i).copied().unwrap_or(""));
        out.push_str(format!("{a:<COLUMN$} | {b}").trim_end());
        out.push('\n');
    }
    out
}

/// The SASS of `function` in `ptx` assembled for `arch` (`sm_90`): one
/// instruction per line, as `cuobjdump -sass` prints them. `None` where
/// `ptxas` or `cuobjdump` is not found.
///
/// # Errors
/// [`Error::Tool`] when either tool fails (ptxas refusing the PTX, say).
pub fn sass(ptx: &str, arch: &str, function: &str) -> Result<Option<String>> {
    Ok(assemble(ptx, arch, function)?.map(|a| a.sass))
}

/// One function as ptxas assembled it: its SASS and the registers ptxas
/// gave each thread (its `-v` report).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assembled {
    /// One instruction per line, as in [`sass`].
    pub sass: String,
    /// Registers per thread; `None` where ptxas's report has no line for
    /// the function.
    pub registers: Option<u32>,
}

/// [`sass`] with the registers per thread: `None` where `ptxas` or
/// `cuobjdump` is not found.
///
/// # Errors
/// As [`sass`].
pub fn assemble(ptx: &str, arch: &str, function: &str) -> Result<Option<Assembled>> {
    let (Some(ptxas), Some(cuobjdump)) = (find_tool("ptxas"), find_tool("cuobjdump")) else {
        return Ok(None);
    };
    static SEQUENCE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let unique = SEQUENCE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("lab-asm-{}-{unique}", std::process::id()));
    let tool_error = |what: String| Error::Tool(what);
    std::fs::create_dir_all(&dir).map_err(|e| tool_error(format!("{}: {e}", dir.display())))?;
    let src = dir.join("kernels.ptx");
    let bin = dir.join("kernels.cubin");
    std::fs::write(&src, ptx).map_err(|e| tool_error(format!("{}: {e}", src.display())))?;
    // (stdout, stderr) of a command that succeeded.
    let run = |cmd: &mut Command| -> Result<(String, String)> {
        let o = cmd
            .output()
            .map_err(|e| tool_error(format!("{cmd:?}: {e}")))?;
        if !o.status.success() {
            return Err(tool_error(format!(
                "{cmd:?} failed: {}{}",
                String::from_utf8_lossy(&o.stderr),
                String::from_utf8_lossy(&o.stdout)
            )));
        }
        Ok((
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        ))
    };
    let assembled = run(Command::new(&ptxas)
        .args(["-v", &format!("-arch={arch}"), "-o"])
        .arg(&bin)
        .arg(&src))
    .and_then(|(_, report)| {
        let (dump, _) = run(Command::new(&cuobjdump)
            .args(["-sass", "-fun", function])
            .arg(&bin))?;
        Ok((dump, report))
    });
    std::fs::remove_dir_all(&dir).ok();
    let (dump, report) = assembled?;
    Ok(Some(Assembled {
        sass: dump
            .lines()
            .filter(|l| l.trim_start().starts_with("/*") && l.contains("*/ "))
            .map(|l| l.trim().to_string())
            .collect::<Vec<_>>()
            .join("\n"),
        registers: ptxas_registers(&report, function),
    }))
}

/// The registers per thread that a `ptxas -v` report gives `function`: the
/// `Used N registers` line that follows its `Compiling entry function
/// 'NAME'` line.
pub fn ptxas_registers(report: &str, function: &str) -> Option<u32> {
    let header = format!("Compiling entry function '{function}'");
    let lines = report.lines().skip_while(|l| !l.contains(&header)).skip(1);
    lines
        .take_while(|l| !l.contains("Compiling entry function"))
        .find_map(|l| {
            l.split("Used ")
                .nth(1)?
                .split(" registers")
                .next()?
                .trim()
                .parse()
                .ok()
        })
}

/// `name` on the PATH, or in the CUDA toolkit's `bin` (`$CUDA_HOME`, then
/// `/usr/local/cuda`).
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| {
        let home = std::env::var_os("CUDA_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/usr/local/cuda"));
        Some(home.join("bin").join(name)).filter(|p| p.is_file())
    })
}

/// Instructions in one function's SASS as [`sass`] gives it (one
/// instruction a line), less the `NOP` padding and the self-branch (`BRA`
/// to its own address) that ends every function.
pub fn sass_instructions(sass: &str) -> usize {
    sass.lines()
        .filter(|l| {
            let Some((address, rest)) =
                l.trim().strip_prefix("/*").and_then(|l| l.split_once("*/"))
            else {
                return false;
            };
            let op = rest.split(';').next().unwrap_or("").trim();
            let parse =
                |hex: &str| u64::from_str_radix(hex.trim().trim_start_matches("0x"), 16).ok();
            let self_branch = op
                .strip_prefix("BRA ")
                .is_some_and(|target| parse(target).is_some() && parse(target) == parse(address));
            !op.is_empty() && !op.starts_with("NOP") && !self_branch
        })
        .count()
}
