//! [`McpServer`]: one built server of any kind, its state type erased, so a program can hold the
//! four servers in one list and hand any of them to one of the three ways of running it (stdio,
//! Streamable HTTP, in process).
//!
//! Owns: the erasure (a [`Server<S>`] behind a trait object, served to rmcp through [`Handler`])
//! and [`serve_stdio`]. Guarantees: an erased server answers exactly as the [`Server<S>`] it wraps
//! ([`Handler`] forwards every request the server handles and leaves the rest to rmcp's defaults,
//! as [`Server<S>`] does); whoever ends a session runs the server's close hooks once the session is
//! over ([`serve_stdio`] does, as do the in-process client and the HTTP service).
//!
//! Decision: a built server is **one session's** server. Its close hooks (the tools server's
//! broker stops waiting for approvals) run when that session ends; serve a fresh server per
//! session (the HTTP service builds one per `initialize` for this reason).
//!
//! Must never: expose rmcp types in its public methods (rmcp's version is not part of the API), or
//! fall behind `Server<S>`'s `ServerHandler` implementation: a method overridden there is forwarded
//! here too.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse,
    ListPromptsResult, ListToolsResult, PaginatedRequestParams, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::Server;
use super::stdio::{self, ServeError};

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
type Context = RequestContext<RoleServer>;

/// What every [`Server<S>`] can do once its state type is forgotten: its identity, its close
/// hooks, stdio serving, and the requests its [`ServerHandler`] implementation answers.
trait ErasedServer: Send + Sync {
    fn name(&self) -> &'static str;
    fn version(&self) -> &'static str;
    fn tool_names(&self) -> Vec<&'static str>;
    fn close(&self);
    fn serve_stdio(&self) -> BoxFuture<'static, Result<(), ServeError>>;
    fn info(&self) -> ServerConfig;
    fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: Context,
    ) -> BoxFuture<'_, Result<ListToolsResult, ErrorData>>;
    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: Context,
    ) -> BoxFuture<'_, Result<CallToolResponse, ErrorData>>;
    fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: Context,
    ) -> BoxFuture<'_, Result<ListPromptsResult, ErrorData>>;
    fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: Context,
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
        ServerHandler::get_info(self)
    }

    fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: Context,
    ) -> BoxFuture<'_, Result<ListToolsResult, ErrorData>> {
        Box::pin(ServerHandler::list_tools(self, request, context))
    }

    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: Context,
    ) -> BoxFuture<'_, Result<CallToolResponse, ErrorData>> {
        Box::pin(ServerHandler::call_tool(self, request, context))
    }

    fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: Context,
    ) -> BoxFuture<'_, Result<ListPromptsResult, ErrorData>> {
        Box::pin(ServerHandler::list_prompts(self, request, context))
    }

    fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: Context,
    ) -> BoxFuture<'_, Result<GetPromptResponse, ErrorData>> {
        Box::pin(ServerHandler::get_prompt(self, request, context))
    }
}

/// An [`McpServer`] as rmcp serves it (in process and over HTTP). Not public, so rmcp's traits stay
/// out of the API.
#[derive(Clone)]
pub(crate) struct Handler(Arc<dyn ErasedServer>);

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        self.0.info()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: Context,
    ) -> Result<ListToolsResult, ErrorData> {
        self.0.list_tools(request, context).await
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
        request: Option<PaginatedRequestParams>,
        context: Context,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.0.list_prompts(request, context).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: Context,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.0.get_prompt(request, context).await
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
