//! Spelling correction of a query word that no fact holds, from the index's own vocabulary.
//!
//! Owns: [`correct`]: for a word of [`MIN_LETTERS`] letters or more that matches nothing, the
//! stems of the full-text index (`clawboo_facts_newest_vocab`, an `fts5vocab` table over
//! `clawboo_facts_newest_fts`) that share its first three letters (then, when none is close, its first
//! two) are compared with the word: a stem is close when it is one edit (two for a word of
//! [`TWO_EDITS_FROM`] letters or more: a letter added, dropped, changed or two swapped) from the
//! word's own stem, or from the start of the word followed by at most [`MAX_SUFFIX`] letters (a
//! suffix the stemmer would have dropped: `developmnet` is close to `develop`). The closest one
//! is searched instead; among equals, the longer stem, then the one in the most facts.
//!
//! Guarantees: runs only for a word the index does not hold, so a query without a typo never
//! pays for it; reads at most [`MAX_SCANNED`] stems per prefix. Must never: correct a word into
//! one that the index would stem differently (the correction is searched as a word, so only a
//! stem that is its own stem is offered).

use rusqlite::Connection;

use super::super::MemoryError;
use super::stem::stem;

/// Shorter words are not corrected (too many words are one edit from them).
const MIN_LETTERS: usize = 4;
/// Words this long may be two edits from their correction.
const TWO_EDITS_FROM: usize = 8;
/// The most letters of a misspelt word that may follow the part compared with a stem.
const MAX_SUFFIX: usize = 4;
/// At most this many stems of the vocabulary are read per prefix.
const MAX_SCANNED: i64 = 5_000;

/// A correction: the word to search instead, and how many facts hold it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Fixed {
    pub(super) word: String,
    pub(super) facts: i64,
}

/// The closest stem of the index to `word` (lower-case, held by no fact), if one is close enough.
pub(super) fn correct(conn: &Connection, word: &str) -> Result<Option<Fixed>, MemoryError> {
    if word.len() < MIN_LETTERS || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return Ok(None);
    }
    let wanted = stem(word);
    let most = if word.len() >= TWO_EDITS_FROM { 2 } else { 1 };
    let mut scan = conn.prepare_cached(
        "SELECT term, doc FROM clawboo_facts_newest_vocab WHERE term >= ?1 AND term < ?2 LIMIT ?3",
    )?;
    for prefix_len in [3, 2] {
        let prefix = &word[..prefix_len];
        let mut after = prefix.as_bytes().to_vec();
        // ASCII lower-case, so the last byte is below `z` + 1 and the range is a prefix range.
        if let Some(last) = after.last_mut() {
            *last += 1;
        }
        let after = String::from_utf8(after).unwrap_or_default();
        let mut best: Option<(usize, Fixed)> = None;
        let rows = scan.query_map(rusqlite::params![prefix, after, MAX_SCANNED], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
        })?;
        for row in rows {
            let (term, facts) = row?;
            let Some(distance) = closeness(word, &wanted, &term, most) else {
                continue;
            };
            if term.len() < 3 || stem(&term) != term {
                continue;
            }
            let better = best.as_ref().is_none_or(|(d, b)| {
                (
                    distance,
                    std::cmp::Reverse(term.len()),
                    std::cmp::Reverse(facts),
                ) < (
                    *d,
                    std::cmp::Reverse(b.word.len()),
                    std::cmp::Reverse(b.facts),
                )
            });
            if better {
                best = Some((distance, Fixed { word: term, facts }));
            }
        }
        if let Some((_, fixed)) = best {
            return Ok(Some(fixed));
        }
    }
    Ok(None)
}

/// How far `stem` (of the index) is from the misspelt `word` (whose stem is `word_stem`): the
/// fewest edits from the word's stem, or one more than from a start of the word that leaves at
/// most [`MAX_SUFFIX`] letters (a guess about the suffix counts as an edit); `None` when above
/// `most`.
fn closeness(word: &str, word_stem: &str, stem: &str, most: usize) -> Option<usize> {
    let whole = distance(word_stem, stem, most);
    let lengths = stem.len().saturating_sub(1).max(1)..=(stem.len() + 1).min(word.len());
    let start = lengths
        .filter(|&k| word.len() - k <= MAX_SUFFIX)
        .filter_map(|k| distance(&word[..k], stem, most))
        .min()
        .map(|d| d + usize::from(word.len() > stem.len()))
        .filter(|&d| d <= most);
    whole.into_iter().chain(start).min()
}

/// The edit distance between `a` and `b` (insertions, deletions, substitutions and swaps of two
/// neighbours each count one), or `None` when it is above `most`.
fn distance(a: &str, b: &str, most: usize) -> Option<usize> {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len().abs_diff(b.len()) > most {
        return None;
    }
    // Three rows of the classic table: two back (for swaps), one back, and this one.
    let mut before: Vec<usize> = Vec::new();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut row = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (previous[j] + 1)
                .min(row[j - 1] + 1)
                .min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        if row.iter().min().is_some_and(|&m| m > most) {
            return None;
        }
        before = std::mem::replace(&mut previous, row);
    }
    let d = previous[b.len()];
    (d <= most).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_counts_one_edit_each_and_gives_up_past_the_bound() {
        assert_eq!(distance("current", "current", 1), Some(0));
        assert_eq!(distance("cujrent", "current", 1), Some(1));
        assert_eq!(distance("curent", "current", 1), Some(1));
        assert_eq!(distance("crurent", "current", 1), Some(1), "a swap");
        assert_eq!(distance("cxrrxnt", "current", 1), None);
        assert_eq!(distance("cxrrxnt", "current", 2), Some(2));
        assert_eq!(distance("cur", "current", 2), None);
    }

    #[test]
    fn a_stem_is_close_to_a_misspelt_word_it_starts() {
        assert_eq!(
            closeness("developmnet", &stem("developmnet"), "develop", 2),
            Some(1)
        );
        assert_eq!(
            closeness("avaialble", &stem("avaialble"), "avail", 2),
            Some(2)
        );
        assert_eq!(
            closeness("worksace", &stem("worksace"), "workspac", 2),
            Some(1)
        );
        assert_eq!(closeness("worksace", &stem("worksace"), "work", 2), Some(1));
        assert_eq!(
            closeness("cujrently", &stem("cujrently"), "current", 2),
            Some(1)
        );
        assert_eq!(closeness("zephr", &stem("zephr"), "zephyr", 1), Some(1));
        assert_eq!(
            closeness("developmnet", &stem("developmnet"), "devil", 2),
            None
        );
    }
}
