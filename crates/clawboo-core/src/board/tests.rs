use super::*;
use crate::db::Db;

fn db() -> Db {
    Db::open_in_memory().unwrap()
}

fn todo(conn: &Connection, title: &str) -> Task {
    insert(
        conn,
        &NewTask {
            title: title.into(),
            ..Default::default()
        },
    )
    .unwrap()
}

#[test]
fn created_task_defaults() {
    let db = db();
    let t = todo(&db.conn(), "x");
    assert_eq!(t.status, Status::Todo);
    assert_eq!(t.priority, 0);
    assert_eq!(t.assignee_agent_id, None);
    assert_eq!(t.created_at, t.updated_at);
    assert_eq!(t.completed_at, None);
}
