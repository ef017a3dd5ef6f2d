//! Whole-process workloads of the four servers over stdio: cold start, `get_task` round trips, the
//! 8-process claim race (with its proof that each task was won once) and peak RSS after a burst
//! of each server's typical calls.
//!
//! Must never: assert on a time; a workload returns its figure (or `None` when the subject does
//! not offer the tool) and fails only when an invariant it proves is broken.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use clawboo_core::Db;
use clawboo_core::internal::board::{self, NewTask};
use clawboo_tests::{Rng, TempDir, ToolReply};
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

/// `get_task` round trips per second on one connection, read by a [`LeanClient`].
pub fn get_task_rate(subject: &Subject, calls: usize) -> anyhow::Result<Option<f64>> {
    let dir = TempDir::new("bench-get");
    let mut client = LeanClient::start(subject.command("clawboo-mcp-tasks", &dir.db_path()))?;
    if !client.offers("get_task")? {
        return Ok(None);
    }
    let task = client
        .call("create_task", &json!({ "title": "bench" }))?
        .json();
    let args = json!({ "taskId": task["id"] });
    let started = Instant::now();
    for _ in 0..calls {
        client.call("get_task", &args)?;
    }
    let rate = calls as f64 / started.elapsed().as_secs_f64();
    client.close();
    Ok(Some(rate))
}

/// A client that reads the server's answers on the calling thread: no reader thread and no
/// channel, so a round trip costs the server's time plus the pipe's two wake-ups. The tests'
/// `Server` client hands every answer from a reader thread to the caller, a wake-up that would
/// be counted as the server's; the same lean client drives every subject. A timed call
/// ([`LeanClient::timed_reply`]) stops the clock when the answer's line has arrived, before the
/// client parses it: parsing a search's answer (about 5 KB of JSON, read twice, as a value and
/// its text block) took this client a median 0.3 ms in a debug build and about 150 µs in the
/// release build `bench` runs in (`ran_optimised`), measured: the client's time, not the server's.
pub struct LeanClient {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
    next_id: u64,
}

impl LeanClient {
    /// Starts `command` with piped stdio and completes the `initialize` handshake.
    pub fn start(mut command: Command) -> anyhow::Result<Self> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot spawn the server")?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            bail!("the server's stdio is not piped");
        };
        let mut client = Self {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            line: String::new(),
            next_id: 0,
        };
        let params = json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": "clawboo-bench", "version": clawboo_tests::VERSION }
        });
        client.request("initialize", &params)?;
        client
            .stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")?;
        Ok(client)
    }

    /// Sends a request and reads until its answer; the answer's `result`, or an error.
    pub fn request(&mut self, method: &str, params: &Value) -> anyhow::Result<Value> {
        self.timed_request(method, params).map(|(result, _)| result)
    }

    /// [`LeanClient::request`], and the round trip: from writing the request to reading its
    /// answer's line, before parsing it.
    fn timed_request(&mut self, method: &str, params: &Value) -> anyhow::Result<(Value, Duration)> {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = serde_json::to_vec(
            &json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }),
        )?;
        message.push(b'\n');
        let started = Instant::now();
        self.stdin.write_all(&message)?;
        loop {
            self.line.clear();
            if self.stdout.read_line(&mut self.line)? == 0 {
                bail!("the server closed stdout before answering {method}");
            }
            let round_trip = started.elapsed();
            let mut answer: Value = serde_json::from_str(&self.line).with_context(|| {
                format!("the server wrote a line that is not JSON: {}", self.line)
            })?;
            if answer["id"] == id {
                return match answer.get_mut("result") {
                    Some(result) => Ok((result.take(), round_trip)),
                    None => Err(anyhow!("{method} failed: {answer}")),
                };
            }
        }
    }

    /// Whether the server lists `tool`.
    pub fn offers(&mut self, tool: &str) -> anyhow::Result<bool> {
        let listed = self.request("tools/list", &json!({}))?;
        Ok(listed["tools"]
            .as_array()
            .is_some_and(|tools| tools.iter().any(|t| t["name"] == tool)))
    }

    /// Calls `tool`; what the model reads, or an error carrying the tool-error's text.
    pub fn call(&mut self, tool: &str, args: &Value) -> anyhow::Result<ToolReply> {
        let reply = self.reply(tool, args)?;
        if reply.is_error {
            bail!("{tool} failed: {}", reply.text());
        }
        Ok(reply)
    }

    /// Calls `tool`; its reply, a tool-error too.
    pub fn reply(&mut self, tool: &str, args: &Value) -> anyhow::Result<ToolReply> {
        self.timed_reply(tool, args).map(|(reply, _)| reply)
    }

    /// [`LeanClient::reply`], and the round trip: from writing the call to reading its answer's
    /// line, before parsing it.
    pub fn timed_reply(
        &mut self,
        tool: &str,
        args: &Value,
    ) -> anyhow::Result<(ToolReply, Duration)> {
        let (result, round_trip) =
            self.timed_request("tools/call", &json!({ "name": tool, "arguments": args }))?;
        Ok((ToolReply::from_result(result), round_trip))
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Closes stdin and waits for the server to exit.
    pub fn close(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
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
    let peak = peak_rss_kib(server.pid());
    server.close();
    Ok(peak)
}

/// The peak resident set (`VmHWM`, KiB) of the running process `pid`, if it can be read.
pub fn peak_rss_kib(pid: u32) -> Option<f64> {
    proc_kib(&format!("/proc/{pid}/status"), "VmHWM:")
}

/// The proportional set size (`Pss`, KiB) of the running process `pid` now, if it can be read: its
/// resident pages, a page it maps more than once (a file each SQLite connection maps) counted once
/// (in RSS it counts once per mapping), and one shared with other processes counted in part.
pub fn pss_kib(pid: u32) -> Option<f64> {
    proc_kib(&format!("/proc/{pid}/smaps_rollup"), "Pss:")
}

/// The KiB figure of the line starting `key` in `/proc` file `path`.
fn proc_kib(path: &str, key: &str) -> Option<f64> {
    std::fs::read_to_string(path)
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This process's PSS is read, above zero and no more than its resident set.
    #[test]
    fn the_pss_of_a_running_process_is_read_and_within_its_rss() {
        let me = std::process::id();
        let pss = pss_kib(me).expect("smaps_rollup has a Pss line");
        let rss = proc_kib(&format!("/proc/{me}/status"), "VmRSS:").expect("status has VmRSS");
        assert!(pss > 0.0 && pss <= rss, "pss {pss} KiB, rss {rss} KiB");
        assert!(peak_rss_kib(me).is_some_and(|peak| peak >= rss));
    }

    /// A server (a shell script) that completes the handshake, then answers one call with `[]`
    /// after a pause of 50 ms.
    fn slow_server() -> Command {
        let mut command = Command::new("sh");
        command.args([
            "-c",
            r#"read _; echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}'
               read _; read _; sleep 0.05
               echo '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"[]"}],"isError":false}}'"#,
        ]);
        command
    }

    #[test]
    fn a_timed_call_counts_the_server_s_pause_and_no_more_than_the_call_took() {
        let mut client = LeanClient::start(slow_server()).unwrap();
        let started = Instant::now();
        let (reply, round_trip) = client.timed_reply("any", &json!({})).unwrap();
        let call = started.elapsed();
        assert_eq!(reply.text(), "[]");
        assert!(round_trip >= Duration::from_millis(50), "{round_trip:?}");
        assert!(round_trip <= call, "{round_trip:?} > {call:?}");
        client.close();
    }
}
