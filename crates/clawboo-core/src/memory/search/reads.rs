//! Which reads of a full-text search's candidates run, and on which of two connections.
//!
//! Owns: the reads in the order one reader takes them (the shortlist's facts, the whole-query
//! phrase beside a cut shortlist, the plan's sources, then the procedures), whether each is read (its role's rule
//! after what the every-term source found, and whether the shortlist already holds all it can find:
//! `plan::Source::is_read`), and [`Schedule::run`]: the reads shared by the store's connection and,
//! when there is one, a second connection on another thread, each taking the next read as it
//! finishes one. A read that depends on the every-term source waits for it. Each read's rows land
//! in its own place, so the answer is the same, row for row, whichever connection read what: one
//! reader and two give the same hits. With two, the reads share an idle second core: a search
//! takes less time for a little more CPU (a thread started per search, two cores' caches). The
//! planner's reads of the query's words, which wait for nothing, are shared the same way
//! ([`each_on_either`]).
//!
//! Must never: read the database itself (what a read is, in SQL, is the caller's function), or let
//! a failing or panicking read leave the other reader waiting.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use super::plan::{EveryTermFound, FoundSoFar, Plan, Role, Source};
use super::rank::Shortlist;

/// One read of candidates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Read<'p> {
    /// The facts of the shortlist of the rare terms' rows.
    Shortlist,
    /// The whole query as a phrase, read because the shortlist chose among the facts holding
    /// every rare term by age (`rank::Shortlist::cut_among_best`).
    Phrase(&'p str),
    /// One of the plan's sources.
    Source(&'p Source),
    /// The procedures holding any term in any form (`Plan::any`), which the facts' index does
    /// not hold.
    Procedures(&'p str),
}

/// A search's reads, in the order one reader takes them.
pub(super) struct Schedule<'p> {
    reads: Vec<Read<'p>>,
    /// Where the every-term source is among `reads`.
    every_term: Option<usize>,
    /// The rare terms every fact holding which the shortlist kept.
    wholly_kept: &'p [String],
    /// How many rows a source reads at most: the every-term source is full when it found as many.
    wanted: usize,
}

/// How far the readers are, shared by both.
struct Progress<T, E> {
    /// The next read to take.
    next: usize,
    /// What the every-term source found, once it was read.
    every_term: Option<EveryTermFound>,
    /// Each read's rows, in its place (empty for a read not taken).
    found: Vec<Vec<T>>,
    /// The first error met; the readers stop taking reads.
    failed: Option<E>,
    /// A reader panicked; the other stops taking reads (the panic reaches the caller).
    abandoned: bool,
}

impl<'p> Schedule<'p> {
    /// The reads of `plan` after `short`, whose sources read at most `wanted` rows.
    pub(super) fn new(plan: &'p Plan, short: &'p Shortlist, wanted: usize) -> Self {
        let mut reads = vec![Read::Shortlist];
        // More facts hold every rare term than were shortlisted, and the shortlist chose among
        // them by age: those that say the whole query as it is said are read too. (When every
        // fact holding every rare term was shortlisted, so was every fact saying the whole query.)
        if short.cut_among_best
            && let Some(phrase) = &plan.phrase
        {
            reads.push(Read::Phrase(phrase));
        }
        reads.extend(plan.sources.iter().map(Read::Source));
        reads.extend(plan.any.as_deref().map(Read::Procedures));
        let every_term = reads
            .iter()
            .position(|r| matches!(r, Read::Source(s) if s.role == Role::EveryTerm));
        Self {
            reads,
            every_term,
            wholly_kept: &short.wholly_kept,
            wanted,
        }
    }

    /// Every read's rows, in the reads' order, each read by `read` on `first` or (on another
    /// thread) `second`; a read that is not taken yields no rows. Without `second`, or when no
    /// thread can be started, `first` reads them all. The first error met is returned.
    pub(super) fn run<C: Send, T: Send, E: Send>(
        &self,
        first: &C,
        second: Option<&mut C>,
        read: impl Fn(&C, Read<'p>) -> Result<Vec<T>, E> + Sync,
    ) -> Result<Vec<Vec<T>>, E> {
        let progress = Mutex::new(Progress {
            next: 0,
            every_term: None,
            found: std::iter::repeat_with(Vec::new)
                .take(self.reads.len())
                .collect(),
            failed: None,
            abandoned: false,
        });
        let changed = Condvar::new();
        let work = |conn: &C| self.take_reads(conn, &read, &progress, &changed);
        match second {
            Some(second) if self.reads.len() > 1 => on_both(first, second, work),
            _ => work(first),
        }
        let progress = progress
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        match progress.failed {
            Some(e) => Err(e),
            None => Ok(progress.found),
        }
    }

    /// One reader's loop: takes the next read and reads it, until none is left or a reader failed.
    fn take_reads<C, T, E>(
        &self,
        conn: &C,
        read: &impl Fn(&C, Read<'p>) -> Result<Vec<T>, E>,
        progress: &Mutex<Progress<T, E>>,
        changed: &Condvar,
    ) {
        let lock = || progress.lock().unwrap_or_else(PoisonError::into_inner);
        // Should `read` panic, the other reader must not wait for this one's every-term answer.
        let _abandon = OnPanic(|| {
            lock().abandoned = true;
            changed.notify_all();
        });
        loop {
            let Some(at) = self.take(lock(), changed) else {
                return;
            };
            let answer = read(conn, self.reads[at]);
            let mut progress = lock();
            match answer {
                Ok(rows) => {
                    if Some(at) == self.every_term {
                        progress.every_term = Some(EveryTermFound::of(rows.len(), self.wanted));
                        changed.notify_all();
                    }
                    progress.found[at] = rows;
                }
                Err(e) => {
                    progress.failed.get_or_insert(e);
                    changed.notify_all();
                    return;
                }
            }
        }
    }

    /// The next read to take, skipping those not read; `None` when none is left or a reader
    /// failed. Waits while the next read depends on the every-term source, which the other reader
    /// is reading.
    fn take<T, E>(
        &self,
        mut progress: MutexGuard<'_, Progress<T, E>>,
        changed: &Condvar,
    ) -> Option<usize> {
        loop {
            if progress.failed.is_some() || progress.abandoned || progress.next == self.reads.len()
            {
                return None;
            }
            let at = progress.next;
            let after_every_term = self.every_term.is_some_and(|e| at > e);
            let Read::Source(source) = self.reads[at] else {
                progress.next += 1;
                return Some(at);
            };
            if after_every_term
                && source.role.waits_for_every_term()
                && progress.every_term.is_none()
            {
                progress = changed
                    .wait(progress)
                    .unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            progress.next += 1;
            let found = FoundSoFar {
                wholly_kept: self.wholly_kept,
                every_term: if after_every_term {
                    progress.every_term
                } else {
                    None
                },
            };
            if source.is_read(found) {
                return Some(at);
            }
        }
    }
}

/// Each of `items` read by `read` on `first` or (on another thread) `second`, whichever is free,
/// the answers in the items' order; without `second`, or when no thread can be started, `first`
/// reads them all. After a failed read no reader takes another, and the first failure in the
/// items' order is returned. (The planner's reads of the query's words: independent of each
/// other, so nothing waits.)
pub(super) fn each_on_either<C: Send, I: Sync, T: Send, E: Send>(
    first: &C,
    second: Option<&mut C>,
    items: &[I],
    read: impl Fn(&C, &I) -> Result<T, E> + Sync,
) -> Result<Vec<T>, E> {
    let next = AtomicUsize::new(0);
    let answers: Vec<Mutex<Option<Result<T, E>>>> =
        items.iter().map(|_| Mutex::new(None)).collect();
    let work = |conn: &C| {
        loop {
            let at = next.fetch_add(1, Ordering::AcqRel);
            let Some(item) = items.get(at) else {
                return;
            };
            let answer = read(conn, item);
            let failed = answer.is_err();
            *answers[at].lock().unwrap_or_else(PoisonError::into_inner) = Some(answer);
            if failed {
                next.store(items.len(), Ordering::Release);
                return;
            }
        }
    };
    match second {
        Some(second) if items.len() > 1 => on_both(first, second, work),
        _ => work(first),
    }
    answers
        .into_iter()
        .filter_map(|a| a.into_inner().unwrap_or_else(PoisonError::into_inner))
        .collect()
}

/// Runs `work` on `first` here and on `second` on another thread at once, until both return.
/// When no thread can be started, only on `first`: `work` must then do everything alone.
fn on_both<C: Send>(first: &C, second: &mut C, work: impl Fn(&C) + Sync) {
    std::thread::scope(|scope| {
        let work = &work;
        let _helper = std::thread::Builder::new()
            .name("clawboo-search".into())
            .spawn_scoped(scope, move || work(second));
        work(first);
    });
}

/// Runs its function when dropped while the thread panics.
struct OnPanic<F: FnMut()>(F);

impl<F: FnMut()> Drop for OnPanic<F> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            (self.0)();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::plan::HoldsRare;
    use super::*;

    fn source(expression: &str, role: Role, holds: HoldsRare) -> Source {
        Source {
            expression: expression.to_owned(),
            role,
            holds,
        }
    }

    fn shortlist(cut_among_best: bool, wholly_kept: &[&str]) -> Shortlist {
        Shortlist {
            rows: Vec::new(),
            cut: cut_among_best,
            cut_among_best,
            wholly_kept: wholly_kept.iter().map(|k| (*k).to_owned()).collect(),
        }
    }

    /// A plan with the phrase `"a b c"` and these sources.
    fn plan(sources: Vec<Source>) -> Plan {
        let mut plan = Plan::for_test("a b c", Vec::new());
        plan.phrase = Some("\"a b c\"".to_owned());
        plan.sources = sources;
        plan
    }

    /// What each read is called in the answers below.
    fn name(read: Read<'_>) -> String {
        match read {
            Read::Shortlist => "shortlist".to_owned(),
            Read::Phrase(p) => format!("phrase {p}"),
            Read::Source(s) => s.expression.clone(),
            Read::Procedures(any) => format!("procedures {any}"),
        }
    }

    /// Runs `schedule` with one reader or two; every read answers its name `rows(name)` times.
    fn run(schedule: &Schedule<'_>, two: bool, rows: impl Fn(&str) -> usize + Sync) -> Vec<String> {
        let (first, mut second) = ("first", "second");
        let answers = schedule
            .run(&first, two.then_some(&mut second), |_, read| {
                // Let the other reader run ahead, so a wait is really needed.
                std::thread::yield_now();
                Ok::<_, ()>(vec![name(read); rows(&name(read))])
            })
            .unwrap();
        answers.into_iter().flatten().collect()
    }

    fn sources() -> Vec<Source> {
        vec![
            source("pairs", Role::Always, HoldsRare::OneOf(vec!["r".into()])),
            source("every", Role::EveryTerm, HoldsRare::Nothing),
            source("every word", Role::EveryWord, HoldsRare::Nothing),
            source("lacks a", Role::LacksAWord, HoldsRare::Nothing),
            source(
                "lacks b",
                Role::LacksAWord,
                HoldsRare::Each(vec!["r".into()]),
            ),
            source("runs", Role::NoFactHoldsEveryTerm, HoldsRare::Nothing),
            source("whole", Role::WholeQuery, HoldsRare::Nothing),
            source("any", Role::Always, HoldsRare::Nothing),
        ]
    }

    #[test]
    fn a_full_every_term_source_has_the_narrower_sources_read_and_the_lacking_ones_not() {
        let plan = plan(sources());
        let short = shortlist(false, &[]);
        let schedule = Schedule::new(&plan, &short, 2);
        for two in [false, true] {
            let answers = run(&schedule, two, |_| 2);
            let read: Vec<&str> = answers.iter().map(String::as_str).step_by(2).collect();
            assert_eq!(
                read,
                ["shortlist", "pairs", "every", "every word", "whole", "any"],
                "two: {two}"
            );
        }
    }

    #[test]
    fn an_every_term_source_that_is_not_full_has_the_lacking_sources_read_in_their_order() {
        let plan = plan(sources());
        // The shortlist kept every fact holding `r`: `lacks b` (all of whose facts hold it) and
        // `pairs` can find nothing new. The phrase is read beside a shortlist cut among its best.
        let short = shortlist(true, &["r"]);
        let schedule = Schedule::new(&plan, &short, 2);
        for two in [false, true] {
            let answers = run(&schedule, two, |name| if name == "every" { 1 } else { 2 });
            let expected = [
                "shortlist",
                "shortlist",
                "phrase \"a b c\"",
                "phrase \"a b c\"",
                "every",
                "lacks a",
                "lacks a",
                "any",
                "any",
            ];
            assert_eq!(answers, expected, "two: {two}");
        }
    }

    #[test]
    fn an_every_term_source_that_found_nothing_has_the_runs_of_words_read_too() {
        let plan = plan(sources());
        let short = shortlist(false, &[]);
        let schedule = Schedule::new(&plan, &short, 2);
        for two in [false, true] {
            let answers = run(&schedule, two, |name| if name == "every" { 0 } else { 1 });
            assert_eq!(
                answers,
                ["shortlist", "pairs", "lacks a", "lacks b", "runs", "any"],
                "two: {two}"
            );
        }
    }

    #[test]
    fn the_procedures_are_read_last_whatever_the_every_term_source_found() {
        let mut plan = plan(sources());
        plan.any = Some("a OR b".to_owned());
        let short = shortlist(false, &[]);
        let schedule = Schedule::new(&plan, &short, 2);
        for (every, two) in [(0, false), (0, true), (2, false), (2, true)] {
            let answers = run(
                &schedule,
                two,
                |name| if name == "every" { every } else { 1 },
            );
            assert_eq!(
                answers.last().map(String::as_str),
                Some("procedures a OR b"),
                "every: {every}, two: {two}"
            );
            assert_eq!(
                answers
                    .iter()
                    .filter(|a| a.starts_with("procedures"))
                    .count(),
                1
            );
        }
    }

    #[test]
    fn both_readers_take_reads_when_there_are_two() {
        let plan = plan(sources());
        let short = shortlist(false, &[]);
        let schedule = Schedule::new(&plan, &short, 2);
        let (first, mut second) = (0usize, 1usize);
        let by = [AtomicUsize::new(0), AtomicUsize::new(0)];
        schedule
            .run(&first, Some(&mut second), |reader, _| {
                by[*reader].fetch_add(1, Ordering::SeqCst);
                // Long enough that one reader cannot take every read before the other starts.
                std::thread::sleep(std::time::Duration::from_millis(20));
                Ok::<Vec<()>, ()>(Vec::new())
            })
            .unwrap();
        let by = by.map(|n| n.into_inner());
        // The every-term source found nothing: every source but the whole query is read.
        assert_eq!(by[0] + by[1], 7, "{by:?}");
        assert!(by[0] > 0 && by[1] > 0, "{by:?}");
    }

    #[test]
    fn a_failed_read_is_the_answer_and_a_panicking_one_reaches_the_caller_without_a_hang() {
        let plan = plan(sources());
        let short = shortlist(false, &[]);
        let schedule = Schedule::new(&plan, &short, 2);
        let (first, mut second) = ("first", "second");
        let failed = schedule.run(&first, Some(&mut second), |_, read| match read {
            Read::Source(s) if s.role == Role::EveryTerm => Err(format!("{} failed", s.expression)),
            _ => Ok(vec![()]),
        });
        assert_eq!(failed.unwrap_err(), "every failed");
        // Whichever reader takes the every-term read panics; the reads after it wait for it.
        for _ in 0..20 {
            let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let mut second = "second";
                schedule.run(&"first", Some(&mut second), |_, read| {
                    if matches!(read, Read::Source(s) if s.role == Role::EveryTerm) {
                        panic!("a read panicked");
                    }
                    std::thread::yield_now();
                    Ok::<Vec<()>, ()>(Vec::new())
                })
            }));
            assert!(panicked.is_err());
        }
    }

    #[test]
    fn each_item_is_read_once_and_answered_in_its_place_with_one_reader_or_two() {
        let items: Vec<usize> = (0..40).collect();
        for two in [false, true] {
            let (first, mut second) = (0usize, 1usize);
            let by = [AtomicUsize::new(0), AtomicUsize::new(0)];
            let answers = each_on_either(
                &first,
                two.then_some(&mut second),
                &items,
                |reader, item| {
                    by[*reader].fetch_add(1, Ordering::SeqCst);
                    // Long enough that one reader cannot take every item before the other starts.
                    std::thread::sleep(std::time::Duration::from_millis(2));
                    Ok::<_, ()>(item * 10)
                },
            )
            .unwrap();
            assert_eq!(answers, items.iter().map(|i| i * 10).collect::<Vec<_>>());
            let by = by.map(|n| n.into_inner());
            assert_eq!(by[0] + by[1], items.len(), "two: {two}");
            assert_eq!(by[1] > 0, two, "{by:?}");
        }
    }

    #[test]
    fn a_failed_item_is_the_answer_and_stops_both_readers_and_a_panic_reaches_the_caller() {
        let items: Vec<usize> = (0..200).collect();
        let taken = AtomicUsize::new(0);
        let (first, mut second) = ("first", "second");
        let failed = each_on_either(&first, Some(&mut second), &items, |_, item| {
            taken.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(1));
            if *item == 3 {
                Err(format!("item {item} failed"))
            } else {
                Ok(())
            }
        });
        assert_eq!(failed.unwrap_err(), "item 3 failed");
        assert!(taken.into_inner() < items.len() / 2);
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut second = "second";
            each_on_either(&"first", Some(&mut second), &items, |_, item| {
                assert_ne!(*item, 5, "an item panicked");
                Ok::<_, ()>(())
            })
        }));
        assert!(panicked.is_err());
    }
}
