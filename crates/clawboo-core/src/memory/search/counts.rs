//! What the full-text index answers about words, and what of it is kept: how many facts hold a
//! word (up to a limit, newest first), their rowids when few do, a stop word's count from its
//! newest facts, the facts saying a word as it is said (the index without stems), and a misspelt
//! word's corrections ([`WordCounts`], kept for the next queries while no connection has written
//! to the file; each read of the index is a [`Counted`]).
//!
//! Owns: those reads and how long their answers are kept. Must never: decide what a word is worth
//! or which facts are candidates (`plan` does, from these answers); put a word anywhere but in a
//! bound `MATCH` expression.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension};

use super::super::MemoryError;
use super::reads::{Helper, each_on_either};
use super::typo;

/// What the full-text index answered about words (their [`Counted`] reads and their spelling
/// corrections), kept for the queries after: a session or a host asks of the same words again and
/// again, and a common word's count walks up to `common + 1` rows of the index each time.
///
/// Kept only while the file is as it was read: no other connection has committed to it since
/// (`PRAGMA data_version`) and this connection has changed no row (its total of changes), checked
/// before each plan. A commit between that check and a read leaves a newer answer under the older
/// mark, which the next check forgets with everything else. Bounded by [`KEPT_BYTES`]: past it,
/// everything is forgotten and kept anew.
#[derive(Debug, Default)]
pub(in crate::memory) struct WordCounts {
    /// The file's state the answers were read in: its data version, this connection's changes.
    as_of: Option<(i64, u64)>,
    /// Each read, by its limit, what it read and its `MATCH` expression.
    counted: HashMap<(i64, Read, String), Counted>,
    /// Each misspelt word's corrections.
    corrections: HashMap<String, Vec<typo::Fixed>>,
    /// About how many bytes the answers hold.
    bytes: usize,
}

/// How many bytes of answers [`WordCounts`] keeps, about (a rare term's rows are the largest:
/// up to `2 * plan::COMMON_AT_MOST` rowids, about 16 KB; a long query's widened terms, up to
/// `plan::WIDENED_COMMONS * plan::COMMON_AT_MOST` rowids in all, about 640 KB).
const KEPT_BYTES: usize = 4 << 20;

impl WordCounts {
    /// Forgets every answer when the file changed since they were read.
    pub(super) fn forget_unless_current(&mut self, conn: &Connection) -> Result<(), MemoryError> {
        let now = (crate::db::data_version(conn)?, conn.total_changes());
        if self.as_of != Some(now) {
            *self = Self {
                as_of: Some(now),
                ..Self::default()
            };
        }
        Ok(())
    }

    /// The answer kept for a read of `expression` up to `limit`, if any.
    pub(super) fn kept(&self, limit: i64, read: Read, expression: &str) -> Option<&Counted> {
        self.counted.get(&(limit, read, expression.to_owned()))
    }

    /// [`Counted::read`], answered from what is kept when it was read before (lent, not copied:
    /// a rare term's rows are thousands of bytes).
    pub(super) fn counted(
        &mut self,
        conn: &Connection,
        expression: &str,
        limit: i64,
        read: Read,
    ) -> Result<&Counted, MemoryError> {
        let key = (limit, read, expression.to_owned());
        if !self.counted.contains_key(&key) {
            let counted = Counted::read(conn, expression, limit, read)?;
            self.keep(expression.len() + counted.rows.len() * size_of::<i64>());
            self.counted.insert(key.clone(), counted);
        }
        Ok(&self.counted[&key])
    }

    /// Reads each of `asks` not kept yet ([`Counted::read`] of a `MATCH` expression up to a
    /// limit, as [`WordCounts::counted`] keeps it), on `conn` and `second` at once when two or
    /// more are to be read, and keeps them.
    pub(super) fn read_ahead(
        &mut self,
        conn: &Connection,
        second: Option<&Helper<Connection>>,
        asks: Vec<(i64, Read, String)>,
    ) -> Result<(), MemoryError> {
        let mut unread: Vec<(i64, Read, String)> = Vec::new();
        for ask in asks {
            if !self.counted.contains_key(&ask) && !unread.contains(&ask) {
                unread.push(ask);
            }
        }
        if unread.len() < 2 {
            return Ok(());
        }
        let counted = each_on_either(
            conn,
            second,
            unread.clone(),
            |conn, (limit, read, expression)| Counted::read(conn, expression, *limit, *read),
        )?;
        for (ask, counted) in unread.into_iter().zip(counted) {
            self.keep(ask.2.len() + counted.rows.len() * size_of::<i64>());
            self.counted.insert(ask, counted);
        }
        Ok(())
    }

    /// [`typo::corrections`], answered from what is kept when asked before.
    pub(super) fn corrections(
        &mut self,
        conn: &Connection,
        word: &str,
    ) -> Result<Vec<typo::Fixed>, MemoryError> {
        if let Some(kept) = self.corrections.get(word) {
            return Ok(kept.clone());
        }
        let corrections = typo::corrections(conn, word)?;
        self.keep(word.len() + corrections.iter().map(|c| c.word.len()).sum::<usize>());
        self.corrections
            .insert(word.to_owned(), corrections.clone());
        Ok(corrections)
    }

    /// Counts `bytes` more kept (and a little for the entry), forgetting everything first when
    /// that would pass [`KEPT_BYTES`].
    fn keep(&mut self, bytes: usize) {
        let bytes = bytes + 64;
        if self.bytes + bytes > KEPT_BYTES {
            self.counted.clear();
            self.corrections.clear();
            self.bytes = 0;
        }
        self.bytes += bytes;
    }
}

/// What a [`Counted`] read hands out besides how many facts it found and the oldest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Read {
    /// The rows too, unless the limit stopped the read (a term's: a rare term's rows are its
    /// candidates).
    Rows,
    /// Nothing more (a stop word's, or a correction's beside its neighbours: a phrase, whose
    /// every row costs the index more than a word's, so it is walked once).
    Count,
    /// The rows too, of the word as said, from the index without stems (keyed oldest first;
    /// the rows are handed out newest first, as a term's), unless the limit stopped the read.
    SaidRows,
    /// The rows, read straight up to the limit without looking the limit-th up first (a read
    /// expected to list every row: the terms a long query widens its shortlist with).
    AllRows,
}

/// The newest facts holding a word, read up to a limit: how many, their rowids, and the oldest.
#[derive(Debug)]
pub(super) struct Counted {
    /// How many were read (all of them when fewer than the limit).
    pub(super) count: i64,
    /// Their rowids, newest first, when asked for ([`Read::Rows`], [`Read::SaidRows`]) and the
    /// limit did not stop the read (else empty).
    pub(super) rows: Vec<i64>,
    /// The rowid of the oldest read.
    pub(super) oldest: i64,
    /// Whether the limit stopped the read (more facts hold the word).
    pub(super) cut: bool,
}

impl Counted {
    /// The newest facts (up to `limit`, at least 1) matching `expression`. For [`Read::Rows`],
    /// the `limit`-th is looked up first: SQLite steps over the rows before it without handing
    /// any out, at a third of the cost of reading them, and when there is one (a common word) it
    /// is all a cut read needs (it is the oldest read); only when there is none are the rows read.
    pub(super) fn read(
        conn: &Connection,
        expression: &str,
        limit: i64,
        read: Read,
    ) -> Result<Self, MemoryError> {
        let limit = limit.max(1);
        if read == Read::Count {
            let (count, last_key): (i64, Option<i64>) = conn
                .prepare_cached(
                    "SELECT count(*), max(rowid) FROM (SELECT rowid FROM clawboo_facts_newest_fts
                     WHERE clawboo_facts_newest_fts MATCH ?1 ORDER BY rowid LIMIT ?2)",
                )?
                .query_row(rusqlite::params![expression, limit], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })?;
            return Ok(Self {
                count,
                rows: Vec::new(),
                oldest: last_key.map_or(0, |k| -k),
                cut: count >= limit,
            });
        }
        if read == Read::SaidRows {
            return Self::read_said(conn, expression, limit);
        }
        if read == Read::AllRows {
            return Ok(Self::listed(Self::newest(conn, expression, limit)?, limit));
        }
        let last_key: Option<i64> = conn
            .prepare_cached(
                "SELECT rowid FROM clawboo_facts_newest_fts WHERE clawboo_facts_newest_fts MATCH ?1
                 ORDER BY rowid LIMIT 1 OFFSET ?2",
            )?
            .query_row(rusqlite::params![expression, limit - 1], |r| r.get(0))
            .optional()?;
        // The index's keys are the facts' rowids negated: its forward order is newest first.
        if let Some(key) = last_key {
            return Ok(Self::cut_at(limit, -key));
        }
        Ok(Self::listed(Self::newest(conn, expression, limit)?, limit))
    }

    /// The rowids of the newest `limit` facts matching `expression`, newest first.
    fn newest(conn: &Connection, expression: &str, limit: i64) -> Result<Vec<i64>, MemoryError> {
        Ok(conn
            .prepare_cached(
                "SELECT -rowid FROM clawboo_facts_newest_fts WHERE clawboo_facts_newest_fts MATCH ?1
                 ORDER BY rowid LIMIT ?2",
            )?
            .query_map(rusqlite::params![expression, limit], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?)
    }

    /// A read the limit stopped, at the fact `oldest` (0: not known).
    fn cut_at(limit: i64, oldest: i64) -> Self {
        Self {
            count: limit,
            rows: Vec::new(),
            oldest,
            cut: true,
        }
    }

    /// A read that listed `rows`, newest first, up to `limit`.
    fn listed(rows: Vec<i64>, limit: i64) -> Self {
        let count = rows.len() as i64;
        Self {
            count,
            oldest: rows.last().copied().unwrap_or(0),
            // A commit between a read's two queries may have brought the word to the limit.
            cut: count >= limit,
            rows,
        }
    }

    /// [`Read::SaidRows`]: the facts matching `expression` in the index without stems
    /// (`memory_facts_fts`, the reference's, keyed oldest first), when fewer than `limit` do,
    /// newest first. As for a term, the `limit`-th is looked up first.
    fn read_said(conn: &Connection, expression: &str, limit: i64) -> Result<Self, MemoryError> {
        let past_limit: Option<i64> = conn
            .prepare_cached(
                "SELECT rowid FROM memory_facts_fts WHERE memory_facts_fts MATCH ?1
                 LIMIT 1 OFFSET ?2",
            )?
            .query_row(rusqlite::params![expression, limit - 1], |r| r.get(0))
            .optional()?;
        if past_limit.is_some() {
            return Ok(Self::cut_at(limit, 0));
        }
        let mut rows: Vec<i64> = conn
            .prepare_cached(
                "SELECT rowid FROM memory_facts_fts WHERE memory_facts_fts MATCH ?1 LIMIT ?2",
            )?
            .query_map(rusqlite::params![expression, limit], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        rows.reverse();
        Ok(Self::listed(rows, limit))
    }

    /// How many of the `total` facts (the highest rowid) hold the word: counted when the read
    /// was not cut, else estimated from how densely it holds the newest facts (the read found
    /// `count` among the facts from `oldest` on).
    pub(super) fn facts(&self, total: i64) -> f64 {
        if !self.cut || self.oldest <= 0 {
            return self.count as f64;
        }
        let span = (total - self.oldest + 1).max(self.count);
        (self.count as f64 * total as f64 / span as f64)
            .min(total as f64)
            .max(self.count as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_counts_the_newest_facts_up_to_its_limit_and_lists_them_only_when_not_cut() {
        let db = crate::db::Db::open_in_memory().unwrap();
        let conn = db.conn();
        // Facts 1 to 9; every third says `zephyr`: rowids 3, 6 and 9.
        let contents: Vec<String> = (1..=9)
            .map(|i| format!("note {i} {}", if i % 3 == 0 { "zephyr" } else { "other" }))
            .collect();
        crate::memory::seed_facts(&conn, contents.iter().map(|c| ("t", c.as_str()))).unwrap();
        let rows = Counted::read(&conn, "\"zephyr\"", 10, Read::Rows).unwrap();
        assert_eq!((rows.count, rows.cut, rows.oldest), (3, false, 3));
        assert_eq!(rows.rows, [9, 6, 3], "newest first");
        let cut = Counted::read(&conn, "\"zephyr\"", 2, Read::Rows).unwrap();
        assert_eq!((cut.count, cut.cut, cut.oldest), (2, true, 6));
        assert!(cut.rows.is_empty(), "a cut read lists no rows");
        let exactly = Counted::read(&conn, "\"zephyr\"", 3, Read::Rows).unwrap();
        assert_eq!((exactly.count, exactly.cut, exactly.oldest), (3, true, 3));
        for limit in [2, 3, 10] {
            let rows = Counted::read(&conn, "\"zephyr\"", limit, Read::Rows).unwrap();
            let count = Counted::read(&conn, "\"zephyr\"", limit, Read::Count).unwrap();
            assert_eq!(
                (count.count, count.cut, count.oldest),
                (rows.count, rows.cut, rows.oldest),
                "limit {limit}"
            );
            assert!(count.rows.is_empty());
        }
        let none = Counted::read(&conn, "\"absent\"", 10, Read::Rows).unwrap();
        assert_eq!((none.count, none.cut, none.oldest), (0, false, 0));
    }

    #[test]
    fn a_word_as_said_is_read_apart_from_its_other_forms_newest_first() {
        let db = crate::db::Db::open_in_memory().unwrap();
        let conn = db.conn();
        let contents = ["it worked", "work on it", "working late", "worked again"];
        crate::memory::seed_facts(&conn, contents.iter().map(|c| ("t", *c))).unwrap();
        let family = Counted::read(&conn, "\"worked\"", 10, Read::Rows).unwrap();
        assert_eq!(family.rows, [4, 3, 2, 1], "the stemmed index: every form");
        let said = Counted::read(&conn, "\"worked\"", 10, Read::SaidRows).unwrap();
        assert_eq!((said.count, said.cut, said.oldest), (2, false, 1));
        assert_eq!(said.rows, [4, 1], "only the form said, newest first");
        let cut = Counted::read(&conn, "\"worked\"", 2, Read::SaidRows).unwrap();
        assert!(cut.cut && cut.rows.is_empty(), "{cut:?}");
    }

    #[test]
    fn a_cut_count_is_estimated_from_how_densely_the_word_holds_the_newest_facts() {
        let counted = |count, oldest, cut| Counted {
            count,
            rows: Vec::new(),
            oldest,
            cut,
        };
        // 1,001 of the newest 2,002 of 100,000 facts: about half of them.
        let estimate = counted(1_001, 100_000 - 2_001, true).facts(100_000);
        assert!((estimate - 50_000.0).abs() < 1.0, "{estimate}");
        // A read that was not cut counted them all.
        assert_eq!(counted(40, 7, false).facts(100_000), 40.0);
        assert_eq!(counted(128, 99_001, true).facts(100_000), 12_800.0);
        // Never more than the facts, never fewer than were read.
        assert_eq!(counted(128, 99_990, true).facts(100_000), 100_000.0);
        assert_eq!(counted(128, 1, true).facts(100), 128.0);
    }
}
