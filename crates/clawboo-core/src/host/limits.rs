//! What a hostile or careless client may cost the host: the limits `serve` enforces, their
//! defaults, and the per-caller rate limit.
//!
//! Owns: [`Limits`] (the connection cap, the request deadline for headers and body, the idle
//! keep-alive limit, the header size and count limits, the rate limit, the shutdown grace), the
//! token bucket of each caller ([`RateLimiter`]), and the bytes of the 503 a connection over the
//! cap gets.
//! Decisions: the defaults suit a team's host on a network (hundreds of agents, each a session
//! or two): 512 connections, 30 s to send a request's headers and 30 s its body, 75 s of idle
//! keep-alive, 64 KiB of headers and 100 header lines, 100 calls per second per token with bursts
//! of 200, 10 s to finish in-flight calls at shutdown. A stream the host sends (an MCP SSE GET, a
//! long answer) counts against the connection cap but never against a deadline: the deadlines
//! cover what the client sends. The rate limit counts `/api/` requests (MCP and REST), not the
//! page's assets nor `/api/health`, per caller name ([`super::Caller`]): with no token every
//! request shares the local operator's bucket.
//! Must never: hold a lock across an await; grow without bound (a bucket per configured caller).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What `serve` enforces on its clients.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// The most open connections; one more is answered 503 and closed.
    pub max_connections: usize,
    /// How long a client has to send a request's headers, and then its body.
    pub request_timeout: Duration,
    /// How long a kept-alive connection may sit idle between requests.
    pub keep_alive: Duration,
    /// The most bytes of request head (line and headers) buffered.
    pub max_header_bytes: usize,
    /// The most header lines in a request.
    pub max_headers: usize,
    /// Calls per second per caller (0: no limit); bursts of twice as many.
    pub rate_per_sec: u32,
    /// How long shutdown waits for in-flight calls.
    pub shutdown_grace: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_connections: 512,
            request_timeout: Duration::from_secs(30),
            keep_alive: Duration::from_secs(75),
            max_header_bytes: 64 * 1024,
            max_headers: 100,
            rate_per_sec: 100,
            shutdown_grace: Duration::from_secs(10),
        }
    }
}

/// The whole answer to a connection over the cap.
pub const OVER_CAPACITY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: 52\r\nRetry-After: 1\r\nConnection: close\r\n\r\n{\"error\":\"too many connections; retry in a moment\"}\n";

/// Token buckets, one per caller name.
#[derive(Debug)]
pub struct RateLimiter {
    per_sec: f64,
    burst: f64,
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

impl RateLimiter {
    /// `per_sec` calls a second with bursts of twice as many; 0 means no limit.
    pub fn new(per_sec: u32) -> Self {
        Self {
            per_sec: f64::from(per_sec),
            burst: f64::from(per_sec) * 2.0,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one call from `caller`'s bucket at `now`, or says how long until one is there.
    pub fn take(&self, caller: &str, now: Instant) -> Result<(), Duration> {
        if self.per_sec <= 0.0 {
            return Ok(());
        }
        let mut buckets = self
            .buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (tokens, at) = buckets
            .entry(caller.to_owned())
            .or_insert((self.burst, now));
        let refill = now.saturating_duration_since(*at).as_secs_f64() * self.per_sec;
        *tokens = (*tokens + refill).min(self.burst);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - *tokens) / self.per_sec))
        }
    }
}

/// Whether the rate limit counts a request to `path`.
pub fn is_rated(path: &str) -> bool {
    path.starts_with("/api/") && path != "/api/health"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_allows_its_burst_then_refills_at_its_rate_per_caller() {
        let limiter = RateLimiter::new(2);
        let t0 = Instant::now();
        for _ in 0..4 {
            assert!(limiter.take("alice", t0).is_ok());
        }
        let wait = limiter.take("alice", t0).unwrap_err();
        assert!(
            wait <= Duration::from_millis(500) && wait > Duration::ZERO,
            "{wait:?}"
        );
        assert!(limiter.take("ci", t0).is_ok());
        assert!(
            limiter
                .take("alice", t0 + Duration::from_millis(500))
                .is_ok()
        );
        assert!(RateLimiter::new(0).take("x", t0).is_ok());
    }

    #[test]
    fn the_over_capacity_answer_is_whole_and_closes() {
        let text = std::str::from_utf8(OVER_CAPACITY).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.contains("Content-Length: 52") && head.contains("Connection: close"));
        assert_eq!(body.len(), 52);
        assert!(is_rated("/api/mcp/tasks") && !is_rated("/api/health") && !is_rated("/"));
    }
}
