//! How a full-text match is scored, within its tier.
//!
//! A match's relevance, in `[0, 1]`, is half its words and half their order: its BM25 relative to
//! the tier's best (or, in a tier read newest first, the share of the query's words it holds,
//! shorter texts first among equals), and the share of the query's consecutive word pairs, stop
//! words included, that it holds in the same order. BM25 weighs the title (or a procedure's name)
//! [`TITLE_WEIGHT`](super::text::TITLE_WEIGHT) times the content. Must never: read the database (the
//! matches are read by `text`).

use super::super::Entry;

/// A text of this many words counts half as much as a very short one, when a tier is unranked.
const SHORT_TEXT: f64 = 100.0;

/// A full-text match before ranking.
pub(super) struct Matched {
    pub(super) entry: Entry,
    /// BM25 (negative; lower is better), when the tier ranks with it.
    pub(super) bm25: Option<f64>,
    /// Its vector, when the current model made one.
    pub(super) vector: Option<Vec<f32>>,
}

/// BM25 relative to the best hit's: `(0, 1]`, 1 for the best.
pub(super) fn relative(rank: f64, best: f64) -> f64 {
    if best < 0.0 {
        (rank / best).clamp(0.0, 1.0)
    } else {
        1.0
    }
}

/// How well a match fits the query, in `[0, 1]`: its BM25 relative to the tier's best (or, in a
/// tier read newest first, the share of the query's words it holds), and the share of the query's
/// consecutive word pairs it holds in the same order, equally weighted.
pub(super) fn relevance(m: &Matched, words: &[String], best: f64) -> f64 {
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
