//! Operator commands (in progress).
