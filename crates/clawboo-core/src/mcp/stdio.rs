//! Serving a [`Server`] over stdio: newline-delimited JSON-RPC on stdin/stdout.
//!
//! Owns: the stdio transport handed to rmcp, and shutdown. Three parties, each with one job:
//! a reader thread reads stdin in bounded lines ([`frame::LineReader`]) and parses each line once,
//! straight into rmcp's message type ([`frame::classify`]), answering what it must answer itself;
//! rmcp serves the parsed messages through [`StdioTransport`], which serializes each outgoing
//! message into one buffer ending in `\n`; a writer thread owns stdout and writes whatever is ready
//! in one `write` (a batch of whole lines). No byte of protocol goes through a pipe twice.
//!
//! Guarantees: stdout carries only JSON-RPC messages, one per line, never interleaved (one writer);
//! a line that is not JSON gets `-32700` (id `null`), JSON that is no JSON-RPC message gets
//! `-32600`, a `tools/call` whose params lack a tool name or carry non-object arguments gets
//! `-32602`, a line over [`MAX_LINE_BYTES`] gets `-32600` naming the limit (read and dropped as
//! it arrives, never buffered whole), and the session goes on; a notification, response or error
//! that arrives before the session has started (an early `notifications/initialized`) is ignored
//! rather than ending the session, so the `initialize` that follows is answered; the server returns
//! cleanly on stdin EOF and on SIGTERM, after in-flight handlers have finished their database work
//! (each handler's writes are transactions, so none is left half-done) and after every answer
//! already produced has been written.
//!
//! Must never: write anything but protocol messages to stdout.

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::model::{ClientRequest, JsonRpcMessage, ServerResult};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{RoleServer, ServiceExt};
use tokio::sync::{mpsc, oneshot};

use super::Server;
use super::frame::{self, Frame, Inbound, LineReader};
use crate::log;

pub use super::frame::MAX_LINE_BYTES;

/// Errors that end a stdio session abnormally.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The MCP session could not be set up (for example, the `initialize` request was refused).
    #[error("MCP session could not start: {0}")]
    Start(String),
    /// Reading stdin or writing stdout failed.
    #[error("stdio failed: {0}")]
    Io(#[from] std::io::Error),
}

/// Parsed messages waiting for rmcp; a full queue stops the reader (back-pressure on stdin).
const INBOUND_QUEUE: usize = 64;
/// Serialized lines waiting for the writer; a full queue stops the senders (back-pressure).
const OUTBOUND_QUEUE: usize = 1024;
/// The most bytes the writer gathers into one `write`.
const BATCH_BYTES: usize = 1 << 20;

/// What the writer thread is given.
enum Out {
    /// One JSON-RPC message, ending in `\n`.
    Line(Vec<u8>),
    /// Write what came before, then stop.
    Close,
}

/// The transport rmcp serves on: parsed messages in, serialized lines out.
struct StdioTransport {
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleServer>>,
    out: mpsc::Sender<Out>,
    started: Arc<AtomicBool>,
}

impl Transport<RoleServer> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Response(response) = &item
            && !matches!(
                response.result,
                ServerResult::EmptyResult(_) | ServerResult::DiscoverResult(_)
            )
        {
            // A real answer before `initialize` means rmcp started a session without one.
            self.started.store(true, Ordering::Relaxed);
        }
        let line = serde_json::to_vec(&item).map(|mut line| {
            line.push(b'\n');
            line
        });
        let out = self.out.clone();
        async move {
            let line = line.map_err(std::io::Error::other)?;
            out.send(Out::Line(line)).await.map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout is closed")
            })
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        self.incoming.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.incoming.close();
        Ok(())
    }
}

/// Serves `server` on this process's stdin and stdout until stdin closes or SIGTERM arrives.
pub async fn serve<S: Send + Sync + 'static>(server: Server<S>) -> Result<(), ServeError> {
    log::route_tracing();
    serve_streams(server, std::io::stdin(), std::io::stdout(), MAX_LINE_BYTES).await
}

/// Serves `server` on `input` and `output` with a line limit of `max_line` bytes. The session ends
/// when `input` ends, or on SIGTERM.
///
/// `input` is read on a plain thread of its own (a read that never returns cannot then hold up the
/// runtime's shutdown), and `output` is written on another.
pub async fn serve_streams<S, R, W>(
    server: Server<S>,
    input: R,
    output: W,
    max_line: usize,
) -> Result<(), ServeError>
where
    S: Send + Sync + 'static,
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let (in_tx, in_rx) = mpsc::channel(INBOUND_QUEUE);
    let (out_tx, out_rx) = mpsc::channel(OUTBOUND_QUEUE);
    let (written_tx, written_rx) = oneshot::channel();
    let started = Arc::new(AtomicBool::new(false));
    std::thread::Builder::new()
        .name("stdout-writer".into())
        .spawn(move || {
            write_loop(out_rx, output);
            let _ = written_tx.send(());
        })?;
    let reader_out = out_tx.clone();
    let reader_started = Arc::clone(&started);
    std::thread::Builder::new()
        .name("stdin-reader".into())
        .spawn(move || read_loop(input, max_line, &in_tx, &reader_out, &reader_started))?;

    let transport = StdioTransport {
        incoming: in_rx,
        out: out_tx.clone(),
        started,
    };
    let name = server.name();
    let session = async {
        match server.serve(transport).await {
            Ok(running) => {
                let _ = running.waiting().await;
                Ok(())
            }
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
                log::info(&format!("{name}: stdin closed before initialize"));
                Ok(())
            }
            Err(e) => Err(ServeError::Start(e.to_string())),
        }
    };
    let result = tokio::select! {
        r = session => r,
        _ = terminate_signal() => {
            log::info(&format!("{name}: SIGTERM received, shutting down"));
            Ok(())
        }
    };
    if out_tx.send(Out::Close).await.is_ok() {
        let _ = written_rx.await;
    }
    log::info(&format!("{name}: stdio session ended"));
    result
}

/// The reader thread: bounded lines in, parsed messages to rmcp, its own answers to the writer.
fn read_loop<R: Read>(
    input: R,
    max_line: usize,
    incoming: &mpsc::Sender<RxJsonRpcMessage<RoleServer>>,
    out: &mpsc::Sender<Out>,
    started: &AtomicBool,
) {
    let mut lines = LineReader::new(input, max_line);
    loop {
        let inbound = match lines.next_frame() {
            Ok(Some(Frame::Line(line))) => frame::classify(line),
            Ok(Some(Frame::Oversized { head })) => {
                log::warn(&format!(
                    "dropped an input line longer than {max_line} bytes; answered with an error"
                ));
                Inbound::Reply(frame::oversized_reply(head, max_line))
            }
            Ok(None) => break,
            Err(e) => {
                log::error(&format!("reading stdin failed: {e}"));
                break;
            }
        };
        let sent = match inbound {
            Inbound::Message(message) => {
                if !started.load(Ordering::Relaxed) {
                    match &*message {
                        JsonRpcMessage::Request(r)
                            if matches!(r.request, ClientRequest::InitializeRequest(_)) =>
                        {
                            started.store(true, Ordering::Relaxed);
                        }
                        JsonRpcMessage::Request(_) => {}
                        _ => {
                            log::debug("ignored a message that is not a request before initialize");
                            continue;
                        }
                    }
                }
                incoming.blocking_send(*message).is_ok()
            }
            Inbound::Reply(mut line) => {
                line.push(b'\n');
                out.blocking_send(Out::Line(line)).is_ok()
            }
            Inbound::Ignore => true,
        };
        if !sent {
            break;
        }
    }
}

/// The writer thread: every line that is ready goes out in one `write`, then a flush.
fn write_loop<W: Write>(mut lines: mpsc::Receiver<Out>, mut output: W) {
    while let Some(Out::Line(mut batch)) = lines.blocking_recv() {
        let mut closing = false;
        while batch.len() < BATCH_BYTES {
            match lines.try_recv() {
                Ok(Out::Line(line)) => batch.extend_from_slice(&line),
                Ok(Out::Close) => {
                    closing = true;
                    break;
                }
                Err(_) => break,
            }
        }
        if let Err(e) = output.write_all(&batch).and_then(|()| output.flush()) {
            log::warn(&format!("writing stdout failed: {e}"));
            return;
        }
        if closing {
            return;
        }
    }
}

#[cfg(unix)]
async fn terminate_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut s) => {
            s.recv().await;
        }
        Err(_) => std::future::pending().await,
    }
}

#[cfg(not(unix))]
async fn terminate_signal() {
    let _ = tokio::signal::ctrl_c().await;
}
