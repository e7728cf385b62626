//! The device layer: the few pieces of CUDA's programming model the kernels
//! need, each a thin, inlined wrapper over a PTX instruction or an NVVM
//! intrinsic. Named after CUDA's own terms, as Rust-CUDA's `cuda_std` does.
//!
//! - [`thread`]: thread, block and grid indices; the block barrier.
//! - [`shared`]: statically sized shared-memory arrays reached through the
//!   shared state space (`ld.shared`/`st.shared`, SASS `LDS`/`STS`).
//! - [`memory`]: loads through the read-only (non-coherent) data path,
//!   `ld.global.nc` (SASS `LDG.E.CONSTANT`), what nvcc emits for
//!   `const __restrict__` inputs, and the strided dot product the naive
//!   matmuls are made of.
//! - [`math`]: fused multiply-add. rustc never contracts `a * b + c` on its
//!   own, while nvcc does by default.
//! - [`warp`]: register exchange between a warp's lanes (`shfl.sync`).
//! - [`atomic`]: GPU-scope ordered atomics and `nanosleep`, and the row
//!   barrier the cooperative softmax kernel is built on.
//! - [`mma`]: tensor cores (`mma.sync`), `ldmatrix` and `cp.async`, for the
//!   sm_80 module only.
//! - `wgmma`: Hopper's warpgroup tensor cores (`wgmma.mma_async` from
//!   shared-memory descriptors, the 128-byte swizzle), for the sm_90a module
//!   only (`--cfg lab_hopper`).
//! - `tma`: Hopper's tensor memory accelerator (`cp.async.bulk.tensor`)
//!   and the `mbarrier`s that count its bytes, for the sm_90a module only.
//! - [`launch`]: `__launch_bounds__` for Rust: a kernel's largest block and
//!   the blocks an SM must hold, as the PTX entry's directives; and a launch
//!   assumption (an exact tiling) stated to the compiler.
//! - [`unroll`]: `#pragma unroll` for Rust: a fixed-count loop copied in
//!   the source, so a per-thread array it indexes stays in registers.
//!
//! Several properties here depend on this exact LLVM (the toolchain is
//! pinned); the PTX tests in `tests/cpu_roofline.rs` guard each one.

pub mod atomic;
pub mod launch;
pub mod math;
pub mod memory;
pub mod mma;
pub mod shared;
pub mod thread;
#[cfg(lab_hopper)]
pub mod tma;
pub mod unroll;
pub mod warp;
#[cfg(lab_hopper)]
pub mod wgmma;
