//! The Streamable HTTP service mounted by a host of its own, through the public surface only: a
//! hyper server on a loopback port routes `/agents/<id>/mcp/tasks` to [`McpHttpService`] and keeps
//! its own `/health`; a plain HTTP client speaks JSON-RPC to it.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;

use clawboo_core::{
    Binding, Db, HttpBody, McpHttpService, ServerKind, SessionRefusal, tasks_server,
};
use clawboo_tests::TempDir;
use clawboo_tests::http::{Reply, initialize_message, raw_request};
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

/// The host's router: the MCP service under the agent's own prefix, its own health route, 404
/// for the rest.
async fn route(
    tasks: McpHttpService,
    request: Request<hyper::body::Incoming>,
) -> Response<HttpBody> {
    let path = request.uri().path().to_owned();
    if path == "/health" {
        return Response::new(Full::new("host ok".into()).boxed());
    }
    if let Some(rest) = path.strip_prefix("/agents/")
        && rest
            .split_once('/')
            .is_some_and(|(_, tail)| tail == "mcp/tasks")
    {
        return tasks.handle(request).await;
    }
    let mut missing = Response::new(Full::new("not here".into()).boxed());
    *missing.status_mut() = StatusCode::NOT_FOUND;
    missing
}

/// Starts the host on `127.0.0.1:0` over the database at `db`; returns its address.
async fn start_host(db: PathBuf) -> (SocketAddr, McpHttpService) {
    let tasks = McpHttpService::new(move |request| {
        let query = request.uri.query().unwrap_or_default();
        let binding = Binding::from_query(ServerKind::Tasks, query);
        let db = Db::open(&db).map_err(|e| SessionRefusal::internal(e.to_string()))?;
        Ok(tasks_server(db, binding.tasks()))
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let service = tasks.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let tasks = service.clone();
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(move |request| {
                    let tasks = tasks.clone();
                    async move { Ok::<_, Infallible>(route(tasks, request).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), handler)
                    .await;
            });
        }
    });
    (addr, tasks)
}

/// One blocking HTTP exchange, off the async workers.
async fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Value,
) -> Reply {
    let mut all = vec![
        ("Host".to_owned(), addr.to_string()),
        ("Content-Type".to_owned(), "application/json".to_owned()),
        (
            "Accept".to_owned(),
            "application/json, text/event-stream".to_owned(),
        ),
    ];
    all.extend(
        headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    let (method, path) = (method.to_owned(), path.to_owned());
    let body = if body.is_null() {
        Vec::new()
    } else {
        body.to_string().into_bytes()
    };
    tokio::task::spawn_blocking(move || raw_request(&addr.to_string(), &method, &path, &all, &body))
        .await
        .unwrap()
}

/// The JSON-RPC response with `id` in `reply`.
fn response(reply: &Reply, id: u64) -> Value {
    reply
        .messages()
        .into_iter()
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("no response {id} in {}", reply.body))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_answers_under_the_host_s_own_prefix_with_a_binding_from_the_query() {
    let dir = TempDir::new("lib-http");
    let (addr, tasks) = start_host(dir.db_path()).await;
    let mount = "/agents/a1/mcp/tasks?scopeTeamId=team-x";

    let health = send(addr, "GET", "/health", &[], Value::Null).await;
    assert_eq!((health.status, health.body.as_str()), (200, "host ok"));
    let elsewhere = send(addr, "POST", "/mcp/tasks", &[], initialize_message(0)).await;
    assert_eq!(
        elsewhere.status, 404,
        "only the host's route reaches the service"
    );

    let opened = send(addr, "POST", mount, &[], initialize_message(0)).await;
    assert_eq!(opened.status, 200, "{}", opened.body);
    assert_eq!(
        response(&opened, 0)["result"]["serverInfo"]["name"],
        "clawboo-tasks"
    );
    let session = opened
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let with_session = [("mcp-session-id", session.as_str())];
    let ack = send(
        addr,
        "POST",
        mount,
        &with_session,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(ack.status, 202, "{}", ack.body);
    assert_eq!(tasks.live_sessions().await, 1);

    let listed = send(
        addr,
        "POST",
        mount,
        &with_session,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}),
    )
    .await;
    let tools = response(&listed, 1)["result"]["tools"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(tools, 13);
    let created = send(
        addr,
        "POST",
        mount,
        &with_session,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "create_task", "arguments": {"title": "ship it", "teamId": "other"}}}),
    )
    .await;
    let result = response(&created, 2)["result"].clone();
    assert_eq!(result["isError"], false, "{result}");
    let task: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        task["teamId"], "team-x",
        "the session is bound from the initialize URL"
    );

    let ended = send(addr, "DELETE", mount, &with_session, Value::Null).await;
    assert!((200..300).contains(&ended.status), "{ended:?}");
    let after = send(
        addr,
        "POST",
        mount,
        &with_session,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}}),
    )
    .await;
    assert_eq!(after.status, 400);
    assert_eq!(
        after.json()["error"]["message"],
        "No valid session; send an initialize request first."
    );
    tasks.close_all().await;
    assert_eq!(tasks.live_sessions().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_a_browser_origin_and_an_oversized_body_are_refused() {
    let dir = TempDir::new("lib-http-refusals");
    let (addr, tasks) = start_host(dir.db_path()).await;
    let mount = "/agents/a1/mcp/tasks";
    let from_page = send(
        addr,
        "POST",
        mount,
        &[("Origin", "http://evil.example")],
        initialize_message(0),
    )
    .await;
    assert_eq!(from_page.status, 403, "{}", from_page.body);
    let huge = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                      "params": {"padding": "x".repeat(3 * 1024 * 1024)}});
    let too_large = send(addr, "POST", mount, &[], huge).await;
    assert_eq!(too_large.status, 413);
    assert_eq!(tasks.live_sessions().await, 0, "no session was opened");
}
