//! The secret scrubber: the one place that decides what looks like a credential and masks it with
//! [`REDACTED`] before anything is stored (memory facts and procedures, the broker's audit and
//! approval summaries) or shown at an operator boundary. Also home of the prompt-injection scanner
//! ([`scan_for_injection`]), the other guard text passes before it reaches a model.
//!
//! Guarantees: every pattern of the reference (PEM private-key blocks first, then the value
//! patterns in the reference's order, whole match replaced) plus the credentials a careful user
//! expects in 2026 (AWS, GitHub, GitLab, Slack, Stripe, Google, npm, Hugging Face, SendGrid, Basic
//! auth, URL user-info, any-case `password`/`secret`/`token`/`api_key` assignments); a cheap
//! [`RegexSet`] pre-check, so only the rules that can match run. Ordinary prose and code (UUIDs, git
//! SHAs, hex colours, base64 payloads, `let token = get_token();`, `token: string`, `$TOKEN`)
//! survive: the assignment rules only fire on a value that looks like a literal.
//!
//! Decisions beyond the reference (documented, deliberate):
//! - a PEM opener without a closer still masks the opener and the key body that follows it (the
//!   reference leaves a truncated key in clear);
//! - lower- and mixed-case assignments (`password: hunter2`, `"api_key": "…"`, `token=…`) are
//!   masked too, keeping the key name so the text stays readable;
//! - credentials in URLs (`scheme://user:pass@host`) lose their user-info, the host stays.
//!
//! Must never: log, return or keep the text it masked; panic on any input.

mod injection;

use std::sync::LazyLock;

use regex::{Captures, Regex, RegexSet};
use serde_json::Value;

pub use injection::{InjectionFinding, Severity, scan_for_injection};

/// The sentinel every masked secret becomes.
pub const REDACTED: &str = "[REDACTED]";

/// How a rule's match is rewritten.
#[derive(Clone, Copy)]
enum Mask {
    /// The whole match becomes [`REDACTED`] (the reference's behaviour).
    Whole,
    /// Capture group 1 is kept, the rest of the match becomes [`REDACTED`].
    KeepPrefix,
    /// The reference's upper-case assignment rule, except that a `$VAR` reference (not a secret,
    /// just its name) is left alone.
    EnvAssignment,
    /// The any-case assignment rule: masks the value only when it looks like a literal.
    Assignment,
}

/// The value rules, in the order they run: `(kind, pattern, mask)`. The first ten are the
/// reference's, in its order; the rest extend it. `(?-u:\b)` is an ASCII word boundary, as in the
/// reference.
const VALUE_RULES: &[(&str, &str, Mask)] = &[
    (
        "openai-anthropic-key",
        r"(?-u:\b)sk-[A-Za-z0-9_-]{12,}(?-u:\b)",
        Mask::Whole,
    ),
    (
        "github-classic-token",
        r"(?-u:\b)gh[pousr]_[A-Za-z0-9]{12,}(?-u:\b)",
        Mask::Whole,
    ),
    (
        "github-fine-grained-token",
        r"(?-u:\b)github_pat_[A-Za-z0-9_]{20,}(?-u:\b)",
        Mask::Whole,
    ),
    (
        "gitlab-token",
        r"(?-u:\b)gl(?:pat|dt|rt|ptt|cbt|ft|soat)-[A-Za-z0-9_-]{20,}(?-u:\b)",
        Mask::Whole,
    ),
    (
        "slack-token",
        r"(?-u:\b)(?:xox[abprse]|xapp)-[A-Za-z0-9-]{10,}(?-u:\b)",
        Mask::Whole,
    ),
    (
        "aws-access-key-id",
        r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?-u:\b)",
        Mask::Whole,
    ),
    (
        "google-api-key",
        r"(?-u:\b)AIza[A-Za-z0-9_-]{35}(?-u:\b)",
        Mask::Whole,
    ),
    (
        "bearer-token",
        r"(?i)(?-u:\b)Bearer\s+[A-Za-z0-9._~+/-]{12,}=*",
        Mask::Whole,
    ),
    (
        "jwt",
        r"(?-u:\b)eyJ[A-Za-z0-9._-]{20,}(?-u:\b)",
        Mask::Whole,
    ),
    (
        "env-assignment",
        r#"(?-u:\b)[A-Z][A-Z0-9_]{0,64}(?:KEY|TOKEN|SECRET|PASSWORD)\s*[=:]\s*("[^"]*"|'[^']*'|\S+)"#,
        Mask::EnvAssignment,
    ),
    (
        "slack-webhook",
        r"(?-u:\b)https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{8,}",
        Mask::Whole,
    ),
    (
        "stripe-key",
        r"(?-u:\b)(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}(?-u:\b)",
        Mask::Whole,
    ),
    (
        "stripe-webhook-secret",
        r"(?-u:\b)whsec_[A-Za-z0-9+/=]{24,}",
        Mask::Whole,
    ),
    (
        "google-oauth-secret",
        r"(?-u:\b)GOCSPX-[A-Za-z0-9_-]{20,}",
        Mask::Whole,
    ),
    (
        "google-oauth-token",
        r"(?-u:\b)ya29\.[A-Za-z0-9_-]{20,}",
        Mask::Whole,
    ),
    (
        "npm-token",
        r"(?-u:\b)npm_[A-Za-z0-9]{36}(?-u:\b)",
        Mask::Whole,
    ),
    (
        "huggingface-token",
        r"(?-u:\b)hf_[A-Za-z0-9]{30,}(?-u:\b)",
        Mask::Whole,
    ),
    (
        "sendgrid-key",
        r"(?-u:\b)SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}",
        Mask::Whole,
    ),
    (
        "basic-auth",
        r"(?i)(?-u:\b)Basic\s+[A-Za-z0-9+/]{16,}={0,2}",
        Mask::Whole,
    ),
    (
        "url-credentials",
        r"(?-u:\b)([A-Za-z][A-Za-z0-9+.-]{1,20}://)[^\s:/@'\x22]+:[^\s@/'\x22]+@",
        Mask::KeepPrefix,
    ),
    (
        "secret-assignment",
        r#"(?i)((?:^|[^A-Za-z0-9_])[A-Za-z0-9_.-]{0,48}(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret)["']?([ \t]*)([=:])([ \t]*))("[^"\n]*"|'[^'\n]*'|[^\s"'`,;(){}\[\]]+)(\()?"#,
        Mask::Assignment,
    ),
];

/// Words that, as the value of a `token:`-style assignment, are types or placeholders, not
/// secrets.
const NOT_A_SECRET: &[&str] = &[
    "string",
    "str",
    "&str",
    "number",
    "boolean",
    "bool",
    "any",
    "unknown",
    "null",
    "none",
    "nil",
    "undefined",
    "true",
    "false",
    "required",
    "optional",
    "object",
    "int",
    "integer",
    "i32",
    "i64",
    "u32",
    "u64",
    "usize",
    "text",
    "varchar",
    "redacted",
    "[redacted]",
    "yes",
    "no",
    "n/a",
];

struct Rules {
    set: RegexSet,
    rules: Vec<(Regex, Mask)>,
    pem_open: Regex,
    pem_close: Regex,
    key_path: Regex,
}

static RULES: LazyLock<Rules> = LazyLock::new(|| {
    let patterns: Vec<&str> = VALUE_RULES.iter().map(|(_, p, _)| *p).collect();
    Rules {
        set: RegexSet::new(&patterns).expect("the scrub patterns compile"),
        rules: VALUE_RULES
            .iter()
            .map(|(_, p, mask)| (Regex::new(p).expect("a scrub pattern compiles"), *mask))
            .collect(),
        pem_open: Regex::new(r"-----BEGIN[A-Z ]{0,32}PRIVATE KEY-----").expect("compiles"),
        pem_close: Regex::new(r"-----END[A-Z ]{0,32}PRIVATE KEY-----").expect("compiles"),
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

/// Masks every secret in `text`: PEM private-key blocks first, then the value rules in order.
pub fn scrub_secrets(text: &str) -> String {
    let rules = &*RULES;
    let mut out = mask_pem_blocks(text, rules);
    let hits = rules.set.matches(&out);
    if !hits.matched_any() {
        return out;
    }
    for index in hits.iter() {
        let (regex, mask) = &rules.rules[index];
        let replaced = match mask {
            Mask::Whole => regex.replace_all(&out, REDACTED),
            Mask::KeepPrefix => {
                regex.replace_all(&out, |c: &Captures| format!("{}{REDACTED}@", &c[1]))
            }
            Mask::EnvAssignment => regex.replace_all(&out, |c: &Captures| {
                if c[1].starts_with('$') {
                    c[0].to_owned()
                } else {
                    REDACTED.to_owned()
                }
            }),
            Mask::Assignment => regex.replace_all(&out, mask_assignment),
        };
        if let std::borrow::Cow::Owned(s) = replaced {
            out = s;
        }
    }
    out
}

/// The any-case assignment rule: keeps the key and separator, masks a value that looks like a
/// literal, and leaves code (`token = get_token()`, `token: string`, `$TOKEN`) alone.
fn mask_assignment(c: &Captures) -> String {
    let key_and_separator = &c[1];
    let value = &c[5];
    let called = c.get(6).is_some();
    let spaced_equals = &c[3] == "=" && !(c[2].is_empty() && c[4].is_empty());
    let quoted = value.len() >= 2 && (value.starts_with('"') || value.starts_with('\''));
    let keep = if quoted {
        let inner = &value[1..value.len() - 1];
        inner.is_empty() || inner == REDACTED
    } else {
        called
            || value.len() < 4
            || value.starts_with(['&', '<', '$'])
            || NOT_A_SECRET.contains(&value.to_ascii_lowercase().as_str())
            || (spaced_equals && !looks_like_literal_secret(value))
    };
    if keep {
        return c[0].to_owned();
    }
    let masked = if quoted {
        let quote = &value[..1];
        format!("{quote}{REDACTED}{quote}")
    } else {
        REDACTED.to_owned()
    };
    format!(
        "{key_and_separator}{masked}{}",
        if called { "(" } else { "" }
    )
}

/// After a spaced `=` (code style), only a long value with a digit counts as a literal secret;
/// `token = self.token` stays.
fn looks_like_literal_secret(value: &str) -> bool {
    value.len() >= 12 && value.bytes().any(|b| b.is_ascii_digit())
}

/// Masks each `-----BEGIN … PRIVATE KEY-----` … `-----END … PRIVATE KEY-----` block as one
/// sentinel. An opener without a closer masks itself and the key body lines that follow it.
fn mask_pem_blocks(text: &str, rules: &Rules) -> String {
    if !text.contains("-----BEGIN") {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest_start = 0;
    while let Some(open) = rules.pem_open.find_at(text, rest_start) {
        out.push_str(&text[rest_start..open.start()]);
        out.push_str(REDACTED);
        rest_start = match rules.pem_close.find_at(text, open.end()) {
            Some(close) => close.end(),
            None => open.end() + key_body_len(&text[open.end()..]),
        };
    }
    out.push_str(&text[rest_start..]);
    out
}

/// The length of the PEM body (headers, base64 lines, blank lines) at the start of `text`.
fn key_body_len(text: &str) -> usize {
    let mut len = 0;
    for line in text.split_inclusive('\n') {
        let body = line.trim();
        let is_body = body.is_empty()
            || body.contains(": ")
            || body
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'=');
        if !is_body {
            break;
        }
        len += line.len();
    }
    len
}

/// Whether already-scrubbed text held nothing but secrets: it is not blank, and removing every
/// [`REDACTED`] leaves only whitespace.
pub fn is_entirely_redacted(scrubbed: &str) -> bool {
    !scrubbed.trim().is_empty() && scrubbed.replace(REDACTED, "").trim().is_empty()
}

/// Scrubs a JSON value: the whole value under a secret-looking key (`apiKey`, `authorization`,
/// `password`, … but not token counters or `author`) becomes [`REDACTED`]; every string goes
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

/// Whether an object key names a secret.
fn is_secret_key(key: &str) -> bool {
    RULES.key_path.is_match(key) && !NOT_SECRET_KEYS.contains(&key.to_ascii_lowercase().as_str())
}

#[cfg(test)]
mod tests;
