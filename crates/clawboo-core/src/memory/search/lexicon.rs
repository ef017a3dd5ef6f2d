//! The words the full-text index of facts holds that start with a prefix, read from the index's
//! own leaves.
//!
//! Owns: [`Lexicon::words_starting`]. An `fts5vocab` table lists a range of the index's words too, but it
//! walks every row of every word in the range to count them, and a range holding a word like
//! `the` walks tens of thousands of rows at 100,000 facts (ten times that at a million) only to
//! name it. Here the words are read from the leaf pages that hold them: FTS5 keeps, for each
//! segment of the index, the first word of each leaf page in its `_idx` table (keyed by segment,
//! that word's shortest distinct prefix behind the index's `0`, and the page number shifted left
//! by one), and each leaf page of `_data` (row id: the segment shifted left by 37, plus the page)
//! ends with the offsets of the words that start on it (a page's four header bytes: the offset of
//! its first row id, then where that list begins, both big-endian). The first word on a page is
//! spelt whole (its length, then its bytes); each next one as how many bytes it keeps of the word
//! before, how many it adds, and those. Only the pages on which a word of the range starts are
//! read (those of a long row list between two words are skipped), so the cost follows how many
//! words the range holds, not how many rows.
//!
//! That layout is FTS5's file format (version 4, or 5 with secure-delete, in the index's
//! `_config`), which SQLite keeps readable across releases. On any other version, or a page that
//! does not decode, the words are listed by the `fts5vocab` table instead, so a change of format
//! costs speed, never an answer.
//!
//! Guarantees: the words are distinct, in byte order, each once even when several segments hold
//! it; read in one snapshot of the file. A word may be listed that no fact holds any more (its
//! facts deleted, the delete not yet merged into its segment): the caller counts the facts of a
//! word it keeps. Must never: panic on a page it cannot decode, or write.

use std::collections::BTreeSet;

use rusqlite::{Connection, OptionalExtension};

use super::super::MemoryError;

/// The versions of FTS5's format whose leaves this module reads.
const KNOWN_VERSIONS: [i64; 2] = [4, 5];
/// The byte before every word of the index's main part (prefix indexes use other bytes).
const MAIN_INDEX: u8 = b'0';

/// The index of facts' words, asked by prefix ([`Lexicon::words_starting`]).
pub(super) struct Lexicon<'c> {
    conn: &'c Connection,
    /// Whether the index's format is one whose leaves this module reads (read once, for every
    /// prefix asked of it).
    leaves_readable: bool,
}

impl<'c> Lexicon<'c> {
    /// The lexicon of the index of facts that `conn` reads.
    pub(super) fn of(conn: &'c Connection) -> Result<Self, MemoryError> {
        let version: Option<i64> = conn
            .prepare_cached("SELECT v FROM clawboo_facts_newest_fts_config WHERE k = 'version'")?
            .query_row([], |r| r.get(0))
            .optional()?;
        Ok(Self {
            conn,
            leaves_readable: version.is_some_and(|v| KNOWN_VERSIONS.contains(&v)),
        })
    }

    /// The words of the index starting with `prefix`, distinct, in byte order, at most `at_most`
    /// (the first ones).
    pub(super) fn words_starting(
        &self,
        prefix: &str,
        at_most: usize,
    ) -> Result<Vec<String>, MemoryError> {
        if self.leaves_readable
            && let Some(words) = from_leaves(self.conn, prefix, at_most)?
        {
            return Ok(words);
        }
        from_vocabulary(self.conn, prefix, at_most)
    }
}

/// [`Lexicon::words_starting`] from the leaves; `None` when a page does not decode.
fn from_leaves(
    conn: &Connection,
    prefix: &str,
    at_most: usize,
) -> Result<Option<Vec<String>>, MemoryError> {
    let low = [&[MAIN_INDEX], prefix.as_bytes()].concat();
    let Some(high) = past_prefix(&low) else {
        return Ok(Some(Vec::new()));
    };
    // One statement, so one snapshot of the file (a merge committed between two reads would
    // move the pages), and one round through SQLite: for each segment, the page on which `low`
    // would be (the last whose first word is not above it) and every page after it on which a
    // word below `high` starts.
    let mut pages = conn.prepare_cached(
        "WITH RECURSIVE segment(id) AS (
           SELECT min(segid) FROM clawboo_facts_newest_fts_idx
           UNION ALL
           SELECT (SELECT min(segid) FROM clawboo_facts_newest_fts_idx WHERE segid > segment.id)
           FROM segment WHERE segment.id IS NOT NULL
         )
         SELECT page.block
         FROM segment
         JOIN clawboo_facts_newest_fts_idx leaf ON leaf.segid = segment.id
          AND leaf.term >= coalesce((SELECT max(term) FROM clawboo_facts_newest_fts_idx
                                     WHERE segid = segment.id AND term <= ?1), x'')
          AND leaf.term < ?2
         JOIN clawboo_facts_newest_fts_data page ON page.id = (segment.id << 37) + (leaf.pgno >> 1)",
    )?;
    let mut rows = pages.query(rusqlite::params![low, high])?;
    let mut words: BTreeSet<Vec<u8>> = BTreeSet::new();
    while let Some(row) = rows.next()? {
        let block = row.get_ref(0)?;
        let keep = |word: &[u8]| {
            if word >= low.as_slice() && word < high.as_slice() && !words.contains(word) {
                words.insert(word.to_vec());
            }
        };
        if block
            .as_blob()
            .ok()
            .and_then(|b| words_on_page(b, keep))
            .is_none()
        {
            return Ok(None);
        }
    }
    Ok(Some(
        words
            .into_iter()
            .take(at_most)
            .filter_map(|w| String::from_utf8(w[1..].to_vec()).ok())
            .collect(),
    ))
}

/// [`Lexicon::words_starting`] from the `fts5vocab` table over the index.
fn from_vocabulary(
    conn: &Connection,
    prefix: &str,
    at_most: usize,
) -> Result<Vec<String>, MemoryError> {
    let Some(high) = past_prefix(prefix.as_bytes()) else {
        return Ok(Vec::new());
    };
    let high = String::from_utf8_lossy(&high).into_owned();
    let words = conn
        .prepare_cached(
            "SELECT term FROM clawboo_facts_newest_vocab WHERE term >= ?1 AND term < ?2 LIMIT ?3",
        )?
        .query_map(
            rusqlite::params![prefix, high, i64::try_from(at_most).unwrap_or(i64::MAX)],
            |r| r.get(0),
        )?
        .collect::<rusqlite::Result<_>>()?;
    Ok(words)
}

/// The least byte string above every string starting with `prefix` (`None` when there is none:
/// a prefix of only 0xff bytes).
fn past_prefix(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut past = prefix.to_vec();
    while let Some(last) = past.pop() {
        if last < u8::MAX {
            past.push(last + 1);
            return Some(past);
        }
    }
    None
}

/// Hands `each` every word (with the index's leading byte) that starts on the leaf page `block`,
/// in order, spelt in one buffer (a page holds dozens of words, most outside the range asked
/// for); `None` when the page does not decode as a leaf.
fn words_on_page(block: &[u8], mut each: impl FnMut(&[u8])) -> Option<()> {
    let offsets_at = usize::from(u16::from_be_bytes([*block.get(2)?, *block.get(3)?]));
    let offsets = block.get(offsets_at..)?;
    let (mut at, mut read) = (0usize, 0usize);
    let mut word: Vec<u8> = Vec::new();
    let mut first = true;
    while read < offsets.len() {
        let (delta, used) = varint(offsets.get(read..)?)?;
        read += used;
        at = at.checked_add(usize::try_from(delta).ok()?)?;
        let mut cursor = block.get(at..offsets_at)?;
        let kept = if first {
            0
        } else {
            let (kept, used) = varint(cursor)?;
            cursor = cursor.get(used..)?;
            let kept = usize::try_from(kept).ok()?;
            (kept <= word.len()).then_some(kept)?
        };
        let (added, used) = varint(cursor)?;
        let added = cursor.get(used..used.checked_add(usize::try_from(added).ok()?)?)?;
        word.truncate(kept);
        word.extend_from_slice(added);
        each(&word);
        first = false;
    }
    Some(())
}

/// SQLite's variable-length integer at the start of `bytes` (big-endian groups of seven bits,
/// the ninth byte whole) and how many bytes it took; `None` when `bytes` ends inside it.
fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value: u64 = 0;
    for (i, &byte) in bytes.iter().enumerate().take(9) {
        if i == 8 {
            return Some(((value << 8) | u64::from(byte), 9));
        }
        value = (value << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Db;

    /// The words on `block`, each as its own vector.
    fn on_page(block: &[u8]) -> Option<Vec<Vec<u8>>> {
        let mut words = Vec::new();
        words_on_page(block, |w| words.push(w.to_vec()))?;
        Some(words)
    }

    /// Every word of the range, as the `fts5vocab` table lists it.
    fn vocabulary(conn: &Connection, prefix: &str) -> Vec<String> {
        from_vocabulary(conn, prefix, usize::MAX).unwrap()
    }

    #[test]
    fn the_leaves_list_what_the_vocabulary_lists_across_segments_and_long_row_lists() {
        let db = Db::open_in_memory().unwrap();
        let conn = db.conn();
        // Many small transactions leave several segments (written past the writers' upkeep,
        // which would merge them); `theme` in every fact gives a row list that spans pages with
        // no word starting on them, between `the` and `then…`.
        for batch in 0..12 {
            let contents: Vec<String> = (0..150)
                .map(|i| {
                    format!(
                        "theme then {} thesis{} therm{} other words {batch}",
                        if i % 2 == 0 { "the" } else { "them" },
                        i % 40,
                        (i * 7 + batch) % 90
                    )
                })
                .collect();
            let tx = conn.unchecked_transaction().unwrap();
            for (i, content) in contents.iter().enumerate() {
                tx.execute(
                    "INSERT INTO memory_facts (id, title, content, created_at, updated_at)
                     VALUES (?1, 'title', ?2, 0, 0)",
                    (format!("fact-{batch}-{i}"), content),
                )
                .unwrap();
            }
            tx.commit().unwrap();
        }
        let segments: i64 = conn
            .query_row(
                "SELECT count(DISTINCT segid) FROM clawboo_facts_newest_fts_idx",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(segments > 1, "{segments} segments");
        let leaves: Vec<Vec<u8>> = conn
            .prepare(
                "SELECT block FROM clawboo_facts_newest_fts_data
                 WHERE id >= 1 << 37 AND (id >> 31) & 63 = 0",
            )
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let wordless = leaves
            .iter()
            .filter(|b| on_page(b).is_some_and(|w| w.is_empty()))
            .count();
        assert!(
            wordless > 0,
            "no page of a long row list among {}",
            leaves.len()
        );
        for prefix in ["the", "th", "t", "o", "wor", "1", "zzz", "thesis1"] {
            let read = from_leaves(&conn, prefix, usize::MAX).unwrap();
            assert_eq!(read, Some(vocabulary(&conn, prefix)), "{prefix:?}");
        }
        let first = Lexicon::of(&conn).unwrap().words_starting("th", 5).unwrap();
        assert_eq!(first, vocabulary(&conn, "th")[..5]);
        assert!(vocabulary(&conn, "the").len() > 40);
    }

    #[test]
    fn a_page_that_does_not_decode_is_no_page() {
        // The list of words' offsets points past the page, or into the header.
        assert_eq!(on_page(&[0, 0, 0, 9, 1]), None);
        assert_eq!(on_page(&[0, 0, 0, 4, 200]), None);
        assert_eq!(on_page(&[0, 0]), None);
        // A page on which no word starts (a long row list's).
        assert_eq!(on_page(&[0, 4, 0, 6, 1, 2]), Some(Vec::new()));
        // One word: `0ab` at offset 4.
        assert_eq!(
            on_page(&[0, 0, 0, 8, 3, b'0', b'a', b'b', 4]),
            Some(vec![b"0ab".to_vec()])
        );
        // A second word keeping more bytes than the first has.
        assert_eq!(
            on_page(&[0, 0, 0, 13, 3, b'0', b'a', b'b', 9, 1, b'c', 0, 0, 4, 4]),
            None
        );
    }

    #[test]
    fn a_varint_is_read_as_sqlite_writes_it() {
        assert_eq!(varint(&[0x05]), Some((5, 1)));
        assert_eq!(varint(&[0x81, 0x00]), Some((128, 2)));
        assert_eq!(varint(&[0x81]), None);
        assert_eq!(varint(&[0xff; 9]), Some((u64::MAX, 9)));
    }

    #[test]
    fn the_range_past_a_prefix_is_the_next_string_of_its_length_or_less() {
        assert_eq!(past_prefix(b"abc"), Some(b"abd".to_vec()));
        assert_eq!(past_prefix(b"a\xff"), Some(b"b".to_vec()));
        assert_eq!(past_prefix(b"\xff"), None);
    }
}
