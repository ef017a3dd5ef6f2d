//! Separators: how a key name introduces its value, in every syntax the scan knows. `=`, `:`,
//! `:=`, `=>`, `?=` (env, YAML, JSON, TOML, INI, code, CLI flags); markup (`<password>…`,
//! `<ns:password attr="…">…`, `<entry key="db.password">…`, `<param-name>apiSecret</param-name>
//! <param-value>…`); a setter or a call (`setPassword("…")`, `define('DB_PASSWORD', '…')`,
//! `props.put("password", "…")`); a subscript (`os.environ["API_KEY"] = "…"`); a typed
//! declaration (`const API_KEY: &str = "…"`, `var apiToken string = "…"`); a Terraform variable's
//! `default`; `name: X` / `value: Y` pairs; and a space-separated setting alone on its line
//! (`password …` in `.netrc`, `requirepass …`).
//!
//! Guarantees: every look past the key is bounded (a line, or a block up to its first brace), so
//! a key name costs at most a constant more than its own length, and the scan stays linear.
//! Must never: decide whether the value is a secret (that is [`super::verdict`]'s job).

use super::Scan;
use super::lex::skip_blanks;
use super::names::is_qualifier;

/// How the value was introduced.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Sep {
    /// `:` (YAML, JSON, headers): an unquoted word is a literal.
    Colon,
    /// `=` with a space on either side (code style): a bare identifier is a variable.
    SpacedEquals,
    /// `=`, `:=`, `=>`, `?=`, `name … value` pairs, a flag's space: a literal.
    Other,
    /// XML `<password>…</password>`, or a setter call `setPassword("…")`: the text up to `<`
    /// or the quoted argument.
    Element,
    /// A call's next argument or a subscript's assignment (`define('DB_PASSWORD', '…')`,
    /// `os.environ["API_KEY"] = "…"`): only a quoted literal counts.
    Argument,
}

impl Sep {
    /// Whether an all-caps env name before this separator is masked whole with its value (the
    /// reference's env rule); in markup, calls and subscripts the name stays.
    pub(super) fn masks_env_name(self) -> bool {
        matches!(self, Sep::Colon | Sep::SpacedEquals | Sep::Other)
    }
}

/// Type names that may stand between a key and its `=` in a typed declaration.
#[rustfmt::skip]
const DECLARED_TYPES: &[&str] = &[
    "string", "str", "&str", "&'static str", "String", "[]byte", "bytes", "SecretStr", "text",
];

impl Scan<'_> {
    /// The separator after a key name ending at `end`: returns where the value starts.
    pub(super) fn separator(
        &self,
        key_start: usize,
        end: usize,
        flag: bool,
    ) -> Option<(usize, Sep)> {
        let b = self.bytes;
        let mut i = end;
        let mut quoted_key = false;
        // The closing quote of a quoted key, perhaps escaped (`\"password\"`).
        if b.get(i) == Some(&b'\\') && matches!(b.get(i + 1), Some(b'"' | b'\'')) {
            i += 2;
        } else if matches!(b.get(i), Some(b'"' | b'\'' | b'`')) {
            quoted_key = true;
            i += 1;
        }
        let after_key = i;
        if let Some(found) = self.markup_value(key_start, after_key) {
            return Some(found);
        }
        // `setPassword("…")`, `withToken('…')`, `password("…")`: a literal argument.
        if b.get(i) == Some(&b'(') && matches!(b.get(i + 1), Some(b'"' | b'\'')) {
            let name = self.text[key_start..end].rsplit('.').next().unwrap_or("");
            let lower = name.to_ascii_lowercase();
            if !lower.starts_with("get")
                && !lower.starts_with("verify")
                && !lower.starts_with("check")
            {
                return Some((i + 1, Sep::Element));
            }
        }
        if quoted_key && let Some(found) = self.after_quoted_key(key_start, after_key) {
            return Some(found);
        }
        let spaces_before = skip_blanks(b, i) - i;
        i += spaces_before;
        let rest = &b[i..];
        let (len, sep) =
            if rest.starts_with(b"=>") || rest.starts_with(b":=") || rest.starts_with(b"?=") {
                (2, Sep::Other)
            } else if rest.starts_with(b"==") || rest.starts_with(b"::") {
                return None;
            } else if rest.first() == Some(&b'=') {
                let spaced = spaces_before > 0 || matches!(rest.get(1), Some(b' ' | b'\t'));
                (
                    1,
                    if spaced {
                        Sep::SpacedEquals
                    } else {
                        Sep::Other
                    },
                )
            } else if rest.first() == Some(&b':') {
                (1, Sep::Colon)
            } else if flag && spaces_before > 0 && after_key == end {
                (0, Sep::Other)
            } else if spaces_before > 0 && after_key == end {
                // `var apiToken string = "…"`, `requirepass …`.
                return self
                    .typed_equals(i)
                    .or_else(|| self.space_setting(key_start, end, i))
                    .or_else(|| self.value_pair(after_key));
            } else {
                return self.value_pair(after_key);
            };
        let value_at = skip_blanks(b, i + len);
        if sep == Sep::Colon {
            // `const API_KEY: &str = "…"`, `val dbPassword: String = "…"`.
            if let Some(typed) = self.typed_equals(value_at) {
                return Some(typed);
            }
        }
        Some((value_at, sep))
    }

    /// A type name then ` = ` at `at` (a typed declaration): where the value starts.
    fn typed_equals(&self, at: usize) -> Option<(usize, Sep)> {
        let b = self.bytes;
        let ty = DECLARED_TYPES
            .iter()
            .find(|t| b[at..].starts_with(t.as_bytes()))?;
        let after_type = at + ty.len();
        let i = skip_blanks(b, after_type);
        if i == after_type || b.get(i) != Some(&b'=') || matches!(b.get(i + 1), Some(b'=' | b'>')) {
            return None;
        }
        Some((skip_blanks(b, i + 1), Sep::SpacedEquals))
    }

    /// A space-separated setting on a line of its own, read one line at a time: a `.netrc`
    /// `password`, redis.conf `requirepass` / `masterauth`, slapd `rootpw`, nslcd `bindpw`, then
    /// one word to the end of the line, at `at`. "password required" is prose: a word that
    /// qualifies the keyword is no value.
    fn space_setting(&self, key_start: usize, key_end: usize, at: usize) -> Option<(usize, Sep)> {
        const KEYWORDS: &[&str] = &[
            "bindpw",
            "masterauth",
            "passwd",
            "password",
            "requirepass",
            "rootpw",
        ];
        let key = &self.text[key_start..key_end];
        if !KEYWORDS.contains(&key) || !self.starts_line(key_start) {
            return None;
        }
        // One line holds one key that starts it, so this look to the line's end is paid once.
        let b = self.bytes;
        let word_end = b[at..]
            .iter()
            .position(u8::is_ascii_whitespace)
            .map_or(b.len(), |p| at + p);
        let ends_line = matches!(b.get(skip_blanks(b, word_end)), None | Some(b'\n' | b'\r'));
        let word = self.text[at..word_end].to_ascii_lowercase();
        (word_end > at && ends_line && !is_qualifier(&word)).then_some((at, Sep::Other))
    }

    /// The value of a markup element named by the key: `<password>…`, `<ns:password a="b">…`,
    /// `<entry key="db.password">…`, `<param-name>apiSecret</param-name><param-value>…`.
    fn markup_value(&self, key_start: usize, after_key: usize) -> Option<(usize, Sep)> {
        let b = self.bytes;
        let before = key_start.checked_sub(1).map(|i| b[i]);
        let opens_tag = match before {
            // `<password>`, but not a placeholder inside a URL (`https://<key>@host`).
            Some(b'<') => !matches!(
                key_start.checked_sub(2).map(|i| b[i]),
                Some(b'/' | b':' | b'@' | b'=' | b'.')
            ),
            Some(b':') => self.after_tag_prefix(key_start - 1),
            _ => false,
        };
        if opens_tag {
            return match b.get(after_key) {
                Some(b'>') => Some((after_key + 1, Sep::Element)),
                Some(b' ' | b'\t') => self.tag_end(after_key).map(|gt| (gt + 1, Sep::Element)),
                _ => None,
            };
        }
        // `<entry key="db.password">…`: an attribute that names the element's text.
        let attribute = key_start >= 2
            && matches!(b[key_start - 1], b'"' | b'\'')
            && b[key_start - 2] == b'='
            && b.get(after_key) == Some(&b'>');
        if attribute {
            return Some((after_key + 1, Sep::Element));
        }
        // `<param-name>apiSecret</param-name>` then `<param-value>…`.
        if before == Some(b'>') && b[after_key..].starts_with(b"</") {
            let close = self.tag_end(after_key)?;
            let mut i = close + 1;
            while i < b.len() && i - close < 16 && b[i].is_ascii_whitespace() {
                i += 1;
            }
            if b.get(i) != Some(&b'<') {
                return None;
            }
            let gt = self.tag_end(i)?;
            let name = self.text[i + 1..gt].trim().to_ascii_lowercase();
            return name.ends_with("value").then_some((gt + 1, Sep::Element));
        }
        None
    }

    /// The `>` that ends the tag open at `from`, within 200 bytes on the same line, unless the
    /// tag closes itself (`/>`).
    fn tag_end(&self, from: usize) -> Option<usize> {
        let b = self.bytes;
        let limit = b.len().min(from + 200);
        let gt = (from..limit)
            .take_while(|&i| !matches!(b[i], b'\n' | b'<') || i == from)
            .find(|&i| b[i] == b'>')?;
        (b[gt - 1] != b'/').then_some(gt)
    }

    /// After a quoted key: a call's next argument (`define('DB_PASSWORD', '…')`), a subscript's
    /// assignment (`ENV['API_KEY'] = '…'`), or a Terraform variable's `default`.
    fn after_quoted_key(&self, key_start: usize, after_key: usize) -> Option<(usize, Sep)> {
        let b = self.bytes;
        let open = key_start.checked_sub(1)?;
        if !matches!(b[open], b'"' | b'\'') {
            return None;
        }
        let head = self.text[..open].trim_end_matches([' ', '\t']);
        let i = skip_blanks(b, after_key);
        match b.get(i) {
            Some(b',') if head.ends_with('(') => {
                let at = skip_blanks(b, i + 1);
                matches!(b.get(at), Some(b'"' | b'\'')).then_some((at, Sep::Argument))
            }
            Some(b']') => {
                let eq = skip_blanks(b, i + 1);
                let assigns =
                    b.get(eq) == Some(&b'=') && !matches!(b.get(eq + 1), Some(b'=' | b'>'));
                assigns.then(|| (skip_blanks(b, eq + 1), Sep::Argument))
            }
            Some(b'{') if head.ends_with("variable") => self.hcl_default(i + 1),
            _ => None,
        }
    }

    /// Inside a Terraform `variable "…" {` block starting at `from`: the value of its `default`,
    /// looked for up to the block's first brace.
    fn hcl_default(&self, from: usize) -> Option<(usize, Sep)> {
        let b = self.bytes;
        let limit = b.len().min(from + 512);
        let mut i = from;
        while i < limit && !matches!(b[i], b'{' | b'}') {
            if b[i..].starts_with(b"default")
                && (i == 0 || !b[i - 1].is_ascii_alphanumeric() && b[i - 1] != b'_')
            {
                let eq = skip_blanks(b, i + 7);
                if b.get(eq) == Some(&b'=') && b.get(eq + 1) != Some(&b'=') {
                    return Some((skip_blanks(b, eq + 1), Sep::SpacedEquals));
                }
            }
            i += 1;
        }
        None
    }

    /// `name: DB_PASSWORD` followed by `value: …` (Kubernetes env, ECS, .NET appSettings): the
    /// value's start, if the next thing within a line is a `value` key.
    fn value_pair(&self, from: usize) -> Option<(usize, Sep)> {
        let b = self.bytes;
        let mut i = from;
        let mut newlines = 0;
        while i < b.len()
            && i - from < 48
            && matches!(b[i], b' ' | b'\t' | b'\r' | b'\n' | b',' | b'-')
        {
            if b[i] == b'\n' {
                newlines += 1;
            }
            i += 1;
        }
        if newlines > 1 {
            return None;
        }
        if matches!(b.get(i), Some(b'"' | b'\'')) {
            i += 1;
        }
        if !b[i..].starts_with(b"value")
            || b.get(i + 5)
                .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_')
        {
            return None;
        }
        i += 5;
        if matches!(b.get(i), Some(b'"' | b'\'')) {
            i += 1;
        }
        i = skip_blanks(b, i);
        if !matches!(b.get(i), Some(b':' | b'=')) {
            return None;
        }
        Some((skip_blanks(b, i + 1), Sep::Other))
    }
}
