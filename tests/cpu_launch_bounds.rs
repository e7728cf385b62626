//! CPU-only tests of `host::launch_bounds`: the build step that writes a
//! kernel's `launch_bounds!` into its PTX entry as `.maxntid` and
//! `.minnctapersm`, and refuses markers it cannot apply.

use host::launch_bounds::{Bounds, apply, declared};

/// A module as rustc writes it: the macro's marker at the top, two entries
/// (one with a parameter list closed by `)  // @name`, one with none).
const MODULE: &str = "\
.version 6.3
.target sm_75
// lab:launch_bounds tiled 256 2
\t// .globl\ttiled
.visible .entry tiled(
\t.param .u32 tiled_param_0
)                                       // @tiled
{
\tret;
}
\t// .globl\tplain
.visible .entry plain()
{
\tret;
}
";

#[test]
fn the_bounds_go_between_the_parameters_and_the_body_of_their_kernel_only() {
    let out = apply(MODULE).expect("applies");
    assert!(
        out.contains(")                                       // @tiled\n.maxntid 256, 1, 1\n.minnctapersm 2\n{\n"),
        "{out}"
    );
    assert_eq!(out.matches(".maxntid").count(), 1, "{out}");
    assert_eq!(
        out.replace(".maxntid 256, 1, 1\n.minnctapersm 2\n", ""),
        MODULE,
        "nothing else changes"
    );
}

#[test]
fn an_entry_without_parameters_takes_them_too() {
    let module = MODULE.replace("256 2\n", "256 2\n// lab:launch_bounds plain 128 4\n");
    let out = apply(&module).expect("applies");
    assert!(
        out.contains(".visible .entry plain()\n.maxntid 128, 1, 1\n.minnctapersm 4\n{"),
        "{out}"
    );
}

#[test]
fn a_module_without_markers_is_unchanged() {
    let module = MODULE.replace("// lab:launch_bounds tiled 256 2\n", "");
    assert_eq!(apply(&module).expect("applies"), module);
    assert_eq!(declared(&module).expect("parses"), []);
}

#[test]
fn the_markers_are_read_in_order() {
    let module = MODULE.replace("256 2\n", "256 2\n// lab:launch_bounds plain 64 8\n");
    let want = [
        Bounds {
            kernel: "tiled".into(),
            max_threads: 256,
            min_blocks: 2,
        },
        Bounds {
            kernel: "plain".into(),
            max_threads: 64,
            min_blocks: 8,
        },
    ];
    assert_eq!(declared(&module).expect("parses"), want);
}

#[test]
fn bad_markers_are_refused_with_the_reason() {
    for (marker, why) in [
        (
            "// lab:launch_bounds missing 256 2",
            "missing, which is not a kernel of this module",
        ),
        (
            "// lab:launch_bounds tiled 256",
            "expected <kernel> <max_threads> <min_blocks>",
        ),
        ("// lab:launch_bounds tiled 0 2", "positive integers"),
        ("// lab:launch_bounds tiled 256 two", "positive integers"),
    ] {
        let module = MODULE.replace("// lab:launch_bounds tiled 256 2", marker);
        let err = apply(&module).expect_err(marker);
        assert!(err.contains(why), "{marker}: {err}");
    }
    let twice = MODULE.replace("256 2\n", "256 2\n// lab:launch_bounds tiled 128 1\n");
    assert!(
        apply(&twice)
            .expect_err("twice")
            .contains("declared twice for tiled")
    );
}

#[test]
fn an_entry_that_never_closes_is_refused() {
    let broken = MODULE.replace(")                                       // @tiled\n", "");
    let err = apply(&broken).expect_err("no closing parenthesis");
    assert!(
        err.contains("tiled") && err.contains("closing parenthesis"),
        "{err}"
    );
}

#[test]
fn a_kernel_whose_name_another_begins_with_is_told_apart() {
    // `tiled` is declared; `tiled_wide`, before it in the module, is not.
    let module = MODULE.replace(
        "\t// .globl\ttiled\n",
        "\t// .globl\ttiled_wide\n.visible .entry tiled_wide(\n\t.param .u32 tiled_wide_param_0\n)  // @tiled_wide\n{\n\tret;\n}\n\t// .globl\ttiled\n",
    );
    let out = apply(&module).expect("applies");
    assert_eq!(out.matches(".maxntid").count(), 1, "{out}");
    assert!(out.contains("// @tiled\n.maxntid 256, 1, 1\n"), "{out}");
    assert!(out.contains("// @tiled_wide\n{"), "{out}");
}
