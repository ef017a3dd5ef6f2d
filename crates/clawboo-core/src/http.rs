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
    let mut request = agent.post(url).header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut response = request.send(body.to_string()).map_err(transport)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;

    /// Serves one request on loopback with `status` and `body`; returns the address and a handle
    /// yielding the raw request text.
    fn one_shot(status: u16, body: &'static str) -> (String, std::thread::JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = format!("http://{}", listener.local_addr().unwrap());
        let handle = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
                head.push_str(&line);
                if line == "\r\n" {
                    break;
                }
            }
            let mut payload = vec![0; length];
            reader.read_exact(&mut payload).unwrap();
            let mut stream = stream;
            write!(
                stream,
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
            head + &String::from_utf8(payload).unwrap()
        });
        (addr, handle)
    }

    #[test]
    fn posts_json_with_headers_and_reads_json() {
        let (addr, handle) = one_shot(200, r#"{"ok":true}"#);
        let answer = post_json(
            &format!("{addr}/v1/x"),
            &[("authorization", "Bearer test-key")],
            &serde_json::json!({"q": 1}),
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(answer["ok"], true);
        let request = handle.join().unwrap();
        assert!(request.starts_with("POST /v1/x "), "{request}");
        assert!(
            request
                .to_ascii_lowercase()
                .contains("authorization: bearer test-key")
        );
        assert!(request.ends_with(r#"{"q":1}"#));
    }

    #[test]
    fn non_success_status_is_an_error_with_the_status() {
        let (addr, handle) = one_shot(401, r#"{"error":"bad key"}"#);
        let err = post_json(&addr, &[], &Value::Null, Duration::from_secs(5)).unwrap_err();
        handle.join().unwrap();
        assert!(
            matches!(err, HttpError::Status { status: 401, .. }),
            "{err}"
        );
    }

    #[test]
    fn refused_connection_is_a_transport_error() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        let err = post_json(&addr, &[], &Value::Null, Duration::from_secs(2)).unwrap_err();
        assert!(matches!(err, HttpError::Transport { .. }), "{err}");
    }
}
