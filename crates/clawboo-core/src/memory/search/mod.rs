//! Searching the store: full-text, vector and hybrid, always within a reader's scope.
//!
//! Owns: which mode runs (the one asked for, else hybrid with a provider and full-text without)
//! and how a vector or hybrid search degrades to full-text (saying why), the shapes every mode
//! answers ([`SearchHit`], [`SearchOutcome`]) and the scope parameters every search binds, and the
//! second connection a store's full-text searches read through ([`Kept`]; at most
//! [`MAX_SECOND_READERS`] open in a process). The work is beside it: for full-text, `plan` (what
//! the query's words are worth and where candidates come from) on what `counts` read of the
//! index, `typo` (spelling correction from the index's vocabulary, which `lexicon` reads from the
//! index's leaf pages), `reads` (which reads of candidates run, and on which of the two
//! connections: a search's reads, the planner's too, share two cores),
//! `text` (reading the candidates), `rank` (the one formula that scores them), `stem` (words as
//! the index stems them) and `tally` (what each kind of read cost, while a bench asks); `vector`
//! (the nearest facts by embedding) and `blend` (vector scores, and the hybrid blend of both).
//!
//! Decisions that differ from the reference, on purpose:
//! - the scope is applied inside every query, so in-scope hits are never crowded out by
//!   out-of-scope ones (the reference ranks the first 200 hits of every scope, then filters);
//! - vector search covers every in-scope fact embedded by the current model, through the vector
//!   index kept in the file (`memory::vectors`: approximate candidates, re-scored exactly; its
//!   recall against exact search is a bench row) (the reference: only the newest 200 / 1,000);
//!   hybrid adds the best full-text hits to them;
//! - procedures are searched too (by name and content), newest version only; they have no
//!   vectors, so in hybrid mode they count as the least similar candidate and compete on their
//!   words.
//!
//! Guarantees: every score is in `[0, 1]` and hits come best first. Must never: build SQL from the
//! query (every `MATCH` expression is a bound parameter), or compare vectors made by different
//! models.

mod blend;
mod counts;
mod lexicon;
mod plan;
mod rank;
mod reads;
mod stem;
pub mod tally;
mod text;
mod typo;
mod vector;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use rusqlite::ToSql;
use rusqlite::types::Value as SqlValue;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::embed::Provider;
use super::vectors::ScanCopy;
use super::{Entry, MemoryError, ReadScope};
use crate::db::Db;
use counts::WordCounts;
use reads::Helper;

/// What a store's searches keep between calls, each used only while it is what the file holds.
#[derive(Debug, Default)]
pub(in crate::memory) struct Kept {
    /// The vector index's copy for its scan (`vectors::ScanCopy`).
    scan_copy: Mutex<ScanCopy>,
    /// What the full-text index said of the words asked so far (`counts::WordCounts`).
    word_counts: Mutex<WordCounts>,
    /// The second connection full-text searches read through, owned by its helper thread
    /// (`reads::Helper`), opened at the first search that finds a slot free
    /// ([`MAX_SECOND_READERS`]); the thread ends when the store is dropped.
    second_reader: Mutex<SecondReader>,
}

/// A store's second reading connection (`Db::second_reader`).
#[derive(Debug, Default)]
enum SecondReader {
    /// Not opened yet, or every slot was taken when it was last asked for.
    #[default]
    Unopened,
    Open {
        /// The thread that owns the connection and reads on it (`reads::Helper`).
        helper: Helper<rusqlite::Connection>,
        /// Held while it is open.
        _slot: Slot<'static>,
    },
    /// The store has none (in memory), or it could not be opened: searches read on one connection.
    Unavailable,
}

/// How many second readers a process keeps open at once. A host opens a store per session (up
/// to hundreds), and a second connection for each would double the files it holds open (and add
/// as many helper threads); past this many, a store's searches read on one connection until a
/// slot is free.
const MAX_SECOND_READERS: usize = 16;

/// The process's slots for second readers.
static SECOND_READERS: Slots = Slots::new(MAX_SECOND_READERS);

/// A bounded count of things held open ([`Slot`]s).
#[derive(Debug)]
struct Slots {
    taken: AtomicUsize,
    most: usize,
}

/// One taken slot of [`Slots`], given back when dropped.
#[derive(Debug)]
struct Slot<'s>(&'s Slots);

impl Slots {
    const fn new(most: usize) -> Self {
        Self {
            taken: AtomicUsize::new(0),
            most,
        }
    }

    /// A slot, or `None` when all are taken.
    fn take(&self) -> Option<Slot<'_>> {
        self.taken
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |taken| {
                (taken < self.most).then_some(taken + 1)
            })
            .ok()
            .map(|_| Slot(self))
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.taken.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Kept {
    /// The kept word counts, for one search (a search that panicked left them whole: each
    /// answer is inserted in one step).
    fn word_counts(&self) -> MutexGuard<'_, WordCounts> {
        self.word_counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The second reader of `db`'s searches, opened now if it never was and a slot is free
    /// ([`MAX_SECOND_READERS`]; `None` inside: there is none). Held for one search; a search that
    /// finds it held by another reads on one connection.
    fn second_reader(&self, db: &Db) -> Option<MutexGuard<'_, SecondReader>> {
        let mut second = self.second_reader.try_lock().ok()?;
        if matches!(*second, SecondReader::Unopened)
            && let Some(slot) = SECOND_READERS.take()
        {
            *second = match db.second_reader().map(|conn| conn.and_then(Helper::start)) {
                Ok(Some(helper)) => SecondReader::Open {
                    helper,
                    _slot: slot,
                },
                Ok(None) | Err(_) => SecondReader::Unavailable,
            };
        }
        Some(second)
    }
}

/// The connections of one full-text search: `first`, and the second reader in `second` if open.
fn readers<'c>(
    first: &'c rusqlite::Connection,
    second: &'c Option<MutexGuard<'_, SecondReader>>,
) -> text::Readers<'c> {
    text::Readers {
        first,
        second: match second.as_deref() {
            Some(SecondReader::Open { helper, .. }) => Some(helper),
            _ => None,
        },
    }
}

/// How many full-text hits hybrid search blends in.
const HYBRID_TEXT_POOL: u32 = 50;

/// How to search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// Full-text, BM25-ranked.
    Fts,
    /// Cosine similarity of embeddings.
    Vector,
    /// 0.6 × vector similarity + 0.4 × full-text score.
    Hybrid,
}

/// How a hit was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MatchedVia {
    /// Full-text.
    Fts,
    /// Vector similarity.
    Vector,
    /// Both blended.
    Hybrid,
}

/// One search result: the entry, its score in `[0, 1]` and how it was found.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// The fact or procedure.
    #[serde(flatten)]
    pub entry: Entry,
    /// Higher is better.
    pub score: f64,
    /// How it was found.
    pub matched_via: MatchedVia,
}

/// The hits, best first, and why the mode used differs from the one asked for, if it does.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchOutcome {
    /// Best first.
    pub hits: Vec<SearchHit>,
    /// Set when a vector or hybrid search fell back to full-text.
    pub degraded: Option<String>,
}

/// Runs a search; see the module documentation. Without a mode, hybrid when a provider exists,
/// else full-text; vector and hybrid fall back to full-text (saying why) when there is no
/// provider or the query cannot be embedded.
pub(in crate::memory) fn run(
    db: &Db,
    kept: &Kept,
    provider: Option<&Provider>,
    query: &str,
    requested: Option<SearchMode>,
    limit: u32,
    scope: &ReadScope,
) -> Result<SearchOutcome, MemoryError> {
    let mode = requested.unwrap_or(if provider.is_some() {
        SearchMode::Hybrid
    } else {
        SearchMode::Fts
    });
    let full_text = |degraded: Option<String>| -> Result<SearchOutcome, MemoryError> {
        let conn = db.conn();
        let second = kept.second_reader(db);
        Ok(SearchOutcome {
            hits: text::hits(
                readers(&conn, &second),
                &mut kept.word_counts(),
                query,
                limit,
                scope,
            )?,
            degraded,
        })
    };
    if mode == SearchMode::Fts {
        return full_text(None);
    }
    let Some(provider) = provider else {
        return full_text(Some(
            "no embedding provider is configured (Ollama unreachable, OPENAI_API_KEY unset): \
             searched full-text instead"
                .into(),
        ));
    };
    if query.trim().is_empty() {
        return Ok(SearchOutcome {
            hits: Vec::new(),
            degraded: None,
        });
    }
    let vector = match provider.embed(&[query]) {
        Ok(mut vectors) => vectors.remove(0),
        Err(e) => return full_text(Some(format!("{e}: searched full-text instead"))),
    };
    let conn = db.conn();
    let model = provider.id();
    // Hybrid measures each candidate's nearness against the query's nearest facts (`blend`).
    let nearest = if mode == SearchMode::Hybrid {
        limit.max(blend::NEAREST_REFERENCE)
    } else {
        limit
    };
    let mut candidates = vector::nearest(&conn, &kept.scan_copy, &vector, &model, nearest, scope)?;
    if mode == SearchMode::Hybrid {
        let second = kept.second_reader(db);
        let text = text::candidates(
            readers(&conn, &second),
            &mut kept.word_counts(),
            query,
            HYBRID_TEXT_POOL,
            scope,
        )?;
        // The full-text hits not among the nearest join them with their vectors, read now for
        // these few rather than with every candidate the full-text reads looked at.
        let mut joining = blend::take_text_scores(&mut candidates, text);
        vector::add_vectors(&conn, joining.iter_mut(), &model)?;
        candidates.extend(joining);
    }
    Ok(SearchOutcome {
        hits: blend::score(candidates, &vector, mode, limit),
        degraded: None,
    })
}

/// A candidate hit before scoring.
struct Candidate {
    entry: Entry,
    /// Its full-text score by the `rank` formula (about 1 for a text holding every word of the
    /// query), when it matched the words.
    text: Option<f64>,
    /// Its vector, when the current model made one.
    vector: Option<Vec<f32>>,
}

/// The scope filter's parameters followed by `extra`.
pub(in crate::memory) fn named<const N: usize>(
    scope: &ReadScope,
    extra: [(&'static str, SqlValue); N],
) -> Vec<(&'static str, SqlValue)> {
    scope.params().into_iter().chain(extra).collect()
}

/// `rowids` as the list a statement joins to through `json_each` to read those rows: a JSON
/// array, ascending and each once, so the rows come as a lookup `IN` the list gives them (joining
/// is cheaper: SQLite copies a list looked up `IN` into a temporary index first).
fn rowid_list(rowids: &[i64]) -> SqlValue {
    let mut ascending = rowids.to_vec();
    ascending.sort_unstable();
    ascending.dedup();
    SqlValue::Text(serde_json::to_string(&ascending).unwrap_or_else(|_| "[]".into()))
}

/// Named parameters in the form rusqlite binds.
pub(in crate::memory) fn as_params<'p>(
    params: &'p [(&'static str, SqlValue)],
) -> Vec<(&'static str, &'p dyn ToSql)> {
    params.iter().map(|(k, v)| (*k, v as &dyn ToSql)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_readers_are_bounded_and_a_closed_one_frees_its_slot() {
        let slots = Slots::new(2);
        let (first, second) = (slots.take(), slots.take());
        assert!(first.is_some() && second.is_some());
        assert!(slots.take().is_none(), "a third past the bound");
        drop(first);
        assert!(slots.take().is_some(), "the slot given back is taken again");
    }
}
