//! The operator actions log: who did what through the console (a fact deleted or seeded, a
//! comment or post by a person, an approval resolved), in the `operator_actions` table (ours).
//!
//! Owns: every read and write of `operator_actions`. Guarantees: append-only; rows come back newest
//! first, paged by a [`Keyset`] cursor; the target is stored scrubbed. Must never: update or delete
//! a row; record a token (the actor is a token's *name* or "local operator").

use rusqlite::{Connection, Row, params};
use serde::Serialize;

use crate::db::{Conn, Keyset, new_id};
use crate::scrub::scrub_secrets;

/// What a person did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Deleted a fact or a procedure version.
    MemoryDelete,
    /// Seeded a fact or a procedure.
    MemorySeed,
    /// Commented on a task.
    BoardComment,
    /// Posted into a team room.
    TeamchatPost,
    /// Resolved an approval.
    ApprovalResolve,
}

impl Action {
    /// The stored value (`memory.delete`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Action::MemoryDelete => "memory.delete",
            Action::MemorySeed => "memory.seed",
            Action::BoardComment => "board.comment",
            Action::TeamchatPost => "teamchat.post",
            Action::ApprovalResolve => "approval.resolve",
        }
    }
}

/// One recorded action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionRow {
    /// UUID v4.
    pub id: String,
    /// The token's name, or "local operator".
    pub actor: String,
    /// `memory.delete`, `memory.seed`, `board.comment`, `teamchat.post`, `approval.resolve`.
    pub action: String,
    /// What it touched (`fact <id>`, `task <id>`, `team <id>`, `approval <id>: allow_once`).
    pub target: String,
    /// Milliseconds since the epoch.
    pub created_at: i64,
}

/// Records that `actor` did `action` to `target`.
pub fn record(
    conn: &Conn<'_>,
    actor: &str,
    action: Action,
    target: &str,
) -> rusqlite::Result<ActionRow> {
    let row = ActionRow {
        id: new_id(),
        actor: actor.to_owned(),
        action: action.as_str().to_owned(),
        target: scrub_secrets(target),
        created_at: conn.now_ms(),
    };
    conn.prepare_cached(
        "INSERT INTO operator_actions (id, actor, action, target, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        row.id,
        row.actor,
        row.action,
        row.target,
        row.created_at
    ])?;
    Ok(row)
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<(ActionRow, Keyset)> {
    let created_at = row.get("created_at")?;
    Ok((
        ActionRow {
            id: row.get("id")?,
            actor: row.get("actor")?,
            action: row.get("action")?,
            target: row.get("target")?,
            created_at,
        },
        Keyset {
            at: created_at,
            rowid: row.get("rowid")?,
        },
    ))
}

/// Up to `limit` actions after `cursor`, newest first, and the cursor of the next page (`None`
/// when there is no more).
pub fn list(
    conn: &Connection,
    limit: u32,
    cursor: Option<Keyset>,
) -> rusqlite::Result<(Vec<ActionRow>, Option<Keyset>)> {
    let (at, rowid) = Keyset::bounds(cursor);
    let rows = conn
        .prepare_cached(
            "SELECT rowid, id, actor, action, target, created_at FROM operator_actions
             WHERE (created_at, rowid) < (?1, ?2)
             ORDER BY created_at DESC, rowid DESC LIMIT ?3",
        )?
        .query_map(params![at, rowid, i64::from(limit) + 1], from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(split_page(rows, limit))
}

/// Cuts a page read with one row too many: the rows, and the cursor of the last shown when more
/// follow.
pub(crate) fn split_page<T>(mut rows: Vec<(T, Keyset)>, limit: u32) -> (Vec<T>, Option<Keyset>) {
    let more = rows.len() > limit as usize;
    rows.truncate(limit as usize);
    let next = more.then(|| rows.last().map(|(_, k)| *k)).flatten();
    (rows.into_iter().map(|(row, _)| row).collect(), next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Db;

    #[test]
    fn actions_are_recorded_scrubbed_and_paged_newest_first() {
        let db = Db::open_in_memory().unwrap();
        let conn = db.conn();
        for n in 0..5 {
            record(
                &conn,
                "local operator",
                Action::MemorySeed,
                &format!("fact {n} sk-abcdef1234567890abcd"),
            )
            .unwrap();
        }
        let (first, next) = list(&conn, 2, None).unwrap();
        assert_eq!(first.len(), 2);
        assert!(first[0].target.starts_with("fact 4"));
        assert!(
            !first[0].target.contains("sk-abcdef"),
            "{}",
            first[0].target
        );
        assert_eq!(first[0].action, "memory.seed");
        let (second, next) = list(&conn, 2, next).unwrap();
        assert!(second[0].target.starts_with("fact 2"));
        let (last, next) = list(&conn, 2, next).unwrap();
        assert_eq!(last.len(), 1);
        assert_eq!(next, None);
    }
}
