//! Diagnostics on stderr, filtered by `RUST_LOG` (`error`, `warn`, `info`, `debug`; default `warn`).
//!
//! Owns: the one place the servers write human diagnostics. Must never write to stdout, which
//! belongs to the protocol.

use std::sync::OnceLock;

/// How much is logged, least first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Failures.
    Error,
    /// Something unexpected that did not fail.
    Warn,
    /// Lifecycle events.
    Info,
    /// Per-request detail.
    Debug,
}

impl Level {
    /// Parses a `RUST_LOG` value. Only its most permissive plain level counts; module filters such
    /// as `rmcp=debug` count by their level.
    pub fn from_filter(filter: &str) -> Level {
        filter
            .split(',')
            .map(|part| {
                part.rsplit('=')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase()
            })
            .filter_map(|level| match level.as_str() {
                "error" => Some(Level::Error),
                "warn" => Some(Level::Warn),
                "info" => Some(Level::Info),
                "debug" | "trace" => Some(Level::Debug),
                _ => None,
            })
            .max()
            .unwrap_or(Level::Warn)
    }
}

fn threshold() -> Level {
    static LEVEL: OnceLock<Level> = OnceLock::new();
    *LEVEL.get_or_init(|| Level::from_filter(&std::env::var("RUST_LOG").unwrap_or_default()))
}

fn emit(level: Level, label: &str, message: &str) {
    if level <= threshold() {
        eprintln!("[{label}] {message}");
    }
}

/// Logs something unexpected that did not fail.
pub fn warn(message: &str) {
    emit(Level::Warn, "warn", message);
}

/// Logs a lifecycle event.
pub fn info(message: &str) {
    emit(Level::Info, "info", message);
}

/// Logs per-request detail.
pub fn debug(message: &str) {
    emit(Level::Debug, "debug", message);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_parse_to_their_most_permissive_level() {
        assert_eq!(Level::from_filter(""), Level::Warn);
        assert_eq!(Level::from_filter("info"), Level::Info);
        assert_eq!(Level::from_filter("rmcp=debug,error"), Level::Debug);
        assert_eq!(Level::from_filter("ERROR"), Level::Error);
        assert_eq!(Level::from_filter("nonsense"), Level::Warn);
    }
}
