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
//!
//! The board is split by concern, each file with its own contract: [`task`] (the task row, reads by
//! id, the capped creates), [`claim`] (the claim and every status move), [`lease`] (leases on
//! claims: renewal and the expiry), [`deps`] (dependency links and the ready queue), [`comments`],
//! [`listing`] (the list and the ancestor chain), [`console`] (the operator console's paged cards
//! and links both ways), [`error`] (the refusals and their wire texts) and
//! [`status`] (the state machine).

mod claim;
mod comments;
mod console;
mod deps;
mod error;
mod lease;
mod listing;
mod status;
mod task;

pub use claim::{claim, release, update_status};
pub use comments::{AuthorType, Comment, add_comment, comments};
pub use console::{BoardCursor, BoardQuery, TaskCard, links, page, teams};
pub use deps::{link, ready};
pub use error::{BoardError, TaskRole};
pub use lease::{MAX_LEASE_SECONDS, expire_leases, next_expiry, renew};
pub use listing::{Ancestor, ListFilter, ancestors, list};
pub use status::Status;
pub use task::{Caps, NewTask, Task, create_root, create_subtask, get, insert};

use crate::db::{SchemaPart, Step};

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
"),
        // Leases on claims (ours; `lease`): how long a claim holds its task, and until when.
        Step::AddColumn {
            table: "tasks",
            column: "lease_seconds",
            definition: "INTEGER",
        },
        Step::AddColumn {
            table: "tasks",
            column: "lease_expires_at",
            definition: "INTEGER",
        },
        Step::Sql(
            "CREATE INDEX IF NOT EXISTS idx_tasks_lease ON tasks (lease_expires_at)
             WHERE lease_expires_at IS NOT NULL",
        ),
    ],
};

#[cfg(test)]
mod tests;
