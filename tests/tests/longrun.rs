//! A host left running for months (issue 24): named tokens and who the store says acted, the
//! host's limits against hostile clients, graceful shutdown, backups, retention and `doctor`,
//! driven through the real bins over loopback.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
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
    bin_with(bin, args, db, &[])
}

/// `bin args` on `db` with extra environment `env`, no token from the caller's environment.
fn bin_with(bin: &str, args: &[&str], db: &Path, env: &[(&str, &str)]) -> std::process::Output {
    clawboo_tests::server_command(bin_path(bin), db)
        .args(args)
        .env_remove("CLAWBOO_HTTP_TOKEN")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
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

const TEAMCHAT: &str = "clawboo-mcp-teamchat";
/// The manual clock of the retention tests: rows are written at `OLD`, compaction runs at `NOW`.
const OLD: i64 = 1_700_000_000_000;
const NOW: i64 = OLD + 40 * 86_400_000;

/// A teamchat process bound to `team` as `agent`, its clock starting at `at`.
fn poster(db: &Path, team: &str, agent: &str, at: i64) -> Server {
    Server::spawn(
        TEAMCHAT,
        db,
        &[
            ("CLAWBOO_ROOM_TEAM_ID", team),
            ("CLAWBOO_AUTHOR_AGENT_ID", agent),
            ("CLAWBOO_TEST_CLOCK_MS", &at.to_string()),
        ],
    )
}

/// Posts `text` and returns the stored post.
fn post(server: &mut Server, text: &str) -> serde_json::Value {
    let reply = server.call("team_chat_post", json!({ "text": text }));
    assert!(!reply.is_error, "{}", reply.text());
    reply.json()["posted"].clone()
}

fn count(db: &Path, sql: &str) -> i64 {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row(sql, [], |r| r.get(0))
        .unwrap()
}

#[test]
fn compact_removes_old_rows_in_batches_keeps_young_ones_pending_approvals_and_each_rooms_top_seq() {
    let dir = TempDir::new("longrun-compact");
    let db = dir.db_path();
    let mut old = poster(&db, "old", "a", OLD);
    for text in ["one", "two", "three"] {
        post(&mut old, text);
    }
    drop(old);
    let mut live = poster(&db, "live", "a", OLD);
    post(&mut live, "old one");
    post(&mut live, "old two");
    drop(live);
    post(&mut poster(&db, "live", "a", NOW), "young");
    // Audit rows and approvals as the reference's writers leave them, 2,000 of them old.
    let conn = rusqlite::Connection::open(&db).unwrap();
    for i in 0..2_005 {
        let at = if i < 2_000 { OLD } else { NOW };
        conn.execute(
            "INSERT INTO tool_call_audit (id, tool_name, phase, created_at) VALUES (?1, 'echo', 'before', ?2)",
            rusqlite::params![format!("audit-{i}"), at],
        )
        .unwrap();
    }
    for (id, status, at) in [
        ("pending-old", "pending", OLD),
        ("denied-old", "deny", OLD),
        ("granted-old", "allow_always", OLD),
        ("expired-young", "expired", NOW),
    ] {
        conn.execute(
            "INSERT INTO tool_call_approvals (id, tool_name, agent_id, status, created_at, expires_at, resolved_at)
             VALUES (?1, 'delete_path', 'a', ?2, ?3, ?3 + 60000, CASE WHEN ?2 = 'pending' THEN NULL ELSE ?3 END)",
            rusqlite::params![id, status, at],
        )
        .unwrap();
    }
    drop(conn);
    let clock = NOW.to_string();
    let env = [
        ("CLAWBOO_TEST_CLOCK_MS", clock.as_str()),
        ("CLAWBOO_RETAIN_AUDIT_DAYS", "30"),
        ("CLAWBOO_RETAIN_POSTS_DAYS", "30"),
    ];

    let dry = bin_with(TOOLS, &["compact", "--dry-run", "--json"], &db, &env);
    assert_eq!(dry.status.code(), Some(0), "{dry:?}");
    let dry: serde_json::Value = serde_json::from_slice(&dry.stdout).unwrap();
    assert_eq!(dry["retention"]["dryRun"], true);
    let would: Vec<(String, u64)> = dry["retention"]["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["kind"].as_str().unwrap().to_owned(),
                k["rows"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        would,
        [("audit".to_owned(), 2_000), ("posts".to_owned(), 4)]
    );
    assert_eq!(dry["vacuumed"], false);
    assert!(
        dry["indexMergeSteps"].is_null(),
        "a dry run merges nothing: {dry}"
    );
    assert_eq!(count(&db, "SELECT count(*) FROM tool_call_audit"), 2_005);
    assert_eq!(count(&db, "SELECT count(*) FROM team_chat"), 6);

    // The flag adds approvals to what the environment asks for.
    let done = bin_with(
        TOOLS,
        &["compact", "--approvals-days", "30", "--json"],
        &db,
        &env,
    );
    assert_eq!(done.status.code(), Some(0), "{done:?}");
    let done: serde_json::Value = serde_json::from_slice(&done.stdout).unwrap();
    let kinds = done["retention"]["kinds"].as_array().unwrap().clone();
    assert_eq!(kinds.len(), 3, "{done}");
    assert_eq!(
        (kinds[0]["rows"].as_u64(), kinds[0]["batches"].as_u64()),
        (Some(2_000), Some(4)),
        "2,000 rows at most 500 per transaction: {done}"
    );
    assert_eq!(kinds[1]["rows"], 4);
    assert_eq!(kinds[2]["rows"], 1);
    assert_eq!(done["vacuumed"], true);
    assert!(done["indexMergeSteps"].is_u64(), "{done}");
    assert!(done["sizeBefore"]["file"].as_u64().unwrap() > 0);
    assert!(done["sizeAfter"]["file"].as_u64().unwrap() > 0);
    assert_eq!(done["sizeAfter"]["wal"], 0, "{done}");

    assert_eq!(count(&db, "SELECT count(*) FROM tool_call_audit"), 5);
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM team_chat WHERE room_id = 'team:old'"
        ),
        1
    );
    assert_eq!(
        count(
            &db,
            "SELECT max(seq) FROM team_chat WHERE room_id = 'team:old'"
        ),
        3
    );
    let kept: Vec<String> = rusqlite::Connection::open(&db)
        .unwrap()
        .prepare("SELECT id FROM tool_call_approvals ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(kept, ["expired-young", "granted-old", "pending-old"]);
    // The room's seq goes on from where it was, so a reader's cursor still sees the new post.
    let mut old = poster(&db, "old", "b", NOW);
    assert_eq!(post(&mut old, "after the purge")["seq"], 4);
    let mut reader = poster(&db, "old", "c", NOW);
    let seen = reader
        .call("team_chat_subscribe", json!({ "sinceSeq": 3 }))
        .json();
    assert_eq!(seen["posts"][0]["seq"], 4, "{seen}");
    assert_eq!(seen["nextSeq"], 4, "{seen}");
    drop(old);

    let text = bin_with(TOOLS, &["compact"], &db, &env);
    assert_eq!(text.status.code(), Some(0));
    let text = stdout(&text);
    assert!(
        text.contains(
            "retention: removed 0 audit rows (older than 30 days, 0 batches), 1 team-room posts"
        ),
        "{text}"
    );
    assert!(text.contains("space: VACUUM done, WAL truncated"), "{text}");
    assert!(text.contains(" bytes before (file "), "{text}");
}

#[test]
fn a_host_with_retention_purges_old_audit_rows_at_start_and_says_so() {
    let dir = TempDir::new("longrun-host-retention");
    let db = doctored(&dir);
    let conn = rusqlite::Connection::open(&db).unwrap();
    for (i, at) in [OLD, OLD, NOW].into_iter().enumerate() {
        conn.execute(
            "INSERT INTO tool_call_audit (id, tool_name, phase, created_at) VALUES (?1, 'echo', 'before', ?2)",
            rusqlite::params![format!("audit-{i}"), at],
        )
        .unwrap();
    }
    drop(conn);
    let clock = NOW.to_string();
    let _host = Host::start(
        "clawboo-mcp-tasks",
        &["--retain-audit-days", "30"],
        &db,
        &[("CLAWBOO_TEST_CLOCK_MS", clock.as_str())],
    );
    let purged = poll_until(Duration::from_secs(30), || {
        (count(&db, "SELECT count(*) FROM tool_call_audit") == 1).then_some(())
    });
    assert!(purged.is_some(), "the host did not purge at start");
}

#[test]
fn a_backup_taken_during_a_write_storm_holds_every_write_acknowledged_before_it() {
    const WRITERS: usize = 3;
    let dir = TempDir::new("longrun-storm");
    let db = dir.db_path();
    // The first use of a bin builds the bins: before the writers are timed.
    bin_path(TEAMCHAT);
    // A post is acknowledged with its seq, unique in its room.
    let acknowledged = Arc::new(Mutex::new(Vec::<i64>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (db, acknowledged, stop) =
                (db.clone(), Arc::clone(&acknowledged), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut server = Server::spawn(
                    TEAMCHAT,
                    &db,
                    &[
                        ("CLAWBOO_ROOM_TEAM_ID", "storm"),
                        ("CLAWBOO_AUTHOR_AGENT_ID", &format!("w{w}")),
                    ],
                );
                let mut i = 0;
                while !stop.load(Ordering::SeqCst) {
                    let posted = post(&mut server, &format!("w{w} #{i}"));
                    acknowledged
                        .lock()
                        .unwrap()
                        .push(posted["seq"].as_i64().unwrap());
                    i += 1;
                }
            })
        })
        .collect();
    let acked = |n: usize| {
        poll_until(Duration::from_secs(60), || {
            (acknowledged.lock().unwrap().len() >= n).then_some(())
        })
        .expect("the writers stalled");
    };
    acked(60);
    let before: Vec<i64> = acknowledged.lock().unwrap().clone();
    let copy = dir.path().join("storm-copy.db");
    let backup = bin(
        "clawboo-mcp-tasks",
        &["backup", copy.to_str().unwrap()],
        &db,
    );
    assert_eq!(backup.status.code(), Some(0), "{backup:?}");
    // The writers kept going while the copy was made and go on after it.
    acked(before.len() + 60);
    stop.store(true, Ordering::SeqCst);
    for writer in writers {
        writer.join().expect("a writer failed");
    }
    let check = bin("clawboo-mcp-tasks", &["check", copy.to_str().unwrap()], &db);
    assert_eq!(check.status.code(), Some(0), "{check:?}");
    let report = stdout(&check);
    assert!(report.contains("integrity: ok"), "{report}");
    for component in ["board", "memory", "broker", "teamchat"] {
        assert!(
            report.contains(&format!("  {component} ")) && !report.contains("newer than"),
            "{report}"
        );
    }
    assert!(report.contains("(current)"), "{report}");
    let conn = rusqlite::Connection::open(&copy).unwrap();
    let in_copy: std::collections::HashSet<i64> = conn
        .prepare("SELECT seq FROM team_chat WHERE room_id = 'team:storm'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let missing: Vec<&i64> = before.iter().filter(|id| !in_copy.contains(*id)).collect();
    assert!(
        missing.is_empty(),
        "{} acknowledged writes missing from the copy: {missing:?}",
        missing.len()
    );
    let total = acknowledged.lock().unwrap().len();
    assert!(
        in_copy.len() < total,
        "the copy is a point in time, not the end: {} of {total}",
        in_copy.len()
    );
}

/// A file the servers have opened (schema made), and the doctor's environment.
fn doctored(dir: &TempDir) -> PathBuf {
    let db = dir.db_path();
    drop(Server::spawn("clawboo-mcp-tasks", &db, &[]));
    db
}

#[test]
fn doctor_on_a_healthy_file_passes_every_check() {
    let dir = TempDir::new("longrun-doctor");
    let db = doctored(&dir);
    let out = bin_with(TOOLS, &["doctor"], &db, &[("CLAWBOO_EMBEDDINGS", "off")]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    for line in [
        "ok    database: ",
        "ok    size: ",
        "ok    integrity: ok (PRAGMA integrity_check)",
        "ok    schema: board ",
        "ok    retention: off",
        "ok    binding key: ",
        "ok    embeddings: off (CLAWBOO_EMBEDDINGS=off)",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(line)),
            "{line:?} in {text}"
        );
    }
    assert!(text.ends_with("all checks passed\n"), "{text}");
    let json = bin_with(
        TOOLS,
        &["doctor", "--json"],
        &db,
        &[("CLAWBOO_EMBEDDINGS", "off")],
    );
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json["ok"], true, "{json}");
    assert!(json["sizes"]["file"].as_u64().unwrap() > 0);

    let missing = bin_with(
        TOOLS,
        &["doctor"],
        &dir.path().join("none.db"),
        &[("CLAWBOO_EMBEDDINGS", "off")],
    );
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stdout(&missing).contains("does not exist"),
        "{}",
        stdout(&missing)
    );
    assert!(
        !dir.path().join("none.db").exists(),
        "doctor creates nothing"
    );
}

#[test]
fn doctor_warns_of_a_tokens_file_others_may_read_and_of_an_embedding_provider_that_is_down() {
    let dir = TempDir::new("longrun-doctor-mode");
    let db = doctored(&dir);
    let file = tokens_file(&dir, 0o644);
    // The test command points Ollama at a closed loopback port.
    let out = bin(
        TOOLS,
        &["doctor", "--tokens-file", file.to_str().unwrap()],
        &db,
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!(
            "WARN  tokens file: {} has mode 644: group or others may read it",
            file.display()
        )),
        "{text}"
    );
    assert!(text.contains("WARN  embeddings: none"), "{text}");
    assert!(text.ends_with("2 checks need attention\n"), "{text}");
    assert!(
        !text.contains("fake-") && !String::from_utf8_lossy(&out.stderr).contains("fake-"),
        "{text}"
    );
    set_mode(&file, 0o600);
    let out = bin_with(
        TOOLS,
        &["doctor", "--tokens-file", file.to_str().unwrap()],
        &db,
        &[("CLAWBOO_EMBEDDINGS", "off")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("ok    tokens file: "),
        "{}",
        stdout(&out)
    );
}

#[test]
fn doctor_shows_a_live_hosts_sessions_and_never_the_token() {
    let dir = TempDir::new("longrun-doctor-host");
    let db = doctored(&dir);
    let mut host = host_as(&dir, ALICE, &[]);
    let session = host.session("/api/mcp/tools");
    let url = format!("http://{}", host.addr);
    let env = [("CLAWBOO_EMBEDDINGS", "off"), ("CLAWBOO_HTTP_TOKEN", ALICE)];
    let out = bin_with(TOOLS, &["doctor", "--host", &url], &db, &env);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("ok    host: "))
        .expect(&text);
    assert!(
        line.contains(&format!("{url} answers; live sessions: ")),
        "{line}"
    );
    assert!(line.contains("tools 1"), "{line}");
    let json = bin_with(TOOLS, &["doctor", "--host", &url, "--json"], &db, &env);
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json["sessions"]["tools"], 1, "{json}");
    drop(session);
    // A wrong token: the check fails, and neither token is shown.
    let wrong = "fake-wrong-token-0123456789abcdef";
    let out = bin_with(
        TOOLS,
        &["doctor", "--host", &url, "--token", wrong],
        &db,
        &env,
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAIL  host: ") && text.contains("401"),
        "{text}"
    );
    for shown in [text.as_str(), &String::from_utf8_lossy(&out.stderr)] {
        assert!(!shown.contains("fake-"), "{shown}");
    }
    host.token = None;
}
