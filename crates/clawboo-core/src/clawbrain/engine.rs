//! `engine.db`: the reference's credit tables (spec §2) plus this implementation's search index.
//!
//! Owns all SQL of ClawBrain: `credit_records`, `credit_events`, `turn_records`, `contradictions`,
//! `lifecycle_log` (names, columns and indexes exactly the reference's, so either implementation
//! serves a vault the other wrote) and `clawbrain_files` + `clawbrain_fts`, a trigram FTS5 index of
//! every live file's name, tags and body, kept by triggers and refreshed from file stamps.
//!
//! Guarantees: every read-then-write runs inside `BEGIN IMMEDIATE` (the caller holds it through
//! [`crate::db::immediate`]), which also serialises writers of the vault's files across processes;
//! scores written by an outcome are clamped to [0, 1]. Must never: touch files (the vault does) or
//! build SQL from argument text.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

use super::frontmatter::Frontmatter;
use super::vault::Stamp;
use super::{MemoryType, Signal};

/// The reference's schema (spec §2) and the index this implementation adds.
const DDL: &str = "
CREATE TABLE IF NOT EXISTS credit_records (
  id TEXT PRIMARY KEY,
  score REAL NOT NULL DEFAULT 0.5,
  access_count INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  last_accessed TEXT NOT NULL,
  decay_rate REAL NOT NULL DEFAULT 0.01
);
CREATE TABLE IF NOT EXISTS credit_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  reward REAL NOT NULL,
  old_score REAL NOT NULL,
  new_score REAL NOT NULL,
  session_id TEXT,
  created_at TEXT NOT NULL,
  FOREIGN KEY (memory_id) REFERENCES credit_records(id)
);
CREATE TABLE IF NOT EXISTS turn_records (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL,
  retrieved_memory_ids TEXT NOT NULL,
  outcome TEXT,
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS contradictions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_a_id TEXT NOT NULL,
  memory_b_id TEXT NOT NULL,
  description TEXT,
  resolution TEXT,
  resolved_at TEXT,
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS lifecycle_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  action TEXT NOT NULL,
  target_ids TEXT NOT NULL,
  details TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_credit_score ON credit_records(score DESC);
CREATE INDEX IF NOT EXISTS idx_credit_last_accessed ON credit_records(last_accessed);
CREATE INDEX IF NOT EXISTS idx_events_memory ON credit_events(memory_id);
CREATE INDEX IF NOT EXISTS idx_events_session ON credit_events(session_id);
CREATE INDEX IF NOT EXISTS idx_turns_session ON turn_records(session_id);

CREATE TABLE IF NOT EXISTS clawbrain_files (
  doc INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  id TEXT NOT NULL,
  type TEXT NOT NULL,
  category TEXT NOT NULL,
  name TEXT NOT NULL,
  name_lc TEXT NOT NULL,
  tags TEXT NOT NULL,
  tags_lc TEXT NOT NULL,
  body TEXT NOT NULL,
  created TEXT NOT NULL,
  updated TEXT NOT NULL,
  pinned INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  size INTEGER NOT NULL,
  ino INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS clawbrain_decay (
  id TEXT PRIMARY KEY,
  decayed_until TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS clawbrain_files_id ON clawbrain_files(id, path);
CREATE INDEX IF NOT EXISTS clawbrain_files_pinned ON clawbrain_files(pinned) WHERE pinned = 1;
CREATE VIRTUAL TABLE IF NOT EXISTS clawbrain_fts USING fts5(
  name_lc, tags_lc, body, content='clawbrain_files', content_rowid='doc', tokenize='trigram'
);
CREATE TRIGGER IF NOT EXISTS clawbrain_files_ai AFTER INSERT ON clawbrain_files BEGIN
  INSERT INTO clawbrain_fts(rowid, name_lc, tags_lc, body) VALUES (new.doc, new.name_lc, new.tags_lc, new.body);
END;
CREATE TRIGGER IF NOT EXISTS clawbrain_files_ad AFTER DELETE ON clawbrain_files BEGIN
  INSERT INTO clawbrain_fts(clawbrain_fts, rowid, name_lc, tags_lc, body) VALUES ('delete', old.doc, old.name_lc, old.tags_lc, old.body);
END;
CREATE TRIGGER IF NOT EXISTS clawbrain_files_au AFTER UPDATE ON clawbrain_files BEGIN
  INSERT INTO clawbrain_fts(clawbrain_fts, rowid, name_lc, tags_lc, body) VALUES ('delete', old.doc, old.name_lc, old.tags_lc, old.body);
  INSERT INTO clawbrain_fts(rowid, name_lc, tags_lc, body) VALUES (new.doc, new.name_lc, new.tags_lc, new.body);
END;
";

/// Opens `<root>/engine.db` with the reference's pragmas and the schema, retrying while another
/// process holds the lock a brand-new file needs.
pub fn open(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(15))?;
    let mut tries = 0;
    loop {
        let attempt = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| {
                r.get::<_, String>("journal_mode")
            })
            .and_then(|_| {
                conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;")
            })
            .and_then(|()| crate::db::immediate(&&conn, |tx| tx.execute_batch(DDL)));
        match attempt {
            Err(e) if crate::db::is_busy(&e) && tries < 50 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other.map(|()| conn),
        }
    }
}

/// One indexed live file.
#[derive(Debug, Clone)]
pub struct FileRow {
    /// Relative path.
    pub path: String,
    /// Frontmatter.
    pub fm: Frontmatter,
    /// The file's basename without `.md`.
    pub name: String,
    /// The trimmed body.
    pub body: String,
}

const FILE_COLUMNS: &str = "path, id, type, category, name, tags, body, created, updated, pinned";

fn file_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<FileRow> {
    let tags: String = r.get("tags")?;
    let kind: String = r.get("type")?;
    Ok(FileRow {
        path: r.get("path")?,
        fm: Frontmatter {
            id: r.get("id")?,
            kind: MemoryType::parse(&kind).unwrap_or(MemoryType::Entity),
            category: r.get("category")?,
            tags: serde_json::from_str(&tags).unwrap_or_default(),
            created: r.get("created")?,
            updated: r.get("updated")?,
            pinned: r.get::<_, i64>("pinned")? != 0,
        },
        name: r.get("name")?,
        body: r.get("body")?,
    })
}

/// Every indexed path with its stamp.
pub fn stamps(conn: &Connection) -> rusqlite::Result<Vec<(String, Stamp)>> {
    let mut stmt = conn.prepare_cached("SELECT path, mtime_ns, size, ino FROM clawbrain_files")?;
    stmt.query_map([], |r| {
        Ok((
            r.get("path")?,
            Stamp {
                mtime_ns: r.get("mtime_ns")?,
                size: r.get("size")?,
                ino: r.get("ino")?,
            },
        ))
    })?
    .collect()
}

/// Indexes (or re-indexes) one live file.
pub fn upsert_file(conn: &Connection, row: &FileRow, stamp: Stamp) -> rusqlite::Result<()> {
    let tags = serde_json::to_string(&row.fm.tags).unwrap_or_else(|_| "[]".into());
    let tags_lc: Vec<String> = row.fm.tags.iter().map(|t| t.to_lowercase()).collect();
    conn.prepare_cached(
        "INSERT INTO clawbrain_files
           (path, id, type, category, name, name_lc, tags, tags_lc, body, created, updated, pinned, mtime_ns, size, ino)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
         ON CONFLICT(path) DO UPDATE SET id = excluded.id, type = excluded.type,
           category = excluded.category, name = excluded.name, name_lc = excluded.name_lc,
           tags = excluded.tags, tags_lc = excluded.tags_lc, body = excluded.body,
           created = excluded.created, updated = excluded.updated, pinned = excluded.pinned,
           mtime_ns = excluded.mtime_ns, size = excluded.size, ino = excluded.ino",
    )?
    .execute(params![
        row.path,
        row.fm.id,
        row.fm.kind.as_str(),
        row.fm.category,
        row.name,
        row.name.to_lowercase(),
        tags,
        tags_lc.join("\n"),
        row.body,
        row.fm.created,
        row.fm.updated,
        row.fm.pinned,
        stamp.mtime_ns,
        stamp.size,
        stamp.ino,
    ])?;
    Ok(())
}

/// Drops a path that is no longer a live file.
pub fn remove_file(conn: &Connection, path: &str) -> rusqlite::Result<()> {
    conn.prepare_cached("DELETE FROM clawbrain_files WHERE path = ?1")?
        .execute([path])?;
    Ok(())
}

/// The live file holding `id` (first by path when a hand edit made two share it).
pub fn file_by_id(conn: &Connection, id: &str) -> rusqlite::Result<Option<FileRow>> {
    conn.prepare_cached(&format!(
        "SELECT {FILE_COLUMNS} FROM clawbrain_files WHERE id = ?1 ORDER BY path LIMIT 1"
    ))?
    .query_row([id], file_row)
    .optional()
}

/// The live file at `path`.
pub fn file_by_path(conn: &Connection, path: &str) -> rusqlite::Result<Option<FileRow>> {
    conn.prepare_cached(&format!(
        "SELECT {FILE_COLUMNS} FROM clawbrain_files WHERE path = ?1"
    ))?
    .query_row([path], file_row)
    .optional()
}

/// Every live file of `kind`, by path.
pub fn files_of_type(conn: &Connection, kind: MemoryType) -> rusqlite::Result<Vec<FileRow>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {FILE_COLUMNS} FROM clawbrain_files WHERE type = ?1 ORDER BY path"
    ))?;
    stmt.query_map([kind.as_str()], file_row)?.collect()
}

/// A search candidate: enough to rank it without its body.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Index row.
    pub doc: i64,
    /// Memory id.
    pub id: String,
    /// The lower-cased name.
    pub name_lc: String,
    /// The lower-cased tags, one per line.
    pub tags_lc: String,
    /// The credit score (`None` when the memory has no credit row yet).
    pub score: Option<f64>,
    /// BM25 (lower is better); 0 when the query was too short for the index.
    pub bm25: f64,
    /// The path, the last tie-break.
    pub path: String,
}

fn candidate(r: &rusqlite::Row<'_>) -> rusqlite::Result<Candidate> {
    Ok(Candidate {
        doc: r.get("doc")?,
        id: r.get("id")?,
        name_lc: r.get("name_lc")?,
        tags_lc: r.get("tags_lc")?,
        score: r.get("score")?,
        bm25: r.get("bm25")?,
        path: r.get("path")?,
    })
}

/// Every live file whose name, tags or body contain `q` (already lower-cased), through the
/// trigram index when `q` has at least three characters, else by scanning the index table.
pub fn matches(
    conn: &Connection,
    q: &str,
    kind: Option<MemoryType>,
) -> rusqlite::Result<Vec<Candidate>> {
    let kind = kind.map(MemoryType::as_str);
    if q.chars().count() >= 3 {
        let phrase = format!("\"{}\"", q.replace('"', "\"\""));
        let mut stmt = conn.prepare_cached(
            "SELECT f.doc, f.id, f.name_lc, f.tags_lc, c.score, bm25(clawbrain_fts) AS bm25, f.path
               FROM clawbrain_fts JOIN clawbrain_files f ON f.doc = clawbrain_fts.rowid
               LEFT JOIN credit_records c ON c.id = f.id
              WHERE clawbrain_fts MATCH ?1 AND (?2 IS NULL OR f.type = ?2)",
        )?;
        return stmt.query_map(params![phrase, kind], candidate)?.collect();
    }
    let mut stmt = conn.prepare_cached(
        "SELECT f.doc, f.id, f.name_lc, f.tags_lc, c.score, 0.0 AS bm25, f.path
           FROM clawbrain_files f LEFT JOIN credit_records c ON c.id = f.id
          WHERE (?2 IS NULL OR f.type = ?2)
            AND (instr(f.name_lc, ?1) > 0 OR instr(f.tags_lc, ?1) > 0 OR instr(lower(f.body), ?1) > 0)",
    )?;
    stmt.query_map(params![q, kind], candidate)?.collect()
}

/// The body of an indexed file, for snippets.
pub fn body_of(conn: &Connection, doc: i64) -> rusqlite::Result<(String, String, MemoryType)> {
    conn.prepare_cached("SELECT body, name, type FROM clawbrain_files WHERE doc = ?1")?
        .query_row([doc], |r| {
            let kind: String = r.get("type")?;
            Ok((
                r.get("body")?,
                r.get("name")?,
                MemoryType::parse(&kind).unwrap_or(MemoryType::Entity),
            ))
        })
}

/// The knobs that shape a new credit row.
#[derive(Debug, Clone, Copy)]
pub struct RowDefaults {
    /// `initial_score`.
    pub score: f64,
    /// `decay_rate`.
    pub decay_rate: f64,
}

/// `ensureRecord`: inserts a fresh row unless one exists (an old row is never reset).
pub fn ensure_record(
    conn: &Connection,
    id: &str,
    now: &str,
    defaults: RowDefaults,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO credit_records (id, score, access_count, created_at, last_accessed, decay_rate)
         VALUES (?1, ?2, 0, ?3, ?3, ?4) ON CONFLICT(id) DO NOTHING",
    )?
    .execute(params![id, defaults.score, now, defaults.decay_rate])?;
    Ok(())
}

/// One credit row.
#[derive(Debug, Clone, PartialEq)]
pub struct CreditRow {
    /// Memory id.
    pub id: String,
    /// Score.
    pub score: f64,
    /// Access count.
    pub access_count: i64,
    /// Created.
    pub created_at: String,
    /// Last accessed.
    pub last_accessed: String,
    /// Per-day decay rate.
    pub decay_rate: f64,
}

fn credit_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<CreditRow> {
    Ok(CreditRow {
        id: r.get("id")?,
        score: r.get("score")?,
        access_count: r.get("access_count")?,
        created_at: r.get("created_at")?,
        last_accessed: r.get("last_accessed")?,
        decay_rate: r.get("decay_rate")?,
    })
}

const CREDIT_COLUMNS: &str = "id, score, access_count, created_at, last_accessed, decay_rate";

/// The credit row of `id`.
pub fn credit(conn: &Connection, id: &str) -> rusqlite::Result<Option<CreditRow>> {
    conn.prepare_cached(&format!(
        "SELECT {CREDIT_COLUMNS} FROM credit_records WHERE id = ?1"
    ))?
    .query_row([id], credit_row)
    .optional()
}

/// Sets a score outright (promotion, consolidation).
pub fn set_score(conn: &Connection, id: &str, score: f64) -> rusqlite::Result<()> {
    conn.prepare_cached("UPDATE credit_records SET score = ?2 WHERE id = ?1")?
        .execute(params![id, score])?;
    Ok(())
}

/// A retrieval: `access_count + 1`, `last_accessed = now`.
pub fn touch(conn: &Connection, id: &str, now: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "UPDATE credit_records SET access_count = access_count + 1, last_accessed = ?2 WHERE id = ?1",
    )?
    .execute(params![id, now])?;
    Ok(())
}

/// Drops a credit row unless it has events (which keep it for their audit trail).
pub fn drop_record_without_events(conn: &Connection, id: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "DELETE FROM credit_records WHERE id = ?1
           AND NOT EXISTS (SELECT 1 FROM credit_events WHERE memory_id = ?1)",
    )?
    .execute([id])?;
    Ok(())
}

/// `recordRetrieval`: one `turn_records` row for the ids a call returned (deduplicated).
pub fn record_turn(
    conn: &Connection,
    session: &str,
    ids: &[String],
    now: &str,
) -> rusqlite::Result<()> {
    let mut seen = Vec::new();
    for id in ids {
        if !seen.contains(id) {
            seen.push(id.clone());
        }
    }
    if seen.is_empty() {
        return Ok(());
    }
    conn.prepare_cached(
        "INSERT INTO turn_records (session_id, retrieved_memory_ids, outcome, created_at)
         VALUES (?1, ?2, NULL, ?3)",
    )?
    .execute(params![
        session,
        serde_json::to_string(&seen).unwrap_or_else(|_| "[]".into()),
        now
    ])?;
    Ok(())
}

/// One memory moved by an outcome.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Moved {
    /// Memory id.
    pub id: String,
    /// Score before.
    pub old_score: f64,
    /// Score after.
    pub new_score: f64,
}

/// `applyOutcome` with the clamp: the newest unresolved turn of `session` gets `signal`; each of
/// its memories moves by `new = clamp((1 − α)·old + α·reward/√n, 0, 1)`. Returns the turn id and
/// the moves (`None` when the session has no open turn).
pub fn apply_outcome(
    conn: &Connection,
    session: &str,
    signal: Signal,
    alpha: f64,
    now: &str,
    defaults: RowDefaults,
) -> rusqlite::Result<Option<(i64, Vec<Moved>)>> {
    let turn: Option<(i64, String)> = conn
        .prepare_cached(
            "SELECT id, retrieved_memory_ids FROM turn_records
              WHERE session_id = ?1 AND outcome IS NULL ORDER BY id DESC LIMIT 1",
        )?
        .query_row([session], |r| {
            Ok((r.get("id")?, r.get("retrieved_memory_ids")?))
        })
        .optional()?;
    let Some((turn_id, ids_json)) = turn else {
        return Ok(None);
    };
    let ids: Vec<String> = serde_json::from_str::<Vec<serde_json::Value>>(&ids_json)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    let n = ids.len().max(1) as f64;
    let reward = signal.reward();
    let mut moved = Vec::new();
    for id in &ids {
        ensure_record(conn, id, now, defaults)?;
        let old: f64 = conn
            .prepare_cached("SELECT score FROM credit_records WHERE id = ?1")?
            .query_row([id], |r| r.get("score"))?;
        let new = ((1.0 - alpha) * old + alpha * (reward / n.sqrt())).clamp(0.0, 1.0);
        conn.prepare_cached(
            "UPDATE credit_records SET score = ?2, access_count = access_count + 1, last_accessed = ?3 WHERE id = ?1",
        )?
        .execute(params![id, new, now])?;
        conn.prepare_cached(
            "INSERT INTO credit_events (memory_id, event_type, reward, old_score, new_score, session_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?
        .execute(params![id, signal.as_str(), reward, old, new, session, now])?;
        moved.push(Moved {
            id: id.clone(),
            old_score: old,
            new_score: new,
        });
    }
    conn.prepare_cached("UPDATE turn_records SET outcome = ?2 WHERE id = ?1")?
        .execute(params![turn_id, signal.as_str()])?;
    Ok(Some((turn_id, moved)))
}

/// Credit rows of live memories, score descending (ties by id), with the memory's name and pin.
pub fn live_credits(conn: &Connection) -> rusqlite::Result<Vec<(CreditRow, String, bool)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.id, c.score, c.access_count, c.created_at, c.last_accessed, c.decay_rate,
                MIN(f.name) AS name, MAX(f.pinned) AS pinned
           FROM credit_records c JOIN clawbrain_files f ON f.id = c.id
          GROUP BY c.id ORDER BY c.score DESC, c.id",
    )?;
    stmt.query_map([], |r| {
        Ok((
            credit_row(r)?,
            r.get("name")?,
            r.get::<_, i64>("pinned")? != 0,
        ))
    })?
    .collect()
}

/// Up to `limit` live memories for `MEMORY.md`: pinned ones first (score `None` without a credit
/// row), then the highest credit scores (the reference's rule: only memories with a credit row).
/// Both reads go through an index, so the cost does not grow with the vault.
pub fn digest_rows(
    conn: &Connection,
    limit: usize,
) -> rusqlite::Result<Vec<(FileRow, Option<f64>)>> {
    let mut rows: Vec<(FileRow, Option<f64>)> = conn
        .prepare_cached(
            "SELECT f.path, f.id, f.type, f.category, f.name, f.tags, f.body, f.created, f.updated, f.pinned, c.score
               FROM clawbrain_files f LEFT JOIN credit_records c ON c.id = f.id
              WHERE f.pinned = 1 ORDER BY COALESCE(c.score, -1) DESC, f.path LIMIT ?1",
        )?
        .query_map([limit as i64], |r| Ok((file_row(r)?, r.get("score")?)))?
        .collect::<Result<_, _>>()?;
    let rest = limit.saturating_sub(rows.len());
    let mut stmt = conn.prepare_cached(
        "SELECT f.path, f.id, f.type, f.category, f.name, f.tags, f.body, f.created, f.updated, f.pinned, c.score
           FROM credit_records c JOIN clawbrain_files f ON f.id = c.id
          WHERE f.pinned = 0 ORDER BY c.score DESC LIMIT ?1",
    )?;
    for row in stmt.query_map([rest as i64], |r| Ok((file_row(r)?, r.get("score")?)))? {
        rows.push(row?);
    }
    Ok(rows)
}

/// Records a contradiction found by an update.
pub fn record_contradiction(
    conn: &Connection,
    a: &str,
    b: &str,
    description: &str,
    now: &str,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO contradictions (memory_a_id, memory_b_id, description, created_at)
         VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![a, b, description, now])?;
    Ok(())
}

/// Every credit row with the instant it was last decayed to (`None`: never).
pub fn decay_rows(conn: &Connection) -> rusqlite::Result<Vec<(CreditRow, Option<String>)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.id, c.score, c.access_count, c.created_at, c.last_accessed, c.decay_rate, d.decayed_until
           FROM credit_records c LEFT JOIN clawbrain_decay d ON d.id = c.id ORDER BY c.id",
    )?;
    stmt.query_map([], |r| Ok((credit_row(r)?, r.get("decayed_until")?)))?
        .collect()
}

/// Writes a decayed score and the instant it was decayed to.
pub fn set_decayed(conn: &Connection, id: &str, score: f64, until: &str) -> rusqlite::Result<()> {
    set_score(conn, id, score)?;
    conn.prepare_cached(
        "INSERT INTO clawbrain_decay (id, decayed_until) VALUES (?1, ?2)
         ON CONFLICT(id) DO UPDATE SET decayed_until = excluded.decayed_until",
    )?
    .execute(params![id, until])?;
    Ok(())
}

/// Appends a `lifecycle_log` row.
pub fn log(
    conn: &Connection,
    action: &str,
    targets: &[String],
    details: &str,
    now: &str,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO lifecycle_log (action, target_ids, details, created_at) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![
        action,
        serde_json::to_string(targets).unwrap_or_else(|_| "[]".into()),
        details,
        now
    ])?;
    Ok(())
}

/// The newest `created_at` of a lifecycle action.
pub fn last_action(conn: &Connection, action: &str) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached("SELECT MAX(created_at) AS last FROM lifecycle_log WHERE action = ?1")?
        .query_row([action], |r| r.get("last"))
}

/// Every episode id named in a `promote` row (malformed rows ignored).
pub fn promoted_episodes(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt =
        conn.prepare_cached("SELECT target_ids FROM lifecycle_log WHERE action = 'promote'")?;
    let rows: Vec<String> = stmt
        .query_map([], |r| r.get("target_ids"))?
        .collect::<Result<_, _>>()?;
    Ok(rows
        .iter()
        .filter_map(|t| serde_json::from_str::<Vec<serde_json::Value>>(t).ok())
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .filter(|id| id.starts_with("episode-"))
        .collect())
}
