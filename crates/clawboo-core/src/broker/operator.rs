//! The operator's typed queries: what a person's front door (the tools bin's commands in
//! `cli::operator`, an HTTP surface) reads and writes to see the tools, work the approval queue and
//! read the audit log, returned as data.
//!
//! Guarantees: every summary a query returns is masked again ([`for_display`]) on top of the
//! write-time scrub, for rows another writer stored; reading the queue first expires the requests
//! nobody waits for any more, so what it returns can still be approved; a switch names only a
//! builtin tool.
//!
//! Must never: print, parse arguments, choose exit codes or format times (the front doors do).

use serde::Serialize;

use super::actions::{self, Action, ActionRow};
use super::approvals::{self, ApprovalRow, Resolution, ResolveError, Resolved};
use super::audit::{self, AuditFilter, AuditRow};
use super::availability::AvailabilityContext;
use super::builtins;
use super::registry;
use super::summary::for_display;
use crate::db::{Db, Keyset};

/// One tool as the operator sees it; serialized, one entry of the reference's `GET /api/tools`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolStatus {
    /// The tool's name.
    pub name: &'static str,
    /// Its description.
    pub description: &'static str,
    /// Who provides it.
    pub owner: &'static str,
    /// `safe`, `external` or `destructive`.
    pub risk: &'static str,
    /// Whether it may be offered in this environment.
    pub available: bool,
    /// Why not, when it may not (`env-missing:…`, `auth-missing:…`).
    pub diagnostics: Vec<String>,
    /// Whether calls to it are switched on (not part of the REST entry).
    #[serde(skip)]
    pub enabled: bool,
}

/// Every builtin with its risk, its availability judged in `env`, and its switch.
pub fn tools(db: &Db, env: &AvailabilityContext) -> rusqlite::Result<Vec<ToolStatus>> {
    let conn = db.conn();
    builtins::ALL
        .iter()
        .map(|tool| {
            let availability = env.evaluate(tool.requires.as_ref());
            Ok(ToolStatus {
                name: tool.name,
                description: tool.description,
                owner: tool.owner(),
                risk: tool.risk.as_str(),
                available: availability.visible,
                diagnostics: availability.diagnostics,
                enabled: registry::is_enabled(&conn, tool.name)?,
            })
        })
        .collect()
}

/// A row as shown: its summary masked again.
fn shown_approval(mut row: ApprovalRow) -> ApprovalRow {
    row.args_summary = row.args_summary.as_deref().map(for_display);
    row
}

/// The open approval queue, newest first, after expiring the requests nobody waits for.
pub fn pending_approvals(db: &Db) -> rusqlite::Result<Vec<ApprovalRow>> {
    let rows = {
        let conn = db.conn();
        approvals::expire_stale(&conn)?;
        approvals::list_pending(&conn)?
    };
    Ok(rows.into_iter().map(shown_approval).collect())
}

/// Records a person's decision on approval `id` (see [`approvals::resolve`]: a repeat of the
/// decision the row holds is `changed: false`, another decision a conflict); every row in the
/// answer is masked. `by` is who decided, as the row records it.
pub fn resolve(
    db: &Db,
    id: &str,
    resolution: Resolution,
    by: &str,
) -> Result<Resolved, ResolveError> {
    match approvals::resolve(&db.conn(), id, resolution, by) {
        Ok(resolved) => Ok(Resolved {
            row: shown_approval(resolved.row),
            changed: resolved.changed,
        }),
        Err(ResolveError::Conflict { row, asked }) => Err(ResolveError::Conflict {
            row: Box::new(shown_approval(*row)),
            asked,
        }),
        Err(other) => Err(other),
    }
}

/// An audit row as shown: its summaries masked again.
fn shown_audit(mut row: AuditRow) -> AuditRow {
    row.args_summary = row.args_summary.as_deref().map(for_display);
    row.result_summary = row.result_summary.as_deref().map(for_display);
    row
}

/// Up to `limit` audit rows, newest first, of one tool (a blank name means every tool), masked.
pub fn audit_log(db: &Db, tool: Option<&str>, limit: u32) -> rusqlite::Result<Vec<AuditRow>> {
    let tool = tool.filter(|t| !t.is_empty());
    let rows = audit::list(&db.conn(), tool, limit)?;
    Ok(rows.into_iter().map(shown_audit).collect())
}

/// A page of the audit log matching `filter` (the console's filters), masked, and the next
/// page's cursor.
pub fn audit_page(
    db: &Db,
    filter: &AuditFilter,
    limit: u32,
    cursor: Option<Keyset>,
) -> rusqlite::Result<(Vec<AuditRow>, Option<Keyset>)> {
    let (rows, next) = audit::page(&db.conn(), filter, limit, cursor)?;
    Ok((rows.into_iter().map(shown_audit).collect(), next))
}

/// Records that `actor` (a token's name, or "local operator") did `action` to `target`.
pub fn record_action(
    db: &Db,
    actor: &str,
    action: Action,
    target: &str,
) -> rusqlite::Result<ActionRow> {
    actions::record(&db.conn(), actor, action, target)
}

/// A page of the operator actions, newest first, and the next page's cursor.
pub fn actions_page(
    db: &Db,
    limit: u32,
    cursor: Option<Keyset>,
) -> rusqlite::Result<(Vec<ActionRow>, Option<Keyset>)> {
    actions::list(&db.conn(), limit, cursor)
}

/// Why a tool could not be switched.
/// Wire: ours.
#[derive(Debug, thiserror::Error)]
pub enum SwitchError {
    /// No builtin has that name.
    #[error("no tool named {name:?} (the tools are {known})")]
    UnknownTool {
        /// The name asked for.
        name: String,
        /// The builtin names, comma-separated.
        known: String,
    },
    /// The registry could not be written.
    #[error("database error: {0}")]
    Db(#[from] rusqlite::Error),
}

/// Switches calls to the builtin `tool` on or off (recording the builtins first, so the switch
/// holds on a file no server has opened yet).
pub fn set_enabled(db: &Db, tool: &str, enabled: bool) -> Result<(), SwitchError> {
    if builtins::by_name(tool).is_none() {
        let known: Vec<&str> = builtins::ALL.iter().map(|b| b.name).collect();
        return Err(SwitchError::UnknownTool {
            name: tool.to_owned(),
            known: known.join(", "),
        });
    }
    let conn = db.conn();
    registry::seed_builtins(&conn)?;
    registry::set_enabled(&conn, tool, enabled)?;
    Ok(())
}
