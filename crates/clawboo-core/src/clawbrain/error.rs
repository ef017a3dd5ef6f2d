//! ClawBrain's one error type: every refusal and failure of a vault operation, whose text is the
//! tool-error a client reads (spec §8).
//!
//! Owns: [`BrainError`] and its texts, each tagged with whose contract it is. Guarantees: a
//! file-system error names the file by its last two path segments, never the machine's path.
//! Must never: carry a memory's content or a secret in its text.

use std::path::Path;

/// An error of ClawBrain; its text is the tool-error text (spec §8).
/// Wire: reference (keep the text; detail may only be appended).
#[derive(Debug, thiserror::Error)]
pub enum BrainError {
    /// An entity without a category.
    #[error("category is required when type is entity")]
    CategoryRequired,
    /// A live file already holds that path.
    #[error("Memory already exists at {0}. Use update instead.")]
    Exists(String),
    /// No live memory has that id.
    #[error("Memory not found: {0}")]
    NotFound(String),
    /// Pinned memories are never archived.
    #[error("Cannot archive pinned memory: {0}")]
    Pinned(String),
    /// A frontmatter error (the reference's text).
    #[error("{0}")]
    Frontmatter(&'static str),
    /// `type` is neither `entity` nor `episode`.
    #[error("Invalid memory type: {0}")]
    InvalidType(String),
    /// A file of the vault could not be read as a memory.
    #[error("{message} ({path})")]
    BadFile {
        /// The reference's error text.
        message: String,
        /// The file, relative to the root.
        path: String,
    },
    /// A `name` or `category` that is not kebab-case.
    /// Wire: ours.
    #[error(
        "{field} must be kebab-case (lowercase letters and digits joined by single hyphens, e.g. alice-chen), got \"{value}\""
    )]
    BadSegment {
        /// `name` or `category`.
        field: &'static str,
        /// The value, shortened and escaped.
        value: String,
    },
    /// A name or category that the secret scrubber would mask.
    /// Wire: ours.
    #[error("{0} looks like a secret; choose a name that is not a credential")]
    SecretSegment(&'static str),
    /// A bad tag.
    /// Wire: ours.
    #[error("tags[{index}] {reason}")]
    BadTag {
        /// Its position.
        index: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// Content that held nothing but secrets.
    /// Wire: ours.
    #[error("content is nothing but secrets ([REDACTED]); nothing was stored")]
    OnlySecrets,
    /// A folder on the way is a symlink or not a folder.
    /// Wire: ours.
    #[error("refusing to write {0}: a folder on the way is a symlink or not a folder")]
    UnsafePath(String),
    /// A file-system error.
    #[error("{0}")]
    Io(String),
    /// An `engine.db` error.
    #[error("engine.db: {0}")]
    Db(#[from] rusqlite::Error),
    /// A bad `signal` for the operator command.
    /// Wire: ours.
    #[error(
        "signal must be one of task_completed, positive_feedback, tool_success, user_correction, session_abandoned, got \"{0}\""
    )]
    BadSignal(String),
}

impl BrainError {
    /// A file-system error naming the file (its last two path segments, never the machine path).
    pub(super) fn io(path: &Path, e: std::io::Error) -> Self {
        let tail: Vec<String> = path
            .iter()
            .rev()
            .take(2)
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        let shown: Vec<&str> = tail.iter().rev().map(String::as_str).collect();
        Self::Io(format!("{e}: {}", shown.join("/")))
    }
}
