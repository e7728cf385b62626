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
    pub copy_gb_per_s: f64,
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
    let ridge = chart.fma_gflop_per_s / chart.copy_gb_per_s;
    let shown: Vec<&Point> = chart.points.iter().filter(|p| p.intensity > 0.0 && p.gflop_per_s > 0.0).collect();
    let (x_lo, x_hi) = shown
        .iter()
        .map(|p| p.intensity)
        .chain([ridge])
        .fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
    let x_range = (x_lo / 4.0)..(x_hi * 8.0);
    let y_lo = shown.iter().map(|p| p.gflop_per_s).fold(chart.copy_gb_per_s * x_range.start, f64::min);
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
        (x_range.start, chart.copy_gb_per_s * x_range.start),
        (ridge, chart.fma_gflop_per_s),
        (x_range.end, chart.fma_gflop_per_s),
    ];
    ctx.draw_series(LineSeries::new(roof, BLACK.stroke_width(2)))
        .map_err(|e| err(&e))?
        .label(format!(
            "measured ceilings: copy {:.0} GB/s, FMA {:.0} GFLOP/s",
            chart.copy_gb_per_s, chart.fma_gflop_per_s
        ))
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
    ctx.draw_series(std::iter::once(Circle::new((ridge, chart.fma_gflop_per_s), 5, BLACK.filled())))
        .map_err(|e| err(&e))?
        .label(format!("ridge point, {ridge:.2} FLOP/byte"))
        .legend(|(x, y)| Circle::new((x + 10, y), 4, BLACK.filled()));

    for series in [Series::Rust, Series::CudaC, Series::MeasuredDram] {
        let pts: Vec<&&Point> = shown.iter().filter(|p| p.series == series).collect();
        if pts.is_empty() {
            continue;
        }
        let colour = series.colour();
        // Rust's labels sit above their points, the other series' below, and
        // each series alternates by a line, so neighbours stay readable.
        let base = match series {
            Series::Rust => -14,
            Series::CudaC | Series::MeasuredDram => 6,
        };
        ctx.draw_series(pts.iter().enumerate().map(|(i, p)| {
            let dy = if i % 2 == 0 { base } else { base + 18 };
            EmptyElement::at((p.intensity, p.gflop_per_s))
                + Circle::new((0, 0), 4, colour.filled())
                + Text::new(p.label.clone(), (6, dy), ("sans-serif", 12).into_font().color(&colour))
        }))
        .map_err(|e| err(&e))?
        .label(series.name())
        .legend(move |(x, y)| Circle::new((x + 10, y), 4, colour.filled()));
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
        .filter(|p| !(p.intensity > 0.0 && p.gflop_per_s > 0.0) && p.series == Series::Rust)
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
