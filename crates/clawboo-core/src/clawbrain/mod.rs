//! ClawBrain: the credit-weighted memory of seed 002, a vault of markdown files with frontmatter
//! (`entities/<category>/<name>.md`, `episodes/<YYYY-MM>/<slug>.md`, `archive/…`, `MEMORY.md`,
//! `STRATEGY.md`) beside an `engine.db` of credit tables, laid out exactly as the reference
//! (`nanobrain`) lays them out, so either implementation serves a vault the other wrote.
//!
//! Owns: the vault root and its `engine.db` ([`Brain`]); store, retrieve, search, update, archive,
//! the credit report, outcome feedback, decay, and the lifecycle (`lifecycle`), `MEMORY.md`
//! (`digest`).
//!
//! Decisions where the seed and the reference differ (spec [GAP]s, following its [REC]s):
//! - names and categories must be kebab-case; a hostile one is a tool-error, never a path;
//! - retrieval increments `access_count` and `last_accessed` (seed); search records a turn only;
//! - outcomes ([`Brain::feedback`]) apply the reference's EMA clamped to [0, 1];
//! - decay is by days since last access (or since the row was last decayed), at least one whole
//!   day at a time, run by compact and by the operator command; a `decay` row is logged;
//! - `total_matches` is the true count of matches after the type filter, not the page size;
//!   every match is ranked by `relevance·0.4 + credit·0.6`, ties by BM25 then path (the
//!   reference cuts a relevance pool first);
//! - archiving keeps the credit row (its `credit_events` reference it), but the report, pruning
//!   and `MEMORY.md` count live memories only, as the seed's "removed from the active table" says;
//! - `STRATEGY.md` knobs are honoured (`lifecycle::Strategy`); `lifecycle_log` records
//!   `consolidate`, `promote`, `prune` and `decay`; pinned episodes are never merged;
//! - content and tags go through [`crate::scrub`] before they are written;
//! - walk order is sorted paths; hidden entries, symlinks and `archive/` are never walked;
//! - a malformed `.md` file fails every tool that reads the vault with the reference's text and
//!   the file's path; CRLF and a BOM are accepted;
//! - readers (retrieve, search, update, delete, report, compact) first re-index the files whose
//!   stamp (mtime, size, inode) changed, so a hand edit is seen by the next call; `memory_store`,
//!   feedback and decay touch only what they name and do not walk the vault (the `MEMORY.md` they
//!   regenerate reflects the index as of the last reader).
//!
//! Guarantees: every operation that writes runs under `BEGIN IMMEDIATE` on `engine.db`, which
//! serialises the vault's writers across processes; files are written atomically; an error leaves
//! the index as it was (the next call re-reads what changed on disk).
//! Must never: write outside the root, or store a secret the scrubber recognises.

mod digest;
mod engine;
mod frontmatter;
pub mod lifecycle;
mod time;
mod vault;
mod watch;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::Connection;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::db::Clock;
use crate::scrub;
use engine::{FileRow, RowDefaults};
use frontmatter::Frontmatter;
use vault::Stamp;

pub use engine::Moved;
pub use lifecycle::Strategy;

/// The default session when `SESSION_ID` is unset (the reference host uses the same).
pub const DEFAULT_SESSION: &str = "local-session";

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
    fn io(path: &Path, e: std::io::Error) -> Self {
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
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Stored {
    /// The new id.
    pub id: String,
    /// The file, relative to the root.
    pub path: String,
    /// Always true.
    pub created: bool,
}

/// `memory_retrieve`'s answer: the seed's keys, then the reference's extra ones.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SearchOutcome {
    /// The page.
    pub results: Vec<SearchHit>,
    /// Every match after the type filter.
    pub total_matches: usize,
}

/// The contradiction check of an entity update (reference shape, camelCase).
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Archived {
    /// Id.
    pub id: String,
    /// Always true.
    pub archived: bool,
    /// Where the file went.
    pub archive_path: String,
}

/// One row of the credit report.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
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

/// How an operation brings the index up to date with the files first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refresh {
    /// Re-index what changed; a malformed file is an error (every reader).
    Strict,
    /// Nothing: the operation reads no memory but the ones it names by path or id in the
    /// credit tables (store, feedback, decay), so it stays O(1) in the vault's size.
    Skip,
}

/// What a sync found on disk and what an operation wrote, applied to the in-process stamp cache
/// only once the transaction commits.
#[derive(Default)]
struct Delta {
    seen: Vec<(String, Stamp)>,
    gone: Vec<String>,
}

/// The vault: its root, `engine.db`, and the session retrievals are recorded under.
pub struct Brain {
    root: PathBuf,
    session: String,
    conn: Mutex<Connection>,
    known: Mutex<Option<HashMap<String, Stamp>>>,
    /// Tells a read whether the vault may have changed since the last walk.
    watch: watch::Watch,
    /// A change was seen (or nothing was walked yet) and no walk has committed since.
    stale: std::sync::atomic::AtomicBool,
    clock: Clock,
}

impl std::fmt::Debug for Brain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Brain")
            .field("root", &self.root)
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

/// The vault root named by `MEMORY_DIR` (blank is unset), else `<cwd>/memory`.
pub fn root_from_env() -> PathBuf {
    crate::binding::env_value("MEMORY_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::current_dir()
                .unwrap_or_else(|_| PathBuf::from("."))
                .join("memory")
        })
}

/// The session named by `SESSION_ID` (blank is unset), else [`DEFAULT_SESSION`].
pub fn session_from_env() -> String {
    crate::binding::env_value("SESSION_ID").unwrap_or_else(|| DEFAULT_SESSION.to_owned())
}

/// The first 180 UTF-16 units of `body`.
fn snippet(body: &str) -> String {
    let mut units = 0;
    body.chars()
        .take_while(|c| {
            units += c.len_utf16();
            units <= 180
        })
        .collect()
}

/// The reference's negation test: any of its words as a raw substring.
fn negated(text: &str) -> bool {
    let lower = text.to_lowercase();
    ["not", "never", "no", "cannot", "can't", "won't", "without"]
        .iter()
        .any(|w| lower.contains(w))
}

impl Brain {
    /// Opens the vault at `root` (created if missing) and its `engine.db`.
    pub fn open(root: &Path, session: &str) -> Result<Self, BrainError> {
        std::fs::create_dir_all(root).map_err(|e| BrainError::io(root, e))?;
        let conn = engine::open(&root.join("engine.db"))?;
        Ok(Self {
            root: root.to_path_buf(),
            session: session.to_owned(),
            conn: Mutex::new(conn),
            known: Mutex::new(None),
            watch: watch::Watch::new(),
            stale: std::sync::atomic::AtomicBool::new(true),
            clock: Clock::system(),
        })
    }

    /// Replaces the clock (a test moves a [`Clock::manual`] instead of sleeping).
    #[cfg(test)]
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    fn now(&self) -> (i64, String) {
        let ms = self.clock.now_ms();
        (ms, time::iso(ms))
    }

    fn strategy(&self) -> Strategy {
        Strategy::load(&self.root)
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `op` inside `BEGIN IMMEDIATE`, after bringing the index up to date with the files
    /// when `refresh` says so.
    fn in_vault<T>(
        &self,
        refresh: Refresh,
        op: impl FnOnce(&Connection, &mut Delta) -> Result<T, BrainError>,
    ) -> Result<T, BrainError> {
        let conn = self.conn();
        let mut known = self.known.lock().unwrap_or_else(|p| p.into_inner());
        if known.is_none() {
            *known = Some(engine::stamps(&conn)?.into_iter().collect());
        }
        let cache = known.get_or_insert_with(HashMap::new);
        let mut delta = Delta::default();
        // The walk stats every file; the watch says when it can be skipped. A change stays owed
        // until a walk commits, so a read that fails (a malformed file) walks again next time.
        let walk = refresh == Refresh::Strict && {
            let changed = self.watch.changed();
            self.stale
                .fetch_or(changed, std::sync::atomic::Ordering::SeqCst)
                || changed
        };
        let value = crate::db::immediate(&conn, |tx| {
            if walk {
                self.sync(tx, cache, &mut delta)?;
            }
            op(tx, &mut delta)
        })?;
        if walk {
            self.stale.store(false, std::sync::atomic::Ordering::SeqCst);
        }
        for rel in delta.gone {
            cache.remove(&rel);
        }
        for (rel, stamp) in delta.seen {
            cache.insert(rel, stamp);
        }
        Ok(value)
    }

    /// Re-indexes every file whose stamp differs from the cache and drops vanished ones; a file
    /// that is not a memory is an error naming it.
    fn sync(
        &self,
        tx: &Connection,
        cache: &HashMap<String, Stamp>,
        delta: &mut Delta,
    ) -> Result<(), BrainError> {
        let files = vault::walk(&self.root, |dir| self.watch.folder(dir))
            .map_err(|e| BrainError::io(&self.root, e))?;
        let mut live = std::collections::HashSet::with_capacity(files.len());
        for (rel, stamp) in &files {
            live.insert(rel.as_str());
            if cache.get(rel) == Some(stamp) {
                continue;
            }
            let text = match vault::read(&self.root, rel) {
                Ok(text) => text,
                Err(_) if !vault::abs(&self.root, rel).exists() => continue,
                Err(e) => return Err(e),
            };
            match frontmatter::parse(&text) {
                Ok((fm, body)) => {
                    let row = FileRow {
                        name: rel
                            .rsplit('/')
                            .next()
                            .unwrap_or(rel)
                            .trim_end_matches(".md")
                            .to_owned(),
                        path: rel.clone(),
                        fm,
                        body,
                    };
                    engine::upsert_file(tx, &row, *stamp)?;
                    delta.seen.push((rel.clone(), *stamp));
                }
                Err(e) => {
                    return Err(BrainError::BadFile {
                        message: e.to_string(),
                        path: rel.clone(),
                    });
                }
            }
        }
        for rel in cache.keys().filter(|k| !live.contains(k.as_str())) {
            engine::remove_file(tx, rel)?;
            delta.gone.push(rel.clone());
        }
        Ok(())
    }

    fn row_defaults(strategy: &Strategy) -> RowDefaults {
        RowDefaults {
            score: strategy.initial_score,
            decay_rate: strategy.decay_rate,
        }
    }

    /// Scrubs and checks tags.
    fn clean_tags(tags: &[String]) -> Result<Vec<String>, BrainError> {
        tags.iter()
            .enumerate()
            .map(|(index, tag)| {
                let tag = scrub::scrub_secrets(tag.trim());
                if tag.is_empty() {
                    return Err(BrainError::BadTag {
                        index,
                        reason: "is empty",
                    });
                }
                if tag.chars().any(char::is_control) {
                    return Err(BrainError::BadTag {
                        index,
                        reason: "contains a control character",
                    });
                }
                Ok(tag)
            })
            .collect()
    }

    /// Scrubs content; refuses content that was nothing but secrets.
    fn clean_content(content: &str) -> Result<String, BrainError> {
        let scrubbed = scrub::scrub_secrets(content);
        if scrub::is_entirely_redacted(&scrubbed) {
            return Err(BrainError::OnlySecrets);
        }
        Ok(scrubbed.trim().to_owned())
    }

    /// Writes a new memory file and its credit row; `Exists` when a live file is there.
    #[allow(clippy::too_many_arguments)]
    fn write_new(
        &self,
        tx: &Connection,
        delta: &mut Delta,
        fm: Frontmatter,
        rel: String,
        name: &str,
        body: &str,
        defaults: RowDefaults,
        now: &str,
    ) -> Result<Stored, BrainError> {
        let text = frontmatter::render(&fm, body);
        let stamp = vault::create_new(&self.root, &rel, &text)?
            .ok_or_else(|| BrainError::Exists(rel.clone()))?;
        engine::ensure_record(tx, &fm.id, now, defaults)?;
        let row = FileRow {
            path: rel.clone(),
            name: name.to_owned(),
            body: body.trim().to_owned(),
            fm,
        };
        engine::upsert_file(tx, &row, stamp)?;
        delta.seen.push((rel.clone(), stamp));
        Ok(Stored {
            id: row.fm.id,
            path: rel,
            created: true,
        })
    }

    /// Replaces a live file's body, keeping its frontmatter and setting `updated`.
    fn rewrite(
        &self,
        tx: &Connection,
        delta: &mut Delta,
        mut row: FileRow,
        body: &str,
        now: &str,
    ) -> Result<FileRow, BrainError> {
        row.fm.updated = now.to_owned();
        row.body = body.trim().to_owned();
        let stamp = vault::replace(
            &self.root,
            &row.path,
            &frontmatter::render(&row.fm, &row.body),
        )?;
        engine::upsert_file(tx, &row, stamp)?;
        delta.seen.push((row.path.clone(), stamp));
        Ok(row)
    }

    /// Moves a live file to the archive and out of the index.
    fn archive_row(
        &self,
        tx: &Connection,
        delta: &mut Delta,
        row: &FileRow,
    ) -> Result<String, BrainError> {
        if row.fm.pinned {
            return Err(BrainError::Pinned(row.fm.id.clone()));
        }
        let archived = vault::archive(&self.root, &row.path)?;
        engine::remove_file(tx, &row.path)?;
        delta.gone.push(row.path.clone());
        Ok(archived)
    }

    fn live(tx: &Connection, id: &str) -> Result<FileRow, BrainError> {
        engine::file_by_id(tx, id)?.ok_or_else(|| BrainError::NotFound(id.to_owned()))
    }

    /// `memory_store`.
    pub fn store(&self, new: &NewMemory<'_>) -> Result<Stored, BrainError> {
        let (now_ms, now) = self.now();
        self.store_at(new, now_ms, &now)
    }

    fn store_at(&self, new: &NewMemory<'_>, at_ms: i64, now: &str) -> Result<Stored, BrainError> {
        for (field, value) in [("name", Some(new.name)), ("category", new.category)] {
            if value.is_some_and(|v| scrub::scrub_secrets(v) != v) {
                return Err(BrainError::SecretSegment(field));
            }
        }
        let (category, rel, id) = match new.kind {
            MemoryType::Entity => {
                let category = new
                    .category
                    .filter(|c| !c.is_empty())
                    .ok_or(BrainError::CategoryRequired)?;
                vault::check_segment("category", category)?;
                vault::check_segment("name", new.name)?;
                (
                    category.to_owned(),
                    format!("entities/{category}/{}.md", new.name),
                    format!("entity-{category}-{}", new.name),
                )
            }
            MemoryType::Episode => {
                vault::check_segment("name", new.name)?;
                let month = time::iso(at_ms)[..7].to_owned();
                let rel = format!("episodes/{month}/{}.md", new.name);
                let id = format!("episode-{month}-{}", new.name);
                (month, rel, id)
            }
        };
        let tags = Self::clean_tags(new.tags)?;
        let body = Self::clean_content(new.content)?;
        let stamp_iso = time::iso(at_ms);
        let fm = Frontmatter {
            id,
            kind: new.kind,
            category,
            tags,
            created: stamp_iso.clone(),
            updated: stamp_iso,
            pinned: new.pinned,
        };
        let strategy = self.strategy();
        self.in_vault(Refresh::Skip, |tx, delta| {
            let stored = self.write_new(
                tx,
                delta,
                fm,
                rel,
                new.name,
                &body,
                Self::row_defaults(&strategy),
                now,
            )?;
            self.write_digest(tx, &strategy)?;
            Ok(stored)
        })
    }

    /// `memory_retrieve`: records the turn, counts the access.
    pub fn retrieve(&self, id: &str) -> Result<Retrieved, BrainError> {
        let (_, now) = self.now();
        let strategy = self.strategy();
        self.in_vault(Refresh::Strict, |tx, _| {
            let row = Self::live(tx, id)?;
            engine::ensure_record(tx, &row.fm.id, &now, Self::row_defaults(&strategy))?;
            engine::touch(tx, &row.fm.id, &now)?;
            engine::record_turn(tx, &self.session, std::slice::from_ref(&row.fm.id), &now)?;
            let credit = engine::credit(tx, &row.fm.id)?;
            Ok(Retrieved {
                credit_score: credit.as_ref().map_or(strategy.initial_score, |c| c.score),
                access_count: credit.as_ref().map_or(1, |c| c.access_count),
                last_accessed: credit.map_or_else(|| now.clone(), |c| c.last_accessed),
                id: row.fm.id,
                kind: row.fm.kind,
                category: row.fm.category,
                name: row.name,
                path: row.path,
                content: row.body,
                tags: row.fm.tags,
                created_at: row.fm.created.clone(),
                created: row.fm.created,
                updated: row.fm.updated,
                pinned: row.fm.pinned,
            })
        })
    }

    /// `memory_search`: `limit` absent → 5, else floored and clamped to [1, 20].
    pub fn search(
        &self,
        query: &str,
        kind: Option<MemoryType>,
        limit: Option<f64>,
    ) -> Result<SearchOutcome, BrainError> {
        let limit = limit.map_or(5, |l| {
            if l.is_nan() {
                1
            } else {
                l.floor().clamp(1.0, 20.0) as usize
            }
        });
        let q = query.trim().to_lowercase();
        if q.is_empty() {
            return Ok(SearchOutcome {
                results: Vec::new(),
                total_matches: 0,
            });
        }
        let (_, now) = self.now();
        let strategy = self.strategy();
        self.in_vault(Refresh::Strict, |tx, _| {
            let mut ranked: Vec<(f64, f64, engine::Candidate)> = engine::matches(tx, &q, kind)?
                .into_iter()
                .map(|c| {
                    let relevance = if c.name_lc.contains(&q) {
                        1.0
                    } else if c.tags_lc.split('\n').any(|t| t.contains(&q)) {
                        0.8
                    } else {
                        0.5
                    };
                    (relevance, c.score.unwrap_or(strategy.initial_score), c)
                })
                .collect();
            let combined = |r: f64, s: f64| r * 0.4 + s * 0.6;
            ranked.sort_by(|a, b| {
                combined(b.0, b.1)
                    .total_cmp(&combined(a.0, a.1))
                    .then(a.2.bm25.total_cmp(&b.2.bm25))
                    .then_with(|| a.2.path.cmp(&b.2.path))
            });
            let mut seen = std::collections::HashSet::new();
            ranked.retain(|(_, _, c)| seen.insert(c.id.clone()));
            let total_matches = ranked.len();
            let mut results = Vec::new();
            for (relevance, credit, c) in ranked.into_iter().take(limit) {
                let (body, name, kind) = engine::body_of(tx, c.doc)?;
                engine::ensure_record(tx, &c.id, &now, Self::row_defaults(&strategy))?;
                results.push(SearchHit {
                    id: c.id,
                    name,
                    kind,
                    snippet: snippet(&body),
                    credit_score: credit,
                    relevance_score: relevance,
                    combined_score: combined(relevance, credit),
                });
            }
            let ids: Vec<String> = results.iter().map(|h| h.id.clone()).collect();
            engine::record_turn(tx, &self.session, &ids, &now)?;
            Ok(SearchOutcome {
                results,
                total_matches,
            })
        })
    }

    /// `memory_update`: new body, same frontmatter, `updated` = now; entities get the
    /// contradiction check against same-category peers that mention their name.
    pub fn update(&self, id: &str, content: &str) -> Result<Updated, BrainError> {
        let (_, now) = self.now();
        let scrubbed = scrub::scrub_secrets(content);
        if !content.trim().is_empty() && scrub::is_entirely_redacted(&scrubbed) {
            return Err(BrainError::OnlySecrets);
        }
        let strategy = self.strategy();
        self.in_vault(Refresh::Strict, |tx, delta| {
            let row = Self::live(tx, id)?;
            let previous = row.fm.updated.clone();
            let row = self.rewrite(tx, delta, row, &scrubbed, &now)?;
            let contradiction = match row.fm.kind {
                MemoryType::Episode => None,
                MemoryType::Entity => Some(self.contradiction(tx, &row, &now)?),
            };
            self.write_digest(tx, &strategy)?;
            Ok(Updated {
                id: id.to_owned(),
                updated: true,
                previous_updated_at: previous,
                contradiction,
            })
        })
    }

    fn contradiction(
        &self,
        tx: &Connection,
        row: &FileRow,
        now: &str,
    ) -> Result<Contradiction, BrainError> {
        let flag = negated(&row.body);
        let q = row.name.to_lowercase();
        let mut peers: Vec<engine::Candidate> = engine::matches(tx, &q, Some(MemoryType::Entity))?;
        peers.sort_by(|a, b| a.path.cmp(&b.path));
        for peer in peers {
            if peer.id == row.fm.id {
                continue;
            }
            let Some(peer_row) = engine::file_by_path(tx, &peer.path)? else {
                continue;
            };
            if peer_row.fm.category != row.fm.category || negated(&peer_row.body) == flag {
                continue;
            }
            let suggestion = "Review both entries and reconcile the conflicting claim.";
            engine::record_contradiction(tx, &row.fm.id, &peer.id, suggestion, now)?;
            return Ok(Contradiction {
                has_contradiction: true,
                conflicting_id: Some(peer.id),
                suggestion: Some(suggestion.to_owned()),
            });
        }
        Ok(Contradiction {
            has_contradiction: false,
            conflicting_id: None,
            suggestion: None,
        })
    }

    /// `memory_delete`: archives the file (pinned ones refuse); the credit row stays for its
    /// events but no longer counts as active.
    pub fn delete(&self, id: &str) -> Result<Archived, BrainError> {
        let strategy = self.strategy();
        self.in_vault(Refresh::Strict, |tx, delta| {
            let row = Self::live(tx, id)?;
            let archive_path = self.archive_row(tx, delta, &row)?;
            self.write_digest(tx, &strategy)?;
            Ok(Archived {
                id: row.fm.id,
                archived: true,
                archive_path,
            })
        })
    }

    /// `credit_report`: `top_n` absent → 10, else floored and clamped to [1, 100].
    pub fn credit_report(&self, top_n: Option<f64>) -> Result<CreditReport, BrainError> {
        let n = top_n.map_or(10, |t| {
            if t.is_nan() {
                1
            } else {
                t.floor().clamp(1.0, 100.0) as usize
            }
        });
        let strategy = self.strategy();
        self.in_vault(Refresh::Strict, |tx, _| {
            let rows = engine::live_credits(tx)?;
            let to_row = |(c, name, _): &(engine::CreditRow, String, bool)| ReportRow {
                id: c.id.clone(),
                name: name.clone(),
                score: c.score,
                access_count: c.access_count,
            };
            let total = rows.len();
            let avg = if total == 0 {
                0.0
            } else {
                rows.iter().map(|r| r.0.score).sum::<f64>() / total as f64
            };
            let mut ascending: Vec<_> = rows.iter().collect();
            ascending.sort_by(|a, b| a.0.score.total_cmp(&b.0.score));
            let prune_candidates = rows
                .iter()
                .filter(|(c, _, pinned)| strategy.prunable(c, *pinned, self.clock.now_ms()))
                .count();
            Ok(CreditReport {
                total_memories: total,
                avg_score: avg,
                top: rows.iter().take(n).map(to_row).collect(),
                bottom: ascending.into_iter().take(n).map(to_row).collect(),
                prune_candidates,
                last_consolidation: engine::last_action(tx, "consolidate")?,
                last_pruning: engine::last_action(tx, "prune")?,
            })
        })
    }

    /// `memory_feedback`: the outcome of the newest unresolved turn of `session` (default: this
    /// brain's session) moves its memories' scores by the clamped EMA.
    pub fn feedback(&self, signal: Signal, session: Option<&str>) -> Result<Feedback, BrainError> {
        let session = session.unwrap_or(&self.session).to_owned();
        let (_, now) = self.now();
        let strategy = self.strategy();
        self.in_vault(Refresh::Skip, |tx, _| {
            let applied = engine::apply_outcome(
                tx,
                &session,
                signal,
                strategy.alpha,
                &now,
                Self::row_defaults(&strategy),
            )?;
            if applied.is_some() {
                self.write_digest(tx, &strategy)?;
            }
            let (turn_id, updated) = applied.map_or((None, Vec::new()), |(t, m)| (Some(t), m));
            Ok(Feedback {
                signal,
                session_id: session,
                turn_id,
                updated,
            })
        })
    }

    fn write_digest(&self, tx: &Connection, strategy: &Strategy) -> Result<(), BrainError> {
        let rows = engine::digest_rows(tx, 500)?;
        let text = digest::render(&rows, strategy.max_context_budget, strategy.initial_score);
        vault::replace(&self.root, "MEMORY.md", &text)?;
        Ok(())
    }

    /// Regenerates `MEMORY.md` now (the reference host does this before a session).
    pub fn regenerate_digest(&self) -> Result<(), BrainError> {
        let strategy = self.strategy();
        self.in_vault(Refresh::Strict, |tx, _| self.write_digest(tx, &strategy))
    }
}

#[cfg(test)]
mod tests;
