//! CPU-only tests of the harness lesson: the verdict's direction and
//! factor, the reading of each synchronisation removed on its own, the host
//! workload's check, the reference, the sizes and launch shape, the
//! kernel's PTX,
//! that no other lesson touches the kernel (its first call must be the
//! lesson's), and the CUDA C twin under NVRTC.

use host::harness::{
    FirstCall, SYMBOL, SyncEffects, Syncs, bytes, host_workload_failure, launch_config, reading,
    reference, sync_reading, verdict,
};
use host::ptx::{PTX, entries, entry_body};
use kernels_gpu::harness::*;

#[test]
fn the_verdict_names_direction_and_factor() {
    assert_eq!(
        verdict(0.1, 1.0),
        "too fast by 10.0x (0.100x the events' time)"
    );
    assert_eq!(verdict(37.0, 1.0), "too slow by 37.0x");
    assert_eq!(verdict(1.04, 1.0), "agrees within 5% (1.04x)");
    assert_eq!(verdict(0.96, 1.0), "agrees within 5% (0.96x)");
    assert!(verdict(1.2, 1.0).starts_with("too slow"));
    // No reference time, no verdict (not "too slow by infx").
    assert!(verdict(1.0, 0.0).starts_with("no ratio"));
    assert!(verdict(f64::NAN, 1.0).starts_with("no ratio"));
}

#[test]
fn the_reading_claims_only_what_the_figures_show() {
    // Over the DRAM peak with buffers past the L2: impossible.
    let text = reading(false, 20, 227_401.0, Some(4814.0), false);
    assert!(text.contains("\"227401 GB/s\" is over"), "{text}");
    assert!(text.contains("impossible"), "{text}");
    assert!(!text.contains("(2)"), "{text}");
    assert!(
        text.contains("(1) and (3) to (3b) are host-clocked"),
        "{text}"
    );
    // Over the peak, but the buffers fit in the L2: not a hard limit.
    let text = reading(true, 20, 6873.0, Some(4814.0), true);
    assert!(text.contains("not a hard limit"), "{text}");
    assert!(!text.contains("impossible"), "{text}");
    assert!(text.contains("(2) measures loading the kernel"), "{text}");
    assert!(
        text.contains("(1) to (3b) and the CPU row are host-clocked"),
        "{text}"
    );
    // Under the peak: no GB/s claim at all.
    let text = reading(true, 20, 3000.0, Some(4814.0), false);
    assert!(!text.contains("GB/s"), "{text}");
    assert!(text.contains("over 20 launches"), "{text}");
}

#[test]
fn the_first_call_adds_its_parts() {
    let f = FirstCall {
        get_function_ms: 0.25,
        launch_and_sync_ms: 1.5,
    };
    assert_eq!(f.total_ms(), 1.75);
}

#[test]
fn the_reference_on_hand_checked_values() {
    // Multiples of 1/64 and 1/128 add exactly in f32.
    let a = [-5.0, 37.0 / 64.0 - 5.0, 4.984_375];
    let b = [0.0, 11.0 / 128.0, 2.992_187_5];
    let mut out = [0.0f32; 3];
    reference::vector_add(&mut out, &a, &b);
    assert_eq!(out, [-5.0, 37.0 / 64.0 - 5.0 + 11.0 / 128.0, 7.976_562_5]);
}

#[test]
fn sizes_follow_the_seed_and_the_l2() {
    assert_eq!(SEED_ELEMS, 2_000_000);
    assert_eq!((SEED_WARMUPS, SEED_RUNS), (5, 20));
    // The large buffers are 4x an H200's 60 MiB L2 or more: 16 Mi floats
    // doubled to 64 Mi; a T4's 4 MiB L2 keeps the seed's 16 Mi.
    let h200 = lab_tests::profile("H200").info();
    let sizes = host::harness::Sizes::new(&h200, false);
    assert_eq!(sizes.timed_elems, [SEED_ELEMS, 1 << 26]);
    assert_eq!(
        host::harness::Sizes::new(&h200, true).timed_elems,
        [SEED_ELEMS, CHECK_ELEMS]
    );
    let t4 = lab_tests::profile("T4").info();
    assert_eq!(
        host::harness::Sizes::new(&t4, false).timed_elems[1],
        SEED_LARGE_ELEMS
    );
    assert_eq!(bytes(1000), 12_000.0);
}

#[test]
fn launch_shape_has_one_thread_per_element() {
    for n in [1, CHECK_ELEMS, SEED_ELEMS, SEED_LARGE_ELEMS, 1 << 26] {
        let c = launch_config(n);
        let blocks = c.grid_dim.0 as usize;
        assert!(blocks * THREADS_PER_BLOCK as usize >= n);
        assert!((blocks - 1) * (THREADS_PER_BLOCK as usize) < n);
    }
}

#[test]
fn the_kernel_is_in_the_ptx_on_the_read_only_path() {
    assert!(entries(PTX).contains(&SYMBOL));
    let body = entry_body(PTX, SYMBOL).unwrap();
    assert_eq!(body.matches("ld.global.nc").count(), 2, "{body}");
    assert!(body.contains("add.rn.f32"));
    assert_eq!(body.matches("st.global").count(), 1);
}

/// The lesson times the kernel's first call in the process: no other host
/// module may get or launch it.
#[test]
fn no_other_lesson_uses_the_kernel() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../host/src");
    let mut stack = vec![src.clone()];
    let mut users = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if !path.ends_with("harness") {
                    stack.push(path);
                }
            } else if std::fs::read_to_string(&path)
                .map(|t| t.contains(SYMBOL))
                .unwrap_or(false)
            {
                users.push(path);
            }
        }
    }
    assert_eq!(users, Vec::<std::path::PathBuf>::new());
}

#[test]
fn the_twin_compiles_with_nvrtc_and_matches_the_entry() {
    let Some(ptx) = lab_tests::twin_ptx_on_cpu::<host::harness::HarnessLesson>((7, 5)) else {
        return;
    };
    assert_eq!(entries(&ptx), vec![SYMBOL]);
}

#[test]
fn each_sync_has_its_key_and_label() {
    let all = [Syncs::BOTH, Syncs::NO_START, Syncs::NO_STOP, Syncs::NONE];
    let keys: Vec<&str> = all.iter().map(|s| s.key()).collect();
    // The keys the recorded runs already hold stay as they were.
    assert_eq!(
        keys,
        ["host-sync", "no-start-sync", "no-stop-sync", "no-sync"]
    );
    assert_eq!(
        Syncs::NO_START.label(5, 20),
        "(3a) seed's harness less the first sync: 5 warm-ups, 20 launches, sync"
    );
    assert_eq!(
        Syncs::NO_STOP.label(5, 20),
        "(3b) seed's harness less the second sync: 5 warm-ups, sync, 20 launches"
    );
    let kept = |s: Syncs| (s.before_start, s.before_stop);
    assert_eq!(kept(Syncs::NO_START), (false, true));
    assert_eq!(kept(Syncs::NO_STOP), (true, false));
}

fn effects(both: f64, no_start: f64, no_stop: f64, none: f64) -> SyncEffects {
    SyncEffects {
        both_ms: both,
        no_start_ms: no_start,
        no_stop_ms: no_stop,
        none_ms: none,
        events_ms: both,
        warmups: 5,
        runs: 20,
    }
}

#[test]
fn the_sync_reading_follows_the_medians() {
    let e = effects(0.2379, 0.2960, 0.0045, 0.0044);
    assert_eq!(e.warmup_bound(), 1.25);
    // A large kernel: the queued warm-ups show, the clock stops early.
    let r = sync_reading(&e);
    assert!(
        r.contains("(3a) reads 1.24x (3): the warm-ups still queued ran inside the clock")
            && r.contains("would make it 1.25x at most"),
        "{r}"
    );
    assert!(!r.contains("more than that bound"), "{r}");
    assert!(
        r.contains("(3b) reads 0.02x (3): the clock stopped once the last launch was queued"),
        "{r}"
    );
    assert!(
        r.contains("Both removed, (1) reads 0.02x (3), within 5% of (3b) alone (0.98x)"),
        "{r}"
    );
    assert!(
        r.contains("the synchronisation before the clock stops is the one that matters more"),
        "{r}"
    );
    // A small kernel: the warm-ups are done before the clock starts.
    let r = sync_reading(&effects(0.0072, 0.0073, 0.0043, 0.0042));
    assert!(r.contains("(3a) is within 5% of (3) (1.01x)"), "{r}");
    assert!(r.contains("(3b) reads 0.60x (3)"), "{r}");
    assert!(
        r.contains("before the clock stops is the one that matters more (0.60x against 1.01x)"),
        "{r}"
    );
    // Past the warm-ups' bound, and the start sync mattering more.
    let r = sync_reading(&effects(1.0, 1.5, 0.98, 0.6));
    assert!(r.contains("reads more than that bound"), "{r}");
    assert!(r.contains("(3b) is within 5% of (3) (0.98x)"), "{r}");
    assert!(
        r.contains("Both removed, (1) reads 0.60x (3), 0.61x (3b) alone"),
        "{r}"
    );
    assert!(
        r.contains("before the clock starts is the one that matters more (1.50x against 0.98x)"),
        "{r}"
    );
    // Directions no removal can cause are named as such.
    let r = sync_reading(&effects(1.0, 0.8, 1.2, 1.0));
    assert!(
        r.contains("faster, which the queued warm-ups cannot cause"),
        "{r}"
    );
    assert!(
        r.contains("slower, which stopping the clock earlier cannot cause"),
        "{r}"
    );
    let r = sync_reading(&effects(1.0, 1.01, 0.99, 1.0));
    assert!(
        r.contains("Neither removal alone moves the figure by more than 5%"),
        "{r}"
    );
    // No time for (3), no ratios.
    assert!(sync_reading(&effects(0.0, 1.0, 1.0, 1.0)).contains("no ratios"));
}

#[test]
fn the_host_workload_check_can_fail() {
    let n = 1000;
    let a = reference::input(n, reference::fill_a);
    let b = reference::input(n, reference::fill_b);
    let mut out = vec![f32::NAN; n];
    reference::vector_add(&mut out, &a, &b);
    assert!(host_workload_failure(&out, n).is_none());
    // An element the loop skipped (still NaN), a wrong one, a short output.
    let mut skipped = out.clone();
    skipped[n - 1] = f32::NAN;
    let f = host_workload_failure(&skipped, n).expect("a skipped element fails");
    assert!(f.detail.contains("999"), "{f}");
    let mut wrong = out.clone();
    wrong[17] += 1.0 / 128.0;
    assert!(host_workload_failure(&wrong, n).is_some());
    assert!(host_workload_failure(&out[..10], n).is_some());
}
