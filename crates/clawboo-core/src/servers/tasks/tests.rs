use super::*;
use serde_json::json;

fn server() -> Server<TasksState> {
    build(Db::open_in_memory().unwrap(), None)
}

#[test]
fn lists_its_tools_in_reference_order() {
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
            "link_task"
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
