//! The persisted tool registry: the `tool_registry` table, which records each builtin's metadata
//! and whether an operator has switched it off.
//!
//! Owns: every read and write of `tool_registry`. Guarantees: seeding inserts a tool enabled and,
//! when it is already there, refreshes its metadata but never its `enabled` flag or `created_at`,
//! so a disable survives restarts; a tool with no row counts as enabled. Must never: hide a tool
//! from a listing (a disabled tool is listed and refused when called).

use rusqlite::{Connection, OptionalExtension, params};

use super::builtins;
use crate::db::Conn;

/// Records every builtin's metadata (a tool seen for the first time starts enabled).
pub fn seed_builtins(conn: &Conn<'_>) -> rusqlite::Result<()> {
    let now = conn.now_ms();
    let mut stmt = conn.prepare_cached(
        "INSERT INTO tool_registry (name, description, input_schema, availability, owner,
             provenance_signer_id, provenance_signature, provenance_signed_at, enabled, created_at,
             updated_at)
         VALUES (?1, ?2, NULL, ?3, ?4, NULL, NULL, NULL, 1, ?5, ?5)
         ON CONFLICT(name) DO UPDATE SET description = excluded.description,
             availability = excluded.availability, owner = excluded.owner,
             provenance_signer_id = excluded.provenance_signer_id,
             provenance_signature = excluded.provenance_signature,
             provenance_signed_at = excluded.provenance_signed_at, updated_at = excluded.updated_at",
    )?;
    for tool in builtins::ALL {
        let availability = tool.requires.and_then(|r| serde_json::to_string(&r).ok());
        stmt.execute(params![
            tool.name,
            tool.description,
            availability,
            tool.owner(),
            now
        ])?;
    }
    Ok(())
}

/// Whether calls to `name` are allowed: true unless its row says `enabled = 0`.
pub fn is_enabled(conn: &Connection, name: &str) -> rusqlite::Result<bool> {
    let enabled: Option<i64> = conn
        .query_row(
            "SELECT enabled FROM tool_registry WHERE name = ?1",
            [name],
            |r| r.get("enabled"),
        )
        .optional()?;
    Ok(enabled != Some(0))
}

/// Switches `name` on or off; false when it has no row (nothing changed).
pub fn set_enabled(conn: &Conn<'_>, name: &str, enabled: bool) -> rusqlite::Result<bool> {
    let changed = conn.execute(
        "UPDATE tool_registry SET enabled = ?2, updated_at = ?3 WHERE name = ?1",
        params![name, i64::from(enabled), conn.now_ms()],
    )?;
    Ok(changed > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Db;

    #[test]
    fn an_unseeded_tool_is_enabled_and_cannot_be_switched_off() {
        let db = Db::open_in_memory().unwrap();
        let conn = db.conn();
        assert!(!set_enabled(&conn, "echo", false).unwrap());
        assert!(is_enabled(&conn, "echo").unwrap());
    }

    #[test]
    fn seeding_enables_every_builtin_and_reseeding_keeps_a_disable() {
        let db = Db::open_in_memory().unwrap();
        let conn = db.conn();
        seed_builtins(&conn).unwrap();
        for tool in builtins::ALL {
            assert!(is_enabled(&conn, tool.name).unwrap(), "{}", tool.name);
        }
        assert!(set_enabled(&conn, "echo", false).unwrap());
        seed_builtins(&conn).unwrap();
        assert!(!is_enabled(&conn, "echo").unwrap());
        assert!(is_enabled(&conn, "note").unwrap());
        let availability: Option<String> = conn
            .query_row(
                "SELECT availability FROM tool_registry WHERE name = 'web_search'",
                [],
                |r| r.get("availability"),
            )
            .unwrap();
        assert_eq!(
            availability.as_deref(),
            Some(r#"{"anyOf":[{"env":"TAVILY_API_KEY"},{"auth":"tavily"}]}"#)
        );
    }
}
