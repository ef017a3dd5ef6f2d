use std::time::Duration;

use serde_json::Value;

use super::*;
use crate::broker::approvals::{self, NewApproval, Status};
use crate::broker::audit::{Actor, Decision};
use crate::broker::registry;
use crate::db::Clock;

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_owned).collect()
}

fn invoke(db: &Db, line: &str) -> Report {
    let invocation = parse(&words(line))
        .expect("an operator command")
        .expect("valid");
    run(db, &AvailabilityContext::with_env([]), &invocation)
}

fn json_of(report: &Report) -> Value {
    serde_json::from_str(&report.out).unwrap_or_else(|e| panic!("{e}: {}", report.out))
}

fn pending_request(db: &Db, agent: Option<&str>, ttl: Duration) -> ApprovalRow {
    approvals::create(
        &db.conn(),
        &NewApproval {
            tool_name: "delete_path",
            actor: Actor {
                agent_id: agent,
                tenant_id: None,
                caller: None,
            },
            args: &json!({"path": "/tmp/x"}),
            reason: "\"delete_path\" is destructive and needs approval.",
            ttl,
            heartbeat: None,
        },
    )
    .unwrap()
}

#[test]
fn only_operator_words_are_commands_and_bad_usage_is_explained() {
    assert_eq!(parse(&words("")), None);
    assert_eq!(parse(&words("--help")), None);
    assert_eq!(parse(&words("attach --runtime codex")), None);
    assert_eq!(
        parse(&words("approve abc --always --json")),
        Some(Ok(Invocation {
            command: Command::Resolve {
                id: "abc".into(),
                resolution: Resolution::AllowAlways
            },
            json: true
        }))
    );
    assert_eq!(
        parse(&words("audit --tool echo --limit 5")),
        Some(Ok(Invocation {
            command: Command::Audit {
                tool: Some("echo".into()),
                limit: 5
            },
            json: false
        }))
    );
    assert_eq!(
        parse(&words("approve")),
        Some(Err("needs exactly one argument: an approval id".into()))
    );
    assert_eq!(
        parse(&words("deny a b")),
        Some(Err("needs exactly one argument: an approval id".into()))
    );
    assert_eq!(
        parse(&words("audit --limit -1")),
        Some(Err(
            "--limit needs a whole number of rows, got \"-1\"".into()
        ))
    );
    assert_eq!(
        parse(&words("deny abc --always")),
        Some(Err("unexpected argument '--always'".into()))
    );
    assert_eq!(
        parse(&words("tools extra")),
        Some(Err("unexpected argument 'extra'".into()))
    );
}

#[test]
fn tools_json_is_the_rest_body_with_availability_and_diagnostics() {
    let db = Db::open_in_memory().unwrap();
    let report = invoke(&db, "tools --json");
    assert_eq!(report.code, 0);
    let body = json_of(&report);
    assert_eq!(body["ok"], true);
    let names: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo", "note", "web_search", "delete_path"]);
    assert_eq!(
        body["tools"][2],
        json!({
            "name": "web_search",
            "description": "Search the web. External side effect \u{2192} requires approval; hidden until a search provider is configured.",
            "owner": "core",
            "risk": "external",
            "available": false,
            "diagnostics": ["env-missing:TAVILY_API_KEY", "auth-missing:tavily"]
        })
    );
    assert_eq!(body["tools"][3]["available"], true);
    assert_eq!(body["tools"][3]["diagnostics"], json!([]));
}

#[test]
fn tools_table_shows_risk_availability_and_the_enabled_flag() {
    let db = Db::open_in_memory().unwrap();
    registry::seed_builtins(&db.conn()).unwrap();
    assert_eq!(invoke(&db, "disable echo").out, "echo is disabled\n");
    let out = invoke(&db, "tools").out;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "TOOL         RISK         OWNER  AVAILABLE  ENABLED  DIAGNOSTICS"
    );
    assert_eq!(lines[1], "echo         safe         core   yes        no");
    assert_eq!(
        lines[3],
        "web_search   external     core   no         yes      env-missing:TAVILY_API_KEY, auth-missing:tavily"
    );
    let unknown = invoke(&db, "enable rm");
    assert_eq!(unknown.code, 1);
    assert!(
        unknown.err.contains("no tool named \"rm\""),
        "{}",
        unknown.err
    );
}

#[test]
fn the_queue_lists_pending_rows_newest_first_masked_again() {
    let db = Db::open_in_memory().unwrap();
    assert_eq!(invoke(&db, "approvals").out, "no pending approvals\n");
    let older = pending_request(&db, Some("a"), Duration::from_secs(60));
    let newer = pending_request(&db, None, Duration::from_secs(60));
    db.conn()
        .execute(
            "UPDATE tool_call_approvals SET args_summary = ?2 WHERE id = ?1",
            rusqlite::params![newer.id, r#"{"path": "/tmp/x", "token": "hunter2hunter2"}"#],
        )
        .unwrap();
    let body = json_of(&invoke(&db, "approvals --json"));
    assert_eq!(body["ok"], true);
    let rows = body["approvals"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["id"], newer.id.as_str());
    assert_eq!(
        rows[0]["argsSummary"],
        r#"{"path":"/tmp/x","token":"[REDACTED]"}"#
    );
    assert_eq!(rows[1]["id"], older.id.as_str());
    assert_eq!(rows[1]["status"], "pending");
    let table = invoke(&db, "approvals").out;
    assert!(table.starts_with("ID "), "{table}");
    assert!(
        table.contains(&older.id) && !table.contains("hunter2"),
        "{table}"
    );
}

#[test]
fn approving_records_once_and_a_second_decision_changes_nothing() {
    let db = Db::open_in_memory().unwrap();
    let row = pending_request(&db, Some("agent-a"), Duration::from_secs(60));
    let approved = invoke(&db, &format!("approve {} --always", row.id));
    assert_eq!(approved.code, 0);
    assert_eq!(
        approved.out,
        format!(
            "approved {} (delete_path) always: agent agent-a will not be asked again for delete_path\n",
            row.id
        )
    );
    let same = invoke(&db, &format!("approve {} --always --json", row.id));
    assert_eq!(same.code, 0);
    assert_eq!(json_of(&same)["approval"]["status"], "allow_always");
    let stored = approvals::get(&db.conn(), &row.id).unwrap().unwrap();
    assert_eq!(stored.status(), Status::AllowAlways);
    let again = invoke(&db, &format!("approve {} --always", row.id));
    assert_eq!(again.code, 0);
    assert_eq!(
        again.out,
        format!(
            "approval {} (delete_path) was already resolved as allow_always at {}; nothing changed\n",
            row.id,
            utc(stored.resolved_at.unwrap())
        )
    );
}

#[test]
fn a_conflicting_decision_says_what_the_row_holds_and_exits_one_in_text_and_json() {
    let db = Db::open_in_memory().unwrap();
    let approved = pending_request(&db, Some("agent-a"), Duration::from_secs(60));
    assert_eq!(invoke(&db, &format!("approve {}", approved.id)).code, 0);
    let approved_at = approvals::get(&db.conn(), &approved.id)
        .unwrap()
        .unwrap()
        .resolved_at
        .unwrap();
    let deny = invoke(&db, &format!("deny {}", approved.id));
    assert_eq!((deny.code, deny.out.as_str()), (1, ""));
    assert_eq!(
        deny.err,
        format!(
            "approval {} (delete_path) was already resolved as allow_once at {}; deny not applied\n",
            approved.id,
            utc(approved_at)
        )
    );
    let always = invoke(&db, &format!("approve {} --always", approved.id));
    assert_eq!(always.code, 1);
    assert!(
        always.err.contains("allow_always not applied"),
        "{}",
        always.err
    );

    let denied = pending_request(&db, None, Duration::from_secs(60));
    assert_eq!(invoke(&db, &format!("deny {}", denied.id)).code, 0);
    let approve = invoke(&db, &format!("approve {} --json", denied.id));
    assert_eq!(approve.code, 1);
    let body = json_of(&approve);
    let error = body["error"].as_str().unwrap();
    assert!(
        error.starts_with(&format!(
            "approval {} (delete_path) was already resolved as deny at ",
            denied.id
        )) && error.ends_with("; allow_once not applied"),
        "{body}"
    );
    assert_eq!(body["approval"]["status"], "deny");
    let repeat = invoke(&db, &format!("deny {}", denied.id));
    assert_eq!(repeat.code, 0, "{}", repeat.err);
    assert!(
        repeat.out.ends_with("; nothing changed\n"),
        "{}",
        repeat.out
    );
    for (id, status) in [
        (&approved.id, Status::AllowOnce),
        (&denied.id, Status::Deny),
    ] {
        assert_eq!(
            approvals::get(&db.conn(), id).unwrap().unwrap().status(),
            status
        );
    }
}

#[test]
fn approve_always_on_a_request_without_an_agent_approves_once_and_stores_allow_once() {
    let db = Db::open_in_memory().unwrap();
    let row = pending_request(&db, None, Duration::from_secs(60));
    let report = invoke(&db, &format!("approve {} --always", row.id));
    assert_eq!(report.code, 0);
    assert_eq!(
        report.out,
        format!(
            "approved {} (delete_path) once: the call names no agent, so --always cannot be remembered (stored as allow_once)\n",
            row.id
        )
    );
    let stored = approvals::get(&db.conn(), &row.id).unwrap().unwrap();
    assert_eq!(stored.status(), Status::AllowOnce);
    let json = json_of(&invoke(&db, &format!("approve {} --always --json", row.id)));
    assert_eq!(json["approval"]["status"], "allow_once");
}

#[test]
fn a_request_whose_caller_stopped_waiting_leaves_the_queue_and_cannot_be_approved() {
    let db = Db::open_in_memory().unwrap();
    let gone = approvals::create(
        &db.conn(),
        &NewApproval {
            tool_name: "delete_path",
            actor: Actor::default(),
            args: &json!({"path": "/tmp/x"}),
            reason: "r",
            ttl: Duration::from_secs(60),
            heartbeat: Some(Duration::from_secs(60)),
        },
    )
    .unwrap();
    db.conn()
        .execute(
            "UPDATE tool_call_approvals SET heartbeat_until = ?2 WHERE id = ?1",
            rusqlite::params![gone.id, Clock::system().now_ms() - 1_000],
        )
        .unwrap();
    assert_eq!(invoke(&db, "approvals").out, "no pending approvals\n");
    let report = invoke(&db, &format!("approve {}", gone.id));
    assert_eq!(report.code, 1);
    assert!(
        report.err.contains("before it was resolved")
            && report.err.ends_with("; allow_once not applied\n"),
        "{}",
        report.err
    );
    let audit = json_of(&invoke(&db, "audit --json"));
    assert_eq!(audit["audit"][0]["decision"], "abandoned");
}

#[test]
fn deny_json_returns_the_resolved_row() {
    let db = Db::open_in_memory().unwrap();
    let row = pending_request(&db, None, Duration::from_secs(60));
    let report = invoke(&db, &format!("deny {} --json", row.id));
    assert_eq!(report.code, 0);
    let body = json_of(&report);
    assert_eq!(body["ok"], true);
    assert_eq!(body["approval"]["id"], row.id.as_str());
    assert_eq!(body["approval"]["status"], "deny");
    assert!(body["approval"]["resolvedAt"].is_i64());
}

#[test]
fn an_unknown_id_is_an_error_with_a_non_zero_exit() {
    let db = Db::open_in_memory().unwrap();
    let text = invoke(&db, "approve nope");
    assert_eq!(text.code, 1);
    assert_eq!(text.out, "");
    assert_eq!(
        text.err,
        "no approval with id \"nope\"; `approvals` lists the pending ones\n"
    );
    let json = invoke(&db, "deny nope --json");
    assert_eq!(json.code, 1);
    assert_eq!(json_of(&json), json!({"error": "approval not found"}));
}

#[test]
fn an_expired_request_cannot_be_approved() {
    let db = Db::open_in_memory()
        .unwrap()
        .with_clock(Clock::manual(1_700_000_000_000));
    let row = pending_request(&db, None, Duration::ZERO);
    db.clock().advance(Duration::from_millis(1));
    let report = invoke(&db, &format!("approve {}", row.id));
    assert_eq!(report.code, 1);
    assert!(report.err.contains("expired"), "{}", report.err);
    assert_eq!(invoke(&db, &format!("deny {}", row.id)).code, 1);
    let stored = approvals::get(&db.conn(), &row.id).unwrap().unwrap();
    assert_eq!(stored.status(), Status::Expired);
}

#[test]
fn the_audit_log_filters_limits_and_masks() {
    let db = Db::open_in_memory().unwrap();
    {
        let conn = db.conn();
        let none = Actor::default();
        audit::write_before(
            &conn,
            "echo",
            none,
            Decision::Allow,
            &json!({"message": "a"}),
            None,
        )
        .unwrap();
        audit::write_after(&conn, "echo", none, "a", false).unwrap();
        audit::write_before(&conn, "nope", none, Decision::Deny, &json!({}), None).unwrap();
        conn.execute(
            "UPDATE tool_call_audit SET result_summary = 'leak AKIAFAKEFAKEFAKE1234' WHERE phase = 'after'",
            [],
        )
        .unwrap();
    }
    let all = json_of(&invoke(&db, "audit --json"));
    assert_eq!(all["ok"], true);
    assert_eq!(all["audit"].as_array().unwrap().len(), 3);
    let echo = json_of(&invoke(&db, "audit --tool echo --json"));
    let rows = echo["audit"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["phase"], "after");
    assert_eq!(rows[0]["resultSummary"], "leak [REDACTED]");
    assert_eq!(rows[0]["isError"], 0);
    assert_eq!(rows[1]["decision"], "allow");
    let one = json_of(&invoke(&db, "audit --limit 1 --json"));
    assert_eq!(one["audit"][0]["toolName"], "nope");
    let table = invoke(&db, "audit --tool echo").out;
    assert_eq!(table.lines().count(), 3, "{table}");
    assert!(table.lines().next().unwrap().starts_with("TIME"), "{table}");
    assert!(!table.contains("AKIAFAKE"), "{table}");
    assert_eq!(invoke(&db, "audit --tool ghost").out, "no audit rows\n");
}

#[test]
fn times_are_shown_in_utc() {
    assert_eq!(utc(0), "1970-01-01 00:00:00Z");
    assert_eq!(utc(1_700_000_000_000), "2023-11-14 22:13:20Z");
    assert_eq!(utc(951_782_400_000), "2000-02-29 00:00:00Z");
}
