//! The credit loop's reports and inputs: `credit_report` and `memory_feedback`.
//!
//! Owns: the report's shape (live memories only, top and bottom `n`, what pruning would archive
//! now, the last consolidation and pruning) and applying an outcome to the newest unresolved turn
//! of a session. Guarantees: feedback touches only the memories of that turn (no walk) and
//! regenerates `MEMORY.md` only when a score moved. Must never: change a score outside the
//! clamped EMA of `engine::apply_outcome`.

use super::index::Refresh;
use super::{Brain, BrainError, CreditReport, Feedback, ReportRow, Signal, engine};

impl Brain {
    /// `credit_report`: `top_n` absent → 10, else floored and clamped to [1, 100].
    pub fn credit_report(&self, top_n: Option<f64>) -> Result<CreditReport, BrainError> {
        let n = top_n.map_or(10, |t| {
            if t.is_nan() {
                1
            } else {
                t.floor().clamp(1.0, 100.0) as usize
            }
        });
        let strategy = self.strategy();
        self.in_vault(Refresh::Strict, |tx, _| {
            let rows = engine::live_credits(tx)?;
            let to_row = |(c, name, _): &(engine::CreditRow, String, bool)| ReportRow {
                id: c.id.clone(),
                name: name.clone(),
                score: c.score,
                access_count: c.access_count,
            };
            let total = rows.len();
            let avg = if total == 0 {
                0.0
            } else {
                rows.iter().map(|r| r.0.score).sum::<f64>() / total as f64
            };
            let mut ascending: Vec<_> = rows.iter().collect();
            ascending.sort_by(|a, b| a.0.score.total_cmp(&b.0.score));
            let prune_candidates = rows
                .iter()
                .filter(|(c, _, pinned)| strategy.prunable(c, *pinned, self.clock.now_ms()))
                .count();
            Ok(CreditReport {
                total_memories: total,
                avg_score: avg,
                top: rows.iter().take(n).map(to_row).collect(),
                bottom: ascending.into_iter().take(n).map(to_row).collect(),
                prune_candidates,
                last_consolidation: engine::last_action(tx, "consolidate")?,
                last_pruning: engine::last_action(tx, "prune")?,
            })
        })
    }

    /// `memory_feedback`: the outcome of the newest unresolved turn of `session` (default: this
    /// brain's session) moves its memories' scores by the clamped EMA.
    pub fn feedback(&self, signal: Signal, session: Option<&str>) -> Result<Feedback, BrainError> {
        let session = session.unwrap_or(&self.session).to_owned();
        let (_, now) = self.now();
        let strategy = self.strategy();
        self.in_vault(Refresh::Skip, |tx, _| {
            let applied = engine::apply_outcome(
                tx,
                &session,
                signal,
                strategy.alpha,
                &now,
                Self::row_defaults(&strategy),
            )?;
            if applied.is_some() {
                self.write_digest(tx, &strategy)?;
            }
            let (turn_id, updated) = applied.map_or((None, Vec::new()), |(t, m)| (Some(t), m));
            Ok(Feedback {
                signal,
                session_id: session,
                turn_id,
                updated,
            })
        })
    }
}
