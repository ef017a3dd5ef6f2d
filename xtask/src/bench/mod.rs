//! `cargo xtask bench`: whole-process benchmarks over the real stdio protocol.
//!
//! Measures, with release bins and medians of repeated runs: cold start (spawn → `initialize` →
//! `tools/list` answered) per server; round trips per second of `get_task` and `memory_search` on
//! one connection; claims per second with 8 processes racing over 1000 tasks (and the proof that
//! each task was won exactly once); `memory_search` latency with 10k and 100k facts; peak RSS per
//! server after a burst of its typical calls; from `realistic`, pipelined `ping` throughput,
//! `memory_save` rate and memory search on a realistic corpus (latency, recall@10 per kind of
//! query, the first query of a fresh process, vector and hybrid, and a million facts); the
//! scrubber's throughput
//! ([`scrub`]); ClawBrain's search and store ([`clawbrain`]); `get_task` over HTTP, one session and
//! 16 sessions (kept-alive connections, and a connection per call) against 16 stdio processes
//! ([`http`]); the same round trips driven by the official Python SDK over stdio and HTTP
//! ([`sdk`]); the CPU of a host with 100 waiting subscribers and the wake-up latency of a waiting
//! call ([`wait`]); a team of 200 agents with their own tokens on one host, calm and under 50
//! abusive connections ([`load`]); the vector index at 100k and 1M facts, the first query of a
//! fresh process, and paraphrase recall ([`vectors`]). Prints a table and writes
//! `target/bench/bench.json`. `cargo xtask bench-vectors [--quick] [--store DIR]` runs the vector
//! rows alone, on stores it keeps for the next run;
//! `cargo xtask bench-tune` is the tuning loop of full-text search, on the tuning corpus only
//! ([`tune`]).
//!
//! `--vs 'COMMAND'` (repeatable) runs a comparison stdio MCP server (e.g. the reference's bin) in the
//! same invocation, alternating runs with ours, on the same database files, for every benchmark
//! whose tools it lists, and prints the ratios. `--quick` shrinks every workload for a smoke run
//! (and leaves out the million facts). `--memory` runs the memory search rows only (the vector
//! index's included), `--http` the HTTP rows only (`get_task` over HTTP and stdio, the Python
//! SDK's, the load). `--no-million` leaves out the million-fact stores, and with them the vector
//! index's rows (its 100k and 1M stores are one workload; `bench-vectors` runs it alone): `--memory
//! --no-million --vs 'COMMAND'` is the 100k comparison of both corpora and nothing else that runs
//! long.
//!
//! This module runs the benchmarks and reports them (the table and `bench.json`); the workloads
//! live beside it: `stdio` (cold start, round trips, the claim race, peak RSS), `facts` (the
//! synthetic memory worst case), `corpus` (the realistic corpus and its queries), `realistic` (the
//! rows over it, or over any corpus of facts and queries-with-kinds), `vectors` (the vector index),
//! `http`, `sdk`, `load`, `clawbrain`, `scrub`, `wait`, `tune`.
//!
//! Must never: assert on a time; a benchmark reports, tests decide.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use clawboo_tests::{Server, TempDir, bin_path, target_dir};
use serde_json::{Value, json};

use crate::probe;

mod clawbrain;
mod console;
mod corpus;
mod facts;
mod http;
mod load;
mod model;
mod notes;
mod realistic;
mod scrub;
mod sdk;
mod stdio;
pub mod tune;
mod vectors;
mod wait;

use self::facts::{search_latency, search_rate, seed_facts};
use self::stdio::{RACERS, RSS_CALLS, cold_start, get_task_rate, peak_rss, race, rss_workload};

/// Workload sizes.
struct Sizes {
    cold_runs: usize,
    round_trip_calls: usize,
    round_trip_runs: usize,
    race_tasks: usize,
    race_runs: usize,
    fact_counts: Vec<usize>,
    searches: usize,
}

impl Sizes {
    fn new(quick: bool) -> Self {
        if quick {
            Self {
                cold_runs: 3,
                round_trip_calls: 100,
                round_trip_runs: 2,
                race_tasks: 100,
                race_runs: 1,
                fact_counts: vec![1_000],
                searches: 20,
            }
        } else {
            Self {
                cold_runs: 15,
                round_trip_calls: 2_000,
                round_trip_runs: 5,
                race_tasks: 1_000,
                race_runs: 3,
                fact_counts: vec![10_000, 100_000],
                searches: 200,
            }
        }
    }
}

/// A server implementation under test: ours (a bin per server) or a comparison command.
#[derive(Clone)]
enum Subject {
    Ours,
    Vs(String),
}

impl Subject {
    fn label(&self) -> String {
        match self {
            Subject::Ours => "clawboo".into(),
            Subject::Vs(cmd) => cmd.clone(),
        }
    }

    /// The program, arguments and environment that start this subject's `bin`.
    fn program(&self, bin: &str) -> (PathBuf, &'static [&'static str], Vec<(&'static str, &str)>) {
        match self {
            Subject::Ours => (bin_path(bin), &[], Vec::new()),
            Subject::Vs(cmd) => (
                PathBuf::from("sh"),
                &["-c", "exec $CLAWBOO_BENCH_VS"],
                vec![("CLAWBOO_BENCH_VS", cmd.as_str())],
            ),
        }
    }

    /// Spawns the server (our `bin`, or the comparison command) on `db`, without initializing.
    fn spawn(&self, bin: &str, db: &Path) -> Server {
        let (program, args, env) = self.program(bin);
        Server::spawn_program(program, args, db, &env)
    }

    /// The command that starts the server on `db`, for a client of its own ([`stdio::LeanClient`]).
    fn command(&self, bin: &str, db: &Path) -> std::process::Command {
        let (program, args, env) = self.program(bin);
        let mut command = clawboo_tests::server_command(program, db);
        command.args(args).envs(env);
        command
    }
}

/// One measured figure.
struct Row {
    name: String,
    unit: &'static str,
    ours: Option<f64>,
    vs: Vec<Option<f64>>,
}

impl Row {
    /// A figure only ours has (no comparison server offers it).
    fn ours_only(
        subjects: &[Subject],
        name: String,
        unit: &'static str,
        ours: Option<f64>,
    ) -> Self {
        Self {
            name,
            unit,
            ours,
            vs: vec![None; subjects.len() - 1],
        }
    }
}

/// Which rows a run measures.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Every row.
    All,
    /// The memory_search rows (`--memory`).
    Memory,
    /// The HTTP rows: `get_task` over HTTP and stdio, the Python SDK's, the load (`--http`).
    Http,
}

/// `cargo xtask bench [--quick] [--memory | --http] [--no-million] [--vs 'COMMAND']...` (the flags
/// read by `main`): `quick` shrinks every workload, `part` picks the rows, `no_million` leaves out
/// the million-fact stores (and the vector index's rows), each of `vs` is a comparison server's
/// command.
pub fn run(quick: bool, part: Part, no_million: bool, vs: Vec<String>) -> anyhow::Result<()> {
    // A smoke run (`--quick`) measures in the build it is: its figures mean nothing.
    if !quick && ran_optimised()? {
        return Ok(());
    }
    let vs: Vec<Subject> = vs.into_iter().map(Subject::Vs).collect();
    // The million-fact stores: never with `--quick` (it shrinks them), nor with `--no-million`.
    let million = !quick && !no_million;
    // The vector index's rows build their 100k and 1M stores together, so they run when the
    // million does (or shrunk, with `--quick`).
    let vector_rows = quick || million;
    probe::build_bins("release")?;
    let sizes = Sizes::new(quick);
    let mut subjects = vec![Subject::Ours];
    subjects.extend(vs);
    let started = Instant::now();
    let mut rows = Vec::new();

    if part == Part::Http {
        http_rows(&subjects, &sizes, quick, &mut rows)?;
        return report(&subjects, &rows, started);
    }
    let memory_only = part == Part::Memory;
    if !memory_only {
        server_rows(&subjects, &sizes, &mut rows)?;
        http_rows(&subjects, &sizes, quick, &mut rows)?;
    }
    for &count in &sizes.fact_counts {
        let dir = TempDir::new("bench-facts");
        seed_facts(&dir.db_path(), count)?;
        rows.push(measure(
            &subjects,
            &format!("memory_search fts, {count} facts"),
            "ms",
            1,
            |s| search_latency(s, &dir.db_path(), "fts", sizes.searches),
        )?);
        if count == sizes.fact_counts[0] {
            rows.push(measure(
                &subjects,
                &format!("memory_search round trips, {count} facts"),
                "calls/s",
                sizes.round_trip_runs,
                |s| search_rate(s, &dir.db_path(), sizes.round_trip_calls),
            )?);
        }
    }
    if memory_only {
        realistic::memory_rows(&subjects, quick, million, &mut rows)?;
    } else {
        realistic::add_rows(&subjects, quick, million, &mut rows)?;
    }
    if vector_rows {
        vectors::add_rows(&subjects, quick, None, &mut rows)?;
    }
    if !memory_only {
        other_rows(&subjects, quick, &mut rows)?;
        // Waiting (`waitMs`) is ours: the host's CPU with waiting subscribers, the wake-up latency.
        for (name, unit, value) in wait::rows(quick)? {
            rows.push(Row::ours_only(&subjects, name, unit, Some(value)));
        }
        // The operator console is ours: page and REST times on large stores, CPU with many consoles.
        for (name, unit, value) in console::rows(quick)? {
            rows.push(Row::ours_only(&subjects, name, unit, Some(value)));
        }
    }

    report(&subjects, &rows, started)
}

/// In a debug build of xtask, runs this command line again in an optimised build of xtask (its
/// output passed through; a failure is this run's) and says it did: a benchmark's own work would
/// otherwise be timed as debug code. That is the client's JSON in every round trip over stdio and
/// HTTP, the scrubber, and the searches `bench-tune` asks in process. Called once the verb has
/// read its flags, so a usage error is told at once; the first such run builds xtask in release
/// (with LTO: minutes). In an optimised build it does nothing and says so.
pub fn ran_optimised() -> anyhow::Result<bool> {
    if !cfg!(debug_assertions) {
        return Ok(false);
    }
    eprintln!("running again in a release build of xtask (a first build takes minutes)");
    // From where this one was started, so a relative `--store DIR` names the same folder.
    let status = clawboo_tests::cargo_command()
        .current_dir(std::env::current_dir().context("the current folder")?)
        .args(["run", "--release", "--quiet", "--package", "xtask", "--"])
        .args(std::env::args_os().skip(1))
        .status()
        .context("run the release xtask")?;
    anyhow::ensure!(status.success(), "the release xtask failed ({status})");
    Ok(true)
}

/// Prints the table and writes `bench.json`.
fn report(subjects: &[Subject], rows: &[Row], started: Instant) -> anyhow::Result<()> {
    print_table(subjects, rows);
    let path = write_json(subjects, rows)?;
    println!(
        "\nwrote {} in {:.0} s",
        path.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `cargo xtask bench-vectors [--quick] [--store DIR]` (the flags read by `main`): the rows of
/// [`vectors`] alone, with their stores kept in `store` (default `target/bench-vectors`).
pub fn vectors_only(quick: bool, store: Option<PathBuf>) -> anyhow::Result<()> {
    if !quick && ran_optimised()? {
        return Ok(());
    }
    probe::build_bins("release")?;
    let subjects = [Subject::Ours];
    let mut rows = Vec::new();
    let store = store.unwrap_or_else(|| target_dir().join("bench-vectors"));
    vectors::add_rows(&subjects, quick, Some(&store), &mut rows)?;
    print_table(&subjects, &rows);
    Ok(())
}

/// Cold starts, `get_task` round trips on one session and the claim race.
fn server_rows(subjects: &[Subject], sizes: &Sizes, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    for bin in probe::bins() {
        let tool = first_tool_of(bin)?;
        rows.push(measure(
            subjects,
            &format!("cold start {bin}"),
            "ms",
            sizes.cold_runs,
            |s| cold_start(s, bin, tool.as_deref()),
        )?);
    }
    rows.push(measure(
        subjects,
        "get_task round trips",
        "calls/s",
        sizes.round_trip_runs,
        |s| get_task_rate(s, sizes.round_trip_calls),
    )?);
    rows.push(measure(
        subjects,
        &format!("claims, {RACERS} processes x {} tasks", sizes.race_tasks),
        "claims/s",
        sizes.race_runs,
        |s| race(s, sizes.race_tasks),
    )?);
    Ok(())
}

/// `get_task` over HTTP (one session; 16 sessions kept-alive and connecting per call) beside 16
/// stdio processes, the Python SDK's round trips over stdio and HTTP, and the host under a team's
/// load, calm and abused.
fn http_rows(
    subjects: &[Subject],
    sizes: &Sizes,
    quick: bool,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    // HTTP is ours (a comparison server is a stdio command).
    let ours_only = |s: &Subject, figure: &dyn Fn() -> anyhow::Result<Option<f64>>| match s {
        Subject::Ours => figure(),
        Subject::Vs(_) => Ok(None),
    };
    rows.push(measure(
        subjects,
        "get_task round trips, one HTTP session (kept-alive)",
        "calls/s",
        sizes.round_trip_runs,
        |s| ours_only(s, &|| http::http_round_trips(sizes.round_trip_calls)),
    )?);
    for (name, unit, value) in sdk::rows((sizes.round_trip_calls / 4).max(100))? {
        rows.push(Row::ours_only(subjects, name, unit, value));
    }
    let per_session = (sizes.round_trip_calls / 10).max(10);
    rows.push(measure(
        subjects,
        &format!("get_task, {} HTTP sessions (kept-alive)", http::SESSIONS),
        "calls/s",
        sizes.round_trip_runs,
        |s| ours_only(s, &|| http::http_rate(per_session)),
    )?);
    rows.push(measure(
        subjects,
        &format!(
            "get_task, {} HTTP sessions (a connection per call)",
            http::SESSIONS
        ),
        "calls/s",
        sizes.round_trip_runs,
        |s| ours_only(s, &|| http::http_rate_connect_per_call(per_session)),
    )?);
    rows.push(measure(
        subjects,
        &format!("get_task, {} stdio processes", http::SESSIONS),
        "calls/s",
        sizes.round_trip_runs,
        |s| http::stdio_rate(|db| s.spawn("clawboo-mcp-tasks", db), per_session),
    )?);
    // The host under a team's load, then under abuse, is ours.
    for (name, unit, value) in load::rows(quick)? {
        rows.push(Row::ours_only(subjects, name, unit, Some(value)));
    }
    Ok(())
}

/// Peak RSS per server, ClawBrain's figures and the scrubber's.
fn other_rows(subjects: &[Subject], quick: bool, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    for bin in probe::bins() {
        rows.push(measure(
            subjects,
            &format!("peak RSS {bin}, {RSS_CALLS} {}", rss_workload(bin).0),
            "KiB",
            1,
            |s| peak_rss(s, bin),
        )?);
    }

    // ClawBrain and the scrubber have no counterpart in a comparison server.
    for (name, unit, ours) in clawbrain::figures(quick)? {
        rows.push(Row::ours_only(subjects, name, unit, ours));
    }
    for (name, unit, value) in scrub::rows(quick) {
        rows.push(Row::ours_only(subjects, name, unit, Some(value)));
    }
    Ok(())
}

/// The first tool our `bin` lists: how a comparison server is matched to one of ours.
fn first_tool_of(bin: &str) -> anyhow::Result<Option<String>> {
    let dir = TempDir::new("bench-tools");
    let mut server = Server::spawn(bin, &dir.db_path(), &[]);
    let tools = server.list_tools();
    server.close();
    Ok(tools
        .first()
        .and_then(|t| t["name"].as_str())
        .map(str::to_owned))
}

/// Runs `one` `runs` times per subject, alternating subjects run by run; the median of each.
/// `one` returns `None` when the subject does not offer what is measured.
fn measure(
    subjects: &[Subject],
    name: &str,
    unit: &'static str,
    runs: usize,
    one: impl Fn(&Subject) -> anyhow::Result<Option<f64>>,
) -> anyhow::Result<Row> {
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); subjects.len()];
    let mut offered = vec![true; subjects.len()];
    for _ in 0..runs {
        for (i, subject) in subjects.iter().enumerate() {
            if !offered[i] {
                continue;
            }
            match one(subject).with_context(|| format!("{name} ({})", subject.label()))? {
                Some(v) => samples[i].push(v),
                None => offered[i] = false,
            }
        }
    }
    let mut medians = samples.into_iter().map(median);
    let ours = medians.next().flatten();
    eprintln!(
        "  {name}: {}",
        ours.map_or("n/a".into(), |v| format!("{v:.1} {unit}"))
    );
    Ok(Row {
        name: name.to_owned(),
        unit,
        ours,
        vs: medians.collect(),
    })
}

fn median(mut values: Vec<f64>) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    })
}

/// Removes the store at `path` with its WAL and shared-memory files, so a kept store that no
/// longer holds what a bench wants is made anew.
fn remove_store(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

/// Whether `server` lists `tool`.
fn offers(server: &mut Server, tool: &str) -> bool {
    server.list_tools().iter().any(|t| t["name"] == tool)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn print_table(subjects: &[Subject], rows: &[Row]) {
    println!();
    let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(0).max(9);
    print!("{:<width$} {:>10} {:>12}", "benchmark", "unit", "clawboo");
    for (i, _) in subjects.iter().enumerate().skip(1) {
        print!(" {:>12} {:>8}", format!("vs#{i}"), "ratio");
    }
    println!();
    for row in rows {
        let digits = match row.unit {
            "share" => 3,
            "% core" => 2,
            _ => 1,
        };
        let show = |v: Option<f64>| v.map_or("n/a".to_owned(), |v| format!("{v:.digits$}"));
        print!(
            "{:<width$} {:>10} {:>12}",
            row.name,
            row.unit,
            show(row.ours)
        );
        for other in &row.vs {
            let r = ratio(row.unit, row.ours, *other);
            print!(
                " {:>12} {:>8}",
                show(*other),
                r.map_or("n/a".into(), |r| format!("{r:.2}x"))
            );
        }
        println!();
    }
    for (i, subject) in subjects.iter().enumerate().skip(1) {
        println!("vs#{i}: {}", subject.label());
    }
    if subjects.len() > 1 {
        println!("ratio = how many times better clawboo is (higher is better for clawboo)");
    }
}

/// How many times better ours is than `other`: for rates (`…/s`) and shares (recall) ours/other,
/// for times and sizes other/ours.
fn ratio(unit: &str, ours: Option<f64>, other: Option<f64>) -> Option<f64> {
    let (ours, other) = (ours?, other?);
    if ours <= 0.0 || other <= 0.0 {
        return None;
    }
    Some(if unit.ends_with("/s") || unit == "share" {
        ours / other
    } else {
        other / ours
    })
}

fn write_json(subjects: &[Subject], rows: &[Row]) -> anyhow::Result<PathBuf> {
    let dir = target_dir().join("bench");
    std::fs::create_dir_all(&dir)?;
    let results: Vec<Value> = rows
        .iter()
        .map(|row| {
            json!({
                "name": row.name,
                "unit": row.unit,
                "clawboo": row.ours,
                "vs": row.vs.iter().zip(subjects.iter().skip(1)).map(|(v, s)| json!({
                    "command": s.label(),
                    "median": v,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let path = dir.join("bench.json");
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&json!({ "results": results }))?,
    )?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::ratio;

    #[test]
    fn a_ratio_above_one_means_ours_is_better_whichever_way_the_unit_points() {
        // Rates and recall: higher is better.
        assert_eq!(ratio("calls/s", Some(200.0), Some(50.0)), Some(4.0));
        assert_eq!(ratio("share", Some(1.0), Some(0.5)), Some(2.0));
        // Times and sizes: lower is better.
        assert_eq!(ratio("ms", Some(2.0), Some(8.0)), Some(4.0));
        assert_eq!(ratio("KiB", Some(10.0), Some(5.0)), Some(0.5));
        assert_eq!(ratio("share", Some(0.0), Some(0.5)), None);
        assert_eq!(ratio("ms", None, Some(8.0)), None);
    }
}
