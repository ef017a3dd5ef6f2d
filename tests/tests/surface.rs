//! What every tool tells a client about itself, checked against what it does: its annotations
//! against the table below (and a read-only tool run on a store must leave it exactly as it was),
//! and, for a tool that answers JSON, its `structuredContent` against its `outputSchema`.
//!
//! Each server is driven over stdio as a `2026-07-28` client drives it (no `initialize`, `_meta` on
//! every request), the one protocol version on which every JSON answer, arrays included, is
//! structured; `protocol.rs` checks what older sessions get.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use clawboo_tests::schema::validate;
use clawboo_tests::{Server, TempDir, bin_path, stateless};
use rusqlite::Connection;
use serde_json::{Value, json};

/// The hints, in order: readOnly, destructive, idempotent, openWorld.
type Hints = [bool; 4];
const READ_ONLY: Hints = [true, false, true, false];
const ADDS: Hints = [false, false, false, false];
const ADDS_ONCE: Hints = [false, false, true, false];
const REPLACES: Hints = [false, true, false, false];
const REPLACES_ONCE: Hints = [false, true, true, false];
const REACHES_OUT: Hints = [false, false, false, true];

/// Answers JSON, so lists an `outputSchema` and sends `structuredContent`.
const JSON: bool = true;
const TEXT: bool = false;

/// One tool: server, tool, title, hints, whether it answers JSON.
type Row = (&'static str, &'static str, &'static str, Hints, bool);

/// Every tool of every server.
const TABLE: &[Row] = &[
    ("tasks", "list_tasks", "List tasks", READ_ONLY, JSON),
    ("tasks", "get_task", "Get a task", READ_ONLY, JSON),
    ("tasks", "create_task", "Create a task", ADDS, JSON),
    ("tasks", "create_subtask", "Create a subtask", ADDS, JSON),
    ("tasks", "claim_task", "Claim a task", ADDS, JSON),
    ("tasks", "assign_task", "Assign a task", ADDS, JSON),
    (
        "tasks",
        "release_task",
        "Release a task",
        REPLACES_ONCE,
        TEXT,
    ),
    (
        "tasks",
        "update_task_status",
        "Change a task's status",
        REPLACES_ONCE,
        JSON,
    ),
    ("tasks", "block_task", "Block a task", ADDS_ONCE, JSON),
    ("tasks", "unblock_task", "Unblock a task", ADDS_ONCE, JSON),
    ("tasks", "add_comment", "Comment on a task", ADDS, JSON),
    ("tasks", "link_task", "Link tasks", ADDS_ONCE, TEXT),
    (
        "tasks",
        "renew_task_lease",
        "Renew a task lease",
        ADDS_ONCE,
        JSON,
    ),
    ("memory", "memory_save", "Save a memory", ADDS, JSON),
    (
        "memory",
        "memory_search",
        "Search memories",
        READ_ONLY,
        JSON,
    ),
    (
        "memory",
        "memory_browse",
        "Browse memories",
        READ_ONLY,
        JSON,
    ),
    (
        "teamchat",
        "team_chat_post",
        "Post to the team room",
        ADDS,
        JSON,
    ),
    (
        "teamchat",
        "team_chat_subscribe",
        "Read the team room",
        READ_ONLY,
        JSON,
    ),
    ("clawbrain", "memory_store", "Store a memory", ADDS, JSON),
    (
        "clawbrain",
        "memory_retrieve",
        "Retrieve a memory",
        ADDS,
        JSON,
    ),
    ("clawbrain", "memory_search", "Search memories", ADDS, JSON),
    (
        "clawbrain",
        "memory_update",
        "Update a memory",
        REPLACES_ONCE,
        JSON,
    ),
    (
        "clawbrain",
        "memory_delete",
        "Archive a memory",
        REPLACES_ONCE,
        JSON,
    ),
    (
        "clawbrain",
        "credit_report",
        "Credit report",
        READ_ONLY,
        JSON,
    ),
    (
        "clawbrain",
        "memory_compact",
        "Compact the vault",
        REPLACES,
        JSON,
    ),
    (
        "clawbrain",
        "memory_feedback",
        "Give feedback on memories",
        ADDS,
        JSON,
    ),
    ("tools", "echo", "Echo", ADDS, TEXT),
    ("tools", "note", "Note", ADDS, TEXT),
    ("tools", "web_search", "Web search", REACHES_OUT, TEXT),
    ("tools", "delete_path", "Delete path", REPLACES, TEXT),
];

fn rows(server: &str) -> impl Iterator<Item = &'static Row> {
    TABLE.iter().filter(move |row| row.0 == server)
}

/// The store a server works on, as far as a write would show: a connection that has seen every
/// commit so far (`PRAGMA data_version` moves when another connection commits) and, for
/// ClawBrain, the vault's other files (path, size, modification time).
struct Store {
    db: Connection,
    vault: Option<PathBuf>,
}

impl Store {
    fn open(db: &Path, vault: Option<&Path>) -> Self {
        Self {
            db: Connection::open(db).unwrap(),
            vault: vault.map(Path::to_path_buf),
        }
    }

    fn snapshot(&self) -> (i64, Vec<(PathBuf, u64, std::time::SystemTime)>) {
        let version = self
            .db
            .query_row("PRAGMA data_version", [], |r| r.get(0))
            .unwrap();
        let mut files = Vec::new();
        if let Some(root) = &self.vault {
            collect(root, &mut files);
        }
        files.sort();
        (version, files)
    }
}

fn collect(dir: &Path, out: &mut Vec<(PathBuf, u64, std::time::SystemTime)>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let meta = entry.metadata().unwrap();
        let name = entry.file_name();
        if meta.is_dir() {
            collect(&entry.path(), out);
        } else if !name.to_string_lossy().starts_with("engine.db") {
            // The database is watched through data_version: a reader may touch its -shm file.
            out.push((entry.path(), meta.len(), meta.modified().unwrap()));
        }
    }
}

/// A server driven statelessly, every call checked against the table.
struct Probe {
    server_name: &'static str,
    server: Server,
    store: Store,
    listed: BTreeMap<String, Value>,
    called: BTreeSet<String>,
}

impl Probe {
    /// Lists `server`'s tools (which also waits until it has opened its store) and checks the
    /// listing; then watches the store at `db` (and the vault folder, for ClawBrain).
    fn new(server_name: &'static str, mut server: Server, db: &Path, vault: Option<&Path>) -> Self {
        let response = server.request("tools/list", stateless(json!({})));
        let tools = response["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("tools/list failed: {response}"));
        let listed: BTreeMap<String, Value> = tools
            .iter()
            .map(|t| (t["name"].as_str().unwrap().to_owned(), t.clone()))
            .collect();
        check_listing(server_name, &listed);
        Self {
            server_name,
            server,
            store: Store::open(db, vault),
            listed,
            called: BTreeSet::new(),
        }
    }

    /// Calls `tool`, which must succeed; checks that a read-only tool wrote nothing and that the
    /// structured answer is the text's JSON and fits the schema. The JSON answer, or `Null`.
    fn call(&mut self, tool: &str, args: Value) -> Value {
        let (_, _, _, hints, _) = rows(self.server_name)
            .find(|row| row.1 == tool)
            .unwrap_or_else(|| panic!("{tool} is not in the table"));
        let before = self.store.snapshot();
        let response = self.server.request(
            "tools/call",
            stateless(json!({"name": tool, "arguments": args})),
        );
        let reply = Server::tool_reply(response);
        assert!(!reply.is_error, "{tool} {args}: {}", reply.text());
        if hints[0] {
            assert_eq!(
                self.store.snapshot(),
                before,
                "{tool} is annotated read-only but changed the store"
            );
        }
        let structured = reply.raw.get("structuredContent");
        let answer = match self.listed[tool].get("outputSchema") {
            Some(schema) => {
                let structured =
                    structured.unwrap_or_else(|| panic!("{tool}: no structuredContent"));
                assert_eq!(structured, &reply.json(), "{tool}: structured ≠ text");
                validate(schema, structured)
                    .unwrap_or_else(|e| panic!("{tool}: {e}\nschema {schema}\nvalue {structured}"));
                structured.clone()
            }
            None => {
                assert!(
                    structured.is_none(),
                    "{tool} has no outputSchema: {}",
                    reply.raw
                );
                Value::Null
            }
        };
        self.called.insert(tool.to_owned());
        answer
    }

    /// Every tool of the table was called at least once.
    fn finish(self) {
        let all: BTreeSet<String> = rows(self.server_name).map(|r| r.1.to_owned()).collect();
        assert_eq!(
            self.called, all,
            "{}: tools left uncalled",
            self.server_name
        );
        let _ = self.server.close();
    }
}

/// The listed tools are the table's, each with the table's title, hints and output schema.
fn check_listing(server: &str, listed: &BTreeMap<String, Value>) {
    let names: BTreeSet<&str> = listed.keys().map(String::as_str).collect();
    let expected: BTreeSet<&str> = rows(server).map(|r| r.1).collect();
    assert_eq!(names, expected, "{server}: listed tools ≠ table");
    for (_, tool, title, [read_only, destructive, idempotent, open_world], json) in rows(server) {
        let listing = &listed[*tool];
        assert_eq!(
            listing["annotations"],
            json!({"title": title, "readOnlyHint": read_only, "destructiveHint": destructive,
                   "idempotentHint": idempotent, "openWorldHint": open_world}),
            "{server}/{tool}"
        );
        assert_eq!(listing["title"], *title, "{server}/{tool}");
        let schema = listing.get("outputSchema");
        assert_eq!(schema.is_some(), *json, "{server}/{tool}: outputSchema");
    }
}

fn spawn_raw(bin: &str, dir: &TempDir, env: &[(&str, &str)]) -> Server {
    Server::spawn_raw(bin, &dir.db_path(), env)
}

#[test]
fn tasks_tools_say_what_they_do_and_answer_in_their_schema() {
    let dir = TempDir::new("surface-tasks");
    let server = spawn_raw("clawboo-mcp-tasks", &dir, &[]);
    let mut probe = Probe::new("tasks", server, &dir.db_path(), None);
    let root = probe.call("create_task", json!({"title": "root", "teamId": "tm1"}));
    let root = root["id"].as_str().unwrap().to_owned();
    let child = probe.call(
        "create_subtask",
        json!({"parentTaskId": root, "title": "child"}),
    );
    let child = child["id"].as_str().unwrap().to_owned();
    let other = probe.call("create_task", json!({"title": "other", "teamId": "tm1"}));
    let other = other["id"].as_str().unwrap().to_owned();
    probe.call(
        "link_task",
        json!({"taskId": other, "dependsOnTaskId": root}),
    );
    probe.call("add_comment", json!({"taskId": root, "body": "on it"}));
    let before_reads = probe.store.snapshot();
    let listed = probe.call("list_tasks", json!({"teamId": "tm1"}));
    assert_eq!(
        listed.as_array().unwrap().len(),
        3,
        "an array answer, structured as one"
    );
    probe.call("list_tasks", json!({"ready": true}));
    let detail = probe.call("get_task", json!({"taskId": child}));
    assert_eq!(detail["ancestors"][0]["id"], root.as_str());
    probe.call(
        "claim_task",
        json!({"taskId": root, "assigneeAgentId": "a1", "leaseSeconds": 600}),
    );
    let renewed = probe.call(
        "renew_task_lease",
        json!({"taskId": root, "assigneeAgentId": "a1"}),
    );
    assert_eq!(renewed["assigneeAgentId"], "a1", "{renewed}");
    assert_ne!(
        probe.store.snapshot(),
        before_reads,
        "the snapshot sees a write"
    );
    probe.call("release_task", json!({"taskId": root}));
    probe.call(
        "assign_task",
        json!({"taskId": root, "assigneeAgentId": "a2"}),
    );
    probe.call("block_task", json!({"taskId": root}));
    probe.call("unblock_task", json!({"taskId": root}));
    probe.call(
        "update_task_status",
        json!({"taskId": other, "status": "cancelled"}),
    );
    probe.finish();
}

#[test]
fn memory_tools_say_what_they_do_and_answer_in_their_schema() {
    let dir = TempDir::new("surface-memory");
    let server = spawn_raw("clawboo-mcp-memory", &dir, &[("CLAWBOO_EMBEDDINGS", "off")]);
    let mut probe = Probe::new("memory", server, &dir.db_path(), None);
    let fact = probe.call(
        "memory_save",
        json!({"title": "tea", "content": "the user drinks green tea", "tags": ["drinks"],
               "scopeTeamId": "tm1"}),
    );
    assert_eq!(fact["saved"], "fact");
    let procedure = probe.call(
        "memory_save",
        json!({"procedureName": "brew", "content": "boil water, steep tea", "scopeTeamId": "tm1"}),
    );
    assert_eq!(procedure["saved"], "procedure");
    let hits = probe.call(
        "memory_search",
        json!({"query": "tea", "scopeTeamId": "tm1"}),
    );
    assert_eq!(hits.as_array().unwrap().len(), 2, "{hits}");
    let degraded = probe.call(
        "memory_search",
        json!({"query": "tea", "mode": "vector", "scopeTeamId": "tm1"}),
    );
    assert!(degraded["note"].is_string(), "{degraded}");
    probe.call("memory_browse", json!({"scopeTeamId": "tm1"}));
    probe.finish();
}

#[test]
fn teamchat_tools_say_what_they_do_and_answer_in_their_schema() {
    let dir = TempDir::new("surface-teamchat");
    let server = spawn_raw("clawboo-mcp-teamchat", &dir, &[]);
    let mut probe = Probe::new("teamchat", server, &dir.db_path(), None);
    for author in ["a1", "a2"] {
        probe.call(
            "team_chat_post",
            json!({"text": format!("hello from {author}"), "authorAgentId": author, "teamId": "tm1"}),
        );
    }
    let read = probe.call(
        "team_chat_subscribe",
        json!({"authorAgentId": "a1", "teamId": "tm1"}),
    );
    assert_eq!(read["posts"].as_array().unwrap().len(), 1, "{read}");
    probe.finish();
}

#[test]
fn clawbrain_tools_say_what_they_do_and_answer_in_their_schema() {
    let dir = TempDir::new("surface-clawbrain");
    let root = dir.path().join("memory");
    std::fs::create_dir_all(&root).unwrap();
    let root_text = root.display().to_string();
    let server = Server::spawn_program(
        bin_path("clawboo-mcp-memory"),
        &["clawbrain"],
        &dir.db_path(),
        &[
            ("MEMORY_DIR", root_text.as_str()),
            ("SESSION_ID", "surface"),
        ],
    );
    let mut probe = Probe::new("clawbrain", server, &root.join("engine.db"), Some(&root));
    let stored = probe.call(
        "memory_store",
        json!({"type": "entity", "category": "people", "name": "alice-chen",
               "content": "Alice drinks green tea.", "tags": ["tea"]}),
    );
    let id = stored["id"].as_str().unwrap().to_owned();
    probe.call(
        "memory_store",
        json!({"type": "episode", "name": "tea-talk", "content": "We talked about tea."}),
    );
    probe.call("memory_retrieve", json!({"id": id}));
    probe.call("memory_search", json!({"query": "tea"}));
    probe.call("memory_feedback", json!({"signal": "task_completed"}));
    probe.call(
        "memory_update",
        json!({"id": id, "content": "Alice drinks oolong tea."}),
    );
    probe.call("credit_report", json!({}));
    probe.call("memory_compact", json!({}));
    probe.call("memory_delete", json!({"id": id}));
    probe.finish();
}

/// The tools server's annotations come from the broker's risk levels (`servers/risk.rs`); the
/// calls themselves (audited, some waiting for a person) are the `tools` tests'.
#[test]
fn tools_server_tools_say_what_their_broker_risk_says() {
    let dir = TempDir::new("surface-tools");
    let server = spawn_raw(
        "clawboo-mcp-tools",
        &dir,
        &[("TAVILY_API_KEY", "tvly-surfacefakefakefake0123")],
    );
    let probe = Probe::new("tools", server, &dir.db_path(), None);
    let _ = probe.server.close();
}
