//! A real client's rows of `cargo xtask bench` (issue 25): `get_task` round trips driven by the
//! official MCP Python SDK (the pinned version in the virtualenv of `clawboo_tests::python`), over
//! stdio (`clawboo-mcp-tasks` spawned by the SDK) and over Streamable HTTP (the host of
//! [`super::http`], one session), beside the lean clients' rows, so the table shows what a user's
//! client sees. The SDK's own costs are in the figure (its asyncio loop, its pydantic models, its
//! check of `structuredContent` against the tool's `outputSchema`); the clock runs inside the
//! script, around the calls only (not Python's start-up, the handshake or the task's creation).
//!
//! When `python3` or its `venv` module is missing, or PyPI cannot be reached to fill the
//! virtualenv, the rows are `n/a` and the reason is printed.
//!
//! Owns: those rows and the script. Must never: reach beyond loopback.

use std::io::Write;
use std::process::{Command, Stdio};

use anyhow::{Context, bail};
use clawboo_tests::python::python_with_sdk;
use clawboo_tests::{TempDir, bin_path};
use serde_json::{Value, json};

use super::http::start_tasks_host;

/// The script: reads `{target, env?, calls}` on stdin, creates a task, calls `get_task` on it once
/// to warm up, then `calls` times under the clock; prints `{"rate": calls per second}`.
const SCRIPT: &str = r#"
import asyncio, json, sys, time
from mcp import Client, StdioServerParameters

async def main():
    case = json.load(sys.stdin)
    target = case["target"]
    if "env" in case:
        target = StdioServerParameters(command=target, args=[], env=case["env"])
    async with Client(target, mode="legacy") as client:
        made = await client.call_tool("create_task", {"title": "bench"})
        args = {"taskId": made.structured_content["id"]}
        await client.call_tool("get_task", args)
        started = time.perf_counter()
        for _ in range(case["calls"]):
            result = await client.call_tool("get_task", args)
            if result.is_error:
                sys.exit(f"get_task failed: {result.content[0].text}")
        elapsed = time.perf_counter() - started
    print(json.dumps({"rate": case["calls"] / elapsed}))

asyncio.run(main())
"#;

/// The rows: `(name, unit, calls per second)`; `None` when the SDK cannot run here.
pub fn rows(calls: usize) -> anyhow::Result<Vec<(String, &'static str, Option<f64>)>> {
    let names = [
        format!("get_task round trips, Python SDK {}, stdio", sdk_version()),
        format!(
            "get_task round trips, Python SDK {}, one HTTP session",
            sdk_version()
        ),
    ];
    let python = match usable_python() {
        Ok(python) => python,
        Err(why) => {
            eprintln!("  SKIPPED the Python SDK rows: {why}");
            return Ok(names.into_iter().map(|n| (n, "calls/s", None)).collect());
        }
    };
    let dir = TempDir::new("bench-sdk");
    let script = dir.path().join("bench_client.py");
    std::fs::write(&script, SCRIPT)?;

    let stdio_dir = TempDir::new("bench-sdk-stdio");
    let stdio = json!({
        "target": bin_path("clawboo-mcp-tasks"),
        "env": {
            "CLAWBOO_DB_PATH": stdio_dir.db_path(),
            "OLLAMA_HOST": "http://127.0.0.1:9",
        },
        "calls": calls,
    });
    let stdio_rate = run_script(&python, &script, &stdio).context("over stdio")?;

    let http_dir = TempDir::new("bench-sdk-http");
    let host = start_tasks_host(&http_dir);
    let http = json!({
        "target": format!("http://{}/api/mcp/tasks", host.addr),
        "calls": calls,
    });
    let http_rate = run_script(&python, &script, &http).context("over HTTP")?;

    let [stdio_name, http_name] = names;
    Ok(vec![
        (stdio_name, "calls/s", Some(stdio_rate)),
        (http_name, "calls/s", Some(http_rate)),
    ])
}

/// The pinned SDK's version, as rows name it.
fn sdk_version() -> &'static str {
    clawboo_tests::python::SDK_REQUIREMENT.trim_start_matches("mcp==")
}

/// The virtualenv's `python`, or why the SDK cannot run here (no `python3`, no `venv` module, no
/// PyPI).
fn usable_python() -> Result<std::path::PathBuf, String> {
    let venv = Command::new("python3")
        .args(["-m", "venv", "--help"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match venv {
        Ok(status) if status.success() => python_with_sdk(),
        Ok(_) => Err("python3 has no venv module (install python3-venv)".into()),
        Err(e) => Err(format!("python3 cannot be run: {e}")),
    }
}

/// Runs the script on `case`; the rate it printed.
fn run_script(
    python: &std::path::Path,
    script: &std::path::Path,
    case: &Value,
) -> anyhow::Result<f64> {
    let mut child = Command::new(python)
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start the Python client")?;
    child
        .stdin
        .take()
        .context("stdin is piped")?
        .write_all(case.to_string().as_bytes())?;
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!(
            "the Python client failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let printed: Value = serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "the Python client printed {:?}",
            String::from_utf8_lossy(&out.stdout)
        )
    })?;
    printed["rate"]
        .as_f64()
        .with_context(|| format!("no rate in {printed}"))
}
