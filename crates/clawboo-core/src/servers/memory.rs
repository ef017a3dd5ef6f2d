//! The memory server (`clawboo-memory`): `memory_save`, `memory_search`, `memory_browse` and the
//! `auto-memory` prompt, over the shared [`crate::memory::Memory`] store.
//!
//! Owns: argument types, tool descriptions, scope resolution and the wire texts. Guarantees:
//! when the connection is bound ([`MemoryBinding`]), the `scopeTeamId` / `scopeAgentId` arguments are
//! ignored: a save is tagged with the bound team only (no agent, so every teammate recalls it) and
//! reads see the bound team's, the bound agent's and global entries, never another team's (a
//! binding without a team reads global entries only). Unbound, the arguments are the scope, as the
//! seed says: a blank one is unset on a save, and on a read it narrows by the reference's
//! documented contract (memory.md §2.1–2.2; [`ReadScope::new`]): `scopeTeamId: ""` reads global
//! entries only, never every team's. The unbound `auto-memory` prompt takes the same two
//! arguments and, like the reference's injection (`teamId ?? ''`), reads global entries only when
//! it is given no team.
//!
//! `memory_search` answers the reference's shape, a JSON array of hits, whenever it searched the
//! way it was asked. When it was asked for `vector` or `hybrid` and has no embedding provider, it
//! searches full-text instead and answers `{"note": "<why>", "hits": [...]}` in its one text
//! block: many clients show only the first block, so a note in a second one went unseen, and an
//! answer that silently changes its meaning is worse than one that changes its shape. A caller
//! that asks for `fts` (or leaves `mode` out without a provider) always gets the plain array.
//!
//! A full-text search and a browse, and every call once the process knows it has no embedding
//! provider, are answered on a stdio session's reader thread (`mcp`'s `handlers_never_wait`); a
//! call that may call the provider over the network (a save, a vector or hybrid search, while a
//! provider exists or is still being resolved) is served off it.
//!
//! Must never: touch SQL (the store does), or let an argument widen a bound scope.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::binding::MemoryBinding;
use crate::mcp::{Annotations, DomainError, Prompt, Reply, Server, Tool, ToolResult};
use crate::memory::{
    EmbedConfig, Embedder, Entry, Fact, Memory, MemoryError, NewFact, Procedure, ReadScope,
    SearchHit, SearchMode, TeamView, WriteScope,
};

/// The server's `serverInfo.name`.
pub const SERVER_NAME: &str = "clawboo-memory";

/// How many results a search or browse returns when the caller sets no limit.
const DEFAULT_LIMIT: u32 = 10;

/// The scope a save gets on a bound connection: the bound team and tenant, no agent (saves are
/// team-shared, so every teammate recalls them).
fn bound_write_scope(bound: &MemoryBinding) -> WriteScope {
    WriteScope {
        team_id: bound.team_id.clone(),
        agent_id: None,
        tenant_id: bound.tenant_id.clone(),
    }
}

/// What a bound connection reads: its team's (global only without a team), its agent's and its
/// tenant's entries.
fn bound_read_scope(bound: &MemoryBinding) -> ReadScope {
    ReadScope {
        team: bound
            .team_id
            .clone()
            .map_or(TeamView::GlobalOnly, TeamView::Team),
        agent: bound.agent_id.clone(),
        tenant: bound.tenant_id.clone(),
    }
}

/// Where a memory server gets its embeddings ([`crate::memory_server`]). Cheap to clone: clones
/// share one resolution, so a host building a server per session probes the providers once.
#[derive(Debug, Clone)]
pub struct Embeddings(Option<Arc<Embedder>>);

impl Embeddings {
    /// No embeddings: every search is full-text (asked for `vector` or `hybrid`, a search says so).
    pub fn off() -> Self {
        Self(None)
    }

    /// What the `clawboo-mcp-memory` bin uses: Ollama (`OLLAMA_HOST`) when it answers and has the
    /// model, else OpenAI when `OPENAI_API_KEY` is set, else none (`CLAWBOO_EMBEDDINGS=off` turns
    /// them off). The probe starts now on a background thread; the first server built waits for
    /// it (1.5 s at most).
    pub fn from_env() -> Self {
        Self(Some(Arc::new(Embedder::resolve_in_background(
            EmbedConfig::from_env(),
        ))))
    }

    /// An embedder with the resolved provider, for one server.
    pub(crate) fn embedder(&self) -> Embedder {
        match &self.0 {
            Some(shared) => Embedder::with(shared.provider().cloned()),
            None => Embedder::none(),
        }
    }
}

/// The state behind the memory tools.
pub struct MemoryState {
    memory: Memory,
    bound: Option<MemoryBinding>,
}

impl MemoryState {
    fn write_scope(&self, args: &ScopeArgs) -> WriteScope {
        match &self.bound {
            Some(bound) => bound_write_scope(bound),
            None => WriteScope::new(
                args.scope_team_id.as_deref(),
                args.scope_agent_id.as_deref(),
                None,
            ),
        }
    }

    fn read_scope(&self, args: &ScopeArgs) -> ReadScope {
        match &self.bound {
            Some(bound) => bound_read_scope(bound),
            None => ReadScope::new(
                args.scope_team_id.as_deref(),
                args.scope_agent_id.as_deref(),
                None,
            ),
        }
    }
}

/// A tool-error of the memory server.
/// Wire: reference (keep the text; detail may only be appended).
#[derive(Debug, thiserror::Error)]
pub enum MemoryToolError {
    /// A fact save without a title.
    #[error("a fact requires a title (or set procedureName for a procedure)")]
    MissingTitle,
    /// The store refused or failed.
    #[error(transparent)]
    Store(#[from] MemoryError),
}

impl DomainError for MemoryToolError {}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct ScopeArgs {
    /// The team scope (ignored when the connection is bound). On a search or browse, "" means
    /// global entries only.
    scope_team_id: Option<String>,
    /// The agent scope (ignored when the connection is bound).
    scope_agent_id: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct SaveArgs {
    /// The fact or procedure text. Secrets in it are replaced by [REDACTED] before it is stored.
    content: String,
    /// Required for a fact.
    title: Option<String>,
    /// Labels for a fact.
    tags: Option<Vec<String>>,
    /// Set to save a new version of this procedure instead of a fact.
    procedure_name: Option<String>,
    #[serde(flatten)]
    scope: ScopeArgs,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct SearchArgs {
    /// Words to look for.
    query: String,
    /// fts, vector or hybrid (default: hybrid with an embedding provider, else fts).
    mode: Option<SearchMode>,
    /// At most this many results (1..100, default 10).
    #[schemars(range(min = 1, max = 100))]
    limit: Option<u32>,
    #[serde(flatten)]
    scope: ScopeArgs,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct BrowseArgs {
    /// At most this many entries (1..200, default 10).
    #[schemars(range(min = 1, max = 200))]
    limit: Option<u32>,
    #[serde(flatten)]
    scope: ScopeArgs,
}

/// `memory_save`'s answer.
#[derive(Serialize, JsonSchema)]
#[serde(tag = "saved", rename_all = "lowercase")]
enum Saved {
    Fact { fact: Fact },
    Procedure { procedure: Procedure },
}

fn memory_save(s: &MemoryState, a: SaveArgs) -> ToolResult {
    let scope = s.write_scope(&a.scope);
    let saved = match a.procedure_name.as_deref().filter(|n| !n.trim().is_empty()) {
        Some(name) => Saved::Procedure {
            procedure: s
                .memory
                .save_procedure(name, &a.content, &scope)
                .map_err(MemoryToolError::from)?,
        },
        None => {
            let title = a
                .title
                .as_deref()
                .filter(|t| !t.trim().is_empty())
                .ok_or(MemoryToolError::MissingTitle)?;
            let tags = a.tags.unwrap_or_default();
            let new = NewFact {
                title,
                content: &a.content,
                tags: &tags,
            };
            Saved::Fact {
                fact: s
                    .memory
                    .save_fact(&new, &scope)
                    .map_err(MemoryToolError::from)?,
            }
        }
    };
    Ok(Reply::json(&saved))
}

/// `memory_search`'s answer: the hits, best first, or, when the search could not be done the way
/// it was asked, why and what full-text found.
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
enum SearchAnswer {
    /// The search ran as asked.
    Hits(Vec<SearchHit>),
    /// It ran full-text instead.
    Degraded {
        /// Why.
        note: String,
        /// What full-text found.
        hits: Vec<SearchHit>,
    },
}

fn memory_search(s: &MemoryState, a: SearchArgs) -> ToolResult {
    let scope = s.read_scope(&a.scope);
    let outcome = s
        .memory
        .search(&a.query, a.mode, a.limit.unwrap_or(DEFAULT_LIMIT), &scope)
        .map_err(MemoryToolError::from)?;
    Ok(Reply::json(&match outcome.degraded {
        Some(note) => SearchAnswer::Degraded {
            note,
            hits: outcome.hits,
        },
        None => SearchAnswer::Hits(outcome.hits),
    }))
}

fn memory_browse(s: &MemoryState, a: BrowseArgs) -> ToolResult {
    let scope = s.read_scope(&a.scope);
    let entries = s
        .memory
        .browse(a.limit.unwrap_or(DEFAULT_LIMIT), &scope)
        .map_err(MemoryToolError::from)?;
    Ok(Reply::json(&entries))
}

/// Builds the memory server over `memory`. With `bound`, the scope arguments are ignored (see the
/// module documentation).
pub fn build(memory: Memory, bound: Option<MemoryBinding>) -> Server<MemoryState> {
    // Annotations (mcp::annotations says what each word means): the store is this install's own
    // database, and an embedding provider is how it indexes, not a world the tools act on: no tool
    // is open-world.
    Server::builder(SERVER_NAME, MemoryState { memory, bound })
        // Every handler is a few statements on this process's connection, but one that may call
        // the embedding provider (over the network), which says so.
        .handlers_never_wait()
        .tool(
            Tool::new(
                "memory_save",
                "Save a durable fact (title + content) or a versioned procedure (set procedureName). Facts are declarative (\"user prefers X\"), not instructions. Secrets are replaced by [REDACTED] before anything is stored; content that is nothing but secrets is refused.",
                memory_save,
            )
            // Adds a fact, or a new version of a procedure (older versions stay); each call adds
            // another.
            .annotations(Annotations::additive("Save a memory"))
            // A fact is embedded when there is a provider.
            .waits_when(|s: &MemoryState, _| !s.memory.surely_without_provider())
            .output::<Saved>(),
        )
        .tool(
            Tool::new(
                "memory_search",
                "Search saved facts and procedures. mode: fts (default without an embedding provider) | vector | hybrid (default with one). Answers a JSON array of hits; each cites an id and says its kind (fact or procedure). Asked for vector or hybrid without an embedding provider, it searches full-text and answers {\"note\", \"hits\"} instead, the note saying so.",
                memory_search,
            )
            // Reads only.
            .annotations(Annotations::read_only("Search memories"))
            // Any mode but full-text embeds the query when there is a provider.
            .waits_when(|s: &MemoryState, args| {
                let full_text = args.and_then(|a| a.get("mode")?.as_str()) == Some("fts");
                !full_text && !s.memory.surely_without_provider()
            })
            .output::<SearchAnswer>(),
        )
        .tool(
            Tool::new(
                "memory_browse",
                "List recent saved facts and procedures (scoped), newest first.",
                memory_browse,
            )
            // Reads only.
            .annotations(Annotations::read_only("Browse memories"))
            .output::<Vec<Entry>>(),
        )
        .prompt(Prompt::new(
            "auto-memory",
            "The shared facts most relevant to a task, as a bounded <auto-memory> block to put in front of the agent that runs it (empty when none applies).",
            vec![
                ("title", "The task's title.", true),
                ("description", "The task's description.", false),
                (
                    "scopeTeamId",
                    "The task's team (ignored when the connection is bound; unset or blank: global facts only).",
                    false,
                ),
                (
                    "scopeAgentId",
                    "The agent that runs the task (ignored when the connection is bound).",
                    false,
                ),
            ],
            |s: &MemoryState, args| {
                let text = |k: &str| args.get(k).and_then(|v| v.as_str());
                let scope = match &s.bound {
                    Some(bound) => bound_read_scope(bound),
                    None => ReadScope::new(
                        Some(text("scopeTeamId").unwrap_or("")),
                        text("scopeAgentId"),
                        None,
                    ),
                };
                Ok(s.memory.auto_memory(
                    text("title").unwrap_or(""),
                    text("description").unwrap_or(""),
                    &scope,
                ))
            },
        ))
        .build()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::db::Db;
    use crate::memory::{Embedder, Provider};

    /// Whether `server` answers a call of `tool` with `arguments` on a stdio session's reader.
    fn inline(server: &Server<MemoryState>, tool: &str, arguments: serde_json::Value) -> bool {
        server.answers_inline_json(json!({ "name": tool, "arguments": arguments }))
    }

    #[test]
    fn only_calls_that_may_reach_the_embedding_provider_leave_the_reader() {
        let store = |embedder| build(Memory::new(Db::open_in_memory().unwrap(), embedder), None);
        let without = store(Embedder::none());
        let with = store(Embedder::with(Some(Provider::Ollama {
            base: "http://127.0.0.1:9".into(),
            model: "nomic-embed-text".into(),
        })));
        let fts = json!({"query": "deploy", "mode": "fts"});
        let hybrid = json!({"query": "deploy", "mode": "hybrid"});
        let unsaid = json!({"query": "deploy"});
        let save = json!({"title": "t", "content": "c"});
        for server in [&without, &with] {
            assert!(inline(server, "memory_search", fts.clone()));
            assert!(inline(server, "memory_browse", json!({})));
        }
        for (arguments, tool) in [(hybrid, "memory_search"), (unsaid, "memory_search")] {
            assert!(inline(&without, tool, arguments.clone()));
            assert!(!inline(&with, tool, arguments));
        }
        assert!(inline(&without, "memory_save", save.clone()));
        assert!(!inline(&with, "memory_save", save));
    }
}
