//! The fusion lesson's report: the byte model from the constants, then the
//! four parts, as a table for people and JSON lines for scripts.

use std::fmt::Write as _;

use kernels_gpu::fusion::*;
use serde::Serialize;
use serde_json::json;

use super::{Kernel, Measured};
use crate::gpu::DeviceInfo;
use crate::kernels::KernelId;
use crate::ncu::Profile;
use crate::report::{CLOCK_COLUMN, Context, VERDICT_COLUMN, Verdict, add_readings, table};
use crate::timing::Timing;

/// Effective bandwidth over compulsory bytes: `floats` per element, `n`
/// elements, in `ms`, GB/s.
pub fn gb_per_s(floats: f64, n: usize, ms: f64) -> f64 {
    floats * n as f64 * 4.0 / (ms * 1e-3) / 1e9
}

/// Microseconds per launch of a batch of `count` launches.
pub fn us_per_launch(batch: &Timing, count: u32) -> f64 {
    batch.median_ms() * 1e3 / count as f64
}

/// Registers per thread at which `info`'s GPU still holds all its resident
/// threads on one SM: registers per SM / threads per SM.
pub fn regs_at_full_occupancy(info: &DeviceInfo) -> u32 {
    info.regs_per_sm / info.max_threads_per_sm.max(1)
}

/// What part 3's last column shows, from the data: the staged chain's time
/// per launch at the smallest n, set against part 1's two empty launches.
/// It is called launch-bound only within 25% of the empty one-block launch.
fn sweep_reading(m: &Measured) -> String {
    let head = "The last column is the staged chain's time over its four launches.";
    let Some((n, staged, _)) = m.sweep.first() else {
        return head.to_string();
    };
    let per_launch = staged.median_ms() * 1e3 / 4.0;
    let one_block = us_per_launch(&m.empty_small, m.sizes.launches_per_batch);
    let full_grid = us_per_launch(&m.empty_full, m.sizes.launches_per_batch);
    let blocks = super::blocks_for(*n, 1);
    if (per_launch - one_block).abs() <= 0.25 * one_block {
        format!(
            "{head} At n = {n} ({blocks} blocks a launch) it is {per_launch:.3} us, within 25% of part 1's empty \
             launch of one block ({one_block:.3} us): launching is all the chain still does there."
        )
    } else {
        format!(
            "{head} At n = {n} ({blocks} blocks a launch) it is {per_launch:.3} us, against part 1's {one_block:.3} us \
             for an empty launch of one block and {full_grid:.3} us over the chain's whole grid."
        )
    }
}

/// How close the measured DRAM-byte ratio of staged to fused must come to
/// their time ratio to explain it: within 10% of the time ratio. Both
/// ratios are of one GPU's figures; the time ratio of this chain moved by
/// about 1% between recorded H200 runs (3.50 to 3.53, the fusion chapter, book/src/fusion.md), and
/// the DRAM counters of a kernel are exact counts, so a gap past 10% is
/// neither's noise.
pub const BYTES_EXPLAIN_WITHIN: f64 = 0.10;

/// Staged against fused at one size, timed and counted: the times from
/// this run's sweep, the DRAM bytes from Nsight Compute (the four stages
/// summed, and chain_fused, each the last launch over that size's grid in
/// the profile, where each met L2 as a timed loop leaves it).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SeedCounters {
    /// Elements.
    pub n: usize,
    /// The staged chain's median time, ms.
    pub staged_ms: f64,
    /// chain_fused's median time, ms.
    pub fused_ms: f64,
    /// DRAM bytes of the four stages, summed.
    pub staged_dram_bytes: f64,
    /// DRAM bytes of chain_fused.
    pub fused_dram_bytes: f64,
    /// Part 1's empty launch of one block, µs: what one more launch costs.
    pub empty_launch_us: f64,
}

/// What the counters say the staged/fused time gap is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Gap {
    /// The DRAM-byte ratio is within [`BYTES_EXPLAIN_WITHIN`] of the time
    /// ratio: the gap is bytes (a cache effect where that ratio is not the
    /// compulsory one).
    Bytes,
    /// The time ratio is larger than the DRAM-byte ratio by more than that:
    /// the rest is not bytes but launches and occupancy (four grids, each
    /// filling and draining the GPU).
    LaunchAndOccupancy,
    /// The time ratio is smaller than the DRAM-byte ratio by more than
    /// that: the staged kernels drew DRAM faster than the fused one.
    FasterThanBytes,
}

impl SeedCounters {
    /// Staged time / fused time.
    pub fn time_ratio(&self) -> f64 {
        self.staged_ms / self.fused_ms
    }

    /// Staged DRAM bytes / fused DRAM bytes.
    pub fn dram_ratio(&self) -> f64 {
        self.staged_dram_bytes / self.fused_dram_bytes
    }

    /// The rule: compare the two ratios, within [`BYTES_EXPLAIN_WITHIN`] of
    /// the time ratio.
    pub fn gap(&self) -> Gap {
        let (t, d) = (self.time_ratio(), self.dram_ratio());
        if (t - d).abs() <= BYTES_EXPLAIN_WITHIN * t {
            Gap::Bytes
        } else if t > d {
            Gap::LaunchAndOccupancy
        } else {
            Gap::FasterThanBytes
        }
    }

    /// The reading in words, from the figures.
    pub fn reading(&self) -> String {
        let (t, d) = (self.time_ratio(), self.dram_ratio());
        let compulsory = STAGED_FLOATS / FUSED_FLOATS;
        let share = |bytes: f64, floats: f64| 100.0 * bytes / (floats * self.n as f64 * 4.0);
        let rate = |bytes: f64, ms: f64| bytes / (ms * 1e-3) / 1e9;
        let mut s = format!(
            "Measured DRAM bytes at n = {}: the staged chain's four kernels moved {:.1} MB ({:.0}% of their compulsory \
             bytes), chain_fused {:.1} MB ({:.0}%): a DRAM ratio of {d:.2} against the compulsory {compulsory:.2}, and a \
             time ratio of {t:.2}. Over the times, DRAM ran at {:.1} GB/s for the staged chain and {:.1} GB/s for \
             chain_fused. ",
            self.n,
            self.staged_dram_bytes / 1e6,
            share(self.staged_dram_bytes, STAGED_FLOATS),
            self.fused_dram_bytes / 1e6,
            share(self.fused_dram_bytes, FUSED_FLOATS),
            rate(self.staged_dram_bytes, self.staged_ms),
            rate(self.fused_dram_bytes, self.fused_ms),
        );
        let within = 100.0 * BYTES_EXPLAIN_WITHIN;
        s.push_str(&match self.gap() {
            Gap::Bytes if (d - compulsory).abs() > BYTES_EXPLAIN_WITHIN * compulsory => format!(
                "The DRAM ratio is within {within:.0}% of the time ratio, so the gap is bytes, and not the compulsory \
                 ones: the caches changed what DRAM moved (a cache effect)."
            ),
            Gap::Bytes => format!(
                "The DRAM ratio is within {within:.0}% of the time ratio and near the compulsory one: the gap is the \
                 compulsory bytes."
            ),
            Gap::LaunchAndOccupancy => format!(
                "The time ratio exceeds the DRAM ratio by {:.2}x, past {within:.0}%: bytes do not explain the gap. The \
                 rest is a launch and occupancy effect (four grids, each filling and draining the GPU, against one), \
                 not a cache effect: the staged chain takes {:.4} ms beyond its DRAM bytes at chain_fused's DRAM rate, \
                 of which its three extra launches at part 1's empty-launch cost are {:.4} ms.",
                t / d,
                self.staged_ms - self.fused_ms * d,
                3.0 * self.empty_launch_us * 1e-3
            ),
            Gap::FasterThanBytes => format!(
                "The time ratio is {:.2}x under the DRAM ratio, past {within:.0}%: the staged kernels drew DRAM faster \
                 than chain_fused, so the bytes overstate the gap.",
                d / t
            ),
        });
        s
    }
}

/// Staged against fused at the seed's [`SEED_ELEMS`], from this run's
/// sweep and `profile`.
///
/// # Errors
/// Why the pair cannot be read, in words: the sweep did not time the
/// seed's size, or the profile lacks one of the five kernels over the
/// seed's grid (a CSV not made by this lesson's `--profile`), or one
/// counted no DRAM bytes.
pub fn seed_counters(m: &Measured, profile: &Profile) -> Result<SeedCounters, String> {
    let n = SEED_ELEMS;
    let (_, staged, fused) = m
        .sweep
        .iter()
        .find(|(size, _, _)| *size == n)
        .ok_or(format!("this run's sweep did not time n = {n}"))?;
    let blocks = super::blocks_for(n, 1) as u64;
    let dram = |k: Kernel| {
        profile
            .last_at(k.symbol(), blocks)
            .and_then(|l| l.counters.dram_bytes)
            .ok_or(format!(
                "the profile has no DRAM bytes for {} over {blocks} blocks (n = {n})",
                k.symbol()
            ))
    };
    let mut staged_dram = 0.0;
    for stage in Kernel::STAGES {
        staged_dram += dram(stage)?;
    }
    let fused_dram = dram(Kernel::Fused)?;
    if fused_dram.is_nan() || fused_dram <= 0.0 {
        return Err(format!("chain_fused counted no DRAM bytes at n = {n}"));
    }
    Ok(SeedCounters {
        n,
        staged_ms: staged.median_ms(),
        fused_ms: fused.median_ms(),
        staged_dram_bytes: staged_dram,
        fused_dram_bytes: fused_dram,
        empty_launch_us: us_per_launch(&m.empty_small, m.sizes.launches_per_batch),
    })
}

/// The whole report.
pub struct Report {
    /// The run's context.
    pub context: Context,
    /// The device.
    pub info: DeviceInfo,
    /// What was measured.
    pub measured: Measured,
    /// Nsight Compute's counters, where merged.
    pub counters: Option<Profile>,
}

impl Report {
    /// Builds the report of a passed run.
    pub fn new(info: &DeviceInfo, context: Context, measured: Measured) -> Report {
        Report {
            context,
            info: info.clone(),
            measured,
            counters: None,
        }
    }

    /// Part 2's rows: (label, timing, floats per element).
    fn part2(&self) -> Vec<(&'static str, &Timing, f64)> {
        let m = &self.measured;
        let mut rows = vec![("copy_floor (the floor)", &m.copy, COPY_FLOATS)];
        for (i, k) in Kernel::STAGES.iter().enumerate() {
            rows.push((k.symbol(), &m.stages[i], STAGE_FLOATS[i]));
        }
        rows.push(("staged chain, timed as one", &m.staged, STAGED_FLOATS));
        rows.push(("chain_fused", &m.fused, FUSED_FLOATS));
        rows
    }
}

impl crate::lesson::Report for Report {
    fn context_mut(&mut self) -> &mut Context {
        &mut self.context
    }

    /// Keeps the profile for part 3's measured-DRAM reading.
    fn merge_counters(&mut self, profile: &Profile) {
        self.counters = Some(profile.clone());
    }

    /// The human-readable report.
    fn table(&self) -> String {
        let m = &self.measured;
        let c = &self.context;
        let mut s = String::new();
        s.push_str(&c.header());
        let _ = writeln!(
            s,
            "{} resident threads/SM, {} registers/SM, {} threads/block; timed size {} elements ({:.1} MiB a buffer, six buffers, \
             {:.1}x the L2)",
            self.info.max_threads_per_sm,
            self.info.regs_per_sm,
            THREADS_PER_BLOCK,
            m.sizes.elems,
            (m.sizes.elems * 4) as f64 / 1048576.0,
            (m.sizes.elems * 4) as f64 / self.info.l2_bytes as f64
        );
        let _ = writeln!(
            s,
            "Correctness size {CHECK_ELEMS} elements (no block size divides it), {:.1}% of them clamped: the staged chain, \
             chain_fused and all {} widths match the f64 reference within {ABS_TOLERANCE:e} + {REL_TOLERANCE:e} x |want|.",
            m.clamped_pct,
            WIDTHS.len()
        );
        let _ = writeln!(
            s,
            "Timing: median of {} batches of {} runs after {} warm-ups (CUDA events).\n",
            c.timing.batches, c.timing.launches_per_batch, c.timing.warmups
        );
        let _ = writeln!(
            s,
            "Bytes per element, from the constants: staged chain {:.0} (2 + 2 + 3 + 2 floats), chain_fused {:.0} (x, residual, out), \
             ratio {:.2}\n",
            STAGED_FLOATS * 4.0,
            FUSED_FLOATS * 4.0,
            STAGED_FLOATS / FUSED_FLOATS
        );

        let _ = writeln!(
            s,
            "Part 1: what one launch costs, {} back-to-back launches per timed run",
            m.sizes.launches_per_batch
        );
        let mut t = table(&["launch shape", "per launch (us)"]);
        t.add_row(vec![
            "do_nothing, 1 block of 1 thread".to_string(),
            format!(
                "{:.3}",
                us_per_launch(&m.empty_small, m.sizes.launches_per_batch)
            ),
        ]);
        t.add_row(vec![
            "do_nothing, the chain's own grid".to_string(),
            format!(
                "{:.3}",
                us_per_launch(&m.empty_full, m.sizes.launches_per_batch)
            ),
        ]);
        let _ = writeln!(s, "{t}\n");

        let _ = writeln!(s, "Part 2: the chain at {} elements", m.sizes.elems);
        let copy_gbs = gb_per_s(COPY_FLOATS, m.sizes.elems, m.copy.median_ms());
        // Seed 002's reading against the derived DRAM bandwidth, and the
        // clock column where a row's clock is flagged.
        let words = |gbs: f64| c.dram_verdict(gbs).map_or("-".to_string(), |v| v.words());
        let flagged = self
            .part2()
            .iter()
            .any(|(_, t, _)| c.clock_flag(t).is_some());
        let mut header = vec![
            "kernel or chain",
            "ms",
            "bytes/elem",
            "GB/s",
            "x copy",
            VERDICT_COLUMN,
        ];
        if flagged {
            header.push(CLOCK_COLUMN);
        }
        let mut t = table(&header);
        let mut summed = 0.0;
        for (i, (label, timing, floats)) in self.part2().into_iter().enumerate() {
            let gbs = gb_per_s(floats, m.sizes.elems, timing.median_ms());
            let mut cells = vec![
                label.to_string(),
                format!("{:.4}", timing.median_ms()),
                format!("{:.0}", floats * 4.0),
                format!("{gbs:.1}"),
                format!("{:.2}", gbs / copy_gbs),
                words(gbs),
            ];
            if flagged {
                cells.push(c.clock_flag(timing).unwrap_or_else(|| "-".to_string()));
            }
            t.add_row(cells);
            if (1..=4).contains(&i) {
                summed += timing.median_ms();
            }
            if i == 4 {
                let gbs = gb_per_s(STAGED_FLOATS, m.sizes.elems, summed);
                let mut cells = vec![
                    "  the four, summed".to_string(),
                    format!("{summed:.4}"),
                    format!("{:.0}", STAGED_FLOATS * 4.0),
                    format!("{gbs:.1}"),
                    format!("{:.2}", gbs / copy_gbs),
                    words(gbs),
                ];
                if flagged {
                    cells.push("-".to_string());
                }
                t.add_row(cells);
            }
        }
        let _ = writeln!(s, "{t}");
        let _ = writeln!(
            s,
            "staged / fused = {:.2}, and the byte ratio is {:.2}",
            m.staged.median_ms() / m.fused.median_ms(),
            STAGED_FLOATS / FUSED_FLOATS
        );
        let _ = if m.differing.0 == 0 {
            writeln!(
                s,
                "The two chains agree bit for bit on all {} elements.\n",
                m.sizes.elems
            )
        } else {
            writeln!(
                s,
                "The two chains differ on {} of {} elements, at most by {:.3e}.\n",
                m.differing.0, m.sizes.elems, m.differing.1
            )
        };

        let _ = writeln!(s, "Part 3: the same two chains, swept over n");
        let mut t = table(&[
            "n",
            "staged (ms)",
            "fused (ms)",
            "staged/fused",
            "staged us/launch",
        ]);
        for (n, st, fu) in &m.sweep {
            t.add_row(vec![
                n.to_string(),
                format!("{:.4}", st.median_ms()),
                format!("{:.4}", fu.median_ms()),
                format!("{:.2}", st.median_ms() / fu.median_ms()),
                format!("{:.3}", st.median_ms() * 1e3 / 4.0),
            ]);
        }
        let _ = writeln!(s, "{t}\n{}\n", sweep_reading(m));
        if let Some(profile) = &self.counters {
            let _ = match seed_counters(m, profile) {
                Ok(seed) => writeln!(s, "{}\n", seed.reading()),
                Err(why) => writeln!(
                    s,
                    "No measured-DRAM reading of staged against fused: {why}.\n"
                ),
            };
        }

        let _ = writeln!(
            s,
            "Part 4: chain_fused widened, the same work and bytes in every row"
        );
        let flagged = m.wide.iter().any(|w| c.clock_flag(&w.timing).is_some());
        let mut header = vec![
            "per thread",
            "blocks",
            "regs",
            "spill B",
            "blocks/SM",
            "occupancy",
            "ms",
            "GB/s",
            VERDICT_COLUMN,
        ];
        if flagged {
            header.push(CLOCK_COLUMN);
        }
        let mut t = table(&header);
        for w in &m.wide {
            let gbs = gb_per_s(FUSED_FLOATS, m.sizes.elems, w.timing.median_ms());
            let mut cells = vec![
                w.width.to_string(),
                w.blocks.to_string(),
                w.stats.registers.to_string(),
                w.stats.local_bytes.to_string(),
                w.blocks_per_sm.to_string(),
                format!("{:.1}%", w.occupancy_pct),
                format!("{:.4}", w.timing.median_ms()),
                format!("{gbs:.1}"),
                words(gbs),
            ];
            if flagged {
                cells.push(c.clock_flag(&w.timing).unwrap_or_else(|| "-".to_string()));
            }
            t.add_row(cells);
        }
        let _ = writeln!(
            s,
            "{t}\nThis GPU keeps all {} of its resident threads on an SM only while a thread uses {} registers or fewer \
             ({} registers per SM / {} threads). Above that, warps come off the SM.",
            self.info.max_threads_per_sm,
            regs_at_full_occupancy(&self.info),
            self.info.regs_per_sm,
            self.info.max_threads_per_sm
        );
        s
    }

    /// One JSON object per row, each with the run's context.
    fn json_lines(&self) -> Vec<serde_json::Value> {
        let ctx = serde_json::to_value(&self.context).expect("the context serialises");
        let m = &self.measured;
        let timing = |t: &Timing| json!({"ms": t.median_ms(), "ms_min": t.min_ms(), "ms_max": t.max_ms(), "samples_ms": t.samples_ms});
        // Rows with a `symbol` and `samples_ms` are what --record and
        // --baseline compare, run against run.
        let mut lines = vec![
            json!({"part": 1, "variant": "launch, 1 block of 1 thread", "symbol": "do_nothing (1 thread)", "us_per_launch": us_per_launch(&m.empty_small, m.sizes.launches_per_batch), "batch": timing(&m.empty_small), "samples_ms": m.empty_small.samples_ms}),
            json!({"part": 1, "variant": "launch, the chain's grid", "symbol": "do_nothing (chain's grid)", "us_per_launch": us_per_launch(&m.empty_full, m.sizes.launches_per_batch), "batch": timing(&m.empty_full), "samples_ms": m.empty_full.samples_ms}),
        ];
        let c = &self.context;
        let read = |mut row: serde_json::Value, t: &Timing, gbs: f64| {
            let v: Option<Verdict> = c.dram_verdict(gbs);
            add_readings(&mut row, v.as_ref(), c.while_timed(t).as_ref());
            row
        };
        for (label, t, floats) in self.part2() {
            let gbs = gb_per_s(floats, m.sizes.elems, t.median_ms());
            lines.push(read(json!({"part": 2, "variant": label, "symbol": label, "bytes_per_elem": floats * 4.0, "gb_per_s": gbs, "timing": timing(t), "samples_ms": t.samples_ms}), t, gbs));
        }
        lines.push(json!({"part": 2, "variant": "staged vs fused", "differing_elements": m.differing.0, "max_abs_difference": m.differing.1, "clamped_pct": m.clamped_pct}));
        for (n, st, fu) in &m.sweep {
            lines.push(json!({"part": 3, "n": n, "staged": timing(st), "fused": timing(fu), "staged_us_per_launch": st.median_ms() * 1e3 / 4.0}));
        }
        if let Some(seed) = self
            .counters
            .as_ref()
            .and_then(|p| seed_counters(m, p).ok())
        {
            lines.push(json!({"part": 3, "variant": "staged vs fused, measured DRAM", "n": seed.n,
                "staged_ms": seed.staged_ms, "fused_ms": seed.fused_ms,
                "staged_dram_bytes": seed.staged_dram_bytes, "fused_dram_bytes": seed.fused_dram_bytes,
                "time_ratio": seed.time_ratio(), "dram_ratio": seed.dram_ratio(),
                "compulsory_ratio": STAGED_FLOATS / FUSED_FLOATS, "gap": seed.gap(),
                "empty_launch_us": seed.empty_launch_us,
                "bytes_explain_within": BYTES_EXPLAIN_WITHIN}));
        }
        for w in &m.wide {
            let gbs = gb_per_s(FUSED_FLOATS, m.sizes.elems, w.timing.median_ms());
            lines.push(read(json!({"part": 4, "variant": format!("chain_fused_wide_{}", w.width), "symbol": format!("chain_fused_wide_{}", w.width), "samples_ms": w.timing.samples_ms, "per_thread": w.width, "blocks": w.blocks, "registers": w.stats.registers, "spill_bytes": w.stats.local_bytes, "blocks_per_sm": w.blocks_per_sm, "occupancy_pct": w.occupancy_pct, "gb_per_s": gb_per_s(FUSED_FLOATS, m.sizes.elems, w.timing.median_ms()), "timing": timing(&w.timing), "regs_at_full_occupancy": regs_at_full_occupancy(&self.info)}), &w.timing, gbs));
        }
        for line in &mut lines {
            if let Some(obj) = line.as_object_mut() {
                obj.insert("context".into(), ctx.clone());
            }
        }
        lines
    }
}
