//! The per-process vector index: every fact's vector, compact, so vector search compares the query
//! with the whole store in milliseconds.
//!
//! Owns: a copy of `memory_facts.embedding` for one embedding model, each vector quantized to one
//! signed byte per dimension (768 dimensions: 768 bytes a fact, 77 MB for 100,000 facts instead of
//! 300 MB of `f32`s read from the file per query), and the approximate nearest rowids it answers.
//!
//! Guarantees: the copy follows the file — before each search the rows added since the last one
//! (by any process) are read, and the copy is rebuilt when the file shrank or the model changed;
//! answers are candidates only: the caller reads them back from the file with the scope filter
//! and scores them with the stored `f32` vectors, so a deleted or out-of-scope fact is never
//! returned and the final order is exact. Facts are append-only (as in the reference); a vector
//! rewritten in place under the same rowid is seen only after a rebuild (a new process).
//!
//! Must never: hold the database lock while comparing vectors, or mix vectors of two models.

use std::sync::{Arc, Mutex};

use rusqlite::Connection;

use super::MemoryError;
use super::embed::from_blob;

/// The per-process index (empty until the first vector search).
#[derive(Default)]
pub struct VectorIndex {
    loaded: Mutex<Option<Arc<Loaded>>>,
}

impl std::fmt::Debug for VectorIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorIndex").finish_non_exhaustive()
    }
}

/// The vectors of one model, quantized.
#[derive(Clone)]
struct Loaded {
    model: String,
    dims: usize,
    /// The largest rowid of `memory_facts` seen.
    last_rowid: i64,
    rowids: Vec<i64>,
    /// `dims` codes per vector: `round(x / max|x| * 127)`.
    codes: Vec<i8>,
    /// The Euclidean norm of each vector's codes.
    norms: Vec<f32>,
}

impl Loaded {
    fn empty(model: &str) -> Self {
        Self {
            model: model.to_owned(),
            dims: 0,
            last_rowid: 0,
            rowids: Vec::new(),
            codes: Vec::new(),
            norms: Vec::new(),
        }
    }

    /// Adds the vectors of `model` in rows after `last_rowid`, up to `max_rowid`.
    fn extend(&mut self, conn: &Connection, max_rowid: i64) -> Result<(), MemoryError> {
        let mut rows = conn.prepare_cached(
            "SELECT rowid, embedding FROM memory_facts
             WHERE rowid > ?1 AND rowid <= ?2 AND embedding_model = ?3 ORDER BY rowid",
        )?;
        let mut rows = rows.query(rusqlite::params![self.last_rowid, max_rowid, self.model])?;
        while let Some(row) = rows.next()? {
            let rowid: i64 = row.get(0)?;
            let blob: Option<Vec<u8>> = row.get(1)?;
            let Some(vector) = blob.as_deref().and_then(from_blob) else {
                continue;
            };
            if self.dims == 0 {
                self.dims = vector.len();
            }
            if vector.len() != self.dims {
                continue;
            }
            let (codes, norm) = quantize(&vector);
            self.rowids.push(rowid);
            self.codes.extend(codes);
            self.norms.push(norm);
        }
        self.last_rowid = max_rowid;
        Ok(())
    }

    /// The `k` rowids whose vectors are nearest `query` (approximately), nearest first.
    fn nearest(&self, query: &[f32], k: usize) -> Vec<i64> {
        if query.len() != self.dims || self.rowids.is_empty() {
            return Vec::new();
        }
        let (query, query_norm) = quantize(query);
        if query_norm == 0.0 {
            return Vec::new();
        }
        let mut scored: Vec<(f32, i64)> = self
            .codes
            .chunks_exact(self.dims)
            .zip(&self.norms)
            .zip(&self.rowids)
            .map(|((codes, norm), rowid)| {
                let similarity = if *norm == 0.0 {
                    -1.0
                } else {
                    dot(&query, codes) as f32 / (norm * query_norm)
                };
                (similarity, *rowid)
            })
            .collect();
        let k = k.min(scored.len());
        if k < scored.len() {
            scored.select_nth_unstable_by(k, |a, b| b.0.total_cmp(&a.0));
            scored.truncate(k);
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.into_iter().map(|(_, rowid)| rowid).collect()
    }
}

/// One signed byte per dimension, scaled by the largest magnitude, and the codes' norm.
fn quantize(vector: &[f32]) -> (Vec<i8>, f32) {
    let scale = vector.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if scale == 0.0 || !scale.is_finite() {
        return (vec![0; vector.len()], 0.0);
    }
    let codes: Vec<i8> = vector
        .iter()
        .map(|x| (x / scale * 127.0).round().clamp(-127.0, 127.0) as i8)
        .collect();
    let norm = codes
        .iter()
        .map(|&c| f32::from(c) * f32::from(c))
        .sum::<f32>()
        .sqrt();
    (codes, norm)
}

/// The dot product of two code vectors (written so the compiler vectorizes it).
fn dot(a: &[i8], b: &[i8]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum()
}

impl VectorIndex {
    /// The `k` rowids of facts embedded by `model` nearest `query`, nearest first (approximate:
    /// callers re-score them exactly). Reads the rows added since the last call first.
    pub(super) fn nearest(
        &self,
        conn: &Connection,
        model: &str,
        query: &[f32],
        k: usize,
    ) -> Result<Vec<i64>, MemoryError> {
        let snapshot = self.refresh(conn, model)?;
        Ok(snapshot.nearest(query, k))
    }

    /// How many vectors the index holds for `model` (after a refresh).
    pub(super) fn len(&self, conn: &Connection, model: &str) -> Result<usize, MemoryError> {
        Ok(self.refresh(conn, model)?.rowids.len())
    }

    /// The index brought up to date with the file, as a snapshot to search without the lock.
    fn refresh(&self, conn: &Connection, model: &str) -> Result<Arc<Loaded>, MemoryError> {
        let max_rowid: i64 = conn
            .prepare_cached("SELECT coalesce(max(rowid), 0) FROM memory_facts")?
            .query_row([], |r| r.get(0))?;
        let mut slot = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        let current = slot
            .as_ref()
            .filter(|l| l.model == model && l.last_rowid <= max_rowid);
        let stale = current.is_none_or(|l| l.last_rowid < max_rowid);
        if stale {
            let mut next = match current {
                Some(loaded) => Loaded::clone(loaded),
                None => Loaded::empty(model),
            };
            next.extend(conn, max_rowid)?;
            *slot = Some(Arc::new(next));
        }
        Ok(Arc::clone(slot.as_ref().expect("set above")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Db;

    fn store(vectors: &[(&str, Vec<f32>)]) -> Db {
        let db = Db::open_in_memory().unwrap();
        for (i, (model, vector)) in vectors.iter().enumerate() {
            db.conn()
                .execute(
                    "INSERT INTO memory_facts (id, title, content, embedding, embedding_model,
                                               created_at, updated_at)
                     VALUES (?1, 't', 'c', ?2, ?3, 0, 0)",
                    rusqlite::params![format!("f{i}"), super::super::embed::to_blob(vector), model],
                )
                .unwrap();
        }
        db
    }

    #[test]
    fn quantized_similarity_is_close_to_cosine() {
        let mut state = 0x9E37_79B9_u32;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state % 2001) as f32 / 1000.0 - 1.0
        };
        for _ in 0..200 {
            let a: Vec<f32> = (0..768).map(|_| next()).collect();
            let b: Vec<f32> = a.iter().map(|x| x * 0.5 + next() * 0.5).collect();
            let (qa, na) = quantize(&a);
            let (qb, nb) = quantize(&b);
            let approx = f64::from(dot(&qa, &qb) as f32 / (na * nb));
            let exact = super::super::embed::cosine(&a, &b);
            assert!((approx - exact).abs() < 0.01, "{approx} vs {exact}");
        }
        assert_eq!(quantize(&[0.0, 0.0]).1, 0.0);
    }

    #[test]
    fn the_index_follows_the_file_and_keeps_models_apart() {
        let db = store(&[
            ("m1", vec![1.0, 0.0]),
            ("m2", vec![0.0, 1.0]),
            ("m1", vec![0.0, 1.0]),
        ]);
        let index = VectorIndex::default();
        let conn = db.conn();
        assert_eq!(index.nearest(&conn, "m1", &[0.1, 1.0], 5).unwrap(), [3, 1]);
        assert_eq!(index.nearest(&conn, "m2", &[1.0, 0.0], 5).unwrap(), [2]);
        assert_eq!(index.len(&conn, "m1").unwrap(), 2);
        conn.execute(
            "INSERT INTO memory_facts (id, title, content, embedding, embedding_model,
                                       created_at, updated_at)
             VALUES ('late', 't', 'c', ?1, 'm1', 0, 0)",
            [super::super::embed::to_blob(&[0.2, 1.0])],
        )
        .unwrap();
        assert_eq!(index.nearest(&conn, "m1", &[0.2, 1.0], 1).unwrap(), [4]);
        // A vector of another length, or a query of another length, is never compared.
        assert!(
            index
                .nearest(&conn, "m1", &[1.0, 0.0, 0.0], 5)
                .unwrap()
                .is_empty()
        );
    }
}
