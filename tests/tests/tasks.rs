//! The Tasks bin over stdio, against the contract (seed `000_777feda9b545bc12`, spec `tasks.md`):
//! every tool's happy path, the whole 7×7 status matrix through each tool that changes status,
//! every tool-error text, argument errors of each kind, the create caps with `_meta.denied`, the
//! team-bound session, the protocol's error paths, and the reference defects this port fixes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clawboo_tests::{Server, TempDir, ToolReply};
use serde_json::{Value, json};

const BIN: &str = "clawboo-mcp-tasks";

/// A test clock for the bin (honoured by debug builds, which is what `cargo test` runs): time
/// starts here and moves 1 ms with every reading, so successive writes get strictly later
/// timestamps without the test sleeping.
const STEPPING_CLOCK: (&str, &str) = ("CLAWBOO_TEST_CLOCK_MS", "1700000000000");

/// Whether the bins under test honour [`STEPPING_CLOCK`]: debug builds do, release builds ignore
/// it (`CLAWBOO_TEST_PROFILE` picks the bins' profile; debug by default).
fn bins_honour_the_test_clock() -> bool {
    std::env::var("CLAWBOO_TEST_PROFILE").map_or(true, |profile| profile != "release")
}

/// The statuses in canonical order.
const STATUSES: [&str; 7] = [
    "backlog",
    "todo",
    "in_progress",
    "in_review",
    "blocked",
    "done",
    "cancelled",
];

/// The spec's §2 table, restated here so the test does not trust the code under test: the
/// statuses reachable from `from` in one move, in table order.
fn targets(from: &str) -> &'static [&'static str] {
    match from {
        "backlog" => &["todo", "blocked", "cancelled"],
        "todo" => &["in_progress", "blocked", "backlog", "cancelled"],
        "in_progress" => &["in_review", "done", "blocked", "todo", "cancelled"],
        "in_review" => &["done", "in_progress", "blocked", "cancelled"],
        "blocked" => &["todo", "in_progress", "backlog", "cancelled"],
        "done" | "cancelled" => &[],
        other => panic!("unknown status {other}"),
    }
}

fn legal(from: &str, to: &str) -> bool {
    from == to || targets(from).contains(&to)
}

/// The text of a refused move: the reference's `<action> failed: illegal_transition` (spec §3.7),
/// then our detail, `(<from> → <to>; allowed: <targets, or none>)`.
fn illegal(action: &str, from: &str, to: &str, allowed: &[&str]) -> String {
    let allowed = if allowed.is_empty() {
        "none".to_owned()
    } else {
        allowed.join(", ")
    };
    format!("{action} failed: illegal_transition ({from} → {to}; allowed: {allowed})")
}

/// `list_tasks`'s description after its first sentence (which says whose tasks it lists).
const LIST_TASKS_REST: &str = "Pass ready=true for only claimable (deps satisfied) work. To wait for work instead of polling, add waitMs (up to 60000): with nothing ready the call returns as soon as a task becomes ready, or after waitMs with [].";

/// The keys of a task object (spec §1.4).
const TASK_KEYS: [&str; 21] = [
    "id",
    "title",
    "description",
    "status",
    "priority",
    "teamId",
    "assigneeAgentId",
    "assigneeRuntime",
    "parentTaskId",
    "sourceDelegationId",
    "worktreeRef",
    "branchRef",
    "costUsd",
    "parentSessionId",
    "dropped",
    "tenantId",
    "scheduledBy",
    "verification",
    "createdAt",
    "updatedAt",
    "completedAt",
];

/// A Tasks server on its own fresh database, with helpers that assert as they go. Tasks made by
/// [`Board::task`] hang under shared parents, so a test can make hundreds without meeting the
/// root-rate cap (30 roots per five minutes).
struct Board {
    server: Server,
    dir: TempDir,
    parents: Vec<(String, usize)>,
}

impl Board {
    fn new(label: &str) -> Self {
        Self::with_env(label, &[])
    }

    fn with_env(label: &str, env: &[(&str, &str)]) -> Self {
        let dir = TempDir::new(label);
        let server = Server::spawn(BIN, &dir.db_path(), env);
        Self {
            server,
            dir,
            parents: Vec::new(),
        }
    }

    fn db(&self) -> PathBuf {
        self.dir.db_path()
    }

    /// A call that must succeed; returns the reply.
    fn ok(&mut self, tool: &str, args: Value) -> ToolReply {
        let reply = self.server.call(tool, args.clone());
        assert!(!reply.is_error, "{tool} {args} failed: {}", reply.text());
        assert_eq!(reply.denied, None);
        reply
    }

    /// A call that must succeed with a JSON payload.
    fn json(&mut self, tool: &str, args: Value) -> Value {
        self.ok(tool, args).json()
    }

    /// A call that must be a tool-error; returns the reply.
    fn err(&mut self, tool: &str, args: Value) -> ToolReply {
        let reply = self.server.call(tool, args.clone());
        assert!(reply.is_error, "{tool} {args} succeeded: {}", reply.text());
        reply
    }

    /// A call that must be a tool-error with exactly `text` and no `_meta.denied`.
    fn err_text(&mut self, tool: &str, args: Value, text: &str) {
        let reply = self.err(tool, args.clone());
        assert_eq!(reply.text(), text, "{tool} {args}");
        assert_eq!(reply.denied, None, "{tool} {args}");
    }

    /// A fresh root task (counts against the root-rate cap).
    fn root(&mut self, args: Value) -> Value {
        self.json("create_task", args)
    }

    /// A fresh task created directly in `status` (creation applies no state machine).
    fn task(&mut self, status: &str) -> String {
        let parent = match self.parents.last_mut() {
            Some((id, children)) if *children < 24 => {
                *children += 1;
                id.clone()
            }
            _ => {
                let id = id_of(&self.root(json!({"title": "pool"})));
                self.parents.push((id.clone(), 1));
                id
            }
        };
        let task = self.json(
            "create_task",
            json!({"title": format!("a {status} task"), "status": status, "parentTaskId": parent}),
        );
        assert_eq!(task["status"], status);
        id_of(&task)
    }

    fn get(&mut self, id: &str) -> Value {
        self.json("get_task", json!({"taskId": id}))
    }

    fn status_of(&mut self, id: &str) -> String {
        self.get(id)["task"]["status"]
            .as_str()
            .expect("a status")
            .to_owned()
    }

    fn ids(&mut self, args: Value) -> Vec<String> {
        self.json("list_tasks", args)
            .as_array()
            .expect("list_tasks returns an array")
            .iter()
            .map(id_of)
            .collect()
    }
}

fn id_of(task: &Value) -> String {
    task["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id in {task}"))
        .to_owned()
}

fn assert_uuid_v4(id: &str) {
    let groups: Vec<usize> = id.split('-').map(str::len).collect();
    assert_eq!(groups, [8, 4, 4, 4, 12], "{id}");
    assert!(
        id.chars()
            .all(|c| c == '-' || c.is_ascii_digit() || ('a'..='f').contains(&c)),
        "{id}"
    );
    assert_eq!(&id[14..15], "4", "{id}");
    assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"), "{id}");
}

fn assert_task_shape(task: &Value) {
    let keys: BTreeSet<&str> = task
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {task}"))
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, TASK_KEYS.into_iter().collect::<BTreeSet<_>>());
    assert_uuid_v4(task["id"].as_str().unwrap());
}

fn sql(db: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(db).unwrap()
}

#[test]
fn initialize_names_the_server_and_lists_the_seed_tools_with_their_schemas_then_ours() {
    let dir = TempDir::new("tasks-list");
    let mut server = Server::spawn_raw(BIN, &dir.db_path(), &[]);
    let info = server.initialize();
    assert_eq!(info["serverInfo"]["name"], "clawboo-tasks");
    assert_eq!(info["serverInfo"]["version"], clawboo_tests::VERSION);
    assert!(info["capabilities"]["tools"].is_object(), "{info}");

    let tools = server.list_tools();
    let described: Vec<(&str, &str)> = tools
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap(),
                t["description"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        described,
        [
            (
                "list_tasks",
                format!("List board tasks. {LIST_TASKS_REST}").as_str()
            ),
            (
                "get_task",
                "Get a task with its comments and ancestor chain."
            ),
            (
                "create_task",
                "Create a board task. With parentTaskId set it is a subtask: the per-parent child-count and nesting-depth caps apply. Without one it is a root task, rate-limited per rolling window."
            ),
            (
                "create_subtask",
                "Create a subtask under a parent (inherits the parent team). Capped per parent (child count) and by nesting depth."
            ),
            (
                "claim_task",
                "Atomically claim a todo task. A \"conflict\" error means another agent won \u{2014} do not retry. With leaseSeconds the claim is a lease: renew it before leaseExpiresAt (renew_task_lease, or add_comment with your authorAgentId) or the task goes back to todo for another agent."
            ),
            (
                "assign_task",
                "Assign a todo task to an agent (same atomic claim; conflict means already assigned). leaseSeconds works as for claim_task."
            ),
            ("release_task", "Release an in-progress task back to todo."),
            (
                "update_task_status",
                "Transition a task status (state-machine enforced; illegal transitions error)."
            ),
            ("block_task", "Mark a task blocked."),
            ("unblock_task", "Unblock a task (back to todo)."),
            (
                "add_comment",
                "Add a comment to a task (report-up summaries, system notes)."
            ),
            (
                "link_task",
                "Make taskId depend on dependsOnTaskId (it stays unready until the dependency is done)."
            ),
            (
                "renew_task_lease",
                "Renew your lease on a task you claimed with leaseSeconds: it runs leaseSeconds (default: the claim's length) from now. Renew well before leaseExpiresAt; once a lease has run out the task is back in todo and this call fails with lease_expired."
            ),
        ]
    );

    let status_enum = json!(STATUSES);
    /// A tool's name, its required fields, and its properties as (name, type, enum).
    type Shape<'a> = (
        &'a str,
        &'a [&'a str],
        &'a [(&'a str, &'a str, Option<&'a Value>)],
    );
    let expected: [Shape; 13] = [
        (
            "list_tasks",
            &[],
            &[
                ("teamId", "string", None),
                ("status", "string", Some(&status_enum)),
                ("ready", "boolean", None),
                ("waitMs", "integer", None),
            ],
        ),
        ("get_task", &["taskId"], &[("taskId", "string", None)]),
        (
            "create_task",
            &["title"],
            &[
                ("title", "string", None),
                ("description", "string", None),
                ("status", "string", Some(&status_enum)),
                ("priority", "integer", None),
                ("teamId", "string", None),
                ("parentTaskId", "string", None),
                ("assigneeRuntime", "string", None),
            ],
        ),
        (
            "create_subtask",
            &["parentTaskId", "title"],
            &[
                ("parentTaskId", "string", None),
                ("title", "string", None),
                ("description", "string", None),
            ],
        ),
        (
            "claim_task",
            &["taskId", "assigneeAgentId"],
            &[
                ("taskId", "string", None),
                ("assigneeAgentId", "string", None),
                ("assigneeRuntime", "string", None),
                ("leaseSeconds", "integer", None),
            ],
        ),
        (
            "assign_task",
            &["taskId", "assigneeAgentId"],
            &[
                ("taskId", "string", None),
                ("assigneeAgentId", "string", None),
                ("assigneeRuntime", "string", None),
                ("leaseSeconds", "integer", None),
            ],
        ),
        ("release_task", &["taskId"], &[("taskId", "string", None)]),
        (
            "update_task_status",
            &["taskId", "status"],
            &[
                ("taskId", "string", None),
                ("status", "string", Some(&status_enum)),
            ],
        ),
        ("block_task", &["taskId"], &[("taskId", "string", None)]),
        ("unblock_task", &["taskId"], &[("taskId", "string", None)]),
        (
            "add_comment",
            &["taskId", "body"],
            &[
                ("taskId", "string", None),
                ("body", "string", None),
                ("authorAgentId", "string", None),
                (
                    "authorType",
                    "string",
                    Some(&json!(["agent", "user", "system"])),
                ),
            ],
        ),
        (
            "link_task",
            &["taskId", "dependsOnTaskId"],
            &[
                ("taskId", "string", None),
                ("dependsOnTaskId", "string", None),
            ],
        ),
        (
            "renew_task_lease",
            &["taskId", "assigneeAgentId"],
            &[
                ("taskId", "string", None),
                ("assigneeAgentId", "string", None),
                ("leaseSeconds", "integer", None),
            ],
        ),
    ];
    for (tool, (name, required, props)) in tools.iter().zip(expected) {
        assert_eq!(tool["name"], name);
        let schema = &tool["inputSchema"];
        assert_eq!(schema["type"], "object", "{name}");
        if required.is_empty() {
            assert!(schema.get("required").is_none(), "{name}: {schema}");
        } else {
            let got: BTreeSet<&str> = schema["required"]
                .as_array()
                .unwrap_or_else(|| panic!("{name} has no required array: {schema}"))
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            assert_eq!(got, required.iter().copied().collect(), "{name}");
        }
        let properties = schema["properties"].as_object().unwrap();
        assert_eq!(
            properties
                .keys()
                .map(String::as_str)
                .collect::<BTreeSet<_>>(),
            props.iter().map(|p| p.0).collect::<BTreeSet<_>>(),
            "{name}"
        );
        for (prop, ty, allowed) in props {
            assert_eq!(properties[*prop]["type"], *ty, "{name}.{prop}");
            assert_eq!(properties[*prop].get("enum"), *allowed, "{name}.{prop}");
        }
    }
}

#[test]
fn every_tool_has_a_working_happy_path() {
    let mut b = Board::new("tasks-happy");
    let before = b.ids(json!({}));
    assert!(before.is_empty());

    // create_task: the reference's defaults, every key present, ms timestamps.
    let root = b.root(json!({"title": "Cross-runtime task", "teamId": "t1"}));
    assert_task_shape(&root);
    assert_eq!(root["title"], "Cross-runtime task");
    assert_eq!(root["status"], "todo");
    assert_eq!(root["priority"], 0);
    assert_eq!(root["teamId"], "t1");
    assert_eq!(root["assigneeAgentId"], Value::Null);
    assert_eq!(root["description"], Value::Null);
    assert_eq!(root["parentTaskId"], Value::Null);
    assert_eq!(root["costUsd"].as_f64(), Some(0.0));
    assert_eq!(root["dropped"], 0);
    assert_eq!(root["scheduledBy"], "manual");
    assert_eq!(root["verification"], Value::Null);
    assert_eq!(root["completedAt"], Value::Null);
    let created = root["createdAt"].as_i64().unwrap();
    assert!(created > 1_600_000_000_000, "ms since the epoch: {created}");
    assert_eq!(root["updatedAt"], created);
    let root_id = id_of(&root);

    let full = b.root(json!({
        "title": "", "description": "d", "status": "backlog", "priority": 7,
        "teamId": "t2", "assigneeRuntime": "codex"
    }));
    assert_eq!(full["title"], "", "an empty title is allowed");
    assert_eq!(full["description"], "d");
    assert_eq!(full["status"], "backlog");
    assert_eq!(full["priority"], 7);
    assert_eq!(full["teamId"], "t2");
    assert_eq!(full["assigneeRuntime"], "codex");
    assert_eq!(full["assigneeAgentId"], Value::Null);
    let done_at_birth = b.root(json!({"title": "born done", "status": "done", "teamId": "t2"}));
    assert_eq!(
        done_at_birth["completedAt"],
        Value::Null,
        "creating in a terminal status does not stamp completedAt"
    );

    // create_subtask inherits the parent's team; create_task under a parent takes its own team.
    let child = b.json(
        "create_subtask",
        json!({"parentTaskId": root_id, "title": "child", "description": "c"}),
    );
    assert_task_shape(&child);
    assert_eq!(child["parentTaskId"], root_id.as_str());
    assert_eq!(child["teamId"], "t1");
    assert_eq!(child["status"], "todo");
    assert_eq!(child["description"], "c");
    let child_id = id_of(&child);
    let grand = b.json(
        "create_task",
        json!({"parentTaskId": child_id, "title": "grand", "priority": 3}),
    );
    assert_eq!(grand["teamId"], "t1", "no teamId argument: the parent's");
    let grand_id = id_of(&grand);
    let other_team = b.json(
        "create_task",
        json!({"parentTaskId": root_id, "title": "elsewhere", "teamId": "t9"}),
    );
    assert_eq!(
        other_team["teamId"], "t9",
        "unbound: teamId overrides the parent's"
    );

    // list_tasks: team and status filters; everything else.
    let mut t1 = b.ids(json!({"teamId": "t1"}));
    t1.sort();
    let mut expected = vec![root_id.clone(), child_id.clone(), grand_id.clone()];
    expected.sort();
    assert_eq!(t1, expected);
    assert_eq!(b.ids(json!({})).len(), 6);
    assert_eq!(
        b.ids(json!({"teamId": ""})).len(),
        6,
        "an empty team is no filter"
    );
    assert_eq!(b.ids(json!({"status": "backlog"})), [id_of(&full)]);
    assert_eq!(
        b.ids(json!({"teamId": "t2", "status": "done"})),
        [id_of(&done_at_birth)]
    );
    assert!(b.ids(json!({"teamId": "nobody"})).is_empty());

    // claim_task and assign_task: the atomic claim.
    let claimed = b.json(
        "claim_task",
        json!({"taskId": grand_id, "assigneeAgentId": "agent-1", "assigneeRuntime": "claude-code"}),
    );
    assert_task_shape(&claimed);
    assert_eq!(claimed["status"], "in_progress");
    assert_eq!(claimed["assigneeAgentId"], "agent-1");
    assert_eq!(claimed["assigneeRuntime"], "claude-code");
    assert!(claimed["updatedAt"].as_i64().unwrap() >= grand["updatedAt"].as_i64().unwrap());
    let assigned = b.json(
        "assign_task",
        json!({"taskId": child_id, "assigneeAgentId": "agent-2"}),
    );
    assert_eq!(assigned["status"], "in_progress");
    assert_eq!(assigned["assigneeAgentId"], "agent-2");
    assert_eq!(assigned["assigneeRuntime"], Value::Null);

    // release_task: back to todo, unassigned.
    let released = b.ok("release_task", json!({"taskId": child_id}));
    assert_eq!(released.text(), format!("released: {child_id}"));
    let after = b.get(&child_id)["task"].clone();
    assert_eq!(after["status"], "todo");
    assert_eq!(after["assigneeAgentId"], Value::Null);
    assert_eq!(after["assigneeRuntime"], Value::Null);

    // update_task_status, block_task, unblock_task.
    let reviewed = b.json(
        "update_task_status",
        json!({"taskId": grand_id, "status": "in_review"}),
    );
    assert_eq!(reviewed["status"], "in_review");
    assert_eq!(
        reviewed["assigneeAgentId"], "agent-1",
        "in_review keeps the assignee"
    );
    let done = b.json(
        "update_task_status",
        json!({"taskId": grand_id, "status": "done"}),
    );
    assert_eq!(done["status"], "done");
    assert!(done["completedAt"].as_i64().unwrap() >= created);
    let blocked = b.json("block_task", json!({"taskId": root_id}));
    assert_eq!(blocked["status"], "blocked");
    let unblocked = b.json("unblock_task", json!({"taskId": root_id}));
    assert_eq!(unblocked["status"], "todo");

    // add_comment: authorType defaults to agent; comments come back oldest first.
    let c1 = b.json("add_comment", json!({"taskId": root_id, "body": "first"}));
    assert_eq!(
        c1.as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect::<BTreeSet<_>>(),
        [
            "id",
            "taskId",
            "authorAgentId",
            "authorType",
            "body",
            "tenantId",
            "createdAt"
        ]
        .into_iter()
        .collect()
    );
    assert_uuid_v4(c1["id"].as_str().unwrap());
    assert_eq!(c1["taskId"], root_id.as_str());
    assert_eq!(c1["authorType"], "agent");
    assert_eq!(c1["authorAgentId"], Value::Null);
    assert_eq!(c1["tenantId"], Value::Null);
    let c2 = b.json(
        "add_comment",
        json!({"taskId": root_id, "body": "", "authorAgentId": "u1", "authorType": "user"}),
    );
    assert_eq!(c2["authorType"], "user");
    assert_eq!(c2["authorAgentId"], "u1");
    assert_eq!(c2["body"], "");
    let c3 = b.json(
        "add_comment",
        json!({"taskId": root_id, "body": "third", "authorType": "system"}),
    );
    assert_eq!(c3["authorType"], "system");

    // get_task: the task, its comments oldest first, its ancestors root first.
    let view = b.get(&grand_id);
    assert_eq!(
        view.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["task", "comments", "ancestors"]
    );
    assert_eq!(view["task"]["id"], grand_id.as_str());
    assert_eq!(view["comments"], json!([]));
    assert_eq!(
        view["ancestors"],
        json!([
            {"id": root_id, "parent_task_id": null, "title": "Cross-runtime task", "status": "todo"},
            {"id": child_id, "parent_task_id": root_id, "title": "child", "status": "todo"},
        ])
    );
    let root_view = b.get(&root_id);
    assert_eq!(root_view["ancestors"], json!([]));
    let bodies: Vec<&str> = root_view["comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["body"].as_str().unwrap())
        .collect();
    assert_eq!(bodies, ["first", "", "third"]);
    assert_eq!(root_view["comments"][0], c1);
    assert_eq!(
        root_view["task"]["updatedAt"], unblocked["updatedAt"],
        "comments do not bump updatedAt"
    );

    // link_task: the dependent waits for its dependency.
    let linked = b.ok(
        "link_task",
        json!({"taskId": child_id, "dependsOnTaskId": root_id}),
    );
    assert_eq!(
        linked.text(),
        format!("linked: {child_id} depends on {root_id}")
    );
    let ready = b.ids(json!({"teamId": "t1", "ready": true}));
    assert_eq!(ready, [root_id.as_str()], "the child waits on the root");
    assert_eq!(
        b.get(&child_id)["task"]["updatedAt"],
        after["updatedAt"],
        "links do not bump updatedAt"
    );
}

#[test]
fn every_edge_of_the_status_matrix_through_update_task_status() {
    let mut b = Board::new("tasks-matrix");
    for from in STATUSES {
        for to in STATUSES {
            let id = b.task(from);
            let reply = b
                .server
                .call("update_task_status", json!({"taskId": id, "status": to}));
            if legal(from, to) {
                assert!(!reply.is_error, "{from} -> {to}: {}", reply.text());
                let task = reply.json();
                assert_eq!(task["status"], to, "{from} -> {to}");
                let terminal = matches!(to, "done" | "cancelled");
                assert_eq!(
                    task["completedAt"].is_i64(),
                    terminal,
                    "{from} -> {to} stamps completedAt only on entering a terminal status"
                );
                assert!(task["updatedAt"].as_i64() >= task["createdAt"].as_i64());
            } else {
                assert!(reply.is_error, "{from} -> {to} was allowed");
                assert_eq!(
                    reply.text(),
                    illegal("status change", from, to, targets(from)),
                    "{from} -> {to}"
                );
                assert_eq!(reply.denied, None);
                assert_eq!(b.status_of(&id), from, "a refused move changes nothing");
            }
        }
    }
}

#[test]
fn block_unblock_claim_and_release_from_every_status() {
    let mut b = Board::new("tasks-edges");
    for from in STATUSES {
        let id = b.task(from);
        let reply = b.server.call("block_task", json!({"taskId": id}));
        if legal(from, "blocked") {
            assert!(!reply.is_error, "block from {from}: {}", reply.text());
            assert_eq!(reply.json()["status"], "blocked");
        } else {
            assert_eq!(
                reply.text(),
                illegal("block", from, "blocked", targets(from)),
                "from {from}"
            );
            assert_eq!(b.status_of(&id), from);
        }

        let id = b.task(from);
        let reply = b.server.call("unblock_task", json!({"taskId": id}));
        if legal(from, "todo") {
            assert!(!reply.is_error, "unblock from {from}: {}", reply.text());
            assert_eq!(reply.json()["status"], "todo");
        } else {
            assert_eq!(
                reply.text(),
                illegal("unblock", from, "todo", targets(from)),
                "from {from}"
            );
            assert_eq!(b.status_of(&id), from);
        }

        for tool in ["claim_task", "assign_task"] {
            let id = b.task(from);
            let reply = b
                .server
                .call(tool, json!({"taskId": id, "assigneeAgentId": "a1"}));
            if from == "todo" {
                assert!(!reply.is_error, "{tool} from todo: {}", reply.text());
                assert_eq!(reply.json()["status"], "in_progress");
            } else {
                assert_eq!(reply.text(), "claim failed: conflict", "{tool} from {from}");
                assert_eq!(b.status_of(&id), from);
            }
        }

        let id = b.task(from);
        let reply = b.server.call("release_task", json!({"taskId": id}));
        if from == "in_progress" {
            assert!(!reply.is_error, "{}", reply.text());
            assert_eq!(reply.text(), format!("released: {id}"));
            assert_eq!(b.status_of(&id), "todo");
        } else {
            // The reference answers success and does nothing; here the caller hears about it. Only
            // an in_progress task can be released, so from anywhere else nothing is allowed.
            assert!(reply.is_error, "release from {from} succeeded");
            assert_eq!(
                reply.text(),
                illegal("release", from, "todo", &[]),
                "from {from}"
            );
            assert_eq!(b.status_of(&id), from);
        }
    }
}

#[test]
fn status_side_effects_follow_the_spec() {
    let mut b = Board::with_env("tasks-effects", &[STEPPING_CLOCK]);
    // Blocked, in_review and done keep the assignee; todo clears it; blocked -> in_progress keeps
    // whatever assignee was there.
    let id = b.task("todo");
    b.json(
        "claim_task",
        json!({"taskId": id, "assigneeAgentId": "a1", "assigneeRuntime": "codex"}),
    );
    for to in ["blocked", "in_progress", "in_review", "in_progress"] {
        let task = b.json("update_task_status", json!({"taskId": id, "status": to}));
        assert_eq!(task["assigneeAgentId"], "a1", "-> {to}");
        assert_eq!(task["assigneeRuntime"], "codex", "-> {to}");
    }
    let task = b.json(
        "update_task_status",
        json!({"taskId": id, "status": "todo"}),
    );
    assert_eq!(task["assigneeAgentId"], Value::Null);
    assert_eq!(task["assigneeRuntime"], Value::Null);
    let task = b.json("claim_task", json!({"taskId": id, "assigneeAgentId": "a2"}));
    assert_eq!(
        task["assigneeAgentId"], "a2",
        "a released task can be claimed again"
    );

    // unblock acts as a release from in_progress.
    let task = b.json("unblock_task", json!({"taskId": id}));
    assert_eq!(task["status"], "todo");
    assert_eq!(task["assigneeAgentId"], Value::Null);

    // todo -> in_progress through update_task_status bypasses the claim, and a claim then
    // conflicts.
    let id = b.task("todo");
    let task = b.json(
        "update_task_status",
        json!({"taskId": id, "status": "in_progress"}),
    );
    assert_eq!(task["assigneeAgentId"], Value::Null);
    b.err_text(
        "claim_task",
        json!({"taskId": id, "assigneeAgentId": "a1"}),
        "claim failed: conflict",
    );

    // Same-status moves on terminal statuses succeed and re-stamp completedAt.
    let id = b.task("in_progress");
    let first = b.json(
        "update_task_status",
        json!({"taskId": id, "status": "done"}),
    );
    let again = b.json(
        "update_task_status",
        json!({"taskId": id, "status": "done"}),
    );
    assert!(again["completedAt"].as_i64() > first["completedAt"].as_i64());
    assert!(again["updatedAt"].as_i64() > first["updatedAt"].as_i64());

    // A claim erases a runtime set at creation when it names none; re-claiming is not idempotent;
    // an empty agent id is accepted and stored as such.
    let parent = b.task("todo");
    let id = id_of(&b.json(
        "create_task",
        json!({"title": "r", "parentTaskId": parent, "assigneeRuntime": "openclaw"}),
    ));
    let task = b.json("claim_task", json!({"taskId": id, "assigneeAgentId": "a1"}));
    assert_eq!(task["assigneeRuntime"], Value::Null);
    b.err_text(
        "claim_task",
        json!({"taskId": id, "assigneeAgentId": "a1"}),
        "claim failed: conflict",
    );
    let id = b.task("todo");
    let task = b.json("claim_task", json!({"taskId": id, "assigneeAgentId": ""}));
    assert_eq!(task["assigneeAgentId"], "");
    b.err_text(
        "assign_task",
        json!({"taskId": id, "assigneeAgentId": "a2"}),
        "claim failed: conflict",
    );
}

#[test]
fn readiness_waits_for_every_dependency_to_be_done() {
    let mut b = Board::new("tasks-ready");
    let team = json!({"teamId": "rt", "ready": true});
    let a = id_of(&b.root(json!({"title": "A", "teamId": "rt", "priority": 1})));
    let c = id_of(&b.root(json!({"title": "C", "teamId": "rt", "priority": 5})));
    let dependent = id_of(&b.root(json!({"title": "B", "teamId": "rt", "priority": 9})));
    b.root(json!({"title": "backlog", "teamId": "rt", "status": "backlog"}));
    b.ok(
        "link_task",
        json!({"taskId": dependent, "dependsOnTaskId": a}),
    );
    b.ok(
        "link_task",
        json!({"taskId": dependent, "dependsOnTaskId": c}),
    );
    b.ok(
        "link_task",
        json!({"taskId": dependent, "dependsOnTaskId": c}),
    );
    assert_eq!(
        b.ids(team.clone()),
        [c.clone(), a.clone()],
        "priority first"
    );
    assert_eq!(
        b.ids(json!({"teamId": "rt", "ready": true, "status": "backlog"})),
        [c.clone(), a.clone()],
        "ready mode ignores status"
    );

    // Readiness is advisory: the claim does not check it.
    let unready = b.task("todo");
    b.ok(
        "link_task",
        json!({"taskId": unready, "dependsOnTaskId": a}),
    );
    b.json(
        "claim_task",
        json!({"taskId": unready, "assigneeAgentId": "x"}),
    );

    for dep in [&a, &c] {
        b.json("claim_task", json!({"taskId": dep, "assigneeAgentId": "w"}));
        assert!(!b.ids(team.clone()).contains(&dependent));
        b.json(
            "update_task_status",
            json!({"taskId": dep, "status": "done"}),
        );
    }
    assert_eq!(
        b.ids(team.clone()),
        [dependent.as_str()],
        "both done: ready"
    );

    // A cancelled dependency leaves the dependent unready for good.
    let blocker = id_of(&b.root(json!({"title": "X", "teamId": "rc"})));
    let waiter = id_of(&b.root(json!({"title": "Y", "teamId": "rc"})));
    b.ok(
        "link_task",
        json!({"taskId": waiter, "dependsOnTaskId": blocker}),
    );
    b.json(
        "update_task_status",
        json!({"taskId": blocker, "status": "cancelled"}),
    );
    assert!(b.ids(json!({"teamId": "rc", "ready": true})).is_empty());
}

#[test]
fn link_refuses_self_links_and_direct_and_transitive_cycles() {
    let mut b = Board::new("tasks-cycles");
    let a = b.task("todo");
    let bb = b.task("todo");
    let c = b.task("todo");
    let cycle = |x: &str, y: &str| format!("linking {x} to {y} would create a dependency cycle");
    b.err_text(
        "link_task",
        json!({"taskId": a, "dependsOnTaskId": a}),
        &cycle(&a, &a),
    );
    b.ok("link_task", json!({"taskId": bb, "dependsOnTaskId": a}));
    b.err_text(
        "link_task",
        json!({"taskId": a, "dependsOnTaskId": bb}),
        &cycle(&a, &bb),
    );
    b.ok("link_task", json!({"taskId": c, "dependsOnTaskId": bb}));
    // The reference caught only direct cycles in its tests; the transitive one must be refused too.
    b.err_text(
        "link_task",
        json!({"taskId": a, "dependsOnTaskId": c}),
        &cycle(&a, &c),
    );
    let ready = b.ids(json!({"ready": true}));
    assert!(ready.contains(&a), "a refused link leaves readiness alone");
    assert!(!ready.contains(&bb) && !ready.contains(&c));
    let deps: i64 = sql(&b.db())
        .query_row("SELECT count(*) FROM task_deps", [], |r| r.get(0))
        .unwrap();
    assert_eq!(deps, 2, "refused links wrote nothing");
}

#[test]
fn unknown_ids_are_tool_errors_with_the_exact_texts() {
    let mut b = Board::new("tasks-unknown");
    let real = b.task("todo");
    let nope = "00000000-0000-4000-8000-000000000000";
    let cases: [(&str, Value, String); 9] = [
        (
            "get_task",
            json!({"taskId": nope}),
            format!("not found: {nope}"),
        ),
        (
            "claim_task",
            json!({"taskId": nope, "assigneeAgentId": "a"}),
            "claim failed: not_found".into(),
        ),
        (
            "assign_task",
            json!({"taskId": nope, "assigneeAgentId": "a"}),
            "claim failed: not_found".into(),
        ),
        (
            "release_task",
            json!({"taskId": nope}),
            "release failed: not_found".into(),
        ),
        (
            "update_task_status",
            json!({"taskId": nope, "status": "todo"}),
            "status change failed: not_found".into(),
        ),
        (
            "block_task",
            json!({"taskId": nope}),
            "block failed: not_found".into(),
        ),
        (
            "unblock_task",
            json!({"taskId": nope}),
            "unblock failed: not_found".into(),
        ),
        // The reference let a foreign-key failure escape as JSON-RPC -32603 for these two.
        (
            "add_comment",
            json!({"taskId": nope, "body": "hi"}),
            format!("not found: {nope}"),
        ),
        (
            "link_task",
            json!({"taskId": nope, "dependsOnTaskId": real}),
            format!("not found: {nope}"),
        ),
    ];
    for (tool, args, text) in cases {
        b.err_text(tool, args, &text);
    }
    b.err_text(
        "link_task",
        json!({"taskId": real, "dependsOnTaskId": "missing"}),
        "not found: missing",
    );
    b.err_text(
        "link_task",
        json!({"taskId": "ghost", "dependsOnTaskId": "ghost"}),
        "linking ghost to ghost would create a dependency cycle",
    );
    for tool in ["create_task", "create_subtask"] {
        let reply = b.err(tool, json!({"title": "orphan", "parentTaskId": "nope"}));
        assert_eq!(reply.text(), "parent not found: nope", "{tool}");
        assert_eq!(reply.denied.as_deref(), Some("parent_not_found"), "{tool}");
    }
    let conn = sql(&b.db());
    let counts: (i64, i64, i64) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM task_comments),
                    (SELECT count(*) FROM task_deps)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(counts, (2, 0, 0), "nothing was written by a refused call");
}

#[test]
fn the_create_caps_refuse_with_exact_texts_and_a_denied_reason() {
    let mut b = Board::new("tasks-caps");
    let root = id_of(&b.root(json!({"title": "root", "teamId": "t"})));

    // Child cap: 24 children, then the 25th is refused by either tool.
    let mut children = Vec::new();
    for i in 0..24 {
        let tool = if i % 2 == 0 {
            "create_subtask"
        } else {
            "create_task"
        };
        children.push(id_of(&b.json(
            tool,
            json!({"parentTaskId": root, "title": format!("child {i}")}),
        )));
    }
    let child_cap = format!(
        "subtask rejected: parent {root} already has 24 children (max 24); drop one or attach the new task elsewhere"
    );
    for tool in ["create_subtask", "create_task"] {
        let reply = b.err(tool, json!({"parentTaskId": root, "title": "one too many"}));
        assert_eq!(reply.text(), child_cap, "{tool}");
        assert_eq!(reply.denied.as_deref(), Some("child_cap"), "{tool}");
    }
    // Finished children still count.
    b.json(
        "claim_task",
        json!({"taskId": children[0], "assigneeAgentId": "a"}),
    );
    b.json(
        "update_task_status",
        json!({"taskId": children[0], "status": "done"}),
    );
    b.err(
        "create_subtask",
        json!({"parentTaskId": root, "title": "still too many"}),
    );
    assert_eq!(b.ids(json!({})).len(), 25);

    // Depth cap: root (0) -> child (1) -> grandchild (2); a child of depth 2 is refused.
    let grand = id_of(&b.json(
        "create_subtask",
        json!({"parentTaskId": children[1], "title": "grand"}),
    ));
    let depth_cap = format!(
        "subtask rejected: parent {grand} is at the maximum nesting depth (2); attach the new task higher in the tree"
    );
    for tool in ["create_subtask", "create_task"] {
        let reply = b.err(tool, json!({"parentTaskId": grand, "title": "too deep"}));
        assert_eq!(reply.text(), depth_cap, "{tool}");
        assert_eq!(reply.denied.as_deref(), Some("depth_cap"), "{tool}");
    }

    // Root rate: 30 roots in five minutes board-wide (any status), then refused.
    for i in 1..30 {
        let status = STATUSES[i % STATUSES.len()];
        b.root(json!({"title": format!("root {i}"), "status": status, "teamId": format!("t{i}")}));
    }
    let root_cap = "task rejected: 30 root tasks already created in the last 5 min (max 30); attach this work to an existing task with parentTaskId instead of opening another";
    let reply = b.err(
        "create_task",
        json!({"title": "root 31", "teamId": "fresh"}),
    );
    assert_eq!(reply.text(), root_cap);
    assert_eq!(reply.denied.as_deref(), Some("root_rate_cap"));
    assert_eq!(
        b.ids(json!({})).len(),
        26 + 29,
        "refused creates wrote nothing"
    );
    // A subtask is not charged against the root rate.
    b.json(
        "create_subtask",
        json!({"parentTaskId": children[2], "title": "fine"}),
    );
    assert_eq!(b.ids(json!({})).len(), 56);
}

#[test]
fn bad_arguments_of_each_kind_are_tool_errors_naming_the_field() {
    let mut b = Board::new("tasks-args");
    let id = b.task("todo");
    let cases: Vec<(&str, Value, &str)> = vec![
        // A missing required field, for every tool that has one.
        ("get_task", json!({}), "taskId"),
        ("create_task", json!({"description": "no title"}), "title"),
        ("create_subtask", json!({"title": "t"}), "parentTaskId"),
        ("create_subtask", json!({"parentTaskId": id}), "title"),
        ("claim_task", json!({"taskId": id}), "assigneeAgentId"),
        ("assign_task", json!({"assigneeAgentId": "a"}), "taskId"),
        ("release_task", json!({}), "taskId"),
        ("update_task_status", json!({"taskId": id}), "status"),
        ("block_task", json!({"taskid": id}), "taskId"),
        ("unblock_task", json!({}), "taskId"),
        ("add_comment", json!({"taskId": id}), "body"),
        ("link_task", json!({"taskId": id}), "dependsOnTaskId"),
        // A wrong type.
        ("get_task", json!({"taskId": 42}), "taskId"),
        ("list_tasks", json!({"ready": "yes"}), "ready"),
        ("list_tasks", json!({"teamId": ["t"]}), "teamId"),
        (
            "create_task",
            json!({"title": "t", "priority": "high"}),
            "priority",
        ),
        (
            "create_task",
            json!({"title": "t", "priority": 1.5}),
            "priority",
        ),
        ("create_task", json!({"title": true}), "title"),
        (
            "create_task",
            json!({"title": "t", "description": {}}),
            "description",
        ),
        (
            "claim_task",
            json!({"taskId": id, "assigneeAgentId": 7}),
            "assigneeAgentId",
        ),
        ("add_comment", json!({"taskId": id, "body": ["x"]}), "body"),
        (
            "link_task",
            json!({"taskId": id, "dependsOnTaskId": null}),
            "dependsOnTaskId",
        ),
        // A value outside an enum.
        ("list_tasks", json!({"status": "doing"}), "status"),
        (
            "create_task",
            json!({"title": "t", "status": "Todo"}),
            "status",
        ),
        (
            "update_task_status",
            json!({"taskId": id, "status": "archived"}),
            "status",
        ),
        (
            "add_comment",
            json!({"taskId": id, "body": "b", "authorType": "robot"}),
            "authorType",
        ),
        // An empty string where the schema wants at least one character.
        (
            "create_subtask",
            json!({"parentTaskId": "", "title": "t"}),
            "parentTaskId",
        ),
        (
            "create_task",
            json!({"title": "t", "parentTaskId": ""}),
            "parentTaskId",
        ),
    ];
    for (tool, args, field) in cases {
        let reply = b.err(tool, args.clone());
        assert!(
            reply.text().starts_with(&format!("invalid args: {field}")),
            "{tool} {args}: {}",
            reply.text()
        );
        assert_eq!(reply.denied, None);
    }
    assert_eq!(
        b.status_of(&id),
        "todo",
        "no refused call reached the board"
    );
    assert_eq!(b.ids(json!({})).len(), 2);
    // Unknown extra keys are ignored, and null means absent for an optional field.
    let task = b.json(
        "create_task",
        json!({"title": "extra", "bogus": 1, "priority": null, "parentTaskId": b.parents[0].0}),
    );
    assert_eq!(task["priority"], 0);
    let task = b.json(
        "create_task",
        json!({"title": "whole", "priority": 2.0, "parentTaskId": b.parents[0].0}),
    );
    assert_eq!(task["priority"], 2, "a whole-number float is an integer");
}

#[test]
fn an_unknown_tool_is_a_tool_error_naming_it() {
    let mut b = Board::new("tasks-unknown-tool");
    b.err_text(
        "delete_task",
        json!({"taskId": "x"}),
        "unknown tool: delete_task",
    );
    b.err_text("", json!({}), "unknown tool: ");
    b.json("list_tasks", json!({}));
}

#[test]
fn protocol_errors_get_json_rpc_errors_and_the_server_keeps_serving() {
    let mut b = Board::new("tasks-protocol");
    for line in [
        "{not json",
        "",
        "\u{7f}garbage",
        "{\"jsonrpc\":\"2.0\",\"id\":",
    ] {
        b.server.send_line(line);
        if line.is_empty() {
            continue;
        }
        let reply = b.server.read_message();
        assert_eq!(reply["error"]["code"], -32700, "{line:?}: {reply}");
        assert_eq!(reply["id"], Value::Null, "{reply}");
        b.root(json!({"title": format!("after {line:?}")}));
    }
    let unknown = b.server.request("tasks/frobnicate", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let not_an_object = b.server.request(
        "tools/call",
        json!({"name": "list_tasks", "arguments": "str"}),
    );
    assert_eq!(not_an_object["error"]["code"], -32602, "{not_an_object}");
    let nameless = b.server.request("tools/call", json!({"arguments": {}}));
    assert_eq!(nameless["error"]["code"], -32602, "{nameless}");
    b.server
        .send_line(r#"{"jsonrpc":"2.0","id":"text-id","method":"tools/list"}"#);
    let listed = b.server.read_message();
    assert_eq!(listed["id"], "text-id");
    assert_eq!(listed["result"]["tools"].as_array().map(Vec::len), Some(13));
    assert_eq!(b.ids(json!({})).len(), 3);
}

#[test]
fn the_verification_gate_guards_done_and_release_clears_the_verdict() {
    let mut b = Board::new("tasks-verdict");
    let conn = sql(&b.db());
    let set = |id: &str, verdict: Option<&str>| {
        conn.execute(
            "UPDATE tasks SET verification = ?1 WHERE id = ?2",
            rusqlite::params![verdict, id],
        )
        .unwrap();
    };
    let fail = r#"{"status":"fail","attempts":[{"deterministic":{"passed":false}}],"debtNotes":[],"updatedAt":1}"#;
    let debt_green = r#"{"status":"completed_with_debt","attempts":[{"deterministic":{"passed":false}},{"deterministic":{"passed":true}}],"debtNotes":["x"],"updatedAt":1}"#;
    let debt_red = r#"{"status":"completed_with_debt","attempts":[{"deterministic":{"passed":true}},{"deterministic":{"passed":false}}],"debtNotes":["x"],"updatedAt":1}"#;
    let pass = r#"{"status":"pass","attempts":[{"deterministic":{"passed":true}}],"debtNotes":[],"updatedAt":1}"#;
    for (verdict, allowed) in [
        (None, true),
        (Some(""), true),
        (Some("not json"), true),
        (Some(pass), true),
        (Some(debt_green), true),
        (Some(fail), false),
        (Some(debt_red), false),
    ] {
        let id = b.task("in_review");
        set(&id, verdict);
        let reply = b.server.call(
            "update_task_status",
            json!({"taskId": id, "status": "done"}),
        );
        if allowed {
            assert!(!reply.is_error, "{verdict:?}: {}", reply.text());
            assert_eq!(reply.json()["status"], "done");
        } else {
            assert_eq!(reply.text(), "status change failed: verification_required");
            assert_eq!(b.status_of(&id), "in_review");
        }
    }

    // release_task and any move to todo clear the verdict.
    let id = b.task("todo");
    b.json("claim_task", json!({"taskId": id, "assigneeAgentId": "a"}));
    set(&id, Some(fail));
    assert_eq!(
        b.get(&id)["task"]["verification"],
        fail,
        "the raw JSON string"
    );
    b.ok("release_task", json!({"taskId": id}));
    assert_eq!(b.get(&id)["task"]["verification"], Value::Null);
    b.json("claim_task", json!({"taskId": id, "assigneeAgentId": "b"}));
    b.json(
        "update_task_status",
        json!({"taskId": id, "status": "done"}),
    );

    let id = b.task("blocked");
    set(&id, Some(fail));
    b.json("unblock_task", json!({"taskId": id}));
    assert_eq!(b.get(&id)["task"]["verification"], Value::Null);
}

#[test]
fn a_team_bound_session_sees_and_touches_only_its_team() {
    let dir = TempDir::new("tasks-bound");
    let db = dir.db_path();
    let mut open = Server::spawn(BIN, &db, &[]);
    let mut make = |args: Value| {
        let reply = open.call("create_task", args);
        assert!(!reply.is_error, "{}", reply.text());
        id_of(&reply.json())
    };
    let mine = make(json!({"title": "mine", "teamId": "A"}));
    let theirs = make(json!({"title": "theirs", "teamId": "B"}));
    let teamless = make(json!({"title": "nobody's"}));

    let mut b = Board {
        server: Server::spawn_raw(BIN, &db, &[("CLAWBOO_SCOPE_TEAM_ID", " A ")]),
        dir,
        parents: Vec::new(),
    };
    b.server.initialize();
    let tools = b.server.list_tools();
    assert_eq!(
        tools[0]["description"],
        format!("List your team's board tasks. {LIST_TASKS_REST}")
    );
    assert_eq!(b.ids(json!({})), [mine.as_str()]);
    assert_eq!(b.ids(json!({"teamId": "B"})), [mine.as_str()]);
    assert_eq!(b.ids(json!({"ready": true})), [mine.as_str()]);

    for hidden in [&theirs, &teamless] {
        let nf = format!("not found: {hidden}");
        for (tool, args) in [
            ("get_task", json!({"taskId": hidden})),
            (
                "claim_task",
                json!({"taskId": hidden, "assigneeAgentId": "a"}),
            ),
            (
                "assign_task",
                json!({"taskId": hidden, "assigneeAgentId": "a"}),
            ),
            ("release_task", json!({"taskId": hidden})),
            (
                "update_task_status",
                json!({"taskId": hidden, "status": "in_progress"}),
            ),
            ("block_task", json!({"taskId": hidden})),
            ("unblock_task", json!({"taskId": hidden})),
            ("add_comment", json!({"taskId": hidden, "body": "hi"})),
            (
                "link_task",
                json!({"taskId": mine, "dependsOnTaskId": hidden}),
            ),
            (
                "link_task",
                json!({"taskId": hidden, "dependsOnTaskId": mine}),
            ),
            (
                "create_task",
                json!({"title": "sneaky", "parentTaskId": hidden}),
            ),
            // The reference applied no guard here, so the child landed in the other team.
            (
                "create_subtask",
                json!({"title": "sneaky", "parentTaskId": hidden}),
            ),
        ] {
            b.err_text(tool, args, &nf);
        }
    }
    // A missing parent is indistinguishable from a hidden one.
    b.err_text(
        "create_subtask",
        json!({"title": "x", "parentTaskId": "ghost"}),
        "not found: ghost",
    );
    let after = open.call("get_task", json!({"taskId": theirs})).json();
    assert_eq!(after["task"]["status"], "todo");
    assert_eq!(after["comments"], json!([]));
    let children: i64 = sql(&b.db())
        .query_row(
            "SELECT count(*) FROM tasks WHERE parent_task_id IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(children, 0, "no subtask landed under a hidden parent");

    // Creates land in the bound team whatever the arguments say.
    let sneaky = b.root(json!({"title": "sneaky", "teamId": "B"}));
    assert_eq!(sneaky["teamId"], "A");
    let team: String = sql(&b.db())
        .query_row(
            "SELECT team_id FROM tasks WHERE id = ?1",
            [id_of(&sneaky)],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(team, "A");
    let child = b.json(
        "create_subtask",
        json!({"title": "c", "parentTaskId": mine}),
    );
    assert_eq!(child["teamId"], "A");

    // The own team's tasks work as usual.
    let blocked = b.json("block_task", json!({"taskId": mine}));
    assert_eq!(blocked["status"], "blocked");
    b.json("add_comment", json!({"taskId": mine, "body": "ok"}));
    b.ok(
        "link_task",
        json!({"taskId": id_of(&child), "dependsOnTaskId": mine}),
    );
    // And an unbound session can still block another team's task.
    let reply = open.call("block_task", json!({"taskId": theirs}));
    assert_eq!(reply.json()["status"], "blocked");
}

/// Rows the reference implementation wrote into its own tables
/// ([`clawboo_tests::reference::DDL`]), with no schema-version table: a file it wrote must be
/// served as it is.
const REFERENCE_ROWS: &str = "
INSERT INTO tasks (id, title, status, priority, team_id, created_at, updated_at, cost_usd)
VALUES ('5f0c6a7e-1d2b-4c3d-8e4f-a1b2c3d4e5f6', 'from the reference', 'todo', 2, 'ref', 1700000000000, 1700000000000, 0.25),
       ('6a1d7b8f-2e3c-4d4e-9f5a-b2c3d4e5f6a7', 'its blocker', 'in_progress', 0, 'ref', 1700000000001, 1700000000001, 0);
INSERT INTO task_deps (task_id, depends_on_task_id) VALUES
    ('5f0c6a7e-1d2b-4c3d-8e4f-a1b2c3d4e5f6', '6a1d7b8f-2e3c-4d4e-9f5a-b2c3d4e5f6a7');
INSERT INTO task_comments (id, task_id, author_agent_id, author_type, body, created_at)
VALUES ('7b2e8c9a-3f4d-4e5f-8a6b-c3d4e5f6a7b8', '5f0c6a7e-1d2b-4c3d-8e4f-a1b2c3d4e5f6', NULL, 'user', 'hello', 1700000000002);
";

#[test]
fn a_file_written_by_the_reference_schema_is_served_and_stays_readable_by_it() {
    let dir = TempDir::new("tasks-interop");
    let db = dir.db_path();
    let reference = sql(&db);
    reference
        .execute_batch(clawboo_tests::reference::DDL)
        .unwrap();
    reference.execute_batch(REFERENCE_ROWS).unwrap();
    drop(reference);
    let reference_task = "5f0c6a7e-1d2b-4c3d-8e4f-a1b2c3d4e5f6";
    let blocker = "6a1d7b8f-2e3c-4d4e-9f5a-b2c3d4e5f6a7";

    let mut server = Server::spawn(BIN, &db, &[]);
    let view = server
        .call("get_task", json!({"taskId": reference_task}))
        .json();
    assert_eq!(view["task"]["title"], "from the reference");
    assert_eq!(view["task"]["costUsd"], 0.25);
    assert_eq!(view["task"]["createdAt"], 1_700_000_000_000_i64);
    assert_eq!(view["comments"][0]["body"], "hello");
    let ready = server.call("list_tasks", json!({"ready": true})).json();
    assert_eq!(
        ready,
        json!([]),
        "the reference's dependency row is honoured"
    );
    let done = server.call(
        "update_task_status",
        json!({"taskId": blocker, "status": "done"}),
    );
    assert!(!done.is_error, "{}", done.text());
    let ready = server.call("list_tasks", json!({"ready": true})).json();
    assert_eq!(ready[0]["id"], reference_task);
    let created = server
        .call("create_task", json!({"title": "ours", "teamId": "ref"}))
        .json();
    assert_eq!(server.close().code(), Some(0));

    // What we wrote reads back with the reference's column names and units.
    let (title, status, created_at): (String, String, i64) = sql(&db)
        .query_row(
            "SELECT title, status, created_at FROM tasks WHERE id = ?1",
            [id_of(&created)],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!((title.as_str(), status.as_str()), ("ours", "todo"));
    assert_eq!(Some(created_at), created["createdAt"].as_i64());
    assert_eq!(clawboo_tests::integrity_check(&db), "ok");
}

#[test]
fn a_debug_bin_stamps_rows_from_the_test_clock_it_is_given_and_a_release_bin_ignores_it() {
    let mut b = Board::with_env("tasks-test-clock", &[STEPPING_CLOCK]);
    let start: i64 = STEPPING_CLOCK.1.parse().unwrap();
    let id = b.task("todo");
    let created = b.get(&id)["task"].clone();
    let created_at = created["createdAt"].as_i64().unwrap();
    assert_eq!(created["updatedAt"].as_i64(), Some(created_at));
    assert_eq!(
        (start..start + 100).contains(&created_at),
        bins_honour_the_test_clock(),
        "a debug bin's clock starts at {start}, a release bin's is the system's: {created}"
    );
    let claimed = b.json("claim_task", json!({"taskId": id, "assigneeAgentId": "a"}));
    assert!(claimed["updatedAt"].as_i64().unwrap() > created_at);
}

#[test]
fn plain_lists_are_most_recently_updated_first_and_ready_false_is_a_plain_list() {
    let mut b = Board::with_env("tasks-order", &[STEPPING_CLOCK]);
    let first = b.task("todo");
    let second = b.task("todo");
    let third = b.task("backlog");
    let pool = b.parents[0].0.clone();
    b.json(
        "claim_task",
        json!({"taskId": first, "assigneeAgentId": "a"}),
    );
    assert_eq!(
        b.ids(json!({})),
        [
            first.as_str(),
            third.as_str(),
            second.as_str(),
            pool.as_str()
        ]
    );
    b.json("block_task", json!({"taskId": second}));
    assert_eq!(b.ids(json!({"ready": false}))[0], second);
    assert_eq!(
        b.ids(json!({"ready": false, "status": "backlog"})),
        [third.as_str()]
    );
    assert_eq!(b.ids(json!({"ready": true})), [pool.as_str()]);
}

#[test]
fn a_blank_scope_variable_leaves_the_session_unbound() {
    let dir = TempDir::new("tasks-blank-scope");
    let db = dir.db_path();
    let mut bound = Server::spawn(BIN, &db, &[("CLAWBOO_SCOPE_TEAM_ID", "A")]);
    let reply = bound.call("create_task", json!({"title": "a"}));
    assert_eq!(reply.json()["teamId"], "A");
    let mut open = Server::spawn(BIN, &db, &[("CLAWBOO_SCOPE_TEAM_ID", "  ")]);
    let reply = open.call("create_task", json!({"title": "b", "teamId": "B"}));
    assert_eq!(reply.json()["teamId"], "B");
    let listed = open.call("list_tasks", json!({})).json();
    assert_eq!(listed.as_array().map(Vec::len), Some(2));
    assert_eq!(
        open.list_tools()[0]["description"],
        format!("List board tasks. {LIST_TASKS_REST}")
    );
}

#[test]
fn a_soft_deleted_task_is_hidden_from_lists_but_still_readable_and_writable() {
    let mut b = Board::new("tasks-dropped");
    let id = b.task("todo");
    let kept = b.task("todo");
    sql(&b.db())
        .execute("UPDATE tasks SET dropped = 1 WHERE id = ?1", [&id])
        .unwrap();
    assert!(!b.ids(json!({})).contains(&id));
    assert!(!b.ids(json!({"ready": true})).contains(&id));
    assert!(b.ids(json!({})).contains(&kept));
    assert_eq!(b.get(&id)["task"]["dropped"], 1);
    b.err_text(
        "claim_task",
        json!({"taskId": id, "assigneeAgentId": "a"}),
        "claim failed: conflict",
    );
    b.json("add_comment", json!({"taskId": id, "body": "still here"}));
    let moved = b.json(
        "update_task_status",
        json!({"taskId": id, "status": "blocked"}),
    );
    assert_eq!(moved["status"], "blocked");
    assert_eq!(moved["dropped"], 1);
}
