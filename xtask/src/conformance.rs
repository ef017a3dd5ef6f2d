//! `cargo xtask conformance`: the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, its default server suite) against each of the five HTTP
//! mounts of `serve --all --vault DIR` (ClawBrain on an empty temporary vault), with the scenarios
//! that cannot apply listed, each with its reason, in `tests/conformance/expected-failures.toml`.
//!
//! Installs a pinned Node (the npm package `node`, so the machine's own Node version does not
//! matter) and the pinned suite into `target/conformance` with the machine's `npm` (once; again
//! only when a pin changes), starts the debug bins' host on a free loopback port over a temporary
//! database (rate limit off), and runs the suite once per mount with that mount's expected
//! failures as the suite's own baseline file. The suite's verdict is kept: a run fails on a
//! scenario that fails and is not expected, and on an expected one that now passes. A scenario
//! named in the file that the suite does not have is refused before anything runs, so a typo
//! cannot hide as "expected".

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use clawboo_tests::http::Host;
use clawboo_tests::{TempDir, target_dir, workspace_root};

/// The suite, pinned: a new release may add scenarios, which should be a change of this pin.
const SUITE: (&str, &str) = ("@modelcontextprotocol/conformance", "0.1.16");

/// Node, pinned (the suite needs 22 or later).
const NODE: (&str, &str) = ("node", "22.23.3");

/// The mounts of `serve --all --vault DIR`.
const MOUNTS: [&str; 5] = ["tasks", "memory", "tools", "teamchat", "clawbrain"];

/// The expected failures, relative to the workspace.
const EXPECTED: &str = "tests/conformance/expected-failures.toml";

/// The table of the expected-failures file that applies to every mount.
const EVERY_MOUNT: &str = "every-mount";

/// Runs the suite against the five mounts; fails on any result the file does not expect.
pub fn run() -> anyhow::Result<()> {
    let expected = load_expected(&workspace_root().join(EXPECTED))?;
    let dir = target_dir().join("conformance");
    let (node, suite) = install(&dir)?;
    let known = scenarios(&node, &suite)?;
    for (table, scenarios) in &expected {
        for name in scenarios.keys() {
            if !known.contains(name) {
                bail!("{EXPECTED}: [{table}] names {name:?}, which the suite does not have");
            }
        }
    }
    let db = TempDir::new("conformance");
    let vault = db.path().join("vault");
    let vault = vault.to_string_lossy();
    // The suite checks the protocol, not the per-token rate limiter: its five runs against one
    // host come from one anonymous caller, a burst the default limit refuses (429) on a fast run.
    let host = Host::start(
        "clawboo-mcp-tasks",
        &["--all", "--vault", &vault, "--rate-limit", "0"],
        &db.db_path(),
        &[],
    );
    let mut unexpected = Vec::new();
    for mount in MOUNTS {
        let baseline = dir.join(format!("{mount}-expected-failures.yml"));
        std::fs::write(&baseline, baseline_yaml(&expected, mount))
            .with_context(|| format!("cannot write {}", baseline.display()))?;
        let url = format!("http://{}/api/mcp/{mount}", host.addr);
        println!("conformance: {url}");
        let out = Command::new(&node)
            .arg(&suite)
            .args(["server", "--url", &url, "--expected-failures"])
            .arg(&baseline)
            .arg("--output-dir")
            .arg(dir.join("results").join(mount))
            .output()
            .context("cannot run the conformance suite")?;
        // From the suite's totals on: its verdict, without the list of expected failures.
        let stdout = String::from_utf8_lossy(&out.stdout);
        let verdict = stdout
            .find("Total: ")
            .map_or(stdout.as_ref(), |at| &stdout[at..]);
        for line in verdict
            .lines()
            .filter(|l| !l.starts_with("  ~ ") && !l.is_empty())
        {
            println!("  {line}");
        }
        if !out.status.success() {
            eprintln!("{}", String::from_utf8_lossy(&out.stderr).trim());
            unexpected.push(mount);
        }
    }
    if !unexpected.is_empty() {
        bail!(
            "conformance: results {EXPECTED} does not expect on {} (see above)",
            unexpected.join(", ")
        );
    }
    println!("conformance: every mount failed only the scenarios {EXPECTED} expects");
    Ok(())
}

/// The file's tables: `every-mount` and one per mount, each scenario with its reason.
type Expected = BTreeMap<String, BTreeMap<String, String>>;

fn load_expected(path: &Path) -> anyhow::Result<Expected> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let expected: Expected =
        toml::from_str(&text).with_context(|| format!("{EXPECTED} is not a table of tables"))?;
    for (table, scenarios) in &expected {
        if table != EVERY_MOUNT && !MOUNTS.contains(&table.as_str()) {
            bail!("{EXPECTED}: [{table}] is neither [{EVERY_MOUNT}] nor a mount ({MOUNTS:?})");
        }
        if let Some((name, _)) = scenarios.iter().find(|(_, why)| why.trim().is_empty()) {
            bail!("{EXPECTED}: [{table}] {name} gives no reason");
        }
    }
    Ok(expected)
}

/// The suite's baseline file for `mount`: the `every-mount` scenarios and the mount's own.
fn baseline_yaml(expected: &Expected, mount: &str) -> String {
    let mut yaml = String::from("server:\n");
    for table in [EVERY_MOUNT, mount] {
        for name in expected.get(table).into_iter().flat_map(BTreeMap::keys) {
            let _ = writeln!(yaml, "  - {name}");
        }
    }
    yaml
}

/// The version of the npm package installed under `modules`, if any.
fn installed_version(modules: &Path, package: &str) -> Option<String> {
    let manifest = std::fs::read_to_string(modules.join(package).join("package.json")).ok()?;
    let manifest: serde_json::Value = serde_json::from_str(&manifest).ok()?;
    manifest["version"].as_str().map(str::to_owned)
}

/// Node and the suite's entry point, installed into `dir` with `npm` if the pins are not there.
fn install(dir: &Path) -> anyhow::Result<(PathBuf, PathBuf)> {
    let modules = dir.join("node_modules");
    let pinned = [NODE, SUITE]
        .iter()
        .all(|(package, version)| installed_version(&modules, package).as_deref() == Some(version));
    if !pinned {
        std::fs::create_dir_all(dir)?;
        let packages: Vec<String> = [NODE, SUITE]
            .iter()
            .map(|(package, version)| format!("{package}@{version}"))
            .collect();
        println!("conformance: npm install {}", packages.join(" "));
        let status = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(dir)
            .args(&packages)
            .status()
            .context("cannot run npm (install Node.js and npm, e.g. Debian's `npm` package)")?;
        if !status.success() {
            bail!("npm install {} failed", packages.join(" "));
        }
    }
    let node = modules.join("node").join("bin").join("node");
    let suite = modules.join(SUITE.0).join("dist").join("index.js");
    for path in [&node, &suite] {
        if !path.exists() {
            bail!("{} is missing after npm install", path.display());
        }
    }
    Ok((node, suite))
}

/// The names of the suite's server scenarios (`conformance list --server`).
fn scenarios(node: &Path, suite: &Path) -> anyhow::Result<Vec<String>> {
    let out = Command::new(node)
        .arg(suite)
        .args(["list", "--server"])
        .output()
        .context("cannot list the suite's scenarios")?;
    if !out.status.success() {
        bail!(
            "conformance list failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.trim().strip_prefix("- "))
        .filter_map(|rest| rest.split_whitespace().next())
        .map(str::to_owned)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repository_file_reads_and_gives_every_mount_its_baseline() {
        let expected = load_expected(&workspace_root().join(EXPECTED)).unwrap();
        let yaml = baseline_yaml(&expected, "memory");
        assert!(yaml.starts_with("server:\n  - "), "{yaml}");
        assert!(yaml.contains("  - resources-list\n"), "{yaml}");
    }

    #[test]
    fn a_table_that_names_no_mount_or_a_scenario_without_reason_is_refused() {
        let dir = TempDir::new("conformance-file");
        let path = dir.path().join("expected.toml");
        for (text, why) in [
            ("[tsks]\nping = \"x\"\n", "neither"),
            ("[tasks]\nping = \" \"\n", "gives no reason"),
            ("ping = \"x\"\n", "not a table of tables"),
        ] {
            std::fs::write(&path, text).unwrap();
            let err = format!("{:#}", load_expected(&path).unwrap_err());
            assert!(err.contains(why), "{text}: {err}");
        }
    }
}
