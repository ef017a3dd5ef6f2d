//! Live updates: one change task per host, fanned out to every console over Server-Sent Events.
//!
//! How: one thread listens on the file's change feed (`db::watch`: one `PRAGMA data_version` watcher
//! per process and file, 25 ms tick) and, on each wake, runs **one** statement
//! (`schema::topics::stamps`) to learn which topics changed since its last look; when some did, it
//! publishes one preformatted event (`event: change`, `data: {"generation":n,"topics":[…]}`) on a
//! `tokio::sync::broadcast` channel. Each `/api/events` response is a small task that forwards the
//! channel's events and a `: keep-alive` comment every 15 s into the response body, each written
//! as its own frame (hyper writes a frame as it comes: no buffering, no compression).
//!
//! Cost: nothing per browser per tick. A commit costs one `stamps` statement for the whole host,
//! however many consoles are open (at most one per [`MIN_GAP`]: a burst of commits is looked at
//! together, well within the 1 s promise), and one channel send that each connection task copies
//! to its socket. Guarantees: a commit by any process on the file reaches every open console within
//! the watcher's tick plus [`MIN_GAP`]; a console that falls behind the channel gets one event naming
//! every topic. Must never: query per connection, or replay history (the page re-reads its views
//! after each connection).

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Response, StatusCode, header};
use http_body_util::BodyExt;
use hyper::body::{Body, Frame};
use tokio::sync::{broadcast, mpsc};

use crate::db::{Db, Hangup, watch::Wake};
use crate::log;
use crate::mcp::http::HttpResponse;
use crate::schema::topics::{self, TOPICS};

/// The least time between two looks at the stamps.
pub const MIN_GAP: Duration = Duration::from_millis(100);

/// How often an idle stream says it is alive.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// How many events a slow console may fall behind before it is told "everything changed".
const BACKLOG: usize = 64;

/// The host's change feed: the one task's channel, and the flag that stops it.
#[derive(Debug)]
pub struct Feed {
    sender: broadcast::Sender<Bytes>,
    stop: Arc<Hangup>,
}

impl Drop for Feed {
    fn drop(&mut self) {
        self.stop.raise();
    }
}

/// An event as written to the stream.
fn event(generation: u64, topics: &[&str]) -> Bytes {
    let data = serde_json::json!({ "generation": generation, "topics": topics });
    Bytes::from(format!("event: change\ndata: {data}\n\n"))
}

impl Feed {
    /// Starts the change task over `db` (a handle of its own: the task holds its connection while
    /// it runs its statement, never a request's).
    pub fn start(db: Db) -> Result<Self, String> {
        let (sender, _) = broadcast::channel(BACKLOG);
        let stop = Arc::new(db.changes().hangup());
        let mut listener = db.changes().listen().map_err(|e| e.to_string())?;
        let mut last = topics::stamps(&db.conn()).map_err(|e| e.to_string())?;
        let feed = Self {
            sender: sender.clone(),
            stop: Arc::clone(&stop),
        };
        std::thread::Builder::new()
            .name("console-feed".into())
            .spawn(move || {
                let mut generation = 0u64;
                let mut looked = Instant::now();
                loop {
                    match listener.wait(Instant::now() + KEEP_ALIVE, &stop) {
                        Wake::Stopped => return,
                        Wake::TimedOut => continue,
                        Wake::Changed => {}
                    }
                    std::thread::sleep(MIN_GAP.saturating_sub(looked.elapsed()));
                    looked = Instant::now();
                    let now = match topics::stamps(&db.conn()) {
                        Ok(now) => now,
                        Err(e) => {
                            log::warn(&format!("console feed: {e}"));
                            continue;
                        }
                    };
                    let changed = topics::changed(&last, &now);
                    last = now;
                    if !changed.is_empty() {
                        generation += 1;
                        let _ = sender.send(event(generation, &changed));
                    }
                }
            })
            .map_err(|e| e.to_string())?;
        Ok(feed)
    }

    /// `GET /api/events`: a stream of this feed's events for one console.
    pub fn subscribe(&self) -> HttpResponse {
        let mut events = self.sender.subscribe();
        let (tx, rx) = mpsc::channel::<Bytes>(8);
        tokio::spawn(async move {
            if tx.send(Bytes::from_static(b": live\n\n")).await.is_err() {
                return;
            }
            loop {
                let chunk = tokio::select! {
                    received = events.recv() => match received {
                        Ok(chunk) => chunk,
                        Err(broadcast::error::RecvError::Lagged(_)) => event(0, &TOPICS),
                        Err(broadcast::error::RecvError::Closed) => return,
                    },
                    () = tokio::time::sleep(KEEP_ALIVE) => Bytes::from_static(b": keep-alive\n\n"),
                };
                if tx.send(chunk).await.is_err() {
                    return;
                }
            }
        });
        let mut response = Response::new(Stream(rx).boxed());
        *response.status_mut() = StatusCode::OK;
        let headers = response.headers_mut();
        for (name, value) in [
            (header::CONTENT_TYPE, "text/event-stream; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ] {
            headers.insert(name, header::HeaderValue::from_static(value));
        }
        response
    }
}

/// A response body fed by a connection's task; it ends when the task does.
struct Stream(mpsc::Receiver<Bytes>);

impl Body for Stream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0
            .poll_recv(cx)
            .map(|chunk| chunk.map(|c| Ok(Frame::data(c))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_one_sse_record() {
        let text = event(3, &["board", "memory"]);
        assert_eq!(
            text,
            "event: change\ndata: {\"generation\":3,\"topics\":[\"board\",\"memory\"]}\n\n"
        );
    }
}
