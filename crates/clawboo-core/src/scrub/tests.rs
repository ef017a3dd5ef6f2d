use super::*;
use serde_json::json;

/// The corpus of fake secrets: `(kind, text with the secret, the secret)`.
fn secret_corpus() -> Vec<(String, String, String)> {
    include_str!("corpus/secrets.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let (kind, text) = line.split_once(" | ").expect("`kind | text`");
            let text = text.replace("\\n", "\n");
            let start = text.find('«').expect("a « marker");
            let end = text.find('»').expect("a » marker");
            let secret = text[start + '«'.len_utf8()..end].to_owned();
            (kind.to_owned(), text.replace(['«', '»'], ""), secret)
        })
        .collect()
}

#[test]
fn every_secret_in_the_corpus_is_redacted() {
    let corpus = secret_corpus();
    assert!(corpus.len() >= 30, "the corpus lost entries");
    for (kind, text, secret) in corpus {
        let scrubbed = scrub_secrets(&text);
        let secret_core: String = secret.lines().last().unwrap_or("").to_owned();
        assert!(
            !scrubbed.contains(&secret_core),
            "{kind}: secret survived in {scrubbed:?}"
        );
        assert!(
            scrubbed.contains(REDACTED),
            "{kind}: no sentinel in {scrubbed:?}"
        );
    }
}

#[test]
fn every_benign_line_in_the_corpus_is_unchanged() {
    let lines: Vec<&str> = include_str!("corpus/benign.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    assert!(lines.len() >= 20, "the corpus lost entries");
    for line in lines {
        assert_eq!(scrub_secrets(line), line);
    }
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
        ("TURKEY: roast", "[REDACTED]"),
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
fn scrubbing_is_idempotent() {
    for (_, text, _) in secret_corpus() {
        let once = scrub_secrets(&text);
        assert_eq!(scrub_secrets(&once), once);
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

#[test]
fn arbitrary_bytes_never_panic_and_never_grow_secrets() {
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let alphabet: Vec<char> =
        "aZ09-_=:'\" \n.@/+sk-ghp_AKIAeyJBearer-----BEGIN PRIVATE KEY-----é🚀"
            .chars()
            .collect();
    for _ in 0..2000 {
        let len = (seed % 120) as usize;
        let text: String = (0..len)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                alphabet[(seed % alphabet.len() as u64) as usize]
            })
            .collect();
        let once = scrub_secrets(&text);
        assert_eq!(scrub_secrets(&once), once, "not idempotent on {text:?}");
    }
}
