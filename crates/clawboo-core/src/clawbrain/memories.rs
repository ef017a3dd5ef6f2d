//! The operations on one memory: store, retrieve, update (with the contradiction check) and
//! delete (archive).
//!
//! Owns: the id and path rules of a new memory (`entities/<category>/<name>.md`,
//! `episodes/<YYYY-MM>/<name>.md`), access counting and turn recording on retrieval, and the
//! reference's contradiction test (a same-category entity mentioning the name whose negation
//! differs). Guarantees: a name or category the scrubber would mask is refused before any path is
//! built from it; a store touches only the file it names (no walk). Must never: build a path from
//! an id (ids are looked up).

use rusqlite::Connection;

use super::engine::{self, FileRow};
use super::frontmatter::Frontmatter;
use super::index::Refresh;
use super::{
    Archived, Brain, BrainError, Contradiction, MemoryType, NewMemory, Retrieved, Stored, Updated,
    time, vault,
};
use crate::scrub;

/// The reference's negation test: any of its words as a raw substring.
pub(super) fn negated(text: &str) -> bool {
    let lower = text.to_lowercase();
    ["not", "never", "no", "cannot", "can't", "won't", "without"]
        .iter()
        .any(|w| lower.contains(w))
}

impl Brain {
    /// `memory_store`.
    pub fn store(&self, new: &NewMemory<'_>) -> Result<Stored, BrainError> {
        let (now_ms, now) = self.now();
        self.store_at(new, now_ms, &now)
    }

    fn store_at(&self, new: &NewMemory<'_>, at_ms: i64, now: &str) -> Result<Stored, BrainError> {
        for (field, value) in [("name", Some(new.name)), ("category", new.category)] {
            if value.is_some_and(|v| scrub::scrub_secrets(v) != v) {
                return Err(BrainError::SecretSegment(field));
            }
        }
        let (category, rel, id) = match new.kind {
            MemoryType::Entity => {
                let category = new
                    .category
                    .filter(|c| !c.is_empty())
                    .ok_or(BrainError::CategoryRequired)?;
                vault::check_segment("category", category)?;
                vault::check_segment("name", new.name)?;
                (
                    category.to_owned(),
                    format!("entities/{category}/{}.md", new.name),
                    format!("entity-{category}-{}", new.name),
                )
            }
            MemoryType::Episode => {
                vault::check_segment("name", new.name)?;
                let month = time::iso(at_ms)[..7].to_owned();
                let rel = format!("episodes/{month}/{}.md", new.name);
                let id = format!("episode-{month}-{}", new.name);
                (month, rel, id)
            }
        };
        let tags = Self::clean_tags(new.tags)?;
        let body = Self::clean_content(new.content)?;
        let stamp_iso = time::iso(at_ms);
        let fm = Frontmatter {
            id,
            kind: new.kind,
            category,
            tags,
            created: stamp_iso.clone(),
            updated: stamp_iso,
            pinned: new.pinned,
        };
        let strategy = self.strategy();
        self.in_vault(Refresh::Skip, |tx, delta| {
            let stored = self.write_new(
                tx,
                delta,
                fm,
                rel,
                new.name,
                &body,
                Self::row_defaults(&strategy),
                now,
            )?;
            self.write_digest(tx, &strategy)?;
            Ok(stored)
        })
    }

    /// `memory_retrieve`: records the turn, counts the access.
    pub fn retrieve(&self, id: &str) -> Result<Retrieved, BrainError> {
        let (_, now) = self.now();
        let strategy = self.strategy();
        self.in_vault(Refresh::Strict, |tx, _| {
            let row = Self::live(tx, id)?;
            engine::ensure_record(tx, &row.fm.id, &now, Self::row_defaults(&strategy))?;
            engine::touch(tx, &row.fm.id, &now)?;
            engine::record_turn(tx, &self.session, std::slice::from_ref(&row.fm.id), &now)?;
            let credit = engine::credit(tx, &row.fm.id)?;
            Ok(Retrieved {
                credit_score: credit.as_ref().map_or(strategy.initial_score, |c| c.score),
                access_count: credit.as_ref().map_or(1, |c| c.access_count),
                last_accessed: credit.map_or_else(|| now.clone(), |c| c.last_accessed),
                id: row.fm.id,
                kind: row.fm.kind,
                category: row.fm.category,
                name: row.name,
                path: row.path,
                content: row.body,
                tags: row.fm.tags,
                created_at: row.fm.created.clone(),
                created: row.fm.created,
                updated: row.fm.updated,
                pinned: row.fm.pinned,
            })
        })
    }

    /// `memory_update`: new body, same frontmatter, `updated` = now; entities get the
    /// contradiction check against same-category peers that mention their name.
    pub fn update(&self, id: &str, content: &str) -> Result<Updated, BrainError> {
        let (_, now) = self.now();
        let scrubbed = scrub::scrub_secrets(content);
        if !content.trim().is_empty() && scrub::is_entirely_redacted(&scrubbed) {
            return Err(BrainError::OnlySecrets);
        }
        let strategy = self.strategy();
        self.in_vault(Refresh::Strict, |tx, delta| {
            let row = Self::live(tx, id)?;
            let previous = row.fm.updated.clone();
            let row = self.rewrite(tx, delta, row, &scrubbed, &now)?;
            let contradiction = match row.fm.kind {
                MemoryType::Episode => None,
                MemoryType::Entity => Some(self.contradiction(tx, &row, &now)?),
            };
            self.write_digest(tx, &strategy)?;
            Ok(Updated {
                id: id.to_owned(),
                updated: true,
                previous_updated_at: previous,
                contradiction,
            })
        })
    }

    fn contradiction(
        &self,
        tx: &Connection,
        row: &FileRow,
        now: &str,
    ) -> Result<Contradiction, BrainError> {
        let flag = negated(&row.body);
        let q = row.name.to_lowercase();
        let mut peers: Vec<engine::Candidate> = engine::matches(tx, &q, Some(MemoryType::Entity))?;
        peers.sort_by(|a, b| a.path.cmp(&b.path));
        for peer in peers {
            if peer.id == row.fm.id {
                continue;
            }
            let Some(peer_row) = engine::file_by_path(tx, &peer.path)? else {
                continue;
            };
            if peer_row.fm.category != row.fm.category || negated(&peer_row.body) == flag {
                continue;
            }
            let suggestion = "Review both entries and reconcile the conflicting claim.";
            engine::record_contradiction(tx, &row.fm.id, &peer.id, suggestion, now)?;
            return Ok(Contradiction {
                has_contradiction: true,
                conflicting_id: Some(peer.id),
                suggestion: Some(suggestion.to_owned()),
            });
        }
        Ok(Contradiction {
            has_contradiction: false,
            conflicting_id: None,
            suggestion: None,
        })
    }

    /// `memory_delete`: archives the file (pinned ones refuse); the credit row stays for its
    /// events but no longer counts as active.
    pub fn delete(&self, id: &str) -> Result<Archived, BrainError> {
        let strategy = self.strategy();
        self.in_vault(Refresh::Strict, |tx, delta| {
            let row = Self::live(tx, id)?;
            let archive_path = self.archive_row(tx, delta, &row)?;
            self.write_digest(tx, &strategy)?;
            Ok(Archived {
                id: row.fm.id,
                archived: true,
                archive_path,
            })
        })
    }
}
