//! `cargo xtask bench`: whole-process benchmarks over the real stdio protocol.
//!
//! Measures, with release bins and medians of repeated runs: cold start (spawn → `initialize` →
//! `tools/list` answered) per server; round trips per second of `get_task` and `memory_search` on
//! one connection; claims per second with 8 processes racing over 1000 tasks (and the proof that
//! each task was won exactly once); `memory_search` latency with 10k and 100k facts; peak RSS per
//! server after a burst of its typical calls; the scrubber's throughput ([`crate::bench_scrub`]).
//! Prints a table and writes `target/bench/bench.json`.
//!
//! `--vs 'COMMAND'` (repeatable) runs a comparison stdio MCP server (e.g. the reference's bin) in the
//! same invocation, alternating runs with ours, on the same database files, for every benchmark
//! whose tools it lists, and prints the ratios. `--quick` shrinks every workload for a smoke run.
//!
//! Must never: assert on a time; a benchmark reports, tests decide.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clawboo_core::board::{self, NewTask};
use clawboo_core::db::Db;
use clawboo_core::memory;
use clawboo_tests::{Rng, Server, TempDir, bin_path, target_dir};
use serde_json::{Value, json};

use crate::bench_http;
use crate::probe::{self, EXPECTED};

/// How many processes race for the tasks.
const RACERS: usize = 8;

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

    /// Spawns the server (our `bin`, or the comparison command) on `db`, without initializing.
    fn spawn(&self, bin: &str, db: &Path) -> Server {
        match self {
            Subject::Ours => Server::spawn_command(bin_path(bin), db, &[]),
            Subject::Vs(cmd) => Server::spawn_program(
                PathBuf::from("sh"),
                &["-c", "exec $CLAWBOO_BENCH_VS"],
                db,
                &[("CLAWBOO_BENCH_VS", cmd.as_str())],
            ),
        }
    }
}

/// One measured figure.
struct Row {
    name: String,
    unit: &'static str,
    ours: Option<f64>,
    vs: Vec<Option<f64>>,
}

/// `cargo xtask bench [--quick] [--vs 'COMMAND']...`.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let mut quick = false;
    let mut vs = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--quick" => quick = true,
            "--vs" => vs.push(Subject::Vs(
                rest.next()
                    .ok_or_else(|| crate::usage("--vs needs a command".into()))?
                    .clone(),
            )),
            other => {
                return Err(crate::usage(format!(
                    "unexpected argument {other:?}; usage: cargo xtask bench [--quick] [--vs 'COMMAND']..."
                )));
            }
        }
    }
    probe::build_bins("release")?;
    let sizes = Sizes::new(quick);
    let mut subjects = vec![Subject::Ours];
    subjects.extend(vs);
    let started = Instant::now();
    let mut rows = Vec::new();

    for (bin, _, _) in EXPECTED {
        let tool = first_tool_of(bin)?;
        rows.push(measure(
            &subjects,
            &format!("cold start {bin}"),
            "ms",
            sizes.cold_runs,
            |s| cold_start(s, bin, tool.as_deref()),
        )?);
    }
    rows.push(measure(
        &subjects,
        "get_task round trips",
        "calls/s",
        sizes.round_trip_runs,
        |s| get_task_rate(s, sizes.round_trip_calls),
    )?);
    let per_session = (sizes.round_trip_calls / 10).max(10);
    rows.push(measure(
        &subjects,
        &format!("get_task, {} HTTP sessions", bench_http::SESSIONS),
        "calls/s",
        sizes.round_trip_runs,
        |s| match s {
            Subject::Ours => bench_http::http_rate(per_session),
            Subject::Vs(_) => Ok(None),
        },
    )?);
    rows.push(measure(
        &subjects,
        &format!("get_task, {} stdio processes", bench_http::SESSIONS),
        "calls/s",
        sizes.round_trip_runs,
        |s| bench_http::stdio_rate(|db| s.spawn("clawboo-mcp-tasks", db), per_session),
    )?);
    rows.push(measure(
        &subjects,
        &format!("claims, {RACERS} processes x {} tasks", sizes.race_tasks),
        "claims/s",
        sizes.race_runs,
        |s| race(s, sizes.race_tasks),
    )?);
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
    for (bin, _, _) in EXPECTED {
        rows.push(measure(
            &subjects,
            &format!("peak RSS {bin}, {RSS_CALLS} {}", rss_workload(bin).0),
            "KiB",
            1,
            |s| peak_rss(s, bin),
        )?);
    }

    for (name, unit, ours) in crate::bench_clawbrain::figures(quick)? {
        let vs = vec![None; subjects.len() - 1];
        rows.push(Row {
            name,
            unit,
            ours,
            vs,
        });
    }

    // The scrubber runs in-process, so comparison servers have no figure for it.
    for (name, unit, value) in crate::bench_scrub::rows(quick)? {
        let vs = vec![None; subjects.len() - 1];
        rows.push(Row {
            name,
            unit,
            ours: Some(value),
            vs,
        });
    }

    print_table(&subjects, &rows);
    let path = write_json(&subjects, &rows)?;
    println!(
        "\nwrote {} in {:.0} s",
        path.display(),
        started.elapsed().as_secs_f64()
    );
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

/// Whether `server` lists `tool`.
fn offers(server: &mut Server, tool: &str) -> bool {
    server.list_tools().iter().any(|t| t["name"] == tool)
}

fn cold_start(subject: &Subject, bin: &str, tool: Option<&str>) -> anyhow::Result<Option<f64>> {
    let dir = TempDir::new("bench-cold");
    let started = Instant::now();
    let mut server = subject.spawn(bin, &dir.db_path());
    server.initialize();
    let tools = server.list_tools();
    let elapsed = started.elapsed();
    server.close();
    let matches = match (subject, tool) {
        (Subject::Ours, _) => true,
        (Subject::Vs(_), Some(tool)) => tools.iter().any(|t| t["name"] == tool),
        (Subject::Vs(_), None) => false,
    };
    Ok(matches.then(|| ms(elapsed)))
}

fn get_task_rate(subject: &Subject, calls: usize) -> anyhow::Result<Option<f64>> {
    let dir = TempDir::new("bench-get");
    let mut server = subject.spawn("clawboo-mcp-tasks", &dir.db_path());
    server.initialize();
    if !offers(&mut server, "get_task") {
        return Ok(None);
    }
    let task = server
        .call("create_task", json!({ "title": "bench" }))
        .json();
    let args = json!({ "taskId": task["id"] });
    let started = Instant::now();
    for _ in 0..calls {
        let reply = server.call("get_task", args.clone());
        if reply.is_error {
            bail!("get_task failed: {}", reply.text());
        }
    }
    let rate = calls as f64 / started.elapsed().as_secs_f64();
    server.close();
    Ok(Some(rate))
}

/// 8 processes claim the same tasks in different orders; claims won per second of wall time.
/// Fails unless every task was won exactly once and every loss was a conflict.
fn race(subject: &Subject, tasks: usize) -> anyhow::Result<Option<f64>> {
    let dir = TempDir::new("bench-race");
    let ids = {
        let db = Db::open(&dir.db_path())?;
        let conn = db.conn();
        (0..tasks)
            .map(|i| {
                let new = NewTask {
                    title: format!("race {i}"),
                    ..NewTask::default()
                };
                board::insert(&conn, &new).map(|t| t.id)
            })
            .collect::<Result<Vec<_>, _>>()?
    };
    let mut servers = Vec::new();
    for _ in 0..RACERS {
        let mut server = subject.spawn("clawboo-mcp-tasks", &dir.db_path());
        server.initialize();
        if !offers(&mut server, "claim_task") {
            return Ok(None);
        }
        servers.push(server);
    }
    let barrier = Arc::new(Barrier::new(RACERS + 1));
    let handles: Vec<_> = servers
        .into_iter()
        .enumerate()
        .map(|(racer, mut server)| {
            let mut order = ids.clone();
            Rng::new(racer as u64 + 1).shuffle(&mut order);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || -> Result<Vec<String>, String> {
                let agent = format!("racer-{racer}");
                barrier.wait();
                let mut won = Vec::new();
                for id in order {
                    let reply = server.call(
                        "claim_task",
                        json!({ "taskId": id, "assigneeAgentId": agent }),
                    );
                    if !reply.is_error {
                        won.push(id);
                    } else if reply.text() != "claim failed: conflict" {
                        return Err(format!("{agent}: {}", reply.text()));
                    }
                }
                server.close();
                Ok(won)
            })
        })
        .collect();
    barrier.wait();
    let started = Instant::now();
    let mut wins = Vec::new();
    for handle in handles {
        let won = handle
            .join()
            .map_err(|_| anyhow::anyhow!("a racer thread panicked"))?
            .map_err(|e| {
                anyhow::anyhow!("a claim failed with something other than a conflict: {e}")
            })?;
        wins.extend(won);
    }
    let wall = started.elapsed();
    wins.sort();
    let before = wins.len();
    wins.dedup();
    if before != wins.len() || wins.len() != tasks {
        bail!(
            "claims were not exclusive: {before} wins, {} distinct, {tasks} tasks",
            wins.len()
        );
    }
    Ok(Some(tasks as f64 / wall.as_secs_f64()))
}

const WORDS: &[&str] = &[
    "deploy",
    "database",
    "migration",
    "cache",
    "latency",
    "token",
    "budget",
    "review",
    "release",
    "rollback",
    "schema",
    "index",
    "queue",
    "worker",
    "retry",
    "timeout",
    "search",
    "memory",
    "agent",
    "team",
    "kanban",
    "claim",
    "approval",
    "audit",
    "compaction",
    "embedding",
    "vector",
    "prompt",
    "context",
    "runtime",
    "sqlite",
    "backup",
    "restore",
    "metrics",
    "alert",
    "dashboard",
];

/// Seeds `count` facts (global scope) in one transaction through the memory store.
fn seed_facts(db_path: &Path, count: usize) -> anyhow::Result<()> {
    let db = Db::open(db_path)?;
    let mut rng = Rng::new(0x2545_F491_4F6C_DD1D);
    let mut word = || *rng.pick(WORDS);
    let facts: Vec<(String, String)> = (0..count)
        .map(|i| {
            let title = format!("{} {} note {i}", word(), word());
            let content: Vec<&str> = (0..24).map(|_| word()).collect();
            (title, content.join(" "))
        })
        .collect();
    let conn = db.conn();
    memory::seed_facts(&conn, facts.iter().map(|(t, c)| (t.as_str(), c.as_str())))
        .context("seeding facts")?;
    Ok(())
}

fn search_queries(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let a = WORDS[i % WORDS.len()];
            let b = WORDS[(i * 7 + 3) % WORDS.len()];
            if i % 2 == 0 {
                a.to_owned()
            } else {
                format!("{a} {b}")
            }
        })
        .collect()
}

fn search_latency(
    subject: &Subject,
    db: &Path,
    mode: &str,
    searches: usize,
) -> anyhow::Result<Option<f64>> {
    let mut server = subject.spawn("clawboo-mcp-memory", db);
    server.initialize();
    if !offers(&mut server, "memory_search") {
        return Ok(None);
    }
    let mut latencies = Vec::with_capacity(searches);
    for query in search_queries(searches) {
        let started = Instant::now();
        let reply = server.call(
            "memory_search",
            json!({ "query": query, "mode": mode, "limit": 10 }),
        );
        latencies.push(ms(started.elapsed()));
        if reply.is_error {
            bail!("memory_search failed: {}", reply.text());
        }
    }
    server.close();
    Ok(median(latencies))
}

fn search_rate(subject: &Subject, db: &Path, calls: usize) -> anyhow::Result<Option<f64>> {
    let mut server = subject.spawn("clawboo-mcp-memory", db);
    server.initialize();
    if !offers(&mut server, "memory_search") {
        return Ok(None);
    }
    let queries = search_queries(calls);
    let started = Instant::now();
    for query in queries {
        let reply = server.call("memory_search", json!({ "query": query, "limit": 10 }));
        if reply.is_error {
            bail!("memory_search failed: {}", reply.text());
        }
    }
    let rate = calls as f64 / started.elapsed().as_secs_f64();
    server.close();
    Ok(Some(rate))
}

/// Peak resident set (VmHWM) after a start-up and a `tools/list`, from `/proc` (Linux only).
/// The burst of calls each server answers before its peak RSS is read.
fn rss_workload(bin: &str) -> (&'static str, Value) {
    match bin {
        "clawboo-mcp-tasks" => ("list_tasks", json!({})),
        "clawboo-mcp-memory" => (
            "memory_save",
            json!({"title": "bench fact", "content": "the deploy pipeline runs migrations before the release"}),
        ),
        "clawboo-mcp-tools" => ("echo", json!({"message": "bench"})),
        _ => (
            "team_chat_post",
            json!({"text": "bench post", "authorAgentId": "bench-agent", "teamId": "bench-team"}),
        ),
    }
}

/// Calls in the burst before the peak RSS is read.
const RSS_CALLS: usize = 200;

/// The server's peak resident set (VmHWM) after [`RSS_CALLS`] calls of its [`rss_workload`];
/// `None` when the subject does not offer that tool.
fn peak_rss(subject: &Subject, bin: &str) -> anyhow::Result<Option<f64>> {
    let dir = TempDir::new("bench-rss");
    let mut server = subject.spawn(bin, &dir.db_path());
    server.initialize();
    let (tool, args) = rss_workload(bin);
    if !offers(&mut server, tool) {
        server.close();
        return Ok(None);
    }
    let calls: Vec<(&str, Value)> = (0..RSS_CALLS).map(|_| (tool, args.clone())).collect();
    if let Some(failed) = server.call_pipelined(&calls).iter().find(|r| r.is_error) {
        bail!("{bin} {tool} failed: {}", failed.text());
    }
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid())).ok();
    server.close();
    Ok(status.and_then(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }))
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
    let show = |v: Option<f64>| v.map_or("n/a".to_owned(), |v| format!("{v:.1}"));
    for row in rows {
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

/// How many times better ours is than `other`: for rates (`…/s`) ours/other, for times and sizes
/// other/ours.
fn ratio(unit: &str, ours: Option<f64>, other: Option<f64>) -> Option<f64> {
    let (ours, other) = (ours?, other?);
    if ours <= 0.0 || other <= 0.0 {
        return None;
    }
    Some(if unit.ends_with("/s") {
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
