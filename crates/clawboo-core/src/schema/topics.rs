//! What changed, by topic: one statement over every component's tables that the operator console
//! shows, answering a stamp per topic (row counts, the highest `rowid`, the newest update time),
//! so the host's one change task can tell which views to refresh after a commit.
//!
//! Also the row counts the console's health view shows ([`row_counts`]).
//!
//! Guarantees: an insert, a delete or an update that moves a time column changes its topic's
//! stamp; one statement per call, however many browsers listen. Must never: write, or be run per
//! browser (the host runs it once per wake of its one `db::watch` listener).

use rusqlite::Connection;

/// The topics, in the order [`stamps`] answers them (the console's event names).
pub const TOPICS: [&str; 6] = [
    "board",
    "teamchat",
    "memory",
    "approvals",
    "audit",
    "operator",
];

/// One stamp per topic of [`TOPICS`].
pub type Stamps = [String; 6];

/// The stamps of every topic now.
pub fn stamps(conn: &Connection) -> rusqlite::Result<Stamps> {
    conn.prepare_cached(
        "SELECT
          (SELECT count(*) || ':' || ifnull(max(rowid), 0) || ':' || ifnull(max(updated_at), 0)
             FROM tasks)
          || '/' || (SELECT count(*) || ':' || ifnull(max(rowid), 0) FROM task_comments)
          || '/' || (SELECT count(*) FROM task_deps) AS board,
          (SELECT count(*) || ':' || ifnull(max(rowid), 0) FROM team_chat) AS teamchat,
          (SELECT count(*) || ':' || ifnull(max(rowid), 0) || ':' || ifnull(max(updated_at), 0)
             FROM memory_facts)
          || '/' || (SELECT count(*) || ':' || ifnull(max(rowid), 0) FROM memory_procedures)
             AS memory,
          (SELECT count(*) || ':' || ifnull(max(rowid), 0) || ':' || ifnull(max(resolved_at), 0)
                  || ':' || ifnull(sum(status = 'pending'), 0) FROM tool_call_approvals) AS approvals,
          (SELECT count(*) || ':' || ifnull(max(rowid), 0) FROM tool_call_audit) AS audit,
          (SELECT count(*) || ':' || ifnull(max(rowid), 0) FROM operator_actions) AS operator",
    )?
    .query_row([], |r| {
        Ok([
            r.get("board")?,
            r.get("teamchat")?,
            r.get("memory")?,
            r.get("approvals")?,
            r.get("audit")?,
            r.get("operator")?,
        ])
    })
}

/// The row count of every table the console shows, by table name.
pub fn row_counts(conn: &Connection) -> rusqlite::Result<Vec<(&'static str, i64)>> {
    const TABLES: [&str; 10] = [
        "tasks",
        "task_deps",
        "task_comments",
        "team_chat",
        "memory_facts",
        "memory_procedures",
        "tool_call_audit",
        "tool_call_approvals",
        "tool_notes",
        "operator_actions",
    ];
    let counts: Vec<i64> = conn
        .prepare_cached(
            "SELECT (SELECT count(*) FROM tasks) AS tasks,
                    (SELECT count(*) FROM task_deps) AS task_deps,
                    (SELECT count(*) FROM task_comments) AS task_comments,
                    (SELECT count(*) FROM team_chat) AS team_chat,
                    (SELECT count(*) FROM memory_facts) AS memory_facts,
                    (SELECT count(*) FROM memory_procedures) AS memory_procedures,
                    (SELECT count(*) FROM tool_call_audit) AS tool_call_audit,
                    (SELECT count(*) FROM tool_call_approvals) AS tool_call_approvals,
                    (SELECT count(*) FROM tool_notes) AS tool_notes,
                    (SELECT count(*) FROM operator_actions) AS operator_actions",
        )?
        .query_row([], |r| TABLES.iter().map(|t| r.get(*t)).collect())?;
    Ok(TABLES.into_iter().zip(counts).collect())
}

/// The topics whose stamp differs between `before` and `after`.
pub fn changed(before: &Stamps, after: &Stamps) -> Vec<&'static str> {
    TOPICS
        .iter()
        .zip(before.iter().zip(after))
        .filter(|(_, (a, b))| a != b)
        .map(|(topic, _)| *topic)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Db;
    use crate::teamchat::{NewPost, PostKind, post};

    #[test]
    fn a_post_changes_the_teamchat_stamp_only() {
        let db = Db::open_in_memory().unwrap();
        let conn = db.conn();
        let before = stamps(&conn).unwrap();
        post(
            &conn,
            &NewPost {
                room_id: "team:t",
                team_id: "t",
                author_agent_id: "a",
                body: "hi",
                kind: PostKind::Peer,
            },
        )
        .unwrap();
        let after = stamps(&conn).unwrap();
        assert_eq!(changed(&before, &after), ["teamchat"]);
        assert!(changed(&after, &stamps(&conn).unwrap()).is_empty());
    }
}
