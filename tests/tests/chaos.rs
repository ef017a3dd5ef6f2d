//! Chaos: racers are real bin processes (tasks claiming, memory saving, teamchat posting) on one
//! database file, and each incarnation is SIGKILLed at a random point: while it opens the file,
//! or after a random number of the replies to a pipelined batch, with the rest of the batch still
//! in flight. Afterwards the file is sound (`PRAGMA integrity_check`), every acknowledged write is
//! there, no task was won twice, and the chat room's seqs are gap-free, and a fresh process
//! carries on from where the dead ones stopped.
//!
//! Bounded by counts, not time: `RACERS` threads × `ROUNDS` incarnations × `BATCH` calls.

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use clawboo_tests::fixtures::hundred_todo_tasks;
use clawboo_tests::{REPLY_DEADLINE, Rng, Server, TempDir, integrity_check};
use serde_json::{Value, json};

const RACERS: usize = 8;
const ROUNDS: usize = 8;
const BATCH: usize = 16;
const TEAM: &str = "chaos";
const ROOM: &str = "team:chaos";

/// What one racer was told succeeded (a reply read before its process died).
#[derive(Default)]
struct Acknowledged {
    /// `(task id, winning agent)`.
    claims: Vec<(String, String)>,
    /// `(fact id, title)`.
    facts: Vec<(String, String)>,
    /// `(seq, text)`.
    posts: Vec<(i64, String)>,
    /// How many processes this racer killed.
    kills: usize,
}

/// The three kinds of racer work, one bin each.
#[derive(Clone, Copy)]
enum Work {
    Claim,
    Save,
    Post,
}

impl Work {
    fn bin(self) -> &'static str {
        match self {
            Work::Claim => "clawboo-mcp-tasks",
            Work::Save => "clawboo-mcp-memory",
            Work::Post => "clawboo-mcp-teamchat",
        }
    }

    /// The batch of calls incarnation `round` of racer `p` sends.
    fn batch(
        self,
        p: usize,
        round: usize,
        tasks: &[String],
        rng: &mut Rng,
    ) -> Vec<(&'static str, Value)> {
        (0..BATCH)
            .map(|i| match self {
                Work::Claim => (
                    "claim_task",
                    json!({
                        "taskId": tasks[rng.below(tasks.len())],
                        "assigneeAgentId": agent(p, round),
                    }),
                ),
                Work::Save => (
                    "memory_save",
                    json!({
                        "title": format!("chaos {p}/{round}/{i}"),
                        "content": format!("fact {i} written by racer {p} in round {round}"),
                    }),
                ),
                Work::Post => (
                    "team_chat_post",
                    json!({
                        "text": format!("post {p}/{round}/{i}"),
                        "authorAgentId": agent(p, round),
                        "teamId": TEAM,
                    }),
                ),
            })
            .collect()
    }
}

fn agent(p: usize, round: usize) -> String {
    format!("racer-{p}-{round}")
}

/// SIGKILL for a process this test spawned, by its pid.
fn kill_hard(server: &Server) {
    let status = Command::new("kill")
        .args(["-KILL", &server.pid().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -KILL {}", server.pid());
}

/// Reads the next message within `deadline`; `None` when the process is gone or its last line was
/// cut off by the kill (a reply that never fully arrived acknowledges nothing).
fn next_message(server: &mut Server, deadline: Duration) -> Option<Value> {
    catch_unwind(AssertUnwindSafe(|| server.read_message_within(deadline))).unwrap_or(None)
}

/// Records one reply to `call` in `acked`; any refusal other than a lost claim race fails the test.
fn record(acked: &mut Acknowledged, call: &(&str, Value), response: Value) {
    let reply = Server::tool_reply(response);
    let (tool, args) = call;
    match *tool {
        "claim_task" if reply.is_error => {
            assert_eq!(reply.text(), "claim failed: conflict", "{args}");
        }
        "claim_task" => {
            let task = reply.json();
            assert_eq!(task["id"], args["taskId"]);
            acked.claims.push((
                args["taskId"].as_str().unwrap().to_owned(),
                args["assigneeAgentId"].as_str().unwrap().to_owned(),
            ));
        }
        _ if reply.is_error => panic!("{tool} {args}: {}", reply.text()),
        "memory_save" => {
            let fact = &reply.json()["fact"];
            acked.facts.push((
                fact["id"].as_str().unwrap().to_owned(),
                fact["title"].as_str().unwrap().to_owned(),
            ));
        }
        _ => {
            let posted = &reply.json()["posted"];
            acked.posts.push((
                posted["seq"].as_i64().unwrap(),
                args["text"].as_str().unwrap().to_owned(),
            ));
        }
    }
}

/// One racer: `ROUNDS` incarnations, each killed at a random point.
fn racer(p: usize, db: &Path, tasks: &[String]) -> Acknowledged {
    let mut rng = Rng::new(0xC4A0_5000 + p as u64);
    let mut acked = Acknowledged::default();
    for round in 0..ROUNDS {
        let work = [Work::Claim, Work::Save, Work::Post][(p + round) % 3];
        let mut server = Server::spawn_raw(work.bin(), db, &[]);
        if rng.below(6) == 0 {
            // Killed while it opens the file and applies the schema.
            kill_hard(&server);
            acked.kills += 1;
            continue;
        }
        server.initialize();
        let calls = work.batch(p, round, tasks, &mut rng);
        let ids: BTreeMap<u64, usize> = calls
            .iter()
            .enumerate()
            .map(|(i, (tool, args))| {
                let params = json!({"name": tool, "arguments": args});
                (server.send_request("tools/call", params), i)
            })
            .collect();
        let read_before_kill = rng.below(BATCH + 1);
        let mut read = 0;
        while read < read_before_kill {
            let message = next_message(&mut server, REPLY_DEADLINE).expect("a live server replies");
            if let Some(&i) = message["id"].as_u64().and_then(|id| ids.get(&id)) {
                record(&mut acked, &calls[i], message);
                read += 1;
            }
        }
        kill_hard(&server);
        acked.kills += 1;
        // Replies written before the kill are acknowledged too; the dead process writes no more.
        while let Some(message) = next_message(&mut server, Duration::from_secs(5)) {
            if let Some(&i) = message["id"].as_u64().and_then(|id| ids.get(&id)) {
                record(&mut acked, &calls[i], message);
            }
        }
    }
    acked
}

#[test]
fn racers_killed_at_random_lose_no_acknowledged_write_and_leave_a_sound_file() {
    let dir = TempDir::new("chaos");
    let db = dir.db_path();
    let tasks = Arc::new(hundred_todo_tasks(&db));

    let racers: Vec<_> = (0..RACERS)
        .map(|p| {
            let (db, tasks) = (db.clone(), Arc::clone(&tasks));
            thread::spawn(move || racer(p, &db, &tasks))
        })
        .collect();
    let acked: Vec<Acknowledged> = racers
        .into_iter()
        .enumerate()
        .map(|(p, r)| r.join().unwrap_or_else(|_| panic!("racer {p} failed")))
        .collect();
    let kills: usize = acked.iter().map(|a| a.kills).sum();
    assert_eq!(kills, RACERS * ROUNDS, "every incarnation was killed");

    assert_eq!(integrity_check(&db), "ok");
    let conn = rusqlite::Connection::open(&db).unwrap();

    // No task was won twice, and every acknowledged win is stored as won.
    let mut winner: BTreeMap<&str, &str> = BTreeMap::new();
    for (task, agent) in acked.iter().flat_map(|a| &a.claims) {
        if let Some(first) = winner.insert(task, agent) {
            panic!("{task} was won by both {first} and {agent}");
        }
    }
    for (task, agent) in &winner {
        let (status, assignee): (String, Option<String>) = conn
            .query_row(
                "SELECT status, assignee_agent_id FROM tasks WHERE id = ?1",
                [task],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(status, "in_progress", "{task}");
        assert_eq!(assignee.as_deref(), Some(*agent), "{task}");
    }

    // Every acknowledged fact is stored under its id and title.
    for (id, title) in acked.iter().flat_map(|a| &a.facts) {
        let stored: String = conn
            .query_row("SELECT title FROM memory_facts WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .unwrap_or_else(|e| panic!("acknowledged fact {id} ({title}) is missing: {e}"));
        assert_eq!(&stored, title);
    }

    // The room's seqs run 1..=n without a gap, and every acknowledged post holds its seq.
    let stored: BTreeMap<i64, String> = conn
        .prepare("SELECT seq, body FROM team_chat WHERE room_id = ?1 ORDER BY seq")
        .unwrap()
        .query_map([ROOM], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let seqs: Vec<i64> = stored.keys().copied().collect();
    let expected: Vec<i64> = (1..=seqs.len() as i64).collect();
    assert_eq!(seqs, expected, "chat seqs are gap-free");
    for (seq, text) in acked.iter().flat_map(|a| &a.posts) {
        assert_eq!(stored.get(seq), Some(text), "acknowledged post {seq}");
    }
    let bodies: BTreeSet<&String> = stored.values().collect();
    assert_eq!(bodies.len(), stored.len(), "no post was stored twice");
    drop(conn);

    // A fresh process carries on: the next post takes the next seq.
    let mut chat = Server::spawn("clawboo-mcp-teamchat", &db, &[]);
    let reply = chat.call(
        "team_chat_post",
        json!({"text": "after the chaos", "authorAgentId": "survivor", "teamId": TEAM}),
    );
    assert!(!reply.is_error, "{}", reply.text());
    assert_eq!(reply.json()["posted"]["seq"], seqs.len() as i64 + 1);
    assert_eq!(chat.close().code(), Some(0));
    println!(
        "chaos: {kills} kills; acknowledged {} claims, {} facts, {} posts",
        winner.len(),
        acked.iter().map(|a| a.facts.len()).sum::<usize>(),
        seqs.len()
    );
}
