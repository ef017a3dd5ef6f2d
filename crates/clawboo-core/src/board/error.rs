//! Why a board operation was refused, in the words a client reads.
//!
//! Owns: [`BoardError`], its wire texts (the reference's reason codes and cap messages, with our
//! detail appended), and the short reason a refused claim, release or status change reports.

use super::Status;

/// Which task a [`BoardError::NotFound`] was looking for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskRole {
    /// The task the call names (claimed, moved, commented on, linked).
    Subject,
    /// The parent named for a new subtask.
    Parent,
}

/// Why a board write was refused.
/// Wire: reference (keep the text; detail may only be appended).
///
/// The texts are wire texts: the reference's reason codes (`not_found`, `conflict`,
/// `illegal_transition`, `verification_required`) and its cap and lookup messages. Where we add
/// detail, the reference's text stays a prefix (see [`BoardError::IllegalTransition`]).
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum BoardError {
    /// No task has this id: `not found: <id>`, or `parent not found: <id>` for a subtask's parent.
    /// As the reason of a refused claim, release or status change it is the code `not_found`
    /// ([`BoardError::reason`]).
    #[error("{}not found: {id}", if *role == TaskRole::Parent { "parent " } else { "" })]
    NotFound {
        /// The id looked for.
        id: String,
        /// Which task it was meant to be.
        role: TaskRole,
    },
    /// The task is not in a state that allows the claim.
    #[error("conflict")]
    Conflict,
    /// The state machine forbids the move: the reference's code `illegal_transition`, then the
    /// detail, e.g. `illegal_transition (done → in_progress; allowed: none)`.
    #[error(
        "illegal_transition ({from} → {}; allowed: {})",
        to.as_str(),
        status_list(allowed)
    )]
    IllegalTransition {
        /// The stored status (as stored: a word the board does not know is kept, not guessed).
        from: String,
        /// The status asked for.
        to: Status,
        /// Where this operation could have moved the task from `from`, in table order.
        allowed: &'static [Status],
    },
    /// The stored verification verdict forbids `done`.
    #[error("verification_required")]
    VerificationRequired,
    /// The parent already has the most children allowed.
    #[error(
        "subtask rejected: parent {parent} already has {count} children (max {max}); drop one or attach the new task elsewhere"
    )]
    ChildCap {
        /// The parent.
        parent: String,
        /// Its live children.
        count: i64,
        /// The cap.
        max: i64,
    },
    /// The parent is at the deepest level that may have children.
    #[error(
        "subtask rejected: parent {parent} is at the maximum nesting depth ({max}); attach the new task higher in the tree"
    )]
    DepthCap {
        /// The parent.
        parent: String,
        /// The cap.
        max: i64,
    },
    /// Too many root tasks were created recently.
    #[error(
        "task rejected: {count} root tasks already created in the last {} min (max {max}); attach this work to an existing task with parentTaskId instead of opening another",
        (*window_ms as f64 / 60_000.0).round() as i64
    )]
    RootRateCap {
        /// Roots created within the window.
        count: i64,
        /// The cap.
        max: i64,
        /// The window, in ms.
        window_ms: i64,
    },
    /// A dependency link would close a cycle.
    #[error("linking {task} to {depends_on} would create a dependency cycle")]
    Cycle {
        /// The waiting task.
        task: String,
        /// The task it would wait on.
        depends_on: String,
    },
    /// A renewal came after the caller's lease had run out: this call returned the task to `todo`.
    /// Wire: ours.
    #[error(
        "lease_expired ({agent}'s lease ran out at {at} (ms since the epoch); the task went back to todo)"
    )]
    LeaseExpired {
        /// The agent whose lease ran out.
        agent: String,
        /// When it ran out, ms since the epoch.
        at: i64,
    },
    /// A renewal by an agent that does not hold the task in progress.
    /// Wire: ours.
    #[error(
        "not_holder (the task is {status}, assigned to {})",
        holder.as_deref().unwrap_or("nobody")
    )]
    NotHolder {
        /// The stored status.
        status: String,
        /// The stored assignee.
        holder: Option<String>,
    },
    /// A renewal of a task with no lease, giving no length.
    /// Wire: ours.
    #[error("no_lease (the task has none: pass leaseSeconds to start one)")]
    NoLease,
    /// The database failed.
    /// Wire: ours.
    #[error("database error: {0}")]
    Db(#[from] rusqlite::Error),
}

/// `a, b, c`, or `none`.
fn status_list(statuses: &[Status]) -> String {
    if statuses.is_empty() {
        return "none".to_owned();
    }
    statuses
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

impl BoardError {
    /// No task `id` (the one the call names).
    pub fn no_task(id: &str) -> Self {
        BoardError::NotFound {
            id: id.to_owned(),
            role: TaskRole::Subject,
        }
    }

    /// The text after `<action> failed: ` when a claim, release or status change is refused: the
    /// reference's reason code (`not_found`, `conflict`, `illegal_transition …`,
    /// `verification_required`).
    pub fn reason(&self) -> String {
        match self {
            BoardError::NotFound { .. } => "not_found".to_owned(),
            other => other.to_string(),
        }
    }

    /// The typed reason of a create-cap refusal, for `_meta.denied`.
    pub fn cap_reason(&self) -> Option<&'static str> {
        match self {
            BoardError::NotFound {
                role: TaskRole::Parent,
                ..
            } => Some("parent_not_found"),
            BoardError::ChildCap { .. } => Some("child_cap"),
            BoardError::DepthCap { .. } => Some("depth_cap"),
            BoardError::RootRateCap { .. } => Some("root_rate_cap"),
            _ => None,
        }
    }
}
