use super::*;
use crate::db::{Conn, Db};
use clawboo_tests::Rng;

fn say(conn: &Conn<'_>, room: &str, author: &str, body: &str) -> ChatPost {
    post(
        conn,
        &NewPost {
            room_id: room,
            team_id: room.trim_start_matches("team:"),
            author_agent_id: author,
            body,
            kind: PostKind::Peer,
        },
    )
    .unwrap()
}

fn everything(conn: &Connection, room: &str, since: i64) -> Vec<ChatPost> {
    read_batch(conn, room, since, "", DEFAULT_READ_LIMIT)
        .unwrap()
        .posts
}

#[test]
fn default_room_is_team_prefix_without_escaping() {
    assert_eq!(room_for_team("tm1"), "team:tm1");
    assert_eq!(room_for_team("a:b c"), "team:a:b c");
}

#[test]
fn seqs_start_at_one_per_room_and_are_gap_free() {
    let db = Db::open_in_memory().unwrap();
    let conn = db.conn();
    let seqs: Vec<i64> = (0..6)
        .map(|i| say(&conn, "team:tm1", &format!("a{i}"), "x").seq)
        .collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5, 6]);
    assert_eq!(say(&conn, "team:tm2", "a", "x").seq, 1);
    assert_eq!(say(&conn, "team:tm1", "a", "x").seq, 7);
    assert_eq!(room_max_seq(&conn, "team:tm1").unwrap(), 7);
    assert_eq!(room_max_seq(&conn, "team:none").unwrap(), 0);
}

#[test]
fn a_post_is_stored_whole_with_its_kind_and_team() {
    let db = Db::open_in_memory().unwrap();
    let conn = db.conn();
    let stored = say(&conn, "team:tm1", "a1", "hello");
    // The reference's host narrates the board with `kind = 'system'` rows; a read keeps the kind.
    conn.execute(
        "INSERT INTO team_chat (id, room_id, team_id, author_agent_id, body, kind, created_at, seq)
         VALUES ('n1', 'team:tm1', 'tm1', 'clawboo', 'Task done.', 'system', 1, 2)",
        [],
    )
    .unwrap();
    let read = everything(&conn, "team:tm1", 0);
    assert_eq!(read[0], stored);
    assert_eq!(read.len(), 2);
    assert_eq!(stored.kind, "peer");
    assert_eq!(stored.team_id, "tm1");
    assert_eq!(read[1].kind, "system");
    assert_eq!(stored.id.len(), 36);
}

#[test]
fn the_cursor_is_exclusive_and_the_echo_guard_drops_the_readers_posts() {
    let db = Db::open_in_memory().unwrap();
    let conn = db.conn();
    say(&conn, "team:tm1", "leader", "plan it");
    say(&conn, "team:tm1", "worker", "on it");
    say(&conn, "team:tm1", "leader", "thanks");
    let bodies = |posts: Vec<ChatPost>| posts.into_iter().map(|p| p.body).collect::<Vec<_>>();
    assert_eq!(
        bodies(everything(&conn, "team:tm1", 1)),
        ["on it", "thanks"]
    );
    let for_leader = read_batch(&conn, "team:tm1", 0, "leader", 10).unwrap();
    assert_eq!(bodies(for_leader.posts), ["on it"]);
    assert_eq!(for_leader.next_seq, 3);
    let for_worker = read_batch(&conn, "team:tm1", 0, "worker", 10).unwrap();
    assert_eq!(bodies(for_worker.posts), ["plan it", "thanks"]);
}

#[test]
fn a_reader_whose_own_posts_are_newest_still_advances_past_them() {
    let db = Db::open_in_memory().unwrap();
    let conn = db.conn();
    say(&conn, "team:tm1", "b", "from b");
    say(&conn, "team:tm1", "a", "a-one");
    say(&conn, "team:tm1", "a", "a-two");
    let batch = read_batch(&conn, "team:tm1", 0, "a", 500).unwrap();
    assert_eq!(batch.posts.len(), 1);
    assert_eq!(batch.next_seq, 3);
    let again = read_batch(&conn, "team:tm1", batch.next_seq, "a", 1).unwrap();
    assert!(again.posts.is_empty());
    assert_eq!(again.next_seq, 3);
}

#[test]
fn a_cursor_past_the_head_never_moves_backwards() {
    let db = Db::open_in_memory().unwrap();
    let conn = db.conn();
    say(&conn, "team:tm1", "a", "x");
    let batch = read_batch(&conn, "team:tm1", 40, "b", 5).unwrap();
    assert!(batch.posts.is_empty());
    assert_eq!(batch.next_seq, 40);
}

#[test]
fn paging_with_any_limit_delivers_every_peer_post_exactly_once() {
    for seed in 1..=200u64 {
        let mut rng = Rng::new(seed);
        let db = Db::open_in_memory().unwrap();
        let conn = db.conn();
        let authors = ["me", "p1", "p2"];
        let mut expected = Vec::new();
        let mut delivered = Vec::new();
        let mut cursor = 0;
        let rounds = 1 + rng.next_u64() % 6;
        for _ in 0..rounds {
            for _ in 0..rng.next_u64() % 12 {
                let author = *rng.pick(&authors);
                let p = say(&conn, "team:t", author, "x");
                if author != "me" {
                    expected.push(p.seq);
                }
            }
            let limit = 1 + (rng.next_u64() % 4) as u32;
            loop {
                let batch = read_batch(&conn, "team:t", cursor, "me", limit).unwrap();
                assert!(batch.next_seq >= cursor, "seed {seed}: cursor went back");
                assert!(batch.posts.len() <= limit as usize);
                delivered.extend(batch.posts.iter().map(|p| p.seq));
                let done = batch.posts.is_empty();
                cursor = batch.next_seq;
                if done {
                    break;
                }
            }
            assert_eq!(
                cursor,
                room_max_seq(&conn, "team:t").unwrap(),
                "seed {seed}"
            );
        }
        assert_eq!(delivered, expected, "seed {seed}");
    }
}
