//! The lessons sized for every GPU a learner may have, from a Colab T4 to a
//! B200, with each GPU's facts as NVIDIA publishes them
//! (`lab_tests::PROFILES`, sources cited there): every lesson's buffers fit
//! the GPU's memory, every buffer a full run times as a DRAM stream is at
//! least 4x the GPU's L2, and the softmax megakernel's admission admits or
//! refuses each protocol geometry as the GPU's shared memory and occupancy
//! decide.

use host::gpu::modeled_blocks_per_sm;
use host::sizes::L2_MULTIPLE;
use host::softmax::{Geometry, Refusal, Shape, Variant, admission, protocol};
use kernels_gpu::softmax::{COLS, TILE_WIDTHS, retained_shared_bytes, tiles_per_row};
use lab_tests::{PROFILES, profile};

/// The share of device memory a lesson may take: the rest is the driver's
/// and the context's.
const MEMORY_SHARE: f64 = 0.9;

#[test]
fn every_lesson_fits_every_gpu_and_streams_from_dram() {
    let mut faults = Vec::new();
    for p in PROFILES {
        let info = p.info();
        for lesson in &host::lessons::ALL {
            for quick in [false, true] {
                let sizes = match (lesson.sizes)(&info, quick) {
                    Ok(s) => s,
                    Err(e) => {
                        faults.push(format!("{} on {}: {e}", lesson.name, p.name));
                        continue;
                    }
                };
                let limit = (info.total_memory_bytes as f64 * MEMORY_SHARE) as usize;
                if sizes.device_bytes > limit {
                    faults.push(format!(
                        "{} on {} (quick {quick}): {} bytes, over {MEMORY_SHARE} of {}",
                        lesson.name, p.name, sizes.device_bytes, info.total_memory_bytes
                    ));
                }
                if quick {
                    continue;
                }
                if sizes.streams.is_empty() {
                    faults.push(format!("{} on {}: no stream declared", lesson.name, p.name));
                }
                for s in &sizes.streams {
                    if s.bytes < L2_MULTIPLE * info.l2_bytes {
                        faults.push(format!(
                            "{} on {}: {} is {} bytes, under {L2_MULTIPLE}x the {}-byte L2",
                            lesson.name, p.name, s.name, s.bytes, info.l2_bytes
                        ));
                    }
                }
            }
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

#[test]
fn sizes_follow_the_l2_and_keep_the_seeds_where_they_suffice() {
    // The roofline's vectors: the seed's 4096^2 on a T4, 8192^2 on an
    // H200, 16384^2 on a B200.
    let n = |name| {
        let sizes = (host::lessons::find("roofline").unwrap().sizes)(&profile(name).info(), false);
        sizes.unwrap().json["n"].as_u64().unwrap()
    };
    assert_eq!(n("T4"), 4096 * 4096);
    assert_eq!(n("H200"), 8192 * 8192);
    assert_eq!(n("B200"), 16384 * 16384);
    // Fusion keeps the seed's 16 Mi elements where 64 MiB is 4x the L2,
    // and the softmax its seed's 64 rows.
    let fusion = |name| {
        let s = (host::lessons::find("fusion").unwrap().sizes)(&profile(name).info(), false);
        s.unwrap().json["elems"].as_u64().unwrap()
    };
    assert_eq!(fusion("T4"), 1 << 24);
    assert_eq!(fusion("H200"), 1 << 26);
    assert_eq!(Shape::for_device(&profile("H200").info()).rows, 64);
    assert_eq!(Shape::for_device(&profile("B200").info()).rows, 256);
}

/// Registers per thread of the megakernel in the model: what the driver
/// reported for `softmax_retained` (Rust PTX for sm_75, JIT-compiled for
/// sm_90) on the H200, and what reproduces every blocks-per-SM figure it
/// recorded (docs/results/softmax-h200-2026-11-29.jsonl: 13, 12 and 6
/// blocks at W = 4096 and T = 64, 128, 256; 6 at 8192; 3 at 16384).
const RETAINED_REGS: u32 = 40;

/// The model of occupancy gives the H200's recorded figures.
#[test]
fn the_occupancy_model_gives_the_h200s_recorded_blocks_per_sm() {
    let h200 = profile("H200").info();
    let at = |w, t| modeled_blocks_per_sm(&h200, t, retained_shared_bytes(w), RETAINED_REGS);
    assert_eq!([at(4096, 64), at(4096, 128), at(4096, 256)], [13, 12, 6]);
    assert_eq!([at(8192, 64), at(8192, 128), at(8192, 256)], [6, 6, 6]);
    assert_eq!([at(16384, 64), at(16384, 128), at(16384, 256)], [3, 3, 3]);
}

/// What admission must decide for the cooperative variants on `p`, derived
/// here from the published limits: refused by shared memory when the tile
/// and its scratch exceed the opt-in limit; refused by residency when the
/// GPU holds fewer blocks than a row has tiles; admitted otherwise.
fn expected(info: &host::gpu::DeviceInfo, g: Geometry) -> &'static str {
    if retained_shared_bytes(g.w) > info.shared_per_block_optin {
        return "shared";
    }
    let blocks = modeled_blocks_per_sm(info, g.t, retained_shared_bytes(g.w), RETAINED_REGS);
    if (blocks * info.sms) as usize >= tiles_per_row(COLS, g.w) {
        "admitted"
    } else {
        "residency"
    }
}

#[test]
fn softmax_admission_decides_each_geometry_on_every_gpu() {
    let mut admitted_anywhere = 0;
    for p in PROFILES {
        let info = p.info();
        let shape = Shape::for_device(&info);
        for g in protocol() {
            for variant in Variant::ALL {
                let model = |t, shared| Ok(modeled_blocks_per_sm(&info, t, shared, RETAINED_REGS));
                let got = admission(&info, shape, variant, g, model).unwrap();
                let got = match (&got, variant.cooperative()) {
                    (Ok(_), false) => "staged",
                    (Ok(_), true) => "admitted",
                    (Err(Refusal::SharedMemory { .. }), _) => "shared",
                    (Err(Refusal::Residency { .. }), _) => "residency",
                };
                let want = if variant.cooperative() {
                    expected(&info, g)
                } else {
                    "staged"
                };
                assert_eq!(got, want, "{} {:?} W={} T={}", p.name, variant, g.w, g.t);
                admitted_anywhere += usize::from(got == "admitted");
            }
        }
    }
    assert!(admitted_anywhere > 0);
    // The widest tile is refused by shared memory everywhere; on the H200
    // every other tile is admitted (as recorded); a T4's 40 SMs hold fewer
    // blocks than a 1,000,003-column row has tiles at every width.
    for p in PROFILES {
        assert_eq!(
            expected(
                &p.info(),
                Geometry {
                    w: TILE_WIDTHS[3],
                    t: 256
                }
            ),
            "shared",
            "{}",
            p.name
        );
    }
    let h200 = profile("H200").info();
    for g in protocol().into_iter().filter(|g| g.w < TILE_WIDTHS[3]) {
        assert_eq!(expected(&h200, g), "admitted", "W={} T={}", g.w, g.t);
    }
    let t4 = profile("T4").info();
    for g in protocol() {
        assert_ne!(expected(&t4, g), "admitted", "W={} T={}", g.w, g.t);
    }
}
