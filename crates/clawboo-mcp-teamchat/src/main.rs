//! `clawboo-mcp-teamchat`: the teamchat MCP server (`clawboo-teamchat`) over stdio. Its tools land with their own
//! issue; until then it serves an empty tool list.

use std::process::ExitCode;

use clawboo_core::cli::{self, BinInfo};
use clawboo_core::servers::teamchat;

const INFO: BinInfo = BinInfo {
    bin: "clawboo-mcp-teamchat",
    summary: "The Clawboo teamchat MCP server.",
    env_help: "",
};

fn main() -> ExitCode {
    cli::run(&INFO, |db| teamchat::build(db))
}
