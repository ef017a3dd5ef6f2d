//! `memory_search`: every live memory matching a query, ranked by relevance and credit.
//!
//! Owns: the ranking (`relevance·0.4 + credit·0.6`; relevance 1.0 for the name, 0.8 for a tag,
//! 0.5 for the body; ties by BM25 then path), the page size rule and the snippet. Guarantees:
//! `total_matches` counts every match after the type filter, not the page; the page's memories are
//! recorded as one turn of the session. Must never: count an access (retrieval does).

use super::index::Refresh;
use super::{Brain, BrainError, MemoryType, SearchHit, SearchOutcome, engine};

/// The first 180 UTF-16 units of `body`.
fn snippet(body: &str) -> String {
    let mut units = 0;
    body.chars()
        .take_while(|c| {
            units += c.len_utf16();
            units <= 180
        })
        .collect()
}

impl Brain {
    /// `memory_search`: `limit` absent → 5, else floored and clamped to [1, 20].
    pub fn search(
        &self,
        query: &str,
        kind: Option<MemoryType>,
        limit: Option<f64>,
    ) -> Result<SearchOutcome, BrainError> {
        let limit = limit.map_or(5, |l| {
            if l.is_nan() {
                1
            } else {
                l.floor().clamp(1.0, 20.0) as usize
            }
        });
        let q = query.trim().to_lowercase();
        if q.is_empty() {
            return Ok(SearchOutcome {
                results: Vec::new(),
                total_matches: 0,
            });
        }
        let (_, now) = self.now();
        let strategy = self.strategy();
        self.in_vault(Refresh::Strict, |tx, _| {
            let mut ranked: Vec<(f64, f64, engine::Candidate)> = engine::matches(tx, &q, kind)?
                .into_iter()
                .map(|c| {
                    let relevance = if c.name_lc.contains(&q) {
                        1.0
                    } else if c.tags_lc.split('\n').any(|t| t.contains(&q)) {
                        0.8
                    } else {
                        0.5
                    };
                    (relevance, c.score.unwrap_or(strategy.initial_score), c)
                })
                .collect();
            let combined = |r: f64, s: f64| r * 0.4 + s * 0.6;
            ranked.sort_by(|a, b| {
                combined(b.0, b.1)
                    .total_cmp(&combined(a.0, a.1))
                    .then(a.2.bm25.total_cmp(&b.2.bm25))
                    .then_with(|| a.2.path.cmp(&b.2.path))
            });
            let mut seen = std::collections::HashSet::new();
            ranked.retain(|(_, _, c)| seen.insert(c.id.clone()));
            let total_matches = ranked.len();
            let mut results = Vec::new();
            for (relevance, credit, c) in ranked.into_iter().take(limit) {
                let (body, name, kind) = engine::body_of(tx, c.doc)?;
                engine::ensure_record(tx, &c.id, &now, Self::row_defaults(&strategy))?;
                results.push(SearchHit {
                    id: c.id,
                    name,
                    kind,
                    snippet: snippet(&body),
                    credit_score: credit,
                    relevance_score: relevance,
                    combined_score: combined(relevance, credit),
                });
            }
            let ids: Vec<String> = results.iter().map(|h| h.id.clone()).collect();
            engine::record_turn(tx, &self.session, &ids, &now)?;
            Ok(SearchOutcome {
                results,
                total_matches,
            })
        })
    }
}
