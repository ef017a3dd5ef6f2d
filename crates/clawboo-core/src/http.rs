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

/// GETs `url` with the given extra headers (an `Authorization` one is never shown in an error)
/// and returns the JSON answer.
pub fn get_json_with(
    url: &str,
    headers: &[(&str, &str)],
    timeout: Duration,
) -> Result<Value, HttpError> {
    exchange(url, headers, None, timeout)
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

#[cfg(test)]
mod tests {
    use super::*;
    use clawboo_tests::loopback;

    #[test]
    fn posts_json_with_headers_and_reads_json() {
        let server = loopback::serve(|_| (200, r#"{"ok":true}"#.into()));
        let answer = post_json(
            &format!("{}/v1/x", server.base),
            &[("authorization", "Bearer test-key")],
            &serde_json::json!({"q": 1}),
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(answer["ok"], true);
        let seen = server.requests()[0].clone();
        assert_eq!(seen.line, "POST /v1/x");
        assert!(seen.headers.contains("authorization: bearer test-key"));
        assert_eq!(seen.body, r#"{"q":1}"#);
    }

    #[test]
    fn non_success_status_is_an_error_with_the_status() {
        let server = loopback::serve(|_| (401, r#"{"error":"bad key"}"#.into()));
        let err = post_json(&server.base, &[], &Value::Null, Duration::from_secs(5)).unwrap_err();
        assert!(
            matches!(err, HttpError::Status { status: 401, .. }),
            "{err}"
        );
    }

    #[test]
    fn refused_connection_is_a_transport_error() {
        let err = post_json(
            &loopback::closed_port(),
            &[],
            &Value::Null,
            Duration::from_secs(2),
        )
        .unwrap_err();
        assert!(matches!(err, HttpError::Transport { .. }), "{err}");
    }

    #[test]
    fn gets_json() {
        let server = loopback::serve(|_| (200, r#"{"models":[]}"#.into()));
        let answer =
            get_json(&format!("{}/api/tags", server.base), Duration::from_secs(5)).unwrap();
        assert_eq!(answer["models"], serde_json::json!([]));
        assert_eq!(server.requests()[0].line, "GET /api/tags");
    }
}
