//! Round against ragged sizes: the measuring chapter's "shapes you run, not
//! round numbers". A lesson times one kernel at a round size (a power of two
//! of elements, or a square side that the block tiles) and at a ragged one
//! beside it (the round size plus [`RAGGED_TAIL`] elements, or the side less
//! one), and reads what the ragged edge cost per element, calling a
//! difference only past the measured noise.
//!
//! Shared by the vectorize lesson (its adds at 2^k and 2^k + 611 elements)
//! and the roofline lesson (its vector add, and the guarded naive transpose
//! at side and side - 1).

use serde::Serialize;
use serde_json::json;

use crate::error::Result;
use crate::timing::Timing;

/// Elements a ragged size adds to its round partner: 611, the seeds' tail
/// (seed 001's `kCheckElems = 1048576 + 611`; seed 002 names 2^24 + 611).
/// Odd and not a multiple of any vector width, warp or block, so every
/// guard and every scalar tail runs.
pub const RAGGED_TAIL: usize = 611;

const _: () = assert!(RAGGED_TAIL % 2 == 1, "odd: no vector width divides it");
const _: () = assert!(
    RAGGED_TAIL < 1024,
    "less than one block's worth: a tail, not a second size"
);

/// Which of the pair a launch runs at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Edge {
    /// The round size.
    Round,
    /// The ragged size beside it.
    Ragged,
}

impl Edge {
    /// Both, in table order.
    pub const ALL: [Edge; 2] = [Edge::Round, Edge::Ragged];

    /// Its part of a row key (`vector_add/ragged`): stable across GPUs,
    /// where the sizes themselves are not.
    pub fn key(self) -> &'static str {
        match self {
            Edge::Round => "round",
            Edge::Ragged => "ragged",
        }
    }
}

/// Times both sizes side by side, in the order round, ragged, ragged,
/// round, and merges each size's two timings (their batches together): a
/// clock that drifts during the four timings drifts both sizes alike, and
/// each size's spread covers both of its timings.
///
/// # Errors
/// The first error of `time`.
pub fn time_pair(mut time: impl FnMut(Edge) -> Result<Timing>) -> Result<(Timing, Timing)> {
    let mut round = Vec::new();
    let mut ragged = Vec::new();
    // The four timings interleave, so each size's clock readings are those
    // of the whole pair: from the first timing's start to the last's end.
    let mut window: Option<crate::clocks::Window> = None;
    for edge in [Edge::Round, Edge::Ragged, Edge::Ragged, Edge::Round] {
        let t = time(edge)?;
        if let Some(w) = t.window {
            window = Some(match window {
                None => w,
                Some(all) => crate::clocks::Window {
                    start: all.start.min(w.start),
                    end: all.end.max(w.end),
                },
            });
        }
        match edge {
            Edge::Round => round.extend(t.samples_ms),
            Edge::Ragged => ragged.extend(t.samples_ms),
        }
    }
    let timing = |samples: Vec<f64>| Timing {
        samples_ms: samples,
        window,
    };
    Ok((timing(round), timing(ragged)))
}

/// What the ragged edge cost, read from one pair's timings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EdgeCost {
    /// The ragged size's time per element is above the round one's by more
    /// than the noise.
    Costlier,
    /// Below it by more than the noise.
    Cheaper,
    /// Within the noise: no cost this run can resolve.
    WithinNoise,
}

/// One kernel at a round and a ragged size, timed side by side
/// ([`time_pair`]).
#[derive(Debug, Clone)]
pub struct RaggedPair {
    /// What ran (a kernel's label), for the sentence.
    pub what: String,
    /// The row key's stem (the kernel's symbol); rows are `<stem>/round`
    /// and `<stem>/ragged`.
    pub stem: String,
    /// Elements at the round size.
    pub round_elems: usize,
    /// Elements at the ragged size.
    pub ragged_elems: usize,
    /// How each size is written for people (`2^26`, `8192^2`).
    pub round_shape: String,
    /// As `round_shape`, for the ragged size (`2^26 + 611`, `8191^2`).
    pub ragged_shape: String,
    /// Per-launch timing at the round size.
    pub round: Timing,
    /// Per-launch timing at the ragged size.
    pub ragged: Timing,
}

impl RaggedPair {
    /// The row key of one size: `<stem>/round` or `<stem>/ragged`.
    pub fn key(&self, edge: Edge) -> String {
        format!("{}/{}", self.stem, edge.key())
    }

    /// Elements at one size.
    pub fn elems(&self, edge: Edge) -> usize {
        match edge {
            Edge::Round => self.round_elems,
            Edge::Ragged => self.ragged_elems,
        }
    }

    /// Timing at one size.
    pub fn timing(&self, edge: Edge) -> &Timing {
        match edge {
            Edge::Round => &self.round,
            Edge::Ragged => &self.ragged,
        }
    }

    /// Median time per element at one size, picoseconds (10^-12 s).
    pub fn ps_per_elem(&self, edge: Edge) -> f64 {
        self.timing(edge).median_ms() * 1e9 / self.elems(edge) as f64
    }

    /// The ragged size's time per element over the round size's: 1.0 where
    /// the edge costs nothing beyond its share of the elements.
    pub fn per_elem_ratio(&self) -> f64 {
        self.ps_per_elem(Edge::Ragged) / self.ps_per_elem(Edge::Round)
    }

    /// The measured noise, percent: the two sizes' batch spreads added
    /// (the roofline's rule for a row against its ceiling).
    pub fn noise_pct(&self) -> f64 {
        self.round.spread_pct() + self.ragged.spread_pct()
    }

    /// The ragged size's median time beyond the round size's time scaled
    /// by the element ratio, ms: what the edge cost in total (negative when
    /// the ragged size ran faster per element).
    pub fn edge_ms(&self) -> f64 {
        self.ragged.median_ms()
            - self.round.median_ms() * self.ragged_elems as f64 / self.round_elems as f64
    }

    /// Costlier, cheaper or within the noise: the per-element difference
    /// is called only where it passes [`RaggedPair::noise_pct`].
    pub fn verdict(&self) -> EdgeCost {
        let change_pct = 100.0 * (self.per_elem_ratio() - 1.0);
        let noise = self.noise_pct();
        if change_pct > noise {
            EdgeCost::Costlier
        } else if -change_pct > noise {
            EdgeCost::Cheaper
        } else {
            EdgeCost::WithinNoise
        }
    }

    /// One sentence read from the numbers: both sizes, their time per
    /// element, the change per element against the noise, and the verdict.
    pub fn sentence(&self) -> String {
        let change_pct = 100.0 * (self.per_elem_ratio() - 1.0);
        let noise = self.noise_pct();
        let verdict = match self.verdict() {
            EdgeCost::Costlier => format!(
                "the ragged edge costs {change_pct:+.2}% per element, past the noise ({noise:.2}%): {:.4} ms beyond \
                 its share of the elements",
                self.edge_ms()
            ),
            EdgeCost::Cheaper => format!(
                "the ragged size ran {change_pct:+.2}% per element, faster past the noise ({noise:.2}%)"
            ),
            EdgeCost::WithinNoise => format!(
                "{change_pct:+.2}% per element, within the noise ({noise:.2}%): no cost of the ragged edge this run \
                 resolves"
            ),
        };
        format!(
            "{}: {} ({} elements) {:.3} ps/element, {} ({} elements) {:.3} ps/element; {verdict}.",
            self.what,
            self.round_shape,
            self.round_elems,
            self.ps_per_elem(Edge::Round),
            self.ragged_shape,
            self.ragged_elems,
            self.ps_per_elem(Edge::Ragged),
        )
    }

    /// The pair's reading for `--json`.
    pub fn json(&self) -> serde_json::Value {
        json!({
            "what": self.what, "round_key": self.key(Edge::Round), "ragged_key": self.key(Edge::Ragged),
            "round_elems": self.round_elems, "ragged_elems": self.ragged_elems,
            "round_shape": self.round_shape, "ragged_shape": self.ragged_shape,
            "round_ps_per_elem": self.ps_per_elem(Edge::Round), "ragged_ps_per_elem": self.ps_per_elem(Edge::Ragged),
            "per_elem_ratio": self.per_elem_ratio(), "noise_pct": self.noise_pct(), "edge_ms": self.edge_ms(),
            "verdict": self.verdict(),
        })
    }
}

/// The pairs as one table (row key, size, elements, median ms, spread,
/// ps per element, per-element change against the noise), then one
/// sentence per pair ([`RaggedPair::sentence`]).
pub fn table(pairs: &[RaggedPair]) -> String {
    let mut t = crate::report::table(&[
        "row",
        "size",
        "elements",
        "median ms",
        "spread %",
        "ps/element",
        "per element vs round",
    ]);
    for p in pairs {
        for edge in Edge::ALL {
            let timing = p.timing(edge);
            t.add_row(vec![
                p.key(edge),
                match edge {
                    Edge::Round => p.round_shape.clone(),
                    Edge::Ragged => p.ragged_shape.clone(),
                },
                p.elems(edge).to_string(),
                format!("{:.4}", timing.median_ms()),
                format!("{:.1}", timing.spread_pct()),
                format!("{:.3}", p.ps_per_elem(edge)),
                match edge {
                    Edge::Round => "-".to_string(),
                    Edge::Ragged => format!(
                        "{:+.2}% (noise {:.2}%)",
                        100.0 * (p.per_elem_ratio() - 1.0),
                        p.noise_pct()
                    ),
                },
            ]);
        }
    }
    let mut s = format!("{t}\n");
    for p in pairs {
        s.push_str(&p.sentence());
        s.push('\n');
    }
    s
}

/// `n` as `2^k` where it is a power of two, else as a plain number.
pub fn shape_1d(n: usize) -> String {
    if n.is_power_of_two() {
        format!("2^{}", n.trailing_zeros())
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(round_ms: &[f64], ragged_ms: &[f64], round: usize, ragged: usize) -> RaggedPair {
        RaggedPair {
            what: "k".into(),
            stem: "k".into(),
            round_elems: round,
            ragged_elems: ragged,
            round_shape: shape_1d(round),
            ragged_shape: format!("{} + {}", shape_1d(round), ragged - round),
            round: Timing::new(round_ms.to_vec()),
            ragged: Timing::new(ragged_ms.to_vec()),
        }
    }

    #[test]
    fn a_difference_is_called_only_past_the_spreads() {
        // Same time per element, within 1% spreads: within the noise.
        let p = pair(&[1.0, 1.01], &[2.0, 2.02], 1000, 2000);
        assert!((p.per_elem_ratio() - 1.0).abs() < 1e-12);
        assert_eq!(p.verdict(), EdgeCost::WithinNoise);
        // 10% more per element against 2% of noise: costlier.
        let p = pair(&[1.0, 1.01], &[1.1, 1.111], 1000, 1000);
        assert_eq!(p.verdict(), EdgeCost::Costlier);
        assert!(
            p.sentence().contains("+10.00% per element, past the noise"),
            "{}",
            p.sentence()
        );
        // 4% less per element against 26% of spread: not called.
        let p = pair(&[1.0, 1.3], &[1.1, 1.1], 1000, 1000);
        assert_eq!(p.verdict(), EdgeCost::WithinNoise);
        // 10% less per element: cheaper.
        let p = pair(&[1.0, 1.0], &[0.9, 0.9], 1000, 1000);
        assert_eq!(p.verdict(), EdgeCost::Cheaper);
    }

    #[test]
    fn shapes_and_keys() {
        assert_eq!(shape_1d(1 << 26), "2^26");
        assert_eq!(shape_1d((1 << 26) + 611), "67109475");
        let p = pair(&[1.0], &[1.0], 4, 5);
        assert_eq!(p.key(Edge::Ragged), "k/ragged");
        assert_eq!(p.key(Edge::Round), "k/round");
    }
}
