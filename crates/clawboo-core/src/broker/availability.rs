//! Availability: whether a tool may be offered at all, given what is configured (a provider key in
//! the environment, an authenticated provider).
//!
//! Owns: the requirement language (`env`, `auth`, `allOf`, `anyOf`), its evaluation with
//! diagnostics in the reference's wording (`env-missing:<name>`, `auth-missing:<provider>`), and
//! the environment a broker reads (the live process environment, or a fixed map in tests).
//!
//! Guarantees: a visible verdict carries no diagnostics; `allOf` reports every unmet child, `anyOf`
//! reports all of them only when none is met. Must never: log or return an environment value (they
//! are keys); only whether one is set.

use std::collections::HashMap;

use serde::Serialize;

/// What a tool needs before it may be offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Requirement {
    /// A non-empty environment variable.
    Env(&'static str),
    /// An authenticated provider: its `<PROVIDER>_API_KEY` variable is set.
    Auth(&'static str),
    /// Every child.
    AllOf(&'static [Requirement]),
    /// At least one child.
    AnyOf(&'static [Requirement]),
}

/// The verdict on one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Availability {
    /// Whether the tool is offered.
    pub visible: bool,
    /// Why not, one entry per unmet requirement; empty when visible.
    pub diagnostics: Vec<String>,
}

/// Where the environment comes from.
#[derive(Debug, Clone, Default)]
enum EnvSource {
    /// The process environment, read at each lookup.
    #[default]
    Process,
    /// A fixed set of variables (tests, embedders).
    Fixed(HashMap<String, String>),
}

/// What availability (and the executors that need a provider key) read.
#[derive(Debug, Clone, Default)]
pub struct AvailabilityContext {
    env: EnvSource,
}

impl AvailabilityContext {
    /// The live process environment, read at each lookup.
    pub fn process() -> Self {
        Self::default()
    }

    /// A fixed environment of `pairs`.
    pub fn with_env<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        Self {
            env: EnvSource::Fixed(
                pairs
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v.to_owned()))
                    .collect(),
            ),
        }
    }

    /// The variable's value under the one blank rule ([`crate::binding::given`]).
    pub fn env(&self, name: &str) -> Option<String> {
        let raw = match &self.env {
            EnvSource::Process => std::env::var(name).ok(),
            EnvSource::Fixed(map) => map.get(name).cloned(),
        };
        crate::binding::given(raw.as_deref())
    }

    /// Whether `provider` is authenticated: `<PROVIDER>_API_KEY` (upper-cased, every character
    /// outside `A-Z0-9` replaced by `_`) is set.
    pub fn has_auth(&self, provider: &str) -> bool {
        let var: String = provider
            .to_ascii_uppercase()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        self.env(&format!("{var}_API_KEY")).is_some()
    }

    /// Evaluates `requirement` (`None`: always visible).
    pub fn evaluate(&self, requirement: Option<&Requirement>) -> Availability {
        let mut diagnostics = Vec::new();
        let visible = requirement.is_none_or(|r| self.check(r, &mut diagnostics));
        if visible {
            diagnostics.clear();
        }
        Availability {
            visible,
            diagnostics,
        }
    }

    fn check(&self, requirement: &Requirement, diagnostics: &mut Vec<String>) -> bool {
        match requirement {
            Requirement::Env(name) => {
                let met = self.env(name).is_some();
                if !met {
                    diagnostics.push(format!("env-missing:{name}"));
                }
                met
            }
            Requirement::Auth(provider) => {
                let met = self.has_auth(provider);
                if !met {
                    diagnostics.push(format!("auth-missing:{provider}"));
                }
                met
            }
            Requirement::AllOf(children) => {
                // Every child is checked (no short circuit), so each unmet one is reported.
                let met: Vec<bool> = children
                    .iter()
                    .map(|c| self.check(c, diagnostics))
                    .collect();
                met.into_iter().all(|m| m)
            }
            Requirement::AnyOf(children) => {
                let mut scratch = Vec::new();
                let met: Vec<bool> = children
                    .iter()
                    .map(|c| self.check(c, &mut scratch))
                    .collect();
                let met = met.into_iter().any(|m| m);
                if !met {
                    diagnostics.extend(scratch);
                }
                met
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search_requirement() -> Requirement {
        Requirement::AnyOf(&[
            Requirement::Env("TAVILY_API_KEY"),
            Requirement::Auth("tavily"),
        ])
    }

    #[test]
    fn any_of_reports_every_unmet_child_in_order_when_none_is_met() {
        let verdict = AvailabilityContext::with_env([]).evaluate(Some(&search_requirement()));
        assert!(!verdict.visible);
        assert_eq!(
            verdict.diagnostics,
            ["env-missing:TAVILY_API_KEY", "auth-missing:tavily"]
        );
    }

    #[test]
    fn one_met_child_makes_any_of_visible_without_diagnostics() {
        let ctx = AvailabilityContext::with_env([("TAVILY_API_KEY", "tvly-fake")]);
        let verdict = ctx.evaluate(Some(&search_requirement()));
        assert_eq!(
            verdict,
            Availability {
                visible: true,
                diagnostics: vec![]
            }
        );
    }

    #[test]
    fn blank_values_count_as_unset() {
        let ctx = AvailabilityContext::with_env([("TAVILY_API_KEY", "  ")]);
        assert!(!ctx.evaluate(Some(&search_requirement())).visible);
    }

    #[test]
    fn all_of_evaluates_every_child_and_empty_groups_follow_the_reference() {
        let ctx = AvailabilityContext::with_env([("A", "1")]);
        let all = Requirement::AllOf(&[
            Requirement::Env("B"),
            Requirement::Env("A"),
            Requirement::Auth("open-router"),
        ]);
        assert_eq!(
            ctx.evaluate(Some(&all)).diagnostics,
            ["env-missing:B", "auth-missing:open-router"]
        );
        assert!(ctx.evaluate(Some(&Requirement::AllOf(&[]))).visible);
        let empty_any = ctx.evaluate(Some(&Requirement::AnyOf(&[])));
        assert!(!empty_any.visible);
        assert!(empty_any.diagnostics.is_empty());
        assert!(ctx.evaluate(None).visible);
    }

    #[test]
    fn auth_reads_the_normalised_api_key_variable() {
        let ctx = AvailabilityContext::with_env([("OPEN_ROUTER_API_KEY", "x")]);
        assert!(ctx.has_auth("open-router"));
        assert!(!ctx.has_auth("tavily"));
    }

    #[test]
    fn requirement_serialises_as_the_reference_json() {
        assert_eq!(
            serde_json::to_string(&search_requirement()).unwrap(),
            r#"{"anyOf":[{"env":"TAVILY_API_KEY"},{"auth":"tavily"}]}"#
        );
    }
}
