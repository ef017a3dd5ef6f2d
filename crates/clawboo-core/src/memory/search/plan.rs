//! The full-text planner: what a query's words are worth, and where its candidates come from.
//!
//! Owns: the query's terms (its distinct content words, every word when it has no content word),
//! each with the words asked of the index (the word and, for a `y` family, its other stem:
//! `stem::forms`) and how many facts hold it, counted by SQLite only up to the count that makes a
//! term common (one fact in [`COMMON_SHARE`], between [`COMMON_AT_LEAST`] and [`COMMON_AT_MOST`]),
//! so planning costs little even for common words, in the same read that yields a rare term's
//! rows (kept newest first); spelling correction (`typo`) of a content word that no fact holds;
//! and the sources of candidates, each bounded:
//! 1. the facts holding the rare terms (whose rows were read while planning), best first by the
//!    rare terms they hold (`rank::shortlist`);
//! 2. the facts holding a rare term next to the word it has beside it in the query (`"the
//!    zephyr" OR "zephyr scheduler"`), newest first: when more facts hold a rare term than are
//!    shortlisted, those that say it as the query does;
//! 3. when some present term is common: the facts holding every present term, then (with three
//!    present terms or more) those holding all but one of them, newest first: a query often has
//!    a word its fact lacks (a question's "why", a word in another form). The all-but-one
//!    sources are read only when fewer facts than a source may read hold every term: a fact
//!    lacking a term mostly scores below one holding them all (BM25 adds a positive share per term
//!    held), so when enough hold every term, those that lack one seldom reach the top; each
//!    such source is an `AND` over long row lists, the costliest read of a query;
//! 4. the whole query as a phrase (stop words included; two words to [`MAX_PHRASE_WORDS`]),
//!    newest first: when no term is rare, and (read by `text`) when more facts hold every rare
//!    term than the shortlist keeps, since the shortlist then chooses among them by age and an
//!    older fact saying the whole query (which holds every rare term) would be left out. A phrase
//!    read costs more than a word's (FTS5 walks the stop words' long position lists), so it is
//!    read only then;
//! 5. when no term is rare: the facts holding any common term, newest first.
//!
//! Common terms are never ranked by the index (that would cost a scan of their rows) and never
//! read beyond a limit. Which candidate wins is `rank`'s business. Must never: put a query word
//! anywhere but in a bound `MATCH` expression.

use rusqlite::Connection;

use super::super::MemoryError;
use super::super::query::{self, is_stop_word};
use super::stem::{self, forms};
use super::typo;

/// A term in more than one fact in this many is common...
const COMMON_SHARE: i64 = 100;
/// ...and at least this many facts make it common...
const COMMON_AT_LEAST: i64 = 200;
/// ...and this many always do (so a term's rows cost the same at a million facts as at 200,000).
const COMMON_AT_MOST: i64 = 2_000;
/// At most this many of the commonest terms are asked of the index at once.
const MAX_COMMON_TERMS: usize = 4;
/// With more present terms than this, no term is left out in turn (each costs a query).
const MAX_LEFT_OUT: usize = 5;
/// A phrase of more words than this is not searched as a phrase.
const MAX_PHRASE_WORDS: usize = 12;

/// One distinct word of the query, as searched.
#[derive(Debug, Clone)]
pub(super) struct Term {
    /// The words asked of the index for it.
    pub(super) forms: Vec<String>,
    /// Its family (`stem::key`): what the ranking compares with a text's words.
    pub(super) key: String,
    /// How many facts hold it, up to `common + 1`.
    pub(super) df: i64,
    /// The rowids of the facts holding it, newest first, when it is rare (else empty).
    pub(super) rows: Vec<i64>,
}

/// Where more candidates come from: a `MATCH` expression whose rows are read newest first.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Source {
    pub(super) expression: String,
    /// Read only when the every-word source before it found fewer facts than it may read: a
    /// source of facts lacking a word (all but one present term).
    pub(super) lacks_a_word: bool,
}

impl Source {
    pub(super) fn of(expression: String) -> Self {
        Self {
            expression,
            lacks_a_word: false,
        }
    }
}

/// A planned query.
#[derive(Debug)]
pub(super) struct Plan {
    /// The family of every word of the query, in order, stop words included (spelling
    /// corrected): what word order is judged on.
    pub(super) words: Vec<String>,
    /// The words of the query in order, spelling corrected, as the index is asked for them.
    pub(super) said: Vec<String>,
    /// The terms the ranking weighs.
    pub(super) terms: Vec<Term>,
    /// How many facts the store holds (its highest rowid).
    pub(super) total: i64,
    /// The count above which a term is common.
    pub(super) common: i64,
    /// The whole query as a phrase (stop words included), when it has two words or more and not
    /// too many: a source when no term is rare, and read beside the rare terms' rows when more
    /// facts hold every rare term than are shortlisted (`text`).
    pub(super) phrase: Option<String>,
    /// The sources beside the rare terms' rows, in the order they are read.
    pub(super) sources: Vec<Source>,
    /// Any term in any form, as typed or corrected, for the procedures (few enough to rank
    /// whatever they hold; a word no fact holds may still be in a procedure).
    pub(super) any: Option<String>,
}

impl Plan {
    /// Whether `term` is in few enough facts for all of them to be candidates.
    pub(super) fn rare(&self, term: &Term) -> bool {
        is_rare(term.df, self.common)
    }
}

/// Whether a term that `df` facts hold is rare when more than `common` make a term common.
fn is_rare(df: i64, common: i64) -> bool {
    df > 0 && df <= common
}

/// Plans `query`; `None` when it has no word.
pub(super) fn plan(conn: &Connection, query: &str) -> Result<Option<Plan>, MemoryError> {
    let mut words = query::words(query);
    let mut distinct: Vec<String> = Vec::new();
    for word in &words {
        if !distinct.contains(word) {
            distinct.push(word.clone());
        }
    }
    if distinct.is_empty() {
        return Ok(None);
    }
    let mut content: Vec<String> = distinct
        .iter()
        .filter(|w| !is_stop_word(w))
        .cloned()
        .collect();
    if content.is_empty() {
        content = distinct;
    }
    let total: i64 = conn
        .prepare_cached("SELECT coalesce(max(rowid), 0) FROM memory_facts")?
        .query_row([], |r| r.get(0))?;
    let common = (total / COMMON_SHARE).clamp(COMMON_AT_LEAST, COMMON_AT_MOST);
    let mut terms = Vec::with_capacity(content.len());
    let mut asked: Vec<String> = Vec::new();
    for word in content {
        let mut term = Term::read(conn, forms(&word), stem::key(&word), common)?;
        asked.extend(term.forms.iter().cloned());
        if term.df == 0
            && let Some(fixed) = typo::correct(conn, &word)?
        {
            for w in words.iter_mut().filter(|w| **w == word) {
                w.clone_from(&fixed.word);
            }
            term = Term::read(
                conn,
                vec![fixed.word.clone()],
                stem::key(&fixed.word),
                common,
            )?;
            asked.push(fixed.word);
        }
        terms.push(term);
    }
    let mut plan = Plan::of(words, terms, total, common);
    plan.any = Some(query::match_any(&asked));
    Ok(Some(plan))
}

impl Plan {
    /// The plan of a query that `said` (spelling corrected) with `terms`, over `total` facts of
    /// which more than `common` make a term common; its sources follow from them.
    fn of(said: Vec<String>, terms: Vec<Term>, total: i64, common: i64) -> Self {
        let mut plan = Plan {
            words: said.iter().map(|w| stem::key(w)).collect(),
            phrase: (2..=MAX_PHRASE_WORDS)
                .contains(&said.len())
                .then(|| phrase(&said)),
            said,
            terms,
            total,
            common,
            sources: Vec::new(),
            any: None,
        };
        plan.sources = sources(&plan);
        plan
    }

    /// The plan of `query` with `terms` over 100,000 facts, 1,000 making a term common.
    #[cfg(test)]
    pub(super) fn for_test(query: &str, terms: Vec<Term>) -> Self {
        Self::of(query::words(query), terms, 100_000, 1_000)
    }
}

impl Term {
    /// The term matched by `forms`: how many facts hold it, counted by SQLite up to one more than
    /// `common`, and when that makes it rare, its rows, newest first (one statement: the rowids
    /// leave SQLite as one list, parsed only for a rare term).
    fn read(
        conn: &Connection,
        forms: Vec<String>,
        key: String,
        common: i64,
    ) -> Result<Self, MemoryError> {
        let expression = query::match_any(&forms);
        // One read: the count, and the rows as a list that is only parsed when they are few.
        let (df, list): (i64, Option<String>) = conn
            .prepare_cached(
                "SELECT count(*), group_concat(-rowid) FROM (SELECT rowid
                 FROM clawboo_facts_newest_fts WHERE clawboo_facts_newest_fts MATCH ?1
                 ORDER BY rowid LIMIT ?2)",
            )?
            .query_row(rusqlite::params![expression, common + 1], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        let rows = match list {
            // The index's forward order is newest first (its rowids are the facts' negated).
            Some(list) if is_rare(df, common) => {
                list.split(',').filter_map(|r| r.parse().ok()).collect()
            }
            _ => Vec::new(),
        };
        Ok(Self {
            forms,
            key,
            df,
            rows,
        })
    }
}

/// `(a OR a') OR b …`: rows holding any of `terms` in any of their forms.
fn any_of(terms: &[&Term]) -> String {
    let forms: Vec<&String> = terms.iter().flat_map(|t| &t.forms).collect();
    query::match_any(&forms)
}

/// `(a OR a') AND b …`: rows holding every one of `terms`, each in any of its forms.
fn all_of(terms: &[&Term]) -> String {
    terms
        .iter()
        .map(|t| format!("({})", query::match_any(&t.forms)))
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// `"a b …"`: one quoted string is a phrase, the words next to each other in this order.
fn phrase(words: &[String]) -> String {
    format!("\"{}\"", words.join(" ").replace('"', ""))
}

/// The sources for a plan's terms; see the module documentation.
fn sources(plan: &Plan) -> Vec<Source> {
    let rare: Vec<&str> = plan
        .terms
        .iter()
        .filter(|t| plan.rare(t))
        .map(|t| t.key.as_str())
        .collect();
    let common: Vec<&Term> = plan.terms.iter().filter(|t| t.df > plan.common).collect();
    let present: Vec<&Term> = plan.terms.iter().filter(|t| t.df > 0).collect();
    let mut sources = Vec::new();
    let pairs: Vec<String> = plan
        .said
        .windows(2)
        .zip(plan.words.windows(2))
        .filter(|(_, keys)| keys.iter().any(|k| rare.contains(&k.as_str())))
        .map(|(said, _)| phrase(said))
        .collect();
    if !pairs.is_empty() {
        sources.push(Source::of(pairs.join(" OR ")));
    }
    if common.is_empty() {
        return sources;
    }
    if present.len() >= 2 {
        sources.push(Source::of(all_of(&present)));
    }
    if (3..=MAX_LEFT_OUT).contains(&present.len()) {
        for left_out in 0..present.len() {
            let others: Vec<&Term> = present
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != left_out)
                .map(|(_, t)| *t)
                .collect();
            sources.push(Source {
                expression: all_of(&others),
                lacks_a_word: true,
            });
        }
    }
    if rare.is_empty() {
        sources.extend(plan.phrase.clone().map(Source::of));
        sources.push(Source::of(any_of(
            &common[..common.len().min(MAX_COMMON_TERMS)],
        )));
    }
    sources
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(word: &str, df: i64) -> Term {
        Term {
            forms: forms(word),
            key: stem::key(word),
            df,
            rows: Vec::new(),
        }
    }

    fn planned(terms: Vec<Term>, query: &str) -> Vec<String> {
        let plan = Plan::for_test(query, terms);
        plan.sources.into_iter().map(|s| s.expression).collect()
    }

    #[test]
    fn rare_terms_are_read_beside_their_neighbours_and_with_the_common_ones_newest_first() {
        assert_eq!(
            planned(
                vec![term("zephyr", 3), term("deadline", 40)],
                "zephyr deadline"
            ),
            [r#""zephyr deadline""#]
        );
        assert_eq!(
            planned(
                vec![term("file", 5_000), term("deployed", 12)],
                "the file deployed"
            ),
            [
                r#""file deployed""#,
                r#"("file") AND ("deployed" OR "deployment")"#
            ]
        );
    }

    #[test]
    fn facts_lacking_one_word_are_a_source_read_only_after_the_every_word_source() {
        let plan = Plan::for_test(
            "why does the deploy lock fail",
            vec![
                term("deploy", 5_000),
                term("lock", 4_000),
                term("fail", 3_000),
            ],
        );
        let read: Vec<(String, bool)> = plan
            .sources
            .iter()
            .cloned()
            .map(|s| (s.expression, s.lacks_a_word))
            .collect();
        assert_eq!(
            read[0],
            (all_of(&plan.terms.iter().collect::<Vec<_>>()), false)
        );
        assert_eq!(read[1..4].iter().filter(|(_, lacks)| *lacks).count(), 3);
        assert!(
            read[1].0.contains("lock") && !read[1].0.contains("deploy"),
            "{read:?}"
        );
    }

    #[test]
    fn a_query_without_a_rare_term_reads_its_phrase_and_its_common_terms_newest_first() {
        assert_eq!(
            planned(
                vec![term("open", 3_000), term("file", 5_000)],
                "open the file"
            ),
            [
                r#"("open") AND ("file")"#,
                r#""open the file""#,
                r#""open" OR "file""#
            ]
        );
        assert_eq!(planned(vec![term("file", 5_000)], "file"), [r#""file""#]);
        assert!(planned(vec![term("nothing", 0)], "nothing").is_empty());
    }
}
