//! The task row: its columns as the tools emit them, reads by id, and the creates (uncapped,
//! and the capped root and subtask creates).
//!
//! Owns: [`Task`] and the one column list every task-returning statement selects
//! ([`TASK_COLUMNS`]), so a task reads the same whichever file wrote it. Guarantees: a capped create
//! counts and inserts inside one `BEGIN IMMEDIATE`, so concurrent creators cannot overshoot a cap;
//! rows are read by column name. Must never: write `tasks.status` after creation (the `claim`
//! module does).

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;

use super::lease::lease_holds;
use super::{BoardError, Status, TaskRole};
use crate::db::{Conn, immediate, new_id};

/// The default caps of the capped creates, as served over MCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Most live (not dropped) children one parent may have.
    pub max_children: i64,
    /// Deepest nesting: roots are depth 0, so `2` allows three levels.
    pub max_depth: i64,
    /// Most root tasks created board-wide within `root_window_ms`.
    pub max_root_creates: i64,
    /// The rolling window of the root cap, in milliseconds.
    pub root_window_ms: i64,
}

impl Default for Caps {
    fn default() -> Self {
        Self {
            max_children: 24,
            max_depth: 2,
            max_root_creates: 30,
            root_window_ms: 300_000,
        }
    }
}

/// A task as the tools emit it (camelCase keys; nullable columns are `null`, never omitted).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// UUID v4.
    pub id: String,
    /// Title (may be empty).
    pub title: String,
    /// Description.
    pub description: Option<String>,
    /// Status.
    pub status: Status,
    /// Higher is more urgent.
    pub priority: i64,
    /// Owning team.
    pub team_id: Option<String>,
    /// Claiming agent.
    pub assignee_agent_id: Option<String>,
    /// Claiming runtime.
    pub assignee_runtime: Option<String>,
    /// Parent task.
    pub parent_task_id: Option<String>,
    /// Delegation that created the task.
    pub source_delegation_id: Option<String>,
    /// Worktree reference.
    pub worktree_ref: Option<String>,
    /// Branch reference.
    pub branch_ref: Option<String>,
    /// Accumulated cost.
    pub cost_usd: f64,
    /// Parent session.
    pub parent_session_id: Option<String>,
    /// Soft-delete flag, `0` or `1`.
    pub dropped: i64,
    /// Tenant (dormant).
    pub tenant_id: Option<String>,
    /// Who scheduled the task.
    pub scheduled_by: String,
    /// The stored verification verdict, as raw JSON text.
    pub verification: Option<String>,
    /// Creation time, ms since the epoch.
    pub created_at: i64,
    /// Last update, ms since the epoch.
    pub updated_at: i64,
    /// When the task entered `done` or `cancelled`.
    pub completed_at: Option<i64>,
    /// While a lease holds the task (ours, not the reference's: see `lease`), when it runs out, ms
    /// since the epoch. Left out of the JSON when no lease holds the task, so a board without
    /// leases emits exactly the reference's keys.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease_expires_at: Option<i64>,
}

pub(super) const TASK_COLUMNS: &str = "id, title, description, status, priority, team_id, assignee_agent_id, \
    assignee_runtime, parent_task_id, source_delegation_id, worktree_ref, branch_ref, cost_usd, \
    parent_session_id, dropped, tenant_id, scheduled_by, verification, created_at, updated_at, completed_at, \
    lease_seconds, lease_expires_at";

/// A stored status reads as its [`Status`]; an unknown word is a conversion error naming it.
impl rusqlite::types::FromSql for Status {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        let text = value.as_str()?;
        Status::parse(text).ok_or_else(|| {
            rusqlite::types::FromSqlError::Other(format!("unknown task status {text:?}").into())
        })
    }
}

impl Task {
    /// Reads a task by column name from a row that selected [`TASK_COLUMNS`].
    pub(super) fn from_row(row: &Row<'_>) -> rusqlite::Result<Task> {
        let status: Status = row.get("status")?;
        let updated_at: i64 = row.get("updated_at")?;
        let lease_expires_at: Option<i64> = row.get("lease_expires_at")?;
        let held = lease_holds(
            status,
            updated_at,
            lease_expires_at,
            row.get("lease_seconds")?,
        );
        Ok(Task {
            id: row.get("id")?,
            title: row.get("title")?,
            description: row.get("description")?,
            status,
            priority: row.get("priority")?,
            team_id: row.get("team_id")?,
            assignee_agent_id: row.get("assignee_agent_id")?,
            assignee_runtime: row.get("assignee_runtime")?,
            parent_task_id: row.get("parent_task_id")?,
            source_delegation_id: row.get("source_delegation_id")?,
            worktree_ref: row.get("worktree_ref")?,
            branch_ref: row.get("branch_ref")?,
            cost_usd: row.get("cost_usd")?,
            parent_session_id: row.get("parent_session_id")?,
            dropped: row.get("dropped")?,
            tenant_id: row.get("tenant_id")?,
            scheduled_by: row.get("scheduled_by")?,
            verification: row.get("verification")?,
            created_at: row.get("created_at")?,
            updated_at,
            completed_at: row.get("completed_at")?,
            lease_expires_at: lease_expires_at.filter(|_| held),
        })
    }
}

/// The fields a caller chooses when creating a task.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewTask {
    /// Title.
    pub title: String,
    /// Description.
    pub description: Option<String>,
    /// Initial status (default `todo`; any status is allowed at creation).
    pub status: Option<Status>,
    /// Priority (default 0).
    pub priority: Option<i64>,
    /// Team; for a subtask, `None` inherits the parent's.
    pub team_id: Option<String>,
    /// Parent task.
    pub parent_task_id: Option<String>,
    /// Runtime noted at creation.
    pub assignee_runtime: Option<String>,
}

/// One task, dropped or not.
pub fn get(conn: &Connection, id: &str) -> Result<Option<Task>, BoardError> {
    let sql = format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?1");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([id], Task::from_row)
        .optional()?)
}

/// Inserts a task with no cap checks (the uncapped path of REST and routines, and seeding).
pub fn insert(conn: &Conn<'_>, new: &NewTask) -> Result<Task, BoardError> {
    let now = conn.now_ms();
    let sql = format!(
        "INSERT INTO tasks (id, title, description, status, priority, team_id, assignee_agent_id,
             assignee_runtime, parent_task_id, cost_usd, dropped, scheduled_by, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, ?7, ?8, 0, 0, 'manual', ?9, ?9)
         RETURNING {TASK_COLUMNS}"
    );
    let task = conn.prepare_cached(&sql)?.query_row(
        params![
            new_id(),
            new.title,
            new.description,
            new.status.unwrap_or(Status::Todo).as_str(),
            new.priority.unwrap_or(0),
            new.team_id,
            new.assignee_runtime,
            new.parent_task_id,
            now,
        ],
        Task::from_row,
    )?;
    Ok(task)
}

/// Creates a root task unless `caps.max_root_creates` roots (board-wide, any status, not
/// dropped) were created within the window.
pub fn create_root(conn: &Conn<'_>, new: &NewTask, caps: Caps) -> Result<Task, BoardError> {
    immediate(conn, |tx| {
        let since = tx.now_ms() - caps.root_window_ms;
        let count: i64 = tx
            .prepare_cached(
                "SELECT count(*) AS roots FROM tasks
             WHERE parent_task_id IS NULL AND dropped = 0 AND created_at > ?1",
            )?
            .query_row([since], |r| r.get("roots"))?;
        if count >= caps.max_root_creates {
            return Err(BoardError::RootRateCap {
                count,
                max: caps.max_root_creates,
                window_ms: caps.root_window_ms,
            });
        }
        insert(
            tx,
            &NewTask {
                parent_task_id: None,
                ..new.clone()
            },
        )
    })
}

/// Creates a subtask of `new.parent_task_id` under the child-count and depth caps. The child's team
/// is `new.team_id`, else the parent's.
pub fn create_subtask(conn: &Conn<'_>, new: &NewTask, caps: Caps) -> Result<Task, BoardError> {
    let parent_id = new.parent_task_id.clone().unwrap_or_default();
    immediate(conn, |tx| {
        let parent: Option<(Option<String>, Option<String>)> = tx
            .prepare_cached("SELECT team_id, parent_task_id FROM tasks WHERE id = ?1")?
            .query_row([&parent_id], |r| {
                Ok((r.get("team_id")?, r.get("parent_task_id")?))
            })
            .optional()?;
        let Some((parent_team, grandparent)) = parent else {
            return Err(BoardError::NotFound {
                id: parent_id.clone(),
                role: TaskRole::Parent,
            });
        };
        let children: i64 = tx
            .prepare_cached(
                "SELECT count(*) AS children FROM tasks WHERE parent_task_id = ?1 AND dropped = 0",
            )?
            .query_row([&parent_id], |r| r.get("children"))?;
        if children >= caps.max_children {
            return Err(BoardError::ChildCap {
                parent: parent_id.clone(),
                count: children,
                max: caps.max_children,
            });
        }
        let mut depth = 0;
        let mut cursor = grandparent;
        while let Some(id) = cursor {
            if depth >= caps.max_depth {
                break;
            }
            depth += 1;
            cursor = get_parent_id(tx, &id)?;
        }
        if depth >= caps.max_depth {
            return Err(BoardError::DepthCap {
                parent: parent_id.clone(),
                max: caps.max_depth,
            });
        }
        insert(
            tx,
            &NewTask {
                team_id: new.team_id.clone().or(parent_team),
                ..new.clone()
            },
        )
    })
}

/// The status column of a task as stored, or `None` when there is no such task.
pub(super) fn stored_status(
    conn: &Connection,
    task_id: &str,
) -> Result<Option<String>, BoardError> {
    Ok(conn
        .prepare_cached("SELECT status FROM tasks WHERE id = ?1")?
        .query_row([task_id], |r| r.get("status"))
        .optional()?)
}

/// Whether a task with this id exists (dropped or not).
pub(super) fn exists(conn: &Connection, task_id: &str) -> Result<bool, BoardError> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM tasks WHERE id = ?1")?
        .query_row([task_id], |_| Ok(()))
        .optional()?
        .is_some())
}

/// The parent of a task, or `None` for a root or a missing task.
pub(super) fn get_parent_id(
    conn: &Connection,
    task_id: &str,
) -> Result<Option<String>, BoardError> {
    Ok(conn
        .prepare_cached("SELECT parent_task_id FROM tasks WHERE id = ?1")?
        .query_row([task_id], |r| r.get::<_, Option<String>>("parent_task_id"))
        .optional()?
        .flatten())
}
