//! The full-text planner: which words of a query are matched, and how, tier by tier.
//!
//! Owns: splitting a query's distinct words into content words (not stop words) and the rest;
//! counting, for each content word, how many facts hold it, stopping at the count that makes it
//! common (one fact in [`COMMON_SHARE`], at least [`COMMON_AT_LEAST`]), so planning costs little
//! even for common words; and the tiers, each ranking below the one before:
//! 1. every content word when there are two or more and all are rare, BM25-ranked; else every
//!    word but the commonest English ones ("the", "of", …: their rows are most of the store),
//!    read newest first (so the cost follows the limit, never a scan of a common word's rows);
//! 2. every rare content word, BM25-ranked (when some were common);
//! 3. any of the [`MAX_RANKED_TERMS`] rarest content words, BM25-ranked;
//! 4. only when the query has no rare word: any of its common words, newest first.
//!
//! A query of stop words alone searches them as content words. Must never: rank (the tiers say
//! what is matched; `text` and `rank` order the matches) or put a query word anywhere but in a
//! bound `MATCH` expression.

use rusqlite::Connection;

use super::super::MemoryError;
use super::super::query::{self, is_stop_word, match_all, match_any};

/// A term in more than one fact in this many is common (and at least [`COMMON_AT_LEAST`] facts).
const COMMON_SHARE: i64 = 100;
/// The fewest facts that make a term common.
const COMMON_AT_LEAST: i64 = 200;
/// At most this many of the rarest terms are matched and ranked.
const MAX_RANKED_TERMS: usize = 4;

/// One step of a full-text search: a `MATCH` expression, and whether its matches are ranked by
/// BM25 (only rare terms in it, so ranking every match is cheap) or read newest first (common
/// terms only: ranking every match would cost a scan of most of the store).
pub(super) struct Tier {
    pub(super) expression: String,
    pub(super) bm25: bool,
}

/// The tiers for the distinct words of a query, best first; see the module documentation.
/// Counting how many facts hold a term stops at the count that makes it common, so planning
/// costs little even for common words.
pub(super) fn plan(conn: &Connection, distinct: &[&str]) -> Result<Vec<Tier>, MemoryError> {
    let mut content: Vec<&str> = distinct
        .iter()
        .copied()
        .filter(|w| !is_stop_word(w))
        .collect();
    if content.is_empty() {
        content = distinct.to_vec();
    }
    let total: i64 = conn
        .prepare_cached("SELECT coalesce(max(rowid), 0) FROM memory_facts")?
        .query_row([], |r| r.get(0))?;
    let common = (total / COMMON_SHARE).max(COMMON_AT_LEAST);
    let mut counted = conn.prepare_cached(
        "SELECT count(*) FROM (SELECT 1 FROM clawboo_facts_fts
                               WHERE clawboo_facts_fts MATCH ?1 LIMIT ?2)",
    )?;
    let mut rare: Vec<(i64, &str)> = Vec::new();
    let mut frequent: Vec<&str> = Vec::new();
    for &term in &content {
        let df: i64 = counted
            .query_row(rusqlite::params![match_all(&[term]), common + 1], |r| {
                r.get(0)
            })?;
        if df > common {
            frequent.push(term);
        } else {
            rare.push((df, term));
        }
    }
    rare.sort();
    rare.truncate(MAX_RANKED_TERMS);
    let present: Vec<&str> = rare.iter().filter(|(df, _)| *df > 0).map(|t| t.1).collect();
    let rare: Vec<&str> = rare.iter().map(|t| t.1).collect();
    let mut tiers = Vec::new();
    if distinct.len() >= 2 && (content.len() < 2 || !frequent.is_empty()) {
        // Content words alone say too little: every word but the commonest English ones (whose
        // rows are most of the store), read newest first and re-ranked by word order.
        let mut words: Vec<&str> = distinct
            .iter()
            .copied()
            .filter(|w| !query::is_commonest_word(w))
            .collect();
        if words.len() < 2 {
            words = distinct.to_vec();
        }
        tiers.push(Tier {
            expression: match_all(&words),
            bm25: false,
        });
    } else if content.len() >= 2 && present.len() == rare.len() {
        // Every content word, all rare: BM25-ranked.
        tiers.push(Tier {
            expression: match_all(&content),
            bm25: true,
        });
    }
    if present.len() >= 2 && present.len() < content.len() {
        tiers.push(Tier {
            expression: match_all(&present),
            bm25: true,
        });
    }
    if !rare.is_empty() {
        tiers.push(Tier {
            expression: match_any(&rare),
            bm25: true,
        });
    }
    if present.is_empty() && !frequent.is_empty() {
        frequent.truncate(MAX_RANKED_TERMS);
        tiers.push(Tier {
            expression: match_any(&frequent),
            bm25: false,
        });
    }
    Ok(tiers)
}
