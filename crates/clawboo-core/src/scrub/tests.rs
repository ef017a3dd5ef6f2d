use super::*;
use serde_json::json;

use clawboo_tests::Rng;

/// One corpus line made concrete: its kind, its text, and the generated pieces of its secret.
struct Sample {
    kind: String,
    text: String,
    pieces: Vec<String>,
}

/// Seed words for `⟨words:n⟩` (the BIP-39 list is longer; any short lowercase words will do).
const SEED_WORDS: &[&str] = &[
    "abandon", "badge", "cactus", "dawn", "eagle", "fabric", "gadget", "habit", "icon", "jacket",
    "kernel", "ladder", "magnet", "napkin", "oblige", "paddle", "quarter", "rabbit", "saddle",
    "table", "umbrella", "vacuum", "wagon", "yellow", "zebra", "orbit", "pencil", "river",
];

/// `n` random characters of a corpus class (see the header of `corpus/secrets.txt`).
fn generate(class: &str, n: usize, rng: &mut Rng) -> String {
    const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
    const DIGITS: &str = "0123456789";
    let pick = |alphabet: &str, n: usize, rng: &mut Rng| -> String {
        let chars: Vec<char> = alphabet.chars().collect();
        (0..n).map(|_| chars[rng.below(chars.len())]).collect()
    };
    match class {
        "uuid" => {
            let h = pick("0123456789abcdef", 32, rng);
            format!(
                "{}-{}-4{}-a{}-{}",
                &h[..8],
                &h[8..12],
                &h[13..16],
                &h[17..20],
                &h[20..]
            )
        }
        "words" => (0..n)
            .map(|_| SEED_WORDS[rng.below(SEED_WORDS.len())])
            .collect::<Vec<_>>()
            .join(" "),
        _ => {
            let alphabet = match class {
                "an" => format!("{UPPER}{LOWER}{DIGITS}"),
                "AN" => format!("{UPPER}{DIGITS}"),
                "ld" => format!("{LOWER}{DIGITS}"),
                "l" => LOWER.to_owned(),
                "L" => format!("{UPPER}{LOWER}"),
                "hex" => "0123456789abcdef".to_owned(),
                "HEX" => "0123456789ABCDEF".to_owned(),
                "d" => DIGITS.to_owned(),
                "b64" => format!("{UPPER}{LOWER}{DIGITS}+/"),
                "url" => format!("{UPPER}{LOWER}{DIGITS}_-"),
                "b32" => format!("{UPPER}234567"),
                "bech" => "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L".to_owned(),
                "b58" => "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz".to_owned(),
                "pw" => format!("{UPPER}{LOWER}{DIGITS}!#%^*_+-=~"),
                "sym" => format!("{UPPER}{LOWER}{DIGITS}!#%^*_+-=~@&()[];:,.?/|"),
                other => panic!("unknown corpus class {other}"),
            };
            // A password always mixes classes, as a real one would.
            let mut s = pick(&alphabet, n, rng);
            if matches!(class, "pw" | "sym") && n >= 4 {
                s.replace_range(
                    ..4,
                    &format!(
                        "{}{}{}!",
                        pick(UPPER, 1, rng),
                        pick(LOWER, 1, rng),
                        pick(DIGITS, 1, rng)
                    ),
                );
            }
            s
        }
    }
}

/// Fills a corpus template: `\n` becomes a newline and `\\` one backslash (so `\\n` is a
/// written `\n`, as inside a JSON string), every `⟨class:n⟩` a fresh value; returns the text
/// (markers removed) and the generated values that stood between « and ».
fn instantiate(template: &str, rng: &mut Rng) -> (String, Vec<String>) {
    let mut text = String::new();
    let mut pieces = Vec::new();
    let mut in_secret = false;
    let mut rest = template;
    while let Some(c) = rest.chars().next() {
        match c {
            '\\' if rest[1..].starts_with(['n', '\\']) => {
                text.push(if rest[1..].starts_with('n') {
                    '\n'
                } else {
                    '\\'
                });
                rest = &rest[2..];
                continue;
            }
            '«' => in_secret = true,
            '»' => in_secret = false,
            '⟨' => {
                let close = rest.find('⟩').expect("a ⟩ closes every ⟨");
                let spec = &rest['⟨'.len_utf8()..close];
                let (class, n) = spec.split_once(':').expect("⟨class:n⟩");
                let value = generate(class, n.parse().expect("a length"), rng);
                text.push_str(&value);
                if in_secret {
                    pieces.push(value);
                }
                rest = &rest[close + '⟩'.len_utf8()..];
                continue;
            }
            other => text.push(other),
        }
        rest = &rest[c.len_utf8()..];
    }
    (text, pieces)
}

fn corpus_lines(file: &str) -> impl Iterator<Item = &str> {
    file.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
}

/// The secret corpus, each line made concrete `rounds` times with fresh values.
fn secret_samples(rounds: u64) -> Vec<Sample> {
    let mut samples = Vec::new();
    for round in 0..rounds {
        let mut rng = Rng::new(0x5EC2E7 + round);
        for line in corpus_lines(include_str!("corpus/secrets.txt")) {
            let (kind, template) = line.split_once(" | ").expect("`kind | text`");
            let (text, pieces) = instantiate(template, &mut rng);
            assert!(
                !pieces.is_empty(),
                "{kind}: no generated secret between « and »"
            );
            samples.push(Sample {
                kind: kind.to_owned(),
                text,
                pieces,
            });
        }
    }
    samples
}

/// The benign corpus, made concrete `rounds` times.
fn benign_samples(rounds: u64) -> Vec<String> {
    let mut out = Vec::new();
    for round in 0..rounds {
        let mut rng = Rng::new(0xBE9196 + round);
        for line in corpus_lines(include_str!("corpus/benign.txt")) {
            out.push(instantiate(line, &mut rng).0);
        }
    }
    out
}

/// Whether every piece of the secret is gone: no 8-character window of any generated value (or
/// the whole value, when shorter) survives, and a sentinel took its place.
fn fully_scrubbed(sample: &Sample, scrubbed: &str) -> bool {
    scrubbed.contains(REDACTED)
        && sample.pieces.iter().all(|piece| {
            let chars: Vec<char> = piece.chars().collect();
            let width = chars.len().min(8);
            chars
                .windows(width)
                .all(|w| !scrubbed.contains(&w.iter().collect::<String>()))
        })
}

#[test]
fn the_corpus_has_enough_kinds_and_look_alikes() {
    let samples = secret_samples(1);
    let kinds: std::collections::BTreeSet<&str> = samples.iter().map(|s| s.kind.as_str()).collect();
    assert_eq!(
        kinds.len(),
        samples.len(),
        "every secret line is its own kind"
    );
    assert!(kinds.len() >= 150, "only {} kinds of secret", kinds.len());
    assert!(benign_samples(1).len() >= 100, "too few benign lines");
}

#[test]
fn the_corpus_is_scrubbed_completely_and_benign_lines_survive() {
    const ROUNDS: u64 = 12;
    let samples = secret_samples(ROUNDS);
    let missed: Vec<(&str, String)> = samples
        .iter()
        .filter_map(|s| {
            let out = scrub_secrets(&s.text);
            (!fully_scrubbed(s, &out)).then_some((s.kind.as_str(), out))
        })
        .collect();
    let benign = benign_samples(ROUNDS);
    let changed: Vec<(&String, String)> = benign
        .iter()
        .filter_map(|line| {
            let out = scrub_secrets(line);
            (out != *line).then_some((line, out))
        })
        .collect();
    let caught = 100.0 * (samples.len() - missed.len()) as f64 / samples.len() as f64;
    let altered = 100.0 * changed.len() as f64 / benign.len() as f64;
    println!(
        "scrub corpus: {caught:.1}% of {} secret lines fully scrubbed; {altered:.1}% of {} benign lines changed",
        samples.len(),
        benign.len()
    );
    for (kind, out) in &missed {
        println!("  missed {kind}: {out:?}");
    }
    for (line, out) in &changed {
        println!("  changed {line:?} -> {out:?}");
    }
    assert!(
        caught >= 99.0,
        "{caught:.1}% of secret lines scrubbed (need 99%)"
    );
    assert!(
        altered <= 1.0,
        "{altered:.1}% of benign lines changed (at most 1%)"
    );
}

#[test]
fn reference_examples_scrub_as_the_spec_says() {
    let cases = [
        (
            "use bearer sk-deadbeef1234567890ABCD for the prod API; the rest is plain",
            "use bearer [REDACTED] for the prod API; the rest is plain",
        ),
        (
            "run with token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "run with token [REDACTED]",
        ),
        ("MY_SECRET=\"two words\" remainder", "[REDACTED] remainder"),
        ("API_TOKEN='abc def' tail", "[REDACTED] tail"),
        ("DB_PASSWORD: hunter2 trailing", "[REDACTED] trailing"),
        (
            "Authorization: Bearer abcdefghijklmnop.qrs",
            "Authorization: [REDACTED]",
        ),
        ("sk-short", "sk-short"),
        ("AKIAABCDEFGHIJKLMNOP", "[REDACTED]"),
        ("AKIAabcdefghijklmnop", "AKIAabcdefghijklmnop"),
        // The reference masks this (any all-caps word ending in KEY); a turkey is not a key, so
        // this false positive is fixed on purpose.
        ("TURKEY: roast", "TURKEY: roast"),
    ];
    for (input, expected) in cases {
        assert_eq!(scrub_secrets(input), expected, "{input}");
    }
    let google_36 = format!("AIza{}", "B".repeat(36));
    assert_eq!(scrub_secrets(&google_36), google_36);
    let google_35 = format!("AIza{}", "B".repeat(35));
    assert_eq!(scrub_secrets(&google_35), REDACTED);
}

#[test]
fn pem_blocks_pair_opener_with_next_closer() {
    let text = "a -----BEGIN PRIVATE KEY-----\nAAA\n-----END PRIVATE KEY----- b \
                -----BEGIN EC PRIVATE KEY-----\nBBB\n-----END EC PRIVATE KEY----- c";
    assert_eq!(scrub_secrets(text), "a [REDACTED] b [REDACTED] c");
}

#[test]
fn truncated_pem_masks_the_key_body_and_keeps_what_follows() {
    let text = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nq1w2e3r4\n\nNext paragraph.";
    assert_eq!(scrub_secrets(text), "[REDACTED]Next paragraph.");
}

#[test]
fn assignments_keep_the_key_and_mask_the_value() {
    assert_eq!(
        scrub_secrets("password: hunter2fake"),
        "password: [REDACTED]"
    );
    assert_eq!(
        scrub_secrets(r#"{"client_secret": "abc123def"}"#),
        r#"{"client_secret": "[REDACTED]"}"#
    );
    assert_eq!(
        scrub_secrets("postgres://app:pw1234@db/x"),
        "postgres://[REDACTED]@db/x"
    );
}

#[test]
fn scrubbing_the_corpus_twice_changes_nothing_more() {
    for sample in secret_samples(1) {
        let once = scrub_secrets(&sample.text);
        assert_eq!(scrub_secrets(&once), once, "{}", sample.kind);
    }
}

#[test]
fn entirely_redacted_means_only_sentinels_and_whitespace() {
    assert!(is_entirely_redacted("[REDACTED]"));
    assert!(is_entirely_redacted(" [REDACTED]\n[REDACTED] "));
    assert!(!is_entirely_redacted("key [REDACTED]"));
    assert!(!is_entirely_redacted("   "));
    assert!(!is_entirely_redacted(""));
    assert!(is_entirely_redacted(&scrub_secrets(
        "sk-abcdefghijklmnopqrstuv"
    )));
}

#[test]
fn json_keys_that_name_secrets_lose_their_whole_value() {
    let args = json!({
        "apiKey": "sk-abcdef1234567890",
        "note": "authorize with Bearer abcdefghijklmno",
        "n": 5,
        "nested": {"token": "secretvalue", "authorization": {"kind": "Basic abc"}},
        "list": ["plain", "sk-zzzzzzzzzzzz"],
        "inputTokens": 12,
        "totalTokens": 34,
        "author": "me",
        "accessToken": "x"
    });
    assert_eq!(
        scrub_json(&args),
        json!({
            "apiKey": REDACTED,
            "note": "authorize with [REDACTED]",
            "n": 5,
            "nested": {"token": REDACTED, "authorization": REDACTED},
            "list": ["plain", REDACTED],
            "inputTokens": 12,
            "totalTokens": 34,
            "author": "me",
            "accessToken": REDACTED
        })
    );
}

/// Random text over an alphabet weighted towards what the rules look for (prefixes, separators,
/// quotes, key names, PEM markers) plus arbitrary Unicode scalars.
fn random_text(rng: &mut Rng) -> String {
    const FRAGMENTS: &[&str] = &[
        "a",
        "Z",
        "0",
        "9",
        "-",
        "_",
        "=",
        ":",
        "'",
        "\"",
        " ",
        "\n",
        "\t",
        ".",
        "@",
        "/",
        "+",
        "\\",
        "sk-",
        "ghp_",
        "AKIA",
        "eyJ",
        "Bearer ",
        "Basic ",
        "-----BEGIN PRIVATE KEY-----",
        "-----END PRIVATE KEY-----",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----",
        "password",
        "PASSWORD",
        "token",
        "api_key",
        "secret",
        "Authorization: ",
        "Cookie: ",
        "://",
        "user:",
        "curl -u ",
        "sshpass -p ",
        "machine ",
        " login ",
        " password ",
        "value: ",
        "<password>",
        "${",
        "***",
        "xxxx",
        "[REDACTED]",
        "Q~",
        ":AA",
        "==",
        "0x",
        "mnemonic ",
        "é",
        "🚀",
        "\u{0}",
        "\u{202e}",
    ];
    let len = rng.below(60);
    let mut text = String::new();
    for _ in 0..len {
        if rng.below(4) == 0 {
            let scalar = (rng.next_u64() % 0x11_0000) as u32;
            text.push(char::from_u32(scalar).unwrap_or('\u{fffd}'));
        } else {
            text.push_str(FRAGMENTS[rng.below(FRAGMENTS.len())]);
        }
    }
    text
}

#[test]
fn scrubbing_arbitrary_unicode_never_panics_and_is_idempotent() {
    let mut rng = Rng::new(0x1DE4_7071);
    for case in 0..4000 {
        let text = random_text(&mut rng);
        let once = scrub_secrets(&text);
        assert_eq!(
            scrub_secrets(&once),
            once,
            "case {case}: not idempotent on {text:?}"
        );
    }
}

#[test]
fn a_secret_inside_arbitrary_text_is_still_masked() {
    let mut rng = Rng::new(0xA11_5EC);
    for _ in 0..500 {
        let token = format!("ghp_{}", generate("an", 36, &mut rng));
        let text = format!(
            "{} {token} {}",
            random_text(&mut rng),
            random_text(&mut rng)
        );
        let out = scrub_secrets(&text);
        assert!(!out.contains(&token[4..]), "{text:?} -> {out:?}");
    }
}

#[test]
fn a_key_inside_a_value_that_was_not_masked_is_still_read() {
    // Assembled at run time, so no token-shaped literal sits in the source.
    let key_id = format!("{}{}", "AKIA", "Z2Q7XK4M3N5P6R7S");
    let sigv4 = format!(
        "Authorization: AWS4-HMAC-SHA256 Credential={key_id}/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature={}",
        "9f2c4e6a8b0d1f3e5a7c9e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f1a3c5e7b9d0f"
    );
    let out = scrub_secrets(&sigv4);
    assert!(
        !out.contains(&key_id[4..]) && !out.contains("9f2c4e6a8b0d"),
        "{out}"
    );
    let appsettings = r#"<add key="ApiSecret" value="q8Zt2LmR0vXw4NcB7yHa1KpD" />"#;
    assert_eq!(
        scrub_secrets(appsettings),
        r#"<add key="ApiSecret" value="[REDACTED]" />"#
    );
}

#[test]
fn base64_that_starts_with_a_slash_is_not_a_path() {
    assert_eq!(
        scrub_secrets("password: /1ofQqKuSQ+pdCbxanG63SVz"),
        "password: [REDACTED]"
    );
    assert_eq!(
        scrub_secrets("ssh_key: ~/.ssh/id_ed25519"),
        "ssh_key: ~/.ssh/id_ed25519"
    );
}
