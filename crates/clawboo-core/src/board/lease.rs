//! Leases on claims: a claim may hold its task only for a while, renewed by its holder's calls;
//! when a lease runs out the task goes back to `todo`, so a killed agent does not keep its task for
//! ever.
//!
//! Owns: the `lease_seconds` and `lease_expires_at` columns of `tasks` (ours: the reference knows
//! neither, and a claim without a lease leaves both `NULL`, so by default the board behaves as the
//! reference's does), renewal, and the expiry.
//!
//! Guarantees: a lease runs out exactly once. The expiry (status back to `todo`, assignee and
//! verdict cleared, one `system` comment naming the agent and the time) is decided inside a
//! `BEGIN IMMEDIATE` that re-reads the row, the same write that a claim of the expired task makes,
//! so an expiry and a claim can never both win and two expiries never both write. Every operation
//! on a task applies its due expiry first, committed even if the operation is then refused (the
//! claim, status moves, release, comments, renewal),
//! and the tools' reads apply every due expiry first ([`expire_leases`]): the board never shows a
//! task held by a lease that has run out. A lease is its task's current claim's only while
//! `updated_at` is not later than the lease's start (`lease_expires_at - lease_seconds * 1000`):
//! every write of ours that keeps a lease rewrites it, and any other write (a process that does not
//! know leases moving the task) is later, so a lease such a process left behind never expires
//! anything.
//!
//! Must never: expire a task that is not `in_progress`; take a task from an agent whose lease has
//! not run out by the database's clock ([`Conn::now_ms`]).

use rusqlite::{Connection, OptionalExtension, params};

use super::{BoardError, Status, Task};
use crate::db::{Conn, immediate, new_id};

/// The longest lease a claim may take: a day.
pub const MAX_LEASE_SECONDS: i64 = 86_400;

/// SQL: the row is `in_progress` and held by a lease that is its current claim's (see the module
/// docs). [`lease_holds`] is the same rule in Rust.
const HELD: &str =
    "status = 'in_progress' AND lease_expires_at IS NOT NULL AND lease_seconds IS NOT NULL
    AND updated_at <= lease_expires_at - lease_seconds * 1000";

/// Whether a row's lease columns hold it: the rule of [`HELD`], for a row already read.
pub(super) fn lease_holds(
    status: Status,
    updated_at: i64,
    expires_at: Option<i64>,
    seconds: Option<i64>,
) -> bool {
    match (expires_at, seconds) {
        (Some(expires_at), Some(seconds)) => {
            status == Status::InProgress && updated_at <= expires_at - seconds * 1000
        }
        _ => false,
    }
}

/// A lease that ran out, as its expiry records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Expired {
    /// The agent that held the task.
    pub agent: Option<String>,
    /// When the lease ran out, ms since the epoch.
    pub at: i64,
}

/// Returns `task_id` to `todo`, in a transaction of its own, if its lease has run out: what an
/// operation on the task does first, so that the expiry stands even when the operation is then
/// refused. A read decides whether to take the write lock; [`expire_due`] re-checks under it.
pub(super) fn expire_if_due(conn: &Conn<'_>, task_id: &str) -> Result<Option<Expired>, BoardError> {
    if !is_due(conn, task_id)? {
        return Ok(None);
    }
    immediate(conn, |tx| expire_due(tx, task_id))
}

/// Returns `task_id` to `todo` if its lease has run out, writing the `system` comment. Run it
/// inside a `BEGIN IMMEDIATE`, which it must not roll back (a claim of the expired task shares
/// it).
pub(super) fn expire_due(tx: &Conn<'_>, task_id: &str) -> Result<Option<Expired>, BoardError> {
    let due: Option<Expired> = tx
        .prepare_cached(&format!(
            "SELECT assignee_agent_id, lease_expires_at FROM tasks
             WHERE id = ?1 AND lease_expires_at <= ?2 AND {HELD}"
        ))?
        .query_row(params![task_id, tx.now_ms()], |r| {
            Ok(Expired {
                agent: r.get("assignee_agent_id")?,
                at: r.get("lease_expires_at")?,
            })
        })
        .optional()?;
    if let Some(expired) = &due {
        return_to_todo(tx, task_id, expired)?;
    }
    Ok(due)
}

/// Applies every due expiry on the board (each once, with its comment); how many there were. A
/// look at the lease index decides whether to take the write lock, so when nothing is due this
/// costs one indexed read.
pub fn expire_leases(conn: &Conn<'_>) -> Result<usize, BoardError> {
    let due_sql = format!(
        "SELECT id, assignee_agent_id, lease_expires_at FROM tasks
         WHERE lease_expires_at <= ?1 AND {HELD}"
    );
    let any_due: bool = conn
        .prepare_cached(&format!(
            "SELECT EXISTS (SELECT 1 FROM tasks WHERE lease_expires_at <= ?1 AND {HELD}) AS due"
        ))?
        .query_row([conn.now_ms()], |r| r.get("due"))?;
    if !any_due {
        return Ok(0);
    }
    immediate(conn, |tx| {
        let due: Vec<(String, Expired)> = tx
            .prepare_cached(&due_sql)?
            .query_map([tx.now_ms()], |r| {
                Ok((
                    r.get("id")?,
                    Expired {
                        agent: r.get("assignee_agent_id")?,
                        at: r.get("lease_expires_at")?,
                    },
                ))
            })?
            .collect::<Result<_, _>>()?;
        for (task_id, expired) in &due {
            return_to_todo(tx, task_id, expired)?;
        }
        Ok(due.len())
    })
}

/// The expiry itself: back to `todo`, unassigned, no verdict, no lease, and the comment.
fn return_to_todo(tx: &Conn<'_>, task_id: &str, expired: &Expired) -> Result<(), BoardError> {
    let now = tx.now_ms();
    tx.prepare_cached(
        "UPDATE tasks SET status = 'todo', assignee_agent_id = NULL, assignee_runtime = NULL,
             verification = NULL, lease_seconds = NULL, lease_expires_at = NULL, updated_at = ?1
         WHERE id = ?2",
    )?
    .execute(params![now, task_id])?;
    let agent = expired.agent.as_deref().unwrap_or("an unnamed agent");
    let body = format!(
        "lease expired: {agent} held this task until {} (ms since the epoch) without renewing it; the task went back to todo",
        expired.at
    );
    tx.prepare_cached(
        "INSERT INTO task_comments (id, task_id, author_agent_id, author_type, body, tenant_id, created_at)
         VALUES (?1, ?2, NULL, 'system', ?3, NULL, ?4)",
    )?
    .execute(params![new_id(), task_id, body, now])?;
    Ok(())
}

/// Whether `task_id` holds a lease that has run out (a read, outside any transaction: a claim
/// that finds the task taken asks it before taking the write lock).
pub(super) fn is_due(conn: &Conn<'_>, task_id: &str) -> Result<bool, BoardError> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT EXISTS (SELECT 1 FROM tasks WHERE id = ?1 AND lease_expires_at <= ?2 AND {HELD}) AS due"
        ))?
        .query_row(params![task_id, conn.now_ms()], |r| r.get("due"))?)
}

/// Pushes the lease of `task_id` to a full lease from now (never from before the row's last
/// update, so the lease stays the current claim's), if `agent` holds it; whether it renewed.
pub(super) fn renew_if_held_by(
    tx: &Conn<'_>,
    task_id: &str,
    agent: &str,
) -> Result<bool, BoardError> {
    let renewed = tx
        .prepare_cached(&format!(
            "UPDATE tasks SET lease_expires_at = max(?1, updated_at) + lease_seconds * 1000
             WHERE id = ?2 AND assignee_agent_id = ?3 AND {HELD}"
        ))?
        .execute(params![tx.now_ms(), task_id, agent])?;
    Ok(renewed > 0)
}

/// SQL for a status move's `SET`: the lease stays, renewed from `?now`, when the task stays
/// `in_progress` under a lease; otherwise it goes. `?to` and `?now` are the move's parameters.
pub(super) fn on_move(to: &str, now: &str) -> String {
    format!(
        "lease_expires_at = CASE WHEN {to} = 'in_progress' AND {HELD} THEN {now} + lease_seconds * 1000 END,
         lease_seconds = CASE WHEN {to} = 'in_progress' AND {HELD} THEN lease_seconds END"
    )
}

/// Renews the lease `agent` holds on `task_id`: it runs out `seconds` from now (or its own length
/// from now, when `seconds` is `None`). A task with no lease gets one when `seconds` is given.
///
/// Refusals: `lease_expired` when the caller's lease had already run out (this call returned the
/// task to `todo`), `not_holder` when `agent` does not hold the task in progress, `no_lease` when
/// neither the task nor the call gives a length.
pub fn renew(
    conn: &Conn<'_>,
    task_id: &str,
    agent: &str,
    seconds: Option<i64>,
) -> Result<Task, BoardError> {
    let expired = expire_if_due(conn, task_id)?;
    if let Some(expired) = expired.filter(|e| e.agent.as_deref() == Some(agent)) {
        return Err(BoardError::LeaseExpired {
            agent: agent.to_owned(),
            at: expired.at,
        });
    }
    immediate(conn, |tx| {
        let row: Option<(String, Option<String>, Option<i64>)> = tx
            .prepare_cached(
                "SELECT status, assignee_agent_id, lease_seconds FROM tasks WHERE id = ?1",
            )?
            .query_row([task_id], |r| {
                Ok((
                    r.get("status")?,
                    r.get("assignee_agent_id")?,
                    r.get("lease_seconds")?,
                ))
            })
            .optional()?;
        let Some((status, holder, stored)) = row else {
            return Err(BoardError::no_task(task_id));
        };
        if status != Status::InProgress.as_str() || holder.as_deref() != Some(agent) {
            return Err(BoardError::NotHolder { status, holder });
        }
        let Some(seconds) = seconds.or(stored) else {
            return Err(BoardError::NoLease);
        };
        let now = tx.now_ms();
        let sql = format!(
            "UPDATE tasks SET lease_seconds = ?1, lease_expires_at = max(?2, updated_at) + ?1 * 1000
             WHERE id = ?3
             RETURNING {}",
            super::task::TASK_COLUMNS
        );
        Ok(tx
            .prepare_cached(&sql)?
            .query_row(params![seconds, now, task_id], Task::from_row)?)
    })
}

/// When the next lease on the board (of `team`, when given) runs out, if any holds a task: a
/// caller waiting for ready work looks again then, since no commit will tell it.
pub fn next_expiry(conn: &Connection, team: Option<&str>) -> Result<Option<i64>, BoardError> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT min(lease_expires_at) AS next FROM tasks
             WHERE lease_expires_at IS NOT NULL AND (?1 IS NULL OR team_id = ?1) AND {HELD}"
        ))?
        .query_row(params![team], |r| r.get("next"))?)
}

#[cfg(test)]
mod tests;
