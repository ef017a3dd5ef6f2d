//! The HTTP host (`serve`), driven over real loopback sockets: every MCP mount over Streamable HTTP
//! (ClawBrain's on the vault the host names), seed 003's session rules, who may connect, the limits, the REST routes, URL bindings, and
//! an approval released across processes.

use std::time::Duration;

use clawboo_tests::http::{Host, Reply, initialize_message, poll_until, raw_request};
use clawboo_tests::{Server, TempDir, clawbrain_tools};
use serde_json::{Value, json};

const TOOLS: &str = "clawboo-mcp-tools";

/// A credential-shaped value (fresh, fake) that must never come back from the host.
const SECRET: &str = "sk-httpfakefakefake0123456789";

fn host_all(dir: &TempDir, extra: &[&str]) -> Host {
    let mut args = vec!["--all"];
    args.extend_from_slice(extra);
    Host::start(TOOLS, &args, &dir.db_path(), &[])
}

fn assert_no_secret(reply: &Reply) {
    assert!(
        !reply.body.contains(SECRET) && !reply.body.contains("httpfakefake"),
        "a secret came back: {}",
        reply.body
    );
}

#[test]
fn each_mount_initializes_lists_and_calls_over_streamable_http() {
    let dir = TempDir::new("http-mounts");
    let host = host_all(&dir, &[]);
    let cases: [(&str, &str, Value, &str); 4] = [
        (
            "tasks",
            "create_task",
            json!({"title": "over http", "teamId": "tm1"}),
            "over http",
        ),
        (
            "memory",
            "memory_save",
            json!({"title": "t", "content": "over http", "scopeTeamId": "tm1"}),
            "over http",
        ),
        (
            "tools",
            "echo",
            json!({"message": "over http"}),
            "over http",
        ),
        (
            "teamchat",
            "team_chat_post",
            json!({"text": "over http", "authorAgentId": "a1", "teamId": "tm1"}),
            "team:tm1",
        ),
    ];
    for (server, tool, args, expected) in cases {
        let mut session = host.session(&format!("/api/mcp/{server}"));
        let names = session.tool_names();
        assert!(names.iter().any(|n| n == tool), "{server}: {names:?}");
        let reply = session.call(tool, args);
        assert!(!reply.is_error, "{server}/{tool}: {}", reply.text());
        assert!(
            reply.text().contains(expected),
            "{server}: {}",
            reply.text()
        );
        assert_eq!(session.request("ping", json!({}))["result"], json!({}));
    }
    let mut tasks = host.session("/api/mcp/tasks");
    let listed = tasks.call("list_tasks", json!({"teamId": "tm1"}));
    assert!(listed.text().contains("over http"), "{}", listed.text());
}

#[test]
fn clawbrain_is_mounted_on_the_vault_the_host_names_and_stores_then_finds_over_http() {
    let dir = TempDir::new("http-clawbrain");
    let vault = dir.path().join("vault");
    let vault_arg = vault.display().to_string();
    let host = Host::start(
        "clawboo-mcp-memory",
        &["--vault", &vault_arg],
        &dir.db_path(),
        &[],
    );
    let mut session = host.session("/api/mcp/clawbrain");
    assert_eq!(session.tool_names(), clawbrain_tools());
    let stored = session.call(
        "memory_store",
        json!({"type": "entity", "category": "projects", "name": "http-mount", "content": "Reached over streamable http", "tags": ["http"]}),
    );
    assert!(!stored.is_error, "{}", stored.text());
    assert_eq!(stored.json()["id"], "entity-projects-http-mount");
    let found = session.call("memory_search", json!({"query": "streamable"}));
    assert!(!found.is_error, "{}", found.text());
    assert_eq!(
        found.json()["results"][0]["id"],
        "entity-projects-http-mount"
    );
    assert!(
        vault.join("entities/projects/http-mount.md").is_file(),
        "the memory is a file in the host's vault"
    );
    // The memory bin's own server is mounted beside it.
    let mut memory = host.session("/api/mcp/memory");
    assert!(memory.tool_names().iter().any(|n| n == "memory_save"));
    let health = host.get("/api/health").json();
    assert_eq!(health["sessions"]["clawbrain"], 1, "{health}");
}

#[test]
fn without_a_vault_clawbrain_is_not_mounted_and_all_mounts_it_with_one() {
    let dir = TempDir::new("http-clawbrain-all");
    let host = host_all(&dir, &[]);
    let missing = host.get("/api/mcp/clawbrain");
    assert_eq!(missing.status, 404, "{}", missing.body);
    let health = host.get("/api/health").json();
    assert_eq!(
        clawboo_tests::object_keys(&health["sessions"]),
        ["tasks", "memory", "tools", "teamchat"]
    );
    drop(host);
    let vault = dir.path().join("vault").display().to_string();
    let with_vault = Host::start(
        TOOLS,
        &["--all"],
        &dir.db_path(),
        &[("MEMORY_DIR", vault.as_str())],
    );
    let mut session = with_vault.session("/api/mcp/clawbrain");
    assert_eq!(session.tool_names(), clawbrain_tools());
    // A URL cannot name another vault: the query is not read for it.
    let elsewhere = dir.path().join("elsewhere").display().to_string();
    let mut steered = with_vault.session(&format!(
        "/api/mcp/clawbrain?vault={elsewhere}&MEMORY_DIR={elsewhere}"
    ));
    let stored = steered.call(
        "memory_store",
        json!({"type": "entity", "category": "people", "name": "ann", "content": "x"}),
    );
    assert!(!stored.is_error, "{}", stored.text());
    assert!(!dir.path().join("elsewhere").exists());
}

#[test]
fn session_errors_follow_seed_003() {
    let dir = TempDir::new("http-sessions");
    let host = host_all(&dir, &[]);
    let no_session = json!({"jsonrpc":"2.0","error":{"code":-32000,"message":"No valid session; send an initialize request first."},"id":null});
    let bad_id = json!({"jsonrpc":"2.0","error":{"code":-32000,"message":"Invalid or missing MCP session id."},"id":null});
    let accept = ("Accept", "application/json, text/event-stream");
    let json_type = ("Content-Type", "application/json");
    let list = json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}).to_string();

    let first_not_initialize = host.send(
        "POST",
        "/api/mcp/tasks",
        &[accept, json_type],
        list.as_bytes(),
    );
    assert_eq!(
        (first_not_initialize.status, first_not_initialize.json()),
        (400, no_session.clone())
    );
    let unknown = host.send(
        "POST",
        "/api/mcp/tasks",
        &[accept, json_type, ("mcp-session-id", "nope")],
        list.as_bytes(),
    );
    assert_eq!((unknown.status, unknown.json()), (400, no_session.clone()));
    let init_with_stale_id = host.send(
        "POST",
        "/api/mcp/tasks",
        &[accept, json_type, ("mcp-session-id", "nope")],
        initialize_message(1).to_string().as_bytes(),
    );
    assert_eq!(init_with_stale_id.status, 400);
    for method in ["GET", "DELETE"] {
        let missing = host.send(
            method,
            "/api/mcp/tasks",
            &[("Accept", "text/event-stream")],
            b"",
        );
        assert_eq!(
            (missing.status, missing.json()),
            (400, bad_id.clone()),
            "{method}"
        );
        let unknown = host.send(method, "/api/mcp/tasks", &[("mcp-session-id", "nope")], b"");
        assert_eq!(
            (unknown.status, unknown.json()),
            (400, bad_id.clone()),
            "{method}"
        );
    }

    let mut session = host.session("/api/mcp/tasks");
    assert!(!session.tool_names().is_empty());
    let id = session.id.clone().unwrap();
    let elsewhere = host.send(
        "POST",
        "/api/mcp/memory",
        &[accept, json_type, ("mcp-session-id", &id)],
        list.as_bytes(),
    );
    assert_eq!(
        elsewhere.status, 400,
        "a session id is valid only on its own path"
    );
    let deleted = session.delete();
    assert!((200..300).contains(&deleted.status), "{deleted:?}");
    let after = session.post(&json!({"jsonrpc":"2.0","id":9,"method":"tools/list"}));
    assert_eq!((after.status, after.json()), (400, no_session));

    let unparsable = host.send("POST", "/api/mcp/tasks", &[accept, json_type], b"{not json");
    assert_eq!(unparsable.status, 400);
    assert_eq!(unparsable.json()["error"]["code"], -32700);
}

#[test]
fn forged_host_and_origin_are_refused() {
    let dir = TempDir::new("http-rebinding");
    let host = host_all(&dir, &[]);
    let init = initialize_message(1).to_string();
    let mcp_headers = [
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
    ];
    for path in ["/api/mcp/tasks", "/api/tools", "/"] {
        let forged = host.send("GET", path, &[("Host", "evil.example:18790")], b"");
        assert_eq!(forged.status, 403, "{path}: {}", forged.body);
        assert_eq!(
            forged.json()["error"],
            "Forbidden: Host header is not allowed"
        );
    }
    let mut with_origin = mcp_headers.to_vec();
    with_origin.push(("Origin", "http://evil.example"));
    let forged = host.send("POST", "/api/mcp/tasks", &with_origin, init.as_bytes());
    assert_eq!(forged.status, 403, "{}", forged.body);
    let resolve = host.send(
        "POST",
        "/api/tools/approvals/x/resolve",
        &[
            ("Origin", "http://evil.example"),
            ("Content-Type", "application/json"),
        ],
        br#"{"decision":"allow_once"}"#,
    );
    assert_eq!(
        resolve.status, 403,
        "a hostile page cannot approve: {}",
        resolve.body
    );
    let own_origin = format!("http://{}", host.addr);
    let mut same = mcp_headers.to_vec();
    same.push(("Origin", &own_origin));
    assert_eq!(
        host.send("POST", "/api/mcp/tasks", &same, init.as_bytes())
            .status,
        200
    );
    let by_name = host.send("GET", "/api/tools", &[("Host", "localhost")], b"");
    assert_eq!(by_name.status, 200);
}

#[test]
fn the_token_is_required_when_set_and_never_echoed() {
    let dir = TempDir::new("http-token");
    let token = "tok-0123456789abcdef-fake";
    let host = host_all(&dir, &["--token", token]);
    assert_eq!(host.get("/api/tools").status, 200);
    for auth in [None, Some("Bearer wrong-token"), Some("Basic dG9rZW4=")] {
        let headers: Vec<(&str, &str)> = match auth {
            Some(value) => vec![("Authorization", value)],
            None => vec![("Authorization", "")],
        };
        for path in ["/api/tools", "/api/mcp/config", "/"] {
            let refused = host.send("GET", path, &headers, b"");
            assert_eq!(refused.status, 401, "{path} {auth:?}");
            assert!(!refused.body.contains(token));
        }
        let init = host.send(
            "POST",
            "/api/mcp/tasks",
            &[
                headers[0],
                ("Accept", "application/json, text/event-stream"),
                ("Content-Type", "application/json"),
            ],
            initialize_message(1).to_string().as_bytes(),
        );
        assert_eq!(init.status, 401);
    }
    let page = host.send(
        "GET",
        &format!("/?token={token}"),
        &[("Authorization", "")],
        b"",
    );
    assert_eq!(page.status, 200);
    assert!(page.body.contains("Clawboo console"));
    let mut session = host.session("/api/mcp/tools");
    assert!(session.tool_names().contains(&"echo".to_owned()));
}

#[test]
fn a_non_loopback_address_without_a_token_does_not_start() {
    let dir = TempDir::new("http-no-token");
    let out = std::process::Command::new(clawboo_tests::bin_path(TOOLS))
        .args(["serve", "--listen", "0.0.0.0:0"])
        .env("CLAWBOO_DB_PATH", dir.db_path())
        .env_remove("CLAWBOO_HTTP_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("refusing to listen on 0.0.0.0:0 without a token"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn a_body_over_2mb_is_refused_without_reading_the_rest() {
    let dir = TempDir::new("http-body");
    let host = host_all(&dir, &[]);
    // Declared 3 MB, only 64 KB sent: the answer comes without the rest.
    let mut stream = std::net::TcpStream::connect(&host.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let head = format!(
        "POST /api/mcp/tasks HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        host.addr,
        3 * 1024 * 1024
    );
    std::io::Write::write_all(&mut stream, head.as_bytes()).unwrap();
    std::io::Write::write_all(&mut stream, &vec![b' '; 64 * 1024]).unwrap();
    let reply = clawboo_tests::http::read_response(&mut stream);
    assert_eq!(reply.status, 413, "{}", reply.body);
    // A whole body one byte over the limit, on a REST route.
    let over = vec![b' '; 2 * 1024 * 1024 + 1];
    let reply = host.send(
        "POST",
        "/api/tools/approvals/x/resolve",
        &[("Content-Type", "application/json")],
        &over,
    );
    assert_eq!(reply.status, 413);
    assert!(reply.json()["error"].as_str().unwrap().contains("2097152"));
    // At the limit it is read (and judged on its content).
    let mut at_limit = br#"{"decision":"deny"}"#.to_vec();
    at_limit.resize(2 * 1024 * 1024, b' ');
    let reply = host.send(
        "POST",
        "/api/tools/approvals/x/resolve",
        &[("Content-Type", "application/json")],
        &at_limit,
    );
    assert_eq!(reply.status, 404);
}

#[test]
fn a_thousand_abandoned_sessions_leave_the_live_count_bounded() {
    let dir = TempDir::new("http-abandoned");
    let host = Host::start(
        "clawboo-mcp-tasks",
        // A burst of 1,000 initializes from one client: the per-token rate limit is another
        // test's subject (longrun.rs), so it is off here.
        &["--max-sessions", "16", "--rate-limit", "0"],
        &dir.db_path(),
        &[],
    );
    let headers = [
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
    ];
    let init = initialize_message(1).to_string();
    let mut ids = Vec::new();
    for _ in 0..1000 {
        let reply = host.send("POST", "/api/mcp/tasks", &headers, init.as_bytes());
        assert_eq!(reply.status, 200, "{}", reply.body);
        ids.push(reply.header("mcp-session-id").unwrap().to_owned());
    }
    let health = host.get("/api/health").json();
    let live = health["sessions"]["tasks"].as_u64().unwrap();
    assert!(live <= 16, "{health}");
    let list = json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}).to_string();
    let oldest = host.send(
        "POST",
        "/api/mcp/tasks",
        &[headers[0], headers[1], ("mcp-session-id", &ids[0])],
        list.as_bytes(),
    );
    assert_eq!(
        oldest.status, 400,
        "the least recently used session was ended"
    );
    let newest = ids.last().unwrap();
    let latest = host.send(
        "POST",
        "/api/mcp/tasks",
        &[headers[0], headers[1], ("mcp-session-id", newest)],
        list.as_bytes(),
    );
    assert_eq!(latest.status, 200, "{}", latest.body);
}

#[test]
fn an_idle_session_ends_by_itself() {
    let dir = TempDir::new("http-idle");
    let host = Host::start(
        "clawboo-mcp-tasks",
        &["--session-idle", "1"],
        &dir.db_path(),
        &[],
    );
    let session = host.session("/api/mcp/tasks");
    assert_eq!(host.get("/api/health").json()["sessions"]["tasks"], 1);
    // The health route does not touch the session, so the session sees no traffic while we look.
    let ended = poll_until(Duration::from_secs(60), || {
        (host.get("/api/health").json()["sessions"]["tasks"] == 0).then_some(())
    });
    assert!(ended.is_some(), "the idle session never ended");
    let reply = session.post(&json!({"jsonrpc":"2.0","id":3,"method":"ping"}));
    assert_eq!(reply.status, 400);
    assert_eq!(
        reply.json()["error"]["message"],
        "No valid session; send an initialize request first."
    );
}

/// A stdio tools process whose `delete_path` call waits for a person.
fn waiting_stdio_call(dir: &TempDir, path: &str) -> (Server, u64) {
    let mut stdio = Server::spawn(
        TOOLS,
        &dir.db_path(),
        &[
            ("CLAWBOO_TOOL_APPROVAL_TIMEOUT_MS", "120000"),
            ("CLAWBOO_TOOL_APPROVAL_POLL_MS", "20"),
            ("CLAWBOO_SCOPE_AGENT_ID", "agent-7"),
        ],
    );
    let id = stdio.send_request(
        "tools/call",
        json!({"name": "delete_path", "arguments": {"path": path}}),
    );
    (stdio, id)
}

fn pending(host: &Host) -> Vec<Value> {
    let reply = host.get("/api/tools/approvals");
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_no_secret(&reply);
    reply.json()["approvals"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn wait_pending(host: &Host) -> Value {
    poll_until(Duration::from_secs(60), || pending(host).into_iter().next())
        .expect("no approval appeared")
}

#[test]
fn a_call_waiting_in_a_stdio_process_is_released_by_the_host() {
    let dir = TempDir::new("http-cross");
    let host = host_all(&dir, &[]);
    let (mut stdio, call) = waiting_stdio_call(&dir, "/tmp/released");
    let row = wait_pending(&host);
    assert_eq!(row["toolName"], "delete_path");
    assert_eq!(row["agentId"], "agent-7");
    let id = row["id"].as_str().unwrap();
    let resolved = host.post_json(
        &format!("/api/tools/approvals/{id}/resolve"),
        &json!({"decision": "allow_once"}),
    );
    assert_eq!(resolved.status, 200, "{}", resolved.body);
    assert_eq!(resolved.json()["approval"]["status"], "allow_once");
    let reply = Server::tool_reply(stdio.wait_response(call));
    assert!(!reply.is_error, "{}", reply.text());
    assert!(
        reply.text().contains("would delete: /tmp/released"),
        "{}",
        reply.text()
    );

    let (mut stdio, call) = waiting_stdio_call(&dir, "/tmp/refused");
    let row = wait_pending(&host);
    let denied = host.post_json(
        &format!(
            "/api/tools/approvals/{}/resolve",
            row["id"].as_str().unwrap()
        ),
        &json!({"decision": "deny"}),
    );
    assert_eq!(denied.json()["approval"]["status"], "deny");
    let reply = Server::tool_reply(stdio.wait_response(call));
    assert_eq!(reply.denied.as_deref(), Some("approval:deny"));
}

#[test]
fn rest_routes_answer_seed_003_shapes_and_never_a_secret() {
    let dir = TempDir::new("http-rest");
    let host = host_all(&dir, &[]);
    let tools = host.get("/api/tools").json();
    assert_eq!(tools["ok"], true);
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo", "note", "web_search", "delete_path"]);
    let search = &tools["tools"][2];
    assert_eq!(
        (search["risk"].as_str(), search["available"].as_bool()),
        (Some("external"), Some(false))
    );
    assert!(!search["diagnostics"].as_array().unwrap().is_empty());

    // Rows with a secret in them: an echo (audit) and a waiting delete_path (approval).
    let mut session = host.session("/api/mcp/tools");
    let echoed = session.call("echo", json!({"message": format!("key {SECRET}")}));
    assert!(!echoed.is_error);
    let (mut stdio, call) = waiting_stdio_call(&dir, &format!("/tmp/{SECRET}"));
    let row = wait_pending(&host);
    let keys = clawboo_tests::object_keys(&row);
    assert_eq!(keys, clawboo_tests::reference::APPROVAL_ROW_KEYS);
    assert_eq!(row["status"], "pending");
    let id = row["id"].as_str().unwrap().to_owned();
    let resolve_path = format!("/api/tools/approvals/{id}/resolve");

    for (body, field) in [
        (json!({}), Some("decision")),
        (json!({"decision": "maybe"}), Some("decision")),
        (json!([1]), None),
    ] {
        let bad = host.post_json(&resolve_path, &body);
        assert_eq!(bad.status, 400, "{body}");
        let bad = bad.json();
        assert_eq!(bad["error"], "invalid body");
        match field {
            Some(f) => assert!(
                !bad["details"]["fieldErrors"][f]
                    .as_array()
                    .unwrap()
                    .is_empty(),
                "{bad}"
            ),
            None => assert!(
                !bad["details"]["formErrors"].as_array().unwrap().is_empty(),
                "{bad}"
            ),
        }
    }
    let empty = host.send("POST", &resolve_path, &[], b"");
    assert_eq!(empty.json()["details"]["formErrors"], json!(["Required"]));
    let unknown = host.post_json(
        "/api/tools/approvals/no-such-id/resolve",
        &json!({"decision": "deny"}),
    );
    assert_eq!(
        (unknown.status, unknown.json()),
        (404, json!({"error": "approval not found"}))
    );

    let resolved = host.post_json(&resolve_path, &json!({"decision": "deny"}));
    assert_eq!(resolved.status, 200);
    assert_no_secret(&resolved);
    assert_eq!(resolved.json()["approval"]["status"], "deny");
    assert!(resolved.json()["approval"]["resolvedAt"].is_i64());
    let again = host.post_json(&resolve_path, &json!({"decision": "allow_once"}));
    assert_eq!(
        (again.status, again.json()["approval"]["status"].clone()),
        (200, json!("deny")),
        "first decision wins"
    );
    let _ = stdio.wait_response(call);
    assert!(pending(&host).is_empty());

    let audit = host.get("/api/tools/audit?toolName=echo&limit=5");
    assert_no_secret(&audit);
    let rows = audit.json()["audit"].as_array().cloned().unwrap();
    assert!(
        rows.iter().all(|r| r["toolName"] == "echo") && rows.len() == 2,
        "{rows:?}"
    );
    assert!(rows.iter().any(|r| {
        r["argsSummary"]
            .as_str()
            .is_some_and(|s| s.contains("[REDACTED]"))
    }));
    assert_eq!(
        host.get("/api/tools/audit?limit=1").json()["audit"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let all = host.get("/api/tools/audit");
    assert_no_secret(&all);
    let bad_limit = host.get("/api/tools/audit?limit=abc");
    assert_eq!(bad_limit.status, 400);
    assert!(
        bad_limit.json()["error"]
            .as_str()
            .unwrap()
            .starts_with("limit:")
    );

    let unknown_server = host.get("/api/mcp/config?server=nope");
    assert_eq!(
        (unknown_server.status, unknown_server.json()),
        (400, json!({"error": "unknown server: nope"}))
    );
    // The URL comes from the bound address, not from the Host header.
    let config = host
        .send(
            "GET",
            "/api/mcp/config?runtime=codex&server=tasks",
            &[("Host", "localhost:1")],
            b"",
        )
        .json();
    assert_eq!(config["config"]["id"], "clawboo-tasks");
    assert_eq!(config["config"]["transport"], "http");
    let url = config["config"]["structured"]["mcp_servers"]["clawboo-tasks"]["url"]
        .as_str()
        .unwrap();
    assert_eq!(url, format!("http://{}/api/mcp/tasks", host.addr));
    let stdio_config = host
        .get("/api/mcp/config?transport=stdio&runtime=openclaw&server=memory")
        .json();
    assert_eq!(stdio_config["config"]["transport"], "stdio");
    assert!(host.get("/api/nothing").status == 404);
}

#[test]
fn a_memory_session_bound_by_url_cannot_reach_another_team() {
    let dir = TempDir::new("http-memory-bound");
    let host = host_all(&dir, &[]);
    let mut other = host.session("/api/mcp/memory");
    let saved = other.call(
        "memory_save",
        json!({"title": "b-secret-plan", "content": "team B only", "scopeTeamId": "team-b"}),
    );
    assert!(!saved.is_error, "{}", saved.text());
    let mut bound = host.session(&host.bound_path("memory", "team-a", "agent-1"));
    let saved = bound.call(
        "memory_save",
        json!({"title": "a-plan", "content": "team A work", "scopeTeamId": "team-b"}),
    );
    assert!(!saved.is_error, "{}", saved.text());
    assert!(
        saved.text().contains("team-a"),
        "saved under the bound team: {}",
        saved.text()
    );
    let browsed = bound.call("memory_browse", json!({"scopeTeamId": "team-b"}));
    assert!(
        !browsed.text().contains("b-secret-plan"),
        "{}",
        browsed.text()
    );
    assert!(browsed.text().contains("a-plan"), "{}", browsed.text());
    let searched = bound.call(
        "memory_search",
        json!({"query": "team", "scopeTeamId": "team-b"}),
    );
    assert!(
        !searched.text().contains("b-secret-plan"),
        "{}",
        searched.text()
    );
    let from_b = other.call("memory_browse", json!({"scopeTeamId": "team-b"}));
    assert!(!from_b.text().contains("a-plan"), "{}", from_b.text());
}

#[test]
fn teamchat_posts_are_attributed_to_the_bound_author() {
    let dir = TempDir::new("http-teamchat-bound");
    let host = host_all(&dir, &[]);
    let mut bound = host.session(&host.bound_path("teamchat", "tm1", "boo-1"));
    let posted = bound.call(
        "team_chat_post",
        json!({"text": "hello", "authorAgentId": "mallory", "teamId": "tm9"}),
    );
    assert!(!posted.is_error, "{}", posted.text());
    assert_eq!(posted.json()["posted"]["authorAgentId"], "boo-1");
    assert_eq!(posted.json()["posted"]["roomId"], "team:tm1");
}

#[test]
fn an_edited_or_unsigned_binding_is_refused_with_403_unless_unsigned_is_allowed() {
    let dir = TempDir::new("http-signed");
    let host = host_all(&dir, &[]);
    let path = host.bound_path("teamchat", "tm1", "boo-1");
    let edited = path.replace("roomTeamId=tm1", "roomTeamId=tm2");
    let unsigned = path.split("&sig=").next().unwrap().to_owned();
    let headers = [
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
    ];
    for (query, why) in [(&edited, "does not match"), (&unsigned, "no signature")] {
        let reply = host.send(
            "POST",
            query,
            &headers,
            initialize_message(5).to_string().as_bytes(),
        );
        assert_eq!(reply.status, 403, "{query}: {}", reply.body);
        let body = reply.json();
        assert_eq!(body["id"], 5);
        assert_eq!(body["error"]["code"], -32001);
        assert!(
            body["error"]["message"].as_str().unwrap().contains(why),
            "{body}"
        );
        assert!(reply.header("mcp-session-id").is_none());
    }
    drop(host);
    let lenient = host_all(&dir, &["--unsigned-bindings"]);
    let mut session = lenient.session(&unsigned);
    let posted = session.call(
        "team_chat_post",
        json!({"text": "hi", "authorAgentId": "mallory"}),
    );
    assert_eq!(posted.json()["posted"]["authorAgentId"], "boo-1");
    let reply = lenient.send(
        "POST",
        &edited,
        &headers,
        initialize_message(5).to_string().as_bytes(),
    );
    assert_eq!(reply.status, 403, "a wrong signature is refused even then");
}

#[test]
fn attach_http_prints_a_signed_url_this_host_serves() {
    let dir = TempDir::new("http-attach");
    let host = host_all(&dir, &[]);
    let out = std::process::Command::new(clawboo_tests::bin_path("clawboo-mcp-memory"))
        .args([
            "attach",
            "--runtime",
            "codex",
            "--transport",
            "http",
            "--team",
            "tA",
            "--agent",
            "a1",
        ])
        .args(["--http-base", &format!("http://{}", host.addr)])
        .env("CLAWBOO_DB_PATH", dir.db_path())
        .env_remove("CLAWBOO_BINDING_KEY")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let snippet = String::from_utf8_lossy(&out.stdout);
    let url = snippet
        .lines()
        .find_map(|l| l.strip_prefix("url = \""))
        .and_then(|l| l.strip_suffix('"'))
        .unwrap_or_else(|| panic!("{snippet}"));
    assert!(url.contains("scopeTeamId=tA&scopeAgentId=a1&sig="), "{url}");
    let path = url.split_once(&host.addr).unwrap().1;
    let mut session = host.session(path);
    let saved = session.call(
        "memory_save",
        json!({"title": "x", "content": "y", "scopeTeamId": "other"}),
    );
    assert!(saved.text().contains("tA"), "{}", saved.text());
    let raw = raw_request(
        &host.addr,
        "GET",
        "/api/health",
        &[("Host".into(), host.addr.clone())],
        b"",
    );
    assert_eq!(raw.json()["sessions"]["memory"], 1);
}

#[test]
fn the_consoles_approvals_view_in_a_real_browser_releases_denies_and_escapes() {
    let dir = TempDir::new("http-page");
    let host = host_all(&dir, &[]);
    let mut browser = clawboo_tests::browser::Browser::start();
    browser.navigate(&format!("http://{}/approvals", host.addr));
    assert!(browser.wait_for(
        "document.body.dataset.view === 'approvals' && document.body.dataset.loaded === '1'",
        Duration::from_secs(60)
    ));

    let hostile = "/tmp/<script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=2\">";
    let (mut stdio, call) = waiting_stdio_call(&dir, hostile);
    let row = wait_pending(&host);
    let id = row["id"].as_str().unwrap().to_owned();
    let selector = format!("#approvals-pending [data-testid=approval-row][data-id=\"{id}\"]");
    let shown = format!("document.querySelector('{selector}') !== null");
    assert!(
        browser.wait_for(&shown, Duration::from_secs(60)),
        "the waiting call never appeared"
    );
    let cells = browser.eval(&format!(
        "Array.from(document.querySelector('{selector}').cells).map(c => c.textContent)"
    ));
    assert_eq!(cells[0], "delete_path");
    assert_eq!(cells[1], "agent-7");
    let args = cells[2].as_str().unwrap();
    assert!(
        args.contains("<script>window.__pwned=1</script>") && args.contains("<img src=x"),
        "{args}"
    );
    assert_eq!(
        browser.eval(
            "document.querySelectorAll('#approvals-pending script, #approvals-pending img, #audit-rows img').length"
        ),
        0
    );
    assert_eq!(browser.eval("typeof window.__pwned"), "undefined");
    let screenshot = clawboo_tests::target_dir().join("http-approvals-page.png");
    browser.screenshot(&screenshot);
    assert!(std::fs::metadata(&screenshot).unwrap().len() > 1000);

    browser.eval(&format!(
        "document.querySelector('{selector} [data-testid=approve-once]').click()"
    ));
    let reply = Server::tool_reply(stdio.wait_response(call));
    assert!(!reply.is_error, "{}", reply.text());
    assert!(
        reply.text().starts_with("would delete: /tmp/<script>"),
        "{}",
        reply.text()
    );
    let gone = format!("document.querySelector('{selector}') === null");
    assert!(browser.wait_for(&gone, Duration::from_secs(60)));

    let (mut stdio, call) = waiting_stdio_call(&dir, "/tmp/deny-me");
    let row = wait_pending(&host);
    let id = row["id"].as_str().unwrap().to_owned();
    let deny = format!(
        "document.querySelector('[data-testid=approval-row][data-id=\"{id}\"] [data-testid=deny]')"
    );
    assert!(browser.wait_for(&format!("{deny} !== null"), Duration::from_secs(60)));
    browser.eval(&format!("{deny}.click()"));
    let reply = Server::tool_reply(stdio.wait_response(call));
    assert_eq!(reply.denied.as_deref(), Some("approval:deny"));
    let audited = "Array.from(document.querySelectorAll('#audit-rows td')).some(td => td.textContent === 'require_approval')";
    assert!(
        browser.wait_for(audited, Duration::from_secs(60)),
        "the audit log shows the calls"
    );
    let resolved = "document.querySelectorAll('[data-testid=action-row]').length === 2";
    assert!(
        browser.wait_for(resolved, Duration::from_secs(60)),
        "both decisions are recorded as operator actions"
    );
    assert_eq!(browser.eval("typeof window.__pwned"), "undefined");
}
