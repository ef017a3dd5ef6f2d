//! Upgrades: a file written by today's steps takes a new step and keeps its rows; a file written
//! by the reference (its DDL as the specs give it, no recorded versions) opens and reads.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};

use rusqlite::Connection;
use serde_json::json;

use super::*;
use crate::board::{self, AuthorType, NewTask, Status};
use crate::broker::approvals::{self, NewApproval};
use crate::broker::audit::{self, Actor, Decision};
use crate::db::{Step, add_column_if_missing, new_id};
use crate::memory::{self, Embedder, Entry, Memory, ReadScope, SearchMode};
use crate::teamchat::{self, NewPost, PostKind};

/// The column the example migration adds.
const NEW_COLUMN: &str = "review_note";

/// A fresh folder for one test's file; removed by [`Scratch::drop`].
struct Scratch(PathBuf);

impl Scratch {
    fn new(label: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("clawboo-schema-{label}-{}", new_id()));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn db_path(&self) -> PathBuf {
        self.0.join("clawboo.db")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Today's components with one more board step: the recipe's way to add a column.
fn next_components() -> Vec<SchemaPart> {
    let mut board_steps = crate::board::SCHEMA.steps.to_vec();
    board_steps.push(Step::AddColumn {
        table: "tasks",
        column: NEW_COLUMN,
        definition: "TEXT NOT NULL DEFAULT ''",
    });
    let board = SchemaPart {
        component: crate::board::SCHEMA.component,
        steps: Box::leak(board_steps.into_boxed_slice()),
    };
    COMPONENTS
        .iter()
        .map(|part| {
            if part.component == board.component {
                board
            } else {
                *part
            }
        })
        .collect()
}

fn has_column(conn: &Connection, table: &str, column: &str) -> bool {
    conn.query_row(
        "SELECT count(*) AS n FROM pragma_table_info(?1) WHERE name = ?2",
        [table, column],
        |r| r.get::<_, i64>("n"),
    )
    .unwrap()
        == 1
}

fn recorded_version(conn: &Connection, component: &str) -> Option<i64> {
    conn.query_row(
        "SELECT version FROM clawboo_schema_versions WHERE component = ?1",
        [component],
        |r| r.get("version"),
    )
    .ok()
}

/// What [`write_today`] stored, to compare after the upgrade.
struct Written {
    task: board::Task,
    comment: board::Comment,
    post: teamchat::ChatPost,
}

/// Writes one row of each kind through the repositories, on a file of today's schema.
fn write_today(path: &Path) -> Written {
    let db = Db::open(path).unwrap();
    let conn = db.conn();
    let task = board::insert(
        &conn,
        &NewTask {
            title: "ship the migration".into(),
            description: Some("with a test".into()),
            team_id: Some("core".into()),
            ..NewTask::default()
        },
    )
    .unwrap();
    let comment =
        board::add_comment(&conn, &task.id, "looks good", Some("a1"), AuthorType::Agent).unwrap();
    memory::seed_facts(&conn, [("deploy window", "deploys happen on tuesdays")]).unwrap();
    let post = teamchat::post(
        &conn,
        &NewPost {
            room_id: "team:core",
            team_id: "core",
            author_agent_id: "a1",
            body: "starting the migration",
            kind: PostKind::Peer,
        },
    )
    .unwrap();
    Written {
        task,
        comment,
        post,
    }
}

#[test]
fn a_file_of_todays_schema_takes_a_new_column_and_keeps_every_row() {
    let scratch = Scratch::new("upgrade");
    let path = scratch.db_path();
    let written = write_today(&path);
    let next = next_components();
    let board_steps = next[0].steps.len() as i64;

    let db = Db::open_with_schema(&path, &next).unwrap();
    {
        let conn = db.conn();
        assert!(has_column(&conn, "tasks", NEW_COLUMN));
        assert_eq!(recorded_version(&conn, "board"), Some(board_steps));
        let filled: String = conn
            .query_row(
                &format!("SELECT {NEW_COLUMN} AS v FROM tasks WHERE id = ?1"),
                [&written.task.id],
                |r| r.get("v"),
            )
            .unwrap();
        assert_eq!(filled, "", "old rows take the column's default");
        assert_eq!(
            board::get(&conn, &written.task.id).unwrap(),
            Some(written.task.clone())
        );
        assert_eq!(
            board::comments(&conn, &written.task.id).unwrap(),
            [written.comment]
        );
        let batch = teamchat::read_batch(&conn, "team:core", 0, "someone-else", 10).unwrap();
        assert_eq!(batch.posts, [written.post]);
        // Writing after the upgrade works, and the new column reads by name.
        let later = board::insert(&conn, &NewTask::default()).unwrap();
        assert_eq!(later.status, Status::Todo);
    }
    drop(db);

    // Opening again with the same steps changes nothing; so does an older build (today's steps),
    // which must not lower the recorded version.
    drop(Db::open_with_schema(&path, &next).unwrap());
    let older = Db::open(&path).unwrap();
    let conn = older.conn();
    assert_eq!(recorded_version(&conn, "board"), Some(board_steps));
    assert!(has_column(&conn, "tasks", NEW_COLUMN));
    assert_eq!(board::list(&conn, &Default::default()).unwrap().len(), 2);
    drop(conn);
    let memory = Memory::new(older, Embedder::none());
    let facts = memory
        .search("tuesday", Some(SearchMode::Fts), 5, &ReadScope::default())
        .unwrap();
    assert_eq!(
        facts.hits.len(),
        1,
        "the full-text index survived the upgrade"
    );
}

#[test]
fn processes_migrating_one_file_at_once_add_the_column_exactly_once() {
    let scratch = Scratch::new("upgrade-race");
    let path = scratch.db_path();
    let written = write_today(&path);
    let next = Arc::new(next_components());
    let start = Arc::new(Barrier::new(8));
    let openers: Vec<_> = (0..8)
        .map(|_| {
            let (path, next, start) = (path.clone(), next.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                Db::open_with_schema(&path, &next).map(drop)
            })
        })
        .collect();
    for opener in openers {
        opener.join().unwrap().unwrap();
    }
    let db = Db::open_with_schema(&path, &next).unwrap();
    let conn = db.conn();
    assert!(has_column(&conn, "tasks", NEW_COLUMN));
    assert_eq!(
        board::get(&conn, &written.task.id).unwrap(),
        Some(written.task)
    );
}

#[test]
fn adding_a_column_checks_the_table_first_and_refuses_names_that_need_quoting() {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch("CREATE TABLE t (a TEXT)").unwrap();
    assert!(add_column_if_missing(&conn, "t", "b", "INTEGER NOT NULL DEFAULT 0").unwrap());
    assert!(!add_column_if_missing(&conn, "t", "b", "INTEGER NOT NULL DEFAULT 0").unwrap());
    assert!(!add_column_if_missing(&conn, "t", "a", "TEXT").unwrap());
    for (table, column) in [
        ("t", "b; DROP TABLE t"),
        ("t t", "c"),
        ("t", "1c"),
        ("t", ""),
    ] {
        let err = add_column_if_missing(&conn, table, column, "TEXT").unwrap_err();
        assert!(
            err.to_string().contains("not a plain SQL identifier"),
            "{err}"
        );
    }
    let err = add_column_if_missing(&conn, "missing", "c", "TEXT").unwrap_err();
    assert!(err.to_string().contains("no such table"), "{err}");
    let columns: i64 = conn
        .query_row(
            "SELECT count(*) AS n FROM pragma_table_info('t')",
            [],
            |r| r.get("n"),
        )
        .unwrap();
    assert_eq!(columns, 2);
}

/// Rows as the reference writes them: every column named, times in ms.
const REFERENCE_ROWS: &str = "
INSERT INTO tasks (id, title, description, status, priority, team_id, assignee_agent_id,
    assignee_runtime, parent_task_id, source_delegation_id, worktree_ref, branch_ref, cost_usd,
    parent_session_id, dropped, tenant_id, verification, scheduled_by, created_at, updated_at,
    completed_at)
VALUES ('11111111-1111-4111-8111-111111111111', 'written by the reference', NULL, 'in_progress', 3,
    'ref', 'agent-r', 'openclaw', NULL, NULL, NULL, NULL, 0.25, NULL, 0, NULL, NULL, 'manual',
    1700000000000, 1700000000500, NULL);
INSERT INTO task_comments (id, task_id, author_agent_id, author_type, body, tenant_id, created_at)
VALUES ('22222222-2222-4222-8222-222222222222', '11111111-1111-4111-8111-111111111111', 'agent-r',
    'agent', 'halfway there', NULL, 1700000000600);
INSERT INTO memory_facts (id, title, content, tags, embedding, embedding_model, scope_agent_id,
    scope_team_id, tenant_id, created_at, updated_at)
VALUES ('33333333-3333-4333-8333-333333333333', 'release train', 'the release train leaves fridays',
    '[\"process\"]', NULL, NULL, NULL, 'ref', NULL, 1700000000000, 1700000000000);
INSERT INTO memory_procedures (id, name, version, content, scope_agent_id, scope_team_id,
    tenant_id, created_at)
VALUES ('44444444-4444-4444-8444-444444444444', 'cut-release', 2, 'tag, build, publish', NULL, NULL,
    NULL, 1700000000100);
INSERT INTO team_chat (id, room_id, team_id, author_agent_id, body, kind, created_at, seq)
VALUES ('55555555-5555-4555-8555-555555555555', 'team:ref', 'ref', 'agent-r', 'hello from the reference',
    'peer', 1700000000200, 1);
INSERT INTO tool_call_audit (id, tool_name, agent_id, phase, decision, args_summary, result_summary,
    is_error, tenant_id, created_at)
VALUES ('66666666-6666-4666-8666-666666666666', 'echo', 'agent-r', 'before', 'allow', '{}', NULL, 0,
    NULL, 1700000000300);
INSERT INTO tool_call_approvals (id, tool_name, agent_id, args_summary, reason, status, task_id,
    tenant_id, created_at, expires_at, resolved_at)
VALUES ('77777777-7777-4777-8777-777777777777', 'delete_path', 'agent-r', '{}', 'destructive',
    'deny', NULL, NULL, 1700000000400, 1700000060400, 1700000000450);
";

fn write_reference_file(path: &Path) {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(clawboo_tests::reference::DDL).unwrap();
    conn.execute_batch(REFERENCE_ROWS).unwrap();
}

#[test]
fn a_file_written_by_the_reference_opens_and_every_row_reads() {
    let scratch = Scratch::new("reference");
    let path = scratch.db_path();
    write_reference_file(&path);

    let db = Db::open(&path).unwrap();
    {
        let conn = db.conn();
        let task = board::get(&conn, "11111111-1111-4111-8111-111111111111")
            .unwrap()
            .expect("the reference's task");
        assert_eq!(
            (task.title.as_str(), task.status, task.priority),
            ("written by the reference", Status::InProgress, 3)
        );
        assert_eq!(task.assignee_agent_id.as_deref(), Some("agent-r"));
        assert_eq!(task.cost_usd, 0.25);
        assert_eq!(
            (task.created_at, task.updated_at),
            (1_700_000_000_000, 1_700_000_000_500)
        );
        let comments = board::comments(&conn, &task.id).unwrap();
        assert_eq!(comments.len(), 1);
        assert_eq!(comments[0].body, "halfway there");

        let batch = teamchat::read_batch(&conn, "team:ref", 0, "me", 10).unwrap();
        assert_eq!(batch.posts.len(), 1);
        assert_eq!(batch.posts[0].body, "hello from the reference");
        assert_eq!(batch.next_seq, 1);

        let audit = audit::list(&conn, Some("echo"), 10).unwrap();
        assert_eq!(audit.len(), 1);
        assert_eq!(audit[0].decision.as_deref(), Some("allow"));
        let approval = approvals::get(&conn, "77777777-7777-4777-8777-777777777777")
            .unwrap()
            .expect("the reference's approval");
        assert_eq!(approval.status(), approvals::Status::Deny);
        assert_eq!(approval.resolved_at, Some(1_700_000_000_450));

        // Our writes land beside the reference's rows.
        teamchat::post(
            &conn,
            &NewPost {
                room_id: "team:ref",
                team_id: "ref",
                author_agent_id: "me",
                body: "hello back",
                kind: PostKind::Peer,
            },
        )
        .unwrap();
        audit::write_before(
            &conn,
            "echo",
            Actor::default(),
            Decision::Allow,
            &json!({}),
            None,
        )
        .unwrap();
        approvals::create(
            &conn,
            &NewApproval {
                tool_name: "delete_path",
                actor: Actor::default(),
                args: &json!({}),
                reason: "destructive",
                ttl: std::time::Duration::from_secs(60),
                heartbeat: None,
            },
        )
        .unwrap();
        assert_eq!(teamchat::room_max_seq(&conn, "team:ref").unwrap(), 2);
    }
    let memory = Memory::new(db, Embedder::none());
    let browsed = memory.browse(10, &ReadScope::default()).unwrap();
    let titles: Vec<&str> = browsed
        .iter()
        .map(|entry| match entry {
            Entry::Fact(f) => f.title.as_str(),
            Entry::Procedure(p) => p.name.as_str(),
        })
        .collect();
    assert_eq!(titles, ["cut-release", "release train"]);
    let found = memory
        .search("fridays", Some(SearchMode::Fts), 5, &ReadScope::default())
        .unwrap();
    assert_eq!(found.hits.len(), 1, "the reference's fact is searchable");
    drop(memory);

    // The reference's file takes a later migration too.
    let upgraded = Db::open_with_schema(&path, &next_components()).unwrap();
    let conn = upgraded.conn();
    assert!(has_column(&conn, "tasks", NEW_COLUMN));
    assert_eq!(
        board::get(&conn, "11111111-1111-4111-8111-111111111111")
            .unwrap()
            .map(|t| t.title),
        Some("written by the reference".to_owned())
    );
    assert_eq!(clawboo_integrity(&conn), "ok");
}

fn clawboo_integrity(conn: &Connection) -> String {
    conn.query_row("PRAGMA integrity_check", [], |r| r.get("integrity_check"))
        .unwrap()
}
