//! Leases on claims across processes, on the test clock: each process starts its clock where the
//! test says (`CLAWBOO_TEST_CLOCK_MS`), so "later" is a process started later on the clock. A claim
//! whose holder is killed goes back to `todo` when its lease runs out, exactly once, with one
//! `system` comment, whoever notices; a renewal keeps the task.

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Barrier, mpsc};
use std::time::Duration;

use clawboo_tests::http::Host;
use clawboo_tests::{Server, TempDir};
use serde_json::{Value, json};

const BIN: &str = "clawboo-mcp-tasks";

/// The test clock's start: 2023-11-14T22:13:20Z.
const T0: i64 = 1_700_000_000_000;

/// A tasks process whose clock starts `at` (ms since the epoch, stepping 1 ms per reading).
fn at(db: &Path, at: i64) -> Server {
    Server::spawn(BIN, db, &[("CLAWBOO_TEST_CLOCK_MS", &at.to_string())])
}

fn claim(server: &mut Server, task: &Value, agent: &str, lease: Option<u32>) -> (bool, Value) {
    let mut args = json!({"taskId": task["id"], "assigneeAgentId": agent});
    if let Some(seconds) = lease {
        args["leaseSeconds"] = json!(seconds);
    }
    let reply = server.call("claim_task", args);
    if reply.is_error {
        assert_eq!(reply.text(), "claim failed: conflict");
        (false, Value::Null)
    } else {
        (true, reply.json())
    }
}

/// The `system` comments of `task`, read straight from the file.
fn system_comments(db: &Path, task: &Value) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.prepare(
        "SELECT body FROM task_comments WHERE task_id = ?1 AND author_type = 'system'
         ORDER BY created_at, rowid",
    )
    .unwrap()
    .query_map([task["id"].as_str().unwrap()], |r| r.get(0))
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

/// Kills `server` with SIGKILL (this test's own child, by pid): it gets no chance to release.
fn kill_9(server: Server) {
    let status = Command::new("kill")
        .args(["-KILL", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    drop(server);
}

/// A task titled `title` that agent `gone` claimed at [`T0`] with a 60 s lease, then was killed.
fn abandoned_task(db: &Path, title: &str) -> Value {
    let mut holder = at(db, T0);
    let task = holder.ok_json("create_task", json!({ "title": title }));
    assert!(claim(&mut holder, &task, "gone", Some(60)).0);
    kill_9(holder);
    task
}

#[test]
fn a_killed_claimer_loses_its_task_when_its_lease_runs_out() {
    let dir = TempDir::new("lease-kill");
    let db = dir.db_path();
    let mut first = at(&db, T0);
    let task = first.ok_json("create_task", json!({"title": "port the parser"}));
    let (won, claimed) = claim(&mut first, &task, "agent-1", Some(60));
    assert!(won);
    let expires = claimed["leaseExpiresAt"]
        .as_i64()
        .expect("a leased claim says until when");
    assert!((T0 + 60_000..T0 + 61_000).contains(&expires), "{claimed}");
    kill_9(first);

    // Before the lease runs out, the task is still taken.
    let mut early = at(&db, T0 + 30_000);
    assert!(!claim(&mut early, &task, "agent-2", None).0);
    let still = early.ok_json("get_task", json!({"taskId": task["id"]}));
    assert_eq!(still["task"]["status"], "in_progress");
    assert_eq!(still["task"]["leaseExpiresAt"], expires);
    assert_eq!(early.close().code(), Some(0));

    // After it, another agent claims it; the board says why it changed hands.
    let mut later = at(&db, expires + 1_000);
    let (won, taken) = claim(&mut later, &task, "agent-2", Some(60));
    assert!(won, "the expired task is claimable");
    assert_eq!(taken["assigneeAgentId"], "agent-2");
    assert_eq!(
        system_comments(&db, &task),
        [format!(
            "lease expired: agent-1 held this task until {expires} (ms since the epoch) without renewing it; the task went back to todo"
        )]
    );
    let shown = later.ok_json("get_task", json!({"taskId": task["id"]}));
    assert_eq!(shown["comments"][0]["authorType"], "system");
    assert_eq!(later.close().code(), Some(0));
}

#[test]
fn a_renewal_keeps_the_task_and_a_late_one_is_told_it_lost_it() {
    let dir = TempDir::new("lease-renew");
    let db = dir.db_path();
    let mut holder = at(&db, T0);
    let task = holder.ok_json("create_task", json!({"title": "write the docs"}));
    assert!(claim(&mut holder, &task, "agent-1", Some(60)).0);
    assert_eq!(holder.close().code(), Some(0));

    // The holder renews from a new process 50 s in (same agent, new session).
    let mut renewing = at(&db, T0 + 50_000);
    let renewed = renewing.ok_json(
        "renew_task_lease",
        json!({"taskId": task["id"], "assigneeAgentId": "agent-1"}),
    );
    let expires = renewed["leaseExpiresAt"].as_i64().unwrap();
    assert!(expires >= T0 + 110_000, "{renewed}");
    assert_eq!(renewing.close().code(), Some(0));

    // Past the first lease, within the renewed one: still taken, and nothing was written.
    let mut other = at(&db, T0 + 100_000);
    assert!(!claim(&mut other, &task, "agent-2", None).0);
    let ready = other.ok_json("list_tasks", json!({"ready": true}));
    assert_eq!(ready, json!([]));
    assert_eq!(other.close().code(), Some(0));
    assert!(system_comments(&db, &task).is_empty());

    // Past the renewed lease: a late renewal is refused, and the task is free.
    let mut late = at(&db, expires + 1_000);
    let refused = late.call(
        "renew_task_lease",
        json!({"taskId": task["id"], "assigneeAgentId": "agent-1"}),
    );
    assert!(refused.is_error);
    assert_eq!(
        refused.text(),
        format!(
            "renew failed: lease_expired (agent-1's lease ran out at {expires} (ms since the epoch); the task went back to todo)"
        )
    );
    let ready = late.ok_json("list_tasks", json!({"ready": true}));
    assert_eq!(ready[0]["id"], task["id"]);
    assert_eq!(system_comments(&db, &task).len(), 1);
    assert_eq!(late.close().code(), Some(0));
}

#[test]
fn an_expiry_racing_eight_claimer_processes_has_one_winner_and_one_comment() {
    let dir = TempDir::new("lease-race");
    let db = dir.db_path();
    let task = abandoned_task(&db, "contended");

    const RACERS: usize = 8;
    let start = Arc::new(Barrier::new(RACERS));
    let racers: Vec<_> = (0..RACERS)
        .map(|n| {
            let (db, task, start) = (db.clone(), task.clone(), Arc::clone(&start));
            std::thread::spawn(move || {
                let mut server = at(&db, T0 + 61_000);
                start.wait();
                let (won, _) = claim(&mut server, &task, &format!("agent-{n}"), Some(60));
                assert_eq!(server.close().code(), Some(0));
                won
            })
        })
        .collect();
    let winners = racers
        .into_iter()
        .map(|r| r.join().expect("a racer failed"))
        .filter(|won| *won)
        .count();
    assert_eq!(winners, 1, "exactly one claimer wins the expired task");
    let comments = system_comments(&db, &task);
    assert_eq!(comments.len(), 1, "{comments:?}");
    assert!(comments[0].starts_with("lease expired: gone held this task until "));
    assert_eq!(clawboo_tests::integrity_check(&db), "ok");
}

#[test]
fn the_bin_default_lease_applies_to_claims_that_name_none() {
    let dir = TempDir::new("lease-default");
    let db = dir.db_path();
    let mut server = Server::spawn(
        BIN,
        &db,
        &[
            ("CLAWBOO_TEST_CLOCK_MS", &T0.to_string()),
            ("CLAWBOO_CLAIM_LEASE_SECS", "90"),
        ],
    );
    let claim_description = server
        .list_tools()
        .into_iter()
        .find(|t| t["name"] == "claim_task")
        .map(|t| t["description"].as_str().unwrap_or("").to_owned())
        .unwrap_or_default();
    assert!(
        claim_description.contains("This board gives every claim a 90 s lease"),
        "{claim_description}"
    );
    let leased = server.ok_json("create_task", json!({"title": "leased"}));
    let (_, claimed) = claim(&mut server, &leased, "agent-1", None);
    let expires = claimed["leaseExpiresAt"].as_i64().unwrap();
    assert!((T0 + 90_000..T0 + 91_000).contains(&expires), "{claimed}");
    let plain = server.ok_json("create_task", json!({"title": "plain"}));
    let (_, claimed) = claim(&mut server, &plain, "agent-1", Some(0));
    assert!(claimed.get("leaseExpiresAt").is_none(), "{claimed}");
    assert_eq!(server.close().code(), Some(0));
}

/// The HTTP host answers `get_task` on its one async worker (a quick read). A `get_task` that
/// finds a lease run out must write its expiry, and waits while another connection holds the
/// write lock: the host's other sessions are answered meanwhile (a wait there hands the worker's
/// other connections to another thread; holding it, the host would answer nothing until the
/// lock is released).
#[test]
fn a_host_waiting_for_the_write_lock_in_a_quick_read_answers_its_other_sessions() {
    let dir = TempDir::new("lease-host-wait");
    let db = dir.db_path();
    let task = abandoned_task(&db, "wait for the lock");

    let clock = (T0 + 61_000).to_string();
    let host = Host::start(
        BIN,
        &["--rate-limit", "0"],
        &db,
        &[("CLAWBOO_TEST_CLOCK_MS", &clock)],
    );
    let mut reader = host.session("/api/mcp/tasks");
    let mut other = host.session("/api/mcp/tasks");

    // Another connection holds the write lock the expiry needs.
    let lock = rusqlite::Connection::open(&db).unwrap();
    lock.execute_batch("BEGIN IMMEDIATE").unwrap();
    let (done, finished) = mpsc::channel();
    let args = json!({"taskId": task["id"]});
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let shown = reader.call("get_task", args);
            done.send(shown).unwrap();
        });
        // Let the call reach the lock (were it not there yet, it would only be later).
        std::thread::sleep(Duration::from_millis(300));
        let names = other.tool_names();
        assert!(names.iter().any(|n| n == "get_task"), "{names:?}");
        assert!(
            finished.try_recv().is_err(),
            "get_task answered while the write lock was held"
        );
        lock.execute_batch("COMMIT").unwrap();
        let shown = finished.recv().unwrap();
        assert!(!shown.is_error, "{}", shown.text());
        assert_eq!(
            shown.json()["task"]["status"],
            "todo",
            "the expiry was written"
        );
    });
    assert_eq!(system_comments(&db, &task).len(), 1);
}
