//! The one way a vault operation runs: inside `BEGIN IMMEDIATE` on `engine.db`, after the index
//! has caught up with the files a person or another process changed.
//!
//! Owns: [`Brain::in_vault`], the re-index walk (`sync`: files whose stamp — mtime, size, inode —
//! changed are read again, vanished ones dropped) and the in-process stamp cache, updated only once
//! the transaction commits. Guarantees: a reader ([`Refresh::Strict`]) walks whenever the watch
//! reports a change or a previous walk did not commit, so a hand edit is seen by the next call; a
//! malformed file fails the operation with its path and is read again next time. Must never: write
//! a file (the operations do, through `writes`).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;

use rusqlite::Connection;

use super::engine::{self, FileRow};
use super::vault::{self, Stamp};
use super::{Brain, BrainError, frontmatter};

/// How an operation brings the index up to date with the files first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refresh {
    /// Re-index what changed; a malformed file is an error (every reader).
    Strict,
    /// Nothing: the operation reads no memory but the ones it names by path or id in the
    /// credit tables (store, feedback, decay), so it stays O(1) in the vault's size.
    Skip,
}

/// What a sync found on disk and what an operation wrote, applied to the in-process stamp cache
/// only once the transaction commits.
#[derive(Default)]
pub(super) struct Delta {
    pub(super) seen: Vec<(String, Stamp)>,
    pub(super) gone: Vec<String>,
}

impl Brain {
    /// Runs `op` inside `BEGIN IMMEDIATE`, after bringing the index up to date with the files
    /// when `refresh` says so.
    pub(super) fn in_vault<T>(
        &self,
        refresh: Refresh,
        op: impl FnOnce(&Connection, &mut Delta) -> Result<T, BrainError>,
    ) -> Result<T, BrainError> {
        let conn = self.conn();
        let mut known = self.known.lock().unwrap_or_else(|p| p.into_inner());
        if known.is_none() {
            *known = Some(engine::stamps(&conn)?.into_iter().collect());
        }
        let cache = known.get_or_insert_with(HashMap::new);
        let mut delta = Delta::default();
        // The walk stats every file; the watch says when it can be skipped. A change stays owed
        // until a walk commits, so a read that fails (a malformed file) walks again next time.
        let walk = refresh == Refresh::Strict && {
            let changed = self.watch.changed();
            self.stale.fetch_or(changed, Ordering::SeqCst) || changed
        };
        let value = crate::db::immediate(&conn, |tx| {
            if walk {
                self.sync(tx, cache, &mut delta)?;
            }
            op(tx, &mut delta)
        })?;
        if walk {
            self.stale.store(false, Ordering::SeqCst);
        }
        for rel in delta.gone {
            cache.remove(&rel);
        }
        for (rel, stamp) in delta.seen {
            cache.insert(rel, stamp);
        }
        Ok(value)
    }

    /// Re-indexes every file whose stamp differs from the cache and drops vanished ones; a file
    /// that is not a memory is an error naming it.
    pub(super) fn sync(
        &self,
        tx: &Connection,
        cache: &HashMap<String, Stamp>,
        delta: &mut Delta,
    ) -> Result<(), BrainError> {
        let files = vault::walk(&self.root, |dir| self.watch.folder(dir))
            .map_err(|e| BrainError::io(&self.root, e))?;
        let mut live = HashSet::with_capacity(files.len());
        for (rel, stamp) in &files {
            live.insert(rel.as_str());
            if cache.get(rel) == Some(stamp) {
                continue;
            }
            let text = match vault::read(&self.root, rel) {
                Ok(text) => text,
                Err(_) if !vault::abs(&self.root, rel).exists() => continue,
                Err(e) => return Err(e),
            };
            match frontmatter::parse(&text) {
                Ok((fm, body)) => {
                    let row = FileRow {
                        name: rel
                            .rsplit('/')
                            .next()
                            .unwrap_or(rel)
                            .trim_end_matches(".md")
                            .to_owned(),
                        path: rel.clone(),
                        fm,
                        body,
                    };
                    engine::upsert_file(tx, &row, *stamp)?;
                    delta.seen.push((rel.clone(), *stamp));
                }
                Err(e) => {
                    return Err(BrainError::BadFile {
                        message: e.to_string(),
                        path: rel.clone(),
                    });
                }
            }
        }
        for rel in cache.keys().filter(|k| !live.contains(k.as_str())) {
            engine::remove_file(tx, rel)?;
            delta.gone.push(rel.clone());
        }
        Ok(())
    }
}
