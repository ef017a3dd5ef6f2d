//! Attach snippets: how a person plugs one of the four servers into Claude Code, Codex or
//! OpenClaw, as a copy-pasteable snippet and its structured form.
//!
//! Owns: the server ids (`clawboo-<server>`), the binding variables each server reads (so a bound
//! stdio attach is possible: the model cannot change its server's environment), the HTTP URL of the
//! reference's `/api/mcp/<server>` mount, and the exact shape each runtime's config expects.
//!
//! Guarantees: a pure function of its inputs; every value is quoted for where it lands (shell words
//! for `claude mcp add`, TOML basic strings for Codex, JSON strings for OpenClaw and the structured
//! forms), so paths with spaces or quotes survive — the reference interpolates them raw.
//! Decisions: stdio runs the native bin directly (`command` = the bin, `args` = `[]`); the Codex
//! header names `~/.codex/config.toml` for both transports; the HTTP URL carries the scope as query
//! parameters like the reference and, given the install's binding key, a signature `sig` over them
//! (what `serve` requires by default).
//!
//! Must never: read the environment or the file system.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::signature::{BindingKey, SIG_PARAM, Signed};

/// The HTTP base used when none is given (the reference's web server).
pub const DEFAULT_HTTP_BASE: &str = "http://localhost:18790";

/// A client runtime that can attach an MCP server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    /// Anthropic's Claude Code (`claude mcp add`, `.mcp.json`).
    ClaudeCode,
    /// OpenAI's Codex CLI (`config.toml`).
    Codex,
    /// OpenClaw (`openclaw.json` → `mcp.servers`).
    OpenClaw,
}

/// One of the four servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerKind {
    /// The kanban board.
    Tasks,
    /// Facts and procedures.
    Memory,
    /// The tool broker.
    Tools,
    /// The team room.
    Teamchat,
}

/// How the runtime reaches the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// The runtime spawns the bin and speaks over its stdin/stdout.
    Stdio,
    /// The runtime connects to a Streamable HTTP endpoint.
    Http,
}

/// An error in the words a person typed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {given:?}; expected one of: {expected}")]
pub struct UnknownName {
    what: &'static str,
    given: String,
    expected: &'static str,
}

macro_rules! named {
    ($ty:ident, $what:literal, $expected:literal, $($variant:ident => $name:literal),+) => {
        impl $ty {
            /// The name as typed on the command line.
            pub fn as_str(self) -> &'static str {
                match self { $($ty::$variant => $name),+ }
            }
        }
        impl FromStr for $ty {
            type Err = UnknownName;
            fn from_str(s: &str) -> Result<Self, UnknownName> {
                match s {
                    $($name => Ok($ty::$variant),)+
                    _ => Err(UnknownName { what: $what, given: s.to_owned(), expected: $expected }),
                }
            }
        }
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

named!(Runtime, "runtime", "claude-code, codex, openclaw",
    ClaudeCode => "claude-code", Codex => "codex", OpenClaw => "openclaw");
named!(ServerKind, "server", "tasks, memory, tools, teamchat",
    Tasks => "tasks", Memory => "memory", Tools => "tools", Teamchat => "teamchat");
named!(Transport, "transport", "stdio, http", Stdio => "stdio", Http => "http");

impl ServerKind {
    /// The four servers, in the reference's order.
    pub const ALL: [ServerKind; 4] = [
        ServerKind::Tasks,
        ServerKind::Memory,
        ServerKind::Tools,
        ServerKind::Teamchat,
    ];

    /// The id a runtime knows the server by: `clawboo-<server>`.
    pub fn id(self) -> String {
        format!("clawboo-{self}")
    }

    /// The server whose bin is named `bin` (`clawboo-mcp-<server>`), if any.
    pub fn from_bin(bin: &str) -> Option<Self> {
        bin.strip_prefix("clawboo-mcp-")?.parse().ok()
    }
}

/// Who the attached session is bound to. Blank values count as unset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// The team.
    pub team_id: Option<String>,
    /// The agent.
    pub agent_id: Option<String>,
    /// The tenant (memory only).
    pub tenant_id: Option<String>,
}

/// What to attach, where, and how.
#[derive(Debug, Clone)]
pub struct AttachRequest {
    /// The client runtime.
    pub runtime: Runtime,
    /// The server.
    pub server: ServerKind,
    /// The transport.
    pub transport: Transport,
    /// The bin the runtime spawns (stdio).
    pub bin_path: String,
    /// The database file the server opens (stdio); `None` leaves the server's default.
    pub db_path: Option<String>,
    /// The web server's base URL (http); `None` means [`DEFAULT_HTTP_BASE`].
    pub http_base: Option<String>,
    /// The binding.
    pub scope: Scope,
    /// The install's binding key: HTTP URLs carrying a binding are signed with it.
    pub binding_key: Option<BindingKey>,
}

/// A generated attach config: the snippet to paste and the same thing as data.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttachConfig {
    /// `clawboo-<server>`.
    pub id: String,
    /// The transport.
    pub transport: Transport,
    /// Lines to paste, joined with `\n`.
    pub snippet: String,
    /// The structured form (what the runtime's config file holds).
    pub structured: Value,
}

/// The binding variables `server` reads over stdio for `scope`, in a stable order. Tasks binds a
/// team; memory a team, agent and tenant; teamchat a room (team) and author (agent), and only when
/// both are given; tools an agent (its `allow_always` memory).
pub fn binding_env(server: ServerKind, scope: &Scope) -> Vec<(&'static str, String)> {
    let (team, agent, tenant) = (
        non_blank(&scope.team_id),
        non_blank(&scope.agent_id),
        non_blank(&scope.tenant_id),
    );
    let pairs: Vec<(&'static str, Option<&str>)> = match server {
        ServerKind::Tasks => vec![("CLAWBOO_SCOPE_TEAM_ID", team)],
        ServerKind::Memory => vec![
            ("CLAWBOO_SCOPE_TEAM_ID", team),
            ("CLAWBOO_SCOPE_AGENT_ID", agent),
            ("CLAWBOO_SCOPE_TENANT_ID", tenant),
        ],
        ServerKind::Tools => vec![
            ("CLAWBOO_SCOPE_AGENT_ID", agent),
            ("CLAWBOO_SCOPE_TENANT_ID", tenant),
        ],
        ServerKind::Teamchat if team.is_some() && agent.is_some() => vec![
            ("CLAWBOO_ROOM_TEAM_ID", team),
            ("CLAWBOO_AUTHOR_AGENT_ID", agent),
        ],
        ServerKind::Teamchat => vec![],
    };
    pairs
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v.to_owned())))
        .collect()
}

fn non_blank(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

/// The reference's HTTP address of `server`: `<base>/api/mcp/<server>` (one trailing `/` of the
/// base dropped), with the scope as query parameters (none for `tools`).
pub fn http_url(base: &str, server: ServerKind, scope: &Scope) -> String {
    let base = base.strip_suffix('/').unwrap_or(base);
    let url = format!("{base}/api/mcp/{server}");
    let (team, agent) = (non_blank(&scope.team_id), non_blank(&scope.agent_id));
    let params: Vec<(&str, Option<&str>)> = match server {
        ServerKind::Memory => vec![
            ("scopeTeamId", team),
            ("scopeAgentId", agent),
            ("scopeTenantId", non_blank(&scope.tenant_id)),
        ],
        ServerKind::Tasks => vec![("scopeTeamId", team), ("scopeAgentId", agent)],
        ServerKind::Teamchat => vec![("roomTeamId", team), ("postAuthorAgentId", agent)],
        ServerKind::Tools => vec![],
    };
    let query: Vec<String> = params
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| format!("{k}={}", form_encode(v))))
        .collect();
    if query.is_empty() {
        url
    } else {
        format!("{url}?{}", query.join("&"))
    }
}

/// [`http_url`] with the signature of its binding appended (`&sig=<hex>`) when it carries one:
/// tasks signs team and agent, memory team, agent and tenant, teamchat room team and author.
pub fn signed_http_url(base: &str, server: ServerKind, scope: &Scope, key: &BindingKey) -> String {
    let url = http_url(base, server, scope);
    if !url.contains('?') {
        return url;
    }
    let tenant = match server {
        ServerKind::Memory => non_blank(&scope.tenant_id).unwrap_or_default(),
        _ => "",
    };
    let sig = key.sign(Signed {
        team: non_blank(&scope.team_id).unwrap_or_default(),
        agent: non_blank(&scope.agent_id).unwrap_or_default(),
        tenant,
    });
    format!("{url}&{SIG_PARAM}={sig}")
}

/// `application/x-www-form-urlencoded` encoding of one value (space → `+`).
fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => {
                out.push(byte as char)
            }
            b' ' => out.push('+'),
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}

/// Builds the attach config for `request`.
pub fn attach_config(request: &AttachRequest) -> AttachConfig {
    let id = request.server.id();
    let (snippet, structured) = match request.transport {
        Transport::Http => {
            let base = request.http_base.as_deref().unwrap_or(DEFAULT_HTTP_BASE);
            http_snippet(
                request.runtime,
                &id,
                &match &request.binding_key {
                    Some(key) => signed_http_url(base, request.server, &request.scope, key),
                    None => http_url(base, request.server, &request.scope),
                },
            )
        }
        Transport::Stdio => {
            let mut env: Vec<(&str, String)> = Vec::new();
            if let Some(db) = request.db_path.as_deref().filter(|d| !d.trim().is_empty()) {
                env.push(("CLAWBOO_DB_PATH", db.to_owned()));
            }
            env.extend(binding_env(request.server, &request.scope));
            stdio_snippet(request.runtime, &id, &request.bin_path, &env)
        }
    };
    AttachConfig {
        id,
        transport: request.transport,
        snippet,
        structured,
    }
}

fn http_snippet(runtime: Runtime, id: &str, url: &str) -> (String, Value) {
    match runtime {
        Runtime::ClaudeCode => (
            format!("claude mcp add --transport http {id} {}", shell_word(url)),
            json!({ id: { "type": "http", "url": url } }),
        ),
        Runtime::Codex => (
            format!(
                "# ~/.codex/config.toml\n[mcp_servers.{id}]\nurl = {}",
                toml_string(url)
            ),
            json!({ "mcp_servers": { id: { "url": url } } }),
        ),
        Runtime::OpenClaw => (
            format!(
                "# openclaw.json \u{2192} mcp.servers\n{}: {{ \"url\": {}, \"transport\": \"streamable-http\" }}",
                json_string(id),
                json_string(url)
            ),
            json!({ "url": url }),
        ),
    }
}

fn stdio_snippet(runtime: Runtime, id: &str, bin: &str, env: &[(&str, String)]) -> (String, Value) {
    let env_object: Map<String, Value> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Value::String(v.clone())))
        .collect();
    let mut server = json!({ "command": bin, "args": [] });
    if !env.is_empty() {
        server["env"] = Value::Object(env_object);
    }
    match runtime {
        Runtime::ClaudeCode => {
            let flags: String = env
                .iter()
                .map(|(k, v)| format!(" -e {}", shell_word(&format!("{k}={v}"))))
                .collect();
            let mut structured = json!({ "type": "stdio" });
            if let (Some(target), Some(source)) = (structured.as_object_mut(), server.as_object()) {
                target.extend(source.clone());
            }
            (
                format!("claude mcp add {id}{flags} -- {}", shell_word(bin)),
                json!({ id: structured }),
            )
        }
        Runtime::Codex => {
            let mut lines = vec![
                "# ~/.codex/config.toml".to_owned(),
                format!("[mcp_servers.{id}]"),
                format!("command = {}", toml_string(bin)),
                "args = []".to_owned(),
            ];
            if !env.is_empty() {
                let pairs: Vec<String> = env
                    .iter()
                    .map(|(k, v)| format!("{k} = {}", toml_string(v)))
                    .collect();
                lines.push(format!("env = {{ {} }}", pairs.join(", ")));
            }
            (lines.join("\n"), json!({ "mcp_servers": { id: server } }))
        }
        Runtime::OpenClaw => {
            let mut member = format!(
                "{}: {{ \"command\": {}, \"args\": []",
                json_string(id),
                json_string(bin)
            );
            if !env.is_empty() {
                let pairs: Vec<String> = env
                    .iter()
                    .map(|(k, v)| format!("{}: {}", json_string(k), json_string(v)))
                    .collect();
                member.push_str(&format!(", \"env\": {{ {} }}", pairs.join(", ")));
            }
            member.push_str(" }");
            (
                format!("# openclaw.json \u{2192} mcp.servers\n{member}"),
                server,
            )
        }
    }
}

/// `text` as one POSIX shell word: bare when it is made of safe characters, else single-quoted.
fn shell_word(text: &str) -> String {
    let safe = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_@%+=:,./-".contains(&b));
    if safe {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// `text` as a JSON string literal (quotes included).
fn json_string(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

/// `text` as a TOML basic string (quotes included).
fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests;
