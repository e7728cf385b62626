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

use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};
use kernels_gpu::softmax::*;

use crate::check::Failure;
use crate::compare::{Agreement, ComparedKernel, Kernels, Side, interleave, pair};
use crate::error::{DriverContext, Error, Result};
use crate::gpu::Gpu;
use crate::graph;
use crate::timing::{self, Plan, Timing};

/// The lesson's kernels, in the order [`Kernels`] holds them.
pub const SYMBOLS: [&str; 4] = [
    "softmax_tile_stats",
    "softmax_tile_exp",
    "softmax_tile_normalize",
    "softmax_retained",
];
const STATS: usize = 0;
const EXP: usize = 1;
const NORMALIZE: usize = 2;
const RETAINED: usize = 3;

/// Floats per element every variant must move: x read once, y written once.
pub const COMPULSORY_FLOATS: f64 = 2.0;

/// The ways the lesson runs a softmax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// Three kernels; the exponentials go through global memory.
    Staged,
    /// Three kernels; phase 3 recomputes the exponentials from x.
    Recompute,
    /// One cooperative kernel per row group; the tile stays in shared memory.
    Retained,
    /// Retained, but phase 2 reloads x from global memory.
    InputReload,
    /// Retained, but the exponentials round-trip through global memory.
    Roundtrip,
    /// Both controls at once.
    BothReload,
}

impl Variant {
    /// Every variant, in report order.
    pub const ALL: [Variant; 6] = [
        Variant::Staged,
        Variant::Recompute,
        Variant::Retained,
        Variant::InputReload,
        Variant::Roundtrip,
        Variant::BothReload,
    ];

    /// The label a table row, a JSON `variant` and a DOT file use.
    pub fn label(self) -> &'static str {
        match self {
            Variant::Staged => "staged",
            Variant::Recompute => "recompute",
            Variant::Retained => "retained",
            Variant::InputReload => "input_reload",
            Variant::Roundtrip => "roundtrip",
            Variant::BothReload => "both_reload",
        }
    }

    /// Whether it is the cooperative megakernel (admission, graph attribute).
    pub fn cooperative(self) -> bool {
        !matches!(self, Variant::Staged | Variant::Recompute)
    }

    /// The megakernel's `controls` argument.
    pub fn controls(self) -> u32 {
        match self {
            Variant::InputReload => RELOAD_INPUT,
            Variant::Roundtrip => ROUNDTRIP_EXPONENTIALS,
            Variant::BothReload => RELOAD_INPUT | ROUNDTRIP_EXPONENTIALS,
            _ => 0,
        }
    }

    /// Floats it moves per element through global memory, from the kernels
    /// (the per-tile and per-row statistics, a few floats per 4096
    /// elements, left out): staged 1 (phase 1 reads x) + 2 (phase 2 reads x,
    /// writes e) + 2 (phase 3 reads e, writes y); recompute 1 + 1 + 2;
    /// retained 2; a reload adds 1, a round trip 2.
    pub fn floats_per_elem(self) -> f64 {
        match self {
            Variant::Staged => 5.0,
            Variant::Recompute => 4.0,
            Variant::Retained => 2.0,
            Variant::InputReload => 3.0,
            Variant::Roundtrip => 4.0,
            Variant::BothReload => 5.0,
        }
    }

    /// The kernel a comparison's PTX mix is read from.
    pub fn main_symbol(self) -> &'static str {
        match self {
            Variant::Staged => SYMBOLS[EXP],
            Variant::Recompute => SYMBOLS[NORMALIZE],
            _ => SYMBOLS[RETAINED],
        }
    }
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
    /// The timed matrix: ROWS x COLS.
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
    kernels: Kernels,
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
            3 * elems * 4 + 3 * max_tiles * 4,
            "the softmax lesson's x, e and y",
        )?;
        let kernels = Kernels::new(gpu, &SYMBOLS)?;
        let host_x: Vec<f32> = (0..elems).map(|i| reference::fill_x(i, shape.n)).collect();
        let mut x = gpu.alloc_f32(elems)?;
        gpu.upload(&host_x, &mut x)?;
        let zeros = |len: usize| gpu.stream.alloc_zeros::<u32>(len).call("cuMemAllocAsync");
        let shared_optin = gpu
            .ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
            .call("cuDeviceGetAttribute")? as usize;
        Ok(Softmax {
            gpu,
            kernels,
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

    /// Loads the CUDA C twins (NVRTC's PTX for this GPU).
    pub fn load_twins(&mut self, ptx: &str) -> Result<()> {
        self.kernels.load_twins(self.gpu, ptx)
    }

    /// Makes later launches use `side`'s kernels.
    ///
    /// # Panics
    /// On [`Side::CudaC`] before [`Softmax::load_twins`] (a caller bug).
    pub fn use_side(&mut self, side: Side) {
        self.kernels.use_side(side);
    }

    /// The compiled function of `symbol` on `side`.
    pub fn function(&self, symbol: &str, side: Side) -> Option<&CudaFunction> {
        self.kernels
            .get(SYMBOLS.iter().position(|&s| s == symbol)?, side)
    }

    /// The f64 reference of the whole matrix.
    pub fn reference(&self) -> Vec<f64> {
        reference::matrix(&self.host_x, self.shape.n)
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
        check_geometry(geometry)?;
        let Geometry { w, t } = geometry;
        let tiles = tiles_per_row(self.shape.n, w);
        if !variant.cooperative() {
            return Ok(Ok(Launches {
                variant,
                geometry,
                tiles,
                group_rows: self.shape.rows,
                launches: 3,
                shared_bytes: 0,
                blocks_per_sm: None,
            }));
        }
        let shared = match admit_shared(w, self.shared_optin) {
            Ok(bytes) => bytes,
            Err(refusal) => return Ok(Err(refusal)),
        };
        let mut blocks_per_sm = u32::MAX;
        for side in [Side::Rust, Side::CudaC] {
            let Some(f) = self.kernels.get(RETAINED, side) else {
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
        let group_rows =
            match rows_per_group(blocks_per_sm, self.gpu.info.sms, tiles, self.shape.rows) {
                Ok(g) => g,
                Err(refusal) => return Ok(Err(refusal)),
            };
        Ok(Ok(Launches {
            variant,
            geometry,
            tiles,
            group_rows,
            launches: self.shape.rows.div_ceil(group_rows),
            shared_bytes: shared,
            blocks_per_sm: Some(blocks_per_sm),
        }))
    }

    /// Enqueues `plan`'s launch sequence over the whole matrix on the
    /// GPU's stream (asynchronously): three kernels for the staged
    /// variants, one cooperative launch per row group for the others.
    pub fn enqueue(&mut self, plan: &Launches) -> Result<()> {
        let Geometry { w, t } = plan.geometry;
        let (n, tiles) = (self.shape.n as u32, plan.tiles as u32);
        let fault = |symbol: usize| {
            move |source| Error::KernelFault {
                kernel: SYMBOLS[symbol].to_string(),
                source,
            }
        };
        let stream = &self.gpu.stream;
        if !plan.variant.cooperative() {
            let cfg = LaunchConfig {
                grid_dim: ((self.shape.rows * plan.tiles) as u32, 1, 1),
                block_dim: (t, 1, 1),
                shared_mem_bytes: 0,
            };
            let staged = plan.variant == Variant::Staged;
            let (write_e, recompute) = if staged { (1u32, 0u32) } else { (0, 1) };
            let f = self.kernels.active(STATS).clone();
            let mut b = stream.launch_builder(&f);
            b.arg(&self.x)
                .arg(&mut self.tile_max)
                .arg(&mut self.tile_sumsq)
                .arg(&n)
                .arg(&w)
                .arg(&tiles);
            // SAFETY: the arguments are softmax_tile_stats's; the buffers
            // hold rows * n and rows * tiles floats; one block per tile.
            unsafe { b.launch(cfg) }.map_err(fault(STATS))?;
            let f = self.kernels.active(EXP).clone();
            let mut b = stream.launch_builder(&f);
            b.arg(&self.x)
                .arg(&mut self.e)
                .arg(&mut self.tile_max)
                .arg(&mut self.tile_sumsq)
                .arg(&mut self.tile_sum)
                .arg(&mut self.row_max)
                .arg(&mut self.row_scale)
                .arg(&n)
                .arg(&w)
                .arg(&tiles)
                .arg(&write_e);
            // SAFETY: as above, softmax_tile_exp's arguments.
            unsafe { b.launch(cfg) }.map_err(fault(EXP))?;
            let f = self.kernels.active(NORMALIZE).clone();
            let src = if staged { &self.e } else { &self.x };
            let mut b = stream.launch_builder(&f);
            b.arg(src)
                .arg(&mut self.y)
                .arg(&mut self.tile_sum)
                .arg(&mut self.row_max)
                .arg(&mut self.row_scale)
                .arg(&mut self.row_sum)
                .arg(&n)
                .arg(&w)
                .arg(&tiles)
                .arg(&recompute);
            // SAFETY: as above, softmax_tile_normalize's; src and y differ.
            unsafe { b.launch(cfg) }.map_err(fault(NORMALIZE))?;
            return Ok(());
        }
        let f = self.kernels.active(RETAINED).clone();
        let controls = plan.variant.controls();
        let mut row_base = 0;
        while row_base < self.shape.rows {
            let count = plan.group_rows.min(self.shape.rows - row_base);
            let cfg = LaunchConfig {
                grid_dim: ((count * plan.tiles) as u32, 1, 1),
                block_dim: (t, 1, 1),
                shared_mem_bytes: plan.shared_bytes as u32,
            };
            let base = row_base as u32;
            let mut b = stream.launch_builder(&f);
            b.arg(&self.x)
                .arg(&mut self.e)
                .arg(&mut self.y)
                .arg(&mut self.tile_max)
                .arg(&mut self.tile_sumsq)
                .arg(&mut self.tile_sum)
                .arg(&mut self.row_max)
                .arg(&mut self.row_scale)
                .arg(&mut self.row_sum)
                .arg(&mut self.arrivals)
                .arg(&mut self.epochs)
                .arg(&n)
                .arg(&w)
                .arg(&tiles)
                .arg(&base)
                .arg(&controls);
            // SAFETY: softmax_retained's arguments; admission checked that
            // the shared memory fits and every block of `count` rows' tiles
            // is resident at once, which the cooperative launch enforces.
            unsafe { b.launch_cooperative(cfg) }.map_err(fault(RETAINED))?;
            row_base += count;
        }
        Ok(())
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

/// Checks `got` against `want` and names the first bad element by row and
/// column; also returns the largest relative error.
pub fn check(label: &'static str, got: &[f32], want: &[f64], n: usize) -> (Option<Failure>, f64) {
    let (bad, worst) = reference::first_mismatch(got, want);
    let failure = bad.map(|(i, g, w)| Failure {
        kernel: label,
        detail: format!(
            "wrong at index {i} (row {}, col {}): got {g:e}, want {w:e} (relative tolerance {REL_TOLERANCE:e})",
            i / n,
            i % n
        ),
    });
    (failure, worst)
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
    /// Host microseconds: capture, instantiation, first replay to a
    /// finished stream.
    pub capture_us: f64,
    /// See `capture_us`.
    pub instantiate_us: f64,
    /// See `capture_us`.
    pub first_replay_us: f64,
}

impl GraphFacts {
    /// What is wrong with the graph of `plan`, or `None`: every node a
    /// kernel node, as many as the sequence launched, and each kernel node
    /// cooperative exactly when the variant is.
    pub fn verify(&self, plan: &Launches) -> Option<String> {
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

/// The outcome: every row, or every failed check.
pub enum Outcome {
    /// Every check passed.
    Passed(Vec<Row>),
    /// At least one failed: every failure, no figure.
    Failed(Vec<Failure>),
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
) -> Result<Outcome> {
    let want = lesson.reference();
    let geometries = protocol();
    progress.set_length((geometries.len() * Variant::ALL.len()) as u64);
    if let Some(dir) = dot_dir {
        std::fs::create_dir_all(dir).map_err(|e| Error::Size(format!("{}: {e}", dir.display())))?;
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
            let facts = GraphFacts {
                nodes: nodes.len(),
                kernel_nodes: nodes.iter().filter(|n| n.is_kernel()).count(),
                cooperative: nodes.iter().filter_map(|n| n.cooperative).collect(),
                capture_us: g.capture_us,
                instantiate_us: g.instantiate_us,
                first_replay_us,
            };
            let replay_y = lesson.read_y()?;
            let mut problem = facts.verify(&plan);
            if problem.is_none()
                && let Some(m) = crate::check::first_bit_mismatch(&replay_y, &direct_y)
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

/// What NVRTC compiles: the lesson's constants as `#define`s, then the
/// twins.
pub fn cuda_c_program() -> String {
    format!(
        "#define SCRATCH_FLOATS {SCRATCH_FLOATS}\n#define EPS {EPS:?}f\n#define LOG2E {LOG2E:?}f\n\
         #define RELOAD_INPUT {RELOAD_INPUT}u\n#define ROUNDTRIP_EXPONENTIALS {ROUNDTRIP_EXPONENTIALS}u\n{CUDA_C_SOURCE}"
    )
}

/// Every variant on both sides at [`COMPARE_GEOMETRY`]: each side checked
/// against the f64 reference, the two outputs compared bit for bit, then
/// the launch sequences timed interleaved (Rust, C, Rust, C, ...). The C
/// twin of the megakernel is launched cooperatively too, through the same
/// [`Softmax::enqueue`].
pub fn compare(
    lesson: &mut Softmax<'_>,
    c_ptx: &str,
    trials: u32,
    timing: Plan,
) -> Result<std::result::Result<Vec<ComparedKernel>, Vec<Failure>>> {
    let want = lesson.reference();
    let mut failures = Vec::new();
    let mut admitted = Vec::new();
    for variant in Variant::ALL {
        let plan = match lesson.admit(variant, COMPARE_GEOMETRY)? {
            Ok(plan) => plan,
            Err(refusal) => {
                failures.push(Failure {
                    kernel: variant.label(),
                    detail: format!(
                        "the comparison geometry W={} T={} was {refusal}",
                        COMPARE_GEOMETRY.w, COMPARE_GEOMETRY.t
                    ),
                });
                continue;
            }
        };
        let mut outputs = Vec::new();
        for side in [Side::Rust, Side::CudaC] {
            lesson.use_side(side);
            let got = lesson.run_once(&plan)?;
            if let (Some(f), _) = check(variant.label(), &got, &want, lesson.shape.n) {
                failures.push(Failure {
                    detail: format!("({}) {}", side.label(), f.detail),
                    ..f
                });
            }
            outputs.push(got);
        }
        admitted.push((plan, Agreement::of(&outputs[0], &outputs[1])));
    }
    lesson.use_side(Side::Rust);
    if !failures.is_empty() {
        return Ok(Err(failures));
    }
    let mut pairs = Vec::new();
    for (plan, agreement) in admitted {
        let t = interleave(trials, |side| {
            lesson.use_side(side);
            lesson.time_direct(&plan, timing)
        })?;
        lesson.use_side(Side::Rust);
        let symbol = plan.variant.main_symbol();
        let side = |s| lesson.function(symbol, s).expect("both sides are loaded");
        pairs.push(pair(
            plan.variant.label(),
            symbol,
            side(Side::Rust),
            side(Side::CudaC),
            c_ptx,
            t,
            agreement,
            None,
        )?);
    }
    Ok(Ok(pairs))
}
