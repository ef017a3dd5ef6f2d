//! Words as the full-text index sees them: split, lower-cased and reduced to their Porter stems,
//! so the ranking compares a query with a stored text the way the index matched them.
//!
//! Owns: [`stem`], M. F. Porter's 1980 algorithm as SQLite's `porter` tokenizer applies it (words
//! of fewer than 3 or more than 64 characters, or with a character outside `a`–`z`, are kept as
//! they are); [`key`], a word's family (its stem, with the `y` Porter turns into `i` put back, so
//! `deploy`, `deployed` and `deployment` share one although the index stems them `deploi`,
//! `deploi`, `deploy`); and [`forms`], the words to
//! ask the index for so that it matches every stem of a word's family.
//!
//! Guarantees: the same word always gives the same key. Must never: grow a word by more than the
//! few letters of one suffix.

/// Longer words are kept whole, as the index's tokenizer does.
const MAX_STEMMED: usize = 64;

/// The family of a lower-case `word`: its stem, ending in `y` where Porter made that `y` an `i`.
pub(super) fn key(word: &str) -> String {
    let mut stem = stem(word);
    if y_made_i(&stem) {
        stem.pop();
        stem.push('y');
    }
    stem
}

/// Whether `stem` ends in a vowel and `i`, an `i` that Porter made of a `y` (`deploi`).
fn y_made_i(stem: &str) -> bool {
    let b = stem.as_bytes();
    b.len() >= 3 && b[b.len() - 1] == b'i' && matches!(b[b.len() - 2], b'a' | b'e' | b'o' | b'u')
}

/// The words to match so that the index finds every form of a lower-case `word`'s family: the
/// word, and when its family has a second stem in the index (`deploi` and `deploy`), a word
/// the index stems to the other one.
pub(super) fn forms(word: &str) -> Vec<String> {
    let stemmed = stem(word);
    let other = if y_made_i(&stemmed) {
        // `deploi` (deploy, deployed): `deployment` is stemmed `deploy`.
        format!("{}yment", &stemmed[..stemmed.len() - 1])
    } else if stemmed.len() >= 3
        && stemmed.ends_with('y')
        && matches!(
            stemmed.as_bytes()[stemmed.len() - 2],
            b'a' | b'e' | b'o' | b'u'
        )
    {
        // `deploy` (deployment): `deploy` itself is stemmed `deploi`.
        stemmed.clone()
    } else {
        return vec![word.to_owned()];
    };
    if stem(&other) == stemmed {
        return vec![word.to_owned()];
    }
    vec![word.to_owned(), other]
}

/// The Porter stem of a lower-case `word`.
pub(super) fn stem(word: &str) -> String {
    if word.len() < 3 || word.len() > MAX_STEMMED || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return word.to_owned();
    }
    let mut w = Word(word.as_bytes().to_vec());
    w.step1ab();
    w.step1c();
    w.step2();
    w.step3();
    w.step4();
    w.step5();
    // Only ASCII letters were ever pushed, so this cannot fail.
    String::from_utf8(w.0).unwrap_or_else(|_| word.to_owned())
}

/// A word being stemmed (ASCII lower-case letters).
struct Word(Vec<u8>);

impl Word {
    /// Whether the letter at `i` is a consonant (`y` is one at the start or after a vowel).
    fn consonant(&self, i: usize) -> bool {
        match self.0[i] {
            b'a' | b'e' | b'i' | b'o' | b'u' => false,
            b'y' => i == 0 || !self.consonant(i - 1),
            _ => true,
        }
    }

    /// The measure of the first `len` letters: how many vowel-consonant sequences they hold.
    fn measure(&self, len: usize) -> usize {
        let mut m = 0;
        let mut i = 0;
        while i < len && self.consonant(i) {
            i += 1;
        }
        loop {
            while i < len && !self.consonant(i) {
                i += 1;
            }
            if i >= len {
                return m;
            }
            while i < len && self.consonant(i) {
                i += 1;
            }
            m += 1;
        }
    }

    fn has_vowel(&self, len: usize) -> bool {
        (0..len).any(|i| !self.consonant(i))
    }

    /// Whether the first `len` letters end in a double consonant.
    fn double_consonant(&self, len: usize) -> bool {
        len >= 2 && self.0[len - 1] == self.0[len - 2] && self.consonant(len - 1)
    }

    /// Whether the first `len` letters end consonant-vowel-consonant, the last not `w`, `x`, `y`.
    fn cvc(&self, len: usize) -> bool {
        len >= 3
            && self.consonant(len - 1)
            && !self.consonant(len - 2)
            && self.consonant(len - 3)
            && !matches!(self.0[len - 1], b'w' | b'x' | b'y')
    }

    fn ends(&self, suffix: &str) -> bool {
        self.0.ends_with(suffix.as_bytes())
    }

    /// The length of the word without `suffix` (which it ends with).
    fn stem_len(&self, suffix: &str) -> usize {
        self.0.len() - suffix.len()
    }

    fn replace(&mut self, suffix: &str, with: &str) {
        let keep = self.stem_len(suffix);
        self.0.truncate(keep);
        self.0.extend_from_slice(with.as_bytes());
    }

    /// Replaces the first of `rules`' suffixes the word ends with, when the stem before it has a
    /// measure above `min_measure`; at most one rule applies.
    fn apply(&mut self, rules: &[(&str, &str)], min_measure: usize) {
        if let Some((suffix, with)) = rules.iter().find(|(s, _)| self.ends(s))
            && self.measure(self.stem_len(suffix)) > min_measure
        {
            self.replace(suffix, with);
        }
    }

    /// Plurals, `-ed` and `-ing`.
    fn step1ab(&mut self) {
        if self.ends("sses") {
            self.replace("sses", "ss");
        } else if self.ends("ies") {
            self.replace("ies", "i");
        } else if !self.ends("ss") && self.ends("s") {
            self.replace("s", "");
        }
        if self.ends("eed") {
            if self.measure(self.stem_len("eed")) > 0 {
                self.replace("eed", "ee");
            }
            return;
        }
        let Some(suffix) = ["ed", "ing"]
            .into_iter()
            .find(|s| self.ends(s) && self.has_vowel(self.stem_len(s)))
        else {
            return;
        };
        self.replace(suffix, "");
        let len = self.0.len();
        if self.ends("at") || self.ends("bl") || self.ends("iz") {
            self.0.push(b'e');
        } else if self.double_consonant(len) && !matches!(self.0[len - 1], b'l' | b's' | b'z') {
            self.0.pop();
        } else if self.measure(len) == 1 && self.cvc(len) {
            self.0.push(b'e');
        }
    }

    /// A final `y` after a vowel in the stem becomes `i`.
    fn step1c(&mut self) {
        if self.ends("y") && self.has_vowel(self.0.len() - 1) {
            self.replace("y", "i");
        }
    }

    /// Double suffixes to single ones.
    fn step2(&mut self) {
        const RULES: &[(&str, &str)] = &[
            ("ational", "ate"),
            ("tional", "tion"),
            ("enci", "ence"),
            ("anci", "ance"),
            ("izer", "ize"),
            ("bli", "ble"),
            ("alli", "al"),
            ("entli", "ent"),
            ("eli", "e"),
            ("ousli", "ous"),
            ("ization", "ize"),
            ("ation", "ate"),
            ("ator", "ate"),
            ("alism", "al"),
            ("iveness", "ive"),
            ("fulness", "ful"),
            ("ousness", "ous"),
            ("aliti", "al"),
            ("iviti", "ive"),
            ("biliti", "ble"),
            ("logi", "log"),
        ];
        self.apply(RULES, 0);
    }

    /// `-ic-`, `-full`, `-ness` and the like.
    fn step3(&mut self) {
        const RULES: &[(&str, &str)] = &[
            ("icate", "ic"),
            ("ative", ""),
            ("alize", "al"),
            ("iciti", "ic"),
            ("ical", "ic"),
            ("ful", ""),
            ("ness", ""),
        ];
        self.apply(RULES, 0);
    }

    /// Single suffixes, in a stem of measure above 1 (`-ion` only after `s` or `t`).
    fn step4(&mut self) {
        const SUFFIXES: &[&str] = &[
            "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion",
            "ou", "ism", "ate", "iti", "ous", "ive", "ize",
        ];
        // The longest suffix that matches decides (`ement` before `ment` before `ent`).
        let Some(suffix) = SUFFIXES
            .iter()
            .filter(|s| self.ends(s))
            .max_by_key(|s| s.len())
        else {
            return;
        };
        let len = self.stem_len(suffix);
        if *suffix == "ion" && !(len > 0 && matches!(self.0[len - 1], b's' | b't')) {
            return;
        }
        if self.measure(len) > 1 {
            self.0.truncate(len);
        }
    }

    /// A final `e`, and a final `ll`.
    fn step5(&mut self) {
        let len = self.0.len();
        if self.ends("e") {
            let m = self.measure(len - 1);
            if m > 1 || (m == 1 && !self.cvc(len - 1)) {
                self.0.pop();
            }
        }
        let len = self.0.len();
        if self.ends("ll") && self.measure(len) > 1 {
            self.0.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_forms_share_a_key() {
        for forms in [
            &["deploy", "deployed", "deploying", "deployment", "deploys"][..],
            &["configure", "configured", "configuring", "configuration"],
            &["connect", "connected", "connection", "connections"],
            &["run", "running", "runs"],
            &["allocate", "allocated", "allocation"],
            &["depend", "dependency", "depends"],
        ] {
            let stems: Vec<String> = forms.iter().map(|w| key(w)).collect();
            assert!(
                stems.windows(2).all(|w| w[0] == w[1]),
                "{forms:?}: {stems:?}"
            );
        }
    }

    #[test]
    fn stems_match_the_published_examples() {
        for (word, expected) in [
            ("caresses", "caress"),
            ("ponies", "poni"),
            ("cats", "cat"),
            ("agreed", "agre"),
            ("plastered", "plaster"),
            ("motoring", "motor"),
            ("sing", "sing"),
            ("conflated", "conflat"),
            ("hopping", "hop"),
            ("falling", "fall"),
            ("filing", "file"),
            ("happy", "happi"),
            ("relational", "relat"),
            ("conditional", "condit"),
            ("generalization", "gener"),
            ("electrical", "electr"),
            ("hopeful", "hope"),
            ("revival", "reviv"),
            ("adoption", "adopt"),
            ("controlling", "control"),
            ("rate", "rate"),
            ("generate", "gener"),
        ] {
            assert_eq!(stem(word), expected, "{word}");
        }
    }

    #[test]
    fn forms_reach_both_stems_of_a_family() {
        assert_eq!(forms("deployed"), ["deployed", "deployment"]);
        assert_eq!(stem("deployment"), "deploy");
        assert_eq!(forms("deployment"), ["deployment", "deploy"]);
        assert_eq!(stem("deploy"), "deploi");
        assert_eq!(forms("files"), ["files"]);
    }

    #[test]
    fn short_long_and_non_ascii_words_are_kept() {
        assert_eq!(stem("is"), "is");
        assert_eq!(stem("café"), "café");
        assert_eq!(stem("x86"), "x86");
        let long = "a".repeat(100);
        assert_eq!(stem(&long), long);
        assert_eq!(key("deployed"), key("deployments"));
    }
}
