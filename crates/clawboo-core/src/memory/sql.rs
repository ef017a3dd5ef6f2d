//! The memory store's SQL: the schema (the reference's tables, our full-text indexes and the
//! triggers that keep them) and the fragments every read shares (the scope filter, the column
//! lists that `fact_from_row` reads by position and `procedure_from_row` by name, the
//! newest-version filter).
//!
//! Must never: hold a query built from input; every fragment is a literal with named parameters.

use crate::db::{SchemaPart, Step};

/// The memory store's schema.
pub const SCHEMA: SchemaPart = SchemaPart {
    component: "memory",
    steps: &[
        // 1: the reference's tables and index, our porter indexes and their triggers.
        Step::Sql("
CREATE TABLE IF NOT EXISTS memory_facts (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    content TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    embedding BLOB,
    embedding_model TEXT,
    scope_agent_id TEXT,
    scope_team_id TEXT,
    tenant_id TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_memory_facts_team ON memory_facts (scope_team_id);
CREATE INDEX IF NOT EXISTS idx_memory_facts_agent ON memory_facts (scope_agent_id);
CREATE INDEX IF NOT EXISTS idx_memory_facts_created ON memory_facts (created_at);
CREATE INDEX IF NOT EXISTS idx_memory_facts_updated ON memory_facts (updated_at);

CREATE TABLE IF NOT EXISTS memory_procedures (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 1,
    content TEXT NOT NULL,
    scope_agent_id TEXT,
    scope_team_id TEXT,
    tenant_id TEXT,
    created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_memory_procedures_name ON memory_procedures (name);
CREATE INDEX IF NOT EXISTS idx_memory_procedures_team ON memory_procedures (scope_team_id);

CREATE VIRTUAL TABLE IF NOT EXISTS memory_facts_fts USING fts5(title, content, fact_id UNINDEXED);
CREATE TRIGGER IF NOT EXISTS memory_facts_ai AFTER INSERT ON memory_facts BEGIN
    INSERT INTO memory_facts_fts (rowid, title, content, fact_id)
    VALUES (new.rowid, new.title, new.content, new.id);
END;
CREATE TRIGGER IF NOT EXISTS memory_facts_ad AFTER DELETE ON memory_facts BEGIN
    DELETE FROM memory_facts_fts WHERE rowid = old.rowid;
END;
CREATE TRIGGER IF NOT EXISTS memory_facts_au AFTER UPDATE ON memory_facts BEGIN
    DELETE FROM memory_facts_fts WHERE rowid = old.rowid;
    INSERT INTO memory_facts_fts (rowid, title, content, fact_id)
    VALUES (new.rowid, new.title, new.content, new.id);
END;
INSERT INTO memory_facts_fts (rowid, title, content, fact_id)
    SELECT rowid, title, content, id FROM memory_facts
    WHERE rowid NOT IN (SELECT rowid FROM memory_facts_fts);

CREATE VIRTUAL TABLE IF NOT EXISTS clawboo_facts_fts
    USING fts5(title, content, tokenize = 'porter unicode61 remove_diacritics 2');
CREATE TRIGGER IF NOT EXISTS clawboo_facts_ai AFTER INSERT ON memory_facts BEGIN
    INSERT INTO clawboo_facts_fts (rowid, title, content) VALUES (new.rowid, new.title, new.content);
END;
CREATE TRIGGER IF NOT EXISTS clawboo_facts_ad AFTER DELETE ON memory_facts BEGIN
    DELETE FROM clawboo_facts_fts WHERE rowid = old.rowid;
END;
CREATE TRIGGER IF NOT EXISTS clawboo_facts_au AFTER UPDATE OF title, content ON memory_facts BEGIN
    DELETE FROM clawboo_facts_fts WHERE rowid = old.rowid;
    INSERT INTO clawboo_facts_fts (rowid, title, content) VALUES (new.rowid, new.title, new.content);
END;
INSERT INTO clawboo_facts_fts (rowid, title, content)
    SELECT rowid, title, content FROM memory_facts
    WHERE rowid NOT IN (SELECT rowid FROM clawboo_facts_fts);

CREATE VIRTUAL TABLE IF NOT EXISTS clawboo_procedures_fts
    USING fts5(name, content, tokenize = 'porter unicode61 remove_diacritics 2');
CREATE TRIGGER IF NOT EXISTS clawboo_procedures_ai AFTER INSERT ON memory_procedures BEGIN
    INSERT INTO clawboo_procedures_fts (rowid, name, content) VALUES (new.rowid, new.name, new.content);
END;
CREATE TRIGGER IF NOT EXISTS clawboo_procedures_ad AFTER DELETE ON memory_procedures BEGIN
    DELETE FROM clawboo_procedures_fts WHERE rowid = old.rowid;
END;
CREATE TRIGGER IF NOT EXISTS clawboo_procedures_au AFTER UPDATE OF name, content ON memory_procedures BEGIN
    DELETE FROM clawboo_procedures_fts WHERE rowid = old.rowid;
    INSERT INTO clawboo_procedures_fts (rowid, name, content) VALUES (new.rowid, new.name, new.content);
END;
INSERT INTO clawboo_procedures_fts (rowid, name, content)
    SELECT rowid, name, content FROM memory_procedures
    WHERE rowid NOT IN (SELECT rowid FROM clawboo_procedures_fts);
"),
        // 2: the stems of our facts index, for spelling correction (`search::typo`).
        Step::Sql(
            "CREATE VIRTUAL TABLE IF NOT EXISTS clawboo_facts_vocab
                 USING fts5vocab(clawboo_facts_fts, row);",
        ),
        // 3: our facts index keyed newest first. A search reads facts newest first, and FTS5
        // walks a term's rows backwards far more slowly than forwards (it decodes each page
        // whole to walk it in reverse), so `clawboo_facts_newest_fts` keys each fact by its
        // rowid negated: newest first is the index's forward order. It replaces step 1's
        // `clawboo_facts_fts` (dropped with its triggers and vocabulary) and is filled from the
        // facts, so a file of any earlier step is rebuilt once, by the first process to open it.
        Step::Sql("
DROP TRIGGER IF EXISTS clawboo_facts_ai;
DROP TRIGGER IF EXISTS clawboo_facts_ad;
DROP TRIGGER IF EXISTS clawboo_facts_au;
DROP TABLE IF EXISTS clawboo_facts_vocab;
DROP TABLE IF EXISTS clawboo_facts_fts;
CREATE VIRTUAL TABLE IF NOT EXISTS clawboo_facts_newest_fts
    USING fts5(title, content, tokenize = 'porter unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE IF NOT EXISTS clawboo_facts_newest_vocab
    USING fts5vocab(clawboo_facts_newest_fts, row);
CREATE TRIGGER IF NOT EXISTS clawboo_facts_newest_ai AFTER INSERT ON memory_facts BEGIN
    INSERT INTO clawboo_facts_newest_fts (rowid, title, content)
    VALUES (-new.rowid, new.title, new.content);
END;
CREATE TRIGGER IF NOT EXISTS clawboo_facts_newest_ad AFTER DELETE ON memory_facts BEGIN
    DELETE FROM clawboo_facts_newest_fts WHERE rowid = -old.rowid;
END;
CREATE TRIGGER IF NOT EXISTS clawboo_facts_newest_au AFTER UPDATE OF title, content ON memory_facts
BEGIN
    DELETE FROM clawboo_facts_newest_fts WHERE rowid = -old.rowid;
    INSERT INTO clawboo_facts_newest_fts (rowid, title, content)
    VALUES (-new.rowid, new.title, new.content);
END;
INSERT INTO clawboo_facts_newest_fts (rowid, title, content)
    SELECT -rowid, title, content FROM memory_facts
    WHERE -rowid NOT IN (SELECT rowid FROM clawboo_facts_newest_fts);
"),
        // 4: the indexes a search reads merge two segments of a level, not four (FTS5's
        // `automerge`, kept in the index's own config): every writer keeps at most one segment
        // per level, so a term's rows lie in a few segments, mostly one large one, without the
        // host's upkeep. A term is looked up and its rows walked once per segment; on a store of
        // 100k facts written one per transaction, the tuning queries took 2.6–2.7 ms of CPU
        // each against 3.2 with four (a merged index: 2.6), and a fact written into that index
        // about 0.04 ms more (0.21 against 0.16–0.18 ms).
        Step::Sql("
INSERT INTO clawboo_facts_newest_fts (clawboo_facts_newest_fts, rank) VALUES ('automerge', 2);
INSERT INTO clawboo_procedures_fts (clawboo_procedures_fts, rank) VALUES ('automerge', 2);
"),
    ],
};

/// The scope filter of every read, over a table aliased `m` with `scope_team_id`,
/// `scope_agent_id` and `tenant_id`. Parameters: `:team_mode` (0 any team, 1 global only, 2 the
/// team `:team` and global), `:agent` (NULL: any agent; else that agent's and non-private rows),
/// `:tenant` (NULL: any; else exactly that tenant). Stored blanks count as unset.
macro_rules! scope_filter {
    () => {
        "(:team_mode = 0
          OR m.scope_team_id IS NULL OR m.scope_team_id = ''
          OR (:team_mode = 2 AND m.scope_team_id = :team))
         AND (:agent IS NULL OR m.scope_agent_id IS NULL OR m.scope_agent_id = ''
              OR m.scope_agent_id = :agent)
         AND (:tenant IS NULL OR m.tenant_id = :tenant)"
    };
}

/// The columns of a [`Fact`], from a table aliased `m`, in the order [`fact_from_row`] reads them:
/// they open every `SELECT` it reads (`FACT_COLUMNS` of them).
macro_rules! fact_columns {
    () => {
        "m.id AS id, m.title AS title, m.content AS content, m.tags AS tags, \
         m.scope_agent_id AS scope_agent_id, m.scope_team_id AS scope_team_id, \
         m.tenant_id AS tenant_id, m.created_at AS created_at, m.updated_at AS updated_at"
    };
}

/// The columns of a [`Procedure`], named as [`procedure_from_row`] reads them, from a table
/// aliased `m`.
macro_rules! procedure_columns {
    () => {
        "m.id AS id, m.name AS name, m.version AS version, m.content AS content, \
         m.scope_agent_id AS scope_agent_id, m.scope_team_id AS scope_team_id, \
         m.tenant_id AS tenant_id, m.created_at AS created_at"
    };
}

/// Keeps only the newest version of each procedure (name, team, agent), for a table aliased `m`.
macro_rules! latest_procedure_only {
    () => {
        "NOT EXISTS (SELECT 1 FROM memory_procedures newer
                     WHERE newer.name = m.name
                       AND newer.scope_team_id IS m.scope_team_id
                       AND newer.scope_agent_id IS m.scope_agent_id
                       AND (newer.version > m.version
                            OR (newer.version = m.version AND newer.rowid > m.rowid)))"
    };
}

pub(crate) use {fact_columns, latest_procedure_only, procedure_columns, scope_filter};
