//! The notes the `note` tool keeps: the `tool_notes` table.
//!
//! Owns: every read and write of `tool_notes`. Guarantees: a note is stored scrubbed of secrets
//! (what a model wrote down may hold a key it saw); the stored row is what the caller is told.
//! Must never: know MCP or who may call `note`.

use rusqlite::params;

use crate::db::{Conn, new_id};
use crate::scrub::scrub_secrets;

/// A note to store.
#[derive(Debug, Clone, Copy)]
pub struct NewNote<'a> {
    /// The writing agent, if known.
    pub agent_id: Option<&'a str>,
    /// The tenant, if known.
    pub tenant_id: Option<&'a str>,
    /// The text as given (scrubbed before it is stored).
    pub body: &'a str,
}

/// A stored note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// The row id (UUID v4).
    pub id: String,
    /// The text as stored.
    pub body: String,
}

/// Stores a note, scrubbed of secrets, and returns it.
pub fn add(conn: &Conn<'_>, new: &NewNote<'_>) -> rusqlite::Result<Note> {
    let note = Note {
        id: new_id(),
        body: scrub_secrets(new.body),
    };
    conn.execute(
        "INSERT INTO tool_notes (id, agent_id, tenant_id, body, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            note.id,
            new.agent_id,
            new.tenant_id,
            note.body,
            conn.now_ms()
        ],
    )?;
    Ok(note)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Db;

    #[test]
    fn a_note_is_stored_durably_and_scrubbed() {
        let db = Db::open_in_memory().unwrap();
        let conn = db.conn();
        let note = add(
            &conn,
            &NewNote {
                agent_id: Some("agent-a"),
                tenant_id: None,
                body: "deploy key AKIAFAKEFAKEFAKE1234 rotates friday",
            },
        )
        .unwrap();
        assert_eq!(note.body, "deploy key [REDACTED] rotates friday");
        let (body, agent): (String, String) = conn
            .query_row(
                "SELECT body, agent_id FROM tool_notes WHERE id = ?1",
                [&note.id],
                |r| Ok((r.get("body")?, r.get("agent_id")?)),
            )
            .unwrap();
        assert_eq!(body, note.body);
        assert_eq!(agent, "agent-a");
    }
}
