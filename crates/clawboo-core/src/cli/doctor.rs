//! `doctor`: what a person needs before asking for help, one line per check.
//!
//! Owns: the checks and their report: the database file (its path and where the path came from,
//! its size and its WAL's and shared-memory file's, SQLite's integrity check, the schema versions
//! against this build's), the retention policy the environment sets, the permissions of the
//! binding key file and of the tokens file, the embedding provider and whether it answers, and,
//! with `--host URL`, a running host's live sessions (`GET /api/health`). Each check is `ok`,
//! `warn` (works, but a person should look) or `fail`; the exit code is 0 when every check is
//! `ok`, else 1. `--json` prints the same as one object.
//!
//! Decisions: the integrity check is `PRAGMA integrity_check` on a file up to [`QUICK_ABOVE`]
//! bytes and `PRAGMA quick_check` above it (linear time; it skips only the index-content checks),
//! and the report says which ran. The database is opened read-only and never created or migrated,
//! and the binding key file is never created (doctor looks; it does not repair).
//! Must never: print a secret. Tokens and keys are named by where they come from and their file
//! mode; a provider's or a host's error text is passed through the scrubber.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};

use super::maintain::{Failure, Sizes, live_path};
use crate::args::{Args, Word};
use crate::binding::{DB_PATH_ENV, env_value};
use crate::db::backup;
use crate::host::{TOKEN_ENV, TOKENS_FILE_ENV};
use crate::memory::embed::{EmbedConfig, Provider};
use crate::schema::{self, retention::Policy};
use crate::scrub::scrub_secrets;
use crate::signature::{KEY_ENV, KEY_FILE};

/// `doctor`'s usage line.
pub const SYNOPSIS: &str = "[--host URL] [--token T] [--tokens-file PATH] [--json]";

/// Files above this size get `PRAGMA quick_check` instead of the full integrity check.
pub const QUICK_ABOVE: u64 = 1 << 30;

/// How long the host and the embedding provider may take to answer.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    Ok,
    Warn,
    Fail,
}

/// One line of the report.
#[derive(Debug, Clone, Serialize)]
struct Finding {
    check: &'static str,
    status: Status,
    detail: String,
}

#[derive(Default)]
struct Report {
    findings: Vec<Finding>,
    extra: serde_json::Map<String, Value>,
}

impl Report {
    fn add(&mut self, check: &'static str, status: Status, detail: impl Into<String>) {
        self.findings.push(Finding {
            check,
            status,
            detail: detail.into(),
        });
    }

    fn healthy(&self) -> bool {
        self.findings.iter().all(|f| f.status == Status::Ok)
    }

    fn text(&self) -> String {
        let mut out = String::new();
        for f in &self.findings {
            let status = match f.status {
                Status::Ok => "ok",
                Status::Warn => "WARN",
                Status::Fail => "FAIL",
            };
            out.push_str(&format!("{status:<5} {}: {}\n", f.check, f.detail));
        }
        let problems = self
            .findings
            .iter()
            .filter(|f| f.status != Status::Ok)
            .count();
        if problems == 0 {
            out.push_str("all checks passed");
        } else {
            out.push_str(&format!(
                "{problems} check{} need{} attention",
                if problems == 1 { "" } else { "s" },
                if problems == 1 { "s" } else { "" }
            ));
        }
        out
    }

    fn json(&self) -> String {
        let mut value = self.extra.clone();
        value.insert("ok".into(), self.healthy().into());
        value.insert("checks".into(), json!(self.findings));
        Value::Object(value).to_string()
    }
}

/// Runs every check; `Err(Failure::Unwell)` carries the report when a check is not `ok`.
pub(super) fn run(rest: &[String]) -> Result<String, Failure> {
    let mut host = None;
    let mut token = env_value(TOKEN_ENV);
    let mut tokens_file = env_value(TOKENS_FILE_ENV).map(PathBuf::from);
    let mut json_out = false;
    let mut args = Args::new(rest);
    while let Some(word) = args.next_word()? {
        let Word::Flag(flag) = &word else {
            return Err(word.unexpected().into());
        };
        match flag.as_str() {
            "--host" => host = Some(args.value()?),
            "--token" => token = Some(args.value()?),
            "--tokens-file" => tokens_file = Some(PathBuf::from(args.value()?)),
            "--json" => json_out = true,
            _ => return Err(word.unexpected().into()),
        }
    }
    let live = live_path()?;
    let mut report = Report::default();
    database(&mut report, &live);
    match Policy::from_env() {
        Ok(policy) => report.add(
            "retention",
            Status::Ok,
            format!("{policy} (CLAWBOO_RETAIN_*_DAYS)"),
        ),
        Err(e) => report.add("retention", Status::Fail, e),
    }
    binding_key(&mut report, &live);
    if let Some(path) = &tokens_file {
        private_file(&mut report, "tokens file", path);
    }
    embeddings(&mut report);
    if let Some(url) = &host {
        host_sessions(&mut report, url, token.as_deref());
    }
    let out = if json_out {
        report.json()
    } else {
        report.text()
    };
    if report.healthy() {
        Ok(out)
    } else {
        Err(Failure::Unwell(out))
    }
}

fn database(report: &mut Report, live: &Path) {
    let shown = std::path::absolute(live).unwrap_or_else(|_| live.to_path_buf());
    let source = if env_value(DB_PATH_ENV).is_some() {
        format!("from {DB_PATH_ENV}")
    } else {
        "the default".to_owned()
    };
    report
        .extra
        .insert("database".into(), shown.display().to_string().into());
    if !live.is_file() {
        report.add(
            "database",
            Status::Fail,
            format!(
                "{} ({source}) does not exist; a server creates it when it first opens it",
                shown.display()
            ),
        );
        return;
    }
    report.add(
        "database",
        Status::Ok,
        format!("{} ({source})", shown.display()),
    );
    let sizes = Sizes::of(live);
    report.extra.insert("sizes".into(), json!(sizes));
    report.add(
        "size",
        Status::Ok,
        format!(
            "{} bytes, WAL {} bytes, SHM {} bytes",
            sizes.file, sizes.wal, sizes.shm
        ),
    );
    let quick = sizes.file > QUICK_ABOVE;
    let pragma = if quick {
        "quick_check"
    } else {
        "integrity_check"
    };
    match backup::inspect(live, quick) {
        Err(e) => report.add("integrity", Status::Fail, scrub_secrets(&e)),
        Ok(checked) => {
            let status = if checked.is_sound() {
                Status::Ok
            } else {
                Status::Fail
            };
            report.add(
                "integrity",
                status,
                format!("{} (PRAGMA {pragma})", checked.integrity.join("; ")),
            );
            let lines = schema::describe_versions(&checked.versions);
            let status = if lines.iter().any(|l| l.contains("newer than")) {
                Status::Fail
            } else if lines.iter().any(|l| l.contains("missing")) {
                Status::Warn
            } else {
                Status::Ok
            };
            report.add("schema", status, lines.join("; "));
        }
    }
}

/// The binding key: from the environment (nothing to check), or the file beside the database.
fn binding_key(report: &mut Report, live: &Path) {
    if env_value(KEY_ENV).is_some() {
        report.add(
            "binding key",
            Status::Ok,
            format!("from {KEY_ENV} (not shown)"),
        );
        return;
    }
    let path = live
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join(KEY_FILE);
    if !path.exists() {
        report.add(
            "binding key",
            Status::Ok,
            format!(
                "{} not made yet (made with mode 600 on the first signed binding)",
                path.display()
            ),
        );
        return;
    }
    private_file(report, "binding key", &path);
}

/// A file holding secrets: it must exist and only its owner may read it.
fn private_file(report: &mut Report, check: &'static str, path: &Path) {
    let shown = path.display();
    match std::fs::metadata(path) {
        Err(e) => report.add(check, Status::Fail, format!("{shown}: {e}")),
        Ok(meta) => match mode_of(&meta) {
            Some(mode) if mode & 0o077 != 0 => report.add(
                check,
                Status::Warn,
                format!(
                    "{shown} has mode {mode:o}: group or others may read it (run chmod 600 on it)"
                ),
            ),
            Some(mode) => report.add(check, Status::Ok, format!("{shown}, mode {mode:o}")),
            None => report.add(check, Status::Ok, format!("{shown}")),
        },
    }
}

#[cfg(unix)]
fn mode_of(meta: &std::fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    Some(meta.permissions().mode() & 0o777)
}

#[cfg(not(unix))]
fn mode_of(_: &std::fs::Metadata) -> Option<u32> {
    None
}

/// The provider the environment gives (as the memory server chooses it) and whether it answers an
/// embedding request. None configured is fine: search is full-text then.
fn embeddings(report: &mut Report) {
    let config = EmbedConfig::from_env();
    if config.disabled {
        report.add("embeddings", Status::Ok, "off (CLAWBOO_EMBEDDINGS=off)");
        return;
    }
    let Some(provider) = config.resolve() else {
        let asked = env_value("OLLAMA_HOST").is_some() || config.model.is_some();
        let detail = format!(
            "none: full-text search only (no Ollama with the model at {}, no OPENAI_API_KEY)",
            config.ollama_base
        );
        let status = if asked { Status::Warn } else { Status::Ok };
        report.add("embeddings", status, detail);
        return;
    };
    let at = match &provider {
        Provider::Ollama { base, .. } | Provider::OpenAi { base, .. } => base.clone(),
    };
    match provider.embed(&["clawboo doctor"]) {
        Ok(_) => report.add(
            "embeddings",
            Status::Ok,
            format!("{} at {at}, answering", provider.id()),
        ),
        Err(e) => report.add(
            "embeddings",
            Status::Warn,
            format!(
                "{} at {at} does not answer: {}",
                provider.id(),
                scrub_secrets(&e.to_string())
            ),
        ),
    }
}

/// A running host's `GET /api/health`: its mounts and their live sessions.
fn host_sessions(report: &mut Report, url: &str, token: Option<&str>) {
    let base = url.trim_end_matches('/');
    let health = format!("{base}/api/health");
    let bearer = token.map(|t| format!("Bearer {}", t.trim()));
    let headers: Vec<(&str, &str)> = bearer
        .as_deref()
        .map(|b| vec![("authorization", b)])
        .unwrap_or_default();
    match crate::http::get_json_with(&health, &headers, PROBE_TIMEOUT) {
        Err(e) => {
            let mut detail = scrub_secrets(&e.to_string());
            if let Some(t) = token.map(str::trim).filter(|t| !t.is_empty()) {
                detail = detail.replace(t, "<token>");
            }
            report.add("host", Status::Fail, detail);
        }
        Ok(answer) => {
            let sessions = answer.get("sessions").cloned().unwrap_or(Value::Null);
            let listed: Vec<String> = sessions
                .as_object()
                .into_iter()
                .flatten()
                .map(|(server, live)| format!("{server} {live}"))
                .collect();
            report.extra.insert("sessions".into(), sessions);
            report.add(
                "host",
                Status::Ok,
                format!("{base} answers; live sessions: {}", listed.join(", ")),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_says_which_checks_need_attention_and_is_healthy_only_when_all_are_ok() {
        let mut report = Report::default();
        report.add("size", Status::Ok, "1 bytes");
        assert!(report.healthy());
        assert!(report.text().ends_with("all checks passed"));
        report.add("tokens file", Status::Warn, "mode 644");
        assert!(!report.healthy());
        assert_eq!(
            report.text(),
            "ok    size: 1 bytes\nWARN  tokens file: mode 644\n1 check needs attention"
        );
        let json: Value = serde_json::from_str(&report.json()).unwrap();
        assert_eq!(json["ok"], false);
        assert_eq!(json["checks"][1]["status"], "warn");
    }
}
