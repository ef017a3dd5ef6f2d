//! Values with a wire format of their own: `Authorization` / `Proxy-Authorization` headers (the
//! scheme and the credential are masked together) and `Cookie` / `Set-Cookie` lists (the values
//! of session-like or random-looking cookies are masked, the names and attributes stay).
//!
//! Guarantees: a header is read to the end of its line, once; a header value that is not masked
//! whole is scanned again for the keys inside it (`AWS4-HMAC-SHA256 Credential=…`) only when it is
//! short. Must never: mask a placeholder credential (`Bearer <token>`, `Bearer $TOKEN`).

use super::lex::line_value_end;
use super::{LONG_VALUE, Scan};
use crate::scrub::value::{is_placeholder, looks_random};

/// Cookie names whose value is a session credential even when short.
#[rustfmt::skip]
const SESSION_COOKIES: &[&str] = &[
    "session", "sessionid", "session_id", "sid", "connect.sid", "jsessionid", "phpsessid",
    "_session", "auth", "token", "jwt", "remember_token", "access_token", "refresh_token",
    "laravel_session", "_gh_sess", "user_session", "asp.net_sessionid",
];

impl Scan<'_> {
    /// `Authorization: <scheme> <credential>` (or a bare credential): masked together.
    pub(super) fn header_value(&mut self, at: usize) -> Option<usize> {
        let (start, end) = match self.read_value(at)? {
            (s, e, true) => (s, e),
            (s, _, false) => (s, line_value_end(self.bytes, s)),
        };
        let value = self.text[start..end].trim_end();
        let line_end = end;
        let end = start + value.len();
        let parts: Vec<&str> = value.split_whitespace().collect();
        let Some(credential) = parts.last() else {
            return Some(line_end);
        };
        let secret = match parts.len() {
            0 => false,
            1 => looks_random(credential, 16),
            _ => credential.len() >= 8,
        };
        // `Basic <base64 of user:password>`: a placeholder after the scheme.
        let after_scheme = value
            .split_once(char::is_whitespace)
            .map_or("", |(_, c)| c.trim());
        if secret
            && !is_placeholder(credential)
            && !is_placeholder(value)
            && !is_placeholder(after_scheme)
        {
            self.spans.push((start, end));
            return Some(line_end);
        }
        // Not masked whole (`AWS4-HMAC-SHA256 Credential=[REDACTED]/…, Signature=…`): the keys
        // inside are scanned on their own, unless the value is too long to read twice.
        (line_end - start > LONG_VALUE).then_some(line_end)
    }

    /// `Cookie: a=b; session=…`: masks the values of session-like or random-looking cookies.
    pub(super) fn cookie_values(&mut self, at: usize) -> Option<usize> {
        let end = line_value_end(self.bytes, at);
        let mut offset = at;
        for pair in self.text[at..end].split(';') {
            let pair_start = offset;
            offset += pair.len() + 1;
            let Some((name, value)) = pair.split_once('=') else {
                continue;
            };
            let name = name.trim().to_ascii_lowercase();
            let value = value.trim().trim_matches('"');
            let session = SESSION_COOKIES.contains(&name.as_str())
                || name.contains("session")
                || name.contains("token");
            let secret = if session {
                value.len() >= 8 && !is_placeholder(value)
            } else {
                looks_random(value, 16)
            };
            if secret {
                let value_at = pair_start + pair.find(value).unwrap_or(0);
                self.spans.push((value_at, value_at + value.len()));
            }
        }
        Some(end)
    }
}
