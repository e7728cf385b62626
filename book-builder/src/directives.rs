//! The lab's mdBook preprocessor: expands each `{{#lab-KIND ARGS}}` in a
//! chapter. Paths in ARGS are relative to the repository's root; `{run}`
//! and `{records}` in them name the recorded run the book reads
//! ([`Places`]); a value with spaces is written in double quotes.
//!
//! | directive | becomes |
//! | --- | --- |
//! | `lab-pair RUST:ANCHOR CUDA:ANCHOR` | the two excerpts side by side, each captioned with its file |
//! | `lab-code PATH[:ANCHOR]` | one excerpt (a whole file without an anchor) |
//! | `lab-output PATH [lines=A-B or from=TEXT [to=TEXT]]` | a recorded text output, verbatim, with its file linked (`from`/`to`: the lines starting with those texts, inclusive) |
//! | `lab-table PATH.jsonl cols=KEY[:Header],.. [where=KEY:VALUE]..` | a table of the run's rows, through `host::report::table` |
//! | `lab-compare PATH.jsonl` | the Rust-against-CUDA-C table of a `--compare --json` run |
//! | `lab-roofline PATH.jsonl` | the roofline chart of a recorded roofline run (`host::plot`) |
//! | `lab-bars PATH.jsonl value=KEY label=KEY [where=..] [unit=U]` | a bar chart of one value per row (`host::plot`) |
//! | `lab-context PATH.jsonl` | the run's context, folded |
//!
//! An excerpt is the lines between `ANCHOR: name` and `ANCHOR_END: name`
//! (mdBook's syntax, so `{{#include}}` reads the same anchors), other anchor
//! lines dropped and the common indentation removed. Every failure names the
//! chapter and the directive; the book does not build with one.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use mdbook_preprocessor::book::{Book, BookItem};
use mdbook_preprocessor::errors::Result as BookResult;
use mdbook_preprocessor::{Preprocessor, PreprocessorContext};
use regex::Regex;
use serde_json::Value;

use crate::RESULTS_DIR;

/// Charts made while expanding: (path in the output, SVG text).
pub type Figures = Arc<Mutex<Vec<(PathBuf, String)>>>;

/// The preprocessor.
pub struct Lab {
    root: PathBuf,
    /// What `{run}` and `{records}` stand for in a directive's paths.
    places: Places,
    figures: Figures,
}

/// The recorded run a book reads: `{run}` is its folder (the reports
/// `<lesson>.txt`, `<lesson>-compare.jsonl`, `asm-<kernel>.txt`) and
/// `{records}` the one GPU folder under its `results/` (the JSON rows
/// `<lesson>.jsonl`), both relative to the repository's root.
#[derive(Debug, Clone)]
pub struct Places {
    run: String,
    records: String,
}

impl Places {
    /// The places of the run in `run` (relative to `root`).
    ///
    /// # Errors
    /// `run` is not a folder, or its `results/` does not hold exactly one
    /// GPU's folder.
    pub fn of(root: &Path, run: &Path) -> Result<Places, String> {
        let shown = run.display().to_string();
        let results = root.join(run).join("results");
        let gpus: Vec<String> = std::fs::read_dir(&results)
            .map_err(|e| format!("the run {shown}: {}: {e}", results.display()))?
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        match gpus.as_slice() {
            [one] => Ok(Places {
                records: format!("{shown}/results/{one}"),
                run: shown,
            }),
            _ => Err(format!(
                "the run {shown}: results/ should hold one GPU's folder, it holds {gpus:?}"
            )),
        }
    }

    fn fill(&self, text: &str) -> String {
        text.replace("{run}", &self.run)
            .replace("{records}", &self.records)
    }
}

impl Lab {
    /// A preprocessor reading sources and the recorded run `run` (relative
    /// to `root`) under `root`.
    ///
    /// # Errors
    /// As [`Places::of`].
    pub fn new(root: PathBuf, run: &Path) -> anyhow::Result<Lab> {
        let places = Places::of(&root, run).map_err(|e| anyhow::anyhow!(e))?;
        Ok(Lab {
            root,
            places,
            figures: Arc::default(),
        })
    }

    /// The charts it made (filled while the book builds).
    pub fn figures(&self) -> Figures {
        Arc::clone(&self.figures)
    }
}

impl Preprocessor for Lab {
    fn name(&self) -> &str {
        "lab"
    }

    fn run(&self, _ctx: &PreprocessorContext, mut book: Book) -> BookResult<Book> {
        let mut errors = Vec::new();
        book.for_each_mut(|item| {
            if let BookItem::Chapter(ch) = item {
                let name = ch
                    .source_path
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| ch.name.clone());
                let stem = ch
                    .source_path
                    .as_ref()
                    .and_then(|p| p.file_stem())
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "chapter".into());
                match expand(&self.root, &self.places, &stem, &ch.content, &self.figures) {
                    Ok(text) => ch.content = text,
                    Err(e) => errors.extend(e.into_iter().map(|e| format!("{name}: {e}"))),
                }
            }
        });
        if errors.is_empty() {
            Ok(book)
        } else {
            Err(anyhow::anyhow!(
                "{} directive(s) failed:\n  {}",
                errors.len(),
                errors.join("\n  ")
            ))
        }
    }
}

fn directive_re() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\{\{#lab-([a-z]+)((?:[^}]|\}[^}])*)\}\}").unwrap())
}

/// `text` with every directive expanded, or every directive's failure.
///
/// # Errors
/// One message per failing directive, quoting it.
pub fn expand(
    root: &Path,
    places: &Places,
    chapter: &str,
    text: &str,
    figures: &Figures,
) -> Result<String, Vec<String>> {
    let mut out = String::with_capacity(text.len());
    let mut errors = Vec::new();
    let mut last = 0;
    let mut n = 0;
    for m in directive_re().captures_iter(text) {
        let whole = m.get(0).expect("a match");
        out.push_str(&text[last..whole.start()]);
        last = whole.end();
        n += 1;
        let kind = &m[1];
        let args = Args::parse(&places.fill(&m[2]));
        let fig = PathBuf::from(format!("figures/{chapter}-{n}.svg"));
        let made = args.and_then(|a| match kind {
            "pair" => pair(root, &a),
            "code" => code(root, &a),
            "output" => output(root, &a),
            "table" => table(root, &a),
            "compare" => compare(root, &a),
            "context" => context(root, &a),
            "roofline" => roofline(root, &a, &fig, figures),
            "bars" => bars(root, &a, &fig, figures),
            other => Err(format!("unknown directive lab-{other}")),
        });
        match made {
            Ok(s) => out.push_str(&s),
            Err(e) => errors.push(format!("{}: {e}", whole.as_str())),
        }
    }
    out.push_str(&text[last..]);
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// A directive's arguments: positional ones, then `key=value` pairs.
#[derive(Debug, Default)]
struct Args {
    positional: Vec<String>,
    named: Vec<(String, String)>,
}

impl Args {
    fn parse(text: &str) -> Result<Args, String> {
        let mut tokens = Vec::new();
        let mut cur = String::new();
        let mut quoted = false;
        for c in text.chars() {
            match c {
                '"' => quoted = !quoted,
                c if c.is_whitespace() && !quoted => {
                    if !cur.is_empty() {
                        tokens.push(std::mem::take(&mut cur));
                    }
                }
                c => cur.push(c),
            }
        }
        if quoted {
            return Err("an unclosed double quote".into());
        }
        if !cur.is_empty() {
            tokens.push(cur);
        }
        let mut args = Args::default();
        for t in tokens {
            match t.split_once('=') {
                Some((k, v)) => args.named.push((k.to_string(), v.to_string())),
                None => args.positional.push(t),
            }
        }
        Ok(args)
    }

    fn path(&self, i: usize) -> Result<&str, String> {
        self.positional
            .get(i)
            .map(String::as_str)
            .ok_or_else(|| format!("argument {} (a path) is missing", i + 1))
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.named
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn all(&self, key: &str) -> Vec<&str> {
        self.named
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

fn read(root: &Path, rel: &str) -> Result<String, String> {
    std::fs::read_to_string(root.join(rel)).map_err(|e| format!("cannot read {rel}: {e}"))
}

/// The lines of `text` between `ANCHOR: name` and `ANCHOR_END: name`,
/// without other anchor lines and without their common indentation.
///
/// # Errors
/// The anchor is missing or never ends.
pub fn excerpt(text: &str, name: &str) -> Result<String, String> {
    let is_marker = |line: &str, tag: &str| {
        line.split_once(tag)
            .is_some_and(|(_, rest)| rest.trim() == name)
    };
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| is_marker(l, "ANCHOR:"))
        .ok_or_else(|| format!("no `ANCHOR: {name}` line"))?;
    let end = lines[start..]
        .iter()
        .position(|l| is_marker(l, "ANCHOR_END:"))
        .map(|i| start + i)
        .ok_or_else(|| format!("`ANCHOR: {name}` has no `ANCHOR_END: {name}`"))?;
    let body: Vec<&str> = lines[start + 1..end]
        .iter()
        .copied()
        .filter(|l| !l.contains("ANCHOR:") && !l.contains("ANCHOR_END:"))
        .collect();
    let indent = body
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<&str> = body
        .iter()
        .map(|l| {
            if l.len() >= indent {
                &l[indent..]
            } else {
                l.trim_start()
            }
        })
        .collect();
    while out.first().is_some_and(|l| l.trim().is_empty()) {
        out.remove(0);
    }
    while out.last().is_some_and(|l| l.trim().is_empty()) {
        out.pop();
    }
    if out.is_empty() {
        return Err(format!("the anchor {name} holds no line"));
    }
    Ok(out.join("\n"))
}

/// `PATH[:ANCHOR]`'s code and its fence language.
fn source(root: &Path, spec: &str) -> Result<(String, String, &'static str), String> {
    let (path, anchor) = match spec.rsplit_once(':') {
        Some((p, a)) => (p, Some(a)),
        None => (spec, None),
    };
    let text = read(root, path)?;
    let code = match anchor {
        Some(a) => excerpt(&text, a).map_err(|e| format!("{path}: {e}"))?,
        None => text.trim_end().to_string(),
    };
    let lang = match Path::new(path).extension().and_then(|e| e.to_str()) {
        // Kernel and host code are excerpts, not programs: no playground
        // button and no hidden `fn main()` around them.
        Some("rs") => "rust,noplayground",
        Some("cu") | Some("cuh") => "cpp",
        Some("toml") => "toml",
        Some("sh") => "bash",
        _ => "text",
    };
    Ok((path.to_string(), code, lang))
}

fn fenced(code: &str, lang: &str) -> String {
    let fence = if code.contains("```") { "~~~~" } else { "```" };
    format!("{fence}{lang}\n{code}\n{fence}")
}

fn pair(root: &Path, a: &Args) -> Result<String, String> {
    let (rust_path, rust, rust_lang) = source(root, a.path(0)?)?;
    let (c_path, c, c_lang) = source(root, a.path(1)?)?;
    Ok(format!(
        "<div class=\"lab-pair\">\n<div>\n\n**Rust** · `{rust_path}`\n\n{}\n\n</div>\n<div>\n\n**CUDA C** · `{c_path}`\n\n{}\n\n</div>\n</div>\n",
        fenced(&rust, rust_lang),
        fenced(&c, c_lang)
    ))
}

fn code(root: &Path, a: &Args) -> Result<String, String> {
    let (path, code, lang) = source(root, a.path(0)?)?;
    Ok(format!(
        "{}\n<p class=\"lab-source\">{path}</p>\n",
        fenced(&code, lang)
    ))
}

fn output(root: &Path, a: &Args) -> Result<String, String> {
    let path = a.path(0)?;
    let text = read(root, path)?;
    let lines: Vec<&str> = text.lines().collect();
    let shown = match (a.get("lines"), a.get("from")) {
        (None, None) => lines.join("\n"),
        (Some(_), Some(_)) => {
            return Err("lines= and from= are two ways to say the same: give one".into());
        }
        (None, Some(from)) => {
            // From the first line that starts with `from` (leading spaces
            // ignored) through the first line at or after it that starts
            // with `to` (the last line without `to=`): text the report
            // prints on every GPU, so another run's output excerpts alike.
            let starts = |l: &&str, p: &str| l.trim_start().starts_with(p);
            let first = lines
                .iter()
                .position(|l| starts(l, from))
                .ok_or_else(|| format!("{path}: no line starts with \"{from}\""))?;
            let last = match a.get("to") {
                None => lines.len() - 1,
                Some(to) => lines[first..]
                    .iter()
                    .position(|l| starts(l, to))
                    .map(|i| first + i)
                    .ok_or_else(|| {
                        format!("{path}: no line from \"{from}\" on starts with \"{to}\"")
                    })?,
            };
            lines[first..=last].join("\n")
        }
        (Some(range), None) => {
            let (from, to) = range
                .split_once('-')
                .and_then(|(f, t)| Some((f.parse::<usize>().ok()?, t.parse::<usize>().ok()?)))
                .ok_or_else(|| format!("lines={range}: not A-B"))?;
            if from == 0 || from > to || to > lines.len() {
                return Err(format!(
                    "lines={range}: {path} has {} lines (lines count from 1)",
                    lines.len()
                ));
            }
            lines[from - 1..to].join("\n")
        }
    };
    Ok(format!(
        "<div class=\"lab-output\">\n\n{}\n\n</div>\n\n<p class=\"lab-source\">Recorded output: {}</p>\n",
        fenced(&shown, "text"),
        html_link(path)
    ))
}

fn html_link(path: &str) -> String {
    match path.strip_prefix(&format!("{RESULTS_DIR}/")) {
        Some(rest) => format!("<a href=\"results/{rest}\"><code>{path}</code></a>"),
        None => format!("<code>{path}</code>"),
    }
}

/// The rows of a recorded JSON-lines file: the last run in it (the rows
/// sharing the last row's context date), and that run's context.
fn run_rows(root: &Path, path: &str) -> Result<(Vec<Value>, Value), String> {
    if !path.ends_with(".jsonl") {
        return Err(format!("{path}: a recorded run is a .jsonl file"));
    }
    let text = read(root, path)?;
    let mut rows = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let v: Value =
            serde_json::from_str(line).map_err(|e| format!("{path}:{}: not JSON: {e}", i + 1))?;
        rows.push(v);
    }
    let context = rows
        .iter()
        .rev()
        .find_map(|r| r.get("context").cloned())
        .ok_or_else(|| format!("{path}: no row carries a context"))?;
    let date = context.get("date").cloned();
    let rows = rows
        .into_iter()
        .filter(|r| {
            r.get("context")
                .is_none_or(|c| c.get("date") == date.as_ref())
        })
        .collect();
    Ok((rows, context))
}

/// A value at a dotted key (`direct.ms`, `ncu.dram_bytes`).
fn at<'a>(row: &'a Value, key: &str) -> Option<&'a Value> {
    key.split('.').try_fold(row, |v, k| v.get(k))
}

fn cell(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "-".into(),
        Some(Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            // A count recorded as a float (bytes, FLOP) prints as the count.
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{f:.0}"),
            (None, f) => host::plot::format_value(f.unwrap_or(f64::NAN)),
        },
        Some(Value::String(s)) => s.replace('|', "/"),
        Some(Value::Bool(b)) => if *b { "yes" } else { "no" }.into(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| cell(Some(v)))
            .collect::<Vec<_>>()
            .join(", "),
        Some(other) => other.to_string(),
    }
}

/// The rows `where=KEY:VALUE` keeps (every condition holds).
fn filtered<'a>(rows: &'a [Value], a: &Args) -> Result<Vec<&'a Value>, String> {
    let conds: Vec<(&str, &str)> = a
        .all("where")
        .into_iter()
        .map(|w| {
            w.split_once(':')
                .ok_or_else(|| format!("where={w}: not KEY:VALUE"))
        })
        .collect::<Result<_, _>>()?;
    Ok(rows
        .iter()
        .filter(|r| {
            conds
                .iter()
                .all(|(k, v)| at(r, k).is_some_and(|x| matches(x, v)))
        })
        .collect())
}

/// Whether a recorded value is the one a `where=` names: numbers by value,
/// anything else by its printed form.
fn matches(x: &Value, wanted: &str) -> bool {
    match (x.as_f64(), wanted.parse::<f64>()) {
        (Some(a), Ok(b)) => a == b,
        _ => cell(Some(x)) == wanted,
    }
}

/// The caption naming a run: its file, date, commit, GPU and toolchain.
fn run_caption(path: &str, ctx: &Value) -> String {
    let s = |k: &str| {
        ctx.get(k)
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string()
    };
    format!(
        "From {}: the run of {} at commit {} on an {} (compute capability {}, driver {}), {}.",
        html_link(path),
        s("date"),
        s("git_commit"),
        s("gpu"),
        s("compute_capability"),
        s("driver_version"),
        s("toolchain"),
    )
}

fn table(root: &Path, a: &Args) -> Result<String, String> {
    let path = a.path(0)?;
    let (rows, ctx) = run_rows(root, path)?;
    let cols: Vec<(&str, String)> = a
        .get("cols")
        .ok_or("cols=KEY[:Header],... is missing")?
        .split(',')
        .map(|c| match c.split_once(':') {
            Some((k, h)) => (k, h.replace('_', " ")),
            None => (c, c.replace('_', " ")),
        })
        .collect();
    let kept = filtered(&rows, a)?;
    if kept.is_empty() {
        return Err(format!("{path}: no row matches {:?}", a.all("where")));
    }
    let headers: Vec<&str> = cols.iter().map(|(_, h)| h.as_str()).collect();
    let mut t = host::report::table(&headers);
    for r in kept {
        t.add_row(cols.iter().map(|(k, _)| cell(at(r, k))));
    }
    Ok(format!(
        "{t}\n\n<p class=\"lab-source\">{}</p>\n",
        run_caption(path, &ctx)
    ))
}

fn compare(root: &Path, a: &Args) -> Result<String, String> {
    let path = a.path(0)?;
    let (rows, ctx) = run_rows(root, path)?;
    let mut t = host::report::table(&[
        "kernel",
        "Rust ms",
        "CUDA C ms",
        "Rust / C",
        "range over trials",
        "verdict",
        "registers Rust / C",
        "outputs",
    ]);
    let f = |r: &Value, k: &str| at(r, k).and_then(Value::as_f64);
    let mut n = 0;
    for r in filtered(&rows, a)? {
        let (Some(ratio), Some(rust_ms), Some(c_ms)) =
            (f(r, "ratio"), f(r, "rust_ms"), f(r, "c_ms"))
        else {
            continue;
        };
        n += 1;
        let symbol = cell(at(r, "symbol"));
        let variant = cell(at(r, "variant"));
        let name = if variant == symbol || variant == "-" {
            symbol
        } else {
            format!("{symbol} ({variant})")
        };
        t.add_row([
            name,
            format!("{rust_ms:.4}"),
            format!("{c_ms:.4}"),
            format!("{ratio:.3}"),
            format!(
                "{:.3} to {:.3}",
                f(r, "ratio_min").unwrap_or(f64::NAN),
                f(r, "ratio_max").unwrap_or(f64::NAN)
            ),
            cell(at(r, "verdict")),
            format!(
                "{} / {}",
                cell(at(r, "rust.registers")),
                cell(at(r, "c.registers"))
            ),
            agreement(at(r, "agreement")),
        ]);
    }
    if n == 0 {
        return Err(format!(
            "{path}: no compared kernel (rows with ratio, rust_ms, c_ms)"
        ));
    }
    let trials = rows
        .iter()
        .find_map(|r| {
            at(r, "trials.rust_ms")
                .and_then(Value::as_array)
                .map(Vec::len)
        })
        .unwrap_or(0);
    Ok(format!(
        "{t}\n\n<p class=\"lab-source\">Rust / C is the ratio of the medians over {trials} trials, each side launched first in half of them; \
         \"Slower\" or \"Faster\" only when every trial is past 0.5%, else parity. {}</p>\n",
        run_caption(path, &ctx)
    ))
}

/// A comparison's `agreement` in words: "identical", or how many elements
/// differ and the first.
fn agreement(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.to_lowercase(),
        Some(Value::Object(o)) => match o.get("Differ") {
            Some(d) => format!(
                "{} differ (first at {})",
                cell(d.get("count")),
                cell(d.get("first"))
            ),
            None => Value::Object(o.clone()).to_string(),
        },
        other => cell(other),
    }
}

fn context(root: &Path, a: &Args) -> Result<String, String> {
    let path = a.path(0)?;
    let (_, c) = run_rows(root, path)?;
    let s = |k: &str| cell(at(&c, k));
    let compact = |k: &str| {
        at(&c, k)
            .map(|v| v.to_string())
            .unwrap_or_else(|| "-".into())
    };
    let l2_mib = at(&c, "l2_bytes")
        .and_then(Value::as_f64)
        .map(|b| format!("{:.0} MiB", b / (1024.0 * 1024.0)))
        .unwrap_or_else(|| "-".into());
    let mut t = host::report::table(&["", "this run"]);
    for (k, v) in [
        (
            "GPU",
            format!(
                "{} ({} SMs, {} L2, PCI {})",
                s("gpu"),
                s("sms"),
                l2_mib,
                s("pci_bus_id")
            ),
        ),
        ("compute capability", s("compute_capability")),
        (
            "driver",
            format!("{} (CUDA {})", s("driver_version"), s("driver_cuda")),
        ),
        ("toolchain", s("toolchain")),
        (
            "PTX",
            format!("{}, module loading {}", s("ptx"), s("module_loading")),
        ),
        ("commit", s("git_commit")),
        ("date", s("date")),
        (
            "clocks while timed",
            format!(
                "SM {} MHz median ({} to {}), memory {} MHz median, {} samples",
                s("clocks.sm_mhz.median"),
                s("clocks.sm_mhz.min"),
                s("clocks.sm_mhz.max"),
                s("clocks.memory_mhz.median"),
                s("clocks.samples")
            ),
        ),
        ("sizes", format!("`{}`", compact("sizes"))),
        ("block sizes", format!("`{}`", compact("block_sizes"))),
        ("timing", format!("`{}`", compact("timing"))),
        ("L2 flushed between launches", s("l2_flushed")),
    ] {
        t.add_row([k.to_string(), v]);
    }
    Ok(format!(
        "<details>\n<summary>The run's context: {} on {}</summary>\n\n{t}\n\n<p class=\"lab-source\">{}</p>\n\n</details>\n",
        s("date"),
        s("gpu"),
        run_caption(path, &c)
    ))
}

fn figure(rel: &Path, alt: &str, caption: String) -> String {
    format!(
        "<figure class=\"lab-figure\">\n<img src=\"{}\" alt=\"{alt}\">\n<figcaption>{caption}</figcaption>\n</figure>\n",
        rel.display()
    )
}

fn roofline(root: &Path, a: &Args, fig: &Path, figures: &Figures) -> Result<String, String> {
    let path = a.path(0)?;
    let (rows, ctx) = run_rows(root, path)?;
    let chart = roofline_chart(&rows, &ctx).map_err(|e| format!("{path}: {e}"))?;
    let svg = host::plot::roofline_svg_text(&chart)?;
    figures
        .lock()
        .expect("no directive panicked")
        .push((fig.to_path_buf(), svg));
    let profiled = chart
        .points
        .iter()
        .filter(|p| p.series == host::plot::Series::MeasuredDram)
        .count();
    let dram = if profiled == 0 {
        "The run has no Nsight Compute counters, so no kernel is placed at its measured DRAM bytes."
            .to_string()
    } else {
        format!(
            "The {profiled} profiled kernels sit again (green) at the bytes Nsight Compute measured DRAM moving, \
             with an arrow from the first point to the second where the two are apart."
        )
    };
    let gemm: Vec<&str> = chart
        .points
        .iter()
        .filter(|p| p.series == host::plot::Series::Gemm)
        .map(|p| p.label.as_str())
        .collect();
    let tensor = chart.tensor.as_ref().map_or(String::new(), |t| {
        format!(
            " The roof above the FP32 one is the BF16 tensor-core ceiling, set by {}.",
            t.set_by
        )
    });
    let gemm = if gemm.is_empty() {
        String::new()
    } else {
        format!(
            " The GEMM lesson's {} (purple) sit far right, each under the flat roof of its precision.",
            gemm.join(" and ")
        )
    };
    Ok(figure(
        fig,
        "the roofline chart of the run",
        format!(
            "The roofline: both measured ceilings, the ridge point, and each kernel (red) at the bytes its algorithm asks for \
             (compulsory bytes). {dram}{tensor}{gemm} Left of the ridge the memory-bound region, right of it the compute-bound \
             region. {}",
            run_caption(path, &ctx)
        ),
    ))
}

/// The roofline chart of a recorded roofline run: the ceilings from its
/// `ceiling-bandwidth` and `ceiling-fma` rows (and the tensor-core roof from
/// its `ceiling-tensor` row, where it has one with a value), each placed kernel (a
/// `time` row with an intensity) at its compulsory intensity, and at
/// FLOP / `ncu.dram_bytes` where the run was profiled; and the GEMM
/// lesson's kernels of its `gemm` rows, where it placed them.
///
/// # Errors
/// A ceiling row is missing, or no kernel row is.
pub fn roofline_chart(rows: &[Value], ctx: &Value) -> Result<host::plot::Chart, String> {
    use host::plot::{Chart, Point, Series};
    let value_of = |variant: &str| {
        rows.iter()
            .find(|r| r.get("variant").and_then(Value::as_str) == Some(variant))
            .and_then(|r| r.get("value"))
            .and_then(Value::as_f64)
            .ok_or_else(|| format!("no `{variant}` row with a value: not a roofline run?"))
    };
    let bandwidth = value_of("ceiling-bandwidth")?;
    let fma = value_of("ceiling-fma")?;
    let tensor = rows
        .iter()
        .find(|r| r.get("variant").and_then(Value::as_str) == Some("ceiling-tensor"))
        .and_then(|r| {
            Some(host::plot::TensorRoof {
                // Records from before the FP16 ceiling have no precision:
                // they are all BF16.
                precision: match r
                    .pointer("/tensor_ceiling/precision")
                    .and_then(Value::as_str)
                {
                    Some("fp16") => "FP16",
                    _ => "BF16",
                },
                gflop_per_s: r.get("value").and_then(Value::as_f64)?,
                set_by: r
                    .get("set_by")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_string(),
            })
        });
    let mut points = Vec::new();
    for r in rows
        .iter()
        .filter(|r| r.get("metric").and_then(Value::as_str) == Some("time"))
    {
        let (Some(label), Some(intensity), Some(gflop), Some(flop)) = (
            r.get("variant").and_then(Value::as_str),
            r.get("intensity").and_then(Value::as_f64),
            r.get("gflop_per_s").and_then(Value::as_f64),
            r.get("flop").and_then(Value::as_f64),
        ) else {
            continue;
        };
        points.push(Point {
            label: label.to_string(),
            intensity,
            gflop_per_s: gflop,
            series: Series::Rust,
        });
        if let Some(dram) = at(r, "ncu.dram_bytes")
            .and_then(Value::as_f64)
            .filter(|&b| b > 0.0)
        {
            points.push(Point {
                label: label.to_string(),
                intensity: flop / dram,
                gflop_per_s: gflop,
                series: Series::MeasuredDram,
            });
        }
    }
    // The GEMM lesson's kernels the run placed (`gemm` rows).
    // (`gemm` in the run of 903d0a9, `gemm-fp32` and `gemm-bf16` since.)
    let placed = |v: &str| v == "gemm" || v.starts_with("gemm-");
    for r in rows
        .iter()
        .filter(|r| r.get("variant").and_then(Value::as_str).is_some_and(placed))
    {
        if let (Some(symbol), Some(intensity), Some(gflop)) = (
            r.get("symbol").and_then(Value::as_str),
            r.get("intensity").and_then(Value::as_f64),
            r.get("value").and_then(Value::as_f64),
        ) {
            points.push(Point {
                label: symbol.to_string(),
                intensity,
                gflop_per_s: gflop,
                series: Series::Gemm,
            });
        }
    }
    if points.is_empty() {
        return Err("no kernel row (metric `time` with an intensity)".into());
    }
    let s = |k: &str| {
        ctx.get(k)
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string()
    };
    Ok(Chart {
        title: format!("Roofline, {} ({})", s("gpu"), s("date")),
        bandwidth_gb_per_s: bandwidth,
        fma_gflop_per_s: fma,
        tensor,
        points,
    })
}

fn bars(root: &Path, a: &Args, fig: &Path, figures: &Figures) -> Result<String, String> {
    let path = a.path(0)?;
    let (rows, ctx) = run_rows(root, path)?;
    let value = a.get("value").ok_or("value=KEY is missing")?;
    let label = a.get("label").ok_or("label=KEY is missing")?;
    let unit = a
        .get("unit")
        .map(str::to_string)
        .unwrap_or_else(|| unit_of(value));
    let mut bars = Vec::new();
    for r in filtered(&rows, a)? {
        let Some(v) = at(r, value).and_then(Value::as_f64) else {
            continue;
        };
        bars.push(host::plot::Bar {
            label: cell(at(r, label)),
            value: v,
        });
    }
    if bars.is_empty() {
        return Err(format!(
            "{path}: no row has a number at {value} (after where=)"
        ));
    }
    let s = |k: &str| {
        ctx.get(k)
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string()
    };
    let title = a
        .get("title")
        .map(str::to_string)
        .unwrap_or_else(|| format!("{unit}, {} ({})", s("gpu"), s("date")));
    let svg = host::plot::bars_svg_text(&host::plot::Bars {
        title: title.clone(),
        unit: unit.clone(),
        bars,
    })?;
    figures
        .lock()
        .expect("no directive panicked")
        .push((fig.to_path_buf(), svg));
    Ok(figure(
        fig,
        &title,
        format!("{title}. {}", run_caption(path, &ctx)),
    ))
}

/// The unit a recorded key is in, from its name.
fn unit_of(key: &str) -> String {
    let last = key.rsplit('.').next().unwrap_or(key);
    match last {
        k if k.contains("gb_per_s") => "GB/s",
        k if k.contains("gflop_per_s") => "GFLOP/s",
        k if k.ends_with("us") || k.starts_with("us_") => "us",
        k if k.ends_with("ms") => "ms",
        k if k.ends_with("pct") => "%",
        _ => last,
    }
    .to_string()
}
