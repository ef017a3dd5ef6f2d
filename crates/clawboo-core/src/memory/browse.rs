//! The memory store as the operator console's Memory Browser (seed 004) reads and edits it: every
//! fact and the newest version of every procedure, filtered by kind and scope, paged newest first,
//! with a procedure's versions; and the one deletion of the store.
//!
//! Owns: [`BrowseFilter`], the browser's page reads and [`delete`]. Guarantees: a page is two
//! indexed statements (facts by `updated_at`, procedures by `created_at`) merged by time, resumed
//! exactly by a [`Keyset`] cursor whose tie-break (`rowid × 2`, `+ 1` for facts) orders the two
//! tables' rows; `total` counts what the filter matches; the full-text indexes follow a deletion
//! through their triggers. Must never: delete anything but the one row a person named (deleting
//! a procedure's newest version makes the previous one the newest).

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use super::{Entry, fact_from_row, procedure_from_row};
use crate::db::{Conn, Keyset, immediate};

/// Which entries of which scope the browser lists; `None` fields do not filter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BrowseFilter {
    /// `Some(true)`: facts only; `Some(false)`: procedures only.
    pub facts: Option<bool>,
    /// The scope's kind: global (no team, no agent), team (a team, no agent), agent (an agent).
    pub scope: Option<ScopeKind>,
    /// Exactly this team.
    pub team_id: Option<String>,
    /// Exactly this agent.
    pub agent_id: Option<String>,
}

/// A scope's kind, as the browser filters it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeKind {
    /// Neither a team nor an agent.
    Global,
    /// A team, no agent.
    Team,
    /// Private to an agent.
    Agent,
}

impl ScopeKind {
    /// `global`, `team` or `agent`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "global" => Some(Self::Global),
            "team" => Some(Self::Team),
            "agent" => Some(Self::Agent),
            _ => None,
        }
    }

    fn code(kind: Option<Self>) -> i64 {
        match kind {
            None => 0,
            Some(Self::Global) => 1,
            Some(Self::Team) => 2,
            Some(Self::Agent) => 3,
        }
    }
}

/// One version of a procedure, as the browser lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionRef {
    /// The version's row id.
    pub id: String,
    /// Its number.
    pub version: i64,
    /// When it was saved.
    pub created_at: i64,
}

/// An entry of a browser page; a procedure carries its versions, newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct BrowseEntry {
    /// The fact, or the newest version of a procedure.
    pub entry: Entry,
    /// A procedure's versions, newest first.
    pub versions: Option<Vec<VersionRef>>,
}

/// A page of the browser.
#[derive(Debug, Clone, PartialEq)]
pub struct BrowsePage {
    /// Newest first.
    pub entries: Vec<BrowseEntry>,
    /// The next page's cursor, `None` at the end.
    pub next: Option<Keyset>,
    /// How many entries the filter matches in all.
    pub total: i64,
}

/// The browser's filter over a table aliased `m` (stored blanks count as unset).
macro_rules! browse_filter {
    () => {
        "(:scope = 0
          OR (:scope = 1 AND COALESCE(m.scope_team_id, '') = '' AND COALESCE(m.scope_agent_id, '') = '')
          OR (:scope = 2 AND COALESCE(m.scope_team_id, '') <> '' AND COALESCE(m.scope_agent_id, '') = '')
          OR (:scope = 3 AND COALESCE(m.scope_agent_id, '') <> ''))
         AND (:team IS NULL OR m.scope_team_id = :team)
         AND (:agent IS NULL OR m.scope_agent_id = :agent)"
    };
}

/// A named parameter as rusqlite binds it.
type Named<'a> = (&'static str, &'a dyn rusqlite::ToSql);

/// Up to `limit` entries matching `filter` after `cursor`, newest first.
pub fn page(
    conn: &Connection,
    filter: &BrowseFilter,
    limit: u32,
    cursor: Option<Keyset>,
) -> rusqlite::Result<BrowsePage> {
    let (at, tie) = Keyset::bounds(cursor);
    let scope = ScopeKind::code(filter.scope);
    let fetch = i64::from(limit) + 1;
    let base: [Named<'_>; 3] = [
        (":scope", &scope),
        (":team", &filter.team_id),
        (":agent", &filter.agent_id),
    ];
    let paged: Vec<Named<'_>> = base
        .iter()
        .copied()
        .chain([
            (":at", &at as _),
            (":tie", &tie as _),
            (":limit", &fetch as _),
        ])
        .collect();
    let mut rows: Vec<(Entry, Keyset)> = Vec::new();
    let mut total = 0;
    if filter.facts != Some(false) {
        rows.extend(
            conn.prepare_cached(concat!(
                "SELECT ",
                super::fact_columns!(),
                ", m.rowid AS rowid FROM memory_facts m WHERE ",
                browse_filter!(),
                " AND m.updated_at <= :at AND (m.updated_at < :at OR m.rowid * 2 + 1 < :tie)
                 ORDER BY m.updated_at DESC, m.rowid DESC LIMIT :limit"
            ))?
            .query_map(paged.as_slice(), |r| {
                let rowid: i64 = r.get("rowid")?;
                let fact = fact_from_row(r)?;
                let key = Keyset {
                    at: fact.updated_at,
                    rowid: rowid * 2 + 1,
                };
                Ok((Entry::Fact(fact), key))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?,
        );
        total += conn
            .prepare_cached(concat!(
                "SELECT COUNT(*) AS n FROM memory_facts m WHERE ",
                browse_filter!()
            ))?
            .query_row(base.as_slice(), |r| r.get::<_, i64>("n"))?;
    }
    if filter.facts != Some(true) {
        rows.extend(
            conn.prepare_cached(concat!(
                "SELECT ",
                super::procedure_columns!(),
                ", m.rowid AS rowid FROM memory_procedures m WHERE ",
                browse_filter!(),
                " AND ",
                super::latest_procedure_only!(),
                " AND m.created_at <= :at AND (m.created_at < :at OR m.rowid * 2 < :tie)
                 ORDER BY m.created_at DESC, m.rowid DESC LIMIT :limit"
            ))?
            .query_map(paged.as_slice(), |r| {
                let rowid: i64 = r.get("rowid")?;
                let procedure = procedure_from_row(r)?;
                let key = Keyset {
                    at: procedure.created_at,
                    rowid: rowid * 2,
                };
                Ok((Entry::Procedure(procedure), key))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?,
        );
        total += conn
            .prepare_cached(concat!(
                "SELECT COUNT(*) AS n FROM memory_procedures m WHERE ",
                browse_filter!(),
                " AND ",
                super::latest_procedure_only!()
            ))?
            .query_row(base.as_slice(), |r| r.get::<_, i64>("n"))?;
    }
    rows.sort_by_key(|(_, key)| std::cmp::Reverse((key.at, key.rowid)));
    let more = rows.len() > limit as usize;
    rows.truncate(limit as usize);
    let next = more.then(|| rows.last().map(|(_, k)| *k)).flatten();
    let entries = rows
        .into_iter()
        .map(|(entry, _)| {
            let versions = match &entry {
                Entry::Procedure(p) => Some(versions(conn, p)?),
                Entry::Fact(_) => None,
            };
            Ok(BrowseEntry { entry, versions })
        })
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(BrowsePage {
        entries,
        next,
        total,
    })
}

/// Every version of `procedure`'s (name, team, agent), newest first.
pub fn versions(
    conn: &Connection,
    procedure: &super::Procedure,
) -> rusqlite::Result<Vec<VersionRef>> {
    conn.prepare_cached(
        "SELECT id, version, created_at FROM memory_procedures
         WHERE name = ?1 AND scope_team_id IS ?2 AND scope_agent_id IS ?3
         ORDER BY version DESC, rowid DESC",
    )?
    .query_map(
        params![
            procedure.name,
            procedure.scope_team_id,
            procedure.scope_agent_id
        ],
        |r| {
            Ok(VersionRef {
                id: r.get("id")?,
                version: r.get("version")?,
                created_at: r.get("created_at")?,
            })
        },
    )?
    .collect()
}

/// The row `id` (a fact, or one procedure version) as it was, if it exists.
pub fn find(conn: &Connection, id: &str) -> rusqlite::Result<Option<Entry>> {
    let fact = conn
        .prepare_cached(concat!(
            "SELECT ",
            super::fact_columns!(),
            " FROM memory_facts m WHERE m.id = ?1"
        ))?
        .query_row([id], fact_from_row)
        .optional()?;
    if let Some(fact) = fact {
        return Ok(Some(Entry::Fact(fact)));
    }
    conn.prepare_cached(concat!(
        "SELECT ",
        super::procedure_columns!(),
        " FROM memory_procedures m WHERE m.id = ?1"
    ))?
    .query_row([id], procedure_from_row)
    .optional()
    .map(|p| p.map(Entry::Procedure))
}

/// Deletes the fact or procedure version `id`; returns what it was, `None` when no row has it.
pub fn delete(conn: &Conn<'_>, id: &str) -> rusqlite::Result<Option<Entry>> {
    immediate(conn, |tx| {
        let Some(entry) = find(tx, id)? else {
            return Ok(None);
        };
        match entry {
            Entry::Fact(_) => tx
                .prepare_cached("DELETE FROM memory_facts WHERE id = ?1")?
                .execute([id])?,
            Entry::Procedure(_) => tx
                .prepare_cached("DELETE FROM memory_procedures WHERE id = ?1")?
                .execute([id])?,
        };
        Ok(Some(entry))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Db;
    use crate::memory::{Embedder, Memory, NewFact, WriteScope};

    #[test]
    fn the_browser_pages_filters_counts_and_deletes() {
        let db = Db::open_in_memory().unwrap();
        let memory = Memory::new(db, Embedder::none());
        let save = |title: &str, team: Option<&str>, agent: Option<&str>| {
            memory
                .save_fact(
                    &NewFact {
                        title,
                        content: "body",
                        tags: &[],
                    },
                    &WriteScope::new(team, agent, None),
                )
                .unwrap()
                .id
        };
        let global = save("g", None, None);
        let team = save("t", Some("t1"), None);
        let agent = save("a", Some("t1"), Some("a1"));
        let scope = WriteScope::new(Some("t1"), None, None);
        memory.save_procedure("deploy", "v1", &scope).unwrap();
        let v2 = memory.save_procedure("deploy", "v2", &scope).unwrap();
        let conn = memory.db.conn();
        let mut ids = Vec::new();
        let mut cursor = None;
        loop {
            let page = page(&conn, &BrowseFilter::default(), 2, cursor).unwrap();
            assert_eq!(page.total, 4);
            ids.extend(page.entries.iter().map(|e| e.entry.id().to_owned()));
            if let Some(versions) = page.entries.iter().find_map(|e| e.versions.clone()) {
                assert_eq!(versions.len(), 2);
                assert_eq!(versions[0].id, v2.id);
            }
            match page.next {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        assert_eq!(ids.len(), 4);
        assert!(ids.contains(&global) && ids.contains(&team) && ids.contains(&agent));
        let only = |filter: BrowseFilter| {
            page(&conn, &filter, 10, None)
                .unwrap()
                .entries
                .into_iter()
                .map(|e| e.entry.id().to_owned())
                .collect::<Vec<_>>()
        };
        let global_only = BrowseFilter {
            scope: Some(ScopeKind::Global),
            facts: Some(true),
            ..BrowseFilter::default()
        };
        assert_eq!(only(global_only), [global.as_str()]);
        let agents = BrowseFilter {
            scope: Some(ScopeKind::Agent),
            ..BrowseFilter::default()
        };
        assert_eq!(only(agents), [agent.as_str()]);
        let team_procedures = BrowseFilter {
            facts: Some(false),
            team_id: Some("t1".into()),
            ..BrowseFilter::default()
        };
        assert_eq!(only(team_procedures), [v2.id.as_str()]);

        assert!(matches!(
            delete(&conn, &global).unwrap(),
            Some(Entry::Fact(_))
        ));
        assert_eq!(delete(&conn, &global).unwrap(), None);
        assert!(matches!(
            delete(&conn, &v2.id).unwrap(),
            Some(Entry::Procedure(_))
        ));
        let left = page(&conn, &BrowseFilter::default(), 10, None).unwrap();
        assert_eq!(left.total, 3, "the previous version is the newest now");
    }
}
