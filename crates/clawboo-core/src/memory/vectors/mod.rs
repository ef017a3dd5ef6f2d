//! The vector index, kept in the database file: every embedded fact's vector in two compact codes,
//! so a search in a fresh process reads a few megabytes instead of every stored `f32`.
//!
//! Owns: the `clawboo_vector_*` tables ([`SCHEMA`], its own schema component) and every write to
//! them. Per embedding model, each indexed fact has an entry with its 512 sign bits (64 bytes) and
//! its int8 code (`dims + 4` bytes) (see `codes`). A model's sign bits are also packed with their
//! rowids, [`BLOCK`] facts to a row, into blocks: new entries wait in the model's tail and are
//! packed once [`BLOCK`] of them are there.
//!
//! A search ([`nearest`]) runs in one read transaction, in three stages, and answers candidates:
//! 1. the query's sign bits against every entry's (Hamming distance: 64 bytes and a few `popcnt`s
//!    a fact) keep the [`PREFILTER`] nearest;
//! 2. the asymmetric estimate (the query's exact projections against those entries' sign bits, see
//!    `codes`) shortlists the best [`SHORTLIST`] of them;
//! 3. their int8 codes (one primary-key read each) rank them by approximate cosine, and the best
//!    `k` are returned. The caller reads those facts back with the scope filter and scores them
//!    with the stored `f32` vectors, so the final order is exact and a deleted or out-of-scope fact
//!    is never returned.
//!
//! Stage 1 reads a [`ScanCopy`]: every entry's sign bits and rowid (72 bytes a fact) as the packed
//! blocks and the tail hold them, read from the file by the process's first search of the model
//! and kept while the file's index is unchanged. Triggers (`sql`) move the model's generation
//! with every write to its entries or blocks, by any writer, and each search reads the generation
//! in its transaction, so a copy is only used while it is exactly what the file holds.
//!
//! Why these choices (measured with the bench's deterministic embedder on its corpus of technical
//! sentences, `cargo xtask bench-vectors`; recall@10 counts a hit right when its exact cosine ties
//! or beats the exact tenth):
//! - No coarse partition (IVF). k-means over those vectors leaves little cluster structure: probing
//!   the nearest 20% of 256 to 1,024 partitions kept only 0.95–0.965 of the exact top 10 at 100k,
//!   and fewer probes far less, while a scan of all sign bits keeps more than 0.99.
//! - 512 sign bits rather than int8 projections for the scan: for the bytes read they estimate the
//!   angle better (64 bytes of bits beat 128 bytes of an int8 projection to 128 dimensions: 0.987
//!   against 0.972 with a 500 shortlist at 100k), and compare with `popcnt`.
//! - The asymmetric estimate between the scan and the codes: the Hamming distance throws away the
//!   query's magnitudes and ties often, so it needed 2,000 int8 reads for 0.993 at a million
//!   facts; re-ranking its best 8,000 by the estimate (a fraction of a millisecond) keeps 0.997
//!   with 500 reads (0.998 with 1,000), and 0.999 at 100k. Fewer reads matter twice. Each is a
//!   random page: at a million facts the entries are 840 MB, often not all in the page cache, and
//!   500 reads then cost more than the scan. And inside SQLite's memory map (the first 2 GiB of
//!   the file) the kernel maps up to 64 KB around each page it faults in, all counted in the
//!   process's resident set: the first query of a fresh process at 100k peaked at 105 MiB with
//!   2,000 reads, 67 to 73 MiB with 500.
//! - A copy kept in the process rather than the blocks read again by each search: past SQLite's
//!   memory map every page of a block is a system call (at a million facts, 72 MB read cost about
//!   30 ms, nearly all system time), while scanning the copy costs about 10 ms. It costs 72 bytes
//!   a fact of memory (7 MB at 100k, 72 MB at a million), and a write to the index makes the next
//!   search read the file again, which is what every search did before.
//! - A randomized Hadamard transform for the projections: `O(d log d)` per vector instead of
//!   `O(512 d)`, so indexing a million vectors takes seconds, not minutes, and no matrix is stored.
//! - Blocks of [`BLOCK`]: big enough that per-row overhead is small next to the bytes read (977 rows
//!   at 1M), small enough that packing costs a writer little; the tail is read row by row.
//!
//! Guarantees: the index follows the file, whoever writes it. Triggers (`sql`) queue every fact
//! whose vector is written, changed or deleted in `clawboo_vector_pending`, in the writer's
//! transaction; our own writer indexes its fact in that same transaction ([`index_rows`]); anything
//! else still queued (written by the reference implementation, `sqlite3`, or an older build) is
//! indexed by the next search before it reads ([`catch_up`]). Entries are per model: a fact whose
//! model changes leaves the old model's index for the new one's, and a vector whose length is not
//! its model's is not indexed while any vector of the model's length is (the model takes the new
//! length once none is left), so codes of two models or lengths are never compared. A kept
//! [`ScanCopy`] answers as a read of the file would (its generation is checked in the search's
//! transaction). Must never: be read outside a transaction (a pack running in another process could
//! otherwise move entries between the two reads), or panic on stored bytes of the wrong length (a
//! torn or foreign row is skipped).

mod codes;
mod sql;
#[cfg(test)]
mod tests;

use std::time::Instant;

use rusqlite::{Connection, OptionalExtension, params};

use self::codes::{Asymmetric, BITS_BYTES, Bits};
use super::MemoryError;
use super::embed::from_blob;
use crate::db::immediate;

pub use sql::SCHEMA;

/// Facts per packed block.
pub(super) const BLOCK: usize = 1024;
/// How many facts, at least, the Hamming distance keeps for the asymmetric estimate.
pub(super) const PREFILTER: usize = 8_000;
/// How many facts, at least, the asymmetric estimate shortlists for the int8 stage.
pub(super) const SHORTLIST: usize = 500;
/// How many queued facts [`catch_up`] indexes per transaction, so a long catch-up never holds the
/// write lock for long.
const CATCH_UP_BATCH: usize = 5_000;

/// The `k` rowids of facts embedded by `model` nearest `query`, nearest first (approximately:
/// callers re-score them exactly). Fewer than `k` only when the model has fewer indexed facts.
/// Indexes whatever is queued first.
pub(super) fn nearest(
    conn: &Connection,
    copy: &mut ScanCopy,
    model: &str,
    query: &[f32],
    k: usize,
) -> Result<Vec<i64>, MemoryError> {
    if has_pending(conn)? {
        catch_up(conn)?;
    }
    let tx = conn.unchecked_transaction()?;
    let Some((model_id, dims)) = model_row(&tx, model)? else {
        return Ok(Vec::new());
    };
    if dims != query.len() || k == 0 {
        return Ok(Vec::new());
    }
    let started = Instant::now();
    let generation: i64 = tx
        .prepare_cached("SELECT generation FROM clawboo_vector_models WHERE id = ?1")?
        .query_row([model_id], |r| r.get(0))?;
    let kept = copy.of == Some((model_id, generation));
    if !kept {
        // The old copy goes first, so two are never held at once.
        *copy = ScanCopy::default();
        *copy = ScanCopy::read(&tx, model_id, generation)?;
    }
    let projections = codes::projections(query);
    let short = SHORTLIST.max(k);
    let candidates = prefilter(copy, &codes::signs(&projections), PREFILTER.max(short));
    let shortlist = shortlist(copy, &Asymmetric::new(&projections), &candidates, short);
    let scan_ms = started.elapsed().as_secs_f64() * 1e3;
    let query_code = codes::code(query);
    let mut read_code = tx.prepare_cached(
        "SELECT code FROM clawboo_vector_entries WHERE fact_rowid = ?1 AND model_id = ?2",
    )?;
    let mut scored = Vec::with_capacity(shortlist.len());
    for rowid in shortlist {
        let code: Option<Vec<u8>> = read_code
            .query_row(params![rowid, model_id], |r| r.get(0))
            .optional()?;
        if let Some(code) = code {
            scored.push((codes::code_cosine(&query_code, &code), rowid));
        }
    }
    drop(read_code);
    tx.commit()?;
    crate::log::debug(&format!(
        "vector search: {} sign bits ({}) scanned and shortlisted in {scan_ms:.1} ms, {} codes \
         read in {:.1} ms",
        copy.rowids.len(),
        if kept { "kept" } else { "read" },
        scored.len(),
        started.elapsed().as_secs_f64() * 1e3 - scan_ms
    ));
    if scored.len() > k {
        scored.select_nth_unstable_by(k, |a, b| b.0.total_cmp(&a.0));
        scored.truncate(k);
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
    Ok(scored.into_iter().map(|(_, rowid)| rowid).collect())
}

/// A process's copy of what the scan reads of one model's index: every entry's sign bits and
/// rowid, from the packed blocks and the tail, and the model's generation when they were read.
/// Triggers (`sql`) change the generation with every write to the model's entries or blocks, by
/// any writer, so a copy whose generation is still the file's holds exactly what reading the file
/// again would give.
#[derive(Default)]
pub struct ScanCopy {
    /// The model's id and generation the copy was read at; `None` before the first read.
    of: Option<(i64, i64)>,
    /// Sign bits as stored, [`BITS_BYTES`] per entry.
    bits: Vec<u8>,
    rowids: Vec<i64>,
}

impl std::fmt::Debug for ScanCopy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScanCopy")
            .field("of", &self.of)
            .field("entries", &self.rowids.len())
            .finish()
    }
}

impl ScanCopy {
    /// Reads model `model_id`'s packed blocks and tail (at `generation`) in `conn`'s transaction.
    fn read(conn: &Connection, model_id: i64, generation: i64) -> Result<Self, MemoryError> {
        // Sized once (blocks are full but for removals, the tail is shorter than a block): at a
        // million facts, growing the copy by doubling cost more than reading it.
        let blocks: i64 = conn
            .prepare_cached("SELECT count(*) FROM clawboo_vector_blocks WHERE model_id = ?1")?
            .query_row([model_id], |r| r.get(0))?;
        let capacity = (usize::try_from(blocks).unwrap_or(0) + 1) * BLOCK;
        let mut copy = Self {
            of: Some((model_id, generation)),
            bits: Vec::with_capacity(capacity * BITS_BYTES),
            rowids: Vec::with_capacity(capacity),
        };
        let mut blocks = conn.prepare_cached(
            "SELECT bits, rowids FROM clawboo_vector_blocks WHERE model_id = ?1 ORDER BY id",
        )?;
        let mut rows = blocks.query([model_id])?;
        while let Some(row) = rows.next()? {
            let bits = row.get_ref(0)?.as_blob().unwrap_or_default();
            let rowids = row.get_ref(1)?.as_blob().unwrap_or_default();
            let count = (bits.len() / BITS_BYTES).min(rowids.len() / 8);
            copy.bits.extend_from_slice(&bits[..count * BITS_BYTES]);
            copy.rowids
                .extend((0..count).map(|slot| rowid_at(rowids, slot)));
        }
        drop(rows);
        let mut tail = conn.prepare_cached(
            "SELECT fact_rowid, bits FROM clawboo_vector_entries
             WHERE model_id = ?1 AND block_id IS NULL",
        )?;
        let mut rows = tail.query([model_id])?;
        while let Some(row) = rows.next()? {
            let bits = row.get_ref(1)?.as_blob().unwrap_or_default();
            // Entries are written by `add` alone, always this long; a torn one is skipped.
            if bits.len() == BITS_BYTES {
                copy.bits.extend_from_slice(bits);
                copy.rowids.push(row.get(0)?);
            }
        }
        Ok(copy)
    }
}

/// The positions in `copy` of the `len` entries whose sign bits are nearest `query` by Hamming
/// distance (the scan; of equally distant entries at the cut, the first ones).
fn prefilter(copy: &ScanCopy, query: &Bits, len: usize) -> Vec<usize> {
    let mut distances = Vec::with_capacity(copy.rowids.len());
    codes::distances(query, &copy.bits, &mut distances);
    if distances.len() <= len {
        return (0..distances.len()).collect();
    }
    // A distance is at most `BITS`: count each, and find the cut where `len` are reached.
    let mut counts = [0usize; codes::BITS + 1];
    for &distance in &distances {
        counts[usize::from(distance).min(codes::BITS)] += 1;
    }
    let (mut cut, mut nearer) = (0, 0);
    while nearer + counts[cut] < len {
        nearer += counts[cut];
        cut += 1;
    }
    let mut at_cut = len - nearer;
    let mut positions = Vec::with_capacity(len);
    for (position, &distance) in distances.iter().enumerate() {
        let distance = usize::from(distance);
        if distance < cut {
            positions.push(position);
        } else if distance == cut && at_cut > 0 {
            at_cut -= 1;
            positions.push(position);
        }
    }
    positions
}

/// The rowids of the `len` entries at `positions` in `copy` the asymmetric estimate ranks
/// nearest, sorted by rowid.
fn shortlist(copy: &ScanCopy, estimate: &Asymmetric, positions: &[usize], len: usize) -> Vec<i64> {
    let mut scored: Vec<(f32, i64)> = positions
        .iter()
        .filter_map(|&p| {
            let stored = copy.bits.get(p * BITS_BYTES..(p + 1) * BITS_BYTES)?;
            let rowid = *copy.rowids.get(p)?;
            Some((estimate.score(stored), rowid))
        })
        .collect();
    if scored.len() > len {
        scored.select_nth_unstable_by(len, |a, b| b.0.total_cmp(&a.0));
        scored.truncate(len);
    }
    let mut rowids: Vec<i64> = scored.into_iter().map(|(_, rowid)| rowid).collect();
    rowids.sort_unstable();
    rowids
}

/// The rowid in `slot` of a block's packed rowids (little-endian `i64`s); 0 past the end.
fn rowid_at(rowids: &[u8], slot: usize) -> i64 {
    let mut bytes = [0u8; 8];
    if let Some(stored) = rowids.get(slot * 8..slot * 8 + 8) {
        bytes.copy_from_slice(stored);
    }
    i64::from_le_bytes(bytes)
}

/// Whether any fact waits to be indexed.
fn has_pending(conn: &Connection) -> Result<bool, MemoryError> {
    Ok(conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM clawboo_vector_pending)")?
        .query_row([], |r| r.get(0))?)
}

/// Indexes every queued fact, at most `CATCH_UP_BATCH` (5,000) to a transaction; returns how
/// many it took.
pub fn catch_up(conn: &Connection) -> Result<usize, MemoryError> {
    let started = Instant::now();
    let mut done = 0;
    loop {
        let taken = immediate(&conn, |tx| {
            let rowids: Vec<i64> = tx
                .prepare_cached(
                    "SELECT fact_rowid FROM clawboo_vector_pending ORDER BY fact_rowid LIMIT ?1",
                )?
                .query_map([CATCH_UP_BATCH as i64], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            index_rows(tx, &rowids)?;
            Ok::<_, MemoryError>(rowids.len())
        })?;
        done += taken;
        if taken < CATCH_UP_BATCH {
            crate::log::info(&format!(
                "vector index: {done} queued facts indexed in {:.0} ms",
                started.elapsed().as_secs_f64() * 1e3
            ));
            return Ok(done);
        }
    }
}

/// Brings the entries of the facts `rowids` in line with the file (added, moved to another model,
/// or removed) and takes them off the queue. Run it inside the writer's transaction.
pub(super) fn index_rows(conn: &Connection, rowids: &[i64]) -> Result<(), MemoryError> {
    let mut grown = Vec::new();
    for &rowid in rowids {
        remove(conn, rowid)?;
        if let Some(model_id) = add(conn, rowid)?
            && !grown.contains(&model_id)
        {
            grown.push(model_id);
        }
        conn.prepare_cached("DELETE FROM clawboo_vector_pending WHERE fact_rowid = ?1")?
            .execute([rowid])?;
    }
    for model_id in grown {
        pack(conn, model_id)?;
    }
    Ok(())
}

/// Adds the entry of fact `rowid` when it has a usable vector; returns its model's id if so.
fn add(conn: &Connection, rowid: i64) -> Result<Option<i64>, MemoryError> {
    let fact: Option<(Option<Vec<u8>>, Option<String>)> = conn
        .prepare_cached("SELECT embedding, embedding_model FROM memory_facts WHERE rowid = ?1")?
        .query_row([rowid], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((Some(blob), Some(model))) = fact else {
        return Ok(None);
    };
    let Some(vector) = from_blob(&blob) else {
        return Ok(None);
    };
    let model_id = match model_row(conn, &model)? {
        Some((id, dims)) if dims == vector.len() => id,
        Some((id, _)) => {
            // Another length than the model's: indexed only once none of the old length is left.
            let empty = conn
                .prepare_cached(
                    "UPDATE clawboo_vector_models SET dims = ?2 WHERE id = ?1
                     AND NOT EXISTS (SELECT 1 FROM clawboo_vector_entries WHERE model_id = ?1)",
                )?
                .execute(params![id, vector.len() as i64])?;
            if empty == 0 {
                return Ok(None);
            }
            id
        }
        None => {
            // A generation that starts anywhere: a model row deleted and made again never takes
            // up the generations of the one before.
            conn.prepare_cached(
                "INSERT INTO clawboo_vector_models (model, dims, generation)
                 VALUES (?1, ?2, random() & 0x3FFFFFFFFFFFFFFF)",
            )?
            .execute(params![model, vector.len() as i64])?;
            conn.last_insert_rowid()
        }
    };
    conn.prepare_cached(
        "INSERT INTO clawboo_vector_entries (fact_rowid, model_id, block_id, bits, code)
         VALUES (?1, ?2, NULL, ?3, ?4)",
    )?
    .execute(params![
        rowid,
        model_id,
        codes::bits_to_bytes(&codes::bits(&vector)),
        codes::code(&vector)
    ])?;
    Ok(Some(model_id))
}

/// Removes the entry of fact `rowid`, if any, from its block too.
fn remove(conn: &Connection, rowid: i64) -> Result<(), MemoryError> {
    let block: Option<Option<i64>> = conn
        .prepare_cached("SELECT block_id FROM clawboo_vector_entries WHERE fact_rowid = ?1")?
        .query_row([rowid], |r| r.get(0))
        .optional()?;
    let Some(block) = block else {
        return Ok(());
    };
    conn.prepare_cached("DELETE FROM clawboo_vector_entries WHERE fact_rowid = ?1")?
        .execute([rowid])?;
    let Some(block) = block else {
        return Ok(());
    };
    let packed: Option<(Vec<u8>, Vec<u8>)> = conn
        .prepare_cached("SELECT bits, rowids FROM clawboo_vector_blocks WHERE id = ?1")?
        .query_row([block], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((mut bits, mut rowids)) = packed else {
        return Ok(());
    };
    let count = (bits.len() / BITS_BYTES).min(rowids.len() / 8);
    let Some(slot) = (0..count).find(|&s| rowid_at(&rowids, s) == rowid) else {
        return Ok(());
    };
    // Swap-remove: the last fact takes the freed slot.
    let last = count - 1;
    bits.copy_within(last * BITS_BYTES..count * BITS_BYTES, slot * BITS_BYTES);
    rowids.copy_within(last * 8..count * 8, slot * 8);
    bits.truncate(last * BITS_BYTES);
    rowids.truncate(last * 8);
    if last == 0 {
        conn.prepare_cached("DELETE FROM clawboo_vector_blocks WHERE id = ?1")?
            .execute([block])?;
    } else {
        conn.prepare_cached(
            "UPDATE clawboo_vector_blocks SET count = ?2, bits = ?3, rowids = ?4 WHERE id = ?1",
        )?
        .execute(params![block, last as i64, bits, rowids])?;
    }
    Ok(())
}

/// Packs the tail of model `model_id` into blocks while it holds at least [`BLOCK`] entries.
fn pack(conn: &Connection, model_id: i64) -> Result<(), MemoryError> {
    loop {
        let tail: Vec<(i64, Vec<u8>)> = conn
            .prepare_cached(
                "SELECT fact_rowid, bits FROM clawboo_vector_entries
                 WHERE model_id = ?1 AND block_id IS NULL ORDER BY fact_rowid LIMIT ?2",
            )?
            .query_map(params![model_id, BLOCK as i64], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?
            .collect::<rusqlite::Result<_>>()?;
        if tail.len() < BLOCK {
            return Ok(());
        }
        let mut bits = Vec::with_capacity(BLOCK * BITS_BYTES);
        let mut rowids = Vec::with_capacity(BLOCK * 8);
        for (rowid, entry_bits) in &tail {
            // Entries are written by `add` alone, always this long; anything else packs as zeros.
            let mut padded = [0u8; BITS_BYTES];
            if entry_bits.len() == BITS_BYTES {
                padded.copy_from_slice(entry_bits);
            }
            bits.extend_from_slice(&padded);
            rowids.extend_from_slice(&rowid.to_le_bytes());
        }
        conn.prepare_cached(
            "INSERT INTO clawboo_vector_blocks (model_id, count, bits, rowids)
             VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![model_id, BLOCK as i64, bits, rowids])?;
        let block = conn.last_insert_rowid();
        let mut place = conn.prepare_cached(
            "UPDATE clawboo_vector_entries SET block_id = ?2 WHERE fact_rowid = ?1",
        )?;
        for (rowid, _) in &tail {
            place.execute(params![rowid, block])?;
        }
    }
}

/// The id and dimension count of `model`'s index, if it has one.
fn model_row(conn: &Connection, model: &str) -> Result<Option<(i64, usize)>, MemoryError> {
    Ok(conn
        .prepare_cached("SELECT id, dims FROM clawboo_vector_models WHERE model = ?1")?
        .query_row([model], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)? as usize))
        })
        .optional()?)
}
