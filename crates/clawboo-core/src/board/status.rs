//! The task status state machine: which status may follow which.
//!
//! Owns: the seven statuses, their wire names, and the legal-transition table. Pure: no I/O.
//! Guarantees: a same-status move is always legal; `done` and `cancelled` are terminal; every
//! non-terminal status can reach `cancelled`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A task's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Not yet ready to be worked on.
    Backlog,
    /// Ready to be claimed.
    Todo,
    /// Claimed and being worked on.
    InProgress,
    /// Done, awaiting review.
    InReview,
    /// Waiting on something outside the board.
    Blocked,
    /// Finished (terminal).
    Done,
    /// Abandoned (terminal).
    Cancelled,
}

impl Status {
    /// Every status, in canonical order.
    pub const ALL: [Status; 7] = [
        Status::Backlog,
        Status::Todo,
        Status::InProgress,
        Status::InReview,
        Status::Blocked,
        Status::Done,
        Status::Cancelled,
    ];

    /// The wire and column name.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Backlog => "backlog",
            Status::Todo => "todo",
            Status::InProgress => "in_progress",
            Status::InReview => "in_review",
            Status::Blocked => "blocked",
            Status::Done => "done",
            Status::Cancelled => "cancelled",
        }
    }

    /// Parses a column value.
    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// The statuses reachable from `self` in one move, in canonical table order, without `self`.
    pub fn legal_targets(self) -> &'static [Status] {
        use Status::*;
        match self {
            Backlog => &[Todo, Blocked, Cancelled],
            Todo => &[InProgress, Blocked, Backlog, Cancelled],
            InProgress => &[InReview, Done, Blocked, Todo, Cancelled],
            InReview => &[Done, InProgress, Blocked, Cancelled],
            Blocked => &[Todo, InProgress, Backlog, Cancelled],
            Done | Cancelled => &[],
        }
    }

    /// True when a task may move from `self` to `to` (a same-status move always may).
    pub fn can_transition(self, to: Status) -> bool {
        self == to || self.legal_targets().contains(&to)
    }

    /// True for `done` and `cancelled`.
    pub fn is_terminal(self) -> bool {
        matches!(self, Status::Done | Status::Cancelled)
    }
}

#[cfg(test)]
mod tests {
    use super::Status::*;
    use super::*;

    #[test]
    fn same_status_is_always_legal() {
        for s in Status::ALL {
            assert!(s.can_transition(s), "{s:?}");
        }
    }

    #[test]
    fn terminals_have_no_targets_and_every_other_status_can_cancel() {
        for s in Status::ALL {
            if s.is_terminal() {
                assert!(s.legal_targets().is_empty());
            } else {
                assert!(s.legal_targets().contains(&Cancelled), "{s:?}");
            }
        }
    }

    #[test]
    fn illegal_edges_of_the_reference_tests_are_illegal() {
        for (from, to) in [
            (Todo, Done),
            (Backlog, Done),
            (Done, Todo),
            (Cancelled, InProgress),
            (InReview, Todo),
            (Backlog, InProgress),
            (Backlog, InReview),
            (Todo, InReview),
        ] {
            assert!(!from.can_transition(to), "{from:?} -> {to:?}");
        }
    }

    #[test]
    fn wire_names_round_trip() {
        for s in Status::ALL {
            assert_eq!(Status::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        assert_eq!(Status::parse("doing"), None);
    }
}
