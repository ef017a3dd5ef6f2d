//! Waiting on an async worker: the HTTP host answers a quick read (`mcp::Tool::quick_read`) on the
//! tokio worker thread that read its request ([`on_async_worker`]) instead of handing it to the
//! blocking pool and back, two thread hand-offs a call. Such a call must still never hold the
//! worker, and every other connection it serves, while it waits: the places where one may wait
//! (the connection's lock, held by another call of the same session, and the write lock of the
//! rare write a read applies first, a lease's expiry) run through [`may_wait`], which under
//! [`on_async_worker`] first hands the worker's other tasks to another thread (tokio's
//! `block_in_place`) and then waits. Anywhere else it only runs its closure.
//!
//! Owns: the marker of a call running on an async worker. Must never: enter `block_in_place`
//! outside [`on_async_worker`] (on a current-thread runtime it panics), nor let the marker outlive
//! the call (it is reset however the call ends, a panic included).

use std::cell::Cell;

thread_local! {
    /// Whether this thread is running a call under [`on_async_worker`].
    static ON_ASYNC_WORKER: Cell<bool> = const { Cell::new(false) };
}

/// Whether `on_async_worker` may be used from here: inside a multi-threaded tokio runtime, of one
/// worker or more (`block_in_place` panics on a current-thread runtime).
pub fn async_worker_can_wait() -> bool {
    tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
}

/// Runs `call` on this thread, an async worker of a multi-threaded runtime
/// ([`async_worker_can_wait`]), with [`may_wait`] handing the worker's other tasks away before
/// any wait.
pub fn on_async_worker<T>(call: impl FnOnce() -> T) -> T {
    /// Resets the marker when the call ends, however it ends.
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            ON_ASYNC_WORKER.set(self.0);
        }
    }
    let _reset = Reset(ON_ASYNC_WORKER.replace(true));
    call()
}

/// Runs `wait`, something that may wait for another thread or process; on an async worker
/// ([`on_async_worker`]) the worker's other tasks move to another thread first.
pub fn may_wait<T>(wait: impl FnOnce() -> T) -> T {
    if ON_ASYNC_WORKER.get() {
        tokio::task::block_in_place(wait)
    } else {
        wait()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Outside `on_async_worker`, `may_wait` only runs its closure: it is safe on a runtime of one
    /// thread, where `block_in_place` would panic.
    #[tokio::test(flavor = "current_thread")]
    async fn off_a_worker_call_it_only_runs_the_closure() {
        assert!(!async_worker_can_wait());
        assert_eq!(may_wait(|| 7), 7);
    }

    /// A call that waits on an async worker does not hold the worker's other tasks: with one
    /// worker, the task the call waits for runs while it waits (held, it never would, and the
    /// wait would time out).
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_wait_on_the_worker_lets_its_other_tasks_run() {
        let (send, receive) = std::sync::mpsc::channel();
        let sender = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            send.send("sent").unwrap();
        });
        // Spawned, so it runs on the one worker (the test's body runs on its own thread).
        let waiter = tokio::spawn(async move {
            assert!(async_worker_can_wait());
            let got = on_async_worker(|| may_wait(|| receive.recv_timeout(Duration::from_secs(5))));
            (got, ON_ASYNC_WORKER.get())
        });
        let (got, marked_after) = waiter.await.unwrap();
        assert_eq!(got, Ok("sent"));
        assert!(!marked_after, "the marker ends with the call");
        sender.await.unwrap();
    }

    /// The marker is reset when the call panics.
    #[test]
    fn the_marker_does_not_outlive_a_panicking_call() {
        let outcome = std::panic::catch_unwind(|| on_async_worker(|| panic!("handler bug")));
        assert!(outcome.is_err());
        assert!(!ON_ASYNC_WORKER.get());
    }
}
