//! Scoring vector candidates, and the hybrid blend of meaning and words.
//!
//! Owns: a vector hit's score, `(1 + cosine) / 2` of the query's vector and the fact's stored one
//! (so in `[0, 1]`); in hybrid mode every full-text hit joins the vector candidates and each
//! scores [`VECTOR_WEIGHT`] × similarity + [`TEXT_WEIGHT`] × its full-text score (a procedure, or
//! a fact without a vector of the current model, on its words alone).
//!
//! Must never: read the database (the candidates arrive read and scoped).

use std::collections::HashMap;

use super::super::embed::cosine;
use super::{Candidate, MatchedVia, SearchHit, SearchMode};

/// Hybrid weights: vector similarity, then full-text score.
const VECTOR_WEIGHT: f64 = 0.6;
const TEXT_WEIGHT: f64 = 0.4;

/// Adds the full-text hits `text` to the vector `candidates`: a fact already there takes its
/// full-text score, any other joins them.
pub(super) fn add_text(candidates: &mut Vec<Candidate>, text: Vec<Candidate>) {
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

/// The `limit` best of `candidates` for `mode` (vector or hybrid), best first; a candidate that
/// scores zero is left out.
pub(super) fn score(
    candidates: Vec<Candidate>,
    query_vector: &[f32],
    mode: SearchMode,
    limit: u32,
) -> Vec<SearchHit> {
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
    hits
}
