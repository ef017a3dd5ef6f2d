//! The verdict on an assigned value: a literal secret, or a placeholder, a reference to another
//! name, a type, a path, a label. The same value can be either under different separators
//! (`password = token` is code, `password: token` is YAML), so the separator and what follows
//! the value take part.
//!
//! Guarantees: a pure function of the value, its key and its context; linear in the value's
//! length. Must never: mask a placeholder or a reference ([`crate::scrub::value`] says what those
//! look like).

use super::Sep;
use super::names::{Strength, classify, words};
use crate::scrub::value::{
    decodes_to_credentials, entropy, is_code_reference, is_path, is_placeholder, is_ssh_public_key,
    is_uuid, is_word_chain, looks_random, reads_as_words,
};

/// Values of a `key: value` that are types or keywords, not secrets (sorted, for bisection).
#[rustfmt::skip]
const TYPE_WORDS: &[&str] = &[
    "&str", "any", "auto", "bool", "boolean", "bytes", "char", "const", "data", "disabled", "dyn",
    "enabled", "env", "environment", "false", "file", "fn", "func", "function", "hidden", "i32",
    "i64", "impl", "inherit", "int", "integer", "keychain", "keyring", "lambda", "mut", "n/a",
    "nil", "no", "none", "null", "number", "object", "off", "on", "optional", "prompt", "pub",
    "required", "secretstr", "secretstring", "self", "static", "stdin", "str", "str?", "string",
    "string?", "text", "this", "true", "u32", "u64", "u8", "undefined", "unknown", "usize", "value",
    "varchar", "vault", "void", "yes",
];

/// Words of prompts and labels that a generated passphrase does not hold (sorted, for bisection).
#[rustfmt::skip]
const FUNCTION_WORDS: &[&str] = &[
    "a", "all", "an", "and", "are", "as", "at", "be", "by", "can", "do", "enter", "for", "from",
    "here", "if", "in", "is", "it", "must", "new", "no", "not", "of", "on", "or", "please", "see",
    "set", "should", "that", "the", "this", "to", "type", "use", "will", "with", "you", "your",
];

/// Whether an assigned value is a literal secret rather than a placeholder, a reference or a type.
#[allow(clippy::too_many_arguments)]
pub(super) fn value_is_secret(
    key: &str,
    value: &str,
    glued: bool,
    quoted: bool,
    next: Option<u8>,
    sep: Sep,
    strength: Strength,
    upper_env: bool,
) -> bool {
    let v = value.trim();
    if v.is_empty() || is_placeholder(v) || v.contains("://") || v.starts_with("arn:") {
        return false;
    }
    if sep == Sep::Argument && !quoted {
        return false;
    }
    if is_ssh_public_key(v) || ["pk_live_", "pk_test_"].iter().any(|p| v.starts_with(p)) {
        return false;
    }
    let lower = v.to_ascii_lowercase();
    let same_as_key = squashed(v).eq(squashed(key));
    if same_as_key {
        return false;
    }
    // A sentence ("Enter your password") is a label or a prompt, not a secret; so is an
    // element's text of two words ("New password").
    let sentence = v.split_whitespace().count() >= if quoted { 3 } else { 2 }
        && v.split_whitespace().all(|w| {
            w.trim_end_matches(['.', ',', ':', '!', '?'])
                .bytes()
                .all(|c| c.is_ascii_alphabetic() || c == b'\'')
        });
    // Lowercase words with no function word among them are a passphrase ("correct horse battery
    // staple"), not a label.
    let passphrase = quoted
        && strength == Strength::Password
        && v.split_whitespace().all(|w| {
            w.bytes().all(|c| c.is_ascii_lowercase()) && FUNCTION_WORDS.binary_search(&w).is_err()
        });
    if sentence && !passphrase && (quoted || sep == Sep::Element) {
        return false;
    }
    if quoted {
        // `secretName: my-app-secret`: a name that repeats its own key word.
        if is_word_chain(v) && words(key).iter().any(|w| lower.contains(w.as_str())) {
            return false;
        }
    } else {
        let generic = next == Some(b'<') && sep != Sep::Element;
        if matches!(next, Some(b'(' | b'[')) || generic || is_code_reference(v) {
            return false;
        }
        if TYPE_WORDS.binary_search(&lower.as_str()).is_ok()
            || v.starts_with(['&', '*', '?', '|', '>'])
        {
            return false;
        }
        if v.ends_with(['/', '\\']) && !looks_random(v, 16) || is_path(v) {
            return false;
        }
        if sep == Sep::Colon && is_pascal_type(v) {
            return false;
        }
        // `credentials:edit`, `secret:list`: a namespaced command, not `key: value`.
        if sep == Sep::Colon && glued && v.bytes().all(|c| c.is_ascii_lowercase()) {
            return false;
        }
        let literal_looking = v.bytes().any(|c| !c.is_ascii_alphabetic() && c != b'_');
        // `password = sunshine` (an INI or `.pypirc` line) is a weak password: a variable in
        // code has a hump or an underscore in its name (`userPassword`, `new_password`) or
        // names a secret itself (`password = passphrase`).
        let weak_password = strength == Strength::Password
            && v.bytes().all(|c| c.is_ascii_lowercase())
            && classify(v, "", false).is_none();
        if sep == Sep::SpacedEquals && !literal_looking && reads_as_words(v) && !weak_password {
            return false;
        }
        if is_word_chain(v) && words(key).iter().any(|w| lower.contains(w.as_str())) {
            return false;
        }
    }
    let len = v.chars().count();
    if upper_env {
        return len >= 3;
    }
    match strength {
        Strength::Password => len >= 4,
        Strength::Token => len >= 8 && !(v.bytes().all(|c| c.is_ascii_digit()) && len < 12),
        // `key="ClearTextPassword"` (a NuGet.Config entry): a name in words is not a key.
        _ => {
            looks_random(v, 16)
                || len >= 16
                    && entropy(v) >= 3.5
                    && !is_uuid(v)
                    && !(v.bytes().all(|c| c.is_ascii_alphabetic()) && reads_as_words(v))
                || decodes_to_credentials(v)
        }
    }
}

/// The letters and digits of `s`, lowercased (`DB-Password` and `db_password` are the same).
fn squashed(s: &str) -> impl Iterator<Item = u8> + '_ {
    s.bytes()
        .filter(u8::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
}

/// `SecretString`, `ApiKey`, `Token`: a type name after a colon.
fn is_pascal_type(v: &str) -> bool {
    let b = v.as_bytes();
    b[0].is_ascii_uppercase()
        && b.iter().all(u8::is_ascii_alphanumeric)
        && b[1..].iter().any(u8::is_ascii_lowercase)
        && b.iter().filter(|c| c.is_ascii_digit()).count() == 0
        && reads_as_words(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_lists_are_sorted_for_bisection() {
        for list in [TYPE_WORDS, FUNCTION_WORDS] {
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{list:?}");
        }
    }
}
