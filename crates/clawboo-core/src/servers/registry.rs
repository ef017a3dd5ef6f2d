//! The registry of servers: one [`Entry`] per [`ServerKind`], saying what the server is and how
//! one session's server is built. Every front door reads it: the bins (which kinds a bin serves,
//! its `--help`), `serve` (its mounts, `--all`), the probes (in process and over stdio), attach,
//! and the tests' lists (through `clawboo_core::internal::registry`).
//!
//! Owns, per server: its `serverInfo.name`, the bin that serves it, the one-line summary and
//! environment its bin's `--help` shows, the names of the tools and prompts it lists (the contract
//! the tests and probes check, so no count is ever written by hand), where its data lives
//! ([`Store`]) and how it is built from what the front door has ([`Context`]) and the session's
//! [`Binding`].
//!
//! Adding a sixth server: its repository (its schema listed in `crate::schema` when it keeps its
//! rows in the shared file), its server file, its [`ServerKind`] variant (`binding.rs`: its name
//! and binding fields, which every layer reads; each `match` there is exhaustive, so the compiler
//! names the lines) and one entry here, returned by [`entry`] (exhaustive too). Its bin, if it gets
//! one, is `cli::run(ServerKind::…)`. The registry test builds every entry, so it covers the new
//! one without an edit.
//!
//! Must never: hold a server's logic (the server files do), or bind a session from anything but
//! the [`Binding`] the front door read (environment for stdio, the initialize URL for HTTP).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{clawbrain, memory, tasks, teamchat, tools};
use crate::binding::{Binding, ServerKind};
use crate::db::{Clock, Db, DbError, SchemaPart};
use crate::mcp::McpServer;
use crate::memory::{EmbedConfig, Embedder, Memory};

use super::{ClawBrainError, Embeddings, ToolsOptions};

/// Where a server keeps its data, and so how a front door opens it.
#[derive(Debug, Clone, Copy)]
pub enum Store {
    /// Rows in the shared SQLite file, whose schema includes this part (`Db::open` brings every
    /// part of `crate::schema` up to date).
    Shared(&'static SchemaPart),
    /// A folder of its own (ClawBrain's vault), named by the host's configuration: `MEMORY_DIR`,
    /// or `serve --vault`. Never by a session or a model.
    Vault,
}

/// How one session's server is built from the front door's [`Context`] and the session's binding.
pub type Build = fn(&Context, &Binding) -> Result<McpServer, BuildError>;

/// What the registry says about one server.
#[derive(Debug)]
pub struct Entry {
    /// The key: its short name and binding fields are [`ServerKind`]'s.
    pub kind: ServerKind,
    /// The name it advertises in `initialize` (`serverInfo.name`).
    pub server_name: &'static str,
    /// The bin that serves it (with [`ServerKind`]'s mode arguments, when it is not the bin's own).
    pub bin: &'static str,
    /// One line: what it is for (its bin's `--help`).
    pub summary: &'static str,
    /// The environment variables it reads beyond the common ones, as `NAME  meaning` lines (its
    /// bin's `--help`).
    pub env_help: &'static str,
    /// The tools it always lists, in `tools/list` order.
    pub tools: &'static [&'static str],
    /// Tools it lists only when configured: `(tool, what enables it)`.
    pub optional_tools: &'static [(&'static str, &'static str)],
    /// The prompts it lists.
    pub prompts: &'static [&'static str],
    /// Where its data lives.
    pub store: Store,
    /// How one session's server is built.
    pub build: Build,
}

impl Entry {
    /// The arguments that make [`Entry::bin`] serve it over stdio (`["clawbrain"]` for ClawBrain).
    pub fn mode_args(&self) -> &'static [&'static str] {
        self.kind.mode_args()
    }

    /// Whether it is its bin's own server (served with no mode argument).
    pub fn is_bins_own(&self) -> bool {
        self.mode_args().is_empty()
    }

    /// `tools/list` count without optional tools, for docs that show one.
    pub fn tool_count(&self) -> usize {
        self.tools.len()
    }
}

/// A server could not be built for a session. Wire: ours (a front door's error: the bin's
/// stderr line, or an HTTP host's refusal of the `initialize`).
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The shared database could not be opened.
    #[error("cannot open the database: {0}")]
    Db(#[from] DbError),
    /// The vault could not be opened.
    #[error(transparent)]
    Vault(#[from] ClawBrainError),
    /// The front door has no vault for a server that needs one.
    #[error(
        "no ClawBrain vault is configured: name one with --vault DIR or MEMORY_DIR (never from a URL)"
    )]
    NoVault,
    /// The front door has no database (it was handed to an earlier server).
    #[error("no database for this server: the front door opened none, or gave it away already")]
    NoDb,
}

/// Where the shared database comes from.
#[derive(Debug)]
enum DbSource {
    /// Every build opens the file (one connection per HTTP session), with the environment's clock.
    File(PathBuf),
    /// One opened database, given to the first build (a stdio bin serves one session).
    Opened(Mutex<Option<Db>>),
    /// None: only servers that keep a store of their own can be built.
    None,
}

/// Where the memory server's embedder comes from.
#[derive(Debug)]
enum EmbedderSource {
    /// Full-text only.
    Off,
    /// One resolution shared by every server built (an HTTP host: many sessions).
    Shared(Embeddings),
    /// A fresh resolution in the background per server (a stdio bin: one server, whose start must
    /// not wait for an embeddings probe).
    PerServer,
}

/// What a front door has to build servers from: the shared database, ClawBrain's vault and
/// retrieval session, and the embeddings. A bin builds one server from it; a host, one per session.
#[derive(Debug)]
pub struct Context {
    db: DbSource,
    vault: Option<PathBuf>,
    session: String,
    embeddings: EmbedderSource,
}

impl Context {
    /// A context whose builds each open the shared file at `path` (an HTTP host).
    pub fn over_file(path: PathBuf) -> Self {
        Self::with_source(DbSource::File(path))
    }

    /// A context holding `db`, handed to the one server built from it (a stdio bin).
    pub fn over_db(db: Db) -> Self {
        Self::with_source(DbSource::Opened(Mutex::new(Some(db))))
    }

    /// A context with no shared database (a bin serving ClawBrain alone).
    pub fn without_db() -> Self {
        Self::with_source(DbSource::None)
    }

    fn with_source(db: DbSource) -> Self {
        Self {
            db,
            vault: None,
            session: crate::clawbrain::DEFAULT_SESSION.to_owned(),
            embeddings: EmbedderSource::Off,
        }
    }

    /// ClawBrain's vault folder (created if missing when a server is built).
    pub fn with_vault(mut self, vault: Option<PathBuf>) -> Self {
        self.vault = vault;
        self
    }

    /// The session ClawBrain records retrievals for.
    pub fn with_session(mut self, session: String) -> Self {
        self.session = session;
        self
    }

    /// Embeddings resolved once and shared by every memory server built.
    pub fn with_shared_embeddings(mut self, embeddings: Embeddings) -> Self {
        self.embeddings = EmbedderSource::Shared(embeddings);
        self
    }

    /// Embeddings resolved in the background for each memory server built, from the environment.
    pub fn with_embeddings_per_server(mut self) -> Self {
        self.embeddings = EmbedderSource::PerServer;
        self
    }

    /// The vault, if one is configured.
    pub fn vault(&self) -> Option<&Path> {
        self.vault.as_deref()
    }

    /// Whether `entry` can be built here: a vault server needs a vault.
    pub fn can_build(&self, entry: &Entry) -> bool {
        match entry.store {
            Store::Shared(_) => !matches!(self.db, DbSource::None),
            Store::Vault => self.vault.is_some(),
        }
    }

    /// The shared database for one server.
    fn db(&self) -> Result<Db, BuildError> {
        match &self.db {
            DbSource::File(path) => Ok(Db::open(path)?.with_clock(Clock::from_env())),
            DbSource::Opened(held) => held
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take()
                .ok_or(BuildError::NoDb),
            DbSource::None => Err(BuildError::NoDb),
        }
    }

    fn embedder(&self) -> Embedder {
        match &self.embeddings {
            EmbedderSource::Off => Embedder::none(),
            EmbedderSource::Shared(shared) => shared.embedder(),
            EmbedderSource::PerServer => Embedder::resolve_in_background(EmbedConfig::from_env()),
        }
    }

    fn brain_vault(&self) -> Result<&Path, BuildError> {
        self.vault.as_deref().ok_or(BuildError::NoVault)
    }
}

/// The entry of `kind`.
pub fn entry(kind: ServerKind) -> &'static Entry {
    match kind {
        ServerKind::Tasks => &TASKS,
        ServerKind::Memory => &MEMORY,
        ServerKind::Tools => &TOOLS,
        ServerKind::Teamchat => &TEAMCHAT,
        ServerKind::ClawBrain => &CLAWBRAIN,
    }
}

/// Every entry, in [`ServerKind::ALL`]'s order.
pub fn entries() -> impl Iterator<Item = &'static Entry> {
    ServerKind::ALL.into_iter().map(entry)
}

/// The entries served by `bin`, its own server first.
pub fn of_bin(bin: &str) -> impl Iterator<Item = &'static Entry> {
    let mut served: Vec<&'static Entry> = entries().filter(|e| e.bin == bin).collect();
    served.sort_by_key(|e| !e.is_bins_own());
    served.into_iter()
}

/// The bins, each once, in the order of their own servers.
pub fn bins() -> Vec<&'static str> {
    entries()
        .filter(|e| e.is_bins_own())
        .map(|e| e.bin)
        .collect()
}

/// Builds one session's `kind` server from `context`, bound as `binding` says.
pub fn build(
    kind: ServerKind,
    context: &Context,
    binding: &Binding,
) -> Result<McpServer, BuildError> {
    (entry(kind).build)(context, binding)
}

const TASKS: Entry = Entry {
    kind: ServerKind::Tasks,
    server_name: tasks::SERVER_NAME,
    bin: "clawboo-mcp-tasks",
    summary: "The Clawboo kanban board as MCP tools: tasks, atomic claims, dependencies, comments.",
    env_help: "    CLAWBOO_SCOPE_TEAM_ID    bind the session to one team: other teams' tasks are invisible\n    \
               CLAWBOO_CLAIM_LEASE_SECS the lease a claim gets when the call names none (default: no lease)\n",
    tools: &[
        "list_tasks",
        "get_task",
        "create_task",
        "create_subtask",
        "claim_task",
        "assign_task",
        "release_task",
        "update_task_status",
        "block_task",
        "unblock_task",
        "add_comment",
        "link_task",
        "renew_task_lease",
    ],
    optional_tools: &[],
    prompts: &[],
    store: Store::Shared(&crate::board::SCHEMA),
    build: |cx, binding| Ok(McpServer::new(tasks::build(cx.db()?, binding.tasks()))),
};

const MEMORY: Entry = Entry {
    kind: ServerKind::Memory,
    server_name: memory::SERVER_NAME,
    bin: "clawboo-mcp-memory",
    summary: "The Clawboo shared memory as MCP tools: facts and versioned procedures, searched by words or meaning.",
    env_help: "    CLAWBOO_SCOPE_TEAM_ID    bind reads and saves to this team (scope arguments are ignored)\n    \
               CLAWBOO_SCOPE_AGENT_ID   bind reads to this agent's and shared facts\n    \
               CLAWBOO_SCOPE_TENANT_ID  bind reads and saves to this tenant\n    \
               OLLAMA_HOST              Ollama for embeddings (default http://127.0.0.1:11434)\n    \
               OPENAI_API_KEY           OpenAI embeddings when Ollama is unreachable (OPENAI_BASE_URL to redirect)\n    \
               CLAWBOO_EMBED_MODEL      the embedding model (default nomic-embed-text / text-embedding-3-small)\n    \
               CLAWBOO_EMBEDDINGS=off   full-text search only\n",
    tools: &["memory_save", "memory_search", "memory_browse"],
    optional_tools: &[],
    prompts: &["auto-memory"],
    store: Store::Shared(&crate::memory::SCHEMA),
    build: |cx, binding| {
        let memory = Memory::new(cx.db()?, cx.embedder());
        Ok(McpServer::new(memory::build(memory, binding.memory())))
    },
};

const TOOLS: Entry = Entry {
    kind: ServerKind::Tools,
    server_name: tools::SERVER_NAME,
    bin: "clawboo-mcp-tools",
    summary: "The Clawboo tool broker as MCP tools: inspected, approved by a person when risky, audited.",
    env_help: "    TAVILY_API_KEY                     enables web_search (Tavily); unset, the tool is not listed\n    \
               CLAWBOO_TAVILY_URL                 Tavily's base address (default https://api.tavily.com)\n    \
               CLAWBOO_SCOPE_AGENT_ID             the calling agent: audit rows name it, allow_always grants stick to it\n    \
               CLAWBOO_SCOPE_TENANT_ID            the tenant recorded on audit and approval rows\n    \
               CLAWBOO_TOOL_BLOCKLIST             comma-separated tools this caller may not use\n    \
               CLAWBOO_TOOL_APPROVAL_TIMEOUT_MS   how long a call waits for a person (default 120000)\n    \
               CLAWBOO_TOOL_APPROVAL_TTL_MS       how long an approval request stays open (default 300000)\n    \
               CLAWBOO_TOOL_APPROVAL_POLL_MS      how often a waiting call checks its request and heart-beats (default 250)\n",
    tools: &["echo", "note", "delete_path"],
    optional_tools: &[("web_search", "TAVILY_API_KEY")],
    prompts: &[],
    store: Store::Shared(&crate::broker::SCHEMA),
    build: |cx, binding| {
        let options = ToolsOptions::from_env()
            .bound(binding.tools())
            .called_with(binding.token_name());
        Ok(McpServer::new(tools::build(
            cx.db()?,
            options.into_config(),
        )))
    },
};

const TEAMCHAT: Entry = Entry {
    kind: ServerKind::Teamchat,
    server_name: teamchat::SERVER_NAME,
    bin: "clawboo-mcp-teamchat",
    summary: "The Clawboo team room as MCP tools: post as a named peer, read teammates' posts as evidence.",
    env_help: "    CLAWBOO_ROOM_TEAM_ID     with CLAWBOO_AUTHOR_AGENT_ID: bind the room to team:<id>\n    \
               CLAWBOO_AUTHOR_AGENT_ID  with CLAWBOO_ROOM_TEAM_ID: bind the post author (arguments are ignored)\n",
    tools: &["team_chat_post", "team_chat_subscribe"],
    optional_tools: &[],
    prompts: &[],
    store: Store::Shared(&crate::teamchat::SCHEMA),
    build: |cx, binding| {
        Ok(McpServer::new(teamchat::build(
            cx.db()?,
            binding.teamchat(),
        )))
    },
};

const CLAWBRAIN: Entry = Entry {
    kind: ServerKind::ClawBrain,
    server_name: clawbrain::SERVER_NAME,
    bin: "clawboo-mcp-memory",
    summary: "a credit-weighted markdown vault of memories (entities, episodes) with feedback and decay, in the folder MEMORY_DIR names (default ./memory).",
    env_help: "    MEMORY_DIR               clawbrain: the vault folder (default ./memory over stdio; serve needs it or --vault)\n    \
               SESSION_ID               clawbrain: the session retrievals and feedback belong to\n",
    tools: &[
        "memory_store",
        "memory_retrieve",
        "memory_search",
        "memory_update",
        "memory_delete",
        "credit_report",
        "memory_compact",
        "memory_feedback",
    ],
    optional_tools: &[],
    prompts: &[],
    store: Store::Vault,
    build: |cx, _binding| {
        let brain = crate::clawbrain::Brain::open(cx.brain_vault()?, &cx.session)
            .map_err(ClawBrainError::from)?;
        Ok(McpServer::new(clawbrain::build(brain)))
    },
};

#[cfg(test)]
mod tests;
