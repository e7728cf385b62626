//! `cargo xtask new-lesson NAME`: an eleventh lesson, end to end, on the one
//! lesson layer. It writes a working lesson around a saxpy from the
//! templates in `xtask/templates/new-lesson/` (each a file with `__name__`
//! where the lesson's name goes and `__Name__` where its name in
//! UpperCamelCase goes, filled by plain string replacement) and registers it
//! where `lab`, `cargo xtask`, the tests and the book look for lessons, each
//! by one small text edit at an anchor it names:
//!
//! | file | what it gets |
//! | --- | --- |
//! | `kernels-gpu/src/NAME.rs` | the Rust kernel, with its constants (written) |
//! | `host/src/NAME/NAME.cu` | its CUDA C twin (written) |
//! | `host/src/NAME/mod.rs` | sizes, fills, CPU reference, check, timing, report, twins (written) |
//! | `tests/cpu_NAME.rs`, `tests/gpu_NAME.rs` | its CPU and GPU tests (written) |
//! | `book/src/NAME.md` | a chapter stub on the book's lesson template (written) |
//! | `kernels-gpu/src/lib.rs`, `host/src/lib.rs` | `pub mod NAME;` among the other `pub mod` lines |
//! | `host/src/lessons.rs` | its entry at the end of `ALL`, and the array's length |
//! | `xtask/src/lib.rs` | its name at the end of `LESSONS`, its kernel at the end of `BOOK_ASM` |
//! | `tests/Cargo.toml` | `[[test]]` entries for the two tests |
//! | `book/src/SUMMARY.md` | its chapter, last under `# The lessons` |
//!
//! Everything is computed before anything is written: a name that is not a
//! lower-case Rust identifier, or that is taken (a lesson, a module, a file,
//! a kernel symbol, a Rust or CUDA C keyword), or an anchor that is missing,
//! stops the command with one line and changes nothing.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

/// Where a template's `__name__` goes: the lesson's name.
const NAME: &str = "__name__";
/// Where a template's `__Name__` goes: the name in UpperCamelCase.
const CAMEL: &str = "__Name__";

/// Each file the command writes: its path (with `__name__`), what it is
/// for (printed), and its template.
const TEMPLATES: &[(&str, &str, &str)] = &[
    (
        "kernels-gpu/src/__name__.rs",
        "the Rust kernel and its constants: write yours here",
        include_str!("../templates/new-lesson/kernel.rs"),
    ),
    (
        "host/src/__name__/__name__.cu",
        "its CUDA C twin, for --compare",
        include_str!("../templates/new-lesson/twin.cu"),
    ),
    (
        "host/src/__name__/mod.rs",
        "the host side: sizes, fills, CPU reference, check, timing, report",
        include_str!("../templates/new-lesson/host.rs"),
    ),
    (
        "tests/cpu___name__.rs",
        "CPU tests: the reference, and the check failing a wrong index",
        include_str!("../templates/new-lesson/cpu_test.rs"),
    ),
    (
        "tests/gpu___name__.rs",
        "GPU tests: each kernel and its twin checked (skipped without a GPU)",
        include_str!("../templates/new-lesson/gpu_test.rs"),
    ),
    (
        "book/src/__name__.md",
        "the chapter stub, with the kernels side by side",
        include_str!("../templates/new-lesson/chapter.md"),
    ),
];

/// Rust's keywords (strict, reserved and the 2018 and 2024 editions'): a
/// module cannot take one of these names.
const RUST_KEYWORDS: &str = "abstract as async await become box break const continue crate do dyn else enum extern \
     false final fn for gen if impl in let loop macro match mod move mut override priv pub \
     ref return self static struct super trait true try type typeof unsafe unsized use \
     virtual where while yield union";

/// Names the CUDA C twin's compiler already gives a meaning (C++ keywords,
/// and the functions and macros every CUDA C program sees): an
/// `extern "C" __global__` kernel cannot take one of these as its name.
const CUDA_C_NAMES: &str = "alignas alignof and asm auto bool case catch char class constexpr decltype default \
     delete double explicit export float friend goto inline int long mutable namespace new \
     noexcept not nullptr operator or private protected public register short signed sizeof \
     switch template this throw typedef typeid typename unsigned using void volatile xor main \
     printf malloc free memcpy memset assert abs min max fma sqrt rsqrt exp exp2 exp10 log \
     log2 log10 pow sin cos tan tanh erf floor ceil round trunc fabs fmin fmax";

/// Crates a lesson's code may name (`core`, `std`, ...) and lab's own
/// words: a module of one of these names would shadow the crate, or the
/// name means something else on a command line (`cargo xtask sanitize
/// all`).
const TAKEN_WORDS: &str = "core std alloc proc_macro test all host kernels_gpu xtask lab_tests lab";

/// Whether `name` is one of the words of `list` (separated by spaces).
fn listed(list: &str, name: &str) -> bool {
    list.split_whitespace().any(|w| w == name)
}

/// The longest name taken: it names files, a type and a kernel symbol.
const MAX_LEN: usize = 40;

/// A file the command changes: its path under the root and its new text.
struct Edit {
    path: &'static str,
    text: String,
    what: String,
}

/// `cargo xtask new-lesson NAME` in the repository at `root`: scaffolds the
/// lesson, registers it and prints what it did and what to run next.
///
/// # Errors
/// A bad or taken name, a missing anchor, or a file that cannot be read or
/// written, each in one line; nothing is changed then (a write that fails
/// midway undoes the writes before it).
pub fn run(root: &Path, name: &str) -> Result<ExitCode> {
    let plan = plan(root, name)
        .with_context(|| format!("cargo xtask new-lesson {name}: nothing was changed"))?;
    write(root, &plan).with_context(|| format!("cargo xtask new-lesson {name}"))?;
    print!("{}", summary(name, &plan));
    Ok(ExitCode::SUCCESS)
}

/// What the command writes: the new files, then the registration edits.
struct Plan {
    created: Vec<(PathBuf, String, &'static str)>,
    edits: Vec<Edit>,
}

/// Everything the command would write, computed without writing.
fn plan(root: &Path, name: &str) -> Result<Plan> {
    check_name(name)?;
    let camel = camel_case(name);
    let read = |path: &str| -> Result<String> {
        std::fs::read_to_string(root.join(path)).with_context(|| {
            format!(
                "cannot read {path}: is {} the lab's repository?",
                root.display()
            )
        })
    };
    let lessons = read("xtask/src/lib.rs")?;
    if string_list(&lessons, LESSONS_ANCHOR, "xtask/src/lib.rs")?.contains(&name.to_string()) {
        bail!(
            "`{name}` is already a lesson (it is in xtask/src/lib.rs's LESSONS); choose another name"
        );
    }
    check_free(root, name)?;

    let created = TEMPLATES
        .iter()
        .map(|&(path, what, template)| {
            let text = template.replace(NAME, name).replace(CAMEL, &camel);
            (root.join(path.replace(NAME, name)), text, what)
        })
        .collect();
    let tests = read("tests/Cargo.toml")?;
    let edits = vec![
        Edit {
            path: "kernels-gpu/src/lib.rs",
            text: add_module(
                &read("kernels-gpu/src/lib.rs")?,
                name,
                "kernels-gpu/src/lib.rs",
            )?,
            what: format!("pub mod {name};"),
        },
        Edit {
            path: "host/src/lib.rs",
            text: add_module(&read("host/src/lib.rs")?, name, "host/src/lib.rs")?,
            what: format!("pub mod {name};"),
        },
        Edit {
            path: "host/src/lessons.rs",
            text: add_entry(&read("host/src/lessons.rs")?, name, &camel)?,
            what: "its entry in ALL, and the array's length".to_string(),
        },
        Edit {
            path: "xtask/src/lib.rs",
            text: add_book_asm(&add_lesson_name(&lessons, name)?, name)?,
            what: "its name in LESSONS, its kernel in BOOK_ASM".to_string(),
        },
        Edit {
            path: "tests/Cargo.toml",
            text: add_tests(&tests, name)?,
            what: format!("[[test]] cpu_{name} and gpu_{name}"),
        },
        Edit {
            path: "book/src/SUMMARY.md",
            text: add_chapter(&read("book/src/SUMMARY.md")?, name)?,
            what: "its chapter, under \"# The lessons\"".to_string(),
        },
    ];
    Ok(Plan { created, edits })
}

/// Fails unless `name` is a lower-case Rust identifier that is neither a
/// keyword of Rust or CUDA C nor one of [`TAKEN_WORDS`].
fn check_name(name: &str) -> Result<()> {
    let shape = "a lesson's name is a lower-case Rust identifier: a letter a-z, then letters a-z, \
                 digits and single underscores, not ending in one (for example saxpy or my_kernel)";
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    let rest_ok = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !first_ok || !rest_ok || name.contains("__") || name.ends_with('_') {
        bail!("`{name}` is not a lesson name: {shape}");
    }
    if name.len() > MAX_LEN {
        bail!(
            "`{name}` is {} characters long; a lesson's name has at most {MAX_LEN}",
            name.len()
        );
    }
    if listed(RUST_KEYWORDS, name) {
        bail!(
            "`{name}` is a Rust keyword, so no module can be named after it; choose another name"
        );
    }
    if listed(CUDA_C_NAMES, name) {
        bail!(
            "`{name}` already means something to the CUDA C twin's compiler (a C++ keyword or a function every \
             CUDA C program sees), and the kernel is named after the lesson; choose another name"
        );
    }
    if listed(TAKEN_WORDS, name) {
        bail!(
            "`{name}` is taken (a crate the lessons' code names, or a word lab and cargo xtask use); choose \
             another name"
        );
    }
    Ok(())
}

/// Fails where the lesson's modules, files or kernel symbol would meet
/// something that exists: a module of that name in the kernels or the host
/// crate, a file the command would write, a test target, a chapter, or a
/// kernel function of that name (the kernel is exported by the lesson's
/// name, and exported names must be unique in the PTX).
fn check_free(root: &Path, name: &str) -> Result<()> {
    let taken = [
        format!("kernels-gpu/src/{name}.rs"),
        format!("kernels-gpu/src/{name}"),
        format!("host/src/{name}.rs"),
        format!("host/src/{name}"),
        format!("tests/cpu_{name}.rs"),
        format!("tests/gpu_{name}.rs"),
        format!("book/src/{name}.md"),
    ];
    if let Some(path) = taken.iter().find(|p| root.join(p).exists()) {
        bail!("`{name}` is taken: {path} exists; choose another name");
    }
    let kernels = root.join("kernels-gpu/src");
    for path in rust_files(&kernels)? {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if defines(&text, name) {
            bail!(
                "`{name}` is taken: {} defines a function or kernel `{name}`, and the lesson's kernel is \
                 exported under its name; choose another name",
                path.strip_prefix(root).unwrap_or(&path).display()
            );
        }
    }
    Ok(())
}

/// Whether `text` (Rust source) defines `name` as a function (`fn name(`,
/// `fn name<`) or lists it in a kernel family (`name = 4,`, how a macro
/// there names the kernels it exports), as a whole word.
fn defines(text: &str, name: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        let before = &text[..at];
        let after = &text[at + name.len()..];
        if before.ends_with(word) || after.starts_with(word) {
            return false;
        }
        (before.ends_with("fn ") && (after.starts_with('(') || after.starts_with('<')))
            || after.starts_with(" = ")
    })
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries =
            std::fs::read_dir(&dir).with_context(|| format!("cannot read {}", dir.display()))?;
        for entry in entries {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// `saxpy_demo` as `SaxpyDemo`.
fn camel_case(name: &str) -> String {
    name.split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |c| {
                c.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

/// `text` (a crate root, `file`) with `pub mod NAME;` among its plain
/// `pub mod x;` lines (those under no attribute), in alphabetical order.
fn add_module(text: &str, name: &str, file: &str) -> Result<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let module = |line: &str| {
        line.trim_end()
            .strip_prefix("pub mod ")
            .and_then(|rest| rest.strip_suffix(';'))
            .filter(|m| m.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            .map(str::to_string)
    };
    let plain: Vec<(usize, String)> = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| *i == 0 || !lines[i - 1].trim_start().starts_with("#["))
        .filter_map(|(i, l)| module(l).map(|m| (i, m)))
        .collect();
    if plain.iter().any(|(_, m)| m == name) {
        bail!("`{name}` is taken: {file} already has `pub mod {name};`; choose another name");
    }
    let Some(last) = plain.last() else {
        bail!(
            "{file} has no `pub mod <lesson>;` line (outside an attribute) to add `pub mod {name};` beside; add \
             it by hand, or restore the file"
        );
    };
    let at = plain
        .iter()
        .find(|(_, m)| m.as_str() > name)
        .map_or(last.0 + 1, |(i, _)| *i);
    let mut out: String = lines[..at].concat();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!("pub mod {name};\n"));
    out.push_str(&lines[at..].concat());
    Ok(out)
}

/// The line that opens `ALL` in host/src/lessons.rs, up to its length.
const ALL_ANCHOR: &str = "pub const ALL: [Entry; ";

/// `text` (host/src/lessons.rs) with `entry::<crate::NAME::CamelLesson>(),`
/// last in `ALL`, and the array's length one more.
fn add_entry(text: &str, name: &str, camel: &str) -> Result<String> {
    let file = "host/src/lessons.rs";
    let start = text.find(ALL_ANCHOR).with_context(|| {
        format!("{file} has no line starting `{ALL_ANCHOR}N] = [` (the list of lessons) to add the lesson to")
    })?;
    let after = start + ALL_ANCHOR.len();
    let (len, rest) = text[after..].split_once("] = [\n").with_context(|| {
        format!("{file}: `{ALL_ANCHOR}` is not followed by `N] = [` and a line break")
    })?;
    let old: usize = len
        .parse()
        .with_context(|| format!("{file}: ALL's length `{len}` is not a number"))?;
    let close = rest.find("\n];").with_context(|| {
        format!("{file}: ALL's `[` has no `];` closing it on a line of its own")
    })?;
    let body = &rest[..close + 1];
    let entries = body.matches("entry::<").count();
    if entries != old {
        bail!(
            "{file}: ALL says it holds {old} lessons but lists {entries} `entry::<...>()` lines; fix it first"
        );
    }
    Ok(format!(
        "{}{ALL_ANCHOR}{}] = [\n{body}    entry::<crate::{name}::{camel}Lesson>(),\n{}",
        &text[..start],
        old + 1,
        &rest[close + 1..]
    ))
}

/// The line that opens `LESSONS` in xtask/src/lib.rs.
const LESSONS_ANCHOR: &str = "pub const LESSONS: &[&str] = &[\n";

/// The quoted names of the list that opens with `anchor` in `text`, and
/// where its closing `];` line starts.
fn string_list_at(text: &str, anchor: &str, file: &str) -> Result<(Vec<String>, usize)> {
    let start = text.find(anchor).with_context(|| {
        format!(
            "{file} has no `{}` (the list of lessons) to add the lesson to",
            anchor.trim_end()
        )
    })? + anchor.len();
    let close = text[start..]
        .find("];")
        .with_context(|| format!("{file}: `{}` has no `];` closing it", anchor.trim_end()))?;
    let names = text[start..start + close]
        .split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    Ok((names, start + close))
}

/// The quoted names of the list that opens with `anchor` in `text`.
fn string_list(text: &str, anchor: &str, file: &str) -> Result<Vec<String>> {
    Ok(string_list_at(text, anchor, file)?.0)
}

/// `text` (xtask/src/lib.rs) with `"NAME",` last in `LESSONS`.
fn add_lesson_name(text: &str, name: &str) -> Result<String> {
    let (_, close) = string_list_at(text, LESSONS_ANCHOR, "xtask/src/lib.rs")?;
    let line_start = text[..close].rfind('\n').map_or(0, |i| i + 1);
    if !text[line_start..close].trim().is_empty() {
        bail!("xtask/src/lib.rs: LESSONS' `];` is not on a line of its own");
    }
    Ok(format!(
        "{}    \"{name}\",\n{}",
        &text[..line_start],
        &text[line_start..]
    ))
}

/// The line that opens `BOOK_ASM` in xtask/src/lib.rs: the kernel of each
/// lesson whose PTX and SASS `cargo xtask record` saves.
const BOOK_ASM_ANCHOR: &str = "pub const BOOK_ASM: &[(&str, &str)] = &[\n";

/// `text` (xtask/src/lib.rs) with `("NAME", "NAME"),` last in `BOOK_ASM`:
/// the lesson's kernel, exported under the lesson's name.
fn add_book_asm(text: &str, name: &str) -> Result<String> {
    let file = "xtask/src/lib.rs";
    let start = text.find(BOOK_ASM_ANCHOR).with_context(|| {
        format!(
            "{file} has no `{}` (each lesson's kernel whose PTX and SASS are recorded) to add the lesson's kernel to",
            BOOK_ASM_ANCHOR.trim_end()
        )
    })? + BOOK_ASM_ANCHOR.len();
    let close = text[start..].find("\n];").with_context(|| {
        format!("{file}: BOOK_ASM's `[` has no `];` closing it on a line of its own")
    })? + start
        + 1;
    Ok(format!(
        "{}    (\"{name}\", \"{name}\"),\n{}",
        &text[..close],
        &text[close..]
    ))
}

/// `text` (tests/Cargo.toml) with a `[[test]]` for `cpu_NAME` and one for
/// `gpu_NAME` (which runs without libtest's harness, as every GPU test does)
/// at its end.
fn add_tests(text: &str, name: &str) -> Result<String> {
    let file = "tests/Cargo.toml";
    if !text.contains("name = \"lab-tests\"") || !text.contains("[[test]]") {
        bail!(
            "{file} is not the lab-tests manifest with `[[test]]` entries; add the tests by hand"
        );
    }
    for test in [format!("cpu_{name}"), format!("gpu_{name}")] {
        if text.contains(&format!("name = \"{test}\"")) {
            bail!("`{name}` is taken: {file} already has a test named {test}; choose another name");
        }
    }
    let mut out = text.trim_end().to_string();
    out.push_str(&format!(
        "\n\n[[test]]\nname = \"cpu_{name}\"\npath = \"cpu_{name}.rs\"\n\n[[test]]\nname = \"gpu_{name}\"\npath = \
         \"gpu_{name}.rs\"\nharness = false\n"
    ));
    Ok(out)
}

/// The heading the lessons' chapters sit under in book/src/SUMMARY.md.
const SUMMARY_ANCHOR: &str = "# The lessons\n";

/// `text` (book/src/SUMMARY.md) with the lesson's chapter after the last
/// chapter under `# The lessons`.
fn add_chapter(text: &str, name: &str) -> Result<String> {
    let file = "book/src/SUMMARY.md";
    let start = text.find(SUMMARY_ANCHOR).with_context(|| {
        format!("{file} has no `# The lessons` heading to add the chapter under")
    })? + SUMMARY_ANCHOR.len();
    let end = text[start..]
        .find("\n# ")
        .map_or(text.len(), |i| start + i + 1);
    let section = &text[start..end];
    if section.contains(&format!("({name}.md)")) {
        bail!("`{name}` is taken: {file} already lists {name}.md; choose another name");
    }
    let last_item = section
        .split_inclusive('\n')
        .scan(start, |at, line| {
            let here = *at;
            *at += line.len();
            Some((here, line))
        })
        .filter(|(_, line)| line.starts_with("- ["))
        .last()
        .with_context(|| {
            format!(
                "{file}: `# The lessons` lists no chapter (`- [Title](file.md)`) to add one after"
            )
        })?;
    let at = last_item.0 + last_item.1.len();
    let mut out = text[..at].to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!("- [Your kernel: {name}]({name}.md)\n"));
    out.push_str(&text[at..]);
    Ok(out)
}

/// Writes the plan: the new files (their folders made), then the edits.
/// On a failed write, removes what it created and restores what it edited.
fn write(root: &Path, plan: &Plan) -> Result<()> {
    let mut created: Vec<PathBuf> = Vec::new();
    let mut made_dirs: Vec<PathBuf> = Vec::new();
    let mut edited: Vec<(PathBuf, String)> = Vec::new();
    let result = (|| -> Result<()> {
        for (path, text, _) in &plan.created {
            if let Some(dir) = path.parent().filter(|d| !d.exists()) {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
                made_dirs.push(dir.to_path_buf());
            }
            std::fs::write(path, text)
                .with_context(|| format!("cannot write {}", path.display()))?;
            created.push(path.clone());
        }
        for edit in &plan.edits {
            let path = root.join(edit.path);
            let old = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            std::fs::write(&path, &edit.text)
                .with_context(|| format!("cannot write {}", path.display()))?;
            edited.push((path, old));
        }
        Ok(())
    })();
    if result.is_err() {
        for (path, old) in &edited {
            let _ = std::fs::write(path, old);
        }
        for path in &created {
            let _ = std::fs::remove_file(path);
        }
        for dir in made_dirs.iter().rev() {
            let _ = std::fs::remove_dir(dir);
        }
    }
    result
}

/// What the command did, and what to run next.
fn summary(name: &str, plan: &Plan) -> String {
    let mut s = format!("Created the {name} lesson:\n");
    let shown: Vec<(String, &str)> = TEMPLATES
        .iter()
        .map(|&(path, what, _)| (path.replace(NAME, name), what))
        .collect();
    let width = shown.iter().map(|(p, _)| p.len()).max().unwrap_or(0);
    for (path, what) in &shown {
        s.push_str(&format!("  {path:width$}  {what}\n"));
    }
    s.push_str("Registered it in:\n");
    let width = plan.edits.iter().map(|e| e.path.len()).max().unwrap_or(0);
    for edit in &plan.edits {
        s.push_str(&format!("  {:width$}  {}\n", edit.path, edit.what));
    }
    s.push_str("Next:\n");
    let next = [
        (
            format!("cargo xtask run {name}"),
            "check it and time it on the GPU",
        ),
        (
            format!("cargo xtask compare {name}"),
            "beside its CUDA C twin",
        ),
        (
            "cargo xtask test".to_string(),
            "every test, the lesson's new ones included",
        ),
    ];
    let width = next.iter().map(|(c, _)| c.len()).max().unwrap_or(0);
    for (command, what) in &next {
        s.push_str(&format!("  {command:width$}  {what}\n"));
    }
    s.push_str("book/src/your-own-kernel.md walks through each file.\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_must_be_lower_case_identifiers_and_free() {
        for good in ["saxpy", "saxpy_demo", "k2", "my_first_kernel"] {
            check_name(good).unwrap();
        }
        for bad in [
            "Saxpy",
            "2d",
            "_x",
            "x_",
            "a__b",
            "my-kernel",
            "",
            "saxpy!",
            "ÿ",
        ] {
            let e = check_name(bad).unwrap_err().to_string();
            assert!(e.contains("not a lesson name"), "{bad}: {e}");
        }
        assert!(
            check_name("type")
                .unwrap_err()
                .to_string()
                .contains("Rust keyword")
        );
        assert!(
            check_name("float")
                .unwrap_err()
                .to_string()
                .contains("CUDA C")
        );
        assert!(check_name("std").unwrap_err().to_string().contains("taken"));
        assert!(
            check_name(&"a".repeat(41))
                .unwrap_err()
                .to_string()
                .contains("at most 40")
        );
        assert_eq!(camel_case("saxpy_demo2"), "SaxpyDemo2");
    }

    #[test]
    fn a_kernel_or_family_entry_of_the_name_is_found_as_a_whole_word() {
        let text = "fn relu(z: f32)\nunsafe extern \"ptx-kernel\" fn vector_add(a: u64)\n$m! { dot_specialized_4 = 4 }\n";
        for taken in ["relu", "vector_add", "dot_specialized_4"] {
            assert!(defines(text, taken), "{taken}");
        }
        for free in ["vector", "add", "specialized_4", "dot_specialized", "z"] {
            assert!(!defines(text, free), "{free}");
        }
    }

    #[test]
    fn modules_go_in_alphabetical_order_outside_attributes() {
        let text = "//! doc\n\n#[cfg(x)]\npub mod device;\n\npub mod alpha;\npub mod gamma;\n\nfn f() {}\n";
        assert_eq!(
            add_module(text, "beta", "lib.rs").unwrap(),
            "//! doc\n\n#[cfg(x)]\npub mod device;\n\npub mod alpha;\npub mod beta;\npub mod gamma;\n\nfn f() {}\n"
        );
        assert!(
            add_module(text, "zeta", "lib.rs")
                .unwrap()
                .contains("pub mod gamma;\npub mod zeta;\n\nfn")
        );
        assert!(
            add_module(text, "alpha", "lib.rs")
                .unwrap_err()
                .to_string()
                .contains("already has")
        );
        let none = add_module("#[cfg(x)]\npub mod device;\n", "beta", "lib.rs").unwrap_err();
        assert!(
            none.to_string().contains("no `pub mod <lesson>;` line"),
            "{none}"
        );
    }

    #[test]
    fn the_entry_goes_last_and_the_length_grows() {
        let text =
            "x\npub const ALL: [Entry; 2] = [\n    entry::<a::A>(),\n    entry::<b::B>(),\n];\ny\n";
        assert_eq!(
            add_entry(text, "c_d", "CD").unwrap(),
            "x\npub const ALL: [Entry; 3] = [\n    entry::<a::A>(),\n    entry::<b::B>(),\n    \
             entry::<crate::c_d::CDLesson>(),\n];\ny\n"
        );
        let wrong = text.replace("; 2]", "; 3]");
        assert!(
            add_entry(&wrong, "c", "C")
                .unwrap_err()
                .to_string()
                .contains("holds 3 lessons but lists 2")
        );
        let missing = add_entry("pub const EVERY: [Entry; 2] = [\n];\n", "c", "C").unwrap_err();
        assert!(
            missing.to_string().contains("has no line starting"),
            "{missing}"
        );
    }

    #[test]
    fn the_name_goes_last_in_lessons() {
        let text = "//! x\npub const LESSONS: &[&str] = &[\n    \"a\",\n    \"b\",\n];\n\npub const P: &[&str] = &[\"a\"];\n";
        let out = add_lesson_name(text, "c").unwrap();
        assert!(
            out.contains("    \"b\",\n    \"c\",\n];\n\npub const P"),
            "{out}"
        );
        assert_eq!(
            string_list(&out, LESSONS_ANCHOR, "f").unwrap(),
            ["a", "b", "c"]
        );
        assert!(add_lesson_name("pub const L: &[&str] = &[];\n", "c").is_err());
        let asm = "pub const BOOK_ASM: &[(&str, &str)] = &[\n    (\"a\", \"k\"),\n];\n";
        assert_eq!(
            add_book_asm(asm, "c").unwrap(),
            "pub const BOOK_ASM: &[(&str, &str)] = &[\n    (\"a\", \"k\"),\n    (\"c\", \"c\"),\n];\n"
        );
        assert!(
            add_book_asm(text, "c")
                .unwrap_err()
                .to_string()
                .contains("has no `pub const BOOK_ASM")
        );
    }

    #[test]
    fn tests_and_chapter_are_added_at_their_anchors() {
        let manifest =
            "[package]\nname = \"lab-tests\"\n\n[[test]]\nname = \"cpu_a\"\npath = \"cpu_a.rs\"\n";
        let out = add_tests(manifest, "b").unwrap();
        assert!(
            out.ends_with("[[test]]\nname = \"gpu_b\"\npath = \"gpu_b.rs\"\nharness = false\n"),
            "{out}"
        );
        assert!(
            add_tests(manifest, "a")
                .unwrap_err()
                .to_string()
                .contains("already has a test named cpu_a")
        );
        assert!(add_tests("[package]\nname = \"other\"\n", "b").is_err());

        let summary = "# Summary\n\n# The lessons\n\n- [A](a.md)\n- [B](b.md)\n\n# Appendices\n\n- [R](r.md)\n";
        assert_eq!(
            add_chapter(summary, "c").unwrap(),
            "# Summary\n\n# The lessons\n\n- [A](a.md)\n- [B](b.md)\n- [Your kernel: c](c.md)\n\n# Appendices\n\n- [R](r.md)\n"
        );
        assert!(
            add_chapter(summary, "b")
                .unwrap_err()
                .to_string()
                .contains("already lists b.md")
        );
        assert!(
            add_chapter("# Summary\n\n- [A](a.md)\n", "c")
                .unwrap_err()
                .to_string()
                .contains("no `# The lessons`")
        );
        assert!(
            add_chapter("# The lessons\n\n# Next\n", "c")
                .unwrap_err()
                .to_string()
                .contains("lists no chapter")
        );
    }

    #[test]
    fn templates_carry_the_placeholders_and_the_anchors() {
        for (path, _, template) in TEMPLATES {
            assert!(path.contains(NAME), "{path}");
            assert!(template.contains(NAME), "{path}");
        }
        for (path, _, template) in &TEMPLATES[..2] {
            assert!(
                template.contains("ANCHOR: __name__") && template.contains("ANCHOR_END: __name__"),
                "{path}"
            );
        }
    }
}
