//! Measured bytes from Nsight Compute: the counters the roofline seed's
//! title promises beside the compulsory bytes. `ncu` profiles a lesson's
//! `--profile` run (one launch per kernel) and writes CSV; this module reads
//! that CSV, so a report can be merged from a saved file on a machine
//! without counters (or without a GPU).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use serde::Serialize;

/// The metrics `cargo xtask profile` asks ncu for, in its `--metrics` form.
pub const METRICS: &str = "dram__bytes.sum,lts__t_bytes.sum,l1tex__t_bytes.sum,\
sm__warps_active.avg.pct_of_peak_sustained_active,sm__maximum_warps_per_active_cycle_pct";

/// One kernel's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
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
}

/// Reads ncu's `--csv` output: one row per (kernel launch, metric), with
/// the columns "Kernel Name", "Metric Name", "Metric Unit" and "Metric
/// Value". Byte counts in any of ncu's units (byte, Kbyte, Mbyte, Gbyte,
/// and the binary KiB-style ones) become bytes; thousands separators are
/// dropped. A kernel launched more than once keeps its first launch's
/// counters.
///
/// # Errors
/// A CSV without those columns, or a value that is not a number. When ncu
/// could not read the counters its output holds `ERR_NVGPUCTRPERM`; the
/// error then says how to allow them.
pub fn parse_csv(text: &str) -> Result<BTreeMap<String, Counters>, String> {
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
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or(format!("the CSV has no {name:?} column"))
    };
    let (id, kernel, metric, unit, value) = (
        col("ID")?,
        col("Kernel Name")?,
        col("Metric Name")?,
        col("Metric Unit")?,
        col("Metric Value")?,
    );
    let mut out: BTreeMap<String, Counters> = BTreeMap::new();
    let mut first_launch: BTreeMap<String, String> = BTreeMap::new();
    for record in reader.records() {
        let r = record.map_err(|e| e.to_string())?;
        if r.len() <= value.max(kernel).max(metric).max(unit).max(id) {
            continue;
        }
        let name = r[kernel].to_string();
        let launch = first_launch
            .entry(name.clone())
            .or_insert_with(|| r[id].to_string());
        if *launch != r[id] {
            continue;
        }
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
        let c = out.entry(name).or_default();
        match &r[metric] {
            "dram__bytes.sum" => c.dram_bytes = Some(scaled),
            "lts__t_bytes.sum" => c.l2_bytes = Some(scaled),
            "l1tex__t_bytes.sum" => c.l1_bytes = Some(scaled),
            "sm__warps_active.avg.pct_of_peak_sustained_active" => {
                c.achieved_occupancy_pct = Some(number)
            }
            "sm__maximum_warps_per_active_cycle_pct" => c.theoretical_occupancy_pct = Some(number),
            _ => {}
        }
    }
    Ok(out)
}

/// What to do when the counters are restricted.
pub const PERMISSION: &str = "ncu could not read the GPU's performance counters (ERR_NVGPUCTRPERM): the driver lets \
only administrators read them. Run the profile as root (sudo), or load the driver with \
NVreg_RestrictProfilingToAdminUsers=0; where neither is possible (Colab, Kaggle), merge a CSV saved \
elsewhere with `lab roofline --ncu-csv FILE`.";

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
/// clocks left alone (`--clock-control none`) and byte counts in bytes, and
/// returns its CSV output. ncu's default cache control stays: it flushes
/// the caches before each profiled kernel, so the bytes are those of one
/// cold-cache launch (the report says so).
///
/// # Errors
/// ncu missing (where to get it), ncu failing (its last lines), or the
/// counters being restricted ([`PERMISSION`]).
pub fn profile(program: &std::path::Path, args: &[String]) -> Result<String, String> {
    let ncu = find_ncu().ok_or(
        "ncu (Nsight Compute) is not on the PATH or in /usr/local/cuda/bin or /opt/nvidia/nsight-compute; \
         it comes with the CUDA toolkit",
    )?;
    let out = Command::new(&ncu)
        .args([
            "--clock-control",
            "none",
            "--csv",
            "--print-units",
            "base",
            "--metrics",
            METRICS,
        ])
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
        let copy = m["copy_coalesced"];
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
