use std::sync::atomic::AtomicBool;
use std::time::Duration;

use serde_json::json;

use super::*;
use crate::db::{Clock, Step, new_id};

fn request(conn: &Conn<'_>, agent: Option<&str>, ttl: Duration) -> ApprovalRow {
    request_with(conn, agent, ttl, None)
}

/// A request whose caller heart-beats with `heartbeat` as its first lease.
fn request_with(
    conn: &Conn<'_>,
    agent: Option<&str>,
    ttl: Duration,
    heartbeat: Option<Duration>,
) -> ApprovalRow {
    create(
        conn,
        &NewApproval {
            tool_name: "delete_path",
            actor: Actor {
                agent_id: agent,
                tenant_id: None,
                caller: None,
            },
            args: &json!({"path": "/tmp/x", "apiKey": "sk-abcdef1234567890"}),
            reason: "\"delete_path\" is destructive and needs approval.",
            ttl,
            heartbeat,
        },
    )
    .unwrap()
}

const MINUTE: Duration = Duration::from_secs(60);

#[test]
fn a_request_is_stored_pending_with_scrubbed_arguments_and_an_expiry() {
    let db = Db::open_in_memory().unwrap();
    let conn = db.conn();
    let row = request(&conn, Some("a"), MINUTE);
    assert_eq!(row.status(), Status::Pending);
    assert_eq!(row.expires_at - row.created_at, 60_000);
    assert_eq!(
        row.args_summary.as_deref(),
        Some(r#"{"path":"/tmp/x","apiKey":"[REDACTED]"}"#)
    );
    assert_eq!(get(&conn, &row.id).unwrap(), Some(row.clone()));
    assert_eq!(list_pending(&conn).unwrap(), [row]);
}

#[test]
fn the_first_decision_wins_a_repeat_changes_nothing_and_another_decision_is_a_conflict() {
    let db = Db::open_in_memory().unwrap();
    let conn = db.conn();
    let row = request(&conn, None, MINUTE);
    let denied = resolve(&conn, &row.id, Resolution::Deny, Decider::TESTER).unwrap();
    assert!(denied.changed);
    assert_eq!(denied.row.status(), Status::Deny);
    assert!(denied.row.resolved_at.is_some());
    let repeat = resolve(&conn, &row.id, Resolution::Deny, Decider::TESTER).unwrap();
    assert_eq!(
        repeat,
        Resolved {
            row: denied.row.clone(),
            changed: false
        }
    );
    let conflict = resolve(&conn, &row.id, Resolution::AllowOnce, Decider::TESTER).unwrap_err();
    assert_eq!(
        conflict.to_string(),
        format!(
            "approval {} (delete_path) was already resolved as deny; allow_once not applied",
            row.id
        )
    );
    assert!(matches!(
        conflict,
        ResolveError::Conflict { row: ref held, asked: Resolution::AllowOnce } if **held == denied.row
    ));
    assert!(matches!(
        resolve(&conn, "no-such-id", Resolution::Deny, Decider::TESTER),
        Err(ResolveError::NotFound { id }) if id == "no-such-id"
    ));
    assert!(list_pending(&conn).unwrap().is_empty());

    let approved = request(&conn, Some("a"), MINUTE);
    resolve(&conn, &approved.id, Resolution::AllowOnce, Decider::TESTER).unwrap();
    for other in [Resolution::Deny, Resolution::AllowAlways] {
        let Err(ResolveError::Conflict { row, asked }) =
            resolve(&conn, &approved.id, other, Decider::TESTER)
        else {
            panic!("{other:?} after allow_once is a conflict");
        };
        assert_eq!((row.status(), asked), (Status::AllowOnce, other));
    }
}

#[test]
fn allow_always_on_a_request_without_an_agent_is_stored_as_allow_once() {
    let db = Db::open_in_memory().unwrap();
    let conn = db.conn();
    let row = request(&conn, None, MINUTE);
    let resolved = resolve(&conn, &row.id, Resolution::AllowAlways, Decider::TESTER).unwrap();
    assert_eq!(resolved.row.status(), Status::AllowOnce);
    assert_eq!(
        get(&conn, &row.id).unwrap().unwrap().status(),
        Status::AllowOnce
    );
    let repeat = resolve(&conn, &row.id, Resolution::AllowAlways, Decider::TESTER).unwrap();
    assert!(
        !repeat.changed,
        "asking again for what it means changes nothing"
    );
    assert_eq!(
        Resolution::AllowAlways.for_row(&request(&conn, Some("a"), MINUTE)),
        Resolution::AllowAlways
    );
}

/// A database whose clock stands still until the test moves it.
fn db_at_a_fixed_time() -> Db {
    Db::open_in_memory()
        .unwrap()
        .with_clock(Clock::manual(1_700_000_000_000))
}

#[test]
fn a_request_past_its_expiry_cannot_be_approved() {
    let db = db_at_a_fixed_time();
    let conn = db.conn();
    let row = request(&conn, None, MINUTE);
    db.clock().advance(MINUTE);
    assert_eq!(
        list_pending(&conn).unwrap(),
        [],
        "at its expiry it is no longer open"
    );
    db.clock().advance(Duration::from_millis(1));
    let Err(ResolveError::Conflict { row: after, .. }) =
        resolve(&conn, &row.id, Resolution::AllowOnce, Decider::TESTER)
    else {
        panic!("an expired request is not approved");
    };
    assert_eq!(after.status(), Status::Expired);
    assert_eq!(
        get(&conn, &row.id).unwrap().unwrap().status(),
        Status::Expired,
        "the expiry found by the resolve is kept"
    );
    assert!(matches!(
        resolve(&conn, &row.id, Resolution::Deny, Decider::TESTER),
        Err(ResolveError::Conflict { .. })
    ));
}

#[test]
fn stale_requests_are_swept_to_expired_and_fresh_ones_stay() {
    let db = db_at_a_fixed_time();
    let conn = db.conn();
    let stale = request(&conn, None, Duration::ZERO);
    let fresh = request(&conn, None, MINUTE);
    assert_eq!(
        expire_stale(&conn).unwrap(),
        0,
        "a row at its expiry is not yet past it"
    );
    db.clock().advance(Duration::from_millis(1));
    assert_eq!(expire_stale(&conn).unwrap(), 1);
    assert_eq!(expire_stale(&conn).unwrap(), 0);
    assert_eq!(
        get(&conn, &stale.id).unwrap().unwrap().status(),
        Status::Expired
    );
    assert_eq!(
        get(&conn, &fresh.id).unwrap().unwrap().status(),
        Status::Pending
    );
}

#[test]
fn a_standing_grant_belongs_to_one_agent_tenant_and_tool() {
    let db = Db::open_in_memory().unwrap();
    let conn = db.conn();
    let row = request(&conn, Some("a"), MINUTE);
    resolve(&conn, &row.id, Resolution::AllowAlways, Decider::TESTER).unwrap();
    let a = Actor {
        agent_id: Some("a"),
        tenant_id: None,
        caller: None,
    };
    assert_eq!(
        standing_grant(&conn, "delete_path", a)
            .unwrap()
            .map(|g| g.id),
        Some(row.id)
    );
    assert!(standing_grant(&conn, "web_search", a).unwrap().is_none());
    let b = Actor {
        agent_id: Some("b"),
        tenant_id: None,
        caller: None,
    };
    assert!(standing_grant(&conn, "delete_path", b).unwrap().is_none());
    let other_tenant = Actor {
        agent_id: Some("a"),
        tenant_id: Some("t2"),
        caller: None,
    };
    assert!(
        standing_grant(&conn, "delete_path", other_tenant)
            .unwrap()
            .is_none()
    );
    let once = request(&conn, Some("c"), MINUTE);
    resolve(&conn, &once.id, Resolution::AllowOnce, Decider::TESTER).unwrap();
    let c = Actor {
        agent_id: Some("c"),
        tenant_id: None,
        caller: None,
    };
    assert!(standing_grant(&conn, "delete_path", c).unwrap().is_none());
}

#[test]
fn a_grant_to_nobody_in_particular_is_never_standing() {
    let db = Db::open_in_memory().unwrap();
    let conn = db.conn();
    let row = request(&conn, None, MINUTE);
    resolve(&conn, &row.id, Resolution::AllowAlways, Decider::TESTER).unwrap();
    assert!(
        standing_grant(&conn, "delete_path", Actor::default())
            .unwrap()
            .is_none()
    );
}

#[test]
fn a_wait_ends_when_the_server_closes_and_the_request_is_expired() {
    let db = Db::open_in_memory().unwrap();
    let row = request(&db.conn(), None, MINUTE);
    let end = wait(
        &db,
        &row.id,
        MINUTE,
        Duration::from_millis(5),
        &AtomicBool::new(true),
        None,
    )
    .unwrap()
    .end;
    assert_eq!(end, WaitEnd::Abandoned);
    assert!(!end.allows());
    assert_eq!(
        get(&db.conn(), &row.id).unwrap().unwrap().status(),
        Status::Expired
    );
}

#[test]
fn a_wait_reads_its_row_before_anything_else_so_an_earlier_decision_wins() {
    let db = Db::open_in_memory().unwrap();
    let row = request(&db.conn(), None, MINUTE);
    resolve(&db.conn(), &row.id, Resolution::AllowOnce, Decider::TESTER).unwrap();
    // No time to wait and the server already closing: only a wait that reads the row first can
    // see the decision.
    let end = wait(
        &db,
        &row.id,
        Duration::ZERO,
        Duration::from_secs(5),
        &AtomicBool::new(true),
        None,
    )
    .unwrap()
    .end;
    assert_eq!(end, WaitEnd::AllowOnce);
    assert_eq!(
        get(&db.conn(), &row.id).unwrap().unwrap().status(),
        Status::AllowOnce
    );
    assert_eq!(
        wait(
            &db,
            "no-such-id",
            MINUTE,
            Duration::from_millis(5),
            &AtomicBool::new(false),
            None,
        )
        .unwrap()
        .end,
        WaitEnd::Timeout
    );
}

#[test]
fn a_decision_that_lands_as_the_wait_runs_out_is_honoured_not_overwritten() {
    let db = Db::open_in_memory().unwrap();
    let row = request(&db.conn(), None, MINUTE);
    resolve(&db.conn(), &row.id, Resolution::Deny, Decider::TESTER).unwrap();
    assert_eq!(
        close_wait(&db, &row.id, WaitEnd::Timeout).unwrap().end,
        WaitEnd::Deny
    );
    assert_eq!(
        get(&db.conn(), &row.id).unwrap().unwrap().status(),
        Status::Deny
    );
    let open = request(&db.conn(), None, MINUTE);
    assert_eq!(
        close_wait(&db, &open.id, WaitEnd::Timeout).unwrap().end,
        WaitEnd::Timeout
    );
    assert_eq!(
        get(&db.conn(), &open.id).unwrap().unwrap().status(),
        Status::Expired
    );
}

#[test]
fn the_rest_shape_is_camel_case_with_every_column() {
    let db = Db::open_in_memory().unwrap();
    let row = request(&db.conn(), None, MINUTE);
    let value = serde_json::to_value(&row).unwrap();
    let keys = clawboo_tests::object_keys(&value);
    assert_eq!(keys, clawboo_tests::reference::APPROVAL_ROW_KEYS);
    assert!(value.get("heartbeatUntil").is_none());
    assert_eq!(value["taskId"], serde_json::Value::Null);
}

/// Moves row `id`'s heartbeat a second into the past, as if its caller had stopped beating.
fn lapse(conn: &Conn<'_>, id: &str) {
    conn.execute(
        "UPDATE tool_call_approvals SET heartbeat_until = ?2 WHERE id = ?1",
        params![id, conn.now_ms() - 1_000],
    )
    .unwrap();
}

/// The `after` audit rows, newest first.
fn after_rows(conn: &Conn<'_>) -> Vec<audit::AuditRow> {
    audit::list(conn, None, 100)
        .unwrap()
        .into_iter()
        .filter(|r| r.phase == "after")
        .collect()
}

fn status_of(conn: &Conn<'_>, id: &str) -> Status {
    get(conn, id).unwrap().unwrap().status()
}

#[test]
fn the_heartbeat_lease_covers_four_polls_and_at_least_three_seconds() {
    assert_eq!(
        heartbeat_lease(Duration::from_millis(250)),
        Duration::from_secs(3)
    );
    assert_eq!(
        heartbeat_lease(Duration::from_secs(2)),
        Duration::from_secs(8)
    );
    let db = Db::open_in_memory().unwrap();
    let row = request_with(&db.conn(), None, MINUTE, Some(Duration::from_secs(3)));
    assert_eq!(row.heartbeat_until, Some(row.created_at + 3_000));
    assert_eq!(get(&db.conn(), &row.id).unwrap(), Some(row));
}

#[test]
fn a_request_whose_caller_stopped_heart_beating_leaves_the_queue_at_the_next_read() {
    let db = Db::open_in_memory().unwrap();
    let conn = db.conn();
    let gone = request_with(&conn, Some("a"), MINUTE, Some(MINUTE));
    let alive = request_with(&conn, Some("b"), MINUTE, Some(MINUTE));
    let unwatched = request(&conn, None, MINUTE);
    lapse(&conn, &gone.id);
    let listed: Vec<String> = list_pending(&conn)
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(listed, [unwatched.id.clone(), alive.id.clone()]);
    assert_eq!(expire_stale(&conn).unwrap(), 1);
    assert_eq!(expire_stale(&conn).unwrap(), 0);
    assert_eq!(status_of(&conn, &gone.id), Status::Expired);
    assert_eq!(status_of(&conn, &alive.id), Status::Pending);
    assert_eq!(status_of(&conn, &unwatched.id), Status::Pending);
    let after = after_rows(&conn);
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(
        (
            after[0].tool_name.as_str(),
            after[0].agent_id.as_deref(),
            after[0].decision.as_deref(),
            after[0].is_error
        ),
        ("delete_path", Some("a"), Some("abandoned"), 1)
    );
    assert!(
        after[0]
            .result_summary
            .as_deref()
            .is_some_and(|s| s.contains("stopped heart-beating")),
        "{after:?}"
    );
}

#[test]
fn approving_a_request_whose_caller_is_gone_is_a_conflict_not_an_approval() {
    let db = Db::open_in_memory().unwrap();
    let conn = db.conn();
    let gone = request_with(&conn, Some("a"), MINUTE, Some(MINUTE));
    lapse(&conn, &gone.id);
    let Err(ResolveError::Conflict { row, asked }) =
        resolve(&conn, &gone.id, Resolution::AllowOnce, Decider::TESTER)
    else {
        panic!("a request nobody waits for is not approved");
    };
    assert_eq!(
        (row.status(), asked),
        (Status::Expired, Resolution::AllowOnce)
    );
    assert_eq!(status_of(&conn, &gone.id), Status::Expired);
    assert_eq!(after_rows(&conn).len(), 1);
}

#[test]
fn a_waiter_heart_beats_its_own_request_and_expires_those_of_callers_that_left() {
    let db = Db::open_in_memory().unwrap();
    let (mine, theirs) = {
        let conn = db.conn();
        let mine = request_with(&conn, None, MINUTE, Some(MINUTE));
        let theirs = request_with(&conn, None, MINUTE, Some(MINUTE));
        lapse(&conn, &mine.id);
        lapse(&conn, &theirs.id);
        (mine, theirs)
    };
    let seen = beat(&db, &mine.id, MINUTE).unwrap().unwrap();
    assert_eq!(seen.status(), Status::Pending);
    let conn = db.conn();
    let refreshed = get(&conn, &mine.id).unwrap().unwrap();
    assert!(
        refreshed.heartbeat_until > Some(conn.now_ms()),
        "{refreshed:?}"
    );
    assert_eq!(refreshed.status(), Status::Pending);
    assert_eq!(status_of(&conn, &theirs.id), Status::Expired);
    assert_eq!(after_rows(&conn).len(), 1);
}

#[test]
fn every_request_that_ends_without_a_run_leaves_exactly_one_after_row() {
    let db = Db::open_in_memory().unwrap();
    let timed_out = request(&db.conn(), Some("t"), MINUTE);
    assert_eq!(
        close_wait(&db, &timed_out.id, WaitEnd::Timeout)
            .unwrap()
            .end,
        WaitEnd::Timeout
    );
    let denied = request(&db.conn(), Some("d"), MINUTE);
    resolve(&db.conn(), &denied.id, Resolution::Deny, Decider::TESTER).unwrap();
    assert_eq!(
        close_wait(&db, &denied.id, WaitEnd::Timeout).unwrap().end,
        WaitEnd::Deny,
        "the waiter that finds a decision writes nothing more"
    );
    let lapsed = request(&db.conn(), Some("e"), MINUTE);
    db.conn()
        .execute(
            "UPDATE tool_call_approvals SET expires_at = ?2 WHERE id = ?1",
            params![lapsed.id, db.now_ms() - 1_000],
        )
        .unwrap();
    assert_eq!(expire_stale(&db.conn()).unwrap(), 1);
    let approved = request(&db.conn(), Some("o"), MINUTE);
    resolve(
        &db.conn(),
        &approved.id,
        Resolution::AllowOnce,
        Decider::TESTER,
    )
    .unwrap();
    let delegation = request(&db.conn(), Some("g"), MINUTE);
    db.conn()
        .execute(
            "UPDATE tool_call_approvals SET tool_name = 'delegate:code', task_id = 'task-1' WHERE id = ?1",
            [&delegation.id],
        )
        .unwrap();
    resolve(
        &db.conn(),
        &delegation.id,
        Resolution::Deny,
        Decider::TESTER,
    )
    .unwrap();

    let mut ends: Vec<(String, String)> = after_rows(&db.conn())
        .into_iter()
        .map(|r| {
            (
                r.agent_id.unwrap_or_default(),
                r.decision.unwrap_or_default(),
            )
        })
        .collect();
    ends.sort();
    assert_eq!(
        ends,
        [
            ("d".to_owned(), "deny".to_owned()),
            ("e".to_owned(), "expired".to_owned()),
            ("t".to_owned(), "timeout".to_owned()),
        ],
        "an approved call's after row is its executor's; a delegation is not a tool call"
    );
}

#[test]
fn the_heartbeat_column_is_added_to_a_current_file_and_to_a_reference_file() {
    for versions_recorded in [true, false] {
        let dir = std::env::temp_dir().join(format!("clawboo-approvals-upgrade-{}", new_id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("clawboo.db");
        let reference_insert = "INSERT INTO tool_call_approvals (id, tool_name, agent_id,
                args_summary, reason, status, task_id, tenant_id, created_at, expires_at,
                resolved_at)
            VALUES (?1, 'delete_path', NULL, '{}', 'r', 'pending', NULL, NULL, ?2, ?3, NULL)";
        let now = Clock::system().now_ms();
        {
            let old = rusqlite::Connection::open(&path).unwrap();
            let Step::Sql(reference_ddl) = crate::broker::SCHEMA.steps[0] else {
                panic!("the broker's first step is its reference DDL");
            };
            old.execute_batch(reference_ddl).unwrap();
            if versions_recorded {
                old.execute_batch(
                    "CREATE TABLE clawboo_schema_versions (component TEXT PRIMARY KEY,
                         version INTEGER NOT NULL);
                     INSERT INTO clawboo_schema_versions VALUES ('broker', 1);",
                )
                .unwrap();
            }
            old.execute(reference_insert, params!["old-row", now, now + 60_000])
                .unwrap();
        }
        let db = Db::open(&path).unwrap();
        let conn = db.conn();
        let added: i64 = conn
            .query_row(
                "SELECT count(*) FROM pragma_table_info('tool_call_approvals')
                 WHERE name = 'heartbeat_until'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(added, 1);
        conn.execute(reference_insert, params!["new-row", now, now + 60_000])
            .unwrap();
        for id in ["old-row", "new-row"] {
            let row = get(&conn, id).unwrap().unwrap();
            assert_eq!((row.status(), row.heartbeat_until), (Status::Pending, None));
        }
        assert_eq!(
            expire_stale(&conn).unwrap(),
            0,
            "no heartbeat: its TTL only"
        );
        drop(conn);
        drop(db);
        assert!(Db::open(&path).is_ok(), "opening again changes nothing");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// A client question that answers `says` on its `after`-th poll (`None` before).
fn answering(after: usize, says: ClientSays) -> ClientAsk {
    let mut polls = 0;
    let mut says = Some(says);
    ClientAsk::new(move || {
        polls += 1;
        if polls >= after { says.take() } else { None }
    })
}

#[test]
fn the_clients_answer_decides_like_the_queue_and_says_so() {
    let db = Db::open_in_memory().unwrap();
    let wait_for = |id: &str, ask: ClientAsk| {
        wait(
            &db,
            id,
            MINUTE,
            Duration::from_millis(1),
            &AtomicBool::new(false),
            Some(ask),
        )
        .unwrap()
    };
    let row = request(&db.conn(), Some("a"), MINUTE);
    let waited = wait_for(
        &row.id,
        answering(2, ClientSays::Decided(Resolution::AllowOnce)),
    );
    assert_eq!(
        waited,
        Waited {
            end: WaitEnd::AllowOnce,
            via: Some(DecidedVia::Elicitation)
        }
    );
    let stored = get(&db.conn(), &row.id).unwrap().unwrap();
    assert_eq!(stored.decided_via.as_deref(), Some("elicitation"));

    let denied = request(&db.conn(), Some("a"), MINUTE);
    let waited = wait_for(
        &denied.id,
        answering(1, ClientSays::Decided(Resolution::Deny)),
    );
    assert_eq!(waited.end, WaitEnd::Deny);
    let after: (String, String, Option<String>) = db
        .conn()
        .query_row(
            "SELECT decision, result_summary, decided_via FROM tool_call_audit
             WHERE phase = 'after' ORDER BY rowid DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(
        after,
        (
            "deny".into(),
            "approval deny: refused by a person (via elicitation)".into(),
            Some("elicitation".into())
        )
    );
}

#[test]
fn a_client_answer_after_the_queue_decided_changes_nothing() {
    let db = Db::open_in_memory().unwrap();
    let row = request(&db.conn(), Some("a"), MINUTE);
    resolve(
        &db.conn(),
        &row.id,
        Resolution::Deny,
        Decider {
            by: "tester",
            via: DecidedVia::Rest,
        },
    )
    .unwrap();
    assert_eq!(
        hear_client(&db, &row.id, ClientSays::Decided(Resolution::AllowAlways)).ok(),
        Some(())
    );
    let stored = get(&db.conn(), &row.id).unwrap().unwrap();
    assert_eq!(
        (stored.status(), stored.decided_via.as_deref()),
        (Status::Deny, Some("rest"))
    );
    let afters: i64 = db
        .conn()
        .query_row(
            "SELECT count(*) FROM tool_call_audit WHERE phase = 'after'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(afters, 1, "one after row, the queue's");
}

#[test]
fn a_client_without_an_answer_leaves_the_queue_to_decide() {
    let db = Db::open_in_memory().unwrap();
    let row = request(&db.conn(), Some("a"), MINUTE);
    let waited = wait(
        &db,
        &row.id,
        Duration::from_millis(30),
        Duration::from_millis(1),
        &AtomicBool::new(false),
        Some(answering(
            1,
            ClientSays::NoAnswer("the client failed".into()),
        )),
    )
    .unwrap();
    assert_eq!(
        waited,
        Waited {
            end: WaitEnd::Timeout,
            via: None
        }
    );
}
