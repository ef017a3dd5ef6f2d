//! Which reads of a full-text search's candidates run, and on which of two connections.
//!
//! Owns: a search's reads, in the order their rows come (the shortlist's facts, the whole-query
//! phrase beside a cut shortlist, the plan's sources, then the procedures), whether each is read
//! (its role's rule after what the every-term source found, and whether the shortlist already holds
//! all it can find: `plan::Source::is_read`), and [`run`]: the reads shared by the store's
//! connection and, when there is one, a second connection on the store's [`Helper`] thread, each
//! taking the next read as it finishes one. The shortlist's facts are read in parts of
//! [`SHORTLIST_PART`] rows, taken last: a reader takes the next of the other reads (each a `MATCH`,
//! whose cost is not known before it runs) and a part only when none is left or the next must wait
//! for the every-term source, which the other reader is reading. So neither reader waits while a
//! part is left, and the two finish within about a part of each other (read whole and first, the
//! shortlist left a reader idle at the end, about a tenth of a search's time, measured). Each
//! read's rows land in its own place, so the answer is the same, row for row, whichever connection
//! read what and when: one reader and two give the same hits. With two, the reads share an idle
//! second core: a search takes less time for a little more CPU (two cores' caches). The planner's
//! reads of the query's words, which wait for nothing, are shared the same way
//! ([`each_on_either`]).
//!
//! The helper is a thread that owns the store's second connection for as long as the store keeps
//! it, and takes one share of a search's work at a time. A thread started for each of a search's
//! two shared phases cost more: about 80 µs each to start and join, and the new thread began
//! reading some 45 µs after the search (measured on the bench's machine). Waking a sleeping helper
//! took about 40 µs too, so a search wakes it as it starts ([`Helper::wake`]) and the helper looks
//! for its next share a while ([`LINGER`]) before it sleeps: the shares of one search then find it
//! awake, for at most that much of a core after each share. What the helper reads is owned by the
//! work it is given ([`Reading`], the items of [`each_on_either`]): a search cannot lend its own
//! borrowed data to a thread that outlives it.
//!
//! Must never: read the database itself (what a read is, in SQL, is the caller's function), or let
//! a failing or panicking read leave the other reader waiting, or end the helper's thread.

use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, mpsc};

use super::plan::{EveryTermFound, FoundSoFar, Plan, Role, Source};
use super::rank::Shortlist;

/// One read of candidates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Read<'p> {
    /// Part `part` of [`shortlist_parts`] of the shortlist of the rare terms' rows (by rowid, in
    /// ascending order): its facts.
    Shortlist { part: usize, parts: usize },
    /// The whole query as a phrase, read because the shortlist chose among the facts holding
    /// every rare term by age (`rank::Shortlist::cut_among_best`).
    Phrase(&'p str),
    /// One of the plan's sources.
    Source(&'p Source),
    /// The procedures holding any term in any form (`Plan::any`), which the facts' index does
    /// not hold.
    Procedures(&'p str),
}

/// A thread of a store's own that owns its second connection and reads on it, one share of a
/// search's work at a time, until the store lets it go (then the thread ends and the connection
/// is closed).
pub(super) struct Helper<C> {
    shares: mpsc::Sender<Share<C>>,
}

/// One share of a search's work: what the helper runs on its connection.
type Share<C> = Box<dyn FnOnce(&C) + Send>;

impl<C: Send + 'static> Helper<C> {
    /// A helper owning `conn`, or `None` when no thread can be started.
    pub(super) fn start(conn: C) -> Option<Self> {
        let (shares, queue) = mpsc::channel::<Share<C>>();
        std::thread::Builder::new()
            .name("clawboo-search".into())
            .spawn(move || {
                while let Some(share) = next_share(&queue) {
                    share(&conn);
                }
            })
            .ok()?;
        Some(Self { shares })
    }

    /// Wakes the helper's thread, if it sleeps, for a share of work coming soon: it lingers
    /// awake a while after each share ([`LINGER`]).
    pub(super) fn wake(&self) {
        let _ = self.shares.send(Box::new(|_: &C| {}));
    }
}

/// How long the helper looks for its next share before it sleeps: a search gives it two or three
/// in quick succession, and waking a sleeping thread took about 40 µs on the bench's machine.
const LINGER: std::time::Duration = std::time::Duration::from_micros(200);

/// The next share from `queue`, looked for (giving the core up between looks) for [`LINGER`]
/// before sleeping until one comes; `None` once the helper is let go.
fn next_share<C>(queue: &mpsc::Receiver<Share<C>>) -> Option<Share<C>> {
    let started = std::time::Instant::now();
    loop {
        match queue.try_recv() {
            Ok(share) => return Some(share),
            Err(mpsc::TryRecvError::Empty) if started.elapsed() < LINGER => {
                std::thread::yield_now();
            }
            Err(mpsc::TryRecvError::Empty) => return queue.recv().ok(),
            Err(mpsc::TryRecvError::Disconnected) => return None,
        }
    }
}

impl<C> fmt::Debug for Helper<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Helper")
    }
}

/// A search's reads of candidates, owned, so that the helper's thread can share them: the
/// [`Schedule`] they make and what one read yields.
pub(super) trait Reading: Send + Sync + 'static {
    type Conn: Send + 'static;
    type Row: Send + 'static;
    type Error: Send + 'static;

    /// The reads, in the order one reader takes them.
    fn schedule(&self) -> Schedule<'_>;

    /// One read's rows, read on `conn`.
    fn read(&self, conn: &Self::Conn, read: Read<'_>) -> Result<Vec<Self::Row>, Self::Error>;
}

/// How many of the shortlist's rows a part of it reads (about 0.1 ms of work).
const SHORTLIST_PART: usize = 20;

/// How many parts the shortlist's facts are read in (one at least, which finds nothing when it
/// is empty).
pub(super) fn shortlist_parts(short: &Shortlist) -> usize {
    short.rows.len().div_ceil(SHORTLIST_PART).max(1)
}

/// A search's reads: the shortlist's parts first, then the others in the order one reader takes
/// them (the rows come in this order).
pub(super) struct Schedule<'p> {
    reads: Vec<Read<'p>>,
    /// How many of `reads` are the shortlist's parts.
    parts: usize,
    /// Where the every-term source is among `reads`.
    every_term: Option<usize>,
    /// The rare terms every fact holding which the shortlist kept.
    wholly_kept: &'p [String],
    /// How many rows a source reads at most: the every-term source is full when it found as many.
    wanted: usize,
}

/// How far the readers are, shared by both.
struct Progress<T, E> {
    /// The next read to take after the shortlist's parts.
    next: usize,
    /// The next of the shortlist's parts to take.
    next_part: usize,
    /// What the every-term source found, once it was read.
    every_term: Option<EveryTermFound>,
    /// Each read's rows, in its place (empty for a read not taken).
    found: Vec<Vec<T>>,
    /// The first error met; the readers stop taking reads.
    failed: Option<E>,
    /// A reader panicked; the other stops taking reads (the panic reaches the caller).
    abandoned: bool,
}

/// What both readers of one [`run`] share.
struct Shared<R: Reading> {
    reading: Arc<R>,
    progress: Mutex<Progress<R::Row, R::Error>>,
    changed: Condvar,
}

/// Every read of `reading`'s schedule, its rows in the reads' order, each read on `first` or on
/// `helper`'s connection; a read that is not taken yields no rows. Without a helper, `first` reads
/// them all. The first error met is returned.
pub(super) fn run<R: Reading>(
    reading: Arc<R>,
    first: &R::Conn,
    helper: Option<&Helper<R::Conn>>,
) -> Result<Vec<Vec<R::Row>>, R::Error> {
    let (reads, parts) = {
        let schedule = reading.schedule();
        (schedule.reads.len(), schedule.parts)
    };
    let shared = Arc::new(Shared {
        progress: Mutex::new(Progress {
            next: parts,
            next_part: 0,
            every_term: None,
            found: std::iter::repeat_with(Vec::new).take(reads).collect(),
            failed: None,
            abandoned: false,
        }),
        changed: Condvar::new(),
        reading,
    });
    let worker = Arc::clone(&shared);
    on_both(
        first,
        helper.filter(|_| reads > 1),
        Arc::new(move |conn: &R::Conn| {
            let reading = &*worker.reading;
            reading.schedule().take_reads(
                conn,
                &|conn, read| reading.read(conn, read),
                &worker.progress,
                &worker.changed,
            );
        }),
    );
    let mut progress = lock(&shared.progress);
    match progress.failed.take() {
        Some(e) => Err(e),
        None => Ok(std::mem::take(&mut progress.found)),
    }
}

impl<'p> Schedule<'p> {
    /// The reads of `plan` after `short`, whose sources read at most `wanted` rows.
    pub(super) fn new(plan: &'p Plan, short: &'p Shortlist, wanted: usize) -> Self {
        let parts = shortlist_parts(short);
        let mut reads: Vec<Read<'p>> = (0..parts)
            .map(|part| Read::Shortlist { part, parts })
            .collect();
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
            parts,
            every_term,
            wholly_kept: &short.wholly_kept,
            wanted,
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
        // Should `read` panic, the other reader must not wait for this one's every-term answer.
        let _abandon = OnPanic(|| {
            lock(progress).abandoned = true;
            changed.notify_all();
        });
        loop {
            let Some(at) = self.take(lock(progress), changed) else {
                return;
            };
            let answer = read(conn, self.reads[at]);
            let mut progress = lock(progress);
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
    /// The next read to take, skipping those not read: the next of the reads after the
    /// shortlist's parts, else (none is left, or the next waits for the every-term source, which
    /// the other reader is reading) the next part. `None` when none is left or a reader failed;
    /// waits while the next read waits and no part is left.
    fn take<T, E>(
        &self,
        mut progress: MutexGuard<'_, Progress<T, E>>,
        changed: &Condvar,
    ) -> Option<usize> {
        loop {
            if progress.failed.is_some() || progress.abandoned {
                return None;
            }
            if let Some(read) = self.reads.get(progress.next) {
                let at = progress.next;
                let after_every_term = self.every_term.is_some_and(|e| at > e);
                let waits = matches!(read, Read::Source(source)
                    if after_every_term
                        && source.role.waits_for_every_term()
                        && progress.every_term.is_none());
                if !waits {
                    progress.next += 1;
                    let Read::Source(source) = read else {
                        return Some(at);
                    };
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
                    continue;
                }
            }
            if progress.next_part < self.parts {
                progress.next_part += 1;
                return Some(progress.next_part - 1);
            }
            if progress.next == self.reads.len() {
                return None;
            }
            progress = changed
                .wait(progress)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// Each of `items` read by `read` on `first` or on `helper`'s connection, whichever is free, the
/// answers in the items' order; without a helper, `first` reads them all. After a failed read no
/// reader takes another, and the first failure in the items' order is returned. (The planner's
/// reads of the query's words: independent of each other, so nothing waits.)
pub(super) fn each_on_either<C, I, T, E>(
    first: &C,
    helper: Option<&Helper<C>>,
    items: Vec<I>,
    read: impl Fn(&C, &I) -> Result<T, E> + Send + Sync + 'static,
) -> Result<Vec<T>, E>
where
    C: Send + 'static,
    I: Send + Sync + 'static,
    T: Send + 'static,
    E: Send + 'static,
{
    let shared = Arc::new(Each {
        next: AtomicUsize::new(0),
        answers: items.iter().map(|_| Mutex::new(None)).collect(),
        items,
        read,
    });
    let worker = Arc::clone(&shared);
    on_both(
        first,
        helper.filter(|_| shared.items.len() > 1),
        Arc::new(move |conn: &C| worker.work(conn)),
    );
    shared
        .answers
        .iter()
        .filter_map(|answer| lock(answer).take())
        .collect()
}

/// What both readers of one [`each_on_either`] share.
struct Each<I, T, E, F> {
    items: Vec<I>,
    read: F,
    /// The next item to take.
    next: AtomicUsize,
    /// Each item's answer, in its place.
    answers: Vec<Mutex<Option<Result<T, E>>>>,
}

impl<I, T, E, F> Each<I, T, E, F> {
    /// One reader's loop: takes the next item and reads it, until none is left or a read failed.
    fn work<C>(&self, conn: &C)
    where
        F: Fn(&C, &I) -> Result<T, E>,
    {
        loop {
            let at = self.next.fetch_add(1, Ordering::AcqRel);
            let Some(item) = self.items.get(at) else {
                return;
            };
            let answer = (self.read)(conn, item);
            let failed = answer.is_err();
            *lock(&self.answers[at]) = Some(answer);
            if failed {
                self.next.store(self.items.len(), Ordering::Release);
                return;
            }
        }
    }
}

/// Runs `work` here on `first` and at once on `helper`'s connection, on its thread, and returns
/// when both have returned; a panic on either side reaches the caller (the helper's thread lives
/// on). Without a helper, or should its thread be gone, only on `first`: `work` must then do
/// everything alone.
fn on_both<C: Send + 'static>(
    first: &C,
    helper: Option<&Helper<C>>,
    work: Arc<dyn Fn(&C) + Send + Sync>,
) {
    let Some(helper) = helper else {
        return work(first);
    };
    let done = Arc::new(Done::default());
    let (theirs, told) = (Arc::clone(&work), Arc::clone(&done));
    let share: Share<C> = Box::new(move |conn: &C| {
        told.finish(panic::catch_unwind(AssertUnwindSafe(|| theirs(conn))));
    });
    let lent = helper.shares.send(share).is_ok();
    work(first);
    if lent && let Err(panicked) = done.wait() {
        panic::resume_unwind(panicked);
    }
}

/// Whether the helper has finished its share, and how.
#[derive(Default)]
struct Done {
    outcome: Mutex<Option<std::thread::Result<()>>>,
    changed: Condvar,
}

impl Done {
    fn finish(&self, outcome: std::thread::Result<()>) {
        *lock(&self.outcome) = Some(outcome);
        self.changed.notify_all();
    }

    /// Waits for the share to finish: `Err` with the panic's payload when it panicked.
    fn wait(&self) -> std::thread::Result<()> {
        let mut outcome = lock(&self.outcome);
        loop {
            if let Some(outcome) = outcome.take() {
                return outcome;
            }
            outcome = self
                .changed
                .wait(outcome)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// A lock that a panic in an earlier holder did not spoil: each value guarded here is written in
/// one step.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
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
            said: 0,
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
            Read::Shortlist { .. } => "shortlist".to_owned(),
            Read::Phrase(p) => format!("phrase {p}"),
            Read::Source(s) => s.expression.clone(),
            Read::Procedures(any) => format!("procedures {any}"),
        }
    }

    /// What a reader (0 reads on the search's connection, 1 on the helper's) answers for a read.
    type Answer = dyn Fn(usize, Read<'_>) -> Result<Vec<String>, String> + Send + Sync;

    /// The reads of a plan and a shortlist, each answered by `answer`; how many each reader took.
    struct Reads {
        plan: Plan,
        short: Shortlist,
        answer: Box<Answer>,
        by: [AtomicUsize; 2],
    }

    impl Reading for Reads {
        type Conn = usize;
        type Row = String;
        type Error = String;

        fn schedule(&self) -> Schedule<'_> {
            Schedule::new(&self.plan, &self.short, 2)
        }

        fn read(&self, reader: &usize, read: Read<'_>) -> Result<Vec<String>, String> {
            self.by[*reader].fetch_add(1, Ordering::SeqCst);
            (self.answer)(*reader, read)
        }
    }

    /// Runs the reads of `plan` after `short` with one reader or two (`helper`); each answers by
    /// `answer`. Their rows, and how many reads each reader took.
    fn read_all(
        plan: Plan,
        short: Shortlist,
        helper: Option<&Helper<usize>>,
        answer: impl Fn(usize, Read<'_>) -> Result<Vec<String>, String> + Send + Sync + 'static,
    ) -> (Result<Vec<String>, String>, [usize; 2]) {
        let reads = Arc::new(Reads {
            plan,
            short,
            answer: Box::new(answer),
            by: [AtomicUsize::new(0), AtomicUsize::new(0)],
        });
        let rows = run(Arc::clone(&reads), &0, helper).map(|rows| rows.concat());
        (rows, reads.by.each_ref().map(|n| n.load(Ordering::SeqCst)))
    }

    /// Every read answers its name `rows(name)` times, with one reader or two.
    fn run_named(plan: Plan, short: Shortlist, two: bool, rows: fn(&str) -> usize) -> Vec<String> {
        let helper = Helper::start(1).unwrap();
        read_all(plan, short, two.then_some(&helper), move |_, read| {
            // Let the other reader run ahead, so a wait is really needed.
            std::thread::yield_now();
            Ok(vec![name(read); rows(&name(read))])
        })
        .0
        .unwrap()
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
        for two in [false, true] {
            let answers = run_named(plan(sources()), shortlist(false, &[]), two, |_| 2);
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
        // The shortlist kept every fact holding `r`: `lacks b` (all of whose facts hold it) and
        // `pairs` can find nothing new. The phrase is read beside a shortlist cut among its best.
        for two in [false, true] {
            let rows = |name: &str| if name == "every" { 1 } else { 2 };
            let answers = run_named(plan(sources()), shortlist(true, &["r"]), two, rows);
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
        for two in [false, true] {
            let rows = |name: &str| usize::from(name != "every");
            let answers = run_named(plan(sources()), shortlist(false, &[]), two, rows);
            assert_eq!(
                answers,
                ["shortlist", "pairs", "lacks a", "lacks b", "runs", "any"],
                "two: {two}"
            );
        }
    }

    #[test]
    fn the_procedures_are_read_last_whatever_the_every_term_source_found() {
        let with_procedures = || {
            let mut plan = plan(sources());
            plan.any = Some("a OR b".to_owned());
            plan
        };
        for (every, two) in [(0, false), (0, true), (2, false), (2, true)] {
            let rows: fn(&str) -> usize = if every == 0 {
                |name| usize::from(name != "every")
            } else {
                |name| if name == "every" { 2 } else { 1 }
            };
            let answers = run_named(with_procedures(), shortlist(false, &[]), two, rows);
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

    /// The reads of the sources' plan with `helper`, each answering no rows after 20 ms: long
    /// enough that one reader cannot take every read before the other starts.
    fn slow_reads(helper: &Helper<usize>) -> (Result<Vec<String>, String>, [usize; 2]) {
        read_all(
            plan(sources()),
            shortlist(false, &[]),
            Some(helper),
            |_, _| {
                std::thread::sleep(std::time::Duration::from_millis(20));
                Ok(Vec::new())
            },
        )
    }

    #[test]
    fn both_readers_take_reads_when_there_are_two() {
        let helper = Helper::start(1).unwrap();
        // Several searches in turn on one helper: each finds it free again.
        for _ in 0..3 {
            let (rows, by) = slow_reads(&helper);
            assert_eq!(rows, Ok(Vec::new()));
            // The every-term source found nothing: every source but the whole query is read.
            assert_eq!(by[0] + by[1], 7, "{by:?}");
            assert!(by[0] > 0 && by[1] > 0, "{by:?}");
        }
    }

    #[test]
    fn a_failed_read_is_the_answer_and_a_panicking_one_reaches_the_caller_without_a_hang() {
        let helper = Helper::start(1).unwrap();
        let every_term =
            |read: Read<'_>| matches!(read, Read::Source(s) if s.role == Role::EveryTerm);
        let (failed, _) = read_all(
            plan(sources()),
            shortlist(false, &[]),
            Some(&helper),
            move |_, read| match read {
                Read::Source(s) if every_term(read) => Err(format!("{} failed", s.expression)),
                _ => Ok(vec![String::new()]),
            },
        );
        assert_eq!(failed.unwrap_err(), "every failed");
        // Whichever reader takes the every-term read panics; the reads after it wait for it.
        for _ in 0..20 {
            let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                read_all(
                    plan(sources()),
                    shortlist(false, &[]),
                    Some(&helper),
                    move |_, read| {
                        assert!(!every_term(read), "a read panicked");
                        std::thread::yield_now();
                        Ok(Vec::new())
                    },
                )
            }));
            assert!(panicked.is_err());
        }
        // The helper lived through its readers' panics and still reads.
        let (rows, by) = slow_reads(&helper);
        assert!(rows.is_ok() && by[1] > 0, "{by:?}");
    }

    #[test]
    fn each_item_is_read_once_and_answered_in_its_place_with_one_reader_or_two() {
        let items: Vec<usize> = (0..40).collect();
        let helper = Helper::start(1usize).unwrap();
        for two in [false, true] {
            let by = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
            let counted = Arc::clone(&by);
            let answers = each_on_either(
                &0usize,
                two.then_some(&helper),
                items.clone(),
                move |reader, item| {
                    counted[*reader].fetch_add(1, Ordering::SeqCst);
                    // Long enough that one reader cannot take every item before the other starts.
                    std::thread::sleep(std::time::Duration::from_millis(2));
                    Ok::<_, ()>(item * 10)
                },
            )
            .unwrap();
            assert_eq!(answers, items.iter().map(|i| i * 10).collect::<Vec<_>>());
            let by = by.each_ref().map(|n| n.load(Ordering::SeqCst));
            assert_eq!(by[0] + by[1], items.len(), "two: {two}");
            assert_eq!(by[1] > 0, two, "{by:?}");
        }
    }

    #[test]
    fn a_failed_item_is_the_answer_and_stops_both_readers_and_a_panic_reaches_the_caller() {
        let items: Vec<usize> = (0..200).collect();
        let helper = Helper::start("second").unwrap();
        let taken = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&taken);
        let failed = each_on_either(&"first", Some(&helper), items.clone(), move |_, item| {
            counted.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(1));
            if *item == 3 {
                Err(format!("item {item} failed"))
            } else {
                Ok(())
            }
        });
        assert_eq!(failed.unwrap_err(), "item 3 failed");
        assert!(taken.load(Ordering::SeqCst) < items.len() / 2);
        for _ in 0..5 {
            let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                each_on_either(&"first", Some(&helper), items.clone(), |_, item| {
                    assert_ne!(*item, 5, "an item panicked");
                    Ok::<_, ()>(())
                })
            }));
            assert!(panicked.is_err());
        }
    }
}
