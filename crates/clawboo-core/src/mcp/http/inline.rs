//! Inline answers over Streamable HTTP: a session's `tools/call` that the server may answer
//! inline (`Server::answers_inline`: its handlers never wait, the call carries no `_meta` and
//! does not ask to wait) is run here and answered as one `application/json` body, instead of
//! going through rmcp's session machinery (a channel to the session's worker, rmcp's service loop,
//! a request-wise channel and an SSE stream with its priming event, for a single answer). The
//! stdio reader answers the same calls the same way (`mcp::stdio`); the answer is the message
//! rmcp would send (`Server::call_inline` shapes it for the session's protocol version), framed
//! as JSON, which every client accepts (a POST must accept `application/json` and
//! `text/event-stream`, and the server picks).
//!
//! Owns: when a request may take this path, and its answer. A request takes it only when the
//! session is up (rmcp answered its `initialize`, whose protocol version is kept, and accepted
//! its `notifications/initialized`) and its head passes everything rmcp would check: `Host`
//! allowed (rmcp's rule: host, and port when the allowed entry names one), no `Origin`, `Accept`
//! naming both media types, a JSON `Content-Type`, an `MCP-Protocol-Version` that is absent or
//! the session's, and a session on a version before SEP-2243's standard headers (from that version
//! on rmcp checks `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` against the body; before it, as for
//! every session-era client such as the Python SDK, which sends them, rmcp ignores them). Anything
//! else goes to rmcp, which answers it (and any refusal) as before.
//!
//! Where the call runs: a quick read (`Tool::quick_read`: a few rows by key, no search, no
//! network) runs on the async worker that read the request, under `crate::blocking`, which moves
//! the worker's other connections to another thread before any wait; any other call runs on the
//! blocking pool, as rmcp's path runs it. The pool costs two thread hand-offs a call (to a pool
//! thread and back), which on a small machine cost more than the read itself: `get_task`, 16
//! HTTP sessions against 16 stdio processes (docs/search.md).
//!
//! Must never: answer a request rmcp would refuse; run a call that is not a quick read on an
//! async worker.

use http::{HeaderMap, StatusCode, header};
use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, ClientRequest, GetMeta, JsonRpcMessage, ProtocolVersion, RequestId,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use serde_json::Value;

use super::{HttpResponse, bytes_response, jsonrpc_error};
use crate::mcp::McpServer;
use crate::{blocking, log};

/// The header a client names its protocol version in.
const PROTOCOL_HEADER: &str = "mcp-protocol-version";

/// The protocol version of rmcp's answer to `initialize` (a JSON body or SSE `data:` lines).
pub(super) fn negotiated_version(body: &[u8]) -> Option<ProtocolVersion> {
    let text = std::str::from_utf8(body).ok()?;
    let version = |message: Value| {
        serde_json::from_value::<ProtocolVersion>(
            message.pointer("/result/protocolVersion")?.clone(),
        )
        .ok()
    };
    if let Ok(message) = serde_json::from_str::<Value>(text) {
        return version(message);
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find_map(version)
}

/// Whether `body` is `notifications/initialized`.
pub(super) fn is_initialized_notification(body: &[u8]) -> bool {
    serde_json::from_slice::<Value>(body)
        .is_ok_and(|m| m.get("id").is_none() && m["method"] == "notifications/initialized")
}

/// Whether a request's head passes every check rmcp makes of it, for a session on `protocol`.
pub(super) fn head_allows(
    headers: &HeaderMap,
    protocol: &ProtocolVersion,
    allowed_hosts: &[String],
) -> bool {
    if headers.contains_key(header::ORIGIN) {
        return false;
    }
    if let Some(version) = headers.get(PROTOCOL_HEADER)
        && version.to_str().ok() != Some(protocol.as_str())
    {
        return false;
    }
    // From this version on rmcp checks SEP-2243's `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*`
    // against the body; before it (every session-era version) it ignores them.
    if protocol.as_str() >= ProtocolVersion::STANDARD_HEADERS.as_str() {
        return false;
    }
    let essences = || {
        headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|v| v.split(';').next().unwrap_or_default().trim())
    };
    let accepts = |media: &str| essences().any(|e| e.eq_ignore_ascii_case(media));
    let json_body = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or_default().trim())
        .is_some_and(|v| v.eq_ignore_ascii_case("application/json"));
    accepts("application/json")
        && accepts("text/event-stream")
        && json_body
        && host_allowed(headers, allowed_hosts)
}

/// rmcp's `Host` rule: the host (brackets dropped, lower-cased) equals an allowed entry's, and so
/// does the port when the entry names one; an empty list allows any host. No `Host`: not here.
fn host_allowed(headers: &HeaderMap, allowed_hosts: &[String]) -> bool {
    let Some(host) = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| http::uri::Authority::try_from(v).ok())
    else {
        return false;
    };
    let name = normalized(host.host());
    allowed_hosts.is_empty()
        || allowed_hosts.iter().any(|allowed| {
            let allowed = allowed.trim();
            match http::uri::Authority::try_from(allowed) {
                Ok(entry) => {
                    normalized(entry.host()) == name
                        && entry.port_u16().is_none_or(|p| host.port_u16() == Some(p))
                }
                Err(_) => !allowed.is_empty() && normalized(allowed) == name,
            }
        })
}

fn normalized(host: &str) -> String {
    host.trim_matches('[')
        .trim_matches(']')
        .to_ascii_lowercase()
}

/// The id and parameters of `body` when it is a `tools/call` request without `_meta`.
pub(super) fn tool_call(body: &[u8]) -> Option<(RequestId, CallToolRequestParams)> {
    let message: RxJsonRpcMessage<RoleServer> = serde_json::from_slice(body).ok()?;
    let JsonRpcMessage::Request(request) = message else {
        return None;
    };
    if !request.request.get_meta().is_empty() {
        return None;
    }
    match request.request {
        ClientRequest::CallToolRequest(call) => Some((request.id, call.params)),
        _ => None,
    }
}

/// Runs `call` and answers it as one JSON body: a quick read (`Tool::quick_read`) on this async
/// worker ([`blocking::on_async_worker`]) when the runtime is multi-threaded, any other call on
/// the blocking pool.
pub(super) async fn answer(
    server: McpServer,
    id: RequestId,
    call: CallToolRequestParams,
    protocol: ProtocolVersion,
) -> HttpResponse {
    let name = server.name();
    let result = if server.answers_quickly(&call) && blocking::async_worker_can_wait() {
        blocking::on_async_worker(|| server.call_inline(call, Some(&protocol)))
    } else {
        tokio::task::spawn_blocking(move || server.call_inline(call, Some(&protocol)))
            .await
            .unwrap_or_else(|e| {
                Err(rmcp::ErrorData::internal_error(
                    format!("handler failed: {e}"),
                    None,
                ))
            })
    };
    let message: TxJsonRpcMessage<RoleServer> = match result {
        Ok(result) => JsonRpcMessage::response(result, id),
        Err(error) => {
            log::error(&format!("{name}: {}", error.message));
            JsonRpcMessage::error(error, Some(id))
        }
    };
    match serde_json::to_vec(&message) {
        Ok(body) => bytes_response(StatusCode::OK, "application/json", body),
        Err(e) => jsonrpc_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            -32603,
            &format!("Internal error: {e}"),
            Value::Null,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (k, v) in pairs {
            headers.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        headers
    }

    const GOOD: [(&str, &str); 4] = [
        ("host", "127.0.0.1:4242"),
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json; charset=utf-8"),
        ("mcp-session-id", "s"),
    ];

    #[test]
    fn only_a_head_rmcp_would_pass_is_answered_inline() {
        let v = ProtocolVersion::V_2025_06_18;
        let hosts = ["localhost".to_owned(), "127.0.0.1".to_owned()];
        assert!(head_allows(&head(&GOOD), &v, &hosts));
        let with = |extra: (&str, &str)| {
            let mut pairs = GOOD.to_vec();
            pairs.retain(|(k, _)| *k != extra.0);
            pairs.push(extra);
            head_allows(&head(&pairs), &v, &hosts)
        };
        assert!(with(("mcp-protocol-version", "2025-06-18")));
        assert!(
            !with(("mcp-protocol-version", "2025-03-26")),
            "not the session's"
        );
        assert!(
            with(("mcp-method", "tools/call")),
            "ignored before SEP-2243"
        );
        let standard = ProtocolVersion::STANDARD_HEADERS;
        assert!(
            !head_allows(&head(&GOOD), &standard, &hosts),
            "SEP-2243's headers are rmcp's to check"
        );
        assert!(!with(("origin", "http://127.0.0.1:4242")));
        assert!(!with(("accept", "application/json")));
        assert!(!with(("content-type", "text/plain")));
        assert!(!with(("host", "evil.example:4242")));
        let pinned = ["127.0.0.1:9999".to_owned()];
        assert!(
            !head_allows(&head(&GOOD), &v, &pinned),
            "the entry names a port"
        );
        assert!(
            head_allows(&head(&GOOD), &v, &[]),
            "rmcp: no list allows any host"
        );
    }

    #[test]
    fn only_a_tool_call_without_meta_is_taken() {
        let call = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_task","arguments":{"taskId":"t"}}}"#;
        let (id, params) = tool_call(call).unwrap();
        assert_eq!(id, RequestId::Number(7));
        assert_eq!(params.name, "get_task");
        let with_meta = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}}"#;
        assert!(tool_call(with_meta).is_none());
        assert!(tool_call(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).is_none());
        assert!(tool_call(b"{not json").is_none());
    }

    #[test]
    fn the_negotiated_version_is_read_from_json_or_sse() {
        let answer = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}"#;
        assert_eq!(
            negotiated_version(answer.as_bytes()),
            Some(ProtocolVersion::V_2025_06_18)
        );
        let sse = format!("id: 0\nretry: 3000\ndata: \n\ndata: {answer}\n\n");
        assert_eq!(
            negotiated_version(sse.as_bytes()),
            Some(ProtocolVersion::V_2025_06_18)
        );
        assert!(is_initialized_notification(
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        ));
        assert!(!is_initialized_notification(
            br#"{"jsonrpc":"2.0","id":1,"method":"notifications/initialized"}"#
        ));
    }
}
