//! Vector search: the facts nearest a query's embedding, in scope, with their stored vectors.
//!
//! Owns: asking the file's vector index (`memory::vectors`) for the nearest rowids and reading
//! them back from the file with the scope filter, asking for more while the scope filters too
//! many out. The index's answers are candidates only: each is read back and later scored with its
//! stored `f32` vector (`blend`), so the final order is exact and an out-of-scope fact is never
//! returned.
//!
//! Must never: compare vectors made by different models (only rows whose `embedding_model` is the
//! current model's are read).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use rusqlite::Connection;
use rusqlite::types::Value as SqlValue;

use super::super::embed::from_blob;
use super::super::vectors::{self, ScanCopy};
use super::super::{Entry, MemoryError, ReadScope, fact_columns, fact_from_row, scope_filter};
use super::{Candidate, as_params, named, rowid_list};

/// Vector and hybrid search read back this many of the index's nearest candidates per hit asked
/// for: the index's int8 order is within about 0.01 of the exact cosine, so the exact best `limit`
/// are among its best `3 × limit` (recall@10 against exact search 0.998 at a million facts). Hybrid
/// (which asks for at least `blend::NEAREST_REFERENCE`) needs no more: a fact that matches no word
/// of the query scores by its similarity alone (`blend`), so one past the nearest it asked for can
/// never reach the hits, and the full-text hits join the candidates on their own.
const OVERFETCH: usize = 3;

/// The facts nearest `query_vector` among every in-scope fact embedded by `model`: the index
/// proposes the nearest `limit × OVERFETCH` rowids (then four times more, while the scope filters
/// too many out and the index has more), and those are read back with the scope filter and their
/// stored vectors. `copy` is the process's copy of what the index scans (`vectors`).
pub(super) fn nearest(
    conn: &Connection,
    copy: &Mutex<ScanCopy>,
    query_vector: &[f32],
    model: &str,
    limit: u32,
    scope: &ReadScope,
) -> Result<Vec<Candidate>, MemoryError> {
    let mut wanted = (limit as usize * OVERFETCH).max(OVERFETCH);
    loop {
        let rowids = vectors::nearest(
            conn,
            &mut copy.lock().unwrap_or_else(PoisonError::into_inner),
            model,
            query_vector,
            wanted,
        )?;
        let found = facts_by_rowid(conn, &rowids, model, scope)?;
        if found.len() >= limit as usize || rowids.len() < wanted {
            return Ok(found);
        }
        wanted *= 4;
    }
}

/// The facts with `rowids` that are in scope and embedded by `model`, with their vectors, each
/// once.
fn facts_by_rowid(
    conn: &Connection,
    rowids: &[i64],
    model: &str,
    scope: &ReadScope,
) -> Result<Vec<Candidate>, MemoryError> {
    let params = named(
        scope,
        [
            (":rowids", rowid_list(rowids)),
            (":model", SqlValue::Text(model.to_owned())),
        ],
    );
    let found = conn
        .prepare_cached(concat!(
            "SELECT ",
            fact_columns!(),
            ", m.embedding AS embedding
             FROM json_each(:rowids) AS wanted JOIN memory_facts m ON m.rowid = wanted.value
             WHERE m.embedding_model = :model AND ",
            scope_filter!()
        ))?
        .query_map(as_params(&params).as_slice(), |r| {
            let blob: Option<Vec<u8>> = r.get("embedding")?;
            Ok(Candidate {
                entry: Entry::Fact(fact_from_row(r)?),
                text: None,
                vector: blob.as_deref().and_then(from_blob),
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(found)
}

/// Gives each of `hits` that is a fact embedded by `model` its stored vector: the full-text hits
/// that join a hybrid search's candidates, read here for the few kept rather than with every
/// candidate the full-text reads looked at (a vector is a few kilobytes).
pub(super) fn add_vectors<'c>(
    conn: &Connection,
    hits: impl IntoIterator<Item = &'c mut Candidate>,
    model: &str,
) -> Result<(), MemoryError> {
    let mut hits: HashMap<String, &mut Candidate> = hits
        .into_iter()
        .filter(|hit| matches!(hit.entry, Entry::Fact(_)))
        .map(|hit| (hit.entry.id().to_owned(), hit))
        .collect();
    if hits.is_empty() {
        return Ok(());
    }
    let ids: Vec<&str> = hits.keys().map(String::as_str).collect();
    let ids = serde_json::to_string(&ids).unwrap_or_else(|_| "[]".into());
    let mut statement = conn.prepare_cached(
        "SELECT m.id, m.embedding
         FROM json_each(?1) AS wanted JOIN memory_facts m ON m.id = wanted.value
         WHERE m.embedding_model = ?2",
    )?;
    let mut rows = statement.query((ids, model))?;
    while let Some(row) = rows.next()? {
        let id: String = row.get(0)?;
        let blob: Option<Vec<u8>> = row.get(1)?;
        if let Some(hit) = hits.get_mut(&id) {
            hit.vector = blob.as_deref().and_then(from_blob);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::super::embed::Provider;
    use super::super::SearchMode;
    use super::*;
    use crate::db::Db;
    use crate::memory::{Embedder, Memory, NewFact, ReadScope, WriteScope};

    /// A store in memory whose provider is a loopback Ollama, and that provider.
    fn embedding_store() -> (Provider, Memory) {
        let provider = Provider::Ollama {
            base: clawboo_tests::loopback::ollama().base,
            model: "nomic-embed-text".into(),
        };
        let memory = Memory::new(
            Db::open_in_memory().unwrap(),
            Embedder::with(Some(provider.clone())),
        );
        (provider, memory)
    }

    #[test]
    fn an_old_fact_is_found_by_meaning_behind_thousands_of_newer_ones() {
        let (provider, memory) = embedding_store();
        let old = NewFact {
            title: "Payments",
            content: "refunds go through the stripe dashboard",
            tags: &[],
        };
        let old = memory.save_fact(&old, &WriteScope::default()).unwrap();
        let team_only = NewFact {
            title: "Ledger",
            content: "stripe refunds are reconciled in the ledger dashboard",
            tags: &[],
        };
        let team_only = memory
            .save_fact(&team_only, &WriteScope::new(Some("team-a"), None, None))
            .unwrap();
        // Thousands of newer facts, each embedded (written directly: one HTTP call each would be
        // slow), none about payments.
        let fillers: Vec<(String, String)> = (0..3000)
            .map(|i| {
                (
                    format!("note {i}"),
                    format!("garden {i} hose and rake and shed"),
                )
            })
            .collect();
        {
            let conn = memory.db.conn();
            crate::memory::seed_facts(&conn, fillers.iter().map(|(t, c)| (t.as_str(), c.as_str())))
                .unwrap();
            let mut set = conn
                .prepare(
                    "UPDATE memory_facts SET embedding = ?1, embedding_model = ?2 WHERE id = ?3",
                )
                .unwrap();
            let ids: Vec<(String, String)> = conn
                .prepare("SELECT id, content FROM memory_facts WHERE title LIKE 'note %'")
                .unwrap()
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            for (id, content) in ids {
                let vector: Vec<f32> = clawboo_tests::loopback::bag_of_words(&content)
                    .into_iter()
                    .map(|x| x as f32)
                    .collect();
                set.execute(rusqlite::params![
                    crate::memory::embed::to_blob(&vector),
                    provider.id(),
                    id
                ])
                .unwrap();
            }
        }
        for mode in [SearchMode::Vector, SearchMode::Hybrid] {
            let hits = memory
                .search(
                    "stripe dashboard refunds",
                    Some(mode),
                    3,
                    &ReadScope::default(),
                )
                .unwrap()
                .hits;
            let first = hits.first().map(|h| h.entry.id());
            assert!(
                first == Some(old.id.as_str()) || first == Some(team_only.id.as_str()),
                "{mode:?}: {hits:?}"
            );
            assert!(
                hits.iter().take(2).any(|h| h.entry.id() == old.id),
                "{mode:?}"
            );
        }
        // A reader scoped to another team still finds the global fact, never team A's.
        let hits = memory
            .search(
                "stripe dashboard refunds",
                Some(SearchMode::Vector),
                3,
                &ReadScope::new(Some("team-b"), None, None),
            )
            .unwrap()
            .hits;
        assert_eq!(hits[0].entry.id(), old.id);
        assert!(hits.iter().all(|h| h.entry.id() != team_only.id));
    }

    #[test]
    fn full_text_hits_joining_hybrid_get_their_vectors_of_the_model_only() {
        let (provider, memory) = embedding_store();
        let save = |title: &str| {
            let fact = NewFact {
                title,
                content: "stripe refunds",
                tags: &[],
            };
            memory.save_fact(&fact, &WriteScope::default()).unwrap()
        };
        let (embedded, other_model) = (save("embedded"), save("other model"));
        let procedure = memory
            .save_procedure("refund", "how to refund", &WriteScope::default())
            .unwrap();
        let conn = memory.db.conn();
        conn.execute(
            "UPDATE memory_facts SET embedding_model = 'openai:other' WHERE id = ?1",
            [&other_model.id],
        )
        .unwrap();
        let stored: Vec<u8> = conn
            .query_row(
                "SELECT embedding FROM memory_facts WHERE id = ?1",
                [&embedded.id],
                |r| r.get(0),
            )
            .unwrap();
        let mut hits: Vec<Candidate> = [
            Entry::Fact(embedded),
            Entry::Fact(other_model),
            Entry::Procedure(procedure),
        ]
        .into_iter()
        .map(|entry| Candidate {
            entry,
            text: Some(1.0),
            vector: None,
        })
        .collect();
        add_vectors(&conn, hits.iter_mut(), &provider.id()).unwrap();
        assert_eq!(hits[0].vector, from_blob(&stored));
        assert!(hits[0].vector.is_some());
        assert_eq!(
            hits[1].vector, None,
            "a vector of another model is never read"
        );
        assert_eq!(hits[2].vector, None, "a procedure has none");
        // Nothing asked, nothing read.
        add_vectors(&conn, [], &provider.id()).unwrap();
    }
}
