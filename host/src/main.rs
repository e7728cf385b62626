//! `lab`: runs one lesson on the GPU and prints its report.
//!
//! `cargo xtask run roofline` builds and runs this binary; on a GPU machine
//! without Rust, run the bundled copy directly: `./lab roofline`. Every
//! lesson runs through `host::runner::drive`; this file parses the command
//! line, dispatches and turns errors into exit statuses.

use std::process::ExitCode;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{CommandFactory, Parser};
use host::cli::Args;
use host::error::exit;

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) => return usage_error(e),
    };
    let lesson = host::lessons::find(&args.lesson).expect("clap accepts only known lessons");
    let outcome = if args.plant_write_past_end {
        host::testing::plant_write_past_end(args.device).map(|()| {
            println!(
                "write_past_end ran and wrote one float past its output; no guard saw it ({} is set)",
                host::guard::NO_GUARDS_ENV
            );
            ExitCode::SUCCESS
        })
    } else {
        (lesson.drive)(&args)
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// One line for an argument error, listing what is valid; help and version
/// print as clap renders them.
fn usage_error(e: clap::Error) -> ExitCode {
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    let context = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => s.clone(),
        _ => String::new(),
    };
    let lessons: Vec<&str> = host::lessons::ALL.iter().map(|l| l.name).collect();
    let flags: Vec<String> = Args::command()
        .get_arguments()
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect();
    let message = match e.kind() {
        ErrorKind::InvalidValue if context(ContextKind::InvalidArg).contains("LESSON") => format!(
            "unknown lesson `{}`; the lessons are: {}",
            context(ContextKind::InvalidValue),
            lessons.join(", ")
        ),
        ErrorKind::UnknownArgument => format!(
            "unknown flag `{}`; the flags are: {} (and --help)",
            context(ContextKind::InvalidArg),
            flags.join(", ")
        ),
        ErrorKind::MissingRequiredArgument => format!(
            "which lesson? `lab <LESSON>`; the lessons are: {}",
            lessons.join(", ")
        ),
        _ => {
            let text = e.render().to_string();
            let first = text
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ");
            format!("{first} (see `lab --help`)")
        }
    };
    eprintln!("error: {message}");
    ExitCode::from(exit::USAGE)
}
