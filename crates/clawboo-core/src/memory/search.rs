//! Searching the store: full-text (BM25 and word order), vector (cosine) and hybrid, always
//! within a reader's scope.
//!
//! Owns: mode resolution and degradation, ranking and the score of every hit. Full-text search
//! first counts, for each content word of the query (not a stop word), how many facts hold it,
//! stopping at the count that makes it common (one fact in [`COMMON_SHARE`]); then it runs tiers,
//! each ranking below the one before, and stops once it has enough hits:
//! 1. every content word when there are two or more and all are rare, BM25-ranked; else every
//!    word but the commonest English ones ("the", "of", …: their rows are most of the store),
//!    read newest first (so the cost follows the limit, never a scan of a common word's rows);
//! 2. every rare content word, BM25-ranked (when some were common);
//! 3. any of the [`MAX_RANKED_TERMS`] rarest content words, BM25-ranked;
//! 4. only when the query has no rare word: any of its common words, newest first.
//!
//! A query of stop words alone searches them as content words. Within a tier at most
//! `max(limit, 50)` matches are read and re-ranked: half BM25 relative to the tier's best (or, in
//! a tier read newest first, the share of the query's words a text holds), half the share of the
//! query's consecutive word pairs, stop words included, that the text holds in the same order. The
//! score is in `(0, 1]`, 1 for the best, and never rises down the list. Measured on 100,000
//! sentences of technical English (`cargo xtask bench`): natural queries take 1.5 ms p50 and
//! 2.8 ms p95, and a stored fact searched by five of its own words is in the top 10 in 0.977 of
//! probes (before: 113 ms p50 in-process in a dev build, 0.947: one OR over every word of the
//! query, stop words included, BM25-scored every row holding "the" or "of" and buried the fact
//! under rows sharing its common words).
//!
//! Decisions that differ from the reference, on purpose:
//! - the scope is applied inside the full-text query, so in-scope hits are never crowded out by
//!   out-of-scope ones (the reference ranks the first 200 hits of every scope, then filters);
//! - BM25 weighs the title (or a procedure's name) [`TITLE_WEIGHT`] times the content;
//! - vector search compares the query with every in-scope fact embedded by the current model (the
//!   reference, and this code before: only the newest 200 / 1,000), through a per-process index
//!   of quantized vectors (`vectors`) whose candidates are re-scored exactly; hybrid adds every
//!   full-text hit to them;
//! - procedures are searched too (by name and content), newest version only; they have no
//!   vectors, so in hybrid mode they score on their words alone.
//!
//! Must never: build SQL from the query (every `MATCH` expression is a bound parameter), or
//! compare vectors made by different models.

use std::collections::{HashMap, HashSet};

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, ToSql};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::embed::{Provider, cosine, from_blob};
use super::query::{self, is_stop_word, match_all, match_any};
use super::vectors::VectorIndex;
use super::{
    Entry, MemoryError, ReadScope, fact_columns, fact_from_row, latest_procedure_only,
    procedure_columns, procedure_from_row, scope_filter,
};
use crate::db::Db;

/// How much more a word in a title (or procedure name) counts than one in the content.
pub const TITLE_WEIGHT: f64 = 2.0;
/// Vector search reads back this many of the index's nearest candidates per hit asked for.
const VECTOR_OVERFETCH: usize = 10;
/// How many full-text hits hybrid search blends in.
const HYBRID_TEXT_POOL: u32 = 50;
/// How many matches a full-text tier reads and re-ranks, at least.
const TEXT_CANDIDATES: u32 = 50;
/// A term in more than one fact in this many is common (and at least [`COMMON_AT_LEAST`] facts).
const COMMON_SHARE: i64 = 100;
/// The fewest facts that make a term common.
const COMMON_AT_LEAST: i64 = 200;
/// At most this many of the rarest terms are matched and ranked.
const MAX_RANKED_TERMS: usize = 4;
/// A text of this many words counts half as much as a very short one, when a tier is unranked.
const SHORT_TEXT: f64 = 100.0;
/// The lowest score a full-text hit is given (scores stay above zero).
const MIN_SCORE: f64 = 1e-6;
/// Hybrid weights: vector similarity, then full-text score.
const VECTOR_WEIGHT: f64 = 0.6;
const TEXT_WEIGHT: f64 = 0.4;

/// How to search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// Full-text, BM25-ranked.
    Fts,
    /// Cosine similarity of embeddings.
    Vector,
    /// 0.6 × vector + 0.4 × full-text.
    Hybrid,
}

/// How a hit was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
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
pub(super) fn run(
    db: &Db,
    index: &VectorIndex,
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
        Ok(SearchOutcome {
            hits: full_text_hits(&conn, query, limit, scope)?,
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
    Ok(SearchOutcome {
        hits: vector_hits(
            &conn,
            index,
            query,
            &vector,
            &provider.id(),
            mode,
            limit,
            scope,
        )?,
        degraded: None,
    })
}

/// A candidate hit before scoring.
struct Candidate {
    entry: Entry,
    /// Its full-text score in `(0, 1]` (1 for the best), when it matched the words.
    text: Option<f64>,
    /// Its vector, when the current model made one.
    vector: Option<Vec<f32>>,
}

/// A full-text match before ranking.
struct Matched {
    entry: Entry,
    /// BM25 (negative; lower is better), when the tier ranks with it.
    bm25: Option<f64>,
    vector: Option<Vec<f32>>,
}

/// BM25 relative to the best hit's: `(0, 1]`, 1 for the best.
fn relative(rank: f64, best: f64) -> f64 {
    if best < 0.0 {
        (rank / best).clamp(0.0, 1.0)
    } else {
        1.0
    }
}

fn full_text_hits(
    conn: &Connection,
    query: &str,
    limit: u32,
    scope: &ReadScope,
) -> Result<Vec<SearchHit>, MemoryError> {
    Ok(text_candidates(conn, query, limit, scope, None)?
        .into_iter()
        .map(|c| SearchHit {
            score: c.text.unwrap_or(0.0),
            entry: c.entry,
            matched_via: MatchedVia::Fts,
        })
        .collect())
}

/// One step of a full-text search: a `MATCH` expression, and whether its matches are ranked by
/// BM25 (only rare terms in it, so ranking every match is cheap) or read newest first (common
/// terms only: ranking every match would cost a scan of most of the store).
struct Tier {
    expression: String,
    bm25: bool,
}

/// The tiers for the distinct words of a query, best first; see the module documentation.
/// Counting how many facts hold a term stops at the count that makes it common, so planning
/// costs little even for common words.
fn plan(conn: &Connection, distinct: &[&str]) -> Result<Vec<Tier>, MemoryError> {
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

/// The `cap` best full-text matches among facts and procedures, best first, with scores in
/// `(0, 1]`. With `model`, a fact's vector is kept when that model made it.
fn text_candidates(
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

/// How well a match fits the query, in `[0, 1]`: its BM25 relative to the tier's best (or, in a
/// tier read newest first, the share of the query's words it holds), and the share of the query's
/// consecutive word pairs it holds in the same order, equally weighted.
fn relevance(m: &Matched, words: &[String], best: f64) -> f64 {
    let (title, content) = match &m.entry {
        Entry::Fact(f) => (f.title.as_str(), f.content.as_str()),
        Entry::Procedure(p) => (p.name.as_str(), p.content.as_str()),
    };
    let text: Vec<String> = format!("{title} . {content}")
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let words_score = match m.bm25 {
        Some(rank) => relative(rank, best),
        None => {
            // Unranked: the share of the query's words held, shorter texts first among equals.
            let held = words.iter().filter(|w| text.contains(w)).count();
            held as f64 / words.len() as f64 * SHORT_TEXT / (SHORT_TEXT + text.len() as f64)
        }
    };
    let pairs: Vec<(&String, &String)> = words.iter().zip(words.iter().skip(1)).collect();
    if pairs.is_empty() {
        return words_score;
    }
    let in_order = pairs
        .iter()
        .filter(|(a, b)| text.windows(2).any(|w| &w[0] == *a && &w[1] == *b))
        .count();
    0.5 * words_score + 0.5 * in_order as f64 / pairs.len() as f64
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

/// The facts nearest `query_vector` among every in-scope fact embedded by `model`: the index
/// proposes the nearest `limit × 10` rowids (then more, while the scope filters too many out), and
/// those are read back with the scope filter and scored with their stored vectors.
#[allow(clippy::too_many_arguments)]
fn vector_hits(
    conn: &Connection,
    index: &VectorIndex,
    query: &str,
    query_vector: &[f32],
    model: &str,
    mode: SearchMode,
    limit: u32,
    scope: &ReadScope,
) -> Result<Vec<SearchHit>, MemoryError> {
    let stored = index.len(conn, model)?;
    let mut wanted = (limit as usize * VECTOR_OVERFETCH).max(VECTOR_OVERFETCH);
    let mut candidates: Vec<Candidate> = loop {
        let rowids = index.nearest(conn, model, query_vector, wanted)?;
        let found = facts_by_rowid(conn, &rowids, model, scope)?;
        if found.len() >= limit as usize || rowids.len() >= stored {
            break found;
        }
        wanted *= 4;
    };
    if mode == SearchMode::Hybrid {
        let text = text_candidates(conn, query, HYBRID_TEXT_POOL, scope, Some(model))?;
        let mut position: HashMap<String, usize> = candidates
            .iter()
            .enumerate()
            .map(|(i, c)| (c.entry.id().to_owned(), i))
            .collect();
        for hit in text {
            match position.get(hit.entry.id()) {
                Some(&i) => candidates[i].text = hit.text,
                None => {
                    position.insert(hit.entry.id().to_owned(), candidates.len());
                    candidates.push(hit);
                }
            }
        }
    }
    let matched_via = if mode == SearchMode::Hybrid {
        MatchedVia::Hybrid
    } else {
        MatchedVia::Vector
    };
    let mut hits: Vec<SearchHit> = candidates
        .into_iter()
        .filter_map(|c| {
            let similarity = c
                .vector
                .as_deref()
                .map_or(0.0, |v| (cosine(query_vector, v) + 1.0) / 2.0);
            let score = match mode {
                SearchMode::Hybrid => {
                    let text = c.text.unwrap_or(0.0);
                    VECTOR_WEIGHT * similarity + TEXT_WEIGHT * text
                }
                _ => similarity,
            };
            (score > 0.0).then_some(SearchHit {
                entry: c.entry,
                score,
                matched_via,
            })
        })
        .collect();
    hits.sort_by(|a, b| b.score.total_cmp(&a.score));
    hits.truncate(limit as usize);
    Ok(hits)
}

/// The facts with `rowids` that are in scope and embedded by `model`, with their vectors.
fn facts_by_rowid(
    conn: &Connection,
    rowids: &[i64],
    model: &str,
    scope: &ReadScope,
) -> Result<Vec<Candidate>, MemoryError> {
    let list = serde_json::to_string(rowids).unwrap_or_else(|_| "[]".into());
    let params = named(
        scope,
        [
            (":rowids", SqlValue::Text(list)),
            (":model", SqlValue::Text(model.to_owned())),
        ],
    );
    let found = conn
        .prepare_cached(concat!(
            "SELECT ",
            fact_columns!(),
            ", m.embedding AS embedding FROM memory_facts m
             WHERE m.rowid IN (SELECT value FROM json_each(:rowids))
               AND m.embedding_model = :model AND ",
            scope_filter!()
        ))?
        .query_map(as_params(&params).as_slice(), |r| {
            let blob: Option<Vec<u8>> = r.get("embedding")?;
            Ok(Candidate {
                entry: Entry::Fact(fact_from_row(r)?),
                text: None,
                vector: blob.as_deref().and_then(from_blob),
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(found)
}

/// The scope filter's parameters followed by `extra`.
pub(super) fn named<const N: usize>(
    scope: &ReadScope,
    extra: [(&'static str, SqlValue); N],
) -> Vec<(&'static str, SqlValue)> {
    scope.params().into_iter().chain(extra).collect()
}

/// Named parameters in the form rusqlite binds.
pub(super) fn as_params<'p>(
    params: &'p [(&'static str, SqlValue)],
) -> Vec<(&'static str, &'p dyn ToSql)> {
    params.iter().map(|(k, v)| (*k, v as &dyn ToSql)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_rank_is_one_for_the_best_and_falls_with_worse_ranks() {
        assert_eq!(relative(-4.0, -4.0), 1.0);
        assert_eq!(relative(-1.0, -4.0), 0.25);
        assert_eq!(relative(-1.0, 0.0), 1.0);
    }

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

    #[test]
    fn an_old_fact_is_found_by_meaning_behind_thousands_of_newer_ones() {
        let provider = Provider::Ollama {
            base: clawboo_tests::loopback::ollama().base,
            model: "nomic-embed-text".into(),
        };
        let memory = Memory::new(
            Db::open_in_memory().unwrap(),
            Embedder::with(Some(provider.clone())),
        );
        let old = NewFact {
            title: "Payments",
            content: "refunds go through the stripe dashboard",
            tags: &[],
        };
        let old = memory.save_fact(&old, &WriteScope::default()).unwrap();
        let team_only = NewFact {
            title: "Ledger",
            content: "stripe refunds are reconciled in the ledger dashboard",
            tags: &[],
        };
        let team_only = memory
            .save_fact(&team_only, &WriteScope::new(Some("team-a"), None, None))
            .unwrap();
        // Thousands of newer facts, each embedded (written directly: one HTTP call each would be
        // slow), none about payments.
        let fillers: Vec<(String, String)> = (0..3000)
            .map(|i| {
                (
                    format!("note {i}"),
                    format!("garden {i} hose and rake and shed"),
                )
            })
            .collect();
        {
            let conn = memory.db.conn();
            crate::memory::seed_facts(&conn, fillers.iter().map(|(t, c)| (t.as_str(), c.as_str())))
                .unwrap();
            let mut set = conn
                .prepare(
                    "UPDATE memory_facts SET embedding = ?1, embedding_model = ?2 WHERE id = ?3",
                )
                .unwrap();
            let ids: Vec<(String, String)> = conn
                .prepare("SELECT id, content FROM memory_facts WHERE title LIKE 'note %'")
                .unwrap()
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            for (id, content) in ids {
                let vector: Vec<f32> = clawboo_tests::loopback::bag_of_words(&content)
                    .into_iter()
                    .map(|x| x as f32)
                    .collect();
                set.execute(rusqlite::params![
                    super::super::embed::to_blob(&vector),
                    provider.id(),
                    id
                ])
                .unwrap();
            }
        }
        for mode in [SearchMode::Vector, SearchMode::Hybrid] {
            let hits = memory
                .search(
                    "stripe dashboard refunds",
                    Some(mode),
                    3,
                    &ReadScope::default(),
                )
                .unwrap()
                .hits;
            let first = hits.first().map(|h| h.entry.id());
            assert!(
                first == Some(old.id.as_str()) || first == Some(team_only.id.as_str()),
                "{mode:?}: {hits:?}"
            );
            assert!(
                hits.iter().take(2).any(|h| h.entry.id() == old.id),
                "{mode:?}"
            );
        }
        // A reader scoped to another team still finds the global fact, never team A's.
        let hits = memory
            .search(
                "stripe dashboard refunds",
                Some(SearchMode::Vector),
                3,
                &ReadScope::new(Some("team-b"), None, None),
            )
            .unwrap()
            .hits;
        assert_eq!(hits[0].entry.id(), old.id);
        assert!(hits.iter().all(|h| h.entry.id() != team_only.id));
    }
}
