use std::sync::{Arc, Barrier};
use std::time::Duration;

use super::*;
use crate::board::{AuthorType, NewTask, add_comment, claim, comments, get, insert, update_status};
use crate::db::{Clock, Db};

const START: i64 = 1_700_000_000_000;

fn board() -> Db {
    Db::open_in_memory()
        .unwrap()
        .with_clock(Clock::manual(START))
}

fn todo(db: &Db) -> String {
    insert(
        &db.conn(),
        &NewTask {
            title: "t".into(),
            ..NewTask::default()
        },
    )
    .unwrap()
    .id
}

fn system_comments(db: &Db, id: &str) -> Vec<String> {
    comments(&db.conn(), id)
        .unwrap()
        .into_iter()
        .filter(|c| c.author_type == "system")
        .map(|c| c.body)
        .collect()
}

fn after(db: &Db, seconds: u64) {
    db.clock().advance(Duration::from_secs(seconds));
}

#[test]
fn a_claim_without_a_lease_keeps_the_reference_shape() {
    let db = board();
    let id = todo(&db);
    let task = claim(&db.conn(), &id, "a1", None, None).unwrap();
    assert_eq!(task.lease_expires_at, None);
    let json = serde_json::to_value(&task).unwrap();
    assert!(json.get("leaseExpiresAt").is_none(), "{json}");
    after(&db, 1_000_000);
    assert_eq!(expire_leases(&db.conn()).unwrap(), 0, "no lease, no expiry");
}

#[test]
fn a_leased_claim_shows_when_it_runs_out() {
    let db = board();
    let id = todo(&db);
    let task = claim(&db.conn(), &id, "a1", None, Some(60)).unwrap();
    assert_eq!(task.lease_expires_at, Some(START + 60_000));
    let json = serde_json::to_value(&task).unwrap();
    assert_eq!(json["leaseExpiresAt"], START + 60_000);
    assert_eq!(next_expiry(&db.conn(), None).unwrap(), Some(START + 60_000));
    assert_eq!(next_expiry(&db.conn(), Some("other-team")).unwrap(), None);
}

#[test]
fn a_lease_that_runs_out_lets_another_agent_claim_and_says_so_once() {
    let db = board();
    let id = todo(&db);
    claim(&db.conn(), &id, "a1", None, Some(60)).unwrap();
    after(&db, 59);
    assert_eq!(
        claim(&db.conn(), &id, "a2", None, None),
        Err(BoardError::Conflict),
        "the lease still holds"
    );
    after(&db, 1);
    let taken = claim(&db.conn(), &id, "a2", Some("codex"), None).unwrap();
    assert_eq!(taken.assignee_agent_id.as_deref(), Some("a2"));
    assert_eq!(taken.status, Status::InProgress);
    assert_eq!(taken.lease_expires_at, None);
    assert_eq!(
        system_comments(&db, &id),
        [format!(
            "lease expired: a1 held this task until {} (ms since the epoch) without renewing it; the task went back to todo",
            START + 60_000
        )]
    );
    assert_eq!(
        claim(&db.conn(), &id, "a3", None, None),
        Err(BoardError::Conflict)
    );
    assert_eq!(expire_leases(&db.conn()).unwrap(), 0);
    assert_eq!(system_comments(&db, &id).len(), 1, "written once");
}

#[test]
fn reads_apply_due_expiries_once() {
    let db = board();
    let ids: Vec<String> = (0..3).map(|_| todo(&db)).collect();
    claim(&db.conn(), &ids[0], "a1", None, Some(10)).unwrap();
    claim(&db.conn(), &ids[1], "a2", None, Some(20)).unwrap();
    claim(&db.conn(), &ids[2], "a3", None, None).unwrap();
    after(&db, 15);
    assert_eq!(expire_leases(&db.conn()).unwrap(), 1);
    assert_eq!(expire_leases(&db.conn()).unwrap(), 0);
    let back = get(&db.conn(), &ids[0]).unwrap().unwrap();
    assert_eq!(
        (back.status, back.assignee_agent_id),
        (Status::Todo, None),
        "returned to todo, unassigned"
    );
    assert_eq!(system_comments(&db, &ids[0]).len(), 1);
    after(&db, 1_000);
    assert_eq!(expire_leases(&db.conn()).unwrap(), 1, "only the leased one");
    assert_eq!(
        get(&db.conn(), &ids[2]).unwrap().unwrap().status,
        Status::InProgress
    );
}

#[test]
fn renewals_by_the_holder_keep_the_task() {
    let db = board();
    let id = todo(&db);
    claim(&db.conn(), &id, "a1", None, Some(60)).unwrap();
    after(&db, 50);
    let renewed = renew(&db.conn(), &id, "a1", None).unwrap();
    assert_eq!(renewed.lease_expires_at, Some(START + 110_000));
    after(&db, 50);
    // A comment by the holder renews; one by someone else does not.
    add_comment(
        &db.conn(),
        &id,
        "still on it",
        Some("a1"),
        AuthorType::Agent,
    )
    .unwrap();
    add_comment(&db.conn(), &id, "me too", Some("a2"), AuthorType::Agent).unwrap();
    let task = get(&db.conn(), &id).unwrap().unwrap();
    assert_eq!(task.lease_expires_at, Some(START + 160_000));
    after(&db, 50);
    // A status change that keeps the task in progress renews from now.
    let kept = update_status(&db.conn(), &id, Status::InProgress).unwrap();
    assert_eq!(kept.lease_expires_at, Some(START + 210_000));
    after(&db, 50);
    assert_eq!(expire_leases(&db.conn()).unwrap(), 0);
    assert_eq!(
        claim(&db.conn(), &id, "a2", None, None),
        Err(BoardError::Conflict)
    );
    // A longer renewal is the new length from now.
    let longer = renew(&db.conn(), &id, "a1", Some(600)).unwrap();
    assert_eq!(longer.lease_expires_at, Some(START + 200_000 + 600_000));
    assert!(system_comments(&db, &id).is_empty());
}

#[test]
fn leaving_in_progress_ends_the_lease() {
    let db = board();
    let id = todo(&db);
    claim(&db.conn(), &id, "a1", None, Some(60)).unwrap();
    let blocked = update_status(&db.conn(), &id, Status::Blocked).unwrap();
    assert_eq!(blocked.lease_expires_at, None);
    let back = update_status(&db.conn(), &id, Status::InProgress).unwrap();
    assert_eq!(
        back.lease_expires_at, None,
        "a lease comes only with a claim"
    );
    after(&db, 3_600);
    assert_eq!(expire_leases(&db.conn()).unwrap(), 0);
    assert_eq!(back.assignee_agent_id.as_deref(), Some("a1"));
}

#[test]
fn a_late_holder_finds_the_task_returned_to_todo() {
    let db = board();
    let id = todo(&db);
    claim(&db.conn(), &id, "a1", None, Some(60)).unwrap();
    after(&db, 61);
    let err = update_status(&db.conn(), &id, Status::Done).unwrap_err();
    assert!(
        matches!(&err, BoardError::IllegalTransition { from, .. } if from == "todo"),
        "{err}"
    );
    assert_eq!(system_comments(&db, &id).len(), 1);

    let second = todo(&db);
    claim(&db.conn(), &second, "a1", None, Some(60)).unwrap();
    after(&db, 61);
    let late = renew(&db.conn(), &second, "a1", None).unwrap_err();
    assert_eq!(
        late.to_string(),
        format!(
            "lease_expired (a1's lease ran out at {} (ms since the epoch); the task went back to todo)",
            START + 61_000 + 60_000
        )
    );
    assert_eq!(system_comments(&db, &second).len(), 1);
}

#[test]
fn renewal_refusals_name_what_is_wrong() {
    let db = board();
    let id = todo(&db);
    assert_eq!(
        renew(&db.conn(), &id, "a1", Some(60))
            .unwrap_err()
            .to_string(),
        "not_holder (the task is todo, assigned to nobody)"
    );
    claim(&db.conn(), &id, "a1", None, None).unwrap();
    assert_eq!(
        renew(&db.conn(), &id, "a2", Some(60))
            .unwrap_err()
            .to_string(),
        "not_holder (the task is in_progress, assigned to a1)"
    );
    assert_eq!(
        renew(&db.conn(), &id, "a1", None).unwrap_err().to_string(),
        "no_lease (the task has none: pass leaseSeconds to start one)"
    );
    let started = renew(&db.conn(), &id, "a1", Some(30)).unwrap();
    assert_eq!(started.lease_expires_at, Some(START + 30_000));
    assert_eq!(
        renew(&db.conn(), "ghost", "a1", None),
        Err(BoardError::no_task("ghost"))
    );
}

#[test]
fn a_lease_left_behind_by_a_writer_that_does_not_know_leases_expires_nothing() {
    let db = board();
    let id = todo(&db);
    claim(&db.conn(), &id, "a1", None, Some(60)).unwrap();
    // The reference's process moves the task on and later claims it again: it bumps
    // `updated_at` and leaves the lease columns alone.
    db.conn()
        .execute(
            "UPDATE tasks SET status = 'in_progress', assignee_agent_id = 'ref-agent', updated_at = ?1
             WHERE id = ?2",
            params![START + 1, id],
        )
        .unwrap();
    let task = get(&db.conn(), &id).unwrap().unwrap();
    assert_eq!(task.lease_expires_at, None, "not this claim's lease");
    after(&db, 3_600);
    assert_eq!(expire_leases(&db.conn()).unwrap(), 0);
    assert_eq!(
        get(&db.conn(), &id)
            .unwrap()
            .unwrap()
            .assignee_agent_id
            .as_deref(),
        Some("ref-agent")
    );
}

#[test]
fn the_due_check_of_the_reads_uses_the_lease_index() {
    let db = board();
    let plan: Vec<String> = db
        .conn()
        .prepare(&format!(
            "EXPLAIN QUERY PLAN SELECT EXISTS (SELECT 1 FROM tasks WHERE lease_expires_at <= ?1 AND {HELD})"
        ))
        .unwrap()
        .query_map([START], |r| r.get::<_, String>("detail"))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(
        plan.iter().any(|step| step.contains("idx_tasks_lease")),
        "{plan:?}"
    );
}

#[test]
fn an_expiry_racing_eight_claimers_has_one_winner_and_one_comment() {
    let dir = std::env::temp_dir().join(format!("clawboo-lease-{}", new_id()));
    let path = dir.join("clawboo.db");
    let clock = Clock::manual(START);
    let first = Db::open(&path).unwrap().with_clock(clock.clone());
    let id = todo(&first);
    claim(&first.conn(), &id, "gone", None, Some(60)).unwrap();
    clock.advance(Duration::from_secs(61));
    let start = Arc::new(Barrier::new(8));
    let racers: Vec<_> = (0..8)
        .map(|n| {
            let (path, clock, id, start) =
                (path.clone(), clock.clone(), id.clone(), Arc::clone(&start));
            std::thread::spawn(move || {
                let db = Db::open(&path).unwrap().with_clock(clock);
                start.wait();
                claim(&db.conn(), &id, &format!("agent-{n}"), None, Some(60)).is_ok()
            })
        })
        .collect();
    let winners = racers
        .into_iter()
        .map(|r| r.join().unwrap())
        .filter(|won| *won)
        .count();
    assert_eq!(winners, 1);
    assert_eq!(system_comments(&first, &id).len(), 1);
    drop(first);
    let _ = std::fs::remove_dir_all(dir);
}
