//! `/api/teamchat*`: the rooms, a page of one room's posts, a person's post.
//!
//! Decision: a person's post has kind `user` and the caller's name as its author; agents still
//! read it inside the peer envelope (`kind=user`, `isUser=false`): narration from the room, never
//! a turn with user authority. Must never: post in a room other than `team:<team>`.

use serde_json::json;

use super::{Answer, Call, Console, bad, created, ok, text_field};
use crate::broker::actions::Action;
use crate::broker::operator;
use crate::teamchat::{self, NewPost, PostKind, room_for_team};

/// `GET /api/teamchat`: every team's room.
pub fn rooms(console: &Console) -> Answer {
    let teams = teamchat::rooms(&console.db().conn())?;
    ok(json!({ "teams": teams }))
}

/// `GET /api/teamchat/:team?sinceSeq=&beforeSeq=&limit=`: posts seq ascending.
pub fn posts(console: &Console, call: &Call<'_>, team: &str) -> Answer {
    let since = call.number("sinceSeq")?;
    let before = call.number("beforeSeq")?;
    let limit = call.limit()?;
    let posts = teamchat::room_page(&console.db().conn(), team, since, before, limit)?;
    let next_seq = posts.last().map_or(since.unwrap_or(0), |p| p.seq);
    ok(json!({ "teamId": team, "posts": posts, "nextSeq": next_seq }))
}

/// `POST /api/teamchat/:team` `{ body }`: a post by the caller, kind `user`.
pub fn post(console: &Console, call: &Call<'_>, team: &str) -> Answer {
    if team.trim().is_empty() {
        return Err(bad("team: required in the path".into()));
    }
    let body = text_field(&call.object()?, "body")?;
    let db = console.db();
    let room = room_for_team(team);
    let post = teamchat::post(
        &db.conn(),
        &NewPost {
            room_id: &room,
            team_id: team,
            author_agent_id: call.caller,
            body: &body,
            kind: PostKind::User,
        },
    )?;
    operator::record_action(
        db,
        call.caller,
        Action::TeamchatPost,
        &format!("team {team}"),
    )?;
    created(json!({ "post": post }))
}
