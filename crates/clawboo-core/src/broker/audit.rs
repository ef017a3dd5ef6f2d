//! The tool-call audit log: the `tool_call_audit` table, append-only.
//!
//! Owns: every read and write of `tool_call_audit`. Every call ends with one `after` row: its
//! result when it ran, else why it never did ([`Unrun`], a divergence from the reference, which
//! leaves a refused call with its `before` row only). Guarantees: what is written is already
//! scrubbed and bounded (arguments as a scrubbed JSON summary of at most 4000 characters, results
//! as scrubbed text of at most 8000); rows come back newest first, and of two rows written in the
//! same millisecond the later one first. Must never: update or delete a row; store raw arguments.

use rusqlite::{Connection, Row, params};
use serde::Serialize;
use serde_json::Value;

use super::summary;
use crate::db::{Conn, Keyset, new_id};

/// The rows a listing returns when the caller sets no limit.
pub const DEFAULT_LIMIT: u32 = 100;

/// What the gates decided, as recorded on a `before` row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The call ran unattended.
    Allow,
    /// A gate refused it.
    Deny,
    /// It waited for a person.
    RequireApproval,
    /// It ran, and an inspector noted something it would deny on a riskier tool.
    Observe,
}

impl Decision {
    /// The stored value.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Deny => "deny",
            Decision::RequireApproval => "require_approval",
            Decision::Observe => "observe",
        }
    }
}

/// Who made the call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Actor<'a> {
    /// The calling agent, if known.
    pub agent_id: Option<&'a str>,
    /// The tenant, if known.
    pub tenant_id: Option<&'a str>,
    /// The name of the HTTP token the call came in with (`tool_call_audit.caller`, ours).
    pub caller: Option<&'a str>,
}

/// One audit row, as the REST surface shows it (camelCase; `isError` is 0 or 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRow {
    /// Row id (UUID v4).
    pub id: String,
    /// The tool called (even an unknown name).
    pub tool_name: String,
    /// The calling agent.
    pub agent_id: Option<String>,
    /// `before` or `after`.
    pub phase: String,
    /// On `before` rows: `allow`, `deny`, `require_approval` or `observe`; on the `after` row of a
    /// call that never ran: `deny`, `timeout`, `expired` or `abandoned`; else none.
    pub decision: Option<String>,
    /// On `before` rows: the scrubbed arguments.
    pub args_summary: Option<String>,
    /// On `after` rows the scrubbed result (or why the call never ran); on `before` rows a note
    /// (`would-deny: …`).
    pub result_summary: Option<String>,
    /// 1 when the executor failed or the call never ran.
    pub is_error: i64,
    /// The tenant.
    pub tenant_id: Option<String>,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    /// Ours, shown only when set: the name of the HTTP token the call came in with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caller: Option<String>,
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<AuditRow> {
    Ok(AuditRow {
        id: row.get("id")?,
        tool_name: row.get("tool_name")?,
        agent_id: row.get("agent_id")?,
        phase: row.get("phase")?,
        decision: row.get("decision")?,
        args_summary: row.get("args_summary")?,
        result_summary: row.get("result_summary")?,
        is_error: row.get("is_error")?,
        tenant_id: row.get("tenant_id")?,
        created_at: row.get("created_at")?,
        caller: row.get("caller")?,
    })
}

/// Records the gates' decision on a call, before anything runs.
pub fn write_before(
    conn: &Conn<'_>,
    tool_name: &str,
    actor: Actor<'_>,
    decision: Decision,
    args: &Value,
    note: Option<&str>,
) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO tool_call_audit (id, tool_name, agent_id, phase, decision, args_summary,
             result_summary, is_error, tenant_id, created_at, caller)
         VALUES (?1, ?2, ?3, 'before', ?4, ?5, ?6, 0, ?7, ?8, ?9)",
        params![
            new_id(),
            tool_name,
            actor.agent_id,
            decision.as_str(),
            summary::args_summary(args),
            note.map(summary::result_summary),
            actor.tenant_id,
            conn.now_ms(),
            actor.caller
        ],
    )?;
    Ok(())
}

/// How a call that never ran ended, as the `decision` of its `after` row. (An executed call's
/// `after` row has no decision, as the reference writes it; its result says how it went.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unrun {
    /// A gate or a person refused it.
    Deny,
    /// Nobody decided while the caller waited.
    Timeout,
    /// The request lapsed before anyone decided.
    Expired,
    /// The caller stopped waiting: its server shut down, or it stopped heart-beating (killed).
    Abandoned,
}

impl Unrun {
    /// The stored value.
    pub fn as_str(self) -> &'static str {
        match self {
            Unrun::Deny => "deny",
            Unrun::Timeout => "timeout",
            Unrun::Expired => "expired",
            Unrun::Abandoned => "abandoned",
        }
    }
}

fn insert_after(
    conn: &Conn<'_>,
    tool_name: &str,
    actor: Actor<'_>,
    decision: Option<&str>,
    text: &str,
    is_error: bool,
) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO tool_call_audit (id, tool_name, agent_id, phase, decision, args_summary,
             result_summary, is_error, tenant_id, created_at, caller)
         VALUES (?1, ?2, ?3, 'after', ?4, NULL, ?5, ?6, ?7, ?8, ?9)",
        params![
            new_id(),
            tool_name,
            actor.agent_id,
            decision,
            summary::result_summary(text),
            i64::from(is_error),
            actor.tenant_id,
            conn.now_ms(),
            actor.caller
        ],
    )?;
    Ok(())
}

/// Records what an executed call returned (after compaction).
pub fn write_after(
    conn: &Conn<'_>,
    tool_name: &str,
    actor: Actor<'_>,
    output: &str,
    is_error: bool,
) -> rusqlite::Result<()> {
    insert_after(conn, tool_name, actor, None, output, is_error)
}

/// Records how a call that never ran ended: `end` as the decision, `why` (scrubbed) as the
/// summary, marked as an error.
pub fn write_unrun(
    conn: &Conn<'_>,
    tool_name: &str,
    actor: Actor<'_>,
    end: Unrun,
    why: &str,
) -> rusqlite::Result<()> {
    insert_after(conn, tool_name, actor, Some(end.as_str()), why, true)
}

/// Up to `limit` rows, newest first, of one tool (exact name) or of all.
pub fn list(
    conn: &Connection,
    tool_name: Option<&str>,
    limit: u32,
) -> rusqlite::Result<Vec<AuditRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, tool_name, agent_id, phase, decision, args_summary, result_summary, is_error,
                tenant_id, created_at, caller
         FROM tool_call_audit
         WHERE ?1 IS NULL OR tool_name = ?1
         ORDER BY created_at DESC, rowid DESC
         LIMIT ?2",
    )?;
    stmt.query_map(params![tool_name, i64::from(limit)], from_row)?
        .collect()
}

/// Which audit rows [`page`] returns; `None` fields do not filter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditFilter {
    /// Exactly this tool.
    pub tool_name: Option<String>,
    /// Exactly this agent.
    pub agent_id: Option<String>,
    /// Exactly this decision (`allow`, `deny`, `require_approval`, …).
    pub decision: Option<String>,
    /// Rows at or after this time (ms since the epoch).
    pub since: Option<i64>,
    /// Rows before this time.
    pub until: Option<i64>,
}

/// Up to `limit` rows matching `filter` after `cursor`, newest first, and the next page's cursor.
pub fn page(
    conn: &Connection,
    filter: &AuditFilter,
    limit: u32,
    cursor: Option<Keyset>,
) -> rusqlite::Result<(Vec<AuditRow>, Option<Keyset>)> {
    let (at, rowid) = Keyset::bounds(cursor);
    let rows = conn
        .prepare_cached(
            "SELECT rowid, id, tool_name, agent_id, phase, decision, args_summary, result_summary,
                    is_error, tenant_id, created_at, caller
             FROM tool_call_audit
             WHERE (?1 IS NULL OR tool_name = ?1) AND (?2 IS NULL OR agent_id = ?2)
               AND (?3 IS NULL OR decision = ?3)
               AND (?4 IS NULL OR created_at >= ?4) AND (?5 IS NULL OR created_at < ?5)
               AND (created_at, rowid) < (?6, ?7)
             ORDER BY created_at DESC, rowid DESC
             LIMIT ?8",
        )?
        .query_map(
            params![
                filter.tool_name,
                filter.agent_id,
                filter.decision,
                filter.since,
                filter.until,
                at,
                rowid,
                i64::from(limit) + 1
            ],
            |r| {
                Ok((
                    from_row(r)?,
                    Keyset {
                        at: r.get("created_at")?,
                        rowid: r.get("rowid")?,
                    },
                ))
            },
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(super::actions::split_page(rows, limit))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Db;
    use serde_json::json;

    #[test]
    fn rows_are_scrubbed_and_listed_newest_first_with_a_filter() {
        let db = Db::open_in_memory().unwrap();
        let conn = db.conn();
        let actor = Actor {
            agent_id: Some("a1"),
            tenant_id: None,
            caller: None,
        };
        let args = json!({"message": "key sk-abcdef1234567890"});
        write_before(&conn, "echo", actor, Decision::Allow, &args, None).unwrap();
        write_after(&conn, "echo", actor, "key sk-abcdef1234567890", false).unwrap();
        write_before(
            &conn,
            "nope",
            Actor::default(),
            Decision::Deny,
            &json!({}),
            None,
        )
        .unwrap();
        let echo = list(&conn, Some("echo"), DEFAULT_LIMIT).unwrap();
        assert_eq!(echo.len(), 2);
        assert_eq!(echo[0].phase, "after");
        assert_eq!(echo[0].result_summary.as_deref(), Some("key [REDACTED]"));
        assert_eq!(echo[0].decision, None);
        assert_eq!(echo[1].phase, "before");
        assert_eq!(echo[1].decision.as_deref(), Some("allow"));
        assert_eq!(
            echo[1].args_summary.as_deref(),
            Some(r#"{"message":"key [REDACTED]"}"#)
        );
        assert_eq!(echo[1].agent_id.as_deref(), Some("a1"));
        assert_eq!(list(&conn, None, DEFAULT_LIMIT).unwrap().len(), 3);
        assert_eq!(list(&conn, None, 1).unwrap()[0].tool_name, "nope");
        assert!(list(&conn, None, 0).unwrap().is_empty());
        let denied = AuditFilter {
            decision: Some("deny".into()),
            ..AuditFilter::default()
        };
        let (rows, next) = page(&conn, &denied, 10, None).unwrap();
        assert_eq!(
            (rows.len(), rows[0].tool_name.as_str(), next),
            (1, "nope", None)
        );
        let by_agent = AuditFilter {
            agent_id: Some("a1".into()),
            ..AuditFilter::default()
        };
        let (rows, next) = page(&conn, &by_agent, 1, None).unwrap();
        assert_eq!(rows[0].phase, "after");
        let (rows, next) = page(&conn, &by_agent, 1, next).unwrap();
        assert_eq!((rows[0].phase.as_str(), next), ("before", None));
        let future = AuditFilter {
            since: Some(i64::MAX - 1),
            ..AuditFilter::default()
        };
        assert!(page(&conn, &future, 10, None).unwrap().0.is_empty());
    }

    #[test]
    fn the_rest_shape_is_camel_case_with_integer_is_error() {
        let db = Db::open_in_memory().unwrap();
        let conn = db.conn();
        write_after(&conn, "echo", Actor::default(), "boom", true).unwrap();
        let row = serde_json::to_value(&list(&conn, None, 1).unwrap()[0]).unwrap();
        let keys = clawboo_tests::object_keys(&row);
        assert_eq!(
            keys,
            [
                "id",
                "toolName",
                "agentId",
                "phase",
                "decision",
                "argsSummary",
                "resultSummary",
                "isError",
                "tenantId",
                "createdAt"
            ]
        );
        assert_eq!(row["isError"], 1);
        assert_eq!(row["agentId"], Value::Null);
    }
}
