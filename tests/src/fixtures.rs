//! Ready-made store contents for the tests that race or kill many processes: created over the
//! wire with a real bin, like every other test input.
//!
//! Must never: write to the database directly (a fixture is what a client could have made).

use std::path::Path;

use serde_json::{Value, json};

use crate::Server;

/// 100 claimable tasks made by `clawboo-mcp-tasks` on `db`: four roots and 24 children under each
/// (the root-rate cap allows 30 roots). Returns their ids.
pub fn hundred_todo_tasks(db: &Path) -> Vec<String> {
    let mut server = Server::spawn("clawboo-mcp-tasks", db, &[]);
    let mut ids = Vec::new();
    for r in 0..4 {
        let root = server.ok_json("create_task", json!({"title": format!("root {r}")}));
        let root_id = root["id"].as_str().unwrap().to_owned();
        ids.push(root_id.clone());
        let calls: Vec<(&str, Value)> = (0..24)
            .map(|c| {
                (
                    "create_subtask",
                    json!({"parentTaskId": root_id, "title": format!("task {r}.{c}")}),
                )
            })
            .collect();
        for reply in server.call_pipelined(&calls) {
            assert!(!reply.is_error, "{}", reply.text());
            ids.push(reply.json()["id"].as_str().unwrap().to_owned());
        }
    }
    assert_eq!(server.close().code(), Some(0));
    assert_eq!(ids.len(), 100);
    ids
}
