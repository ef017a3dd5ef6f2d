//! Deleting old rows without holding the write lock for long: the mechanism of retention.
//!
//! Owns: [`PurgeRule`] (a repository's two statements: how many rows a cutoff would remove, and
//! how to remove up to a batch of them) and [`purge`], which runs a rule in bounded batches, each
//! its own `BEGIN IMMEDIATE` transaction. Guarantees: a batch removes at most [`BATCH_ROWS`] rows
//! (or the batch the caller names), the write lock is released between batches (so writers from
//! other processes get their turn, and a purge of a million rows is many short transactions, not
//! one long one), and a failure rolls back only the batch it hit. [`reclaim`] gives the freed
//! pages back to the file system afterwards (`VACUUM`, then a truncating WAL checkpoint).
//! Must never: know a table (each repository writes its own rule, and `schema::retention` says
//! which rules exist and how old a row must be), nor choose a cutoff.

use rusqlite::params;

use super::{Conn, DbError, immediate};

/// The most rows one purge transaction removes by default.
pub const BATCH_ROWS: u32 = 500;

/// One table's retention statements, written by the repository that owns the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PurgeRule {
    /// `SELECT count(*) …`: how many rows are older than the cutoff `?1` and may go.
    pub count: &'static str,
    /// `DELETE …`: removes at most `?2` of those rows (older than `?1`).
    pub delete: &'static str,
}

/// What a purge removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Purged {
    /// Rows removed (or, for a dry run, that would be).
    pub rows: u64,
    /// Transactions it took (none for a dry run).
    pub batches: u32,
}

/// How many rows `rule` would remove at `cutoff_ms` (a dry run: nothing is written).
pub fn count(conn: &Conn<'_>, rule: &PurgeRule, cutoff_ms: i64) -> Result<u64, DbError> {
    let rows: i64 = conn.query_row(rule.count, params![cutoff_ms], |r| r.get(0))?;
    Ok(u64::try_from(rows).unwrap_or(0))
}

/// Removes every row `rule` selects at `cutoff_ms`, at most `batch` (at least 1) per
/// `BEGIN IMMEDIATE` transaction, until a batch comes back short.
pub fn purge(
    conn: &Conn<'_>,
    rule: &PurgeRule,
    cutoff_ms: i64,
    batch: u32,
) -> Result<Purged, DbError> {
    let batch = batch.max(1);
    let mut done = Purged::default();
    loop {
        let removed = immediate(conn, |tx| {
            tx.execute(rule.delete, params![cutoff_ms, i64::from(batch)])
        })?;
        if removed == 0 {
            break;
        }
        done.rows += removed as u64;
        done.batches += 1;
        if removed < batch as usize {
            break;
        }
    }
    Ok(done)
}

/// What [`reclaim`]'s checkpoint reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkpoint {
    /// True when a reader kept the WAL from being emptied (it is truncated next time).
    pub busy: bool,
}

/// Rewrites the file without its free pages (`VACUUM`) and empties the WAL
/// (`PRAGMA wal_checkpoint(TRUNCATE)`).
///
/// `VACUUM` rewrites every page and holds the write lock until it is done: readers go on (WAL),
/// writers in other processes wait on the busy timeout (15 s, then a bounded retry of 60 s), so
/// on a file that takes longer than that to rewrite, a writer may give up with "database is
/// locked". The rewritten pages pass through the WAL, which the checkpoint then truncates.
pub fn reclaim(conn: &Conn<'_>) -> Result<Checkpoint, DbError> {
    conn.execute_batch("VACUUM")?;
    let busy: i64 = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))?;
    Ok(Checkpoint { busy: busy != 0 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::{Db, SchemaPart, Step};

    const PART: SchemaPart = SchemaPart {
        component: "t",
        steps: &[Step::Sql(
            "CREATE TABLE IF NOT EXISTS t (at INTEGER NOT NULL)",
        )],
    };

    const RULE: PurgeRule = PurgeRule {
        count: "SELECT count(*) FROM t WHERE at < ?1",
        delete: "DELETE FROM t WHERE rowid IN (SELECT rowid FROM t WHERE at < ?1 LIMIT ?2)",
    };

    #[test]
    fn a_purge_runs_in_bounded_batches_and_keeps_young_rows() {
        let db = Db::open_in_memory_with_schema(&[PART]).unwrap();
        let conn = db.conn();
        for at in 0..1_050 {
            conn.execute("INSERT INTO t (at) VALUES (?1)", [at])
                .unwrap();
        }
        assert_eq!(count(&conn, &RULE, 1_000).unwrap(), 1_000);
        let done = purge(&conn, &RULE, 1_000, 300).unwrap();
        assert_eq!(
            done,
            Purged {
                rows: 1_000,
                batches: 4
            }
        );
        let left: i64 = conn
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(left, 50);
        assert_eq!(purge(&conn, &RULE, 1_000, 300).unwrap(), Purged::default());
        // An exact multiple of the batch ends with one empty look, not counted.
        assert_eq!(
            purge(&conn, &RULE, 1_050, 25).unwrap(),
            Purged {
                rows: 50,
                batches: 2
            }
        );
    }
}
