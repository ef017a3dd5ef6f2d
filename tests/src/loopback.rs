//! A loopback HTTP server that stands in for the providers the servers call (Ollama, OpenAI,
//! Tavily) in tests: it answers every request with what a closure says and keeps what it saw.
//!
//! Must never: listen beyond 127.0.0.1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// One request as the server saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// `METHOD /path`.
    pub line: String,
    /// The header lines, lower-cased.
    pub headers: String,
    /// The body.
    pub body: String,
}

/// A running stand-in: its base URL and what it has been asked so far.
pub struct Loopback {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Loopback {
    /// The requests answered so far, oldest first.
    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Starts a server answering each request with `answer(&seen) -> (status, JSON body)`; it runs
/// until the test process ends.
pub fn serve(answer: impl Fn(&Seen) -> (u16, String) + Send + 'static) -> Loopback {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let base = format!(
        "http://{}",
        listener.local_addr().expect("the bound address")
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let Some(request) = read_request(&mut stream) else {
                continue;
            };
            let (status, body) = answer(&request);
            log.lock().unwrap_or_else(|p| p.into_inner()).push(request);
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    Loopback { base, seen }
}

/// A base URL nothing listens on (connections are refused).
pub fn closed_port() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    format!(
        "http://{}",
        listener.local_addr().expect("the bound address")
    )
}

fn read_request(stream: &mut TcpStream) -> Option<Seen> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut headers = String::new();
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 || header == "\r\n" {
            break;
        }
        let lower = header.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().ok()?;
        }
        headers.push_str(&lower);
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    let mut parts = line.split_whitespace();
    Some(Seen {
        line: format!("{} {}", parts.next()?, parts.next()?),
        headers,
        body: String::from_utf8(body).ok()?,
    })
}
