//! The tuning loop of full-text and hybrid search: `cargo xtask bench-tune [--million] [--store DIR]
//! [--misses KIND] [--exhaustive] [--reads] [--meaning] [--notes]`.
//!
//! Owns: asking every query of the **tuning corpus** (`corpus`), or with `--notes` of the second
//! tuning corpus (`notes`, a team's notes, built another way), of the search in process, in an
//! optimised build, and printing latency (p50, p95 by the wall clock; the mean time on the CPU,
//! which a loaded machine disturbs less) and recall@10 per kind of query, at 100,000 facts and
//! with `--million` at a million (the bench's spliced store), each as its writes left it and as a
//! copy whose full-text indexes the host's upkeep merged. The stores are kept in
//! `DIR` (default `target/bench-tune`) and reused while they hold the same facts (as many, the
//! same at eight places), so a change to the ranking is measured in seconds, not the minutes
//! seeding takes.
//!
//! With `--meaning`, it prints instead fts, vector and hybrid recall@10 on the queries whose words
//! may differ from their fact's, over a few thousand facts embedded by the real model when it is
//! installed (the bench's meaning rows, on the tuning corpus only, the store kept), and on the
//! bench's paraphrases written in other words among a thousand of its facts (`vectors`).
//!
//! With `--exhaustive`, it also prints the recall of a ranking that reads every candidate (BM25
//! over any word of the query, as the reference ranks), to tell what the bounded reads give up,
//! and per kind the probes paired against the reference's method (found by both, by us only, by
//! it only, by neither), saying where each it alone finds stands in our first 100: ranked too
//! low, or never read.
//! With `--reads`, it also prints what each kind of the search's reads cost in each run
//! (`memory::tally`): how often it ran, its mean time and rows, and how often it found as many
//! rows as it may read or none.
//!
//! Must never: build or read the held-out corpus (it stays out of the tuning loop; `bench
//! --memory` reports it), or assert on a time. In-process figures leave out the stdio round trip
//! the bench rows include.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use clawboo_core::Db;
use clawboo_core::internal::memory::{self, Embedder, Entry, Memory, ReadScope, SearchMode, tally};
use clawboo_tests::target_dir;

use super::corpus::{self, Query};
use super::realistic::{
    MEANING_FACTS, fact_ids, meaning_store, million_queries, percentile, seed_in_batches,
    spliced_million,
};
use super::{median, model, ms, remove_store, vectors};

/// Facts of the smaller store.
const FACTS: usize = 100_000;
/// Natural queries, and probes of each kind.
const QUERIES: usize = 300;

/// What `bench-tune` prints beside each run's latency and recall (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct Extras {
    /// The queries of this kind whose fact was not in the top 10 (`--misses KIND`).
    pub misses: Option<String>,
    /// The recall of BM25 over every candidate (`--exhaustive`).
    pub exhaustive: bool,
    /// What each kind of read cost (`--reads`).
    pub reads: bool,
}

/// Runs the loop (see the module docs) on the first tuning corpus, or with `notes` on the second
/// (`notes`); in a debug build, runs itself again in a release build.
pub fn run(
    million: bool,
    store: Option<PathBuf>,
    extras: &Extras,
    meaning: bool,
    notes: bool,
) -> anyhow::Result<()> {
    if super::ran_optimised()? {
        return Ok(());
    }
    let dir = store.unwrap_or_else(|| target_dir().join("bench-tune"));
    std::fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
    // Each corpus keeps its own stores.
    let (name, prefix) = if notes {
        ("the second tuning corpus (notes)", "notes")
    } else {
        ("the tuning corpus", "tuning")
    };
    eprintln!("building {name} ({FACTS} facts at most)…");
    let tuning = if notes {
        super::notes::build(FACTS, QUERIES, QUERIES)?
    } else {
        corpus::build(FACTS, QUERIES, QUERIES)?
    };
    println!(
        "{name}: {} facts, fingerprint {}",
        tuning.facts.len(),
        tuning.fingerprint()
    );
    if meaning {
        return meaning_recall(&dir.join(format!("{prefix}-meaning.db")), &tuning);
    }
    measure(
        &dir.join(format!("{prefix}-100k.db")),
        &tuning.facts,
        &tuning.queries,
        extras,
    )?;
    if million {
        let facts = spliced_million(&tuning);
        let queries = million_queries(&tuning);
        measure(
            &dir.join(format!("{prefix}-1m.db")),
            &facts,
            &queries,
            extras,
        )?;
    }
    Ok(())
}

/// Seeds `path` with `facts` unless it already holds them, then asks every query of it and of a
/// copy whose full-text indexes are merged (as the host's upkeep leaves them) and prints the
/// figures and the `extras` asked for.
fn measure(
    path: &Path,
    facts: &[(String, String)],
    queries: &[Query],
    extras: &Extras,
) -> anyhow::Result<()> {
    keep_store(path, facts)?;
    ask_all(path, "as written", facts, queries, extras)?;
    if extras.exhaustive {
        exhaustive_recall(path, queries)?;
    }
    // The same store after the upkeep the host runs hourly: every full-text index one segment.
    let merged = path.with_extension("merged.db");
    if !holds(&merged, facts).unwrap_or(false) {
        {
            let db = Db::open(path)?;
            db.conn()
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        }
        std::fs::copy(path, &merged).with_context(|| format!("copy to {}", merged.display()))?;
    }
    memory::merge_text_indexes(&Db::open(&merged)?.conn())?;
    ask_all(&merged, "index merged by upkeep", facts, queries, extras)
}

/// Prints recall@10 of fts, vector and hybrid on the tuning corpus's queries whose words may
/// differ from their fact's, over the bench's store of a few thousand of its facts embedded by the
/// real model (`model`; the deterministic stand-in when it is not installed, said so), kept in
/// `dir` for the next run; then the same on the bench's paraphrases written in other words among
/// a thousand of its facts (`vectors`): what hybrid search is tuned on.
fn meaning_recall(path: &Path, tuning: &corpus::Corpus) -> anyhow::Result<()> {
    // The searches go through the memory bin, built as the bench builds it.
    crate::probe::build_bins("release")?;
    let (store, probes) = meaning_store(&tuning.facts, &tuning.queries, MEANING_FACTS);
    let embedder = model::Embedder::start()?;
    let shares = model::recall(&embedder, path, &store, &probes)?;
    println!("{} facts embedded by {}:", store.len(), embedder.name());
    for (mode, kind, share) in shares {
        println!("  {mode:<7}{kind:<11}recall@10 {share:.3}");
    }
    // The blend is tuned on these too: the bench's paraphrases written in other words.
    for (name, _, share) in vectors::paraphrase_rows(&embedder, &tuning.facts, false)? {
        println!("{name}: {share:.3}");
    }
    Ok(())
}

/// Prints recall@10 per kind of query of a ranking that reads every candidate: every fact
/// holding any word of the query, ranked by FTS5's BM25, in the reference's unstemmed index (the
/// reference's own method) and in our stemmed one. What our bounded reads give up is the
/// difference between the second and our recall.
fn exhaustive_recall(path: &Path, queries: &[Query]) -> anyhow::Result<()> {
    let db = Db::open(path)?;
    let conn = db.conn();
    let indexes = [
        (
            "the reference's index",
            "SELECT fact_id FROM memory_facts_fts WHERE memory_facts_fts MATCH ?1 \
             ORDER BY bm25(memory_facts_fts) LIMIT 10",
        ),
        (
            "our stemmed index",
            "SELECT f.id FROM clawboo_facts_newest_fts AS x JOIN memory_facts AS f \
             ON f.rowid = -x.rowid WHERE clawboo_facts_newest_fts MATCH ?1 \
             ORDER BY bm25(clawboo_facts_newest_fts) LIMIT 10",
        ),
    ];
    let ids = fact_ids(path)?;
    let memory = Memory::new(Db::open(path)?, Embedder::none());
    let scope = ReadScope::new(None, None, None);
    let mut paired: BTreeMap<&str, Paired> = BTreeMap::new();
    for (i, (index, sql)) in indexes.into_iter().enumerate() {
        // The reference's own method is the first.
        let pair = i == 0;
        let mut statement = conn.prepare(sql)?;
        let mut found: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for query in queries {
            let Some(target) = query.target else { continue };
            let hit = match memory::fts_query(&query.text) {
                Some(any_word) => {
                    let top: Vec<String> = statement
                        .query_map([any_word], |r| r.get(0))?
                        .collect::<Result<_, _>>()?;
                    top.contains(&ids[target])
                }
                None => false,
            };
            let counts = found.entry(query.kind).or_insert((0, 0));
            counts.0 += usize::from(hit);
            counts.1 += 1;
            if pair {
                let rank = place_deeper(&memory, &scope, &query.text, &ids[target])?;
                paired.entry(query.kind).or_default().add(rank, hit);
            }
        }
        println!("  every candidate read, BM25 of any word, {index}:");
        for (kind, (hit, asked)) in found {
            println!(
                "    {kind:<12} recall@10 {:.3}",
                hit as f64 / asked.max(1) as f64
            );
        }
    }
    println!("  paired with BM25 of any word on the reference's index (top 10 each):");
    for (kind, pair) in paired {
        println!(
            "    {kind:<12} both {}, ours only {}, its only {} (in our first 20: {}, 21-100: {}, \
             not in them: {}), neither {}",
            pair.both,
            pair.ours_only,
            pair.its_only,
            pair.its_only_ranked[0],
            pair.its_only_ranked[1],
            pair.its_only_ranked[2],
            pair.neither
        );
    }
    Ok(())
}

/// Probes of one kind, paired: found in the top 10 by our search, by the reference's method, or
/// by both or neither; where each the reference alone finds stands in our first 100 (11–20,
/// 21–100, not there: never read, or ranked lower still).
#[derive(Default)]
struct Paired {
    both: usize,
    ours_only: usize,
    its_only: usize,
    its_only_ranked: [usize; 3],
    neither: usize,
}

impl Paired {
    /// Adds a probe our search ranked at `rank` (from 0; `None`: not in our first 100), found by
    /// the reference's method when `its`.
    fn add(&mut self, rank: Option<usize>, its: bool) {
        let ours = rank.is_some_and(|r| r < 10);
        match (ours, its) {
            (true, true) => self.both += 1,
            (true, false) => self.ours_only += 1,
            (false, true) => {
                self.its_only += 1;
                self.its_only_ranked[match rank {
                    Some(r) if r < 20 => 0,
                    Some(_) => 1,
                    None => 2,
                }] += 1;
            }
            (false, false) => self.neither += 1,
        }
    }
}

/// How many hits are asked for to tell where a fact missed in the top 10 stands.
const DEEPER: u32 = 100;

/// Where our full-text search places the fact `id` for `query` when [`DEEPER`] hits are asked
/// for (from 0), or `None` when it is not among them. More hits also read more candidates, so
/// this is a hint of whether a fact missed was ranked too low or never read.
fn place_deeper(
    memory: &Memory,
    scope: &ReadScope,
    query: &str,
    id: &str,
) -> anyhow::Result<Option<usize>> {
    let deeper = memory.search(query, Some(SearchMode::Fts), DEEPER, scope)?;
    Ok(deeper.hits.iter().position(|h| h.entry.id() == id))
}

/// Seeds `path` with `facts` unless it already holds them.
fn keep_store(path: &Path, facts: &[(String, String)]) -> anyhow::Result<()> {
    if !holds(path, facts).unwrap_or(false) {
        remove_store(path);
        let started = Instant::now();
        eprintln!("storing {} facts in {}…", facts.len(), path.display());
        seed_in_batches(path, facts.iter().map(|(t, c)| (t.as_str(), c.as_str())))?;
        eprintln!("stored in {:.0} s", started.elapsed().as_secs_f64());
    }
    Ok(())
}

/// Asks every query of the store at `path` (`state`: how its index is) and prints the figures.
fn ask_all(
    path: &Path,
    state: &str,
    facts: &[(String, String)],
    queries: &[Query],
    extras: &Extras,
) -> anyhow::Result<()> {
    let misses = extras.misses.as_deref();
    let ids = fact_ids(path)?;
    let memory = Memory::new(Db::open(path)?, Embedder::none());
    let scope = ReadScope::new(None, None, None);
    let ask = |text: &str| memory.search(text, Some(SearchMode::Fts), 10, &scope);
    ask("warm up the index")?;
    if extras.reads {
        // The deeper searches of `--misses` are tallied too.
        tally::start();
    }
    let mut latency: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut cpu: Vec<f64> = Vec::new();
    let mut found: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for query in queries {
        let (started, cpu_before) = (Instant::now(), thread_cpu_ns());
        let outcome = ask(&query.text)?;
        if let (Some(before), Some(after)) = (cpu_before, thread_cpu_ns()) {
            cpu.push(after.saturating_sub(before) as f64 / 1e6);
        }
        latency
            .entry(query.kind)
            .or_default()
            .push(ms(started.elapsed()));
        if let Some(target) = query.target {
            let hit = outcome
                .hits
                .iter()
                .any(|h| h.entry.id() == ids[target].as_str());
            if !hit && misses == Some(query.kind) {
                let rank = place_deeper(&memory, &scope, &query.text, &ids[target])?
                    .map_or(format!("not in the top {DEEPER}"), |r| {
                        format!("rank {}", r + 1)
                    });
                println!(
                    "missed {:?} ({rank})\n  fact: {:?}",
                    query.text, facts[target]
                );
                for h in outcome.hits.iter().take(3) {
                    let text = match &h.entry {
                        Entry::Fact(f) => format!("{} | {}", f.title, f.content),
                        Entry::Procedure(p) => format!("{} | {}", p.name, p.content),
                    };
                    println!("  got {:.3} {text:?}", h.score);
                }
            }
            let counts = found.entry(query.kind).or_insert((0, 0));
            counts.0 += usize::from(hit);
            counts.1 += 1;
        }
    }
    let reads = extras.reads.then(tally::take);
    println!("{} facts, {state}:", facts.len());
    let all: Vec<f64> = latency.values().flatten().copied().collect();
    println!(
        "  every query: p50 {:.2} ms, p95 {:.2} ms",
        median(all.clone()).unwrap_or(0.0),
        percentile(all, 95)
    );
    if !cpu.is_empty() {
        // The kernel brings a thread's CPU time up to date at its ticks, so one query's figure is
        // coarse; their mean over the run is not.
        println!(
            "  every query on the CPU: mean {:.2} ms",
            cpu.iter().sum::<f64>() / cpu.len() as f64
        );
    }
    for (kind, times) in &latency {
        let recall = found.get(kind).map_or(String::new(), |(hit, asked)| {
            format!(", recall@10 {:.3}", *hit as f64 / (*asked).max(1) as f64)
        });
        println!(
            "  {kind:<12} p50 {:.2} ms, p95 {:.2} ms{recall}",
            median(times.clone()).unwrap_or(0.0),
            percentile(times.clone(), 95)
        );
    }
    if let Some(reads) = reads {
        print_reads(&reads, queries.len());
    }
    Ok(())
}

/// Prints what each kind of read cost over `asked` queries (`--reads`).
fn print_reads(reads: &[(tally::Kind, tally::Cost)], asked: usize) {
    println!("  what each kind of read cost (its own thread's wall clock):");
    for (kind, cost) in reads {
        let runs = cost.runs.max(1) as f64;
        let ms = cost.time.as_secs_f64() * 1e3;
        println!(
            "    {:<42} {:>6} runs, {:>6.3} ms each, {:>6.3} ms a query, {:>5.1} rows, \
             {:>3.0}% as many as it may read, {:>3.0}% none",
            kind.describe(),
            cost.runs,
            ms / runs,
            ms / asked.max(1) as f64,
            cost.rows as f64 / runs,
            100.0 * cost.as_many as f64 / runs,
            100.0 * cost.none as f64 / runs,
        );
    }
}

/// The time this thread has run on a CPU (ns), from Linux's schedstat: unlike the wall clock,
/// it barely moves when other processes load the machine. `None` elsewhere.
fn thread_cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

/// Whether the store at `path` holds `facts`: as many, and the same at eight places spread
/// through it (a store of another corpus or another layout differs at some of them; the first and
/// last alone did not tell two layouts of the million apart).
pub(super) fn holds(path: &Path, facts: &[(String, String)]) -> anyhow::Result<bool> {
    if !path.exists() {
        return Ok(false);
    }
    let db = Db::open(path)?;
    let conn = db.conn();
    let count: i64 = conn.query_row("SELECT count(*) FROM memory_facts", [], |r| r.get(0))?;
    if usize::try_from(count) != Ok(facts.len()) {
        return Ok(false);
    }
    let mut nth =
        conn.prepare("SELECT content FROM memory_facts ORDER BY rowid LIMIT 1 OFFSET ?1")?;
    for place in 0..8 {
        let index = place * facts.len().saturating_sub(1) / 7;
        let content: String = nth.query_row([index as i64], |r| r.get(0))?;
        if content != facts[index].1 {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::Paired;

    #[test]
    fn a_paired_probe_is_counted_once_and_the_references_alone_by_where_we_ranked_them() {
        let mut pair = Paired::default();
        pair.add(Some(3), true);
        pair.add(Some(9), false);
        pair.add(Some(10), true);
        pair.add(Some(19), true);
        pair.add(Some(20), true);
        pair.add(None, true);
        pair.add(None, false);
        pair.add(Some(50), false);
        assert_eq!(
            (pair.both, pair.ours_only, pair.its_only, pair.neither),
            (1, 1, 4, 2)
        );
        assert_eq!(pair.its_only_ranked, [2, 1, 1]);
    }
}
