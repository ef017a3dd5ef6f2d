//! The realistic corpus of `cargo xtask bench`: ordinary English technical sentences, built at
//! bench time from text already on the machine, with natural queries and a relevance probe; and
//! the benchmarks that use it (full-text latency and recall@10, vector and hybrid latency over
//! every fact embedded with 768 dimensions, `memory_save` rate), plus pipelined `ping`
//! throughput. A child of `bench` (it adds rows to its table).
//!
//! Owns: gathering sentences (the doc comments of the crates in the local cargo registry, then the
//! prose of the Rust toolchain's HTML docs under `rustc --print sysroot`/share/doc), splitting them
//! into sentences of 6 to 60 words, a deterministic shuffle, and the workloads drawn from them:
//! facts (title: where the sentence came from, content: the sentence), queries (a window of 4–7
//! consecutive words, stop words included, from a sentence held back from the store) and probes
//! (5 consecutive words of a stored fact: is that fact in the top 10?).
//!
//! Guarantees: offline, deterministic for a given machine (files are read in sorted order), and
//! bounded (reading stops once enough distinct sentences are found). Must never: fetch anything.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use clawboo_core::Db;
use clawboo_core::internal::memory::{self, embed};
use clawboo_tests::{Rng, Server, TempDir, bin_path, loopback};
use serde_json::{Value, json};

use super::{Row, Subject, measure, median, ms, offers};

/// Dimensions of the bench's stand-in embeddings (nomic-embed-text's).
pub(super) const DIMS: usize = 768;

/// Adds the rows of this module to `rows`.
pub(super) fn add_rows(
    subjects: &[Subject],
    quick: bool,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let (facts, searches, pings, saves) = if quick {
        (10_000, 50, 2_000, 200)
    } else {
        (100_000, 300, 20_000, 2_000)
    };
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
    eprintln!("  building the realistic corpus ({facts} facts)…");
    let corpus = build(facts, searches, searches)?;
    let dir = TempDir::new("bench-corpus");
    let db = dir.db_path();
    {
        let db = Db::open(&db)?;
        memory::seed_facts(
            &db.conn(),
            corpus.facts.iter().map(|(t, c)| (t.as_str(), c.as_str())),
        )?;
    }
    let ids = fact_ids(&db)?;
    for (stat, unit) in [("p50", "ms"), ("p95", "ms")] {
        rows.push(measure(
            subjects,
            &format!("memory_search fts realistic, {facts} facts, {stat}"),
            unit,
            1,
            |s| {
                let latencies = search_latencies(s, &db, &[], &corpus.queries, "fts")?;
                Ok(latencies.map(|l| percentile(l, if stat == "p50" { 50 } else { 95 })))
            },
        )?);
    }
    rows.push(measure(
        subjects,
        &format!("memory_search fts recall@10, five words of a fact, {facts} facts"),
        "share",
        1,
        |s| recall(s, &db, &corpus, &ids),
    )?);
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
                Subject::Ours => Ok(search_latencies(s, &db, &env, &corpus.queries, mode)?
                    .map(|l| percentile(l, 50))),
                Subject::Vs(_) => Ok(None),
            },
        )?);
    }
    Ok(())
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
    let search = |server: &mut Server, query: &str| -> anyhow::Result<()> {
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
        Ok(())
    };
    search(&mut server, "warm up the index")?;
    let mut latencies = Vec::with_capacity(queries.len());
    for query in queries {
        let started = Instant::now();
        search(&mut server, query)?;
        latencies.push(ms(started.elapsed()));
    }
    server.close();
    Ok(Some(latencies))
}

/// The share of probes (five consecutive words of a stored fact) whose fact is in the top 10.
fn recall(
    subject: &Subject,
    db: &Path,
    corpus: &Corpus,
    ids: &[String],
) -> anyhow::Result<Option<f64>> {
    let mut server = spawn_memory(subject, db, &[]);
    if !offers(&mut server, "memory_search") {
        return Ok(None);
    }
    let mut found = 0;
    for (index, probe) in &corpus.probes {
        let reply = server.call(
            "memory_search",
            json!({"query": probe, "mode": "fts", "limit": 10}),
        );
        let text = reply.text();
        let hits: Value = serde_json::from_str(text).unwrap_or(Value::Null);
        let listed = hits
            .as_array()
            .or_else(|| hits["results"].as_array())
            .cloned()
            .unwrap_or_default();
        if listed.iter().any(|h| h["id"] == ids[*index].as_str()) {
            found += 1;
        }
    }
    server.close();
    Ok(Some(found as f64 / corpus.probes.len() as f64))
}

fn percentile(mut values: Vec<f64>, pct: usize) -> f64 {
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

/// Sentences held back from the store to make queries from.
const HELD_BACK: usize = 2_000;

/// What the bench stores and asks.
pub struct Corpus {
    /// (title, content) of every fact, in insertion order.
    pub facts: Vec<(String, String)>,
    /// Natural queries: word windows of held-back sentences.
    pub queries: Vec<String>,
    /// (index of a stored fact, five consecutive words of it).
    pub probes: Vec<(usize, String)>,
}

/// Builds a corpus of `facts` facts with `queries` queries and `probes` probes.
pub fn build(facts: usize, queries: usize, probes: usize) -> anyhow::Result<Corpus> {
    let wanted = facts + HELD_BACK;
    let mut sentences = Sentences::new(wanted);
    for file in registry_sources()? {
        if sentences.full() {
            break;
        }
        if let Ok(text) = std::fs::read_to_string(&file) {
            sentences.add_doc_comments(&label_of_source(&file), &text);
        }
    }
    for file in toolchain_pages()? {
        if sentences.full() {
            break;
        }
        if let Ok(text) = std::fs::read_to_string(&file) {
            sentences.add_html(&label_of_page(&file), &text);
        }
    }
    let mut all = sentences.found;
    if all.len() < facts + queries.min(HELD_BACK) {
        bail!(
            "only {} sentences of English text found on this machine (cargo registry doc \
             comments, toolchain docs); {} needed",
            all.len(),
            facts + queries
        );
    }
    let mut rng = Rng::new(0xC0_4905);
    rng.shuffle(&mut all);
    let held: Vec<(String, String)> = all.split_off(facts);
    let queries = (0..queries)
        .map(|i| {
            let words = words_of(&held[i % held.len()].1);
            let len = (4 + rng.below(4)).min(words.len());
            let start = rng.below(words.len() - len + 1);
            words[start..start + len].join(" ")
        })
        .collect();
    let probes = (0..probes)
        .map(|_| {
            let index = rng.below(all.len());
            let words = words_of(&all[index].1);
            let start = rng.below(words.len() - 5 + 1);
            (index, words[start..start + 5].join(" "))
        })
        .collect();
    Ok(Corpus {
        facts: all,
        queries,
        probes,
    })
}

/// The words of a sentence as a person would type them (punctuation dropped).
fn words_of(sentence: &str) -> Vec<&str> {
    sentence
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| w.chars().any(char::is_alphabetic))
        .collect()
}

/// Distinct sentences, up to a count.
struct Sentences {
    found: Vec<(String, String)>,
    seen: HashSet<String>,
    wanted: usize,
}

impl Sentences {
    fn new(wanted: usize) -> Self {
        Self {
            found: Vec::new(),
            seen: HashSet::new(),
            wanted,
        }
    }

    fn full(&self) -> bool {
        self.found.len() >= self.wanted
    }

    /// Splits `text` into sentences and keeps those of 6 to 60 words, under `label`.
    fn add_text(&mut self, label: &str, text: &str) {
        let mut start = 0;
        let bytes = text.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            let ends = matches!(b, b'.' | b'!' | b'?')
                && bytes.get(i + 1).is_none_or(u8::is_ascii_whitespace);
            if ends || i + 1 == bytes.len() {
                let sentence = text[start..=i].trim();
                start = i + 1;
                let words = words_of(sentence).len();
                if (6..=60).contains(&words)
                    && !self.full()
                    && self.seen.insert(sentence.to_owned())
                {
                    self.found.push((label.to_owned(), sentence.to_owned()));
                }
            }
        }
    }

    /// The `///` and `//!` comments of a Rust file, paragraph by paragraph, code blocks skipped.
    fn add_doc_comments(&mut self, label: &str, source: &str) {
        let mut paragraph = String::new();
        let mut in_code = false;
        for line in source.lines() {
            let line = line.trim_start();
            let doc = line
                .strip_prefix("///")
                .or_else(|| line.strip_prefix("//!"))
                .map(str::trim);
            match doc {
                Some(text) if text.starts_with("```") => in_code = !in_code,
                Some(text) if !in_code && !text.is_empty() && !text.starts_with('#') => {
                    paragraph.push_str(text);
                    paragraph.push(' ');
                }
                _ => {
                    if !paragraph.is_empty() {
                        let text = strip_markdown(&paragraph);
                        self.add_text(label, &text);
                        paragraph.clear();
                    }
                }
            }
        }
    }

    /// The prose of an HTML page: the text of its paragraphs and list items (`<p>`, `<li>`), so
    /// navigation, headings, signatures and code are left out.
    fn add_html(&mut self, label: &str, page: &str) {
        let mut rest = page;
        while let Some(open) = find_prose(rest) {
            rest = &rest[open..];
            let close = if rest.starts_with("<p") {
                "</p>"
            } else {
                "</li>"
            };
            let end = rest.find(close).unwrap_or(rest.len());
            let text = strip_tags(&rest[..end]).replace("Read more", " ");
            self.add_text(label, &text);
            rest = &rest[end..];
        }
    }
}

/// Where the next `<p>` or `<li>` element starts.
fn find_prose(html: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = html[from..].find('<') {
        let tag = &html[from + at..];
        if tag.starts_with("<p>") || tag.starts_with("<p ") || tag.starts_with("<li>") {
            return Some(from + at);
        }
        from += at + 1;
    }
    None
}

/// The text of an HTML fragment: tags and code blocks removed, entities decoded, whitespace
/// collapsed.
fn strip_tags(html: &str) -> String {
    let mut text = String::new();
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        text.push_str(&rest[..open]);
        rest = &rest[open..];
        let skip_to = if rest.starts_with("<pre") {
            rest.find("</pre>").map(|e| e + 6)
        } else {
            rest.find('>').map(|e| e + 1)
        };
        rest = &rest[skip_to.unwrap_or(rest.len())..];
    }
    text.push_str(rest);
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Markdown links and emphasis reduced to their words.
fn strip_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '`' | '*' | '[' => {}
            ']' => {
                // `[text](target)` or `[text][ref]`: keep the text only.
                if matches!(chars.peek(), Some('(') | Some('[')) {
                    let close = if chars.next() == Some('(') { ')' } else { ']' };
                    for skipped in chars.by_ref() {
                        if skipped == close {
                            break;
                        }
                    }
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// Every `.rs` file under `src/` of every crate in the local cargo registry, sorted.
fn registry_sources() -> anyhow::Result<Vec<PathBuf>> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))
        .context("neither CARGO_HOME nor HOME is set")?;
    let mut files = Vec::new();
    for index in read_dir_sorted(&home.join("registry").join("src")) {
        for krate in read_dir_sorted(&index) {
            collect(&krate.join("src"), "rs", &mut files);
        }
    }
    Ok(files)
}

/// The HTML pages of the toolchain's books and standard library docs, sorted, books first.
fn toolchain_pages() -> anyhow::Result<Vec<PathBuf>> {
    let output = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .context("running rustc --print sysroot")?;
    let sysroot = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let html = Path::new(&sysroot).join("share/doc/rust/html");
    let mut files = Vec::new();
    for book in [
        "book",
        "reference",
        "nomicon",
        "rust-by-example",
        "cargo",
        "edition-guide",
        "embedded-book",
        "rustc",
        "rustdoc",
        "error_codes",
        "style-guide",
        "unstable-book",
        "std",
        "core",
        "alloc",
    ] {
        collect(&html.join(book), "html", &mut files);
    }
    Ok(files)
}

fn read_dir_sorted(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    entries.sort();
    entries
}

/// Every file with `extension` under `dir`, depth first in sorted order.
fn collect(dir: &Path, extension: &str, files: &mut Vec<PathBuf>) {
    for path in read_dir_sorted(dir) {
        if path.is_dir() {
            collect(&path, extension, files);
        } else if path.extension().is_some_and(|e| e == extension) {
            files.push(path);
        }
    }
}

/// `crate-1.2.3/src/a/b.rs` → `crate a b`.
fn label_of_source(file: &Path) -> String {
    let parts: Vec<String> = file
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let src = parts.iter().rposition(|p| p == "src").unwrap_or(0);
    let krate = parts
        .get(src.wrapping_sub(1))
        .map(|k| k.rsplit_once('-').map_or(k.as_str(), |(name, _)| name))
        .unwrap_or("");
    let mut label = vec![krate.replace(['-', '_'], " ")];
    for part in &parts[src + 1..] {
        let stem = part.trim_end_matches(".rs");
        if stem != "mod" && stem != "lib" {
            label.push(stem.replace('_', " "));
        }
    }
    label.join(" ")
}

/// `…/html/book/ch04-01-what-is-ownership.html` → `book what is ownership`.
fn label_of_page(file: &Path) -> String {
    let book = file
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .skip_while(|c| c != "html")
        .nth(1)
        .unwrap_or_default();
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let words: Vec<&str> = stem
        .split(['-', '_', '.'])
        .filter(|w| !w.is_empty() && w.trim_start_matches("ch").parse::<u32>().is_err())
        .collect();
    format!("{book} {}", words.join(" "))
}
