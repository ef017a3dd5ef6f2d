//! The scrubber's rows of `cargo xtask bench`: throughput of `scrub::scrub_secrets` in MB/s on
//! mixed text (prose, code, config, logs, with a fake credential on about one line in fifty), and
//! on pathological inputs built to make a careless scrubber quadratic (unclosed quotes, plain or
//! escaped, after key names; PEM openers with no closer; one enormous token; endless `key=key=…`;
//! URL user-info with no `@`; a name made of nothing but keywords). Each pathological input is
//! timed at two sizes; the last row is the worst time ratio for four times the input (about 4 when
//! linear, 16 when quadratic).
//!
//! The scrubber runs in this process, so the figures are only meaningful in an optimised build,
//! which `bench` runs in; a smoke run (`--quick`) in a debug build says so in the row names. Each
//! figure is the best of its runs (the least disturbed by other load on the machine).
//!
//! Must never: assert on a time (a benchmark reports, tests decide); use a real credential (the
//! fake ones are made from the test PRNG).

use std::hint::black_box;
use std::time::Instant;

use clawboo_core::internal::scrub::scrub_secrets;
use clawboo_tests::Rng;

/// One row: its name, its unit, its value.
pub type ScrubRow = (String, &'static str, f64);

/// The scrubber rows. `bench` runs them in a release build of xtask (`ran_optimised`); a smoke run
/// (`--quick`) may measure in a debug build, and the row names then say so.
pub fn rows(quick: bool) -> Vec<ScrubRow> {
    let rows = measure(quick).into_iter();
    if cfg!(debug_assertions) {
        rows.map(|(name, unit, v)| (format!("{name} (debug build)"), unit, v))
            .collect()
    } else {
        rows.collect()
    }
}

fn measure(quick: bool) -> Vec<ScrubRow> {
    let (mixed_mb, worst_mb, runs) = if quick { (1, 1, 3) } else { (8, 4, 5) };
    let mut rows = Vec::new();
    let mixed = mixed_text(mixed_mb << 20);
    rows.push((
        format!("scrub mixed text, {mixed_mb} MB"),
        "MB/s",
        throughput(&mixed, runs),
    ));
    let mut worst_ratio: f64 = 0.0;
    for (name, unit) in PATHOLOGICAL {
        let small = repeat_to(unit, (worst_mb << 20) / 4);
        let large = repeat_to(unit, worst_mb << 20);
        let small_secs = best_secs(&small, runs);
        let large_secs = best_secs(&large, runs);
        worst_ratio = worst_ratio.max(large_secs / small_secs);
        rows.push((
            format!("scrub worst case: {name}, {worst_mb} MB"),
            "MB/s",
            large.len() as f64 / large_secs / 1e6,
        ));
    }
    rows.push((
        "scrub worst case: time for 4x the input".to_owned(),
        "x",
        worst_ratio,
    ));
    rows
}

/// Inputs meant to make a scrubber quadratic: `(name, the unit repeated to the size)`.
const PATHOLOGICAL: &[(&str, &str)] = &[
    (
        "unclosed quotes after key names",
        "password=\"x api_key: 'y ",
    ),
    ("unclosed escaped quotes", "\\\"password\\\":\\\"x "),
    (
        "PEM openers with no closer",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n",
    ),
    ("one endless token", "A"),
    ("key=key=… with no value", "key=token="),
    ("URL user-info with no @", "https://user:pass"),
    ("keyword soup", "passtokenkeysecretauthsig"),
];

fn repeat_to(unit: &str, bytes: usize) -> String {
    let body = unit.repeat(bytes / unit.len() + 1);
    // A valid prefix for the one-token case (`AKIA` then `A`s), harmless for the others.
    format!("AKIA{}", &body[..bytes])
}

/// The best time of `runs` scrubs of `text`, in seconds.
fn best_secs(text: &str, runs: usize) -> f64 {
    (0..runs)
        .map(|_| {
            let started = Instant::now();
            black_box(scrub_secrets(black_box(text)));
            started.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn throughput(text: &str, runs: usize) -> f64 {
    text.len() as f64 / best_secs(text, runs) / 1e6
}

/// About `bytes` of mixed text, deterministic: prose, code, YAML, JSON, log lines, with a fake
/// credential on about one line in fifty.
fn mixed_text(bytes: usize) -> String {
    const LINES: &[&str] = &[
        "The deployment finished in 42 s; the rollout reached every region without errors.",
        "fn handle(req: Request, token: &str) -> Result<Response, Error> { todo_list(req) }",
        "database:\n  host: db.internal\n  port: 5432\n  pool: 20",
        "{\"id\": \"3f2b8c1e-9d4a-4e6b-8f1a-2c3d4e5f6a7b\", \"status\": \"done\", \"tokens\": 512}",
        "2026-01-01T00:00:00Z INFO request_id=7c9e6679 path=/v1/items status=200 took=12ms",
        "Fixed in commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904; see the changelog.",
        "Remember to rotate the API key every 90 days and keep the password policy strict.",
        "SECRET_KEY = env(\"DJANGO_SECRET_KEY\")  # read from the environment",
        "Émile a vérifié la clé publique ; 東京 のサーバー は 正常 です 🚀",
        "<div class=\"card\"><a href=\"https://example.com/docs?page=2\">next</a></div>",
    ];
    let mut rng = Rng::new(0x5C2B);
    let mut out = String::with_capacity(bytes + 256);
    while out.len() < bytes {
        if rng.below(50) == 0 {
            let secret: String = (0..36)
                .map(|_| {
                    let alphabet =
                        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
                    alphabet[rng.below(alphabet.len())] as char
                })
                .collect();
            out.push_str(&format!(
                "export GITHUB_TOKEN=ghp_{secret}\npassword: {}\n",
                &secret[..14]
            ));
        } else {
            out.push_str(LINES[rng.below(LINES.len())]);
            out.push('\n');
        }
    }
    out
}
