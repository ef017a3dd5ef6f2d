//! The operator console's REST routes (`/api/board*`, `/api/teamchat*`, `/api/memory*`,
//! `/api/operator/actions`), in seed 003's style: `{"ok": true, …}` (201 for a create), errors
//! `{"error": "…"}` naming the field (400), 404 for no such row, 415 for a mutation that is not
//! `application/json`; the contract is `docs/console-api.md`.
//!
//! Owns: [`Console`] (the console's store handles and its live feed), request parsing (paging,
//! filters, JSON bodies), the response shapes, and recording every human action
//! (`broker::actions`) under the caller's name (`super::caller`). One file per view: `board`,
//! `room`, `memory`, `ops` (operator actions and health).
//! Guarantees: every response body goes through the scrubber's JSON mask at the boundary
//! ([`mask`]), on top of the scrub-on-write of memory; path parts are
//! percent-decoded once; `limit` is 1..=200 (default 50); cursors are opaque and a foreign one is
//! a 400; SQL stays in the repositories (these routes call their typed queries).
//! Must never: answer a mutation without recording who made it; return a token.

mod board;
mod memory;
mod ops;
mod room;

use std::path::PathBuf;

use http::{Method, StatusCode};
use serde_json::Value;

use super::error;
use super::events::Feed;
use crate::db::{Db, Keyset};
use crate::mcp::http::{HttpResponse, json_response};
use crate::memory::Memory;
use crate::servers::Embeddings;

pub use ops::health;

/// The default page size.
pub const DEFAULT_LIMIT: u32 = 50;

/// The largest page size.
pub const MAX_LIMIT: u32 = 200;

/// What the console's routes read and write: the memory store (whose database handle every route
/// uses), and the host's one change feed.
#[derive(Debug)]
pub struct Console {
    memory: Memory,
    feed: Feed,
    db_path: PathBuf,
}

impl Console {
    /// Opens the console's handles on the file at `db_path` and starts the change feed.
    pub fn open(db_path: PathBuf, embeddings: &Embeddings) -> Result<Self, String> {
        let open = || Db::open(&db_path).map_err(|e| e.to_string());
        let memory = Memory::new(open()?, embeddings.embedder());
        let feed = Feed::start(open()?)?;
        Ok(Self {
            memory,
            feed,
            db_path,
        })
    }

    /// The database every route reads and writes.
    fn db(&self) -> &Db {
        self.memory.db()
    }

    /// The live feed (`/api/events`).
    pub fn feed(&self) -> &Feed {
        &self.feed
    }
}

/// One request to a console route.
#[derive(Debug)]
pub struct Call<'a> {
    /// The method.
    pub method: &'a Method,
    /// The path after `/api/`, split on `/`, each part percent-decoded once.
    pub parts: Vec<String>,
    /// The raw query string.
    pub query: Option<&'a str>,
    /// Whether the request says its body is `application/json`.
    pub json: bool,
    /// The body.
    pub body: &'a [u8],
    /// Who is calling (a token's name or "local operator").
    pub caller: &'a str,
}

impl Call<'_> {
    /// The query parameter `name`, when given and not blank.
    fn param(&self, name: &str) -> Option<String> {
        super::rest::query_value(self.query, name).filter(|v| !v.trim().is_empty())
    }

    /// `limit`: 1..=200, default 50 (over 200 reads as 200).
    fn limit(&self) -> Result<u32, Refusal> {
        self.limit_within(MAX_LIMIT)
    }

    fn limit_within(&self, max: u32) -> Result<u32, Refusal> {
        match self.param("limit") {
            None => Ok(DEFAULT_LIMIT.min(max)),
            Some(text) => match text.trim().parse::<u32>() {
                Ok(0) | Err(_) => Err(bad(format!(
                    "limit: expected a whole number from 1 to {max}, got {text:?}"
                ))),
                Ok(n) => Ok(n.min(max)),
            },
        }
    }

    /// A whole-number query parameter.
    fn number(&self, name: &str) -> Result<Option<i64>, Refusal> {
        self.param(name)
            .map(|text| {
                text.trim()
                    .parse::<i64>()
                    .map_err(|_| bad(format!("{name}: expected a whole number, got {text:?}")))
            })
            .transpose()
    }

    /// A `cursor` made by a [`Keyset`] page.
    fn keyset(&self) -> Result<Option<Keyset>, Refusal> {
        self.param("cursor")
            .map(|text| Keyset::decode(&text).ok_or_else(foreign_cursor))
            .transpose()
    }

    /// The body as a JSON object.
    fn object(&self) -> Result<serde_json::Map<String, Value>, Refusal> {
        match serde_json::from_slice::<Value>(self.body) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err(bad("body: expected a JSON object".into())),
            Err(e) => Err(bad(format!("body: not JSON: {e}"))),
        }
    }
}

/// A refused request: its status and message.
#[derive(Debug)]
pub struct Refusal {
    status: StatusCode,
    message: String,
}

/// A 400 naming the field.
fn bad(message: String) -> Refusal {
    Refusal {
        status: StatusCode::BAD_REQUEST,
        message,
    }
}

/// A 404.
fn not_found(message: String) -> Refusal {
    Refusal {
        status: StatusCode::NOT_FOUND,
        message,
    }
}

fn foreign_cursor() -> Refusal {
    bad("cursor: not a cursor this route gave (start again without it)".into())
}

/// A store error: a 500 that says so.
fn failed(e: impl std::fmt::Display) -> Refusal {
    Refusal {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        message: format!("database error: {e}"),
    }
}

impl From<rusqlite::Error> for Refusal {
    fn from(e: rusqlite::Error) -> Self {
        failed(e)
    }
}

impl From<crate::db::DbError> for Refusal {
    fn from(e: crate::db::DbError) -> Self {
        failed(e)
    }
}

/// A required, non-blank string field of a body.
fn text_field(body: &serde_json::Map<String, Value>, name: &str) -> Result<String, Refusal> {
    match body.get(name) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(Value::String(_)) | None => Err(bad(format!("{name}: required, a non-empty string"))),
        Some(other) => Err(bad(format!("{name}: expected a string, got {other}"))),
    }
}

/// What a route answers: a status and the fields beside `"ok": true`.
type Answer = Result<(StatusCode, Value), Refusal>;

/// Answers a console route (run on the blocking pool).
pub fn route(console: &Console, call: &Call<'_>) -> HttpResponse {
    let mutation = matches!(*call.method, Method::POST | Method::DELETE);
    let answer = if mutation && !call.json {
        Err(Refusal {
            status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
            message: "Content-Type: a change must be sent as application/json".into(),
        })
    } else {
        dispatch(console, call)
    };
    match answer {
        Ok((status, mut body)) => {
            if let Value::Object(map) = &mut body {
                map.insert("ok".into(), Value::Bool(true));
            }
            json_response(status, &mask(&body))
        }
        Err(refusal) => error(refusal.status, &refusal.message),
    }
}

fn dispatch(console: &Console, call: &Call<'_>) -> Answer {
    let parts: Vec<&str> = call.parts.iter().map(String::as_str).collect();
    match (call.method, parts.as_slice()) {
        (&Method::GET, ["board"]) => board::list(console, call),
        (&Method::GET, ["board", id]) => board::detail(console, id),
        (&Method::POST, ["board", id, "comments"]) => board::comment(console, call, id),
        (&Method::GET, ["teamchat"]) => room::rooms(console),
        (&Method::GET, ["teamchat", team]) => room::posts(console, call, team),
        (&Method::POST, ["teamchat", team]) => room::post(console, call, team),
        (&Method::GET, ["memory"]) => memory::list(console, call),
        (&Method::GET, ["memory", "search"]) => memory::search(console, call),
        (&Method::POST, ["memory"]) => memory::seed(console, call),
        (&Method::DELETE, ["memory", id]) => memory::delete(console, call, id),
        (&Method::GET, ["operator", "actions"]) => ops::actions(console, call),
        (method, _) => Err(not_found(format!(
            "no route for {method} /api/{}",
            call.parts.join("/")
        ))),
    }
}

/// `{…}` at 200.
fn ok(body: Value) -> Answer {
    Ok((StatusCode::OK, body))
}

/// `{…}` at 201.
fn created(body: Value) -> Answer {
    Ok((StatusCode::CREATED, body))
}

/// A cursor as the wire shows it (`null` at the end).
fn cursor_json(next: Option<String>) -> Value {
    next.map_or(Value::Null, Value::String)
}

/// `value` with every string (keys stay) passed through the scrubber: the mask at the boundary.
/// (Not [`crate::scrub::scrub_json`], which also blanks whole values under secret-looking keys:
/// the console's keys, `authorType` among them, are its own schema, never a secret's name.)
pub fn mask(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(crate::scrub::scrub_secrets(s)),
        Value::Array(items) => Value::Array(items.iter().map(mask).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), mask(v))).collect())
        }
        other => other.clone(),
    }
}

/// Whether `path` is one of the console's REST routes.
pub fn owns(path: &str) -> bool {
    [
        "/api/board",
        "/api/teamchat",
        "/api/memory",
        "/api/operator/",
    ]
    .iter()
    .any(|prefix| {
        path.strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/') || prefix.ends_with('/'))
    })
}

/// The parts of `path` after `/api/`, each percent-decoded once.
pub fn parts(path: &str) -> Vec<String> {
    path.trim_start_matches("/api/")
        .split('/')
        .map(crate::binding::path_decode)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_parts_are_decoded_once_and_routes_are_owned_by_prefix() {
        assert_eq!(parts("/api/teamchat/t%2F1"), ["teamchat", "t/1"]);
        assert_eq!(parts("/api/board/a%252F"), ["board", "a%2F"]);
        assert!(owns("/api/board") && owns("/api/board/x") && owns("/api/operator/actions"));
        assert!(!owns("/api/boards") && !owns("/api/tools") && !owns("/api/memoryx"));
    }
}
