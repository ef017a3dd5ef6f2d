//! `clawboo-mcp-memory`: the memory MCP server (`clawboo-memory`) over stdio. Its tools land with their own
//! issue; until then it serves an empty tool list.

use std::process::ExitCode;

use clawboo_core::cli::{self, BinInfo};
use clawboo_core::servers::memory;

const INFO: BinInfo = BinInfo {
    bin: "clawboo-mcp-memory",
    summary: "The Clawboo memory MCP server.",
    env_help: "",
};

fn main() -> ExitCode {
    cli::run(&INFO, |db| memory::build(db))
}
