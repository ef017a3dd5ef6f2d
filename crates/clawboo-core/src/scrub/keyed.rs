//! The keyed rules: a value is a secret because of the name in front of it. One left-to-right scan
//! finds every secret-ish key name (`password`, `client_secret`, `apiKey`, `X-API-Key`,
//! `--token`, `<password>`, `AccountKey`, `Authorization`, `Cookie`, …) in any casing and any config
//! syntax (`.env`, YAML, JSON and escaped JSON, TOML, INI, shell, XML, `name: X / value: Y` pairs,
//! CLI flags, HTTP headers), reads the value after its separator, and masks it when it is a
//! literal. With no separator (prose: "the private key is 0x…"), the context rule masks the first
//! high-entropy word that follows within a few words.
//!
//! Guarantees:
//! - the value is masked, the key and quotes stay (`password: [REDACTED]`); an all-caps env name
//!   ending in KEY/TOKEN/SECRET/PASSWORD is masked whole with its value, as the reference does
//!   (`DB_PASSWORD: x` ⇒ `[REDACTED]`);
//! - left alone: placeholders (`<YOUR_KEY>`, `${VAR}`, `your-api-key-here`, `***`), references to
//!   another name (`env("DJANGO_SECRET_KEY")`, `os.environ["X"]`, `self.token`, `$TOKEN`), types
//!   (`token: string`, `password: &str`), names qualified into something public (`key_id`,
//!   `page_token`, `max_tokens`, `public_key`, `secret_name`), and keys inside URLs, paths and ARNs
//!   (`arn:…:secret:prod/db`);
//! - linear: each key name is read once; the scan resumes after a masked value or a long one
//!   (and inside a short unmasked one, which may hold the next key); a secret word is looked for
//!   at most 40 letters around a hit; a quote with no partner on its line is remembered, so it is
//!   never searched for twice.
//!
//! Must never: mask a key name of lowercase or mixed case (readers need to see which setting
//! was masked); look further than the current line for a prose value.

use std::sync::LazyLock;

use regex::Regex;

use super::value::{
    entropy, floor_boundary, is_code_reference, is_path, is_placeholder, is_uuid, is_word_chain,
    looks_random,
};

/// A value longer than this is never read twice: the scan resumes after it even when it was not
/// masked (shorter ones are scanned inside, for the keys they may hold).
const LONG_VALUE: usize = 256;

/// Where a key name's value needs to be masked: byte ranges of the text.
pub(crate) type Spans = Vec<(usize, usize)>;

static KEYWORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)pass|pwd|secret|token|key|auth|cred|sig|cookie|dsn|salt|pat")
        .expect("the keyword pattern compiles")
});

/// How strongly a key name says "secret", which decides what value it takes to mask.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Strength {
    /// password, secret, credentials: any literal of 4+ characters.
    Password,
    /// token, api key, private key: any literal of 8+ characters.
    Token,
    /// key, auth, sig, salt, dsn: only a value that looks random.
    Weak,
    /// Authorization / Proxy-Authorization: the scheme and the credential.
    Header,
    /// Cookie / Set-Cookie: session-like cookie values.
    Cookie,
}

/// Words that end a key name's secrecy when they follow the secret word (`key_id`, `token_type`,
/// `password_policy`) or stand between the name and a prose value ("token budget").
#[rustfmt::skip]
const QUALIFIERS: &[&str] = &[
    "id", "ids", "name", "names", "path", "paths", "file", "files", "filename", "dir", "directory",
    "url", "uri", "endpoint", "host", "type", "types", "kind", "count", "counts", "length", "len",
    "size", "limit", "limits", "max", "min", "expiry", "expires", "expiration", "exp", "expired",
    "ttl", "timeout", "lifetime", "age", "policy", "policies", "ref", "refs", "arn", "version",
    "header", "env", "var", "variable", "field", "label", "prefix", "suffix", "hint", "format",
    "method", "location", "hash", "hashed", "algorithm", "alg", "rotation", "rotate", "reset",
    "cursor", "usage", "budget", "provider", "source", "store", "manager", "mode", "enabled",
    "enable", "required", "pattern", "regex", "strength", "fingerprint", "encoding", "param",
    "parameter", "placeholder", "description", "desc", "prompt", "message", "msg", "error",
    "schema", "index", "column", "table", "template", "page", "input", "box", "button", "validator",
    "validation", "rule", "rules", "check", "visible", "changed", "created", "updated", "date",
    "time", "timestamp", "remaining", "used", "bytes", "bits", "handler", "generator", "factory",
    "builder", "helper", "util", "utils", "service", "class", "module", "struct", "interface",
    "list", "map", "cache", "counter", "stats", "metrics", "log", "logger", "stdin", "file",
    "vault", "ring", "chain", "storage", "backend", "config", "settings", "option", "options",
    "flag", "flags", "mask", "masked", "redacted", "set", "get", "sha", "commit", "digest",
    "checksum", "uuid", "request", "trace", "span", "build", "release", "tag", "window", "per",
    "rate", "price", "cost", "estimate", "estimator", "tokenizer", "parser", "lexer", "type",
    "entropy", "length", "strength", "issuer", "audience", "scope", "scopes", "fields",
    "description", "docs", "doc", "link", "links", "page", "pages", "form", "dialog", "modal",
    "screen", "view", "component",
];

/// Words that, before the secret word, make the name public or about something else
/// (`public_key`, `primary_key`, `page_token`, `max_tokens`).
#[rustfmt::skip]
const PUBLIC_BEFORE: &[&str] = &[
    "public", "pub", "primary", "foreign", "sort", "partition", "cache", "page", "next", "prev",
    "previous", "continuation", "sync", "pagination", "max", "total", "num", "input", "output",
    "prompt", "completion", "csrf", "xsrf", "idempotency", "lookup", "routing", "shard", "hot",
    "dedup", "dedupe", "unique", "composite", "natural", "surrogate", "cancellation", "lexer",
    "row", "group", "dict", "hash", "map", "sorting", "object", "s3", "gcs", "blob", "i18n",
    "translation", "message", "label", "event", "tracking", "analytics", "music", "publishable",
    "get",
];

/// Words before `key` that make it a credential (`api key`, `private_key`, `AccountKey`).
#[rustfmt::skip]
const STRONG_KEY_BEFORE: &[&str] = &[
    "api", "access", "secret", "private", "priv", "account", "master", "signing", "sign",
    "encryption", "enc", "client", "app", "application", "license", "subscription", "service",
    "shared", "sharedaccess", "auth", "admin", "write", "read", "deploy", "storage", "consumer",
    "webhook", "hmac", "jwt", "session", "crypto", "wallet", "root", "cloud", "ingest",
    "management", "mgmt", "personal", "project", "org", "server", "secure", "decryption", "aes",
    "gpg", "pgp", "ssh", "deployer", "mnemonic", "seed", "bot", "integration",
];

/// Values of a `key: value` that are types or keywords, not secrets.
#[rustfmt::skip]
const TYPE_WORDS: &[&str] = &[
    "string", "str", "&str", "number", "boolean", "bool", "any", "unknown", "null", "none", "nil",
    "undefined", "true", "false", "required", "optional", "object", "int", "integer", "i32", "i64",
    "u8", "u32", "u64", "usize", "text", "varchar", "char", "bytes", "yes", "no", "on", "off",
    "n/a", "impl", "dyn", "mut", "const", "static", "pub", "secretstr", "secretstring", "string?",
    "str?", "void", "self", "this", "void", "function", "fn", "func", "lambda", "data", "value",
    "env", "environment", "file", "vault", "keyring", "keychain", "prompt", "stdin", "auto",
    "inherit", "none", "disabled", "enabled", "hidden",
];

/// Cookie names whose value is a session credential even when short.
#[rustfmt::skip]
const SESSION_COOKIES: &[&str] = &[
    "session", "sessionid", "session_id", "sid", "connect.sid", "jsessionid", "phpsessid",
    "_session", "auth", "token", "jwt", "remember_token", "access_token", "refresh_token",
    "laravel_session", "_gh_sess", "user_session", "asp.net_sessionid",
];

/// Splits a key name into lowercase words: on `_ - . $ :` and at camelCase humps
/// (`apiKey` → api, key; `APIKey` → api, key; `AWS_SECRET_ACCESS_KEY` → aws, secret, access, key).
fn words(key: &str) -> Vec<String> {
    let chars: Vec<char> = key.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if !cur.is_empty() && c.is_ascii_uppercase() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(char::is_ascii_lowercase);
            if prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || prev.is_ascii_uppercase() && next_lower
            {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// How secret a key name is, from its words and the prose word before it (`API key`).
fn classify(key: &str, word_before: &str, flag: bool) -> Option<Strength> {
    let words = words(key);
    let mut found: Option<(usize, Strength)> = None;
    for (i, w) in words.iter().enumerate() {
        let w = w.trim_end_matches(|c: char| c.is_ascii_digit());
        if let Some(s) = word_strength(w, flag) {
            found = Some((i, s));
        }
    }
    let (at, mut strength) = found?;
    let after = &words[at + 1..];
    if after.iter().any(|w| QUALIFIERS.contains(&w.as_str())) {
        return None;
    }
    let before: Vec<&str> = words[..at].iter().map(String::as_str).collect();
    if before.iter().any(|w| PUBLIC_BEFORE.contains(w)) {
        return None;
    }
    if strength == Strength::Weak && words[at] == "key" {
        let prev = before
            .last()
            .copied()
            .or_else(|| (words.len() == 1).then_some(word_before));
        if prev.is_some_and(|p| STRONG_KEY_BEFORE.contains(&p)) {
            strength = Strength::Token;
        } else if words.len() == 1 && PUBLIC_BEFORE.contains(&word_before) {
            return None;
        }
    }
    Some(strength)
}

/// The strength of one word of a key name, if it names a secret.
fn word_strength(w: &str, flag: bool) -> Option<Strength> {
    const PASSWORD_ENDINGS: &[&str] = &["password", "passwd", "passphrase", "secret"];
    const TOKEN_ENDINGS: &[&str] = &[
        "token",
        "apikey",
        "privatekey",
        "secretkey",
        "accesskey",
        "masterkey",
        "signingkey",
        "encryptionkey",
        "accountkey",
        "sharedaccesskey",
        "subscriptionkey",
        "licensekey",
        "privkey",
        "seckey",
        "authkey",
        "appkey",
    ];
    match w {
        "pwd" | "pass" | "credential" | "credentials" | "creds" | "pw" => {
            return Some(Strength::Password);
        }
        "key" | "auth" | "sig" | "signature" | "dsn" | "salt" => return Some(Strength::Weak),
        "pat" => return Some(Strength::Token),
        "authorization" => return Some(Strength::Header),
        "cookie" => return Some(Strength::Cookie),
        _ => {}
    }
    if PASSWORD_ENDINGS.iter().any(|e| w.ends_with(e)) || flag && w.ends_with("pass") {
        return Some(Strength::Password);
    }
    if TOKEN_ENDINGS.iter().any(|e| w.ends_with(e)) {
        return Some(Strength::Token);
    }
    None
}

/// Whether the word of `ident` around the keyword hit `[start, end)` names a secret, and the
/// word's length: the word runs to the nearest separator or camelCase hump, as in [`words`].
fn secret_word_at(ident: &[u8], start: usize, end: usize, flag: bool) -> (bool, usize) {
    let boundary = |i: usize| -> bool {
        // Whether a word boundary lies between `ident[i - 1]` and `ident[i]`.
        let (p, c) = (ident[i - 1], ident[i]);
        !p.is_ascii_alphanumeric()
            || !c.is_ascii_alphanumeric()
            || (p.is_ascii_lowercase() || p.is_ascii_digit()) && c.is_ascii_uppercase()
            || p.is_ascii_uppercase()
                && c.is_ascii_uppercase()
                && ident.get(i + 1).is_some_and(u8::is_ascii_lowercase)
    };
    // No secret word is longer than 40 letters, so neither side looks further: each call is
    // bounded, whatever the length of the name.
    let mut s = start;
    while s > 0 && start - s <= 40 && !boundary(s) {
        s -= 1;
    }
    let mut e = end;
    while e < ident.len() && e - end <= 40 && !boundary(e) {
        e += 1;
    }
    if e - s > 40 {
        return (false, e - s);
    }
    let word = String::from_utf8_lossy(&ident[s..e]).to_ascii_lowercase();
    let secret = word_strength(word.trim_end_matches(|c: char| c.is_ascii_digit()), flag).is_some();
    (secret, e - s)
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// How the value was introduced.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sep {
    /// `:` (YAML, JSON, headers): an unquoted word is a literal.
    Colon,
    /// `=` with a space on either side (code style): a bare identifier is a variable.
    SpacedEquals,
    /// `=`, `:=`, `=>`, `?=`, `name … value` pairs, a flag's space: a literal.
    Other,
    /// XML `<password>…</password>`, or a setter call `setPassword("…")`: the text up to `<`
    /// or the quoted argument.
    Element,
}

/// The scanner's state over one text.
struct Scan<'t> {
    text: &'t str,
    bytes: &'t [u8],
    spans: Spans,
    /// For each quote kind (`"`, `'`, `` ` ``, escaped `\"`): a position before which no closing
    /// quote exists on that line, so an unclosed quote is searched for once.
    no_close_before: [usize; 4],
}

/// Finds every keyed secret in `text`; returns the byte ranges to mask (sorted, disjoint).
pub(crate) fn find(text: &str) -> Spans {
    let mut scan = Scan {
        text,
        bytes: text.as_bytes(),
        spans: Vec::new(),
        no_close_before: [0; 4],
    };
    let mut pos = 0;
    while pos < text.len() {
        let Some(hit) = KEYWORD.find_at(text, pos) else {
            break;
        };
        pos = scan.key_at(hit.start(), hit.end(), pos);
    }
    scan.spans
}

impl Scan<'_> {
    /// Handles the key name around the keyword hit `[hit_start, hit_end)`; returns where the
    /// scan resumes.
    fn key_at(&mut self, hit_start: usize, hit_end: usize, floor: usize) -> usize {
        let b = self.bytes;
        let mut start = hit_start;
        while start > floor && hit_start - start < 128 && is_ident(b[start - 1]) {
            start -= 1;
        }
        let mut end = hit_end;
        while end < b.len() && is_ident(b[end]) {
            end += 1;
        }
        let resume = end;
        let mut key_end = end;
        while key_end > start && matches!(b[key_end - 1], b'.' | b'-') {
            key_end -= 1;
        }
        let ident = &self.text[start..key_end];
        let flag = ident.starts_with('-');
        let key_start = start + (ident.len() - ident.trim_start_matches(['-', '.']).len());
        let key = &self.text[key_start..key_end];
        if key.is_empty() || self.inside_url_or_path(start) {
            return resume;
        }
        // Cheap first: most keyword hits sit in words that name no secret (`path`, `design`,
        // `keyboard`, `tokens`); only a name with a secret word is classified in full.
        let names_secret = if hit_start >= key_start && hit_end <= key_end {
            let (at, len) = (hit_start - key_start, hit_end - hit_start);
            let (secret, word_len) = secret_word_at(key.as_bytes(), at, at + len, flag);
            secret
                || word_len < key.len()
                    && KEYWORD
                        .find_iter(key)
                        .any(|h| secret_word_at(key.as_bytes(), h.start(), h.end(), flag).0)
        } else {
            KEYWORD
                .find_iter(key)
                .any(|h| secret_word_at(key.as_bytes(), h.start(), h.end(), flag).0)
        };
        if !names_secret {
            return resume;
        }
        let word_before = self.word_before(start);
        let Some(strength) = classify(key, &word_before, flag) else {
            return resume;
        };
        let upper_env = is_upper_env(key);
        match self.separator(start, key_end, flag) {
            Some((value_at, sep)) => {
                let masked = match strength {
                    Strength::Header => self.header_value(value_at),
                    Strength::Cookie => self.cookie_values(value_at),
                    _ => self.assigned_value(key, key_start, value_at, sep, strength, upper_env),
                };
                masked.map_or(resume, |e| e.max(resume))
            }
            None if matches!(strength, Strength::Password | Strength::Token)
                && !matches!(self.bytes.get(end), Some(b'(' | b'.' | b'['))
                && !ident[..].contains(['.', '(']) =>
            {
                self.prose_value(key_end, strength).unwrap_or(resume)
            }
            None => resume,
        }
    }

    /// Whether the key name at `start` is part of a URL, a path, an ARN or a Windows path.
    fn inside_url_or_path(&self, start: usize) -> bool {
        let Some(&prev) = start.checked_sub(1).and_then(|i| self.bytes.get(i)) else {
            return false;
        };
        match prev {
            b'/' | b'@' | b'\\' | b'#' | b'~' => true,
            b':' => {
                let before = start.checked_sub(2).map(|i| self.bytes[i]);
                before.is_some_and(|c| c.is_ascii_alphanumeric())
                    && !self.text[..start].ends_with("env:")
            }
            _ => false,
        }
    }

    /// The prose word right before `start` (`API` in "API key"), lowercased.
    fn word_before(&self, start: usize) -> String {
        let head = &self.text[..start];
        let trimmed = head.trim_end_matches([' ', '\t']);
        if trimmed.len() == head.len() || trimmed.len() + 2 < head.len() {
            return String::new();
        }
        let word_start = trimmed
            .char_indices()
            .rev()
            .find(|(_, c)| !c.is_ascii_alphanumeric())
            .map_or(0, |(i, c)| i + c.len_utf8());
        if trimmed.len() - word_start > 24 {
            return String::new();
        }
        trimmed[word_start..].to_ascii_lowercase()
    }

    /// The separator after a key name ending at `end`: returns where the value starts.
    fn separator(&self, key_start: usize, end: usize, flag: bool) -> Option<(usize, Sep)> {
        let b = self.bytes;
        let mut i = end;
        // The closing quote of a quoted key, perhaps escaped (`\"password\"`).
        if b.get(i) == Some(&b'\\') && matches!(b.get(i + 1), Some(b'"' | b'\'')) {
            i += 2;
        } else if matches!(b.get(i), Some(b'"' | b'\'' | b'`')) {
            i += 1;
        }
        let after_key = i;
        let xml = key_start > 0 && b[key_start - 1] == b'<' && b.get(i) == Some(&b'>');
        if xml {
            return Some((i + 1, Sep::Element));
        }
        // `setPassword("…")`, `withToken('…')`, `password("…")`: a literal argument.
        if b.get(i) == Some(&b'(') && matches!(b.get(i + 1), Some(b'"' | b'\'')) {
            let name = self.text[key_start..end].rsplit('.').next().unwrap_or("");
            let lower = name.to_ascii_lowercase();
            if !lower.starts_with("get")
                && !lower.starts_with("verify")
                && !lower.starts_with("check")
            {
                return Some((i + 1, Sep::Element));
            }
        }
        let spaces_before = skip_blanks(b, i) - i;
        i += spaces_before;
        let rest = &b[i..];
        let (len, sep) =
            if rest.starts_with(b"=>") || rest.starts_with(b":=") || rest.starts_with(b"?=") {
                (2, Sep::Other)
            } else if rest.starts_with(b"==") || rest.starts_with(b"::") {
                return None;
            } else if rest.first() == Some(&b'=') {
                let spaced = spaces_before > 0 || matches!(rest.get(1), Some(b' ' | b'\t'));
                (
                    1,
                    if spaced {
                        Sep::SpacedEquals
                    } else {
                        Sep::Other
                    },
                )
            } else if rest.first() == Some(&b':') {
                (1, Sep::Colon)
            } else if flag && spaces_before > 0 && after_key == end {
                (0, Sep::Other)
            } else {
                return self.value_pair(after_key);
            };
        let value_at = skip_blanks(b, i + len);
        Some((value_at, sep))
    }

    /// `name: DB_PASSWORD` followed by `value: …` (Kubernetes env, ECS, .NET appSettings): the
    /// value's start, if the next thing within a line is a `value` key.
    fn value_pair(&self, from: usize) -> Option<(usize, Sep)> {
        let b = self.bytes;
        let mut i = from;
        let mut newlines = 0;
        while i < b.len()
            && i - from < 48
            && matches!(b[i], b' ' | b'\t' | b'\r' | b'\n' | b',' | b'-')
        {
            if b[i] == b'\n' {
                newlines += 1;
            }
            i += 1;
        }
        if newlines > 1 {
            return None;
        }
        if matches!(b.get(i), Some(b'"' | b'\'')) {
            i += 1;
        }
        if !b[i..].starts_with(b"value")
            || b.get(i + 5)
                .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_')
        {
            return None;
        }
        i += 5;
        if matches!(b.get(i), Some(b'"' | b'\'')) {
            i += 1;
        }
        i = skip_blanks(b, i);
        if !matches!(b.get(i), Some(b':' | b'=')) {
            return None;
        }
        Some((skip_blanks(b, i + 1), Sep::Other))
    }

    /// Reads the value at `at`: `(content start, content end, quoted, next byte after it)`.
    fn read_value(&mut self, at: usize) -> Option<(usize, usize, bool)> {
        let b = self.bytes;
        let first = *b.get(at)?;
        if first == b'\\' && matches!(b.get(at + 1), Some(b'"')) {
            let start = at + 2;
            if start < self.no_close_before[3] {
                return None;
            }
            return match escaped_closing_quote(b, start) {
                Ok(close) => Some((start, close, true)),
                Err(line_end) => {
                    self.no_close_before[3] = line_end;
                    None
                }
            };
        }
        if let Some(q) = [b'"', b'\'', b'`'].iter().position(|&q| q == first) {
            let start = at + 1;
            if start < self.no_close_before[q] {
                return None;
            }
            match closing_quote(b, start, first) {
                Ok(close) => return Some((start, close, true)),
                Err(line_end) => {
                    self.no_close_before[q] = line_end;
                    return None;
                }
            }
        }
        let mut end = at;
        while end < b.len() && !is_value_stop(b[end]) {
            end += 1;
        }
        Some((at, end, false))
    }

    /// A value after a key name and separator, masked when it is a literal secret; returns the
    /// end of the value (masked or not), where the scan resumes, so no value is read twice.
    fn assigned_value(
        &mut self,
        key: &str,
        key_start: usize,
        at: usize,
        sep: Sep,
        strength: Strength,
        upper_env: bool,
    ) -> Option<usize> {
        let (start, end, quoted) = self.read_value(at)?;
        let value = &self.text[start..end];
        let after = end + usize::from(quoted);
        let next = self.bytes.get(after).copied();
        let glued = at > 0 && self.bytes[at - 1] == b':';
        if !value_is_secret(key, value, glued, quoted, next, sep, strength, upper_env) {
            // A short value may hold the next key (`key="ApiSecret" value="…"`), so the scan
            // goes on inside it; a long one is skipped, so no long value is read twice.
            return (end - start > LONG_VALUE).then_some(after);
        }
        if upper_env && sep != Sep::Element {
            self.spans.push((key_start, after));
        } else {
            self.spans.push((start, end));
        }
        Some(after)
    }

    /// `Authorization: <scheme> <credential>` (or a bare credential): masked together.
    fn header_value(&mut self, at: usize) -> Option<usize> {
        let (start, end) = match self.read_value(at)? {
            (s, e, true) => (s, e),
            (s, _, false) => (s, line_value_end(self.bytes, s)),
        };
        let value = self.text[start..end].trim_end();
        let line_end = end;
        let end = start + value.len();
        let parts: Vec<&str> = value.split_whitespace().collect();
        let Some(credential) = parts.last() else {
            return Some(line_end);
        };
        let secret = match parts.len() {
            0 => false,
            1 => looks_random(credential, 16),
            _ => credential.len() >= 8,
        };
        if secret && !is_placeholder(credential) && !is_placeholder(value) {
            self.spans.push((start, end));
            return Some(line_end);
        }
        // Not masked whole (`AWS4-HMAC-SHA256 Credential=[REDACTED]/…, Signature=…`): the keys
        // inside are scanned on their own, unless the value is too long to read twice.
        (line_end - start > LONG_VALUE).then_some(line_end)
    }

    /// `Cookie: a=b; session=…`: masks the values of session-like or random-looking cookies.
    fn cookie_values(&mut self, at: usize) -> Option<usize> {
        let end = line_value_end(self.bytes, at);
        let mut offset = at;
        for pair in self.text[at..end].split(';') {
            let pair_start = offset;
            offset += pair.len() + 1;
            let Some((name, value)) = pair.split_once('=') else {
                continue;
            };
            let name = name.trim().to_ascii_lowercase();
            let value = value.trim().trim_matches('"');
            let session = SESSION_COOKIES.contains(&name.as_str())
                || name.contains("session")
                || name.contains("token");
            let secret = if session {
                value.len() >= 8 && !is_placeholder(value)
            } else {
                looks_random(value, 16)
            };
            if secret {
                let value_at = pair_start + pair.find(value).unwrap_or(0);
                self.spans.push((value_at, value_at + value.len()));
            }
        }
        Some(end)
    }

    /// Prose after a key name with no separator ("the private key is 0x…", "password for admin:
    /// …"): the first word that looks like a credential within five words on the same line.
    fn prose_value(&mut self, from: usize, strength: Strength) -> Option<usize> {
        /// Words after which the next word is what the name names ("… is X", "set to X").
        const CONNECTORS: &[&str] = &[
            "is", "was", "be", "as", "to", "use", "using", "with", "equals",
        ];
        let b = self.bytes;
        let line_end = b[from..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(b.len(), |p| from + p);
        let window_end = floor_boundary(self.text, line_end.min(from + 120));
        let window = &self.text[from..window_end];
        let mut words_seen = 0;
        let mut offset = 0;
        // Right after the name, or after a connector or a colon, a credential may follow.
        let mut may_follow = true;
        for raw in window.split([' ', '\t']) {
            let raw_at = from + offset;
            offset += raw.len() + 1;
            if raw.is_empty() {
                continue;
            }
            let word = raw
                .trim_start_matches(['"', '\'', '`', '(', '[', '{', '<'])
                .trim_end_matches([
                    '"', '\'', '`', ')', ']', '}', '>', '.', ',', ';', ':', '!', '?',
                ]);
            if word.is_empty() || word.bytes().all(|c| !c.is_ascii_alphanumeric()) {
                may_follow |= raw.contains([':', '=']);
                continue;
            }
            words_seen += 1;
            if words_seen > 7 {
                return None;
            }
            let lower = word.to_ascii_lowercase();
            if word.bytes().all(|c| c.is_ascii_alphabetic()) {
                if QUALIFIERS.contains(&lower.as_str()) {
                    return None;
                }
                may_follow = CONNECTORS.contains(&lower.as_str()) || raw.ends_with(':');
                continue;
            }
            if !may_follow || word.contains(super::REDACTED) || !prose_candidate(word, strength) {
                return None;
            }
            let word_at = raw_at + raw.find(word).unwrap_or(0);
            self.spans.push((word_at, word_at + word.len()));
            return Some(word_at + word.len());
        }
        None
    }
}

/// Whether a word in prose after a key name is the credential itself.
fn prose_candidate(word: &str, strength: Strength) -> bool {
    let code_like = word.bytes().any(|c| {
        matches!(
            c,
            b'(' | b')' | b'{' | b'}' | b'[' | b']' | b'<' | b'>' | b'"' | b'\''
        )
    });
    if code_like
        || is_placeholder(word)
        || word.starts_with(['-', '/', '.'])
        || word.contains("://")
        || word.contains('@')
        || is_code_reference(word)
    {
        return false;
    }
    if word.trim_end_matches('=').contains(['=', '/']) && !looks_random(word, 16) {
        return false;
    }
    let b = word.as_bytes();
    let letter = b.iter().any(u8::is_ascii_alphabetic);
    let digit_or_symbol = b.iter().any(|c| !c.is_ascii_alphabetic());
    match strength {
        Strength::Password => {
            let digit = b.iter().any(u8::is_ascii_digit);
            looks_random(word, 16)
                || b.len() >= 8 && letter && digit && digit_or_symbol && !is_word_chain(word)
        }
        _ => looks_random(word, 16) || is_uuid(word),
    }
}

/// Whether an assigned value is a literal secret rather than a placeholder, a reference or a type.
#[allow(clippy::too_many_arguments)]
fn value_is_secret(
    key: &str,
    value: &str,
    glued: bool,
    quoted: bool,
    next: Option<u8>,
    sep: Sep,
    strength: Strength,
    upper_env: bool,
) -> bool {
    let v = value.trim();
    if v.is_empty() || is_placeholder(v) || v.contains("://") || v.starts_with("arn:") {
        return false;
    }
    if [
        "ssh-rsa ",
        "ssh-ed25519 ",
        "ecdsa-sha2-",
        "ssh-dss ",
        "pk_live_",
        "pk_test_",
    ]
    .iter()
    .any(|p| v.starts_with(p))
    {
        return false;
    }
    let lower = v.to_ascii_lowercase();
    let same_as_key = {
        let squash = |s: &str| -> String {
            s.chars()
                .filter(char::is_ascii_alphanumeric)
                .map(|c| c.to_ascii_lowercase())
                .collect()
        };
        squash(v) == squash(key)
    };
    if same_as_key {
        return false;
    }
    if quoted {
        // A sentence ("Enter your password") is a label or a prompt, not a secret.
        let parts: Vec<&str> = v.split_whitespace().collect();
        let sentence = parts.len() >= 3
            && parts.iter().all(|w| {
                w.trim_end_matches(['.', ',', ':', '!', '?'])
                    .bytes()
                    .all(|c| c.is_ascii_alphabetic() || c == b'\'')
            });
        if sentence {
            return false;
        }
        // `secretName: my-app-secret`: a name that repeats its own key word.
        if is_word_chain(v) && words(key).iter().any(|w| lower.contains(w.as_str())) {
            return false;
        }
    } else {
        let generic = next == Some(b'<') && sep != Sep::Element;
        if matches!(next, Some(b'(' | b'[')) || generic || is_code_reference(v) {
            return false;
        }
        if TYPE_WORDS.contains(&lower.as_str()) || v.starts_with(['&', '*', '?', '|', '>']) {
            return false;
        }
        if v.ends_with(['/', '\\']) || is_path(v) {
            return false;
        }
        if sep == Sep::Colon && is_pascal_type(v) {
            return false;
        }
        // `credentials:edit`, `secret:list`: a namespaced command, not `key: value`.
        if sep == Sep::Colon && glued && v.bytes().all(|c| c.is_ascii_lowercase()) {
            return false;
        }
        let literal_looking = v.bytes().any(|c| !c.is_ascii_alphabetic() && c != b'_');
        if sep == Sep::SpacedEquals && !literal_looking {
            return false;
        }
        if is_word_chain(v) && words(key).iter().any(|w| lower.contains(w.as_str())) {
            return false;
        }
    }
    let len = v.chars().count();
    if upper_env {
        return len >= 3;
    }
    match strength {
        Strength::Password => len >= 4,
        Strength::Token => len >= 8 && !(v.bytes().all(|c| c.is_ascii_digit()) && len < 12),
        _ => looks_random(v, 16) || len >= 16 && entropy(v) >= 3.5 && !is_uuid(v),
    }
}

/// `SecretString`, `ApiKey`, `Token`: a type name after a colon.
fn is_pascal_type(v: &str) -> bool {
    let b = v.as_bytes();
    b[0].is_ascii_uppercase()
        && b.iter().all(u8::is_ascii_alphanumeric)
        && b[1..].iter().any(u8::is_ascii_lowercase)
        && b.iter().filter(|c| c.is_ascii_digit()).count() == 0
}

/// An all-caps env name ending in KEY/TOKEN/SECRET/PASSWORD (the reference's env rule).
fn is_upper_env(key: &str) -> bool {
    let b = key.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_uppercase()
        && b.iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_')
        && ["KEY", "TOKEN", "SECRET", "PASSWORD"]
            .iter()
            .any(|s| key.ends_with(s))
}

fn skip_blanks(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t') {
        i += 1;
    }
    i
}

/// Bytes that end an unquoted value.
fn is_value_stop(c: u8) -> bool {
    c.is_ascii_whitespace()
        || matches!(
            c,
            b'"' | b'\''
                | b'`'
                | b','
                | b';'
                | b'<'
                | b'>'
                | b'('
                | b')'
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b'&'
                | b'|'
                | b'\\'
        )
}

/// The end of a header-style value: the end of the line, or a quote or escape that closes it.
fn line_value_end(b: &[u8], from: usize) -> usize {
    let mut i = from;
    while i < b.len() && !matches!(b[i], b'\n' | b'\r' | b'"' | b'\'' | b'\\' | b'`') {
        i += 1;
    }
    i
}

/// The position of the quote `q` closing a value that starts at `from`, on the same line and
/// not escaped; `Err(line end)` when there is none.
fn closing_quote(b: &[u8], from: usize, q: u8) -> Result<usize, usize> {
    let mut i = from;
    while i < b.len() {
        match b[i] {
            c if c == q => return Ok(i),
            b'\\' => i += 2,
            b'\n' => return Err(i),
            _ => i += 1,
        }
    }
    Err(b.len())
}

/// The position of the escaped quote (`\"`) closing a value that starts at `from`, on the same
/// line; `Err(line end)` when there is none.
fn escaped_closing_quote(b: &[u8], from: usize) -> Result<usize, usize> {
    let mut i = from;
    while i < b.len() {
        match b[i] {
            b'\\' if b.get(i + 1) == Some(&b'"') => return Ok(i),
            b'\n' => return Err(i),
            _ => i += 1,
        }
    }
    Err(b.len())
}

/// Whether a key name says "secret" but is qualified into something public (`key_id`,
/// `nextPageToken`, `public_key`, `password_policy`).
pub(crate) fn names_something_public(key: &str) -> bool {
    let has_secret_word = words(key)
        .iter()
        .any(|w| word_strength(w.trim_end_matches(|c: char| c.is_ascii_digit()), false).is_some());
    has_secret_word && classify(key, "", false).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_names_split_into_words_at_separators_and_humps() {
        assert_eq!(words("apiKey"), ["api", "key"]);
        assert_eq!(words("APIKey"), ["api", "key"]);
        assert_eq!(
            words("AWS_SECRET_ACCESS_KEY"),
            ["aws", "secret", "access", "key"]
        );
        assert_eq!(words("client-key-data"), ["client", "key", "data"]);
    }

    #[test]
    fn classification_follows_the_words_of_the_name() {
        assert_eq!(classify("password", "", false), Some(Strength::Password));
        assert_eq!(classify("api_key", "", false), Some(Strength::Token));
        assert_eq!(classify("key", "api", false), Some(Strength::Token));
        assert_eq!(classify("key", "", false), Some(Strength::Weak));
        assert_eq!(classify("key_id", "", false), None);
        assert_eq!(classify("nextPageToken", "", false), None);
        assert_eq!(classify("max_tokens", "", false), None);
        assert_eq!(classify("TURKEY", "", false), None);
        assert_eq!(classify("PGPASSWORD", "", false), Some(Strength::Password));
        assert_eq!(classify("public_key", "", false), None);
    }
}
