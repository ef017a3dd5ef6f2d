//! **Held-out** figure of the secret scrubber (issue 24): every line of
//! `clawboo_tests::heldout::scrub`'s corpus (whole config files of real tools, values generated
//! fresh) goes through `clawboo_core::internal::scrub::scrub_secrets` one line at a time.
//!
//! The goal, on this corpus as on the scrubber's own: at least 99% of secret lines masked (no run
//! of 8 generated characters of the secret survives) and at most 1% of benign look-alikes changed
//! (a look-alike must come back byte-identical). The scrubber is never tuned on this corpus: when
//! this test fails, fix the scrubber from its own corpus and its own reasoning, not from these
//! lines. It prints the figures and the failing lines' format names, never a value.

use std::collections::BTreeMap;

use clawboo_core::internal::scrub::scrub_secrets;
use clawboo_tests::heldout::scrub::{Label, SEED, corpus};

/// What is goal-worthy, as fractions.
const MIN_MASKED: f64 = 0.99;
const MAX_CHANGED: f64 = 0.01;

fn tally(counts: &BTreeMap<&str, usize>) -> String {
    let mut rows: Vec<(&&str, &usize)> = counts.iter().collect();
    rows.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    rows.iter()
        .map(|(format, n)| format!("{format} x{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
#[ignore = "the held-out goal is not met yet (issue 24 stays open): run with --ignored to print the figures"]
fn held_out_scrub_corpus_meets_the_goals() {
    let lines = corpus(SEED);
    let (mut secrets, mut masked, mut looks, mut changed, mut plain, mut plain_changed) =
        (0, 0, 0, 0, 0, 0);
    let mut missed: BTreeMap<&str, usize> = BTreeMap::new();
    let mut touched: BTreeMap<&str, usize> = BTreeMap::new();
    let mut plain_touched: BTreeMap<&str, usize> = BTreeMap::new();
    let mut secret_formats: BTreeMap<&str, usize> = BTreeMap::new();
    for line in &lines {
        let scrubbed = scrub_secrets(&line.text);
        match &line.label {
            Label::Secret(secret) => {
                secrets += 1;
                *secret_formats.entry(line.format).or_default() += 1;
                if secret.survives_in(&scrubbed) {
                    *missed.entry(line.format).or_default() += 1;
                } else {
                    masked += 1;
                }
            }
            Label::LookAlike => {
                looks += 1;
                if scrubbed != line.text {
                    changed += 1;
                    *touched.entry(line.format).or_default() += 1;
                }
            }
            Label::Plain => {
                plain += 1;
                if scrubbed != line.text {
                    plain_changed += 1;
                    *plain_touched.entry(line.format).or_default() += 1;
                }
            }
        }
    }
    let masked_share = masked as f64 / secrets as f64;
    let changed_share = changed as f64 / looks as f64;
    println!(
        "held-out scrub corpus: {secrets} secret lines, {:.2}% masked; {looks} benign lines, {:.2}% changed",
        100.0 * masked_share,
        100.0 * changed_share
    );
    println!(
        "  ({} secret formats; {plain} structure/plain/debatable lines, {plain_changed} changed, not in the goal: {})",
        secret_formats.len(),
        tally(&plain_touched)
    );
    println!("  secret lines not masked, by format: {}", tally(&missed));
    println!("  benign lines changed, by format: {}", tally(&touched));
    assert!(
        masked_share >= MIN_MASKED && changed_share <= MAX_CHANGED,
        "held-out goal missed: {:.2}% masked (goal >= 99%), {:.2}% of benign look-alikes changed (goal <= 1%)",
        100.0 * masked_share,
        100.0 * changed_share
    );
}
