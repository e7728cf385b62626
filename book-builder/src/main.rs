//! `lab-book [--root DIR] [--out DIR]`: renders and checks the lesson book
//! (what `cargo xtask book` runs). Exit 0 with the start page's path; 1 when
//! a directive fails or the rendered book has a broken link, anchor or
//! figure (each named); 2 for bad arguments.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

#[derive(Parser)]
#[command(about = "Render the lab's lesson book (book/) into HTML and check it")]
struct Cli {
    /// The repository's root (holding book/ and docs/results/).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Where the HTML goes (emptied first).
    #[arg(long, default_value = "target/book")]
    out: PathBuf,
    /// The recorded run the chapters' tables and charts read (a folder
    /// written by `cargo xtask record`), relative to the root.
    #[arg(long, default_value = lab_book::BOOK_RUN)]
    run: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let opts = lab_book::Options {
        root: cli.root,
        out: cli.out,
        run: Some(cli.run),
    };
    match lab_book::build(&opts) {
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
        Ok(built) if !built.problems.is_empty() => {
            eprintln!(
                "the book built, but {} problem(s) were found:",
                built.problems.len()
            );
            for p in &built.problems {
                eprintln!("  {p}");
            }
            ExitCode::FAILURE
        }
        Ok(built) => {
            println!(
                "The book: {} chapters, {} generated figures, links checked. Open {}",
                built.chapters.len(),
                built.figures.len(),
                built.out.join("index.html").display()
            );
            ExitCode::SUCCESS
        }
    }
}
