//! The listener and shutdown: accept connections, serve each over HTTP/1.1 on its own task, sweep
//! idle sessions, and on SIGTERM or Ctrl-C stop accepting and end every session.
//!
//! Guarantees: an accept error is logged and the loop goes on; at shutdown every mount's sessions
//! are closed (their servers' close hooks run) before [`Host::run`] returns.
//! Must never: route or admit a request itself (`routes` and `admission` do).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::TokioIo;

use super::routes::State;
use crate::log;

/// How often idle sessions are looked for.
const SWEEP_EVERY: Duration = Duration::from_secs(30);

/// A host bound to its address, ready to run.
pub struct Host {
    pub(super) listener: tokio::net::TcpListener,
    pub(super) state: Arc<State>,
    pub(super) unmounted: Vec<String>,
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

    /// Serves until SIGTERM or Ctrl-C, then ends every session.
    pub async fn run(self) {
        let state = Arc::clone(&self.state);
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
        loop {
            let accepted = tokio::select! {
                accepted = self.listener.accept() => accepted,
                _ = shutdown_signal() => break,
            };
            let stream = match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    log::warn(&format!("accept failed: {e}"));
                    continue;
                }
            };
            let state = Arc::clone(&state);
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request| {
                    let state = Arc::clone(&state);
                    async move { Ok::<_, Infallible>(state.answer(request).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
        sweeper.abort();
        log::info("shutting down: ending every session");
        for mount in &state.mounts {
            mount.service.close_all().await;
        }
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
