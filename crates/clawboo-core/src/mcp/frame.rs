//! Framing for the stdio transport: bounded newline-delimited lines in, one parse per line.
//!
//! Owns: reading lines with a hard size limit ([`LineReader`]), turning one line into either a
//! message for rmcp or the JSON-RPC answer this layer gives itself ([`classify`]), and the text of
//! those answers.
//!
//! Guarantees: a line is never held past [`MAX_LINE_BYTES`] (the rest of an over-long line is read
//! and dropped as it arrives, so a stream without newlines costs at most the limit); an over-long
//! line is answered with `-32600` naming the limit, carrying the request's `id` when it can be read
//! from the start of the line; a line that is not JSON gets `-32700` (id `null`); JSON that is not a
//! JSON-RPC message gets `-32600`; a `tools/call` without the call's shape gets `-32602` naming the
//! problem (rmcp alone would answer "method not found"); a notification, which must never be
//! answered, is dropped when it does not parse. Every line is parsed once, into rmcp's own type;
//! only a line that fails that parse is looked at again to word the error.
//!
//! Must never: answer a notification, or buffer an unbounded amount of input.

use std::io::{ErrorKind, Read};

use rmcp::RoleServer;
use rmcp::model::{ClientRequest, JsonRpcMessage};
use rmcp::service::RxJsonRpcMessage;
use serde_json::{Value, json};

/// The longest line the servers accept, in bytes (newline excluded): 8 MiB.
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

/// How much of an over-long line is kept to find its `id`.
const HEAD_BYTES: usize = 64 * 1024;

/// How much is read from the input at a time.
const CHUNK_BYTES: usize = 64 * 1024;

/// One unit read from the input.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Frame<'a> {
    /// A whole line, without its newline.
    Line(&'a [u8]),
    /// A line longer than the limit, reported as soon as it crosses it; `head` is its start (at
    /// most 64 KiB). The rest of the line is skipped by the following reads.
    Oversized {
        /// The first bytes of the line.
        head: &'a [u8],
    },
}

/// Reads newline-delimited lines from `input`, never holding more than `limit` bytes of a line.
pub(super) struct LineReader<R> {
    input: R,
    chunk: Box<[u8]>,
    start: usize,
    end: usize,
    line: Vec<u8>,
    limit: usize,
    discarding: bool,
    eof: bool,
}

impl<R: Read> LineReader<R> {
    /// A reader of `input` with a line limit of `limit` bytes.
    pub(super) fn new(input: R, limit: usize) -> Self {
        Self {
            input,
            chunk: vec![0; CHUNK_BYTES].into_boxed_slice(),
            start: 0,
            end: 0,
            line: Vec::new(),
            limit,
            discarding: false,
            eof: false,
        }
    }

    /// The next line or over-long line; `None` at the end of the input. A last line without a
    /// newline is still a line. `before_read` runs, given the input, before every read of it that
    /// may block (the reader writes what it has answered there, so nothing waits behind a quiet
    /// client); its error ends the frame with that error.
    pub(super) fn next_frame(
        &mut self,
        before_read: &mut impl FnMut(&mut R) -> std::io::Result<()>,
    ) -> std::io::Result<Option<Frame<'_>>> {
        self.line.clear();
        if self.line.capacity() > CHUNK_BYTES * 16 {
            self.line.shrink_to(CHUNK_BYTES);
        }
        loop {
            if self.start == self.end {
                if self.eof {
                    return Ok(None);
                }
                before_read(&mut self.input)?;
                match self.input.read(&mut self.chunk) {
                    Ok(0) => {
                        self.eof = true;
                        if self.line.is_empty() || self.discarding {
                            return Ok(None);
                        }
                        return Ok(Some(Frame::Line(&self.line)));
                    }
                    Ok(n) => {
                        self.start = 0;
                        self.end = n;
                    }
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            }
            let available = &self.chunk[self.start..self.end];
            let newline = available.iter().position(|&b| b == b'\n');
            let content = newline.unwrap_or(available.len());
            let consumed = newline.map_or(available.len(), |at| at + 1);
            if self.discarding {
                self.start += consumed;
                self.discarding = newline.is_none();
                continue;
            }
            if self.line.len() + content > self.limit {
                let room = HEAD_BYTES.saturating_sub(self.line.len());
                self.line.extend_from_slice(&available[..content.min(room)]);
                self.line.truncate(HEAD_BYTES);
                self.start += consumed;
                self.discarding = newline.is_none();
                return Ok(Some(Frame::Oversized { head: &self.line }));
            }
            let needed = self.line.len() + content;
            if needed > self.line.capacity() {
                // Grow as a Vec would, but never past the limit.
                let target = (self.line.capacity() * 2).max(needed).min(self.limit);
                self.line.reserve_exact(target - self.line.len());
            }
            self.line.extend_from_slice(&available[..content]);
            self.start += consumed;
            if newline.is_some() {
                return Ok(Some(Frame::Line(&self.line)));
            }
        }
    }
}

/// What one input line turns into.
#[derive(Debug)]
pub(super) enum Inbound {
    /// A message for rmcp.
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// An answer this layer writes itself (one JSON line, without its newline).
    Reply(Vec<u8>),
    /// Nothing to do (a blank line, a notification that does not parse).
    Ignore,
}

/// Parses one line (without its newline) once, into rmcp's message type, or words the answer.
pub(super) fn classify(line: &[u8]) -> Inbound {
    let line = line.trim_ascii();
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.is_empty() {
        return Inbound::Ignore;
    }
    match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
        Ok(JsonRpcMessage::Request(request)) => match &request.request {
            ClientRequest::CustomRequest(custom) if custom.method == "tools/call" => {
                let problem = call_params_problem(custom.params.as_ref())
                    .unwrap_or("params do not have the shape of a tool call");
                let id = serde_json::to_value(&request.id).unwrap_or(Value::Null);
                Inbound::Reply(error_line(
                    &id,
                    -32602,
                    &format!("Invalid params: {problem}"),
                ))
            }
            _ => Inbound::Message(Box::new(JsonRpcMessage::Request(request))),
        },
        Ok(message) => Inbound::Message(Box::new(message)),
        Err(e) if e.classify() == serde_json::error::Category::Data => not_a_message(line, &e),
        Err(e) => {
            crate::log::debug(&format!("unparsable input line: {e}"));
            Inbound::Reply(error_line(
                &Value::Null,
                -32700,
                &format!("Parse error: {e}"),
            ))
        }
    }
}

/// The answer to JSON that is not a JSON-RPC message rmcp accepts (the slow path: the line is
/// parsed a second time, only to find its id and whether it is a notification).
fn not_a_message(line: &[u8], error: &serde_json::Error) -> Inbound {
    let value: Value = serde_json::from_slice(line).unwrap_or(Value::Null);
    let is_notification = value.get("method").is_some() && value.get("id").is_none();
    if is_notification {
        crate::log::debug(&format!(
            "ignored a notification that does not parse: {error}"
        ));
        return Inbound::Ignore;
    }
    if value.get("method").and_then(Value::as_str) == Some("tools/call")
        && let Some(id) = value.get("id")
        && let Some(problem) = call_params_problem(value.get("params"))
    {
        return Inbound::Reply(error_line(
            id,
            -32602,
            &format!("Invalid params: {problem}"),
        ));
    }
    let id = usable_id(value.get("id"));
    crate::log::debug(&format!("not a JSON-RPC message: {error}"));
    Inbound::Reply(error_line(
        &id,
        -32600,
        &format!("Invalid request: {error}"),
    ))
}

/// What is wrong with the params of a `tools/call` (`name` a string, `arguments` an object if
/// present), or `None` when they have the call's shape.
fn call_params_problem(params: Option<&Value>) -> Option<&'static str> {
    Some(match params {
        Some(Value::Object(params)) => match (params.get("name"), params.get("arguments")) {
            (Some(Value::String(_)), None | Some(Value::Object(_) | Value::Null)) => return None,
            (Some(Value::String(_)), Some(_)) => "arguments must be an object",
            _ => "name must be a string naming the tool to call",
        },
        _ => "params must be an object with the tool's name",
    })
}

/// `id` when it is one JSON-RPC allows (a string or a number), else `null`.
fn usable_id(id: Option<&Value>) -> Value {
    match id {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    }
}

/// One JSON-RPC error message as a line (without its newline).
pub(super) fn error_line(id: &Value, code: i64, message: &str) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        .to_string()
        .into_bytes()
}

/// The answer to a line longer than `limit`, with the id found at its start if any.
pub(super) fn oversized_reply(head: &[u8], limit: usize) -> Vec<u8> {
    let id = usable_id(sniff_id(head).as_ref());
    let mib = limit as f64 / (1024.0 * 1024.0);
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": -32600,
            "message": format!(
                "Invalid request: the message is longer than the limit of {limit} bytes \
                 ({mib} MiB) per line; it was dropped unread, send a smaller one"
            ),
            "data": {"maxLineBytes": limit}
        }
    })
    .to_string()
    .into_bytes()
}

/// The value of the top-level `"id"` member of the JSON object `head` starts, if it appears
/// (complete) before the cut. Reads only as far as the id.
fn sniff_id(head: &[u8]) -> Option<Value> {
    let mut at = skip_ws(head, 0);
    if head.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    loop {
        at = skip_ws(head, at);
        if head.get(at) != Some(&b'"') {
            return None;
        }
        let key_end = skip_string(head, at)?;
        let key = &head[at..key_end];
        at = skip_ws(head, key_end);
        if head.get(at) != Some(&b':') {
            return None;
        }
        let value_start = skip_ws(head, at + 1);
        let value_end = skip_value(head, value_start)?;
        if key == b"\"id\"" {
            return serde_json::from_slice(&head[value_start..value_end]).ok();
        }
        at = skip_ws(head, value_end);
        if head.get(at) != Some(&b',') {
            return None;
        }
        at += 1;
    }
}

fn skip_ws(text: &[u8], mut at: usize) -> usize {
    while text.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// The end (exclusive) of the string starting at `at` (an opening quote), if it ends in `text`.
fn skip_string(text: &[u8], at: usize) -> Option<usize> {
    let mut i = at + 1;
    while i < text.len() {
        match text[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The end (exclusive) of the JSON value starting at `at`, if it ends in `text`.
fn skip_value(text: &[u8], at: usize) -> Option<usize> {
    match text.get(at)? {
        b'"' => skip_string(text, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            while i < text.len() {
                match text[i] {
                    b'"' => {
                        i = skip_string(text, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let len = text[at..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())?;
            Some(at + len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(line: &str) -> Value {
        match classify(line.as_bytes()) {
            Inbound::Reply(bytes) => serde_json::from_slice(&bytes).unwrap(),
            other => panic!("{line}: expected an answer, got {other:?}"),
        }
    }

    fn frames(input: &[u8], limit: usize) -> Vec<Result<Vec<u8>, Vec<u8>>> {
        let mut reader = LineReader::new(input, limit);
        let mut out = Vec::new();
        while let Some(frame) = reader.next_frame(&mut |_| Ok(())).unwrap() {
            out.push(match frame {
                Frame::Line(line) => Ok(line.to_vec()),
                Frame::Oversized { head } => Err(head.to_vec()),
            });
        }
        out
    }

    #[test]
    fn a_tools_call_without_the_call_shape_is_invalid_params_naming_the_problem() {
        for (params, problem) in [
            (json!({"name": "x", "arguments": "str"}), "arguments"),
            (json!({"name": "x", "arguments": [1]}), "arguments"),
            (json!({"arguments": {}}), "name"),
            (json!({"name": 7}), "name"),
            (json!("params"), "params"),
        ] {
            let line = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params});
            let answer = reply(&line.to_string());
            assert_eq!(answer["error"]["code"], -32602, "{answer}");
            assert_eq!(answer["id"], 9);
            let message = answer["error"]["message"].as_str().unwrap();
            assert!(message.contains(problem), "{answer}");
        }
        let missing = reply(r#"{"jsonrpc": "2.0", "id": "a", "method": "tools/call"}"#);
        assert_eq!(missing["id"], "a");
        assert_eq!(missing["error"]["code"], -32602);
        // A call whose params are fine but whose envelope is not is an invalid request.
        let envelope =
            reply(r#"{"jsonrpc": 2, "id": 3, "method": "tools/call", "params": {"name": "x"}}"#);
        assert_eq!(envelope["error"]["code"], -32600, "{envelope}");
        assert_eq!(envelope["id"], 3);
    }

    #[test]
    fn well_formed_calls_and_notifications_go_to_rmcp() {
        for message in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", "arguments": {}}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", "arguments": null}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ] {
            assert!(
                matches!(
                    classify(message.to_string().as_bytes()),
                    Inbound::Message(_)
                ),
                "{message}"
            );
        }
        assert!(matches!(classify(b"  \r"), Inbound::Ignore));
    }

    #[test]
    fn not_json_is_a_parse_error_and_json_that_is_no_message_is_an_invalid_request() {
        for line in ["{not json", "\u{7f}garbage", "{\"id\":", "[[[[[[[["] {
            let answer = reply(line);
            assert_eq!(answer["error"]["code"], -32700, "{line}: {answer}");
            assert_eq!(answer["id"], Value::Null);
        }
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        assert_eq!(reply(&deep)["error"]["code"], -32700);
        for (line, id) in [
            ("[1, 2]", Value::Null),
            ("{}", Value::Null),
            (r#"{"jsonrpc":"2.0","id":4}"#, json!(4)),
            (
                r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#,
                Value::Null,
            ),
        ] {
            let answer = reply(line);
            assert_eq!(answer["error"]["code"], -32600, "{line}: {answer}");
            assert_eq!(answer["id"], id, "{line}");
        }
    }

    #[test]
    fn lines_are_split_on_newlines_and_a_last_line_without_one_still_counts() {
        let got = frames(b"a\n\nbc\r\nlast", 10);
        let lines: Vec<Vec<u8>> = got.into_iter().map(Result::unwrap).collect();
        assert_eq!(lines, [&b"a"[..], b"", b"bc\r", b"last"]);
    }

    #[test]
    fn an_over_long_line_is_reported_once_and_skipped_and_the_next_line_is_read() {
        let mut input = b"ok\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 300_000));
        input.extend(b"\nnext\n");
        let got = frames(&input, 1000);
        assert_eq!(
            got.len(),
            3,
            "{:?}",
            got.iter().map(|f| f.is_ok()).collect::<Vec<_>>()
        );
        assert_eq!(got[0], Ok(b"ok".to_vec()));
        let head = got[1].clone().unwrap_err();
        assert!(head.len() <= HEAD_BYTES && head.iter().all(|&b| b == b'x'));
        assert_eq!(got[2], Ok(b"next".to_vec()));
        // Exactly at the limit is accepted; one byte more is not.
        assert_eq!(frames(b"12345\n", 5), [Ok(b"12345".to_vec())]);
        assert!(frames(b"123456\n", 5)[0].is_err());
        // An over-long line that never ends yields one report and nothing more.
        assert_eq!(frames(&[b'y'; 5000], 100).len(), 1);
    }

    #[test]
    fn the_reader_never_holds_more_than_the_limit() {
        let mut reader = LineReader::new(std::io::repeat(b'z').take(50_000_000), 1 << 20);
        assert!(matches!(
            reader.next_frame(&mut |_| Ok(())).unwrap(),
            Some(Frame::Oversized { .. })
        ));
        assert!(reader.next_frame(&mut |_| Ok(())).unwrap().is_none());
        assert!(
            reader.line.capacity() <= 1 << 20,
            "{}",
            reader.line.capacity()
        );
    }

    #[test]
    fn the_oversized_answer_names_the_limit_and_carries_the_id_when_it_comes_first() {
        let limit = MAX_LINE_BYTES;
        for (head, id) in [
            (
                r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"x","arg"#,
                json!(42),
            ),
            (
                r#"{"jsonrpc":"2.0","params":{"a":[1,{"id":3}],"s":"}\""},"id":"r-1","met"#,
                json!("r-1"),
            ),
            (
                r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x","arg"#,
                Value::Null,
            ),
            (r#"{"id":{"no":1},"#, Value::Null),
            ("xxxxxxxx", Value::Null),
        ] {
            let answer: Value =
                serde_json::from_slice(&oversized_reply(head.as_bytes(), limit)).unwrap();
            assert_eq!(answer["id"], id, "{head}");
            assert_eq!(answer["error"]["code"], -32600);
            assert_eq!(answer["error"]["data"]["maxLineBytes"], limit);
            assert!(
                answer["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("8388608 bytes (8 MiB)"),
                "{answer}"
            );
        }
    }
}
