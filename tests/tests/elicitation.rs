//! Approval where the person already is: a client that declares the `elicitation` capability is
//! asked about a brokered call that waits for approval, beside the queue (CLI, REST, pages). The
//! first decision wins, by the same guarded update the queue uses, and the approval row and the
//! call's `after` audit row say where it came from. A client without the capability gets the queue
//! alone.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use clawboo_tests::{Server, TempDir, bin_path, stateless};
use serde_json::{Value, json};

const BIN: &str = "clawboo-mcp-tools";
const FAST_POLL: (&str, &str) = ("CLAWBOO_TOOL_APPROVAL_POLL_MS", "20");
const LONG_WAIT: (&str, &str) = ("CLAWBOO_TOOL_APPROVAL_TIMEOUT_MS", "60000");

/// A tools server whose client declared `elicitation` (form mode, as `{}` means).
fn asking_server(db: &Path) -> Server {
    let mut server = Server::spawn_raw(BIN, db, &[FAST_POLL, LONG_WAIT]);
    server.initialize_with(json!({"elicitation": {}}));
    server
}

/// Starts a `delete_path` call (which needs approval); returns its request id.
fn delete_call(server: &mut Server) -> u64 {
    server.send_request(
        "tools/call",
        json!({"name": "delete_path", "arguments": {"path": "/srv/data"}}),
    )
}

/// Runs `clawboo-mcp-tools <args>` on `db`; its stdout.
fn operator(db: &Path, args: &[&str]) -> String {
    let output = Command::new(bin_path(BIN))
        .args(args)
        .env("CLAWBOO_DB_PATH", db)
        .output()
        .expect("run the operator command");
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The one approval row: its status and where its decision came from.
fn approval(db: &Path) -> (String, Option<String>) {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row(
        "SELECT status, decided_via FROM tool_call_approvals",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap()
}

/// The `delete_path` audit rows as the operator lists them, newest first.
fn audit(db: &Path) -> Vec<Value> {
    let out = operator(db, &["audit", "--tool", "delete_path", "--json"]);
    let parsed: Value = serde_json::from_str(&out).unwrap();
    parsed["audit"].as_array().cloned().unwrap_or_default()
}

/// The call's `after` row: its decision, summary, error flag and where the decision came from.
type After = (Option<String>, String, i64, Option<String>);

fn after_row(db: &Path) -> After {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row(
        "SELECT decision, result_summary, is_error, decided_via FROM tool_call_audit
         WHERE phase = 'after'",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )
    .unwrap()
}

#[test]
fn an_accepted_question_releases_the_call_and_the_audit_says_elicitation() {
    let dir = TempDir::new("elicit-accept");
    let db = dir.db_path();
    let mut server = asking_server(&db);
    let call = delete_call(&mut server);
    let (id, params) = server.next_request("elicitation/create");
    assert_eq!(params["mode"], "form", "{params}");
    let message = params["message"].as_str().unwrap();
    assert!(
        message.contains("delete_path") && message.contains("/srv/data"),
        "{message}"
    );
    let schema = &params["requestedSchema"];
    assert_eq!(schema["required"], json!(["decision"]), "{schema}");
    let offered: Vec<&str> = schema["properties"]["decision"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["const"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["allow_once", "allow_always", "deny"]);
    server.respond(
        &id,
        json!({"action": "accept", "content": {"decision": "allow_once"}}),
    );
    let reply = Server::tool_reply(server.wait_response(call));
    assert!(!reply.is_error, "{}", reply.text());
    assert_eq!(
        approval(&db),
        ("allow_once".into(), Some("elicitation".into()))
    );
    let rows = audit(&db);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[1]["decision"], "require_approval");
    let (decision, _, is_error, via) = after_row(&db);
    assert_eq!(
        (decision, is_error, via.as_deref()),
        (None, 0, Some("elicitation"))
    );
    let _ = server.close();
}

#[test]
fn a_declined_question_denies_the_call() {
    let dir = TempDir::new("elicit-decline");
    let db = dir.db_path();
    let mut server = asking_server(&db);
    let call = delete_call(&mut server);
    let (id, _) = server.next_request("elicitation/create");
    server.respond(&id, json!({"action": "decline"}));
    let reply = Server::tool_reply(server.wait_response(call));
    assert!(reply.is_error);
    assert_eq!(reply.denied.as_deref(), Some("approval:deny"));
    assert_eq!(approval(&db), ("deny".into(), Some("elicitation".into())));
    assert_eq!(
        after_row(&db),
        (
            Some("deny".into()),
            "approval deny: refused by a person (via elicitation)".into(),
            1,
            Some("elicitation".into())
        )
    );
    let _ = server.close();
}

#[test]
fn a_client_without_elicitation_gets_the_queue_alone() {
    let dir = TempDir::new("elicit-none");
    let db = dir.db_path();
    let mut server = Server::spawn(BIN, &db, &[FAST_POLL, LONG_WAIT]);
    let call = delete_call(&mut server);
    let id = loop {
        let out = operator(&db, &["approvals", "--json"]);
        let parsed: Value = serde_json::from_str(&out).unwrap();
        if let Some(id) = parsed["approvals"][0]["id"].as_str() {
            break id.to_owned();
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    operator(&db, &["approve", &id]);
    // Nothing but the call's answer reaches the client: no question was put to it.
    let answer = server.read_message();
    assert_eq!(answer["id"], json!(call), "{answer}");
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(approval(&db), ("allow_once".into(), Some("cli".into())));
    assert_eq!(after_row(&db).3.as_deref(), Some("cli"));
    let _ = server.close();
}

#[test]
fn the_queue_deciding_first_withdraws_the_question_and_a_late_answer_changes_nothing() {
    let dir = TempDir::new("elicit-late");
    let db = dir.db_path();
    let mut server = asking_server(&db);
    let call = delete_call(&mut server);
    let (question, _) = server.next_request("elicitation/create");
    let id = {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.query_row("SELECT id FROM tool_call_approvals", [], |r| {
            r.get::<_, String>(0)
        })
        .unwrap()
    };
    operator(&db, &["deny", &id]);
    let mut withdrawn = false;
    let reply = loop {
        let msg = server.read_message();
        if msg["method"] == "notifications/cancelled" {
            withdrawn |= msg["params"]["requestId"] == question;
        } else if msg["id"] == json!(call) {
            break Server::tool_reply(msg);
        }
    };
    assert_eq!(reply.denied.as_deref(), Some("approval:deny"));
    // The answer arrives after the queue decided: it changes nothing.
    server.respond(
        &question,
        json!({"action": "accept", "content": {"decision": "allow_always"}}),
    );
    // Read every message up to the pong: the withdrawal, sent by its own task, may come first.
    let ping = server.send_request("ping", json!({}));
    let pong = loop {
        let msg = server.read_message();
        if msg["id"] == json!(ping) {
            break msg;
        }
        withdrawn |= msg["method"] == "notifications/cancelled";
    };
    assert!(pong.get("result").is_some(), "{pong}");
    // Or after it: wait for it (bounded), however busy the machine.
    while !withdrawn {
        let Some(msg) = server.read_message_within(Duration::from_secs(10)) else {
            break;
        };
        withdrawn |= msg["method"] == "notifications/cancelled";
    }
    assert!(withdrawn, "the question was not withdrawn at the client");
    assert_eq!(approval(&db), ("deny".into(), Some("cli".into())));
    let rows = audit(&db);
    assert_eq!(rows.len(), 2, "one before and one after row: {rows:?}");
    assert_eq!(after_row(&db).3.as_deref(), Some("cli"));
    let _ = server.close();
}

/// `2026-07-28` forbids server-to-client requests (a stateless request has no channel back): a
/// stateless call declaring elicitation in its `_meta` gets the queue alone.
#[test]
fn a_stateless_call_is_never_asked_in_the_client() {
    let dir = TempDir::new("elicit-stateless");
    let db = dir.db_path();
    let mut server = Server::spawn_raw(BIN, &db, &[FAST_POLL, LONG_WAIT]);
    let mut params = stateless(json!({"name": "delete_path", "arguments": {"path": "/srv/data"}}));
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {}});
    let call = server.send_request("tools/call", params);
    let id = loop {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let pending: Option<String> = conn
            .query_row("SELECT id FROM tool_call_approvals", [], |r| r.get(0))
            .ok();
        if let Some(id) = pending {
            break id;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    operator(&db, &["deny", &id]);
    let answer = server.read_message();
    assert_eq!(
        answer["id"],
        json!(call),
        "no question, only the answer: {answer}"
    );
    assert_eq!(approval(&db), ("deny".into(), Some("cli".into())));
    let _ = server.close();
}
