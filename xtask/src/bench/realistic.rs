//! The memory search rows over a corpus of real sentences (`corpus`, or any other corpus of facts
//! and queries-with-kinds): full-text latency (p50, p95) and recall@10 per kind of query, the
//! first query of a fresh process, vector and hybrid latency over every fact embedded with 768
//! dimensions, full-text at a million facts; plus pipelined `ping` throughput and `memory_save`
//! rate. A child of `bench` (it adds rows to its table).
//!
//! Owns: [`corpus_rows`], the rows of one corpus, named after it, which a second corpus gets by
//! calling it with its own facts and queries; seeding a store in bounded transactions
//! ([`seed_in_batches`]); the million-fact store (the corpus's sentences, then sentences spliced
//! from two of them, first half and second half, until there are a million).
//!
//! Must never: assert on a time.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, bail};
use clawboo_core::Db;
use clawboo_core::internal::memory::{self, embed};
use clawboo_tests::{Rng, Server, TempDir, bin_path, loopback};
use serde_json::{Value, json};

use super::corpus::{self, Query};
use super::{Row, Subject, measure, median, ms, offers};

/// Dimensions of the bench's stand-in embeddings (nomic-embed-text's).
pub(super) const DIMS: usize = 768;
/// Facts stored per transaction when seeding.
const SEED_BATCH: usize = 50_000;
/// Fresh processes whose first query is timed.
const FIRST_QUERIES: usize = 7;
/// The large store's size.
const MILLION: usize = 1_000_000;

/// Adds the rows of this module to `rows`.
pub(super) fn add_rows(
    subjects: &[Subject],
    quick: bool,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let (pings, saves) = if quick { (2_000, 200) } else { (20_000, 2_000) };
    rows.push(measure(
        subjects,
        &format!("ping pipelined, {pings} messages"),
        "msgs/s",
        3,
        |s| ping_rate(s, pings),
    )?);
    rows.push(measure(
        subjects,
        "memory_save round trips",
        "saves/s",
        3,
        |s| save_rate(s, saves),
    )?);
    memory_rows(subjects, quick, rows)
}

/// The memory search rows alone (`--memory`): the realistic corpus, and unless `quick` the
/// million-fact store.
pub(super) fn memory_rows(
    subjects: &[Subject],
    quick: bool,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    // Natural queries, and probes of each kind.
    let (facts, searches, probes) = if quick {
        (10_000, 50, 50)
    } else {
        (100_000, 300, 300)
    };
    eprintln!("  building the realistic corpus ({facts} facts)…");
    let corpus = corpus::build(facts, searches, probes)?;
    let (corpus_rows, dir) = corpus_rows(subjects, "realistic", &corpus.facts, &corpus.queries)?;
    rows.extend(corpus_rows);
    let db = dir.db_path();
    let natural: Vec<String> = corpus
        .queries
        .iter()
        .filter(|q| q.target.is_none())
        .map(|q| q.text.clone())
        .collect();
    let stand_in = embedder();
    let env = [("OLLAMA_HOST", stand_in.base.as_str())];
    embed_all(&db, &env)?;
    for mode in ["vector", "hybrid"] {
        rows.push(measure(
            subjects,
            &format!("memory_search {mode}, {facts} facts x {DIMS} dims, p50"),
            "ms",
            1,
            |s| match s {
                Subject::Ours => {
                    Ok(search_latencies(s, &db, &env, &natural, mode)?.map(|l| percentile(l, 50)))
                }
                Subject::Vs(_) => Ok(None),
            },
        )?);
    }
    drop(dir);
    if !quick {
        million_rows(subjects, &corpus, &natural, rows)?;
    }
    Ok(())
}

/// What one subject answered to a corpus's queries.
struct Answers {
    /// Each query's latency (ms), in order.
    latencies: Vec<f64>,
    /// Per kind: probes whose fact was in the top 10, and probes.
    found: BTreeMap<&'static str, (usize, usize)>,
}

/// The rows of one corpus, named `name`: `facts` (title, content) are stored in a new file, every
/// query is asked of each subject once (full-text, limit 10) after a warm-up, and the rows are
/// p50 and p95 over every query, recall@10 for each kind of query that has targets, and the first
/// query of a fresh process. Returns the rows and the seeded store (for more rows over it).
pub(super) fn corpus_rows(
    subjects: &[Subject],
    name: &str,
    facts: &[(String, String)],
    queries: &[Query],
) -> anyhow::Result<(Vec<Row>, TempDir)> {
    let dir = TempDir::new("bench-corpus");
    let db = dir.db_path();
    seed_in_batches(&db, facts.iter().map(|(t, c)| (t.as_str(), c.as_str())))?;
    let ids = fact_ids(&db)?;
    let n = facts.len();
    let mut answers: Vec<Option<Answers>> = Vec::new();
    for subject in subjects {
        answers.push(answer(subject, &db, queries, &ids)?);
    }
    let row = |label: String, unit: &'static str, value: &dyn Fn(&Answers) -> Option<f64>| {
        let mut values = answers.iter().map(|a| a.as_ref().and_then(value));
        Row {
            name: label,
            unit,
            ours: values.next().flatten(),
            vs: values.collect(),
        }
    };
    let mut rows = vec![
        row(
            format!("memory_search fts {name}, {n} facts, p50"),
            "ms",
            &|a| Some(percentile(a.latencies.clone(), 50)),
        ),
        row(
            format!("memory_search fts {name}, {n} facts, p95"),
            "ms",
            &|a| Some(percentile(a.latencies.clone(), 95)),
        ),
    ];
    let kinds: Vec<&'static str> = answers
        .iter()
        .flatten()
        .flat_map(|a| a.found.keys().copied())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    for kind in kinds {
        rows.push(row(
            format!("memory_search fts {name} recall@10, {kind}, {n} facts"),
            "share",
            &|a| {
                a.found
                    .get(kind)
                    .map(|(found, asked)| *found as f64 / (*asked).max(1) as f64)
            },
        ));
    }
    for row in &rows {
        progress(row);
    }
    let texts: Vec<&str> = queries.iter().map(|q| q.text.as_str()).collect();
    rows.push(measure(
        subjects,
        &format!("memory_search fts {name}, {n} facts, first query of a process"),
        "ms",
        1,
        |s| first_query(s, &db, &texts),
    )?);
    Ok((rows, dir))
}

/// Every query asked of `subject` once; `None` without `memory_search`.
fn answer(
    subject: &Subject,
    db: &Path,
    queries: &[Query],
    ids: &[String],
) -> anyhow::Result<Option<Answers>> {
    let mut server = spawn_memory(subject, db, &[]);
    if !offers(&mut server, "memory_search") {
        return Ok(None);
    }
    search(&mut server, "warm up the index", "fts")?;
    let mut answers = Answers {
        latencies: Vec::with_capacity(queries.len()),
        found: BTreeMap::new(),
    };
    for query in queries {
        let started = Instant::now();
        let hits = search(&mut server, &query.text, "fts")?;
        answers.latencies.push(ms(started.elapsed()));
        if let Some(target) = query.target {
            let entry = answers.found.entry(query.kind).or_insert((0, 0));
            entry.1 += 1;
            if hits.iter().any(|h| h["id"] == ids[target].as_str()) {
                entry.0 += 1;
            }
        }
    }
    server.close();
    Ok(Some(answers))
}

/// One `memory_search` call; its hits (ours answer a list, the reference `{results: […]}`).
fn search(server: &mut Server, query: &str, mode: &str) -> anyhow::Result<Vec<Value>> {
    let reply = server.call(
        "memory_search",
        json!({"query": query, "mode": mode, "limit": 10}),
    );
    if reply.is_error {
        bail!("memory_search failed: {}", reply.text());
    }
    if mode != "fts" && reply.blocks.len() > 1 {
        bail!("memory_search {mode} degraded: {}", reply.blocks[1]);
    }
    let hits: Value = serde_json::from_str(reply.text()).unwrap_or(Value::Null);
    Ok(hits
        .as_array()
        .or_else(|| hits["results"].as_array())
        .cloned()
        .unwrap_or_default())
}

/// The median over [`FIRST_QUERIES`] fresh processes of the first `memory_search` each answers
/// (after `initialize`), each asking another of `queries`.
fn first_query(subject: &Subject, db: &Path, queries: &[&str]) -> anyhow::Result<Option<f64>> {
    let mut times = Vec::new();
    for i in 0..FIRST_QUERIES {
        let mut server = spawn_memory(subject, db, &[]);
        let query = queries[(i * 37) % queries.len()];
        let started = Instant::now();
        let reply = server.call(
            "memory_search",
            json!({"query": query, "mode": "fts", "limit": 10}),
        );
        times.push(ms(started.elapsed()));
        server.close();
        if reply.is_error {
            // The comparison server may not offer it.
            return Ok(None);
        }
    }
    Ok(median(times))
}

/// Stores `facts` (title, content) in `db`, [`SEED_BATCH`] per transaction.
pub(super) fn seed_in_batches<'a>(
    db: &Path,
    facts: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> anyhow::Result<usize> {
    let db = Db::open(db)?;
    let conn = db.conn();
    let mut facts = facts.into_iter().peekable();
    let mut stored = 0;
    while facts.peek().is_some() {
        stored +=
            memory::seed_facts(&conn, facts.by_ref().take(SEED_BATCH)).context("seeding facts")?;
    }
    Ok(stored)
}

/// Full-text at a million facts: p50 and p95 of the natural queries, the first query of a fresh
/// process, and the file's size. Ours only (the comparison server is measured at 100,000).
fn million_rows(
    subjects: &[Subject],
    corpus: &corpus::Corpus,
    natural: &[String],
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    eprintln!("  building the million-fact store…");
    let mut sentences: Vec<&(String, String)> = corpus.facts.iter().chain(&corpus.held).collect();
    let mut rng = Rng::new(0x00D1_5EED);
    let mut spliced: Vec<(String, String)> = Vec::new();
    while sentences.len() + spliced.len() < MILLION {
        let (a, b) = (rng.pick(&sentences), rng.pick(&sentences));
        let (first, second) = (words(&a.1), words(&b.1));
        let text = format!(
            "{} {}",
            first[..first.len() / 2].join(" "),
            second[second.len() / 2..].join(" ")
        );
        spliced.push((a.0.clone(), text));
    }
    sentences.truncate(MILLION);
    let dir = TempDir::new("bench-million");
    let db = dir.db_path();
    let started = Instant::now();
    seed_in_batches(
        &db,
        sentences
            .iter()
            .map(|(t, c)| (t.as_str(), c.as_str()))
            .chain(spliced.iter().map(|(t, c)| (t.as_str(), c.as_str()))),
    )?;
    eprintln!(
        "  stored {MILLION} facts in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    let ours = search_latencies(&Subject::Ours, &db, &[], natural, "fts")?;
    let texts: Vec<&str> = natural.iter().map(String::as_str).collect();
    let first = first_query(&Subject::Ours, &db, &texts)?;
    let size = std::fs::metadata(&db)
        .map(|m| m.len() as f64 / (1024.0 * 1024.0))
        .ok();
    let label = |what: &str| format!("memory_search fts realistic, {MILLION} facts, {what}");
    rows.push(Row::ours_only(
        subjects,
        label("p50"),
        "ms",
        ours.clone().map(|l| percentile(l, 50)),
    ));
    rows.push(Row::ours_only(
        subjects,
        label("p95"),
        "ms",
        ours.map(|l| percentile(l, 95)),
    ));
    rows.push(Row::ours_only(
        subjects,
        label("first query of a process"),
        "ms",
        first,
    ));
    rows.push(Row::ours_only(subjects, label("file size"), "MiB", size));
    Ok(())
}

/// Reports a measured row on stderr as `measure` does, so a long run shows its figures as they come.
fn progress(row: &Row) {
    let vs: Vec<String> = row
        .vs
        .iter()
        .map(|v| v.map_or("n/a".into(), |v| format!("{v:.3}")))
        .collect();
    eprintln!(
        "  {}: {} {}{}",
        row.name,
        row.ours.map_or("n/a".into(), |v| format!("{v:.3}")),
        row.unit,
        if vs.is_empty() {
            String::new()
        } else {
            format!(" (vs {})", vs.join(", "))
        }
    );
}

/// The words of a sentence (split on white space).
fn words(sentence: &str) -> Vec<&str> {
    sentence.split_whitespace().collect()
}

/// `n` pings written at once; answers per second until the last arrives.
fn ping_rate(subject: &Subject, n: usize) -> anyhow::Result<Option<f64>> {
    let dir = TempDir::new("bench-ping");
    let mut server = subject.spawn("clawboo-mcp-tasks", &dir.db_path());
    server.initialize();
    let mut burst = Vec::new();
    for id in 0..n {
        burst.extend_from_slice(
            json!({"jsonrpc": "2.0", "id": format!("p{id}"), "method": "ping"})
                .to_string()
                .as_bytes(),
        );
        burst.push(b'\n');
    }
    let started = Instant::now();
    server.send_bytes(&burst);
    let last = json!(format!("p{}", n - 1));
    let mut answered = 0;
    loop {
        let message = server.read_message();
        answered += 1;
        if message["id"] == last || answered >= n {
            break;
        }
    }
    let rate = n as f64 / started.elapsed().as_secs_f64();
    server.close();
    Ok(Some(rate))
}

/// `n` `memory_save` calls one after another on a fresh store (no embeddings).
fn save_rate(subject: &Subject, n: usize) -> anyhow::Result<Option<f64>> {
    let dir = TempDir::new("bench-save");
    let mut server = subject.spawn("clawboo-mcp-memory", &dir.db_path());
    server.initialize();
    if !offers(&mut server, "memory_save") {
        return Ok(None);
    }
    let started = Instant::now();
    for i in 0..n {
        let reply = server.call(
            "memory_save",
            json!({"title": format!("note {i}"), "content": format!("the deploy of build {i} waits for the migration to finish")}),
        );
        if reply.is_error {
            bail!("memory_save failed: {}", reply.text());
        }
    }
    let rate = n as f64 / started.elapsed().as_secs_f64();
    server.close();
    Ok(Some(rate))
}

fn fact_ids(db: &Path) -> anyhow::Result<Vec<String>> {
    let db = Db::open(db)?;
    let conn = db.conn();
    let mut rows = conn.prepare("SELECT id FROM memory_facts ORDER BY rowid")?;
    let ids = rows
        .query_map([], |r| r.get(0))?
        .collect::<Result<Vec<String>, _>>()?;
    Ok(ids)
}

fn spawn_memory(subject: &Subject, db: &Path, env: &[(&str, &str)]) -> Server {
    let mut server = match subject {
        Subject::Ours => Server::spawn_command(bin_path("clawboo-mcp-memory"), db, env),
        Subject::Vs(_) => subject.spawn("clawboo-mcp-memory", db),
    };
    server.initialize();
    server
}

/// The latency of each query (ms), after one warm-up search; `None` without `memory_search`.
fn search_latencies(
    subject: &Subject,
    db: &Path,
    env: &[(&str, &str)],
    queries: &[String],
    mode: &str,
) -> anyhow::Result<Option<Vec<f64>>> {
    let mut server = spawn_memory(subject, db, env);
    if !offers(&mut server, "memory_search") {
        return Ok(None);
    }
    search(&mut server, "warm up the index", mode)?;
    let mut latencies = Vec::with_capacity(queries.len());
    for query in queries {
        let started = Instant::now();
        search(&mut server, query, mode)?;
        latencies.push(ms(started.elapsed()));
    }
    server.close();
    Ok(Some(latencies))
}

pub(super) fn percentile(mut values: Vec<f64>, pct: usize) -> f64 {
    if pct == 50 {
        return median(values).unwrap_or(0.0);
    }
    values.sort_by(f64::total_cmp);
    values[(values.len() * pct / 100).min(values.len() - 1)]
}

/// A 768-dimension embedding of `text`: each word adds ±1 to two hashed dimensions, normalised;
/// texts sharing words are similar, as with a real model.
pub(super) fn embed_text(text: &str) -> Vec<f32> {
    let mut v = vec![0.0f32; DIMS];
    for word in text
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in word.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        for k in 0..2 {
            let bits = h.rotate_left(k * 29);
            let sign = if bits & (1 << 40) == 0 { 1.0 } else { -1.0 };
            v[(bits % DIMS as u64) as usize] += sign;
        }
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

/// An Ollama stand-in on loopback answering [`embed_text`] vectors.
pub(super) fn embedder() -> loopback::Loopback {
    loopback::serve(|seen| {
        let answer = if seen.line == "POST /api/embed" {
            let request: Value = serde_json::from_str(&seen.body).unwrap_or(Value::Null);
            let vectors: Vec<Vec<f32>> = request["input"]
                .as_array()
                .map(|t| {
                    t.iter()
                        .map(|t| embed_text(t.as_str().unwrap_or("")))
                        .collect()
                })
                .unwrap_or_default();
            json!({"model": request["model"], "embeddings": vectors})
        } else {
            json!({"models": [{"name": "nomic-embed-text:latest"}]})
        };
        (200, answer.to_string())
    })
}

/// Gives every fact in `db` its stand-in vector, under the model id our memory bin stores with
/// the stand-in (learnt by saving one fact through it).
fn embed_all(db: &Path, env: &[(&str, &str)]) -> anyhow::Result<()> {
    let mut server = spawn_memory(&Subject::Ours, db, env);
    let reply = server.call(
        "memory_save",
        json!({"title": "model probe", "content": "which model embeds this"}),
    );
    server.close();
    if reply.is_error {
        bail!("memory_save failed: {}", reply.text());
    }
    let db = Db::open(db)?;
    let conn = db.conn();
    let model: Option<String> = conn.query_row(
        "SELECT embedding_model FROM memory_facts WHERE title = 'model probe'",
        [],
        |r| r.get(0),
    )?;
    let model = model.context("the memory bin did not embed with the stand-in")?;
    conn.execute_batch("BEGIN")?;
    {
        let mut rows = conn.prepare("SELECT rowid, content FROM memory_facts")?;
        let all: Vec<(i64, String)> = rows
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        let mut set = conn.prepare(
            "UPDATE memory_facts SET embedding = ?1, embedding_model = ?2 WHERE rowid = ?3",
        )?;
        for (rowid, content) in all {
            set.execute((embed::to_blob(&embed_text(&content)), &model, rowid))?;
        }
    }
    conn.execute_batch("COMMIT")?;
    Ok(())
}
