//! The REST routes of seed 003: `GET /api/tools`, `GET /api/tools/approvals`,
//! `POST /api/tools/approvals/:id/resolve`, `GET /api/tools/audit`, `GET /api/mcp/config`.
//! A resolve that changes a row is recorded as an operator action under the caller's name; the
//! audit log takes the console's filters (`agent`, `decision`, `since`, `until`) and pages with a
//! `cursor` (`nextCursor`).
//!
//! Owns: request parsing and the response shapes (`{"ok":true,…}`, `{"error":…}` with
//! credential-shaped text masked). Rows come from the broker's typed operator queries
//! (`broker::operator`, summaries masked again), the same rows the stdio tools bin and the
//! operator commands read and write, so a call waiting in any process is released by a resolve
//! here.
//!
//! Decisions beyond the reference: every summary in every response is masked again for display,
//! the resolve answer included (the reference returned it as stored); a resolve that conflicts
//! with the row's end (another decision, or expired) answers 200 with the row as it is; a
//! resolve records the request's [`Caller`] as `resolvedBy`; `limit` must be a whole number
//! (the reference's `Number()` quirks are not kept) and an unknown `runtime`/`transport` is a 400
//! like an unknown `server`.
//!
//! Must never: return an unmasked summary; build a URL from the `Host` header.

use std::net::SocketAddr;
use std::path::Path;

use http::{Method, StatusCode};
use serde_json::{Value, json};

use super::caller::Caller;
use super::error;
use crate::attach::{self, AttachRequest, Runtime, Transport};
use crate::binding::{Scope, ServerKind};
use crate::broker::actions::Action;
use crate::broker::approvals::{Resolution, ResolveError, Resolved};
use crate::broker::audit::{self, AuditFilter};
use crate::broker::availability::AvailabilityContext;
use crate::broker::operator;
use crate::db::{Db, Keyset};
use crate::mcp::http::{HttpResponse, json_response};
use crate::signature::BindingKey;

/// The first value of `name` in a query string, form-decoded ([`crate::binding::parse_query`]).
pub fn query_value(query: Option<&str>, name: &str) -> Option<String> {
    crate::binding::parse_query(query?).remove(name)
}

fn ok(body: Value) -> HttpResponse {
    json_response(StatusCode::OK, &body)
}

/// The `/api/tools/…` routes that touch the database (run on the blocking pool).
pub fn tools_route(
    db: &Db,
    caller: &Caller,
    method: &Method,
    path: &str,
    query: Option<&str>,
    body: &[u8],
) -> HttpResponse {
    let outcome = match (method, path) {
        (&Method::GET, "/api/tools") => operator::tools(db, &AvailabilityContext::process())
            .map(|tools| ok(json!({ "ok": true, "tools": tools }))),
        (&Method::GET, "/api/tools/approvals") => operator::pending_approvals(db)
            .map(|approvals| ok(json!({ "ok": true, "approvals": approvals }))),
        (&Method::GET, "/api/tools/audit") => audit_log(db, query),
        (&Method::POST, p) => match p
            .strip_prefix("/api/tools/approvals/")
            .and_then(|rest| rest.strip_suffix("/resolve"))
            .filter(|id| !id.is_empty() && !id.contains('/'))
        {
            Some(id) => resolve(db, caller, id, body),
            None => return error(StatusCode::NOT_FOUND, &format!("no route for {p}")),
        },
        (_, p) => return error(StatusCode::NOT_FOUND, &format!("no route for {p}")),
    };
    outcome.unwrap_or_else(|e| {
        error(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("database error: {e}"),
        )
    })
}

/// The 400 of a resolve body that is not `{"decision": "allow_once"|"allow_always"|"deny"}`, in
/// the shape of zod's `flatten()`.
fn invalid_body(form_errors: Vec<String>, decision_errors: Vec<String>) -> HttpResponse {
    let mut field_errors = serde_json::Map::new();
    if !decision_errors.is_empty() {
        field_errors.insert("decision".into(), json!(decision_errors));
    }
    json_response(
        StatusCode::BAD_REQUEST,
        &json!({
            "error": "invalid body",
            "details": { "formErrors": form_errors, "fieldErrors": field_errors }
        }),
    )
}

fn parse_decision(body: &[u8]) -> Result<Resolution, Box<HttpResponse>> {
    let value: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(_) if body.iter().all(u8::is_ascii_whitespace) => {
            return Err(Box::new(invalid_body(vec!["Required".into()], vec![])));
        }
        Err(e) => {
            return Err(Box::new(invalid_body(
                vec![format!("not JSON: {e}")],
                vec![],
            )));
        }
    };
    let Some(object) = value.as_object() else {
        return Err(Box::new(invalid_body(
            vec!["Expected object".into()],
            vec![],
        )));
    };
    match object.get("decision") {
        None => Err(Box::new(invalid_body(vec![], vec!["Required".into()]))),
        Some(Value::String(d)) if d == "allow_once" => Ok(Resolution::AllowOnce),
        Some(Value::String(d)) if d == "allow_always" => Ok(Resolution::AllowAlways),
        Some(Value::String(d)) if d == "deny" => Ok(Resolution::Deny),
        Some(other) => Err(Box::new(invalid_body(
            vec![],
            vec![format!(
                "Invalid enum value. Expected 'allow_once' | 'allow_always' | 'deny', received {other}"
            )],
        ))),
    }
}

fn resolve(db: &Db, caller: &Caller, id: &str, body: &[u8]) -> rusqlite::Result<HttpResponse> {
    let resolution = match parse_decision(body) {
        Ok(resolution) => resolution,
        Err(response) => return Ok(*response),
    };
    // Seed 003: the first decision wins, and a row that already ended is answered 200 as it is.
    let row = match operator::resolve(db, id, resolution, caller.name()) {
        Ok(Resolved { row, changed }) => {
            if changed {
                let target = format!("approval {id}: {}", resolution.as_str());
                operator::record_action(db, caller.name(), Action::ApprovalResolve, &target)?;
            }
            row
        }
        Err(ResolveError::Conflict { row, .. }) => *row,
        Err(ResolveError::NotFound { .. }) => {
            return Ok(error(StatusCode::NOT_FOUND, "approval not found"));
        }
        Err(ResolveError::Db(e)) => return Err(e),
    };
    Ok(ok(json!({ "ok": true, "approval": row })))
}

/// `GET /api/tools/audit?toolName=&agent=&decision=&since=&until=&limit=&cursor=`: newest first,
/// with the next page's cursor (`null` at the end).
fn audit_log(db: &Db, query: Option<&str>) -> rusqlite::Result<HttpResponse> {
    let given = |name: &str| query_value(query, name).filter(|t| !t.trim().is_empty());
    let mut filter = AuditFilter {
        tool_name: given("toolName"),
        agent_id: given("agent"),
        decision: given("decision"),
        ..AuditFilter::default()
    };
    for (name, slot) in [("since", &mut filter.since), ("until", &mut filter.until)] {
        if let Some(text) = given(name) {
            match text.trim().parse::<i64>() {
                Ok(ms) => *slot = Some(ms),
                Err(_) => {
                    return Ok(error(
                        StatusCode::BAD_REQUEST,
                        &format!("{name}: expected a whole number of ms, got {text:?}"),
                    ));
                }
            }
        }
    }
    let limit = match query_value(query, "limit") {
        None => audit::DEFAULT_LIMIT,
        Some(text) => match text.trim().parse::<u32>() {
            Ok(limit) => limit,
            Err(_) => {
                return Ok(error(
                    StatusCode::BAD_REQUEST,
                    &format!("limit: expected a whole number of rows, got {text:?}"),
                ));
            }
        },
    };
    let cursor = match given("cursor") {
        None => None,
        Some(text) => match Keyset::decode(&text) {
            Some(cursor) => Some(cursor),
            None => {
                return Ok(error(
                    StatusCode::BAD_REQUEST,
                    "cursor: not a cursor this route gave (start again without it)",
                ));
            }
        },
    };
    let (rows, next) = operator::audit_page(db, &filter, limit, cursor)?;
    Ok(ok(
        json!({ "ok": true, "audit": rows, "nextCursor": next.map(Keyset::encode) }),
    ))
}

/// `GET /api/mcp/config?server=&runtime=&transport=&scopeTeamId=&scopeAgentId=`: the attach
/// snippet for this host (its own bound address) or, for stdio, for the bin beside this one.
pub fn mcp_config(
    query: Option<&str>,
    addr: SocketAddr,
    db_path: &Path,
    key: Option<&BindingKey>,
) -> HttpResponse {
    let given = |name: &str, default: &str| {
        query_value(query, name)
            .filter(|v| !v.trim().is_empty())
            .unwrap_or_else(|| default.to_owned())
    };
    let server_name = given("server", "tasks");
    let Ok(server) = server_name.parse::<ServerKind>() else {
        return error(
            StatusCode::BAD_REQUEST,
            &format!("unknown server: {server_name}"),
        );
    };
    let runtime_name = given("runtime", "claude-code");
    let Ok(runtime) = runtime_name.parse::<Runtime>() else {
        return error(
            StatusCode::BAD_REQUEST,
            &format!("unknown runtime: {runtime_name}"),
        );
    };
    let transport_name = given("transport", "http");
    let Ok(transport) = transport_name.parse::<Transport>() else {
        return error(
            StatusCode::BAD_REQUEST,
            &format!("unknown transport: {transport_name}"),
        );
    };
    let host = if addr.ip().is_unspecified() {
        SocketAddr::from(([127, 0, 0, 1], addr.port()))
    } else {
        addr
    };
    let bin = crate::servers::registry::entry(server).bin;
    let bin_path = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(bin)))
        .map_or_else(|| bin.to_owned(), |p| p.display().to_string());
    let request = AttachRequest {
        runtime,
        server,
        transport,
        bin_path,
        db_path: Some(db_path.display().to_string()),
        http_base: Some(format!("http://{host}")),
        scope: Scope {
            team_id: query_value(query, "scopeTeamId"),
            agent_id: query_value(query, "scopeAgentId"),
            tenant_id: query_value(query, "scopeTenantId"),
        },
        binding_key: key.cloned(),
        auto_approve: false,
    };
    ok(json!({ "ok": true, "config": attach::attach_config(&request) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_form_decoded_and_the_first_wins() {
        let q = Some("a=1&toolName=web%5Fsearch&b=x+y&a=2&c");
        assert_eq!(query_value(q, "a").as_deref(), Some("1"));
        assert_eq!(query_value(q, "toolName").as_deref(), Some("web_search"));
        assert_eq!(query_value(q, "b").as_deref(), Some("x y"));
        assert_eq!(query_value(q, "c").as_deref(), Some(""));
        assert_eq!(query_value(q, "d"), None);
        assert_eq!(query_value(None, "a"), None);
    }

    #[test]
    fn a_bad_decision_is_the_flattened_400() {
        for body in [
            &b""[..],
            b"{}",
            b"{\"decision\":\"maybe\"}",
            b"[1]",
            b"nope",
        ] {
            let response = parse_decision(body).unwrap_err();
            assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        }
        assert_eq!(
            parse_decision(b"{\"decision\":\"allow_always\",\"x\":1}").ok(),
            Some(Resolution::AllowAlways)
        );
    }
}
