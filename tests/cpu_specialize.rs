//! CPU-only tests of the specialize lesson: the references on hand-checked
//! values, the inputs (nonzero, rounding), the byte model and launch shape,
//! the PTX (one loop-free entry per N with exactly N fma, bodies growing
//! with N, a loop in the runtime kernel), the host instantiations in the
//! test binary's own symbol table, and the CUDA C twins under NVRTC; the
//! linking section's evidence: two NVRTC units with relocatable device
//! code declare the template's instantiations `.weak` (WEAK in ptxas's ELF)
//! and the ordinary control `.visible` (GLOBAL), Rust's kernels are
//! `.visible .entry` with nothing `.weak`, and the readings follow the
//! counts.

use host::asm::sass_instructions;
use host::kernels::KernelId;
use host::ptx::{PTX, entries, entry_body};
use host::specialize::weak;
use host::specialize::{
    Kernel, backward_branches, binary, body_evidence, bytes, flop, host_reading, loop_fma,
    ptx_instructions, ptx_reading, reference, specialization_holds, timed_reading,
};
use kernels_gpu::specialize::*;

#[test]
fn the_references_on_hand_checked_values() {
    // One dot (count 1): the seed's [1,2,3,4].[5,6,7,8] = 70.
    let (x, y) = ([1.0f32, 2.0, 3.0, 4.0], [5.0f32, 6.0, 7.0, 8.0]);
    assert_eq!(reference::dot_fma_f32(&x, &y, 4, 1, 0), 70.0);
    // Two dots of length 2 in the structure-of-arrays layout: element k of
    // dot v at k * 2 + v, so dot 0 is 1*5 + 3*7 = 26 and dot 1 is 2*6 + 4*8
    // = 44.
    assert_eq!(reference::dots_fma_f32(&x, &y, 2, 2), vec![26.0, 44.0]);
    assert_eq!(reference::dot_f64(&x, &y, 2, 2, 1), (44.0, 44.0));
    // The magnitude sums |products|: 1*(-5) + 3*7 = 16, magnitude 26.
    let neg = [5.0f32, 6.0, -7.0, 8.0];
    assert_eq!(reference::dot_f64(&x, &neg, 2, 2, 0), (5.0 - 21.0, 26.0));
    // gamma_n: n u / (1 - n u).
    let u = 2f64.powi(-24);
    assert_eq!(reference::error_bound(16, 1.0), 16.0 * u / (1.0 - 16.0 * u));
}

#[test]
fn the_inputs_are_nonzero_odd_multiples_of_2_pow_minus_24() {
    for i in 0..100_000 {
        for v in [reference::fill_x(i), reference::fill_y(i)] {
            assert!(v != 0.0 && v.abs() < 1.0, "{i}: {v}");
            let scaled = f64::from(v) * 2f64.powi(24);
            assert_eq!(scaled.fract(), 0.0);
            assert_eq!((scaled as i64).rem_euclid(2), 1, "{i}: {v}");
        }
    }
}

#[test]
fn fused_and_unfused_sums_differ_so_the_bit_check_bites() {
    // Were a kernel to multiply and add separately (what rustc emits for
    // `a * b + c`), some dot would come out different from the fma
    // reference: the check must see it.
    let n = 16;
    let x = reference::input(n * CHECK_DOTS, reference::fill_x);
    let y = reference::input(n * CHECK_DOTS, reference::fill_y);
    let differing = (0..CHECK_DOTS)
        .filter(|&v| {
            let mut unfused = 0.0f32;
            for k in 0..n {
                unfused += x[k * CHECK_DOTS + v] * y[k * CHECK_DOTS + v];
            }
            unfused.to_bits() != reference::dot_fma_f32(&x, &y, n, CHECK_DOTS, v).to_bits()
        })
        .count();
    assert!(differing > CHECK_DOTS / 10, "only {differing} dots differ");
}

#[test]
fn the_fma_reference_is_within_the_rounding_bound_of_f64() {
    for &n in SPECIALIZED_N {
        let x = reference::input(n * CHECK_DOTS, reference::fill_x);
        let y = reference::input(n * CHECK_DOTS, reference::fill_y);
        for v in 0..CHECK_DOTS {
            let got = f64::from(reference::dot_fma_f32(&x, &y, n, CHECK_DOTS, v));
            let (exact, magnitude) = reference::dot_f64(&x, &y, n, CHECK_DOTS, v);
            assert!(
                (got - exact).abs() <= reference::error_bound(n, magnitude),
                "N = {n}, dot {v}"
            );
        }
    }
}

#[test]
fn byte_and_flop_models_and_sizes() {
    // Each dot of length N: N floats of x, N of y, one result.
    assert_eq!(bytes(2, 1), 20.0);
    assert_eq!(bytes(16, 10), 1320.0);
    assert_eq!(flop(16, 10), 320.0);
    // On an H200 (60 MiB L2) x and y are 64 MiB doubled to 256 MiB, and
    // every length's dots fill them.
    let sizes = host::specialize::Sizes::new(&lab_tests::profile("H200").info(), false);
    assert_eq!(sizes.input_floats * 4, 256 << 20);
    for &n in SPECIALIZED_N {
        assert_eq!(sizes.dots(n) * n, sizes.input_floats);
    }
}

#[test]
fn launch_shape_has_one_thread_per_dot() {
    let sizes = host::specialize::Sizes::new(&lab_tests::profile("H200").info(), false);
    for count in [1, CHECK_DOTS, sizes.dots(2)] {
        let c = Kernel::launch_config(count);
        let blocks = c.grid_dim.0 as usize;
        assert_eq!(c.block_dim.0, THREADS_PER_BLOCK);
        assert!(blocks * THREADS_PER_BLOCK as usize >= count);
        assert!((blocks - 1) * (THREADS_PER_BLOCK as usize) < count);
    }
}

#[test]
fn the_ptx_has_one_unrolled_entry_per_n_and_a_loop_in_the_runtime_kernel() {
    let found = entries(PTX);
    for &k in Kernel::ALL {
        assert!(found.contains(&k.symbol()), "missing {}", k.symbol());
    }
    let bodies: Vec<_> = Kernel::ALL.iter().map(|&k| body_evidence(PTX, k)).collect();
    assert_eq!(specialization_holds(&bodies), Vec::<String>::new());
    for (b, &n) in bodies.iter().zip(SPECIALIZED_N) {
        assert_eq!(
            (b.fma, b.loads, b.backward_branches),
            (n, 2 * n, 0),
            "{b:?}"
        );
    }
    let runtime = &bodies[4];
    assert!(runtime.backward_branches >= 1, "{runtime:?}");
    // Every kernel reads its inputs on the read-only path, as the C twin's
    // const __restrict__ does.
    for &k in Kernel::ALL {
        let body = entry_body(PTX, k.symbol()).unwrap();
        assert!(body.contains("ld.global.nc"), "{}", k.symbol());
        assert!(
            !body.contains("mul.rn.f32"),
            "{}: an unfused multiply",
            k.symbol()
        );
    }
}

#[test]
fn the_evidence_check_notices_a_loop_and_a_wrong_count() {
    let mut bodies: Vec<_> = Kernel::ALL.iter().map(|&k| body_evidence(PTX, k)).collect();
    bodies[1].backward_branches = 1;
    bodies[2].fma = 7;
    bodies[4].backward_branches = 0;
    let wrong = specialization_holds(&bodies);
    assert_eq!(wrong.len(), 3, "{wrong:?}");
}

#[test]
fn ptx_counters_on_a_hand_written_body() {
    let body = "\
{
\t.reg .pred \t%p<3>;
\tld.param.b64 \t%rd1, [k_param_0];
\t@%p1 bra \t$L__BB0_3;
$L__BB0_1:                  // loop header
\t.pragma \"nounroll\";
\tfma.rn.f32 \t%r1, %r2, %r3, %r1;
\t@%p2 bra \t$L__BB0_1;
\tbra.uni \t$L__BB0_3;
$L__BB0_3:
\tret;
}";
    // ld.param, bra, fma, bra, bra.uni, ret: directives and labels excluded.
    assert_eq!(ptx_instructions(body), 6);
    // Only the branch back to $L__BB0_1 goes backward, over one fma.
    assert_eq!(backward_branches(body), 1);
    assert_eq!(loop_fma(body), vec![1]);
}

#[test]
fn loop_fma_counts_each_trip_of_a_main_and_a_remainder_loop() {
    let body = "\
$L__BB0_5:
\tfma.rn.f32 \t%r1, %r2, %r3, %r1;
\tfma.rn.f32 \t%r1, %r2, %r3, %r1;
\tfma.rn.f32 \t%r1, %r2, %r3, %r1;
\t@%p4 bra \t$L__BB0_6;
\tbra.uni \t$L__BB0_5;
$L__BB0_6:
\tfma.rn.f32 \t%r1, %r2, %r3, %r1;
\t@%p1 bra \t$L__BB0_9;
$L__BB0_8:
\tfma.rn.f32 \t%r1, %r2, %r3, %r1;
\t@%p6 bra \t$L__BB0_8;
$L__BB0_9:
\tret;";
    // The forward branches to $L__BB0_6 and $L__BB0_9 are not loops; the
    // fma between the loops belongs to neither.
    assert_eq!(loop_fma(body), vec![3, 1]);
}

#[test]
fn the_runtime_kernel_has_a_main_loop_and_a_one_term_remainder() {
    let b = body_evidence(PTX, Kernel::Runtime);
    match b.fma_per_loop[..] {
        [main, 1] => assert!(main > 1, "{b:?}"),
        _ => panic!("not a main and a remainder loop: {b:?}"),
    }
    // Every fma of the body is in one of its loops.
    assert_eq!(b.fma_per_loop.iter().sum::<usize>(), b.fma, "{b:?}");
}

fn symbol(n: usize, address: u64, size: u64, demangled: &str) -> binary::HostSymbol {
    binary::HostSymbol {
        n,
        mangled: format!("_ZN{address}"),
        demangled: demangled.to_string(),
        address,
        size,
    }
}

#[test]
fn the_host_reading_follows_the_symbols() {
    let legacy = "host::specialize::binary::dot_specialized::h0123";
    let good: Vec<_> = [(2, 27), (4, 52), (8, 102), (16, 208)]
        .iter()
        .enumerate()
        .map(|(i, &(n, size))| symbol(n, 0x1000 + 0x100 * i as u64, size, legacy))
        .collect();
    let text = host_reading(&good).unwrap();
    assert!(
        text.starts_with("4 instantiations at 4 distinct addresses"),
        "{text}"
    );
    assert!(
        text.contains("(27, 52, 102, 208 bytes) grow with N"),
        "{text}"
    );
    assert!(text.contains("legacy"), "{text}");
    // v0 names, sizes that do not grow.
    let mut v0 = good.clone();
    for s in &mut v0 {
        s.demangled = format!("host::specialize::binary::dot_specialized::<{}>", s.n);
        s.size = 50;
    }
    let text = host_reading(&v0).unwrap();
    assert!(text.contains("do not grow with N"), "{text}");
    assert!(text.contains("v0 mangling"), "{text}");
    // Two N at one address, or an N missing: a failure, not a reading.
    let mut folded = good.clone();
    folded[1].address = folded[0].address;
    assert!(host_reading(&folded).is_err());
    assert!(host_reading(&good[..3]).is_err());
}

#[test]
fn the_ptx_reading_reports_the_loops_or_what_is_wrong() {
    let bodies: Vec<_> = Kernel::ALL.iter().map(|&k| body_evidence(PTX, k)).collect();
    let mut made_up = bodies.clone();
    made_up[4].fma_per_loop = vec![4, 1];
    let text = ptx_reading(&made_up, &[]);
    assert!(
        text.contains("with 2 loop(s) (4 and 1 fma a trip)"),
        "{text}"
    );
    let text = ptx_reading(&bodies, &["dot_specialized_4: still has a loop".into()]);
    assert!(text.starts_with("The PTX does not show"), "{text}");
}

#[test]
fn the_timed_reading_follows_the_ratios_and_the_loops() {
    let ratios = [(2, 1.24), (4, 1.27), (8, 1.0), (16, 1.01)];
    let text = timed_reading(&ratios, &[8, 1]);
    assert!(
        text.contains("N = 2: 1.24x, N = 4: 1.27x, N = 8: 1.00x, N = 16: 1.01x"),
        "{text}"
    );
    assert!(
        text.contains("At N = 2, 4, dot_runtime is over 5% slower."),
        "{text}"
    );
    assert!(
        text.contains("At N = 8, 16, the two are within 5%."),
        "{text}"
    );
    assert!(
        text.contains("N = 2, 4 run only in the remainder loop."),
        "{text}"
    );
    assert!(
        text.contains("N = 8, 16 run only in the main loop."),
        "{text}"
    );
    assert!(
        text.contains("exactly those that never enter the main loop"),
        "{text}"
    );
    // Another unroll factor and other timings: nothing claimed that the
    // figures do not show.
    let text = timed_reading(&[(2, 1.0), (4, 0.9), (8, 1.3), (16, 1.0)], &[4, 1]);
    assert!(
        text.contains("At N = 8, dot_runtime is over 5% slower."),
        "{text}"
    );
    assert!(
        text.contains("At N = 4, dot_runtime is over 5% faster."),
        "{text}"
    );
    assert!(
        text.contains("N = 2 run only in the remainder loop."),
        "{text}"
    );
    assert!(
        text.contains("N = 4, 8, 16 run only in the main loop."),
        "{text}"
    );
    assert!(!text.contains("exactly those"), "{text}");
    let text = timed_reading(&ratios, &[1]);
    assert!(text.contains("1 loop(s), 1 fma a trip"), "{text}");
    assert!(!text.contains("remainder"), "{text}");
}

#[test]
fn sass_counter_on_cuobjdump_lines() {
    // As asm::sass passes them on: one trimmed line per instruction.
    let sass = "\
/*0000*/                   LDC R1, c[0x0][0x28] ;                         /* 0x00000a00ff017b82 */
/*0010*/                   S2R R2, SR_TID.X ;                             /* 0x0000000000027919 */
/*0020*/                   FFMA R5, R2, R3, R4 ;                          /* 0x0000000000027919 */
/*0030*/                   EXIT ;                                         /* 0x000000000000794d */
/*0040*/                   BRA 0x40;                                      /* 0xfffffffc00fc7947 */
/*0050*/                   NOP;                                           /* 0x0000000000007918 */";
    // LDC, S2R, FFMA, EXIT: the padding and the self-branch are not code.
    assert_eq!(sass_instructions(sass), 4);
    // A branch elsewhere is an instruction.
    assert_eq!(
        sass_instructions("/*0040*/  @P0 BRA 0x10 ;  /* 0x0 */\n/*0050*/  BRA 0x20;  /* 0x0 */"),
        2
    );
}

/// Where ptxas and cuobjdump are found, the SASS bodies grow with N too.
#[test]
fn sass_bodies_grow_with_n_where_the_tools_are() {
    let mut counts = Vec::new();
    for &n in SPECIALIZED_N {
        match host::asm::sass(PTX, "sm_90", Kernel::Specialized(n).symbol()).unwrap() {
            Some(text) => counts.push(sass_instructions(&text)),
            None => {
                eprintln!("skipped: ptxas or cuobjdump not found");
                return;
            }
        }
    }
    println!("SASS instructions, sm_90: {counts:?}");
    assert!(counts.windows(2).all(|w| w[0] < w[1]), "{counts:?}");
}

#[test]
fn the_host_instantiations_are_four_symbols_in_this_binary() {
    let exe = std::env::current_exe().unwrap();
    let symbols = binary::host_symbols(&exe).unwrap();
    for s in &symbols {
        println!(
            "N = {:<2} {:016x} {:>4} bytes  {}",
            s.n, s.address, s.size, s.demangled
        );
    }
    let mapped: Vec<_> = symbols.iter().filter(|s| s.n != 0).collect();
    let ns: Vec<usize> = mapped.iter().map(|s| s.n).collect();
    assert_eq!(ns, vec![2, 4, 8, 16], "{symbols:#?}");
    let mut addresses: Vec<u64> = mapped.iter().map(|s| s.address).collect();
    addresses.dedup();
    assert_eq!(addresses.len(), 4, "distinct addresses");
    let mut names: Vec<&str> = mapped.iter().map(|s| s.mangled.as_str()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 4, "distinct symbols");
    for s in &mapped {
        assert!(s.size > 0, "{s:?}");
        assert!(s.demangled.contains("dot_specialized"), "{s:?}");
    }
}

#[test]
fn a_file_without_symbols_is_an_error_not_a_panic() {
    let dir = std::env::temp_dir().join(format!("lab-specialize-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let junk = dir.join("not-a-binary");
    std::fs::write(&junk, b"plain text").unwrap();
    assert!(binary::host_symbols(&junk).is_err());
    assert!(binary::host_symbols(&dir.join("missing")).is_err());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_twins_compile_with_nvrtc_and_show_the_same() {
    let Some(ptx) = lab_tests::twin_ptx_on_cpu::<host::specialize::SpecializeLesson>((7, 5)) else {
        return;
    };
    // The C side shows the same specialization.
    let bodies: Vec<_> = Kernel::ALL
        .iter()
        .map(|&k| body_evidence(&ptx, k))
        .collect();
    assert_eq!(specialization_holds(&bodies), Vec::<String>::new());
}

/// NVRTC's PTX of the two linkage units (or the control pair), or `None`
/// (skipped) where NVRTC is missing, as the other NVRTC tests do.
fn linkage_units(plain: bool) -> Option<Vec<String>> {
    if host::nvrtc::require_nvrtc().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run this test: NVRTC is missing"
        );
        eprintln!("skipped: NVRTC is not on the loader path");
        return None;
    }
    Some(weak::unit_ptx((7, 5), plain).unwrap_or_else(|e| panic!("{e}")))
}

#[test]
fn a_template_instantiated_in_two_units_is_weak_in_both() {
    let Some(units) = linkage_units(true) else {
        return;
    };
    let mut instantiations = Vec::new();
    for (unit, ptx) in weak::UNITS.iter().zip(&units) {
        let functions = weak::ptx_functions(ptx);
        let mut ns: Vec<(usize, String)> = Vec::new();
        for f in &functions {
            if let Some(n) = weak::dot_linked_n(&f.name) {
                assert_eq!(f.linkage, weak::Linkage::Weak, "{unit}: {f:?}");
                ns.push((n, f.name.clone()));
            }
        }
        ns.sort();
        assert_eq!(
            ns.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            vec![2, 4],
            "{unit}"
        );
        instantiations.push(ns);
        // The ordinary function: an external definition in each unit.
        assert!(
            functions.iter().any(
                |f| f.name.starts_with("_Z10dot4_plain") && f.linkage == weak::Linkage::Visible
            ),
            "{unit}: {functions:?}"
        );
        assert!(
            functions
                .iter()
                .any(|f| f.name == *unit && f.entry && f.linkage == weak::Linkage::Visible),
            "{unit}"
        );
    }
    // The same mangled names in both units: one symbol for the linker to
    // keep once.
    assert_eq!(instantiations[0], instantiations[1]);
}

#[test]
fn ptxas_keeps_the_instantiations_weak_and_the_plain_function_global() {
    let Some(units) = linkage_units(true) else {
        return;
    };
    for ptx in &units {
        let Some(cubin) = weak::relocatable_cubin(ptx, "sm_75").unwrap() else {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must run this test: ptxas is missing"
            );
            eprintln!("skipped: ptxas not found");
            return;
        };
        let functions = weak::cubin_functions(&cubin).unwrap();
        let binding = |pick: &dyn Fn(&str) -> bool| -> Vec<weak::Binding> {
            functions
                .iter()
                .filter(|f| pick(&f.name))
                .map(|f| f.binding)
                .collect()
        };
        assert_eq!(
            binding(&|n| weak::dot_linked_n(n).is_some()),
            vec![weak::Binding::Weak; 2],
            "{functions:?}"
        );
        assert!(
            binding(&|n| n == "_Z10dot4_plainPKfS0_").contains(&weak::Binding::Global),
            "{functions:?}"
        );
    }
}

#[test]
fn rust_kernels_are_visible_entries_and_nothing_is_weak() {
    let (kernels, weak_symbols) = weak::rust_ptx_linkage(PTX);
    // In the PTX's order (rustc's), which need not be the lesson's.
    let mut names: Vec<&str> = kernels.iter().map(|f| f.name.as_str()).collect();
    names.sort_by_key(|n| SPECIALIZED_SYMBOLS.iter().position(|s| s == n));
    assert_eq!(names, SPECIALIZED_SYMBOLS);
    assert!(
        kernels
            .iter()
            .all(|f| f.entry && f.linkage == weak::Linkage::Visible)
    );
    assert_eq!(weak_symbols, 0);
}

#[test]
fn the_linkage_reading_follows_the_counts() {
    let one = weak::Linked {
        definitions: vec![(2, 1), (4, 1)],
        outputs: vec![
            ("unit_a".into(), vec![70.0, 17.0]),
            ("unit_b".into(), vec![70.0, 17.0]),
        ],
    };
    let refused: Result<(), String> =
        Err(format!("Multiple definition of '{}'", weak::PLAIN_MANGLED));
    let text = host::specialize::linkage_reading(&one, &refused).unwrap();
    assert!(text.contains("one definition"), "{text}");
    // A link error that does not name dot4_plain is not its refusal.
    assert!(host::specialize::linkage_reading(&one, &Err("out of memory".into())).is_err());
    let two = weak::Linked {
        definitions: vec![(2, 2), (4, 1)],
        ..one.clone()
    };
    assert!(host::specialize::linkage_reading(&two, &refused).is_err());
    assert!(host::specialize::linkage_reading(&one, &Ok(())).is_err());
    let wrong = weak::Linked {
        outputs: vec![("unit_a".into(), vec![70.0, 18.0])],
        ..one
    };
    assert!(host::specialize::linkage_reading(&wrong, &refused).is_err());
}

#[test]
fn the_linked_reference_is_the_hand_checked_dots() {
    assert_eq!(weak::linked_reference(), weak::LINKED_EXPECTED.to_vec());
    // The unit source names its kernel and switches the control on.
    let a = weak::unit_source("unit_a", false);
    assert!(a.starts_with("#define UNIT_KERNEL unit_a\n"), "{a}");
    assert!(!a.contains("#define PLAIN_IN_EVERY_UNIT"));
    assert!(weak::unit_source("unit_b", true).contains("#define PLAIN_IN_EVERY_UNIT\n"));
    assert_eq!(
        weak::source_name("_Z10dot_linkedILi2EEfPKfS1_"),
        "dot_linked<2>"
    );
    assert_eq!(weak::source_name(weak::PLAIN_MANGLED), "dot4_plain");
    assert_eq!(weak::source_name("_Z10dot4_plainPKfS0_$1"), "dot4_plain$1");
    assert_eq!(weak::source_name("unit_a"), "unit_a");
}

#[test]
fn the_declarations_check_bites() {
    let Some(units) = linkage_units(true) else {
        return;
    };
    let mut evidence: Vec<weak::UnitEvidence> = weak::UNITS
        .iter()
        .zip(&units)
        .map(|(u, ptx)| weak::UnitEvidence {
            unit: format!("{u}.cu"),
            ptx: weak::ptx_functions(ptx),
            elf: None,
        })
        .collect();
    assert_eq!(weak::declarations_wrong(&evidence), Vec::<String>::new());
    // With ptxas's ELF symbols too, where ptxas is found.
    for (u, ptx) in evidence.iter_mut().zip(&units) {
        u.elf = weak::relocatable_cubin(ptx, "sm_75")
            .unwrap()
            .map(|cubin| weak::cubin_functions(&cubin).unwrap());
    }
    assert_eq!(weak::declarations_wrong(&evidence), Vec::<String>::new());
    if let Some(line) = weak::elf_line(&evidence[0]) {
        eprintln!("unit_a.cu ELF: {line}");
        assert!(line.contains("dot_linked<4> WEAK"), "{line}");
        assert!(line.contains("dot4_plain GLOBAL"), "{line}");
    }
    let line = weak::ptx_line(&evidence[0]);
    eprintln!("unit_a.cu PTX: {line}");
    for want in [
        ".weak .func dot_linked<4>",
        ".weak .func dot_linked<2>",
        ".visible .func dot4_plain",
        ".visible .entry unit_a",
    ] {
        assert!(line.contains(want), "{line}");
    }
    // An instantiation that were strong, and a missing control, are seen.
    let f = evidence[1]
        .ptx
        .iter_mut()
        .find(|f| weak::dot_linked_n(&f.name) == Some(4))
        .unwrap();
    f.linkage = weak::Linkage::Visible;
    evidence[0].ptx.retain(|f| f.name != weak::PLAIN_MANGLED);
    let wrong = weak::declarations_wrong(&evidence);
    assert_eq!(wrong.len(), 2, "{wrong:?}");
    assert!(wrong[0].contains("no dot4_plain"), "{wrong:?}");
    assert!(wrong[1].contains("dot_linked<4>"), "{wrong:?}");
    // Without -rdc, NVRTC makes the functions internal: nothing is .weak.
    let whole = host::nvrtc::library()
        .unwrap()
        .compile(&weak::unit_source("unit_a", true), "unit_a.cu", (7, 5))
        .unwrap();
    assert!(
        weak::ptx_functions(&whole)
            .iter()
            .all(|f| f.linkage != weak::Linkage::Weak),
        "{whole}"
    );
}

/// A linked pair as the GPU would give it when all holds.
fn good_evidence() -> weak::Evidence {
    let ptx = |unit: &str| {
        vec![
            weak::PtxFunction {
                name: "_Z10dot_linkedILi4EEfPKfS1_".into(),
                linkage: weak::Linkage::Weak,
                entry: false,
            },
            weak::PtxFunction {
                name: "_Z10dot_linkedILi2EEfPKfS1_".into(),
                linkage: weak::Linkage::Weak,
                entry: false,
            },
            weak::PtxFunction {
                name: weak::PLAIN_MANGLED.into(),
                linkage: weak::Linkage::Visible,
                entry: false,
            },
            weak::PtxFunction {
                name: unit.into(),
                linkage: weak::Linkage::Visible,
                entry: true,
            },
        ]
    };
    weak::Evidence {
        arch: "sm_90".into(),
        nvrtc: (12, 9),
        units: weak::UNITS
            .iter()
            .map(|u| weak::UnitEvidence {
                unit: format!("{u}.cu"),
                ptx: ptx(u),
                elf: None,
            })
            .collect(),
        linked: Ok(weak::Linked {
            definitions: vec![(2, 1), (4, 1)],
            outputs: weak::UNITS
                .iter()
                .map(|u| (u.to_string(), vec![70.0, 17.0]))
                .collect(),
        }),
        control: Err("error   : Multiple definition of '_Z10dot4_plainPKfS0_'".into()),
    }
}

#[test]
fn the_linking_section_prints_what_it_found() {
    let (section, failures) = host::specialize::linkage_section(&good_evidence(), PTX);
    assert!(failures.is_empty(), "{failures:?}");
    let text = section.text.join("\n");
    for want in [
        "NVRTC 12.9 with -rdc=true for sm_90",
        "unit_a.cu PTX: .weak .func dot_linked<4>, .weak .func dot_linked<2>, .visible .func dot4_plain, .visible .entry unit_a",
        "unit_b.cu ELF symbols: not read (ptxas not found",
        "dot_linked<2>: 1 definition(s), dot_linked<4>: 1 definition(s)",
        "unit_b(a = [1.0, 2.0, 3.0, 4.0], b = [5.0, 6.0, 7.0, 8.0]) = [70.0, 17.0]",
        "refused by the driver's linker: error   : Multiple definition",
        ".visible .entry dot_specialized_2",
        ".weak symbols in the module: 0",
    ] {
        assert!(text.contains(want), "{want}\n{text}");
    }
    let reading = section.reading.unwrap();
    assert!(reading.contains("one definition of each"), "{reading}");
    assert!(
        reading.contains("nothing for a linker to merge"),
        "{reading}"
    );
    assert!(!reading.contains("does not show"), "{reading}");

    // A wrong output is a failure; an accepted control is said so, and
    // fails the run too.
    let mut bad = good_evidence();
    if let Ok(linked) = &mut bad.linked {
        linked.outputs[1].1[1] = 18.0;
    }
    bad.control = Ok(());
    let (section, failures) = host::specialize::linkage_section(&bad, PTX);
    assert_eq!(failures.len(), 2, "{failures:?}");
    assert!(failures[0].detail.contains("unit_b"), "{failures:?}");
    assert!(
        failures[1].detail.contains("accepted dot4_plain"),
        "{failures:?}"
    );
    let reading = section.reading.unwrap();
    assert!(reading.contains("accepted dot4_plain"), "{reading}");
    // A control refused for another reason than dot4_plain is not the
    // lesson's refusal.
    let mut other = good_evidence();
    other.control = Err("CUDA_ERROR_OUT_OF_MEMORY: out of memory".into());
    let (_, failures) = host::specialize::linkage_section(&other, PTX);
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].detail.contains("does not name dot4_plain"),
        "{failures:?}"
    );
    // A refused pair is a failure with the linker's log.
    bad.linked = Err("error   : something".into());
    let (_, failures) = host::specialize::linkage_section(&bad, PTX);
    assert!(failures[0].detail.contains("something"), "{failures:?}");
}

#[test]
fn the_rust_reading_bites() {
    let (kernels, _) = weak::rust_ptx_linkage(PTX);
    assert!(host::specialize::rust_linkage_reading(&kernels, 0).is_ok());
    assert!(host::specialize::rust_linkage_reading(&kernels, 1).is_err());
    let mut twice = kernels.clone();
    twice.push(kernels[0].clone());
    assert!(host::specialize::rust_linkage_reading(&twice, 0).is_err());
    let mut func = kernels.clone();
    func[1].entry = false;
    assert!(host::specialize::rust_linkage_reading(&func, 0).is_err());
}
