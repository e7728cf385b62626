//! The kernels' PTX, built from `kernels-gpu` by `build.rs` and embedded in
//! the binary, and small readers of its text.

/// The PTX text of every kernel in `kernels-gpu`.
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));

/// The GPU architecture the PTX was built for (`LAB_PTX_ARCH` at build
/// time, `sm_75` by default).
pub const PTX_ARCH: &str = env!("LAB_PTX_ARCH");

/// The rustc that built the kernels and this binary (`rustc --version`).
pub const RUSTC_VERSION: &str = env!("LAB_RUSTC_VERSION");

/// The PTX ISA version, from the `.version` line (for example `6.3`).
pub fn isa_version() -> &'static str {
    directive(".version").unwrap_or("unknown")
}

/// The target architecture, from the `.target` line (for example `sm_75`).
pub fn target() -> &'static str {
    directive(".target").unwrap_or("unknown")
}

/// The PTX target as a compute capability: `sm_75` is (7, 5), `sm_90` is
/// (9, 0). An unparsable target reads as (0, 0), which every GPU satisfies.
pub fn target_compute_capability() -> (i32, i32) {
    parse_sm(target()).unwrap_or((0, 0))
}

/// `sm_XY` (with an optional letter suffix such as `sm_90a`) as (X, Y);
/// `sm_100` is (10, 0).
pub fn parse_sm(arch: &str) -> Option<(i32, i32)> {
    let digits: String = arch.strip_prefix("sm_")?.chars().take_while(char::is_ascii_digit).collect();
    if digits.len() < 2 {
        return None;
    }
    let (major, minor) = digits.split_at(digits.len() - 1);
    Some((major.parse().ok()?, minor.parse().ok()?))
}

fn directive(name: &str) -> Option<&'static str> {
    PTX.lines()
        .map(str::trim)
        .find_map(|line| line.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
}

/// The names of every `.entry` (kernel) in `ptx`, in file order.
pub fn entries(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter_map(|line| line.trim().strip_prefix(".visible .entry "))
        .map(|rest| rest.split('(').next().unwrap_or(rest).trim())
        .collect()
}

/// The text of one kernel, from its `.entry` line to the closing brace of
/// its body, or `None` where `ptx` has no such entry.
pub fn entry_body<'a>(ptx: &'a str, symbol: &str) -> Option<&'a str> {
    let header = format!(".entry {symbol}(");
    let start = ptx.find(&header)?;
    let rest = &ptx[start..];
    let open = rest.find("\n{")?;
    let close = rest[open..].find("\n}")?;
    Some(&rest[..open + close + 2])
}
