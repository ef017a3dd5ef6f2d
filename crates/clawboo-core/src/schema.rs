//! Which components share the database file, and opening a [`Db`] with all of them.
//!
//! Owns: the list of every repository's [`SchemaPart`], in dependency order, and [`Db::open`] /
//! [`Db::open_in_memory`], which bring all of them up to date. Guarantees: a file opened here has
//! every table and index any repository reads. Must never: hold DDL itself (each repository owns
//! its own) or know how steps are applied (`db` does; its module docs give the recipe for adding a
//! table or a column).
//!
//! This is the one module that knows both `db` and the repositories, so `db` never imports a
//! repository; for the same reason `topics` (which tables changed, for the operator console's live
//! updates) and `retention` (which repositories' rows age out, and the policy that says when)
//! live here.

pub mod retention;
pub mod topics;

use std::path::Path;

use crate::db::{Db, DbError, SchemaPart};

/// Every component's schema, in dependency order. (A server that keeps its rows in the shared file
/// names its part in its registry entry, `servers::registry`; the registry test checks it is here.)
pub const COMPONENTS: &[SchemaPart] = &[
    crate::board::SCHEMA,
    crate::memory::SCHEMA,
    crate::memory::VECTOR_SCHEMA,
    crate::broker::SCHEMA,
    crate::teamchat::SCHEMA,
];

impl Db {
    /// Opens (creating if needed) the database file at `path` and its parent folder, applies the
    /// pragmas and brings every component's schema up to date.
    pub fn open(path: &Path) -> Result<Self, DbError> {
        Db::open_with_schema(path, COMPONENTS)
    }

    /// Opens a private in-memory database with every component's schema, for unit tests.
    pub fn open_in_memory() -> Result<Self, DbError> {
        Db::open_in_memory_with_schema(COMPONENTS)
    }
}

/// How the schema versions a file records compare with this build's: one line per component,
/// `board 7 (current)`, `board 5 (older: this build migrates it on open)`, `board 9 (newer than
/// this build's 7: use a newer build)`, or `board missing`.
pub fn describe_versions(recorded: &[(String, i64)]) -> Vec<String> {
    COMPONENTS
        .iter()
        .map(|part| {
            let ours = i64::try_from(part.steps.len()).unwrap_or(i64::MAX);
            let name = part.component;
            match recorded.iter().find(|(c, _)| c == name) {
                None => format!("{name} missing (created on open)"),
                Some((_, v)) if *v == ours => format!("{name} {v} (current)"),
                Some((_, v)) if *v < ours => {
                    format!("{name} {v} (older than this build's {ours}: migrated on open)")
                }
                Some((_, v)) => {
                    format!("{name} {v} (newer than this build's {ours}: use a newer build)")
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
