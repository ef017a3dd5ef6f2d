//! Serving a [`Server`] over stdio: newline-delimited JSON-RPC on stdin/stdout.
//!
//! Owns: the stdio transport handed to rmcp, the inline answers, and shutdown. Three parties:
//! a reader thread reads stdin in bounded lines ([`frame::LineReader`]) and parses each line once,
//! straight into rmcp's message type ([`frame::classify`]), answering what it must answer itself;
//! rmcp serves the parsed messages through [`StdioTransport`], which serializes each outgoing
//! message into one buffer ending in `\n`; a writer thread writes whatever rmcp has ready in one
//! `write` (a batch of whole lines). No byte of protocol goes through a pipe twice.
//!
//! Inline answers: once the session is up (an `initialize` answered, then
//! `notifications/initialized` read), a `ping` without `_meta`, and a `tools/call` without `_meta`
//! to a server whose handlers never wait ([`super::ServerBuilder::handlers_never_wait`]) that does
//! not ask its tool to wait ([`super::Tool::waits_when`]), are
//! answered on the reader thread itself and the answer queued there; the reader writes what it has queued just before it next blocks on
//! stdin or hands a message to rmcp, so a pipelined burst costs one `write` and no answer is
//! overtaken by the answer to a later line. A round trip then wakes no thread but the reader:
//! for the tasks server it is most of the difference to a `cat` on the same pipe. The answer is the
//! one rmcp would give, byte for byte (`inline_answers_match_rmcp` checks it for every protocol
//! version); everything else (the handshake, lists, prompts, calls with `_meta`, every other
//! server) goes through rmcp.
//!
//! Guarantees: stdout carries only JSON-RPC messages, one per line, never interleaved (whoever
//! writes holds the one lock on it, and writes whole lines);
//! a line that is not JSON gets `-32700` (id `null`), JSON that is no JSON-RPC message gets
//! `-32600`, a `tools/call` whose params lack a tool name or carry non-object arguments gets
//! `-32602`, a line over [`MAX_LINE_BYTES`] gets `-32600` naming the limit (read and dropped as
//! it arrives, never buffered whole), and the session goes on; a notification, response or error
//! that arrives before the session has started (an early `notifications/initialized`) is ignored
//! rather than ending the session, so the `initialize` that follows is answered; on stdin EOF the
//! server's close hooks run at once, so a handler waiting on something (an approval, a change in
//! the database) stops; the server returns cleanly on stdin EOF and on SIGTERM, after in-flight
//! handlers (inline ones too) have finished
//! their database work (each handler's writes are transactions, so none is left half-done) and after
//! every answer already produced has been written.
//!
//! Must never: write anything but protocol messages to stdout.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rmcp::model::{
    CallToolRequestParams, ClientNotification, ClientRequest, GetMeta, JsonRpcMessage,
    JsonRpcRequest, ProtocolVersion, RequestId, ServerResult,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{RoleServer, ServiceExt};
use tokio::sync::{mpsc, oneshot};

use super::Server;
use super::frame::{self, Frame, Inbound, LineReader};
use crate::log;
use serde_json::Value;

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

/// How far the session has come, as the reader and the transport see it.
#[derive(Default)]
struct Progress {
    /// An `initialize` request was read, or rmcp answered a request: messages that are not
    /// requests are no longer ignored.
    started: AtomicBool,
    /// The protocol version rmcp answered `initialize` with (rmcp shapes answers by it), once it
    /// has.
    negotiated: std::sync::OnceLock<ProtocolVersion>,
}

/// What the reader has answered and not yet written; `closing` once the session is ending, after
/// which the reader runs no more calls.
#[derive(Default)]
struct Queued {
    lines: Vec<u8>,
    closing: bool,
}

/// The transport rmcp serves on: parsed messages in, serialized lines out.
struct StdioTransport {
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleServer>>,
    out: mpsc::Sender<Out>,
    progress: Arc<Progress>,
}

impl Transport<RoleServer> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Response(response) = &item {
            match &response.result {
                ServerResult::EmptyResult(_) | ServerResult::DiscoverResult(_) => {}
                ServerResult::InitializeResult(result) => {
                    self.progress.started.store(true, Ordering::Relaxed);
                    let _ = self
                        .progress
                        .negotiated
                        .set(result.protocol_version.clone());
                }
                // A real answer before `initialize` means rmcp started a session without one.
                _ => self.progress.started.store(true, Ordering::Relaxed),
            }
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
    let stdin = EagerStdin {
        stdin: std::io::stdin(),
    };
    serve_streams(server, stdin, std::io::stdout(), MAX_LINE_BYTES).await
}

/// An input the reader serves from.
pub(crate) trait Input: Read + Send + 'static {
    /// Called when the reader has just written answers of its own and is about to block on the
    /// input: the client, which has them, may send its next request at once. By default nothing.
    fn linger(&mut self) {}
}

#[cfg(test)]
impl Input for std::io::PipeReader {}

/// How long the reader looks for the next request before it sleeps in `read`.
const EAGER_WAIT: std::time::Duration = std::time::Duration::from_micros(100);

/// stdin, which lingers: after the reader has written answers of its own (a `ping`, a call of a
/// server whose handlers never wait), it asks for up to [`EAGER_WAIT`] (`poll` with no timeout,
/// yielding the core between asks) whether the next line has arrived before it blocks. A client
/// that sends its next request right after reading an answer (a burst of calls, a supervisor's
/// probes) then finds the reader awake: on a virtual machine, waking a sleeping thread costs tens
/// of microseconds, more than a `get_task` itself. After a message handed to rmcp it does not
/// linger: the answer comes from other threads, which need the cores more. The cost is at most
/// [`EAGER_WAIT`] of one core after each batch of inline answers, given up to any other runnable
/// thread.
struct EagerStdin {
    stdin: std::io::Stdin,
}

impl Read for EagerStdin {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.stdin.read(buf)
    }
}

impl Input for EagerStdin {
    fn linger(&mut self) {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let started = std::time::Instant::now();
            let mut ready = libc::pollfd {
                fd: self.stdin.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: `ready` is one valid pollfd for the duration of the call.
            while unsafe { libc::poll(&mut ready, 1, 0) } == 0 && started.elapsed() < EAGER_WAIT {
                std::thread::yield_now();
            }
        }
    }
}

/// Serves `server` on `input` and `output` with a line limit of `max_line` bytes. The session ends
/// when `input` ends, or on SIGTERM.
///
/// `input` is read on a plain thread of its own (a read that never returns cannot then hold up the
/// runtime's shutdown), and rmcp's answers are written on another.
pub async fn serve_streams<S, R, W>(
    server: Server<S>,
    input: R,
    output: W,
    max_line: usize,
) -> Result<(), ServeError>
where
    S: Send + Sync + 'static,
    R: Input,
    W: Write + Send + 'static,
{
    let (in_tx, in_rx) = mpsc::channel(INBOUND_QUEUE);
    let (out_tx, out_rx) = mpsc::channel(OUTBOUND_QUEUE);
    let (written_tx, written_rx) = oneshot::channel();
    let output = Arc::new(Mutex::new(output));
    let queued = Arc::new(Mutex::new(Queued::default()));
    let progress = Arc::new(Progress::default());
    let writer_output = Arc::clone(&output);
    std::thread::Builder::new()
        .name("stdout-writer".into())
        .spawn(move || {
            write_loop(out_rx, &writer_output);
            let _ = written_tx.send(());
        })?;
    let reader = Reader {
        inline: InlineCalls::new(server.clone()),
        incoming: in_tx,
        queued: Arc::clone(&queued),
        output: Arc::clone(&output),
        progress: Arc::clone(&progress),
    };
    std::thread::Builder::new()
        .name("stdin-reader".into())
        .spawn(move || reader.run(input, max_line))?;

    let transport = StdioTransport {
        incoming: in_rx,
        out: out_tx.clone(),
        progress,
    };
    let name = server.name();
    let session = async {
        match super::McpServer::handler_of(&server).serve(transport).await {
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
    // Waits for an inline call in flight, then writes what the reader answered.
    lock(&queued).closing = true;
    if let Err(e) = write_queued(&queued, &output) {
        log::warn(&format!("writing stdout failed: {e}"));
    }
    log::info(&format!("{name}: stdio session ended"));
    result
}

/// The reader thread: bounded lines in; parsed messages to rmcp, or answered here.
struct Reader<S, W> {
    inline: InlineCalls<S>,
    incoming: mpsc::Sender<RxJsonRpcMessage<RoleServer>>,
    queued: Arc<Mutex<Queued>>,
    output: Arc<Mutex<W>>,
    progress: Arc<Progress>,
}

impl<S: Send + Sync + 'static, W: Write> Reader<S, W> {
    fn run<R: Input>(mut self, input: R, max_line: usize) {
        let mut lines = LineReader::new(input, max_line);
        let (queued, output) = (Arc::clone(&self.queued), Arc::clone(&self.output));
        let mut before_read = |input: &mut R| {
            if write_queued(&queued, &output)? {
                input.linger();
            }
            Ok(())
        };
        loop {
            let inbound = match lines.next_frame(&mut before_read) {
                Ok(Some(Frame::Line(line))) => frame::classify(line),
                Ok(Some(Frame::Oversized { head })) => {
                    log::warn(&format!(
                        "dropped an input line longer than {max_line} bytes; answered with an error"
                    ));
                    Inbound::Reply(frame::oversized_reply(head, max_line))
                }
                Ok(None) => break,
                Err(e) => {
                    log::error(&format!("stdio failed: {e}"));
                    break;
                }
            };
            let go_on = match inbound {
                Inbound::Message(message) => self.dispatch(*message),
                Inbound::Reply(line) => self.queue(&line),
                Inbound::Ignore => true,
            };
            if !go_on {
                break;
            }
        }
        // The client is gone (or the session over): tell the handlers still waiting now, through
        // the close hooks, rather than after rmcp has given them its drain time.
        self.inline.server.close();
        if let Err(e) = write_queued(&self.queued, &self.output) {
            log::warn(&format!("writing stdout failed: {e}"));
        }
    }

    /// Hands `message` to rmcp or answers it inline; `false` when the session is over.
    fn dispatch(&mut self, message: RxJsonRpcMessage<RoleServer>) -> bool {
        if !self.progress.started.load(Ordering::Relaxed) {
            match &message {
                JsonRpcMessage::Request(r)
                    if matches!(r.request, ClientRequest::InitializeRequest(_)) =>
                {
                    self.progress.started.store(true, Ordering::Relaxed);
                }
                JsonRpcMessage::Request(_) => {}
                _ => {
                    log::debug("ignored a message that is not a request before initialize");
                    return true;
                }
            }
        }
        match self.inline.take(message, self.progress.negotiated.get()) {
            Taken::Pass(message) => {
                // What the reader answered goes out before rmcp can answer a later line.
                if let Err(e) = write_queued(&self.queued, &self.output) {
                    log::warn(&format!("writing stdout failed: {e}"));
                    return false;
                }
                self.incoming.blocking_send(*message).is_ok()
            }
            Taken::Answer(id, request) => {
                let mut queued = lock(&self.queued);
                if queued.closing {
                    return false;
                }
                let answer = self.inline.answer(id, request);
                queued.lines.extend_from_slice(&answer);
                true
            }
        }
    }

    /// Queues one of this layer's own answers (a line without its newline).
    fn queue(&self, line: &[u8]) -> bool {
        let mut queued = lock(&self.queued);
        queued.lines.extend_from_slice(line);
        queued.lines.push(b'\n');
        !queued.closing
    }
}

/// What [`InlineCalls::take`] makes of a message.
enum Taken {
    /// A message for rmcp.
    Pass(Box<RxJsonRpcMessage<RoleServer>>),
    /// A request the reader answers itself.
    Answer(RequestId, InlineRequest),
}

/// The requests the reader answers itself.
enum InlineRequest {
    /// `ping`, on a session with the `initialize` lifecycle (every version before `2026-07-28`).
    Ping,
    /// `tools/call` to a server whose handlers never wait.
    Call(Box<CallToolRequestParams>),
}

/// The calls the reader answers itself, and what it must know of the session to answer them as
/// rmcp would.
struct InlineCalls<S> {
    server: Server<S>,
    /// The protocol version rmcp answered `initialize` with: it shapes answers by it.
    protocol: Option<ProtocolVersion>,
    /// `notifications/initialized` was read after rmcp answered `initialize`.
    up: bool,
}

impl<S: Send + Sync + 'static> InlineCalls<S> {
    fn new(server: Server<S>) -> Self {
        Self {
            server,
            protocol: None,
            up: false,
        }
    }

    /// Notes what the session's messages tell, and takes a `ping` or a `tools/call` this server
    /// answers inline (the session is up, the request carries no `_meta`); passes everything else
    /// on.
    /// `negotiated` is the version of rmcp's `initialize` answer, once it has given one.
    fn take(
        &mut self,
        message: RxJsonRpcMessage<RoleServer>,
        negotiated: Option<&ProtocolVersion>,
    ) -> Taken {
        match message {
            JsonRpcMessage::Request(request)
                if self.up && request.request.get_meta().is_empty() =>
            {
                match request.request {
                    ClientRequest::PingRequest(_) if has_initialize(self.protocol.as_ref()) => {
                        Taken::Answer(request.id, InlineRequest::Ping)
                    }
                    ClientRequest::CallToolRequest(call)
                        if self.server.answers_inline(&call.params) =>
                    {
                        Taken::Answer(request.id, InlineRequest::Call(Box::new(call.params)))
                    }
                    other => Taken::Pass(Box::new(JsonRpcMessage::Request(JsonRpcRequest {
                        request: other,
                        ..request
                    }))),
                }
            }
            JsonRpcMessage::Notification(notification) => {
                if matches!(
                    notification.notification,
                    ClientNotification::InitializedNotification(_)
                ) && let Some(version) = negotiated
                {
                    self.protocol = Some(version.clone());
                    self.up = true;
                }
                Taken::Pass(Box::new(JsonRpcMessage::Notification(notification)))
            }
            other => Taken::Pass(Box::new(other)),
        }
    }

    /// Runs the call and serializes its answer, one line ending in `\n`.
    fn answer(&self, id: RequestId, request: InlineRequest) -> Vec<u8> {
        let protocol = self.protocol.as_ref();
        let result = match request {
            InlineRequest::Ping => Ok(super::ping_result(protocol)),
            InlineRequest::Call(call) => self.server.call_inline(*call, protocol),
        };
        let message: TxJsonRpcMessage<RoleServer> = match result {
            Ok(result) => JsonRpcMessage::response(result, id),
            Err(error) => {
                log::error(&format!("{}: {}", self.server.name(), error.message));
                JsonRpcMessage::error(error, Some(id))
            }
        };
        let mut line = serde_json::to_vec(&message).unwrap_or_else(|e| {
            frame::error_line(&Value::Null, -32603, &format!("Internal error: {e}"))
        });
        line.push(b'\n');
        line
    }
}

/// Whether `protocol` (the negotiated version) has the `initialize` lifecycle, under which rmcp
/// answers `ping` (from `2026-07-28` on it does not).
fn has_initialize(protocol: Option<&ProtocolVersion>) -> bool {
    protocol.is_some_and(ProtocolVersion::has_initialize)
}

/// Locks `mutex`, also after a panic elsewhere (what it guards stays usable: bytes and flags).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Writes and flushes the reader's queued answers, if any; whether there were any.
fn write_queued<W: Write>(queued: &Mutex<Queued>, output: &Mutex<W>) -> std::io::Result<bool> {
    let mut queued = lock(queued);
    if queued.lines.is_empty() {
        return Ok(false);
    }
    let mut output = lock(output);
    let written = output
        .write_all(&queued.lines)
        .and_then(|()| output.flush());
    queued.lines.clear();
    written.map(|()| true)
}

/// The writer thread: every line rmcp has ready goes out in one `write`, then a flush.
fn write_loop<W: Write>(mut lines: mpsc::Receiver<Out>, output: &Mutex<W>) {
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
        let mut output = lock(output);
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

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::mpsc::{Receiver, Sender, channel};
    use std::time::Duration;

    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::{Value, json};

    use super::*;
    use crate::mcp::{Reply, Tool, ToolError};

    #[derive(Deserialize, JsonSchema)]
    struct ShoutArgs {
        word: String,
        /// How long the call may wait (it never does: it only asks to be run off the reader).
        #[serde(rename = "waitMs")]
        _wait_ms: Option<u32>,
    }

    #[derive(serde::Serialize, JsonSchema)]
    struct Shouted {
        word: String,
    }

    /// A server with an answer, a policy denial and a panic, and two tools with structured output
    /// (an object and an array); `inline` says whether its handlers never wait (so the reader
    /// answers their calls) unless `waitMs` asks to.
    fn server(inline: bool) -> Server<()> {
        let builder = Server::builder("inline-test", ())
            .tool(
                Tool::new("upper", "Upper.", |_: &(), a: ShoutArgs| {
                    Ok(Reply::json(&Shouted {
                        word: a.word.to_uppercase(),
                    }))
                })
                .output::<Shouted>(),
            )
            .tool(
                Tool::new("spell", "Spell.", |_: &(), a: ShoutArgs| {
                    let letters: Vec<String> = a.word.chars().map(String::from).collect();
                    Ok(Reply::json(&letters))
                })
                .output::<Vec<String>>(),
            )
            .tool(
                Tool::new("shout", "Shout.", |_: &(), a: ShoutArgs| {
                    match a.word.as_str() {
                        "no" => Err(ToolError::denied("refused: no", "policy")),
                        "boom" => panic!("the handler broke"),
                        "where" => Ok(Reply::text(
                            std::thread::current()
                                .name()
                                .unwrap_or("unnamed")
                                .to_owned(),
                        )),
                        word => Ok(Reply::json(&json!({ "word": word.to_uppercase() }))),
                    }
                })
                .waits_when_given("waitMs"),
            );
        if inline {
            builder.handlers_never_wait()
        } else {
            builder
        }
        .build()
    }

    /// Output that hands every write to the test.
    struct Captured(Sender<Vec<u8>>);

    impl Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            let _ = self.0.send(bytes.to_vec());
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A session with `server` on a pipe, driven line by line.
    struct Session {
        input: Option<std::io::PipeWriter>,
        output: Receiver<Vec<u8>>,
        pending: Vec<u8>,
        served: Option<std::thread::JoinHandle<Result<(), ServeError>>>,
    }

    impl Session {
        fn start(server: Server<()>) -> Self {
            let (reader, writer) = std::io::pipe().unwrap();
            let (sent, output) = channel();
            let served = std::thread::spawn(move || {
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .unwrap()
                    .block_on(serve_streams(
                        server,
                        reader,
                        Captured(sent),
                        MAX_LINE_BYTES,
                    ))
            });
            Self {
                input: Some(writer),
                output,
                pending: Vec::new(),
                served: Some(served),
            }
        }

        fn send(&mut self, message: &Value) {
            let input = self.input.as_mut().unwrap();
            input.write_all(format!("{message}\n").as_bytes()).unwrap();
        }

        /// The next line the server writes, as written.
        fn line(&mut self) -> String {
            loop {
                if let Some(at) = self.pending.iter().position(|&b| b == b'\n') {
                    let line: Vec<u8> = self.pending.drain(..=at).collect();
                    return String::from_utf8(line).unwrap();
                }
                let bytes = self
                    .output
                    .recv_timeout(Duration::from_secs(30))
                    .expect("the server answers");
                self.pending.extend(bytes);
            }
        }

        fn close(mut self) -> Vec<String> {
            self.input = None;
            self.served.take().unwrap().join().unwrap().unwrap();
            let mut rest = Vec::new();
            while let Ok(bytes) = self.output.try_recv() {
                self.pending.extend(bytes);
            }
            while !self.pending.is_empty() {
                rest.push(self.line());
            }
            rest
        }
    }

    fn call(id: u64, word: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "shout", "arguments": {"word": word}}})
    }

    /// Runs the same conversation with `server`: the handshake for `version`, then `calls`, each
    /// answered before the next is sent. Every line the server wrote, in order.
    fn conversation(server: Server<()>, version: &str, calls: &[Value]) -> Vec<String> {
        let mut session = Session::start(server);
        session.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        );
        let mut lines = vec![session.line()];
        session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        for call in calls {
            session.send(call);
            lines.push(session.line());
        }
        lines.extend(session.close());
        lines
    }

    #[test]
    fn inline_answers_match_rmcp() {
        let calls = [
            call(1, "hi"),
            call(2, "no"),
            json!({"jsonrpc": "2.0", "id": "s", "method": "tools/call",
                   "params": {"name": "whisper", "arguments": {}}}),
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                   "params": {"name": "shout", "arguments": {"word": 7}}}),
            json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "shout"}}),
            json!({"jsonrpc": "2.0", "id": 6, "method": "ping"}),
            json!({"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {}}),
            json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                   "params": {"name": "upper", "arguments": {"word": "up"}}}),
            json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                   "params": {"name": "spell", "arguments": {"word": "ab"}}}),
        ];
        for version in ProtocolVersion::KNOWN_VERSIONS {
            let mut by_rmcp = Vec::new();
            let mut session = Session::start(server(false));
            session.send(
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": version.as_str(), "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}}),
            );
            by_rmcp.push(session.line());
            // No `notifications/initialized`: the session never counts as up, so rmcp answers
            // every request, pings included.
            for call in &calls {
                session.send(call);
                by_rmcp.push(session.line());
            }
            by_rmcp.extend(session.close());
            let inline = conversation(server(true), version.as_str(), &calls);
            assert_eq!(inline, by_rmcp, "protocol {version}");
            assert_eq!(inline.len(), calls.len() + 1, "{version}: {inline:?}");
            assert!(inline[1].contains("HI"), "{version}: {}", inline[1]);
            let structured = |line: &str| {
                serde_json::from_str::<Value>(line).unwrap()["result"]["structuredContent"].clone()
            };
            let (object, array) = (structured(&inline[8]), structured(&inline[9]));
            // Structured output exists from 2025-06-18 on; an array needs 2026-07-28, which no
            // `initialize` negotiates (asked for it, rmcp answers 2025-11-25).
            let expected = match version.as_str() {
                "2024-11-05" | "2025-03-26" => Value::Null,
                _ => json!({"word": "UP"}),
            };
            assert_eq!((object, array), (expected, Value::Null), "{version}");
        }
    }

    #[test]
    fn an_inline_call_that_panics_is_an_internal_error_and_the_session_goes_on() {
        let lines = conversation(
            server(true),
            "2025-06-18",
            &[call(1, "boom"), call(2, "ok")],
        );
        let broken: Value = serde_json::from_str(&lines[1]).unwrap();
        assert_eq!(broken["id"], 1);
        assert_eq!(broken["error"]["code"], -32603, "{broken}");
        let next: Value = serde_json::from_str(&lines[2]).unwrap();
        assert_eq!(next["id"], 2);
        assert!(
            next["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("OK")
        );
    }

    /// The thread that ran the call `call` of a fresh session of `server`.
    fn thread_of(server: Server<()>, call: Value) -> String {
        let lines = conversation(server, "2025-06-18", &[call]);
        let answer: Value = serde_json::from_str(&lines[1]).unwrap();
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn only_plain_calls_to_a_server_that_never_waits_run_on_the_reader_unless_they_ask_to_wait() {
        assert_eq!(thread_of(server(true), call(1, "where")), "stdin-reader");
        assert_ne!(thread_of(server(false), call(1, "where")), "stdin-reader");
        let mut with_meta = call(1, "where");
        with_meta["params"]["_meta"] = json!({"progressToken": 1});
        assert_ne!(thread_of(server(true), with_meta), "stdin-reader");
        let mut waiting = call(1, "where");
        waiting["params"]["arguments"]["waitMs"] = json!(5);
        assert_ne!(thread_of(server(true), waiting), "stdin-reader");
        let mut not_waiting = call(1, "where");
        not_waiting["params"]["arguments"]["waitMs"] = json!(0);
        assert_eq!(thread_of(server(true), not_waiting), "stdin-reader");
    }

    #[test]
    fn a_call_before_notifications_initialized_goes_to_rmcp() {
        let mut session = Session::start(server(true));
        session.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        );
        session.line();
        session.send(&call(1, "where"));
        let early: Value = serde_json::from_str(&session.line()).unwrap();
        assert_eq!(early["id"], 1);
        assert_ne!(
            early["result"]["content"][0]["text"], "stdin-reader",
            "{early}"
        );
        session.close();
    }
}
