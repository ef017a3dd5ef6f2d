//! The claim and every status move: the only writes to `tasks.status`, `assignee_agent_id` and
//! `assignee_runtime` after creation.
//!
//! Guarantees: the claim is one guarded `UPDATE … RETURNING` (`todo`, unassigned, live), so of any
//! number of concurrent claimers exactly one wins; a status move checks the state machine and the
//! verification gate against the row read inside the same `BEGIN IMMEDIATE` that writes it; moving
//! to `todo` clears the assignee and the verdict. Must never: check who the caller is (ownership is
//! never checked, as in the reference).

use rusqlite::OptionalExtension;
use rusqlite::params;

use super::task::{TASK_COLUMNS, exists, stored_status};
use super::{BoardError, Status, Task};
use crate::db::{Conn, immediate};

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

/// True when a stored verdict forbids moving to `done`: `fail`, or `completed_with_debt` whose last
/// attempt's deterministic gate did not pass. No verdict, or one that cannot be read, does not.
pub(super) fn verdict_blocks_done(verification: Option<&str>) -> bool {
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
