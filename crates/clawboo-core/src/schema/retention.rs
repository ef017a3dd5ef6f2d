//! Retention: how long the audit log, the team rooms' posts and resolved approvals are kept, and
//! applying that policy once.
//!
//! Owns: the three kinds ([`Kind`]), their settings (one environment variable each,
//! `CLAWBOO_RETAIN_<KIND>_DAYS`, and the flags `serve` and `compact` take), the [`Policy`] read
//! from them, and [`apply`], which runs each kind's rule (written by the repository that owns the
//! table: `broker::audit`, `teamchat`, `broker::approvals`) through `db::retention` in bounded
//! batches and logs one line of what it removed.
//!
//! Decisions: **off by default**, every kind. The reference implementation keeps every row
//! forever, a purge cannot be undone, and an audit log is evidence: a person opts in, kind by
//! kind, with a number of days. A row is older than `days` when its time is before `now − days`
//! on the database's clock (so a test moves the clock instead of waiting). What each rule never
//! removes (a pending approval, a standing `allow_always` grant, a room's newest post) is said
//! beside the rule.
//!
//! Must never: remove anything when the policy is off or on a dry run; hold the write lock for
//! more than one batch at a time.

use serde::Serialize;

use crate::db::retention::{self, BATCH_ROWS, PurgeRule, Purged};
use crate::db::{Conn, DbError};
use crate::log;

/// A day, in milliseconds.
const DAY_MS: i64 = 86_400_000;

/// What retention may remove.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// `tool_call_audit` rows.
    Audit,
    /// `team_chat` posts.
    Posts,
    /// Resolved `tool_call_approvals` rows.
    Approvals,
}

impl Kind {
    /// Every kind, in the order reports list them.
    pub const ALL: [Kind; 3] = [Kind::Audit, Kind::Posts, Kind::Approvals];

    /// The kind's name in flags, JSON and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Audit => "audit",
            Kind::Posts => "posts",
            Kind::Approvals => "approvals",
        }
    }

    /// The environment variable holding the kind's age in days.
    pub fn env(self) -> &'static str {
        match self {
            Kind::Audit => "CLAWBOO_RETAIN_AUDIT_DAYS",
            Kind::Posts => "CLAWBOO_RETAIN_POSTS_DAYS",
            Kind::Approvals => "CLAWBOO_RETAIN_APPROVALS_DAYS",
        }
    }

    /// What its rows are, in a sentence.
    pub fn rows(self) -> &'static str {
        match self {
            Kind::Audit => "audit rows",
            Kind::Posts => "team-room posts",
            Kind::Approvals => "resolved approvals",
        }
    }

    fn rule(self) -> &'static PurgeRule {
        match self {
            Kind::Audit => &crate::broker::audit::RETENTION,
            Kind::Posts => &crate::teamchat::RETENTION,
            Kind::Approvals => &crate::broker::approvals::RETENTION,
        }
    }

    fn index(self) -> usize {
        match self {
            Kind::Audit => 0,
            Kind::Posts => 1,
            Kind::Approvals => 2,
        }
    }
}

/// How many days each kind is kept; `None` keeps it forever (the default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Policy {
    days: [Option<u32>; 3],
}

impl Policy {
    /// How long `kind` is kept, in days (`None`: forever).
    pub fn days(&self, kind: Kind) -> Option<u32> {
        self.days[kind.index()]
    }

    /// Keeps `kind` for `days` (`None`: forever).
    pub fn set(&mut self, kind: Kind, days: Option<u32>) {
        self.days[kind.index()] = days;
    }

    /// True when nothing is ever removed.
    pub fn is_off(&self) -> bool {
        self.days.iter().all(Option::is_none)
    }

    /// The policy the environment sets through `value` (a variable's value, blank as unset):
    /// an error names the variable and what it holds.
    pub fn from_env_with(value: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let mut policy = Self::default();
        for kind in Kind::ALL {
            let Some(text) = value(kind.env()).filter(|v| !v.trim().is_empty()) else {
                continue;
            };
            policy.set(kind, Some(parse_days(kind.env(), &text)?));
        }
        Ok(policy)
    }

    /// The policy this process's environment sets.
    pub fn from_env() -> Result<Self, String> {
        Self::from_env_with(|name| std::env::var(name).ok())
    }
}

impl std::fmt::Display for Policy {
    /// `audit 30 days, posts kept, approvals 7 days`, or `off`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_off() {
            return f.write_str("off");
        }
        let parts: Vec<String> = Kind::ALL
            .iter()
            .map(|&kind| match self.days(kind) {
                Some(days) => format!("{} {days} days", kind.as_str()),
                None => format!("{} kept", kind.as_str()),
            })
            .collect();
        f.write_str(&parts.join(", "))
    }
}

/// Reads a number of days given as `what` (a flag or a variable): a whole number, at least 1.
pub fn parse_days(what: &str, value: &str) -> Result<u32, String> {
    value
        .trim()
        .parse()
        .ok()
        .filter(|days| *days >= 1)
        .ok_or_else(|| format!("{what} needs a positive whole number of days, got {value:?}"))
}

/// What one kind's purge did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KindReport {
    /// The kind.
    pub kind: Kind,
    /// Its age limit in days.
    pub days: u32,
    /// Rows removed (on a dry run: that would be).
    pub rows: u64,
    /// Transactions it took (0 on a dry run).
    pub batches: u32,
}

/// What [`apply`] did, kind by kind (kinds kept forever are not listed).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// True when nothing was removed on purpose.
    #[serde(rename = "dryRun")]
    pub dry_run: bool,
    /// One entry per kind the policy limits.
    pub kinds: Vec<KindReport>,
}

impl Report {
    /// Rows removed (or that would be) over every kind.
    pub fn rows(&self) -> u64 {
        self.kinds.iter().map(|k| k.rows).sum()
    }

    /// One line: `removed 12 audit rows (older than 30 days, 1 batch), …`.
    pub fn summary(&self) -> String {
        if self.kinds.is_empty() {
            return "retention is off: nothing removed".to_owned();
        }
        let verb = if self.dry_run {
            "would remove"
        } else {
            "removed"
        };
        let parts: Vec<String> = self
            .kinds
            .iter()
            .map(|k| {
                let batches = if self.dry_run {
                    String::new()
                } else {
                    format!(
                        ", {} batch{}",
                        k.batches,
                        if k.batches == 1 { "" } else { "es" }
                    )
                };
                format!(
                    "{} {} (older than {} days{batches})",
                    k.rows,
                    k.kind.rows(),
                    k.days
                )
            })
            .collect();
        format!("{verb} {}", parts.join(", "))
    }
}

/// Applies `policy` once on `conn`'s database at its clock's time: every kind with an age limit,
/// at most `batch` rows per transaction (`None`: [`BATCH_ROWS`]). A dry run counts instead. Logs
/// one line (`info`) when it removed anything.
pub fn apply(
    conn: &Conn<'_>,
    policy: &Policy,
    dry_run: bool,
    batch: Option<u32>,
) -> Result<Report, DbError> {
    let now = conn.now_ms();
    let mut report = Report {
        dry_run,
        kinds: Vec::new(),
    };
    for kind in Kind::ALL {
        let Some(days) = policy.days(kind) else {
            continue;
        };
        let cutoff = now.saturating_sub(i64::from(days).saturating_mul(DAY_MS));
        let done = if dry_run {
            Purged {
                rows: retention::count(conn, kind.rule(), cutoff)?,
                batches: 0,
            }
        } else {
            retention::purge(conn, kind.rule(), cutoff, batch.unwrap_or(BATCH_ROWS))?
        };
        report.kinds.push(KindReport {
            kind,
            days,
            rows: done.rows,
            batches: done.batches,
        });
    }
    if !dry_run && report.rows() > 0 {
        log::info(&format!("retention: {}", report.summary()));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::broker::approvals;
    use crate::broker::audit::{self, Actor, Decision};
    use crate::db::{Clock, Db};
    use crate::teamchat::{self, NewPost, PostKind};

    const T0: i64 = 1_700_000_000_000;

    fn post(conn: &Conn<'_>, room: &str) -> teamchat::ChatPost {
        teamchat::post(
            conn,
            &NewPost {
                room_id: room,
                team_id: room,
                author_agent_id: "a",
                body: "hello",
                kind: PostKind::Peer,
            },
        )
        .unwrap()
    }

    fn count(conn: &Conn<'_>, table: &str) -> i64 {
        conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .unwrap()
    }

    fn every_kind(days: u32) -> Policy {
        let mut policy = Policy::default();
        for kind in Kind::ALL {
            policy.set(kind, Some(days));
        }
        policy
    }

    #[test]
    fn old_rows_go_young_rows_pending_approvals_and_standing_grants_stay() {
        let clock = Clock::manual(T0);
        let db = Db::open_in_memory().unwrap().with_clock(clock.clone());
        let conn = db.conn();
        let actor = Actor {
            agent_id: Some("agent"),
            tenant_id: None,
            caller: None,
        };
        let audit_row = || {
            audit::write_before(
                &conn,
                "echo",
                actor,
                Decision::Allow,
                &serde_json::json!({}),
                None,
            )
            .unwrap()
        };
        for _ in 0..3 {
            audit_row();
            post(&conn, "team:old");
        }
        post(&conn, "team:both");
        let request = || {
            approvals::create(
                &conn,
                &approvals::NewApproval {
                    tool_name: "delete_path",
                    actor,
                    args: &serde_json::json!({}),
                    reason: "risky",
                    ttl: Duration::from_secs(60),
                    heartbeat: None,
                },
            )
            .unwrap()
        };
        let (pending, denied, granted) = (request(), request(), request());
        // A denial writes the call's `after` audit row: a fourth old audit row.
        let tester = approvals::Decider::TESTER;
        approvals::resolve(&conn, &denied.id, approvals::Resolution::Deny, tester).unwrap();
        approvals::resolve(
            &conn,
            &granted.id,
            approvals::Resolution::AllowAlways,
            tester,
        )
        .unwrap();
        clock.advance(Duration::from_secs(40 * 86_400));
        audit_row();
        post(&conn, "team:both");

        let policy = every_kind(30);
        let dry = apply(&conn, &policy, true, None).unwrap();
        assert_eq!(dry.rows(), 4 + 3 + 1, "{dry:?}");
        assert_eq!(
            count(&conn, "tool_call_audit"),
            5,
            "a dry run removes nothing"
        );

        let done = apply(&conn, &policy, false, None).unwrap();
        let rows: Vec<(Kind, u64)> = done.kinds.iter().map(|k| (k.kind, k.rows)).collect();
        // Audit: the four old rows. Posts: two of team:old's three (its newest stays) and
        // team:both's old one. Approvals: the denied row only.
        assert_eq!(
            rows,
            [(Kind::Audit, 4), (Kind::Posts, 3), (Kind::Approvals, 1)]
        );
        assert_eq!(count(&conn, "tool_call_audit"), 1);
        let left: Vec<String> = conn
            .prepare("SELECT id FROM tool_call_approvals ORDER BY created_at")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert!(
            left.contains(&pending.id) && left.contains(&granted.id),
            "{left:?}"
        );
        assert_eq!(left.len(), 2);
        assert!(
            done.summary()
                .starts_with("removed 4 audit rows (older than 30 days, 1 batch)")
        );
        assert_eq!(
            apply(&conn, &Policy::default(), false, None)
                .unwrap()
                .rows(),
            0
        );
    }

    #[test]
    fn a_room_purged_to_its_last_post_keeps_counting_from_its_top_seq() {
        let clock = Clock::manual(T0);
        let db = Db::open_in_memory().unwrap().with_clock(clock.clone());
        let conn = db.conn();
        for _ in 0..5 {
            post(&conn, "team:t");
        }
        clock.advance(Duration::from_secs(10 * 86_400));
        let mut policy = Policy::default();
        policy.set(Kind::Posts, Some(1));
        assert_eq!(apply(&conn, &policy, false, None).unwrap().rows(), 4);
        assert_eq!(teamchat::room_max_seq(&conn, "team:t").unwrap(), 5);
        assert_eq!(post(&conn, "team:t").seq, 6);
        let batch = teamchat::read_batch(&conn, "team:t", 5, "reader", 10).unwrap();
        assert_eq!(batch.posts.len(), 1);
        assert_eq!(batch.next_seq, 6);
    }

    #[test]
    fn a_large_purge_takes_many_short_transactions() {
        let clock = Clock::manual(T0);
        let db = Db::open_in_memory().unwrap().with_clock(clock.clone());
        let conn = db.conn();
        let actor = Actor {
            agent_id: None,
            tenant_id: None,
            caller: None,
        };
        for _ in 0..1_200 {
            audit::write_before(
                &conn,
                "echo",
                actor,
                Decision::Allow,
                &serde_json::json!({}),
                None,
            )
            .unwrap();
        }
        clock.advance(Duration::from_secs(2 * 86_400));
        let mut policy = Policy::default();
        policy.set(Kind::Audit, Some(1));
        let report = apply(&conn, &policy, false, None).unwrap();
        assert_eq!(report.kinds[0].rows, 1_200);
        assert_eq!(
            report.kinds[0].batches, 3,
            "{BATCH_ROWS} rows at most per transaction"
        );
    }

    #[test]
    fn the_environment_sets_each_kind_and_a_bad_value_names_its_variable() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        assert!(Policy::from_env_with(env(&[])).unwrap().is_off());
        let policy = Policy::from_env_with(env(&[
            ("CLAWBOO_RETAIN_AUDIT_DAYS", "90"),
            ("CLAWBOO_RETAIN_POSTS_DAYS", " "),
        ]))
        .unwrap();
        assert_eq!(policy.days(Kind::Audit), Some(90));
        assert_eq!(policy.days(Kind::Posts), None);
        assert_eq!(
            policy.to_string(),
            "audit 90 days, posts kept, approvals kept"
        );
        for bad in ["0", "-3", "soon", "1.5"] {
            let pairs: &'static [(&str, &str)] =
                Box::leak(Box::new([("CLAWBOO_RETAIN_APPROVALS_DAYS", bad)]));
            let err = Policy::from_env_with(env(pairs)).unwrap_err();
            assert_eq!(
                err,
                format!(
                    "CLAWBOO_RETAIN_APPROVALS_DAYS needs a positive whole number of days, got {bad:?}"
                )
            );
        }
    }
}
