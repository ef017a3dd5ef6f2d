//! The team room substrate (lands with the teamchat issue).

use crate::db::SchemaPart;

/// The team room's schema.
pub const SCHEMA: SchemaPart = SchemaPart {
    component: "teamchat",
    steps: &[],
};
