//! The per-process vector index: every fact's vector, compact, so vector search compares the query
//! with the whole store in milliseconds.
//!
//! Owns: a copy of `memory_facts.embedding` for one embedding model, each vector quantized to one
//! signed byte per dimension (768 dimensions: 768 bytes a fact, 77 MB for 100,000 facts instead of
//! 300 MB of `f32`s read from the file per query), plus a sketch of each in [`SKETCH_DIMS`] bytes
//! (a count sketch: each dimension added, with a fixed sign, into one of 128 buckets, which keeps
//! dot products in expectation); and the approximate nearest rowids it answers: the sketches pick
//! the [`SHORTLIST`] most promising vectors, whose full codes decide.
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
    /// [`SKETCH_DIMS`] codes per vector: the quantized count sketch.
    sketches: Vec<i8>,
    /// The Euclidean norm of each sketch.
    sketch_norms: Vec<f32>,
}

/// Bytes of a vector's sketch.
const SKETCH_DIMS: usize = 128;
/// How many vectors, at least, the sketches shortlist for a full comparison.
const SHORTLIST: usize = 2_000;

/// The count sketch of `vector`: dimension `i` added with sign `sign(i)` into bucket `bucket(i)`.
fn sketch(vector: &[f32]) -> Vec<f32> {
    let mut out = vec![0.0f32; SKETCH_DIMS];
    for (i, x) in vector.iter().enumerate() {
        let h = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let sign = if h >> 63 == 0 { 1.0 } else { -1.0 };
        out[((h >> 32) as usize) % SKETCH_DIMS] += sign * x;
    }
    out
}

/// Similarity of two code vectors by their dot product and norms (`-1` for a zero vector).
fn similarity(a: &[i8], a_norm: f32, b: &[i8], b_norm: f32) -> f32 {
    if a_norm == 0.0 || b_norm == 0.0 {
        -1.0
    } else {
        dot(a, b) as f32 / (a_norm * b_norm)
    }
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
            sketches: Vec::new(),
            sketch_norms: Vec::new(),
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
            let (sketch, sketch_norm) = quantize(&sketch(&vector));
            self.rowids.push(rowid);
            self.codes.extend(codes);
            self.norms.push(norm);
            self.sketches.extend(sketch);
            self.sketch_norms.push(sketch_norm);
        }
        self.last_rowid = max_rowid;
        Ok(())
    }

    /// The `k` rowids whose vectors are nearest `query` (approximately), nearest first.
    fn nearest(&self, query: &[f32], k: usize) -> Vec<i64> {
        if query.len() != self.dims || self.rowids.is_empty() {
            return Vec::new();
        }
        let (query_codes, query_norm) = quantize(query);
        let (query_sketch, query_sketch_norm) = quantize(&sketch(query));
        if query_norm == 0.0 {
            return Vec::new();
        }
        // The shortlist, by sketch.
        let mut shortlist: Vec<(f32, usize)> = self
            .sketches
            .chunks_exact(SKETCH_DIMS)
            .zip(&self.sketch_norms)
            .enumerate()
            .map(|(i, (codes, norm))| {
                (
                    similarity(&query_sketch, query_sketch_norm, codes, *norm),
                    i,
                )
            })
            .collect();
        keep_best(&mut shortlist, SHORTLIST.max(k * 20));
        // The full comparison of the shortlist.
        let mut scored: Vec<(f32, usize)> = shortlist
            .into_iter()
            .map(|(_, i)| {
                let codes = &self.codes[i * self.dims..(i + 1) * self.dims];
                (
                    similarity(&query_codes, query_norm, codes, self.norms[i]),
                    i,
                )
            })
            .collect();
        keep_best(&mut scored, k);
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.into_iter().map(|(_, i)| self.rowids[i]).collect()
    }
}

/// Keeps the `k` highest-scored entries (in no particular order).
fn keep_best(scored: &mut Vec<(f32, usize)>, k: usize) {
    if k < scored.len() {
        scored.select_nth_unstable_by(k, |a, b| b.0.total_cmp(&a.0));
        scored.truncate(k);
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
            if current.is_none() {
                *slot = Some(Arc::new(Loaded::empty(model)));
            }
            let loaded = slot.as_mut().expect("set above");
            // In place unless a search still holds the old snapshot (then a copy).
            Arc::make_mut(loaded).extend(conn, max_rowid)?;
        }
        Ok(Arc::clone(slot.as_ref().expect("set above")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Db;

    /// Values in `[-1, 1]` from the test PRNG.
    fn uniform(seed: u64) -> impl FnMut() -> f32 {
        let mut rng = clawboo_tests::Rng::new(seed);
        move || rng.below(2001) as f32 / 1000.0 - 1.0
    }

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
        let mut next = uniform(0x9E37_79B9);
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
    fn the_sketch_shortlist_keeps_the_true_nearest_among_many() {
        let mut next = uniform(0x2545_F491);
        let mut loaded = Loaded::empty("m");
        loaded.dims = 768;
        let target: Vec<f32> = (0..768).map(|_| next()).collect();
        let count = 5 * SHORTLIST;
        for i in 0..count {
            let vector: Vec<f32> = if i == count / 3 {
                target.clone()
            } else {
                (0..768).map(|_| next()).collect()
            };
            let (codes, norm) = quantize(&vector);
            let (sketch, sketch_norm) = quantize(&sketch(&vector));
            loaded.rowids.push(i as i64);
            loaded.codes.extend(codes);
            loaded.norms.push(norm);
            loaded.sketches.extend(sketch);
            loaded.sketch_norms.push(sketch_norm);
        }
        let query: Vec<f32> = target.iter().map(|x| x + next() * 0.3).collect();
        assert_eq!(loaded.nearest(&query, 3)[0], (count / 3) as i64);
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
