//! `cargo xtask <verb>`: the project's automation, in Rust.
//!
//! Verbs: `probe` (build the four bins, handshake with each over stdio, check its tool count).

mod probe;

use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <verb>

verbs:
    probe    build the four server bins, spawn each over stdio on a temporary database,
             run initialize + tools/list, and check each server's name and tool count
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.first().map(String::as_str) {
        Some("probe") => probe::run(&args[1..]),
        Some("-h" | "--help" | "help") | None => {
            print!("{USAGE}");
            return if args.is_empty() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
        Some(other) => Err(anyhow::anyhow!("unknown verb {other:?}\n\n{USAGE}")),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e:#}");
            ExitCode::FAILURE
        }
    }
}
