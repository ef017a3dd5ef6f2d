//! `cargo xtask probe`: the liveness check of every server, as a person would run it.
//!
//! Every row comes from the registry of servers (`clawboo_core::internal::registry`): first, in
//! process, each server is built through the registry on a fresh temporary database (and vault)
//! and checked with the library's own [`clawboo_core::probe`] (an in-memory MCP client:
//! `initialize` + `tools/list`, both ends closed), so the path an embedding program takes is
//! checked before any bin is built. Then it builds the bins (release unless `--debug`) and, for
//! each server, spawns its bin with the arguments that select it (`clawboo-mcp-memory clawbrain`
//! for ClawBrain, on a temporary vault) over stdio on a fresh temporary database, times
//! `initialize` + `tools/list`, and checks the advertised name and tool names against the
//! registry. Prints one line per server; fails on any mismatch.
//!
//! The build shows cargo's own progress (its `Compiling …` lines, on stderr) as soon as cargo has
//! anything to build, because a first release build takes minutes; when everything is fresh it
//! prints nothing, so a second run shows only the table.

use std::io::{BufRead, BufReader, IsTerminal};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

use anyhow::{Context as _, bail};
use clawboo_core::internal::registry::{self, Entry, Store};
use clawboo_core::{Binding, Scope};
use clawboo_tests::{Server, TempDir, VERSION, bin_path, cargo_command};

/// The server bins, from the registry.
pub fn bins() -> Vec<&'static str> {
    registry::bins()
}

/// The tools `entry` must list in this process's environment: its own, and each optional one
/// whose enabling variable is set.
fn expected_tools(entry: &Entry) -> Vec<&'static str> {
    let mut tools = entry.tools.to_vec();
    for (tool, enabled_by) in entry.optional_tools {
        if std::env::var(enabled_by).is_ok_and(|v| !v.trim().is_empty()) {
            tools.push(tool);
        }
    }
    tools
}

/// Builds the bins with `profile` (`debug` or `release`).
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

/// `cargo build <args>` of the bins with the extra environment `env`. Cargo's stderr is held
/// back until it shows work (a crate compiling, the index updating, a lock being waited for), then
/// passed through line by line; a build with nothing to do prints nothing. A failed build prints
/// everything cargo said.
pub fn cargo_build(args: &[&str], env: &[(&str, &str)]) -> anyhow::Result<()> {
    let mut cmd = cargo_command();
    cmd.arg("build").args(args);
    if std::io::stderr().is_terminal() {
        cmd.arg("--color=always");
    }
    for bin in bins() {
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
pub fn run(debug: bool) -> anyhow::Result<()> {
    let profile = if debug { "debug" } else { "release" };
    probe_in_process()?;
    build_bins(profile)?;
    probe_bins(|launch| {
        Server::spawn_program(bin_path(launch.bin), launch.args, launch.db, &launch.env())
    })
}

/// Probes every registered server in process with [`clawboo_core::probe`], each built through the
/// registry: one line each; an error listing every mismatch.
pub fn probe_in_process() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start a tokio runtime")?;
    let dir = TempDir::new("probe-in-process");
    let context = registry::Context::over_file(dir.db_path())
        .with_vault(Some(dir.path().join("memory")))
        .with_session("probe".into());
    let mut failures = Vec::new();
    println!(
        "{:<30} {:<18} {:>8} {:>6} {:>8}",
        "in process", "server", "version", "tools", "ms"
    );
    for entry in registry::entries() {
        let unbound = Binding::from_scope(entry.kind, &Scope::default());
        let server = match registry::build(entry.kind, &context, &unbound) {
            Ok(server) => server,
            Err(e) => {
                failures.push(format!("in process {}: {e}", entry.kind));
                continue;
            }
        };
        let name = server.name();
        let version = server.version();
        let listed = server.tool_names();
        let want = expected_tools(entry);
        let started = Instant::now();
        let counted = runtime.block_on(clawboo_core::probe(server));
        let elapsed = started.elapsed().as_secs_f64() * 1000.0;
        match counted {
            Ok(tools) => {
                println!(
                    "{:<30} {name:<18} {version:>8} {tools:>6} {elapsed:>8.1}",
                    "  clawboo_core::probe"
                );
                if tools != want.len() || !same_names(&listed, &want) {
                    failures.push(format!(
                        "in process {name}: tools {listed:?}, expected {want:?}"
                    ));
                }
            }
            Err(e) => failures.push(format!("in process {name}: {e}")),
        }
        if name != entry.server_name {
            failures.push(format!(
                "in process {}: server name {name:?}, expected {:?}",
                entry.kind, entry.server_name
            ));
        }
        if version != VERSION {
            failures.push(format!(
                "in process {name}: version {version:?}, expected {VERSION:?}"
            ));
        }
    }
    verdict(failures, "every server answered in process")
}

/// Whether `listed` holds exactly the names in `want` (in any order: optional tools sit among the
/// others).
fn same_names(listed: &[&str], want: &[&str]) -> bool {
    listed.len() == want.len() && want.iter().all(|t| listed.contains(t))
}

/// Initializes `server`, lists its tools and closes it: one table line; mismatches into
/// `failures`.
fn probe_one(mut server: Server, label: &str, entry: &Entry, failures: &mut Vec<String>) {
    let started = Instant::now();
    let info = server.initialize();
    let tools = server.list_tools();
    let elapsed = started.elapsed();
    let status = server.close();
    let got_name = info["serverInfo"]["name"].as_str().unwrap_or("?");
    let version = info["serverInfo"]["version"].as_str().unwrap_or("?");
    println!(
        "{label:<30} {got_name:<18} {version:>8} {:>6} {:>8.1}",
        tools.len(),
        elapsed.as_secs_f64() * 1000.0
    );
    if got_name != entry.server_name {
        failures.push(format!(
            "{label}: server name {got_name:?}, expected {:?}",
            entry.server_name
        ));
    }
    if version != VERSION {
        failures.push(format!(
            "{label}: version {version:?}, expected {VERSION:?}"
        ));
    }
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    let want = expected_tools(entry);
    if !same_names(&names, &want) {
        failures.push(format!("{label}: tools {names:?}, expected {want:?}"));
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

/// How to start one server's bin over stdio.
pub struct Launch<'a> {
    /// The bin.
    pub bin: &'a str,
    /// The arguments that select the server on it (`clawbrain`).
    pub args: &'a [&'a str],
    /// A fresh database file.
    pub db: &'a Path,
    /// A fresh vault, for a server that keeps one.
    pub vault: Option<PathBuf>,
}

impl Launch<'_> {
    /// The environment the server needs beyond the database: its vault.
    pub fn env(&self) -> Vec<(&str, &str)> {
        self.vault
            .iter()
            .filter_map(|v| v.to_str())
            .map(|v| ("MEMORY_DIR", v))
            .collect()
    }
}

/// Probes every registered server, each bin started by `launch`: one line each; an error listing
/// every mismatch.
pub fn probe_bins(launch: impl Fn(&Launch<'_>) -> Server) -> anyhow::Result<()> {
    let mut failures = Vec::new();
    println!(
        "{:<30} {:<18} {:>8} {:>6} {:>8}",
        "bin", "server", "version", "tools", "ms"
    );
    let mut count = 0;
    for entry in registry::entries() {
        let dir = TempDir::new("probe");
        let db = dir.db_path();
        let vault = matches!(entry.store, Store::Vault).then(|| dir.path().join("memory"));
        let args = entry.mode_args();
        let label = [entry.bin]
            .iter()
            .chain(args)
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        let server = launch(&Launch {
            bin: entry.bin,
            args,
            db: &db,
            vault,
        });
        probe_one(server, &label, entry, &mut failures);
        count += 1;
    }
    verdict(failures, &format!("all {count} servers answered"))
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
