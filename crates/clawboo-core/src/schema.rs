//! Which components share the database file, and opening a [`Db`] with all of them.
//!
//! Owns: the list of every repository's [`SchemaPart`], in dependency order, and [`Db::open`] /
//! [`Db::open_in_memory`], which bring all of them up to date. Guarantees: a file opened here has
//! every table and index any repository reads. Must never: hold DDL itself (each repository owns
//! its own) or know how steps are applied (`db` does; its module docs give the recipe for adding a
//! table or a column).
//!
//! This is the one module that knows both `db` and the repositories, so `db` never imports a
//! repository.

use std::path::Path;

use crate::db::{Db, DbError, SchemaPart};

/// Every component's schema, in dependency order.
pub const COMPONENTS: [SchemaPart; 5] = [
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
        Db::open_with_schema(path, &COMPONENTS)
    }

    /// Opens a private in-memory database with every component's schema, for unit tests.
    pub fn open_in_memory() -> Result<Self, DbError> {
        Db::open_in_memory_with_schema(&COMPONENTS)
    }
}

#[cfg(test)]
mod tests;
