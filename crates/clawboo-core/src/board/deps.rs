//! Dependencies between tasks and the ready queue they decide.
//!
//! Owns: the `task_deps` table. Guarantees: a link never closes a cycle (direct or transitive,
//! checked inside the `BEGIN IMMEDIATE` that writes it); a duplicate link changes nothing; a task is
//! ready when it is a live `todo` whose every dependency is `done`. Must never: change a task row.

use rusqlite::{Connection, params};

use super::task::{TASK_COLUMNS, exists};
use super::{BoardError, Task};
use crate::db::{Conn, immediate};

/// The ready queue: live `todo` tasks (of `team`, when given) whose every dependency is `done`,
/// most urgent first, then most recently updated.
pub fn ready(conn: &Connection, team: Option<&str>) -> Result<Vec<Task>, BoardError> {
    let sql = format!(
        "SELECT {TASK_COLUMNS} FROM tasks
         WHERE status = 'todo' AND dropped = 0
           AND (?1 IS NULL OR team_id = ?1)
           AND NOT EXISTS (SELECT 1 FROM task_deps d JOIN tasks dt ON dt.id = d.depends_on_task_id
                           WHERE d.task_id = tasks.id AND dt.status != 'done')
         ORDER BY priority DESC, updated_at DESC, rowid DESC"
    );
    let rows = conn
        .prepare_cached(&sql)?
        .query_map(params![team], Task::from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// Makes `task_id` wait on `depends_on`. Refuses self-links and any link that would close a cycle,
/// direct or transitive; a duplicate link succeeds without change.
pub fn link(conn: &Conn<'_>, task_id: &str, depends_on: &str) -> Result<(), BoardError> {
    let cycle = || BoardError::Cycle {
        task: task_id.to_owned(),
        depends_on: depends_on.to_owned(),
    };
    if task_id == depends_on {
        return Err(cycle());
    }
    immediate(conn, |tx| {
        for id in [task_id, depends_on] {
            if !exists(tx, id)? {
                return Err(BoardError::no_task(id));
            }
        }
        let closes_cycle: bool = tx
            .prepare_cached(
                "WITH RECURSIVE reach(id) AS (
                     SELECT ?1
                     UNION
                     SELECT d.depends_on_task_id FROM task_deps d JOIN reach r ON d.task_id = r.id
                 )
                 SELECT EXISTS (SELECT 1 FROM reach WHERE id = ?2) AS closes_cycle",
            )?
            .query_row([depends_on, task_id], |r| r.get("closes_cycle"))?;
        if closes_cycle {
            return Err(cycle());
        }
        tx.prepare_cached(
            "INSERT INTO task_deps (task_id, depends_on_task_id, tenant_id) VALUES (?1, ?2, NULL)
             ON CONFLICT DO NOTHING",
        )?
        .execute([task_id, depends_on])?;
        Ok(())
    })
}
