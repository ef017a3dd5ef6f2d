//! What the operations write: a memory file and its index row together, scrubbed first, and
//! `MEMORY.md` after every change that moves a score or a file.
//!
//! Owns: scrubbing and checking tags and content, creating, rewriting and archiving a live file
//! with its `clawbrain_files` row (and the stamp cache's [`Delta`]), the credit row defaults a
//! [`Strategy`] sets, and regenerating the digest. Guarantees: content and tags pass the scrubber
//! before anything is written; a new memory never replaces a live file ([`BrainError::Exists`]);
//! pinned memories are never archived. Must never: write a file or a row outside the transaction
//! of [`Brain::in_vault`] (the writers take its connection).

use rusqlite::Connection;

use super::engine::{self, FileRow, RowDefaults};
use super::frontmatter::{self, Frontmatter};
use super::index::{Delta, Refresh};
use super::{Brain, BrainError, Stored, Strategy, digest, vault};
use crate::scrub;

impl Brain {
    /// The credit row a new memory starts with under `strategy`.
    pub(super) fn row_defaults(strategy: &Strategy) -> RowDefaults {
        RowDefaults {
            score: strategy.initial_score,
            decay_rate: strategy.decay_rate,
        }
    }

    /// Scrubs and checks tags.
    pub(super) fn clean_tags(tags: &[String]) -> Result<Vec<String>, BrainError> {
        tags.iter()
            .enumerate()
            .map(|(index, tag)| {
                let tag = scrub::scrub_secrets(tag.trim());
                if tag.is_empty() {
                    return Err(BrainError::BadTag {
                        index,
                        reason: "is empty",
                    });
                }
                if tag.chars().any(char::is_control) {
                    return Err(BrainError::BadTag {
                        index,
                        reason: "contains a control character",
                    });
                }
                Ok(tag)
            })
            .collect()
    }

    /// Scrubs content; refuses content that was nothing but secrets.
    pub(super) fn clean_content(content: &str) -> Result<String, BrainError> {
        let scrubbed = scrub::scrub_secrets(content);
        if scrub::is_entirely_redacted(&scrubbed) {
            return Err(BrainError::OnlySecrets);
        }
        Ok(scrubbed.trim().to_owned())
    }

    /// Writes a new memory file and its credit row; `Exists` when a live file is there.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn write_new(
        &self,
        tx: &Connection,
        delta: &mut Delta,
        fm: Frontmatter,
        rel: String,
        name: &str,
        body: &str,
        defaults: RowDefaults,
        now: &str,
    ) -> Result<Stored, BrainError> {
        let text = frontmatter::render(&fm, body);
        let stamp = vault::create_new(&self.root, &rel, &text)?
            .ok_or_else(|| BrainError::Exists(rel.clone()))?;
        engine::ensure_record(tx, &fm.id, now, defaults)?;
        let row = FileRow {
            path: rel.clone(),
            name: name.to_owned(),
            body: body.trim().to_owned(),
            fm,
        };
        engine::upsert_file(tx, &row, stamp)?;
        delta.seen.push((rel.clone(), stamp));
        Ok(Stored {
            id: row.fm.id,
            path: rel,
            created: true,
        })
    }

    /// Replaces a live file's body, keeping its frontmatter and setting `updated`.
    pub(super) fn rewrite(
        &self,
        tx: &Connection,
        delta: &mut Delta,
        mut row: FileRow,
        body: &str,
        now: &str,
    ) -> Result<FileRow, BrainError> {
        row.fm.updated = now.to_owned();
        row.body = body.trim().to_owned();
        let stamp = vault::replace(
            &self.root,
            &row.path,
            &frontmatter::render(&row.fm, &row.body),
        )?;
        engine::upsert_file(tx, &row, stamp)?;
        delta.seen.push((row.path.clone(), stamp));
        Ok(row)
    }

    /// Moves a live file to the archive and out of the index.
    pub(super) fn archive_row(
        &self,
        tx: &Connection,
        delta: &mut Delta,
        row: &FileRow,
    ) -> Result<String, BrainError> {
        if row.fm.pinned {
            return Err(BrainError::Pinned(row.fm.id.clone()));
        }
        let archived = vault::archive(&self.root, &row.path)?;
        engine::remove_file(tx, &row.path)?;
        delta.gone.push(row.path.clone());
        Ok(archived)
    }

    /// The live memory `id`, or [`BrainError::NotFound`].
    pub(super) fn live(tx: &Connection, id: &str) -> Result<FileRow, BrainError> {
        engine::file_by_id(tx, id)?.ok_or_else(|| BrainError::NotFound(id.to_owned()))
    }

    /// Rewrites `MEMORY.md` from the index as this transaction sees it.
    pub(super) fn write_digest(
        &self,
        tx: &Connection,
        strategy: &Strategy,
    ) -> Result<(), BrainError> {
        let rows = engine::digest_rows(tx, 500)?;
        let text = digest::render(&rows, strategy.max_context_budget, strategy.initial_score);
        vault::replace(&self.root, "MEMORY.md", &text)?;
        Ok(())
    }

    /// Regenerates `MEMORY.md` now (the reference host does this before a session).
    pub fn regenerate_digest(&self) -> Result<(), BrainError> {
        let strategy = self.strategy();
        self.in_vault(Refresh::Strict, |tx, _| self.write_digest(tx, &strategy))
    }
}
