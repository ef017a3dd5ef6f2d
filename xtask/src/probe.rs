//! `cargo xtask probe`: the liveness check of the four servers, as a person would run it.
//!
//! First, in process: builds each server (and ClawBrain) with the library's public constructors on
//! a fresh temporary database and checks it with the library's own [`clawboo_core::probe`] (an
//! in-memory MCP client: `initialize` + `tools/list`, both ends closed), so the path an embedding
//! program takes is checked before any bin is built. Then it builds the bins (release unless
//! `--debug`), and for each: spawns it over stdio on a fresh
//! temporary database, times `initialize` + `tools/list`, and checks the advertised name and tool
//! count; then the memory bin's `clawbrain` mode on a temporary vault (server `clawbrain`, the 7
//! tools of seed 002 plus `memory_feedback`). Prints one line per server; fails on any mismatch.
//!
//! The build shows cargo's own progress (its `Compiling …` lines, on stderr) as soon as cargo has
//! anything to build, because a first release build takes minutes; when everything is fresh it
//! prints nothing, so a second run shows only the table.

use std::io::{BufRead, BufReader, IsTerminal};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};
use clawboo_tests::{CLAWBRAIN_TOOLS, Server, TempDir, VERSION, bin_path, workspace_root};

/// Each bin, the `serverInfo.name` it must report, and its tool count (tools without
/// `TAVILY_API_KEY`).
pub const EXPECTED: [(&str, &str, usize); 4] = [
    ("clawboo-mcp-tasks", "clawboo-tasks", 13),
    ("clawboo-mcp-memory", "clawboo-memory", 3),
    ("clawboo-mcp-tools", "clawboo-tools", 3),
    ("clawboo-mcp-teamchat", "clawboo-teamchat", 2),
];

/// Builds the four bins with `profile` (`debug` or `release`).
pub fn build_bins(profile: &str) -> anyhow::Result<()> {
    let args: &[&str] = if profile == "release" {
        &["--release"]
    } else {
        &[]
    };
    cargo_build(args, &[])?;
    // SAFETY of set_var: xtask is single-threaded at this point.
    unsafe {
        std::env::set_var("CLAWBOO_TEST_PROFILE", profile);
        std::env::set_var("CLAWBOO_BINS_BUILT", "1");
    }
    Ok(())
}

/// `cargo build <args>` of the four bins with the extra environment `env`. Cargo's stderr is held
/// back until it shows work (a crate compiling, the index updating, a lock being waited for), then
/// passed through line by line; a build with nothing to do prints nothing. A failed build prints
/// everything cargo said.
pub fn cargo_build(args: &[&str], env: &[(&str, &str)]) -> anyhow::Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace_root()).arg("build").args(args);
    if std::io::stderr().is_terminal() {
        cmd.arg("--color=always");
    }
    for (bin, _, _) in EXPECTED {
        cmd.args(["--bin", bin]);
    }
    cmd.envs(env.iter().copied()).stderr(Stdio::piped());
    let mut child = cmd.spawn().context("cannot run cargo build")?;
    let stderr = child.stderr.take().context("cargo's stderr is piped")?;
    let mut held = Vec::new();
    let mut streaming = false;
    for line in BufReader::new(stderr).lines() {
        let line = line.context("cannot read cargo's output")?;
        if streaming {
            eprintln!("{line}");
        } else if shows_work(&line) {
            streaming = true;
            eprintln!(
                "cargo is building the server bins ({}); a first build takes minutes, see README",
                if args.contains(&"--release") {
                    "release, LTO"
                } else {
                    "debug"
                }
            );
            for earlier in held.drain(..) {
                eprintln!("{earlier}");
            }
            eprintln!("{line}");
        } else {
            held.push(line);
        }
    }
    let status = child.wait().context("cargo build did not finish")?;
    if !status.success() {
        for line in held {
            eprintln!("{line}");
        }
        bail!("cargo build of the server bins failed ({status})");
    }
    Ok(())
}

/// Whether a line of cargo's stderr means it is doing work rather than reporting a fresh build.
fn shows_work(line: &str) -> bool {
    let mut plain = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // An ANSI colour sequence: ESC [ … letter.
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    let word = plain.split_whitespace().next().unwrap_or("");
    matches!(
        word,
        "Compiling" | "Updating" | "Downloading" | "Downloaded" | "Locking" | "Adding" | "Blocking"
    )
}

/// `cargo xtask probe [--debug]`.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let profile = match args {
        [] => "release",
        [flag] if flag == "--debug" => "debug",
        other => {
            return Err(crate::usage(format!(
                "unexpected arguments {other:?}; usage: cargo xtask probe [--debug]"
            )));
        }
    };
    probe_in_process()?;
    build_bins(profile)?;
    probe_bins(|bin, db| Server::spawn_command(bin_path(bin), db, &[]))?;
    probe_clawbrain(&bin_path("clawboo-mcp-memory"))
}

/// Probes the four servers and ClawBrain in process with [`clawboo_core::probe`]: one line each; an
/// error listing every mismatch. The tools server lists `web_search` too when this process has a
/// `TAVILY_API_KEY`.
pub fn probe_in_process() -> anyhow::Result<()> {
    use clawboo_core::{
        Db, Embeddings, ToolsOptions, clawbrain_server, memory_server, probe, tasks_server,
        teamchat_server, tools_server,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start a tokio runtime")?;
    let search_key = std::env::var("TAVILY_API_KEY").is_ok_and(|k| !k.trim().is_empty());
    let dir = TempDir::new("probe-in-process");
    let open = || Db::open(&dir.db_path()).context("cannot open the probe database");
    let servers = [
        (tasks_server(open()?, None), EXPECTED[0].2),
        (
            memory_server(open()?, &Embeddings::off(), None),
            EXPECTED[1].2,
        ),
        (
            tools_server(open()?, ToolsOptions::default()),
            EXPECTED[2].2 + usize::from(search_key),
        ),
        (teamchat_server(open()?, None), EXPECTED[3].2),
        (
            clawbrain_server(&dir.path().join("memory"), "probe")?,
            CLAWBRAIN_TOOLS.len(),
        ),
    ];
    let mut failures = Vec::new();
    println!(
        "{:<22} {:<18} {:>8} {:>6} {:>8}",
        "in process", "server", "version", "tools", "ms"
    );
    for (server, want) in servers {
        let name = server.name();
        let version = server.version();
        let started = Instant::now();
        let counted = runtime.block_on(probe(server));
        let elapsed = started.elapsed().as_secs_f64() * 1000.0;
        match counted {
            Ok(tools) => {
                println!(
                    "{:<22} {name:<18} {version:>8} {tools:>6} {elapsed:>8.1}",
                    "  clawboo_core::probe"
                );
                if tools != want {
                    failures.push(format!("in process {name}: {tools} tools, expected {want}"));
                }
            }
            Err(e) => failures.push(format!("in process {name}: {e}")),
        }
        if version != VERSION {
            failures.push(format!(
                "in process {name}: version {version:?}, expected {VERSION:?}"
            ));
        }
    }
    verdict(failures, "every server answered in process")
}

/// What one probe expects of a server: its name and the names of its tools (`None`: only the
/// count).
struct Expected<'a> {
    label: &'a str,
    name: &'a str,
    tools: usize,
    tool_names: Option<&'a [&'a str]>,
}

/// Initializes `server`, lists its tools and closes it: one table line; mismatches into
/// `failures`.
fn probe_one(mut server: Server, expected: &Expected<'_>, failures: &mut Vec<String>) {
    let label = expected.label;
    let started = Instant::now();
    let info = server.initialize();
    let tools = server.list_tools();
    let elapsed = started.elapsed();
    let status = server.close();
    let got_name = info["serverInfo"]["name"].as_str().unwrap_or("?");
    let version = info["serverInfo"]["version"].as_str().unwrap_or("?");
    println!(
        "{label:<22} {got_name:<18} {version:>8} {:>6} {:>8.1}",
        tools.len(),
        elapsed.as_secs_f64() * 1000.0
    );
    if got_name != expected.name {
        failures.push(format!(
            "{label}: server name {got_name:?}, expected {:?}",
            expected.name
        ));
    }
    if version != VERSION {
        failures.push(format!(
            "{label}: version {version:?}, expected {VERSION:?}"
        ));
    }
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    let names_differ = expected
        .tool_names
        .is_some_and(|want| want.iter().any(|t| !names.contains(t)));
    if tools.len() != expected.tools || names_differ {
        failures.push(format!(
            "{label}: tools {names:?}, expected {}",
            expected
                .tool_names
                .map_or(format!("{} tools", expected.tools), |want| format!(
                    "{want:?}"
                ))
        ));
    }
    if !status.success() {
        failures.push(format!("{label}: exited with {status} after stdin closed"));
    }
}

/// An error listing every mismatch, or `Ok` with `done` printed.
fn verdict(failures: Vec<String>, done: &str) -> anyhow::Result<()> {
    if !failures.is_empty() {
        bail!("probe failed:\n  {}", failures.join("\n  "));
    }
    println!("probe: {done}");
    Ok(())
}

/// Probes the four bins, each started by `launch(bin, database)`: one line each; an error listing
/// every mismatch.
pub fn probe_bins(launch: impl Fn(&str, &Path) -> Server) -> anyhow::Result<()> {
    let mut failures = Vec::new();
    println!(
        "{:<22} {:<18} {:>8} {:>6} {:>8}",
        "bin", "server", "version", "tools", "ms"
    );
    for (bin, name, tools) in EXPECTED {
        let dir = TempDir::new("probe");
        let expected = Expected {
            label: bin,
            name,
            tools,
            tool_names: None,
        };
        probe_one(launch(bin, &dir.db_path()), &expected, &mut failures);
    }
    verdict(
        failures,
        &format!("all {} servers answered", EXPECTED.len()),
    )
}

/// Probes `<memory_bin> clawbrain` on a fresh vault: one line; an error listing every mismatch.
pub fn probe_clawbrain(memory_bin: &Path) -> anyhow::Result<()> {
    let mut failures = Vec::new();
    let dir = TempDir::new("probe-clawbrain");
    let vault = dir.path().join("memory").display().to_string();
    let server = Server::spawn_program(
        memory_bin.to_path_buf(),
        &["clawbrain"],
        &dir.db_path(),
        &[("MEMORY_DIR", vault.as_str())],
    );
    let expected = Expected {
        label: "  … memory clawbrain",
        name: "clawbrain",
        tools: CLAWBRAIN_TOOLS.len(),
        tool_names: Some(&CLAWBRAIN_TOOLS),
    };
    probe_one(server, &expected, &mut failures);
    verdict(failures, "the memory bin's clawbrain mode answered")
}

#[cfg(test)]
mod tests {
    use super::shows_work;

    #[test]
    fn compiling_lines_show_work_and_a_fresh_build_does_not() {
        assert!(shows_work(
            "   Compiling clawboo-core v0.1.0 (/src/crates/clawboo-core)"
        ));
        assert!(shows_work(
            "\u{1b}[1m\u{1b}[32m   Compiling\u{1b}[0m serde v1.0.0"
        ));
        assert!(shows_work(
            "    Blocking waiting for file lock on build directory"
        ));
        assert!(!shows_work(
            "    Finished `release` profile [optimized] target(s) in 0.20s"
        ));
        assert!(!shows_work("warning: unused variable: `x`"));
    }
}
