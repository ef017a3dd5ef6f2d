//! A host left running for months (issue 24): named tokens and who the store says acted, the
//! host's limits against hostile clients, graceful shutdown, backups, retention and `doctor`,
//! driven through the real bins over loopback.

use std::path::{Path, PathBuf};
use std::time::Duration;

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
