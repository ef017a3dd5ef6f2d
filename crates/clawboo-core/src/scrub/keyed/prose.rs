//! The context rule: a secret-ish name with no separator, in prose ("the private key is 0x…",
//! "password for admin: …"), masks the first word after it that looks like a credential, within
//! a few words on the same line.
//!
//! Guarantees: looks at most 120 bytes and seven words past the name, never past the line's end;
//! a qualifier ("token budget") or a word that is not a credential ends the search. Must never:
//! mask a prose word, a path, a URL, an address or a reference.

use super::Scan;
use super::names::{Strength, is_qualifier};
use crate::scrub::value::{
    floor_boundary, is_code_reference, is_placeholder, is_uuid, is_word_chain, looks_random,
};

impl Scan<'_> {
    /// Prose after a key name with no separator ("the private key is 0x…", "password for admin:
    /// …"): the first word that looks like a credential within five words on the same line.
    pub(super) fn prose_value(&mut self, from: usize, strength: Strength) -> Option<usize> {
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
                if is_qualifier(&lower) {
                    return None;
                }
                may_follow = CONNECTORS.contains(&lower.as_str()) || raw.ends_with(':');
                continue;
            }
            if !may_follow
                || word.contains(crate::scrub::REDACTED)
                || !prose_candidate(word, strength)
            {
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
        || word.starts_with(['/', '.'])
        || word.starts_with('-') && (word.starts_with("--") || !looks_random(word, 20))
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
