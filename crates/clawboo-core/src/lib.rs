//! The Clawboo MCP quartet as a library: four Model Context Protocol servers (tasks, memory,
//! tools, teamchat) over one shared SQLite file, for Rust programs that host them in their own
//! process — an agent runtime, a supervisor, a test harness — as well as for the four
//! `clawboo-mcp-*` bins, which are thin front doors over it.
//!
//! # The public surface
//!
//! Everything documented here is re-exported from the crate root, and this is the whole API:
//!
//! - **Build a server** over a [`Db`] (the shared file, [`Db::open`]): [`tasks_server`],
//!   [`memory_server`], [`tools_server`], [`teamchat_server`], and [`clawbrain_server`] for the
//!   credit-weighted markdown vault. Each returns an [`McpServer`], one session's server. A
//!   session can be **bound** ([`TasksBinding`], [`MemoryBinding`], [`ToolsBinding`],
//!   [`TeamchatBinding`], or a [`Binding`] read from a URL query or the environment): the model
//!   then cannot change its team or identity through tool arguments.
//! - **Run it** one of three ways: over stdio ([`serve_stdio`]), over Streamable HTTP on a path of
//!   the host's own router ([`McpHttpService`], a fresh server per session built from the
//!   `initialize` request's URL), or in process ([`connect_in_memory`], [`probe`]).
//! - **Attach it** to a runtime: [`attach_config`] prints the Claude Code / Codex / OpenClaw
//!   snippet, [`http_url`] the HTTP address of a server.
//! - **Peer text as evidence**: [`format_peer_post`], the one envelope that turns a teammate's post
//!   into non-user evidence.
//! - [`SERVER_NAMES`] and [`VERSION`].
//!
//! The `internal` module (hidden from these docs) holds what only this workspace's own bins and
//! `cargo xtask` use (among it the registry of servers, the one list the bins, `serve`, the probes
//! and the tests read); it is not API and may change in any release.
//!
//! # Over stdio
//!
//! A program that is itself the MCP server a runtime spawns:
//!
//! ```no_run
//! use std::path::Path;
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let db = clawboo_core::Db::open(Path::new("/var/lib/clawboo/clawboo.db"))?;
//!     // Serves until stdin closes or SIGTERM; stdout carries protocol messages only.
//!     clawboo_core::serve_stdio(clawboo_core::tasks_server(db, None)).await?;
//!     Ok(())
//! }
//! ```
//!
//! # In process
//!
//! No socket, no child process: an MCP client speaks to the server over an in-memory pipe.
//!
//! ```
//! use clawboo_core::{Db, TasksBinding, connect_in_memory, tasks_server};
//! use serde_json::json;
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let binding = TasksBinding { team_id: "team-a".into() };
//!     let server = tasks_server(Db::open_in_memory()?, Some(binding));
//!     let client = connect_in_memory(server).await?;
//!     let listed = client.list_tools().await?;
//!     assert!(listed.iter().any(|tool| tool.name == "create_task"));
//!     let created = client
//!         .call_tool("create_task", json!({ "title": "Write the release notes" }))
//!         .await?;
//!     assert!(!created.is_error);
//!     assert_eq!(created.json().unwrap()["teamId"], "team-a");
//!     client.close().await;
//!     Ok(())
//! }
//! ```
//!
//! # Over Streamable HTTP, on the host's own router
//!
//! The service answers whatever path the host routes to it; here `/mcp/tasks`, next to the host's
//! own `/health`. Each session gets a fresh server from the factory, which reads the binding from
//! the `initialize` request's query.
//!
//! ```no_run
//! use std::convert::Infallible;
//! use std::path::PathBuf;
//!
//! use clawboo_core::{Binding, Db, McpHttpService, ServerKind, SessionRefusal, tasks_server};
//! use hyper_util::rt::TokioIo;
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let path = PathBuf::from("/var/lib/clawboo/clawboo.db");
//!     let tasks = McpHttpService::new(move |request| {
//!         let query = request.uri.query().unwrap_or_default();
//!         let binding = Binding::from_query(ServerKind::Tasks, query);
//!         let db = Db::open(&path).map_err(|e| SessionRefusal::internal(e.to_string()))?;
//!         Ok(tasks_server(db, binding.tasks()))
//!     });
//!     let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//!     loop {
//!         let (stream, _) = listener.accept().await?;
//!         let tasks = tasks.clone();
//!         tokio::spawn(async move {
//!             let service = hyper::service::service_fn(move |request: hyper::Request<_>| {
//!                 let tasks = tasks.clone();
//!                 async move {
//!                     Ok::<_, Infallible>(if request.uri().path() == "/mcp/tasks" {
//!                         tasks.handle(request).await
//!                     } else {
//!                         let mut missing = hyper::Response::new(Default::default());
//!                         *missing.status_mut() = hyper::StatusCode::NOT_FOUND;
//!                         missing
//!                     })
//!                 }
//!             });
//!             let io = TokioIo::new(stream);
//!             let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
//!         });
//!     }
//! }
//! ```
//!
//! # Inside the crate
//!
//! Dependencies point one way: `servers` → (`mcp`, repositories) → `db`; `schema` lists the
//! repositories' DDL for `db`, so `db` never imports a repository. Repositories (`board`, `memory`,
//! `broker`, `teamchat`, `clawbrain`) know SQL and nothing of MCP; `mcp` is the only module that
//! touches rmcp; `servers` declare tools with `mcp` and call repositories; `cli` is what the four
//! bins run and `host` the HTTP host of their `serve` command (it mounts [`McpHttpService`] too).
//! Every module is private; this root chooses what is public.

mod args;
mod attach;
mod binding;
mod blocking;
mod board;
mod broker;
mod clawbrain;
mod cli;
mod db;
mod host;
mod http;
mod log;
mod mcp;
mod memory;
mod schema;
mod scrub;
mod servers;
mod signature;
mod teamchat;

pub use attach::{
    AttachConfig, AttachRequest, DEFAULT_HTTP_BASE, Runtime, Transport, attach_config, http_url,
};
pub use binding::{
    Binding, MemoryBinding, Scope, ServerKind, TasksBinding, TeamchatBinding, ToolsBinding,
    UnknownName,
};
pub use db::{Db, DbError};
pub use mcp::http::{HttpBody, HttpOptions, McpHttpService, SessionRefusal};
pub use mcp::in_memory::{
    CallOutcome, ClientError, InMemoryClient, ToolInfo, connect_in_memory, probe,
};
pub use mcp::stdio::ServeError;
pub use mcp::{McpServer, serve_stdio};
pub use servers::{
    ClawBrainError, Embeddings, ToolsOptions, clawbrain_server, memory_server, tasks_server,
    teamchat_server, tools_server,
};
pub use signature::{BindingKey, KeyError};
pub use teamchat::{PeerPost, format_peer_post};

/// Every server's short name, in [`ServerKind::ALL`]'s order: `tasks`, `memory`, `tools`,
/// `teamchat` (the reference's four, in its order), then `clawbrain` (each is also
/// [`ServerKind::as_str`] and the last segment of its HTTP mount).
pub const SERVER_NAMES: [&str; ServerKind::ALL.len()] = {
    let mut names = [""; ServerKind::ALL.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = ServerKind::ALL[i].as_str();
        i += 1;
    }
    names
};

/// The version every server advertises in `initialize` and every bin reports: this crate's.
pub const VERSION: &str = mcp::SERVER_VERSION;

/// Not API: what only this workspace's own bins (`cli`) and `cargo xtask bench` (`board`, `memory`
/// and `scrub`, to seed stores and measure the scrubber) use. No stability promise: anything
/// here may change or go in any release.
#[doc(hidden)]
pub mod internal {
    /// The bins' front door. Not API.
    pub mod cli {
        pub use crate::cli::*;
    }
    /// The one argument parser of every front door (the bins and xtask). Not API.
    pub mod args {
        pub use crate::args::*;
    }
    /// The registry of servers (names, bins, tools, how each is built). Not API.
    pub mod registry {
        pub use crate::servers::registry::*;
    }
    /// The kanban repository. Not API.
    pub mod board {
        pub use crate::board::*;
    }
    /// The memory store. Not API.
    pub mod memory {
        pub use crate::memory::*;
    }
    /// The secret scrubber. Not API.
    pub mod scrub {
        pub use crate::scrub::*;
    }
}
