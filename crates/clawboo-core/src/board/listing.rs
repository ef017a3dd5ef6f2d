//! Reading many tasks: the board list (or, in ready mode, the ready queue) and a task's ancestor
//! chain.
//!
//! Guarantees: the list shows live (not dropped) tasks only, most recently updated first; the
//! ancestor walk ends on a corrupt parent cycle instead of looping. Must never: write.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use super::task::{TASK_COLUMNS, get_parent_id};
use super::{BoardError, Status, Task, deps};

/// An ancestor of a task (snake_case, as the reference emits it).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Ancestor {
    /// The ancestor's id.
    pub id: String,
    /// Its parent.
    pub parent_task_id: Option<String>,
    /// Its title.
    pub title: String,
    /// Its status.
    pub status: Status,
}

/// Which tasks [`list`] returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListFilter {
    /// Only this team (an empty string means no filter).
    pub team_id: Option<String>,
    /// Only this status (ignored in ready mode).
    pub status: Option<Status>,
    /// Only claimable work: `todo`, not dropped, every dependency `done`; most urgent first.
    pub ready: bool,
}

/// Lists live (not dropped) tasks, most recently updated first, or the ready queue
/// ([`deps::ready`]).
pub fn list(conn: &Connection, filter: &ListFilter) -> Result<Vec<Task>, BoardError> {
    let team = filter.team_id.as_deref().filter(|t| !t.is_empty());
    if filter.ready {
        return deps::ready(conn, team);
    }
    let sql = format!(
        "SELECT {TASK_COLUMNS} FROM tasks
         WHERE dropped = 0 AND (?1 IS NULL OR team_id = ?1) AND (?2 IS NULL OR status = ?2)
         ORDER BY updated_at DESC, rowid DESC"
    );
    let status = filter.status.map(Status::as_str);
    let rows = conn
        .prepare_cached(&sql)?
        .query_map(params![team, status], Task::from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// Every strict ancestor of a task, root first. A corrupt parent cycle ends the walk instead of
/// looping.
pub fn ancestors(conn: &Connection, task_id: &str) -> Result<Vec<Ancestor>, BoardError> {
    let mut stmt =
        conn.prepare_cached("SELECT id, parent_task_id, title, status FROM tasks WHERE id = ?1")?;
    let mut chain: Vec<Ancestor> = Vec::new();
    let mut next = get_parent_id(conn, task_id)?;
    while let Some(id) = next {
        if id == task_id || chain.iter().any(|a| a.id == id) {
            break;
        }
        let Some(row) = stmt
            .query_row([&id], |r| {
                let status: String = r.get("status")?;
                Ok(Ancestor {
                    id: r.get("id")?,
                    parent_task_id: r.get("parent_task_id")?,
                    title: r.get("title")?,
                    status: Status::parse(&status).unwrap_or(Status::Backlog),
                })
            })
            .optional()?
        else {
            break;
        };
        next = row.parent_task_id.clone();
        chain.push(row);
    }
    chain.reverse();
    Ok(chain)
}
