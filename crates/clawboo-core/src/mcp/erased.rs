//! [`McpServer`]: one built server of any kind, its state type erased, so a program can hold the
//! four servers in one list and hand any of them to one of the three ways of running it (stdio,
//! Streamable HTTP, in process).
//!
//! Owns: the erasure (a [`Server<S>`] behind a trait object) and [`Handler`], the crate's one
//! `ServerHandler`: every way of serving (stdio, in process, Streamable HTTP) hands rmcp a
//! [`Handler`], so no second implementation can fall behind it. The requests a server answers are
//! the methods of [`ErasedServer`], which have no defaults: answering one more request means one
//! more method there, and the compiler asks for its implementation on [`Server<S>`] and for its use
//! here (a unit test checks that no other `ServerHandler` implementation appears in `mcp/`).
//! Guarantees: whoever ends a session runs the server's close hooks once the session is over
//! ([`serve_stdio`] does, as do the in-process client and the HTTP service).
//!
//! Decision: a built server is **one session's** server. Its close hooks (the tools server's
//! broker stops waiting for approvals) run when that session ends; serve a fresh server per
//! session (the HTTP service builds one per `initialize` for this reason).
//!
//! Must never: expose rmcp types in its public methods (rmcp's version is not part of the API).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse,
    ListPromptsResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerConfig,
    ServerResult,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::Server;
use super::stdio::{self, ServeError};

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
type Context = RequestContext<RoleServer>;

/// What every [`Server<S>`] can do once its state type is forgotten: its identity, its close
/// hooks, stdio serving, and the requests it answers (no method has a default).
trait ErasedServer: Send + Sync {
    fn name(&self) -> &'static str;
    fn version(&self) -> &'static str;
    fn tool_names(&self) -> Vec<&'static str>;
    fn close(&self);
    fn serve_stdio(&self) -> BoxFuture<'static, Result<(), ServeError>>;
    fn info(&self) -> ServerConfig;
    fn list_tools(&self, context: &Context) -> ListToolsResult;
    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: Context,
    ) -> BoxFuture<'_, Result<CallToolResponse, ErrorData>>;
    fn answers_inline(&self, request: &CallToolRequestParams) -> bool;
    fn answers_quickly(&self, request: &CallToolRequestParams) -> bool;
    fn call_inline(
        &self,
        request: CallToolRequestParams,
        protocol: Option<&ProtocolVersion>,
    ) -> Result<ServerResult, ErrorData>;
    fn list_prompts(&self) -> ListPromptsResult;
    fn get_prompt(
        &self,
        request: GetPromptRequestParams,
    ) -> BoxFuture<'_, Result<GetPromptResponse, ErrorData>>;
}

impl<S: Send + Sync + 'static> ErasedServer for Server<S> {
    fn name(&self) -> &'static str {
        Server::name(self)
    }

    fn version(&self) -> &'static str {
        Server::version(self)
    }

    fn tool_names(&self) -> Vec<&'static str> {
        self.tools().iter().map(|t| t.name()).collect()
    }

    fn close(&self) {
        Server::close(self)
    }

    fn serve_stdio(&self) -> BoxFuture<'static, Result<(), ServeError>> {
        Box::pin(stdio::serve(self.clone()))
    }

    fn info(&self) -> ServerConfig {
        Server::info(self)
    }

    fn list_tools(&self, context: &Context) -> ListToolsResult {
        self.list_tools_result(context.protocol_version().as_ref())
    }

    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: Context,
    ) -> BoxFuture<'_, Result<CallToolResponse, ErrorData>> {
        Box::pin(self.call_tool_request(request, context))
    }

    fn answers_inline(&self, request: &CallToolRequestParams) -> bool {
        Server::answers_inline(self, request)
    }

    fn answers_quickly(&self, request: &CallToolRequestParams) -> bool {
        Server::answers_quickly(self, request)
    }

    fn call_inline(
        &self,
        request: CallToolRequestParams,
        protocol: Option<&ProtocolVersion>,
    ) -> Result<ServerResult, ErrorData> {
        Server::call_inline(self, request, protocol)
    }

    fn list_prompts(&self) -> ListPromptsResult {
        self.list_prompts_result()
    }

    fn get_prompt(
        &self,
        request: GetPromptRequestParams,
    ) -> BoxFuture<'_, Result<GetPromptResponse, ErrorData>> {
        Box::pin(self.get_prompt_request(request))
    }
}

/// A server as rmcp serves it, over any transport: the crate's one `ServerHandler`. Not public, so
/// rmcp's traits stay out of the API.
#[derive(Clone)]
pub(crate) struct Handler(Arc<dyn ErasedServer>);

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        self.0.info()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: Context,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(self.0.list_tools(&context))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: Context,
    ) -> Result<CallToolResponse, ErrorData> {
        self.0.call_tool(request, context).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: Context,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(self.0.list_prompts())
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: Context,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.0.get_prompt(request).await
    }
}

/// A built MCP server: tasks, memory, tools, teamchat or ClawBrain, over its own state.
///
/// Build one with [`tasks_server`](crate::tasks_server), [`memory_server`](crate::memory_server),
/// [`tools_server`](crate::tools_server), [`teamchat_server`](crate::teamchat_server) or
/// [`clawbrain_server`](crate::clawbrain_server), then run it one of three ways:
/// [`serve_stdio`], an [`McpHttpService`](crate::McpHttpService) factory, or
/// [`connect_in_memory`](crate::connect_in_memory) / [`probe`](crate::probe).
///
/// A server is one session's server: when that session ends its close hooks run (a tools call
/// waiting for a person stops waiting), so build a fresh one per session. Cloning is cheap and
/// shares the server.
#[derive(Clone)]
pub struct McpServer(Arc<dyn ErasedServer>);

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.name())
            .field("version", &self.version())
            .finish()
    }
}

impl McpServer {
    /// Erases `server`'s state type.
    pub(crate) fn new<S: Send + Sync + 'static>(server: Server<S>) -> Self {
        Self(Arc::new(server))
    }

    /// `server` as rmcp serves it (stdio keeps the typed server for its inline answers and hands
    /// rmcp this).
    pub(crate) fn handler_of<S: Send + Sync + 'static>(server: &Server<S>) -> Handler {
        Handler(Arc::new(server.clone()))
    }

    /// The name it advertises in `initialize` (`clawboo-tasks`, `clawboo-memory`, …).
    pub fn name(&self) -> &'static str {
        self.0.name()
    }

    /// The version it advertises in `initialize` ([`VERSION`](crate::VERSION)).
    pub fn version(&self) -> &'static str {
        self.0.version()
    }

    /// The names of the tools it lists, in `tools/list` order.
    pub fn tool_names(&self) -> Vec<&'static str> {
        self.0.tool_names()
    }

    /// Ends the session for the server's state: runs its close hooks.
    pub(crate) fn close(&self) {
        self.0.close()
    }

    /// Whether `request` may be answered with [`McpServer::call_inline`] (`Server::answers_inline`).
    pub(crate) fn answers_inline(&self, request: &CallToolRequestParams) -> bool {
        self.0.answers_inline(request)
    }

    /// Whether `request` may be answered with [`McpServer::call_inline`] on an async worker
    /// (`Server::answers_quickly`).
    pub(crate) fn answers_quickly(&self, request: &CallToolRequestParams) -> bool {
        self.0.answers_quickly(request)
    }

    /// Runs a `tools/call` on the calling thread, shaped as rmcp shapes it for a peer on
    /// `protocol` (`Server::call_inline`).
    pub(crate) fn call_inline(
        &self,
        request: CallToolRequestParams,
        protocol: Option<&ProtocolVersion>,
    ) -> Result<ServerResult, ErrorData> {
        self.0.call_inline(request, protocol)
    }

    /// The server as rmcp serves it.
    pub(crate) fn handler(&self) -> Handler {
        Handler(Arc::clone(&self.0))
    }
}

/// Serves `server` on this process's stdin and stdout (newline-delimited JSON-RPC) until stdin
/// closes or SIGTERM arrives, then runs its close hooks. Diagnostics go to stderr; stdout carries
/// protocol messages only. The calling program owns the process: call it from inside a tokio
/// runtime, once per process.
///
/// Errors: the session could not start, or stdin/stdout failed.
pub async fn serve_stdio(server: McpServer) -> Result<(), ServeError> {
    let outcome = server.0.serve_stdio().await;
    server.close();
    outcome
}

#[cfg(test)]
mod tests {
    /// The files of `mcp/` that implement rmcp's `ServerHandler`: only this one may.
    #[test]
    fn handler_is_the_only_server_handler() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/mcp");
        let needle = ["impl", "ServerHandler", "for"].join(" ");
        let mut implementing = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                for _ in text.matches(&needle) {
                    implementing.push(entry.file_name().to_string_lossy().into_owned());
                }
            }
        }
        assert_eq!(implementing, ["erased.rs"]);
    }
}
