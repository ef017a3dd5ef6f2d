//! The examples as a smoke test: they build, the supervisor's `--once` round finds every server
//! up, and the stdio example answers MCP over its stdin/stdout as a spawned server does.

use std::path::PathBuf;
use std::process::Command;

use clawboo_core::{
    Db, Embeddings, SERVER_NAMES, ToolsOptions, clawbrain_server, memory_server, tasks_server,
    teamchat_server, tools_server,
};
use clawboo_tests::{Server, TempDir, workspace_root};
use serde_json::json;

/// Builds clawboo-core's examples (as `cargo test` would, also when only this test is selected)
/// and returns the path of `name`.
fn example(name: &str) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(workspace_root())
        .args(["build", "--quiet", "-p", "clawboo-core", "--examples"])
        .status()
        .expect("cargo build could not start");
    assert!(status.success(), "cargo build --examples failed");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"));
    target
        .join("debug")
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// How many tools the server `name` lists, built with the public constructors in `dir`.
fn listed_tools(name: &str, dir: &TempDir) -> usize {
    let db = || Db::open(&dir.path().join("count.db")).unwrap();
    let server = match name {
        "tasks" => tasks_server(db(), None),
        "memory" => memory_server(db(), &Embeddings::off(), None),
        "tools" => tools_server(db(), ToolsOptions::default()),
        "teamchat" => teamchat_server(db(), None),
        "clawbrain" => clawbrain_server(&dir.path().join("count-vault"), "count").unwrap(),
        other => panic!("no constructor for {other}"),
    };
    server.tool_names().len()
}

#[test]
fn the_supervisor_finds_every_server_up_in_one_round() {
    let dir = TempDir::new("example-supervisor");
    let db = dir.db_path();
    let out = Command::new(example("supervisor"))
        .args(["--once", "--db"])
        .arg(&db)
        .env_remove("TAVILY_API_KEY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<(String, String, String)> = stdout
        .lines()
        .map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            (
                words[0].to_owned(),
                words[1].to_owned(),
                words[2].to_owned(),
            )
        })
        .collect();
    let expected: Vec<(String, String, String)> = SERVER_NAMES
        .iter()
        .map(|name| {
            let tools = listed_tools(name, &dir);
            ((*name).to_owned(), "up".to_owned(), tools.to_string())
        })
        .collect();
    assert_eq!(rows, expected, "{stdout}");
    let bad = Command::new(example("supervisor"))
        .arg("--every")
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "a usage error exits 2");
}

#[test]
fn the_stdio_example_serves_a_bound_room_over_its_own_stdio() {
    let dir = TempDir::new("example-stdio");
    let db = dir.db_path().display().to_string();
    let args = ["--db", db.as_str(), "--team", "t1", "--agent", "reviewer"];
    let mut server = Server::spawn_program(example("stdio"), &args, &dir.db_path(), &[]);
    let info = server.initialize();
    assert_eq!(info["serverInfo"]["name"], "clawboo-teamchat");
    let posted = server.call(
        "team_chat_post",
        json!({"text": "looks good", "authorAgentId": "someone-else"}),
    );
    assert!(!posted.is_error, "{}", posted.text());
    assert_eq!(posted.json()["posted"]["authorAgentId"], "reviewer");
    assert!(server.close().success(), "exits 0 when stdin closes");
}
