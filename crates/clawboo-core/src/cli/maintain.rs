//! The upkeep commands every bin has: `token new NAME` (a line for `serve`'s tokens file),
//! `backup PATH`, `check PATH` and `restore PATH [--force]` (copies of the database file the
//! environment names, `CLAWBOO_DB_PATH`).
//!
//! Owns the front-door half of each: arguments, what is printed, exit codes (0 done, 1 failed,
//! 2 usage, in [`super`]'s one error style). The work lives in the library (`host` for tokens,
//! `db::backup` for copies, `schema` for what the versions mean).
//! Must never: print a secret except the one new token `token new` was asked for, on stdout.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::{BinInfo, EXIT_FAILURE, fail, usage_error};
use crate::args::{Args, Usage, Word};
use crate::db::backup::{self as db_backup, CheckReport};
use crate::db::default_db_path;
use crate::host;

/// The upkeep commands: `(words, synopsis, what it does)`, as every bin's help lists them.
pub fn commands() -> Vec<(Vec<&'static str>, &'static str, &'static str)> {
    vec![
        (
            vec!["token", "new"],
            "NAME",
            "print a new named token line (NAME:<32 random bytes, base64url>) for serve's --tokens-file",
        ),
        (
            vec!["backup"],
            "PATH",
            "write a consistent copy of the database to PATH while servers keep writing (VACUUM INTO, then rename)",
        ),
        (
            vec!["check"],
            "PATH",
            "check a copy: SQLite's integrity check and the schema versions it records",
        ),
        (
            vec!["restore"],
            "PATH [--force]",
            "replace the database with a checked copy of PATH, at once; refused while another process has it open, unless --force",
        ),
    ]
}

/// Runs the upkeep command named by `words` with its arguments `rest`.
pub fn dispatch(info: &BinInfo, words: &[&str], rest: &[String]) -> ExitCode {
    let path = words.join(" ");
    let outcome = match words {
        ["token", "new"] => token_new(rest),
        ["backup"] => backup(rest),
        ["check"] => check(rest),
        ["restore"] => restore(rest),
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

fn live_path() -> Result<PathBuf, Failure> {
    default_db_path().map_err(|e| Failure::Failed(e.to_string()))
}

fn report(what: &str, path: &Path, report: &CheckReport) -> String {
    let mut out = format!(
        "{what} {}\nintegrity: {}\nschema:\n",
        path.display(),
        report.integrity.join("; ")
    );
    for line in crate::schema::describe_versions(&report.versions) {
        out.push_str(&format!("  {line}\n"));
    }
    out.trim_end().to_owned()
}

fn backup(rest: &[String]) -> Result<String, Failure> {
    let dest = PathBuf::from(positional(rest, "PATH", 1)?.remove(0));
    let live = live_path()?;
    let checked = db_backup::backup(&live, &dest).map_err(Failure::Failed)?;
    Ok(report(
        &format!("backed up {} to", live.display()),
        &dest,
        &checked,
    ))
}

fn check(rest: &[String]) -> Result<String, Failure> {
    let path = PathBuf::from(positional(rest, "PATH", 1)?.remove(0));
    let checked = db_backup::check(&path).map_err(Failure::Failed)?;
    if !checked.is_sound() {
        return Err(Failure::Failed(format!(
            "{} failed its integrity check: {}",
            path.display(),
            checked.integrity.join("; ")
        )));
    }
    Ok(report("checked", &path, &checked))
}

fn restore(rest: &[String]) -> Result<String, Failure> {
    let mut args = Args::new(rest);
    let mut force = false;
    let mut source = None;
    while let Some(word) = args.next_word()? {
        match word {
            Word::Flag(flag) if flag == "--force" => force = true,
            Word::Plain(path) if source.is_none() => source = Some(PathBuf::from(path)),
            other => return Err(other.unexpected().into()),
        }
    }
    let source = source.ok_or_else(|| Usage("PATH is required".into()))?;
    let live = live_path()?;
    let checked = db_backup::restore(&source, &live, force).map_err(Failure::Failed)?;
    Ok(report(
        &format!("restored {} over", source.display()),
        &live,
        &checked,
    ))
}
