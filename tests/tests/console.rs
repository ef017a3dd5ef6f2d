//! The operator console's REST routes and live stream, over a real `serve --all` host and real
//! stdio bins on the same file: every route's success and error shapes, a secret typed into a
//! seeded fact never coming back unmasked, the token and same-origin refusals, every human action
//! recorded, and a change by another process reaching `/api/events`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use clawboo_tests::http::{Host, Reply};
use clawboo_tests::{Server, TempDir};
use serde_json::{Value, json};

/// A credential-shaped value (fresh, fake) that must never come back from the host.
const SECRET: &str = "sk-consolefakefake0123456789abcd";

fn host_all(dir: &TempDir, extra: &[&str]) -> Host {
    let mut args = vec!["--all"];
    args.extend_from_slice(extra);
    Host::start(
        "clawboo-mcp-tasks",
        &args,
        &dir.db_path(),
        &[("CLAWBOO_EMBEDDINGS", "off")],
    )
}

fn checked(reply: Reply, status: u16) -> Value {
    assert_eq!(reply.status, status, "{}", reply.body);
    assert!(
        !reply.body.contains(SECRET) && !reply.body.contains("consolefakefake"),
        "a secret came back: {}",
        reply.body
    );
    let body = reply.json();
    if status < 300 {
        assert_eq!(body["ok"], true, "{body}");
    } else {
        assert!(body["error"].is_string(), "{body}");
    }
    body
}

fn delete(host: &Host, path: &str) -> Reply {
    host.send("DELETE", path, &[("Content-Type", "application/json")], b"")
}

#[test]
fn every_console_route_answers_its_shapes_masks_secrets_and_records_who() {
    let dir = TempDir::new("console-rest");
    let host = host_all(&dir, &[]);
    let mut tasks = Server::spawn("clawboo-mcp-tasks", &dir.db_path(), &[]);
    let parent = tasks.ok_json("create_task", json!({"title": "Parent", "teamId": "t/1"}));
    let parent_id = parent["id"].as_str().unwrap().to_owned();
    let dep = tasks.ok_json("create_task", json!({"title": "Dep", "teamId": "t/1"}));
    let child = tasks.ok_json(
        "create_task",
        json!({"title": "Child", "parentTaskId": parent_id, "priority": 5}),
    );
    let child_id = child["id"].as_str().unwrap().to_owned();
    let dep_id = dep["id"].as_str().unwrap().to_owned();
    let linked = tasks.call(
        "link_task",
        json!({"taskId": child_id, "dependsOnTaskId": dep_id}),
    );
    assert!(!linked.is_error, "{}", linked.text());

    // Board.
    let board = checked(host.get("/api/board?team=t%2F1&limit=2"), 200);
    assert_eq!(board["teams"], json!(["t/1"]));
    assert_eq!(board["tasks"].as_array().unwrap().len(), 2);
    let next = board["nextCursor"]
        .as_str()
        .expect("a second page")
        .to_owned();
    let rest = checked(
        host.get(&format!("/api/board?team=t%2F1&cursor={next}")),
        200,
    );
    assert_eq!(rest["tasks"].as_array().unwrap().len(), 1);
    assert_eq!(rest["nextCursor"], Value::Null);
    let found = checked(host.get("/api/board?q=CHI"), 200);
    assert_eq!(found["tasks"][0]["id"], child_id.as_str());
    assert_eq!(found["tasks"][0]["blocked"], true);
    checked(host.get("/api/board?cursor=nope"), 400);
    checked(host.get("/api/board?limit=0"), 400);
    let detail = checked(host.get(&format!("/api/board/{child_id}")), 200);
    assert_eq!(detail["ancestors"][0]["id"], parent_id.as_str());
    assert_eq!(detail["dependsOn"][0]["id"], dep_id.as_str());
    assert_eq!(detail["task"]["blocked"], true);
    let dep_detail = checked(host.get(&format!("/api/board/{dep_id}")), 200);
    assert_eq!(dep_detail["dependents"][0]["id"], child_id.as_str());
    checked(host.get("/api/board/no-such-task"), 404);
    let comment = checked(
        host.post_json(
            &format!("/api/board/{child_id}/comments"),
            &json!({"body": format!("looks fine {SECRET}")}),
        ),
        201,
    );
    assert_eq!(comment["comment"]["authorType"], "user");
    assert_eq!(comment["comment"]["authorAgentId"], "local operator");
    checked(
        host.post_json("/api/board/no-such-task/comments", &json!({"body": "x"})),
        404,
    );
    let blank = checked(
        host.post_json(
            &format!("/api/board/{child_id}/comments"),
            &json!({"body": " "}),
        ),
        400,
    );
    assert!(
        blank["error"].as_str().unwrap().starts_with("body:"),
        "{blank}"
    );

    // Team room.
    let mut chat = Server::spawn("clawboo-mcp-teamchat", &dir.db_path(), &[]);
    for n in 1..=3 {
        chat.ok_json(
            "team_chat_post",
            json!({"text": format!("agent post {n}"), "authorAgentId": "agent-1", "teamId": "t/1"}),
        );
    }
    let rooms = checked(host.get("/api/teamchat"), 200);
    assert_eq!(rooms["teams"][0]["teamId"], "t/1");
    assert_eq!(rooms["teams"][0]["lastSeq"], 3);
    let newest = checked(host.get("/api/teamchat/t%2F1?limit=2"), 200);
    let seqs: Vec<i64> = newest["posts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["seq"].as_i64().unwrap())
        .collect();
    assert_eq!(seqs, [2, 3]);
    let older = checked(host.get("/api/teamchat/t%2F1?beforeSeq=2"), 200);
    assert_eq!(older["posts"][0]["seq"], 1);
    let posted = checked(
        host.post_json("/api/teamchat/t%2F1", &json!({"body": "from a person"})),
        201,
    );
    assert_eq!(posted["post"]["kind"], "user");
    assert_eq!(posted["post"]["seq"], 4);
    let since = checked(host.get("/api/teamchat/t%2F1?sinceSeq=3"), 200);
    assert_eq!(since["posts"][0]["body"], "from a person");
    assert_eq!(since["nextSeq"], 4);
    checked(host.get("/api/teamchat/t%2F1?sinceSeq=x"), 400);
    let read = chat.ok_json(
        "team_chat_subscribe",
        json!({"sinceSeq": 3, "authorAgentId": "agent-1", "teamId": "t/1"}),
    );
    assert!(read.to_string().contains("kind=user"), "{read}");

    // Memory.
    let seeded = checked(
        host.post_json(
            "/api/memory",
            &json!({"kind": "fact", "title": "Deploy key", "content": format!("the key is {SECRET}"),
                    "tags": ["ops"], "scope": {"teamId": "t/1"}}),
        ),
        201,
    );
    let fact_id = seeded["entry"]["id"].as_str().unwrap().to_owned();
    assert!(
        seeded["entry"]["content"]
            .as_str()
            .unwrap()
            .contains("[REDACTED]")
    );
    checked(
        host.post_json(
            "/api/memory",
            &json!({"kind": "procedure", "title": "release", "content": "step 1", "scope": {}}),
        ),
        201,
    );
    let listed = checked(host.get("/api/memory?limit=1"), 200);
    assert_eq!(listed["total"], 2);
    assert!(listed["nextCursor"].is_string());
    let facts = checked(host.get("/api/memory?kind=fact&scope=team&team=t%2F1"), 200);
    assert_eq!(facts["entries"][0]["id"], fact_id.as_str());
    assert_eq!(facts["entries"][0]["scope"]["teamId"], "t/1");
    let procedures = checked(host.get("/api/memory?kind=procedure"), 200);
    assert_eq!(procedures["entries"][0]["versions"][0]["version"], 1);
    checked(host.get("/api/memory?kind=memo"), 400);
    checked(host.get("/api/memory?scope=world"), 400);
    let hits = checked(
        host.get("/api/memory/search?q=deploy&mode=hybrid&team=t%2F1"),
        200,
    );
    assert_eq!(hits["mode"], "fts");
    assert!(hits["degraded"].is_string(), "{hits}");
    assert_eq!(hits["hits"][0]["entry"]["id"], fact_id.as_str());
    checked(host.get("/api/memory/search?mode=fts"), 400);
    checked(host.get("/api/memory/search?q=x&mode=psychic"), 400);
    let mut memory = Server::spawn(
        "clawboo-mcp-memory",
        &dir.db_path(),
        &[("CLAWBOO_EMBEDDINGS", "off")],
    );
    let found = memory.ok_json("memory_search", json!({"query": "deploy", "mode": "fts"}));
    assert!(found.to_string().contains(&fact_id), "{found}");
    let redacted = checked(
        host.post_json(
            "/api/memory",
            &json!({"kind": "fact", "title": "k", "content": SECRET}),
        ),
        400,
    );
    assert!(redacted["error"].as_str().unwrap().starts_with("content:"));
    checked(
        host.post_json("/api/memory", &json!({"kind": "fact", "content": "x"})),
        400,
    );
    checked(host.post_json("/api/memory", &json!([1])), 400);
    let deleted = checked(delete(&host, &format!("/api/memory/{fact_id}")), 200);
    assert_eq!(deleted["deleted"], fact_id.as_str());
    checked(delete(&host, &format!("/api/memory/{fact_id}")), 404);
    let gone = memory.ok_json("memory_search", json!({"query": "deploy", "mode": "fts"}));
    assert!(!gone.to_string().contains(&fact_id), "{gone}");

    // Who did what.
    let actions = checked(host.get("/api/operator/actions"), 200);
    let done: Vec<&str> = actions["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        done,
        [
            "memory.delete",
            "memory.seed",
            "memory.seed",
            "teamchat.post",
            "board.comment"
        ]
    );
    assert!(
        actions["actions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["actor"] == "local operator")
    );
    checked(host.get("/api/operator/actions?cursor=1"), 400);

    // Audit filters and health.
    let audit = checked(host.get("/api/tools/audit?decision=allow&limit=5"), 200);
    assert!(audit.get("nextCursor").is_some(), "{audit}");
    checked(host.get("/api/tools/audit?since=yesterday"), 400);
    let health = checked(host.get("/api/health"), 200);
    assert_eq!(health["rows"]["tasks"], 3);
    assert_eq!(health["rows"]["operator_actions"], 5);
    assert!(
        health["schema"]["broker"].as_i64().unwrap() >= 3,
        "{health}"
    );
    assert!(health["database"]["sizeBytes"].as_u64().unwrap() > 0);
    assert_eq!(health["embeddings"]["available"], false);
    assert!(health["sessions"].is_object());

    checked(host.get("/api/nothing"), 404);
    checked(host.get("/api/board/a/b/c"), 404);
}

#[test]
fn mutations_need_json_the_same_origin_and_the_token() {
    let dir = TempDir::new("console-guard");
    let token = "tok-console-0123456789-fake";
    let host = host_all(&dir, &["--token", token]);
    let body = br#"{"body":"hi"}"#;
    let plain = host.send(
        "POST",
        "/api/teamchat/t",
        &[("Content-Type", "text/plain")],
        body,
    );
    assert_eq!(plain.status, 415, "{}", plain.body);
    let none = delete(&host, "/api/memory/x");
    assert_eq!(none.status, 404, "{}", none.body);
    let bare = host.send("DELETE", "/api/memory/x", &[], b"");
    assert_eq!(bare.status, 415, "{}", bare.body);
    let foreign = host.send(
        "POST",
        "/api/teamchat/t",
        &[
            ("Content-Type", "application/json"),
            ("Origin", "http://evil.example"),
        ],
        body,
    );
    assert_eq!(foreign.status, 403, "{}", foreign.body);
    let own = format!("http://{}", host.addr);
    let same = host.send(
        "POST",
        "/api/teamchat/t",
        &[("Content-Type", "application/json"), ("Origin", &own)],
        body,
    );
    assert_eq!(same.status, 201, "{}", same.body);
    assert_eq!(same.json()["post"]["authorAgentId"], "default");
    for path in [
        "/api/board",
        "/api/memory",
        "/api/teamchat",
        "/api/events",
        "/api/operator/actions",
    ] {
        let refused = host.send("GET", path, &[("Authorization", "Bearer wrong")], b"");
        assert_eq!(refused.status, 401, "{path}");
        assert!(!refused.body.contains(token));
    }
    let health = host.get("/api/health");
    assert_eq!(health.status, 200);
    assert!(!health.body.contains(token));
    for asset in ["/console/console.js", "/console/console.css"] {
        let served = host.send("GET", asset, &[("Authorization", "")], b"");
        assert_eq!(served.status, 200, "{asset} needs no token");
    }
    let page = host.send(
        "GET",
        &format!("/?token={token}"),
        &[("Authorization", "")],
        b"",
    );
    assert_eq!(page.status, 200);
    assert!(page.body.contains("Clawboo console"));
    let csp = page.header("content-security-policy").unwrap();
    assert!(
        csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"),
        "{csp}"
    );
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    let module = host.get("/console/board.js");
    assert_eq!(
        module.header("content-type"),
        Some("text/javascript; charset=utf-8")
    );
    assert!(host.get("/approvals").body.contains("Clawboo console"));
}

#[test]
fn a_post_by_a_stdio_process_reaches_the_event_stream_of_every_console() {
    let dir = TempDir::new("console-events");
    let host = host_all(&dir, &[]);
    let mut streams: Vec<TcpStream> = (0..3)
        .map(|_| {
            let mut s = TcpStream::connect(&host.addr).unwrap();
            write!(
                s,
                "GET /api/events HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n\r\n",
                host.addr
            )
            .unwrap();
            s.set_read_timeout(Some(Duration::from_millis(200)))
                .unwrap();
            s
        })
        .collect();
    let mut seen = vec![String::new(); streams.len()];
    let read_until = |streams: &mut Vec<TcpStream>, seen: &mut Vec<String>, want: &str| {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            for (s, text) in streams.iter_mut().zip(seen.iter_mut()) {
                let mut buf = [0u8; 4096];
                if let Ok(n) = s.read(&mut buf) {
                    text.push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            }
            if seen.iter().all(|t| t.contains(want)) {
                return true;
            }
        }
        false
    };
    assert!(read_until(&mut streams, &mut seen, ": live"), "{seen:?}");
    assert!(seen[0].contains("text/event-stream"), "{}", seen[0]);
    let mut chat = Server::spawn("clawboo-mcp-teamchat", &dir.db_path(), &[]);
    chat.ok_json(
        "team_chat_post",
        json!({"text": "hello", "authorAgentId": "agent-1", "teamId": "t"}),
    );
    assert!(
        read_until(&mut streams, &mut seen, "\"teamchat\""),
        "every stream saw the post: {seen:?}"
    );
    assert!(seen[0].contains("event: change"), "{}", seen[0]);
}
