//! Headless Chromium driven over the DevTools protocol, for tests of the approvals page: start
//! the browser on a free loopback port with a private profile, attach to its page over a minimal
//! WebSocket client (RFC 6455: masked client frames, text and continuation frames), navigate,
//! evaluate JavaScript, take screenshots.
//!
//! Owns: the browser process of a test (ended on drop, by its own pid) and its profile folder.
//! Must never: reach beyond loopback (background networking, sync and updates are off).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::TempDir;
use crate::http::raw_request;

/// Where Debian's `chromium` package installs the browser (`CLAWBOO_CHROMIUM` overrides it).
pub fn chromium_path() -> PathBuf {
    std::env::var_os("CLAWBOO_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"))
}

/// A running headless browser and a DevTools connection to its page.
pub struct Browser {
    child: Child,
    _profile: TempDir,
    socket: TcpStream,
    next_id: u64,
}

impl Browser {
    /// Starts the browser and attaches to its first page.
    pub fn start() -> Self {
        let profile = TempDir::new("chromium");
        let mut child = Command::new(chromium_path())
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--no-first-run",
                "--no-default-browser-check",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                "--remote-allow-origins=*",
                "--window-size=1280,900",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start chromium (apt-get install chromium)");
        let port = wait_for_port(profile.path(), &mut child);
        let addr = format!("127.0.0.1:{port}");
        let list = poll(Duration::from_secs(60), || {
            let reply = raw_request(
                &addr,
                "GET",
                "/json/list",
                &[("Host".into(), addr.clone())],
                b"",
            );
            let targets: Value = serde_json::from_str(&reply.body).ok()?;
            targets
                .as_array()?
                .iter()
                .find(|t| t["type"] == "page")
                .and_then(|t| t["webSocketDebuggerUrl"].as_str())
                .map(str::to_owned)
        })
        .expect("chromium has no page target");
        let path = list
            .split_once(&addr)
            .map(|(_, path)| path.to_owned())
            .expect("a loopback DevTools URL");
        let socket = websocket_connect(&addr, &path);
        Self {
            child,
            _profile: profile,
            socket,
            next_id: 1,
        }
    }

    /// Sends a DevTools command and returns its `result` (panics on a protocol error).
    pub fn command(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({ "id": id, "method": method, "params": params });
        write_frame(&mut self.socket, message.to_string().as_bytes());
        loop {
            let text = read_message(&mut self.socket);
            let Ok(reply) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            if reply["id"] == id {
                if let Some(error) = reply.get("error") {
                    panic!("{method} failed: {error}");
                }
                return reply["result"].clone();
            }
        }
    }

    /// Loads `url` in the page.
    pub fn navigate(&mut self, url: &str) {
        self.command("Page.navigate", json!({ "url": url }));
    }

    /// Evaluates `expression` in the page and returns its value.
    pub fn eval(&mut self, expression: &str) -> Value {
        let result = self.command(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
        );
        if let Some(exception) = result.get("exceptionDetails") {
            panic!("{expression} threw: {exception}");
        }
        result["result"]["value"].clone()
    }

    /// Evaluates `expression` every 50 ms until it is `true`, for at most `limit` (an exception,
    /// e.g. while the page is still loading, counts as not yet).
    pub fn wait_for(&mut self, expression: &str, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let guarded = format!(
            "(() => {{ try {{ return ({expression}); }} catch (e) {{ return false; }} }})()"
        );
        loop {
            if self.eval(&guarded) == Value::Bool(true) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Saves a PNG screenshot of the page to `path`.
    pub fn screenshot(&mut self, path: &Path) {
        let shot = self.command("Page.captureScreenshot", json!({ "format": "png" }));
        let data = shot["data"].as_str().expect("screenshot data");
        let png = base64_decode(data).expect("screenshot is base64");
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("screenshot folder");
        }
        std::fs::write(path, png).expect("write the screenshot");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn poll<T>(limit: Duration, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(found) = probe() {
            return Some(found);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The DevTools port the browser wrote to `DevToolsActivePort` in its profile.
fn wait_for_port(profile: &Path, child: &mut Child) -> u16 {
    poll(Duration::from_secs(60), || {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("chromium exited at start: {status}");
        }
        let text = std::fs::read_to_string(profile.join("DevToolsActivePort")).ok()?;
        text.lines().next()?.trim().parse().ok()
    })
    .expect("chromium did not open its DevTools port")
}

fn websocket_connect(addr: &str, path: &str) -> TcpStream {
    let mut socket = TcpStream::connect(addr).expect("connect to DevTools");
    socket
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("read timeout");
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    socket
        .write_all(request.as_bytes())
        .expect("upgrade request");
    let mut reader = BufReader::new(socket.try_clone().expect("clone the socket"));
    let mut status = String::new();
    reader.read_line(&mut status).expect("upgrade status");
    assert!(
        status.contains(" 101 "),
        "DevTools refused the WebSocket: {status}"
    );
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("upgrade headers");
        if line == "\r\n" || line.is_empty() {
            break;
        }
    }
    assert!(
        reader.buffer().is_empty(),
        "no frame arrives before the first command"
    );
    socket
}

/// Sends one masked text frame.
fn write_frame(socket: &mut TcpStream, payload: &[u8]) {
    let mut frame = vec![0x81u8];
    let mask = [0x3a, 0x5c, 0x11, 0xe7];
    match payload.len() {
        n if n < 126 => frame.push(0x80 | n as u8),
        n if n <= u16::MAX as usize => {
            frame.push(0x80 | 126);
            frame.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            frame.push(0x80 | 127);
            frame.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    frame.extend_from_slice(&mask);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    socket.write_all(&frame).expect("send a frame");
}

/// Reads one whole text message (joining continuation frames; answering pings).
fn read_message(socket: &mut TcpStream) -> String {
    let mut message = Vec::new();
    loop {
        let mut head = [0u8; 2];
        socket.read_exact(&mut head).expect("frame head");
        let fin = head[0] & 0x80 != 0;
        let opcode = head[0] & 0x0f;
        let mut len = u64::from(head[1] & 0x7f);
        if len == 126 {
            let mut ext = [0u8; 2];
            socket.read_exact(&mut ext).expect("frame length");
            len = u64::from(u16::from_be_bytes(ext));
        } else if len == 127 {
            let mut ext = [0u8; 8];
            socket.read_exact(&mut ext).expect("frame length");
            len = u64::from_be_bytes(ext);
        }
        let mut payload = vec![0u8; len as usize];
        socket.read_exact(&mut payload).expect("frame payload");
        match opcode {
            0x9 => continue,
            0x8 => panic!("DevTools closed the connection"),
            _ => message.extend_from_slice(&payload),
        }
        if fin {
            return String::from_utf8_lossy(&message).into_owned();
        }
    }
}

/// Standard base64 (with padding) to bytes.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let clean: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let mut out = Vec::with_capacity(clean.len() / 4 * 3);
    for chunk in clean.chunks(4) {
        let pad = chunk.iter().rev().take_while(|&&b| b == b'=').count();
        let mut acc = 0u32;
        for (i, &b) in chunk.iter().enumerate() {
            let v = if i >= chunk.len() - pad { 0 } else { value(b)? };
            acc |= v << (18 - 6 * i);
        }
        let bytes = acc.to_be_bytes();
        out.extend_from_slice(&bytes[1..4 - pad]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes_with_and_without_padding() {
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64_decode("aGk=").unwrap(), b"hi");
        assert_eq!(base64_decode("YWJj").unwrap(), b"abc");
        assert_eq!(base64_decode("").unwrap(), b"");
        assert_eq!(base64_decode("a*=="), None);
    }
}
