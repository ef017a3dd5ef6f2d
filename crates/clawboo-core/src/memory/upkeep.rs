//! Keeping the full-text indexes merged, so a search reads each term in one place.
//!
//! Owns: [`merge_text_indexes`]. FTS5 writes a new segment for every write transaction and merges
//! segments level by level (two of a level into one, schema step 4 of `sql`), so an index written
//! one fact at a time holds several segments at rest, and every term a search reads is looked up
//! in each of them: on the bench's tuning corpus at 100,000 facts (the corpus search is tuned on),
//! a search took 3.2 ms of CPU over thirteen segments (four merged into one), 2.6–2.7 ms over
//! seven (two merged into one) and 2.3–2.6 ms over one, in alternating runs. Merging them all is
//! FTS5's `merge` command with a negative page count, run again until it has nothing left to do;
//! each run writes at most [`MERGE_PAGES`] pages in its own `BEGIN IMMEDIATE`, so a writer from
//! another process never waits long for the lock. The host runs it hourly and `compact` runs it;
//! a merged index stays merged until the next writes.
//!
//! Must never: change what a search finds (merging only moves the index's entries), or hold the
//! write lock across steps.

use rusqlite::Connection;

use super::MemoryError;
use crate::db::immediate;

/// The most index pages one merge step writes (FTS5 pages are a few kilobytes).
const MERGE_PAGES: i64 = 1_000;
/// The indexes merged: ours for facts and procedures, and the reference's index of facts, which
/// the same file keeps for the reference's readers.
const INDEXES: [&str; 3] = [
    "INSERT INTO clawboo_facts_newest_fts(clawboo_facts_newest_fts, rank) VALUES ('merge', ?1)",
    "INSERT INTO clawboo_procedures_fts(clawboo_procedures_fts, rank) VALUES ('merge', ?1)",
    "INSERT INTO memory_facts_fts(memory_facts_fts, rank) VALUES ('merge', ?1)",
];

/// Merges every segment of each full-text index into one, in steps of at most 1,000 pages, each
/// its own transaction; returns how many steps wrote something.
pub fn merge_text_indexes(conn: &Connection) -> Result<u32, MemoryError> {
    let mut steps = 0;
    for merge in INDEXES {
        loop {
            let before = conn.total_changes();
            immediate(&conn, |tx| tx.execute(merge, [-MERGE_PAGES]))?;
            // FTS5 counts a change per page it writes: fewer than two means nothing was left.
            if conn.total_changes() - before < 2 {
                break;
            }
            steps += 1;
        }
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Db;
    use crate::memory::{Embedder, Memory, NewFact, ReadScope, SearchMode, WriteScope};

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
            let content = format!("deploy number {i} waits for the lock on shard {}", i % 7);
            let new = NewFact {
                title: "rollout",
                content: &content,
                tags: &[],
            };
            memory.save_fact(&new, &WriteScope::default()).unwrap();
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
        assert!(segments(&conn) > 1, "one save, one segment at first");
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
}
