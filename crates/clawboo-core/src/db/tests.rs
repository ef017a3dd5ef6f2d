use super::*;

#[test]
fn a_file_where_the_folder_should_be_is_named_as_such() {
    let dir = std::env::temp_dir().join(format!("clawboo-db-not-a-folder-{}", new_id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("plain-file");
    std::fs::write(&file, "x").unwrap();
    let err = Db::open(&file.join("clawboo.db")).unwrap_err();
    assert!(
        matches!(&err, DbError::NotAFolder { path } if *path == file),
        "{err}"
    );
    assert!(err.to_string().contains("it is a file, not a folder"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn env_path_is_trimmed_and_blank_means_unset() {
    let home = Path::new("/home/someone");
    assert_eq!(
        resolve_db_path(Some("  /data/x.db \n"), Some(home)).unwrap(),
        PathBuf::from("/data/x.db")
    );
    assert_eq!(
        resolve_db_path(Some("   "), Some(home)).unwrap(),
        home.join(".openclaw/clawboo/clawboo.db")
    );
    assert_eq!(
        resolve_db_path(None, Some(home)).unwrap(),
        home.join(".openclaw/clawboo/clawboo.db")
    );
    assert!(matches!(resolve_db_path(None, None), Err(DbError::NoPath)));
}

#[test]
fn a_manual_clock_moves_only_when_told_and_its_clones_share_the_time() {
    let clock = Clock::manual(1_000);
    let db = Db::open_in_memory().unwrap().with_clock(clock.clone());
    assert!(db.clock().is_test());
    assert_eq!((db.now_ms(), db.conn().now_ms()), (1_000, 1_000));
    clock.advance(Duration::from_millis(250));
    assert_eq!(
        db.now_ms(),
        1_250,
        "an advance through a clone is seen by the Db"
    );
    db.clock().set(5);
    assert_eq!(clock.now_ms(), 5, "and a set through the Db by the clone");
}

#[test]
fn a_stepping_clock_gives_every_reading_a_later_time() {
    let clock = Clock::stepping(100, 1);
    let readings: Vec<i64> = (0..4).map(|_| clock.now_ms()).collect();
    assert_eq!(readings, [100, 101, 102, 103]);
}

#[test]
fn the_system_clock_is_not_moved_by_a_test() {
    let clock = Clock::system();
    assert!(!clock.is_test());
    let before = clock.now_ms();
    clock.advance(Duration::from_secs(3_600));
    clock.set(0);
    let after = clock.now_ms();
    assert!(
        after >= before && after > 1_600_000_000_000,
        "{before} {after}"
    );
    assert!(!Db::open_in_memory().unwrap().clock().is_test());
}

#[test]
fn the_test_clock_variable_is_a_start_time_in_debug_builds_only() {
    let clock = Clock::from_env_value(Some(" 42 "));
    assert_eq!(clock.is_test(), cfg!(debug_assertions));
    if cfg!(debug_assertions) {
        assert_eq!((clock.now_ms(), clock.now_ms()), (42, 43));
    }
    for unset in [None, Some(""), Some("  "), Some("soon")] {
        assert!(!Clock::from_env_value(unset).is_test(), "{unset:?}");
    }
}

#[test]
fn ids_are_bare_uuid_v4() {
    let id = new_id();
    assert_eq!(id.len(), 36);
    assert_eq!(id, id.to_lowercase());
    assert_eq!(&id[14..15], "4");
    assert_ne!(new_id(), id);
}

#[test]
fn open_creates_parent_folder_and_schema_is_idempotent() {
    let dir = std::env::temp_dir().join(format!("clawboo-db-{}", new_id()));
    let path = dir.join("nested").join("clawboo.db");
    let first = Db::open(&path).unwrap();
    drop(first);
    let again = Db::open(&path).unwrap();
    let mode: String = again
        .conn()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let fk: i64 = again
        .conn()
        .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
        .unwrap();
    assert_eq!(fk, 1);
    let mapped: i64 = again
        .conn()
        .query_row("PRAGMA mmap_size", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mapped, 2_147_418_112);
    drop(again);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn failed_immediate_body_rolls_back() {
    let db = Db::open_in_memory().unwrap();
    let conn = db.conn();
    conn.execute_batch("CREATE TABLE t (x INTEGER)").unwrap();
    let result: Result<(), rusqlite::Error> = immediate(&conn, |tx| {
        tx.execute("INSERT INTO t VALUES (1)", [])?;
        Err(rusqlite::Error::QueryReturnedNoRows)
    });
    assert!(result.is_err());
    let n: i64 = conn
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 0);
    immediate::<_, _, rusqlite::Error>(&conn, |tx| {
        tx.execute("INSERT INTO t VALUES (2)", [])?;
        Ok(())
    })
    .unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1);
}

#[test]
fn a_file_that_is_not_sqlite_is_an_open_error() {
    let dir = std::env::temp_dir().join(format!("clawboo-db-{}", new_id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("not-a-db.db");
    std::fs::write(&path, vec![b'x'; 4096]).unwrap();
    let err = Db::open(&path).unwrap_err();
    assert!(matches!(err, DbError::Open { .. }), "{err}");
    let text = err.to_string();
    assert_eq!(
        text.matches(&path.display().to_string()).count(),
        1,
        "{text}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_directory_given_as_the_database_says_so_naming_it_once() {
    let dir = std::env::temp_dir().join(format!("clawboo-db-{}", new_id()));
    std::fs::create_dir_all(&dir).unwrap();
    let err = Db::open(&dir).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, DbError::IsADirectory { .. }), "{text}");
    assert!(text.contains("is a directory"), "{text}");
    assert_eq!(
        text.matches(&format!("{} ", dir.display())).count()
            + text.matches(&format!("{}:", dir.display())).count(),
        1,
        "the path is named once as the culprit: {text}"
    );
    assert!(!text.contains("unable to open"), "{text}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[cfg(unix)]
#[test]
fn an_unwritable_folder_names_the_operating_system_cause() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("clawboo-db-{}", new_id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o500)).unwrap();
    let path = dir.join("clawboo.db");
    // Permissions do not bind a privileged user; the case only means something without them.
    if std::fs::write(dir.join("probe"), "x").is_err() {
        let text = Db::open(&path).unwrap_err().to_string();
        assert!(text.contains("ermission denied"), "{text}");
        assert_eq!(
            text.matches(&path.display().to_string()).count(),
            1,
            "{text}"
        );
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_cached_statement_is_not_planned_again_when_its_values_change() {
    let dir = std::env::temp_dir().join(format!("clawboo-db-stable-plans-{}", new_id()));
    let db = Db::open(&dir.join("clawboo.db")).unwrap();
    let conn = db.conn();
    conn.execute_batch(
        "CREATE VIRTUAL TABLE words USING fts5(body);
         INSERT INTO words(body) VALUES ('one lock'), ('two locks'), ('the lock again');",
    )
    .unwrap();
    // A `MATCH ?` and a `LIMIT ?`: without stable plans SQLite marks such a statement expired at
    // every bind and prepares it again at its next step.
    let sql = "SELECT count(*) FROM (SELECT 1 FROM words WHERE words MATCH ?1 LIMIT ?2)";
    for (query, limit, expected) in [("lock", 5, 2), ("lock OR locks", 1, 1), ("two", 9, 1)] {
        let mut statement = conn.prepare_cached(sql).unwrap();
        let found: i64 = statement
            .query_row(rusqlite::params![query, limit], |r| r.get(0))
            .unwrap();
        assert_eq!(found, expected, "{query}");
        assert_eq!(
            statement.get_status(rusqlite::StatementStatus::RePrepare),
            0,
            "prepared again for {query:?}"
        );
    }
    drop(conn);
    drop(db);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sqlite_is_built_without_its_memory_statistics() {
    // `.cargo/config.toml` sets the flag; without it every allocation SQLite makes takes a
    // process-wide mutex that a search's two reading threads contend for.
    let db = Db::open_in_memory().unwrap();
    let conn = db.conn();
    let options: Vec<String> = conn
        .prepare("PRAGMA compile_options")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(
        options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0"),
        "compile options: {options:?}"
    );
}
