//! How a full-text candidate is scored: one formula for every candidate, whichever source found it.
//!
//! The score adds two parts, each in about `[0, 1]`:
//! - **words**: BM25 over the query's terms (its content words; every word when it has none),
//!   computed here on the candidate's own words reduced to their families (`stem::key`, so
//!   `deploy`, `deployed` and `deployment` are one word): each term counts its inverse document
//!   frequency `ln(1 + (N − df + ½) / (df + ½))` (a rare word outweighs a common one), saturated
//!   by how often the text holds it (k1 = [`K1`]) and normalised by the text's length against the
//!   candidates' mean (b = [`B`]); a word in the title (or a procedure's name) counts
//!   [`TITLE_WEIGHT`] times one in the content. The sum is divided by the most a text could score,
//!   so a text holding every term scores about 1;
//! - **order**: the share of the query's consecutive word pairs, stop words included, that the
//!   text holds next to each other in the same order, weighted [`ORDER_WEIGHT`]: of two texts
//!   with the same words, the one that says them as the query does ranks first.
//!
//! Before that, [`shortlist`] picks which facts holding the rare terms are read at all: those
//! holding the most inverse document frequency of them, newest first among equals.
//!
//! Must never: read the database (the candidates and the counts arrive from `text` and `plan`).

use std::collections::HashMap;

use super::super::Entry;
use super::plan::Plan;
use super::stem;

/// How much more a word in a title (or procedure name) counts than one in the content.
pub(super) const TITLE_WEIGHT: f64 = 2.0;
/// BM25's term-frequency saturation.
const K1: f64 = 1.2;
/// BM25's length normalisation.
const B: f64 = 0.75;
/// How much word order counts beside the words themselves.
const ORDER_WEIGHT: f64 = 0.5;

/// A candidate's words, ready to score.
pub(super) struct Words {
    title: Vec<String>,
    content: Vec<String>,
}

impl Words {
    /// The families of `entry`'s title (or name) and content words, as far as `plan` can tell
    /// them apart: a word that cannot be one of the query's (its first two letters start none of
    /// the query's families; a stem keeps a word's first two letters) is kept as an empty word,
    /// unstemmed.
    pub(super) fn of(entry: &Entry, plan: &Plan) -> Self {
        let (title, content) = match entry {
            Entry::Fact(f) => (f.title.as_str(), f.content.as_str()),
            Entry::Procedure(p) => (p.name.as_str(), p.content.as_str()),
        };
        let starts: Vec<&str> = plan.words.iter().map(|w| start(w)).collect();
        let keys = |text: &str| -> Vec<String> {
            text.split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(|w| {
                    let w = w.to_lowercase();
                    if starts.contains(&start(&w)) {
                        stem::key(&w)
                    } else {
                        String::new()
                    }
                })
                .collect()
        };
        Self {
            title: keys(title),
            content: keys(content),
        }
    }

    fn len(&self) -> usize {
        self.title.len() + self.content.len()
    }
}

/// Scores candidates against one planned query.
pub(super) struct Scorer<'p> {
    plan: &'p Plan,
    /// Each term's inverse document frequency, by family.
    idf: HashMap<&'p str, f64>,
    /// The most a text could score on words.
    best_words: f64,
    mean_len: f64,
}

impl<'p> Scorer<'p> {
    /// A scorer for `plan` over `candidates` (whose mean length normalises BM25).
    pub(super) fn new(plan: &'p Plan, candidates: &[Words]) -> Self {
        let n = plan.total.max(1) as f64;
        let mut idf = HashMap::new();
        for term in &plan.terms {
            // A term that no fact holds still counts (as the rarest) should a text hold it.
            let df = (term.df.max(1) as f64).min(n);
            idf.insert(term.key.as_str(), (1.0 + (n - df + 0.5) / (df + 0.5)).ln());
        }
        let best_words = idf.values().sum::<f64>().max(f64::MIN_POSITIVE);
        let total_len: usize = candidates.iter().map(Words::len).sum();
        let mean_len = (total_len as f64 / candidates.len().max(1) as f64).max(1.0);
        Self {
            plan,
            idf,
            best_words,
            mean_len,
        }
    }

    /// The score of a text with `words`; see the module documentation.
    pub(super) fn score(&self, words: &Words) -> f64 {
        let norm = K1 * (1.0 - B + B * words.len() as f64 / self.mean_len);
        let mut sum = 0.0;
        for (key, idf) in &self.idf {
            let tf = TITLE_WEIGHT * count(&words.title, key) + count(&words.content, key);
            if tf > 0.0 {
                sum += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        // A text holding every term once, at the mean length, scores 1 on words.
        let words_score = sum / self.best_words;
        words_score + ORDER_WEIGHT * self.order(words)
    }

    /// The share of the query's consecutive word pairs that the text holds in the same order.
    fn order(&self, words: &Words) -> f64 {
        let query = &self.plan.words;
        if query.len() < 2 {
            return 0.0;
        }
        let held = query
            .windows(2)
            .filter(|pair| {
                [&words.title, &words.content]
                    .iter()
                    .any(|text| text.windows(2).any(|w| w == *pair && !w[0].is_empty()))
            })
            .count();
        held as f64 / (query.len() - 1) as f64
    }
}

/// The rowids of the `pool` facts holding the most weight of `plan`'s rare terms (the sum of the
/// inverse document frequencies of those they hold), newest first among equals.
pub(super) fn shortlist(plan: &Plan, pool: usize) -> Vec<i64> {
    let n = plan.total.max(1) as f64;
    let mut weight: HashMap<i64, f64> = HashMap::new();
    for term in plan.terms.iter().filter(|t| plan.rare(t)) {
        let idf = inverse_frequency(n, term.df);
        for &row in &term.rows {
            *weight.entry(row).or_default() += idf;
        }
    }
    let mut rows: Vec<(i64, f64)> = weight.into_iter().collect();
    rows.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
    rows.truncate(pool);
    rows.into_iter().map(|(row, _)| row).collect()
}

/// BM25's inverse document frequency of a term in `df` of `n` facts.
fn inverse_frequency(n: f64, df: i64) -> f64 {
    let df = (df as f64).min(n);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// The first two characters of a word (all of a shorter one).
fn start(word: &str) -> &str {
    word.char_indices().nth(2).map_or(word, |(i, _)| &word[..i])
}

fn count(text: &[String], key: &str) -> f64 {
    text.iter().filter(|w| *w == key).count() as f64
}

#[cfg(test)]
mod tests {
    use super::super::plan::Term;
    use super::*;

    fn plan(query: &[&str], terms: &[(&str, i64)]) -> Plan {
        Plan {
            words: query.iter().map(|w| stem::key(w)).collect(),
            said: query.iter().map(|w| (*w).to_owned()).collect(),
            terms: terms
                .iter()
                .map(|(w, df)| Term {
                    forms: vec![(*w).to_owned()],
                    key: stem::key(w),
                    df: *df,
                    rows: Vec::new(),
                })
                .collect(),
            total: 100_000,
            common: 1_000,
            sources: Vec::new(),
            any: None,
        }
    }

    fn words(title: &str, content: &str) -> Words {
        let keys = |text: &str| -> Vec<String> {
            text.split(' ')
                .filter(|w| !w.is_empty())
                .map(stem::key)
                .collect()
        };
        Words {
            title: keys(title),
            content: keys(content),
        }
    }

    #[test]
    fn a_rare_word_outweighs_a_common_one() {
        let plan = plan(&["zephyr", "file"], &[("zephyr", 3), ("file", 5_000)]);
        let rare = words("", "the zephyr scheduler wakes a task");
        let common = words("", "the file is closed when dropped");
        let scorer = Scorer::new(&plan, &[]);
        assert!(scorer.score(&rare) > scorer.score(&common));
    }

    #[test]
    fn other_word_forms_count_as_the_word() {
        let plan = plan(&["deploy", "fails"], &[("deploy", 10), ("fails", 10)]);
        let scorer = Scorer::new(&plan, &[]);
        let forms = scorer.score(&words("", "the deployment failed"));
        let same = scorer.score(&words("", "deploy fails"));
        assert!(forms > 0.9, "{forms}");
        assert!((forms - same).abs() < 0.2, "{forms} {same}");
    }

    #[test]
    fn word_order_breaks_a_tie_of_words_and_the_title_counts_more() {
        let plan = plan(&["lock", "the", "file"], &[("lock", 100), ("file", 100)]);
        let scorer = Scorer::new(&plan, &[]);
        let in_order = scorer.score(&words("", "we lock the file first"));
        let shuffled = scorer.score(&words("", "the file we lock first"));
        assert!(in_order > shuffled);
        let title = scorer.score(&words("lock", "the file we keep"));
        let content = scorer.score(&words("other", "the file we lock"));
        assert!(title > content);
    }
}
