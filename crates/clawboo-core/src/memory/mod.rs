//! The shared memory store: facts and versioned procedures (lands with the memory issue).

use crate::db::SchemaPart;

/// The memory store's schema.
pub const SCHEMA: SchemaPart = SchemaPart {
    component: "memory",
    steps: &[],
};
