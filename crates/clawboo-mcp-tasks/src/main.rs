//! `clawboo-mcp-tasks`: the Tasks MCP server (`clawboo-tasks`) over stdio, `serve` over HTTP and
//! `attach`; what it is and which commands it has come from the registry of servers.

use std::process::ExitCode;

use clawboo_core::ServerKind;
use clawboo_core::internal::cli;

fn main() -> ExitCode {
    cli::run(ServerKind::Tasks)
}
