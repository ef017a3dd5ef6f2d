//! Waiting instead of polling, across processes: a `team_chat_subscribe` or a ready
//! `list_tasks` with `waitMs`, waiting in one stdio process, is woken by a write from another; a
//! waiting call leaves its session answering; closing stdin, or deleting the HTTP session, ends it
//! at once.
//!
//! Latencies are logged, never asserted: a test only checks that the call was woken (it answered
//! with what the other process wrote, before its deadline). `cargo xtask bench` measures them.

use std::time::{Duration, Instant};

use clawboo_tests::http::Host;
use clawboo_tests::{Server, TempDir, ToolReply};
use serde_json::{Value, json};

const TASKS: &str = "clawboo-mcp-tasks";
const TEAMCHAT: &str = "clawboo-mcp-teamchat";

/// The longest any waiting call here asks to wait.
const WAIT_MS: u64 = 30_000;

/// A teamchat process bound to `agent` in team `t1`.
fn teammate(db: &std::path::Path, agent: &str) -> Server {
    Server::spawn(
        TEAMCHAT,
        db,
        &[
            ("CLAWBOO_ROOM_TEAM_ID", "t1"),
            ("CLAWBOO_AUTHOR_AGENT_ID", agent),
        ],
    )
}

/// Waits for the answer to request `id` and shapes it as a tool reply.
fn answer(server: &mut Server, id: u64) -> ToolReply {
    Server::tool_reply(server.wait_response(id))
}

fn call_args(name: &str, args: Value) -> Value {
    json!({"name": name, "arguments": args})
}

#[test]
fn a_subscriber_waiting_in_one_process_is_woken_by_a_post_from_another() {
    let dir = TempDir::new("wait-chat");
    let mut listener = teammate(&dir.db_path(), "listener");
    let mut talker = teammate(&dir.db_path(), "talker");
    let waiting = listener.send_request(
        "tools/call",
        call_args("team_chat_subscribe", json!({"waitMs": WAIT_MS})),
    );
    // Let the subscribe reach its wait (if the post came first, it would answer at once: the
    // assertions below hold either way).
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let posted = talker.ok_json("team_chat_post", json!({"text": "the build is green"}));
    let posted_after = started.elapsed();
    let got = answer(&mut listener, waiting);
    let woken_after = started.elapsed();
    eprintln!(
        "team_chat_subscribe woken {:.1} ms after the post was sent ({:.1} ms after it was answered)",
        woken_after.as_secs_f64() * 1e3,
        (woken_after - posted_after).as_secs_f64() * 1e3
    );
    assert!(!got.is_error, "{}", got.text());
    let got = got.json();
    assert_eq!(got["posts"][0]["seq"], posted["posted"]["seq"], "{got}");
    assert_eq!(got["posts"][0]["authorAgentId"], "talker");
    assert!(
        woken_after < Duration::from_millis(WAIT_MS),
        "woken by the post, not by its deadline"
    );
    assert_eq!(listener.close().code(), Some(0));
    assert_eq!(talker.close().code(), Some(0));
}

#[test]
fn a_waiting_call_leaves_its_session_answering_and_its_own_posts_do_not_wake_it() {
    let dir = TempDir::new("wait-session");
    let mut me = teammate(&dir.db_path(), "me");
    let waiting = me.send_request(
        "tools/call",
        call_args("team_chat_subscribe", json!({"waitMs": 1_500})),
    );
    // The same session posts and reads while its subscribe waits; the echo guard keeps the
    // waiting call asleep through its own post.
    let posted = me.send_request(
        "tools/call",
        call_args("team_chat_post", json!({"text": "mine"})),
    );
    let quick = me.send_request("tools/call", call_args("team_chat_subscribe", json!({})));
    let order: Vec<Value> = (0..3).map(|_| me.read_message()).collect();
    let ids: Vec<&Value> = order.iter().map(|m| &m["id"]).collect();
    assert_eq!(
        ids[2],
        &json!(waiting),
        "the waiting call answers last: {ids:?}"
    );
    assert!(ids.contains(&&json!(posted)) && ids.contains(&&json!(quick)));
    let waited = Server::tool_reply(order[2].clone()).json();
    assert_eq!(waited["posts"], json!([]), "{waited}");
    assert_eq!(me.close().code(), Some(0));
}

#[test]
fn a_waiting_ready_list_returns_when_another_process_marks_a_dependency_done() {
    let dir = TempDir::new("wait-ready");
    let mut waiter = Server::spawn(TASKS, &dir.db_path(), &[]);
    let mut worker = Server::spawn(TASKS, &dir.db_path(), &[]);
    let dep = worker.ok_json("create_task", json!({"title": "dep", "teamId": "t1"}));
    let next = worker.ok_json("create_task", json!({"title": "next", "teamId": "t1"}));
    worker.ok_json(
        "claim_task",
        json!({"taskId": dep["id"], "assigneeAgentId": "worker"}),
    );
    let linked = worker.call(
        "link_task",
        json!({"taskId": next["id"], "dependsOnTaskId": dep["id"]}),
    );
    assert!(!linked.is_error, "{}", linked.text());
    let ready_now = waiter.ok_json("list_tasks", json!({"ready": true, "teamId": "t1"}));
    assert_eq!(ready_now, json!([]), "nothing is ready yet");

    let waiting = waiter.send_request(
        "tools/call",
        call_args(
            "list_tasks",
            json!({"ready": true, "teamId": "t1", "waitMs": WAIT_MS}),
        ),
    );
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    worker.ok_json(
        "update_task_status",
        json!({"taskId": dep["id"], "status": "done"}),
    );
    let got = answer(&mut waiter, waiting);
    let woken_after = started.elapsed();
    eprintln!(
        "list_tasks woken {:.1} ms after the dependency was marked done",
        woken_after.as_secs_f64() * 1e3
    );
    let ready = got.json();
    assert_eq!(ready.as_array().map(Vec::len), Some(1), "{ready}");
    assert_eq!(ready[0]["id"], next["id"]);
    assert!(woken_after < Duration::from_millis(WAIT_MS));
    assert_eq!(waiter.close().code(), Some(0));
    assert_eq!(worker.close().code(), Some(0));
}

#[test]
fn closing_stdin_ends_a_waiting_call_at_once() {
    let dir = TempDir::new("wait-close");
    for (bin, tool, args, empty) in [
        (
            TEAMCHAT,
            "team_chat_subscribe",
            json!({"waitMs": 60_000, "authorAgentId": "a", "teamId": "t"}),
            json!({"posts": [], "nextSeq": 0}),
        ),
        (
            TASKS,
            "list_tasks",
            json!({"ready": true, "waitMs": 60_000}),
            json!([]),
        ),
    ] {
        let mut server = Server::spawn(bin, &dir.db_path(), &[]);
        let waiting = server.send_request("tools/call", call_args(tool, args));
        std::thread::sleep(Duration::from_millis(300));
        let started = Instant::now();
        server.close_stdin();
        // Ended by the close, the call still answers (empty) before the process exits: had it
        // waited out its deadline, the process would have given up on it first.
        let ended = server
            .read_message_within(Duration::from_secs(30))
            .unwrap_or_else(|| panic!("{bin}: the waiting call never answered"));
        let answered = started.elapsed();
        assert_eq!(ended["id"], json!(waiting), "{bin}: {ended}");
        assert_eq!(Server::tool_reply(ended).json(), empty, "{bin}");
        let status = server.close();
        eprintln!(
            "{bin}: the waiting call answered {:.1} ms and the process exited {:.1} ms after stdin closed",
            answered.as_secs_f64() * 1e3,
            started.elapsed().as_secs_f64() * 1e3
        );
        assert_eq!(status.code(), Some(0), "{bin}");
    }
}

#[test]
fn deleting_an_http_session_ends_its_waiting_call() {
    let dir = TempDir::new("wait-http");
    let host = Host::start(TEAMCHAT, &[], &dir.db_path(), &[]);
    let path = "/api/mcp/teamchat";
    let session = host.session(path);
    let id = session.id.clone().expect("a session id");
    let wait_ms = 50_000;
    std::thread::scope(|scope| {
        let waiting = scope.spawn(move || {
            let started = Instant::now();
            let reply = session.post(&json!({
                "jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": call_args(
                    "team_chat_subscribe",
                    json!({"waitMs": wait_ms, "authorAgentId": "a", "teamId": "t"}),
                ),
            }));
            (reply, started.elapsed())
        });
        std::thread::sleep(Duration::from_millis(300));
        let deleted = host.send("DELETE", path, &[("mcp-session-id", &id)], b"");
        assert!(deleted.status < 300, "{}: {}", deleted.status, deleted.body);
        let (reply, took) = waiting.join().expect("the waiting request");
        eprintln!(
            "the waiting call's request ended {:.1} ms after it was sent (status {})",
            took.as_secs_f64() * 1e3,
            reply.status
        );
        assert!(
            took < Duration::from_millis(wait_ms),
            "the call waited for its deadline instead of ending with its session"
        );
    });
}
