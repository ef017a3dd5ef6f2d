//! The scrubbed, size-bounded summaries the broker stores (audit rows, approval rows) and the
//! second masking pass at the operator boundary. Every secret rule is the core scrubber's
//! ([`crate::scrub`]); this module only decides what is scrubbed and how long it may be.

use serde_json::Value;

use crate::scrub::{scrub_json, scrub_secrets};

/// The longest stored arguments summary, in characters, before `…`.
const MAX_ARGS_SUMMARY: usize = 4000;

/// The longest stored result summary, in characters, before `…`.
const MAX_RESULT_SUMMARY: usize = 8000;

fn truncate(text: String, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}\u{2026}", &text[..cut]),
        None => text,
    }
}

/// Arguments as stored: secret-named keys and secret-looking values masked, rendered as compact
/// JSON, the value rules run once more over the rendering (a secret in a key name), cut to 4000
/// characters plus `…`.
pub fn args_summary(args: &Value) -> String {
    let rendered = serde_json::to_string(&scrub_json(args)).unwrap_or_default();
    truncate(scrub_secrets(&rendered), MAX_ARGS_SUMMARY)
}

/// A result as stored: secret-looking values masked, cut to 8000 characters plus `…`.
pub fn result_summary(text: &str) -> String {
    truncate(scrub_secrets(text), MAX_RESULT_SUMMARY)
}

/// A stored summary as shown to a person: masked again (defense in depth over the write-time
/// scrub, for rows another writer stored). JSON is re-rendered compactly; other text is masked as
/// text.
pub fn for_display(stored: &str) -> String {
    match serde_json::from_str::<Value>(stored) {
        Ok(value @ (Value::Object(_) | Value::Array(_))) => {
            serde_json::to_string(&scrub_json(&value)).unwrap_or_default()
        }
        _ => scrub_secrets(stored),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secret_keys_and_values_are_masked_and_counts_survive() {
        let out = args_summary(&json!({
            "apiKey": "sk-abcdef1234567890",
            "note": "authorize with Bearer abcdefghijklmno",
            "n": 5
        }));
        assert_eq!(
            out,
            r#"{"apiKey":"[REDACTED]","note":"authorize with [REDACTED]","n":5}"#
        );
        let counts = json!({"inputTokens": 12, "totalTokens": 34, "author": "me"});
        assert_eq!(args_summary(&counts), counts.to_string());
        let both = args_summary(&json!({"authorization": "Basic abc", "accessToken": "x"}));
        assert_eq!(
            both,
            r#"{"authorization":"[REDACTED]","accessToken":"[REDACTED]"}"#
        );
    }

    #[test]
    fn nested_secrets_do_not_leak() {
        let out = args_summary(
            &json!({"a": {"token": "secretvalue"}, "b": ["plain", "sk-zzzzzzzzzzzz"]}),
        );
        assert!(!out.contains("secretvalue"), "{out}");
        assert!(!out.contains("sk-zzzz"), "{out}");
        assert!(out.contains("plain"));
    }

    #[test]
    fn a_secret_used_as_a_key_is_masked_by_the_second_pass() {
        let out = args_summary(&json!({"AKIAFAKEFAKEFAKE1234": 1}));
        assert!(!out.contains("AKIAFAKE"), "{out}");
    }

    #[test]
    fn long_summaries_are_cut_with_an_ellipsis() {
        let out = args_summary(&json!({"message": "é".repeat(5000)}));
        assert_eq!(out.chars().count(), 4001);
        assert!(out.ends_with('\u{2026}'));
        let result = result_summary(&"x".repeat(9000));
        assert_eq!(result.chars().count(), 8001);
        assert_eq!(result_summary("short"), "short");
    }

    #[test]
    fn display_masks_again_and_compacts_json() {
        assert_eq!(
            for_display(r#"{"password": "hunter2hunter2", "a": 1}"#),
            r#"{"password":"[REDACTED]","a":1}"#
        );
        assert_eq!(for_display("key sk-abcdef1234567890"), "key [REDACTED]");
        assert_eq!(for_display("hello"), "hello");
    }
}
