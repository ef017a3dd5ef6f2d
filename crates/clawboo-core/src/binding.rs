//! Bindings: who a session works for, as set by whoever started it — never by the model.
//!
//! Owns: the server kinds (the key of the registry of servers, `servers::registry`, which says
//! everything else about each), the names of every binding variable (environment, for stdio) and
//! URL query parameter (for Streamable HTTP), which of them each kind reads, the one rule for blank
//! values ([`given`]), and one binding type per server, read from the environment or a URL query
//! and written back for `attach` (environment pairs for a spawned bin, query pairs for an HTTP URL).
//!
//! Why the kinds live here and not in the registry: this module and `attach` are leaves, read by
//! every layer, and a session's binding is a leaf fact; building a server is not. So a kind's short
//! name, its binding fields and the arguments that select it on its bin are here (every `match`
//! is exhaustive, so the compiler names each line a new kind needs), and its registry entry holds
//! the rest.
//!
//! Guarantees: a binding read from the environment and the same binding read from the URL that
//! `attach` writes are equal (one table of [`Field`]s serves both directions); blank means unset
//! everywhere, with the reference's `String.prototype.trim` (Unicode white space and the byte-order
//! mark); teamchat binds only when both its room team and its author are given, as the reference
//! does; each server reads exactly the fields it lists in [`ServerKind::fields`], over both
//! transports.
//!
//! Decisions: the reference's URLs bind only memory and teamchat; ours bind tasks (a team) and
//! tools (the agent and tenant its audit rows and `allow_always` grants name) too, with the same
//! names the stdio environment uses, so an unbound URL is byte-for-byte the reference's.
//!
//! Must never: know what a server does with its binding (servers turn bindings into scopes), or
//! read anything but the variables and parameters named here.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

/// The variable naming the shared SQLite file (blank means the default path).
pub const DB_PATH_ENV: &str = "CLAWBOO_DB_PATH";

/// One binding value: its environment variable (stdio) and its URL query parameter (HTTP).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Field {
    /// The environment variable a spawned bin reads.
    pub env: &'static str,
    /// The query parameter of the `initialize` URL an HTTP session reads.
    pub param: &'static str,
}

/// The team a tasks or memory session is bound to.
pub const SCOPE_TEAM: Field = Field {
    env: "CLAWBOO_SCOPE_TEAM_ID",
    param: "scopeTeamId",
};
/// The agent a memory session reads as, or the agent a tools session calls as.
pub const SCOPE_AGENT: Field = Field {
    env: "CLAWBOO_SCOPE_AGENT_ID",
    param: "scopeAgentId",
};
/// The tenant of a memory or tools session.
pub const SCOPE_TENANT: Field = Field {
    env: "CLAWBOO_SCOPE_TENANT_ID",
    param: "scopeTenantId",
};
/// The team whose room (`team:<id>`) a teamchat session posts to and reads.
pub const ROOM_TEAM: Field = Field {
    env: "CLAWBOO_ROOM_TEAM_ID",
    param: "roomTeamId",
};
/// The author of every post of a teamchat session.
pub const AUTHOR_AGENT: Field = Field {
    env: "CLAWBOO_AUTHOR_AGENT_ID",
    param: "postAuthorAgentId",
};

/// `raw` with the reference's trim (Unicode white space and the byte-order mark); `None` when
/// nothing is left. The one "blank means unset" rule of the project.
pub fn given(raw: Option<&str>) -> Option<String> {
    raw.map(js_trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

/// `text` trimmed as JavaScript's `String.prototype.trim` does.
pub fn js_trim(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || c == '\u{FEFF}')
}

/// The value of the environment variable `name` under the one blank rule.
pub fn env_value(name: &str) -> Option<String> {
    given(std::env::var(name).ok().as_deref())
}

/// A name typed by a person that is not one of the expected ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {given:?}; expected one of: {expected}")]
pub struct UnknownName {
    /// What kind of name it was (`server`, `runtime`, …).
    pub what: &'static str,
    /// What was typed.
    pub given: String,
    /// The accepted names, comma-separated.
    pub expected: &'static str,
}

/// One of the servers: the four over the shared database, and ClawBrain over its vault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ServerKind {
    /// The kanban board.
    Tasks,
    /// Facts and procedures.
    Memory,
    /// The tool broker.
    Tools,
    /// The team room.
    Teamchat,
    /// The credit-weighted markdown vault (seed 002), served by `clawboo-mcp-memory clawbrain`.
    ClawBrain,
}

impl ServerKind {
    /// Every server: the reference's four in its order, then ClawBrain.
    pub const ALL: [ServerKind; 5] = [
        ServerKind::Tasks,
        ServerKind::Memory,
        ServerKind::Tools,
        ServerKind::Teamchat,
        ServerKind::ClawBrain,
    ];

    /// The short name: `tasks`, `memory`, `tools`, `teamchat`, `clawbrain` (also the HTTP mount's
    /// last segment).
    pub const fn as_str(self) -> &'static str {
        match self {
            ServerKind::Tasks => "tasks",
            ServerKind::Memory => "memory",
            ServerKind::Tools => "tools",
            ServerKind::Teamchat => "teamchat",
            ServerKind::ClawBrain => "clawbrain",
        }
    }

    /// The arguments that make a bin serve this kind over stdio: none for a bin's own server,
    /// `clawbrain` for ClawBrain (its bin is `clawboo-mcp-memory`).
    pub(crate) const fn mode_args(self) -> &'static [&'static str] {
        match self {
            ServerKind::ClawBrain => &["clawbrain"],
            _ => &[],
        }
    }

    /// The id a runtime knows the server by: `clawboo-<server>`.
    pub fn id(self) -> String {
        format!("clawboo-{self}")
    }

    /// The binding fields this server reads, in the order they are written.
    pub(crate) fn fields(self) -> &'static [Field] {
        match self {
            ServerKind::Tasks => &[SCOPE_TEAM],
            ServerKind::Memory => &[SCOPE_TEAM, SCOPE_AGENT, SCOPE_TENANT],
            ServerKind::Tools => &[SCOPE_AGENT, SCOPE_TENANT],
            ServerKind::Teamchat => &[ROOM_TEAM, AUTHOR_AGENT],
            // The vault is the host's, never a session's: nothing to bind.
            ServerKind::ClawBrain => &[],
        }
    }

    /// The short names, comma-separated (what an unknown name is told to choose from).
    fn names() -> &'static str {
        static NAMES: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        NAMES.get_or_init(|| ServerKind::ALL.map(ServerKind::as_str).join(", "))
    }
}

impl FromStr for ServerKind {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        ServerKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == s)
            .ok_or_else(|| UnknownName {
                what: "server",
                given: s.to_owned(),
                expected: ServerKind::names(),
            })
    }
}

impl fmt::Display for ServerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who a session is bound to, as a person types it (`attach --team/--agent/--tenant`): the raw
/// material every server takes its own fields from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// The team (the room's team for teamchat).
    pub team_id: Option<String>,
    /// The agent (the author for teamchat).
    pub agent_id: Option<String>,
    /// The tenant.
    pub tenant_id: Option<String>,
}

impl Scope {
    fn value(&self, field: Field) -> Option<&str> {
        match field {
            SCOPE_TEAM | ROOM_TEAM => self.team_id.as_deref(),
            SCOPE_AGENT | AUTHOR_AGENT => self.agent_id.as_deref(),
            _ => self.tenant_id.as_deref(),
        }
    }
}

/// The binding of one server: the non-blank values of its fields. Teamchat's is empty unless
/// both of its fields are given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    server: ServerKind,
    values: Vec<(Field, String)>,
    token_name: Option<String>,
}

impl Binding {
    /// `server`'s binding as `lookup` gives its fields (raw values; the blank rule is applied here).
    pub(crate) fn read(server: ServerKind, lookup: impl Fn(Field) -> Option<String>) -> Self {
        let mut values: Vec<(Field, String)> = server
            .fields()
            .iter()
            .filter_map(|&field| given(lookup(field).as_deref()).map(|v| (field, v)))
            .collect();
        if server == ServerKind::Teamchat && values.len() < server.fields().len() {
            values.clear();
        }
        Self {
            server,
            values,
            token_name: None,
        }
    }

    /// `server`'s binding in this process's environment (stdio).
    pub fn from_env(server: ServerKind) -> Self {
        Self::read(server, |field| std::env::var(field.env).ok())
    }

    /// `server`'s binding in the query string of an `initialize` URL (HTTP), `query` being what
    /// follows the `?` (form-encoded; a repeated parameter's first value counts).
    pub fn from_query(server: ServerKind, query: &str) -> Self {
        let pairs = parse_query(query);
        Self::read(server, |field| pairs.get(field.param).cloned())
    }

    /// `server`'s binding as a person typed it.
    pub fn from_scope(server: ServerKind, scope: &Scope) -> Self {
        Self::read(server, |field| scope.value(field).map(str::to_owned))
    }

    /// The server this binding is for.
    pub fn server(&self) -> ServerKind {
        self.server
    }

    /// Whether no field is set (an unbound session).
    pub fn is_unbound(&self) -> bool {
        self.values.is_empty()
    }

    /// This binding for a session opened with the HTTP token named `name` (the host's
    /// `Caller`); not a binding field: it names who connected, not whom the session acts for.
    pub(crate) fn with_token_name(mut self, name: &str) -> Self {
        self.token_name = Some(name.to_owned());
        self
    }

    /// The name of the HTTP token the session was opened with, if any.
    pub(crate) fn token_name(&self) -> Option<&str> {
        self.token_name.as_deref()
    }

    /// The value of `field`, if bound.
    pub(crate) fn get(&self, field: Field) -> Option<&str> {
        self.values
            .iter()
            .find(|(f, _)| *f == field)
            .map(|(_, v)| v.as_str())
    }

    /// The environment a spawned bin needs for this binding, in the order the server writes its fields.
    pub fn env_pairs(&self) -> Vec<(&'static str, String)> {
        self.values
            .iter()
            .map(|(f, v)| (f.env, v.clone()))
            .collect()
    }

    /// The query parameters an HTTP URL needs for this binding, in the order the server writes its fields.
    pub fn query_pairs(&self) -> Vec<(&'static str, String)> {
        self.values
            .iter()
            .map(|(f, v)| (f.param, v.clone()))
            .collect()
    }

    /// This binding as a form-encoded query string (empty when unbound).
    pub fn to_query(&self) -> String {
        self.query_pairs()
            .iter()
            .map(|(k, v)| format!("{k}={}", form_encode(v)))
            .collect::<Vec<_>>()
            .join("&")
    }

    /// The tasks binding: the team, when one is set.
    pub fn tasks(&self) -> Option<TasksBinding> {
        Some(TasksBinding {
            team_id: self.get(SCOPE_TEAM)?.to_owned(),
        })
    }

    /// The memory binding, when any of its fields is set.
    pub fn memory(&self) -> Option<MemoryBinding> {
        let owned = |field| self.get(field).map(str::to_owned);
        (!self.is_unbound()).then(|| MemoryBinding {
            team_id: owned(SCOPE_TEAM),
            agent_id: owned(SCOPE_AGENT),
            tenant_id: owned(SCOPE_TENANT),
        })
    }

    /// The tools binding (empty when unbound: calls are then anonymous).
    pub fn tools(&self) -> ToolsBinding {
        ToolsBinding {
            agent_id: self.get(SCOPE_AGENT).map(str::to_owned),
            tenant_id: self.get(SCOPE_TENANT).map(str::to_owned),
        }
    }

    /// The teamchat binding, when both the room team and the author are set.
    pub fn teamchat(&self) -> Option<TeamchatBinding> {
        Some(TeamchatBinding {
            team_id: self.get(ROOM_TEAM)?.to_owned(),
            agent_id: self.get(AUTHOR_AGENT)?.to_owned(),
        })
    }
}

/// A tasks session bound to one team: other teams' tasks are invisible to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TasksBinding {
    /// The team.
    pub team_id: String,
}

/// A memory session's binding; at least one field is set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryBinding {
    /// The team whose entries are visible and that saves are tagged with.
    pub team_id: Option<String>,
    /// The agent whose private entries are visible too (reads only: saves are team-shared).
    pub agent_id: Option<String>,
    /// The tenant.
    pub tenant_id: Option<String>,
}

/// Who a tools session calls as.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolsBinding {
    /// The calling agent: audit rows name it and `allow_always` grants stick to it.
    pub agent_id: Option<String>,
    /// The tenant recorded on audit and approval rows.
    pub tenant_id: Option<String>,
}

/// A teamchat session bound to one author in the room of one team.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamchatBinding {
    /// The team whose room is `team:<team_id>`.
    pub team_id: String,
    /// The author of every post.
    pub agent_id: String,
}

/// The pairs of a form-encoded query string, decoded; the first value of a name wins.
pub fn parse_query(query: &str) -> HashMap<String, String> {
    let mut pairs = HashMap::new();
    for part in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = part.split_once('=').unwrap_or((part, ""));
        pairs
            .entry(form_decode(name))
            .or_insert_with(|| form_decode(value));
    }
    pairs
}

/// `application/x-www-form-urlencoded` encoding of one value (space → `+`).
pub fn form_encode(value: &str) -> String {
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

/// Decodes one form-encoded component (`+` → space, `%XX` → byte); a malformed escape stays as
/// typed and bytes that are not UTF-8 become U+FFFD.
fn form_decode(text: &str) -> String {
    percent_decode(text, true)
}

/// Decodes one URL path segment once (`%XX` → byte, `+` stays); a malformed escape stays as
/// typed and bytes that are not UTF-8 become U+FFFD.
pub fn path_decode(text: &str) -> String {
    percent_decode(text, false)
}

fn percent_decode(text: &str, plus_is_space: bool) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' if plus_is_space => out.push(b' '),
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(byte) => {
                        out.push(byte);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            other => out.push(other),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests;
