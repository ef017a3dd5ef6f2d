//! Serving [`McpServer`]s over MCP's Streamable HTTP transport (rmcp's own server transport):
//! [`McpHttpService`], the service a host mounts at a path of its own router, one per server. The
//! analogue of the reference's `createStreamableHttpHandlers`; `serve`'s host mounts it at
//! `/api/mcp/<server>`, a library user wherever it likes (`/mcp/tasks`, `/agents/x/mcp`): the
//! service never looks at the path.
//!
//! Owns: the session rules of the reference's `createStreamableHttpHandlers` on top of rmcp — the
//! first POST of a session must be `initialize` (else 400 `No valid session; send an initialize
//! request first.`), a GET or DELETE needs a live `mcp-session-id` (else 400 `Invalid or missing
//! MCP session id.`), a fresh server per session built from the initialize request (its URL is
//! where a binding rides) — and the bounds: sessions idle longer than the configured time end, and
//! at most `max_sessions` live at once per endpoint (a new `initialize` at the cap ends the
//! least recently used session, so a client that never sends DELETE cannot grow memory).
//!
//! Protocol versions: one mount answers both lifecycles. A client of `2024-11-05` through
//! `2025-11-25` opens a session with `initialize` (as the seed says); a client of `2026-07-28`
//! opens none: it may ask `server/discover`, then sends every request with its own `_meta`
//! (`io.modelcontextprotocol/protocolVersion`, `…/clientCapabilities`, optionally `…/clientInfo`)
//! and the `MCP-Protocol-Version` header, and each such request is served by a fresh server built
//! from that request's own URL, so a URL binding and its signature are checked on every stateless
//! request, never remembered. The header rules of that revision (the header must be present and
//! equal the `_meta` version; `Mcp-Method`/`Mcp-Name` must match the body when sent) are rmcp's,
//! answered 400 before any server is built.
//!
//! Inline answers (`inline`): once a session is up, a `tools/call` its server may answer inline
//! (handlers that never wait, no `_meta`, no wait asked for; the stdio reader's rule) whose
//! request head passes everything rmcp checks is run on the blocking pool (a quick read,
//! `Tool::quick_read`, on the async worker itself) and answered as one `application/json` body,
//! the message rmcp would send; everything else goes through rmcp.
//! Because those calls never reach rmcp's session, idle sessions are ended here (on the next
//! request to them, a sweep, or a health count), not by rmcp's timer.
//!
//! A DELETE that ends a session is answered `200` with an empty body, not rmcp's `202`: clients
//! (the official Python SDK among them) take only `200` or `204` as a session ended, and the
//! reference's TypeScript SDK answers `200`.
//!
//! Guarantees: a session's server is closed (its close hooks run, so a handler waiting on a person
//! stops) when the session is deleted, evicted, idles out, or the host shuts down; a factory that
//! refuses the initialize request (a bad binding) answers 403 with a JSON-RPC error naming why, and
//! no session is created. `Host` and `Origin` are checked by rmcp too (DNS rebinding), with the
//! lists the caller gives; by default ([`HttpOptions::default`]) only loopback `Host` names pass and
//! any request carrying an `Origin` is refused (a browser page cannot drive the tools), so a host
//! that serves browsers lists its own origins. A body over [`HttpOptions::max_body_bytes`] is
//! answered 413 without being read whole.
//!
//! Must never: read a request body past the size limit; know any domain (servers and bindings
//! come from the factory).

use std::cell::RefCell;
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use bytes::BytesMut;
use http::request::Parts;
use http::{HeaderMap, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Body;
use rmcp::model::ProtocolVersion;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{
    SessionManager, StreamableHttpServerConfig, StreamableHttpService,
};
use serde_json::{Value, json};

use super::erased::{Handler, McpServer};

mod inline;

/// The body of every response [`McpHttpService`] produces.
pub type HttpBody = BoxBody<Bytes, Infallible>;

/// A response of this module.
pub(crate) type HttpResponse = Response<HttpBody>;

/// The header that carries the session id.
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";

/// The answer to a POST without a live session that is not `initialize` (seed 003).
pub(crate) const NO_VALID_SESSION: &str = "No valid session; send an initialize request first.";

/// The answer to a GET or DELETE with a missing or unknown session id (seed 003).
pub(crate) const INVALID_SESSION_ID: &str = "Invalid or missing MCP session id.";

/// The JSON-RPC error code of the session errors.
const SESSION_ERROR_CODE: i64 = -32000;

/// The JSON-RPC error code of a refused binding.
const BINDING_REFUSED_CODE: i64 = -32001;

/// How long a session may go without traffic before it ends, by default (a model may think for
/// minutes between calls; an approval waits up to 2).
pub(crate) const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(30 * 60);

/// The most live sessions per service, by default.
pub(crate) const DEFAULT_MAX_SESSIONS: usize = 256;

/// The largest request body accepted by default, in bytes (the reference's
/// `express.json({limit:'2mb'})`).
pub(crate) const DEFAULT_MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

/// How an [`McpHttpService`] is bounded and who may reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpOptions {
    /// `Host` values (names or `name:port`) accepted; anything else is 403 (DNS rebinding).
    pub allowed_hosts: Vec<String>,
    /// `Origin` values (`scheme://host:port`) accepted when a request carries one.
    pub allowed_origins: Vec<String>,
    /// A session with no traffic for this long ends.
    pub session_idle: Duration,
    /// At most this many live sessions per endpoint.
    pub max_sessions: usize,
    /// The largest request body, in bytes; a larger one is answered 413.
    pub max_body_bytes: usize,
}

impl Default for HttpOptions {
    /// Loopback `Host` names only (`localhost`, `127.0.0.1`, `::1`, any port), no `Origin`
    /// accepted, sessions idle for 30 minutes end, at most 256 live sessions, 2 MB bodies.
    fn default() -> Self {
        Self {
            allowed_hosts: ["localhost", "127.0.0.1", "::1"]
                .map(str::to_owned)
                .to_vec(),
            allowed_origins: Vec::new(),
            session_idle: DEFAULT_SESSION_IDLE,
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

/// Why a factory built no server for a session: the HTTP status and the message of the JSON-RPC
/// error the client reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRefusal {
    /// 403 for a binding the caller may not have, 500 when the server could not be built.
    pub status: StatusCode,
    /// What went wrong, for the client.
    pub message: String,
}

impl SessionRefusal {
    /// The caller may not open this session (403).
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::FORBIDDEN,
            message: message.into(),
        }
    }

    /// The server could not be built (500).
    pub fn internal(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: message.into(),
        }
    }
}

/// Builds a fresh server from the request that opens a session (or a stateless request): its URL
/// carries the binding.
type Factory = dyn Fn(&Parts) -> Result<McpServer, SessionRefusal> + Send + Sync;

/// The service a host mounts at one path of its own router to serve one kind of server over
/// Streamable HTTP: `POST` (the first one `initialize`, answered with an `mcp-session-id`), `GET`
/// (the session's event stream) and `DELETE` (end the session). Every session gets a fresh server
/// from the factory, which is handed the `initialize` request's head, so it can read a binding from
/// the URL's query. Cheap to clone (clones share the sessions).
///
/// Call [`close_all`](Self::close_all) when the host shuts down, and [`sweep`](Self::sweep) now and
/// then (every 30 s, say) so idle sessions' servers are closed promptly.
///
/// Security: the service checks `Host` and `Origin` ([`HttpOptions`]) and nothing else. Whoever can
/// reach it can run the tools, and a binding read from the URL is whatever the caller wrote; put
/// the host's own authentication in front of it, and have the factory refuse
/// ([`SessionRefusal::forbidden`]) a binding the caller may not have (`serve`'s host requires an
/// HMAC signature over it).
#[derive(Clone)]
pub struct McpHttpService(Arc<EndpointImpl>);

impl std::fmt::Debug for McpHttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("McpHttpService")
    }
}

impl McpHttpService {
    /// A service whose sessions are served by the servers `factory` builds, with
    /// [`HttpOptions::default`].
    pub fn new<F>(factory: F) -> Self
    where
        F: Fn(&Parts) -> Result<McpServer, SessionRefusal> + Send + Sync + 'static,
    {
        Self::with_options(factory, HttpOptions::default())
    }

    /// A service whose sessions are served by the servers `factory` builds, bounded by `options`.
    pub fn with_options<F>(factory: F, options: HttpOptions) -> Self
    where
        F: Fn(&Parts) -> Result<McpServer, SessionRefusal> + Send + Sync + 'static,
    {
        Self(Arc::new(EndpointImpl::new(Arc::new(factory), &options)))
    }

    /// Answers one request routed to this service (any path: the host chose it). The body is read
    /// up to [`HttpOptions::max_body_bytes`]; a larger one is answered 413.
    pub async fn handle<B>(&self, request: Request<B>) -> Response<HttpBody>
    where
        B: Body<Data = Bytes>,
        B::Error: std::fmt::Display,
    {
        let (parts, body) = request.into_parts();
        match collect_limited(&parts.headers, body, self.0.max_body_bytes).await {
            Ok(body) => {
                self.handle_collected(Request::from_parts(parts, body))
                    .await
            }
            Err(response) => *response,
        }
    }

    /// Answers one request whose body the host already collected within its own limit.
    pub(crate) async fn handle_collected(&self, request: Request<Bytes>) -> HttpResponse {
        self.0.handle(request).await
    }

    /// How many sessions are live.
    pub async fn live_sessions(&self) -> usize {
        self.0.live_sessions().await
    }

    /// Closes the servers of sessions that ended on their own (idle timeout).
    pub async fn sweep(&self) {
        self.0.sweep_ended().await
    }

    /// Ends every session and closes its server (shutdown).
    pub async fn close_all(&self) {
        self.0.close_all().await
    }

    /// Runs the close hooks of every session's server without ending the sessions: a call
    /// waiting inside one (for a person, for a change) stops waiting and its answer still reaches
    /// its client, on a connection that is still open. The first step of a graceful shutdown.
    pub(crate) fn hang_up_all(&self) {
        for tracked in self.0.tracked().values() {
            tracked.server.close();
        }
    }
}

/// The request body, refused with 413 as soon as it is known to exceed `limit` bytes (from its
/// `Content-Length` or the bytes read so far), without reading the rest.
pub(crate) async fn collect_limited<B>(
    headers: &HeaderMap,
    body: B,
    limit: usize,
) -> Result<Bytes, Box<HttpResponse>>
where
    B: Body<Data = Bytes>,
    B::Error: std::fmt::Display,
{
    let too_large = || {
        let mut response = json_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            &json!({ "error": format!("request body exceeds {limit} bytes") }),
        );
        response.headers_mut().insert(
            header::CONNECTION,
            header::HeaderValue::from_static("close"),
        );
        Box::new(response)
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let mut body = std::pin::pin!(body);
    let mut collected = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| {
            let message = crate::scrub::scrub_secrets(&format!("body: {e}"));
            Box::new(json_response(
                StatusCode::BAD_REQUEST,
                &json!({ "error": message }),
            ))
        })?;
        if let Ok(data) = frame.into_data() {
            if collected.len() + data.len() > limit {
                return Err(too_large());
            }
            collected.extend_from_slice(&data);
        }
    }
    Ok(collected.freeze())
}

tokio::task_local! {
    /// The server prepared for the request being handled, handed to rmcp's factory (which is
    /// called on the same task, inside `handle`).
    static PREPARED: RefCell<Option<Handler>>;
}

struct Tracked {
    server: McpServer,
    last_seen: Instant,
    /// The protocol version rmcp answered `initialize` with.
    protocol: Option<ProtocolVersion>,
    /// rmcp accepted the session's `notifications/initialized`: its calls may be answered inline.
    up: bool,
}

struct EndpointImpl {
    service: StreamableHttpService<Handler, LocalSessionManager>,
    manager: Arc<LocalSessionManager>,
    factory: Arc<Factory>,
    sessions: Mutex<HashMap<String, Tracked>>,
    max_sessions: usize,
    max_body_bytes: usize,
    session_idle: Duration,
    allowed_hosts: Vec<String>,
}

impl EndpointImpl {
    fn new(factory: Arc<Factory>, options: &HttpOptions) -> Self {
        // Idle sessions are ended here ([`EndpointImpl::is_live`]), not by rmcp's own timer: a
        // call answered inline never reaches rmcp's session, which would count it as idle.
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = None;
        let manager = Arc::new(manager);
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(options.allowed_hosts.clone())
            .with_allowed_origins(options.allowed_origins.clone())
            .enforce_origin_validation()
            .with_max_request_body_bytes(options.max_body_bytes);
        let service = StreamableHttpService::new(
            || {
                PREPARED
                    .try_with(|slot| slot.borrow_mut().take())
                    .ok()
                    .flatten()
                    .ok_or_else(|| std::io::Error::other("no server was prepared for this request"))
            },
            Arc::clone(&manager),
            config,
        );
        Self {
            service,
            manager,
            factory,
            sessions: Mutex::new(HashMap::new()),
            max_sessions: options.max_sessions.max(1),
            max_body_bytes: options.max_body_bytes,
            session_idle: options.session_idle,
            allowed_hosts: options.allowed_hosts.clone(),
        }
    }

    fn tracked(&self) -> std::sync::MutexGuard<'_, HashMap<String, Tracked>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether session `id` is live; one idle for the configured time is ended now.
    async fn is_live(&self, id: &str) -> bool {
        let idle = match self.tracked().get(id) {
            Some(tracked) => tracked.last_seen.elapsed() >= self.session_idle,
            None => return false,
        };
        if idle {
            self.end_session(id).await;
            return false;
        }
        let live = self
            .manager
            .has_session(&id.to_owned().into())
            .await
            .unwrap_or(false);
        if !live && let Some(gone) = self.tracked().remove(id) {
            gone.server.close();
        }
        live
    }

    fn touch(&self, id: &str) {
        if let Some(entry) = self.tracked().get_mut(id) {
            entry.last_seen = Instant::now();
        }
    }

    /// Ends a session: its server's close hooks run first (a call waiting inside it, for a person
    /// or for a change, stops waiting), then rmcp's session ends, which may wait for that call.
    async fn end_session(&self, id: &str) {
        let gone = self.tracked().remove(id);
        if let Some(gone) = &gone {
            gone.server.close();
        }
        let _ = self.manager.close_session(&id.to_owned().into()).await;
    }

    async fn sweep_ended(&self) {
        let ids: Vec<String> = self.tracked().keys().cloned().collect();
        for id in ids {
            self.is_live(&id).await;
        }
    }

    /// Makes room for one more session: ends the least recently used ones beyond the cap.
    async fn make_room(&self) {
        self.sweep_ended().await;
        loop {
            let oldest = {
                let tracked = self.tracked();
                if tracked.len() < self.max_sessions {
                    return;
                }
                tracked
                    .iter()
                    .min_by_key(|(_, t)| t.last_seen)
                    .map(|(id, _)| id.clone())
            };
            match oldest {
                Some(id) => self.end_session(&id).await,
                None => return,
            }
        }
    }

    /// Answers `request` on session `id` inline when it may be ([`inline`]); `None` otherwise.
    async fn answer_inline(&self, id: &str, request: &Request<Bytes>) -> Option<HttpResponse> {
        let (server, protocol) = {
            let tracked = self.tracked();
            let session = tracked.get(id).filter(|s| s.up)?;
            (session.server.clone(), session.protocol.clone()?)
        };
        if !inline::head_allows(request.headers(), &protocol, &self.allowed_hosts) {
            return None;
        }
        let (request_id, call) = inline::tool_call(request.body())?;
        if !server.answers_inline(&call) {
            return None;
        }
        Some(inline::answer(server, request_id, call, protocol).await)
    }

    /// A POST on live session `id`: answered inline when it may be, else by rmcp.
    async fn post_in_session(&self, id: &str, request: Request<Bytes>) -> HttpResponse {
        if let Some(response) = self.answer_inline(id, &request).await {
            return response;
        }
        let up = self.tracked().get(id).is_some_and(|s| s.up);
        let initialized = !up && inline::is_initialized_notification(request.body());
        let response = self.delegate(request).await;
        if initialized
            && response.status() == StatusCode::ACCEPTED
            && let Some(session) = self.tracked().get_mut(id)
        {
            session.up = true;
        }
        response
    }

    async fn post(&self, request: Request<Bytes>) -> HttpResponse {
        if let Some(id) = session_id(&request) {
            if !self.is_live(&id).await {
                return session_error(NO_VALID_SESSION);
            }
            self.touch(&id);
            return self.post_in_session(&id, request).await;
        }
        let message: Value = match serde_json::from_slice(request.body()) {
            Ok(message) => message,
            Err(e) => {
                return jsonrpc_error(
                    StatusCode::BAD_REQUEST,
                    -32700,
                    &format!("Parse error: {e}"),
                    Value::Null,
                );
            }
        };
        let opens_session = method_of(&message) == Some("initialize");
        if !opens_session && !is_stateless(&message, request.headers()) {
            return session_error(NO_VALID_SESSION);
        }
        let (parts, body) = request.into_parts();
        let server = match (self.factory)(&parts) {
            Ok(server) => server,
            Err(refusal) => {
                let id = message.get("id").cloned().unwrap_or(Value::Null);
                let code = if refusal.status == StatusCode::FORBIDDEN {
                    BINDING_REFUSED_CODE
                } else {
                    -32603
                };
                return jsonrpc_error(refusal.status, code, &refusal.message, id);
            }
        };
        if opens_session {
            self.make_room().await;
        }
        let request = Request::from_parts(parts, body);
        let prepared = server.handler();
        let response = PREPARED
            .scope(RefCell::new(Some(prepared)), self.delegate(request))
            .await;
        let minted = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let Some(id) = minted else {
            return response;
        };
        // The answer to `initialize` is one short stream that ends: read it whole for the
        // protocol version the inline answers are shaped by, and send the same bytes.
        let (parts, body) = response.into_parts();
        let body = body
            .collect()
            .await
            .map(|c| c.to_bytes())
            .unwrap_or_default();
        self.tracked().insert(
            id,
            Tracked {
                server,
                last_seen: Instant::now(),
                protocol: inline::negotiated_version(&body),
                up: false,
            },
        );
        Response::from_parts(parts, Full::new(body).boxed())
    }

    async fn delegate(&self, request: Request<Bytes>) -> HttpResponse {
        let (parts, body) = request.into_parts();
        self.service
            .handle(Request::from_parts(parts, Full::new(body)))
            .await
    }
}

impl EndpointImpl {
    async fn handle(&self, request: Request<Bytes>) -> HttpResponse {
        match *request.method() {
            Method::POST => self.post(request).await,
            Method::GET | Method::DELETE => {
                let Some(id) = session_id(&request) else {
                    return session_error(INVALID_SESSION_ID);
                };
                if !self.is_live(&id).await {
                    return session_error(INVALID_SESSION_ID);
                }
                self.touch(&id);
                let deleting = request.method() == Method::DELETE;
                let mut response = self.delegate(request).await;
                if deleting {
                    self.end_session(&id).await;
                    if response.status() == StatusCode::ACCEPTED {
                        *response.status_mut() = StatusCode::OK;
                    }
                }
                response
            }
            _ => self.delegate(request).await,
        }
    }

    async fn live_sessions(&self) -> usize {
        self.sweep_ended().await;
        self.manager.sessions.read().await.len()
    }

    async fn close_all(&self) {
        let ids: Vec<String> = self.tracked().keys().cloned().collect();
        for id in ids {
            self.end_session(&id).await;
        }
    }
}

fn session_id<B>(request: &Request<B>) -> Option<String> {
    request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

fn method_of(message: &Value) -> Option<&str> {
    message.get("method")?.as_str()
}

/// A request rmcp serves without a session: `server/discover`, or one that names its protocol
/// version per request, in its `_meta` or (for a version without sessions) in the
/// `MCP-Protocol-Version` header; rmcp then checks that both are there and agree.
fn is_stateless(message: &Value, headers: &HeaderMap) -> bool {
    if message.get("id").is_none() {
        return false;
    }
    let sessionless_header = headers
        .get(PROTOCOL_VERSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v >= FIRST_SESSIONLESS_VERSION);
    match method_of(message) {
        Some("server/discover") => true,
        Some(_) => {
            sessionless_header
                || message
                    .pointer("/params/_meta")
                    .and_then(Value::as_object)
                    .is_some_and(|meta| {
                        meta.contains_key("io.modelcontextprotocol/protocolVersion")
                    })
        }
        None => false,
    }
}

/// The header a client names its protocol version in.
const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

/// The first protocol version without `initialize` and sessions.
const FIRST_SESSIONLESS_VERSION: &str = "2026-07-28";

/// A JSON-RPC error object as an HTTP response.
pub(crate) fn jsonrpc_error(
    status: StatusCode,
    code: i64,
    message: &str,
    id: Value,
) -> HttpResponse {
    let body = json!({ "jsonrpc": "2.0", "error": { "code": code, "message": message }, "id": id });
    json_response(status, &body)
}

fn session_error(message: &str) -> HttpResponse {
    jsonrpc_error(
        StatusCode::BAD_REQUEST,
        SESSION_ERROR_CODE,
        message,
        Value::Null,
    )
}

/// `body` as an `application/json` response.
pub(crate) fn json_response(status: StatusCode, body: &Value) -> HttpResponse {
    bytes_response(status, "application/json", body.to_string().into_bytes())
}

/// A response with a body of `content_type`.
pub(crate) fn bytes_response(
    status: StatusCode,
    content_type: &str,
    body: Vec<u8>,
) -> HttpResponse {
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    if let Ok(value) = header::HeaderValue::from_str(content_type) {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stateless_requests_are_the_ones_naming_a_version_per_request() {
        let none = HeaderMap::new();
        let with_meta = json!({"jsonrpc":"2.0","id":1,"method":"tools/list",
            "params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}});
        assert!(is_stateless(&with_meta, &none));
        let discover = json!({"jsonrpc":"2.0","id":1,"method":"server/discover"});
        assert!(is_stateless(&discover, &none));
        let bare = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"});
        assert!(!is_stateless(&bare, &none));
        let mut headers = HeaderMap::new();
        headers.insert("MCP-Protocol-Version", "2025-11-25".parse().unwrap());
        assert!(!is_stateless(&bare, &headers), "a session-era version");
        headers.insert("MCP-Protocol-Version", "2026-07-28".parse().unwrap());
        assert!(
            is_stateless(&bare, &headers),
            "rmcp then names the missing _meta"
        );
        let notification = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        assert!(!is_stateless(&notification, &headers));
        assert!(!is_stateless(&json!([1, 2]), &none));
    }

    #[test]
    fn session_errors_are_the_seed_envelope_at_400() {
        let response = session_error(NO_VALID_SESSION);
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
    }
}
