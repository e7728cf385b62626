//! What a rendered book must hold: every relative link and image resolves to
//! a file of the book (and a `#fragment` to an element id in it), and every
//! mdBook `{{#include PATH:ANCHOR}}` in the sources names an anchor that
//! exists (mdBook itself would silently include nothing).

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use regex::Regex;

/// Pages not checked: mdBook's print page repeats every chapter with its
/// links rewritten, and its 404 page links from wherever it is served.
const SKIPPED: &[&str] = &["print.html", "404.html", "toc.html"];

/// Every broken link, image or fragment in the HTML under `out`, as
/// "page: target (why)".
pub fn rendered(out: &Path) -> Vec<String> {
    let out = &normalize(out);
    let attr = Regex::new(r#"(?:href|src)="([^"]*)""#).unwrap();
    let id = Regex::new(r#"\bid="([^"]+)""#).unwrap();
    let mut pages = Vec::new();
    collect_html(out, &mut pages);
    pages.sort();
    let mut ids: HashMap<PathBuf, Vec<String>> = HashMap::new();
    let mut problems = Vec::new();
    for page in &pages {
        let name = page.strip_prefix(out).unwrap_or(page);
        if SKIPPED.iter().any(|s| name == Path::new(s)) {
            continue;
        }
        let Ok(html) = std::fs::read_to_string(page) else {
            problems.push(format!("{}: unreadable", name.display()));
            continue;
        };
        for m in attr.captures_iter(&html) {
            let target = &m[1];
            if target.is_empty()
                || target.starts_with("http://")
                || target.starts_with("https://")
                || target.starts_with("mailto:")
                || target.starts_with("javascript:")
                || target.starts_with("data:")
                || target.starts_with("//")
                || target.contains("{{")
            {
                continue;
            }
            let (file, fragment) = match target.split_once('#') {
                Some((f, frag)) => (f, Some(frag)),
                None => (target, None),
            };
            let file = file.split('?').next().unwrap_or(file);
            let resolved = if file.is_empty() {
                page.clone()
            } else {
                normalize(&page.parent().expect("a page sits in a folder").join(file))
            };
            if !resolved.starts_with(out) {
                problems.push(format!("{}: {target} (outside the book)", name.display()));
                continue;
            }
            let exists = if resolved.is_dir() {
                resolved.join("index.html").is_file()
            } else {
                resolved.is_file()
            };
            if !exists {
                problems.push(format!(
                    "{}: {target} (no such file in the book)",
                    name.display()
                ));
                continue;
            }
            let Some(fragment) = fragment.filter(|f| !f.is_empty()) else {
                continue;
            };
            if resolved.extension().is_none_or(|e| e != "html") {
                continue;
            }
            let known = ids.entry(resolved.clone()).or_insert_with(|| {
                std::fs::read_to_string(&resolved)
                    .map(|h| id.captures_iter(&h).map(|c| c[1].to_string()).collect())
                    .unwrap_or_default()
            });
            if !known.iter().any(|i| i == fragment) {
                problems.push(format!(
                    "{}: {target} (no element with id \"{fragment}\" there)",
                    name.display()
                ));
            }
        }
    }
    problems
}

fn collect_html(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        // The recorded runs are data, not pages of the book.
        if p.is_dir() && p.file_name().is_some_and(|n| n != "results") {
            collect_html(&p, out);
        } else if p.extension().is_some_and(|x| x == "html") {
            out.push(p);
        }
    }
}

/// `path` with `.` and `..` resolved, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Every `{{#include PATH:ANCHOR}}` (and `{{#rustdoc_include ...}}`) under
/// `src` whose file or anchor is missing, as "chapter: directive (why)".
pub fn includes(src: &Path) -> Vec<String> {
    let re = Regex::new(r"\{\{#(?:include|rustdoc_include)\s+([^}\s]+)\s*\}\}").unwrap();
    let mut chapters = Vec::new();
    collect_md(src, &mut chapters);
    chapters.sort();
    let mut problems = Vec::new();
    for ch in chapters {
        let Ok(text) = std::fs::read_to_string(&ch) else {
            continue;
        };
        let name = ch.strip_prefix(src).unwrap_or(&ch).display().to_string();
        for m in re.captures_iter(&text) {
            let spec = &m[1];
            let (file, anchor) = match spec.split_once(':') {
                Some((f, a)) if !a.chars().all(|c| c.is_ascii_digit() || c == ':') => (f, Some(a)),
                Some((f, _)) => (f, None),
                None => (spec, None),
            };
            let path = ch.parent().expect("a chapter sits in a folder").join(file);
            match std::fs::read_to_string(&path) {
                Err(e) => problems.push(format!("{name}: {} ({file}: {e})", &m[0])),
                Ok(body) => {
                    if let Some(a) = anchor
                        && let Err(e) = crate::directives::excerpt(&body, a)
                    {
                        problems.push(format!("{name}: {} ({file}: {e})", &m[0]));
                    }
                }
            }
        }
    }
    problems
}

fn collect_md(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_md(&p, out);
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}
