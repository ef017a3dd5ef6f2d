use std::cell::RefCell;

use rusqlite::Connection;

use super::codes::tests::uniform;
use super::*;
use crate::db::Db;
use crate::memory::embed::{cosine, to_blob};

/// Writes a fact with `vector` by `model` as any writer would (plain SQL); returns its rowid.
fn put(conn: &Connection, model: &str, vector: &[f32]) -> i64 {
    conn.prepare_cached(
        "INSERT INTO memory_facts (id, title, content, embedding, embedding_model,
                                   created_at, updated_at)
         VALUES (lower(hex(randomblob(16))), 't', 'c', ?1, ?2, 0, 0)",
    )
    .unwrap()
    .execute(params![to_blob(vector), model])
    .unwrap();
    conn.last_insert_rowid()
}

/// [`nearest`] as a memory process asks it, keeping its scan copy from one search to the next;
/// each answer is checked against a fresh read of the file.
fn searcher(conn: &Connection) -> impl Fn(&str, &[f32], usize) -> Vec<i64> + '_ {
    let copy = RefCell::new(ScanCopy::default());
    move |model, query, k| {
        let kept = nearest(conn, &mut copy.borrow_mut(), model, query, k).unwrap();
        let fresh = nearest(conn, &mut ScanCopy::default(), model, query, k).unwrap();
        assert_eq!(
            kept, fresh,
            "a kept copy answers as a fresh read of the file"
        );
        kept
    }
}

fn count(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn entries(conn: &Connection) -> i64 {
    count(conn, "SELECT count(*) FROM clawboo_vector_entries")
}

fn pending(conn: &Connection) -> i64 {
    count(conn, "SELECT count(*) FROM clawboo_vector_pending")
}

/// `n` vectors of `dims` around 50 cluster centres (as real embeddings cluster by topic).
fn clustered(seed: u64, n: usize, dims: usize) -> Vec<Vec<f32>> {
    let mut next = uniform(seed);
    let centres: Vec<Vec<f32>> = (0..50)
        .map(|_| (0..dims).map(|_| next()).collect())
        .collect();
    (0..n)
        .map(|i| {
            centres[i % centres.len()]
                .iter()
                .map(|c| c + next() * 0.8)
                .collect()
        })
        .collect()
}

#[test]
fn a_fact_written_by_any_writer_is_found_and_models_never_mix() {
    let db = Db::open_in_memory().unwrap();
    let conn = db.conn();
    let near = searcher(&conn);
    let a = put(&conn, "m1", &[1.0, 0.0]);
    let b = put(&conn, "m2", &[0.0, 1.0]);
    let c = put(&conn, "m1", &[0.0, 1.0]);
    assert_eq!(pending(&conn), 3, "the triggers queue every embedded fact");
    assert_eq!(near("m1", &[0.1, 1.0], 5), [c, a]);
    assert_eq!(pending(&conn), 0, "a search indexes the queue first");
    assert_eq!(near("m2", &[1.0, 0.0], 5), [b]);
    assert_eq!(near("m3", &[1.0, 0.0], 5), Vec::<i64>::new());
    // A query, or a stored vector, of another length than the model's is never compared.
    assert!(near("m1", &[1.0, 0.0, 0.0], 5).is_empty());
    let longer = put(&conn, "m1", &[1.0, 0.0, 0.0]);
    assert_eq!(near("m1", &[1.0, 0.0], 5), [a, c]);
    assert_eq!(entries(&conn), 3);
    // A fact without a vector, or with a torn one, is never queued or never indexed.
    conn.execute(
        "INSERT INTO memory_facts (id, title, content, embedding, embedding_model, created_at,
                                   updated_at)
         VALUES ('none', 't', 'c', NULL, NULL, 0, 0), ('torn', 't', 'c', x'010203', 'm1', 0, 0)",
        [],
    )
    .unwrap();
    assert_eq!(near("m1", &[1.0, 0.0], 5), [a, c]);
    assert_eq!((entries(&conn), pending(&conn)), (3, 0));
    // Once no vector of the model's old length is left, the model takes the new one.
    conn.execute("DELETE FROM memory_facts WHERE rowid IN (?1, ?2)", [a, c])
        .unwrap();
    conn.execute(
        "UPDATE memory_facts SET embedding = embedding WHERE rowid = ?1",
        [longer],
    )
    .unwrap();
    assert_eq!(near("m1", &[1.0, 0.0, 0.1], 5), [longer]);
}

#[test]
fn updates_deletes_and_model_changes_move_or_drop_entries_in_the_tail_and_in_blocks() {
    let db = Db::open_in_memory().unwrap();
    let conn = db.conn();
    let near = searcher(&conn);
    let vectors = clustered(7, BLOCK + 10, 16);
    let rowids: Vec<i64> = vectors.iter().map(|v| put(&conn, "m", v)).collect();
    catch_up(&conn).unwrap();
    let blocks = || count(&conn, "SELECT count(*) FROM clawboo_vector_blocks");
    let tail = || {
        count(
            &conn,
            "SELECT count(*) FROM clawboo_vector_entries WHERE block_id IS NULL",
        )
    };
    assert_eq!((blocks(), tail()), (1, 10), "a full tail is packed");
    let (packed, waiting) = (3, BLOCK + 2);
    let far = vec![-50.0; 16];
    let top = |q: &[f32]| near("m", q, 1);
    // An update in place: the old code leaves, the new one is found.
    for i in [packed, waiting] {
        conn.execute(
            "UPDATE memory_facts SET embedding = ?1 WHERE rowid = ?2",
            params![to_blob(&far), rowids[i]],
        )
        .unwrap();
        assert_eq!(top(&far), [rowids[i]]);
        assert_ne!(top(&vectors[i]), [rowids[i]]);
        conn.execute(
            "UPDATE memory_facts SET embedding = ?1 WHERE rowid = ?2",
            params![to_blob(&vectors[i]), rowids[i]],
        )
        .unwrap();
        assert_eq!(top(&vectors[i]), [rowids[i]]);
    }
    assert_eq!(entries(&conn), rowids.len() as i64);
    // A model change moves the entry to the new model's index.
    conn.execute(
        "UPDATE memory_facts SET embedding_model = 'm-next' WHERE rowid = ?1",
        [rowids[packed]],
    )
    .unwrap();
    assert_ne!(top(&vectors[packed]), [rowids[packed]]);
    assert_eq!(
        near("m-next", &vectors[0], 5),
        [rowids[packed]],
        "the new model's index holds it alone"
    );
    // Deletes leave nothing behind, from a block or from the tail.
    conn.execute(
        "DELETE FROM memory_facts WHERE rowid IN (?1, ?2)",
        [rowids[packed], rowids[waiting]],
    )
    .unwrap();
    assert!(near("m-next", &vectors[0], 5).is_empty());
    assert_eq!(entries(&conn), rowids.len() as i64 - 2);
    assert_eq!((blocks(), tail()), (1, 9));
    let in_block = count(&conn, "SELECT sum(count) FROM clawboo_vector_blocks");
    assert_eq!(in_block, BLOCK as i64 - 1);
    assert_eq!(near("m", &vectors[0], 10_000).len(), rowids.len() - 2);
}

#[test]
fn an_index_rebuilt_from_the_queue_answers_as_the_kept_one() {
    let db = Db::open_in_memory().unwrap();
    let conn = db.conn();
    let near = searcher(&conn);
    let vectors = clustered(11, 2 * BLOCK + 100, 24);
    for v in &vectors {
        put(&conn, "m", v);
    }
    let queries = clustered(12, 20, 24);
    let before: Vec<Vec<i64>> = queries.iter().map(|q| near("m", q, 10)).collect();
    // What a file written before the index existed looks like: no entries, nothing queued; the
    // schema step's backfill queues every embedded fact.
    conn.execute_batch(
        "DELETE FROM clawboo_vector_entries; DELETE FROM clawboo_vector_blocks;
         DELETE FROM clawboo_vector_models; DELETE FROM clawboo_vector_pending;",
    )
    .unwrap();
    assert!(near("m", &queries[0], 10).is_empty());
    conn.execute_batch(super::sql::backfill!()).unwrap();
    assert_eq!(catch_up(&conn).unwrap(), vectors.len());
    let after: Vec<Vec<i64>> = queries.iter().map(|q| near("m", q, 10)).collect();
    assert_eq!(before, after);
}

#[test]
fn recall_at_ten_against_exact_search_on_random_data_is_at_least_0_95() {
    let db = Db::open_in_memory().unwrap();
    let conn = db.conn();
    let near = searcher(&conn);
    let dims = 96;
    let n = 2 * PREFILTER;
    let vectors = clustered(21, n, dims);
    immediate(&conn, |tx| {
        for v in &vectors {
            put(tx, "m", v);
        }
        Ok::<_, MemoryError>(())
    })
    .unwrap();
    let mut next = uniform(22);
    let mut hits = 0;
    let queries = 40;
    for q in 0..queries {
        let query: Vec<f32> = vectors[q * 97 % n]
            .iter()
            .map(|x| x + next() * 0.5)
            .collect();
        let mut exact: Vec<f64> = vectors.iter().map(|v| cosine(&query, v)).collect();
        exact.sort_by(|a, b| b.total_cmp(a));
        let tenth = exact[9];
        // As the caller does: the index's candidates re-scored with the stored vectors.
        let mut found: Vec<f64> = near("m", &query, 100)
            .into_iter()
            .map(|rowid| cosine(&query, &vectors[rowid as usize - 1]))
            .collect();
        found.sort_by(|a, b| b.total_cmp(a));
        hits += found
            .iter()
            .take(10)
            .filter(|&&s| s >= tenth - 1e-9)
            .count();
    }
    let recall = hits as f64 / (queries * 10) as f64;
    assert!(recall >= 0.95, "recall@10 {recall}");
}

#[test]
fn torn_index_rows_are_skipped_not_a_panic() {
    let db = Db::open_in_memory().unwrap();
    let conn = db.conn();
    let near = searcher(&conn);
    let vectors = clustered(5, BLOCK + 1, 8);
    for v in &vectors {
        put(&conn, "m", v);
    }
    catch_up(&conn).unwrap();
    conn.execute_batch(
        "UPDATE clawboo_vector_blocks SET bits = substr(bits, 1, 100), rowids = x'0102';
         UPDATE clawboo_vector_entries SET code = x'01', bits = x'02' WHERE block_id IS NULL;",
    )
    .unwrap();
    assert!(near("m", &vectors[0], 5).len() <= 5);
    conn.execute("DELETE FROM memory_facts WHERE rowid = 1", [])
        .unwrap();
    near("m", &vectors[0], 5);
}

#[test]
fn a_kept_copy_follows_what_another_connection_indexes() {
    let dir = clawboo_tests::TempDir::new("vector-copy");
    let (one, two) = (
        Db::open(&dir.db_path()).unwrap(),
        Db::open(&dir.db_path()).unwrap(),
    );
    let (reader, writer) = (one.conn(), two.conn());
    let near = searcher(&reader);
    let vectors = clustered(3, BLOCK + 5, 16);
    let rowids: Vec<i64> = vectors.iter().map(|v| put(&writer, "m", v)).collect();
    catch_up(&writer).unwrap();
    assert_eq!(near("m", &vectors[7], 1), [rowids[7]]);
    // Another process deletes a packed fact, then adds one to the tail, indexing each itself.
    writer
        .execute("DELETE FROM memory_facts WHERE rowid = ?1", [rowids[7]])
        .unwrap();
    catch_up(&writer).unwrap();
    assert_ne!(near("m", &vectors[7], 1), [rowids[7]]);
    let far = vec![-50.0; 16];
    let added = put(&writer, "m", &far);
    catch_up(&writer).unwrap();
    assert_eq!(near("m", &far, 1), [added]);
    assert_eq!(
        near("m", &far, 10_000).len(),
        rowids.len(),
        "one gone, one added"
    );
}
