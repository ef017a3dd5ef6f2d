//! The in-process way to run a server: an MCP client (rmcp's own client role) connected to an
//! [`McpServer`] over an in-memory duplex pipe, so a program (an agent runtime, a supervisor, a
//! test harness) calls the tools with no socket and no child process. The analogue of the
//! reference's `connectInMemoryClient` and `probeServer`.
//!
//! Owns: [`connect_in_memory`], the [`InMemoryClient`] it returns, what a call yields
//! ([`CallOutcome`], `denied` read from the result's `_meta.denied`) and [`probe`].
//!
//! Guarantees: the bytes crossing the pipe are the same JSON-RPC a stdio client would send, so a
//! server answers in process exactly as it answers over stdio (`initialize` included); calls may run
//! concurrently from several tasks; [`InMemoryClient::close`] is idempotent and never fails, ends
//! both the client and the server session and runs the server's close hooks (a tools call waiting
//! for a person stops waiting); dropping the client does the same without waiting. [`probe`] closes
//! both ends whether the listing succeeded or not.
//!
//! Decisions: `output` joins the result's text blocks with `\n` (the servers answer one block, plus
//! a note block when an output was compacted); arguments must be a JSON object (`null` means none),
//! anything else is refused before it is sent; no timeout is imposed (a supervisor wraps [`probe`] in
//! its own, e.g. `tokio::time::timeout`).
//!
//! Must never: expose rmcp types; leave a session running after [`InMemoryClient::close`].

use std::sync::Mutex;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{Peer, RunningService};
use rmcp::{RoleClient, RoleServer};
use serde_json::{Map, Value};

use super::erased::{Handler, McpServer};

/// The size of each direction's in-memory buffer; a full buffer makes the writer wait.
const PIPE_BYTES: usize = 64 * 1024;

/// Why an in-process client could not connect or a request failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    /// The MCP session did not start (the `initialize` exchange failed).
    #[error("the in-process MCP session did not start: {0}")]
    Connect(String),
    /// The client was closed before the request.
    #[error("the in-process MCP client is closed")]
    Closed,
    /// The arguments were not a JSON object; nothing was sent.
    #[error("tool arguments must be a JSON object, got {0}")]
    Arguments(String),
    /// The server answered the request with a protocol error, or the session ended under it.
    #[error("the MCP request failed: {0}")]
    Request(String),
}

/// One tool as `tools/list` serves it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// The tool's name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: Option<String>,
    /// The JSON Schema of its arguments.
    pub input_schema: Map<String, Value>,
}

/// What a tool call yields, as a model would read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallOutcome {
    /// The result's text blocks, joined with `\n`.
    pub output: String,
    /// Whether the result is a tool-error (`isError: true`).
    pub is_error: bool,
    /// The typed reason a policy refused the call (`_meta.denied`, e.g. `approval:deny`), if it did.
    pub denied: Option<String>,
}

impl CallOutcome {
    /// `output` parsed as JSON, when it is JSON (most tools answer a JSON document).
    pub fn json(&self) -> Option<Value> {
        serde_json::from_str(&self.output).ok()
    }

    fn from_result(result: &CallToolResult) -> Self {
        let read = super::CallOutcome::read(result);
        Self {
            output: read.blocks.join("\n"),
            is_error: read.is_error,
            denied: read.denied,
        }
    }
}

/// Both ends of one in-process session.
struct Ends {
    client: RunningService<RoleClient, ()>,
    server: RunningService<RoleServer, Handler>,
}

/// A long-lived MCP client connected in process to one server ([`connect_in_memory`]).
pub struct InMemoryClient {
    server: McpServer,
    peer: Peer<RoleClient>,
    ends: Mutex<Option<Ends>>,
}

impl std::fmt::Debug for InMemoryClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InMemoryClient")
            .field("server", &self.server.name())
            .field("closed", &self.is_closed())
            .finish()
    }
}

/// Connects a new MCP client to `server` in process and completes `initialize`. The client owns the
/// server's session: closing or dropping the client ends it.
///
/// Call it inside a tokio runtime (the sessions run on it; tool handlers run on its blocking pool).
pub async fn connect_in_memory(server: McpServer) -> Result<InMemoryClient, ClientError> {
    let (client_io, server_io) = tokio::io::duplex(PIPE_BYTES);
    let server_side = tokio::spawn(rmcp::serve_server(server.handler(), server_io));
    let client = match rmcp::serve_client((), client_io).await {
        Ok(client) => client,
        Err(e) => {
            server_side.abort();
            server.close();
            return Err(ClientError::Connect(e.to_string()));
        }
    };
    let server_end = match server_side.await {
        Ok(Ok(running)) => running,
        Ok(Err(e)) => {
            let _ = client.cancel().await;
            server.close();
            return Err(ClientError::Connect(e.to_string()));
        }
        Err(e) => {
            let _ = client.cancel().await;
            server.close();
            return Err(ClientError::Connect(e.to_string()));
        }
    };
    Ok(InMemoryClient {
        peer: client.peer().clone(),
        server,
        ends: Mutex::new(Some(Ends {
            client,
            server: server_end,
        })),
    })
}

impl InMemoryClient {
    /// The name the server advertised (`clawboo-tasks`, …).
    pub fn server_name(&self) -> &'static str {
        self.server.name()
    }

    /// Whether [`close`](Self::close) has run.
    pub fn is_closed(&self) -> bool {
        self.ends
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_none()
    }

    fn check_open(&self) -> Result<(), ClientError> {
        if self.is_closed() {
            Err(ClientError::Closed)
        } else {
            Ok(())
        }
    }

    /// The server's tools (`tools/list`, every page).
    pub async fn list_tools(&self) -> Result<Vec<ToolInfo>, ClientError> {
        self.check_open()?;
        let tools = self
            .peer
            .list_all_tools()
            .await
            .map_err(|e| self.request_error(e))?;
        Ok(tools
            .into_iter()
            .map(|tool| ToolInfo {
                name: tool.name.into_owned(),
                description: tool.description.map(|d| d.into_owned()),
                input_schema: (*tool.input_schema).clone(),
            })
            .collect())
    }

    /// Calls tool `name` with `args` (a JSON object, or `null` for none). A tool-error is an
    /// `Ok` outcome with `is_error` set, as a model would see it; `Err` is for a protocol failure.
    pub async fn call_tool(&self, name: &str, args: Value) -> Result<CallOutcome, ClientError> {
        let arguments = match args {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => return Err(ClientError::Arguments(kind_of(&other).to_owned())),
        };
        self.check_open()?;
        let mut params = CallToolRequestParams::new(name.to_owned());
        params.arguments = arguments;
        let result = self
            .peer
            .call_tool(params)
            .await
            .map_err(|e| self.request_error(e))?;
        Ok(CallOutcome::from_result(&result))
    }

    /// Ends the session: runs the server's close hooks, then stops both ends and waits for them.
    /// Idempotent; never fails. A call still in flight gets [`ClientError::Request`].
    pub async fn close(&self) {
        let ends = self.ends.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(ends) = ends {
            self.server.close();
            let _ = ends.client.cancel().await;
            let _ = ends.server.cancel().await;
        }
    }

    fn request_error(&self, error: rmcp::service::ServiceError) -> ClientError {
        if self.is_closed() {
            ClientError::Closed
        } else {
            ClientError::Request(error.to_string())
        }
    }
}

impl Drop for InMemoryClient {
    /// Ends the session without waiting: the close hooks run now, both ends stop on their own.
    fn drop(&mut self) {
        let ends = self
            .ends
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(ends) = ends {
            self.server.close();
            ends.client.cancellation_token().cancel();
            ends.server.cancellation_token().cancel();
        }
    }
}

/// The JSON type of a value, for an error message (never the value: it may hold a secret).
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Liveness check: connects an in-process client to `server`, lists its tools and returns how
/// many there are. Both ends are closed whatever happened (the server's close hooks run too).
pub async fn probe(server: McpServer) -> Result<usize, ClientError> {
    let client = connect_in_memory(server).await?;
    let listed = client.list_tools().await;
    client.close().await;
    listed.map(|tools| tools.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::{Reply, Server, Tool, ToolError};
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Deserialize, JsonSchema)]
    struct SayArgs {
        word: String,
    }

    fn server(closed: Arc<AtomicUsize>) -> McpServer {
        McpServer::new(
            Server::builder("test-server", ())
                .tool(Tool::new("say", "Say a word.", |_: &(), a: SayArgs| {
                    if a.word == "no" {
                        return Err(ToolError::denied("refused", "policy:no"));
                    }
                    Ok(Reply::text(a.word).with_block("second"))
                }))
                .on_close(move |_| {
                    closed.fetch_add(1, Ordering::SeqCst);
                })
                .build(),
        )
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_call_joins_text_blocks_and_reads_denied_from_meta() {
        let closed = Arc::new(AtomicUsize::new(0));
        let client = connect_in_memory(server(Arc::clone(&closed)))
            .await
            .unwrap();
        assert_eq!(client.server_name(), "test-server");
        let ok = client
            .call_tool("say", json!({"word": "hi"}))
            .await
            .unwrap();
        assert_eq!(ok.output, "hi\nsecond");
        assert!(!ok.is_error);
        assert_eq!(ok.denied, None);
        let denied = client
            .call_tool("say", json!({"word": "no"}))
            .await
            .unwrap();
        assert!(denied.is_error);
        assert_eq!(denied.denied.as_deref(), Some("policy:no"));
        let bad = client.call_tool("say", json!([1])).await.unwrap_err();
        assert_eq!(bad, ClientError::Arguments("an array".into()));
        client.close().await;
        client.close().await;
        assert_eq!(closed.load(Ordering::SeqCst), 1, "close hooks run once");
        assert_eq!(client.list_tools().await.unwrap_err(), ClientError::Closed);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dropping_an_open_client_runs_the_close_hooks() {
        let closed = Arc::new(AtomicUsize::new(0));
        let client = connect_in_memory(server(Arc::clone(&closed)))
            .await
            .unwrap();
        drop(client);
        assert_eq!(closed.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn probe_counts_tools_and_closes() {
        let closed = Arc::new(AtomicUsize::new(0));
        assert_eq!(probe(server(Arc::clone(&closed))).await, Ok(1));
        assert_eq!(closed.load(Ordering::SeqCst), 1);
    }
}
