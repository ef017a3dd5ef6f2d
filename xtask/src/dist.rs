//! `cargo xtask dist [--check]`: the release archive.
//!
//! Builds the four bins with the release profile (LTO, one codegen unit, stripped), stages them with
//! README.md, LICENSE and a SHA256SUMS file, and packs
//! `dist/clawboo-mcp-<version>-<target>.tar.gz`. `--check` then unpacks the archive into a temporary
//! folder, verifies the checksums and probes the unpacked bins.
//!
//! Uses the system's `tar` and `sha256sum` (or `shasum -a 256`), which every Linux and macOS
//! machine has, rather than pulling archive and hash crates into the build.
//! Must never: leave a half-written archive under the final name (it is written beside it first).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use clawboo_tests::{TempDir, target_dir, workspace_root};

use crate::probe::{self, EXPECTED};

/// `cargo xtask dist [--check]`.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let check = match args {
        [] => false,
        [flag] if flag == "--check" => true,
        other => bail!("unexpected arguments {other:?}; usage: cargo xtask dist [--check]"),
    };
    probe::build_bins("release")?;
    let archive = pack()?;
    if check {
        check_archive(&archive)?;
    }
    Ok(())
}

/// The target triple of the host toolchain.
fn host_target() -> anyhow::Result<String> {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .context("cannot run rustc -vV")?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .context("rustc -vV printed no host line")
}

fn pack() -> anyhow::Result<PathBuf> {
    let name = format!(
        "clawboo-mcp-{}-{}",
        env!("CARGO_PKG_VERSION"),
        host_target()?
    );
    let dist = workspace_root().join("dist");
    let stage = dist.join(&name);
    if stage.exists() {
        fs::remove_dir_all(&stage).with_context(|| format!("cannot clear {}", stage.display()))?;
    }
    fs::create_dir_all(&stage).with_context(|| format!("cannot create {}", stage.display()))?;
    println!("{:<24} {:>12}", "bin", "bytes");
    for (bin, _, _) in EXPECTED {
        let built = target_dir().join("release").join(bin);
        let staged = stage.join(bin);
        fs::copy(&built, &staged).with_context(|| format!("cannot copy {}", built.display()))?;
        let size = fs::metadata(&staged)?.len();
        println!("{bin:<24} {size:>12}");
    }
    for doc in ["README.md", "LICENSE"] {
        fs::copy(workspace_root().join(doc), stage.join(doc))
            .with_context(|| format!("cannot copy {doc}"))?;
    }
    let mut files: Vec<&str> = EXPECTED.iter().map(|(bin, _, _)| *bin).collect();
    files.extend(["README.md", "LICENSE"]);
    let sums = sha256_lines(&stage, &files)?;
    fs::write(stage.join("SHA256SUMS"), sums)?;

    let archive = dist.join(format!("{name}.tar.gz"));
    let partial = dist.join(format!("{name}.tar.gz.partial"));
    let status = Command::new("tar")
        .current_dir(&dist)
        .args(["-czf"])
        .arg(&partial)
        .arg(&name)
        .status()
        .context("cannot run tar")?;
    if !status.success() {
        bail!("tar failed with {status}");
    }
    fs::rename(&partial, &archive)?;
    println!(
        "{} ({} bytes)",
        archive
            .strip_prefix(workspace_root())
            .unwrap_or(&archive)
            .display(),
        fs::metadata(&archive)?.len()
    );
    Ok(archive)
}

/// `sha256sum`-format lines for `files` in `dir`.
fn sha256_lines(dir: &Path, files: &[&str]) -> anyhow::Result<String> {
    let attempts: [(&str, &[&str]); 2] = [("sha256sum", &[]), ("shasum", &["-a", "256"])];
    for (program, args) in attempts {
        let Ok(out) = Command::new(program)
            .current_dir(dir)
            .args(args)
            .args(files)
            .output()
        else {
            continue;
        };
        if out.status.success() {
            return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
        }
    }
    bail!("neither sha256sum nor shasum could hash the files")
}

fn check_archive(archive: &Path) -> anyhow::Result<()> {
    let unpacked = TempDir::new("dist-check");
    let status = Command::new("tar")
        .arg("-xzf")
        .arg(archive)
        .arg("-C")
        .arg(unpacked.path())
        .status()
        .context("cannot run tar")?;
    if !status.success() {
        bail!("tar could not unpack {}", archive.display());
    }
    let root = fs::read_dir(unpacked.path())?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.is_dir())
        .context("the archive holds no folder")?;
    let recorded = fs::read_to_string(root.join("SHA256SUMS")).context("no SHA256SUMS")?;
    let files: Vec<&str> = recorded
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    if files.len() != EXPECTED.len() + 2 {
        bail!(
            "SHA256SUMS lists {} files, expected {}",
            files.len(),
            EXPECTED.len() + 2
        );
    }
    if sha256_lines(&root, &files)? != recorded {
        bail!("the unpacked files do not match SHA256SUMS");
    }
    println!("checksums match; probing the unpacked bins");
    probe::probe_bins(|bin| root.join(bin))
}
