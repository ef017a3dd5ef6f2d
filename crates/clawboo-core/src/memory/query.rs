//! Turning what a person or a model typed into an FTS5 `MATCH` expression that cannot fail.
//!
//! Owns: [`fts_query`]. Guarantees: the expression is only double-quoted words joined by `OR`, so
//! FTS5 operators, quotes, parentheses, `NEAR`, `*`, `:`, emoji and megabyte-long input are plain
//! words or nothing, never syntax; the expression is bounded ([`MAX_TERMS`] words). Must never:
//! splice the query into SQL (the expression is bound as a parameter).

/// At most this many distinct words of a query are searched for; the rest are ignored, so a
/// pasted 10 KB text costs the same as a sentence.
pub const MAX_TERMS: usize = 32;

/// At most this many characters of one word are kept (a longer "word" is noise).
const MAX_TERM_CHARS: usize = 64;

/// The `MATCH` expression for `text`: each distinct word (a run of Unicode letters and digits),
/// lower-cased and double-quoted, joined by `OR`; `None` when the text has no word. Stemming,
/// case and diacritic folding are left to the index's tokenizer, which sees each quoted word.
pub fn fts_query(text: &str) -> Option<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        if word.is_empty() {
            continue;
        }
        let term: String = word
            .chars()
            .take(MAX_TERM_CHARS)
            .flat_map(char::to_lowercase)
            .collect();
        if !terms.contains(&term) {
            terms.push(term);
            if terms.len() == MAX_TERMS {
                break;
            }
        }
    }
    if terms.is_empty() {
        return None;
    }
    let quoted: Vec<String> = terms.iter().map(|t| format!("\"{t}\"")).collect();
    Some(quoted.join(" OR "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operators_and_punctuation_become_quoted_words() {
        assert_eq!(
            fts_query(r#"alpha AND "beta) OR ("#).as_deref(),
            Some(r#""alpha" OR "and" OR "beta" OR "or""#)
        );
        assert_eq!(
            fts_query("NEAR(a b, 3) c*").as_deref(),
            Some(r#""near" OR "a" OR "b" OR "3" OR "c""#)
        );
    }

    #[test]
    fn no_words_means_no_query() {
        assert_eq!(fts_query("!!! ???"), None);
        assert_eq!(fts_query("🚀🔥 \n\t"), None);
        assert_eq!(fts_query(""), None);
    }

    #[test]
    fn unicode_words_stay_whole_and_repeats_are_searched_once() {
        assert_eq!(fts_query("Café café CAFÉ").as_deref(), Some(r#""café""#));
        assert_eq!(
            fts_query("日本語 テスト").as_deref(),
            Some(r#""日本語" OR "テスト""#)
        );
    }

    #[test]
    fn long_input_is_bounded() {
        let text: String = (0..5000).map(|i| format!("w{i} ")).collect();
        let q = fts_query(&text).unwrap();
        assert_eq!(q.matches(" OR ").count(), MAX_TERMS - 1);
        let one_long_word = "x".repeat(10_000);
        assert_eq!(fts_query(&one_long_word).unwrap().len(), MAX_TERM_CHARS + 2);
    }
}
