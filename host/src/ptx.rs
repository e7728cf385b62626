//! The kernels' PTX, built from `kernels-gpu` by `build.rs` and embedded in
//! the binary, and small readers of its text.

/// The PTX text of every kernel in `kernels-gpu`.
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));

/// The same crate built for sm_80 (PTX ISA 7.0) with the tensor-core
/// kernels (`--cfg lab_tensor_cores`): loaded only on GPUs of compute
/// capability 8.0 and up.
pub const PTX_SM80: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels_sm80.ptx"));

/// The same crate built for sm_90a (PTX ISA 8.3, the architecture-specific
/// target) with the tensor-core kernels and the Hopper kernels (`--cfg
/// lab_tensor_cores --cfg lab_hopper`): loaded only on GPUs of compute
/// capability 9.0, the only ones that run `sm_90a` PTX.
pub const PTX_SM90A: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels_sm90a.ptx"));

/// A PTX module of the kernel crate other than the sm_75 one every lesson
/// loads ([`PTX`]): each built for an architecture family, each loaded only
/// on the GPUs that run it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Module {
    /// [`PTX_SM80`]: `mma.sync`, `ldmatrix`, `cp.async` (compute capability
    /// 8.0 and up).
    Sm80,
    /// [`PTX_SM90A`]: `wgmma` (compute capability 9.0 only).
    Sm90a,
}

impl Module {
    /// The module's PTX text.
    pub fn ptx(self) -> &'static str {
        match self {
            Module::Sm80 => PTX_SM80,
            Module::Sm90a => PTX_SM90A,
        }
    }

    /// Its name in reports: `sm_80 module`.
    pub fn name(self) -> &'static str {
        match self {
            Module::Sm80 => "sm_80 module",
            Module::Sm90a => "sm_90a module",
        }
    }

    /// The driver call that loads it, as an error names it.
    pub fn load_call(self) -> &'static str {
        match self {
            Module::Sm80 => "cuModuleLoadData (the sm_80 module)",
            Module::Sm90a => "cuModuleLoadData (the sm_90a module)",
        }
    }

    /// The driver call that finds one of its kernels, as an error names it.
    pub fn get_call(self) -> &'static str {
        match self {
            Module::Sm80 => "cuModuleGetFunction (an sm_80 kernel)",
            Module::Sm90a => "cuModuleGetFunction (an sm_90a kernel)",
        }
    }

    /// Whether a GPU of compute capability `cc` runs it: 8.0 and up for
    /// sm_80; exactly 9.0 for sm_90a, whose architecture-specific PTX no
    /// other GPU loads.
    pub fn runs_on(self, cc: (i32, i32)) -> bool {
        match self {
            Module::Sm80 => cc.0 >= 8,
            Module::Sm90a => cc == (9, 0),
        }
    }
}

/// The GPU architecture the PTX was built for (`LAB_PTX_ARCH` at build
/// time, `sm_75` by default).
pub const PTX_ARCH: &str = env!("LAB_PTX_ARCH");

/// Whether the base module has the FP16 tensor-core kernels
/// (`gemm_f16_mma`, `mma_peak_f16`): built for sm_75 or later, where
/// `host/kernel_build.rs` passes `--cfg lab_fp16_mma` (ldmatrix and f16
/// `mma.sync` m16n8k8 start at compute capability 7.5).
pub fn base_has_fp16_mma() -> bool {
    parse_sm(PTX_ARCH).is_some_and(|built| built >= (7, 5))
}

/// The rustc that built the kernels and this binary (`rustc --version`).
pub const RUSTC_VERSION: &str = env!("LAB_RUSTC_VERSION");

/// The git commit the binary was built from (`-dirty` when tracked files
/// had changes), or `unknown` outside a git checkout.
pub const GIT_COMMIT: &str = env!("LAB_GIT_COMMIT");

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
    let digits: String = arch
        .strip_prefix("sm_")?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
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

/// The `.param` list of the kernel `symbol` in `ptx`, in order, or `None`
/// where `ptx` has no such entry. Reads rustc's and NVRTC's forms alike
/// (`.param .u64 .ptr .align 1 k_param_0`, `.param .u64 k_param_0`,
/// `.param .align 4 .b8 k_param_3[36]`).
pub fn entry_params(ptx: &str, symbol: &str) -> Option<Vec<crate::kernels::PtxParam>> {
    let header = format!(".entry {symbol}(");
    let start = ptx.find(&header)? + header.len();
    let rest = &ptx[start..];
    let close = rest.find(')')?;
    Some(
        rest[..close]
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .filter_map(parse_param)
            .collect(),
    )
}

/// One `.param` declaration (without its trailing comma); `None` for a line
/// that is not one.
pub fn parse_param(line: &str) -> Option<crate::kernels::PtxParam> {
    let mut words = line.split_whitespace();
    if words.next()? != ".param" {
        return None;
    }
    let words: Vec<&str> = words.collect();
    let ty = words
        .iter()
        .find(|w| {
            w.starts_with('.')
                && !matches!(
                    **w,
                    ".ptr" | ".align" | ".global" | ".shared" | ".const" | ".local"
                )
        })?
        .to_string();
    let name = words.last()?;
    let array_bytes = name
        .split_once('[')
        .and_then(|(_, n)| n.trim_end_matches(']').parse::<usize>().ok())
        .map(|count| {
            let element: usize = ty.get(2..).and_then(|b| b.parse().ok()).unwrap_or(8) / 8;
            count * element
        });
    Some(crate::kernels::PtxParam {
        ty,
        ptr: words.contains(&".ptr"),
        array_bytes,
        text: line.to_string(),
    })
}

/// The instruction mix of one kernel's PTX that explains most speed gaps
/// between two compilers: memory accesses by state space, cache path and
/// width, fused multiply-adds and branches.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct PtxMix {
    /// Loads and stores, keyed like `ld.global.nc 128b` (state space, `.nc`
    /// for the read-only path, access width in bits); a load or store with
    /// no state space is `ld.generic`.
    pub accesses: std::collections::BTreeMap<String, usize>,
    /// `fma.rn.f32` instructions.
    pub fma_f32: usize,
    /// Branches (`bra`, predicated or not).
    pub branches: usize,
}

impl PtxMix {
    /// Counts the mix in `body` (the text of one `.entry`, see
    /// [`entry_body`]). Static counts: an instruction in a loop counts once.
    pub fn of(body: &str) -> PtxMix {
        let mut mix = PtxMix::default();
        for line in body.lines() {
            let mut words = line.split_whitespace();
            let mut op = words.next().unwrap_or("");
            if op.starts_with('@') {
                op = words.next().unwrap_or("");
            }
            if op == "bra" || op.starts_with("bra.") {
                mix.branches += 1;
            } else if op == "fma.rn.f32" {
                mix.fma_f32 += 1;
            } else if let Some(key) = access_key(op) {
                *mix.accesses.entry(key).or_default() += 1;
            }
        }
        mix
    }

    /// One line: `ld.global.nc 32b x2, st.global 32b x1; fma 0; bra 1`.
    pub fn summary(&self) -> String {
        let accesses: Vec<String> = self
            .accesses
            .iter()
            .map(|(k, n)| format!("{k} x{n}"))
            .collect();
        format!(
            "{}; fma {}; bra {}",
            accesses.join(", "),
            self.fma_f32,
            self.branches
        )
    }
}

/// `ld.global.nc.v4.f32` -> `ld.global.nc 128b`; `None` for anything that is
/// not a load or store of data (parameters are not memory traffic).
fn access_key(op: &str) -> Option<String> {
    let mut parts = op.split('.');
    let kind = parts.next()?;
    if kind != "ld" && kind != "st" {
        return None;
    }
    let rest: Vec<&str> = parts.collect();
    if rest.contains(&"param") {
        return None;
    }
    let space = ["global", "shared", "local", "const"]
        .into_iter()
        .find(|s| rest.contains(s))
        .unwrap_or("generic");
    let nc = if rest.contains(&"nc") { ".nc" } else { "" };
    let lanes: usize = rest
        .iter()
        .find_map(|p| p.strip_prefix('v').and_then(|n| n.parse().ok()))
        .unwrap_or(1);
    let bits: usize = rest
        .iter()
        .rev()
        .find_map(|p| {
            p.get(1..)
                .and_then(|n| n.parse().ok())
                .filter(|_| p.len() > 1 && "bfsu".contains(&p[..1]))
        })
        .unwrap_or(0);
    Some(format!("{kind}.{space}{nc} {}b", lanes * bits))
}
