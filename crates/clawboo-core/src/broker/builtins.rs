//! The four builtin tools: `echo`, `note`, `web_search`, `delete_path`, in the reference's
//! registration order ([`ALL`]). Each is declared once, as an implementation of [`Builtin`]: its
//! data ([`ToolInfo`]: name, description, risk, what it requires), its argument type, the checks
//! that type does not carry, and its executor.
//!
//! Owns: what each tool is and does, and how its arguments are read ([`Parsed`]). Guarantees: a
//! [`Parsed`] value has been read into the tool's type and checked, in one step (unknown keys
//! dropped, required strings non-empty), so an executor never re-reads its arguments; `delete_path`
//! never touches the file system; `note` stores the note scrubbed of secrets. Must never: decide
//! whether a call may run (the pipeline does) or talk to the network except `web_search` to its
//! provider.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::availability::{AvailabilityContext, Requirement};
use super::notes::{self, NewNote};
use super::search::{self, SearchError, SearchRequest};
use crate::db::Db;

/// How much harm a tool can do, which decides whether a person must approve it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// No side effects worth asking about.
    Safe,
    /// Destroys data; needs approval.
    Destructive,
    /// Reaches outside (the network, a provider); needs approval.
    External,
}

impl Risk {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Safe => "safe",
            Risk::Destructive => "destructive",
            Risk::External => "external",
        }
    }
}

/// What the broker knows of a builtin without running it: plain data, one constant per tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolInfo {
    /// The tool's name.
    pub name: &'static str,
    /// The tool's description, as the reference words it.
    pub description: &'static str,
    /// How much harm the tool can do.
    pub risk: Risk,
    /// What must be configured before the tool is offered (`None`: always offered).
    pub requires: Option<Requirement>,
}

impl ToolInfo {
    /// Who provides the tool (every builtin: `core`).
    pub fn owner(&self) -> &'static str {
        "core"
    }
}

/// Arguments a builtin refuses beyond what their type says (the reference's `min(1)`); a client
/// reads the text after `invalid args: ` (MCP) or `invalid-args:` (a broker denial).
/// Wire: ours.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidArgs {
    /// A required string is empty.
    #[error("{0}: must contain at least 1 character")]
    Empty(&'static str),
}

/// Why a builtin that ran failed: an error result the caller reads, never a denial.
/// Wire: ours.
#[derive(Debug, thiserror::Error)]
pub enum BuiltinError {
    /// `note` could not write its row.
    #[error("the note could not be stored: {0}")]
    NoteNotStored(#[source] rusqlite::Error),
    /// `web_search` has no provider key (it was configured when the tool was listed, not now).
    #[error("no search provider is configured: set {}", search::TAVILY_KEY_ENV)]
    NoSearchProvider,
    /// The provider failed; its text never holds the key.
    #[error(transparent)]
    Search(#[from] SearchError),
    /// An inspector rewrote the arguments into something the tool's type no longer reads.
    #[error("invalid args: {0}")]
    Rewritten(#[source] serde_json::Error),
}

/// What an executor may use besides its arguments.
pub struct Execution<'a> {
    /// The database (for `note`; locked only while the note is written).
    pub db: &'a Db,
    /// The caller's agent, if known.
    pub agent_id: Option<&'a str>,
    /// The caller's tenant, if known.
    pub tenant_id: Option<&'a str>,
    /// The environment (for `web_search`'s key and provider address).
    pub env: &'a AvailabilityContext,
}

/// One builtin tool, declared once: its data, its argument type and its executor.
pub trait Builtin: 'static {
    /// The arguments: read from JSON (unknown keys dropped), rendered back for the inspectors and
    /// the audit, and advertised as the tool's input schema.
    type Args: DeserializeOwned + Serialize + JsonSchema + fmt::Debug + Send;

    /// The tool's data.
    const INFO: ToolInfo;

    /// The checks the argument type does not carry.
    fn check(_args: &Self::Args) -> Result<(), InvalidArgs> {
        Ok(())
    }

    /// Runs the tool. `Err` is a failure the caller reads (an error result, not a denial).
    fn execute(args: Self::Args, exec: &Execution<'_>) -> Result<String, BuiltinError>;
}

/// Every builtin's data, in registration order (the `tools/list` order).
pub const ALL: [&ToolInfo; 4] = [
    &Echo::INFO,
    &Note::INFO,
    &WebSearch::INFO,
    &DeletePath::INFO,
];

/// The builtin called `name`.
pub fn by_name(name: &str) -> Option<&'static ToolInfo> {
    ALL.into_iter().find(|tool| tool.name == name)
}

/// The arguments of a call to `B`, read into `B::Args` and checked by [`Builtin::check`] in one
/// step (a failed check is a deserialization error naming the field), so holding one proves both.
/// Its schema is `B::Args`'s.
pub struct Parsed<B: Builtin>(B::Args);

impl<B: Builtin> Parsed<B> {
    /// Checks `args` already in the tool's type.
    pub fn new(args: B::Args) -> Result<Self, InvalidArgs> {
        B::check(&args)?;
        Ok(Self(args))
    }

    /// The arguments as a JSON object, as the inspectors and the audit read them.
    pub fn to_map(&self) -> Map<String, Value> {
        match serde_json::to_value(&self.0) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        }
    }

    /// The arguments as the inspectors left them: these, unless `view` (what [`Self::to_map`]
    /// gave them) was rewritten into `left`, which is then read into the type and checked again.
    pub fn rewritten_to(
        self,
        view: &Map<String, Value>,
        left: &Map<String, Value>,
    ) -> Result<Self, BuiltinError> {
        if view == left {
            return Ok(self);
        }
        serde_json::from_value(Value::Object(left.clone())).map_err(BuiltinError::Rewritten)
    }

    /// The arguments, for the executor.
    pub fn into_inner(self) -> B::Args {
        self.0
    }
}

impl<B: Builtin> fmt::Debug for Parsed<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Parsed").field(&self.0).finish()
    }
}

impl<'de, B: Builtin> Deserialize<'de> for Parsed<B> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let args = B::Args::deserialize(deserializer)?;
        Self::new(args).map_err(D::Error::custom)
    }
}

impl<B: Builtin> JsonSchema for Parsed<B> {
    fn inline_schema() -> bool {
        B::Args::inline_schema()
    }

    fn schema_name() -> Cow<'static, str> {
        B::Args::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        B::Args::schema_id()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        B::Args::json_schema(generator)
    }
}

fn non_empty(field: &'static str, value: &str) -> Result<(), InvalidArgs> {
    if value.is_empty() {
        Err(InvalidArgs::Empty(field))
    } else {
        Ok(())
    }
}

/// `echo`: returns its message.
pub struct Echo;

/// `echo`'s arguments.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct EchoArgs {
    message: String,
}

impl Builtin for Echo {
    type Args = EchoArgs;

    const INFO: ToolInfo = ToolInfo {
        name: "echo",
        description: "Echo a message back. Safe, no side effects \u{2014} used to prove the round-trip.",
        risk: Risk::Safe,
        requires: None,
    };

    fn execute(args: EchoArgs, _: &Execution<'_>) -> Result<String, BuiltinError> {
        Ok(args.message)
    }
}

/// `note`: stores a short note and returns its id.
pub struct Note;

/// `note`'s arguments.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct NoteArgs {
    note: String,
}

impl Builtin for Note {
    type Args = NoteArgs;

    const INFO: ToolInfo = ToolInfo {
        name: "note",
        description: "Record a short note. Safe.",
        risk: Risk::Safe,
        requires: None,
    };

    fn check(args: &NoteArgs) -> Result<(), InvalidArgs> {
        non_empty("note", &args.note)
    }

    fn execute(args: NoteArgs, exec: &Execution<'_>) -> Result<String, BuiltinError> {
        let new = NewNote {
            agent_id: exec.agent_id,
            tenant_id: exec.tenant_id,
            body: &args.note,
        };
        let stored = notes::add(&exec.db.conn(), &new).map_err(BuiltinError::NoteNotStored)?;
        Ok(format!("noted {}: {}", stored.id, stored.body))
    }
}

/// `web_search`: searches the web through Tavily.
pub struct WebSearch;

/// `web_search`'s arguments.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct WebSearchArgs {
    query: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    limit: Option<i64>,
}

impl Builtin for WebSearch {
    type Args = WebSearchArgs;

    const INFO: ToolInfo = ToolInfo {
        name: "web_search",
        description: "Search the web. External side effect \u{2192} requires approval; hidden until a search provider is configured.",
        risk: Risk::External,
        requires: Some(Requirement::AnyOf(&[
            Requirement::Env(search::TAVILY_KEY_ENV),
            Requirement::Auth("tavily"),
        ])),
    };

    fn check(args: &WebSearchArgs) -> Result<(), InvalidArgs> {
        non_empty("query", &args.query)
    }

    fn execute(args: WebSearchArgs, exec: &Execution<'_>) -> Result<String, BuiltinError> {
        let key = exec
            .env
            .env(search::TAVILY_KEY_ENV)
            .ok_or(BuiltinError::NoSearchProvider)?;
        let base_url = exec
            .env
            .env(search::TAVILY_URL_ENV)
            .unwrap_or_else(|| search::DEFAULT_TAVILY_URL.to_owned());
        let request = SearchRequest::new(&args.query, args.limit);
        let hits = search::tavily(&base_url, &key, &request)?;
        Ok(search::render(&args.query, &hits))
    }
}

/// `delete_path`: a demonstration of a destructive tool; deletes nothing.
pub struct DeletePath;

/// `delete_path`'s arguments.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct DeletePathArgs {
    path: String,
}

impl Builtin for DeletePath {
    type Args = DeletePathArgs;

    const INFO: ToolInfo = ToolInfo {
        name: "delete_path",
        description: "Delete a path. Destructive \u{2192} requires approval. (Demo executor \u{2014} does not actually delete.)",
        risk: Risk::Destructive,
        requires: None,
    };

    fn check(args: &DeletePathArgs) -> Result<(), InvalidArgs> {
        non_empty("path", &args.path)
    }

    fn execute(args: DeletePathArgs, _: &Execution<'_>) -> Result<String, BuiltinError> {
        Ok(format!(
            "would delete: {} (demonstration executor: nothing was deleted)",
            args.path
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::input_schema_for;
    use serde_json::json;

    fn schema<B: Builtin>() -> String {
        Value::Object(input_schema_for::<Parsed<B>>()).to_string()
    }

    fn parse<B: Builtin>(args: Value) -> Result<Parsed<B>, String> {
        serde_json::from_value(args).map_err(|e| e.to_string())
    }

    fn run<B: Builtin>(args: Value, env: &AvailabilityContext) -> Result<String, String> {
        let db = Db::open_in_memory().unwrap();
        let exec = Execution {
            db: &db,
            agent_id: None,
            tenant_id: None,
            env,
        };
        B::execute(parse::<B>(args)?.into_inner(), &exec).map_err(|e| e.to_string())
    }

    #[test]
    fn schemas_are_the_references_byte_for_byte() {
        assert_eq!(
            schema::<Echo>(),
            r#"{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}"#
        );
        assert_eq!(
            schema::<Note>(),
            r#"{"type":"object","properties":{"note":{"type":"string"}},"required":["note"]}"#
        );
        assert_eq!(
            schema::<WebSearch>(),
            r#"{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}},"required":["query"]}"#
        );
        assert_eq!(
            schema::<DeletePath>(),
            r#"{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}"#
        );
    }

    #[test]
    fn registration_order_names_and_risks() {
        let rows: Vec<(&str, &str)> = ALL
            .iter()
            .map(|tool| (tool.name, tool.risk.as_str()))
            .collect();
        assert_eq!(
            rows,
            [
                ("echo", "safe"),
                ("note", "safe"),
                ("web_search", "external"),
                ("delete_path", "destructive")
            ]
        );
        assert_eq!(by_name("note"), Some(&Note::INFO));
        assert_eq!(by_name("memory_note"), None);
    }

    #[test]
    fn parsing_strips_unknown_keys_and_refuses_empty_required_strings() {
        let echo = parse::<Echo>(json!({"message": "hi", "extra": 1})).unwrap();
        assert_eq!(Value::Object(echo.to_map()), json!({"message": "hi"}));
        assert_eq!(
            parse::<Note>(json!({"note": ""})).unwrap_err(),
            "note: must contain at least 1 character"
        );
        assert_eq!(
            parse::<DeletePath>(json!({})).unwrap_err(),
            "missing field `path`"
        );
        let search = parse::<WebSearch>(json!({"query": "rust"})).unwrap();
        assert!(!search.to_map().contains_key("limit"));
        assert!(parse::<WebSearch>(json!({"query": "q", "limit": 1.5})).is_err());
    }

    #[test]
    fn a_rewrite_is_read_back_into_the_type_and_checked_again() {
        let args = parse::<WebSearch>(json!({"query": "q", "limit": 5000})).unwrap();
        let view = args.to_map();
        let mut left = view.clone();
        left.insert("limit".into(), json!(1000));
        let clamped = args.rewritten_to(&view, &left).unwrap();
        assert_eq!(clamped.into_inner().limit, Some(1000));

        let args = parse::<WebSearch>(json!({"query": "q"})).unwrap();
        let view = args.to_map();
        let mut left = view.clone();
        left.insert("query".into(), json!(""));
        let err = args.rewritten_to(&view, &left).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid args: query: must contain at least 1 character"
        );
    }

    #[test]
    fn delete_path_says_it_deleted_nothing_and_leaves_the_file() {
        let file = std::env::temp_dir().join(format!("clawboo-keep-{}", crate::db::new_id()));
        std::fs::write(&file, "still here").unwrap();
        let path = file.display().to_string();
        let out = run::<DeletePath>(json!({ "path": path }), &AvailabilityContext::with_env([]));
        assert_eq!(
            out,
            Ok(format!(
                "would delete: {path} (demonstration executor: nothing was deleted)"
            ))
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "still here");
        std::fs::remove_file(file).unwrap();
    }

    #[test]
    fn web_search_without_a_key_is_a_failure_not_a_panic() {
        assert_eq!(
            run::<WebSearch>(json!({"query": "q"}), &AvailabilityContext::with_env([])),
            Err("no search provider is configured: set TAVILY_API_KEY".to_owned())
        );
    }
}
