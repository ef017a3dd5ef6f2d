//! The stdio transport at its limits: a line longer than the 8 MiB limit is answered with an error
//! naming the limit and the session goes on; a stream that never sends a newline does not make the
//! server hold more than the limit.

use clawboo_tests::{Server, TempDir};
use serde_json::{Value, json};

const BIN: &str = "clawboo-mcp-tasks";

/// The limit the servers document (8 MiB).
const LIMIT: usize = 8 * 1024 * 1024;

fn assert_limit_error(reply: &Value, id: Value) {
    assert_eq!(reply["id"], id, "{reply}");
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert_eq!(reply["error"]["data"]["maxLineBytes"], LIMIT, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(&LIMIT.to_string()), "{reply}");
}

#[test]
fn an_over_limit_line_gets_an_error_naming_the_limit_and_the_next_request_is_answered() {
    let dir = TempDir::new("stdio-oversized");
    let mut server = Server::spawn(BIN, &dir.db_path(), &[]);
    let pad = "x".repeat(LIMIT + 1);
    let call = json!({
        "jsonrpc": "2.0",
        "id": 4242,
        "method": "tools/call",
        "params": {"name": "create_task", "arguments": {"title": pad}}
    });
    server.send_line(&call.to_string());
    let reply = server.read_message();
    assert_limit_error(&reply, json!(4242));
    let created = server.call("create_task", json!({"title": "after the big one"}));
    assert!(!created.is_error, "{}", created.text());
    let listed = server.call("list_tasks", json!({}));
    assert_eq!(
        listed.json().as_array().map(Vec::len),
        Some(1),
        "the over-long call did nothing: {}",
        listed.text()
    );
    // Just under the limit is still served.
    let near = "y".repeat(LIMIT - 200);
    let reply = server.request(
        "tools/call",
        json!({"name": "create_task", "arguments": {"title": near}}),
    );
    assert!(
        reply.get("result").is_some(),
        "not a protocol error: {:.300}",
        reply.to_string()
    );
    assert_eq!(server.close().code(), Some(0));
}

/// The peak resident set of process `pid` in KiB (Linux `/proc`).
#[cfg(target_os = "linux")]
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc status")
}

#[cfg(target_os = "linux")]
#[test]
fn a_stream_without_newlines_is_not_buffered_past_the_limit() {
    let dir = TempDir::new("stdio-endless");
    let mut server = Server::spawn(BIN, &dir.db_path(), &[]);
    server.list_tools();
    let before = peak_rss_kib(server.pid());
    let chunk = vec![b'z'; 1024 * 1024];
    server.send_bytes(br#"{"jsonrpc":"2.0","id":"endless","method":"tools/list","params":{"p":""#);
    for _ in 0..LIMIT / chunk.len() + 1 {
        server.send_bytes(&chunk);
    }
    // Answered as soon as the limit is crossed, before the line ends.
    assert_limit_error(&server.read_message(), json!("endless"));
    for _ in 0..64 {
        server.send_bytes(&chunk);
    }
    server.send_bytes(b"\n");
    assert_eq!(
        server.list_tools().len(),
        clawboo_tests::tools_of(clawboo_core::ServerKind::Tasks).len(),
        "the session goes on"
    );
    let grown_mib = peak_rss_kib(server.pid()).saturating_sub(before) / 1024;
    // 72 MiB were sent on one line; the server may hold the limit, not the line.
    assert!(
        grown_mib <= (2 * LIMIT / (1024 * 1024)) as u64,
        "peak memory grew by {grown_mib} MiB"
    );
    assert_eq!(server.close().code(), Some(0));
}
