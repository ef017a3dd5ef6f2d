//! The load rows of `cargo xtask bench` (issue 24): one host (`serve --all`) serving a team of
//! agents at once, as a team would run it, then the same while hostile connections hold sockets
//! open.
//!
//! - **The team:** [`Sizes::agents`] agents (200; 40 with `--quick`), each with its own named
//!   token (one tokens file, mode 0600, one line per agent; the per-token rate limit stays at its
//!   default) and its own kept-alive connection ([`HttpClient`]), carrying one Streamable HTTP
//!   session on each of the tasks, teamchat and memory mounts. Agents are spread over
//!   [`TEAMS`] teams; each owns one task. For the window (60 s; 3 s with `--quick`) every agent
//!   calls without pause, each call drawn from [`MIX`]: `memory_search` 25% (a word of the team's
//!   vocabulary, `limit` 5), `team_chat_subscribe` 20% (no wait: the posts since the agent's last
//!   `nextSeq`, `limit` 20), `team_chat_post` 15%, `add_comment` 15% (on its own task),
//!   `claim_task` 15% (its own task; every other time `release_task` instead, so the next claim
//!   can win), `memory_save` 10% (a fact of a few words, scoped to the team). Reported: calls per
//!   second, p50/p95/p99 latency, the errors (any answer but a successful result: an HTTP status,
//!   a JSON-RPC error, a tool-error, a dropped connection; the goal is 0, and any is printed
//!   loudly with the first one), the host's peak RSS (`VmHWM`) and its PSS when the window ends.
//!   Every session's connection maps the file (SQLite's memory map), and RSS counts a page of it
//!   once per mapping: with 600 sessions about half the peak RSS is the same file pages; PSS
//!   counts each once.
//! - **Under abuse:** the same on a fresh host while [`ABUSERS`] connections misbehave for the
//!   whole window: half send one header byte a second and never finish, half open and send
//!   nothing. Each reconnects as soon as the host closes it. Reported: the same figures and how
//!   many abusive connections the host closed. The host's request deadline is its default (30 s)
//!   in the full run; the quick run's window is shorter than that, so its host runs with a 2 s
//!   deadline (`--request-timeout 2`), which its row names.
//!
//! Setup happens before the clock starts: the agents' tasks are written to the store before the
//! host starts (the board's guard against runaway agents refuses a burst of root tasks from
//! tools), then each agent opens its connection and sessions on its own thread.
//!
//! Owns: those workloads. Must never: reach beyond loopback, or assert on a time (an error count
//! is printed, never a panic).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use clawboo_core::Db;
use clawboo_core::internal::board::{self, NewTask};
use clawboo_tests::http::Host;
use clawboo_tests::{Rng, TempDir};
use serde_json::{Value, json};

use super::http::{HttpClient, McpSession};
use super::realistic::percentile;
use super::stdio::{peak_rss_kib, pss_kib};

/// How many teams the agents are spread over.
const TEAMS: usize = 10;

/// How many abusive connections misbehave at once in the second phase.
const ABUSERS: usize = 50;

/// What an agent does, with its weight in percent.
const MIX: [(Op, usize); 6] = [
    (Op::Search, 25),
    (Op::Subscribe, 20),
    (Op::Post, 15),
    (Op::Comment, 15),
    (Op::Claim, 15),
    (Op::Save, 10),
];

/// Words the facts and searches are made of.
const WORDS: [&str; 16] = [
    "deploy",
    "pipeline",
    "migration",
    "release",
    "cache",
    "latency",
    "review",
    "schema",
    "backup",
    "rollback",
    "index",
    "token",
    "budget",
    "incident",
    "runbook",
    "queue",
];

#[derive(Clone, Copy)]
enum Op {
    Search,
    Subscribe,
    Post,
    Comment,
    Claim,
    Save,
}

/// The sizes of a run.
struct Sizes {
    agents: usize,
    window: Duration,
    /// `--request-timeout` of the abused host, when not the default.
    request_timeout: Option<&'static str>,
}

impl Sizes {
    fn new(quick: bool) -> Self {
        if quick {
            Self {
                agents: 40,
                window: Duration::from_secs(3),
                request_timeout: Some("2"),
            }
        } else {
            Self {
                agents: 200,
                window: Duration::from_secs(60),
                request_timeout: None,
            }
        }
    }
}

/// What one phase measured.
struct Outcome {
    calls: usize,
    elapsed: Duration,
    /// Every call's latency, in ms.
    latencies: Vec<f64>,
    errors: usize,
    first_error: Option<String>,
    peak_rss_kib: Option<f64>,
    /// The host's proportional set size when the window ended.
    pss_kib: Option<f64>,
    abusers_closed: usize,
}

/// The rows: `(name, unit, value)`.
pub fn rows(quick: bool) -> anyhow::Result<Vec<(String, &'static str, f64)>> {
    let sizes = Sizes::new(quick);
    let seconds = sizes.window.as_secs();
    let team = format!(
        "HTTP load, {} agents (own token, kept-alive, 3 sessions), mixed calls, {seconds} s",
        sizes.agents
    );
    let mut rows = Vec::new();
    let calm = phase(&sizes, 0)?;
    push_rows(&mut rows, &team, &calm);
    let deadline = sizes
        .request_timeout
        .map_or_else(String::new, |secs| format!(", request deadline {secs} s"));
    let abused = phase(&sizes, ABUSERS)?;
    let name = format!("{team}, + {ABUSERS} abusive connections{deadline}");
    push_rows(&mut rows, &name, &abused);
    rows.push((
        format!("{name}: abusive connections the host closed"),
        "closed",
        abused.abusers_closed as f64,
    ));
    Ok(rows)
}

fn push_rows(rows: &mut Vec<(String, &'static str, f64)>, name: &str, outcome: &Outcome) {
    if outcome.errors > 0 {
        eprintln!(
            "\n!!! {name}: {} of {} calls FAILED; the first: {}\n",
            outcome.errors,
            outcome.calls,
            outcome.first_error.as_deref().unwrap_or("?")
        );
    }
    let rate = outcome.calls as f64 / outcome.elapsed.as_secs_f64();
    rows.push((format!("{name}: calls/s"), "calls/s", rate));
    for pct in [50, 95, 99] {
        let value = if outcome.latencies.is_empty() {
            0.0
        } else {
            percentile(outcome.latencies.clone(), pct)
        };
        rows.push((format!("{name}: p{pct} latency"), "ms", value));
    }
    rows.push((format!("{name}: errors"), "errors", outcome.errors as f64));
    if let Some(kib) = outcome.peak_rss_kib {
        rows.push((format!("{name}: host peak RSS"), "KiB", kib));
    }
    if let Some(kib) = outcome.pss_kib {
        rows.push((format!("{name}: host PSS at the end"), "KiB", kib));
    }
}

/// One phase on a fresh host: the agents for the window, with `abusers` hostile connections.
fn phase(sizes: &Sizes, abusers: usize) -> anyhow::Result<Outcome> {
    let dir = TempDir::new("bench-load");
    let (file, tokens) = tokens_file(&dir, sizes.agents)?;
    let tasks = {
        let db = Db::open(&dir.db_path())?;
        let conn = db.conn();
        (0..sizes.agents)
            .map(|n| {
                let new = NewTask {
                    title: format!("agent-{n}'s work"),
                    team_id: Some(team_of(n)),
                    ..NewTask::default()
                };
                board::insert(&conn, &new).map(|t| t.id)
            })
            .collect::<Result<Vec<_>, _>>()?
    };
    let file = file.to_str().context("a temp path that is not UTF-8")?;
    let mut args = vec!["--all", "--tokens-file", file];
    if let (Some(secs), true) = (sizes.request_timeout, abusers > 0) {
        args.extend(["--request-timeout", secs]);
    }
    let host = Host::start("clawboo-mcp-tasks", &args, &dir.db_path(), &[]);
    let stop = AtomicBool::new(false);
    let closed = AtomicUsize::new(0);
    let start = Barrier::new(sizes.agents + 1);
    let first_error = Mutex::new(None::<String>);
    let (outcomes, elapsed) = std::thread::scope(|scope| {
        for n in 0..abusers {
            let (addr, stop, closed) = (&host.addr, &stop, &closed);
            scope.spawn(move || abuse(addr, n % 2 == 0, stop, closed));
        }
        let agents: Vec<_> = tokens
            .iter()
            .zip(&tasks)
            .enumerate()
            .map(|(n, (token, task))| {
                let (addr, start, stop, first_error) = (&host.addr, &start, &stop, &first_error);
                scope.spawn(move || {
                    let agent = Agent::join(addr, n, token, task);
                    start.wait();
                    match agent {
                        Ok(mut agent) => agent.work(stop, first_error),
                        Err(e) => {
                            note(first_error, format!("agent-{n}'s setup: {e:#}"));
                            (Vec::new(), 1)
                        }
                    }
                })
            })
            .collect();
        start.wait();
        let started = Instant::now();
        std::thread::sleep(sizes.window);
        stop.store(true, Ordering::SeqCst);
        let outcomes: Vec<_> = agents
            .into_iter()
            .map(|a| a.join().unwrap_or_else(|_| (Vec::new(), 1)))
            .collect();
        (outcomes, started.elapsed())
    });
    let peak_rss_kib = peak_rss_kib(host.pid());
    let pss_kib = pss_kib(host.pid());
    let mut latencies = Vec::new();
    let mut errors = 0;
    for (agent_latencies, agent_errors) in outcomes {
        latencies.extend(agent_latencies);
        errors += agent_errors;
    }
    Ok(Outcome {
        calls: latencies.len() + errors,
        elapsed,
        latencies,
        errors,
        first_error: first_error.into_inner().unwrap_or_else(|p| p.into_inner()),
        peak_rss_kib,
        pss_kib,
        abusers_closed: closed.into_inner(),
    })
}

/// Writes `dir/tokens` (mode 0600) with one fresh fake token per agent, `agent-<n>:<43 chars>`
/// as `token new` makes them: its path and the tokens, in agent order.
fn tokens_file(dir: &TempDir, agents: usize) -> anyhow::Result<(PathBuf, Vec<String>)> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut rng = Rng::new(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(7, |d| d.as_nanos() as u64),
    );
    let tokens: Vec<String> = (0..agents)
        .map(|_| {
            (0..43)
                .map(|_| char::from(ALPHABET[rng.below(64)]))
                .collect()
        })
        .collect();
    let mut text = String::from("# fake tokens of the load bench\n");
    for (n, token) in tokens.iter().enumerate() {
        text.push_str(&format!("agent-{n}:{token}\n"));
    }
    let path = dir.path().join("tokens");
    std::fs::write(&path, text)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok((path, tokens))
}

/// The team of agent `n`.
fn team_of(n: usize) -> String {
    format!("team-{}", n % TEAMS)
}

/// Records `error` as the first one, unless one is already there.
fn note(first: &Mutex<Option<String>>, error: String) {
    first
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert(error);
}

/// One agent: its connection, its three sessions, its task and where it is in its room.
struct Agent {
    name: String,
    team: String,
    client: HttpClient,
    tasks: McpSession,
    teamchat: McpSession,
    memory: McpSession,
    task_id: Value,
    holding: bool,
    next_seq: i64,
    rng: Rng,
}

impl Agent {
    /// Connects as agent `n` with `token` and opens its sessions; `task` is its task's id.
    fn join(addr: &str, n: usize, token: &str, task: &str) -> anyhow::Result<Self> {
        let mut client = HttpClient::open(addr, Some(token))?;
        let tasks = client.session("/api/mcp/tasks")?;
        let teamchat = client.session("/api/mcp/teamchat")?;
        let memory = client.session("/api/mcp/memory")?;
        Ok(Self {
            name: format!("agent-{n}"),
            team: team_of(n),
            client,
            tasks,
            teamchat,
            memory,
            task_id: Value::from(task),
            holding: false,
            next_seq: 0,
            rng: Rng::new(n as u64 + 1),
        })
    }

    /// Calls until `stop`: every successful call's latency (ms), and how many failed.
    fn work(
        &mut self,
        stop: &AtomicBool,
        first_error: &Mutex<Option<String>>,
    ) -> (Vec<f64>, usize) {
        let mut latencies = Vec::new();
        let mut errors = 0;
        while !stop.load(Ordering::Relaxed) {
            let op = self.pick();
            let started = Instant::now();
            match self.one(op) {
                Ok(()) => latencies.push(started.elapsed().as_secs_f64() * 1000.0),
                Err(e) => {
                    errors += 1;
                    note(first_error, format!("{}: {e:#}", self.name));
                }
            }
        }
        (latencies, errors)
    }

    fn pick(&mut self) -> Op {
        let mut roll = self.rng.below(100);
        for (op, weight) in MIX {
            if roll < weight {
                return op;
            }
            roll -= weight;
        }
        Op::Search
    }

    fn one(&mut self, op: Op) -> anyhow::Result<()> {
        let word = *self.rng.pick(&WORDS);
        let (team, me) = (self.team.as_str(), self.name.as_str());
        match op {
            Op::Search => {
                let args = json!({"query": word, "limit": 5, "scopeTeamId": team});
                self.client.call(&self.memory, "memory_search", &args)?;
            }
            Op::Save => {
                let other = *self.rng.pick(&WORDS);
                let args = json!({"title": format!("{word} note"),
                    "content": format!("the {word} step runs before the {other} step"),
                    "tags": [word], "scopeTeamId": team});
                self.client.call(&self.memory, "memory_save", &args)?;
            }
            Op::Subscribe => {
                let args = json!({"sinceSeq": self.next_seq, "limit": 20,
                    "authorAgentId": me, "teamId": team});
                let result = self
                    .client
                    .call(&self.teamchat, "team_chat_subscribe", &args)?;
                let text = result["content"][0]["text"].as_str().unwrap_or("{}");
                if let Some(seq) = serde_json::from_str::<Value>(text)?["nextSeq"].as_i64() {
                    self.next_seq = seq;
                }
            }
            Op::Post => {
                let args = json!({"text": format!("{me}: the {word} is done"),
                    "authorAgentId": me, "teamId": team});
                self.client.call(&self.teamchat, "team_chat_post", &args)?;
            }
            Op::Comment => {
                let args = json!({"taskId": self.task_id, "body": format!("{word} checked"),
                    "authorAgentId": me});
                self.client.call(&self.tasks, "add_comment", &args)?;
            }
            Op::Claim => {
                if self.holding {
                    let args = json!({"taskId": self.task_id});
                    self.client.call(&self.tasks, "release_task", &args)?;
                } else {
                    let args = json!({"taskId": self.task_id, "assigneeAgentId": me});
                    self.client.call(&self.tasks, "claim_task", &args)?;
                }
                self.holding = !self.holding;
            }
        }
        Ok(())
    }
}

/// One abusive connection slot until `stop`: connects, then either sends one header byte a
/// second (`trickle`) or nothing; when the host closes it, counts that in `closed` and connects
/// again.
fn abuse(addr: &str, trickle: bool, stop: &AtomicBool, closed: &AtomicUsize) {
    const HEAD: &[u8] = b"POST /api/mcp/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    while !stop.load(Ordering::Relaxed) {
        let Ok(mut stream) = TcpStream::connect(addr) else {
            std::thread::sleep(Duration::from_millis(100));
            continue;
        };
        if stream
            .set_read_timeout(Some(Duration::from_secs(1)))
            .is_err()
        {
            continue;
        }
        let mut sent = 0usize;
        let mut buf = [0u8; 512];
        while !stop.load(Ordering::Relaxed) {
            if trickle {
                let byte = HEAD.get(sent).copied().unwrap_or(b'a');
                if stream.write_all(&[byte]).is_err() {
                    closed.fetch_add(1, Ordering::Relaxed);
                    break;
                }
                sent += 1;
            }
            // Waits up to a second: data (the host's answer, then its close), or nothing yet.
            match stream.read(&mut buf) {
                Ok(0) => {
                    closed.fetch_add(1, Ordering::Relaxed);
                    break;
                }
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => {
                    closed.fetch_add(1, Ordering::Relaxed);
                    break;
                }
            }
        }
    }
}
