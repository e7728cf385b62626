//! The roofline report: the ceilings with their share of the derived
//! limits (the bandwidth ceiling the best of three streams in two launch
//! shapes; FP32; BF16 tensor cores (FP16 on compute capability 7.5)
//! where measured, the fastest of the
//! `mma.sync` chains, the `wgmma` chains and cuBLAS), the ridge points, and each placed
//! kernel's intensity, time, compulsory bytes and share of the roof above it
//! (or that it sits above the roof). A table for people, JSON lines for
//! scripts.

use std::fmt::Write as _;

use std::collections::BTreeMap;

use comfy_table::{Cell, CellAlignment};
use kernels_gpu::roofline::*;
use serde_json::json;

use super::model::{Ceilings, Cost, cost, cost_shaped, per_second_e9};
use super::tensor::{HopperKernel, TensorCeiling};
use super::{Kernel, Measured, Shape, Sizes};
use crate::compare::ComparedKernel;
use crate::gpu::{DeviceInfo, fp32_lanes_per_sm, tensor_flop_per_clock_per_sm};
use crate::kernels::KernelId;
use crate::ncu::Counters;
use crate::plot::{Chart, Point, Series, TensorRoof};
use crate::ragged::{Edge, RaggedPair};
use crate::report::{CLOCK_COLUMN, Context, VERDICT_COLUMN, Verdict, add_readings, table, verdict};
use crate::timing::Timing;

/// One placed kernel's row.
#[derive(Debug, Clone)]
pub struct Row {
    /// The kernel.
    pub kernel: Kernel,
    /// Its FLOP and compulsory bytes.
    pub cost: Cost,
    /// Its timing.
    pub timing: Timing,
    /// Compulsory bytes over the median time, GB/s.
    pub gb_per_s: f64,
    /// FLOP over the median time, GFLOP/s.
    pub gflop_per_s: f64,
    /// Left of the ridge point: the bandwidth ceiling binds.
    pub memory_bound: bool,
    /// The measured rate as a percentage of the ceiling that binds it.
    pub percent_of_ceiling: f64,
    /// The noise between the row and its ceiling, percent: the row's
    /// batch spread plus the ceiling's.
    pub noise_pct: f64,
}

impl Row {
    /// Seed 002's reading of the row against the measured ceiling that
    /// binds it: the bandwidth ceiling left of the ridge point (its GB/s),
    /// the FMA ceiling right of it (its GFLOP/s). `None` for a row above
    /// the roof past the noise ([`Row::above_roof`]): that ceiling does not
    /// bind it, and the table prints no share of it either.
    pub fn verdict(&self, ceilings: &Ceilings) -> Option<Verdict> {
        if self.above_roof() {
            return None;
        }
        if self.memory_bound {
            verdict(
                self.gb_per_s,
                Some(ceilings.bandwidth_gb_per_s),
                "the measured bandwidth ceiling",
                "GB/s",
            )
        } else {
            verdict(
                self.gflop_per_s,
                Some(ceilings.fma_gflop_per_s),
                "the measured FMA ceiling",
                "GFLOP/s",
            )
        }
    }

    /// Faster than the roof at its compulsory intensity by more than the
    /// noise: left of the ridge, no kernel moves its compulsory bytes from
    /// DRAM faster than the bandwidth ceiling, so caches likely served part
    /// of them; right of it, the kernel beat the FMA ceiling.
    pub fn above_roof(&self) -> bool {
        self.percent_of_ceiling > 100.0 + self.noise_pct
    }

    /// Over 100% of its ceiling, but within the noise: at the roof.
    pub fn at_roof(&self) -> bool {
        self.percent_of_ceiling > 100.0 && !self.above_roof()
    }
}

/// One stream of the bandwidth ceiling in one launch shape.
#[derive(Debug, Clone)]
pub struct StreamRow {
    /// The stream kernel.
    pub kernel: Kernel,
    /// How its grid covered the buffers.
    pub shape: Shape,
    /// Its FLOP and compulsory bytes in that shape.
    pub cost: Cost,
    /// Its timing.
    pub timing: Timing,
    /// Compulsory bytes over the median time, GB/s.
    pub gb_per_s: f64,
}

/// The whole report of one run.
#[derive(Debug, Clone)]
pub struct Report {
    /// The run's context.
    pub context: Context,
    /// The device.
    pub info: DeviceInfo,
    /// The sizes used.
    pub sizes: Sizes,
    /// The two measured ceilings.
    pub ceilings: Ceilings,
    /// The three streams in both shapes, in table order.
    pub streams: Vec<StreamRow>,
    /// Which of [`Report::streams`] sets the bandwidth ceiling.
    pub best_stream: usize,
    /// The seed's copy kernel's timing (at the placed kernels' sizes).
    pub copy: Timing,
    /// The FMA kernel's timing.
    pub fma: Timing,
    /// The driver's device-to-device copy of the same bytes as the seed's
    /// copy (a cross-check no kernel of ours wrote).
    pub driver_copy: Timing,
    /// The ten placed kernels, in table order.
    pub rows: Vec<Row>,
    /// Nsight Compute's counters per kernel symbol, where merged.
    pub counters: Option<BTreeMap<String, Counters>>,
    /// The [`Kernel::RAGGED`] kernels at a round and a ragged size, timed
    /// side by side (empty where the run did not time them).
    pub ragged: Vec<RaggedPair>,
    /// The tensor-core ceiling (BF16, or FP16 on compute capability 7.5),
    /// or the one line saying why the run has none ([`build`] leaves "not measured"; the lesson's run sets it).
    pub tensor: std::result::Result<TensorCeiling, String>,
    /// The GEMM lesson's last steps placed on this roofline
    /// ([`super::gemm_points`]), or why the run has none ([`build`] leaves
    /// "not measured"; the lesson's run sets them).
    pub gemm: std::result::Result<super::gemm_points::Measured, String>,
}

/// The block shapes as the JSON context records them.
pub fn block_sizes_json() -> serde_json::Value {
    json!({
        "vector": THREADS_PER_BLOCK,
        "transpose": [TRANSPOSE_TILE, TRANSPOSE_TILE],
        "matmul": [MAT_TILE, MAT_TILE],
        "stencil": [STENCIL_BLOCK_X, STENCIL_BLOCK_Y],
        "fma": THREADS_PER_BLOCK,
        "mma_peak": THREADS_PER_BLOCK,
        "mma_peak_f16": THREADS_PER_BLOCK,
        "wgmma_peak": {
            "threads": kernels_gpu::roofline::WGMMA_THREADS,
            "dynamic_shared_bytes": kernels_gpu::roofline::WGMMA_SHARED_BYTES,
            "warpgroup_tile": [64, kernels_gpu::gemm::WG_BLOCK_N],
        },
        "gemm_points": {
            "sides": [super::gemm_points::GEMM_SIDE, super::gemm_points::GEMM_QUICK_SIDE],
            "gemm_warptiled": {"threads": kernels_gpu::gemm::REG_THREADS,
                "block_tile": [kernels_gpu::gemm::BLOCK_M, kernels_gpu::gemm::BLOCK_N, kernels_gpu::gemm::BLOCK_K]},
            "gemm_bf16_tma": {"threads": kernels_gpu::gemm::WG_THREADS,
                "block_tile": [kernels_gpu::gemm::WG_BLOCK_M, kernels_gpu::gemm::WG_BLOCK_N, kernels_gpu::gemm::WG_BLOCK_K]},
            "gemm_bf16_pipelined": {"threads": kernels_gpu::gemm::TC_THREADS,
                "block_tile": [kernels_gpu::gemm::TC_BLOCK_M, kernels_gpu::gemm::TC_BLOCK_N, kernels_gpu::gemm::TC_BLOCK_K]},
            "gemm_f16_mma": {"threads": kernels_gpu::gemm::TC_THREADS,
                "block_tile": [kernels_gpu::gemm::TC_BLOCK_M, kernels_gpu::gemm::TC_BLOCK_N, kernels_gpu::gemm::TC_BLOCK_K]},
        },
    })
}

/// Builds the report from a passed run's timings (in [`Kernel::ALL`] order,
/// each stream in both shapes). The bandwidth ceiling is the fastest
/// stream row; a stream row not measured is left out.
pub fn build(
    info: &DeviceInfo,
    sizes: Sizes,
    context: Context,
    measured: &[Measured],
    driver_copy: Timing,
) -> Report {
    let timing_of = |k: Kernel| {
        measured
            .iter()
            .find(|m| m.kernel == k)
            .map(|m| m.timing.clone())
            .expect("every kernel was timed")
    };
    let copy = timing_of(Kernel::Copy);
    let fma = timing_of(Kernel::FmaPeak);
    let streams: Vec<StreamRow> = measured
        .iter()
        .filter(|m| m.kernel.is_stream())
        .map(|m| {
            let c = cost_shaped(m.kernel, &sizes, m.shape);
            StreamRow {
                kernel: m.kernel,
                shape: m.shape,
                cost: c,
                timing: m.timing.clone(),
                gb_per_s: per_second_e9(c.bytes, m.timing.median_ms()),
            }
        })
        .collect();
    let best_stream = (0..streams.len())
        .max_by(|&i, &j| streams[i].gb_per_s.total_cmp(&streams[j].gb_per_s))
        .expect("every stream was timed");
    let ceilings = Ceilings {
        bandwidth_gb_per_s: streams[best_stream].gb_per_s,
        fma_gflop_per_s: per_second_e9(cost(Kernel::FmaPeak, &sizes).flop, fma.median_ms()),
    };
    let rows = Kernel::placed()
        .map(|kernel| {
            let c = cost(kernel, &sizes);
            let timing = timing_of(kernel);
            let ms = timing.median_ms();
            let gb_per_s = per_second_e9(c.bytes, ms);
            let gflop_per_s = per_second_e9(c.flop, ms);
            let memory_bound = c.intensity() < ceilings.ridge();
            let own_spread = timing.spread_pct();
            let (percent_of_ceiling, spread) = if memory_bound {
                (
                    100.0 * gb_per_s / ceilings.bandwidth_gb_per_s,
                    streams[best_stream].timing.spread_pct(),
                )
            } else {
                (
                    100.0 * gflop_per_s / ceilings.fma_gflop_per_s,
                    fma.spread_pct(),
                )
            };
            let noise_pct = own_spread + spread;
            Row {
                kernel,
                cost: c,
                timing,
                gb_per_s,
                gflop_per_s,
                memory_bound,
                percent_of_ceiling,
                noise_pct,
            }
        })
        .collect();
    Report {
        context,
        info: info.clone(),
        sizes,
        ceilings,
        streams,
        best_stream,
        copy,
        fma,
        driver_copy,
        rows,
        counters: None,
        ragged: Vec::new(),
        tensor: Err("No tensor-core ceiling: not measured in this run".to_string()),
        gemm: Err("not measured in this run".to_string()),
    }
}

/// Rows of a `side` x `side` f32 matrix whose first element starts on a
/// 32-byte sector boundary (the buffer itself is aligned): row r starts at
/// byte 4 r side.
pub fn sector_aligned_rows(side: usize) -> usize {
    (0..side)
        .filter(|r| (4 * r * side).is_multiple_of(32))
        .count()
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

impl Report {
    /// The round-against-ragged section: each [`Kernel::RAGGED`] kernel at
    /// both sizes, timed side by side, and what the ragged edge cost.
    fn ragged_section(&self) -> String {
        let mut s = format!(
            "\nRound against ragged sizes, timed side by side (round, ragged, ragged, round; each size's two timings \
             merged)\n{}",
            crate::ragged::table(&self.ragged)
        );
        let z = &self.sizes;
        let block = THREADS_PER_BLOCK as usize;
        let extra_blocks = z.ragged_n().div_ceil(block) - z.n.div_ceil(block);
        let ragged_side = z.ragged_side(Edge::Ragged);
        let _ = writeln!(
            s,
            "The ragged vector add launches {extra_blocks} more block(s) of {block} threads for its {} more elements{}. \
             The ragged transpose's side, {ragged_side}, is {} the {TRANSPOSE_TILE}-wide tile{}, and {} of its rows \
             start on a 32-byte sector boundary against {} of the round side's {}.",
            crate::ragged::RAGGED_TAIL,
            if z.ragged_n().is_multiple_of(block) {
                ""
            } else {
                ", the last one partial"
            },
            if ragged_side.is_multiple_of(TRANSPOSE_TILE as usize) {
                "a multiple of"
            } else {
                "not a multiple of"
            },
            if ragged_side.is_multiple_of(TRANSPOSE_TILE as usize) {
                ""
            } else {
                ", so the last row and column of blocks are partial and their threads past the edge do nothing"
            },
            sector_aligned_rows(ragged_side),
            sector_aligned_rows(z.side),
            z.side,
        );
        s
    }

    /// The measured-bytes section: what DRAM, L2 and L1 actually moved per
    /// kernel (one launch each, from ncu), beside the compulsory bytes.
    fn counters_table(&self, counters: &BTreeMap<String, Counters>) -> String {
        let mut t = table(&[
            "kernel",
            "compulsory MB",
            "DRAM MB",
            "L2 MB",
            "L1 MB",
            "DRAM GB/s",
            "FLOP/DRAM byte",
            "% of bandwidth ceiling",
            "occupancy % achieved/theoretical",
        ]);
        let mb = |x: Option<f64>| x.map_or("-".to_string(), |b| format!("{:.1}", b / 1e6));
        for r in &self.rows {
            let Some(c) = counters.get(r.kernel.symbol()) else {
                continue;
            };
            let dram_gb_per_s = c.dram_bytes.map(|b| per_second_e9(b, r.timing.median_ms()));
            t.add_row(vec![
                Cell::new(r.kernel.label()),
                num(r.cost.bytes / 1e6, 1),
                Cell::new(mb(c.dram_bytes)).set_alignment(CellAlignment::Right),
                Cell::new(mb(c.l2_bytes)).set_alignment(CellAlignment::Right),
                Cell::new(mb(c.l1_bytes)).set_alignment(CellAlignment::Right),
                Cell::new(dram_gb_per_s.map_or("-".into(), |g| format!("{g:.1}")))
                    .set_alignment(CellAlignment::Right),
                Cell::new(
                    c.dram_bytes
                        .filter(|&b| b > 0.0)
                        .map_or("-".into(), |b| format!("{:.3}", r.cost.flop / b)),
                )
                .set_alignment(CellAlignment::Right),
                Cell::new(dram_gb_per_s.map_or("-".into(), |g| {
                    format!("{:.1}", 100.0 * g / self.ceilings.bandwidth_gb_per_s)
                }))
                .set_alignment(CellAlignment::Right),
                Cell::new(format!(
                    "{} / {}",
                    c.achieved_occupancy_pct
                        .map_or("-".into(), |x| format!("{x:.1}")),
                    c.theoretical_occupancy_pct
                        .map_or("-".into(), |x| format!("{x:.1}"))
                )),
            ]);
        }
        let mut s = format!(
            "\nMeasured bytes (Nsight Compute: one launch of each kernel in --profile mode, caches flushed before it by ncu's \
             default, so cold-cache bytes; DRAM GB/s divides them by this run's warm median time)\n{t}\n"
        );
        for r in self.rows.iter().filter(|r| r.above_roof()) {
            if let Some(dram) = counters.get(r.kernel.symbol()).and_then(|c| c.dram_bytes) {
                let _ = writeln!(
                    s,
                    "{} sits above the roof; DRAM moved {:.1}% of its compulsory bytes.",
                    r.kernel.label(),
                    100.0 * dram / r.cost.bytes
                );
            }
        }
        s
    }

    /// Merges Nsight Compute's counters (from [`crate::ncu::parse_csv`]) into
    /// the report: the table gains the measured-bytes section, the JSON rows
    /// a `measured` object, the chart the measured-intensity points.
    pub fn merge_counters(&mut self, counters: BTreeMap<String, Counters>) {
        self.counters = Some(counters);
    }

    /// The roofline chart of this run: the ceilings, each placed kernel at
    /// its compulsory intensity, and at its measured DRAM intensity where
    /// counters were merged.
    pub fn chart(&self) -> Chart {
        let mut points: Vec<Point> = self
            .rows
            .iter()
            .map(|r| Point {
                label: r.kernel.label().to_string(),
                intensity: r.cost.intensity(),
                gflop_per_s: r.gflop_per_s,
                series: Series::Rust,
            })
            .collect();
        if let Some(counters) = &self.counters {
            for r in &self.rows {
                if let Some(dram) = counters
                    .get(r.kernel.symbol())
                    .and_then(|c| c.dram_bytes)
                    .filter(|&b| b > 0.0)
                {
                    points.push(Point {
                        label: r.kernel.label().to_string(),
                        intensity: r.cost.flop / dram,
                        gflop_per_s: r.gflop_per_s,
                        series: Series::MeasuredDram,
                    });
                }
            }
        }
        for g in self.gemm.iter().flat_map(|m| &m.points) {
            points.push(Point {
                label: g.symbol.to_string(),
                intensity: g.intensity(),
                gflop_per_s: g.gflop_per_s(),
                series: Series::Gemm,
            });
        }
        Chart {
            title: format!("Roofline, {} ({})", self.info.name, self.context.date),
            bandwidth_gb_per_s: self.ceilings.bandwidth_gb_per_s,
            fma_gflop_per_s: self.ceilings.fma_gflop_per_s,
            tensor: self.tensor.as_ref().ok().map(|t| TensorRoof {
                precision: t.sizes.half.upper(),
                gflop_per_s: t.gflop_per_s(),
                set_by: t.source().name().to_string(),
            }),
            points,
        }
    }

    /// The roof above a placed GEMM, GFLOP/s, and its name: the FMA
    /// ceiling for FP32, the tensor-core ceiling for BF16 or FP16 (none
    /// where the run has none, or one of another precision), each capped by
    /// the bandwidth ceiling times its intensity (which, right of the ridge
    /// point, does not bind).
    pub fn gemm_roof(&self, g: &super::gemm_points::GemmPoint) -> Option<(f64, &'static str)> {
        let (flat, name) = match g.precision.half() {
            None => (self.ceilings.fma_gflop_per_s, "the FMA ceiling"),
            Some(half) => (
                self.tensor_of(half)?.gflop_per_s(),
                "the tensor-core ceiling",
            ),
        };
        let sloped = g.intensity() * self.ceilings.bandwidth_gb_per_s;
        Some(if sloped < flat {
            (sloped, "the bandwidth ceiling")
        } else {
            (flat, name)
        })
    }

    /// The GEMM lesson's placed kernels: one line each (time, rate,
    /// intensity, share of its roof), or the one line saying why there are
    /// none.
    fn gemm_section(&self) -> String {
        let (points, no_tensor) = match &self.gemm {
            Err(why) => return format!("\nNo GEMM kernels on this roofline: {why}.\n"),
            Ok(m) => (&m.points, &m.no_tensor_point),
        };
        let Some(side) = points.first().map(|g| g.side) else {
            return String::new();
        };
        let mut s = format!(
            "\nThe GEMM lesson's last steps on this roofline, checked and timed at {side}^3 (compulsory bytes: A, B and C \
             read once, D written once):\n"
        );
        for g in points {
            let roof_timing = match g.precision.half() {
                None => Some(&self.fma),
                Some(half) => self.tensor_of(half).map(TensorCeiling::timing),
            };
            let roof_flagged = roof_timing
                .and_then(|t| self.context.clocks.while_timed(t.window.as_ref()))
                .and_then(|w| w.flag())
                .is_some();
            let roof = self.gemm_roof(g).map_or(String::new(), |(value, name)| {
                format!(
                    ", {:.1}% of {name} above it{}",
                    100.0 * g.gflop_per_s() / value,
                    if roof_flagged && name != "the bandwidth ceiling" {
                        " (timed with a flagged clock, above)"
                    } else {
                        ""
                    }
                )
            });
            let flag = self
                .context
                .clocks
                .while_timed(g.timing.window.as_ref())
                .and_then(|w| w.flag())
                .map_or(String::new(), |f| format!(" ({f})"));
            let _ = writeln!(
                s,
                "- {} ({}): {:.4} ms, {:.1} GFLOP/s at {:.1} FLOP/byte{roof}{flag}.",
                g.symbol,
                g.label,
                g.timing.median_ms(),
                g.gflop_per_s(),
                g.intensity()
            );
        }
        if let Some(why) = no_tensor {
            let _ = writeln!(s, "No tensor-core GEMM on it: {why}.");
        }
        s
    }

    /// The run's tensor-core ceiling where it is of precision `half`.
    pub fn tensor_of(&self, half: crate::cublas::Half) -> Option<&TensorCeiling> {
        self.tensor.as_ref().ok().filter(|tc| tc.sizes.half == half)
    }

    /// The seed's copy's rate over its compulsory bytes, GB/s.
    pub fn seed_copy_gb_per_s(&self) -> f64 {
        per_second_e9(cost(Kernel::Copy, &self.sizes).bytes, self.copy.median_ms())
    }

    /// The stream row that sets the bandwidth ceiling.
    pub fn best(&self) -> &StreamRow {
        &self.streams[self.best_stream]
    }

    /// The derived limits line's tensor-core clause: how the limit is
    /// derived, or that no per-SM rate is known for this compute
    /// capability; empty where the run has no tensor-core ceiling.
    fn tensor_derivation(&self) -> String {
        let Ok(tc) = &self.tensor else {
            return String::new();
        };
        let precision = tc.sizes.half.upper();
        let (major, minor) = self.info.compute_capability;
        match tensor_flop_per_clock_per_sm(self.info.compute_capability) {
            Some(rate) => format!(
                "; {precision} tensor cores = {} SMs x {rate} dense {precision} FLOP a clock an SM (NVIDIA's \
                 architecture whitepaper for compute capability {major}.{minor}) x the same clock",
                self.info.sms
            ),
            None => format!(
                "; {precision} tensor cores: no per-SM rate is written down here for compute capability \
                 {major}.{minor}, so their limit is unknown"
            ),
        }
    }

    /// The driver copy's rate over the seed's copy's compulsory bytes, GB/s.
    pub fn driver_copy_gb_per_s(&self) -> f64 {
        per_second_e9(
            cost(Kernel::Copy, &self.sizes).bytes,
            self.driver_copy.median_ms(),
        )
    }
}

fn num(x: f64, decimals: usize) -> Cell {
    Cell::new(format!("{x:.decimals$}")).set_alignment(CellAlignment::Right)
}

/// The chart of a comparison: ceilings from the Rust kernels' medians (the
/// fastest stream in its default shape, the FMA kernel), and each placed
/// kernel in both languages at its compulsory intensity.
pub fn compare_chart(kernels: &[ComparedKernel], sizes: &Sizes, title: String) -> Chart {
    let ms_of = |k: Kernel| {
        kernels
            .iter()
            .find(|c| c.symbol == k.symbol())
            .map(|c| (c.timing.rust_median_ms(), c.timing.c_median_ms()))
    };
    let bandwidth = Kernel::STREAMS
        .iter()
        .filter_map(|&k| ms_of(k).map(|(ms, _)| per_second_e9(cost(k, sizes).bytes, ms)))
        .fold(f64::NAN, f64::max);
    let (fma_ms, _) = ms_of(Kernel::FmaPeak).unwrap_or((f64::NAN, f64::NAN));
    let mut points = Vec::new();
    for k in Kernel::placed() {
        let Some((rust_ms, c_ms)) = ms_of(k) else {
            continue;
        };
        let c = cost(k, sizes);
        for (series, ms) in [(Series::Rust, rust_ms), (Series::CudaC, c_ms)] {
            points.push(Point {
                label: k.label().to_string(),
                intensity: c.intensity(),
                gflop_per_s: per_second_e9(c.flop, ms),
                series,
            });
        }
    }
    Chart {
        title,
        bandwidth_gb_per_s: bandwidth,
        fma_gflop_per_s: per_second_e9(cost(Kernel::FmaPeak, sizes).flop, fma_ms),
        // The comparison times the sm_75 module's twins only.
        tensor: None,
        points,
    }
}

impl crate::lesson::Report for Report {
    fn context_mut(&mut self) -> &mut Context {
        &mut self.context
    }

    /// The human-readable report.
    fn table(&self) -> String {
        let mut s = String::new();
        let c = &self.context;
        let z = &self.sizes;
        let plan = c.timing;
        let l2 = self.info.l2_bytes;
        s.push_str(&c.header());
        let _ = writeln!(
            s,
            "Sizes: vectors {} floats ({:.0} MiB a buffer, {:.1}x the {:.0} MiB L2{}), transpose {}^2, \
             matmul {}^3 (tile {MAT_TILE}), stencil {}^2, FMA {} blocks x {THREADS_PER_BLOCK} threads x {} iterations",
            z.n,
            mib(z.n * 4),
            (z.n * 4) as f64 / l2 as f64,
            mib(l2),
            if z.side != SEED_SIDE {
                format!(
                    "; the seed's {:.0} MiB would be {:.1}x",
                    mib(SEED_SIDE * SEED_SIDE * 4),
                    (SEED_SIDE * SEED_SIDE * 4) as f64 / l2 as f64
                )
            } else {
                String::new()
            },
            z.side,
            z.mat_dim,
            z.stencil_side,
            z.fma_blocks,
            z.fma_iters,
        );
        if let Some(ts) = &z.tensor {
            let sides: Vec<String> = ts.cublas_sides().iter().map(|n| format!("{n}^3")).collect();
            let wgmma = ts.wgmma_blocks.map_or(String::new(), |blocks| {
                format!(
                    "; wgmma_peak {blocks} blocks x {} threads x {} steps x 4 wgmma m64n256k16 a warpgroup (sm_90a \
                     module)",
                    super::tensor::WGMMA_THREADS,
                    ts.wgmma_iters
                )
            });
            let _ = writeln!(
                s,
                "Tensor-core ceiling ({precision}): {} {} blocks x {THREADS_PER_BLOCK} threads x {} steps x {MMA_CHAINS} \
                 chains ({}){wgmma}; cuBLAS {precision} GemmEx (FP32 sums) at {}",
                ts.mma_symbol(),
                ts.mma_blocks,
                ts.mma_iters,
                super::tensor::mma_module(ts.half),
                sides.join(" and "),
                precision = ts.half.upper(),
            );
        }
        let _ = writeln!(
            s,
            "Timing: per kernel {} warm-up launches, then the median of {} batches of {} launches, \
             each batch timed by CUDA events; {}.",
            plan.warmups,
            plan.batches,
            plan.launches_per_batch,
            if plan.flush_l2 {
                "L2 flushed before every timed launch, each timed alone (cold-cache times)"
            } else {
                "L2 not flushed between launches (warm-cache times)"
            }
        );
        let tensor_checks = match &self.tensor {
            Ok(tc) => format!(
                " {} exactly in every element{}.",
                match tc.wgmma {
                    Ok(_) => format!(
                        "{} and {} match their CPU references",
                        tc.sizes.mma_symbol(),
                        HopperKernel::WgmmaPeak.symbol()
                    ),
                    Err(_) => format!("{} matches its CPU reference", tc.sizes.mma_symbol()),
                },
                if tc.cublas.is_ok() {
                    format!(
                        "; cuBLAS's {} GEMM at {}^3 matches the f64 reference at {} sampled elements within its \
                         tensor-core bound",
                        tc.sizes.half.upper(),
                        tc.sizes.cublas_side,
                        crate::gemm::SAMPLES
                    )
                } else {
                    String::new()
                }
            ),
            Err(_) => String::new(),
        };
        let gemm_checks = match self
            .gemm
            .as_ref()
            .ok()
            .and_then(|m| m.points.first().map(|g| (m, g.side)))
        {
            Some((m, side)) => format!(
                " The placed GEMM kernels ({}) match the f64 reference at {} sampled elements of {side}^3 within the GEMM \
                 lesson's bounds{}.",
                m.points
                    .iter()
                    .map(|g| g.symbol)
                    .collect::<Vec<_>>()
                    .join(", "),
                crate::gemm::SAMPLES,
                if m.points.len() > 1 {
                    "; the tensor-core one also equals the naive FP32 kernel's output on integer inputs whose sums are exact"
                } else {
                    ""
                }
            ),
            None => String::new(),
        };
        let _ = writeln!(
            s,
            "All {} kernels pass their checks against CPU references: exact, except the stencils (1e-5 \
             relative).{tensor_checks}{gemm_checks}\n",
            Kernel::ALL.len()
        );

        let _ = writeln!(s, "The ceilings of this GPU's roofline, all measured");
        // A clock column where a timing was flagged.
        let flag_of = |t: &Timing| {
            c.clocks
                .while_timed(t.window.as_ref())
                .and_then(|w| w.flag())
        };
        let ceiling_timings: Vec<&Timing> = self
            .streams
            .iter()
            .map(|r| &r.timing)
            .chain([&self.copy, &self.driver_copy, &self.fma])
            .chain(self.tensor.iter().flat_map(|tc| {
                std::iter::once(&tc.mma)
                    .chain(tc.wgmma.iter().map(|w| &w.timing))
                    .chain(tc.cublas.iter().flatten().map(|c| &c.timing))
            }))
            .collect();
        let ceiling_flagged = ceiling_timings.iter().any(|t| flag_of(t).is_some());
        let mut header = vec![
            "ceiling",
            "ms",
            "spread %",
            "measured",
            "derived limit",
            "% of derived",
            VERDICT_COLUMN,
        ];
        if ceiling_flagged {
            header.push(CLOCK_COLUMN);
        }
        let mut t = table(&header);
        let dram = self.info.derived_dram_bytes_per_s().map(|d| d / 1e9);
        let words = |v: Option<Verdict>| Cell::new(v.map_or("-".to_string(), |v| v.words()));
        let flag_cell = |t: &Timing| Cell::new(flag_of(t).unwrap_or_else(|| "-".to_string()));
        let bandwidth_row = |label: String, timing: &Timing, gb_per_s: f64| {
            let mut cells = vec![
                Cell::new(label),
                num(timing.median_ms(), 3),
                num(timing.spread_pct(), 1),
                Cell::new(format!("{gb_per_s:.1} GB/s")),
                Cell::new(dram.map_or("unknown".into(), |d| format!("{d:.1} GB/s"))),
                dram.map_or(Cell::new("-"), |d| num(100.0 * gb_per_s / d, 1)),
                words(verdict(
                    gb_per_s,
                    dram,
                    "the derived DRAM bandwidth",
                    "GB/s",
                )),
            ];
            if ceiling_flagged {
                cells.push(flag_cell(timing));
            }
            cells
        };
        for (i, r) in self.streams.iter().enumerate() {
            let mark = if i == self.best_stream {
                " <- the ceiling"
            } else {
                ""
            };
            t.add_row(bandwidth_row(
                format!("{}, {}{mark}", r.kernel.label(), r.shape.label()),
                &r.timing,
                r.gb_per_s,
            ));
        }
        t.add_row(bandwidth_row(
            format!(
                "for comparison: {}, {:.0} MiB buffers",
                Kernel::Copy.label(),
                mib(z.n * 4)
            ),
            &self.copy,
            self.seed_copy_gb_per_s(),
        ));
        t.add_row(bandwidth_row(
            "for comparison: the driver's cuMemcpyDtoD, same bytes".into(),
            &self.driver_copy,
            self.driver_copy_gb_per_s(),
        ));
        let peak = self.info.derived_fp32_flop_per_s().map(|f| f / 1e9);
        let mut fma_cells = vec![
            Cell::new(Kernel::FmaPeak.label()),
            num(self.fma.median_ms(), 3),
            num(self.fma.spread_pct(), 1),
            Cell::new(format!("{:.1} GFLOP/s", self.ceilings.fma_gflop_per_s)),
            Cell::new(peak.map_or("unknown".into(), |p| format!("{p:.1} GFLOP/s"))),
            peak.map_or(Cell::new("-"), |p| {
                num(100.0 * self.ceilings.fma_gflop_per_s / p, 1)
            }),
            words(verdict(
                self.ceilings.fma_gflop_per_s,
                peak,
                "the derived FP32 peak",
                "GFLOP/s",
            )),
        ];
        if ceiling_flagged {
            fma_cells.push(flag_cell(&self.fma));
        }
        t.add_row(fma_cells);
        if let Ok(tc) = &self.tensor {
            let derived = tc.derived_gflop_per_s;
            let precision = tc.sizes.half.upper();
            let derived_name = tc.derived_name();
            let tflop = |g: f64| format!("{:.1} TFLOP/s", g / 1e3);
            let tensor_row = |label: String, timing: &Timing, gflop_per_s: f64| {
                let mut cells = vec![
                    Cell::new(label),
                    num(timing.median_ms(), 3),
                    num(timing.spread_pct(), 1),
                    Cell::new(tflop(gflop_per_s)),
                    Cell::new(derived.map_or("unknown".into(), tflop)),
                    derived.map_or(Cell::new("-"), |d| num(100.0 * gflop_per_s / d, 1)),
                    words(verdict(gflop_per_s, derived, &derived_name, "GFLOP/s")),
                ];
                if ceiling_flagged {
                    cells.push(flag_cell(timing));
                }
                cells
            };
            let source = tc.source();
            let best_side = tc.cublas_best().map(|c| c.side);
            let mark = |set: bool| if set { " <- the tensor ceiling" } else { "" };
            t.add_row(tensor_row(
                format!(
                    "{precision} tensor cores: {}, {MMA_CHAINS} mma.sync chains{}",
                    tc.sizes.mma_symbol(),
                    mark(source == super::tensor::Source::MmaSync)
                ),
                &tc.mma,
                tc.mma_gflop_per_s,
            ));
            if let Ok(w) = &tc.wgmma {
                t.add_row(tensor_row(
                    format!(
                        "{precision} tensor cores: {}, wgmma m64n256k16 chains, 2 warpgroups a block{}",
                        HopperKernel::WgmmaPeak.symbol(),
                        mark(source == super::tensor::Source::Wgmma)
                    ),
                    &w.timing,
                    w.gflop_per_s,
                ));
            }
            for c in tc.cublas.iter().flatten() {
                t.add_row(tensor_row(
                    format!(
                        "{precision} tensor cores: cuBLAS GemmEx, {}^3{}",
                        c.side,
                        mark(source == super::tensor::Source::Cublas && best_side == Some(c.side))
                    ),
                    &c.timing,
                    c.gflop_per_s,
                ));
            }
        }
        let _ = writeln!(s, "{t}");
        // A ceiling timed under a flagged clock carries its flag into every
        // share of it below.
        for (name, timing) in [
            ("bandwidth ceiling", &self.best().timing),
            ("FMA ceiling", &self.fma),
        ]
        .into_iter()
        .chain(
            self.tensor
                .iter()
                .map(|tc| ("tensor-core ceiling", tc.timing())),
        ) {
            if let Some(flag) = flag_of(timing) {
                let _ = writeln!(
                    s,
                    "The {name} was timed while: {flag}; every row's share of it below carries that."
                );
            }
        }
        let best = self.best();
        let _ = writeln!(
            s,
            "The bandwidth ceiling is the fastest of three streams (16-byte elements, read-only path), each launched \
             one float4 a thread and grid-stride ({} blocks), over {:.0} MiB buffers ({:.0}x the L2): here {} {}, \
             {:.1} GB/s.",
            z.stream_blocks,
            mib(z.stream_n4 * 16),
            (z.stream_n4 * 16) as f64 / l2 as f64,
            best.kernel.label(),
            best.shape.label(),
            best.gb_per_s,
        );
        for (what, gb_per_s) in [
            (
                format!("The seed's copy ({:.0} MiB buffers)", mib(z.n * 4)),
                self.seed_copy_gb_per_s(),
            ),
            ("The driver's copy".to_string(), self.driver_copy_gb_per_s()),
        ] {
            let noise = best.timing.spread_pct()
                + if what.starts_with("The seed") {
                    self.copy.spread_pct()
                } else {
                    self.driver_copy.spread_pct()
                };
            if gb_per_s > best.gb_per_s * (1.0 + noise / 100.0) {
                let _ = writeln!(
                    s,
                    "{what} beat it ({gb_per_s:.1} GB/s, past the {noise:.1}% of their spreads): at {:.1}x the L2 part of \
                     its bytes can be L2 hits.",
                    (z.n * 4) as f64 / l2 as f64
                );
            }
        }
        let _ = writeln!(
            s,
            "ridge point: {:.2} FLOP/byte. Below that intensity nothing on this GPU can be compute bound.",
            self.ceilings.ridge()
        );
        match &self.tensor {
            Ok(tc) => {
                let _ = writeln!(s, "{}", tc.sentence());
                if let Some(why) = &tc.large_side_skipped {
                    let _ = writeln!(s, "cuBLAS: {why}.");
                }
                let _ = writeln!(
                    s,
                    "tensor ridge point: {:.2} FLOP/byte (the {} tensor-core ceiling over the bandwidth ceiling). Below \
                     that intensity even a kernel on the tensor cores is memory bound.",
                    tc.ridge(self.ceilings.bandwidth_gb_per_s),
                    tc.sizes.half.upper()
                );
            }
            Err(why) => {
                let _ = writeln!(s, "{why}.");
            }
        }
        let _ = writeln!(
            s,
            "Derived limits come from the driver's attributes, not a measurement (an attribute the driver reports \
             as 0 makes its limit unknown): DRAM = {:.0} MHz memory clock x {}-bit bus x 2 / 8; FP32 = {} SMs x {} FMA \
             lanes x 2 FLOP x {:.0} MHz peak SM clock{}.\n",
            self.info.memory_clock_khz as f64 / 1e3,
            self.info.memory_bus_bits,
            self.info.sms,
            fp32_lanes_per_sm(self.info.compute_capability).map_or("?".into(), |l| l.to_string()),
            self.info.sm_clock_khz as f64 / 1e3,
            self.tensor_derivation(),
        );

        let _ = writeln!(
            s,
            "Ten kernels, with the bytes the algorithm asks for (compulsory bytes)"
        );
        let rows_flagged = self.rows.iter().any(|r| flag_of(&r.timing).is_some());
        let mut header = vec![
            "kernel",
            "FLOP/byte",
            "ms",
            "spread %",
            "compulsory MB",
            "compulsory GB/s",
            "GFLOP/s",
            "bound by",
            "% of the roof",
            VERDICT_COLUMN,
        ];
        if rows_flagged {
            header.push(CLOCK_COLUMN);
        }
        let mut t = table(&header);
        for r in &self.rows {
            let (bound, share) = if r.above_roof() {
                (
                    format!("above the roof, {:.2}x", r.percent_of_ceiling / 100.0),
                    Cell::new("-").set_alignment(CellAlignment::Right),
                )
            } else if r.at_roof() {
                (
                    "at the roof (within the noise)".to_string(),
                    num(r.percent_of_ceiling, 1),
                )
            } else {
                (
                    (if r.memory_bound { "memory" } else { "compute" }).to_string(),
                    num(r.percent_of_ceiling, 1),
                )
            };
            let mut cells = vec![
                Cell::new(r.kernel.label()),
                num(r.cost.intensity(), 3),
                num(r.timing.median_ms(), 4),
                num(r.timing.spread_pct(), 1),
                num(r.cost.bytes / 1e6, 1),
                num(r.gb_per_s, 1),
                num(r.gflop_per_s, 1),
                Cell::new(bound),
                share,
                words(r.verdict(&self.ceilings)),
            ];
            if rows_flagged {
                cells.push(flag_cell(&r.timing));
            }
            t.add_row(cells);
        }
        let _ = writeln!(s, "{t}");
        let left = self.rows.iter().filter(|r| r.memory_bound).count();
        let _ = writeln!(
            s,
            "{left} of the {} sit left of the ridge point, so for those the sloped (bandwidth) ceiling binds.",
            self.rows.len()
        );
        let _ = writeln!(
            s,
            "The compulsory columns are the bytes the algorithm asks global memory for, over measured time: \
             not what DRAM moved."
        );
        let _ = writeln!(
            s,
            "Against the limit: seed 002's rule of thumb, {:.0}% of the limit or more is close to done, {:.0}% or less \
             says something is wrong, between the two the rule gives no verdict; the ceilings are read against the \
             derived limits, each kernel against the measured ceiling that binds it.",
            crate::report::CLOSE_TO_DONE_PCT,
            crate::report::SOMETHING_WRONG_PCT
        );
        let above = |memory: bool| -> Vec<&str> {
            self.rows
                .iter()
                .filter(|r| r.above_roof() && r.memory_bound == memory)
                .map(|r| r.kernel.label())
                .collect()
        };
        let (left_above, right_above) = (above(true), above(false));
        if !left_above.is_empty() {
            let _ = writeln!(
                s,
                "Above the roof at their compulsory intensity, past the noise: {}. No kernel moves bytes from DRAM \
                 faster than the bandwidth ceiling, so caches likely served part of their compulsory bytes; {}",
                left_above.join(", "),
                if self.counters.is_some() {
                    "the measured-bytes table below and the chart place them by the bytes DRAM moved."
                } else {
                    "--ncu measures the bytes DRAM moved and places them by those."
                }
            );
        }
        if !right_above.is_empty() {
            let _ = writeln!(
                s,
                "Faster than the FMA ceiling, past the noise: {}. For this instruction mix the FMA chains are not the \
                 GPU's FP32 limit.",
                right_above.join(", ")
            );
        }
        if !self.ragged.is_empty() {
            s.push_str(&self.ragged_section());
        }
        s.push_str(&self.gemm_section());
        if let Some(counters) = &self.counters {
            s.push_str(&self.counters_table(counters));
        }
        s
    }

    /// One JSON object per row: the bandwidth ceiling (which stream set it),
    /// the six stream rows, the seed's copy, the FMA ceiling, the driver
    /// copy, the ridge point; then the tensor-core rows where measured
    /// (`mma_peak`, `wgmma_peak` on 9.0, cuBLAS at each side), the tensor ceiling
    /// (`ceiling-tensor`, always: its `tensor_ceiling` object, or `why_none`)
    /// and the tensor ridge point where measured; then the ten kernels. Each
    /// carries the run's context, and every measured ceiling and stream row
    /// its `share_of_derived`.
    fn json_lines(&self) -> Vec<serde_json::Value> {
        let ctx = serde_json::to_value(&self.context).expect("the context serialises");
        let timing = |t: &Timing| {
            json!({
                "ms": t.median_ms(),
                "ms_min": t.min_ms(),
                "ms_max": t.max_ms(),
                "samples_ms": t.samples_ms,
            })
        };
        let merge = |mut row: serde_json::Value, t: &Timing, v: Option<Verdict>| {
            if let (Some(obj), serde_json::Value::Object(extra)) = (row.as_object_mut(), timing(t))
            {
                obj.extend(extra);
                obj.insert("context".into(), ctx.clone());
            }
            add_readings(
                &mut row,
                v.as_ref(),
                self.context.clocks.while_timed(t.window.as_ref()).as_ref(),
            );
            row
        };

        let dram = self.info.derived_dram_bytes_per_s().map(|d| d / 1e9);
        let peak = self.info.derived_fp32_flop_per_s().map(|f| f / 1e9);
        let of_dram = |gb_per_s: f64| verdict(gb_per_s, dram, "the derived DRAM bandwidth", "GB/s");
        let best = self.best();
        let mut lines = vec![json!({
            "variant": "ceiling-bandwidth", "symbol": null, "set_by": best.kernel.symbol(),
            "shape": best.shape, "bytes": best.cost.bytes,
            "metric": "bandwidth", "value": best.gb_per_s, "unit": "GB/s",
            "derived_limit": dram, "share_of_derived": dram.map(|d| best.gb_per_s / d),
            "context": ctx.clone(),
        })];
        add_readings(&mut lines[0], of_dram(best.gb_per_s).as_ref(), None);
        for r in &self.streams {
            lines.push(merge(
                json!({
                    "variant": format!("{}, {}", r.kernel.label(), r.shape.label()),
                    "symbol": r.kernel.symbol(), "shape": r.shape,
                    "key": format!("{}/{}", r.kernel.symbol(), r.shape.key()),
                    "flop": r.cost.flop, "bytes": r.cost.bytes,
                    "metric": "bandwidth", "value": r.gb_per_s, "unit": "GB/s",
                    "derived_limit": dram, "share_of_derived": dram.map(|d| r.gb_per_s / d),
                }),
                &r.timing,
                of_dram(r.gb_per_s),
            ));
        }
        lines.push(merge(
            json!({
                "variant": "seed-copy", "symbol": Kernel::Copy.symbol(),
                "bytes": cost(Kernel::Copy, &self.sizes).bytes,
                "metric": "bandwidth", "value": self.seed_copy_gb_per_s(), "unit": "GB/s",
                "derived_limit": dram, "share_of_derived": dram.map(|d| self.seed_copy_gb_per_s() / d),
            }),
            &self.copy,
            of_dram(self.seed_copy_gb_per_s()),
        ));
        lines.push(merge(
            json!({
                "variant": "ceiling-fma", "symbol": Kernel::FmaPeak.symbol(),
                "flop": cost(Kernel::FmaPeak, &self.sizes).flop,
                "metric": "throughput", "value": self.ceilings.fma_gflop_per_s, "unit": "GFLOP/s",
                "derived_limit": peak, "share_of_derived": peak.map(|p| self.ceilings.fma_gflop_per_s / p),
            }),
            &self.fma,
            verdict(self.ceilings.fma_gflop_per_s, peak, "the derived FP32 peak", "GFLOP/s"),
        ));
        lines.push(merge(
            json!({
                "variant": "driver-copy", "symbol": "cuMemcpyDtoDAsync",
                "bytes": cost(Kernel::Copy, &self.sizes).bytes,
                "metric": "bandwidth", "value": self.driver_copy_gb_per_s(), "unit": "GB/s",
                "derived_limit": dram, "share_of_derived": dram.map(|d| self.driver_copy_gb_per_s() / d),
            }),
            &self.driver_copy,
            of_dram(self.driver_copy_gb_per_s()),
        ));
        let mut ridge = json!({
            "variant": "ridge-point", "metric": "ridge", "value": self.ceilings.ridge(), "unit": "FLOP/byte",
        });
        if let Some(obj) = ridge.as_object_mut() {
            obj.insert("context".into(), ctx.clone());
        }
        lines.push(ridge);
        // The tensor-core rows: mma_peak, wgmma_peak and each cuBLAS side (timed rows,
        // each with its samples), then the ceiling itself, always (with why
        // there is none where there is none).
        let tensor_derived = self
            .tensor
            .as_ref()
            .ok()
            .and_then(|tc| tc.derived_gflop_per_s);
        // Read only where the run has a ceiling (every row below that uses
        // it is one of the ceiling's).
        let tensor_derived_name = self
            .tensor
            .as_ref()
            .map_or_else(|_| String::new(), TensorCeiling::derived_name);
        let of_tensor = |g: f64| verdict(g, tensor_derived, &tensor_derived_name, "GFLOP/s");
        // A timed tensor-core row: its own fields, then its FLOP, rate and
        // share of the derived limit, its timing and its reading.
        let tensor_row = |mut row: serde_json::Value, flop: f64, rate: f64, t: &Timing| {
            if let Some(obj) = row.as_object_mut() {
                obj.extend([
                    ("flop".to_string(), json!(flop)),
                    ("metric".to_string(), json!("throughput")),
                    ("value".to_string(), json!(rate)),
                    ("unit".to_string(), json!("GFLOP/s")),
                    ("derived_limit".to_string(), json!(tensor_derived)),
                    (
                        "share_of_derived".to_string(),
                        json!(tensor_derived.map(|d| rate / d)),
                    ),
                ]);
            }
            merge(row, t, of_tensor(rate))
        };
        if let Ok(tc) = &self.tensor {
            lines.push(tensor_row(
                json!({"variant": "ceiling-tensor-mma", "symbol": tc.sizes.mma_symbol(), "precision": tc.sizes.half}),
                tc.sizes.mma_flop(),
                tc.mma_gflop_per_s,
                &tc.mma,
            ));
            if let Ok(w) = &tc.wgmma {
                lines.push(tensor_row(
                    json!({"variant": "ceiling-tensor-wgmma", "symbol": HopperKernel::WgmmaPeak.symbol(), "precision": tc.sizes.half}),
                    tc.sizes.wgmma_flop(),
                    w.gflop_per_s,
                    &w.timing,
                ));
            }
            for c in tc.cublas.iter().flatten() {
                lines.push(tensor_row(
                    json!({
                        "variant": format!("cublas-{}-{}", tc.sizes.half.name(), c.side),
                        "symbol": tc.sizes.cublas_symbol(),
                        "key": format!("{}/{}", tc.sizes.cublas_symbol(), c.side), "side": c.side,
                        "precision": tc.sizes.half,
                    }),
                    super::tensor::cublas_flop(c.side),
                    c.gflop_per_s,
                    &c.timing,
                ));
            }
        }
        let (value, facts, why_none) = match &self.tensor {
            Ok(tc) => (Some(tc.gflop_per_s()), tc.json(), None),
            Err(why) => (None, serde_json::Value::Null, Some(why.as_str())),
        };
        let mut ceiling = json!({
            "variant": "ceiling-tensor", "symbol": null,
            "set_by": self.tensor.as_ref().ok().map(|tc| tc.source()),
            "metric": "throughput", "value": value, "unit": "GFLOP/s",
            "derived_limit": tensor_derived,
            "share_of_derived": value.zip(tensor_derived).map(|(v, d)| v / d),
            "tensor_ceiling": facts, "why_none": why_none,
            "context": ctx.clone(),
        });
        add_readings(&mut ceiling, value.and_then(of_tensor).as_ref(), None);
        lines.push(ceiling);
        if let Ok(tc) = &self.tensor {
            lines.push(json!({
                "variant": "ridge-point-tensor", "metric": "ridge",
                "value": tc.ridge(self.ceilings.bandwidth_gb_per_s), "unit": "FLOP/byte",
                "context": ctx.clone(),
            }));
        }
        for g in self.gemm.iter().flat_map(|m| &m.points) {
            let roof = self.gemm_roof(g);
            lines.push(merge(
                json!({
                    "variant": format!("gemm-{}", g.precision.name()), "symbol": g.symbol,
                    "key": format!("{}/{}", g.symbol, g.side),
                    "label": g.label, "precision": g.precision, "side": g.side,
                    "flop": g.flop, "bytes": g.bytes, "intensity": g.intensity(),
                    "metric": "throughput", "value": g.gflop_per_s(), "unit": "GFLOP/s",
                    "roof_gflop_per_s": roof.map(|r| r.0), "roof": roof.map(|r| r.1),
                    "share_of_roof": roof.map(|r| g.gflop_per_s() / r.0),
                }),
                &g.timing,
                None,
            ));
        }
        for r in &self.rows {
            let measured = self.counters.as_ref().and_then(|c| c.get(r.kernel.symbol())).map(|c| {
                json!({
                    "dram_bytes": c.dram_bytes, "l2_bytes": c.l2_bytes, "l1_bytes": c.l1_bytes,
                    "dram_gb_per_s": c.dram_bytes.map(|b| per_second_e9(b, r.timing.median_ms())),
                    "dram_intensity": c.dram_bytes.filter(|&b| b > 0.0).map(|b| r.cost.flop / b),
                    "achieved_occupancy_pct": c.achieved_occupancy_pct,
                    "theoretical_occupancy_pct": c.theoretical_occupancy_pct,
                })
            });
            lines.push(merge(
                json!({
                    "measured": measured,
                    "variant": r.kernel.label(), "symbol": r.kernel.symbol(),
                    "flop": r.cost.flop, "bytes": r.cost.bytes, "intensity": r.cost.intensity(),
                    "gb_per_s": r.gb_per_s, "gflop_per_s": r.gflop_per_s,
                    "bound": if r.memory_bound { "memory" } else { "compute" },
                    "percent_of_ceiling": r.percent_of_ceiling, "above_roof": r.above_roof(),
                    "noise_pct": r.noise_pct,
                    "metric": "time", "value": r.timing.median_ms(), "unit": "ms",
                }),
                &r.timing,
                r.verdict(&self.ceilings),
            ));
        }
        for p in &self.ragged {
            for edge in Edge::ALL {
                lines.push(merge(
                    json!({
                        "variant": format!("{}, {} size", p.what, edge.key()),
                        "symbol": p.stem, "key": p.key(edge), "edge": edge,
                        "elements": p.elems(edge),
                        "shape_text": match edge { Edge::Round => &p.round_shape, Edge::Ragged => &p.ragged_shape },
                        "ps_per_element": p.ps_per_elem(edge),
                        "metric": "time", "value": p.timing(edge).median_ms(), "unit": "ms",
                    }),
                    p.timing(edge),
                    // The pair reads the edge's cost, not the row against a limit.
                    None,
                ));
            }
            let mut reading = p.json();
            if let Some(obj) = reading.as_object_mut() {
                obj.insert("variant".into(), json!("round-vs-ragged"));
                obj.insert("context".into(), ctx.clone());
            }
            lines.push(reading);
        }
        lines
    }

    fn chart(&self) -> Option<Chart> {
        Some(Report::chart(self))
    }

    fn merge_counters(&mut self, profile: &crate::ncu::Profile) {
        Report::merge_counters(self, profile.by_kernel());
    }
}
