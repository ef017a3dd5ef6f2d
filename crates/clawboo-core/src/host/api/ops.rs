//! `/api/operator/actions` (who did what) and the store half of `/api/health` (file, sizes,
//! schema versions, row counts, embedding provider).
//!
//! Must never: show a token or an API key (the provider is named by its id, `ollama:<model>`).

use serde_json::{Map, Value, json};

use super::{Answer, Call, Console, cursor_json, ok};
use crate::broker::operator;
use crate::db::schema_versions;
use crate::schema::topics::row_counts;

/// `GET /api/operator/actions?limit=&cursor=`: newest first.
pub fn actions(console: &Console, call: &Call<'_>) -> Answer {
    let (actions, next) = operator::actions_page(console.db(), call.limit()?, call.keyset()?)?;
    ok(json!({ "actions": actions, "nextCursor": cursor_json(next.map(|k| k.encode())) }))
}

/// The store's part of `GET /api/health`: `database`, `schema`, `rows`, `embeddings`.
pub fn health(console: &Console) -> Result<Map<String, Value>, String> {
    let size = |path: &std::path::Path| std::fs::metadata(path).map_or(0, |m| m.len());
    let mut wal = console.db_path.clone().into_os_string();
    wal.push("-wal");
    let conn = console.db().conn();
    let schema: Map<String, Value> = schema_versions(&conn)
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|(component, version)| (component, version.into()))
        .collect();
    let rows: Map<String, Value> = row_counts(&conn)
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|(table, count)| (table.to_owned(), count.into()))
        .collect();
    let provider = console.memory.provider();
    let embeddings = match provider {
        Some(p) => {
            let id = p.id();
            let (name, model) = id.split_once(':').unwrap_or((id.as_str(), ""));
            json!({ "provider": name, "model": model, "available": true })
        }
        None => json!({ "provider": null, "model": null, "available": false }),
    };
    let mut body = Map::new();
    body.insert(
        "database".into(),
        json!({
            "path": console.db_path.display().to_string(),
            "sizeBytes": size(&console.db_path),
            "walBytes": size(std::path::Path::new(&wal)),
        }),
    );
    body.insert("schema".into(), schema.into());
    body.insert("rows".into(), rows.into());
    body.insert("embeddings".into(), embeddings);
    Ok(body)
}
