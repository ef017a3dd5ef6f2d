//! `clawboo-mcp-teamchat`: the TeamChat MCP server (`clawboo-teamchat`) over stdio, `serve` over
//! HTTP and `attach`; what it is and which commands it has come from the registry of servers.
//!
//! Unbound by default: callers pass `authorAgentId` + `teamId`. When the client's config sets both
//! `CLAWBOO_ROOM_TEAM_ID` and `CLAWBOO_AUTHOR_AGENT_ID`, the connection is bound to that author in
//! the room `team:<teamId>` and identity arguments are ignored; with only one set it stays unbound.

use std::process::ExitCode;

use clawboo_core::ServerKind;
use clawboo_core::internal::cli;

fn main() -> ExitCode {
    cli::run(ServerKind::Teamchat)
}
