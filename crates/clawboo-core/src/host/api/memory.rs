//! `/api/memory*`: seed 004's Memory Browser: list (kind and scope filters, paging), search exactly
//! as `memory_search` does, seed a fact or procedure through the store's scrub-on-write door, and
//! delete one entry.
//!
//! Must never: store text that did not go through [`Memory::save_fact`] / `save_procedure` (the
//! scrub); search any other way than [`Memory::search`].

use serde_json::{Map, Value, json};

use super::{Answer, Call, Console, Refusal, bad, created, cursor_json, not_found, ok, text_field};
use crate::broker::actions::Action;
use crate::broker::operator;
use crate::memory::{
    BrowseFilter, Entry, Memory, MemoryError, NewFact, ReadScope, ScopeKind, SearchMode,
    VersionRef, WriteScope,
};

/// The most hits a search returns (as `memory_search`).
const MAX_HITS: u32 = 100;

fn memory_failed(e: MemoryError) -> Refusal {
    match e {
        MemoryError::EntirelyRedacted => bad(format!("content: {e}")),
        MemoryError::Db(e) => e.into(),
    }
}

/// An entry as the console shows it (a procedure's name is its title).
fn entry_json(entry: &Entry, versions: Option<&[VersionRef]>) -> Value {
    let scope = |team: &Option<String>, agent: &Option<String>, tenant: &Option<String>| json!({ "teamId": team, "agentId": agent, "tenantId": tenant });
    match entry {
        Entry::Fact(f) => json!({
            "kind": "fact", "id": f.id, "title": f.title, "content": f.content, "tags": f.tags,
            "scope": scope(&f.scope_team_id, &f.scope_agent_id, &f.tenant_id),
            "createdAt": f.created_at, "updatedAt": f.updated_at,
        }),
        Entry::Procedure(p) => json!({
            "kind": "procedure", "id": p.id, "title": p.name, "content": p.content, "tags": [],
            "scope": scope(&p.scope_team_id, &p.scope_agent_id, &p.tenant_id),
            "createdAt": p.created_at, "updatedAt": p.created_at, "version": p.version,
            "versions": versions,
        }),
    }
}

/// `GET /api/memory?kind=&scope=&team=&agent=&limit=&cursor=`.
pub fn list(console: &Console, call: &Call<'_>) -> Answer {
    let facts = match call.param("kind").as_deref() {
        None => None,
        Some("fact") => Some(true),
        Some("procedure") => Some(false),
        Some(other) => {
            return Err(bad(format!(
                "kind: expected fact or procedure, got {other:?}"
            )));
        }
    };
    let scope = call
        .param("scope")
        .map(|s| {
            ScopeKind::parse(&s)
                .ok_or_else(|| bad(format!("scope: expected team, agent or global, got {s:?}")))
        })
        .transpose()?;
    let filter = BrowseFilter {
        facts,
        scope,
        team_id: call.param("team"),
        agent_id: call.param("agent"),
    };
    let page = console
        .memory
        .browse_page(&filter, call.limit()?, call.keyset()?)
        .map_err(memory_failed)?;
    let entries: Vec<Value> = page
        .entries
        .iter()
        .map(|e| entry_json(&e.entry, e.versions.as_deref()))
        .collect();
    ok(json!({
        "entries": entries,
        "nextCursor": cursor_json(page.next.map(|k| k.encode())),
        "total": page.total,
    }))
}

/// `GET /api/memory/search?q=&mode=&team=&agent=&limit=`: what `memory_search` answers, with the
/// mode used and why it fell back, if it did.
pub fn search(console: &Console, call: &Call<'_>) -> Answer {
    let q = call
        .param("q")
        .ok_or_else(|| bad("q: required, the words to look for".into()))?;
    let mode = call
        .param("mode")
        .map(|m| {
            serde_json::from_value::<SearchMode>(Value::String(m.clone()))
                .map_err(|_| bad(format!("mode: expected fts, vector or hybrid, got {m:?}")))
        })
        .transpose()?;
    let scope = ReadScope::new(
        call.param("team").as_deref(),
        call.param("agent").as_deref(),
        None,
    );
    let memory: &Memory = &console.memory;
    let outcome = memory
        .search(&q, mode, call.limit_within(MAX_HITS)?, &scope)
        .map_err(memory_failed)?;
    let used = if outcome.degraded.is_some() {
        SearchMode::Fts
    } else {
        mode.unwrap_or(if memory.provider().is_some() {
            SearchMode::Hybrid
        } else {
            SearchMode::Fts
        })
    };
    let hits: Vec<Value> = outcome
        .hits
        .iter()
        .map(|h| json!({ "entry": entry_json(&h.entry, None), "score": h.score, "matchedVia": h.matched_via }))
        .collect();
    ok(json!({ "mode": used, "degraded": outcome.degraded, "hits": hits }))
}

/// An optional string field of an object (`scope.teamId`, …); blank is unset.
fn optional_text(
    object: Option<&Map<String, Value>>,
    name: &str,
) -> Result<Option<String>, Refusal> {
    match object.and_then(|o| o.get(name)) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone()).filter(|s| !s.trim().is_empty())),
        Some(other) => Err(bad(format!("scope.{name}: expected a string, got {other}"))),
    }
}

/// `POST /api/memory` `{ kind, title, content, tags?, scope: { teamId?, agentId? } }`.
pub fn seed(console: &Console, call: &Call<'_>) -> Answer {
    let body = call.object()?;
    let kind = text_field(&body, "kind")?;
    let title = text_field(&body, "title")?;
    let content = match body.get("content") {
        Some(Value::String(s)) => s.clone(),
        _ => return Err(bad("content: required, a string".into())),
    };
    let tags: Vec<String> = match body.get("tags") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|t| {
                t.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| bad(format!("tags: expected strings, got {t}")))
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(bad(format!(
                "tags: expected an array of strings, got {other}"
            )));
        }
    };
    let scope = match body.get("scope") {
        None | Some(Value::Null) => None,
        Some(Value::Object(o)) => Some(o),
        Some(other) => return Err(bad(format!("scope: expected an object, got {other}"))),
    };
    let team = optional_text(scope, "teamId")?;
    let agent = optional_text(scope, "agentId")?;
    let scope = WriteScope::new(team.as_deref(), agent.as_deref(), None);
    let memory = &console.memory;
    let entry = match kind.as_str() {
        "fact" => Entry::Fact(
            memory
                .save_fact(
                    &NewFact {
                        title: &title,
                        content: &content,
                        tags: &tags,
                    },
                    &scope,
                )
                .map_err(memory_failed)?,
        ),
        "procedure" => Entry::Procedure(
            memory
                .save_procedure(&title, &content, &scope)
                .map_err(memory_failed)?,
        ),
        other => {
            return Err(bad(format!(
                "kind: expected fact or procedure, got {other:?}"
            )));
        }
    };
    operator::record_action(
        console.db(),
        call.caller,
        Action::MemorySeed,
        &format!("{kind} {}", entry.id()),
    )?;
    created(json!({ "entry": entry_json(&entry, None) }))
}

/// `DELETE /api/memory/:id`: one fact or procedure version.
pub fn delete(console: &Console, call: &Call<'_>, id: &str) -> Answer {
    let entry = console
        .memory
        .delete(id)
        .map_err(memory_failed)?
        .ok_or_else(|| not_found(format!("no memory entry {id}")))?;
    let kind = match entry {
        Entry::Fact(_) => "fact",
        Entry::Procedure(_) => "procedure",
    };
    operator::record_action(
        console.db(),
        call.caller,
        Action::MemoryDelete,
        &format!("{kind} {id}"),
    )?;
    ok(json!({ "deleted": id }))
}
