//! `cargo xtask probe`: the liveness check of the four servers, as a person would run it.
//!
//! Builds the bins (release unless `--debug`), then for each: spawns it over stdio on a fresh
//! temporary database, times `initialize` + `tools/list`, and checks the advertised name and tool
//! count; then the memory bin's `clawbrain` mode on a temporary vault (server `clawbrain`, the 7
//! tools of seed 002 plus `memory_feedback`). Prints one line per server; fails on any mismatch.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use clawboo_tests::{Server, TempDir, bin_path, workspace_root};

/// Each bin, the `serverInfo.name` it must report, and its tool count (tools without
/// `TAVILY_API_KEY`).
pub const EXPECTED: [(&str, &str, usize); 4] = [
    ("clawboo-mcp-tasks", "clawboo-tasks", 12),
    ("clawboo-mcp-memory", "clawboo-memory", 3),
    ("clawboo-mcp-tools", "clawboo-tools", 3),
    ("clawboo-mcp-teamchat", "clawboo-teamchat", 2),
];

/// Builds the four bins with `profile` (`debug` or `release`).
pub fn build_bins(profile: &str) -> anyhow::Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace_root()).args(["build", "--quiet"]);
    if profile == "release" {
        cmd.arg("--release");
    }
    for (bin, _, _) in EXPECTED {
        cmd.args(["--bin", bin]);
    }
    let status = cmd.status().context("cannot run cargo build")?;
    if !status.success() {
        bail!("cargo build of the server bins failed");
    }
    // SAFETY of set_var: xtask is single-threaded at this point.
    unsafe {
        std::env::set_var("CLAWBOO_TEST_PROFILE", profile);
        std::env::set_var("CLAWBOO_BINS_BUILT", "1");
    }
    Ok(())
}

/// `cargo xtask probe [--debug]`.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let profile = if args.iter().any(|a| a == "--debug") {
        "debug"
    } else {
        "release"
    };
    build_bins(profile)?;
    probe_bins(bin_path)
}

/// Probes the four bins found by `locate`: one line each; an error listing every mismatch.
pub fn probe_bins(locate: impl Fn(&str) -> PathBuf) -> anyhow::Result<()> {
    let mut failures = Vec::new();
    println!(
        "{:<22} {:<18} {:>8} {:>6} {:>8}",
        "bin", "server", "version", "tools", "ms"
    );
    for (bin, name, expected_tools) in EXPECTED {
        let dir = TempDir::new("probe");
        let started = Instant::now();
        let mut server = Server::spawn_command(locate(bin), &dir.db_path(), &[]);
        let info = server.initialize();
        let tools = server.list_tools();
        let elapsed = started.elapsed();
        let status = server.close();
        let got_name = info["serverInfo"]["name"].as_str().unwrap_or("?");
        let version = info["serverInfo"]["version"].as_str().unwrap_or("?");
        println!(
            "{bin:<22} {got_name:<18} {version:>8} {:>6} {:>8.1}",
            tools.len(),
            elapsed.as_secs_f64() * 1000.0
        );
        if got_name != name {
            failures.push(format!(
                "{bin}: server name {got_name:?}, expected {name:?}"
            ));
        }
        if version != "0.1.0" {
            failures.push(format!("{bin}: version {version:?}, expected \"0.1.0\""));
        }
        if tools.len() != expected_tools {
            failures.push(format!(
                "{bin}: {} tools, expected {expected_tools}",
                tools.len()
            ));
        }
        if !status.success() {
            failures.push(format!("{bin}: exited with {status} after stdin closed"));
        }
    }
    probe_clawbrain(&locate, &mut failures);
    if !failures.is_empty() {
        bail!("probe failed:\n  {}", failures.join("\n  "));
    }
    println!(
        "probe: all {} servers and the clawbrain mode answered",
        EXPECTED.len()
    );
    Ok(())
}

/// The seed-002 tools plus `memory_feedback`, served by `clawboo-mcp-memory clawbrain`.
const CLAWBRAIN_TOOLS: [&str; 8] = [
    "memory_store",
    "memory_retrieve",
    "memory_search",
    "memory_update",
    "memory_delete",
    "credit_report",
    "memory_compact",
    "memory_feedback",
];

/// Probes `clawboo-mcp-memory clawbrain` on a fresh vault; one line, mismatches into `failures`.
fn probe_clawbrain(locate: &impl Fn(&str) -> PathBuf, failures: &mut Vec<String>) {
    let dir = TempDir::new("probe-clawbrain");
    let vault = dir.path().join("memory").display().to_string();
    let started = Instant::now();
    let mut server = Server::spawn_program(
        locate("clawboo-mcp-memory"),
        &["clawbrain"],
        &dir.db_path(),
        &[("MEMORY_DIR", vault.as_str())],
    );
    let info = server.initialize();
    let tools = server.list_tools();
    let elapsed = started.elapsed();
    let status = server.close();
    let got_name = info["serverInfo"]["name"].as_str().unwrap_or("?");
    let version = info["serverInfo"]["version"].as_str().unwrap_or("?");
    println!(
        "{:<22} {got_name:<18} {version:>8} {:>6} {:>8.1}",
        "  … memory clawbrain",
        tools.len(),
        elapsed.as_secs_f64() * 1000.0
    );
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    if got_name != "clawbrain" || version != "0.1.0" {
        failures.push(format!(
            "clawbrain mode: server {got_name:?} {version:?}, expected \"clawbrain\" \"0.1.0\""
        ));
    }
    if names.len() != CLAWBRAIN_TOOLS.len() || CLAWBRAIN_TOOLS.iter().any(|t| !names.contains(t)) {
        failures.push(format!(
            "clawbrain mode: tools {names:?}, expected {CLAWBRAIN_TOOLS:?}"
        ));
    }
    if !status.success() {
        failures.push(format!(
            "clawbrain mode: exited with {status} after stdin closed"
        ));
    }
}
