//! Unit tests of the brain with a fixed clock: the scenarios of spec §9 that need a date, the
//! credit loop, decay, the lifecycle and the vault's safety rules.

use clawboo_tests::{TempDir, clawbrain_score};
use rusqlite::Connection;

use super::memories::negated;
use super::*;

/// 2026-02-20T14:30:00.000Z.
const T0: i64 = 1_771_597_800_000;
const DAY: i64 = 86_400_000;

struct Vault {
    dir: TempDir,
    brain: Brain,
    clock: Clock,
}

impl Vault {
    fn new() -> Self {
        Self::at(T0)
    }

    fn at(ms: i64) -> Self {
        let dir = TempDir::new("clawbrain");
        let clock = Clock::manual(ms);
        let brain = Brain::open(&dir.path().join("memory"), "s1")
            .unwrap()
            .with_clock(clock.clone());
        Self { dir, brain, clock }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("memory")
    }

    fn advance(&self, ms: i64) {
        self.clock.set(self.clock.now_ms() + ms);
    }

    fn db(&self) -> Connection {
        Connection::open(self.root().join("engine.db")).unwrap()
    }

    fn score(&self, id: &str) -> f64 {
        clawbrain_score(&self.root(), id)
    }

    fn set_score(&self, id: &str, score: f64) {
        self.db()
            .execute(
                "UPDATE credit_records SET score = ?2 WHERE id = ?1",
                rusqlite::params![id, score],
            )
            .unwrap();
    }

    fn strategy(&self, text: &str) {
        std::fs::write(self.root().join("STRATEGY.md"), text).unwrap();
    }

    fn file(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root().join(rel)).unwrap()
    }

    fn store(
        &self,
        kind: MemoryType,
        category: &str,
        name: &str,
        content: &str,
        tags: &[&str],
    ) -> Stored {
        let tags: Vec<String> = tags.iter().map(|t| (*t).to_owned()).collect();
        self.brain
            .store(&NewMemory {
                kind,
                category: Some(category),
                name,
                content,
                tags: &tags,
                pinned: false,
            })
            .unwrap()
    }

    fn entity(&self, category: &str, name: &str, content: &str, tags: &[&str]) -> Stored {
        self.store(MemoryType::Entity, category, name, content, tags)
    }

    fn episode(&self, name: &str, content: &str, tags: &[&str]) -> Stored {
        self.store(MemoryType::Episode, "ignored", name, content, tags)
    }

    /// Makes `id` the session's newest turn, then reports `signal`.
    fn outcome(&self, id: &str, signal: Signal) -> Feedback {
        self.brain.retrieve(id).unwrap();
        self.brain.feedback(signal, None).unwrap()
    }

    fn log_rows(&self, action: &str) -> Vec<(String, String)> {
        let db = self.db();
        let mut stmt = db
            .prepare("SELECT target_ids, details FROM lifecycle_log WHERE action = ?1 ORDER BY id")
            .unwrap();
        stmt.query_map([action], |r| Ok((r.get("target_ids")?, r.get("details")?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }
}

#[test]
fn s5_an_episode_is_filed_under_its_utc_month() {
    let v = Vault::new();
    let stored = v.episode("test-ep", "- a session", &[]);
    assert_eq!(stored.id, "episode-2026-02-test-ep");
    assert_eq!(stored.path, "episodes/2026-02/test-ep.md");
    let text = v.file("episodes/2026-02/test-ep.md");
    assert!(text.contains("\ncategory: 2026-02\n"), "{text}");
    assert!(
        text.contains("\ncreated: 2026-02-20T14:30:00.000Z\nupdated: 2026-02-20T14:30:00.000Z\n")
    );
    assert!(text.contains("\ntags: []\n"));
}

#[test]
fn retrieval_counts_the_access_and_records_one_turn() {
    let v = Vault::new();
    v.entity("people", "alice-chen", "- ML engineer", &["ml-team"]);
    v.advance(60_000);
    let got = v.brain.retrieve("entity-people-alice-chen").unwrap();
    assert_eq!((got.credit_score, got.access_count), (0.5, 1));
    assert_eq!(got.last_accessed, "2026-02-20T14:31:00.000Z");
    assert_eq!(got.created_at, "2026-02-20T14:30:00.000Z");
    let turns: Vec<(String, Option<String>)> = v
        .db()
        .prepare("SELECT retrieved_memory_ids, outcome FROM turn_records")
        .unwrap()
        .query_map([], |r| {
            Ok((r.get("retrieved_memory_ids")?, r.get("outcome")?))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(turns, [("[\"entity-people-alice-chen\"]".to_owned(), None)]);
    assert_eq!(
        v.brain
            .retrieve("entity-people-nobody")
            .unwrap_err()
            .to_string(),
        "Memory not found: entity-people-nobody"
    );
}

#[test]
fn s18_ema_moves_scores_and_clamps_them_to_the_unit_interval() {
    let v = Vault::new();
    v.entity("projects", "a", "alpha", &[]);
    // α 0.1 (the default): positive_feedback pulls a fresh 0.5 down to 0.48.
    let fb = v.outcome("entity-projects-a", Signal::PositiveFeedback);
    assert_eq!(fb.updated[0].new_score, 0.5 * 0.9 + 0.1 * 0.3);
    v.strategy("alpha: 0.5\n");
    v.set_score("entity-projects-a", 0.5);
    v.outcome("entity-projects-a", Signal::UserCorrection);
    assert_eq!(v.score("entity-projects-a"), 0.04999999999999999);
    // Unclamped the next correction would give -0.175.
    let fb = v.outcome("entity-projects-a", Signal::UserCorrection);
    assert_eq!(fb.updated[0].new_score, 0.0);
    v.strategy("alpha: 1\n");
    v.set_score("entity-projects-a", 0.9);
    v.outcome("entity-projects-a", Signal::TaskCompleted);
    assert_eq!(v.score("entity-projects-a"), 0.5);
    let events: i64 = v
        .db()
        .query_row(
            "SELECT COUNT(*) AS n FROM credit_events WHERE memory_id = 'entity-projects-a'",
            [],
            |r| r.get("n"),
        )
        .unwrap();
    assert_eq!(events, 4);
    let access: i64 = v
        .db()
        .query_row("SELECT access_count FROM credit_records", [], |r| {
            r.get("access_count")
        })
        .unwrap();
    assert_eq!(access, 8, "4 retrievals and 4 outcomes");
}

#[test]
fn s19_credit_is_shared_by_the_turn_and_a_turn_resolves_once() {
    let v = Vault::new();
    v.entity("projects", "search-one", "x", &[]);
    v.entity("projects", "search-two", "y", &[]);
    let found = v.brain.search("search", None, Some(5.0)).unwrap();
    assert_eq!(found.total_matches, 2);
    let fb = v.brain.feedback(Signal::TaskCompleted, None).unwrap();
    assert_eq!(fb.updated.len(), 2);
    for m in &fb.updated {
        assert_eq!(m.new_score, 0.4853553390593274);
    }
    let again = v.brain.feedback(Signal::TaskCompleted, None).unwrap();
    assert!(again.turn_id.is_none() && again.updated.is_empty());
    let other = v
        .brain
        .feedback(Signal::TaskCompleted, Some("someone-else"))
        .unwrap();
    assert!(other.updated.is_empty());
}

#[test]
fn s20_decay_by_days_logs_one_row() {
    let v = Vault::new();
    v.entity("projects", "a", "alpha", &[]);
    let r = v.brain.decay(Some(7.0)).unwrap();
    assert_eq!(r.decayed, 1);
    assert_eq!(v.score("entity-projects-a"), 0.46619690995297414);
    assert_eq!(
        v.log_rows("decay"),
        [(
            "[\"entity-projects-a\"]".to_owned(),
            "Applied decay for 7 day(s)".to_owned()
        )]
    );
    assert_eq!(v.brain.decay(Some(0.0)).unwrap().decayed, 0);
    assert_eq!(v.log_rows("decay").len(), 1);
}

#[test]
fn decay_follows_days_since_last_access_and_never_counts_a_day_twice() {
    let v = Vault::new();
    v.entity("projects", "touched", "t", &[]);
    v.entity("projects", "untouched", "u", &[]);
    v.advance(9 * DAY);
    v.brain.retrieve("entity-projects-touched").unwrap();
    v.advance(DAY / 2);
    assert_eq!(
        v.brain.decay(None).unwrap().decayed,
        1,
        "under a day since access"
    );
    assert_eq!(v.score("entity-projects-touched"), 0.5);
    assert_eq!(
        v.score("entity-projects-untouched"),
        0.5 * (-0.01f64 * 9.5).exp()
    );
    v.advance(DAY);
    v.brain.decay(None).unwrap();
    let untouched = 0.5 * (-0.01f64 * 9.5).exp() * (-0.01f64).exp();
    assert!((v.score("entity-projects-untouched") - untouched).abs() < 1e-15);
    assert_eq!(
        v.score("entity-projects-touched"),
        0.5 * (-0.01f64 * 1.5).exp()
    );
}

#[test]
fn s21_prune_archives_low_scores_but_never_people_or_pinned() {
    let v = Vault::new();
    v.strategy("## Knobs\n- alpha: 0.5\n");
    v.entity("projects", "legacy-feature", "old", &[]);
    v.entity("people", "alice", "ML engineer", &[]);
    let tags: Vec<String> = Vec::new();
    v.brain
        .store(&NewMemory {
            kind: MemoryType::Entity,
            category: Some("projects"),
            name: "keep-me",
            content: "pinned",
            tags: &tags,
            pinned: true,
        })
        .unwrap();
    for id in [
        "entity-projects-legacy-feature",
        "entity-people-alice",
        "entity-projects-keep-me",
    ] {
        v.outcome(id, Signal::UserCorrection);
    }
    assert_eq!(v.brain.credit_report(None).unwrap().prune_candidates, 1);
    let report = v.brain.compact().unwrap();
    assert_eq!(report.pruned, 1);
    assert_eq!(
        report.details,
        ["Archived entity-projects-legacy-feature (score: 0.050)"]
    );
    assert!(matches!(
        v.brain.retrieve("entity-projects-legacy-feature"),
        Err(BrainError::NotFound(_))
    ));
    assert!(
        v.root()
            .join("archive/entities/projects/legacy-feature.md")
            .is_file()
    );
    v.brain.retrieve("entity-people-alice").unwrap();
    v.brain.retrieve("entity-projects-keep-me").unwrap();
    assert_eq!(v.log_rows("prune").len(), 1);
    assert!(v.brain.credit_report(None).unwrap().last_pruning.is_some());
}

#[test]
fn prune_threshold_and_minimum_age_come_from_strategy() {
    let v = Vault::new();
    v.entity("projects", "mid", "m", &[]);
    v.set_score("entity-projects-mid", 0.3);
    v.strategy("prune_threshold: 0.35\nprune_min_age_days: 14\n");
    assert_eq!(v.brain.compact().unwrap().pruned, 0, "too young");
    v.advance(15 * DAY);
    v.set_score("entity-projects-mid", 0.3);
    v.strategy("prune_threshold: 0.35\nprune_min_age_days: 14\ndecay_rate: 0\n");
    let report = v.brain.compact().unwrap();
    assert_eq!(report.pruned, 1, "{report:?}");
}

#[test]
fn s22_consolidation_merges_same_day_episodes_sharing_a_tag() {
    let v = Vault::at(1_771_581_600_000); // 2026-02-20T10:00:00.000Z
    v.episode("debug-auth", "- fixed login", &["auth", "debug"]);
    v.episode("debug-session", "- traced token flow", &["auth"]);
    v.episode("lonely", "- nothing shared", &["other"]);
    let report = v.brain.compact().unwrap();
    assert_eq!(report.consolidated, 1);
    let merged_id = format!("episode-2026-02-debug-auth-merged-{}", 1_771_581_600_000i64);
    assert_eq!(
        report.details[0],
        format!("Merged 2 episodes on 2026-02-20 into {merged_id} (score: 1.000)")
    );
    for gone in [
        "episode-2026-02-debug-auth",
        "episode-2026-02-debug-session",
    ] {
        assert!(matches!(
            v.brain.retrieve(gone),
            Err(BrainError::NotFound(_))
        ));
        let rows: i64 = v
            .db()
            .query_row(
                "SELECT COUNT(*) AS n FROM credit_records WHERE id = ?1",
                [gone],
                |r| r.get("n"),
            )
            .unwrap();
        assert_eq!(rows, 0);
    }
    let merged = v.brain.retrieve(&merged_id).unwrap();
    assert_eq!(merged.created, "2026-02-20T12:00:00.000Z");
    assert_eq!(merged.tags, ["auth", "debug"]);
    assert!(merged.content.starts_with(
        "# Consolidated Episode (2026-02-20)\n\n## debug-auth\n\n- fixed login\n\n## debug-session"
    ));
    // The 1.0 merged episode is promoted by the same compact (S26 cascade), which demotes it.
    assert_eq!(v.score(&merged_id), 0.69);
    assert_eq!(report.promoted, 1);
    assert_eq!(
        report.details[1],
        format!(
            "Promoted 2 facts from {merged_id} to entity-projects-promoted-debug-auth-merged-1771581600000 (score: 0.750)"
        )
    );
    assert_eq!(v.log_rows("consolidate").len(), 1);
    v.brain.retrieve("episode-2026-02-lonely").unwrap();
}

#[test]
fn pinned_episodes_are_never_merged() {
    let v = Vault::new();
    let tags = vec!["auth".to_owned()];
    v.brain
        .store(&NewMemory {
            kind: MemoryType::Episode,
            category: None,
            name: "pinned-one",
            content: "- a",
            tags: &tags,
            pinned: true,
        })
        .unwrap();
    v.episode("plain-one", "- b", &["auth"]);
    let report = v.brain.compact().unwrap();
    assert_eq!(report.consolidated, 0);
    v.brain.retrieve("episode-2026-02-pinned-one").unwrap();
}

#[test]
fn s23_s24_promotion_is_exact_and_idempotent() {
    let v = Vault::at(1_771_675_200_000); // 2026-02-21T12:00Z
    v.episode(
        "planning-sync",
        "# Session\n\n- user prefers short status updates\n- keep Docker setup simple",
        &["planning"],
    );
    v.set_score("episode-2026-02-planning-sync", 0.9);
    let report = v.brain.compact().unwrap();
    assert_eq!(report.promoted, 1);
    assert_eq!(
        report.details,
        [
            "Promoted 2 facts from episode-2026-02-planning-sync to entity-projects-promoted-planning-sync (score: 0.725)"
        ]
    );
    let entity = v
        .brain
        .retrieve("entity-projects-promoted-planning-sync")
        .unwrap();
    assert_eq!(
        entity.content,
        "# Promoted from planning-sync\n\n- user prefers short status updates\n- keep Docker setup simple"
    );
    assert_eq!(entity.tags, ["planning", "promoted"]);
    assert_eq!(v.score("entity-projects-promoted-planning-sync"), 0.725);
    assert_eq!(v.score("episode-2026-02-planning-sync"), 0.69);
    assert_eq!(
        v.log_rows("promote")[0].0,
        "[\"episode-2026-02-planning-sync\",\"entity-projects-promoted-planning-sync\"]"
    );
    let before = v.file("entities/projects/promoted-planning-sync.md");
    let again = v.brain.compact().unwrap();
    assert_eq!(again.promoted, 0);
    assert_eq!(
        v.file("entities/projects/promoted-planning-sync.md"),
        before
    );
    assert_eq!(v.score("entity-projects-promoted-planning-sync"), 0.725);
}

#[test]
fn s25_promotion_needs_more_than_0_7_and_bullets() {
    let v = Vault::new();
    v.episode("at-threshold", "- a fact", &[]);
    v.episode("no-bullets", "* a fact\n-x", &[]);
    v.set_score("episode-2026-02-at-threshold", 0.7);
    v.set_score("episode-2026-02-no-bullets", 0.95);
    assert_eq!(v.brain.compact().unwrap().promoted, 0);
}

#[test]
fn s28_memory_md_is_regenerated_after_writes() {
    let v = Vault::new();
    v.strategy("alpha: 0.5\n");
    v.entity("people", "alice", "ML engineer", &[]);
    v.entity("projects", "nanobrain", "CLI memory assistant", &[]);
    v.outcome("entity-people-alice", Signal::TaskCompleted);
    v.outcome("entity-projects-nanobrain", Signal::UserCorrection);
    assert_eq!(
        v.file("MEMORY.md"),
        "# MEMORY\n\n## People\n\n### alice\n<!-- score: 0.500 -->\nML engineer\n\n## Projects\n\n### nanobrain\n<!-- score: 0.050 -->\nCLI memory assistant\n\n"
    );
}

#[test]
fn memory_md_puts_pinned_first_and_honours_the_budget() {
    let v = Vault::new();
    v.strategy("max_context_budget: 3\n");
    v.entity("projects", "high", "high score", &[]);
    v.set_score("entity-projects-high", 0.9);
    let tags = Vec::new();
    v.brain
        .store(&NewMemory {
            kind: MemoryType::Entity,
            category: Some("projects"),
            name: "pinned-low",
            content: "pinned!",
            tags: &tags,
            pinned: true,
        })
        .unwrap();
    let text = v.file("MEMORY.md");
    assert!(text.contains("### pinned-low"), "{text}");
    assert!(
        !text.contains("### high"),
        "budget of 3 tokens fits only the pinned one: {text}"
    );
}

#[test]
fn s15_contradiction_against_a_same_category_peer() {
    let v = Vault::new();
    v.entity("projects", "nanobrain", "v1", &[]);
    v.entity(
        "projects",
        "nanobrain-search",
        "search strategy details",
        &[],
    );
    v.entity("people", "nanobrain-fan", "likes it", &[]);
    let out = v
        .brain
        .update("entity-projects-nanobrain", "Feature is not enabled.")
        .unwrap();
    let c = out.contradiction.unwrap();
    assert_eq!(
        c.conflicting_id.as_deref(),
        Some("entity-projects-nanobrain-search")
    );
    assert_eq!(
        v.brain
            .retrieve("entity-projects-nanobrain")
            .unwrap()
            .content,
        "Feature is not enabled."
    );
    let ep = v.episode("some-ep", "x", &[]);
    assert!(
        v.brain
            .update(&ep.id, "not")
            .unwrap()
            .contradiction
            .is_none()
    );
    assert!(negated("Feature is not enabled.") && !negated("Feature is enabled in staging."));
}

#[test]
fn s12_update_keeps_frontmatter_and_sets_updated() {
    let v = Vault::new();
    v.entity("projects", "solo", "v1 scope", &["x"]);
    v.advance(5_000);
    let out = v.brain.update("entity-projects-solo", "v2 scope").unwrap();
    assert_eq!(out.previous_updated_at, "2026-02-20T14:30:00.000Z");
    assert_eq!(
        out.contradiction,
        Some(Contradiction {
            has_contradiction: false,
            conflicting_id: None,
            suggestion: None
        })
    );
    let got = v.brain.retrieve("entity-projects-solo").unwrap();
    assert_eq!(
        (got.created.as_str(), got.updated.as_str()),
        ("2026-02-20T14:30:00.000Z", "2026-02-20T14:30:05.000Z")
    );
    assert_eq!(
        (got.content.as_str(), got.tags.as_slice()),
        ("v2 scope", &["x".to_owned()][..])
    );
}

/// The reference's DDL, as `sqlite3` would run it from a vault the reference wrote.
const REFERENCE_ROWS: &str = "
INSERT INTO credit_records VALUES ('entity-people-alice-chen', 0.91, 34, '2026-02-25T10:00:00.000Z', '2026-02-25T14:30:00.000Z', 0.01);
INSERT INTO credit_records VALUES ('episode-2026-02-old-chat', 0.12, 1, '2026-02-01T10:00:00.000Z', '2026-02-01T10:00:00.000Z', 0.01);
INSERT INTO turn_records (session_id, retrieved_memory_ids, outcome, created_at) VALUES ('local-session', '[\"entity-people-alice-chen\"]', 'positive_feedback', '2026-02-25T14:30:00.000Z');
";

#[test]
fn a_vault_laid_out_by_the_reference_is_read_searched_and_updated() {
    let dir = TempDir::new("clawbrain-interop");
    let root = dir.path().join("memory");
    std::fs::create_dir_all(root.join("entities/people")).unwrap();
    std::fs::create_dir_all(root.join("episodes/2026-02")).unwrap();
    std::fs::write(
        root.join("entities/people/alice-chen.md"),
        "---\nid: entity-people-alice-chen\ntype: entity\ncategory: people\ntags: [colleague, ml-team]\ncreated: 2026-02-25T10:00:00.000Z\nupdated: 2026-02-25T10:00:00.000Z\npinned: false\n---\n\n# Alice Chen\n\n- ML engineer, vision transformers\n",
    )
    .unwrap();
    std::fs::write(
        root.join("episodes/2026-02/old-chat.md"),
        "---\nid: episode-2026-02-old-chat\ntype: episode\ncategory: 2026-02\ntags: [\"chat\"]\ncreated: 2026-02-01T10:00:00.000Z\nupdated: 2026-02-01T10:00:00.000Z\npinned: false\n---\n\nTalked about transformers.\n",
    )
    .unwrap();
    std::fs::write(root.join("MEMORY.md"), "# MEMORY\n\nnot a memory").unwrap();
    std::fs::write(root.join("STRATEGY.md"), "# Strategy\n\nprose only").unwrap();
    // The reference creates engine.db on start-up; its rows are then written by the reference.
    drop(Brain::open(&root, "local-session").unwrap());
    Connection::open(root.join("engine.db"))
        .unwrap()
        .execute_batch(REFERENCE_ROWS)
        .unwrap();
    let brain = Brain::open(&root, "local-session").unwrap();
    let found = brain.search("transformers", None, None).unwrap();
    assert_eq!(found.total_matches, 2);
    assert_eq!(found.results[0].id, "entity-people-alice-chen");
    assert_eq!(found.results[0].credit_score, 0.91);
    assert_eq!(found.results[1].credit_score, 0.12);
    let tagged = brain.search("ml-team", None, None).unwrap();
    assert_eq!(tagged.results[0].relevance_score, 0.8);
    let alice = brain.retrieve("entity-people-alice-chen").unwrap();
    assert_eq!(alice.tags, ["colleague", "ml-team"]);
    assert_eq!(alice.access_count, 35);
    brain
        .update("entity-people-alice-chen", "# Alice Chen\n\n- team lead")
        .unwrap();
    let text = std::fs::read_to_string(root.join("entities/people/alice-chen.md")).unwrap();
    assert!(text.starts_with("---\nid: entity-people-alice-chen\ntype: entity\ncategory: people\ntags: [\"colleague\", \"ml-team\"]\ncreated: 2026-02-25T10:00:00.000Z\nupdated: "), "{text}");
    assert!(text.ends_with("\npinned: false\n---\n\n# Alice Chen\n\n- team lead\n"));
    let report = brain.credit_report(Some(1.0)).unwrap();
    assert_eq!(report.total_memories, 2);
    assert_eq!(report.top[0].name, "alice-chen");
    assert_eq!(report.bottom[0].id, "episode-2026-02-old-chat");
    assert_eq!(report.prune_candidates, 1);
}

#[test]
fn hand_edits_between_calls_are_seen_by_the_next_search() {
    let v = Vault::new();
    v.entity("projects", "notes", "nothing special", &[]);
    assert_eq!(
        v.brain.search("zebra", None, None).unwrap().total_matches,
        0
    );
    let path = v.root().join("entities/projects/notes.md");
    let edited = v
        .file("entities/projects/notes.md")
        .replace("nothing special", "a zebra appeared");
    std::fs::write(&path, edited).unwrap();
    std::fs::create_dir_all(v.root().join("entities/pets")).unwrap();
    std::fs::write(
        v.root().join("entities/pets/zebra-zed.md"),
        "---\r\nid: entity-pets-zebra-zed\r\ntype: entity\r\ncategory: pets\r\ncreated: 2026-02-20\r\nupdated: 2026-02-20\r\npinned: false\r\n---\r\nA zebra called Zed.\r\n",
    )
    .unwrap();
    let found = v.brain.search("zebra", None, None).unwrap();
    assert_eq!(found.total_matches, 2);
    assert_eq!(
        found.results[0].id, "entity-pets-zebra-zed",
        "name beats content: {found:?}"
    );
    std::fs::remove_file(&path).unwrap();
    assert_eq!(
        v.brain.search("zebra", None, None).unwrap().total_matches,
        1
    );
}

#[test]
fn a_malformed_file_fails_reads_with_the_reference_text_but_not_stores() {
    let v = Vault::new();
    v.entity("projects", "fine", "ok", &[]);
    std::fs::write(
        v.root().join("entities/projects/broken.md"),
        "no frontmatter",
    )
    .unwrap();
    assert_eq!(
        v.brain.search("ok", None, None).unwrap_err().to_string(),
        "Missing frontmatter block (entities/projects/broken.md)"
    );
    v.entity("projects", "another", "still storable", &[]);
    std::fs::write(
        v.root().join("entities/projects/broken.md"),
        "---\nid: x\ntype: note\ncategory: c\ncreated: a\nupdated: b\npinned: false\n---\n",
    )
    .unwrap();
    assert_eq!(
        v.brain
            .retrieve("entity-projects-fine")
            .unwrap_err()
            .to_string(),
        "Invalid memory type: note (entities/projects/broken.md)"
    );
    std::fs::remove_file(v.root().join("entities/projects/broken.md")).unwrap();
    assert_eq!(v.brain.search("ok", None, None).unwrap().total_matches, 1);
}

#[test]
fn hostile_names_and_categories_never_leave_the_vault() {
    let v = Vault::new();
    let hostile = [
        "../escape",
        "..",
        "a/b",
        "a\\b",
        "/etc/passwd",
        "C:\\x",
        "a\0b",
        "Alice",
        "",
        " a",
        "a..b",
    ];
    for bad in hostile {
        for (category, name) in [(bad, "ok"), ("people", bad)] {
            let tags = Vec::new();
            let err = v
                .brain
                .store(&NewMemory {
                    kind: MemoryType::Entity,
                    category: Some(category),
                    name,
                    content: "x",
                    tags: &tags,
                    pinned: false,
                })
                .unwrap_err();
            if category.is_empty() {
                assert_eq!(err.to_string(), "category is required when type is entity");
            } else {
                assert!(
                    matches!(err, BrainError::BadSegment { .. }),
                    "{bad:?}: {err}"
                );
            }
        }
    }
    let outside: Vec<_> = std::fs::read_dir(v.dir.path()).unwrap().collect();
    assert_eq!(outside.len(), 1, "only the vault folder exists next to it");
}

#[cfg(unix)]
#[test]
fn symlinked_folders_are_refused_and_symlinked_files_are_not_memories() {
    let v = Vault::new();
    let elsewhere = TempDir::new("clawbrain-elsewhere");
    std::fs::create_dir_all(v.root().join("entities")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), v.root().join("entities/evil")).unwrap();
    let tags = Vec::new();
    let err = v
        .brain
        .store(&NewMemory {
            kind: MemoryType::Entity,
            category: Some("evil"),
            name: "x",
            content: "x",
            tags: &tags,
            pinned: false,
        })
        .unwrap_err();
    assert!(matches!(err, BrainError::UnsafePath(_)), "{err}");
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    std::fs::write(
        elsewhere.path().join("secret.md"),
        "---\nid: entity-x-secret\ntype: entity\ncategory: x\ncreated: a\nupdated: b\npinned: false\n---\nsecret stuff",
    )
    .unwrap();
    std::fs::create_dir_all(v.root().join("entities/x")).unwrap();
    std::os::unix::fs::symlink(
        elsewhere.path().join("secret.md"),
        v.root().join("entities/x/secret.md"),
    )
    .unwrap();
    assert_eq!(
        v.brain.search("secret", None, None).unwrap().total_matches,
        0
    );
}

#[test]
fn secrets_are_scrubbed_before_they_reach_the_file() {
    let v = Vault::new();
    let key = format!("sk-proj-{}", "a1B2c3D4e5F6g7H8i9J0".repeat(3));
    v.entity("projects", "keys", &format!("the key is {key}"), &[]);
    let text = v.file("entities/projects/keys.md");
    assert!(
        !text.contains(&key) && text.contains("[REDACTED]"),
        "{text}"
    );
    let tags = Vec::new();
    let err = v
        .brain
        .store(&NewMemory {
            kind: MemoryType::Entity,
            category: Some("projects"),
            name: "only-key",
            content: &key,
            tags: &tags,
            pinned: false,
        })
        .unwrap_err();
    assert!(matches!(err, BrainError::OnlySecrets));
}

#[test]
fn search_ranks_every_match_and_counts_them_all() {
    let v = Vault::new();
    for i in 0..30 {
        v.entity("projects", &format!("item-{i}"), "shared words here", &[]);
    }
    v.set_score("entity-projects-item-17", 0.95);
    let found = v.brain.search("shared", None, Some(3.0)).unwrap();
    assert_eq!(found.total_matches, 30);
    assert_eq!(found.results.len(), 3);
    assert_eq!(found.results[0].id, "entity-projects-item-17");
    // Short queries go around the trigram index.
    assert_eq!(
        v.brain
            .search("it", None, Some(50.0))
            .unwrap()
            .results
            .len(),
        20
    );
    assert_eq!(
        v.brain
            .search("item-1", None, Some(0.0))
            .unwrap()
            .results
            .len(),
        1
    );
}
