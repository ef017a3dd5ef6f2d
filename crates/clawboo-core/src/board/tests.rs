use rusqlite::{Connection, params};

use super::claim::verdict_blocks_done;
use super::*;
use crate::db::{Conn, Db, new_id};

fn db() -> Db {
    Db::open_in_memory().unwrap()
}

fn todo(conn: &Conn<'_>, title: &str) -> Task {
    insert(
        conn,
        &NewTask {
            title: title.into(),
            ..Default::default()
        },
    )
    .unwrap()
}

#[test]
fn created_task_defaults() {
    let db = db();
    let t = todo(&db.conn(), "x");
    assert_eq!(t.status, Status::Todo);
    assert_eq!(t.priority, 0);
    assert_eq!(t.assignee_agent_id, None);
    assert_eq!(t.created_at, t.updated_at);
    assert_eq!(t.completed_at, None);
}

fn file_db() -> (std::path::PathBuf, Db) {
    let dir = std::env::temp_dir().join(format!("clawboo-board-{}", new_id()));
    let path = dir.join("clawboo.db");
    let db = Db::open(&path).unwrap();
    (dir, db)
}

fn sub(conn: &Conn<'_>, parent: &str, caps: Caps) -> Result<Task, BoardError> {
    create_subtask(
        conn,
        &NewTask {
            title: "child".into(),
            parent_task_id: Some(parent.into()),
            ..Default::default()
        },
        caps,
    )
}

fn root(conn: &Conn<'_>, caps: Caps) -> Result<Task, BoardError> {
    create_root(
        conn,
        &NewTask {
            title: "root".into(),
            ..Default::default()
        },
        caps,
    )
}

fn soft_drop(conn: &Connection, id: &str) {
    conn.execute("UPDATE tasks SET dropped = 1 WHERE id = ?1", [id])
        .unwrap();
}

fn set_verdict(conn: &Connection, id: &str, verdict: Option<&str>) {
    conn.execute(
        "UPDATE tasks SET verification = ?1 WHERE id = ?2",
        params![verdict, id],
    )
    .unwrap();
}

/// `(name, type, notnull, default, pk)` of every column of `table`, in column order.
fn columns(conn: &Connection, table: &str) -> Vec<(String, String, bool, Option<String>, i64)> {
    conn.prepare("SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?1)")
        .unwrap()
        .query_map([table], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

type Col = (&'static str, &'static str, bool, Option<&'static str>, i64);

fn assert_columns(conn: &Connection, table: &str, expected: &[Col]) {
    let got = columns(conn, table);
    let expected: Vec<(String, String, bool, Option<String>, i64)> = expected
        .iter()
        .map(|(n, t, nn, d, pk)| (n.to_string(), t.to_string(), *nn, d.map(str::to_owned), *pk))
        .collect();
    assert_eq!(got, expected, "{table}");
}

#[test]
fn board_tables_match_the_reference_ddl_column_for_column() {
    let db = db();
    let conn = db.conn();
    assert_columns(
        &conn,
        "tasks",
        &[
            ("id", "TEXT", false, None, 1),
            ("title", "TEXT", true, None, 0),
            ("description", "TEXT", false, None, 0),
            ("status", "TEXT", true, Some("'backlog'"), 0),
            ("priority", "INTEGER", true, Some("0"), 0),
            ("team_id", "TEXT", false, None, 0),
            ("assignee_agent_id", "TEXT", false, None, 0),
            ("assignee_runtime", "TEXT", false, None, 0),
            ("parent_task_id", "TEXT", false, None, 0),
            ("source_delegation_id", "TEXT", false, None, 0),
            ("worktree_ref", "TEXT", false, None, 0),
            ("branch_ref", "TEXT", false, None, 0),
            ("cost_usd", "REAL", true, Some("0"), 0),
            ("parent_session_id", "TEXT", false, None, 0),
            ("dropped", "INTEGER", true, Some("0"), 0),
            ("tenant_id", "TEXT", false, None, 0),
            ("verification", "TEXT", false, None, 0),
            ("scheduled_by", "TEXT", true, Some("'manual'"), 0),
            ("created_at", "INTEGER", true, None, 0),
            ("updated_at", "INTEGER", true, None, 0),
            ("completed_at", "INTEGER", false, None, 0),
            // Ours, added by later steps: the lease of a claim.
            ("lease_seconds", "INTEGER", false, None, 0),
            ("lease_expires_at", "INTEGER", false, None, 0),
        ],
    );
    assert_columns(
        &conn,
        "task_deps",
        &[
            ("task_id", "TEXT", true, None, 1),
            ("depends_on_task_id", "TEXT", true, None, 2),
            ("tenant_id", "TEXT", false, None, 0),
        ],
    );
    assert_columns(
        &conn,
        "task_comments",
        &[
            ("id", "TEXT", false, None, 1),
            ("task_id", "TEXT", true, None, 0),
            ("author_agent_id", "TEXT", false, None, 0),
            ("author_type", "TEXT", true, None, 0),
            ("body", "TEXT", true, None, 0),
            ("tenant_id", "TEXT", false, None, 0),
            ("created_at", "INTEGER", true, None, 0),
        ],
    );
    let names =
        |table: &str| -> Vec<String> { columns(&conn, table).into_iter().map(|c| c.0).collect() };
    assert_eq!(
        names("workspaces"),
        [
            "id",
            "task_id",
            "repo_path",
            "branch",
            "worktree_path",
            "status",
            "tenant_id",
            "created_at",
            "last_used_at"
        ]
    );
    assert_eq!(
        names("execution_processes"),
        [
            "id",
            "task_id",
            "workspace_id",
            "executor_type",
            "status",
            "claimed_at",
            "started_at",
            "completed_at",
            "before_commit",
            "after_commit",
            "input_tokens",
            "output_tokens",
            "cache_read",
            "cache_write",
            "cost_usd",
            "summary",
            "run_reason",
            "error",
            "recovery_tombstone",
            "tenant_id",
            "created_at"
        ]
    );
    let column = |table: &str, name: &str| {
        columns(&conn, table)
            .into_iter()
            .find(|c| c.0 == name)
            .unwrap()
    };
    assert_eq!(
        column("workspaces", "status").3.as_deref(),
        Some("'active'")
    );
    assert_eq!(
        column("execution_processes", "status").3.as_deref(),
        Some("'queued'")
    );
    let tombstone = column("execution_processes", "recovery_tombstone");
    assert_eq!(
        (tombstone.1.as_str(), tombstone.2, tombstone.3.as_deref()),
        ("INTEGER", true, Some("0"))
    );
    assert_eq!(column("execution_processes", "cost_usd").1, "REAL");
}

#[test]
fn board_indexes_and_foreign_keys_match_the_reference() {
    let db = db();
    let conn = db.conn();
    let index_columns = |index: &str| -> Vec<String> {
        conn.prepare("SELECT name FROM pragma_index_info(?1) ORDER BY seqno")
            .unwrap()
            .query_map([index], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    for (index, cols) in [
        ("idx_tasks_team_status", &["team_id", "status"][..]),
        ("idx_tasks_assignee", &["assignee_agent_id"]),
        ("idx_tasks_parent", &["parent_task_id"]),
        (
            "idx_tasks_parent_dropped_created",
            &["parent_task_id", "dropped", "created_at"],
        ),
        ("idx_task_deps_task", &["task_id"]),
        ("idx_task_deps_depends", &["depends_on_task_id"]),
        ("idx_task_comments_task", &["task_id"]),
        ("idx_exec_task", &["task_id"]),
        ("idx_exec_status", &["status"]),
    ] {
        assert_eq!(index_columns(index), cols, "{index}");
    }
    let foreign_keys = |table: &str| -> Vec<(String, String, String)> {
        conn.prepare(
            "SELECT \"from\", \"table\", \"to\" FROM pragma_foreign_key_list(?1) ORDER BY \"from\"",
        )
        .unwrap()
        .query_map([table], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    };
    let fk = |from: &str| (from.to_owned(), "tasks".to_owned(), "id".to_owned());
    assert_eq!(foreign_keys("tasks"), [fk("parent_task_id")]);
    assert_eq!(
        foreign_keys("task_deps"),
        [fk("depends_on_task_id"), fk("task_id")]
    );
    assert_eq!(foreign_keys("task_comments"), [fk("task_id")]);
    let triggers: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'
             AND tbl_name IN ('tasks', 'task_deps', 'task_comments')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(triggers, 0);
}

#[test]
fn both_cap_counts_use_the_parent_dropped_created_index() {
    let db = db();
    let conn = db.conn();
    for count in [
        "SELECT count(*) FROM tasks WHERE parent_task_id IS NULL AND dropped = 0 AND created_at > ?1",
        "SELECT count(*) FROM tasks WHERE parent_task_id = ?1 AND dropped = 0",
    ] {
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {count}"))
            .unwrap()
            .query_map([0], |r| r.get(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let plan = plan.join("\n");
        assert!(plan.contains("idx_tasks_parent_dropped_created"), "{plan}");
        assert!(!plan.contains("SCAN tasks"), "{plan}");
    }
}

#[test]
fn claim_has_one_winner_and_says_why_a_loser_lost() {
    let db = db();
    let conn = db.conn();
    assert_eq!(
        claim(&conn, "nope", "a", None, None),
        Err(BoardError::no_task("nope"))
    );
    let t = todo(&conn, "t");
    let won = claim(&conn, &t.id, "a", Some("codex"), None).unwrap();
    assert_eq!(won.status, Status::InProgress);
    assert_eq!(won.assignee_agent_id.as_deref(), Some("a"));
    assert_eq!(won.assignee_runtime.as_deref(), Some("codex"));
    assert_eq!(
        claim(&conn, &t.id, "a", None, None),
        Err(BoardError::Conflict)
    );
    assert_eq!(
        claim(&conn, &t.id, "b", None, None),
        Err(BoardError::Conflict)
    );

    let dropped = todo(&conn, "dropped");
    soft_drop(&conn, &dropped.id);
    assert_eq!(
        claim(&conn, &dropped.id, "a", None, None),
        Err(BoardError::Conflict)
    );
    let backlog = insert(
        &conn,
        &NewTask {
            title: "b".into(),
            status: Some(Status::Backlog),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        claim(&conn, &backlog.id, "a", None, None),
        Err(BoardError::Conflict)
    );
}

#[test]
fn two_connections_on_one_file_claim_a_task_once() {
    let (dir, first) = file_db();
    let second = Db::open(first.path()).unwrap();
    let t = todo(&first.conn(), "shared");
    let a = claim(&first.conn(), &t.id, "agent-a", None, None);
    let b = claim(&second.conn(), &t.id, "agent-b", None, None);
    assert!(a.is_ok());
    assert_eq!(b, Err(BoardError::Conflict));
    let stored = get(&second.conn(), &t.id).unwrap().unwrap();
    assert_eq!(stored.status, Status::InProgress);
    assert_eq!(stored.assignee_agent_id.as_deref(), Some("agent-a"));
    drop((first, second));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn moving_to_todo_releases_and_another_agent_can_claim() {
    let db = db();
    let conn = db.conn();
    let t = todo(&conn, "t");
    let refused = update_status(&conn, &t.id, Status::Done).unwrap_err();
    assert_eq!(
        refused,
        BoardError::IllegalTransition {
            from: "todo".into(),
            to: Status::Done,
            allowed: Status::Todo.legal_targets(),
        }
    );
    assert_eq!(
        refused.reason(),
        "illegal_transition (todo → done; allowed: in_progress, blocked, backlog, cancelled)"
    );
    claim(&conn, &t.id, "agent-a", Some("rt"), None).unwrap();
    let back = update_status(&conn, &t.id, Status::Todo).unwrap();
    assert_eq!(back.status, Status::Todo);
    assert_eq!(back.assignee_agent_id, None);
    assert_eq!(back.assignee_runtime, None);
    let again = claim(&conn, &t.id, "agent-b", None, None).unwrap();
    assert_eq!(again.assignee_agent_id.as_deref(), Some("agent-b"));
    let done = update_status(&conn, &t.id, Status::Done).unwrap();
    assert!(done.completed_at.is_some());
    assert_eq!(
        update_status(&conn, "nope", Status::Todo),
        Err(BoardError::no_task("nope"))
    );
}

#[test]
fn release_only_moves_in_progress_tasks_and_clears_the_verdict() {
    let db = db();
    let conn = db.conn();
    assert_eq!(release(&conn, "nope"), Err(BoardError::no_task("nope")));
    let t = todo(&conn, "t");
    let refused = release(&conn, &t.id).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "illegal_transition (todo → todo; allowed: none)"
    );
    claim(&conn, &t.id, "a", Some("runtime-a"), None).unwrap();
    set_verdict(&conn, &t.id, Some(r#"{"status":"fail"}"#));
    let released = release(&conn, &t.id).unwrap();
    assert_eq!(released.status, Status::Todo);
    assert_eq!(released.verification, None);
    assert_eq!(released.assignee_agent_id, None);
    claim(&conn, &t.id, "b", Some("runtime-b"), None).unwrap();
    update_status(&conn, &t.id, Status::InReview).unwrap();
    assert!(matches!(
        release(&conn, &t.id),
        Err(BoardError::IllegalTransition { from, to: Status::Todo, allowed: [] }) if from == "in_review"
    ));
    assert_eq!(
        update_status(&conn, &t.id, Status::Done).unwrap().status,
        Status::Done
    );
}

#[test]
fn the_verdict_gate_decides_done() {
    let cases = [
        (None, false),
        (Some(""), false),
        (Some("  "), false),
        (Some("{broken"), false),
        (Some(r#"{"status":"pass","attempts":[]}"#), false),
        (
            Some(r#"{"status":"fail","attempts":[{"deterministic":{"passed":true}}]}"#),
            true,
        ),
        (
            Some(
                r#"{"status":"completed_with_debt","attempts":[{"deterministic":{"passed":false}},{"deterministic":{"passed":true}}]}"#,
            ),
            false,
        ),
        (
            Some(
                r#"{"status":"completed_with_debt","attempts":[{"deterministic":{"passed":true}},{"deterministic":{"passed":false}}]}"#,
            ),
            true,
        ),
        (
            Some(r#"{"status":"completed_with_debt","attempts":[]}"#),
            true,
        ),
        (Some(r#"{"status":"something_else"}"#), true),
    ];
    for (verdict, blocks) in cases {
        assert_eq!(verdict_blocks_done(verdict), blocks, "{verdict:?}");
    }
    let db = db();
    let conn = db.conn();
    let t = todo(&conn, "t");
    claim(&conn, &t.id, "a", None, None).unwrap();
    update_status(&conn, &t.id, Status::InReview).unwrap();
    set_verdict(&conn, &t.id, Some(r#"{"status":"fail"}"#));
    assert_eq!(
        update_status(&conn, &t.id, Status::Done),
        Err(BoardError::VerificationRequired)
    );
    assert_eq!(get(&conn, &t.id).unwrap().unwrap().status, Status::InReview);
    let back = update_status(&conn, &t.id, Status::InProgress).unwrap();
    assert!(back.verification.is_some(), "only a move to todo clears it");
}

#[test]
fn child_cap_counts_live_children_of_any_status_on_any_connection() {
    let (dir, first) = file_db();
    let second = Db::open(first.path()).unwrap();
    let caps = Caps {
        max_children: 3,
        ..Caps::default()
    };
    let parent = insert(
        &first.conn(),
        &NewTask {
            title: "p".into(),
            team_id: Some("team1".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let a = sub(&first.conn(), &parent.id, caps).unwrap();
    assert_eq!(a.team_id.as_deref(), Some("team1"), "inherits the team");
    sub(&second.conn(), &parent.id, caps).unwrap();
    let c = sub(&first.conn(), &parent.id, caps).unwrap();
    assert_eq!(
        sub(&second.conn(), &parent.id, caps),
        Err(BoardError::ChildCap {
            parent: parent.id.clone(),
            count: 3,
            max: 3
        })
    );
    claim(&first.conn(), &c.id, "x", None, None).unwrap();
    update_status(&first.conn(), &c.id, Status::Done).unwrap();
    assert!(matches!(
        sub(&first.conn(), &parent.id, caps),
        Err(BoardError::ChildCap { .. })
    ));
    soft_drop(&first.conn(), &a.id);
    sub(&first.conn(), &parent.id, caps).unwrap();
    let children: i64 = first
        .conn()
        .query_row(
            "SELECT count(*) FROM tasks WHERE parent_task_id = ?1 AND dropped = 0",
            [&parent.id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(children, 3);
    assert_eq!(
        sub(&first.conn(), "ghost", caps),
        Err(BoardError::NotFound {
            id: "ghost".into(),
            role: TaskRole::Parent
        })
    );
    drop((first, second));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn depth_cap_allows_three_levels() {
    let db = db();
    let conn = db.conn();
    let caps = Caps::default();
    let r = todo(&conn, "root");
    let one = sub(&conn, &r.id, caps).unwrap();
    let two = sub(&conn, &one.id, caps).unwrap();
    assert_eq!(
        sub(&conn, &two.id, caps),
        Err(BoardError::DepthCap {
            parent: two.id.clone(),
            max: 2
        })
    );
    let deeper = Caps {
        max_depth: 3,
        ..caps
    };
    sub(&conn, &two.id, deeper).unwrap();
    // A dropped parent is still a parent.
    soft_drop(&conn, &one.id);
    sub(&conn, &one.id, caps).unwrap();
}

#[test]
fn root_rate_counts_live_roots_in_the_window_board_wide() {
    let db = db();
    let conn = db.conn();
    let caps = Caps {
        max_root_creates: 3,
        root_window_ms: 300_000,
        ..Caps::default()
    };
    let first = root(&conn, caps).unwrap();
    todo(&conn, "uncapped roots count too");
    let third = root(&conn, caps).unwrap();
    sub(&conn, &first.id, caps).unwrap();
    let refused = root(&conn, caps).unwrap_err();
    assert_eq!(
        refused,
        BoardError::RootRateCap {
            count: 3,
            max: 3,
            window_ms: 300_000
        }
    );
    assert_eq!(
        refused.to_string(),
        "task rejected: 3 root tasks already created in the last 5 min (max 3); attach this work to an existing task with parentTaskId instead of opening another"
    );
    assert_eq!(refused.cap_reason(), Some("root_rate_cap"));
    let total: i64 = conn
        .query_row("SELECT count(*) FROM tasks", [], |r| r.get(0))
        .unwrap();
    assert_eq!(total, 4, "the refusal wrote nothing");
    root(
        &conn,
        Caps {
            root_window_ms: 0,
            ..caps
        },
    )
    .unwrap();
    soft_drop(&conn, &third.id);
    assert!(root(&conn, caps).is_err(), "the zero-window root counts");
    soft_drop(&conn, &first.id);
    root(&conn, caps).unwrap();
}

#[test]
fn cap_texts_and_reasons_are_the_reference_wire_literals() {
    let child = BoardError::ChildCap {
        parent: "p".into(),
        count: 24,
        max: 24,
    };
    assert_eq!(
        child.to_string(),
        "subtask rejected: parent p already has 24 children (max 24); drop one or attach the new task elsewhere"
    );
    assert_eq!(child.cap_reason(), Some("child_cap"));
    let depth = BoardError::DepthCap {
        parent: "p".into(),
        max: 2,
    };
    assert_eq!(
        depth.to_string(),
        "subtask rejected: parent p is at the maximum nesting depth (2); attach the new task higher in the tree"
    );
    assert_eq!(depth.cap_reason(), Some("depth_cap"));
    let parent = BoardError::NotFound {
        id: "nope".into(),
        role: TaskRole::Parent,
    };
    assert_eq!(parent.to_string(), "parent not found: nope");
    assert_eq!(parent.cap_reason(), Some("parent_not_found"));
    let ninety_seconds = BoardError::RootRateCap {
        count: 1,
        max: 1,
        window_ms: 90_000,
    };
    assert!(ninety_seconds.to_string().contains("in the last 2 min"));
    for other in [
        BoardError::no_task("x"),
        BoardError::Conflict,
        BoardError::IllegalTransition {
            from: "done".into(),
            to: Status::Todo,
            allowed: &[],
        },
        BoardError::VerificationRequired,
    ] {
        assert_eq!(other.cap_reason(), None, "{other}");
    }
}

#[test]
fn ready_list_needs_every_dependency_done_and_sorts_by_priority() {
    let db = db();
    let conn = db.conn();
    let with_priority = |title: &str, priority: i64| {
        insert(
            &conn,
            &NewTask {
                title: title.into(),
                priority: Some(priority),
                ..Default::default()
            },
        )
        .unwrap()
    };
    let low = with_priority("low", 1);
    with_priority("high", 9);
    let waiting = with_priority("waiting", 5);
    let gone = with_priority("gone", 7);
    soft_drop(&conn, &gone.id);
    link(&conn, &waiting.id, &low.id).unwrap();
    let ready = |conn: &Connection| -> Vec<String> {
        list(
            conn,
            &ListFilter {
                ready: true,
                status: Some(Status::Done),
                ..Default::default()
            },
        )
        .unwrap()
        .into_iter()
        .map(|t| t.title)
        .collect()
    };
    assert_eq!(ready(&conn), ["high", "low"]);
    claim(&conn, &low.id, "a", None, None).unwrap();
    update_status(&conn, &low.id, Status::Done).unwrap();
    soft_drop(&conn, &low.id);
    assert_eq!(
        ready(&conn),
        ["high", "waiting"],
        "a dropped-but-done blocker counts as done"
    );
    let all = list(&conn, &ListFilter::default()).unwrap();
    assert!(all.iter().all(|t| t.dropped == 0));
    assert_eq!(all.len(), 2);
}

#[test]
fn links_refuse_cycles_of_any_length_and_tolerate_duplicates() {
    let db = db();
    let conn = db.conn();
    let a = todo(&conn, "a");
    let b = todo(&conn, "b");
    let c = todo(&conn, "c");
    assert!(matches!(
        link(&conn, "ghost", "ghost"),
        Err(BoardError::Cycle { .. })
    ));
    link(&conn, &b.id, &a.id).unwrap();
    link(&conn, &b.id, &a.id).unwrap();
    assert!(matches!(
        link(&conn, &a.id, &b.id),
        Err(BoardError::Cycle { .. })
    ));
    link(&conn, &c.id, &b.id).unwrap();
    let err = link(&conn, &a.id, &c.id).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "linking {} to {} would create a dependency cycle",
            a.id, c.id
        )
    );
    assert_eq!(
        link(&conn, &a.id, "ghost"),
        Err(BoardError::no_task("ghost"))
    );
    let edges: i64 = conn
        .query_row("SELECT count(*) FROM task_deps", [], |r| r.get(0))
        .unwrap();
    assert_eq!(edges, 2);
}

#[test]
fn ancestors_come_root_first_and_a_corrupt_cycle_ends_the_walk() {
    let db = db();
    let conn = db.conn();
    let caps = Caps::default();
    let r = todo(&conn, "root");
    let child = sub(&conn, &r.id, caps).unwrap();
    let grand = sub(&conn, &child.id, caps).unwrap();
    let chain: Vec<String> = ancestors(&conn, &grand.id)
        .unwrap()
        .into_iter()
        .map(|a| a.id)
        .collect();
    assert_eq!(chain, [r.id.clone(), child.id.clone()]);
    assert!(ancestors(&conn, &r.id).unwrap().is_empty());
    conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    conn.execute(
        "UPDATE tasks SET parent_task_id = ?1 WHERE id = ?2",
        [&grand.id, &r.id],
    )
    .unwrap();
    let looped = ancestors(&conn, &grand.id).unwrap();
    assert_eq!(looped.len(), 2, "{looped:?}");
}

#[test]
fn comments_are_oldest_first_and_leave_updated_at_alone() {
    let db = db();
    let conn = db.conn();
    let t = todo(&conn, "t");
    for body in ["one", "two", "three"] {
        add_comment(&conn, &t.id, body, Some("a"), AuthorType::User).unwrap();
    }
    let bodies: Vec<String> = comments(&conn, &t.id)
        .unwrap()
        .into_iter()
        .map(|c| c.body)
        .collect();
    assert_eq!(bodies, ["one", "two", "three"]);
    assert_eq!(get(&conn, &t.id).unwrap().unwrap().updated_at, t.updated_at);
    soft_drop(&conn, &t.id);
    let on_dropped = add_comment(&conn, &t.id, "", None, AuthorType::System).unwrap();
    assert_eq!(on_dropped.author_type, "system");
    assert_eq!(
        add_comment(&conn, "ghost", "x", None, AuthorType::Agent),
        Err(BoardError::no_task("ghost"))
    );
}

#[test]
fn the_root_window_slides_with_the_database_clock() {
    let start = 1_700_000_000_000;
    let db = db().with_clock(crate::db::Clock::manual(start));
    let conn = db.conn();
    let caps = Caps {
        max_root_creates: 2,
        root_window_ms: 300_000,
        ..Caps::default()
    };
    let first = root(&conn, caps).unwrap();
    assert_eq!((first.created_at, first.updated_at), (start, start));
    root(&conn, caps).unwrap();
    db.clock()
        .advance(std::time::Duration::from_millis(299_999));
    assert!(
        matches!(
            root(&conn, caps),
            Err(BoardError::RootRateCap { count: 2, .. })
        ),
        "both roots are still inside the window"
    );
    db.clock().advance(std::time::Duration::from_millis(1));
    let later = root(&conn, caps).unwrap();
    assert_eq!(later.created_at, start + 300_000);
}

#[test]
fn status_moves_are_stamped_with_the_database_clock() {
    let start = 1_700_000_000_000;
    let db = db().with_clock(crate::db::Clock::manual(start));
    let conn = db.conn();
    let task = todo(&conn, "t");
    update_status(&conn, &task.id, Status::InProgress).unwrap();
    db.clock().advance(std::time::Duration::from_secs(1));
    let done = update_status(&conn, &task.id, Status::Done).unwrap();
    assert_eq!(done.completed_at, Some(start + 1_000));
    db.clock().advance(std::time::Duration::from_secs(1));
    let again = update_status(&conn, &task.id, Status::Done).unwrap();
    assert_eq!(
        (again.completed_at, again.updated_at),
        (Some(start + 2_000), start + 2_000),
        "a same-status move to a terminal status re-stamps completedAt"
    );
    assert_eq!(again.created_at, start);
}

#[test]
fn a_stored_status_the_board_does_not_know_is_an_error_naming_it() {
    let db = db();
    let conn = db.conn();
    let task = todo(&conn, "t");
    conn.execute(
        "UPDATE tasks SET status = 'archived' WHERE id = ?1",
        [&task.id],
    )
    .unwrap();
    let err = get(&conn, &task.id).unwrap_err();
    assert!(
        err.to_string().contains("unknown task status \"archived\""),
        "{err}"
    );
}

#[test]
fn one_missing_task_error_reads_as_each_wire_text_and_keeps_its_source() {
    let missing = BoardError::no_task("t-1");
    assert_eq!(missing.to_string(), "not found: t-1");
    assert_eq!(missing.reason(), "not_found");
    assert_eq!(missing.cap_reason(), None);
    for (err, code) in [
        (BoardError::Conflict, "conflict"),
        (BoardError::VerificationRequired, "verification_required"),
    ] {
        assert_eq!(err.reason(), code);
    }
    let db_error = BoardError::from(rusqlite::Error::QueryReturnedNoRows);
    assert_eq!(
        db_error.to_string(),
        "database error: Query returned no rows"
    );
    let source = std::error::Error::source(&db_error).expect("the rusqlite error is kept");
    assert_eq!(source.to_string(), "Query returned no rows");
}

#[test]
fn an_illegal_move_names_both_ends_and_the_legal_targets_with_the_code_first() {
    let db = db();
    let conn = db.conn();
    for from in Status::ALL {
        for to in Status::ALL {
            if from.can_transition(to) {
                continue;
            }
            let t = insert(
                &conn,
                &NewTask {
                    title: "t".into(),
                    status: Some(from),
                    ..Default::default()
                },
            )
            .unwrap();
            let text = update_status(&conn, &t.id, to).unwrap_err().reason();
            assert!(text.starts_with("illegal_transition ("), "{text}");
            let allowed: Vec<&str> = from.legal_targets().iter().map(|s| s.as_str()).collect();
            let allowed = if allowed.is_empty() {
                "none".to_owned()
            } else {
                allowed.join(", ")
            };
            assert_eq!(
                text,
                format!(
                    "illegal_transition ({} → {}; allowed: {allowed})",
                    from.as_str(),
                    to.as_str()
                )
            );
        }
    }
    let t = todo(&conn, "t");
    conn.execute(
        "UPDATE tasks SET status = 'archived' WHERE id = ?1",
        [&t.id],
    )
    .unwrap();
    assert_eq!(
        update_status(&conn, &t.id, Status::Todo)
            .unwrap_err()
            .reason(),
        "illegal_transition (archived → todo; allowed: none)",
        "a status the board does not know can go nowhere, and is named as stored"
    );
}
