//! The vector index's schema: its own component (`memory_vectors`), so it versions apart from the
//! memory store's full-text schema.
//!
//! Tables: `clawboo_vector_models` (one row per embedding model: its id, dimension count and
//! generation),
//! `clawboo_vector_entries` (one row per indexed fact: its model, its block or none while in the
//! model's tail, its sign bits and int8 code), `clawboo_vector_blocks` (a model's packed sign bits
//! and rowids, [`super::BLOCK`] vectors a row, scanned by every search) and
//! `clawboo_vector_pending` (facts whose vector changed and is not yet indexed).
//!
//! The triggers put every fact whose vector is written, changed or deleted, by any writer (ours,
//! the reference implementation, `sqlite3`), into `clawboo_vector_pending` in the writer's own
//! transaction; the first step queues every fact already embedded. They are plain SQL, so a writer
//! that knows nothing of the index keeps it honest, and a crash can never leave a fact and its
//! index entry apart: either both the fact and its pending row are committed, or neither. Other
//! triggers move a model's generation with every write to its entries or blocks (whoever writes
//! them: an older build of ours too), which is how a process knows its copy of what the scan
//! reads is still the file's (`super::ScanCopy`). A new model's generation starts at a random
//! value, so a model row deleted and made again never repeats the generations of the one before.

use crate::db::{SchemaPart, Step};

/// Queues every embedded fact the index does not hold (the first step's last statement; a test
/// rebuilds an emptied index with it).
macro_rules! backfill {
    () => {
        "INSERT OR IGNORE INTO clawboo_vector_pending (fact_rowid)
             SELECT rowid FROM memory_facts
             WHERE embedding IS NOT NULL
               AND rowid NOT IN (SELECT fact_rowid FROM clawboo_vector_entries);"
    };
}
#[cfg(test)]
pub(super) use backfill;

/// The vector index's schema.
pub const SCHEMA: SchemaPart = SchemaPart {
    component: "memory_vectors",
    steps: &[
        Step::Sql(concat!(
            "
CREATE TABLE IF NOT EXISTS clawboo_vector_models (
    id INTEGER PRIMARY KEY,
    model TEXT NOT NULL UNIQUE,
    dims INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS clawboo_vector_entries (
    fact_rowid INTEGER PRIMARY KEY,
    model_id INTEGER NOT NULL,
    block_id INTEGER,
    bits BLOB NOT NULL,
    code BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS clawboo_vector_entries_tail
    ON clawboo_vector_entries (model_id) WHERE block_id IS NULL;
CREATE TABLE IF NOT EXISTS clawboo_vector_blocks (
    id INTEGER PRIMARY KEY,
    model_id INTEGER NOT NULL,
    count INTEGER NOT NULL,
    bits BLOB NOT NULL,
    rowids BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS clawboo_vector_blocks_model ON clawboo_vector_blocks (model_id);
CREATE TABLE IF NOT EXISTS clawboo_vector_pending (fact_rowid INTEGER PRIMARY KEY);

CREATE TRIGGER IF NOT EXISTS clawboo_vector_ai AFTER INSERT ON memory_facts
WHEN new.embedding IS NOT NULL BEGIN
    INSERT OR IGNORE INTO clawboo_vector_pending (fact_rowid) VALUES (new.rowid);
END;
CREATE TRIGGER IF NOT EXISTS clawboo_vector_au AFTER UPDATE OF embedding, embedding_model
ON memory_facts BEGIN
    INSERT OR IGNORE INTO clawboo_vector_pending (fact_rowid) VALUES (new.rowid);
END;
CREATE TRIGGER IF NOT EXISTS clawboo_vector_au_rowid AFTER UPDATE ON memory_facts
WHEN old.rowid <> new.rowid BEGIN
    INSERT OR IGNORE INTO clawboo_vector_pending (fact_rowid) VALUES (old.rowid), (new.rowid);
END;
CREATE TRIGGER IF NOT EXISTS clawboo_vector_ad AFTER DELETE ON memory_facts
WHEN old.embedding IS NOT NULL BEGIN
    INSERT OR IGNORE INTO clawboo_vector_pending (fact_rowid) VALUES (old.rowid);
END;
",
            backfill!()
        )),
        Step::AddColumn {
            table: "clawboo_vector_models",
            column: "generation",
            definition: "INTEGER NOT NULL DEFAULT 0",
        },
        Step::Sql(
            "
CREATE TRIGGER IF NOT EXISTS clawboo_vector_entries_ai AFTER INSERT ON clawboo_vector_entries
BEGIN
    UPDATE clawboo_vector_models SET generation = generation + 1 WHERE id = new.model_id;
END;
CREATE TRIGGER IF NOT EXISTS clawboo_vector_entries_au AFTER UPDATE ON clawboo_vector_entries
BEGIN
    UPDATE clawboo_vector_models SET generation = generation + 1
    WHERE id IN (old.model_id, new.model_id);
END;
CREATE TRIGGER IF NOT EXISTS clawboo_vector_entries_ad AFTER DELETE ON clawboo_vector_entries
BEGIN
    UPDATE clawboo_vector_models SET generation = generation + 1 WHERE id = old.model_id;
END;
CREATE TRIGGER IF NOT EXISTS clawboo_vector_blocks_ai AFTER INSERT ON clawboo_vector_blocks
BEGIN
    UPDATE clawboo_vector_models SET generation = generation + 1 WHERE id = new.model_id;
END;
CREATE TRIGGER IF NOT EXISTS clawboo_vector_blocks_au AFTER UPDATE ON clawboo_vector_blocks
BEGIN
    UPDATE clawboo_vector_models SET generation = generation + 1
    WHERE id IN (old.model_id, new.model_id);
END;
CREATE TRIGGER IF NOT EXISTS clawboo_vector_blocks_ad AFTER DELETE ON clawboo_vector_blocks
BEGIN
    UPDATE clawboo_vector_models SET generation = generation + 1 WHERE id = old.model_id;
END;
",
        ),
    ],
};
