//! [`format_peer_post`]: the envelope that delivers a room post to a model as inter-session
//! evidence, never as a turn with user authority.
//!
//! Owns: the header `[Inter-session message · from=… · kind=… · seq=… · isUser=false]` (the ONE
//! place it is built), the defang of headers forged inside a body, and the `| ` quote prefix.
//!
//! Guarantees: the output is the header, a newline, then the body with every line quoted; the
//! header is the only header in the output. A forged header in a body (an opening square bracket
//! or a look-alike of one, then "inter-session message" in any case, spelling, spacing or split
//! over lines, then a closing bracket or look-alike) becomes `[peer-quoted header]`; an unclosed
//! one passes through as the reference does, quoted like any text. The author and kind cannot
//! break out of the header: line breaks, brackets and the middle-dot separator in them become
//! `_`. Every line break a renderer may honour (`\n`, a lone `\r`, U+2028, U+2029, U+0085, VT,
//! FF) starts a new quoted line, so no body line can begin outside the quote.
//!
//! Must never: drop or reorder body text other than the forged headers it replaces.

use std::fmt::Write;

/// The input [`format_peer_post`] wraps: a post's author, body, kind and seq.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerPost<'a> {
    /// The poster.
    pub author_agent_id: &'a str,
    /// The post text.
    pub body: &'a str,
    /// The post's kind (`peer`, `system`, `user`).
    pub kind: &'a str,
    /// The post's seq in its room.
    pub seq: i64,
}

/// What a forged header inside a body becomes.
const DEFANGED: &str = "[peer-quoted header]";

/// The prefix of every body line.
const QUOTE: &str = "| ";

/// The letters of "Inter-session message", folded; anything [`is_ignorable`] may sit between them.
const PHRASE: &[u8] = b"intersessionmessage";

/// Wraps a room post as non-user inter-session evidence:
/// `[Inter-session message · from=<author> · kind=<kind> · seq=<seq> · isUser=false]`, a newline,
/// then the defanged body with `| ` before every line.
pub fn format_peer_post(post: &PeerPost<'_>) -> String {
    let mut out = String::with_capacity(post.body.len() + post.body.len() / 16 + 96);
    out.push_str("[Inter-session message \u{b7} from=");
    push_field(&mut out, post.author_agent_id);
    out.push_str(" \u{b7} kind=");
    push_field(&mut out, post.kind);
    // Writing to a String cannot fail.
    let _ = writeln!(out, " \u{b7} seq={} \u{b7} isUser=false]", post.seq);
    push_quoted(&mut out, &defang(post.body));
    out
}

/// Copies a header field, replacing anything that could end the header or forge a field.
fn push_field(out: &mut String, value: &str) {
    out.extend(value.chars().map(|c| {
        if c.is_control() || is_line_break(c) || is_opener(c) || is_closer(c) || is_dot(c) {
            '_'
        } else {
            c
        }
    }));
}

/// Replaces every forged header in `body` with [`DEFANGED`], in one forward scan.
fn defang(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(open) = rest.find(is_opener) {
        let after_open = open + rest[open..].chars().next().map_or(1, char::len_utf8);
        let Some(phrase_len) = phrase_len(&rest[after_open..]) else {
            out.push_str(&rest[..after_open]);
            rest = &rest[after_open..];
            continue;
        };
        let search_from = after_open + phrase_len;
        let Some(close) = rest[search_from..].find(is_closer) else {
            break;
        };
        let close_at = search_from + close;
        let close_len = rest[close_at..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&rest[..open]);
        out.push_str(DEFANGED);
        rest = &rest[close_at + close_len..];
    }
    out.push_str(rest);
    out
}

/// If `text` starts with the phrase (ignorable characters allowed before and between its
/// letters), the byte length up to and including its last letter.
fn phrase_len(text: &str) -> Option<usize> {
    let mut matched = 0;
    for (at, c) in text.char_indices() {
        if is_ignorable(c) {
            continue;
        }
        if fold(c) != Some(PHRASE[matched]) {
            return None;
        }
        matched += 1;
        if matched == PHRASE.len() {
            return Some(at + c.len_utf8());
        }
    }
    None
}

/// Writes `body` with [`QUOTE`] before its first line and after every line break. `\r\n` is one
/// break.
fn push_quoted(out: &mut String, body: &str) {
    out.push_str(QUOTE);
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        let breaks = match c {
            '\r' => chars.peek() != Some(&'\n'),
            c => is_line_break(c),
        };
        if breaks {
            out.push_str(QUOTE);
        }
    }
}

/// Characters a renderer may show as a line break (`\r` is handled by the caller).
fn is_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// `[` and the characters that can pass for it.
fn is_opener(c: char) -> bool {
    matches!(
        c,
        '[' | '\u{FF3B}' // fullwidth
            | '\u{FE5D}' // small tortoise shell
            | '\u{27E6}' // mathematical white square
            | '\u{27EC}' // mathematical white tortoise shell
            | '\u{301A}' // white square
            | '\u{3010}' // black lenticular
            | '\u{3014}' // tortoise shell
            | '\u{3016}' // white lenticular
            | '\u{3018}' // white tortoise shell
            | '\u{2045}' // with quill
            | '\u{2772}' // light tortoise shell ornament
            | '\u{298B}' // with underbar
            | '\u{298D}' // with tick in top corner
            | '\u{298F}' // with tick in bottom corner
            | '\u{2E22}' // top half
            | '\u{2E24}' // bottom half
            | '\u{2308}' // left ceiling
            | '\u{230A}' // left floor
            | '\u{23A1}' // upper corner
            | '\u{23A3}' // lower corner
    )
}

/// `]` and the characters that can pass for it.
fn is_closer(c: char) -> bool {
    matches!(
        c,
        ']' | '\u{FF3D}'
            | '\u{FE5E}'
            | '\u{27E7}'
            | '\u{27ED}'
            | '\u{301B}'
            | '\u{3011}'
            | '\u{3015}'
            | '\u{3017}'
            | '\u{3019}'
            | '\u{2046}'
            | '\u{2773}'
            | '\u{298C}'
            | '\u{298E}'
            | '\u{2990}'
            | '\u{2E23}'
            | '\u{2E25}'
            | '\u{2309}'
            | '\u{230B}'
            | '\u{23A4}'
            | '\u{23A6}'
    )
}

/// The header's field separator and characters that can pass for it.
fn is_dot(c: char) -> bool {
    matches!(
        c,
        '\u{B7}' | '\u{2022}' | '\u{2027}' | '\u{2219}' | '\u{22C5}' | '\u{30FB}' | '\u{FF65}'
    )
}

/// Characters a forger may put before or between the phrase's letters without changing how it
/// reads: spaces and line breaks, dashes and hyphens, markdown emphasis, dots, invisible format
/// characters and combining marks.
fn is_ignorable(c: char) -> bool {
    c.is_whitespace()
        || is_dot(c)
        || matches!(
            c,
            '-' | '_'
                | '*'
                | '~'
                | '`'
                | '.'
                | '\u{AD}' // soft hyphen
                | '\u{2010}'..='\u{2015}' // hyphens and dashes
                | '\u{2043}' // hyphen bullet
                | '\u{2212}' // minus
                | '\u{FE58}'
                | '\u{FE63}'
                | '\u{FF0D}'
                | '\u{FF3F}' // fullwidth low line
                | '\u{200B}'..='\u{200F}' // zero-width and direction marks
                | '\u{202A}'..='\u{202E}' // direction embeddings
                | '\u{2060}'..='\u{2064}' // word joiner, invisible operators
                | '\u{FEFF}'
                | '\u{180E}'
                | '\u{034F}' // combining grapheme joiner
                | '\u{0300}'..='\u{036F}' // combining diacritics
                | '\u{FE00}'..='\u{FE0F}' // variation selectors
        )
}

/// The ASCII lowercase letter `c` reads as: ASCII in any case, fullwidth Latin, and the Cyrillic
/// and Greek letters that look like the phrase's letters.
fn fold(c: char) -> Option<u8> {
    if c.is_ascii_alphabetic() {
        return Some(c.to_ascii_lowercase() as u8);
    }
    let folded = match c {
        '\u{FF21}'..='\u{FF3A}' => (b'a' + (c as u32 - 0xFF21) as u8) as char,
        '\u{FF41}'..='\u{FF5A}' => (b'a' + (c as u32 - 0xFF41) as u8) as char,
        '\u{0430}' | '\u{0410}' | '\u{0391}' | '\u{03B1}' => 'a',
        '\u{0435}' | '\u{0415}' | '\u{0395}' | '\u{03B5}' => 'e',
        '\u{0456}' | '\u{0406}' | '\u{0399}' | '\u{03B9}' | '\u{0131}' | '\u{0130}' => 'i',
        '\u{043E}' | '\u{041E}' | '\u{039F}' | '\u{03BF}' => 'o',
        '\u{0455}' | '\u{0405}' => 's',
        '\u{041C}' | '\u{039C}' | '\u{043C}' => 'm',
        '\u{0422}' | '\u{03A4}' | '\u{0442}' => 't',
        '\u{039D}' => 'n',
        '\u{0261}' => 'g',
        _ => return None,
    };
    Some(folded as u8)
}

#[cfg(test)]
mod tests;
