//! The servers (tasks, memory, tools, teamchat over the shared database, and ClawBrain over its
//! vault), each declared with [`crate::mcp`] over its repository; the public constructors that
//! build them as [`McpServer`]s; and [`registry`], the one list of them every front door reads
//! (names, bins, tools, stores, and how a session's server is built).
//!
//! Servers know MCP's shapes (arguments, descriptions, result texts) and call repositories; they
//! never run SQL themselves. The constructors here are the library's way in: each builds one
//! session's server over a [`Db`] (see [`McpServer`] for what "one session" means), with the
//! binding the host chose for that session, never one the model could pick.

pub mod clawbrain;
pub mod memory;
pub mod registry;
mod risk;
pub mod tasks;
pub mod teamchat;
pub mod tools;

use std::path::Path;

use crate::binding::{TasksBinding, TeamchatBinding};
use crate::db::Db;
use crate::mcp::McpServer;

pub use clawbrain::ClawBrainError;
pub use memory::Embeddings;
pub use tools::ToolsOptions;

/// Builds the tasks server (`clawboo-tasks`: a kanban board with an atomic claim and optional
/// leases on claims, its tools listed in `servers::registry`) over `db`. With `binding`, every read
/// and write is confined to that team and tasks of other teams look missing; without it the model
/// names teams in its arguments. Claims get the lease `CLAWBOO_CLAIM_LEASE_SECS` names (in
/// seconds), if this process's environment sets it, unless a call says otherwise.
pub fn tasks_server(db: Db, binding: Option<TasksBinding>) -> McpServer {
    McpServer::new(tasks::build(db, binding))
}

/// Builds the memory server (`clawboo-memory`, tools and the `auto-memory` prompt: facts and
/// versioned procedures, searched full-text, by vector or both) over `db`, embedding with
/// `embeddings`. With `binding`, the scope arguments are ignored: saves are tagged with the bound
/// team and reads see that team's, the bound agent's and global entries only.
pub fn memory_server(
    db: Db,
    embeddings: &Embeddings,
    binding: Option<crate::binding::MemoryBinding>,
) -> McpServer {
    McpServer::new(memory::build(
        crate::memory::Memory::new(db, embeddings.embedder()),
        binding,
    ))
}

/// Builds the tools server (`clawboo-tools`: the broker's `echo`, `note`, `delete_path`, and
/// `web_search` when a Tavily key is available) over `db`. Every call goes through the broker's
/// inspectors, approval queue, compaction and audit; a policy refusal is a tool-error whose
/// reason is in `_meta.denied` ([`CallOutcome::denied`](crate::CallOutcome::denied)).
pub fn tools_server(db: Db, options: ToolsOptions) -> McpServer {
    McpServer::new(tools::build(db, options.into_config()))
}

/// Builds the teamchat server (`clawboo-teamchat`: a team room whose posts reach a model
/// as peer evidence) over `db`. With `binding`, the author and the room are the binding's and the
/// identity arguments are ignored.
pub fn teamchat_server(db: Db, binding: Option<TeamchatBinding>) -> McpServer {
    McpServer::new(teamchat::build(db, binding))
}

/// Builds the ClawBrain server (`clawbrain`: a credit-weighted markdown vault, seed 002's tools and
/// `memory_feedback`) over the
/// vault folder `vault` (created if missing), recording retrievals for session `session`.
pub fn clawbrain_server(vault: &Path, session: &str) -> Result<McpServer, ClawBrainError> {
    let brain = crate::clawbrain::Brain::open(vault, session).map_err(ClawBrainError::from)?;
    Ok(McpServer::new(clawbrain::build(brain)))
}
