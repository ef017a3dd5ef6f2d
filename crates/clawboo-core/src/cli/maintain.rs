//! The upkeep commands every bin has: `token new NAME` (a line for `serve`'s tokens file).
//!
//! Owns the front-door half of each: arguments, what is printed, exit codes (0 done, 1 failed,
//! 2 usage, in [`super`]'s one error style). The work lives in the library (`host` for tokens).
//! Must never: print a secret except the one new token `token new` was asked for, on stdout.

use std::process::ExitCode;

use super::{BinInfo, EXIT_FAILURE, fail, usage_error};
use crate::args::{Args, Usage, Word};
use crate::host;

/// The upkeep commands: `(words, synopsis, what it does)`, as every bin's help lists them.
pub fn commands() -> Vec<(Vec<&'static str>, &'static str, &'static str)> {
    vec![(
        vec!["token", "new"],
        "NAME",
        "print a new named token line (NAME:<32 random bytes, base64url>) for serve's --tokens-file",
    )]
}

/// Runs the upkeep command named by `words` with its arguments `rest`.
pub fn dispatch(info: &BinInfo, words: &[&str], rest: &[String]) -> ExitCode {
    let path = words.join(" ");
    let outcome = match words {
        ["token", "new"] => token_new(rest),
        _ => Err(Failure::Usage(Usage(format!("unknown command {path:?}")))),
    };
    match outcome {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(Failure::Usage(usage)) => usage_error(info.bin, &path, false, &usage),
        Err(Failure::Failed(message)) => {
            fail(info.bin, false, EXIT_FAILURE, &format!("{path}: {message}"))
        }
    }
}

/// Why a command did not finish.
enum Failure {
    /// A bad flag or argument (exit 2).
    Usage(Usage),
    /// The work failed (exit 1).
    Failed(String),
}

impl From<Usage> for Failure {
    fn from(usage: Usage) -> Self {
        Self::Usage(usage)
    }
}

/// The positional arguments of a command that takes no flags, exactly `count` of them.
fn positional(rest: &[String], names: &str, count: usize) -> Result<Vec<String>, Usage> {
    let mut args = Args::new(rest);
    let mut values = Vec::new();
    while let Some(word) = args.next_word()? {
        match word {
            Word::Plain(value) if values.len() < count => values.push(value),
            other => return Err(other.unexpected()),
        }
    }
    if values.len() < count {
        return Err(Usage(format!("{names} is required")));
    }
    Ok(values)
}

fn token_new(rest: &[String]) -> Result<String, Failure> {
    let name = positional(rest, "NAME", 1)?.remove(0);
    host::new_token_line(&name).map_err(|e| Failure::Usage(Usage(e)))
}
