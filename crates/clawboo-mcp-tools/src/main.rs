//! `clawboo-mcp-tools`: the tools MCP server (`clawboo-tools`) over stdio, `serve` over HTTP,
//! `attach`, and the operator commands that show the tools, resolve approvals and read the audit
//! log; what it is and which commands it has come from the registry of servers.

use std::process::ExitCode;

use clawboo_core::ServerKind;
use clawboo_core::internal::cli;

fn main() -> ExitCode {
    cli::run(ServerKind::Tools)
}
