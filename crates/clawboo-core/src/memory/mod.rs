//! The shared memory store: facts (searchable, embeddable) and named, versioned procedures, with
//! the team/agent/tenant scopes of seed 004.
//!
//! Owns: the `memory_facts` and `memory_procedures` tables (the reference's DDL and column names,
//! so one file serves both implementations), their full-text indexes and the triggers that keep
//! them in sync, the vector index kept beside them in the file (`vectors`), and every write to
//! them ([`Memory`] is the single write choke point).
//!
//! Guarantees:
//! - every title, content and tag is scrubbed of secrets before it is stored or embedded, and a
//!   content that scrubs to nothing but sentinels is refused ([`MemoryError::EntirelyRedacted`]);
//! - a procedure's version is the previous version of the same (name, team, agent) plus one, read
//!   and written inside one `BEGIN IMMEDIATE`, so concurrent savers in several processes never
//!   produce the same version (the reference reads and writes without a transaction);
//! - a reader with a scope never sees another team's facts or another agent's private facts
//!   ([`ReadScope`]); a blank scope string is unset when a row is written and in stored rows, and
//!   on a read it narrows (a blank team reads global entries only), as the reference documents.
//!
//! Two full-text indexes are kept by triggers and backfilled on open, so any writer (ours, the
//! reference, `sqlite3`) stays searchable: the reference's `memory_facts_fts` (default tokenizer),
//! which we keep (the reference reads it, and a file must serve both implementations) and query
//! only for the facts saying a common word in the form a query says it (`search::plan`), and our
//! own `clawboo_facts_newest_fts` / `clawboo_procedures_fts` with the `porter unicode61` tokenizer
//! (Unicode folding, diacritics removed, English stems, so `payment` finds `payments`), with
//! `clawboo_facts_newest_vocab` (`fts5vocab`) counting the facts of a stem that spelling
//! correction offers (the stems compared are read from the index's leaf pages,
//! `search::lexicon`). Our facts index keys each fact by its rowid negated (schema step 3), so its
//! forward order, the one FTS5 reads fast, is newest first. How search ranks is in `search`'s
//! module docs.
//!
//! Deletion is the operator's alone: the console's Memory Browser (seed 004: "delete stale or
//! incorrect facts") removes one fact or procedure version at a time through [`Memory::delete`]
//! (`browse`); no tool deletes.
//!
//! Must never: know MCP or decide scopes (the server does, from its binding); update a fact or
//! procedure, or delete one but through `browse` (the agents' tools are append-only, as in the
//! reference); call an embedding provider while
//! holding the database connection.

mod browse;
pub mod embed;
mod inject;
mod query;
mod scope;
mod search;
mod sql;
mod upkeep;
mod vectors;

use rusqlite::{Connection, Row, params};
use serde::Serialize;

pub use browse::{BrowseEntry, BrowseFilter, BrowsePage, ScopeKind, VersionRef};
pub use embed::{EmbedConfig, Embedder, Provider};
pub use inject::{AUTO_MEMORY_MAX_CHARS, AUTO_MEMORY_TOP_K, render_auto_memory};
pub use query::fts_query;
pub use scope::{ReadScope, TeamView, WriteScope};
pub use search::{MatchedVia, SearchHit, SearchMode, SearchOutcome, tally};
pub use sql::SCHEMA;
pub(crate) use sql::{fact_columns, latest_procedure_only, procedure_columns, scope_filter};
pub use upkeep::merge_text_indexes;
pub use vectors::{SCHEMA as VECTOR_SCHEMA, catch_up as catch_up_vectors};

use crate::db::{Conn, Db, immediate, new_id};
use crate::scrub::{is_entirely_redacted, scrub_secrets};

/// A failed memory operation.
/// Wire: reference (keep the text; detail may only be appended).
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// The content was nothing but secrets.
    #[error("nothing to save: content was entirely redacted secrets")]
    EntirelyRedacted,
    /// The database failed.
    /// Wire: ours.
    #[error("database error: {0}")]
    Db(#[from] rusqlite::Error),
}

/// A saved fact, as every surface returns it (the embedding is never shown).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Fact {
    /// UUID v4.
    pub id: String,
    /// Scrubbed title.
    pub title: String,
    /// Scrubbed content.
    pub content: String,
    /// Scrubbed tags.
    pub tags: Vec<String>,
    /// The agent the fact is private to, if any.
    pub scope_agent_id: Option<String>,
    /// The team the fact belongs to; `None` is global.
    pub scope_team_id: Option<String>,
    /// The tenant, if any.
    pub tenant_id: Option<String>,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    /// Milliseconds since the epoch (equal to `created_at`: facts are never updated).
    pub updated_at: i64,
}

/// One version of a procedure.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Procedure {
    /// UUID v4 of this version's row.
    pub id: String,
    /// The procedure's name (not scrubbed: it is an identifier).
    pub name: String,
    /// 1 for the first save of (name, team, agent), then +1 per save.
    pub version: i64,
    /// Scrubbed content.
    pub content: String,
    /// The agent the procedure is private to, if any.
    pub scope_agent_id: Option<String>,
    /// The team; `None` is global.
    pub scope_team_id: Option<String>,
    /// The tenant, if any.
    pub tenant_id: Option<String>,
    /// Milliseconds since the epoch.
    pub created_at: i64,
}

/// A fact or a procedure, saying which (`"kind": "fact" | "procedure"`).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Entry {
    /// A fact.
    Fact(Fact),
    /// The newest version of a procedure.
    Procedure(Procedure),
}

impl Entry {
    /// The row id.
    pub fn id(&self) -> &str {
        match self {
            Entry::Fact(f) => &f.id,
            Entry::Procedure(p) => &p.id,
        }
    }

    /// When the entry was last written.
    pub fn written_at(&self) -> i64 {
        match self {
            Entry::Fact(f) => f.updated_at,
            Entry::Procedure(p) => p.created_at,
        }
    }
}

/// A fact to save.
#[derive(Debug, Clone, Default)]
pub struct NewFact<'a> {
    /// Title (scrubbed before storing).
    pub title: &'a str,
    /// Content (scrubbed before storing).
    pub content: &'a str,
    /// Tags (each scrubbed).
    pub tags: &'a [String],
}

/// The memory store over the shared database, with the process's embedding provider.
#[derive(Debug)]
pub struct Memory {
    db: Db,
    embedder: Embedder,
    /// What searches keep between calls while the file is unchanged (`search::Kept`).
    kept: search::Kept,
}

impl Memory {
    /// The store over `db`, embedding with `embedder`'s provider (if any).
    pub fn new(db: Db, embedder: Embedder) -> Self {
        Self {
            db,
            embedder,
            kept: search::Kept::default(),
        }
    }

    /// Whether this store surely has no embedding provider, known without waiting for its
    /// resolution (`Embedder::surely_none`): its searches are full-text and its saves embed nothing.
    pub fn surely_without_provider(&self) -> bool {
        self.embedder.surely_none()
    }

    /// The embedding provider, if one is configured and reachable.
    pub fn provider(&self) -> Option<&Provider> {
        self.embedder.provider()
    }

    /// Saves a fact: scrubs it, refuses it if its content was nothing but secrets, embeds it when a
    /// provider exists (a failed embedding saves the fact without a vector), and stores it.
    pub fn save_fact(&self, new: &NewFact<'_>, scope: &WriteScope) -> Result<Fact, MemoryError> {
        let content = scrub_content(new.content)?;
        let title = scrub_secrets(new.title);
        let tags: Vec<String> = new.tags.iter().map(|t| scrub_secrets(t)).collect();
        let embedding = self.provider().and_then(|provider| {
            let text = format!("{title}\n{content}");
            match provider.embed(&[&text]) {
                Ok(mut vectors) => Some((embed::to_blob(&vectors.remove(0)), provider.id())),
                Err(e) => {
                    crate::log::warn(&format!("fact saved without a vector: {e}"));
                    None
                }
            }
        });
        let now = self.db.now_ms();
        let fact = Fact {
            id: new_id(),
            title,
            content,
            tags,
            scope_agent_id: scope.agent_id.clone(),
            scope_team_id: scope.team_id.clone(),
            tenant_id: scope.tenant_id.clone(),
            created_at: now,
            updated_at: now,
        };
        let conn = self.db.conn();
        let rowid = immediate(&conn, |tx| {
            insert_fact(tx, &fact, embedding.as_ref())?;
            let rowid = tx.last_insert_rowid();
            // Indexed in the fact's own transaction: they are committed together or not at all.
            vectors::index_rows(tx, &[rowid])?;
            Ok::<_, MemoryError>(rowid)
        })?;
        upkeep::keep_even_after_save(&conn, rowid);
        Ok(fact)
    }

    /// Saves the next version of the procedure `name` in `scope` (team and agent; the tenant is
    /// stored but is not part of the version key, as in the reference).
    pub fn save_procedure(
        &self,
        name: &str,
        content: &str,
        scope: &WriteScope,
    ) -> Result<Procedure, MemoryError> {
        let content = scrub_content(content)?;
        let conn = self.db.conn();
        let procedure = immediate(&conn, |tx| {
            let previous: i64 = tx.query_row(
                "SELECT COALESCE(MAX(version), 0) AS previous FROM memory_procedures
                 WHERE name = ?1 AND scope_team_id IS ?2 AND scope_agent_id IS ?3",
                params![name, scope.team_id, scope.agent_id],
                |r| r.get("previous"),
            )?;
            let procedure = Procedure {
                id: new_id(),
                name: name.to_owned(),
                version: previous + 1,
                content,
                scope_agent_id: scope.agent_id.clone(),
                scope_team_id: scope.team_id.clone(),
                tenant_id: scope.tenant_id.clone(),
                created_at: tx.now_ms(),
            };
            tx.execute(
                "INSERT INTO memory_procedures
                 (id, name, version, content, scope_agent_id, scope_team_id, tenant_id, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    procedure.id,
                    procedure.name,
                    procedure.version,
                    procedure.content,
                    procedure.scope_agent_id,
                    procedure.scope_team_id,
                    procedure.tenant_id,
                    procedure.created_at
                ],
            )?;
            Ok::<_, MemoryError>(procedure)
        })?;
        Ok(procedure)
    }

    /// The newest entries visible to `scope`, facts and (newest versions of) procedures together,
    /// most recently written first.
    pub fn browse(&self, limit: u32, scope: &ReadScope) -> Result<Vec<Entry>, MemoryError> {
        let conn = self.db.conn();
        let params = search::named(scope, [(":limit", i64::from(limit).into())]);
        let bound = search::as_params(&params);
        let mut entries: Vec<Entry> = conn
            .prepare_cached(concat!(
                "SELECT ",
                fact_columns!(),
                " FROM memory_facts m WHERE ",
                scope_filter!(),
                " ORDER BY m.updated_at DESC, m.rowid DESC LIMIT :limit"
            ))?
            .query_map(bound.as_slice(), |r| fact_from_row(r).map(Entry::Fact))?
            .collect::<rusqlite::Result<_>>()?;
        let procedures = conn
            .prepare_cached(concat!(
                "SELECT ",
                procedure_columns!(),
                " FROM memory_procedures m WHERE ",
                scope_filter!(),
                " AND ",
                latest_procedure_only!(),
                " ORDER BY m.created_at DESC, m.rowid DESC LIMIT :limit"
            ))?
            .query_map(bound.as_slice(), |r| {
                procedure_from_row(r).map(Entry::Procedure)
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        entries.extend(procedures);
        entries.sort_by_key(|e| std::cmp::Reverse(e.written_at()));
        entries.truncate(limit as usize);
        Ok(entries)
    }

    /// A page of the Memory Browser (see `browse`).
    pub fn browse_page(
        &self,
        filter: &BrowseFilter,
        limit: u32,
        cursor: Option<crate::db::Keyset>,
    ) -> Result<BrowsePage, MemoryError> {
        Ok(browse::page(&self.db.conn(), filter, limit, cursor)?)
    }

    /// Deletes the fact or procedure version `id` (a person's decision, from the console);
    /// returns what it was, `None` when there is no such row.
    pub fn delete(&self, id: &str) -> Result<Option<Entry>, MemoryError> {
        Ok(browse::delete(&self.db.conn(), id)?)
    }

    /// The database the store writes to.
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// Searches facts and procedures visible to `scope`; see [`SearchMode`] for the modes and how
    /// they degrade without a provider.
    pub fn search(
        &self,
        query: &str,
        requested: Option<SearchMode>,
        limit: u32,
        scope: &ReadScope,
    ) -> Result<SearchOutcome, MemoryError> {
        let provider = self.provider();
        search::run(
            &self.db, &self.kept, provider, query, requested, limit, scope,
        )
    }

    /// The `<auto-memory>` block for a task (its title and description): the best facts for it
    /// visible to `scope`, re-scrubbed, without any the injection scanner flags, within
    /// [`AUTO_MEMORY_MAX_CHARS`]. Empty when nothing applies or anything fails (it never fails a
    /// run).
    pub fn auto_memory(&self, title: &str, description: &str, scope: &ReadScope) -> String {
        let query = format!("{title}\n{description}");
        if query.trim().is_empty() {
            return String::new();
        }
        let candidates = AUTO_MEMORY_TOP_K as u32 * 4;
        match self.search(&query, None, candidates, scope) {
            Ok(outcome) => {
                let facts: Vec<(String, String)> = outcome
                    .hits
                    .into_iter()
                    .filter_map(|hit| match hit.entry {
                        Entry::Fact(f) => Some((f.title, f.content)),
                        Entry::Procedure(_) => None,
                    })
                    .collect();
                render_auto_memory(&facts, AUTO_MEMORY_MAX_CHARS, AUTO_MEMORY_TOP_K)
            }
            Err(e) => {
                crate::log::warn(&format!("auto-memory skipped: {e}"));
                String::new()
            }
        }
    }
}

/// Scrubs `content`, refusing content that was nothing but secrets (blank content is allowed).
fn scrub_content(content: &str) -> Result<String, MemoryError> {
    let scrubbed = scrub_secrets(content);
    if !content.trim().is_empty() && is_entirely_redacted(&scrubbed) {
        return Err(MemoryError::EntirelyRedacted);
    }
    Ok(scrubbed)
}

fn insert_fact(
    conn: &Connection,
    fact: &Fact,
    embedding: Option<&(Vec<u8>, String)>,
) -> rusqlite::Result<()> {
    let tags = serde_json::to_string(&fact.tags).unwrap_or_else(|_| "[]".into());
    conn.prepare_cached(
        "INSERT INTO memory_facts (id, title, content, tags, embedding, embedding_model,
         scope_agent_id, scope_team_id, tenant_id, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?
    .execute(params![
        fact.id,
        fact.title,
        fact.content,
        tags,
        embedding.map(|(blob, _)| blob),
        embedding.map(|(_, model)| model),
        fact.scope_agent_id,
        fact.scope_team_id,
        fact.tenant_id,
        fact.created_at,
        fact.updated_at
    ])?;
    Ok(())
}

/// Stores many global facts (title, content) in one transaction, scrubbed and without vectors:
/// for seeding a store before a run or a benchmark. Returns how many were stored. Like every
/// writer, it leaves the full-text index even (`upkeep`): merged into one segment when what it
/// wrote made it uneven (a merge that fails is logged: the facts stay stored).
pub fn seed_facts<'a>(
    conn: &Conn<'_>,
    facts: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<usize, MemoryError> {
    let stored = immediate(conn, |tx| {
        let mut count = 0;
        let now = tx.now_ms();
        for (title, content) in facts {
            let fact = Fact {
                id: new_id(),
                title: scrub_secrets(title),
                content: scrub_secrets(content),
                tags: Vec::new(),
                scope_agent_id: None,
                scope_team_id: None,
                tenant_id: None,
                created_at: now,
                updated_at: now,
            };
            insert_fact(tx, &fact, None)?;
            count += 1;
        }
        Ok::<_, MemoryError>(count)
    })?;
    upkeep::keep_even_after_bulk_write(conn);
    Ok(stored)
}

/// How many columns [`fact_columns!`] selects (a statement's own columns follow them).
const FACT_COLUMNS: usize = 9;

/// Reads a [`Fact`] from a row whose first columns are [`fact_columns!`]'s, by position (a search
/// reads hundreds of candidate rows, and a lookup by name compares every column's name).
fn fact_from_row(row: &Row<'_>) -> rusqlite::Result<Fact> {
    let tags: String = row.get(3)?;
    Ok(Fact {
        id: row.get(0)?,
        title: row.get(1)?,
        content: row.get(2)?,
        tags: parse_tags(&tags),
        scope_agent_id: row.get(4)?,
        scope_team_id: row.get(5)?,
        tenant_id: row.get(6)?,
        created_at: row.get(7)?,
        updated_at: row.get(8)?,
    })
}

/// Reads a [`Procedure`] from a row selected with [`procedure_columns!`].
fn procedure_from_row(row: &Row<'_>) -> rusqlite::Result<Procedure> {
    Ok(Procedure {
        id: row.get("id")?,
        name: row.get("name")?,
        version: row.get("version")?,
        content: row.get("content")?,
        scope_agent_id: row.get("scope_agent_id")?,
        scope_team_id: row.get("scope_team_id")?,
        tenant_id: row.get("tenant_id")?,
        created_at: row.get("created_at")?,
    })
}

/// Stored tags: a JSON array of strings; anything else reads as no tags, other elements dropped.
fn parse_tags(text: &str) -> Vec<String> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Array(items)) => items
            .into_iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests;
