//! The vector index kept in the file, across processes: two memory processes save facts at once
//! while a third searches; afterwards every fact is indexed exactly once and found by meaning, and
//! a fact written by another program (plain SQL) is found by the next search.

use std::path::Path;

use clawboo_tests::{Rng, Server, TempDir, loopback};
use serde_json::{Value, json};

const BIN: &str = "clawboo-mcp-memory";
/// Facts each writer saves: together more than one packed block of the index (1,024), so a pack
/// runs while the other writer and the searcher are busy.
const PER_WRITER: usize = 600;

/// A fact's content: eight words of a made-up vocabulary, distinct for every (writer, index).
fn content(writer: usize, index: usize) -> String {
    let mut rng = Rng::new(((writer as u64) << 32) + index as u64 + 1);
    (0..8)
        .map(|_| format!("w{}x{}", rng.below(400), rng.below(7)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn count(db: &Path, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open(db).expect("open the database");
    conn.query_row(sql, [], |r| r.get(0)).expect("a count")
}

fn vector_search(server: &mut Server, query: &str) -> Vec<Value> {
    let reply = server.call(
        "memory_search",
        json!({"query": query, "mode": "vector", "limit": 10}),
    );
    assert!(!reply.is_error, "{}", reply.text());
    assert_eq!(reply.blocks.len(), 1, "not degraded: {:?}", reply.blocks);
    reply.json().as_array().cloned().unwrap_or_default()
}

#[test]
fn two_writers_and_a_searcher_in_three_processes_lose_nothing() {
    let dir = TempDir::new("vectors-processes");
    let db = dir.db_path();
    let ollama = loopback::ollama();
    let env = [("OLLAMA_HOST", ollama.base.as_str())];
    let writers: Vec<_> = (0..2)
        .map(|writer| {
            let (db, base) = (db.clone(), ollama.base.clone());
            std::thread::spawn(move || {
                let mut server = Server::spawn(BIN, &db, &[("OLLAMA_HOST", base.as_str())]);
                let calls: Vec<(&str, Value)> = (0..PER_WRITER)
                    .map(|i| {
                        let title = format!("writer {writer} fact {i}");
                        (
                            "memory_save",
                            json!({"title": title, "content": content(writer, i)}),
                        )
                    })
                    .collect();
                for chunk in calls.chunks(25) {
                    for reply in server.call_pipelined(chunk) {
                        assert!(!reply.is_error, "{}", reply.text());
                    }
                }
                server.close();
            })
        })
        .collect();
    let mut searcher = Server::spawn(BIN, &db, &env);
    let mut searches = 0;
    while writers.iter().any(|w| !w.is_finished()) {
        vector_search(&mut searcher, &content(searches % 2, searches));
        searches += 1;
    }
    for writer in writers {
        writer.join().expect("a writer panicked");
    }
    assert!(searches > 0);

    let saved = 2 * PER_WRITER as i64;
    assert_eq!(count(&db, "SELECT count(*) FROM memory_facts"), saved);
    for (writer, index) in (0..saved as usize).step_by(7).map(|n| (n % 2, n / 2)) {
        let title = format!("writer {writer} fact {index}");
        let hits = vector_search(
            &mut searcher,
            &format!("{title}\n{}", content(writer, index)),
        );
        assert!(
            hits.iter().any(|h| h["title"] == title.as_str()),
            "{title} not found: {hits:?}"
        );
    }
    // Each fact indexed once; one block packed; nothing left waiting.
    assert_eq!(
        count(&db, "SELECT count(*) FROM clawboo_vector_entries"),
        saved
    );
    assert_eq!(
        count(
            &db,
            "SELECT coalesce(sum(count), 0) FROM clawboo_vector_blocks"
        ),
        1024
    );
    assert_eq!(count(&db, "SELECT count(*) FROM clawboo_vector_pending"), 0);

    // A fact another program writes is found by the next search.
    {
        let conn = rusqlite::Connection::open(&db).expect("open the database");
        let model: String = conn
            .query_row(
                "SELECT embedding_model FROM memory_facts LIMIT 1",
                [],
                |r| r.get(0),
            )
            .expect("a model");
        let words = "quartz lantern harbor violet";
        let blob: Vec<u8> = loopback::bag_of_words(words)
            .into_iter()
            .flat_map(|x| (x as f32).to_le_bytes())
            .collect();
        conn.execute(
            "INSERT INTO memory_facts (id, title, content, embedding, embedding_model,
                                       created_at, updated_at)
             VALUES ('written-by-sqlite', 'foreign', ?1, ?2, ?3, 0, 0)",
            rusqlite::params![words, blob, model],
        )
        .expect("a foreign insert");
    }
    let hits = vector_search(&mut searcher, "quartz lantern harbor violet");
    assert_eq!(hits[0]["id"], "written-by-sqlite");
    searcher.close();
    assert_eq!(clawboo_tests::integrity_check(&db), "ok");
}
