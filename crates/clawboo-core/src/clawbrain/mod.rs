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
//!
//! Where things are: [`Brain`] and its opening here; `types` (what the operations take and
//! answer), `error` ([`BrainError`]), `index` (the transaction every operation runs in and the
//! re-index walk), `writes` (files and rows written together, `MEMORY.md`), the operations by
//! concern (`memories`, `search`, `credit`, `lifecycle`), and under them `engine` (all SQL),
//! `vault` (paths and files), `frontmatter`, `digest`, `time`, `watch`.

mod credit;
mod digest;
mod engine;
mod error;
mod frontmatter;
mod index;
pub mod lifecycle;
mod memories;
mod search;
mod time;
mod types;
mod vault;
mod watch;
mod writes;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Mutex, MutexGuard};

use rusqlite::Connection;

use crate::db::Clock;
use vault::Stamp;

pub use engine::Moved;
pub use error::BrainError;
pub use lifecycle::Strategy;
pub use types::{
    Archived, Contradiction, CreditReport, Feedback, MemoryType, NewMemory, ReportRow, Retrieved,
    SearchHit, SearchOutcome, Signal, Stored, Updated,
};

/// The default session when `SESSION_ID` is unset (the reference host uses the same).
pub const DEFAULT_SESSION: &str = "local-session";

/// The vault: its root, `engine.db`, and the session retrievals are recorded under.
pub struct Brain {
    root: PathBuf,
    session: String,
    conn: Mutex<Connection>,
    known: Mutex<Option<HashMap<String, Stamp>>>,
    /// Tells a read whether the vault may have changed since the last walk.
    watch: watch::Watch,
    /// A change was seen (or nothing was walked yet) and no walk has committed since.
    stale: AtomicBool,
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
            stale: AtomicBool::new(true),
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
}

#[cfg(test)]
mod tests;
