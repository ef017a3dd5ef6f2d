//! The ClawBrain rows of `cargo xtask bench`: `memory_search` p50 on vaults of 1,000 and 10,000
//! memories (written as the reference lays them out, indexed by the first search, which is
//! reported on its own), and `memory_store` calls per second, all over stdio with the release bin
//! in `clawbrain` mode.
//!
//! Must never: assert on a time; a benchmark reports, tests decide.

use std::path::Path;
use std::time::Instant;

use anyhow::bail;
use clawboo_tests::{Rng, Server, TempDir, bin_path};
use serde_json::json;

/// One figure: name, unit, value.
pub type Figure = (String, &'static str, Option<f64>);

/// Syllables of the vault's vocabulary: three of them make a word, 1,000 words in all, so a
/// one-word query matches a few percent of the memories, as a real query would.
const SYLLABLES: [&str; 10] = ["ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "zi", "pa"];

/// The `n`-th word of the vocabulary.
fn word(n: usize) -> String {
    [n / 100 % 10, n / 10 % 10, n % 10]
        .iter()
        .map(|&i| SYLLABLES[i])
        .collect()
}

const CATEGORIES: [&str; 3] = ["people", "projects", "preferences"];

/// Writes `count` entity files and their credit rows the way the reference does.
fn seed_vault(root: &Path, count: usize) -> anyhow::Result<()> {
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    let mut word = || word(rng.below(1000));
    for category in CATEGORIES {
        std::fs::create_dir_all(root.join("entities").join(category))?;
    }
    for i in 0..count {
        let category = CATEGORIES[i % CATEGORIES.len()];
        let name = format!("{}-{}-{i}", word(), word());
        let body: Vec<String> = (0..24).map(|_| word()).collect();
        let text = format!(
            "---\nid: entity-{category}-{name}\ntype: entity\ncategory: {category}\ntags: [\"{}\", \"{}\"]\ncreated: 2026-02-25T10:00:00.000Z\nupdated: 2026-02-25T10:00:00.000Z\npinned: false\n---\n\n{}\n",
            word(),
            word(),
            body.join(" ")
        );
        std::fs::write(root.join(format!("entities/{category}/{name}.md")), text)?;
    }
    Ok(())
}

fn spawn(root: &Path, db: &Path) -> Server {
    let root = root.display().to_string();
    let mut server = Server::spawn_program(
        bin_path("clawboo-mcp-memory"),
        &["clawbrain"],
        db,
        &[("MEMORY_DIR", root.as_str())],
    );
    server.initialize();
    server
}

fn p50(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied()
}

/// First search (which indexes the vault) and the p50 of `searches` more, in ms.
fn search_latency(count: usize, searches: usize) -> anyhow::Result<(f64, Option<f64>)> {
    let dir = TempDir::new("bench-clawbrain");
    let root = dir.path().join("memory");
    seed_vault(&root, count)?;
    let mut server = spawn(&root, &dir.db_path());
    let started = Instant::now();
    let first = server.call("memory_search", json!({"query": word(0)}));
    let first_ms = started.elapsed().as_secs_f64() * 1000.0;
    if first.is_error {
        bail!("memory_search failed: {}", first.text());
    }
    let mut samples = Vec::with_capacity(searches);
    for i in 0..searches {
        let query = word(i * 37 % 1000);
        let started = Instant::now();
        let reply = server.call("memory_search", json!({"query": query, "limit": 5}));
        samples.push(started.elapsed().as_secs_f64() * 1000.0);
        if reply.is_error {
            bail!("memory_search failed: {}", reply.text());
        }
    }
    server.close();
    Ok((first_ms, p50(samples)))
}

/// `memory_store` calls per second into a fresh vault.
fn store_rate(calls: usize) -> anyhow::Result<Option<f64>> {
    let dir = TempDir::new("bench-clawbrain-store");
    let root = dir.path().join("memory");
    std::fs::create_dir_all(&root)?;
    let mut server = spawn(&root, &dir.db_path());
    let started = Instant::now();
    for i in 0..calls {
        let reply = server.call(
            "memory_store",
            json!({"type": "entity", "category": "projects", "name": format!("note-{i}"),
                   "content": format!("- {} {} {i}", word(i % 1000), word(i * 7 % 1000)), "tags": ["bench"]}),
        );
        if reply.is_error {
            bail!("memory_store failed: {}", reply.text());
        }
    }
    let rate = calls as f64 / started.elapsed().as_secs_f64();
    server.close();
    Ok(Some(rate))
}

/// Every ClawBrain figure (`quick`: 1,000 memories only, fewer calls).
pub fn figures(quick: bool) -> anyhow::Result<Vec<Figure>> {
    let (counts, searches, stores): (&[usize], usize, usize) = if quick {
        (&[1_000], 20, 100)
    } else {
        (&[1_000, 10_000], 200, 1_000)
    };
    let mut out = Vec::new();
    for &count in counts {
        let (first, p50) = search_latency(count, searches)?;
        out.push((
            format!("clawbrain first search (indexes), {count} memories"),
            "ms",
            Some(first),
        ));
        out.push((
            format!("clawbrain memory_search p50, {count} memories"),
            "ms",
            p50,
        ));
        eprintln!(
            "  clawbrain memory_search, {count} memories: first {first:.1} ms, p50 {p50:?} ms"
        );
    }
    let rate = store_rate(stores)?;
    eprintln!("  clawbrain memory_store: {rate:?} calls/s");
    out.push(("clawbrain memory_store".to_owned(), "calls/s", rate));
    Ok(out)
}
