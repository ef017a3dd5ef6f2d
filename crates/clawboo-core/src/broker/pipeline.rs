//! The broker pipeline: the only way a tool runs.
//!
//! Order, first failure returns: enabled (registry flag) → available (checked again at call time)
//! → inspector chain → approval (destructive and external tools: a standing `allow_always` grant
//! for this agent, or a person via the database) → executor → compaction → audit. The reference's
//! first gates (a known tool, arguments that parse) are the call's type: [`Broker::call`] takes a
//! [`Parsed`] of one [`Builtin`], read and checked once by whoever received the call (the tools
//! server's `Tool::new`, which answers an unknown tool or bad arguments itself, with no audit row).
//!
//! Guarantees: every call that reaches the broker leaves a `before` audit row and ends with one
//! `after` row: its result when it ran, `deny` with the reason when a gate refused it (written
//! here, with the `before` row, in one transaction), or how its approval ended (written by
//! `approvals`, with the request's final status); a gate denial reads `denied: <reason>` with the
//! typed reason beside it, an approval that is not granted reads `approval <end>` with reason
//! `approval:<end>`; the executor receives the arguments as the inspectors left them (clamped).
//! Must never: hold the database lock while waiting for a person or while an executor talks to
//! the network.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Map, Value};

use super::approvals::{self, NewApproval};
use super::audit::{self, Actor, Decision as Logged, Unrun};
use super::availability::{Availability, AvailabilityContext};
use super::builtins::{Builtin, BuiltinError, Execution, Parsed, ToolInfo};
use super::compact::{CompactionStats, compact};
use super::inspect::{Caller, DEFAULT_CHAIN, Decision, Inspector, run_chain};
use super::registry;
use crate::db::{Db, immediate};
use crate::log;

/// The variable setting how long a call waits for a person (milliseconds).
pub const APPROVAL_TIMEOUT_ENV: &str = "CLAWBOO_TOOL_APPROVAL_TIMEOUT_MS";

/// The variable setting how long an approval request stays open (milliseconds).
pub const APPROVAL_TTL_ENV: &str = "CLAWBOO_TOOL_APPROVAL_TTL_MS";

/// The variable setting how often a waiting call re-reads its request (milliseconds).
pub const APPROVAL_POLL_ENV: &str = "CLAWBOO_TOOL_APPROVAL_POLL_MS";

/// The shortest poll interval honoured, so a misconfiguration cannot spin.
const MIN_POLL: Duration = Duration::from_millis(10);

/// How approvals are timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovalTimings {
    /// How long a request stays open (default 5 minutes).
    pub ttl: Duration,
    /// How long a call waits for a person (default 2 minutes).
    pub timeout: Duration,
    /// How often the waiting call re-reads its request (default 250 ms).
    pub poll: Duration,
}

impl Default for ApprovalTimings {
    fn default() -> Self {
        Self {
            ttl: Duration::from_secs(300),
            timeout: Duration::from_secs(120),
            poll: Duration::from_millis(250),
        }
    }
}

impl ApprovalTimings {
    /// The timings set in `env` ([`APPROVAL_TIMEOUT_ENV`], [`APPROVAL_TTL_ENV`],
    /// [`APPROVAL_POLL_ENV`]); a missing or unusable value (not a positive whole number of
    /// milliseconds) keeps its default, with a warning for the unusable one.
    pub fn from_env(env: &AvailabilityContext) -> Self {
        let defaults = Self::default();
        let read = |name: &str, default: Duration| match env.env(name) {
            None => default,
            Some(text) => match text.parse::<u64>() {
                Ok(ms) if ms > 0 => Duration::from_millis(ms),
                _ => {
                    log::warn(&format!(
                        "{name}={text:?} is not a positive number of milliseconds; using {} ms",
                        default.as_millis()
                    ));
                    default
                }
            },
        };
        Self {
            ttl: read(APPROVAL_TTL_ENV, defaults.ttl),
            timeout: read(APPROVAL_TIMEOUT_ENV, defaults.timeout),
            poll: read(APPROVAL_POLL_ENV, defaults.poll).max(MIN_POLL),
        }
    }
}

/// Who is calling through this broker.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallContext {
    /// The calling agent; `allow_always` grants are remembered for it.
    pub agent_id: Option<String>,
    /// The tenant.
    pub tenant_id: Option<String>,
    /// Tools this caller may not use.
    pub blocklist: Vec<String>,
    /// The name of the HTTP token the session came in with (audit and approval rows record it).
    pub token_name: Option<String>,
}

impl CallContext {
    fn actor(&self) -> Actor<'_> {
        Actor {
            agent_id: self.agent_id.as_deref(),
            tenant_id: self.tenant_id.as_deref(),
            caller: self.token_name.as_deref(),
        }
    }
}

/// What a call came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The text the caller reads (compacted; not scrubbed: it is the caller's own data).
    pub output: String,
    /// Whether the call failed or was refused.
    pub is_error: bool,
    /// The typed reason, when a policy refused the call.
    pub denied: Option<String>,
    /// What compaction did, when it changed the output.
    pub compaction: Option<CompactionStats>,
}

impl Outcome {
    fn refused(output: String, reason: String) -> Self {
        Self {
            output,
            is_error: true,
            denied: Some(reason),
            compaction: None,
        }
    }
}

/// A failure of the broker itself (not of a tool): the database.
/// Wire: ours.
#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    /// A read or write of the broker's tables failed.
    #[error("database error: {0}")]
    Db(#[from] rusqlite::Error),
}

/// The broker over one database.
pub struct Broker {
    db: Db,
    env: AvailabilityContext,
    timings: ApprovalTimings,
    chain: &'static [Inspector],
    closing: AtomicBool,
}

impl Broker {
    /// A broker over `db` with the default inspector chain. Records the builtins in the registry
    /// and expires requests whose waiters are gone; a failure there is logged, not fatal (an
    /// unrecorded tool counts as enabled).
    pub fn start(db: Db, env: AvailabilityContext, timings: ApprovalTimings) -> Self {
        {
            let conn = db.conn();
            if let Err(e) = registry::seed_builtins(&conn) {
                log::warn(&format!("could not record the builtin tools: {e}"));
            }
            if let Err(e) = approvals::expire_stale(&conn) {
                log::warn(&format!("could not expire stale approval requests: {e}"));
            }
        }
        Self {
            db,
            env,
            timings,
            chain: DEFAULT_CHAIN,
            closing: AtomicBool::new(false),
        }
    }

    /// Tells the broker its server is shutting down: calls waiting for a person stop waiting at
    /// their next poll, are refused (`approval:abandoned`) and their requests marked `expired`.
    pub fn close(&self) {
        self.closing.store(true, Ordering::Relaxed);
    }

    /// The same broker with another inspector chain.
    #[cfg(test)]
    pub fn with_chain(mut self, chain: &'static [Inspector]) -> Self {
        self.chain = chain;
        self
    }

    /// The database.
    #[cfg(test)]
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// Whether `tool` may be offered right now, and if not why.
    pub fn availability(&self, tool: &ToolInfo) -> Availability {
        self.env.evaluate(tool.requires.as_ref())
    }

    /// Runs one call to `B` through the pipeline. Its arguments were read and checked once, into
    /// [`Parsed`], by whoever received them (the tools server's `Tool::new`).
    pub fn call<B: Builtin>(
        &self,
        args: Parsed<B>,
        ctx: &CallContext,
    ) -> Result<Outcome, BrokerError> {
        let tool = &B::INFO;
        let name = tool.name;
        let actor = ctx.actor();
        let view = args.to_map();
        if !registry::is_enabled(&self.db.conn(), name)? {
            return self.refuse(name, actor, &view, format!("disabled:{name}"));
        }
        let availability = self.availability(tool);
        if !availability.visible {
            let reason = format!("unavailable:{}", availability.diagnostics.join(","));
            return self.refuse(name, actor, &view, reason);
        }
        let caller = Caller {
            blocklist: &ctx.blocklist,
        };
        match run_chain(self.chain, tool, &view, &caller) {
            Decision::Deny { reason } => self.refuse(name, actor, &view, reason),
            Decision::Allow {
                args: left,
                observations,
            } => {
                let (decision, note) = match would_deny(&observations) {
                    Some(note) => (Logged::Observe, Some(note)),
                    None => (Logged::Allow, None),
                };
                self.log_before(name, actor, decision, &left, note.as_deref())?;
                self.execute(args.rewritten_to(&view, &left), actor)
            }
            Decision::RequireApproval {
                message,
                args: left,
                observations,
            } => match self.approval(name, actor, &message, &left, &observations)? {
                Some(refusal) => Ok(refusal),
                None => self.execute(args.rewritten_to(&view, &left), actor),
            },
        }
    }

    /// Asks for approval of a call to `name` with `args`: a standing `allow_always` grant for
    /// this agent, or a person through the database. `None` when the call may run; otherwise the
    /// refusal (its `after` row was written by whoever ended the request, in `approvals`).
    fn approval(
        &self,
        name: &str,
        actor: Actor<'_>,
        message: &str,
        args: &Map<String, Value>,
        observations: &[String],
    ) -> Result<Option<Outcome>, BrokerError> {
        let observed = would_deny(observations);
        let grant = approvals::standing_grant(&self.db.conn(), name, actor)?;
        if let Some(grant) = grant {
            let mut note = format!("standing approval: allow_always (approval {})", grant.id);
            if let Some(observed) = observed {
                note = format!("{note}; {observed}");
            }
            self.log_before(name, actor, Logged::Allow, args, Some(&note))?;
            return Ok(None);
        }
        self.log_before(
            name,
            actor,
            Logged::RequireApproval,
            args,
            observed.as_deref(),
        )?;
        let args_value = Value::Object(args.clone());
        let request = approvals::create(
            &self.db.conn(),
            &NewApproval {
                tool_name: name,
                actor,
                args: &args_value,
                reason: message,
                ttl: self.timings.ttl,
                heartbeat: Some(approvals::heartbeat_lease(self.timings.poll)),
            },
        )?;
        let end = approvals::wait(
            &self.db,
            &request.id,
            self.timings.timeout,
            self.timings.poll,
            &self.closing,
        )?;
        Ok((!end.allows()).then(|| {
            Outcome::refused(
                format!("approval {}", end.as_str()),
                format!("approval:{}", end.as_str()),
            )
        }))
    }

    /// Runs `B` on its arguments as the inspectors left them (a rewrite the type no longer reads
    /// is the call's failure), compacts the output and writes the `after` row.
    fn execute<B: Builtin>(
        &self,
        args: Result<Parsed<B>, BuiltinError>,
        actor: Actor<'_>,
    ) -> Result<Outcome, BrokerError> {
        let exec = Execution {
            db: &self.db,
            agent_id: actor.agent_id,
            tenant_id: actor.tenant_id,
            env: &self.env,
        };
        let (raw, is_error) = match args.and_then(|args| B::execute(args.into_inner(), &exec)) {
            Ok(text) => (text, false),
            Err(failure) => (failure.to_string(), true),
        };
        let compacted = compact(&raw);
        audit::write_after(
            &self.db.conn(),
            B::INFO.name,
            actor,
            &compacted.text,
            is_error,
        )?;
        Ok(Outcome {
            output: compacted.text,
            is_error,
            denied: None,
            compaction: compacted.stats.applied.then_some(compacted.stats),
        })
    }

    fn refuse(
        &self,
        name: &str,
        actor: Actor<'_>,
        args: &Map<String, Value>,
        reason: String,
    ) -> Result<Outcome, BrokerError> {
        let output = format!("denied: {reason}");
        let args = Value::Object(args.clone());
        immediate(&self.db.conn(), |tx| {
            audit::write_before(tx, name, actor, Logged::Deny, &args, None)?;
            audit::write_unrun(tx, name, actor, Unrun::Deny, &output)
        })?;
        Ok(Outcome::refused(output, reason))
    }

    fn log_before(
        &self,
        name: &str,
        actor: Actor<'_>,
        decision: Logged,
        args: &Map<String, Value>,
        note: Option<&str>,
    ) -> Result<(), BrokerError> {
        let args = Value::Object(args.clone());
        audit::write_before(&self.db.conn(), name, actor, decision, &args, note)?;
        Ok(())
    }
}

/// The audit note for observations: `would-deny: <obs; obs>`.
fn would_deny(observations: &[String]) -> Option<String> {
    (!observations.is_empty()).then(|| format!("would-deny: {}", observations.join("; ")))
}

#[cfg(test)]
mod tests;
