//! The shape rules: credentials recognisable by their own form, wherever they stand. Provider
//! tokens with a documented prefix, length and alphabet (GitHub, GitLab, Slack, Stripe, AWS, Google,
//! Azure, DigitalOcean, Docker Hub, npm, PyPI, Shopify, SendGrid, Hugging Face, Databricks, …),
//! prefix-less shapes with a distinctive inner mark (Telegram bot tokens, Azure AD client secrets,
//! Azure storage keys), structured tokens told by their structure (a JWS/JWE whose header
//! decodes to JSON with `alg`, dotted base64url tokens with random ends, PASETO, macaroons, NATS
//! seeds, the private members of a JWK, base64 of JSON that holds credentials), URL user-info and
//! scheme-less DSNs (Oracle, Go's MySQL driver, Samba's `user%pass`), CLI flags and statements that
//! carry a password (`curl -u`, `sshpass -p`, `mysql -p…`, `IDENTIFIED BY`,
//! `ConvertTo-SecureString`), `.netrc`, `.pgpass` and Postfix `sasl_passwd` lines, crypt and
//! `{SSHA}`-style hashes.
//!
//! This module is the engine (compiling the rules once, running them in order, the byte set that
//! spares searches); the rules live beside it: [`prefixed`] (provider tokens by prefix) and
//! [`shapes`] (everything else, with their checks).
//!
//! Guarantees: every rule is a `regex` (linear time) over the whole text, and each match passes one
//! validator before it is masked: a placeholder (`xxxx`, `...`, `your-…-here`) or a lowercase word
//! chain (`sk-learn-pipelines`) is left alone. Most rules mask the whole match; the ones with a
//! context (`curl -u user:`, `machine … password`) mask only the secret group.
//!
//! Must never: hold a real credential (the patterns describe formats; the test corpus makes fresh
//! fake values); use an unbounded look-back (no `.*` before a secret).

mod prefixed;
mod shapes;

use std::sync::LazyLock;

use regex::{Captures, Regex};

use self::prefixed::PREFIXED;
use self::shapes::OTHER;
use super::REDACTED;
use super::value::{has_placeholder_marks, is_word_chain};

/// One rule beyond the prefixed ones: a regex, which capture group is the secret (0 = all), and
/// the literals one of which the text must contain before the regex runs.
struct Rule {
    regex: Regex,
    group: usize,
    needs: &'static [&'static str],
    check: fn(&str) -> bool,
}

/// The check of a rule with no context: the match is not a placeholder or a name.
fn real(token: &str) -> bool {
    token_is_real(token)
}

/// Every `\\b` of a pattern becomes an ASCII word boundary (`(?-u:\\b)`), as in the reference.
fn expand(pattern: &str) -> String {
    pattern.replace(r"\b", r"(?-u:\b)")
}

struct Compiled {
    prefixed: Regex,
    other: Vec<Rule>,
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
    let joined = PREFIXED
        .iter()
        .map(|(_, p)| format!("(?:{})", expand(p)))
        .collect::<Vec<_>>()
        .join("|");
    Compiled {
        prefixed: regex::RegexBuilder::new(&joined)
            .size_limit(64 << 20)
            .dfa_size_limit(16 << 20)
            .build()
            .expect("the prefixed token rules compile"),
        other: OTHER
            .iter()
            .map(|spec| Rule {
                regex: Regex::new(&expand(spec.pattern)).expect("a shape rule compiles"),
                group: spec.group,
                needs: spec.needs,
                check: spec.check,
            })
            .collect(),
    }
});

/// The bytes that occur in a text or in the sentinel (masking brings no other new text, so the
/// set of the text to scrub holds for every pass over it): a literal with a byte outside the set
/// is absent without a search, and the rules that need it cost nothing on text that cannot hold
/// their secret.
pub(crate) struct ByteSet([bool; 256]);

impl ByteSet {
    /// The bytes of `text` and of [`REDACTED`].
    pub(crate) fn of(text: &str) -> Self {
        let mut seen = [false; 256];
        let chunks = text.as_bytes().chunks_exact(8);
        let rest = chunks.remainder();
        for chunk in chunks {
            for &b in chunk {
                seen[usize::from(b)] = true;
            }
        }
        for &b in rest.iter().chain(REDACTED.as_bytes()) {
            seen[usize::from(b)] = true;
        }
        Self(seen)
    }

    /// Whether every byte of `literal` is in the set.
    fn may_hold(&self, literal: &str) -> bool {
        literal.bytes().all(|b| self.0[usize::from(b)])
    }
}

/// Masks every shape-rule match in `text`, whose bytes are in `bytes`; returns `None` when
/// nothing changed.
pub(crate) fn apply(text: &str, bytes: &ByteSet) -> Option<String> {
    let compiled = &*COMPILED;
    let mut out: Option<String> = None;
    let mut replace = |regex: &Regex, group: usize, check: fn(&str) -> bool, needs: &[&str]| {
        let current = out.as_deref().unwrap_or(text);
        let found = |n: &&str| bytes.may_hold(n) && current.contains(n);
        if !needs.is_empty() && !needs.iter().any(found) {
            return;
        }
        let replaced = regex.replace_all(current, |c: &Captures| {
            let whole = c.get(0).expect("group 0");
            let Some(secret) = c.get(group) else {
                return whole.as_str().to_owned();
            };
            if secret.as_str().contains(REDACTED) || !check(secret.as_str()) {
                return whole.as_str().to_owned();
            }
            let s = whole.as_str();
            let (from, to) = (secret.start() - whole.start(), secret.end() - whole.start());
            format!("{}{REDACTED}{}", &s[..from], &s[to..])
        });
        if let std::borrow::Cow::Owned(s) = replaced {
            out = Some(s);
        }
    };
    replace(&compiled.prefixed, 0, real, &[]);
    for rule in &compiled.other {
        replace(&rule.regex, rule.group, rule.check, rule.needs);
    }
    out
}

/// A token-shaped match that is really a placeholder or a name is left alone.
fn token_is_real(token: &str) -> bool {
    let t = token.trim_matches(['\'', '"']);
    if t.contains(REDACTED) {
        return false;
    }
    let body = t.split_whitespace().last().unwrap_or(t);
    !is_word_chain(body) && !has_placeholder_marks(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_kinds_are_unique() {
        let mut kinds: Vec<&str> = PREFIXED.iter().map(|(k, _)| *k).collect();
        kinds.extend(OTHER.iter().map(|s| s.kind));
        let count = kinds.len();
        kinds.sort_unstable();
        kinds.dedup();
        assert_eq!(kinds.len(), count);
    }

    #[test]
    fn every_rule_compiles_with_ascii_word_boundaries() {
        assert!(!COMPILED.other.is_empty());
        assert_eq!(
            expand(r"\bnpm_[a-z]{36}\b"),
            r"(?-u:\b)npm_[a-z]{36}(?-u:\b)"
        );
    }
}
