//! The secret scrubber: the one place that decides what looks like a credential and masks it with
//! [`REDACTED`] before anything is stored (memory facts and procedures, the broker's audit and
//! approval summaries, tool notes) or shown at an operator boundary. Also home of the
//! prompt-injection scanner ([`scan_for_injection`]), the other guard text passes before it
//! reaches a model.
//!
//! One pass runs three rule families, in this order:
//! 1. **blocks**: PEM private keys (`-----BEGIN … PRIVATE KEY-----`, RSA/EC/DSA/OPENSSH/ENCRYPTED),
//!    PGP private key blocks and OpenVPN static keys, opener to closer, as one sentinel; the key
//!    body may be split by real newlines or by written ones (`\n`, `\\n` inside JSON strings);
//! 2. **shapes** ([`rules`]): provider tokens by prefix, length and alphabet, prefix-less shapes
//!    with an inner mark, JOSE tokens whatever their header and other dotted tokens, private JWK
//!    members, base64 of credential-bearing JSON, URL user-info and the DSN forms without a scheme
//!    (Oracle `user/pass@`, Go `user:pass@tcp(…)`), password-carrying CLI flags and SQL
//!    (`IDENTIFIED BY`), `.netrc` / `.pgpass` / `sasl_passwd` lines, crypt and scheme hashes,
//!    base64-wrapped PEM keys, seed phrases;
//! 3. **keyed values** ([`keyed`]): a value after a secret-ish key name in any config syntax and
//!    casing (env, YAML, JSON, TOML, INI, properties, XML, HCL, code, CLI flags, HTTP headers),
//!    and the context rule (a secret-ish name followed, in prose, by a high-entropy word).
//!
//! Guarantees:
//! - every piece of a recognised secret is masked, not just its prefix; the text around it stays;
//! - placeholders (`<YOUR_KEY>`, `${VAR}`, `your-api-key-here`, `sk-...`, `***`, `xxxx`),
//!   references to a variable by name (`env("DJANGO_SECRET_KEY")`, `os.environ["X"]`, `$TOKEN`)
//!   and public identifiers (ARNs, a JWT header alone, git SHAs, UUIDs, digests, pagination
//!   cursors) stay as they are ([`value`] decides what those look like);
//! - idempotent: scrubbing scrubbed text changes nothing (a pass is repeated until it does, at most
//!   four times);
//! - linear time: every rule is a `regex` (no backtracking) or a single left-to-right scan, and an
//!   opener or quote with no partner is searched for once, so no input is quadratic.
//!
//! Decisions beyond the reference (documented, deliberate):
//! - a PEM opener without a closer still masks the opener and the key body that follows it (the
//!   reference leaves a truncated key in clear);
//! - lower- and mixed-case assignments (`password: hunter2`, `"api_key": "…"`, `token=…`) are
//!   masked too, keeping the key name so the text stays readable; an all-caps env name ending in
//!   KEY/TOKEN/SECRET/PASSWORD is masked whole with its value, as in the reference, unless it is
//!   quoted (a JSON key), so a scrubbed document stays well-formed;
//! - the reference's env rule masked any all-caps word ending in KEY (`TURKEY: roast`,
//!   `SORT_KEY=created_at`) and any value (`SECRET_KEY = env("X")`); here the name must end in a
//!   secret *word* and the value must be a literal;
//! - credentials in URLs (`scheme://user:pass@host`) lose their user-info, the host stays.
//!
//! Must never: log, return or keep the text it masked; panic on any input.

mod injection;
mod keyed;
mod rules;
mod value;

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

pub use injection::{InjectionFinding, Severity, scan_for_injection};

/// The sentinel every masked secret becomes.
pub const REDACTED: &str = "[REDACTED]";

/// How many passes at most: one finds nearly everything; the next ones only confirm it.
const MAX_PASSES: usize = 4;

struct Blocks {
    pem_open: Regex,
    pem_close: Regex,
    key_path: Regex,
}

static BLOCKS: LazyLock<Blocks> = LazyLock::new(|| {
    Blocks {
    pem_open: Regex::new(
        r"-----BEGIN(?:[A-Z0-9 ]{0,40}(?:PRIVATE|SECRET) KEY(?: BLOCK)?| OpenVPN Static key V1)-----",
    )
    .expect("compiles"),
    pem_close: Regex::new(
        r"-----END(?:[A-Z0-9 ]{0,40}(?:PRIVATE|SECRET) KEY(?: BLOCK)?| OpenVPN Static key V1)-----",
    )
    .expect("compiles"),
    key_path: Regex::new(
        r"(?i)(token|secret|password|passwd|api[_-]?key|apikey|authorization|auth|bearer|credential|private[_-]?key|access[_-]?key)",
    )
    .expect("compiles"),
}
});

/// Keys that match the secret-key rule by accident (token counters, authors).
const NOT_SECRET_KEYS: &[&str] = &[
    "tokens",
    "inputtokens",
    "outputtokens",
    "cachedinputtokens",
    "totaltokens",
    "prompttokens",
    "completiontokens",
    "tokencount",
    "tokensperminute",
    "author",
    "authors",
];

/// Masks every secret in `text` (see the module docs for the rules and their order).
pub fn scrub_secrets(text: &str) -> String {
    let bytes = rules::ByteSet::of(text);
    let mut current = Cow::Borrowed(text);
    for _ in 0..MAX_PASSES {
        match scrub_pass(&current, &bytes) {
            Some(next) if next != *current => current = Cow::Owned(next),
            _ => break,
        }
    }
    current.into_owned()
}

/// One pass of the three rule families over `text`, whose bytes are in `bytes`; `None` when
/// nothing matched.
fn scrub_pass(text: &str, bytes: &rules::ByteSet) -> Option<String> {
    let blocks = mask_blocks(text);
    let after_blocks = blocks.as_deref().unwrap_or(text);
    let shaped = rules::apply(after_blocks, bytes);
    let after_shapes = shaped.as_deref().unwrap_or(after_blocks);
    let spans = keyed::find(after_shapes);
    if spans.is_empty() {
        return shaped.or(blocks);
    }
    let mut out = String::with_capacity(after_shapes.len());
    let mut at = 0;
    for (start, end) in spans {
        out.push_str(&after_shapes[at..start]);
        out.push_str(REDACTED);
        at = end;
    }
    out.push_str(&after_shapes[at..]);
    Some(out)
}

/// Masks each private-key block (PEM or PGP) as one sentinel: an opener pairs with the next
/// closer; an opener without one masks itself and the key body that follows it. Once no closer is
/// left, none is searched for again, so many openers cost one scan.
fn mask_blocks(text: &str) -> Option<String> {
    if !text.contains("-----BEGIN") {
        return None;
    }
    let blocks = &*BLOCKS;
    let mut out = String::with_capacity(text.len());
    let mut rest_start = 0;
    let mut closers_left = true;
    let mut changed = false;
    while let Some(open) = blocks.pem_open.find_at(text, rest_start) {
        out.push_str(&text[rest_start..open.start()]);
        out.push_str(REDACTED);
        changed = true;
        let close = if closers_left {
            blocks.pem_close.find_at(text, open.end())
        } else {
            None
        };
        rest_start = match close {
            Some(close) => close.end(),
            None => {
                closers_left = false;
                open.end() + key_body_len(&text[open.end()..])
            }
        };
    }
    if !changed {
        return None;
    }
    out.push_str(&text[rest_start..]);
    Some(out)
}

/// The length of the key body (armor headers, base64 lines, blank lines; newlines real or
/// written as `\n`) at the start of `text`.
fn key_body_len(text: &str) -> usize {
    let b = text.as_bytes();
    let mut len = 0;
    while len < b.len() {
        let (end, sep) = line_end(b, len);
        let body = text[len..end].trim();
        let is_body = body.is_empty()
            || (body.contains(": ") && !body.contains(". "))
            || body
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'+' || c == b'/' || c == b'=');
        if !is_body {
            break;
        }
        len = end + sep;
        if sep == 0 {
            break;
        }
    }
    len
}

/// The end of the line that starts at `from`, and the length of the newline that ends it: a real
/// one, or a written one (`\n`, `\r`, or escaped again inside a JSON string, `\\n`); `(len, 0)`
/// at the end of the text.
fn line_end(b: &[u8], from: usize) -> (usize, usize) {
    let mut at = from;
    while let Some(p) = b[at..].iter().position(|&c| c == b'\n' || c == b'\\') {
        at += p;
        if b[at] == b'\n' {
            return (at, 1);
        }
        let slashes = b[at..].iter().take_while(|&&c| c == b'\\').count();
        if matches!(b.get(at + slashes), Some(b'n' | b'r')) {
            return (at, slashes + 1);
        }
        at += slashes;
    }
    (b.len(), 0)
}

/// Whether already-scrubbed text held nothing but secrets: it is not blank, and removing every
/// [`REDACTED`] leaves only whitespace.
pub fn is_entirely_redacted(scrubbed: &str) -> bool {
    !scrubbed.trim().is_empty() && scrubbed.replace(REDACTED, "").trim().is_empty()
}

/// Scrubs a JSON value: the whole value under a secret-looking key (`apiKey`, `authorization`,
/// `password`, `admin_pass`, … but not token counters or `author`) becomes [`REDACTED`]; every string goes
/// through [`scrub_secrets`]; arrays and objects recurse; numbers, booleans and null pass.
pub fn scrub_json(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(scrub_secrets(s)),
        Value::Array(items) => Value::Array(items.iter().map(scrub_json).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let masked = if is_secret_key(k) {
                        Value::String(REDACTED.to_owned())
                    } else {
                        scrub_json(v)
                    };
                    (k.clone(), masked)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Whether an object key names a secret: the reference's key rule, minus its counters and
/// authors, minus names qualified into something public (`nextPageToken`, `key_id`); or a name
/// the keyed rules call a password, a token or a credential (`admin_pass`, `api.key`).
fn is_secret_key(key: &str) -> bool {
    (BLOCKS.key_path.is_match(key)
        && !NOT_SECRET_KEYS.contains(&key.to_ascii_lowercase().as_str())
        && !keyed::names_something_public(key))
        || keyed::names_a_secret(key)
}

#[cfg(test)]
mod properties;
#[cfg(test)]
mod tests;
