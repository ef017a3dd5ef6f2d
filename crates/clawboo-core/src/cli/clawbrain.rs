//! The memory bin's ClawBrain mode: `clawboo-mcp-memory clawbrain` serves ClawBrain over stdio on
//! the vault named by `MEMORY_DIR` (default `<cwd>/memory`); `clawbrain <command>` runs one of the
//! commands for scripts and hooks (`feedback`, `decay`, `compact`, `digest`), each printing the
//! same JSON the matching tool returns.
//!
//! Exit codes: 0 done, 1 failed, 2 usage; errors in the bins' one style ([`super::fail`]). Must
//! never: print anything but the JSON result to stdout.

use std::process::ExitCode;

use serde::Serialize;

use super::{BinInfo, EXIT_FAILURE, EXIT_USAGE, fail, serve};
use crate::clawbrain::{Brain, BrainError, Signal, root_from_env, session_from_env};
use crate::servers;

/// The `--help` lines of the ClawBrain mode for `bin`.
pub fn usage(bin: &str) -> String {
    let signals = Signal::ALL.map(Signal::as_str).join("|");
    format!(
        "    {bin} clawbrain    serve ClawBrain (the credit-weighted vault in MEMORY_DIR) over stdio\n    \
         {bin} clawbrain feedback {signals} [--session ID]\n        \
         report an outcome for the session's newest retrieval (SESSION_ID, default local-session)\n    \
         {bin} clawbrain decay [--days N]\n        \
         decay scores by days since last access (or by N days for every memory)\n    \
         {bin} clawbrain compact    consolidate, promote and prune now\n    \
         {bin} clawbrain digest     regenerate MEMORY.md\n"
    )
}

/// `clawbrain [command…]` in `args` (the bin's arguments): serves ClawBrain or runs the command and
/// returns its exit code; `None` when the first argument is not `clawbrain`.
pub fn mode(info: &BinInfo, args: &[String]) -> Option<ExitCode> {
    let rest = args.strip_prefix(&["clawbrain".to_owned()])?;
    if !rest.is_empty() {
        return Some(dispatch(info.bin, rest));
    }
    Some(match Brain::open(&root_from_env(), &session_from_env()) {
        Ok(brain) => serve(info, servers::clawbrain::build(brain)),
        Err(e) => fail(info.bin, false, EXIT_FAILURE, &format!("clawbrain: {e}")),
    })
}

fn print_json(value: &impl Serialize) -> ExitCode {
    match serde_json::to_string_pretty(value) {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("cannot print the result: {e}");
            ExitCode::FAILURE
        }
    }
}

enum Command {
    Feedback(Signal, Option<String>),
    Decay(Option<f64>),
    Compact,
    Digest,
}

fn parse(args: &[String]) -> Result<Command, String> {
    let flag = |name: &str| -> Result<Option<String>, String> {
        match args.iter().position(|a| a == name) {
            None => Ok(None),
            Some(i) => args
                .get(i + 1)
                .filter(|v| !v.starts_with("--"))
                .cloned()
                .map(Some)
                .ok_or_else(|| format!("{name} needs a value")),
        }
    };
    match args.first().map(String::as_str) {
        Some("feedback") => {
            let signal = args.get(1).ok_or("feedback needs a signal")?;
            let signal = Signal::parse(signal).map_err(|e| e.to_string())?;
            Ok(Command::Feedback(signal, flag("--session")?))
        }
        Some("decay") => {
            let days = flag("--days")?
                .map(|d| {
                    d.parse::<f64>()
                        .ok()
                        .filter(|v| v.is_finite() && *v >= 0.0)
                        .ok_or_else(|| format!("--days must be a number of days ≥ 0, got {d:?}"))
                })
                .transpose()?;
            Ok(Command::Decay(days))
        }
        Some("compact") => Ok(Command::Compact),
        Some("digest") => Ok(Command::Digest),
        Some(other) => Err(format!("unknown clawbrain command {other:?}")),
        None => Err("missing command".into()),
    }
}

/// Runs `clawbrain <args…>` (the arguments after `clawbrain`) and returns the exit code.
fn dispatch(bin: &str, args: &[String]) -> ExitCode {
    if matches!(
        args.first().map(String::as_str),
        Some("-h" | "--help" | "help")
    ) {
        print!("USAGE:\n{}", usage(bin));
        return ExitCode::SUCCESS;
    }
    let command = match parse(args) {
        Ok(c) => c,
        Err(message) => {
            let message = format!("clawbrain: {message}; run `{bin} --help` for usage");
            return fail(bin, false, EXIT_USAGE, &message);
        }
    };
    let brain = match Brain::open(&root_from_env(), &session_from_env()) {
        Ok(b) => b,
        Err(e) => return fail(bin, false, EXIT_FAILURE, &format!("clawbrain: {e}")),
    };
    let done: Result<ExitCode, BrainError> = match command {
        Command::Feedback(signal, session) => brain
            .feedback(signal, session.as_deref())
            .map(|r| print_json(&r)),
        Command::Decay(days) => brain.decay(days).map(|r| print_json(&r)),
        Command::Compact => brain.compact().map(|r| print_json(&r)),
        Command::Digest => brain
            .regenerate_digest()
            .map(|()| print_json(&serde_json::json!({"regenerated": "MEMORY.md"}))),
    };
    done.unwrap_or_else(|e| fail(bin, false, EXIT_FAILURE, &format!("clawbrain: {e}")))
}
