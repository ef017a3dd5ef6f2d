//! Outbound HTTP for the optional providers (embeddings, web search): JSON in, JSON out, with a
//! deadline.
//!
//! Owns: the one HTTP client of the project. Guarantees: every request has a timeout; a non-2xx
//! answer is an error carrying the status and (truncated) body; nothing here panics on a bad
//! answer. Must never: log or return request headers (they carry API keys).

use std::time::Duration;

use serde_json::Value;

/// Errors of an outbound JSON request.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The request could not be sent or the answer not read (connection refused, timeout, TLS).
    #[error("request to {url} failed: {detail}")]
    Transport {
        /// The address (without query).
        url: String,
        /// What failed.
        detail: String,
    },
    /// The server answered with a non-success status.
    #[error("{url} answered HTTP {status}: {body}")]
    Status {
        /// The address (without query).
        url: String,
        /// The status code.
        status: u16,
        /// The start of the answer's body.
        body: String,
    },
    /// The answer was not JSON.
    #[error("{url} answered with something that is not JSON: {detail}")]
    NotJson {
        /// The address (without query).
        url: String,
        /// The parse error.
        detail: String,
    },
}

fn display_url(url: &str) -> String {
    url.split('?').next().unwrap_or(url).to_owned()
}

/// POSTs `body` as JSON to `url` with the given extra headers and returns the JSON answer.
pub fn post_json(
    url: &str,
    headers: &[(&str, &str)],
    body: &Value,
    timeout: Duration,
) -> Result<Value, HttpError> {
    exchange(url, headers, Some(body), timeout)
}

/// GETs `url` and returns the JSON answer.
pub fn get_json(url: &str, timeout: Duration) -> Result<Value, HttpError> {
    exchange(url, &[], None, timeout)
}

/// One request: a POST of `body` as JSON when there is one, else a GET.
fn exchange(
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
    timeout: Duration,
) -> Result<Value, HttpError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .build()
        .into();
    let shown = display_url(url);
    let transport = |e: ureq::Error| HttpError::Transport {
        url: shown.clone(),
        detail: e.to_string(),
    };
    let mut response = match body {
        Some(body) => {
            let mut request = agent.post(url).header("content-type", "application/json");
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            request.send(body.to_string())
        }
        None => {
            let mut request = agent.get(url);
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            request.call()
        }
    }
    .map_err(transport)?;
    let status = response.status().as_u16();
    let text = response
        .body_mut()
        .with_config()
        .limit(32 * 1024 * 1024)
        .read_to_string()
        .map_err(transport)?;
    if !(200..300).contains(&status) {
        return Err(HttpError::Status {
            url: shown,
            status,
            body: text.chars().take(300).collect(),
        });
    }
    serde_json::from_str(&text).map_err(|e| HttpError::NotJson {
        url: shown,
        detail: e.to_string(),
    })
}

/// A loopback HTTP server for unit tests of the clients built on this module.
#[cfg(test)]
pub(crate) mod loopback {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;
    use std::sync::{Arc, Mutex};

    /// One request as the server saw it.
    #[derive(Debug, Clone)]
    pub struct Seen {
        /// `METHOD /path`.
        pub line: String,
        /// The header block, lower-cased.
        pub headers: String,
        /// The body.
        pub body: String,
    }

    /// Answers every request with `answer(&seen) -> (status, body)` until the test ends; returns
    /// the base URL and the log of requests.
    pub fn serve(
        answer: impl Fn(&Seen) -> (u16, String) + Send + 'static,
    ) -> (String, Arc<Mutex<Vec<Seen>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let log = Arc::new(Mutex::new(Vec::new()));
        let seen_log = Arc::clone(&log);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let Some(seen) = read_request(&mut stream) else {
                    continue;
                };
                let (status, body) = answer(&seen);
                seen_log.lock().unwrap().push(seen);
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        (base, log)
    }

    fn read_request(stream: &mut std::net::TcpStream) -> Option<Seen> {
        let mut reader = BufReader::new(stream.try_clone().ok()?);
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let mut headers = String::new();
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).ok()?;
            if header == "\r\n" || header.is_empty() {
                break;
            }
            let lower = header.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                length = v.trim().parse().ok()?;
            }
            headers.push_str(&lower);
        }
        let mut payload = vec![0; length];
        reader.read_exact(&mut payload).ok()?;
        let mut parts = line.split_whitespace();
        Some(Seen {
            line: format!("{} {}", parts.next()?, parts.next()?),
            headers,
            body: String::from_utf8(payload).ok()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posts_json_with_headers_and_reads_json() {
        let (addr, log) = loopback::serve(|_| (200, r#"{"ok":true}"#.into()));
        let answer = post_json(
            &format!("{addr}/v1/x"),
            &[("authorization", "Bearer test-key")],
            &serde_json::json!({"q": 1}),
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(answer["ok"], true);
        let seen = log.lock().unwrap()[0].clone();
        assert_eq!(seen.line, "POST /v1/x");
        assert!(seen.headers.contains("authorization: bearer test-key"));
        assert_eq!(seen.body, r#"{"q":1}"#);
    }

    #[test]
    fn non_success_status_is_an_error_with_the_status() {
        let (addr, _log) = loopback::serve(|_| (401, r#"{"error":"bad key"}"#.into()));
        let err = post_json(&addr, &[], &Value::Null, Duration::from_secs(5)).unwrap_err();
        assert!(
            matches!(err, HttpError::Status { status: 401, .. }),
            "{err}"
        );
    }

    #[test]
    fn refused_connection_is_a_transport_error() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        let err = post_json(&addr, &[], &Value::Null, Duration::from_secs(2)).unwrap_err();
        assert!(matches!(err, HttpError::Transport { .. }), "{err}");
    }

    #[test]
    fn gets_json() {
        let (addr, log) = loopback::serve(|_| (200, r#"{"models":[]}"#.into()));
        let answer = get_json(&format!("{addr}/api/tags"), Duration::from_secs(5)).unwrap();
        assert_eq!(answer["models"], serde_json::json!([]));
        assert_eq!(log.lock().unwrap()[0].line, "GET /api/tags");
    }
}
