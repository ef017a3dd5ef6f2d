//! The approvals page: the pending queue with Allow once / Allow always / Deny, and the recent
//! audit log, refreshed every 1.5 s by polling the REST routes.
//!
//! Owns: the three static files (HTML, CSS, JS) compiled into the binary, and their headers.
//! Guarantees: no external assets (works offline); every value reaches the page through
//! `textContent`, never as HTML, and a Content-Security-Policy allows scripts only from this host,
//! so hostile arguments render as text; the page's data calls carry the same bearer token (taken
//! from the page's `?token=`).
//! Must never: embed data in the HTML (all data comes through the token-checked REST routes).

use http::{StatusCode, header};

use crate::mcp::http::{HttpResponse, bytes_response};

const HTML: &str = include_str!("page/approvals.html");
const CSS: &str = include_str!("page/approvals.css");
const JS: &str = include_str!("page/approvals.js");

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Whether `path` is the page itself.
pub fn is_page(path: &str) -> bool {
    matches!(path, "/" | "/approvals")
}

/// Whether `path` is one of the page's static assets (no data: served without the token).
pub fn is_asset(path: &str) -> bool {
    matches!(path, "/approvals.css" | "/approvals.js")
}

/// The page or one of its assets.
pub fn response(path: &str) -> HttpResponse {
    let (content_type, body) = match path {
        "/approvals.css" => ("text/css; charset=utf-8", CSS),
        "/approvals.js" => ("text/javascript; charset=utf-8", JS),
        _ => ("text/html; charset=utf-8", HTML),
    };
    let mut response = bytes_response(StatusCode::OK, content_type, body.as_bytes().to_vec());
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        header::HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        header::HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        header::HeaderValue::from_static("no-referrer"),
    );
    response
}
