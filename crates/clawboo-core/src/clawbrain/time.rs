//! ISO-8601 timestamps as the reference writes them (`Date.toISOString()`: UTC, milliseconds, `Z`),
//! through `chrono`.
//!
//! Owns: converting epoch milliseconds to and from `YYYY-MM-DDTHH:MM:SS.sssZ`. Guarantees: the
//! writer's output always parses back to the same instant; the reader also accepts the forms a
//! person types by hand (no milliseconds, no seconds, a space for the `T`, an offset such as
//! `+01:00`, `+0100` or `+01`, no offset at all for UTC, a bare date), and refuses a date that
//! does not exist. Must never: panic on any input.

use chrono::{DateTime, NaiveDate, NaiveDateTime, SecondsFormat, Utc};

/// `ms` since the epoch as `YYYY-MM-DDTHH:MM:SS.sssZ` (an instant beyond chrono's range of about
/// ±262,000 years is written as the nearest one it can name).
pub fn iso(ms: i64) -> String {
    let at = DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or(if ms < 0 {
        DateTime::<Utc>::MIN_UTC
    } else {
        DateTime::<Utc>::MAX_UTC
    });
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The forms with an offset (`%#z`: `Z`, `+01:00`, `+0100`, `+01`), then without one (UTC).
const WITH_OFFSET: [&str; 2] = ["%Y-%m-%dT%H:%M:%S%.f%#z", "%Y-%m-%dT%H:%M%#z"];
const WITHOUT_OFFSET: [&str; 2] = ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"];

/// Parses an ISO-8601 timestamp (or a bare `YYYY-MM-DD`, midnight UTC) into epoch milliseconds.
pub fn parse_iso(text: &str) -> Option<i64> {
    let text = text.trim().trim_matches(['"', '\'']);
    if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Some(
            date.and_time(chrono::NaiveTime::MIN)
                .and_utc()
                .timestamp_millis(),
        );
    }
    let text = match text.split_at_checked(10) {
        Some((date, rest)) if rest.starts_with(' ') => format!("{date}T{}", &rest[1..]),
        _ => text.to_owned(),
    };
    WITH_OFFSET
        .iter()
        .find_map(|format| DateTime::parse_from_str(&text, format).ok())
        .map(|at| at.timestamp_millis())
        .or_else(|| {
            WITHOUT_OFFSET
                .iter()
                .find_map(|format| NaiveDateTime::parse_from_str(&text, format).ok())
                .map(|at| at.and_utc().timestamp_millis())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_matches_to_iso_string() {
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(1_771_597_800_000), "2026-02-20T14:30:00.000Z");
        assert_eq!(iso(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(iso(-1), "1969-12-31T23:59:59.999Z");
        assert!(iso(i64::MAX).starts_with('+'), "{}", iso(i64::MAX));
    }

    #[test]
    fn every_written_timestamp_parses_back_to_the_same_instant() {
        let mut x: i64 = 0x2545_F491;
        for _ in 0..2000 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let ms = (x >> 20).rem_euclid(4_102_444_800_000);
            assert_eq!(parse_iso(&iso(ms)), Some(ms), "{}", iso(ms));
        }
    }

    #[test]
    fn hand_typed_forms_parse() {
        const T: i64 = 1_771_597_800_000;
        assert_eq!(parse_iso("2026-02-20"), Some(1_771_545_600_000));
        assert_eq!(parse_iso("2026-02-20T14:30:00Z"), Some(T));
        assert_eq!(parse_iso("\"2026-02-20T14:30:00.000Z\""), Some(T));
        assert_eq!(parse_iso("2026-02-20T15:30:00+01:00"), Some(T));
        assert_eq!(parse_iso("2026-02-20T15:30:00+0100"), Some(T));
        assert_eq!(parse_iso("2026-02-20T09:30-05"), Some(T));
        assert_eq!(parse_iso("2026-02-20 14:30"), Some(T));
        assert_eq!(parse_iso("2026-02-20T14:30:00"), Some(T));
        assert_eq!(parse_iso("2026-02-20T14:30:00.1239Z"), Some(T + 123));
        assert_eq!(parse_iso("yesterday"), None);
        assert_eq!(parse_iso("2026-13-01"), None);
        assert_eq!(parse_iso("2026-02-30"), None);
        assert_eq!(parse_iso("2026-02-20T14:30:00Zjunk"), None);
        assert_eq!(parse_iso(""), None);
    }
}
