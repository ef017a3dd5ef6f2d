//! The HTTP host of `serve`: the servers over Streamable HTTP at `/api/mcp/<server>`, the tools
//! REST surface (`/api/tools*`), `/api/mcp/config`, and the operator console (its page at `/`,
//! its REST routes and its live event stream), on one port.
//!
//! One concern per module: `config` reads `serve`'s flags and environment into a [`HostConfig`];
//! [`bind`] (here) assembles a host from it: the listener, the admission rules, one mount per
//! server the registry can build here, and the state the routes share; `admission` decides who
//! may connect (`Host`/`Origin` against DNS rebinding, the bearer tokens) and yields the request's
//! [`Caller`] (`caller`: named tokens, the one place a route reads "who" from); `routes` answers an
//! admitted request (the mounts first, then the host's own routes; adding a route is one arm
//! there); `limits` is what a client may cost (connection cap, deadlines, keep-alive, header
//! sizes, rate limit, shutdown grace); `listener` accepts connections within them, sweeps idle
//! sessions, applies the retention policy and merges the memory's full-text indexes (at start,
//! then hourly) and shuts down gracefully; `binding` checks a session's URL binding and its
//! signature; `caller` names who is calling; `rest` (seed 003's routes), `console` (the page's
//! static files), `api` (the console's REST routes) and `events` (the one change task and its
//! Server-Sent Events) are the operator surface.
//!
//! Decisions: a request body over 2 MB is answered 413 as soon as its `Content-Length` (or the
//! bytes read so far) say so, without reading the rest. Sessions idle 30 minutes end (a model may
//! think for minutes between calls; an approval waits up to 2), and at most 256 live per server.
//! Each session gets a fresh server from the registry (`servers::registry`): a fresh database
//! connection, bound from its initialize URL. The REST routes and the console come with the tools
//! server (they are its operator surface). ClawBrain is mounted only when the host names a vault
//! (`--vault` or `MEMORY_DIR`; see `config`), and its sessions record retrievals for the session
//! `SESSION_ID` names (default `local-session`), as over stdio: a URL cannot choose the vault.
//!
//! Must never: log or echo the token; trust the `Host` header for anything but the rebinding check.

mod admission;
mod api;
mod binding;
mod caller;
mod config;
mod console;
mod events;
mod limits;
mod listener;
mod rest;
mod routes;

use std::path::Path;
use std::sync::Arc;

use http::StatusCode;
use serde_json::json;

use crate::binding::ServerKind;
use crate::db::Db;
use crate::mcp::http::{
    self as mcp_http, HttpOptions, HttpResponse, McpHttpService, SessionRefusal as Refusal,
    json_response,
};
use crate::servers::Embeddings;
use crate::servers::registry::{self, Context};
use crate::signature::BindingKey;

pub use caller::{Caller, TOKENS_FILE_ENV, new_token_line};
pub use config::{
    DEFAULT_PORT, HostConfig, SERVE_FLAGS, ServeEnv, TOKEN_ENV, VAULT_ENV, parse_serve_args,
};
pub use listener::Host;

/// The largest request body accepted, in bytes (the reference's `express.json({limit:'2mb'})`).
pub const MAX_BODY_BYTES: usize = mcp_http::DEFAULT_MAX_BODY_BYTES;

/// The async runtime's worker threads in a host: one. The async side of a request is parsing,
/// routing and a quick read (`mcp::http::inline`); everything that may take longer runs on the
/// blocking pool, which grows with the load. One worker never wakes another: with two on a
/// 2-core machine, 16 HTTP sessions did 19.8–21.7k `get_task` calls/s against 25.8–27.6k with
/// one. A team's load (200 agents, mixed calls, all on the pool) kept its calls/s and its p95,
/// and its p50 rose from about 9 to 12–16 ms: the same mean wait, spread more evenly
/// (docs/search.md).
pub const ASYNC_WORKERS: usize = 1;

/// Binds `config.listen` (port 0 picks a free port) and prepares the mounts: every server asked
/// for that can be built here (ClawBrain needs a vault). Runs inside a tokio runtime.
pub async fn bind(config: HostConfig) -> Result<Host, String> {
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    let admission = admission::Admission::new(
        addr,
        caller::Tokens::new(&config.tokens),
        &config.extra_hosts,
    );
    let options = HttpOptions {
        allowed_hosts: admission.allowed_hosts().to_vec(),
        allowed_origins: admission.allowed_origins(),
        session_idle: config.session_idle,
        max_sessions: config.max_sessions,
        max_body_bytes: MAX_BODY_BYTES,
    };
    let key =
        BindingKey::load(&config.db_path, config.binding_key.clone()).map_err(|e| e.to_string())?;
    let verifier = Arc::new(binding::Verifier::new(key.clone(), config.signing));
    let mut context = Context::over_file(config.db_path.clone())
        .with_vault(config.vault.clone())
        .with_session(crate::clawbrain::session_from_env());
    let embeddings = if config.servers.contains(&ServerKind::Memory) {
        Embeddings::from_env()
    } else {
        Embeddings::off()
    };
    if config.servers.contains(&ServerKind::Memory) {
        context = context.with_shared_embeddings(embeddings.clone());
    }
    let context = Arc::new(context);
    let mut mounts = Vec::new();
    let mut unmounted = Vec::new();
    for &kind in &config.servers {
        if context.can_build(registry::entry(kind)) {
            let service = mount(kind, &context, &options, &verifier);
            mounts.push(routes::Mount { kind, service });
        } else {
            unmounted.push(format!(
                "{kind} not mounted: no vault (--vault DIR or {VAULT_ENV})"
            ));
        }
    }
    let (db, console) = if config.servers.contains(&ServerKind::Tools) {
        let console = api::Console::open(config.db_path.clone(), &embeddings)?;
        (
            Some(Arc::new(open_db(&config.db_path)?)),
            Some(Arc::new(console)),
        )
    } else {
        (None, None)
    };
    Ok(Host {
        listener,
        state: Arc::new(routes::State {
            addr,
            admission,
            mounts,
            db,
            console,
            db_path: config.db_path,
            key: Some(key),
            limits: config.limits,
            rate: limits::RateLimiter::new(config.limits.rate_per_sec),
        }),
        unmounted,
        retention: config.retention,
    })
}

fn open_db(path: &Path) -> Result<Db, String> {
    Db::open(path).map_err(|e| e.to_string())
}

/// The mount of one server: a fresh server per session, built through the registry from the
/// host's context and the session's verified URL binding, served by the public [`McpHttpService`].
fn mount(
    kind: ServerKind,
    context: &Arc<Context>,
    options: &HttpOptions,
    verifier: &Arc<binding::Verifier>,
) -> McpHttpService {
    let context = Arc::clone(context);
    let verifier = Arc::clone(verifier);
    McpHttpService::with_options(
        move |parts| {
            let binding = verifier
                .binding(kind, parts.uri.query())?
                .with_token_name(Caller::of_parts(&parts.extensions).name());
            registry::build(kind, &context, &binding).map_err(|e| Refusal::internal(e.to_string()))
        },
        options.clone(),
    )
}

/// `{"error": message}` at `status`, the message masked.
fn error(status: StatusCode, message: &str) -> HttpResponse {
    json_response(
        status,
        &json!({ "error": crate::scrub::scrub_secrets(message) }),
    )
}
