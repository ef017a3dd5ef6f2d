//! Keeping the full-text indexes merged, so a search reads each term in one place.
//!
//! Owns: [`merge_text_indexes`], and when a writer keeps the facts index even
//! ([`keep_even_after_save`], [`keep_even_after_bulk_write`]). FTS5 writes a new segment for every
//! write transaction and merges segments level by level (two of a level into one, schema step 4 of
//! `sql`), so an index written one fact at a time holds several segments at rest, and every term a
//! search reads is looked up in each of them: on the bench's tuning corpus at 100,000 facts (the
//! corpus search is tuned on), a search took 3.2 ms of CPU over thirteen segments (four merged into
//! one), 2.6–2.7 ms over seven (two merged into one) and 2.3–2.6 ms over one, in alternating runs.
//! Merging them all is FTS5's `merge` command with a negative page count, run again until it has
//! nothing left to do; each run writes at most [`MERGE_PAGES`] pages in its own `BEGIN IMMEDIATE`,
//! so a writer from another process never waits long for the lock. The host runs it hourly and
//! `compact` runs it.
//!
//! Between those, the writers keep the facts index (the one every search reads) **even**: no more
//! than [`UNEVEN_SHARE`] of its leaf pages outside its largest segment. A small segment costs a
//! search little; a second large one (FTS5 never merges segments of different levels by itself)
//! costs it a lookup as dear as the first. Every [`CHECK_EVERY`]th fact saved checks (the check
//! counts the index's leaf pages per segment: about 0.1 ms at 100,000 facts, 1 ms at a million),
//! and while the index is uneven, it runs one merge step of [`SAVE_STEP_PAGES`] pages after its
//! own commit, so no save waits for a whole merge (about 0.3 s at 100,000 facts, ten times that
//! at a million; a step is 30–90 ms, and a merge of 100,000 facts takes nine, one every 64 saves)
//! and a merge is done long before the index can be uneven again. Each full merge writes the
//! whole index once it grew by an eighth, so all of them together write about nine times the
//! index's final size. A bulk writer (`seed_facts`) merges the whole index when it left it uneven
//! ([`keep_even_after_bulk_write`]).
//!
//! Must never: change what a search finds (merging only moves the index's entries), hold the
//! write lock across steps, or fail a save that was committed (a step that fails is logged and
//! left to the next check).

use rusqlite::Connection;

use super::MemoryError;
use crate::db::immediate;
use crate::log;

/// The most index pages one merge step writes (FTS5 pages are a few kilobytes).
const MERGE_PAGES: i64 = 1_000;
/// The indexes merged: ours for facts and procedures, and the reference's index of facts, which
/// the same file keeps for the reference's readers.
const INDEXES: [&str; 3] = [
    "INSERT INTO clawboo_facts_newest_fts(clawboo_facts_newest_fts, rank) VALUES ('merge', ?1)",
    "INSERT INTO clawboo_procedures_fts(clawboo_procedures_fts, rank) VALUES ('merge', ?1)",
    "INSERT INTO memory_facts_fts(memory_facts_fts, rank) VALUES ('merge', ?1)",
];

/// The facts index every search reads, kept even by its writers.
const FACTS_INDEX: &str = INDEXES[0];
/// How many leaf pages of the facts index each segment holds (its `%_idx` table has a row per
/// leaf page a term starts on).
const PAGES_PER_SEGMENT: &str = "SELECT count(*) FROM clawboo_facts_newest_fts_idx GROUP BY segid";
/// The facts index is uneven when its segments but the largest hold this share of its pages.
const UNEVEN_SHARE: f64 = 1.0 / 8.0;
/// A fact whose rowid is a multiple of this checks whether the facts index is even.
const CHECK_EVERY: i64 = 64;
/// The most index pages a save's merge step writes (30–90 ms of writing at 100,000 facts).
const SAVE_STEP_PAGES: i64 = 250;

/// Merges every segment of each full-text index into one, in steps of at most 1,000 pages, each
/// its own transaction; returns how many steps wrote something.
pub fn merge_text_indexes(conn: &Connection) -> Result<u32, MemoryError> {
    let mut steps = 0;
    for merge in INDEXES {
        steps += merge_whole(conn, merge)?;
    }
    Ok(steps)
}

/// After a bulk write was committed: the facts index merged into one segment when the write left
/// it uneven. Never fails, as [`keep_even_after_save`].
pub(super) fn keep_even_after_bulk_write(conn: &Connection) {
    if let Err(e) = merge_if_uneven(conn) {
        left_as_written(&e);
    }
}

/// Merges the facts index into one segment when it is uneven; returns how many steps wrote
/// something.
fn merge_if_uneven(conn: &Connection) -> Result<u32, MemoryError> {
    if is_uneven(conn)? {
        merge_whole(conn, FACTS_INDEX)
    } else {
        Ok(0)
    }
}

/// After the fact at `rowid` was saved and committed: every [`CHECK_EVERY`]th fact, one merge
/// step of the facts index when it is uneven. Never fails: the save stands, and a step that could
/// not run is logged and left to the next check.
pub(super) fn keep_even_after_save(conn: &Connection, rowid: i64) {
    if rowid % CHECK_EVERY != 0 {
        return;
    }
    let stepped = is_uneven(conn).and_then(|uneven| {
        if uneven {
            merge_step(conn, FACTS_INDEX, SAVE_STEP_PAGES)?;
        }
        Ok(())
    });
    if let Err(e) = stepped {
        left_as_written(&e);
    }
}

/// Logs a merge that could not run after its writes were committed: they stand, and the next
/// check tries again.
fn left_as_written(e: &MemoryError) {
    log::warn(&format!("the full-text index was left as written: {e}"));
}

/// Whether the facts index's segments but the largest hold [`UNEVEN_SHARE`] of its pages.
fn is_uneven(conn: &Connection) -> Result<bool, MemoryError> {
    let mut statement = conn.prepare_cached(PAGES_PER_SEGMENT)?;
    let pages: Vec<i64> = statement
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    Ok(is_uneven_shape(&pages))
}

/// Whether segments of these page counts are uneven (more than one, and those but the largest
/// hold [`UNEVEN_SHARE`] of the pages).
fn is_uneven_shape(pages: &[i64]) -> bool {
    let total: i64 = pages.iter().sum();
    let largest = pages.iter().copied().max().unwrap_or(0);
    pages.len() > 1 && (total - largest) as f64 >= UNEVEN_SHARE * total as f64
}

/// Merges the index `merge` names into one segment, a step at a time; returns how many steps
/// wrote something.
fn merge_whole(conn: &Connection, merge: &str) -> Result<u32, MemoryError> {
    let mut steps = 0;
    while merge_step(conn, merge, MERGE_PAGES)? {
        steps += 1;
    }
    Ok(steps)
}

/// One step of merging every segment of the index `merge` names into one, writing at most `pages`
/// pages in its own transaction; whether it wrote anything.
fn merge_step(conn: &Connection, merge: &str, pages: i64) -> Result<bool, MemoryError> {
    let before = conn.total_changes();
    immediate(&conn, |tx| tx.execute(merge, [-pages]))?;
    // FTS5 counts a change per page it writes: fewer than two means nothing was left.
    Ok(conn.total_changes() - before >= 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Db;
    use crate::memory::{Embedder, Entry, Memory, NewFact, ReadScope, SearchMode, WriteScope};

    fn segments(conn: &Connection) -> i64 {
        conn.query_row(
            "SELECT count(DISTINCT segid) FROM clawboo_facts_newest_fts_idx",
            [],
            |r| r.get(0),
        )
        .unwrap()
    }

    #[test]
    fn the_indexes_a_search_reads_merge_two_segments_of_a_level_into_one() {
        let db = Db::open_in_memory().unwrap();
        let conn = db.conn();
        for index in ["clawboo_facts_newest_fts", "clawboo_procedures_fts"] {
            let automerge: i64 = conn
                .query_row(
                    &format!("SELECT v FROM {index}_config WHERE k = 'automerge'"),
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(automerge, 2, "{index}");
        }
    }

    #[test]
    fn facts_written_one_at_a_time_end_in_one_segment_and_are_found_as_before() {
        let memory = Memory::new(Db::open_in_memory().unwrap(), Embedder::none());
        for i in 0..300 {
            save(&memory, i);
        }
        let ids = |query: &str| -> Vec<String> {
            let scope = ReadScope::default();
            let found = memory
                .search(query, Some(SearchMode::Fts), 10, &scope)
                .unwrap();
            found.hits.iter().map(|h| h.entry.id().to_owned()).collect()
        };
        let queries = ["deploy lock", "shard 3", "number 250 waits"];
        let before: Vec<Vec<String>> = queries.iter().map(|q| ids(q)).collect();
        let conn = memory.db.conn();
        assert!(
            segments(&conn) > 1,
            "the saves since the last check left segments"
        );
        let steps = merge_text_indexes(&conn).unwrap();
        assert!(steps >= 1);
        assert_eq!(segments(&conn), 1);
        assert_eq!(
            merge_text_indexes(&conn).unwrap(),
            0,
            "nothing left to merge"
        );
        drop(conn);
        let after: Vec<Vec<String>> = queries.iter().map(|q| ids(q)).collect();
        assert_eq!(before, after);
        assert!(!after[2].is_empty());
    }

    fn save(memory: &Memory, i: usize) {
        let content = format!("deploy number {i} waits for the lock on shard {}", i % 7);
        let new = NewFact {
            title: "rollout",
            content: &content,
            tags: &[],
        };
        memory.save_fact(&new, &WriteScope::default()).unwrap();
    }

    #[test]
    fn an_index_is_uneven_when_its_segments_but_the_largest_hold_an_eighth_of_it() {
        assert!(!is_uneven_shape(&[]));
        assert!(!is_uneven_shape(&[1_000]));
        assert!(
            !is_uneven_shape(&[1_000, 60, 30, 2]),
            "small segments are cheap"
        );
        assert!(is_uneven_shape(&[1_000, 100, 50]));
        assert!(
            is_uneven_shape(&[842, 518, 30, 17, 6, 2, 1]),
            "two large segments"
        );
        assert!(is_uneven_shape(&[3, 3]));
    }

    #[test]
    fn facts_saved_one_at_a_time_keep_the_index_even() {
        let memory = Memory::new(Db::open_in_memory().unwrap(), Embedder::none());
        let mut merged = 0;
        for i in 1..=2_000 {
            save(&memory, i);
            let conn = memory.db.conn();
            if i % CHECK_EVERY as usize == 0 {
                assert!(
                    !is_uneven(&conn).unwrap(),
                    "a check after fact {i} evened it"
                );
                merged += usize::from(segments(&conn) == 1);
            }
        }
        assert!(merged > 10, "merged at {merged} checks");
        let found = memory
            .search(
                "number 1999 waits",
                Some(SearchMode::Fts),
                10,
                &ReadScope::default(),
            )
            .unwrap();
        let Entry::Fact(best) = &found.hits[0].entry else {
            panic!("a fact was saved")
        };
        assert!(best.content.contains("number 1999 "), "{}", best.content);
    }

    #[test]
    fn a_bulk_writer_leaves_the_index_in_one_segment_when_it_made_it_uneven() {
        let db = Db::open_in_memory().unwrap();
        let conn = db.conn();
        let facts: Vec<(String, String)> = (0..6_000)
            .map(|i| {
                (
                    "note".to_owned(),
                    format!("shard {i} holds the lock for job {}", i % 13),
                )
            })
            .collect();
        let as_pairs = |range: std::ops::Range<usize>| {
            facts[range]
                .iter()
                .map(|(t, c)| (t.as_str(), c.as_str()))
                .collect::<Vec<_>>()
        };
        crate::memory::seed_facts(&conn, as_pairs(0..5_000)).unwrap();
        crate::memory::seed_facts(&conn, as_pairs(5_000..6_000)).unwrap();
        assert_eq!(segments(&conn), 1, "two batches of other sizes, merged");
        assert_eq!(merge_if_uneven(&conn).unwrap(), 0, "even: nothing to do");
    }
}
