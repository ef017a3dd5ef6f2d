//! `clawboo-mcp-tools`: the tools MCP server (`clawboo-tools`) over stdio, and the operator
//! commands that show the tools, resolve approvals and read the audit log.

use std::process::ExitCode;

use clawboo_core::ServerKind;
use clawboo_core::internal::cli::{self, BinInfo, operator};

const INFO: BinInfo = BinInfo {
    bin: "clawboo-mcp-tools",
    server: ServerKind::Tools,
    summary: "The Clawboo tool broker as MCP tools: inspected, approved by a person when risky, audited.",
    env_help: "    TAVILY_API_KEY                     enables web_search (Tavily); unset, the tool is not listed\n    \
               CLAWBOO_TAVILY_URL                 Tavily's base address (default https://api.tavily.com)\n    \
               CLAWBOO_SCOPE_AGENT_ID             the calling agent: audit rows name it, allow_always grants stick to it\n    \
               CLAWBOO_SCOPE_TENANT_ID            the tenant recorded on audit and approval rows\n    \
               CLAWBOO_TOOL_BLOCKLIST             comma-separated tools this caller may not use\n    \
               CLAWBOO_TOOL_APPROVAL_TIMEOUT_MS   how long a call waits for a person (default 120000)\n    \
               CLAWBOO_TOOL_APPROVAL_TTL_MS       how long an approval request stays open (default 300000)\n    \
               CLAWBOO_TOOL_APPROVAL_POLL_MS      how often a waiting call checks its request and heart-beats (default 250)\n",
};

fn main() -> ExitCode {
    cli::run_with_commands(&INFO, &operator::usage(INFO.bin), |args| {
        operator::dispatch(&INFO, args)
    })
}
