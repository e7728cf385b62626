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
    "gemm",
];

/// The kernel of each lesson whose PTX and SASS the book shows (lesson,
/// exported symbol): `cargo xtask record` saves `lab <lesson> --asm
/// <kernel>` for each as `asm-<kernel>.txt`.
pub const BOOK_ASM: &[(&str, &str)] = &[
    ("harness", "harness_add"),
    ("bandwidth", "copy_vec16"),
    ("vectorize", "add_vec16_f32"),
    ("unroll", "add_unrolled_4"),
    ("specialize", "dot_specialized_4"),
    ("fuse", "fused_mul_add_relu"),
    ("conv2d", "conv2d_valid"),
    ("roofline", "vector_add"),
    ("roofline", "transpose_tiled"),
    ("roofline", "matmul_naive"),
    ("fusion", "chain_fused_wide_8"),
    ("softmax", "softmax_row_retained"),
    ("gemm", "gemm_regblock"),
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
