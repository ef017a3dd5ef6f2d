//! Who is calling: the name an operator action is recorded under.
//!
//! Owns: [`caller_name`], the one place a route learns the caller's name. Today a host has no token
//! (the caller is [`LOCAL_OPERATOR`]) or one token, named [`SINGLE_TOKEN_NAME`]; named tokens plug
//! in here (admission decides which token matched; this names it).
//! Must never: return or log the token itself.

use http::request::Parts;

use super::admission::Admission;

/// The caller of a host without a token.
pub const LOCAL_OPERATOR: &str = "local operator";

/// The name of the one token given by `--token` or `CLAWBOO_HTTP_TOKEN`.
pub const SINGLE_TOKEN_NAME: &str = "default";

/// The name of the admitted caller of `request` (its token's name, or "local operator").
pub fn caller_name(admission: &Admission, _request: &Parts) -> String {
    if admission.requires_token() {
        SINGLE_TOKEN_NAME.to_owned()
    } else {
        LOCAL_OPERATOR.to_owned()
    }
}
