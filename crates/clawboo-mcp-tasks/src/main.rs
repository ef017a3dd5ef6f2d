//! `clawboo-mcp-tasks`: the Tasks MCP server (`clawboo-tasks`) over stdio.

use std::process::ExitCode;

use clawboo_core::ServerKind;
use clawboo_core::internal::cli::{self, BinInfo};

const INFO: BinInfo = BinInfo {
    bin: "clawboo-mcp-tasks",
    server: ServerKind::Tasks,
    summary: "The Clawboo kanban board as MCP tools: tasks, atomic claims, dependencies, comments.",
    env_help: "    CLAWBOO_SCOPE_TEAM_ID    bind the session to one team: other teams' tasks are invisible\n",
};

fn main() -> ExitCode {
    cli::run(&INFO)
}
