//! The synthetic memory workload: facts drawn from a 36-word vocabulary (every query matches a
//! large share of them: the worst case beside the realistic corpus of [`super::corpus`]),
//! `memory_search` latency and round trips.
//!
//! Must never: assert on a time.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, bail};
use clawboo_core::Db;
use clawboo_core::internal::memory;
use clawboo_tests::Rng;
use serde_json::json;

use super::{Subject, median, ms, offers};

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
pub fn seed_facts(db_path: &Path, count: usize) -> anyhow::Result<()> {
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

pub fn search_latency(
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

pub fn search_rate(subject: &Subject, db: &Path, calls: usize) -> anyhow::Result<Option<f64>> {
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
