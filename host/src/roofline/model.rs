//! The roofline model's numbers for each kernel: the FLOP it performs and
//! the compulsory bytes it asks global memory for (each input read once,
//! each output written once, as the algorithm is written; not what DRAM
//! actually moves, which caches change). Formulas are the seed's, derived
//! from the kernels as written. One place; the report, the JSON and the
//! tests all read them from here.

use kernels_gpu::roofline::{FMA_CHAINS, MAT_TILE, POLY_DEGREE, STENCIL_SHARED_CELLS};

use super::{Kernel, Shape, Sizes};

/// Bytes in one f32.
const F32: f64 = 4.0;

/// FLOP performed and compulsory bytes moved by one launch of a kernel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    /// Floating-point operations (an FMA counts 2).
    pub flop: f64,
    /// Compulsory global-memory bytes, reads plus writes.
    pub bytes: f64,
}

impl Cost {
    /// Arithmetic intensity, FLOP per compulsory byte.
    pub fn intensity(&self) -> f64 {
        self.flop / self.bytes
    }
}

/// The cost of one launch of `kernel` at `sizes`, a stream in its
/// [`Kernel::default_shape`]; see [`cost_shaped`].
pub fn cost(kernel: Kernel, sizes: &Sizes) -> Cost {
    cost_shaped(kernel, sizes, kernel.default_shape())
}

/// The cost of one launch of `kernel` at `sizes`, a stream launched in
/// `shape` (only the dot's cost depends on it: one float written a block).
///
/// With n the vector length, d the matmul side, I the stencil's interior
/// cells ((S - 2)^2 for side S), B the reduction's blocks and T the matmul
/// tile:
/// - copy (the seed's): 0 FLOP; one read and one write, 8n bytes.
/// - streams over m float4s (16m floats): the dot, 8 FLOP a pair (four
///   FMAs), two reads, 32m bytes plus one float a block; the copy, 0 FLOP,
///   32m bytes; the triad, 8 FLOP a float4, 48m bytes.
/// - vector add (either order): n adds; two reads and a write, 12n bytes:
///   1/12 FLOP per byte. The strided order visits the same index set, so the
///   same bytes to the byte.
/// - transposes (the guarded one too): 0 FLOP; 8 bytes per element,
///   8 side^2.
/// - naive matmul: 2d^3 FLOP (d^3 FMAs); each output element reads a row of
///   `a` and a column of `b`: (2d^3 + d^2) floats with the writes.
/// - tiled matmul: the same FLOP; each element is loaded once per tile step
///   instead of once per k step: (2d^3 / T + d^2) floats.
/// - block reduction: n - B adds (a tree over 256 values is 255 adds, per
///   full block); n floats read, B written.
/// - stencils: 7 FLOP per interior cell as written (three adds of the four
///   neighbours, a multiply and a subtract for the centre term, the multiply
///   by r and the final add; the compiler fusing two pairs into FMAs does not
///   change the count the model uses). Global: 5 reads + 1 write per cell,
///   6I floats. Tiled: each block reads its 34 x 10 apron once, so
///   (340 x blocks + I) floats.
/// - polynomial: 2 x 256 + 1 FLOP per element (the scale multiply and 256
///   FMAs); 8n bytes.
/// - FMA ceiling: threads x iterations x chains x 2 FLOP; one float written
///   per thread.
pub fn cost_shaped(kernel: Kernel, sizes: &Sizes, shape: Shape) -> Cost {
    let n = sizes.n as f64;
    let m = sizes.stream_n4 as f64;
    let d = sizes.mat_dim as f64;
    let d3 = d * d * d;
    let d2 = d * d;
    let interior = sizes.stencil_interior() as f64;
    let blocks = sizes.vector_blocks() as f64;
    let (sx, sy) = sizes.stencil_grid();
    let apron = STENCIL_SHARED_CELLS as f64 * sx as f64 * sy as f64;
    let side2 = (sizes.side * sizes.side) as f64;
    // ANCHOR: compulsory
    let (flop, floats) = match kernel {
        Kernel::Copy => (0.0, 2.0 * n),
        Kernel::StreamDot => (8.0 * m, 8.0 * m + sizes.stream_grid(shape) as f64),
        Kernel::StreamCopy => (0.0, 8.0 * m),
        Kernel::StreamTriad => (8.0 * m, 12.0 * m),
        Kernel::VectorAdd | Kernel::VectorAddPermuted => (n, 3.0 * n),
        Kernel::TransposeNaive | Kernel::TransposeTiled | Kernel::TransposeNaiveGuarded => {
            (0.0, 2.0 * side2)
        }
        Kernel::MatmulNaive => (2.0 * d3, 2.0 * d3 + d2),
        Kernel::MatmulTiled => (2.0 * d3, 2.0 * d3 / MAT_TILE as f64 + d2),
        Kernel::Reduce => (n - blocks, n + blocks),
        Kernel::StencilGlobal => (7.0 * interior, 6.0 * interior),
        Kernel::StencilTiled => (7.0 * interior, apron + interior),
        Kernel::Polynomial => ((2.0 * POLY_DEGREE as f64 + 1.0) * n, 2.0 * n),
        // ANCHOR_END: compulsory
        Kernel::FmaPeak => {
            let threads = sizes.fma_threads() as f64;
            (
                threads * sizes.fma_iters as f64 * FMA_CHAINS as f64 * 2.0,
                threads,
            )
        }
    };
    Cost {
        flop,
        bytes: floats * F32,
    }
}

/// The two measured ceilings and the ridge point between them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ceilings {
    /// The best rate of the three streams in either shape, over their
    /// compulsory bytes, GB/s.
    pub bandwidth_gb_per_s: f64,
    /// The FMA kernel's rate, GFLOP/s.
    pub fma_gflop_per_s: f64,
}

impl Ceilings {
    /// The intensity (FLOP/byte) where the two ceilings meet: below it no
    /// kernel on this GPU can be compute-bound.
    pub fn ridge(&self) -> f64 {
        self.fma_gflop_per_s / self.bandwidth_gb_per_s
    }

    /// The ceiling that binds a kernel of intensity `intensity` (FLOP/byte),
    /// as the attainable GFLOP/s: min(peak, bandwidth x intensity).
    pub fn attainable_gflop_per_s(&self, intensity: f64) -> f64 {
        self.fma_gflop_per_s
            .min(self.bandwidth_gb_per_s * intensity)
    }
}

/// A rate in units of 10^9 per second from a count and milliseconds.
pub fn per_second_e9(count: f64, ms: f64) -> f64 {
    count / (ms * 1e-3) / 1e9
}
