//! **Held-out** recall@10 of the memory full-text search (issue 25), per query kind, on
//! `clawboo_tests::heldout::search`'s corpus: facts made from this machine's man pages and package
//! docs in several registers, queries of five kinds (words, word forms, paraphrase, question,
//! misspelling) each with one target fact. The search is never tuned on this corpus.
//!
//! A measurement, not a pass/fail test, so it is ignored by default:
//! `cargo test -p clawboo-tests --test search_heldout -- --ignored --nocapture`.
//! `CLAWBOO_HELDOUT_FACTS` (default 20,000) and `CLAWBOO_HELDOUT_QUERIES` (per kind, default 200)
//! change the size.

use std::time::Instant;

use clawboo_core::Db;
use clawboo_core::internal::memory::{self, Embedder, Entry, Memory, ReadScope, SearchMode};
use clawboo_core::internal::scrub::scrub_secrets;
use clawboo_tests::TempDir;
use clawboo_tests::heldout::search::{QueryKind, build};

fn size(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
#[ignore = "a measurement, not a pass/fail test: run with --ignored --nocapture to read the held-out recall"]
fn held_out_search_recall_at_10_per_kind() {
    let facts = size("CLAWBOO_HELDOUT_FACTS", 20_000);
    let per_kind = size("CLAWBOO_HELDOUT_QUERIES", 200);
    let started = Instant::now();
    let corpus = build(facts, per_kind).expect("build the held-out search corpus");
    println!(
        "held-out search corpus: {} facts, {} queries, built in {:.1} s",
        corpus.facts.len(),
        corpus.queries.len(),
        started.elapsed().as_secs_f64()
    );

    let dir = TempDir::new("heldout-search");
    let db = Db::open(&dir.db_path()).expect("open a fresh store");
    memory::seed_facts(
        &db.conn(),
        corpus.facts.iter().map(|(t, c)| (t.as_str(), c.as_str())),
    )
    .expect("seed the facts");
    let ids: Vec<String> = {
        let conn = db.conn();
        let mut rows = conn
            .prepare("SELECT id FROM memory_facts ORDER BY rowid")
            .expect("prepare");
        rows.query_map([], |r| r.get(0))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("read ids")
    };
    assert_eq!(ids.len(), corpus.facts.len(), "every fact was stored");
    let memory = Memory::new(db, Embedder::none());
    let scope = ReadScope::new(None, None, None);

    let (mut scrubbed_targets, mut found_all) = (0, 0);
    for kind in QueryKind::ALL {
        let queries: Vec<_> = corpus.queries.iter().filter(|q| q.kind == kind).collect();
        let mut found = 0;
        for q in &queries {
            let (title, content) = &corpus.facts[q.target];
            if scrub_secrets(content) != *content || scrub_secrets(title) != *title {
                scrubbed_targets += 1;
            }
            let outcome = memory
                .search(&q.text, Some(SearchMode::Fts), 10, &scope)
                .expect("search");
            let hit = outcome.hits.iter().any(|h| match &h.entry {
                Entry::Fact(f) => f.id == ids[q.target],
                Entry::Procedure(_) => false,
            });
            found += usize::from(hit);
        }
        found_all += found;
        println!(
            "  recall@10 {:<12} {:.3}  ({found}/{})",
            kind.as_str(),
            found as f64 / queries.len() as f64,
            queries.len()
        );
    }
    let all = corpus.queries.len();
    println!(
        "  recall@10 {:<12} {:.3}  ({found_all}/{all})",
        "all kinds",
        found_all as f64 / all as f64
    );
    println!("  ({scrubbed_targets} of {all} targets were changed by the scrubber when stored)");
}
