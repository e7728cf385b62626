//! Every lesson `lab` runs, in the order a learner meets them on the
//! command line: what dispatches, lists and tests them.

use std::process::ExitCode;

use crate::cli::Args;
use crate::error::Result;
use crate::gpu::DeviceInfo;
use crate::kernels::{KernelId, Param};
use crate::lesson::{Capabilities, Lesson};
use crate::sizes::{LessonSizes, Stream};

/// A lesson's sizes on one GPU as the tests read them: the buffers it
/// streams, the device bytes it allocates and the value a record keeps.
#[derive(Debug, Clone)]
pub struct SizesView {
    /// The buffers timed as DRAM streams.
    pub streams: Vec<Stream>,
    /// Device bytes allocated at most.
    pub device_bytes: usize,
    /// The sizes as the context records them.
    pub json: serde_json::Value,
}

/// One lesson as `lab` and the tests see it, with the lesson's type erased.
pub struct Entry {
    /// The name on the command line.
    pub name: &'static str,
    /// What it teaches, one line.
    pub about: &'static str,
    /// The optional flags it takes.
    pub capabilities: Capabilities,
    /// Runs it as the command line asks ([`crate::runner::drive`]).
    pub drive: fn(&Args) -> Result<ExitCode>,
    /// Each of its kernels in the base module that has a CUDA C twin:
    /// symbol and declared parameters.
    pub kernels: fn() -> Vec<(&'static str, &'static [Param])>,
    /// Its base-module kernels without a twin
    /// ([`Lesson::rust_only_base_kernels`]).
    pub rust_only_kernels: fn() -> Vec<(&'static str, &'static [Param])>,
    /// The CUDA C program of its twins.
    pub cuda_c: fn() -> String,
    /// Its sizes on a GPU (`quick` or not), as [`SizesView`].
    pub sizes: fn(&DeviceInfo, bool) -> Result<SizesView>,
}

fn sizes_view<L: Lesson>(info: &DeviceInfo, quick: bool) -> Result<SizesView> {
    let sizes = L::Sizes::for_gpu(info, quick)?;
    Ok(SizesView {
        streams: sizes.streams(),
        device_bytes: sizes.device_bytes(),
        json: serde_json::to_value(&sizes).unwrap_or_default(),
    })
}

fn signatures<K: KernelId>() -> Vec<(&'static str, &'static [Param])> {
    K::ALL.iter().map(|k| (k.symbol(), k.params())).collect()
}

/// `L::Kernel`'s signatures, then [`Lesson::more_base_kernels`]'s.
fn lesson_kernels<L: Lesson>() -> Vec<(&'static str, &'static [Param])> {
    let mut all = signatures::<L::Kernel>();
    all.extend(L::more_base_kernels());
    all
}

const fn entry<L: Lesson>() -> Entry {
    Entry {
        name: L::NAME,
        about: L::ABOUT,
        capabilities: L::CAPABILITIES,
        drive: crate::runner::drive::<L>,
        kernels: lesson_kernels::<L>,
        rust_only_kernels: L::rust_only_base_kernels,
        cuda_c: L::cuda_c,
        sizes: sizes_view::<L>,
    }
}

/// Every lesson.
pub const ALL: [Entry; 11] = [
    entry::<crate::roofline::RooflineLesson>(),
    entry::<crate::fusion::FusionLesson>(),
    entry::<crate::vectorize::VectorizeLesson>(),
    entry::<crate::unroll::UnrollLesson>(),
    entry::<crate::fuse::FuseLesson>(),
    entry::<crate::specialize::SpecializeLesson>(),
    entry::<crate::harness::HarnessLesson>(),
    entry::<crate::conv2d::Conv2dLesson>(),
    entry::<crate::bandwidth::BandwidthLesson>(),
    entry::<crate::softmax::SoftmaxLesson>(),
    entry::<crate::gemm::GemmLesson>(),
];

/// The lesson named `name`.
pub fn find(name: &str) -> Option<&'static Entry> {
    ALL.iter().find(|l| l.name == name)
}
