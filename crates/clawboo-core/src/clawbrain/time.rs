//! ISO-8601 timestamps as the reference writes them (`Date.toISOString()`: UTC, milliseconds, `Z`)
//! and the few date sums the lifecycle needs.
//!
//! Owns: converting epoch milliseconds to and from `YYYY-MM-DDTHH:MM:SS.sssZ`. Guarantees: the
//! writer's output always parses back to the same instant; the reader also accepts the forms a
//! person types by hand (no milliseconds, `+00:00`, a bare date). Must never: panic on any input.

/// Days from 1970-01-01 to the civil date `y-m-d` (proleptic Gregorian).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of `days` since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// `ms` since the epoch as `YYYY-MM-DDTHH:MM:SS.sssZ`.
pub fn iso(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

/// Parses an ISO-8601 UTC timestamp (or a bare `YYYY-MM-DD`) into epoch milliseconds.
pub fn parse_iso(text: &str) -> Option<i64> {
    let text = text.trim().trim_matches(|c| c == '"' || c == '\'');
    let num = |s: &str| -> Option<i64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let date = text.get(..10)?;
    let mut parts = date.split('-');
    let y = num(parts.next()?)?;
    let m = u32::try_from(num(parts.next()?)?).ok()?;
    let d = u32::try_from(num(parts.next()?)?).ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let mut ms = days_from_civil(y, m, d) * 86_400_000;
    let rest = &text[10..];
    if rest.is_empty() {
        return Some(ms);
    }
    let rest = rest.strip_prefix(['T', ' '])?;
    let (clock, offset) = match rest.find(['Z', 'z', '+', '-']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let (hms, frac) = clock.split_once('.').unwrap_or((clock, ""));
    let mut hms = hms.split(':');
    let h = num(hms.next()?)?;
    let min = num(hms.next().unwrap_or("0"))?;
    let s = num(hms.next().unwrap_or("0"))?;
    if h > 23 || min > 59 || s > 60 {
        return None;
    }
    let frac_ms = if frac.is_empty() {
        0
    } else {
        let digits: String = frac.chars().chain("000".chars()).take(3).collect();
        num(&digits)?
    };
    ms += h * 3_600_000 + min * 60_000 + s * 1000 + frac_ms;
    let offset_ms = match offset {
        "" | "Z" | "z" => 0,
        o => {
            let sign = if o.starts_with('-') { -1 } else { 1 };
            let body = o[1..].replace(':', "");
            let oh = num(body.get(..2)?)?;
            let om = num(body.get(2..).unwrap_or("0")).unwrap_or(0);
            sign * (oh * 3_600_000 + om * 60_000)
        }
    };
    Some(ms - offset_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_matches_to_iso_string() {
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(1_771_597_800_000), "2026-02-20T14:30:00.000Z");
        assert_eq!(iso(951_782_400_123), "2000-02-29T00:00:00.123Z");
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
        assert_eq!(parse_iso("2026-02-20"), Some(1_771_545_600_000));
        assert_eq!(parse_iso("2026-02-20T14:30:00Z"), Some(1_771_597_800_000));
        assert_eq!(
            parse_iso("2026-02-20T15:30:00+01:00"),
            Some(1_771_597_800_000)
        );
        assert_eq!(parse_iso("yesterday"), None);
        assert_eq!(parse_iso("2026-13-01"), None);
        assert_eq!(parse_iso(""), None);
    }
}
