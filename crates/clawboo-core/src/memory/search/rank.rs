//! How a full-text candidate is scored: one formula for every candidate, whichever source found it.
//!
//! The score adds two parts, each in about `[0, 1]`:
//! - **words**: BM25 over every word of the query, computed here on the candidate's own words
//!   reduced to their families (`stem::key`, so `deploy`, `deployed` and `deployment` are one
//!   word): each word counts its inverse document frequency `ln(1 + (N − df + ½) / (df + ½))` (a
//!   rare word outweighs a common one), times how many times the query says it when it is a
//!   content word (as BM25's query term frequency, and FTS5's bm25, which sums a word once per
//!   time the query says it: `bytes` of `2 bytes of 4 bytes` is what the query is about; a stop
//!   word counts once, as a sentence says `the` twice as a matter of course), saturated by how
//!   often the text holds it (k1 = [`K1`]) and normalised by the text's length against the
//!   candidates' mean (b = [`B`]). In how often a text holds a word, saying it as the query says it
//!   counts 1 and saying another form of its family counts [`OTHER_FORM`] in a text holding every
//!   term of the query, and [`OTHER_FORM_LACKING`] in a text lacking one: of two texts holding the
//!   same words, the one saying them in the query's own forms ranks first, and a text holding every
//!   word in other forms still outranks one saying fewer of them as the query does. Among texts
//!   lacking a term (a paraphrase's fact lacks the words it says otherwise), the words they do hold
//!   are all the evidence, and a word said as the query says it weighs more against a shorter
//!   text's other forms of it. A word counts the same in the title (or a procedure's name) as in
//!   the content, as FTS5's BM25 weighs columns by default: a title is as often a label many facts
//!   share (where the fact came from, the project) as a summary of its fact, and counting it more
//!   ranks a fact for a label the query happens to name above the fact that says what it asks. The
//!   `df` is the plan's: counted for a rare term, estimated for a common term and for a stop word
//!   (`counts::Counted`), so `into`, held by one fact in fifty, weighs far more than `the`, held by
//!   every other fact: the words left of a paraphrased sentence are often such words. A question's
//!   opening words (`how do I`) weigh as a word in half the facts. The sum is divided by the most a
//!   text could score, so a text holding every word scores about 1;
//! - **order**: the share of the query's consecutive word pairs, stop words included, that the
//!   text holds next to each other in the same order, weighted [`ORDER_WEIGHT`]: of two texts
//!   with the same words, the one that says them as the query does ranks first; and the share of
//!   the query's words with a word on either side (its runs of three) whose two neighbours the
//!   text holds in order with another word between them, weighted [`APART_WEIGHT`]. A paraphrase
//!   that says a word of its fact otherwise keeps the words either side of it where they were
//!   (`restart the idle workers` of `restart the stale workers`): the fact loses the two pairs
//!   holding the word said otherwise and keeps the pair around it, which a text merely holding
//!   the same words seldom has. A text saying the query's own run is counted by its pairs side by
//!   side, not again here: a question's opening (`the best way to handle`), said word for word by
//!   facts about nothing the question asks, gains no more than it did.
//!
//! Before that, [`shortlist`] picks which facts holding the rare terms are read at all: those
//! holding the most inverse document frequency of them, newest first among equals; and beside
//! them a few saying a common term in a form few facts say, as the query says it (weighed as rare
//! as that form is for the choice; the score above weighs its family, as for any text).
//!
//! Must never: read the database (the candidates and the counts arrive from `text` and `plan`).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use super::plan::Plan;
use super::stem;

/// BM25's term-frequency saturation.
const K1: f64 = 0.9;
/// BM25's length normalisation.
const B: f64 = 0.75;
/// How much word order counts beside the words themselves: the query's word pairs side by side.
const ORDER_WEIGHT: f64 = 0.5;
/// How much the words either side of a query word, held in order around another word, count:
/// half as much as pairs side by side, since two words with another between them are weaker
/// evidence of the query's sentence than two said together.
const APART_WEIGHT: f64 = 0.25;
/// How much a word of a query family counts in BM25's term frequency when a text holding every
/// term of the query says it in another form than the query's (`deployment` for `deployed`),
/// beside 1 for the query's own form. Of texts holding the same families, the one in the query's
/// own words ranks first; a query in other forms (`configured buffers` of `configure the
/// buffer`) still finds its fact, which holds more of its families.
const OTHER_FORM: f64 = 0.8;
/// The same in a text lacking a term of the query. A text holding every term is what a query in
/// other forms than its fact's asks for, so its forms count nearly as the query's; a text lacking
/// one is at best what a paraphrase asks for, which keeps some of its fact's words as the fact
/// says them and says the others otherwise, and there a shorter text saying other forms of the
/// kept words (which BM25's length normalisation favours) is seldom the fact paraphrased.
const OTHER_FORM_LACKING: f64 = 0.6;
/// How many facts saying a rare form of a common term the shortlist adds beside its pool.
const SAID_POOL: usize = 10;

/// What a word of a text is to the query: the position of its family among the query's
/// families ([`Families`]), or [`OTHER`] when it is none of them.
type Family = u16;
/// A word that is none of the query's families.
const OTHER: Family = Family::MAX;

/// What a text word is to the query: its family, and whether the query says the word so.
#[derive(Debug, Clone, Copy)]
struct Met {
    family: Family,
    /// The query holds the word in this form (any case).
    said: bool,
}

/// A word of no query family.
const NOT_MET: Met = Met {
    family: OTHER,
    said: false,
};

/// The query's word families, and the family of every text word met so far (a text's words
/// repeat across candidates, so each distinct word is stemmed once per query). The words met are
/// kept as owned copies, because a candidate's text is read straight from its row and is gone
/// once the row is: only words starting as a query family does are kept, a few per query.
pub(super) struct Families<'p> {
    /// The distinct families of the query's words, stop words included.
    keys: Vec<&'p str>,
    /// The first two letters of each (a stem keeps a word's first two letters, so a word starting
    /// otherwise cannot be one of them and is not stemmed).
    starts: Vec<&'p str>,
    /// The query's words as it says them (lower-case, spelling corrected).
    said: &'p [String],
    /// Every text word met that could be one of them, as the text spells it, and what it is.
    met: HashMap<Box<str>, Met, BuildHasherDefault<FnvHasher>>,
}

impl<'p> Families<'p> {
    /// The families of `plan`'s words.
    pub(super) fn new(plan: &'p Plan) -> Self {
        let mut keys: Vec<&str> = Vec::new();
        for key in &plan.words {
            if !keys.contains(&key.as_str()) && keys.len() < usize::from(OTHER) {
                keys.push(key);
            }
        }
        let starts = keys.iter().map(|k| start(k)).collect();
        Self {
            keys,
            starts,
            said: &plan.said,
            met: HashMap::default(),
        }
    }

    /// The family of `key`, one of the query's families.
    fn of_key(&self, key: &str) -> Family {
        self.keys
            .iter()
            .position(|k| *k == key)
            .and_then(|i| Family::try_from(i).ok())
            .unwrap_or(OTHER)
    }

    /// What `word` is to the query as a text holds it (any case).
    fn of_word(&mut self, word: &str) -> Met {
        // Most words start with letters no query family starts with: decided without allocating,
        // on bytes when the word starts with two ASCII characters (or is one).
        let could_be = match word.as_bytes() {
            [a, b, ..] if a.is_ascii() && b.is_ascii() => {
                let lower = [a.to_ascii_lowercase(), b.to_ascii_lowercase()];
                self.starts.iter().any(|start| start.as_bytes() == lower)
            }
            [a] => {
                let lower = [a.to_ascii_lowercase()];
                self.starts.iter().any(|start| start.as_bytes() == lower)
            }
            _ => {
                let first_two = word.chars().take(2).flat_map(char::to_lowercase);
                self.starts.iter().any(|start| {
                    let mut wanted = start.chars();
                    first_two.clone().all(|c| wanted.next() == Some(c)) && wanted.next().is_none()
                })
            }
        };
        if !could_be {
            return NOT_MET;
        }
        if let Some(&met) = self.met.get(word) {
            return met;
        }
        let lower = word.to_lowercase();
        let family = self.of_key(&stem::key(&lower));
        let met = Met {
            family,
            said: family != OTHER && self.said.contains(&lower),
        };
        self.met.insert(word.into(), met);
        met
    }
}

/// A candidate's words, ready to score: each word's family among the query's.
pub(super) struct Words {
    title: Vec<Family>,
    content: Vec<Family>,
    /// The family of each word of the title and the content said as the query says it.
    said: Vec<Family>,
}

impl Words {
    /// The families of the words of a `title` (or a procedure's name) and a `content` (see
    /// [`Families`]).
    pub(super) fn of_text(title: &str, content: &str, families: &mut Families<'_>) -> Self {
        let mut said = Vec::new();
        let mut of = |text: &str| -> Vec<Family> {
            let mut met = |word: &str| {
                let met = families.of_word(word);
                if met.said {
                    said.push(met.family);
                }
                met.family
            };
            if text.is_ascii() {
                AsciiWords { text, at: 0 }.map(&mut met).collect()
            } else {
                text.split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                    .map(&mut met)
                    .collect()
            }
        };
        let title = of(title);
        let content = of(content);
        Self {
            title,
            content,
            said,
        }
    }

    fn len(&self) -> usize {
        self.title.len() + self.content.len()
    }

    /// Whether the title or the content says `phrase`: its words next to each other, in its
    /// order (in any of their forms).
    pub(super) fn say(&self, phrase: &QueryPhrase) -> bool {
        let wanted = phrase.0.as_slice();
        !wanted.is_empty()
            && [&self.title, &self.content]
                .iter()
                .any(|text| text.windows(wanted.len()).any(|w| w == wanted))
    }
}

/// The whole query, stop words included: the family of each of its words, in order.
pub(super) struct QueryPhrase(Vec<Family>);

impl QueryPhrase {
    /// The whole query of `plan`, whose words are `families`: what word order is judged on.
    pub(super) fn of(plan: &Plan, families: &Families<'_>) -> Self {
        Self::from_word(plan, families, 0)
    }

    /// What a fact saying the query says, as `Plan::phrase` asks the index for it: the query
    /// after a question's opening.
    pub(super) fn asked(plan: &Plan, families: &Families<'_>) -> Self {
        Self::from_word(plan, families, plan.phrase_from)
    }

    fn from_word(plan: &Plan, families: &Families<'_>, first: usize) -> Self {
        let words = plan.words.get(first..).unwrap_or_default();
        Self(words.iter().map(|w| families.of_key(w)).collect())
    }
}

/// The words of an ASCII text: its runs of letters and digits (what `char::is_alphanumeric`
/// splits a text into, read byte by byte).
struct AsciiWords<'t> {
    text: &'t str,
    at: usize,
}

impl<'t> Iterator for AsciiWords<'t> {
    type Item = &'t str;

    fn next(&mut self) -> Option<&'t str> {
        let bytes = self.text.as_bytes();
        let start = self.at
            + bytes[self.at..]
                .iter()
                .position(u8::is_ascii_alphanumeric)?;
        let end = bytes[start..]
            .iter()
            .position(|b| !b.is_ascii_alphanumeric())
            .map_or(bytes.len(), |len| start + len);
        self.at = end;
        Some(&self.text[start..end])
    }
}

/// FNV-1a over a word's bytes, or a rowid's: the words met are short and chosen by the corpus,
/// and rowids are numbered by the store, not by a client racing for collisions in one query's
/// map, so a fast hash beats SipHash here (a long query's shortlist weighs tens of thousands of
/// rows).
struct FnvHasher(u64);

impl Default for FnvHasher {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for FnvHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// Scores candidates against one planned query.
pub(super) struct Scorer {
    /// Each term's family and weight: its inverse document frequency, times how many times the
    /// query says it for a term (a stop word counts once).
    idf: Vec<(Family, f64)>,
    /// The family of every word of the query, in order (what word order is judged on).
    query: Vec<Family>,
    /// How many of `idf`'s families, at its start, are the query's terms (the rest are its
    /// other words).
    terms: usize,
    /// The most a text could score on words.
    best_words: f64,
    mean_len: f64,
}

impl Scorer {
    /// A scorer for `plan` (whose words are `families`) over `candidates` (whose mean length
    /// normalises BM25).
    pub(super) fn new(plan: &Plan, families: &Families<'_>, candidates: &[Words]) -> Self {
        let n = plan.total.max(1) as f64;
        let mut idf: Vec<(Family, f64)> = Vec::new();
        for term in &plan.terms {
            let family = families.of_key(&term.key);
            if family == OTHER || idf.iter().any(|(f, _)| *f == family) {
                continue;
            }
            // A term that no fact holds still counts (as the rarest) should a text hold it.
            let said = plan
                .words
                .iter()
                .filter(|key| **key == term.key)
                .count()
                .max(1);
            idf.push((
                family,
                said as f64 * inverse_frequency(n, term.facts.max(1.0)),
            ));
        }
        let terms = idf.len();
        // The query's other words (its stop words) count as often as the facts hold them.
        for (key, facts) in &plan.stop_words {
            let family = families.of_key(key);
            if family != OTHER && !idf.iter().any(|(f, _)| *f == family) {
                idf.push((family, inverse_frequency(n, facts.max(1.0))));
            }
        }
        let best_words = idf
            .iter()
            .map(|(_, w)| w)
            .sum::<f64>()
            .max(f64::MIN_POSITIVE);
        let total_len: usize = candidates.iter().map(Words::len).sum();
        let mean_len = (total_len as f64 / candidates.len().max(1) as f64).max(1.0);
        Self {
            idf,
            query: QueryPhrase::of(plan, families).0,
            terms,
            best_words,
            mean_len,
        }
    }

    /// The score of a text with `words`; see the module documentation.
    pub(super) fn score(&self, words: &Words) -> f64 {
        let norm = K1 * (1.0 - B + B * words.len() as f64 / self.mean_len);
        // Whether the text lacks a term is known only once every word is counted, so the sum is
        // kept for both shares of another form in the same pass: [holding every term, lacking
        // one].
        let mut sums = [0.0; 2];
        let mut lacks_a_term = false;
        for (i, &(family, idf)) in self.idf.iter().enumerate() {
            let held = count(&words.title, family) + count(&words.content, family);
            let said = count(&words.said, family);
            lacks_a_term |= i < self.terms && held == 0.0;
            for (sum, other_form) in sums.iter_mut().zip([OTHER_FORM, OTHER_FORM_LACKING]) {
                let tf = said + other_form * (held - said);
                if tf > 0.0 {
                    *sum += idf * tf * (K1 + 1.0) / (tf + norm);
                }
            }
        }
        let sum = sums[usize::from(lacks_a_term)];
        // A text holding every term once, at the mean length, scores 1 on words.
        let words_score = sum / self.best_words;
        // Pairs side by side as the query says them; and the words either side of a query word
        // the text says otherwise (a run said as the query says it is counted by the first).
        let side_by_side = self.share_of_runs(words, 2, |run, said| said == run);
        let around_another = self.share_of_runs(words, 3, |run, said| {
            said[0] == run[0] && said[2] == run[2] && said[1] != run[1]
        });
        words_score + ORDER_WEIGHT * side_by_side + APART_WEIGHT * around_another
    }

    /// The share of the query's runs of `width` consecutive words for which the text holds a run
    /// of as many words that `matches` it (called with the query's run, then the text's, whose
    /// first word is one of the query's).
    fn share_of_runs(
        &self,
        words: &Words,
        width: usize,
        matches: impl Fn(&[Family], &[Family]) -> bool,
    ) -> f64 {
        if self.query.len() < width {
            return 0.0;
        }
        let held = self
            .query
            .windows(width)
            .filter(|run| {
                [&words.title, &words.content].iter().any(|text| {
                    text.windows(width)
                        .any(|said| said[0] != OTHER && matches(run, said))
                })
            })
            .count();
        held as f64 / (self.query.len() + 1 - width) as f64
    }
}

/// Which facts holding the rare terms are read: [`shortlist`].
#[derive(Debug)]
pub(super) struct Shortlist {
    /// The rowids, most weight first, newest first among equals; the last [`Shortlist::said`] of
    /// them are the facts saying rare forms of common terms.
    pub(super) rows: Vec<i64>,
    /// How many of `rows`, at their end, were chosen for the rare forms of common terms.
    pub(super) said: usize,
    /// Whether more facts than those holding a rare term hold one.
    pub(super) cut: bool,
    /// Whether the cut left out facts holding every rare term: it chose among those by age alone,
    /// and an older one left out may say the whole query (a fact that does holds every term).
    pub(super) cut_among_best: bool,
    /// The rare terms (their families) every fact holding which was kept: a source whose every
    /// fact holds one of them can find nothing new (`plan::HoldsRare`).
    pub(super) wholly_kept: Vec<String>,
}

/// The rowids of the `pool` facts holding the most weight of `plan`'s rare terms (the sum of the
/// inverse document frequencies of those they hold), newest first among equals, and where the
/// cut fell; then, beside them and never in their place, the [`SAID_POOL`] others holding the most
/// weight of the rare forms of common terms (`Term::said_rows`, each weighing as rare as that
/// form is) and of the rare terms.
pub(super) fn shortlist(plan: &Plan, pool: usize) -> Shortlist {
    let n = plan.total.max(1) as f64;
    let rare = weights(
        n,
        plan.terms
            .iter()
            .filter(|t| plan.rare(t))
            .map(|t| (t.facts, t.rows.as_slice())),
    );
    let form_weight = weights(
        n,
        plan.terms
            .iter()
            .map(|t| (t.said_rows.len() as f64, t.said_rows.as_slice())),
    );
    // One more than the pool, to tell where the cut fell.
    let mut rows = heaviest(
        rare.iter().map(|(row, w)| (*row, *w)),
        pool.saturating_add(1),
    );
    // Every row's weight adds the same terms' weights in the same order, so rows holding the
    // same terms weigh exactly the same.
    let cut_among_best = rows.len() > pool && rows[pool].1 >= rows[0].1;
    let cut = rows.len() > pool;
    rows.truncate(pool);
    let mut rows: Vec<i64> = rows.into_iter().map(|(row, _)| row).collect();
    let in_pool: HashSet<i64> = rows.iter().copied().collect();
    let said_rows = heaviest(
        form_weight
            .iter()
            .filter(|(row, _)| !in_pool.contains(row))
            .map(|(row, w)| (*row, w + rare.get(row).copied().unwrap_or(0.0))),
        SAID_POOL,
    );
    let said = said_rows.len();
    rows.extend(said_rows.into_iter().map(|(row, _)| row));
    let kept: HashSet<i64> = rows.iter().copied().collect();
    let wholly_kept = plan
        .terms
        .iter()
        .filter(|t| plan.rare(t) && (!cut || t.rows.iter().all(|r| kept.contains(r))))
        .map(|t| t.key.clone())
        .collect();
    Shortlist {
        rows,
        said,
        cut,
        cut_among_best,
        wholly_kept,
    }
}

/// The weight of each row of `terms` among `n` facts: the sum of the inverse document frequencies
/// of the terms holding it (each given as how many facts hold it, and their rows), added in the
/// terms' order.
fn weights<'t>(n: f64, terms: impl Iterator<Item = (f64, &'t [i64])>) -> RowWeights {
    let mut weight = RowWeights::default();
    for (facts, rows) in terms {
        let idf = inverse_frequency(n, facts);
        for &row in rows {
            *weight.entry(row).or_default() += idf;
        }
    }
    weight
}

/// Each row's weight ([`weights`]).
type RowWeights = HashMap<i64, f64, BuildHasherDefault<FnvHasher>>;

/// The `most` heaviest of `rows` with their weights, heaviest first, newest first among equals
/// (chosen before they are sorted: a long query's rare terms hold tens of thousands of rows).
fn heaviest(rows: impl Iterator<Item = (i64, f64)>, most: usize) -> Vec<(i64, f64)> {
    let order = |a: &(i64, f64), b: &(i64, f64)| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0));
    if most == 0 {
        return Vec::new();
    }
    let mut rows: Vec<(i64, f64)> = rows.collect();
    if rows.len() > most {
        rows.select_nth_unstable_by(most - 1, order);
        rows.truncate(most);
    }
    rows.sort_unstable_by(order);
    rows
}

/// BM25's inverse document frequency of a term in `df` of `n` facts.
fn inverse_frequency(n: f64, df: f64) -> f64 {
    let df = df.min(n);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// The first two characters of a word (all of a shorter one).
fn start(word: &str) -> &str {
    word.char_indices().nth(2).map_or(word, |(i, _)| &word[..i])
}

fn count(text: &[Family], family: Family) -> f64 {
    text.iter().filter(|w| **w == family).count() as f64
}

#[cfg(test)]
mod tests {
    use super::super::plan::Term;
    use super::*;

    fn plan(query: &[&str], terms: &[(&str, i64)]) -> Plan {
        let terms = terms
            .iter()
            .map(|(w, df)| Term {
                forms: vec![(*w).to_owned()],
                key: stem::key(w),
                df: *df,
                facts: *df as f64,
                rows: Vec::new(),
                said_rows: Vec::new(),
            })
            .collect();
        Plan::for_test(&query.join(" "), terms)
    }

    /// The words of a fact with `title` and `content`, as `plan` sees them.
    fn words(plan: &Plan, title: &str, content: &str) -> Words {
        Words::of_text(title, content, &mut Families::new(plan))
    }

    fn scorer(plan: &Plan) -> Scorer {
        Scorer::new(plan, &Families::new(plan), &[])
    }

    /// The scores of facts with these contents (and no title) for `plan`.
    fn contents_scored<const N: usize>(plan: &Plan, contents: [&str; N]) -> [f64; N] {
        let scorer = scorer(plan);
        contents.map(|content| scorer.score(&words(plan, "", content)))
    }

    #[test]
    fn a_rare_word_outweighs_a_common_one() {
        let plan = plan(&["zephyr", "file"], &[("zephyr", 3), ("file", 5_000)]);
        let rare = words(&plan, "", "the zephyr scheduler wakes a task");
        let common = words(&plan, "", "the file is closed when dropped");
        let scorer = scorer(&plan);
        assert!(scorer.score(&rare) > scorer.score(&common));
    }

    #[test]
    fn a_word_the_query_says_twice_outweighs_one_as_rare_said_once() {
        let plan = plan(
            &["bytes", "of", "bytes", "dropped", "the", "the"],
            &[("bytes", 100), ("dropped", 100)],
        );
        // The same length, no pair of the query's words in any.
        let [twice, once, the] = contents_scored(
            &plan,
            ["some bytes here", "some dropped here", "some the here"],
        );
        assert!(twice > once, "{twice} {once}");
        // A stop word counts once however often the query says it: `the` holds half the facts
        // here, far commoner than `dropped`.
        assert!(once > the, "{once} {the}");
    }

    #[test]
    fn a_stop_word_few_facts_hold_outweighs_one_most_facts_hold() {
        let mut plan = plan(&["panic", "into", "the"], &[("panic", 2_000)]);
        plan.stop_words = vec![("into".to_owned(), 500.0), ("the".to_owned(), 60_000.0)];
        // The same length, and no two of the query's words next to each other or one word apart
        // in either.
        let [into, the] = contents_scored(
            &plan,
            [
                "panic soon turns into errors",
                "panic soon turns the errors",
            ],
        );
        assert!(into > the, "{into} {the}");
    }

    #[test]
    fn other_word_forms_count_as_the_word() {
        let plan = plan(&["deploy", "fails"], &[("deploy", 10), ("fails", 10)]);
        let scorer = scorer(&plan);
        let forms = scorer.score(&words(&plan, "", "the deployment failed"));
        let same = scorer.score(&words(&plan, "", "deploy fails"));
        assert!(forms > 0.9, "{forms}");
        // Each word in another form counts [`OTHER_FORM`] of the query's own form, no less.
        assert!(forms > 0.75 * same, "{forms} {same}");
        let unrelated = scorer.score(&words(&plan, "", "the deadline passed"));
        assert_eq!(unrelated, 0.0);
    }

    #[test]
    fn a_word_said_as_the_query_says_it_outranks_another_form_of_it() {
        let plan = plan(
            &["deployed", "service"],
            &[("deployed", 10), ("service", 10)],
        );
        let scorer = scorer(&plan);
        // The same length and the same families; in the query's order in neither.
        let as_said = scorer.score(&words(&plan, "", "service was Deployed here"));
        let other_form = scorer.score(&words(&plan, "", "service was deploying here"));
        assert!(as_said > other_form, "{as_said} {other_form}");
        // Where the word sits does not matter: the title's word counts as the content's.
        let in_title = scorer.score(&words(&plan, "Deployed", "service was here"));
        assert!((in_title - as_said).abs() < 1e-9, "{in_title} {as_said}");
    }

    #[test]
    fn a_text_holding_every_word_in_other_forms_outranks_one_saying_fewer_as_asked() {
        let plan = plan(
            &["configured", "buffers", "limits"],
            &[("configured", 50), ("buffers", 50), ("limits", 50)],
        );
        let [other_forms, two_as_said] = contents_scored(
            &plan,
            ["configure a buffer limit", "configured buffers stay here"],
        );
        assert!(other_forms > two_as_said, "{other_forms} {two_as_said}");
    }

    #[test]
    fn a_text_lacking_a_term_counts_its_other_forms_less_than_one_holding_them_all() {
        let terms = [("restarted", 50), ("workers", 50), ("nightly", 50)];
        // Longer, in the query's own forms; shorter, in other forms; no pair in order in either.
        let (as_said, other_forms) = (
            "restarted the workers at noon today",
            "restart a worker now",
        );
        let scores = |query: &[&str]| {
            let plan = plan(query, &terms[..query.len()]);
            let texts = [words(&plan, "", as_said), words(&plan, "", other_forms)];
            let scorer = Scorer::new(&plan, &Families::new(&plan), &texts);
            (scorer.score(&texts[0]), scorer.score(&texts[1]))
        };
        // Both lack `nightly`: the words they hold are all the evidence, said as asked outranks.
        let (as_said_lacking, other_forms_lacking) = scores(&["restarted", "workers", "nightly"]);
        assert!(
            as_said_lacking > other_forms_lacking,
            "{as_said_lacking} {other_forms_lacking}"
        );
        // Both hold every term: other forms count nearly as the query's, and the shorter text,
        // which BM25 favours, ranks first.
        let (as_said_whole, other_forms_whole) = scores(&["restarted", "workers"]);
        assert!(
            other_forms_whole > as_said_whole,
            "{other_forms_whole} {as_said_whole}"
        );
    }

    #[test]
    fn the_query_stop_words_break_a_tie_of_content_words() {
        let plan = plan(
            &["can", "the", "function", "complete", "being"],
            &[("function", 40), ("complete", 40)],
        );
        let scorer = scorer(&plan);
        // The same length, and no pair of the query's words next to each other in either.
        let holds_them = scorer.score(&words(
            &plan,
            "",
            "being late, function ends, complete now, the end",
        ));
        let lacks_them = scorer.score(&words(
            &plan,
            "",
            "soon late, function ends, complete now, a end",
        ));
        assert!(holds_them > lacks_them, "{holds_them} {lacks_them}");
    }

    #[test]
    fn facts_saying_a_rare_form_of_a_common_term_join_the_shortlist_beside_its_pool() {
        // `zephyr` is rare (8 facts); `worked` is said by 3 facts of the 5,000 holding `work`.
        let mut zephyr = Term {
            forms: vec!["zephyr".to_owned()],
            key: stem::key("zephyr"),
            df: 8,
            facts: 8.0,
            rows: vec![80, 70, 60, 50, 40, 30, 20, 10],
            said_rows: Vec::new(),
        };
        let work = Term {
            forms: vec!["worked".to_owned()],
            key: stem::key("worked"),
            df: 5_000,
            facts: 5_000.0,
            rows: Vec::new(),
            said_rows: vec![95, 50, 40, 5],
        };
        let plan = Plan::for_test("zephyr worked", vec![zephyr.clone(), work.clone()]);
        let short = shortlist(&plan, 4);
        assert_eq!(
            short.rows[..4],
            [80, 70, 60, 50],
            "the rare term's pool is chosen as before, newest first"
        );
        assert_eq!(
            short.rows[4..],
            [40, 95, 5],
            "then the others saying the form: fact 40 holds `zephyr` too, so it weighs most"
        );
        assert_eq!(short.said, 3);
        assert!(short.cut);
        assert!(
            short.wholly_kept.is_empty(),
            "facts 30, 20 and 10 hold `zephyr` and were not kept"
        );
        // At most `SAID_POOL` are added, the newest among equals.
        let many = Term {
            said_rows: (100..130).rev().collect(),
            ..work.clone()
        };
        let short = shortlist(
            &Plan::for_test("zephyr worked", vec![zephyr.clone(), many]),
            4,
        );
        assert_eq!(short.said, SAID_POOL);
        assert_eq!(short.rows[4..], (120..130).rev().collect::<Vec<i64>>()[..]);
        // Without the form's rows, nothing is added.
        zephyr.rows.truncate(3);
        let plan = Plan::for_test(
            "zephyr worked",
            vec![
                zephyr,
                Term {
                    said_rows: Vec::new(),
                    ..work
                },
            ],
        );
        let short = shortlist(&plan, 4);
        assert_eq!(short.rows, [80, 70, 60]);
        assert_eq!(short.said, 0);
    }

    #[test]
    fn the_shortlist_says_where_its_cut_fell_and_which_rare_terms_it_kept_every_fact_of() {
        let term = |word: &str, rows: Vec<i64>| Term {
            forms: vec![word.to_owned()],
            key: stem::key(word),
            df: rows.len() as i64,
            facts: rows.len() as f64,
            rows,
            said_rows: Vec::new(),
        };
        // Facts 30, 20 and 10 hold both rare words; six more hold one, three the other.
        let plan = Plan::for_test(
            "zephyr deadline",
            vec![
                term("zephyr", vec![30, 20, 10, 45, 44, 43, 42, 41, 40]),
                term("deadline", vec![30, 20, 10, 52, 51, 50]),
            ],
        );
        let short = shortlist(&plan, 5);
        assert_eq!(
            short.rows,
            [30, 20, 10, 52, 51],
            "both words first, newest first"
        );
        assert!(short.cut && !short.cut_among_best, "{short:?}");
        assert!(short.wholly_kept.is_empty(), "fact 50 holds `deadline`");
        let short = shortlist(&plan, 6);
        assert_eq!(short.wholly_kept, [stem::key("deadline")]);
        let short = shortlist(&plan, 2);
        assert_eq!(short.rows, [30, 20]);
        assert!(short.cut && short.cut_among_best, "{short:?}");
        assert!(short.wholly_kept.is_empty());
        let short = shortlist(&plan, 100);
        assert!(!short.cut && !short.cut_among_best, "{short:?}");
        assert_eq!(short.rows.len(), 12);
        assert_eq!(
            short.wholly_kept,
            [stem::key("zephyr"), stem::key("deadline")]
        );
    }

    #[test]
    fn word_order_breaks_a_tie_of_words_and_a_word_counts_alike_in_title_and_content() {
        let plan = plan(&["lock", "the", "file"], &[("lock", 100), ("file", 100)]);
        let scorer = scorer(&plan);
        let in_order = scorer.score(&words(&plan, "", "we lock the file first"));
        let shuffled = scorer.score(&words(&plan, "", "the file we lock first"));
        assert!(in_order > shuffled);
        let title = scorer.score(&words(&plan, "lock", "the file we keep"));
        let content = scorer.score(&words(&plan, "other", "the file we lock"));
        assert_eq!(title, content);
    }

    #[test]
    fn the_words_either_side_of_one_said_otherwise_outrank_the_same_words_apart() {
        let plan = plan(
            &["restart", "stale", "workers"],
            &[("restart", 100), ("stale", 100), ("workers", 100)],
        );
        // The same words and length, no two of the query's words side by side in either; the
        // first keeps `restart` and `workers` one word apart, as the query says them.
        let [around, apart] = contents_scored(
            &plan,
            [
                "we restart idle workers now",
                "we restart now, idle workers",
            ],
        );
        assert!(around > apart, "{around} {apart}");
    }

    #[test]
    fn a_text_read_byte_by_byte_has_the_families_it_has_read_by_characters() {
        let plan = plan(
            &["a", "deploy", "Über", "x1", "fails"],
            &[("deploy", 10), ("über", 10), ("x1", 10), ("fails", 10)],
        );
        let by_chars = |text: &str| -> Vec<Family> {
            let mut families = Families::new(&plan);
            text.split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(|w| families.of_word(w).family)
                .collect()
        };
        for text in [
            "",
            "--",
            "A deployment FAILED; x1 failed, a-b",
            "  Deployed: X1/x2 (DEPLOYS) a",
            "über Über UBER deploy",
            "ünïcode and deploy, fails",
        ] {
            let words = words(&plan, "", text);
            assert_eq!(words.content, by_chars(text), "{text:?}");
        }
        let mixed = words(&plan, "", "A Deployed x1 Fails");
        assert!(
            !mixed.content.contains(&OTHER),
            "every word is one of the query's: {:?}",
            mixed.content
        );
        let split: Vec<&str> = AsciiWords {
            text: ",a  bc-1d9 ",
            at: 0,
        }
        .collect();
        assert_eq!(split, ["a", "bc", "1d9"]);
    }

    #[test]
    fn the_heaviest_rows_are_those_a_whole_sort_puts_first_ties_newest_first() {
        // Weights from a few values, so many rows tie.
        let rows: Vec<(i64, f64)> = (1..=5_000_i64)
            .map(|row| (row, f64::from(u32::try_from(row * 7_919 % 13).unwrap())))
            .collect();
        let mut sorted = rows.clone();
        sorted.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
        for most in [0, 1, 10, 101, 4_999, 5_000, 9_000, usize::MAX] {
            let kept = heaviest(rows.iter().copied(), most);
            assert_eq!(kept, sorted[..most.min(rows.len())], "{most}");
        }
    }
}
