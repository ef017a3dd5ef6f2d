//! The four builtin tools: `echo`, `note`, `web_search`, `delete_path`, in the reference's
//! registration order, with their descriptions, risks, availability, argument types and executors.
//!
//! Owns: what each tool is and does. Guarantees: arguments are parsed into the tool's type before an
//! executor sees them (unknown keys dropped, required strings non-empty); `delete_path` never
//! touches the file system; `note` stores the note scrubbed of secrets. Must never: decide whether a
//! call may run (the pipeline does) or talk to the network except `web_search` to its provider.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::availability::{AvailabilityContext, Requirement};
use super::notes::{self, NewNote};
use super::search::{self, SearchRequest};
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

/// One of the builtin tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// `echo`: returns its message.
    Echo,
    /// `note`: stores a short note and returns its id.
    Note,
    /// `web_search`: searches the web through Tavily.
    WebSearch,
    /// `delete_path`: a demonstration of a destructive tool; deletes nothing.
    DeletePath,
}

/// `echo`'s arguments.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct EchoArgs {
    message: String,
}

/// `note`'s arguments.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct NoteArgs {
    note: String,
}

/// `web_search`'s arguments.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct WebSearchArgs {
    query: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    limit: Option<i64>,
}

/// `delete_path`'s arguments.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct DeletePathArgs {
    path: String,
}

/// An argument type of a builtin: parsed from JSON, then checked beyond what its type says.
trait ToolArgs: DeserializeOwned + Serialize {
    /// The checks the schema does not carry (the reference's `min(1)`).
    fn check(&self) -> Result<(), String>;
}

fn non_empty(field: &str, value: &str) -> Result<(), String> {
    if value.is_empty() {
        Err(format!("{field}: must contain at least 1 character"))
    } else {
        Ok(())
    }
}

impl ToolArgs for EchoArgs {
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
}

impl ToolArgs for NoteArgs {
    fn check(&self) -> Result<(), String> {
        non_empty("note", &self.note)
    }
}

impl ToolArgs for WebSearchArgs {
    fn check(&self) -> Result<(), String> {
        non_empty("query", &self.query)
    }
}

impl ToolArgs for DeletePathArgs {
    fn check(&self) -> Result<(), String> {
        non_empty("path", &self.path)
    }
}

/// Parses `args` as `A` and renders it back, so unknown keys are gone.
fn parse_as<A: ToolArgs>(args: &Value) -> Result<Map<String, Value>, String> {
    let parsed: A = serde_json::from_value(args.clone()).map_err(|e| e.to_string())?;
    parsed.check()?;
    match serde_json::to_value(&parsed).map_err(|e| e.to_string())? {
        Value::Object(map) => Ok(map),
        other => Err(format!("arguments must be an object, got {other}")),
    }
}

fn typed<A: ToolArgs>(args: &Map<String, Value>) -> Result<A, String> {
    serde_json::from_value(Value::Object(args.clone())).map_err(|e| format!("invalid args: {e}"))
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

impl Builtin {
    /// Every builtin, in registration order (the `tools/list` order).
    pub const ALL: [Builtin; 4] = [
        Builtin::Echo,
        Builtin::Note,
        Builtin::WebSearch,
        Builtin::DeletePath,
    ];

    /// The builtin called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|b| b.name() == name)
    }

    /// The tool's name.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Echo => "echo",
            Builtin::Note => "note",
            Builtin::WebSearch => "web_search",
            Builtin::DeletePath => "delete_path",
        }
    }

    /// The tool's description, as the reference words it.
    pub fn description(self) -> &'static str {
        match self {
            Builtin::Echo => {
                "Echo a message back. Safe, no side effects \u{2014} used to prove the round-trip."
            }
            Builtin::Note => "Record a short note. Safe.",
            Builtin::WebSearch => {
                "Search the web. External side effect \u{2192} requires approval; hidden until a search provider is configured."
            }
            Builtin::DeletePath => {
                "Delete a path. Destructive \u{2192} requires approval. (Demo executor \u{2014} does not actually delete.)"
            }
        }
    }

    /// Who provides the tool (every builtin: `core`).
    pub fn owner(self) -> &'static str {
        "core"
    }

    /// How much harm the tool can do.
    pub fn risk(self) -> Risk {
        match self {
            Builtin::Echo | Builtin::Note => Risk::Safe,
            Builtin::WebSearch => Risk::External,
            Builtin::DeletePath => Risk::Destructive,
        }
    }

    /// What must be configured before the tool is offered.
    pub fn requirement(self) -> Option<Requirement> {
        match self {
            Builtin::WebSearch => Some(Requirement::AnyOf(vec![
                Requirement::Env(search::TAVILY_KEY_ENV),
                Requirement::Auth("tavily"),
            ])),
            _ => None,
        }
    }

    /// Parses `args` into the tool's argument type; `Err` says what is wrong.
    pub fn parse(self, args: &Value) -> Result<Map<String, Value>, String> {
        match self {
            Builtin::Echo => parse_as::<EchoArgs>(args),
            Builtin::Note => parse_as::<NoteArgs>(args),
            Builtin::WebSearch => parse_as::<WebSearchArgs>(args),
            Builtin::DeletePath => parse_as::<DeletePathArgs>(args),
        }
    }

    /// Runs the tool on parsed `args`. `Err` is a failure the caller reads (not a denial).
    pub fn execute(
        self,
        args: &Map<String, Value>,
        exec: &Execution<'_>,
    ) -> Result<String, String> {
        match self {
            Builtin::Echo => Ok(typed::<EchoArgs>(args)?.message),
            Builtin::Note => {
                let a: NoteArgs = typed(args)?;
                let stored = notes::add(
                    &exec.db.conn(),
                    &NewNote {
                        agent_id: exec.agent_id,
                        tenant_id: exec.tenant_id,
                        body: &a.note,
                    },
                )
                .map_err(|e| format!("the note could not be stored: {e}"))?;
                Ok(format!("noted {}: {}", stored.id, stored.body))
            }
            Builtin::WebSearch => {
                let a: WebSearchArgs = typed(args)?;
                let key = exec.env.env(search::TAVILY_KEY_ENV).ok_or_else(|| {
                    format!(
                        "no search provider is configured: set {}",
                        search::TAVILY_KEY_ENV
                    )
                })?;
                let base_url = exec
                    .env
                    .env(search::TAVILY_URL_ENV)
                    .unwrap_or_else(|| search::DEFAULT_TAVILY_URL.to_owned());
                let request = SearchRequest::new(&a.query, a.limit);
                let hits = search::tavily(&base_url, &key, &request).map_err(|e| e.to_string())?;
                Ok(search::render(&a.query, &hits))
            }
            Builtin::DeletePath => {
                let a: DeletePathArgs = typed(args)?;
                Ok(format!(
                    "would delete: {} (demonstration executor: nothing was deleted)",
                    a.path
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::input_schema_for;
    use serde_json::json;

    fn schema<A: JsonSchema>() -> String {
        Value::Object(input_schema_for::<A>()).to_string()
    }

    #[test]
    fn schemas_are_the_references_byte_for_byte() {
        assert_eq!(
            schema::<EchoArgs>(),
            r#"{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}"#
        );
        assert_eq!(
            schema::<NoteArgs>(),
            r#"{"type":"object","properties":{"note":{"type":"string"}},"required":["note"]}"#
        );
        assert_eq!(
            schema::<WebSearchArgs>(),
            r#"{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}},"required":["query"]}"#
        );
        assert_eq!(
            schema::<DeletePathArgs>(),
            r#"{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}"#
        );
    }

    #[test]
    fn registration_order_names_and_risks() {
        let rows: Vec<(&str, &str)> = Builtin::ALL
            .iter()
            .map(|b| (b.name(), b.risk().as_str()))
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
        assert_eq!(Builtin::from_name("note"), Some(Builtin::Note));
        assert_eq!(Builtin::from_name("memory_note"), None);
    }

    #[test]
    fn parsing_strips_unknown_keys_and_refuses_empty_required_strings() {
        assert_eq!(
            Builtin::Echo.parse(&json!({"message": "hi", "extra": 1})),
            Ok(json!({"message": "hi"}).as_object().unwrap().clone())
        );
        assert_eq!(
            Builtin::Note.parse(&json!({"note": ""})),
            Err("note: must contain at least 1 character".to_owned())
        );
        assert!(
            Builtin::DeletePath
                .parse(&json!({}))
                .unwrap_err()
                .contains("path")
        );
        let search = Builtin::WebSearch.parse(&json!({"query": "rust"})).unwrap();
        assert!(!search.contains_key("limit"));
        assert!(
            Builtin::WebSearch
                .parse(&json!({"query": "q", "limit": 1.5}))
                .is_err()
        );
    }

    #[test]
    fn delete_path_says_it_deleted_nothing_and_leaves_the_file() {
        let file = std::env::temp_dir().join(format!("clawboo-keep-{}", crate::db::new_id()));
        std::fs::write(&file, "still here").unwrap();
        let db = Db::open_in_memory().unwrap();
        let env = AvailabilityContext::with_env([]);
        let exec = Execution {
            db: &db,
            agent_id: None,
            tenant_id: None,
            env: &env,
        };
        let path = file.display().to_string();
        let args = Builtin::DeletePath.parse(&json!({ "path": path })).unwrap();
        let out = Builtin::DeletePath.execute(&args, &exec).unwrap();
        assert_eq!(
            out,
            format!("would delete: {path} (demonstration executor: nothing was deleted)")
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "still here");
        std::fs::remove_file(file).unwrap();
    }

    #[test]
    fn web_search_without_a_key_is_a_failure_not_a_panic() {
        let db = Db::open_in_memory().unwrap();
        let env = AvailabilityContext::with_env([]);
        let exec = Execution {
            db: &db,
            agent_id: None,
            tenant_id: None,
            env: &env,
        };
        let args = Builtin::WebSearch.parse(&json!({"query": "q"})).unwrap();
        assert_eq!(
            Builtin::WebSearch.execute(&args, &exec),
            Err("no search provider is configured: set TAVILY_API_KEY".to_owned())
        );
    }
}
