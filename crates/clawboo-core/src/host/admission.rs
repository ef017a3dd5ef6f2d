//! Who may connect: every request's `Host` must name this host (DNS rebinding), an `Origin`, when
//! present, must be one of this host's own pages, and with tokens every request carries one; the
//! answer is the request's [`Caller`] (the token's name, or the local operator without tokens).
//!
//! Owns: the allowed `Host` names and `Origin`s (loopback names, the bound address when it is
//! neither loopback nor unspecified, and `--allow-host` names) and the check of each request,
//! which runs before any route or mount sees it.
//! Guarantees: tokens are compared as digests, in constant time ([`super::caller::Tokens`]); the page's static assets carry no data and
//! are served without it; the page itself may carry it as `?token=` (a browser cannot send a
//! header on navigation).
//! Must never: log or echo the token; trust the `Host` header for anything but this check.

use std::net::SocketAddr;

use http::{Method, Request, StatusCode, header};

use super::caller::{Caller, Tokens};
use super::{console, error, rest};
use crate::mcp::http::HttpResponse;

/// The admission rules of one bound host.
#[derive(Debug)]
pub struct Admission {
    port: u16,
    tokens: Tokens,
    allowed_hosts: Vec<String>,
}

impl Admission {
    /// The rules for a host bound to `addr`, accepting `tokens` (none: no token needed) and
    /// `extra_hosts` too.
    pub fn new(addr: SocketAddr, tokens: Tokens, extra_hosts: &[String]) -> Self {
        let mut allowed_hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"]
            .iter()
            .map(|h| (*h).to_owned())
            .collect();
        if !addr.ip().is_unspecified() && !addr.ip().is_loopback() {
            allowed_hosts.push(addr.ip().to_string());
        }
        allowed_hosts.extend(extra_hosts.iter().cloned());
        Self {
            port: addr.port(),
            tokens,
            allowed_hosts,
        }
    }

    /// The `Host` names accepted.
    pub fn allowed_hosts(&self) -> &[String] {
        &self.allowed_hosts
    }

    /// The `Origin`s accepted: this host's own pages.
    pub fn allowed_origins(&self) -> Vec<String> {
        self.allowed_hosts
            .iter()
            .map(|h| format!("http://{}:{}", bracketed(h), self.port))
            .collect()
    }

    /// Admits `request` as its [`Caller`], or answers it with 403 (`Host`, `Origin`) or 401
    /// (token). A static asset of the page needs no token and is the local operator's.
    pub fn admit<B>(&self, request: &Request<B>) -> Result<Caller, Box<HttpResponse>> {
        let host = request
            .headers()
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .map(host_name);
        if !host.is_some_and(|h| {
            self.allowed_hosts
                .iter()
                .any(|a| a.eq_ignore_ascii_case(&h))
        }) {
            return Err(Box::new(error(
                StatusCode::FORBIDDEN,
                "Forbidden: Host header is not allowed",
            )));
        }
        if let Some(origin) = request.headers().get(header::ORIGIN) {
            let allowed = origin.to_str().ok().is_some_and(|origin| {
                self.allowed_origins()
                    .iter()
                    .any(|own| origin.eq_ignore_ascii_case(own))
            });
            if !allowed {
                return Err(Box::new(error(
                    StatusCode::FORBIDDEN,
                    "Forbidden: Origin header is not allowed",
                )));
            }
        }
        if self.tokens.is_empty() || console::is_asset(request.uri().path()) {
            return Ok(Caller::local_operator());
        }
        let bearer = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::to_owned);
        let page_token = (request.method() == Method::GET
            && console::is_page(request.uri().path()))
        .then(|| rest::query_value(request.uri().query(), "token"))
        .flatten();
        match bearer.or(page_token).and_then(|t| self.tokens.find(&t)) {
            Some(caller) => Ok(caller),
            None => {
                let mut response = error(
                    StatusCode::UNAUTHORIZED,
                    "missing or wrong bearer token (send Authorization: Bearer <token>)",
                );
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    header::HeaderValue::from_static("Bearer"),
                );
                Err(Box::new(response))
            }
        }
    }
}

/// `host` as it appears in a URL: IPv6 addresses in brackets.
fn bracketed(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_owned()
    }
}

/// The host name of a `Host` header value (port dropped, IPv6 brackets removed), lower-cased.
fn host_name(value: &str) -> String {
    let value = value.trim();
    let name = if let Some(rest) = value.strip_prefix('[') {
        rest.split(']').next().unwrap_or_default()
    } else {
        value.rsplit_once(':').map_or(value, |(name, _)| name)
    };
    name.to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_drop_ports_and_brackets() {
        assert_eq!(host_name("127.0.0.1:18790"), "127.0.0.1");
        assert_eq!(host_name("LocalHost"), "localhost");
        assert_eq!(host_name("[::1]:80"), "::1");
        assert_eq!(host_name("evil.example:18790"), "evil.example");
    }

    #[test]
    fn origins_are_this_hosts_own_pages() {
        let addr = SocketAddr::from(([127, 0, 0, 1], 4242));
        let rules = Admission::new(addr, Tokens::default(), &["::2".to_owned()]);
        assert_eq!(
            rules.allowed_origins(),
            [
                "http://localhost:4242",
                "http://127.0.0.1:4242",
                "http://[::1]:4242",
                "http://[::2]:4242"
            ]
        );
    }
}
