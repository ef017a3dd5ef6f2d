//! The listener and shutdown: accept connections within the cap, serve each over HTTP/1.1 on its
//! own task within the host's limits ([`super::limits`]), sweep idle sessions, apply the retention
//! policy (`schema::retention`: once at start, then every [`RETAIN_EVERY`], on the blocking pool
//! over its own connection, in bounded batches; nothing when it is off), and on SIGTERM or Ctrl-C
//! shut down gracefully.
//!
//! Guarantees: every connection has `TCP_NODELAY` set, so the small last write of a streamed answer
//! (an SSE event, the chunked body's end) goes out at once instead of waiting, under Nagle's
//! algorithm, for the client's delayed ACK (about 40 ms a call on a kept-alive connection); an
//! accept error is logged and the loop goes on; a connection over the cap is
//! answered 503 with `Connection: close` at once, never left waiting; a client that dribbles its
//! headers is closed at the request deadline while the others are served; at shutdown in-flight
//! calls get a bounded grace to finish and every mount's sessions are closed (their servers' close
//! hooks run, so waiting approvals expire) before [`Host::run`] returns.
//! Must never: route or admit a request itself (`routes` and `admission` do).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpStream;
use tokio::sync::{Semaphore, watch};

use super::limits::OVER_CAPACITY;
use super::routes::State;
use crate::db::{Clock, Db};
use crate::log;
use crate::memory::merge_text_indexes;
use crate::schema::retention::{self, Policy};

/// How often idle sessions are looked for.
const SWEEP_EVERY: Duration = Duration::from_secs(30);

/// How often the retention policy is applied and the full-text indexes merged (after once at
/// start).
pub const RETAIN_EVERY: Duration = Duration::from_secs(3600);

/// A host bound to its address, ready to run.
pub struct Host {
    pub(super) listener: tokio::net::TcpListener,
    pub(super) state: Arc<State>,
    pub(super) unmounted: Vec<String>,
    pub(super) retention: Policy,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("addr", &self.state.addr)
            .finish()
    }
}

impl Host {
    /// The address the host listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.state.addr
    }

    /// The servers mounted, in order.
    pub fn mounted(&self) -> Vec<crate::binding::ServerKind> {
        self.state.mounts.iter().map(|m| m.kind).collect()
    }

    /// Why each server that was asked for is not mounted (`clawbrain: no vault …`).
    pub fn unmounted(&self) -> &[String] {
        &self.unmounted
    }

    /// Serves until SIGTERM or Ctrl-C, then shuts down gracefully ([`Host::run_until`]).
    pub async fn run(self) {
        self.run_until(shutdown_signal()).await;
    }

    /// Serves until `stop` completes, then: stops accepting, runs every session's close hooks
    /// (a waiting call stops waiting: its approval request expires, as at the end of a stdio
    /// session, and its answer goes out), lets every connection finish the call it is answering
    /// (keep-alive off) for up to half the shutdown grace, ends every session (which closes the
    /// streams still open), and waits out the rest of the grace for those connections.
    pub async fn run_until(self, stop: impl std::future::Future<Output = ()>) {
        let state = Arc::clone(&self.state);
        let limits = state.limits;
        let sweeper = tokio::spawn({
            let state = Arc::clone(&state);
            async move {
                let mut tick = tokio::time::interval(SWEEP_EVERY);
                loop {
                    tick.tick().await;
                    for mount in &state.mounts {
                        mount.service.sweep().await;
                    }
                }
            }
        });
        let upkeeper = tokio::spawn(upkeep(state.db_path.clone(), self.retention));
        let slots = Arc::new(Semaphore::new(limits.max_connections));
        let (closing, _) = watch::channel(false);
        let mut connections = tokio::task::JoinSet::new();
        tokio::pin!(stop);
        loop {
            let accepted = tokio::select! {
                accepted = self.listener.accept() => accepted,
                () = &mut stop => break,
            };
            while connections.try_join_next().is_some() {}
            let stream = match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    log::warn(&format!("accept failed: {e}"));
                    continue;
                }
            };
            let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
                connections.spawn(refuse(stream));
                continue;
            };
            let state = Arc::clone(&state);
            let closing = closing.subscribe();
            connections.spawn(async move {
                serve_connection(stream, state, closing).await;
                drop(slot);
            });
        }
        sweeper.abort();
        upkeeper.abort();
        log::info("shutting down: finishing in-flight calls, then ending every session");
        let _ = closing.send(true);
        for mount in &state.mounts {
            mount.service.hang_up_all();
        }
        let half = limits.shutdown_grace / 2;
        let _ = tokio::time::timeout(half, drain(&mut connections)).await;
        for mount in &state.mounts {
            mount.service.close_all().await;
        }
        let _ = tokio::time::timeout(limits.shutdown_grace - half, drain(&mut connections)).await;
        connections.abort_all();
    }
}

/// Now and every [`RETAIN_EVERY`]: applies `policy` to the file at `path` (unless it keeps every
/// row) and merges the memory's full-text indexes (`memory::merge_text_indexes`); a failure is
/// logged and tried again next time. The database's clock is the bins' (`Clock::from_env`).
async fn upkeep(path: std::path::PathBuf, policy: Policy) {
    let mut tick = tokio::time::interval(RETAIN_EVERY);
    loop {
        tick.tick().await;
        let path = path.clone();
        let outcome = tokio::task::spawn_blocking(move || {
            let db = Db::open(&path).map_err(|e| e.to_string())?;
            let db = db.with_clock(Clock::from_env());
            let conn = db.conn();
            if !policy.is_off() {
                retention::apply(&conn, &policy, false, None).map_err(|e| e.to_string())?;
            }
            merge_text_indexes(&conn).map_err(|e| e.to_string())
        })
        .await;
        match outcome {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => log::warn(&format!("upkeep failed (tried again in an hour): {e}")),
            Err(e) => log::warn(&format!("upkeep stopped: {e}")),
        }
    }
}

async fn drain(connections: &mut tokio::task::JoinSet<()>) {
    while connections.join_next().await.is_some() {}
}

/// A connection over the cap: the 503, then closed; never left hanging (one second to write it).
async fn refuse(mut stream: TcpStream) {
    use tokio::io::AsyncWriteExt;
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        let _ = stream.write_all(OVER_CAPACITY).await;
        let _ = stream.shutdown().await;
    })
    .await;
}

/// Serves one connection over HTTP/1.1 within the host's limits: its headers within the request
/// deadline (hyper's timer), at most the header bytes and lines allowed, closed when idle for the
/// keep-alive limit between requests, and closed after its current answer once `closing` turns.
async fn serve_connection(
    stream: TcpStream,
    state: Arc<State>,
    mut closing: watch::Receiver<bool>,
) {
    let limits = state.limits;
    if let Err(e) = stream.set_nodelay(true) {
        log::warn(&format!("cannot set TCP_NODELAY: {e}"));
    }
    let activity = Arc::new(Activity::default());
    let service = hyper::service::service_fn({
        let activity = Arc::clone(&activity);
        move |request| {
            let state = Arc::clone(&state);
            let activity = Arc::clone(&activity);
            async move {
                activity.begin();
                let response = state.answer(request).await;
                activity.end();
                Ok::<_, Infallible>(response)
            }
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.request_timeout)
        .max_buf_size(limits.max_header_bytes.max(8192))
        .max_headers(limits.max_headers);
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    let mut tick = tokio::time::interval(Duration::from_secs(1).min(limits.keep_alive));
    let mut shutting = false;
    loop {
        tokio::select! {
            _ = connection.as_mut() => return,
            changed = closing.changed(), if !shutting => {
                if changed.is_err() || *closing.borrow() {
                    shutting = true;
                    connection.as_mut().graceful_shutdown();
                }
            }
            _ = tick.tick(), if !shutting => {
                if activity.idle_for() >= limits.keep_alive {
                    shutting = true;
                    connection.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

/// What one connection is doing: calls being answered, and since when it has been idle.
#[derive(Debug)]
struct Activity {
    in_flight: AtomicUsize,
    since: std::sync::Mutex<Instant>,
}

impl Default for Activity {
    fn default() -> Self {
        Self {
            in_flight: AtomicUsize::new(0),
            since: std::sync::Mutex::new(Instant::now()),
        }
    }
}

impl Activity {
    fn touch(&self) {
        *self
            .since
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Instant::now();
    }

    fn begin(&self) {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        self.touch();
    }

    fn end(&self) {
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.touch();
    }

    /// How long no call has been in flight (zero while one is).
    fn idle_for(&self) -> Duration {
        if self.in_flight.load(Ordering::SeqCst) > 0 {
            return Duration::ZERO;
        }
        self.since
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .elapsed()
    }
}

#[cfg(unix)]
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let term = async {
        match signal(SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = term => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

#[cfg(not(unix))]
async fn shutdown_signal() {
    let _ = tokio::signal::ctrl_c().await;
}
