//! What every one of the bins does as a process: `--help` and `--version`, an unknown flag,
//! stdin EOF and SIGTERM (exit 0, database sound), a database that cannot be opened (one line on
//! stderr, a non-zero exit, never a panic), what it logs at start-up, and tool descriptions that
//! agree with the schemas beside them.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use clawboo_core::ServerKind;
use clawboo_core::internal::{cli, registry};
use clawboo_tests::{Server, TempDir, VERSION, bin_path, bins, integrity_check, tools_of};
use serde_json::{Value, json};

/// Runs `bin` with `args` on the database `db`, stdin closed, and collects its output.
fn run(bin: &str, args: &[&str], db: &Path) -> Output {
    Command::new(bin_path(bin))
        .args(args)
        .env("CLAWBOO_DB_PATH", db)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {bin}: {e}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn help_and_version_exit_zero_without_touching_the_database() {
    for bin in bins() {
        let dir = TempDir::new("bins-help");
        let db = dir.db_path();
        for flag in ["--help", "-h"] {
            let out = run(bin, &[flag], &db);
            assert_eq!(out.status.code(), Some(0), "{bin} {flag}");
            let help = text(&out.stdout);
            assert!(
                help.starts_with(&format!("{bin} {VERSION}\n")),
                "{bin}: {help}"
            );
            for needle in [
                "USAGE",
                "--version",
                "--help",
                "CLAWBOO_DB_PATH",
                "RUST_LOG",
            ] {
                assert!(help.contains(needle), "{bin} {flag} lacks {needle}: {help}");
            }
            assert_eq!(text(&out.stderr), "", "{bin} {flag}");
        }
        for flag in ["--version", "-V", "version"] {
            let out = run(bin, &[flag], &db);
            assert_eq!(out.status.code(), Some(0), "{bin} {flag}");
            assert_eq!(text(&out.stdout), format!("{bin} {VERSION}\n"));
            assert_eq!(text(&out.stderr), "", "{bin} {flag}");
        }
        assert!(
            !db.exists(),
            "{bin}: flags alone do not create the database"
        );
    }
}

#[test]
fn an_unknown_flag_exits_2_with_one_line_on_stderr() {
    for bin in bins() {
        let dir = TempDir::new("bins-flag");
        let out = run(bin, &["--no-such-flag"], &dir.db_path());
        assert_eq!(out.status.code(), Some(2), "{bin}");
        assert_eq!(text(&out.stdout), "", "{bin}: nothing on stdout");
        let err = text(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{bin}: {err:?}");
        assert!(err.ends_with('\n'), "{bin}: {err:?}");
        assert!(err.starts_with(&format!("{bin}: ")), "{bin}: {err:?}");
        assert!(
            err.contains("--no-such-flag") && err.contains("--help"),
            "{err:?}"
        );
        assert!(!dir.db_path().exists());
    }
}

#[test]
fn every_command_of_every_bin_answers_help_on_stdout_with_exit_0() {
    for entry in registry::entries().filter(|e| e.is_bins_own()) {
        let bin = entry.bin;
        let dir = TempDir::new("bins-command-help");
        let db = dir.db_path();
        for command in cli::commands(entry.kind) {
            let mut args = command.words.clone();
            args.push("--help");
            let out = run(bin, &args, &db);
            let shown = args.join(" ");
            assert_eq!(out.status.code(), Some(0), "{bin} {shown}");
            assert_eq!(text(&out.stderr), "", "{bin} {shown}");
            let help = text(&out.stdout);
            if command.words.is_empty() {
                assert!(help.starts_with(&format!("{bin} {VERSION}\n")), "{help}");
            } else {
                let usage = format!("usage: {bin} {}", command.path());
                assert!(help.starts_with(&usage), "{bin} {shown}: {help}");
                let top = text(&run(bin, &["--help"], &db).stdout);
                assert!(top.contains(&format!("{bin} {}", command.path())), "{top}");
            }
        }
        assert!(
            !db.exists(),
            "{bin}: help alone does not create the database"
        );
    }
}

#[test]
fn a_usage_error_names_the_command_once_and_exits_2() {
    for bin in bins() {
        let dir = TempDir::new("bins-usage");
        let out = run(bin, &["serve", "--bogus"], &dir.db_path());
        assert_eq!(out.status.code(), Some(2), "{bin}");
        assert_eq!(text(&out.stdout), "", "{bin}");
        assert_eq!(
            text(&out.stderr),
            format!(
                "{bin}: serve: unexpected argument '--bogus'; run `{bin} serve --help` for usage\n"
            )
        );
        let attach = run(bin, &["attach", "--runtime"], &dir.db_path());
        assert_eq!(attach.status.code(), Some(2), "{bin}");
        assert!(
            text(&attach.stderr).starts_with(&format!("{bin}: attach: --runtime needs a value")),
            "{}",
            text(&attach.stderr)
        );
    }
}

/// Starts `bin`, completes the handshake, lists its tools and, for the Tasks bin, leaves `writes`
/// create calls in flight (sent, not awaited).
fn busy_server(bin: &str, db: &Path, writes: usize) -> Server {
    let mut server = Server::spawn(bin, db, &[("RUST_LOG", "error")]);
    let tools = server.list_tools();
    if bin == "clawboo-mcp-tasks" {
        assert_eq!(tools.len(), tools_of(ServerKind::Tasks).len());
        for i in 0..writes {
            server.send_request(
                "tools/call",
                json!({"name": "create_task", "arguments": {"title": format!("in flight {i}")}}),
            );
        }
    }
    server
}

fn task_count(db: &Path) -> i64 {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row("SELECT count(*) FROM tasks", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn stdin_eof_exits_zero_and_leaves_a_sound_database() {
    for bin in bins() {
        let dir = TempDir::new("bins-eof");
        let db = dir.db_path();
        let status = busy_server(bin, &db, 20).close();
        assert_eq!(status.code(), Some(0), "{bin}");
        assert_eq!(integrity_check(&db), "ok", "{bin}");
        assert!((0..=20).contains(&task_count(&db)), "{bin}");
    }
}

#[test]
fn stdin_closed_before_initialize_is_a_quiet_clean_exit() {
    for bin in bins() {
        let dir = TempDir::new("bins-eof-early");
        let out = run(bin, &[], &dir.db_path());
        assert_eq!(out.status.code(), Some(0), "{bin}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "", "{bin}");
        assert_eq!(text(&out.stderr), "", "{bin}");
    }
}

#[cfg(unix)]
#[test]
fn sigterm_exits_zero_and_leaves_a_sound_database() {
    for bin in bins() {
        let dir = TempDir::new("bins-term");
        let db = dir.db_path();
        let status = busy_server(bin, &db, 20).terminate();
        assert_eq!(status.code(), Some(0), "{bin}: {status:?}");
        assert_eq!(integrity_check(&db), "ok", "{bin}");
        // The file still serves afterwards.
        let mut again = Server::spawn(bin, &db, &[]);
        again.list_tools();
        assert_eq!(again.close().code(), Some(0));
    }
}

/// Asserts that `bin` refuses to start on `db`: a non-zero exit, nothing on stdout, and exactly
/// one line on stderr that names the bin and the path, without a panic.
fn assert_refuses(bin: &str, db: &Path, case: &str) {
    let out = run(bin, &[], db);
    assert!(
        out.status.code().is_some_and(|c| c != 0),
        "{bin} ({case}) exited with {:?}",
        out.status
    );
    assert_eq!(text(&out.stdout), "", "{bin} ({case})");
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{bin} ({case}): {err:?}");
    assert!(
        err.starts_with(&format!("{bin}: ")),
        "{bin} ({case}): {err:?}"
    );
    assert!(!err.contains("panicked"), "{bin} ({case}): {err:?}");
    let shown = db
        .parent()
        .filter(|_| case == "parent is a file")
        .unwrap_or(db);
    assert_eq!(
        err.matches(&shown.display().to_string()).count(),
        1,
        "{bin} ({case}) names the path once: {err:?}"
    );
    assert!(
        !err.contains("unable to open database file"),
        "{bin} ({case}) says why, not SQLite's catch-all: {err:?}"
    );
}

#[cfg(unix)]
#[test]
fn an_unopenable_database_is_one_stderr_line_and_a_failure_exit() {
    for bin in bins() {
        let dir = TempDir::new("bins-unopenable");

        let file = dir.path().join("plain-file");
        std::fs::write(&file, "not a folder").unwrap();
        assert_refuses(bin, &file.join("clawboo.db"), "parent is a file");

        let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 31 % 251) as u8).collect();
        let not_sqlite = dir.path().join("not-sqlite.db");
        std::fs::write(&not_sqlite, &garbage).unwrap();
        assert_refuses(bin, &not_sqlite, "not a SQLite file");
        assert_eq!(
            std::fs::read(&not_sqlite).unwrap(),
            garbage,
            "{bin}: a foreign file is left as it was"
        );

        let folder = dir.path().join("a-folder.db");
        std::fs::create_dir(&folder).unwrap();
        assert_refuses(bin, &folder, "path is a folder");
        let err = text(&run(bin, &[], &folder).stderr);
        assert!(err.contains("is a directory"), "{bin}: {err:?}");

        let locked = dir.path().join("read-only");
        std::fs::create_dir(&locked).unwrap();
        set_mode(&locked, 0o500);
        // Permissions do not bind a privileged user; the case only means something without them.
        if std::fs::write(locked.join("probe"), "x").is_err() {
            assert_refuses(bin, &locked.join("clawboo.db"), "unwritable folder");
        }
        set_mode(&locked, 0o700);
    }
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Runs `bin` with `RUST_LOG=info` and `env`, stdin closed, and returns what it logged.
fn info_log(bin: &str, env: &[(&str, &str)]) -> String {
    let mut command = Command::new(bin_path(bin));
    command.env("RUST_LOG", "info").stdin(Stdio::null());
    for name in [
        "CLAWBOO_SCOPE_TEAM_ID",
        "CLAWBOO_SCOPE_AGENT_ID",
        "CLAWBOO_SCOPE_TENANT_ID",
        "CLAWBOO_ROOM_TEAM_ID",
        "CLAWBOO_AUTHOR_AGENT_ID",
        "TAVILY_API_KEY",
        "OPENAI_API_KEY",
    ] {
        command.env_remove(name);
    }
    command.envs(env.iter().copied());
    let out = command.output().expect("run the bin");
    assert_eq!(out.status.code(), Some(0), "{bin}: {}", text(&out.stderr));
    text(&out.stderr)
}

#[test]
fn every_bin_logs_the_database_it_opened_and_its_binding_at_info() {
    for bin in bins() {
        let dir = TempDir::new("bins-log");
        let db = dir.db_path();
        let db_text = db.display().to_string();
        let log = info_log(bin, &[("CLAWBOO_DB_PATH", &db_text)]);
        assert!(
            log.contains(&format!("database {db_text} (from CLAWBOO_DB_PATH)")),
            "{bin}: {log}"
        );
        assert!(log.contains("unbound"), "{bin}: {log}");

        let bound = info_log(
            bin,
            &[
                ("CLAWBOO_DB_PATH", &db_text),
                ("CLAWBOO_SCOPE_TEAM_ID", "team-log"),
                ("CLAWBOO_SCOPE_AGENT_ID", "agent-log"),
                ("CLAWBOO_ROOM_TEAM_ID", "team-log"),
                ("CLAWBOO_AUTHOR_AGENT_ID", "agent-log"),
                ("TAVILY_API_KEY", "tvly-fake-log-7"),
                ("OPENAI_API_KEY", "sk-fake-log-0123456789abcdefghij"),
            ],
        );
        assert!(bound.contains("bound: "), "{bin}: {bound}");
        assert!(
            bound.contains("=team-log") || bound.contains("=agent-log"),
            "{bin}: {bound}"
        );
        for secret in ["tvly-fake-log-7", "sk-fake-log"] {
            assert!(!bound.contains(secret), "{bin} logged a secret: {bound}");
        }
    }
}

#[test]
fn a_blank_database_variable_logs_that_the_default_is_used() {
    let dir = TempDir::new("bins-log-default");
    let log = info_log(
        "clawboo-mcp-tasks",
        &[
            ("CLAWBOO_DB_PATH", "  "),
            ("HOME", &dir.path().display().to_string()),
        ],
    );
    let default = dir
        .path()
        .join(".openclaw")
        .join("clawboo")
        .join("clawboo.db");
    assert!(
        log.contains(&format!("database {} (the default", default.display())),
        "{log}"
    );
    assert!(default.exists());
}

/// Every `a..b` range and the word after each `default` in a description, as the text says it.
fn described_bounds(description: &str) -> (Vec<(f64, f64)>, Vec<String>) {
    let words: Vec<&str> = description
        .split(|c: char| c.is_whitespace() || "(),;:".contains(c))
        .filter(|w| !w.is_empty())
        .collect();
    let ranges = words
        .iter()
        .filter_map(|w| {
            let (low, high) = w.trim_end_matches('.').split_once("..")?;
            Some((low.parse().ok()?, high.parse().ok()?))
        })
        .collect();
    let defaults = words
        .windows(2)
        .filter(|pair| pair[0].eq_ignore_ascii_case("default"))
        .map(|pair| pair[1].trim_end_matches('.').to_owned())
        .collect();
    (ranges, defaults)
}

#[test]
fn tool_descriptions_agree_with_their_schemas() {
    let mut checked = 0;
    for bin in bins() {
        let dir = TempDir::new("bins-schema");
        let mut server = Server::spawn(
            bin,
            &dir.db_path(),
            &[("TAVILY_API_KEY", "tvly-fake-schema-1")],
        );
        for tool in server.list_tools() {
            let name = tool["name"].as_str().unwrap_or("?").to_owned();
            let properties = tool["inputSchema"]["properties"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            for (field, schema) in properties {
                let description = schema["description"].as_str().unwrap_or("");
                let min = schema["minimum"].as_f64();
                let max = schema["maximum"].as_f64();
                let (ranges, defaults) = described_bounds(description);
                let at = format!("{bin} {name}.{field}: {description:?} vs {schema}");
                for (low, high) in &ranges {
                    assert_eq!((Some(*low), Some(*high)), (min, max), "{at}");
                    checked += 1;
                }
                for default in &defaults {
                    if let Ok(number) = default.parse::<f64>() {
                        assert!(
                            min.is_none_or(|m| number >= m) && max.is_none_or(|m| number <= m),
                            "a default outside the range: {at}"
                        );
                        checked += 1;
                    } else if let Some(Value::Array(allowed)) = schema.get("enum") {
                        assert!(
                            allowed.iter().any(|v| v == default.as_str()),
                            "a default that is not one of the values: {at}"
                        );
                        checked += 1;
                    }
                }
                if let (Some(low), Some(high)) = (min, max) {
                    assert!(
                        ranges.contains(&(low, high)),
                        "the description does not say the range: {at}"
                    );
                }
            }
        }
        server.close();
    }
    assert!(checked >= 4, "the walk found the ranged fields ({checked})");
}

#[test]
fn operator_errors_follow_the_bins_style_with_and_without_json() {
    let dir = TempDir::new("bins-operator");
    let folder = dir.path().join("a-folder.db");
    std::fs::create_dir(&folder).unwrap();
    let bin = "clawboo-mcp-tools";

    let out = run(bin, &["approvals", "--json"], &folder);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stderr), "", "nothing but JSON under --json");
    let error: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert!(
        error["error"]
            .as_str()
            .is_some_and(|e| e.contains("is a directory")),
        "{error}"
    );

    let db = dir.db_path();
    let plain = run(bin, &["enable", "nosuchtool"], &db);
    assert_eq!(plain.status.code(), Some(1));
    let err = text(&plain.stderr);
    assert!(err.starts_with(&format!("{bin}: no tool named")), "{err:?}");
    assert_eq!(err.lines().count(), 1, "{err:?}");
    let as_json = run(bin, &["enable", "nosuchtool", "--json"], &db);
    assert_eq!(as_json.status.code(), Some(1));
    let error: Value = serde_json::from_slice(&as_json.stdout).expect("JSON on stdout");
    assert!(
        error["error"]
            .as_str()
            .is_some_and(|e| e.contains("nosuchtool"))
    );

    let usage = run(bin, &["approve", "--json"], &db);
    assert_eq!(usage.status.code(), Some(2));
    let error: Value = serde_json::from_slice(&usage.stdout).expect("JSON on stdout");
    assert!(
        error["error"]
            .as_str()
            .is_some_and(|e| e.contains("exactly one"))
    );
}
