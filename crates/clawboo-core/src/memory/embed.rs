//! Embedding providers for vector and hybrid search: Ollama, then OpenAI, else none.
//!
//! Owns: choosing the provider (once per process, on a background thread so start-up never waits
//! for a probe), the two providers' HTTP request and answer formats, and how a vector is stored
//! (little-endian `f32`, no header, as the reference stores it) and compared (cosine).
//!
//! Guarantees: a provider that is down or answers nonsense is an [`EmbedError`], never a panic;
//! a fact whose embedding failed is still saved (without a vector). Must never: log or return an
//! API key.

use std::sync::{Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

use crate::binding::env_value;
use crate::http::{self, HttpError};

/// How long the start-up probe of Ollama may take (the reference's figure).
const OLLAMA_PROBE_TIMEOUT: Duration = Duration::from_millis(1500);
/// How long one embedding request may take.
const EMBED_TIMEOUT: Duration = Duration::from_secs(30);

const DEFAULT_OLLAMA_BASE: &str = "http://127.0.0.1:11434";
const DEFAULT_OLLAMA_MODEL: &str = "nomic-embed-text";
const DEFAULT_OPENAI_BASE: &str = "https://api.openai.com/v1";
const DEFAULT_OPENAI_MODEL: &str = "text-embedding-3-small";

/// A failed embedding.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The request failed or the provider answered with an error status.
    #[error("{provider} embed failed: {source}")]
    Http {
        /// The provider id.
        provider: String,
        /// Why.
        source: HttpError,
    },
    /// The answer did not hold one vector per input text.
    #[error("{provider} embed: no embeddings in the response")]
    NoVectors {
        /// The provider id.
        provider: String,
    },
}

/// An embedding service. Its `Debug` output never shows the API key.
#[derive(Clone, PartialEq, Eq)]
pub enum Provider {
    /// An Ollama server (`POST {base}/api/embed`).
    Ollama {
        /// Base URL, e.g. `http://127.0.0.1:11434`.
        base: String,
        /// Model name.
        model: String,
    },
    /// OpenAI's API or a compatible one (`POST {base}/embeddings`).
    OpenAi {
        /// Base URL, e.g. `https://api.openai.com/v1`.
        base: String,
        /// Model name.
        model: String,
        /// The API key (sent as a bearer token, never shown).
        key: String,
    },
}

/// What `Debug` shows in place of a key that is set.
const KEY_SET: &str = "<set, not shown>";

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Provider::Ollama { base, model } => f
                .debug_struct("Ollama")
                .field("base", base)
                .field("model", model)
                .finish(),
            Provider::OpenAi { base, model, .. } => f
                .debug_struct("OpenAi")
                .field("base", base)
                .field("model", model)
                .field("key", &KEY_SET)
                .finish(),
        }
    }
}

impl std::fmt::Debug for EmbedConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbedConfig")
            .field("disabled", &self.disabled)
            .field("ollama_base", &self.ollama_base)
            .field("openai_key", &self.openai_key.as_ref().map(|_| KEY_SET))
            .field("openai_base", &self.openai_base)
            .field("model", &self.model)
            .finish()
    }
}

impl Provider {
    /// The id stored beside every vector (`ollama:<model>`, `openai:<model>`); vectors of another
    /// id are never compared with this provider's.
    pub fn id(&self) -> String {
        match self {
            Provider::Ollama { model, .. } => format!("ollama:{model}"),
            Provider::OpenAi { model, .. } => format!("openai:{model}"),
        }
    }

    /// One vector per text, in order.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let provider = self.id();
        let http_err = |source| EmbedError::Http {
            provider: provider.clone(),
            source,
        };
        let (answer, list_key, item_key) = match self {
            Provider::Ollama { base, model } => {
                let body = json!({ "model": model, "input": texts });
                let answer =
                    http::post_json(&format!("{base}/api/embed"), &[], &body, EMBED_TIMEOUT)
                        .map_err(http_err)?;
                (answer, "embeddings", None)
            }
            Provider::OpenAi { base, model, key } => {
                let body = json!({ "model": model, "input": texts });
                let bearer = format!("Bearer {key}");
                let answer = http::post_json(
                    &format!("{base}/embeddings"),
                    &[("authorization", bearer.as_str())],
                    &body,
                    EMBED_TIMEOUT,
                )
                .map_err(http_err)?;
                (answer, "data", Some("embedding"))
            }
        };
        let vectors: Option<Vec<Vec<f32>>> = answer
            .get(list_key)
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .map(|item| item_key.map_or(Some(item), |k| item.get(k)))
                    .map(|v| v.and_then(as_vector))
                    .collect::<Option<Vec<_>>>()
            })
            .unwrap_or(None);
        match vectors {
            Some(v) if v.len() == texts.len() && v.iter().all(|x| !x.is_empty()) => Ok(v),
            _ => Err(EmbedError::NoVectors { provider }),
        }
    }
}

fn as_vector(value: &Value) -> Option<Vec<f32>> {
    value
        .as_array()?
        .iter()
        .map(|x| x.as_f64().map(|f| f as f32))
        .collect()
}

/// Where providers are looked for, read from the environment by [`EmbedConfig::from_env`]. Its
/// `Debug` output never shows the API key.
#[derive(Clone, PartialEq, Eq)]
pub struct EmbedConfig {
    /// `CLAWBOO_EMBEDDINGS=off` turns vectors off whatever else is set.
    pub disabled: bool,
    /// The Ollama base URL (`OLLAMA_HOST`, with `http://` added when it has no scheme).
    pub ollama_base: String,
    /// `OPENAI_API_KEY`.
    pub openai_key: Option<String>,
    /// `OPENAI_BASE_URL`, default OpenAI's.
    pub openai_base: String,
    /// `CLAWBOO_EMBED_MODEL`: the model for whichever provider is chosen.
    pub model: Option<String>,
}

impl EmbedConfig {
    /// The configuration this process's environment gives.
    pub fn from_env() -> Self {
        Self {
            disabled: env_value("CLAWBOO_EMBEDDINGS")
                .is_some_and(|v| v.eq_ignore_ascii_case("off")),
            ollama_base: env_value("OLLAMA_HOST")
                .map(|h| with_scheme(&h))
                .unwrap_or_else(|| DEFAULT_OLLAMA_BASE.to_owned()),
            openai_key: env_value("OPENAI_API_KEY"),
            openai_base: env_value("OPENAI_BASE_URL")
                .map(|b| b.trim_end_matches('/').to_owned())
                .unwrap_or_else(|| DEFAULT_OPENAI_BASE.to_owned()),
            model: env_value("CLAWBOO_EMBED_MODEL"),
        }
    }

    /// The provider to use: Ollama when `GET /api/tags` answers within the probe timeout and lists
    /// the model, else OpenAI when a key is set, else none. (The reference takes any answering
    /// Ollama, and then every embedding fails when the model was never pulled.)
    pub fn resolve(&self) -> Option<Provider> {
        if self.disabled {
            return None;
        }
        let tags = format!("{}/api/tags", self.ollama_base);
        if let Ok(answer) = http::get_json(&tags, OLLAMA_PROBE_TIMEOUT) {
            let model = self.model_or(DEFAULT_OLLAMA_MODEL);
            if ollama_has_model(&answer, &model) {
                return Some(Provider::Ollama {
                    base: self.ollama_base.clone(),
                    model,
                });
            }
            crate::log::warn(&format!(
                "Ollama at {} has no model {model:?} (run `ollama pull {model}`); not using it for embeddings",
                self.ollama_base
            ));
        }
        self.openai_key.as_ref().map(|key| Provider::OpenAi {
            base: self.openai_base.clone(),
            model: self.model_or(DEFAULT_OPENAI_MODEL),
            key: key.clone(),
        })
    }

    fn model_or(&self, default: &str) -> String {
        self.model.clone().unwrap_or_else(|| default.to_owned())
    }
}

/// Whether Ollama's `/api/tags` answer lists `model` (as `model` or `model:<tag>`).
fn ollama_has_model(tags: &Value, model: &str) -> bool {
    tags.get("models")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("name").and_then(Value::as_str))
        .any(|name| {
            name == model
                || name
                    .strip_prefix(model)
                    .is_some_and(|tag| tag.starts_with(':'))
        })
}

/// `OLLAMA_HOST` may be given as `host:port`, as Ollama itself accepts.
fn with_scheme(host: &str) -> String {
    let host = host.trim_end_matches('/');
    if host.contains("://") {
        host.to_owned()
    } else {
        format!("http://{host}")
    }
}

/// The process's provider, resolved once. Resolution runs on a background thread started by
/// [`Embedder::resolve_in_background`]; the first caller that needs the answer waits for it (at
/// most the Ollama probe timeout), so serving starts at once.
#[derive(Debug)]
pub struct Embedder {
    resolved: OnceLock<Option<Provider>>,
    pending: Mutex<Option<JoinHandle<Option<Provider>>>>,
}

impl Embedder {
    /// No provider: every search is full-text.
    pub fn none() -> Self {
        Self::with(None)
    }

    /// A known provider (or none), without probing.
    pub fn with(provider: Option<Provider>) -> Self {
        Self {
            resolved: OnceLock::from(provider),
            pending: Mutex::new(None),
        }
    }

    /// Starts resolving `config` on a background thread, which logs the outcome.
    pub fn resolve_in_background(config: EmbedConfig) -> Self {
        let resolve = move || {
            let provider = config.resolve();
            match &provider {
                Some(p) => crate::log::info(&format!("embeddings: {}", p.id())),
                None => crate::log::info("embeddings: none (full-text search only)"),
            }
            provider
        };
        Self {
            resolved: OnceLock::new(),
            pending: Mutex::new(Some(std::thread::spawn(resolve))),
        }
    }

    /// Whether there is surely no provider, known without waiting: the resolution has finished
    /// and found none. `false` while it runs.
    pub fn surely_none(&self) -> bool {
        if let Some(resolved) = self.resolved.get() {
            return resolved.is_none();
        }
        let finished = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(JoinHandle::is_finished);
        // Finished: taking its answer waits for nothing. (No handle and no answer yet: another
        // caller is taking it, maybe still waiting for it.)
        finished && self.provider().is_none()
    }

    /// The provider, waiting for the background resolution if it is still running.
    pub fn provider(&self) -> Option<&Provider> {
        self.resolved
            .get_or_init(|| {
                let handle = self
                    .pending
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .take();
                handle.and_then(|h| h.join().ok()).flatten()
            })
            .as_ref()
    }
}

/// A vector as stored in `memory_facts.embedding`: little-endian `f32`s.
pub fn to_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A stored vector; `None` when the blob is empty or not a whole number of `f32`s.
pub fn from_blob(blob: &[u8]) -> Option<Vec<f32>> {
    if blob.is_empty() || !blob.len().is_multiple_of(4) {
        return None;
    }
    Some(
        blob.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

/// Cosine similarity in `[-1, 1]`; 0 for vectors of different lengths or zero norm.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    dot / (na.sqrt() * nb.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clawboo_tests::loopback::{self, closed_port};

    #[test]
    fn surely_none_is_known_without_waiting_and_only_when_no_provider_was_found() {
        assert!(Embedder::none().surely_none());
        let provider = Provider::Ollama {
            base: "http://127.0.0.1:9".into(),
            model: "nomic-embed-text".into(),
        };
        assert!(!Embedder::with(Some(provider)).surely_none());
        // While an Ollama probe waits for its answer (1.2 s): not sure, and told without waiting
        // for it.
        let slow = loopback::serve(|_| {
            std::thread::sleep(std::time::Duration::from_millis(1_200));
            (500, String::new())
        });
        let resolving = Embedder::resolve_in_background(config(&slow.base, &closed_port(), None));
        let asked = std::time::Instant::now();
        assert!(!resolving.surely_none());
        assert!(asked.elapsed() < std::time::Duration::from_millis(1_000));
        // Once it has found nothing: sure.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !resolving.surely_none() {
            assert!(std::time::Instant::now() < deadline, "never sure");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(resolving.provider().is_none());
    }

    #[test]
    fn debug_output_never_shows_the_api_key() {
        let key = format!("sk-proj-{}", "Zq7".repeat(16));
        let provider = Provider::OpenAi {
            base: "https://api.example.test/v1".into(),
            model: "text-embedding-3-small".into(),
            key: key.clone(),
        };
        let shown = format!(
            "{provider:?} {:?}",
            config("http://o", "http://a", Some(&key))
        );
        assert!(
            !shown.contains(&key) && !shown.contains("Zq7Zq7"),
            "{shown}"
        );
        assert!(
            shown.contains("text-embedding-3-small") && shown.contains(KEY_SET),
            "{shown}"
        );
        assert!(format!("{:?}", config("http://o", "http://a", None)).contains("openai_key: None"));
    }

    fn config(ollama_base: &str, openai_base: &str, key: Option<&str>) -> EmbedConfig {
        EmbedConfig {
            disabled: false,
            ollama_base: ollama_base.to_owned(),
            openai_key: key.map(str::to_owned),
            openai_base: openai_base.to_owned(),
            model: None,
        }
    }

    #[test]
    fn ollama_is_chosen_when_its_tags_answer_and_speaks_the_embed_api() {
        let server = loopback::serve(|seen| match seen.line.as_str() {
            "GET /api/tags" => (
                200,
                r#"{"models":[{"name":"nomic-embed-text:latest"}]}"#.into(),
            ),
            "POST /api/embed" => (
                200,
                r#"{"model":"nomic-embed-text","embeddings":[[0.5,-1.0],[0.0,2.0]]}"#.into(),
            ),
            _ => (404, "{}".into()),
        });
        let provider = config(
            &server.base,
            &closed_port(),
            Some("sk-fake-key-for-tests-only"),
        )
        .resolve()
        .unwrap();
        assert_eq!(provider.id(), "ollama:nomic-embed-text");
        let vectors = provider.embed(&["first", "second"]).unwrap();
        assert_eq!(vectors, vec![vec![0.5, -1.0], vec![0.0, 2.0]]);
        let request = server.requests()[1].clone();
        let body: Value = serde_json::from_str(&request.body).unwrap();
        assert_eq!(
            body,
            json!({"model": "nomic-embed-text", "input": ["first", "second"]})
        );
    }

    #[test]
    fn openai_is_chosen_when_ollama_is_down_and_a_key_is_set() {
        let server = loopback::serve(|_| {
            (200, r#"{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.25,0.75]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":2,"total_tokens":2}}"#.into())
        });
        let provider = config(
            &closed_port(),
            &server.base,
            Some("sk-fake-key-for-tests-only"),
        )
        .resolve()
        .unwrap();
        assert_eq!(provider.id(), "openai:text-embedding-3-small");
        assert_eq!(provider.embed(&["hello"]).unwrap(), vec![vec![0.25, 0.75]]);
        let request = server.requests()[0].clone();
        assert_eq!(request.line, "POST /embeddings");
        assert!(
            request
                .headers
                .contains("authorization: bearer sk-fake-key-for-tests-only")
        );
        let body: Value = serde_json::from_str(&request.body).unwrap();
        assert_eq!(
            body,
            json!({"model": "text-embedding-3-small", "input": ["hello"]})
        );
    }

    #[test]
    fn an_ollama_without_the_model_is_passed_over() {
        let server = loopback::serve(|_| {
            (
                200,
                r#"{"models":[{"name":"llama3:8b"},{"name":"nomic-embed-text-v2:latest"}]}"#.into(),
            )
        });
        assert_eq!(config(&server.base, &closed_port(), None).resolve(), None);
        let openai = loopback::serve(|_| (200, "{}".into()));
        let fallback = config(
            &server.base,
            &openai.base,
            Some("sk-fake-key-for-tests-only"),
        )
        .resolve();
        assert!(
            matches!(fallback, Some(Provider::OpenAi { .. })),
            "{fallback:?}"
        );
        let tags = json!({"models": [{"name": "nomic-embed-text"}, {"name": "x:1"}]});
        assert!(ollama_has_model(&tags, "nomic-embed-text"));
        assert!(ollama_has_model(&tags, "x"));
        assert!(!ollama_has_model(&tags, "nomic"));
        assert!(!ollama_has_model(&json!({}), "nomic-embed-text"));
    }

    #[test]
    fn nothing_reachable_and_no_key_means_no_provider() {
        assert_eq!(config(&closed_port(), &closed_port(), None).resolve(), None);
        let mut off = config(
            &closed_port(),
            &closed_port(),
            Some("sk-fake-key-for-tests-only"),
        );
        off.disabled = true;
        assert_eq!(off.resolve(), None);
    }

    #[test]
    fn a_provider_error_or_a_short_answer_is_an_error_not_a_panic() {
        let server = loopback::serve(|seen| match seen.line.as_str() {
            "POST /api/embed" => (200, r#"{"embeddings":[]}"#.into()),
            _ => (500, r#"{"error":"model not pulled"}"#.into()),
        });
        let ollama = Provider::Ollama {
            base: server.base.clone(),
            model: "m".into(),
        };
        assert!(matches!(
            ollama.embed(&["x"]),
            Err(EmbedError::NoVectors { .. })
        ));
        let openai = Provider::OpenAi {
            base: server.base.clone(),
            model: "m".into(),
            key: "k".into(),
        };
        let err = openai.embed(&["x"]).unwrap_err();
        assert!(matches!(err, EmbedError::Http { .. }), "{err}");
        assert!(!err.to_string().contains("Bearer"), "{err}");
    }

    #[test]
    fn ollama_host_without_a_scheme_gets_http() {
        assert_eq!(with_scheme("127.0.0.1:11434"), "http://127.0.0.1:11434");
        assert_eq!(
            with_scheme("https://gpu.example:443/"),
            "https://gpu.example:443"
        );
    }

    #[test]
    fn blobs_round_trip_and_reject_torn_lengths() {
        let v = vec![1.0f32, -0.5, 3.25];
        assert_eq!(from_blob(&to_blob(&v)), Some(v));
        assert_eq!(from_blob(&[1, 2, 3]), None);
        assert_eq!(from_blob(&[]), None);
    }

    #[test]
    fn cosine_is_zero_for_mismatched_or_zero_vectors() {
        assert!((cosine(&[1.0, 0.0], &[1.0, 0.0]) - 1.0).abs() < 1e-9);
        assert!((cosine(&[1.0, 0.0], &[-1.0, 0.0]) + 1.0).abs() < 1e-9);
        assert_eq!(cosine(&[1.0, 0.0], &[1.0, 0.0, 0.0]), 0.0);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
    }
}
