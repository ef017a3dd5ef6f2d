//! The memory search rows over two corpora of facts and queries-with-kinds, each named in its
//! rows: the **tuning corpus** (`corpus`: sentences of this machine's crate sources and toolchain
//! docs, the corpus the search was tuned on) and the **held-out corpus**
//! (`clawboo_tests::heldout::search`: man pages and package docs in several registers, queries
//! built another way; called here, never read to tune). For each, at 100,000 facts (10,000 with
//! `--quick`): full-text latency (p50, p95) and recall@10 per kind of query, the first query of a
//! fresh process and its peak RSS, vector and hybrid latency and recall@10 over every fact
//! embedded with 768 dimensions by the stand-in, and fts, vector and hybrid recall@10 on the
//! paraphrases and questions with a real model over a few thousand of the facts
//! ([`meaning_rows`]); at a million facts (not with `--quick` or `--no-million`): the
//! full-text rows and the file's size. Plus pipelined `ping` throughput and `memory_save` rate. A
//! child of `bench` (it adds rows to its table).
//!
//! Owns: [`corpus_rows`], the rows of one corpus at one size; seeding a store in bounded
//! transactions ([`seed_in_batches`]); the million-fact stores (the tuning corpus's sentences, then
//! sentences spliced from two of them, first half and second half; the held-out generator asked
//! for a million).
//!
//! Must never: assert on a time.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clawboo_core::Db;
use clawboo_core::internal::memory::{self, embed};
use clawboo_tests::heldout;
use clawboo_tests::{Rng, TempDir, ToolReply, loopback};
use serde_json::{Value, json};

use super::corpus::{self, Query};
use super::model;
use super::stdio::{LeanClient, peak_rss_kib};
use super::{Row, Subject, measure, median, ms, offers};

/// Dimensions of the bench's stand-in embeddings (nomic-embed-text's).
pub(super) const DIMS: usize = 768;
/// Facts stored per transaction when seeding.
const SEED_BATCH: usize = 50_000;
/// Probes of each kind asked of the held-out corpus (at 100k facts and at a million; 50 with
/// `--quick`). More than the tuning corpus's 300: its figures are the result, and at 300 probes
/// one standard deviation of a recall near 0.9 is 0.017, as large as the gaps the rows must tell
/// apart (at 1,000, 0.009).
const HELD_OUT_PROBES: usize = 1_000;
/// Fresh processes whose first query is timed.
const FIRST_QUERIES: usize = 7;
/// The large store's size.
const MILLION: usize = 1_000_000;
/// The corpus the search was tuned on, as row names say it.
const TUNING: &str = "tuning corpus";
/// The corpus the search never saw while being tuned, as row names say it.
const HELD_OUT: &str = "held-out corpus";

/// Adds the rows of this module to `rows`.
pub(super) fn add_rows(
    subjects: &[Subject],
    quick: bool,
    million: bool,
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
    memory_rows(subjects, quick, million, rows)
}

/// The memory search rows alone (`--memory`): both corpora at 100k facts (10k if `quick`), and
/// with `million` a million facts of each.
pub(super) fn memory_rows(
    subjects: &[Subject],
    quick: bool,
    million: bool,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    // Natural queries, and probes of each kind.
    let (facts, searches, probes) = if quick {
        (10_000, 50, 50)
    } else {
        (100_000, 300, 300)
    };
    eprintln!("  building the {TUNING} ({facts} facts)…");
    let tuning = corpus::build(facts, searches, probes)?;
    eprintln!("  the {TUNING}: fingerprint {}", tuning.fingerprint());
    let (facts_of, queries_of) = (&tuning.facts, &tuning.queries);
    rows.extend(corpus_rows(
        subjects,
        TUNING,
        facts_of,
        queries_of,
        Rows::Compared,
    )?);
    rows.extend(meaning_rows(subjects, TUNING, facts_of, queries_of, quick)?);
    eprintln!("  building the {HELD_OUT} ({facts} facts)…");
    let held_probes = if quick { probes } else { HELD_OUT_PROBES };
    let held = held_out(facts, held_probes)?;
    eprintln!("  the {HELD_OUT}: fingerprint {}", held.fingerprint());
    rows.extend(corpus_rows(
        subjects,
        HELD_OUT,
        &held.facts,
        &held.queries,
        Rows::Compared,
    )?);
    rows.extend(meaning_rows(
        subjects,
        HELD_OUT,
        &held.facts,
        &held.queries,
        quick,
    )?);
    drop(held);
    if million {
        eprintln!("  building the {TUNING} at {MILLION} facts…");
        let million = spliced_million(&tuning);
        let queries = million_queries(&tuning);
        let ours = Rows::OursFullText;
        rows.extend(corpus_rows(subjects, TUNING, &million, &queries, ours)?);
        drop(million);
        eprintln!("  building the {HELD_OUT} at {MILLION} facts…");
        let held = held_out(MILLION, held_probes)?;
        rows.extend(corpus_rows(
            subjects,
            HELD_OUT,
            &held.facts,
            &held.queries,
            ours,
        )?);
    }
    Ok(())
}

/// The held-out corpus of `facts` facts and `per_kind` queries of each kind, as a bench corpus
/// (nothing held back).
fn held_out(facts: usize, per_kind: usize) -> anyhow::Result<corpus::Corpus> {
    let started = Instant::now();
    let corpus = heldout::search::build(facts, per_kind).context("building the held-out corpus")?;
    eprintln!(
        "  built the {HELD_OUT} in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    let queries = corpus
        .queries
        .into_iter()
        .map(|q| Query {
            kind: q.kind.as_str(),
            text: q.text,
            target: Some(q.target),
        })
        .collect();
    Ok(corpus::Corpus {
        facts: corpus.facts,
        queries,
        held: Vec::new(),
    })
}

/// A million facts made from the tuning corpus: its sentences (stored or held back) spread evenly
/// through the store, and between them sentences spliced from two of them, first half and second
/// half. Spread, so a query's target is as often among the newer facts as among the older ones
/// (no reading order is favoured by where the targets sit); [`million_queries`] moves the
/// queries' targets to where their facts went.
pub(super) fn spliced_million(corpus: &corpus::Corpus) -> Vec<(String, String)> {
    let sentences: Vec<&(String, String)> = corpus.facts.iter().chain(&corpus.held).collect();
    let mut rng = Rng::new(0x00D1_5EED);
    let mut facts: Vec<(String, String)> = Vec::with_capacity(MILLION);
    let mut next = 0;
    while facts.len() < MILLION {
        if next < sentences.len() && million_position(next, sentences.len()) == facts.len() {
            facts.push(sentences[next].clone());
            next += 1;
            continue;
        }
        let (a, b) = (rng.pick(&sentences), rng.pick(&sentences));
        let (first, second) = (words(&a.1), words(&b.1));
        let text = format!(
            "{} {}",
            first[..first.len() / 2].join(" "),
            second[second.len() / 2..].join(" ")
        );
        facts.push((a.0.clone(), text));
    }
    facts
}

/// `corpus`'s queries, their targets moved to where [`spliced_million`] puts their facts.
pub(super) fn million_queries(corpus: &corpus::Corpus) -> Vec<Query> {
    let sentences = corpus.facts.len() + corpus.held.len();
    corpus
        .queries
        .iter()
        .map(|q| Query {
            kind: q.kind,
            text: q.text.clone(),
            target: q.target.map(|t| million_position(t, sentences)),
        })
        .collect()
}

/// Where [`spliced_million`] puts the `index`th of `sentences` sentences: evenly spaced.
fn million_position(index: usize, sentences: usize) -> usize {
    index * MILLION / sentences.clamp(1, MILLION)
}

/// The kinds of query whose words may differ from their fact's, measured again by
/// [`meaning_rows`]: the tuning corpus's `synonym` (a paraphrase as a person makes it) is its own.
pub(super) const MEANING_KINDS: &[&str] = &["paraphrase", "synonym", "question"];
/// How many of a corpus's facts [`meaning_rows`] embeds (1,000 with `--quick`).
pub(super) const MEANING_FACTS: usize = 5_000;

/// Recall@10 of fts, vector and hybrid on a corpus's [`MEANING_KINDS`] queries with a real model
/// when one is installed (`model`; the row names say which embedder ran): a real model embeds a few
/// dozen facts a second, so the store is [`MEANING_FACTS`] of the corpus's facts
/// ([`meaning_store`]), not all of them.
fn meaning_rows(
    subjects: &[Subject],
    name: &str,
    facts: &[(String, String)],
    queries: &[Query],
    quick: bool,
) -> anyhow::Result<Vec<Row>> {
    let size = if quick { 1_000 } else { MEANING_FACTS };
    let (store, probes) = meaning_store(facts, queries, size);
    let embedder = model::Embedder::start()?;
    let dir = TempDir::new("bench-meaning");
    let mut rows = Vec::new();
    for (mode, kind, share) in model::recall(&embedder, &dir.db_path(), &store, &probes)? {
        let label = format!(
            "memory_search {mode} {name}, {} facts ({}), recall@10 {kind}",
            store.len(),
            embedder.name()
        );
        let row = Row::ours_only(subjects, label, "share", Some(share));
        progress(&row);
        rows.push(row);
    }
    Ok(rows)
}

/// The store and probes of the meaning rows: `size` of `facts` (the targets of the
/// [`MEANING_KINDS`] queries, and facts evenly spread through the rest, in the corpus's order),
/// and those queries with their targets' positions in it.
pub(super) fn meaning_store(
    facts: &[(String, String)],
    queries: &[Query],
    size: usize,
) -> (Vec<(String, String)>, Vec<model::Probe>) {
    let size = size.min(facts.len());
    let asked: Vec<(&Query, usize)> = queries
        .iter()
        .filter(|q| MEANING_KINDS.contains(&q.kind))
        .filter_map(|q| Some((q, q.target?)))
        .collect();
    let mut chosen: BTreeSet<usize> = asked.iter().map(|(_, target)| *target).collect();
    let step = (facts.len() / size.max(1)).max(1);
    for at in (0..facts.len()).step_by(step) {
        if chosen.len() >= size {
            break;
        }
        chosen.insert(at);
    }
    let chosen: Vec<usize> = chosen.into_iter().collect();
    let store: Vec<(String, String)> = chosen.iter().map(|&at| facts[at].clone()).collect();
    let probes: Vec<model::Probe> = asked
        .iter()
        .filter_map(|(q, target)| {
            Some(model::Probe {
                kind: q.kind,
                text: q.text.clone(),
                target: chosen.binary_search(target).ok()?,
            })
        })
        .collect();
    (store, probes)
}

/// Which rows [`corpus_rows`] measures.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rows {
    /// Every subject's full-text rows, and ours for vector and hybrid.
    Compared,
    /// Our full-text rows only, and the file's size (the comparison server is measured at the
    /// smaller size).
    OursFullText,
}

/// What one subject answered to a corpus's queries.
struct Answers {
    /// Each query's latency (ms): its round trip up to the answer's arrival, in order.
    latencies: Vec<f64>,
    /// Per kind: probes whose fact was in the top 10, and probes.
    found: BTreeMap<&'static str, (usize, usize)>,
}

/// The rows of one corpus, named `name` and its size: `facts` (title, content) are stored in a new
/// file, every query is asked once (limit 10) after a warm-up, and the rows are p50 and p95 over
/// every query and recall@10 for each kind of query that has targets, full-text then (with
/// [`Rows::Compared`]) vector and hybrid over the stand-in's vectors, and the first full-text
/// query of a fresh process with its peak RSS.
fn corpus_rows(
    subjects: &[Subject],
    name: &str,
    facts: &[(String, String)],
    queries: &[Query],
    which: Rows,
) -> anyhow::Result<Vec<Row>> {
    let dir = TempDir::new("bench-corpus");
    let db = dir.db_path();
    let n = facts.len();
    let started = Instant::now();
    seed_in_batches(&db, facts.iter().map(|(t, c)| (t.as_str(), c.as_str())))?;
    eprintln!(
        "  stored {n} facts of the {name} in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    let ids = fact_ids(&db)?;
    let measured = |s: &Subject| which == Rows::Compared || matches!(s, Subject::Ours);
    let mut answers = Vec::new();
    for subject in subjects {
        answers.push(if measured(subject) {
            answer(subject, &db, &[], queries, &ids, "fts")?
        } else {
            None
        });
    }
    let mut rows = mode_rows("fts", &format!("{name}, {n} facts"), &answers);
    let texts: Vec<&str> = queries.iter().map(|q| q.text.as_str()).collect();
    let mut firsts = Vec::new();
    for subject in subjects {
        firsts.push(if measured(subject) {
            first_query(subject, &db, &texts)?
        } else {
            None
        });
    }
    let label = format!("memory_search fts {name}, {n} facts, first query of a process");
    rows.push(row_of(label, "ms", firsts.iter().map(|f| f.map(|f| f.0))));
    let label = format!("peak RSS after a first fts query, {name}, {n} facts");
    rows.push(row_of(label, "KiB", firsts.iter().map(|f| f.map(|f| f.1))));
    rows.extend(merged_rows(subjects, name, &db, queries, &ids)?);
    if which == Rows::OursFullText {
        let size = std::fs::metadata(&db)
            .map(|m| m.len() as f64 / (1024.0 * 1024.0))
            .ok();
        let label = format!("memory_search fts {name}, {n} facts, file size");
        rows.push(Row::ours_only(subjects, label, "MiB", size));
    }
    for row in &rows {
        progress(row);
    }
    if which == Rows::Compared {
        let stand_in = embedder();
        let env = [("OLLAMA_HOST", stand_in.base.as_str())];
        embed_all(&db, &env)?;
        for mode in ["vector", "hybrid"] {
            let mut answers = vec![answer(&Subject::Ours, &db, &env, queries, &ids, mode)?];
            answers.resize_with(subjects.len(), || None);
            let mode_rows = mode_rows(mode, &format!("{name}, {n} facts x {DIMS} dims"), &answers);
            for row in &mode_rows {
                progress(row);
            }
            rows.extend(mode_rows);
        }
    }
    Ok(rows)
}

/// Our full-text latency rows again after the upkeep the host runs hourly and `compact` runs
/// (`memory::merge_text_indexes`: each index merged into one segment), on the store at `db` as
/// seeded: the rows before are the index as its writes left it, these as upkeep leaves it. Recall
/// is not repeated: merging moves entries, it does not change what is found.
fn merged_rows(
    subjects: &[Subject],
    name: &str,
    db: &Path,
    queries: &[Query],
    ids: &[String],
) -> anyhow::Result<Vec<Row>> {
    {
        let db = Db::open(db)?;
        memory::merge_text_indexes(&db.conn()).context("merging the full-text indexes")?;
    }
    let mut answers = vec![answer(&Subject::Ours, db, &[], queries, ids, "fts")?];
    answers.resize_with(subjects.len(), || None);
    let what = format!("{name}, {} facts, index merged by upkeep", ids.len());
    let rows: Vec<Row> = mode_rows("fts", &what, &answers)
        .into_iter()
        .filter(|row| !row.name.contains("recall"))
        .collect();
    for row in &rows {
        progress(row);
    }
    Ok(rows)
}

/// A row whose first value is ours and the rest the comparison servers'.
fn row_of(name: String, unit: &'static str, mut values: impl Iterator<Item = Option<f64>>) -> Row {
    Row {
        name,
        unit,
        ours: values.next().flatten(),
        vs: values.collect(),
    }
}

/// p50, p95 and recall@10 per kind of each subject's `answers` in `mode`, named after `what`.
fn mode_rows(mode: &str, what: &str, answers: &[Option<Answers>]) -> Vec<Row> {
    let row = |label: String, unit: &'static str, value: &dyn Fn(&Answers) -> Option<f64>| {
        row_of(
            label,
            unit,
            answers.iter().map(|a| a.as_ref().and_then(value)),
        )
    };
    let mut rows = vec![
        row(format!("memory_search {mode} {what}, p50"), "ms", &|a| {
            Some(percentile(a.latencies.clone(), 50))
        }),
        row(format!("memory_search {mode} {what}, p95"), "ms", &|a| {
            Some(percentile(a.latencies.clone(), 95))
        }),
    ];
    let kinds: BTreeSet<&'static str> = answers
        .iter()
        .flatten()
        .flat_map(|a| a.found.keys().copied())
        .collect();
    for kind in kinds {
        rows.push(row(
            format!("memory_search {mode} {what}, recall@10 {kind}"),
            "share",
            &|a| {
                a.found
                    .get(kind)
                    .map(|(found, asked)| *found as f64 / (*asked).max(1) as f64)
            },
        ));
    }
    rows
}

/// Every query asked of `subject` once in `mode` (with `env`); `None` without `memory_search`.
fn answer(
    subject: &Subject,
    db: &Path,
    env: &[(&str, &str)],
    queries: &[Query],
    ids: &[String],
    mode: &str,
) -> anyhow::Result<Option<Answers>> {
    let mut server = spawn_memory(subject, db, env)?;
    if !server.offers("memory_search")? {
        return Ok(None);
    }
    search(&mut server, "warm up the index", mode)?;
    let mut answers = Answers {
        latencies: Vec::with_capacity(queries.len()),
        found: BTreeMap::new(),
    };
    for query in queries {
        let Searched { hits, round_trip } = search(&mut server, &query.text, mode)?;
        answers.latencies.push(ms(round_trip));
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

/// What one `memory_search` call answered.
pub(super) struct Searched {
    /// Its hits (see [`hits_of`]).
    pub(super) hits: Vec<Value>,
    /// Its round trip, up to the answer's arrival (`LeanClient::timed_reply`).
    pub(super) round_trip: Duration,
}

/// One `memory_search` call for the top 10; its reply, a tool-error too, and its round trip.
fn search_reply(
    server: &mut LeanClient,
    query: &str,
    mode: &str,
) -> anyhow::Result<(ToolReply, Duration)> {
    server.timed_reply(
        "memory_search",
        &json!({"query": query, "mode": mode, "limit": 10}),
    )
}

/// One `memory_search` call; its hits and round trip.
pub(super) fn search(server: &mut LeanClient, query: &str, mode: &str) -> anyhow::Result<Searched> {
    let (reply, round_trip) = search_reply(server, query, mode)?;
    if reply.is_error {
        bail!("memory_search failed: {}", reply.text());
    }
    if mode != "fts" && reply.blocks.len() > 1 {
        bail!("memory_search {mode} degraded: {}", reply.blocks[1]);
    }
    let hits = hits_of(&reply).with_context(|| {
        let text: String = reply.text().chars().take(200).collect();
        format!("memory_search answered no list of hits: {text}")
    })?;
    Ok(Searched { hits, round_trip })
}

/// The hits of a `memory_search` answer from any stdio MCP memory server, each an object with the
/// fact's `id`: the first text block as JSON, a list (ours and the reference's answer) or
/// `{"results": […]}`, else `structuredContent` in either shape. `None` when the answer holds no
/// such list, so a format the bench cannot read is an error rather than a row of misses.
fn hits_of(reply: &ToolReply) -> Option<Vec<Value>> {
    let list = |v: &Value| v.as_array().or_else(|| v["results"].as_array()).cloned();
    serde_json::from_str::<Value>(reply.text())
        .ok()
        .as_ref()
        .and_then(list)
        .or_else(|| list(&reply.raw["structuredContent"]))
}

/// Over [`FIRST_QUERIES`] fresh processes, each asking another of `queries` right after
/// `initialize`: the median time of that first `memory_search` (ms) and the median peak RSS of the
/// process after it (KiB).
fn first_query(
    subject: &Subject,
    db: &Path,
    queries: &[&str],
) -> anyhow::Result<Option<(f64, f64)>> {
    let (mut times, mut peaks) = (Vec::new(), Vec::new());
    for i in 0..FIRST_QUERIES {
        let mut server = spawn_memory(subject, db, &[])?;
        let query = queries[(i * 37) % queries.len()];
        let (reply, round_trip) = search_reply(&mut server, query, "fts")?;
        times.push(ms(round_trip));
        peaks.extend(peak_rss_kib(server.pid()));
        server.close();
        if reply.is_error {
            // The comparison server may not offer it.
            return Ok(None);
        }
    }
    Ok(median(times).zip(median(peaks)))
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

pub(super) fn fact_ids(db: &Path) -> anyhow::Result<Vec<String>> {
    let db = Db::open(db)?;
    let conn = db.conn();
    let mut rows = conn.prepare("SELECT id FROM memory_facts ORDER BY rowid")?;
    let ids = rows
        .query_map([], |r| r.get(0))?
        .collect::<Result<Vec<String>, _>>()?;
    Ok(ids)
}

/// `subject`'s memory server on `db` (ours with `env`), initialized, read by the lean client that
/// drives every subject's round trips (no reader thread of its own to wake).
pub(super) fn spawn_memory(
    subject: &Subject,
    db: &Path,
    env: &[(&str, &str)],
) -> anyhow::Result<LeanClient> {
    let mut command = subject.command("clawboo-mcp-memory", db);
    if matches!(subject, Subject::Ours) {
        command.envs(env.iter().copied());
    }
    LeanClient::start(command)
}

/// The `pct` percentile of `values` (the median for 50).
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
    let mut server = spawn_memory(&Subject::Ours, db, env)?;
    let reply = server.reply(
        "memory_save",
        &json!({"title": "model probe", "content": "which model embeds this"}),
    )?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_million_spreads_the_corpus_and_its_queries_still_find_their_facts() {
        let fact = |i: usize| {
            (
                format!("t{i}"),
                format!("sentence number {i} of the corpus"),
            )
        };
        let corpus = corpus::Corpus {
            facts: (0..1_000).map(fact).collect(),
            queries: vec![
                Query {
                    kind: "words",
                    text: "first".into(),
                    target: Some(0),
                },
                Query {
                    kind: "words",
                    text: "middle".into(),
                    target: Some(500),
                },
                Query {
                    kind: "words",
                    text: "last".into(),
                    target: Some(999),
                },
                Query {
                    kind: "natural",
                    text: "no target".into(),
                    target: None,
                },
            ],
            held: (1_000..1_100).map(fact).collect(),
        };
        let million = spliced_million(&corpus);
        assert_eq!(million.len(), MILLION);
        let queries = million_queries(&corpus);
        for (before, after) in corpus.queries.iter().zip(&queries) {
            assert_eq!(
                before.target.map(|t| &corpus.facts[t]),
                after.target.map(|t| &million[t])
            );
        }
        // The last target sits among the newest tenth, not among the oldest.
        assert!(
            queries[2].target.is_some_and(|t| t > MILLION * 9 / 10),
            "{:?}",
            queries[2].target
        );
        let sentences: Vec<_> = corpus.facts.iter().chain(&corpus.held).collect();
        for (j, sentence) in sentences.iter().enumerate() {
            assert_eq!(&&million[million_position(j, sentences.len())], sentence);
        }
    }

    fn reply(result: Value) -> ToolReply {
        ToolReply::from_result(result)
    }

    #[test]
    fn hits_are_read_from_the_text_or_the_structured_content_in_either_shape() {
        let hit = json!({"id": "f1", "title": "t"});
        let text = |v: &Value| {
            let block = json!({"type": "text", "text": v.to_string()});
            json!({"content": [block], "isError": false})
        };
        assert_eq!(
            hits_of(&reply(text(&json!([hit])))),
            Some(vec![hit.clone()])
        );
        assert_eq!(
            hits_of(&reply(text(&json!({"results": [hit]})))),
            Some(vec![hit.clone()])
        );
        assert_eq!(hits_of(&reply(text(&json!([])))), Some(Vec::new()));
        let structured = json!({
            "content": [{"type": "text", "text": "1 fact found: f1"}],
            "structuredContent": {"results": [hit]},
            "isError": false,
        });
        assert_eq!(hits_of(&reply(structured)), Some(vec![hit]));
        let neither = json!({"content": [{"type": "text", "text": "f1"}], "isError": false});
        assert_eq!(hits_of(&reply(neither)), None);
    }
}
