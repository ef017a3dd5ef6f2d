//! `cargo xtask <verb>`: the project's automation, in Rust.
//!
//! Verbs: `probe` (build the four bins, handshake with each over stdio, check its tool count),
//! `dist` (the release archive, `--check` to unpack and probe it), `bench` (whole-process
//! benchmarks over stdio).

mod bench;
mod bench_http;
mod dist;
mod probe;

use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <verb>

verbs:
    probe    build the four server bins, spawn each over stdio on a temporary database,
             run initialize + tools/list, and check each server's name and tool count
    dist     build the release bins and pack dist/clawboo-mcp-<version>-<target>.tar.gz
             with README, LICENSE and SHA256SUMS; --check unpacks it and probes the bins
    bench    whole-process benchmarks over stdio with the release bins (cold start, round
             trips, 16 sessions over HTTP vs 16 stdio processes, an 8-process claim race,
             memory search at 10k/100k facts, peak RSS);
             --quick for a smoke run, --vs 'COMMAND' to compare another stdio server
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.first().map(String::as_str) {
        Some("probe") => probe::run(&args[1..]),
        Some("dist") => dist::run(&args[1..]),
        Some("bench") => bench::run(&args[1..]),
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
