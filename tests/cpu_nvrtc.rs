//! Finding NVRTC (no GPU needed): the folders searched and their order, and
//! a library found under CUDA 13's name alone (`libnvrtc.so.13`, what a
//! CUDA 13 runtime-only install ships; here a link to whatever NVRTC this
//! machine has) that compiles, in this process and in a fresh one whose
//! LD_LIBRARY_PATH holds only that folder.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use host::nvrtc::{LIBRARY_NAMES, Nvrtc, search_dirs};

/// A fresh empty folder under the temp dir, named for this test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lab-nvrtc-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The real NVRTC library this process loads (`cargo xtask test` provides
/// one), resolved to its file; `None` (after a line saying so) where NVRTC
/// is missing and this is not CI.
fn real_library() -> Option<PathBuf> {
    let nvrtc = match host::nvrtc::library() {
        Ok(nvrtc) => nvrtc,
        Err(e) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must run this test: {e}"
            );
            eprintln!("skipped: {e}");
            return None;
        }
    };
    let path = nvrtc.path();
    if path.is_absolute() {
        return Some(path.canonicalize().unwrap());
    }
    // A bare name the system loader resolved: find its file.
    let found = std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| Path::new(p).file_name() == Some(path.as_os_str()))
        .map(PathBuf::from);
    if found.is_none() {
        eprintln!("skipped: the NVRTC the loader found ({path:?}) is not in /proc/self/maps");
    }
    found
}

/// A folder holding only `libnvrtc.so.13`, a link to the real library.
fn cuda13_folder(name: &str, real: &Path) -> PathBuf {
    let dir = scratch(name);
    std::os::unix::fs::symlink(real, dir.join("libnvrtc.so.13")).unwrap();
    dir
}

const KERNEL: &str = "extern \"C\" __global__ void axpy(float a, const float* x, float* y, int n) {\n\
                      int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                      if (i < n) y[i] = a * x[i] + y[i];\n}\n";

#[test]
fn the_names_tried_cover_cuda_11_to_13_unversioned_first() {
    assert_eq!(
        LIBRARY_NAMES,
        [
            "libnvrtc.so",
            "libnvrtc.so.13",
            "libnvrtc.so.12",
            "libnvrtc.so.11.2",
            "libnvrtc.so.11"
        ]
    );
}

#[test]
fn the_search_starts_on_ld_library_path_then_the_toolkit_then_pip() {
    let root = scratch("search");
    let (a, b) = (root.join("a"), root.join("b"));
    let venv = root.join("venv");
    let cu13 = venv.join("lib/python3.12/site-packages/nvidia/cu13/lib");
    let cu12 = venv.join("lib/python3.9/site-packages/nvidia/cuda_nvrtc/lib");
    let cuda_home = root.join("cuda");
    for d in [&a, &b, &cu13, &cu12, &cuda_home.join("lib64")] {
        std::fs::create_dir_all(d).unwrap();
    }
    let ld = std::env::join_paths([&a, &root.join("missing"), &b]).unwrap();
    let env = |v: &str| -> Option<OsString> {
        match v {
            "LD_LIBRARY_PATH" => Some(ld.clone()),
            "VIRTUAL_ENV" => Some(venv.clone().into()),
            "CUDA_HOME" => Some(cuda_home.clone().into()),
            _ => None,
        }
    };
    let dirs = search_dirs(env);
    // Folders that do not exist are dropped; the rest keep their order,
    // the newer Python's wheel first.
    let pos = |d: &Path| dirs.iter().position(|x| x == d);
    assert_eq!(pos(&a), Some(0), "{dirs:?}");
    assert_eq!(pos(&b), Some(1), "{dirs:?}");
    assert_eq!(pos(&cuda_home.join("lib64")), Some(2), "{dirs:?}");
    assert!(pos(&cu13).unwrap() < pos(&cu12).unwrap(), "{dirs:?}");
    assert!(!dirs.contains(&root.join("missing")), "{dirs:?}");
    if Path::new("/usr/local/cuda/lib64").is_dir() {
        assert_eq!(pos(Path::new("/usr/local/cuda/lib64")), Some(3), "{dirs:?}");
    }
    // Listed twice, searched once.
    let twice = std::env::join_paths([&a, &a]).unwrap();
    let dirs = search_dirs(|v| (v == "LD_LIBRARY_PATH").then(|| twice.clone()));
    assert_eq!(dirs.iter().filter(|d| **d == a).count(), 1);
    std::fs::remove_dir_all(&root).ok();
}

#[test]
fn a_file_that_is_no_library_is_named_with_the_reason() {
    let dir = scratch("broken");
    let fake = dir.join("libnvrtc.so.13");
    std::fs::write(&fake, "not a library").unwrap();
    let why = Nvrtc::open(&fake).unwrap_err();
    assert!(why.contains(fake.to_str().unwrap()), "{why}");
    let err = host::Error::NvrtcMissing {
        unloadable: Some(why.clone()),
    };
    assert!(
        err.to_string()
            .starts_with(&format!("the NVRTC library could not be loaded (one was found but did not load: {why}): looked for")),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_library_named_only_libnvrtc_so_13_is_found_and_compiles() {
    let Some(real) = real_library() else {
        return;
    };
    let dir = cuda13_folder("cuda13", &real);
    let nvrtc = Nvrtc::find(std::slice::from_ref(&dir)).unwrap();
    assert_eq!(nvrtc.path(), dir.join("libnvrtc.so.13"));
    let (major, _) = nvrtc.version();
    assert!(major >= 11, "NVRTC {:?}", nvrtc.version());
    let ptx = nvrtc.compile(KERNEL, "axpy.cu", (7, 5)).unwrap();
    assert!(ptx.contains(".entry axpy("), "{ptx}");
    assert!(ptx.contains(".target sm_75"), "{ptx}");
    assert!(
        ptx.contains("fma.rn.f32"),
        "--fmad=true contracts a * x + y"
    );
    // A compile error carries NVRTC's log.
    let err = nvrtc
        .compile("__global__ void broken( {", "broken.cu", (7, 5))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("NVRTC: broken.cu did not compile (NVRTC_ERROR_COMPILATION, NVRTC "),
        "{err}"
    );
    assert!(err.contains("broken.cu(1)"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Set in the child process of the next test: print what NVRTC it found.
const CHILD: &str = "LAB_TEST_NVRTC_CHILD";

/// This test binary run again as a child, running only
/// [`a_fresh_process_finds_libnvrtc_so_13_and_compiles`] in child mode,
/// with `env` set and `removed` unset; its stdout.
fn child(env: &[(&str, &Path)], removed: &[&str]) -> String {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "a_fresh_process_finds_libnvrtc_so_13_and_compiles",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(CHILD, "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    for k in removed {
        cmd.env_remove(k);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}");
    stdout
}

#[test]
fn a_fresh_process_finds_libnvrtc_so_13_and_compiles() {
    if std::env::var_os(CHILD).is_some() {
        // The child: report the library found from this environment, and
        // compile with it (NVRTC must find its builtins library too).
        match host::nvrtc::library() {
            Ok(nvrtc) => println!("\nfound {}", nvrtc.path().display()),
            Err(e) => println!("\nmissing {e}"),
        }
        match host::nvrtc::compile(KERNEL, "axpy.cu", (9, 0)) {
            Ok(ptx) if ptx.contains(".entry axpy(") => println!("compiled"),
            Ok(ptx) => println!("no axpy in:\n{ptx}"),
            Err(e) => println!("did not compile: {e}"),
        }
        return;
    }
    let Some(real) = real_library() else {
        return;
    };
    // On LD_LIBRARY_PATH, alone there.
    let dir = cuda13_folder("child", &real);
    let stdout = child(&[("LD_LIBRARY_PATH", &dir)], &[]);
    let want = format!("found {}", dir.join("libnvrtc.so.13").display());
    assert!(
        stdout.lines().any(|l| l == want),
        "want {want:?} in:\n{stdout}"
    );
    assert!(stdout.lines().any(|l| l == "compiled"), "{stdout}");
    std::fs::remove_dir_all(&dir).ok();

    // In a virtualenv's pip wheel (CUDA 13's layout), with no
    // LD_LIBRARY_PATH at all: NVRTC's builtins are not on the loader's path.
    let venv = scratch("venv");
    let wheel = venv.join("lib/python3.12/site-packages/nvidia/cu13/lib");
    std::fs::create_dir_all(&wheel).unwrap();
    let real_dir = real.parent().unwrap();
    for entry in std::fs::read_dir(real_dir).unwrap() {
        let name = entry.unwrap().file_name();
        if name.to_string_lossy().starts_with("libnvrtc-builtins.so") {
            std::os::unix::fs::symlink(real_dir.join(&name), wheel.join(&name)).unwrap();
        }
    }
    std::fs::copy(&real, wheel.join("libnvrtc.so.13")).unwrap();
    let stdout = child(
        &[("VIRTUAL_ENV", &venv)],
        &["LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX"],
    );
    let want = format!("found {}", wheel.join("libnvrtc.so.13").display());
    // A toolkit in /usr/local/cuda comes before pip's wheels.
    let toolkit = LIBRARY_NAMES
        .iter()
        .any(|n| Path::new("/usr/local/cuda/lib64").join(n).exists());
    if !toolkit {
        assert!(
            stdout.lines().any(|l| l == want),
            "want {want:?} in:\n{stdout}"
        );
    }
    assert!(stdout.lines().any(|l| l == "compiled"), "{stdout}");
    std::fs::remove_dir_all(&venv).ok();
}
