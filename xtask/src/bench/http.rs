//! The HTTP rows of `cargo xtask bench`: `get_task` calls per second with 16 concurrent Streamable
//! HTTP sessions against the host (`clawboo-mcp-tasks serve`), and the same workload over stdio
//! (16 concurrent processes on one database) for comparison. Sessions and processes are opened
//! before the clock starts; the HTTP client opens one connection per request (`Connection:
//! close`), as a simple client would, so the figure includes a TCP connect per call.
//!
//! Owns: those two workloads. Must never: reach beyond loopback.

use std::path::Path;
use std::time::Instant;

use anyhow::bail;
use clawboo_tests::http::Host;
use clawboo_tests::{Server, TempDir};
use serde_json::json;

/// How many clients call at once.
pub const SESSIONS: usize = 16;

/// `get_task` calls per second of wall time, `calls` per session over [`SESSIONS`] sessions of
/// one host.
pub fn http_rate(calls: usize) -> anyhow::Result<Option<f64>> {
    let dir = TempDir::new("bench-http");
    let host = Host::start("clawboo-mcp-tasks", &[], &dir.db_path(), &[]);
    let task = host
        .session("/api/mcp/tasks")
        .call("create_task", json!({ "title": "bench" }))
        .json();
    let args = json!({ "taskId": task["id"] });
    let sessions: Vec<_> = (0..SESSIONS)
        .map(|_| host.session("/api/mcp/tasks"))
        .collect();
    concurrent_rate(sessions, calls, |session| {
        session.call("get_task", args.clone()).is_error
    })
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
