//! What a candidate secret value looks like: placeholders, references to a variable by name,
//! public identifiers, and how random a string is. Every rule of the scrubber asks these questions
//! the same way, so "`your-api-key-here` is not a secret" holds at every door.
//!
//! Guarantees: pure functions of their input, linear in its length, never panic. Must never: decide
//! on its own that something is a secret (that is the rules' job); these only answer "is this a
//! placeholder", "is this a reference", "is this random enough".

use super::REDACTED;

/// Whether `value` (quotes already removed) is a stand-in rather than a credential: empty or tiny,
/// already masked, a template (`<YOUR_KEY>`, `${VAR}`, `{{ x }}`, `%VAR%`, `$(cmd)`), elided
/// (`sk-...`, `***`, `xxxx`, `•••`), or a stock word (`your-api-key-here`, `changeme`, `example`).
pub(crate) fn is_placeholder(value: &str) -> bool {
    let v = value.trim();
    if v.chars().count() < 3 || v.contains(REDACTED) {
        return true;
    }
    let lower = v.to_ascii_lowercase();
    if lower.contains("redacted") {
        return true;
    }
    let b = v.as_bytes();
    if (b[0] == b'<' && b[b.len() - 1] == b'>')
        || (b[0] == b'[' && b[b.len() - 1] == b']')
        || (b[0] == b'%' && b[b.len() - 1] == b'%')
        || (b[0] == b'@' && b[b.len() - 1] == b'@')
    {
        return true;
    }
    const TEMPLATES: &[&str] = &["${", "{{", "$(", "#{", "%(", "<%", "((", "…", "•"];
    if TEMPLATES.iter().any(|t| v.contains(t)) || has_placeholder_marks(v) {
        return true;
    }
    if is_secret_reference(v) {
        return true;
    }
    // A leading `$NAME` is a shell or template variable, `!Ref X` a YAML tag.
    if (b[0] == b'$' || b[0] == b'!') && b.len() > 1 && (b[1].is_ascii_alphabetic() || b[1] == b'_')
    {
        return true;
    }
    if has_run_of(&lower, b'x', 4) || has_run_of(&lower, b'*', 3) || has_run_of(&lower, b'#', 4) {
        return true;
    }
    const WORDS: &[&str] = &[
        "your",
        "here",
        "example",
        "placeholder",
        "changeme",
        "change_me",
        "change-me",
        "replace",
        "insert",
        "dummy",
        "sample",
        "todo",
        "fixme",
    ];
    if WORDS.iter().any(|w| lower.contains(w)) {
        return true;
    }
    const WHOLE: &[&str] = &[
        "secret",
        "password",
        "passwd",
        "pass",
        "pwd",
        "token",
        "apikey",
        "api_key",
        "api-key",
        "key",
        "test",
        "none",
        "null",
        "nil",
        "undefined",
        "empty",
        "hidden",
        "masked",
        "foo",
        "bar",
        "baz",
        "foobar",
        "admin",
        "root",
        "user",
        "username",
        "default",
    ];
    if WHOLE.contains(&lower.as_str()) {
        return true;
    }
    // The same character over and over (`000000`, `aaaaaaaa`) is a filler, not a secret.
    let first = b[0];
    b.len() >= 3 && b.iter().all(|&c| c == first)
}

/// Whether `value` names a secret held in a secret store rather than holding it: a Bank-Vaults
/// path (`vault:secret/data/app#password`), an Azure Key Vault reference
/// (`@Microsoft.KeyVault(SecretUri=…)`). (The URL forms, `op://…`, `ref+vault://…`, and ARNs are
/// told by their `://` and `arn:` wherever a value is judged; templates by their braces.)
pub(crate) fn is_secret_reference(value: &str) -> bool {
    let v = value.trim_matches(['\'', '"']);
    let lower = |n: usize| v.get(..n).map(str::to_ascii_lowercase);
    // `vault:` then a path: Vault Transit ciphertext (`vault:v1:…`) has no `/` and is not this.
    let vault_path = lower(6).as_deref() == Some("vault:")
        && v[6..].contains('/')
        && v[6..]
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'/' | b'_' | b'-' | b'.' | b'#'));
    vault_path || lower(20).as_deref() == Some("@microsoft.keyvault(")
}

/// Whether `value` holds an OpenSSH public key (`ssh-ed25519 AAAA… user@host`, perhaps after the
/// options of an `authorized_keys` line or the host of a `known_hosts` one): public by design.
pub(crate) fn is_ssh_public_key(value: &str) -> bool {
    // The type comes within the first few words (options, a host), so a long value costs no
    // more than a short one.
    let head = &value[..floor_boundary(value, 512)];
    let mut words = head.split_whitespace().take(8).peekable();
    while let Some(word) = words.next() {
        let word = word.trim_start_matches(['\'', '"']);
        if is_ssh_key_type(word) && words.peek().is_some_and(|next| next.starts_with("AAAA")) {
            return true;
        }
    }
    false
}

/// Whether `word` is an OpenSSH public-key type (`ssh-rsa`, `ecdsa-sha2-nistp256`,
/// `sk-ssh-ed25519@openssh.com`, their `-cert-v01@openssh.com` forms): a name, never a secret.
pub(crate) fn is_ssh_key_type(word: &str) -> bool {
    const TYPES: &[&str] = &[
        "ssh-rsa",
        "ssh-dss",
        "ssh-ed25519",
        "ssh-ed448",
        "ecdsa-sha2-nistp256",
        "ecdsa-sha2-nistp384",
        "ecdsa-sha2-nistp521",
        "sk-ssh-ed25519",
        "sk-ecdsa-sha2-nistp256",
    ];
    let base = word
        .strip_suffix("@openssh.com")
        .unwrap_or(word)
        .trim_end_matches("-cert-v01");
    TYPES.contains(&base)
}

/// The placeholder marks that can sit even inside a token-shaped string: `xxxx` runs, elisions,
/// masks, and stock words (`your`, `here`, `example`, `placeholder`).
pub(crate) fn has_placeholder_marks(token: &str) -> bool {
    const MARKS: &[&str] = &[
        "xxxx",
        "...",
        "***",
        "your",
        "here",
        "example",
        "placeholder",
    ];
    let lower = token.to_ascii_lowercase();
    MARKS.iter().any(|m| lower.contains(m))
}

/// Whether `text` has `n` or more `byte`s in a row.
fn has_run_of(text: &str, byte: u8, n: usize) -> bool {
    let mut run = 0;
    for &c in text.as_bytes() {
        run = if c == byte { run + 1 } else { 0 };
        if run >= n {
            return true;
        }
    }
    false
}

/// Shannon entropy of `s` in bits per byte.
pub(crate) fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for &b in s.as_bytes() {
        counts[b as usize] += 1;
    }
    let len = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / len;
            -p * p.log2()
        })
        .sum()
}

/// Whether `s` is a file path (`/etc/ssl/key.pem`, `~/.ssh/id_rsa`, `./secrets.txt`) rather than
/// base64 that happens to start with `/`: no `+` or `=`, and a second segment or an extension.
pub(crate) fn is_path(s: &str) -> bool {
    let rooted = s.starts_with(['/', '~']) || s.starts_with("./") || s.starts_with("../");
    let segments = s.split('/').filter(|p| !p.is_empty()).count();
    // A segment of mixed case and digits (`rNOQJ5kvRmTpTn04kirp`) is base64, not a directory.
    let base64_segment = s.split('/').any(|seg| {
        let b = seg.as_bytes();
        b.len() >= 12
            && b.iter().any(u8::is_ascii_digit)
            && b.iter().any(u8::is_ascii_uppercase)
            && b.iter().any(u8::is_ascii_lowercase)
            && !seg.contains(['.', '-', '_'])
    });
    rooted
        && !s.contains(['+', '='])
        && !base64_segment
        && (segments >= 2 || s.contains('.') || s.len() < 16)
}

/// Whether `s` is a UUID (`8-4-4-4-12` hex).
pub(crate) fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// Whether `s` is random enough to be a key: long, mixed (a digit, or both cases), spread out, and
/// not a URL, a path, an address or a UUID.
pub(crate) fn looks_random(s: &str, min_len: usize) -> bool {
    let b = s.as_bytes();
    if b.len() < min_len || is_uuid(s) || s.contains("://") || s.contains('@') {
        return false;
    }
    // An ARN or another `a:b:c` path names a thing; it is not the thing.
    if s.starts_with("arn:") || s.matches(':').count() >= 2 {
        return false;
    }
    if is_path(s) {
        return false;
    }
    let digit = b.iter().any(u8::is_ascii_digit);
    let upper = b.iter().any(u8::is_ascii_uppercase);
    let lower = b.iter().any(u8::is_ascii_lowercase);
    (digit && (upper || lower) || upper && lower && b.len() >= 20)
        && entropy(s) >= 3.0
        && !is_word_chain(s)
}

/// Whether `s` is lowercase words joined by `-`, `_` or `.` (`sk-learn-pipelines`,
/// `re_match_all_the_things`, `my-app-secret`): a name, not a key. A word here has a vowel (or at
/// most 3 letters, like `sk`) and at most 14 letters, so `sk-zzzzzzzzzzzz` and `sk-abcdefghijklmnopqrstuv` are not names.
pub(crate) fn is_word_chain(s: &str) -> bool {
    let mut parts = 0;
    for part in s.split(['-', '_', '.']) {
        let word = !part.is_empty()
            && part.len() <= 14
            && part.bytes().all(|b| b.is_ascii_lowercase())
            && (part.len() <= 3 || part.bytes().any(|b| b"aeiouy".contains(&b)));
        if !word {
            return false;
        }
        parts += 1;
    }
    parts >= 2
}

/// Whether an unquoted value is code that names something else: a call, a dotted path
/// (`os.environ`, `self.token`, `var.db_password`), or a bare identifier after a spaced `=`.
pub(crate) fn is_code_reference(value: &str) -> bool {
    let segments: Vec<&str> = value.split('.').collect();
    segments.len() >= 2
        && segments.iter().all(|s| {
            let b = s.as_bytes();
            !b.is_empty()
                && b.len() <= 40
                && (b[0].is_ascii_alphabetic() || b[0] == b'_' || b[0] == b'$')
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'$')
                // Digits only at the end, as in `utf8` or `token2`: `m2qf4l` is not a name.
                && b.iter()
                    .skip_while(|c| !c.is_ascii_digit())
                    .all(u8::is_ascii_digit)
        })
}

/// Whether letters-only `s` reads as a name made of words (`getpass`, `userPassword`,
/// `DEFAULT_PASSWORD`) rather than random letters (`JqKxPzRtMnBvCdFg`): few case humps, and
/// every longer word has vowels and no long consonant run.
pub(crate) fn reads_as_words(s: &str) -> bool {
    let b = s.as_bytes();
    let mut parts = 0;
    let mut letters = 0;
    // Words of one or two letters, and of one: random letters have several, names few.
    let (mut short, mut single) = (0, 0);
    let mut start = None;
    for i in 0..=b.len() {
        let c = b.get(i).copied().unwrap_or(b' ');
        let ends = match start {
            _ if !c.is_ascii_alphabetic() => true,
            None => false,
            // A hump: `userPassword`, or the last capital of a run before lowercase (`HTTPServer`).
            Some(_) => {
                let p = b[i - 1];
                p.is_ascii_lowercase() && c.is_ascii_uppercase()
                    || p.is_ascii_uppercase()
                        && c.is_ascii_uppercase()
                        && b.get(i + 1).is_some_and(u8::is_ascii_lowercase)
            }
        };
        if ends && let Some(from) = start.take() {
            parts += 1;
            letters += i - from;
            short += usize::from(i - from < 3);
            single += usize::from(i - from == 1);
            if !is_pronounceable(&b[from..i]) {
                return false;
            }
        }
        if c.is_ascii_alphabetic() && start.is_none() {
            start = Some(i);
        }
    }
    parts > 0 && parts * 3 <= letters + 2 && !(short >= 2 && single >= 1)
}

/// Whether a word could be English: a vowel in every three letters or so, no run of four
/// consonants, and no three at its start but the usual clusters (`str`, `sch`, `thr`, …).
fn is_pronounceable(word: &[u8]) -> bool {
    const CLUSTERS: &[&[u8]] = &[
        b"str", b"spr", b"scr", b"spl", b"sch", b"thr", b"chr", b"shr", b"phr",
    ];
    if word.len() < 3 {
        return true;
    }
    let lower: Vec<u8> = word.iter().map(u8::to_ascii_lowercase).collect();
    let vowel = |c: &u8| b"aeiouy".contains(c);
    let vowels = lower.iter().filter(|c| vowel(c)).count();
    let mut run = 0;
    for c in &lower {
        run = if vowel(c) { 0 } else { run + 1 };
        if run >= 4 {
            return false;
        }
    }
    let initial = lower.iter().take_while(|c| !vowel(c)).count();
    let cluster_start = CLUSTERS.iter().any(|c| lower.starts_with(c));
    vowels * 4 >= lower.len() && (initial < 3 || cluster_start)
}

/// The bytes that base64 (standard or URL-safe, padding optional) `s` decodes to, at most `max`
/// of them; decoding stops at the first byte outside the alphabet.
pub(crate) fn decode_base64(s: &str, max: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(max.min(s.len()));
    let (mut acc, mut bits) = (0u32, 0);
    for &c in s.as_bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => break,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
            if out.len() >= max {
                break;
            }
        }
    }
    out
}

/// Whether `s` is base64 of `user:password` (a Basic credential, a `.npmrc` `_auth`, a Docker
/// `auth`): printable text with a colon between two non-empty parts.
pub(crate) fn decodes_to_credentials(s: &str) -> bool {
    let body = s.trim_end_matches('=');
    let alphabet = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'-' | b'_');
    if body.len() < 8 || body.len() > 512 || body.len() % 4 == 1 || !body.bytes().all(alphabet) {
        return false;
    }
    let decoded = decode_base64(body, 384);
    let printable = decoded.iter().all(|c| c.is_ascii_graphic() || *c == b' ');
    let colon = decoded.iter().position(|&c| c == b':');
    printable && colon.is_some_and(|at| at > 0 && at + 1 < decoded.len())
}

/// The largest char boundary of `s` at or below `i`.
pub(crate) fn floor_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_recognised() {
        for p in [
            "<YOUR_KEY>",
            "${VAR}",
            "your-api-key-here",
            "sk-...",
            "***",
            "xxxxxxxx",
            "sk_test_xxxxxxxxxxxxxxxx",
            "{{ secrets.TOKEN }}",
            "$DB_PASSWORD",
            "changeme",
            "[REDACTED]",
            "%API_KEY%",
        ] {
            assert!(is_placeholder(p), "{p}");
        }
        for s in [
            "hunter2fake",
            "Zq8!rT2@p",
            "ghp_4Fq9Lm2Rt7Wz0Xc3Vb6Nk1Jh8Gd5Sa2Pq4Ew",
        ] {
            assert!(!is_placeholder(s), "{s}");
        }
    }

    #[test]
    fn secret_store_references_name_a_secret_without_holding_it() {
        for r in [
            "vault:secret/data/prod/db#password",
            "\"vault:kv/app#api_key\"",
            "@Microsoft.KeyVault(SecretUri=https://acme-kv.vault.azure.net/secrets/db/)",
        ] {
            assert!(is_secret_reference(r) && is_placeholder(r), "{r}");
        }
        // Vault Transit ciphertext is no path; a password that merely starts with a word is no
        // reference.
        for v in [
            "vault:v1:q8Zt2LmR0vXw4NcB7yHa1KpD",
            "vaultQ8zt2LmR",
            "vault:",
        ] {
            assert!(!is_secret_reference(v), "{v}");
        }
    }

    #[test]
    fn openssh_public_keys_are_told_by_their_type_and_body() {
        assert!(is_ssh_public_key(
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIq8Zt2 me@host"
        ));
        assert!(is_ssh_public_key(
            "no-pty,no-port-forwarding sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1 k"
        ));
        assert!(is_ssh_public_key(
            "ssh-rsa-cert-v01@openssh.com AAAAHHNzaC1yc2E"
        ));
        assert!(!is_ssh_public_key("ssh-rsa is the key type"));
        assert!(is_ssh_key_type("sk-ecdsa-sha2-nistp256"));
        assert!(!is_ssh_key_type("sk-live-q8Zt2LmR0vXw4NcB"));
    }

    #[test]
    fn randomness_separates_keys_from_names() {
        assert!(looks_random("q8Rt2LmZ0vXw4NcB7yHa", 16));
        assert!(!looks_random("deployment-environment", 16));
        assert!(!looks_random("3f2b8c1e-9d4a-4e6b-8f1a-2c3d4e5f6a7b", 16));
        assert!(!looks_random("https://example.com/a1b2c3d4", 16));
        assert!(!looks_random("abc1", 16));
    }

    #[test]
    fn code_references_are_dotted_identifier_paths() {
        assert!(is_code_reference("os.environ"));
        assert!(is_code_reference("self.token"));
        assert!(!is_code_reference("hunter2"));
        assert!(!is_code_reference("a1b2c3d4e5.f6g7h8"));
    }
}
