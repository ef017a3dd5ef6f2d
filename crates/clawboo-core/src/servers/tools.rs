//! The tools server (`clawboo-tools`): the broker's builtin tools as MCP tools. Unlike the other
//! servers its list depends on what is configured: only tools whose availability is met when the
//! server is built are listed (`web_search` needs `TAVILY_API_KEY`), so a model cannot call what
//! it was never shown; a hidden tool called anyway is an unknown tool.
//!
//! Owns: the mapping of broker outcomes onto results (a policy refusal is `isError: true` with the
//! typed reason in `_meta.denied`; a compacted output says so in a second text block) and the
//! environment the bin reads ([`ToolsConfig::from_env`]). Guarantees: every listed call goes
//! through [`Broker::call`]; a call waiting for a person blocks only itself (handlers run on the
//! blocking pool), and stops waiting when the session ends (its request is marked `expired`).
//!
//! Must never: run a tool other than through the broker, or touch SQL.

use crate::binding::{Binding, ServerKind, ToolsBinding};
use crate::broker::availability::AvailabilityContext;
use crate::broker::builtins::{Builtin, DeletePath, Echo, Note, Parsed, WebSearch};
use crate::broker::compact::CompactionStats;
use crate::broker::{ApprovalTimings, Broker, BrokerError, CallContext, Outcome};
use crate::db::Db;
use crate::mcp::{DomainError, Reply, Server, Tool, ToolError, ToolResult};

/// The server's `serverInfo.name`.
pub const SERVER_NAME: &str = "clawboo-tools";

/// The variable listing tools this caller may not use (comma-separated).
pub const BLOCKLIST_ENV: &str = "CLAWBOO_TOOL_BLOCKLIST";

impl DomainError for BrokerError {}

/// How the server is set up.
#[derive(Debug, Clone, Default)]
pub struct ToolsConfig {
    /// The environment availability and the executors read.
    pub env: AvailabilityContext,
    /// Approval timing.
    pub timings: ApprovalTimings,
    /// Who is calling.
    pub caller: CallContext,
}

impl ToolsConfig {
    /// The configuration in this process's environment.
    pub fn from_env() -> Self {
        Self::from(AvailabilityContext::process())
    }
}

impl From<AvailabilityContext> for ToolsConfig {
    /// The configuration `env` describes: timings, the binding (agent, tenant) and blocklist.
    fn from(env: AvailabilityContext) -> Self {
        let bound = Binding::read(ServerKind::Tools, |field| env.env(field.env)).tools();
        let blocklist = env
            .env(BLOCKLIST_ENV)
            .map(|list| {
                list.split(',')
                    .map(str::trim)
                    .filter(|name| !name.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        Self {
            timings: ApprovalTimings::from_env(&env),
            caller: CallContext {
                agent_id: bound.agent_id,
                tenant_id: bound.tenant_id,
                blocklist,
                token_name: None,
            },
            env,
        }
    }
}

/// How a tools server is set up ([`crate::tools_server`]).
///
/// The default: tools are available as the process environment says (`web_search` is listed only
/// when `TAVILY_API_KEY` is set), calls are anonymous (no agent or tenant on audit rows), nothing is
/// blocked, and a call that needs a person waits up to 2 minutes.
#[derive(Debug, Clone, Default)]
pub struct ToolsOptions {
    config: ToolsConfig,
}

impl ToolsOptions {
    /// What the `clawboo-mcp-tools` bin reads from this process's environment: the binding
    /// (`CLAWBOO_SCOPE_AGENT_ID`, `CLAWBOO_SCOPE_TENANT_ID`), the blocklist
    /// (`CLAWBOO_TOOL_BLOCKLIST`) and the approval timings (`CLAWBOO_TOOL_APPROVAL_*`).
    pub fn from_env() -> Self {
        Self {
            config: ToolsConfig::from_env(),
        }
    }

    /// Calls as `binding`'s agent and tenant: audit and approval rows name them, and `allow_always`
    /// grants stick to the agent.
    pub fn bound(mut self, binding: ToolsBinding) -> Self {
        self.config.caller.agent_id = binding.agent_id;
        self.config.caller.tenant_id = binding.tenant_id;
        self
    }

    /// Records `token_name` (the HTTP token the session came in with) on audit and approval rows.
    pub(crate) fn called_with(mut self, token_name: Option<&str>) -> Self {
        self.config.caller.token_name = token_name.map(str::to_owned);
        self
    }

    /// Refuses calls to the tools named in `names` (`_meta.denied` says why).
    pub fn blocked<I, T>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        self.config.caller.blocklist = names.into_iter().map(Into::into).collect();
        self
    }

    /// How long a call that needs a person waits for a decision before it is refused
    /// (`_meta.denied = "approval:timeout"`).
    pub fn approval_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.config.timings.timeout = timeout;
        self
    }

    pub(crate) fn into_config(self) -> ToolsConfig {
        self.config
    }
}

/// The state behind the tools: the broker and who is calling through it.
pub struct ToolsState {
    broker: Broker,
    caller: CallContext,
}

impl ToolsState {
    /// The broker.
    #[cfg(test)]
    pub fn broker(&self) -> &Broker {
        &self.broker
    }
}

fn compaction_note(stats: &CompactionStats) -> String {
    format!(
        "[output compacted by {}: {} bytes \u{2192} {} bytes; the rest is not available]",
        stats.rule, stats.original_bytes, stats.compacted_bytes
    )
}

/// A broker outcome as an MCP result.
fn to_result(outcome: Outcome) -> ToolResult {
    let note = outcome.compaction.as_ref().map(compaction_note);
    if let Some(reason) = outcome.denied {
        return Err(ToolError::denied(outcome.output, reason));
    }
    if outcome.is_error {
        let message = match note {
            Some(note) => format!("{}\n\n{note}", outcome.output),
            None => outcome.output,
        };
        return Err(ToolError::new(message));
    }
    let reply = Reply::text(outcome.output);
    Ok(match note {
        Some(note) => reply.with_block(note),
        None => reply,
    })
}

/// The MCP tool for the builtin `B`, or `None` when `broker` may not offer it (a hidden tool is
/// unknown to the client). Its annotations follow its broker risk ([`super::risk`]). Its arguments
/// are read and checked once, into [`Parsed`], by
/// [`Tool::new`]; bad arguments are an `invalid args: …` tool-error that never reaches the broker.
fn brokered<B: Builtin>(broker: &Broker) -> Option<Tool<ToolsState>> {
    let info = B::INFO;
    broker.availability(&info).visible.then(|| {
        Tool::new(
            info.name,
            info.description,
            |state: &ToolsState, args: Parsed<B>| {
                to_result(state.broker.call(args, &state.caller)?)
            },
        )
        .annotations(super::risk::annotations(info.name, info.risk))
    })
}

/// Builds the tools server over `db`, listing the builtins available under `config.env`, in
/// registration order (`builtins::ALL`).
pub fn build(db: Db, config: ToolsConfig) -> Server<ToolsState> {
    let broker = Broker::start(db, config.env, config.timings);
    let tools = [
        brokered::<Echo>(&broker),
        brokered::<Note>(&broker),
        brokered::<WebSearch>(&broker),
        brokered::<DeletePath>(&broker),
    ];
    let state = ToolsState {
        broker,
        caller: config.caller,
    };
    let builder = Server::builder(SERVER_NAME, state)
        .on_close(|state: &ToolsState| state.broker.close())
        .instructions(
        "Every call goes through the Clawboo tool broker: inspected, audited, and for destructive or external tools held until a person approves it. A refusal is an error result whose reason is in _meta.denied; do not retry a denied call unchanged.",
    );
    tools
        .into_iter()
        .flatten()
        .fold(builder, |b, tool| b.tool(tool))
        .build()
}

#[cfg(test)]
mod tests;
