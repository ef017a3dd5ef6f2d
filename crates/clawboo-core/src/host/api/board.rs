//! `/api/board*`: the board's cards (filters, paging), a task's detail, a person's comment.
//!
//! Must never: change a task but by adding a comment (authorType `user`, author = the caller).

use serde_json::{Value, json};

use super::{Answer, Call, Console, Refusal, created, cursor_json, not_found, ok, text_field};
use crate::board::{self, AuthorType, BoardCursor, BoardError, BoardQuery};
use crate::broker::actions::Action;
use crate::broker::operator;

fn board_failed(e: BoardError) -> Refusal {
    match e {
        BoardError::NotFound { id, .. } => not_found(format!("no task {id}")),
        other => super::failed(other),
    }
}

/// `GET /api/board?team=&status=&assignee=&q=&limit=&cursor=`.
pub fn list(console: &Console, call: &Call<'_>) -> Answer {
    let query = BoardQuery {
        team_id: call.param("team"),
        status: call.param("status"),
        assignee_agent_id: call.param("assignee"),
        title_contains: call.param("q"),
    };
    let cursor = call
        .param("cursor")
        .map(|text| BoardCursor::decode(&text).ok_or_else(super::foreign_cursor))
        .transpose()?;
    let limit = call.limit()?;
    let conn = console.db().conn();
    let (tasks, next) = board::page(&conn, &query, limit, cursor).map_err(board_failed)?;
    let teams = board::teams(&conn).map_err(board_failed)?;
    ok(json!({
        "teams": teams,
        "tasks": tasks,
        "nextCursor": cursor_json(next.map(BoardCursor::encode)),
    }))
}

/// `GET /api/board/:id`: the task, its comments, its links both ways and its ancestors.
pub fn detail(console: &Console, id: &str) -> Answer {
    let conn = console.db().conn();
    let task = board::get(&conn, id)
        .map_err(board_failed)?
        .ok_or_else(|| not_found(format!("no task {id}")))?;
    let comments = board::comments(&conn, id).map_err(board_failed)?;
    let (depends_on, dependents) = board::links(&conn, id).map_err(board_failed)?;
    let ancestors: Vec<Value> = board::ancestors(&conn, id)
        .map_err(board_failed)?
        .into_iter()
        .map(|a| json!({ "id": a.id, "title": a.title, "status": a.status }))
        .collect();
    let blocked = depends_on.iter().any(|d| d.status != "done");
    let mut task = serde_json::to_value(&task).map_err(super::failed)?;
    if let Value::Object(map) = &mut task {
        map.insert("blocked".into(), blocked.into());
        map.insert("ready".into(), (!blocked).into());
    }
    ok(json!({
        "task": task,
        "comments": comments,
        "dependsOn": depends_on,
        "dependents": dependents,
        "ancestors": ancestors,
    }))
}

/// `POST /api/board/:id/comments` `{ body }`: a comment by the caller (authorType `user`).
pub fn comment(console: &Console, call: &Call<'_>, id: &str) -> Answer {
    let body = text_field(&call.object()?, "body")?;
    let db = console.db();
    let comment = board::add_comment(&db.conn(), id, &body, Some(call.caller), AuthorType::User)
        .map_err(board_failed)?;
    operator::record_action(db, call.caller, Action::BoardComment, &format!("task {id}"))?;
    created(json!({ "comment": comment }))
}
