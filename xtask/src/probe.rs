//! `cargo xtask probe`: the liveness check of the four servers, as a person would run it.
//!
//! Builds the bins (release unless `--debug`), then for each: spawns it over stdio on a fresh
//! temporary database, times `initialize` + `tools/list`, and checks the advertised name and tool
//! count. Prints one line per server; fails on any mismatch.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use clawboo_tests::{Server, TempDir, VERSION, bin_path, workspace_root};

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
        if version != VERSION {
            failures.push(format!("{bin}: version {version:?}, expected {VERSION:?}"));
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
    if !failures.is_empty() {
        bail!("probe failed:\n  {}", failures.join("\n  "));
    }
    println!("probe: all {} servers answered", EXPECTED.len());
    Ok(())
}
