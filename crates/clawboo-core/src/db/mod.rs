//! The shared SQLite file: where it is, how a connection is opened, how the schema is created,
//! and how a read-then-write runs.
//!
//! Owns: the path rule (`CLAWBOO_DB_PATH`, else `~/.openclaw/clawboo/clawboo.db`), the pragmas every
//! connection gets (WAL, foreign keys, `synchronous=NORMAL`, a long busy timeout, reads through a
//! memory map of up to 2 GiB of the file, SQLite's own limit: a scan of the vector index then costs
//! no system call per page, about half the time; query plans that never depend on a bound value,
//! [`stable_plans`]), a second connection that only reads ([`Db::second_reader`]), the versioned,
//! idempotent schema bootstrap, [`immediate`], the one way to run a `BEGIN IMMEDIATE` transaction,
//! the [`Clock`] every timestamp column is stamped from, [`watch`]: how a waiter learns that
//! another connection committed ([`Db::changes`]), [`Keyset`], the paging cursor of newest-first
//! listings, and [`retention`]: deleting old rows in bounded batches (the repositories say which).
//!
//! SQLite itself is built without its memory statistics (`LIBSQLITE3_FLAGS` in the workspace's
//! `.cargo/config.toml`): kept, they take one process-wide mutex at every allocation SQLite makes,
//! and the two threads of a full-text search contend for it. Without them, a search took about a
//! tenth less CPU (in process, six alternating pairs of runs on the bench's tuning corpus at 100k
//! facts, the corpus search is tuned on).
//!
//! Time: a [`Db`] holds a [`Clock`] and every [`Conn`] it hands out carries it, so a repository reads
//! the time with [`Conn::now_ms`] and never from the system directly. Production uses the system
//! clock; a test gives the `Db` a [`Clock::manual`] and moves it with [`Clock::advance`] instead of
//! sleeping. Clones of a clock share one time, so two handles on one file can share a test clock.
//!
//! Guarantees: eight processes opening one brand-new file at the same instant all succeed; a
//! transaction that fails rolls back and leaves the file as it was; a writer that meets a lock waits
//! (busy timeout, then a bounded retry) instead of failing. The two waits a handle knows of (for its
//! connection's lock, held by another call, and for the write lock in [`immediate`]) run through
//! `crate::blocking::may_wait`, so a quick read answered on an async worker never holds it while
//! it waits.
//!
//! Must never: know a table's meaning or which components exist (each repository brings its own
//! DDL as a [`SchemaPart`], and `crate::schema` lists them and opens a [`Db`] over them), or build
//! SQL from caller input.
//!
//! # Growing the schema
//!
//! Each component's [`SchemaPart`] is a list of [`Step`]s. On open, every component's steps whose
//! number is above the version recorded in `clawboo_schema_versions` run in order, all inside one
//! `BEGIN IMMEDIATE` (so any number of processes may open, and migrate, one file at once: the
//! first does the work, the rest find it done), and the new version is recorded. A file written by
//! the reference implementation records no versions, so it gets *every* step: each step must
//! therefore be idempotent. The recipe:
//!
//! - **A new table or index:** append `Step::Sql("CREATE TABLE IF NOT EXISTS …")`.
//! - **A new column:** append `Step::AddColumn { table, column, definition }`. SQLite has no
//!   `ADD COLUMN IF NOT EXISTS`; this step asks `pragma_table_info(table)` first and runs
//!   `ALTER TABLE table ADD COLUMN column definition` only when the column is missing
//!   ([`add_column_if_missing`]), so it is safe on a file that already has it (the reference's, or
//!   one migrated by a newer process). The definition must be one `ADD COLUMN` accepts: nullable,
//!   or `NOT NULL` with a constant `DEFAULT`; no `PRIMARY KEY` or `UNIQUE`.
//! - **Never** edit, reorder or remove a published step (files record how many ran), and never
//!   drop or rename a column the reference reads: either implementation must keep serving the file.
//! - Read the new column by name (`row.get("column")`), never by position.
//! - Add a test beside `crate::schema`'s that upgrades a file written by the previous steps and
//!   checks that its rows still read.

use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, ErrorCode};

use crate::binding::DB_PATH_ENV;
use crate::blocking::may_wait;

pub mod backup;
mod keyset;
pub mod retention;
pub mod watch;

pub use keyset::Keyset;
pub(crate) use watch::data_version;
pub use watch::{Changes, Check, Hangup};

/// Debug builds only: a start time in ms since the epoch for a [`Clock::stepping`] clock, so an
/// integration test driving a real bin gets distinct, predictable timestamps without sleeping.
/// Release builds ignore it ([`Clock::from_env_value`]).
pub const TEST_CLOCK_ENV: &str = "CLAWBOO_TEST_CLOCK_MS";

/// How long one statement waits for a lock held by another connection before SQLite reports busy.
const BUSY_TIMEOUT: Duration = Duration::from_secs(15);

/// How long [`immediate`] and [`Db::open`] keep retrying a busy database after the busy timeout.
const BUSY_RETRY_BUDGET: Duration = Duration::from_secs(60);

/// Errors of opening the database or running a statement on it.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// Neither `CLAWBOO_DB_PATH` nor a home folder is available to place the file.
    #[error("cannot choose a database path: set {DB_PATH_ENV} or HOME")]
    NoPath,
    /// The folder that should hold the file could not be created.
    #[error("cannot create the database folder {path}: {source}")]
    CreateFolder {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Something that is not a folder stands where the database's folder should be.
    #[error("cannot use {path} as the database folder: it is a file, not a folder")]
    NotAFolder {
        /// The path.
        path: PathBuf,
    },
    /// A folder stands where the database file should be.
    #[error("cannot open the database {path}: it is a directory (name a file inside it instead)")]
    IsADirectory {
        /// The path.
        path: PathBuf,
    },
    /// The file could not be opened or prepared as a Clawboo database.
    #[error("cannot open the database {path}: {cause}")]
    Open {
        /// The file.
        path: PathBuf,
        /// Why, in words that do not repeat the path.
        cause: String,
    },
    /// A statement failed.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

/// One component's schema: a name and its ordered steps. Step `n` (1-based) is applied once,
/// when the component's recorded version is below `n`. Every step must be idempotent, so a file
/// written by the reference implementation, which records no versions, is brought up to date
/// without error (see the module docs for the recipe).
#[derive(Debug, Clone, Copy)]
pub struct SchemaPart {
    /// The component's name in `clawboo_schema_versions`.
    pub component: &'static str,
    /// The steps, oldest first. Never edit a published step; append a new one.
    pub steps: &'static [Step],
}

/// One idempotent schema step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// A batch of DDL that is a no-op when already applied (`CREATE … IF NOT EXISTS`).
    Sql(&'static str),
    /// Adds a column unless the table already has it ([`add_column_if_missing`]).
    AddColumn {
        /// The table (a plain identifier).
        table: &'static str,
        /// The new column (a plain identifier).
        column: &'static str,
        /// Its type and constraints as `ALTER TABLE … ADD COLUMN` accepts them, e.g.
        /// `INTEGER NOT NULL DEFAULT 0`.
        definition: &'static str,
    },
}

impl Step {
    fn apply(self, conn: &Connection) -> rusqlite::Result<()> {
        match self {
            Step::Sql(ddl) => conn.execute_batch(ddl),
            Step::AddColumn {
                table,
                column,
                definition,
            } => add_column_if_missing(conn, table, column, definition).map(drop),
        }
    }
}

/// True for a name that needs no quoting: ASCII letters, digits and `_`, not starting with a digit.
fn is_plain_identifier(name: &str) -> bool {
    name.chars().next().is_some_and(|c| !c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Adds `column` to `table` unless `pragma_table_info` says it is already there; returns whether
/// it was added. Run it inside the transaction that records the step (as [`Db`]'s open does), so
/// two processes cannot both find the column missing. Both names must be plain identifiers (they
/// come from code, never from input); `definition` is as `ALTER TABLE … ADD COLUMN` takes it.
pub fn add_column_if_missing(
    conn: &Connection,
    table: &str,
    column: &str,
    definition: &str,
) -> rusqlite::Result<bool> {
    for name in [table, column] {
        if !is_plain_identifier(name) {
            return Err(rusqlite::Error::InvalidColumnName(format!(
                "{name:?} is not a plain SQL identifier (letters, digits, _)"
            )));
        }
    }
    let present: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2) AS present",
        [table, column],
        |r| r.get("present"),
    )?;
    if present {
        return Ok(false);
    }
    conn.execute_batch(&format!(
        "ALTER TABLE {table} ADD COLUMN {column} {definition}"
    ))?;
    Ok(true)
}

const VERSIONS_DDL: &str = "CREATE TABLE IF NOT EXISTS clawboo_schema_versions (
    component TEXT PRIMARY KEY,
    version INTEGER NOT NULL
)";

/// The database path: `CLAWBOO_DB_PATH` trimmed (blank means unset), else
/// `<home>/.openclaw/clawboo/clawboo.db`.
pub fn resolve_db_path(env_value: Option<&str>, home: Option<&Path>) -> Result<PathBuf, DbError> {
    match crate::binding::given(env_value) {
        Some(v) => Ok(PathBuf::from(v)),
        None => home
            .map(|h| h.join(".openclaw").join("clawboo").join("clawboo.db"))
            .ok_or(DbError::NoPath),
    }
}

/// [`resolve_db_path`] applied to this process's environment.
pub fn default_db_path() -> Result<PathBuf, DbError> {
    let env_value = std::env::var(DB_PATH_ENV).ok();
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    resolve_db_path(env_value.as_deref(), home.as_deref())
}

/// Where the time of every timestamp column comes from: the system clock, or a test clock that
/// moves only when told to (or by a fixed step after every reading). Cloning shares the time: every
/// clone of a test clock sees every [`Clock::advance`].
#[derive(Debug, Clone, Default)]
pub struct Clock {
    /// `None` is the system clock.
    test: Option<Arc<TestTime>>,
}

#[derive(Debug)]
struct TestTime {
    now_ms: AtomicI64,
    step_ms: i64,
}

impl Clock {
    /// The system clock (milliseconds since the Unix epoch).
    pub fn system() -> Self {
        Self::default()
    }

    /// A test clock that reads `start_ms` until it is [`advance`](Clock::advance)d or
    /// [`set`](Clock::set).
    pub fn manual(start_ms: i64) -> Self {
        Self::stepping(start_ms, 0)
    }

    /// A test clock that reads `start_ms` first and `step_ms` later after every reading, so
    /// successive writes get strictly increasing timestamps (for a real bin under test, which
    /// nobody can advance from outside).
    pub fn stepping(start_ms: i64, step_ms: i64) -> Self {
        Self {
            test: Some(Arc::new(TestTime {
                now_ms: AtomicI64::new(start_ms),
                step_ms,
            })),
        }
    }

    /// The clock named by [`TEST_CLOCK_ENV`]'s value: in a debug build, a number is a
    /// [`Clock::stepping`] clock starting there with a 1 ms step; anything else (blank, unset,
    /// unparsable, or any value in a release build) is the system clock.
    pub fn from_env_value(value: Option<&str>) -> Self {
        if !cfg!(debug_assertions) {
            return Self::system();
        }
        match value.map(str::trim).and_then(|v| v.parse::<i64>().ok()) {
            Some(start) => Self::stepping(start, 1),
            None => Self::system(),
        }
    }

    /// [`Clock::from_env_value`] applied to this process's environment.
    pub fn from_env() -> Self {
        Self::from_env_value(std::env::var(TEST_CLOCK_ENV).ok().as_deref())
    }

    /// True for a test clock.
    pub fn is_test(&self) -> bool {
        self.test.is_some()
    }

    /// Milliseconds since the Unix epoch, the unit of every timestamp column.
    pub fn now_ms(&self) -> i64 {
        match &self.test {
            None => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis() as i64)
                .unwrap_or(0),
            Some(t) => t.now_ms.fetch_add(t.step_ms, Ordering::SeqCst),
        }
    }

    /// Moves a test clock forward by `by` (every clone sees it). Does nothing to the system clock.
    pub fn advance(&self, by: Duration) {
        if let Some(t) = &self.test {
            let by = i64::try_from(by.as_millis()).unwrap_or(i64::MAX);
            t.now_ms.fetch_add(by, Ordering::SeqCst);
        }
    }

    /// Sets a test clock to `now_ms` (every clone sees it). Does nothing to the system clock.
    pub fn set(&self, now_ms: i64) {
        if let Some(t) = &self.test {
            t.now_ms.store(now_ms, Ordering::SeqCst);
        }
    }
}

/// A fresh row id: a lowercase hyphenated UUID v4 with no prefix.
pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// True when the error means another connection holds a lock we need.
pub fn is_busy(err: &rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Runs `attempt` until it returns something other than a busy error, sleeping briefly between
/// tries, for at most [`BUSY_RETRY_BUDGET`].
fn retry_busy<T>(mut attempt: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let started = Instant::now();
    let mut pause = Duration::from_millis(5);
    loop {
        match attempt() {
            Err(e) if is_busy(&e) && started.elapsed() < BUSY_RETRY_BUDGET => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

/// Runs `body` inside `BEGIN IMMEDIATE`: the write lock is taken before the first read, so a
/// read-then-write can never be invalidated by another writer. Commits when `body` returns `Ok`,
/// rolls back otherwise (and if `body` panics). Only taking the lock and committing are retried;
/// `body` runs once.
///
/// `conn` is usually a [`Conn`]; the body gets the same handle back, so it can read the clock.
pub fn immediate<C, T, E>(conn: &C, body: impl FnOnce(&C) -> Result<T, E>) -> Result<T, E>
where
    C: Deref<Target = Connection>,
    E: From<rusqlite::Error>,
{
    // Another connection may hold the write lock: waiting for it is a wait (`crate::blocking`).
    may_wait(|| retry_busy(|| conn.execute_batch("BEGIN IMMEDIATE")))?;
    let mut open = OpenTransaction {
        conn: conn.deref(),
        finished: false,
    };
    let value = body(conn)?;
    retry_busy(|| open.conn.execute_batch("COMMIT"))?;
    open.finished = true;
    Ok(value)
}

/// Rolls back a transaction that was neither committed nor rolled back when it goes out of scope.
struct OpenTransaction<'c> {
    conn: &'c Connection,
    finished: bool,
}

impl Drop for OpenTransaction<'_> {
    fn drop(&mut self) {
        if !self.finished {
            // Nothing more can be done about a failed rollback: the connection reports it on its
            // next BEGIN, and SQLite rolls back an interrupted transaction on its own.
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}

/// Applies the connection pragmas: [`read_settings`], then the writer's. `journal_mode=WAL` needs
/// a lock on a brand-new file, so that setup is retried while another opener holds it.
fn configure(conn: &Connection) -> rusqlite::Result<()> {
    read_settings(conn)?;
    retry_busy(|| {
        conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))?;
        conn.execute_batch(
            "PRAGMA foreign_keys = ON;
             PRAGMA synchronous = NORMAL;
             PRAGMA wal_autocheckpoint = 1000;",
        )
    })
}

/// What every connection's reads need, a [`Db::second_reader`]'s too: the busy timeout, reads
/// through a memory map of up to 2 GiB of the file, and [`stable_plans`].
fn read_settings(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    stable_plans(conn)?;
    conn.execute_batch("PRAGMA mmap_size = 2147418112;")
}

/// Turns on SQLite's query planner stability guarantee: a statement's plan never depends on the
/// values bound to it. Without it, a statement whose plan *could* use a bound value (a `LIMIT ?`,
/// a `MATCH ?` on a virtual table) is marked expired at every bind and parsed and planned again at
/// its next step, so a cached statement saved nothing: about a sixth of a full-text search's time.
/// No statement of ours needs a plan shaped by a value.
fn stable_plans(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    Ok(())
}

/// Brings every component's schema up to date inside one `BEGIN IMMEDIATE`, so concurrent openers
/// serialise and each step runs exactly once per file. A recorded version is never lowered: an
/// older build opening a file a newer one migrated leaves the newer steps recorded.
fn ensure_schema(conn: &Connection, parts: &[SchemaPart]) -> rusqlite::Result<()> {
    immediate(&conn, |tx| {
        tx.execute_batch(VERSIONS_DDL)?;
        for part in parts {
            let current: i64 = tx
                .query_row(
                    "SELECT version FROM clawboo_schema_versions WHERE component = ?1",
                    [part.component],
                    |r| r.get("version"),
                )
                .or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(0),
                    e => Err(e),
                })?;
            for (index, step) in part.steps.iter().enumerate() {
                if (index as i64) < current {
                    continue;
                }
                step.apply(tx)?;
            }
            tx.execute(
                "INSERT INTO clawboo_schema_versions (component, version) VALUES (?1, ?2)
                 ON CONFLICT(component) DO UPDATE SET version = max(version, excluded.version)",
                rusqlite::params![part.component, part.steps.len() as i64],
            )?;
        }
        Ok(())
    })
}

/// Why `path` could not be opened, named once: SQLite's "unable to open database file: <path>"
/// says neither why nor anything the error line does not already say, so the operating system is
/// asked for its reason; other SQLite messages lose any copy of the path.
fn open_cause(path: &Path, err: &rusqlite::Error) -> String {
    if err.sqlite_error_code() == Some(ErrorCode::CannotOpen) {
        let probe = if path.exists() {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(path)
        } else {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .inspect(|_| {
                    // The probe file is ours; SQLite would have created it anyway.
                    let _ = std::fs::remove_file(path);
                })
        };
        if let Err(io) = probe {
            return io.to_string();
        }
        return "unable to open database file".to_owned();
    }
    err.to_string()
        .replace(&format!(": {}", path.display()), "")
        .replace(&path.display().to_string(), "the file")
}

/// Every component's recorded schema version (`clawboo_schema_versions`), by component name.
pub fn schema_versions(conn: &Connection) -> rusqlite::Result<Vec<(String, i64)>> {
    conn.prepare_cached(
        "SELECT component, version FROM clawboo_schema_versions ORDER BY component",
    )?
    .query_map([], |r| Ok((r.get("component")?, r.get("version")?)))?
    .collect()
}

/// A connection to the shared database, guarded for use from several tasks of one process, and the
/// clock its rows are stamped from.
#[derive(Debug)]
pub struct Db {
    conn: Mutex<Connection>,
    path: PathBuf,
    clock: Clock,
    changes: Changes,
}

/// Exclusive use of a [`Db`]'s connection (it derefs to [`Connection`]), carrying the `Db`'s
/// [`Clock`] so a repository stamps rows with [`Conn::now_ms`].
#[derive(Debug)]
pub struct Conn<'db> {
    guard: MutexGuard<'db, Connection>,
    clock: &'db Clock,
}

impl Conn<'_> {
    /// The time of the `Db` this connection came from, in ms since the epoch.
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// The clock of the `Db` this connection came from.
    pub fn clock(&self) -> &Clock {
        self.clock
    }
}

impl Deref for Conn<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        &self.guard
    }
}

impl DerefMut for Conn<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        &mut self.guard
    }
}

impl Db {
    /// Opens (creating if needed) the database file at `path` and its parent folder, applies the
    /// pragmas and brings the schema of `parts` up to date. (`Db::open`, in `crate::schema`, passes
    /// every component.)
    pub(crate) fn open_with_schema(path: &Path, parts: &[SchemaPart]) -> Result<Self, DbError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            if parent.exists() && !parent.is_dir() {
                return Err(DbError::NotAFolder {
                    path: parent.to_path_buf(),
                });
            }
            std::fs::create_dir_all(parent).map_err(|source| DbError::CreateFolder {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        if path.is_dir() {
            return Err(DbError::IsADirectory {
                path: path.to_path_buf(),
            });
        }
        let open_err = |source| DbError::Open {
            path: path.to_path_buf(),
            cause: open_cause(path, &source),
        };
        let conn = Connection::open(path).map_err(open_err)?;
        configure(&conn).map_err(open_err)?;
        ensure_schema(&conn, parts).map_err(open_err)?;
        Ok(Self {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
            clock: Clock::system(),
            changes: Changes::for_file(path),
        })
    }

    /// Opens a private in-memory database with the schema of `parts`, for unit tests.
    /// (`Db::open_in_memory`, in `crate::schema`, passes every component.)
    pub(crate) fn open_in_memory_with_schema(parts: &[SchemaPart]) -> Result<Self, DbError> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch("PRAGMA foreign_keys = ON")?;
        stable_plans(&conn)?;
        ensure_schema(&conn, parts)?;
        Ok(Self {
            conn: Mutex::new(conn),
            path: PathBuf::from(":memory:"),
            clock: Clock::system(),
            changes: Changes::in_memory(),
        })
    }

    /// The file this database lives in (`:memory:` for [`Db::open_in_memory`]).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// This database stamping its rows from `clock` instead of the system clock (tests; a bin
    /// under test gets [`Clock::from_env`]).
    pub(crate) fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The clock this database's rows are stamped from.
    #[cfg(test)]
    pub(crate) fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The change feed of this database's file, shared by every `Db` on the file in this process:
    /// how a waiting call learns that another connection committed ([`watch`]).
    pub(crate) fn changes(&self) -> &Changes {
        &self.changes
    }

    /// The time of this database's clock, in ms since the epoch.
    pub(crate) fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// A second connection to this database's file that only reads (`PRAGMA query_only`), with
    /// the pragmas a read needs ([`read_settings`]); `None` for an in-memory database, which no
    /// other connection can open. For work that reads beside the [`Db::conn`] holder on another
    /// thread: it runs no schema step and never writes.
    pub(crate) fn second_reader(&self) -> rusqlite::Result<Option<Connection>> {
        // SQLite opens `:memory:` as a new private database, whatever the caller meant.
        if self.path == Path::new(":memory:") {
            return Ok(None);
        }
        let conn = Connection::open_with_flags(
            &self.path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        read_settings(&conn)?;
        conn.execute_batch("PRAGMA query_only = ON;")?;
        Ok(Some(conn))
    }

    /// Exclusive use of the connection. A poisoned lock (a panic in an earlier holder) is recovered:
    /// SQLite's own transaction state, not the mutex, protects the data. Not API: the workspace's
    /// own tools (`cargo xtask bench`) seed stores through it.
    #[doc(hidden)]
    pub fn conn(&self) -> Conn<'_> {
        let guard = match self.conn.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            // Held by another call of this handle: waiting is a wait (`crate::blocking`).
            Err(TryLockError::WouldBlock) => {
                may_wait(|| self.conn.lock().unwrap_or_else(|p| p.into_inner()))
            }
        };
        Conn {
            guard,
            clock: &self.clock,
        }
    }
}

#[cfg(test)]
mod tests;
