//! Every error path's message and exit status, checked without a GPU: the
//! messages are what a learner reads, so a test fails if one regresses.

use cudarc::driver::DriverError;
use cudarc::driver::sys::CUresult;
use host::Error;
use host::error::exit;
use host::gpu::DeviceInfo;
use host::roofline::Sizes;

fn driver(code: CUresult) -> DriverError {
    DriverError(code)
}

/// The softmax megakernel's cooperative launch, failed with `code`, as the
/// softmax lesson reads it.
fn refused(code: CUresult) -> Error {
    Error::KernelFault {
        kernel: "softmax_retained".into(),
        source: driver(code),
    }
    .into_cooperative_refusal(4096, 256, 33_792)
}

#[test]
fn only_the_drivers_refusals_of_a_cooperative_launch_read_as_refusals() {
    for code in [
        CUresult::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
        CUresult::CUDA_ERROR_NOT_SUPPORTED,
        CUresult::CUDA_ERROR_NOT_PERMITTED,
    ] {
        match refused(code) {
            Error::CooperativeRefused {
                kernel,
                blocks,
                threads,
                shared_bytes,
                source,
            } => {
                assert_eq!(
                    (kernel.as_str(), blocks, threads, shared_bytes, source.0),
                    ("softmax_retained", 4096, 256, 33_792, code)
                );
            }
            other => panic!("{code:?} read as {other:?}"),
        }
    }
    // A fault in the kernel stays a fault, with the sanitizer's advice.
    let fault = refused(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS);
    assert!(matches!(fault, Error::KernelFault { .. }), "{fault:?}");
    assert_eq!(fault.exit_code(), exit::KERNEL_FAULT);
    assert!(fault.to_string().contains("compute-sanitizer"), "{fault}");
    // Any other error passes through unchanged.
    let other = Error::Size("too big".into()).into_cooperative_refusal(1, 1, 0);
    assert!(
        matches!(other, Error::Size(ref s) if s == "too big"),
        "{other:?}"
    );
}

#[test]
fn each_error_says_what_went_wrong_and_has_its_own_status() {
    let cases: Vec<(Error, &[&str], u8)> = vec![
        (
            Error::NoDriver,
            &["no NVIDIA driver found", "libcuda.so"],
            exit::NO_DRIVER,
        ),
        (
            Error::NoDevice {
                ordinal: 3,
                count: 1,
            },
            &["no CUDA device 3", "reports 1 device"],
            exit::NO_DEVICE,
        ),
        (
            Error::GpuTooOld {
                gpu: "Tesla P100".into(),
                cc: (6, 0),
                target: (7, 5),
            },
            &[
                "Tesla P100 has compute capability 6.0",
                "below the PTX target sm_75",
                "LAB_PTX_ARCH=sm_60",
            ],
            exit::PTX,
        ),
        (
            Error::PtxRejected {
                isa: "8.8".into(),
                target: "sm_90".into(),
                driver: "12.2".into(),
                source: driver(CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION),
            },
            &[
                "the driver (CUDA 12.2) refused",
                "ISA 8.8",
                "sm_90",
                "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
            ],
            exit::PTX,
        ),
        (
            Error::OutOfMemory {
                what: "the roofline lesson's buffers".into(),
                needed: 805_306_368 + 1_048_576,
                free: 536_870_912,
            },
            &[
                "needs 806354944 bytes",
                "769.0 MiB",
                "only 536870912 bytes (512.0 MiB) are free",
            ],
            exit::SIZE,
        ),
        (
            Error::KernelFault {
                kernel: "transpose_tiled".into(),
                source: driver(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS),
            },
            &[
                "kernel `transpose_tiled` failed",
                "CUDA_ERROR_ILLEGAL_ADDRESS",
                "cargo xtask sanitize",
            ],
            exit::KERNEL_FAULT,
        ),
        (
            Error::Driver {
                call: "cuMemcpyDtoHAsync",
                source: driver(CUresult::CUDA_ERROR_LAUNCH_FAILED),
            },
            &["cuMemcpyDtoHAsync failed", "CUDA_ERROR_LAUNCH_FAILED"],
            exit::DRIVER,
        ),
        (
            Error::NvrtcMissing { unloadable: None },
            &[
                "the NVRTC library could not be loaded: looked for libnvrtc.so, .so.13, .so.12 and .so.11 on LD_LIBRARY_PATH",
                "/usr/local/cuda/lib64",
                "pip's nvidia/cu13/lib and nvidia/cuda_nvrtc/lib",
                "(--compare, --asm)",
                "CUDA 12 or 13",
                "`pip install nvidia-cuda-nvrtc` for CUDA 13",
                "`pip install nvidia-cuda-nvrtc-cu12` for CUDA 12",
                "put the folder holding libnvrtc.so* on LD_LIBRARY_PATH",
            ],
            exit::TOOL,
        ),
        (
            Error::TimingBroken {
                kernel: "vector_add".into(),
                ms: 0.0,
            },
            &["timing of `vector_add` came back as 0 ms"],
            exit::KERNEL_FAULT,
        ),
        (
            refused(CUresult::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE),
            &[
                "the driver refused the cooperative launch of `softmax_retained` (4096 blocks of 256 threads, \
                 33792 bytes of shared memory each): CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
                "; the grid is more blocks than the GPU holds at once",
                "run the lesson on a GPU of its own",
            ],
            exit::COOPERATIVE_REFUSED,
        ),
        (
            refused(CUresult::CUDA_ERROR_NOT_SUPPORTED),
            &[
                "CUDA_ERROR_NOT_SUPPORTED",
                "; this GPU or driver does not support cooperative launches (CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 0)",
            ],
            exit::COOPERATIVE_REFUSED,
        ),
        (
            refused(CUresult::CUDA_ERROR_NOT_PERMITTED),
            &[
                "CUDA_ERROR_NOT_PERMITTED",
                "; the driver does not permit a cooperative launch in this context",
                "without MPS",
            ],
            exit::COOPERATIVE_REFUSED,
        ),
    ];
    let mut statuses = std::collections::BTreeSet::new();
    for (err, wants, status) in cases {
        let message = err.to_string();
        assert_eq!(message.lines().count(), 1, "one line: {message}");
        for want in wants {
            assert!(message.contains(want), "{message:?} lacks {want:?}");
        }
        assert_eq!(err.exit_code(), status, "{message}");
        statuses.insert(status);
    }
    // Distinct kinds of failure get distinct statuses (and none is 0, 2 or 3,
    // which mean success, usage and a failed check).
    assert_eq!(statuses.len(), 8);
    assert!(
        !statuses.contains(&0)
            && !statuses.contains(&exit::USAGE)
            && !statuses.contains(&exit::CHECK_FAILED)
    );
}

#[test]
fn the_memory_budget_counts_three_buffers_and_the_partials_streams_included() {
    let info = lab_tests::synthetic_device(60 << 20, 132);
    let s = Sizes::for_device(&info);
    // Three buffers of the bandwidth ceiling's 2 GiB (32 x the 60 MiB L2,
    // rounded up; longer than the placed kernels' 8192^2 floats), and one
    // partial sum per 256-thread block of the one-float4-a-thread dot:
    // (3 x 536,870,912 + 524,288) x 4 bytes. The synthetic device is an
    // H200 (compute capability 9.0), so the tensor-core ceiling's buffers
    // come on top: mma_peak's 132 x 32 blocks x 8 warps x 1024 floats,
    // wgmma_peak's 132 x 4 blocks x 2 warpgroups x 64 x 256 floats, and
    // cuBLAS's 8192^3 bf16 A and B and f32 D.
    let tensor = 132 * 32 * 8 * 1024 * 4 + 132 * 4 * 2 * 64 * 256 * 4 + 8192 * 8192 * (2 + 2 + 4);
    assert_eq!(s.device_bytes(), (3 * 536_870_912 + 524_288) * 4 + tensor);
    // A T4's 4 MiB L2 keeps the seed's 4096^2 for the placed kernels; the
    // streams take 128 MiB a buffer; the reduction's 65,536 partials are
    // the most; its compute capability, 7.5, has the FP16 tensor-core
    // ceiling: mma_peak_f16's 40 x 32 blocks x 8 warps x 1024 floats and
    // cuBLAS's 8192^3 f16 A and B and f32 D (no wgmma chains).
    let t4_info = DeviceInfo {
        l2_bytes: 4 << 20,
        sms: 40,
        compute_capability: (7, 5),
        ..info
    };
    let t4 = Sizes::for_device(&t4_info);
    let t4_tensor = 40 * 32 * 8 * 1024 * 4 + 8192 * 8192 * (2 + 2 + 4);
    assert_eq!(t4.device_bytes(), (3 * 33_554_432 + 65_536) * 4 + t4_tensor);
    // Below 7.5, none.
    let v100 = Sizes::for_device(&DeviceInfo {
        compute_capability: (7, 0),
        ..t4_info
    });
    assert_eq!(v100.device_bytes(), (3 * 33_554_432 + 65_536) * 4);
}

#[test]
fn a_missing_ncu_is_named_with_where_to_get_it() {
    if host::ncu::find_ncu().is_some() {
        eprintln!("skipped: this machine has ncu");
        return;
    }
    let err = host::ncu::profile(
        std::path::Path::new("/bin/true"),
        &[],
        host::ncu::CacheControl::Flush,
    )
    .unwrap_err();
    assert!(
        err.starts_with("ncu (Nsight Compute) is not on the PATH"),
        "{err}"
    );
    assert!(err.contains("CUDA toolkit"), "{err}");
    assert_eq!(host::Error::Tool(err).exit_code(), exit::TOOL);
}

#[test]
fn xtask_profiles_every_lesson_and_charts_those_that_draw() {
    let plotted: Vec<&str> = host::lessons::ALL
        .iter()
        .filter(|l| l.capabilities.plot)
        .map(|l| l.name)
        .collect();
    assert_eq!(xtask::PLOTTED, plotted.as_slice());
    let dir = std::path::Path::new("/t");
    let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        xtask::profile_args(args(&["fusion", "--json"]), dir),
        args(&["fusion", "--ncu", "--json"])
    );
    assert_eq!(
        xtask::profile_args(args(&["roofline"]), dir),
        args(&["roofline", "--ncu", "--plot", "/t/roofline.svg"])
    );
}

#[test]
fn xtask_knows_every_lesson_lab_runs_in_its_order() {
    let lab: Vec<&str> = host::lessons::ALL.iter().map(|l| l.name).collect();
    assert_eq!(xtask::LESSONS, lab.as_slice());
}
