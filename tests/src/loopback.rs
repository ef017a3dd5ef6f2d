//! A loopback HTTP server that stands in for the providers the servers call (Ollama, OpenAI,
//! Tavily) in tests: it answers every request with what a closure says and keeps what it saw;
//! [`ollama`] is a ready-made Ollama.
//!
//! Must never: listen beyond 127.0.0.1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

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

/// An Ollama stand-in: `GET /api/tags` lists `nomic-embed-text:latest`, and `POST /api/embed`
/// answers one [`bag_of_words`] vector per input, so texts sharing words are similar.
pub fn ollama() -> Loopback {
    serve(|seen| {
        let answer = if seen.line == "POST /api/embed" {
            let request: Value = serde_json::from_str(&seen.body).unwrap_or(Value::Null);
            let vectors: Vec<Vec<f64>> = request["input"]
                .as_array()
                .map(|texts| {
                    texts
                        .iter()
                        .map(|t| bag_of_words(t.as_str().unwrap_or("")))
                        .collect()
                })
                .unwrap_or_default();
            json!({ "model": request["model"], "embeddings": vectors })
        } else {
            json!({ "models": [{ "name": "nomic-embed-text:latest" }] })
        };
        (200, answer.to_string())
    })
}

/// A bag-of-words embedding: each ASCII word adds 1 to bucket `fnv1a(word) % 64`, then the vector
/// is L2-normalised.
pub fn bag_of_words(text: &str) -> Vec<f64> {
    let mut v = vec![0.0f64; 64];
    for word in text
        .to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let mut h: u32 = 0x811c_9dc5;
        for b in word.bytes() {
            h ^= u32::from(b);
            h = h.wrapping_mul(0x0100_0193);
        }
        v[(h % 64) as usize] += 1.0;
    }
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
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
