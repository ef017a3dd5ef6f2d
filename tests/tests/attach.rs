//! `attach` on every bin: the printed config, spawned exactly as a runtime would spawn it, serves.

use std::path::PathBuf;
use std::process::Command;

use clawboo_tests::{BINS, Server, TempDir, bin_path};
use serde_json::Value;

fn attach_json(bin: &str, args: &[&str]) -> Value {
    let out = Command::new(bin_path(bin))
        .arg("attach")
        .args(args)
        .args(["--json"])
        .output()
        .expect("run attach");
    assert!(
        out.status.success(),
        "{bin} attach failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("attach --json prints JSON")
}

#[test]
fn a_bound_openclaw_stdio_config_starts_a_working_server_for_every_bin() {
    let dir = TempDir::new("attach");
    let db = dir.db_path();
    let db_text = db.display().to_string();
    for bin in BINS {
        let config = attach_json(
            bin,
            &[
                "--runtime",
                "openclaw",
                "--db",
                &db_text,
                "--team",
                "tm1",
                "--agent",
                "boo-1",
            ],
        );
        let server = &config["structured"];
        assert_eq!(
            server["command"],
            bin_path(bin).display().to_string(),
            "{bin}"
        );
        assert_eq!(server["args"], serde_json::json!([]), "{bin}");
        assert_eq!(server["env"]["CLAWBOO_DB_PATH"], db_text.as_str(), "{bin}");
        let env: Vec<(String, String)> = server["env"]
            .as_object()
            .expect("env object")
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().expect("string").to_owned()))
            .collect();
        let env_refs: Vec<(&str, &str)> =
            env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let mut running = Server::spawn_command(
            PathBuf::from(server["command"].as_str().expect("command")),
            &db,
            &env_refs,
        );
        let init = running.initialize();
        let expected_name = bin.replace("clawboo-mcp-", "clawboo-");
        assert_eq!(init["serverInfo"]["name"], expected_name.as_str());
        assert_eq!(running.close().code(), Some(0));
    }
}

/// The `structured.env` of `bin attach --runtime openclaw --json` with `args`, as spawn pairs.
fn attached_env(bin: &str, args: &[&str]) -> Vec<(String, String)> {
    let mut full = vec!["--runtime", "openclaw"];
    full.extend_from_slice(args);
    attach_json(bin, &full)["structured"]["env"]
        .as_object()
        .expect("env object")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().expect("string").to_owned()))
        .collect()
}

fn spawn_with(bin: &str, db: &std::path::Path, env: &[(String, String)]) -> Server {
    let refs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut server = Server::spawn(bin, db, &refs);
    server.initialize();
    server
}

/// The binding round trip: what `attach` writes is what the bin reads, and the bin then acts as
/// bound whatever the arguments say.
#[test]
fn the_binding_attach_writes_is_the_binding_the_bin_enforces() {
    let dir = TempDir::new("attach-roundtrip");
    let db = dir.db_path();
    let db_text = db.display().to_string();
    let bound = [
        "--db",
        db_text.as_str(),
        "--team",
        " tm1 ",
        "--agent",
        "boo 1",
    ];

    let mut room = spawn_with(
        "clawboo-mcp-teamchat",
        &db,
        &attached_env("clawboo-mcp-teamchat", &bound),
    );
    let posted = room.call(
        "team_chat_post",
        serde_json::json!({"text": "hi", "authorAgentId": "mallory", "teamId": "evil"}),
    );
    assert!(!posted.is_error, "{}", posted.text());
    assert_eq!(
        posted.json()["posted"],
        serde_json::json!({"seq": 1, "roomId": "team:tm1", "authorAgentId": "boo 1"})
    );
    room.close();

    let mut memory = spawn_with(
        "clawboo-mcp-memory",
        &db,
        &attached_env("clawboo-mcp-memory", &bound),
    );
    let saved = memory.call(
        "memory_save",
        serde_json::json!({"title": "bound fact", "content": "x", "scopeTeamId": "evil"}),
    );
    assert!(!saved.is_error, "{}", saved.text());
    memory.close();
    let mut other_team = spawn_with(
        "clawboo-mcp-memory",
        &db,
        &attached_env(
            "clawboo-mcp-memory",
            &["--db", db_text.as_str(), "--team", "evil"],
        ),
    );
    let seen = other_team.call("memory_browse", serde_json::json!({"scopeTeamId": "tm1"}));
    assert_eq!(seen.json(), serde_json::json!([]), "{}", seen.text());
    other_team.close();
}

#[test]
fn binding_variables_follow_the_server() {
    let env_of = |bin: &str| {
        attach_json(
            bin,
            &[
                "--runtime",
                "codex",
                "--db",
                "/tmp/x.db",
                "--team",
                "tm1",
                "--agent",
                "a1",
            ],
        )["structured"]["mcp_servers"][bin.replace("clawboo-mcp-", "clawboo-")]["env"]
            .clone()
    };
    assert_eq!(env_of("clawboo-mcp-tasks")["CLAWBOO_SCOPE_TEAM_ID"], "tm1");
    assert_eq!(env_of("clawboo-mcp-memory")["CLAWBOO_SCOPE_AGENT_ID"], "a1");
    assert_eq!(env_of("clawboo-mcp-tools")["CLAWBOO_SCOPE_AGENT_ID"], "a1");
    assert_eq!(
        env_of("clawboo-mcp-teamchat")["CLAWBOO_ROOM_TEAM_ID"],
        "tm1"
    );
    assert_eq!(
        env_of("clawboo-mcp-teamchat")["CLAWBOO_AUTHOR_AGENT_ID"],
        "a1"
    );
}

#[test]
fn attach_without_a_runtime_or_with_an_unknown_one_is_a_usage_error() {
    for args in [
        vec!["attach"],
        vec!["attach", "--runtime", "vim"],
        vec!["attach", "--runtime"],
    ] {
        let out = Command::new(bin_path("clawboo-mcp-tasks"))
            .args(&args)
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("runtime"), "{stderr}");
    }
}
