//! NVRTC's share of the specialization's compile-time cost (chapter 19.3),
//! for `cargo xtask specialize-cost`: the specialize lesson's CUDA C twins
//! compiled with `dot_specialized_N` instantiated for 1, 4 and 16 lengths
//! (N = 16; the lesson's 2, 4, 8, 16; N = 1 to 16: the same lists as the
//! kernels crate's cost builds), `REPS` timed compiles each (after one
//! untimed compile of each), the counts interleaved. Needs NVRTC, no GPU.
//! Prints one JSON object: NVRTC's version, the architecture, and per count
//! the wall times (ms), their median and the PTX size.
//!
//! Usage: `specialize_nvrtc_cost [REPS]` (default 3).

use std::time::Instant;

use host::specialize::cuda_c_with;

/// The lengths of each cost build (the lists of `lab_specialize_cost` in
/// kernels-gpu/src/specialize.rs).
fn lengths(count: usize) -> Vec<usize> {
    match count {
        1 => vec![16],
        4 => vec![2, 4, 8, 16],
        _ => (1..=16).collect(),
    }
}

/// The median of `v`, ms.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let reps: usize = match std::env::args().nth(1) {
        Some(a) => a
            .parse()
            .map_err(|_| format!("REPS must be a positive integer, not {a:?}"))?,
        None => 3,
    };
    if reps == 0 {
        return Err("REPS must be at least 1".into());
    }
    let nvrtc = host::nvrtc::library()?;
    // The architecture the lesson's default PTX targets (a T4's); NVRTC
    // compiles for it without a GPU.
    let cc = (7, 5);
    let counts = [1usize, 4, 16];
    let sources: Vec<String> = counts.iter().map(|&c| cuda_c_with(&lengths(c))).collect();
    let mut ptx_bytes = Vec::new();
    for (source, count) in sources.iter().zip(counts) {
        let ptx = nvrtc.compile(source, "specialize.cu", cc)?;
        let entries = ptx.matches(".entry dot_specialized_").count();
        if entries != count {
            return Err(format!("{count} instantiation(s) gave {entries} entries").into());
        }
        ptx_bytes.push(ptx.len());
    }
    let mut times = vec![Vec::new(); counts.len()];
    for _ in 0..reps {
        for (i, source) in sources.iter().enumerate() {
            let start = Instant::now();
            nvrtc.compile(source, "specialize.cu", cc)?;
            times[i].push(start.elapsed().as_secs_f64() * 1e3);
        }
    }
    let per_count: Vec<serde_json::Value> = counts
        .iter()
        .zip(&times)
        .zip(&ptx_bytes)
        .map(|((count, t), bytes)| {
            serde_json::json!({
                "instantiations": count,
                "lengths": lengths(*count),
                "compile_ms": t,
                "median_compile_ms": median(t.clone()),
                "ptx_bytes": bytes,
            })
        })
        .collect();
    let (major, minor) = nvrtc.version();
    println!(
        "{}",
        serde_json::json!({
            "nvrtc_version": format!("{major}.{minor}"),
            "arch": format!("sm_{}{}", cc.0, cc.1),
            "reps": reps,
            "per_count": per_count,
        })
    );
    Ok(())
}
