//! The waiting rows of `cargo xtask bench`: what it costs to wait instead of polling, and how soon
//! a waiter hears.
//!
//! - **Host CPU with waiting subscribers:** the teamchat host (`clawboo-mcp-teamchat serve`) first
//!   idle, then with [`WAITERS`] Streamable HTTP sessions each inside a `team_chat_subscribe`
//!   with `waitMs`; the host's CPU (user + system time from `/proc/<pid>/stat`, in the kernel's
//!   100 Hz ticks) over a fixed window, as a percentage of one core. One post then wakes every
//!   waiter (each must get it).
//! - **Wake-up latency:** a subscriber waiting in one stdio process, a post sent by another; the
//!   time from sending the post to reading the waiter's answer, p50 and p95 over repeated rounds.
//!
//! Owns: those workloads. Must never: reach beyond loopback, or assert on a time (a benchmark
//! reports, tests decide).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clawboo_tests::http::Host;
use clawboo_tests::{Rng, Server, TempDir};
use serde_json::{Value, json};

/// How many sessions wait at once on the host.
pub const WAITERS: usize = 100;

/// How long each waiting call may wait: longer than any measuring window.
const WAIT_MS: u64 = 30_000;

/// The servers' change-watcher tick (`db::watch::TICK`), in ms: the posts' phase spans it.
const WATCH_TICK_MS: usize = 25;

/// The kernel's clock ticks per second in `/proc/<pid>/stat` (`USER_HZ`, 100 on Linux).
const TICKS_PER_SECOND: f64 = 100.0;

/// The rows: `(name, unit, value)`.
pub fn rows(quick: bool) -> anyhow::Result<Vec<(String, &'static str, f64)>> {
    let window = Duration::from_secs(if quick { 2 } else { 10 });
    let rounds = if quick { 10 } else { 60 };
    let (idle, waiting) = host_cpu(window)?;
    let (p50, p95) = wake_latency(rounds)?;
    let seconds = window.as_secs();
    Ok(vec![
        (
            format!("teamchat host CPU, idle, {seconds} s"),
            "% core",
            idle,
        ),
        (
            format!("teamchat host CPU, {WAITERS} waiting subscribers, {seconds} s"),
            "% core",
            waiting,
        ),
        (
            format!("wake-up after a post from another process, p50 of {rounds}"),
            "ms",
            p50,
        ),
        (
            format!("wake-up after a post from another process, p95 of {rounds}"),
            "ms",
            p95,
        ),
    ])
}

/// User + system CPU time of process `pid` so far, in seconds.
fn cpu_seconds(pid: u32) -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .with_context(|| format!("reading /proc/{pid}/stat"))?;
    // The command name, field 2, is in parentheses and may hold spaces: count from after it.
    let after_name = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .context("an unreadable /proc stat line")?;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12th and 13th after the name.
    let ticks = |i: usize| -> anyhow::Result<f64> {
        Ok(fields
            .get(i)
            .context("a short /proc stat line")?
            .parse::<f64>()?)
    };
    Ok((ticks(11)? + ticks(12)?) / TICKS_PER_SECOND)
}

/// The share of one core `pid` used over `window`, in percent.
pub(super) fn cpu_percent(pid: u32, window: Duration) -> anyhow::Result<f64> {
    let before = cpu_seconds(pid)?;
    let started = Instant::now();
    std::thread::sleep(window);
    let used = cpu_seconds(pid)? - before;
    Ok(100.0 * used / started.elapsed().as_secs_f64())
}

/// The host's CPU idle, then with [`WAITERS`] waiting subscribers.
fn host_cpu(window: Duration) -> anyhow::Result<(f64, f64)> {
    let dir = TempDir::new("bench-wait-host");
    // The row measures waiting, not the per-token rate limiter: a hundred sessions opened at once
    // by one anonymous caller (three requests each) are a burst above the default limit.
    let host = Host::start(
        "clawboo-mcp-teamchat",
        &["--rate-limit", "0"],
        &dir.db_path(),
        &[],
    );
    let path = "/api/mcp/teamchat";
    // Settle after start-up before the idle window.
    std::thread::sleep(Duration::from_millis(500));
    let idle = cpu_percent(host.pid(), window)?;
    let sessions: Vec<_> = (0..WAITERS).map(|_| host.session(path)).collect();
    let mut poster = host.session(path);
    let waiting = std::thread::scope(|scope| -> anyhow::Result<f64> {
        let waiters: Vec<_> = sessions
            .into_iter()
            .enumerate()
            .map(|(n, mut session)| {
                scope.spawn(move || {
                    session.call(
                        "team_chat_subscribe",
                        json!({"waitMs": WAIT_MS, "authorAgentId": format!("waiter-{n}"), "teamId": "bench"}),
                    )
                })
            })
            .collect();
        // Let every call reach its wait before the window opens.
        std::thread::sleep(Duration::from_secs(1));
        let waiting = cpu_percent(host.pid(), window)?;
        let posted = poster.call(
            "team_chat_post",
            json!({"text": "wake up", "authorAgentId": "poster", "teamId": "bench"}),
        );
        if posted.is_error {
            bail!("the waking post failed: {}", posted.text());
        }
        for waiter in waiters {
            let reply = waiter
                .join()
                .map_err(|_| anyhow::anyhow!("a waiting session failed"))?;
            if reply.is_error || reply.json()["posts"].as_array().is_none_or(Vec::is_empty) {
                bail!("a waiter missed the post: {}", reply.text());
            }
        }
        Ok(waiting)
    })?;
    Ok((idle, waiting))
}

/// Wake-up latency percentiles (p50, p95) in ms over `rounds` posts.
fn wake_latency(rounds: usize) -> anyhow::Result<(f64, f64)> {
    let dir = TempDir::new("bench-wait-latency");
    let mut listener = teammate(&dir.db_path(), "listener");
    let mut talker = teammate(&dir.db_path(), "talker");
    let mut since = 0;
    let mut samples = Vec::with_capacity(rounds);
    let mut rng = Rng::new(0x3A17);
    for _ in 0..rounds {
        let waiting = listener.send_request(
            "tools/call",
            json!({"name": "team_chat_subscribe", "arguments": {"sinceSeq": since, "waitMs": WAIT_MS}}),
        );
        // Give the call time to reach its wait (a post that came first would be measured short),
        // then post at a random point of the watcher's tick: its thread starts with the first
        // waiter, so a fixed delay would always post at the same phase.
        let phase = rng.below(WATCH_TICK_MS);
        std::thread::sleep(Duration::from_millis(50 + phase as u64));
        let started = Instant::now();
        let posted = talker.send_request(
            "tools/call",
            json!({"name": "team_chat_post", "arguments": {"text": "ping"}}),
        );
        let got = Server::tool_reply(listener.wait_response(waiting));
        samples.push(started.elapsed().as_secs_f64() * 1000.0);
        let _ = talker.wait_response(posted);
        let got: Value = got.json();
        if got["posts"].as_array().is_none_or(Vec::is_empty) {
            bail!("the waiting subscriber was not woken by the post: {got}");
        }
        since = got["nextSeq"].as_i64().unwrap_or(since);
    }
    listener.close();
    talker.close();
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    Ok((at(0.5), at(0.95)))
}

/// A teamchat stdio process bound to `agent` in team `bench`.
fn teammate(db: &Path, agent: &str) -> Server {
    Server::spawn(
        "clawboo-mcp-teamchat",
        db,
        &[
            ("CLAWBOO_ROOM_TEAM_ID", "bench"),
            ("CLAWBOO_AUTHOR_AGENT_ID", agent),
        ],
    )
}
