use std::sync::atomic::AtomicBool;
use std::time::Duration;

use serde_json::json;

use super::*;
use crate::db::Clock;

fn request(conn: &Conn<'_>, agent: Option<&str>, ttl: Duration) -> ApprovalRow {
    create(
        conn,
        &NewApproval {
            tool_name: "delete_path",
            actor: Actor {
                agent_id: agent,
                tenant_id: None,
            },
            args: &json!({"path": "/tmp/x", "apiKey": "sk-abcdef1234567890"}),
            reason: "\"delete_path\" is destructive and needs approval.",
            ttl,
        },
    )
    .unwrap()
}

const MINUTE: Duration = Duration::from_secs(60);

/// A database whose clock stands still until the test moves it.
fn db_at_a_fixed_time() -> Db {
    Db::open_in_memory()
        .unwrap()
        .with_clock(Clock::manual(1_700_000_000_000))
}

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
fn the_first_decision_wins() {
    let db = Db::open_in_memory().unwrap();
    let conn = db.conn();
    let row = request(&conn, None, MINUTE);
    let Resolved::Recorded(denied) = resolve(&conn, &row.id, Resolution::Deny).unwrap() else {
        panic!("the first decision is recorded");
    };
    assert_eq!(denied.status(), Status::Deny);
    assert!(denied.resolved_at.is_some());
    let again = resolve(&conn, &row.id, Resolution::AllowOnce).unwrap();
    assert_eq!(again, Resolved::AlreadyResolved(denied));
    assert_eq!(
        resolve(&conn, "no-such-id", Resolution::Deny).unwrap(),
        Resolved::NotFound
    );
    assert!(list_pending(&conn).unwrap().is_empty());
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
    let Resolved::Expired(after) = resolve(&conn, &row.id, Resolution::AllowOnce).unwrap() else {
        panic!("an expired request is not approved");
    };
    assert_eq!(after.status(), Status::Expired);
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
    resolve(&conn, &row.id, Resolution::AllowAlways).unwrap();
    let a = Actor {
        agent_id: Some("a"),
        tenant_id: None,
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
    };
    assert!(standing_grant(&conn, "delete_path", b).unwrap().is_none());
    let other_tenant = Actor {
        agent_id: Some("a"),
        tenant_id: Some("t2"),
    };
    assert!(
        standing_grant(&conn, "delete_path", other_tenant)
            .unwrap()
            .is_none()
    );
    let once = request(&conn, Some("c"), MINUTE);
    resolve(&conn, &once.id, Resolution::AllowOnce).unwrap();
    let c = Actor {
        agent_id: Some("c"),
        tenant_id: None,
    };
    assert!(standing_grant(&conn, "delete_path", c).unwrap().is_none());
}

#[test]
fn a_grant_to_nobody_in_particular_is_never_standing() {
    let db = Db::open_in_memory().unwrap();
    let conn = db.conn();
    let row = request(&conn, None, MINUTE);
    resolve(&conn, &row.id, Resolution::AllowAlways).unwrap();
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
    )
    .unwrap();
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
    resolve(&db.conn(), &row.id, Resolution::AllowOnce).unwrap();
    // No time to wait and the server already closing: only a wait that reads the row first can
    // see the decision.
    let end = wait(
        &db,
        &row.id,
        Duration::ZERO,
        Duration::from_secs(5),
        &AtomicBool::new(true),
    )
    .unwrap();
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
            &AtomicBool::new(false)
        )
        .unwrap(),
        WaitEnd::Timeout
    );
}

#[test]
fn a_decision_that_lands_as_the_wait_runs_out_is_honoured_not_overwritten() {
    let db = Db::open_in_memory().unwrap();
    let row = request(&db.conn(), None, MINUTE);
    resolve(&db.conn(), &row.id, Resolution::Deny).unwrap();
    assert_eq!(
        close_wait(&db, &row.id, WaitEnd::Timeout).unwrap(),
        WaitEnd::Deny
    );
    assert_eq!(
        get(&db.conn(), &row.id).unwrap().unwrap().status(),
        Status::Deny
    );
    let open = request(&db.conn(), None, MINUTE);
    assert_eq!(
        close_wait(&db, &open.id, WaitEnd::Timeout).unwrap(),
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
    let keys: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "id",
            "toolName",
            "agentId",
            "argsSummary",
            "reason",
            "status",
            "taskId",
            "tenantId",
            "createdAt",
            "expiresAt",
            "resolvedAt"
        ]
    );
    assert_eq!(value["taskId"], serde_json::Value::Null);
}
