use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;
use serde_json::{Value, json};

fn server() -> Server<TasksState> {
    build(Db::open_in_memory().unwrap(), None)
}

#[test]
fn lists_the_reference_twelve_tools_in_order_then_renew_task_lease() {
    let names: Vec<&str> = server().tools().iter().map(|t| t.name()).collect();
    assert_eq!(
        names,
        [
            "list_tasks",
            "get_task",
            "create_task",
            "create_subtask",
            "claim_task",
            "assign_task",
            "release_task",
            "update_task_status",
            "block_task",
            "unblock_task",
            "add_comment",
            "link_task",
            "renew_task_lease"
        ]
    );
}

#[test]
fn claim_conflict_is_a_tool_error_not_a_protocol_error() {
    let s = server();
    let task = s.call("create_task", json!({"title": "t"})).json();
    let id = task["id"].as_str().unwrap();
    assert!(
        !s.call("claim_task", json!({"taskId": id, "assigneeAgentId": "a1"}))
            .is_error
    );
    let second = s.call("claim_task", json!({"taskId": id, "assigneeAgentId": "a2"}));
    assert!(second.is_error);
    assert_eq!(second.text(), "claim failed: conflict");
}

/// Two servers (two sessions, as two processes would be) on one fresh database file.
struct TwoSessions {
    dir: std::path::PathBuf,
    waiter: Arc<Server<TasksState>>,
    writer: Server<TasksState>,
}

impl TwoSessions {
    fn new() -> Self {
        let dir = std::env::temp_dir().join(format!("clawboo-tasks-wait-{}", crate::db::new_id()));
        let path = dir.join("clawboo.db");
        Self {
            waiter: Arc::new(build(Db::open(&path).unwrap(), None)),
            writer: build(Db::open(&path).unwrap(), None),
            dir,
        }
    }

    /// Starts `list_tasks` with `args` on the waiter in the background.
    fn wait_in_background(&self, args: Value) -> std::thread::JoinHandle<(Value, Duration)> {
        let waiter = Arc::clone(&self.waiter);
        std::thread::spawn(move || {
            let started = Instant::now();
            let out = waiter.call("list_tasks", args);
            assert!(!out.is_error, "{}", out.text());
            (out.json(), started.elapsed())
        })
    }
}

impl Drop for TwoSessions {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn id_of(task: &Value) -> String {
    task["id"].as_str().unwrap().to_owned()
}

#[test]
fn wait_ms_is_checked_and_waits_only_for_ready_work() {
    let s = server();
    for (args, text) in [
        (
            json!({"waitMs": 60001, "ready": true}),
            "invalid args: waitMs: must be at most 60000, got 60001",
        ),
        (
            json!({"waitMs": -5, "ready": true}),
            "invalid args: waitMs: must be at least 0, got -5",
        ),
        (
            json!({"waitMs": 100}),
            "invalid args: waitMs: waits only for ready work; pass ready=true with it",
        ),
    ] {
        let out = s.call("list_tasks", args.clone());
        assert!(out.is_error, "{args}");
        assert_eq!(out.text(), text, "{args}");
    }
    let quick = s.call("list_tasks", json!({"waitMs": 0}));
    assert_eq!(quick.json(), json!([]));
}

#[test]
fn a_waiting_ready_list_returns_when_a_dependency_is_done() {
    let two = TwoSessions::new();
    let w = &two.writer;
    let dep = w
        .call("create_task", json!({"title": "dep", "teamId": "t1"}))
        .json();
    let next = w
        .call("create_task", json!({"title": "next", "teamId": "t1"}))
        .json();
    let other = w
        .call("create_task", json!({"title": "elsewhere", "teamId": "t2"}))
        .json();
    w.call(
        "link_task",
        json!({"taskId": id_of(&next), "dependsOnTaskId": id_of(&dep)}),
    );
    w.call(
        "claim_task",
        json!({"taskId": id_of(&dep), "assigneeAgentId": "a1"}),
    );
    w.call(
        "claim_task",
        json!({"taskId": id_of(&other), "assigneeAgentId": "a1"}),
    );
    let waiting = two.wait_in_background(json!({"ready": true, "teamId": "t1", "waitMs": 60000}));
    std::thread::sleep(Duration::from_millis(100));
    let done = w.call(
        "update_task_status",
        json!({"taskId": id_of(&dep), "status": "done"}),
    );
    assert!(!done.is_error, "{}", done.text());
    let (ready, waited) = waiting.join().unwrap();
    assert_eq!(ready[0]["id"], next["id"], "{ready}");
    assert!(waited < Duration::from_secs(60), "{waited:?}");
}

#[test]
fn a_waiting_ready_list_ends_at_its_deadline_or_when_the_session_closes() {
    let two = TwoSessions::new();
    let (empty, waited) = two
        .wait_in_background(json!({"ready": true, "waitMs": 300}))
        .join()
        .unwrap();
    assert_eq!(empty, json!([]));
    assert!(waited >= Duration::from_millis(300), "{waited:?}");

    let waiting = two.wait_in_background(json!({"ready": true, "waitMs": 60000}));
    std::thread::sleep(Duration::from_millis(100));
    two.waiter.close();
    let (empty, waited) = waiting.join().unwrap();
    assert_eq!(empty, json!([]));
    assert!(waited < Duration::from_secs(60), "{waited:?}");
}

#[test]
fn a_lease_running_out_wakes_a_waiting_ready_list() {
    let two = TwoSessions::new();
    let w = &two.writer;
    let task = w.call("create_task", json!({"title": "t"})).json();
    let claimed = w
        .call(
            "claim_task",
            json!({"taskId": id_of(&task), "assigneeAgentId": "a1", "leaseSeconds": 1}),
        )
        .json();
    assert!(claimed["leaseExpiresAt"].is_i64(), "{claimed}");
    let (ready, waited) = two
        .wait_in_background(json!({"ready": true, "waitMs": 60000}))
        .join()
        .unwrap();
    assert_eq!(ready[0]["id"], task["id"], "{ready}");
    assert!(waited < Duration::from_secs(60), "{waited:?}");
    let got = two
        .waiter
        .call("get_task", json!({"taskId": id_of(&task)}))
        .json();
    assert_eq!(got["comments"][0]["authorType"], "system", "{got}");
}

#[test]
fn claims_take_leases_and_their_holder_renews_them() {
    let s = server();
    let task = s.call("create_task", json!({"title": "t"})).json();
    let id = id_of(&task);
    let bad = s.call(
        "claim_task",
        json!({"taskId": id, "assigneeAgentId": "a1", "leaseSeconds": 86401}),
    );
    assert_eq!(
        bad.text(),
        "invalid args: leaseSeconds: must be at most 86400, got 86401"
    );
    let plain = s
        .call(
            "claim_task",
            json!({"taskId": id, "assigneeAgentId": "a1", "leaseSeconds": 0}),
        )
        .json();
    assert!(plain.get("leaseExpiresAt").is_none(), "{plain}");
    let renewed = s.call(
        "renew_task_lease",
        json!({"taskId": id, "assigneeAgentId": "a2", "leaseSeconds": 60}),
    );
    assert_eq!(
        renewed.text(),
        "renew failed: not_holder (the task is in_progress, assigned to a1)"
    );
    let started = s
        .call(
            "renew_task_lease",
            json!({"taskId": id, "assigneeAgentId": "a1", "leaseSeconds": 60}),
        )
        .json();
    assert!(started["leaseExpiresAt"].is_i64(), "{started}");
    let missing = s.call(
        "renew_task_lease",
        json!({"taskId": "ghost", "assigneeAgentId": "a1"}),
    );
    assert_eq!(missing.text(), "renew failed: not_found");
}

#[test]
fn the_default_lease_comes_from_the_environment_value() {
    assert_eq!(default_lease(None), Ok(None));
    assert_eq!(default_lease(Some("  ")), Ok(None));
    assert_eq!(default_lease(Some("0")), Ok(None));
    assert_eq!(default_lease(Some(" 90 ")), Ok(Some(90)));
    for bad in ["-1", "86401", "soon", "1.5"] {
        let err = default_lease(Some(bad)).unwrap_err();
        assert!(
            err.starts_with("CLAWBOO_CLAIM_LEASE_SECS: expected whole seconds"),
            "{err}"
        );
    }
    let s = build_with_lease(Db::open_in_memory().unwrap(), None, Some(90));
    let task = s.call("create_task", json!({"title": "t"})).json();
    let claimed = s
        .call(
            "claim_task",
            json!({"taskId": id_of(&task), "assigneeAgentId": "a1"}),
        )
        .json();
    assert!(claimed["leaseExpiresAt"].is_i64(), "{claimed}");
}

/// Only `get_task`, one task by its key, is a quick read the HTTP host may answer on its async
/// worker; `list_tasks` reads the whole board (on the pool, though a stdio reader answers it),
/// and one that asks to wait is answered by neither.
#[test]
fn only_get_task_is_a_quick_read() {
    let s = server();
    let call = |name: &str, arguments: Value| json!({"name": name, "arguments": arguments});
    let get = call("get_task", json!({"taskId": "t"}));
    let list = call("list_tasks", json!({}));
    let waiting = call("list_tasks", json!({"ready": true, "waitMs": 1000}));
    assert!(s.answers_quickly_json(get.clone()) && s.answers_inline_json(get));
    assert!(!s.answers_quickly_json(list.clone()) && s.answers_inline_json(list));
    assert!(!s.answers_quickly_json(waiting.clone()) && !s.answers_inline_json(waiting));
    let quick: Vec<&str> = s
        .tools()
        .iter()
        .map(|t| t.name())
        .filter(|name| s.answers_quickly_json(call(name, json!({}))))
        .collect();
    assert_eq!(quick, ["get_task"]);
}
