//! Running a full-text search: the planner's tiers, one after another, against the porter index
//! of facts and procedures, until enough hits are found.
//!
//! Owns: the `MATCH` queries over `clawboo_facts_fts` and `clawboo_procedures_fts` (the scope
//! filter applied inside them), reading at most `max(limit, 50)` matches per tier, and the scores:
//! each tier's matches are ordered by `rank` and scaled so the best of the first tier scores 1 and
//! every tier ranks below the one before (scores never rise down the list and stay above zero).
//! BM25 tiers read the index's best-ranked rows first and look up only those; tiers of common
//! words read newest first, so the cost follows the limit, not how many rows hold the words.
//!
//! Must never: build SQL from the query (every `MATCH` expression is a bound parameter).

use std::collections::HashSet;

use rusqlite::Connection;
use rusqlite::types::Value as SqlValue;

use super::super::embed::from_blob;
use super::super::query;
use super::super::{
    Entry, MemoryError, ReadScope, fact_columns, fact_from_row, latest_procedure_only,
    procedure_columns, procedure_from_row, scope_filter,
};
use super::plan::{Tier, plan};
use super::rank::{Matched, relevance};
use super::{Candidate, MatchedVia, SearchHit, as_params, named};

/// How much more a word in a title (or procedure name) counts than one in the content.
pub(super) const TITLE_WEIGHT: f64 = 2.0;
/// How many matches a full-text tier reads and re-ranks, at least.
const TEXT_CANDIDATES: u32 = 50;
/// The lowest score a full-text hit is given (scores stay above zero).
const MIN_SCORE: f64 = 1e-6;

/// The full-text hits for `query`, best first.
pub(super) fn hits(
    conn: &Connection,
    query: &str,
    limit: u32,
    scope: &ReadScope,
) -> Result<Vec<SearchHit>, MemoryError> {
    Ok(candidates(conn, query, limit, scope, None)?
        .into_iter()
        .map(|c| SearchHit {
            score: c.text.unwrap_or(0.0),
            entry: c.entry,
            matched_via: MatchedVia::Fts,
        })
        .collect())
}

/// The `cap` best full-text matches among facts and procedures, best first, with scores in
/// `(0, 1]`. With `model`, a fact's vector is kept when that model made it.
pub(super) fn candidates(
    conn: &Connection,
    query: &str,
    cap: u32,
    scope: &ReadScope,
    model: Option<&str>,
) -> Result<Vec<Candidate>, MemoryError> {
    let words = query::words(query);
    let mut distinct: Vec<&str> = Vec::new();
    for word in &words {
        if !distinct.contains(&word.as_str()) {
            distinct.push(word);
        }
    }
    if distinct.is_empty() {
        return Ok(Vec::new());
    }
    let mut found = Found {
        words: &words,
        hits: Vec::new(),
        seen: HashSet::new(),
        ceiling: 1.0,
    };
    let wanted = cap.max(TEXT_CANDIDATES);
    for tier in plan(conn, &distinct)? {
        found.add(tier_matches(conn, &tier, wanted, scope, model)?);
        if found.hits.len() >= cap as usize {
            break;
        }
    }
    let mut hits = found.hits;
    hits.truncate(cap as usize);
    Ok(hits)
}

/// Hits gathered tier by tier: each tier's matches rank below every earlier tier's.
struct Found<'w> {
    words: &'w [String],
    hits: Vec<Candidate>,
    seen: HashSet<String>,
    /// The score the best of the next tier gets.
    ceiling: f64,
}

impl Found<'_> {
    /// Ranks a tier's matches (those not already found) and appends them.
    fn add(&mut self, mut matched: Vec<Matched>) {
        matched.retain(|m| !self.seen.contains(m.entry.id()));
        if matched.is_empty() {
            return;
        }
        let best = matched.iter().filter_map(|m| m.bm25).fold(0.0, f64::min);
        let mut scored: Vec<(f64, Matched)> = matched
            .into_iter()
            .map(|m| (relevance(&m, self.words, best), m))
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        let top = scored[0].0.max(f64::MIN_POSITIVE);
        let mut lowest = self.ceiling;
        for (relevance, m) in scored {
            self.seen.insert(m.entry.id().to_owned());
            lowest = (self.ceiling * relevance / top).max(MIN_SCORE);
            self.hits.push(Candidate {
                entry: m.entry,
                text: Some(lowest),
                vector: m.vector,
            });
        }
        self.ceiling = lowest * 0.99;
    }
}

/// Up to `wanted` matches of one tier among facts and procedures in scope.
fn tier_matches(
    conn: &Connection,
    tier: &Tier,
    wanted: u32,
    scope: &ReadScope,
    model: Option<&str>,
) -> Result<Vec<Matched>, MemoryError> {
    let params = named(
        scope,
        [
            (":query", SqlValue::Text(tier.expression.clone())),
            (":limit", SqlValue::Integer(i64::from(wanted))),
            (":weight", SqlValue::Real(TITLE_WEIGHT)),
            (
                ":model",
                model.map_or(SqlValue::Null, |m| SqlValue::Text(m.to_owned())),
            ),
        ],
    );
    let mut matched = if tier.bm25 {
        let mut ranked = fact_text_hits(conn, &params, i64::from(wanted) * 4)?;
        if ranked.len() < wanted as usize && *scope != ReadScope::default() {
            ranked = fact_text_hits(conn, &params, -1)?;
        }
        ranked
    } else {
        newest_fact_hits(conn, &params)?
    };
    let procedures = conn
        .prepare_cached(concat!(
            "SELECT ",
            procedure_columns!(),
            ", bm25(clawboo_procedures_fts, :weight, 1.0) AS rank
             FROM clawboo_procedures_fts
             JOIN memory_procedures m ON m.rowid = clawboo_procedures_fts.rowid
             WHERE clawboo_procedures_fts MATCH :query AND ",
            scope_filter!(),
            " AND ",
            latest_procedure_only!(),
            " ORDER BY rank LIMIT :limit"
        ))?
        .query_map(
            as_params(&params_without(&params, ":model")).as_slice(),
            |r| {
                Ok(Matched {
                    entry: Entry::Procedure(procedure_from_row(r)?),
                    bm25: tier.bm25.then(|| r.get("rank")).transpose()?,
                    vector: None,
                })
            },
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    matched.extend(procedures);
    Ok(matched)
}

/// `params` without the one named `name` (SQLite refuses a parameter the statement lacks).
fn params_without(
    params: &[(&'static str, SqlValue)],
    name: &str,
) -> Vec<(&'static str, SqlValue)> {
    params.iter().filter(|(k, _)| *k != name).cloned().collect()
}

/// The best BM25-ranked fact matches in scope: the `pool` best-ranked matches of the whole index
/// (`-1`: all of them) are ranked first and only those are looked up and scope-filtered, so a
/// broad query over a large store does not load every matching row. The caller asks again with
/// no pool when too few survived a scope that can filter rows out (for an unscoped reader the pool
/// is a prefix of the whole ranking, so a short answer is already complete).
fn fact_text_hits(
    conn: &Connection,
    params: &[(&'static str, SqlValue)],
    pool: i64,
) -> Result<Vec<Matched>, MemoryError> {
    let mut params = params.to_vec();
    params.push((":pool", SqlValue::Integer(pool)));
    let matched = conn
        .prepare_cached(concat!(
            "SELECT ",
            fact_columns!(),
            ", CASE WHEN m.embedding_model = :model THEN m.embedding END AS same_model_embedding,
               hits.rank AS rank
             FROM (SELECT rowid, bm25(clawboo_facts_fts, :weight, 1.0) AS rank
                   FROM clawboo_facts_fts WHERE clawboo_facts_fts MATCH :query
                   ORDER BY rank LIMIT :pool) AS hits
             JOIN memory_facts m ON m.rowid = hits.rowid
             WHERE ",
            scope_filter!(),
            " ORDER BY hits.rank LIMIT :limit"
        ))?
        .query_map(as_params(&params).as_slice(), |r| fact_match(r, true))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(matched)
}

/// The newest fact matches in scope, unranked: read in rowid order from the newest and stopped
/// at `:limit`, so the cost follows the limit, not how many rows hold the common terms.
fn newest_fact_hits(
    conn: &Connection,
    params: &[(&'static str, SqlValue)],
) -> Result<Vec<Matched>, MemoryError> {
    let matched = conn
        .prepare_cached(concat!(
            "SELECT ",
            fact_columns!(),
            ", CASE WHEN m.embedding_model = :model THEN m.embedding END AS same_model_embedding
             FROM (SELECT rowid FROM clawboo_facts_fts WHERE clawboo_facts_fts MATCH :query
                   ORDER BY rowid DESC) AS hits
             JOIN memory_facts m ON m.rowid = hits.rowid
             WHERE ",
            scope_filter!(),
            " LIMIT :limit"
        ))?
        .query_map(
            as_params(&params_without(params, ":weight")).as_slice(),
            |r| fact_match(r, false),
        )?
        .collect::<rusqlite::Result<_>>()?;
    Ok(matched)
}

/// A fact match from a row of [`fact_text_hits`] or [`newest_fact_hits`].
fn fact_match(r: &rusqlite::Row<'_>, ranked: bool) -> rusqlite::Result<Matched> {
    let same_model_blob: Option<Vec<u8>> = r.get("same_model_embedding")?;
    Ok(Matched {
        entry: Entry::Fact(fact_from_row(r)?),
        bm25: ranked.then(|| r.get("rank")).transpose()?,
        vector: same_model_blob.as_deref().and_then(from_blob),
    })
}
#[cfg(test)]
mod tests {
    use super::super::SearchMode;
    use super::*;
    use crate::db::Db;
    use crate::memory::{Embedder, Memory, NewFact, WriteScope};

    /// A small fixed corpus of ordinary technical sentences (title, content).
    const CORPUS: &[(&str, &str)] = &[
        (
            "channels",
            "A bounded channel applies back pressure when the receiver falls behind the sender.",
        ),
        (
            "channels",
            "The sender half can be cloned to send to the same channel from many tasks.",
        ),
        (
            "files",
            "Opening a file in append mode makes every write go to the end of the file.",
        ),
        (
            "files",
            "The file is closed when the handle is dropped, and errors on close are ignored.",
        ),
        (
            "sqlite",
            "A write transaction that begins immediately takes the lock before it reads anything.",
        ),
        (
            "sqlite",
            "The write-ahead log lets readers keep reading while one writer appends to the log.",
        ),
        (
            "sqlite",
            "A busy timeout makes a connection wait for the lock instead of failing at once.",
        ),
        (
            "http",
            "The client follows redirects up to a limit and then returns the last response.",
        ),
        (
            "http",
            "A request that takes longer than the deadline is cancelled and reported as a timeout.",
        ),
        (
            "hashing",
            "The hash of a key decides which bucket of the table it is stored in.",
        ),
        (
            "hashing",
            "When the table is more than half full it grows to twice its size and rehashes.",
        ),
        (
            "errors",
            "An error that the caller can handle is returned, and a bug is reported by a panic.",
        ),
        (
            "errors",
            "The question mark operator returns early with the error converted by its From impl.",
        ),
        (
            "threads",
            "A scoped thread may borrow from the stack because it is joined before the scope ends.",
        ),
        (
            "threads",
            "The thread pool runs blocking work so that the async workers are never stalled.",
        ),
        (
            "zephyr",
            "The zephyr scheduler wakes a task only when its deadline has passed.",
        ),
        (
            "parsing",
            "The parser reads one line at a time and reports the column of the first bad byte.",
        ),
        (
            "parsing",
            "A line longer than the limit is dropped and the reader skips to the next newline.",
        ),
        (
            "time",
            "Timestamps are stored as milliseconds since the epoch in a signed integer column.",
        ),
        (
            "time",
            "A monotonic clock never goes backwards, so it measures how long something took.",
        ),
    ];

    fn store() -> (Memory, Vec<String>) {
        let memory = Memory::new(Db::open_in_memory().unwrap(), Embedder::none());
        let ids = CORPUS
            .iter()
            .map(|(title, content)| {
                let new = NewFact {
                    title,
                    content,
                    tags: &[],
                };
                memory.save_fact(&new, &WriteScope::default()).unwrap().id
            })
            .collect();
        (memory, ids)
    }

    fn ids_for(memory: &Memory, query: &str) -> Vec<String> {
        memory
            .search(query, Some(SearchMode::Fts), 10, &ReadScope::default())
            .unwrap()
            .hits
            .into_iter()
            .map(|h| h.entry.id().to_owned())
            .collect()
    }

    #[test]
    fn a_stored_fact_is_found_first_by_five_of_its_own_words() {
        let (memory, ids) = store();
        for ((_, content), id) in CORPUS.iter().zip(&ids) {
            let words = query::words(content);
            for start in 0..=words.len() - 5 {
                let probe = words[start..start + 5].join(" ");
                let found = ids_for(&memory, &probe);
                assert_eq!(
                    found.first(),
                    Some(id),
                    "{probe:?} should find {content:?} first"
                );
            }
        }
    }

    #[test]
    fn a_rare_word_outranks_a_common_one() {
        let (memory, ids) = store();
        // "the" and "task" are in many facts, "zephyr" in one.
        let found = ids_for(&memory, "the task zephyr");
        assert_eq!(found.first(), Some(&ids[15]), "{found:?}");
        let found = ids_for(&memory, "lock zephyr");
        assert_eq!(
            found.first(),
            Some(&ids[15]),
            "the rarer word decides: {found:?}"
        );
        assert!(
            found.contains(&ids[4]) && found.contains(&ids[6]),
            "{found:?}"
        );
    }

    #[test]
    fn a_fact_with_every_word_outranks_facts_with_some_and_stop_words_do_not_drown_it() {
        let (memory, ids) = store();
        let found = ids_for(&memory, "what happens to the lock when the writer appends");
        assert_eq!(found.first(), Some(&ids[5]), "{found:?}");
        let found = ids_for(&memory, "is the file closed");
        assert_eq!(found.first(), Some(&ids[3]), "{found:?}");
        // A query of stop words alone still searches them.
        assert!(!ids_for(&memory, "the of").is_empty());
    }

    #[test]
    fn scores_fall_with_the_ranking_and_the_best_scores_one() {
        let (memory, _) = store();
        for query in [
            "the file",
            "write lock",
            "a line longer than the limit",
            "deadline",
        ] {
            let hits = memory
                .search(query, Some(SearchMode::Fts), 20, &ReadScope::default())
                .unwrap()
                .hits;
            assert_eq!(hits[0].score, 1.0, "{query}");
            assert!(
                hits.windows(2)
                    .all(|w| w[0].score >= w[1].score && w[1].score > 0.0),
                "{query}: {:?}",
                hits.iter().map(|h| h.score).collect::<Vec<_>>()
            );
        }
    }
}
