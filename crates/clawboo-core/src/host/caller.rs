//! Who is calling: the host's named bearer tokens and the [`Caller`] that admission yields for
//! every admitted request.
//!
//! Owns: the tokens file format (`NAME:TOKEN` a line, `#` comments and blank lines skipped), its
//! permission rule (refused when the group or others may read it), the name of the single
//! `--token`/`CLAWBOO_HTTP_TOKEN` ([`DEFAULT_TOKEN_NAME`]), the comparison of a presented token,
//! and `token new NAME`'s line.
//! Guarantees: a presented token is compared as a SHA-256 digest against the digest of every
//! token, each compared whole and every one of them compared (no early exit on a prefix or on the
//! first match; its length shows only in the time SHA-256 takes to hash it); a request without a
//! token on a host that has none is the [`Caller::LOCAL_OPERATOR`].
//! How a name reaches the store: admission puts the [`Caller`] in the request's extensions; a
//! route reads it with [`Caller::of_parts`]. The broker's audit rows of a session opened with a named
//! token carry it in `tool_call_audit.caller`, and an approval resolved over REST or the page
//! records it in `tool_call_approvals.resolved_by` (both nullable columns of ours). Rows with an
//! author column (posts, comments, claims) keep the agent the call or its binding names: the
//! reference's readers filter on that column, so a token's name is never written into it.
//! Must never: log, echo or `Debug`-print a token.

use std::path::Path;
use std::sync::Arc;

use ring::digest::{SHA256, digest};

/// The name of the single token given by `--token` or `CLAWBOO_HTTP_TOKEN`.
pub const DEFAULT_TOKEN_NAME: &str = "default";

/// The environment variable naming a tokens file.
pub const TOKENS_FILE_ENV: &str = "CLAWBOO_HTTP_TOKENS_FILE";

/// Who made a request, as admission decided it: a token's name, or the local operator when the
/// host has no token. Every admitted request carries one in its extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller(Arc<str>);

impl Caller {
    /// The caller of a host that has no token (loopback only).
    pub const LOCAL_OPERATOR: &str = "local operator";

    /// The caller named `name`.
    pub fn named(name: &str) -> Self {
        Self(Arc::from(name))
    }

    /// The local operator.
    pub fn local_operator() -> Self {
        Self::named(Self::LOCAL_OPERATOR)
    }

    /// Its name, as rows record it.
    pub fn name(&self) -> &str {
        &self.0
    }

    /// The caller admission recorded in a request's extensions (the local operator if none was:
    /// only a request that never went through admission lacks one).
    pub fn of_parts(extensions: &http::Extensions) -> Self {
        extensions
            .get::<Self>()
            .cloned()
            .unwrap_or_else(Self::local_operator)
    }
}

impl std::fmt::Display for Caller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One named token, as configured. Its `Debug` shows the name only.
#[derive(Clone, PartialEq, Eq)]
pub struct NamedToken {
    /// The name rows record.
    pub name: String,
    /// The secret a client presents.
    pub secret: String,
}

impl std::fmt::Debug for NamedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NamedToken")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// The tokens a host accepts, kept as digests.
#[derive(Clone, Default)]
pub struct Tokens {
    entries: Vec<(Caller, [u8; 32])>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|(c, _)| c.name()))
            .finish()
    }
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(digest(&SHA256, bytes).as_ref());
    out
}

impl Tokens {
    /// The accepted tokens.
    pub fn new(tokens: &[NamedToken]) -> Self {
        Self {
            entries: tokens
                .iter()
                .map(|t| (Caller::named(&t.name), sha256(t.secret.as_bytes())))
                .collect(),
        }
    }

    /// Whether the host accepts no token (then every request is the local operator's).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The caller `presented` belongs to, if any: every token's digest is compared, whole.
    pub fn find(&self, presented: &str) -> Option<Caller> {
        let given = sha256(presented.trim().as_bytes());
        let mut found = None;
        for (caller, digest) in &self.entries {
            let diff = digest
                .iter()
                .zip(&given)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b));
            if diff == 0 && found.is_none() {
                found = Some(caller.clone());
            }
        }
        found
    }
}

/// A token name: 1 to 64 of `A-Z a-z 0-9 . _ -`.
fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "token name {name:?} must be 1 to 64 of A-Z a-z 0-9 . _ -"
        ))
    }
}

/// The shortest token a tokens file may hold (`token new` makes 43).
pub const MIN_TOKEN_CHARS: usize = 16;

/// Reads a tokens file: `NAME:TOKEN` a line. Refused when the group or others may read or write
/// it (Unix), when a line has no name or a short token, or when a name or token repeats; the
/// error names the line, never the token.
pub fn read_tokens_file(path: &Path) -> Result<Vec<NamedToken>, String> {
    let shown = path.display();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta =
            std::fs::metadata(path).map_err(|e| format!("cannot read tokens file {shown}: {e}"))?;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(format!(
                "tokens file {shown} has mode {mode:o}: others may read it; run `chmod 600 {shown}`"
            ));
        }
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read tokens file {shown}: {e}"))?;
    parse_tokens(&text).map_err(|e| format!("tokens file {shown}: {e}"))
}

fn parse_tokens(text: &str) -> Result<Vec<NamedToken>, String> {
    let mut tokens: Vec<NamedToken> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let n = n + 1;
        let Some((name, secret)) = line.split_once(':') else {
            return Err(format!("line {n} is not NAME:TOKEN"));
        };
        let (name, secret) = (name.trim(), secret.trim());
        check_name(name).map_err(|e| format!("line {n}: {e}"))?;
        if secret.chars().count() < MIN_TOKEN_CHARS {
            return Err(format!(
                "line {n}: the token of {name:?} is shorter than {MIN_TOKEN_CHARS} characters (make one with `token new {name}`)"
            ));
        }
        if tokens.iter().any(|t| t.name == name) {
            return Err(format!("line {n}: the name {name:?} is used twice"));
        }
        if tokens.iter().any(|t| t.secret == secret) {
            return Err(format!("line {n}: the token of {name:?} repeats another's"));
        }
        tokens.push(NamedToken {
            name: name.to_owned(),
            secret: secret.to_owned(),
        });
    }
    Ok(tokens)
}

/// Adds `extra` to `tokens`, refusing a name that is taken.
pub fn add_token(tokens: &mut Vec<NamedToken>, extra: NamedToken) -> Result<(), String> {
    if tokens.iter().any(|t| t.name == extra.name) {
        return Err(format!(
            "the token name {:?} is given twice (rename it in the tokens file)",
            extra.name
        ));
    }
    tokens.push(extra);
    Ok(())
}

/// `NAME:<32 random bytes, base64url without padding>`, a line for the tokens file.
pub fn new_token_line(name: &str) -> Result<String, String> {
    use ring::rand::{SecureRandom, SystemRandom};
    check_name(name)?;
    let mut bytes = [0u8; 32];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| "the system's random source failed".to_owned())?;
    Ok(format!("{name}:{}", base64url(&bytes)))
}

fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(name: &str, secret: &str) -> NamedToken {
        NamedToken {
            name: name.into(),
            secret: secret.into(),
        }
    }

    #[test]
    fn a_token_names_its_caller_and_a_prefix_or_a_wrong_token_is_nobody() {
        let tokens = Tokens::new(&[
            token("alice", "fake-alice-token-0123456789"),
            token("ci", "fake-ci-token-abcdefghijkl"),
        ]);
        assert_eq!(
            tokens.find("fake-ci-token-abcdefghijkl").unwrap().name(),
            "ci"
        );
        assert!(tokens.find("fake-ci-token-abcdefghijk").is_none());
        assert!(tokens.find("fake-ci-token-abcdefghijklm").is_none());
        assert!(tokens.find("").is_none());
        assert!(tokens.find("fake-alice-token-0123456780").is_none());
        assert!(format!("{tokens:?}").contains("alice"));
        assert!(!format!("{tokens:?}").contains("fake-"));
        assert!(!format!("{:?}", token("a", "fake-secret")).contains("fake-secret"));
    }

    #[test]
    fn the_tokens_file_is_read_and_its_errors_name_the_line_not_the_token() {
        let tokens = parse_tokens(
            "# team tokens\n\nalice:fake-alice-token-0123456789\n ci : fake-ci-token-abcdefghijkl \n",
        )
        .unwrap();
        assert_eq!(tokens.len(), 2);
        assert_eq!(tokens[1], token("ci", "fake-ci-token-abcdefghijkl"));
        for (text, message) in [
            ("alice", "line 1 is not NAME:TOKEN"),
            (
                "a b:fake-alice-token-0123456789",
                "line 1: token name \"a b\" must be 1 to 64 of A-Z a-z 0-9 . _ -",
            ),
            (
                "alice:short",
                "line 1: the token of \"alice\" is shorter than 16 characters (make one with `token new alice`)",
            ),
            (
                "a:fake-alice-token-0123456789\na:fake-other-token-0123456789",
                "line 2: the name \"a\" is used twice",
            ),
            (
                "a:fake-alice-token-0123456789\nb:fake-alice-token-0123456789",
                "line 2: the token of \"b\" repeats another's",
            ),
        ] {
            assert_eq!(parse_tokens(text).unwrap_err(), message, "{text}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_tokens_file_others_may_read_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("clawboo-tokens-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tokens");
        std::fs::write(&path, "alice:fake-alice-token-0123456789\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = read_tokens_file(&path).unwrap_err();
        assert!(
            err.contains("has mode 644: others may read it; run `chmod 600"),
            "{err}"
        );
        assert!(!err.contains("fake-alice"), "{err}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_tokens_file(&path).unwrap().len(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_new_token_line_is_a_name_and_43_base64url_characters() {
        let line = new_token_line("alice").unwrap();
        let (name, secret) = line.split_once(':').unwrap();
        assert_eq!(name, "alice");
        assert_eq!(secret.len(), 43);
        assert!(
            secret
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        );
        assert_ne!(line, new_token_line("alice").unwrap());
        assert!(new_token_line("bad name").is_err());
        assert_eq!(base64url(b"\xfb\xff"), "-_8");
        assert_eq!(base64url(b"Man"), "TWFu");
    }
}
