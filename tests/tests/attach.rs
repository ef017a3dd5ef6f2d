//! `attach` on every bin: the printed config, spawned exactly as a runtime would spawn it, serves;
//! every printed snippet parses with a real parser of the file it is pasted into; a relative `--db`
//! comes out absolute; errors under `--json` are JSON.

use std::path::{Path, PathBuf};
use std::process::Command;

use clawboo_tests::{Server, TempDir, bin_path, bins};
use serde_json::Value;

fn attach_json(bin: &str, args: &[&str]) -> Value {
    attach_json_in(bin, args, &std::env::temp_dir())
}

/// `attach --json` run from the folder `cwd`.
fn attach_json_in(bin: &str, args: &[&str], cwd: &Path) -> Value {
    let mut with_json = args.to_vec();
    with_json.push("--json");
    serde_json::from_str(&attach_ok(bin, &with_json, cwd)).expect("attach --json prints JSON")
}

/// The stdout of a successful `attach` run from the folder `cwd`.
fn attach_ok(bin: &str, args: &[&str], cwd: &Path) -> String {
    let out = Command::new(bin_path(bin))
        .current_dir(cwd)
        .arg("attach")
        .args(args)
        .output()
        .expect("run attach");
    assert!(
        out.status.success(),
        "{bin} attach failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn a_bound_openclaw_stdio_config_starts_a_working_server_for_every_bin() {
    let dir = TempDir::new("attach");
    let db = dir.db_path();
    let db_text = db.display().to_string();
    for bin in bins() {
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

/// The plain (not `--json`) output of `attach`.
fn attach_text(bin: &str, args: &[&str]) -> String {
    attach_ok(bin, args, &std::env::temp_dir())
}

/// The words a POSIX shell makes of `command`, found by running it with the program replaced by a
/// function that prints its arguments.
fn shell_words(command: &str) -> Vec<String> {
    let program = command.split_whitespace().next().expect("a command");
    let script = format!("{program}() {{ printf '%s\\0' \"$@\"; }}\n{command}");
    let out = Command::new("sh")
        .args(["-c", &script])
        .output()
        .expect("sh");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .split_terminator('\0')
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_printed_snippet_parses_as_the_file_it_is_pasted_into() {
    let dir = TempDir::new("attach-parse");
    let db = dir.path().join("it's a \"db\" dir").join("clawboo.db");
    let db_text = db.display().to_string();
    for bin in bins() {
        let id = bin.replace("clawboo-mcp-", "clawboo-");
        let common = [
            "--db",
            db_text.as_str(),
            "--team",
            "tm 1",
            "--agent",
            "boo-1",
        ];

        // OpenClaw: a member of mcp.servers in openclaw.json, which OpenClaw reads as JSON5.
        let mut args = vec!["--runtime", "openclaw"];
        args.extend(common);
        let snippet = attach_text(bin, &args);
        assert!(!snippet.lines().any(|l| l.starts_with('#')), "{snippet}");
        let file = format!("{{ mcp: {{ servers: {{\n{snippet}}} }} }}");
        let parsed: Value =
            json5::from_str(&file).unwrap_or_else(|e| panic!("{bin}: not JSON5 ({e}):\n{file}"));
        let entry = &parsed["mcp"]["servers"][id.as_str()];
        assert_eq!(
            entry["command"],
            bin_path(bin).display().to_string(),
            "{bin}"
        );
        assert_eq!(entry["env"]["CLAWBOO_DB_PATH"], db_text.as_str(), "{bin}");
        // The same entry as `openclaw mcp set <id> '<json>'`, offered in a comment line.
        let command = snippet
            .lines()
            .filter_map(|l| l.strip_prefix("// "))
            .find(|c| c.starts_with("openclaw mcp set"))
            .expect("the openclaw mcp set command");
        let words = shell_words(command);
        assert_eq!(words[..3], ["mcp", "set", id.as_str()], "{bin}: {words:?}");
        let set_entry: Value = serde_json::from_str(&words[3]).expect("the entry is JSON");
        assert_eq!(&set_entry, entry, "{bin}");

        // Codex: a table of ~/.codex/config.toml, with and without --auto-approve.
        for approve in [false, true] {
            let mut args = vec!["--runtime", "codex"];
            args.extend(common);
            if approve {
                args.push("--auto-approve");
            }
            let snippet = attach_text(bin, &args);
            let parsed: toml::Table = toml::from_str(&snippet)
                .unwrap_or_else(|e| panic!("{bin}: not TOML ({e}):\n{snippet}"));
            let entry = &parsed["mcp_servers"][id.as_str()];
            assert_eq!(
                entry["env"]["CLAWBOO_DB_PATH"].as_str(),
                Some(db_text.as_str())
            );
            assert_eq!(
                entry
                    .get("default_tools_approval_mode")
                    .and_then(|v| v.as_str()),
                approve.then_some("approve"),
                "{bin}: {snippet}"
            );
        }

        // Claude Code: one shell command, and a .mcp.json made of the structured form.
        let mut args = vec!["--runtime", "claude-code"];
        args.extend(common);
        let command = attach_text(bin, &args);
        let words = shell_words(command.trim_end());
        assert_eq!(words[..2], ["mcp", "add"], "{bin}: {words:?}");
        assert!(
            words.contains(&format!("CLAWBOO_DB_PATH={db_text}")),
            "{bin}: {words:?}"
        );
        assert_eq!(words.last(), Some(&bin_path(bin).display().to_string()));
        let structured = attach_json(bin, &args)["structured"].clone();
        let mcp_json =
            serde_json::to_string_pretty(&serde_json::json!({ "mcpServers": structured }))
                .expect("serialize");
        let parsed: Value = serde_json::from_str(&mcp_json).expect(".mcp.json is JSON");
        assert_eq!(parsed["mcpServers"][id.as_str()]["type"], "stdio", "{bin}");
    }
}

#[test]
fn a_relative_db_comes_out_absolute() {
    let dir = TempDir::new("attach-relative");
    for bin in bins() {
        let config = attach_json_in(
            bin,
            &["--runtime", "openclaw", "--db", "rel.db"],
            dir.path(),
        );
        let expected = dir.path().join("rel.db");
        assert_eq!(
            config["structured"]["env"]["CLAWBOO_DB_PATH"],
            expected.display().to_string(),
            "{bin}"
        );
        let nested = attach_json_in(
            bin,
            &["--runtime", "codex", "--db", "team/./x.db"],
            dir.path(),
        );
        let path = nested["structured"]["mcp_servers"][bin.replace("clawboo-mcp-", "clawboo-")]
            ["env"]["CLAWBOO_DB_PATH"]
            .as_str()
            .expect("a path")
            .to_owned();
        assert!(Path::new(&path).is_absolute(), "{bin}: {path}");
        assert!(
            path.starts_with(&dir.path().display().to_string()),
            "{bin}: {path}"
        );
    }
}

#[test]
fn attach_errors_under_json_are_json_on_stdout_and_exit_2() {
    for args in [
        vec!["attach", "--json"],
        vec!["attach", "--runtime", "vim", "--json"],
        vec![
            "attach",
            "--runtime",
            "claude-code",
            "--auto-approve",
            "--json",
        ],
    ] {
        let out = Command::new(bin_path("clawboo-mcp-memory"))
            .args(&args)
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{args:?}");
        let error: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e})"));
        let message = error["error"].as_str().expect("an error message");
        assert!(message.starts_with("attach: "), "{message}");
    }
}
