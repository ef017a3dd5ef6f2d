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
