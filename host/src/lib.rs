//! The host side of the Rust GPU kernel lab: loads the PTX that `build.rs`
//! compiled from `kernels-gpu`, launches each lesson's kernels through the
//! CUDA driver API (cudarc, loaded at run time), checks every result against
//! a CPU reference, times with CUDA events and reports.
//!
//! Shared layers: [`gpu`] (device, module, buffers), [`timing`], [`check`],
//! [`report`], [`error`], and for Rust-versus-CUDA-C comparisons [`nvrtc`]
//! and [`compare`]. One module per lesson: [`roofline`].

pub mod asm;
pub mod bandwidth;
pub mod check;
pub mod compare;
pub mod conv2d;
pub mod error;
pub mod fuse;
pub mod fusion;
pub mod gpu;
pub mod graph;
pub mod harness;
pub mod lesson;
pub mod ncu;
pub mod nvrtc;
pub mod plot;
pub mod ptx;
pub mod record;
pub mod report;
pub mod roofline;
pub mod softmax;
pub mod specialize;
pub mod timing;
pub mod unroll;
pub mod vectorize;

pub use error::{Error, Result};
