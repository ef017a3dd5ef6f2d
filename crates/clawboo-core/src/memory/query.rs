//! Turning what a person or a model typed into words and FTS5 `MATCH` expressions that cannot
//! fail.
//!
//! Owns: [`fts_query`], [`words`] (the query's words in order), the English stop-word list
//! ([`is_stop_word`]) and [`match_any`]. Guarantees: an expression is only double-quoted words
//! joined by `OR` (which the planner groups with parentheses and `AND`), so FTS5 operators,
//! quotes, parentheses, `NEAR`,
//! `*`, `:`, emoji and megabyte-long input are plain words or nothing, never syntax; everything is
//! bounded ([`MAX_TERMS`] words). Must never: splice the query into SQL (expressions are bound as
//! parameters).

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
    for term in words(text) {
        if !terms.contains(&term) {
            terms.push(term);
        }
    }
    (!terms.is_empty()).then(|| match_any(&terms))
}

/// The words of `text` in order (runs of Unicode letters and digits, lower-cased, each cut to 64
/// characters), at most [`MAX_TERMS`] distinct ones; repeats are kept, in place.
pub fn words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut distinct = 0;
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        if word.is_empty() {
            continue;
        }
        let term: String = word
            .chars()
            .take(MAX_TERM_CHARS)
            .flat_map(char::to_lowercase)
            .collect();
        if !out.contains(&term) {
            if distinct == MAX_TERMS {
                break;
            }
            distinct += 1;
        }
        out.push(term);
    }
    out
}

/// `"a" OR "b" OR …`: rows holding any term.
pub fn match_any(terms: &[impl AsRef<str>]) -> String {
    let quoted: Vec<String> = terms
        .iter()
        .map(|t| format!("\"{}\"", t.as_ref().replace('"', "")))
        .collect();
    quoted.join(" OR ")
}

/// English words so common that matching them says nothing about relevance: they are left out
/// of what is matched and ranked (a query made only of them still searches them).
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
    "before", "being", "between", "both", "but", "by", "can", "could", "did", "do", "does",
    "doing", "done", "each", "either", "else", "for", "from", "had", "has", "have", "having", "he",
    "her", "here", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "may", "me",
    "might", "more", "most", "much", "must", "my", "no", "nor", "not", "now", "of", "off", "on",
    "once", "one", "only", "or", "other", "our", "out", "over", "own", "s", "same", "shall", "she",
    "should", "so", "some", "such", "than", "that", "the", "their", "them", "then", "there",
    "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "upon", "us",
    "very", "was", "we", "were", "what", "when", "where", "whether", "which", "while", "who",
    "whom", "why", "will", "with", "within", "without", "would", "yet", "you", "your",
];

/// Whether `word` (lower-case) is an English stop word.
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
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
    fn the_stop_word_list_is_sorted_and_knows_the_common_words() {
        assert!(
            STOP_WORDS.windows(2).all(|w| w[0] < w[1]),
            "sorted, no repeats"
        );
        for word in ["the", "of", "to", "is", "a", "which"] {
            assert!(is_stop_word(word), "{word}");
        }
        for word in ["deploy", "tokio", "theory", "ofx"] {
            assert!(!is_stop_word(word), "{word}");
        }
    }

    #[test]
    fn words_keep_their_order_and_repeats_and_expressions_quote_them() {
        assert_eq!(
            words("To be, or NOT to be!"),
            ["to", "be", "or", "not", "to", "be"]
        );
        assert_eq!(match_any(&["a"]), r#""a""#);
        let many: String = (0..100).map(|i| format!("w{} w0 ", i)).collect();
        let got = words(&many);
        let mut distinct = got.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), MAX_TERMS);
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
