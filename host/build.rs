//! The builder (the role rust-cuda's `cuda_builder` plays): compiles the
//! `kernels-gpu` crate for `nvptx64-nvidia-cuda` with rustc's own NVPTX
//! backend and leaves the PTX in `$OUT_DIR/kernels.ptx`, where
//! `host::ptx::PTX` embeds it with `include_str!`.
//!
//! It runs the same cargo that runs it (`$CARGO`) as a child, with:
//! - `RUSTC_BOOTSTRAP=1`, in the child's environment only: the kernel crate
//!   needs unstable features (`abi_ptx`, `asm_experimental_arch`, ...) and
//!   `-Zbuild-std=core` (no prebuilt `core` ships for nvptx64). The host
//!   crates never see it and build on stable Rust.
//! - `-Ctarget-cpu=$LAB_PTX_ARCH` (default `sm_75`, a T4: PTX ISA 6.5, which
//!   every GPU from a T4 to an H200 loads; the driver compiles it for the GPU
//!   at hand). Set `LAB_PTX_ARCH=sm_90` (or any `sm_XX`) to target a newer
//!   GPU only.
//! - a target directory of its own (`<target>/<profile>/ptx`): the outer
//!   build holds the lock on the profile directory's own files.
//! - the host's flags removed (RUSTFLAGS and the like), which are meant for
//!   x86-64, not the GPU.
//!
//! A kernel that fails to compile fails the host build with rustc's own
//! message (the child's stderr is passed through).

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The GPU architecture the PTX targets unless `LAB_PTX_ARCH` says otherwise.
const DEFAULT_PTX_ARCH: &str = "sm_75";

/// The architecture of the tensor-core module (`mma.sync`, `ldmatrix`,
/// `cp.async` need compute capability 8.0 and PTX ISA 7.0).
const TENSOR_CORE_ARCH: &str = "sm_80";

/// The architecture of the Hopper module (`wgmma` needs the
/// architecture-specific target `sm_90a` and PTX ISA 8.0; such PTX loads
/// on compute capability 9.0 only). The module asks for PTX ISA 8.3
/// (`+ptx83`, drivers of CUDA 12.3 and later), where the tensor-map proxy
/// fence the TMA kernel needs begins.
const HOPPER_ARCH: &str = "sm_90a";
#[path = "kernel_build.rs"]
mod kernel_build;
#[path = "src/launch_bounds.rs"]
#[allow(dead_code)]
mod launch_bounds;
use kernel_build::{TARGET, kernel_build, kernel_build_with};

fn main() {
    let manifest_dir =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let workspace = manifest_dir
        .parent()
        .expect("host/ sits in the workspace")
        .to_path_buf();
    let kernels = workspace.join("kernels-gpu");
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));

    println!("cargo:rerun-if-changed={}", kernels.join("src").display());
    println!(
        "cargo:rerun-if-changed={}",
        kernels.join("Cargo.toml").display()
    );
    println!(
        "cargo:rerun-if-changed={}",
        workspace.join("rust-toolchain.toml").display()
    );
    println!("cargo:rerun-if-env-changed=LAB_PTX_ARCH");

    let arch = env::var("LAB_PTX_ARCH").unwrap_or_else(|_| DEFAULT_PTX_ARCH.to_string());
    if !arch
        .strip_prefix("sm_")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric()))
    {
        fail(&format!(
            "LAB_PTX_ARCH={arch:?} is not a GPU architecture; use one like sm_75 or sm_90"
        ));
    }

    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    check_components(&rustc);

    // ANCHOR: run_kernel_build
    let target_dir = kernel_target_dir(&out_dir);
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut child = kernel_build(&cargo, &kernels, &arch, &target_dir);
    child
        // The child's stdout would be read as build-script directives.
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    let status = child
        .status()
        .unwrap_or_else(|e| fail(&format!("could not start cargo to build the kernels: {e}")));
    if !status.success() {
        fail(
            "the GPU kernels in kernels-gpu failed to compile for nvptx64 (rustc's errors are above)",
        );
    }
    // ANCHOR_END: run_kernel_build

    let ptx = target_dir
        .join(TARGET)
        .join("release")
        .join("kernels_gpu.ptx");
    // Copied to a new file and renamed over the old one, so a destination
    // that shares its inode with another checkout's (a hard-linked target
    // folder) is replaced, not written through.
    stage_ptx(&ptx, &out_dir.join("kernels.ptx"));

    // The sm_80 module: the same crate for compute capability 8.0 (PTX ISA
    // 7.0), with the tensor-core kernels (`--cfg lab_tensor_cores`); `lab`
    // loads it on GPUs that run it. Its own target folder, so the two
    // builds' flags do not rebuild `core` back and forth.
    let tc_dir = target_dir.with_file_name("ptx-sm80");
    build_module(
        &cargo,
        &kernels,
        TENSOR_CORE_ARCH,
        "--cfg lab_tensor_cores",
        &tc_dir,
        &out_dir.join("kernels_sm80.ptx"),
    );
    // The sm_90a module: the tensor-core kernels again, and the Hopper
    // kernels (`--cfg lab_hopper`), for compute capability 9.0, in PTX ISA
    // 8.3.
    let hopper_dir = target_dir.with_file_name("ptx-sm90a");
    build_module(
        &cargo,
        &kernels,
        HOPPER_ARCH,
        "-Ctarget-feature=+ptx83 --cfg lab_tensor_cores --cfg lab_hopper",
        &hopper_dir,
        &out_dir.join("kernels_sm90a.ptx"),
    );

    let version = Command::new(&rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "rustc (version unknown)".into());
    println!("cargo:rustc-env=LAB_RUSTC_VERSION={version}");
    // The commit the binary was built from, for the records it writes.
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(&workspace)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .current_dir(&workspace)
        .output()
        .ok()
        .is_some_and(|o| !o.stdout.is_empty());
    println!(
        "cargo:rustc-env=LAB_GIT_COMMIT={commit}{}",
        if dirty { "-dirty" } else { "" }
    );
    println!(
        "cargo:rerun-if-changed={}",
        workspace.join(".git/HEAD").display()
    );
    println!(
        "cargo:rerun-if-changed={}",
        workspace.join(".git/index").display()
    );
    println!("cargo:rustc-env=LAB_PTX_ARCH={arch}");
}

/// Builds the kernel crate for `arch` with `rustflags` into `dir` and stages
/// its PTX at `dest` ([`stage_ptx`]); stops the build with rustc's errors
/// where it fails.
fn build_module(cargo: &str, kernels: &Path, arch: &str, rustflags: &str, dir: &Path, dest: &Path) {
    let mut child = kernel_build_with(cargo, kernels, arch, rustflags, dir);
    child.stdout(Stdio::null()).stderr(Stdio::inherit());
    let status = child.status().unwrap_or_else(|e| {
        fail(&format!(
            "could not start cargo to build the {arch} kernels: {e}"
        ))
    });
    if !status.success() {
        fail(&format!(
            "the GPU kernels in kernels-gpu failed to compile for {arch} ({rustflags}; rustc's errors are above)"
        ));
    }
    stage_ptx(
        &dir.join(TARGET).join("release").join("kernels_gpu.ptx"),
        dest,
    );
}

/// Reads the PTX the kernel build left at `built`, writes the kernels'
/// declared launch bounds into it (`launch_bounds::apply`) and puts it at
/// `dest`: written to a new file and renamed over the old one, so a
/// destination that shares its inode with another checkout's (a
/// hard-linked target folder) is replaced, not written through.
fn stage_ptx(built: &Path, dest: &Path) {
    let ptx = std::fs::read_to_string(built).unwrap_or_else(|e| {
        fail(&format!(
            "the kernel build left no PTX at {}: {e}",
            built.display()
        ))
    });
    let ptx =
        launch_bounds::apply(&ptx).unwrap_or_else(|e| fail(&format!("{}: {e}", built.display())));
    let staged = dest.with_extension("ptx.new");
    std::fs::write(&staged, ptx)
        .and_then(|_| std::fs::rename(&staged, dest))
        .unwrap_or_else(|e| fail(&format!("could not write {}: {e}", dest.display())));
}

/// Stops the build with one line that says what to do.
fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1);
}

/// The kernel build needs two toolchain components that rustup does not add
/// by itself to a toolchain already installed: `rust-src` (to rebuild `core`)
/// and `llvm-bitcode-linker` (rustc's linker for nvptx64). Name the command
/// that adds them rather than let the child fail with a long error.
fn check_components(rustc: &str) {
    let sysroot = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| PathBuf::from(s.trim()));
    let Some(sysroot) = sysroot else { return };
    let rustlib = sysroot.join("lib").join("rustlib");
    let has_src = rustlib.join("src/rust/library/core").is_dir();
    let has_linker = std::fs::read_dir(&rustlib).ok().is_some_and(|entries| {
        entries.flatten().any(|e| {
            e.path()
                .join("bin/self-contained/llvm-bitcode-linker")
                .exists()
                || e.path().join("bin/llvm-bitcode-linker").exists()
        })
    });
    if !has_src || !has_linker {
        fail(
            "the toolchain lacks rust-src or llvm-bitcode-linker, which the GPU kernels need; \
             run `rustup component add rust-src llvm-tools llvm-bitcode-linker` in the repository \
             (`cargo xtask test` and `cargo xtask run` do this first)",
        );
    }
}

/// A directory for the kernel build that stays put across host rebuilds:
/// `<target>/<profile>/ptx`, three levels above `OUT_DIR`
/// (`<target>/<profile>/build/host-<hash>/out`). Falls back to `OUT_DIR`.
fn kernel_target_dir(out_dir: &Path) -> PathBuf {
    match out_dir.ancestors().nth(3) {
        Some(profile_dir)
            if out_dir
                .ancestors()
                .nth(2)
                .is_some_and(|b| b.ends_with("build")) =>
        {
            profile_dir.join("ptx")
        }
        _ => out_dir.join("ptx"),
    }
}
