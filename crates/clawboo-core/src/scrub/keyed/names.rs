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
/// `password_policy`) or stand between the name and a prose value ("token budget"). Sorted, as
/// are the lists below: they are searched by bisection.
#[rustfmt::skip]
const QUALIFIERS: &[&str] = &[
    "age", "alg", "algorithm", "arn", "audience", "backend", "bits", "box", "budget", "build",
    "builder", "button", "bytes", "cache", "chain", "changed", "check", "checksum", "class",
    "column", "commit", "component", "config", "cost", "count", "counter", "counts", "created",
    "cursor", "date", "desc", "description", "dialog", "digest", "dir", "directory", "doc", "docs",
    "enable", "enabled", "encoder", "encoding", "endpoint", "entropy", "env", "error", "estimate",
    "estimator", "exp", "expiration", "expired", "expires", "expiry", "factory", "field", "fields",
    "file", "filename", "files", "fingerprint", "flag", "flags", "form", "format", "generator",
    "get", "handler", "hash", "hashed", "hasher", "header", "helper", "hint", "host", "id", "ids",
    "index", "input", "interface", "issuer", "kind", "label", "len", "length", "lexer", "lifetime",
    "limit", "limits", "link", "links", "list", "location", "log", "logger", "manager", "map",
    "mask", "masked", "max", "message", "method", "metrics", "min", "modal", "mode", "module",
    "msg", "name", "names", "option", "options", "page", "pages", "param", "parameter", "parser",
    "path", "paths", "pattern", "per", "placeholder", "policies", "policy", "prefix", "price",
    "prompt", "provider", "rate", "redacted", "ref", "refs", "regex", "release", "remaining",
    "request", "required", "reset", "ring", "rotate", "rotation", "rule", "rules", "schema",
    "scope", "scopes", "screen", "selector", "service", "set", "settings", "sha", "sid", "size",
    "source", "span", "spec", "stats", "stdin", "storage", "store", "strategy", "strength",
    "struct", "suffix", "table", "tag", "template", "time", "timeout", "timestamp", "tokenizer",
    "trace", "ttl", "type", "types", "updated", "uri", "url", "usage", "used", "util", "utils",
    "uuid", "validation", "validator", "var", "variable", "vault", "version", "view", "visible",
    "window",
];

/// Words that, before the secret word, make the name public or about something else
/// (`public_key`, `primary_key`, `page_token`, `max_tokens`).
#[rustfmt::skip]
const PUBLIC_BEFORE: &[&str] = &[
    "analytics", "blob", "cache", "cancellation", "completion", "composite", "continuation", "csrf",
    "dedup", "dedupe", "dict", "event", "existing", "foreign", "gcs", "get", "group", "hash", "hot",
    "i18n", "idempotency", "input", "label", "lexer", "lookup", "map", "max", "message", "music",
    "natural", "next", "num", "object", "output", "page", "pagination", "partition", "prev",
    "previous", "primary", "prompt", "pub", "public", "publishable", "row", "s3", "shard", "sort",
    "sorting", "surrogate", "sync", "total", "tracking", "translation", "unique", "xsrf",
];

/// Words before `key` that make it a credential (`api key`, `private_key`, `AccountKey`).
#[rustfmt::skip]
const STRONG_KEY_BEFORE: &[&str] = &[
    "access", "account", "admin", "aes", "api", "app", "application", "auth", "bot", "browser",
    "client", "cloud", "consumer", "crypto", "decryption", "deploy", "deployer", "enc",
    "encryption", "gpg", "hmac", "ingest", "integration", "jwt", "license", "management", "master",
    "merchant", "mgmt", "mnemonic", "mobile", "org", "partner", "personal", "pgp", "priv",
    "private", "project", "publisher", "read", "reader", "root", "sdk", "sec", "secret", "secure",
    "seed", "server", "service", "session", "shared", "sharedaccess", "sign", "signing", "ssh",
    "storage", "subscription", "wallet", "webhook", "write", "writer",
];

/// Splits a key name into lowercase words: on `_ - . $ :` and at camelCase humps
/// (`apiKey` → api, key; `APIKey` → api, key; `AWS_SECRET_ACCESS_KEY` → aws, secret, access, key).
pub(super) fn words(key: &str) -> Vec<String> {
    let b = key.as_bytes();
    let mut out = Vec::new();
    let mut start = None;
    for i in 0..=b.len() {
        let c = b.get(i).copied().unwrap_or(b'_');
        let hump = || {
            let p = b[i - 1];
            c.is_ascii_uppercase()
                && (p.is_ascii_lowercase()
                    || p.is_ascii_digit()
                    || p.is_ascii_uppercase() && b.get(i + 1).is_some_and(u8::is_ascii_lowercase))
        };
        if (!c.is_ascii_alphanumeric() || start.is_some() && hump())
            && let Some(from) = start.take()
        {
            out.push(key[from..i].to_ascii_lowercase());
        }
        if c.is_ascii_alphanumeric() && start.is_none() {
            start = Some(i);
        }
    }
    out
}

/// Whether `w` (lowercase) qualifies a secret word into something public.
pub(super) fn is_qualifier(w: &str) -> bool {
    QUALIFIERS.binary_search(&w).is_ok()
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
    if words[at + 1..].iter().any(|w| is_qualifier(w)) {
        return None;
    }
    let public = |w: &str| PUBLIC_BEFORE.binary_search(&w).is_ok();
    if words[..at].iter().any(|w| public(w)) {
        return None;
    }
    if strength == Strength::Weak && words[at] == "key" {
        let prev = match at {
            0 => (words.len() == 1).then_some(word_before),
            _ => Some(words[at - 1].as_str()),
        };
        if prev.is_some_and(|p| STRONG_KEY_BEFORE.binary_search(&p).is_ok()) {
            strength = Strength::Token;
        } else if words.len() == 1 && public(word_before) {
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
        "multipass",
        "onepass",
        "overpass",
        "singlepass",
        "surpass",
        "trespass",
        "twopass",
        "underpass",
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
    let pass_compound = w.ends_with("pass") && NOT_PASSWORDS.binary_search(&w).is_err()
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
    let mut lower = [0u8; 41];
    for (to, from) in lower.iter_mut().zip(&ident[s..e]) {
        *to = from.to_ascii_lowercase();
    }
    let word = std::str::from_utf8(&lower[..e - s]).unwrap_or_default();
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
    fn word_lists_are_sorted_for_bisection() {
        for list in [QUALIFIERS, PUBLIC_BEFORE, STRONG_KEY_BEFORE] {
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{list:?}");
        }
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
