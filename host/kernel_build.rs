//! The one cargo command that compiles the `kernels-gpu` crate to PTX, shared
//! by `host/build.rs` (the lesson's build) and `cargo xtask specialize-cost`
//! (which times the same build), so the two cannot drift apart. Included by
//! path (`#[path]`) into both; it depends on std only.

use std::path::Path;
use std::process::Command;

/// The nvptx64 target triple the kernels are built for.
pub const TARGET: &str = "nvptx64-nvidia-cuda";

/// Host-only settings a child cargo must not inherit: flags and wrappers
/// meant for x86-64, the outer build's target directory and jobserver.
pub const HOST_ONLY_ENV: &[&str] = &[
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "CARGO_BUILD_TARGET",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET_DIR",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_MAKEFLAGS",
    "CARGO_PRIMARY_PACKAGE",
];

// ANCHOR: kernel_build
/// `cargo rustc` building `kernels` (the kernels-gpu folder) as a release
/// cdylib for [`TARGET`] with `-Ctarget-cpu={arch}`, the base module's
/// flags ([`base_module_flags`]) and `-Zbuild-std=core` into `target_dir`:
/// `RUSTC_BOOTSTRAP=1` in the child only, the host's settings
/// ([`HOST_ONLY_ENV`]) removed. The caller adds stdio and any arguments for
/// rustc itself (after a `--`).
pub fn kernel_build(cargo: &str, kernels: &Path, arch: &str, target_dir: &Path) -> Command {
    kernel_build_with(cargo, kernels, arch, &base_module_flags(arch), target_dir)
}

/// The sm_75 (base) module's flags beyond `-Ctarget-cpu={arch}`: from
/// sm_75 on, the FP16 tensor-core kernel (`--cfg lab_fp16_mma`: `ldmatrix`
/// and f16 `mma.sync` m16n8k8 exist from compute capability 7.5); below
/// sm_80, where rustc's default PTX ISA is older than those instructions
/// (6.3 for sm_75), PTX ISA 6.5 (`+ptx65`, drivers of CUDA 11.0 and later),
/// where they begin. The other kernels' PTX is the same in 6.3 and 6.5 but
/// for the `.version` line and a `.noreturn` on the panic functions.
fn base_module_flags(arch: &str) -> String {
    let number: u32 = arch
        .trim_start_matches("sm_")
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap_or(0);
    match number {
        80.. => "--cfg lab_fp16_mma".into(),
        75.. => "-Ctarget-feature=+ptx65 --cfg lab_fp16_mma".into(),
        _ => String::new(),
    }
}

/// [`kernel_build`] with `rustflags` added after `-Ctarget-cpu` (the sm_80
/// module's `--cfg lab_tensor_cores`, for one).
pub fn kernel_build_with(
    cargo: &str,
    kernels: &Path,
    arch: &str,
    rustflags: &str,
    target_dir: &Path,
) -> Command {
    let mut child = Command::new(cargo);
    for var in HOST_ONLY_ENV {
        child.env_remove(var);
    }
    child
        .current_dir(kernels)
        .env("RUSTC_BOOTSTRAP", "1")
        .env(
            "CARGO_TARGET_NVPTX64_NVIDIA_CUDA_RUSTFLAGS",
            format!("-Ctarget-cpu={arch} {rustflags}").trim_end(),
        )
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .args([
            "rustc",
            "--lib",
            "--crate-type",
            "cdylib",
            "--release",
            "--target",
            TARGET,
        ])
        .arg("-Zbuild-std=core")
        .arg("--manifest-path")
        .arg(kernels.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target_dir);
    child
}
// ANCHOR_END: kernel_build
