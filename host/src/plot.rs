//! The roofline chart: log-log, attainable GFLOP/s against arithmetic
//! intensity, with the measured ceilings (memory and FP32, and the BF16
//! tensor cores' as a second flat roof where measured), the ridge points
//! and each kernel as a labelled point; drawn with plotters into an SVG
//! file.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Which series a point belongs to (its colour and marker).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Series {
    /// A Rust kernel at its compulsory intensity.
    Rust,
    /// A CUDA C twin at the same intensity.
    CudaC,
    /// A Rust kernel at the intensity of the bytes DRAM actually moved
    /// (Nsight Compute's `dram__bytes.sum`).
    MeasuredDram,
    /// A GEMM lesson kernel at its compulsory intensity, under the flat
    /// roof of its precision.
    Gemm,
}

impl Series {
    fn name(self) -> &'static str {
        match self {
            Series::Rust => "Rust, compulsory bytes",
            Series::CudaC => "CUDA C, compulsory bytes",
            Series::MeasuredDram => "Rust, DRAM bytes measured by ncu",
            Series::Gemm => "GEMM lesson (Rust), compulsory bytes",
        }
    }

    fn colour(self) -> RGBColor {
        match self {
            Series::Rust => RGBColor(0xc0, 0x39, 0x2b),
            Series::CudaC => RGBColor(0x1f, 0x77, 0xb4),
            Series::MeasuredDram => RGBColor(0x2c, 0xa0, 0x2c),
            Series::Gemm => RGBColor(0x8e, 0x44, 0xad),
        }
    }
}

/// One kernel on the chart.
#[derive(Debug, Clone)]
pub struct Point {
    /// Its label.
    pub label: String,
    /// FLOP per byte.
    pub intensity: f64,
    /// GFLOP/s achieved.
    pub gflop_per_s: f64,
    /// Its series.
    pub series: Series,
}

/// Everything the chart shows.
#[derive(Debug, Clone)]
pub struct Chart {
    /// The title (GPU and date).
    pub title: String,
    /// The measured bandwidth ceiling, GB/s.
    pub bandwidth_gb_per_s: f64,
    /// The measured FP32 ceiling, GFLOP/s.
    pub fma_gflop_per_s: f64,
    /// The BF16 tensor-core ceiling, drawn as a second flat roof above the
    /// FP32 one; `None` where the run has none.
    pub tensor: Option<TensorRoof>,
    /// The kernels (points with 0 FLOP cannot sit on a log axis and are left
    /// out, and say so in the caption).
    pub points: Vec<Point>,
}

/// The tensor-core roof of a chart.
#[derive(Debug, Clone)]
pub struct TensorRoof {
    /// Its precision, for the legend: `BF16`, or `FP16` on compute
    /// capability 7.5.
    pub precision: &'static str,
    /// The ceiling, GFLOP/s.
    pub gflop_per_s: f64,
    /// What set it (`mma.sync` or `cuBLAS`), for the legend.
    pub set_by: String,
}

/// The chart's size in pixels (width, height).
const ROOFLINE_PX: (u32, u32) = (1100, 720);

/// Draws `chart` into an SVG file at `path`.
///
/// # Errors
/// The file cannot be written (plotters' error, as text).
pub fn roofline_svg(chart: &Chart, path: &std::path::Path) -> Result<(), String> {
    let svg = roofline_svg_text(chart)?;
    std::fs::write(path, svg).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// `chart` as the text of an SVG document (the lesson book embeds it).
///
/// # Errors
/// Plotters failed to draw (its error, as text).
pub fn roofline_svg_text(chart: &Chart) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, ROOFLINE_PX).into_drawing_area();
        draw_roofline(chart, &root)?;
    }
    Ok(svg)
}

fn draw_roofline<DB: DrawingBackend>(
    chart: &Chart,
    root: &DrawingArea<DB, plotters::coord::Shift>,
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("drawing the roofline chart: {e}");
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let ridge = chart.fma_gflop_per_s / chart.bandwidth_gb_per_s;
    // The tensor roof only where it is a finite rate above the FP32 one
    // (below it, it would not be a roof of anything the chart shows).
    let tensor = chart
        .tensor
        .as_ref()
        .filter(|t| t.gflop_per_s.is_finite() && t.gflop_per_s > chart.fma_gflop_per_s);
    let tensor_ridge = tensor.map(|t| t.gflop_per_s / chart.bandwidth_gb_per_s);
    // A point sits on a log axis only with a finite, positive intensity and
    // rate (a kernel that moved 0 DRAM bytes has an infinite one).
    let on_chart = |p: &Point| {
        p.intensity.is_finite()
            && p.gflop_per_s.is_finite()
            && p.intensity > 0.0
            && p.gflop_per_s > 0.0
    };
    let shown: Vec<&Point> = chart.points.iter().filter(|p| on_chart(p)).collect();
    let (x_lo, x_hi) = shown
        .iter()
        .map(|p| p.intensity)
        .chain([ridge])
        .chain(tensor_ridge)
        .fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
    let x_range = (x_lo / 4.0)..(x_hi * 8.0);
    let y_lo = shown
        .iter()
        .map(|p| p.gflop_per_s)
        .fold(chart.bandwidth_gb_per_s * x_range.start, f64::min);
    let y_top = tensor.map_or(chart.fma_gflop_per_s, |t| t.gflop_per_s);
    let y_range = (y_lo / 2.0)..(y_top * 3.0);

    let mut ctx = ChartBuilder::on(root)
        .caption(&chart.title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(x_range.clone().log_scale(), y_range.clone().log_scale())
        .map_err(|e| err(&e))?;
    ctx.configure_mesh()
        .x_desc("arithmetic intensity, FLOP per byte")
        .y_desc("GFLOP/s")
        .x_label_formatter(&|x| format!("{x}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()
        .map_err(|e| err(&e))?;

    // The two regions, split at the ridge point: left of it no kernel can be
    // compute bound (memory bound), right of it none can be memory bound.
    let shade = |colour: RGBColor| colour.mix(0.10).filled();
    let regions = [
        (
            x_range.start,
            ridge,
            RGBColor(0x1f, 0x77, 0xb4),
            "memory-bound region",
        ),
        (
            ridge,
            x_range.end,
            RGBColor(0xff, 0x7f, 0x0e),
            "compute-bound region",
        ),
    ];
    for (lo, hi, colour, name) in regions {
        ctx.draw_series(std::iter::once(Rectangle::new(
            [(lo, y_range.start), (hi, y_range.end)],
            shade(colour),
        )))
        .map_err(|e| err(&e))?
        .label(name)
        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 20, y + 5)], shade(colour)));
    }

    // The roof: bandwidth x intensity up to the ridge, then the FP32 peak.
    let roof = [
        (x_range.start, chart.bandwidth_gb_per_s * x_range.start),
        (ridge, chart.fma_gflop_per_s),
        (x_range.end, chart.fma_gflop_per_s),
    ];
    ctx.draw_series(LineSeries::new(roof, BLACK.stroke_width(2)))
        .map_err(|e| err(&e))?
        .label(format!(
            "measured ceilings: memory {:.0} GB/s, FMA {:.0} GFLOP/s",
            chart.bandwidth_gb_per_s, chart.fma_gflop_per_s
        ))
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
    ctx.draw_series(std::iter::once(Circle::new(
        (ridge, chart.fma_gflop_per_s),
        5,
        BLACK.filled(),
    )))
    .map_err(|e| err(&e))?
    .label(format!("ridge point, {ridge:.2} FLOP/byte"))
    .legend(|(x, y)| Circle::new((x + 10, y), 4, BLACK.filled()));

    // The tensor roof: the sloped roof carried on (dashed) from the FP32
    // ridge to the tensor ridge, then flat at the tensor ceiling.
    if let (Some(t), Some(t_ridge)) = (tensor, tensor_ridge) {
        let colour = RGBColor(0x7b, 0x3f, 0x9e);
        let roof = [
            (ridge, chart.fma_gflop_per_s),
            (t_ridge, t.gflop_per_s),
            (x_range.end, t.gflop_per_s),
        ];
        ctx.draw_series(DashedLineSeries::new(roof, 8, 5, colour.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(format!(
                "{} tensor-core ceiling ({}): {:.0} GFLOP/s, ridge {t_ridge:.1} FLOP/byte",
                t.precision, t.set_by, t.gflop_per_s
            ))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
    }

    // A kernel placed twice (compulsory and measured DRAM intensity, one
    // rate) is one kernel: an arrow runs from the bytes the algorithm asks
    // for to the bytes DRAM moved (left: more bytes moved than asked for;
    // right: the caches served some of the asked-for bytes).
    let colour = Series::MeasuredDram.colour();
    for p in shown.iter().filter(|p| p.series == Series::MeasuredDram) {
        let Some(q) = shown
            .iter()
            .find(|q| q.series == Series::Rust && q.label == p.label)
        else {
            continue;
        };
        let from = ctx.backend_coord(&(q.intensity, q.gflop_per_s));
        let to = ctx.backend_coord(&(p.intensity, p.gflop_per_s));
        let (dx, dy) = ((to.0 - from.0) as f64, (to.1 - from.1) as f64);
        let len = (dx * dx + dy * dy).sqrt();
        if len < 12.0 {
            continue; // the two points overlap: no room for an arrow
        }
        let (ux, uy) = (dx / len, dy / len);
        // Stop short of both markers (radius 4) and end in a 9-pixel head.
        let at = |d: f64| {
            (
                (from.0 as f64 + ux * d) as i32,
                (from.1 as f64 + uy * d) as i32,
            )
        };
        let (start, tip, base) = (at(6.0), at(len - 6.0), at(len - 15.0));
        let wing = |s: f64| {
            (
                (base.0 as f64 - uy * s) as i32,
                (base.1 as f64 + ux * s) as i32,
            )
        };
        root.draw(&PathElement::new(vec![start, base], colour.stroke_width(2)))
            .map_err(|e| err(&e))?;
        root.draw(&Polygon::new(
            vec![tip, wing(4.5), wing(-4.5)],
            colour.filled(),
        ))
        .map_err(|e| err(&e))?;
    }
    for series in [
        Series::Rust,
        Series::CudaC,
        Series::MeasuredDram,
        Series::Gemm,
    ] {
        let pts: Vec<&&Point> = shown.iter().filter(|p| p.series == series).collect();
        if pts.is_empty() {
            continue;
        }
        let colour = series.colour();
        ctx.draw_series(
            pts.iter()
                .map(|p| Circle::new((p.intensity, p.gflop_per_s), 4, colour.filled())),
        )
        .map_err(|e| err(&e))?
        .label(series.name())
        .legend(move |(x, y)| Circle::new((x + 10, y), 4, colour.filled()));
    }
    // Labels, placed greedily in pixels: each beside its point, moved up or
    // down a line at a time until it overlaps no label placed before it.
    let mut placed: Vec<(i32, i32, i32, i32)> = Vec::new();
    for p in &shown {
        let (px, py) = ctx.backend_coord(&(p.intensity, p.gflop_per_s));
        let (w, h) = (7 * p.label.chars().count() as i32, 14);
        let x = px + 7;
        let first = if p.series == Series::Rust { -16 } else { 4 };
        let candidates = (0..12).map(|k| {
            first
                + if k % 2 == 0 {
                    k / 2 * 14
                } else {
                    -(k / 2 + 1) * 14
                }
        });
        let y = candidates
            .map(|dy| py + dy)
            .find(|&y| {
                !placed
                    .iter()
                    .any(|&(ax, ay, aw, ah)| x < ax + aw && ax < x + w && y < ay + ah && ay < y + h)
            })
            .unwrap_or(py + first);
        placed.push((x, y, w, h));
        let colour = p.series.colour();
        if y != py + first {
            // Moved off its spot: a leader line says which point it names.
            root.draw(&PathElement::new(
                vec![(px + 3, py), (x - 1, y + h / 2)],
                colour.stroke_width(1),
            ))
            .map_err(|e| err(&e))?;
        }
        root.draw(&Text::new(
            p.label.clone(),
            (x, y),
            ("sans-serif", 12).into_font().color(&colour),
        ))
        .map_err(|e| err(&e))?;
    }
    ctx.configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    let left_out: Vec<&str> = chart
        .points
        .iter()
        .filter(|p| !on_chart(p) && p.series == Series::Rust)
        .map(|p| p.label.as_str())
        .collect();
    if !left_out.is_empty() {
        root.draw(&Text::new(
            format!("0 FLOP, so not on a log-log chart: {}", left_out.join("; ")),
            (90, 700),
            ("sans-serif", 13),
        ))
        .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// One bar of a [`Bars`] chart.
#[derive(Debug, Clone)]
pub struct Bar {
    /// The row it measures (drawn left of the bar).
    pub label: String,
    /// The measured value, in the chart's unit (finite, at least 0).
    pub value: f64,
}

/// A horizontal bar chart: one measured value per row of a run (the lesson
/// book draws one per lesson from the recorded rows).
#[derive(Debug, Clone)]
pub struct Bars {
    /// The title (what is measured, GPU and date).
    pub title: String,
    /// The value's unit, as the axis names it (`GB/s`, `ms`, ...).
    pub unit: String,
    /// The bars, top to bottom.
    pub bars: Vec<Bar>,
}

/// `bars` as the text of an SVG document: 900 pixels wide, 34 a bar.
///
/// # Errors
/// No bar, a value that is not finite and at least 0, or plotters failed to
/// draw (its error, as text).
pub fn bars_svg_text(bars: &Bars) -> Result<String, String> {
    if bars.bars.is_empty() {
        return Err(format!("the bar chart '{}' has no bar", bars.title));
    }
    if let Some(b) = bars
        .bars
        .iter()
        .find(|b| !(b.value.is_finite() && b.value >= 0.0))
    {
        return Err(format!(
            "the bar '{}' has the value {} (not a finite value >= 0)",
            b.label, b.value
        ));
    }
    let n = bars.bars.len();
    let height = 110 + 34 * n as u32;
    let label_px = bars
        .bars
        .iter()
        .map(|b| b.label.chars().count())
        .max()
        .unwrap_or(0) as u32
        * 7
        + 16;
    let label_px = label_px.clamp(80, 460);
    let max = bars
        .bars
        .iter()
        .map(|b| b.value)
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let err = |e: &dyn std::fmt::Display| format!("drawing the bar chart '{}': {e}", bars.title);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900 + label_px, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let mut ctx = ChartBuilder::on(&root)
            .caption(&bars.title, ("sans-serif", 18))
            .margin(14)
            .x_label_area_size(40)
            .y_label_area_size(label_px)
            .build_cartesian_2d(0.0..max * 1.18, 0.0..n as f64)
            .map_err(|e| err(&e))?;
        ctx.configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .light_line_style(WHITE)
            .x_label_formatter(&|x| {
                if x.fract() == 0.0 {
                    format!("{x:.0}")
                } else {
                    format_value(*x)
                }
            })
            .x_desc(bars.unit.as_str())
            .draw()
            .map_err(|e| err(&e))?;
        let colour = Series::Rust.colour();
        for (i, b) in bars.bars.iter().enumerate() {
            // Bar i from the top: rows count down from n.
            let top = (n - i) as f64 - 0.15;
            let bottom = (n - i - 1) as f64 + 0.15;
            ctx.draw_series(std::iter::once(Rectangle::new(
                [(0.0, bottom), (b.value, top)],
                colour.mix(0.8).filled(),
            )))
            .map_err(|e| err(&e))?;
            let (x0, y) = ctx.backend_coord(&(0.0, (bottom + top) / 2.0));
            let (x1, _) = ctx.backend_coord(&(b.value, (bottom + top) / 2.0));
            let left = ("sans-serif", 13)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Right, VPos::Center));
            root.draw(&Text::new(b.label.clone(), (x0 - 6, y), left))
                .map_err(|e| err(&e))?;
            let right = ("sans-serif", 12)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Center));
            root.draw(&Text::new(format_value(b.value), (x1 + 5, y), right))
                .map_err(|e| err(&e))?;
        }
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

/// A measured value as a chart or a generated table prints it: four
/// significant digits below 1000, one decimal from 1000 on.
pub fn format_value(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else if a >= 1.0 {
        format!("{v:.3}")
    } else if a == 0.0 {
        "0".to_string()
    } else {
        let digits = (3 - a.log10().floor() as i32).max(0) as usize;
        format!("{v:.digits$}")
    }
}
