//! The softmax lesson on the host: admission of each (variant, tile width,
//! block size) before anything launches, one launch sequence per variant
//! written once ([`Softmax::enqueue`]) and used by the check, the graph
//! capture and both timings, the checks against the f64 reference, and the
//! graph verification (node count, node types, the cooperative attribute).

pub mod reference;
pub mod report;

use std::fmt;
use std::path::Path;
use std::time::Instant;

use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig};
use kernels_gpu::softmax::*;
use serde::Serialize;

use crate::check::{Failure, Tolerance, first_mismatch};
use crate::compare::{Shown, Side, TwinRows, shown_in};
use crate::error::{DriverContext, Error, Result};
use crate::gpu::Gpu;
use crate::graph;
use crate::kernels::KernelSet;
use crate::lesson::{self, Capabilities, Outcome, RunOptions};
use crate::report::Context;
use crate::sizes::{LessonSizes, Stream, grown};
use crate::timing::{self, Plan, Timing};

crate::kernel_ids! {
    /// The lesson's kernels: the three staged phases and the cooperative
    /// megakernel, each with its buffers first, then its 32-bit sizes and
    /// flags.
    pub enum Kernel {
        /// Phase 1: per-tile max and sum of squares. (x, tile_max,
        /// tile_sumsq; n, w, tiles).
        Stats = "softmax_tile_stats" (Ptr, Ptr, Ptr, U32, U32, U32),
        /// Phase 2: the row statistics and the exponentials. (x, e,
        /// tile_max, tile_sumsq, tile_sum, row_max, row_scale; n, w, tiles,
        /// write_e).
        Exp = "softmax_tile_exp" (Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, U32, U32, U32, U32),
        /// Phase 3: normalise. (e or x, y, tile_sum, row_max, row_scale,
        /// row_sum; n, w, tiles, recompute).
        Normalize = "softmax_tile_normalize" (Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, U32, U32, U32, U32),
        /// The megakernel: all three phases, the tile kept in shared memory,
        /// a grid barrier between phases. (x, e, y, six statistics,
        /// arrivals, epochs; n, w, tiles, row_base, controls (ignored)).
        Retained = "softmax_retained" (
            Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, U32, U32, U32, U32, U32
        ),
        /// The control kernel: [`Kernel::Retained`] carrying the runtime
        /// control flags. Arguments as [`Kernel::Retained`].
        RetainedControl = "softmax_retained_control" (
            Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, U32, U32, U32, U32, U32
        ),
        /// [`Kernel::Retained`] with row barriers. Arguments as
        /// [`Kernel::Retained`] (controls ignored).
        RowRetained = "softmax_row_retained" (
            Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, U32, U32, U32, U32, U32
        ),
    }
}

/// Floats per element every variant must move: x read once, y written once.
pub const COMPULSORY_FLOATS: f64 = 2.0;

/// The ways the lesson runs a softmax: the seed's families. Each megakernel
/// family differs from one other family in one thing, which is what their
/// difference isolates ([`Variant::ISOLATIONS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// Three kernels; the exponentials go through global memory.
    Staged,
    /// Three kernels; phase 3 recomputes the exponentials from x.
    Recompute,
    /// One cooperative kernel per row group; the tile stays in shared
    /// memory; a grid barrier between phases; no control flags.
    Retained,
    /// Retained with row barriers: a block waits only for its own row.
    RowRetained,
    /// The control kernel with every flag off: retained's traffic and
    /// barrier, with the flags' branches carried.
    RoundtripOff,
    /// The control kernel: phase 2 reloads x from global memory.
    InputReload,
    /// The control kernel: the exponentials round-trip through global
    /// memory.
    RoundtripOn,
    /// The control kernel with both flags on.
    BothReload,
}

/// One difference between two megakernel families that isolates one cost:
/// `variant` minus `against`, at the same geometry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Isolation {
    /// The family that pays the cost.
    pub variant: Variant,
    /// The family it is measured against: the same in everything else.
    pub against: Variant,
    /// What the difference isolates, in a few words.
    pub what: &'static str,
}

impl Variant {
    /// Every variant, in report order.
    pub const ALL: [Variant; 8] = [
        Variant::Staged,
        Variant::Recompute,
        Variant::Retained,
        Variant::RowRetained,
        Variant::RoundtripOff,
        Variant::InputReload,
        Variant::RoundtripOn,
        Variant::BothReload,
    ];

    /// The label a table row, a JSON `variant` and a DOT file use (the
    /// seed's family names).
    pub fn label(self) -> &'static str {
        match self {
            Variant::Staged => "staged",
            Variant::Recompute => "recompute",
            Variant::Retained => "retained",
            Variant::RowRetained => "row_retained",
            Variant::RoundtripOff => "roundtrip_off",
            Variant::InputReload => "input_reload",
            Variant::RoundtripOn => "roundtrip_on",
            Variant::BothReload => "both_reload",
        }
    }

    /// Whether it is a cooperative megakernel (admission, graph attribute).
    pub fn cooperative(self) -> bool {
        !matches!(self, Variant::Staged | Variant::Recompute)
    }

    /// The megakernel's `controls` argument (0 for the kernels that carry
    /// no flags, which ignore it).
    pub fn controls(self) -> u32 {
        match self {
            Variant::InputReload => RELOAD_INPUT,
            Variant::RoundtripOn => ROUNDTRIP_EXPONENTIALS,
            Variant::BothReload => RELOAD_INPUT | ROUNDTRIP_EXPONENTIALS,
            _ => 0,
        }
    }

    /// Floats it moves per element through global memory, from the kernels
    /// (the per-tile and per-row statistics, a few floats per 4096
    /// elements, left out): staged 1 (phase 1 reads x) + 2 (phase 2 reads x,
    /// writes e) + 2 (phase 3 reads e, writes y); recompute 1 + 1 + 2;
    /// retained, row_retained and roundtrip_off 2; a reload adds 1, a round
    /// trip 2.
    pub fn floats_per_elem(self) -> f64 {
        match self {
            Variant::Staged => 5.0,
            Variant::Recompute => 4.0,
            Variant::Retained | Variant::RowRetained | Variant::RoundtripOff => 2.0,
            Variant::InputReload => 3.0,
            Variant::RoundtripOn => 4.0,
            Variant::BothReload => 5.0,
        }
    }

    /// The kernel a comparison's PTX mix is read from (and a fault in the
    /// sequence is charged to); for the megakernel families, the kernel
    /// they launch.
    pub fn main_kernel(self) -> Kernel {
        match self {
            Variant::Staged => Kernel::Exp,
            Variant::Recompute => Kernel::Normalize,
            Variant::Retained => Kernel::Retained,
            Variant::RowRetained => Kernel::RowRetained,
            Variant::RoundtripOff
            | Variant::InputReload
            | Variant::RoundtripOn
            | Variant::BothReload => Kernel::RetainedControl,
        }
    }

    /// [`Variant::main_kernel`]'s symbol.
    pub fn main_symbol(self) -> &'static str {
        self.main_kernel().symbol()
    }

    /// The kernels its launch sequence launches, in order, over one row
    /// group (the megakernel families repeat theirs once per group).
    pub fn sequence(self) -> &'static [Kernel] {
        match self {
            Variant::Staged | Variant::Recompute => {
                &[Kernel::Stats, Kernel::Exp, Kernel::Normalize]
            }
            Variant::Retained => &[Kernel::Retained],
            Variant::RowRetained => &[Kernel::RowRetained],
            _ => &[Kernel::RetainedControl],
        }
    }

    /// The differences between megakernel families that each isolate one
    /// cost, in report order. Each pair differs in one thing: the kernel
    /// (flags carried or not), the barrier's scope, or the control flags
    /// set (the control kernel on both sides, so carrying the flags
    /// cancels).
    pub const ISOLATIONS: [Isolation; 5] = [
        Isolation {
            variant: Variant::RoundtripOff,
            against: Variant::Retained,
            what: "carrying the control flags (same traffic, same grid barrier)",
        },
        Isolation {
            variant: Variant::Retained,
            against: Variant::RowRetained,
            what: "a grid barrier instead of row barriers (same traffic, no flags)",
        },
        Isolation {
            variant: Variant::InputReload,
            against: Variant::RoundtripOff,
            what: "reloading x in phase 2 (+4 bytes per element)",
        },
        Isolation {
            variant: Variant::RoundtripOn,
            against: Variant::RoundtripOff,
            what: "the exponentials' round trip through global memory (+8 bytes per element)",
        },
        Isolation {
            variant: Variant::BothReload,
            against: Variant::RoundtripOff,
            what: "both controls at once (+12 bytes per element)",
        },
    ];
}

/// A matrix of `rows` x `n` floats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub n: usize,
}

impl Shape {
    /// The seed's timed matrix: ROWS x COLS (the lesson grows its rows with
    /// the GPU's L2, see [`Shape::for_device`]).
    pub const LESSON: Shape = Shape {
        rows: ROWS,
        n: COLS,
    };
    /// `--quick`: QUICK_ROWS x QUICK_COLS.
    pub const QUICK: Shape = Shape {
        rows: QUICK_ROWS,
        n: QUICK_COLS,
    };
    /// The GPU tests': TEST_ROWS x TEST_COLS.
    pub const TEST: Shape = Shape {
        rows: TEST_ROWS,
        n: TEST_COLS,
    };

    /// Elements.
    pub fn elems(self) -> usize {
        self.rows * self.n
    }

    /// The timed matrix on `info`'s GPU: COLS columns (the row's geometry,
    /// which admission depends on, stays the seed's), and ROWS rows doubled
    /// until x is at least 4x the L2.
    pub fn for_device(info: &crate::gpu::DeviceInfo) -> Shape {
        Shape {
            rows: grown(ROWS, COLS * size_of::<f32>(), info.l2_bytes),
            n: COLS,
        }
    }
}

/// The lesson's sizes: the matrix, and what the record keeps beside it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sizes {
    /// Rows of the matrix.
    pub rows: usize,
    /// Columns of the matrix.
    pub columns: usize,
    /// The tile widths of the protocol.
    pub tile_widths: [u32; 4],
    /// Bytes every variant must move per element.
    pub compulsory_bytes_per_elem: f64,
    /// The relative tolerance against the f64 reference.
    pub rel_tolerance: f64,
}

impl Sizes {
    /// A full run: [`Shape::for_device`]; `quick`: [`Shape::QUICK`].
    pub fn new(info: &crate::gpu::DeviceInfo, quick: bool) -> Sizes {
        Sizes::of(if quick {
            Shape::QUICK
        } else {
            Shape::for_device(info)
        })
    }

    /// The sizes of a run over `shape`.
    pub fn of(shape: Shape) -> Sizes {
        Sizes {
            rows: shape.rows,
            columns: shape.n,
            tile_widths: TILE_WIDTHS,
            compulsory_bytes_per_elem: COMPULSORY_FLOATS * 4.0,
            rel_tolerance: REL_TOLERANCE,
        }
    }

    /// The matrix.
    pub fn shape(&self) -> Shape {
        Shape {
            rows: self.rows,
            n: self.columns,
        }
    }
}

impl LessonSizes for Sizes {
    fn for_gpu(info: &crate::gpu::DeviceInfo, quick: bool) -> Result<Sizes> {
        let sizes = Sizes::new(info, quick);
        check_shape(sizes.shape())?;
        Ok(sizes)
    }
    fn streams(&self) -> Vec<Stream> {
        vec![Stream::of::<f32>("x, e, y", self.shape().elems())]
    }

    fn device_bytes(&self) -> usize {
        let shape = self.shape();
        let max_tiles = shape.rows * tiles_per_row(shape.n, TILE_WIDTHS[0]);
        3 * shape.elems() * 4 + 3 * max_tiles * 4 + 3 * shape.rows * 4 + 4 * shape.rows * 4
    }
}

/// A tile width and a block size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// Columns per tile.
    pub w: u32,
    /// Threads per block.
    pub t: u32,
}

/// The protocol's twelve geometries: every TILE_WIDTHS x BLOCK_SIZES.
pub fn protocol() -> Vec<Geometry> {
    TILE_WIDTHS
        .iter()
        .flat_map(|&w| BLOCK_SIZES.iter().map(move |&t| Geometry { w, t }))
        .collect()
}

/// Why a cooperative geometry cannot be launched on this device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The tile and its scratch need more shared memory per block than the
    /// device's opt-in maximum (`MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`).
    SharedMemory {
        /// Bytes the block needs.
        needed: usize,
        /// The device's opt-in limit, bytes.
        limit: usize,
    },
    /// One row's tiles cannot all be resident at once: the occupancy API's
    /// blocks per SM times the SMs is fewer than the tiles of a row.
    Residency {
        /// Blocks one row needs at once.
        tiles: usize,
        /// Blocks per SM at this block size and shared memory.
        blocks_per_sm: u32,
        /// SMs.
        sms: u32,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::SharedMemory { needed, limit } => write!(
                f,
                "refused: the tile needs {needed} bytes of shared memory per block, above the device's opt-in limit of {limit} bytes (MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)"
            ),
            Refusal::Residency {
                tiles,
                blocks_per_sm,
                sms,
            } => write!(
                f,
                "refused: a row needs {tiles} co-resident blocks, the device holds {blocks_per_sm} per SM x {sms} SMs = {} (occupancy API)",
                *blocks_per_sm as usize * *sms as usize
            ),
        }
    }
}

/// Checks that `shape` fits the kernels' 32-bit arguments and indices: at
/// least one row and one column, `n` and `rows * tiles` (for the narrowest
/// protocol tile, which sizes the statistics arrays) below 2^32.
///
/// # Errors
/// [`Error::Size`] naming the limit.
pub fn check_shape(shape: Shape) -> Result<()> {
    let slots = shape.rows as u64 * tiles_per_row(shape.n, TILE_WIDTHS[0]) as u64;
    if shape.rows == 0 || shape.n == 0 {
        Err(Error::Size(format!(
            "softmax: a {} x {} matrix is empty",
            shape.rows, shape.n
        )))
    } else if shape.n > u32::MAX as usize || slots > u32::MAX as u64 {
        Err(Error::Size(format!(
            "softmax: a {} x {} matrix; the kernels take columns and tile slots as 32-bit numbers",
            shape.rows, shape.n
        )))
    } else {
        Ok(())
    }
}

/// Checks a geometry before admission: `t` a whole number of warps up to
/// MAX_THREADS (the block reduction's scratch and full-mask shuffles), and
/// `w` at least the narrowest protocol tile, TILE_WIDTHS[0] (the per-tile
/// statistics arrays are sized for it: a narrower tile would write past
/// them).
///
/// # Errors
/// [`Error::Size`] naming the limit.
pub fn check_geometry(geometry: Geometry) -> Result<()> {
    let Geometry { w, t } = geometry;
    if t == 0 || t % 32 != 0 || t > MAX_THREADS || w < TILE_WIDTHS[0] {
        return Err(Error::Size(format!(
            "softmax: {t} threads per block and {w} columns per tile; blocks are whole warps up to {MAX_THREADS} threads and tiles at least {} columns (the statistics arrays are sized for it)",
            TILE_WIDTHS[0]
        )));
    }
    Ok(())
}

/// Admission, step 1: the retained kernel's dynamic shared memory for
/// tiles of `w` columns, if it fits the opt-in limit `optin` (bytes).
pub fn admit_shared(w: u32, optin: usize) -> std::result::Result<usize, Refusal> {
    let needed = retained_shared_bytes(w);
    if needed > optin {
        Err(Refusal::SharedMemory {
            needed,
            limit: optin,
        })
    } else {
        Ok(needed)
    }
}

/// Admission, step 2: how many rows one cooperative launch can take when
/// every block must be resident: `blocks_per_sm * sms / tiles`, at most
/// `rows`; a refusal when not even one row fits.
pub fn rows_per_group(
    blocks_per_sm: u32,
    sms: u32,
    tiles: usize,
    rows: usize,
) -> std::result::Result<usize, Refusal> {
    let resident = blocks_per_sm as usize * sms as usize;
    match resident / tiles.max(1) {
        0 => Err(Refusal::Residency {
            tiles,
            blocks_per_sm,
            sms,
        }),
        g => Ok(g.min(rows)),
    }
}

/// Admits `variant` at `geometry` over a `shape` matrix on `info`'s GPU:
/// the staged variants always (they keep nothing in shared memory); the
/// cooperative ones when the tile fits the opt-in shared memory and a row's
/// tiles can all be resident, with `blocks_per_sm(t, shared_bytes)` the
/// blocks of the megakernel one SM holds (the driver's occupancy API in a
/// run; [`crate::gpu::modeled_blocks_per_sm`] in the GPU-profile test).
/// `Ok(Err(refusal))` is a geometry this GPU cannot run, not an error.
///
/// # Errors
/// [`Error::Size`] for a geometry [`check_geometry`] rejects; whatever
/// `blocks_per_sm` returns.
pub fn admission(
    info: &crate::gpu::DeviceInfo,
    shape: Shape,
    variant: Variant,
    geometry: Geometry,
    blocks_per_sm: impl FnOnce(u32, usize) -> Result<u32>,
) -> Result<std::result::Result<Launches, Refusal>> {
    check_geometry(geometry)?;
    let Geometry { w, t } = geometry;
    let tiles = tiles_per_row(shape.n, w);
    if !variant.cooperative() {
        return Ok(Ok(Launches {
            variant,
            geometry,
            tiles,
            group_rows: shape.rows,
            launches: 3,
            shared_bytes: 0,
            blocks_per_sm: None,
        }));
    }
    let shared = match admit_shared(w, info.shared_per_block_optin) {
        Ok(bytes) => bytes,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let blocks_per_sm = blocks_per_sm(t, shared)?;
    let group_rows = match rows_per_group(blocks_per_sm, info.sms, tiles, shape.rows) {
        Ok(g) => g,
        Err(refusal) => return Ok(Err(refusal)),
    };
    Ok(Ok(Launches {
        variant,
        geometry,
        tiles,
        group_rows,
        launches: shape.rows.div_ceil(group_rows),
        shared_bytes: shared,
        blocks_per_sm: Some(blocks_per_sm),
    }))
}

/// An admitted launch sequence: what [`Softmax::enqueue`] puts on the
/// stream for one variant and geometry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launches {
    /// The variant.
    pub variant: Variant,
    /// Tile width and block size.
    pub geometry: Geometry,
    /// Tiles per row.
    pub tiles: usize,
    /// Rows per cooperative launch (all rows for the staged variants).
    pub group_rows: usize,
    /// Kernel launches in the sequence.
    pub launches: usize,
    /// Dynamic shared memory per block, bytes.
    pub shared_bytes: usize,
    /// Blocks per SM (occupancy API) for the cooperative kernel.
    pub blocks_per_sm: Option<u32>,
}

/// The lesson's buffers on one GPU, and its kernels.
pub struct Softmax<'g> {
    gpu: &'g Gpu,
    kernels: KernelSet<Kernel>,
    /// The f64 reference of the whole matrix, computed on first use.
    want: std::cell::OnceCell<std::rc::Rc<Vec<f64>>>,
    /// The matrix shape.
    pub shape: Shape,
    x: CudaSlice<f32>,
    e: CudaSlice<f32>,
    y: CudaSlice<f32>,
    tile_max: CudaSlice<f32>,
    tile_sumsq: CudaSlice<f32>,
    tile_sum: CudaSlice<f32>,
    row_max: CudaSlice<f32>,
    row_scale: CudaSlice<f32>,
    row_sum: CudaSlice<f32>,
    arrivals: CudaSlice<u32>,
    epochs: CudaSlice<u32>,
    host_x: Vec<f32>,
    /// The device's opt-in shared memory per block, bytes.
    pub shared_optin: usize,
}

impl<'g> Softmax<'g> {
    /// Checks free memory, allocates x, e, y and the statistics (sized for
    /// the narrowest tile), zeroes the barrier counters once, fills x.
    ///
    /// # Errors
    /// [`Error::Size`] for a shape [`check_shape`] rejects;
    /// [`Error::OutOfMemory`] before allocating; driver errors.
    pub fn new(gpu: &'g Gpu, shape: Shape) -> Result<Self> {
        check_shape(shape)?;
        let elems = shape.elems();
        let max_tiles = shape.rows * tiles_per_row(shape.n, TILE_WIDTHS[0]);
        gpu.require_free_memory(
            Sizes::of(shape).device_bytes(),
            "the softmax lesson's x, e, y and statistics",
        )?;
        let kernels = KernelSet::new(gpu)?;
        let host_x: Vec<f32> = (0..elems).map(reference::fill_x).collect();
        let mut x = gpu.alloc_f32(elems)?;
        gpu.upload(&host_x, &mut x)?;
        let zeros = |len: usize| gpu.alloc_zeros::<u32>(len);
        let shared_optin = gpu.info.shared_per_block_optin;
        Ok(Softmax {
            gpu,
            kernels,
            want: std::cell::OnceCell::new(),
            shape,
            x,
            e: gpu.alloc_f32(elems)?,
            y: gpu.alloc_f32(elems)?,
            tile_max: gpu.alloc_f32(max_tiles)?,
            tile_sumsq: gpu.alloc_f32(max_tiles)?,
            tile_sum: gpu.alloc_f32(max_tiles)?,
            row_max: gpu.alloc_f32(shape.rows)?,
            row_scale: gpu.alloc_f32(shape.rows)?,
            row_sum: gpu.alloc_f32(shape.rows)?,
            arrivals: zeros(2 * shape.rows)?,
            epochs: zeros(2 * shape.rows)?,
            host_x,
            shared_optin,
        })
    }

    /// The compiled function of `kernel` on `side`.
    pub fn function(&self, kernel: Kernel, side: Side) -> Option<&CudaFunction> {
        self.kernels.get(kernel, side)
    }

    /// The symbol of the lesson's kernel (either side) whose function handle
    /// is `f`; `None` for a function it did not load.
    pub fn symbol_of(&self, f: cudarc::driver::sys::CUfunction) -> Option<&'static str> {
        <Kernel as crate::kernels::KernelId>::ALL
            .iter()
            .find_map(|&k| {
                [Side::Rust, Side::CudaC]
                    .iter()
                    .filter_map(|&side| self.kernels.get(k, side))
                    .any(|loaded| loaded.cu_function() == f)
                    .then(|| k.symbol())
            })
    }

    /// The f64 reference of the whole matrix (computed once).
    pub fn reference(&self) -> std::rc::Rc<Vec<f64>> {
        self.want
            .get_or_init(|| std::rc::Rc::new(reference::matrix(&self.host_x, self.shape.n)))
            .clone()
    }

    /// Admits `variant` at `geometry`: the staged variants always (they
    /// keep nothing in shared memory); the cooperative ones when the tile
    /// fits the opt-in shared memory (the kernel's dynamic shared-memory
    /// attribute is raised to it, on every loaded side) and a row's tiles
    /// can all be resident. `Ok(Err(refusal))` is a geometry this device
    /// cannot run, not an error.
    ///
    /// # Errors
    /// [`Error::Size`] for a geometry [`check_geometry`] rejects; driver
    /// errors.
    pub fn admit(
        &self,
        variant: Variant,
        geometry: Geometry,
    ) -> Result<std::result::Result<Launches, Refusal>> {
        admission(
            &self.gpu.info,
            self.shape,
            variant,
            geometry,
            // ANCHOR: occupancy
            |t, shared| {
                // Raise the kernel's dynamic shared-memory limit on every loaded
                // side, then ask the driver: the smaller answer binds.
                let mut blocks_per_sm = u32::MAX;
                for side in [Side::Rust, Side::CudaC] {
                    let Some(f) = self.kernels.get(variant.main_kernel(), side) else {
                        continue;
                    };
                    f.set_attribute(
                        CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        shared as i32,
                    )
                    .call("cuFuncSetAttribute (MAX_DYNAMIC_SHARED_SIZE_BYTES)")?;
                    let b = f
                        .occupancy_max_active_blocks_per_multiprocessor(t, shared, None)
                        .call("cuOccupancyMaxActiveBlocksPerMultiprocessor")?;
                    blocks_per_sm = blocks_per_sm.min(b);
                }
                Ok(blocks_per_sm)
            },
            // ANCHOR_END: occupancy
        )
    }

    /// Enqueues `plan`'s launch sequence over the whole matrix on the
    /// GPU's stream (asynchronously): three kernels for the staged
    /// variants, one cooperative launch per row group for the others.
    pub fn enqueue(&mut self, plan: &Launches) -> Result<()> {
        let Geometry { w, t } = plan.geometry;
        let (n, tiles) = (self.shape.n as u32, plan.tiles as u32);
        let gpu = self.gpu;
        let Softmax {
            kernels,
            x,
            e,
            y,
            tile_max,
            tile_sumsq,
            tile_sum,
            row_max,
            row_scale,
            row_sum,
            arrivals,
            epochs,
            ..
        } = self;
        if !plan.variant.cooperative() {
            let cfg = LaunchConfig {
                grid_dim: ((self.shape.rows * plan.tiles) as u32, 1, 1),
                block_dim: (t, 1, 1),
                shared_mem_bytes: 0,
            };
            let staged = plan.variant == Variant::Staged;
            let (write_e, recompute) = if staged { (1u32, 0u32) } else { (0, 1) };
            let stats = kernels
                .launch(gpu, Kernel::Stats)
                .input(&*x)
                .output(&mut *tile_max)
                .output(&mut *tile_sumsq)
                .scalar(n)
                .scalar(w)
                .scalar(tiles);
            // SAFETY: the buffers hold rows * n and rows * tiles floats; one
            // block per tile; argument kinds checked at launch.
            unsafe { stats.launch(cfg) }?;
            let exp = kernels
                .launch(gpu, Kernel::Exp)
                .input(&*x)
                .output(&mut *e)
                .output(&mut *tile_max)
                .output(&mut *tile_sumsq)
                .output(&mut *tile_sum)
                .output(&mut *row_max)
                .output(&mut *row_scale)
                .scalar(n)
                .scalar(w)
                .scalar(tiles)
                .scalar(write_e);
            // SAFETY: as above.
            unsafe { exp.launch(cfg) }?;
            let src: &CudaSlice<f32> = if staged { &*e } else { &*x };
            let normalize = kernels
                .launch(gpu, Kernel::Normalize)
                .input(src)
                .output(&mut *y)
                .output(&mut *tile_sum)
                .output(&mut *row_max)
                .output(&mut *row_scale)
                .output(&mut *row_sum)
                .scalar(n)
                .scalar(w)
                .scalar(tiles)
                .scalar(recompute);
            // SAFETY: as above; src and y differ.
            return unsafe { normalize.launch(cfg) };
        }
        // ANCHOR: cooperative_launch
        let controls = plan.variant.controls();
        let mut row_base = 0;
        while row_base < self.shape.rows {
            let count = plan.group_rows.min(self.shape.rows - row_base);
            let cfg = LaunchConfig {
                grid_dim: ((count * plan.tiles) as u32, 1, 1),
                block_dim: (t, 1, 1),
                shared_mem_bytes: plan.shared_bytes as u32,
            };
            let retained = kernels
                .launch(gpu, plan.variant.main_kernel())
                .input(&*x)
                .output(&mut *e)
                .output(&mut *y)
                .output(&mut *tile_max)
                .output(&mut *tile_sumsq)
                .output(&mut *tile_sum)
                .output(&mut *row_max)
                .output(&mut *row_scale)
                .output(&mut *row_sum)
                .output(&mut *arrivals)
                .output(&mut *epochs)
                .scalar(n)
                .scalar(w)
                .scalar(tiles)
                .scalar(row_base as u32)
                .scalar(controls);
            // SAFETY: admission checked that the shared memory fits and
            // every block of `count` rows' tiles is resident at once, which
            // the cooperative launch enforces; argument kinds checked.
            unsafe { retained.launch_cooperative(cfg) }?;
            row_base += count;
        }
        Ok(())
        // ANCHOR_END: cooperative_launch
    }

    /// Poisons y, e and every statistics array with 0xFF bytes (NaN), so
    /// a checked run must write everything it reads: without it, a phase
    /// that read the row statistics too early (a broken barrier) would find
    /// the previous variant's identical statistics at the same geometry and
    /// still pass. The barrier counters are left alone: they must persist.
    pub fn poison(&mut self) -> Result<()> {
        self.gpu.fill_bytes(&mut self.y, 0xFF)?;
        self.gpu.fill_bytes(&mut self.e, 0xFF)?;
        for stats in [
            &mut self.tile_max,
            &mut self.tile_sumsq,
            &mut self.tile_sum,
            &mut self.row_max,
            &mut self.row_scale,
            &mut self.row_sum,
        ] {
            self.gpu.fill_bytes(stats, 0xFF)?;
        }
        Ok(())
    }

    /// Downloads y.
    pub fn read_y(&self) -> Result<Vec<f32>> {
        let mut got = vec![0.0f32; self.shape.elems()];
        self.gpu.download(&self.y, &mut got)?;
        Ok(got)
    }

    /// Runs `plan` once after [`Softmax::poison`] and returns y.
    pub fn run_once(&mut self, plan: &Launches) -> Result<Vec<f32>> {
        self.poison()?;
        self.enqueue(plan)?;
        self.gpu.sync_after(plan.variant.main_symbol())?;
        self.read_y()
    }

    /// Times `plan`'s launch sequence, launched directly, with `timing`.
    pub fn time_direct(&mut self, plan: &Launches, timing: Plan) -> Result<Timing> {
        let gpu = self.gpu;
        timing::time_kernel(gpu, plan.variant.main_symbol(), timing, || {
            self.enqueue(plan)
        })
    }

    /// Captures `plan`'s launch sequence as a graph.
    pub fn capture(&mut self, plan: &Launches) -> Result<graph::Graph> {
        let gpu = self.gpu;
        graph::capture(gpu, || self.enqueue(plan))
    }
}

/// Checks `got` against `want` within [`REL_TOLERANCE`] and names the first
/// bad element by row and column; also returns the largest relative error.
pub fn check(label: &'static str, got: &[f32], want: &[f64], n: usize) -> (Option<Failure>, f64) {
    let failure = first_mismatch(got, want, Tolerance::Relative(REL_TOLERANCE)).map(|m| Failure {
        kernel: label,
        detail: m.in_2d(n).to_string(),
    });
    (failure, reference::max_relative_error(got, want))
}

/// One kernel node of a captured graph, as the driver reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeKernel {
    /// The kernel's symbol, found by matching the node's function handle
    /// with the lesson's loaded kernels (either side); `None` for a
    /// function the lesson did not load.
    pub symbol: Option<&'static str>,
    /// Blocks in x, y, z.
    pub grid: (u32, u32, u32),
    /// Threads per block in x, y, z.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory per block, bytes.
    pub dynamic_shared_bytes: u32,
    /// Registers per thread (`cuFuncGetAttribute`, `NUM_REGS`).
    pub registers: i32,
    /// Static shared memory per block, bytes (`SHARED_SIZE_BYTES`).
    pub static_shared_bytes: i32,
    /// Local memory per thread, bytes (`LOCAL_SIZE_BYTES`).
    pub local_bytes: i32,
}

/// What a captured graph holds, against what its sequence launched.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphFacts {
    /// Nodes in the graph.
    pub nodes: usize,
    /// Kernel nodes.
    pub kernel_nodes: usize,
    /// Each kernel node's cooperative attribute, in node order.
    pub cooperative: Vec<bool>,
    /// Each node's type in the driver's words (`kernel`, `memcpy`,
    /// `memset`, ...: [`graph::node_type_name`]), in node order.
    pub node_types: Vec<String>,
    /// Each kernel node's launch and resources, in node order.
    pub kernels: Vec<NodeKernel>,
    /// Host microseconds: capture, instantiation, first replay to a
    /// finished stream.
    pub capture_us: f64,
    /// See `capture_us`.
    pub instantiate_us: f64,
    /// See `capture_us`.
    pub first_replay_us: f64,
}

impl GraphFacts {
    /// The facts of a graph whose nodes are `nodes`, naming each kernel
    /// node's function with `symbol_of`; the host times as measured.
    pub fn of(
        nodes: &[graph::Node],
        symbol_of: impl Fn(cudarc::driver::sys::CUfunction) -> Option<&'static str>,
        capture_us: f64,
        instantiate_us: f64,
        first_replay_us: f64,
    ) -> GraphFacts {
        GraphFacts {
            nodes: nodes.len(),
            kernel_nodes: nodes.iter().filter(|n| n.is_kernel()).count(),
            cooperative: nodes.iter().filter_map(|n| n.cooperative).collect(),
            node_types: nodes.iter().map(graph::Node::type_name).collect(),
            kernels: nodes
                .iter()
                .filter_map(|n| n.kernel)
                .map(|k| NodeKernel {
                    symbol: symbol_of(k.function),
                    grid: k.grid,
                    block: k.block,
                    dynamic_shared_bytes: k.dynamic_shared_bytes,
                    registers: k.registers,
                    static_shared_bytes: k.static_shared_bytes,
                    local_bytes: k.local_bytes,
                })
                .collect(),
            capture_us,
            instantiate_us,
            first_replay_us,
        }
    }

    /// Each kernel the graph launches, once, in order of first appearance,
    /// with its registers, static shared bytes and local bytes.
    pub fn resources(&self) -> Vec<(&'static str, i32, i32, i32)> {
        let mut seen: Vec<(&'static str, i32, i32, i32)> = Vec::new();
        for k in &self.kernels {
            let name = k.symbol.unwrap_or("?");
            if !seen.iter().any(|s| s.0 == name) {
                seen.push((name, k.registers, k.static_shared_bytes, k.local_bytes));
            }
        }
        seen
    }

    /// What is wrong with the graph of `plan` over `rows` rows, or `None`:
    /// every node a kernel node, as many as the sequence launched; each
    /// kernel node cooperative exactly when the variant is; each one a
    /// kernel of the variant's sequence, as many times as launched; each
    /// with `plan`'s block and dynamic shared memory and registers above
    /// zero; and the grids covering every tile of every row once (each
    /// staged kernel's grid, the megakernel's grids summed).
    pub fn verify(&self, plan: &Launches, rows: usize) -> Option<String> {
        if self.nodes != plan.launches || self.kernel_nodes != plan.launches {
            return Some(format!(
                "graph has {} nodes ({} kernel nodes), the sequence launched {} kernels",
                self.nodes, self.kernel_nodes, plan.launches
            ));
        }
        if let Some(i) = self
            .cooperative
            .iter()
            .position(|&c| c != plan.variant.cooperative())
        {
            return Some(format!(
                "kernel node {i} has the cooperative attribute {}, the variant launches {}",
                self.cooperative[i],
                if plan.variant.cooperative() {
                    "cooperatively"
                } else {
                    "ordinarily"
                }
            ));
        }
        if self.kernels.len() != self.kernel_nodes {
            return Some(format!(
                "{} kernel nodes, {} with launch parameters",
                self.kernel_nodes,
                self.kernels.len()
            ));
        }
        let sequence = plan.variant.sequence();
        let per_kernel = plan.launches / sequence.len();
        for kernel in sequence {
            let found = self
                .kernels
                .iter()
                .filter(|k| k.symbol == Some(kernel.symbol()))
                .count();
            if found != per_kernel {
                return Some(format!(
                    "{found} nodes launch {}, the sequence launched it {per_kernel} times",
                    kernel.symbol()
                ));
            }
        }
        let tiles = rows * plan.tiles;
        for (i, k) in self.kernels.iter().enumerate() {
            let name = k.symbol.unwrap_or("an unknown function");
            if k.block != (plan.geometry.t, 1, 1)
                || k.dynamic_shared_bytes as usize != plan.shared_bytes
            {
                return Some(format!(
                    "kernel node {i} ({name}) has blocks {:?} and {} bytes of dynamic shared memory, the plan {} threads and {} bytes",
                    k.block, k.dynamic_shared_bytes, plan.geometry.t, plan.shared_bytes
                ));
            }
            if k.registers <= 0 {
                return Some(format!(
                    "kernel node {i} ({name}) reports {} registers",
                    k.registers
                ));
            }
            if !plan.variant.cooperative() && k.grid != (tiles as u32, 1, 1) {
                return Some(format!(
                    "kernel node {i} ({name}) has a grid of {:?}, the matrix has {tiles} tiles",
                    k.grid
                ));
            }
        }
        if plan.variant.cooperative() {
            let blocks: usize = self.kernels.iter().map(|k| k.grid.0 as usize).sum();
            if blocks != tiles || self.kernels.iter().any(|k| k.grid.1 != 1 || k.grid.2 != 1) {
                return Some(format!(
                    "the megakernel's grids hold {blocks} blocks in all, the matrix has {tiles} tiles"
                ));
            }
        }
        None
    }
}

/// One row of the report: a variant at a geometry.
#[derive(Debug, Clone)]
pub enum Row {
    /// Admission refused it before launch.
    Refused {
        /// The variant.
        variant: Variant,
        /// The geometry.
        geometry: Geometry,
        /// Why.
        refusal: Refusal,
    },
    /// It ran, passed its checks and was timed.
    Ran(Box<Ran>),
}

/// A variant that ran at a geometry.
#[derive(Debug, Clone)]
pub struct Ran {
    /// The admitted sequence.
    pub plan: Launches,
    /// The largest relative error against the f64 reference.
    pub max_rel_error: f64,
    /// The graph.
    pub graph: GraphFacts,
    /// Launched directly.
    pub direct: Timing,
    /// Replayed from the graph.
    pub replay: Timing,
}

/// Runs every variant at every protocol geometry: admission, the check of a
/// direct run against `want`, capture, graph verification, the first
/// replay (its output must equal the direct run's bit for bit), the DOT file
/// into `dot_dir` where given, then the timing of direct launches and of
/// replays.
pub fn run(
    lesson: &mut Softmax<'_>,
    timing: Plan,
    dot_dir: Option<&Path>,
    progress: &indicatif::ProgressBar,
) -> Result<Outcome<Vec<Row>>> {
    let want = lesson.reference();
    let geometries = protocol();
    progress.set_length((geometries.len() * Variant::ALL.len()) as u64);
    if let Some(dir) = dot_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::file(dir, format!("cannot create the folder: {e}")))?;
    }
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for geometry in geometries {
        for variant in Variant::ALL {
            progress.set_message(format!(
                "{} W={} T={}",
                variant.label(),
                geometry.w,
                geometry.t
            ));
            progress.inc(1);
            let plan = match lesson.admit(variant, geometry)? {
                Ok(plan) => plan,
                Err(refusal) => {
                    rows.push(Row::Refused {
                        variant,
                        geometry,
                        refusal,
                    });
                    continue;
                }
            };
            let direct_y = lesson.run_once(&plan)?;
            let (failure, max_rel_error) = check(variant.label(), &direct_y, &want, lesson.shape.n);
            if let Some(f) = failure {
                failures.push(Failure {
                    detail: format!("W={} T={}: {}", geometry.w, geometry.t, f.detail),
                    ..f
                });
                continue;
            }
            let g = lesson.capture(&plan)?;
            let nodes = g.nodes()?;
            lesson.poison()?;
            lesson.gpu.sync_after("cuMemsetD8Async")?;
            let started = Instant::now();
            g.launch()?;
            lesson.gpu.sync_after(variant.main_symbol())?;
            let first_replay_us = started.elapsed().as_secs_f64() * 1e6;
            let facts = GraphFacts::of(
                &nodes,
                |f| lesson.symbol_of(f),
                g.capture_us,
                g.instantiate_us,
                first_replay_us,
            );
            let replay_y = lesson.read_y()?;
            let mut problem = facts.verify(&plan, lesson.shape.rows);
            if problem.is_none()
                && let Some(m) = first_mismatch(&replay_y, &direct_y, Tolerance::Bits)
            {
                problem = Some(format!(
                    "the graph's replay differs from the direct run: {}",
                    m.in_2d(lesson.shape.n)
                ));
            }
            if let Some(p) = problem {
                failures.push(Failure {
                    kernel: variant.label(),
                    detail: format!("W={} T={}: {p}", geometry.w, geometry.t),
                });
                continue;
            }
            if let Some(dir) = dot_dir {
                g.write_dot(&dir.join(format!(
                    "{}-W{}-T{}.dot",
                    variant.label(),
                    geometry.w,
                    geometry.t
                )))?;
            }
            let direct = lesson.time_direct(&plan, timing)?;
            let replay =
                timing::time_kernel(lesson.gpu, variant.main_symbol(), timing, || g.launch())?;
            rows.push(Row::Ran(Box::new(Ran {
                plan,
                max_rel_error,
                graph: facts,
                direct,
                replay,
            })));
        }
    }
    if failures.is_empty() {
        Ok(Outcome::Passed(rows))
    } else {
        Ok(Outcome::Failed(failures))
    }
}

/// The geometry `--compare` runs every variant at: a tile every GPU's
/// shared memory holds, and the largest block.
pub const COMPARE_GEOMETRY: Geometry = Geometry { w: 8192, t: 256 };

/// The CUDA C twins of the softmax kernels.
pub const CUDA_C_SOURCE: &str = include_str!("softmax.cu");

/// Every variant on both sides at [`COMPARE_GEOMETRY`]: each side checked
/// against the f64 reference, the two outputs compared bit for bit, then
/// the launch sequences timed interleaved (Rust, C, Rust, C, ...). The C
/// twin of the megakernel is launched cooperatively too, through the same
/// [`Softmax::enqueue`]; a geometry admission refuses is a failure.
impl TwinRows for Softmax<'_> {
    type Unit = Variant;

    fn load_twins(&mut self, gpu: &Gpu, c_ptx: &str) -> Result<()> {
        self.kernels.load_twins(gpu, c_ptx)
    }

    fn use_side(&mut self, side: Side) {
        self.kernels.use_side(side);
    }

    fn units(&self) -> Vec<Variant> {
        Variant::ALL.to_vec()
    }

    fn label(&self, variant: Variant) -> &'static str {
        variant.label()
    }

    /// The variant's main kernel.
    fn shown(&mut self, variant: Variant) -> Shown<'_> {
        shown_in(&self.kernels, variant.main_kernel())
    }

    fn check_unit(&mut self, variant: Variant) -> Result<(Vec<Failure>, Vec<u64>)> {
        let plan = match self.admit(variant, COMPARE_GEOMETRY)? {
            Ok(plan) => plan,
            // Refused on the Rust side's check; the C side's check of the
            // same row says nothing more.
            Err(_) if self.kernels.side() == Side::CudaC => return Ok((Vec::new(), Vec::new())),
            Err(refusal) => {
                let failure = Failure {
                    kernel: variant.label(),
                    detail: format!(
                        "the comparison geometry W={} T={} was {refusal}",
                        COMPARE_GEOMETRY.w, COMPARE_GEOMETRY.t
                    ),
                };
                return Ok((vec![failure], Vec::new()));
            }
        };
        let got = self.run_once(&plan)?;
        let want = self.reference();
        let (failure, _) = check(variant.label(), &got, &want, self.shape.n);
        let bits = got.iter().map(|v| u64::from(v.to_bits())).collect();
        Ok((failure.into_iter().collect(), bits))
    }

    fn time_unit(&mut self, variant: Variant, timing: Plan) -> Result<Timing> {
        let plan = self
            .admit(variant, COMPARE_GEOMETRY)?
            .map_err(|refusal| Error::Size(format!("{}: {refusal}", variant.label())))?;
        self.time_direct(&plan, timing)
    }
}

/// The softmax lesson as `lab` runs it.
pub struct SoftmaxLesson;

impl lesson::Lesson for SoftmaxLesson {
    const NAME: &'static str = "softmax";
    const ABOUT: &'static str = "RMS-scaled softmax: staged kernels against a cooperative megakernel that keeps its tile in shared memory, replayed from CUDA graphs.";
    const CAPABILITIES: Capabilities = Capabilities {
        plot: false,
        graphs_dir: true,
    };
    type Kernel = Kernel;
    type Sizes = Sizes;
    type Twins<'g> = Softmax<'g>;

    fn block_sizes() -> serde_json::Value {
        report::block_sizes_json()
    }

    /// What NVRTC compiles: the lesson's constants as `#define`s, then the
    /// twins.
    fn cuda_c() -> String {
        format!(
            "#define SCRATCH_FLOATS {SCRATCH_FLOATS}\n#define EPS {EPS:?}f\n#define LOG2E {LOG2E:?}f\n\
         #define RELOAD_INPUT {RELOAD_INPUT}u\n#define ROUNDTRIP_EXPONENTIALS {ROUNDTRIP_EXPONENTIALS}u\n{CUDA_C_SOURCE}"
        )
    }

    fn run(
        gpu: &Gpu,
        sizes: &Sizes,
        context: Context,
        options: &RunOptions<'_>,
    ) -> Result<Outcome<Box<dyn lesson::Report>>> {
        let mut lesson = Softmax::new(gpu, sizes.shape())?;
        let outcome = run(
            &mut lesson,
            options.plan,
            options.graphs_dir,
            options.progress,
        )?;
        let optin = lesson.shared_optin;
        Ok(outcome.map(|rows| {
            Box::new(report::build(context, sizes.shape(), rows, optin)) as Box<dyn lesson::Report>
        }))
    }

    fn twins<'g>(gpu: &'g Gpu, sizes: &Sizes) -> Result<Softmax<'g>> {
        Softmax::new(gpu, sizes.shape())
    }

    fn compare_notes(_sizes: &Sizes) -> Vec<String> {
        vec![format!(
            "Each row is a variant's launch sequence at W = {} columns by T = {} threads, launched directly (not \
             replayed from a graph, so the times are the lesson table's 'direct ms', not its replay column); the \
             megakernel's twin is launched cooperatively too. 'main kernel' is the kernel whose registers and PTX \
             the row shows.",
            COMPARE_GEOMETRY.w, COMPARE_GEOMETRY.t
        )]
    }
}
