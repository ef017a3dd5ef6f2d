use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;
use crate::db::{Db, new_id};

/// A fresh file database and a second handle on it (as another process would have).
struct TwoHandles {
    dir: PathBuf,
    waiter: Db,
    writer: Db,
}

impl TwoHandles {
    fn new() -> Self {
        let dir = std::env::temp_dir().join(format!("clawboo-watch-{}", new_id()));
        let path = dir.join("clawboo.db");
        let waiter = Db::open(&path).unwrap();
        let writer = Db::open(&path).unwrap();
        writer
            .conn()
            .execute_batch("CREATE TABLE IF NOT EXISTS t (x INTEGER)")
            .unwrap();
        Self {
            dir,
            waiter,
            writer,
        }
    }

    fn commit(&self) {
        self.writer
            .conn()
            .execute("INSERT INTO t VALUES (1)", [])
            .unwrap();
    }
}

impl Drop for TwoHandles {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const PATIENCE: Duration = Duration::from_secs(20);

fn running(changes: &Changes) -> bool {
    lock(&changes.0.state).running
}

#[test]
fn handles_on_one_file_share_one_watcher_and_an_in_memory_db_has_its_own() {
    let both = TwoHandles::new();
    assert!(Arc::ptr_eq(
        &both.waiter.changes().0,
        &both.writer.changes().0
    ));
    let memory = Db::open_in_memory().unwrap();
    assert!(!Arc::ptr_eq(&memory.changes().0, &both.waiter.changes().0));
}

#[test]
fn a_commit_on_another_connection_wakes_a_listener() {
    let both = TwoHandles::new();
    let hangup = both.waiter.changes().hangup();
    let mut listener = both.waiter.changes().listen().unwrap();
    both.commit();
    let started = Instant::now();
    assert_eq!(
        listener.wait(Instant::now() + PATIENCE, &hangup),
        Wake::Changed
    );
    assert!(started.elapsed() < PATIENCE);
    // Woken once per change: with no further commit the next wait times out.
    assert_eq!(
        listener.wait(Instant::now() + TICK * 4, &hangup),
        Wake::TimedOut
    );
}

#[test]
fn a_commit_of_this_process_own_connection_counts_too() {
    let both = TwoHandles::new();
    let hangup = both.waiter.changes().hangup();
    let mut listener = both.waiter.changes().listen().unwrap();
    both.waiter
        .conn()
        .execute("INSERT INTO t VALUES (2)", [])
        .unwrap();
    assert_eq!(
        listener.wait(Instant::now() + PATIENCE, &hangup),
        Wake::Changed
    );
}

#[test]
fn a_raised_hangup_ends_a_wait_at_once_and_every_later_one() {
    let both = TwoHandles::new();
    let hangup = Arc::new(both.waiter.changes().hangup());
    let mut listener = both.waiter.changes().listen().unwrap();
    let raiser = {
        let hangup = Arc::clone(&hangup);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            hangup.raise();
        })
    };
    let started = Instant::now();
    assert_eq!(
        listener.wait(Instant::now() + PATIENCE, &hangup),
        Wake::Stopped
    );
    assert!(started.elapsed() < PATIENCE);
    raiser.join().unwrap();
    both.commit();
    assert_eq!(
        listener.wait(Instant::now() + PATIENCE, &hangup),
        Wake::Stopped
    );
}

#[test]
fn the_watcher_runs_only_while_someone_listens() {
    let both = TwoHandles::new();
    let changes = both.waiter.changes();
    assert!(!running(changes), "nobody has listened yet");
    let listener = changes.listen().unwrap();
    let second = changes.listen().unwrap();
    assert!(running(changes));
    drop(listener);
    std::thread::sleep(TICK * 4);
    assert!(running(changes), "one listener is left");
    drop(second);
    let deadline = Instant::now() + PATIENCE;
    while running(changes) && Instant::now() < deadline {
        std::thread::sleep(TICK);
    }
    assert!(!running(changes), "the thread stops when nobody listens");
    // And starts again for the next listener, which sees the next commit.
    let hangup = changes.hangup();
    let mut again = changes.listen().unwrap();
    both.commit();
    assert_eq!(
        again.wait(Instant::now() + PATIENCE, &hangup),
        Wake::Changed
    );
}

#[test]
fn wait_for_rechecks_after_each_commit_and_answers_at_the_deadline() {
    let both = TwoHandles::new();
    let changes = both.waiter.changes();
    let hangup = changes.hangup();
    let rows = |db: &Db| -> i64 {
        db.conn()
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap()
    };
    // Nothing arrives: the last answer comes back once the wait is over.
    let started = Instant::now();
    let empty: Result<i64, DbError> = changes.wait_for(Duration::from_millis(100), &hangup, || {
        Ok(Check::NotYet {
            answer: rows(&both.waiter),
            recheck: None,
        })
    });
    assert_eq!(empty.unwrap(), 0);
    assert!(started.elapsed() >= Duration::from_millis(100));

    // A row lands in another thread: the check that sees it ends the wait.
    let writer = std::thread::spawn({
        let path = both.dir.join("clawboo.db");
        move || {
            std::thread::sleep(Duration::from_millis(50));
            let other = Db::open(&path).unwrap();
            other
                .conn()
                .execute("INSERT INTO t VALUES (3)", [])
                .unwrap();
        }
    });
    let mut checks = 0;
    let found: Result<i64, DbError> = changes.wait_for(PATIENCE, &hangup, || {
        checks += 1;
        let n = rows(&both.waiter);
        Ok(if n > 0 {
            Check::Ready(n)
        } else {
            Check::NotYet {
                answer: n,
                recheck: None,
            }
        })
    });
    writer.join().unwrap();
    assert_eq!(found.unwrap(), 1);
    assert!(checks >= 2, "checked before and after the commit");

    // A zero wait checks once and starts no watcher of its own.
    let once: Result<&str, DbError> = changes.wait_for(Duration::ZERO, &hangup, || {
        Ok(Check::NotYet {
            answer: "once",
            recheck: Some(Instant::now()),
        })
    });
    assert_eq!(once.unwrap(), "once");
}

#[test]
fn a_recheck_time_wakes_a_wait_without_a_commit() {
    let both = TwoHandles::new();
    let changes = both.waiter.changes();
    let hangup = changes.hangup();
    let due = Instant::now() + Duration::from_millis(60);
    let started = Instant::now();
    let answer: Result<bool, DbError> = changes.wait_for(PATIENCE, &hangup, || {
        Ok(if Instant::now() >= due {
            Check::Ready(true)
        } else {
            Check::NotYet {
                answer: false,
                recheck: Some(due),
            }
        })
    });
    assert!(answer.unwrap());
    assert!(started.elapsed() < PATIENCE);
}

#[test]
fn an_in_memory_database_waits_until_its_deadline() {
    let db = Db::open_in_memory().unwrap();
    let hangup = db.changes().hangup();
    let mut listener = db.changes().listen().unwrap();
    assert!(!running(db.changes()));
    assert_eq!(
        listener.wait(Instant::now() + Duration::from_millis(30), &hangup),
        Wake::TimedOut
    );
}
