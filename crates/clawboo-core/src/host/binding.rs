//! Reading a session's binding from its initialize URL, and checking its signature.
//!
//! Owns: the signing policy. The parameter names, the blank rule and which server reads which
//! parameter are [`crate::binding`]'s; the signature covers exactly the parameters the server reads.
//!
//! Decision: signatures are **required** by default. The reference served a bad signature
//! unbound; here a URL that names a binding must carry `sig=` signed with the install's key (what
//! `attach --transport http` prints), else the initialize is refused with 403 — an edited query
//! string never silently becomes some other binding. `--unsigned-bindings` accepts the
//! reference's unsigned URLs (a wrong `sig` is still refused). A URL without binding parameters
//! opens an unbound session, as over stdio; the token is what keeps strangers out.
//!
//! Must never: bind from anything but the URL of the initialize request.

use crate::binding::{Binding, ServerKind};
use crate::mcp::http::SessionRefusal as Refusal;
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
    /// How the start-up line names it.
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

impl Verifier {
    /// A verifier with the install's key.
    pub fn new(key: BindingKey, mode: SigningMode) -> Self {
        Self { key, mode }
    }

    /// The binding of a `server` session opened at a URL with `query`: unbound when the URL names
    /// none of the server's parameters, else the named binding if its signature holds.
    pub fn binding(&self, server: ServerKind, query: Option<&str>) -> Result<Binding, Refusal> {
        let binding = Binding::from_query(server, query.unwrap_or_default());
        if binding.is_unbound() {
            return Ok(binding);
        }
        let params: Vec<&str> = binding.query_pairs().iter().map(|(k, _)| *k).collect();
        let params = params.join("/");
        let sig = query_value(query, SIG_PARAM)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty());
        match sig {
            Some(sig) if self.key.verify(Signed::of(&binding), &sig) => Ok(binding),
            Some(_) => Err(Refusal::forbidden(format!(
                "binding refused: the signature (sig) does not match {params}; print a fresh URL with `attach --transport http`"
            ))),
            None if self.mode == SigningMode::Optional => Ok(binding),
            None => Err(Refusal::forbidden(format!(
                "binding refused: {params} carry no signature (sig) and this host requires signed bindings; print the URL with `attach --transport http`"
            ))),
        }
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
        let bound = v.binding(ServerKind::Teamchat, Some(&q)).unwrap();
        assert_eq!(bound.teamchat().unwrap().agent_id, "boo-1");
        let edited = format!("roomTeamId=tm2&postAuthorAgentId=boo-1&sig={SIG}");
        let refusal = v.binding(ServerKind::Teamchat, Some(&edited)).unwrap_err();
        assert_eq!(refusal.status, http::StatusCode::FORBIDDEN);
        assert!(
            refusal
                .message
                .contains("does not match roomTeamId/postAuthorAgentId"),
            "{}",
            refusal.message
        );
        let q = format!("scopeTeamId=tm1&scopeAgentId=boo-1&sig={SIG}");
        assert_eq!(
            v.binding(ServerKind::Memory, Some(&q))
                .unwrap()
                .memory()
                .unwrap()
                .team_id
                .as_deref(),
            Some("tm1")
        );
    }

    #[test]
    fn unsigned_bindings_need_the_optional_mode_and_unbound_urls_pass() {
        let q = "scopeTeamId=tm1&scopeAgentId=boo-1";
        let refusal = verifier(SigningMode::Required)
            .binding(ServerKind::Memory, Some(q))
            .unwrap_err();
        assert!(
            refusal.message.contains("no signature"),
            "{}",
            refusal.message
        );
        let bound = verifier(SigningMode::Optional)
            .binding(ServerKind::Memory, Some(q))
            .unwrap();
        assert_eq!(bound.memory().unwrap().agent_id.as_deref(), Some("boo-1"));
        let wrong = format!("{q}&sig=00");
        assert!(
            verifier(SigningMode::Optional)
                .binding(ServerKind::Memory, Some(&wrong))
                .is_err()
        );
        for v in [
            verifier(SigningMode::Required),
            verifier(SigningMode::Optional),
        ] {
            assert!(v.binding(ServerKind::Memory, None).unwrap().is_unbound());
            assert!(
                v.binding(ServerKind::Tasks, Some("scopeTeamId=++"))
                    .unwrap()
                    .is_unbound()
            );
            assert!(
                v.binding(ServerKind::Teamchat, Some("roomTeamId=tm1"))
                    .unwrap()
                    .is_unbound()
            );
        }
    }
}
