//! Change detection across processes: a waiter learns that some connection, of this process or
//! any other, committed to the database file, without asking the database itself.
//!
//! Owns: the process-wide registry of watchers (one per database file), each watcher's thread and
//! its dedicated connection, and the generation counter a watcher publishes. [`Changes`] is the
//! handle every [`Db`](super::Db) on a file shares; [`Listener`] is one waiter; [`Hangup`] is a
//! session's "stop waiting" flag.
//!
//! How: SQLite's `PRAGMA data_version` answers a different number on a connection when another
//! connection has committed to the file since that connection last asked. The watcher asks it on
//! its own connection every [`TICK`] and, when the number moved, adds one to its generation and
//! wakes every listener, which then runs its one targeted query (is there a new post for me? is a
//! task ready?) and sleeps again if not. The watcher's connection never writes, so every commit of
//! every other connection counts, this process's own included.
//!
//! Latency: a commit is seen at the watcher's next tick, so a waiter wakes at most [`TICK`]
//! (25 ms), half of it on average, after the commit, plus a thread wake-up and its own query.
//!
//! Cost: nobody listening, nothing: no thread, no connection. While anyone listens, one pragma per
//! [`TICK`] per process and file (the start of a read transaction: a look at the WAL index in shared
//! memory, microseconds), however many listen; listeners sleep on a condition variable and cost
//! nothing until a commit or their deadline. The thread exits, closing its connection, at its
//! first tick with no listener.
//!
//! Guarantees: a listener registered before its first query misses no commit after that query
//! (the watcher's starting point is taken before [`Changes::listen`] returns); a raised
//! [`Hangup`] ends the waits that watch it at once. An in-memory database has no other
//! connection: its listeners wake only at their deadline or hang-up.
//!
//! Must never: write to the database, or run a query per listener per tick.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError, Weak};
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::DbError;
use crate::log;

/// How often a watcher asks `PRAGMA data_version` while anyone listens: the worst-case delay
/// between a commit and a listener's wake-up (minus the wake-up itself).
pub const TICK: Duration = Duration::from_millis(25);

/// The change feed of one database file in this process: every [`Db`](super::Db) opened on the
/// file holds the same one. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Changes(Arc<Watch>);

/// A file's watcher: the generation its listeners wait on, and whether its thread runs.
#[derive(Debug)]
struct Watch {
    /// The file, or `None` for an in-memory database (nothing to watch).
    path: Option<PathBuf>,
    state: Mutex<State>,
    /// Notified on every new generation and every raised [`Hangup`].
    moved: Condvar,
}

#[derive(Debug, Default)]
struct State {
    /// How many commits (by other connections) the watcher has seen since it first ran; only
    /// ever grows.
    generation: u64,
    /// Live [`Listener`]s.
    listeners: usize,
    /// The watcher thread is running (it clears this, under the lock, as it exits).
    running: bool,
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The watchers of this process, by canonical file path. A watcher lives as long as a `Db` on its
/// file (or its thread) holds it; a dead entry is replaced by the next open.
fn registry() -> &'static Mutex<HashMap<PathBuf, Weak<Watch>>> {
    static WATCHES: OnceLock<Mutex<HashMap<PathBuf, Weak<Watch>>>> = OnceLock::new();
    WATCHES.get_or_init(Default::default)
}

impl Changes {
    /// The change feed of the file at `path`, shared with every other handle on it in this
    /// process.
    pub(crate) fn for_file(path: &Path) -> Self {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let mut watches = registry().lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(watch) = watches.get(&key).and_then(Weak::upgrade) {
            return Self(watch);
        }
        watches.retain(|_, watch| watch.strong_count() > 0);
        let watch = Arc::new(Watch::new(Some(key.clone())));
        watches.insert(key, Arc::downgrade(&watch));
        Self(watch)
    }

    /// The feed of an in-memory database, which no other connection can change.
    pub(crate) fn in_memory() -> Self {
        Self(Arc::new(Watch::new(None)))
    }

    /// Starts listening. Call it before the first query whose answer the caller may wait to see
    /// change: every commit after this returns wakes the listener. Starts the watcher (opening its
    /// connection and taking its starting point here, on the caller's thread) if it is not running.
    ///
    /// Errors: the watcher's connection could not be opened or read.
    pub fn listen(&self) -> Result<Listener, DbError> {
        let mut state = lock(&self.0.state);
        if !state.running
            && let Some(path) = &self.0.path
        {
            let conn = Connection::open(path)?;
            conn.busy_timeout(super::BUSY_TIMEOUT)?;
            let version = data_version(&conn)?;
            let watch = Arc::clone(&self.0);
            std::thread::Builder::new()
                .name("db-watch".into())
                .spawn(move || watch.run(conn, version))
                .map_err(|e| DbError::Open {
                    path: path.clone(),
                    cause: format!("cannot start its change watcher: {e}"),
                })?;
            state.running = true;
        }
        state.listeners += 1;
        Ok(Listener {
            watch: Arc::clone(&self.0),
            seen: state.generation,
        })
    }

    /// A fresh stop flag for the waits of one session on this feed.
    pub fn hangup(&self) -> Hangup {
        Hangup {
            raised: AtomicBool::new(false),
            watch: Arc::clone(&self.0),
        }
    }

    /// Runs `check` now and, while it answers [`Check::NotYet`], again after every commit to the
    /// file (or at the time it asks to be rechecked), until it answers [`Check::Ready`], `wait` has
    /// passed or `hangup` is raised; returns its last answer. With a zero `wait`, `check` runs once
    /// and nothing listens.
    pub fn wait_for<T, E: From<DbError>>(
        &self,
        wait: Duration,
        hangup: &Hangup,
        mut check: impl FnMut() -> Result<Check<T>, E>,
    ) -> Result<T, E> {
        if wait.is_zero() {
            return Ok(check()?.into_answer());
        }
        let deadline = Instant::now() + wait;
        let mut listener = self.listen()?;
        loop {
            let (answer, recheck) = match check()? {
                Check::Ready(answer) => return Ok(answer),
                Check::NotYet { answer, recheck } => (answer, recheck),
            };
            let until = recheck.map_or(deadline, |at| at.min(deadline));
            if listener.wait(until, hangup) == Wake::Stopped || Instant::now() >= deadline {
                return Ok(answer);
            }
        }
    }
}

/// What a [`Changes::wait_for`] check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check<T> {
    /// The answer to return now.
    Ready(T),
    /// Nothing worth returning yet: `answer` is returned if nothing better comes in time; look
    /// again after the next commit, or at `recheck` if that comes first (something the clock, not
    /// a commit, will change).
    NotYet {
        /// What to return at the deadline.
        answer: T,
        /// When to look again without a commit.
        recheck: Option<Instant>,
    },
}

impl<T> Check<T> {
    fn into_answer(self) -> T {
        match self {
            Check::Ready(answer) | Check::NotYet { answer, .. } => answer,
        }
    }
}

/// Why [`Listener::wait`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// Another connection committed since the listener last woke.
    Changed,
    /// The time given passed first.
    TimedOut,
    /// The hang-up was raised.
    Stopped,
}

/// One waiter on a file's changes (see [`Changes::listen`]); dropping it stops listening.
#[derive(Debug)]
pub struct Listener {
    watch: Arc<Watch>,
    /// The generation this listener has been woken for.
    seen: u64,
}

impl Listener {
    /// Sleeps until another connection commits (since the listener started or last woke), `until`
    /// passes, or `hangup` is raised.
    pub fn wait(&mut self, until: Instant, hangup: &Hangup) -> Wake {
        let mut state = lock(&self.watch.state);
        loop {
            if hangup.is_raised() {
                return Wake::Stopped;
            }
            if state.generation != self.seen {
                self.seen = state.generation;
                return Wake::Changed;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Wake::TimedOut;
            }
            state = self
                .watch
                .moved
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        lock(&self.watch.state).listeners -= 1;
    }
}

/// A session's "stop waiting" flag ([`Changes::hangup`]): once raised (by the session's close
/// hook) it ends every wait that watches it at once, and every later one before it sleeps.
#[derive(Debug)]
pub struct Hangup {
    raised: AtomicBool,
    watch: Arc<Watch>,
}

impl Hangup {
    /// Raises the flag and wakes the waits watching it.
    pub fn raise(&self) {
        self.raised.store(true, Ordering::SeqCst);
        // Taken so that a waiter between its check and its sleep cannot miss the wake-up.
        let _state = lock(&self.watch.state);
        self.watch.moved.notify_all();
    }

    /// Whether the flag is raised.
    pub fn is_raised(&self) -> bool {
        self.raised.load(Ordering::SeqCst)
    }
}

impl Watch {
    fn new(path: Option<PathBuf>) -> Self {
        Self {
            path,
            state: Mutex::new(State::default()),
            moved: Condvar::new(),
        }
    }

    /// The watcher thread: one pragma per tick while anyone listens.
    fn run(self: Arc<Self>, conn: Connection, mut version: i64) {
        loop {
            std::thread::sleep(TICK);
            {
                let mut state = lock(&self.state);
                if state.listeners == 0 {
                    state.running = false;
                    return;
                }
            }
            let moved = match data_version(&conn) {
                Ok(now) => std::mem::replace(&mut version, now) != now,
                Err(e) => {
                    // The listeners' own queries will meet and report the failure.
                    log::debug(&format!(
                        "the change watcher could not read the database: {e}"
                    ));
                    true
                }
            };
            if moved {
                lock(&self.state).generation += 1;
                self.moved.notify_all();
            }
        }
    }
}

/// SQLite's `PRAGMA data_version` on `conn`: a number that moves when another connection has
/// committed to the file since `conn` last asked (never for `conn`'s own commits).
pub(crate) fn data_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached("PRAGMA data_version")?
        .query_row([], |r| r.get(0))
}

#[cfg(test)]
mod tests;
