//! Searching the store: full-text (BM25), vector (cosine) and hybrid, always within a reader's
//! scope.
//!
//! Owns: mode resolution and degradation, ranking and the score of every hit. Decisions that
//! differ from the reference, on purpose:
//! - the scope is applied inside the full-text query, so in-scope hits are never crowded out by
//!   out-of-scope ones (the reference ranks the first 200 hits of every scope, then filters);
//! - BM25 weighs the title (or a procedure's name) [`TITLE_WEIGHT`] times the content, and a
//!   hit's full-text score is its BM25 relative to the best hit's, in `(0, 1]`;
//! - the vector pool is the newest [`VECTOR_POOL`] in-scope facts embedded by the current model,
//!   and hybrid adds every full-text hit to it, so an old fact that matches the words is not lost;
//! - procedures are searched too (by name and content), newest version only; they have no
//!   vectors, so in hybrid mode they score on their words alone.
//!
//! Must never: build SQL from the query (the `MATCH` expression is a bound parameter), or compare
//! vectors made by different models.

use std::collections::HashMap;

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, ToSql};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::embed::{Provider, cosine, from_blob};
use super::{
    Entry, MemoryError, ReadScope, fact_columns, fact_from_row, fts_query, latest_procedure_only,
    procedure_columns, procedure_from_row, scope_filter,
};
use crate::db::Db;

/// How much more a word in a title (or procedure name) counts than one in the content.
pub const TITLE_WEIGHT: f64 = 2.0;
/// How many of the newest embedded facts vector and hybrid search compare with the query.
pub const VECTOR_POOL: i64 = 1000;
/// How many full-text hits hybrid search blends in.
const HYBRID_TEXT_POOL: u32 = 200;
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
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
        hits: vector_hits(&conn, query, &vector, &provider.id(), mode, limit, scope)?,
        degraded: None,
    })
}

/// A candidate hit before scoring.
struct Candidate {
    entry: Entry,
    /// BM25 (negative; lower is better) when it matched the words.
    rank: Option<f64>,
    /// Its vector, when the current model made one.
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
    let candidates = text_candidates(conn, query, limit, scope, None)?;
    let best = candidates.first().and_then(|c| c.rank).unwrap_or(0.0);
    Ok(candidates
        .into_iter()
        .map(|c| SearchHit {
            score: relative(c.rank.unwrap_or(best), best),
            entry: c.entry,
            matched_via: MatchedVia::Fts,
        })
        .collect())
}

/// The `cap` best full-text matches among facts and procedures, best first. With `model`, a
/// fact's vector is kept when that model made it.
fn text_candidates(
    conn: &Connection,
    query: &str,
    cap: u32,
    scope: &ReadScope,
    model: Option<&str>,
) -> Result<Vec<Candidate>, MemoryError> {
    let Some(expression) = fts_query(query) else {
        return Ok(Vec::new());
    };
    let params = named(
        scope,
        [
            (":query", SqlValue::Text(expression)),
            (":limit", SqlValue::Integer(i64::from(cap))),
            (":weight", SqlValue::Real(TITLE_WEIGHT)),
        ],
    );
    let mut candidates = fact_text_hits(conn, &params, i64::from(cap) * 10, model)?;
    let scope_can_filter = *scope != ReadScope::default();
    if candidates.len() < cap as usize && scope_can_filter {
        candidates = fact_text_hits(conn, &params, -1, model)?;
    }
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
        .query_map(as_params(&params).as_slice(), |r| {
            Ok(Candidate {
                entry: Entry::Procedure(procedure_from_row(r)?),
                rank: Some(r.get(8)?),
                vector: None,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    candidates.extend(procedures);
    candidates.sort_by(|a, b| a.rank.unwrap_or(0.0).total_cmp(&b.rank.unwrap_or(0.0)));
    candidates.truncate(cap as usize);
    Ok(candidates)
}

/// The best full-text fact hits in scope: the `pool` best-ranked matches of the whole index
/// (`-1`: all of them) are ranked first and only those are looked up and scope-filtered, so a
/// broad query over a large store does not load every matching row. The caller asks again with
/// no pool when too few survived a scope that can filter rows out (for an unscoped reader the pool
/// is a prefix of the whole ranking, so a short answer is already complete).
fn fact_text_hits(
    conn: &Connection,
    params: &[(&'static str, SqlValue)],
    pool: i64,
    model: Option<&str>,
) -> Result<Vec<Candidate>, MemoryError> {
    let mut params = params.to_vec();
    params.push((":pool", SqlValue::Integer(pool)));
    params.push((
        ":model",
        model.map_or(SqlValue::Null, |m| SqlValue::Text(m.to_owned())),
    ));
    let candidates = conn
        .prepare_cached(concat!(
            "SELECT ",
            fact_columns!(),
            ", CASE WHEN m.embedding_model = :model THEN m.embedding END, hits.rank
             FROM (SELECT rowid, bm25(clawboo_facts_fts, :weight, 1.0) AS rank
                   FROM clawboo_facts_fts WHERE clawboo_facts_fts MATCH :query
                   ORDER BY rank LIMIT :pool) AS hits
             JOIN memory_facts m ON m.rowid = hits.rowid
             WHERE ",
            scope_filter!(),
            " ORDER BY hits.rank LIMIT :limit"
        ))?
        .query_map(as_params(&params).as_slice(), |r| {
            let same_model_blob: Option<Vec<u8>> = r.get(9)?;
            Ok(Candidate {
                entry: Entry::Fact(fact_from_row(r)?),
                rank: Some(r.get(10)?),
                vector: same_model_blob.as_deref().and_then(from_blob),
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(candidates)
}

fn vector_hits(
    conn: &Connection,
    query: &str,
    query_vector: &[f32],
    model: &str,
    mode: SearchMode,
    limit: u32,
    scope: &ReadScope,
) -> Result<Vec<SearchHit>, MemoryError> {
    let params = named(
        scope,
        [
            (":model", SqlValue::Text(model.to_owned())),
            (":pool", SqlValue::Integer(VECTOR_POOL)),
        ],
    );
    let mut candidates: Vec<Candidate> = conn
        .prepare_cached(concat!(
            "SELECT ",
            fact_columns!(),
            ", m.embedding FROM memory_facts m
             WHERE m.embedding_model = :model AND ",
            scope_filter!(),
            " ORDER BY m.updated_at DESC, m.rowid DESC LIMIT :pool"
        ))?
        .query_map(as_params(&params).as_slice(), |r| {
            let blob: Option<Vec<u8>> = r.get(9)?;
            Ok(Candidate {
                entry: Entry::Fact(fact_from_row(r)?),
                rank: None,
                vector: blob.as_deref().and_then(from_blob),
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut best_rank = 0.0;
    if mode == SearchMode::Hybrid {
        let text = text_candidates(conn, query, HYBRID_TEXT_POOL, scope, Some(model))?;
        best_rank = text.first().and_then(|c| c.rank).unwrap_or(0.0);
        let mut position: HashMap<String, usize> = candidates
            .iter()
            .enumerate()
            .map(|(i, c)| (c.entry.id().to_owned(), i))
            .collect();
        for hit in text {
            match position.get(hit.entry.id()) {
                Some(&i) => candidates[i].rank = hit.rank,
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
                    let text = c.rank.map_or(0.0, |r| relative(r, best_rank));
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
}
