//! A host left running for months (issue 24): named tokens and who the store says acted, the
//! host's limits against hostile clients, graceful shutdown, backups, retention and `doctor`,
//! driven through the real bins over loopback.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use clawboo_tests::http::{Host, poll_until};
use clawboo_tests::{Server, TempDir, bin_path};
use serde_json::json;

const TOOLS: &str = "clawboo-mcp-tools";
const ALICE: &str = "fake-alice-token-0123456789abcdef";
const CI: &str = "fake-ci-token-0123456789abcdefghij";

/// A tokens file in `dir` with alice's and ci's tokens, at `mode`.
fn tokens_file(dir: &TempDir, mode: u32) -> PathBuf {
    let path = dir.path().join("tokens");
    std::fs::write(&path, format!("# fake tokens\nalice:{ALICE}\nci:{CI}\n")).unwrap();
    set_mode(&path, mode);
    path
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[cfg(not(unix))]
fn set_mode(_: &Path, _: u32) {}

fn host_as(dir: &TempDir, token: &str, extra: &[&str]) -> Host {
    let file = tokens_file(dir, 0o600);
    let mut args = vec!["--all", "--tokens-file", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    let mut host = Host::start(TOOLS, &args, &dir.db_path(), &[]);
    host.token = Some(token.to_owned());
    host
}

fn bin(bin: &str, args: &[&str], db: &Path) -> std::process::Output {
    clawboo_tests::server_command(bin_path(bin), db)
        .args(args)
        .env_remove("CLAWBOO_HTTP_TOKEN")
        .output()
        .unwrap()
}

#[test]
fn a_named_token_reaches_the_audit_row_and_the_approval_it_resolves() {
    let dir = TempDir::new("longrun-names");
    let mut host = host_as(&dir, ALICE, &[]);
    let mut session = host.session("/api/mcp/tools");
    let reply = session.call("echo", json!({"message": "hi"}));
    assert!(!reply.is_error, "{}", reply.text());
    drop(session);
    let audit = host.get("/api/tools/audit?toolName=echo");
    assert_eq!(audit.status, 200, "{}", audit.body);
    let rows = audit.json()["audit"].as_array().cloned().unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(rows.iter().all(|r| r["caller"] == "alice"), "{rows:?}");

    // A call waiting in a stdio process (no token: no caller) is resolved over REST by ci.
    let mut stdio = Server::spawn(
        TOOLS,
        &dir.db_path(),
        &[
            ("CLAWBOO_TOOL_APPROVAL_TIMEOUT_MS", "120000"),
            ("CLAWBOO_TOOL_APPROVAL_POLL_MS", "20"),
        ],
    );
    let call = stdio.send_request(
        "tools/call",
        json!({"name": "delete_path", "arguments": {"path": "/tmp/x"}}),
    );
    host.token = Some(CI.to_owned());
    let row = poll_until(Duration::from_secs(60), || {
        host.get("/api/tools/approvals").json()["approvals"]
            .as_array()
            .and_then(|a| a.first().cloned())
    })
    .expect("no approval appeared");
    assert!(row.get("caller").is_none(), "{row}");
    let id = row["id"].as_str().unwrap();
    let resolved = host.post_json(
        &format!("/api/tools/approvals/{id}/resolve"),
        &json!({"decision": "deny"}),
    );
    assert_eq!(resolved.json()["approval"]["resolvedBy"], "ci");
    let reply = Server::tool_reply(stdio.wait_response(call));
    assert_eq!(reply.denied.as_deref(), Some("approval:deny"));
}

#[test]
fn a_wrong_token_a_prefix_and_a_longer_token_are_refused() {
    let dir = TempDir::new("longrun-wrong");
    let mut host = host_as(&dir, ALICE, &[]);
    assert_eq!(host.get("/api/tools").status, 200);
    for wrong in [
        "fake-alice-token-0123456789abcde",
        "fake-alice-token-0123456789abcdefX",
        "fake",
        "",
        "fake-alice-token-0123456789abcdeg",
    ] {
        host.token = Some(wrong.to_owned());
        let reply = host.get("/api/tools");
        assert_eq!(reply.status, 401, "{wrong:?}: {}", reply.body);
        assert!(!reply.body.contains("fake-"), "{}", reply.body);
    }
    host.token = Some(CI.to_owned());
    let health = host.get("/api/health");
    assert_eq!(health.status, 200);
    assert!(!health.body.contains("fake-"), "{}", health.body);
}

#[test]
fn a_tokens_file_others_may_read_is_refused_at_start() {
    let dir = TempDir::new("longrun-mode");
    let file = tokens_file(&dir, 0o644);
    let out = bin(
        TOOLS,
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--tokens-file",
            file.to_str().unwrap(),
        ],
        &dir.db_path(),
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("has mode 644: others may read it"),
        "{stderr}"
    );
    assert!(!stderr.contains("fake-"), "{stderr}");
}

#[test]
fn token_new_prints_a_line_for_the_tokens_file() {
    let dir = TempDir::new("longrun-token-new");
    let out = bin(
        "clawboo-mcp-tasks",
        &["token", "new", "alice"],
        &dir.db_path(),
    );
    assert_eq!(out.status.code(), Some(0));
    let line = String::from_utf8(out.stdout).unwrap();
    let (name, secret) = line.trim().split_once(':').unwrap();
    assert_eq!(name, "alice");
    assert_eq!(secret.len(), 43);
    let missing = bin("clawboo-mcp-tasks", &["token", "new"], &dir.db_path());
    assert_eq!(missing.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&missing.stderr).trim(),
        "clawboo-mcp-tasks: token new: NAME is required; run `clawboo-mcp-tasks token new --help` for usage"
    );
}

fn plain_host(dir: &TempDir, bin_name: &str, extra: &[&str]) -> Host {
    Host::start(bin_name, extra, &dir.db_path(), &[])
}

#[test]
fn a_client_sending_one_header_byte_a_second_is_closed_at_the_deadline_while_others_are_served() {
    let dir = TempDir::new("longrun-slowloris");
    let host = plain_host(&dir, "clawboo-mcp-tasks", &["--request-timeout", "3"]);
    let mut slow = TcpStream::connect(&host.addr).unwrap();
    let started = Instant::now();
    let head = format!(
        "GET /api/health HTTP/1.1\r\nHost: {}\r\nX-Slow: ",
        host.addr
    );
    let mut closed_after = None;
    for byte in head.bytes().chain(std::iter::repeat(b'a')).take(20) {
        if slow.write_all(&[byte]).is_err() {
            closed_after = Some(started.elapsed());
            break;
        }
        // Others are served while it dribbles.
        assert_eq!(host.get("/api/health").status, 200);
        std::thread::sleep(Duration::from_secs(1));
        slow.set_read_timeout(Some(Duration::from_millis(10)))
            .unwrap();
        let mut buf = [0u8; 64];
        if matches!(slow.read(&mut buf), Ok(0)) {
            closed_after = Some(started.elapsed());
            break;
        }
    }
    let closed_after = closed_after.expect("the slow connection was never closed");
    assert!(
        closed_after >= Duration::from_secs(3) && closed_after < Duration::from_secs(8),
        "{closed_after:?}"
    );
}

#[test]
fn a_connection_over_the_cap_gets_503_not_a_hang() {
    let dir = TempDir::new("longrun-cap");
    let host = plain_host(&dir, "clawboo-mcp-tasks", &["--max-connections", "2"]);
    let held: Vec<TcpStream> = (0..2)
        .map(|_| TcpStream::connect(&host.addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let reply = host.get("/api/health");
    assert_eq!(reply.status, 503, "{}", reply.body);
    assert_eq!(reply.header("connection"), Some("close"));
    assert!(
        reply.body.contains("too many connections"),
        "{}",
        reply.body
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    drop(held);
    let served = poll_until(Duration::from_secs(10), || {
        (host.get("/api/health").status == 200).then_some(())
    });
    assert!(served.is_some(), "a freed slot was not reused");
}

#[test]
fn a_token_over_its_rate_gets_429_with_retry_after() {
    let dir = TempDir::new("longrun-rate");
    let mut host = host_as(&dir, ALICE, &["--rate-limit", "1"]);
    let statuses: Vec<u16> = (0..3).map(|_| host.get("/api/tools").status).collect();
    assert_eq!(statuses, [200, 200, 429]);
    let limited = host.get("/api/tools");
    assert_eq!(limited.header("retry-after"), Some("1"));
    assert!(limited.body.contains("rate limit"), "{}", limited.body);
    // Another token has its own bucket; health is not counted.
    host.token = Some(CI.to_owned());
    assert_eq!(host.get("/api/tools").status, 200);
    host.token = Some(ALICE.to_owned());
    assert_eq!(host.get("/api/health").status, 200);
}

fn terminate(pid: u32) {
    let status = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn at_sigterm_a_waiting_approval_expires_its_answer_arrives_and_the_host_exits_within_its_grace() {
    let dir = TempDir::new("longrun-shutdown");
    let host = Host::start(
        TOOLS,
        &["--all", "--shutdown-grace", "4"],
        &dir.db_path(),
        &[("CLAWBOO_TOOL_APPROVAL_TIMEOUT_MS", "120000")],
    );
    let mut tools = host.session("/api/mcp/tools");
    std::thread::scope(|scope| {
        let waiting = scope.spawn(move || tools.call("delete_path", json!({"path": "/tmp/x"})));
        poll_until(Duration::from_secs(30), || {
            let rows = host.get("/api/tools/approvals").json()["approvals"].clone();
            rows.as_array().is_some_and(|a| !a.is_empty()).then_some(())
        })
        .expect("no approval appeared");
        let started = Instant::now();
        terminate(host.pid());
        // The call in flight gets its answer before the host goes: refused, the wait abandoned.
        let answer = waiting.join().expect("the waiting call got no answer");
        assert!(answer.is_error, "{}", answer.text());
        assert_eq!(
            answer.denied.as_deref(),
            Some("approval:abandoned"),
            "{}",
            answer.text()
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    });
    let out = bin(TOOLS, &["approvals", "--json"], &dir.db_path());
    let approvals: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(approvals["approvals"], json!([]), "{approvals}");
    let out = bin(
        TOOLS,
        &["audit", "--tool", "delete_path", "--json"],
        &dir.db_path(),
    );
    let audit: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let after = audit["audit"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["phase"] == "after")
        .cloned()
        .expect("no after row");
    assert_eq!(after["isError"], 1, "{after}");
}
