//! `clawboo-mcp-tools`: the tools MCP server (`clawboo-tools`) over stdio. Its tools land with their own
//! issue; until then it serves an empty tool list.

use std::process::ExitCode;

use clawboo_core::cli::{self, BinInfo};
use clawboo_core::servers::tools;

const INFO: BinInfo = BinInfo {
    bin: "clawboo-mcp-tools",
    summary: "The Clawboo tools MCP server.",
    env_help: "",
};

fn main() -> ExitCode {
    cli::run(&INFO, |db| tools::build(db))
}
