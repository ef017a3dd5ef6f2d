//! Attach snippets: how a person plugs one of the four servers into Claude Code, Codex or
//! OpenClaw, as a copy-pasteable snippet and its structured form.
//!
//! Owns: the HTTP URL of the reference's `/api/mcp/<server>` mount and the exact shape each
//! runtime's config expects. The binding it writes (environment for stdio, query for HTTP) comes
//! from [`crate::binding`], the module the servers read it with, so a bound attach is exactly the
//! binding the server sees and the model cannot change it.
//!
//! Guarantees: a pure function of its inputs; every value is quoted for where it lands (shell words
//! for `claude mcp add` and `openclaw mcp set`, TOML basic strings for Codex, JSON strings for
//! OpenClaw and the structured forms), so paths with spaces or quotes survive — the reference
//! interpolates them raw. Every snippet is valid as pasted whole into the file it names: the Codex
//! one is a TOML table whose header comment is a TOML `#` comment; the OpenClaw one is a member of
//! `mcp.servers` in `openclaw.json`, which OpenClaw reads as JSON5, so its comment lines are `//`
//! (a `#` line makes OpenClaw refuse the whole file).
//! Decisions: stdio runs the native bin directly (`command` = the bin, `args` = the arguments that
//! select the server on it: `[]` for a bin's own server, `["clawbrain"]` for ClawBrain); the Codex
//! header names `~/.codex/config.toml` for both transports; the HTTP URL carries the binding as query
//! parameters like the reference and, given the install's binding key, a signature `sig` over them
//! (what `serve` requires by default). OpenClaw's snippet also offers, in a comment, the same entry
//! as one `openclaw mcp set <id> '<json>'` command (also [`AttachConfig::command`]). Codex's entry
//! carries `default_tools_approval_mode = "approve"` only when asked ([`AttachRequest::auto_approve`]):
//! under `approval_policy = "never"` (`codex exec`, CI) Codex refuses every MCP call without it,
//! but it also lets an interactive session call every tool of the server without asking.
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
    /// Codex only: let the runtime call this server's tools without asking
    /// (`default_tools_approval_mode = "approve"`), which `codex exec` needs.
    pub auto_approve: bool,
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
    /// The same entry as one shell command that installs it, where the runtime has one that takes
    /// the whole entry (`claude mcp add …`, `openclaw mcp set …`); `None` for Codex.
    pub command: Option<String>,
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
    let entry = match request.transport {
        Transport::Http => {
            let base = request.http_base.as_deref().unwrap_or(DEFAULT_HTTP_BASE);
            Entry::Http(match &request.binding_key {
                Some(key) => signed_http_url(base, request.server, &request.scope, key),
                None => http_url(base, request.server, &request.scope),
            })
        }
        Transport::Stdio => {
            let mut env: Vec<(&str, String)> = Vec::new();
            if let Some(db) = given(request.db_path.as_deref()) {
                env.push((DB_PATH_ENV, db));
            }
            env.extend(Binding::from_scope(request.server, &request.scope).env_pairs());
            Entry::Stdio {
                bin: &request.bin_path,
                args: request.server.mode_args(),
                env,
            }
        }
    };
    let auto_approve = request.auto_approve && request.runtime == Runtime::Codex;
    let (snippet, structured, command) = match request.runtime {
        Runtime::ClaudeCode => claude_code(&id, &entry),
        Runtime::Codex => codex(&id, &entry, auto_approve),
        Runtime::OpenClaw => openclaw(&id, &entry),
    };
    AttachConfig {
        id,
        transport: request.transport,
        snippet,
        structured,
        command,
    }
}

/// What the runtime is told to reach: a bin with its environment, or a URL.
enum Entry<'a> {
    Stdio {
        bin: &'a str,
        args: &'static [&'static str],
        env: Vec<(&'static str, String)>,
    },
    Http(String),
}

impl Entry<'_> {
    /// The entry as the JSON object OpenClaw and Codex hold: `command`, `args`, `env` (when any)
    /// for stdio; `url` for HTTP.
    fn server_object(&self) -> Map<String, Value> {
        let mut server = Map::new();
        match self {
            Entry::Stdio { bin, args, env } => {
                server.insert("command".into(), json!(bin));
                server.insert("args".into(), json!(args));
                if !env.is_empty() {
                    let vars = env
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), Value::String(v.clone())))
                        .collect();
                    server.insert("env".into(), Value::Object(vars));
                }
            }
            Entry::Http(url) => {
                server.insert("url".into(), json!(url));
            }
        }
        server
    }
}

/// `claude mcp add …` (one shell command) and the `.mcp.json` / `claude mcp add-json` object.
fn claude_code(id: &str, entry: &Entry) -> (String, Value, Option<String>) {
    let (kind, snippet) = match entry {
        Entry::Stdio { bin, args, env } => {
            let flags: String = env
                .iter()
                .map(|(k, v)| format!(" -e {}", shell_word(&format!("{k}={v}"))))
                .collect();
            let words: String = args.iter().map(|a| format!(" {}", shell_word(a))).collect();
            (
                "stdio",
                format!("claude mcp add {id}{flags} -- {}{words}", shell_word(bin)),
            )
        }
        Entry::Http(url) => (
            "http",
            format!("claude mcp add --transport http {id} {}", shell_word(url)),
        ),
    };
    let mut server = Map::new();
    server.insert("type".into(), json!(kind));
    server.extend(entry.server_object());
    (snippet.clone(), json!({ id: server }), Some(snippet))
}

/// A `[mcp_servers.<id>]` table of `~/.codex/config.toml`.
fn codex(id: &str, entry: &Entry, auto_approve: bool) -> (String, Value, Option<String>) {
    let mut lines = vec![
        "# ~/.codex/config.toml".to_owned(),
        format!("[mcp_servers.{id}]"),
    ];
    match entry {
        Entry::Stdio { bin, args, env } => {
            lines.push(format!("command = {}", toml_string(bin)));
            let args: Vec<String> = args.iter().map(|a| toml_string(a)).collect();
            lines.push(format!("args = [{}]", args.join(", ")));
            if !env.is_empty() {
                let pairs: Vec<String> = env
                    .iter()
                    .map(|(k, v)| format!("{k} = {}", toml_string(v)))
                    .collect();
                lines.push(format!("env = {{ {} }}", pairs.join(", ")));
            }
        }
        Entry::Http(url) => lines.push(format!("url = {}", toml_string(url))),
    }
    let mut server = entry.server_object();
    if auto_approve {
        lines.push(format!("{CODEX_APPROVE_KEY} = \"approve\""));
        server.insert(CODEX_APPROVE_KEY.into(), json!("approve"));
    }
    (
        lines.join("\n"),
        json!({ "mcp_servers": { id: server } }),
        None,
    )
}

/// The Codex entry key that lets the runtime call the server's tools without asking.
const CODEX_APPROVE_KEY: &str = "default_tools_approval_mode";

/// A member of `mcp.servers` in `openclaw.json` (JSON5: `//` comments), with the same entry as an
/// `openclaw mcp set` command in a comment line.
fn openclaw(id: &str, entry: &Entry) -> (String, Value, Option<String>) {
    let mut server = entry.server_object();
    if matches!(entry, Entry::Http(_)) {
        server.insert("transport".into(), json!("streamable-http"));
    }
    let members: Vec<String> = server
        .iter()
        .map(|(k, v)| format!("{}: {}", json_string(k), json_member_value(v)))
        .collect();
    let value = Value::Object(server);
    let command = format!(
        "openclaw mcp set {} {}",
        shell_word(id),
        shell_word(&json_text(&value))
    );
    let snippet = format!(
        "// openclaw.json \u{2192} mcp.servers (or run the command on the next line instead)\n\
         // {command}\n{}: {{ {} }}",
        json_string(id),
        members.join(", ")
    );
    (snippet, value, Some(command))
}

/// A JSON value on one line, objects with `{ "k": v }` spacing so a snippet reads like the file.
fn json_member_value(value: &Value) -> String {
    match value {
        Value::Object(map) if !map.is_empty() => {
            let pairs: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", json_string(k), json_member_value(v)))
                .collect();
            format!("{{ {} }}", pairs.join(", "))
        }
        other => json_text(other),
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
    json_text(&Value::String(text.to_owned()))
}

/// `value` as compact JSON that is also safe on one JSON5 line: JSON5 ends a line (and so a `//`
/// comment) at U+2028 / U+2029, which JSON leaves raw inside strings, so they are escaped.
fn json_text(value: &Value) -> String {
    value
        .to_string()
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
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
