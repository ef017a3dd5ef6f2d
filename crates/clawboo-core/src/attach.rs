//! Attach snippets: how a person plugs one of the four servers into Claude Code, Codex or
//! OpenClaw, as a copy-pasteable snippet and its structured form.
//!
//! Owns: the HTTP URL of the reference's `/api/mcp/<server>` mount and the exact shape each
//! runtime's config expects. The binding it writes (environment for stdio, query for HTTP) comes
//! from [`crate::binding`], the module the servers read it with, so a bound attach is exactly the
//! binding the server sees and the model cannot change it.
//!
//! Guarantees: a pure function of its inputs; every value is quoted for where it lands (shell words
//! for `claude mcp add`, TOML basic strings for Codex, JSON strings for OpenClaw and the structured
//! forms), so paths with spaces or quotes survive — the reference interpolates them raw.
//! Decisions: stdio runs the native bin directly (`command` = the bin, `args` = `[]`); the Codex
//! header names `~/.codex/config.toml` for both transports; the HTTP URL carries the binding as query
//! parameters like the reference and, given the install's binding key, a signature `sig` over them
//! (what `serve` requires by default).
//!
//! Must never: read the environment or the file system.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::binding::{Binding, DB_PATH_ENV, Scope, ServerKind, UnknownName, given};
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

/// How the runtime reaches the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// The runtime spawns the bin and speaks over its stdin/stdout.
    Stdio,
    /// The runtime connects to a Streamable HTTP endpoint.
    Http,
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
named!(Transport, "transport", "stdio, http", Stdio => "stdio", Http => "http");

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

/// The reference's HTTP address of `server`: `<base>/api/mcp/<server>` (one trailing `/` of the
/// base dropped), with the server's binding as query parameters ([`Binding::to_query`]).
pub fn http_url(base: &str, server: ServerKind, scope: &Scope) -> String {
    let base = base.strip_suffix('/').unwrap_or(base);
    let url = format!("{base}/api/mcp/{server}");
    let query = Binding::from_scope(server, scope).to_query();
    if query.is_empty() {
        url
    } else {
        format!("{url}?{query}")
    }
}

/// [`http_url`] with the signature of its binding appended (`&sig=<hex>`) when it carries one.
pub fn signed_http_url(base: &str, server: ServerKind, scope: &Scope, key: &BindingKey) -> String {
    let url = http_url(base, server, scope);
    let binding = Binding::from_scope(server, scope);
    if binding.is_unbound() {
        return url;
    }
    format!("{url}&{SIG_PARAM}={}", key.sign(Signed::of(&binding)))
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
            if let Some(db) = given(request.db_path.as_deref()) {
                env.push((DB_PATH_ENV, db));
            }
            env.extend(Binding::from_scope(request.server, &request.scope).env_pairs());
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
