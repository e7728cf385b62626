//! CPU-only tests of the unroll lesson: the host mirrors' counts at the
//! seed's sizes, the reference on hand-checked values, the launch shapes and
//! index maps, the PTX (the lane loop unrolled away) and the CUDA C twins
//! compiling with NVRTC.

use host::kernels::KernelId;
use host::ptx::{PTX, entries, entry_body};
use host::unroll::reference::{self, UnrollStats};
use host::unroll::{
    CHECKED_SIZES, Kernel, PtxCounts, mirror_failure, mirror_lines, ptx_line, ptx_reading,
    timed_reading,
};
use kernels_gpu::unroll::*;

fn stats(loop_control_events: usize, arithmetic_ops: usize) -> UnrollStats {
    UnrollStats {
        loop_control_events,
        arithmetic_ops,
    }
}

#[test]
fn the_mirrors_count_what_the_seed_prints() {
    for (size, plain, unrolled) in [
        (1000, stats(1000, 1000), stats(250, 1000)),
        (4002, stats(4002, 4002), stats(1002, 4002)),
    ] {
        let (a, b) = reference::seed_inputs(size);
        let (mut p, mut u) = (vec![f32::NAN; size], vec![f32::NAN; size]);
        assert_eq!(reference::plain_add(&mut p, &a, &b), plain, "size {size}");
        assert_eq!(
            reference::unrolled_add(&mut u, &a, &b, UNROLL),
            unrolled,
            "size {size}"
        );
        assert!(p.iter().zip(&u).all(|(x, y)| x.to_bits() == y.to_bits()));
    }
    // The seed's fills: a = i, b = 3i at 1000 (so out = 4i); b = 1 at 4002.
    let (a, b) = reference::seed_inputs(1000);
    assert_eq!((a[999], b[999]), (999.0, 2997.0));
    let (a, b) = reference::seed_inputs(4002);
    assert_eq!((a[4001], b[4001]), (4001.0, 1.0));
}

#[test]
fn the_mirror_lines_are_the_seeds() {
    let (lines, facts) = mirror_lines(1000);
    assert_eq!(
        lines,
        [
            "size=1000, UNROLL=4: unrolled_count = (1000/4)*4 = 1000",
            "  plain loop:    1000 loop-control events, 1000 arithmetic ops",
            "  unrolled loop: 250 loop-control events, 1000 arithmetic ops",
            "  overhead reduction: 4x fewer loop-control events (1000 -> 250)",
            "  arithmetic op count identical: true",
            "  every output element identical between plain and unrolled: true",
        ]
    );
    assert_eq!(facts["remainder"], 0);
    let (lines, facts) = mirror_lines(4002);
    assert_eq!(
        lines,
        [
            "size=4002, UNROLL=4: unrolled_count = (4002/4)*4 = 4000, remainder = 2 element(s)",
            "  plain loop:    4002 loop-control events, 4002 arithmetic ops",
            "  unrolled loop: 1002 loop-control events (1000 full groups + 2 remainder), 4002 arithmetic ops",
            "  arithmetic totals match: true (both 4002)",
            "  every output element identical between plain and unrolled: true",
        ]
    );
    assert_eq!(facts["unrolled"]["loop_control_events"], 1002);
}

#[test]
fn the_reference_on_hand_checked_values() {
    let (a, b) = reference::seed_gpu_inputs(SEED_GPU_ELEMS);
    let want: Vec<f32> = (0..16).map(|i| (3 * i) as f32).collect();
    assert_eq!(reference::sum(&a, &b), want);
    // The sums really round: a bit-exact check is sensitive to the order
    // and kind of the operation, not only to gross errors.
    let n = 10_000;
    let (a, b) = (
        reference::filled(n, reference::fill_a),
        reference::filled(n, reference::fill_b),
    );
    let rounded = a
        .iter()
        .zip(&b)
        .filter(|&(&x, &y)| f64::from(x + y) != f64::from(x) + f64::from(y))
        .count();
    assert!(rounded > n / 10, "only {rounded} sums round");
}

#[test]
fn launch_shapes_cover_n_with_no_spare_block() {
    let timed = host::unroll::Sizes::new(&lab_tests::profile("H200").info(), false).timed;
    assert_eq!(
        timed,
        1 << 26,
        "16 Mi floats doubled to 256 MiB a buffer for a 60 MiB L2"
    );
    for &k in Kernel::ALL {
        let per_block = THREADS_PER_BLOCK as usize * k.elems_per_thread();
        for n in [1, SEED_GPU_ELEMS, 1000, 4002, CHECK_ELEMS, timed] {
            let c = k.launch_config(n);
            assert_eq!(c.block_dim, (THREADS_PER_BLOCK, 1, 1));
            let blocks = c.grid_dim.0 as usize;
            assert!(blocks * per_block >= n, "{k:?} at {n}");
            assert!(
                (blocks - 1) * per_block < n,
                "{k:?} at {n}: a block too many"
            );
        }
    }
    assert_eq!(
        Kernel::Unrolled.launch_config(timed).grid_dim.0 as usize,
        timed / ELEMS_PER_UNROLLED_BLOCK
    );
    assert_eq!(
        Kernel::UnrolledVec4.launch_config(timed).grid_dim.0 as usize,
        timed / ELEMS_PER_UNROLLED_VEC_BLOCK
    );
    assert_eq!(ELEMS_PER_UNROLLED_VEC_BLOCK, 4096);
}

/// The elements the launch of `k` over `n` writes, by the kernels' rules on
/// the host: every thread's lanes behind their guards (`element < n` for
/// the scalar kernels; `float4 < n / 4` for the vectorized one), then the
/// vectorized kernel's tail (grid thread g < n % 4 writes n - n % 4 + g).
fn written(k: Kernel, n: usize) -> Vec<usize> {
    let c = k.launch_config(n);
    let (blocks, b) = (c.grid_dim.0 as usize, c.block_dim.0 as usize);
    let mut out = Vec::new();
    for block in 0..blocks {
        for t in 0..b {
            for lane in 0..k.elems_per_thread() {
                let e = k.element(block, b, t, lane);
                let guarded = if k == Kernel::UnrolledVec4 {
                    e / VEC_WIDTH < n / VEC_WIDTH
                } else {
                    e < n
                };
                if guarded {
                    out.push(e);
                }
            }
            if k == Kernel::UnrolledVec4 && block * b + t < n % VEC_WIDTH {
                out.push(n - n % VEC_WIDTH + block * b + t);
            }
        }
    }
    out.sort_unstable();
    out
}

#[test]
fn every_element_is_written_once_tail_included() {
    let sizes = (1..=40).chain([
        1000,
        4002,
        4095,
        4096,
        4097,
        4098,
        4099,
        3 * ELEMS_PER_UNROLLED_VEC_BLOCK + 5,
        CHECK_ELEMS,
    ]);
    for n in sizes {
        for &k in Kernel::ALL {
            assert_eq!(
                written(k, n),
                (0..n).collect::<Vec<_>>(),
                "{k:?} at n = {n}"
            );
        }
    }
    // The check sizes exercise the vectorized kernel's tail: 0, 2 and 3 left.
    assert_eq!(
        CHECKED_SIZES.map(|n| n % VEC_WIDTH),
        [0, 0, 2, 3],
        "{CHECKED_SIZES:?}"
    );
}

#[test]
fn each_index_map_covers_its_block_chunk_once() {
    let b = THREADS_PER_BLOCK as usize;
    for &k in Kernel::ALL {
        let per_block = b * k.elems_per_thread();
        for block in [0, 1, 7] {
            let mut seen: Vec<usize> = (0..b)
                .flat_map(|t| (0..k.elems_per_thread()).map(move |i| k.element(block, b, t, i)))
                .collect();
            seen.sort_unstable();
            let want: Vec<usize> = (block * per_block..(block + 1) * per_block).collect();
            assert_eq!(seen, want, "{k:?} block {block}");
        }
    }
    // The seed's form: thread 1 handles 4..8.
    assert_eq!(Kernel::Unrolled.element(0, b, 1, 0), 4);
    assert_eq!(Kernel::UnrolledCoalesced.element(0, b, 1, 1), 1 + b);
    // The vectorized form: thread 1's first float4 is floats 4..8, its
    // second one block width of float4s later.
    assert_eq!(Kernel::UnrolledVec4.element(0, b, 1, 0), 4);
    assert_eq!(Kernel::UnrolledVec4.element(0, b, 1, 3), 7);
    assert_eq!(Kernel::UnrolledVec4.element(0, b, 1, 4), 4 * (b + 1));
    assert_eq!(
        Kernel::UnrolledVec4.element(2, b, 0, 0),
        2 * ELEMS_PER_UNROLLED_VEC_BLOCK
    );
}

#[test]
fn sectors_per_warp_access_tell_the_two_maps_apart() {
    assert_eq!(Kernel::OnePerThread.sectors_per_warp_access(0), 4);
    for i in 0..UNROLL {
        assert_eq!(Kernel::UnrolledCoalesced.sectors_per_warp_access(i), 4);
        assert_eq!(Kernel::Unrolled.sectors_per_warp_access(i), 16);
        // 32 contiguous float4s: 512 bytes, 16 sectors, every byte used.
        assert_eq!(Kernel::UnrolledVec4.sectors_per_warp_access(i), 16);
    }
    assert_eq!(Kernel::UnrolledVec4.accesses_per_thread(), UNROLL);
    assert_eq!(Kernel::UnrolledVec4.bytes_per_warp_access(), 512);
    assert_eq!(Kernel::Unrolled.bytes_per_warp_access(), 128);
    assert_eq!(
        (
            Kernel::OnePerThread.accesses_per_thread(),
            Kernel::Unrolled.accesses_per_thread()
        ),
        (1, UNROLL)
    );
}

#[test]
fn the_ptx_has_every_kernel_and_no_loop() {
    let found = entries(PTX);
    for &k in Kernel::ALL {
        assert!(found.contains(&k.symbol()), "missing {}", k.symbol());
    }
    let one = PtxCounts::of_kernel(Kernel::OnePerThread);
    assert_eq!(
        (one.add_f32, one.setp, one.backward_bra),
        (1, 1, 0),
        "{one:?}"
    );
    assert_eq!((one.ld_global, one.st_global), (2, 1));
    for k in [Kernel::Unrolled, Kernel::UnrolledCoalesced] {
        let c = PtxCounts::of_kernel(k);
        assert_eq!(c.backward_bra, 0, "{k:?}: a loop is left: {c:?}");
        assert_eq!(c.add_f32, UNROLL, "{k:?}: {c:?}");
        assert_eq!(c.setp, UNROLL, "{k:?}: one guard per lane: {c:?}");
        assert_eq!((c.ld_global, c.st_global), (2 * UNROLL, UNROLL), "{k:?}");
        assert_eq!((c.ld_global_v4, c.st_global_v4), (0, 0), "{k:?}");
    }
    // Unrolled and vectorized: four float4s per thread, each one 16-byte
    // load per input and one 16-byte store, no loop; one guard per float4
    // and one for the tail; the tail's two 4-byte loads and one store.
    let k = Kernel::UnrolledVec4;
    let c = PtxCounts::of_kernel(k);
    assert_eq!(c.backward_bra, 0, "a loop is left: {c:?}");
    assert_eq!(
        (c.ld_global_v4, c.st_global_v4),
        (2 * UNROLL, UNROLL),
        "{c:?}"
    );
    assert_eq!(
        (c.ld_global, c.st_global),
        (2 * UNROLL + 2, UNROLL + 1),
        "{c:?}"
    );
    assert_eq!((c.setp, c.add_f32), (k.guards(), k.adds()), "{c:?}");
    assert_eq!((k.guards(), k.adds()), (UNROLL + 1, 4 * UNROLL + 1));
    assert_eq!(c.memory_per_elem(k), 0.75, "{c:?}");
    assert_eq!(
        PtxCounts::of_kernel(Kernel::UnrolledCoalesced).memory_per_elem(Kernel::UnrolledCoalesced),
        3.0
    );
    let line = ptx_line(k, c);
    assert!(
        line.contains("ld.global 10 (8 of 16 bytes), st.global 5 (4 of 16 bytes)")
            && line.contains("0.75 memory instructions"),
        "{line}"
    );
}

#[test]
fn v4_accesses_are_told_apart() {
    let body = "\
{
\tld.global.v4.b32 \t{%r4, %r5, %r6, %r7}, [%rd21];
\tld.global.nc.v4.f32 \t{%r8, %r9, %r10, %r11}, [%rd22];
\tld.global.v2.b64 \t{%rd1, %rd2}, [%rd22];
\tld.global.b32 \t%r1, [%rd3];
\tst.global.v4.b32 \t[%rd23], {%r12, %r13, %r14, %r15};
\tst.global.b32 \t[%rd12], %r54;
}";
    let c = PtxCounts::of(body);
    assert_eq!(
        (c.ld_global, c.ld_global_v4, c.st_global, c.st_global_v4),
        (4, 2, 2, 1),
        "{c:?}"
    );
}

#[test]
fn ptx_counts_find_a_back_edge() {
    let body = "\
{
\tsetp.ge.u64 \t%p1, %rd1, %rd2;
\t@%p1 bra \t$L__BB0_3;
$L__BB0_2:
\tld.global.b32 \t%r1, [%rd3];
\tadd.rn.f32 \t%r2, %r1, %r1;
\tadd.f32 \t%r3, %r2, %r1;
\tadd.s64 \t%rd3, %rd3, 4;
\tst.global.b32 \t[%rd3], %r2;
\tsetp.lt.u64 \t%p2, %rd3, %rd4;
\t@%p2 bra \t$L__BB0_2;
$L__BB0_3:
\tret;
}";
    let c = PtxCounts::of(body);
    assert_eq!(
        c,
        PtxCounts {
            setp: 2,
            bra: 2,
            uncond_bra: 0,
            backward_bra: 1,
            add_f32: 2,
            ld_global: 1,
            st_global: 1,
            ld_global_v4: 0,
            st_global_v4: 0,
        }
    );
}

#[test]
fn the_twins_compile_with_nvrtc_and_show_the_same() {
    let Some(ptx) = lab_tests::twin_ptx_on_cpu::<host::unroll::UnrollLesson>((7, 5)) else {
        return;
    };
    // `#pragma unroll` did the same as rustc: no loop in the twins either.
    for k in [
        Kernel::Unrolled,
        Kernel::UnrolledCoalesced,
        Kernel::UnrolledVec4,
    ] {
        let counts = PtxCounts::of(entry_body(&ptx, k.symbol()).unwrap());
        assert_eq!(counts.backward_bra, 0, "{k:?}: {counts:?}");
        assert_eq!(counts.add_f32, k.adds(), "{k:?}: {counts:?}");
    }
    // The twin of the combination moves its float4s with 16-byte accesses
    // too, so the two sides' instruction mixes match.
    let c = PtxCounts::of(entry_body(&ptx, Kernel::UnrolledVec4.symbol()).unwrap());
    assert_eq!(
        (c.ld_global_v4, c.st_global_v4),
        (2 * UNROLL, UNROLL),
        "{c:?}"
    );
}

#[test]
fn ptx_counts_tell_unconditional_branches_apart() {
    let body = "\
{
\tsetp.lt.u64 \t%p1, %rd13, %rd10;
\t@%p1 bra \t$L__BB37_2;
\tbra.uni \t$L__BB37_1;
$L__BB37_2:
\tadd.rn.f32 \t%r6, %r4, %r5;
$L__BB37_1:
\tret;
}";
    let c = PtxCounts::of(body);
    assert_eq!((c.bra, c.uncond_bra, c.backward_bra), (2, 1, 0), "{c:?}");
}

#[test]
fn a_mirror_that_disagrees_fails() {
    let (_, facts) = mirror_lines(4002);
    assert!(mirror_failure(&facts).is_none());
    let mut bad = facts.clone();
    bad["outputs_identical"] = false.into();
    assert!(
        mirror_failure(&bad)
            .unwrap()
            .detail
            .contains("outputs differ")
    );
    let mut bad = facts.clone();
    bad["unrolled"]["arithmetic_ops"] = 4001.into();
    assert!(mirror_failure(&bad).unwrap().detail.contains("adds"));
    let mut bad = facts;
    bad["unrolled"]["loop_control_events"] = 4002.into();
    assert!(
        mirror_failure(&bad)
            .unwrap()
            .detail
            .contains("not 4002 and 1002")
    );
}

#[test]
fn the_ptx_reading_follows_the_counts() {
    let as_written = |k: Kernel| PtxCounts {
        setp: k.guards(),
        bra: k.guards(),
        add_f32: k.adds(),
        ld_global: 2 * k.accesses_per_thread(),
        st_global: k.accesses_per_thread(),
        ld_global_v4: if k == Kernel::UnrolledVec4 {
            2 * UNROLL
        } else {
            0
        },
        st_global_v4: if k == Kernel::UnrolledVec4 { UNROLL } else { 0 },
        ..PtxCounts::default()
    };
    let mut good: Vec<_> = Kernel::ALL.iter().map(|&k| (k, as_written(k))).collect();
    // The vectorized kernel's tail: two 4-byte loads and a store more.
    good[3].1.ld_global += 2;
    good[3].1.st_global += 1;
    let r = ptx_reading(&good);
    assert!(r.contains("No backward branch"), "{r}");
    assert!(r.contains("What remains is what each source writes"), "{r}");
    assert!(!r.contains("unconditional"), "{r}");
    assert!(
        r.contains("8 16-byte loads and 4 16-byte stores in every PTX shown: 0.75 memory instructions per element \
                    against 3.00 in add_unrolled_4_coalesced, 4.0x fewer"),
        "{r}"
    );
    assert!(
        r.contains("Its adds are 1.00 per element (17 add.f32 for 16 elements and the tail's one), as many as before"),
        "{r}"
    );
    let mut looped = good.clone();
    looped[1].1.backward_bra = 1;
    looped[1].1.bra += 1;
    looped[1].1.setp += 1;
    let r = ptx_reading(&looped);
    assert!(r.contains("is left in add_unrolled_4:"), "{r}");
    assert!(r.contains("not exactly those each source writes"), "{r}");
    let mut layout = good.clone();
    layout[0].1.bra += 1;
    layout[0].1.uncond_bra = 1;
    let r = ptx_reading(&layout);
    assert!(
        r.contains("What remains is what each source writes") && r.contains("unconditional bra"),
        "{r}"
    );
    // A vectorized kernel whose loads were split reads so, and so does one
    // whose float4 adds were fused into fewer instructions.
    let mut split = good.clone();
    split[3].1.ld_global_v4 = 4;
    let r = ptx_reading(&split);
    assert!(r.contains("the vector accesses were split"), "{r}");
    let mut fewer_adds = good.clone();
    fewer_adds[3].1.add_f32 = 9;
    let r = ptx_reading(&fewer_adds);
    assert!(
        r.contains("the arithmetic instruction count fell too"),
        "{r}"
    );
    // Without the vectorized kernel there is no sentence about it.
    let r = ptx_reading(&good[..3]);
    assert!(!r.contains("vectorized add"), "{r}");
    // The embedded PTX reads as written, with no loop.
    let ours: Vec<_> = Kernel::ALL
        .iter()
        .map(|&k| (k, PtxCounts::of_kernel(k)))
        .collect();
    let r = ptx_reading(&ours);
    assert!(
        r.contains("No backward branch")
            && r.contains("What remains is what each source writes")
            && r.contains("4.0x fewer"),
        "{r}"
    );
}

#[test]
fn the_timed_reading_follows_the_medians() {
    // The recorded H200 medians: consecutive slower, coalesced faster.
    let r = timed_reading(0.2379, 0.3702, 0.2200, 0.2210);
    assert!(
        r.contains("consecutive unrolled add is 56% slower than it (time ratio 1.56)"),
        "{r}"
    );
    assert!(
        r.contains("the coalesced one 8% faster than it (0.92)"),
        "{r}"
    );
    assert!(
        r.contains("is the slower one here, as its 4x the sectors"),
        "{r}"
    );
    assert!(
        r.contains("The unrolled and vectorized add (the seed's combination) is 8% faster than one element per thread \
                    (0.93) and within 5% of the coalesced unrolled add it vectorizes (1.00)")
            && r.contains("do not change the time by more than 5%"),
        "{r}"
    );
    let r = timed_reading(1.0, 1.0, 1.02, 0.9);
    assert!(
        r.contains("is within 5% of it") && r.contains("the two forms are within 5%"),
        "{r}"
    );
    assert!(
        r.contains("13% faster than the coalesced unrolled add")
            && r.contains("the fewer instructions show as time"),
        "{r}"
    );
    let r = timed_reading(1.0, 1.0, 1.0, 1.2);
    assert!(
        r.contains("the slower one despite its fewer instructions"),
        "{r}"
    );
    let r = timed_reading(1.0, 0.8, 1.0, 1.0);
    assert!(
        r.contains("25% faster") && r.contains("is the faster one here, despite"),
        "{r}"
    );
}

#[test]
fn add_unrolled_4_adds_its_lanes_to_the_base() {
    // Through opaque_index, `4g + lane` stays an add: after LLVM's `or.b64`
    // ptxas branched around lanes 1 and 2 ("Fast Rust kernels").
    let body = entry_body(PTX, Kernel::Unrolled.symbol()).unwrap();
    assert!(
        !body.contains("or.b64"),
        "4g + lane must not be an or:\n{body}"
    );
}
