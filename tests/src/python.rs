//! The official MCP Python SDK (`mcp` on PyPI) in a virtualenv under `target/`, so a test can
//! check what a real third-party client makes of the servers (its session teardown, its checks of
//! `structuredContent` against `outputSchema`, its stateless mode).
//!
//! Owns: the one pinned SDK version and its virtualenv (`target/python-sdk`, made with the
//! machine's `python3 -m venv`, filled by `pip` from PyPI once and reused after). Guarantees: the
//! only reason a caller is told to skip is that PyPI could not be reached; any other failure
//! (no `python3`, a failed build) panics, naming it.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

use crate::target_dir;

/// The SDK the tests run: the version whose session teardown reports `202` as a failure.
pub const SDK_REQUIREMENT: &str = "mcp==2.3.0";

/// What pip prints when the index cannot be reached at all.
const UNREACHABLE: [&str; 6] = [
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "Name or service not known",
    "Connection refused",
    "No matching distribution found",
];

/// The virtualenv's `python` with [`SDK_REQUIREMENT`] installed, installing it on first use; `Err`
/// says why PyPI could not be reached (the caller skips, printing it). Panics on anything else.
pub fn python_with_sdk() -> Result<PathBuf, String> {
    static READY: OnceLock<Mutex<Option<Result<PathBuf, String>>>> = OnceLock::new();
    let mut ready = READY
        .get_or_init(|| Mutex::new(None))
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    ready.get_or_insert_with(install).clone()
}

fn install() -> Result<PathBuf, String> {
    let venv = target_dir().join("python-sdk");
    let python = venv.join("bin").join("python");
    let version = SDK_REQUIREMENT.trim_start_matches("mcp==");
    let installed = || {
        run(Command::new(&python).args([
            "-c",
            &format!("import importlib.metadata as m, mcp; assert m.version('mcp') == '{version}'"),
        ]))
        .status
        .success()
    };
    if python.exists() && installed() {
        return Ok(python);
    }
    let made = run(Command::new("python3")
        .args(["-m", "venv", "--clear"])
        .arg(&venv));
    assert!(
        made.status.success(),
        "python3 -m venv failed (install python3 and python3-venv): {}",
        String::from_utf8_lossy(&made.stderr)
    );
    let pip = run(Command::new(venv.join("bin").join("pip")).args([
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--retries",
        "1",
        "--timeout",
        "20",
        SDK_REQUIREMENT,
    ]));
    if !pip.status.success() {
        let stderr = String::from_utf8_lossy(&pip.stderr).into_owned();
        if UNREACHABLE.iter().any(|sign| stderr.contains(sign)) {
            return Err(format!(
                "PyPI cannot be reached to install {SDK_REQUIREMENT}: {stderr}"
            ));
        }
        panic!("pip install {SDK_REQUIREMENT} failed: {stderr}");
    }
    assert!(
        installed(),
        "{SDK_REQUIREMENT} installed but cannot be imported"
    );
    Ok(python)
}

fn run(command: &mut Command) -> Output {
    command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"))
}
