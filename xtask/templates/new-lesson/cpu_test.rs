//! CPU-only tests of the __name__ lesson: the reference on values checked by
//! hand; the check passing a right output and failing a wrong one (an index
//! off by one, an element never written, the last element missed); the sizes
//! on a small and a large L2; the launch shape; the kernel in the Rust PTX.
//! They run everywhere, with no GPU.

use host::__name__::{Kernel, Sizes, check_output, launch_config, reference};
use host::kernels::KernelId;
use host::ptx::{PTX, entries, entry_body};
use kernels_gpu::__name__::*;

/// `x`, `y` and the reference at `n` elements, and what a right kernel
/// writes: the reference rounded to f32.
fn case(n: usize) -> (Vec<f32>, Vec<f32>, Vec<f64>, Vec<f32>) {
    let x = reference::input(n, reference::fill_x);
    let y = reference::input(n, reference::fill_y);
    let want = reference::saxpy(A, &x, &y);
    let right = want.iter().map(|&w| w as f32).collect();
    (x, y, want, right)
}

#[test]
fn the_reference_on_values_checked_by_hand() {
    let got = reference::saxpy(1.5, &[1.0, -2.0, 0.25], &[0.5, 0.25, -1.0]);
    assert_eq!(got, [2.0, -2.75, -0.625]);
}

#[test]
fn the_check_passes_a_right_output() {
    for n in [1, CHECK_ELEMS] {
        let (_, _, want, right) = case(n);
        assert_eq!(check_output(Kernel::__Name__, &right, &want), None);
    }
}

/// The planted bug: a kernel that reads `x[i + 1]` where it means `x[i]`.
/// The fills do not repeat, so the shifted reads give other values and the
/// check names the first wrong index.
#[test]
fn the_check_fails_an_index_off_by_one() {
    let n = CHECK_ELEMS;
    let x = reference::input(n + 1, reference::fill_x);
    let y = reference::input(n, reference::fill_y);
    let want = reference::saxpy(A, &x[..n], &y);
    let off_by_one: Vec<f32> = (0..n).map(|i| A * x[i + 1] + y[i]).collect();
    let failure = check_output(Kernel::__Name__, &off_by_one, &want)
        .expect("an output read from the wrong index must fail the check");
    assert!(failure.to_string().contains("wrong at index"), "{failure}");
    // Most elements differ, not a few: the fills have no period.
    let differ = (0..n)
        .filter(|&i| check_output(Kernel::__Name__, &off_by_one[i..=i], &want[i..=i]).is_some())
        .count();
    assert!(differ > n / 2, "only {differ} of {n} elements differ");
}

/// An element the kernel never wrote still holds the poison (a NaN), and a
/// guard that stops one element short leaves the last one unwritten.
#[test]
fn the_check_fails_an_unwritten_element() {
    let n = CHECK_ELEMS;
    let (_, _, want, mut got) = case(n);
    got[n - 1] = f32::from_bits(u32::MAX);
    let failure = check_output(Kernel::__Name__, &got, &want).expect("a NaN must fail");
    assert!(
        failure
            .to_string()
            .contains(&format!("wrong at index {}", n - 1)),
        "{failure}"
    );
}

#[test]
fn sizes_stream_from_dram_on_a_small_and_a_large_l2() {
    // A T4's 4 MiB L2 keeps the seed's 64 MiB buffers; an H200's 60 MiB
    // L2 doubles them twice, to 256 MiB (4.3x).
    let t4 = Sizes::new(&lab_tests::profile("T4").info(), false);
    assert_eq!(t4.elems, SEED_ELEMS);
    let h200 = Sizes::new(&lab_tests::profile("H200").info(), false);
    assert_eq!(h200.elems, 1 << 26);
    assert_eq!(h200.checked, [CHECK_ELEMS, 1, 1 << 26]);
    let quick = Sizes::new(&lab_tests::profile("H200").info(), true);
    assert_eq!(quick.elems, CHECK_ELEMS);
}

#[test]
fn the_launch_has_one_thread_per_element() {
    for n in [1, CHECK_ELEMS, SEED_ELEMS] {
        let blocks = launch_config(n).grid_dim.0 as usize;
        let threads = THREADS_PER_BLOCK as usize;
        assert!(blocks * threads >= n, "n = {n}: too few threads");
        assert!(
            (blocks - 1) * threads < n,
            "n = {n}: a block with nothing to do"
        );
    }
}

#[test]
fn the_counts_are_per_element() {
    assert_eq!(Kernel::__Name__.bytes(1000), 12_000.0);
    assert_eq!(Kernel::__Name__.flop(1000), 2_000.0);
}

#[test]
fn every_kernel_is_in_the_ptx_and_writes_global_memory() {
    for &kernel in Kernel::ALL {
        assert!(entries(PTX).contains(&kernel.symbol()), "{kernel:?}");
        let body = entry_body(PTX, kernel.symbol()).expect("an entry has a body");
        assert!(body.contains("st.global"), "{body}");
    }
}
