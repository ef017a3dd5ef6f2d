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

use crate::clawbrain::lifecycle::CompactReport;
use crate::clawbrain::{
    Archived, Brain, BrainError, CreditReport, Feedback, MemoryType, NewMemory, Retrieved,
    SearchOutcome, Signal, Stored, Updated,
};
use crate::mcp::{Annotations, DomainError, Reply, Server, Tool, ToolResult};

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
///
/// Annotations (`mcp::annotations` says what each word means): the vault is this install's own
/// folder, so no tool is open-world. A retrieval or search is not read-only: it records the turn
/// the next `memory_feedback` resolves and counts an access on every memory it returns (only
/// adding; a repeat counts again).
pub fn build(brain: Brain) -> Server<Brain> {
    Server::builder(SERVER_NAME, brain)
        .tool(
            Tool::new(
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
            )
            // Adds a file (an existing one is refused, never overwritten). Not idempotent: an
            // episode is filed by month, so the same call next month stores another.
            .annotations(Annotations::additive("Store a memory"))
            .output::<Stored>(),
        )
        .tool(
            Tool::new(
                "memory_retrieve",
                "Retrieve a memory by ID.",
                |b: &Brain, a: IdArgs| json(b.retrieve(&a.id)),
            )
            // Records the turn and counts the access (see above).
            .annotations(Annotations::additive("Retrieve a memory"))
            .output::<Retrieved>(),
        )
        .tool(
            Tool::new(
                "memory_search",
                "Search memories with credit-weighted ranking.",
                |b: &Brain, a: SearchArgs| json(b.search(&a.query, a.kind, a.limit)),
            )
            // Records the turn and counts the accesses (see above).
            .annotations(Annotations::additive("Search memories"))
            .output::<SearchOutcome>(),
        )
        .tool(
            Tool::new(
                "memory_update",
                "Update existing memory content.",
                |b: &Brain, a: UpdateArgs| json(b.update(&a.id, &a.content)),
            )
            // Replaces the body; the same content again leaves the same body.
            .annotations(Annotations::destructive("Update a memory").idempotent())
            .output::<Updated>(),
        )
        .tool(
            Tool::new(
                "memory_delete",
                "Archive a memory entry.",
                |b: &Brain, a: IdArgs| json(b.delete(&a.id)),
            )
            // Moves the file out of the live vault; a repeat finds nothing to archive.
            .annotations(Annotations::destructive("Archive a memory").idempotent())
            .output::<Archived>(),
        )
        .tool(
            Tool::new(
                "credit_report",
                "Report current memory credit statistics.",
                |b: &Brain, a: ReportArgs| json(b.credit_report(a.top_n)),
            )
            // Reads only.
            .annotations(Annotations::read_only("Credit report"))
            .output::<CreditReport>(),
        )
        .tool(
            Tool::new(
                "memory_compact",
                "Run consolidation, promotion, and pruning.",
                |b: &Brain, _: CompactArgs| json(b.compact()),
            )
            // Merges, promotes and archives memories, and decays scores again on every run.
            .annotations(Annotations::destructive("Compact the vault"))
            .output::<CompactReport>(),
        )
        .tool(
            Tool::new(
                "memory_feedback",
                "Report how the memories from this session's latest search or retrieval worked out: task_completed, positive_feedback, tool_success, user_correction or session_abandoned. Their credit scores move accordingly (EMA, kept within 0..1).",
                |b: &Brain, a: FeedbackArgs| json(b.feedback(a.signal, None)),
            )
            // Moves credit scores, as every later outcome will again, and removes nothing; a
            // repeat resolves the next older open turn, so it is not idempotent.
            .annotations(Annotations::additive("Give feedback on memories"))
            .output::<Feedback>(),
        )
        .build()
}
