//! The full-text planner: what a query's words are worth, and where its candidates come from.
//!
//! Owns: the query's terms (its distinct content words, every word when it has no content word),
//! each with the words asked of the index (the word and, for a `y` family, its other stem:
//! `stem::forms`) and how many facts hold it, counted by SQLite only up to the count that makes a
//! term common (one fact in [`COMMON_SHARE`], between [`COMMON_AT_LEAST`] and [`COMMON_AT_MOST`]),
//! so planning costs little even for common words, in the same read that yields a rare term's
//! rows (kept newest first); how many facts hold a common term or a stop word, estimated from how
//! densely it holds the newest facts ([`Counted`]; a stop word's from its [`STOP_WORD_SAMPLE`]
//! newest), for the ranking's weights; spelling correction (`typo`) of a content word that no
//! fact holds; and the sources of candidates, each bounded:
//! 1. the facts holding the rare terms (whose rows were read while planning), best first by the
//!    rare terms they hold (`rank::shortlist`); beside them, a few of the facts saying a common
//!    term in a form few facts say, as the query says it (`worked`, when the family of `work` is
//!    common): a family's count hides how rare one of its forms is, and a paraphrase or a question
//!    keeps some of its fact's words as the fact says them. Those rows are read from the index
//!    without stems (`memory_facts_fts`), for a common term only, up to the count that makes a
//!    term common, and weigh in choosing the few, never in the ranking. A long query's rarest
//!    common terms are read whole and count as rare here (`widen`): no source leaves its terms
//!    out in turn, and the facts holding the most of its words are those it asks for;
//! 2. the facts holding a rare term next to the word it has beside it in the query (`"the
//!    zephyr" OR "zephyr scheduler"`), newest first: when the shortlist left out facts holding
//!    one of those rare terms, those that say it as the query does;
//! 3. when some present term is common: the facts holding every present term, then (with three
//!    present terms or more) those holding all but one of them, newest first: a query often has a
//!    word its fact lacks (a question's "why", a word in another form). The all-but-one sources are
//!    read only when fewer facts than a source may read hold every term: a fact lacking a term
//!    mostly scores below one holding them all (BM25 adds a positive share per term held), so when
//!    enough hold every term, those that lack one seldom reach the top; each such source is an
//!    `AND` over long row lists, the costliest read of a query (and one holding a rare term whose
//!    every fact the shortlist kept is not read at all). Under the same condition, the facts
//!    holding a common term next to a word it has beside it in the query: a paraphrase or a
//!    question keeps some of its fact's words in their order (`"at runtime"` of `format arguments
//!    at runtime`) when it changes the others. And, under the same condition, with four present
//!    terms or more: the facts holding a rare term and a common one anywhere (`(zephyr AND deploy)
//!    OR …`), newest first. A paraphrase that says two of its fact's words otherwise leaves the
//!    fact two terms short, in no all-but-one source; if the rare term it holds is one of many
//!    facts' only rare term, the shortlist chose among those by age, and the query's common term is
//!    what sets the fact apart (FTS5 answers an `AND` with a rare term by skipping through the
//!    common term's long list to the rare term's few rows). When no fact holds every present term,
//!    the facts saying three consecutive words of the query that hold a common term and no rare one
//!    (fewer facts say three words than two, so the newest of them are more often the fact
//!    paraphrased, which keeps runs of its words and changes the words between them); a run with a
//!    rare term is left to the rare pairs and the shortlist, and a run holding every present term
//!    to the every-term source;
//! 4. when more facts hold every present term than a source reads (or one term is present and
//!    common): the facts holding the query's other words too (its stop words but a question's
//!    opening, `without` of `what is the reference without consuming`), newest first. The
//!    every-term source chose among the facts holding the terms by age; those saying more of the
//!    query's words are likelier to be the one it asks for, and fewer. Stop words choose no
//!    candidate otherwise: half the facts hold `the`;
//! 5. the whole query as a phrase (stop words included, the opening of a question asked with a
//!    wh-word not: a fact says `reset the pool`, seldom `how do I`; two words to
//!    [`MAX_PHRASE_WORDS`]), newest first: when no term is rare and more facts hold every present
//!    term than a source reads (a fact saying the whole query holds every term, so when the
//!    every-term source read them all, it read those too), and (read by `text`) when more facts
//!    hold every rare term than the shortlist keeps, since the shortlist then chooses among them by
//!    age and an older fact saying the whole query would be left out. A phrase read costs more than
//!    a word's (FTS5 walks the stop words' long position lists, for every row of the rarest word
//!    when few facts say the phrase), so it is read only then, and through a cheaper superset of it
//!    when it has one (its runs of content words near each other, [`Plan::phrase_superset`]); which
//!    source is read after which is [`Role`]'s, and a source whose every fact holds a rare term the
//!    shortlist kept every fact of is never read ([`HoldsRare`]);
//! 6. when no term is rare: the facts holding any common term, newest first.
//!
//! What the index answered about words (counts, rows, corrections) is kept for the next queries
//! while no connection has written to the file ([`WordCounts`]); the terms' reads and the stop
//! words' counts not kept yet are read on both of a search's connections at once, when it has two
//! (`reads::each_on_either`).
//!
//! Common terms are never ranked by the index (that would cost a scan of their rows) and never
//! read beyond a limit. Which candidate wins is `rank`'s business. Must never: put a query word
//! anywhere but in a bound `MATCH` expression.

use rusqlite::Connection;

use super::super::MemoryError;
use super::super::query::{self, is_stop_word};
use super::counts::{Read, WordCounts};
use super::reads::Helper;
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
/// With more present terms than this, no term is left out in turn (each costs a query); the
/// rarest common terms are read whole instead ([`widen`]).
const MAX_LEFT_OUT: usize = 5;
/// How many rows a long query's widened terms hold in all, at most, in counts that make a term
/// common ([`widen`]): 80,000 at a million facts, about three milliseconds of reading shared by
/// a search's two connections.
const WIDENED_COMMONS: i64 = 40;
/// A phrase of more words than this is not searched as a phrase.
const MAX_PHRASE_WORDS: usize = 12;
/// How many of the newest facts holding a stop word are read to estimate how many hold it (the
/// estimate's error is about one over the square root of this).
const STOP_WORD_SAMPLE: i64 = 128;
/// How many facts holding a spelling correction beside its query neighbours are counted, at most,
/// to choose among equally close corrections.
const NEIGHBOUR_SAMPLE: i64 = 100;

/// One distinct word of the query, as searched.
#[derive(Debug, Clone)]
pub(super) struct Term {
    /// The words asked of the index for it.
    pub(super) forms: Vec<String>,
    /// Its family (`stem::key`): what the ranking compares with a text's words.
    pub(super) key: String,
    /// How many facts hold it, up to `common + 1` (exactly, when [`widen`] read it whole).
    pub(super) df: i64,
    /// How many facts hold it: `df` when it is rare, else estimated ([`Counted`]).
    pub(super) facts: f64,
    /// The rowids of the facts holding it, newest first, when it is rare or was read whole
    /// ([`widen`]); else empty.
    pub(super) rows: Vec<i64>,
    /// When it is common but the word as the query says it is rare (`worked` of `work`): the
    /// rowids of the facts saying that form, newest first (else empty).
    pub(super) said_rows: Vec<i64>,
}

/// Where more candidates come from: a `MATCH` expression whose rows are read newest first.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Source {
    pub(super) expression: String,
    /// What it is to the sources read before it, which decides whether it is read.
    pub(super) role: Role,
    /// Which rare terms every fact it matches holds: when the shortlist kept every fact holding
    /// them, it can find nothing new and is not read.
    pub(super) holds: HoldsRare,
}

/// What a source is to the sources read before it, which decides whether it is read (see
/// [`Role::is_read`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Role {
    /// Read whatever the sources before it found (a source of facts none before could have read,
    /// unless the shortlist holds them: [`HoldsRare`]).
    Always,
    /// The facts holding every present term. It reads at most a pool of facts, newest first, so
    /// when it found fewer, it read every such fact.
    EveryTerm,
    /// Facts lacking a word (all but one present term, or common terms beside their
    /// neighbours): read unless the every-term source found as many facts as it may read, since
    /// a fact lacking a term mostly scores below one holding them all.
    LacksAWord,
    /// The whole query as a phrase: every fact saying it holds every present term, so it is
    /// read only when the every-term source (when there is one) found as many facts as it may
    /// read and so may have left some out.
    WholeQuery,
    /// The facts holding every present term and every other word of the query (its stop words,
    /// but a question's opening): read when the every-term source found as many facts as it may
    /// read (or the plan has none), since it then chose among them by age alone, and those
    /// saying the query's other words too are likelier to say what it asks.
    EveryWord,
    /// Runs of three query words: read only when no fact holds every present term (or the plan
    /// has no every-term source). Then the facts most like the query each lack one of its words,
    /// and a phrase read costs more than a word's, so it is not paid for when facts holding every
    /// term were found.
    NoFactHoldsEveryTerm,
}

/// Which of the query's rare terms every fact a source matches holds.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum HoldsRare {
    /// None for sure: it may match facts holding no rare term.
    Nothing,
    /// Each of these (an `AND` of terms).
    Each(Vec<String>),
    /// One of these at least (an `OR` of pairs, each holding one).
    OneOf(Vec<String>),
}

impl HoldsRare {
    /// Whether every fact a source of this kind matches holds a rare term whose every fact the
    /// shortlist kept (`wholly_kept`, their families): then the source finds nothing new.
    fn all_kept(&self, wholly_kept: &[String]) -> bool {
        let kept = |key: &String| wholly_kept.contains(key);
        match self {
            HoldsRare::Nothing => false,
            HoldsRare::Each(keys) => keys.iter().any(kept),
            HoldsRare::OneOf(keys) => !keys.is_empty() && keys.iter().all(kept),
        }
    }
}

/// What the reads before a source found, as far as [`Source::is_read`] asks.
#[derive(Debug, Clone, Copy)]
pub(super) struct FoundSoFar<'a> {
    /// The rare terms every fact holding which the shortlist kept (`rank::Shortlist::wholly_kept`).
    pub(super) wholly_kept: &'a [String],
    /// What the every-term source found (`None` before it was read, or when the plan has none).
    pub(super) every_term: Option<EveryTermFound>,
}

/// How many facts the every-term source found, against how many a source may read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EveryTermFound {
    /// None: no fact holds every present term.
    Nothing,
    /// Fewer than it may read: every fact holding every present term.
    Fewer,
    /// As many as it may read: more facts may hold every present term.
    AsMany,
}

impl EveryTermFound {
    /// What finding `found` facts says when a source reads at most `most`.
    pub(super) fn of(found: usize, most: usize) -> Self {
        match found {
            0 => Self::Nothing,
            n if n < most => Self::Fewer,
            _ => Self::AsMany,
        }
    }
}

impl Role {
    /// Whether reading a source of this role depends on what the every-term source
    /// found, so a reader waits for it ([`Role::is_read`] asks `found.every_term`).
    pub(super) fn waits_for_every_term(self) -> bool {
        match self {
            Role::Always | Role::EveryTerm => false,
            Role::LacksAWord | Role::EveryWord | Role::WholeQuery | Role::NoFactHoldsEveryTerm => {
                true
            }
        }
    }

    /// Whether a source of this role is read after what `found` says.
    pub(super) fn is_read(self, found: FoundSoFar<'_>) -> bool {
        match self {
            Role::Always | Role::EveryTerm => true,
            Role::LacksAWord => found.every_term != Some(EveryTermFound::AsMany),
            Role::EveryWord | Role::WholeQuery => !matches!(
                found.every_term,
                Some(EveryTermFound::Nothing | EveryTermFound::Fewer)
            ),
            Role::NoFactHoldsEveryTerm => {
                matches!(found.every_term, None | Some(EveryTermFound::Nothing))
            }
        }
    }
}

impl Source {
    fn new(expression: String, role: Role, holds: HoldsRare) -> Self {
        Self {
            expression,
            role,
            holds,
        }
    }

    /// Whether this source is read after what `found` says: its role's rule, and only when it
    /// may match a fact the shortlist left out.
    pub(super) fn is_read(&self, found: FoundSoFar<'_>) -> bool {
        self.role.is_read(found) && !self.holds.all_kept(found.wholly_kept)
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
    /// How many words of `said` open it as a question ([`question_opening`]): they say what kind
    /// of answer is wanted, not what it holds.
    pub(super) opening: usize,
    /// Where the words of `said` that a fact saying the query would say begin: after a question's
    /// opening asked with a wh-word ([`asked_from`]). The phrase is read from there.
    pub(super) phrase_from: usize,
    /// The terms the ranking weighs.
    pub(super) terms: Vec<Term>,
    /// The query's stop words that are not terms, each family with how many facts hold it
    /// (estimated, [`Counted`]): the ranking weighs them too, but they choose no candidate.
    pub(super) stop_words: Vec<(String, f64)>,
    /// How many facts the store holds (its highest rowid).
    pub(super) total: i64,
    /// The count above which a term is common.
    pub(super) common: i64,
    /// The whole query as a phrase from [`Plan::phrase_from`] on (stop words included, the opening
    /// of a question asked with a wh-word not), when it has two words or more and not too many: a
    /// source when no term is rare, and read beside the rare terms' rows when more facts hold
    /// every rare term than are shortlisted (`text`).
    pub(super) phrase: Option<String>,
    /// A cheaper read holding every fact that says [`Plan::phrase`], when there is one: its runs
    /// of content words near each other ([`phrase_superset`]). `text` reads its newest facts and
    /// keeps those saying the phrase, instead of asking the index for the phrase itself.
    pub(super) phrase_superset: Option<String>,
    /// The sources beside the rare terms' rows, in the order they are read.
    pub(super) sources: Vec<Source>,
    /// Any term in any form, as typed or corrected, for the procedures (few enough to rank
    /// whatever they hold; a word no fact holds may still be in a procedure).
    pub(super) any: Option<String>,
}

impl Plan {
    /// Whether `term` is in few enough facts for all of them to be candidates: counted so, or
    /// read whole for a long query ([`widen`]).
    pub(super) fn rare(&self, term: &Term) -> bool {
        is_rare(term.df, self.common) || !term.rows.is_empty()
    }
}

/// Whether a term that `df` facts hold is rare when more than `common` make a term common.
fn is_rare(df: i64, common: i64) -> bool {
    df > 0 && df <= common
}

/// Plans `query`, reading the index through `counts`; `None` when it has no word.
pub(super) fn plan(
    conn: &Connection,
    second: Option<&Helper<Connection>>,
    counts: &mut WordCounts,
    query: &str,
) -> Result<Option<Plan>, MemoryError> {
    counts.forget_unless_current(conn)?;
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
    // Each term's read and each stop word's count is independent of the others': those not kept
    // are read on both connections at once (with `second`), and the reads below find them kept.
    // (A stop word is counted unless it opens a question; a corrected term is read below.)
    let opening = question_opening(&words);
    let term_reads = content
        .iter()
        .map(|word| (common + 1, Read::Rows, query::match_any(&forms(word))));
    let stop_word_counts = words
        .iter()
        .skip(opening)
        .filter(|word| !content.contains(word))
        .map(|word| {
            (
                STOP_WORD_SAMPLE,
                Read::Count,
                query::match_any(&forms(word)),
            )
        });
    counts.read_ahead(conn, second, term_reads.chain(stop_word_counts).collect())?;
    // Then, the same way, each common term's form as the query says it (`Term::read_said`).
    let said_reads = content
        .iter()
        .filter(|word| {
            counts
                .kept(common + 1, Read::Rows, &query::match_any(&forms(word)))
                .is_some_and(|read| read.count > common)
        })
        .map(|word| said_ask(word, common))
        .collect();
    counts.read_ahead(conn, second, said_reads)?;
    let mut terms = Vec::with_capacity(content.len());
    let mut asked: Vec<String> = Vec::new();
    for word in content {
        let mut term = Term::read(
            conn,
            counts,
            forms(&word),
            stem::key(&word),
            (total, common),
        )?;
        term.read_said(conn, counts, &word, common)?;
        asked.extend(term.forms.iter().cloned());
        let corrections = if term.df == 0 {
            counts.corrections(conn, &word)?
        } else {
            Vec::new()
        };
        if let Some(fixed) = best_said(conn, counts, &words, &word, corrections)? {
            for w in words.iter_mut().filter(|w| **w == word) {
                w.clone_from(&fixed.word);
            }
            term = Term::read(
                conn,
                counts,
                vec![fixed.word.clone()],
                stem::key(&fixed.word),
                (total, common),
            )?;
            asked.push(fixed.word);
        }
        terms.push(term);
    }
    widen(conn, second, counts, &mut terms, common)?;
    let mut plan = Plan::of(words, terms, total, common);
    plan.any = Some(query::match_any(&asked));
    plan.weigh_stop_words(|said| {
        counts
            .counted(
                conn,
                &query::match_any(&forms(said)),
                STOP_WORD_SAMPLE,
                Read::Count,
            )
            .map(|c| c.facts(total))
    })?;
    Ok(Some(plan))
}

/// Reads whole the rarest common terms of a long query (more present terms than
/// [`MAX_LEFT_OUT`]: no source leaves a term out in turn for it), rarest first, while all their
/// rows together stay within [`WIDENED_COMMONS`] times `common`, and makes them rare: their rows
/// join the shortlist's, which keeps the facts holding the most weight of the query's terms. A
/// long question names most of its fact's words beside words of its own (`what is the best way
/// to`), so no fact holds every term and the facts holding the most of them are the ones it asks
/// for; without this, only the newest facts holding a few of them would be read. The counts of
/// the terms' first reads choose which are read (on both connections at once, with `second`);
/// a term found to hold more rows than are left ends the widening.
fn widen(
    conn: &Connection,
    second: Option<&Helper<Connection>>,
    counts: &mut WordCounts,
    terms: &mut [Term],
    common: i64,
) -> Result<(), MemoryError> {
    if terms.iter().filter(|t| t.df > 0).count() <= MAX_LEFT_OUT {
        return Ok(());
    }
    let budget = WIDENED_COMMONS * common;
    let mut rarest: Vec<usize> = (0..terms.len()).filter(|&i| terms[i].df > common).collect();
    rarest.sort_by(|&a, &b| terms[a].facts.total_cmp(&terms[b].facts));
    // Estimated counts may be low by half: a term expected a little past the budget is asked too.
    let mut expected = 0.0;
    rarest.retain(|&i| {
        expected += terms[i].facts;
        expected <= budget as f64 * 1.5
    });
    let asks: Vec<(i64, Read, String)> = rarest
        .iter()
        .map(|&i| (budget + 1, Read::AllRows, query::match_any(&terms[i].forms)))
        .collect();
    counts.read_ahead(conn, second, asks.clone())?;
    let mut left = budget;
    for (i, (limit, read, expression)) in rarest.into_iter().zip(asks) {
        let read = counts.counted(conn, &expression, limit, read)?;
        if read.cut || read.count > left {
            break;
        }
        let term = &mut terms[i];
        term.df = read.count;
        term.facts = read.count as f64;
        term.rows.clone_from(&read.rows);
        term.said_rows.clear();
        left -= read.count;
    }
    Ok(())
}

impl Plan {
    /// The plan of a query that `said` (spelling corrected) with `terms`, over `total` facts of
    /// which more than `common` make a term common; its sources follow from them.
    fn of(said: Vec<String>, terms: Vec<Term>, total: i64, common: i64) -> Self {
        let opening = question_opening(&said);
        let phrase_from = asked_from(&said, opening);
        let asked = &said[phrase_from..];
        let phrased = (2..=MAX_PHRASE_WORDS).contains(&asked.len());
        let mut plan = Plan {
            words: said.iter().map(|w| stem::key(w)).collect(),
            phrase: phrased.then(|| phrase(asked)),
            phrase_superset: phrased.then(|| phrase_superset(asked)).flatten(),
            opening,
            phrase_from,
            said,
            terms,
            stop_words: Vec::new(),
            total,
            common,
            sources: Vec::new(),
            any: None,
        };
        plan.sources = sources(&plan);
        plan
    }

    /// The plan of `query` with `terms` over 100,000 facts, 1,000 making a term common, and each
    /// of its other words held by half the facts.
    #[cfg(test)]
    pub(super) fn for_test(query: &str, terms: Vec<Term>) -> Self {
        let mut plan = Self::of(query::words(query), terms, 100_000, 1_000);
        plan.weigh_stop_words(|_| Ok::<_, ()>(50_000.0)).ok();
        plan
    }

    /// Fills `stop_words`: how many facts hold each word of the query that is not a term, from
    /// `facts_holding` (given the word as said), except a question's opening words ("how do I",
    /// "why does"), which say what kind of answer is wanted, not what it holds: they count as a
    /// word in half the facts, whatever the facts hold.
    fn weigh_stop_words<E>(
        &mut self,
        mut facts_holding: impl FnMut(&str) -> Result<f64, E>,
    ) -> Result<(), E> {
        for (at, (said, key)) in self.said.iter().zip(&self.words).enumerate() {
            let weighed = self.terms.iter().any(|t| t.key == *key)
                || self.stop_words.iter().any(|(k, _)| k == key);
            if !weighed {
                let facts = if at < self.opening {
                    self.total as f64 / 2.0
                } else {
                    facts_holding(said)?
                };
                self.stop_words.push((key.clone(), facts));
            }
        }
        Ok(())
    }
}

impl Term {
    /// The term matched by `forms` among `total` facts: how many facts hold it, counted by SQLite
    /// up to one more than `common` (and estimated beyond), and when that makes it rare, its rows,
    /// newest first.
    fn read(
        conn: &Connection,
        counts: &mut WordCounts,
        forms: Vec<String>,
        key: String,
        (total, common): (i64, i64),
    ) -> Result<Self, MemoryError> {
        let counted = counts.counted(conn, &query::match_any(&forms), common + 1, Read::Rows)?;
        let rows = if is_rare(counted.count, common) {
            counted.rows.clone()
        } else {
            Vec::new()
        };
        Ok(Self {
            forms,
            key,
            df: counted.count,
            facts: counted.facts(total),
            rows,
            said_rows: Vec::new(),
        })
    }

    /// Reads [`Term::said_rows`] when the term is common: the facts saying `said` (the word as
    /// the query says it) when at most `common` do.
    fn read_said(
        &mut self,
        conn: &Connection,
        counts: &mut WordCounts,
        said: &str,
        common: i64,
    ) -> Result<(), MemoryError> {
        if self.df <= common {
            return Ok(());
        }
        let (limit, ask, expression) = said_ask(said, common);
        let read = counts.counted(conn, &expression, limit, ask)?;
        if is_rare(read.count, common) {
            self.said_rows.clone_from(&read.rows);
        }
        Ok(())
    }
}

/// The read of the facts saying `word` as said, up to one more than `common`
/// ([`Term::read_said`], and ahead of it in [`plan`]).
fn said_ask(word: &str, common: i64) -> (i64, Read, String) {
    (common + 1, Read::SaidRows, query::match_any(&[word]))
}

/// Of equally close `corrections` of `word` (most facts first), the one that most facts hold
/// beside a word the query has beside `word` (`tracking issue`, not `tracing issue`), among the
/// first [`NEIGHBOUR_SAMPLE`] newest; the first when none tells them apart.
fn best_said(
    conn: &Connection,
    counts: &mut WordCounts,
    said: &[String],
    word: &str,
    corrections: Vec<typo::Fixed>,
) -> Result<Option<typo::Fixed>, MemoryError> {
    if corrections.len() < 2 {
        return Ok(corrections.into_iter().next());
    }
    let mut best: Option<(i64, typo::Fixed)> = None;
    for fixed in corrections {
        let mut pairs = Vec::new();
        for (at, _) in said.iter().enumerate().filter(|(_, w)| *w == word) {
            if at > 0 {
                pairs.push(phrase(&[said[at - 1].clone(), fixed.word.clone()]));
            }
            if let Some(next) = said.get(at + 1) {
                pairs.push(phrase(&[fixed.word.clone(), next.clone()]));
            }
        }
        let beside = if pairs.is_empty() {
            0
        } else {
            counts
                .counted(conn, &pairs.join(" OR "), NEIGHBOUR_SAMPLE, Read::Count)?
                .count
        };
        if best.as_ref().is_none_or(|(b, _)| beside > *b) {
            best = Some((beside, fixed));
        }
    }
    Ok(best.map(|(_, fixed)| fixed))
}

/// How many words open `said` as a question: an interrogative first word and the stop words
/// after it ("how do i", "what is the"), or none.
fn question_opening(said: &[String]) -> usize {
    const ASKING: &[&str] = &[
        "are", "can", "could", "did", "do", "does", "how", "is", "should", "was", "were", "what",
        "when", "where", "which", "who", "whom", "why", "will", "would",
    ];
    match said.first() {
        Some(first) if ASKING.contains(&first.as_str()) => {
            said.iter().take_while(|w| is_stop_word(w)).count()
        }
        _ => 0,
    }
}

/// Where the words of `said`, opened by `opening` words ([`question_opening`]), that its fact
/// would say begin: after the opening of a question asked with a wh-word ("how do I reset the
/// pool", "what is the"), which a fact seldom says. An opening of `can`, `is` or `does` is kept: a
/// run of a fact's words starts so as often ("is the value of", "can be used to").
fn asked_from(said: &[String], opening: usize) -> usize {
    const WH: &[&str] = &[
        "how", "what", "when", "where", "which", "who", "whom", "why",
    ];
    match said.first() {
        Some(first) if WH.contains(&first.as_str()) => opening,
        _ => 0,
    }
}

/// `(a OR a') OR b …`: rows holding any of `terms` in any of their forms.
fn any_of(terms: &[&Term]) -> String {
    let forms: Vec<&String> = terms.iter().flat_map(|t| &t.forms).collect();
    query::match_any(&forms)
}

/// `(a OR a') AND b …`: rows holding every one of `terms`, each in any of its forms.
fn all_of(terms: &[&Term]) -> String {
    all_forms_of(terms.iter().map(|t| t.forms.as_slice()))
}

/// `(a OR a') AND b …`: rows holding a word of each of `groups` (each a word's forms).
fn all_forms_of<'w>(groups: impl Iterator<Item = &'w [String]>) -> String {
    groups
        .map(|forms| format!("({})", query::match_any(forms)))
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// `"a b …"`: one quoted string is a phrase, the words next to each other in this order.
fn phrase(words: &[String]) -> String {
    format!("\"{}\"", words.join(" ").replace('"', ""))
}

/// The runs of content words of `said` (what lies between its stop words), each a phrase, as
/// one `NEAR` group spanning at most `said`'s length: every fact saying `said` as a phrase
/// matches it. FTS5 reads it from the content words' lists alone, where the phrase costs a
/// walk of every stop word's (long) list too. `None` when `said` has no stop word (the phrase
/// is then as cheap) or fewer than two runs: one run near itself is every fact holding it,
/// often more than a read takes, and the phrase would be read after all.
fn phrase_superset(said: &[String]) -> Option<String> {
    let mut runs: Vec<Vec<String>> = Vec::new();
    let mut in_run = false;
    for word in said {
        if is_stop_word(word) {
            in_run = false;
        } else if in_run && let Some(run) = runs.last_mut() {
            run.push(word.clone());
        } else {
            runs.push(vec![word.clone()]);
            in_run = true;
        }
    }
    let stop_words = said.len() - runs.iter().map(Vec::len).sum::<usize>();
    if stop_words == 0 || runs.len() < 2 {
        return None;
    }
    // FTS5 counts the tokens between the first run and the last, those of the runs between
    // included: never more than `said`'s length.
    let runs: Vec<String> = runs.iter().map(|run| phrase(run)).collect();
    Some(format!("NEAR({}, {})", runs.join(" "), said.len()))
}

/// The words of `plan`'s query that are not terms (its stop words, when it has content words),
/// each once, as said, but a question's opening ("how do I"), which says what kind of answer is
/// wanted rather than what it holds.
fn other_words(plan: &Plan) -> Vec<&String> {
    let mut others: Vec<&String> = Vec::new();
    for (said, key) in plan.said.iter().zip(&plan.words).skip(plan.opening) {
        let term = plan.terms.iter().any(|t| t.key == *key);
        if !term && !others.contains(&said) {
            others.push(said);
        }
    }
    others
}

/// The families of the rare terms among `terms`: what a source holding all of `terms` holds.
fn rare_keys(plan: &Plan, terms: &[&Term]) -> Vec<String> {
    terms
        .iter()
        .filter(|t| plan.rare(t))
        .map(|t| t.key.clone())
        .collect()
}

/// A source of the facts saying any of `phrases` (none when there is none), which may hold no
/// rare term.
fn any_phrase_of(phrases: Vec<String>, role: Role) -> Option<Source> {
    (!phrases.is_empty()).then(|| Source::new(phrases.join(" OR "), role, HoldsRare::Nothing))
}

/// The sources for a plan's terms; see the module documentation.
fn sources(plan: &Plan) -> Vec<Source> {
    let rare: Vec<&str> = plan
        .terms
        .iter()
        .filter(|t| plan.rare(t))
        .map(|t| t.key.as_str())
        .collect();
    let common: Vec<&Term> = plan
        .terms
        .iter()
        .filter(|t| t.df > plan.common && !plan.rare(t))
        .collect();
    let present: Vec<&Term> = plan.terms.iter().filter(|t| t.df > 0).collect();
    let mut sources = Vec::new();
    // The phrases of `len` consecutive query words whose families `keep` accepts.
    let runs = |len: usize, keep: &dyn Fn(&[String]) -> bool| -> Vec<String> {
        plan.said
            .windows(len)
            .zip(plan.words.windows(len))
            .filter(|(_, keys)| keep(keys))
            .map(|(said, _)| phrase(said))
            .collect()
    };
    let is_rare = |k: &String| rare.contains(&k.as_str());
    let is_common = |k: &String| common.iter().any(|t| t.key == *k);
    let pairs = runs(2, &|keys| keys.iter().any(is_rare));
    if !pairs.is_empty() {
        // Every rare term has a neighbour in a query of two words or more, so is in a pair.
        sources.push(Source::new(
            pairs.join(" OR "),
            Role::Always,
            HoldsRare::OneOf(rare.iter().map(|k| (*k).to_owned()).collect()),
        ));
    }
    if common.is_empty() {
        return sources;
    }
    if present.len() >= 2 {
        // Never left out for the shortlist: what it finds decides which sources follow.
        sources.push(Source::new(
            all_of(&present),
            Role::EveryTerm,
            HoldsRare::Nothing,
        ));
    }
    let others = other_words(plan);
    if !others.is_empty() {
        let other_forms: Vec<Vec<String>> = others.iter().map(|w| forms(w)).collect();
        let every_word = all_forms_of(
            present
                .iter()
                .map(|t| t.forms.as_slice())
                .chain(other_forms.iter().map(Vec::as_slice)),
        );
        sources.push(Source::new(
            every_word,
            Role::EveryWord,
            HoldsRare::Each(rare_keys(plan, &present)),
        ));
    }
    if (3..=MAX_LEFT_OUT).contains(&present.len()) {
        for left_out in 0..present.len() {
            let others: Vec<&Term> = present
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != left_out)
                .map(|(_, t)| *t)
                .collect();
            sources.push(Source::new(
                all_of(&others),
                Role::LacksAWord,
                HoldsRare::Each(rare_keys(plan, &others)),
            ));
        }
    }
    // With four present terms or more, a fact lacking two of them is in no source above unless it
    // says a pair of them next to each other; the facts holding the same one rare term weigh alike
    // in the shortlist, so when it cut among those it chose by age.
    if (4..=MAX_LEFT_OUT).contains(&present.len()) {
        let rare_present: Vec<&Term> = present.iter().copied().filter(|t| plan.rare(t)).collect();
        let rare_beside_common: Vec<String> = rare_present
            .iter()
            .flat_map(|r| {
                common
                    .iter()
                    .map(move |c| format!("({})", all_of(&[*r, *c])))
            })
            .collect();
        if !rare_beside_common.is_empty() {
            sources.push(Source::new(
                rare_beside_common.join(" OR "),
                Role::LacksAWord,
                HoldsRare::OneOf(rare_keys(plan, &rare_present)),
            ));
        }
    }
    let common_pairs: Vec<String> = runs(2, &|keys| keys.iter().any(is_common))
        .into_iter()
        .filter(|pair| !pairs.contains(pair))
        .collect();
    sources.extend(any_phrase_of(common_pairs, Role::LacksAWord));
    // Fewer facts say three words together than two, so the newest saying one of these are more
    // often the fact paraphrased (which keeps runs of its words and changes the words between
    // them) than the newest saying a pair.
    let common_triples = runs(3, &|keys| {
        // One holding a rare term is read by the rare pairs and the shortlist; one holding every
        // present term (of two or more) says nothing the every-term source, which found nothing
        // whenever this one is read, did not.
        keys.iter().any(is_common)
            && !keys.iter().any(is_rare)
            && (present.len() < 2 || !present.iter().all(|t| keys.contains(&t.key)))
    });
    sources.extend(any_phrase_of(common_triples, Role::NoFactHoldsEveryTerm));
    if rare.is_empty() {
        sources.extend(
            plan.phrase
                .clone()
                .map(|phrase| Source::new(phrase, Role::WholeQuery, HoldsRare::Nothing)),
        );
        sources.push(Source::new(
            any_of(&common[..common.len().min(MAX_COMMON_TERMS)]),
            Role::Always,
            HoldsRare::Nothing,
        ));
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
            facts: df as f64,
            rows: Vec::new(),
            said_rows: Vec::new(),
        }
    }

    fn planned(terms: Vec<Term>, query: &str) -> Vec<String> {
        let plan = Plan::for_test(query, terms);
        plan.sources.into_iter().map(|s| s.expression).collect()
    }

    #[test]
    fn the_phrase_superset_is_its_content_runs_near_each_other_within_its_length() {
        let superset = |query: &str| phrase_superset(&query::words(query));
        assert_eq!(
            superset("the executor will not invoke poll on it").as_deref(),
            Some(r#"NEAR("executor" "invoke poll", 8)"#)
        );
        // One run alone, or no stop word: the phrase is read as it is.
        assert_eq!(superset("to be used for any"), None);
        assert_eq!(superset("bounded channel sender"), None);
        // Only the plan of a phrase (two words to the most) has one.
        let plan = |query: &str| Plan::for_test(query, Vec::new()).phrase_superset;
        assert_eq!(
            plan("open the file").as_deref(),
            Some(r#"NEAR("open" "file", 3)"#)
        );
        assert_eq!(plan(&["open the file"; 5].join(" ")), None);
    }

    #[test]
    fn every_word_is_every_term_and_the_other_words_but_a_question_opening() {
        let every_word = |query: &str, terms: Vec<Term>| {
            Plan::for_test(query, terms)
                .sources
                .into_iter()
                .filter(|s| s.role == Role::EveryWord)
                .map(|s| s.expression)
                .collect::<Vec<String>>()
        };
        assert_eq!(
            every_word(
                "what is the reference without the consuming",
                vec![term("reference", 5_000), term("consuming", 3_000)]
            ),
            [r#"("reference") AND ("consuming") AND ("without") AND ("the")"#]
        );
        // A term among them is asked once, as a term; a rare term is one the source holds.
        let plan = Plan::for_test(
            "deploy on the deploy box",
            vec![term("deploy", 5_000), term("box", 12)],
        );
        let source = plan.sources.iter().find(|s| s.role == Role::EveryWord);
        assert_eq!(
            source.map(|s| (s.expression.as_str(), &s.holds)),
            Some((
                r#"("deploy" OR "deployment") AND ("box") AND ("on") AND ("the")"#,
                &HoldsRare::Each(vec!["box".to_owned()])
            ))
        );
        // No other word (a question's opening is none), or no common term: no such source.
        assert!(every_word("how do I deploy", vec![term("deploy", 5_000)]).is_empty());
        assert!(every_word("the zephyr box", vec![term("zephyr", 3), term("box", 12)]).is_empty());
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
                r#"("file") AND ("deployed" OR "deployment")"#,
                r#"("file") AND ("deployed" OR "deployment") AND ("the")"#,
                r#""the file""#
            ]
        );
    }

    #[test]
    fn with_four_terms_or_more_each_rare_term_is_read_beside_each_common_one() {
        let beside = |query: &str, terms: Vec<Term>| {
            let plan = Plan::for_test(query, terms);
            let rare: Vec<&Term> = plan.terms.iter().filter(|t| plan.rare(t)).collect();
            let common: Vec<&Term> = plan.terms.iter().filter(|t| !plan.rare(t)).collect();
            let wanted: Vec<String> = rare
                .iter()
                .flat_map(|r| common.iter().map(|c| format!("({})", all_of(&[*r, *c]))))
                .collect();
            let wanted = wanted.join(" OR ");
            plan.sources
                .iter()
                .find(|s| s.expression == wanted)
                .map(|s| (s.role, s.holds.clone()))
        };
        let keys = |words: &[&str]| words.iter().map(|w| stem::key(w)).collect();
        assert_eq!(
            beside(
                "zephyr deadline deploy lock",
                vec![
                    term("zephyr", 3),
                    term("deadline", 40),
                    term("deploy", 5_000),
                    term("lock", 4_000)
                ]
            ),
            Some((
                Role::LacksAWord,
                HoldsRare::OneOf(keys(&["zephyr", "deadline"]))
            ))
        );
        // With three terms, the all-but-one sources are those pairs already.
        assert_eq!(
            beside(
                "zephyr deploy lock",
                vec![
                    term("zephyr", 3),
                    term("deploy", 5_000),
                    term("lock", 4_000)
                ]
            ),
            None
        );
    }

    #[test]
    fn facts_lacking_a_word_are_sources_read_only_after_the_every_word_source() {
        let plan = Plan::for_test(
            "why does the deploy lock fail",
            vec![
                term("deploy", 5_000),
                term("lock", 4_000),
                term("fail", 3_000),
            ],
        );
        let read: Vec<(String, Role)> = plan
            .sources
            .iter()
            .cloned()
            .map(|s| (s.expression, s.role))
            .collect();
        assert_eq!(
            read[0],
            (
                all_of(&plan.terms.iter().collect::<Vec<_>>()),
                Role::EveryTerm
            )
        );
        assert_eq!(
            read[1..4]
                .iter()
                .filter(|(_, role)| *role == Role::LacksAWord)
                .count(),
            3
        );
        assert!(
            read[1].0.contains("lock") && !read[1].0.contains("deploy"),
            "{read:?}"
        );
        // The common words beside their neighbours, as the query says them, after those.
        assert_eq!(
            read[4],
            (
                r#""the deploy" OR "deploy lock" OR "lock fail""#.to_owned(),
                Role::LacksAWord
            )
        );
    }

    #[test]
    fn a_question_opening_is_weighed_as_a_common_word_and_is_no_part_of_the_phrase() {
        assert_eq!(question_opening(&query::words("how do I open the file")), 3);
        assert_eq!(question_opening(&query::words("why does the lock fail")), 3);
        assert_eq!(question_opening(&query::words("can it fail")), 2);
        assert_eq!(question_opening(&query::words("the lock, how")), 0);
        assert_eq!(question_opening(&query::words("lock")), 0);
        // What a question asks about is its phrase: a fact seldom says the opening.
        let phrase = |query: &str| Plan::for_test(query, Vec::new()).phrase;
        assert_eq!(
            phrase("how do I open the file?").as_deref(),
            Some(r#""open the file""#)
        );
        assert_eq!(
            phrase("why does the lock fail").as_deref(),
            Some(r#""lock fail""#)
        );
        assert_eq!(phrase("how do I deploy"), None);
        // A run of a fact's words starts as a question asked without a wh-word does.
        assert_eq!(
            phrase("is the value of").as_deref(),
            Some(r#""is the value of""#)
        );
        assert_eq!(
            phrase("open the file").as_deref(),
            Some(r#""open the file""#)
        );
        let mut plan = Plan::of(
            query::words("how do I open it into the file"),
            vec![term("open", 3_000), term("file", 5_000)],
            100_000,
            1_000,
        );
        let mut asked = Vec::new();
        plan.weigh_stop_words(|said| {
            asked.push(said.to_owned());
            Ok::<_, ()>(if said == "into" { 900.0 } else { 40_000.0 })
        })
        .unwrap();
        assert_eq!(asked, ["it", "into", "the"], "the opening is never counted");
        let weight = |word: &str| {
            plan.stop_words
                .iter()
                .find(|(k, _)| k == word)
                .map(|(_, facts)| *facts)
        };
        assert_eq!(weight("how"), Some(50_000.0));
        assert_eq!(weight("i"), Some(50_000.0));
        assert_eq!(weight("into"), Some(900.0));
        assert_eq!(weight("open"), None, "a term is weighed as a term");
    }

    #[test]
    fn words_read_ahead_on_two_connections_are_kept_and_plan_as_on_one() {
        let dir = clawboo_tests::TempDir::new("plan-read-ahead");
        let db = crate::db::Db::open(&dir.db_path()).unwrap();
        let conn = db.conn();
        // 600 facts: `zephyr` in every third (rare), `lock` in every other (common at 200).
        let contents: Vec<String> = (0..600)
            .map(|i| {
                let rare = if i % 3 == 0 { "zephyr" } else { "other" };
                let common = if i % 2 == 0 { "lock" } else { "file" };
                format!("note {i} {rare} {common} held")
            })
            .collect();
        crate::memory::seed_facts(&conn, contents.iter().map(|c| ("t", c.as_str()))).unwrap();
        let second = Helper::start(db.second_reader().unwrap().unwrap()).unwrap();
        let words = ["zephyr", "lock", "file", "held", "absent"];
        let expressions: Vec<String> = words.iter().map(|w| query::match_any(&forms(w))).collect();
        let mut counts = WordCounts::default();
        let asks = expressions.iter().map(|e| (201, Read::Rows, e.clone()));
        counts
            .read_ahead(&conn, Some(&second), asks.collect())
            .unwrap();
        for expression in &expressions {
            let kept = counts.kept(201, Read::Rows, expression).unwrap();
            let direct =
                super::super::counts::Counted::read(&conn, expression, 201, Read::Rows).unwrap();
            assert_eq!(
                (kept.count, &kept.rows, kept.oldest, kept.cut),
                (direct.count, &direct.rows, direct.oldest, direct.cut),
                "{expression}"
            );
        }
        let summary = |plan: Plan| {
            let terms: Vec<(String, i64, Vec<i64>)> = plan
                .terms
                .into_iter()
                .map(|t| (t.key, t.df, t.rows))
                .collect();
            (terms, plan.sources, plan.stop_words)
        };
        let query = "the zephyr lock held the file";
        let one = plan(&conn, None, &mut WordCounts::default(), query).unwrap();
        let two = plan(&conn, Some(&second), &mut WordCounts::default(), query).unwrap();
        assert_eq!(summary(two.unwrap()), summary(one.unwrap()));
        // What is kept is not read again: a second connection that cannot read is never asked.
        let empty = clawboo_tests::TempDir::new("plan-read-ahead-empty");
        let elsewhere = Helper::start(Connection::open(empty.db_path()).unwrap()).unwrap();
        let mut counts = WordCounts::default();
        plan(&conn, None, &mut counts, query).unwrap();
        assert!(plan(&conn, Some(&elsewhere), &mut counts, query).is_ok());
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
                r#"("open") AND ("file") AND ("the")"#,
                r#""open the" OR "the file""#,
                r#""open the file""#,
                r#""open" OR "file""#
            ]
        );
        assert_eq!(planned(vec![term("file", 5_000)], "file"), [r#""file""#]);
        assert!(planned(vec![term("nothing", 0)], "nothing").is_empty());
    }

    #[test]
    fn the_whole_query_is_read_only_when_the_every_term_source_may_have_left_facts_out() {
        use EveryTermFound::{AsMany, Fewer, Nothing};
        let after = |every_term| FoundSoFar {
            wholly_kept: &[],
            every_term,
        };
        // It found fewer than it reads: it read every fact holding every term, saying the
        // whole query or not.
        assert!(!Role::WholeQuery.is_read(after(Some(Fewer))));
        assert!(!Role::WholeQuery.is_read(after(Some(Nothing))));
        assert!(Role::WholeQuery.is_read(after(Some(AsMany))));
        assert!(
            Role::WholeQuery.is_read(after(None)),
            "no every-term source"
        );
        // So are the facts holding every word: they are among those the every-term source read.
        for found in [None, Some(Nothing), Some(Fewer), Some(AsMany)] {
            assert_eq!(
                Role::EveryWord.is_read(after(found)),
                Role::WholeQuery.is_read(after(found))
            );
        }
        assert!(Role::LacksAWord.is_read(after(Some(Fewer))));
        assert!(Role::LacksAWord.is_read(after(Some(Nothing))));
        assert!(!Role::LacksAWord.is_read(after(Some(AsMany))));
        // Runs of three words only when no fact holds every term.
        assert!(Role::NoFactHoldsEveryTerm.is_read(after(Some(Nothing))));
        assert!(!Role::NoFactHoldsEveryTerm.is_read(after(Some(Fewer))));
        assert!(!Role::NoFactHoldsEveryTerm.is_read(after(Some(AsMany))));
        assert!(Role::NoFactHoldsEveryTerm.is_read(after(None)));
        assert!(Role::Always.is_read(after(Some(AsMany))));
        assert!(Role::EveryTerm.is_read(after(None)));
        // A role waits for the every-term source exactly when what it found decides its reads.
        let founds = [None, Some(Nothing), Some(Fewer), Some(AsMany)];
        for role in [
            Role::Always,
            Role::EveryTerm,
            Role::LacksAWord,
            Role::EveryWord,
            Role::WholeQuery,
            Role::NoFactHoldsEveryTerm,
        ] {
            let decided = founds
                .iter()
                .any(|f| role.is_read(after(*f)) != role.is_read(after(None)));
            assert_eq!(role.waits_for_every_term(), decided, "{role:?}");
        }
        assert_eq!(EveryTermFound::of(0, 30), Nothing);
        assert_eq!(EveryTermFound::of(29, 30), Fewer);
        assert_eq!(EveryTermFound::of(30, 30), AsMany);
        let roles: Vec<Role> = Plan::for_test(
            "open the file",
            vec![term("open", 3_000), term("file", 5_000)],
        )
        .sources
        .iter()
        .map(|s| s.role)
        .collect();
        assert_eq!(
            roles,
            [
                Role::EveryTerm,
                Role::EveryWord,
                Role::LacksAWord,
                Role::WholeQuery,
                Role::Always
            ]
        );
    }

    #[test]
    fn a_source_is_left_unread_only_when_each_fact_it_matches_holds_a_rare_term_wholly_shortlisted()
    {
        let keys = |words: &[&str]| -> Vec<String> { words.iter().map(|w| stem::key(w)).collect() };
        let after = |wholly_kept| FoundSoFar {
            wholly_kept,
            every_term: None,
        };
        let kept = keys(&["zephyr"]);
        let source = |holds| Source::new("x".into(), Role::Always, holds);
        // An `AND` holding a wholly kept rare term finds nothing new, whatever else it holds.
        assert!(!source(HoldsRare::Each(keys(&["deadline", "zephyr"]))).is_read(after(&kept)));
        assert!(source(HoldsRare::Each(keys(&["deadline"]))).is_read(after(&kept)));
        assert!(source(HoldsRare::Each(Vec::new())).is_read(after(&kept)));
        // An `OR` of pairs is left unread only when every rare term in it was wholly kept.
        assert!(source(HoldsRare::OneOf(keys(&["zephyr", "deadline"]))).is_read(after(&kept)));
        assert!(!source(HoldsRare::OneOf(keys(&["zephyr"]))).is_read(after(&kept)));
        assert!(source(HoldsRare::OneOf(Vec::new())).is_read(after(&kept)));
        assert!(source(HoldsRare::Nothing).is_read(after(&kept)));
        // Its role still decides first.
        let lacking = Source::new("x".into(), Role::LacksAWord, HoldsRare::Nothing);
        let full = FoundSoFar {
            wholly_kept: &[],
            every_term: Some(EveryTermFound::AsMany),
        };
        assert!(!lacking.is_read(full));
    }

    #[test]
    fn each_source_says_which_rare_terms_every_fact_it_matches_holds() {
        let plan = Plan::for_test(
            "the zephyr deploy lock fails",
            vec![
                term("zephyr", 40),
                term("deploy", 5_000),
                term("lock", 4_000),
                term("fails", 3_000),
            ],
        );
        let zephyr = vec![stem::key("zephyr")];
        let holds: Vec<(Role, HoldsRare)> = plan
            .sources
            .iter()
            .map(|s| (s.role, s.holds.clone()))
            .collect();
        assert_eq!(holds[0], (Role::Always, HoldsRare::OneOf(zephyr.clone())));
        assert_eq!(holds[1], (Role::EveryTerm, HoldsRare::Nothing));
        // All but one of four terms: the one leaving out `zephyr` holds no rare term.
        let lacking: Vec<&HoldsRare> = holds
            .iter()
            .filter(|(role, _)| *role == Role::LacksAWord)
            .map(|(_, h)| h)
            .collect();
        assert_eq!(lacking.len(), 6, "{holds:?}");
        assert_eq!(lacking[0], &HoldsRare::Each(Vec::new()));
        for each in &lacking[1..4] {
            assert_eq!(*each, &HoldsRare::Each(zephyr.clone()));
        }
        assert_eq!(
            lacking[4],
            &HoldsRare::OneOf(zephyr.clone()),
            "the rare term beside each common one"
        );
        assert_eq!(
            lacking[5],
            &HoldsRare::Nothing,
            "common words beside their neighbours"
        );
        // The one run of three words holding no rare term.
        assert_eq!(
            holds.last(),
            Some(&(Role::NoFactHoldsEveryTerm, HoldsRare::Nothing)),
            "three words with a common one"
        );
    }

    #[test]
    fn runs_of_three_words_holding_a_common_term_and_no_rare_one_are_read_when_no_fact_holds_every_term()
     {
        let plan = Plan::for_test(
            "this function will not call poll",
            vec![
                term("function", 5_000),
                term("call", 4_000),
                term("poll", 3_000),
            ],
        );
        let triples: Vec<&Source> = plan
            .sources
            .iter()
            .filter(|s| s.expression.contains(r#""will not call""#))
            .collect();
        assert_eq!(triples.len(), 1, "{:?}", plan.sources);
        assert_eq!(
            triples[0].expression,
            r#""this function will" OR "function will not" OR "will not call" OR "not call poll""#
        );
        assert_eq!(triples[0].role, Role::NoFactHoldsEveryTerm);
        // A run holding a rare term is not one: the rare pairs and the shortlist read it.
        let plan = Plan::for_test(
            "this zephyr will not call poll",
            vec![term("zephyr", 3), term("call", 4_000), term("poll", 3_000)],
        );
        let runs = plan
            .sources
            .iter()
            .find(|s| s.role == Role::NoFactHoldsEveryTerm)
            .map(|s| s.expression.as_str());
        assert_eq!(runs, Some(r#""will not call" OR "not call poll""#));
        // No run holding every present term: the every-term source holds what it would find.
        let plan = Plan::for_test(
            "the file deployed",
            vec![term("file", 5_000), term("deployed", 5_000)],
        );
        assert!(
            plan.sources
                .iter()
                .all(|s| s.expression != r#""the file deployed""# || s.role == Role::WholeQuery),
            "{:?}",
            plan.sources
        );
    }
}
