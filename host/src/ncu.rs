//! Measured bytes and warp stalls from Nsight Compute, for every lesson:
//! `ncu` profiles a lesson's `--profile` run (one launch of each kernel)
//! and writes CSV; this module asks for the counters ([`metrics`]), reads
//! that CSV into launches ([`Profile`]), and shows them (a section, JSON
//! rows), so a report can also be merged from a saved file on a machine
//! without counters (or without a GPU).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

use serde::Serialize;
use serde_json::json;

/// The byte and occupancy metrics every profile asks ncu for.
pub const BYTE_METRICS: [&str; 5] = [
    "dram__bytes.sum",
    "lts__t_bytes.sum",
    "l1tex__t_bytes.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct",
];

/// The warp states ncu's Warp State Statistics section breaks a kernel's
/// warp cycles into, each as the metric
/// `smsp__average_warps_issue_stalled_<state>_per_issue_active.ratio`:
/// warps in that state per cycle in which an instruction issued, so the
/// states add up to the warp cycles per issued instruction
/// ([`WARP_CYCLES_PER_ISSUE`]). These are the states Nsight Compute's own
/// CPIStall rule (the WarpStateStats section's) reads; they are defined
/// from Volta on, so from sm_75 to sm_90 (confirm on a chip with
/// `ncu --query-metrics --chip gh100 | grep issue_stalled`, `--chip tu104`
/// for a T4). `selected` is the issuing state, not a stall: it is
/// collected (so the shares add up) but never ranked.
pub const WARP_STATES: [&str; 18] = [
    "barrier",
    "branch_resolving",
    "dispatch_stall",
    "drain",
    "imc_miss",
    "lg_throttle",
    "long_scoreboard",
    "math_pipe_throttle",
    "membar",
    "mio_throttle",
    "misc",
    "no_instruction",
    "not_selected",
    "selected",
    "short_scoreboard",
    "sleeping",
    "tex_throttle",
    "wait",
];

/// The warp state that is an issue, not a stall.
pub const ISSUING: &str = "selected";

/// Warp cycles per issued instruction: the total the states divide.
pub const WARP_CYCLES_PER_ISSUE: &str = "smsp__average_warp_latency_per_inst_issued.ratio";

/// The metric of one warp state (one of [`WARP_STATES`]).
pub fn stall_metric(state: &str) -> String {
    format!("smsp__average_warps_issue_stalled_{state}_per_issue_active.ratio")
}

/// The state a stall metric names, if `metric` is one.
fn stall_state(metric: &str) -> Option<&str> {
    metric
        .strip_prefix("smsp__average_warps_issue_stalled_")?
        .strip_suffix("_per_issue_active.ratio")
}

/// Every metric a profile asks ncu for, in its `--metrics` form: the bytes
/// and occupancy, the warp states and their total.
pub fn metrics() -> String {
    let mut all: Vec<String> = BYTE_METRICS.iter().map(|m| m.to_string()).collect();
    all.extend(WARP_STATES.iter().map(|s| stall_metric(s)));
    all.push(WARP_CYCLES_PER_ISSUE.to_string());
    all.join(",")
}

/// How ncu treats the caches between the kernels it profiles: a lesson's
/// choice ([`crate::lesson::Lesson::NCU_CACHE`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CacheControl {
    /// ncu's default: every cache flushed before each profiled kernel (and
    /// each of its replay passes), so the bytes are one cold-cache launch's.
    Flush,
    /// No flush (`--cache-control none`), and the whole program replayed
    /// once per pass (`--replay-mode application`) so that no save and
    /// restore of memory runs between two kernels: each kernel meets the
    /// caches as the kernel before it left them, as in a timed loop.
    AsLeft,
}

impl CacheControl {
    /// ncu's options for this choice.
    pub fn ncu_args(self) -> &'static [&'static str] {
        match self {
            CacheControl::Flush => &["--cache-control", "all"],
            CacheControl::AsLeft => &["--cache-control", "none", "--replay-mode", "application"],
        }
    }

    /// What the choice means for the bytes, for a report.
    pub fn describe(self) -> &'static str {
        match self {
            CacheControl::Flush => {
                "caches flushed before each kernel by ncu (cold-cache bytes of one launch)"
            }
            CacheControl::AsLeft => {
                "caches as the kernel before left them (no flush, the program replayed once per pass)"
            }
        }
    }
}

/// One kernel's counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Counters {
    /// Bytes DRAM moved (reads and writes), `dram__bytes.sum`.
    pub dram_bytes: Option<f64>,
    /// Bytes through L2, `lts__t_bytes.sum`.
    pub l2_bytes: Option<f64>,
    /// Bytes through L1/TEX, `l1tex__t_bytes.sum`.
    pub l1_bytes: Option<f64>,
    /// Achieved occupancy, % of the SM's warp slots,
    /// `sm__warps_active.avg.pct_of_peak_sustained_active`.
    pub achieved_occupancy_pct: Option<f64>,
    /// Theoretical occupancy, %, `sm__maximum_warps_per_active_cycle_pct`.
    pub theoretical_occupancy_pct: Option<f64>,
    /// Warp cycles per issued instruction, [`WARP_CYCLES_PER_ISSUE`].
    pub warp_cycles_per_issue: Option<f64>,
    /// Warps in each state per issue cycle, by state ([`WARP_STATES`]).
    pub warp_states: BTreeMap<String, f64>,
}

/// One stall reason's part of a kernel's warp cycles.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stall {
    /// The warp state, as ncu names it (`long_scoreboard`).
    pub reason: String,
    /// Warp cycles per issued instruction spent in it.
    pub cycles_per_issue: f64,
    /// Its share of all the warp cycles per issued instruction, 0 to 1.
    pub share: f64,
}

impl Counters {
    /// The `n` stall reasons with the most warp cycles, largest first, each
    /// with its share of the kernel's warp cycles per issued instruction
    /// (ncu's total where collected, else the sum of every state's, the
    /// issuing one included). Reasons at 0 are left out; the issuing state
    /// is never a reason.
    pub fn top_stalls(&self, n: usize) -> Vec<Stall> {
        let summed: f64 = self.warp_states.values().sum();
        let total = self
            .warp_cycles_per_issue
            .filter(|&t| t > 0.0)
            .unwrap_or(summed);
        if total.is_nan() || total <= 0.0 {
            return Vec::new();
        }
        let mut stalls: Vec<Stall> = self
            .warp_states
            .iter()
            .filter(|(state, v)| state.as_str() != ISSUING && **v > 0.0)
            .map(|(state, &v)| Stall {
                reason: state.clone(),
                cycles_per_issue: v,
                share: v / total,
            })
            .collect();
        stalls.sort_by(|a, b| b.cycles_per_issue.total_cmp(&a.cycles_per_issue));
        stalls.truncate(n);
        stalls
    }

    /// The counters as one JSON object (bytes, occupancy, the top three
    /// stall reasons).
    pub fn json(&self) -> serde_json::Value {
        json!({
            "dram_bytes": self.dram_bytes, "l2_bytes": self.l2_bytes, "l1_bytes": self.l1_bytes,
            "achieved_occupancy_pct": self.achieved_occupancy_pct,
            "theoretical_occupancy_pct": self.theoretical_occupancy_pct,
            "warp_cycles_per_issue": self.warp_cycles_per_issue,
            "top_stalls": self.top_stalls(TOP_STALLS),
        })
    }
}

/// Stall reasons a report shows per kernel.
pub const TOP_STALLS: usize = 3;

/// One profiled launch: ncu's ID (launch order in the program), the
/// kernel's name and launch shape, and its counters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Launch {
    /// ncu's launch ID, counting from 0 in the order the program launched.
    pub id: u64,
    /// The kernel's name.
    pub kernel: String,
    /// The grid, as ncu writes it (`(65536, 1, 1)`); empty where the CSV
    /// has no "Grid Size" column.
    pub grid: String,
    /// The block, as ncu writes it (`(256, 1, 1)`); empty likewise.
    pub block: String,
    /// The counters.
    pub counters: Counters,
}

impl Launch {
    /// Blocks in the grid (the product of its three extents), if the grid
    /// reads as `(x, y, z)`.
    pub fn blocks(&self) -> Option<u64> {
        let inner = self.grid.trim().strip_prefix('(')?.strip_suffix(')')?;
        inner
            .split(',')
            .map(|d| d.trim().parse::<u64>().ok())
            .product()
    }
}

/// A lesson's profile: every launch ncu profiled, in launch order, and how
/// ncu treated the caches.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Profile {
    /// How the caches stood before each kernel.
    pub cache: CacheControl,
    /// Every profiled launch, in launch order.
    pub launches: Vec<Launch>,
}

impl Profile {
    /// Reads ncu's CSV ([`parse_launches`]) made with `cache`.
    ///
    /// # Errors
    /// As [`parse_launches`].
    pub fn parse(text: &str, cache: CacheControl) -> Result<Profile, String> {
        Ok(Profile {
            cache,
            launches: parse_launches(text)?,
        })
    }

    /// Each kernel's counters from its first launch, by kernel name.
    pub fn by_kernel(&self) -> BTreeMap<String, Counters> {
        let mut out = BTreeMap::new();
        for l in &self.launches {
            out.entry(l.kernel.clone())
                .or_insert_with(|| l.counters.clone());
        }
        out
    }

    /// The last launch of `kernel` over a grid of `blocks` blocks.
    pub fn last_at(&self, kernel: &str, blocks: u64) -> Option<&Launch> {
        self.launches
            .iter()
            .rev()
            .find(|l| l.kernel == kernel && l.blocks() == Some(blocks))
    }

    /// The section every lesson's report shows when counters are merged:
    /// one row per profiled launch with its DRAM, L2 and L1 bytes, its
    /// occupancy and its top stall reasons with their shares.
    pub fn section(&self) -> String {
        let mut t = crate::report::table(&[
            "launch",
            "kernel",
            "grid",
            "DRAM MB",
            "L2 MB",
            "L1 MB",
            "occupancy % achieved / theoretical",
            "top stall reasons (share of warp cycles)",
        ]);
        let mb = |x: Option<f64>| x.map_or("-".to_string(), |b| format!("{:.1}", b / 1e6));
        let pct = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.1}"));
        for l in &self.launches {
            let c = &l.counters;
            let stalls: Vec<String> = c
                .top_stalls(TOP_STALLS)
                .iter()
                .map(|s| format!("{} {:.0}%", s.reason, 100.0 * s.share))
                .collect();
            t.add_row(vec![
                l.id.to_string(),
                l.kernel.clone(),
                l.grid.clone(),
                mb(c.dram_bytes),
                mb(c.l2_bytes),
                mb(c.l1_bytes),
                format!(
                    "{} / {}",
                    pct(c.achieved_occupancy_pct),
                    pct(c.theoretical_occupancy_pct)
                ),
                if stalls.is_empty() {
                    "-".to_string()
                } else {
                    stalls.join(", ")
                },
            ]);
        }
        let mut s = String::from("\n== Nsight Compute counters ==\n");
        let _ = writeln!(
            s,
            "Every launch of the lesson's --profile run under ncu, {}; MB = 10^6 bytes. A stall reason's share is its part of \
             the kernel's warp cycles per issued instruction (Warp State Statistics); the issuing state is not a reason.",
            self.cache.describe()
        );
        let _ = writeln!(s, "{t}");
        s
    }

    /// One JSON object per profiled launch (`variant` "ncu-launch"; no
    /// `symbol`, so records and baselines pass over them), each with
    /// `context`.
    pub fn json_lines(&self, lesson: &str, context: &serde_json::Value) -> Vec<serde_json::Value> {
        self.launches
            .iter()
            .map(|l| {
                json!({
                    "lesson": lesson, "variant": "ncu-launch", "launch": l.id, "kernel": l.kernel,
                    "grid": l.grid, "block": l.block, "cache_control": self.cache,
                    "ncu": l.counters.json(), "warp_states": l.counters.warp_states,
                    "context": context,
                })
            })
            .collect()
    }

    /// Adds an `ncu` object (the kernel's first profiled launch's counters,
    /// [`Counters::json`]) to every row whose `symbol` (or the part before a
    /// `/`) names a profiled kernel, and `ncu_launch` (that launch's id,
    /// grid and block): the profile launches each kernel at one size, so a
    /// row timed at another size (a `/round` row beside its `/ragged` one,
    /// say) says which launch its counters come from.
    pub fn annotate(&self, lines: &mut [serde_json::Value]) {
        for line in lines {
            let Some(symbol) = line.get("symbol").and_then(|s| s.as_str()) else {
                continue;
            };
            let kernel = symbol.split('/').next().unwrap_or(symbol);
            let first = self.launches.iter().find(|l| l.kernel == kernel);
            if let (Some(l), Some(obj)) = (first, line.as_object_mut()) {
                obj.insert("ncu".into(), l.counters.json());
                obj.insert(
                    "ncu_launch".into(),
                    json!({"launch": l.id, "grid": l.grid, "block": l.block}),
                );
            }
        }
    }
}

/// Reads ncu's `--csv` output: one row per (kernel launch, metric), with
/// the columns "ID", "Kernel Name", "Metric Name", "Metric Unit" and
/// "Metric Value" (and, where present, "Grid Size" and "Block Size"). Byte
/// counts in any of ncu's units (byte, Kbyte, Mbyte, Gbyte, and the binary
/// KiB-style ones) become bytes; thousands separators are dropped. Returns
/// each kernel's counters from its first launch.
///
/// # Errors
/// As [`parse_launches`].
pub fn parse_csv(text: &str) -> Result<BTreeMap<String, Counters>, String> {
    let profile = Profile {
        cache: CacheControl::Flush,
        launches: parse_launches(text)?,
    };
    Ok(profile.by_kernel())
}

/// Reads ncu's `--csv` output (see [`parse_csv`]) into every launch, in ID
/// order.
///
/// # Errors
/// A CSV without the needed columns, an ID or a value that is not a number,
/// an unknown byte unit. When ncu could not read the counters its output
/// holds `ERR_NVGPUCTRPERM`; the error then says how to allow them.
pub fn parse_launches(text: &str) -> Result<Vec<Launch>, String> {
    if text.contains("ERR_NVGPUCTRPERM") {
        return Err(PERMISSION.to_string());
    }
    // ncu prints its own lines ("==PROF== ...") around the CSV; the header
    // is the line that starts with "ID", and only lines that look like CSV
    // rows (start with a quote) are read.
    let header = text
        .lines()
        .position(|l| l.starts_with("\"ID\","))
        .ok_or("no ncu CSV header (a line starting \"ID\",) in the input")?;
    let csv_text: String = text
        .lines()
        .skip(header)
        .filter(|l| l.starts_with('"'))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(csv_text.as_bytes());
    let headers = reader.headers().map_err(|e| e.to_string())?.clone();
    let find = |name: &str| headers.iter().position(|h| h == name);
    let col = |name: &str| find(name).ok_or(format!("the CSV has no {name:?} column"));
    let (id, kernel, metric, unit, value) = (
        col("ID")?,
        col("Kernel Name")?,
        col("Metric Name")?,
        col("Metric Unit")?,
        col("Metric Value")?,
    );
    let (grid, block) = (find("Grid Size"), find("Block Size"));
    let mut launches: BTreeMap<u64, Launch> = BTreeMap::new();
    for record in reader.records() {
        let r = record.map_err(|e| e.to_string())?;
        if r.len() <= value.max(kernel).max(metric).max(unit).max(id) {
            continue;
        }
        let launch_id: u64 = r[id]
            .trim()
            .parse()
            .map_err(|_| format!("launch ID {:?} is not a number", &r[id]))?;
        let name = r[kernel].to_string();
        let cell = |c: Option<usize>| c.and_then(|c| r.get(c)).unwrap_or("").to_string();
        let launch = launches.entry(launch_id).or_insert_with(|| Launch {
            id: launch_id,
            kernel: name.clone(),
            grid: cell(grid),
            block: cell(block),
            counters: Counters::default(),
        });
        let raw = r[value].replace(',', "");
        if raw == "n/a" || raw.is_empty() {
            continue; // ncu could not collect this metric for this kernel
        }
        let number: f64 = raw
            .parse()
            .map_err(|_| format!("{name}: {} is not a number: {:?}", &r[metric], &r[value]))?;
        let scaled = number
            * unit_scale(&r[unit])
                .ok_or_else(|| format!("{name}: unknown unit {:?} for {}", &r[unit], &r[metric]))?;
        let c = &mut launch.counters;
        match &r[metric] {
            "dram__bytes.sum" => c.dram_bytes = Some(scaled),
            "lts__t_bytes.sum" => c.l2_bytes = Some(scaled),
            "l1tex__t_bytes.sum" => c.l1_bytes = Some(scaled),
            "sm__warps_active.avg.pct_of_peak_sustained_active" => {
                c.achieved_occupancy_pct = Some(number)
            }
            "sm__maximum_warps_per_active_cycle_pct" => c.theoretical_occupancy_pct = Some(number),
            WARP_CYCLES_PER_ISSUE => c.warp_cycles_per_issue = Some(number),
            other => {
                if let Some(state) = stall_state(other) {
                    c.warp_states.insert(state.to_string(), number);
                }
            }
        }
    }
    Ok(launches.into_values().collect())
}

/// ncu's options before the profiled program: clocks left alone, the
/// caches as `cache` says, CSV with byte counts in bytes, [`metrics`].
pub fn ncu_args(cache: CacheControl) -> Vec<String> {
    let mut args: Vec<String> = ["--clock-control", "none"]
        .iter()
        .chain(cache.ncu_args())
        .chain(&["--csv", "--print-units", "base", "--metrics"])
        .map(|a| a.to_string())
        .collect();
    args.push(metrics());
    args
}

/// What to do when the counters are restricted.
pub const PERMISSION: &str = "ncu could not read the GPU's performance counters (ERR_NVGPUCTRPERM): the driver lets \
only administrators read them. Run the profile as root (sudo), or load the driver with \
NVreg_RestrictProfilingToAdminUsers=0; where neither is possible (Colab, Kaggle), merge a CSV saved \
elsewhere with `lab <lesson> --ncu-csv FILE`.";

/// `ncu` on the PATH, or in CUDA's usual folders.
pub fn find_ncu() -> Option<PathBuf> {
    crate::asm::find_tool("ncu").or_else(|| {
        let mut candidates = vec![PathBuf::from("/usr/local/cuda/bin/ncu")];
        if let Ok(dirs) = std::fs::read_dir("/opt/nvidia/nsight-compute") {
            candidates.extend(dirs.flatten().map(|d| d.path().join("ncu")));
        }
        candidates.into_iter().find(|p| p.is_file())
    })
}

/// Runs `ncu` over `program args` (a lesson's `--profile` run), with the
/// clocks left alone (`--clock-control none`), the caches treated as
/// `cache` says and byte counts in bytes, asking for [`metrics`]; returns
/// its CSV output.
///
/// # Errors
/// ncu missing (where to get it), ncu failing (its last lines), or the
/// counters being restricted ([`PERMISSION`]).
pub fn profile(
    program: &std::path::Path,
    args: &[String],
    cache: CacheControl,
) -> Result<String, String> {
    let ncu = find_ncu().ok_or(
        "ncu (Nsight Compute) is not on the PATH or in /usr/local/cuda/bin or /opt/nvidia/nsight-compute; \
         it comes with the CUDA toolkit",
    )?;
    let out = Command::new(&ncu)
        .args(ncu_args(cache))
        .arg(program)
        .args(args)
        .output()
        .map_err(|e| format!("could not start {}: {e}", ncu.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stdout.contains("ERR_NVGPUCTRPERM") || stderr.contains("ERR_NVGPUCTRPERM") {
        return Err(PERMISSION.to_string());
    }
    if !out.status.success() {
        let tail: Vec<&str> = stderr.lines().chain(stdout.lines()).rev().take(6).collect();
        return Err(format!(
            "ncu failed ({}): {}",
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        ));
    }
    Ok(stdout)
}

/// The factor that turns a value in ncu's `unit` into the base unit: bytes
/// for byte units (decimal and binary, any case), 1 for percentages and
/// counts; `None` for a byte unit it does not know.
fn unit_scale(unit: &str) -> Option<f64> {
    let u = unit.to_ascii_lowercase();
    let scale = match u.as_str() {
        "byte" | "b" => 1.0,
        "kbyte" | "kb" => 1e3,
        "mbyte" | "mb" => 1e6,
        "gbyte" | "gb" => 1e9,
        "tbyte" | "tb" => 1e12,
        "kibyte" | "kib" => 1024.0,
        "mibyte" | "mib" => 1024.0 * 1024.0,
        "gibyte" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "tibyte" | "tib" => 1024.0f64.powi(4),
        _ if u.contains("byte") => return None,
        _ => 1.0,
    };
    Some(scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "==PROF== Connected to process 1234 (lab)\n\
\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\
\"0\",\"1\",\"lab\",\"h\",\"copy_coalesced\",\"1\",\"13\",\"(256, 1, 1)\",\"(65536, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"dram__bytes.sum\",\"byte\",\"536,870,912\"\n\
\"0\",\"1\",\"lab\",\"h\",\"copy_coalesced\",\"1\",\"13\",\"(256, 1, 1)\",\"(65536, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"lts__t_bytes.sum\",\"Mbyte\",\"540.5\"\n\
\"0\",\"1\",\"lab\",\"h\",\"copy_coalesced\",\"1\",\"13\",\"(256, 1, 1)\",\"(65536, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"sm__warps_active.avg.pct_of_peak_sustained_active\",\"%\",\"88.5\"\n\
\"1\",\"1\",\"lab\",\"h\",\"matmul_naive\",\"1\",\"13\",\"(16, 16, 1)\",\"(32, 32, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"dram__bytes.sum\",\"Kbyte\",\"3,150.25\"\n\
\"2\",\"1\",\"lab\",\"h\",\"matmul_naive\",\"1\",\"13\",\"(16, 16, 1)\",\"(32, 32, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"dram__bytes.sum\",\"byte\",\"1\"\n";

    #[test]
    fn reads_counters_in_any_unit_and_keeps_the_first_launch() {
        let m = parse_csv(CSV).unwrap();
        assert_eq!(m.len(), 2);
        let copy = &m["copy_coalesced"];
        assert_eq!(copy.dram_bytes, Some(536_870_912.0));
        assert_eq!(copy.l2_bytes, Some(540.5e6));
        assert_eq!(copy.l1_bytes, None);
        assert_eq!(copy.achieved_occupancy_pct, Some(88.5));
        assert_eq!(m["matmul_naive"].dram_bytes, Some(3_150_250.0));
    }

    #[test]
    fn units_cases_and_missing_values() {
        assert_eq!(unit_scale("Mbyte"), Some(1e6));
        assert_eq!(unit_scale("kbyte"), Some(1e3));
        assert_eq!(unit_scale("Mibyte"), Some(1_048_576.0));
        assert_eq!(unit_scale("Tibyte"), Some(1024.0f64.powi(4)));
        assert_eq!(unit_scale("%"), Some(1.0));
        assert_eq!(unit_scale("Pbyte"), None);
        let header = "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"";
        let csv = format!(
            "\"ID\" appears in this warning first\n{header}\n\"0\",\"k\",\"dram__bytes.sum\",\"byte\",\"n/a\"\n\
             ==PROF== a line in between\n\"0\",\"k\",\"lts__t_bytes.sum\",\"Mibyte\",\"2\"\n"
        );
        let m = parse_csv(&csv).unwrap();
        assert_eq!(m["k"].dram_bytes, None);
        assert_eq!(m["k"].l2_bytes, Some(2.0 * 1_048_576.0));
        let bad = format!("{header}\n\"0\",\"k\",\"dram__bytes.sum\",\"Pbyte\",\"1\"\n");
        assert!(parse_csv(&bad).unwrap_err().contains("unknown unit"));
    }

    /// Rows as ncu 2025 writes them with `--csv --print-units base`: every
    /// column quoted, the launch's columns repeated on each metric row,
    /// metrics in name order, thousands separators in the values. Two
    /// launches of one kernel at two grids, the second with stall metrics.
    fn stall_csv() -> String {
        let row = |id: u32, grid: &str, metric: &str, unit: &str, value: &str| {
            format!(
                "\"{id}\",\"2211\",\"lab\",\"127.0.0.1\",\"chain_fused\",\"1\",\"13\",\"(256, 1, 1)\",\"{grid}\",\"0\",\"9.0\",\
                 \"Command line profiler metrics\",\"{metric}\",\"{unit}\",\"{value}\"\n"
            )
        };
        let mut csv = String::from(
            "==PROF== Connected to process 2211 (/work/lab)\nprofile mode: 2 launches\n\
             \"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\
             \"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n",
        );
        csv += &row(
            0,
            "(262144, 1, 1)",
            "dram__bytes.sum",
            "byte",
            "805,306,368",
        );
        csv += &row(1, "(65536, 1, 1)", "dram__bytes.sum", "byte", "201,326,592");
        csv += &row(1, "(65536, 1, 1)", WARP_CYCLES_PER_ISSUE, "", "40");
        csv += &row(
            1,
            "(65536, 1, 1)",
            &stall_metric("long_scoreboard"),
            "",
            "28",
        );
        csv += &row(1, "(65536, 1, 1)", &stall_metric("no_instruction"), "", "0");
        csv += &row(1, "(65536, 1, 1)", &stall_metric("not_selected"), "", "1.5");
        csv += &row(1, "(65536, 1, 1)", &stall_metric("selected"), "", "1");
        csv += &row(
            1,
            "(65536, 1, 1)",
            &stall_metric("short_scoreboard"),
            "",
            "n/a",
        );
        csv += &row(1, "(65536, 1, 1)", &stall_metric("wait"), "", "6");
        csv += &row(1, "(65536, 1, 1)", &stall_metric("lg_throttle"), "", "3.5");
        csv += "==PROF== Disconnected from process 2211\n";
        csv
    }

    #[test]
    fn stall_reasons_are_read_ranked_and_shared_out() {
        let launches = parse_launches(&stall_csv()).unwrap();
        assert_eq!(launches.len(), 2);
        assert_eq!(launches[0].blocks(), Some(262_144));
        assert_eq!(launches[1].block, "(256, 1, 1)");
        let c = &launches[1].counters;
        assert_eq!(c.dram_bytes, Some(201_326_592.0));
        assert_eq!(c.warp_cycles_per_issue, Some(40.0));
        // n/a is not read; a state at 0 is read but never ranked.
        assert!(!c.warp_states.contains_key("short_scoreboard"));
        assert_eq!(c.warp_states["no_instruction"], 0.0);
        let top = c.top_stalls(TOP_STALLS);
        let names: Vec<&str> = top.iter().map(|s| s.reason.as_str()).collect();
        // The issuing state (1 cycle) is never a reason; 1.5 is fourth.
        assert_eq!(names, ["long_scoreboard", "wait", "lg_throttle"]);
        assert_eq!(top[0].share, 28.0 / 40.0);
        assert_eq!(top[2].cycles_per_issue, 3.5);
        // Without ncu's total, the states' own sum (40) is the total.
        let mut without = c.clone();
        without.warp_cycles_per_issue = None;
        assert_eq!(without.top_stalls(1)[0].share, 28.0 / 40.0);

        let profile = Profile::parse(&stall_csv(), CacheControl::AsLeft).unwrap();
        // The first launch keeps the kernel's name; the last at a grid is found.
        assert_eq!(
            profile.by_kernel()["chain_fused"].dram_bytes,
            Some(805_306_368.0)
        );
        assert_eq!(profile.last_at("chain_fused", 65_536).unwrap().id, 1);
        assert!(profile.last_at("chain_fused", 4).is_none());
        let section = profile.section();
        assert!(
            section.contains("long_scoreboard 70%, wait 15%, lg_throttle 9%"),
            "{section}"
        );
        assert!(section.contains("| 805.3 "), "{section}");
        assert!(section.contains("no flush"), "{section}");
        let mut lines = vec![
            serde_json::json!({"symbol": "chain_fused/16777216"}),
            serde_json::json!({"symbol": "apply_gelu"}),
        ];
        profile.annotate(&mut lines);
        assert_eq!(lines[0]["ncu"]["dram_bytes"], 805_306_368.0);
        // Which launch the counters come from: the kernel's first.
        assert_eq!(lines[0]["ncu_launch"]["launch"], 0);
        assert!(lines[0]["ncu_launch"]["grid"].is_string(), "{}", lines[0]);
        assert!(lines[1].get("ncu").is_none());
        assert!(lines[1].get("ncu_launch").is_none());
        let rows = profile.json_lines("fusion", &serde_json::Value::Null);
        assert_eq!(rows[1]["ncu"]["top_stalls"][0]["reason"], "long_scoreboard");
        assert!(rows.iter().all(|r| r.get("symbol").is_none()));
    }

    #[test]
    fn every_warp_state_is_asked_for_with_the_cache_choice() {
        let args = ncu_args(CacheControl::AsLeft);
        let joined = args.join(" ");
        assert!(
            joined.contains("--cache-control none --replay-mode application"),
            "{joined}"
        );
        assert!(
            ncu_args(CacheControl::Flush)
                .join(" ")
                .contains("--cache-control all")
        );
        let asked = args.last().unwrap();
        for state in WARP_STATES {
            assert_eq!(stall_state(&stall_metric(state)), Some(state));
            assert!(asked.contains(&stall_metric(state)), "{state}");
        }
        assert!(asked.contains("dram__bytes.sum") && asked.contains(WARP_CYCLES_PER_ISSUE));
    }

    #[test]
    fn restricted_counters_say_how_to_allow_them() {
        let err = parse_csv("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission")
            .unwrap_err();
        assert!(
            err.contains("NVreg_RestrictProfilingToAdminUsers=0"),
            "{err}"
        );
        assert!(
            parse_csv("no csv here")
                .unwrap_err()
                .contains("no ncu CSV header")
        );
    }
}
