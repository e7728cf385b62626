//! The host side of the Rust GPU kernel lab: loads the PTX that `build.rs`
//! compiled from `kernels-gpu`, launches each lesson's kernels through the
//! CUDA driver API (cudarc, loaded at run time), checks every result against
//! a CPU reference, times with CUDA events and reports.
//!
//! Shared layers: [`lesson`] (the one interface every lesson implements),
//! [`runner`] (the one path `lab` drives each lesson through), [`lessons`]
//! (the list of them), [`kernels`] (a lesson's kernels, named once, launched
//! with checked arguments), [`sizes`] (sizes from the GPU at hand), [`gpu`]
//! (device, module, buffers), [`timing`] (with [`clocks`], the clocks while
//! timing), [`check`], [`report`], [`record`], [`ragged`] (round against
//! ragged sizes),
//! [`error`], and for Rust-versus-CUDA-C comparisons [`nvrtc`] and
//! [`compare`]. One module per lesson: [`roofline`], [`fusion`],
//! [`vectorize`], [`unroll`], [`fuse`], [`specialize`], [`harness`],
//! [`conv2d`], [`bandwidth`], [`softmax`].

pub mod asm;
pub mod bandwidth;
pub mod check;
pub mod cli;
pub mod clocks;
pub mod compare;
pub mod conv2d;
pub mod cublas;
pub mod error;
pub mod fill;
pub mod fuse;
pub mod fusion;
pub mod gemm;
pub mod gpu;
pub mod graph;
pub mod guard;
pub mod harness;
pub mod kernels;
pub mod launch_bounds;
pub mod lesson;
pub mod lessons;
pub mod ncu;
pub mod nvrtc;
pub mod plot;
pub mod ptx;
pub mod ragged;
pub mod record;
pub mod report;
pub mod roofline;
pub mod runner;
pub mod sizes;
pub mod softmax;
pub mod specialize;
pub mod testing;
pub mod timing;
pub mod tma;
pub mod unroll;
pub mod vectorize;

pub use error::{Error, Result};
