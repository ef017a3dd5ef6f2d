//! The ClawBrain server (`clawbrain`, seed 002): `memory_store`, `memory_retrieve`,
//! `memory_search`, `memory_update`, `memory_delete`, `credit_report`, `memory_compact`, and
//! `memory_feedback`, which closes the credit loop, over a [`crate::clawbrain::Brain`] vault.
//!
//! Owns: argument types, the tool descriptions (the reference's literals) and nothing else: every
//! output key and error text comes from the brain. `type: null` in a search means all types (spec
//! §0 [REC]). Argument errors use this project's one text (`invalid args: <field>: …`), not the
//! reference SDK's `MCP error -32602 …`.
//!
//! Must never: touch files or SQL (the brain does).

use schemars::JsonSchema;
use serde::Deserialize;

use crate::clawbrain::{Brain, BrainError, MemoryType, NewMemory, Signal};
use crate::mcp::{DomainError, Reply, Server, Tool, ToolResult};

/// The server's `serverInfo.name`.
pub const SERVER_NAME: &str = "clawbrain";

impl DomainError for BrainError {}

/// Why a ClawBrain vault could not be opened ([`crate::clawbrain_server`]): its text says what and
/// where. Wire: ours (a library error, never a tool-error).
#[derive(Debug, thiserror::Error)]
#[error("cannot open the ClawBrain vault: {0}")]
pub struct ClawBrainError(#[from] BrainError);

#[derive(Deserialize, JsonSchema)]
struct StoreArgs {
    /// `entity` for durable facts, `episode` for interaction summaries.
    #[serde(rename = "type")]
    kind: MemoryType,
    /// For entities: e.g. `people`, `projects`, `preferences` (kebab-case). Ignored for episodes
    /// (filed by month).
    category: Option<String>,
    /// Kebab-case identifier, e.g. `alice-chen`.
    name: String,
    /// Markdown content without frontmatter. Secrets are replaced by [REDACTED].
    content: String,
    /// Lowercase, hyphenated; used for consolidation grouping and search.
    tags: Option<Vec<String>>,
    /// If true, never pruned or archived.
    pinned: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
struct IdArgs {
    /// The memory id, e.g. `entity-people-alice-chen`.
    id: String,
}

#[derive(Deserialize, JsonSchema)]
struct SearchArgs {
    /// Matched against names, tags and content.
    query: String,
    /// Only this type; absent or null searches all.
    #[serde(rename = "type")]
    kind: Option<MemoryType>,
    /// Max results (default 5, max 20).
    limit: Option<f64>,
}

#[derive(Deserialize, JsonSchema)]
struct UpdateArgs {
    /// The memory id.
    id: String,
    /// The new markdown content (replaces the old; frontmatter is kept).
    content: String,
}

#[derive(Deserialize, JsonSchema)]
struct ReportArgs {
    /// How many top and bottom memories to list (default 10, max 100).
    top_n: Option<f64>,
}

#[derive(Deserialize, JsonSchema)]
struct CompactArgs {}

#[derive(Deserialize, JsonSchema)]
struct FeedbackArgs {
    /// How the memories returned by this session's latest search or retrieval turned out.
    signal: Signal,
}

fn json<T: serde::Serialize>(result: Result<T, BrainError>) -> ToolResult {
    Ok(Reply::json(&result?))
}

/// Builds the ClawBrain server over `brain`.
pub fn build(brain: Brain) -> Server<Brain> {
    Server::builder(SERVER_NAME, brain)
        .tool(Tool::new(
            "memory_store",
            "Store a memory entry as entity or episode.",
            |b: &Brain, a: StoreArgs| {
                let tags = a.tags.unwrap_or_default();
                json(b.store(&NewMemory {
                    kind: a.kind,
                    category: a.category.as_deref(),
                    name: &a.name,
                    content: &a.content,
                    tags: &tags,
                    pinned: a.pinned.unwrap_or(false),
                }))
            },
        ))
        .tool(Tool::new(
            "memory_retrieve",
            "Retrieve a memory by ID.",
            |b: &Brain, a: IdArgs| json(b.retrieve(&a.id)),
        ))
        .tool(Tool::new(
            "memory_search",
            "Search memories with credit-weighted ranking.",
            |b: &Brain, a: SearchArgs| json(b.search(&a.query, a.kind, a.limit)),
        ))
        .tool(Tool::new(
            "memory_update",
            "Update existing memory content.",
            |b: &Brain, a: UpdateArgs| json(b.update(&a.id, &a.content)),
        ))
        .tool(Tool::new(
            "memory_delete",
            "Archive a memory entry.",
            |b: &Brain, a: IdArgs| json(b.delete(&a.id)),
        ))
        .tool(Tool::new(
            "credit_report",
            "Report current memory credit statistics.",
            |b: &Brain, a: ReportArgs| json(b.credit_report(a.top_n)),
        ))
        .tool(Tool::new(
            "memory_compact",
            "Run consolidation, promotion, and pruning.",
            |b: &Brain, _: CompactArgs| json(b.compact()),
        ))
        .tool(Tool::new(
            "memory_feedback",
            "Report how the memories from this session's latest search or retrieval worked out: task_completed, positive_feedback, tool_success, user_correction or session_abandoned. Their credit scores move accordingly (EMA, kept within 0..1).",
            |b: &Brain, a: FeedbackArgs| json(b.feedback(a.signal, None)),
        ))
        .build()
}
