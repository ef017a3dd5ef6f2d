//! `clawboo-mcp-memory`: the memory MCP server (`clawboo-memory`) over stdio, `serve` over HTTP and
//! `attach`; what it is and which commands it has come from the registry of servers.
//!
//! Unbound by default: the model's `scopeTeamId` / `scopeAgentId` arguments are the scope. When the
//! client's config sets any of `CLAWBOO_SCOPE_TEAM_ID`, `CLAWBOO_SCOPE_AGENT_ID`,
//! `CLAWBOO_SCOPE_TENANT_ID`, the connection is bound to them and scope arguments are ignored. The
//! embedding provider is resolved in the background (Ollama, then OpenAI, else full-text only).
//!
//! `clawboo-mcp-memory clawbrain` serves ClawBrain instead (the credit-weighted markdown vault in
//! `MEMORY_DIR`, server `clawbrain`); `clawbrain feedback|decay|compact|digest` are its commands
//! for scripts and hooks; `serve --vault DIR` (or `MEMORY_DIR`) mounts it over HTTP too.

use std::process::ExitCode;

use clawboo_core::ServerKind;
use clawboo_core::internal::cli;

fn main() -> ExitCode {
    cli::run(ServerKind::Memory)
}
