//! Reading a session's binding from its initialize URL, and checking its signature.
//!
//! Owns: the URL parameter names of seed 003 (`scopeTeamId`, `scopeAgentId`, `scopeTenantId` for
//! memory; `scopeTeamId` for tasks; `roomTeamId` + `postAuthorAgentId` for teamchat, both or
//! neither), the "blank means unset" rule for them, and the signing policy.
//!
//! Decision: signatures are **required** by default. The reference served a bad signature
//! unbound; here a URL that names a binding must carry `sig=` signed with the install's key (what
//! `attach --transport http` prints), else the initialize is refused with 403 — an edited query
//! string never silently becomes some other binding. `--unsigned-bindings` accepts the
//! reference's unsigned URLs (a wrong `sig` is still refused). A URL without binding parameters
//! opens an unbound session, as over stdio; the token is what keeps strangers out.
//!
//! Must never: bind from anything but the URL of the initialize request.

use crate::mcp::http::Refusal;
use crate::servers::memory::BoundScope;
use crate::servers::teamchat::BoundIdentity;
use crate::signature::{BindingKey, SIG_PARAM, Signed};

use super::rest::query_value;

/// Whether bindings must be signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SigningMode {
    /// A binding without a valid signature is refused (the default).
    Required,
    /// An unsigned binding is accepted; a wrong signature is still refused.
    Optional,
}

impl SigningMode {
    /// How `--help` and the start-up line name it.
    pub fn as_str(self) -> &'static str {
        match self {
            SigningMode::Required => "signed",
            SigningMode::Optional => "unsigned allowed",
        }
    }
}

/// Checks the bindings of initialize URLs.
#[derive(Debug)]
pub struct Verifier {
    key: BindingKey,
    mode: SigningMode,
}

fn value(query: Option<&str>, name: &str) -> Option<String> {
    query_value(query, name)
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

impl Verifier {
    /// A verifier with the install's key.
    pub fn new(key: BindingKey, mode: SigningMode) -> Self {
        Self { key, mode }
    }

    fn check(&self, query: Option<&str>, binding: Signed<'_>, params: &str) -> Result<(), Refusal> {
        match value(query, SIG_PARAM) {
            Some(sig) if self.key.verify(binding, &sig) => Ok(()),
            Some(_) => Err(Refusal::forbidden(format!(
                "binding refused: the signature (sig) does not match {params}; print a fresh URL with `attach --transport http`"
            ))),
            None if self.mode == SigningMode::Optional => Ok(()),
            None => Err(Refusal::forbidden(format!(
                "binding refused: {params} carry no signature (sig) and this host requires signed bindings; print the URL with `attach --transport http`"
            ))),
        }
    }

    /// The tasks binding: the team (`scopeTeamId`), signed with the agent (`scopeAgentId`).
    pub fn tasks(&self, query: Option<&str>) -> Result<Option<String>, Refusal> {
        let (team, agent) = (value(query, "scopeTeamId"), value(query, "scopeAgentId"));
        if team.is_none() && agent.is_none() {
            return Ok(None);
        }
        let binding = Signed {
            team: team.as_deref().unwrap_or_default(),
            agent: agent.as_deref().unwrap_or_default(),
            tenant: "",
        };
        self.check(query, binding, "scopeTeamId/scopeAgentId")?;
        Ok(team)
    }

    /// The memory binding: `scopeTeamId`, `scopeAgentId`, `scopeTenantId`.
    pub fn memory(&self, query: Option<&str>) -> Result<Option<BoundScope>, Refusal> {
        let team = value(query, "scopeTeamId");
        let agent = value(query, "scopeAgentId");
        let tenant = value(query, "scopeTenantId");
        let Some(bound) =
            BoundScope::from_values(team.as_deref(), agent.as_deref(), tenant.as_deref())
        else {
            return Ok(None);
        };
        let binding = Signed {
            team: team.as_deref().unwrap_or_default(),
            agent: agent.as_deref().unwrap_or_default(),
            tenant: tenant.as_deref().unwrap_or_default(),
        };
        self.check(query, binding, "scopeTeamId/scopeAgentId/scopeTenantId")?;
        Ok(Some(bound))
    }

    /// The teamchat binding: `roomTeamId` and `postAuthorAgentId`, both or the session is unbound.
    pub fn teamchat(&self, query: Option<&str>) -> Result<Option<BoundIdentity>, Refusal> {
        let (Some(team), Some(agent)) = (
            value(query, "roomTeamId"),
            value(query, "postAuthorAgentId"),
        ) else {
            return Ok(None);
        };
        let binding = Signed {
            team: &team,
            agent: &agent,
            tenant: "",
        };
        self.check(query, binding, "roomTeamId/postAuthorAgentId")?;
        Ok(Some(BoundIdentity::for_team(agent, team)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verifier(mode: SigningMode) -> Verifier {
        Verifier::new(BindingKey::from_secret(&"a".repeat(64)), mode)
    }

    const SIG: &str = "a7908c8c40e1b1bce12318b725317c57d4d86404e0ff7c724abd09c3f1f2dff8";

    #[test]
    fn signed_bindings_bind_and_edited_ones_are_refused() {
        let v = verifier(SigningMode::Required);
        let q = format!("roomTeamId=tm1&postAuthorAgentId=boo-1&sig={SIG}");
        let bound = v.teamchat(Some(&q)).unwrap().unwrap();
        assert_eq!(bound, BoundIdentity::for_team("boo-1", "tm1"));
        let edited = format!("roomTeamId=tm2&postAuthorAgentId=boo-1&sig={SIG}");
        let refusal = v.teamchat(Some(&edited)).unwrap_err();
        assert_eq!(refusal.status, http::StatusCode::FORBIDDEN);
        assert!(
            refusal.message.contains("does not match"),
            "{}",
            refusal.message
        );
        let q = format!("scopeTeamId=tm1&scopeAgentId=boo-1&sig={SIG}");
        assert_eq!(v.tasks(Some(&q)).unwrap().as_deref(), Some("tm1"));
        assert!(v.memory(Some(&q)).unwrap().is_some());
    }

    #[test]
    fn unsigned_bindings_need_the_optional_mode_and_unbound_urls_pass() {
        let q = "scopeTeamId=tm1&scopeAgentId=boo-1";
        let refusal = verifier(SigningMode::Required).memory(Some(q)).unwrap_err();
        assert!(
            refusal.message.contains("no signature"),
            "{}",
            refusal.message
        );
        let bound = verifier(SigningMode::Optional)
            .memory(Some(q))
            .unwrap()
            .unwrap();
        assert_eq!(bound.team_id.as_deref(), Some("tm1"));
        let wrong = format!("{q}&sig=00");
        assert!(
            verifier(SigningMode::Optional)
                .memory(Some(&wrong))
                .is_err()
        );
        for v in [
            verifier(SigningMode::Required),
            verifier(SigningMode::Optional),
        ] {
            assert_eq!(v.memory(None).unwrap(), None);
            assert_eq!(v.tasks(Some("scopeTeamId=++")).unwrap(), None);
            assert_eq!(v.teamchat(Some("roomTeamId=tm1")).unwrap(), None);
        }
    }
}
