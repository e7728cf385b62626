//! What the `cargo xtask` binary and the tests share: the lessons `lab`
//! runs, by name (`sanitize all` and the bundle's `run.sh` run each; a test
//! holds this list against `lab`'s own).

/// The lessons `lab` runs, in its order.
pub const LESSONS: &[&str] = &[
    "roofline",
    "fusion",
    "vectorize",
    "unroll",
    "fuse",
    "specialize",
    "harness",
    "conv2d",
    "bandwidth",
    "softmax",
];

/// The lessons that draw a chart (`lab <lesson> --plot FILE.svg`):
/// `cargo xtask profile` asks these for one. A test holds this list against
/// `lab`'s capabilities.
pub const PLOTTED: &[&str] = &["roofline"];

/// `lab`'s arguments for `cargo xtask profile <lesson> [flags]`: `--ncu`
/// after the lesson, and `--plot <chart_dir>/<lesson>.svg` where the lesson
/// is one of [`PLOTTED`]; the flags given follow.
pub fn profile_args(args: Vec<String>, chart_dir: &std::path::Path) -> Vec<String> {
    let mut forwarded = args;
    let at = 1.min(forwarded.len());
    let mut added = vec!["--ncu".to_string()];
    if let Some(lesson) = forwarded.first().filter(|l| PLOTTED.contains(&l.as_str())) {
        let chart = chart_dir.join(format!("{lesson}.svg"));
        added.extend(["--plot".to_string(), chart.display().to_string()]);
    }
    forwarded.splice(at..at, added);
    forwarded
}
