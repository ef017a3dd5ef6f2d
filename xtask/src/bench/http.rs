//! The HTTP rows of `cargo xtask bench`: `get_task` calls per second with 16 concurrent Streamable
//! HTTP sessions against the host (`clawboo-mcp-tasks serve`), and the same workload over stdio
//! (16 concurrent processes on one database) for comparison; and `get_task` round trips on one
//! HTTP session, beside the stdio row of one session. Sessions and processes are opened before the
//! clock starts.
//!
//! The HTTP client is [`HttpClient`]: one kept-alive connection per client, as every real MCP
//! client holds one, answers read on the calling thread (no reader thread, as the stdio rows'
//! `LeanClient`). One row keeps the connect-per-call client of the tests (`Connection: close`,
//! a TCP connect per call) for comparison. The host runs without its rate limiter here (16
//! sessions of one anonymous caller would share one bucket): these rows measure the request
//! path; the load rows ([`super::load`]) keep the limiter, one token per agent.
//!
//! Owns: those workloads and [`HttpClient`]. Must never: reach beyond loopback.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, anyhow, bail};
use clawboo_tests::http::{Connection, Host};
use clawboo_tests::{Server, TempDir};
use serde_json::{Value, json};

/// How many clients call at once.
pub const SESSIONS: usize = 16;

/// The tasks mount.
const TASKS: &str = "/api/mcp/tasks";

/// A host of `clawboo-mcp-tasks` on `dir`'s database, without the rate limiter (these rows
/// measure the request path).
pub fn start_tasks_host(dir: &TempDir) -> Host {
    Host::start(
        "clawboo-mcp-tasks",
        &["--rate-limit", "0"],
        &dir.db_path(),
        &[],
    )
}

/// [`start_tasks_host`], and the arguments of a `get_task` call on a task it holds.
fn tasks_host(dir: &TempDir) -> anyhow::Result<(Host, Value)> {
    let host = start_tasks_host(dir);
    let mut client = HttpClient::open(&host.addr, None)?;
    let session = client.session(TASKS)?;
    let task = client.call(&session, "create_task", &json!({ "title": "bench" }))?;
    let task: Value = serde_json::from_str(task["content"][0]["text"].as_str().unwrap_or("{}"))?;
    Ok((host, json!({ "taskId": task["id"] })))
}

/// `get_task` calls per second of wall time, `calls` per session over [`SESSIONS`] sessions of
/// one host, each session on its own kept-alive connection.
pub fn http_rate(calls: usize) -> anyhow::Result<Option<f64>> {
    let dir = TempDir::new("bench-http");
    let (host, args) = tasks_host(&dir)?;
    let clients = (0..SESSIONS)
        .map(|_| {
            let mut client = HttpClient::open(&host.addr, None)?;
            let session = client.session(TASKS)?;
            Ok((client, session))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    concurrent_rate(clients, calls, |(client, session)| {
        client.call(session, "get_task", &args).is_err()
    })
}

/// The same workload with the tests' client: a TCP connection per call (`Connection: close`).
pub fn http_rate_connect_per_call(calls: usize) -> anyhow::Result<Option<f64>> {
    let dir = TempDir::new("bench-http-close");
    let (host, args) = tasks_host(&dir)?;
    let sessions: Vec<_> = (0..SESSIONS).map(|_| host.session(TASKS)).collect();
    concurrent_rate(sessions, calls, |session| {
        session.call("get_task", args.clone()).is_error
    })
}

/// `get_task` round trips per second on one HTTP session (one kept-alive connection).
pub fn http_round_trips(calls: usize) -> anyhow::Result<Option<f64>> {
    let dir = TempDir::new("bench-http-one");
    let (host, args) = tasks_host(&dir)?;
    let mut client = HttpClient::open(&host.addr, None)?;
    let session = client.session(TASKS)?;
    let started = Instant::now();
    for _ in 0..calls {
        client.call(&session, "get_task", &args)?;
    }
    Ok(Some(calls as f64 / started.elapsed().as_secs_f64()))
}

/// The same workload over stdio: [`SESSIONS`] processes `spawn` starts on one database.
pub fn stdio_rate(
    spawn: impl Fn(&Path) -> Server + Sync,
    calls: usize,
) -> anyhow::Result<Option<f64>> {
    let dir = TempDir::new("bench-stdio16");
    let mut first = spawn(&dir.db_path());
    first.initialize();
    if !first.list_tools().iter().any(|t| t["name"] == "get_task") {
        return Ok(None);
    }
    let task = first
        .call("create_task", json!({ "title": "bench" }))
        .json();
    let args = json!({ "taskId": task["id"] });
    let mut servers: Vec<Server> = (1..SESSIONS)
        .map(|_| {
            let mut server = spawn(&dir.db_path());
            server.initialize();
            server
        })
        .collect();
    servers.push(first);
    concurrent_rate(servers, calls, |server| {
        server.call("get_task", args.clone()).is_error
    })
}

/// Calls per second of wall time when every client makes `calls` calls at once, each on its own
/// thread; `call` makes one and says whether it failed. Fails if any call failed.
fn concurrent_rate<C: Send>(
    clients: Vec<C>,
    calls: usize,
    call: impl Fn(&mut C) -> bool + Sync,
) -> anyhow::Result<Option<f64>> {
    let total = clients.len() * calls;
    let started = Instant::now();
    let failures: usize = std::thread::scope(|scope| {
        let workers: Vec<_> = clients
            .into_iter()
            .map(|mut client| {
                let call = &call;
                scope.spawn(move || (0..calls).filter(|_| call(&mut client)).count())
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or(calls)).sum()
    });
    let elapsed = started.elapsed().as_secs_f64();
    if failures > 0 {
        bail!("{failures} of {total} get_task calls failed");
    }
    Ok(Some(total as f64 / elapsed))
}

/// One MCP session a client opened: its mount and the id the host minted.
pub struct McpSession {
    path: String,
    id: String,
}

/// A lean MCP client over Streamable HTTP: one kept-alive connection (any number of sessions on
/// it, one request at a time), answers read on the calling thread, every failure an `Err` (a
/// benchmark counts errors, it never panics on one).
pub struct HttpClient {
    connection: Connection,
    authorization: Option<String>,
    next_id: u64,
}

impl HttpClient {
    /// Connects to `addr`; every request carries `token` when given.
    pub fn open(addr: &str, token: Option<&str>) -> anyhow::Result<Self> {
        Ok(Self {
            connection: Connection::open(addr).with_context(|| format!("connecting to {addr}"))?,
            authorization: token.map(|t| format!("Bearer {t}")),
            next_id: 0,
        })
    }

    /// Opens a session at `path`: `initialize`, then `notifications/initialized`.
    pub fn session(&mut self, path: &str) -> anyhow::Result<McpSession> {
        let initialize = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "clawboo-bench", "version": clawboo_tests::VERSION }
            }
        });
        let reply = self.post(path, None, &initialize)?;
        if reply.status != 200 {
            bail!(
                "initialize at {path}: HTTP {}: {}",
                reply.status,
                reply.body
            );
        }
        let id = reply
            .header("mcp-session-id")
            .context("initialize minted no session id")?
            .to_owned();
        let session = McpSession {
            path: path.to_owned(),
            id,
        };
        let ack = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let reply = self.post(path, Some(&session.id), &ack)?;
        if reply.status != 202 {
            bail!(
                "initialized at {path}: HTTP {}: {}",
                reply.status,
                reply.body
            );
        }
        Ok(session)
    }

    fn post(
        &mut self,
        path: &str,
        session: Option<&str>,
        message: &Value,
    ) -> anyhow::Result<clawboo_tests::http::Reply> {
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        if let Some(id) = session {
            headers.push(("mcp-session-id", id));
        }
        if let Some(authorization) = &self.authorization {
            headers.push(("Authorization", authorization));
        }
        let body = serde_json::to_vec(message)?;
        Ok(self.connection.send("POST", path, &headers, &body)?)
    }

    /// Sends a request on `session`; its `result`, or an error naming what came back.
    pub fn request(
        &mut self,
        session: &McpSession,
        method: &str,
        params: &Value,
    ) -> anyhow::Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let reply = self.post(&session.path, Some(&session.id), &message)?;
        if reply.status != 200 {
            bail!("{method}: HTTP {}: {}", reply.status, reply.body);
        }
        let mut answer = reply
            .messages()
            .into_iter()
            .find(|m| m["id"] == id)
            .ok_or_else(|| anyhow!("{method}: no answer in {}", reply.body))?;
        match answer.get_mut("result") {
            Some(result) => Ok(result.take()),
            None => bail!("{method}: {answer}"),
        }
    }

    /// Calls `tool`; its result, or an error when it is a tool-error.
    pub fn call(
        &mut self,
        session: &McpSession,
        tool: &str,
        args: &Value,
    ) -> anyhow::Result<Value> {
        let result = self.request(
            session,
            "tools/call",
            &json!({ "name": tool, "arguments": args }),
        )?;
        if result["isError"] == true {
            bail!("{tool}: {}", result["content"][0]["text"]);
        }
        Ok(result)
    }
}
