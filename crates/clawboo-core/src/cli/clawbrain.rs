//! ClawBrain's commands on the memory bin, for scripts and hooks: `clawbrain feedback`, `decay`,
//! `compact`, `digest`, each printing the same JSON the matching tool returns. (Serving ClawBrain,
//! `clawboo-mcp-memory clawbrain`, is the common stdio path of `cli`, through the registry.)
//!
//! The vault is the one `MEMORY_DIR` names (default `<cwd>/memory`), the session `SESSION_ID`'s.
//! Exit codes: 0 done, 1 failed, 2 usage; errors in the bins' one style ([`super::fail`]). Must
//! never: print anything but the JSON result to stdout.

use std::process::ExitCode;

use serde::Serialize;

use super::{BinInfo, EXIT_FAILURE, fail, usage_error};
use crate::args::{Args, Usage, Word};
use crate::clawbrain::{Brain, BrainError, Signal, root_from_env, session_from_env};

/// ClawBrain's commands: `(name, synopsis, what it does)`, as the bin's help lists them.
pub fn commands() -> Vec<(&'static str, String, String)> {
    let signals = Signal::ALL.map(Signal::as_str).join("|");
    vec![
        (
            "feedback",
            format!("{signals} [--session ID]"),
            "report an outcome for the session's newest retrieval (SESSION_ID, default local-session)"
                .into(),
        ),
        (
            "decay",
            "[--days N]".into(),
            "decay scores by days since last access (or by N days for every memory)".into(),
        ),
        (
            "compact",
            String::new(),
            "consolidate, promote and prune now".into(),
        ),
        ("digest", String::new(), "regenerate MEMORY.md".into()),
    ]
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

#[derive(Debug, PartialEq)]
enum Command {
    Feedback(Signal, Option<String>),
    Decay(Option<f64>),
    Compact,
    Digest,
}

fn parse(name: &str, words: &[String]) -> Result<Command, Usage> {
    let mut args = Args::new(words);
    let mut signal = None;
    let mut session = None;
    let mut days = None;
    while let Some(word) = args.next_word()? {
        match (name, &word) {
            ("feedback", Word::Plain(text)) if signal.is_none() => {
                signal = Some(Signal::parse(text).map_err(|e| Usage(e.to_string()))?)
            }
            ("feedback", Word::Flag(flag)) if flag == "--session" => session = Some(args.value()?),
            ("decay", Word::Flag(flag)) if flag == "--days" => {
                let value = args.value()?;
                days = Some(
                    value
                        .parse::<f64>()
                        .ok()
                        .filter(|v| v.is_finite() && *v >= 0.0)
                        .ok_or_else(|| {
                            Usage(format!(
                                "--days must be a number of days ≥ 0, got {value:?}"
                            ))
                        })?,
                )
            }
            _ => return Err(word.unexpected()),
        }
    }
    Ok(match name {
        "feedback" => Command::Feedback(signal.ok_or("needs a signal")?, session),
        "decay" => Command::Decay(days),
        "compact" => Command::Compact,
        _ => Command::Digest,
    })
}

/// Runs `clawbrain <name> <words…>` and returns the exit code; `path` names it in errors.
pub fn dispatch(info: &BinInfo, path: &str, name: String, words: &[String]) -> ExitCode {
    let bin = info.bin;
    let command = match parse(&name, words) {
        Ok(c) => c,
        Err(usage) => return usage_error(bin, path, false, &usage),
    };
    let brain = match Brain::open(&root_from_env(), &session_from_env()) {
        Ok(b) => b,
        Err(e) => return fail(bin, false, EXIT_FAILURE, &format!("{path}: {e}")),
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
    done.unwrap_or_else(|e| fail(bin, false, EXIT_FAILURE, &format!("{path}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn commands_read_their_arguments_and_name_what_is_wrong() {
        assert_eq!(
            parse("feedback", &words("task_completed --session s1")),
            Ok(Command::Feedback(Signal::TaskCompleted, Some("s1".into())))
        );
        assert_eq!(
            parse("decay", &words("--days 7")),
            Ok(Command::Decay(Some(7.0)))
        );
        assert_eq!(parse("compact", &[]), Ok(Command::Compact));
        assert_eq!(parse("feedback", &[]), Err(Usage("needs a signal".into())));
        assert!(
            parse("feedback", &words("meh"))
                .unwrap_err()
                .0
                .contains("signal must be one of")
        );
        assert_eq!(
            parse("digest", &words("--now")),
            Err(Usage("unexpected argument '--now'".into()))
        );
        assert_eq!(
            parse("decay", &words("--days -1")),
            Err(Usage(
                "--days must be a number of days ≥ 0, got \"-1\"".into()
            ))
        );
    }
}
