//! The board as the operator console shows it: cards in column order, paged, with their
//! ready/blocked marks, and a task's dependencies both ways.
//!
//! Owns: [`TaskCard`] and the console's board reads. Guarantees: live (not dropped) tasks only;
//! cards sort by status column (`backlog, todo, in_progress, in_review, blocked, done,
//! cancelled`, then any other status), priority descending, creation time, `rowid`, and a
//! [`BoardCursor`] resumes exactly after the last card shown; one statement per page (the marks
//! are subqueries), so a page costs the same on a board of 10 or 10,000 tasks beyond its index
//! walk. Must never: write; fail on a status word it does not know (a file written by another
//! implementation may hold one: it reads as stored).

use rusqlite::{Connection, Row, params};
use serde::Serialize;

use super::BoardError;

/// One card of the board (camelCase, times in ms since the epoch).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskCard {
    /// UUID v4.
    pub id: String,
    /// Title.
    pub title: String,
    /// Status, as stored.
    pub status: String,
    /// Higher is more urgent.
    pub priority: i64,
    /// Owning team.
    pub team_id: Option<String>,
    /// Claiming agent.
    pub assignee_agent_id: Option<String>,
    /// Claiming runtime.
    pub assignee_runtime: Option<String>,
    /// Creation time.
    pub created_at: i64,
    /// Last update.
    pub updated_at: i64,
    /// Every dependency is `done` (or there is none).
    pub ready: bool,
    /// Some dependency is not `done`.
    pub blocked: bool,
    /// When a lease is recorded on the task, when it runs out.
    pub lease_expires_at: Option<i64>,
}

/// Which cards [`page`] returns; `None` fields do not filter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BoardQuery {
    /// Exactly this team.
    pub team_id: Option<String>,
    /// Exactly this status (as stored).
    pub status: Option<String>,
    /// Exactly this assignee.
    pub assignee_agent_id: Option<String>,
    /// A case-insensitive substring of the title.
    pub title_contains: Option<String>,
}

/// Where a page of cards ended: the last card's sort key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoardCursor {
    column: i64,
    priority: i64,
    created_at: i64,
    rowid: i64,
}

impl BoardCursor {
    /// The cursor as text.
    pub fn encode(self) -> String {
        format!(
            "{}.{}.{}.{}",
            self.column, self.priority, self.created_at, self.rowid
        )
    }

    /// Reads a cursor made by [`BoardCursor::encode`]; `None` for anything else.
    pub fn decode(text: &str) -> Option<Self> {
        let mut parts = text.split('.').map(|p| p.parse::<i64>().ok());
        let cursor = Self {
            column: parts.next()??,
            priority: parts.next()??,
            created_at: parts.next()??,
            rowid: parts.next()??,
        };
        parts.next().is_none().then_some(cursor)
    }
}

/// The sort key and the marks every card read selects (from `tasks` aliased `t`).
const CARD_SELECT: &str =
    "SELECT t.rowid AS rowid, t.id AS id, t.title AS title, t.status AS status,
        t.priority AS priority, t.team_id AS team_id, t.assignee_agent_id AS assignee_agent_id,
        t.assignee_runtime AS assignee_runtime, t.created_at AS created_at,
        t.updated_at AS updated_at, t.lease_expires_at AS lease_expires_at,
        CASE t.status WHEN 'backlog' THEN 0 WHEN 'todo' THEN 1 WHEN 'in_progress' THEN 2
             WHEN 'in_review' THEN 3 WHEN 'blocked' THEN 4 WHEN 'done' THEN 5
             WHEN 'cancelled' THEN 6 ELSE 7 END AS column_rank,
        EXISTS (SELECT 1 FROM task_deps d JOIN tasks dt ON dt.id = d.depends_on_task_id
                WHERE d.task_id = t.id AND dt.status != 'done') AS blocked
     FROM tasks t";

fn card_from_row(row: &Row<'_>) -> rusqlite::Result<(TaskCard, BoardCursor)> {
    let blocked: bool = row.get("blocked")?;
    let card = TaskCard {
        id: row.get("id")?,
        title: row.get("title")?,
        status: row.get("status")?,
        priority: row.get("priority")?,
        team_id: row.get("team_id")?,
        assignee_agent_id: row.get("assignee_agent_id")?,
        assignee_runtime: row.get("assignee_runtime")?,
        created_at: row.get("created_at")?,
        updated_at: row.get("updated_at")?,
        ready: !blocked,
        blocked,
        lease_expires_at: row.get("lease_expires_at")?,
    };
    let cursor = BoardCursor {
        column: row.get("column_rank")?,
        priority: card.priority,
        created_at: card.created_at,
        rowid: row.get("rowid")?,
    };
    Ok((card, cursor))
}

/// Up to `limit` cards matching `query` after `cursor`, in board order, and the next page's
/// cursor (`None` when no more match).
pub fn page(
    conn: &Connection,
    query: &BoardQuery,
    limit: u32,
    cursor: Option<BoardCursor>,
) -> Result<(Vec<TaskCard>, Option<BoardCursor>), BoardError> {
    let sql = format!(
        "SELECT * FROM ({CARD_SELECT}
           WHERE t.dropped = 0 AND (?1 IS NULL OR t.team_id = ?1) AND (?2 IS NULL OR t.status = ?2)
             AND (?3 IS NULL OR t.assignee_agent_id = ?3)
             AND (?4 IS NULL OR instr(lower(t.title), lower(?4)) > 0))
         WHERE ?5 IS NULL OR (column_rank, -priority, created_at, rowid) > (?5, ?6, ?7, ?8)
         ORDER BY column_rank, priority DESC, created_at, rowid
         LIMIT ?9"
    );
    let after = cursor.map(|c| (c.column, -c.priority, c.created_at, c.rowid));
    let mut rows = conn
        .prepare_cached(&sql)?
        .query_map(
            params![
                query.team_id,
                query.status,
                query.assignee_agent_id,
                query.title_contains,
                after.map(|a| a.0),
                after.map(|a| a.1),
                after.map(|a| a.2),
                after.map(|a| a.3),
                i64::from(limit) + 1
            ],
            card_from_row,
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let more = rows.len() > limit as usize;
    rows.truncate(limit as usize);
    let next = more.then(|| rows.last().map(|(_, c)| *c)).flatten();
    Ok((rows.into_iter().map(|(card, _)| card).collect(), next))
}

/// Every team that has live tasks, sorted.
pub fn teams(conn: &Connection) -> Result<Vec<String>, BoardError> {
    let rows = conn
        .prepare_cached(
            "SELECT DISTINCT team_id FROM tasks
             WHERE team_id IS NOT NULL AND dropped = 0 ORDER BY team_id",
        )?
        .query_map([], |r| r.get("team_id"))?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(rows)
}

/// The cards of the tasks `task_id` depends on, and of those that depend on it (dropped ones
/// included: a link to them still explains a block), each in board order.
pub fn links(
    conn: &Connection,
    task_id: &str,
) -> Result<(Vec<TaskCard>, Vec<TaskCard>), BoardError> {
    let read = |sql: &str| -> Result<Vec<TaskCard>, BoardError> {
        let sql = format!(
            "{CARD_SELECT} WHERE t.id IN ({sql})
             ORDER BY column_rank, t.priority DESC, t.created_at, t.rowid"
        );
        Ok(conn
            .prepare_cached(&sql)?
            .query_map([task_id], |r| card_from_row(r).map(|(card, _)| card))?
            .collect::<rusqlite::Result<Vec<_>>>()?)
    };
    Ok((
        read("SELECT depends_on_task_id FROM task_deps WHERE task_id = ?1")?,
        read("SELECT task_id FROM task_deps WHERE depends_on_task_id = ?1")?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{NewTask, Status, insert, link};
    use crate::db::Db;

    fn task(conn: &crate::db::Conn<'_>, title: &str, status: Status, priority: i64) -> String {
        insert(
            conn,
            &NewTask {
                title: title.into(),
                status: Some(status),
                priority: Some(priority),
                team_id: Some("t1".into()),
                ..NewTask::default()
            },
        )
        .unwrap()
        .id
    }

    #[test]
    fn cards_page_in_column_order_with_marks_and_filters() {
        let db = Db::open_in_memory().unwrap();
        let conn = db.conn();
        let done = task(&conn, "Done dep", Status::Done, 0);
        let open = task(&conn, "Open dep", Status::InProgress, 0);
        let low = task(&conn, "low todo", Status::Todo, 1);
        let high = task(&conn, "HIGH todo", Status::Todo, 9);
        let backlog = task(&conn, "idea", Status::Backlog, 0);
        link(&conn, &low, &done).unwrap();
        link(&conn, &high, &open).unwrap();
        let mut seen = Vec::new();
        let mut cursor = None;
        loop {
            let (cards, next) = page(&conn, &BoardQuery::default(), 2, cursor).unwrap();
            seen.extend(cards);
            match next {
                Some(n) => cursor = Some(BoardCursor::decode(&n.encode()).unwrap()),
                None => break,
            }
        }
        let ids: Vec<&str> = seen.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, [&backlog, &high, &low, &open, &done]);
        assert!(seen[1].blocked && !seen[1].ready);
        assert!(seen[2].ready && !seen[2].blocked);
        let query = BoardQuery {
            title_contains: Some("todo".into()),
            status: Some("todo".into()),
            ..BoardQuery::default()
        };
        let (cards, next) = page(&conn, &query, 10, None).unwrap();
        assert_eq!((cards.len(), next), (2, None));
        let (depends_on, dependents) = links(&conn, &open).unwrap();
        assert!(depends_on.is_empty());
        assert_eq!(dependents[0].id, high);
        assert_eq!(teams(&conn).unwrap(), ["t1"]);
        assert_eq!(BoardCursor::decode("1.2.3"), None);
    }
}
