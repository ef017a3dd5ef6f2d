//! What a full-text search's parts cost, tallied by kind while a bench asks for it (`cargo xtask
//! bench-tune --reads`): how many times each ran, for how long, how many rows it found, and how
//! often it found as many rows as it may read (so it may have left some out) or none.
//!
//! Owns: the process's one tally, off until [`start`] and again after [`take`], and the names of
//! the kinds it counts ([`Kind`]). Must never: cost a search more than one atomic load a part
//! while it is off, or change what a part finds.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The process's tally: the one a bench turns on.
static TALLY: Tally = Tally::new();

/// A part of a full-text search that the tally tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// Planning: the query's words, what the index says of them, the sources.
    Planning,
    /// A part of the shortlist's facts, read by rowid.
    ShortlistPart,
    /// The whole query as a phrase, beside a shortlist cut among facts holding every rare term.
    PhraseBesideShortlist,
    /// The facts holding a rare term next to a query neighbour.
    RareTermBesideNeighbours,
    /// The facts holding every present term.
    EveryTerm,
    /// The facts holding every present term and the query's other words.
    EveryWord,
    /// The facts lacking a word: all but one present term, or a common term beside a neighbour.
    LacksAWord,
    /// The whole query as a phrase, a source when no term is rare.
    WholeQuery,
    /// Of the reads of the query's phrase (either kind above): those its superset's facts
    /// answered.
    PhraseBySuperset,
    /// Of the reads of the query's phrase: those that asked the index for the phrase itself.
    PhraseAsked,
    /// Runs of three query words, read when no fact holds every present term.
    RunsOfThree,
    /// The facts holding any common term, when no term is rare.
    AnyCommonTerm,
    /// The procedures holding any term.
    Procedures,
}

impl Kind {
    /// What the kind is, in a few words.
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Planning => "planning",
            Kind::ShortlistPart => "a shortlist part, by rowid",
            Kind::PhraseBesideShortlist => "the query's phrase beside a cut shortlist",
            Kind::RareTermBesideNeighbours => "a rare term beside its neighbours",
            Kind::EveryTerm => "every term",
            Kind::EveryWord => "every word",
            Kind::LacksAWord => "lacking a word",
            Kind::WholeQuery => "the whole query (no rare term)",
            Kind::PhraseBySuperset => "a phrase read, told by its superset",
            Kind::PhraseAsked => "a phrase read, asked of the index",
            Kind::RunsOfThree => "runs of three words",
            Kind::AnyCommonTerm => "any common term",
            Kind::Procedures => "procedures",
        }
    }
}

/// What one kind of part cost, added up.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cost {
    /// How many times it ran.
    pub runs: u64,
    /// For how long, on the wall clock of the thread that ran it.
    pub time: Duration,
    /// How many rows it found.
    pub rows: u64,
    /// How many times it found as many rows as it may read.
    pub as_many: u64,
    /// How many times it found none of the rows it may read (never for a part reading none).
    pub none: u64,
}

/// Empties the process's tally and turns it on.
pub fn start() {
    TALLY.start();
}

/// Turns the process's tally off and hands it over, by kind.
pub fn take() -> Vec<(Kind, Cost)> {
    TALLY.take()
}

/// When a part starts: the time while the process's tally is on, else `None` (nothing is read of
/// the clock).
pub(super) fn started() -> Option<Instant> {
    TALLY.started()
}

/// Adds to the process's tally a part of `kind` that began at `started` (from [`started`];
/// nothing when `None`) and found `rows` of the `most` it may read.
pub(super) fn add(kind: Kind, started: Option<Instant>, rows: usize, most: usize) {
    TALLY.add(kind, started, rows, most);
}

/// A tally: whether it is on, and the costs by kind.
struct Tally {
    on: AtomicBool,
    costs: Mutex<BTreeMap<Kind, Cost>>,
}

impl Tally {
    const fn new() -> Self {
        Self {
            on: AtomicBool::new(false),
            costs: Mutex::new(BTreeMap::new()),
        }
    }

    // `on` changes, and is checked before a part is added, only while the costs are locked: a
    // part ending as the tally is taken lands either in what is taken or nowhere, never in what
    // the next take hands over.
    fn costs(&self) -> std::sync::MutexGuard<'_, BTreeMap<Kind, Cost>> {
        self.costs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn start(&self) {
        let mut costs = self.costs();
        costs.clear();
        self.on.store(true, Ordering::Relaxed);
    }

    fn take(&self) -> Vec<(Kind, Cost)> {
        let mut costs = self.costs();
        self.on.store(false, Ordering::Relaxed);
        std::mem::take(&mut *costs).into_iter().collect()
    }

    fn started(&self) -> Option<Instant> {
        self.on.load(Ordering::Relaxed).then(Instant::now)
    }

    fn add(&self, kind: Kind, started: Option<Instant>, rows: usize, most: usize) {
        // A part begun before the tally was turned on, or ending after it was taken, is left out.
        let Some(started) = started else { return };
        let time = started.elapsed();
        let mut costs = self.costs();
        if !self.on.load(Ordering::Relaxed) {
            return;
        }
        let cost = costs.entry(kind).or_default();
        cost.runs += 1;
        cost.time += time;
        cost.rows += rows as u64;
        // A part that reads no rows (planning: `most` 0) is never said to find as many or none.
        cost.as_many += u64::from(most > 0 && rows >= most);
        cost.none += u64::from(most > 0 && rows == 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_tallied_by_kind_only_while_the_tally_is_on() {
        // A tally of the test's own: the process's is shared by every test's searches.
        let own = Tally::new();
        own.add(Kind::EveryWord, own.started(), 5, 60);
        own.start();
        own.add(Kind::EveryTerm, own.started(), 60, 60);
        own.add(Kind::EveryTerm, own.started(), 0, 60);
        own.add(Kind::EveryTerm, own.started(), 7, 60);
        own.add(Kind::Planning, own.started(), 0, 0);
        let begun_before_the_take = own.started();
        let tally = own.take();
        own.add(Kind::EveryTerm, begun_before_the_take, 9, 60);
        let planning = tally.iter().find(|(k, _)| *k == Kind::Planning);
        assert!(
            planning.is_some_and(|(_, cost)| cost.runs == 1 && cost.none == 0),
            "a part reading no rows is not said to find none: {tally:?}"
        );
        own.add(Kind::EveryTerm, own.started(), 9, 60);
        let every_term = tally.iter().find(|(k, _)| *k == Kind::EveryTerm);
        let Some((_, cost)) = every_term else {
            panic!("every term was tallied: {tally:?}")
        };
        assert_eq!(
            (cost.runs, cost.rows, cost.as_many, cost.none),
            (3, 67, 1, 1)
        );
        assert!(tally.iter().all(|(k, _)| *k != Kind::EveryWord));
        assert!(own.take().is_empty(), "nothing is tallied once it is taken");
    }
}
