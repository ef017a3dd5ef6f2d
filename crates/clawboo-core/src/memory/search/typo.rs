//! Spelling correction of a query word that no fact holds, from the index's own vocabulary.
//!
//! Owns: [`corrections`]: for a word of [`MIN_LETTERS`] letters or more that matches nothing, the
//! stems of the full-text index of facts that start as the word does (listed by `lexicon`) are
//! compared with it: those sharing its first three letters, or the first three letters it would
//! have with one of its first four letters dropped or two of them swapped (`mmatches`, `fnuction`);
//! when none of those is close, those sharing its first two. A stem is compared as it is spelt in a
//! word: followed by each of the [`ENDINGS`] the stemmer strips (`featur` + `e`, `order` + `ing`; a
//! final `e` dropped before a vowel, a final `i` spelt `y`), and it is close when one of those
//! spellings is one edit from the word (two for a word of [`TWO_EDITS_FROM`] letters or more: a
//! letter added, dropped, changed or two swapped). Comparing spellings, not stems, keeps a short
//! stem that the word merely starts with (`how` for `howeevr`) from passing as one edit away. The
//! closest are offered, most facts first (a common word is the likelier meant: counted by the
//! `fts5vocab` table `clawboo_facts_newest_vocab`, for a close stem only, since counting walks its
//! rows); `plan` chooses among equally close ones by the query's neighbouring words.
//!
//! Guarantees: runs only for a word the index does not hold, so a query without a typo never
//! pays for it; compares at most [`MAX_SCANNED`] stems per prefix. Must never: correct a word into
//! one that the index would stem differently (the correction is searched as a word, so only a
//! stem that is its own stem is offered).

use rusqlite::{Connection, OptionalExtension};

use super::super::MemoryError;
use super::lexicon::Lexicon;
use super::stem::stem;

/// Shorter words are not corrected (too many words are one edit from them).
const MIN_LETTERS: usize = 4;
/// Words this long may be two edits from their correction.
const TWO_EDITS_FROM: usize = 8;
/// At most this many stems of the vocabulary are compared per prefix (the first, in byte order).
const MAX_SCANNED: usize = 5_000;
/// At most this many equally close corrections are offered.
const MAX_CHOICES: usize = 4;
/// The endings a stem is tried with, as a word spells them after it: what the stemmer strips.
const ENDINGS: &[&str] = &[
    "", "e", "s", "es", "ed", "ing", "ings", "er", "ers", "ly", "ion", "ions", "ation", "ations",
    "ment", "ments", "ness", "able", "ible", "al", "ally", "ity", "ive", "ives", "ize", "ized",
    "ous", "ent", "ence", "ance", "ant", "ic", "ical", "ful", "or", "ors", "ure", "ures",
];

/// A correction: the word to search instead, and how many facts hold it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Fixed {
    pub(super) word: String,
    pub(super) facts: i64,
}

/// The stems of the index closest to `word` (lower-case, held by no fact), if any is close
/// enough: those at the least distance, most facts first, at most [`MAX_CHOICES`].
pub(super) fn corrections(conn: &Connection, word: &str) -> Result<Vec<Fixed>, MemoryError> {
    if word.len() < MIN_LETTERS || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return Ok(Vec::new());
    }
    let most = if word.len() >= TWO_EDITS_FROM { 2 } else { 1 };
    let mut facts_of =
        conn.prepare_cached("SELECT doc FROM clawboo_facts_newest_vocab WHERE term = ?1")?;
    let lexicon = Lexicon::of(conn)?;
    for prefixes in [three_letter_starts(word), vec![word[..2].to_owned()]] {
        let mut best: Option<usize> = None;
        let mut closest: Vec<Fixed> = Vec::new();
        for prefix in &prefixes {
            for term in lexicon.words_starting(prefix, MAX_SCANNED)? {
                if term.len() < 3 {
                    continue;
                }
                let Some(distance) = closeness(word, &term, most) else {
                    continue;
                };
                if best.is_some_and(|b| distance > b)
                    || stem(&term) != term
                    || closest.iter().any(|c| c.word == term)
                {
                    continue;
                }
                // Counted only for a close word (walking its rows); a word whose every fact
                // was deleted is none.
                let facts: i64 = facts_of
                    .query_row([&term], |r| r.get(0))
                    .optional()?
                    .unwrap_or(0);
                if facts == 0 {
                    continue;
                }
                if best.is_none_or(|b| distance < b) {
                    best = Some(distance);
                    closest.clear();
                }
                closest.push(Fixed { word: term, facts });
            }
        }
        if !closest.is_empty() {
            closest.sort_by_key(|c| std::cmp::Reverse(c.facts));
            closest.truncate(MAX_CHOICES);
            return Ok(closest);
        }
    }
    Ok(Vec::new())
}

/// The first three letters of `word` (at least four letters long), and of each word that
/// dropping one of its second to fourth letters or swapping two neighbours among its first four
/// would give, once each (dropping the first letter makes a new word of too many typos:
/// `rturned`, `turned`).
fn three_letter_starts(word: &str) -> Vec<String> {
    let head: Vec<u8> = word.bytes().take(4).collect();
    let mut variants: Vec<Vec<u8>> = vec![head.clone()];
    for at in 0..head.len() {
        if at > 0 {
            let mut dropped = head.clone();
            dropped.remove(at);
            variants.push(dropped);
        }
        if at + 1 < head.len() {
            let mut swapped = head.clone();
            swapped.swap(at, at + 1);
            variants.push(swapped);
        }
    }
    let mut starts: Vec<String> = Vec::new();
    for variant in variants {
        let start = String::from_utf8_lossy(&variant[..3]).into_owned();
        if !starts.contains(&start) {
            starts.push(start);
        }
    }
    starts
}

/// How far the misspelt `word` is from the nearest spelling of `stem` (the stem followed by one
/// of the [`ENDINGS`]), or `None` when above `most`. (Called for every word of a prefix's range,
/// so each spelling is built in one buffer.)
fn closeness(word: &str, stem: &str, most: usize) -> Option<usize> {
    // The stemmer spells a final `y` as `i` (`reli` of `relying`).
    let y_spelt = stem.strip_suffix('i').map(|head| format!("{head}y"));
    let mut spelling = String::new();
    let mut closest: Option<usize> = None;
    for base in std::iter::once(stem).chain(y_spelt.as_deref()) {
        for ending in ENDINGS {
            // A final `e` is dropped before an ending that starts with a vowel (`take`, `taking`).
            let base = match (base.strip_suffix('e'), ending.chars().next()) {
                (Some(head), Some('a' | 'e' | 'i' | 'o' | 'u')) => head,
                _ => base,
            };
            if word.len().abs_diff(base.len() + ending.len()) > most {
                continue;
            }
            spelling.clear();
            spelling.push_str(base);
            spelling.push_str(ending);
            if let Some(d) = distance(word, &spelling, most) {
                closest = Some(closest.map_or(d, |c| c.min(d)));
            }
        }
    }
    closest
}

/// The edit distance between `a` and `b` (insertions, deletions, substitutions and swaps of two
/// neighbours each count one), or `None` when it is above `most`.
fn distance(a: &str, b: &str, most: usize) -> Option<usize> {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len().abs_diff(b.len()) > most {
        return None;
    }
    // Three rows of the classic table: two back (for swaps), one back, and this one.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut row: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        row[0] = i;
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
        // The rows move back one: this one becomes the one back, that one two back.
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut row);
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
    fn a_stem_is_close_when_a_spelling_of_it_is() {
        assert_eq!(closeness("developmnet", "develop", 2), Some(1));
        assert_eq!(closeness("avaialble", "avail", 2), Some(1));
        assert_eq!(closeness("worksace", "workspac", 2), Some(1));
        assert_eq!(closeness("cujrently", "current", 2), Some(1));
        assert_eq!(closeness("zephr", "zephyr", 1), Some(1));
        assert_eq!(closeness("takng", "take", 1), Some(1), "taking");
        assert_eq!(closeness("rtelying", "reli", 2), Some(1), "relying");
        assert_eq!(closeness("feture", "featur", 1), Some(1), "feature");
        assert_eq!(closeness("developmnet", "devil", 2), None);
        // `how` followed by an ending is no spelling near `howeevr`, though the word starts with it.
        assert_eq!(closeness("howeevr", "how", 1), None);
        assert_eq!(closeness("compiel", "compact", 1), None);
        assert_eq!(closeness("howeevr", "howev", 1), Some(1));
    }

    #[test]
    fn a_close_word_whose_facts_were_deleted_is_no_correction() {
        use crate::memory::{Embedder, Memory, NewFact, WriteScope};
        let memory = Memory::new(crate::db::Db::open_in_memory().unwrap(), Embedder::none());
        let save = |content: &str| {
            let new = NewFact {
                title: "plants",
                content,
                tags: &[],
            };
            memory.save_fact(&new, &WriteScope::default()).unwrap().id
        };
        save("The gardener waters the roses");
        let gone = save("A gardenia needs acid soil");
        let conn = || memory.db().conn();
        // `gardenna` is one edit from `gardenia`, two from `gardener`.
        let words = |fixes: Vec<Fixed>| fixes.into_iter().map(|f| f.word).collect::<Vec<_>>();
        assert_eq!(
            words(corrections(&conn(), "gardenna").unwrap()),
            ["gardenia"]
        );
        memory.delete(&gone).unwrap();
        assert!(
            Lexicon::of(&conn())
                .unwrap()
                .words_starting("gar", 100)
                .unwrap()
                .contains(&"gardenia".to_owned()),
            "the index still names the deleted word (its delete is not merged yet)"
        );
        assert_eq!(words(corrections(&conn(), "gardenna").unwrap()), ["garden"]);
    }

    #[test]
    fn a_typo_in_the_first_letters_still_reaches_its_stem() {
        let starts = three_letter_starts("mmatches");
        assert!(starts.contains(&"mma".to_owned()), "{starts:?}");
        assert!(starts.contains(&"mat".to_owned()), "{starts:?}");
        assert!(three_letter_starts("fnuction").contains(&"fun".to_owned()));
        assert!(three_letter_starts("rpeady").contains(&"rea".to_owned()));
        let unique = three_letter_starts("aaaa");
        assert_eq!(unique, ["aaa"]);
    }
}
