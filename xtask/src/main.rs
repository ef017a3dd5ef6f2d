//! `cargo xtask <verb>`: the project's automation, in Rust.
//!
//! Verbs: `probe` (build the four bins, handshake with each over stdio, check its tool count),
//! `dist` (the release archive, `--check` to unpack and probe it), `bench` (whole-process
//! benchmarks over stdio).

mod bench;
mod dist;
mod probe;

use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <verb>

verbs:
    probe    build the four server bins, spawn each over stdio on a temporary database,
             run initialize + tools/list, and check each server's name and tool count
    dist     build the release bins (static on Linux) and pack a reproducible
             dist/clawboo-mcp-<version>-<target>.tar.gz (+ .sha256) with an install README,
             LICENSE and SHA256SUMS; --check verifies both checksums, that the bins are static
             and start (in an empty chroot as root), and that packing again gives the same bytes
    bench    whole-process benchmarks over stdio with the release bins (cold start, round
             trips, 16 sessions over HTTP vs 16 stdio processes, an 8-process claim race,
             memory search at 10k/100k facts, peak RSS, scrubber MB/s, the vector index);
             --quick for a smoke run, --vs 'COMMAND' to compare another stdio server
    bench-vectors
             the vector index's rows of bench alone (--quick for a smoke run)
";

/// A mistake in how xtask was called (exit 2), as opposed to a verb that failed (exit 1).
#[derive(Debug)]
pub struct Usage(String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// A usage error carrying `message`.
pub fn usage(message: String) -> anyhow::Error {
    Usage(message).into()
}

/// The bins' style (see `clawboo_core::internal::cli`): `xtask: <message>` on stderr, exit 2 for a
/// usage error (no verb, an unknown verb or argument), 1 for a verb that failed.
fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.first().map(String::as_str) {
        Some("probe") => probe::run(&args[1..]),
        Some("dist") => dist::run(&args[1..]),
        Some("bench") => bench::run(&args[1..]),
        Some("bench-scrub") => bench::scrub::run(&args[1..]),
        Some("bench-vectors") => bench::vectors_only(&args[1..]),
        Some("-h" | "--help" | "help") => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        None => Err(usage(format!("no verb given\n\n{USAGE}"))),
        Some(other) => Err(usage(format!("unknown verb {other:?}\n\n{USAGE}"))),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e:#}");
            if e.is::<Usage>() {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
