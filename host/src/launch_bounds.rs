//! Writes the launch bounds a kernel declares with
//! `kernels_gpu::launch_bounds!` into its PTX entry, as nvcc does for
//! `__launch_bounds__`: the marker `// lab:launch_bounds <kernel>
//! <max_threads> <min_blocks>` that the macro leaves in the module becomes
//! `.maxntid <max_threads>, 1, 1` and `.minnctapersm <min_blocks>` between
//! the entry's parameter list and its body (PTX ISA, "Performance-Tuning
//! Directives"). ptxas reads them when it allocates registers.
//!
//! Used by `host/build.rs` (included by path) on every module it builds,
//! and by the tests; it depends on std only.

/// One kernel's declared bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bounds {
    /// The kernel's exported symbol.
    pub kernel: String,
    /// The largest block it is launched with, in threads.
    pub max_threads: u32,
    /// The blocks of that size an SM must hold at once.
    pub min_blocks: u32,
}

/// The marker `launch_bounds!` writes, up to the kernel's name.
pub const MARKER: &str = "// lab:launch_bounds ";

/// The bounds declared in `ptx`, in the order of their markers.
///
/// # Errors
/// A marker that is not `<kernel> <max_threads> <min_blocks>` with two
/// positive integers, or two markers for one kernel.
pub fn declared(ptx: &str) -> Result<Vec<Bounds>, String> {
    let mut all: Vec<Bounds> = Vec::new();
    for line in ptx.lines() {
        let Some(rest) = line.trim().strip_prefix(MARKER) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let number = |s: &str| s.parse::<u32>().ok().filter(|&v| v > 0);
        let bounds = match fields[..] {
            [kernel, threads, blocks] => match (number(threads), number(blocks)) {
                (Some(max_threads), Some(min_blocks)) => Bounds {
                    kernel: kernel.to_string(),
                    max_threads,
                    min_blocks,
                },
                _ => {
                    return Err(format!(
                        "launch bounds marker `{}`: the bounds must be positive integers",
                        line.trim()
                    ));
                }
            },
            _ => {
                return Err(format!(
                    "launch bounds marker `{}`: expected <kernel> <max_threads> <min_blocks>",
                    line.trim()
                ));
            }
        };
        if all.iter().any(|b| b.kernel == bounds.kernel) {
            return Err(format!(
                "launch bounds declared twice for {}",
                bounds.kernel
            ));
        }
        all.push(bounds);
    }
    Ok(all)
}

/// `ptx` with each declared kernel's `.maxntid` and `.minnctapersm` after
/// its entry's parameter list; `ptx` unchanged where nothing is declared.
///
/// # Errors
/// As [`declared`]; a marker naming no entry of the module; an entry whose
/// parameter list does not close (not PTX as rustc writes it).
pub fn apply(ptx: &str) -> Result<String, String> {
    let bounds = declared(ptx)?;
    if bounds.is_empty() {
        return Ok(ptx.to_string());
    }
    let mut out = String::with_capacity(ptx.len() + 64 * bounds.len());
    let mut applied = vec![false; bounds.len()];
    let mut pending: Option<usize> = None;
    for line in ptx.split_inclusive('\n') {
        out.push_str(line);
        // The code of the line, without a trailing `//` comment (rustc ends
        // an entry's parameter list with `)  // @name`).
        let text = line.split("//").next().unwrap_or_default().trim_end();
        if pending.is_none()
            && let Some(name) = entry_name(text)
        {
            pending = bounds.iter().position(|b| b.kernel == name);
        }
        if let Some(i) = pending {
            // The parameter list closes on the entry's line (no parameters)
            // or on a line of its own.
            if text.ends_with(')') {
                if !line.ends_with('\n') {
                    out.push('\n');
                }
                let b = &bounds[i];
                out.push_str(&format!(
                    ".maxntid {}, 1, 1\n.minnctapersm {}\n",
                    b.max_threads, b.min_blocks
                ));
                applied[i] = true;
                pending = None;
            } else if text.starts_with('{') {
                return Err(format!(
                    "the PTX entry of {} has no closing parenthesis before its body",
                    bounds[i].kernel
                ));
            }
        }
    }
    match bounds.iter().zip(&applied).find(|(_, done)| !**done) {
        Some((b, _)) => Err(format!(
            "launch bounds declared for {}, which is not a kernel of this module",
            b.kernel
        )),
        None => Ok(out),
    }
}

/// The kernel's name if `line` opens a PTX entry (`.visible .entry
/// name(` or `.entry name(`).
fn entry_name(line: &str) -> Option<&str> {
    let rest = line.split(".entry ").nth(1)?;
    let name = rest.split('(').next()?.trim();
    (!name.is_empty()).then_some(name)
}
