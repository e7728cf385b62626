//! CPU-only tests of the softmax lesson: the reference on small rows checked
//! by hand, the admission arithmetic on made-up device limits, the byte
//! model, and the PTX (the barrier's scoped atomics, the dynamic shared
//! array, shared-memory accesses in the megakernel, the twins compiling).

use host::kernels::KernelId;
use host::lesson::Report as _;
use host::ptx::{PTX, entries, entry_body};
use host::softmax::{
    Geometry, GraphFacts, Kernel, Launches, NodeKernel, Ran, Refusal, Row, Shape, Variant,
    admit_shared, check_geometry, check_shape, protocol, reference, rows_per_group,
};

/// The lesson's kernels' symbols.
fn symbols() -> Vec<&'static str> {
    Kernel::ALL.iter().map(|k| k.symbol()).collect()
}
use host::timing::{Plan, Timing};
use kernels_gpu::softmax::*;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

// ---- the reference on hand-checked rows ------------------------------------

#[test]
fn a_constant_row_is_uniform() {
    // Every exponent is (c - c) * s = 0: each output is 1/n, whatever s is.
    for c in [0.0f32, 2.5, -3.0] {
        let y = reference::row(&[c; 5]);
        assert!(y.iter().all(|&v| close(v, 0.2, 1e-15)), "{c}: {y:?}");
    }
}

#[test]
fn two_opposite_values() {
    // x = [1, -1]: mean square 1, s = 1/sqrt(1.00001), max 1, exponents 0
    // and -2s: y = [1 / (1 + e^-2s), e^-2s / (1 + e^-2s)] = [0.880796..., 0.119203...].
    let y = reference::row(&[1.0, -1.0]);
    assert!(close(y[0], 0.880_796_028, 1e-9), "{y:?}");
    assert!(close(y[1], 0.119_203_972, 1e-9), "{y:?}");
}

#[test]
fn zero_to_three() {
    // x = [0, 1, 2, 3]: mean square 3.5, s = 1/sqrt(3.50001) = 0.534521...,
    // exponents (x - 3) s; values worked out in Python's math module.
    let y = reference::row(&[0.0, 1.0, 2.0, 3.0]);
    let want = [0.094_429_186, 0.161_155_852, 0.275_033_701, 0.469_381_261];
    for (g, w) in y.iter().zip(want) {
        assert!(close(*g, w, 1e-9), "{y:?}");
    }
    assert!(close(y.iter().sum(), 1.0, 1e-15));
}

#[test]
fn the_matrix_is_its_rows() {
    let n = 7;
    let x: Vec<f32> = (0..3 * n).map(reference::fill_x).collect();
    let y = reference::matrix(&x, n);
    for r in 0..3 {
        assert_eq!(
            y[r * n..(r + 1) * n],
            reference::row(&x[r * n..(r + 1) * n])
        );
    }
}

#[test]
fn the_fill_is_exact_in_range_and_differs_by_row() {
    let n = 1000;
    let x: Vec<f32> = (0..4 * n).map(reference::fill_x).collect();
    assert!(
        x.iter()
            .all(|&v| (-4.0..4.0).contains(&v) && (v * 256.0).fract() == 0.0)
    );
    assert_ne!(x[..n], x[n..2 * n]);
}

#[test]
fn the_check_names_row_and_column() {
    let want = [0.25f64, 0.25, 0.5, 0.5];
    let (f, worst) = host::softmax::check("staged", &[0.25, 0.25, 0.5, 0.5], &want, 2);
    assert!(f.is_none());
    assert_eq!(worst, 0.0);
    let (f, worst) = host::softmax::check("staged", &[0.25, 0.25, 0.5, 0.6], &want, 2);
    let detail = f.unwrap().detail;
    assert!(
        detail.contains("wrong at index 3 (row 1, col 1)"),
        "{detail}"
    );
    assert!((worst - 0.2).abs() < 1e-6, "{worst}");
    let nan = f32::from_bits(u32::MAX);
    let (f, worst) = host::softmax::check("staged", &[nan, 0.25, 0.5, 0.5], &want, 2);
    assert!(f.is_some());
    assert!(worst.is_nan());
    assert!(reference::max_relative_error(&[0.3], &[0.25]) > 0.19);
}

// ---- admission on made-up device limits --------------------------------------

#[test]
fn shared_memory_admission() {
    // An H200-like opt-in limit of 227 KiB: 4096..16384 fit, 131072 does not.
    let optin = 232_448;
    assert_eq!(admit_shared(4096, optin), Ok(4096 * 4 + 128));
    assert_eq!(admit_shared(16_384, optin), Ok(65_664));
    assert_eq!(
        admit_shared(131_072, optin),
        Err(Refusal::SharedMemory {
            needed: 524_416,
            limit: optin
        })
    );
    // A T4-like 64 KiB: the 16384 tile plus its 128 bytes of scratch is over.
    assert!(admit_shared(16_384, 65_536).is_err());
    assert!(admit_shared(8192, 65_536).is_ok());
}

#[test]
fn residency_admission() {
    // 3 blocks per SM x 132 SMs = 396 resident; 62 tiles a row: 6 rows a launch.
    assert_eq!(rows_per_group(3, 132, 62, 64), Ok(6));
    // Capped at the rows there are.
    assert_eq!(rows_per_group(32, 132, 8, 4), Ok(4));
    // Exactly one row.
    assert_eq!(rows_per_group(1, 10, 10, 64), Ok(1));
    // A row needing more blocks than can be resident is refused, not hung.
    assert_eq!(
        rows_per_group(1, 4, 245, 64),
        Err(Refusal::Residency {
            tiles: 245,
            blocks_per_sm: 1,
            sms: 4
        })
    );
    assert_eq!(
        rows_per_group(0, 132, 1, 64),
        Err(Refusal::Residency {
            tiles: 1,
            blocks_per_sm: 0,
            sms: 132
        })
    );
}

#[test]
fn refusals_name_their_limit() {
    let s = Refusal::SharedMemory {
        needed: 524_416,
        limit: 232_448,
    }
    .to_string();
    assert!(
        s.contains("524416") && s.contains("232448") && s.contains("OPTIN"),
        "{s}"
    );
    let r = Refusal::Residency {
        tiles: 245,
        blocks_per_sm: 1,
        sms: 4,
    }
    .to_string();
    assert!(
        r.contains("245") && r.contains("= 4") && r.contains("occupancy"),
        "{r}"
    );
}

#[test]
fn bad_geometries_and_shapes_are_errors_not_launches() {
    for t in [64, 128, 256, 1024] {
        assert!(check_geometry(Geometry { w: 4096, t }).is_ok(), "T={t}");
    }
    for (w, t) in [(4096, 0), (4096, 48), (4096, 2048), (0, 64), (2048, 64)] {
        let e = check_geometry(Geometry { w, t }).unwrap_err().to_string();
        assert!(e.contains("whole warps") && e.contains("4096"), "{e}");
    }
    assert!(check_shape(Shape::LESSON).is_ok() && check_shape(Shape::TEST).is_ok());
    for shape in [Shape { rows: 0, n: 10 }, Shape { rows: 3, n: 0 }] {
        assert!(
            check_shape(shape)
                .unwrap_err()
                .to_string()
                .contains("empty")
        );
    }
    let wide = Shape {
        rows: 1,
        n: u32::MAX as usize + 1,
    };
    assert!(
        check_shape(wide)
            .unwrap_err()
            .to_string()
            .contains("32-bit")
    );
}

// ---- the report's text, on made-up rows ----------------------------------------

/// The plan the made-up rows use: 64 rows of 123 tiles at W = 8192,
/// T = 256; the megakernels in 11 groups (10 of 6 rows, one of 4).
fn plan_of(variant: Variant, geometry: Geometry) -> Launches {
    let cooperative = variant.cooperative();
    Launches {
        variant,
        geometry,
        tiles: 123,
        group_rows: if cooperative { 6 } else { 64 },
        launches: if cooperative { 11 } else { 3 },
        shared_bytes: if cooperative { 32_896 } else { 0 },
        blocks_per_sm: cooperative.then_some(6),
    }
}

/// The graph a correct capture of `plan` over 64 rows gives.
fn facts_of(plan: &Launches) -> GraphFacts {
    let kernels: Vec<NodeKernel> = if plan.variant.cooperative() {
        (0..plan.launches)
            .map(|i| {
                let rows = if i < 10 { 6 } else { 4 };
                NodeKernel {
                    symbol: Some(plan.variant.main_symbol()),
                    grid: ((rows * plan.tiles) as u32, 1, 1),
                    block: (plan.geometry.t, 1, 1),
                    dynamic_shared_bytes: plan.shared_bytes as u32,
                    registers: 37,
                    static_shared_bytes: 0,
                    local_bytes: 0,
                }
            })
            .collect()
    } else {
        plan.variant
            .sequence()
            .iter()
            .map(|k| NodeKernel {
                symbol: Some(k.symbol()),
                grid: ((64 * plan.tiles) as u32, 1, 1),
                block: (plan.geometry.t, 1, 1),
                dynamic_shared_bytes: 0,
                registers: 30,
                static_shared_bytes: 128,
                local_bytes: 0,
            })
            .collect()
    };
    GraphFacts {
        nodes: plan.launches,
        kernel_nodes: plan.launches,
        cooperative: vec![plan.variant.cooperative(); plan.launches],
        node_types: vec!["kernel".into(); plan.launches],
        kernels,
        capture_us: 50.0,
        instantiate_us: 80.0,
        first_replay_us: 500.0,
    }
}

/// A made-up row of `variant` at `geometry` whose replay batches took
/// `samples` ms.
fn ran_at(variant: Variant, geometry: Geometry, samples: &[f64]) -> Row {
    let plan = plan_of(variant, geometry);
    Row::Ran(Box::new(Ran {
        plan,
        max_rel_error: 1e-6,
        graph: facts_of(&plan),
        direct: Timing::new(samples.iter().map(|s| s + 0.01).collect()),
        replay: Timing::new(samples.to_vec()),
    }))
}

fn ran(variant: Variant, ms: f64) -> Row {
    ran_at(variant, Geometry { w: 8192, t: 256 }, &[ms])
}

fn report_of(rows: Vec<Row>, plan: Plan) -> String {
    let info = lab_tests::synthetic_device(60 << 20, 132);
    let context = host::report::Context::new(
        "softmax",
        &info,
        &host::softmax::Sizes::of(Shape::LESSON),
        host::softmax::report::block_sizes_json(),
        plan,
        "2026-01-01T00:00:00Z".into(),
    );
    host::softmax::report::build(context, Shape::LESSON, rows, 232_448).table()
}

#[test]
fn with_counters_the_report_does_not_say_none_measure_the_l2() {
    let info = lab_tests::synthetic_device(60 << 20, 132);
    let context = host::report::Context::new(
        "softmax",
        &info,
        &host::softmax::Sizes::of(Shape::LESSON),
        host::softmax::report::block_sizes_json(),
        Plan::DEFAULT,
        "2026-01-01T00:00:00Z".into(),
    );
    let mut report = host::softmax::report::build(
        context,
        Shape::LESSON,
        vec![ran(Variant::Staged, 0.5)],
        232_448,
    );
    report.profiled = true;
    let s = report.table();
    assert!(!s.contains("no counters measure"), "{s}");
    assert!(
        s.contains("Nsight Compute's DRAM and L2 bytes per kernel"),
        "{s}"
    );
}

#[test]
fn the_report_says_what_was_checked_and_measured() {
    let refused = Row::Refused {
        variant: Variant::Retained,
        geometry: Geometry { w: 131_072, t: 256 },
        refusal: Refusal::SharedMemory {
            needed: 524_416,
            limit: 232_448,
        },
    };
    let s = report_of(
        vec![
            ran(Variant::Staged, 0.5),
            ran(Variant::Retained, 0.4),
            refused.clone(),
        ],
        Plan::DEFAULT,
    );
    assert!(s.contains("All 2 runs match"), "{s}");
    assert!(
        s.contains("median of 7 batches of 10 runs of the whole launch sequence after 3 warm-ups"),
        "{s}"
    );
    assert!(s.contains("exactly the megakernel's nodes"), "{s}");
    assert!(s.contains("staged 5, recompute 4, retained 2"), "{s}");
    assert!(s.contains("W=131072 T=256: refused"), "{s}");
    // 64 x 1,000,003 elements x 8 bytes in 0.4 ms.
    let gbs = 64.0 * 1_000_003.0 * 8.0 / 0.4e-3 / 1e9;
    assert!(
        s.contains(&format!("{gbs:.1} GB/s over the compulsory bytes")),
        "{s}"
    );
    // Without --ncu nothing measured the L2's share of the traffic, and the
    // report says so; with the counters merged it points to them instead.
    assert!(s.contains("no counters measure that in this run"), "{s}");
    // No megakernel ran: the text must not claim cooperative nodes.
    let s = report_of(vec![ran(Variant::Staged, 0.5), refused], Plan::QUICK);
    assert!(
        s.contains("median of 1 batch of 1 run of the whole launch sequence after 1 warm-up "),
        "{s}"
    );
    assert!(
        s.contains("none cooperative") && !s.contains("exactly the megakernel's"),
        "{s}"
    );
}

// ---- geometry and the byte model ---------------------------------------------

#[test]
fn the_protocol_is_twelve_geometries_none_dividing_the_rows() {
    let p = protocol();
    assert_eq!(p.len(), 12);
    assert!(p.contains(&Geometry { w: 131_072, t: 256 }));
    for shape in [Shape::LESSON, Shape::QUICK, Shape::TEST] {
        for w in TILE_WIDTHS {
            assert_ne!(shape.n % w as usize, 0, "{shape:?} at W={w}");
        }
    }
    assert_eq!(tiles_per_row(COLS, 4096), 245);
    assert_eq!(tiles_per_row(COLS, 131_072), 8);
    // The timed matrix is several times a 60 MiB L2.
    assert!(Shape::LESSON.elems() * 4 > 4 * 60 * 1024 * 1024);
}

#[test]
fn the_byte_model() {
    let floats: Vec<f64> = Variant::ALL.iter().map(|v| v.floats_per_elem()).collect();
    assert_eq!(floats, [5.0, 4.0, 2.0, 2.0, 2.0, 3.0, 4.0, 5.0]);
    assert_eq!(host::softmax::COMPULSORY_FLOATS, 2.0);
    assert!(
        Variant::ALL
            .iter()
            .filter(|v| v.cooperative())
            .all(|v| v.floats_per_elem() >= 2.0)
    );
    assert_eq!(
        Variant::BothReload.controls(),
        RELOAD_INPUT | ROUNDTRIP_EXPONENTIALS
    );
    for v in [
        Variant::Retained,
        Variant::RowRetained,
        Variant::RoundtripOff,
    ] {
        assert_eq!(v.controls(), 0, "{v:?}");
    }
    assert_eq!(Variant::RoundtripOn.controls(), ROUNDTRIP_EXPONENTIALS);
    assert_eq!(Variant::InputReload.controls(), RELOAD_INPUT);
}

// ---- the families and what each isolates --------------------------------------

#[test]
fn the_families_are_the_seeds() {
    let labels: Vec<&str> = Variant::ALL.iter().map(|v| v.label()).collect();
    assert_eq!(
        labels,
        [
            "staged",
            "recompute",
            "retained",
            "row_retained",
            "roundtrip_off",
            "input_reload",
            "roundtrip_on",
            "both_reload"
        ]
    );
    // The four control families launch the control kernel; retained and
    // row_retained each their own kernel, which carries no flag.
    assert_eq!(Variant::Retained.main_kernel(), Kernel::Retained);
    assert_eq!(Variant::RowRetained.main_kernel(), Kernel::RowRetained);
    for v in [
        Variant::RoundtripOff,
        Variant::InputReload,
        Variant::RoundtripOn,
        Variant::BothReload,
    ] {
        assert_eq!(v.main_kernel(), Kernel::RetainedControl, "{v:?}");
        assert_eq!(v.sequence(), [Kernel::RetainedControl]);
    }
    assert_eq!(
        Variant::Staged.sequence(),
        [Kernel::Stats, Kernel::Exp, Kernel::Normalize]
    );
}

#[test]
fn each_isolation_differs_in_one_thing() {
    for i in Variant::ISOLATIONS {
        let (a, b) = (i.variant, i.against);
        assert!(a.cooperative() && b.cooperative(), "{i:?}");
        let same_kernel = a.main_kernel() == b.main_kernel();
        let same_controls = a.controls() == b.controls();
        let same_traffic = a.floats_per_elem() == b.floats_per_elem();
        // Exactly one of: the kernel differs (flags carried, or the
        // barrier's scope) with the same flags and traffic; or the flags
        // differ on the same kernel.
        assert!(
            (!same_kernel && same_controls && same_traffic) || (same_kernel && !same_controls),
            "{i:?}"
        );
    }
    // The flags' cost is isolated against retained, and every control is
    // priced against roundtrip_off, not retained.
    assert_eq!(Variant::ISOLATIONS[0].variant, Variant::RoundtripOff);
    assert_eq!(Variant::ISOLATIONS[0].against, Variant::Retained);
    assert_eq!(Variant::ISOLATIONS[1].against, Variant::RowRetained);
    assert!(
        Variant::ISOLATIONS[2..]
            .iter()
            .all(|i| i.against == Variant::RoundtripOff)
    );
}

#[test]
fn the_report_reads_each_isolation_against_the_noise() {
    let g = Geometry { w: 8192, t: 256 };
    let slow = Geometry { w: 4096, t: 64 };
    // retained 0.400 ms (batches 0.399-0.401), roundtrip_off 0.410
    // (0.409-0.411): +10 us against 2 us of noise, +2.5%.
    // row_retained 0.3995 (0.398-0.402): retained - row_retained = +0.5 us,
    // within 4 us of noise. The controls priced against roundtrip_off.
    let rows = vec![
        ran_at(Variant::Retained, g, &[0.399, 0.400, 0.401]),
        ran_at(Variant::RowRetained, g, &[0.398, 0.3995, 0.402]),
        ran_at(Variant::RoundtripOff, g, &[0.409, 0.410, 0.411]),
        ran_at(Variant::InputReload, g, &[0.439, 0.440, 0.441]),
        ran_at(Variant::RoundtripOn, g, &[0.405, 0.406, 0.407]),
        ran_at(Variant::BothReload, g, &[0.600, 0.601, 0.602]),
        // A slower geometry, where the flags save time past the noise.
        ran_at(Variant::Retained, slow, &[1.000, 1.001, 1.002]),
        ran_at(Variant::RoundtripOff, slow, &[0.900, 0.901, 0.902]),
    ];
    let s = report_of(rows.clone(), Plan::DEFAULT);
    assert!(
        s.contains(
            "roundtrip_off - retained (carrying the control flags (same traffic, same grid barrier)): at W=8192 \
             T=256 (retained's fastest) +10.0 us (+2.5%), a cost past the noise (2.0 us); over the 2 geometries \
             both ran at: a cost past the noise at 1, a saving at 1, within the noise at 0"
        ),
        "{s}"
    );
    assert!(
        s.contains(
            "retained - row_retained (a grid barrier instead of row barriers (same traffic, no flags)): at \
             W=8192 T=256 (row_retained's fastest) +0.5 us (+0.1%), within the noise (4.0 us)"
        ),
        "{s}"
    );
    assert!(
        s.contains("input_reload - roundtrip_off (reloading x in phase 2 (+4 bytes per element)): at W=8192 T=256 (roundtrip_off's fastest) +30.0 us (+7.3%), a cost past the noise"),
        "{s}"
    );
    // roundtrip_on faster than roundtrip_off here: a saving, said as such.
    assert!(
        s.contains("-4.0 us (-1.0%), a saving past the noise (2.0 us)"),
        "{s}"
    );
    // One batch a row: no reading is made.
    let s = report_of(
        vec![ran(Variant::Retained, 0.4), ran(Variant::RoundtripOff, 0.5)],
        Plan::QUICK,
    );
    assert!(
        s.contains("+100.0 us (+25.0%), one batch: no spread measured, so no reading"),
        "{s}"
    );
    // A pair that never ran together says so.
    assert!(
        s.contains("retained - row_retained (a grid barrier instead of row barriers (same traffic, no flags)): not measured"),
        "{s}"
    );
}

#[test]
fn the_json_rows_carry_the_graphs_metadata() {
    let info = lab_tests::synthetic_device(60 << 20, 132);
    let context = host::report::Context::new(
        "softmax",
        &info,
        &host::softmax::Sizes::of(Shape::LESSON),
        host::softmax::report::block_sizes_json(),
        Plan::DEFAULT,
        "2026-01-01T00:00:00Z".into(),
    );
    let report = host::softmax::report::build(
        context,
        Shape::LESSON,
        vec![ran(Variant::Staged, 0.5), ran(Variant::RoundtripOff, 0.4)],
        232_448,
    );
    let lines = report.json_lines();
    let staged = &lines[0];
    assert_eq!(
        staged["node_types"],
        serde_json::json!(["kernel", "kernel", "kernel"])
    );
    assert_eq!(staged["kernel_launches"].as_array().unwrap().len(), 3);
    assert_eq!(
        staged["resources"]["softmax_tile_exp"]["registers"],
        serde_json::json!(30)
    );
    assert_eq!(
        staged["resources"]["softmax_tile_stats"]["static_shared_bytes"],
        serde_json::json!(128)
    );
    let off = &lines[1];
    assert_eq!(off["variant"], "roundtrip_off");
    assert_eq!(off["kernel_symbol"], "softmax_retained_control");
    let launches = off["kernel_launches"].as_array().unwrap();
    assert_eq!(launches.len(), 11);
    assert_eq!(launches[0]["grid"], serde_json::json!([6 * 123, 1, 1]));
    assert_eq!(
        launches[0]["dynamic_shared_bytes"],
        serde_json::json!(32_896)
    );
    assert_eq!(
        off["resources"]["softmax_retained_control"]["registers"],
        serde_json::json!(37)
    );
    let text = report.table();
    assert!(text.contains("softmax_retained_control 37, 0"), "{text}");
}

#[test]
fn the_graph_check_can_fail() {
    let g = Geometry { w: 8192, t: 256 };
    for v in Variant::ALL {
        let plan = plan_of(v, g);
        assert_eq!(facts_of(&plan).verify(&plan, 64), None, "{v:?}");
    }
    let plan = plan_of(Variant::Retained, g);
    let good = facts_of(&plan);
    // A node launching another kernel.
    let mut bad = good.clone();
    bad.kernels[3].symbol = Some("softmax_row_retained");
    assert!(bad.verify(&plan, 64).unwrap().contains("softmax_retained"));
    // A function the lesson never loaded.
    let mut bad = good.clone();
    bad.kernels[0].symbol = None;
    assert!(bad.verify(&plan, 64).is_some());
    // Registers not reported.
    let mut bad = good.clone();
    bad.kernels[5].registers = 0;
    assert!(bad.verify(&plan, 64).unwrap().contains("0 registers"));
    // A tile left out of the grids.
    let mut bad = good.clone();
    bad.kernels[10].grid.0 -= 1;
    assert!(bad.verify(&plan, 64).unwrap().contains("tiles"));
    // The wrong dynamic shared memory.
    let mut bad = good.clone();
    bad.kernels[1].dynamic_shared_bytes = 0;
    assert!(bad.verify(&plan, 64).unwrap().contains("dynamic shared"));
    // A missing node.
    let mut bad = good;
    bad.nodes -= 1;
    assert!(bad.verify(&plan, 64).is_some());
    // The staged sequence with one phase launched twice.
    let plan = plan_of(Variant::Staged, g);
    let mut bad = facts_of(&plan);
    bad.kernels[2].symbol = Some("softmax_tile_exp");
    assert!(bad.verify(&plan, 64).is_some());
}

#[test]
fn node_types_in_the_drivers_words() {
    use cudarc::driver::sys::CUgraphNodeType as T;
    assert_eq!(
        host::graph::node_type_name(T::CU_GRAPH_NODE_TYPE_KERNEL),
        "kernel"
    );
    assert_eq!(
        host::graph::node_type_name(T::CU_GRAPH_NODE_TYPE_MEMSET),
        "memset"
    );
    assert_eq!(
        host::graph::node_type_name(T::CU_GRAPH_NODE_TYPE_MEMCPY),
        "memcpy"
    );
    assert_eq!(
        host::graph::node_type_name(T::CU_GRAPH_NODE_TYPE_WAIT_EVENT),
        "wait_event"
    );
}

// ---- the PTX ----------------------------------------------------------------

#[test]
fn every_kernel_is_an_entry() {
    let found = entries(PTX);
    for s in symbols() {
        assert!(found.contains(&s), "missing {s}");
    }
}

const MEGAKERNELS: [&str; 3] = [
    "softmax_retained",
    "softmax_retained_control",
    "softmax_row_retained",
];

#[test]
fn the_barrier_uses_gpu_scoped_orderings() {
    for k in MEGAKERNELS {
        let body = entry_body(PTX, k).unwrap();
        for op in [
            "atom.acq_rel.gpu.global.add.u32",
            "ld.acquire.gpu.global.u32",
            "st.release.gpu.global.u32",
            "ld.relaxed.gpu.global.u32",
            "nanosleep.u32",
            "bar.sync",
        ] {
            assert!(body.contains(op), "{k} lacks {op}");
        }
        // No system-scope or unordered atomics slipped in.
        assert!(!body.contains(".sys"), "a system-scope access in {k}");
    }
}

#[test]
fn only_the_control_kernel_reads_its_flags_and_only_the_grid_kernels_size_the_grid() {
    // The controls are the 16th argument (param_15). The kernels without
    // flags never load it: their flag branches are folded away.
    for (k, reads_flags, reads_grid) in [
        ("softmax_retained", false, true),
        ("softmax_retained_control", true, true),
        ("softmax_row_retained", false, false),
    ] {
        let body = entry_body(PTX, k).unwrap();
        let param = format!("[{k}_param_15]");
        assert_eq!(body.contains(&param), reads_flags, "{k} and its controls");
        // The grid barrier counts every block of the launch: %nctaid.x.
        assert_eq!(
            body.contains("%nctaid.x"),
            reads_grid,
            "{k} and the grid size"
        );
    }
}

#[test]
fn the_tile_lives_in_dynamic_shared_memory() {
    assert!(PTX.contains(".extern .shared .align 16 .b8 SOFTMAX_TILE[]"));
    for k in MEGAKERNELS {
        the_tile_is_shared_in(k);
    }
}

fn the_tile_is_shared_in(kernel: &str) {
    let body = entry_body(PTX, kernel).unwrap();
    assert!(body.contains("ld.shared") && body.contains("st.shared"));
    // Every load and store names its state space: none stays generic.
    for line in body.lines().map(str::trim) {
        let op = line.split_whitespace().next().unwrap_or("");
        if op.starts_with("ld.") || op.starts_with("st.") {
            let space = op.split('.').nth(1).unwrap_or("");
            assert!(
                ["global", "shared", "param", "acquire", "relaxed", "release"].contains(&space),
                "generic access: {line}"
            );
        }
    }
}

#[test]
fn the_kernels_use_the_shuffles_the_fast_exp_and_the_read_only_path() {
    for s in symbols() {
        let body = entry_body(PTX, s).unwrap();
        assert!(body.contains("shfl.sync.bfly.b32"), "{s}");
        assert!(body.contains("ld.global.nc"), "{s}");
    }
    assert!(
        entry_body(PTX, "softmax_tile_exp")
            .unwrap()
            .contains("ex2.approx.ftz.f32")
    );
    assert!(
        entry_body(PTX, "softmax_tile_stats")
            .unwrap()
            .contains("fma.rn.f32")
    );
}

#[test]
fn the_twins_compile_with_nvrtc_and_show_the_same() {
    let Some(ptx) = lab_tests::twin_ptx_on_cpu::<host::softmax::SoftmaxLesson>((7, 5)) else {
        return;
    };
    for k in MEGAKERNELS {
        let body = entry_body(&ptx, k).unwrap();
        assert!(
            body.contains("atom.acq_rel.gpu.global.add.u32") && body.contains("ex2.approx.ftz.f32"),
            "{k}"
        );
    }
}
