//! `clawboo-mcp-memory`: the memory MCP server (`clawboo-memory`) over stdio.
//!
//! Unbound by default: the model's `scopeTeamId` / `scopeAgentId` arguments are the scope. When the
//! client's config sets any of `CLAWBOO_SCOPE_TEAM_ID`, `CLAWBOO_SCOPE_AGENT_ID`,
//! `CLAWBOO_SCOPE_TENANT_ID`, the connection is bound to them and scope arguments are ignored. The
//! embedding provider is resolved in the background (Ollama, then OpenAI, else full-text only).
//!
//! `clawboo-mcp-memory clawbrain` serves ClawBrain instead (the credit-weighted markdown vault in
//! `MEMORY_DIR`, server `clawbrain`); `clawbrain feedback|decay|compact|digest` are its commands
//! for scripts and hooks.

use std::process::ExitCode;

use clawboo_core::ServerKind;
use clawboo_core::internal::cli::{self, BinInfo};

const INFO: BinInfo = BinInfo {
    bin: "clawboo-mcp-memory",
    server: ServerKind::Memory,
    summary: "The Clawboo shared memory as MCP tools: facts and versioned procedures, searched by words or meaning.",
    env_help: "    CLAWBOO_SCOPE_TEAM_ID    bind reads and saves to this team (scope arguments are ignored)\n    \
               CLAWBOO_SCOPE_AGENT_ID   bind reads to this agent's and shared facts\n    \
               CLAWBOO_SCOPE_TENANT_ID  bind reads and saves to this tenant\n    \
               OLLAMA_HOST              Ollama for embeddings (default http://127.0.0.1:11434)\n    \
               OPENAI_API_KEY           OpenAI embeddings when Ollama is unreachable (OPENAI_BASE_URL to redirect)\n    \
               CLAWBOO_EMBED_MODEL      the embedding model (default nomic-embed-text / text-embedding-3-small)\n    \
               CLAWBOO_EMBEDDINGS=off   full-text search only\n    \
               MEMORY_DIR               clawbrain: the vault folder (default ./memory)\n    \
               SESSION_ID               clawbrain: the session retrievals and feedback belong to\n",
};

fn main() -> ExitCode {
    cli::run_with_commands(&INFO, &cli::clawbrain::usage(INFO.bin), |args| {
        cli::clawbrain::mode(&INFO, args)
    })
}
