//! The team rooms as the operator console reads them: which rooms exist, and a page of one room's
//! posts (after a seq, before one, or the newest).
//!
//! Guarantees: posts come back seq ascending whichever way the page was taken; a page is one
//! indexed statement (`UNIQUE(room_id, seq)`), so a room of a million posts costs what a room of
//! ten does. Must never: write, or filter by author (a person sees every post, their own included).

use rusqlite::{Connection, params};
use serde::Serialize;

use super::{ChatPost, from_row, room_for_team};

/// One team's room: how many posts, the newest seq and when it was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoomSummary {
    /// The team.
    pub team_id: String,
    /// Posts in the team's room.
    pub posts: i64,
    /// The newest seq.
    pub last_seq: i64,
    /// When the newest post was written, ms since the epoch.
    pub last_at: i64,
}

/// Every team with a room (`team:<team>`), sorted by team.
pub fn rooms(conn: &Connection) -> rusqlite::Result<Vec<RoomSummary>> {
    conn.prepare_cached(
        "SELECT team_id, COUNT(*) AS posts, MAX(seq) AS last_seq, MAX(created_at) AS last_at
         FROM team_chat WHERE room_id = 'team:' || team_id
         GROUP BY team_id ORDER BY team_id",
    )?
    .query_map([], |r| {
        Ok(RoomSummary {
            team_id: r.get("team_id")?,
            posts: r.get("posts")?,
            last_seq: r.get("last_seq")?,
            last_at: r.get("last_at")?,
        })
    })?
    .collect()
}

/// Up to `limit` posts of `team`'s room, seq ascending: those after `since_seq` (the oldest
/// first), else those before `before_seq` (the newest of them), else the newest.
pub fn room_page(
    conn: &Connection,
    team: &str,
    since_seq: Option<i64>,
    before_seq: Option<i64>,
    limit: u32,
) -> rusqlite::Result<Vec<ChatPost>> {
    let room = room_for_team(team);
    let limit = i64::from(limit);
    let mut posts = match since_seq {
        Some(since) => conn
            .prepare_cached(
                "SELECT id, room_id, team_id, author_agent_id, body, kind, created_at, seq
                 FROM team_chat WHERE room_id = ?1 AND seq > ?2 ORDER BY seq ASC LIMIT ?3",
            )?
            .query_map(params![room, since, limit], from_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?,
        None => {
            let mut newest = conn
                .prepare_cached(
                    "SELECT id, room_id, team_id, author_agent_id, body, kind, created_at, seq
                     FROM team_chat WHERE room_id = ?1 AND seq < ?2 ORDER BY seq DESC LIMIT ?3",
                )?
                .query_map(
                    params![room, before_seq.unwrap_or(i64::MAX), limit],
                    from_row,
                )?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            newest.reverse();
            newest
        }
    };
    posts.sort_by_key(|p| p.seq);
    Ok(posts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Db;
    use crate::teamchat::{NewPost, PostKind, post};

    #[test]
    fn rooms_and_pages_read_seq_ascending_every_way() {
        let db = Db::open_in_memory().unwrap();
        let conn = db.conn();
        for n in 0..5 {
            post(
                &conn,
                &NewPost {
                    room_id: "team:t/1",
                    team_id: "t/1",
                    author_agent_id: "a",
                    body: &format!("post {n}"),
                    kind: if n == 4 {
                        PostKind::User
                    } else {
                        PostKind::Peer
                    },
                },
            )
            .unwrap();
        }
        let summary = rooms(&conn).unwrap();
        assert_eq!(summary.len(), 1);
        assert_eq!((summary[0].posts, summary[0].last_seq), (5, 5));
        let seqs = |posts: Vec<ChatPost>| posts.iter().map(|p| p.seq).collect::<Vec<_>>();
        assert_eq!(
            seqs(room_page(&conn, "t/1", None, None, 2).unwrap()),
            [4, 5]
        );
        assert_eq!(
            seqs(room_page(&conn, "t/1", Some(1), None, 2).unwrap()),
            [2, 3]
        );
        assert_eq!(
            seqs(room_page(&conn, "t/1", None, Some(4), 2).unwrap()),
            [2, 3]
        );
        assert!(room_page(&conn, "other", None, None, 2).unwrap().is_empty());
        let last = room_page(&conn, "t/1", Some(4), None, 9).unwrap();
        assert_eq!(last[0].kind, "user");
    }
}
