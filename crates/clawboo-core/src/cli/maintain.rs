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

use serde_json::json;

use super::doctor;
use super::{BinInfo, EXIT_FAILURE, fail, usage_error};
use crate::args::{Args, Usage, Word};
use crate::db::backup::{self as db_backup, CheckReport};
use crate::db::{Clock, Db, default_db_path, retention as db_retention};
use crate::host;
use crate::memory::merge_text_indexes;
use crate::schema::retention::{self, Kind, Policy};

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
        (
            vec!["compact"],
            "[--audit-days N] [--posts-days N] [--approvals-days N] [--dry-run] [--json]",
            "apply the retention policy once (CLAWBOO_RETAIN_*_DAYS, the flags override; off by default),\n\
             merge the memory's full-text indexes, then VACUUM and truncate the WAL; prints what was\n\
             removed and the file size before and after",
        ),
        (
            vec!["doctor"],
            doctor::SYNOPSIS,
            "check the database (size, WAL, integrity, schema), key and token file permissions, the\n\
             embedding provider and, with --host, a running host's sessions; exit 1 when something is wrong",
        ),
    ]
}

/// Runs the upkeep command named by `words` with its arguments `rest`.
pub fn dispatch(info: &BinInfo, words: &[&str], rest: &[String]) -> ExitCode {
    let path = words.join(" ");
    let json = rest.iter().any(|a| a == "--json");
    let outcome = match words {
        ["token", "new"] => token_new(rest),
        ["backup"] => backup(rest),
        ["check"] => check(rest),
        ["restore"] => restore(rest),
        ["compact"] => compact(rest),
        ["doctor"] => doctor::run(rest),
        _ => Err(Failure::Usage(Usage(format!("unknown command {path:?}")))),
    };
    match outcome {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(Failure::Unwell(text)) => {
            println!("{text}");
            ExitCode::from(EXIT_FAILURE)
        }
        Err(Failure::Usage(usage)) => usage_error(info.bin, &path, json, &usage),
        Err(Failure::Failed(message)) => {
            fail(info.bin, json, EXIT_FAILURE, &format!("{path}: {message}"))
        }
    }
}

/// Why a command did not finish.
pub(super) enum Failure {
    /// A bad flag or argument (exit 2).
    Usage(Usage),
    /// The work failed (exit 1).
    Failed(String),
    /// The command ran and its report (printed on stdout) says something is wrong (exit 1).
    Unwell(String),
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

pub(super) fn live_path() -> Result<PathBuf, Failure> {
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

/// The sizes of the database file and its WAL and shared-memory files, in bytes (0 when absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub(super) struct Sizes {
    pub file: u64,
    pub wal: u64,
    pub shm: u64,
}

impl Sizes {
    pub(super) fn of(path: &Path) -> Self {
        let size = |suffix: &str| {
            let mut name = path.as_os_str().to_owned();
            name.push(suffix);
            std::fs::metadata(PathBuf::from(name)).map_or(0, |m| m.len())
        };
        Self {
            file: size(""),
            wal: size("-wal"),
            shm: size("-shm"),
        }
    }

    /// The file and its WAL: what the database takes on disk (the shared-memory file is an index).
    fn total(self) -> u64 {
        self.file + self.wal
    }
}

/// `compact`: retention once at the database's clock (the environment's policy, the flags
/// override it), then, unless `--dry-run`, `VACUUM` and a truncating checkpoint.
fn compact(rest: &[String]) -> Result<String, Failure> {
    let mut policy = Policy::from_env().map_err(Failure::Failed)?;
    let mut dry_run = false;
    let mut json_out = false;
    let mut args = Args::new(rest);
    while let Some(word) = args.next_word()? {
        let Word::Flag(flag) = &word else {
            return Err(word.unexpected().into());
        };
        match flag.as_str() {
            "--dry-run" => dry_run = true,
            "--json" => json_out = true,
            _ => {
                let Some(kind) = Kind::ALL
                    .into_iter()
                    .find(|k| *flag == format!("--{}-days", k.as_str()))
                else {
                    return Err(word.unexpected().into());
                };
                let value = args.value()?;
                let days = retention::parse_days(flag, &value).map_err(Usage)?;
                policy.set(kind, Some(days));
            }
        }
    }
    let live = live_path()?;
    if !live.is_file() {
        return Err(Failure::Failed(format!(
            "{} does not exist: nothing to compact",
            live.display()
        )));
    }
    let db = Db::open(&live)
        .map_err(|e| Failure::Failed(e.to_string()))?
        .with_clock(Clock::from_env());
    let before = Sizes::of(&live);
    let conn = db.conn();
    let report = retention::apply(&conn, &policy, dry_run, None)
        .map_err(|e| Failure::Failed(e.to_string()))?;
    let (merge_steps, checkpoint) = if dry_run {
        (None, None)
    } else {
        let steps = merge_text_indexes(&conn).map_err(|e| Failure::Failed(e.to_string()))?;
        let checkpoint =
            db_retention::reclaim(&conn).map_err(|e| Failure::Failed(e.to_string()))?;
        (Some(steps), Some(checkpoint))
    };
    drop(conn);
    let after = Sizes::of(&live);
    let shown = std::path::absolute(&live).unwrap_or(live);
    if json_out {
        let value = json!({
            "database": shown.display().to_string(),
            "retention": report,
            "indexMergeSteps": merge_steps,
            "vacuumed": checkpoint.is_some(),
            "walBusy": checkpoint.is_some_and(|c| c.busy),
            "sizeBefore": before,
            "sizeAfter": after,
        });
        return Ok(value.to_string());
    }
    let reclaimed = match checkpoint {
        None => "dry run: nothing removed, nothing rewritten".to_owned(),
        Some(c) if c.busy => {
            "space: VACUUM done; a reader kept the WAL from being truncated (it is next time)"
                .to_owned()
        }
        Some(_) => "space: VACUUM done, WAL truncated".to_owned(),
    };
    let merged = match merge_steps {
        None => String::new(),
        Some(0) => "full-text indexes: already merged\n".to_owned(),
        Some(n) => format!("full-text indexes: merged in {n} steps\n"),
    };
    Ok(format!(
        "compacted {}\nretention: {}\n{merged}{reclaimed}\nsize: {} bytes before (file {} + WAL {}), {} bytes after (file {} + WAL {})",
        shown.display(),
        report.summary(),
        before.total(),
        before.file,
        before.wal,
        after.total(),
        after.file,
        after.wal,
    ))
}
