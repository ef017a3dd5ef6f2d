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

use clawboo_core::clawbrain::{self, Brain};
use clawboo_core::cli::{self, BinInfo, env_value};
use clawboo_core::memory::{EmbedConfig, Embedder, Memory};
use clawboo_core::servers::{
    self,
    memory::{self, BoundScope},
};

const INFO: BinInfo = BinInfo {
    bin: "clawboo-mcp-memory",
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

/// `clawbrain [command…]`: serve ClawBrain over stdio, or run one of its commands.
fn clawbrain_mode(args: &[String]) -> Option<ExitCode> {
    let rest = args.strip_prefix(&["clawbrain".to_owned()])?;
    if !rest.is_empty() {
        return Some(clawbrain::operator::dispatch(INFO.bin, rest));
    }
    let root = clawbrain::root_from_env();
    Some(match Brain::open(&root, &clawbrain::session_from_env()) {
        Ok(brain) => cli::serve(&INFO, servers::clawbrain::build(brain)),
        Err(e) => {
            eprintln!("{}: clawbrain: {e}", INFO.bin);
            ExitCode::FAILURE
        }
    })
}

fn main() -> ExitCode {
    let bound = BoundScope::from_values(
        env_value("CLAWBOO_SCOPE_TEAM_ID").as_deref(),
        env_value("CLAWBOO_SCOPE_AGENT_ID").as_deref(),
        env_value("CLAWBOO_SCOPE_TENANT_ID").as_deref(),
    );
    cli::run_with_commands(
        &INFO,
        &clawbrain::operator::usage(INFO.bin),
        clawbrain_mode,
        |db| {
            let embedder = Embedder::resolve_in_background(EmbedConfig::from_env());
            memory::build(Memory::new(db, embedder), bound)
        },
    )
}
