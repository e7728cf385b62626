//! Every launch's argument list against the kernel it launches, for every
//! lesson: each kernel's declared parameters (what its launch is checked
//! against at run time, count and kind of each argument) must be the
//! `.param` list of its `.entry` in the Rust PTX and in NVRTC's PTX of its
//! CUDA C twin (a lesson's Rust-only measuring kernels: the Rust PTX's
//! alone). And every `.entry` the Rust PTX exports belongs to exactly
//! one lesson's kernel set (or the tests' own), so no kernel is launched by
//! a name nobody declared. One test per lesson.

use host::kernels::{KernelId, Param};
use host::ptx::{PTX, entries};
use lab_tests::{nvrtc_ptx, signature_faults};
use libtest_mimic::{Arguments, Trial};

/// The test-only kernels' signatures.
fn test_kernels() -> Vec<(&'static str, &'static [Param])> {
    host::testing::TestKernel::ALL
        .iter()
        .map(|k| (k.symbol(), k.params()))
        .collect()
}

fn lesson_trial(lesson: &'static host::lessons::Entry) -> Trial {
    Trial::test(
        format!("{}::launch_signatures_match_the_ptx", lesson.name),
        move || {
            let kernels = (lesson.kernels)();
            let mut faults = signature_faults(&kernels, PTX, "Rust PTX");
            faults.extend(signature_faults(
                &(lesson.rust_only_kernels)(),
                PTX,
                "Rust PTX",
            ));
            let file = format!("{}.cu", lesson.name);
            if let Some(c_ptx) = nvrtc_ptx(lesson.cuda_c, &file, "sm_75") {
                faults.extend(signature_faults(
                    &kernels,
                    &c_ptx,
                    "CUDA C twin's PTX (NVRTC)",
                ));
            }
            if faults.is_empty() {
                Ok(())
            } else {
                Err(faults.join("\n").into())
            }
        },
    )
}

/// Each `.entry` of the Rust PTX is declared by exactly one kernel set.
fn every_entry_belongs_to_one_kernel_set() -> Result<(), libtest_mimic::Failed> {
    let mut owners: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for lesson in &host::lessons::ALL {
        for (symbol, _) in (lesson.kernels)()
            .into_iter()
            .chain((lesson.rust_only_kernels)())
        {
            owners.entry(symbol).or_default().push(lesson.name);
        }
    }
    for (symbol, _) in test_kernels() {
        owners.entry(symbol).or_default().push("testing");
    }
    let mut faults = Vec::new();
    for entry in entries(PTX) {
        match owners.get(entry).map(Vec::as_slice) {
            None => faults.push(format!("{entry}: in the PTX, declared by no kernel set")),
            Some([_]) => {}
            Some(many) => faults.push(format!("{entry}: declared by {many:?}")),
        }
    }
    let exported = entries(PTX);
    for symbol in owners.keys() {
        if !exported.contains(symbol) {
            faults.push(format!(
                "{symbol}: declared, but the PTX exports no such entry"
            ));
        }
    }
    if faults.is_empty() {
        Ok(())
    } else {
        Err(faults.join("\n").into())
    }
}

fn main() -> std::process::ExitCode {
    let mut trials: Vec<Trial> = host::lessons::ALL.iter().map(lesson_trial).collect();
    trials.push(Trial::test(
        "testing::launch_signatures_match_the_ptx",
        || {
            let faults = signature_faults(&test_kernels(), PTX, "Rust PTX");
            if faults.is_empty() {
                Ok(())
            } else {
                Err(faults.join("\n").into())
            }
        },
    ));
    trials.push(Trial::test(
        "every_entry_belongs_to_one_kernel_set",
        every_entry_belongs_to_one_kernel_set,
    ));
    trials.push(Trial::test(
        "a_dropped_or_mistyped_parameter_is_caught",
        || {
            // Declarations with one parameter dropped, and one kind changed,
            // against the real PTX: both must be reported.
            let dropped: &[(&str, &[Param])] =
                &[("vector_add", &[Param::Ptr, Param::Ptr, Param::U64])];
            let mistyped: &[(&str, &[Param])] = &[(
                "heat_step_global",
                &[Param::Ptr, Param::Ptr, Param::U32, Param::U32],
            )];
            let a = signature_faults(dropped, PTX, "Rust PTX");
            let b = signature_faults(mistyped, PTX, "Rust PTX");
            if a.len() == 1
                && a[0].contains("declares 3 parameters, the Rust PTX has 4")
                && b.len() == 1
                && b[0].contains("parameter 3 is declared a 32-bit integer")
            {
                Ok(())
            } else {
                Err(format!("{a:?} {b:?}").into())
            }
        },
    ));
    libtest_mimic::run(&Arguments::from_args(), trials).exit_code()
}
