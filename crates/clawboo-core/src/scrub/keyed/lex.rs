//! Reading a value after its key: quoted (plain or escaped), bare up to a stop byte, or a whole
//! header line; and the quote searches behind them.
//!
//! Guarantees: every search stops at the end of its line; a quote with no partner on its line is
//! remembered (`Scan::no_close_before`), so it is never searched for twice, and
//! reading stays linear over any text. Must never: judge the value (see [`super::verdict`]).

use super::Scan;

impl Scan<'_> {
    /// Reads the value at `at`: `(content start, content end, quoted, next byte after it)`.
    pub(super) fn read_value(&mut self, at: usize) -> Option<(usize, usize, bool)> {
        let b = self.bytes;
        let first = *b.get(at)?;
        if first == b'\\' && matches!(b.get(at + 1), Some(b'"')) {
            let start = at + 2;
            if start < self.no_close_before[3] {
                return None;
            }
            return match escaped_closing_quote(b, start) {
                Ok(close) => Some((start, close, true)),
                Err(line_end) => {
                    self.no_close_before[3] = line_end;
                    None
                }
            };
        }
        if let Some(q) = [b'"', b'\'', b'`'].iter().position(|&q| q == first) {
            let start = at + 1;
            if start < self.no_close_before[q] {
                return None;
            }
            match closing_quote(b, start, first) {
                Ok(close) => return Some((start, close, true)),
                Err(line_end) => {
                    self.no_close_before[q] = line_end;
                    return None;
                }
            }
        }
        let mut end = at;
        while end < b.len() && !is_value_stop(b[end]) {
            end += 1;
        }
        Some((at, end, false))
    }
}

pub(super) fn skip_blanks(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t') {
        i += 1;
    }
    i
}

/// Bytes that end an unquoted value.
fn is_value_stop(c: u8) -> bool {
    c.is_ascii_whitespace()
        || matches!(
            c,
            b'"' | b'\''
                | b'`'
                | b','
                | b';'
                | b'<'
                | b'>'
                | b'('
                | b')'
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b'&'
                | b'|'
                | b'\\'
        )
}

/// The end of an element's text starting at `from`: the next `<` or the end of the line,
/// trailing blanks left out.
pub(super) fn element_text_end(b: &[u8], from: usize) -> usize {
    let mut i = from;
    while i < b.len() && !matches!(b[i], b'<' | b'\n' | b'\r') {
        i += 1;
    }
    while i > from && matches!(b[i - 1], b' ' | b'\t') {
        i -= 1;
    }
    i
}

/// The end of a setting's value that stops at `from` on a byte that may be part of it: the next
/// blank or quote, less a trailing `,` or `;`.
pub(super) fn line_word_end(b: &[u8], from: usize) -> usize {
    let mut i = from;
    while i < b.len() && !b[i].is_ascii_whitespace() && !matches!(b[i], b'"' | b'\'' | b'`') {
        i += 1;
    }
    while i > from && matches!(b[i - 1], b',' | b';') {
        i -= 1;
    }
    i
}

/// The end of a header-style value: the end of the line, or a quote or escape that closes it.
pub(super) fn line_value_end(b: &[u8], from: usize) -> usize {
    let mut i = from;
    while i < b.len() && !matches!(b[i], b'\n' | b'\r' | b'"' | b'\'' | b'\\' | b'`') {
        i += 1;
    }
    i
}

/// The position of the quote `q` closing a value that starts at `from`, on the same line and
/// not escaped; `Err(line end)` when there is none.
fn closing_quote(b: &[u8], from: usize, q: u8) -> Result<usize, usize> {
    let mut i = from;
    while i < b.len() {
        match b[i] {
            c if c == q => return Ok(i),
            b'\\' => i += 2,
            b'\n' => return Err(i),
            _ => i += 1,
        }
    }
    Err(b.len())
}

/// The position of the escaped quote (`\"`) closing a value that starts at `from`, on the same
/// line; `Err(line end)` when there is none.
fn escaped_closing_quote(b: &[u8], from: usize) -> Result<usize, usize> {
    let mut i = from;
    while i < b.len() {
        match b[i] {
            b'\\' if b.get(i + 1) == Some(&b'"') => return Ok(i),
            b'\n' => return Err(i),
            _ => i += 1,
        }
    }
    Err(b.len())
}
