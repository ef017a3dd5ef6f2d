//! The keyed rules: a value is a secret because of the name in front of it. One left-to-right scan
//! finds every secret-ish key name (`password`, `client_secret`, `apiKey`, `X-API-Key`,
//! `--token`, `<password>`, `AccountKey`, `Authorization`, `Cookie`, `bindpw`, `psk`, …) in any
//! casing and any config syntax (`.env`, YAML, JSON and escaped JSON, TOML, INI, properties,
//! shell, XML elements and attributes, HCL, `name: X / value: Y` pairs, calls and typed
//! declarations in code, CLI flags, HTTP headers, space-separated settings such as `.netrc`'s
//! `password` and redis.conf's `requirepass`), reads the value after its separator, and masks
//! it when it is a literal. With no separator (prose: "the private key is 0x…"), the context rule masks the first
//! high-entropy word that follows within a few words.
//!
//! Guarantees:
//! - the value is masked, the key and quotes stay (`password: [REDACTED]`); an all-caps env name
//!   ending in KEY/TOKEN/SECRET/PASSWORD is masked whole with its value, as the reference does
//!   (`DB_PASSWORD: x` ⇒ `[REDACTED]`), unless the name is quoted or is a call's argument;
//! - left alone: placeholders (`<YOUR_KEY>`, `${VAR}`, `your-api-key-here`, `***`), references to
//!   another name (`env("DJANGO_SECRET_KEY")`, `os.environ["X"]`, `self.token`, `$TOKEN`), types
//!   (`token: string`, `password: &str`), names qualified into something public (`key_id`,
//!   `page_token`, `max_tokens`, `public_key`, `secret_name`), and keys inside URLs, paths and ARNs
//!   (`arn:…:secret:prod/db`);
//! - linear: each key name is read once; the scan resumes after a masked value or a long one
//!   (and inside a short unmasked one, which may hold the next key); a secret word is looked for
//!   at most 40 letters around a hit; a quote with no partner on its line is remembered, so it is
//!   never searched for twice; every look past a key for its separator is bounded ([`sep`]).
//!
//! Must never: mask a key name of lowercase or mixed case (readers need to see which setting
//! was masked); look further than the current line for a prose value.
//!
//! This module owns the scan (finding key names, their separators, and where their values start);
//! beside it: [`names`] (which names are secret, and how strongly), [`sep`] (how a value is
//! introduced), [`lex`] (reading a value),
//! [`verdict`] (whether a value is a literal secret), [`wire`] (`Authorization` and `Cookie`
//! headers), [`prose`] (the context rule).

mod lex;
mod names;
mod prose;
mod sep;
mod verdict;
mod wire;

use std::sync::LazyLock;

use regex::Regex;

use self::lex::{element_text_end, line_word_end};
use self::names::{Strength, classify, is_ident, is_upper_env, secret_word_at};
use self::sep::Sep;
use self::verdict::value_is_secret;

pub(crate) use self::names::{names_a_secret, names_something_public};

/// A value longer than this is never read twice: the scan resumes after it even when it was not
/// masked (shorter ones are scanned inside, for the keys they may hold).
const LONG_VALUE: usize = 256;

/// Where a key name's value needs to be masked: byte ranges of the text.
pub(crate) type Spans = Vec<(usize, usize)>;

static KEYWORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)pass|pw|secret|token|key|auth|cred|sig|cookie|dsn|salt|pat|psk|encrypt")
        .expect("the keyword pattern compiles")
});

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
        if key.is_empty() || self.inside_url_or_path(start, key_end) {
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
        // An all-caps env name is masked with its value (the reference's env rule); a quoted one
        // (a JSON or YAML key) keeps its name, so the document stays well-formed.
        let quoted_key = key_start > 0 && matches!(b[key_start - 1], b'"' | b'\'' | b'`')
            || matches!(b.get(key_end), Some(b'"' | b'\'' | b'`' | b'\\'));
        let upper_env = is_upper_env(key) && !quoted_key;
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

    /// Whether the key name `[start, end)` is part of a URL, a path, an ARN or a Windows path.
    fn inside_url_or_path(&self, start: usize, end: usize) -> bool {
        let Some(&prev) = start.checked_sub(1).and_then(|i| self.bytes.get(i)) else {
            return false;
        };
        match prev {
            b'/' | b'@' | b'\\' | b'#' | b'~' => true,
            b':' => {
                let before = start.checked_sub(2).map(|i| self.bytes[i]);
                // `<ns:password>` or `<ns:password attr="…">` is markup.
                let tag = matches!(self.bytes.get(end), Some(b'>' | b' ' | b'\t'))
                    && self.after_tag_prefix(start - 1);
                before.is_some_and(|c| c.is_ascii_alphanumeric())
                    && !self.text[..start].ends_with("env:")
                    && !tag
            }
            _ => false,
        }
    }

    /// Whether the colon at `colon` ends a markup namespace prefix (`<con:` in `<con:password>`).
    fn after_tag_prefix(&self, colon: usize) -> bool {
        let head = &self.bytes[colon.saturating_sub(33)..colon];
        let name_len = head
            .iter()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_'))
            .count();
        name_len > 0 && name_len < head.len() && head[head.len() - name_len - 1] == b'<'
    }

    /// Whether the key name at `key_start` opens its line: only blanks before it, or a list
    /// dash or a shell word that declares a variable (`- `, `export `, `set `).
    fn starts_line(&self, key_start: usize) -> bool {
        // Looks back at most 40 bytes, so a long line costs no more per key.
        let from = key_start.saturating_sub(41);
        let line_start = match self.bytes[from..key_start]
            .iter()
            .rposition(|&c| c == b'\n')
        {
            Some(i) => from + i + 1,
            None if from == 0 => 0,
            None => return false,
        };
        let head = self.text[line_start..key_start].trim();
        matches!(
            head,
            "" | "-" | "export" | "set" | "setenv" | "readonly" | "declare" | "local"
        )
    }

    /// Whether the bare value `[start, end)` is a name called or indexed (`getpass()`,
    /// `argv[1]`): a name, then `(` or `[`.
    fn calls_or_indexes(&self, start: usize, end: usize) -> bool {
        matches!(self.bytes.get(end), Some(b'(' | b'['))
            && self.bytes[start..end]
                .iter()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'$' | b':'))
    }

    /// `<![CDATA[…]]>` at `at` after a markup separator: its content, on one line and within
    /// [`LONG_VALUE`] bytes.
    fn cdata(&self, at: usize, sep: Sep) -> Option<(usize, usize, bool)> {
        const OPEN: &[u8] = b"<![CDATA[";
        if sep != Sep::Element || !self.bytes[at..].starts_with(OPEN) {
            return None;
        }
        let start = at + OPEN.len();
        let window = &self.bytes[start..self.bytes.len().min(start + LONG_VALUE)];
        let end = window
            .windows(3)
            .take_while(|w| w[0] != b'\n')
            .position(|w| w == b"]]>")?;
        Some((start, start + end, true))
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
        let (start, mut end, quoted) = match self.cdata(at, sep) {
            Some(inside) => inside,
            None => self.read_value(at)?,
        };
        if sep == Sep::Element && !quoted {
            // An element's text runs to its closing tag (`<password>two words</password>`).
            end = element_text_end(self.bytes, start);
        } else if !quoted
            && end > start
            && sep.masks_env_name()
            && !self.calls_or_indexes(start, end)
            && self.starts_line(key_start)
        {
            // A setting on a line of its own (`.env`, INI, properties, YAML) runs to the next
            // blank, whatever it holds (`password = Ab1;x&y|z`).
            end = line_word_end(self.bytes, end);
        }
        let value = &self.text[start..end];
        let after = end + usize::from(quoted);
        let next = self.bytes.get(after).copied();
        let glued = at > 0 && self.bytes[at - 1] == b':';
        if !value_is_secret(key, value, glued, quoted, next, sep, strength, upper_env) {
            // A short value may hold the next key (`key="ApiSecret" value="…"`), so the scan
            // goes on inside it; a long one is skipped, so no long value is read twice.
            return (end - start > LONG_VALUE).then_some(after);
        }
        if upper_env && sep.masks_env_name() {
            self.spans.push((key_start, after));
        } else {
            self.spans.push((start, end));
        }
        Some(after)
    }
}
