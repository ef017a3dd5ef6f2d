//! A client for the HTTP host (`<bin> serve`): start it on a free loopback port, send HTTP/1.1
//! requests over a plain `TcpStream` (one connection per request, `Connection: close`, or a
//! kept-alive [`Connection`] as real MCP clients hold), and speak MCP over Streamable HTTP (JSON
//! POSTs answered as JSON or as a Server-Sent Events stream).
//!
//! Owns: the host process of a test (ended on drop, by its own pid), response framing
//! (`Content-Length`, chunked, until close), SSE parsing.
//! Must never: reach beyond loopback.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc::channel;
use std::time::Duration;

use serde_json::{Value, json};

use crate::{REPLY_DEADLINE, STATELESS_VERSION, Server, ToolReply, bin_path, server_command};

/// A running HTTP host.
pub struct Host {
    child: Child,
    /// `127.0.0.1:<port>`.
    pub addr: String,
    /// The token requests carry, if the host requires one.
    pub token: Option<String>,
}

impl Host {
    /// Starts `bin serve <args> --listen 127.0.0.1:0` on database `db` and waits for its address.
    pub fn start(bin: &str, args: &[&str], db: &Path, env: &[(&str, &str)]) -> Self {
        let mut cmd = server_command(bin_path(bin), db);
        cmd.arg("serve")
            .args(args)
            .args(["--listen", "127.0.0.1:0"])
            .env_remove("CLAWBOO_HTTP_TOKEN")
            .env_remove("CLAWBOO_BINDING_KEY")
            .env_remove("MEMORY_DIR")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("cannot spawn the host");
        let stderr = child.stderr.take().expect("stderr is piped");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                eprintln!("[host] {line}");
                if let Some(rest) = line.split("listening on http://").nth(1) {
                    let addr = rest
                        .split_whitespace()
                        .next()
                        .unwrap_or_default()
                        .to_owned();
                    let _ = tx.send(addr);
                }
            }
        });
        let addr = rx
            .recv_timeout(REPLY_DEADLINE)
            .expect("the host did not print its address");
        let token = args
            .iter()
            .position(|a| *a == "--token")
            .and_then(|i| args.get(i + 1))
            .map(|t| (*t).to_owned());
        Self { child, addr, token }
    }

    /// The pid of the host process.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends one request with the usual headers (`Host`, the token if any) plus `headers`.
    pub fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
        let mut all: Vec<(String, String)> = vec![("Host".into(), self.addr.clone())];
        if let Some(token) = &self.token {
            all.push(("Authorization".into(), format!("Bearer {token}")));
        }
        for (k, v) in headers {
            all.retain(|(name, _)| !name.eq_ignore_ascii_case(k));
            all.push(((*k).to_owned(), (*v).to_owned()));
        }
        raw_request(&self.addr, method, path, &all, body)
    }

    /// `GET path`.
    pub fn get(&self, path: &str) -> Reply {
        self.send("GET", path, &[], b"")
    }

    /// `POST path` with a JSON body.
    pub fn post_json(&self, path: &str, body: &Value) -> Reply {
        self.send(
            "POST",
            path,
            &[("Content-Type", "application/json")],
            body.to_string().as_bytes(),
        )
    }

    /// Sends one `2026-07-28` request to `path` with no session: `params` carry the per-request
    /// `_meta` ([`crate::stateless`]) and the headers that revision asks for say the version, the
    /// method and (for a call) the tool's name.
    pub fn stateless(&self, path: &str, id: u64, method: &str, params: Value) -> Reply {
        let name = params["name"].as_str().map(str::to_owned);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method,
                          "params": crate::stateless(params)});
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", STATELESS_VERSION),
            ("Mcp-Method", method),
        ];
        if let Some(name) = &name {
            headers.push(("Mcp-Name", name));
        }
        self.send("POST", path, &headers, body.to_string().as_bytes())
    }

    /// The signed path of `server` bound to `team`/`agent`, as the host's config route prints it.
    pub fn bound_path(&self, server: &str, team: &str, agent: &str) -> String {
        let config = self
            .get(&format!(
                "/api/mcp/config?server={server}&scopeTeamId={team}&scopeAgentId={agent}"
            ))
            .json();
        let url = config["config"]["structured"][format!("clawboo-{server}")]["url"]
            .as_str()
            .unwrap_or_else(|| panic!("{config}"))
            .to_owned();
        let path = url.split_once(&self.addr).unwrap().1.to_owned();
        assert!(path.contains("&sig="), "{path}");
        path
    }

    /// Opens an MCP session at `path` (e.g. `/api/mcp/tasks?…`) and completes the handshake.
    pub fn session(&self, path: &str) -> Session<'_> {
        let mut session = Session {
            host: self,
            path: path.to_owned(),
            id: None,
            next_id: 1,
        };
        let reply = session.post(&initialize_message(0));
        assert_eq!(reply.status, 200, "initialize failed: {}", reply.body);
        session.id = Some(
            reply
                .header("mcp-session-id")
                .expect("initialize minted no session id")
                .to_owned(),
        );
        let ack = session.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert_eq!(ack.status, 202, "{}", ack.body);
        session
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `initialize` request with id `id`.
pub fn initialize_message(id: u64) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": "clawboo-tests", "version": "0" }
        }
    })
}

/// One MCP session over Streamable HTTP.
pub struct Session<'a> {
    host: &'a Host,
    path: String,
    /// The session id the host minted.
    pub id: Option<String>,
    next_id: u64,
}

impl Session<'_> {
    /// POSTs a JSON-RPC message with the session id (if any) and MCP's `Accept`.
    pub fn post(&self, message: &Value) -> Reply {
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        if let Some(id) = &self.id {
            headers.push(("mcp-session-id", id));
        }
        self.host
            .send("POST", &self.path, &headers, message.to_string().as_bytes())
    }

    /// Sends a request and returns its response message (`result` or `error`).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let reply =
            self.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        assert_eq!(reply.status, 200, "{method} failed: {}", reply.body);
        reply
            .messages()
            .into_iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("no response to {method} in {}", reply.body))
    }

    /// `tools/list`: the tool names.
    pub fn tool_names(&mut self) -> Vec<String> {
        let response = self.request("tools/list", json!({}));
        response["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("tools/list failed: {response}"))
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect()
    }

    /// `tools/call`.
    pub fn call(&mut self, name: &str, args: Value) -> ToolReply {
        Server::tool_reply(self.request("tools/call", json!({"name": name, "arguments": args})))
    }

    /// `DELETE` the session.
    pub fn delete(&self) -> Reply {
        let id = self.id.clone().unwrap_or_default();
        self.host
            .send("DELETE", &self.path, &[("mcp-session-id", &id)], b"")
    }
}

/// An HTTP response.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// Header names (lower-cased) and values.
    pub headers: Vec<(String, String)>,
    /// The body (de-chunked), as text.
    pub body: String,
}

impl Reply {
    /// The first value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON; panics with the body if it is not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {}", self.body))
    }

    /// The JSON-RPC messages of the body: the body itself when it is JSON, else every SSE
    /// `data:` line that holds JSON.
    pub fn messages(&self) -> Vec<Value> {
        if let Ok(value) = serde_json::from_str::<Value>(&self.body) {
            return vec![value];
        }
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    }
}

/// Sends one HTTP/1.1 request on a fresh connection to `addr` and reads the whole response.
pub fn raw_request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> Reply {
    let mut stream = TcpStream::connect(addr).expect("cannot connect to the host");
    stream
        .set_read_timeout(Some(REPLY_DEADLINE))
        .expect("read timeout");
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    stream.write_all(head.as_bytes()).expect("write the head");
    // A host may answer (413) and close before the whole body is sent; like any client, stop
    // sending then and read what it answered.
    if let Err(e) = stream.write_all(body) {
        let refused = matches!(
            e.kind(),
            std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
        );
        assert!(refused, "write the body: {e}");
    }
    read_response(&mut stream)
}

/// Reads a response until the connection closes.
pub fn read_response(stream: &mut TcpStream) -> Reply {
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    parse_response(&raw)
}

/// Parses a whole HTTP/1.1 response (chunked or not).
pub fn parse_response(raw: &[u8]) -> Reply {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no HTTP head in {:?}", String::from_utf8_lossy(raw)));
    let head = String::from_utf8_lossy(&raw[..split]);
    let (status, headers) =
        parse_head(&head).unwrap_or_else(|| panic!("bad status line in {head}"));
    let payload = &raw[split + 4..];
    let chunked = is_chunked(&headers);
    let body = if chunked {
        dechunk(payload)
    } else {
        payload.to_vec()
    };
    Reply {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// The status and the (lower-cased) headers of a response head, without its blank line; `None`
/// when the status line is not one.
fn parse_head(head: &str) -> Option<(u16, Vec<(String, String)>)> {
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Some((status, headers))
}

fn is_chunked(headers: &[(String, String)]) -> bool {
    headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"))
}

/// One kept-alive HTTP/1.1 connection to a host, as every real MCP client holds one: requests go
/// one after another on the same TCP stream and each response is read by its own framing
/// (`Content-Length`, chunked, or until the host closes). Nothing panics: an I/O error or a
/// response that cannot be parsed is an `Err`, after which the connection is not to be reused.
pub struct Connection {
    addr: String,
    reader: BufReader<TcpStream>,
    /// Whether the host said it closes the connection after its last response.
    closed: bool,
}

impl Connection {
    /// Connects to `addr` (`127.0.0.1:<port>`), with [`REPLY_DEADLINE`] on every read.
    pub fn open(addr: &str) -> std::io::Result<Self> {
        let stream = TcpStream::connect(addr)?;
        stream.set_read_timeout(Some(REPLY_DEADLINE))?;
        stream.set_nodelay(true)?;
        Ok(Self {
            addr: addr.to_owned(),
            reader: BufReader::new(stream),
            closed: false,
        })
    }

    /// Sends one request with `Host` and `headers` (a `Content-Length` is added) and reads its
    /// whole response. Fails when the host closed the connection after an earlier response.
    pub fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> std::io::Result<Reply> {
        if self.closed {
            return Err(std::io::Error::new(
                ErrorKind::NotConnected,
                "the host closed this connection after its last response",
            ));
        }
        let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\n", self.addr);
        for (k, v) in headers {
            request.push_str(&format!("{k}: {v}\r\n"));
        }
        request.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        let mut bytes = request.into_bytes();
        bytes.extend_from_slice(body);
        self.reader.get_mut().write_all(&bytes)?;
        self.read_reply()
    }

    fn read_reply(&mut self) -> std::io::Result<Reply> {
        let invalid = |what: String| std::io::Error::new(ErrorKind::InvalidData, what);
        let mut head = String::new();
        loop {
            let start = head.len();
            if self.reader.read_line(&mut head)? == 0 {
                return Err(std::io::Error::new(
                    ErrorKind::UnexpectedEof,
                    "the host closed the connection before answering",
                ));
            }
            if head[start..] == *"\r\n" {
                break;
            }
        }
        let (status, headers) = parse_head(head.trim_end())
            .ok_or_else(|| invalid(format!("bad status line in {head:?}")))?;
        let header = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        self.closed = header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"));
        let mut body = Vec::new();
        if is_chunked(&headers) {
            let mut line = String::new();
            loop {
                line.clear();
                self.reader.read_line(&mut line)?;
                let size = line.split(';').next().unwrap_or_default().trim();
                let size = usize::from_str_radix(size, 16)
                    .map_err(|_| invalid(format!("bad chunk size {line:?}")))?;
                if size == 0 {
                    // The trailer (the host sends none) ends with a blank line.
                    loop {
                        line.clear();
                        if self.reader.read_line(&mut line)? == 0 || line == "\r\n" {
                            break;
                        }
                    }
                    break;
                }
                let start = body.len();
                body.resize(start + size + 2, 0);
                self.reader.read_exact(&mut body[start..])?;
                body.truncate(start + size);
            }
        } else if let Some(length) = header("content-length") {
            let length: usize = length
                .parse()
                .map_err(|_| invalid(format!("bad Content-Length {length:?}")))?;
            body.resize(length, 0);
            self.reader.read_exact(&mut body)?;
        } else if !(status == 204 || status == 304 || (100..200).contains(&status)) {
            self.reader.read_to_end(&mut body)?;
            self.closed = true;
        }
        Ok(Reply {
            status,
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        })
    }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = data.windows(2).position(|w| w == b"\r\n") {
        let size_text = String::from_utf8_lossy(&data[..end]);
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let Ok(size) = usize::from_str_radix(size_text, 16) else {
            break;
        };
        data = &data[end + 2..];
        if size == 0 || data.len() < size {
            out.extend_from_slice(&data[..size.min(data.len())]);
            break;
        }
        out.extend_from_slice(&data[..size]);
        data = data.get(size + 2..).unwrap_or_default();
    }
    out
}

/// Polls `probe` every 20 ms until it returns `Some`, for at most `limit`.
pub fn poll_until<T>(limit: Duration, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Some(found) = probe() {
            return Some(found);
        }
        if std::time::Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
