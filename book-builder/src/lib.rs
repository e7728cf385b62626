//! The lesson book: `cargo xtask book` renders `book/` with mdBook (used as a
//! library, so nothing else needs installing) into `target/book`.
//!
//! The lab's own preprocessor ([`directives`]) expands `{{#lab-...}}`
//! directives into code beside its CUDA C twin (pulled from the sources by
//! mdBook-style anchors, so it cannot go stale), recorded outputs, and tables
//! and charts generated from the recorded runs under `docs/results/` by the
//! project's own code (`host::report::table`, `host::plot`). No GPU is
//! needed. After rendering, the recorded files are copied in as `results/`
//! (the chapters cite them there), the charts are written under `figures/`,
//! and [`check`] reads the rendered HTML for broken links, missing anchors
//! and missing figures.

pub mod check;
pub mod directives;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// What to build: the repository's root (holding `book/` and `docs/results/`)
/// and the folder the HTML goes to.
#[derive(Debug, Clone)]
pub struct Options {
    /// The repository's root.
    pub root: PathBuf,
    /// The output folder (emptied and rewritten).
    pub out: PathBuf,
    /// The recorded run the chapters' directives read through `{run}` and
    /// `{records}`, relative to the root ([`BOOK_RUN`] when `None`).
    pub run: Option<PathBuf>,
}

/// The run the book is written from: all ten lessons on one H200 at one
/// clean commit (its README gives the context). Another run recorded the
/// same way (`cargo xtask record`) can take its place: `cargo xtask book
/// --run DIR`.
pub const BOOK_RUN: &str = "docs/results/h200-2026-12-01-book";

/// A rendered book.
#[derive(Debug)]
pub struct Built {
    /// The output folder; `index.html` is the start page.
    pub out: PathBuf,
    /// The chapters' source files, relative to `book/src`.
    pub chapters: Vec<PathBuf>,
    /// The generated charts, relative to the output folder.
    pub figures: Vec<PathBuf>,
    /// What [`check`] found wrong in the rendered book (empty when sound).
    pub problems: Vec<String>,
}

/// The folder of recorded runs, relative to the repository's root; chapters
/// link its files as `results/<path below it>`.
pub const RESULTS_DIR: &str = "docs/results";

/// Renders the book and checks it.
///
/// # Errors
/// `book/book.toml` or `book/src/SUMMARY.md` cannot be read, a directive
/// fails (every failing directive is named: a missing file or anchor, a
/// recorded file that is not JSON lines, a chart with nothing to draw), or
/// the output cannot be written. A broken link or a missing figure is not
/// an error here but a [`Built::problems`] entry.
pub fn build(opts: &Options) -> Result<Built> {
    let root = opts
        .root
        .canonicalize()
        .with_context(|| format!("the repository's root {}", opts.root.display()))?;
    let book_dir = root.join("book");
    if !book_dir.join("book.toml").is_file() {
        bail!(
            "{} has no book.toml: not the lab's repository?",
            book_dir.display()
        );
    }
    let out = absolute(&opts.out)?;
    let mut book = mdbook_driver::MDBook::load(&book_dir)
        .map_err(|e| anyhow::anyhow!("loading {}: {e:#}", book_dir.display()))?;
    book.config.build.build_dir = out.clone();
    let chapters: Vec<PathBuf> = book
        .book
        .chapters()
        .filter_map(|c| c.source_path.clone())
        .collect();
    let run = opts.run.clone().unwrap_or_else(|| PathBuf::from(BOOK_RUN));
    let lab = directives::Lab::new(root.clone(), &run)?;
    let figures = lab.figures();
    book.with_preprocessor(lab);
    book.build()
        .map_err(|e| anyhow::anyhow!("building the book: {e:#}"))?;

    let results = root.join(RESULTS_DIR);
    copy_tree(&results, &out.join("results"))
        .with_context(|| format!("copying {} into the book", results.display()))?;
    let mut written = Vec::new();
    for (rel, svg) in figures.lock().expect("no directive panicked").iter() {
        let path = out.join(rel);
        std::fs::create_dir_all(path.parent().expect("a figure sits in figures/"))?;
        std::fs::write(&path, svg).with_context(|| format!("writing {}", path.display()))?;
        written.push(rel.clone());
    }
    let mut problems = check::rendered(&out);
    problems.extend(check::includes(&book_dir.join("src")));
    Ok(Built {
        out,
        chapters,
        figures: written,
        problems,
    })
}

fn absolute(path: &Path) -> Result<PathBuf> {
    Ok(if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()?.join(path)
    })
}

/// Copies every file under `from` to the same place under `to`; a
/// Markdown file (a run's README) is also rendered beside itself as HTML,
/// which is where mdBook points a chapter's link to it.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
            if target.extension().is_some_and(|e| e == "md") {
                let text = std::fs::read_to_string(&target)?;
                std::fs::write(target.with_extension("html"), markdown_page(&text))?;
            }
        }
    }
    Ok(())
}

/// A Markdown file as a plain HTML page (tables included).
fn markdown_page(text: &str) -> String {
    let parser = pulldown_cmark::Parser::new_ext(text, pulldown_cmark::Options::ENABLE_TABLES);
    let mut body = String::new();
    pulldown_cmark::html::push_html(&mut body, parser);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <style>body{{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em}}\
         table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:0.2em 0.5em}}\
         code{{font-size:0.9em}}</style></head><body>\n{body}</body></html>\n"
    )
}
