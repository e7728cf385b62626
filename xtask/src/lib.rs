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
