//! The realistic corpus of `cargo xtask bench`: ordinary English technical sentences, built at
//! bench time from text already on the machine, with natural queries and probes of several kinds.
//! The rows that use it are in `search` (and any other corpus of facts and queries-with-kinds can
//! be given to the same rows).
//!
//! Owns: gathering sentences (the doc comments of the crates in the local cargo registry, then the
//! prose of the Rust toolchain's HTML docs under `rustc --print sysroot`/share/doc), splitting them
//! into sentences of 6 to 60 words, a deterministic shuffle, and the workloads drawn from them
//! ([`of_facts`], which the second tuning corpus, `notes`, draws its workloads with too):
//! facts (title: where the sentence came from, content: the sentence), natural queries (a window of
//! 4–7 consecutive words, stop words included, from a sentence held back from the store: no
//! target) and probes, each with the stored fact it should find in the top 10, of these kinds:
//! - `words`: 5 consecutive words of the fact;
//! - `forms`: 5 consecutive words with each content word that has another form in the corpus
//!   (`-s`, `-ed`, `-ing`, `-ion`, `-ation`, `-ment`…) put in that form;
//! - `typo`: 5 consecutive words with the longest content word (5 letters or more) misspelt by one
//!   edit (a letter dropped, added, changed or two swapped, never the first) into a word the corpus
//!   does not hold;
//! - `question`: three of the fact's content words, in order, in a question ("how do I …?");
//! - `paraphrase`: 5 consecutive words holding three content words or more, two of which are said
//!   with other words: each replaced by a word of the corpus at least as common (and seen five
//!   times or more) that the fact does not hold, as a synonym is, to full-text search, another
//!   word. The fact then holds only some of the query's words;
//! - `synonym`: 5 to 8 consecutive words with one or two of their content words said with a word
//!   of the same meaning from a short list of everyday technical English ([`SYNONYMS`]) that the
//!   fact does not hold (the corpus may not either), the other content words put in another form
//!   half the time: a paraphrase as a person makes it, where the word said instead is a word of
//!   the same topic. The `paraphrase` kind's stand-ins are drawn from the whole vocabulary, which
//!   a person never does; this kind was added to tune on (it is made after the others, so they
//!   are unchanged).
//! - `allforms`: 5 consecutive words holding two content words or more, every one of which has
//!   another form in the corpus and is put in it: no content word is said as the fact says it.
//!   The `forms` kind changes only the words that have another form, so its facts often still
//!   hold some of the query's words as spelt; this kind is what catches a ranking that favours a
//!   word's exact spelling over its other forms (added after the others, so they are unchanged).
//! - `longquestion`: five or six of the fact's content words, in order, in a question that adds a
//!   verb the fact does not hold ("what is the best way to handle {}?"): a question as a person
//!   asks it, naming most of what the fact says, with one word no fact about it needs to hold. A
//!   query of six terms or more, none of which every word the fact holds: the `question` kind's
//!   three words never make that (added after the others, so they are unchanged).
//! - `swapped`: as `synonym`, one or two content words said with a synonym the fact does not
//!   hold, but every other word as the fact says it. The fact then lacks the query's word that
//!   weighs most whenever the synonym is rarer than the rest, and many facts may share the rest
//!   (`Returns true if there is no instance` of `Returns true if there is no value.`): what BM25
//!   over words as written finds and bounded reads may never read (added after the others, so
//!   they are unchanged).
//!
//! Guarantees: offline, deterministic for a given machine (files are read in sorted order), and
//! bounded (reading stops once enough distinct sentences are found). Must never: fetch anything.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clawboo_tests::Rng;

/// A query of a corpus: its kind, its text, and the index of the fact it should find (none for a
/// natural query, which is only timed).
pub struct Query {
    /// `natural`, a probe kind of the module documentation, or a held-out corpus's own.
    pub kind: &'static str,
    /// What is searched.
    pub text: String,
    /// The index in the facts of the fact it should find in the top 10.
    pub target: Option<usize>,
}

/// Sentences held back from the store to make queries from.
pub(super) const HELD_BACK: usize = 2_000;

/// What the bench stores and asks.
pub struct Corpus {
    /// (title, content) of every fact, in insertion order.
    pub facts: Vec<(String, String)>,
    /// Natural queries, then the probes of each kind.
    pub queries: Vec<Query>,
    /// Held-back sentences (never stored), to make more facts from.
    pub held: Vec<(String, String)>,
}

impl Corpus {
    /// A short hash of the facts and queries. Both corpora are built from this machine's files
    /// (a cargo fetch or a package installed moves them), so two runs' figures compare only when
    /// their corpora's fingerprints are equal. Deterministic for one toolchain.
    pub fn fingerprint(&self) -> String {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::hash::DefaultHasher::new();
        self.facts.hash(&mut hasher);
        for query in &self.queries {
            (query.kind, &query.text, query.target).hash(&mut hasher);
        }
        format!("{:016x}", hasher.finish())
    }
}

/// Builds a corpus of `facts` facts with `queries` natural queries and `probes` probes of each
/// kind.
pub fn build(facts: usize, queries: usize, probes: usize) -> anyhow::Result<Corpus> {
    let wanted = facts + HELD_BACK;
    let mut sentences = Sentences::new(wanted);
    for file in registry_sources()? {
        if sentences.full() {
            break;
        }
        if let Ok(text) = std::fs::read_to_string(&file) {
            sentences.add_doc_comments(&label_of_source(&file), &text);
        }
    }
    for file in toolchain_pages()? {
        if sentences.full() {
            break;
        }
        if let Ok(text) = std::fs::read_to_string(&file) {
            sentences.add_html(&label_of_page(&file), &text);
        }
    }
    let all = sentences.found;
    if all.len() < facts + queries.min(HELD_BACK) {
        bail!(
            "only {} sentences of English text found on this machine (cargo registry doc \
             comments, toolchain docs); {} needed",
            all.len(),
            facts + queries
        );
    }
    Ok(of_facts(all, facts, queries, probes))
}

/// A corpus of `all` (title, content) pairs in a deterministic shuffle: the first `facts` stored,
/// the rest held back; `queries` natural queries of the held-back ones and `probes` probes of each
/// kind of the module documentation made from the stored ones. `all` holds more than `facts`.
pub(super) fn of_facts(
    mut all: Vec<(String, String)>,
    facts: usize,
    queries: usize,
    probes: usize,
) -> Corpus {
    let mut rng = Rng::new(0xC0_4905);
    rng.shuffle(&mut all);
    let held: Vec<(String, String)> = all.split_off(facts);
    let mut asked: Vec<Query> = (0..queries)
        .map(|i| {
            let words = words_of(&held[i % held.len()].1);
            let len = (4 + rng.below(4)).min(words.len());
            Query {
                kind: "natural",
                text: run_of(&words, len, &mut rng).join(" "),
                target: None,
            }
        })
        .collect();
    let maker = ProbeMaker::new(&all);
    for kind in [
        "words",
        "forms",
        "typo",
        "question",
        "paraphrase",
        "synonym",
        "allforms",
        "longquestion",
        "swapped",
    ] {
        let mut made = 0;
        // Bounded: a fact that cannot make this kind is skipped, at most 20 tries a probe.
        for _ in 0..probes * 20 {
            if made == probes {
                break;
            }
            let index = rng.below(all.len());
            if let Some(text) = maker.make(kind, &all[index].1, &mut rng) {
                asked.push(Query {
                    kind,
                    text,
                    target: Some(index),
                });
                made += 1;
            }
        }
    }
    Corpus {
        facts: all,
        queries: asked,
        held,
    }
}

/// Words a probe never alters or picks as content (the commonest English words).
const STOP: &[&str] = &[
    "a", "about", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by",
    "can", "could", "do", "does", "for", "from", "has", "have", "how", "i", "if", "in", "into",
    "is", "it", "its", "may", "more", "must", "no", "not", "of", "on", "one", "only", "or",
    "other", "should", "so", "some", "such", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "to", "was", "we", "were", "what", "when", "which", "will",
    "with", "would", "you", "your",
];

/// Suffixes that make another form of a word.
const SUFFIXES: &[&str] = &[
    "s", "es", "ed", "d", "ing", "ion", "ions", "ation", "ations", "ment", "ments",
];

/// Question templates; `{}` is three content words of the fact.
const QUESTIONS: &[&str] = &[
    "how do I {}?",
    "what is the {}",
    "why does {} fail?",
    "where are {} documented?",
    "can I {}",
];

/// Long question templates: `{verb}` is a verb the fact does not hold ([`ASKED_VERBS`]), `{}` five
/// or six content words of the fact.
const LONG_QUESTIONS: &[&str] = &[
    "how do I {verb} {}?",
    "what is the best way to {verb} {}?",
    "why would I {verb} {}?",
    "is it possible to {verb} {} here?",
];

/// The verbs a long question adds, one the fact does not hold.
const ASKED_VERBS: &[&str] = &[
    "use",
    "handle",
    "configure",
    "change",
    "avoid",
    "enable",
    "set",
    "make",
    "get",
    "fix",
];

/// Groups of words that say the same thing in technical English, for the `synonym` probes: a word
/// of a group is said with another of its group. Words of one family (`delete`, `deleted`) are
/// matched by their group's base form with the suffixes of [`SUFFIXES`].
const SYNONYMS: &[&[&str]] = &[
    &["create", "make", "build", "generate", "produce"],
    &["delete", "remove", "erase", "drop", "discard"],
    &["error", "failure", "fault", "problem"],
    &["function", "routine", "procedure", "method"],
    &["return", "give", "yield", "produce"],
    &["start", "begin", "launch", "initiate"],
    &["stop", "halt", "terminate", "end", "finish"],
    &["execute", "run", "perform"],
    &["change", "modify", "alter", "update", "adjust"],
    &["show", "display", "print", "present"],
    &["get", "fetch", "retrieve", "obtain", "acquire"],
    &["need", "require", "want"],
    &["allow", "permit", "enable", "let"],
    &["check", "verify", "validate", "ensure", "confirm"],
    &["fast", "quick", "rapid", "speedy"],
    &["slow", "sluggish", "expensive", "costly"],
    &["big", "large", "huge", "great"],
    &["small", "little", "tiny", "short"],
    &["type", "kind", "sort", "variety"],
    &["option", "setting", "flag", "choice"],
    &["argument", "parameter", "input"],
    &["field", "member", "attribute", "property"],
    &["read", "load", "parse"],
    &["write", "save", "store", "persist"],
    &["send", "transmit", "emit", "dispatch"],
    &["receive", "accept", "get"],
    &["find", "locate", "search", "discover"],
    &["call", "invoke"],
    &["path", "route", "location"],
    &["program", "application", "binary", "executable"],
    &["library", "crate", "package", "module"],
    &["feature", "capability", "functionality"],
    &["bug", "defect", "issue", "flaw"],
    &["fix", "repair", "correct", "resolve"],
    &["add", "append", "insert", "include"],
    &["copy", "clone", "duplicate"],
    &["convert", "transform", "translate", "turn"],
    &["contain", "hold", "include", "have"],
    &["ignore", "skip", "omit", "disregard"],
    &["keep", "retain", "preserve", "maintain"],
    &["default", "standard", "usual", "normal"],
    &["support", "handle", "manage"],
    &["data", "information", "content"],
    &["item", "element", "entry", "member"],
    &["number", "count", "amount", "quantity"],
    &["size", "length", "extent"],
    &["object", "instance", "value"],
    &["simple", "easy", "plain", "basic"],
    &["complex", "complicated", "intricate"],
    &["correct", "right", "valid", "proper"],
    &["wrong", "incorrect", "invalid", "bad"],
    &["new", "fresh", "recent"],
    &["old", "previous", "earlier", "former"],
    &["first", "initial", "earliest"],
    &["last", "final", "latest"],
    &["whole", "entire", "complete", "full"],
    &["part", "portion", "piece", "section"],
    &["use", "utilize", "employ", "apply"],
    &["describe", "explain", "document"],
    &["provide", "supply", "offer", "expose"],
    &["specify", "declare", "define", "state"],
    &["happen", "occur"],
    &["possible", "feasible"],
    &["common", "frequent", "usual"],
    &["rare", "unusual", "uncommon"],
    &["wait", "block", "pause"],
    &["safe", "secure", "sound"],
    &["example", "sample", "instance", "illustration"],
    &["user", "caller", "client"],
    &["result", "outcome", "output"],
    &["message", "notice", "note"],
    &["connection", "link", "socket"],
    &["directory", "folder"],
    &["improve", "enhance", "optimize", "better"],
    &["depend", "rely"],
    &["compare", "match", "contrast"],
    &["limit", "bound", "cap", "restrict"],
];

/// How often a word must occur in the corpus to stand in for another in a paraphrase.
const STAND_IN_AT_LEAST: usize = 5;

/// Makes probes of each kind from stored facts, knowing the corpus's words.
struct ProbeMaker {
    /// Every lower-case word of the facts, with how many times it occurs.
    vocabulary: HashMap<String, usize>,
    /// The content words seen at least [`STAND_IN_AT_LEAST`] times, sorted: what a paraphrase
    /// says instead of a fact's word.
    stand_ins: Vec<String>,
}

impl ProbeMaker {
    fn new(facts: &[(String, String)]) -> Self {
        let mut vocabulary = HashMap::new();
        for (_, content) in facts {
            for word in words_of(content) {
                *vocabulary.entry(word.to_lowercase()).or_insert(0) += 1;
            }
        }
        let mut stand_ins: Vec<String> = vocabulary
            .iter()
            .filter(|(w, n)| **n >= STAND_IN_AT_LEAST && is_content_word(w) && w.is_ascii())
            .map(|(w, _)| w.clone())
            .collect();
        stand_ins.sort();
        Self {
            vocabulary,
            stand_ins,
        }
    }

    fn known(&self, word: &str) -> bool {
        self.vocabulary.contains_key(word)
    }

    /// How many times the corpus holds `word` (lower-case).
    fn count(&self, word: &str) -> usize {
        self.vocabulary.get(word).copied().unwrap_or(0)
    }

    /// A probe of `kind` for the fact `content`, or `None` when this fact cannot make one.
    fn make(&self, kind: &str, content: &str, rng: &mut Rng) -> Option<String> {
        let words = words_of(content);
        match kind {
            "synonym" => self.said_otherwise(&words, true, rng),
            "swapped" => self.said_otherwise(&words, false, rng),
            "question" => {
                let picked = askable(&words);
                if picked.len() < 3 {
                    return None;
                }
                let said = some_in_order(&picked, 3, rng);
                Some(rng.pick(QUESTIONS).replace("{}", &said.join(" ")))
            }
            "longquestion" => self.long_question(&words, rng),
            _ => {
                let mut window: Vec<String> = run_of(&words, 5, rng)
                    .iter()
                    .map(|w| (*w).to_owned())
                    .collect();
                match kind {
                    "allforms" => {
                        let changed = self.put_in_other_forms(&mut window, true, rng)?;
                        (changed >= 2).then(|| window.join(" "))
                    }
                    "forms" => {
                        let changed = self.put_in_other_forms(&mut window, false, rng)?;
                        (changed > 0).then(|| window.join(" "))
                    }
                    "typo" => {
                        let at = (0..window.len())
                            .filter(|&i| {
                                let lower = window[i].to_lowercase();
                                lower.len() >= 5 && is_content_word(&lower) && lower.is_ascii()
                            })
                            .max_by_key(|&i| window[i].len())?;
                        let lower = window[at].to_lowercase();
                        let misspelt = (0..20)
                            .map(|_| misspell(&lower, rng))
                            .find(|m| *m != lower && !self.known(m))?;
                        window[at] = misspelt;
                        Some(window.join(" "))
                    }
                    "paraphrase" => {
                        let mut at: Vec<usize> = (0..window.len())
                            .filter(|&i| is_content_word(&window[i].to_lowercase()))
                            .collect();
                        if at.len() < 3 || self.stand_ins.is_empty() {
                            return None;
                        }
                        rng.shuffle(&mut at);
                        let held: HashSet<String> =
                            words.iter().map(|w| w.to_lowercase()).collect();
                        for &i in &at[..2] {
                            // As plain a word as the one it replaces: people paraphrase with
                            // everyday words, not rarer ones.
                            let count = self.count(&window[i].to_lowercase());
                            window[i] = (0..50)
                                .map(|_| rng.pick(&self.stand_ins))
                                .find(|w| !held.contains(*w) && self.count(w) >= count)?
                                .clone();
                        }
                        Some(window.join(" "))
                    }
                    _ => Some(window.join(" ")),
                }
            }
        }
    }

    /// A `longquestion` probe of a fact's `words`: five or six of its content words, in order, in
    /// a [`LONG_QUESTIONS`] template with a verb of [`ASKED_VERBS`] the fact does not hold in any
    /// form (its family's first four letters); `None` when it has fewer content words, or holds
    /// every verb.
    fn long_question(&self, words: &[&str], rng: &mut Rng) -> Option<String> {
        let picked = askable(words);
        let wanted = 5 + rng.below(2);
        if picked.len() < wanted {
            return None;
        }
        let held: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
        let lacked: Vec<&str> = ASKED_VERBS
            .iter()
            .copied()
            .filter(|verb| {
                let family = &verb[..verb.len().min(4)];
                !held.iter().any(|w| w.starts_with(family))
            })
            .collect();
        if lacked.is_empty() {
            return None;
        }
        let verb = *rng.pick(&lacked);
        let said = some_in_order(&picked, wanted, rng);
        Some(
            rng.pick(LONG_QUESTIONS)
                .replace("{verb}", verb)
                .replace("{}", &said.join(" ")),
        )
    }

    /// Puts each content word of `window` that has another form in the corpus in one of them, and
    /// says how many it changed; with `every`, `None` as soon as a content word has none.
    fn put_in_other_forms(
        &self,
        window: &mut [String],
        every: bool,
        rng: &mut Rng,
    ) -> Option<usize> {
        let mut changed = 0;
        for word in window.iter_mut() {
            let lower = word.to_lowercase();
            if !is_content_word(&lower) {
                continue;
            }
            let others = self.other_forms(&lower);
            if others.is_empty() {
                if every {
                    return None;
                }
                continue;
            }
            *word = rng.pick(&others).clone();
            changed += 1;
        }
        Some(changed)
    }

    /// 5 to 8 consecutive words of a fact's `words` with one or two of their content words said
    /// with a synonym ([`SYNONYMS`]) that the fact does not hold (in the word's form when the
    /// corpus holds it), and, with `other_forms`, each other content word in another form half the
    /// time; `None` when too few have one.
    fn said_otherwise(&self, words: &[&str], other_forms: bool, rng: &mut Rng) -> Option<String> {
        let len = (5 + rng.below(4)).min(words.len());
        let mut window: Vec<String> = run_of(words, len, rng)
            .iter()
            .map(|w| (*w).to_owned())
            .collect();
        let said_otherwise = 1 + rng.below(2);
        let held: HashSet<String> = words.iter().map(|w| w.to_lowercase()).collect();
        let mut replaceable: Vec<(usize, Vec<String>)> = Vec::new();
        for (i, word) in window.iter().enumerate() {
            let lower = word.to_lowercase();
            if !is_content_word(&lower) {
                continue;
            }
            let others = self.synonyms_of(&lower);
            let others: Vec<String> = others.into_iter().filter(|s| !held.contains(s)).collect();
            if !others.is_empty() {
                replaceable.push((i, others));
            }
        }
        if replaceable.len() < said_otherwise {
            return None;
        }
        rng.shuffle(&mut replaceable);
        replaceable.truncate(said_otherwise);
        let replaced: Vec<usize> = replaceable.iter().map(|(i, _)| *i).collect();
        for (i, others) in &replaceable {
            window[*i] = rng.pick(others).clone();
        }
        for (i, word) in window.iter_mut().enumerate() {
            let lower = word.to_lowercase();
            if !other_forms
                || replaced.contains(&i)
                || !is_content_word(&lower)
                || rng.below(2) == 0
            {
                continue;
            }
            let forms = self.other_forms(&lower);
            if !forms.is_empty() {
                *word = rng.pick(&forms).clone();
            }
        }
        Some(window.join(" "))
    }

    /// The words of `word`'s synonym groups in `word`'s form: `deleted` gives `removed`,
    /// `erased`… (a group's word and the same suffix) when the corpus holds that form, and a
    /// group's word as it is, held or not, for a word in its base form.
    fn synonyms_of(&self, word: &str) -> Vec<String> {
        let mut found: Vec<String> = Vec::new();
        for group in SYNONYMS {
            for base in group.iter() {
                let suffix = if word == *base {
                    Some("")
                } else {
                    SUFFIXES.iter().copied().find(|suffix| {
                        word.strip_suffix(suffix)
                            .is_some_and(|stem| stem == *base || format!("{stem}e") == *base)
                    })
                };
                let Some(suffix) = suffix else { continue };
                for other in group.iter().filter(|o| *o != base) {
                    let said = if suffix.is_empty() {
                        (*other).to_owned()
                    } else {
                        format!("{}{suffix}", other.strip_suffix('e').unwrap_or(other))
                    };
                    // A word the corpus never uses is said too (people do), in its base form.
                    let sayable = self.known(&said) || suffix.is_empty();
                    if said != word && sayable && !found.contains(&said) {
                        found.push(said);
                    }
                }
            }
        }
        found.sort();
        found
    }

    /// Other forms of `word` (lower-case) that the corpus holds at least twice, sorted.
    fn other_forms(&self, word: &str) -> Vec<String> {
        let mut bases = vec![word.to_owned()];
        for suffix in SUFFIXES {
            if let Some(base) = word.strip_suffix(suffix).filter(|b| b.len() >= 3) {
                bases.push(base.to_owned());
                bases.push(format!("{base}e"));
                let b = base.as_bytes();
                if b.len() > 3 && b[b.len() - 1] == b[b.len() - 2] {
                    bases.push(base[..base.len() - 1].to_owned());
                }
            }
        }
        let mut forms: Vec<String> = Vec::new();
        for base in &bases {
            forms.push(base.clone());
            for suffix in SUFFIXES {
                forms.push(format!("{base}{suffix}"));
                if let Some(stem) = base.strip_suffix('e') {
                    forms.push(format!("{stem}{suffix}"));
                }
            }
        }
        forms.sort();
        forms.dedup();
        forms.retain(|f| f != word && self.vocabulary.get(f).is_some_and(|&n| n >= 2));
        forms
    }
}

/// The words of a fact a question may ask with: three letters or more, not one of the commonest
/// words ([`STOP`]), as the fact says them.
fn askable<'s>(words: &[&'s str]) -> Vec<&'s str> {
    words
        .iter()
        .copied()
        .filter(|w| w.len() >= 3 && !STOP.contains(&w.to_lowercase().as_str()))
        .collect()
}

/// `count` of `picked` (at most as many as it holds) chosen at random, in their order.
fn some_in_order<'s>(picked: &[&'s str], count: usize, rng: &mut Rng) -> Vec<&'s str> {
    let mut at: Vec<usize> = (0..picked.len()).collect();
    rng.shuffle(&mut at);
    let mut chosen = at[..count.min(picked.len())].to_vec();
    chosen.sort_unstable();
    chosen.iter().map(|&i| picked[i]).collect()
}

/// Whether `word` (lower-case) is a content word a probe may alter: four letters or more, not
/// one of the commonest words.
fn is_content_word(word: &str) -> bool {
    word.len() >= 4 && word.chars().all(char::is_alphabetic) && !STOP.contains(&word)
}

/// `word` (ASCII, 5 letters or more) with one edit at a position after the first letter.
fn misspell(word: &str, rng: &mut Rng) -> String {
    let mut letters: Vec<u8> = word.bytes().collect();
    let at = 1 + rng.below(letters.len() - 2);
    let letter = b'a' + rng.below(26) as u8;
    match rng.below(4) {
        0 => {
            letters.remove(at);
        }
        1 => letters.swap(at, at + 1),
        2 => letters[at] = letter,
        _ => letters.insert(at, letter),
    }
    String::from_utf8(letters).unwrap_or_else(|_| word.to_owned())
}

/// `len` consecutive words of `words` (which holds that many or more), from a random start.
fn run_of<'w, 's>(words: &'w [&'s str], len: usize, rng: &mut Rng) -> &'w [&'s str] {
    let start = rng.below(words.len() - len + 1);
    &words[start..start + len]
}

/// The words of a sentence as a person would type them (punctuation dropped).
pub(super) fn words_of(sentence: &str) -> Vec<&str> {
    sentence
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| w.chars().any(char::is_alphabetic))
        .collect()
}

/// The sentences of `text`, trimmed: it is cut after each `.`, `!` or `?` that ends the text or
/// is followed by white space.
pub(super) fn sentences_of(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let ends =
            matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1).is_none_or(u8::is_ascii_whitespace);
        if ends || i + 1 == bytes.len() {
            let sentence = text[start..=i].trim();
            start = i + 1;
            if !sentence.is_empty() {
                found.push(sentence);
            }
        }
    }
    found
}

/// Distinct sentences (each content once, under its label), up to a count; the notes corpus
/// (`notes`) keeps its notes in one too.
pub(super) struct Sentences {
    pub(super) found: Vec<(String, String)>,
    seen: HashSet<String>,
    wanted: usize,
}

impl Sentences {
    pub(super) fn new(wanted: usize) -> Self {
        Self {
            found: Vec::new(),
            seen: HashSet::new(),
            wanted,
        }
    }

    pub(super) fn full(&self) -> bool {
        self.found.len() >= self.wanted
    }

    /// Keeps `content` under `label` unless it is full or holds `content` already.
    pub(super) fn keep(&mut self, label: &str, content: &str) {
        if !self.full() && self.seen.insert(content.to_owned()) {
            self.found.push((label.to_owned(), content.to_owned()));
        }
    }

    /// Splits `text` into sentences and keeps those of 6 to 60 words, under `label`.
    fn add_text(&mut self, label: &str, text: &str) {
        for sentence in sentences_of(text) {
            if (6..=60).contains(&words_of(sentence).len()) {
                self.keep(label, sentence);
            }
        }
    }

    /// The `///` and `//!` comments of a Rust file, paragraph by paragraph, code blocks skipped.
    fn add_doc_comments(&mut self, label: &str, source: &str) {
        let mut paragraph = String::new();
        let mut in_code = false;
        for line in source.lines() {
            let line = line.trim_start();
            let doc = line
                .strip_prefix("///")
                .or_else(|| line.strip_prefix("//!"))
                .map(str::trim);
            match doc {
                Some(text) if text.starts_with("```") => in_code = !in_code,
                Some(text) if !in_code && !text.is_empty() && !text.starts_with('#') => {
                    paragraph.push_str(text);
                    paragraph.push(' ');
                }
                _ => {
                    if !paragraph.is_empty() {
                        let text = strip_markdown(&paragraph);
                        self.add_text(label, &text);
                        paragraph.clear();
                    }
                }
            }
        }
    }

    /// The prose of an HTML page: the text of its paragraphs and list items (`<p>`, `<li>`), so
    /// navigation, headings, signatures and code are left out.
    fn add_html(&mut self, label: &str, page: &str) {
        let mut rest = page;
        while let Some(open) = find_prose(rest) {
            rest = &rest[open..];
            let close = if rest.starts_with("<p") {
                "</p>"
            } else {
                "</li>"
            };
            let end = rest.find(close).unwrap_or(rest.len());
            let text = strip_tags(&rest[..end]).replace("Read more", " ");
            self.add_text(label, &text);
            rest = &rest[end..];
        }
    }
}

/// Where the next `<p>` or `<li>` element starts.
fn find_prose(html: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = html[from..].find('<') {
        let tag = &html[from + at..];
        if tag.starts_with("<p>") || tag.starts_with("<p ") || tag.starts_with("<li>") {
            return Some(from + at);
        }
        from += at + 1;
    }
    None
}

/// The text of an HTML fragment: tags and code blocks removed, entities decoded, whitespace
/// collapsed.
fn strip_tags(html: &str) -> String {
    let mut text = String::new();
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        text.push_str(&rest[..open]);
        rest = &rest[open..];
        let skip_to = if rest.starts_with("<pre") {
            rest.find("</pre>").map(|e| e + 6)
        } else {
            rest.find('>').map(|e| e + 1)
        };
        rest = &rest[skip_to.unwrap_or(rest.len())..];
    }
    text.push_str(rest);
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Markdown links and emphasis reduced to their words.
pub(super) fn strip_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '`' | '*' | '[' => {}
            ']' => {
                // `[text](target)` or `[text][ref]`: keep the text only.
                if matches!(chars.peek(), Some('(') | Some('[')) {
                    let close = if chars.next() == Some('(') { ')' } else { ']' };
                    for skipped in chars.by_ref() {
                        if skipped == close {
                            break;
                        }
                    }
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// Every `.rs` file under `src/` of every crate in the local cargo registry, sorted.
fn registry_sources() -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for krate in registry_crates()? {
        collect(&krate.join("src"), "rs", &mut files);
    }
    Ok(files)
}

/// The folder of every crate in the local cargo registry (`name-1.2.3`), sorted.
pub(super) fn registry_crates() -> anyhow::Result<Vec<PathBuf>> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))
        .context("neither CARGO_HOME nor HOME is set")?;
    let mut crates = Vec::new();
    for index in read_dir_sorted(&home.join("registry").join("src")) {
        crates.extend(read_dir_sorted(&index));
    }
    Ok(crates)
}

/// The HTML pages of the toolchain's books and standard library docs, sorted, books first.
fn toolchain_pages() -> anyhow::Result<Vec<PathBuf>> {
    let output = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .context("running rustc --print sysroot")?;
    let sysroot = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let html = Path::new(&sysroot).join("share/doc/rust/html");
    let mut files = Vec::new();
    for book in [
        "book",
        "reference",
        "nomicon",
        "rust-by-example",
        "cargo",
        "edition-guide",
        "embedded-book",
        "rustc",
        "rustdoc",
        "error_codes",
        "style-guide",
        "unstable-book",
        "std",
        "core",
        "alloc",
    ] {
        collect(&html.join(book), "html", &mut files);
    }
    Ok(files)
}

pub(super) fn read_dir_sorted(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    entries.sort();
    entries
}

/// Every file with `extension` under `dir`, depth first in sorted order.
pub(super) fn collect(dir: &Path, extension: &str, files: &mut Vec<PathBuf>) {
    for path in read_dir_sorted(dir) {
        if path.is_dir() {
            collect(&path, extension, files);
        } else if path.extension().is_some_and(|e| e == extension) {
            files.push(path);
        }
    }
}

/// `crate-1.2.3/src/a/b.rs` → `crate a b`.
fn label_of_source(file: &Path) -> String {
    let parts: Vec<String> = file
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let src = parts.iter().rposition(|p| p == "src").unwrap_or(0);
    let krate = parts
        .get(src.wrapping_sub(1))
        .map(|k| k.rsplit_once('-').map_or(k.as_str(), |(name, _)| name))
        .unwrap_or("");
    let mut label = vec![krate.replace(['-', '_'], " ")];
    for part in &parts[src + 1..] {
        let stem = part.trim_end_matches(".rs");
        if stem != "mod" && stem != "lib" {
            label.push(stem.replace('_', " "));
        }
    }
    label.join(" ")
}

/// `…/html/book/ch04-01-what-is-ownership.html` → `book what is ownership`.
fn label_of_page(file: &Path) -> String {
    let book = file
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .skip_while(|c| c != "html")
        .nth(1)
        .unwrap_or_default();
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let words: Vec<&str> = stem
        .split(['-', '_', '.'])
        .filter(|w| !w.is_empty() && w.trim_start_matches("ch").parse::<u32>().is_err())
        .collect();
    format!("{book} {}", words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_tells_corpora_apart_and_only_them() {
        let corpus = |content: &str, target| Corpus {
            facts: vec![("serde".to_owned(), content.to_owned())],
            queries: vec![Query {
                kind: "words",
                text: "derive the trait".to_owned(),
                target,
            }],
            held: Vec::new(),
        };
        let one = corpus("Derive the trait for your type.", Some(0));
        assert_eq!(
            one.fingerprint(),
            corpus("Derive the trait for your type.", Some(0)).fingerprint()
        );
        assert_ne!(
            one.fingerprint(),
            corpus("Derive the trait for a type.", Some(0)).fingerprint()
        );
        assert_ne!(
            one.fingerprint(),
            corpus("Derive the trait for your type.", None).fingerprint()
        );
        assert_eq!(one.fingerprint().len(), 16);
    }

    #[test]
    fn an_allforms_probe_says_every_content_word_in_another_form_or_is_not_made() {
        let facts = notes(
            &[
                "the worker restarts failed services",
                "a worker restarted the failing service",
                "workers restart services that failed",
                "the service fails when a worker restarts",
                "restarting workers is how failures are handled",
            ],
            2,
        );
        let maker = ProbeMaker::new(&facts);
        let fact = "the worker restarts failed services";
        let mut rng = Rng::new(7);
        for _ in 0..20 {
            let probe = maker.make("allforms", fact, &mut rng).unwrap();
            let said: Vec<&str> = words_of(fact)
                .into_iter()
                .filter(|w| is_content_word(w))
                .collect();
            let asked: Vec<&str> = words_of(&probe)
                .into_iter()
                .filter(|w| is_content_word(w))
                .collect();
            assert_eq!(asked.len(), said.len(), "{probe}");
            for (a, s) in asked.iter().zip(&said) {
                assert_ne!(a, s, "{probe} keeps {s}");
                assert_eq!(a[..4], s[..4], "{probe}: {a} is not a form of {s}");
            }
        }
        // `handled` has no other form in these facts: a window holding it makes no probe.
        let lone = "how failures are handled by workers";
        assert!((0..20).all(|_| maker.make("allforms", lone, &mut rng).is_none()));
    }

    /// Facts titled `notes` holding each of `contents`, `times` over.
    fn notes(contents: &[&str], times: usize) -> Vec<(String, String)> {
        contents
            .iter()
            .cycle()
            .take(contents.len() * times)
            .map(|c| ("notes".to_owned(), (*c).to_owned()))
            .collect()
    }

    #[test]
    fn a_swapped_probe_says_one_or_two_words_with_synonyms_and_the_rest_as_its_fact() {
        let fact = "The worker deletes failed jobs and returns an error to the caller";
        // Other forms of its words, each held twice (what a form must be to stand in for one).
        let facts = notes(&[fact, "workers returned errors after deleting jobs"], 2);
        let maker = ProbeMaker::new(&facts);
        let held: Vec<String> = words_of(fact).iter().map(|w| w.to_lowercase()).collect();
        let mut rng = Rng::new(5);
        // A window with too few words that have a synonym makes none: some tries make no probe.
        let probes: Vec<String> = (0..40)
            .filter_map(|_| maker.make("swapped", fact, &mut rng))
            .collect();
        assert!(probes.len() >= 10, "{probes:?}");
        for probe in &probes {
            let asked = words_of(probe);
            let swapped: Vec<&&str> = asked
                .iter()
                .filter(|w| !held.contains(&w.to_lowercase()))
                .collect();
            assert!((1..=2).contains(&swapped.len()), "{probe}");
            for word in swapped {
                let lower = word.to_lowercase();
                assert!(
                    SYNONYMS
                        .iter()
                        .any(|group| group.iter().any(|s| lower.starts_with(&s[..3]))),
                    "{probe}: {word} is no synonym"
                );
            }
            // Every other word is the fact's, in the fact's order.
            let kept: Vec<String> = asked
                .iter()
                .map(|w| w.to_lowercase())
                .filter(|w| held.contains(w))
                .collect();
            let mut in_order = held.iter();
            assert!(kept.iter().all(|w| in_order.any(|h| h == w)), "{probe}");
        }
    }

    #[test]
    fn a_long_question_names_five_or_six_of_its_facts_words_in_order_and_a_verb_it_lacks() {
        let fact = "The scheduler retries failed upload jobs after the network connection returns";
        let maker = ProbeMaker::new(&[("notes".to_owned(), fact.to_owned())]);
        let content = askable(&words_of(fact));
        let mut rng = Rng::new(11);
        for _ in 0..20 {
            let probe = maker.make("longquestion", fact, &mut rng).unwrap();
            let asked = words_of(&probe);
            let from_fact: Vec<&str> = asked
                .iter()
                .copied()
                .filter(|w| content.contains(w))
                .collect();
            assert!((5..=6).contains(&from_fact.len()), "{probe}");
            let mut in_order = content.iter();
            assert!(
                from_fact.iter().all(|w| in_order.any(|c| c == w)),
                "{probe}"
            );
            let verbs: Vec<&&str> = asked.iter().filter(|w| ASKED_VERBS.contains(w)).collect();
            assert_eq!(verbs.len(), 1, "{probe}");
            assert!(!fact.to_lowercase().contains(*verbs[0]), "{probe}");
        }
        // Too few content words: no probe.
        let short = "The scheduler retries jobs";
        assert!(maker.make("longquestion", short, &mut rng).is_none());
    }
}
