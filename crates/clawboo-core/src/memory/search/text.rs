//! Running a full-text search: every source of the plan read against the porter index of facts
//! and procedures, and every candidate scored by one formula (`rank`).
//!
//! Owns: the `MATCH` queries over `clawboo_facts_newest_fts` and `clawboo_procedures_fts` (the scope
//! filter applied inside them), reading at most [`POOL`] rows per source ([`RANKED_POOL`] for the
//! source the index ranks), and the scores: a full-text hit's is its `rank` score relative to the
//! best's, so the best scores 1, scores never rise down the list and stay above zero (hybrid
//! search takes the `rank` scores themselves, which say how much of the query matched). A ranked
//! source reads the index's best-ranked rows first and looks up only those; the other sources read
//! newest first, so the cost follows the limit, not how many rows hold the words. A read takes
//! only each candidate's rowid, title and content, turned into words for the ranking
//! (`rank::Words`) straight from the row on the thread that read it; the whole entries are read
//! for the `cap` candidates kept, by rowid, in one statement per kind.
//! The whole query's phrase is read through its superset where the plan has one: the newest
//! [`SUPERSET`] facts holding its content words near each other, of which those saying the query
//! are kept; only when those are too few to tell the newest facts saying it is the index asked for
//! the phrase itself (whose read walks every stop word's rows). Either way the same facts result.
//!
//! Must never: build SQL from the query (every `MATCH` expression is a bound parameter).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::types::{Type, Value as SqlValue};

use super::super::{
    Entry, FACT_COLUMNS, MemoryError, ReadScope, fact_columns, fact_from_row,
    latest_procedure_only, procedure_columns, procedure_from_row, scope_filter,
};
use super::counts::WordCounts;
use super::plan::{HoldsRare, Plan, Role, Source, plan};
use super::rank::{Families, QueryPhrase, Scorer, Shortlist, Words, shortlist};
use super::reads::{self, Helper, Read, Reading, Schedule, shortlist_parts};
use super::tally::{self, Kind};
use super::{Candidate, MatchedVia, SearchHit, as_params, named, rowid_list};

/// How many rows a source read newest first yields, at least (more when more hits are asked for).
/// Such a source chooses among the facts holding its words by age alone, so a fact holding only
/// some of the query's words (a paraphrase, a misspelling) is found when few newer ones hold the
/// same: more rows find more of them, and each row costs little more than its words.
const POOL: u32 = 60;
/// How many of the facts holding rare terms are read, at least: the shortlist weighs the rare
/// terms only, so the final order is decided among more of them.
const RANKED_POOL: u32 = 100;
/// How many facts of [`Plan::phrase_superset`] are read, newest first, for those saying the whole
/// query: when that many hold its content words near each other and fewer than a source reads say
/// the query, older facts may say it too, and the index is asked for the phrase itself.
const SUPERSET: u32 = 200;
/// The lowest score a full-text hit is given (scores stay above zero).
const MIN_SCORE: f64 = 1e-6;

/// Which stored row a candidate is. Facts and procedures are numbered apart, so one rowid can
/// name a fact and a procedure both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Row {
    Fact(i64),
    Procedure(i64),
}

/// A full-text match before scoring: its row and its words. Only its title (or name) and content
/// are read for it, straight into words; the whole entry is read for the few kept ([`entries`]).
struct Matched {
    row: Row,
    words: Words,
}

/// The connections a full-text search reads through: the store's, and a second on the same file
/// when there is one, which takes some of the candidates' reads on its own thread (`reads`).
pub(super) struct Readers<'c> {
    /// The store's connection: it plans, and takes the reads the second does not.
    pub(super) first: &'c Connection,
    /// The thread holding a connection that only reads (`Db::second_reader`), lent for this
    /// search.
    pub(super) second: Option<&'c Helper<Connection>>,
}

/// The full-text hits for `query`, best first.
pub(super) fn hits(
    readers: Readers<'_>,
    counts: &mut WordCounts,
    query: &str,
    limit: u32,
    scope: &ReadScope,
) -> Result<Vec<SearchHit>, MemoryError> {
    let found = candidates(readers, counts, query, limit, scope)?;
    let top = found
        .first()
        .and_then(|c| c.text)
        .unwrap_or(1.0)
        .max(f64::MIN_POSITIVE);
    Ok(found
        .into_iter()
        .map(|c| SearchHit {
            score: (c.text.unwrap_or(0.0) / top).clamp(MIN_SCORE, 1.0),
            entry: c.entry,
            matched_via: MatchedVia::Fts,
        })
        .collect())
}

/// The `cap` best full-text matches among facts and procedures, best first, each with its score
/// by the `rank` formula (about 1 for a text holding every word of the query, up to about 1.5 when
/// it says them in the query's order; at least [`MIN_SCORE`]), without vectors (hybrid search reads
/// those of the few it keeps, and weighs meaning by how well the words matched: `blend`). What the
/// index says of the query's words is read through `counts`.
pub(super) fn candidates(
    readers: Readers<'_>,
    counts: &mut WordCounts,
    query: &str,
    cap: u32,
    scope: &ReadScope,
) -> Result<Vec<Candidate>, MemoryError> {
    let Readers { first, second } = readers;
    if let Some(helper) = second {
        helper.wake();
    }
    let planning = tally::started();
    let Some(plan) = plan(first, second, counts, query)? else {
        return Ok(Vec::new());
    };
    tally::add(Kind::Planning, planning, 0, 0);
    // How many rows each source other than the shortlist reads, at most.
    let wanted = cap.max(POOL);
    let pool = cap.max(RANKED_POOL) as usize;
    let short = shortlist(&plan, pool);
    let mut ascending = short.rows.clone();
    ascending.sort_unstable();
    let candidates = Arc::new(CandidateReads {
        plan,
        shortlisted: ascending,
        short,
        scope: scope.clone(),
        wanted,
    });
    let mut reads = reads::run(Arc::clone(&candidates), first, second)?;
    let CandidateReads { plan, short, .. } = &*candidates;
    // The scope left out some of a shortlist that was cut: the best `pool` in scope of all the
    // rare terms' rows take its place.
    let parts = shortlist_parts(short);
    if short.cut && reads[..parts].iter().map(Vec::len).sum::<usize>() < short.rows.len() {
        let best = best_in_scope(first, plan, pool, scope)?;
        reads.splice(..parts, [best]);
    }
    let mut seen = HashSet::new();
    let (rows, words): (Vec<Row>, Vec<Words>) = reads
        .into_iter()
        .flatten()
        .filter(|m| seen.insert(m.row))
        .map(|m| (m.row, m.words))
        .unzip();
    let scorer = Scorer::new(plan, &Families::new(plan), &words);
    let mut scored: Vec<(f64, Row)> = words.iter().map(|w| scorer.score(w)).zip(rows).collect();
    // Stable: among equal scores, the order the sources read them in (best-ranked, then newest).
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.truncate(cap as usize);
    let kept: Vec<Row> = scored.iter().map(|(_, row)| *row).collect();
    let mut entries = entries(first, &kept, scope)?;
    // A row deleted since it was read is left out.
    let scored: Vec<(f64, Entry)> = scored
        .into_iter()
        .filter_map(|(score, row)| Some((score, entries.remove(&row)?)))
        .collect();
    Ok(scored
        .into_iter()
        .map(|(score, entry)| Candidate {
            entry,
            text: Some(score.max(MIN_SCORE)),
            vector: None,
        })
        .collect())
}

/// A search's reads of candidates (`reads::run`): the plan and its shortlist, the scope, and how
/// many rows a source and the shortlist read. Each read's candidates are turned into words as they
/// are read, on the thread that reads them (a few hundred microseconds a search, measured), so
/// that work is shared by both readers too.
struct CandidateReads {
    plan: Plan,
    short: Shortlist,
    /// The shortlist's rowids, ascending: its parts' order.
    shortlisted: Vec<i64>,
    scope: ReadScope,
    wanted: u32,
}

impl Reading for CandidateReads {
    type Conn = Connection;
    type Row = Matched;
    type Error = MemoryError;

    fn schedule(&self) -> Schedule<'_> {
        Schedule::new(&self.plan, &self.short, self.wanted as usize)
    }

    fn read(&self, conn: &Connection, read: Read<'_>) -> Result<Vec<Matched>, MemoryError> {
        let Self {
            plan,
            shortlisted,
            scope,
            wanted,
            ..
        } = self;
        let families = &mut Families::new(plan);
        let started = tally::started();
        let (kind, most, matched) = match read {
            Read::Shortlist { part, parts } => {
                let rows = shortlisted.len();
                let (from, to) = (part * rows / parts, (part + 1) * rows / parts);
                let rowids = &shortlisted[from..to];
                let matched = facts_by_rowid(conn, rowids, scope, families)?;
                (Kind::ShortlistPart, rowids.len(), matched)
            }
            Read::Phrase(phrase) => {
                let matched = saying_the_query(conn, plan, phrase, *wanted, scope, families)?;
                (Kind::PhraseBesideShortlist, *wanted as usize, matched)
            }
            Read::Source(source) if source.role == Role::WholeQuery => {
                let expression = &source.expression;
                let matched = saying_the_query(conn, plan, expression, *wanted, scope, families)?;
                (Kind::WholeQuery, *wanted as usize, matched)
            }
            Read::Source(source) => {
                let matched = source_matches(conn, &source.expression, *wanted, scope, families)?;
                (source_kind(source), *wanted as usize, matched)
            }
            Read::Procedures(any) => {
                let matched = procedure_matches(conn, any, *wanted, scope, families)?;
                (Kind::Procedures, *wanted as usize, matched)
            }
        };
        tally::add(kind, started, matched.len(), most);
        Ok(matched)
    }
}

/// Which kind of read `source` is, to the tally (`tally::Kind`).
fn source_kind(source: &Source) -> Kind {
    match source.role {
        Role::Always if matches!(source.holds, HoldsRare::OneOf(_)) => {
            Kind::RareTermBesideNeighbours
        }
        Role::Always => Kind::AnyCommonTerm,
        Role::EveryTerm => Kind::EveryTerm,
        Role::EveryWord => Kind::EveryWord,
        Role::LacksAWord => Kind::LacksAWord,
        Role::WholeQuery => Kind::WholeQuery,
        Role::NoFactHoldsEveryTerm => Kind::RunsOfThree,
    }
}

/// The whole entries of `rows` that are still stored and in scope.
fn entries(
    conn: &Connection,
    rows: &[Row],
    scope: &ReadScope,
) -> Result<HashMap<Row, Entry>, MemoryError> {
    let (mut facts, mut procedures) = (Vec::new(), Vec::new());
    for row in rows {
        match *row {
            Row::Fact(rowid) => facts.push(rowid),
            Row::Procedure(rowid) => procedures.push(rowid),
        }
    }
    let mut entries = HashMap::with_capacity(rows.len());
    let fact = |r: &rusqlite::Row<'_>| {
        // The statement selects `rowid` right after the fact's columns.
        Ok((
            Row::Fact(r.get(FACT_COLUMNS)?),
            Entry::Fact(fact_from_row(r)?),
        ))
    };
    read_entries(
        conn,
        concat!(
            "SELECT ",
            fact_columns!(),
            ", m.rowid AS rowid
             FROM json_each(:rowids) AS wanted JOIN memory_facts m ON m.rowid = wanted.value
             WHERE ",
            scope_filter!()
        ),
        &facts,
        scope,
        fact,
        &mut entries,
    )?;
    let procedure = |r: &rusqlite::Row<'_>| {
        Ok((
            Row::Procedure(r.get("rowid")?),
            Entry::Procedure(procedure_from_row(r)?),
        ))
    };
    read_entries(
        conn,
        concat!(
            "SELECT ",
            procedure_columns!(),
            ", m.rowid AS rowid
             FROM json_each(:rowids) AS wanted JOIN memory_procedures m ON m.rowid = wanted.value
             WHERE ",
            scope_filter!()
        ),
        &procedures,
        scope,
        procedure,
        &mut entries,
    )?;
    Ok(entries)
}

/// Adds to `entries` what `statement` reads of `rowids` in `scope` (bound as `:rowids` and the
/// scope's parameters), each row made an entry by `entry`. The statement is a literal: nothing of
/// a query is ever part of it.
fn read_entries(
    conn: &Connection,
    statement: &'static str,
    rowids: &[i64],
    scope: &ReadScope,
    entry: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<(Row, Entry)>,
    entries: &mut HashMap<Row, Entry>,
) -> Result<(), MemoryError> {
    if rowids.is_empty() {
        return Ok(());
    }
    let params = named(scope, [(":rowids", rowid_list(rowids))]);
    for read in conn
        .prepare_cached(statement)?
        .query_map(as_params(&params).as_slice(), entry)?
    {
        let (row, entry) = read?;
        entries.insert(row, entry);
    }
    Ok(())
}

/// The `pool` best facts in scope of all those holding `plan`'s rare terms, best first (as
/// `rank::shortlist` orders them), and those it adds for rare forms, with their words: what the
/// shortlist is when the scope left out some of one that was cut.
fn best_in_scope(
    conn: &Connection,
    plan: &Plan,
    pool: usize,
    scope: &ReadScope,
) -> Result<Vec<Matched>, MemoryError> {
    let all = shortlist(plan, usize::MAX);
    let mut matched = facts_by_rowid(conn, &all.rows, scope, &mut Families::new(plan))?;
    let position: HashMap<Row, usize> = all
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| (Row::Fact(*r), i))
        .collect();
    matched.sort_by_key(|m| position.get(&m.row).copied().unwrap_or(usize::MAX));
    // The best `pool` of those holding rare terms, and every one chosen for a rare form.
    let holding_rare = all.rows.len() - all.said;
    let mut kept = 0;
    matched.retain(|m| {
        let rare = position.get(&m.row).is_some_and(|&at| at < holding_rare);
        kept += usize::from(rare);
        !rare || kept <= pool
    });
    Ok(matched)
}

/// The facts with `rowids` that are in scope, oldest first, each once, with their words.
fn facts_by_rowid(
    conn: &Connection,
    rowids: &[i64],
    scope: &ReadScope,
    families: &mut Families<'_>,
) -> Result<Vec<Matched>, MemoryError> {
    if rowids.is_empty() {
        return Ok(Vec::new());
    }
    let params = named(scope, [(":rowids", rowid_list(rowids))]);
    let matched = conn
        .prepare_cached(concat!(
            "SELECT m.rowid, m.title, m.content
             FROM json_each(:rowids) AS wanted JOIN memory_facts m ON m.rowid = wanted.value
             WHERE ",
            scope_filter!()
        ))?
        .query_map(as_params(&params).as_slice(), |r| {
            matched(r, Row::Fact, families)
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(matched)
}

/// Up to `wanted` facts in scope saying the whole query (`phrase`, the plan's), newest first, with
/// their words. Those of the newest [`SUPERSET`] facts of the plan's superset of it that say the
/// query, when that tells the newest facts saying it: fewer were read than asked (so none was
/// left), or `wanted` of them say it. Else (or without a superset) the facts the index reads for
/// the phrase itself.
fn saying_the_query(
    conn: &Connection,
    plan: &Plan,
    phrase: &str,
    wanted: u32,
    scope: &ReadScope,
    families: &mut Families<'_>,
) -> Result<Vec<Matched>, MemoryError> {
    let started = tally::started();
    if let Some(superset) = &plan.phrase_superset {
        let read = source_matches(conn, superset, SUPERSET, scope, families)?;
        let every_one_read = read.len() < SUPERSET as usize;
        let query = QueryPhrase::asked(plan, families);
        let mut saying: Vec<Matched> = read.into_iter().filter(|m| m.words.say(&query)).collect();
        if every_one_read || saying.len() >= wanted as usize {
            saying.truncate(wanted as usize);
            tally::add(
                Kind::PhraseBySuperset,
                started,
                saying.len(),
                wanted as usize,
            );
            return Ok(saying);
        }
    }
    let saying = source_matches(conn, phrase, wanted, scope, families)?;
    tally::add(Kind::PhraseAsked, started, saying.len(), wanted as usize);
    Ok(saying)
}

/// Up to `wanted` facts in scope matching the `MATCH` `expression` (a source's), newest first,
/// with their words.
fn source_matches(
    conn: &Connection,
    expression: &str,
    wanted: u32,
    scope: &ReadScope,
    families: &mut Families<'_>,
) -> Result<Vec<Matched>, MemoryError> {
    let params = named(
        scope,
        [
            (":query", SqlValue::Text(expression.to_owned())),
            (":limit", SqlValue::Integer(i64::from(wanted))),
        ],
    );
    let matched = conn
        .prepare_cached(concat!(
            "SELECT m.rowid, m.title, m.content
             FROM (SELECT rowid AS key FROM clawboo_facts_newest_fts
                   WHERE clawboo_facts_newest_fts MATCH :query) AS hits
             JOIN memory_facts m ON m.rowid = -hits.key
             WHERE ",
            scope_filter!(),
            // The order belongs here: SQLite flattens the subquery and drops an order inside it.
            // The index's keys are the facts' rowids negated, so it walks its rows forwards,
            // newest first, and stops at the limit.
            " ORDER BY hits.key LIMIT :limit"
        ))?
        .query_map(as_params(&params).as_slice(), |r| {
            matched(r, Row::Fact, families)
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(matched)
}

/// Up to `wanted` procedures in scope (newest versions) matching `expression`, BM25-ranked, with
/// their words.
fn procedure_matches(
    conn: &Connection,
    expression: &str,
    wanted: u32,
    scope: &ReadScope,
    families: &mut Families<'_>,
) -> Result<Vec<Matched>, MemoryError> {
    let params = named(
        scope,
        [
            (":query", SqlValue::Text(expression.to_owned())),
            (":limit", SqlValue::Integer(i64::from(wanted))),
        ],
    );
    let matched = conn
        .prepare_cached(concat!(
            "SELECT m.rowid, m.name, m.content FROM clawboo_procedures_fts
             JOIN memory_procedures m ON m.rowid = clawboo_procedures_fts.rowid
             WHERE clawboo_procedures_fts MATCH :query AND ",
            scope_filter!(),
            " AND ",
            latest_procedure_only!(),
            " ORDER BY bm25(clawboo_procedures_fts) LIMIT :limit"
        ))?
        .query_map(as_params(&params).as_slice(), |r| {
            matched(r, Row::Procedure, families)
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(matched)
}

/// A match from a row selecting a rowid, a title (or name) and a content, in that order: its
/// text is read in place into words, never copied.
fn matched(
    r: &rusqlite::Row<'_>,
    row: fn(i64) -> Row,
    families: &mut Families<'_>,
) -> rusqlite::Result<Matched> {
    let text = |i: usize| {
        r.get_ref(i)?
            .as_str()
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(i, Type::Text, Box::new(e)))
    };
    Ok(Matched {
        row: row(r.get(0)?),
        words: Words::of_text(text(1)?, text(2)?, families),
    })
}

#[cfg(test)]
mod tests {
    use super::super::SearchMode;
    use super::*;
    use crate::db::Db;
    use crate::memory::query;
    use crate::memory::{Embedder, Memory, NewFact, WriteScope};

    /// A small fixed corpus of ordinary technical sentences (title, content).
    const CORPUS: &[(&str, &str)] = &[
        (
            "channels",
            "A bounded channel applies back pressure when the receiver falls behind the sender.",
        ),
        (
            "channels",
            "The sender half can be cloned to send to the same channel from many tasks.",
        ),
        (
            "files",
            "Opening a file in append mode makes every write go to the end of the file.",
        ),
        (
            "files",
            "The file is closed when the handle is dropped, and errors on close are ignored.",
        ),
        (
            "sqlite",
            "A write transaction that begins immediately takes the lock before it reads anything.",
        ),
        (
            "sqlite",
            "The write-ahead log lets readers keep reading while one writer appends to the log.",
        ),
        (
            "sqlite",
            "A busy timeout makes a connection wait for the lock instead of failing at once.",
        ),
        (
            "http",
            "The client follows redirects up to a limit and then returns the last response.",
        ),
        (
            "http",
            "A request that takes longer than the deadline is cancelled and reported as a timeout.",
        ),
        (
            "hashing",
            "The hash of a key decides which bucket of the table it is stored in.",
        ),
        (
            "hashing",
            "When the table is more than half full it grows to twice its size and rehashes.",
        ),
        (
            "errors",
            "An error that the caller can handle is returned, and a bug is reported by a panic.",
        ),
        (
            "errors",
            "The question mark operator returns early with the error converted by its From impl.",
        ),
        (
            "threads",
            "A scoped thread may borrow from the stack because it is joined before the scope ends.",
        ),
        (
            "threads",
            "The thread pool runs blocking work so that the async workers are never stalled.",
        ),
        (
            "zephyr",
            "The zephyr scheduler wakes a task only when its deadline has passed.",
        ),
        (
            "parsing",
            "The parser reads one line at a time and reports the column of the first bad byte.",
        ),
        (
            "parsing",
            "A line longer than the limit is dropped and the reader skips to the next newline.",
        ),
        (
            "time",
            "Timestamps are stored as milliseconds since the epoch in a signed integer column.",
        ),
        (
            "time",
            "A monotonic clock never goes backwards, so it measures how long something took.",
        ),
    ];

    fn store() -> (Memory, Vec<String>) {
        let memory = Memory::new(Db::open_in_memory().unwrap(), Embedder::none());
        let ids = CORPUS
            .iter()
            .map(|(title, content)| {
                let new = NewFact {
                    title,
                    content,
                    tags: &[],
                };
                memory.save_fact(&new, &WriteScope::default()).unwrap().id
            })
            .collect();
        (memory, ids)
    }

    fn ids_for(memory: &Memory, query: &str) -> Vec<String> {
        memory
            .search(query, Some(SearchMode::Fts), 10, &ReadScope::default())
            .unwrap()
            .hits
            .into_iter()
            .map(|h| h.entry.id().to_owned())
            .collect()
    }

    #[test]
    fn a_stored_fact_is_found_first_by_five_of_its_own_words() {
        let (memory, ids) = store();
        for ((_, content), id) in CORPUS.iter().zip(&ids) {
            let words = query::words(content);
            for start in 0..=words.len() - 5 {
                let probe = words[start..start + 5].join(" ");
                let found = ids_for(&memory, &probe);
                assert_eq!(
                    found.first(),
                    Some(id),
                    "{probe:?} should find {content:?} first"
                );
            }
        }
    }

    #[test]
    fn a_rare_word_outranks_a_common_one() {
        let (memory, ids) = store();
        // "the" and "task" are in many facts, "zephyr" in one.
        let found = ids_for(&memory, "the task zephyr");
        assert_eq!(found.first(), Some(&ids[15]), "{found:?}");
        let found = ids_for(&memory, "lock zephyr");
        assert_eq!(
            found.first(),
            Some(&ids[15]),
            "the rarer word decides: {found:?}"
        );
        assert!(
            found.contains(&ids[4]) && found.contains(&ids[6]),
            "{found:?}"
        );
    }

    #[test]
    fn a_fact_with_every_word_outranks_facts_with_some_and_stop_words_do_not_drown_it() {
        let (memory, ids) = store();
        let found = ids_for(&memory, "what happens to the lock when the writer appends");
        assert_eq!(found.first(), Some(&ids[5]), "{found:?}");
        let found = ids_for(&memory, "is the file closed");
        assert_eq!(found.first(), Some(&ids[3]), "{found:?}");
        // A query of stop words alone still searches them.
        assert!(!ids_for(&memory, "the of").is_empty());
    }

    #[test]
    fn scores_fall_with_the_ranking_and_the_best_scores_one() {
        let (memory, _) = store();
        for query in [
            "the file",
            "write lock",
            "a line longer than the limit",
            "deadline",
        ] {
            let hits = memory
                .search(query, Some(SearchMode::Fts), 20, &ReadScope::default())
                .unwrap()
                .hits;
            assert_eq!(hits[0].score, 1.0, "{query}");
            assert!(
                hits.windows(2)
                    .all(|w| w[0].score >= w[1].score && w[1].score > 0.0),
                "{query}: {:?}",
                hits.iter().map(|h| h.score).collect::<Vec<_>>()
            );
        }
    }

    /// A store of `facts` (title, content), seeded in one transaction.
    fn seeded(facts: &[(String, String)]) -> Memory {
        let memory = Memory::new(Db::open_in_memory().unwrap(), Embedder::none());
        crate::memory::seed_facts(
            &memory.db.conn(),
            facts.iter().map(|(t, c)| (t.as_str(), c.as_str())),
        )
        .unwrap();
        memory
    }

    /// A store of `facts` (title, content) after `fillers` facts that all say `filler`.
    fn store_of(facts: &[(&str, &str)], filler: &str, fillers: usize) -> (Memory, Vec<String>) {
        let memory = Memory::new(Db::open_in_memory().unwrap(), Embedder::none());
        let filler: Vec<(String, String)> = (0..fillers)
            .map(|i| (format!("note {i}"), format!("{filler} number {i}")))
            .collect();
        crate::memory::seed_facts(
            &memory.db.conn(),
            filler.iter().map(|(t, c)| (t.as_str(), c.as_str())),
        )
        .unwrap();
        let ids = facts
            .iter()
            .map(|(title, content)| {
                let new = NewFact {
                    title,
                    content,
                    tags: &[],
                };
                memory.save_fact(&new, &WriteScope::default()).unwrap().id
            })
            .collect();
        (memory, ids)
    }

    #[test]
    fn among_facts_scored_alike_the_newest_come_first() {
        let (memory, _) = store_of(&[], "a deploy waits for the shard lock", 500);
        let found: Vec<String> = memory
            .search(
                "deploy waits shard lock",
                Some(SearchMode::Fts),
                5,
                &ReadScope::default(),
            )
            .unwrap()
            .hits
            .into_iter()
            .map(|h| match h.entry {
                Entry::Fact(fact) => fact.title,
                Entry::Procedure(procedure) => procedure.name,
            })
            .collect();
        assert_eq!(
            found,
            ["note 499", "note 498", "note 497", "note 496", "note 495"]
        );
    }

    #[test]
    fn every_form_of_a_content_word_finds_the_others() {
        let (memory, ids) = store_of(
            &[
                ("rollout", "The deployment to production failed twice"),
                ("settings", "We configured the proxy by hand"),
                ("database", "Connections are pooled per worker"),
            ],
            "the build waits for the review of the change",
            300,
        );
        for (query, id) in [
            ("deploy", &ids[0]),
            ("deployed", &ids[0]),
            ("deploying", &ids[0]),
            ("deploys to production", &ids[0]),
            ("the deployments failing", &ids[0]),
            ("configuration of the proxy", &ids[1]),
            ("configuring proxies", &ids[1]),
            ("connection pooling", &ids[2]),
            ("connecting workers", &ids[2]),
        ] {
            let found = ids_for(&memory, query);
            assert_eq!(found.first(), Some(id), "{query:?}: {found:?}");
        }
    }

    /// The five words of the long question (`what is the best way to handle retry queue shard
    /// lock deploy?`) that its fact ([`long_question_fact`]) holds.
    const FACT_WORDS: [&str; 5] = ["retry", "queue", "shard", "lock", "deploy"];

    /// The fact [`assert_the_long_question_finds_its_fact`] looks for.
    fn long_question_fact() -> (String, String) {
        (
            "the fact".to_owned(),
            "Retry after the queue empties; the shard then takes its lock before any deploy."
                .to_owned(),
        )
    }

    /// `count` facts saying `word` and no other word of the long question, each about as long
    /// as the fact.
    fn saying(word: &str, count: usize) -> impl Iterator<Item = (String, String)> + '_ {
        (0..count).map(move |i| {
            (
                format!("{word} {i}"),
                format!("{word} noted {i} while the nightly build ran for the release team"),
            )
        })
    }

    /// Asserts that the long question (see [`FACT_WORDS`]) finds its fact first.
    fn assert_the_long_question_finds_its_fact(memory: &Memory) {
        // Eight terms, no fact holding them all, none holding any two of the fact's in a row.
        let hits = memory
            .search(
                "what is the best way to handle retry queue shard lock deploy?",
                Some(SearchMode::Fts),
                10,
                &ReadScope::default(),
            )
            .unwrap()
            .hits;
        assert!(
            matches!(hits.first().map(|h| &h.entry), Some(Entry::Fact(f)) if f.title == "the fact"),
            "{:?}",
            hits.iter()
                .map(|h| match &h.entry {
                    Entry::Fact(f) => f.title.clone(),
                    Entry::Procedure(p) => p.name.clone(),
                })
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_long_question_finds_the_old_fact_holding_most_of_its_words_when_each_word_is_common() {
        // The fact, then 260 facts holding one of its words each (so every word is common, and
        // no other fact holds two of them), then 400 newer facts saying the question's own words.
        let mut facts = vec![long_question_fact()];
        for word in FACT_WORDS {
            facts.extend(saying(word, 260));
        }
        facts.extend((0..400).map(|i| {
            (
                format!("advice {i}"),
                format!("the best way to handle it is item {i}"),
            )
        }));
        assert_the_long_question_finds_its_fact(&seeded(&facts));
    }

    #[test]
    fn a_long_question_reads_its_facts_words_whole_beside_its_own_rarer_words() {
        // The question's own words are rarer than the fact's (400 or 450 facts each against
        // 601), so they are read whole first; the fact's five (3,005 rows) must fit the rest of the
        // budget too, or the shortlist keeps only facts holding one term each, newest first, and
        // those saying "the best way". The facts are stored shuffled, so every word's count is
        // estimated alike from the newest facts.
        let mut facts: Vec<(String, String)> = Vec::new();
        for word in ["best", "way", "handle"] {
            facts.extend(saying(word, 400));
        }
        for word in FACT_WORDS {
            facts.extend(saying(word, 601));
        }
        facts.extend((0..50).map(|i| (format!("advice {i}"), format!("the best way is item {i}"))));
        // A fixed permutation (a stride prime to the count), the fact in the middle.
        let stride = 7_919;
        let mut shuffled: Vec<(String, String)> = (0..facts.len())
            .map(|i| facts[(i * stride) % facts.len()].clone())
            .collect();
        shuffled.insert(shuffled.len() / 2, long_question_fact());
        assert_the_long_question_finds_its_fact(&seeded(&shuffled));
    }

    #[test]
    fn a_rare_word_outranks_common_ones_in_a_large_store() {
        let (memory, ids) = store_of(
            &[
                ("zephyr", "The zephyr scheduler wakes a task"),
                ("queue", "A task waits in the queue until a worker is free"),
            ],
            "a task is woken by the scheduler",
            500,
        );
        for query in [
            "task zephyr",
            "zephyr",
            "wakes the task zephyr",
            "scheduler zephyr",
        ] {
            let found = ids_for(&memory, query);
            assert_eq!(found.first(), Some(&ids[0]), "{query:?}");
        }
        let found = ids_for(&memory, "task waits in the queue");
        assert_eq!(found.first(), Some(&ids[1]), "{found:?}");
    }

    /// A store holding the fact `title`, `content` and the `newer` facts after it, and that
    /// fact's id.
    fn store_before(
        (title, content): (&str, &str),
        newer: &[(String, String)],
    ) -> (Memory, String) {
        let memory = Memory::new(Db::open_in_memory().unwrap(), Embedder::none());
        let new = NewFact {
            title,
            content,
            tags: &[],
        };
        let target = memory.save_fact(&new, &WriteScope::default()).unwrap().id;
        crate::memory::seed_facts(
            &memory.db.conn(),
            newer.iter().map(|(t, c)| (t.as_str(), c.as_str())),
        )
        .unwrap();
        (memory, target)
    }

    /// Asserts that `query` finds the fact `title`, `content` first in a store that holds the
    /// `newer` facts after it.
    fn assert_found_first_before(fact: (&str, &str), newer: &[(String, String)], query: &str) {
        let (memory, target) = store_before(fact, newer);
        let found = ids_for(&memory, query);
        assert_eq!(found.first(), Some(&target), "{query:?}: {found:?}");
    }

    #[test]
    fn an_older_fact_saying_the_whole_query_beats_a_cut_shortlist() {
        // Newer facts holding the rare word, and beside its neighbours, outnumber the shortlist.
        let newer: Vec<(String, String)> = (0..(RANKED_POOL as usize + 50))
            .map(|i| {
                (
                    format!("walk {i}"),
                    format!("So the visitor would not walk past hall {i}"),
                )
            })
            .collect();
        assert_found_first_before(
            (
                "serde",
                "If the visitor would not benefit from owning the data, say so.",
            ),
            &newer,
            "if the visitor would not",
        );
    }

    #[test]
    fn a_search_tallies_its_planning_and_its_reads_only_while_asked() {
        let (memory, _) = store_of(CORPUS, "filler", 0);
        // Other tests search meanwhile (and are tallied too while it is on), so this one asks
        // only for what its own search must have added; none of them turns the tally on.
        tally::start();
        assert!(!ids_for(&memory, "write lock").is_empty());
        let tally = tally::take();
        let runs = |kind: Kind| {
            tally
                .iter()
                .find(|(k, _)| *k == kind)
                .map_or(0, |(_, cost)| cost.runs)
        };
        assert!(runs(Kind::Planning) >= 1, "{tally:?}");
        assert!(runs(Kind::ShortlistPart) >= 1, "{tally:?}");
        let rows: u64 = tally.iter().map(|(_, cost)| cost.rows).sum();
        assert!(rows >= 1, "the reads found the facts: {tally:?}");
        assert!(!ids_for(&memory, "write lock").is_empty());
        assert!(tally::take().is_empty(), "nothing is tallied once taken");
    }

    #[test]
    fn an_older_fact_saying_a_rare_form_of_a_common_word_is_read() {
        // Every query word's family is common: more newer facts than a source reads hold all
        // three (`works`), never side by side or one word apart as the query says them. Only the
        // older fact says `worked`, so the form is rare where the family is not.
        let newer: Vec<(String, String)> = (0..260)
            .map(|i| {
                (
                    format!("batch {i}"),
                    format!("Works with the loader and the config file number {i} of batch jobs"),
                )
            })
            .collect();
        assert_found_first_before(
            ("notes", "The loader, once fixed, worked with every config."),
            &newer,
            "loader worked config",
        );
    }

    #[test]
    fn an_older_fact_saying_a_rare_word_beside_its_neighbour_beats_a_cut_shortlist() {
        // More newer facts than the shortlist keeps hold the rare word, and the common one, but
        // never side by side; others hold only the common word. The older fact says the pair,
        // but not the whole query.
        let newer: Vec<(String, String)> = (0..(RANKED_POOL as usize + 50))
            .map(|i| {
                (
                    format!("zephyr {i}"),
                    format!("Zephyr build {i} ships its own scheduler"),
                )
            })
            .chain((0..120).map(|i| {
                (
                    format!("queue {i}"),
                    format!("The scheduler drains queue {i}"),
                )
            }))
            .collect();
        assert_found_first_before(
            ("kernel", "A zephyr scheduler wakes tasks on time."),
            &newer,
            "the zephyr scheduler",
        );
    }

    #[test]
    fn a_rare_word_beside_its_neighbour_is_read_while_another_rare_word_was_wholly_shortlisted() {
        // `quokka` is in two facts, both shortlisted; `zephyr` in more than the shortlist keeps.
        // The pairs hold either, so they are read: only they find the older fact.
        let newer: Vec<(String, String)> = (0..(RANKED_POOL as usize + 50))
            .map(|i| {
                (
                    format!("zephyr {i}"),
                    format!("Zephyr build {i} ships its own scheduler"),
                )
            })
            .chain((0..2).map(|i| (format!("zoo {i}"), format!("A quokka smiles {i}"))))
            .collect();
        let (memory, target) = store_before(
            ("kernel", "A zephyr scheduler wakes tasks on time."),
            &newer,
        );
        let found = ids_for(&memory, "the zephyr scheduler quokka");
        assert!(found.contains(&target), "{found:?}");
    }

    #[test]
    fn an_older_fact_saying_the_whole_query_is_found_among_more_holding_every_common_word() {
        // Every word is common, and more newer facts than a source reads hold them all, but
        // never in the query's order: only the phrase read finds the older fact.
        let newer: Vec<(String, String)> = (0..300)
            .map(|i| {
                (
                    format!("handle {i}"),
                    format!("The file stays open until handle {i} is dropped"),
                )
            })
            .collect();
        assert_found_first_before(
            ("files", "Always open the file before the writer starts."),
            &newer,
            "open the file",
        );
    }

    #[test]
    fn an_older_fact_holding_the_query_stop_words_too_is_found_among_more_holding_its_terms() {
        // More newer facts than a source reads hold both terms, near each other, but not
        // `without`; no fact says the query as a phrase. Only the facts holding every word of
        // the query but its opening (`what is the`) reach the older fact.
        let newer: Vec<(String, String)> = (0..300)
            .map(|i| {
                (
                    format!("iter {i}"),
                    format!("The reference {i} is read by consuming the iterator"),
                )
            })
            .collect();
        assert_found_first_before(
            (
                "lexopt",
                "Return a reference to the next value without consuming it.",
            ),
            &newer,
            "what is the reference without consuming",
        );
    }

    #[test]
    fn an_older_fact_saying_what_a_question_asks_about_is_found_among_more_holding_its_words() {
        // More newer facts than a source reads hold every word of the question after its
        // opening, never in its order: only the phrase the question asks about finds the older
        // fact, which does not say `how do I`.
        let newer: Vec<(String, String)> = (0..300)
            .map(|i| {
                (
                    format!("pool {i}"),
                    format!("The pool {i} will reset each connection"),
                )
            })
            .collect();
        assert_found_first_before(
            (
                "failover",
                "Always reset the connection pool after a failover.",
            ),
            &newer,
            "how do I reset the connection pool?",
        );
    }

    #[test]
    fn a_fact_keeping_common_words_of_a_paraphrase_in_their_order_is_found() {
        // Newer facts, many more than a source reads, hold each common word but never both.
        let newer: Vec<(String, String)> = (0..600)
            .map(|i| {
                let content = if i % 2 == 0 {
                    format!("The runtime checks bound {i}")
                } else {
                    format!("A client sends request {i}")
                };
                (format!("note {i}"), content)
            })
            .collect();
        assert_found_first_before(
            (
                "format",
                "The macro formats its arguments at runtime into strings.",
            ),
            &newer,
            "client at runtime into",
        );
    }

    #[test]
    fn an_older_fact_keeping_three_words_of_a_query_none_holds_wholly_is_found() {
        // No fact holds every term (`invoke` is in one unrelated fact). Many more newer facts
        // than a source reads hold the two common terms, and say `the executor`, but never three
        // of the query's words in a row: only the runs of three words reach the older fact,
        // which says another word for `invoke`.
        let mut newer: Vec<(String, String)> = (0..300)
            .map(|i| {
                (
                    format!("wake {i}"),
                    format!("When the executor wakes task {i} it may poll it"),
                )
            })
            .collect();
        newer.push(("linker".into(), "Tests invoke the linker twice".into()));
        assert_found_first_before(
            (
                "futures",
                "Once done, the executor will not call poll on the task again.",
            ),
            &newer,
            "the executor will not invoke poll",
        );
    }

    #[test]
    fn of_equally_close_corrections_the_one_said_beside_the_query_neighbours_wins() {
        // `traking` is one edit from `tracking` and from `tracing`; more facts say `tracing` (and
        // `issue`), but only `tracking` is said before `issue`.
        let mut facts: Vec<(String, String)> = (0..30)
            .map(|i| (format!("spans {i}"), format!("Tracing spans an issue {i}")))
            .collect();
        facts.push(("feature".into(), "The tracking issue is still open".into()));
        facts.push(("music".into(), "Each track plays twice".into()));
        let memory = seeded(&facts);
        let hits = memory
            .search(
                "traking issue",
                Some(SearchMode::Fts),
                3,
                &ReadScope::default(),
            )
            .unwrap()
            .hits;
        let Some(Entry::Fact(fact)) = hits.into_iter().next().map(|h| h.entry) else {
            panic!("no fact found");
        };
        assert_eq!(fact.title, "feature");
    }

    #[test]
    fn a_misspelt_rare_word_still_finds_its_fact() {
        let (memory, ids) = store_of(
            &[
                ("zephyr", "The zephyr scheduler wakes a task"),
                ("onboarding", "Onboarding checklist for new engineers"),
            ],
            "a task is woken by the scheduler",
            300,
        );
        for (query, id) in [
            ("zephr", &ids[0]),
            ("the zehpyr scheduler", &ids[0]),
            ("zephyrr task", &ids[0]),
            ("onbaording checklist", &ids[1]),
            ("onboardign", &ids[1]),
        ] {
            let found = ids_for(&memory, query);
            assert_eq!(found.first(), Some(id), "{query:?}: {found:?}");
        }
        // A word that is close to nothing finds nothing rather than anything.
        assert!(ids_for(&memory, "xylophone").is_empty());
    }

    #[test]
    fn what_the_index_said_of_a_word_is_kept_only_while_no_connection_writes() {
        let dir = clawboo_tests::TempDir::new("word-counts");
        let open = || Memory::new(Db::open(&dir.db_path()).unwrap(), Embedder::none());
        let (reader, writer) = (open(), open());
        let save = |memory: &Memory, content: &str| {
            let new = NewFact {
                title: "scheduler",
                content,
                tags: &[],
            };
            memory.save_fact(&new, &WriteScope::default()).unwrap().id
        };
        let first = save(&writer, "The zephyr scheduler wakes a task");
        assert_eq!(ids_for(&reader, "zephyr"), [first.as_str()]);
        assert_eq!(ids_for(&reader, "zephir"), [first.as_str()], "corrected");
        // Another connection writes: the rows and the correction are read again.
        let second = save(&writer, "A zephyr deadline has passed");
        let spelt = save(&writer, "The zephir release notes");
        let found = ids_for(&reader, "zephyr");
        assert!(found.len() == 2 && found.contains(&second), "{found:?}");
        assert_eq!(ids_for(&reader, "zephir"), [spelt]);
        // The searching connection writes: the same.
        let third = save(&reader, "Every zephyr timer is checked on the tick");
        let found = ids_for(&reader, "zephyr");
        assert!(found.len() == 3 && found.contains(&third), "{found:?}");
    }

    /// Searches `memory` for `query` through its connection and `second`; the hits' ids and
    /// scores, or the error.
    fn read_with(
        memory: &Memory,
        second: Option<&Helper<Connection>>,
        query: &str,
    ) -> Result<Vec<(String, f64)>, MemoryError> {
        let conn = memory.db.conn();
        let readers = Readers {
            first: &conn,
            second,
        };
        let hits = hits(
            readers,
            &mut WordCounts::default(),
            query,
            10,
            &ReadScope::default(),
        )?;
        Ok(hits
            .into_iter()
            .map(|h| (h.entry.id().to_owned(), h.score))
            .collect())
    }

    /// A fixed sequence of pseudo-random numbers from `seed` (a linear congruential generator).
    fn numbers(seed: u64) -> impl FnMut() -> usize {
        let mut state = seed;
        move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 33) as usize
        }
    }

    #[test]
    fn the_facts_saying_the_query_are_those_the_index_reads_for_its_phrase() {
        // 12 words, 4 of them stop words, in facts of 7: phrases recur, and the content words of
        // many queries are near each other in more facts than the superset reads.
        const WORDS: [&str; 12] = [
            "the", "lock", "of", "file", "to", "queue", "a", "timer", "write", "read", "page",
            "cache",
        ];
        let mut next = numbers(11);
        let facts: Vec<(String, String)> = (0..3_000)
            .map(|i| {
                let words: Vec<&str> = (0..7).map(|_| WORDS[next() % WORDS.len()]).collect();
                (format!("note {}", i % 10), words.join(" "))
            })
            .collect();
        let memory = seeded(&facts);
        let conn = memory.db.conn();
        let scope = ReadScope::default();
        let (mut superset_used, mut superset_full) = (0, 0);
        for i in 0..60 {
            let words: Vec<&str> = facts[i * 47].1.split(' ').collect();
            let query = words[i % 3..i % 3 + 2 + i % 4].join(" ");
            let plan = plan(&conn, None, &mut WordCounts::default(), &query)
                .unwrap()
                .unwrap();
            let Some(phrase) = &plan.phrase else { continue };
            let families = &mut Families::new(&plan);
            let said = saying_the_query(&conn, &plan, phrase, POOL, &scope, families).unwrap();
            let said: Vec<Row> = said.iter().map(|m| m.row).collect();
            let read = source_matches(&conn, phrase, POOL, &scope, families).unwrap();
            let read: Vec<Row> = read.iter().map(|m| m.row).collect();
            assert_eq!(said, read, "{query:?}");
            if let Some(superset) = &plan.phrase_superset {
                superset_used += 1;
                let held = source_matches(&conn, superset, SUPERSET, &scope, families).unwrap();
                superset_full += usize::from(held.len() == SUPERSET as usize);
            }
        }
        // Both ways of answering were taken: from the superset, and from the phrase after it.
        assert!(
            superset_used > superset_full && superset_full > 0,
            "{superset_used} {superset_full}"
        );
    }

    #[test]
    fn facts_asked_by_rowid_come_oldest_first_and_once_in_any_order_asked() {
        let (memory, _) = store();
        let conn = memory.db.conn();
        // Rows read in the same order whatever order the shortlist gave keeps ties in place.
        let plan = Plan::for_test("file", Vec::new());
        let families = &mut Families::new(&plan);
        let read =
            facts_by_rowid(&conn, &[7, 2, 19, 5, 7], &ReadScope::default(), families).unwrap();
        let rows: Vec<Row> = read.iter().map(|m| m.row).collect();
        assert_eq!(rows, [2, 5, 7, 19].map(Row::Fact));
    }

    #[test]
    fn a_fact_and_a_procedure_with_the_same_rowid_are_both_found() {
        let memory = Memory::new(Db::open_in_memory().unwrap(), Embedder::none());
        let fact = NewFact {
            title: "rotation",
            content: "Rotate the signing keys every quarter",
            tags: &[],
        };
        let fact = memory.save_fact(&fact, &WriteScope::default()).unwrap();
        let procedure = memory
            .save_procedure(
                "rotate signing keys",
                "1. rotate the signing keys 2. restart",
                &WriteScope::default(),
            )
            .unwrap();
        let rowids: (i64, i64) = memory
            .db
            .conn()
            .query_row(
                "SELECT (SELECT rowid FROM memory_facts), (SELECT rowid FROM memory_procedures)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(rowids.0, rowids.1, "the case under test: one rowid each");
        let found = ids_for(&memory, "rotate the signing keys");
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found.contains(&fact.id) && found.contains(&procedure.id));
    }

    #[test]
    fn the_entries_read_after_ranking_are_the_rows_ranked_and_only_those_in_scope() {
        let memory = Memory::new(Db::open_in_memory().unwrap(), Embedder::none());
        let team = |team: &str| WriteScope::new(Some(team), None, None);
        let saved: Vec<_> = [("ops", "red"), ("ops", "blue"), ("build", "red")]
            .iter()
            .map(|(title, owner)| {
                let new = NewFact {
                    title,
                    content: "the deploy lock is held",
                    tags: &[],
                };
                memory.save_fact(&new, &team(owner)).unwrap()
            })
            .collect();
        let conn = memory.db.conn();
        let rows: Vec<Row> = (1..=3).rev().map(Row::Fact).collect();
        let all = entries(&conn, &rows, &ReadScope::default()).unwrap();
        for (row, fact) in rows.iter().rev().zip(&saved) {
            assert_eq!(all[row].id(), fact.id);
        }
        let red = ReadScope::new(Some("red"), None, None);
        let in_red = entries(&conn, &rows, &red).unwrap();
        let mut kept: Vec<&Row> = in_red.keys().collect();
        kept.sort_by_key(|row| match row {
            Row::Fact(rowid) | Row::Procedure(rowid) => *rowid,
        });
        assert_eq!(kept, [&Row::Fact(1), &Row::Fact(3)]);
        assert!(
            entries(&conn, &[Row::Procedure(1)], &red)
                .unwrap()
                .is_empty()
        );
        // A row deleted since the candidates were read is left out.
        drop(conn);
        memory.delete(&saved[0].id).unwrap().unwrap();
        let left = entries(&memory.db.conn(), &rows, &ReadScope::default()).unwrap();
        assert!(
            !left.contains_key(&Row::Fact(1)) && left.len() == 2,
            "{left:?}"
        );
    }

    #[test]
    fn two_readers_find_what_one_finds_and_the_second_really_reads() {
        let dir = clawboo_tests::TempDir::new("two-readers");
        let memory = Memory::new(Db::open(&dir.db_path()).unwrap(), Embedder::none());
        // 1,500 facts of 8 words from 30: every word is common (in about 400 facts), so the
        // every-term, all-but-one, pairs and phrase sources are read; `zephyr` is rare.
        const WORDS: [&str; 30] = [
            "lock", "file", "write", "read", "task", "queue", "timer", "clock", "sender",
            "channel", "buffer", "socket", "thread", "worker", "index", "page", "cache", "disk",
            "retry", "limit", "error", "panic", "future", "poll", "wake", "signal", "pipe",
            "stream", "frame", "batch",
        ];
        let mut next = numbers(7);
        let facts: Vec<(String, String)> = (0..1_500)
            .map(|i| {
                let mut words: Vec<&str> = (0..8).map(|_| WORDS[next() % WORDS.len()]).collect();
                if i % 30 == 0 {
                    words[next() % 8] = "zephyr";
                }
                (format!("note {}", i % 40), words.join(" the "))
            })
            .collect();
        crate::memory::seed_facts(
            &memory.db.conn(),
            facts.iter().map(|(t, c)| (t.as_str(), c.as_str())),
        )
        .unwrap();
        let queries: Vec<String> = (0..40)
            .map(|i| {
                let words: Vec<&str> = facts[i * 37].1.split(' ').collect();
                let from = i % 6;
                let mut query = words[from..from + 5 + i % 4].join(" ");
                if i % 5 == 0 {
                    query.push_str(" zephyr");
                }
                query
            })
            .collect();
        let second = Helper::start(memory.db.second_reader().unwrap().unwrap()).unwrap();
        for query in &queries {
            let one = read_with(&memory, None, query).unwrap();
            assert!(!one.is_empty(), "{query}");
            // Which reader takes which read varies from run to run; the answer must not.
            for _ in 0..3 {
                assert_eq!(
                    read_with(&memory, Some(&second), query).unwrap(),
                    one,
                    "{query}"
                );
            }
        }
        // A second reader on a file without the index: the reads it takes fail, so it took some.
        let empty = clawboo_tests::TempDir::new("two-readers-empty");
        let elsewhere = Helper::start(Connection::open(empty.db_path()).unwrap()).unwrap();
        let failed = queries
            .iter()
            .filter(|q| read_with(&memory, Some(&elsewhere), q).is_err())
            .count();
        assert!(failed > 0);
    }

    #[test]
    fn a_store_in_a_file_has_a_second_reader_that_cannot_write_and_one_in_memory_has_none() {
        let dir = clawboo_tests::TempDir::new("second-reader");
        let db = Db::open(&dir.db_path()).unwrap();
        let second = db.second_reader().unwrap().unwrap();
        let write = second.execute("INSERT INTO clawboo_schema_versions VALUES ('x', 1)", []);
        let refused = write.unwrap_err().to_string();
        assert!(refused.contains("readonly"), "{refused}");
        assert!(
            Db::open_in_memory()
                .unwrap()
                .second_reader()
                .unwrap()
                .is_none()
        );
    }
}
