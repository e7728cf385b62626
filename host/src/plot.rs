//! The roofline chart: log-log, attainable GFLOP/s against arithmetic
//! intensity, with both measured ceilings, the ridge point and each kernel
//! as a labelled point; drawn with plotters into an SVG file.

use plotters::prelude::*;

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
}

impl Series {
    fn name(self) -> &'static str {
        match self {
            Series::Rust => "Rust, compulsory bytes",
            Series::CudaC => "CUDA C, compulsory bytes",
            Series::MeasuredDram => "Rust, DRAM bytes measured by ncu",
        }
    }

    fn colour(self) -> RGBColor {
        match self {
            Series::Rust => RGBColor(0xc0, 0x39, 0x2b),
            Series::CudaC => RGBColor(0x1f, 0x77, 0xb4),
            Series::MeasuredDram => RGBColor(0x2c, 0xa0, 0x2c),
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
    /// The kernels (points with 0 FLOP cannot sit on a log axis and are left
    /// out, and say so in the caption).
    pub points: Vec<Point>,
}

/// Draws `chart` into an SVG file at `path`.
///
/// # Errors
/// The file cannot be written (plotters' error, as text).
pub fn roofline_svg(chart: &Chart, path: &std::path::Path) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("drawing {}: {e}", path.display());
    let root = SVGBackend::new(path, (1100, 720)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let ridge = chart.fma_gflop_per_s / chart.bandwidth_gb_per_s;
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
        .fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
    let x_range = (x_lo / 4.0)..(x_hi * 8.0);
    let y_lo = shown
        .iter()
        .map(|p| p.gflop_per_s)
        .fold(chart.bandwidth_gb_per_s * x_range.start, f64::min);
    let y_range = (y_lo / 2.0)..(chart.fma_gflop_per_s * 3.0);

    let mut ctx = ChartBuilder::on(&root)
        .caption(&chart.title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(x_range.clone().log_scale(), y_range.log_scale())
        .map_err(|e| err(&e))?;
    ctx.configure_mesh()
        .x_desc("arithmetic intensity, FLOP per byte")
        .y_desc("GFLOP/s")
        .x_label_formatter(&|x| format!("{x}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()
        .map_err(|e| err(&e))?;

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

    // A kernel placed twice (compulsory and measured DRAM intensity, one
    // rate) is one kernel: a dashed line joins its two points.
    for p in shown.iter().filter(|p| p.series == Series::MeasuredDram) {
        if let Some(q) = shown
            .iter()
            .find(|q| q.series == Series::Rust && q.label == p.label)
        {
            ctx.draw_series(DashedLineSeries::new(
                [(q.intensity, q.gflop_per_s), (p.intensity, p.gflop_per_s)],
                4,
                3,
                Series::MeasuredDram.colour().stroke_width(1),
            ))
            .map_err(|e| err(&e))?;
        }
    }
    for series in [Series::Rust, Series::CudaC, Series::MeasuredDram] {
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
            format!("0 FLOP, so not on a log-log chart: {}", left_out.join(", ")),
            (90, 700),
            ("sans-serif", 13),
        ))
        .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
