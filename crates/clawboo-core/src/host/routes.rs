//! Routing: what answers an admitted request. The MCP mounts (`/api/mcp/<server>`, one
//! [`Mount`] per server the host serves) are tried first, then [`State::route`]'s table of the
//! host's own routes, in order.
//!
//! Adding a route: one arm in [`State::route`] (a method, a path, and whether it needs the tools
//! server's database or the console), with its handler in a module of its own (as `rest`,
//! `console`, `events` and `api` are). Every route reads the caller's name from `caller`. Adding
//! a mount: nothing here; a server in the registry is mounted by `serve` when asked for.
//!
//! Guarantees: every request has been admitted ([`super::admission`]) and carries its
//! [`Caller`] in its extensions (read it with [`Caller::of_parts`]), has passed its caller's rate limit
//! (429 with `Retry-After` otherwise), and its body was read within [`super::MAX_BODY_BYTES`] and
//! the request deadline (408 and `Connection: close` otherwise) before a route sees it; a route that touches the database runs on the
//! blocking pool.
//! Must never: answer a path it does not own (an unknown path is a 404 naming it).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use std::time::{Duration, Instant};

use http::{HeaderValue, Method, Request, StatusCode, header};
use hyper::body::Incoming;

use super::admission::Admission;
use super::caller::Caller;
use super::limits::{self, Limits, RateLimiter};
use super::{MAX_BODY_BYTES, api, console, error, rest};
use crate::binding::ServerKind;
use crate::db::Db;
use crate::mcp::http::{self as mcp_http, HttpResponse, McpHttpService, json_response};
use crate::signature::BindingKey;

/// One server mounted at `/api/mcp/<server>`.
#[derive(Debug)]
pub struct Mount {
    /// The server.
    pub kind: ServerKind,
    /// Its sessions.
    pub service: McpHttpService,
}

/// Everything a request is answered from.
#[derive(Debug)]
pub struct State {
    /// The bound address (`/api/mcp/config` builds URLs from it, never from `Host`).
    pub addr: SocketAddr,
    /// Who may connect.
    pub admission: Admission,
    /// The MCP mounts.
    pub mounts: Vec<Mount>,
    /// The tools server's database, when it is mounted: the REST routes need it.
    pub db: Option<Arc<Db>>,
    /// The operator console (its page, REST routes and live feed), served with the tools server.
    pub console: Option<Arc<api::Console>>,
    /// The database file, for `/api/mcp/config`'s stdio snippets.
    pub db_path: PathBuf,
    /// The install's binding key, which signs `/api/mcp/config`'s URLs.
    pub key: Option<BindingKey>,
    /// What clients may cost the host.
    pub limits: Limits,
    /// The per-caller rate limit.
    pub rate: RateLimiter,
}

/// 429 with `Retry-After` in whole seconds (at least 1).
fn too_many(wait: Duration) -> HttpResponse {
    let mut response = error(
        StatusCode::TOO_MANY_REQUESTS,
        "rate limit: too many calls with this token; retry after the time in Retry-After",
    );
    let secs = wait.as_secs_f64().ceil().max(1.0) as u64;
    if let Ok(value) = HeaderValue::from_str(&secs.to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

impl State {
    /// Admits `request`, reads its body within the limit, and routes it.
    pub async fn answer(self: Arc<Self>, request: Request<Incoming>) -> HttpResponse {
        let caller = match self.admission.admit(&request) {
            Ok(caller) => caller,
            Err(refused) => return *refused,
        };
        if limits::is_rated(request.uri().path())
            && let Err(wait) = self.rate.take(caller.name(), Instant::now())
        {
            return too_many(wait);
        }
        let (mut parts, body) = request.into_parts();
        parts.extensions.insert(caller);
        let collect = mcp_http::collect_limited(&parts.headers, body, MAX_BODY_BYTES);
        let body = match tokio::time::timeout(self.limits.request_timeout, collect).await {
            Ok(Ok(body)) => body,
            Ok(Err(response)) => return *response,
            Err(_) => {
                let mut response = error(
                    StatusCode::REQUEST_TIMEOUT,
                    "the request body did not arrive in time",
                );
                response
                    .headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
                return response;
            }
        };
        self.route(Request::from_parts(parts, body)).await
    }

    /// The mount at `path`, if any.
    fn mount(&self, path: &str) -> Option<&Mount> {
        let name = path.strip_prefix("/api/mcp/")?;
        self.mounts.iter().find(|m| m.kind.as_str() == name)
    }

    async fn route(self: Arc<Self>, request: Request<Bytes>) -> HttpResponse {
        let path = request.uri().path().to_owned();
        if let Some(mount) = self.mount(&path) {
            return mount.service.handle_collected(request).await;
        }
        let (parts, body) = request.into_parts();
        let caller = Caller::of_parts(&parts.extensions);
        let method = parts.method.clone();
        let query = parts.uri.query().map(str::to_owned);
        let db = self.db.clone();
        let console = self.console.clone();
        match (method, path.as_str(), db, console) {
            (Method::GET, "/api/health", _, _) => self.health().await,
            (Method::GET, "/api/mcp/config", _, _) => rest::mcp_config(
                query.as_deref(),
                self.addr,
                &self.db_path,
                self.key.as_ref(),
            ),
            (Method::GET, p, _, Some(_)) if console::is_page(p) || console::is_asset(p) => {
                console::response(p)
            }
            (Method::GET, "/api/events", _, Some(console)) => console.feed().subscribe(),
            (method, p, _, Some(console)) if api::owns(p) => {
                let json = parts
                    .headers
                    .get(http::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.split(';').next())
                    .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
                let p = p.to_owned();
                blocking(move || {
                    let call = api::Call {
                        method: &method,
                        parts: api::parts(&p),
                        query: query.as_deref(),
                        json,
                        body: &body,
                        caller: caller.name(),
                    };
                    api::route(&console, &call)
                })
                .await
            }
            (method, p, Some(db), _) if p == "/api/tools" || p.starts_with("/api/tools/") => {
                let p = p.to_owned();
                blocking(move || {
                    rest::tools_route(&db, &caller, &method, &p, query.as_deref(), &body)
                })
                .await
            }
            (_, p, _, _) => error(StatusCode::NOT_FOUND, &format!("no route for {p}")),
        }
    }

    /// `GET /api/health`: `{"ok":true,"sessions":{<server>: <live sessions>}}` for every mount,
    /// and with the console, the store's `database`, `schema`, `rows` and `embeddings`.
    async fn health(&self) -> HttpResponse {
        let mut sessions = serde_json::Map::new();
        for mount in &self.mounts {
            sessions.insert(
                mount.kind.as_str().into(),
                mount.service.live_sessions().await.into(),
            );
        }
        let mut body = match self.console.clone() {
            Some(console) => match tokio::task::spawn_blocking(move || api::health(&console)).await
            {
                Ok(Ok(body)) => body,
                Ok(Err(e)) => {
                    return error(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        &format!("database error: {e}"),
                    );
                }
                Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
            },
            None => serde_json::Map::new(),
        };
        body.insert("ok".into(), true.into());
        body.insert("sessions".into(), sessions.into());
        json_response(StatusCode::OK, &api::mask(&serde_json::Value::Object(body)))
    }
}

/// Runs a route that touches the database on the blocking pool.
async fn blocking(route: impl FnOnce() -> HttpResponse + Send + 'static) -> HttpResponse {
    tokio::task::spawn_blocking(route)
        .await
        .unwrap_or_else(|e| error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()))
}
