//! The types of ClawBrain's operations: what they are given ([`MemoryType`], [`Signal`],
//! [`NewMemory`]) and what they answer (one serialized struct per tool, keys and order as the
//! seed and the reference name them).
//!
//! Owns: the wire names of types and signals and the signals' rewards. Guarantees: an unknown
//! signal is a [`BrainError::BadSignal`] naming at most 40 characters of it. Must never: touch the
//! vault or `engine.db` (the operations in the sibling modules do).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{BrainError, Moved};

/// `entity` (a durable fact) or `episode` (an interaction summary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MemoryType {
    /// A durable fact about a person, project or preference.
    Entity,
    /// A summary of an interaction, filed by month.
    Episode,
}

impl MemoryType {
    /// The wire and frontmatter text.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Entity => "entity",
            Self::Episode => "episode",
        }
    }

    /// Reads the frontmatter text.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "entity" => Some(Self::Entity),
            "episode" => Some(Self::Episode),
            _ => None,
        }
    }
}

/// An outcome a runtime reports about the memories it was last given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// The task succeeded (+0.5).
    TaskCompleted,
    /// The user said it was good (+0.3).
    PositiveFeedback,
    /// A tool call worked (+0.1).
    ToolSuccess,
    /// The user corrected the agent (−0.4).
    UserCorrection,
    /// The session was given up (−0.2).
    SessionAbandoned,
}

impl Signal {
    /// Every signal.
    pub const ALL: [Signal; 5] = [
        Self::TaskCompleted,
        Self::PositiveFeedback,
        Self::ToolSuccess,
        Self::UserCorrection,
        Self::SessionAbandoned,
    ];

    /// The reference's reward.
    pub fn reward(self) -> f64 {
        match self {
            Self::TaskCompleted => 0.5,
            Self::PositiveFeedback => 0.3,
            Self::ToolSuccess => 0.1,
            Self::UserCorrection => -0.4,
            Self::SessionAbandoned => -0.2,
        }
    }

    /// The wire text.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TaskCompleted => "task_completed",
            Self::PositiveFeedback => "positive_feedback",
            Self::ToolSuccess => "tool_success",
            Self::UserCorrection => "user_correction",
            Self::SessionAbandoned => "session_abandoned",
        }
    }

    /// Reads the wire text.
    pub fn parse(text: &str) -> Result<Self, BrainError> {
        Self::ALL
            .into_iter()
            .find(|s| s.as_str() == text)
            .ok_or_else(|| BrainError::BadSignal(text.chars().take(40).collect()))
    }
}

/// What `memory_store` is given.
#[derive(Debug, Clone)]
pub struct NewMemory<'a> {
    /// Entity or episode.
    pub kind: MemoryType,
    /// Required for an entity; ignored for an episode.
    pub category: Option<&'a str>,
    /// The kebab-case name (an episode's slug).
    pub name: &'a str,
    /// Markdown body.
    pub content: &'a str,
    /// Tags.
    pub tags: &'a [String],
    /// Never pruned or archived.
    pub pinned: bool,
}

/// `memory_store`'s answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Stored {
    /// The new id.
    pub id: String,
    /// The file, relative to the root.
    pub path: String,
    /// Always true.
    pub created: bool,
}

/// `memory_retrieve`'s answer: the seed's keys, then the reference's extra ones.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Retrieved {
    /// Id.
    pub id: String,
    /// Type.
    #[serde(rename = "type")]
    pub kind: MemoryType,
    /// Category.
    pub category: String,
    /// Name (the file's basename).
    pub name: String,
    /// The file, relative to the root.
    pub path: String,
    /// The body.
    pub content: String,
    /// Tags.
    pub tags: Vec<String>,
    /// Credit score.
    pub credit_score: f64,
    /// Retrievals and outcomes so far, this one included.
    pub access_count: i64,
    /// The frontmatter `created`.
    pub created_at: String,
    /// Now.
    pub last_accessed: String,
    /// The frontmatter `created` (reference key).
    pub created: String,
    /// The frontmatter `updated` (reference key).
    pub updated: String,
    /// Pinned.
    pub pinned: bool,
}

/// One search result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SearchHit {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Type.
    #[serde(rename = "type")]
    pub kind: MemoryType,
    /// The first 180 UTF-16 units of the body.
    pub snippet: String,
    /// Credit score.
    pub credit_score: f64,
    /// 1.0 name, 0.8 tag, 0.5 content.
    pub relevance_score: f64,
    /// `relevance·0.4 + credit·0.6`.
    pub combined_score: f64,
}

/// `memory_search`'s answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SearchOutcome {
    /// The page.
    pub results: Vec<SearchHit>,
    /// Every match after the type filter.
    pub total_matches: usize,
}

/// The contradiction check of an entity update (reference shape, camelCase).
#[derive(Debug, Clone, Serialize, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Contradiction {
    /// Whether a peer disagrees.
    pub has_contradiction: bool,
    /// The first disagreeing peer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflicting_id: Option<String>,
    /// What to do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
}

/// `memory_update`'s answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Updated {
    /// Id.
    pub id: String,
    /// Always true.
    pub updated: bool,
    /// The `updated` the file had before.
    pub previous_updated_at: String,
    /// Entities only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contradiction: Option<Contradiction>,
}

/// `memory_delete`'s answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Archived {
    /// Id.
    pub id: String,
    /// Always true.
    pub archived: bool,
    /// Where the file went.
    pub archive_path: String,
}

/// One row of the credit report.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReportRow {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Score.
    pub score: f64,
    /// Access count.
    pub access_count: i64,
}

/// `credit_report`'s answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CreditReport {
    /// Live memories with a credit row.
    pub total_memories: usize,
    /// Their mean score (0 when none).
    pub avg_score: f64,
    /// Highest first.
    pub top: Vec<ReportRow>,
    /// Lowest first.
    pub bottom: Vec<ReportRow>,
    /// What pruning would archive now.
    pub prune_candidates: usize,
    /// Newest `consolidate` log row.
    pub last_consolidation: Option<String>,
    /// Newest `prune` log row.
    pub last_pruning: Option<String>,
}

/// `memory_feedback`'s answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Feedback {
    /// The signal.
    pub signal: Signal,
    /// The session whose turn it resolved.
    pub session_id: String,
    /// The resolved turn (`null` when the session had no open turn: nothing changed).
    pub turn_id: Option<i64>,
    /// Every memory it moved.
    pub updated: Vec<Moved>,
}
