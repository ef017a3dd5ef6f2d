//! Many Tasks processes on one database file at once: the atomic claim has exactly one winner per
//! task and nobody ever sees a busy or locked database, the capped create holds its cap under
//! contention, and eight processes opening one brand-new file at the same instant all succeed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::thread;

use clawboo_tests::fixtures::hundred_todo_tasks;
use clawboo_tests::{Rng, Server, TempDir, integrity_check};
use serde_json::{Value, json};

const BIN: &str = "clawboo-mcp-tasks";
const PROCESSES: usize = 8;

/// Starts `PROCESSES` initialized servers on `db`, each in its own thread, releases them together
/// once all are up, and returns what each `work` returned.
fn in_parallel<T: Send + 'static>(
    db: &Path,
    work: impl Fn(usize, &mut Server) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let start = Arc::new(Barrier::new(PROCESSES));
    let work = Arc::new(work);
    let workers: Vec<_> = (0..PROCESSES)
        .map(|p| {
            let (db, start, work) = (db.to_path_buf(), Arc::clone(&start), Arc::clone(&work));
            thread::spawn(move || {
                let mut server = Server::spawn(BIN, &db, &[]);
                start.wait();
                let out = work(p, &mut server);
                assert_eq!(server.close().code(), Some(0), "process {p} exits cleanly");
                out
            })
        })
        .collect();
    workers
        .into_iter()
        .enumerate()
        .map(|(p, w)| w.join().unwrap_or_else(|_| panic!("process {p} failed")))
        .collect()
}

#[test]
fn eight_processes_claiming_the_same_hundred_tasks_win_each_exactly_once() {
    let dir = TempDir::new("race-claim");
    let db = dir.db_path();
    let tasks = Arc::new(hundred_todo_tasks(&db));

    let shared = Arc::clone(&tasks);
    let outcomes = in_parallel(&db, move |p, server| {
        let agent = format!("agent-{p}");
        let mut order: Vec<String> = shared.to_vec();
        Rng::new(0xC1A1_0000 + p as u64).shuffle(&mut order);
        // Alternate the two claim tools: they are the same mutex.
        let calls: Vec<(&str, Value)> = order
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let tool = if i % 2 == 0 {
                    "claim_task"
                } else {
                    "assign_task"
                };
                (tool, json!({"taskId": id, "assigneeAgentId": agent}))
            })
            .collect();
        // A JSON-RPC error (a busy database escaping as -32603, say) panics in the client.
        let replies = server.call_pipelined(&calls);
        let mut won = Vec::new();
        for (id, reply) in order.iter().zip(replies) {
            if reply.is_error {
                assert_eq!(
                    reply.text(),
                    "claim failed: conflict",
                    "{agent} on {id}: only a conflict may refuse a claim"
                );
            } else {
                let task = reply.json();
                assert_eq!(task["id"], id.as_str());
                assert_eq!(task["status"], "in_progress");
                assert_eq!(task["assigneeAgentId"], agent.as_str());
                won.push(id.clone());
            }
        }
        (agent, won)
    });

    let mut winner: BTreeMap<String, String> = BTreeMap::new();
    for (agent, won) in &outcomes {
        for id in won {
            if let Some(first) = winner.insert(id.clone(), agent.clone()) {
                panic!("{id} was won by both {first} and {agent}");
            }
        }
    }
    assert_eq!(winner.len(), 100, "every task was won by someone");
    assert!(tasks.iter().all(|id| winner.contains_key(id)));

    let conn = rusqlite::Connection::open(&db).unwrap();
    let rows: Vec<(String, String, Option<String>)> = conn
        .prepare("SELECT id, status, assignee_agent_id FROM tasks")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows.len(), 100);
    for (id, status, assignee) in rows {
        assert_eq!(status, "in_progress", "{id}");
        assert_eq!(
            assignee.as_ref(),
            winner.get(&id),
            "the stored assignee is the winner"
        );
    }
    assert_eq!(integrity_check(&db), "ok");
}

#[test]
fn the_child_cap_holds_when_eight_processes_create_under_one_parent() {
    let dir = TempDir::new("race-cap");
    let db = dir.db_path();
    let mut setup = Server::spawn(BIN, &db, &[]);
    let parent = setup.ok_json("create_task", json!({"title": "parent", "teamId": "t"}));
    let parent = parent["id"].as_str().unwrap().to_owned();
    drop(setup);

    let per_process = 5;
    let shared = parent.clone();
    let outcomes = in_parallel(&db, move |p, server| {
        let calls: Vec<(&str, Value)> = (0..per_process)
            .map(|i| {
                (
                    "create_subtask",
                    json!({"parentTaskId": shared, "title": format!("{p}/{i}")}),
                )
            })
            .collect();
        server
            .call_pipelined(&calls)
            .into_iter()
            .map(|reply| {
                if reply.is_error {
                    assert_eq!(
                        reply.denied.as_deref(),
                        Some("child_cap"),
                        "{}",
                        reply.text()
                    );
                    false
                } else {
                    assert_eq!(reply.json()["teamId"], "t");
                    true
                }
            })
            .collect::<Vec<bool>>()
    });
    let created = outcomes.iter().flatten().filter(|c| **c).count();
    assert_eq!(created, 24, "exactly the cap was created");
    assert_eq!(outcomes.iter().flatten().count(), PROCESSES * per_process);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let children: i64 = conn
        .query_row(
            "SELECT count(*) FROM tasks WHERE parent_task_id = ?1",
            [&parent],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(children, 24);
}

/// Spawns `PROCESSES` bins on `db` as close to the same instant as threads allow; each opens the
/// file (and creates its schema) before it reads stdin.
fn spawn_together(db: &Path) -> Vec<Server> {
    let start = Arc::new(Barrier::new(PROCESSES));
    let spawners: Vec<_> = (0..PROCESSES)
        .map(|_| {
            let (db, start): (PathBuf, _) = (db.to_path_buf(), Arc::clone(&start));
            thread::spawn(move || {
                start.wait();
                Server::spawn_raw(BIN, &db, &[])
            })
        })
        .collect();
    spawners.into_iter().map(|s| s.join().unwrap()).collect()
}

#[test]
fn eight_processes_opening_one_brand_new_file_at_once_all_succeed() {
    for round in 0..3 {
        let dir = TempDir::new("race-open");
        let db = dir.db_path();
        assert!(!db.exists());
        let mut servers = spawn_together(&db);
        for server in &mut servers {
            let info = server.initialize();
            assert_eq!(info["serverInfo"]["name"], "clawboo-tasks", "round {round}");
        }
        let writers: Vec<_> = servers
            .into_iter()
            .enumerate()
            .map(|(p, mut server)| {
                thread::spawn(move || {
                    let task = server.ok_json(
                        "create_task",
                        json!({"title": format!("opener {p}"), "teamId": "open"}),
                    );
                    assert_eq!(server.close().code(), Some(0));
                    task["id"].as_str().unwrap().to_owned()
                })
            })
            .collect();
        let mut ids: Vec<String> = writers
            .into_iter()
            .map(|w| w.join().expect("an opener failed"))
            .collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), PROCESSES, "round {round}");

        let conn = rusqlite::Connection::open(&db).unwrap();
        let tasks: i64 = conn
            .query_row("SELECT count(*) FROM tasks", [], |r| r.get(0))
            .unwrap();
        assert_eq!(tasks, PROCESSES as i64, "round {round}");
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        let versions: Vec<(String, i64)> = conn
            .prepare("SELECT component, version FROM clawboo_schema_versions ORDER BY component")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            versions.iter().any(|(c, v)| c == "board" && *v >= 1),
            "{versions:?}"
        );
        drop(conn);
        assert_eq!(integrity_check(&db), "ok", "round {round}");
    }
}

#[test]
fn eight_processes_commenting_and_moving_one_task_never_see_a_locked_database() {
    let dir = TempDir::new("race-writes");
    let db = dir.db_path();
    let mut setup = Server::spawn(BIN, &db, &[]);
    let task = setup.ok_json("create_task", json!({"title": "hot"}));
    let task = task["id"].as_str().unwrap().to_owned();
    drop(setup);

    let comments_each = 50;
    let shared = task.clone();
    let bodies =
        in_parallel(&db, move |p, server| {
            // The task only ever moves between todo and blocked, so every move is legal whatever the
            // interleaving: any failure would be the database's.
            let calls: Vec<(&str, Value)> = (0..comments_each)
            .flat_map(|i| {
                let body = format!("{p}/{i}");
                let mut calls = vec![(
                    "add_comment",
                    json!({"taskId": shared, "body": body, "authorAgentId": format!("agent-{p}")}),
                )];
                if i % 5 == 0 {
                    let tool = if (i / 5 + p) % 2 == 0 { "block_task" } else { "unblock_task" };
                    calls.push((tool, json!({"taskId": shared})));
                }
                calls
            })
            .collect();
            let mut bodies = Vec::new();
            for ((tool, _), reply) in calls.iter().zip(server.call_pipelined(&calls)) {
                assert!(!reply.is_error, "{tool}: {}", reply.text());
                if *tool == "add_comment" {
                    bodies.push(reply.json()["body"].as_str().unwrap().to_owned());
                }
            }
            bodies
        });
    let mut bodies: Vec<String> = bodies.into_iter().flatten().collect();
    bodies.sort();
    bodies.dedup();
    assert_eq!(bodies.len(), PROCESSES * comments_each);

    let mut reader = Server::spawn(BIN, &db, &[]);
    let view = reader.ok_json("get_task", json!({"taskId": task}));
    let stored = view["comments"].as_array().unwrap();
    assert_eq!(stored.len(), PROCESSES * comments_each);
    assert!(
        stored
            .windows(2)
            .all(|w| w[0]["createdAt"].as_i64() <= w[1]["createdAt"].as_i64()),
        "oldest first"
    );
    assert!(matches!(
        view["task"]["status"].as_str(),
        Some("todo" | "blocked")
    ));
}
