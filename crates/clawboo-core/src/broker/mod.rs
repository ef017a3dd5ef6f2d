//! The tool broker: registry, inspectors, approvals, audit (lands with the tools issue).

use crate::db::SchemaPart;

/// The broker's schema.
pub const SCHEMA: SchemaPart = SchemaPart {
    component: "broker",
    steps: &[],
};
