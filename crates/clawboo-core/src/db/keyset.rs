//! Keyset cursors: where a page of rows ordered by (a time, `rowid`), newest first, ended, as the
//! opaque `nextCursor` string the console's REST routes hand out.
//!
//! Owns: the cursor's text form (`<ms>.<rowid>`) and its parsing. Guarantees: a page read with a
//! cursor holds exactly the rows strictly after it in (time DESC, rowid DESC) order, however many
//! rows were written meanwhile (new rows sort before the cursor and are not repeated). Must never:
//! hold SQL (each repository writes its own `(t, rowid) < (?, ?)` filter).

/// The last row of a page: its time (ms since the epoch) and its `rowid`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keyset {
    /// The ordering time of the last row shown.
    pub at: i64,
    /// Its `rowid` (the tie-break).
    pub rowid: i64,
}

impl Keyset {
    /// The cursor as text.
    pub fn encode(self) -> String {
        format!("{}.{}", self.at, self.rowid)
    }

    /// Reads a cursor made by [`Keyset::encode`]; `None` for anything else.
    pub fn decode(text: &str) -> Option<Self> {
        let (at, rowid) = text.split_once('.')?;
        Some(Self {
            at: at.parse().ok()?,
            rowid: rowid.parse().ok()?,
        })
    }

    /// The bounds to bind for "strictly after the cursor" (no cursor: after everything there is).
    pub fn bounds(cursor: Option<Self>) -> (i64, i64) {
        cursor.map_or((i64::MAX, i64::MAX), |c| (c.at, c.rowid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_junk_is_refused() {
        let k = Keyset { at: -5, rowid: 42 };
        assert_eq!(Keyset::decode(&k.encode()), Some(k));
        for junk in ["", "1", "a.b", "1.2.3", "1.x"] {
            assert_eq!(Keyset::decode(junk), None, "{junk}");
        }
        assert_eq!(Keyset::bounds(None), (i64::MAX, i64::MAX));
    }
}
