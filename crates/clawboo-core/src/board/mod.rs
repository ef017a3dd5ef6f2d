//! The durable kanban board: tasks, their dependencies and comments.
//!
//! Owns: the `tasks`, `task_deps` and `task_comments` tables (and the reference's `workspaces` and
//! `execution_processes`, created for file compatibility), and every write to `tasks.status`.
//! Guarantees: a claim is one guarded `UPDATE … RETURNING`, so two callers can never both win; every
//! read-then-write (status change, capped create, link, comment) runs in `BEGIN IMMEDIATE`; a refused
//! write changes nothing.
//!
//! Must never: know MCP or who the caller is (team binding is the server's business); build SQL
//! from caller input.

mod status;

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;

pub use status::Status;

use crate::db::{Conn, SchemaPart, Step, immediate, new_id};

/// The board's schema, compatible with the reference implementation's tables.
pub const SCHEMA: SchemaPart = SchemaPart {
    component: "board",
    steps: &[Step::Sql("
CREATE TABLE IF NOT EXISTS tasks (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    description TEXT,
    status TEXT NOT NULL DEFAULT 'backlog',
    priority INTEGER NOT NULL DEFAULT 0,
    team_id TEXT,
    assignee_agent_id TEXT,
    assignee_runtime TEXT,
    parent_task_id TEXT REFERENCES tasks(id),
    source_delegation_id TEXT,
    worktree_ref TEXT,
    branch_ref TEXT,
    cost_usd REAL NOT NULL DEFAULT 0,
    parent_session_id TEXT,
    dropped INTEGER NOT NULL DEFAULT 0,
    tenant_id TEXT,
    verification TEXT,
    scheduled_by TEXT NOT NULL DEFAULT 'manual',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    completed_at INTEGER
);
CREATE INDEX IF NOT EXISTS idx_tasks_team_status ON tasks (team_id, status);
CREATE INDEX IF NOT EXISTS idx_tasks_assignee ON tasks (assignee_agent_id);
CREATE INDEX IF NOT EXISTS idx_tasks_parent ON tasks (parent_task_id);
CREATE INDEX IF NOT EXISTS idx_tasks_parent_dropped_created ON tasks (parent_task_id, dropped, created_at);
CREATE TABLE IF NOT EXISTS task_deps (
    task_id TEXT NOT NULL REFERENCES tasks(id),
    depends_on_task_id TEXT NOT NULL REFERENCES tasks(id),
    tenant_id TEXT,
    PRIMARY KEY (task_id, depends_on_task_id)
);
CREATE INDEX IF NOT EXISTS idx_task_deps_task ON task_deps (task_id);
CREATE INDEX IF NOT EXISTS idx_task_deps_depends ON task_deps (depends_on_task_id);
CREATE TABLE IF NOT EXISTS task_comments (
    id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL REFERENCES tasks(id),
    author_agent_id TEXT,
    author_type TEXT NOT NULL,
    body TEXT NOT NULL,
    tenant_id TEXT,
    created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_task_comments_task ON task_comments (task_id);
CREATE TABLE IF NOT EXISTS workspaces (
    id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL REFERENCES tasks(id),
    repo_path TEXT NOT NULL,
    branch TEXT,
    worktree_path TEXT,
    status TEXT NOT NULL DEFAULT 'active',
    tenant_id TEXT,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER
);
CREATE TABLE IF NOT EXISTS execution_processes (
    id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL REFERENCES tasks(id),
    workspace_id TEXT REFERENCES workspaces(id),
    executor_type TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'queued',
    claimed_at INTEGER,
    started_at INTEGER,
    completed_at INTEGER,
    before_commit TEXT,
    after_commit TEXT,
    input_tokens INTEGER,
    output_tokens INTEGER,
    cache_read INTEGER,
    cache_write INTEGER,
    cost_usd REAL,
    summary TEXT,
    run_reason TEXT,
    error TEXT,
    recovery_tombstone INTEGER NOT NULL DEFAULT 0,
    tenant_id TEXT,
    created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_exec_task ON execution_processes (task_id);
CREATE INDEX IF NOT EXISTS idx_exec_status ON execution_processes (status);
")],
};

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
}

const TASK_COLUMNS: &str = "id, title, description, status, priority, team_id, assignee_agent_id, \
    assignee_runtime, parent_task_id, source_delegation_id, worktree_ref, branch_ref, cost_usd, \
    parent_session_id, dropped, tenant_id, scheduled_by, verification, created_at, updated_at, completed_at";

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
    fn from_row(row: &Row<'_>) -> rusqlite::Result<Task> {
        Ok(Task {
            id: row.get("id")?,
            title: row.get("title")?,
            description: row.get("description")?,
            status: row.get("status")?,
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
            updated_at: row.get("updated_at")?,
            completed_at: row.get("completed_at")?,
        })
    }
}

/// Who wrote a comment.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum AuthorType {
    /// An agent.
    Agent,
    /// A person.
    User,
    /// The system.
    System,
}

/// A task comment as the tools emit it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Comment {
    /// UUID v4.
    pub id: String,
    /// The task.
    pub task_id: String,
    /// The authoring agent.
    pub author_agent_id: Option<String>,
    /// `agent`, `user` or `system`.
    pub author_type: String,
    /// The text.
    pub body: String,
    /// Tenant (dormant).
    pub tenant_id: Option<String>,
    /// Creation time, ms since the epoch.
    pub created_at: i64,
}

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

/// Which task a [`BoardError::NotFound`] was looking for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskRole {
    /// The task the call names (claimed, moved, commented on, linked).
    Subject,
    /// The parent named for a new subtask.
    Parent,
}

/// Why a board write was refused.
/// Wire: reference (keep the text; detail may only be appended).
///
/// The texts are wire texts: the reference's reason codes (`not_found`, `conflict`,
/// `illegal_transition`, `verification_required`) and its cap and lookup messages. Where we add
/// detail, the reference's text stays a prefix (see [`BoardError::IllegalTransition`]).
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum BoardError {
    /// No task has this id: `not found: <id>`, or `parent not found: <id>` for a subtask's parent.
    /// As the reason of a refused claim, release or status change it is the code `not_found`
    /// ([`BoardError::reason`]).
    #[error("{}not found: {id}", if *role == TaskRole::Parent { "parent " } else { "" })]
    NotFound {
        /// The id looked for.
        id: String,
        /// Which task it was meant to be.
        role: TaskRole,
    },
    /// The task is not in a state that allows the claim.
    #[error("conflict")]
    Conflict,
    /// The state machine forbids the move: the reference's code `illegal_transition`, then the
    /// detail, e.g. `illegal_transition (done → in_progress; allowed: none)`.
    #[error(
        "illegal_transition ({from} → {}; allowed: {})",
        to.as_str(),
        status_list(allowed)
    )]
    IllegalTransition {
        /// The stored status (as stored: a word the board does not know is kept, not guessed).
        from: String,
        /// The status asked for.
        to: Status,
        /// Where this operation could have moved the task from `from`, in table order.
        allowed: &'static [Status],
    },
    /// The stored verification verdict forbids `done`.
    #[error("verification_required")]
    VerificationRequired,
    /// The parent already has the most children allowed.
    #[error(
        "subtask rejected: parent {parent} already has {count} children (max {max}); drop one or attach the new task elsewhere"
    )]
    ChildCap {
        /// The parent.
        parent: String,
        /// Its live children.
        count: i64,
        /// The cap.
        max: i64,
    },
    /// The parent is at the deepest level that may have children.
    #[error(
        "subtask rejected: parent {parent} is at the maximum nesting depth ({max}); attach the new task higher in the tree"
    )]
    DepthCap {
        /// The parent.
        parent: String,
        /// The cap.
        max: i64,
    },
    /// Too many root tasks were created recently.
    #[error(
        "task rejected: {count} root tasks already created in the last {} min (max {max}); attach this work to an existing task with parentTaskId instead of opening another",
        (*window_ms as f64 / 60_000.0).round() as i64
    )]
    RootRateCap {
        /// Roots created within the window.
        count: i64,
        /// The cap.
        max: i64,
        /// The window, in ms.
        window_ms: i64,
    },
    /// A dependency link would close a cycle.
    #[error("linking {task} to {depends_on} would create a dependency cycle")]
    Cycle {
        /// The waiting task.
        task: String,
        /// The task it would wait on.
        depends_on: String,
    },
    /// The database failed.
    /// Wire: ours.
    #[error("database error: {0}")]
    Db(#[from] rusqlite::Error),
}

/// `a, b, c`, or `none`.
fn status_list(statuses: &[Status]) -> String {
    if statuses.is_empty() {
        return "none".to_owned();
    }
    statuses
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

impl BoardError {
    /// No task `id` (the one the call names).
    pub fn no_task(id: &str) -> Self {
        BoardError::NotFound {
            id: id.to_owned(),
            role: TaskRole::Subject,
        }
    }

    /// The text after `<action> failed: ` when a claim, release or status change is refused: the
    /// reference's reason code (`not_found`, `conflict`, `illegal_transition …`,
    /// `verification_required`).
    pub fn reason(&self) -> String {
        match self {
            BoardError::NotFound { .. } => "not_found".to_owned(),
            other => other.to_string(),
        }
    }

    /// The typed reason of a create-cap refusal, for `_meta.denied`.
    pub fn cap_reason(&self) -> Option<&'static str> {
        match self {
            BoardError::NotFound {
                role: TaskRole::Parent,
                ..
            } => Some("parent_not_found"),
            BoardError::ChildCap { .. } => Some("child_cap"),
            BoardError::DepthCap { .. } => Some("depth_cap"),
            BoardError::RootRateCap { .. } => Some("root_rate_cap"),
            _ => None,
        }
    }
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

/// Lists live (not dropped) tasks, most recently updated first, or the ready queue.
pub fn list(conn: &Connection, filter: &ListFilter) -> Result<Vec<Task>, BoardError> {
    let team = filter.team_id.as_deref().filter(|t| !t.is_empty());
    let sql = if filter.ready {
        format!(
            "SELECT {TASK_COLUMNS} FROM tasks
             WHERE status = 'todo' AND dropped = 0
               AND (?1 IS NULL OR team_id = ?1)
               AND NOT EXISTS (SELECT 1 FROM task_deps d JOIN tasks dt ON dt.id = d.depends_on_task_id
                               WHERE d.task_id = tasks.id AND dt.status != 'done')
             ORDER BY priority DESC, updated_at DESC, rowid DESC"
        )
    } else {
        format!(
            "SELECT {TASK_COLUMNS} FROM tasks
             WHERE dropped = 0 AND (?1 IS NULL OR team_id = ?1) AND (?2 IS NULL OR status = ?2)
             ORDER BY updated_at DESC, rowid DESC"
        )
    };
    let status = if filter.ready {
        None
    } else {
        filter.status.map(Status::as_str)
    };
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = if filter.ready {
        stmt.query_map(params![team], Task::from_row)?
            .collect::<Result<Vec<_>, _>>()?
    } else {
        stmt.query_map(params![team, status], Task::from_row)?
            .collect::<Result<Vec<_>, _>>()?
    };
    Ok(rows)
}

/// One task, dropped or not.
pub fn get(conn: &Connection, id: &str) -> Result<Option<Task>, BoardError> {
    let sql = format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?1");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([id], Task::from_row)
        .optional()?)
}

/// A task's comments, oldest first.
pub fn comments(conn: &Connection, task_id: &str) -> Result<Vec<Comment>, BoardError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, task_id, author_agent_id, author_type, body, tenant_id, created_at
         FROM task_comments WHERE task_id = ?1 ORDER BY created_at ASC, rowid ASC",
    )?;
    let rows = stmt
        .query_map([task_id], |r| {
            Ok(Comment {
                id: r.get("id")?,
                task_id: r.get("task_id")?,
                author_agent_id: r.get("author_agent_id")?,
                author_type: r.get("author_type")?,
                body: r.get("body")?,
                tenant_id: r.get("tenant_id")?,
                created_at: r.get("created_at")?,
            })
        })?
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

fn get_parent_id(conn: &Connection, task_id: &str) -> Result<Option<String>, BoardError> {
    Ok(conn
        .prepare_cached("SELECT parent_task_id FROM tasks WHERE id = ?1")?
        .query_row([task_id], |r| r.get::<_, Option<String>>("parent_task_id"))
        .optional()?
        .flatten())
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

/// Atomically claims a `todo`, unassigned, live task for `agent`: exactly one of any number of
/// concurrent claimers wins. `conflict` means the task exists but was not claimable.
pub fn claim(
    conn: &Conn<'_>,
    task_id: &str,
    agent: &str,
    runtime: Option<&str>,
) -> Result<Task, BoardError> {
    let sql = format!(
        "UPDATE tasks SET assignee_agent_id = ?1, assignee_runtime = ?2, status = 'in_progress', updated_at = ?3
         WHERE id = ?4 AND status = 'todo' AND assignee_agent_id IS NULL AND dropped = 0
         RETURNING {TASK_COLUMNS}"
    );
    let claimed = conn
        .prepare_cached(&sql)?
        .query_row(
            params![agent, runtime, conn.now_ms(), task_id],
            Task::from_row,
        )
        .optional()?;
    match claimed {
        Some(task) => Ok(task),
        None if exists(conn, task_id)? => Err(BoardError::Conflict),
        None => Err(BoardError::no_task(task_id)),
    }
}

/// Releases an `in_progress` task back to `todo`, clearing its assignee and verdict. Any other
/// status is `illegal_transition` (the reference answers success and does nothing, which hides the
/// mistake from the caller).
pub fn release(conn: &Conn<'_>, task_id: &str) -> Result<Task, BoardError> {
    let sql = format!(
        "UPDATE tasks SET assignee_agent_id = NULL, assignee_runtime = NULL, verification = NULL,
             status = 'todo', updated_at = ?1
         WHERE id = ?2 AND status = 'in_progress'
         RETURNING {TASK_COLUMNS}"
    );
    let released = conn
        .prepare_cached(&sql)?
        .query_row(params![conn.now_ms(), task_id], Task::from_row)
        .optional()?;
    match released {
        Some(task) => Ok(task),
        None => match stored_status(conn, task_id)? {
            Some(from) => Err(BoardError::IllegalTransition {
                from,
                to: Status::Todo,
                allowed: &[],
            }),
            None => Err(BoardError::no_task(task_id)),
        },
    }
}

/// The status column of a task as stored, or `None` when there is no such task.
fn stored_status(conn: &Connection, task_id: &str) -> Result<Option<String>, BoardError> {
    Ok(conn
        .prepare_cached("SELECT status FROM tasks WHERE id = ?1")?
        .query_row([task_id], |r| r.get("status"))
        .optional()?)
}

fn exists(conn: &Connection, task_id: &str) -> Result<bool, BoardError> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM tasks WHERE id = ?1")?
        .query_row([task_id], |_| Ok(()))
        .optional()?
        .is_some())
}

/// True when a stored verdict forbids moving to `done`: `fail`, or `completed_with_debt` whose last
/// attempt's deterministic gate did not pass. No verdict, or one that cannot be read, does not.
fn verdict_blocks_done(verification: Option<&str>) -> bool {
    let Some(text) = verification.filter(|t| !t.trim().is_empty()) else {
        return false;
    };
    let Ok(verdict) = serde_json::from_str::<serde_json::Value>(text) else {
        return false;
    };
    match verdict.get("status").and_then(|s| s.as_str()) {
        Some("pass") => false,
        Some("completed_with_debt") => {
            let last_gate_green = verdict
                .get("attempts")
                .and_then(|a| a.as_array())
                .and_then(|a| a.last())
                .and_then(|a| a.pointer("/deterministic/passed"))
                .and_then(|p| p.as_bool())
                == Some(true);
            !last_gate_green
        }
        _ => true,
    }
}

/// Moves a task to `to` if the state machine allows it (and, for `done`, the verdict does). Moving
/// to `todo` clears the assignee and verdict; entering a terminal status stamps `completed_at`.
pub fn update_status(conn: &Conn<'_>, task_id: &str, to: Status) -> Result<Task, BoardError> {
    immediate(conn, |tx| {
        let current: Option<(String, Option<String>)> = tx
            .prepare_cached("SELECT status, verification FROM tasks WHERE id = ?1")?
            .query_row([task_id], |r| {
                Ok((r.get("status")?, r.get("verification")?))
            })
            .optional()?;
        let Some((stored, verification)) = current else {
            return Err(BoardError::no_task(task_id));
        };
        let from = Status::parse(&stored);
        if !from.is_some_and(|from| from.can_transition(to)) {
            return Err(BoardError::IllegalTransition {
                allowed: from.map_or(&[], Status::legal_targets),
                from: stored,
                to,
            });
        }
        if to == Status::Done && verdict_blocks_done(verification.as_deref()) {
            return Err(BoardError::VerificationRequired);
        }
        let now = tx.now_ms();
        let sql = format!(
            "UPDATE tasks SET status = ?1, updated_at = ?2,
                 completed_at = CASE WHEN ?3 THEN ?2 ELSE completed_at END,
                 assignee_agent_id = CASE WHEN ?4 THEN NULL ELSE assignee_agent_id END,
                 assignee_runtime = CASE WHEN ?4 THEN NULL ELSE assignee_runtime END,
                 verification = CASE WHEN ?4 THEN NULL ELSE verification END
             WHERE id = ?5
             RETURNING {TASK_COLUMNS}"
        );
        let task = tx.prepare_cached(&sql)?.query_row(
            params![
                to.as_str(),
                now,
                to.is_terminal(),
                to == Status::Todo,
                task_id
            ],
            Task::from_row,
        )?;
        Ok(task)
    })
}

/// Adds a comment to an existing task (any status, dropped included). Does not bump `updated_at`.
pub fn add_comment(
    conn: &Conn<'_>,
    task_id: &str,
    body: &str,
    author_agent_id: Option<&str>,
    author_type: AuthorType,
) -> Result<Comment, BoardError> {
    immediate(conn, |tx| {
        if !exists(tx, task_id)? {
            return Err(BoardError::no_task(task_id));
        }
        let comment = Comment {
            id: new_id(),
            task_id: task_id.to_owned(),
            author_agent_id: author_agent_id.map(str::to_owned),
            author_type: serde_json::to_value(author_type)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_else(|| "agent".into()),
            body: body.to_owned(),
            tenant_id: None,
            created_at: tx.now_ms(),
        };
        tx.prepare_cached(
            "INSERT INTO task_comments (id, task_id, author_agent_id, author_type, body, tenant_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, NULL, ?6)",
        )?
        .execute(params![
            comment.id,
            comment.task_id,
            comment.author_agent_id,
            comment.author_type,
            comment.body,
            comment.created_at
        ])?;
        Ok(comment)
    })
}

/// Makes `task_id` wait on `depends_on`. Refuses self-links and any link that would close a cycle,
/// direct or transitive; a duplicate link succeeds without change.
pub fn link(conn: &Conn<'_>, task_id: &str, depends_on: &str) -> Result<(), BoardError> {
    let cycle = || BoardError::Cycle {
        task: task_id.to_owned(),
        depends_on: depends_on.to_owned(),
    };
    if task_id == depends_on {
        return Err(cycle());
    }
    immediate(conn, |tx| {
        for id in [task_id, depends_on] {
            if !exists(tx, id)? {
                return Err(BoardError::no_task(id));
            }
        }
        let closes_cycle: bool = tx
            .prepare_cached(
                "WITH RECURSIVE reach(id) AS (
                     SELECT ?1
                     UNION
                     SELECT d.depends_on_task_id FROM task_deps d JOIN reach r ON d.task_id = r.id
                 )
                 SELECT EXISTS (SELECT 1 FROM reach WHERE id = ?2) AS closes_cycle",
            )?
            .query_row([depends_on, task_id], |r| r.get("closes_cycle"))?;
        if closes_cycle {
            return Err(cycle());
        }
        tx.prepare_cached(
            "INSERT INTO task_deps (task_id, depends_on_task_id, tenant_id) VALUES (?1, ?2, NULL)
             ON CONFLICT DO NOTHING",
        )?
        .execute([task_id, depends_on])?;
        Ok(())
    })
}

#[cfg(test)]
mod tests;
