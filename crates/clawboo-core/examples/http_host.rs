//! A host of its own that serves the tasks and memory servers over Streamable HTTP on its own
//! router, beside a `/health` route of its own: hyper directly, no framework.
//!
//! ```sh
//! cargo run -p clawboo-core --example http_host -- [--listen 127.0.0.1:8080] [--db PATH]
//! claude mcp add --transport http team-tasks 'http://127.0.0.1:8080/mcp/tasks?scopeTeamId=team-a'
//! ```
//!
//! Each MCP session gets a fresh server over its own database connection, bound from the
//! `initialize` URL's query (`scopeTeamId`, …), as the library's `serve` host does — minus the
//! signature check, which is that host's policy. Ctrl-C ends every session.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clawboo_core::{
    Binding, Db, Embeddings, HttpBody, McpHttpService, ServerKind, SessionRefusal, memory_server,
    tasks_server,
};
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

/// The host's routes to its two services.
struct Routes {
    tasks: McpHttpService,
    memory: McpHttpService,
}

impl Routes {
    fn new(db: PathBuf) -> Self {
        // One embedding probe for the whole host, shared by every memory session.
        let embeddings = Embeddings::from_env();
        let open = move |db: &PathBuf| {
            Db::open(db).map_err(|e| SessionRefusal::internal(format!("database: {e}")))
        };
        let tasks_db = db.clone();
        let tasks = McpHttpService::new(move |request| {
            let query = request.uri.query().unwrap_or_default();
            let binding = Binding::from_query(ServerKind::Tasks, query);
            Ok(tasks_server(open(&tasks_db)?, binding.tasks()))
        });
        let memory = McpHttpService::new(move |request| {
            let query = request.uri.query().unwrap_or_default();
            let binding = Binding::from_query(ServerKind::Memory, query);
            Ok(memory_server(open(&db)?, &embeddings, binding.memory()))
        });
        Self { tasks, memory }
    }

    async fn answer(&self, request: Request<hyper::body::Incoming>) -> Response<HttpBody> {
        match request.uri().path() {
            "/mcp/tasks" => self.tasks.handle(request).await,
            "/mcp/memory" => self.memory.handle(request).await,
            "/health" => {
                let body = format!(
                    "{{\"ok\":true,\"sessions\":{{\"tasks\":{},\"memory\":{}}}}}",
                    self.tasks.live_sessions().await,
                    self.memory.live_sessions().await
                );
                Response::new(Full::new(body.into()).boxed())
            }
            _ => {
                let mut missing = Response::new(Full::new("no such route\n".into()).boxed());
                *missing.status_mut() = StatusCode::NOT_FOUND;
                missing
            }
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut listen: SocketAddr = "127.0.0.1:8080".parse()?;
    let mut db = PathBuf::from("clawboo.db");
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        match (flag.as_str(), args.next()) {
            ("--listen", Some(addr)) => listen = addr.parse()?,
            ("--db", Some(path)) => db = path.into(),
            _ => {
                return Err(
                    format!("usage: http_host [--listen ADDR] [--db PATH]; got {flag:?}").into(),
                );
            }
        }
    }
    let routes = Arc::new(Routes::new(db));
    let listener = tokio::net::TcpListener::bind(listen).await?;
    println!(
        "listening on http://{}/mcp/{{tasks,memory}} and /health",
        listener.local_addr()?
    );

    // Close the servers of sessions that idled out, now and then.
    let sweeper = tokio::spawn({
        let routes = Arc::clone(&routes);
        async move {
            let mut tick = tokio::time::interval(Duration::from_secs(30));
            loop {
                tick.tick().await;
                routes.tasks.sweep().await;
                routes.memory.sweep().await;
            }
        }
    });
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => accepted?,
            _ = tokio::signal::ctrl_c() => break,
        };
        let routes = Arc::clone(&routes);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let routes = Arc::clone(&routes);
                async move { Ok::<_, Infallible>(routes.answer(request).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
    sweeper.abort();
    routes.tasks.close_all().await;
    routes.memory.close_all().await;
    Ok(())
}
