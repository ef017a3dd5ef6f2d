//! The MCP layer: the only module that touches rmcp.
//!
//! Owns: how a tool is declared ([`Tool::new`]: a name, a description, an argument type deriving
//! `Deserialize + JsonSchema`, a handler; then its [`Annotations`] and, for a tool that answers
//! JSON, its answer type with [`Tool::output`]), how a prompt is declared ([`Prompt`]), how a result
//! is shaped (`content: [{type:"text"}]` with `isError` always present, `_meta.denied` on a policy
//! denial, `structuredContent` beside the text of a tool with an output type), how domain errors
//! become tool-errors ([`ToolError`], in [`to_call_result`]), and serving over stdio ([`stdio`])
//! and Streamable HTTP ([`http`]).
//!
//! Structured output: a tool declared with [`Tool::output`] lists an `outputSchema` generated from
//! its answer type, and its successful result carries `structuredContent`, the text block parsed:
//! the text is byte for byte what it was before structured output existed, so a client that reads
//! only `content` sees no change. An answer that is a JSON array is advertised and sent as the array
//! it is (protocol `2026-07-28` allows any JSON value, SEP-2106), not wrapped in an object that
//! the text would not match; a peer on an older version, which allows only objects, gets neither
//! the schema nor the structured content of a tool whose schema is not an object (an array, or
//! `memory_search`'s array-or-object), and reads the text as before. A peer on a version older than
//! `2025-06-18`, which has no structured output and no tool `title`, gets neither; one older than
//! `2025-03-26` gets no annotations.
//!
//! Guarantees: arguments are checked against the advertised schema before a handler runs, and a
//! failure is a tool-error starting `invalid args: ` that names the field; an unknown tool is a
//! tool-error `unknown tool: <name>`; handlers run on the blocking pool, so a handler that waits
//! (the broker's approval) never stops the server from answering other requests. A server whose
//! handlers never wait on anything but the database ([`ServerBuilder::handlers_never_wait`]) is
//! answered on a stdio session's reader thread instead ([`stdio`]): no thread hand-off, the same
//! bytes on the wire.
//!
//! Must never: know any domain. Servers declare their tools here; repositories never see MCP.

mod annotations;
pub mod elicit;
mod erased;
mod frame;
pub mod http;
pub mod in_memory;
mod schema;
pub mod stdio;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult, ListToolsResult,
    MetaObject, PromptArgument, PromptMessage, ProtocolVersion, Role, ServerCapabilities,
    ServerConfig, ServerResult,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

pub use annotations::Annotations;
pub use elicit::Elicit;
pub use erased::{McpServer, serve_stdio};
pub use schema::input_schema_for;

/// The version every server advertises and every bin reports: the workspace's package version.
pub const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// A successful tool result: one or more text blocks, and the structured content of a tool
/// declared with an output type.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    blocks: Vec<String>,
    /// The first block is JSON ([`Reply::json`]).
    json: bool,
    /// `structuredContent`, and the first protocol version that may carry it: set by [`Tool`] for
    /// a tool with an output type.
    structured: Option<(Value, ProtocolVersion)>,
}

impl Reply {
    /// A result whose text is `value` as JSON pretty-printed with a 2-space indent.
    pub fn json(value: &impl Serialize) -> Self {
        let text = serde_json::to_string_pretty(value)
            .unwrap_or_else(|e| format!("{{\"error\":\"unserialisable result: {e}\"}}"));
        Self {
            blocks: vec![text],
            json: true,
            structured: None,
        }
    }

    /// A result whose text is `text` as it is.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            blocks: vec![text.into()],
            json: false,
            structured: None,
        }
    }

    /// Appends a further text block.
    pub fn with_block(mut self, text: impl Into<String>) -> Self {
        self.blocks.push(text.into());
        self
    }
}

/// A failure the model should read: a tool-error (`isError: true`) with a text, and for a policy
/// denial the typed reason carried in `_meta.denied`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    /// The text of the error block.
    pub message: String,
    /// The reason a policy refused the call, if it was a policy refusal.
    pub denied: Option<String>,
}

impl ToolError {
    /// A plain tool-error.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            denied: None,
        }
    }

    /// A policy denial with its typed reason.
    pub fn denied(message: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            denied: Some(reason.into()),
        }
    }

    /// An argument error: `invalid args: <detail>`.
    pub fn invalid_args(detail: impl std::fmt::Display) -> Self {
        Self::new(format!("invalid args: {detail}"))
    }
}

/// A domain error that reaches the model as a tool-error. Its `Display` text is the error text.
pub trait DomainError: std::error::Error {
    /// The typed denial reason for `_meta.denied`, when the error is a policy refusal.
    fn denied_reason(&self) -> Option<&str> {
        None
    }
}

impl<E: DomainError> From<E> for ToolError {
    fn from(e: E) -> Self {
        Self {
            message: e.to_string(),
            denied: e.denied_reason().map(str::to_owned),
        }
    }
}

/// What a handler returns.
pub type ToolResult = Result<Reply, ToolError>;

type Handler<S> = Box<dyn Fn(&S, Value, Option<&Elicit>) -> ToolResult + Send + Sync>;
/// Whether a call with these arguments may wait ([`Tool::waits_when`]).
type WaitRule<S> = Box<dyn Fn(&S, Option<&Map<String, Value>>) -> bool + Send + Sync>;

/// One tool of a server over state `S`.
pub struct Tool<S> {
    name: &'static str,
    description: String,
    input_schema: Map<String, Value>,
    annotations: Option<Annotations>,
    output_schema: Option<Map<String, Value>>,
    handler: Handler<S>,
    /// When a call may wait ([`Tool::waits_when`], [`Tool::waits_when_given`]).
    waits: Option<WaitRule<S>>,
    /// Whether every call is a quick read ([`Tool::quick_read`]).
    quick: bool,
}

impl<S> Tool<S> {
    /// Declares a tool whose arguments deserialize into `A`. The advertised schema is generated
    /// from `A` (non-`Option` fields are `required`), and arguments are checked against it before
    /// `handler` runs.
    pub fn new<A, F>(name: &'static str, description: impl Into<String>, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema,
        F: Fn(&S, A) -> ToolResult + Send + Sync + 'static,
    {
        Self::asking(name, description, move |state, args, _: Option<&Elicit>| {
            handler(state, args)
        })
    }

    /// [`Tool::new`] for a handler that may ask the session's person a question: it receives an
    /// [`Elicit`] when the client can be asked (see [`elicit`]), `None` otherwise.
    pub fn asking<A, F>(name: &'static str, description: impl Into<String>, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema,
        F: Fn(&S, A, Option<&Elicit>) -> ToolResult + Send + Sync + 'static,
    {
        Self {
            name,
            description: description.into(),
            input_schema: input_schema_for::<A>(),
            annotations: None,
            output_schema: None,
            handler: Box::new(move |state, args, elicit| {
                let args: A = serde_json::from_value(args).map_err(ToolError::invalid_args)?;
                handler(state, args, elicit)
            }),
            waits: None,
            quick: false,
        }
    }

    /// Declares that a call giving the number argument `arg` a value above zero may wait (for a
    /// change in the database, up to that many milliseconds): such a call is never answered on a
    /// stdio reader thread, even for a server whose handlers otherwise never wait
    /// ([`ServerBuilder::handlers_never_wait`]).
    pub fn waits_when_given(self, arg: &'static str) -> Self {
        self.waits_when(move |_, args| {
            args.and_then(|args| args.get(arg)?.as_f64())
                .is_some_and(|n| n > 0.0)
        })
    }

    /// Declares when a call may wait longer than bounded local work (for a person, a timer, the
    /// network): `rule` is asked with the server's state and the call's arguments, before they
    /// are checked, and such a call is never answered on a stdio reader thread, even for a server
    /// whose handlers otherwise never wait ([`ServerBuilder::handlers_never_wait`]). It must
    /// answer `true` when unsure.
    pub fn waits_when(
        mut self,
        rule: impl Fn(&S, Option<&Map<String, Value>>) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.waits = Some(Box::new(rule));
        self
    }

    /// Declares every call that does not wait ([`Tool::waits_when`]) a quick read: a few rows
    /// found by key, or a page of a bounded size, on this session's connection; nothing searched
    /// or scanned, no network; at most the rare short write a read of the board applies first (a
    /// lease's expiry). The HTTP host answers such a call on the async worker that read it, two
    /// thread hand-offs a call fewer than the blocking pool costs (`mcp::http::inline`); where it
    /// may still wait (`crate::blocking::may_wait`), the worker's other connections move to another
    /// thread first. A tool whose cost grows with the store (a search, a whole board) is not one.
    pub fn quick_read(mut self) -> Self {
        self.quick = true;
        self
    }

    /// Whether a call with `args` may wait ([`Tool::waits_when`]).
    fn may_wait(&self, state: &S, args: Option<&Map<String, Value>>) -> bool {
        self.waits.as_ref().is_some_and(|rule| rule(state, args))
    }

    /// The tool's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Says what calling the tool does to the world (MCP's tool annotations). Every tool of every
    /// server declares them; `tools/list` sends them.
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Declares that every successful answer is [`Reply::json`] of an `O`: `tools/list` advertises
    /// `O`'s schema as the tool's `outputSchema`, and each result carries the answer as
    /// `structuredContent` beside its unchanged text. Only for a tool whose every success is JSON
    /// of that type (a client checks `structuredContent` against the schema).
    pub fn output<O: JsonSchema>(mut self) -> Self {
        self.output_schema = Some(schema::output_schema_for::<O>());
        self
    }

    /// The tool's advertised input schema.
    #[cfg(test)]
    pub fn input_schema(&self) -> &Map<String, Value> {
        &self.input_schema
    }

    fn run(&self, state: &S, mut args: Map<String, Value>, elicit: Option<&Elicit>) -> ToolResult {
        schema::check_args(&self.input_schema, &args).map_err(ToolError::invalid_args)?;
        schema::coerce_whole_numbers(&self.input_schema, &mut args);
        let without_nulls: Map<String, Value> =
            args.into_iter().filter(|(_, v)| !v.is_null()).collect();
        let mut reply = (self.handler)(state, Value::Object(without_nulls), elicit)?;
        if let Some(since) = self.structured_since().filter(|_| reply.json) {
            reply.structured = reply
                .blocks
                .first()
                .and_then(|text| serde_json::from_str(text).ok())
                .map(|value| (value, since));
        }
        Ok(reply)
    }

    /// The first protocol version that can carry this tool's structured output: `2025-06-18` for an
    /// object schema, `2026-07-28` for any other (SEP-2106); `None` without an output type.
    fn structured_since(&self) -> Option<ProtocolVersion> {
        let schema = self.output_schema.as_ref()?;
        Some(
            if schema.get("type") == Some(&Value::String("object".into())) {
                ProtocolVersion::V_2025_06_18
            } else {
                ProtocolVersion::V_2026_07_28
            },
        )
    }

    /// The tool as `tools/list` describes it to a peer on `protocol`.
    fn describe(&self, protocol: Option<&ProtocolVersion>) -> rmcp::model::Tool {
        let mut tool = rmcp::model::Tool::new(
            self.name,
            self.description.clone(),
            Arc::new(self.input_schema.clone()),
        );
        if supports(protocol, &ProtocolVersion::V_2025_03_26) {
            tool.annotations = self.annotations.as_ref().map(Annotations::to_rmcp);
        }
        if supports(protocol, &ProtocolVersion::V_2025_06_18) {
            tool.title = self.annotations.as_ref().map(|a| a.title().to_owned());
        }
        if self
            .structured_since()
            .is_some_and(|since| supports(protocol, &since))
        {
            tool.output_schema = self.output_schema.clone().map(Arc::new);
        }
        tool
    }
}

/// Whether a peer on `protocol` speaks `since` or later (no version known: the newest).
fn supports(protocol: Option<&ProtocolVersion>, since: &ProtocolVersion) -> bool {
    protocol.is_none_or(|v| v.as_str() >= since.as_str())
}

type Renderer<S> = Box<dyn Fn(&S, &Map<String, Value>) -> Result<String, ToolError> + Send + Sync>;

/// One prompt of a server: named string arguments in, one user-role text message out.
pub struct Prompt<S> {
    name: &'static str,
    description: String,
    arguments: Vec<(&'static str, &'static str, bool)>,
    render: Renderer<S>,
}

impl<S> Prompt<S> {
    /// Declares a prompt. `arguments` are `(name, description, required)`; `render` receives the
    /// supplied arguments (every required one is present) and returns the message text.
    pub fn new<F>(
        name: &'static str,
        description: impl Into<String>,
        arguments: Vec<(&'static str, &'static str, bool)>,
        render: F,
    ) -> Self
    where
        F: Fn(&S, &Map<String, Value>) -> Result<String, ToolError> + Send + Sync + 'static,
    {
        Self {
            name,
            description: description.into(),
            arguments,
            render: Box::new(render),
        }
    }
}

/// The outcome of a call made in process with [`Server::call`]: what a client would read.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    /// The text blocks, in order.
    pub blocks: Vec<String>,
    /// The `isError` flag.
    pub is_error: bool,
    /// `_meta.denied`, if present.
    pub denied: Option<String>,
    /// `structuredContent`, if present.
    pub structured: Option<Value>,
}

impl CallOutcome {
    /// What a client reads from a wire result: its text blocks, `isError`, `_meta.denied`.
    pub(crate) fn read(result: &CallToolResult) -> Self {
        Self {
            blocks: result
                .content
                .iter()
                .filter_map(|b| b.as_text().map(|t| t.text.clone()))
                .collect(),
            is_error: result.is_error.unwrap_or(false),
            denied: result
                .meta
                .as_ref()
                .and_then(|m| m.0.get("denied"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            structured: result.structured_content.clone(),
        }
    }

    /// The first text block (the JSON or plain-text payload).
    #[cfg(test)]
    pub fn text(&self) -> &str {
        self.blocks.first().map_or("", String::as_str)
    }

    /// The first block parsed as JSON (`Value::Null` if it is not JSON).
    #[cfg(test)]
    pub fn json(&self) -> Value {
        serde_json::from_str(self.text()).unwrap_or(Value::Null)
    }
}

/// The one function that shapes a handler's outcome for the wire, for a peer on `protocol`.
fn to_call_result(result: ToolResult, protocol: Option<&ProtocolVersion>) -> CallToolResult {
    match result {
        Ok(reply) => {
            let mut out =
                CallToolResult::success(reply.blocks.into_iter().map(ContentBlock::text).collect());
            if let Some((value, since)) = reply.structured
                && supports(protocol, &since)
            {
                out.structured_content = Some(value);
            }
            out
        }
        Err(err) => {
            let mut out = CallToolResult::error(vec![ContentBlock::text(err.message)]);
            if let Some(reason) = err.denied {
                let mut meta = Map::new();
                meta.insert("denied".into(), Value::String(reason));
                out.meta = Some(MetaObject(meta));
            }
            out
        }
    }
}

type CloseHook<S> = Box<dyn Fn(&S) + Send + Sync>;

struct Inner<S> {
    name: &'static str,
    version: &'static str,
    instructions: Option<String>,
    state: S,
    tools: Vec<Tool<S>>,
    prompts: Vec<Prompt<S>>,
    on_close: Vec<CloseHook<S>>,
    handlers_never_wait: bool,
}

/// An MCP server: identity, state, tools and prompts. Cheap to clone.
pub struct Server<S> {
    inner: Arc<Inner<S>>,
}

impl<S> Clone for Server<S> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

/// Builds a [`Server`].
pub struct ServerBuilder<S> {
    inner: Inner<S>,
}

impl<S: Send + Sync + 'static> ServerBuilder<S> {
    /// Adds a tool. Tools are listed in the order they are added.
    pub fn tool(mut self, tool: Tool<S>) -> Self {
        self.inner.tools.push(tool);
        self
    }

    /// Adds a prompt.
    pub fn prompt(mut self, prompt: Prompt<S>) -> Self {
        self.inner.prompts.push(prompt);
        self
    }

    /// Runs `hook` on the state when the session ends ([`Server::close`]), before the process waits
    /// for handlers still running: a handler that waits on something (the broker's approval) can
    /// be told to stop. A hook may run more than once for one session (stdio runs the hooks when
    /// stdin closes and again once the session is over), so it must be idempotent.
    pub fn on_close(mut self, hook: impl Fn(&S) + Send + Sync + 'static) -> Self {
        self.inner.on_close.push(Box::new(hook));
        self
    }

    /// Declares that every handler of this server does only bounded local work: its own database
    /// connection (waiting at most for the database's lock), no network, no person, no timer. A
    /// stdio session then runs `tools/call` on its reader thread, which saves two thread hand-offs
    /// per call; while a call runs there, the session's next requests wait for it. A server with a
    /// handler that may wait longer (an approval, an HTTP request) must not say this; a tool that
    /// waits only when asked to, or only in some calls, says so itself ([`Tool::waits_when`],
    /// [`Tool::waits_when_given`]), and those calls are served off the reader.
    pub fn handlers_never_wait(mut self) -> Self {
        self.inner.handlers_never_wait = true;
        self
    }

    /// Sets the instructions sent with the `initialize` result.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.inner.instructions = Some(text.into());
        self
    }

    /// Finishes the server.
    pub fn build(self) -> Server<S> {
        Server {
            inner: Arc::new(self.inner),
        }
    }
}

impl<S: Send + Sync + 'static> Server<S> {
    /// Starts a server named `name` (the `serverInfo.name` of `initialize`) over `state`.
    pub fn builder(name: &'static str, state: S) -> ServerBuilder<S> {
        ServerBuilder {
            inner: Inner {
                name,
                version: SERVER_VERSION,
                instructions: None,
                state,
                tools: Vec::new(),
                prompts: Vec::new(),
                on_close: Vec::new(),
                handlers_never_wait: false,
            },
        }
    }

    /// The server's name.
    pub fn name(&self) -> &'static str {
        self.inner.name
    }

    /// The server's version.
    pub fn version(&self) -> &'static str {
        self.inner.version
    }

    /// The server's state.
    #[cfg(test)]
    pub fn state(&self) -> &S {
        &self.inner.state
    }

    /// Ends the session for the state: runs the [`ServerBuilder::on_close`] hooks.
    pub fn close(&self) {
        for hook in &self.inner.on_close {
            hook(&self.inner.state);
        }
    }

    /// The listed tools, in order.
    pub fn tools(&self) -> &[Tool<S>] {
        &self.inner.tools
    }

    /// Runs one call synchronously, as `tools/call` would (argument check, handler, error shaping).
    #[cfg(test)]
    pub fn call(&self, name: &str, args: Value) -> CallOutcome {
        CallOutcome::read(&to_call_result(self.run_tool(name, args, None), None))
    }

    /// The tool called `name`, if the server has one.
    fn tool(&self, name: &str) -> Option<&Tool<S>> {
        self.inner.tools.iter().find(|t| t.name == name)
    }

    /// Runs tool `name`; `elicit` reaches the session's person, when the client can be asked.
    fn run_tool(&self, name: &str, args: Value, elicit: Option<&Elicit>) -> ToolResult {
        let tool = self
            .tool(name)
            .ok_or_else(|| ToolError::new(format!("unknown tool: {name}")))?;
        let args = match args {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(ToolError::invalid_args(format!(
                    "arguments must be an object, got {other}"
                )));
            }
        };
        tool.run(&self.inner.state, args, elicit)
    }

    /// Whether `request` may be answered inline ([`Server::call_inline`]) instead of through
    /// rmcp's request path: the server's handlers never wait
    /// ([`ServerBuilder::handlers_never_wait`]), the call carries no `_meta` and does not ask its
    /// tool to wait ([`Tool::waits_when`]). The one rule of the stdio reader and of the HTTP
    /// service.
    fn answers_inline(&self, request: &CallToolRequestParams) -> bool {
        self.inner.handlers_never_wait && request.meta.is_none() && !self.call_may_wait(request)
    }

    /// Whether `request` may be answered inline on an async worker: [`Server::answers_inline`],
    /// and its tool is a quick read ([`Tool::quick_read`]).
    fn answers_quickly(&self, request: &CallToolRequestParams) -> bool {
        self.answers_inline(request) && self.tool(&request.name).is_some_and(|t| t.quick)
    }

    /// [`Server::answers_inline`] for a call's params as JSON (`{"name", "arguments"}`), for the
    /// servers' tests, which do not see rmcp's types.
    #[cfg(test)]
    pub(crate) fn answers_inline_json(&self, params: Value) -> bool {
        serde_json::from_value(params).is_ok_and(|call| self.answers_inline(&call))
    }

    /// [`Server::answers_quickly`] for a call's params as JSON, as [`Server::answers_inline_json`].
    #[cfg(test)]
    pub(crate) fn answers_quickly_json(&self, params: Value) -> bool {
        serde_json::from_value(params).is_ok_and(|call| self.answers_quickly(&call))
    }

    /// Whether this call may make its tool wait ([`Tool::waits_when`]).
    fn call_may_wait(&self, request: &CallToolRequestParams) -> bool {
        self.tool(&request.name)
            .is_some_and(|t| t.may_wait(&self.inner.state, request.arguments.as_ref()))
    }

    /// Runs a `tools/call` on the calling thread and shapes the result exactly as rmcp's request
    /// path does for a client that asked for `protocol` in `initialize` (see
    /// `shape_for_protocol`); a panicking handler is an internal error, as on the blocking pool.
    fn call_inline(
        &self,
        request: CallToolRequestParams,
        protocol: Option<&ProtocolVersion>,
    ) -> Result<ServerResult, ErrorData> {
        let name = request.name;
        let args = request.arguments.map_or(Value::Null, Value::Object);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.run_tool(&name, args, None)
        }))
        .map_err(|_| ErrorData::internal_error("handler failed: it panicked", None))?;
        let mut result: ServerResult =
            CallToolResponse::from(to_call_result(result, protocol)).into();
        shape_for_protocol(&mut result, protocol);
        Ok(result)
    }

    fn rmcp_tools(&self, protocol: Option<&ProtocolVersion>) -> Vec<rmcp::model::Tool> {
        self.inner
            .tools
            .iter()
            .map(|t| t.describe(protocol))
            .collect()
    }

    fn rmcp_prompts(&self) -> Vec<rmcp::model::Prompt> {
        self.inner
            .prompts
            .iter()
            .map(|p| {
                let args = p
                    .arguments
                    .iter()
                    .map(|(name, description, required)| {
                        PromptArgument::new(*name)
                            .with_description(*description)
                            .with_required(*required)
                    })
                    .collect();
                rmcp::model::Prompt::new(p.name, Some(p.description.clone()), Some(args))
            })
            .collect()
    }

    fn render_prompt(&self, name: &str, args: Map<String, Value>) -> Result<String, ErrorData> {
        let prompt = self
            .inner
            .prompts
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| ErrorData::invalid_params(format!("unknown prompt: {name}"), None))?;
        for (arg, _, required) in &prompt.arguments {
            if *required && args.get(*arg).is_none_or(Value::is_null) {
                return Err(ErrorData::invalid_params(
                    format!("invalid args: {arg}: required argument is missing"),
                    None,
                ));
            }
        }
        (prompt.render)(&self.inner.state, &args)
            .map_err(|e| ErrorData::invalid_params(e.message, None))
    }
}

/// What rmcp's server handler does to every result before it answers (rmcp 3.11,
/// `handler/server.rs`): a client on `2026-07-28` or later gets the missing cache hints filled in,
/// an older one gets the `resultType: "complete"` discriminator and non-object tool output
/// stripped. The inline path must send the same bytes; `tests::inline_answers_match_rmcp` in
/// `stdio` checks it against rmcp for every protocol version rmcp knows.
fn shape_for_protocol(result: &mut ServerResult, protocol: Option<&ProtocolVersion>) {
    let current = protocol.is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
    if current {
        result.fill_missing_cache_hints();
    } else {
        result.strip_result_type_for_legacy_peer();
        result.strip_non_object_output_for_legacy_peer();
    }
}

/// rmcp's answer to `ping` on a session with the `initialize` lifecycle: an empty result, shaped
/// for `protocol` as every result is.
fn ping_result(protocol: Option<&ProtocolVersion>) -> ServerResult {
    let mut result = ServerResult::empty(());
    shape_for_protocol(&mut result, protocol);
    result
}

/// Moves a blocking piece of work off the async workers and maps a panic to an internal error.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ErrorData> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ErrorData::internal_error(format!("handler failed: {e}"), None))
}

/// The requests a server answers, each in the shape rmcp serves. The one `ServerHandler` of the
/// crate (`erased::Handler`) serves these through `erased::ErasedServer`, whose methods have no
/// defaults: a request answered here is one more method there, and the compiler asks for both.
impl<S: Send + Sync + 'static> Server<S> {
    /// The `initialize` answer: name, version, capabilities, instructions.
    fn info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::default();
        capabilities.tools = Some(Default::default());
        if !self.inner.prompts.is_empty() {
            capabilities.prompts = Some(Default::default());
        }
        let mut config = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(self.inner.name, self.inner.version));
        if let Some(text) = &self.inner.instructions {
            config = config.with_instructions(text.clone());
        }
        config
    }

    /// `tools/list`: every tool, in order, as a peer on `protocol` reads them.
    fn list_tools_result(&self, protocol: Option<&ProtocolVersion>) -> ListToolsResult {
        ListToolsResult::with_all_items(self.rmcp_tools(protocol))
    }

    /// `tools/call`, on the blocking pool.
    async fn call_tool_request(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let protocol = context.protocol_version();
        let elicit = Elicit::for_request(&context);
        let server = self.clone();
        let name = request.name.to_string();
        let args = request.arguments.map_or(Value::Null, Value::Object);
        let result = blocking(move || server.run_tool(&name, args, elicit.as_ref())).await?;
        Ok(to_call_result(result, protocol.as_ref()).into())
    }

    /// `prompts/list`: every prompt.
    fn list_prompts_result(&self) -> ListPromptsResult {
        ListPromptsResult::with_all_items(self.rmcp_prompts())
    }

    /// `prompts/get`, rendered on the blocking pool.
    async fn get_prompt_request(
        &self,
        request: GetPromptRequestParams,
    ) -> Result<GetPromptResponse, ErrorData> {
        let server = self.clone();
        let name = request.name.clone();
        let args: Map<String, Value> = request
            .arguments
            .map(|a| a.into_iter().collect())
            .unwrap_or_default();
        let text = blocking(move || server.render_prompt(&name, args)).await??;
        let mut result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]);
        result.description = Some(request.name);
        Ok(result.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, JsonSchema)]
    struct EchoArgs {
        message: String,
        /// Repeat the message this many times.
        times: Option<u32>,
        /// Per-line widths.
        widths: Option<Vec<u8>>,
    }

    #[derive(Debug, thiserror::Error)]
    enum Refusal {
        #[error("too loud: {0}")]
        TooLoud(String),
    }

    impl DomainError for Refusal {
        fn denied_reason(&self) -> Option<&str> {
            Some("too_loud")
        }
    }

    #[derive(Serialize, JsonSchema)]
    #[allow(dead_code)]
    struct EchoAnswer {
        message: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        widths: Option<Vec<u8>>,
    }

    fn server() -> Server<()> {
        Server::builder("test", ())
            .tool(
                Tool::new("plain", "Plain text.", |_: &(), _: EchoArgs| {
                    Ok(Reply::text("{\"looks\": \"like json\"}"))
                })
                .annotations(Annotations::read_only("Plain")),
            )
            .tool(
                Tool::new("echo", "Echo.", |_: &(), a: EchoArgs| {
                    if a.message.ends_with('!') {
                        return Err(Refusal::TooLoud(a.message).into());
                    }
                    let repeated = a.message.repeat(a.times.unwrap_or(1) as usize);
                    let mut reply = json!({ "message": repeated });
                    if let Some(widths) = a.widths {
                        reply["widths"] = json!(widths);
                    }
                    Ok(Reply::json(&reply))
                })
                .annotations(Annotations::additive("Echo").idempotent())
                .output::<EchoAnswer>(),
            )
            .tool(
                Tool::new("spell", "Spell.", |_: &(), a: EchoArgs| {
                    let letters: Vec<String> = a.message.chars().map(String::from).collect();
                    Ok(Reply::json(&letters))
                })
                .annotations(Annotations::read_only("Spell"))
                .output::<Vec<String>>(),
            )
            .build()
    }

    fn wire<T: Serialize>(value: T) -> Value {
        serde_json::to_value(value).unwrap()
    }

    #[test]
    fn structured_content_is_the_text_parsed_only_for_tools_with_an_output_type() {
        let out = server().call("echo", json!({"message": "hi", "widths": [1]}));
        assert_eq!(
            out.text(),
            "{\n  \"message\": \"hi\",\n  \"widths\": [\n    1\n  ]\n}"
        );
        assert_eq!(
            out.structured,
            Some(json!({"message": "hi", "widths": [1]}))
        );
        let plain = server().call("plain", json!({"message": "hi"}));
        assert_eq!(plain.structured, None, "a text answer is never structured");
        let refused = server().call("echo", json!({"message": "hi!"}));
        assert_eq!(refused.structured, None);
    }

    #[test]
    fn what_a_tool_lists_follows_the_peers_protocol_version() {
        let server = server();
        let echo = &server.tools()[1];
        let newest = wire(echo.describe(Some(&ProtocolVersion::V_2025_06_18)));
        assert_eq!(newest["title"], "Echo");
        assert_eq!(newest["annotations"]["idempotentHint"], true);
        assert_eq!(newest["outputSchema"]["type"], "object");
        assert_eq!(wire(echo.describe(None)), newest);
        let before_structured = wire(echo.describe(Some(&ProtocolVersion::V_2025_03_26)));
        assert_eq!(before_structured["annotations"]["readOnlyHint"], false);
        assert!(before_structured.get("title").is_none());
        assert!(before_structured.get("outputSchema").is_none());
        let first = wire(echo.describe(Some(&ProtocolVersion::V_2024_11_05)));
        assert!(first.get("annotations").is_none(), "{first}");
        let result = || server.run_tool("echo", json!({"message": "hi"}), None);
        let old = wire(to_call_result(
            result(),
            Some(&ProtocolVersion::V_2025_03_26),
        ));
        assert!(old.get("structuredContent").is_none(), "{old}");
        let new = wire(to_call_result(
            result(),
            Some(&ProtocolVersion::V_2025_06_18),
        ));
        assert_eq!(new["structuredContent"], json!({"message": "hi"}));
        assert_eq!(old["content"], new["content"]);
    }

    #[test]
    fn an_array_answer_is_structured_only_for_peers_that_take_any_json() {
        let server = server();
        let spell = &server.tools()[2];
        let listed = |v: &ProtocolVersion| wire(spell.describe(Some(v)));
        assert!(
            listed(&ProtocolVersion::V_2025_11_25)
                .get("outputSchema")
                .is_none()
        );
        assert_eq!(
            listed(&ProtocolVersion::V_2026_07_28)["outputSchema"]["type"],
            "array"
        );
        let result = || server.run_tool("spell", json!({"message": "ab"}), None);
        let old = wire(to_call_result(
            result(),
            Some(&ProtocolVersion::V_2025_11_25),
        ));
        assert!(old.get("structuredContent").is_none(), "{old}");
        let new = wire(to_call_result(
            result(),
            Some(&ProtocolVersion::V_2026_07_28),
        ));
        assert_eq!(new["structuredContent"], json!(["a", "b"]));
        assert_eq!(old["content"], new["content"]);
    }

    #[test]
    fn success_is_pretty_json_and_not_an_error() {
        let out = server().call("echo", json!({"message": "hi"}));
        assert!(!out.is_error);
        assert_eq!(out.text(), "{\n  \"message\": \"hi\"\n}");
    }

    #[test]
    fn domain_error_becomes_tool_error_with_denied_reason() {
        let out = server().call("echo", json!({"message": "hi!"}));
        assert!(out.is_error);
        assert_eq!(out.text(), "too loud: hi!");
        assert_eq!(out.denied.as_deref(), Some("too_loud"));
    }

    #[test]
    fn unknown_tool_and_bad_args_are_tool_errors() {
        let out = server().call("nope", json!({}));
        assert!(out.is_error);
        assert_eq!(out.text(), "unknown tool: nope");
        let out = server().call("echo", json!({"message": 3}));
        assert!(out.is_error);
        assert!(
            out.text().starts_with("invalid args: message"),
            "{}",
            out.text()
        );
        let out = server().call("echo", Value::Null);
        assert!(out.text().starts_with("invalid args: message: required"));
    }

    #[test]
    fn whole_number_floats_are_accepted_where_integers_are_expected() {
        let out = server().call(
            "echo",
            json!({"message": "ab", "times": 2.0, "widths": [3.0, 4]}),
        );
        assert!(!out.is_error, "{}", out.text());
        assert_eq!(out.json()["message"], "abab");
        assert_eq!(out.json()["widths"], json!([3, 4]));
        let fraction = server().call("echo", json!({"message": "ab", "times": 2.5}));
        assert_eq!(
            fraction.text(),
            "invalid args: times: expected integer, got number"
        );
    }

    #[test]
    fn wire_result_always_carries_is_error() {
        let ok = serde_json::to_value(to_call_result(Ok(Reply::text("x")), None)).unwrap();
        assert_eq!(ok["isError"], false);
        assert_eq!(ok["content"][0]["type"], "text");
        let err =
            serde_json::to_value(to_call_result(Err(ToolError::denied("no", "r")), None)).unwrap();
        assert_eq!(err["isError"], true);
        assert_eq!(err["_meta"]["denied"], "r");
    }
}
