//! ClawBrain over stdio: `clawboo-mcp-memory clawbrain` driven as a client would drive it. Every
//! tool's happy path and error texts (spec §8), the scenarios of spec §9 that need no fixed clock,
//! the closed credit loop (`memory_feedback`, the `clawbrain feedback` / `decay` commands),
//! interop of the on-disk layout, hostile names, and eight processes on one vault.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Barrier};
use std::thread;

use clawboo_tests::{Server, TempDir, bin_path, clawbrain_score, clawbrain_tools, integrity_check};
use rusqlite::Connection;
use serde_json::{Value, json};

const BIN: &str = "clawboo-mcp-memory";

struct Vault {
    dir: TempDir,
}

impl Vault {
    fn new() -> Self {
        let dir = TempDir::new("clawbrain-stdio");
        std::fs::create_dir_all(dir.path().join("memory")).unwrap();
        Self { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("memory")
    }

    fn spawn(&self) -> Server {
        self.spawn_session("stdio-session")
    }

    fn spawn_session(&self, session: &str) -> Server {
        spawn_on(&self.root(), &self.dir.db_path(), session)
    }

    fn db(&self) -> Connection {
        Connection::open(self.root().join("engine.db")).unwrap()
    }

    fn score(&self, id: &str) -> f64 {
        clawbrain_score(&self.root(), id)
    }

    fn file(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root().join(rel)).unwrap()
    }

    /// Runs `clawboo-mcp-memory clawbrain <args>` on this vault; returns its stdout as JSON.
    fn command(&self, args: &[&str], session: &str) -> Value {
        let out = Command::new(bin_path(BIN))
            .arg("clawbrain")
            .args(args)
            .env("MEMORY_DIR", self.root())
            .env("SESSION_ID", session)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

fn spawn_on(root: &Path, db: &Path, session: &str) -> Server {
    let root = root.display().to_string();
    let mut server = Server::spawn_program(
        bin_path(BIN),
        &["clawbrain"],
        db,
        &[("MEMORY_DIR", root.as_str()), ("SESSION_ID", session)],
    );
    server.initialize();
    server
}

fn ok(server: &mut Server, tool: &str, args: Value) -> Value {
    let reply = server.call(tool, args);
    assert!(!reply.is_error, "{tool}: {}", reply.text());
    reply.json()
}

fn err(server: &mut Server, tool: &str, args: Value) -> String {
    let reply = server.call(tool, args);
    assert!(reply.is_error, "{tool} should fail: {}", reply.text());
    reply.text().to_owned()
}

fn entity(server: &mut Server, category: &str, name: &str, content: &str, tags: &[&str]) -> Value {
    ok(
        server,
        "memory_store",
        json!({"type": "entity", "category": category, "name": name, "content": content, "tags": tags}),
    )
}

#[test]
fn clawbrain_mode_is_named_clawbrain_and_lists_its_registered_tools() {
    let v = Vault::new();
    let root = v.root().display().to_string();
    let mut server = Server::spawn_program(
        bin_path(BIN),
        &["clawbrain"],
        &v.dir.db_path(),
        &[("MEMORY_DIR", root.as_str())],
    );
    let info = server.initialize();
    assert_eq!(
        info["serverInfo"],
        json!({"name": "clawbrain", "version": "0.1.0"})
    );
    let tools = server.list_tools();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, clawbrain_tools());
    let store = tools.iter().find(|t| t["name"] == "memory_store").unwrap();
    assert_eq!(
        store["description"],
        "Store a memory entry as entity or episode."
    );
    assert_eq!(
        store["inputSchema"]["required"],
        json!(["type", "name", "content"])
    );
    assert_eq!(
        store["inputSchema"]["properties"]["type"]["enum"],
        json!(["entity", "episode"])
    );
    let feedback = tools
        .iter()
        .find(|t| t["name"] == "memory_feedback")
        .unwrap();
    assert_eq!(
        feedback["inputSchema"]["properties"]["signal"]["enum"],
        json!([
            "task_completed",
            "positive_feedback",
            "tool_success",
            "user_correction",
            "session_abandoned"
        ])
    );
    assert!(
        !v.dir.db_path().exists(),
        "the clawbrain mode never opens the shared database"
    );
}

#[test]
fn s1_to_s4_store_writes_the_reference_file_and_refuses_duplicates() {
    let v = Vault::new();
    let mut s = v.spawn();
    let stored = entity(
        &mut s,
        "people",
        "alice-chen",
        "# Alice Chen\n\n- ML engineer",
        &["ml-team"],
    );
    assert_eq!(
        stored,
        json!({"id": "entity-people-alice-chen", "path": "entities/people/alice-chen.md", "created": true})
    );
    let text = v.file("entities/people/alice-chen.md");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[..4],
        [
            "---",
            "id: entity-people-alice-chen",
            "type: entity",
            "category: people"
        ]
    );
    assert_eq!(lines[4], "tags: [\"ml-team\"]");
    assert!(lines[5].starts_with("created: ") && lines[5].ends_with('Z') && lines[5].len() == 33);
    assert_eq!(
        lines[5][9..],
        lines[6][9..],
        "created == updated on creation"
    );
    assert_eq!(
        lines[7..],
        [
            "pinned: false",
            "---",
            "",
            "# Alice Chen",
            "",
            "- ML engineer"
        ]
    );
    assert_eq!(v.score("entity-people-alice-chen"), 0.5);
    let got = ok(
        &mut s,
        "memory_retrieve",
        json!({"id": "entity-people-alice-chen"}),
    );
    assert_eq!(got["type"], "entity");
    assert_eq!(got["category"], "people");
    assert_eq!(got["tags"], json!(["ml-team"]));
    assert!(got["content"].as_str().unwrap().contains("ML engineer"));
    let keys: Vec<&String> = got.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "id",
            "type",
            "category",
            "name",
            "path",
            "content",
            "tags",
            "credit_score",
            "access_count",
            "created_at",
            "last_accessed",
            "created",
            "updated",
            "pinned"
        ]
    );
    assert_eq!(
        err(
            &mut s,
            "memory_store",
            json!({"type": "entity", "category": "people", "name": "alice-chen", "content": "again"})
        ),
        "Memory already exists at entities/people/alice-chen.md. Use update instead."
    );
    assert_eq!(
        err(
            &mut s,
            "memory_store",
            json!({"type": "entity", "name": "x", "content": "y"})
        ),
        "category is required when type is entity"
    );
    assert_eq!(
        err(
            &mut s,
            "memory_store",
            json!({"type": "entity", "category": "", "name": "x", "content": "y"})
        ),
        "category is required when type is entity"
    );
    assert!(
        err(
            &mut s,
            "memory_store",
            json!({"type": "fact", "name": "x", "content": "y"})
        )
        .starts_with("invalid args: type")
    );
    let ep = ok(
        &mut s,
        "memory_store",
        json!({"type": "episode", "category": "whatever", "name": "test-ep", "content": "- hi"}),
    );
    let month = &lines[5][9..16];
    assert_eq!(ep["id"], format!("episode-{month}-test-ep"));
    assert_eq!(ep["path"], format!("episodes/{month}/test-ep.md"));
    assert_eq!(
        err(
            &mut s,
            "memory_store",
            json!({"type": "episode", "name": "test-ep", "content": "- again"})
        ),
        format!("Memory already exists at episodes/{month}/test-ep.md. Use update instead.")
    );
}

#[test]
fn s6_s16_s17_unknown_ids_archive_and_pinned() {
    let v = Vault::new();
    let mut s = v.spawn();
    for tool in ["memory_retrieve", "memory_delete"] {
        assert_eq!(
            err(&mut s, tool, json!({"id": "entity-people-nobody"})),
            "Memory not found: entity-people-nobody"
        );
    }
    assert_eq!(
        err(
            &mut s,
            "memory_update",
            json!({"id": "entity-people-nobody", "content": "x"})
        ),
        "Memory not found: entity-people-nobody"
    );
    entity(&mut s, "projects", "cleanup-target", "legacy", &[]);
    let archived = ok(
        &mut s,
        "memory_delete",
        json!({"id": "entity-projects-cleanup-target"}),
    );
    assert_eq!(
        archived,
        json!({"id": "entity-projects-cleanup-target", "archived": true, "archive_path": "archive/entities/projects/cleanup-target.md"})
    );
    assert!(
        v.file("archive/entities/projects/cleanup-target.md")
            .contains("legacy")
    );
    assert_eq!(
        err(
            &mut s,
            "memory_retrieve",
            json!({"id": "entity-projects-cleanup-target"})
        ),
        "Memory not found: entity-projects-cleanup-target"
    );
    assert_eq!(
        v.score("entity-projects-cleanup-target"),
        0.5,
        "the credit row is kept for audit"
    );
    assert_eq!(ok(&mut s, "credit_report", json!({}))["total_memories"], 0);
    ok(
        &mut s,
        "memory_store",
        json!({"type": "entity", "category": "projects", "name": "pinned-one", "content": "keep", "pinned": true}),
    );
    assert_eq!(
        err(
            &mut s,
            "memory_delete",
            json!({"id": "entity-projects-pinned-one"})
        ),
        "Cannot archive pinned memory: entity-projects-pinned-one"
    );
    assert!(v.root().join("entities/projects/pinned-one.md").is_file());
}

#[test]
fn s7_to_s11_search_relevance_filters_and_edges() {
    let v = Vault::new();
    let mut s = v.spawn();
    entity(
        &mut s,
        "preferences",
        "typescript-style",
        "Use strict mode",
        &["typescript"],
    );
    entity(
        &mut s,
        "projects",
        "nanobrain",
        "Model agnostic assistant",
        &["assistant"],
    );
    let found = ok(&mut s, "memory_search", json!({"query": "typescript"}));
    assert_eq!(
        found["results"][0]["id"],
        "entity-preferences-typescript-style"
    );
    assert_eq!(found["results"][0]["relevance_score"], 1.0);
    let found = ok(&mut s, "memory_search", json!({"query": "agnostic"}));
    assert_eq!(
        found["results"][0],
        json!({"id": "entity-projects-nanobrain", "name": "nanobrain", "type": "entity", "snippet": "Model agnostic assistant", "credit_score": 0.5, "relevance_score": 0.5, "combined_score": 0.5})
    );
    entity(
        &mut s,
        "projects",
        "apple-entity-one",
        "- entity entry",
        &[],
    );
    entity(
        &mut s,
        "projects",
        "apple-entity-two",
        "- entity entry",
        &[],
    );
    ok(
        &mut s,
        "memory_store",
        json!({"type": "episode", "name": "notes-session", "content": "- discussed apple rollout timeline"}),
    );
    let found = ok(
        &mut s,
        "memory_search",
        json!({"query": "apple", "type": "episode", "limit": 1}),
    );
    assert_eq!(found["total_matches"], 1);
    assert_eq!(found["results"][0]["type"], "episode");
    assert_eq!(found["results"][0]["combined_score"], 0.5);
    let all = ok(
        &mut s,
        "memory_search",
        json!({"query": "apple", "type": null, "limit": 1}),
    );
    assert_eq!(
        (
            all["total_matches"].as_u64(),
            all["results"].as_array().unwrap().len()
        ),
        (Some(3), 1)
    );
    assert_eq!(
        ok(&mut s, "memory_search", json!({"query": "   "})),
        json!({"results": [], "total_matches": 0})
    );
    assert_eq!(
        ok(&mut s, "memory_search", json!({"query": "e", "limit": 0}))["results"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    for i in 0..22 {
        entity(&mut s, "projects", &format!("bulk-{i}"), "bulk entry", &[]);
    }
    let many = ok(
        &mut s,
        "memory_search",
        json!({"query": "bulk", "limit": 50}),
    );
    assert_eq!(many["results"].as_array().unwrap().len(), 20);
    assert_eq!(many["total_matches"], 22, "the true count, not the page");
    assert!(
        err(
            &mut s,
            "memory_search",
            json!({"query": "x", "type": "fact"})
        )
        .starts_with("invalid args: type")
    );
    assert!(err(&mut s, "memory_search", json!({})).starts_with("invalid args: query"));
}

#[test]
fn s10_credit_weighting_orders_equal_credit_by_relevance() {
    let v = Vault::new();
    let mut s = v.spawn();
    entity(
        &mut s,
        "projects",
        "nanobrain-search",
        "search strategy details",
        &["search"],
    );
    entity(
        &mut s,
        "projects",
        "nanobrain-ranking",
        "ranking strategy details",
        &["search"],
    );
    let found = ok(
        &mut s,
        "memory_search",
        json!({"query": "search", "limit": 2}),
    );
    let combined: Vec<f64> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["combined_score"].as_f64().unwrap())
        .collect();
    assert_eq!(
        found["results"][0]["id"],
        "entity-projects-nanobrain-search"
    );
    assert_eq!(combined, [0.7, 0.6200000000000001]);
}

#[test]
fn s12_s15_update_keeps_frontmatter_and_reports_contradictions() {
    let v = Vault::new();
    let mut s = v.spawn();
    entity(&mut s, "projects", "nanobrain", "v1 scope", &["core"]);
    let before = v.file("entities/projects/nanobrain.md");
    let out = ok(
        &mut s,
        "memory_update",
        json!({"id": "entity-projects-nanobrain", "content": "v2 scope"}),
    );
    let created_line = before.lines().find(|l| l.starts_with("created: ")).unwrap();
    assert_eq!(
        out["previous_updated_at"],
        created_line["created: ".len()..]
    );
    assert_eq!(out["updated"], true);
    assert_eq!(out["contradiction"], json!({"hasContradiction": false}));
    let after = v.file("entities/projects/nanobrain.md");
    assert!(
        after.contains(created_line)
            && after.contains("tags: [\"core\"]")
            && after.ends_with("\n\nv2 scope\n")
    );
    entity(
        &mut s,
        "projects",
        "nanobrain-search",
        "search strategy details",
        &[],
    );
    let out = ok(
        &mut s,
        "memory_update",
        json!({"id": "entity-projects-nanobrain", "content": "Feature is not enabled."}),
    );
    assert_eq!(
        out["contradiction"],
        json!({"hasContradiction": true, "conflictingId": "entity-projects-nanobrain-search", "suggestion": "Review both entries and reconcile the conflicting claim."})
    );
    let ep = ok(
        &mut s,
        "memory_store",
        json!({"type": "episode", "name": "nanobrain-ep", "content": "x"}),
    );
    let out = ok(
        &mut s,
        "memory_update",
        json!({"id": ep["id"], "content": "Feature is not enabled."}),
    );
    assert!(out.get("contradiction").is_none());
}

#[test]
fn s26_compact_cascades_and_credit_report_has_the_seed_keys() {
    let v = Vault::new();
    let mut s = v.spawn();
    let first = ok(
        &mut s,
        "memory_store",
        json!({"type": "episode", "name": "auth-one", "content": "- fixed login", "tags": ["auth"]}),
    );
    ok(
        &mut s,
        "memory_store",
        json!({"type": "episode", "name": "auth-two", "content": "- traced token", "tags": ["auth", "debug"]}),
    );
    let report = ok(&mut s, "memory_compact", json!({}));
    assert_eq!(
        (
            report["consolidated"].as_u64(),
            report["promoted"].as_u64(),
            report["pruned"].as_u64()
        ),
        (Some(1), Some(1), Some(0))
    );
    let details: Vec<&str> = report["details"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(details.len(), 2, "{details:?}");
    assert!(
        details[0].starts_with("Merged 2 episodes on ") && details[0].ends_with("(score: 1.000)")
    );
    let month = &first["id"].as_str().unwrap()["episode-".len().."episode-".len() + 7];
    let merged = format!("episode-{month}-auth-one-merged-");
    assert!(
        details[1].starts_with(&format!("Promoted 2 facts from {merged}")),
        "{}",
        details[1]
    );
    assert!(details[1].ends_with("(score: 0.750)"));
    let report = ok(&mut s, "credit_report", json!({"top_n": 0}));
    let keys: Vec<&String> = report.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "total_memories",
            "avg_score",
            "top",
            "bottom",
            "prune_candidates",
            "last_consolidation",
            "last_pruning"
        ]
    );
    assert_eq!(report["total_memories"], 2);
    assert_eq!(report["top"].as_array().unwrap().len(), 1);
    assert_eq!(report["top"][0]["score"], 0.75);
    assert!(
        report["top"][0]["name"]
            .as_str()
            .unwrap()
            .starts_with("promoted-auth-one-merged-")
    );
    assert_eq!(report["bottom"][0]["score"], 0.69);
    assert!(report["last_consolidation"].is_string());
    assert!(report["last_pruning"].is_null());
    let actions: Vec<String> = v
        .db()
        .prepare("SELECT action FROM lifecycle_log ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(actions, ["consolidate", "promote"]);
    assert!(
        v.file("MEMORY.md")
            .contains("## Projects\n\n### promoted-auth-one-merged-")
    );
}

/// `times` rounds of a two-result search for `query` followed by the outcome `signal`.
fn search_then_report(s: &mut Server, query: &str, signal: &str, times: usize) {
    for _ in 0..times {
        ok(s, "memory_search", json!({"query": query, "limit": 2}));
        ok(s, "memory_feedback", json!({"signal": signal}));
    }
}

#[test]
fn feedback_after_a_search_moves_exactly_the_returned_memories_and_reorders_the_ranking() {
    let v = Vault::new();
    std::fs::write(v.root().join("STRATEGY.md"), "# Strategy\n\n- alpha: 0.5\n").unwrap();
    let mut s = v.spawn();
    entity(&mut s, "projects", "kiwi-alpha", "about kiwi", &[]);
    entity(&mut s, "projects", "kiwi-beta", "about kiwi", &[]);
    entity(&mut s, "projects", "other", "unrelated", &[]);
    let first = ok(
        &mut s,
        "memory_search",
        json!({"query": "kiwi", "limit": 1}),
    );
    let top = first["results"][0]["id"].as_str().unwrap().to_owned();
    let runner_up = if top.ends_with("alpha") {
        "entity-projects-kiwi-beta"
    } else {
        "entity-projects-kiwi-alpha"
    };
    let fb = ok(
        &mut s,
        "memory_feedback",
        json!({"signal": "user_correction"}),
    );
    assert_eq!(
        fb["updated"],
        json!([{"id": top, "old_score": 0.5, "new_score": 0.04999999999999999}])
    );
    assert_eq!(v.score(runner_up), 0.5);
    assert_eq!(v.score("entity-projects-other"), 0.5);
    let again = ok(
        &mut s,
        "memory_search",
        json!({"query": "kiwi", "limit": 2}),
    );
    assert_eq!(
        again["results"][0]["id"], runner_up,
        "the corrected memory dropped"
    );
    // Both returned: shared reward 0.5/√2, clamped at 1 however often it repeats.
    search_then_report(&mut s, "kiwi", "task_completed", 6);
    let fixed_point = 0.5 / 2f64.sqrt();
    assert!((v.score(runner_up) - fixed_point).abs() < 0.02);
    search_then_report(&mut s, "kiwi", "user_correction", 8);
    assert_eq!(v.score(runner_up), 0.0, "clamped at 0, never negative");
    // The turn of the second search was never resolved: an outcome reaches it once, then none.
    let older = ok(&mut s, "memory_feedback", json!({"signal": "tool_success"}));
    assert_eq!(older["updated"].as_array().unwrap().len(), 2);
    let none = ok(&mut s, "memory_feedback", json!({"signal": "tool_success"}));
    assert_eq!(
        (none["turn_id"].clone(), none["updated"].clone()),
        (Value::Null, json!([]))
    );
    let events: i64 = v
        .db()
        .query_row("SELECT COUNT(*) FROM credit_events", [], |r| r.get(0))
        .unwrap();
    assert_eq!(events, 1 + 6 * 2 + 8 * 2 + 2);
    assert!(
        err(&mut s, "memory_feedback", json!({"signal": "great"}))
            .starts_with("invalid args: signal")
    );
}

#[test]
fn the_feedback_and_decay_commands_close_the_loop_for_scripts() {
    let v = Vault::new();
    let mut s = v.spawn_session("hook-session");
    entity(&mut s, "projects", "fig-one", "fig notes", &[]);
    entity(&mut s, "projects", "untouched", "never searched", &[]);
    ok(&mut s, "memory_search", json!({"query": "fig"}));
    let out = v.command(&["feedback", "positive_feedback"], "hook-session");
    assert_eq!(out["updated"][0]["id"], "entity-projects-fig-one");
    assert_eq!(out["updated"][0]["new_score"], 0.5 * 0.9 + 0.1 * 0.3);
    let elsewhere = v.command(
        &["feedback", "task_completed", "--session", "other"],
        "hook-session",
    );
    assert_eq!(elsewhere["updated"], json!([]));
    // Ten days without access for "untouched" (as if the clock had moved): decay lowers it only.
    v.db()
        .execute("UPDATE credit_records SET last_accessed = '2020-01-01T00:00:00.000Z' WHERE id = 'entity-projects-untouched'", [])
        .unwrap();
    let decayed = v.command(&["decay"], "hook-session");
    assert_eq!(decayed["decayed"], 1);
    assert!(v.score("entity-projects-untouched") < 0.5);
    assert_eq!(v.score("entity-projects-fig-one"), 0.48);
    let rows: i64 = v
        .db()
        .query_row(
            "SELECT COUNT(*) FROM lifecycle_log WHERE action = 'decay'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(rows, 1);
    let fixed = v.command(&["decay", "--days", "7"], "hook-session");
    assert_eq!(fixed["details"], "Applied decay for 7 day(s)");
    let bad = Command::new(bin_path(BIN))
        .args(["clawbrain", "feedback", "meh"])
        .env("MEMORY_DIR", v.root())
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("signal must be one of"));
}

#[test]
fn hostile_names_and_categories_are_tool_errors_and_write_nothing_outside() {
    let v = Vault::new();
    let mut s = v.spawn();
    let hostile = [
        "../escape",
        "../../etc/x",
        "/abs",
        "a/b",
        "a\\b",
        "C:\\x",
        "a\u{0}b",
        "UPPER",
        "..",
        "a b",
    ];
    for bad in hostile {
        let by_name = err(
            &mut s,
            "memory_store",
            json!({"type": "entity", "category": "people", "name": bad, "content": "x"}),
        );
        assert!(
            by_name.starts_with("name must be kebab-case"),
            "{bad:?}: {by_name}"
        );
        let by_category = err(
            &mut s,
            "memory_store",
            json!({"type": "entity", "category": bad, "name": "ok", "content": "x"}),
        );
        assert!(
            by_category.starts_with("category must be kebab-case"),
            "{bad:?}: {by_category}"
        );
        let episode = err(
            &mut s,
            "memory_store",
            json!({"type": "episode", "name": bad, "content": "x"}),
        );
        assert!(episode.starts_with("name must be kebab-case"));
        for tool in ["memory_retrieve", "memory_delete"] {
            assert_eq!(
                err(&mut s, tool, json!({"id": bad})),
                format!("Memory not found: {bad}")
            );
        }
    }
    let beside: Vec<_> = std::fs::read_dir(v.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(beside, ["memory"]);
    let inside: Vec<_> = std::fs::read_dir(v.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        inside.iter().all(|n| n.starts_with("engine.db")),
        "{inside:?}"
    );
}

#[test]
fn a_malformed_file_is_named_in_the_error_and_a_hand_edit_is_searchable() {
    let v = Vault::new();
    let mut s = v.spawn();
    entity(&mut s, "projects", "plain", "first words", &[]);
    let path = v.root().join("entities/projects/plain.md");
    let edited = v
        .file("entities/projects/plain.md")
        .replace("first words", "mango season");
    std::fs::write(&path, edited).unwrap();
    assert_eq!(
        ok(&mut s, "memory_search", json!({"query": "mango"}))["total_matches"],
        1
    );
    std::fs::write(v.root().join("entities/projects/junk.md"), "---\nid: x\n").unwrap();
    assert_eq!(
        err(&mut s, "memory_search", json!({"query": "mango"})),
        "Invalid frontmatter format (entities/projects/junk.md)"
    );
    std::fs::write(
        v.root().join("entities/projects/junk.md"),
        "---\nid: x\n---\nbody",
    )
    .unwrap();
    assert_eq!(
        err(
            &mut s,
            "memory_retrieve",
            json!({"id": "entity-projects-plain"})
        ),
        "Incomplete frontmatter metadata (entities/projects/junk.md)"
    );
}

#[test]
fn the_vault_we_write_has_the_reference_tables_and_columns() {
    let v = Vault::new();
    let mut s = v.spawn();
    entity(&mut s, "people", "bob", "Bob", &[]);
    ok(
        &mut s,
        "memory_retrieve",
        json!({"id": "entity-people-bob"}),
    );
    let db = v.db();
    let columns = |table: &str| -> Vec<String> {
        db.prepare(&format!(
            "SELECT name FROM pragma_table_info('{table}') ORDER BY cid"
        ))
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    };
    assert_eq!(
        columns("credit_records"),
        [
            "id",
            "score",
            "access_count",
            "created_at",
            "last_accessed",
            "decay_rate"
        ]
    );
    assert_eq!(
        columns("credit_events"),
        [
            "id",
            "memory_id",
            "event_type",
            "reward",
            "old_score",
            "new_score",
            "session_id",
            "created_at"
        ]
    );
    assert_eq!(
        columns("turn_records"),
        [
            "id",
            "session_id",
            "retrieved_memory_ids",
            "outcome",
            "created_at"
        ]
    );
    assert_eq!(
        columns("lifecycle_log"),
        ["id", "action", "target_ids", "details", "created_at"]
    );
    assert_eq!(
        columns("contradictions"),
        [
            "id",
            "memory_a_id",
            "memory_b_id",
            "description",
            "resolution",
            "resolved_at",
            "created_at"
        ]
    );
    let row: (f64, i64, String, f64) = db
        .query_row(
            "SELECT score, access_count, retrieved_memory_ids, decay_rate FROM credit_records, turn_records",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(row, (0.5, 1, "[\"entity-people-bob\"]".to_owned(), 0.01));
    let mode: String = db
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

const PROCESSES: usize = 8;
const PER_PROCESS: usize = 10;

#[test]
fn eight_processes_store_update_and_archive_in_one_vault_without_losing_anything() {
    let v = Vault::new();
    {
        let mut s = v.spawn();
        entity(&mut s, "projects", "seed", "opens the vault", &[]);
    }
    let start = Arc::new(Barrier::new(PROCESSES));
    let workers: Vec<_> = (0..PROCESSES)
        .map(|p| {
            let (root, db, start) = (v.root(), v.dir.db_path(), Arc::clone(&start));
            thread::spawn(move || {
                let mut s = spawn_on(&root, &db, &format!("p{p}"));
                start.wait();
                let contested = s.call(
                    "memory_store",
                    json!({"type": "entity", "category": "projects", "name": "contested", "content": format!("by {p}")}),
                );
                for i in 0..PER_PROCESS {
                    entity(&mut s, "projects", &format!("item-{p}-{i}"), &format!("written by {p}"), &["race"]);
                    ok(&mut s, "memory_search", json!({"query": "written", "limit": 3}));
                }
                for i in 0..3 {
                    ok(&mut s, "memory_update", json!({"id": format!("entity-projects-item-{p}-{i}"), "content": format!("updated by {p}")}));
                }
                for i in 3..6 {
                    ok(&mut s, "memory_delete", json!({"id": format!("entity-projects-item-{p}-{i}")}));
                }
                ok(&mut s, "memory_feedback", json!({"signal": "tool_success"}));
                ok(&mut s, "memory_compact", json!({}));
                assert_eq!(s.close().code(), Some(0));
                !contested.is_error
            })
        })
        .collect();
    let winners = workers
        .into_iter()
        .map(|w| w.join().unwrap())
        .filter(|won| *won)
        .count();
    assert_eq!(
        winners, 1,
        "exactly one process creates the contested memory"
    );
    let mut s = v.spawn();
    let live = PROCESSES * (PER_PROCESS - 3) + 2;
    let report = ok(&mut s, "credit_report", json!({"top_n": 100}));
    assert_eq!(report["total_memories"], live);
    assert_eq!(
        ok(&mut s, "memory_search", json!({"query": "updated by"}))["total_matches"],
        PROCESSES * 3
    );
    for p in 0..PROCESSES {
        for i in 0..PER_PROCESS {
            let id = format!("entity-projects-item-{p}-{i}");
            let reply = s.call("memory_retrieve", json!({"id": id}));
            assert_eq!(
                reply.is_error,
                (3..6).contains(&i),
                "{id}: {}",
                reply.text()
            );
            if (3..6).contains(&i) {
                assert!(
                    v.root()
                        .join(format!("archive/entities/projects/item-{p}-{i}.md"))
                        .is_file()
                );
            }
        }
    }
    let mut files = 0;
    let mut stack = vec![v.root()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                !name.starts_with('.'),
                "a temporary file was left behind: {name}"
            );
            if path.is_dir() {
                stack.push(path);
            } else if name.ends_with(".md") && name != "MEMORY.md" {
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(
                    text.starts_with("---\nid: entity-projects-")
                        && text.contains("\npinned: false\n---\n\n"),
                    "{name}: {text}"
                );
                files += 1;
            }
        }
    }
    assert_eq!(files, live + PROCESSES * 3, "live files plus archived ones");
    assert!(
        v.file("MEMORY.md")
            .starts_with("# MEMORY\n\n## Projects\n\n")
    );
    assert_eq!(integrity_check(&v.root().join("engine.db")), "ok");
}
