//! The tool broker: the four builtin tools, who may see them, and the one path every call takes
//! (gates → inspector chain → human approval in the database → executor → compaction → audit).
//!
//! Owns: the `tool_call_audit`, `tool_call_approvals`, `tool_registry` and `tool_notes` tables (the
//! reference's DDL and column names, plus the notes the `note` tool keeps), `operator_actions` (ours:
//! what a person did through the console, `actions`), the builtin registry,
//! availability, the inspectors, output compaction, the Tavily client and the operator's typed
//! queries (`operator`: the queue, the audit log, the switches, as data; the commands that print
//! them live in `cli::operator`).
//!
//! Guarantees: a call that is denied never reaches its executor and never prompts a person; every
//! call that reaches the broker leaves a `before` audit row and ends with one `after` row (its
//! result when it ran, else why not: denied, timed out, expired, abandoned by its caller), both
//! scrubbed of secrets and size-bounded; an approval that times out, expires or loses its waiting
//! caller is marked `expired` in its row, never left `pending`; an `allow_always` grant is
//! remembered per agent and tool.
//!
//! Must never: know MCP (the tools server maps outcomes onto results); write unscrubbed arguments
//! or results anywhere; actually delete anything (`delete_path` is a demonstration).

pub mod actions;
pub mod approvals;
pub mod audit;
pub mod availability;
pub mod builtins;
pub mod compact;
pub mod inspect;
pub mod notes;
pub mod operator;
mod pipeline;
pub mod registry;
pub mod search;
mod summary;

pub use pipeline::{ApprovalTimings, Broker, BrokerError, CallContext, Outcome};

use crate::db::{SchemaPart, Step};

/// The broker's schema, compatible with the reference implementation's tables.
pub const SCHEMA: SchemaPart = SchemaPart {
    component: "broker",
    steps: &[
        Step::Sql(
            "
CREATE TABLE IF NOT EXISTS tool_call_audit (
    id TEXT PRIMARY KEY,
    tool_name TEXT NOT NULL,
    agent_id TEXT,
    phase TEXT NOT NULL,
    decision TEXT,
    args_summary TEXT,
    result_summary TEXT,
    is_error INTEGER NOT NULL DEFAULT 0,
    tenant_id TEXT,
    created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_tool_audit_tool ON tool_call_audit (tool_name);
CREATE INDEX IF NOT EXISTS idx_tool_audit_created ON tool_call_audit (created_at);
CREATE TABLE IF NOT EXISTS tool_call_approvals (
    id TEXT PRIMARY KEY,
    tool_name TEXT NOT NULL,
    agent_id TEXT,
    args_summary TEXT,
    reason TEXT,
    status TEXT NOT NULL DEFAULT 'pending',
    task_id TEXT,
    tenant_id TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    resolved_at INTEGER
);
CREATE INDEX IF NOT EXISTS idx_tool_approvals_status ON tool_call_approvals (status);
CREATE INDEX IF NOT EXISTS idx_tool_approvals_created ON tool_call_approvals (created_at);
CREATE TABLE IF NOT EXISTS tool_registry (
    name TEXT PRIMARY KEY,
    description TEXT NOT NULL,
    input_schema TEXT,
    availability TEXT,
    owner TEXT NOT NULL DEFAULT 'core',
    provenance_signer_id TEXT,
    provenance_signature TEXT,
    provenance_signed_at INTEGER,
    enabled INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_tool_registry_owner ON tool_registry (owner);
CREATE TABLE IF NOT EXISTS tool_notes (
    id TEXT PRIMARY KEY,
    agent_id TEXT,
    tenant_id TEXT,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_tool_notes_created ON tool_notes (created_at);
",
        ),
        // Ours, nullable (the reference's writers never name it): the instant until which the
        // waiting caller's latest heartbeat vouches for it (see `approvals`).
        Step::AddColumn {
            table: "tool_call_approvals",
            column: "heartbeat_until",
            definition: "INTEGER",
        },
        // Ours, nullable: the name of the HTTP host's token a call came in with (`host::caller`),
        // on its audit rows and its approval request, and the token that resolved an approval.
        // Empty for stdio and for the reference's writers.
        Step::AddColumn {
            table: "tool_call_audit",
            column: "caller",
            definition: "TEXT",
        },
        Step::AddColumn {
            table: "tool_call_approvals",
            column: "caller",
            definition: "TEXT",
        },
        Step::AddColumn {
            table: "tool_call_approvals",
            column: "resolved_by",
            definition: "TEXT",
        },
        // Ours: what a person did through the console (`actions`).
        Step::Sql(
            "CREATE TABLE IF NOT EXISTS operator_actions (
    id TEXT PRIMARY KEY,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_operator_actions_created ON operator_actions (created_at);",
        ),
    ],
};
