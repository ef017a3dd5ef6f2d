//! The operator commands of `clawboo-mcp-tools`: what a person runs to see the tools, work the
//! approval queue and read the audit log, against the same database the servers use.
//!
//! `tools`, `approvals`, `approve <id> [--always]`, `deny <id>`, `audit [--tool NAME] [--limit N]`,
//! `enable <tool>`, `disable <tool>`; each prints a table (or a line) by default and, with
//! `--json`, the body the reference's `/api/tools*` REST routes return (`{"ok":true,…}`, or
//! `{"error":…}` on failure).
//!
//! Guarantees: stored summaries are masked again before they are shown; resolving an unknown id
//! is an error (exit 1); resolving a row that is no longer pending changes nothing: asking again
//! for the decision it holds says so and exits 0, asking for another one (deny after approve,
//! approve after deny, anything after expiry) says what it holds since when and what was not
//! applied, on stderr (or as `{"error":…,"approval":…}` with `--json`), and exits 1; a row past
//! its expiry, or whose caller stopped waiting, cannot be approved. `approve --always` on a row
//! that names no agent approves it once and stores `allow_once`, and says so.
//! Exit codes: 0 done, 1 not done, 2 usage.
//!
//! Owns the front-door half: argument parsing, tables, times shown in UTC, texts and exit codes.
//! What the commands read and write are typed queries in `crate::broker::operator`.
//! Must never: print a secret a row might still hold; touch SQL.

use std::process::ExitCode;

use serde::Serialize;
use serde_json::json;

use super::{BinInfo, open_db, usage_error};
use crate::args::{Args, Usage, Word};
use crate::broker::approvals::{ApprovalRow, Resolution, ResolveError, Resolved, Status};
use crate::broker::audit;
use crate::broker::availability::AvailabilityContext;
use crate::broker::operator::{self as queries, SwitchError};
use crate::db::Db;

/// The operator commands: `(name, synopsis, what it does)`, as the bin's help lists them.
pub fn commands() -> Vec<(&'static str, String, String)> {
    [
        (
            "tools",
            "[--json]",
            "the tools with their risk, availability and diagnostics",
        ),
        (
            "approvals",
            "[--json]",
            "the pending approval queue, newest first",
        ),
        (
            "approve",
            "ID [--always] [--json]",
            "let a waiting call run (--always: stop asking this agent for this tool)",
        ),
        ("deny", "ID [--json]", "refuse a waiting call"),
        (
            "audit",
            "[--tool NAME] [--limit N] [--json]",
            "the tool-call audit log, newest first (default 100 rows)",
        ),
        ("enable", "TOOL [--json]", "switch calls to a tool on"),
        ("disable", "TOOL [--json]", "switch calls to a tool off"),
    ]
    .into_iter()
    .map(|(name, synopsis, about)| (name, synopsis.to_owned(), about.to_owned()))
    .collect()
}

/// One operator command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// List the builtins with their availability.
    Tools,
    /// List the pending approvals.
    Approvals,
    /// Resolve an approval.
    Resolve {
        /// The approval id.
        id: String,
        /// The decision.
        resolution: Resolution,
    },
    /// Read the audit log.
    Audit {
        /// Only this tool's rows.
        tool: Option<String>,
        /// At most this many rows.
        limit: u32,
    },
    /// Switch a tool's calls on or off.
    SetEnabled {
        /// The tool.
        tool: String,
        /// On or off.
        enabled: bool,
    },
}

/// A command and its output format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// What to do.
    pub command: Command,
    /// Print the REST body as JSON instead of a table.
    pub json: bool,
}

/// What a command printed and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// Standard output.
    pub out: String,
    /// Standard error (human-readable failures).
    pub err: String,
    /// The exit code: 0 done, 1 not done.
    pub code: u8,
}

impl Report {
    fn ok(out: String) -> Self {
        Self {
            out,
            err: String::new(),
            code: 0,
        }
    }
}

/// Reads an operator command from `args`; `None` when `args` does not start with one.
pub fn parse(args: &[String]) -> Option<Result<Invocation, Usage>> {
    let (name, rest) = args.split_first()?;
    if !commands().iter().any(|(known, _, _)| known == name) {
        return None;
    }
    Some(parse_command(name, rest))
}

fn parse_command(name: &str, rest: &[String]) -> Result<Invocation, Usage> {
    let mut json = false;
    let mut always = false;
    let mut tool = None;
    let mut limit = audit::DEFAULT_LIMIT;
    let mut positional = Vec::new();
    let mut args = Args::new(rest);
    while let Some(word) = args.next_word()? {
        match (&word, name) {
            (Word::Flag(flag), _) if flag == "--json" => json = true,
            (Word::Flag(flag), "approve") if flag == "--always" => always = true,
            (Word::Flag(flag), "audit") if flag == "--tool" => tool = Some(args.value()?),
            (Word::Flag(flag), "audit") if flag == "--limit" => {
                limit = args.parsed("a whole number of rows")?
            }
            (Word::Plain(text), _) => positional.push(text.clone()),
            _ => return Err(word.unexpected()),
        }
    }
    let wants_one = matches!(name, "approve" | "deny" | "enable" | "disable");
    let what = if name == "enable" || name == "disable" {
        "a tool name"
    } else {
        "an approval id"
    };
    match (wants_one, positional.len()) {
        (true, 1) | (false, 0) => {}
        (true, _) => return Err(Usage(format!("needs exactly one argument: {what}"))),
        (false, _) => return Err(crate::args::unexpected(&positional[0])),
    }
    let one = positional.pop().unwrap_or_default();
    let command = match name {
        "tools" => Command::Tools,
        "approvals" => Command::Approvals,
        "approve" => Command::Resolve {
            id: one,
            resolution: if always {
                Resolution::AllowAlways
            } else {
                Resolution::AllowOnce
            },
        },
        "deny" => Command::Resolve {
            id: one,
            resolution: Resolution::Deny,
        },
        "audit" => Command::Audit { tool, limit },
        _ => Command::SetEnabled {
            tool: one,
            enabled: name == "enable",
        },
    };
    Ok(Invocation { command, json })
}

/// Runs the operator command `name` with `rest`: opens the database named by the environment,
/// runs the command, prints its report and returns its exit code.
///
/// Errors follow the bins' one style: `{"error":…}` on stdout under `--json`, else one line on
/// stderr prefixed with the bin's name; exit 2 for usage, 1 for failure.
pub fn dispatch(info: &BinInfo, name: &str, rest: &[String]) -> ExitCode {
    let bin = info.bin;
    let json = rest.iter().any(|a| a == "--json");
    let invocation = match parse_command(name, rest) {
        Ok(invocation) => invocation,
        Err(usage) => return usage_error(bin, name, json, &usage),
    };
    let db = match open_db(info, json) {
        Ok(db) => db,
        Err(code) => return code,
    };
    emit(bin, run(&db, &AvailabilityContext::process(), &invocation))
}

/// Prints `report` (its stderr lines prefixed with `bin`) and returns its exit code.
fn emit(bin: &str, report: Report) -> ExitCode {
    print!("{}", report.out);
    for line in report.err.lines() {
        eprintln!("{bin}: {line}");
    }
    ExitCode::from(report.code)
}

/// Runs one command against `db`, with availability judged in `env`.
pub fn run(db: &Db, env: &AvailabilityContext, invocation: &Invocation) -> Report {
    let json = invocation.json;
    let outcome = match &invocation.command {
        Command::Tools => tools(db, env, json),
        Command::Approvals => pending(db, json),
        Command::Resolve { id, resolution } => resolve(db, id, *resolution, json),
        Command::Audit { tool, limit } => audit_log(db, tool.as_deref(), *limit, json),
        Command::SetEnabled { tool, enabled } => set_enabled(db, tool, *enabled, json),
    };
    outcome.unwrap_or_else(|e| failure(json, &format!("database error: {e}")))
}

/// A command that did not do what was asked: `{"error":…}` on stdout for `--json`, the message on
/// stderr otherwise; exit 1.
fn failure(json: bool, message: &str) -> Report {
    let message = crate::scrub::scrub_secrets(message);
    if json {
        Report {
            out: line(&json!({ "error": message })),
            err: String::new(),
            code: 1,
        }
    } else {
        Report {
            out: String::new(),
            err: format!("{message}\n"),
            code: 1,
        }
    }
}

fn line(value: &impl Serialize) -> String {
    format!(
        "{}\n",
        serde_json::to_string_pretty(value).unwrap_or_default()
    )
}

fn tools(db: &Db, env: &AvailabilityContext, json: bool) -> rusqlite::Result<Report> {
    let entries = queries::tools(db, env)?;
    if json {
        return Ok(Report::ok(line(&json!({ "ok": true, "tools": entries }))));
    }
    let rows: Vec<Vec<String>> = entries
        .iter()
        .map(|entry| {
            vec![
                entry.name.to_owned(),
                entry.risk.to_owned(),
                entry.owner.to_owned(),
                yes_no(entry.available).to_owned(),
                yes_no(entry.enabled).to_owned(),
                entry.diagnostics.join(", "),
            ]
        })
        .collect();
    Ok(Report::ok(table(
        &[
            "TOOL",
            "RISK",
            "OWNER",
            "AVAILABLE",
            "ENABLED",
            "DIAGNOSTICS",
        ],
        &rows,
    )))
}

fn yes_no(flag: bool) -> &'static str {
    if flag { "yes" } else { "no" }
}

fn pending(db: &Db, json: bool) -> rusqlite::Result<Report> {
    let rows = queries::pending_approvals(db)?;
    if json {
        return Ok(Report::ok(line(&json!({ "ok": true, "approvals": rows }))));
    }
    if rows.is_empty() {
        return Ok(Report::ok("no pending approvals\n".to_owned()));
    }
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.id.clone(),
                r.tool_name.clone(),
                r.agent_id.clone().unwrap_or_else(|| "-".into()),
                utc(r.created_at),
                utc(r.expires_at),
                r.args_summary.clone().unwrap_or_default(),
            ]
        })
        .collect();
    Ok(Report::ok(table(
        &["ID", "TOOL", "AGENT", "REQUESTED", "EXPIRES", "ARGS"],
        &cells,
    )))
}

fn resolve(db: &Db, id: &str, resolution: Resolution, json: bool) -> rusqlite::Result<Report> {
    let (row, text) =
        match queries::resolve(db, id, resolution, crate::host::Caller::LOCAL_OPERATOR) {
            Ok(Resolved { row, changed: true }) => {
                let text = recorded_text(&row, resolution);
                (row, text)
            }
            Ok(Resolved {
                row,
                changed: false,
            }) => {
                let text = format!(
                    "approval {} ({}) was already resolved as {}{}; nothing changed",
                    row.id,
                    row.tool_name,
                    row.status,
                    at(row.resolved_at)
                );
                (row, text)
            }
            Err(ResolveError::NotFound { .. }) => {
                let message = if json {
                    "approval not found".to_owned()
                } else {
                    format!("no approval with id {id:?}; `approvals` lists the pending ones")
                };
                return Ok(failure(json, &message));
            }
            Err(ResolveError::Conflict { row, asked }) => {
                return Ok(conflict(&row, asked, json));
            }
            Err(ResolveError::Db(e)) => return Err(e),
        };
    let out = if json {
        line(&json!({ "ok": true, "approval": row }))
    } else {
        format!("{text}\n")
    };
    Ok(Report::ok(out))
}

/// ` at <time>` for a resolution time, or nothing.
fn at(resolved_at: Option<i64>) -> String {
    resolved_at
        .map(|ms| format!(" at {}", utc(ms)))
        .unwrap_or_default()
}

/// A decision that was not applied because the row already ended otherwise: what it holds, since
/// when, and what was not applied; exit 1 (`{"error":…,"approval":…}` with `--json`).
fn conflict(row: &ApprovalRow, asked: Resolution, json: bool) -> Report {
    let held = if row.status() == Status::Expired {
        format!(
            "approval {} ({}) expired{} before it was resolved (nobody decided in time, or its caller stopped waiting)",
            row.id,
            row.tool_name,
            at(row.resolved_at)
        )
    } else {
        format!(
            "approval {} ({}) was already resolved as {}{}",
            row.id,
            row.tool_name,
            row.status,
            at(row.resolved_at)
        )
    };
    let message = format!("{held}; {} not applied", asked.as_str());
    if json {
        Report {
            out: line(&json!({ "error": message, "approval": row })),
            err: String::new(),
            code: 1,
        }
    } else {
        failure(false, &message)
    }
}

fn recorded_text(row: &ApprovalRow, resolution: Resolution) -> String {
    let head = format!("{} ({})", row.id, row.tool_name);
    match (resolution, row.agent_id.as_deref()) {
        (Resolution::Deny, _) => format!("denied {head}"),
        (Resolution::AllowOnce, _) => format!("approved {head} once"),
        (Resolution::AllowAlways, Some(agent)) => format!(
            "approved {head} always: agent {agent} will not be asked again for {}",
            row.tool_name
        ),
        (Resolution::AllowAlways, None) => format!(
            "approved {head} once: the call names no agent, so --always cannot be remembered (stored as allow_once)"
        ),
    }
}

fn audit_log(db: &Db, tool: Option<&str>, limit: u32, json: bool) -> rusqlite::Result<Report> {
    let rows = queries::audit_log(db, tool, limit)?;
    if json {
        return Ok(Report::ok(line(&json!({ "ok": true, "audit": rows }))));
    }
    if rows.is_empty() {
        return Ok(Report::ok("no audit rows\n".to_owned()));
    }
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                utc(r.created_at),
                r.tool_name.clone(),
                r.agent_id.clone().unwrap_or_else(|| "-".into()),
                r.phase.clone(),
                r.decision.clone().unwrap_or_else(|| "-".into()),
                yes_no(r.is_error != 0).to_owned(),
                r.args_summary
                    .clone()
                    .or_else(|| r.result_summary.clone())
                    .unwrap_or_default(),
            ]
        })
        .collect();
    Ok(Report::ok(table(
        &[
            "TIME", "TOOL", "AGENT", "PHASE", "DECISION", "ERROR", "SUMMARY",
        ],
        &cells,
    )))
}

fn set_enabled(db: &Db, tool: &str, enabled: bool, json: bool) -> rusqlite::Result<Report> {
    match queries::set_enabled(db, tool, enabled) {
        Ok(()) => {}
        Err(SwitchError::Db(e)) => return Err(e),
        Err(unknown @ SwitchError::UnknownTool { .. }) => {
            return Ok(failure(json, &unknown.to_string()));
        }
    }
    if json {
        return Ok(Report::ok(line(
            &json!({ "ok": true, "tool": tool, "enabled": enabled }),
        )));
    }
    let state = if enabled { "enabled" } else { "disabled" };
    Ok(Report::ok(format!("{tool} is {state}\n")))
}

/// The widest a table cell is shown, in characters.
const MAX_CELL: usize = 72;

/// Left-aligned columns two spaces apart, long cells cut with `…`.
fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let cut = |cell: &str| -> String {
        let flat = cell.replace(['\n', '\t'], " ");
        if flat.chars().count() > MAX_CELL {
            let kept: String = flat.chars().take(MAX_CELL - 1).collect();
            format!("{kept}\u{2026}")
        } else {
            flat
        }
    };
    let mut lines: Vec<Vec<String>> = vec![headers.iter().map(|h| (*h).to_owned()).collect()];
    lines.extend(rows.iter().map(|r| r.iter().map(|c| cut(c)).collect()));
    let widths: Vec<usize> = (0..headers.len())
        .map(|col| {
            lines
                .iter()
                .map(|l| l.get(col).map_or(0, |c| c.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for cells in &lines {
        let rendered: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(rendered.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// Milliseconds since the epoch as `YYYY-MM-DD HH:MM:SSZ` (UTC).
fn utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil-from-days (proleptic Gregorian), after Howard Hinnant's date algorithms.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests;
