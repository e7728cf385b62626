//! The lessons' kernels, written in Rust and compiled by rustc's own NVPTX
//! backend (`nvptx64-nvidia-cuda`) into the PTX that `host` embeds.
//!
//! The crate builds twice:
//! - for the GPU (`target_arch = "nvptx64"`, `no_std`), where the device
//!   layer in [`device`] and every `extern "ptx-kernel"` entry point exist;
//! - for the host, as an ordinary rlib that holds only the constants both
//!   sides need (tile sizes, block sizes, the polynomial degree), so a
//!   constant lives once.
//!
//! One module per lesson: [`roofline`], [`fusion`], [`vectorize`], [`unroll`], [`fuse`], [`specialize`],
//! [`harness`], [`conv2d`], [`bandwidth`], [`softmax`], [`gemm`]; [`testing`] holds a kernel the
//! error-path tests fault on purpose; [`wgmma_layout`] is the shared-memory
//! layout of Hopper's tensor cores, as arithmetic the host can test.

#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        abi_ptx,
        stdarch_nvptx,
        asm_experimental_arch,
        link_llvm_intrinsics,
        core_intrinsics
    )
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

#[cfg(target_arch = "nvptx64")]
pub mod device;

/// The values of a kernel family's list (`name = value, ...`), as a slice:
/// the callback a family's list macro (`fused_widths!`,
/// `specialized_lengths!`) is called with for its constants.
macro_rules! family_values {
    ($($name:ident = $v:literal),* $(,)?) => {
        &[$($v),*]
    };
}

/// The exported names of a kernel family's list, as a slice of symbols.
macro_rules! family_symbols {
    ($($name:ident = $v:literal),* $(,)?) => {
        &[$(stringify!($name)),*]
    };
}

pub mod bandwidth;
pub mod conv2d;
pub mod fuse;
pub mod fusion;
pub mod gemm;
pub mod harness;
pub mod roofline;
pub mod softmax;
pub mod specialize;
pub mod testing;
pub mod unroll;
pub mod vectorize;
pub mod wgmma_layout;

/// A kernel that panics has a bug; on the GPU the only thing to do is stop
/// the launch. `trap` aborts the kernel and the host sees
/// `CUDA_ERROR_ILLEGAL_INSTRUCTION` at its next synchronisation.
#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: trap has no preconditions; it ends this thread's kernel.
    unsafe { core::arch::nvptx::trap() }
}
