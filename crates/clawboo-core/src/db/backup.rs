//! Copies of the live file: a consistent backup taken while others write, the check of a copy,
//! and a restore that replaces a file at once.
//!
//! Owns: `VACUUM INTO` (SQLite's own consistent copy: one read transaction, so the copy holds
//! every commit made before it began and none half-made, whatever other processes write
//! meanwhile), the temp-name-then-rename rule, `PRAGMA integrity_check`, reading
//! `clawboo_schema_versions`, and the "is anyone else using this file" test of a restore.
//! Guarantees: a backup or a restore never leaves a half-written file under its final name
//! (written to `<name>.partial-<pid>`, checked, then renamed over it); a restore refuses, unless
//! forced, to replace a file another connection has open (it must leave WAL mode to be replaced,
//! which SQLite allows only to the one connection left); the copy is never a byte copy of the
//! live file.
//! Must never: know which components exist (callers compare the versions with the schema list).

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

/// What [`check`] found in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    /// `PRAGMA integrity_check`'s lines (`["ok"]` when sound).
    pub integrity: Vec<String>,
    /// `(component, version)` as the file records them.
    pub versions: Vec<(String, i64)>,
}

impl CheckReport {
    /// Whether the integrity check found nothing wrong.
    pub fn is_sound(&self) -> bool {
        self.integrity == ["ok"]
    }
}

fn failed(what: &str, path: &Path, e: impl std::fmt::Display) -> String {
    format!("{what} {}: {e}", path.display())
}

/// The path `path` is written under before it is renamed into place.
fn partial(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".partial-{}", std::process::id()));
    PathBuf::from(name)
}

/// Opens `path` read-only (it must exist), waiting up to 15 s on a lock.
fn open_read_only(path: &Path) -> Result<Connection, String> {
    if !path.is_file() {
        return Err(format!("{} is not a file", path.display()));
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| failed("cannot open", path, e))?;
    conn.busy_timeout(Duration::from_secs(15))
        .map_err(|e| failed("cannot open", path, e))?;
    Ok(conn)
}

/// Writes a consistent copy of `source` (the live file, WAL included) to `dest`, under a temp name
/// then renamed; checks the copy first. Returns the copy's check.
pub fn backup(source: &Path, dest: &Path) -> Result<CheckReport, String> {
    if same_file(source, dest) {
        return Err(format!(
            "the backup {} would replace the live file",
            dest.display()
        ));
    }
    let conn = open_read_only(source)?;
    copy_into(&conn, source, dest)
}

/// `VACUUM INTO` a temp name beside `dest`, check it, rename it to `dest`.
fn copy_into(conn: &Connection, source: &Path, dest: &Path) -> Result<CheckReport, String> {
    let temp = partial(dest);
    let _ = std::fs::remove_file(&temp);
    let target = temp
        .to_str()
        .ok_or_else(|| format!("{} is not valid UTF-8", temp.display()))?;
    let outcome = conn
        .execute("VACUUM INTO ?1", [target])
        .map_err(|e| failed("cannot copy", source, e))
        .and_then(|_| {
            let report = check(&temp)?;
            if !report.is_sound() {
                return Err(format!(
                    "the copy of {} failed its integrity check: {}",
                    source.display(),
                    report.integrity.join("; ")
                ));
            }
            std::fs::File::open(&temp)
                .and_then(|f| f.sync_all())
                .map_err(|e| failed("cannot flush", &temp, e))?;
            std::fs::rename(&temp, dest).map_err(|e| failed("cannot move the copy to", dest, e))?;
            Ok(report)
        });
    if outcome.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    outcome
}

/// Checks the file at `path`: its integrity and the schema versions it records.
pub fn check(path: &Path) -> Result<CheckReport, String> {
    let conn = open_read_only(path)?;
    let not_a_db = |e| failed("cannot read", path, e);
    let integrity = conn
        .prepare("PRAGMA integrity_check")
        .and_then(|mut s| {
            s.query_map([], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .map_err(not_a_db)?;
    let has_versions: bool = conn
        .query_row(
            "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'clawboo_schema_versions'",
            [],
            |r| r.get(0),
        )
        .map_err(not_a_db)?;
    let versions = if has_versions {
        conn.prepare("SELECT component, version FROM clawboo_schema_versions ORDER BY component")
            .and_then(|mut s| {
                s.query_map([], |r| Ok((r.get("component")?, r.get("version")?)))?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(not_a_db)?
    } else {
        Vec::new()
    };
    Ok(CheckReport {
        integrity,
        versions,
    })
}

/// Replaces `live` with a checked copy of `backup`, at once (rename). Refused when another
/// connection has `live` open, unless `force`.
pub fn restore(backup: &Path, live: &Path, force: bool) -> Result<CheckReport, String> {
    let report = check(backup)?;
    if !report.is_sound() {
        return Err(format!(
            "{} failed its integrity check: {}",
            backup.display(),
            report.integrity.join("; ")
        ));
    }
    if live.exists() && !force && in_use(live)? {
        return Err(format!(
            "{} is open in another process (a server or host is running on it); stop them first, or pass --force",
            live.display()
        ));
    }
    let conn = open_read_only(backup)?;
    let report = copy_into(&conn, backup, live)?;
    for suffix in ["-wal", "-shm"] {
        let mut side = live.as_os_str().to_owned();
        side.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(side));
    }
    Ok(report)
}

/// Whether a connection other than ours has `path` open: leaving WAL mode needs every other
/// connection gone, and fails at once (no busy wait) otherwise. Leaves the file in rollback mode;
/// it is about to be replaced.
fn in_use(path: &Path) -> Result<bool, String> {
    let conn = Connection::open(path).map_err(|e| failed("cannot open", path, e))?;
    match conn.query_row("PRAGMA journal_mode = DELETE", [], |r| {
        r.get::<_, String>(0)
    }) {
        Ok(mode) => Ok(!mode.eq_ignore_ascii_case("delete")),
        Err(rusqlite::Error::SqliteFailure(e, _))
            if matches!(
                e.code,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            ) =>
        {
            Ok(true)
        }
        Err(e) => Err(failed("cannot check", path, e)),
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("clawboo-backup-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn live(path: &Path) -> Connection {
        let conn = Connection::open(path).unwrap();
        conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
            .unwrap();
        conn.execute_batch(
            "CREATE TABLE t (x INTEGER);
             CREATE TABLE clawboo_schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL);
             INSERT INTO clawboo_schema_versions VALUES ('board', 3);",
        )
        .unwrap();
        conn
    }

    #[test]
    fn a_backup_holds_every_commit_before_it_and_a_restore_refuses_a_file_in_use() {
        let dir = dir();
        let db = dir.join("live.db");
        let conn = live(&db);
        conn.execute("INSERT INTO t VALUES (1), (2)", []).unwrap();
        let copy = dir.join("copy.db");
        let report = backup(&db, &copy).unwrap();
        assert!(report.is_sound());
        assert_eq!(report.versions, [("board".to_owned(), 3)]);
        let rows: i64 = Connection::open(&copy)
            .unwrap()
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 2);
        assert!(
            backup(&db, &db)
                .unwrap_err()
                .contains("would replace the live file")
        );
        conn.execute("INSERT INTO t VALUES (3)", []).unwrap();
        let err = restore(&copy, &db, false).unwrap_err();
        assert!(err.contains("is open in another process"), "{err}");
        drop(conn);
        restore(&copy, &db, false).unwrap();
        let rows: i64 = Connection::open(&db)
            .unwrap()
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 2);
        let junk = dir.join("junk.db");
        std::fs::write(&junk, b"not a database at all, just some bytes").unwrap();
        assert!(check(&junk).is_err());
        assert!(restore(&junk, &db, true).is_err());
        assert!(
            check(&dir.join("missing.db"))
                .unwrap_err()
                .contains("is not a file")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
