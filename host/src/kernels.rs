//! A lesson's kernels: each one named once, by a typed id; loaded once on
//! both sides (the Rust PTX and, for a comparison, the CUDA C twins); looked
//! up by position, with nothing allocated on the launch path; and launched
//! with an argument list that is checked, count and kind of each argument,
//! against the parameters the kernel declares.
//!
//! A lesson declares its kernels with [`kernel_ids!`](crate::kernel_ids):
//!
//! ```ignore
//! host::kernel_ids! {
//!     /// The lesson's kernels.
//!     pub enum Kernel {
//!         /// out = a + b.
//!         VectorAdd = "vector_add" (Ptr, Ptr, Ptr, U64),
//!     }
//! }
//! ```
//!
//! The declared parameters are what `tests/cpu_signatures.rs` holds against
//! the `.param` list of the same `.entry` in the Rust PTX and in NVRTC's PTX
//! of the CUDA C twin; every launch is held against them at run time
//! ([`Launch::launch`]), so a launch that pushes an argument too few, or an
//! f32 where the kernel takes a pointer, fails with a sentence before the
//! driver reads past its argument list.

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;

use cudarc::driver::{CudaFunction, DevicePtr, DevicePtrMut, LaunchConfig, SyncOnDrop};

use crate::compare::Side;
use crate::error::{Error, Result};
use crate::gpu::Gpu;

/// The most parameters one kernel of this project takes (the softmax
/// megakernel takes 16).
pub const MAX_PARAMS: usize = 16;

/// The kind of one kernel parameter: what a launch passes and what PTX
/// declares (`.param .u64 .ptr`, `.param .u32`, `.param .align 4 .b8
/// name[36]`, ...). PTX does not record signedness, so a 32-bit integer is
/// one kind whether the kernel reads it as `u32` or `i32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    /// A device pointer: 8 bytes, `.u64` in PTX.
    Ptr,
    /// A 32-bit integer (`u32` or `i32`).
    U32,
    /// A 64-bit integer (`u64` or `i64`).
    U64,
    /// A 32-bit float.
    F32,
    /// A 64-bit float.
    F64,
    /// A `#[repr(C)]` struct passed by value, of this many bytes.
    Struct(usize),
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Param::Ptr => write!(f, "pointer"),
            Param::U32 => write!(f, "32-bit integer"),
            Param::U64 => write!(f, "64-bit integer"),
            Param::F32 => write!(f, "f32"),
            Param::F64 => write!(f, "f64"),
            Param::Struct(n) => write!(f, "{n}-byte struct"),
        }
    }
}

/// A parameter as one `.param` line of PTX declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxParam {
    /// The state-space type: `.u64`, `.u32`, `.s32`, `.b32`, `.f32`, `.b8`, ...
    pub ty: String,
    /// Whether rustc marked it `.ptr` (NVRTC does not mark pointers).
    pub ptr: bool,
    /// Bytes of an array parameter (`.b8 name[36]`), `None` for a scalar.
    pub array_bytes: Option<usize>,
    /// The whole declaration, for messages.
    pub text: String,
}

impl Param {
    /// Whether `p`, as PTX declares it, is this kind. A pointer is a 64-bit
    /// integer to PTX: `Ptr` accepts any `.u64`/`.b64`/`.s64`, and `U64`
    /// refuses one rustc marked `.ptr`.
    pub fn matches(self, p: &PtxParam) -> bool {
        let int64 = matches!(p.ty.as_str(), ".u64" | ".s64" | ".b64");
        let int32 = matches!(p.ty.as_str(), ".u32" | ".s32" | ".b32");
        match self {
            Param::Ptr => int64 && p.array_bytes.is_none(),
            Param::U64 => int64 && !p.ptr && p.array_bytes.is_none(),
            Param::U32 => int32 && p.array_bytes.is_none(),
            Param::F32 => p.ty == ".f32" && p.array_bytes.is_none(),
            Param::F64 => p.ty == ".f64" && p.array_bytes.is_none(),
            Param::Struct(n) => p.array_bytes == Some(n),
        }
    }
}

/// A scalar a launch passes by value.
pub trait Scalar: Copy {
    /// Its parameter kind.
    const KIND: Param;
    /// Its bytes, in the host's (little-endian) order, padded to 8.
    fn bytes(self) -> [u8; 8];
}

macro_rules! scalar {
    ($($t:ty => $kind:ident),*) => {$(
        impl Scalar for $t {
            const KIND: Param = Param::$kind;
            fn bytes(self) -> [u8; 8] {
                let mut out = [0u8; 8];
                let b = self.to_ne_bytes();
                out[..b.len()].copy_from_slice(&b);
                out
            }
        }
    )*};
}
scalar!(u32 => U32, i32 => U32, u64 => U64, i64 => U64, f32 => F32, f64 => F64);

/// A lesson's kernel, named once: its exported symbol (the same in the Rust
/// PTX and in the CUDA C twin) and its parameters. Implemented by
/// [`kernel_ids!`](crate::kernel_ids) for plain enums, by hand for a
/// kernel family (one id per width or element type).
pub trait KernelId: Copy + Eq + fmt::Debug + 'static {
    /// Every kernel of the set, in the lesson's order.
    const ALL: &'static [Self];
    /// The exported symbol.
    fn symbol(self) -> &'static str;
    /// The parameters, in order.
    fn params(self) -> &'static [Param];
    /// The position in [`KernelId::ALL`].
    fn index(self) -> usize {
        Self::ALL
            .iter()
            .position(|&k| k == self)
            .expect("every id is listed in ALL")
    }
    /// The kernel exported as `symbol`, if the set has it.
    fn of_symbol(symbol: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| k.symbol() == symbol)
    }
}

/// Declares a lesson's kernels: an enum whose variants are the kernels,
/// each with its exported symbol and its [`Param`] list, implementing
/// [`KernelId`] (`index` is the variant's position: no search).
#[macro_export]
macro_rules! kernel_ids {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $symbol:literal ($($param:ident $(($size:expr))?),* $(,)?)
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $($(#[$vmeta])* $variant),*
        }

        impl $name {
            /// The exported symbol (a `const fn`, so a constant can name it).
            pub const fn symbol(self) -> &'static str {
                match self { $($name::$variant => $symbol),* }
            }
        }

        impl $crate::kernels::KernelId for $name {
            const ALL: &'static [Self] = &[$($name::$variant),*];
            fn symbol(self) -> &'static str {
                $name::symbol(self)
            }
            fn params(self) -> &'static [$crate::kernels::Param] {
                match self {
                    $($name::$variant => &[$($crate::kernels::Param::$param $(($size))?),*]),*
                }
            }
            fn index(self) -> usize {
                self as usize
            }
        }
    };
}

/// A lesson's kernels on both sides: the Rust kernels from the embedded
/// PTX, loaded when the set is made, and the CUDA C twins once
/// [`KernelSet::load_twins`] has loaded them; which side launches use now.
pub struct KernelSet<K: KernelId> {
    rust: Vec<CudaFunction>,
    twins: Option<Vec<CudaFunction>>,
    active: Side,
    _ids: PhantomData<K>,
}

/// Raises `f`'s dynamic shared-memory limit to `bytes`
/// (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`): a launch with more
/// than 48 KiB of dynamic shared memory fails without it.
///
/// # Errors
/// [`Error::Driver`] where the driver refuses the size (more than the GPU
/// gives a block).
pub fn allow_dynamic_shared(f: &CudaFunction, bytes: u32) -> Result<()> {
    f.set_attribute(
        cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        bytes as i32,
    )
    .map_err(|source| Error::Driver {
        call: "cuFuncSetAttribute (MAX_DYNAMIC_SHARED_SIZE_BYTES)",
        source,
    })
}

impl<K: KernelId> KernelSet<K> {
    /// Every kernel of `K` from the embedded PTX.
    ///
    /// # Errors
    /// A symbol the PTX does not export.
    pub fn new(gpu: &Gpu) -> Result<KernelSet<K>> {
        Ok(KernelSet {
            rust: K::ALL
                .iter()
                .map(|k| gpu.function(k.symbol()))
                .collect::<Result<_>>()?,
            twins: None,
            active: Side::Rust,
            _ids: PhantomData,
        })
    }

    /// Every kernel of `K` from `module`, a module other than the embedded
    /// sm_75 one (the sm_80 module of the tensor-core kernels, the sm_90a
    /// one of the Hopper kernels): loaded as a module of its own.
    ///
    /// # Errors
    /// The driver refusing the PTX (a GPU that does not run its target), or
    /// a symbol missing from it.
    pub fn from_module(gpu: &Gpu, module: crate::ptx::Module) -> Result<KernelSet<K>> {
        let symbols: Vec<&str> = K::ALL.iter().map(|k| k.symbol()).collect();
        Ok(KernelSet {
            rust: gpu.load_functions(
                module.ptx(),
                &symbols,
                module.load_call(),
                module.get_call(),
            )?,
            twins: None,
            active: Side::Rust,
            _ids: PhantomData,
        })
    }

    /// Loads the CUDA C twins of every kernel from NVRTC's `ptx`.
    ///
    /// # Errors
    /// The driver refusing the PTX, or a symbol missing from it.
    pub fn load_twins(&mut self, gpu: &Gpu, ptx: &str) -> Result<()> {
        let symbols: Vec<&str> = K::ALL.iter().map(|k| k.symbol()).collect();
        self.twins = Some(gpu.load_twins(ptx, &symbols)?);
        Ok(())
    }

    /// Makes later launches use `side`.
    ///
    /// # Panics
    /// On [`Side::CudaC`] before [`KernelSet::load_twins`] (a caller bug).
    pub fn use_side(&mut self, side: Side) {
        assert!(
            side == Side::Rust || self.twins.is_some(),
            "load_twins first"
        );
        self.active = side;
    }

    /// The side launches use now.
    pub fn side(&self) -> Side {
        self.active
    }

    /// `kernel` on `side`; `None` for the C side before its twins load.
    pub fn get(&self, kernel: K, side: Side) -> Option<&CudaFunction> {
        match side {
            Side::Rust => self.rust.get(kernel.index()),
            Side::CudaC => self.twins.as_ref().and_then(|t| t.get(kernel.index())),
        }
    }

    /// `kernel` on the side in use.
    pub fn active(&self, kernel: K) -> &CudaFunction {
        self.get(kernel, self.active)
            .expect("use_side checked the twins are loaded")
    }

    /// Starts a launch of `kernel` (on the side in use) on `gpu`'s stream.
    pub fn launch<'a>(&'a self, gpu: &'a Gpu, kernel: K) -> Launch<'a> {
        Launch::new(gpu, self.active(kernel), kernel.symbol(), kernel.params())
    }
}

/// One launch being built: the arguments pushed so far, by value, each
/// with its kind, and each buffer's stream-ordering guard (held until the
/// launch is queued, as cudarc's `DevicePtr` asks). Nothing is allocated:
/// at most [`MAX_PARAMS`] arguments live in fixed arrays.
pub struct Launch<'a> {
    gpu: &'a Gpu,
    function: &'a CudaFunction,
    symbol: &'static str,
    declared: &'static [Param],
    values: [[u8; 8]; MAX_PARAMS],
    by_ref: [*const c_void; MAX_PARAMS],
    kinds: [Param; MAX_PARAMS],
    guards: [Option<SyncOnDrop<'a>>; MAX_PARAMS],
    len: usize,
    /// The device address of each argument that is an output (0 for the
    /// others): noted for the guard check once the launch is queued.
    outputs: [u64; MAX_PARAMS],
    _borrows: PhantomData<&'a ()>,
}

impl<'a> Launch<'a> {
    /// A launch of `function` (exported as `symbol`, declaring `declared`);
    /// made by [`KernelSet::launch`], which takes both from the kernel's id.
    pub(crate) fn new(
        gpu: &'a Gpu,
        function: &'a CudaFunction,
        symbol: &'static str,
        declared: &'static [Param],
    ) -> Launch<'a> {
        Launch {
            gpu,
            function,
            symbol,
            declared,
            values: [[0; 8]; MAX_PARAMS],
            by_ref: [std::ptr::null(); MAX_PARAMS],
            kinds: [Param::U32; MAX_PARAMS],
            guards: [const { None }; MAX_PARAMS],
            len: 0,
            outputs: [0; MAX_PARAMS],
            _borrows: PhantomData,
        }
    }

    fn push(
        mut self,
        kind: Param,
        value: [u8; 8],
        by_ref: *const c_void,
        guard: Option<SyncOnDrop<'a>>,
    ) -> Self {
        if self.len < MAX_PARAMS {
            self.kinds[self.len] = kind;
            self.values[self.len] = value;
            self.by_ref[self.len] = by_ref;
            self.guards[self.len] = guard;
        }
        // Counted even past the arrays, so the check at launch names it.
        self.len += 1;
        self
    }

    /// A buffer the kernel reads (a device pointer, with read intent).
    pub fn input<T>(self, buffer: &'a impl DevicePtr<T>) -> Self {
        let gpu = self.gpu;
        let (ptr, guard) = buffer.device_ptr(&gpu.stream);
        self.push(Param::Ptr, ptr.to_ne_bytes(), std::ptr::null(), Some(guard))
    }

    /// A buffer the kernel writes (a device pointer, with write intent).
    /// Once the launch is queued, the buffer is noted for the guard check
    /// of the next [`Gpu::sync_after`](crate::gpu::Gpu::sync_after).
    pub fn output<T>(mut self, buffer: &'a mut impl DevicePtrMut<T>) -> Self {
        let gpu = self.gpu;
        let (ptr, guard) = buffer.device_ptr_mut(&gpu.stream);
        if self.len < MAX_PARAMS {
            self.outputs[self.len] = ptr;
        }
        self.push(Param::Ptr, ptr.to_ne_bytes(), std::ptr::null(), Some(guard))
    }

    /// A scalar by value.
    pub fn scalar<S: Scalar>(self, value: S) -> Self {
        self.push(S::KIND, value.bytes(), std::ptr::null(), None)
    }

    /// A `#[repr(C)]` struct by value (its bytes are read at launch).
    pub fn by_value<T: Copy>(self, value: &'a T) -> Self {
        self.push(
            Param::Struct(size_of::<T>()),
            [0; 8],
            (value as *const T).cast(),
            None,
        )
    }

    /// Fails with [`Error::Signature`] unless the arguments pushed are the
    /// kernel's declared parameters, count and kind of each.
    pub fn check(&self) -> Result<()> {
        let pushed = &self.kinds[..self.len.min(MAX_PARAMS)];
        if self.len <= MAX_PARAMS && pushed == self.declared {
            return Ok(());
        }
        let list = |p: &[Param]| {
            p.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        Err(Error::Signature {
            kernel: self.symbol.to_string(),
            declared: list(self.declared),
            pushed: if self.len > MAX_PARAMS {
                format!(
                    "{} arguments, past the {MAX_PARAMS} a launch holds",
                    self.len
                )
            } else {
                list(pushed)
            },
        })
    }

    /// Launches with `cfg` on the GPU's stream (asynchronously).
    ///
    /// # Errors
    /// [`Error::Signature`] before launching when the arguments are not the
    /// declared parameters; a launch the driver refuses, charged to the
    /// kernel.
    ///
    /// # Safety
    /// Each pointer argument addresses enough memory of this context for
    /// every access the kernel makes at `cfg`, and the kernel's writes do
    /// not race with anything else on the device.
    pub unsafe fn launch(self, cfg: LaunchConfig) -> Result<()> {
        // SAFETY: passed on from the caller.
        unsafe { self.go(cfg, false) }
    }

    /// Launches with `cfg` as a cooperative launch (every block resident at
    /// once, which the driver checks).
    ///
    /// # Errors
    /// As [`Launch::launch`]; a refusal (a grid larger than the GPU holds at
    /// once, no cooperative launch on this GPU or in this context) is
    /// [`crate::Error::CooperativeRefused`], not a fault of the kernel.
    ///
    /// # Safety
    /// As [`Launch::launch`].
    pub unsafe fn launch_cooperative(self, cfg: LaunchConfig) -> Result<()> {
        // SAFETY: passed on from the caller.
        unsafe { self.go(cfg, true) }.map_err(|e| {
            e.into_cooperative_refusal(cfg.grid_dim.0, cfg.block_dim.0, cfg.shared_mem_bytes)
        })
    }

    unsafe fn go(mut self, cfg: LaunchConfig, cooperative: bool) -> Result<()> {
        self.check()?;
        let mut params: [*mut c_void; MAX_PARAMS] = [std::ptr::null_mut(); MAX_PARAMS];
        for (i, slot) in params.iter_mut().enumerate().take(self.len) {
            *slot = if self.by_ref[i].is_null() {
                self.values[i].as_mut_ptr().cast()
            } else {
                self.by_ref[i].cast_mut()
            };
        }
        let fault = |source| Error::KernelFault {
            kernel: self.symbol.to_string(),
            source,
        };
        self.gpu.ctx.bind_to_thread().map_err(fault)?;
        let stream = self.gpu.stream.cu_stream();
        let f = self.function.cu_function();
        let args = &mut params[..self.len];
        // SAFETY: `args` holds one pointer per declared parameter (checked
        // above), each to a value of the declared kind that lives until the
        // call returns (the driver copies them at launch); the caller
        // vouches for the memory they address. Every buffer's guard is still
        // held in `self.guards` and drops after the launch is queued, so
        // cudarc's stream ordering holds also with its event tracking on
        // (the lab's one stream runs with it off, see `Gpu::open`).
        unsafe {
            if cooperative {
                cudarc::driver::result::launch_cooperative_kernel(
                    f,
                    cfg.grid_dim,
                    cfg.block_dim,
                    cfg.shared_mem_bytes,
                    stream,
                    args,
                )
            } else {
                cudarc::driver::result::launch_kernel(
                    f,
                    cfg.grid_dim,
                    cfg.block_dim,
                    cfg.shared_mem_bytes,
                    stream,
                    args,
                )
            }
        }
        .map_err(fault)?;
        // Queued: its outputs are the next check's to read guards of (a
        // refused launch wrote nothing and notes nothing).
        for (argument, &ptr) in self.outputs.iter().enumerate().take(self.len) {
            if ptr != 0 {
                self.gpu.guards.note_output(ptr, self.symbol, argument);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ptx_param(line: &str) -> PtxParam {
        crate::ptx::parse_param(line).expect("a .param line")
    }

    #[test]
    fn kinds_match_what_rustc_and_nvrtc_declare() {
        let rust_ptr = ptx_param(".param .u64 .ptr .align 1 k_param_0");
        let c_ptr = ptx_param(".param .u64 k_param_0");
        assert!(Param::Ptr.matches(&rust_ptr));
        assert!(Param::Ptr.matches(&c_ptr));
        assert!(!Param::U64.matches(&rust_ptr), "a .ptr is not a count");
        assert!(Param::U64.matches(&c_ptr));
        assert!(Param::U32.matches(&ptx_param(".param .u32 k_param_2")));
        assert!(Param::U32.matches(&ptx_param(".param .s32 k_param_2")));
        assert!(!Param::U32.matches(&ptx_param(".param .f32 k_param_2")));
        assert!(Param::F32.matches(&ptx_param(".param .f32 k_param_2")));
        let taps = ptx_param(".param .align 4 .b8 conv2d_valid_param_3[36]");
        assert!(Param::Struct(36).matches(&taps));
        assert!(!Param::Struct(32).matches(&taps));
        assert!(!Param::Ptr.matches(&taps));
    }

    crate::kernel_ids! {
        /// Two kernels for the test.
        enum Two {
            /// The first.
            A = "a" (Ptr, U64),
            /// The second, with a struct.
            B = "b" (Ptr, Struct(36), F32),
        }
    }

    #[test]
    fn declared_ids_list_in_order_with_their_symbols_and_params() {
        for (i, k) in Two::ALL.iter().enumerate() {
            assert_eq!(k.index(), i, "{k:?}: kernels are looked up by index");
        }
        assert_eq!(Two::of_symbol("b"), Some(Two::B));
        assert_eq!(Two::of_symbol("c"), None);
        assert_eq!(Two::B.params(), [Param::Ptr, Param::Struct(36), Param::F32]);
        assert_eq!(Two::A.symbol(), "a");
    }

    #[test]
    fn scalars_carry_their_bytes_and_kind() {
        assert_eq!(7u32.bytes(), [7, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!((-1i32).bytes()[..4], [0xFF; 4]);
        assert_eq!(<i64 as Scalar>::KIND, Param::U64);
        assert_eq!(1.0f32.bytes()[..4], 1.0f32.to_ne_bytes());
    }
}
