//! One kernel's code in both languages, side by side: its PTX from rustc and
//! from NVRTC, and, where `ptxas` and `cuobjdump` are on the PATH, the SASS
//! each PTX assembles to for the same architecture.

use std::path::PathBuf;
use std::process::Command;

use crate::error::{Error, Result};
use crate::ptx::{PTX, entries, entry_body, parse_sm};

/// Width of each column in the side-by-side view, characters.
const COLUMN: usize = 64;

/// The PTX (and SASS where the tools are present) of `kernel`, Rust on the
/// left and the CUDA C twin in `source` (compiled by NVRTC for `arch`) on the
/// right.
///
/// # Errors
/// [`Error::UnknownKernel`] for a name the PTX does not export;
/// [`Error::Size`] for an architecture that is not `sm_XY`; NVRTC errors.
pub fn side_by_side(kernel: &str, source: &str, name: &str, arch: &str) -> Result<String> {
    let rust = entry_body(PTX, kernel).ok_or_else(|| Error::UnknownKernel {
        name: kernel.to_string(),
        known: entries(PTX).join(", "),
    })?;
    let cc = parse_sm(arch).ok_or_else(|| Error::Size(format!("--arch {arch:?} is not an architecture like sm_90")))?;
    let c_ptx = crate::nvrtc::compile(source, name, cc)?;
    let c = entry_body(&c_ptx, kernel).ok_or_else(|| Error::UnknownKernel {
        name: kernel.to_string(),
        known: entries(&c_ptx).join(", "),
    })?;
    let mut out = columns(
        &format!("Rust PTX (rustc, {})", crate::ptx::target()),
        rust,
        &format!("CUDA C PTX (NVRTC, {arch})"),
        c,
    );
    match (find_tool("ptxas"), find_tool("cuobjdump")) {
        (Some(ptxas), Some(cuobjdump)) => {
            let dir = std::env::temp_dir().join(format!("lab-asm-{}", std::process::id()));
            std::fs::create_dir_all(&dir).map_err(|e| Error::Size(format!("temp dir: {e}")))?;
            let sass = |label: &str, ptx: &str| -> Result<String> {
                let src = dir.join(format!("{label}.ptx"));
                let bin = dir.join(format!("{label}.cubin"));
                std::fs::write(&src, ptx).map_err(|e| Error::Size(format!("{}: {e}", src.display())))?;
                let run = |cmd: &mut Command| -> Result<String> {
                    let o = cmd.output().map_err(|e| Error::Size(format!("{cmd:?}: {e}")))?;
                    if !o.status.success() {
                        return Err(Error::Size(format!("{cmd:?} failed: {}", String::from_utf8_lossy(&o.stderr))));
                    }
                    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
                };
                run(Command::new(&ptxas).arg(format!("-arch={arch}")).arg("-o").arg(&bin).arg(&src))?;
                let dump = run(Command::new(&cuobjdump).args(["-sass", "-fun", kernel]).arg(&bin))?;
                Ok(dump
                    .lines()
                    .filter(|l| l.trim_start().starts_with("/*") && l.contains("*/ "))
                    .map(|l| l.trim().to_string())
                    .collect::<Vec<_>>()
                    .join("\n"))
            };
            let (r, c) = (sass("rust", PTX)?, sass("c", &c_ptx)?);
            std::fs::remove_dir_all(&dir).ok();
            out.push('\n');
            out.push_str(&columns(&format!("Rust SASS ({arch})"), &r, &format!("CUDA C SASS ({arch})"), &c));
        }
        _ => out.push_str("\nSASS: not shown; ptxas and cuobjdump (from the CUDA toolkit) are not both on the PATH.\n"),
    }
    Ok(out)
}

/// Two texts in two columns under their titles, each line cut to the column.
fn columns(left_title: &str, left: &str, right_title: &str, right: &str) -> String {
    let cut = |s: &str| -> String {
        let s = s.replace('\t', "  ");
        if s.chars().count() > COLUMN { s.chars().take(COLUMN - 1).chain(['~']).collect() } else { s }
    };
    let (l, r): (Vec<&str>, Vec<&str>) = (left.lines().collect(), right.lines().collect());
    let mut out = format!("{:<COLUMN$} | {}\n{:-<COLUMN$}-+-{:-<COLUMN$}\n", cut(left_title), cut(right_title), "", "");
    for i in 0..l.len().max(r.len()) {
        let a = cut(l.get(i).copied().unwrap_or(""));
        let b = cut(r.get(i).copied().unwrap_or(""));
        out.push_str(format!("{a:<COLUMN$} | {b}").trim_end());
        out.push('\n');
    }
    out
}

/// `name` on the PATH.
pub fn find_tool(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| std::env::split_paths(&paths).map(|d| d.join(name)).find(|p| p.is_file()))
}
