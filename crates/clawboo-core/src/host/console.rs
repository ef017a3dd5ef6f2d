//! The operator console's static files: `index.html` at `/` (and at `/approvals`, which the page
//! opens on its approvals view) and its assets at `/console/<file>`, compiled into the binary.
//!
//! Owns: the files in `console/` (HTML, CSS, the ES modules), their content types and headers.
//! Guarantees: no external assets (works offline); the page puts every value in the DOM with
//! `textContent` (its `api.js` builds nodes, never HTML), and a Content-Security-Policy allows
//! scripts, styles and connections only to this host (images: this host and `data:`, the
//! favicon), no inline script or style, no framing; `nosniff`, `no-store`, `no-referrer`.
//! Must never: embed data in a file (all data comes through the token-checked REST routes, so the
//! files are served without the token).

use http::{StatusCode, header};

use crate::mcp::http::{HttpResponse, bytes_response};

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const HTML: &str = include_str!("console/index.html");

/// The assets under `/console/`: (name, content type, text).
const ASSETS: [(&str, &str, &str); 8] = [
    (
        "console.css",
        "text/css; charset=utf-8",
        include_str!("console/console.css"),
    ),
    ("console.js", JS, include_str!("console/console.js")),
    ("api.js", JS, include_str!("console/api.js")),
    ("board.js", JS, include_str!("console/board.js")),
    ("room.js", JS, include_str!("console/room.js")),
    ("memory.js", JS, include_str!("console/memory.js")),
    ("approvals.js", JS, include_str!("console/approvals.js")),
    ("health.js", JS, include_str!("console/health.js")),
];

const JS: &str = "text/javascript; charset=utf-8";

/// Whether `path` is the page itself.
pub fn is_page(path: &str) -> bool {
    matches!(path, "/" | "/approvals")
}

fn asset(path: &str) -> Option<&'static (&'static str, &'static str, &'static str)> {
    let name = path.strip_prefix("/console/")?;
    ASSETS.iter().find(|(n, _, _)| *n == name)
}

/// Whether `path` is one of the page's static assets (no data: served without the token).
pub fn is_asset(path: &str) -> bool {
    asset(path).is_some()
}

/// The page or one of its assets (the page for any other path).
pub fn response(path: &str) -> HttpResponse {
    let (content_type, body) =
        asset(path).map_or(("text/html; charset=utf-8", HTML), |(_, t, b)| (*t, *b));
    let mut response = bytes_response(StatusCode::OK, content_type, body.as_bytes().to_vec());
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CSP),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::CACHE_CONTROL, "no-store"),
        (header::REFERRER_POLICY, "no-referrer"),
    ] {
        headers.insert(name, header::HeaderValue::from_static(value));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_module_the_page_loads_is_served_as_javascript() {
        for (name, content_type, text) in ASSETS {
            assert!(is_asset(&format!("/console/{name}")));
            assert!(!text.is_empty());
            if name.ends_with(".js") {
                assert_eq!(content_type, JS);
            }
        }
        assert!(!is_asset("/console/../index.html") && !is_asset("/console/"));
        let response = response("/console/board.js");
        assert_eq!(response.headers()[header::CONTENT_TYPE], JS);
        assert!(
            response.headers()[header::CONTENT_SECURITY_POLICY]
                .to_str()
                .unwrap()
                .contains("img-src 'self' data:")
        );
        for module in ["console.js", "api.js", "board.js", "room.js", "memory.js"] {
            assert!(
                HTML.contains(module) || ASSETS.iter().any(|(_, _, t)| t.contains(module)),
                "{module} is loaded by the page"
            );
        }
    }
}
