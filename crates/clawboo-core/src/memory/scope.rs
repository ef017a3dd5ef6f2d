//! The scope model of seed 004: where a write lands ([`WriteScope`]) and what a reader may see
//! ([`ReadScope`], [`TeamView`]), with the parameters of the SQL filter that applies it.
//!
//! Owns: the rule that turns the values a reader or writer names into a scope (a blank value is
//! unset on a write and narrows on a read, memory.md §2.1–2.2). Must never: decide whose values
//! they are (the server does, from its binding or the arguments), or run SQL.

use crate::binding::{given, js_trim};

/// Where a write lands. Blank strings are unset ([`WriteScope::new`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteScope {
    /// The team; `None` is global.
    pub team_id: Option<String>,
    /// The agent the entry is private to.
    pub agent_id: Option<String>,
    /// The tenant.
    pub tenant_id: Option<String>,
}

impl WriteScope {
    /// A scope from optional strings, blank meaning unset.
    pub fn new(team_id: Option<&str>, agent_id: Option<&str>, tenant_id: Option<&str>) -> Self {
        Self {
            team_id: given(team_id),
            agent_id: given(agent_id),
            tenant_id: given(tenant_id),
        }
    }
}

/// Which teams' entries a reader sees.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum TeamView {
    /// Every team's and the global ones (a reader that names no team).
    #[default]
    Any,
    /// Only global entries (a reader that names the blank team, or a bound reader without a team:
    /// never another team's).
    GlobalOnly,
    /// That team's and the global ones.
    Team(String),
}

/// What a reader may see: seed 004's inclusive rule (team T + agent A sees T's, A's and global
/// entries, never another team's or another agent's private ones).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadScope {
    /// The team filter.
    pub team: TeamView,
    /// `Some(a)`: entries private to `a` or to no agent (`Some("")`: only entries private to no
    /// agent); `None`: any agent's.
    pub agent: Option<String>,
    /// `Some(t)`: exactly that tenant's entries; `None`: any.
    pub tenant: Option<String>,
}

impl ReadScope {
    /// A reader's scope from the values a reader names, by the reference's documented contract
    /// (memory.md §2.1–2.2): a field is *provided* when it is present, and a provided blank
    /// narrows, it never widens. So a team of `None` sees every team, a blank team (`""`, or only
    /// whitespace) sees global entries only, and a team `T` sees T's and global ones; an agent of
    /// `None` sees every agent's private entries, a blank agent none of them, an agent `A` only
    /// A's. Values are trimmed by the one blank rule ([`crate::binding::js_trim`]). The tenant never comes from a model's arguments: a blank tenant is
    /// unset.
    pub fn new(team_id: Option<&str>, agent_id: Option<&str>, tenant_id: Option<&str>) -> Self {
        let team = match team_id.map(js_trim) {
            None => TeamView::Any,
            Some("") => TeamView::GlobalOnly,
            Some(team) => TeamView::Team(team.to_owned()),
        };
        Self {
            team,
            agent: agent_id.map(|a| js_trim(a).to_owned()),
            tenant: given(tenant_id),
        }
    }

    /// The named parameters of [`scope_filter!`](super::sql).
    pub(super) fn params(&self) -> [(&'static str, rusqlite::types::Value); 4] {
        use rusqlite::types::Value as V;
        let text = |s: &Option<String>| s.clone().map_or(V::Null, V::Text);
        let (mode, team) = match &self.team {
            TeamView::Any => (0, V::Null),
            TeamView::GlobalOnly => (1, V::Null),
            TeamView::Team(t) => (2, V::Text(t.clone())),
        };
        [
            (":team_mode", V::Integer(mode)),
            (":team", team),
            (":agent", text(&self.agent)),
            (":tenant", text(&self.tenant)),
        ]
    }
}
