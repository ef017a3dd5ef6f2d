//! Diagnostics on stderr, filtered by `RUST_LOG` (`error`, `warn`, `info`, `debug`; default `warn`).
//!
//! Owns: the one place the servers write human diagnostics, including what libraries report
//! through `tracing` (rmcp does: a dropped message, a failed send), which [`route_tracing`] brings
//! here. Must never write to stdout, which belongs to the protocol, nor let a library's debug
//! detail through: `tracing` events count at most as `info`, since a library's debug events may
//! quote whole messages (tool arguments), and what is shown is passed through the scrubber.

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

/// Logs a failure.
pub fn error(message: &str) {
    emit(Level::Error, "error", message);
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

/// The `tracing` subscriber that writes library events here: a minimal one (no spans, no
/// timestamps), written by hand because the full `tracing-subscriber` stack would more than double
/// the dependencies for a few lines of stderr.
struct StderrTracing;

impl StderrTracing {
    fn level_of(level: &tracing::Level) -> Level {
        match *level {
            tracing::Level::ERROR => Level::Error,
            tracing::Level::WARN => Level::Warn,
            _ => Level::Info,
        }
    }
}

/// Collects an event's fields as `message key=value …`.
struct Fields(String);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        use std::fmt::Write as _;
        let sep = if self.0.is_empty() { "" } else { " " };
        let _ = if field.name() == "message" {
            write!(self.0, "{sep}{value:?}")
        } else {
            write!(self.0, "{sep}{}={value:?}", field.name())
        };
    }
}

impl tracing::Subscriber for StderrTracing {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        metadata.is_event()
            && *metadata.level() <= tracing::Level::INFO
            && Self::level_of(metadata.level()) <= threshold()
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(match threshold() {
            Level::Error => tracing::level_filters::LevelFilter::ERROR,
            Level::Warn => tracing::level_filters::LevelFilter::WARN,
            Level::Info | Level::Debug => tracing::level_filters::LevelFilter::INFO,
        })
    }

    fn new_span(&self, _span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }

    fn record(&self, _span: &tracing::span::Id, _values: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _span: &tracing::span::Id, _follows: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let metadata = event.metadata();
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        let level = Self::level_of(metadata.level());
        let label = match level {
            Level::Error => "error",
            Level::Warn => "warn",
            _ => "info",
        };
        let text = crate::scrub::scrub_secrets(&format!("{}: {}", metadata.target(), fields.0));
        emit(level, label, &text);
    }

    fn enter(&self, _span: &tracing::span::Id) {}

    fn exit(&self, _span: &tracing::span::Id) {}
}

/// Sends what libraries report through `tracing` to stderr, under the same `RUST_LOG` threshold
/// (capped at `info`). The first call installs it; later calls, or a subscriber already installed
/// by someone else, leave things as they are.
pub fn route_tracing() {
    let _ = tracing::subscriber::set_global_default(StderrTracing);
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

    #[test]
    fn library_events_count_at_most_as_info() {
        use tracing::Subscriber as _;
        assert_eq!(
            StderrTracing::level_of(&tracing::Level::ERROR),
            Level::Error
        );
        assert_eq!(StderrTracing::level_of(&tracing::Level::WARN), Level::Warn);
        assert_eq!(StderrTracing::level_of(&tracing::Level::DEBUG), Level::Info);
        assert_eq!(StderrTracing::level_of(&tracing::Level::TRACE), Level::Info);
        let hint = StderrTracing.max_level_hint().unwrap();
        assert!(hint <= tracing::level_filters::LevelFilter::INFO, "{hint}");
    }
}
