//! The softmax lesson's report: per variant and geometry, the time launched
//! directly and replayed from a CUDA graph, the effective bandwidth over the
//! compulsory bytes, launches and kernel nodes, the graph's costs, and every
//! refusal with the limit it hit; a table for people and JSON lines for
//! scripts.

use std::fmt::Write as _;

use kernels_gpu::softmax::*;
use serde_json::json;

use super::{COMPULSORY_FLOATS, Row, Shape};
use crate::report::{Context, table};
use crate::timing::Timing;

/// GB/s over the compulsory bytes (x read once, y written once: 8 bytes per
/// element) of `elems` elements in `ms`.
pub fn compulsory_gb_per_s(elems: usize, ms: f64) -> f64 {
    COMPULSORY_FLOATS * 4.0 * elems as f64 / (ms * 1e-3) / 1e9
}

/// The block sizes as the JSON context records them.
pub fn block_sizes_json() -> serde_json::Value {
    json!({"all": BLOCK_SIZES})
}

/// The whole report of a passed run.
pub struct Report {
    /// The run's context.
    pub context: Context,
    /// The matrix.
    pub shape: Shape,
    /// Every variant at every geometry.
    pub rows: Vec<Row>,
    /// The device's opt-in shared memory per block, bytes.
    pub shared_optin: usize,
}

fn ms(t: &Timing) -> String {
    format!("{:.4}", t.median_ms())
}

impl Report {}

/// Builds the report of a passed run.
pub fn build(context: Context, shape: Shape, rows: Vec<Row>, shared_optin: usize) -> Report {
    Report {
        context,
        shape,
        rows,
        shared_optin,
    }
}

impl crate::lesson::Report for Report {
    fn context_mut(&mut self) -> &mut Context {
        &mut self.context
    }

    /// The human-readable report.
    fn table(&self) -> String {
        let c = &self.context;
        let elems = self.shape.elems();
        let mut s = String::new();
        s.push_str(&c.header());
        let _ = writeln!(
            s,
            "Matrix {} rows x {} columns ({:.1} MB a buffer, {:.1}x the L2); opt-in shared memory {} bytes per block.",
            self.shape.rows,
            self.shape.n,
            (elems * 4) as f64 / 1e6,
            (elems * 4) as f64 / (c.l2_bytes.max(1)) as f64,
            self.shared_optin
        );
        let ran = self
            .rows
            .iter()
            .filter(|r| matches!(r, Row::Ran(_)))
            .count();
        let worst = self
            .rows
            .iter()
            .filter_map(|r| {
                if let Row::Ran(r) = r {
                    Some(r.max_rel_error)
                } else {
                    None
                }
            })
            .fold(0.0, f64::max);
        let cooperative_ran = self
            .rows
            .iter()
            .any(|r| matches!(r, Row::Ran(r) if r.plan.variant.cooperative()));
        let _ = writeln!(
            s,
            "All {ran} runs match the f64 reference within {REL_TOLERANCE:e} relative (largest error seen {worst:.2e}; \
             y, e and the statistics arrays poisoned with NaN before each checked run); every graph has one kernel \
             node per launch{}, and every graph's first replay reproduces the direct run bit for bit.",
            if cooperative_ran {
                ", the cooperative attribute on exactly the megakernel's nodes"
            } else {
                ", none cooperative (no megakernel geometry was admitted)"
            }
        );
        let plural =
            |n: u32, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let _ = writeln!(
            s,
            "Timing: median of {} of {} of the whole launch sequence after {} (CUDA events), L2 {}.",
            plural(c.timing.batches, "batch", "batches"),
            plural(c.timing.launches_per_batch, "run", "runs"),
            plural(c.timing.warmups, "warm-up", "warm-ups"),
            if c.l2_flushed {
                "flushed before each run"
            } else {
                "warm"
            }
        );
        let per_variant: Vec<String> = super::Variant::ALL
            .iter()
            .map(|v| format!("{} {}", v.label(), v.floats_per_elem()))
            .collect();
        let _ = writeln!(
            s,
            "Compulsory bytes: x read once and y written once, 8 bytes per element; GB/s below is over those bytes. \
             'moved' is the global traffic the variant's kernels issue per element, over the compulsory bytes \
             (floats per element: {}; the small statistics arrays left out). Some of it may be served by L2 rather \
             than HBM: no counters measure that here.\n",
            per_variant.join(", ")
        );
        // The clock column only where a replay's clock is flagged.
        let flagged = self
            .rows
            .iter()
            .any(|row| matches!(row, Row::Ran(r) if self.context.clock_flag(&r.replay).is_some()));
        let mut header = vec![
            "variant",
            "W",
            "T",
            "blocks/SM",
            "rows/launch",
            "launches",
            "kernel nodes",
            "direct ms",
            "replay ms",
            "replay saves us",
            "GB/s (replay)",
            "moved",
            crate::report::VERDICT_COLUMN,
        ];
        if flagged {
            header.push(crate::report::CLOCK_COLUMN);
        }
        let mut t = table(&header);
        let mut refusals = Vec::new();
        for row in &self.rows {
            match row {
                Row::Refused {
                    variant,
                    geometry,
                    refusal,
                } => {
                    let mut cells = vec![
                        variant.label().to_string(),
                        geometry.w.to_string(),
                        geometry.t.to_string(),
                        "-".into(),
                        "-".into(),
                        "0".into(),
                        "-".into(),
                        "refused".into(),
                        "refused".into(),
                        "-".into(),
                        "-".into(),
                        "-".into(),
                        "-".into(),
                    ];
                    if flagged {
                        cells.push("-".into());
                    }
                    t.add_row(cells);
                    let line = format!("W={} T={}: {refusal}", geometry.w, geometry.t);
                    if !refusals.contains(&line) {
                        refusals.push(line);
                    }
                }
                Row::Ran(r) => {
                    let mut cells = vec![
                        r.plan.variant.label().to_string(),
                        r.plan.geometry.w.to_string(),
                        r.plan.geometry.t.to_string(),
                        r.plan
                            .blocks_per_sm
                            .map_or("-".to_string(), |b| b.to_string()),
                        r.plan.group_rows.to_string(),
                        r.plan.launches.to_string(),
                        r.graph.kernel_nodes.to_string(),
                        ms(&r.direct),
                        ms(&r.replay),
                        format!("{:.1}", (r.direct.median_ms() - r.replay.median_ms()) * 1e3),
                        format!("{:.1}", compulsory_gb_per_s(elems, r.replay.median_ms())),
                        format!(
                            "{:.1}x",
                            r.plan.variant.floats_per_elem() / COMPULSORY_FLOATS
                        ),
                        // Seed 002's reading of the replay's rate, and its clock.
                        self.context
                            .dram_verdict(compulsory_gb_per_s(elems, r.replay.median_ms()))
                            .map_or("-".to_string(), |v| v.words()),
                    ];
                    if flagged {
                        cells.push(
                            self.context
                                .clock_flag(&r.replay)
                                .unwrap_or_else(|| "-".to_string()),
                        );
                    }
                    t.add_row(cells);
                }
            }
        }
        let _ = writeln!(s, "{t}");
        let _ = writeln!(
            s,
            "blocks/SM: the occupancy API's figure for the megakernel at its shared memory; rows/launch = blocks/SM x SMs / \
             tiles per row, capped at the rows. 'replay saves' is direct minus replay, per run of the whole sequence."
        );
        let _ = writeln!(s, "\nFastest geometry of each variant (replayed):");
        for variant in super::Variant::ALL {
            let best = self
                .rows
                .iter()
                .filter_map(|r| if let Row::Ran(r) = r { Some(r) } else { None })
                .filter(|r| r.plan.variant == variant)
                .min_by(|a, b| a.replay.median_ms().total_cmp(&b.replay.median_ms()));
            if let Some(r) = best {
                let gbs = compulsory_gb_per_s(elems, r.replay.median_ms());
                let _ = writeln!(
                    s,
                    "  {:<13} W={:<6} T={:<4} {:.4} ms, {gbs:.1} GB/s over the compulsory bytes, {:.1} GB/s over the bytes its kernels issue",
                    variant.label(),
                    r.plan.geometry.w,
                    r.plan.geometry.t,
                    r.replay.median_ms(),
                    gbs * variant.floats_per_elem() / COMPULSORY_FLOATS
                );
            }
        }
        if !refusals.is_empty() {
            let _ = writeln!(
                s,
                "\nRefused at admission (the megakernel variants, before any launch):"
            );
            for r in refusals {
                let _ = writeln!(s, "  {r}");
            }
        }
        let _ = writeln!(
            s,
            "\nGraphs: host microseconds to capture, instantiate, and run the first replay to completion"
        );
        let mut t = table(&[
            "variant",
            "W",
            "T",
            "nodes",
            "cooperative nodes",
            "capture us",
            "instantiate us",
            "first replay us",
            "max rel error",
        ]);
        for row in &self.rows {
            if let Row::Ran(r) = row {
                t.add_row(vec![
                    r.plan.variant.label().to_string(),
                    r.plan.geometry.w.to_string(),
                    r.plan.geometry.t.to_string(),
                    r.graph.nodes.to_string(),
                    r.graph
                        .cooperative
                        .iter()
                        .filter(|&&c| c)
                        .count()
                        .to_string(),
                    format!("{:.1}", r.graph.capture_us),
                    format!("{:.1}", r.graph.instantiate_us),
                    format!("{:.1}", r.graph.first_replay_us),
                    format!("{:.2e}", r.max_rel_error),
                ]);
            }
        }
        let _ = writeln!(s, "{t}");
        s
    }

    /// One JSON object per variant and geometry, each with the run's
    /// context.
    fn json_lines(&self) -> Vec<serde_json::Value> {
        let ctx = serde_json::to_value(&self.context).expect("the context serialises");
        let elems = self.shape.elems();
        let timing = |t: &Timing| json!({"ms": t.median_ms(), "ms_min": t.min_ms(), "ms_max": t.max_ms(), "samples_ms": t.samples_ms});
        self.rows
            .iter()
            .map(|row| match row {
                Row::Refused {
                    variant,
                    geometry,
                    refusal,
                } => json!({
                    "variant": variant.label(), "W": geometry.w, "T": geometry.t, "status": "refused",
                    "refusal": refusal.to_string(), "launches": 0, "context": ctx,
                }),
                Row::Ran(r) => {
                    let symbol = format!("{} W{} T{}", r.plan.variant.label(), r.plan.geometry.w, r.plan.geometry.t);
                    let mut line = json!({
                        "variant": r.plan.variant.label(), "W": r.plan.geometry.w, "T": r.plan.geometry.t, "status": "ran",
                        "symbol": symbol, "samples_ms": r.replay.samples_ms,
                        "tiles_per_row": r.plan.tiles, "rows_per_launch": r.plan.group_rows, "launches": r.plan.launches,
                        "shared_bytes": r.plan.shared_bytes, "blocks_per_sm": r.plan.blocks_per_sm,
                        "kernel_nodes": r.graph.kernel_nodes, "nodes": r.graph.nodes, "cooperative": r.graph.cooperative,
                        "capture_us": r.graph.capture_us, "instantiate_us": r.graph.instantiate_us,
                        "first_replay_sync_us": r.graph.first_replay_us,
                        "direct": timing(&r.direct), "replay": timing(&r.replay),
                        "gb_per_s_compulsory": compulsory_gb_per_s(elems, r.replay.median_ms()),
                        "gb_per_s_compulsory_direct": compulsory_gb_per_s(elems, r.direct.median_ms()),
                        "bytes_per_elem_moved": r.plan.variant.floats_per_elem() * 4.0,
                        "moved_over_compulsory": r.plan.variant.floats_per_elem() / COMPULSORY_FLOATS,
                        "max_rel_error": r.max_rel_error,
                        "context": ctx,
                    });
                    crate::report::add_readings(
                        &mut line,
                        self.context
                            .dram_verdict(compulsory_gb_per_s(elems, r.replay.median_ms()))
                            .as_ref(),
                        self.context.while_timed(&r.replay).as_ref(),
                    );
                    line
                }
            })
            .collect()
    }
}
