//! The HTTP host: the four servers over Streamable HTTP at `/api/mcp/<server>`, the tools REST
//! surface (`/api/tools*`), `/api/mcp/config`, and the approvals page, on one port.
//!
//! Owns: the listener, routing, who may connect (the `Host`/`Origin` check against DNS
//! rebinding, the optional bearer token), the request-body limit, the per-session server
//! factories (a fresh database connection and server per session, bound from the initialize URL),
//! the idle sweep and shutdown.
//!
//! Decisions: loopback `127.0.0.1:18790` by default; a non-loopback address without a token is
//! refused at start. A request body over 2 MB is answered 413 as soon as its `Content-Length`
//! (or the bytes read so far) say so, without reading the rest. Sessions idle 30 minutes end (a
//! model may think for minutes between calls; an approval waits up to 2), and at most 256 live per
//! server. The token is compared in constant time and never logged. The REST routes and the page
//! come with the tools server (they are its operator surface); `/api/mcp/config` builds URLs from
//! the host's own bound address, never from the `Host` header.
//!
//! Must never: log or echo the token; trust the `Host` header for anything but the rebinding check.

mod binding;
mod page;
mod rest;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, StatusCode, header};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::json;

use crate::binding::ServerKind;
use crate::db::{Clock, Db};
use crate::log;
use crate::mcp::http::{
    self as mcp_http, HttpOptions, HttpResponse, McpHttpService, SessionRefusal as Refusal,
    json_response,
};
use crate::servers::{self, Embeddings, ToolsOptions};

pub use binding::SigningMode;

use crate::signature::BindingKey;

/// The port the host listens on by default (the reference's web server port).
pub const DEFAULT_PORT: u16 = 18790;

/// The environment variable holding the bearer token.
pub const TOKEN_ENV: &str = "CLAWBOO_HTTP_TOKEN";

/// The largest request body accepted, in bytes (the reference's `express.json({limit:'2mb'})`).
pub const MAX_BODY_BYTES: usize = mcp_http::DEFAULT_MAX_BODY_BYTES;

/// How long a session may go without traffic before it ends, by default.
pub const DEFAULT_SESSION_IDLE: Duration = mcp_http::DEFAULT_SESSION_IDLE;

/// The most live sessions per server, by default.
pub const DEFAULT_MAX_SESSIONS: usize = mcp_http::DEFAULT_MAX_SESSIONS;

/// How the host is set up.
#[derive(Debug, Clone)]
pub struct HostConfig {
    /// Where to listen.
    pub listen: SocketAddr,
    /// The bearer token every request must carry, if any.
    pub token: Option<String>,
    /// The servers mounted at `/api/mcp/<server>`.
    pub servers: Vec<ServerKind>,
    /// How long an idle session lives.
    pub session_idle: Duration,
    /// The most live sessions per server.
    pub max_sessions: usize,
    /// Extra `Host` names accepted (for a non-loopback deployment).
    pub extra_hosts: Vec<String>,
    /// Whether bindings in URLs must be signed.
    pub signing: SigningMode,
    /// The database file every session opens.
    pub db_path: PathBuf,
    /// The binding key from the environment ([`crate::signature::KEY_ENV`]), if set.
    pub binding_key: Option<String>,
}

impl std::fmt::Display for HostConfig {
    /// A one-line description that never shows the token.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.servers.iter().map(|s| s.as_str()).collect();
        write!(
            f,
            "servers {}, token {}, bindings {}",
            names.join(", "),
            if self.token.is_some() {
                "required"
            } else {
                "off"
            },
            self.signing.as_str()
        )
    }
}

/// The `serve` flags, as `--help` shows them.
pub const SERVE_USAGE: &str = "[--all] [--listen ADDR] [--token T] [--max-sessions N] [--session-idle SECS]\n        \
    [--allow-host NAME] [--unsigned-bindings]";

/// What `serve` reads from the environment (blank values already dropped).
#[derive(Debug, Clone, Default)]
pub struct ServeEnv {
    /// [`TOKEN_ENV`].
    pub token: Option<String>,
    /// [`crate::signature::KEY_ENV`].
    pub binding_key: Option<String>,
}

/// Reads the `serve` arguments. `own` is the bin's server; `--all` mounts the four. The token
/// comes from `--token` or [`TOKEN_ENV`].
pub fn parse_serve_args(
    own: ServerKind,
    args: &[String],
    env: ServeEnv,
    db_path: PathBuf,
) -> Result<HostConfig, String> {
    let mut config = HostConfig {
        listen: SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)),
        token: env.token,
        servers: vec![own],
        session_idle: DEFAULT_SESSION_IDLE,
        max_sessions: DEFAULT_MAX_SESSIONS,
        extra_hosts: Vec::new(),
        signing: SigningMode::Required,
        db_path,
        binding_key: env.binding_key,
    };
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        match flag.as_str() {
            "--all" => config.servers = ServerKind::ALL.to_vec(),
            "--unsigned-bindings" => config.signing = SigningMode::Optional,
            "--listen" | "--token" | "--max-sessions" | "--session-idle" | "--allow-host" => {
                let value = rest
                    .next()
                    .filter(|v| !v.starts_with("--"))
                    .ok_or_else(|| format!("{flag} needs a value"))?;
                match flag.as_str() {
                    "--listen" => config.listen = value.parse().map_err(|_| {
                        format!(
                            "--listen needs an address like 127.0.0.1:{DEFAULT_PORT}, got {value:?}"
                        )
                    })?,
                    "--token" => config.token = Some(value.clone()),
                    "--max-sessions" => {
                        config.max_sessions = value
                            .parse()
                            .ok()
                            .filter(|n: &usize| *n > 0)
                            .ok_or_else(|| {
                                format!(
                                    "--max-sessions needs a positive whole number, got {value:?}"
                                )
                            })?
                    }
                    "--session-idle" => {
                        let secs: u64 = value.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                            format!(
                                "--session-idle needs a positive number of seconds, got {value:?}"
                            )
                        })?;
                        config.session_idle = Duration::from_secs(secs)
                    }
                    _ => config.extra_hosts.push(value.clone()),
                }
            }
            other => return Err(format!("serve: unexpected argument {other:?}")),
        }
    }
    config.token = config
        .token
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty());
    if config.token.is_none() && !config.listen.ip().is_loopback() {
        return Err(format!(
            "refusing to listen on {} without a token: anyone who can reach it could run and approve tool calls; pass --token or set {TOKEN_ENV}",
            config.listen
        ));
    }
    Ok(config)
}

/// A host bound to its address, ready to run.
pub struct Host {
    listener: tokio::net::TcpListener,
    state: Arc<State>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("addr", &self.state.addr)
            .finish()
    }
}

struct State {
    addr: SocketAddr,
    token: Option<String>,
    allowed_hosts: Vec<String>,
    endpoints: Vec<(ServerKind, McpHttpService)>,
    db: Option<Arc<Db>>,
    db_path: PathBuf,
    key: Option<BindingKey>,
}

/// Binds `config.listen` (port 0 picks a free port) and prepares the endpoints. Runs inside a
/// tokio runtime.
pub async fn bind(config: HostConfig) -> Result<Host, String> {
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    let mut allowed_hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"]
        .iter()
        .map(|h| (*h).to_owned())
        .collect();
    if !addr.ip().is_unspecified() && !addr.ip().is_loopback() {
        allowed_hosts.push(addr.ip().to_string());
    }
    allowed_hosts.extend(config.extra_hosts.iter().cloned());
    let allowed_origins: Vec<String> = allowed_hosts
        .iter()
        .map(|h| format!("http://{}:{}", bracketed(h), addr.port()))
        .collect();
    let options = HttpOptions {
        allowed_hosts: allowed_hosts.clone(),
        allowed_origins,
        session_idle: config.session_idle,
        max_sessions: config.max_sessions,
        max_body_bytes: MAX_BODY_BYTES,
    };
    let key =
        BindingKey::load(&config.db_path, config.binding_key.clone()).map_err(|e| e.to_string())?;
    let verifier = Arc::new(binding::Verifier::new(key.clone(), config.signing));
    let db = if config.servers.contains(&ServerKind::Tools) {
        Some(Arc::new(
            Db::open(&config.db_path).map_err(|e| e.to_string())?,
        ))
    } else {
        None
    };
    let endpoints = config
        .servers
        .iter()
        .map(|kind| (*kind, endpoint(*kind, &config.db_path, &options, &verifier)))
        .collect();
    Ok(Host {
        listener,
        state: Arc::new(State {
            addr,
            token: config.token,
            allowed_hosts,
            endpoints,
            db,
            db_path: config.db_path,
            key: Some(key),
        }),
    })
}

fn bracketed(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_owned()
    }
}

fn open_db(path: &std::path::Path) -> Result<Db, Refusal> {
    Db::open(path)
        .map(|db| db.with_clock(Clock::from_env()))
        .map_err(|e| Refusal::internal(format!("cannot open the database: {e}")))
}

/// The endpoint of one server: a fresh connection and server per session, built by the library's
/// public constructors and served by the public [`McpHttpService`].
fn endpoint(
    kind: ServerKind,
    db_path: &std::path::Path,
    options: &HttpOptions,
    verifier: &Arc<binding::Verifier>,
) -> McpHttpService {
    let path = db_path.to_path_buf();
    let verifier = Arc::clone(verifier);
    let embeddings = (kind == ServerKind::Memory).then(Embeddings::from_env);
    McpHttpService::with_options(
        move |parts| {
            let binding = verifier.binding(kind, parts.uri.query())?;
            let db = open_db(&path)?;
            Ok(match kind {
                ServerKind::Tasks => servers::tasks_server(db, binding.tasks()),
                ServerKind::Memory => servers::memory_server(
                    db,
                    embeddings.as_ref().unwrap_or(&Embeddings::off()),
                    binding.memory(),
                ),
                ServerKind::Tools => {
                    servers::tools_server(db, ToolsOptions::from_env().bound(binding.tools()))
                }
                ServerKind::Teamchat => servers::teamchat_server(db, binding.teamchat()),
            })
        },
        options.clone(),
    )
}

impl Host {
    /// The address the host listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.state.addr
    }

    /// Serves until SIGTERM or Ctrl-C, then ends every session.
    pub async fn run(self) {
        let state = Arc::clone(&self.state);
        let sweeper = tokio::spawn({
            let state = Arc::clone(&state);
            async move {
                let mut tick = tokio::time::interval(Duration::from_secs(30));
                loop {
                    tick.tick().await;
                    for (_, endpoint) in &state.endpoints {
                        endpoint.sweep().await;
                    }
                }
            }
        });
        loop {
            let accepted = tokio::select! {
                accepted = self.listener.accept() => accepted,
                _ = shutdown_signal() => break,
            };
            let stream = match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    log::warn(&format!("accept failed: {e}"));
                    continue;
                }
            };
            let state = Arc::clone(&state);
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request| {
                    let state = Arc::clone(&state);
                    async move { Ok::<_, Infallible>(state.answer(request).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
        sweeper.abort();
        log::info("shutting down: ending every session");
        for (_, endpoint) in &state.endpoints {
            endpoint.close_all().await;
        }
    }
}

#[cfg(unix)]
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let term = async {
        match signal(SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = term => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

#[cfg(not(unix))]
async fn shutdown_signal() {
    let _ = tokio::signal::ctrl_c().await;
}

/// `{"error": message}` at `status`, the message masked.
fn error(status: StatusCode, message: &str) -> HttpResponse {
    json_response(
        status,
        &json!({ "error": crate::scrub::scrub_secrets(message) }),
    )
}

/// Equal in constant time for equal lengths.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The host name of a `Host` header value (port dropped, IPv6 brackets removed), lower-cased.
fn host_name(value: &str) -> String {
    let value = value.trim();
    let name = if let Some(rest) = value.strip_prefix('[') {
        rest.split(']').next().unwrap_or_default()
    } else {
        value.rsplit_once(':').map_or(value, |(name, _)| name)
    };
    name.to_ascii_lowercase()
}

impl State {
    /// Who may connect: a `Host` naming this host (DNS rebinding), an `Origin` (when present) of
    /// this host's own pages, and the token when one is set.
    fn admit<B>(&self, request: &Request<B>) -> Result<(), Box<HttpResponse>> {
        let host = request
            .headers()
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .map(host_name);
        if !host.is_some_and(|h| {
            self.allowed_hosts
                .iter()
                .any(|a| a.eq_ignore_ascii_case(&h))
        }) {
            return Err(Box::new(error(
                StatusCode::FORBIDDEN,
                "Forbidden: Host header is not allowed",
            )));
        }
        if let Some(origin) = request.headers().get(header::ORIGIN) {
            let allowed = origin.to_str().ok().is_some_and(|origin| {
                self.allowed_hosts.iter().any(|h| {
                    origin.eq_ignore_ascii_case(&format!(
                        "http://{}:{}",
                        bracketed(h),
                        self.addr.port()
                    ))
                })
            });
            if !allowed {
                return Err(Box::new(error(
                    StatusCode::FORBIDDEN,
                    "Forbidden: Origin header is not allowed",
                )));
            }
        }
        if let Some(token) = self
            .token
            .as_ref()
            .filter(|_| !page::is_asset(request.uri().path()))
        {
            let bearer = request
                .headers()
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .map(str::trim);
            let page_token = (request.method() == Method::GET
                && page::is_page(request.uri().path()))
            .then(|| rest::query_value(request.uri().query(), "token"))
            .flatten();
            let given = bearer.map(str::to_owned).or(page_token);
            if !given.is_some_and(|g| same_secret(g.as_bytes(), token.as_bytes())) {
                let mut response = error(
                    StatusCode::UNAUTHORIZED,
                    "missing or wrong bearer token (send Authorization: Bearer <token>)",
                );
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    header::HeaderValue::from_static("Bearer"),
                );
                return Err(Box::new(response));
            }
        }
        Ok(())
    }

    async fn answer(self: Arc<Self>, request: Request<Incoming>) -> HttpResponse {
        if let Err(refused) = self.admit(&request) {
            return *refused;
        }
        let (parts, body) = request.into_parts();
        let body = match mcp_http::collect_limited(&parts.headers, body, MAX_BODY_BYTES).await {
            Ok(body) => body,
            Err(response) => return *response,
        };
        self.route(Request::from_parts(parts, body)).await
    }

    async fn route(self: Arc<Self>, request: Request<Bytes>) -> HttpResponse {
        let path = request.uri().path().to_owned();
        if let Some(name) = path.strip_prefix("/api/mcp/")
            && let Some((_, endpoint)) = self.endpoints.iter().find(|(k, _)| k.as_str() == name)
        {
            return endpoint.handle_collected(request).await;
        }
        let method = request.method().clone();
        let db = self.db.clone();
        match (method, path.as_str(), db) {
            (Method::GET, "/api/health", _) => {
                let mut sessions = serde_json::Map::new();
                for (kind, endpoint) in &self.endpoints {
                    sessions.insert(kind.as_str().into(), endpoint.live_sessions().await.into());
                }
                json_response(StatusCode::OK, &json!({ "ok": true, "sessions": sessions }))
            }
            (Method::GET, "/api/mcp/config", _) => rest::mcp_config(
                request.uri().query(),
                self.addr,
                &self.db_path,
                self.key.as_ref(),
            ),
            (Method::GET, p, Some(_)) if page::is_page(p) || page::is_asset(p) => page::response(p),
            (method, p, Some(db)) if p == "/api/tools" || p.starts_with("/api/tools/") => {
                let query = request.uri().query().map(str::to_owned);
                let body = request.into_body();
                let p = p.to_owned();
                tokio::task::spawn_blocking(move || {
                    rest::tools_route(&db, &method, &p, query.as_deref(), &body)
                })
                .await
                .unwrap_or_else(|e| error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()))
            }
            (_, p, _) => error(StatusCode::NOT_FOUND, &format!("no route for {p}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn a_non_loopback_listen_address_needs_a_token() {
        let err = parse_serve_args(
            ServerKind::Tasks,
            &args(&["--listen", "0.0.0.0:18790"]),
            ServeEnv::default(),
            PathBuf::from("x.db"),
        )
        .unwrap_err();
        assert!(
            err.starts_with("refusing to listen on 0.0.0.0:18790 without a token"),
            "{err}"
        );
        let ok = parse_serve_args(
            ServerKind::Tasks,
            &args(&["--listen", "0.0.0.0:18790", "--token", "t0k3n-for-tests"]),
            ServeEnv::default(),
            PathBuf::from("x.db"),
        )
        .unwrap();
        assert!(!ok.to_string().contains("t0k3n"), "{ok}");
        let blank_env = parse_serve_args(
            ServerKind::Tasks,
            &args(&["--listen", "[::]:1"]),
            ServeEnv {
                token: Some("  ".into()),
                binding_key: None,
            },
            PathBuf::from("x.db"),
        );
        assert!(blank_env.is_err());
    }

    #[test]
    fn serve_flags_are_read_and_bad_values_named() {
        let config = parse_serve_args(
            ServerKind::Memory,
            &args(&[
                "--all",
                "--max-sessions",
                "3",
                "--session-idle",
                "5",
                "--unsigned-bindings",
            ]),
            ServeEnv::default(),
            PathBuf::from("x.db"),
        )
        .unwrap();
        assert_eq!(config.servers, ServerKind::ALL.to_vec());
        assert_eq!(config.max_sessions, 3);
        assert_eq!(config.session_idle, Duration::from_secs(5));
        assert_eq!(config.signing, SigningMode::Optional);
        for (bad, field) in [
            (vec!["--max-sessions", "0"], "--max-sessions"),
            (vec!["--listen", "nowhere"], "--listen"),
            (vec!["--session-idle", "x"], "--session-idle"),
            (vec!["--token"], "--token"),
            (vec!["--bogus"], "--bogus"),
        ] {
            let err = parse_serve_args(
                ServerKind::Tasks,
                &args(&bad),
                ServeEnv::default(),
                PathBuf::from("x.db"),
            )
            .unwrap_err();
            assert!(err.contains(field), "{err}");
        }
    }

    #[test]
    fn host_names_drop_ports_and_brackets() {
        assert_eq!(host_name("127.0.0.1:18790"), "127.0.0.1");
        assert_eq!(host_name("LocalHost"), "localhost");
        assert_eq!(host_name("[::1]:80"), "::1");
        assert_eq!(host_name("evil.example:18790"), "evil.example");
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abc", b"abd"));
        assert!(!same_secret(b"abc", b"abcd"));
    }
}
