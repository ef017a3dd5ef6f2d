use std::sync::Arc;

use super::*;
use serde_json::{Value, json};

/// Servers bound to agents of team tm1, sharing one database (as processes share the file).
fn room() -> impl Fn(&str) -> Server<TeamChatState> {
    let db = Arc::new(tempfile_db());
    move |agent: &str| {
        build(
            db.reopen(),
            Some(TeamchatBinding {
                agent_id: agent.into(),
                team_id: "tm1".into(),
            }),
        )
    }
}

/// A file database in a fresh temp folder, so several servers can share it.
struct SharedDb {
    dir: std::path::PathBuf,
}

impl SharedDb {
    fn reopen(&self) -> Db {
        Db::open(&self.dir.join("clawboo.db")).unwrap()
    }
}

impl Drop for SharedDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn tempfile_db() -> SharedDb {
    let dir = std::env::temp_dir().join(format!("clawboo-teamchat-{}", crate::db::new_id()));
    SharedDb { dir }
}

fn unbound() -> Server<TeamChatState> {
    build(Db::open_in_memory().unwrap(), None)
}

fn posts(reply: &Value) -> Vec<Value> {
    reply["posts"].as_array().cloned().unwrap_or_default()
}

#[test]
fn lists_post_then_subscribe_with_reference_schemas() {
    let s = unbound();
    let names: Vec<&str> = s.tools().iter().map(|t| t.name()).collect();
    assert_eq!(names, ["team_chat_post", "team_chat_subscribe"]);
    let post = Value::Object(s.tools()[0].input_schema().clone());
    assert_eq!(post["required"], json!(["text"]));
    let props: Vec<&String> = post["properties"].as_object().unwrap().keys().collect();
    assert_eq!(props.len(), 4);
    for key in ["text", "authorAgentId", "teamId", "roomId"] {
        assert_eq!(post["properties"][key]["type"], "string", "{key}");
    }
    let sub = Value::Object(s.tools()[1].input_schema().clone());
    assert!(sub.get("required").is_none());
    assert_eq!(sub["properties"]["sinceSeq"]["type"], "integer");
    assert_eq!(sub["properties"]["limit"]["type"], "integer");
    assert_eq!(sub["properties"]["waitMs"]["type"], "integer");
    assert_eq!(sub["properties"]["waitMs"]["maximum"], 60000);
    assert_eq!(sub["properties"]["roomId"]["type"], "string");
}

#[test]
fn a_teammate_sees_a_post_wrapped_as_evidence() {
    let agent = room();
    let (leader, worker) = (agent("leader"), agent("worker"));
    let out = leader.call("team_chat_post", json!({"text": "  kick off the build \n"}));
    assert!(!out.is_error, "{}", out.text());
    assert_eq!(
        out.text(),
        "{\n  \"posted\": {\n    \"seq\": 1,\n    \"roomId\": \"team:tm1\",\n    \"authorAgentId\": \"leader\"\n  }\n}"
    );
    let got = worker.call("team_chat_subscribe", json!({})).json();
    let list = posts(&got);
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["authorAgentId"], "leader");
    assert_eq!(list[0]["kind"], "peer");
    assert_eq!(list[0]["seq"], 1);
    assert_eq!(
        list[0]["wrapped"],
        "[Inter-session message \u{b7} from=leader \u{b7} kind=peer \u{b7} seq=1 \u{b7} isUser=false]\n| kick off the build"
    );
    let keys: Vec<&String> = list[0].as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 4, "no raw body beside the envelope");
    assert_eq!(got["nextSeq"], 1);
}

#[test]
fn the_echo_guard_hides_your_own_posts() {
    let worker = room()("worker");
    worker.call("team_chat_post", json!({"text": "on it"}));
    let got = worker.call("team_chat_subscribe", json!({})).json();
    assert!(posts(&got).is_empty());
    assert_eq!(got["nextSeq"], 1);
}

#[test]
fn a_bound_connection_ignores_spoofed_identity_arguments() {
    let agent = room();
    let worker = agent("worker");
    let out = worker.call(
        "team_chat_post",
        json!({"text": "sneaky", "authorAgentId": "leader", "teamId": "evil", "roomId": "team:evil"}),
    );
    assert_eq!(out.json()["posted"]["authorAgentId"], "worker");
    assert_eq!(out.json()["posted"]["roomId"], "team:tm1");
    let seen = agent("leader")
        .call(
            "team_chat_subscribe",
            json!({"authorAgentId": "worker", "roomId": "team:evil"}),
        )
        .json();
    assert_eq!(posts(&seen).len(), 1, "the leader reads tm1 as itself");
    let evil = build(
        Db::open(worker.state().db.path()).unwrap(),
        Some(TeamchatBinding {
            agent_id: "x".into(),
            team_id: "evil".into(),
        }),
    );
    assert!(posts(&evil.call("team_chat_subscribe", json!({})).json()).is_empty());
}

#[test]
fn the_cursor_resumes_after_the_last_read() {
    let agent = room();
    let (a, b) = (agent("a"), agent("b"));
    a.call("team_chat_post", json!({"text": "one"}));
    a.call("team_chat_post", json!({"text": "two"}));
    let first = b.call("team_chat_subscribe", json!({})).json();
    assert_eq!(posts(&first).len(), 2);
    assert_eq!(first["nextSeq"], 2);
    a.call("team_chat_post", json!({"text": "three"}));
    let next = b.call("team_chat_subscribe", json!({"sinceSeq": 2})).json();
    let list = posts(&next);
    assert_eq!(list.len(), 1);
    assert!(list[0]["wrapped"].as_str().unwrap().ends_with("| three"));
}

#[test]
fn a_short_limit_does_not_skip_the_rest_of_the_batch() {
    let agent = room();
    let (a, b) = (agent("a"), agent("b"));
    for text in ["one", "two", "three"] {
        a.call("team_chat_post", json!({"text": text}));
    }
    let page = b.call("team_chat_subscribe", json!({"limit": 1})).json();
    assert_eq!(posts(&page).len(), 1);
    assert_eq!(page["nextSeq"], 1);
    let page = b
        .call("team_chat_subscribe", json!({"limit": 2, "sinceSeq": 1}))
        .json();
    assert_eq!(posts(&page).len(), 2);
    assert_eq!(page["nextSeq"], 3);
}

#[test]
fn empty_text_is_refused_before_identity() {
    let out = unbound().call("team_chat_post", json!({"text": "   "}));
    assert!(out.is_error);
    assert_eq!(out.text(), "a post requires non-empty text");
    let bound = room()("a");
    for blank in ["\n\t", "\u{FEFF} \u{3000}", ""] {
        let out = bound.call("team_chat_post", json!({ "text": blank }));
        assert_eq!(out.text(), "a post requires non-empty text", "{blank:?}");
    }
}

#[test]
fn unbound_calls_must_name_author_and_team() {
    let s = unbound();
    for args in [
        json!({"text": "hi"}),
        json!({"text": "hi", "authorAgentId": "x"}),
        json!({"text": "hi", "teamId": "t"}),
        json!({"text": "hi", "authorAgentId": " ", "teamId": "t"}),
    ] {
        let out = s.call("team_chat_post", args.clone());
        assert!(out.is_error, "{args}");
        assert_eq!(
            out.text(),
            "no bound identity: pass authorAgentId + teamId (unbound mode)"
        );
    }
    let out = s.call("team_chat_subscribe", json!({"teamId": "t"}));
    assert_eq!(
        out.text(),
        "no bound identity: pass authorAgentId + teamId (unbound mode)"
    );
    let out = s.call(
        "team_chat_post",
        json!({"text": "hi", "authorAgentId": "x", "teamId": "t"}),
    );
    assert_eq!(out.json()["posted"]["roomId"], "team:t");
    let out = s.call(
        "team_chat_post",
        json!({"text": "hi", "authorAgentId": "x", "teamId": "t", "roomId": "side"}),
    );
    assert_eq!(out.json()["posted"]["roomId"], "side");
    assert_eq!(out.json()["posted"]["seq"], 1);
}

#[test]
fn bad_cursor_and_limit_are_invalid_args_naming_the_field() {
    let s = room()("a");
    for (args, field) in [
        (json!({"limit": 0}), "limit"),
        (json!({"limit": 501}), "limit"),
        (json!({"sinceSeq": -1}), "sinceSeq"),
        (json!({"sinceSeq": 1.5}), "sinceSeq"),
        (json!({"roomId": 3}), "roomId"),
        (json!({"waitMs": -1}), "waitMs"),
        (json!({"waitMs": 60001}), "waitMs"),
        (json!({"waitMs": "soon"}), "waitMs"),
    ] {
        let out = s.call("team_chat_subscribe", args.clone());
        assert!(out.is_error, "{args}");
        assert!(
            out.text().starts_with(&format!("invalid args: {field}")),
            "{args} gave {}",
            out.text()
        );
    }
    let out = s.call("team_chat_subscribe", json!({"limit": 500}));
    assert!(!out.is_error, "{}", out.text());
    assert_eq!(s.call("nope", json!({})).text(), "unknown tool: nope");
}

/// Runs `work` on its own thread and returns its handle, so a test can act while a call waits.
fn in_background<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    std::thread::spawn(work)
}

#[test]
fn a_waiting_subscribe_returns_when_a_teammate_posts() {
    let agent = room();
    let (leader, worker) = (agent("leader"), agent("worker"));
    let waiting = in_background(move || {
        let started = std::time::Instant::now();
        let got = worker.call("team_chat_subscribe", json!({"waitMs": 60000}));
        (got, started.elapsed())
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(
        !leader
            .call("team_chat_post", json!({"text": "go"}))
            .is_error
    );
    let (got, waited) = waiting.join().unwrap();
    assert!(!got.is_error, "{}", got.text());
    let got = got.json();
    assert_eq!(posts(&got).len(), 1, "{got}");
    assert_eq!(got["nextSeq"], 1);
    assert!(
        waited < std::time::Duration::from_secs(60),
        "woken by the post, not the deadline: {waited:?}"
    );
}

#[test]
fn a_wait_with_nothing_new_but_its_own_posts_ends_at_the_deadline_with_no_posts() {
    let agent = room();
    let leader = agent("leader");
    assert!(
        !leader
            .call("team_chat_post", json!({"text": "one"}))
            .is_error
    );
    let worker = std::sync::Arc::new(agent("worker"));
    let seen = worker.call("team_chat_subscribe", json!({})).json();
    assert_eq!(seen["nextSeq"], 1);
    let waiter = std::sync::Arc::clone(&worker);
    let waiting = in_background(move || {
        let started = std::time::Instant::now();
        let got = waiter.call("team_chat_subscribe", json!({"sinceSeq": 1, "waitMs": 400}));
        (got.json(), started.elapsed())
    });
    // The waiter's own post changes the room but is never delivered back to it.
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert!(
        !worker
            .call("team_chat_post", json!({"text": "mine"}))
            .is_error
    );
    let (got, waited) = waiting.join().unwrap();
    assert_eq!(posts(&got), Vec::<Value>::new(), "{got}");
    assert!(
        waited >= std::time::Duration::from_millis(400),
        "{waited:?}"
    );
    assert!(got["nextSeq"] == 1 || got["nextSeq"] == 2, "{got}");
}

#[test]
fn closing_the_session_ends_a_waiting_subscribe_at_once() {
    let agent = room();
    let worker = std::sync::Arc::new(agent("worker"));
    let waiter = std::sync::Arc::clone(&worker);
    let waiting = in_background(move || {
        let started = std::time::Instant::now();
        let got = waiter.call("team_chat_subscribe", json!({"waitMs": 60000}));
        (got.json(), started.elapsed())
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    worker.close();
    let (got, waited) = waiting.join().unwrap();
    assert_eq!(posts(&got), Vec::<Value>::new());
    assert!(waited < std::time::Duration::from_secs(60), "{waited:?}");
}
