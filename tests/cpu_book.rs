//! The lesson book (`cargo xtask book`): it builds from the repository with
//! no GPU, and the build fails or reports a problem on a broken link, a
//! missing anchor or a missing figure; every lesson has its chapter on the
//! template. (Quoted figures are checked against their recorded files by
//! `cpu_docs`, which reads the book's chapters too.)

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A scratch folder under the target dir, emptied.
fn scratch(name: &str) -> PathBuf {
    let dir = root()
        .join("target")
        .join(format!("cpu-book-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_book_builds_with_every_link_anchor_and_figure_in_place() {
    let out = scratch("real");
    let built = lab_book::build(&lab_book::Options {
        root: root(),
        out: out.clone(),
        run: None,
    })
    .unwrap_or_else(|e| panic!("the book does not build: {e:#}"));
    assert!(
        built.problems.is_empty(),
        "{} problems in the rendered book:\n{}",
        built.problems.len(),
        built.problems.join("\n")
    );
    assert!(out.join("index.html").is_file());
    assert!(!built.figures.is_empty(), "the book draws its charts");
    for f in &built.figures {
        let svg = std::fs::read_to_string(out.join(f)).unwrap();
        assert!(
            svg.contains("<svg") && svg.len() > 1000,
            "{} is not a chart",
            f.display()
        );
    }
    // Every chapter the summary names was rendered.
    for ch in &built.chapters {
        let html = out.join(ch.with_extension("html"));
        assert!(html.is_file(), "{} was not rendered", html.display());
    }
    std::fs::remove_dir_all(&out).ok();
}

/// Every lesson `lab` runs has its chapter, and each lesson chapter (and the
/// anatomy chapter) has the template's parts: a prediction, the Rust beside
/// its CUDA C twin, and exercises with folded answers.
#[test]
fn every_lesson_has_a_chapter_on_the_template() {
    let summary = std::fs::read_to_string(root().join("book/src/SUMMARY.md")).unwrap();
    let mut chapters: Vec<String> = xtask::LESSONS.iter().map(|l| l.to_string()).collect();
    chapters.push("anatomy".into());
    let mut missing = Vec::new();
    for ch in &chapters {
        let file = format!("{ch}.md");
        if !summary.contains(&format!("]({file})")) {
            missing.push(format!("{file}: not in SUMMARY.md"));
        }
        let Ok(text) = std::fs::read_to_string(root().join("book/src").join(&file)) else {
            missing.push(format!("{file}: no such chapter"));
            continue;
        };
        let headings: Vec<String> = text
            .lines()
            .filter(|l| l.starts_with("## "))
            .map(|l| l.to_lowercase())
            .collect();
        if !headings.iter().any(|h| h.contains("predict")) {
            missing.push(format!("{file}: no prediction heading"));
        }
        if !text.contains("{{#lab-pair ") {
            missing.push(format!("{file}: no Rust beside CUDA C ({{{{#lab-pair}}}})"));
        }
        if !headings.iter().any(|h| h.contains("try this")) {
            missing.push(format!("{file}: no \"Try this\" exercises"));
        }
        let answers = text.matches("<summary>Answer").count();
        if answers < 2 {
            missing.push(format!("{file}: {answers} folded answers (2 or more)"));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// The old docs became chapters: no second copy of their text.
#[test]
fn the_docs_folder_holds_only_recorded_data() {
    let left: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| p.display().to_string())
        .collect();
    assert!(left.is_empty(), "docs/*.md left beside the book: {left:?}");
}

/// A tiny book in a scratch repository: `chapter` is its one chapter; a
/// source file `src/k.rs` holds the anchor `k`; a recorded run is at
/// docs/results/run/results/gpu/run.jsonl (`{records}/run.jsonl`: the book's
/// run is docs/results/run).
fn tiny_book(name: &str, chapter: &str) -> (PathBuf, lab_book::Options) {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join("book/src")).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("docs/results/run/results/gpu")).unwrap();
    std::fs::write(dir.join("book/book.toml"), "[book]\ntitle = \"t\"\n").unwrap();
    std::fs::write(
        dir.join("book/src/SUMMARY.md"),
        "# Summary\n\n- [One](one.md)\n- [Two](two.md)\n",
    )
    .unwrap();
    std::fs::write(dir.join("book/src/one.md"), chapter).unwrap();
    std::fs::write(
        dir.join("book/src/two.md"),
        "# Two\n\n## A heading\n\ntext\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/k.rs"),
        "fn outside() {}\n// ANCHOR: k\nfn k() -> u32 {\n    7\n}\n// ANCHOR_END: k\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("docs/results/run/results/gpu/run.jsonl"),
        r#"{"variant":"timed","label":"a","gb_per_s":10.5,"context":{"date":"2026-12-01T00:00:00Z","gpu":"G"}}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("docs/results/run/out.txt"),
        "== First\n| a 1\n== Second\n| b 2\n| c 3\n",
    )
    .unwrap();
    let opts = lab_book::Options {
        root: dir.clone(),
        out: dir.join("out"),
        run: Some(PathBuf::from("docs/results/run")),
    };
    (dir, opts)
}

#[test]
fn a_sound_tiny_book_builds_and_its_excerpt_and_figure_are_in_place() {
    let (dir, opts) = tiny_book(
        "sound",
        "# One\n\n{{#lab-pair src/k.rs:k src/k.rs:k}}\n\n\
         {{#lab-output {run}/out.txt from=\"== Second\" to=\"| b\"}}\n\n\
         {{#lab-bars {records}/run.jsonl value=gb_per_s label=label}}\n\n\
         [two](two.md#a-heading) and [the run](results/run/results/gpu/run.jsonl)\n",
    );
    let built = lab_book::build(&opts).unwrap();
    assert!(built.problems.is_empty(), "{:?}", built.problems);
    let html = std::fs::read_to_string(opts.out.join("one.html")).unwrap();
    assert!(
        html.contains("fn k()") && !html.contains("outside"),
        "the excerpt is the anchor's lines"
    );
    assert!(!html.contains("ANCHOR"), "anchor lines are dropped");
    // from= and to= pick the lines by the text they start with, inclusive.
    assert!(
        html.contains("== Second")
            && html.contains("| b 2")
            && !html.contains("| a 1")
            && !html.contains("| c 3")
    );
    assert_eq!(built.figures.len(), 1);
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn a_broken_link_or_fragment_is_reported() {
    let (dir, opts) = tiny_book(
        "links",
        "# One\n\n[gone](gone.md), [no such heading](two.md#nowhere), [no file](results/none.txt)\n",
    );
    let built = lab_book::build(&opts).unwrap();
    let all = built.problems.join("\n");
    assert!(all.contains("gone.html"), "{all}");
    assert!(all.contains("#nowhere"), "{all}");
    assert!(all.contains("results/none.txt"), "{all}");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn a_missing_anchor_fails_the_build_and_names_it() {
    let (dir, opts) = tiny_book(
        "anchor",
        "# One\n\n{{#lab-pair src/k.rs:k src/k.rs:gone}}\n",
    );
    let err = format!(
        "{:#}",
        lab_book::build(&opts).expect_err("a missing anchor fails")
    );
    assert!(
        err.contains("ANCHOR: gone") && err.contains("one.md"),
        "{err}"
    );
    // mdBook's own include would include nothing: the check reports it.
    let (dir2, opts2) = tiny_book(
        "include",
        "# One\n\n```rust\n{{#include ../../src/k.rs:gone}}\n```\n",
    );
    let built = lab_book::build(&opts2).unwrap();
    assert!(
        built.problems.iter().any(|p| p.contains("gone")),
        "{:?}",
        built.problems
    );
    std::fs::remove_dir_all(dir).ok();
    std::fs::remove_dir_all(dir2).ok();
}

#[test]
fn a_missing_figure_or_recorded_file_is_caught() {
    let (dir, opts) = tiny_book("figure", "# One\n\n<img src=\"figures/none.svg\">\n");
    let built = lab_book::build(&opts).unwrap();
    assert!(
        built
            .problems
            .iter()
            .any(|p| p.contains("figures/none.svg")),
        "{:?}",
        built.problems
    );
    let (dir2, opts2) = tiny_book(
        "norun",
        "# One\n\n{{#lab-table docs/results/gone.jsonl cols=a}}\n",
    );
    let err = format!(
        "{:#}",
        lab_book::build(&opts2).expect_err("a missing run fails")
    );
    assert!(err.contains("gone.jsonl"), "{err}");
    let (dir3, opts3) = tiny_book(
        "nothing",
        "# One\n\n{{#lab-bars docs/results/run/results/gpu/run.jsonl value=ms label=label}}\n",
    );
    let err = format!(
        "{:#}",
        lab_book::build(&opts3).expect_err("a chart of nothing fails")
    );
    assert!(err.contains("no row has a number at ms"), "{err}");
    for d in [dir, dir2, dir3] {
        std::fs::remove_dir_all(d).ok();
    }
}

/// `cargo xtask record` asks each lesson for the PTX and SASS of a kernel
/// the lesson has, and the book's run holds every file a recorded run has.
#[test]
fn the_book_run_holds_what_cargo_xtask_record_writes() {
    for (lesson, kernel) in xtask::BOOK_ASM {
        let entry = host::lessons::find(lesson).unwrap_or_else(|| panic!("no lesson {lesson}"));
        assert!(
            (entry.kernels)().iter().any(|(symbol, _)| symbol == kernel),
            "{lesson} has no kernel {kernel}"
        );
    }
    // The lessons the run recorded (a lesson added since, by `cargo xtask
    // new-lesson`, is not in it until a new run is recorded): each has all
    // of its files. The ten lessons the book's chapters read are there.
    let run = root().join(lab_book::BOOK_RUN);
    let recorded: Vec<&str> = xtask::LESSONS
        .iter()
        .copied()
        .filter(|l| run.join(format!("{l}.txt")).is_file())
        .collect();
    assert!(
        recorded.len() >= 10,
        "the book run recorded only {recorded:?}"
    );
    let mut missing = Vec::new();
    for lesson in &recorded {
        for file in [
            format!("{lesson}.txt"),
            format!("{lesson}-compare.jsonl"),
            format!("results/nvidia-h200/{lesson}.jsonl"),
        ] {
            if !run.join(&file).is_file() {
                missing.push(file);
            }
        }
    }
    for (_, kernel) in xtask::BOOK_ASM.iter().filter(|(l, _)| recorded.contains(l)) {
        let file = format!("asm-{kernel}.txt");
        if !run.join(&file).is_file() {
            missing.push(file);
        }
    }
    assert!(missing.is_empty(), "the book run lacks {missing:?}");
}
