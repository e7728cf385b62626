//! The softmax lesson's report: per variant and geometry, the time launched
//! directly and replayed from a CUDA graph, the effective bandwidth over the
//! compulsory bytes, launches and kernel nodes, the graph's costs, and every
//! refusal with the limit it hit; a table for people and JSON lines for
//! scripts.

use std::fmt::Write as _;

use kernels_gpu::softmax::*;
use serde_json::json;

use super::{COMPULSORY_FLOATS, Geometry, Isolation, Ran, Row, Shape, Variant};
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
    /// Whether Nsight Compute's counters were merged (`--ncu`): they then
    /// measure how much of the traffic DRAM served.
    pub profiled: bool,
}

fn ms(t: &Timing) -> String {
    format!("{:.4}", t.median_ms())
}

/// Whether a difference between two timed rows stands out of their noise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reading {
    /// The difference is larger than the noise: a cost (positive) or a
    /// saving (negative).
    Past,
    /// The difference is within the noise.
    Within,
    /// A row has fewer than two batches: no spread was measured, so no
    /// reading is made.
    NoSpread,
}

/// One isolated cost at one geometry: `isolation.variant`'s replay median
/// minus `isolation.against`'s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Difference {
    /// The geometry both ran at.
    pub geometry: Geometry,
    /// The paying family's replay median, ms.
    pub variant_ms: f64,
    /// The reference family's replay median, ms.
    pub against_ms: f64,
    /// The noise, microseconds: the wider of the two rows' batch ranges
    /// (slowest minus fastest batch of the replay timing).
    pub noise_us: f64,
}

impl Difference {
    /// The difference of the medians, microseconds (positive: a cost).
    pub fn us(&self) -> f64 {
        (self.variant_ms - self.against_ms) * 1e3
    }

    /// The difference as a percentage of the reference family's median.
    pub fn pct(&self) -> f64 {
        100.0 * (self.variant_ms - self.against_ms) / self.against_ms
    }

    /// Past the noise, within it, or no reading (a single batch).
    pub fn reading(&self, batches: usize) -> Reading {
        if batches < 2 {
            Reading::NoSpread
        } else if self.us().abs() > self.noise_us {
            Reading::Past
        } else {
            Reading::Within
        }
    }
}

/// Every geometry at which both of `isolation`'s families ran, in report
/// order, with their replay medians and noise; and the fewest batches any
/// of those timings has.
pub fn differences(rows: &[Row], isolation: &Isolation) -> (Vec<Difference>, usize) {
    let ran: Vec<&Ran> = rows
        .iter()
        .filter_map(|r| {
            if let Row::Ran(r) = r {
                Some(&**r)
            } else {
                None
            }
        })
        .collect();
    let find = |v: Variant, g: Geometry| {
        ran.iter()
            .find(|r| r.plan.variant == v && r.plan.geometry == g)
            .copied()
    };
    let range_us = |t: &Timing| (t.max_ms() - t.min_ms()) * 1e3;
    let mut batches = usize::MAX;
    let mut out = Vec::new();
    for r in ran.iter().filter(|r| r.plan.variant == isolation.against) {
        if let Some(v) = find(isolation.variant, r.plan.geometry) {
            batches = batches
                .min(r.replay.samples_ms.len())
                .min(v.replay.samples_ms.len());
            out.push(Difference {
                geometry: r.plan.geometry,
                variant_ms: v.replay.median_ms(),
                against_ms: r.replay.median_ms(),
                noise_us: range_us(&v.replay).max(range_us(&r.replay)),
            });
        }
    }
    let batches = if out.is_empty() { 0 } else { batches };
    (out, batches)
}

/// The report's lines on what each megakernel family isolates: per
/// [`Variant::ISOLATIONS`] pair, the difference at the reference family's
/// fastest geometry (in us and %, with its reading against the noise), then
/// how many geometries show a cost or a saving past the noise.
pub fn isolation_lines(rows: &[Row]) -> Vec<String> {
    let mut lines = Vec::new();
    for isolation in &Variant::ISOLATIONS {
        let pair = format!(
            "{} - {}",
            isolation.variant.label(),
            isolation.against.label()
        );
        let (diffs, batches) = differences(rows, isolation);
        let Some(best) = diffs
            .iter()
            .min_by(|a, b| a.against_ms.total_cmp(&b.against_ms))
        else {
            lines.push(format!(
                "{pair} ({}): not measured, the two never ran at the same geometry",
                isolation.what
            ));
            continue;
        };
        let reading = match best.reading(batches) {
            Reading::Past if best.us() > 0.0 => {
                format!("a cost past the noise ({:.1} us)", best.noise_us)
            }
            Reading::Past => format!("a saving past the noise ({:.1} us)", best.noise_us),
            Reading::Within => format!("within the noise ({:.1} us)", best.noise_us),
            Reading::NoSpread => "one batch: no spread measured, so no reading".to_string(),
        };
        let mut line = format!(
            "{pair} ({}): at W={} T={} ({}'s fastest) {:+.1} us ({:+.1}%), {reading}",
            isolation.what,
            best.geometry.w,
            best.geometry.t,
            isolation.against.label(),
            best.us(),
            best.pct()
        );
        if batches >= 2 {
            let count = |f: &dyn Fn(&Difference) -> bool| diffs.iter().filter(|d| f(d)).count();
            let past = |d: &Difference| d.reading(batches) == Reading::Past;
            let costs = count(&|d| past(d) && d.us() > 0.0);
            let savings = count(&|d| past(d) && d.us() < 0.0);
            let _ = write!(
                line,
                "; over the {} both ran at: a cost past the noise at {costs}, a saving at {savings}, within the noise at {}",
                if diffs.len() == 1 {
                    "1 geometry".to_string()
                } else {
                    format!("{} geometries", diffs.len())
                },
                diffs.len() - costs - savings
            );
        }
        lines.push(line);
    }
    lines
}

/// Builds the report of a passed run.
pub fn build(context: Context, shape: Shape, rows: Vec<Row>, shared_optin: usize) -> Report {
    Report {
        context,
        shape,
        rows,
        shared_optin,
        profiled: false,
    }
}

impl crate::lesson::Report for Report {
    fn context_mut(&mut self) -> &mut Context {
        &mut self.context
    }

    fn merge_counters(&mut self, _profile: &crate::ncu::Profile) {
        // The counters print in their own section (the runner's); the
        // report only stops saying that none measure the L2's share.
        self.profiled = true;
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
             node per launch{}, each node launching a kernel of its sequence with the planned block and shared memory \
             over grids that cover every tile once, and every graph's first replay reproduces the direct run bit for bit.",
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
             than HBM: {}.\n",
            per_variant.join(", "),
            if self.profiled {
                "Nsight Compute's DRAM and L2 bytes per kernel, at the end, measure how much"
            } else {
                "no counters measure that in this run (--ncu adds them)"
            }
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
        let _ = writeln!(
            s,
            "\nWhat each megakernel family isolates (replay medians, paying family minus the one it is measured against, \
             which differs from it in one thing; the noise is the wider of the two rows' batch ranges, slowest minus \
             fastest batch):"
        );
        for line in isolation_lines(&self.rows) {
            let _ = writeln!(s, "  {line}");
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
            "\nGraphs: host microseconds to capture, instantiate, and run the first replay to completion; each \
             kernel the graph's nodes launch, with its registers per thread and static shared bytes per block \
             (cuFuncGetAttribute on the node's function)"
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
            "kernels: registers, static shared B",
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
                    r.graph
                        .resources()
                        .iter()
                        .map(|(name, regs, shared, _)| format!("{name} {regs}, {shared}"))
                        .collect::<Vec<_>>()
                        .join("; "),
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
                        "node_types": r.graph.node_types,
                        "kernel_launches": r.graph.kernels.iter().map(|k| json!({
                            "symbol": k.symbol, "grid": [k.grid.0, k.grid.1, k.grid.2],
                            "block": [k.block.0, k.block.1, k.block.2], "dynamic_shared_bytes": k.dynamic_shared_bytes,
                            "registers": k.registers, "static_shared_bytes": k.static_shared_bytes, "local_bytes": k.local_bytes,
                        })).collect::<Vec<_>>(),
                        "resources": r.graph.resources().iter().map(|(name, regs, shared, local)| (name.to_string(), json!({
                            "registers": regs, "static_shared_bytes": shared, "local_bytes": local,
                        }))).collect::<serde_json::Map<_, _>>(),
                        "kernel_symbol": r.plan.variant.main_symbol(),
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
