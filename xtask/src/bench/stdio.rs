//! Whole-process workloads of the four servers over stdio: cold start, `get_task` round trips, the
//! 8-process claim race (with its proof that each task was won once) and peak RSS after a burst
//! of each server's typical calls.
//!
//! Must never: assert on a time; a workload returns its figure (or `None` when the subject does
//! not offer the tool) and fails only when an invariant it proves is broken.

use std::sync::{Arc, Barrier};
use std::time::Instant;

use anyhow::bail;
use clawboo_core::Db;
use clawboo_core::internal::board::{self, NewTask};
use clawboo_tests::{Rng, TempDir};
use serde_json::{Value, json};

use super::{Subject, ms, offers};

/// How many processes race for the tasks.
pub const RACERS: usize = 8;

pub fn cold_start(subject: &Subject, bin: &str, tool: Option<&str>) -> anyhow::Result<Option<f64>> {
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

pub fn get_task_rate(subject: &Subject, calls: usize) -> anyhow::Result<Option<f64>> {
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
pub fn race(subject: &Subject, tasks: usize) -> anyhow::Result<Option<f64>> {
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

/// The burst of calls each server answers before its peak RSS is read.
pub fn rss_workload(bin: &str) -> (&'static str, Value) {
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
pub const RSS_CALLS: usize = 200;

/// The server's peak resident set (VmHWM) after [`RSS_CALLS`] calls of its [`rss_workload`];
/// `None` when the subject does not offer that tool.
pub fn peak_rss(subject: &Subject, bin: &str) -> anyhow::Result<Option<f64>> {
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
