//! Key names: which names say "secret", and how strongly. A name is split into words at
//! separators and camelCase humps (`AWS_SECRET_ACCESS_KEY`, `apiKey`, `client-key-data`); the
//! last secret word decides its [`Strength`], and a qualifier after it (`key_id`, `token_type`)
//! or a public word before it (`public_key`, `page_token`) makes the name about something else.
//!
//! Guarantees: pure functions of the name (and of the prose word before it); no word is looked
//! for more than 40 letters around a keyword hit, so a long name costs what its length does.
//! Must never: look at the value (that is [`super::verdict`]'s job).

/// How strongly a key name says "secret", which decides what value it takes to mask.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Strength {
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
pub(super) const QUALIFIERS: &[&str] = &[
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
    "screen", "view", "component", "encoder", "hasher", "strategy", "spec", "selector",
];

/// Words that, before the secret word, make the name public or about something else
/// (`public_key`, `primary_key`, `page_token`, `max_tokens`).
#[rustfmt::skip]
const PUBLIC_BEFORE: &[&str] = &[
    "public", "pub", "primary", "foreign", "sort", "partition", "cache", "page", "next", "prev",
    "previous", "continuation", "sync", "pagination", "max", "total", "num", "input", "output",
    "prompt", "completion", "csrf", "xsrf", "idempotency", "lookup", "shard", "hot",
    "dedup", "dedupe", "unique", "composite", "natural", "surrogate", "cancellation", "lexer",
    "row", "group", "dict", "hash", "map", "sorting", "object", "s3", "gcs", "blob", "i18n",
    "translation", "message", "label", "event", "tracking", "analytics", "music", "publishable",
    "get", "existing",
];

/// Words before `key` that make it a credential (`api key`, `private_key`, `AccountKey`).
#[rustfmt::skip]
const STRONG_KEY_BEFORE: &[&str] = &[
    "api", "access", "secret", "private", "priv", "account", "master", "signing", "sign",
    "encryption", "enc", "client", "app", "application", "license", "subscription", "service",
    "shared", "sharedaccess", "auth", "admin", "write", "read", "deploy", "storage", "consumer",
    "webhook", "hmac", "jwt", "session", "crypto", "wallet", "root", "cloud", "ingest",
    "management", "mgmt", "personal", "project", "org", "server", "secure", "decryption", "aes",
    "gpg", "pgp", "ssh", "deployer", "mnemonic", "seed", "bot", "integration", "sec", "sdk",
    "mobile", "browser", "writer", "reader", "partner", "merchant", "publisher",
];

/// Splits a key name into lowercase words: on `_ - . $ :` and at camelCase humps
/// (`apiKey` → api, key; `APIKey` → api, key; `AWS_SECRET_ACCESS_KEY` → aws, secret, access, key).
pub(super) fn words(key: &str) -> Vec<String> {
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
pub(super) fn classify(key: &str, word_before: &str, flag: bool) -> Option<Strength> {
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
    /// English words that end in `pass` and name no password.
    const NOT_PASSWORDS: &[&str] = &[
        "bypass",
        "compass",
        "encompass",
        "surpass",
        "trespass",
        "overpass",
        "underpass",
        "multipass",
        "onepass",
        "twopass",
        "singlepass",
    ];
    match w {
        "pwd" | "pass" | "credential" | "credentials" | "creds" | "pw" | "psk" | "authtok"
        | "masterauth" => {
            return Some(Strength::Password);
        }
        "key" | "auth" | "sig" | "signature" | "dsn" | "salt" | "encrypt" => {
            return Some(Strength::Weak);
        }
        "pat" => return Some(Strength::Token),
        "authorization" => return Some(Strength::Header),
        "cookie" => return Some(Strength::Cookie),
        _ => {}
    }
    // `requirepass`, `storepass`, `bindpw`, `rootpw`: one word ending in a password word.
    let pass_compound = w.ends_with("pass") && !NOT_PASSWORDS.contains(&w)
        || (5..=8).contains(&w.len())
            && (w.ends_with("pw") || w.ends_with("pwd"))
            && w.bytes().all(|c| c.is_ascii_lowercase());
    if PASSWORD_ENDINGS.iter().any(|e| w.ends_with(e))
        || pass_compound
        || flag && w.ends_with("pass")
    {
        return Some(Strength::Password);
    }
    // `writekey`, `licensekey`, `sharedaccesskey`: a credential word glued to `key`.
    let key_compound = w.strip_suffix("key").is_some_and(|head| {
        STRONG_KEY_BEFORE
            .iter()
            .any(|s| head == *s || s.len() >= 3 && head.ends_with(s))
    });
    if w.ends_with("token") || key_compound {
        return Some(Strength::Token);
    }
    None
}

/// Whether the word of `ident` around the keyword hit `[start, end)` names a secret, and the
/// word's length: the word runs to the nearest separator or camelCase hump, as in [`words`].
pub(super) fn secret_word_at(ident: &[u8], start: usize, end: usize, flag: bool) -> (bool, usize) {
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

pub(super) fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// An all-caps env name ending in KEY/TOKEN/SECRET/PASSWORD (the reference's env rule).
pub(super) fn is_upper_env(key: &str) -> bool {
    let b = key.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_uppercase()
        && b.iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_')
        && ["KEY", "TOKEN", "SECRET", "PASSWORD"]
            .iter()
            .any(|s| key.ends_with(s))
}

/// Whether a key name names a password, a token or a credential header (`db_password`,
/// `apiKey`, `client-secret`, `Authorization`), in any casing and separator.
pub(crate) fn names_a_secret(key: &str) -> bool {
    matches!(
        classify(key, "", false),
        Some(Strength::Password | Strength::Token | Strength::Header)
    )
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
