//! Task comments: who may write them and how they read.
//!
//! Owns: the `task_comments` table. Guarantees: a comment is added only to an existing task (any
//! status, dropped included), inside one `BEGIN IMMEDIATE`; comments read oldest first; adding one
//! leaves the task's `updated_at` alone. Must never: change a task row, but for its lease (a comment
//! by the lease's holder renews it; a due expiry is applied first, as everywhere: see `lease`).

use rusqlite::{Connection, params};
use serde::Serialize;

use super::task::exists;
use super::{BoardError, lease};
use crate::db::{Conn, immediate, new_id};

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

/// Adds a comment to an existing task (any status, dropped included). Does not bump `updated_at`.
/// A comment by the agent whose lease holds the task renews the lease.
pub fn add_comment(
    conn: &Conn<'_>,
    task_id: &str,
    body: &str,
    author_agent_id: Option<&str>,
    author_type: AuthorType,
) -> Result<Comment, BoardError> {
    lease::expire_if_due(conn, task_id)?;
    immediate(conn, |tx| {
        if !exists(tx, task_id)? {
            return Err(BoardError::no_task(task_id));
        }
        if let Some(author) = author_agent_id {
            lease::renew_if_held_by(tx, task_id, author)?;
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
