//! The protocol versions the servers answer, over stdio and over HTTP: `2026-07-28` clients
//! (no `initialize`, no session, `_meta` on every request, `server/discover`) next to the
//! session-era clients of `2024-11-05` … `2025-11-25` on the same bin and the same mount; what
//! each version is sent of structured output; URL bindings and their signatures on every stateless
//! request; and the official Python SDK as a real third-party client of both lifecycles.

use std::io::Write;
use std::process::{Command, Stdio};

use clawboo_tests::http::Host;
use clawboo_tests::python::python_with_sdk;
use clawboo_tests::{STATELESS_VERSION, Server, TempDir, VERSION, bin_path, stateless};
use serde_json::{Value, json};

const TASKS: &str = "clawboo-mcp-tasks";

/// The `initialize` params of a client on `version`.
fn initialize(version: &str) -> Value {
    json!({"protocolVersion": version, "capabilities": {},
           "clientInfo": {"name": "clawboo-tests", "version": VERSION}})
}

#[test]
fn stdio_answers_discover_and_calls_without_initialize() {
    let dir = TempDir::new("stdio-stateless");
    let mut server = Server::spawn_raw(TASKS, &dir.db_path(), &[]);
    let discovered = server.request("server/discover", stateless(json!({})));
    let result = &discovered["result"];
    let versions = result["supportedVersions"].as_array().unwrap();
    for version in [STATELESS_VERSION, "2025-11-25", "2024-11-05"] {
        assert!(versions.contains(&json!(version)), "{discovered}");
    }
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "clawboo-tasks"
    );
    assert!(result["capabilities"]["tools"].is_object(), "{discovered}");

    let created = Server::tool_reply(server.request(
        "tools/call",
        stateless(json!({"name": "create_task", "arguments": {"title": "no handshake"}})),
    ));
    assert!(!created.is_error, "{}", created.text());
    assert_eq!(created.raw["structuredContent"], created.json());

    // Once a session started without `initialize`, every request must say who it is.
    let bare = server.request("tools/list", json!({}));
    assert_eq!(bare["error"]["code"], -32602, "{bare}");
    let message = bare["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("io.modelcontextprotocol/protocolVersion"),
        "{message}"
    );
}

#[test]
fn a_bound_stdio_server_stays_bound_for_stateless_calls() {
    let dir = TempDir::new("stdio-stateless-bound");
    let mut server = Server::spawn_raw(TASKS, &dir.db_path(), &[("CLAWBOO_SCOPE_TEAM_ID", "tm1")]);
    let created = Server::tool_reply(server.request(
        "tools/call",
        stateless(json!({"name": "create_task",
                         "arguments": {"title": "mine", "teamId": "tm2"}})),
    ));
    assert_eq!(created.json()["teamId"], "tm1", "{}", created.text());
}

/// Every version gets the same text; structured output where the version has it (objects from
/// `2025-06-18`, arrays only on `2026-07-28`), annotations from `2025-03-26`.
#[test]
fn each_protocol_version_gets_the_same_text_and_the_structured_output_it_can_carry() {
    let dir = TempDir::new("stdio-versions");
    let mut setup = Server::spawn(TASKS, &dir.db_path(), &[]);
    let task = setup.ok_json("create_task", json!({"title": "pinned", "teamId": "tm1"}));
    let task_id = task["id"].as_str().unwrap().to_owned();
    drop(setup);
    let calls = [
        ("list_tasks", json!({"teamId": "tm1"})),
        ("get_task", json!({"taskId": task_id})),
    ];
    let mut texts: Vec<Vec<String>> = Vec::new();
    for version in [
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        STATELESS_VERSION,
    ] {
        let mut server = Server::spawn_raw(TASKS, &dir.db_path(), &[]);
        let wrap = |params: Value| {
            if version == STATELESS_VERSION {
                stateless(params)
            } else {
                params
            }
        };
        if version != STATELESS_VERSION {
            let answer = server.request("initialize", initialize(version));
            assert_eq!(answer["result"]["protocolVersion"], version, "{answer}");
            server.notify("notifications/initialized", json!({}));
        }
        let listed = server.request("tools/list", wrap(json!({})));
        let tools = listed["result"]["tools"].as_array().unwrap();
        let tool = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap().clone();
        let (list, get) = (tool("list_tasks"), tool("get_task"));
        let structured_objects = version >= "2025-06-18";
        let arrays = version == STATELESS_VERSION;
        assert_eq!(
            get.get("outputSchema").is_some(),
            structured_objects,
            "{version}"
        );
        assert_eq!(get.get("title").is_some(), structured_objects, "{version}");
        assert_eq!(list.get("outputSchema").is_some(), arrays, "{version}");
        assert_eq!(
            get.get("annotations").is_some(),
            version >= "2025-03-26",
            "{version}: {get}"
        );
        let mut seen = Vec::new();
        for (name, args) in &calls {
            let reply = Server::tool_reply(
                server.request("tools/call", wrap(json!({"name": name, "arguments": args}))),
            );
            assert!(!reply.is_error, "{version} {name}: {}", reply.text());
            let expected = match *name {
                "list_tasks" => arrays,
                _ => structured_objects,
            };
            assert_eq!(
                reply.raw.get("structuredContent").is_some(),
                expected,
                "{version} {name}: {}",
                reply.raw
            );
            assert_eq!(reply.blocks.len(), 1, "{version} {name}: one text block");
            seen.push(reply.text().to_owned());
        }
        texts.push(seen);
    }
    assert!(
        texts.windows(2).all(|w| w[0] == w[1]),
        "the text differs between versions: {texts:?}"
    );
}

/// `serve --all` with ClawBrain mounted too, on a vault in `dir`: every mount of the host.
fn host_all(dir: &TempDir, extra: &[&str]) -> Host {
    let vault = dir.path().join("vault").display().to_string();
    let mut args = vec!["--all", "--vault", vault.as_str()];
    args.extend_from_slice(extra);
    Host::start("clawboo-mcp-tools", &args, &dir.db_path(), &[])
}

/// The mounts of [`host_all`].
const MOUNTS: [&str; 5] = ["tasks", "memory", "tools", "teamchat", "clawbrain"];

#[test]
fn http_serves_stateless_clients_and_session_clients_on_the_same_mount() {
    let dir = TempDir::new("http-stateless");
    let host = host_all(&dir, &[]);
    for mount in MOUNTS {
        let path = format!("/api/mcp/{mount}");
        let discovered = host.stateless(&path, 1, "server/discover", json!({}));
        assert_eq!(discovered.status, 200, "{mount}: {}", discovered.body);
        assert!(discovered.header("mcp-session-id").is_none());
        let result = &discovered.messages()[0]["result"];
        assert!(
            result["supportedVersions"]
                .as_array()
                .unwrap()
                .contains(&json!(STATELESS_VERSION)),
            "{result}"
        );
        let listed = host.stateless(&path, 2, "tools/list", json!({}));
        assert_eq!(listed.status, 200, "{mount}: {}", listed.body);
        let tools = listed.messages()[0]["result"]["tools"].clone();
        assert!(
            tools
                .as_array()
                .unwrap()
                .iter()
                .all(|t| t["annotations"].is_object()),
            "{mount}: {tools}"
        );
    }
    let called = host.stateless(
        "/api/mcp/tasks",
        3,
        "tools/call",
        json!({"name": "create_task", "arguments": {"title": "stateless", "teamId": "tm1"}}),
    );
    assert_eq!(called.status, 200, "{}", called.body);
    let result = &called.messages()[0]["result"];
    assert_eq!(
        result["structuredContent"]["title"], "stateless",
        "{result}"
    );
    assert_eq!(host.get("/api/health").json()["sessions"]["tasks"], 0);

    // A session-era client on the same mount still gets its session, and ends it with a DELETE
    // answered 200.
    let mut session = host.session("/api/mcp/tasks");
    let listed = session.call("list_tasks", json!({"teamId": "tm1"}));
    assert!(listed.text().contains("stateless"), "{}", listed.text());
    assert_eq!(host.get("/api/health").json()["sessions"]["tasks"], 1);
    let deleted = session.delete();
    assert_eq!((deleted.status, deleted.body.as_str()), (200, ""));
    assert_eq!(host.get("/api/health").json()["sessions"]["tasks"], 0);
}

/// The header rules of `2026-07-28` (rmcp's): the version header must be there and agree with
/// `_meta`, `Mcp-Method` must name the body's method, and `_meta` must carry the client's context.
#[test]
fn http_refuses_stateless_requests_that_break_the_header_rules() {
    let dir = TempDir::new("http-stateless-headers");
    let host = host_all(&dir, &[]);
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list",
                      "params": stateless(json!({}))});
    let base = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a Value, &'a str);
    let cases: [Case; 4] = [
        (
            &[("Mcp-Method", "tools/list")],
            &body,
            "requires MCP-Protocol-Version header",
        ),
        (
            &[
                ("MCP-Protocol-Version", "2025-11-25"),
                ("Mcp-Method", "tools/list"),
            ],
            &body,
            "does not match request _meta protocolVersion",
        ),
        (
            &[
                ("MCP-Protocol-Version", STATELESS_VERSION),
                ("Mcp-Method", "tools/call"),
            ],
            &body,
            "does not match body method",
        ),
        (
            &[
                ("MCP-Protocol-Version", STATELESS_VERSION),
                ("Mcp-Method", "tools/list"),
            ],
            &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}),
            "io.modelcontextprotocol/clientCapabilities",
        ),
    ];
    for (headers, body, why) in cases {
        let all: Vec<(&str, &str)> = base.iter().chain(headers).copied().collect();
        let reply = host.send("POST", "/api/mcp/tasks", &all, body.to_string().as_bytes());
        assert_eq!(reply.status, 400, "{headers:?}: {}", reply.body);
        let error = &reply.json()["error"];
        assert!(
            error["message"].as_str().unwrap().contains(why),
            "{headers:?}: {error}"
        );
        assert_eq!(reply.json()["id"], 7);
    }
    assert_eq!(host.get("/api/health").json()["sessions"]["tasks"], 0);
}

#[test]
fn http_binds_every_stateless_request_from_its_own_signed_url() {
    let dir = TempDir::new("http-stateless-bound");
    let host = host_all(&dir, &[]);
    let bound = host.bound_path("tasks", "team-a", "agent-1");
    let call = |path: &str, id: u64, tool: &str, args: Value| {
        let reply = host.stateless(
            path,
            id,
            "tools/call",
            json!({"name": tool, "arguments": args}),
        );
        assert_eq!(reply.status, 200, "{path}: {}", reply.body);
        reply.messages()[0]["result"]["structuredContent"].clone()
    };
    let b_task = call(
        "/api/mcp/tasks",
        1,
        "create_task",
        json!({"title": "team b's", "teamId": "team-b"}),
    );
    assert_eq!(b_task["teamId"], "team-b");
    let a_task = call(
        &bound,
        2,
        "create_task",
        json!({"title": "team a's", "teamId": "team-b"}),
    );
    assert_eq!(
        a_task["teamId"], "team-a",
        "the URL's team, not the argument's"
    );
    let seen_bound = call(&bound, 3, "list_tasks", json!({"teamId": "team-b"}));
    let titles = |tasks: &Value| -> Vec<String> {
        tasks
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["title"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(titles(&seen_bound), ["team a's"]);
    // Nothing is remembered between requests: the next unbound one is unbound.
    let seen_unbound = call(
        "/api/mcp/tasks",
        4,
        "list_tasks",
        json!({"teamId": "team-b"}),
    );
    assert_eq!(titles(&seen_unbound), ["team b's"]);

    let unsigned = bound.split("&sig=").next().unwrap().to_owned();
    let edited = bound.replace("team-a", "team-b");
    for (path, why) in [(&unsigned, "no signature"), (&edited, "does not match")] {
        for (id, method, params) in [
            (5, "server/discover", json!({})),
            (
                6,
                "tools/call",
                json!({"name": "list_tasks", "arguments": {}}),
            ),
        ] {
            let refused = host.stateless(path, id, method, params);
            assert_eq!(refused.status, 403, "{path} {method}: {}", refused.body);
            let body = refused.json();
            assert_eq!(body["id"], id);
            assert_eq!(body["error"]["code"], -32001);
            assert!(
                body["error"]["message"].as_str().unwrap().contains(why),
                "{body}"
            );
        }
    }
}

/// A client of the official Python SDK: for each case, list the tools, call one (the SDK checks
/// `structuredContent` against the tool's `outputSchema` and raises if it does not fit), leave
/// (a session-era client sends its DELETE); print what it saw as JSON.
const PYTHON_CLIENT: &str = r#"
import asyncio, json, logging, sys
from mcp import Client, StdioServerParameters

logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

async def run(case):
    target = case["target"]
    if "env" in case:
        target = StdioServerParameters(command=target, args=[], env=case["env"])
    async with Client(target, mode=case["mode"]) as client:
        listed = await client.list_tools()
        tool = next(t for t in listed.tools if t.name == case["tool"])
        result = await client.call_tool(case["tool"], case["arguments"])
        annotations = tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else None
        return {
            "annotations": annotations,
            "outputSchema": tool.output_schema is not None,
            "isError": bool(result.is_error),
            "structured": result.structured_content,
            "text": result.content[0].text,
        }

async def main():
    print(json.dumps([await run(case) for case in json.load(sys.stdin)]))

asyncio.run(main())
"#;

#[test]
fn the_python_sdk_ends_sessions_cleanly_and_accepts_every_structured_answer() {
    let python = match python_with_sdk() {
        Ok(python) => python,
        Err(why) => {
            eprintln!("SKIPPED (the Python SDK cannot be installed): {why}");
            return;
        }
    };
    let dir = TempDir::new("python-sdk");
    let host = host_all(&dir, &[]);
    let url = |mount: &str| format!("http://{}/api/mcp/{mount}", host.addr);
    let stdio_env = json!({
        "CLAWBOO_DB_PATH": dir.db_path(),
        "OLLAMA_HOST": "http://127.0.0.1:9",
        "CLAWBOO_EMBEDDINGS": "off",
    });
    let tasks_bin = bin_path(TASKS);
    let cases = json!([
        {"target": url("tasks"), "mode": "legacy", "tool": "create_task",
         "arguments": {"title": "from python", "teamId": "py"}},
        {"target": url("memory"), "mode": "legacy", "tool": "memory_save",
         "arguments": {"title": "py", "content": "saved from python", "scopeTeamId": "py"}},
        {"target": url("tools"), "mode": "legacy", "tool": "echo",
         "arguments": {"message": "hi from python"}},
        {"target": url("teamchat"), "mode": "legacy", "tool": "team_chat_post",
         "arguments": {"text": "hi", "authorAgentId": "py-1", "teamId": "py"}},
        {"target": url("clawbrain"), "mode": "legacy", "tool": "memory_store",
         "arguments": {"type": "episode", "name": "py-talk", "content": "stored from python"}},
        {"target": url("clawbrain"), "mode": STATELESS_VERSION, "tool": "memory_search",
         "arguments": {"query": "python"}},
        {"target": url("tasks"), "mode": STATELESS_VERSION, "tool": "list_tasks",
         "arguments": {"teamId": "py"}},
        {"target": url("memory"), "mode": "auto", "tool": "memory_browse",
         "arguments": {"scopeTeamId": "py"}},
        {"target": tasks_bin, "env": stdio_env, "mode": STATELESS_VERSION,
         "tool": "list_tasks", "arguments": {"teamId": "py"}},
        {"target": tasks_bin, "env": stdio_env, "mode": "legacy", "tool": "create_subtask",
         "arguments": {"parentTaskId": "missing", "title": "refused"}},
    ]);
    let script = dir.path().join("client.py");
    std::fs::write(&script, PYTHON_CLIENT).unwrap();
    let mut child = Command::new(&python)
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(cases.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the Python client failed: {stderr}");
    assert!(
        !stderr.contains("Session termination failed"),
        "the SDK did not take the DELETE answer: {stderr}"
    );
    let seen: Value = serde_json::from_slice(&out.stdout).unwrap();
    let seen = seen.as_array().unwrap();
    for (case, got) in cases.as_array().unwrap().iter().zip(seen) {
        assert!(
            got["annotations"]["readOnlyHint"].is_boolean(),
            "{case}: {got}"
        );
    }
    assert_eq!(seen[0]["structured"]["title"], "from python");
    assert_eq!(seen[1]["structured"]["saved"], "fact");
    assert_eq!(
        (&seen[2]["structured"], &seen[2]["text"]),
        (&Value::Null, &json!("hi from python")),
        "a text answer has no structured content"
    );
    assert_eq!(seen[3]["structured"]["posted"]["authorAgentId"], "py-1");
    assert!(seen[4]["structured"]["id"].is_string(), "{}", seen[4]);
    assert_eq!(
        seen[5]["structured"]["results"][0]["name"], "py-talk",
        "{}",
        seen[5]
    );
    for stateless_list in [&seen[6], &seen[8]] {
        assert_eq!(
            stateless_list["structured"][0]["title"], "from python",
            "{stateless_list}"
        );
    }
    assert_eq!(seen[7]["structured"][0]["kind"], "fact", "{}", seen[7]);
    assert_eq!(seen[9]["isError"], true, "{}", seen[9]);
    let sessions = host.get("/api/health").json()["sessions"].clone();
    assert_eq!(
        sessions,
        json!({"tasks": 0, "memory": 0, "tools": 0, "teamchat": 0, "clawbrain": 0}),
        "every session the SDK opened was ended by its DELETE"
    );
}
