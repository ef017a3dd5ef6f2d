//! The operator console's rows of `cargo xtask bench`:
//!
//! - **Page and REST times:** the console page (`GET /`) and a page of `/api/board` on a board of
//!   10,000 tasks, and a page of `/api/memory` on a store of 100,000 facts (`--quick`: 1,000 and
//!   2,000), p50 and p95 of the round trip over loopback (one connection per request, so a TCP
//!   connect is included: an upper bound of the server's time). Goal: ≤ 50 ms p95.
//! - **Live updates at scale:** the host's CPU (user + system, share of one core) while 10 writer
//!   processes post into a team room, first with 1 console on `/api/events`, then with 50. Goal:
//!   50 consoles cost about what one does (one change query per wake for the whole host).
//!
//! Owns: those workloads. Must never: reach beyond loopback, or assert on a time.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clawboo_core::internal::board::{self, NewTask};
use clawboo_tests::http::{Host, raw_request};
use clawboo_tests::{Server, TempDir};
use serde_json::json;

use super::realistic::percentile;
use super::wait::cpu_percent;

/// How many writer processes post while the CPU is measured.
const WRITERS: usize = 10;

/// How many consoles listen in the second CPU window.
const CONSOLES: usize = 50;

/// The rows: `(name, unit, value)`.
pub fn rows(quick: bool) -> anyhow::Result<Vec<(String, &'static str, f64)>> {
    let (tasks, facts, requests) = if quick {
        (1_000, 2_000, 30)
    } else {
        (10_000, 100_000, 200)
    };
    let window = Duration::from_secs(if quick { 2 } else { 10 });
    let dir = TempDir::new("bench-console");
    seed_tasks(&dir.db_path(), tasks)?;
    super::facts::seed_facts(&dir.db_path(), facts)?;
    let host = Host::start(
        "clawboo-mcp-tasks",
        &["--all"],
        &dir.db_path(),
        &[("CLAWBOO_EMBEDDINGS", "off")],
    );
    let mut rows = Vec::new();
    for (label, path) in [
        ("console page", "/".to_owned()),
        (
            &*format!("/api/board page at {tasks} tasks"),
            "/api/board?limit=50".to_owned(),
        ),
        (
            &*format!("/api/board team+title filter at {tasks} tasks"),
            "/api/board?team=team-3&q=task+1&limit=50".to_owned(),
        ),
        (
            &*format!("/api/memory page at {facts} facts"),
            "/api/memory?limit=50".to_owned(),
        ),
    ] {
        let (p50, p95) = latency(&host, &path, requests)?;
        rows.push((format!("{label}, p50 of {requests}"), "ms", p50));
        rows.push((format!("{label}, p95 of {requests}"), "ms", p95));
    }
    let seconds = window.as_secs();
    for consoles in [1, CONSOLES] {
        let cpu = cpu_with_consoles(&host, &dir.db_path(), consoles, window)?;
        rows.push((
            format!("console host CPU, {consoles} on /api/events, {WRITERS} writers, {seconds} s"),
            "% core",
            cpu,
        ));
    }
    Ok(rows)
}

/// `count` tasks over 8 teams and every status, in one transaction.
fn seed_tasks(db_path: &Path, count: usize) -> anyhow::Result<()> {
    let db = clawboo_core::Db::open(db_path)?;
    let conn = db.conn();
    conn.execute_batch("BEGIN")?;
    for i in 0..count {
        let status = board::Status::ALL[i % board::Status::ALL.len()];
        board::insert(
            &conn,
            &NewTask {
                title: format!("task {i}"),
                status: Some(status),
                priority: Some((i % 5) as i64),
                team_id: Some(format!("team-{}", i % 8)),
                ..NewTask::default()
            },
        )
        .with_context(|| format!("seeding task {i}"))?;
    }
    conn.execute_batch("COMMIT")?;
    Ok(())
}

/// p50 and p95 in ms of `GET path`, `requests` times.
fn latency(host: &Host, path: &str, requests: usize) -> anyhow::Result<(f64, f64)> {
    let headers = [("Host".to_owned(), host.addr.clone())];
    let mut samples = Vec::with_capacity(requests);
    for _ in 0..requests {
        let started = Instant::now();
        let reply = raw_request(&host.addr, "GET", path, &headers, b"");
        samples.push(started.elapsed().as_secs_f64() * 1000.0);
        if reply.status != 200 {
            bail!("GET {path}: {} {}", reply.status, reply.body);
        }
    }
    Ok((percentile(samples.clone(), 50), percentile(samples, 95)))
}

/// The host's CPU over `window` with `consoles` event streams open while [`WRITERS`] stdio
/// teamchat processes post as fast as they can.
fn cpu_with_consoles(
    host: &Host,
    db: &Path,
    consoles: usize,
    window: Duration,
) -> anyhow::Result<f64> {
    let stop = Arc::new(AtomicBool::new(false));
    let mut readers = Vec::new();
    for _ in 0..consoles {
        let mut stream = TcpStream::connect(&host.addr)?;
        write!(
            stream,
            "GET /api/events HTTP/1.1\r\nHost: {}\r\n\r\n",
            host.addr
        )?;
        stream.set_read_timeout(Some(Duration::from_millis(200)))?;
        let stop = Arc::clone(&stop);
        readers.push(std::thread::spawn(move || {
            let mut events = 0usize;
            let mut buf = [0u8; 8192];
            while !stop.load(Ordering::Relaxed) {
                if let Ok(n) = stream.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    events += buf[..n].windows(6).filter(|w| w == b"event:").count();
                }
            }
            events
        }));
    }
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let mut server = Server::spawn("clawboo-mcp-teamchat", db, &[]);
        let stop = Arc::clone(&stop);
        writers.push(std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                server.call(
                    "team_chat_post",
                    json!({"text": format!("post {n}"), "authorAgentId": format!("w{w}"), "teamId": "bench"}),
                );
                n += 1;
            }
            server.close();
        }));
    }
    std::thread::sleep(Duration::from_millis(500));
    let cpu = cpu_percent(host.pid(), window);
    stop.store(true, Ordering::Relaxed);
    for writer in writers {
        let _ = writer.join();
    }
    let heard: Vec<usize> = readers.into_iter().map(|r| r.join().unwrap_or(0)).collect();
    if heard.contains(&0) {
        bail!("a console heard no change event while {WRITERS} writers posted");
    }
    cpu
}
