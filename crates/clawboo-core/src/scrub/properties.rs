//! Property tests of the keyed rules over generated JSON: a string under a secret-like key name
//! is masked whatever the name's casing and separator, the nesting, or the value's characters;
//! a value of benign shape under an ordinary key is left byte-identical. A seeded generator (the
//! workspace's `Rng`) makes a few thousand cases per property, the same ones on every run.

use serde_json::{Map, Value};

use clawboo_tests::Rng;

use super::value::{is_code_reference, is_placeholder};
use super::{REDACTED, scrub_json, scrub_secrets};

/// The secret concepts a key name can carry, as words.
const SECRET_NAMES: &[&[&str]] = &[
    &["password"],
    &["passwd"],
    &["passphrase"],
    &["secret"],
    &["client", "secret"],
    &["app", "secret"],
    &["consumer", "secret"],
    &["webhook", "secret"],
    &["signing", "secret"],
    &["api", "key"],
    &["api", "token"],
    &["auth", "token"],
    &["access", "token"],
    &["refresh", "token"],
    &["bearer", "token"],
    &["session", "token"],
    &["token"],
    &["private", "key"],
    &["secret", "key"],
    &["access", "key"],
    &["master", "key"],
    &["encryption", "key"],
    &["signing", "key"],
    &["license", "key"],
    &["db", "password"],
    &["smtp", "pass"],
    &["admin", "pass"],
    &["credentials"],
];

/// Words that may stand before a secret concept without changing it.
const OWNERS: &[&str] = &[
    "", "", "", "prod", "stripe", "github", "service", "my", "backup", "default", "ci",
];

/// Ordinary keys, which name nothing secret.
const ORDINARY_KEYS: &[&str] = &[
    "name",
    "id",
    "region",
    "description",
    "count",
    "url",
    "email",
    "version",
    "host",
    "port",
    "status",
    "createdAt",
    "user_name",
    "title",
    "path",
    "kind",
    "enabled",
    "owner",
    "team",
    "bucket",
    "image",
    "locale",
    "color",
    "commit",
    "checksum",
    "requestId",
    "trace-id",
];

/// Lowercase words for benign values and for nesting keys.
const WORDS: &[&str] = &[
    "alpha", "bravo", "delta", "orders", "billing", "staging", "europe", "west", "nightly",
    "release", "green", "blue", "report", "invoice", "cluster", "replica", "primary", "queue",
];

/// A key name for `words` in one of the casings and separators configs use.
fn render_key(words: &[&str], rng: &mut Rng) -> String {
    let cap = |w: &str| {
        let mut c = w.chars();
        c.next()
            .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
            .unwrap_or_default()
    };
    match rng.below(8) {
        0 => words.join("_"),
        1 => words.join("_").to_ascii_uppercase(),
        2 => words.join("-"),
        3 => words.iter().map(|w| cap(w)).collect::<Vec<_>>().join("-"),
        4 => words.join("."),
        5 => words.iter().map(|w| cap(w)).collect(),
        _ => {
            let mut out = words[0].to_owned();
            out.extend(words[1..].iter().map(|w| cap(w)));
            out
        }
    }
}

/// A secret-like key name: an optional owner word, then a secret concept.
fn secret_key(rng: &mut Rng) -> String {
    let mut words: Vec<&str> = Vec::new();
    let owner = *rng.pick(OWNERS);
    if !owner.is_empty() {
        words.push(owner);
    }
    words.extend_from_slice(SECRET_NAMES[rng.below(SECRET_NAMES.len())]);
    render_key(&words, rng)
}

/// A printable ASCII value of 8 to 48 characters that is neither a placeholder nor a reference.
fn secret_value(rng: &mut Rng) -> String {
    loop {
        let len = 8 + rng.below(41);
        let value: String = (0..len)
            .map(|_| char::from(b' ' + rng.below(95) as u8))
            .collect();
        let v = value.trim();
        if v.len() >= 8 && !is_placeholder(v) && !is_code_reference(v) {
            return value;
        }
    }
}

/// A value of benign shape: words, a number, a UUID, a hash, a date, a version, a URL without
/// credentials, a path, an address.
fn benign_value(rng: &mut Rng) -> Value {
    let hex = |n: usize, rng: &mut Rng| -> String {
        (0..n)
            .map(|_| char::from(b"0123456789abcdef"[rng.below(16)]))
            .collect()
    };
    let word = |rng: &mut Rng| *rng.pick(WORDS);
    match rng.below(10) {
        0 => Value::from(rng.below(100_000)),
        1 => Value::from(format!("{} {} {}", word(rng), word(rng), word(rng))),
        2 => Value::from(format!("{}-{}-{}", word(rng), word(rng), rng.below(100))),
        3 => {
            let h = hex(32, rng);
            Value::from(format!(
                "{}-{}-4{}-8{}-{}",
                &h[..8],
                &h[8..12],
                &h[13..16],
                &h[17..20],
                &h[20..]
            ))
        }
        4 => Value::from(hex(if rng.below(2) == 0 { 40 } else { 64 }, rng)),
        5 => Value::from(format!(
            "2026-{:02}-{:02}T{:02}:00:00Z",
            1 + rng.below(12),
            1 + rng.below(28),
            rng.below(24)
        )),
        6 => Value::from(format!(
            "{}.{}.{}",
            rng.below(10),
            rng.below(30),
            rng.below(100)
        )),
        7 => Value::from(format!(
            "https://{}.example.com/{}/{}?page={}",
            word(rng),
            word(rng),
            word(rng),
            rng.below(9)
        )),
        8 => Value::from(format!("/var/lib/{}/{}.json", word(rng), word(rng))),
        _ => Value::from(format!("{}.{}@example.com", word(rng), word(rng))),
    }
}

/// Wraps `inner` (a map holding the key under test) in 0 to 3 levels of objects and arrays,
/// with ordinary siblings at each level.
fn nest(mut inner: Map<String, Value>, rng: &mut Rng) -> Value {
    for _ in 0..rng.below(3) {
        inner.insert((*rng.pick(ORDINARY_KEYS)).to_owned(), benign_value(rng));
    }
    let mut value = Value::Object(inner);
    for _ in 0..rng.below(4) {
        value = if rng.below(3) == 0 {
            Value::Array(vec![benign_value(rng), value])
        } else {
            let mut outer = Map::new();
            outer.insert((*rng.pick(WORDS)).to_owned(), value);
            outer.insert((*rng.pick(ORDINARY_KEYS)).to_owned(), benign_value(rng));
            Value::Object(outer)
        };
    }
    value
}

/// Renders a JSON document compactly or pretty-printed.
fn render(doc: &Value, rng: &mut Rng) -> String {
    if rng.below(2) == 0 {
        doc.to_string()
    } else {
        serde_json::to_string_pretty(doc).expect("a JSON value renders")
    }
}

/// Whether no 8-character window of `secret` (trimmed) survives in `text`, in raw or in JSON
/// string form.
fn leaks(secret: &str, text: &str) -> bool {
    let escaped = Value::from(secret).to_string();
    let escaped = &escaped[1..escaped.len() - 1];
    [secret.trim(), escaped].iter().any(|form| {
        let chars: Vec<char> = form.chars().collect();
        chars
            .windows(8.min(chars.len()))
            .any(|w| text.contains(&w.iter().collect::<String>()))
    })
}

#[test]
fn any_value_under_a_secret_key_name_in_json_is_masked() {
    let mut rng = Rng::new(0x5EC2_E715);
    for case in 0..3000 {
        let key = secret_key(&mut rng);
        let secret = secret_value(&mut rng);
        let mut inner = Map::new();
        inner.insert(key.clone(), Value::from(secret.clone()));
        let doc = nest(inner, &mut rng);
        let text = render(&doc, &mut rng);
        let scrubbed = scrub_secrets(&text);
        assert!(
            scrubbed.contains(REDACTED) && !leaks(&secret, &scrubbed),
            "case {case}: {key:?} = {secret:?} survived in {scrubbed}"
        );
        assert!(
            serde_json::from_str::<Value>(&scrubbed).is_ok(),
            "case {case}: the scrubbed document is no longer JSON: {scrubbed}"
        );
        let masked = scrub_json(&doc).to_string();
        assert!(
            !leaks(&secret, &masked),
            "case {case}: scrub_json kept {key:?} = {secret:?}: {masked}"
        );
    }
}

#[test]
fn benign_values_under_ordinary_keys_in_json_are_left_alone() {
    let mut rng = Rng::new(0xBE91_9615);
    for case in 0..3000 {
        let mut inner = Map::new();
        for _ in 0..1 + rng.below(4) {
            inner.insert(
                render_key(&[*rng.pick(ORDINARY_KEYS)], &mut rng),
                benign_value(&mut rng),
            );
        }
        let doc = nest(inner, &mut rng);
        let text = render(&doc, &mut rng);
        assert_eq!(scrub_secrets(&text), text, "case {case}");
        assert_eq!(scrub_json(&doc), doc, "case {case}");
    }
}
