//! CPU-only tests of the GEMM lesson: the reference on values checked by
//! hand; the error bound and the sampled check passing a right output and
//! failing wrong ones (an index off by one, a skipped tile, an element never
//! written); the sizes on a T4 and an H200; the launch shapes covering the
//! output; the kernels in the Rust PTX. They run everywhere, with no GPU.

use host::gemm::{
    Kernel, SAMPLES, SMALL, Sizes, bound, bound_for_k, bytes, check_samples, flop, reference,
    sample_positions,
};
use host::kernels::KernelId;
use host::ptx::{PTX, entries, entry_body};
use kernels_gpu::gemm::*;

/// A, B, C of an m x n x k GEMM and the output a right kernel writes (the
/// f64 reference rounded to f32).
fn case(m: usize, n: usize, k: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>) {
    let [sa, sb, sc] = reference::STREAMS;
    let (a, b, c) = (
        reference::matrix(m * k, sa),
        reference::matrix(k * n, sb),
        reference::matrix(m * n, sc),
    );
    let d = (0..m * n)
        .map(|i| reference::output(&a, &b, &c, n, k, i / n, i % n).0 as f32)
        .collect();
    (a, b, c, d)
}

/// Every kernel of the set `K` is an entry of `module` (named `name` in a
/// failure) with the parameters its launch is checked against.
fn assert_signatures<K: KernelId>(module: &str, name: &str) {
    let kernels: Vec<_> = K::ALL.iter().map(|k| (k.symbol(), k.params())).collect();
    let faults = lab_tests::signature_faults(&kernels, module, name);
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

#[test]
fn the_reference_on_values_checked_by_hand() {
    // A = [1 2; 3 4], B = [0.5 -1; 0.25 2], C = [1 0; 0 -1]:
    // A B = [1 3; 2.5 5], so 0.75 A B - 0.5 C = [0.25 2.25; 1.875 4.25].
    let (a, b, c) = (
        [1.0, 2.0, 3.0, 4.0],
        [0.5, -1.0, 0.25, 2.0],
        [1.0, 0.0, 0.0, -1.0],
    );
    let got: Vec<f64> = (0..4)
        .map(|i| reference::output(&a, &b, &c, 2, 2, i / 2, i % 2).0)
        .collect();
    assert_eq!(got, [0.25, 2.25, 1.875, 4.25]);
    // The magnitudes: |1 * 0.5| + |2 * 0.25| = 1 for D[0][0].
    assert_eq!(reference::output(&a, &b, &c, 2, 2, 0, 0).1, 1.0);
}

#[test]
fn the_bound_grows_with_k_and_the_magnitudes() {
    assert!(bound(4096, 100.0, 0.5) > bound(1024, 100.0, 0.5));
    assert!(bound(1024, 200.0, 0.5) > bound(1024, 100.0, 0.5));
    // At k = 4096 with every magnitude at 1: (4098) 2^-24 (0.75 * 4096 + 0.5).
    let want = 4098.0 * (f32::EPSILON as f64 / 2.0) * (0.75 * 4096.0 + 0.5);
    assert!((bound_for_k(4096) - want).abs() < 1e-12);
    // The a-priori bound is loose (every magnitude at 1): 0.75 at k = 4096,
    // against outputs of order 16. It catches gross errors; the per-element
    // bounds of the samples, the FP32 kernels' equality with the naive
    // kernel and the tensor-core kernel's exact integer check catch the rest.
    assert!(bound_for_k(4096) < 1.0);
}

#[test]
fn the_sampled_check_passes_a_right_output() {
    let (m, n, k) = (200, 150, 300);
    let (a, b, c, d) = case(m, n, k);
    assert_eq!(check_samples("right", &d, &a, &b, &c, (m, n, k)), None);
    let (m, n, k) = SMALL;
    let (a, b, c, d) = case(m, n, k);
    assert_eq!(check_samples("right", &d, &a, &b, &c, SMALL), None);
}

/// The planted bug: a kernel that reads B one column to the right. The
/// fills do not repeat, so the products change and the sampled check names
/// an element.
#[test]
fn the_sampled_check_fails_an_index_off_by_one() {
    let (m, n, k) = (200, 150, 300);
    let (a, b, c, _) = case(m, n, k);
    let b_wide = reference::matrix(k * n + 1, reference::STREAMS[1]);
    let off_by_one: Vec<f32> = (0..m * n)
        .map(|i| {
            let (row, col) = (i / n, i % n);
            let sum: f64 = (0..k)
                .map(|p| f64::from(a[row * k + p]) * f64::from(b_wide[p * n + col + 1]))
                .sum();
            (0.75 * sum - 0.5 * f64::from(c[i])) as f32
        })
        .collect();
    let failure =
        check_samples("off_by_one", &off_by_one, &a, &b, &c, (m, n, k)).expect("must fail");
    assert!(
        failure.to_string().contains("D[0][0]"),
        "the first corner is checked first: {failure}"
    );
}

/// A kernel that skips its last tile of k leaves every output short by
/// those products; one that never writes an element leaves the poison.
#[test]
fn the_sampled_check_fails_a_skipped_tile_and_an_unwritten_element() {
    let (m, n, k) = (130, 140, 96);
    let (a, b, c, right) = case(m, n, k);
    let short: Vec<f32> = (0..m * n)
        .map(|i| {
            let (row, col) = (i / n, i % n);
            let sum: f64 = (0..k - 32)
                .map(|p| f64::from(a[row * k + p]) * f64::from(b[p * n + col]))
                .sum();
            (0.75 * sum - 0.5 * f64::from(c[i])) as f32
        })
        .collect();
    assert!(check_samples("short", &short, &a, &b, &c, (m, n, k)).is_some());
    let mut unwritten = right.clone();
    unwritten[(m - 1) * n + n - 1] = f32::NAN;
    let failure =
        check_samples("unwritten", &unwritten, &a, &b, &c, (m, n, k)).expect("a NaN must fail");
    assert!(
        failure
            .to_string()
            .contains(&format!("D[{}][{}]", m - 1, n - 1)),
        "{failure}"
    );
}

#[test]
fn the_samples_hold_the_corners_and_stay_inside() {
    let at = sample_positions(4095, 4095);
    assert_eq!(at.len(), SAMPLES);
    for corner in [(0, 0), (0, 4094), (4094, 0), (4094, 4094)] {
        assert!(at.contains(&corner), "{corner:?}");
    }
    assert!(at.iter().all(|&(r, c)| r < 4095 && c < 4095));
    assert_eq!(sample_positions(2, 3).len(), 6);
}

#[test]
fn sizes_on_a_t4_and_an_h200() {
    let h200 = Sizes::new(&lab_tests::profile("H200").info(), false);
    assert_eq!(h200.sides, [1024, 2048, 4095, 4096, 8192]);
    assert_eq!(
        host::sizes::LessonSizes::device_bytes(&h200),
        host::gemm::MATRICES * 8192 * 8192 * 4
    );
    assert_eq!(h200.compared, 4096);
    let t4 = Sizes::new(&lab_tests::profile("T4").info(), false);
    assert_eq!(
        t4.sides,
        [1024, 2048, 4095, 4096, 8192],
        "2.5 GiB of matrices fits a quarter of 16 GB"
    );
    let quick = Sizes::new(&lab_tests::profile("H200").info(), true);
    assert_eq!(quick.sides, [128]);
}

#[test]
fn every_launch_covers_its_output_with_no_idle_block() {
    for (m, n) in [(SMALL.0, SMALL.1), (4095, 4095), (8192, 8192), (1, 1)] {
        for &kernel in Kernel::ALL {
            let cfg = kernel.launch_config(m, n);
            let (per_x, per_y) = match kernel {
                Kernel::Naive => (NAIVE_BLOCK.0, NAIVE_BLOCK.1),
                Kernel::Tiled => (TILE, TILE),
                Kernel::Regblock1d => (R1_BLOCK_N, R1_BLOCK_M),
                Kernel::Regblock | Kernel::Vectorized | Kernel::Warptiled => (BLOCK_N, BLOCK_M),
            };
            let (gx, gy) = (cfg.grid_dim.0 as usize, cfg.grid_dim.1 as usize);
            assert!(
                gx * per_x as usize >= n && gy * per_y as usize >= m,
                "{kernel:?} at {m} x {n}"
            );
            assert!(
                (gx - 1) * (per_x as usize) < n && (gy - 1) * (per_y as usize) < m,
                "{kernel:?} at {m} x {n}"
            );
        }
    }
}

#[test]
fn the_counts() {
    assert_eq!(flop(2, 3, 4), 48.0);
    assert_eq!(bytes(2, 3, 4), ((8 + 12 + 12) * 4) as f64);
}

#[test]
fn gemm_naive_walks_a_row_and_a_column_by_one_stride() {
    // dot_strided: the unrolled loop's B addresses are one add of the same
    // stride apart. Indexed as b[p * n + col], LLVM kept a multiple of the
    // stride per unrolled step (4n, 8n, 12n, 16n), and the kernel took
    // 1.08 of its twin's time.
    let body = entry_body(PTX, Kernel::Naive.symbol()).expect("an entry has a body");
    let loops = lab_tests::loops(body);
    let main = loops.first().unwrap_or_else(|| panic!("a k loop:\n{body}"));
    assert!(
        main.matches("ld.global.nc").count() >= 8,
        "the first loop is the unrolled one:\n{main}"
    );
    assert_eq!(lab_tests::add_strides(main).len(), 1, "one stride:\n{main}");
}

#[test]
fn every_kernel_is_in_the_ptx_with_its_fmas() {
    for &kernel in Kernel::ALL {
        assert!(entries(PTX).contains(&kernel.symbol()), "{kernel:?}");
        let body = entry_body(PTX, kernel.symbol()).expect("an entry has a body");
        assert!(body.contains("st.global"), "{kernel:?}");
        assert!(
            body.contains("ld.global.nc"),
            "{kernel:?}: inputs on the read-only path"
        );
    }
    // The register-blocked kernel's step is written out in full: BLOCK_K x
    // THREAD_M x THREAD_N FMAs, plus one a thread output in the epilogue.
    for symbol in ["gemm_regblock", "gemm_vectorized"] {
        let body = entry_body(PTX, symbol).expect("an entry has a body");
        let fmas = body
            .lines()
            .filter(|l| l.trim_start().starts_with("fma.rn.f32"))
            .count();
        let want = (BLOCK_K * THREAD_M * THREAD_N + THREAD_M * THREAD_N) as usize;
        assert_eq!(fmas, want, "{symbol}'s FMAs");
    }
    // The 1D register-blocked kernel's step too: R1_BLOCK_K x R1_THREAD_M
    // FMAs, one a thread output in the epilogue; a step reads one B value
    // and R1_THREAD_M A values a k, and stores one element of each tile.
    let body = entry_body(PTX, "gemm_regblock_1d").expect("an entry has a body");
    let count = |what: &str| {
        body.lines()
            .filter(|l| l.trim_start().starts_with(what))
            .count()
    };
    assert_eq!(
        count("fma.rn.f32"),
        (R1_BLOCK_K * R1_THREAD_M + R1_THREAD_M) as usize,
        "gemm_regblock_1d's FMAs"
    );
    assert_eq!(
        count("ld.shared.f32"),
        (R1_BLOCK_K * (R1_THREAD_M + 1)) as usize,
        "gemm_regblock_1d's shared reads"
    );
    assert_eq!(count("st.shared.f32"), 2, "gemm_regblock_1d's tile stores");
    assert_eq!(
        count("bar.sync"),
        2,
        "gemm_regblock_1d's two barriers a step"
    );
    // The vectorized kernel moves its tiles in 16-byte accesses: one
    // float4 of each tile from global memory a step (and the scalar
    // fallback), the B tile stored as one, and 4 float4 reads a k.
    let body = entry_body(PTX, "gemm_vectorized").expect("an entry has a body");
    let count = |what: &str| {
        body.lines()
            .filter(|l| l.trim_start().starts_with(what))
            .count()
    };
    assert_eq!(
        count("ld.global.nc.v4.f32"),
        2,
        "gemm_vectorized's float4 loads"
    );
    assert_eq!(
        count("st.shared.v4.f32"),
        1,
        "gemm_vectorized's float4 store of B"
    );
    assert_eq!(
        count("ld.shared.v4.f32"),
        4 * BLOCK_K as usize,
        "gemm_vectorized's float4 reads"
    );
    // The warp-tiled kernel's step appears twice (with the next step's
    // loads in flight, and the last step without), its loads twice (the
    // first step's before the loop, the next step's inside it), and one
    // barrier a step after the first.
    let body = entry_body(PTX, "gemm_warptiled").expect("an entry has a body");
    let count = |what: &str| {
        body.lines()
            .filter(|l| l.trim_start().starts_with(what))
            .count()
    };
    let step_fmas = (BLOCK_K * THREAD_M * THREAD_N) as usize;
    assert_eq!(
        count("fma.rn.f32"),
        2 * step_fmas + (THREAD_M * THREAD_N) as usize,
        "gemm_warptiled's FMAs"
    );
    assert_eq!(
        count("ld.global.nc.v4.f32"),
        4,
        "gemm_warptiled's float4 loads"
    );
    assert_eq!(
        count("st.shared.v4.f32"),
        2,
        "gemm_warptiled's float4 stores of B"
    );
    assert_eq!(
        count("ld.shared.v4.f32"),
        2 * 4 * BLOCK_K as usize,
        "gemm_warptiled's float4 reads"
    );
    assert_eq!(
        count("bar.sync"),
        2,
        "gemm_warptiled's barriers: the first step's, then one a step"
    );
    // The tiled kernels reach shared memory directly.
    for symbol in ["gemm_tiled", "gemm_regblock"] {
        let body = entry_body(PTX, symbol).expect("an entry has a body");
        assert!(
            body.contains("ld.shared.f32") && body.contains("st.shared.f32"),
            "{symbol}"
        );
    }
}

/// The warp-tiled kernel's launch bounds reach its PTX entry (and no other
/// FP32 kernel declares any), and ptxas holds it to the 128 registers two
/// blocks of 256 threads an SM allow, with no spill, at sm_75 and sm_90
/// (skipped, saying so, where no ptxas is found outside CI).
#[test]
fn the_warp_tiled_kernel_keeps_two_blocks_an_sm() {
    let header = |symbol: &str| {
        let at = PTX.find(&format!(".entry {symbol}(")).expect("the entry");
        let open = at + PTX[at..].find('{').expect("a body");
        PTX[at..open].to_string()
    };
    let bounds = format!(".maxntid {REG_THREADS}, 1, 1\n.minnctapersm {WARP_MIN_BLOCKS}\n");
    assert!(
        header("gemm_warptiled").ends_with(&bounds),
        "{}",
        header("gemm_warptiled")
    );
    for &kernel in Kernel::ALL.iter().filter(|&&k| k != Kernel::Warptiled) {
        assert!(!header(kernel.symbol()).contains(".maxntid"), "{kernel:?}");
    }
    let limit = 65536 / (REG_THREADS * WARP_MIN_BLOCKS);
    let Some(reports) =
        lab_tests::ptxas_reports(PTX, "kernels", &["sm_75", "sm_90"], &["gemm_warptiled"])
    else {
        return;
    };
    for (arch, symbol, report) in reports {
        assert!(
            report.contains("0 bytes spill stores, 0 bytes spill loads"),
            "{arch} {symbol}: {report}"
        );
        let registers: u32 = report
            .split("Used ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|r| r.parse().ok())
            .unwrap_or_else(|| panic!("{arch} {symbol}: no register count in {report}"));
        assert!(
            registers <= limit,
            "{arch} {symbol}: {registers} registers, over {limit}"
        );
    }
}

// ---- the FP16 tensor-core kernel (the sm_75 module) -----------------------

/// Whether the base module was built for sm_75 or later (`LAB_PTX_ARCH`),
/// where `host/kernel_build.rs` compiles the f16 kernel in.
fn f16_kernel_built() -> bool {
    host::ptx::parse_sm(host::ptx::PTX_ARCH).is_some_and(|built| built >= (7, 5))
}

/// The sm_75 module is PTX ISA 6.5 (where `ldmatrix` and f16 `mma.sync`
/// m16n8k8 begin) and exports `gemm_f16_mma` with the parameters its launch
/// is checked against; its body has, per step of TC_BLOCK_K, 2 m16n8k8 for
/// each of the 16 `mma` tiles per 16 of k, 4 `ldmatrix.x4` and 4
/// `ldmatrix.x2.trans` per 16 of k, no `cp.async` (sm_75 has none), and the
/// 16-byte loads and shared stores of each thread's 4 chunks, in the
/// prologue and in the loop. The sm_80 and sm_90a modules have no copy.
#[test]
fn the_sm75_module_holds_the_f16_kernel_as_written() {
    use host::gemm::F16Kernel;
    use host::ptx::{PTX_SM80, PTX_SM90A};
    if !f16_kernel_built() {
        assert!(
            !entries(PTX).contains(&"gemm_f16_mma"),
            "a build below sm_75 leaves the f16 kernel out"
        );
        return;
    }
    if std::env::var("LAB_PTX_ARCH").is_err() {
        assert!(
            PTX.contains(".version 6.5") && PTX.contains(".target sm_75"),
            "the sm_75 module's header"
        );
    }
    assert_signatures::<F16Kernel>(PTX, "the sm_75 module");
    for module in [PTX_SM80, PTX_SM90A] {
        assert!(
            !entries(module).contains(&"gemm_f16_mma"),
            "only the sm_75 module has the f16 kernel"
        );
    }
    let body = entry_body(PTX, "gemm_f16_mma").expect("an entry has a body");
    let count = |what: &str| {
        body.lines()
            .filter(|l| l.trim_start().starts_with(what))
            .count()
    };
    let k16_steps = (TC_BLOCK_K / 16) as usize;
    assert_eq!(
        count("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32"),
        2 * 16 * k16_steps
    );
    assert_eq!(count("mma.sync.aligned.m16n8k16"), 0);
    assert_eq!(
        count("ldmatrix.sync.aligned.m8n8.x4.shared.b16"),
        4 * k16_steps
    );
    assert_eq!(
        count("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16"),
        4 * k16_steps
    );
    assert_eq!(body.matches("cp.async").count(), 0, "no cp.async on sm_75");
    // 2 chunks of A and 2 of B a thread, fetched and stored before the
    // loop and again in it.
    assert_eq!(count("ld.global.nc.v4.f32"), 2 * 4);
    assert_eq!(count("st.shared.v4.f32"), 2 * 4);
    assert_eq!(
        body.matches("bar.sync").count(),
        2,
        "one barrier after the prologue, one a step"
    );
    assert!(!body.contains(".local"), "no local memory");
}

/// The f16 kernel's shared stages hold it to one block an SM on a T4
/// (compute capability 7.5: 64 KiB of shared memory an SM), whatever its
/// launch bounds ask, and let two blocks run on 8.0 and 9.0.
#[test]
fn the_f16_kernel_fits_one_block_a_t4_sm_and_two_elsewhere() {
    let block = (TC_STAGES * TC_STAGE_BYTES) as usize;
    let blocks = |cc| lab_tests::per_sm_limits(cc).2 * 1024 / block;
    assert_eq!(blocks((7, 5)), 1);
    assert!(blocks((8, 0)) >= F16_MIN_BLOCKS as usize && blocks((9, 0)) >= F16_MIN_BLOCKS as usize);
}

/// ptxas assembles the f16 kernel for sm_75 and sm_90 with no spill
/// (skipped, saying so, where no ptxas is found outside CI).
#[test]
fn the_f16_kernel_assembles_without_spills() {
    if !f16_kernel_built() {
        return;
    }
    let Some(reports) =
        lab_tests::ptxas_reports(PTX, "kernels", &["sm_75", "sm_90"], &["gemm_f16_mma"])
    else {
        return;
    };
    for (arch, symbol, report) in reports {
        assert!(
            report.contains("0 bytes spill stores, 0 bytes spill loads"),
            "{arch} {symbol}: {report}"
        );
    }
}

// ---- the tensor-core kernel (the sm_80 module) ----------------------------

/// The sm_80 module is PTX ISA 7.0 for sm_80, exports the tensor-core
/// kernel with the parameters its launch is checked against, and the
/// device layer's instructions appear in it as written: per step of
/// TC_BLOCK_K, 2 x 16 `mma.sync` (4 x 4 tiles a warp, k in 16s), 4
/// `ldmatrix.x4` for A and 4 `ldmatrix.x2.trans` for B per 16 of k.
#[test]
fn the_sm80_module_holds_the_tensor_core_instructions_as_written() {
    use host::gemm::TcKernel;
    use host::ptx::PTX_SM80;
    assert!(
        PTX_SM80.contains(".version 7.0") && PTX_SM80.contains(".target sm_80"),
        "the sm_80 module's header"
    );
    assert_signatures::<TcKernel>(PTX_SM80, "the sm_80 module");
    assert!(
        !entries(PTX).contains(&"gemm_bf16_mma"),
        "the sm_75 module has no tensor-core kernel"
    );
    let k16_steps = (TC_BLOCK_K / 16) as usize;
    for (symbol, x2_trans_per_k16, x4_trans_per_k16, copies, wait) in [
        // Two stages: the first copy before the loop, the next inside it,
        // each thread 2 chunks of A and 2 of B; waits for all but 1 group.
        ("gemm_bf16_mma", 4, 0, 2 * 4, "cp.async.wait_group 1"),
        // TC_PIPE_STAGES: the prologue's TC_PIPE_STAGES - 1 copies (the loop
        // unrolled) and the loop's one; waits for all but TC_PIPE_STAGES - 2.
        (
            "gemm_bf16_pipelined",
            0,
            2,
            TC_PIPE_STAGES as usize * 4,
            "cp.async.wait_group 2",
        ),
    ] {
        let body = entry_body(PTX_SM80, symbol).expect("an entry has a body");
        let count = |what: &str| {
            body.lines()
                .filter(|l| l.trim_start().starts_with(what))
                .count()
        };
        assert_eq!(
            count("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
            16 * k16_steps,
            "{symbol}"
        );
        assert_eq!(
            count("ldmatrix.sync.aligned.m8n8.x4.shared.b16"),
            4 * k16_steps,
            "{symbol}"
        );
        assert_eq!(
            count("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16"),
            x2_trans_per_k16 * k16_steps,
            "{symbol}"
        );
        assert_eq!(
            count("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"),
            x4_trans_per_k16 * k16_steps,
            "{symbol}"
        );
        assert_eq!(count("cp.async.cg.shared.global"), copies, "{symbol}");
        assert!(
            count("cp.async.commit_group") >= 2
                && count(wait) == 1
                && count("cp.async.wait_group 0") == 1,
            "{symbol}"
        );
        assert!(!body.contains(".local"), "{symbol}: no local memory");
    }
}

/// The swizzled kernels (`gemm_bf16_swizzled` and `_wide`) and their twins
/// (NVRTC's PTX for 9.0) hold the instructions of their shapes as written,
/// twice (the main loop with guarded copies and without): per 16 of k, 32
/// `mma.sync` (4 x 8 tiles a warp), 4 `ldmatrix.x4` for A and 4
/// `ldmatrix.x4.trans` for B, the fragments loaded once before the loop and
/// once per 16 of k inside it; `STAGES - 1` stages copied before the loop
/// and one inside, (128 + BN) x BK / 8 / threads chunks a thread a stage,
/// in one instance with a source size (zero fill) and in the other
/// without; two waits for all but `STAGES - 2` groups (before the loop, and
/// before the step's last 16 of k) and two barriers; no local memory.
#[test]
fn the_swizzled_kernels_and_their_twins_hold_their_instructions_as_written() {
    let twin = lab_tests::twin_ptx_on_cpu::<host::gemm::GemmLesson>((9, 0))
        .expect("NVRTC compiled for 9.0");
    for (symbol, bn, bk, threads, stages, chunks) in [
        (
            "gemm_bf16_swizzled",
            SW_BLOCK_N,
            SW_BLOCK_K,
            SW_THREADS,
            SW_STAGES,
            8,
        ),
        (
            "gemm_bf16_swizzled_wide",
            SWW_BLOCK_N,
            SWW_BLOCK_K,
            SWW_THREADS,
            SWW_STAGES,
            12,
        ),
    ] {
        let k16 = (bk / 16) as usize;
        assert_eq!(
            ((SW_BLOCK_M + bn) * bk / 8 / threads) as usize,
            chunks,
            "{symbol}"
        );
        let wait = format!("cp.async.wait_group {}", stages - 2);
        for (side, ptx) in [("Rust", host::ptx::PTX_SM80), ("the twin", twin.as_str())] {
            let body = entry_body(ptx, symbol).expect("an entry has a body");
            let count = |what: &str| {
                body.lines()
                    .filter(|l| l.trim_start().starts_with(what))
                    .count()
            };
            assert_eq!(
                count("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
                2 * 32 * k16,
                "{symbol}, {side}"
            );
            assert_eq!(
                count("ldmatrix.sync.aligned.m8n8.x4.shared.b16"),
                2 * 4 * (k16 + 1),
                "{symbol}, {side}"
            );
            assert_eq!(
                count("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"),
                2 * 4 * (k16 + 1),
                "{symbol}, {side}"
            );
            assert_eq!(
                count("ldmatrix.sync.aligned.m8n8.x2"),
                0,
                "{symbol}, {side}"
            );
            let copies = stages as usize * chunks;
            assert_eq!(
                count("cp.async.cg.shared.global"),
                2 * copies,
                "{symbol}, {side}"
            );
            let whole = body
                .lines()
                .filter(|l| {
                    l.trim_start().starts_with("cp.async.cg.shared.global")
                        && l.trim_end().ends_with("], 16;")
                })
                .count();
            assert_eq!(
                whole, copies,
                "{symbol}, {side}: the unguarded instance's copies have no source size"
            );
            assert_eq!(
                (count(&wait), count("cp.async.wait_group 0")),
                (4, 2),
                "{symbol}, {side}"
            );
            assert_eq!(count("bar.sync"), 4, "{symbol}, {side}");
            assert!(
                !body.contains(".local"),
                "{symbol}, {side}: no local memory"
            );
        }
    }
}

/// The wide swizzled kernel is refused, with the bytes it needs and the
/// GPU's limit, where a block may not opt in to `SWW_BYTES` of shared
/// memory (compute capability 8.6 and 8.9: 99 KiB), and runs where it may
/// (8.0: 163 KiB; 9.0: 227 KiB).
#[test]
fn the_wide_swizzled_kernel_is_refused_where_a_block_cannot_hold_its_stages() {
    use host::gemm::wide_refusal;
    let why = wide_refusal("NVIDIA GeForce RTX 4090", 99 * 1024).expect("99 KiB is too little");
    assert!(
        why.contains(&SWW_BYTES.to_string()) && why.contains("101376") && why.contains("RTX 4090"),
        "{why}"
    );
    assert_eq!(SWW_BYTES, 144 * 1024);
    assert!(wide_refusal("GPU", SWW_BYTES as usize - 1).is_some());
    for optin in [SWW_BYTES as usize, 163 * 1024, 227 * 1024] {
        assert_eq!(wide_refusal("GPU", optin), None, "{optin}");
    }
}

/// `sw_offset` places every 16-byte chunk of a tile once, inside the tile;
/// the 8 rows of one `ldmatrix` phase at one chunk land in 8 different
/// 16-byte bank groups (a bank group is the offset / 16 modulo 8); and the
/// 32 consecutive chunks one warp's `cp.async` writes cover each group 4
/// times. Padded rows would fail the first check's byte count; the
/// unswizzled layout (`chunk` as is) fails the second for A's 4-chunk rows
/// and B's 16-chunk rows alike.
#[test]
fn the_swizzled_layout_is_a_conflict_free_permutation() {
    let unswizzled = |row: u32, chunk: u32, width: u32| (row * width + chunk) * 16;
    for (tile, rows, width) in [
        ("A", SW_BLOCK_M, SW_A_ROW_CHUNKS),
        ("B", SW_BLOCK_K, SW_B_ROW_CHUNKS),
        ("wide A", SW_BLOCK_M, SWW_BLOCK_K / 8),
        ("wide B", SWW_BLOCK_K, SWW_BLOCK_N / 8),
    ] {
        let mut seen = vec![false; (rows * width) as usize];
        for row in 0..rows {
            for chunk in 0..width {
                let at = sw_offset(row, chunk, width);
                assert!(
                    at.is_multiple_of(16) && at < rows * width * 16,
                    "{tile}: ({row}, {chunk}) at {at}"
                );
                assert!(
                    !std::mem::replace(&mut seen[(at / 16) as usize], true),
                    "{tile}: {at} placed twice"
                );
            }
        }
        let groups = |offsets: &mut dyn Iterator<Item = u32>| {
            let mut count = [0usize; 8];
            offsets.for_each(|at| count[(at / 16 % 8) as usize] += 1);
            count
        };
        for row0 in (0..rows).step_by(8) {
            for chunk in 0..width {
                let phase = groups(&mut (row0..row0 + 8).map(|r| sw_offset(r, chunk, width)));
                assert_eq!(
                    phase, [1; 8],
                    "{tile}: ldmatrix rows {row0}.. at chunk {chunk}"
                );
            }
            assert_ne!(
                groups(&mut (row0..row0 + 8).map(|r| unswizzled(r, 0, width))),
                [1; 8],
                "{tile}: unswizzled conflicts"
            );
        }
        for first in (0..rows * width).step_by(32) {
            let warp =
                groups(&mut (first..first + 32).map(|c| sw_offset(c / width, c % width, width)));
            assert_eq!(warp, [4; 8], "{tile}: the warp's copies from chunk {first}");
        }
    }
}

/// `grouped_block` is a bijection from block ids onto the grid's (row,
/// column) places, for grids with fewer rows than a group, a multiple of
/// it and a remainder; inside a group it walks down a column first.
#[test]
fn grouped_blocks_cover_the_grid_once() {
    for group in [SW_GROUP, WG_GROUP] {
        for (rows, cols) in [
            (1, 1),
            (3, 5),
            (8, 8),
            (32, 32),
            (13, 7),
            (64, 64),
            (17, 1),
            (10, 2),
            (64, 32),
        ] {
            let mut seen = vec![false; (rows * cols) as usize];
            for id in 0..rows * cols {
                let (r, c) = grouped_block(id, rows, cols, group);
                assert!(
                    r < rows && c < cols,
                    "group {group}, {rows} x {cols}: block {id} at ({r}, {c})"
                );
                assert!(
                    !std::mem::replace(&mut seen[(r * cols + c) as usize], true),
                    "group {group}, {rows} x {cols}: ({r}, {c}) twice"
                );
            }
        }
    }
    assert_eq!(
        (0..3)
            .map(|id| grouped_block(id, 32, 32, 8))
            .collect::<Vec<_>>(),
        [(0, 0), (1, 0), (2, 0)]
    );
    assert_eq!(grouped_block(8, 32, 32, 8), (0, 1));
    assert_eq!(grouped_block(8 * 32, 32, 32, 8), (8, 0));
}

/// In `gemm_bf16_pipelined`'s step, the refill's copies come in two parts
/// (`Refill::issue_part`): from the loop's barrier on, the PTX reads the
/// first 16 of k's `ldmatrix` (4 `.x4` for A, 2 `.x4.trans` for B's 4
/// fragments), A's 2 copies, the second 16 of k's 6 `ldmatrix`, then B's 2
/// copies (issued before the step's work, all 4 would come first).
/// `ldmatrix` reads memory, so LLVM keeps it in order with the copies; the
/// `mma`s, which touch none, it may move.
#[test]
fn the_pipelined_kernel_spreads_its_refill_over_the_step() {
    let body = entry_body(host::ptx::PTX_SM80, "gemm_bf16_pipelined").expect("an entry has a body");
    let lines: Vec<&str> = body.lines().map(str::trim_start).collect();
    let barrier = lines
        .iter()
        .position(|l| l.starts_with("bar.sync"))
        .expect("a barrier");
    let after: Vec<char> = lines[barrier..]
        .iter()
        .filter_map(|l| {
            if l.starts_with("ldmatrix") {
                Some('l')
            } else if l.starts_with("cp.async.cg") {
                Some('c')
            } else {
                None
            }
        })
        .collect();
    let order: String = after.into_iter().collect();
    assert!(
        order.starts_with("llllllccllllllcc"),
        "ldmatrix (l) and copies (c) after the barrier: {order}"
    );
}

/// ptxas assembles the sm_80 module for sm_80 and sm_90 with no spill in
/// the tensor-core kernel (skipped, saying so, where no ptxas is found
/// outside CI; `cargo xtask test` provides one).
#[test]
fn the_tensor_core_kernel_assembles_without_spills() {
    let symbols: Vec<&str> = host::gemm::TcKernel::ALL
        .iter()
        .map(|k| k.symbol())
        .collect();
    let Some(reports) = lab_tests::ptxas_reports(
        host::ptx::PTX_SM80,
        "kernels_sm80",
        &["sm_80", "sm_90"],
        &symbols,
    ) else {
        return;
    };
    for (arch, symbol, report) in reports {
        assert!(
            report.contains("0 bytes spill stores, 0 bytes spill loads"),
            "{arch} {symbol}: {report}"
        );
    }
}

#[test]
fn the_tensor_core_kernel_refuses_rows_that_are_not_16_bytes() {
    use host::gemm::TcKernel;
    assert_eq!(TcKernel::Bf16Mma.refusal((4096, 4096, 4096)), None);
    assert_eq!(TcKernel::Bf16Mma.refusal(host::gemm::TC_SMALL), None);
    let why = TcKernel::Bf16Mma
        .refusal((4095, 4095, 4095))
        .expect("4095 is refused");
    assert!(why.contains("multiples of 8"), "{why}");
    assert!(TcKernel::Bf16Mma.refusal((4096, 4096, 4088)).is_none());
    assert!(TcKernel::Bf16Mma.refusal((4096, 4096, 4092)).is_some());
    assert!(TcKernel::Bf16Mma.refusal((4096, 4100, 4096)).is_some());
    // An empty C: the epilogue reads a pair outside the matrix inside it.
    assert!(
        TcKernel::Bf16Mma
            .refusal((0, 8, 8))
            .expect("m = 0 is refused")
            .contains("at least 1")
    );
    assert!(TcKernel::Bf16Mma.refusal((8, 0, 8)).is_some());
    assert!(TcKernel::Bf16Mma.refusal((1, 8, 8)).is_none());
}

/// The tensor-core bound: four times the FP32 one, still far below an
/// output's size (a wrong product shows).
#[test]
fn the_tensor_core_bound_is_looser_and_still_tight() {
    let (m, n, k) = host::gemm::TC_SMALL;
    let (a, b, c, right) = case(m, n, k);
    assert_eq!(
        host::gemm::check_samples_within(
            "right",
            &right,
            &a,
            &b,
            &c,
            (m, n, k),
            host::gemm::TC_BOUND_FACTOR
        ),
        None
    );
    let mut wrong = right.clone();
    wrong[0] += 0.01;
    // 0.01 is past 4 x (k + 2) 2^-24 (0.75 S + 0.5) for S <= k = 104; the
    // corner D[0][0] is always sampled.
    assert!(host::gemm::TC_BOUND_FACTOR * bound_for_k(k) < 0.01);
    let failure = host::gemm::check_samples_within(
        "wrong",
        &wrong,
        &a,
        &b,
        &c,
        (m, n, k),
        host::gemm::TC_BOUND_FACTOR,
    )
    .expect("a result 0.01 off must fail");
    assert!(failure.to_string().contains("D[0][0]"), "{failure}");
}

/// The integer inputs make every correct order of summation exact: the f32
/// sums in ascending k, in descending k and in blocks of 16 (as a tensor
/// core adds one `mma`'s products) all equal the f64 result, for k up to
/// 8192; a one-off product changes the result by at least 0.75.
#[test]
fn the_integer_inputs_make_every_order_exact() {
    use host::gemm::reference::{INTEGER_STREAMS, STREAMS, integer, matrix, matrix_of};
    let (m, n, k) = (3, 5, 8192);
    let (a, b) = (
        matrix_of(m * k, INTEGER_STREAMS[0], integer),
        matrix_of(k * n, INTEGER_STREAMS[1], integer),
    );
    let c = matrix(m * n, STREAMS[2]);
    assert!(
        a.iter()
            .chain(&b)
            .all(|&v| v.fract() == 0.0 && v.abs() <= 2.0)
    );
    assert!(
        a.contains(&-2.0) && a.contains(&2.0),
        "the whole range is used"
    );
    for row in 0..m {
        for col in 0..n {
            let products: Vec<f32> = (0..k).map(|p| a[row * k + p] * b[p * n + col]).collect();
            let up = products.iter().fold(0.0f32, |acc, &x| acc + x);
            let down = products.iter().rev().fold(0.0f32, |acc, &x| acc + x);
            let blocks = products
                .chunks(16)
                .fold(0.0f32, |acc, ch| acc + ch.iter().sum::<f32>());
            let (exact, _) = reference::output(&a, &b, &c, n, k, row, col);
            for sum in [up, down, blocks] {
                let d = 0.75f32.mul_add(sum, -0.5 * c[row * n + col]);
                assert_eq!(f64::from(d), exact, "({row}, {col})");
            }
        }
    }
}

/// A row's lesson fields (`precision`, `cublas_share`) reach its JSON line,
/// and never replace one of every row's own fields.
#[test]
fn a_rows_lesson_fields_reach_its_json_line() {
    use host::lesson::{Findings, Report, Row, Section, SectionReport};
    let info = lab_tests::profile("H200").info();
    let sizes = Sizes::new(&info, true);
    let context = host::report::Context::new(
        "gemm",
        &info,
        &sizes,
        serde_json::json!({}),
        host::timing::Plan::QUICK,
        "2026-12-01T00:00:00Z".into(),
    );
    let mut row = Row::new(
        "gemm_bf16_mma/128",
        "tensor cores",
        host::timing::Timing::new(vec![1.0]),
    )
    .field("precision", serde_json::json!("bf16"));
    row.fields
        .insert("cublas_share".into(), serde_json::json!(0.5));
    row.fields
        .insert("median_ms".into(), serde_json::json!(-1.0));
    let mut section = Section::new("128");
    section.rows.push(row);
    let report = SectionReport::new(
        context,
        Findings {
            sections: vec![section],
            facts: serde_json::json!({}),
        },
    )
    .expect("a report");
    let lines = report.json_lines();
    let line = &lines[0];
    assert_eq!(line["precision"], "bf16");
    assert_eq!(line["cublas_share"], 0.5);
    assert_eq!(
        line["median_ms"], 1.0,
        "a lesson field does not replace a common one"
    );
}

#[test]
#[should_panic(expected = "one of every row's own JSON fields")]
fn a_lesson_field_may_not_take_a_common_name() {
    let _ = host::lesson::Row::new("k", "k", host::timing::Timing::new(vec![1.0]))
        .field("symbol", serde_json::json!("x"));
}

/// NVRTC compiles the twins for compute capability 9.0 with the tensor-core
/// twin's instructions counted as in the Rust kernel (the same tiles, the
/// same mma sequence), and for 7.5 with an empty tensor-core body (the
/// instructions do not exist there) while the FP32 twins keep theirs.
#[test]
fn the_twins_compile_with_nvrtc_with_the_tensor_core_twin_where_it_can_run() {
    use host::gemm::{F16Kernel, GemmLesson, Kernel, TcKernel, WgKernel};
    let Some(hopper) = lab_tests::twin_ptx_on_cpu::<GemmLesson>((9, 0)) else {
        return;
    };
    let turing = lab_tests::twin_ptx_on_cpu::<GemmLesson>((7, 5)).expect("NVRTC compiled for 9.0");
    let ampere = lab_tests::twin_ptx_on_cpu::<GemmLesson>((8, 0)).expect("NVRTC compiled for 9.0");
    assert!(
        hopper.contains(".target sm_90a"),
        "on 9.0 the twins are compiled for sm_90a"
    );
    let declared: Vec<_> = Kernel::ALL
        .iter()
        .map(|k| (k.symbol(), k.params()))
        .chain(TcKernel::ALL.iter().map(|k| (k.symbol(), k.params())))
        .chain(WgKernel::ALL.iter().map(|k| (k.symbol(), k.params())))
        .chain(F16Kernel::ALL.iter().map(|k| (k.symbol(), k.params())))
        .collect();
    // The f16 twin has its instructions from 7.5 on: the Rust kernel's two
    // m16n8k8 per mma tile per 16 of k, and no cp.async.
    for (ptx, cc) in [(&hopper, "9.0"), (&turing, "7.5")] {
        let body = entry_body(ptx, "gemm_f16_mma").expect("an entry has a body");
        let count = |what: &str| {
            body.lines()
                .filter(|l| l.trim_start().starts_with(what))
                .count()
        };
        let k16_steps = (TC_BLOCK_K / 16) as usize;
        assert_eq!(
            count("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32"),
            2 * 16 * k16_steps,
            "gemm_f16_mma's twin for {cc}"
        );
        assert_eq!(
            count("ldmatrix.sync.aligned.m8n8.x4.shared.b16"),
            4 * k16_steps,
            "gemm_f16_mma's twin for {cc}"
        );
        assert_eq!(
            body.matches("cp.async").count(),
            0,
            "gemm_f16_mma's twin for {cc}"
        );
    }
    // The wgmma twin's instructions exist only in the sm_90a build: the
    // Rust kernel's 4 a step there, none where its body is empty.
    let wgmma = |ptx: &str, symbol: &str| {
        let body = entry_body(ptx, symbol).expect("an entry has a body");
        let wgmma = format!("wgmma.mma_async.sync.aligned.m64n{WG_BLOCK_N}k16.f32.bf16.bf16");
        body.lines()
            .filter(|l| l.trim_start().starts_with(&wgmma))
            .count()
    };
    let tma_twin = entry_body(&hopper, "gemm_bf16_tma").expect("an entry has a body");
    assert_eq!(
        tma_twin.matches("bar.sync").count(),
        2,
        "the twin's block barriers, as the Rust kernel's"
    );
    for symbol in ["gemm_bf16_wgmma", "gemm_bf16_tma"] {
        assert_eq!(
            wgmma(&hopper, symbol),
            (WG_BLOCK_K / 16) as usize,
            "{symbol}"
        );
        assert_eq!(wgmma(&ampere, symbol), 0, "{symbol}");
        assert_eq!(wgmma(&turing, symbol), 0, "{symbol}");
    }
    for (ptx, cc) in [(&hopper, "9.0"), (&turing, "7.5")] {
        let faults = lab_tests::signature_faults(&declared, ptx, &format!("twins' PTX for {cc}"));
        assert!(faults.is_empty(), "{}", faults.join("\n"));
    }
    let k16_steps = (TC_BLOCK_K / 16) as usize;
    for (symbol, x2_trans, x4_trans, copies) in [
        ("gemm_bf16_mma", 4, 0, 2 * 4),
        ("gemm_bf16_pipelined", 0, 2, TC_PIPE_STAGES as usize * 4),
    ] {
        let count = |ptx: &str, what: &str| {
            let body = entry_body(ptx, symbol).expect("an entry has a body");
            body.lines()
                .filter(|l| l.trim_start().starts_with(what))
                .count()
        };
        for (what, per_k16) in [
            ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 16),
            ("ldmatrix.sync.aligned.m8n8.x4.shared.b16", 4),
            ("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16", x2_trans),
            ("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", x4_trans),
        ] {
            assert_eq!(
                count(&hopper, what),
                per_k16 * k16_steps,
                "{what} in the 9.0 twin of {symbol}"
            );
            assert_eq!(
                count(&turing, what),
                0,
                "{what} in the 7.5 twin of {symbol}"
            );
        }
        assert_eq!(
            count(&hopper, "cp.async.cg.shared.global"),
            copies,
            "{symbol}"
        );
    }
}

// ---- the Hopper kernel (the sm_90a module) --------------------------------

/// The start address, LBO and SBO (bytes) and the swizzle mode a matrix
/// descriptor holds (PTX ISA, "Matrix Descriptor Format").
fn decode(desc: u64) -> (u32, u32, u32, u64) {
    let field = |shift: u32| (((desc >> shift) & 0x3FFF) << 4) as u32;
    // The base offset (bits 49-51) is 0 for atoms on 1024-byte boundaries,
    // and the bits no field uses are 0.
    let fields = 0x3FFF | (0x3FFF << 16) | (0x3FFF << 32) | (0b11 << 62);
    assert_eq!(
        desc & !fields,
        0,
        "base offset and reserved bits of {desc:#x}"
    );
    (field(0), field(16), field(32), desc >> 62)
}

/// The address the hardware reads for the unswizzled byte address `addr`
/// of a descriptor in the 128-byte swizzle: the PTX ISA's `Swizzle<3, 4,
/// 3>` on byte addresses (bits 4-6 XOR bits 7-9), written here apart from
/// the kernel's own `swizzle_128b`.
fn hardware_swizzle(addr: u32) -> u32 {
    addr ^ (((addr >> 7) & 0b111) << 4)
}

/// Every element a `wgmma` m64n256k16 reads through the kernel's
/// descriptors is where the kernel's copy put it: the address each operand's
/// canonical layout gives (PTX ISA, "Canonical Layouts", 128-byte swizzle:
/// K-major A `((8,m),(T,2k)):((8T,SBO),(1,T))`, N-major B
/// `((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))`, T = 8 bf16), swizzled, against
/// `wg_a_offset` / `wg_b_offset` of the element's place in the tile; for
/// both warpgroups, every k slice of a step and a stage that is not the
/// first. A swapped LBO and SBO, a slice advanced by the wrong step or a
/// swizzle on the wrong bits fails.
#[test]
fn the_wgmma_descriptors_read_what_the_copies_wrote() {
    let stage = 1024 + 2 * WG_STAGE_BYTES;
    for kk in 0..WG_BLOCK_K / 16 {
        for warpgroup in 0..WG_THREADS / 128 {
            let (start, _, sbo, mode) = decode(wg_a_descriptor(stage, warpgroup, kk));
            assert_eq!(mode, 1, "the 128-byte swizzle");
            for i in 0..64 {
                for k in 0..16 {
                    let read = hardware_swizzle(start + (i / 8) * sbo + (i % 8) * 128 + 2 * k);
                    let wrote = stage + wg_a_offset(64 * warpgroup + i, 16 * kk + k);
                    assert_eq!(
                        read, wrote,
                        "A: warpgroup {warpgroup}, slice {kk}, row {i}, k {k}"
                    );
                }
            }
        }
        let (start, lbo, sbo, mode) = decode(wg_b_descriptor(stage, kk));
        assert_eq!(mode, 1, "the 128-byte swizzle");
        for k in 0..16 {
            for j in 0..WG_BLOCK_N {
                let read = hardware_swizzle(
                    start + (j / 64) * lbo + (j % 64) * 2 + (k % 8) * 128 + (k / 8) * sbo,
                );
                let wrote = stage + WG_A_BYTES + wg_b_offset(16 * kk + k, j);
                assert_eq!(read, wrote, "B: slice {kk}, k {k}, column {j}");
            }
        }
    }
}

/// The copies fill each stage's tiles exactly: every element of A's and
/// B's tile has its own two bytes inside its tile, and every 16-byte chunk
/// of 8 consecutive elements (what one `cp.async` moves) stays whole.
#[test]
fn the_swizzled_tiles_are_a_permutation_of_whole_chunks() {
    for (name, rows, cols, bytes, offset) in [
        (
            "A",
            WG_BLOCK_M,
            WG_BLOCK_K,
            WG_A_BYTES,
            wg_a_offset as fn(u32, u32) -> u32,
        ),
        (
            "B",
            WG_BLOCK_K,
            WG_BLOCK_N,
            WG_B_BYTES,
            wg_b_offset as fn(u32, u32) -> u32,
        ),
    ] {
        let mut seen = vec![false; (bytes / 2) as usize];
        for r in 0..rows {
            for c in 0..cols {
                let at = offset(r, c);
                assert!(at < bytes && at % 2 == 0, "{name} ({r}, {c}) at {at}");
                assert!(
                    !std::mem::replace(&mut seen[(at / 2) as usize], true),
                    "{name}: ({r}, {c}) lands twice"
                );
                assert_eq!(
                    at,
                    offset(r, c - c % 8) + 2 * (c % 8),
                    "{name} ({r}, {c}) leaves its chunk"
                );
            }
        }
        assert_eq!(offset(0, 0), 0);
    }
    // The swizzle moves chunks within a row: row 1's first chunk is its
    // second one's place.
    assert_eq!(wg_a_offset(1, 0), 128 + 16);
    assert_eq!(wg_b_offset(9, 64), WG_B_LBO + 9 * 128 + 16);
}

/// The sm_90a module is PTX ISA 8.3 for the architecture-specific sm_90a,
/// exports the Hopper kernel with the parameters its launch is checked
/// against, and the device layer's instructions appear in it as written:
/// 4 `wgmma` m64n256k16 (k = 64 a step) between one fence and one commit,
/// the waits for all but one group and for none, the proxy fence before the
/// barrier, and `WG_STAGES - 1` steps' copies (the prologue's and the
/// loop's), 12 chunks a thread each; no local memory.
#[test]
fn the_sm90a_module_holds_the_wgmma_instructions_as_written() {
    use host::gemm::WgKernel;
    use host::ptx::PTX_SM90A;
    assert!(
        PTX_SM90A.contains(".version 8.3") && PTX_SM90A.contains(".target sm_90a"),
        "the sm_90a module's header"
    );
    assert_signatures::<WgKernel>(PTX_SM90A, "the sm_90a module");
    for module in [PTX, host::ptx::PTX_SM80] {
        assert!(
            !entries(module).contains(&"gemm_bf16_wgmma"),
            "only the sm_90a module has the wgmma kernel"
        );
    }
    let body = entry_body(PTX_SM90A, "gemm_bf16_wgmma").expect("an entry has a body");
    let count = |what: &str| {
        body.lines()
            .filter(|l| l.trim_start().starts_with(what))
            .count()
    };
    let wgmma = format!("wgmma.mma_async.sync.aligned.m64n{WG_BLOCK_N}k16.f32.bf16.bf16");
    assert_eq!(count(&wgmma), (WG_BLOCK_K / 16) as usize, "{wgmma}");
    assert!(
        body.contains(", 1, 1, 1, 0, 1;"),
        "scale-d 1 (accumulate), A K-major, B N-major (imm-trans-b = 1)"
    );
    assert_eq!(count("wgmma.fence.sync.aligned"), 1);
    assert_eq!(count("wgmma.commit_group.sync.aligned"), 1);
    assert_eq!(count("wgmma.wait_group.sync.aligned 1"), 1);
    assert_eq!(count("wgmma.wait_group.sync.aligned 0"), 1);
    assert_eq!(count("fence.proxy.async.shared::cta"), 1);
    let chunks = ((WG_BLOCK_M * WG_BLOCK_K + WG_BLOCK_K * WG_BLOCK_N) / 8 / WG_THREADS) as usize;
    assert_eq!(
        count("cp.async.cg.shared.global"),
        (WG_STAGES as usize - 1) * chunks
    );
    assert_eq!(count(&format!("cp.async.wait_group {}", WG_STAGES - 3)), 1);
    assert!(!body.contains(".local"), "no local memory");

    // The TMA kernel: the same wgmmas; thread 0's copies of the prologue's
    // WG_STAGES - 2 steps and the loop's one (a box of A and WG_BLOCK_N / 64
    // of B each, each step's bytes announced once), a barrier a stage, one
    // wait loop; no cp.async and no proxy fence (TMA writes through the
    // async proxy that wgmma reads through).
    let body = entry_body(PTX_SM90A, "gemm_bf16_tma").expect("an entry has a body");
    let count = |what: &str| {
        body.lines()
            .filter(|l| l.trim_start().starts_with(what))
            .count()
    };
    assert_eq!(count(&wgmma), (WG_BLOCK_K / 16) as usize, "{wgmma}");
    let boxes = 1 + (WG_BLOCK_N / 64) as usize;
    let tma = "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes";
    assert_eq!(count(tma), (WG_STAGES as usize - 1) * boxes, "{tma}");
    assert_eq!(
        count("mbarrier.arrive.expect_tx.shared::cta.b64 _,"),
        WG_STAGES as usize - 1
    );
    assert_eq!(
        count("mbarrier.init.shared::cta.b64"),
        WG_STAGES as usize,
        "the init loop unrolled"
    );
    assert_eq!(count("fence.mbarrier_init.release.cluster"), 1);
    assert_eq!(
        body.matches("mbarrier.try_wait.parity.shared::cta.b64")
            .count(),
        1
    );
    assert_eq!(count("cp.async.cg"), 0);
    assert_eq!(count("fence.proxy.async"), 0);
    assert_eq!(
        count("fence.proxy.tensormap::generic.acquire.sys"),
        2,
        "each map acquired once, before the first copy"
    );
    assert!(
        body.contains("%globaltimer") && body.contains("trap;"),
        "the wait gives up, with a trap"
    );
    assert!(!body.contains(".local"), "no local memory");
    // One barrier after thread 0's setup, one a step: every thread runs the
    // same two `bar.sync` (an `.aligned` barrier copied into two paths
    // would be undefined).
    assert_eq!(body.matches("bar.sync").count(), 2, "the block barriers");
    // The dynamic shared memory holds the stages and the barriers after
    // the worst rounding up of the base (16-byte aligned) to 1024.
    for (bytes, used) in [
        (WG_SHARED_BYTES, WG_STAGES * WG_STAGE_BYTES),
        (WG_TMA_SHARED_BYTES, WG_STAGES * (WG_STAGE_BYTES + 8)),
    ] {
        assert!(
            WG_TILE_ALIGN - 16 + used <= bytes,
            "{used} bytes past the aligned base in {bytes}"
        );
    }
    // A stage's bytes are what its boxes deliver.
    let box_bytes = |b: [u32; 2]| 2 * b[0] * b[1];
    assert_eq!(
        box_bytes(WG_TMA_BOX_A) + (WG_BLOCK_N / 64) * box_bytes(WG_TMA_BOX_B),
        WG_STAGE_BYTES
    );
}

/// ptxas assembles the Hopper kernels for sm_90a, the Rust ones and their
/// CUDA C twins (NVRTC's PTX for sm_90a), with no spill and no wgmma
/// diagnostic (ptxas's C75xx: it serializes the `wgmma`s, or injects a
/// wait, where an accumulator is touched while a `wgmma` may still write
/// it); skipped, saying so, where no ptxas or NVRTC is found outside CI.
#[test]
fn the_wgmma_kernel_assembles_for_sm90a_without_spills_or_serialization() {
    let symbols: Vec<&str> = host::gemm::WgKernel::ALL
        .iter()
        .map(|k| k.symbol())
        .collect();
    let Some(reports) =
        lab_tests::ptxas_reports(host::ptx::PTX_SM90A, "kernels_sm90a", &["sm_90a"], &symbols)
    else {
        return;
    };
    let Some(twin) = lab_tests::twin_ptx_on_cpu::<host::gemm::GemmLesson>((9, 0)) else {
        return;
    };
    let twin_reports = lab_tests::ptxas_reports(&twin, "gemm_twins_sm90a", &["sm_90a"], &symbols)
        .expect("ptxas ran above");
    for (arch, symbol, report) in reports.into_iter().chain(twin_reports) {
        assert!(
            report.contains("0 bytes spill stores, 0 bytes spill loads"),
            "{arch} {symbol}: {report}"
        );
        // C75xx: wgmma serialized, or a warpgroup.arrive or wait injected
        // because an accumulator is touched while a wgmma may write it.
        assert!(!report.contains("(C75"), "{arch} {symbol}: {report}");
    }
}

/// The Hopper kernels take the warpgroup index through `warp::uniform` (a
/// `shfl.sync.idx` from lane 0), so ptxas forms their `wgmma` descriptors
/// in uniform registers: in each kernel's SASS for sm_90a no `R2UR` comes
/// after the first block barrier, where the main loop forms them (computed
/// per thread, they took 8 `R2UR` there, one pair a `wgmma`; ptxas 12.9
/// leaves one, the index itself, before the loop). The PTX half runs
/// everywhere; the SASS half is skipped, saying so, where ptxas or
/// cuobjdump is not found outside CI.
#[test]
fn the_hopper_kernels_form_their_descriptors_in_uniform_registers() {
    for kernel in host::gemm::WgKernel::ALL {
        let symbol = kernel.symbol();
        let body = entry_body(host::ptx::PTX_SM90A, symbol).expect("an entry has a body");
        assert_eq!(
            body.matches("shfl.sync.idx.b32").count(),
            1,
            "{symbol}: {body}"
        );
    }
    for kernel in host::gemm::WgKernel::ALL {
        let symbol = kernel.symbol();
        let Some(sass) = lab_tests::sass_on_cpu(host::ptx::PTX_SM90A, "sm_90a", symbol) else {
            return;
        };
        assert!(sass.contains("HGMMA"), "{symbol}: {sass}");
        let loop_start = sass
            .find("BAR.SYNC")
            .unwrap_or_else(|| panic!("{symbol}: no block barrier in {sass}"));
        let in_loop: Vec<&str> = sass[loop_start..]
            .lines()
            .filter(|l| l.contains("R2UR"))
            .collect();
        assert!(
            in_loop.is_empty(),
            "{symbol}: descriptors moved from per-thread registers: {in_loop:#?}"
        );
    }
}

/// No C load of a tensor-core kernel's epilogue (`ld.global.v2.f32` on the
/// Rust side, `ld.global.nc.v2.f32` in the twins) sits in a branch of its
/// own: no forward branch jumps over that load and no other C load, with or
/// without the store of its pair. Both sides load every pair: the twins
/// from `c` itself outside the matrix, the Rust kernels through `load_v2`
/// at the pair's row and column clamped into it (the twins are NVRTC's PTX
/// for 9.0, where NVRTC is found). A twin load written `inside ? __ldg(p) :
/// 0` sat in such a branch, which ptxas merged with the branch of the store
/// that uses it, one load in flight at a time: the Hopper twins at b67c730
/// took 3 to 11% longer on one H100 than d975e75's
/// (docs/results/h100-2026-12-06-twin-epilogue). Jumps over many loads (the
/// guarded and unguarded instances of a main loop, epilogue and all) pass.
#[test]
fn the_tensor_core_epilogues_load_c_without_branching_around_a_load() {
    let kernels = [
        ("gemm_f16_mma", PTX),
        ("gemm_bf16_mma", host::ptx::PTX_SM80),
        ("gemm_bf16_pipelined", host::ptx::PTX_SM80),
        ("gemm_bf16_swizzled", host::ptx::PTX_SM80),
        ("gemm_bf16_swizzled_wide", host::ptx::PTX_SM80),
        ("gemm_bf16_wgmma", host::ptx::PTX_SM90A),
        ("gemm_bf16_tma", host::ptx::PTX_SM90A),
    ];
    let twin = lab_tests::twin_ptx_on_cpu::<host::gemm::GemmLesson>((9, 0));
    for (symbol, rust) in kernels {
        let sides = std::iter::once(("Rust", rust)).chain(twin.as_deref().map(|t| ("the twin", t)));
        for (side, ptx) in sides {
            let body = entry_body(ptx, symbol).expect("an entry has a body");
            let lines: Vec<&str> = body
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with("//"))
                .collect();
            let jumps: Vec<(usize, usize)> = lines
                .iter()
                .enumerate()
                .filter_map(|(i, l)| {
                    let name = lab_tests::branch_target(l)?;
                    let at = lines
                        .iter()
                        .position(|m| lab_tests::ptx_label(m) == Some(name))?;
                    (at > i).then_some((i, at))
                })
                .collect();
            let load =
                |l: &str| l.contains("ld.global.nc.v2.f32") || l.contains("ld.global.v2.f32");
            let loads = lines.iter().filter(|l| load(l)).count();
            assert!(
                loads >= 8,
                "{symbol}, {side}: the epilogue's C loads ({loads})"
            );
            assert!(
                !jumps.is_empty(),
                "{symbol}, {side}: the guards' branches were not read"
            );
            for &(from, to) in &jumps {
                let over: Vec<&&str> = lines[from..to].iter().filter(|l| load(l)).collect();
                assert!(
                    over.len() != 1,
                    "{symbol}, {side}: `{}` jumps over `{}` alone",
                    lines[from],
                    over[0]
                );
            }
        }
    }
}

/// Each tensor-core kernel's epilogue issues a row's C loads before its D
/// stores, and the next row's after them: in the SASS after the last
/// `HMMA`/`HGMMA`, C loads (`LDG.E.64`) and D stores (`STG.E.64`) come as
/// runs, each run of loads followed by as many stores, one pair of runs a
/// row of tiles (4 rows of `mma` tiles a warp; 2 wgmma halves a
/// warpgroup). The twins of the `mma.sync`, FP16 and Hopper kernels have
/// this order, from their branches. With predicated `ld.global.nc` loads
/// ptxas moved stores up among the loads: at 9e16104, `gemm_bf16_mma` had
/// 10 runs of loads for its 4 rows (sm_90a, ptxas 12.9 and 13.0;
/// docs/results/cpu-2026-12-06-epilogue-order), a store waiting on its
/// load while the row's later loads were not yet issued. (It took 1.0286
/// and 1.0274 of its twin's time on an H200 then; whether the order is the
/// cause is for a GPU run to show.) Nor may a `SEL` a pair pay for it:
/// 1f3b3a3 read a pair outside the matrix at `c`, chosen with two `SEL` a
/// pair, 383 more instructions in `gemm_bf16_tma`'s epilogue
/// (docs/results/h100-2026-12-06-epilogue-clamp), which took 6.5% and
/// 10.1% longer so on an H100 (docs/results/h100-2026-12-06-epilogue-loads).
/// Skipped, saying so, where ptxas or cuobjdump is not found outside CI.
#[test]
fn the_tensor_core_epilogues_issue_a_rows_c_loads_before_its_stores() {
    let kernels = [
        ("gemm_f16_mma", PTX, 4),
        ("gemm_bf16_mma", host::ptx::PTX_SM80, 4),
        ("gemm_bf16_pipelined", host::ptx::PTX_SM80, 4),
        ("gemm_bf16_swizzled", host::ptx::PTX_SM80, 4),
        ("gemm_bf16_swizzled_wide", host::ptx::PTX_SM80, 4),
        ("gemm_bf16_wgmma", host::ptx::PTX_SM90A, 2),
        ("gemm_bf16_tma", host::ptx::PTX_SM90A, 2),
    ];
    for (symbol, ptx, rows) in kernels {
        let Some(sass) = lab_tests::sass_on_cpu(ptx, "sm_90a", symbol) else {
            return;
        };
        let lines: Vec<&str> = sass.lines().collect();
        let last_mma = lines
            .iter()
            .rposition(|l| l.contains("HMMA") || l.contains("HGMMA"))
            .unwrap_or_else(|| panic!("{symbol}: no tensor-core instruction in {sass}"));
        // L for a C load, S for a D store, in program order.
        let order: String = lines[last_mma..]
            .iter()
            .filter_map(|l| {
                if l.contains("LDG.E.64") {
                    Some('L')
                } else if l.contains("STG.E.64") {
                    Some('S')
                } else {
                    None
                }
            })
            .collect();
        let runs: Vec<(char, usize)> = order.chars().fold(Vec::new(), |mut runs, ch| {
            match runs.last_mut() {
                Some((last, count)) if *last == ch => *count += 1,
                _ => runs.push((ch, 1)),
            }
            runs
        });
        assert_eq!(
            runs.len(),
            2 * rows,
            "{symbol}: {rows} runs of C loads, each then its stores, expected in {order}"
        );
        for pair in runs.chunks(2) {
            assert!(
                pair[0].0 == 'L' && pair[1].0 == 'S' && pair[0].1 == pair[1].1,
                "{symbol}: a run of loads, then as many stores, expected in {order}"
            );
        }
        // The order must not be bought with a select a pair: reading a pair
        // outside the matrix at `c` (1f3b3a3) took two SEL a pair.
        let loads = order.matches('L').count();
        let selects = lines[last_mma..]
            .iter()
            .filter(|l| l.contains(" SEL "))
            .count();
        assert!(
            4 * selects < loads,
            "{symbol}: {selects} SEL for {loads} C loads in its epilogue"
        );
    }
}

/// A share of cuBLAS in rounds is read round by round: batch i of the kernel
/// against batch i of cuBLAS, timed next to it, never one median against
/// another; and the report's sentence says where it and the share row
/// against row disagree past the rounds' spread.
#[test]
fn a_share_of_cublas_in_rounds_pairs_each_batch_with_cublas_batch_of_its_round() {
    use host::gemm::Share;
    use host::timing::Timing;
    // The kernel's rounds: as fast as cuBLAS, half, a quarter; cuBLAS slows
    // in the third round as the kernel does, so that round's share is 1/2.
    let kernel = Timing::new(vec![1.0, 2.0, 8.0]);
    let cublas = Timing::new(vec![1.0, 1.0, 4.0]);
    let share = Share::of(&kernel, &cublas);
    assert_eq!(share.per_round, vec![1.0, 0.5, 0.5]);
    assert_eq!(share.median(), 0.5);
    assert_eq!(share.range(), (0.5, 1.0));
    assert_eq!((share.kernel_ms, share.cublas_ms), (2.0, 1.0));
    // The medians (2.0 ms against 1.0) would say 1/2 whichever round each
    // of cuBLAS's batches ran in; the rounds do not: with the same batches
    // of cuBLAS in another order the share is 1.
    let swapped = Share::of(&kernel, &Timing::new(vec![1.0, 4.0, 1.0]));
    assert_eq!(swapped.per_round, vec![1.0, 2.0, 0.125]);
    assert_eq!(swapped.median(), 1.0);
    assert_eq!(swapped.cublas_ms, 1.0);
    // Row against row inside the rounds' range: no disagreement called.
    assert_eq!(
        share.sentence("gemm_bf16_mma/4096", "cuBLAS's BF16 throughput", Some(0.6)),
        "gemm_bf16_mma/4096: of cuBLAS's BF16 throughput, 60.0% row against row; 50.0% in 3 rounds of a batch of it \
         beside one of cuBLAS's (the median; rounds 50.0 to 100.0%); in the rounds it took 2.0000 ms a launch and cuBLAS \
         1.0000 ms."
    );
    // Outside it: called.
    assert!(share.sentence("k", "x", Some(0.4)).ends_with(" The two readings disagree past the rounds' spread: what ran before each batch moved this share."));
    // No row against row (a row without a rate), or one round (a quick
    // run): no range, nothing called.
    assert!(!share.sentence("k", "x", None).contains("row against row"));
    let one = Share::of(&Timing::new(vec![2.0]), &Timing::new(vec![1.0]));
    assert_eq!(
        one.sentence("k", "x", Some(0.9)),
        "k: of x, 90.0% row against row; 50.0% in one round, a batch of it beside one of cuBLAS's; in the rounds it took \
         2.0000 ms a launch and cuBLAS 1.0000 ms."
    );
    let fields = share.fields();
    assert_eq!(fields[0], ("cublas_share_rounds", serde_json::json!(0.5)));
    assert_eq!(
        fields[1],
        ("cublas_share_rounds_range", serde_json::json!([0.5, 1.0]))
    );
    assert_eq!(
        fields[2],
        ("cublas_share_per_round", serde_json::json!([1.0, 0.5, 0.5]))
    );
    assert_eq!(
        fields[3],
        (
            "rounds_ms",
            serde_json::json!({"kernel": 2.0, "cublas": 1.0})
        )
    );
}

#[test]
#[should_panic(expected = "one alternation times both the same batches")]
fn a_share_of_batches_from_two_alternations_is_refused() {
    let _ = host::gemm::Share::of(
        &host::timing::Timing::new(vec![1.0, 2.0]),
        &host::timing::Timing::new(vec![1.0]),
    );
}

#[test]
fn a_held_share_is_cublas_median_over_the_kernel_s_and_names_the_other_readings() {
    use host::gemm::held_sentence;
    use host::lesson::Row;
    use host::timing::Timing;
    // The kernel's held batches: median 2.5 ms; cuBLAS's: median 1.5 ms;
    // the same FLOP a launch.
    let flop = 2.0 * 8192f64.powi(3);
    let held = Row::new(
        "k/8192/held",
        "k",
        Timing::new(vec![2.0, 2.5, 3.0, 2.4, 2.6]),
    )
    .flop(flop);
    let cublas = Row::new("c/8192/held", "c", Timing::new(vec![1.5, 1.4, 1.6])).flop(flop);
    assert_eq!(
        held_sentence(
            "k/8192",
            "cuBLAS's BF16 throughput",
            &held,
            &cublas,
            Some(0.618),
            Some(0.553)
        ),
        "k/8192: 60.0% of cuBLAS's BF16 throughput held (2.5000 ms a launch, median of 5 batches, against cuBLAS's \
         1.5000 ms, of 3); 61.8% row against row, 55.3% in rounds."
    );
    // A reading that is missing is left out, not printed as a number.
    assert_eq!(
        held_sentence("k/8192", "x", &held, &cublas, None, Some(0.5)),
        "k/8192: 60.0% of x held (2.5000 ms a launch, median of 5 batches, against cuBLAS's 1.5000 ms, of 3); 50.0% in \
         rounds."
    );
    assert!(held_sentence("k", "x", &held, &cublas, None, None).ends_with("of 3)."));
}

#[test]
fn a_held_share_joins_its_rows_entry_in_the_facts_and_no_other() {
    use host::gemm::note_held_share;
    use serde_json::json;
    let mut shares = vec![
        json!({"row": "gemm_tiled/4096", "side": 4096, "cublas_share": 0.17, "cublas_share_rounds": 0.18}),
        json!({"row": "gemm_bf16_swizzled_wide/4096", "side": 4096, "cublas_share": 0.592, "cublas_share_rounds": 0.641}),
        json!({"row": "gemm_bf16_swizzled_wide/8192", "side": 8192, "cublas_share": null, "cublas_share_rounds": 0.553}),
    ];
    assert_eq!(
        note_held_share(&mut shares, "gemm_bf16_swizzled_wide/4096", 0.70),
        (Some(0.592), Some(0.641))
    );
    assert_eq!(shares[1]["cublas_share_held"], json!(0.70));
    assert!(shares[0].get("cublas_share_held").is_none());
    assert!(shares[2].get("cublas_share_held").is_none());
    // A row with no share row against row gives none back.
    assert_eq!(
        note_held_share(&mut shares, "gemm_bf16_swizzled_wide/8192", 0.646),
        (None, Some(0.553))
    );
    // A key with no entry changes nothing.
    let before = shares.clone();
    assert_eq!(
        note_held_share(&mut shares, "gemm_naive/8192", 0.1),
        (None, None)
    );
    assert_eq!(shares, before);
}
