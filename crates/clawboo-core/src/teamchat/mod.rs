//! The team room substrate: the `team_chat` table, where every runtime's agents post narration
//! for their teammates, and [`format_peer_post`], the envelope a post is delivered in.
//!
//! Owns: the `team_chat` table (the reference's DDL and column names) and every write to it; seq
//! allocation; the console's reads of rooms (`rooms`). Guarantees: within a room, seqs start at 1 and are gap-free and unique even with
//! many processes posting at once (the top seq is read and the row inserted inside one
//! `BEGIN IMMEDIATE`, and `UNIQUE(room_id, seq)` is the backstop); rooms are independent.
//! [`read_batch`] gives a cursor that visits every post of a room exactly once however small the
//! page, including when the reader's own posts (which it never gets back) are interleaved.
//!
//! Must never: know MCP or decide who the caller is (the server binds identity); validate bodies
//! (callers do); build SQL from caller input.

mod envelope;
mod rooms;

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;

pub use envelope::{PeerPost, format_peer_post};
pub use rooms::{room_page, rooms};

use crate::db::{Conn, DbError, SchemaPart, Step, immediate, new_id};

/// The team room's schema, compatible with the reference implementation's table.
pub const SCHEMA: SchemaPart = SchemaPart {
    component: "teamchat",
    steps: &[Step::Sql(
        "
CREATE TABLE IF NOT EXISTS team_chat (
    id TEXT PRIMARY KEY,
    room_id TEXT NOT NULL,
    team_id TEXT NOT NULL,
    author_agent_id TEXT NOT NULL,
    body TEXT NOT NULL,
    kind TEXT NOT NULL DEFAULT 'peer',
    created_at INTEGER NOT NULL,
    seq INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS uniq_team_chat_room_seq ON team_chat (room_id, seq);
CREATE INDEX IF NOT EXISTS idx_team_chat_team ON team_chat (team_id);
",
    )],
};

/// How many rows a read returns when the caller sets no limit (the reference's default).
pub const DEFAULT_READ_LIMIT: u32 = 1000;

/// The default room of a team: `team:<teamId>`, the id unescaped.
pub fn room_for_team(team_id: &str) -> String {
    format!("team:{team_id}")
}

/// What kind of voice a post is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostKind {
    /// A teammate's post, the only kind the MCP tool writes. (The reference's board narration,
    /// `system`, is written by its host program, never by us; a read returns whatever `kind` a row
    /// holds.)
    Peer,
    /// A person's post from the operator console (agents still read it inside the peer envelope,
    /// `kind=user`, `isUser=false`: it is narration from the room, not a turn with user authority).
    User,
}

impl PostKind {
    /// The value stored in `team_chat.kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            PostKind::Peer => "peer",
            PostKind::User => "user",
        }
    }
}

/// One stored post.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatPost {
    /// The row id (UUID v4).
    pub id: String,
    /// The room.
    pub room_id: String,
    /// The owning team.
    pub team_id: String,
    /// The poster.
    pub author_agent_id: String,
    /// The text, as stored.
    pub body: String,
    /// `peer`, `system` or `user` (a file written by another implementation may hold anything).
    pub kind: String,
    /// Milliseconds since the epoch, read before the write lock was taken.
    pub created_at: i64,
    /// The post's place in its room, from 1.
    pub seq: i64,
}

impl ChatPost {
    /// The post wrapped as inter-session evidence (see [`format_peer_post`]).
    pub fn wrapped(&self) -> String {
        format_peer_post(&PeerPost {
            author_agent_id: &self.author_agent_id,
            body: &self.body,
            kind: &self.kind,
            seq: self.seq,
        })
    }
}

/// A post to append.
#[derive(Debug, Clone, Copy)]
pub struct NewPost<'a> {
    /// The room.
    pub room_id: &'a str,
    /// The owning team.
    pub team_id: &'a str,
    /// The poster.
    pub author_agent_id: &'a str,
    /// The text, stored as given.
    pub body: &'a str,
    /// The voice.
    pub kind: PostKind,
}

pub(crate) fn from_row(row: &Row<'_>) -> rusqlite::Result<ChatPost> {
    Ok(ChatPost {
        id: row.get("id")?,
        room_id: row.get("room_id")?,
        team_id: row.get("team_id")?,
        author_agent_id: row.get("author_agent_id")?,
        body: row.get("body")?,
        kind: row.get("kind")?,
        created_at: row.get("created_at")?,
        seq: row.get("seq")?,
    })
}

/// Appends a post to its room with the next seq and returns the stored row.
pub fn post(conn: &Conn<'_>, new: &NewPost<'_>) -> Result<ChatPost, DbError> {
    let created_at = conn.now_ms();
    immediate(conn, |tx| {
        let seq = room_max_seq(tx, new.room_id)? + 1;
        let row = ChatPost {
            id: new_id(),
            room_id: new.room_id.to_owned(),
            team_id: new.team_id.to_owned(),
            author_agent_id: new.author_agent_id.to_owned(),
            body: new.body.to_owned(),
            kind: new.kind.as_str().to_owned(),
            created_at,
            seq,
        };
        tx.execute(
            "INSERT INTO team_chat (id, room_id, team_id, author_agent_id, body, kind, created_at, seq)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                row.id,
                row.room_id,
                row.team_id,
                row.author_agent_id,
                row.body,
                row.kind,
                row.created_at,
                row.seq
            ],
        )?;
        Ok(row)
    })
}

/// The room's highest seq, or 0 for an empty or unknown room.
pub fn room_max_seq(conn: &Connection, room_id: &str) -> rusqlite::Result<i64> {
    conn.query_row(
        "SELECT seq FROM team_chat WHERE room_id = ?1 ORDER BY seq DESC LIMIT 1",
        [room_id],
        |r| r.get("seq"),
    )
    .optional()
    .map(|seq| seq.unwrap_or(0))
}

/// A page of a room as one reader sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// The posts past the cursor, oldest first, none by the reader.
    pub posts: Vec<ChatPost>,
    /// The cursor for the next read: every post at or below it has been delivered or is the
    /// reader's own; it never moves backwards.
    pub next_seq: i64,
}

/// Reads up to `limit` posts of `room_id` with seq above `since_seq`, leaving out those by
/// `reader` (the echo guard).
///
/// The cursor fixes the reference's defect (its cursor jumped to the room head even when the limit
/// cut the page short, skipping the rest): when the page is full, `next_seq` is the last delivered
/// seq; otherwise everything up to the head has been seen (delivered or the reader's own), so
/// `next_seq` is the head. The head is read first and the page bounded by it: a room's seqs
/// commit in order (each is allocated under the write lock after its predecessor committed), so
/// every row up to a head that is visible is visible too, and no post can slip between them.
pub fn read_batch(
    conn: &Connection,
    room_id: &str,
    since_seq: i64,
    reader: &str,
    limit: u32,
) -> Result<Batch, DbError> {
    let head = room_max_seq(conn, room_id)?;
    let mut stmt = conn.prepare_cached(
        "SELECT id, room_id, team_id, author_agent_id, body, kind, created_at, seq FROM team_chat
         WHERE room_id = ?1 AND seq > ?2 AND seq <= ?3 AND author_agent_id <> ?4
         ORDER BY seq ASC LIMIT ?5",
    )?;
    let limit = limit.max(1);
    let mut posts = stmt
        .query_map(
            params![room_id, since_seq, head, reader, i64::from(limit) + 1],
            from_row,
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let next_seq = if posts.len() > limit as usize {
        posts.truncate(limit as usize);
        posts.last().map_or(since_seq, |p| p.seq)
    } else {
        head.max(since_seq)
    };
    Ok(Batch { posts, next_seq })
}

#[cfg(test)]
mod tests;
