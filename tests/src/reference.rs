//! The reference implementation's tables, as the specs give them (`tasks.md` §1.3, `memory.md`
//! §1.1–1.3, `teamchat-transports.md` §1.1, `tools.md` §5), for tests that build a file the
//! reference could have written and check that ours serves it.
//!
//! Owns: one copy of that DDL. Must never: be used by the servers (their schema lives with the
//! repositories); record schema versions (the reference records none).

/// The keys of an approval row in the reference's REST answers (seed 003), in order.
pub const APPROVAL_ROW_KEYS: [&str; 11] = [
    "id",
    "toolName",
    "agentId",
    "argsSummary",
    "reason",
    "status",
    "taskId",
    "tenantId",
    "createdAt",
    "expiresAt",
    "resolvedAt",
];

/// Every table the reference creates in the shared file that our repositories read, with its
/// full-text index and insert trigger; no `clawboo_schema_versions`.
pub const DDL: &str = "
CREATE TABLE IF NOT EXISTS tasks (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, description TEXT,
    status TEXT NOT NULL DEFAULT 'backlog', priority INTEGER NOT NULL DEFAULT 0, team_id TEXT,
    assignee_agent_id TEXT, assignee_runtime TEXT, parent_task_id TEXT REFERENCES tasks(id),
    source_delegation_id TEXT, worktree_ref TEXT, branch_ref TEXT,
    cost_usd REAL NOT NULL DEFAULT 0, parent_session_id TEXT, dropped INTEGER NOT NULL DEFAULT 0,
    tenant_id TEXT, verification TEXT, scheduled_by TEXT NOT NULL DEFAULT 'manual',
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, completed_at INTEGER
);
CREATE TABLE IF NOT EXISTS task_deps (
    task_id TEXT NOT NULL REFERENCES tasks(id),
    depends_on_task_id TEXT NOT NULL REFERENCES tasks(id), tenant_id TEXT,
    PRIMARY KEY (task_id, depends_on_task_id)
);
CREATE TABLE IF NOT EXISTS task_comments (
    id TEXT PRIMARY KEY, task_id TEXT NOT NULL REFERENCES tasks(id), author_agent_id TEXT,
    author_type TEXT NOT NULL, body TEXT NOT NULL, tenant_id TEXT, created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS memory_facts (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, content TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]', embedding BLOB, embedding_model TEXT, scope_agent_id TEXT,
    scope_team_id TEXT, tenant_id TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS memory_procedures (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, version INTEGER NOT NULL DEFAULT 1,
    content TEXT NOT NULL, scope_agent_id TEXT, scope_team_id TEXT, tenant_id TEXT,
    created_at INTEGER NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS memory_facts_fts USING fts5(title, content, fact_id UNINDEXED);
CREATE TRIGGER IF NOT EXISTS memory_facts_ai AFTER INSERT ON memory_facts BEGIN
    INSERT INTO memory_facts_fts (rowid, title, content, fact_id)
    VALUES (new.rowid, new.title, new.content, new.id);
END;
CREATE TABLE IF NOT EXISTS team_chat (
    id TEXT PRIMARY KEY, room_id TEXT NOT NULL, team_id TEXT NOT NULL,
    author_agent_id TEXT NOT NULL, body TEXT NOT NULL, kind TEXT NOT NULL DEFAULT 'peer',
    created_at INTEGER NOT NULL, seq INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS uniq_team_chat_room_seq ON team_chat (room_id, seq);
CREATE TABLE IF NOT EXISTS tool_call_audit (
    id TEXT PRIMARY KEY, tool_name TEXT NOT NULL, agent_id TEXT, phase TEXT NOT NULL,
    decision TEXT, args_summary TEXT, result_summary TEXT, is_error INTEGER NOT NULL DEFAULT 0,
    tenant_id TEXT, created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tool_call_approvals (
    id TEXT PRIMARY KEY, tool_name TEXT NOT NULL, agent_id TEXT, args_summary TEXT, reason TEXT,
    status TEXT NOT NULL DEFAULT 'pending', task_id TEXT, tenant_id TEXT,
    created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, resolved_at INTEGER
);
";
