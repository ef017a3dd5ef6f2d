//! `clawboo-mcp-teamchat`: the TeamChat MCP server (`clawboo-teamchat`) over stdio.
//!
//! Unbound by default: callers pass `authorAgentId` + `teamId`. When the client's config sets both
//! `CLAWBOO_ROOM_TEAM_ID` and `CLAWBOO_AUTHOR_AGENT_ID`, the connection is bound to that author in
//! the room `team:<teamId>` and identity arguments are ignored; with only one set it stays unbound.

use std::process::ExitCode;

use clawboo_core::ServerKind;
use clawboo_core::internal::cli::{self, BinInfo};

const INFO: BinInfo = BinInfo {
    bin: "clawboo-mcp-teamchat",
    server: ServerKind::Teamchat,
    summary: "The Clawboo team room as MCP tools: post as a named peer, read teammates' posts as evidence.",
    env_help: "    CLAWBOO_ROOM_TEAM_ID     with CLAWBOO_AUTHOR_AGENT_ID: bind the room to team:<id>\n    \
               CLAWBOO_AUTHOR_AGENT_ID  with CLAWBOO_ROOM_TEAM_ID: bind the post author (arguments are ignored)\n",
};

fn main() -> ExitCode {
    cli::run(&INFO)
}
