//! The human approval queue: the `tool_call_approvals` table, where a call that needs a person
//! waits, and where a person (or another process) resolves it.
//!
//! Owns: every read and write of `tool_call_approvals`, the waiting loop and its heartbeat, and the
//! `after` audit row of every call that ends here without running. Guarantees:
//! - the first decision wins: resolving a row that is no longer pending changes nothing; asking for
//!   the decision it already holds is not an error, asking for another one is a
//!   [`ResolveError::Conflict`] naming what it holds;
//! - a row past its expiry cannot be approved: reading the queue or resolving marks it `expired`;
//! - **heartbeat**: a waiting call writes `heartbeat_until = now + lease` at every poll (the
//!   lease is [`heartbeat_lease`]: four poll intervals, at least 3 s), starting when the request is
//!   created. A pending row whose `heartbeat_until` has passed has lost its caller (killed,
//!   frozen): whoever next reads the queue ([`expire_stale`] before a listing, [`resolve`], every
//!   other waiter's poll) marks it `expired`, so nobody approves a call no one waits for, and a
//!   killed caller's request leaves the queue seconds later instead of at its TTL. A row without a
//!   heartbeat (the reference's writers) is ended by its TTL only;
//! - a wait that times out, finds its row past expiry or is abandoned marks the row `expired` in
//!   the same transaction that checks it is still pending, so a decision made at the last instant
//!   is honoured rather than overwritten, and no row is left `pending` by a finished wait;
//! - whoever moves a tool call's row to `deny` or `expired` writes that call's `after` audit row
//!   (`deny`, `timeout`, `expired`, `abandoned`) in the same transaction, so each call that never
//!   runs gets exactly one (delegation rows, which carry a `task_id`, are not tool calls and get
//!   none; a decision written by the reference's own REST route writes none either, as there);
//! - waiting polls with a sleep and holds no lock while it sleeps;
//! - `allow_always` is remembered per agent, tenant and tool ([`standing_grant`]); a call without
//!   an agent is nobody in particular, so nothing is remembered for it and `allow_always` on its
//!   row is stored as `allow_once`, what it means ([`Resolution::for_row`]).
//!
//! - retention ([`RETENTION`], off by default) removes only *resolved* rows older than the cutoff
//!   (by `resolved_at`, else `created_at`): never a `pending` row (someone may be waiting on it),
//!   and never an `allow_always` row, which is a standing grant ([`standing_grant`] reads it, so
//!   removing it would silently take a person's decision back). No other table points at an
//!   approval row (the audit rows of its call carry no approval id).
//!
//! Must never: store unscrubbed arguments; decide whether a tool needs approval (the inspectors
//! do).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rusqlite::{OptionalExtension, Row, params};
use serde::Serialize;
use serde_json::Value;

use super::audit::{self, Actor, DecidedVia, Unrun};
use super::summary;
use crate::db::retention::PurgeRule;
use crate::db::{Conn, Db, immediate, new_id};
use crate::log;

/// Retention of the approval queue: resolved rows older than the cutoff, oldest first, except
/// standing grants (see the module docs).
pub const RETENTION: PurgeRule = PurgeRule {
    count: "SELECT count(*) FROM tool_call_approvals
            WHERE status NOT IN ('pending', 'allow_always') AND coalesce(resolved_at, created_at) < ?1",
    delete: "DELETE FROM tool_call_approvals WHERE rowid IN
             (SELECT rowid FROM tool_call_approvals
              WHERE status NOT IN ('pending', 'allow_always')
                AND coalesce(resolved_at, created_at) < ?1
              ORDER BY created_at LIMIT ?2)",
};

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

    /// The decision's name, as stored and as a person types it (`allow_once`, …).
    pub fn as_str(self) -> &'static str {
        self.status().as_str()
    }

    /// What this decision means for `row`: `allow_always` on a row that names no agent is
    /// `allow_once` (nothing can be remembered for nobody in particular).
    pub fn for_row(self, row: &ApprovalRow) -> Self {
        match (self, &row.agent_id) {
            (Resolution::AllowAlways, None) => Resolution::AllowOnce,
            _ => self,
        }
    }
}

/// The shortest heartbeat lease.
const MIN_LEASE: Duration = Duration::from_secs(3);

/// How many poll intervals one heartbeat covers.
const LEASE_POLLS: u32 = 4;

/// How long one heartbeat of a caller that polls every `poll` vouches for it: four poll intervals,
/// at least 3 s (so a busy machine's scheduling delays do not end a live wait).
pub fn heartbeat_lease(poll: Duration) -> Duration {
    poll.saturating_mul(LEASE_POLLS).max(MIN_LEASE)
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
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
    /// Ours (not in the reference's REST shape): until when the waiting caller's latest heartbeat
    /// vouches for it; `None` for a row nobody heart-beats.
    #[serde(skip)]
    pub heartbeat_until: Option<i64>,
    /// Ours, shown only when set: where the decision came from (`elicitation`, `rest`,
    /// `console`, `cli`); `None` while pending, once expired, or when the reference's writers
    /// decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_via: Option<String>,
    /// Ours, shown only when set: the name of the HTTP token the call came in with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caller: Option<String>,
    /// Ours, shown only when set: who decided (a token's name, or `local operator`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_by: Option<String>,
}

impl ApprovalRow {
    /// The row's status.
    pub fn status(&self) -> Status {
        Status::parse(&self.status)
    }

    /// The stored (scrubbed) arguments masked again for a person to read, as the operator
    /// surfaces show them.
    pub fn args_for_display(&self) -> Option<String> {
        self.args_summary.as_deref().map(summary::for_display)
    }
}

const COLUMNS: &str = "id, tool_name, agent_id, args_summary, reason, status, task_id, tenant_id, created_at, expires_at, resolved_at, heartbeat_until, caller, resolved_by, decided_via";

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
        heartbeat_until: row.get("heartbeat_until")?,
        caller: row.get("caller")?,
        resolved_by: row.get("resolved_by")?,
        decided_via: row.get("decided_via")?,
    })
}

/// Who decided a request and through which surface, as its row records them (`resolved_by`,
/// `decided_via`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decider<'a> {
    /// Who: a token's name, `local operator`, or the person answering in the agent's client.
    pub by: &'a str,
    /// Through which surface.
    pub via: DecidedVia,
}

impl Decider<'static> {
    /// The person who answered the question in the agent's MCP client (elicitation).
    pub const IN_THE_CLIENT: Self = Decider {
        by: "person in the client",
        via: DecidedVia::Elicitation,
    };

    /// A person at the CLI, for the tests that decide requests.
    #[cfg(test)]
    pub const TESTER: Self = Decider {
        by: "tester",
        via: DecidedVia::Cli,
    };
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
    /// The first heartbeat's lease, for a request whose caller waits and heart-beats
    /// ([`heartbeat_lease`]); `None` for a request only its TTL ends.
    pub heartbeat: Option<Duration>,
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
        expires_at: created_at.saturating_add(millis(new.ttl)),
        resolved_at: None,
        heartbeat_until: new
            .heartbeat
            .map(|lease| created_at.saturating_add(millis(lease))),
        caller: new.actor.caller.map(str::to_owned),
        resolved_by: None,
        decided_via: None,
    };
    conn.execute(
        "INSERT INTO tool_call_approvals (id, tool_name, agent_id, args_summary, reason, status,
             task_id, tenant_id, created_at, expires_at, resolved_at, heartbeat_until, caller)
         VALUES (?1, ?2, ?3, ?4, ?5, 'pending', NULL, ?6, ?7, ?8, NULL, ?9, ?10)",
        params![
            row.id,
            row.tool_name,
            row.agent_id,
            row.args_summary,
            row.reason,
            row.tenant_id,
            row.created_at,
            row.expires_at,
            row.heartbeat_until,
            row.caller
        ],
    )?;
    Ok(row)
}

/// The row with `id`, whatever its status.
pub fn get(conn: &Conn<'_>, id: &str) -> rusqlite::Result<Option<ApprovalRow>> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM tool_call_approvals WHERE id = ?1"),
        [id],
        from_row,
    )
    .optional()
}

/// The open queue: pending rows not yet past expiry whose caller (if it heart-beats) is still
/// there, newest first. Read-only; [`expire_stale`] first to also mark the others `expired`.
pub fn list_pending(conn: &Conn<'_>) -> rusqlite::Result<Vec<ApprovalRow>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM tool_call_approvals
         WHERE status = 'pending' AND expires_at > ?1
           AND (heartbeat_until IS NULL OR heartbeat_until >= ?1)
         ORDER BY created_at DESC, rowid DESC"
    ))?;
    stmt.query_map([conn.now_ms()], from_row)?.collect()
}

/// Marks every pending row past its expiry, or whose caller stopped heart-beating, `expired`
/// (with the call's `after` audit row); returns how many.
pub fn expire_stale(conn: &Conn<'_>) -> rusqlite::Result<usize> {
    immediate(conn, |tx| sweep(tx, tx.now_ms()))
}

/// [`expire_stale`] inside a transaction the caller holds.
fn sweep(tx: &Conn<'_>, now: i64) -> rusqlite::Result<usize> {
    let stale: Vec<ApprovalRow> = tx
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM tool_call_approvals
             WHERE status = 'pending' AND (expires_at < ?1 OR heartbeat_until < ?1)"
        ))?
        .query_map([now], from_row)?
        .collect::<rusqlite::Result<_>>()?;
    for row in &stale {
        let unrun = if row.expires_at < now {
            WaitEnd::Expired.unrun()
        } else {
            Some((
                Unrun::Abandoned,
                "approval abandoned: the waiting caller stopped heart-beating (killed or frozen); the request was expired",
            ))
        };
        finish(tx, row, Status::Expired, unrun, now, None)?;
    }
    Ok(stale.len())
}

/// Gives pending `row` its final `status` (decided by a person, if one decided: who and through
/// which surface) and, for a tool call that will not run, writes the call's `after` audit row
/// (`unrun`), in the caller's transaction. The update is guarded (`WHERE status = 'pending'`): on a row that is no
/// longer pending it changes nothing and writes no audit row.
fn finish(
    tx: &Conn<'_>,
    row: &ApprovalRow,
    status: Status,
    unrun: Option<(Unrun, &str)>,
    now: i64,
    decider: Option<Decider<'_>>,
) -> rusqlite::Result<()> {
    let via = decider.map(|d| d.via);
    let changed = tx.execute(
        "UPDATE tool_call_approvals SET status = ?2, resolved_at = ?3, resolved_by = ?4,
             decided_via = ?5
         WHERE id = ?1 AND status = 'pending'",
        params![
            row.id,
            status.as_str(),
            now,
            decider.map(|d| d.by),
            via.map(DecidedVia::as_str)
        ],
    )?;
    if let (1, Some((end, why)), None) = (changed, unrun, &row.task_id) {
        let actor = Actor {
            agent_id: row.agent_id.as_deref(),
            tenant_id: row.tenant_id.as_deref(),
            caller: row.caller.as_deref(),
        };
        let why = match via {
            Some(via) => format!("{why} (via {})", via.as_str()),
            None => why.to_owned(),
        };
        audit::write_unrun(tx, &row.tool_name, actor, end, &why, via)?;
    }
    Ok(())
}

/// What a resolve did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The row afterwards.
    pub row: ApprovalRow,
    /// False when the row already held this decision: nothing changed.
    pub changed: bool,
}

/// Why a decision was not recorded.
/// Wire: ours.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// No row has that id.
    /// Wire: reference (seed 003: the REST 404 body).
    #[error("approval not found")]
    NotFound {
        /// The id asked for.
        id: String,
    },
    /// The row already ended otherwise (another decision, or expired); it is unchanged.
    #[error(
        "approval {} ({}) was already resolved as {}; {} not applied",
        row.id,
        row.tool_name,
        row.status,
        asked.as_str()
    )]
    Conflict {
        /// The row as it is.
        row: Box<ApprovalRow>,
        /// The decision that was not applied.
        asked: Resolution,
    },
    /// The database failed.
    #[error("database error: {0}")]
    Db(#[from] rusqlite::Error),
}

/// Records a person's decision on a pending row. The first decision wins: asking again for the
/// decision a row holds changes nothing (`changed: false`); asking for another one, or resolving a
/// row that expired (or, read now, has expired or lost its caller), is a
/// [`ResolveError::Conflict`]. `allow_always` on a row without an agent is stored as `allow_once`.
/// A `deny` writes the call's `after` audit row. The `decider` (who decided, through which surface)
/// is stored on the row (`resolved_by`, `decided_via`), and the surface on that audit row.
pub fn resolve(
    conn: &Conn<'_>,
    id: &str,
    resolution: Resolution,
    decider: Decider<'_>,
) -> Result<Resolved, ResolveError> {
    enum Step {
        Missing,
        Holds(ApprovalRow),
        Conflict(ApprovalRow),
        Recorded(ApprovalRow),
    }
    let step = immediate(conn, |tx| {
        let now = tx.now_ms();
        sweep(tx, now)?;
        let Some(row) = get(tx, id)? else {
            return Ok(Step::Missing);
        };
        let wanted = resolution.for_row(&row).status();
        if row.status() == wanted {
            return Ok(Step::Holds(row));
        }
        if row.status() != Status::Pending {
            return Ok(Step::Conflict(row));
        }
        let unrun = WaitEnd::from_status(wanted).and_then(WaitEnd::unrun);
        finish(tx, &row, wanted, unrun, now, Some(decider))?;
        Ok::<_, rusqlite::Error>(Step::Recorded(get(tx, id)?.unwrap_or(row)))
    })?;
    match step {
        Step::Missing => Err(ResolveError::NotFound { id: id.to_owned() }),
        Step::Holds(row) => Ok(Resolved {
            row,
            changed: false,
        }),
        Step::Conflict(row) => Err(ResolveError::Conflict {
            row: Box::new(row),
            asked: resolution,
        }),
        Step::Recorded(row) => Ok(Resolved { row, changed: true }),
    }
}

/// The newest `allow_always` grant for this agent, tenant and tool, if any. A caller without an
/// agent has none.
pub fn standing_grant(
    conn: &Conn<'_>,
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

impl WaitEnd {
    /// The `after` row (decision, summary) of a call whose wait ended this way without running
    /// it; `None` for the ends that run it.
    fn unrun(self) -> Option<(Unrun, &'static str)> {
        match self {
            WaitEnd::AllowOnce | WaitEnd::AllowAlways => None,
            WaitEnd::Deny => Some((Unrun::Deny, "approval deny: refused by a person")),
            WaitEnd::Timeout => Some((
                Unrun::Timeout,
                "approval timeout: nobody decided while the caller waited",
            )),
            WaitEnd::Expired => Some((
                Unrun::Expired,
                "approval expired: nobody decided before the request lapsed",
            )),
            WaitEnd::Abandoned => Some((
                Unrun::Abandoned,
                "approval abandoned: the caller's server shut down while it waited",
            )),
        }
    }
}

/// How a wait ended, and where the decision came from when a person decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waited {
    /// How it ended.
    pub end: WaitEnd,
    /// Where the decision came from (the row's `decided_via`).
    pub via: Option<DecidedVia>,
}

impl Waited {
    fn of(end: WaitEnd) -> Self {
        Self { end, via: None }
    }

    /// The end `row` holds, if it is decided or expired.
    fn from_row(row: &ApprovalRow) -> Option<Self> {
        WaitEnd::from_status(row.status()).map(|end| Self {
            end,
            via: row.decided_via.as_deref().and_then(DecidedVia::parse),
        })
    }
}

/// Closes a wait that ran out: marks the row `expired` (writing the call's `after` row) if it is
/// still pending and reports `end`; if a decision landed first, reports that decision instead.
fn close_wait(db: &Db, id: &str, end: WaitEnd) -> rusqlite::Result<Waited> {
    immediate(&db.conn(), |tx| {
        let Some(row) = get(tx, id)? else {
            return Ok(Waited::of(WaitEnd::Timeout));
        };
        if let Some(decided) = Waited::from_row(&row) {
            return Ok(decided);
        }
        finish(tx, &row, Status::Expired, end.unrun(), tx.now_ms(), None)?;
        Ok(Waited::of(end))
    })
}

/// What the person in the client said about a pending request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientSays {
    /// A decision (a declined or dismissed question is [`Resolution::Deny`]).
    Decided(Resolution),
    /// No usable answer (the client failed or the session ended): the queue decides alone.
    NoAnswer(String),
}

/// A question about one pending request, put to the person in the MCP client by whoever serves
/// the call (the tools server, by elicitation): the waiting call polls it beside the queue, and
/// dropping it withdraws the question.
pub struct ClientAsk(Box<dyn FnMut() -> Option<ClientSays> + Send>);

impl ClientAsk {
    /// A question whose answer `poll` reports once it has arrived (`None` until then).
    pub fn new(poll: impl FnMut() -> Option<ClientSays> + Send + 'static) -> Self {
        Self(Box::new(poll))
    }

    fn poll(&mut self) -> Option<ClientSays> {
        (self.0)()
    }
}

impl std::fmt::Debug for ClientAsk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientAsk")
    }
}

/// Applies the client's answer to row `id` as the queue's own decisions are applied
/// ([`resolve`], via `elicitation`): if the queue decided first, nothing changes. An answer that
/// is no decision leaves the queue to decide.
fn hear_client(db: &Db, id: &str, says: ClientSays) -> rusqlite::Result<()> {
    match says {
        ClientSays::Decided(resolution) => {
            match resolve(&db.conn(), id, resolution, Decider::IN_THE_CLIENT) {
                Ok(_) | Err(ResolveError::Conflict { .. } | ResolveError::NotFound { .. }) => {
                    Ok(())
                }
                Err(ResolveError::Db(e)) => Err(e),
            }
        }
        ClientSays::NoAnswer(why) => {
            log::info(&format!(
                "approval {id}: the client gave no answer ({why}); the queue decides"
            ));
            Ok(())
        }
    }
}

/// One heartbeat of the call waiting on row `id`: reads the row and, while it is pending, extends
/// its heartbeat by `lease` and expires the requests whose callers stopped heart-beating, in one
/// transaction. `None` when the row is gone.
fn beat(db: &Db, id: &str, lease: Duration) -> rusqlite::Result<Option<ApprovalRow>> {
    immediate(&db.conn(), |tx| {
        let now = tx.now_ms();
        let Some(row) = get(tx, id)? else {
            return Ok(None);
        };
        if row.status() == Status::Pending {
            tx.execute(
                "UPDATE tool_call_approvals SET heartbeat_until = ?2
                 WHERE id = ?1 AND status = 'pending'",
                params![id, now.saturating_add(millis(lease))],
            )?;
            sweep(tx, now)?;
        }
        Ok(Some(row))
    })
}

/// Waits for a person to resolve row `id`: heart-beats and re-reads it every `poll` (the first
/// read at once) until it is resolved, passes its expiry, `timeout` runs out, or `closing` is set
/// (the server is shutting down). With `client`, the person in the MCP client was asked too: their
/// answer, polled as often, is applied like a queue decision, and the first decision wins.
pub fn wait(
    db: &Db,
    id: &str,
    timeout: Duration,
    poll: Duration,
    closing: &AtomicBool,
    mut client: Option<ClientAsk>,
) -> rusqlite::Result<Waited> {
    let deadline = Instant::now() + timeout;
    let lease = heartbeat_lease(poll);
    loop {
        let Some(row) = beat(db, id, lease)? else {
            return Ok(Waited::of(WaitEnd::Timeout));
        };
        if let Some(decided) = Waited::from_row(&row) {
            return Ok(decided);
        }
        if let Some(says) = client.as_mut().and_then(ClientAsk::poll) {
            client = None;
            hear_client(db, id, says)?;
            continue;
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
