//! A client for the real server binaries: spawn one over stdio and speak newline-delimited
//! JSON-RPC to it. Shared by the integration tests (`tests/tests/`) and by `cargo xtask`.
//!
//! Owns: locating (and if needed building) the bins, temporary database folders, and reading
//! replies with a deadline so that a hung server fails a test instead of hanging it. Which bins
//! exist and what each server lists come from the registry of servers
//! (`clawboo_core::internal::registry`), never from a list of its own. Also the held-out scrub
//! and search corpora (`heldout`), built another way than the ones the code was tuned on.
//! Must never: depend on the server's internals; everything else goes over the wire.

pub mod browser;
pub mod fixtures;
pub mod heldout;
pub mod http;
pub mod loopback;
pub mod python;
pub mod reference;
pub mod schema;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clawboo_core::ServerKind;
use clawboo_core::internal::registry;
use serde_json::{Value, json};

/// The tools `kind` always lists, in order, as the registry of servers says.
pub fn tools_of(kind: ServerKind) -> &'static [&'static str] {
    registry::entry(kind).tools
}

/// The protocol version without `initialize` or sessions: every request carries its own `_meta`.
pub const STATELESS_VERSION: &str = "2026-07-28";

/// `params` with the `_meta` a `2026-07-28` client sends on every request (its protocol version,
/// capabilities and name) added.
pub fn stateless(params: Value) -> Value {
    let mut params = match params {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    params.insert(
        "_meta".into(),
        json!({
            "io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "clawboo-tests", "version": VERSION}
        }),
    );
    Value::Object(params)
}

/// The tools of `clawboo-mcp-memory clawbrain`: seed 002's seven and `memory_feedback`.
pub fn clawbrain_tools() -> &'static [&'static str] {
    tools_of(ServerKind::ClawBrain)
}

/// The credit score of ClawBrain memory `id` in the vault at `root` (its `engine.db`).
pub fn clawbrain_score(root: &Path, id: &str) -> f64 {
    rusqlite::Connection::open(root.join("engine.db"))
        .expect("open engine.db")
        .query_row(
            "SELECT score FROM credit_records WHERE id = ?1",
            [id],
            |r| r.get(0),
        )
        .unwrap_or_else(|e| panic!("no credit row for {id}: {e}"))
}

/// The workspace's version, which every bin reports (`--version`, `serverInfo.version`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// How long a reply may take before the client gives up.
pub const REPLY_DEADLINE: Duration = Duration::from_secs(60);

/// The server bins, from the registry of servers (each once, in the order of their own servers).
pub fn bins() -> Vec<&'static str> {
    registry::bins()
}

/// The workspace root (the folder holding the workspace `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The target folder: `CARGO_TARGET_DIR`, else `<workspace>/target`.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"))
}

/// The path of a build of `bin` (profile `CLAWBOO_TEST_PROFILE`, default `debug`). The first call
/// in a process runs `cargo build` for the bins, so a test never drives a stale binary; set
/// `CLAWBOO_BINS_BUILT=1` when the caller has just built them (xtask does).
pub fn bin_path(bin: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    let profile = std::env::var("CLAWBOO_TEST_PROFILE").unwrap_or_else(|_| "debug".into());
    BUILT.get_or_init(|| {
        if std::env::var_os("CLAWBOO_BINS_BUILT").is_none() {
            build_bins(&profile);
        }
    });
    target_dir()
        .join(&profile)
        .join(format!("{bin}{}", std::env::consts::EXE_SUFFIX))
}

/// A `cargo` command run from the workspace root, as a person at a shell would run it. Cargo
/// describes the running package to the tests and to the xtask it runs (`CARGO_MANIFEST_DIR`,
/// `CARGO_PKG_*`, …); passed on to a nested cargo, that description reaches build scripts that
/// track it (ring's), so every nested build would recompile ring, rustls, ureq, clawboo-core and
/// the bins, and the next plain build would again. Those variables are left out here.
pub fn cargo_command() -> Command {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace_root());
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(describes_the_running_package) {
            cmd.env_remove(name);
        }
    }
    cmd
}

/// Whether `var` is one of the variables cargo sets for the crate it compiles or runs.
fn describes_the_running_package(var: &str) -> bool {
    const EXACT: &[&str] = &[
        "CARGO_MANIFEST_DIR",
        "CARGO_MANIFEST_PATH",
        "CARGO_MANIFEST_LINKS",
        "CARGO_CRATE_NAME",
        "CARGO_BIN_NAME",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_TARGET_TMPDIR",
        "CARGO_RUSTC_CURRENT_DIR",
        "OUT_DIR",
    ];
    EXACT.contains(&var) || var.starts_with("CARGO_PKG_") || var.starts_with("CARGO_BIN_EXE_")
}

fn build_bins(profile: &str) {
    let mut cmd = cargo_command();
    cmd.args(["build", "--quiet"]);
    if profile == "release" {
        cmd.arg("--release");
    }
    for b in bins() {
        cmd.args(["--bin", b]);
    }
    let status = cmd.status().expect("cargo build could not start");
    assert!(status.success(), "cargo build of the bins failed");
}

/// A fresh folder under the system temp dir, removed on drop.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// Creates a new, empty, uniquely named folder.
    pub fn new(label: &str) -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let path = std::env::temp_dir().join(format!(
            "clawboo-{label}-{}-{nanos}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).expect("cannot create a temp folder");
        Self { path }
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `<folder>/clawboo.db`.
    pub fn db_path(&self) -> PathBuf {
        self.path.join("clawboo.db")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// What a client reads back from `tools/call`.
#[derive(Debug, Clone)]
pub struct ToolReply {
    /// The whole `result` object.
    pub raw: Value,
    /// The text blocks in order.
    pub blocks: Vec<String>,
    /// `isError`.
    pub is_error: bool,
    /// `_meta.denied`.
    pub denied: Option<String>,
}

impl ToolReply {
    /// Shapes the `result` of a `tools/call`; panics when it has no `isError`.
    pub fn from_result(result: Value) -> Self {
        let blocks = result["content"]
            .as_array()
            .map(|blocks| {
                blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let is_error = result["isError"]
            .as_bool()
            .unwrap_or_else(|| panic!("isError missing from {result}"));
        let denied = result["_meta"]["denied"].as_str().map(str::to_owned);
        ToolReply {
            raw: result,
            blocks,
            is_error,
            denied,
        }
    }

    /// The first text block.
    pub fn text(&self) -> &str {
        self.blocks.first().map_or("", String::as_str)
    }

    /// The first text block parsed as JSON; panics with the text if it is not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(self.text())
            .unwrap_or_else(|e| panic!("reply is not JSON ({e}): {}", self.text()))
    }
}

/// A command running `program` on database `db`, with no credential from the caller's environment
/// and embeddings pointed at a closed loopback port.
pub fn server_command(program: PathBuf, db: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env("CLAWBOO_DB_PATH", db)
        .env_remove("TAVILY_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env("OLLAMA_HOST", "http://127.0.0.1:9");
    cmd
}

/// A running server binary and the client end of its stdio.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl Server {
    /// Spawns `bin` on the database `db`, with extra environment `env`, without initializing.
    pub fn spawn_raw(bin: &str, db: &Path, env: &[(&str, &str)]) -> Self {
        Self::spawn_command(bin_path(bin), db, env)
    }

    /// Spawns an arbitrary stdio MCP server executable.
    pub fn spawn_command(program: PathBuf, db: &Path, env: &[(&str, &str)]) -> Self {
        Self::spawn_program(program, &[], db, env)
    }

    /// Spawns an arbitrary stdio MCP server executable with arguments.
    pub fn spawn_program(program: PathBuf, args: &[&str], db: &Path, env: &[(&str, &str)]) -> Self {
        let mut cmd = server_command(program, db);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("cannot spawn the server");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            next_id: 1,
        }
    }

    /// Spawns `bin` and completes the `initialize` handshake.
    pub fn spawn(bin: &str, db: &Path, env: &[(&str, &str)]) -> Self {
        let mut server = Self::spawn_raw(bin, db, env);
        server.initialize();
        server
    }

    /// Sends `initialize` and `notifications/initialized`; returns the `initialize` result.
    pub fn initialize(&mut self) -> Value {
        self.initialize_with(json!({}))
    }

    /// [`Server::initialize`] for a client declaring `capabilities` (e.g. `{"elicitation": {}}`).
    pub fn initialize_with(&mut self, capabilities: Value) -> Value {
        let result = self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": capabilities,
                "clientInfo": { "name": "clawboo-tests", "version": VERSION }
            }),
        );
        self.notify("notifications/initialized", json!({}));
        result
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("initialize failed: {result}"))
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes one raw line to the server's stdin.
    pub fn send_line(&mut self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.send_bytes(&bytes);
    }

    /// Writes raw bytes (any bytes, newlines only where given) to the server's stdin.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin already closed");
        stdin.write_all(bytes).expect("write to server");
        stdin.flush().expect("flush to server");
    }

    /// Reads the next message, or `None` if none arrives within `deadline`.
    pub fn read_message_within(&mut self, deadline: Duration) -> Option<Value> {
        let end = Instant::now() + deadline;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.trim().is_empty() => continue,
                Ok(line) => {
                    return Some(serde_json::from_str(&line).unwrap_or_else(|e| {
                        panic!("server wrote a line that is not JSON ({e}): {line}")
                    }));
                }
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => {
                    return None;
                }
            }
        }
    }

    /// Reads the next message; panics after [`REPLY_DEADLINE`].
    pub fn read_message(&mut self) -> Value {
        self.read_message_within(REPLY_DEADLINE)
            .expect("no message from the server before the deadline")
    }

    /// Sends a request without waiting; returns its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.send_line(&msg.to_string());
        id
    }

    /// Reads messages until the response to `id` arrives (notifications and other responses are
    /// skipped).
    pub fn wait_response(&mut self, id: u64) -> Value {
        loop {
            let msg = self.read_message();
            if msg.get("id") == Some(&json!(id)) {
                return msg;
            }
        }
    }

    /// Like [`Server::wait_response`], for an answer that may take longer than
    /// [`REPLY_DEADLINE`]: `None` when it has not arrived within `deadline` (all messages
    /// together).
    pub fn wait_response_within(&mut self, id: u64, deadline: Duration) -> Option<Value> {
        let end = Instant::now() + deadline;
        loop {
            let msg = self.read_message_within(end.saturating_duration_since(Instant::now()))?;
            if msg.get("id") == Some(&json!(id)) {
                return Some(msg);
            }
        }
    }

    /// Reads messages until the responses to every id in `ids` have arrived, and returns them in
    /// the order of `ids` (for pipelined requests, whose answers may come back in any order).
    pub fn wait_responses(&mut self, ids: &[u64]) -> Vec<Value> {
        let mut found: HashMap<u64, Value> = HashMap::new();
        while found.len() < ids.len() {
            let msg = self.read_message();
            if let Some(id) = msg.get("id").and_then(Value::as_u64)
                && ids.contains(&id)
            {
                found.insert(id, msg);
            }
        }
        ids.iter()
            .map(|id| found.remove(id).expect("every id was answered"))
            .collect()
    }

    /// Sends every `(tool, arguments)` call without waiting, then returns their replies in order.
    pub fn call_pipelined(&mut self, calls: &[(&str, Value)]) -> Vec<ToolReply> {
        let ids: Vec<u64> = calls
            .iter()
            .map(|(name, args)| {
                self.send_request("tools/call", json!({ "name": name, "arguments": args }))
            })
            .collect();
        self.wait_responses(&ids)
            .into_iter()
            .map(Self::tool_reply)
            .collect()
    }

    /// Reads messages until the server sends a request (server to client) for `method`; returns
    /// its id and params (other messages are skipped).
    pub fn next_request(&mut self, method: &str) -> (Value, Value) {
        loop {
            let msg = self.read_message();
            if msg["method"] == method && msg.get("id").is_some() {
                return (msg["id"].clone(), msg["params"].clone());
            }
        }
    }

    /// Answers the server's request `id` with `result`.
    pub fn respond(&mut self, id: &Value, result: Value) {
        let msg = json!({ "jsonrpc": "2.0", "id": id, "result": result });
        self.send_line(&msg.to_string());
    }

    /// Sends a request and returns the whole response message (`result` or `error`).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.wait_response(id)
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        let msg = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        self.send_line(&msg.to_string());
    }

    /// `tools/list`: the tool objects.
    pub fn list_tools(&mut self) -> Vec<Value> {
        let response = self.request("tools/list", json!({}));
        response["result"]["tools"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| panic!("tools/list failed: {response}"))
    }

    /// `tools/call`; panics on a JSON-RPC error (use [`Server::request`] to see one).
    pub fn call(&mut self, name: &str, args: Value) -> ToolReply {
        let response = self.request("tools/call", json!({ "name": name, "arguments": args }));
        Self::tool_reply(response)
    }

    /// `tools/call` that must succeed: its JSON payload; panics with the tool's text on a
    /// tool-error (the one "call, assert ok, parse JSON" helper of the tests).
    pub fn ok_json(&mut self, name: &str, args: Value) -> Value {
        let reply = self.call(name, args.clone());
        assert!(!reply.is_error, "{name} {args} failed: {}", reply.text());
        reply.json()
    }

    /// Shapes a `tools/call` response; panics on a JSON-RPC error.
    pub fn tool_reply(response: Value) -> ToolReply {
        let result = response
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("tools/call returned a JSON-RPC error: {response}"));
        ToolReply::from_result(result)
    }

    /// Closes stdin without waiting for the process: the server sees EOF, and what it still
    /// writes can be read.
    pub fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    /// Closes stdin and waits for the process to exit.
    pub fn close(mut self) -> ExitStatus {
        drop(self.stdin.take());
        self.child.wait().expect("wait for the server")
    }

    /// Sends SIGTERM to the process (this client's own child only) and waits for it to exit.
    #[cfg(unix)]
    pub fn terminate(mut self) -> ExitStatus {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let status = self.child.wait().expect("wait for the server");
        drop(self.stdin.take());
        status
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// xorshift64*: a small deterministic generator, so a test that shuffles names a reproducible seed.
/// The one test PRNG of the workspace (core's unit tests, the integration tests and xtask's bench
/// data all use it).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed` (any value, zero included).
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// One of `items` (not empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// Shuffles `items` in place (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

/// The keys of the JSON object `value`, in order (panics on anything else).
pub fn object_keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .map(String::as_str)
        .collect()
}

/// `PRAGMA integrity_check` of the file at `db`, as SQLite words it (`ok` when sound).
pub fn integrity_check(db: &Path) -> String {
    let conn = rusqlite::Connection::open(db).expect("open the database for a check");
    conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity_check runs")
}
