//! The claim and every status move: the only writes to `tasks.status`, `assignee_agent_id` and
//! `assignee_runtime` after creation, but for a lease's expiry (`lease`), which returns a task to
//! `todo` as a release would.
//!
//! Guarantees: the claim is one guarded `UPDATE … RETURNING` (`todo`, unassigned, live), so of any
//! number of concurrent claimers exactly one wins (a task whose lease ran out is expired and
//! claimed in one `BEGIN IMMEDIATE`, see `lease`); a status move checks the state machine and the
//! verification gate against the row read inside the same `BEGIN IMMEDIATE` that writes it; moving
//! to `todo` clears the assignee and the verdict. Must never: check who the caller is (ownership is
//! never checked, as in the reference).

use rusqlite::OptionalExtension;
use rusqlite::params;

use super::task::{TASK_COLUMNS, exists, stored_status};
use super::{BoardError, Status, Task, lease};
use crate::db::{Conn, immediate};

/// Atomically claims a `todo`, unassigned, live task for `agent`: exactly one of any number of
/// concurrent claimers wins. With `lease_seconds`, the claim holds the task only that long unless
/// renewed (see the `lease` module); a task whose lease has run out is claimable, its expiry and the
/// new claim written in one `BEGIN IMMEDIATE`. `conflict` means the task exists but was not
/// claimable.
pub fn claim(
    conn: &Conn<'_>,
    task_id: &str,
    agent: &str,
    runtime: Option<&str>,
    lease_seconds: Option<i64>,
) -> Result<Task, BoardError> {
    let claim = Claim {
        task_id,
        agent,
        runtime,
        lease_seconds,
    };
    if let Some(task) = claim.try_on(conn)? {
        return Ok(task);
    }
    if lease::is_due(conn, task_id)? {
        // Under the write lock: the expiry is re-checked, so of racing claimers one expires it and
        // wins, and the others find it claimed afresh.
        let claimed = immediate(conn, |tx| {
            lease::expire_due(tx, task_id)?;
            claim.try_on(tx)
        })?;
        return claimed.ok_or(BoardError::Conflict);
    }
    if exists(conn, task_id)? {
        Err(BoardError::Conflict)
    } else {
        Err(BoardError::no_task(task_id))
    }
}

/// One claim's arguments, tried by the guarded `UPDATE`.
struct Claim<'a> {
    task_id: &'a str,
    agent: &'a str,
    runtime: Option<&'a str>,
    lease_seconds: Option<i64>,
}

impl Claim<'_> {
    /// The guarded `UPDATE … RETURNING`: the claimed task, or `None` when it was not claimable.
    fn try_on(&self, conn: &Conn<'_>) -> Result<Option<Task>, BoardError> {
        let sql = format!(
            "UPDATE tasks SET assignee_agent_id = ?1, assignee_runtime = ?2, status = 'in_progress',
                 updated_at = ?3, lease_seconds = ?5, lease_expires_at = ?3 + ?5 * 1000
             WHERE id = ?4 AND status = 'todo' AND assignee_agent_id IS NULL AND dropped = 0
             RETURNING {TASK_COLUMNS}"
        );
        Ok(conn
            .prepare_cached(&sql)?
            .query_row(
                params![
                    self.agent,
                    self.runtime,
                    conn.now_ms(),
                    self.task_id,
                    self.lease_seconds
                ],
                Task::from_row,
            )
            .optional()?)
    }
}

/// Releases an `in_progress` task back to `todo`, clearing its assignee, verdict and lease. Any
/// other status is `illegal_transition` (the reference answers success and does nothing, which
/// hides the mistake from the caller); so is a task whose lease had run out (it is `todo` by now).
pub fn release(conn: &Conn<'_>, task_id: &str) -> Result<Task, BoardError> {
    lease::expire_if_due(conn, task_id)?;
    let sql = format!(
        "UPDATE tasks SET assignee_agent_id = NULL, assignee_runtime = NULL, verification = NULL,
             lease_seconds = NULL, lease_expires_at = NULL, status = 'todo', updated_at = ?1
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
/// A lease stays (renewed) only while the task stays `in_progress`; a lease that had run out
/// first returns the task to `todo`, and the move is judged from there.
pub fn update_status(conn: &Conn<'_>, task_id: &str, to: Status) -> Result<Task, BoardError> {
    lease::expire_if_due(conn, task_id)?;
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
                 verification = CASE WHEN ?4 THEN NULL ELSE verification END,
                 {}
             WHERE id = ?5
             RETURNING {TASK_COLUMNS}",
            lease::on_move("?1", "?2")
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
