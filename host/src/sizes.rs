//! Sizes from the GPU at hand. Every lesson builds one sizes value from two
//! things, whether the run is `--quick` and what the GPU reports about
//! itself (its L2, memory, SMs, shared memory and compute capability), and
//! uses that one value for the run and for the context a record keeps.
//!
//! The rule every full run keeps: a buffer timed as a DRAM stream is at
//! least [`L2_MULTIPLE`] times the GPU's L2, so the time is the memory
//! system's and not the cache's. Sizes grow by powers of two from the
//! seeds' sizes until they meet it; no size assumes a particular GPU.

use serde::Serialize;

use crate::gpu::DeviceInfo;

/// How many times the L2 a streamed buffer must hold: at 4x, at most a
/// quarter of a buffer can still be in L2 from the previous launch.
pub const L2_MULTIPLE: usize = 4;

/// One buffer a lesson times as a DRAM stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stream {
    /// What it is (`"a, b, out"`, `"x"`), for the report's line.
    pub name: &'static str,
    /// Bytes of one such buffer.
    pub bytes: usize,
}

impl Stream {
    /// A stream of `count` elements of `T`.
    pub fn of<T>(name: &'static str, count: usize) -> Stream {
        Stream {
            name,
            bytes: count * size_of::<T>(),
        }
    }
}

/// What every lesson's sizes value answers, for the record, the report's
/// sizes line and the GPU-profile test.
pub trait LessonSizes: Serialize + Clone + std::fmt::Debug + Sized {
    /// The sizes of a run on `info`'s GPU (`quick`: the sanitizer's small
    /// sizes, every check still made).
    ///
    /// # Errors
    /// [`crate::Error::Size`] where the GPU cannot hold the lesson at all.
    fn for_gpu(info: &DeviceInfo, quick: bool) -> crate::Result<Self>;

    /// The buffers the run times as DRAM streams (empty where a lesson
    /// times nothing from DRAM). In a full run each is at least
    /// [`L2_MULTIPLE`] times the L2.
    fn streams(&self) -> Vec<Stream>;
    /// Device bytes the lesson allocates at these sizes, at most.
    fn device_bytes(&self) -> usize;
}

/// The smallest `seed * 2^k` (k >= 0) of at least `L2_MULTIPLE x l2_bytes`:
/// elements of `elem_bytes` bytes each. A seed already that large stays.
pub fn grown(seed: usize, elem_bytes: usize, l2_bytes: usize) -> usize {
    let mut n = seed.max(1);
    while n * elem_bytes < L2_MULTIPLE * l2_bytes {
        n *= 2;
    }
    n
}

/// The smallest `seed * 2^k` whose square of `elem_bytes` elements is at
/// least `L2_MULTIPLE x l2_bytes`: a square side for 2D lessons.
pub fn grown_side(seed: usize, elem_bytes: usize, l2_bytes: usize) -> usize {
    let mut side = seed.max(1);
    while side * side * elem_bytes < L2_MULTIPLE * l2_bytes {
        side *= 2;
    }
    side
}

/// Bytes in MiB, for messages.
pub fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// One line for a report: each streamed buffer and its multiple of the L2
/// (`"Streams: a, b, out 256 MiB each (4.3x the 60 MiB L2)"`); below the
/// rule, the line says the figures are the cache's.
pub fn streams_line(streams: &[Stream], l2_bytes: usize) -> String {
    if streams.is_empty() {
        return "Streams: none timed from DRAM".to_string();
    }
    let parts: Vec<String> = streams
        .iter()
        .map(|s| {
            let multiple = s.bytes as f64 / l2_bytes.max(1) as f64;
            format!("{} {:.1} MiB ({multiple:.1}x the L2)", s.name, mib(s.bytes))
        })
        .collect();
    let below = streams.iter().any(|s| s.bytes < L2_MULTIPLE * l2_bytes);
    format!(
        "Streams ({:.0} MiB L2): {}{}",
        mib(l2_bytes),
        parts.join("; "),
        if below {
            format!(
                ". Below {L2_MULTIPLE}x the L2, a stream can be served from the cache: these are not DRAM figures"
            )
        } else {
            String::new()
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_by_powers_of_two_from_the_seed() {
        // 16 Mi floats is 64 MiB: enough for a 4 MiB L2 (T4), 4x short of
        // 240 MiB for a 60 MiB L2 (H200).
        assert_eq!(grown(1 << 24, 4, 4 << 20), 1 << 24);
        assert_eq!(grown(1 << 24, 4, 60 << 20), 1 << 26);
        assert_eq!(grown(1 << 24, 4, 126 << 20), 1 << 27);
        assert_eq!(grown_side(4096, 4, 4 << 20), 4096);
        assert_eq!(grown_side(4096, 4, 60 << 20), 8192);
    }

    #[test]
    fn the_line_names_each_multiple_and_warns_below_the_rule() {
        let l2 = 60 << 20;
        let line = streams_line(&[Stream::of::<f32>("x", 1 << 26)], l2);
        assert!(line.contains("x 256.0 MiB (4.3x the L2)"), "{line}");
        assert!(!line.contains("not DRAM figures"), "{line}");
        let small = streams_line(&[Stream::of::<f32>("x", 1 << 20)], l2);
        assert!(small.contains("not DRAM figures"), "{small}");
    }
}
