//! The docs match the recorded data: every measured figure in README.md,
//! docs/*.md and the lesson book's chapters (book/src/*.md) (a rate or a time: GB/s, TB/s, GFLOP/s, TFLOP/s, ms, us, and
//! "N% of" a limit) sits in a recorded results file that its paragraph
//! cites (a path containing `results/`), at the precision the text gives
//! it; a cited file exists and holds no run from a dirty tree (a commit
//! marked `-dirty`). A table or a list takes the citations of the paragraph
//! just before it too. Code blocks are commands, not figures.
//!
//! A figure matches a number of the file that rounds to it at the figure's
//! decimals, directly or scaled by 1000 (ms and us, GB/s and TB/s, GFLOP/s
//! and TFLOP/s) or by 100 (a share written as a fraction in JSON).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Parser, Tag, TagEnd};
use regex::Regex;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The documents the test reads: the README, every docs/*.md and every
/// chapter of the lesson book (book/src/*.md).
fn documents() -> Vec<PathBuf> {
    let mut docs = vec![root().join("README.md")];
    for dir in ["docs", "book/src"] {
        let mut more: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .unwrap_or_else(|e| panic!("{dir}/ is readable: {e}"))
            .map(|e| e.expect("a directory entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .collect();
        more.sort();
        docs.extend(more);
    }
    docs
}

/// One block of a document: its text, and whether it takes the citations
/// of the block before it (tables and list items do).
struct Block {
    text: String,
    inherits: bool,
}

/// The document's blocks: paragraphs, headings, list items (each its own),
/// tables; code blocks left out.
fn blocks(markdown: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut list_depth = 0usize;
    for (event, range) in
        Parser::new_ext(markdown, pulldown_cmark::Options::ENABLE_TABLES).into_offset_iter()
    {
        match event {
            Event::Start(Tag::List(_)) => list_depth += 1,
            Event::End(TagEnd::List(_)) => list_depth -= 1,
            Event::Start(tag) => {
                let top = depth == 0 || (list_depth > 0 && matches!(tag, Tag::Item));
                let block = matches!(
                    tag,
                    Tag::Paragraph | Tag::Heading { .. } | Tag::Table(_) | Tag::Item
                );
                if top && block {
                    out.push(Block {
                        text: markdown[range.clone()].to_string(),
                        inherits: matches!(tag, Tag::Table(_) | Tag::Item),
                    });
                }
                if !matches!(tag, Tag::Item) {
                    depth += 1;
                }
            }
            Event::End(TagEnd::Item) => {}
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    out
}

/// A figure the text states: its digits as written (commas dropped) and
/// the number of decimals they carry.
#[derive(Debug, Clone, PartialEq)]
struct Figure {
    text: String,
    decimals: usize,
}

fn figures(text: &str) -> Vec<Figure> {
    static PATTERNS: std::sync::OnceLock<[Regex; 2]> = std::sync::OnceLock::new();
    let [rate, share] = PATTERNS.get_or_init(|| {
        [
            Regex::new(
                r"(?:^|[^\w.])(\d[\d,]*(?:\.\d+)?)\s*(?:GB/s|TB/s|GFLOP/s|TFLOP/s|ms\b|us\b|µs\b)",
            )
            .unwrap(),
            Regex::new(r"(?:^|[^\w.])(\d+(?:\.\d+)?)%\s+of\b").unwrap(),
        ]
    });
    rate.captures_iter(text)
        .chain(share.captures_iter(text))
        .map(|c| {
            let digits = c[1].replace(',', "");
            let decimals = digits.split_once('.').map_or(0, |(_, d)| d.len());
            Figure {
                text: digits,
                decimals,
            }
        })
        .collect()
}

/// The results files a block cites: every `...results/...` path with a
/// .jsonl, .json, .txt or .csv name, relative to the document's folder or the
/// repository's root; a book chapter's `results/...` is docs/results/...
/// (the book build copies docs/results into the book as `results/`).
fn citations(text: &str, doc: &Path) -> Vec<PathBuf> {
    static CITE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let cite = CITE
        .get_or_init(|| Regex::new(r"[\w./-]*results/[\w./-]+\.(?:jsonl|json|txt|csv)").unwrap());
    let folder = doc.parent().expect("a document has a folder");
    cite.find_iter(text)
        .map(|m| {
            let rel = m.as_str();
            let near = folder.join(rel);
            let in_book = root().join("docs").join(rel);
            if near.exists() {
                near
            } else if rel.starts_with("results/") && in_book.exists() {
                in_book
            } else {
                root().join(rel)
            }
        })
        .collect()
}

/// `path` relative to the repository's root, for messages.
fn shown(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// What a cited file offers: every number in it, formatted at 0 to 6
/// decimals, directly and scaled; or why it cannot be cited.
struct Cited {
    numbers: HashSet<String>,
}

fn read_cited(path: &Path) -> Result<Cited, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cites {}, which cannot be read: {e}", shown(path)))?;
    static DIRTY: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let dirty = DIRTY.get_or_init(|| Regex::new(r"[0-9a-f]{7,40}-dirty").unwrap());
    if let Some(m) = dirty.find(&text) {
        return Err(format!(
            "cites {}, which holds a run from a dirty tree (commit {}): re-record it from a clean one",
            shown(path),
            m.as_str()
        ));
    }
    static NUMBER: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let number = NUMBER.get_or_init(|| Regex::new(r"\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?").unwrap());
    let mut numbers = HashSet::new();
    for m in number.find_iter(&text) {
        let Ok(v) = m.as_str().replace(',', "").parse::<f64>() else {
            continue;
        };
        for scaled in [v, v * 1000.0, v / 1000.0, v * 100.0] {
            for d in 0..=6 {
                numbers.insert(format!("{scaled:.d$}"));
            }
        }
    }
    Ok(Cited { numbers })
}

/// Every problem with `markdown` (the document at `doc`): figures no cited
/// file holds, figures without a citation, files that cannot be cited.
fn problems(
    markdown: &str,
    doc: &Path,
    cache: &mut HashMap<PathBuf, Result<Cited, String>>,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut before: Vec<PathBuf> = Vec::new();
    let name = doc
        .strip_prefix(root())
        .unwrap_or(doc)
        .display()
        .to_string();
    for block in blocks(markdown) {
        let mut cited = citations(&block.text, doc);
        let own = cited.clone();
        if block.inherits {
            cited.extend(before.iter().cloned());
        }
        for path in &cited {
            if let Err(why) = cache
                .entry(path.clone())
                .or_insert_with(|| read_cited(path))
            {
                out.push(format!("{name}: {why}"));
            }
        }
        for f in figures(&block.text) {
            let first_line = block
                .text
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(80)
                .collect::<String>();
            if cited.is_empty() {
                out.push(format!(
                    "{name}: {} is cited from no results file (in \"{first_line}\")",
                    f.text
                ));
                continue;
            }
            let found = cited
                .iter()
                .any(|p| matches!(cache.get(p), Some(Ok(c)) if c.numbers.contains(&f.text)));
            if !found {
                out.push(format!(
                    "{name}: {} is in none of the files it cites ({}) (in \"{first_line}\")",
                    f.text,
                    cited
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        if !block.inherits || !own.is_empty() {
            before = own;
        }
    }
    out
}

#[test]
fn every_figure_in_the_docs_is_in_the_file_it_cites() {
    let mut cache = HashMap::new();
    let mut all = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).expect("a document is readable");
        all.extend(problems(&text, &doc, &mut cache));
    }
    assert!(
        all.is_empty(),
        "{} problems:\n{}",
        all.len(),
        all.join("\n")
    );
}

#[test]
fn changing_a_cited_figure_fails_the_check() {
    // The README's first cited figure, one unit of its last digit higher:
    // the check must see it.
    let doc = root().join("README.md");
    let text = std::fs::read_to_string(&doc).unwrap();
    let mut cache = HashMap::new();
    let block = blocks(&text)
        .into_iter()
        .find(|b| !figures(&b.text).is_empty() && !citations(&b.text, &doc).is_empty())
        .expect("the README cites at least one figure");
    let figure = figures(&block.text)[0].text.clone();
    let last = figure.chars().last().unwrap().to_digit(10).unwrap();
    let changed = format!("{}{}", &figure[..figure.len() - 1], (last + 1) % 10);
    let edited_block = block.text.replacen(&figure, &changed, 1);
    let edited = text.replacen(&block.text, &edited_block, 1);
    let found = problems(&edited, &doc, &mut cache);
    assert!(
        found.iter().any(|p| p.contains(&changed)),
        "changing {figure} to {changed} went unseen: {found:?}"
    );
}

#[test]
fn the_checker_reads_figures_citations_and_dirty_runs() {
    let f = figures("a copy at 4,193.4 GB/s, 0.128 ms, 95.4% of the limit; 16 threads; 2.5%");
    let texts: Vec<&str> = f.iter().map(|x| x.text.as_str()).collect();
    assert_eq!(texts, ["4193.4", "0.128", "95.4"]);
    assert_eq!(f[0].decimals, 1);
    // A book chapter cites docs/results/... as results/... (copied in).
    let doc = root().join("book/src/roofline.md");
    let c = citations(
        "see [x](results/h200-2026-11-30-issue13/record/roofline.txt).",
        &doc,
    );
    assert_eq!(c.len(), 1);
    assert!(c[0].exists(), "{}", c[0].display());
    assert!(
        c[0].starts_with(root().join("docs/results")),
        "{}",
        c[0].display()
    );
    let dir = std::env::temp_dir().join(format!("lab-docs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dirty = dir.join("dirty.jsonl");
    std::fs::write(
        &dirty,
        r#"{"value": 4193.4, "context": {"git_commit": "0ab6f4b1c2d3-dirty"}}"#,
    )
    .unwrap();
    let err = read_cited(&dirty)
        .err()
        .expect("a dirty run cannot be cited");
    assert!(err.contains("dirty tree"), "{err}");
    let clean = dir.join("clean.jsonl");
    std::fs::write(
        &clean,
        r#"{"value": 4193.4312, "share": 0.9536, "context": {"git_commit": "0ab6f4b1c2d3"}}"#,
    )
    .unwrap();
    let c = read_cited(&clean).unwrap();
    for want in ["4193.4", "4193", "95.4", "4.193"] {
        assert!(c.numbers.contains(want), "{want}");
    }
    assert!(!c.numbers.contains("4193.5"));
    std::fs::remove_dir_all(&dir).ok();
}
