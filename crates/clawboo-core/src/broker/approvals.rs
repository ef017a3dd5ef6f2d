//! The human approval queue: the `tool_call_approvals` table, where a call that needs a person
//! waits, and where a person (or another process) resolves it.
//!
//! Owns: every read and write of `tool_call_approvals`, and the waiting loop. Guarantees:
//! - the first decision wins: resolving a row that is no longer pending changes nothing and says
//!   what it already was;
//! - a row past its expiry cannot be approved: resolving it marks it `expired`;
//! - a wait that times out, or finds its row past expiry, marks the row `expired` in the same
//!   transaction that checks it is still pending, so a decision made at the last instant is
//!   honoured rather than overwritten, and no row is left `pending` by a finished wait;
//! - waiting polls with a sleep and holds no lock while it sleeps;
//! - `allow_always` is remembered per agent, tenant and tool ([`standing_grant`]); a call without
//!   an agent is nobody in particular, so nothing is remembered for it.
//!
//! Must never: store unscrubbed arguments; decide whether a tool needs approval (the inspectors
//! do).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;
use serde_json::Value;

use super::audit::Actor;
use super::summary;
use crate::db::{Conn, Db, immediate, new_id};

/// A row's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Waiting for a person.
    Pending,
    /// Approved for this call.
    AllowOnce,
    /// Approved for this call and, for this agent, every later call of the tool.
    AllowAlways,
    /// Refused.
    Deny,
    /// Nobody decided in time.
    Expired,
}

impl Status {
    /// The stored value.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::AllowOnce => "allow_once",
            Status::AllowAlways => "allow_always",
            Status::Deny => "deny",
            Status::Expired => "expired",
        }
    }

    /// The status stored as `text`; an unknown value (another writer's) reads as expired, which
    /// nothing can approve.
    pub fn parse(text: &str) -> Self {
        match text {
            "pending" => Status::Pending,
            "allow_once" => Status::AllowOnce,
            "allow_always" => Status::AllowAlways,
            "deny" => Status::Deny,
            _ => Status::Expired,
        }
    }
}

/// A person's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// Run this call.
    AllowOnce,
    /// Run this call and stop asking for this agent and tool.
    AllowAlways,
    /// Do not run it.
    Deny,
}

impl Resolution {
    /// The status a resolved row gets.
    pub fn status(self) -> Status {
        match self {
            Resolution::AllowOnce => Status::AllowOnce,
            Resolution::AllowAlways => Status::AllowAlways,
            Resolution::Deny => Status::Deny,
        }
    }
}

/// One approval row, as the REST surface shows it (camelCase).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRow {
    /// Row id (UUID v4).
    pub id: String,
    /// The tool (or a synthetic scope key such as `delegate:code`).
    pub tool_name: String,
    /// The calling agent.
    pub agent_id: Option<String>,
    /// The scrubbed arguments.
    pub args_summary: Option<String>,
    /// Why approval is needed.
    pub reason: Option<String>,
    /// `pending`, `allow_once`, `allow_always`, `deny` or `expired`.
    pub status: String,
    /// The board task the approval gates (delegations only).
    pub task_id: Option<String>,
    /// The tenant.
    pub tenant_id: Option<String>,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    /// When the request lapses.
    pub expires_at: i64,
    /// When it was resolved or expired.
    pub resolved_at: Option<i64>,
}

impl ApprovalRow {
    /// The row's status.
    pub fn status(&self) -> Status {
        Status::parse(&self.status)
    }
}

const COLUMNS: &str = "id, tool_name, agent_id, args_summary, reason, status, task_id, tenant_id, created_at, expires_at, resolved_at";

fn from_row(row: &Row<'_>) -> rusqlite::Result<ApprovalRow> {
    Ok(ApprovalRow {
        id: row.get("id")?,
        tool_name: row.get("tool_name")?,
        agent_id: row.get("agent_id")?,
        args_summary: row.get("args_summary")?,
        reason: row.get("reason")?,
        status: row.get("status")?,
        task_id: row.get("task_id")?,
        tenant_id: row.get("tenant_id")?,
        created_at: row.get("created_at")?,
        expires_at: row.get("expires_at")?,
        resolved_at: row.get("resolved_at")?,
    })
}

/// A request for approval.
#[derive(Debug, Clone, Copy)]
pub struct NewApproval<'a> {
    /// The tool.
    pub tool_name: &'a str,
    /// Who is calling.
    pub actor: Actor<'a>,
    /// The arguments (scrubbed before they are stored).
    pub args: &'a Value,
    /// Why approval is needed.
    pub reason: &'a str,
    /// How long the request stays open.
    pub ttl: Duration,
}

/// Stores a pending request and returns it.
pub fn create(conn: &Conn<'_>, new: &NewApproval<'_>) -> rusqlite::Result<ApprovalRow> {
    let created_at = conn.now_ms();
    let row = ApprovalRow {
        id: new_id(),
        tool_name: new.tool_name.to_owned(),
        agent_id: new.actor.agent_id.map(str::to_owned),
        args_summary: Some(summary::args_summary(new.args)),
        reason: Some(new.reason.to_owned()),
        status: Status::Pending.as_str().to_owned(),
        task_id: None,
        tenant_id: new.actor.tenant_id.map(str::to_owned),
        created_at,
        expires_at: created_at.saturating_add(new.ttl.as_millis() as i64),
        resolved_at: None,
    };
    conn.execute(
        "INSERT INTO tool_call_approvals (id, tool_name, agent_id, args_summary, reason, status,
             task_id, tenant_id, created_at, expires_at, resolved_at)
         VALUES (?1, ?2, ?3, ?4, ?5, 'pending', NULL, ?6, ?7, ?8, NULL)",
        params![
            row.id,
            row.tool_name,
            row.agent_id,
            row.args_summary,
            row.reason,
            row.tenant_id,
            row.created_at,
            row.expires_at
        ],
    )?;
    Ok(row)
}

/// The row with `id`, whatever its status.
pub fn get(conn: &Connection, id: &str) -> rusqlite::Result<Option<ApprovalRow>> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM tool_call_approvals WHERE id = ?1"),
        [id],
        from_row,
    )
    .optional()
}

/// The open queue: pending rows not yet past expiry, newest first.
pub fn list_pending(conn: &Conn<'_>) -> rusqlite::Result<Vec<ApprovalRow>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM tool_call_approvals
         WHERE status = 'pending' AND expires_at > ?1
         ORDER BY created_at DESC, rowid DESC"
    ))?;
    stmt.query_map([conn.now_ms()], from_row)?.collect()
}

/// Marks every pending row past its expiry `expired` (rows whose waiter is gone); returns how many.
pub fn expire_stale(conn: &Conn<'_>) -> rusqlite::Result<usize> {
    let now = conn.now_ms();
    conn.execute(
        "UPDATE tool_call_approvals SET status = 'expired', resolved_at = ?1
         WHERE status = 'pending' AND expires_at < ?1",
        [now],
    )
}

/// What resolving a row did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// No row has that id.
    NotFound,
    /// The decision was recorded; the row after it.
    Recorded(ApprovalRow),
    /// The row was no longer pending; it is unchanged.
    AlreadyResolved(ApprovalRow),
    /// The row was past its expiry; it is now `expired` and the decision was not recorded.
    Expired(ApprovalRow),
}

fn set_status(conn: &Connection, id: &str, status: Status, now: i64) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE tool_call_approvals SET status = ?2, resolved_at = ?3
         WHERE id = ?1 AND status = 'pending'",
        params![id, status.as_str(), now],
    )?;
    Ok(())
}

/// Records a person's decision on a pending row (first decision wins).
pub fn resolve(conn: &Conn<'_>, id: &str, resolution: Resolution) -> rusqlite::Result<Resolved> {
    immediate(conn, |tx| {
        let Some(row) = get(tx, id)? else {
            return Ok(Resolved::NotFound);
        };
        if row.status() != Status::Pending {
            return Ok(Resolved::AlreadyResolved(row));
        }
        let now = tx.now_ms();
        let (status, wrap): (Status, fn(ApprovalRow) -> Resolved) = if now > row.expires_at {
            (Status::Expired, Resolved::Expired)
        } else {
            (resolution.status(), Resolved::Recorded)
        };
        set_status(tx, id, status, now)?;
        let after = get(tx, id)?.unwrap_or(row);
        Ok(wrap(after))
    })
}

/// The newest `allow_always` grant for this agent, tenant and tool, if any. A caller without an
/// agent has none.
pub fn standing_grant(
    conn: &Connection,
    tool_name: &str,
    actor: Actor<'_>,
) -> rusqlite::Result<Option<ApprovalRow>> {
    let Some(agent_id) = actor.agent_id else {
        return Ok(None);
    };
    conn.query_row(
        &format!(
            "SELECT {COLUMNS} FROM tool_call_approvals
             WHERE tool_name = ?1 AND agent_id = ?2 AND tenant_id IS ?3 AND status = 'allow_always'
             ORDER BY resolved_at DESC LIMIT 1"
        ),
        params![tool_name, agent_id, actor.tenant_id],
        from_row,
    )
    .optional()
}

/// How a wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitEnd {
    /// Approved for this call.
    AllowOnce,
    /// Approved, and remembered for the agent.
    AllowAlways,
    /// Refused.
    Deny,
    /// The request lapsed (its row is `expired`).
    Expired,
    /// Nobody decided within the wait (its row is `expired`).
    Timeout,
    /// The server shut down while the call waited (its row is `expired`, so nobody approves a
    /// call whose caller is gone).
    Abandoned,
}

impl WaitEnd {
    /// The word in `approval <word>` and `approval:<word>`.
    pub fn as_str(self) -> &'static str {
        match self {
            WaitEnd::AllowOnce => "allow_once",
            WaitEnd::AllowAlways => "allow_always",
            WaitEnd::Deny => "deny",
            WaitEnd::Expired => "expired",
            WaitEnd::Timeout => "timeout",
            WaitEnd::Abandoned => "abandoned",
        }
    }

    /// Whether the call may run.
    pub fn allows(self) -> bool {
        matches!(self, WaitEnd::AllowOnce | WaitEnd::AllowAlways)
    }

    fn from_status(status: Status) -> Option<Self> {
        match status {
            Status::Pending => None,
            Status::AllowOnce => Some(WaitEnd::AllowOnce),
            Status::AllowAlways => Some(WaitEnd::AllowAlways),
            Status::Deny => Some(WaitEnd::Deny),
            Status::Expired => Some(WaitEnd::Expired),
        }
    }
}

/// Closes a wait that ran out: marks the row `expired` if it is still pending and reports `end`;
/// if a decision landed first, reports that decision instead.
fn close_wait(db: &Db, id: &str, end: WaitEnd) -> rusqlite::Result<WaitEnd> {
    immediate(&db.conn(), |tx| {
        let Some(row) = get(tx, id)? else {
            return Ok(WaitEnd::Timeout);
        };
        if let Some(decided) = WaitEnd::from_status(row.status()) {
            return Ok(decided);
        }
        set_status(tx, id, Status::Expired, tx.now_ms())?;
        Ok(end)
    })
}

/// Waits for a person to resolve row `id`: re-reads it every `poll` (the first read at once) until
/// it is resolved, passes its expiry, `timeout` runs out, or `closing` is set (the server is
/// shutting down).
pub fn wait(
    db: &Db,
    id: &str,
    timeout: Duration,
    poll: Duration,
    closing: &AtomicBool,
) -> rusqlite::Result<WaitEnd> {
    let deadline = Instant::now() + timeout;
    loop {
        let Some(row) = get(&db.conn(), id)? else {
            return Ok(WaitEnd::Timeout);
        };
        if let Some(decided) = WaitEnd::from_status(row.status()) {
            return Ok(decided);
        }
        if db.now_ms() > row.expires_at {
            return close_wait(db, id, WaitEnd::Expired);
        }
        if closing.load(Ordering::Relaxed) {
            return close_wait(db, id, WaitEnd::Abandoned);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return close_wait(db, id, WaitEnd::Timeout);
        }
        std::thread::sleep(poll.min(left));
    }
}

#[cfg(test)]
mod tests;
